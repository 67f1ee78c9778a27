/*
** private.h — what the layers of tinyecs share. One section per layer, in
** layer order; a layer uses only the sections above its own.
*/
#ifndef TECS_PRIVATE_H
#define TECS_PRIVATE_H

#include "tinyecs.h"

#include <assert.h>
#include <string.h>

#if defined(__GNUC__)
#define TECS__LIKELY(x)   __builtin_expect(!!(x), 1)
#define TECS__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TECS__NOINLINE    __attribute__((noinline))
#define TECS__INLINE      inline __attribute__((always_inline))
#define TECS__PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TECS__PREFETCH(p) __builtin_prefetch(p)
#define TECS__CTZ(x)      __builtin_ctz(x)
#else
#define TECS__CTZ(x)      tecs__ctz(x)
#define TECS__PREFETCH(p) ((void)(p))
#define TECS__LIKELY(x)   (x)
#define TECS__UNLIKELY(x) (x)
#define TECS__NOINLINE
#define TECS__INLINE      inline
#define TECS__PRINTF(a, b)
#endif

/* The number of trailing zero bits of x, not 0 (TECS__CTZ without the
** compiler's builtin). */
static inline int tecs__ctz(uint32_t x)
{
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
}

/* ==================================================================== */
/* alloc.c: allocation, errors                                          */
/* ==================================================================== */

void *tecs__alloc(tecs_world_t *w, size_t size);
void *tecs__realloc(tecs_world_t *w, void *p, size_t osize, size_t nsize);
void tecs__free(tecs_world_t *w, void *p, size_t size);
/* Grow *arr (elements of esize, capacity *cap) to hold at least need. */
tecs_err_t tecs__grow(tecs_world_t *w, void **arr, int32_t *cap, int32_t need, size_t esize);
/* 64-byte aligned blocks, for chunks; *raw receives what to free. */
void *tecs__alloc_aligned(tecs_world_t *w, size_t size, void **raw);
void tecs__free_aligned(tecs_world_t *w, void *raw, size_t size);
/* The allocator of a world made without one: the C library's. */
void *tecs__default_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* Record an error on the world and return it. */
tecs_err_t tecs__err(tecs_world_t *w, tecs_err_t err, const char *fmt, ...) TECS__PRINTF(3, 4);

/* Why the world refuses every call now (tecs_world_t.closed). */
enum {
    TECS__OPEN = 0,             /* calls are taken                          */
    TECS__FREEING,              /* tecs_world_free is tearing it down       */
    TECS__IN_ALLOC              /* its allocator is running                 */
};
/* Set the last error back to err after calls made on the caller's behalf
** replaced it (the message of a code other than TECS_OK is then its
** general text). */
void tecs__err_reset(tecs_world_t *w, tecs_err_t err);
/* Refuse a call on a closed world: TECS_EBUSY, with the reason. */
tecs_err_t tecs__refuse_closed(tecs_world_t *w);
/* The start of every public function that can fail (defined after the
** world struct): a closed world refuses the call; otherwise the last error
** is cleared, so that it always describes the latest such call. */
static inline tecs_err_t tecs__enter(tecs_world_t *w);
/* The start of a public read that can fail (tecs_get, lookups): the same,
** but allowed while the world is being freed; refused inside its allocator
** only, where the world's arrays may be moving. */
static inline tecs_err_t tecs__enter_read(tecs_world_t *w);
/* Messages name an entity as "entity 12:3" (slot:generation):
** tecs__err(w, code, TECS__ENT_FMT " is not alive", TECS__ENT(e)). */
#define TECS__ENT_FMT "entity %u:%u"
#define TECS__ENT(e)  TECS_ENTITY_INDEX(e), TECS_ENTITY_GENERATION(e)

/* The world's allocator, its error state and how deep in callbacks it is. */
typedef struct tecs__base {
    tecs_alloc_fn alloc;
    void *alloc_ud;
    size_t mem;                 /* bytes held through alloc                 */
    tecs_err_t err;
    char errmsg[160];
    uint8_t closed;             /* TECS__OPEN, or why calls are refused     */
    int32_t cb_depth;           /* user callbacks running (tecs__cb_begin)  */
    int32_t hook_depth;         /* of those, lifecycle hooks and order
                                   functions: rows are in motion            */
    int32_t defer_depth;        /* open iterations, systems, callbacks: while
                                   not 0, structural changes are queued     */
} tecs__base;

/* ==================================================================== */
/* entity_index.c: slots, generations, FIFO free list                   */
/* ==================================================================== */

/* A slot. While alive, arch is the archetype index (with flag bits);
** while dead, arch is TECS__ARCH_DEAD and row links the free list. */
typedef struct tecs__record {
    uint32_t gen;               /* generation; high half of the id          */
    uint32_t arch;              /* archetype index | flags, or a state      */
    uint32_t row;               /* row in the archetype, or next free slot  */
} tecs__record;

#define TECS__ARCH_DEAD     0xffffffffu  /* slot is free                    */
#define TECS__ARCH_PENDING  0xfffffffeu  /* id handed out, birth queued     */
#define TECS__ARCH_RETIRED  0xfffffffdu  /* generation exhausted; never reused */
#define TECS__KILL_QUEUED   0x80000000u  /* a delayed destroy is queued     */
#define TECS__REMOVE_QUEUED 0x40000000u  /* a deferred remove is queued     */
#define TECS__ROW_DELAYED   1u           /* row of a PENDING slot whose birth
                                            waits in the delayed queue      */
#define TECS__ARCH_MASK     0x00ffffffu
#define TECS__NO_SLOT       0xffffffffu

