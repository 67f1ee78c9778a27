/*
** tinyecs.h — the whole public API of tinyecs  in one header: the
** core and the add-ons dist/tinyecs.c holds. Generated from include/ by
** tools/amalgamate.sh (make dist); edit the sources, not this file.
** Build: compile tinyecs.c with this header beside it (C11; -pthread on
** POSIX). The JSON module and the inspector are built with CMake.
*/
/* ---- include/tinyecs.h ---- */
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
/* ---- include/tinyecs/change.h ---- */
/*
** tinyecs/change.h — change detection: the world's ticks, the tick of an
** entity's last write, and a query's last run (the core keeps them; a
** term's .change, in tinyecs.h, asks for what changed).
*/
#ifndef TINYECS_CHANGE_H
#define TINYECS_CHANGE_H



#ifdef __cplusplus
extern "C" {
#endif

/*
** The world counts ticks, from 1. A write records its tick per chunk and
** component: tecs_set, tecs_get_mut, tecs_modified, a write term handed
** out, a row entering a chunk (birth, add, move; tecs_enable too). A term
** with .change passes the chunks written since the query's previous run
** began (every row on its first run); each run starts at the current tick
** and moves it on, so no write is missed or seen twice. docs/change-detection.md.
*/

/** The world's tick now (0 for NULL). */
uint64_t tecs_world_tick(const tecs_world_t *world);

/** Move the world's tick on by one (tecs_progress does, at each frame's
 *  start): writes made from now on are newer than any made before.
 *  @return the new tick, or 0 (NULL; TECS_EBUSY from a worker or while
 *  the world is being freed). */
uint64_t tecs_world_tick_advance(tecs_world_t *world);

/** The tick of the last write to the value of comp of entity as the world
 *  keeps it: that of the entity's chunk (or sparse set); 0 if the entity
 *  is not alive or has no comp. Calls nothing: may be called from any
 *  callback. */
uint64_t tecs_changed_tick(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/** The tick at which comp may have been added to entity, as kept: the last
 *  row entering the entity's chunk (or member joining the sparse set); 0
 *  as tecs_changed_tick. */
uint64_t tecs_added_tick(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/** The tick at which the latest run of query began (0: it never ran with
 *  change terms; a query without change terms keeps 0). */
uint64_t tecs_query_last_run(const tecs_query_t *query);

/** Set the tick the next run of query compares with (its change terms pass
 *  what is newer): 0 makes the next run pass every row. @return TECS_OK,
 *  TECS_EINVAL (NULL, a tick above tecs_world_tick), TECS_EBUSY (an
 *  iteration of the query is open). */
tecs_err_t tecs_query_set_last_run(tecs_query_t *query, uint64_t tick);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_CHANGE_H */
/* ---- include/tinyecs/handle.h ---- */
/*
** tinyecs/handle.h — handles: the common case of get, add, remove and
** enable of one component done inline in the caller's loop
** (docs/lookups.md). Conventions as tinyecs.h's.
*/
#ifndef TINYECS_HANDLE_H
#define TINYECS_HANDLE_H



#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Handles: work in your loop                                           */
/* ==================================================================== */

/*
** A handle of one component does the common case of get, add, remove and
** enable inline, in the caller's code, reading the world's own tables
** through the structs below; anything it cannot do alone goes to the
** checked call (tecs_get's result aside: a handle's get is NULL where
** tecs_get fails), with the same result and errors. The world keeps what
** a handle points at up to date (new archetypes, chunks and pages made or
** freed, listeners added, tecs_world_reset) and for its life, so a handle
** made once serves until the world is freed. Every field below is the
** library's: read a value through tecs_handle_get, never the fields.
*/

/** An entity slot: the world's record of one id's slot. */
typedef struct tecs_slot_t {
    uint32_t gen;               /* generation: the id's high half           */
    uint32_t arch;              /* archetype index (TECS_SLOT_ARCH bits) and
                                   TECS_SLOT_* flags, or a TECS_SLOT_ state */
    uint32_t row;               /* row in the archetype; when dead, the next
                                   free slot                                */
} tecs_slot_t;

#define TECS_SLOT_ARCH      0x00ffffffu /* the archetype index's bits       */
#define TECS_SLOT_KILL      0x80000000u /* flag: a delayed destroy queued   */
#define TECS_SLOT_REMOVE    0x40000000u /* flag: a deferred remove queued   */
#define TECS_SLOT_DESTROY   0x20000000u /* flag: a deferred destroy queued  */
#define TECS_SLOT_RETIRED   0xfffffffdu /* state: generations used up       */
#define TECS_SLOT_PENDING   0xfffffffeu /* state: id handed out, birth queued */
#define TECS_SLOT_DEAD      0xffffffffu /* state: free                      */

/** One archetype's entry in a component's lookup table. */
typedef struct tecs_handle_col_t {
    char *const *cols_;         /* chunk 0's column pointer in the chunk
                                   table (no value: a table of one NULL)    */
    uint32_t stride_;           /* pointers per chunk in that table         */
    uint32_t size_;             /* value size                               */
} tecs_handle_col_t;

/** The archetype a lookup table reads first: rows [0, run_) are one run. */
typedef struct tecs_handle_run_t {
    uint32_t arch_;             /* its archetype index; 0xffffffff: none    */
    uint32_t run_;
    uintptr_t base_;            /* row 0's value                            */
    const int32_t *count_;      /* its rows in use                          */
    const uint64_t *ids_;       /* row 0's id, when it has a row            */
    tecs_handle_col_t col_;     /* its entry in the table                   */
} tecs_handle_run_t;

/** The chunk whose enable bits a handle flips inline. */
typedef struct tecs_handle_bits_t {
    uint32_t arch_;             /* its archetype index; 0xffffffff: none    */
    uint32_t lo_;               /* its rows [lo_, lo_ + n_)                 */
    uint32_t n_;
    uint64_t *bits_;            /* the bit word of row lo_ (set: disabled)  */
} tecs_handle_bits_t;

/** A component's listener counts. */
typedef struct tecs_handle_listen_t {
    uint32_t watch;             /* listeners that want its events           */
    uint32_t watch_noset;       /* of those, ones that want no SET events   */
    uint32_t veto;              /* listeners that may refuse its changes    */
} tecs_handle_listen_t;

/** The world's words that close the inline changes. */
typedef struct tecs_handle_gate_t {
    int32_t defer_depth;        /* 0: changes apply at once                 */
    uint32_t stop;              /* 0: open, no lifecycle hook running       */
} tecs_handle_gate_t;

/** The first fields of a sparse component's set. A page is two pointers,
 *  its member count (int32_t), then per slot its place in dense_
 *  (uint32_t; 0xffffffff: none), and from head_ on its entries: the
 *  member's generation (0: no member), then the value. */
typedef struct tecs_handle_set_t {
    char *const *pages_;        /* by slot >> shift_; NULL: no page there   */
    tecs_entity_t *dense_;      /* the members' ids, in no order            */
    int32_t count_;             /* members                                  */
    int32_t cap_;               /* room in dense_                           */
    int32_t npages_;            /* length of pages_                         */
    uint32_t shift_, mask_;     /* slots per page: log2, and less one       */
    uint32_t stride_;           /* bytes of an entry                        */
    uint32_t head_;             /* a page's first entry's offset            */
    uint64_t added_;            /* the tick of the last member that joined  */
    uint64_t removed_;          /* the tick of the last member that left    */
    const tecs_handle_listen_t *listen_; /* the component's listener counts */
} tecs_handle_set_t;

/** A handle of one component (tecs_handle_init): plain data, copies are
 *  handles too. */
typedef struct tecs_handle_t {
    const tecs_slot_t *const *slots_;   /* the world's entity slots         */
    const int32_t *nslots_;     /* slots in use                             */
    const int32_t *nget_;       /* get's count of slots (sparse: a zero)    */
    const tecs_handle_col_t *const *cols_; /* lookup table by archetype     */
    const int32_t *ncols_;      /* archetypes the table covers              */
    const tecs_handle_run_t *run_;      /* the table's first archetype      */
    uint32_t shift_, mask_;     /* rows per chunk (sparse: slots per page):
                                   log2, and less one                       */
    const int32_t *npages_;     /* get's count of pages (else a zero)       */
    uint32_t head_;             /* sparse: a page's first entry's offset    */
    uint32_t stride_;           /* sparse: bytes of an entry                */
    uint32_t value_;            /* sparse: the value's offset from a page   */
    uint32_t size_;             /* value size: TECS_HANDLE_GET's check      */
    const tecs_handle_bits_t *bits_;    /* the chunk toggled inline         */
    const tecs_handle_gate_t *gate_;    /* the world's (or context's) gate  */
    tecs_handle_set_t *set_;    /* sparse: the set                          */
    const uint64_t *tick_;      /* the world's tick                         */
    uint32_t hooks_;            /* the add (1) and remove (2) that go to the
                                   call: hooks to run, or not sparse        */
    tecs_comp_t comp_;
    tecs_world_t *world_;
} tecs_handle_t;

/**
 * Make a handle of comp in *out (caller's memory; nothing to free). The
 * first handle of comp makes what its kind needs, kept from then on: the
 * lookup table of a table component (a slot per archetype), the set of a
 * sparse one, the toggled chunk of an enableable one. Through a worker
 * context the handle reads the world's tables (its get is NULL for a
 * component the worker's system does not read) and every change through
 * it is the context's (queued); make the first handle of comp before a
 * parallel run.
 * Callbacks: allowed wherever tecs_get is, but the first handle of comp
 * not in a closed world, a worker, or (enableable or sparse) a hook.
 * @return TECS_OK; TECS_EINVAL (NULL world or out), TECS_ENOCOMP,
 * TECS_EBUSY (closed world; the first handle where it may not be made),
 * TECS_ENOMEM.
 */
tecs_err_t tecs_handle_init(tecs_world_t *world, tecs_comp_t comp, tecs_handle_t *out);

/** Private: tecs_handle_get of a sparse component. */
static inline const void *tecs__handle_get_sparse(const tecs_handle_t *h, tecs_entity_t entity)
{
    uint32_t i = (uint32_t)(entity & 0xffffffffu), gen = (uint32_t)(entity >> 32);
    if ((i >> h->shift_) >= (uint32_t)*h->npages_)
        return NULL;
    const char *pg = h->set_->pages_[i >> h->shift_];
    if (pg == NULL)
        return NULL;
    pg += (size_t)(i & h->mask_) * h->stride_;
    if (*(const uint32_t *)(const void *)(pg + h->head_) != gen || gen == 0)
        return NULL;
    return pg + h->value_;
}

/**
 * The value of the handle's component on entity, read inline.
 * @return a pointer valid as tecs_get's (a sparse value until the entity
 * loses the component), for reading (write with tecs_get_mut, which change
 * detection and indexes see); NULL if the entity is dead, pending, recycled
 * or lacks the component (its own: an inherited value, tinyecs/relation.h's
 * IsA, is tecs_get's), and for a tag. Sets no error. Callbacks and
 * threads: a read, allowed where tecs_get is, workers included (unchecked:
 * keep to the components the system reads); not from inside the world's
 * allocator or through a world whose workers run.
 */
static inline const void *tecs_handle_get(const tecs_handle_t *h, tecs_entity_t entity)
{
    uint32_t i = (uint32_t)(entity & 0xffffffffu);
    if (i >= (uint32_t)*h->nget_)
        return tecs__handle_get_sparse(h, entity);
    const tecs_slot_t *r = *h->slots_ + i;
    const tecs_handle_run_t *hot = h->run_;
    /* Ids made one after another into the first archetype have rows as far
    ** apart as their slots: the value's address is guessed from the id
    ** alone, and the slot confirms it. */
    if (*hot->count_ > 0) {
        uint32_t g = i - (uint32_t)(*hot->ids_ & 0xffffffffu);
        if (g < hot->run_ && r->row == g && r->gen == (uint32_t)(entity >> 32) &&
            (r->arch & TECS_SLOT_ARCH) == hot->arch_)
            return (const void *)(hot->base_ + (size_t)g * hot->col_.size_);
    }
    if (r->gen != (uint32_t)(entity >> 32))
        return NULL;
    uint32_t a = r->arch & TECS_SLOT_ARCH;  /* a state is out of the table's range */
    uint32_t row = r->row;
    const tecs_handle_col_t *s;
    if (a == hot->arch_) {
        if (row < hot->run_)
            return (const void *)(hot->base_ + (size_t)row * hot->col_.size_);
        s = &hot->col_;
    } else {
        if (a >= (uint32_t)*h->ncols_)
            return NULL;
        s = *h->cols_ + a;
    }
    /* (No value: NULL + 0, in integers, as C allows no arithmetic on NULL.) */
    return (const void *)((uintptr_t)s->cols_[(size_t)(row >> h->shift_) * s->stride_] +
                          (size_t)(row & h->mask_) * s->size_);
}

/** Typed tecs_handle_get: TECS_HANDLE_GET(&h, e, Position). NULL, as for an
 *  entity without the component, when sizeof(T) is not its size; it records
 *  no error (workers read through one handle). */
#define TECS_HANDLE_GET(h, entity, T)                                       \
    ((const T *)((h)->size_ == sizeof(T) ? tecs_handle_get((h), (entity)) : NULL))

/** Private: may a handle change the set inline now (an open world, no
 *  hook, not deferred, nobody listening to the component)? */
static inline bool tecs__handle_quiet(const tecs_handle_t *h)
{
    const tecs_handle_listen_t *l = h->set_->listen_;
    return ((uint32_t)h->gate_->defer_depth | h->gate_->stop | l->watch | l->veto) == 0;
}

/** Private: a page's member count; its slots' places follow it. */
static inline int32_t *tecs__handle_pcount(char *pg)
{
    return (int32_t *)(void *)(pg + 2 * sizeof(void *));
}

/**
 * tecs_add(world, entity, comp), the value zeroed or constructed. Inline
 * for a sparse component in the common case: an open world, not deferred,
 * nobody listening to comp and no constructor, a live entity that is not a
 * member, its page made, the member list not empty and with room; it then
 * sets no error. Anything else, and any other component, is tecs_add.
 * Callbacks: as tecs_add; from a worker, use a handle made through its
 * context.
 * @return TECS_OK, or tecs_add's error.
 */
static inline tecs_err_t tecs_handle_add(const tecs_handle_t *h, tecs_entity_t entity)
{
    uint32_t i = (uint32_t)(entity & 0xffffffffu), gen = (uint32_t)(entity >> 32);
    tecs_handle_set_t *s = h->set_;
    if (tecs__handle_quiet(h) && !(h->hooks_ & 1) && i < (uint32_t)*h->nslots_ &&
        (i >> s->shift_) < (uint32_t)s->npages_) {
        const tecs_slot_t *r = *h->slots_ + i;
        char *pg = s->pages_[i >> s->shift_];
        int32_t n = s->count_;
        if (r->gen == gen && r->arch < TECS_SLOT_RETIRED && pg != NULL && n > 0 &&
            n < s->cap_) {
            uint32_t k = i & s->mask_, words = s->stride_ / 4;
            uint32_t *at = (uint32_t *)(void *)(pg + s->head_ + (size_t)k * s->stride_);
            int32_t *pn = tecs__handle_pcount(pg);
            tecs_entity_t *dense = s->dense_;
            uint64_t tick = *h->tick_;
            if (*at == 0) {
                ((uint32_t *)(pn + 1))[k] = (uint32_t)n;
                ++*pn;
                dense[n] = entity;
                s->count_ = n + 1;
                s->added_ = tick;
                at[0] = gen;
                if (words == 2)                 /* the value zeroed */
                    at[1] = 0;
                else
                    for (uint32_t z = 1; z < words; z++)
                        at[z] = 0;
                return TECS_OK;
            }
        }
    }
    return tecs_add(h->world_, entity, h->comp_);
}

/**
 * tecs_remove(world, entity, comp). Inline for a sparse component in the
 * common case: an open world, not deferred, nobody listening to comp and
 * no destructor, a member with other members in its page; it then sets no
 * error. Anything else, and any other component, is tecs_remove.
 * Callbacks: as tecs_remove; from a worker, use a handle made through its
 * context.
 * @return TECS_OK, or tecs_remove's error.
 */
static inline tecs_err_t tecs_handle_remove(const tecs_handle_t *h, tecs_entity_t entity)
{
    uint32_t i = (uint32_t)(entity & 0xffffffffu), gen = (uint32_t)(entity >> 32);
    tecs_handle_set_t *s = h->set_;
    if (tecs__handle_quiet(h) && !(h->hooks_ & 2) && (i >> s->shift_) < (uint32_t)s->npages_) {
        char *const *pages = s->pages_;
        char *pg = pages[i >> s->shift_];
        if (pg != NULL) {
            uint32_t k = i & s->mask_, shift = s->shift_, mask = s->mask_;
            uint32_t *at = (uint32_t *)(void *)(pg + s->head_ + (size_t)k * s->stride_);
            int32_t *pn = tecs__handle_pcount(pg);
            if (*at == gen && gen != 0 && *pn > 1) {    /* a member, not its page's last */
                uint32_t *pos = (uint32_t *)(pn + 1), place = pos[k];
                int32_t n = s->count_ - 1;
                tecs_entity_t *dense = s->dense_, last = dense[n];
                uint32_t ls = (uint32_t)(last & 0xffffffffu);
                uint32_t *lpos = (uint32_t *)(tecs__handle_pcount(pages[ls >> shift]) + 1);
                uint64_t tick = *h->tick_;
                *at = 0;
                --*pn;
                s->count_ = n;
                s->removed_ = tick;
                dense[place] = last;
                lpos[ls & mask] = place;
                pos[k] = 0xffffffffu;   /* (last: the last member may be this one) */
                return TECS_OK;
            }
        }
    }
    return tecs_remove(h->world_, entity, h->comp_);
}

/** Private: tecs_handle_enable's call: tecs_enable, then the entity's chunk
 *  made the one toggled inline when it can be. */
tecs_err_t tecs__handle_enable(tecs_world_t *world, tecs_comp_t comp, tecs_entity_t entity,
                               bool enable);

/**
 * tecs_enable(world, entity, comp, enable). Inline for an enableable
 * component in the common case: an open world (no hook, no worker under
 * way), nobody listening to comp, a live entity with nothing queued, in
 * the chunk of the last toggle that went through the call, while the
 * world's tick stays; it then flips the row's bit and sets no error.
 * Anything else, and any other component, is tecs_enable, after which the
 * entity's chunk is the one toggled inline. Ids in row order (as born in
 * bulk) take a call a chunk.
 * Callbacks: as tecs_enable; from a worker, use a handle made through its
 * context.
 * @return TECS_OK, or tecs_enable's error.
 */
static inline tecs_err_t tecs_handle_enable(const tecs_handle_t *h, tecs_entity_t entity,
                                            bool enable)
{
    uint32_t i = (uint32_t)(entity & 0xffffffffu);
    if (h->gate_->stop == 0 && i < (uint32_t)*h->nslots_) {
        const tecs_slot_t *r = *h->slots_ + i;
        const tecs_handle_bits_t *hot = h->bits_;
        uint32_t b = r->row - hot->lo_;         /* a flag in arch: no match */
        if (r->gen == (uint32_t)(entity >> 32) && r->arch == hot->arch_ && b < hot->n_) {
            uint64_t *word = hot->bits_ + (b >> 6);
            uint64_t bit = (uint64_t)1 << (b & 63);
            *word = (*word | bit) ^ (enable ? bit : 0);     /* set: disabled */
            return TECS_OK;
        }
    }
    return tecs__handle_enable(h->world_, h->comp_, entity, enable);
}

/**
 * What n calls of tecs_handle_add do, ids[0] first, in one call that reads
 * the world's tables once a stretch. Stops at the first id tecs_add
 * refuses: the ids before it are added (their events fired), that id and
 * those after it are not. *done (if done is not NULL) is the number of ids
 * changed or queued: n after a success. The ids must not change during the
 * call (an observer it fires may not write them). Callbacks: as tecs_add.
 * @return TECS_OK; TECS_EINVAL (NULL or zeroed handle, n < 0, NULL ids with
 * n > 0); else the error of the first id refused.
 */
tecs_err_t tecs_handle_add_many(const tecs_handle_t *h, const tecs_entity_t *ids, int32_t n,
                                int32_t *done);

/** What n calls of tecs_handle_remove do, as tecs_handle_add_many adds.
 *  @return as tecs_handle_add_many. */
tecs_err_t tecs_handle_remove_many(const tecs_handle_t *h, const tecs_entity_t *ids,
                                   int32_t n, int32_t *done);

/** What n calls of tecs_handle_enable do, as tecs_handle_add_many adds.
 *  @return as tecs_handle_add_many. */
tecs_err_t tecs_handle_enable_many(const tecs_handle_t *h, const tecs_entity_t *ids,
                                   int32_t n, bool enable, int32_t *done);

/**
 * The batched lookup: out[i] = the value of comp on ids[i] for i < n, or
 * NULL where the entity is dead, pending or lacks comp (an entity that
 * inherits comp, tinyecs/relation.h's IsA, gets its base's, as from
 * tecs_get; a handle reads own values only). The slots of many
 * ids and then their values are fetched ahead of use, so the cache misses
 * of a batch overlap: call it on batches of a few hundred ids and read the
 * values right after. Pointers are valid as tecs_get's. Sparse components
 * are read too (their entries fetched ahead the same way). Callbacks and
 * threads: a read, allowed where tecs_get is.
 * @return TECS_OK (NULL entries are no error); TECS_EINVAL (NULL world, n
 * < 0, ids or out NULL with n > 0, comp a tag), TECS_ENOCOMP, TECS_EACCESS
 * (a worker's system does not read comp), TECS_EBUSY (closed world).
 */
tecs_err_t tecs_get_many(tecs_world_t *world, tecs_comp_t comp, const tecs_entity_t *ids,
                         int32_t n, const void **out);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_HANDLE_H */
/* ---- include/tinyecs/index.h ---- */
/*
** tinyecs/index.h — field indexes, where filters and caches (the index
** add-on; docs/indexes.md). Conventions as tinyecs.h's.
*/
#ifndef TINYECS_INDEX_H
#define TINYECS_INDEX_H



#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Field indexes and where                                              */
/* ==================================================================== */

/*
** A field index maps the value of one field of one component to the
** entities that have it, for every entity with the component whatever its
** archetype. It is kept true by tecs_add / tecs_remove / tecs_set /
** tecs_destroy / tecs_modified, births, and by writes through a write term
** of a query iteration (re-keyed when the iterator leaves the rows). A
** write through a raw pointer (tecs_get_mut, a pointer kept past its
** iteration) must be followed by tecs_modified. An index keeps the values
** of disabled components (enableable ones): a where iteration skips them
** through its query's toggle terms, as every iteration does, and the
** lookups and counts of the index see them.
**
** An index over a value relation's pairs (tinyecs/relation.h) names the
** pairs' target in desc.target: it holds each entity's value of its
** (comp, target) pair, or with TECS_WILDCARD, for an exclusive relation,
** of its one pair. It follows the pair calls, a target's cleanup,
** snapshot loads and deltas; while its target is dead it is empty and
** stays valid (docs/relationships.md, "Indexes over a relation's value").
**
** Float keys (float and double fields) are compared as doubles; -0 equals
** +0. A NaN key is stored and is matched only by `!=` and by `not`: NaN is
** neither equal to, below, above nor between anything, as in IEEE
** comparisons; so a unique index holds any number of NaN keys (two NaN
** never collide). NaN as a filter or lookup key is refused (TECS_EINVAL).
*/

typedef struct tecs_index_t tecs_index_t;

/** Index kinds. */
typedef enum tecs_index_kind_t {
    TECS_INDEX_HASH = 0,        /* == != in                                   */
    TECS_INDEX_ORDERED,         /* == != < <= > >= between in; key order     */
    TECS_INDEX_SPATIAL          /* radius and box over two float fields      */
} tecs_index_kind_t;

/** The C type of an indexed field. An enum is indexed as its integer type. */
typedef enum tecs_key_type_t {
    TECS_KEY_I8 = 1, TECS_KEY_I16, TECS_KEY_I32, TECS_KEY_I64,
    TECS_KEY_U8, TECS_KEY_U16, TECS_KEY_U32, TECS_KEY_U64,
    TECS_KEY_FLOAT, TECS_KEY_DOUBLE,
    TECS_KEY_STR,               /* const char *: the index copies the string; */
                                /* NULL is a key, below every string          */
    TECS_KEY_CHARS              /* char[N] (N = size, <= TECS_MAX_KEY_CHARS): */
                                /* up to the first NUL or N bytes             */
} tecs_key_type_t;

#define TECS_MAX_KEY_CHARS 1024

/** An index description; zero means default where a default exists. */
typedef struct tecs_index_desc_t {
    tecs_comp_t comp;           /* the component                              */
    tecs_index_kind_t kind;
    tecs_key_type_t type;       /* spatial: TECS_KEY_FLOAT                    */
    size_t offset;              /* the field (spatial: x)                     */
    size_t offset_y;            /* spatial: the y field                       */
    size_t size;                /* TECS_KEY_CHARS: N                          */
    float cell_size;            /* spatial: grid cell side, > 0               */
    bool unique;                /* at most one entity per key (not spatial)   */
    const char *field;          /* instead of type and offset: the field by
                                   name (a dotted path for nested ones) in
                                   the component's description               */
    const char *field_y;        /* spatial, with field: the y field by name   */
    tecs_entity_t target;       /* 0 for a component; for a relation, whose
                                   value it indexes, the pairs' target: a
                                   live entity t (each entity's value of
                                   (comp, t)) or TECS_WILDCARD (an exclusive
                                   relation's one pair, whatever its target) */
} tecs_index_desc_t;

/** A key for lookups and filters; make one with tecs_key_int / _uint /
 *  _real / _str. Its class must fit the index: int for signed fields,
 *  uint for unsigned ones, real for float and double, str for strings. */
typedef struct tecs_key_t {
    int32_t cls;                /* TECS_KEYC_*                                */
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
    } v;
} tecs_key_t;

enum { TECS_KEYC_INT = 1, TECS_KEYC_UINT, TECS_KEYC_REAL, TECS_KEYC_STR };

/** A key for a signed integer (or enum) index. */
static inline tecs_key_t tecs_key_int(int64_t i)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_INT;
    k.v.i = i;
    return k;
}

/** A key for an unsigned integer index. */
static inline tecs_key_t tecs_key_uint(uint64_t u)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_UINT;
    k.v.u = u;
    return k;
}

