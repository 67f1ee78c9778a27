/*
** entity_index.h — id slots, generations, the FIFO free list
** (entity_index.c). Its types, its state and its interface; then, in
** private.h's second pass (TECS__WORLD_DONE, once tecs_world_t is
** complete), its inline functions. Included by private.h only.
*/
#ifndef TECS_ENTITY_INDEX_H
#define TECS_ENTITY_INDEX_H

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

#endif /* TECS_ENTITY_INDEX_H */

#if defined(TECS__WORLD_DONE) && !defined(TECS_ENTITY_INDEX_INLINES)
#define TECS_ENTITY_INDEX_INLINES

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

#endif /* TECS_ENTITY_INDEX_INLINES */
