/*
** index/cache.c — cached result sets (a query and a filter, kept).
**
** A cache holds the ids of the entities that match, and a map from entity
** slot to position:
**
**     ents: [e4 e9 e2 ...]      pos[slot(e9)] = 2   (position + 1)
**
** It listens to moves (births, deaths, add, remove) and to events of the
** components its filter's indexes watch; on each, it re-decides membership
** for that one entity (query match of its archetype, then the filter's
** test on the indexes' keys), never by re-running the query. The index
** listener runs first, so the keys it tests are current. With an order
** function the ids stay sorted (binary search, then a move: O(n) per
** change); a SET on a with-term component re-places the entity. Without
** one, a new member is appended and a leaving one replaced by the last.
** Should an allocation fail inside an event, the cache is marked stale and
** rebuilt before its next use.
**
** Re-placing one entity by binary search is right only while every other
** member sits where its current key puts it. While an iteration is open
** that does not hold: a write term writes the rows of a step first and
** reports them when the iterator leaves them, so other keys have changed
** unreported. A SET on a sort key while an iteration is open therefore only
** marks the cache unsorted; it is sorted again (a stable merge sort, through
** a scratch array reserved with the members, so it cannot fail) when the
** last open iteration ends, or before it is next read or joined, whichever
** comes first. This holds for every tracked path: tecs_set, tecs_modified,
** write terms of any iteration, the cache's own iterator (which hands out
** its snapshot, not the member array, so the sort does not disturb it).
**
** Freeing a cache while cache events are being delivered (from its own
** on_enter / on_leave, or another cache's) marks it doomed: it gets no
** more events and is freed when the outermost delivery ends.
**
** The index layer learns of caches through the index listener this file
** registers with the first cache (after filter.c's): an index a cache's
** filter names is not freed and follows every set (never sleeps through
** a burst, since the cache re-decides membership on each), the caches are
** released when the world is freed (before the filters and the indexes),
** they are verified after the indexes, and when rows are put in place
** without events (a snapshot load) they are emptied, then refilled once
** the indexes are rebuilt, with no enter / leave callback.
*/
#include "internal.h"

/* ---- cached result sets ----------------------------------------------- */

struct tecs_cache_t {
    tecs__iter_src src;         /* first: tecs_iter starts a cache's iteration
                                   through it                               */
    tecs_world_t *world;
    struct tecs_cache_t *next, *prev; /* the world's caches                 */
    tecs_query_t *q;
    tecs_filter_t *f;           /* own copy, or NULL                        */
    tecs_order_fn order;
    tecs_member_fn on_enter, on_leave;
    void *ctx;
    tecs_entity_t *ents;        /* the members, in the cache's order        */
    int32_t n, cap;
    tecs_entity_t *tmp;         /* ordered: scratch for the sort, >= n      */
    int32_t tmp_cap;
    bool unsorted;              /* ordered: keys changed, sort before use   */
    bool sorting;               /* its order function runs: not freed now   */
    bool doomed;                /* freed during a delivery: dropped after it */
    int32_t *pos;               /* entity slot -> member + 1                */
    int32_t npos;
    bool stale;                 /* an allocation failed: rebuild on use     */
    snap scr;
    tecs_comp_t watched[TECS_MAX_TERMS]; /* components watched for order  */
    int32_t nwatched;
    bool watching;              /* its query's row filters' events too
                                   (tecs__query_watch)                      */
    bool deps;                  /* a move of one entity re-decides others
                                   (tecs__query_has_deps)                   */
};

/* Does some cache's filter name index id? */
static bool caches_use(const tecs__indexes *r, int32_t id)
{
    for (const tecs_cache_t *c = r->caches; c; c = c->next)
        if (c->f && tecs__filter_names(c->f, id))
            return true;
    return false;
}

static int32_t member(const tecs_cache_t *c, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot >= (uint32_t)c->npos || c->pos[slot] == 0 || c->ents[c->pos[slot] - 1] != e)
        return -1;
    return c->pos[slot] - 1;
}