/** A key for a float or double index. */
static inline tecs_key_t tecs_key_real(double d)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_REAL;
    k.v.d = d;
    return k;
}

/** A key for a string index (NULL is the NULL key). */
static inline tecs_key_t tecs_key_str(const char *s)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_STR;
    k.v.s = s;
    return k;
}

/**
 * Create an index and fill it with every entity that has the component now.
 * It follows every change from then on. A burst of sets of a non-unique
 * index's field (over n/16 entries of an ordered index, n/4 of a hash or
 * spatial one, since its last use, no cache depending on it) is left to one
 * rebuild at its next use, which then costs O(n) and may fail with
 * TECS_ENOMEM; see docs/indexes.md.
 * @return the index, owned by the world (freed with it or by
 * tecs_index_free); NULL on error: TECS_EINVAL (NULL desc, bad kind or type,
 * a field that does not fit inside the component, a tag, cell_size <= 0,
 * unique spatial; a target for a component that is not a relation, none
 * for a relation, a tag relation or ChildOf, TECS_WILDCARD for a relation
 * that is not exclusive), TECS_EDEAD (the target is not alive),
 * TECS_ENOCOMP, TECS_EEXIST (unique, and two entities already share a
 * key), TECS_ENOMEM. A unique index over a relation's value makes
 * tecs_pair_set and tecs_pair_add refuse a taken key (TECS_EEXIST,
 * nothing changed).
 * A field given by name (desc.field, and desc.field_y for a spatial index)
 * takes its offset and key type from the description: i8..u64 give the
 * integer key of their type, bool u8, entity u64, f32 float, f64 double,
 * string TECS_KEY_STR. TECS_EINVAL when the component has no description,
 * no field has the name, the field is an array or a nested component, or
 * type, offset, offset_y or size are given beside the name. The index does
 * not keep the name pointers.
 */
