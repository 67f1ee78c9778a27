/*
** base.h — the allocator, the error state, the callback depths (base.c).
** Its types, its state and its interface, and its inline functions too:
** they reach the world's base state through tecs__base_of, not through
** tecs_world_t, so they need no second pass and cannot touch any other
** layer's state. Included by private.h only.
*/
#ifndef TECS_BASE_H
#define TECS_BASE_H

void *tecs__alloc(tecs_world_t *w, size_t size);
void *tecs__realloc(tecs_world_t *w, void *p, size_t osize, size_t nsize);
void tecs__free(tecs_world_t *w, void *p, size_t size);
/* The bytes of n elements of esize, or SIZE_MAX when that does not fit in
** a size_t (on a 32-bit target): an allocation of it then fails as out of
** memory instead of getting a block the size of the wrapped product. Every
** size computed from a count goes through here. */
static inline size_t tecs__bytes(uint64_t n, size_t esize)
{
    return esize && n > SIZE_MAX / esize ? SIZE_MAX : (size_t)n * esize;
}
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
    TECS__RESETTING,            /* tecs_world_reset is destroying every entity */
    TECS__IN_ALLOC,             /* its allocator is running                 */
    TECS__WORKER,               /* a worker context (worker.c): reads and
                                   queued changes are taken, nothing else   */
    TECS__PARALLEL,             /* workers run: calls through the world
                                   itself are refused, recording nothing    */
    TECS__RETIRED,              /* a worker context after its run: every
                                   call is refused                          */
    TECS__SNAPSHOT              /* a snapshot's callback runs (snapshot/):
                                   every call is refused                    */
};
/* Set the last error back to err after calls made on the caller's behalf
** replaced it (the message of a code other than TECS_OK is then its
** general text). */
void tecs__err_reset(tecs_world_t *w, tecs_err_t err);
/* Refuse a call on a closed world: TECS_EBUSY, with the reason (recorded
** on w, except while its workers run: the world is theirs to read). */
tecs_err_t tecs__refuse_closed(tecs_world_t *w);
/* tecs__enter_read's slow path: true (refused) inside the allocator and
** while workers run; false while freeing, resetting, and in a worker. */
bool tecs__refuse_read(tecs_world_t *w);
/* The start of every public function that can fail (defined after the
** world struct): a closed world refuses the call; otherwise the last error
** is cleared, so that it always describes the latest such call. */
static inline tecs_err_t tecs__enter(tecs_world_t *w);
/* The start of a public read that can fail (tecs_get, lookups): the same,
** but allowed while the world is being freed and in a worker; refused
** inside its allocator, where the world's arrays may be moving, and
** through the world itself while its workers run. */
static inline tecs_err_t tecs__enter_read(tecs_world_t *w);
/* The start of a change that a worker queues (tecs_add, tecs_remove,
** tecs_set, tecs_destroy, tecs_modified): tecs__enter, but allowed in a
** worker. */
static inline tecs_err_t tecs__enter_change(tecs_world_t *w);
/* Messages name an entity as "entity 12:3" (slot:generation):
** tecs__err(w, code, TECS__ENT_FMT " is not alive", TECS__ENT(e)). */
#define TECS__ENT_FMT "entity %u:%u"
#define TECS__ENT(e)  TECS_ENTITY_INDEX(e), TECS_ENTITY_GENERATION(e)

/* A start of tecs_iter that an add-on implements (query.h's iteration
** sources, the worker add-on's parts): the world is the caller's, the
** description tecs_iter's. */
typedef tecs_iter_t (*tecs__iter_start_fn)(tecs_world_t *w, const tecs_iter_desc_t *d);

