/*
** query_sparse.c — the row filter of a sparse component's term: "has" is
** the row's entity a member of the component's sparse set (sparse.c).
**
** No archetype holds a sparse component, so the term has no column
** (TECS__FK_NOCOL) and every archetype's rows may have it: the filter's
** entry is 0 in every match. A word of "has" bits is one member lookup a
** row:
**
**     chunk rows:   e0  e1  e2  e3 ...      (the entity column)
**     has bits:      0   1   0   0 ...      (e1 in the set)
**
** The rows of every archetype are alike (none has it) while the set is
** empty. The set's member list is the filter's list of the entities that
** have it, which the engine walks when it is short next to the rows; a
** one-row step's value is the member's, in the set.
**
** An entity whose REMOVE events of the component are being raised
** (store.c's `leaving`) is a member no more as a query reads it, but the
** entity test of a membership event still counts it in.
**
** Calls: sparse.c (its inline lookups); reads store.c's `leaving`.
*/
#include "private.h"

/* Is e a member of sparse c, as a query reads it? */
static inline bool sparse_has(const tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    return tecs__sparse_get_id(w, c, e) != NULL &&
           !(e == w->store.leaving && c == w->store.leaving_comp);
}

static bool sparse_claim(const tecs_world_t *w, tecs__filter *f)
{
    return tecs__comp_is_sparse(w, f->term.comp);
}

static int8_t sparse_match(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a)
{
    (void)w, (void)f, (void)a;
    return 0;
}

static bool sparse_uniform(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                           int8_t entry)
{
    (void)a, (void)entry;
    return tecs__sparse_count(w, f->term.comp) == 0;
}

/* The members among rows [wi * 64, wi * 64 + 64) of chunk k, as bits. */
static uint64_t sparse_word(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                            int8_t entry, int32_t k, uint32_t wi)
{
    (void)entry;
    if (k < 0)
        return 0;               /* (uniform only while the set is empty) */
    const tecs_entity_t *ents = tecs__chunk_ents(tecs__kcols(a, (uint32_t)k));
    int32_t left = a->count - k * (int32_t)w->arch.rows;
    uint32_t rows = left < (int32_t)w->arch.rows ? (uint32_t)left : w->arch.rows;
    uint64_t bits = 0;
    uint32_t lo = wi << 6, hi = rows < lo + 64 ? rows : lo + 64;
    for (uint32_t r = lo; r < hi; r++)
        bits |= (uint64_t)sparse_has(w, f->term.comp, ents[r]) << (r - lo);
    return bits;
}

static bool sparse_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                       int8_t entry, uint32_t row)
{
    (void)entry;
    return sparse_has(w, f->term.comp, *tecs__ent_ptr(a, w, row));
}

/* (A member still, while its REMOVE events run.) */
static bool sparse_entity(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                          int8_t entry, tecs_entity_t e, const tecs__view *v)
{
    (void)a, (void)entry;
    return (tecs__sparse_get_id(w, f->term.comp, e) != NULL) != (v && f->term.comp == v->flip);
}

static int32_t sparse_count(const tecs_world_t *w, const tecs__filter *f)
{
    return tecs__sparse_count(w, f->term.comp);
}

static tecs_entity_t sparse_member(const tecs_world_t *w, const tecs__filter *f, int32_t k)
{
    tecs_entity_t e = tecs__sparse_members(w, f->term.comp)[k];
    return e == w->store.leaving && f->term.comp == w->store.leaving_comp ? 0 : e;
}

static void *sparse_value(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e)
{
    return tecs__sparse_get(w, f->term.comp, TECS_ENTITY_INDEX(e));
}

const tecs__filter_kind tecs__filter_sparse = {
    .traits = TECS__FK_OPER | TECS__FK_NOCOL,
    .claim = sparse_claim,
    .match = sparse_match,
    .uniform = sparse_uniform,
    .word = sparse_word,
    .row = sparse_row,
    .entity = sparse_entity,
    .count = sparse_count,
    .member = sparse_member,
    .value = sparse_value,
};
