/*
** entity_index.c — id slots, generations and the FIFO free list.
**
** An entity id is two halves:
**
**     63            32 31             0
**     +---------------+---------------+
**     |  generation   |  slot index   |
**     +---------------+---------------+
**
** The slot's record (12 bytes) says where the entity lives:
**
**     recs[index] = { gen, arch | flags, row }
**
** An id is alive when its index is in range, its generation equals the
** record's, and the record's arch is an archetype (not DEAD, PENDING or
** RETIRED). So is_alive is two loads and two compares.
**
** Freed slots form a singly linked FIFO list threaded through `row`:
** free_head is the oldest dead slot and is reused first (tinyecs's
** "cemetery"); free_tail is the newest. A freed slot's generation moves on,
** so the old id goes stale. Generations start at 1, so no id is ever 0; a
** slot whose generation would wrap is RETIRED and never handed out again.
**
** The lookups (tecs__ei_alive, tecs__ei_known), taking and releasing a
** slot are inline (entity_index.h): they are on every hot path.
**
** Calls: base.c.
*/
#include "private.h"

bool tecs_is_alive(const tecs_world_t *w, tecs_entity_t e)
{
    return w != NULL && tecs__ei_alive(w, e) != NULL;
}

tecs_err_t tecs__ei_reserve(tecs_world_t *w, int32_t n)
{
    int64_t used = (int64_t)w->ei.nalive + w->ei.npending;
    if (n < 0 || used + n > w->ei.max_entities)
        return tecs__err(w, TECS_ELIMIT, "entity limit (%d) reached", w->ei.max_entities);
    int32_t fresh = n > w->ei.nfree ? n - w->ei.nfree : 0;
    if ((int64_t)w->ei.nrecs + fresh > UINT32_MAX - 1)
        return tecs__err(w, TECS_ELIMIT, "no slot left for an entity");
    if (w->ei.nrecs + fresh <= w->ei.cap_recs)
        return TECS_OK;
    return tecs__grow(w, (void **)&w->ei.recs, &w->ei.cap_recs, w->ei.nrecs + fresh,
                      sizeof *w->ei.recs);
}

void tecs__ei_fini(tecs_world_t *w)
{
    tecs__free(w, w->ei.recs, (size_t)w->ei.cap_recs * sizeof *w->ei.recs);
    w->ei.recs = NULL;
    w->ei.cap_recs = w->ei.nrecs = 0;
}

void tecs__ei_relink(tecs_world_t *w)
{
    tecs__ei_state *s = &w->ei;
    s->pops += (uint64_t)s->nfree;
    s->free_head = s->free_tail = TECS__NO_SLOT;
    s->nfree = 0;
    for (int32_t i = 0; i < s->nrecs; i++) {
        tecs__record *r = &s->recs[i];
        if (r->arch != TECS__ARCH_DEAD)
            continue;
        r->row = TECS__NO_SLOT;
        if (s->free_tail == TECS__NO_SLOT)
            s->free_head = (uint32_t)i;
        else
            s->recs[s->free_tail].row = (uint32_t)i;
        s->free_tail = (uint32_t)i;
        s->nfree++;
    }
    s->pushes += (uint64_t)s->nfree;
}

/* Record TECS_EDEAD for e. */
tecs_err_t tecs__err_dead(tecs_world_t *w, tecs_entity_t e)
{
    return tecs__err(w, TECS_EDEAD, TECS__ENT_FMT " is not alive", TECS__ENT(e));
}
