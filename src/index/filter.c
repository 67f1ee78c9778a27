/*
** index/filter.c — `where` filters and the filtered iteration.
**
** A filter is a small tree of conditions (leaves on indexes, and / or /
** not) stored in arrays owned by the filter; keys of `in` and strings are
** copied into its pool, so building allocates per condition, never per
** entity:
**
**     nodes: [0 hp >= 10] [1 hp <= 20] [2 and 0 1] [3 name in {..}] [4 or 2 3]
**     keys:  | 10 | 20 | "ann" "bob" (offsets into str) |       root = 4
**
** Iterating a query through a filter first collects the matches into the
** filter's snapshot ("drive"): a leaf walks its index; `and` drives its
** cheaper side and tests the other; `or` drives both sides, the second
** skipping what the first matched (so nothing comes twice). A tree no index
** can drive (a lone `not`) is tested row by row over the query instead.
** Each match is kept with its place (archetype, row), so the snapshot is
** put in the promised order (radix sort by place, or merge sort by key)
** and handed out in runs of consecutive rows of one chunk, fetching a few
** rows ahead; a reverse iteration reads the snapshot from its end, in the
** same runs. The world is deferred while it runs, so places hold. A step
** in the same group of chunks as the step before (one block, column by
** column) moves the fields by rows times value size, kept in the
** snapshot's cursor, instead of loading them through the query.
**
** The index layer learns of filters through the index listener this file
** registers with the first filter: an index that an open iteration's
** filter names is not freed, and the filters left are released when the
** world is freed (before the indexes).
*/
#include "internal.h"

void tecs__snap_free(tecs_world_t *w, snap *s)
{
    tecs__free(w, s->v, (size_t)s->cap * sizeof *s->v);
    s->v = NULL;
    s->cap = s->n = 0;
    if (s->copy_raw)
        tecs__free_aligned(w, s->copy_raw, s->copy_bytes);
    s->copy = NULL;
    s->copy_raw = NULL;
    s->copy_bytes = 0;
}

void tecs__filter_release(tecs_filter_t *f)
{
    tecs_world_t *w = f->world;
    tecs__indexes *r = registry(w);
    if (f->prev)
        f->prev->next = f->next;
    else
        r->filters = f->next;
    if (f->next)
        f->next->prev = f->prev;
    tecs__free(w, f->nodes, (size_t)f->cap * sizeof *f->nodes);
    tecs__free(w, f->keys, (size_t)f->capkeys * sizeof *f->keys);
    tecs__free(w, f->str, (size_t)f->capstr);
    tecs__snap_free(w, &f->scr);
    tecs__free(w, f, sizeof *f);
}

static void filter_link(tecs__indexes *r, tecs_filter_t *f)
{
    f->prev = NULL;
    f->next = r->filters;
    if (r->filters)
        r->filters->prev = f;
    r->filters = f;
}

static tecs_iter_t where_start(tecs_world_t *w, const tecs_iter_desc_t *d);

tecs_filter_t *tecs_filter_new(tecs_world_t *w)
{
    if (w == NULL || tecs__enter_object(w))
        return NULL;
    tecs__indexes *r = tecs__index_registry(w);
    tecs_filter_t *f = r ? tecs__alloc(w, sizeof *f) : NULL;
    if (f == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a filter");
        return NULL;
    }
    memset(f, 0, sizeof *f);
    f->src.start = where_start;
    f->world = w;
    f->root = -1;
    f->order = -1;
    tecs__filters_listen(r);
    filter_link(r, f);
    return f;
}

void tecs_filter_free(tecs_filter_t *f)
{
    if (f == NULL)
        return;
    if (f->scr.busy)
        f->scr.doomed = f;      /* freed when its iteration ends */
    else
        tecs__filter_release(f);
}

tecs_err_t tecs_filter_reset(tecs_filter_t *f)
{
    if (f == NULL)
        return TECS_EINVAL;
    if (tecs__enter(f->world))
        return f->world->base.err;
    if (f->scr.busy)
        return tecs__err(f->world, TECS_EBUSY, "tecs_filter_reset: an iteration over the "
                         "filter is open: end it first");
    f->n = f->nkeys = f->nstr = 0;
    f->root = f->order = -1;
    f->desc = false;
    f->err = TECS_OK;
    f->why[0] = '\0';
    return TECS_OK;
}

bool tecs__filter_names(const tecs_filter_t *f, int32_t id)
{
    for (int32_t i = 0; i < f->n; i++)
        if (f->nodes[i].op < F_AND && f->nodes[i].index == id)
            return true;
    return f->order == id;
}

/* ---- the filter layer's index listener -------------------------------- */

/* An index an open iteration's filter names stays. */
static tecs_err_t filters_on_free(tecs__indexes *r, const tecs_index_t *x)
{
    for (const tecs_filter_t *f = r->filters; f; f = f->next)
        if (f->scr.busy && tecs__filter_names(f, x->id))
            return tecs__err(x->world, TECS_EBUSY, "an iteration over a filter naming "
                             TECS__INDEX_FMT " is open: end it first", TECS__INDEX(x));
    return TECS_OK;
}

static void filters_on_fini(tecs__indexes *r)
{
    while (r->filters)
        tecs__filter_release(r->filters);
}

static const tecs__index_listener filters_listener = {
    .on_free = filters_on_free, .on_fini = filters_on_fini
};

void tecs__filters_listen(tecs__indexes *r)
{
    tecs__index_listen(r, &filters_listener);
}

tecs_err_t tecs_filter_error(const tecs_filter_t *f)
{
    return f ? f->err : TECS_EINVAL;
}

/* Keep the first building error and its message; return -1. A NULL msg
** keeps the message the world has already (set by a call made here). */
static tecs_cond_t fail(tecs_filter_t *f, tecs_err_t err, const char *msg)
{
    if (msg)
        tecs__err(f->world, err, "filter: %s", msg);
    if (f->err == TECS_OK) {
        f->err = err;
        memcpy(f->why, f->world->base.errmsg, sizeof f->why);
    }
    return -1;
}

static tecs_cond_t add_node(tecs_filter_t *f, fnode nd)
{
    if (f->n == f->cap && tecs__grow(f->world, (void **)&f->nodes, &f->cap, f->n + 1, sizeof *f->nodes))
        return fail(f, TECS_ENOMEM, "out of memory");
    f->nodes[f->n] = nd;
    f->root = f->n;
    return f->n++;
}

/* Check that index x may be used in f with operator op. */
static bool leaf_ok(tecs_filter_t *f, tecs_index_t *x, int32_t op)
{
    if (x == NULL || index_by_id(f->world, x->id) != x)
        return fail(f, x ? TECS_EWORLD : TECS_EINVAL, x ? "index of another world, or freed"
                                                        : "NULL index"), false;
    bool spatial_op = op == F_RADIUS || op == F_BOX;
    if (x->d.kind == TECS_INDEX_SPATIAL && !spatial_op)
        return fail(f, TECS_EINVAL, "a spatial index takes radius and box only"), false;
    if (x->d.kind != TECS_INDEX_SPATIAL && spatial_op)
        return fail(f, TECS_EINVAL, "radius and box need a spatial index"), false;
    if (x->d.kind == TECS_INDEX_HASH && op != F_EQ && op != F_NE && op != F_IN)
        return fail(f, TECS_EINVAL, "between, <, <=, > and >= need an ordered index: a hash "
                    "index takes == (TECS_EQ) and in only, and != (TECS_NE)"), false;
    return true;
}

/* Append a caller's key to the pool (strings copied). */
static bool push_key(tecs_filter_t *f, tecs_index_t *x, tecs_key_t key)
{
    uint64_t k;
    if (!tecs__index_encode(x, key, &k))
        return fail(f, TECS_EINVAL, NULL), false;
    if (tecs__grow(f->world, (void **)&f->keys, &f->capkeys, f->nkeys + 1, sizeof *f->keys))
        return fail(f, TECS_ENOMEM, "out of memory"), false;
    if (key.cls == TECS_KEYC_STR && key.v.s) {
        int32_t len = (int32_t)strlen(key.v.s) + 1;
        if (tecs__grow(f->world, (void **)&f->str, &f->capstr, f->nstr + len, 1))
            return fail(f, TECS_ENOMEM, "out of memory"), false;
        memcpy(f->str + f->nstr, key.v.s, (size_t)len);
        k = (uint64_t)f->nstr + 1;
        f->nstr += len;
    }
    f->keys[f->nkeys++] = k;
    return true;
}