static inline tecs_entity_t tecs__make_id(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

/* The record of a live entity, or NULL. */
static inline tecs__record *tecs__ei_alive(const tecs_world_t *w, tecs_entity_t e);
/* The record of an entity that is alive or pending, or NULL. */
static inline tecs__record *tecs__ei_known(const tecs_world_t *w, tecs_entity_t e);
/* Make room for n more slots, so that n tecs__ei_take calls cannot fail. */
tecs_err_t tecs__ei_reserve(tecs_world_t *w, int32_t n);
/* Take the oldest free slot, or a new one (room reserved first). */
static inline tecs_entity_t tecs__ei_take(tecs_world_t *w);
/* Give a slot back: its generation moves on, its id goes stale. */
static inline void tecs__ei_release(tecs_world_t *w, uint32_t index);
void tecs__ei_fini(tecs_world_t *w);
/* Record TECS_EDEAD: e is not alive. */
tecs_err_t tecs__err_dead(tecs_world_t *w, tecs_entity_t e);

typedef struct tecs__ei_state {
    int32_t nrecs;              /* slots ever handed out                    */
    int32_t cap_recs;
    uint32_t free_head;         /* oldest free slot, or TECS__NO_SLOT       */
    uint32_t free_tail;         /* newest free slot                         */
    int32_t nfree;
    int32_t nalive;             /* live entities                            */
    int32_t npending;           /* ids handed out, birth queued             */
    int32_t max_entities;
} tecs__ei_state;

/* ==================================================================== */
/* component.c: the registry                                            */
/* ==================================================================== */

typedef struct tecs__comp {
    char *name;                 /* NULL: id not registered                  */
    size_t name_len;
    uint32_t size;
    uint32_t align;
    tecs_ctor_fn ctor;
    tecs_dtor_fn dtor;
    tecs_copy_fn copy;
    tecs_move_fn move;
    void *ctx;
    uint32_t watch;             /* listeners that want this one's events    */
    uint32_t watch_noset;       /* of those, ones that want no SET events   */
    uint32_t veto;              /* listeners that must approve its changes  */
} tecs__comp;

/* Record TECS_ENOCOMP: c is not a registered component. */
tecs_err_t tecs__err_nocomp(tecs_world_t *w, tecs_comp_t c);

/* The registered component c, or NULL. */
static inline const tecs__comp *tecs__comp_get(const tecs_world_t *w, tecs_comp_t c);
/* Messages name a component as "component 'Position' (7)"; an id that is
** not registered reads "component '?' (7)":
** tecs__err(w, code, TECS__COMP_FMT " is a tag", TECS__COMP(w, c)). */
#define TECS__COMP_FMT "component '%s' (%u)"
#define TECS__COMP(w, c) tecs__comp_name((w), (c)), (unsigned)(c)
static inline const char *tecs__comp_name(const tecs_world_t *w, tecs_comp_t c);
/* Some listener wants SET events of ci: a write (per row, for a write term
** of an iteration) is not reported for a component watched only for ADD /
** REMOVE. */
static inline bool tecs__wants_set(const tecs__comp *ci)
{
    return ci->watch > ci->watch_noset;
}
void tecs__comp_fini(tecs_world_t *w);

/* Lifecycle helpers: hooks when present, plain bytes otherwise. A hook
** runs between tecs__hook_begin and tecs__hook_end (R1): what it changes
** is queued. Nothing may hold a record pointer across these calls (a
** queued birth may grow the records); archetype rows and the registry
** stay put. */
void tecs__comp_ctor(tecs_world_t *w, const tecs__comp *ci, void *dst, int32_t n);
void tecs__comp_dtor(tecs_world_t *w, const tecs__comp *ci, void *p, int32_t n);
void tecs__comp_copy(tecs_world_t *w, const tecs__comp *ci, void *dst, const void *src,
                     int32_t n);
void tecs__comp_move(tecs_world_t *w, const tecs__comp *ci, void *dst, void *src, int32_t n);

typedef struct tecs__comp_state {
    tecs__comp *comps;          /* indexed by id                            */
    int32_t cap_comps;
    int32_t ncomps;             /* registered                               */
    tecs_comp_t next_comp;      /* next automatic id                        */
} tecs__comp_state;

/* ==================================================================== */
/* event.c: the listener bus                                            */
/* ==================================================================== */

/* Archetype listeners: how higher layers learn of new archetypes. A
** listener either takes the archetype in whole or fails with no change. */
typedef tecs_err_t (*tecs__arch_listener_fn)(tecs_world_t *w, void *ctx, tecs_archetype_t *a);

enum {
    TECS__EV_ADD = 1,           /* after the component is constructed       */
    TECS__EV_SET = 2,           /* after its value was written              */
    TECS__EV_REMOVE = 4,        /* before it is destroyed                   */
    TECS__EV_WRITTEN = 8        /* with SET in a veto: already written      */
};

/* A component event: ptr is the value (NULL for a tag). */
typedef void (*tecs__comp_event_fn)(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e,
                                    tecs_comp_t c, const void *ptr);
/* An entity changed archetype: from NULL at birth, to NULL at death. */
typedef void (*tecs__move_event_fn)(tecs_world_t *w, void *ctx, tecs_entity_t e,
                                    tecs_archetype_t *from, tecs_archetype_t *to);

/* May this change happen? Asked before an add, a set or a birth changes
** component c, for components whose `veto` counter is not zero. vals holds
** n values (stride: the component's size), NULL for default-constructed
** ones; e is the entity, 0 for births. The listener refuses with an error
** (TECS_EEXIST: a unique key taken) and reserves what its update will need.
** With TECS__EV_SET | TECS__EV_WRITTEN the value is already in place (n 1):
** a refusing listener restores its own field before returning the error. */
typedef tecs_err_t (*tecs__veto_fn)(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e,
                                     tecs_comp_t c, const void *vals, int32_t n);

typedef struct tecs__listener {
    tecs__arch_listener_fn on_archetype;
    void (*on_archetype_undo)(tecs_world_t *w, void *ctx, tecs_archetype_t *a);
    tecs__comp_event_fn on_comp;
    tecs__move_event_fn on_move;
    tecs__veto_fn on_veto;
    void (*on_fini)(tecs_world_t *w, void *ctx);
    void *ctx;
    /* Runs at world free before any on_fini, while every entity, query and
    ** listener is still intact (observers announce the last removals). */
    void (*before_fini)(tecs_world_t *w, void *ctx);
    /* The last open iteration ended: every write through a write term has
    ** been reported (ordered caches re-sort). */
    void (*on_iters_done)(tecs_world_t *w, void *ctx);
} tecs__listener;

/* Register a listener; its on_fini runs when the world is freed. */
tecs_err_t tecs__listen(tecs_world_t *w, const tecs__listener *l);
/* Ask every vetoing listener whether a change to c may happen. */
tecs_err_t tecs__veto(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c,
                            const void *vals, int32_t n);
/* Raise a component event to every listener (only if c is watched). */
void tecs__emit_comp(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c, const void *ptr);
/* Tell every listener that e moved from one archetype to another. */
void tecs__emit_move(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *from,
                     tecs_archetype_t *to);

typedef struct tecs__bus {
    tecs__listener *listeners;
    int32_t nlisteners;
    int32_t cap_listeners;
    bool watch_moves;           /* some listener wants move events          */
    bool watch_comps;           /* some listener wants component events     */
    bool watch_vetoes;          /* some listener may veto changes           */
} tecs__bus;

/* ==================================================================== */
/* archetype.c: archetype set, chunks, edges, rows                      */
/* ==================================================================== */

#define TECS__COL_ABSENT (-1)
#define TECS__COL_TAG    (-2)

struct tecs_archetype_t {
    tecs_world_t *world;
    uint32_t id;                /* index in world->archs, creation order    */
    uint32_t hash;              /* of the sorted component ids              */
    int32_t ncomps;
    tecs_comp_t *comps;         /* sorted ids, tags included                */
    int32_t cmap_len;           /* max component id + 1                     */
    int16_t *cmap;              /* comp id -> column, or COL_ABSENT/COL_TAG */
    int32_t ncols;              /* data columns (tags have none)            */
    tecs_comp_t *col_comp;      /* per column: its component                */
    uint32_t *col_size;         /* per column: value size                   */
    uint32_t *col_off;          /* per column: byte offset in a chunk       */
    uint32_t chunk_bytes;       /* size of one chunk                        */
    int32_t count;              /* rows in use, in every chunk together     */
    int32_t nchunks;            /* chunks allocated                         */
    int32_t cap_chunks;
    struct tecs__chunk *chunks; /* allocated chunks, in row order           */
    int32_t stride;             /* column pointers per chunk: ncols + 1     */
    char **cols;                /* chunk k's at k * stride: [0] its entity
                                   ids, [1 + c] its column c (after chunks,
                                   in the same block)                       */
    int32_t nedges;             /* edge arrays' length (component ids)      */
    uint32_t *edge_add;         /* comp -> archetype with it, or NO_EDGE    */
    uint32_t *edge_rem;         /* comp -> archetype without it, or NO_EDGE */
    bool plain;                 /* no column has hooks                      */
};

#define TECS__NO_EDGE 0xffffffffu

/* Chunks are allocated in groups: one block for the g chunks that one
** reservation asked for, laid out column by column across the group, so
** that a column of consecutive chunks is one run of memory (archetype.c). */
struct tecs__chunk {
    char *base;                 /* the group's 64-byte aligned base         */
    void *raw;                  /* the group's block, to free               */
    uint32_t g;                 /* chunks in the group                      */
    uint32_t first;             /* this chunk's first row in the group      */
};

/* Column col's value at row. */
static inline void *tecs__col_ptr(const tecs_archetype_t *a, const tecs_world_t *w,
                                  int32_t col, uint32_t row);
/* The entity column's slot at row. */
static inline tecs_entity_t *tecs__ent_ptr(const tecs_archetype_t *a, const tecs_world_t *w,
                                           uint32_t row);

/* Find or create the archetype of sorted, distinct, registered ids. */
tecs_archetype_t *tecs__arch_get(tecs_world_t *w, int32_t n, const tecs_comp_t *sorted);
/* The archetype reached by adding (or removing) c, through the cached edge. */
tecs_archetype_t *tecs__arch_with(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c);
tecs_archetype_t *tecs__arch_without(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c);
/* Make room for n more rows; after success appends cannot fail. */
tecs_err_t tecs__arch_grow_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n);
static inline tecs_err_t tecs__arch_reserve_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n);
/* The allocated chunks have room for n more rows. */
static inline bool tecs__arch_has_rows(const tecs_world_t *w, const tecs_archetype_t *a,
                                       int32_t n);