/* Does e belong in c now? */
static bool wants(const tecs_cache_t *c, tecs_entity_t e)
{
    tecs_world_t *w = c->world;
    const tecs__record *r = tecs__ei_alive(w, e);
    int32_t m = r != NULL ? tecs__query_find(c->q, tecs__rec_arch(w, r)) : -1;
    if (m < 0 || !tecs__query_row_ok(c->q, m, r->row))
        return false;
    return c->f == NULL || c->f->root < 0 || tecs__filter_holds(c->f, c->f->root, e);
}

static void renumber(tecs_cache_t *c, int32_t from, int32_t to)
{
    for (int32_t i = from; i < to; i++)
        c->pos[TECS_ENTITY_INDEX(c->ents[i])] = i + 1;
}

/* The cache's order function on a and b; rows may be in motion (R1). */
static int order_of(const tecs_cache_t *c, tecs_entity_t a, tecs_entity_t b)
{
    tecs_err_t outer_err = tecs__hook_begin(c->world);
    int r = c->order(c->world, a, b, c->ctx);
    tecs__hook_end(c->world, outer_err);
    return r;
}

/* Where e goes in an ordered cache (binary search). */
static int32_t place(const tecs_cache_t *c, tecs_entity_t e)
{
    int32_t lo = 0, hi = c->n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (order_of(c, c->ents[mid], e) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Are the members in order? */
static bool in_order(const tecs_cache_t *c)
{
    for (int32_t i = 1; i < c->n; i++)
        if (order_of(c, c->ents[i - 1], c->ents[i]) > 0)
            return false;
    return true;
}

/* Merge the sorted runs src[lo, mid) and src[mid, hi) into dst, stably. */
static void merge(const tecs_cache_t *c, const tecs_entity_t *src, tecs_entity_t *dst,
                  int32_t lo, int32_t mid, int32_t hi)
{
    int32_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi)
        dst[k++] = order_of(c, src[j], src[i]) < 0 ? src[j++] : src[i++];
    while (i < mid)
        dst[k++] = src[i++];
    while (j < hi)
        dst[k++] = src[j++];
}

/* Sort the members: a bottom-up merge sort through tmp. */
static void merge_sort(tecs_cache_t *c)
{
    tecs_entity_t *src = c->ents, *dst = c->tmp;
    for (int32_t width = 1; width < c->n; width *= 2) {
        for (int32_t lo = 0; lo < c->n; lo += 2 * width) {
            int32_t mid = lo + width < c->n ? lo + width : c->n;
            int32_t hi = lo + 2 * width < c->n ? lo + 2 * width : c->n;
            merge(c, src, dst, lo, mid, hi);
        }
        tecs_entity_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != c->ents)
        memcpy(c->ents, src, (size_t)c->n * sizeof *c->ents);
    renumber(c, 0, c->n);
}

/* Put an unsorted cache back in order. */
static void resort(tecs_cache_t *c)
{
    c->unsorted = false;
    c->sorting = true;
    if (!in_order(c))
        merge_sort(c);
    c->sorting = false;
}

/* Add e (room reserved). */
static void put(tecs_cache_t *c, tecs_entity_t e)
{
    if (c->unsorted)
        resort(c);
    c->sorting = true;
    int32_t i = c->order ? place(c, e) : c->n;
    c->sorting = false;
    memmove(c->ents + i + 1, c->ents + i, (size_t)(c->n - i) * sizeof *c->ents);
    c->ents[i] = e;
    c->n++;
    renumber(c, i, c->order ? c->n : i + 1);
}

static void cache_take(tecs_cache_t *c, int32_t i)
{
    c->pos[TECS_ENTITY_INDEX(c->ents[i])] = 0;
    c->n--;
    if (c->order) {
        memmove(c->ents + i, c->ents + i + 1, (size_t)(c->n - i) * sizeof *c->ents);
        renumber(c, i, c->n);
    } else if (i < c->n) {
        c->ents[i] = c->ents[c->n];
        renumber(c, i, i + 1);
    }
}

static tecs_err_t cache_reserve(tecs_cache_t *c, int32_t n)
{
    tecs_world_t *w = c->world;
    if (tecs__grow(w, (void **)&c->ents, &c->cap, c->n + n, sizeof *c->ents) ||
        (c->order && tecs__grow(w, (void **)&c->tmp, &c->tmp_cap, c->n + n, sizeof *c->tmp)))
        return TECS_ENOMEM;
    int32_t old = c->npos;
    if (w->ei.nrecs > c->npos) {
        if (tecs__grow(w, (void **)&c->pos, &c->npos, w->ei.nrecs, sizeof *c->pos))
            return TECS_ENOMEM;
        memset(c->pos + old, 0, (size_t)(c->npos - old) * sizeof *c->pos);
    }
    return TECS_OK;
}

/* Is e dying right now, its death events being raised while its row still
** holds it (w->store.leaving, entity.c)? A cache filled meanwhile would not hear
** of its death. */
static bool dying(const tecs_world_t *w, tecs_entity_t e)
{
    return e == w->store.leaving && w->store.leaving_comp == 0;
}

/* Fill c from scratch, without callbacks; a dying entity is left out. */
static tecs_err_t cache_fill(tecs_cache_t *c)
{
    tecs_world_t *w = c->world;
    c->n = 0;
    c->unsorted = false;
    if (c->npos)
        memset(c->pos, 0, (size_t)c->npos * sizeof *c->pos);
    for (int32_t ai = 0; ai < w->arch.narchs; ai++) {
        tecs_archetype_t *a = w->arch.archs[ai];
        if (a->count == 0 || tecs__query_find(c->q, a) < 0)
            continue;
        if (cache_reserve(c, a->count))
            return TECS_ENOMEM;
        for (uint32_t row = 0; row < (uint32_t)a->count; row++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, row);
            if (wants(c, e) && !dying(w, e))
                put(c, e);
        }
    }
    return TECS_OK;
}