static tecs_cond_t leaf(tecs_filter_t *f, tecs_index_t *x, int32_t op, int32_t n,
                        const tecs_key_t *keys)
{
    if (f == NULL)
        return -1;
    if (!leaf_ok(f, x, op))
        return -1;
    int32_t first = f->nkeys;
    for (int32_t i = 0; i < n; i++)
        if (!push_key(f, x, keys[i])) {
            f->nkeys = first;
            return -1;
        }
    return add_node(f, (fnode){ op, x->id, first, n, { 0, 0, 0, 0 } });
}

tecs_cond_t tecs_filter_cmp(tecs_filter_t *f, tecs_index_t *x, tecs_cmp_t cmp, tecs_key_t key)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    if (f && (unsigned)cmp > TECS_GE)
        return fail(f, TECS_EINVAL, "unknown comparison");
    return leaf(f, x, (int32_t)cmp, 1, &key);
}

tecs_cond_t tecs_filter_between(tecs_filter_t *f, tecs_index_t *x, tecs_key_t lo, tecs_key_t hi)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    tecs_key_t k[2] = { lo, hi };
    return leaf(f, x, F_BETWEEN, 2, k);
}

/* Order of resolved keys, for sorting `in` lists. */
static int key_order(const tecs_index_t *x, const okey *a, const okey *b)
{
    return kcmp(x, a->k, b->k);
}

/* Sort and deduplicate the keys of an `in` leaf. */
static tecs_cond_t sort_in(tecs_filter_t *f, tecs_index_t *x, tecs_cond_t c)
{
    fnode *nd = &f->nodes[c];
    int32_t n = nd->b;
    okey *v = tecs__alloc(f->world, tecs__bytes((uint64_t)n * 2 + 1, sizeof *v));
    if (v == NULL) {
        f->n--;
        return fail(f, TECS_ENOMEM, "out of memory");
    }
    for (int32_t i = 0; i < n; i++)
        v[i] = (okey){ fkey(f, x, nd->a + i), f->keys[nd->a + i] };
    tecs__okey_sort(v, v + n, n, key_order, x);
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (m == 0 || kcmp(x, v[m - 1].k, v[i].k) != 0)
            v[m++] = v[i];
    for (int32_t i = 0; i < m; i++)
        f->keys[nd->a + i] = v[i].e;
    nd->b = m;
    tecs__free(f->world, v, ((size_t)n * 2 + 1) * sizeof *v);
    return c;
}

tecs_cond_t tecs_filter_in(tecs_filter_t *f, tecs_index_t *x, int32_t n, const tecs_key_t *keys)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    if (f && (n < 0 || (n > 0 && keys == NULL)))
        return fail(f, TECS_EINVAL, n < 0 ? "in: negative key count" : "in: NULL keys");
    tecs_cond_t c = leaf(f, x, F_IN, n, keys);
    return c < 0 ? c : sort_in(f, x, c);
}

tecs_cond_t tecs_filter_radius(tecs_filter_t *f, tecs_index_t *x, float px, float py, float r)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    const char *why = circle_refusal(px, py, r);
    if (why != NULL)
        return fail(f, TECS_EINVAL, why);
    tecs_cond_t c = leaf(f, x, F_RADIUS, 0, NULL);
    if (c >= 0)
        memcpy(f->nodes[c].g, (float[4]){ px, py, r, 0 }, sizeof f->nodes[c].g);
    return c;
}

tecs_cond_t tecs_filter_box(tecs_filter_t *f, tecs_index_t *x, float x0, float y0, float x1,
                            float y1)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    if (x0 != x0 || y0 != y0 || x1 != x1 || y1 != y1)
        return fail(f, TECS_EINVAL, "a bound of the box is NaN");
    tecs_cond_t c = leaf(f, x, F_BOX, 0, NULL);
    if (c >= 0)
        memcpy(f->nodes[c].g, (float[4]){ x0, y0, x1, y1 }, sizeof f->nodes[c].g);
    return c;
}

static tecs_cond_t combine(tecs_filter_t *f, int32_t op, tecs_cond_t a, tecs_cond_t b)
{
    if (f == NULL || tecs__enter(f->world))
        return -1;
    if (a < 0 || a >= f->n || b < 0 || b >= f->n)
        return fail(f, TECS_EINVAL, "a condition handle not made by this filter (or -1 from "
                                    "a failed condition)");
    return add_node(f, (fnode){ op, -1, a, b, { 0, 0, 0, 0 } });
}

tecs_cond_t tecs_filter_and(tecs_filter_t *f, tecs_cond_t a, tecs_cond_t b)
{
    return combine(f, F_AND, a, b);
}

tecs_cond_t tecs_filter_or(tecs_filter_t *f, tecs_cond_t a, tecs_cond_t b)
{
    return combine(f, F_OR, a, b);
}

tecs_cond_t tecs_filter_not(tecs_filter_t *f, tecs_cond_t a)
{
    return combine(f, F_NOT, a, a);
}

tecs_err_t tecs_filter_root(tecs_filter_t *f, tecs_cond_t c)
{
    if (f == NULL)
        return TECS_EINVAL;
    if (tecs__enter(f->world))
        return f->world->base.err;
    if (c < 0 || c >= f->n)
        return tecs__err(f->world, TECS_EINVAL, "tecs_filter_root: condition %d is not one "
                         "of this filter's %d", c, f->n);
    f->root = c;
    return TECS_OK;
}

tecs_err_t tecs_filter_order(tecs_filter_t *f, tecs_index_t *x, bool desc)
{
    if (f == NULL)
        return TECS_EINVAL;
    if (tecs__enter(f->world))
        return f->world->base.err;
    if (x == NULL) {
        f->order = -1;
        return TECS_OK;
    }
    if (index_by_id(f->world, x->id) != x)
        return tecs__err(f->world, TECS_EWORLD, "tecs_filter_order: index of another world, "
                         "or freed");
    if (x->d.kind != TECS_INDEX_ORDERED)
        return tecs__err(f->world, TECS_EINVAL, "key order needs an ordered index, not "
                         TECS__INDEX_FMT, TECS__INDEX(x));
    f->order = x->id;
    f->desc = desc;
    return TECS_OK;
}

/* ---- filters: testing one entity -------------------------------------- */

static bool in_box(const fnode *nd, uint64_t aux)
{
    float px, py;
    memcpy(&px, &aux, 4);
    memcpy(&py, (const char *)&aux + 4, 4);
    return px >= nd->g[0] && px <= nd->g[2] && py >= nd->g[1] && py <= nd->g[3];
}