tecs_index_t *tecs_index_new(tecs_world_t *world, const tecs_index_desc_t *desc);

/**
 * Free an index. NULL does nothing. Filters that name it fail from then on
 * (TECS_ENOENT). @return TECS_OK, or TECS_EBUSY with nothing freed while a
 * cache uses it (free the cache first) or while an iteration over a filter
 * naming it is open.
 */
tecs_err_t tecs_index_free(tecs_index_t *index);

/** @return the entities in the index (every entity with the component),
 *  or -1 on error: NULL, TECS_ENOMEM while rebuilding after a failed
 *  update, TECS_EBUSY (see the conventions). */
int32_t tecs_index_count(tecs_index_t *index);

/**
 * The entity with this key in a unique index.
 * @return it, or 0: TECS_ENOENT (no such key), TECS_EINVAL (not a unique
 * index, wrong key class, NaN), TECS_ENOMEM.
 */
tecs_entity_t tecs_index_lookup(tecs_index_t *index, tecs_key_t key);

/** Comparisons for tecs_filter_cmp. */
typedef enum tecs_cmp_t {
    TECS_EQ = 0, TECS_NE, TECS_LT, TECS_LE, TECS_GT, TECS_GE
} tecs_cmp_t;

/** A condition in a filter: its handle, or -1 after an error. */
typedef int32_t tecs_cond_t;

/**
 * Create an empty filter (it matches every entity until a condition is
 * added). Conditions are added with tecs_filter_cmp / _between / _in /
 * _radius / _box and combined with tecs_filter_and / _or / _not; the last
 * condition made is the filter's root unless tecs_filter_root says
 * otherwise. The first error while building is
 * kept (tecs_filter_error) and makes every use of the filter fail with it.
 * Building allocates per condition, never per entity.
 * @return the filter, owned by the caller (tecs_filter_free; the world frees
 * what is left); NULL when out of memory. The first index or filter of a
 * world also sets up the world's small index registry, kept until it is freed.
 */
tecs_filter_t *tecs_filter_new(tecs_world_t *world);

/** Free a filter; NULL does nothing. Never refused: it is freed at once or,
 *  while an iteration over it is open, when that iteration ends (it must
 *  not be used again either way). */
void tecs_filter_free(tecs_filter_t *filter);

/**
 * Empty a filter for another query: its conditions, keys, order and
 * building error go, as if it were new; its memory stays. A filter reset
 * and built again for every search (one query per entity) allocates
 * nothing once it has held the largest of them. Handles of the conditions
 * made before are void (the next condition is 0 again).
 * @return TECS_OK; TECS_EINVAL (NULL); TECS_EBUSY while an iteration over
 * the filter is open (nothing changed), or where building a filter is
 * refused (the world closed: freed, reset, in its allocator, a worker).
 * Callbacks: allowed wherever its conditions may be built, every callback
 * included (an each-function of an iteration over this very filter gets
 * TECS_EBUSY).
 */
tecs_err_t tecs_filter_reset(tecs_filter_t *filter);

/** The first error met while building the filter (TECS_OK if none). */
tecs_err_t tecs_filter_error(const tecs_filter_t *filter);

/**
 * Compare the index's key with key. Ordered indexes take every comparison;
 * hash indexes take TECS_EQ and TECS_NE (TECS_LT, _LE, _GT, _GE and
 * tecs_filter_between on a hash index are TECS_EINVAL). TECS_NE means the
 * same on both: the entities that have the component and whose key differs
 * from key (a NaN key differs from every key); unlike tecs_filter_not of
 * TECS_EQ, an entity without the component does not match. A hash index
 * drives TECS_NE by reading all its entries: O(n), as an ordered index does.
 * @return the condition, or -1 (TECS_EINVAL: wrong kind, class or NaN;
 * TECS_EWORLD: index of another world; TECS_ENOMEM).
 */
tecs_cond_t tecs_filter_cmp(tecs_filter_t *filter, tecs_index_t *index, tecs_cmp_t cmp,
                            tecs_key_t key);

/** lo <= key <= hi on an ordered index; lo > hi matches nothing.
 *  @return as tecs_filter_cmp. */
tecs_cond_t tecs_filter_between(tecs_filter_t *filter, tecs_index_t *index, tecs_key_t lo,
                                tecs_key_t hi);

/** key is one of n keys (copied; repeats are harmless), hash or ordered;
 *  n = 0 matches nothing. A hash index drives it by one probe per key.
 *  @return as tecs_filter_cmp. */
tecs_cond_t tecs_filter_in(tecs_filter_t *filter, tecs_index_t *index, int32_t n,
                           const tecs_key_t *keys);

/** Spatial: the point is within distance r of (x, y) (inclusive): the
 *  circle and the test of tecs_index_near, which refuses the same circles.
 *  @return as tecs_filter_cmp; TECS_EINVAL also for x or y NaN or
 *  infinite, r negative or NaN. */
tecs_cond_t tecs_filter_radius(tecs_filter_t *filter, tecs_index_t *index, float x, float y,
                               float r);

/** Spatial: x0 <= x <= x1 and y0 <= y <= y1; an infinite bound leaves its
 *  side open, and x0 > x1 or y0 > y1 matches nothing. A point with a NaN
 *  coordinate is in no box. @return as tecs_filter_cmp; TECS_EINVAL also
 *  for a NaN bound. */
tecs_cond_t tecs_filter_box(tecs_filter_t *filter, tecs_index_t *index, float x0, float y0,
                            float x1, float y1);

/**
 * The entities of a spatial index whose point is within distance r of
 * (x, y), inclusive: the test of tecs_filter_radius, without a filter, a
 * query or an iteration. It allocates nothing and writes nothing but out,
 * so a parallel system's worker may call it (and a split's part).
 * The circle: x and y finite, r >= 0, r infinite included. A point is in
 * it when (px - x)^2 + (py - y)^2 <= r^2, in doubles (no finite input
 * overflows there): an infinite r takes every point, infinite ones too;
 * a point with a NaN coordinate is in no circle.
 * The first min(n, cap) go to out[0..), in the index's grid order: cells
 * by increasing x, then y, each cell's points in the index's own order
 * (which follows the history of changes: the same changes give the same
 * order); when the circle covers more grid cells than the index has
 * points, in the index's entry order. Places of out (and of xy) from n
 * up to cap may be written too, never at or past cap. Cost: O(cells +
 * points in them), the cells never more than the index's points.
 * @return n, the number of such entities (call again with cap >= n for
 * all of them), or -1 on error: TECS_EINVAL (not a spatial index, r
 * negative or NaN, x or y NaN or infinite, cap negative, out NULL with
 * cap > 0), TECS_ENOMEM (rebuilding the index after a burst of changes),
 * TECS_EBUSY (the world is closed: freed, reset, in its allocator). NULL
 * index: -1.
 * Callbacks: allowed from every callback (observers, hooks, systems,
 * iterations). From a worker (while a parallel system, a concurrent wave
 * or a split runs) it records no error (the world is the workers' to
 * read): it returns -1 alone; an index left stale by a burst is rebuilt
 * before the workers start, and stays stale (-1) only if that rebuild ran
 * out of memory.
 */
int32_t tecs_index_near(tecs_index_t *index, float x, float y, float r, tecs_entity_t *out,
                        int32_t cap);

/**
 * tecs_index_near that also hands out each entity's point: xy[2 * i] and
 * xy[2 * i + 1] are the x and y the index holds for out[i] (the fields'
 * values when the index last followed a change, so the component's own
 * values while every write goes through a tracked path), so a search that
 * needs only the neighbours' positions reads nothing else. xy may be NULL
 * (then it is tecs_index_near); otherwise it has room for 2 * cap floats.
 * Cost: O(cells + points in them), no allocation, no lookup of a row.
 * @return as tecs_index_near, whose errors and callback rules it shares.
 */
int32_t tecs_index_near_xy(tecs_index_t *index, float x, float y, float r,
                           tecs_entity_t *out, float *xy, int32_t cap);

/** Both conditions. @return the new condition, or -1 (TECS_EINVAL for a
 *  bad handle). */
tecs_cond_t tecs_filter_and(tecs_filter_t *filter, tecs_cond_t a, tecs_cond_t b);

/** Either condition. @return as tecs_filter_and. */
tecs_cond_t tecs_filter_or(tecs_filter_t *filter, tecs_cond_t a, tecs_cond_t b);

/** Not the condition (an entity without the indexed component matches
 *  `not`: it matches no comparison). @return as tecs_filter_and. */
tecs_cond_t tecs_filter_not(tecs_filter_t *filter, tecs_cond_t a);

/** Make cond the root of the filter. @return TECS_OK or TECS_EINVAL. */
tecs_err_t tecs_filter_root(tecs_filter_t *filter, tecs_cond_t cond);

/**
 * Hand results out in the key order of an ordered index (desc: descending),
 * ties by entity slot. Without it the order is the query's: archetype
 * creation order, then chunk, then row. index NULL goes back to that.
 * @return TECS_OK, TECS_EINVAL (not an ordered index), TECS_EWORLD.
 */
tecs_err_t tecs_filter_order(tecs_filter_t *filter, tecs_index_t *index, bool desc);

