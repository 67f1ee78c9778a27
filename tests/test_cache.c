/* Cached result sets: membership and events under random changes, with
** and without a filter and an order, out of memory in the events. */
#include "index_fixture.h"

typedef struct members {
    tecs_entity_t in[1024];
    int n;
    int enters, leaves;
} members;

static void on_enter(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    members *m = ctx;
    (void)w;
    for (int i = 0; i < m->n; i++)
        CHECK(m->in[i] != e);
    m->in[m->n++] = e;
    m->enters++;
}

static void on_leave(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    members *m = ctx;
    (void)w;
    for (int i = 0; i < m->n; i++) {
        if (m->in[i] == e) {
            m->in[i] = m->in[--m->n];
            m->leaves++;
            return;
        }
    }
    CHECK(!"leave of a non-member");
}

typedef struct order_ctx {
    members *m;
    tecs_comp_t stats;
} order_ctx;

static int by_d_then_id(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    const order_ctx *o = ctx;
    double da = TECS_GET(w, a, o->stats, Stats)->d, db = TECS_GET(w, b, o->stats, Stats)->d;
    if (da != db && da == da && db == db)
        return da < db ? -1 : 1;
    if ((da != da) != (db != db))
        return da != da ? 1 : -1;
    return (a > b) - (a < b);
}

static void ordered_enter(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    on_enter(w, e, ((order_ctx *)ctx)->m);
}

static void ordered_leave(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    on_leave(w, e, ((order_ctx *)ctx)->m);
}

static int cmp_ids(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

static void check_cache(fx *t, tecs_cache_t *c, const combo *cb, const members *m)
{
    tecs_entity_t got[600], want[600], it_ids[600], order[600];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(t->w, .cache = c) }, got, 600);
    memcpy(order, got, sizeof order);
    int k = expected(t, pred_combo, cb, want);
    CHECK_EQ(n, k);
    CHECK_EQ(n, m->n);
    qsort(got, (size_t)n, sizeof *got, cmp_ids);
    qsort(want, (size_t)k, sizeof *want, cmp_ids);
    same_ids(got, n, want, k);
    tecs_entity_t mine[1024];
    memcpy(mine, m->in, (size_t)m->n * sizeof *mine);
    qsort(mine, (size_t)m->n, sizeof *mine, cmp_ids);
    same_ids(got, n, mine, m->n);
    /* Iteration hands out the same set, with fields. */
    int ni = 0;
    tecs_iter_t it = TECS_ITER(t->w, .cache = c);
    while (tecs_iter_next(&it)) {
        CHECK(TECS_FIELD(&it, Stats, 0) != NULL);
        for (int i = 0; i < it.count; i++)
            it_ids[ni++] = it.entities[i];
    }
    same_ids(it_ids, ni, order, n);
}

TEST(cache_follows_random_changes_with_events)
{
    fx t;
    fx_init(&t, false);
    combo cb = { .how = 3 };
    cb.a = (cond){ .op = TECS_LE, .field = F_A, .k = { tecs_key_int(5) } };
    cb.b = (cond){ .op = 7, .field = F_S, .k = { tecs_key_str("cat"), tecs_key_str(NULL) },
                   .nk = 2 };
    tecs_filter_t *f = tecs_filter_new(t.w);
    tecs_cond_t a = cond_build(&t, f, &cb.a, false);
    tecs_filter_and(f, a, tecs_filter_not(f, cond_build(&t, f, &cb.b, true)));
    members m = { .n = 0 }, mo = { .n = 0 };
    tecs_cache_t *c = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f, .on_enter = on_enter, .on_leave = on_leave, .ctx = &m });
    CHECK(c != NULL);
    order_ctx oc = { &mo, t.stats };
    tecs_cache_t *co = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f, .order = by_d_then_id, .on_enter = ordered_enter,
        .on_leave = ordered_leave, .ctx = &oc });
    CHECK(co != NULL);
    tecs_filter_free(f);        /* the caches keep their own copies */
    CHECK_ERR(tecs_index_free(t.ord[F_A]), TECS_EBUSY);
    /* Members present at creation came without events. */
    tecs_entity_t init[600];
    m.n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(t.w, .cache = c) }, init, 600);
    memcpy(m.in, init, (size_t)m.n * sizeof *init);
    mo.n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(t.w, .cache = co) }, init, 600);
    memcpy(mo.in, init, (size_t)mo.n * sizeof *init);
    CHECK(m.n > 20);
    for (int step = 0; step < 500; step++) {
        random_change(&t);
        if (step % 10 == 0) {
            check_cache(&t, c, &cb, &m);
            check_cache(&t, co, &cb, &mo);
            TW_CHECK(t.w);
        }
    }
    CHECK(m.enters > 10 && m.leaves > 10);
    CHECK_EQ(tecs_cache_count(c), m.n);
    tecs_cache_free(c);
    tecs_cache_free(co);
    CHECK_ERR(tecs_index_free(t.ord[F_A]), TECS_OK);
    tw_free(t.w);
}