/* Is k one of the sorted keys of nd? */
static bool in_list(const tecs_filter_t *f, const tecs_index_t *x, const fnode *nd, uint64_t k)
{
    int32_t lo = 0, hi = nd->b;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        int c = kcmp(x, fkey(f, x, nd->a + mid), k);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Does key k (with aux) satisfy leaf nd? */
static bool leaf_holds(const tecs_filter_t *f, const tecs_index_t *x, const fnode *nd,
                       uint64_t k, uint64_t aux)
{
    bool nan = x->cls == TECS_KEYC_REAL && k == NAN_KEY;
    int c = nd->b > 0 && nd->op <= F_BETWEEN ? kcmp(x, k, fkey(f, x, nd->a)) : 0;
    switch (nd->op) {
    case F_EQ: return c == 0;
    case F_NE: return c != 0;
    case F_LT: return c < 0;
    case F_LE: return c <= 0;
    case F_GT: return c > 0 && !nan;
    case F_GE: return c >= 0 && !nan;
    case F_BETWEEN: return c >= 0 && kcmp(x, k, fkey(f, x, nd->a + 1)) <= 0 && !nan;
    case F_IN: return in_list(f, x, nd, k);
    case F_RADIUS:
        return k != NOWHERE_CELL && in_circle(aux, nd->g[0], nd->g[1], nd->g[2]);
    default: return k != NOWHERE_CELL && in_box(nd, aux);
    }
}

bool tecs__filter_holds(const tecs_filter_t *f, int32_t c, tecs_entity_t e)
{
    const fnode *nd = &f->nodes[c];
    switch (nd->op) {
    case F_AND: return tecs__filter_holds(f, nd->a, e) && tecs__filter_holds(f, nd->b, e);
    case F_OR: return tecs__filter_holds(f, nd->a, e) || tecs__filter_holds(f, nd->b, e);
    case F_NOT: return !tecs__filter_holds(f, nd->a, e);
    default: break;
    }
    const tecs_index_t *x = registry(f->world)->by_id[nd->index];
    int32_t i = ent_find(x, e);
    return i >= 0 && leaf_holds(f, x, nd, x->ents[i].key, x->ents[i].aux);
}

/* Every index the filter names is alive and fresh. */
tecs_err_t tecs__filter_ready(tecs_filter_t *f)
{
    if (f->err)
        return tecs__err(f->world, f->err, "the filter failed while being built: %s", f->why);
    for (int32_t c = 0; c < f->n; c++) {
        if (f->nodes[c].op >= F_AND)
            continue;
        tecs_index_t *x = index_by_id(f->world, f->nodes[c].index);
        if (x == NULL)
            return tecs__err(f->world, TECS_ENOENT, "the filter names a freed index");
        if (tecs__index_refresh(x))
            return f->world->base.err;
    }
    if (f->order >= 0) {
        tecs_index_t *x = index_by_id(f->world, f->order);
        if (x == NULL)
            return tecs__err(f->world, TECS_ENOENT, "the filter's order index was freed");
        if (tecs__index_refresh(x))     /* the order is read from it too */
            return f->world->base.err;
    }
    return TECS_OK;
}

bool tecs_filter_test(tecs_filter_t *f, tecs_entity_t e)
{
    if (f == NULL || tecs__enter(f->world) || tecs__filter_ready(f) ||
        tecs__ei_alive(f->world, e) == NULL)
        return false;
    return f->root < 0 || tecs__filter_holds(f, f->root, e);
}

/* ---- filters: collecting the matches ---------------------------------- */

/* The cursor of s (see snap), or NULL when s does not use one. */
static cursor *cursor_of(snap *s)
{
    return s->cursor_on ? &s->cur : NULL;
}

/* An `or` guard: skip an entity that the left side `node` already took. */
/* Under an OR, a candidate of the left branch must pass it (`need`): a
** driver yields a superset of its node, and what the left branch skips the
** right one collects; a candidate of the right branch must fail the left
** one (!need), which had its turn. */
typedef struct guard {
    const struct guard *up;
    int32_t node;
    bool need;
} guard;

typedef struct walk {
    tecs_filter_t *f;
    tecs_query_t *q;
    snap *s;
    bool exact;                 /* the driver is the root: no re-test       */
    bool rowwise;               /* the query tests rows one by one          */
    int32_t sorted_by;          /* index id whose key order the walk kept   */
    tecs_err_t err;
    int32_t placed;             /* items places_of made, when one call made
                                   them all from the first; else -1 ...     */
    uint64_t min, max;          /* ... their smallest and largest place     */
    bool rising;                /* ... and whether they come in order       */
} walk;

static bool snap_push(walk *wk, uint64_t k, tecs_entity_t e)
{
    snap *s = wk->s;
    if (s->n + 1 > s->cap / 2 &&
        tecs__grow(wk->f->world, (void **)&s->v, &s->cap, 2 * (s->n + 1), sizeof *s->v)) {
        wk->err = TECS_ENOMEM;
        return false;
    }
    s->v[s->n++] = (okey){ k, e };
    return true;
}

/* Room in the snapshot for more items beside its n, and as many again
** for the sort's scratch half (snap_push's rule); false (wk->err set) when
** out of memory. */
static bool snap_room(walk *wk, int32_t more)
{
    snap *s = wk->s;
    if ((int64_t)s->n + more <= s->cap / 2)
        return true;
    if ((int64_t)s->n + more > INT32_MAX / 2 ||
        tecs__grow(wk->f->world, (void **)&s->v, &s->cap, 2 * (s->n + more), sizeof *s->v)) {
        wk->err = TECS_ENOMEM;
        return false;
    }
    return true;
}

/* Items of a walk whose records are fetched ahead of their use. */
#define RECS_AHEAD 24

/* Candidates that places_of turns into places without fetching ahead. */
#define FEW_PLACES 32

/* Where the value of a row's first field is in an archetype's chunks:
** cols[(row >> shift) * stride + col] + (row & mask) * size; cols is NULL
** when the query has no field there. */
typedef struct fetcher {
    char *const *cols;
    uint32_t stride, shift, mask, col;
    size_t size;
} fetcher;

/* The fetcher of archetype a, match m of q. */
static fetcher row_fetcher(const tecs_world_t *w, tecs_query_t *q, const tecs_archetype_t *a,
                           int32_t m)
{
    const int16_t *cols = tecs__query_cols(q, m);
    int32_t nt = tecs_query_terms(q, NULL);
    for (int32_t t = 0; t < nt; t++)
        if (cols[t] >= 0 && a->col_size[cols[t]] > 0)
            return (fetcher){ a->cols, (uint32_t)a->stride, w->arch.shift, w->arch.mask,
                              1 + (uint32_t)cols[t], a->col_size[cols[t]] };
    return (fetcher){ NULL, 0, 0, 0, 0, 0 };
}

/* Turn the candidates v[from..n) of the snapshot (entities known to
** satisfy the filter) into places: those the query has, in their order;
** the record RECS_AHEAD items on is fetched meanwhile, so that the
** records' misses overlap; with fetch_rows (candidates scattered over
** rows, as a shape's are), the row's first field too as soon as its
** record is read, so that the rows' misses overlap with those of the
** records and are over when the iteration reads the rows; the bounds of
** the places are kept in wk for sort_places. */
static inline void places_many(walk *wk, int32_t from, bool fetch_rows)
{
    const tecs_world_t *w = wk->f->world;
    snap *s = wk->s;
    okey *v = s->v;
    const tecs__record *recs = w->ei.recs;
    const bool rowwise = wk->rowwise;
    int32_t n = s->n, m = from, lm = -1;
    uint32_t la = UINT32_MAX, nrecs = (uint32_t)w->ei.nrecs;
    uint64_t min = UINT64_MAX, max = 0;
    bool rising = true;
    fetcher fv = { NULL, 0, 0, 0, 0, 0 };
    for (int32_t i = from; i < n && i < from + RECS_AHEAD; i++) {
        uint32_t slot = TECS_ENTITY_INDEX(v[i].e);
        if (slot < nrecs)
            TECS__PREFETCH(&recs[slot]);
    }
    for (int32_t i = from; i < n; i++) {
        if (i + RECS_AHEAD < n) {
            uint32_t ahead = TECS_ENTITY_INDEX(v[i + RECS_AHEAD].e);
            if (ahead < nrecs)
                TECS__PREFETCH(&recs[ahead]);
        }
        tecs_entity_t e = v[i].e;
        uint32_t slot = TECS_ENTITY_INDEX(e);
        if (slot >= nrecs)
            continue;
        tecs__record r = recs[slot];    /* tecs__ei_alive's tests, on a copy */
        if (r.gen != TECS_ENTITY_GENERATION(e) || r.arch >= TECS__ARCH_RETIRED)
            continue;
        uint32_t ai = r.arch & TECS__ARCH_MASK;
        if (TECS__UNLIKELY(ai != la)) {
            la = ai;
            lm = snap_match(s, wk->q, w->arch.archs[ai]);
            if (lm >= 0 && fetch_rows)
                fv = row_fetcher(w, wk->q, w->arch.archs[ai], lm);
        }
        if (lm >= 0 && (!rowwise || tecs__query_row_ok(wk->q, lm, r.row))) {
            uint64_t k = (uint64_t)ai << 32 | r.row;
            if (fv.cols)
                TECS__PREFETCH(fv.cols[(size_t)(r.row >> fv.shift) * fv.stride + fv.col] +
                               (size_t)(r.row & fv.mask) * fv.size);
            rising &= k > max;  /* places are distinct */
            min = k < min ? k : min;
            max = k > max ? k : max;
            v[m++] = (okey){ k, e };
        }
    }
    s->n = m;
    wk->placed = from == 0 ? m : -1;
    wk->min = min, wk->max = max, wk->rising = rising;
}

/* places_many for FEW_PLACES candidates at most: the same places, with
** nothing fetched ahead and no bounds (wk->placed is -1). */
static inline void places_few(walk *wk, int32_t from)
{
    const tecs_world_t *w = wk->f->world;
    snap *s = wk->s;
    okey *v = s->v;
    int32_t n = s->n, m = from, lm = -1;
    uint32_t la = UINT32_MAX;
    for (int32_t i = from; i < n; i++) {
        tecs_entity_t e = v[i].e;
        const tecs__record *r = tecs__ei_alive(w, e);
        if (r == NULL)
            continue;
        uint32_t ai = r->arch & TECS__ARCH_MASK, row = r->row;
        if (TECS__UNLIKELY(ai != la)) {
            la = ai;
            lm = snap_match(s, wk->q, w->arch.archs[ai]);
        }
        if (lm >= 0 && (!wk->rowwise || tecs__query_row_ok(wk->q, lm, row)))
            v[m++] = (okey){ (uint64_t)ai << 32 | row, e };
    }
    s->n = m;
    wk->placed = -1;
}

/* places_many, or places_few for FEW_PLACES candidates at most: fetching
** ahead costs more than the few misses it would overlap (the processor
** overlaps that many on its own), and the bounds are read only by the
** radix sort, which SMALL_SORT items never reach. */
static inline void places_of(walk *wk, int32_t from, bool fetch_rows)
{
    if (wk->s->n - from <= FEW_PLACES)
        places_few(wk, from);
    else
        places_many(wk, from, fetch_rows);
}

/* places_of for a range, apart from the walk of the leaves, so that each
** loop keeps its own state. */
static TECS__NOINLINE void range_places(walk *wk, int32_t from)
{
    places_of(wk, from, false);
}

/* Keep a candidate known to satisfy the filter if the query has it. */
static inline void take(walk *wk, tecs_entity_t e)
{
    tecs_world_t *w = wk->f->world;
    const tecs__record *r = tecs__ei_alive(w, e);
    int32_t m = r != NULL ? snap_match(wk->s, wk->q, tecs__rec_arch(w, r)) : -1;
    if (m >= 0 && (!wk->rowwise || tecs__query_row_ok(wk->q, m, r->row)))
        snap_push(wk, place_of(r), e);
}

/* A candidate from a driver: keep it if it passes guards, root, query. */
static void collect(walk *wk, const guard *g, tecs_entity_t e)
{
    if (wk->err)
        return;
    for (; g; g = g->up)
        if (tecs__filter_holds(wk->f, g->node, e) != g->need)
            return;
    if (!wk->exact && !tecs__filter_holds(wk->f, wk->f->root, e))
        return;
    take(wk, e);
}

/* A key range of an ordered index. */
typedef struct range {
    bool has_lo, lo_excl, has_hi, hi_excl;
    uint64_t lo, hi;
} range;

/* Start fetching the record of item i of leaf t; an i past t's end counts
** on into the next leaf. */
static void fetch_rec(const tecs_world_t *w, const onode *t, int32_t i)
{
    if (i >= t->n) {
        i -= t->n;
        t = t->next;
        if (t == NULL || i >= t->n)
            return;
    }
    uint32_t slot = TECS_ENTITY_INDEX(t->u.lf.e[i]);
    if (slot < (uint32_t)w->ei.nrecs)
        TECS__PREFETCH(&w->ei.recs[slot]);
}

/* The end of the range's items in leaf t: t->n if its last item is in. */
static int32_t leaf_end(const tecs_index_t *x, const onode *t, const range *rg)
{
    if (!rg->has_hi || t->n == 0)
        return t->n;
    int c = kcmp(x, t->u.lf.k[t->n - 1], rg->hi);
    if (c < 0 || (c == 0 && !rg->hi_excl))
        return t->n;
    return ofind(x, t->u.lf.k, t->u.lf.e, t->n, rg->hi, rg->hi_excl ? 0 : UINT32_MAX);
}

/* walk_range for the root alone (no guard, no test): the range's
** entities are copied into the snapshot leaf by leaf, then turned into
** places in one pass over them (places_of). */
static void walk_range_plain(walk *wk, const tecs_index_t *x, range rg)
{
    snap *s = wk->s;
    int32_t i = 0, from = s->n;
    if (wk->err)
        return;
    const onode *t = rg.has_lo ? olower(x, rg.lo, rg.lo_excl ? UINT32_MAX : 0, &i)
                               : ofirst(x);
    for (; t; t = t->next, i = 0) {
        if (t->next)
            ofetch_all(t->next);
        int32_t end = leaf_end(x, t, &rg);
        if (end > i) {
            if (!snap_room(wk, end - i))
                return;
            okey *v = s->v + s->n - i;
            for (int32_t j = i; j < end; j++)
                v[j].e = t->u.lf.e[j];
            s->n += end - i;
        }
        if (end < t->n)
            break;
    }
    range_places(wk, from);
}

/* Collect the items of a key range, leaf by leaf, in key order; the next
** leaf and the records a few items on are fetched ahead: a fixed distance
** keeps a few fetches in flight without evicting what is about to be
** read. */
static void walk_range(walk *wk, const guard *g, const tecs_index_t *x, range rg)
{
    if (g == NULL && wk->exact) {
        walk_range_plain(wk, x, rg);
        return;
    }
    const tecs_world_t *w = wk->f->world;
    int32_t i = 0;
    const onode *t = rg.has_lo ? olower(x, rg.lo, rg.lo_excl ? UINT32_MAX : 0, &i)
                               : ofirst(x);
    for (; t && !wk->err; t = t->next, i = 0) {
        if (t->next)
            ofetch_all(t->next);
        int32_t end = leaf_end(x, t, &rg);
        for (; i < end; i++) {
            fetch_rec(w, t, i + RECS_AHEAD);
            collect(wk, g, t->u.lf.e[i]);
        }
        if (end < t->n)
            return;
    }
}

static void drive_ordered(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd)
{
    const tecs_filter_t *f = wk->f;
    uint64_t k = nd->b > 0 ? fkey(f, x, nd->a) : 0;
    /* NaN keys sort last: a range open above stops before them */
    bool real = x->cls == TECS_KEYC_REAL;
    switch (nd->op) {
    case F_EQ: walk_range(wk, g, x, (range){ true, false, true, false, k, k }); return;
    case F_NE:
        walk_range(wk, g, x, (range){ false, false, true, true, 0, k });
        walk_range(wk, g, x, (range){ true, true, false, false, k, 0 });
        return;
    case F_LT: walk_range(wk, g, x, (range){ false, false, true, true, 0, k }); return;
    case F_LE: walk_range(wk, g, x, (range){ false, false, true, false, 0, k }); return;
    case F_GT: walk_range(wk, g, x, (range){ true, true, real, true, k, NAN_KEY }); return;
    case F_GE: walk_range(wk, g, x, (range){ true, false, real, true, k, NAN_KEY }); return;
    case F_BETWEEN: {
        uint64_t hi = fkey(f, x, nd->a + 1);
        if (kcmp(x, k, hi) <= 0)
            walk_range(wk, g, x, (range){ true, false, true, false, k, hi });
        return;
    }
    default:
        for (int32_t j = 0; j < nd->b; j++) {
            uint64_t kj = fkey(f, x, nd->a + j);
            walk_range(wk, g, x, (range){ true, false, true, false, kj, kj });
        }
    }
}

/* Walk one bucket chain for entries with key k that satisfy nd. */
static void walk_chain(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd,
                       uint64_t k)
{
    if (is_table(x)) {
        int32_t c = tab_find(x, k), i = c >= 0 ? ent_find(x, x->tab[c].e) : -1;
        if (i >= 0 && leaf_holds(wk->f, x, nd, x->ents[i].key, x->ents[i].aux))
            collect(wk, g, x->ents[i].e);
        return;
    }
    if (x->nbucket == 0)
        return;
    for (int32_t i = x->bucket[khash(x, k) & (uint32_t)(x->nbucket - 1)]; i >= 0;
         i = x->ents[i].next) {
        const ient *t = &x->ents[i];
        if (kcmp(x, t->key, k) == 0 && leaf_holds(wk->f, x, nd, t->key, t->aux))
            collect(wk, g, t->e);
    }
}

/* Every entry of x that satisfies nd: a hash index's `!=`, which no
** order lets skip anything, and a spatial leaf covering more cells than
** the index has entries. */
static void drive_all(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd)
{
    for (int32_t i = 0; i < x->n && !wk->err; i++)
        if (leaf_holds(wk->f, x, nd, x->ents[i].key, x->ents[i].aux))
            collect(wk, g, x->ents[i].e);
}

/* The cells a spatial leaf touches; false if it is empty. */
static bool leaf_cells(const tecs_index_t *x, const fnode *nd, int32_t c[4])
{
    const float *g = nd->g;
    return nd->op == F_RADIUS ? circle_cells(x->d.cell_size, g[0], g[1], g[2], c)
                              : box_cells(x->d.cell_size, g[0], g[1], g[2], g[3], c);
}

/* The aux of an entry whose point is p: its x and y. */
static inline uint64_t point_aux(const gpoint *p)
{
    uint64_t aux;
    memcpy(&aux, &p->x, 4);
    memcpy((char *)&aux + 4, &p->y, 4);
    return aux;
}

static void drive_spatial(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd)
{
    int32_t c[4];
    if (!leaf_cells(x, nd, c))
        return;
    if (cell_count(c) > (int64_t)x->n) {
        drive_all(wk, g, x, nd);
        return;
    }
    for (int32_t cx = c[0]; cx <= c[2]; cx++)
        for (int32_t cy = c[1]; cy <= c[3]; cy++) {
            uint64_t k = cell_key(cx, cy);
            const gcell *cl = grid_cell(x, k);
            if (cl == NULL)
                continue;
            GRID_EACH_POINT(x, cl, p)
                if (leaf_holds(wk->f, x, nd, k, point_aux(p)))
                    collect(wk, g, p->e);
        }
}

static void drive_leaf(walk *wk, const guard *g, const fnode *nd)
{
    const tecs_index_t *x = registry(wk->f->world)->by_id[nd->index];
    if (x->d.kind == TECS_INDEX_ORDERED)
        drive_ordered(wk, g, x, nd);
    else if (x->d.kind == TECS_INDEX_SPATIAL)
        drive_spatial(wk, g, x, nd);
    else if (nd->op == F_NE)
        drive_all(wk, g, x, nd);
    else
        for (int32_t j = 0; j < nd->b; j++)
            walk_chain(wk, g, x, nd, fkey(wk->f, x, nd->a + j));
}

#define NO_DRIVE INT64_MAX

/* About how many candidates driving node c yields; NO_DRIVE if it cannot. */
static int64_t estimate(const tecs_filter_t *f, int32_t c)
{
    const fnode *nd = &f->nodes[c];
    if (nd->op == F_NOT)
        return NO_DRIVE;
    if (nd->op == F_AND || nd->op == F_OR) {
        int64_t a = estimate(f, nd->a), b = estimate(f, nd->b);
        if (nd->op == F_AND)
            return a < b ? a : b;
        return a == NO_DRIVE || b == NO_DRIVE ? NO_DRIVE : a + b;
    }
    const tecs_index_t *x = registry(f->world)->by_id[nd->index];
    if (x->d.kind == TECS_INDEX_HASH)
        return nd->op == F_NE ? x->n : nd->b;
    if (x->d.kind == TECS_INDEX_SPATIAL) {
        int32_t cl[4];
        if (!leaf_cells(x, nd, cl))
            return 0;
        int64_t cells = cell_count(cl);
        return cells < x->n ? cells : x->n;
    }
    if (nd->op == F_EQ || nd->op == F_IN)
        return nd->b;
    if (nd->op == F_NE)
        return x->n;
    return x->n / 2;            /* an open or closed range: half, by guess */
}

static void drive_walk(walk *wk, const guard *g, int32_t c)
{
    const fnode *nd = &wk->f->nodes[c];
    if (nd->op == F_AND) {
        drive_walk(wk, g, estimate(wk->f, nd->a) <= estimate(wk->f, nd->b) ? nd->a : nd->b);
    } else if (nd->op == F_OR) {
        drive_walk(wk, &(guard){ g, nd->a, true }, nd->a);
        drive_walk(wk, &(guard){ g, nd->a, false }, nd->b);
    } else {
        drive_leaf(wk, g, nd);
    }
}

/* ---- filters: the shape path ------------------------------------------ */

/* A filter whose root is a radius or a box, or an `or` of them on one
** spatial index (a circle and its images across the edges of a world that
** wraps), is collected without guards or trees: each shape's cells are
** walked and each point is tested on the index entry's own copy of it; a
** point that an earlier shape took is skipped, so nothing comes twice.
** Candidates are kept first (a lone circle's without a branch per point)
** and then turned into places in a second pass, which fetches records
** ahead, so that the records' misses overlap. */

#define MAX_SHAPES 8            /* leaves of a shape filter                  */

typedef struct shapes {
    const tecs_index_t *x;
    int32_t n;
    const fnode *nd[MAX_SHAPES];
} shapes;

/* Gather the leaves of the `or` tree at c into sh; false if c is not such
** a tree (another operator, another index, too many leaves). */
static bool shape_tree(const tecs_filter_t *f, int32_t c, shapes *sh)
{
    const fnode *nd = &f->nodes[c];
    if (nd->op == F_OR)
        return shape_tree(f, nd->a, sh) && shape_tree(f, nd->b, sh);
    if ((nd->op != F_RADIUS && nd->op != F_BOX) || sh->n == MAX_SHAPES)
        return false;
    const tecs_index_t *x = registry(f->world)->by_id[nd->index];
    if (sh->x != NULL && sh->x != x)
        return false;
    sh->x = x;
    sh->nd[sh->n++] = nd;
    return true;
}

/* Does the point aux holds satisfy shape nd? */
static inline bool shape_holds(const fnode *nd, uint64_t aux)
{
    return nd->op == F_RADIUS ? in_circle(aux, nd->g[0], nd->g[1], nd->g[2]) : in_box(nd, aux);
}

/* Is the point aux holds (of an entry with key k) in shape l of sh and
** in none before it? */
static inline bool shape_takes(const shapes *sh, int32_t l, uint64_t k, uint64_t aux)
{
    if (k == NOWHERE_CELL || !shape_holds(sh->nd[l], aux))
        return false;
    for (int32_t j = 0; j < l; j++)
        if (shape_holds(sh->nd[j], aux))
            return false;
    return true;
}

/* Keep candidate e of a shape, its record fetched. */
static inline void shape_keep(walk *wk, tecs_entity_t e)
{
    const tecs_world_t *w = wk->f->world;
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot < (uint32_t)w->ei.nrecs)
        TECS__PREFETCH(&w->ei.recs[slot]);
    snap_push(wk, 0, e);
}