/* Fill the hole at row with the last row (values already moved out or
** destroyed) and shrink; frees an emptied chunk beyond one spare. */
static inline void tecs__arch_remove_row(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
void tecs__arch_fill_hole(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
void tecs__arch_trim(tecs_world_t *w, tecs_archetype_t *a);
/* Undo the creation of the newest archetype, still empty, when the call
** that created it fails later on (listeners, edges, hash table). */
void tecs__arch_drop_last(tecs_world_t *w);
/* Run the destructor of every live value (at world free, before any layer
** tears down); tecs__arch_fini then frees the memory. */
void tecs__arch_destroy_values(tecs_world_t *w);
void tecs__arch_fini(tecs_world_t *w);
/* Column of c in a, or COL_ABSENT / COL_TAG. */
static inline int32_t tecs__arch_col(const tecs_archetype_t *a, tecs_comp_t c)
{
    return c < (tecs_comp_t)a->cmap_len ? a->cmap[c] : TECS__COL_ABSENT;
}

/* Validate an archetype handle passed by the user. */
tecs_err_t tecs__arch_validate(tecs_world_t *w, const tecs_archetype_t *a);
/* Validate a value list against an archetype. */
tecs_err_t tecs__arch_validate_vals(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                            const tecs_value_t *vals);


typedef struct tecs__arch_state {
    int32_t cap_archs;
    uint32_t *arch_table;       /* open addressing: hash -> id + 1          */
    uint32_t arch_table_cap;    /* power of two                             */
    uint32_t rows;              /* rows per chunk, a power of two           */
    uint32_t shift;             /* log2(rows)                               */
    uint32_t mask;              /* rows - 1                                 */
    int32_t max_archetypes;
} tecs__arch_state;

/* ==================================================================== */
/* store.c: the engine, a structural change performed now               */
/* ==================================================================== */

/* A hop: the archetype pair the last plain add (or remove) of a component
** moved a row between, so that the next one from the same archetype skips
** the walk through the edges. */
typedef struct tecs__hop {
    uint32_t key;               /* archetype id of from + 1; 0: empty       */
    int32_t col;                /* the component's column in the larger one */
    tecs_archetype_t *from, *to;
} tecs__hop;

#define TECS__HOPS 128          /* components with a hop: ids below this    */

/* Hop h starts at the archetype of record r. */
static inline bool tecs__hop_at(const tecs__hop *h, const tecs__record *r)
{
    return h->key == (r->arch & TECS__ARCH_MASK) + 1;
}

static inline void tecs__hop_set(tecs__hop *h, tecs_archetype_t *from, tecs_archetype_t *to,
                                 int32_t col)
{
    *h = (tecs__hop){ from->id + 1, col, from, to };
}

/* Add c (with value, or constructed) to the live entity e of record r, in
** archetype a. */
tecs_err_t tecs__add_to(tecs_world_t *w, tecs_entity_t e, tecs__record *r, tecs_archetype_t *a,
                        tecs_comp_t c, const void *value);
/* Create n entities in a (ids into out if given), values from vals: asks
** vetoing listeners, reserves, commits, announces. */
tecs_err_t tecs__birth_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                            int32_t nvals, const tecs_value_t *vals);
/* The value p of c of e was written in place: ask vetoing listeners after
** the fact (TECS__EV_WRITTEN), then raise SET. */
tecs_err_t tecs__written(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *p);
/* Immediate forms, used by the front end and by the command buffer. */
tecs_err_t tecs__destroy_now(tecs_world_t *w, tecs_entity_t e);
tecs_err_t tecs__add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value);
tecs_err_t tecs__remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c);
/* Place a pending entity into arch, values from vals (one per comp). */
tecs_err_t tecs__birth(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                       int32_t nvals, const tecs_value_t *vals,
                       tecs_init_fn fn, void *ctx);
