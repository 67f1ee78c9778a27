/*
** tinyecs — an archetype-based Entity-Component-System in C11: the core
** (world, components, entities, queries and iteration, deferral, errors).
** The other parts have their own headers in tinyecs/: meta.h (component
** descriptions), change.h (change ticks), handle.h, index.h, observer.h,
** resource.h, system.h, snapshot.h, json.h.
**
** One world owns everything. Components are blocks of bytes registered at
** run time; an entity is a 64-bit id (32-bit slot, 32-bit generation); every
** entity lives in exactly one archetype, stored in chunks laid out column by
** column. Queries hand out whole columns, so a loop over them runs at the
** speed of a loop over plain arrays.
**
** Conventions, once for every header:
**   - Every function that takes a world, entity, component, archetype or
**     query checks it. A failed call changes nothing and says so in its
**     result: a tecs_err_t, or 0 (ids), NULL (pointers), -1 (counts that
**     can fail), false, or an empty iteration.
**   - Every call that can fail sets the world's last error when it runs
**     (TECS_OK on success): tecs_last_error tells "nothing found" from
**     "failed", tecs_last_error_msg names the component and the entity.
**     Calls that cannot fail (tecs_is_alive, tecs_has, tecs_field,
**     tecs_iter_fini, reads of names and counts, the frees that return
**     nothing) leave it alone. A callback's calls set it while the
**     callback runs; when it returns, it is back to what it was.
**   - No global state: two worlds are independent. A world is used from
**     one thread at a time (workers: tinyecs/system.h).
**   - A pointer to component data stays valid until an entity leaves that
**     archetype or the world is freed. While an iteration is open such
**     changes are queued, so the open iteration's pointers stay valid.
**   - Callbacks may call back. Inside every callback the world is
**     deferred (tecs_is_deferred), and a call does what this table says
**     (docs/errors.md has the full table and each term's calls):
**
**       called from                 structural  value    objects  world free,  reads
**                                   changes     writes            progress,
**                                                                 apply
**       ctor, dtor, copy, move;     queued      queued   EBUSY    EBUSY        yes
**       cache order functions
**       on_add / on_set /           queued      at once  yes (1)  EBUSY        yes
**       on_remove, observers,
**       cache on_enter / on_leave,
**       systems, each-functions,
**       initializers, kill callbacks
**       what world free / reset     EBUSY       EBUSY    EBUSY    EBUSY        yes
**       runs
**       the world's allocator       EBUSY       EBUSY    EBUSY    EBUSY        no
**
**     EBUSY: refused with TECS_EBUSY, nothing changed. Queued: the call
**     returns at once (a new entity gets its id, not alive yet) and the
**     change applies, in call order, when the outermost deferral ends.
**     (1) Not freeing the object the running callback belongs to or
**     iterates.
*/
#ifndef TINYECS_H
#define TINYECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ----------------------------------------------------------- */

/* The version of this header (semantic versioning: a release that breaks
** the API or ABI raises MAJOR, which is also the shared library's soname,
** libtinyecs.so.MAJOR). CMakeLists.txt reads its version from these three
** lines. TECS_VERSION is one number to compare, 10000 * MAJOR + 100 *
** MINOR + PATCH (1.0.0 is 10000). */
#define TECS_VERSION_MAJOR 1
#define TECS_VERSION_MINOR 0
#define TECS_VERSION_PATCH 0
#define TECS_VERSION                                                        \
    (TECS_VERSION_MAJOR * 10000 + TECS_VERSION_MINOR * 100 + TECS_VERSION_PATCH)
#define TECS__STR2(x) #x
#define TECS__STR(x) TECS__STR2(x)
/** The version as text, "1.0.0". */
#define TECS_VERSION_STRING                                                 \
    TECS__STR(TECS_VERSION_MAJOR) "." TECS__STR(TECS_VERSION_MINOR) "."     \
    TECS__STR(TECS_VERSION_PATCH)

/** The version of the library linked, as TECS_VERSION counts it: compare
** it with the header's TECS_VERSION to find a program run against another
** library than it was built with (a shared library of another minor
** release, say). Needs no world; may be called from any thread.
** @return 10000 * major + 100 * minor + patch. */
int tecs_version(void);

/* ---- Limits ------------------------------------------------------------ */

#define TECS_MAX_COMPONENTS      4096      /* component ids are 1..4095      */
#define TECS_MAX_ARCH_COMPONENTS 64        /* components in one archetype    */
#define TECS_MAX_ARCHETYPES      (1 << 20) /* archetypes in one world        */
#define TECS_MAX_ENTITIES        0x7fffffff /* live + pending entities       */
#define TECS_MAX_TERMS           32        /* terms in one query             */
#define TECS_MAX_THREADS         64        /* workers of one world           */
#define TECS_MAX_COMPONENT_SIZE  (1 << 20) /* bytes of one component value   */
#define TECS_MAX_ALIGN           64        /* largest component alignment    */
/* Bytes of one chunk (each column 64-byte aligned): an archetype whose rows
** do not fit rows_per_chunk to a chunk is refused (TECS_ELIMIT). */
#define TECS_MAX_CHUNK_BYTES     (1 << 25)

/* ---- Errors ------------------------------------------------------------ */

/* X-macro table: the enum, tecs_strerror and tecs_err_name come from it. */
#define TECS_ERRNO_MAP(X)                                                   \
    X(OK,      "no error")                                                  \
    X(EINVAL,  "invalid argument")                                          \
    X(ENOMEM,  "out of memory")                                             \
    X(EDEAD,   "entity is not alive")                                       \
    X(ENOCOMP, "unknown component")                                         \
    X(EEXIST,  "already exists")                                            \
    X(ENOENT,  "not found")                                                 \
    X(ELIMIT,  "limit reached")                                             \
    X(EWORLD,  "object belongs to another world")                           \
    X(EBUSY,   "busy: not allowed while the world or object is in use")    \
    X(ECORRUPT, "internal structure check failed")                          \
    X(EACCESS, "not in the access the running system declared")             \
    X(ETHREAD, "a thread could not be started")                             \
    X(EFORMAT, "malformed or incompatible input (a snapshot)")              \
    X(ECYCLE,  "would make an entity its own ancestor")

/** An error code. TECS_OK (0) is success, every other value a failure. */
typedef enum tecs_err_t {
#define TECS__ERR_ENUM(name, msg) TECS_##name,
    TECS_ERRNO_MAP(TECS__ERR_ENUM)
#undef TECS__ERR_ENUM
    TECS_ERR_COUNT
} tecs_err_t;

/** A short English sentence for an error code; never NULL. */
const char *tecs_strerror(tecs_err_t err);

/** The name of an error code ("TECS_ENOMEM"); never NULL. */
const char *tecs_err_name(tecs_err_t err);

