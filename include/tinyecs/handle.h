/*
** tinyecs/handle.h — handles: the common case of get, add, remove and
** enable of one component done inline in the caller's loop
** (docs/lookups.md). Conventions as tinyecs.h's.
*/
#ifndef TINYECS_HANDLE_H
#define TINYECS_HANDLE_H

#include "../tinyecs.h"

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