/* Place n pending entities into a plain archetype, rows reserved, when no
** listener watches or vetoes changes of its components: the k-th id is at
** ids + k * stride, its value of column col (if col >= 0) at
** vals + k * stride, the other columns are zeroed. An id no longer pending
** is skipped. */
void tecs__birth_run(tecs_world_t *w, tecs_archetype_t *a, int32_t n, const char *ids,
                     int32_t col, const char *vals, size_t stride);

typedef struct tecs__store_state {
    tecs__hop kill;             /* the plain archetype tecs_destroy last
                                   freed a row of (from; to unused)         */
    tecs__hop hop_add[TECS__HOPS]; /* by comp id, the last plain add        */
    tecs__hop hop_rem[TECS__HOPS]; /* ... and remove                        */
    tecs_entity_t leaving;      /* the entity whose REMOVE events are being
                                   raised, still in its row (0: none); an
                                   index filled meanwhile skips it          */
    tecs_comp_t leaving_comp;   /* the component it loses; 0: all (destroy) */
} tecs__store_state;

/* ==================================================================== */
/* command.c: queued structural changes                                 */
/* ==================================================================== */

typedef enum tecs__op {
    TECS__OP_NEW,               /* birth of a pending entity                */
    TECS__OP_NEW_BULK,          /* births of n pending entities             */
    TECS__OP_DESTROY,
    TECS__OP_ADD,
    TECS__OP_REMOVE,
    TECS__OP_SET,
    TECS__OP_KILL,              /* delayed destroy, with its callback       */
    TECS__OP_NEW_SET,           /* a NEW, then the ADD or SET (`then`) of
                                   comp that was queued right after it      */
    TECS__OP_MODIFIED           /* tecs_modified from a lifecycle hook      */
} tecs__op;

/* What a command carries besides its head, when that is more than one
** plain value (births with an initializer or values with hooks, bulk
** births); it lives in the arena. */
typedef struct tecs__cmdx {
    int32_t n;                  /* entities (births), values per list       */
    int32_t nvals;              /* entries in vals                          */
    tecs_value_t *vals;         /* values, each n long (in the arena)       */
    union {                     /* by op:                                   */
        tecs_entity_t *ids;     /* NEW_BULK: the ids (in the arena)         */
        tecs_init_fn init;      /* NEW: initializer of a queued new_with    */
    };
    void *ctx;
} tecs__cmdx;

#define TECS__CMD_INLINE 1u     /* flags: the value is in value[]           */
#define TECS__CMD_VAL    2u     /* flags: the value is at val (the arena)   */
#define TECS__CMD_PACKED 4u     /* flags: NEW: plain values at packed (the
                                   arena): a mask of the archetype's columns
                                   given, then each value, aligned          */
#define TECS__CMD_INLINE_MAX 8  /* the largest value kept in a command      */