/* ---- World ------------------------------------------------------------- */

typedef struct tecs_world_t tecs_world_t;

/** An entity id: slot index in the low 32 bits, generation in the high 32.
 *  0 is never a valid id. */
typedef uint64_t tecs_entity_t;

/** The allocator, as Lua's lua_Alloc: nsize 0 frees ptr (of osize bytes)
 *  and returns NULL; else it returns a block of nsize bytes holding the
 *  first min(osize, nsize) of ptr (NULL ptr: osize 0), or NULL leaving ptr
 *  untouched. Blocks need only malloc's alignment. */
typedef void *(*tecs_alloc_fn)(void *ud, void *ptr, size_t osize, size_t nsize);

/** World options; zero means default for every field. */
typedef struct tecs_world_desc_t {
    tecs_alloc_fn alloc;        /* allocator; default: realloc / free         */
    void *alloc_ud;             /* user pointer passed to alloc               */
    int32_t rows_per_chunk;     /* power of two, 16..65536; default 1024      */
    int32_t max_entities;       /* cap on live + pending entities             */
    int32_t max_archetypes;     /* cap on archetypes (incl. the empty one),
                                ** at most TECS_MAX_ARCHETYPES                 */
} tecs_world_desc_t;

/** Create a world with default options; NULL when out of memory. */
tecs_world_t *tecs_world_new(void);

/** Create a world with options (desc NULL: defaults); NULL when out of
 *  memory or for a bad desc (rows_per_chunk, a negative cap, too many
 *  archetypes). */
tecs_world_t *tecs_world_new_ex(const tecs_world_desc_t *desc);

/**
 * Free a world: every live entity is announced as destroyed (REMOVE / LEAVE
 * observers, on_remove hooks) and destructed, queued values too, then every
 * block is freed; queued changes are dropped. The world is closed while it
 * runs: its callbacks may read, other calls are EBUSY.
 * @return TECS_OK (also for NULL); TECS_EBUSY inside a callback of this
 * world or while it is being freed (nothing freed).
 */
tecs_err_t tecs_world_free(tecs_world_t *world);

/**
 * Reset a world: destroy every entity, as tecs_destroy does (its events,
 * hooks, indexes and destructors see it), and drop every queued and
 * delayed change unapplied; keep everything else (components, archetypes,
 * handles, queries, add-on objects, the frame count, resources). Every id
 * handed out before is dead after (its generation moved on); new entities
 * take the freed slots from the lowest. The world is closed while it runs
 * (its callbacks may read; other calls are EBUSY). It allocates nothing;
 * chunks and queues go back, the id slots stay. docs/entities.md.
 * @return TECS_OK; TECS_EINVAL (NULL); TECS_EBUSY (nothing changed) inside
 * an iteration, a callback, a deferred section or a frame, or while closed.
 */
tecs_err_t tecs_world_reset(tecs_world_t *world);

/** The result of the latest call on this world that can fail: TECS_OK if it
 *  succeeded, else its error (TECS_EINVAL for NULL). See the conventions at
 *  the top for which calls set it. */
tecs_err_t tecs_last_error(const tecs_world_t *world);

/** A message for the last error, with detail ("entity 12:3 does not have
 *  component 'Position' (7)"); tecs_strerror(TECS_OK) when it is TECS_OK.
 *  Owned by the world, valid until the next call that can fail; never NULL. */
const char *tecs_last_error_msg(const tecs_world_t *world);

/** Forget the last error (back to TECS_OK). NULL does nothing. */
void tecs_clear_error(tecs_world_t *world);

/** Rows per chunk of this world (0 for NULL). */
int32_t tecs_world_rows_per_chunk(const tecs_world_t *world);

/** Live entities (pending births are not counted; 0 for NULL). */
int32_t tecs_world_entity_count(const tecs_world_t *world);

/** Registered components (0 for NULL). */
int32_t tecs_world_component_count(const tecs_world_t *world);

/** Archetypes, including the empty archetype every new entity starts in. */
int32_t tecs_world_archetype_count(const tecs_world_t *world);

/** Bytes currently held through the world's allocator (0 for NULL). */
size_t tecs_world_memory(const tecs_world_t *world);

/**
 * Walk every record, chunk, edge and query of the world and verify the
 * invariants. For tests and debugging; O(size of the world).
 * @return TECS_OK; TECS_ECORRUPT with the first broken invariant in the
 * last error message; else TECS_EBUSY while iterations are open (the
 * message says how many: a check at a point where none should be finds one
 * left open); else TECS_EINVAL if iterations were ended twice (by copies of
 * one iterator) since the last check, which reports them once.
 */
tecs_err_t tecs_world_check(tecs_world_t *world);

/* ---- Components -------------------------------------------------------- */

/** A component id, 1..TECS_MAX_COMPONENTS-1; 0 is never a component. */
typedef uint32_t tecs_comp_t;

/* Lifecycle hooks. Each handles `count` consecutive values, so a whole chunk
** column is handled in one call. `ctx` is the component's hook_ctx. */
/** Construct count values in raw memory. */
typedef void (*tecs_ctor_fn)(void *dst, int32_t count, void *ctx);
/** Destroy count values. */
typedef void (*tecs_dtor_fn)(void *ptr, int32_t count, void *ctx);
/** Copy-assign count values from src onto constructed values at dst. */
typedef void (*tecs_copy_fn)(void *dst, const void *src, int32_t count, void *ctx);
/** Move count values from src into raw memory at dst; src is left as raw
 *  memory (its destructor is not run afterwards). */
typedef void (*tecs_move_fn)(void *dst, void *src, int32_t count, void *ctx);

/**
 * Where a component's values live (tecs_component_desc_t.storage). TABLE:
 * in the columns of the entity's archetype (iteration reads plain arrays;
 * an add or remove moves the row). SPARSE: in a paged set keyed by the
 * entity's slot, outside every archetype (an add or remove moves nothing;
 * a value's address is fixed from its add to its remove, so no move hook
 * runs). Events, hooks, indexes and deferral are the same for both. A
 * sparse component is in no archetype: tecs_archetype_get with it and a
 * value for it in tecs_new_bulk are TECS_EINVAL. See docs/sparse.md.
 */
typedef enum tecs_storage_t {
    TECS_STORAGE_TABLE = 0,     /* in the archetype's chunks (the default)    */
    TECS_STORAGE_SPARSE         /* in a sparse set by entity slot             */
} tecs_storage_t;

/** One field of a component description (tinyecs/meta.h). */
typedef struct tecs_field_t tecs_field_t;

/** A component description. Without hooks a component is plain data:
 *  zero-filled on creation, memcpy on copy and move. Size 0 makes a tag. */