#define CIRCLE_CELLS 16          /* cells whose slots are read first         */

/* The points of cell c within the circle (cx, cy, r2: squared radius),
** written at the snapshot's end. Each point is written and kept by
** counting it or not, without a branch: whether a point of a cell is in
** the circle is as good as random, so a branch on it would often be
** mispredicted. Only the entity is written: places_of reads nothing else
** and writes the place. The snapshot has room for the whole cell. */
static inline void circle_cell(walk *wk, const tecs_index_t *x, const gcell *c, double cx,
                               double cy, double r2)
{
    snap *s = wk->s;
    okey *v = s->v;
    const gpoint *pts = x->pts;
    const int32_t *bnext = x->bnext;
    size_t n = (size_t)s->n;            /* an index: no widening per point */
    for (int32_t left = c->count, b = c->head, m = head_points(left); left > 0;
         left -= m, b = bnext[b], m = GB) {
        const gpoint *p = &pts[(size_t)b * GB];
        for (int32_t j = 0; j < m; j++) {
            float px = p[j].x, py = p[j].y;     /* read before v is written */
            tecs_entity_t e = p[j].e;
            v[n].e = e;
            n += circle_holds(px, py, cx, cy, r2);
        }
    }
    s->n = (int32_t)n;
}

/* The candidates of a lone circle nd over cells c: shape_walk's cell walk
** with the circle's centre and squared radius in locals (its centre is
** finite and its radius not negative: tecs_filter_radius refuses other
** circles). When the circle covers few cells, the cells it cannot reach
** are left out (cell_gap: a column's and a row's distance found once), the
** slots of the others in the cell table are fetched first, then the first
** block of each cell that has points, so that the cells' misses overlap
** instead of following one another. */
static void circle_walk(walk *wk, const tecs_index_t *x, const fnode *nd, const int32_t c[4])
{
    double cx = nd->g[0], cy = nd->g[1], r2 = circle_r2(nd->g[2]);
    if (cell_count(c) > CIRCLE_CELLS) {
        for (int32_t gx = c[0]; gx <= c[2]; gx++)
            for (int32_t gy = c[1]; gy <= c[3]; gy++) {
                const gcell *cl = grid_cell(x, cell_key(gx, gy));
                if (cl != NULL && snap_room(wk, cl->count))
                    circle_cell(wk, x, cl, cx, cy, r2);
            }
        return;
    }
    if (x->nctab == 0)          /* no cells yet */
        return;
    double cs = x->d.cell_size, dy2[CIRCLE_CELLS];
    for (int32_t gy = c[1]; gy <= c[3]; gy++) {
        double d = cell_gap(gy, cs, cy);
        dy2[gy - c[1]] = d * d;
    }
    uint64_t key[CIRCLE_CELLS];
    uint32_t slot[CIRCLE_CELLS];
    int32_t m = 0;
    for (int32_t gx = c[0]; gx <= c[2]; gx++) {
        double d = cell_gap(gx, cs, cx), dx2 = d * d;
        for (int32_t gy = c[1]; gy <= c[3]; gy++)
            if (dx2 + dy2[gy - c[1]] <= r2) {
                key[m] = cell_key(gx, gy);
                slot[m] = grid_slot(x, key[m]);
                TECS__PREFETCH(&x->ctab[slot[m++]]);
            }
    }
    const gcell *cell[CIRCLE_CELLS];
    int32_t k = 0;
    int64_t points = 0;
    for (int32_t j = 0; j < m; j++) {
        const gcell *cl = grid_cell_from(x, key[j], slot[j]);
        if (cl != NULL) {
            TECS__PREFETCH(&x->pts[(size_t)cl->head * GB]);
            cell[k++] = cl;
            points += cl->count;
        }
    }
    if (!snap_room(wk, points < INT32_MAX ? (int32_t)points : INT32_MAX))
        return;
    for (int32_t j = 0; j < k; j++)
        circle_cell(wk, x, cell[j], cx, cy, r2);
}