/** @return true if the entity is alive and matches the filter (the query
 *  is not consulted); false otherwise and on error (the filter's error,
 *  TECS_ENOENT for a freed index): the last error tells the two apart. */
bool tecs_filter_test(tecs_filter_t *filter, tecs_entity_t entity);

/**
 * A where: tecs_iter with .query and .where (tecs_iter_desc_t) iterates the
 * entities that match the query and the filter. Each tecs_iter_next step
 * hands out a run of rows of one chunk (often a single row), with the
 * query's fields, exactly like a query's iteration. The result set is
 * taken when the iteration starts; writes through write terms are
 * reported (and re-key indexes) step by step.
 * Read-only queries: when no term of the query is TECS_WRITE (every term
 * TECS_READ or without a value), it has no toggle or change terms and the
 * iteration runs forward, a step instead hands out up to 64 results of
 * one archetype (fewer for large components) as gathered copies:
 * it.entities and each field point to copies in the filter's own memory,
 * made at the step, in the same order as otherwise. They are valid until
 * the next step or the end of the iteration, show the values as they were
 * at the step (a later tecs_set of a result is not seen in them), and must
 * not be written through (nor kept: they are not the entity's storage;
 * tecs_get gives that). tecs_field_is_set answers as for the archetype.
 * Costs: hash equality
 * O(1 + k), an ordered range O(log n + k), spatial O(cells + k), plus
 * O(k log k) to put results in archetype order (none in key order from the
 * index that drives it); a filter no index can drive (a lone `not`) scans
 * the query. On error (bad filter: its error; a filter of another world:
 * TECS_EWORLD; one being iterated: TECS_EBUSY; out of memory) the
 * iteration is empty and the world's last error says why; it is TECS_OK
 * when the iteration starts, empty or not.
 * Ownership: the filter is busy until the iteration ends (tecs_filter_free
 * meanwhile frees it when the iteration ends); so is every index it names
 * (tecs_index_free refuses), and the query (tecs_query_free refuses).
 */

/** Orders a cache: < 0 if a comes first. Reads components with tecs_get. */
typedef int (*tecs_order_fn)(tecs_world_t *world, tecs_entity_t a, tecs_entity_t b,
                             void *ctx);

/** An entity entered or left a cache. Runs with the world deferred. */
typedef void (*tecs_member_fn)(tecs_world_t *world, tecs_entity_t entity, void *ctx);

/** A cached result set. */
typedef struct tecs_cache_desc_t {
    tecs_query_t *query;        /* required; busy until the cache is freed    */
    const tecs_filter_t *filter;/* optional; copied                           */
    tecs_order_fn order;        /* optional; ties should fall back to the id  */
    tecs_member_fn on_enter;    /* optional                                   */
    tecs_member_fn on_leave;    /* optional                                   */
    void *ctx;                  /* passed to the three callbacks              */
} tecs_cache_desc_t;

/**
 * Create a cached result set: the entities matching the query and the
 * filter, kept up to date as entities are born, die, gain or lose
 * components and as indexed fields change, one entity at a time, never by
 * re-running the query. With `order` it stays sorted, also when a value of
 * a with-term component changes through a tracked path (tecs_set,
 * tecs_modified, a write term of any iteration, the cache's own included):
 * a change while an iteration is open re-sorts the cache when the last open
 * iteration ends, or before the cache is next read, whichever comes first.
 * Without `order` the order is arrival order, a leaving entity's place taken
 * by the last one. The query is busy (tecs_query_free refuses) until the
 * cache is freed.
 * on_enter / on_leave run when an entity enters or leaves (not for the
 * entities present at creation).
 * @return the cache, owned by the world until tecs_cache_free; NULL on error
 * (TECS_EINVAL, TECS_EWORLD, the filter's error, TECS_ENOMEM).
 */
tecs_cache_t *tecs_cache_new(tecs_world_t *world, const tecs_cache_desc_t *desc);

/** Free a cache (and its copy of the filter). @return TECS_OK (NULL does
 *  nothing), or TECS_EBUSY with nothing freed while it is being iterated
 *  or from its own order function.
 *  From a cache's on_enter / on_leave (its own or another's) it returns
 *  TECS_OK and the free takes effect once the callback returns; the cache
 *  gets no more events meanwhile. Either way the handle is dead after
 *  TECS_OK. */
tecs_err_t tecs_cache_free(tecs_cache_t *cache);

/** @return the entities in the cache, O(1); -1 on error: NULL, TECS_ENOMEM
 *  (a cache whose update failed for lack of memory is rebuilt on use), the
 *  filter's error (a freed index: TECS_ENOENT), TECS_EBUSY. */
int32_t tecs_cache_count(tecs_cache_t *cache);

/**
 * A cache's iteration: tecs_iter with .cache (tecs_iter_desc_t) hands out
 * the cache in its order, with the query's fields; O(results). The set is
 * taken when the iteration starts, the world is deferred meanwhile, and
 * the cache is busy (a nested iteration of it, or its free, is
 * TECS_EBUSY). On error (TECS_EBUSY while it is already iterated,
 * TECS_EWORLD for a cache of another world, TECS_ENOMEM, the filter's
 * error) the iteration is empty and the world's last error says why; it is
 * TECS_OK when the iteration starts. tecs_iter_each and tecs_iter_collect
 * take the cache's order, or in reverse read it from its end.
 */


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_INDEX_H */
/* ---- include/tinyecs/meta.h ---- */
/*
** tinyecs/meta.h — component descriptions (reflection): the name, type
** and offset of each field of a component, given at registration
** (tecs_component_desc_t.fields) and read by JSON, field indexes, snapshots
** and tools. docs/components.md.
*/
#ifndef TINYECS_META_H
#define TINYECS_META_H