/* One queued change: 32 bytes (on 64-bit targets), two to a cache line. */
typedef struct tecs__cmd {
    uint8_t op;
    uint8_t then;               /* NEW_SET: the folded op, ADD or SET       */
    uint8_t flags;              /* TECS__CMD_*                              */
    uint8_t spare;              /* zero: the head has no padding            */
    tecs_comp_t comp;           /* ADD, REMOVE, SET, NEW_SET                */
    tecs_entity_t entity;
    union {
        tecs_archetype_t *arch; /* births                                   */
        void *kill_ctx;         /* KILL: its callback's ctx                 */
    };
    union {
        tecs__cmdx *x;          /* NEW (NULL: no values, no initializer),
                                   NEW_BULK                                 */
        tecs_destroy_fn kill;      /* KILL: its callback, or NULL              */
        unsigned char *packed;  /* NEW with CMD_PACKED: its values          */
        tecs_value_t *val;      /* SET, NEW_SET with CMD_VAL: the value     */
        unsigned char value[TECS__CMD_INLINE_MAX];  /* with CMD_INLINE: a
                                   small value without hooks, in place (NEW:
                                   of comp, its birth's only value)         */
    };
} tecs__cmd;

/* The arena: blocks that never move, so hooked values stay put. */
typedef struct tecs__ablock {
    struct tecs__ablock *next;
    size_t cap;                 /* data bytes after the 64-byte header      */
    size_t used;
    void *raw;
} tecs__ablock;

typedef struct tecs__cmdbuf {
    tecs__cmd *cmds;
    int32_t count;
    int32_t cap;
    tecs__ablock *head;         /* first arena block                        */
    tecs__ablock *cur;          /* block being filled                       */
} tecs__cmdbuf;

/* Births to queue: n entities into arch. */
typedef struct tecs__births {
    tecs_archetype_t *arch;
    int32_t n;                  /* entities                                 */
    tecs_entity_t *out;         /* receives their ids, or NULL              */
    int32_t nvals;              /* entries in vals                          */
    const tecs_value_t *vals;   /* values, as the public call takes them    */
    bool bulk;                  /* tecs_new_bulk: each value is an array of
                                   n, one per entity                        */
    tecs_init_fn init;          /* tecs_new_with: the initializer, or NULL  */
    void *ctx;                  /* its context                              */
} tecs__births;

/* Queue, for while the world is deferred. */
tecs_err_t tecs__defer_new(tecs_world_t *w, const tecs__births *req);
/* tecs__defer_new of one entity with no values and no initializer: its id,
** or 0 with the world's error set. */
tecs_entity_t tecs__defer_new1(tecs_world_t *w, tecs_archetype_t *a);
tecs_err_t tecs__defer_op(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                          const void *value);
/* Enter / leave deferred mode; leaving the outermost level flushes. */
void tecs__defer_begin(tecs_world_t *w);
void tecs__defer_end(tecs_world_t *w);
/* Apply every queued change (the world must not be deferred). */
tecs_err_t tecs__flush(tecs_world_t *w);
/* The end of a public call that may have run callbacks: apply what they
** queued, unless the world is still deferred (see tecs__flush). */
static inline void tecs__settle(tecs_world_t *w);
void tecs__cmd_fini(tecs_world_t *w);

typedef struct tecs__cmd_state {
    tecs__cmdbuf delayed;       /* delayed births and destroys              */
    bool flushing;
    bool applying;              /* a tecs_delayed_apply* runs: the flushes it
                                   makes count their drops into it          */
    int32_t dropped;            /* changes the latest apply or flush dropped */
    tecs_err_t drop_err;        /* the first one's error ...                */
    char drop_msg[160];         /* ... and its message                      */
} tecs__cmd_state;

/* ==================================================================== */
/* query.c                                                              */
/* ==================================================================== */

/* Verify every query's matches against a fresh match (for tecs_world_check). */
tecs_err_t tecs__queries_verify(tecs_world_t *w);
/* The position of archetype a in q's matches, or -1 if q does not match it. */
int32_t tecs__query_find(const tecs_query_t *q, const tecs_archetype_t *a);
/* Point an iterator of q at count rows of a from row (one chunk), a being
** q's match m: what a filtered iteration hands out per step. */
void tecs__iter_load_rows(tecs_iter_t *it, int32_t m, tecs_archetype_t *a, uint32_t row,
                          int32_t count);
/* Ask the cache for the fields of row of a (q's match m), soon needed. */
void tecs__iter_prefetch(const tecs_iter_t *it, int32_t m, const tecs_archetype_t *a,
                         uint32_t row);
/* True if archetype a (may be NULL: false) matches the query's terms. */
bool tecs__query_matches(const tecs_query_t *q, const tecs_archetype_t *a);
/* A system or a cache starts (+1) or stops (-1) using q: tecs_query_free
** refuses while it is used. */
void tecs__query_use(tecs_query_t *q, int32_t delta);
/* Free a query the library owns (an observer's; NULL does nothing): never
** refused, and the world's last error is left as it is. */
void tecs__query_drop(tecs_query_t *q);

typedef struct tecs__query_state {
    struct tecs_query_t *queries; /* list of live queries                   */
    bool query_listening;
    uint32_t *iters;            /* serials of the open iterations, in the
                                   order they were opened                   */
    int32_t niters;
    int32_t cap_iters;
    uint32_t iter_serial;       /* the last serial handed out (0: none)     */
    int32_t iters_twice;        /* ends of iterations no longer open, not
                                   reported by tecs_world_check yet         */
} tecs__query_state;

/* ==================================================================== */
/* index/: field indexes, filters, caches                               */
/* ==================================================================== */

/* Verify every index against one rebuilt from scratch (tecs_world_check). */
tecs_err_t tecs__indexes_verify(tecs_world_t *w);

/* ==================================================================== */
/* observer.c and system.c                                              */
/* ==================================================================== */

struct tecs__obs_state;         /* hooks and observers of one world         */
struct tecs__sys_state;         /* systems and the frame counter            */

/* Verify the observers' counts and watches, the systems' list (for
** tecs_world_check). */
tecs_err_t tecs__observers_verify(tecs_world_t *w);
tecs_err_t tecs__systems_verify(tecs_world_t *w);

/* ==================================================================== */
/* The world: one state per layer, in layer order                       */
/* ==================================================================== */