TEST(cache_without_filter_tracks_query_membership)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    members m = { .n = 0 };
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){
        .query = q, .on_enter = on_enter, .on_leave = on_leave, .ctx = &m });
    tecs_entity_t e = tecs_new(w);
    tecs_add(w, e, pos);
    CHECK_EQ(m.enters, 0);
    tecs_add(w, e, vel);
    CHECK_EQ(m.enters, 1);
    CHECK_EQ(tecs_cache_count(c), 1);
    tecs_remove(w, e, pos);
    CHECK_EQ(m.leaves, 1);
    tecs_add(w, e, pos);
    tecs_destroy(w, e);
    CHECK_EQ(m.enters, 2);
    CHECK_EQ(m.leaves, 2);
    CHECK_EQ(tecs_cache_count(c), 0);
    tw_free(w);
}

TEST(cache_survives_out_of_memory_in_events)
{
    for (long k = 1; k < 60; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        tecs_comp_t hp = TECS_COMPONENT(w, Health);
        tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        tecs_query_t *q = tecs_query_all(w, 1, &hp);
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(50));
        tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
        CHECK(c != NULL);
        al.fail_at = al.calls + k;
        al.fail_after = k % 2;
        uint64_t rng = (uint64_t)k;
        tecs_entity_t ents[100];
        int n = 0;
        for (int i = 0; i < 300; i++) {
            if (n < 100 && tw_rand(&rng) % 3 == 0) {
                tecs_entity_t e = tecs_new(w);
                if (e)
                    ents[n++] = e;
            } else if (n > 0) {
                tecs_set(w, ents[tw_rand(&rng) % (uint64_t)n], hp,
                         &(Health){ (int)(tw_rand(&rng) % 100) });
            }
        }
        al.fail_at = 0;
        int32_t got = tecs_cache_count(c), want = 0;
        for (int i = 0; i < n; i++) {
            const Health *h = tecs_has(w, ents[i], hp) ? TECS_GET(w, ents[i], hp, Health) : 0;
            want += h && h->hp < 50;
        }
        CHECK_EQ(got, want);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), want);
        TW_CHECK(w);
        tw_free(w);
    }
}

/* ---- reverse and per-entity forms -------------------------------------- */

#define MAXR 600

typedef struct seen {
    tecs_entity_t e[MAXR];
    int n, stop_at;
    tecs_comp_t comp;
    bool destroy;               /* destroy each entity seen (queued)        */
} seen;

static bool record(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    seen *s = ctx;
    CHECK(tecs_is_deferred(w));
    CHECK(fv[0] == tecs_get(w, e, s->comp));
    if (s->destroy) {
        CHECK_ERR(tecs_destroy(w, e), TECS_OK);
        CHECK(tecs_is_alive(w, e));
    }
    s->e[s->n++] = e;
    return s->n == s->stop_at;
}

/* Forward against reverse for one cache: collect (full and short), the
** chunk iterator's steps, each, early stop from the end. */
static void check_cache_reverse(tecs_world_t *w, tecs_cache_t *c, tecs_comp_t comp0)
{
    static tecs_entity_t fwd[MAXR], rev[MAXR];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, fwd, MAXR);
    CHECK(n >= 0 && n <= MAXR);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, rev, MAXR), n);
    for (int i = 0; i < n; i++)
        CHECK_EQ(rev[i], fwd[n - 1 - i]);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, NULL, 0), n);
    if (n > 2) {
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, rev, 2), n);
        CHECK(rev[0] == fwd[n - 1] && rev[1] == fwd[n - 2]);
    }
    /* Chunk iterator: rows of a step in memory order, steps last first;
    ** read backwards it is every entity in reverse. */
    int k = 0;
    tecs_iter_t it = TECS_ITER(w, .cache = c, .reverse = true);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    while (tecs_iter_next(&it)) {
        for (int i = 1; i < it.count; i++)
            CHECK(tecs_get(w, it.entities[i], comp0) > tecs_get(w, it.entities[i - 1], comp0));
        for (int i = it.count - 1; i >= 0; i--, k++)
            CHECK(k < n && it.entities[i] == fwd[n - 1 - k]);
    }
    CHECK_EQ(k, n);
    static seen a, b;
    a = (seen){ .comp = comp0 };
    b = (seen){ .comp = comp0 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, record, &a), TECS_OK);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, record, &b), TECS_OK);
    CHECK_EQ(a.n, n);
    CHECK_EQ(b.n, n);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(a.e[i], fwd[i]);
        CHECK_EQ(b.e[i], fwd[n - 1 - i]);
    }
    for (int stop = 1; stop <= 3; stop++) {
        b = (seen){ .comp = comp0, .stop_at = stop };
        CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, record, &b), TECS_OK);
        CHECK_EQ(b.n, n < stop ? n : stop);
        for (int i = 0; i < b.n; i++)
            CHECK_EQ(b.e[i], fwd[n - 1 - i]);
    }
    CHECK(!tecs_is_deferred(w));
}

