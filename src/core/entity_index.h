/*
** entity_index.h — id slots, generations, the FIFO free list
** (entity_index.c). Its types, its state, its interface and its inline
** functions, written against its state alone. Included by private.h only.
*/
#ifndef TECS_ENTITY_INDEX_H
#define TECS_ENTITY_INDEX_H

/* A slot is tinyecs.h's tecs_slot_t, which handles read inline. While
** alive, arch is the archetype index (with flag bits); while dead, arch is
** TECS__ARCH_DEAD and row links the free list. */
typedef tecs_slot_t tecs__record;

#define TECS__ARCH_DEAD     TECS_SLOT_DEAD      /* slot is free             */
#define TECS__ARCH_PENDING  TECS_SLOT_PENDING   /* id handed out, birth queued */
#define TECS__ARCH_RETIRED  TECS_SLOT_RETIRED   /* generation exhausted; never reused */
#define TECS__KILL_QUEUED   TECS_SLOT_KILL      /* a delayed destroy is queued */
#define TECS__REMOVE_QUEUED TECS_SLOT_REMOVE    /* a deferred remove is queued */
#define TECS__DESTROY_QUEUED TECS_SLOT_DESTROY  /* a deferred destroy is queued */
#define TECS__ROW_DELAYED   1u           /* row of a PENDING slot whose birth
                                            waits in the delayed queue      */
#define TECS__ARCH_MASK     TECS_SLOT_ARCH
/* So every state under the mask is out of an archetype table's range, and
** tecs_handle_get's one compare turns dead, pending and retired slots away. */
_Static_assert(TECS_MAX_ARCHETYPES <= (TECS__ARCH_RETIRED & TECS__ARCH_MASK),
               "slot states under TECS__ARCH_MASK are no archetype index");
#define TECS__NO_SLOT       0xffffffffu

static inline tecs_entity_t tecs__make_id(uint32_t index, uint32_t gen)
{
    return ((uint64_t)gen << 32) | index;
}

typedef struct tecs__ei_state {
    tecs__record *recs;         /* the slots                                */
    int32_t nrecs;              /* slots ever handed out                    */
    int32_t cap_recs;
    uint32_t free_head;         /* oldest free slot, or TECS__NO_SLOT       */
    uint32_t free_tail;         /* newest free slot                         */
    int32_t nfree;
    int32_t nalive;             /* live entities                            */
    int32_t npending;           /* ids handed out, birth queued             */
    int32_t max_entities;
    int32_t nretired;           /* slots retired                            */
    uint64_t pushes;            /* slots ever appended to the free list     */
    uint64_t pops;              /* slots ever taken from its head: a delta
                                   since a mark names the list's change by
                                   these two counts (snapshot/delta.c)      */
} tecs__ei_state;

/* The layer's inline functions take its state, not the world: the macros
** of the same name pass &w->ei, so they read as before at the call sites. */

/* The record of a live entity, or NULL. */
#define tecs__ei_alive(w, e) tecs__ei_alive_in(&(w)->ei, (e))
static inline tecs__record *tecs__ei_alive_in(const tecs__ei_state *s, tecs_entity_t e)
{
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(index >= (uint32_t)s->nrecs))
        return NULL;
    tecs__record *r = &s->recs[index];
    if (TECS__UNLIKELY(r->gen != TECS_ENTITY_GENERATION(e) || r->arch >= TECS__ARCH_RETIRED))
        return NULL;
    return r;
}

/* The record of an entity that is alive or pending, or NULL. */
#define tecs__ei_known(w, e) tecs__ei_known_in(&(w)->ei, (e))
static inline tecs__record *tecs__ei_known_in(const tecs__ei_state *s, tecs_entity_t e)
{
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(index >= (uint32_t)s->nrecs))
        return NULL;
    tecs__record *r = &s->recs[index];
    if (r->gen != TECS_ENTITY_GENERATION(e) || r->arch == TECS__ARCH_DEAD ||
        r->arch == TECS__ARCH_RETIRED)
        return NULL;
    return r;
}

/* Make room for n more slots, so that n tecs__ei_take calls cannot fail. */
tecs_err_t tecs__ei_reserve(tecs_world_t *w, int32_t n);