struct tecs_world_t {
    tecs__base base;            /* alloc.c (first: see tecs__base_of)       */
    tecs__ei_state ei;          /* entity_index.c                           */
    tecs__comp_state comp;      /* component.c                              */
    tecs__bus bus;              /* event.c                                  */
    tecs__arch_state arch;      /* archetype.c                              */
    tecs__store_state store;    /* store.c                                  */
    tecs__cmd_state cmd;        /* command.c                                */
    tecs__query_state query;    /* query.c                                  */
    struct tecs__indexes *indexes; /* index/: NULL until the first          */
    struct tecs__obs_state *obs;   /* observer.c: NULL until first used     */
    struct tecs__sys_state *sys;   /* system.c: NULL until first used       */

    /* Four fields that belong in the states above (the entity index, the
    ** archetypes, the command buffer) but that white-box tests read by
    ** these names. */
    tecs__record *recs;         /* entity_index.c: the slots                */
    tecs_archetype_t **archs;   /* archetype.c: by id, creation order       */
    int32_t narchs;             /* archetype.c                              */
    tecs__cmdbuf deferred;      /* command.c: changes made while deferred   */
};
/* (The refusal returns the constant, so that the compiler knows the caller
** leaves at once and keeps the caller's fast path free of saved registers.) */
static inline tecs_err_t tecs__enter(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->base.closed != TECS__OPEN)) {
        tecs__refuse_closed(w);
        return TECS_EBUSY;
    }
    w->base.err = TECS_OK;
    return TECS_OK;
}

static inline tecs_err_t tecs__enter_read(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->base.closed == TECS__IN_ALLOC)) {
        tecs__refuse_closed(w);
        return TECS_EBUSY;
    }
    w->base.err = TECS_OK;
    return TECS_OK;
}

/* Put the last error back to `outer`, what it was before a callback or a
** flush ran calls of its own: their errors are for whoever made those
** calls, not for the caller of the outer call. */
static inline void tecs__err_restore(tecs_world_t *w, tecs_err_t outer)
{
    if (TECS__UNLIKELY(w->base.err != outer))
        tecs__err_reset(w, outer);
}

/* Around every user callback the library calls (R1 in tinyecs.h): the
** world is deferred while it runs, and tecs_world_free, tecs_progress and
** the applies of delayed changes refuse. Errors of the calls it makes are
** its own: when it returns the last error is as it was (tecs__cb_end gets
** what tecs__cb_begin returned). */
static inline tecs_err_t tecs__cb_begin(tecs_world_t *w)
{
    w->base.defer_depth++;
    w->base.cb_depth++;
    return w->base.err;
}

static inline void tecs__cb_end(tecs_world_t *w, tecs_err_t outer)
{
    w->base.cb_depth--;
    w->base.defer_depth--;
    tecs__err_restore(w, outer);
}

/* Around a lifecycle hook (ctor, dtor, copy, move) or an order function:
** rows are in motion, so writes queue too and objects cannot be created or
** freed. Nothing is applied when it returns: the outermost public call
** applies the queue once the rows are in place. */
static inline tecs_err_t tecs__hook_begin(tecs_world_t *w)
{
    w->base.hook_depth++;
    return tecs__cb_begin(w);
}

static inline void tecs__hook_end(tecs_world_t *w, tecs_err_t outer)
{
    w->base.hook_depth--;
    tecs__cb_end(w, outer);
}

/* tecs__enter for a call that creates or frees an object (a component, an
** index, filter, cache, query, observer or system): refused while rows are
** in motion. */
static inline tecs_err_t tecs__enter_object(tecs_world_t *w)
{
    tecs_err_t err = tecs__enter(w);
    if (err == TECS_OK && TECS__UNLIKELY(w->base.hook_depth > 0))
        err = tecs__err(w, TECS_EBUSY, "objects cannot be created or freed "
                                       "while a lifecycle hook or an order function runs");
    return err;
}

static inline void tecs__settle(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->deferred.count > 0) && w->base.defer_depth == 0 && !w->cmd.flushing)
        tecs__flush(w);
}

static inline const tecs__comp *tecs__comp_get(const tecs_world_t *w, tecs_comp_t c)
{
    if (c == 0 || c >= (tecs_comp_t)w->comp.cap_comps || w->comp.comps[c].name == NULL)
        return NULL;
    return &w->comp.comps[c];
}

static inline const char *tecs__comp_name(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = tecs__comp_get(w, c);
    return ci ? ci->name : "?";
}

/* The column pointers of chunk k (see tecs_archetype_t.cols). */
static inline char *const *tecs__kcols(const tecs_archetype_t *a, uint32_t k)
{
    return a->cols + (size_t)k * (uint32_t)a->stride;
}

/* The column pointers of the chunk holding row. */
static inline char *const *tecs__chunk_of(const tecs_archetype_t *a, const tecs_world_t *w,
                                          uint32_t row)
{
    return tecs__kcols(a, row >> w->arch.shift);
}

/* Column col of a chunk (its column pointers cp): its first value. */
static inline char *tecs__chunk_col(char *const *cp, int32_t col)
{
    return cp[1 + col];
}

/* The entity column of a chunk (its column pointers cp). */
static inline tecs_entity_t *tecs__chunk_ents(char *const *cp)
{
    return (tecs_entity_t *)(void *)cp[0];
}

static inline void *tecs__col_ptr(const tecs_archetype_t *a, const tecs_world_t *w,
                                  int32_t col, uint32_t row)
{
    return tecs__chunk_col(tecs__chunk_of(a, w, row), col) +
           (size_t)(row & w->arch.mask) * a->col_size[col];
}

static inline tecs_entity_t *tecs__ent_ptr(const tecs_archetype_t *a, const tecs_world_t *w,
                                           uint32_t row)
{
    return tecs__chunk_ents(tecs__chunk_of(a, w, row)) + (row & w->arch.mask);
}