TEST(cache_reverse_is_forward_reversed_for_every_form)
{
    fx t;
    fx_init(&t, false);
    members m = { .n = 0 };
    order_ctx oc = { &m, t.stats };
    tecs_filter_t *f = tecs_filter_new(t.w);
    tecs_filter_cmp(f, t.hash[F_A], TECS_NE, tecs_key_int(3));
    tecs_cache_t *plain = tecs_cache_new(t.w, &(tecs_cache_desc_t){ .query = t.q });
    tecs_cache_t *filtered = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f });
    tecs_cache_t *ordered = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f, .order = by_d_then_id, .ctx = &oc });
    CHECK(plain && filtered && ordered);
    for (int round = 0; round < 40; round++) {
        check_cache_reverse(t.w, plain, t.stats);
        check_cache_reverse(t.w, filtered, t.stats);
        check_cache_reverse(t.w, ordered, t.stats);
        for (int i = 0; i < 5; i++)
            random_change(&t);
    }
    tecs_filter_free(f);
    TW_CHECK(t.w);
    tw_free(t.w);
}

/* Bad flags and arguments, and the rules while a cache is walked per
** entity: changes queued, the cache busy (no second iteration, no free). */
static bool nested(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    (void)e, (void)fv;
    tecs_cache_t *c = ctx;
    tecs_iter_t it = TECS_ITER(w, .cache = c, .reverse = true);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    CHECK(!tecs_iter_next(&it));
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, nested, c), TECS_EBUSY);
    CHECK_ERR(tecs_cache_free(c), TECS_EBUSY);
    CHECK(tecs_cache_count(c) >= 0);
    return true;
}

TEST(cache_each_and_reverse_bad_input_and_deferral)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    for (int i = 0; i < 30; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i });
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    tecs_filter_t *f = tecs_filter_new(w);
    const tecs_iter_desc_t bad[4] = {
        { .cache = c, .query = q },                     /* two sources */
        { .cache = c, .where = f, .reverse = true },    /* a where needs a query */
        { .cache = c, .parts = 2, .part = 1 },          /* parts need a query */
        { .cache = c, .archetype = tecs_archetype_get(w, 1, &hp) },
    };
    for (int i = 0; i < 4; i++) {
        tecs_iter_t it = tecs_iter(w, &bad[i]);
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
        CHECK(strstr(tecs_last_error_msg(w), "tecs_iter: "));
        CHECK(!tecs_iter_next(&it));
        seen s = { .comp = hp };
        CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ tecs_iter(w, &bad[i]) }, record, &s), TECS_EINVAL);
        CHECK(strstr(tecs_last_error_msg(w), "tecs_iter: "));
        CHECK_EQ(s.n, 0);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ tecs_iter(w, &bad[i]) }, NULL, 0), -1);
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
        CHECK(!tecs_is_deferred(w));
    }
    tecs_filter_free(f);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = NULL) }, record, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = NULL, .reverse = true) }, record, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, NULL, NULL), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "NULL callback"));
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, NULL, NULL), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = NULL, .reverse = true) }, NULL, 0), -1);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, NULL, 2), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, NULL, -1), -1);
    tecs_iter_t it = TECS_ITER(w, .cache = NULL, .reverse = true);
    CHECK(!tecs_iter_next(&it));
    /* Nested use from the callback: busy. */
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, nested, c), TECS_OK);
    /* Destroys from the callback are queued until the walk ends. */
    static seen s;
    s = (seen){ .comp = hp, .destroy = true, .stop_at = 10 };
    tecs_entity_t last[10];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, last, 10), 30);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, record, &s), TECS_OK);
    CHECK_EQ(s.n, 10);
    for (int i = 0; i < 10; i++) {
        CHECK_EQ(s.e[i], last[i]);
        CHECK(!tecs_is_alive(w, s.e[i]));
    }
    CHECK_EQ(tecs_cache_count(c), 20);
    /* An empty cache: no call, TECS_OK. */
    s = (seen){ .comp = hp, .destroy = true };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, record, &s), TECS_OK);
    CHECK_EQ(s.n, 20);
    CHECK_EQ(tecs_cache_count(c), 0);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, record, &s), TECS_OK);
    CHECK_EQ(s.n, 20);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c, .reverse = true) }, NULL, 0), 0);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}