typedef struct tecs_component_desc_t {
    const char *name;           /* required, unique in the world; copied      */
    size_t size;                /* bytes; 0 for a tag                         */
    size_t align;               /* power of two <= 64; 0 means 1; size must be
                                   a multiple of it (as sizeof is in C)       */
    tecs_comp_t id;             /* wanted id (e.g. network sync); 0 = next    */
    tecs_ctor_fn ctor;          /* optional hooks, see above                  */
    tecs_dtor_fn dtor;
    tecs_copy_fn copy;
    tecs_move_fn move;
    void *hook_ctx;             /* passed to every hook                       */
    tecs_storage_t storage;     /* where its values live; 0: in the table     */
    bool enableable;            /* each entity's value can be disabled and
                                   enabled without a move (tecs_enable)       */
    bool row_ticks;             /* change detection by row, not by chunk:
                                   16 bytes a row, and a write term handed
                                   out stores a tick per row (table store
                                   only; tinyecs/change.h)              */
    const tecs_field_t *fields; /* its description (optional, tinyecs/meta.h);
                                   copied                                     */
    int32_t nfields;            /* 0..TECS_MAX_FIELDS                         */
    bool hidden;                /* a tag (table store, not enableable) whose
                                   entities every query, cache, system and
                                   observer skips unless a term names it
                                   (with, any or optional): tecs_prefab's    */
    bool inherit;               /* an instance of a prefab holding it
                                   (tecs_instantiate, tinyecs/relation.h)
                                   shares the prefab's value instead of a
                                   copy, until it sets its own; table store,
                                   not a tag                                  */
} tecs_component_desc_t;

/**
 * Register a component. The size is a multiple of the alignment (values sit
 * side by side as a C array, as sizeof(T) does); one C type may be
 * registered under several names. A description is checked before anything
 * is registered (fields inside the component, no overlap, unique non-empty
 * names, nested components described, strings only with copy and dtor
 * hooks) and a refusal names the field.
 * @return its id, or 0: TECS_EINVAL (a bad desc or description),
 * TECS_EEXIST (name or id taken), TECS_ELIMIT, TECS_ENOMEM.
 */
tecs_comp_t tecs_component_new(tecs_world_t *world, const tecs_component_desc_t *desc);

/** Find a component by name. @return its id, or 0 (TECS_ENOENT) if unknown. */
tecs_comp_t tecs_component_lookup(tecs_world_t *world, const char *name);

/** The name of a component, owned by the world; NULL if unknown. */
const char *tecs_component_name(const tecs_world_t *world, tecs_comp_t comp);

/** The size of a component (0 for a tag and for an unknown id). */
size_t tecs_component_size(const tecs_world_t *world, tecs_comp_t comp);

/** Where the values of a component live; TECS_STORAGE_TABLE for an unknown
 *  id. Calls nothing, so it may be called from any callback. */
tecs_storage_t tecs_component_storage(const tecs_world_t *world, tecs_comp_t comp);
/** True if the component was registered enableable (false for an unknown
 *  id). */
bool tecs_component_enableable(const tecs_world_t *world, tecs_comp_t comp);
/** True if the component was registered hidden (false for an unknown id). */
bool tecs_component_hidden(const tecs_world_t *world, tecs_comp_t comp);
/** True if the component was registered .inherit (false for an unknown id). */
bool tecs_component_inherit(const tecs_world_t *world, tecs_comp_t comp);

