/*
** index/hash.c — the hash index: bucket chains and the unique open table.
**
** Entries live in the index's dense table (index.c); a hash index links
** them into chains, one per bucket, through their next / prev fields
** (doubly linked: unlinking is O(1)):
**
**     bucket[h & mask] ──> ents[4] <──> ents[9] <──> ents[1] ──> -1
**
** h is the entry's key hash, kept in the entry so that a rehash or an
** unlink reads no key. bucket has a power of two of heads, -1 empty, and
** at most 3/4 as many entries as heads.
**
** A unique hash index keeps no chains but one open table of (key, entity)
** cells, linear probing, at most 3/4 full; an emptied cell shifts back the
** run after it (no tombstones), so a lookup reads one or two neighbouring
** cells, not a bucket then an entry:
**
**     tab: [ (k7,e3) | (k2,e8) | (k2',e1) | empty | ... ]   e == 0: empty
**
** A NaN key equals nothing: the table does not hold it (only lookups probe
** the table, and they refuse NaN), so any number of NaN keys cost no run.
**
** A spatial index's key is the grid cell (cx, cy) of its point (cell_key,
** in internal.h, with the cell arithmetic that index.c, grid.c and
** filter.c share); its points are kept by cell in grid.c, not here.
**
** Invariants: every entry of a chained index is in the chain of bucket
** h & mask, once; every entry of a unique index whose key is not NaN is
** in one cell of the table, found by probing from its key's hash, and the
** table holds nothing else.
*/
#include "internal.h"

/* ---- the unique table ------------------------------------------------- */

/* Put (k, e) in a free cell of the table (room there is). */
static void tab_put(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    uint32_t mask = (uint32_t)x->ntab - 1, i = khash(x, k) & mask;
    while (x->tab[i].e != 0)
        i = (i + 1) & mask;
    x->tab[i] = (okey){ k, e };
}

/* Empty cell i, shifting back the cells after it that would not be found
** past the hole (linear probing without tombstones). */
static void tab_del(tecs_index_t *x, uint32_t i)
{
    uint32_t mask = (uint32_t)x->ntab - 1;
    for (uint32_t j = (i + 1) & mask; x->tab[j].e != 0; j = (j + 1) & mask) {
        uint32_t home = khash(x, x->tab[j].k) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {  /* home at or before i */
            x->tab[i] = x->tab[j];
            i = j;
        }
    }
    x->tab[i].e = 0;
}

/* The size (a power of two, from 16) a table of cap heads grows to so that
** need entries fill at most 3/4 of it; 0 if cap is enough already. */
static int32_t grown_size(int32_t cap, int32_t need)
{
    if ((int64_t)need * 4 <= (int64_t)cap * 3)
        return 0;
    int32_t n = cap ? cap : 16;
    while ((int64_t)need * 4 > (int64_t)n * 3)
        n *= 2;
    return n;
}

/* A table of room for need entries (at most 3/4 full), entries rehashed. */
static tecs_err_t tab_grow(tecs_index_t *x, int32_t need)
{
    int32_t nt = grown_size(x->ntab, need);
    if (nt == 0)
        return TECS_OK;
    okey *t = tecs__alloc(x->world, tecs__bytes((uint64_t)nt, sizeof *t));
    if (t == NULL)
        return TECS_ENOMEM;
    tecs__free(x->world, x->tab, (size_t)x->ntab * sizeof *x->tab);
    x->tab = t;
    x->ntab = nt;
    memset(t, 0, (size_t)nt * sizeof *t);
    for (int32_t i = 0; i < x->n; i++)
        if (!nan_key(x, x->ents[i].key))
            tab_put(x, x->ents[i].key, x->ents[i].e);
    return TECS_OK;
}

TECS__NOINLINE void tecs__tab_link(tecs_index_t *x, int32_t i)
{
    if (!nan_key(x, x->ents[i].key))
        tab_put(x, x->ents[i].key, x->ents[i].e);
}

TECS__NOINLINE void tecs__tab_unlink(tecs_index_t *x, int32_t i)
{
    if (nan_key(x, x->ents[i].key))
        return;
    int32_t c = tab_find(x, x->ents[i].key);
    assert(c >= 0 && x->tab[c].e == x->ents[i].e);
    tab_del(x, (uint32_t)c);
}

/* ---- chains ----------------------------------------------------------- */