/* The candidates of shape l: the points in its cells, or every entry
** when it covers more cells than the index has entries. */
static void shape_walk(walk *wk, const shapes *sh, int32_t l)
{
    const tecs_index_t *x = sh->x;
    int32_t c[4];
    if (x->n == 0 || !leaf_cells(x, sh->nd[l], c))
        return;
    if (cell_count(c) > (int64_t)x->n) {
        for (int32_t i = 0; i < x->n && !wk->err; i++)
            if (shape_takes(sh, l, x->ents[i].key, x->ents[i].aux))
                shape_keep(wk, x->ents[i].e);
        return;
    }
    if (sh->n == 1 && sh->nd[0]->op == F_RADIUS) {
        circle_walk(wk, x, sh->nd[0], c);
        return;
    }
    for (int32_t cx = c[0]; cx <= c[2]; cx++)
        for (int32_t cy = c[1]; cy <= c[3]; cy++) {
            uint64_t k = cell_key(cx, cy);
            const gcell *cl = grid_cell(x, k);
            if (cl == NULL)
                continue;
            GRID_EACH_POINT(x, cl, p)
                if (shape_takes(sh, l, k, point_aux(p)))
                    shape_keep(wk, p->e);
        }
}

/* Records from which a world's rows are likely to miss the cache: below
** it, fetching a shape's rows ahead costs more than it saves. */
#define FAR_RECS 65536