/* The world's allocator, its error state and how deep in callbacks it is. */
typedef struct tecs__base {
    tecs_alloc_fn alloc;
    void *alloc_ud;
    size_t mem;                 /* bytes held through alloc                 */
    tecs_err_t err;
    char errmsg[160];
    uint8_t closed;             /* TECS__OPEN, or why calls are refused:
                                   set through tecs__set_closed             */
    int32_t cb_depth;           /* user callbacks running (tecs__cb_begin)  */
    int32_t hook_depth;         /* of those, lifecycle hooks and order
                                   functions: rows are in motion            */
    uint32_t gate;              /* TECS__GATE_* bits: what the short paths
                                   of tecs_add, tecs_remove and tecs_destroy
                                   must mind; read with defer_depth, its
                                   neighbour, as one word (tecs__gate_open) */
    union {                     /* handles read the two as hgate            */
        tecs_handle_gate_t hgate;
        struct {
            int32_t defer_depth; /* open iterations, systems, callbacks:
                                   while not 0, structural changes queue    */
            uint32_t stop;      /* 0 while open with no hook running        */
        };
    };
    /* A worker context's (closed is TECS__WORKER; worker.c): */
    tecs_world_t *owner;        /* the world it works for; NULL in a world  */
    const uint64_t *may_read;   /* bits by component id: what its system may
                                   read (tecs_get) / write (tecs_get_mut);  */
    const uint64_t *may_write;  /* NULL: anything                           */
    int32_t may_n;              /* the component ids the bits cover         */
    uint32_t run;               /* its runs so far: a part iterator steps
                                   only in the run that made it             */
    uint64_t ident;             /* never 0: the world's identity, which its
                                   marks carry (snapshot/delta.c), from its
                                   address and the clock at its birth       */
    tecs__iter_start_fn part_start; /* tecs_iter's part form (worker.c sets
                                   it at its first split); NULL: no part    */
} tecs__base;

/* The gate word's bits: each is set while its state is on, by whoever
** changes that state (the structure checker compares them). */
#define TECS__GATE_STOP   1u    /* stop is not 0: closed, or a hook runs    */
#define TECS__GATE_MOVES  2u    /* some listener wants move events          */
#define TECS__GATE_COMPS  4u    /* some listener wants component events     */
#define TECS__GATE_SPARSE 8u    /* some sparse set has members              */
#define TECS__GATE_DESTROY 16u  /* some listener must hear of each destroy  */
#define TECS__GATE_ALL    31u

_Static_assert(offsetof(tecs__base, defer_depth) == offsetof(tecs__base, gate) + 4,
               "tecs__gate_open reads the gate word and defer_depth as one");

/* The base state of w. It is the world's first member (private.h asserts
** it), so this layer's inline functions reach it without seeing the rest
** of the world. */
static inline tecs__base *tecs__base_of(tecs_world_t *w)
{
    return (tecs__base *)(void *)w;
}

/* The refusal returns the constant, so that the caller's refusal is a
** tail that leaves at once, apart from its fast path. */
static inline tecs_err_t tecs__enter(tecs_world_t *w)
{
    if (TECS__UNLIKELY(tecs__base_of(w)->closed != TECS__OPEN)) {
        tecs__refuse_closed(w);
        return TECS_EBUSY;
    }
    tecs__base_of(w)->err = TECS_OK;
    return TECS_OK;
}

static inline tecs_err_t tecs__enter_read(tecs_world_t *w)
{
    if (TECS__UNLIKELY(tecs__base_of(w)->closed != TECS__OPEN) && tecs__refuse_read(w))
        return TECS_EBUSY;
    tecs__base_of(w)->err = TECS_OK;
    return TECS_OK;
}

static inline tecs_err_t tecs__enter_change(tecs_world_t *w)
{
    uint8_t closed = tecs__base_of(w)->closed;
    if (TECS__UNLIKELY(closed != TECS__OPEN) && closed != TECS__WORKER) {
        tecs__refuse_closed(w);
        return TECS_EBUSY;
    }
    tecs__base_of(w)->err = TECS_OK;
    return TECS_OK;
}

/* Is w a worker context? */
static inline bool tecs__in_worker(const tecs_world_t *w)
{
    return tecs__base_of((tecs_world_t *)(uintptr_t)w)->closed == TECS__WORKER;
}

/* Component c's bit in a set of bits by component id (a worker's access). */
static inline void tecs__bit_set(uint64_t *bits, tecs_comp_t c)
{
    bits[c >> 6] |= UINT64_C(1) << (c & 63);
}

/* May a worker context touch component c (bits: its may_read or may_write)? */
static inline bool tecs__worker_may(const tecs_world_t *w, const uint64_t *bits, tecs_comp_t c)
{
    const tecs__base *b = tecs__base_of((tecs_world_t *)(uintptr_t)w);
    return bits == NULL || ((int32_t)c < b->may_n && (bits[c >> 6] >> (c & 63)) & 1u);
}