#ifdef __cplusplus
extern "C" {
#endif

/**
 * Component descriptions (reflection): name, type and offset of each field,
 * given at registration and fixed from then on, so that JSON, field indexes
 * and tools read values by name. TECS_TYPE_STRING is a `char *` the value
 * owns (NUL-terminated, or NULL): its component needs copy and dtor hooks,
 * which own the strings. See docs/components.md.
 */
typedef enum tecs_type_t {
    TECS_TYPE_BOOL = 1,         /* bool                                       */
    TECS_TYPE_I8, TECS_TYPE_I16, TECS_TYPE_I32, TECS_TYPE_I64,
    TECS_TYPE_U8, TECS_TYPE_U16, TECS_TYPE_U32, TECS_TYPE_U64,
    TECS_TYPE_F32,              /* float                                      */
    TECS_TYPE_F64,              /* double                                     */
    TECS_TYPE_ENTITY,           /* tecs_entity_t                              */
    TECS_TYPE_STRING,           /* char *, owned by the value (see above)     */
    TECS_TYPE_STRUCT            /* a nested described component (.comp)      */
} tecs_type_t;

/** One field of a component description. */
struct tecs_field_t {
    const char *name;           /* unique in the component, not empty; copied */
    tecs_type_t type;
    size_t offset;              /* bytes from the start of the value          */
    int32_t count;              /* a fixed-size array of count elements;
                                   0 means 1                                  */
    tecs_comp_t comp;           /* TECS_TYPE_STRUCT: the nested component,
                                   registered and described                   */
};

/** The most fields one description may hold. */
#define TECS_MAX_FIELDS 256

/** A field for the member of struct T: TECS_MEMBER(Position, x, TECS_TYPE_F32). */
#define TECS_MEMBER(T, member, type_)                                       \
    { #member, (type_), offsetof(T, member), 1, 0 }

/** An array member of T, its count from sizeof: float v[4] gives 4. */
#define TECS_MEMBER_ARRAY(T, member, type_)                                 \
    { #member, (type_), offsetof(T, member),                                \
      (int32_t)(sizeof(((T *)0)->member) / sizeof(((T *)0)->member[0])), 0 }

/** A member of T that is a nested described component comp_. */
#define TECS_MEMBER_STRUCT(T, member, comp_)                                \
    { #member, TECS_TYPE_STRUCT, offsetof(T, member), 1, (comp_) }

/** An array member of T whose elements are the described component comp_. */
#define TECS_MEMBER_STRUCT_ARRAY(T, member, comp_)                          \
    { #member, TECS_TYPE_STRUCT, offsetof(T, member),                       \
      (int32_t)(sizeof(((T *)0)->member) / sizeof(((T *)0)->member[0])), (comp_) }

/** Register the C type T under its own name with the fields that follow:
 *  TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
 *  TECS_MEMBER(Position, y, TECS_TYPE_F32)). */
#define TECS_COMPONENT_FIELDS(world, T, ...)                                \
    tecs_component_new((world), &(tecs_component_desc_t){                   \
        .name = #T, .size = sizeof(T), .align = _Alignof(T),                \
        .fields = (const tecs_field_t[]){ __VA_ARGS__ },                    \
        .nfields = (int32_t)(sizeof((const tecs_field_t[]){ __VA_ARGS__ })  \
                             / sizeof(tecs_field_t)) })

/** A component's fields in registration order, owned by the world, and
 *  *count (may be NULL); NULL with *count 0 if unknown or undescribed.
 *  Records no error, calls nothing: allowed in every callback. */
const tecs_field_t *tecs_component_fields(const tecs_world_t *world, tecs_comp_t comp,
                                          int32_t *count);

/** A field by name; a dotted path ("pos.x") goes into nested components,
 *  *offset (may be NULL) gets its offset in the outer value. NULL if not
 *  found. Records no error, calls nothing. */
const tecs_field_t *tecs_component_field(const tecs_world_t *world, tecs_comp_t comp,
                                         const char *path, size_t *offset);

/** The name of a field type as text ("f32", "entity", "struct", ...), or
 *  "?" for a value that is not a tecs_type_t. */
const char *tecs_type_name(tecs_type_t type);

/** The size of one element of a field type; 0 for TECS_TYPE_STRUCT (its
 *  size is the nested component's) and for a value that is not a type. */
size_t tecs_type_size(tecs_type_t type);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_META_H */
/* ---- include/tinyecs/observer.h ---- */
/*
** tinyecs/observer.h — observers of component and query events (the
** observer add-on; docs/observers.md). Lifecycle hooks are in tinyecs.h.
*/
#ifndef TINYECS_OBSERVER_H
#define TINYECS_OBSERVER_H



#ifdef __cplusplus
extern "C" {
#endif

/** An observer id; 0 is never an observer. Ids are not reused. */
typedef uint32_t tecs_observer_t;

/** An observer description. */
typedef struct tecs_observer_desc_t {
    tecs_event_kind_t event;    /* required                                   */
    tecs_comp_t comp;           /* ADD / SET / REMOVE: the component; else 0  */
    const tecs_term_t *terms;   /* narrowing terms (ADD / SET / REMOVE, may be
                                   none) or the watched terms (ENTER / LEAVE) */
    int32_t term_count;
    tecs_query_t *query;        /* or take the terms of this query (copied)   */
    tecs_observer_fn callback;  /* required                                   */
    void *ctx;
    bool resource;              /* watch the world's resource of comp instead
                                   of entities: fires with entity 0; ADD / SET
                                   / REMOVE only, no terms                    */
} tecs_observer_desc_t;

/**
 * Create an observer. For ADD / SET / REMOVE of comp, it fires when the
 * entity, at that moment, matches the terms (for REMOVE: while it still has
 * the component). ENABLE / DISABLE of an enableable comp fire when
 * tecs_enable changes its state (the terms narrow as for ADD). For ENTER /
 * LEAVE it fires when an entity starts / stops matching the terms: by birth,
 * destruction, add or remove, and by tecs_enable of a toggle term's
 * component (ENTER before ENABLE, DISABLE before LEAVE). Observers fire in
 * creation order; every event fires when its change is applied (at once, or
 * at the flush for queued changes, in the order the changes were made).
 * Move-related order: ENTER / LEAVE fire when the entity changes archetype,
 * after the values of an add are constructed and before its ADD events, and
 * after the REMOVE events of a remove or destroy.
 * When the world is freed, every live entity is announced as destroyed
 * (REMOVE, then LEAVE), archetype by archetype in creation order, rows in
 * order; changes queued then are dropped.
 * With .resource it fires for the world's resource of comp only (entity 0),
 * when tecs_resource_set / _remove / _modified change it, and never for
 * entities; an observer without it never fires for the resource.
 * @return its id, or 0 on error: TECS_EINVAL (bad event, missing callback,
 * ENABLE / DISABLE of a component that is not enableable or with .resource,
 * comp given for ENTER / LEAVE or missing for the others, no terms for ENTER /
 * LEAVE, terms and query both given, SET of a tag, bad terms as tecs_query_new,
 * .resource with ENTER / LEAVE or with terms),
 * TECS_ENOCOMP, TECS_EWORLD (query of another world), TECS_EBUSY (while the
 * world is being freed), TECS_ENOMEM.
 */
tecs_observer_t tecs_observer_new(tecs_world_t *world, const tecs_observer_desc_t *desc);

/**
 * Remove an observer; it fires no more, even for the event being delivered.
 * @return TECS_OK, or TECS_ENOENT (unknown or removed already).
 */
tecs_err_t tecs_observer_free(tecs_world_t *world, tecs_observer_t observer);

/** Live observers of the world. */
int32_t tecs_observer_count(const tecs_world_t *world);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_OBSERVER_H */
/* ---- include/tinyecs/relation.h ---- */
/*
** tinyecs/relation.h — relationships and hierarchies: pairs of a relation
** and a target entity, the built-in ChildOf, cleanup when a target dies
** (the relation add-on; docs/relationships.md).
*/
#ifndef TINYECS_RELATION_H
#define TINYECS_RELATION_H



#ifdef __cplusplus
extern "C" {
#endif

/*
** A relationship pairs a relation with a target entity: (ChildOf, parent),
** (Likes, bob), (Owes, bob) = 10. A relation is a component id registered
** with tecs_relation_new (a tag, or with a plain value: memcpy'd, no
** hooks); an entity may hold several targets of one relation unless the
** relation is exclusive. ChildOf (tecs_childof) is built in: an
** exclusive tag relation, a tag in the child's archetype (queries see who
** has a parent) with the links beside the rows, so a child's parent is
** read in O(1); destroying a parent destroys its subtree. User relations keep their pairs outside every archetype:
** adding and removing one moves no row. docs/relationships.md has the
** storage and its costs.
**
** A relation's id is refused by tecs_add, tecs_set, tecs_remove and births
** (TECS_EINVAL: use the pair calls); tecs_has and a query's term of
** ChildOf tell whether an entity has a parent.
**
** Deferral: while the world is deferred (an iteration, a system, a
** callback) the changes queue and apply in order with every other queued
** change; a change that can no longer apply then is dropped: counted
** (tecs_dropped_changes) when it no longer fits (a cycle made by an
** earlier queued change), silently when its entity or target died
** meanwhile (a stale change, as any queued change of a dead entity). A
** delayed birth (tecs_delayed_new) is no entity for a pair change until
** tecs_delayed_apply_new makes it (TECS_EDEAD). The reads (has, get, target, the walks) are
** allowed everywhere but inside the world's allocator; they see the world
** as it is, queued changes not applied. From lifecycle hooks the changes
** queue as every structural change does.
**
** A field index (tinyecs/index.h) indexes a value relation's pairs of one
** target (tecs_index_desc_t.target; TECS_WILDCARD for an exclusive
** relation's one pair): a unique one makes tecs_pair_set and
** tecs_pair_add refuse a taken key with TECS_EEXIST.
*/

/* TECS_WILDCARD (tinyecs.h) in a pair call: any target (and, in
** tecs_pair_has and tecs_sources, any relation). */

/** What happens to the sources of a pair when its target is destroyed. */
typedef enum tecs_cleanup_t {
    TECS_CLEANUP_REMOVE = 0,    /* the pair goes (the default)                */
    TECS_CLEANUP_DESTROY,       /* the source is destroyed too (ChildOf's)    */
    TECS_CLEANUP_REFUSE         /* the target's destroy fails (TECS_EBUSY)    */
} tecs_cleanup_t;

/** A relation description. */
typedef struct tecs_relation_desc_t {
    tecs_component_desc_t component; /* name (required), size (0: a tag),
                                   align, id, fields as any component's; no
                                   hooks, table storage, not enableable, no
                                   row ticks                                  */
    bool exclusive;             /* one target at most: a new one replaces it  */
    tecs_cleanup_t cleanup;     /* when a target is destroyed                 */
    bool no_clone;              /* tecs_clone leaves a source's pairs of this
                                   relation out (false: the clone has them)   */
} tecs_relation_desc_t;

/**
 * Register a relation. @return its id (a component id), or 0:
 * TECS_EINVAL (a bad desc: hooks, sparse storage, enableable, row ticks),
 * then as tecs_component_new.
 */
tecs_comp_t tecs_relation_new(tecs_world_t *world, const tecs_relation_desc_t *desc);

/**
 * The built-in ChildOf relation of the world, registered (as the tag
 * component "ChildOf") at the first call: exclusive, cleanup
 * TECS_CLEANUP_DESTROY (destroying a parent destroys its subtree, children
 * first). A change that would make an entity its own ancestor is refused
 * (TECS_ECYCLE).
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "ChildOf" that is not it), TECS_ENOMEM.
 */
tecs_comp_t tecs_childof(tecs_world_t *world);

/**
 * The world's prefab tag, registered (as the hidden tag "Prefab",
 * tecs_component_desc_t.hidden) at the first call, or adopted when a
 * snapshot load registered it. An entity with it is a prefab: every
 * query, cache, system, where and observer skips it unless a term names
 * the tag (TECS_WITH: only prefabs; TECS_OPTIONAL: prefabs too). Its
 * lifecycle hooks still run. docs/prefabs.md.
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "Prefab" that is not a hidden tag), TECS_EBUSY (in a worker, before
 * it exists), TECS_ENOMEM.
 */
tecs_comp_t tecs_prefab(tecs_world_t *world);

/**
 * The world's IsA relation, registered (as the tag relation "IsA") at the
 * first call, or adopted when a snapshot load registered it: exclusive, a
 * tag, cleanup TECS_CLEANUP_REFUSE (a base with instances is not
 * destroyed: TECS_EBUSY). tecs_pair_add(w, e, tecs_isa(w), base) makes e
 * inherit from base: tecs_get and the terms marked .inherited read base's
 * value of every table component e has none of (down the chain of bases,
 * a variant's own base next), until e sets its own (an override);
 * tecs_has, tecs_get_mut and plain terms see e's own only. Each base with
 * instances takes a tag id ("IsA.<n>", kept in its instances' archetype;
 * given back when it dies). A pair that would make e its own base, through
 * any chain, is refused (TECS_ECYCLE). docs/prefabs.md.
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "IsA" that is not it), TECS_EBUSY (in a worker, before it exists),
 * TECS_ENOMEM.
 */
tecs_comp_t tecs_isa(tecs_world_t *world);

/**
 * Make an instance of prefab (an entity with the tecs_prefab tag): a clone
 * of it (tecs_clone: table, sparse and enableable components with their
 * states, values through copy hooks, its pairs but those of .no_clone
 * relations) born in one step into its archetype without the Prefab tag,
 * so queries see it; and a copy of each of its ChildOf descendants (their
 * Prefab tags left out too), parented to the copy of its parent in the
 * same sibling order. A copy's pair whose target is in the prefab's
 * subtree (the prefab included) points at the target's copy; other
 * targets stay. The instance is a root: it takes no parent the prefab has.
 * Events as births: each copy's ADD and SET events, then its sparse
 * components' and pairs'. Queued while deferred (the id handed out at once
 * as TECS_ENTITY_PENDING; made from the prefab as it is when the queue
 * applies, cancelled if it is gone or no prefab then). Callbacks that run
 * meanwhile (hooks, observers) may call what they may call during
 * tecs_clone (docs/errors.md). docs/prefabs.md.
 * @return the instance's root, or 0: TECS_EINVAL (NULL world, prefab not a
 * prefab), TECS_EDEAD (prefab dead, stale, 0, a delayed birth; pending
 * while the world is not deferred), TECS_EEXIST (a unique index holds a
 * copied key), TECS_ENOMEM and TECS_ELIMIT (nothing changed).
 */
tecs_entity_t tecs_instantiate(tecs_world_t *world, tecs_entity_t prefab);

/**
 * n instances of prefab at once, each with its own copy of the subtree
 * (as tecs_instantiate); their roots into out if not NULL (n ids). n 0
 * makes nothing. A prefab with no children is one reserve and its rows
 * filled at once, as tecs_clone_bulk.
 * @return TECS_OK, TECS_EINVAL (also n < 0), then as tecs_instantiate;
 * a failure makes none.
 */
tecs_err_t tecs_instantiate_bulk(tecs_world_t *world, tecs_entity_t prefab, int32_t n,
                                 tecs_entity_t *out);

/** True if comp is a relation of the world (ChildOf included, once made). */
bool tecs_is_relation(const tecs_world_t *world, tecs_comp_t comp);

/** The level a component stands for if it is one of ChildOf's level tags
 *  ("ChildOf.1", "ChildOf.2", ...: the tags the add-on puts in a child's
 *  archetype so that a cascade query walks them by level), else 0. A
 *  world's archetypes list them; they follow the hierarchy and take no
 *  direct change. */
int32_t tecs_relation_level(const tecs_world_t *world, tecs_comp_t comp);

/** The base whose tag comp is, if it is one of IsA's base tags ("IsA.1",
 *  "IsA.2", ...: the add-on puts a base's tag in the archetype of every
 *  entity that inherits from it), else 0. Like the level tags they follow
 *  the pairs and take no direct change. */
tecs_entity_t tecs_relation_base(const tecs_world_t *world, tecs_comp_t comp);

/** A relation's cleanup policy (TECS_CLEANUP_REMOVE for an unknown id). */
tecs_cleanup_t tecs_relation_cleanup(const tecs_world_t *world, tecs_comp_t rel);

/**
 * Add the pair (rel, target) to entity. An exclusive relation's pair
 * replaces the entity's current one (ChildOf: reparenting). A value
 * relation's new value is zero-filled; one already there keeps its value.
 * Queued while deferred.
 * @return TECS_OK (also when the pair is there), TECS_EINVAL (NULL world,
 * rel not a relation, target TECS_WILDCARD), TECS_EDEAD (entity or target
 * not alive), TECS_ECYCLE (ChildOf: target is entity or one of its
 * descendants; nothing changed), TECS_EEXIST (a unique index over rel's
 * values holds the new value's key for another entity; nothing changed),
 * TECS_ENOMEM (nothing changed), TECS_EBUSY (the world is being freed).
 */
tecs_err_t tecs_pair_add(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                         tecs_entity_t target);

/**
 * Set the value of the pair (rel, target) of entity to a copy of *value,
 * adding the pair first if absent (as tecs_pair_add). Queued while
 * deferred (the value is copied).
 * @return as tecs_pair_add; TECS_EINVAL also for a tag relation, for
 * ChildOf, and for a NULL value.
 */
tecs_err_t tecs_pair_set(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                         tecs_entity_t target, const void *value);

/**
 * Remove the pair (rel, target) from entity; target TECS_WILDCARD removes
 * every target of rel (ChildOf: the entity becomes a root). Queued while
 * deferred.
 * @return TECS_OK, TECS_EINVAL (NULL world, rel not a relation), TECS_EDEAD,
 * TECS_ENOENT (no such pair), TECS_EBUSY (the world is being freed).
 */
tecs_err_t tecs_pair_remove(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                            tecs_entity_t target);

/** True if entity holds (rel, target). rel or target may be TECS_WILDCARD
 *  (any relation, any target). False for dead ids and unknown relations. */
bool tecs_pair_has(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                   tecs_entity_t target);

/**
 * The value of entity's pair (rel, target): valid until the next change of
 * a pair of rel (or, for ChildOf, of the entity's archetype). NULL if the
 * pair is absent, rel is a tag, or an argument is bad (no error is
 * recorded).
 */
const void *tecs_pair_get(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                          tecs_entity_t target);

/**
 * The i-th target of rel held by entity (0 first; the order in which the
 * pairs were added), or 0 past the last. tecs_pair_target(w, e,
 * tecs_childof(w), 0) is e's parent (0 for a root), in O(1).
 */
tecs_entity_t tecs_pair_target(const tecs_world_t *world, tecs_entity_t entity,
                               tecs_comp_t rel, int32_t i);

/** Pairs of rel that entity holds (rel TECS_WILDCARD: of every relation);
 *  0 for dead ids. */
int32_t tecs_pair_count(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel);

/**
 * A walk over the world's pairs or its hierarchy. It allocates nothing and
 * holds nothing: drop it at any time. A change of the relations (a pair
 * added or removed, an entity destroyed that held or was the target of
 * one) or the start's death ends the walk: tecs_walk_next returns false
 * and sets stale. The fields below are the current step's; the rest is
 * private.
 */
typedef struct tecs_walk_t {
    tecs_entity_t entity;       /* the entity reached                         */
    tecs_comp_t rel;            /* sources: the pair's relation               */
    int32_t depth;              /* tree walks: levels below the start (the
                                   start's children 1; ancestors: the parent
                                   1)                                         */
    bool stale;                 /* the walk ended because the relations
                                   changed                                    */
    const tecs_world_t *world_;
    tecs_entity_t start_;
    uint64_t stamp_;
    uint32_t at_, next_;
    int32_t kind_, limit_;
    tecs_comp_t want_;
} tecs_walk_t;

/** How tecs_tree walks. */
typedef enum tecs_tree_order_t {
    TECS_TREE_DEPTH_FIRST = 0,  /* descendants, each before its children and
                                   its children's subtrees before its next
                                   sibling                                    */
    TECS_TREE_BREADTH_FIRST,    /* descendants, level by level (each level
                                   costs a walk over the levels above it:
                                   O(subtree size x depth))                   */
    TECS_TREE_ANCESTORS         /* the parent, its parent, ... to the root    */
} tecs_tree_order_t;

/**
 * The sources of target: the entities holding a pair (rel, target), rel
 * TECS_WILDCARD for every relation. tecs_sources(w, p, tecs_childof(w)) is
 * p's children, in O(children). Each step sets entity and rel.
 */
tecs_walk_t tecs_sources(const tecs_world_t *world, tecs_entity_t target, tecs_comp_t rel);

/** A walk of entity's hierarchy (ChildOf) in the given order; entity
 *  itself is not visited. Each step sets entity and depth. */
tecs_walk_t tecs_tree(const tecs_world_t *world, tecs_entity_t entity,
                      tecs_tree_order_t order);

/** The next step of a walk: false when done, or when the relations changed
 *  since the walk began (stale is set then). Records no error. */
bool tecs_walk_next(tecs_walk_t *walk);

/** Levels above entity in its hierarchy: 0 for a root, -1 for a dead id. */
int32_t tecs_depth(const tecs_world_t *world, tecs_entity_t entity);

/** Private: TECS_PAIR_SET's call. */
tecs_err_t tecs__pair_set_sized(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                                tecs_entity_t target, const void *value, size_t size);

/** tecs_pair_set of a value of type T (a brace list or an expression, as
 *  TECS_SET): TECS_PAIR_SET(w, e, owes, bob, int32_t, 10). @return as
 *  tecs_pair_set; TECS_EINVAL when sizeof(T) is not the relation's size. */
#define TECS_PAIR_SET(world, entity, rel, target, T, ...)                   \
    tecs__pair_set_sized((world), (entity), (rel), (target), (T[1]){ __VA_ARGS__ }, sizeof(T))

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_RELATION_H */
/* ---- include/tinyecs/resource.h ---- */
/*
** tinyecs/resource.h — world resources: one value per component held by
** the world on no entity (the resource add-on; docs/resources.md).
*/
#ifndef TINYECS_RESOURCE_H
#define TINYECS_RESOURCE_H



#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Resources                                                            */
/* ==================================================================== */

/*
** A resource is a world's one value of a component, held by the world on
** no entity: the time, the input, the settings, the level. Queries, entity
** counts and the iteration of every entity do not see it. Its value is
** aligned to the component's alignment, allocated through the world's
** allocator and built and destroyed by the component's lifecycle hooks (ctor
** then copy when a set adds it, copy when a set writes over it, dtor at
** remove and at world free). The component's on_add / on_set / on_remove
** hooks and the observers made with .resource fire for it with entity 0
** (0 means the world): ADD then SET when a set adds it, SET when a set
** writes over it or tecs_resource_modified reports a write, REMOVE before
** it is destroyed. A tag (size 0) can be a resource too: it has no value.
**
** From callbacks: a resource is in no row, so tecs_resource_set, _remove
** and _modified apply at once from every callback, lifecycle hooks
** included; the hooks and observers they fire run inside the call, with
** the world deferred as in any callback. They are refused (TECS_EBUSY)
** while the world is being freed, inside its allocator, and for the
** resource whose own ctor / copy / dtor is running. Inside the resource's
** own REMOVE callbacks a remove of it returns TECS_OK (the removal is under
** way) and a set or modified of it is refused (TECS_EBUSY). A callback of
** an ADD or SET of it may remove it: the delivery stops there, and no later
** callback is handed the freed value. A set inside its own on_set runs
** on_set again, at once: guard against endless recursion as with tecs_set.
** The reads (get, get_mut, has, count) are allowed everywhere but inside the
** world's allocator, and record no error and write nothing to the world:
** several threads may read resources at once while no thread changes the
** world. When the world is freed, every entity is announced destroyed
** first, then each resource (in component id order: REMOVE, then its
** destructor), so entities' on_remove hooks can still read resources.
** Snapshots save and load resources with the world's entities.
*/

/**
 * Set the world's resource of comp to a copy of *value (its copy hook, or
 * memcpy), adding it first if absent. value may be NULL only for a tag.
 * Applies at once, also from callbacks (see above).
 * @return TECS_OK, TECS_EINVAL (NULL world, NULL value of a component with a
 * size), TECS_ENOCOMP, TECS_EBUSY (the world is being freed; the resource's
 * own lifecycle hook or removal runs), TECS_ENOMEM (nothing changed).
 */
tecs_err_t tecs_resource_set(tecs_world_t *world, tecs_comp_t comp, const void *value);

/**
 * Read the world's resource of comp. @return a pointer to its value, valid
 * until the resource is removed or the world freed (a set writes in place);
 * NULL if it is absent, comp unknown or a tag (tecs_resource_has tells a
 * tag apart), the world NULL, or inside the world's allocator. Records no
 * error and writes nothing to the world.
 */
const void *tecs_resource_get(const tecs_world_t *world, tecs_comp_t comp);

/**
 * Like tecs_resource_get, for writing. A write through the pointer is not
 * reported: call tecs_resource_modified for on_set hooks and SET observers
 * to see it (as with tecs_get_mut and tecs_modified). NULL in a worker
 * (W4 in "Threads": the workers share the resources).
 */
void *tecs_resource_get_mut(tecs_world_t *world, tecs_comp_t comp);

/** True if the world has a resource of comp (tags included). Records no
 *  error and writes nothing to the world. */
bool tecs_resource_has(const tecs_world_t *world, tecs_comp_t comp);

/**
 * Remove the world's resource of comp: its REMOVE hook and observers fire,
 * then its destructor runs and its memory is freed. Applies at once, also
 * from callbacks (see above).
 * @return TECS_OK (also from inside its own REMOVE callbacks, where the
 * removal is under way), TECS_EINVAL (NULL world), TECS_ENOCOMP, TECS_ENOENT
 * (absent), TECS_EBUSY (the world is being freed; the resource's own
 * lifecycle hook runs).
 */
tecs_err_t tecs_resource_remove(tecs_world_t *world, tecs_comp_t comp);

/**
 * Report that the resource's value was written through tecs_resource_get_mut:
 * its on_set hook and SET observers fire, at once.
 * @return TECS_OK, TECS_EINVAL (NULL world, a tag), TECS_ENOCOMP,
 * TECS_ENOENT (absent), TECS_EBUSY (the world is being freed; the
 * resource's own lifecycle hook or removal runs).
 */
tecs_err_t tecs_resource_modified(tecs_world_t *world, tecs_comp_t comp);

/** Resources the world has (0 for NULL). */
int32_t tecs_resource_count(const tecs_world_t *world);

/** Private: TECS_RESOURCE_SET's call (see TECS_SET). */
tecs_err_t tecs__resource_set_sized(tecs_world_t *world, tecs_comp_t comp, const void *value,
                                    size_t size);

/** Private: TECS_RESOURCE_GET's and TECS_RESOURCE_GET_MUT's call. */
void *tecs__resource_get_sized(const tecs_world_t *world, tecs_comp_t comp, size_t size,
                               bool write);

/** tecs_resource_set of a value of type T (a brace list or an expression,
 *  as TECS_SET): TECS_RESOURCE_SET(w, time, Time, { .delta = 0.016 }).
 *  @return as tecs_resource_set; TECS_EINVAL when sizeof(T) is not comp's
 *  size. */
#define TECS_RESOURCE_SET(world, comp, T, ...)                              \
    tecs__resource_set_sized((world), (comp), (T[1]){ __VA_ARGS__ }, sizeof(T))

/** The resource of comp as a const T pointer: NULL if absent, and when
 *  sizeof(T) is not comp's size (as tecs_resource_get, it records no
 *  error: tecs_resource_has tells the two apart). */
#define TECS_RESOURCE_GET(world, comp, T)                                   \
    ((const T *)tecs__resource_get_sized((world), (comp), sizeof(T), false))

/** The resource of comp as a T pointer, for writing (NULL as
 *  TECS_RESOURCE_GET's, and in a worker). */
#define TECS_RESOURCE_GET_MUT(world, comp, T)                               \
    ((T *)tecs__resource_get_sized((world), (comp), sizeof(T), true))


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_RESOURCE_H */
/* ---- include/tinyecs/snapshot.h ---- */
/*
** tinyecs/snapshot.h — snapshots, marks and deltas (the snapshot add-on;
** docs/snapshots.md, the format in docs/SNAPSHOT.md).
*/
#ifndef TINYECS_SNAPSHOT_H
#define TINYECS_SNAPSHOT_H


#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Snapshots                                                            */
/* ==================================================================== */

/*
** A snapshot is a whole world in bytes: its components (by name, with
** size, alignment, storage, enableable, a hash of the layout and the
** description), its
** entity slots with their generations and the free list in order, its
** archetypes with their rows, the values column by column, the enableable
** bits, the sparse components' members and values, and the resources.
** docs/SNAPSHOT.md describes the format. A loaded world holds the same
** entity ids (so ids stored in components stay valid), the same rows in
** the same order, and the next tecs_new gives the id the source world's
** would have given.
**
** Values of a component without hooks are copied as bytes, in the byte
** order of the host that saved them. A host of the other byte order turns
** them field by field when the component is registered there with a
** description (its fields: see tecs_field_t) of the saved layout and no
** string field; otherwise it refuses them (TECS_EFORMAT naming the
** component). The layout hash a load compares covers the description. A component with hooks owns memory, so its
** values are saved through its serializer (tecs_component_serializer),
** or, with a description and no serializer, field by field (strings as
** their text; a load builds each value through the hooks, whose copy
** duplicates the strings): the save refuses (TECS_EINVAL naming it) a
** component that has hooks, neither and a value to save. A serializer writes what it wants
** (little-endian, say), so serialized values are portable.
**
** From callbacks: the writer, reader, serialize, deserialize and convert
** callbacks must not call the world: every call they make is refused
** (TECS_EBUSY, "a snapshot is being saved or loaded"). A save or a load
** is refused (TECS_EBUSY) inside any callback, an iteration, a deferred
** section or a frame, and while a worker runs.
*/

/** Write n bytes somewhere. @return TECS_OK, or an error, which the save
 *  returns (the world's last error says which call failed). */
typedef tecs_err_t (*tecs_write_fn)(void *ctx, const void *data, size_t n);

/** Read exactly n bytes into data. @return TECS_OK, or an error (at the end
 *  of the input: TECS_EFORMAT), which the load returns. */
typedef tecs_err_t (*tecs_read_fn)(void *ctx, void *data, size_t n);

/** Where a serializer writes one value (tecs_snapshot_put). */
typedef struct tecs_snapshot_out_t tecs_snapshot_out_t;

/** Write *value's bytes with tecs_snapshot_put. @return TECS_OK, or an
 *  error, which stops the save. */
typedef tecs_err_t (*tecs_serialize_fn)(const void *value, tecs_snapshot_out_t *out,
                                        void *ctx);
/** Build a value at dst (raw memory) from the n bytes serialize wrote.
 *  @return TECS_OK (dst built), or an error (dst left unbuilt), which stops
 *  the load. */
typedef tecs_err_t (*tecs_deserialize_fn)(void *dst, const void *data, size_t n, void *ctx);
/** Build a value at dst (raw memory) from a value old of the component as
 *  the snapshot has it (old_size bytes, its layout differing from the
 *  registered one). @return TECS_OK, or an error, which stops the load. */
typedef tecs_err_t (*tecs_convert_fn)(void *dst, const void *old, size_t old_size, void *ctx);

/** A component's snapshot hooks (tecs_component_serializer). */
typedef struct tecs_serializer_t {
    tecs_serialize_fn serialize;     /* both or neither of these two          */
    tecs_deserialize_fn deserialize;
    tecs_convert_fn convert;    /* optional: loads values of another size,
                                   alignment or layout                        */
    void *ctx;                  /* passed to each                             */
} tecs_serializer_t;

/**
 * Give comp snapshot hooks (replacing earlier ones; NULL removes them).
 * With serialize / deserialize, each value is saved as the bytes serialize
 * writes (portable between byte orders); convert lets a load accept a
 * snapshot whose component of this name has another size, alignment or
 * layout. Not allowed from callbacks (TECS_EBUSY).
 * @return TECS_OK, TECS_EINVAL (NULL world, only one of serialize and
 * deserialize), TECS_ENOCOMP, TECS_EBUSY.
 */
tecs_err_t tecs_component_serializer(tecs_world_t *world, tecs_comp_t comp,
                                     const tecs_serializer_t *serializer);

/** From a serialize callback: append n bytes to the value being saved.
 *  @return TECS_OK, TECS_EINVAL (NULL out, or data NULL with n > 0),
 *  TECS_ENOMEM. */
tecs_err_t tecs_snapshot_put(tecs_snapshot_out_t *out, const void *data, size_t n);

/**
 * Save the world to write, in pieces.
 * @return TECS_OK; TECS_EINVAL (NULL world or write; a component with hooks
 * and values but no serializer, named in the message); TECS_EBUSY (inside a
 * callback, an iteration, a deferred section or a frame, or while changes
 * wait in the delayed queues: apply them first); TECS_ENOMEM; or the error
 * write or serialize returned. The world is unchanged either way; what was
 * written before a failure is not a snapshot.
 */
tecs_err_t tecs_snapshot_save(tecs_world_t *world, tecs_write_fn write, void *ctx);

/**
 * Load a snapshot from read into an empty world: no entity, no queued or
 * delayed change, no resource. Indexes and caches the world has are built
 * from the loaded entities at the end of the load, as if made after it
 * (each index filled once, each cache filled once; no on_enter / on_leave
 * runs); a cache's order function runs then, as in tecs_cache_new (with
 * the world open for reads only; what it queues is applied before the
 * load returns). Components the world has
 * are matched by name; the others are registered (with their saved id if it
 * is free, and their saved description unless it has a string field), as
 * plain data: a component with hooks must be registered,
 * with its hooks and serializer, before the load. Queries match the loaded
 * archetypes. Observers and hooks do not fire for the loaded entities (an
 * ADD and a SET for every value of the world would rarely be wanted);
 * resources are set with tecs_resource_set, so theirs do. Slots and ids are
 * the snapshot's: a stale id of the world from before the load may name a
 * loaded entity.
 * @return TECS_OK; TECS_EINVAL (NULL, a world that is not empty);
 * TECS_EBUSY (as for tecs_snapshot_save); TECS_EEXIST (a unique index of
 * the world finds a key twice among the loaded entities: the message
 * names the component and both entities);
 * TECS_EFORMAT (bad magic, version, checksum, truncated input, counts out
 * of range or inconsistent, values in another byte order without a
 * serializer or description; a component whose size, alignment, layout, storage or
 * enableable differs from the registered one and has no convert hook:
 * the message names it); TECS_ELIMIT (the world's entity limit);
 * TECS_ENOMEM; or the error a callback returned. On failure the world is
 * empty again (no entity, no resource), so are its indexes and caches, and
 * nothing leaks; components and archetypes the load made stay.
 */
tecs_err_t tecs_snapshot_load(tecs_world_t *world, tecs_read_fn read, void *ctx);

/** tecs_snapshot_save to a stdio stream (TECS_EINVAL: NULL file; a write
 *  error is TECS_EINVAL with errno's text). */
tecs_err_t tecs_snapshot_save_file(tecs_world_t *world, FILE *file);

/** tecs_snapshot_load from a stdio stream, from its current position. */
tecs_err_t tecs_snapshot_load_file(tecs_world_t *world, FILE *file);

/** A growable buffer the caller owns: zero it before the first use, free
 *  it with tecs_snapshot_buf_free. Its memory comes from malloc. */
typedef struct tecs_snapshot_buf_t {
    unsigned char *data;
    size_t size;                /* bytes in data                              */
    size_t cap;
} tecs_snapshot_buf_t;

/** tecs_snapshot_save into buf, replacing what it held (on failure buf is
 *  empty). @return as tecs_snapshot_save, TECS_EINVAL for NULL buf. */
tecs_err_t tecs_snapshot_save_mem(tecs_world_t *world, tecs_snapshot_buf_t *buf);

/** Free buf's memory and empty it; NULL does nothing. */
void tecs_snapshot_buf_free(tecs_snapshot_buf_t *buf);

/** tecs_snapshot_load from size bytes at data; bytes after the snapshot
 *  are TECS_EFORMAT. */
tecs_err_t tecs_snapshot_load_mem(tecs_world_t *world, const void *data, size_t size);

/*
** Deltas: what changed since a mark, for a world that mirrors another
** (a server's clients, a replay). The source takes a mark
** (tecs_world_mark) when it saves the base snapshot; each
** tecs_delta_save then writes what changed since its mark and moves the
** mark to now. Applied in the same order to a world loaded from the base,
** the deltas give the source's world: the same slots, generations and free
** list, the same archetypes in the same order, the same rows in the same
** order, values, bits, sparse sets and resources. A delta holds the chunks
** that rows entered (births, moves, swap-removes, enables), the columns
** written in the others (chunk ticks: see Change detection), the sparse
** sets that changed, the free list's change, and every resource; its size
** follows what changed, not the world.
**
** The mirror takes no other changes: a delta checks that the world is
** where its mark was (its slot and entity counts) and refuses a world
** that is not (TECS_EINVAL, unchanged). From callbacks: as snapshots (the
** writer, reader and serializer callbacks are refused every call; a mark,
** a save or an apply is refused inside any callback, iteration, deferred
** section or frame).
*/

/** A point in a world's history (tecs_world_mark). Its fields are private:
 *  a mark names its world, and only that world's delta calls take it. */
typedef struct tecs_mark_t {
    uint64_t world, tick, pushes, pops;
    int32_t nslots, nalive, nfree, nretired;
} tecs_mark_t;

/** Mark the world's state now: the next tecs_delta_save with the mark
 *  holds what changes after this call. Moves the world's tick on.
 *  @return TECS_OK, TECS_EINVAL (NULL), TECS_EBUSY (as tecs_snapshot_save). */
tecs_err_t tecs_world_mark(tecs_world_t *world, tecs_mark_t *mark);

/**
 * Write what changed since mark (of this world) to write, then move mark to
 * now. A mark taken before a tecs_world_reset of this world is of its past:
 * the delta holds the reset (every entity destroyed) and what came after.
 * @return as tecs_snapshot_save; TECS_EINVAL also for a NULL mark, a
 * zeroed one (a mark is what tecs_world_mark wrote), a mark another world
 * took and a mark not of this world's past. On failure the mark stays.
 */
tecs_err_t tecs_delta_save(tecs_world_t *world, tecs_mark_t *mark, tecs_write_fn write,
                           void *ctx);

/**
 * Apply a delta from read to a world that is where the delta's mark was
 * (loaded from the base snapshot, then given the deltas before this one).
 * Components are matched (and registered) as by tecs_snapshot_load.
 * Observers and hooks of entities do not fire; the values replaced are
 * destroyed and the new ones built through the serializers, as a load
 * does; resources are removed and set again; the world's indexes and
 * caches are rebuilt from its rows, as after a load. Rows the delta brings
 * count as entered, and columns it writes as written, for change terms.
 * @return TECS_OK; TECS_EINVAL (NULL; the world is not where the delta
 * starts: unchanged); TECS_EBUSY (as tecs_snapshot_load); TECS_EEXIST (as
 * tecs_snapshot_load); TECS_EFORMAT (as tecs_snapshot_load, and a delta
 * that does not fit the world); TECS_ENOMEM; or a callback's error. A
 * delta refused before its first change (a world not where it starts; a
 * malformed header, component table, slot or row section; out of memory
 * reserving room for it) leaves the world unchanged, but for components
 * the delta registered; a failure after that leaves the world empty, as a
 * failed load leaves it: load the base again.
 */
tecs_err_t tecs_delta_apply(tecs_world_t *world, tecs_read_fn read, void *ctx);

/** tecs_delta_save into buf, replacing what it held. */
tecs_err_t tecs_delta_save_mem(tecs_world_t *world, tecs_mark_t *mark,
                               tecs_snapshot_buf_t *buf);

/** tecs_delta_apply from size bytes at data. */
tecs_err_t tecs_delta_apply_mem(tecs_world_t *world, const void *data, size_t size);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_SNAPSHOT_H */
/* ---- include/tinyecs/system.h ---- */
/*
** tinyecs/system.h — systems, phases, the frame, and the threads that run
** them (the system add-on; docs/systems.md, docs/threads.md).
*/
#ifndef TINYECS_SYSTEM_H
#define TINYECS_SYSTEM_H



#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Systems and the pipeline                                             */
/* ==================================================================== */

/** The phases of a frame, in the order they run. 0 in a description means
 *  TECS_ON_UPDATE. */
typedef enum tecs_phase_t {
    TECS_ON_LOAD = 1,
    TECS_POST_LOAD,
    TECS_PRE_UPDATE,
    TECS_ON_UPDATE,
    TECS_ON_VALIDATE,
    TECS_POST_UPDATE,
    TECS_PRE_STORE,
    TECS_ON_STORE
} tecs_phase_t;

#define TECS_PHASE_COUNT 8

/** A system id; 0 is never a system. Ids are not reused. */
typedef uint32_t tecs_system_t;

/** Chunk form: called once per non-empty chunk of the query (once per frame
 *  with count 0 for a system without a query). */
typedef void (*tecs_system_fn)(tecs_iter_t *it);

/** Per-entity form: called for row `row` of the chunk in it. */
typedef void (*tecs_system_each_fn)(tecs_iter_t *it, int32_t row);

/**
 * Drive form: called once per run, even when the query matches nothing (and
 * for a system without a query), with an iteration of the query opened and
 * not yet stepped: the callback advances it with tecs_iter_next, and may
 * stop early with tecs_iter_fini; an iteration it leaves open is ended when
 * it returns. delta_time, frame and ctx are set as for the other forms; the
 * statistics count the rows tecs_iter_next handed out through `it`.
 * @return TECS_OK to go on; any other code stops the frame (tecs_progress)
 * after this system's changes are applied, and tecs_progress or
 * tecs_system_run returns it. (The run and each forms cannot stop a frame:
 * write such a system in this form.) If the iteration cannot open
 * (TECS_ENOMEM), the callback is not called and the run returns that code.
 */
typedef tecs_err_t (*tecs_system_drive_fn)(tecs_iter_t *it);

/** A system description; zero means default. */
typedef struct tecs_system_desc_t {
    const char *name;           /* required, unique in the world; copied      */
    tecs_phase_t phase;         /* 0: TECS_ON_UPDATE                          */
    tecs_query_t *query;        /* NULL: run once per frame, no entities.
                                   Not owned; busy (tecs_query_free refuses)
                                   until the system is removed.               */
    tecs_system_fn run;         /* exactly one of run / each / drive          */
    tecs_system_each_fn each;   /* (each needs a query)                       */
    tecs_system_drive_fn drive;
    void *ctx;                  /* it->ctx                                    */
    double interval;            /* seconds; 0 runs every frame                */
    uint32_t groups;            /* group bits (tecs_progress_groups); 0: 1u   */
    bool disabled;              /* start disabled                             */
    /* Threads (see "Threads" below; each works with or without workers):  */
    bool parallel;              /* its rows are split across the workers      */
    int32_t parallel_min;       /* a parallel system with fewer rows runs as
                                   one part; 0: TECS_PARALLEL_MIN             */
    bool concurrent;            /* it may run beside the concurrent systems
                                   of its phase whose access does not
                                   conflict with its own                      */
    const tecs_comp_t *reads;   /* parallel or concurrent: components read on
                                   other entities (tecs_get), beyond the
                                   query's terms; 0 ends the list; copied     */
    const tecs_comp_t *writes;  /* the same for components written there
                                   (tecs_get_mut)                             */
} tecs_system_desc_t;

/**
 * Add a system at the end of its phase. Added while a frame runs, it runs
 * from the next frame on.
 * @return its id, or 0 on error: TECS_EINVAL (NULL, no name, unknown phase,
 * not exactly one of run / each / drive, each without a query, interval
 * negative, NaN or above 1e300),
 * TECS_EEXIST (name taken), TECS_EWORLD (query of another world),
 * TECS_ENOMEM.
 */
tecs_system_t tecs_system_new(tecs_world_t *world, const tecs_system_desc_t *desc);

/**
 * Remove a system. Inside a frame the removal takes effect at the end of the
 * frame: the frame's list of systems is fixed when it starts, so a removed
 * system whose turn has not come still runs (disable it first to stop it at
 * once). The id is invalid at once either way.
 * @return TECS_OK, or TECS_ENOENT (unknown or removed already).
 */
tecs_err_t tecs_system_free(tecs_world_t *world, tecs_system_t system);

/** Enable or disable a system; takes effect at once, even mid-frame.
 *  @return TECS_OK or TECS_ENOENT. */
tecs_err_t tecs_system_enable(tecs_world_t *world, tecs_system_t system, bool enabled);

/** True if the system exists and is enabled. */
bool tecs_system_enabled(const tecs_world_t *world, tecs_system_t system);

/** Find a system by name. @return its id, or 0 (TECS_ENOENT). */
tecs_system_t tecs_system_lookup(tecs_world_t *world, const char *name);

/** The name of a system, owned by the world; NULL if unknown. */
const char *tecs_system_name(const tecs_world_t *world, tecs_system_t system);

/** Live systems of the world (those removed mid-frame not counted). */
int32_t tecs_system_count(const tecs_world_t *world);

/** The i-th live system in id order (the order they were added), for
 *  0 <= i < tecs_system_count; 0 otherwise and for NULL. Records no error:
 *  allowed in every callback. */
tecs_system_t tecs_system_at(const tecs_world_t *world, int32_t i);

/** Per-system statistics. Times are seconds of a monotonic clock
 *  (CLOCK_MONOTONIC on POSIX, QueryPerformanceCounter on Windows), measured
 *  around the callback and the flush of the changes it made. */
typedef struct tecs_system_stats_t {
    int64_t runs;               /* times it ran                               */
    double time_last;           /* in the last frame (0 if it did not run)    */
    double time_total;
    int64_t entities_last;      /* entities visited in the last frame         */
    int64_t entities_total;
} tecs_system_stats_t;

/** Read a system's statistics. @return TECS_OK, TECS_EINVAL (NULL out),
 *  TECS_ENOENT. After tecs_system_run, time_last and entities_last are that
 *  run's. */
tecs_err_t tecs_system_stats(tecs_world_t *world, tecs_system_t system,
                             tecs_system_stats_t *out);

/**
 * Read a system's current description into *out: groups as stored (never
 * 0), disabled as !tecs_system_enabled. out->name is owned by the world and
 * valid until the system is removed. Allowed from every callback.
 * @return TECS_OK, TECS_EINVAL (NULL out), TECS_ENOENT.
 */
tecs_err_t tecs_system_get(tecs_world_t *world, tecs_system_t system,
                           tecs_system_desc_t *out);

/**
 * Replace a system's callback (run / each / drive), ctx, query, interval,
 * groups and disabled, all from *desc. The system keeps its id, its place in
 * its phase, its statistics and its accumulated interval time. desc->name
 * must be NULL or the system's name, and desc->phase its phase (0 meaning
 * TECS_ON_UPDATE, as in tecs_system_new). The old query stops being busy
 * and the new one is busy from now on. Typical use: tecs_system_get, change
 * a field, tecs_system_set.
 * Takes effect at once: at the system's next run. Called from inside the
 * system's own callback, the running call goes on with the old callback,
 * query and ctx. Refused (TECS_EBUSY) like tecs_system_new: in lifecycle
 * hooks and order functions; allowed from systems and observers.
 * @return TECS_OK, TECS_ENOENT, TECS_EINVAL (NULL, another name, another
 * phase, and what tecs_system_new refuses), TECS_EWORLD (query of another
 * world). On error nothing changed.
 */
tecs_err_t tecs_system_set(tecs_world_t *world, tecs_system_t system,
                           const tecs_system_desc_t *desc);

/**
 * Run one frame: every enabled system once, phase by phase, in the order
 * added within a phase. Changes a system makes are applied when it ends, so
 * the next system sees them. A system with an interval runs at most once per
 * frame: when its accumulated delta time reaches the interval; the whole
 * intervals k = floor(accumulated / interval) are taken off (the rest carries
 * over) and it->delta_time is k * interval; when k passes 2^53 (a tiny
 * interval, a huge delta_time) the whole accumulated time is taken instead,
 * so it->delta_time is always finite. Time does not accumulate while it is
 * disabled. Others get it->delta_time = delta_time.
 * A drive system that returns a code other than TECS_OK stops the frame: its
 * changes are applied, the systems after it do not run (nor accumulate
 * interval time), the frame still counts (tecs_world_frame_count advances,
 * systems removed during it go) and the code is returned, the last error
 * naming the system.
 * @return TECS_OK, TECS_EINVAL (delta_time negative, NaN or above 1e300), TECS_EBUSY
 * (inside an iteration, a callback or another frame), or a drive system's code.
 * Same as tecs_progress_groups(world, delta_time, UINT32_MAX).
 */
tecs_err_t tecs_progress(tecs_world_t *world, double delta_time);

/**
 * Run a frame of some groups only: the enabled systems whose groups share a
 * bit with mask. The others are skipped as if disabled: they do not run and
 * their interval time does not accumulate. The frame counts as any frame
 * (the frame number advances, even with mask 0). @return as tecs_progress.
 */
tecs_err_t tecs_progress_groups(tecs_world_t *world, double delta_time, uint32_t mask);

/**
 * Run one system now, outside a frame, with it->delta_time = delta_time and
 * it->frame = tecs_world_frame_count (the number the next frame gets). It
 * runs even when disabled or in no group of a frame, and whatever its
 * interval: no interval time accumulates (its own included) and the frame
 * count does not advance. Its statistics count the run; its changes are
 * applied when it ends. Refused where tecs_progress is: inside an
 * iteration, any callback (a system's included) or a frame.
 * @return the drive callback's code (TECS_OK for the run and each forms;
 * the last error then names the system), or TECS_EINVAL (delta_time as
 * tecs_progress), TECS_EBUSY, TECS_ENOENT; refused, nothing ran.
 */
tecs_err_t tecs_system_run(tecs_world_t *world, tecs_system_t system, double delta_time);

/** Frames run so far (the frame number the next tecs_progress gets). */
int64_t tecs_world_frame_count(const tecs_world_t *world);


/* ==================================================================== */
/* Threads                                                              */
/* ==================================================================== */

/*
 * A world can run systems on several threads: its workers. A parallel
 * system (desc.parallel) has its matched rows split in about equal parts,
 * one per worker; concurrent systems (desc.concurrent) of one phase whose
 * access does not conflict run side by side. Both kinds run the same way
 * whatever the number of threads, workers or none, so the world after a
 * frame is the same for 1 thread or 64:
 *
 *  - each part (or each concurrent system) calls the world through its own
 *    worker context, it->world, never through the world pointer itself;
 *  - it sees the world as it was when the run began; the changes it queues
 *    apply after the run, on the calling thread: first the SET events of
 *    writes through write terms that a field index or observer watches, in
 *    row order, then each part's queued changes in part order (the order of
 *    the rows), or each concurrent system's in the order the systems were
 *    added. Hooks, observers and index upkeep run then, on that thread.
 *
 * What may be called from a worker, through it->world (W1-W4):
 *
 *   W1 reads, allowed: tecs_get, tecs_has, tecs_is_alive, tecs_entity_state,
 *      tecs_entity_archetype, tecs_component_lookup / _name / _size, the
 *      resource reads, tecs_field, counts, tecs_last_error (the worker's
 *      own), tecs_index_near (any index: indexes are not under the access
 *      list; its errors are not recorded). A system's worker reads
 *      (tecs_get) only its query's terms and its desc.reads /
 *      desc.writes, and writes (tecs_get_mut) only its write terms and
 *      desc.writes: anything else is TECS_EACCESS. A value
 *      another worker of the same run writes must not be read (that is a
 *      race, as in any threaded program).
 *   W2 writes in place, allowed: through the fields of the worker's own
 *      rows, or tecs_get_mut within the access above. Report such a write
 *      to a field index with tecs_modified (queued).
 *   W3 changes, queued: tecs_add, tecs_remove, tecs_set (always queued
 *      from a worker, even of a value the entity has), tecs_destroy,
 *      tecs_modified. The worker's own later reads do not see them.
 *   W4 everything else, refused with TECS_EBUSY: births (their ids would
 *      depend on which thread ran first), delayed changes, iterations and
 *      where queries, creating or freeing objects, resources' writes,
 *      frames, threads. A call through the world pointer itself while
 *      workers run is refused too, and records nothing.
 *
 * The world's allocator is called from the workers (each queue grows in
 * its own thread): it must be safe to call from several threads at once,
 * as the default (the C library's) is.
 */

/** The rows below which a parallel system runs as one part (its default
 *  desc.parallel_min): splitting a light loop over fewer rows costs more
 *  than it saves. */
#define TECS_PARALLEL_MIN 16384

/** A job: what an executor runs. */
typedef void (*tecs_job_fn)(void *arg);

/**
 * Your own job system, given to a world instead of its own threads. The
 * world calls submit a number of times, then wait once, on the thread that
 * runs the frame; it never calls them from a job. submit may run the job at
 * once or hand it to another thread; wait returns when every job submitted
 * since the last wait has returned.
 */
typedef struct tecs_executor_t {
    void (*submit)(void *ctx, tecs_job_fn job, void *arg);
    void (*wait)(void *ctx);
    void *ctx;
    int32_t threads;            /* jobs that may run at once, 1..TECS_MAX_THREADS:
                                   the parts a parallel system is split into  */
} tecs_executor_t;

/**
 * Give the world n workers: a pool of n - 1 threads it owns, the calling
 * thread being the n-th (0 or 1: no threads). The pool is made when first
 * asked for, resized or stopped by the next call, and stopped with the
 * world; its threads sleep when the world runs no parallel work. Replaces
 * an executor given before.
 * Refused (TECS_EBUSY) in every callback, in an iteration, a deferred
 * section or a split.
 * @return TECS_OK; TECS_EINVAL (n negative or above TECS_MAX_THREADS);
 * TECS_ENOMEM or TECS_ETHREAD (a thread could not be started): then the
 * world has no threads (it works on the calling thread alone).
 */
tecs_err_t tecs_world_set_threads(tecs_world_t *world, int32_t n);

/** The world's workers: its threads' count, or the executor's, 1 with neither. */
int32_t tecs_world_threads(const tecs_world_t *world);

/**
 * Run the world's parallel work on your own job system instead of its
 * threads (its pool is stopped); the executor is copied. NULL: neither,
 * one worker. Refused where tecs_world_set_threads is.
 * @return TECS_OK, TECS_EINVAL (submit or wait NULL, threads out of
 * range), TECS_EBUSY.
 */
tecs_err_t tecs_world_set_executor(tecs_world_t *world, const tecs_executor_t *executor);

/** The processors this machine has online (at least 1). Safe from any thread. */
int32_t tecs_cpu_count(void);

/**
 * A split: a query's rows handed out in parts, for your own threads.
 * tecs_split_begin(q, n) readies n parts; each of your threads then starts
 * its part k (one thread per part) with
 * TECS_ITER(w, .query = q, .parts = n, .part = k) (tecs_iter_desc_t),
 * iterates it,
 * and calls the world through it->world as a worker (W1-W4 above, with
 * no access list: any component may be read and written there).
 * tecs_split_end(q), on the thread that began it, once every part is done,
 * applies what the parts queued, part 0 first, as a parallel system does.
 * Between begin and end the world takes no other call (TECS_EBUSY).
 * Parts cover the rows in iteration order: part k holds rows
 * [k * N / n, (k + 1) * N / n) of the N the query matches.
 * @return TECS_OK; TECS_EINVAL (NULL, n out of 1..TECS_MAX_THREADS);
 * TECS_EBUSY (in a callback, an iteration, a deferred section, another
 * split, or the world closed); TECS_ENOMEM.
 */
tecs_err_t tecs_split_begin(tecs_query_t *query, int32_t parts);

/** End the split of query: apply the parts' changes (see tecs_split_begin).
 *  @return TECS_OK, TECS_EINVAL (NULL, or not the query split), or the
 *  error of a queued change that could not apply (the others still do). */
tecs_err_t tecs_split_end(tecs_query_t *query);

/**
 * Seconds on the clock system statistics use: monotonic, from an arbitrary
 * origin, so only differences mean anything (a frame's delta_time, say).
 * CLOCK_MONOTONIC on POSIX, QueryPerformanceCounter on Windows, C11
 * timespec_get elsewhere (which follows the wall clock). Needs no world;
 * safe from any thread and any callback.
 */
double tecs_time_now(void);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_SYSTEM_H */