/* Collect the matches of a shape filter: candidates, then their places
** (those the query has, in the snapshot's place, in candidate order),
** their rows fetched ahead in a large world. */
static void drive_shapes(walk *wk, const shapes *sh)
{
    for (int32_t l = 0; l < sh->n && !wk->err; l++)
        shape_walk(wk, sh, l);
    if (wk->err == TECS_OK)
        places_of(wk, 0, wk->f->world->ei.nrecs >= FAR_RECS);
}

/* The driving leaf when the walk keeps one index's key order, else -1. */
static int32_t single_driver(const tecs_filter_t *f, int32_t c)
{
    const fnode *nd = &f->nodes[c];
    if (nd->op == F_AND)
        return single_driver(f, estimate(f, nd->a) <= estimate(f, nd->b) ? nd->a : nd->b);
    if (nd->op == F_OR || nd->op == F_NOT)
        return -1;
    return nd->index;
}

/* No index can drive: test every row of the query, in its order. */
static void scan(walk *wk)
{
    tecs_world_t *w = wk->f->world;
    for (int32_t ai = 0; ai < w->arch.narchs && !wk->err; ai++) {
        tecs_archetype_t *a = w->arch.archs[ai];
        int32_t m = a->count > 0 ? tecs__query_find(wk->q, a) : -1;
        if (m < 0)
            continue;
        for (uint32_t row = 0; row < (uint32_t)a->count && !wk->err; row++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, row);
            if (tecs__query_row_ok(wk->q, m, row) &&
                (wk->f->root < 0 || tecs__filter_holds(wk->f, wk->f->root, e)))
                snap_push(wk, (uint64_t)a->id << 32 | row, e);
        }
    }
}

/* ---- filters: ordering the matches ------------------------------------ */

/* Below this many matches an insertion sort beats the radix sort, whose
** every pass clears and sums a table of counts. */
#define SMALL_SORT 48
_Static_assert(FEW_PLACES <= SMALL_SORT, "places_few keeps no bounds for the radix sort");

/* Insertion sort of v[0..n) by k (keys are distinct places). An item
** below the first moves the sorted part on and goes first; any other
** stops at the first, which spares the inner loop its bound test. */
static void insertion_sort(okey *v, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        okey x = v[i];
        int32_t j = i;
        if (x.k < v[0].k) {
            for (; j > 0; j--)
                v[j] = v[j - 1];
        } else {
            for (; v[j - 1].k > x.k; j--)
                v[j] = v[j - 1];
        }
        v[j] = x;
    }
}

/* Sort v[0..n) by place, through tmp (n items): small arrays by
** insertion, sorted ones left as they are, others by radix, whose passes
** cover only the bits between the smallest and the largest place, in
** digits as narrow as the count of items makes cheapest. */
static void sort_places(okey *v, okey *tmp, int32_t n, const walk *wk)
{
    if (n <= SMALL_SORT) {
        insertion_sort(v, n);
        return;
    }
    uint64_t min = wk->min, max = wk->max;
    bool sorted = wk->rising;
    if (wk->placed != n) {      /* bounds not known from places_of */
        min = max = v[0].k;
        sorted = true;
        for (int32_t i = 1; i < n; i++) {
            sorted &= v[i - 1].k < v[i].k;
            min = v[i].k < min ? v[i].k : min;
            max = v[i].k > max ? v[i].k : max;
        }
    }
    if (!sorted)
        tecs__okey_radix(v, tmp, n, min, max);
}

/* Key order of index x: entities without a key last, ties by slot. */
static int by_key(const tecs_index_t *x, const okey *a, const okey *b)
{
    int32_t i = ent_find(x, a->e), j = ent_find(x, b->e);
    int c = (i < 0) - (j < 0);
    if (c == 0 && i >= 0)
        c = kcmp(x, x->ents[i].key, x->ents[j].key);
    if (c)
        return c;
    uint32_t sa = TECS_ENTITY_INDEX(a->e), sb = TECS_ENTITY_INDEX(b->e);
    return (sa > sb) - (sa < sb);
}

static void reverse(snap *s)
{
    for (int32_t i = 0, j = s->n - 1; i < j; i++, j--) {
        okey t = s->v[i];
        s->v[i] = s->v[j];
        s->v[j] = t;
    }
}

/* Collect the filter's matches among the query's entities, in order. */
static tecs_err_t gather(tecs_filter_t *f, tecs_query_t *q)
{
    walk wk = { f, q, &f->scr, false, tecs__query_rowwise(q), -1, TECS_OK, -1, 0, 0, false };
    f->scr.n = 0;
    f->scr.la = NULL;
    shapes sh = { NULL, 0, { NULL } };
    bool shaped = f->root >= 0 && f->order < 0 && shape_tree(f, f->root, &sh);
    bool scanned = !shaped && (f->root < 0 || estimate(f, f->root) == NO_DRIVE);
    if (shaped) {
        drive_shapes(&wk, &sh);
    } else if (scanned) {
        scan(&wk);
    } else {
        wk.exact = f->nodes[f->root].op < F_AND;
        drive_walk(&wk, NULL, f->root);
        wk.sorted_by = single_driver(f, f->root);
    }
    f->scr.cursor_on = true;
    if (wk.err)
        return tecs__err(f->world, wk.err, "out of memory collecting matches");
    if (f->order >= 0) {
        if ((scanned || wk.sorted_by != f->order) && f->scr.n > 1)
            tecs__okey_sort(f->scr.v, f->scr.v + f->scr.n, f->scr.n, by_key,
                  registry(f->world)->by_id[f->order]);
        if (f->desc)
            reverse(&f->scr);
    } else if (!scanned && f->scr.n > 1) { /* (no array when empty: no NULL + 0) */
        sort_places(f->scr.v, f->scr.v + f->scr.n, f->scr.n, &wk);
    }
    return TECS_OK;
}

/* ---- filtered iteration ----------------------------------------------- */

/* Fill the cursor of an iteration of q over s, if s uses one: the sizes
** of the terms' values, and no step yet. */
static void cursor_init(tecs_query_t *q, snap *s)
{
    cursor *c = cursor_of(s);
    if (c == NULL)
        return;
    const tecs_term_t *terms;
    int32_t nterms = tecs_query_terms(q, &terms);
    for (int32_t t = 0; t < nterms; t++)
        c->size[t] = (uint32_t)tecs_component_size(tecs_query_world(q), terms[t].comp);
    c->ents = NULL;
    c->at = c->group = c->span = 0;
    c->nlive = 0;
}