/* Put the last error back to `outer`, what it was before a callback or a
** flush ran calls of its own: their errors are for whoever made those
** calls, not for the caller of the outer call. */
static inline void tecs__err_restore(tecs_world_t *w, tecs_err_t outer)
{
    if (TECS__UNLIKELY(tecs__base_of(w)->err != outer))
        tecs__err_reset(w, outer);
}

/* Around every user callback the library calls (R1 in tinyecs.h): the
** world is deferred while it runs, and tecs_world_free, tecs_progress and
** the applies of delayed changes refuse. Errors of the calls it makes are
** its own: when it returns the last error is as it was (tecs__cb_end gets
** what tecs__cb_begin returned). */
static inline tecs_err_t tecs__cb_begin(tecs_world_t *w)
{
    tecs__base_of(w)->defer_depth++;
    tecs__base_of(w)->cb_depth++;
    return tecs__base_of(w)->err;
}

static inline void tecs__cb_end(tecs_world_t *w, tecs_err_t outer)
{
    tecs__base_of(w)->cb_depth--;
    tecs__base_of(w)->defer_depth--;
    tecs__err_restore(w, outer);
}

/* Set (on) or clear the gate bits `bit`. */
static inline void tecs__gate_put(tecs__base *b, uint32_t bit, bool on)
{
    b->gate = on ? b->gate | bit : b->gate & ~bit;
}

/* Are the gate bits `bits` clear and the world not deferred? One load of
** the two neighbours, one test: the short structural paths' entry. */
static inline bool tecs__gate_open(const tecs_world_t *w, uint32_t bits)
{
    const struct { uint32_t gate; int32_t defer; } m = { bits, -1 };
    uint64_t v, mask;
    memcpy(&v, (const char *)w + offsetof(tecs__base, gate), sizeof v);
    memcpy(&mask, &m, sizeof mask);
    return (v & mask) == 0;
}

/* Keep stop, and the gate's STOP bit, as closed and hook_depth say. */
static inline void tecs__stop_sync(tecs__base *b)
{
    b->stop = (uint32_t)(b->closed != TECS__OPEN) | (uint32_t)(b->hook_depth > 0) << 1;
    tecs__gate_put(b, TECS__GATE_STOP, b->stop != 0);
}

/* Say why w refuses calls (TECS__OPEN: it does not). Every change of
** closed goes through here, so that stop follows. */
static inline void tecs__set_closed(tecs_world_t *w, uint8_t why)
{
    tecs__base_of(w)->closed = why;
    tecs__stop_sync(tecs__base_of(w));
}

/* Around a lifecycle hook (ctor, dtor, copy, move) or an order function:
** rows are in motion, so writes queue too and objects cannot be created or
** freed. Nothing is applied when it returns: the outermost public call
** applies the queue once the rows are in place. */
static inline tecs_err_t tecs__hook_begin(tecs_world_t *w)
{
    tecs__base_of(w)->hook_depth++;
    tecs__stop_sync(tecs__base_of(w));
    return tecs__cb_begin(w);
}

static inline void tecs__hook_end(tecs_world_t *w, tecs_err_t outer)
{
    tecs__base_of(w)->hook_depth--;
    tecs__stop_sync(tecs__base_of(w));
    tecs__cb_end(w, outer);
}

/* tecs__enter for a call that creates or frees an object (a component, an
** index, filter, cache, query, observer or system): refused while rows are
** in motion. */
static inline tecs_err_t tecs__enter_object(tecs_world_t *w)
{
    tecs_err_t err = tecs__enter(w);
    if (err == TECS_OK && TECS__UNLIKELY(tecs__base_of(w)->hook_depth > 0))
        err = tecs__err(w, TECS_EBUSY, "objects cannot be created or freed "
                                       "while a lifecycle hook or an order function runs");
    return err;
}

/* The three starts above at a public entry that takes the world itself: a
** NULL world is refused first (TECS_EINVAL, nothing recorded). A call
** through an object, whose world is never NULL, uses the plain forms. */
static inline tecs_err_t tecs__enter_world(tecs_world_t *w)
{
    return w == NULL ? TECS_EINVAL : tecs__enter(w);
}

static inline tecs_err_t tecs__enter_world_change(tecs_world_t *w)
{
    return w == NULL ? TECS_EINVAL : tecs__enter_change(w);
}

static inline tecs_err_t tecs__enter_world_object(tecs_world_t *w)
{
    return w == NULL ? TECS_EINVAL : tecs__enter_object(w);
}

#endif /* TECS_BASE_H */