/* Room for one more slot is there already (tecs__ei_reserve1's common case). */
static inline bool tecs__ei_has_room_in(const tecs__ei_state *s)
{
    return s->nalive + s->npending < s->max_entities && (s->nfree > 0 || s->nrecs < s->cap_recs);
}

/* tecs__ei_reserve(w, 1), without a call when there is room. */
#define tecs__ei_reserve1(w) \
    (TECS__LIKELY(tecs__ei_has_room_in(&(w)->ei)) ? TECS_OK : tecs__ei_reserve((w), 1))

/* Take the oldest free slot off the free list, which is not empty: its
** index. Its record is the caller's to write. */
#define tecs__ei_pop_free(w) tecs__ei_pop_free_in(&(w)->ei)
static inline uint32_t tecs__ei_pop_free_in(tecs__ei_state *s)
{
    uint32_t index = s->free_head;
    s->free_head = s->recs[index].row;
    if (s->free_head == TECS__NO_SLOT)
        s->free_tail = TECS__NO_SLOT;
    s->nfree--;
    s->pops++;
    return index;
}

/* Take the oldest free slot, or a new one (room reserved first). */
#define tecs__ei_take(w) tecs__ei_take_in(&(w)->ei)
static inline tecs_entity_t tecs__ei_take_in(tecs__ei_state *s)
{
    uint32_t index;
    tecs__record *r;
    if (s->free_head != TECS__NO_SLOT) {
        index = tecs__ei_pop_free_in(s);
        r = &s->recs[index];
    } else {
        assert(s->nrecs < s->cap_recs);
        index = (uint32_t)s->nrecs++;
        r = &s->recs[index];
        r->gen = 1;
    }
    r->arch = TECS__ARCH_PENDING;
    r->row = 0;
    return tecs__make_id(index, r->gen);
}

/* The slots the next tecs__ei_take calls will take, in order, walked
** without taking them (room reserved): start with tecs__ei_ahead, then
** each tecs__ei_ahead_next is the slot of one more take. */
typedef struct tecs__ei_walk {
    uint32_t free;              /* next on the free list, or TECS__NO_SLOT  */
    uint32_t fresh;             /* then new slots from here                 */
} tecs__ei_walk;

#define tecs__ei_ahead(w) ((tecs__ei_walk){ (w)->ei.free_head, (uint32_t)(w)->ei.nrecs })
#define tecs__ei_ahead_next(w, k) tecs__ei_ahead_next_in(&(w)->ei, (k))
static inline uint32_t tecs__ei_ahead_next_in(const tecs__ei_state *s, tecs__ei_walk *k)
{
    if (k->free == TECS__NO_SLOT)
        return k->fresh++;
    uint32_t slot = k->free;
    k->free = s->recs[slot].row;
    return slot;
}

/* Give a slot back: its generation moves on, its id goes stale. */
#define tecs__ei_release(w, index) tecs__ei_release_in(&(w)->ei, (index))
static inline void tecs__ei_release_in(tecs__ei_state *s, uint32_t index)
{
    tecs__record *r = &s->recs[index];
    if (r->gen == UINT32_MAX) {
        r->arch = TECS__ARCH_RETIRED;
        s->nretired++;
        return;
    }
    r->gen++;
    r->arch = TECS__ARCH_DEAD;
    r->row = TECS__NO_SLOT;
    if (s->free_tail == TECS__NO_SLOT)
        s->free_head = index;
    else
        s->recs[s->free_tail].row = index;
    s->free_tail = index;
    s->nfree++;
    s->pushes++;
}

void tecs__ei_fini(tecs_world_t *w);
/* Thread the free list through every dead slot in slot order, the lowest
** first (tecs_world_reset: the order new ids take then does not depend on
** the order the entities died in). It counts as taking every free slot and
** appending them again. */
void tecs__ei_relink(tecs_world_t *w);
/* Record TECS_EDEAD: e is not alive. */
tecs_err_t tecs__err_dead(tecs_world_t *w, tecs_entity_t e);

#endif /* TECS_ENTITY_INDEX_H */