/* Bring a stale cache back. */
static tecs_err_t cache_ready(tecs_cache_t *c)
{
    if (c->f && tecs__filter_ready(c->f))
        return c->world->base.err;
    if (!c->stale) {
        if (c->unsorted)
            resort(c);
        return TECS_OK;
    }
    if (cache_fill(c))
        return tecs__err(c->world, TECS_ENOMEM, "out of memory rebuilding a cache");
    c->stale = false;
    tecs__settle(c->world);     /* what the order function queued */
    return TECS_OK;
}

/* Re-decide e's membership (it is dying if `dying`); resort it if `moved`
** (an ordered value changed). */
static void cache_update(tecs_cache_t *c, tecs_entity_t e, bool moved, bool dying)
{
    if (c->stale || tecs__filter_dirty(c->f)) {
        c->stale = true;
        return;
    }
    bool want = !dying && wants(c, e);
    int32_t i = member(c, e);
    if (want && i >= 0 && moved && c->order) {
        if (c->world->query.niters > 0)
            c->unsorted = true;     /* other keys may be written, unreported */
        else if (c->unsorted)
            resort(c);
        else {
            cache_take(c, i);
            put(c, e);
        }
    } else if (want && i < 0) {
        tecs_err_t outer = c->world->base.err;
        if (cache_reserve(c, 1)) {
            c->stale = true;    /* rebuilt at its next use: the call succeeds */
            tecs__err_restore(c->world, outer);
            return;
        }
        put(c, e);
        if (c->on_enter) {
            tecs_err_t outer_err = tecs__cb_begin(c->world);
            c->on_enter(c->world, e, c->ctx);
            tecs__cb_end(c->world, outer_err);
        }
    } else if (!want && i >= 0) {
        cache_take(c, i);
        if (c->on_leave) {
            tecs_err_t outer_err = tecs__cb_begin(c->world);
            c->on_leave(c->world, e, c->ctx);
            tecs__cb_end(c->world, outer_err);
        }
    }
}

/* Does an event on comp matter to c? */
static bool cache_cares(const tecs_cache_t *c, tecs_comp_t comp, bool *moved)
{
    *moved = false;
    for (int32_t i = 0; i < c->nwatched; i++)
        if (c->watched[i] == comp) {
            *moved = true;      /* a key of its order */
            return true;
        }
    if (tecs__query_toggles(c->q, comp))
        return true;
    const tecs_filter_t *f = c->f;
    for (int32_t i = 0; f && i < f->n; i++)
        if (f->nodes[i].op < F_AND &&
            registry(f->world)->by_id[f->nodes[i].index]->d.comp == comp)
            return true;
    return false;
}