void tecs__hash_moved(tecs_index_t *x, int32_t j)
{
    ient *t = &x->ents[j];
    if (is_table(x))
        return;                 /* the table names entities, not entries */
    if (t->prev >= 0)
        x->ents[t->prev].next = j;
    else
        x->bucket[t->h & (uint32_t)(x->nbucket - 1)] = j;
    if (t->next >= 0)
        x->ents[t->next].prev = j;
}

/* Buckets for need entries (at most 3/4 as many as heads), entries
** chained anew. */
static tecs_err_t buckets_grow(tecs_index_t *x, int32_t need)
{
    int32_t nb = grown_size(x->nbucket, need);
    if (nb == 0)
        return TECS_OK;
    int32_t *b = tecs__alloc(x->world, tecs__bytes((uint64_t)nb, sizeof *b));
    if (b == NULL)
        return TECS_ENOMEM;
    tecs__free(x->world, x->bucket, (size_t)x->nbucket * sizeof *x->bucket);
    x->bucket = b;
    x->nbucket = nb;
    memset(b, 0xff, (size_t)nb * sizeof *b);
    for (int32_t i = 0; i < x->n; i++)
        chain_push(x, i);
    return TECS_OK;
}

tecs_err_t tecs__hash_grow(tecs_index_t *x, int32_t need)
{
    return is_table(x) ? tab_grow(x, need) : buckets_grow(x, need);
}

tecs_entity_t tecs__hash_find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    if (is_table(x)) {
        int32_t c = tab_find(x, k);
        return c >= 0 && x->tab[c].e != e ? x->tab[c].e : 0;
    }
    if (x->nbucket == 0)
        return 0;
    for (int32_t i = x->bucket[khash(x, k) & (uint32_t)(x->nbucket - 1)]; i >= 0;
         i = x->ents[i].next)
        if (x->ents[i].e != e && kcmp(x, x->ents[i].key, k) == 0)
            return x->ents[i].e;
    return 0;
}

/* ---- layout and lifetime ---------------------------------------------- */

void tecs__hash_compact(tecs_index_t *x)
{
    if (!is_hashed(x) || is_table(x) || x->n < 2)
        return;
    ient *v = tecs__alloc(x->world, tecs__bytes((uint64_t)x->cap, sizeof *v));
    if (v == NULL)
        return;
    int32_t j = 0;
    for (int32_t b = 0; b < x->nbucket; b++)
        for (int32_t i = x->bucket[b]; i >= 0; i = x->ents[i].next)
            v[j++] = x->ents[i];
    assert(j == x->n);
    tecs__free(x->world, x->ents, (size_t)x->cap * sizeof *x->ents);
    x->ents = v;
    memset(x->bucket, 0xff, (size_t)x->nbucket * sizeof *x->bucket);
    for (int32_t i = x->n - 1; i >= 0; i--) {
        x->pos[TECS_ENTITY_INDEX(x->ents[i].e)] = i + 1;
        chain_push(x, i);
    }
}

void tecs__hash_clear(tecs_index_t *x)
{
    if (x->nbucket)
        memset(x->bucket, 0xff, (size_t)x->nbucket * sizeof *x->bucket);
    if (x->ntab)
        memset(x->tab, 0, (size_t)x->ntab * sizeof *x->tab);
}

void tecs__hash_release(tecs_index_t *x)
{
    tecs__free(x->world, x->bucket, (size_t)x->nbucket * sizeof *x->bucket);
    tecs__free(x->world, x->tab, (size_t)x->ntab * sizeof *x->tab);
}

/* ---- verification ----------------------------------------------------- */

tecs_err_t tecs__hash_verify(tecs_index_t *x)
{
    if (!is_table(x))
        return TECS_OK;
    int32_t used = 0, nans = 0;
    for (int32_t i = 0; i < x->n; i++)
        nans += nan_key(x, x->ents[i].key);
    for (int32_t c = 0; c < x->ntab; c++) {
        if (x->tab[c].e == 0)
            continue;
        used++;
        int32_t i = ent_find(x, x->tab[c].e);
        if (i < 0 || x->ents[i].key != x->tab[c].k || tab_find(x, x->tab[c].k) != c)
            return corrupt(x->world, "table cell without its entry", x->id);
    }
    return used == x->n - nans ? TECS_OK : corrupt(x->world, "table cells != entries", x->id);
}