/** Register the C type T under its own name. */
#define TECS_COMPONENT(world, T)                                            \
    tecs_component_new((world), &(tecs_component_desc_t){                       \
        .name = #T, .size = sizeof(T), .align = _Alignof(T) })

/** Register the C type T under another name (several kinds of one type). */
#define TECS_COMPONENT_NAMED(world, name_, T)                               \
    tecs_component_new((world), &(tecs_component_desc_t){                       \
        .name = (name_), .size = sizeof(T), .align = _Alignof(T) })

/** Register a tag (a component of size 0) named after the identifier. */
#define TECS_TAG(world, Name)                                               \
    tecs_component_new((world), &(tecs_component_desc_t){ .name = #Name })


/* ---- Archetypes -------------------------------------------------------- */

typedef struct tecs_archetype_t tecs_archetype_t;

/** The archetype of exactly these components (any order; n 0: the empty
 *  one), made if new; owned by the world and valid until it is freed.
 *  NULL on error: TECS_EINVAL (NULL ids with n > 0, a repeated or sparse
 *  id), TECS_ENOCOMP, TECS_ELIMIT, TECS_ENOMEM. */
tecs_archetype_t *tecs_archetype_get(tecs_world_t *world, int32_t n, const tecs_comp_t *ids);

/** Allocate chunks ahead so that n entities in total fit without allocating
 *  (at most TECS_MAX_CHUNK_BYTES a chunk). @return TECS_OK, TECS_EINVAL
 *  (negative n), TECS_ELIMIT (more than INT32_MAX rows), TECS_ENOMEM; a
 *  failed call allocates nothing and keeps nothing. */
tecs_err_t tecs_archetype_reserve(tecs_world_t *world, tecs_archetype_t *arch, int32_t n);

/** Entities in the archetype (0 for NULL). */
int32_t tecs_archetype_entity_count(const tecs_archetype_t *arch);

/** Chunks allocated by the archetype: its used chunks and the room it grows
 *  into. A growth at least doubles them, so as entities arrive there are at
 *  most twice the used chunks (or what tecs_archetype_reserve asked for); as
 *  they leave, chunks are given back once the used ones and one spare are at
 *  most a quarter of them, and all but one once the archetype is empty. */
int32_t tecs_archetype_chunk_count(const tecs_archetype_t *arch);

/** The archetype's components, sorted by id; *out is owned by the world.
 *  @return their number. */
int32_t tecs_archetype_components(const tecs_archetype_t *arch, const tecs_comp_t **out);

/** The i-th archetype in creation order (0 is the empty archetype), for
 *  0 <= i < tecs_world_archetype_count; NULL otherwise and for NULL. Owned
 *  by the world, valid until it is freed. Records no error, calls nothing:
 *  allowed in every callback. */
tecs_archetype_t *tecs_world_archetype(const tecs_world_t *world, int32_t i);

/** The archetype of a live entity, or NULL (TECS_EDEAD). */
tecs_archetype_t *tecs_entity_archetype(tecs_world_t *world, tecs_entity_t entity);

/* ---- Entities ---------------------------------------------------------- */

#define TECS_ENTITY_INDEX(e)      ((uint32_t)((e) & 0xffffffffu))
#define TECS_ENTITY_GENERATION(e) ((uint32_t)((e) >> 32))

/** A component and a pointer to its value (or to an array of values). */
typedef struct tecs_value_t {
    tecs_comp_t comp;
    const void *ptr;
} tecs_value_t;

/**
 * True if the id names a live entity. O(1); false for 0, stale ids, pending
 * births and ids never handed out.
 */
bool tecs_is_alive(const tecs_world_t *world, tecs_entity_t entity);

/** Where an entity is in its life (tecs_entity_state). */
typedef enum tecs_entity_state_t {
    TECS_ENTITY_DEAD = 0,       /* 0, never handed out, destroyed, stale, or
                                   a cancelled or dropped birth             */
    TECS_ENTITY_ALIVE,          /* alive, no destroy queued                 */
    TECS_ENTITY_PENDING,        /* its birth is queued: not alive yet       */
    TECS_ENTITY_DOOMED          /* alive, its destroy queued (still iterated) */
} tecs_entity_state_t;

/**
 * The state of an entity, in O(1) (read from its id slot, no queue is
 * scanned). ALIVE and DOOMED are exactly the ids tecs_is_alive accepts.
 * Never fails and leaves the last error alone; NULL world: DEAD. A read:
 * allowed in every callback (the table at the top).
 */
tecs_entity_state_t tecs_entity_state(const tecs_world_t *world, tecs_entity_t entity);

/**
 * Create an entity with no components.
 * @return its id, or 0 on error (TECS_ENOMEM, TECS_ELIMIT). Inside an
 * iteration the id is handed out at once and the entity is born at the flush.
 */
tecs_entity_t tecs_new(tecs_world_t *world);

/**
 * Create an entity in an archetype, every component default-constructed.
 * @return its id, or 0 on error (TECS_EINVAL, TECS_EWORLD, TECS_ENOMEM,
 * TECS_ELIMIT).
 */
tecs_entity_t tecs_new_in(tecs_world_t *world, tecs_archetype_t *arch);

/** Handed to an initializer: the entity being built. */
typedef struct tecs_init_t tecs_init_t;

/** Gives components their first values through tecs_init_construct. */
typedef void (*tecs_init_fn)(tecs_init_t *init, void *ctx);

/** Create an entity in an archetype and run fn on it before anything else
 *  sees it: the components fn constructs (tecs_init_construct) get its
 *  values, the rest are default-constructed after; fn runs once, its
 *  structural changes queued. @return the id, or 0 (as tecs_new_in;
 *  TECS_EINVAL for NULL fn). */
tecs_entity_t tecs_new_with(tecs_world_t *world, tecs_archetype_t *arch,
                            tecs_init_fn fn, void *ctx);

/**
 * Inside an initializer: storage for component comp of the entity being
 * built. The caller must construct the value there (for plain data it is
 * zero-filled already); it will not be default-constructed.
 * @return the storage, or NULL if comp is a tag or not in the archetype.
 */
void *tecs_init_construct(tecs_init_t *init, tecs_comp_t comp);

/** Inside an initializer: the id of the entity being built. */
tecs_entity_t tecs_init_entity(const tecs_init_t *init);

/** Create n entities in an archetype in one call; out (may be NULL) gets
 *  the ids; vals[i].ptr (nvals may be 0) is an array of n values of
 *  vals[i].comp, the rest default-constructed. On error none is made:
 *  TECS_EINVAL (a sparse component's value too), TECS_EWORLD, TECS_ENOCOMP
 *  (not in the archetype), TECS_ENOMEM, TECS_ELIMIT. */
tecs_err_t tecs_new_bulk(tecs_world_t *world, tecs_archetype_t *arch, int32_t n,
                         tecs_entity_t *out, int32_t nvals, const tecs_value_t *vals);

/**
 * Create a copy of the live entity src, born in one step into src's
 * archetype: every component (table, sparse, tags), each value copied
 * with the component's copy hook (memcpy for plain data), the enableable
 * components enabled or disabled as src's; with the relation add-on, src's
 * pairs (ChildOf too: the clone is src's sibling), but not the pairs that
 * target src nor those of relations registered with .no_clone. Events as
 * a birth's (ADD of each component, SET of each valued one). While the
 * world is deferred the id is handed out now and the clone is made when
 * the queue applies, from src as it is then (src dead by then: the birth
 * is cancelled). See docs/prefabs.md.
 * @return the id, or 0: TECS_EDEAD (src not alive), TECS_EWORLD,
 * TECS_ENOMEM, TECS_ELIMIT, TECS_EEXIST (a unique index refuses the
 * copied key); a failure changes nothing.
 */
tecs_entity_t tecs_clone(tecs_world_t *world, tecs_entity_t src);

/** tecs_clone n times in one call: n rows reserved and filled at once; out
 *  (may be NULL) gets the ids. n 0: nothing, TECS_OK. @return TECS_OK, or
 *  as tecs_clone and TECS_EINVAL (n < 0); on error none is made. */
tecs_err_t tecs_clone_bulk(tecs_world_t *world, tecs_entity_t src, int32_t n,
                           tecs_entity_t *out);

/**
 * Destroy an entity: its component destructors run, its id goes stale.
 * Destroying a pending birth cancels it.
 * @return TECS_OK or TECS_EDEAD.
 */
tecs_err_t tecs_destroy(tecs_world_t *world, tecs_entity_t entity);

/**
 * Add a component (default-constructed); the entity moves to the archetype
 * with it (a sparse component: it stays where it is). @return TECS_OK, TECS_EDEAD, TECS_ENOCOMP, TECS_EEXIST (already
 * has it), TECS_ELIMIT, TECS_ENOMEM.
 */
tecs_err_t tecs_add(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/**
 * Remove a component (its destructor runs). @return TECS_OK, TECS_EDEAD,
 * TECS_ENOCOMP, TECS_ENOENT (does not have it), TECS_ENOMEM.
 */
tecs_err_t tecs_remove(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/**
 * Write a component's value with its copy hook (memcpy for plain data),
 * adding the component first if the entity lacks it. value may be NULL only
 * for a tag. Inside a lifecycle hook or an order function the write is
 * queued (see the table at the top). @return as tecs_add, and TECS_EINVAL
 * for a NULL value.
 */
tecs_err_t tecs_set(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp,
                    const void *value);

/**
 * Read a component. @return a pointer to the value, valid until an entity
 * leaves the archetype (see the conventions at the top; a sparse
 * component's value stays put until the entity loses it); NULL if the
 * entity is dead (TECS_EDEAD), the component unknown (TECS_ENOCOMP),
 * absent (TECS_ENOENT) or a tag (TECS_EINVAL).
 */
const void *tecs_get(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/**
 * Like tecs_get, for writing. A write through this pointer to a field that a
 * field index watches must be followed by tecs_modified.
 */
void *tecs_get_mut(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/** True if the entity is alive and has the component (tags included). */
bool tecs_has(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/**
 * Report that a component's value was written through a raw pointer, so that
 * indexes and observers see the change. Inside a lifecycle hook or an order
 * function the report is queued (see the table at the top). @return as
 * tecs_get.
 */
tecs_err_t tecs_modified(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/*
** Enableable components. A component registered with .enableable = true
** can be disabled and enabled again on one entity without any move: a bit
** per row beside the entity's archetype row, so the value, the row and the
** entity's archetype stay as they are. A disabled component is still the
** entity's (tecs_has, tecs_get, tecs_set, indexes and tecs_remove see it)
** but queries skip it: a term of it matches only the rows where it is
** enabled (tecs_term_t.toggle says otherwise). A component is enabled when
** it is added; removing it forgets the bit.
*/

/**
 * Enable or disable comp on entity. No row moves, so it applies at once,
 * also in an iteration (which sees the new state in the rows still to come)
 * or a callback; it queues where a value write queues (lifecycle hooks,
 * order functions, workers) and while deferred when the entity has a
 * queued add or remove of comp. A change of state fires ON_ENABLE /
 * ON_DISABLE and the queries' membership events inside the call.
 * @return TECS_OK; TECS_EINVAL (NULL world, comp not enableable),
 * TECS_EDEAD, TECS_ENOCOMP, TECS_ENOENT, TECS_EBUSY, TECS_ENOMEM (queued).
 */
tecs_err_t tecs_enable(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp,
                       bool enable);

/** True if entity has comp and comp is enabled on it: false for a disabled,
 *  a missing or an unknown component and for a dead entity. A component
 *  that is not enableable is always enabled. */
bool tecs_is_enabled(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/*
** The typed macros (TECS_SET, TECS_GET, TECS_GET_MUT, TECS_HANDLE_GET,
** TECS_FIELD, TECS_ROW and the TECS_RESOURCE_ ones) pass sizeof(T) on: a
** type whose size is not the component's is refused before anything is
** read or written, with TECS_EINVAL (or NULL) and a message naming both
** sizes. The tecs__ functions they call are theirs: for untyped access,
** call the untyped functions.
*/

/** Private: TECS_SET's call, tecs_set once size is comp's. */
tecs_err_t tecs__set_sized(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp,
                           const void *value, size_t size);

/** Private: TECS_GET's call. */
const void *tecs__get_sized(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp,
                            size_t size);

/** Private: TECS_GET_MUT's call. */
void *tecs__get_mut_sized(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp,
                          size_t size);

/** tecs_set of a value of type T: a brace list or an expression of type T,
 *  TECS_SET(w, e, pos, Position, {1, 2}) or TECS_SET(w, e, pos, Position, p)
 *  (a scalar T takes its value without braces: TECS_SET(w, e, hp, int, 5)).
 *  @return as tecs_set; TECS_EINVAL when sizeof(T) is not comp's size. */
#define TECS_SET(world, entity, comp, T, ...)                               \
    tecs__set_sized((world), (entity), (comp), (T[1]){ __VA_ARGS__ }, sizeof(T))

/** Typed tecs_get / tecs_get_mut: NULL with TECS_EINVAL when sizeof(T) is
 *  not comp's size, else as tecs_get / tecs_get_mut. */
#define TECS_GET(world, entity, comp, T)                                    \
    ((const T *)tecs__get_sized((world), (entity), (comp), sizeof(T)))
#define TECS_GET_MUT(world, entity, comp, T)                                \
    ((T *)tecs__get_mut_sized((world), (entity), (comp), sizeof(T)))

/* ---- Delayed changes --------------------------------------------------- */

/**
 * Delayed new: the id is handed out now; the entity is born (alive, seen by
 * queries) when delayed births are applied. vals (may be NULL) are copied
 * now; the other components are default-constructed. Unique keys are
 * checked when the birth applies: a birth whose key is taken by then is
 * dropped and reported (tecs_dropped_changes). Memory: docs/delayed.md.
 * @return the id, or 0 on error (as tecs_new_bulk).
 */
tecs_entity_t tecs_delayed_new(tecs_world_t *world, tecs_archetype_t *arch,
                               int32_t nvals, const tecs_value_t *vals);

/**
 * Delayed new with an initializer: as tecs_delayed_new, the values made by
 * fn when the birth applies, in queue order, as tecs_new_with's (fn NULL:
 * no values). fn runs once per birth and may call back as the table at the
 * top's second row says; destroying the pending id first cancels the birth
 * (fn never runs). A birth that takes a unique key held by then is dropped
 * and reported. An apply out of memory before fn keeps the birth queued;
 * after fn it cancels the birth (TECS_ENOMEM).
 * @return the id, or 0 (TECS_EINVAL, TECS_EWORLD, TECS_EBUSY, TECS_ENOMEM,
 * TECS_ELIMIT; nothing queued, no id taken).
 */
tecs_entity_t tecs_delayed_new_with(tecs_world_t *world, tecs_archetype_t *arch,
                                    tecs_init_fn fn, void *ctx);

/** Run just before a delayed kill; the entity is still alive inside. */
typedef void (*tecs_destroy_fn)(tecs_world_t *world, tecs_entity_t entity, void *ctx);

/**
 * Delayed destroy: the entity stays alive, and is still iterated, until
 * delayed destroys are applied; then fn (may be NULL) runs and it dies. A second
 * delayed destroy of the same entity is harmless (one kill, the first fn).
 * @return TECS_OK, TECS_EDEAD, TECS_ENOMEM.
 */
tecs_err_t tecs_delayed_destroy(tecs_world_t *world, tecs_entity_t entity,
                              tecs_destroy_fn fn, void *ctx);

/**
 * Apply delayed births, in call order, and the changes their callbacks
 * queue. A change that cannot apply (a unique key taken by then, ...) is
 * dropped, the others still apply; one whose entity died meanwhile is
 * skipped, not counted.
 * @return TECS_OK, TECS_EBUSY (inside an iteration or a callback),
 * TECS_ENOMEM (what did not apply stays queued), or the first drop's error
 * (the last error says how many: tecs_dropped_changes).
 */
tecs_err_t tecs_delayed_apply_new(tecs_world_t *world);

/** Apply delayed destroys, in call order. @return as tecs_delayed_apply_new. */
tecs_err_t tecs_delayed_apply_destroy(tecs_world_t *world);

/** Apply delayed births and destroys, all in call order. @return as
 *  tecs_delayed_apply_new. */
tecs_err_t tecs_delayed_apply(tecs_world_t *world);

/**
 * Queued changes the latest apply dropped: a tecs_delayed_apply_new / _destroy /
 * tecs_delayed_apply call, or the flush of the deferred queue when an iteration, a
 * system or a callback ends (its last error then names the count and the
 * first cause), whichever came last. 0 for NULL.
 */
int32_t tecs_dropped_changes(const tecs_world_t *world);

/** Delayed births not yet applied. */
int32_t tecs_delayed_new_count(const tecs_world_t *world);

/** Delayed destroys not yet applied, for entities still alive (a kill whose
 *  entity was destroyed meanwhile is stale and not counted). */
int32_t tecs_delayed_destroy_count(const tecs_world_t *world);

/* ---- Queries and iteration --------------------------------------------- */

typedef struct tecs_query_t tecs_query_t;
/* Add-on objects an iteration may read (tinyecs/index.h). */
typedef struct tecs_filter_t tecs_filter_t;
typedef struct tecs_cache_t tecs_cache_t;

/** How a term matches. */
typedef enum tecs_oper_t {
    TECS_WITH = 0,              /* the entity must have it                    */
    TECS_ANY,                   /* it must have at least one of the any-terms */
    TECS_NONE,                  /* it must not have it                        */
    TECS_OPTIONAL               /* it may have it                             */
} tecs_oper_t;

/** What the iteration does with a term's data. */
typedef enum tecs_access_t {
    TECS_WRITE = 0,             /* read and write (the default)               */
    TECS_READ,                  /* read only                                  */
    TECS_FILTER                 /* no data handed out (e.g. tags)             */
} tecs_access_t;

/** Which rows of an enableable component a term sees (for other components
 *  only the default is accepted). The operator then applies to "has comp"
 *  read this way: TECS_NONE with the default matches the rows that lack
 *  comp or have it disabled. */
typedef enum tecs_toggle_t {
    TECS_TOGGLE_ENABLED = 0,    /* has it, enabled (the default)              */
    TECS_TOGGLE_ANY,            /* has it, enabled or not                     */
    TECS_TOGGLE_DISABLED        /* has it, disabled                           */
} tecs_toggle_t;

/** What a with-term asks of its component's ticks (change detection: see
 *  tecs_world_tick). Rows come out by chunk: every row of a chunk in which
 *  one row's value was written (or one row entered, for ADDED) since the
 *  query's previous run began; a row that enters a chunk (a birth, an add,
 *  a remove, a destroy's hole fill) counts as a write to all its values.
 *  A sparse component's changes are its set's as a whole. */
typedef enum tecs_change_t {
    TECS_CHANGE_ANY = 0,        /* every row (the default)                    */
    TECS_CHANGE_CHANGED,        /* rows whose value may have been written     */
    TECS_CHANGE_ADDED           /* rows that may have got it                  */
} tecs_change_t;

/** A term's target (and, with one, its comp) for "any" (tinyecs/relation.h). */
#define TECS_WILDCARD 0xffffffffu

typedef struct tecs_term_t {
    tecs_comp_t comp;           /* a relation with a target (below): a pair;
                                   TECS_WILDCARD with a target: any relation */
    tecs_oper_t oper;
    tecs_access_t access;
    tecs_toggle_t toggle;
    tecs_change_t change;       /* a with-term's; TECS_CHANGE_CHANGED of a
                                   tag is refused (TECS_EINVAL), as is a
                                   change term in a cache's or an
                                   observer's query                           */
    tecs_entity_t target;       /* 0, or with a relation (tinyecs/relation.h)
                                   the pair's target, TECS_WILDCARD for any:
                                   decided row by row                         */
    bool from_parent;           /* read comp from the entity's parent
                                   (tinyecs/relation.h), TECS_READ only: the
                                   field is one value for the step
                                   (tecs_field_is_self)                       */
    bool inherited;             /* an entity without comp of its own reads
                                   its base's (IsA, tinyecs/relation.h); a
                                   table component, TECS_READ or TECS_FILTER,
                                   no toggle, no change: an inherited field
                                   is one value for the step
                                   (tecs_field_is_self false). Without it a
                                   term reads the entity's own only          */
} tecs_term_t;

typedef struct tecs_query_desc_t {
    const tecs_term_t *terms;
    int32_t term_count;         /* 0..TECS_MAX_TERMS (0: every entity)        */
    bool cascade;               /* the hierarchy's order: every parent's rows
                                   before its children's (tinyecs/relation.h;
                                   the archetypes by level)                   */
} tecs_query_desc_t;

/**
 * Create a query. It matches every archetype that exists now and each one
 * made later (iteration never matches). One term per component at most. A
 * sparse component's term is decided row by row (docs/sparse.md has the
 * costs). No terms (term_count 0, terms may be NULL): the query of every
 * live entity, the empty archetype included, handing out no field.
 * @return the query, owned by the world until tecs_query_free; NULL on
 * error: TECS_EINVAL (a bad desc, a component in two terms), TECS_ELIMIT,
 * TECS_ENOCOMP, TECS_ENOMEM.
 */
tecs_query_t *tecs_query_new(tecs_world_t *world, const tecs_query_desc_t *desc);

/** The common query: all of these components, read-write. n 0 (ids may
 *  be NULL) makes the query of every entity (see tecs_query_new). */
tecs_query_t *tecs_query_all(tecs_world_t *world, int32_t n, const tecs_comp_t *ids);

/** Build a query from terms:
 *  TECS_QUERY(w, {.comp = pos}, {.comp = vel, .access = TECS_READ}). */
#define TECS_QUERY(world, ...)                                              \
    tecs_query_new((world), &(tecs_query_desc_t){                               \
        .terms = (const tecs_term_t[]){ __VA_ARGS__ },                      \
        .term_count = (int32_t)(sizeof((const tecs_term_t[]){ __VA_ARGS__ })\
                                / sizeof(tecs_term_t)) })

/** Free a query. @return TECS_OK (NULL does nothing), or TECS_EBUSY with
 *  nothing freed while a system or a cache uses the query (remove them
 *  first) or while an iteration of it is open. */
tecs_err_t tecs_query_free(tecs_query_t *query);

/** The query's world. */
tecs_world_t *tecs_query_world(const tecs_query_t *query);

/** The query's terms, owned by the query. @return their number. */
int32_t tecs_query_terms(const tecs_query_t *query, const tecs_term_t **out);

/** Entities that match, counted without iterating: O(matched archetypes);
 *  with toggle terms, their bits are counted (64 rows a word) in the
 *  archetypes where some rows are disabled and others not. */
int32_t tecs_query_count(const tecs_query_t *query);

/** Archetypes the query has matched (empty ones included). */
int32_t tecs_query_archetype_count(const tecs_query_t *query);

/**
 * A chunk iterator: each tecs_iter_next step hands out `count` rows of one
 * chunk: the entity column and one pointer per term. Read only the public
 * fields. A plain value: every copy names the same iteration, which one
 * copy's end (tecs_iter_next false, tecs_iter_fini) ends for all.
 */
typedef struct tecs_iter_t {
    tecs_world_t *world;
    int32_t count;                        /* rows in this step              */
    const tecs_entity_t *entities;        /* count entity ids               */
    void *fields[TECS_MAX_TERMS];         /* per term; see tecs_field       */
    /* set when a system runs (tecs_progress, tecs_system_run); 0 / NULL
       otherwise */
    double delta_time;                    /* seconds this run covers        */
    int64_t frame;                        /* frame number, 0 for the first  */
    void *ctx;                            /* the system's user pointer      */
    /* set in a worker (a parallel or concurrent system, a split part): the
       worker's index, 0..workers-1, and how many workers share the run;
       0 and 1 otherwise */
    int32_t worker;
    int32_t workers;
    /* per term: bytes of one value (0 for a tag), for the typed macros'
       checks; valid while the iteration is open */
    const uint32_t *sizes;
    /* private */
    struct {
        tecs_query_t *query;
        void *arch;
        int32_t match, chunk, flags, state;
        uint32_t serial;
        void *src;
        bool (*step)(struct tecs_iter_t *it, bool fini);
        int32_t pos;
        int64_t stepped, left;
        uint32_t absent;
        int32_t word;
        uint64_t bits;
    } priv_;
} tecs_iter_t;

/**
 * What to iterate, zero meaning default: TECS_ITER(w, .query = q). Exactly
 * one source (query, cache or archetype); where and parts only with query.
 *   - query: its matches, archetype by archetype as matched, chunks in
 *     order; with where (tinyecs/index.h), the rows passing the filter, in
 *     its order; the result set is taken at the start.
 *   - cache (tinyecs/index.h): its rows in its order, its query's fields.
 *   - archetype: exactly its entities (enabled or not); term i is its i-th
 *     component (tecs_archetype_components), each a write term.
 *   - reverse, one meaning for every source: the steps last first, the
 *     rows within a step in memory order; tecs_iter_each and
 *     tecs_iter_collect read each step from its end, so they visit every
 *     entity in exactly the reverse of the forward order (a key order
 *     turned round, ties included).
 *   - parts, part (between tecs_split_begin and _end, tinyecs/system.h,
 *     from any thread): rows [part * N / parts, (part + 1) * N / parts) of
 *     the N matched at the split, it->world the part's worker context.
 */
typedef struct tecs_iter_desc_t {
    tecs_query_t *query;          /* a query's matches ...                    */
    tecs_filter_t *where;         /* ... only the rows passing (tinyecs/index.h) */
    tecs_cache_t *cache;          /* or a cache's rows, in its order           */
    tecs_archetype_t *archetype;  /* or exactly this archetype, its components
                                     as terms                                 */
    bool reverse;                 /* the steps last first (above)              */
    int32_t parts, part;          /* with query, inside tecs_split_begin/_end:
                                     part `part` of `parts` (0: the whole)     */
} tecs_iter_desc_t;

/**
 * Start an iteration. While any iteration is open the world is deferred:
 * structural changes queue and apply when the outermost one ends.
 * Iterations nest. The source is busy until the end (its free is refused,
 * a filter's free waits; a second iteration of a filter or cache is
 * EBUSY). On error the iteration is empty, the last error says why, and
 * tecs_iter_each / _collect on it return the error: TECS_EINVAL (a bad
 * desc or filter), TECS_EWORLD, TECS_EBUSY, TECS_ENOMEM. A part records
 * no error (the world is in use): a bad one is an empty iteration whose
 * error is TECS_EINVAL.
 */
tecs_iter_t tecs_iter(tecs_world_t *world, const tecs_iter_desc_t *desc);

/** tecs_iter with the description's fields given in place:
 *  TECS_ITER(w, .query = q, .reverse = true). */
#define TECS_ITER(world, ...) tecs_iter((world), &(tecs_iter_desc_t){ __VA_ARGS__ })

/**
 * Step to the next non-empty chunk; with toggle terms (enableable
 * components), a chunk whose rows differ is handed out as runs of
 * consecutive rows that pass, one run a step. @return false at the end;
 * the iteration is then ended (as by tecs_iter_fini). Also false, doing
 * nothing, on an iteration that another copy of the iterator has ended.
 */
bool tecs_iter_next(tecs_iter_t *it);

/** End an iteration early and cleanly. Idempotent: harmless on an
 *  iteration already ended, by this copy or another (the world counts an
 *  end through another copy as an iteration ended twice, which
 *  tecs_world_check reports). */
void tecs_iter_fini(tecs_iter_t *it);

/**
 * The column of term i in this step: count values. NULL for a tag, a filter
 * term, a none term, or an optional / any component absent in this step
 * (absent from the chunk, or an optional / any toggle term whose component
 * is not enabled in the step's rows, as its toggle reads them).
 */
void *tecs_field(const tecs_iter_t *it, int32_t term);

/** True if term i's component is present in this step's rows; false once
 *  the iteration has ended. */
bool tecs_field_is_set(const tecs_iter_t *it, int32_t term);

/** False if term's value comes from another entity (a term read from the
 *  parent, a (ChildOf, *) term's parent id): its field then points to one
 *  value for the whole step, not to an array of count. True for every
 *  other term, and for bad arguments. */
bool tecs_field_is_self(const tecs_iter_t *it, int32_t term);

/** Private: TECS_FIELD's refusal of a type of the wrong size (records
 *  TECS_EINVAL on it->world, returns NULL). */
void *tecs__field_refused(const tecs_iter_t *it, int32_t term, size_t size);

/** Private: tecs_field of a term whose values are size bytes each. */
static inline void *tecs__field_sized(const tecs_iter_t *it, int32_t term, size_t size)
{
    void *f = tecs_field(it, term);
    return f == NULL || it->sizes[term] == size ? f : tecs__field_refused(it, term, size);
}

/** Typed tecs_field: NULL with TECS_EINVAL when sizeof(T) is not the
 *  term's component's size. */
#define TECS_FIELD(it, T, term) ((T *)tecs__field_sized((it), (term), sizeof(T)))

/**
 * Per-entity iteration the compiler can inline, with no call per entity:
 *
 *     TECS_EACH(q, it, i) {
 *         Position *p = TECS_ROW(it, Position, 0, i);
 *         const Velocity *v = TECS_ROW(it, const Velocity, 1, i);
 *         p->x += v->x;
 *     }
 *
 * declares the open iterator `it` and the row `i` (int32_t) of its step.
 * Sugar over tecs_iter, tecs_iter_next and tecs_iter_fini, with their
 * errors and rules (the body runs inside an open iteration). `break` ends
 * the iteration, `continue` goes to the next entity; leave the body by
 * return or goto only after tecs_iter_fini(&it).
 */
/** Private: TECS_EACH's start, so that its query is evaluated once. */
static inline tecs_iter_t tecs__iter_query(tecs_query_t *query)
{
    tecs_iter_desc_t desc = { 0 };
    desc.query = query;
    return tecs_iter(tecs_query_world(query), &desc);
}
#define TECS_EACH(q, it, i) TECS_EACH_ITER(tecs__iter_query(q), it, i)

/**
 * TECS_EACH over any chunk iterator: start is an expression giving a fresh
 * tecs_iter_t (TECS_ITER(w, .cache = c), ...). Rules and errors are start's
 * and TECS_EACH's. The rows of one step come in memory order, also in
 * reverse (see tecs_iter_desc_t).
 */
#define TECS_EACH_ITER(start, it, i)                                         \
    for (int32_t i = 0; i >= 0; i = -1)                                      \
        for (tecs_iter_t it = (start);                                       \
             i == (it).count ? (tecs_iter_next(&(it)) && (i = 0) == 0)      \
                             : (tecs_iter_fini(&(it)), 0);)                 \
            for (; i < (it).count; i++)

/** Private: TECS_ROW's test, one condition the compiler can take out of
 *  the loop: the field is there and its values are size bytes. */
static inline bool tecs__row_ok(const void *field, uint32_t have, size_t size)
{
    return (field != NULL) & (have == size);
}

/** Inside TECS_EACH: a T * to row i's value of term; NULL where tecs_field
 *  is NULL, and where sizeof(T) is not the term's component's size (this
 *  records no error: the loop calls nothing, so that it stays a plain array
 *  loop; TECS_FIELD on the step names both sizes). Reads the iterator's
 *  public fields only. */
#define TECS_ROW(it, T, term, i)                                             \
    (tecs__row_ok((it).fields[(term)], (it).sizes[(term)], sizeof(T))        \
         ? (T *)(it).fields[(term)] + (i) : (T *)NULL)

/**
 * Per-entity callback: fields[i] points to the entity's value of term i (or
 * NULL, as tecs_field). Return true to stop the whole iteration.
 */
typedef bool (*tecs_each_fn)(tecs_world_t *world, tecs_entity_t entity,
                             void *const *fields, void *ctx);

/**
 * Call fn for each entity of the rest of the iteration (the steps after the
 * current one) until it returns true, then end the iteration; rows in the
 * order reverse defines (tecs_iter_desc_t). fn runs inside the iteration.
 *
 *     tecs_iter_t it = TECS_ITER(w, .query = q);
 *     tecs_err_t err = tecs_iter_each(&it, fn, ctx);
 *
 * @return TECS_OK; a failed tecs_iter's error; TECS_EINVAL (NULL it or fn).
 */
tecs_err_t tecs_iter_each(tecs_iter_t *it, tecs_each_fn fn, void *ctx);

/** Collect the ids of the rest of the iteration, as tecs_iter_each visits
 *  them, into out (up to cap; NULL with cap 0 counts), then end it.
 *  @return their number (may exceed cap), or -1: a failed tecs_iter's
 *  error, TECS_EINVAL (NULL it, negative cap, NULL out with cap > 0). */
int32_t tecs_iter_collect(tecs_iter_t *it, tecs_entity_t *out, int32_t cap);

/** True while changes are queued: an iteration or a deferred section is
 *  open, or a callback runs (any callback the library calls; see the table
 *  at the top). */
bool tecs_is_deferred(const tecs_world_t *world);

/**
 * Begin a deferred section: until the matching tecs_defer_end, structural
 * changes queue exactly as inside an iteration (a new entity gets its id
 * but is not alive yet; a change whose entity died is skipped; one that
 * no longer fits is dropped and reported). Value writes land at once.
 * Sections nest with each other, iterations and callbacks; the queue
 * applies when the last deferral ends. Meanwhile tecs_progress,
 * tecs_world_reset and the delayed applies are EBUSY.
 * @return TECS_OK; TECS_EINVAL (NULL); TECS_EBUSY (closed world);
 * TECS_ENOMEM (nothing changed).
 */
tecs_err_t tecs_defer_begin(tecs_world_t *world);

/**
 * End the innermost deferred section; with no other deferral open, apply
 * the queue. Inside a callback it ends only a section that callback began.
 * @return TECS_OK; TECS_EINVAL (NULL, no section open, or one begun
 * outside the running callback); TECS_EBUSY (closed world); or what the
 * flush met: the first drop's error (tecs_dropped_changes) or TECS_ENOMEM
 * (the rest stays queued); the section is ended all the same.
 */
tecs_err_t tecs_defer_end(tecs_world_t *world);

/* ---- Hooks and observers ----------------------------------------------- */

/** What happened. ADD / SET / REMOVE concern one component of one entity;
 *  ENTER / LEAVE say that an entity started / stopped matching a query. */
typedef enum tecs_event_kind_t {
    TECS_ON_ADD = 1,            /* after the component was constructed        */
    TECS_ON_SET,                /* after its value was written                */
    TECS_ON_REMOVE,             /* before it is destroyed                     */
    TECS_ON_ENTER,              /* the entity now matches the terms           */
    TECS_ON_LEAVE,              /* the entity no longer matches them          */
    TECS_ON_ENABLE,             /* an enableable component was enabled        */
    TECS_ON_DISABLE             /* an enableable component was disabled       */
} tecs_event_kind_t;

/** What a hook or an observer is handed. */
typedef struct tecs_event_t {
    tecs_world_t *world;
    tecs_event_kind_t kind;
    tecs_entity_t entity;       /* 0: the event is of the world's resource of
                                   comp (see Resources)                       */
    tecs_comp_t comp;           /* 0 for ENTER / LEAVE                        */
    void *value;                /* the component's value; NULL for a tag and
                                   for ENTER / LEAVE. Valid during the call.  */
    void *ctx;                  /* the hook's or observer's user pointer      */
    tecs_entity_t target;       /* ADD / SET / REMOVE of a relation (ChildOf
                                   too): the pair's target; else 0            */
} tecs_event_t;

/** A hook or observer callback. It runs with the world deferred: its
 *  structural changes apply after it returns; its writes of present values
 *  happen at once (their SET events inside that call). */
typedef void (*tecs_observer_fn)(const tecs_event_t *event);

/** Per-component hooks; a NULL member is no hook. */
typedef struct tecs_hooks_t {
    tecs_observer_fn on_add;    /* after the value is constructed             */
    tecs_observer_fn on_set;    /* after tecs_set, tecs_modified, a write term */
    tecs_observer_fn on_remove; /* before the value is destroyed: on remove,
                                   on destroy and when the world is freed     */
    void *ctx;                  /* handed to every hook                       */
} tecs_hooks_t;

/** Give a component its hooks, replacing any (NULL clears them). They run
 *  before ADD and SET observers, after REMOVE ones; a write term's SET
 *  comes when the iterator leaves the chunk. @return TECS_OK, TECS_EINVAL
 *  (on_set on a tag), TECS_ENOCOMP, TECS_ENOMEM. */
tecs_err_t tecs_component_hooks(tecs_world_t *world, tecs_comp_t comp,
                                const tecs_hooks_t *hooks);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_H */