static void cache_release(tecs_cache_t *c)
{
    tecs_world_t *w = c->world;
    tecs__indexes *r = registry(w);
    if (c->prev)
        c->prev->next = c->next;
    else if (r->caches == c)
        r->caches = c->next;
    if (c->next)
        c->next->prev = c->prev;
    for (int32_t i = 0; i < c->nwatched; i++)
        w->comp.comps[c->watched[i]].watch--;
    if (c->watching)
        tecs__query_watch(c->q, -1);
    if (c->f)
        tecs__filter_release(c->f);
    tecs__free(w, c->ents, (size_t)c->cap * sizeof *c->ents);
    tecs__free(w, c->tmp, (size_t)c->tmp_cap * sizeof *c->tmp);
    tecs__free(w, c->pos, (size_t)c->npos * sizeof *c->pos);
    tecs__snap_free(w, &c->scr);
    tecs__free(w, c, sizeof *c);
}

/* Free a cache a user freed: its query is used no more. */
static void cache_drop(tecs_cache_t *c)
{
    tecs__query_use(c->q, -1);
    cache_release(c);
}

/* A delivery of events (and so of user callbacks) ends: at the outermost,
** free the caches freed meanwhile. */
static void delivery_end(tecs__indexes *r)
{
    if (--r->dispatching > 0 || !r->any_doomed)
        return;
    r->any_doomed = false;
    for (tecs_cache_t *c = r->caches, *next; c; c = next) {
        next = c->next;
        if (c->doomed)
            cache_drop(c);
    }
}

static void dep_moved(tecs_world_t *w, tecs_entity_t dep, void *ctx)
{
    tecs_cache_t *c = ctx;
    (void)w;
    if (!c->doomed)
        cache_update(c, dep, false, false);
}

/* A move re-decides the entity and, in a cache whose query reads other
** entities, those that read it (the children of a parent that moved). */
static void cache_on_move(tecs_world_t *w, void *ctx, tecs_entity_t e, tecs_archetype_t *from,
                          tecs_archetype_t *to)
{
    tecs__indexes *r = ctx;
    (void)w;
    r->dispatching++;
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        if (c->doomed)
            continue;
        cache_update(c, e, false, to == NULL);
        if (c->deps && from != NULL && to != NULL && !c->doomed)
            tecs__query_each_dep(c->q, e, dep_moved, c);
    }
    delivery_end(r);
}

static void cache_on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t comp,
                          const void *ptr)
{
    tecs__indexes *r = ctx;
    (void)w, (void)ptr;
    r->dispatching++;
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        bool moved;
        if (!c->doomed && cache_cares(c, comp, &moved))
            cache_update(c, e, moved && ev == TECS__EV_SET, false);
    }
    delivery_end(r);
}

/* The last open iteration ended: sort the caches whose keys changed. */
static void cache_on_iters_done(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    (void)w;
    r->dispatching++;
    for (tecs_cache_t *c = r->caches; c; c = c->next)
        if (c->unsorted && !c->doomed && !c->stale)
            resort(c);
    delivery_end(r);
}

/* Watch the with-terms' components of an ordered cache, so value changes
** reorder it, and the events of its row filters (enabling and disabling a
** toggle term's component, a sparse one's or a pair's coming and going),
** so they change the members. */
static void watch_terms(tecs_cache_t *c)
{
    const tecs_term_t *terms;
    int32_t n = tecs_query_terms(c->q, &terms);
    for (int32_t t = 0; t < n && c->order; t++) {
        if (terms[t].oper == TECS_NONE || terms[t].target != 0 || terms[t].from_parent ||
            terms[t].inherited ||
            tecs_component_size(c->world, terms[t].comp) == 0)
            continue;
        c->watched[c->nwatched++] = terms[t].comp;
        c->world->comp.comps[terms[t].comp].watch++;
    }
    tecs__query_watch(c->q, 1);
    c->watching = true;
    c->deps = tecs__query_has_deps(c->q);
}

/* ---- the cache layer's index listener --------------------------------- */