/* The length of the run of consecutive rows of one chunk that starts at
** position p of the snapshot. */
static int32_t run_at(const snap *s, int32_t p, uint32_t mask)
{
    uint64_t k = s->v[p].k;
    int32_t n = 1;
    while (p + n < s->n && (((uint32_t)k + (uint32_t)n) & mask) != 0 &&
           s->v[p + n].k == k + (uint64_t)n)
        n++;
    return n;
}

/* The length of the run of consecutive rows of one chunk that ends at
** position p of the snapshot (read backwards: the run is v[p - n + 1 .. p],
** in rising places, as run_at finds it from its start). */
static int32_t run_back(const snap *s, int32_t p, uint32_t mask)
{
    uint64_t k = s->v[p].k;
    int32_t n = 1;
    while (p - n >= 0 && (((uint32_t)k - (uint32_t)n + 1) & mask) != 0 &&
           s->v[p - n].k == k - (uint64_t)n)
        n++;
    return n;
}

/* Does the cursor describe the step the iterator is on? */
static inline bool serves(const cursor *c, const tecs_iter_t *it)
{
    return c != NULL && c->ents == it->entities;
}

/* Is place k in the cursor's group? */
static inline bool in_group(const cursor *c, uint64_t k)
{
    return k - c->group < c->span;
}

/* Move the step's fields from the cursor's place to k, in its group, and
** start fetching the row at place kf, in it too. */
static TECS__INLINE void move_rows(tecs_iter_t *it, cursor *c, uint64_t k, uint64_t kf,
                                  int32_t count)
{
    ptrdiff_t d = (ptrdiff_t)(k - c->group) - (ptrdiff_t)(c->at - c->group);
    ptrdiff_t df = (ptrdiff_t)(kf - c->group) - (ptrdiff_t)(k - c->group);
    for (int32_t i = 0; i < c->nlive; i++) {
        int32_t t = c->live[i];
        char *p = (char *)it->fields[t] + d * (ptrdiff_t)c->size[t];
        it->fields[t] = p;
        TECS__PREFETCH(p + df * (ptrdiff_t)c->size[t]);
    }
    it->entities += d;
    it->count = count;
    c->ents = it->entities;
    c->at = k;
}

/* Load the step's fields at place k through the query; note its group. */
static void load_rows(tecs_iter_t *it, snap *s, uint64_t k, int32_t count)
{
    const tecs_world_t *w = it->world;
    tecs_archetype_t *a = w->arch.archs[k >> 32];
    tecs__iter_load_rows(it, snap_match(s, it->priv_.query, a), a, (uint32_t)k, count);
    cursor *c = cursor_of(s);
    if (c == NULL)
        return;
    const struct tecs__chunk *ch = &a->chunks[(uint32_t)k >> w->arch.shift];
    c->ents = it->entities;
    c->at = k;
    c->group = (k & ~(uint64_t)w->arch.mask) - ch->first;
    c->span = (uint64_t)ch->g << w->arch.shift;
    c->nlive = 0;
    for (int32_t t = 0, nt = tecs_query_terms(it->priv_.query, NULL); t < nt; t++)
        if (it->fields[t])
            c->live[c->nlive++] = (uint8_t)t;
}

/* A step that leaves the group of the step before, or fetches outside
** its own: fields at place k loaded or moved, the row at kf fetched. */
static TECS__NOINLINE void far_step(tecs_iter_t *it, snap *s, uint64_t k, uint64_t kf,
                                    int32_t count)
{
    cursor *c = cursor_of(s);
    if (serves(c, it) && in_group(c, k))
        move_rows(it, c, k, k, count);
    else
        load_rows(it, s, k, count);
    if (c && in_group(c, kf)) {
        move_rows(it, c, k, kf, count);
        return;
    }
    tecs_archetype_t *a = it->world->arch.archs[kf >> 32];
    int32_t m = snap_match(s, it->priv_.query, a);
    if (m >= 0)
        tecs__iter_prefetch(it, m, a, (uint32_t)kf);
}

/* snap_step for a query with toggle terms: enabling and disabling apply at
** once, also while the iteration runs, so a run of the snapshot is read
** again when its turn comes: rows that no longer pass are skipped, and the
** run is cut where a row fails or where its optional or any toggle terms
** are present unlike the run's first (a step's fields are arrays or NULL).
** Its fields are loaded afresh, without the cursor. */
static TECS__NOINLINE bool snap_step_varied(tecs_iter_t *it, snap *s)
{
    bool rev = it->priv_.flags & TECS__ITER_REVERSE;
    uint32_t mask = it->world->arch.mask;
    for (;;) {
        int32_t p = it->priv_.pos;
        if (rev ? p <= 0 : p >= s->n)
            return false;
        int32_t n = rev ? run_back(s, p - 1, mask) : run_at(s, p, mask);
        uint64_t k = s->v[rev ? p - n : p].k;
        tecs_archetype_t *a = it->world->arch.archs[k >> 32];
        int32_t m = snap_match(s, it->priv_.query, a), skip;
        uint32_t absent;
        int32_t len = tecs__query_clip(it->priv_.query, m, (uint32_t)k, n, rev, &skip, &absent);
        it->priv_.pos = rev ? p - skip - len : p + skip + len;
        if (len == 0)
            continue;
        tecs__iter_load_rows(it, m, a, (uint32_t)k + (uint32_t)(rev ? n - skip - len : skip),
                             len);
        tecs__iter_drop_fields(it, absent);
        return true;
    }
}

/* snap_step past its common case: the end, a reverse or row-wise
** iteration, a run of more than one row, a step leaving the cursor's
** group (or a snapshot without a cursor). */
static TECS__NOINLINE bool snap_step_any(tecs_iter_t *it, bool fini)
{
    snap *s = it->priv_.src;
    if (fini) {
        s->busy = false;
        if (s->doomed)
            tecs__filter_release(s->doomed);    /* s goes with it */
        return false;
    }
    int32_t p = it->priv_.pos, n;
    uint64_t k, kf;
    if (TECS__UNLIKELY(s->rowwise))
        return snap_step_varied(it, s);
    if (TECS__UNLIKELY(it->priv_.flags & TECS__ITER_REVERSE)) {
        if (p <= 0)             /* pos: the rows not yet handed out */
            return false;
        n = run_back(s, p - 1, it->world->arch.mask);
        p -= n;
        it->priv_.pos = p;
        k = s->v[p].k;
        kf = p - 1 - PREFETCH_AHEAD >= 0 ? s->v[p - 1 - PREFETCH_AHEAD].k : k;
    } else {
        if (p >= s->n)
            return false;
        k = s->v[p].k;
        n = run_at(s, p, it->world->arch.mask);
        it->priv_.pos = p + n;
        kf = p + n + PREFETCH_AHEAD < s->n ? s->v[p + n + PREFETCH_AHEAD].k : k;
    }
    cursor *c = cursor_of(s);
    if (serves(c, it) && in_group(c, k) && in_group(c, kf))
        move_rows(it, c, k, kf, n);
    else
        far_step(it, s, k, kf, n);
    return true;
}

/* The next run of consecutive rows (one chunk) of the snapshot, the row
** PREFETCH_AHEAD steps on being fetched. Rows do not move while it runs:
** the world is deferred. The common case of a where whose matches are
** scattered, a forward step of one row in the cursor's group, is handled
** here with no call, the fields moved by the distance
** from the row before; every other step goes to snap_step_any. */
static bool snap_step(tecs_iter_t *it, bool fini)
{
    snap *s = it->priv_.src;
    int32_t p = it->priv_.pos, n = s->n;
    if (TECS__UNLIKELY(fini || !s->plain || p >= n))
        return snap_step_any(it, fini);
    const okey *v = s->v;
    cursor *c = &s->cur;
    uint64_t k = v[p].k, kf = v[p + PREFETCH_AHEAD + 1 < n ? p + PREFETCH_AHEAD + 1 : p].k;
    if (TECS__UNLIKELY((p + 1 < n && v[p + 1].k == k + 1) || c->ents != it->entities ||
                       k - c->group >= c->span || kf - c->group >= c->span))
        return snap_step_any(it, fini);
    move_rows(it, c, k, kf, 1);
    it->priv_.pos = p + 1;
    return true;
}

#define COPY_ROWS 64            /* rows of a gathered step, at most ...     */
#define COPY_BYTES 16384        /* ... and bytes of their values             */

/* Where the items of a gathered step are: item i's chunk column pointers
** (rows[i][1 + col] is its chunk's column col) and its row in the chunk,
** found once for all the step's terms. */
typedef struct step_rows {
    char *const *rows[COPY_ROWS];
    uint32_t at[COPY_ROWS];
} step_rows;