static inline bool tecs__arch_has_rows(const tecs_world_t *w, const tecs_archetype_t *a,
                                       int32_t n)
{
    return (int64_t)a->count + n <= ((int64_t)a->nchunks << w->arch.shift);
}

static inline tecs_err_t tecs__arch_reserve_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n)
{
    if (TECS__LIKELY(tecs__arch_has_rows(w, a, n)))
        return TECS_OK;
    return tecs__arch_grow_rows(w, a, n);
}

/* Copy one plain value; small sizes become single moves. */
static inline void tecs__copy_value(void *dst, const void *src, uint32_t size)
{
    if (TECS__LIKELY(size == 8)) {       /* two floats, an id: the common case */
        memcpy(dst, src, 8);
        return;
    }
    switch (size) {
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 12: memcpy(dst, src, 12); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, size); break;
    }
}

/* Zero one plain value. */
static inline void tecs__zero_value(void *dst, uint32_t size)
{
    static const char zero[16];
    if (size <= 16)
        tecs__copy_value(dst, zero, size);
    else
        memset(dst, 0, size);
}

/* tecs__arch_fill_hole for an archetype without hooks: plain copies. */
static inline void tecs__fill_hole_plain(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    uint32_t last = (uint32_t)a->count - 1;
    char *const *hc = tecs__chunk_of(a, w, row), *const *lc = tecs__chunk_of(a, w, last);
    const size_t hi = row & w->arch.mask, li = last & w->arch.mask;
    const uint32_t *size = a->col_size;
    for (int32_t c = 0, n = a->ncols; c < n; c++)
        tecs__copy_value(hc[1 + c] + hi * size[c], lc[1 + c] + li * size[c], size[c]);
    tecs_entity_t moved = tecs__chunk_ents(lc)[li];
    tecs__chunk_ents(hc)[hi] = moved;
    w->recs[TECS_ENTITY_INDEX(moved)].row = row;
}

static inline void tecs__arch_remove_row(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    if (row != (uint32_t)a->count - 1) {
        if (a->plain)
            tecs__fill_hole_plain(w, a, row);
        else
            tecs__arch_fill_hole(w, a, row);
    }
    if ((--a->count & (int32_t)w->arch.mask) == 0 && a->nchunks > (a->count >> w->arch.shift) + 1)
        tecs__arch_trim(w, a);
}

static inline tecs__record *tecs__ei_alive(const tecs_world_t *w, tecs_entity_t e)
{
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(index >= (uint32_t)w->ei.nrecs))
        return NULL;
    tecs__record *r = &w->recs[index];
    if (TECS__UNLIKELY(r->gen != TECS_ENTITY_GENERATION(e) || r->arch >= TECS__ARCH_RETIRED))
        return NULL;
    return r;
}

static inline tecs__record *tecs__ei_known(const tecs_world_t *w, tecs_entity_t e)
{
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(index >= (uint32_t)w->ei.nrecs))
        return NULL;
    tecs__record *r = &w->recs[index];
    if (r->gen != TECS_ENTITY_GENERATION(e) || r->arch == TECS__ARCH_DEAD ||
        r->arch == TECS__ARCH_RETIRED)
        return NULL;
    return r;
}

/* tecs__ei_reserve(w, 1) in its common case: room for one more slot is
** there already. */
static inline tecs_err_t tecs__ei_reserve1(tecs_world_t *w)
{
    if (TECS__LIKELY(w->ei.nalive + w->ei.npending < w->ei.max_entities &&
                     (w->ei.nfree > 0 || w->ei.nrecs < w->ei.cap_recs)))
        return TECS_OK;
    return tecs__ei_reserve(w, 1);
}

static inline tecs_entity_t tecs__ei_take(tecs_world_t *w)
{
    uint32_t index;
    tecs__record *r;
    if (w->ei.free_head != TECS__NO_SLOT) {
        index = w->ei.free_head;
        r = &w->recs[index];
        w->ei.free_head = r->row;
        if (w->ei.free_head == TECS__NO_SLOT)
            w->ei.free_tail = TECS__NO_SLOT;
        w->ei.nfree--;
    } else {
        assert(w->ei.nrecs < w->ei.cap_recs);
        index = (uint32_t)w->ei.nrecs++;
        r = &w->recs[index];
        r->gen = 1;
    }
    r->arch = TECS__ARCH_PENDING;
    r->row = 0;
    return tecs__make_id(index, r->gen);
}

static inline void tecs__ei_release(tecs_world_t *w, uint32_t index)
{
    tecs__record *r = &w->recs[index];
    if (r->gen == UINT32_MAX) {
        r->arch = TECS__ARCH_RETIRED;
        return;
    }
    r->gen++;
    r->arch = TECS__ARCH_DEAD;
    r->row = TECS__NO_SLOT;
    if (w->ei.free_tail == TECS__NO_SLOT)
        w->ei.free_head = index;
    else
        w->recs[w->ei.free_tail].row = index;
    w->ei.free_tail = index;
    w->ei.nfree++;
}

/* The registry entry of column col (entries move when the registry grows,
** so archetypes keep ids, not pointers). */
static inline const tecs__comp *tecs__col_info(const tecs_world_t *w, const tecs_archetype_t *a,
                                               int32_t col)
{
    return &w->comp.comps[a->col_comp[col]];
}

static inline tecs_archetype_t *tecs__rec_arch(const tecs_world_t *w, const tecs__record *r)
{
    return w->archs[r->arch & TECS__ARCH_MASK];
}

/* The archetype a leads to by adding (removing) c, if that edge is cached;
** else NULL (tecs__arch_with / tecs__arch_without find or make it). */
static inline tecs_archetype_t *tecs__edge_add(const tecs_world_t *w, const tecs_archetype_t *a,
                                               tecs_comp_t c)
{
    return c < (tecs_comp_t)a->nedges && a->edge_add[c] != TECS__NO_EDGE
               ? w->archs[a->edge_add[c]] : NULL;
}

