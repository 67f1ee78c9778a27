/*
** query_change.c — the row filter of a change term (TECS_CHANGE_CHANGED,
** _ADDED): a row passes if it was written (its row entered the chunk)
** after the tick the query's previous run began at, f->since.
**
** Ticks are kept per chunk (archetype.c): the last write to each column and
** the last row that entered. A row entering a chunk counts as a write to
** every column of it. A component with ticks per row keeps them in tick
** columns beside its chunk's, one tick a row, written and added apart; a
** sparse component's ticks are its set's (sparse.c). The filter's entry is
** 1 where they are the set's:
**
**     chunk tick > since ?  no  -> no row of the chunk passes
**                           yes -> every row, or with ticks per row, the
**                                  rows whose own tick > since
**
** since is 0 before the first run: every row passes. A change term is a
** with-term the archetype test decides; the filter is one more condition
** on it. No event tells when a row's ticks pass, so the filter has no
** entity test (caches and membership observers refuse such a query).
**
** Calls: archetype.c (chunk and row ticks), sparse.c (a set's ticks).
*/
#include "private.h"

static bool change_claim(const tecs_world_t *w, tecs__filter *f)
{
    (void)w;
    if (f->term.change == TECS_CHANGE_ANY)
        return false;
    f->term.oper = TECS_WITH;
    return true;
}

static int8_t change_match(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a)
{
    (void)a;
    return tecs__comp_is_sparse(w, f->term.comp) ? 1 : 0;
}

static bool change_uniform(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                           int8_t entry)
{
    (void)w, (void)f, (void)a, (void)entry;
    return false;               /* decided chunk by chunk */
}

static uint64_t change_word(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                            int8_t entry, int32_t k, uint32_t wi)
{
    if (k < 0)
        return 0;
    uint64_t since = f->since;
    if (since == 0)
        return ~(uint64_t)0;    /* the first run: every row */
    tecs_comp_t c = f->term.comp;
    bool added = f->term.change == TECS_CHANGE_ADDED;
    uint64_t at;
    if (entry) {
        const tecs__sparse *set = w->comp.comps[c].set;
        at = set == NULL ? 0 : added || set->added > set->changed ? set->added : set->changed;
    } else {
        at = tecs__chunk_changed_at(a, (uint32_t)k, added ? -1 : tecs__arch_col(a, c));
    }
    if (at <= since)
        return 0;
    int32_t j = a->nrt ? tecs__arch_rt(a, c) : -1;
    if (j < 0)
        return ~(uint64_t)0;
    /* The chunk has news: which rows? */
    const uint64_t *tk = tecs__chunk_rt(a, tecs__kcols(a, (uint32_t)k), j) +
                         (added ? w->arch.rows : 0) + (wi << 6);
    uint32_t n = w->arch.rows - (wi << 6);
    uint64_t bits = 0;
    for (uint32_t r = 0; r < (n < 64 ? n : 64); r++)
        bits |= (uint64_t)(tk[r] > since) << r;
    return bits;
}

static bool change_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                       int8_t entry, uint32_t row)
{
    uint32_t mask = w->arch.mask;
    return (change_word(w, f, a, entry, (int32_t)(row >> w->arch.shift), (row & mask) >> 6) >>
            (row & 63)) & 1u;
}

static void change_run(tecs__filter *f, uint64_t since)
{
    f->since = since;
}

const tecs__filter_kind tecs__filter_change = {
    .traits = 0,
    .claim = change_claim,
    .match = change_match,
    .uniform = change_uniform,
    .word = change_word,
    .row = change_row,
    .run = change_run,
};