/* Copy the values of column col (csize bytes a row) at the step's items
** 0..n into dst, one after another, size bytes each; the common sizes
** without a call. */
#define COPY_LOOP(SIZE)                                                                  \
    for (int32_t i = 0; i < n; i++)                                                      \
        memcpy(dst + (size_t)i * (SIZE), sr->rows[i][1 + col] + (size_t)sr->at[i] * csize, \
               (SIZE))
static void copy_column(char *dst, const step_rows *sr, int32_t n, uint32_t col, size_t csize,
                        uint32_t size)
{
    switch (size) {
    case 4: COPY_LOOP(4); break;
    case 8: COPY_LOOP(8); break;
    case 12: COPY_LOOP(12); break;
    case 16: COPY_LOOP(16); break;
    default: COPY_LOOP(size); break;
    }
}
#undef COPY_LOOP

/* Rows of a gathered step that are copied without being fetched first:
** the processor overlaps that many misses on its own. */
#define FEW_ROWS 16

/* A gathered step: up to s->batch results of one archetype, in the
** snapshot's order, their ids and values copied into s->copy, the rows of
** the step found (and, past FEW_ROWS, fetched) first, then copied term by
** term. The query
** writes through no term and the world is deferred, so a copy reads what
** the row holds at the step and nothing is to be reported when the step
** is left. */
static bool snap_step_copy(tecs_iter_t *it, bool fini)
{
    snap *s = it->priv_.src;
    int32_t p = it->priv_.pos, n = s->n;
    if (TECS__UNLIKELY(fini || p >= n))
        return snap_step_any(it, fini);
    const tecs_world_t *w = it->world;
    tecs_query_t *q = it->priv_.query;
    const okey *v = s->v + p;
    uint64_t ai = v[0].k >> 32;
    tecs_archetype_t *a = w->arch.archs[ai];
    int32_t m = snap_match(s, q, a), nt = tecs_query_terms(q, NULL);
    const int16_t *cols = tecs__query_cols(q, m);
    int32_t cnt = 0, most = n - p > s->batch ? s->batch : n - p;
    char *const *kcols = a->cols;
    uint32_t stride = (uint32_t)a->stride, shift = w->arch.shift, mask = w->arch.mask;
    tecs_entity_t *ids = (tecs_entity_t *)(void *)s->copy;
    step_rows sr;
    assert(most <= COPY_ROWS);
    do {                        /* the items of archetype ai, batch at most */
        uint32_t row = (uint32_t)v[cnt].k;
        sr.rows[cnt] = kcols + (size_t)(row >> shift) * stride;
        sr.at[cnt] = row & mask;
        ids[cnt] = v[cnt].e;
        cnt++;
    } while (cnt < most && v[cnt].k >> 32 == ai);
    for (int32_t t = 0; t < nt && cnt > FEW_ROWS; t++)
        if (cols[t] >= 0) {
            uint32_t col = 1 + (uint32_t)cols[t];
            size_t csize = a->col_size[cols[t]];
            for (int32_t i = 0; i < cnt; i++)
                TECS__PREFETCH(sr.rows[i][col] + (size_t)sr.at[i] * csize);
        }
    for (int32_t t = 0; t < nt; t++) {
        it->fields[t] = cols[t] >= 0 ? s->copy + s->off[t] : NULL;
        if (cols[t] >= 0)
            copy_column(s->copy + s->off[t], &sr, cnt, (uint32_t)cols[t],
                        a->col_size[cols[t]], s->cur.size[t]);
    }
    it->priv_.pos = p + cnt;
    it->priv_.arch = a;
    it->priv_.match = m;
    it->priv_.absent = 0;
    it->count = cnt;
    it->entities = ids;
    return true;
}

/* Make s's steps gathered ones (snap_step_copy) if its values fit the
** budget and their room can be had; else s->batch stays 0 and the steps
** are runs of rows in place (no error: only the form of a step differs). */
static void copy_init(tecs_query_t *q, snap *s)
{
    cursor *c = &s->cur;
    int32_t nterms = tecs_query_terms(q, NULL), rows = COPY_ROWS;
    uint64_t per_row = sizeof(tecs_entity_t);
    for (int32_t t = 0; t < nterms; t++)
        per_row += c->size[t];
    while (rows > 8 && per_row * (uint64_t)rows > COPY_BYTES)
        rows /= 2;
    if (per_row * (uint64_t)rows > COPY_BYTES)
        return;
    size_t off = (size_t)rows * sizeof(tecs_entity_t);
    for (int32_t t = 0; t < nterms; t++) {
        off = (off + TECS_MAX_ALIGN - 1) & ~(size_t)(TECS_MAX_ALIGN - 1);
        s->off[t] = (uint32_t)off;
        off += (size_t)rows * c->size[t];
    }
    if (off > s->copy_bytes) {
        tecs_world_t *w = tecs_query_world(q);
        if (s->copy_raw)
            tecs__free_aligned(w, s->copy_raw, s->copy_bytes);
        s->copy_bytes = 0;
        s->copy = tecs__alloc_aligned(w, off, &s->copy_raw);
        if (s->copy == NULL)
            return;
        s->copy_bytes = off;
    }
    s->batch = rows;
}

/* Start an iteration of q that hands out the rows of snapshot s. */
tecs_iter_t tecs__snap_iter(tecs_query_t *q, snap *s, bool reverse)
{
    int32_t flags = reverse ? TECS__ITER_REVERSE : 0;
    tecs_iter_t it = tecs__query_iter(q, reverse);
    if (it.priv_.query == NULL) /* not started (out of memory, world closed) */
        return it;
    s->busy = true;
    s->rowwise = tecs__query_rowwise(q);
    s->plain = s->cursor_on && !s->rowwise && !(flags & TECS__ITER_REVERSE);
    s->la = NULL;
    cursor_init(q, s);
    s->batch = 0;
    if (s->plain && tecs__query_reads_only(q))
        copy_init(q, s);
    it.priv_.src = s;
    it.priv_.step = s->batch ? snap_step_copy : snap_step;
    it.priv_.pos = (flags & TECS__ITER_REVERSE) ? s->n : 0;
    return it;
}

/* Check a where's filter (world entered, query checked by tecs_iter) and
** collect its matches into f's snapshot. */
static tecs_err_t where_gather(tecs_world_t *w, tecs_query_t *q, tecs_filter_t *f)
{
    if (f->world != w)
        return tecs__err(w, TECS_EWORLD, "tecs_iter: a filter of another world");
    if (f->scr.busy)
        return tecs__err(w, TECS_EBUSY, "tecs_iter: the filter is being iterated");
    tecs_err_t err = tecs__filter_ready(f);
    return err ? err : gather(f, q);
}

/* tecs_iter's where form (the filter's source start). */
static tecs_iter_t where_start(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    tecs_err_t err = where_gather(w, d->query, d->where);
    if (err)
        return tecs__iter_failed(w, err);
    return tecs__snap_iter(d->query, &d->where->scr, d->reverse);
}

/* Some index of the filter waits for a rebuild. */
bool tecs__filter_dirty(const tecs_filter_t *f)
{
    for (int32_t i = 0; f && i < f->n; i++)
        if (f->nodes[i].op < F_AND && registry(f->world)->by_id[f->nodes[i].index]->dirty)
            return true;
    const tecs_index_t *x = f && f->order >= 0 ? registry(f->world)->by_id[f->order] : NULL;
    return x && x->dirty;
}

/* A deep copy of f, linked in the world's filters. */
tecs_filter_t *tecs__filter_clone(const tecs_filter_t *src)
{
    tecs_world_t *w = src->world;
    tecs_filter_t *f = tecs_filter_new(w);
    if (f == NULL)
        return NULL;
    if (tecs__grow(w, (void **)&f->nodes, &f->cap, src->n, sizeof *f->nodes) ||
        tecs__grow(w, (void **)&f->keys, &f->capkeys, src->nkeys, sizeof *f->keys) ||
        tecs__grow(w, (void **)&f->str, &f->capstr, src->nstr, 1)) {
        tecs__filter_release(f);
        tecs__err(w, TECS_ENOMEM, "out of memory copying a filter");
        return NULL;
    }
    if (src->n)
        memcpy(f->nodes, src->nodes, (size_t)src->n * sizeof *f->nodes);
    if (src->nkeys)
        memcpy(f->keys, src->keys, (size_t)src->nkeys * sizeof *f->keys);
    if (src->nstr)
        memcpy(f->str, src->str, (size_t)src->nstr);
    f->n = src->n, f->nkeys = src->nkeys, f->nstr = src->nstr;
    f->root = src->root, f->order = src->order, f->desc = src->desc;
    return f;
}