/* Verify every cache against its query and filter (tecs_world_check). */
static tecs_err_t caches_verify(tecs__indexes *r, tecs_world_t *w)
{
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        if (c->stale || c->doomed || tecs__filter_dirty(c->f))
            continue;
        if (c->unsorted && w->query.niters == 0)
            return tecs__err(w, TECS_ECORRUPT, "cache waits for a sort with no iteration open");
        for (int32_t i = 0; i < c->n; i++)
            if (member(c, c->ents[i]) != i || !wants(c, c->ents[i]))
                return tecs__err(w, TECS_ECORRUPT, "cache holds a non-member");
        /* An unsorted cache is sorted when the last iteration ends; while
        ** one is open, keys written through it are not reported yet, so
        ** the order holds only once none is. */
        c->sorting = true;
        bool sorted = !c->order || c->unsorted || w->query.niters > 0 || in_order(c);
        c->sorting = false;
        if (!sorted)
            return tecs__err(w, TECS_ECORRUPT, "cache out of order");
    }
    return TECS_OK;
}

/* An index a cache's filter names stays. */
static tecs_err_t caches_on_free(tecs__indexes *r, const tecs_index_t *x)
{
    if (caches_use(r, x->id))
        return tecs__err(x->world, TECS_EBUSY, "a cache uses " TECS__INDEX_FMT ": free the "
                         "cache first", TECS__INDEX(x));
    return TECS_OK;
}

/* (The queries may be gone: the watch counts no longer matter.) */
static void caches_on_fini(tecs__indexes *r)
{
    while (r->caches) {
        r->caches->watching = false;
        cache_release(r->caches);
    }
}

/* The rows are being replaced: every cache empty, refilled before use. */
static void caches_drop(tecs__indexes *r)
{
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        c->n = 0;
        c->unsorted = false;
        if (c->npos)
            memset(c->pos, 0, (size_t)c->npos * sizeof *c->pos);
        c->stale = true;
    }
}

/* Rows of the archetypes c's query matches (its members and more). */
static int32_t cache_rows(const tecs_cache_t *c)
{
    const tecs_world_t *w = c->world;
    int32_t n = 0;
    for (int32_t ai = 0; ai < w->arch.narchs; ai++)
        if (w->arch.archs[ai]->count > 0 && tecs__query_find(c->q, w->arch.archs[ai]) >= 0)
            n += w->arch.archs[ai]->count;
    return n;
}

/* Refill every cache from the rows, the indexes rebuilt: room for all of
** them first, so that no order function runs unless every cache fills. */
static tecs_err_t caches_refill(tecs__indexes *r, tecs_world_t *w)
{
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        if (c->f && tecs__filter_ready(c->f))
            return w->base.err;
        int32_t n = cache_rows(c);
        if (n > 0 && cache_reserve(c, n))
            return tecs__err(w, TECS_ENOMEM, "out of memory refilling a cache");
    }
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        if (cache_fill(c))          /* room was made: it cannot fail */
            return tecs__err(w, TECS_ENOMEM, "out of memory refilling a cache");
        c->stale = false;
    }
    tecs__settle(w);                /* what the order functions queued */
    return TECS_OK;
}

static const tecs__index_listener caches_listener = {
    .on_free = caches_on_free, .follows = caches_use, .on_fini = caches_on_fini,
    .verify = caches_verify, .drop = caches_drop, .refill = caches_refill
};

static tecs_err_t cache_listen(tecs_world_t *w, tecs__indexes *r)
{
    if (r->cache_listening)
        return TECS_OK;
    tecs__listener l = { .on_move = cache_on_move, .on_comp = cache_on_comp,
                         .on_iters_done = cache_on_iters_done, .ctx = r };
    if (tecs__listen(w, &l))
        return TECS_ENOMEM;
    r->cache_listening = true;
    tecs__filters_listen(r);    /* first, so that caches (and the filters they
                                ** own) are released before the filters */
    tecs__index_listen(r, &caches_listener);
    return TECS_OK;
}

static tecs_err_t validate_cache_desc(tecs_world_t *w, const tecs_cache_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_cache_new: NULL description");
    if (d->query == NULL)
        return tecs__err(w, TECS_EINVAL, "a cache needs a query");
    if (tecs_query_world(d->query) != w)
        return tecs__err(w, TECS_EWORLD, "tecs_cache_new: query of another world");
    if (tecs__query_has_changes(d->query))
        return tecs__err(w, TECS_EINVAL, "a cache's query takes no change terms (its members "
                         "would come and go with the ticks, unannounced)");
    if (d->filter && d->filter->world != w)
        return tecs__err(w, TECS_EWORLD, "tecs_cache_new: filter of another world");
    if (d->filter && d->filter->err)
        return tecs__err(w, d->filter->err, "the filter failed while being built: %s",
                         d->filter->why);
    return TECS_OK;
}