static inline tecs_archetype_t *tecs__edge_rem(const tecs_world_t *w, const tecs_archetype_t *a,
                                               tecs_comp_t c)
{
    return c < (tecs_comp_t)a->nedges && a->edge_rem[c] != TECS__NO_EDGE
               ? w->archs[a->edge_rem[c]] : NULL;
}


/* ---- store.c: the engine's fast paths, inline in the front end too ---- */

/* Construct one value at to, copied from value if given. */
static inline void tecs__construct_one(tecs_world_t *w, const tecs__comp *ci, void *to,
                                 const void *value)
{
    if (value == NULL) {
        if (ci->ctor)
            tecs__comp_ctor(w, ci, to, 1);
        else
            memset(to, 0, ci->size);
    } else if (!ci->ctor && !ci->copy) {
        tecs__copy_value(to, value, ci->size);
    } else {
        tecs__comp_ctor(w, ci, to, 1);
        tecs__comp_copy(w, ci, to, value, 1);
    }
}

/* Move the entity of record r from a to b, which is a plus (adding) or minus
** one component whose column in the larger archetype is k (COL_TAG for a
** tag). Columns follow component-id order, so column j of b is column j of a
** before k and j -/+ 1 after it: no lookup per column. The added column is
** constructed (from value if given); a removed one must be destroyed
** already. Rows must be reserved in b. With hooks, each value moves through
** its hook; plain values are copied. */
static TECS__INLINE void tecs__move_row_with(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                                       tecs_archetype_t *b, int32_t k, bool adding,
                                       const void *value, bool plain)
{
    uint32_t src = r->row, dst = (uint32_t)b->count++;
    /* The two chunks' column pointers ([0] the ids, [1 + j] column j). */
    char *const *sc = tecs__chunk_of(a, w, src), *const *dc = tecs__chunk_of(b, w, dst);
    const size_t si = src & w->arch.mask, di = dst & w->arch.mask;
    tecs__chunk_ents(dc)[di] = tecs__chunk_ents(sc)[si];
    const uint32_t *size = b->col_size;
    const int32_t n = b->ncols, same = k < 0 ? n : k;   /* columns below k line up */
    const int32_t shift = adding ? -1 : 1;              /* column j of b is j + shift of a */
#define TO(j)   (dc[1 + (j)] + di * size[j])
#define FROM(j, sj) (sc[1 + (sj)] + si * size[j])
    if (plain) {
        for (int32_t j = 0; j < same; j++)
            tecs__copy_value(TO(j), FROM(j, j), size[j]);
        if (k >= 0 && adding) {
            if (value)
                tecs__copy_value(TO(k), value, size[k]);
            else
                tecs__zero_value(TO(k), size[k]);
        }
        for (int32_t j = same + adding; j < n; j++)
            tecs__copy_value(TO(j), FROM(j, j + shift), size[j]);
    } else {
        for (int32_t j = 0; j < same; j++)
            tecs__comp_move(w, tecs__col_info(w, b, j), TO(j), FROM(j, j), 1);
        if (k >= 0 && adding)
            tecs__construct_one(w, tecs__col_info(w, b, k), TO(k), value);
        for (int32_t j = same + adding; j < n; j++)
            tecs__comp_move(w, tecs__col_info(w, b, j), TO(j), FROM(j, j + shift), 1);
    }
#undef TO
#undef FROM
    if (!plain)                 /* a hook's queued birth may move the records */
        r = &w->recs[TECS_ENTITY_INDEX(tecs__chunk_ents(dc)[di])];
    r->arch = b->id | (r->arch & ~TECS__ARCH_MASK);
    r->row = dst;
    /* Last: the hole fill may run move hooks of a, and r is done with. */
    tecs__arch_remove_row(w, a, src);
}


/* Adding c with b as the target is a plain row move that cannot fail:
** nobody to ask or tell, no hook to run, a row free in b. */
static inline bool tecs__quiet_add(const tecs_world_t *w, const tecs_archetype_t *b,
                                   tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    return b->plain && !w->bus.watch_moves && (ci->veto | ci->watch) == 0 &&
           tecs__arch_has_rows(w, b, 1);
}

/* Removing c from a plain archetype with b as the target is a plain row
** move that cannot fail: nobody to tell, a row free in b. */
static inline bool tecs__quiet_remove(const tecs_world_t *w, const tecs_archetype_t *b,
                                      tecs_comp_t c)
{
    return !w->bus.watch_moves && w->comp.comps[c].watch == 0 && tecs__arch_has_rows(w, b, 1);
}

/* The quiet add of c to the entity of record r through its hop, if the hop
** starts at r's archetype: true if done. */
static TECS__INLINE bool tecs__add_quick(tecs_world_t *w, tecs__record *r, tecs_comp_t c,
                                         const void *value)
{
    const tecs__hop *h = &w->store.hop_add[c];
    if (TECS__LIKELY(c < TECS__HOPS) && TECS__LIKELY(tecs__hop_at(h, r)) &&
        tecs__quiet_add(w, h->to, c)) {
        tecs__move_row_with(w, r, h->from, h->to, h->col, true, value, true);
        return true;
    }
    return false;
}

/* The quiet remove of c, as tecs__add_quick. */
static TECS__INLINE bool tecs__remove_quick(tecs_world_t *w, tecs__record *r, tecs_comp_t c)
{
    const tecs__hop *h = &w->store.hop_rem[c];
    if (TECS__LIKELY(c < TECS__HOPS) && TECS__LIKELY(tecs__hop_at(h, r)) &&
        tecs__quiet_remove(w, h->to, c)) {
        tecs__move_row_with(w, r, h->from, h->to, h->col, false, NULL, true);
        return true;
    }
    return false;
}

#endif /* TECS_PRIVATE_H */