static tecs_iter_t cache_start(tecs_world_t *w, const tecs_iter_desc_t *d);

tecs_cache_t *tecs_cache_new(tecs_world_t *w, const tecs_cache_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || validate_cache_desc(w, d))
        return NULL;
    tecs__indexes *r = tecs__index_registry(w);
    tecs_cache_t *c = r && !cache_listen(w, r) ? tecs__alloc(w, sizeof *c) : NULL;
    if (c == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a cache");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    *c = (tecs_cache_t){ .src = { cache_start }, .world = w, .q = d->query, .order = d->order,
                         .on_enter = d->on_enter, .on_leave = d->on_leave, .ctx = d->ctx };
    c->next = r->caches;
    if (r->caches)
        r->caches->prev = c;
    r->caches = c;
    if ((d->filter && (c->f = tecs__filter_clone(d->filter)) == NULL) ||
        (c->f && tecs__filter_ready(c->f)) || cache_fill(c)) {
        if (w->base.err != TECS_ENOENT)
            tecs__err(w, TECS_ENOMEM, "out of memory creating a cache");
        cache_release(c);
        return NULL;
    }
    watch_terms(c);
    tecs__query_use(c->q, +1);
    tecs__settle(w);            /* what the order function queued */
    return c;
}

tecs_err_t tecs_cache_free(tecs_cache_t *c)
{
    if (c == NULL)
        return TECS_OK;
    tecs_world_t *w = c->world;
    tecs_err_t err = tecs__enter_object(w);
    if (err)
        return err;
    if (c->scr.busy)
        return tecs__err(w, TECS_EBUSY, "the cache is being iterated");
    if (c->sorting)
        return tecs__err(w, TECS_EBUSY, "the cache's order function is running");
    tecs__indexes *r = registry(w);
    if (r->dispatching > 0) {       /* from a cache callback: after it */
        c->doomed = true;
        r->any_doomed = true;
        return TECS_OK;
    }
    cache_drop(c);
    return TECS_OK;
}

int32_t tecs_cache_count(tecs_cache_t *c)
{
    if (c == NULL || tecs__enter(c->world) || cache_ready(c))
        return -1;
    return c->n;
}

/* tecs_iter_collect of a cache's iteration not stepped yet: the ids in the
** cache's order (from its end in reverse), read without a step, so that
** no row counts as written; then the iteration ends. */
static int32_t cache_collect(tecs_iter_t *it, tecs_entity_t *out, int32_t cap)
{
    const snap *s = it->priv_.src;
    bool rev = tecs__iter_reversed(it);
    int32_t n = s->n < cap ? s->n : cap, all = s->n;
    for (int32_t i = 0; i < n; i++)
        out[i] = s->v[rev ? all - 1 - i : i].e;
    tecs_iter_fini(it);
    return all;
}

/* tecs_iter's cache form (the cache's source start; the world entered). */
static tecs_iter_t cache_start(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    tecs_cache_t *c = d->cache;
    if (c->world != w)
        return tecs__iter_failed(w, tecs__err(w, TECS_EWORLD, "tecs_iter: a cache of "
                                              "another world"));
    if (c->scr.busy)
        return tecs__iter_failed(w, tecs__err(w, TECS_EBUSY, "tecs_iter: the cache is "
                                              "being iterated"));
    tecs_err_t err = cache_ready(c);
    if (err)
        return tecs__iter_failed(w, err);
    if (c->scr.cap < c->n &&
        tecs__grow(w, (void **)&c->scr.v, &c->scr.cap, c->n, sizeof *c->scr.v))
        return tecs__iter_failed(w, tecs__err(w, TECS_ENOMEM, "out of memory iterating a "
                                              "cache"));
    for (int32_t i = 0; i < c->n; i++)
        c->scr.v[i] = (okey){ place_of(tecs__ei_alive(w, c->ents[i])), c->ents[i] };
    c->scr.n = c->n;
    c->scr.rows.collect = cache_collect;
    return tecs__snap_iter(c->q, &c->scr, d->reverse);
}

