/* Filters and where: every operator alone and combined against brute
** force, key order, the where iterator's runs and fields, spatial regions,
** results in query order, deferral inside a where iteration. */
#include "index_fixture.h"

TEST(filter_every_operator_matches_brute_force)
{
    fx t;
    fx_init(&t, false);
    check_random_filters(&t, 600);
    tw_free(t.w);
}

TEST(filter_key_order_ascending_and_descending)
{
    fx t;
    fx_init(&t, false);
    for (int desc = 0; desc < 2; desc++) {
        tecs_filter_t *f = tecs_filter_new(t.w);
        tecs_filter_cmp(f, t.ord[F_A], TECS_GE, tecs_key_int(-10));
        CHECK_ERR(tecs_filter_order(f, t.ord[F_A], desc), TECS_OK);
        tecs_entity_t got[600];
        int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600);
        CHECK(n > 10);
        for (int i = 1; i < n; i++) {
            int a0 = TECS_GET(t.w, got[i - 1], t.stats, Stats)->a;
            int a1 = TECS_GET(t.w, got[i], t.stats, Stats)->a;
            CHECK(desc ? a0 >= a1 : a0 <= a1);
            if (a0 == a1)
                CHECK(desc ? TECS_ENTITY_INDEX(got[i - 1]) > TECS_ENTITY_INDEX(got[i])
                           : TECS_ENTITY_INDEX(got[i - 1]) < TECS_ENTITY_INDEX(got[i]));
        }
        /* Ordered by another index than the one that drives. */
        CHECK_ERR(tecs_filter_order(f, t.ord[F_D], false), TECS_OK);
        n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600);
        for (int i = 1; i < n; i++) {
            double d0 = TECS_GET(t.w, got[i - 1], t.stats, Stats)->d;
            double d1 = TECS_GET(t.w, got[i], t.stats, Stats)->d;
            CHECK(d0 <= d1 || d1 != d1);
        }
        CHECK_ERR(tecs_filter_order(f, t.hash[F_A], false), TECS_EINVAL);
        tecs_filter_free(f);
    }
    tw_free(t.w);
}

static bool each_hp(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    int *calls = ctx;
    const Position *p = fv[0];
    const Health *h = fv[1];
    CHECK(tecs_is_alive(w, e));
    CHECK_EQ(h->hp, 10 + *calls);
    CHECK_EQ(p->x, h->hp);
    return ++*calls == 5;
}

TEST(filter_where_iterator_hands_out_runs_with_fields)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ hp, pos });
    Health h[100];
    Position p[100];
    for (int i = 0; i < 100; i++)
        h[i].hp = i, p[i] = (Position){ (float)i, 0 };
    CHECK_ERR(tecs_new_bulk(w, a, 100, NULL, 2,
                            (tecs_value_t[]){ { hp, h }, { pos, p } }), TECS_OK);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = hp, .access = TECS_READ});
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_between(f, x, tecs_key_int(10), tecs_key_int(39));
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    int steps = 0, total = 0;
    while (tecs_iter_next(&it)) {
        Position *ps = TECS_FIELD(&it, Position, 0);
        Health *hs = TECS_FIELD(&it, Health, 1);
        for (int i = 0; i < it.count; i++) {
            CHECK_EQ(hs[i].hp, 10 + total);
            CHECK_EQ(ps[i].x, 10 + total);
            total++;
        }
        steps++;
    }
    CHECK_EQ(total, 30);
    CHECK_EQ(steps, 1);         /* consecutive rows come as one run */
    /* The per-entity form, stopped early by its callback. */
    int calls = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, each_hp, &calls), TECS_OK);
    CHECK_EQ(calls, 5);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, NULL), TECS_EINVAL);
    /* between lo > hi: empty, not a hang. */
    tecs_filter_t *g = tecs_filter_new(w);
    tecs_filter_between(g, x, tecs_key_int(50), tecs_key_int(40));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = g) }, NULL, 0), 0);
    tw_free(w);
}

/* ---- spatial ---------------------------------------------------------- */

TEST(filter_spatial_radius_and_box_with_huge_and_bad_regions)
{
    fx t;
    fx_init(&t, false);
    tecs_entity_t got[600];
    tecs_filter_t *f = tecs_filter_new(t.w);
    tecs_filter_radius(f, t.grid, 0, 0, 1e30f);                /* every finite point */
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600), m = 0;
    for (int i = 0; i < t.nents; i++) {
        const Position *p = tecs_has(t.w, t.ents[i], t.pos) && tecs_has(t.w, t.ents[i], t.stats)
                                ? TECS_GET(t.w, t.ents[i], t.pos, Position) : NULL;
        m += p && p->x == p->x;
    }
    CHECK_EQ(n, m);
    /* Circles tecs_index_near refuses are refused here too: the filter
    ** keeps the error and every use of it fails. */
    const float bad[4][3] = { { 0, 0, -1 }, { NAN, 0, 5 }, { 0, 0, NAN }, { INFINITY, 0, 5 } };
    for (int i = 0; i < 4; i++) {
        CHECK_ERR(tecs_filter_reset(f), TECS_OK);
        CHECK_EQ(tecs_filter_radius(f, t.grid, bad[i][0], bad[i][1], bad[i][2]), -1);
        CHECK_EQ(tecs_last_error(t.w), TECS_EINVAL);
        CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600), -1);
        CHECK_EQ(tecs_last_error(t.w), TECS_EINVAL);
    }
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    tecs_filter_box(f, t.grid, 10, 10, -10, -10);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600), 0);
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);                  /* every finite point */
    tecs_filter_box(f, t.grid, -INFINITY, -INFINITY, INFINITY, INFINITY);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600), m);
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    CHECK_EQ(tecs_filter_box(f, t.grid, 0, NAN, 1, 1), -1);
    CHECK_EQ(tecs_last_error(t.w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600), -1);
    tw_free(t.w);
}

/* ---- results in query order --------------------------------------------- */

/* Results of every size, on both sides of the small-sort cut-off, come in
** the query's order (archetype, chunk, row), whatever order the index
** walks them in. */
TEST(filter_where_results_of_every_size_in_query_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    uint64_t rng = 7;
    for (int i = 0; i < 300; i++) {         /* hp a permutation-ish of 0..299 */
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {(int)((i * 7919) % 300)});
        if (tw_rand(&rng) % 3 == 0)
            TECS_SET(w, e, pos, Position, {0, 0});
        if (tw_rand(&rng) % 3 == 0)
            TECS_SET(w, e, vel, Velocity, {0, 0});
    }
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp, .access = TECS_READ});
    tecs_entity_t all[300], got[300];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, 300), 300);
    for (int lim = 0; lim <= 120; lim++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(lim));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, 300), lim);
        for (int i = 0, m = 0; i < 300; i++)
            if (TECS_GET(w, all[i], hp, Health)->hp < lim)
                CHECK_EQ(got[m++], all[i]);
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Scattered results, in chunks of one bulk group, of many small groups and
** of several archetypes (Velocity optional), in query order and in key
** order both ways, and through a cache: every step's fields hold its
** entities' values, and the results are the brute-force ones in the promised
** order (order: 0 the query's, 1 / -1 ascending / descending keys, 2 any). */
static void check_scattered(tecs_world_t *w, tecs_query_t *q, tecs_iter_t it, int lo, int hi,
                            int order, const tecs_entity_t *all, int nall)
{
    const tecs_term_t *terms;
    tecs_query_terms(q, &terms);
    tecs_comp_t pos = terms[0].comp, hp = terms[1].comp, vel = terms[2].comp;
    int n = 0, want = 0, m = 0, last = order > 0 ? INT32_MIN : INT32_MAX;
    for (int i = 0; i < nall; i++) {
        int k = TECS_GET(w, all[i], hp, Health)->hp;
        want += k >= lo && k <= hi;
    }
    while (tecs_iter_next(&it)) {
        const Position *ps = tecs_field(&it, 0);
        const Health *hs = tecs_field(&it, 1);
        const Velocity *vs = tecs_field(&it, 2);
        CHECK(it.count >= 1);
        CHECK_EQ(vs != NULL, tecs_has(w, it.entities[0], vel));
        for (int i = 0; i < it.count; i++, n++) {
            tecs_entity_t e = it.entities[i];
            CHECK_EQ(hs[i].hp, TECS_GET(w, e, hp, Health)->hp);
            CHECK_EQ(ps[i].x, TECS_GET(w, e, pos, Position)->x);
            if (vs)
                CHECK_EQ(vs[i].y, TECS_GET(w, e, vel, Velocity)->y);
            CHECK(hs[i].hp >= lo && hs[i].hp <= hi);
            if (order == 0) {           /* query order: the next match of all */
                while (m < nall && all[m] != e)
                    m++;
                CHECK(m < nall);
            } else if (order != 2) {
                CHECK(order > 0 ? hs[i].hp >= last : hs[i].hp <= last);
                last = hs[i].hp;
            }
        }
    }
    CHECK_EQ(n, want);
}

TEST(filter_where_fields_follow_scattered_rows_in_every_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    enum { NB = 400, NS = 300, N = 2 * NB + NS };
    static Health h[NB];
    static Position p[NB];
    static Velocity v[NB];
    int key = 0;
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ hp, pos });
    tecs_archetype_t *b = tecs_archetype_get(w, 3, (tecs_comp_t[]){ hp, pos, vel });
    for (int i = 0; i < NB; i++, key++) {
        h[i].hp = (key * 7919) % N;
        p[i] = (Position){ (float)h[i].hp, (float)i };
        v[i] = (Velocity){ 0, (float)-h[i].hp };
    }
    CHECK_ERR(tecs_new_bulk(w, a, NB, NULL, 2, (tecs_value_t[]){ { hp, h }, { pos, p } }),
              TECS_OK);
    uint64_t rng = 99;
    for (int i = 0; i < NS; i++, key++) {   /* one by one: many small groups */
        tecs_entity_t e = tecs_new(w);
        int k = (key * 7919) % N;
        TECS_SET(w, e, hp, Health, {k});
        TECS_SET(w, e, pos, Position, {(float)k, (float)i});
        if (tw_rand(&rng) % 2)
            TECS_SET(w, e, vel, Velocity, {0, (float)-k});
    }
    for (int i = 0; i < NB; i++, key++) {
        h[i].hp = (key * 7919) % N;
        p[i] = (Position){ (float)h[i].hp, (float)i };
        v[i] = (Velocity){ 0, (float)-h[i].hp };
    }
    CHECK_ERR(tecs_new_bulk(w, b, NB, NULL, 3,
                            (tecs_value_t[]){ { hp, h }, { pos, p }, { vel, v } }), TECS_OK);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ},
                                 {.comp = hp, .access = TECS_READ},
                                 {.comp = vel, .oper = TECS_OPTIONAL, .access = TECS_READ});
    static tecs_entity_t all[N];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, N), N);
    for (int round = 0; round < 60; round++) {
        int lo = (int)(tw_rand(&rng) % N), hi = lo + (int)(tw_rand(&rng) % (N / 3));
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
        int order = round % 3 - 1;          /* descending, query, ascending */
        if (order)
            CHECK_ERR(tecs_filter_order(f, x, order < 0), TECS_OK);
        check_scattered(w, q, TECS_ITER(w, .query = q, .where = f), lo, hi, order, all, N);
        if (round % 10 == 0) {
            tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
            check_scattered(w, q, TECS_ITER(w, .cache = c), lo, hi, 2, all, N);
            tecs_cache_free(c);
        }
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Keys rising, falling or shuffled with the rows: the walk of the index
** meets the rows in order, reversed or scattered; results come in query
** order all the same. */
TEST(filter_where_rows_met_in_any_order_come_in_query_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 64);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    enum { N = 1000 };
    static Health h[N];
    static tecs_entity_t ids[N], got[N];
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp, .access = TECS_READ});
    for (int how = 0; how < 3; how++) {
        for (int i = 0; i < N; i++)
            h[i].hp = how == 0 ? i : how == 1 ? N - 1 - i : (i * 7919) % N;
        CHECK_ERR(tecs_new_bulk(w, a, N, ids, 1, (tecs_value_t[]){ { hp, h } }), TECS_OK);
        tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_between(f, x, tecs_key_int(100), tecs_key_int(899));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, N), 800);
        for (int i = 0, m = 0; i < N; i++)
            if (h[i].hp >= 100 && h[i].hp <= 899)
                CHECK_EQ(got[m++], ids[i]);
        tecs_filter_free(f);
        tecs_index_free(x);
        for (int i = 0; i < N; i++)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    }
    tw_free(w);
}

/* ---- iteration, deferral, initializers --------------------------------- */

static void init_dup(tecs_init_t *init, void *ctx)
{
    NetId *n = tecs_init_construct(init, *(tecs_comp_t *)ctx);
    n->id = 5;
}

TEST(filter_where_defers_changes_and_refuses_nested_use_of_one_filter)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    for (int i = 0; i < 50; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {i % 5});
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_filter_t *f = tecs_filter_new(w), *g = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_int(3));
    tecs_filter_cmp(g, x, TECS_EQ, tecs_key_int(4));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .where = f) }, NULL, 0), -1);
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    int seen = 0;
    while (tecs_iter_next(&it)) {
        tecs_iter_t inner = TECS_ITER(w, .query = q, .where = f);     /* same filter: busy */
        CHECK(!tecs_iter_next(&inner));
        CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = g) }, NULL, 0), 10);
        Health *h = TECS_FIELD(&it, Health, 0);
        for (int i = 0; i < it.count; i++, seen++) {
            CHECK_EQ(h[i].hp, 3);
            tecs_destroy(w, it.entities[i]);            /* queued */
            tecs_set(w, tecs_new(w), pos, &(Position){ 1, 1 });
        }
    }
    CHECK_EQ(seen, 10);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), 0);
    CHECK_EQ(tecs_index_count(x), 40);
    /* An empty filter matches the whole query; tecs_filter_test. */
    tecs_filter_t *all = tecs_filter_new(w);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = all) }, NULL, 0), 40);
    tecs_entity_t some[40];
    tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = g) }, some, 40);
    CHECK(tecs_filter_test(g, some[0]));
    CHECK(!tecs_filter_test(f, some[0]));
    CHECK(!tecs_filter_test(g, 0));
    /* A unique key built by an initializer: the birth is refused. */
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_U32, .unique = true });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &net);
    int32_t alive = tecs_world_entity_count(w);
    CHECK(tecs_new_with(w, a, init_dup, &net) != 0);
    CHECK(tecs_new_with(w, a, init_dup, &net) == 0);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), alive + 1);
    CHECK_EQ(tecs_archetype_entity_count(a), 1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- != and in on a hash index ----------------------------------------- */

/* The combination, or its first condition alone (how < 0). */
static bool pred_combo_or_one(const fx *t, const void *ctx, tecs_entity_t e)
{
    combo one = *(const combo *)ctx;
    if (one.how < 0) {
        one.b = one.a;
        one.how = 1;
    }
    return pred_combo(t, &one, e);
}

/* != and in on the hash index of every field, alone and under and / or /
** not, against brute force and against the same condition on the ordered
** index: random keys with duplicates, NaN and -0 for real fields, strings,
** NULL strings. */
TEST(filter_hash_ne_and_in_match_brute_force_and_the_ordered_index)
{
    fx t;
    fx_init(&t, false);
    tecs_entity_t got[600], want[600];
    for (int round = 0; round < 400; round++) {
        combo c;
        memset(&c, 0, sizeof c);
        c.a.field = round % NFIELDS;
        c.a.op = round % 4 == 3 ? 7 : TECS_NE;
        c.a.nk = c.a.op == 7 ? (int)(tw_rand(&t.rng) % 4) : 1;
        for (int i = 0; i < c.a.nk; i++)
            c.a.k[i] = random_key(&t, c.a.field);
        c.b.field = (int)(tw_rand(&t.rng) % NFIELDS);
        c.b.op = tw_rand(&t.rng) % 2 ? TECS_EQ : TECS_NE;
        c.b.nk = 1;
        c.b.k[0] = random_key(&t, c.b.field);
        c.how = round < 80 ? -1 : (int)(tw_rand(&t.rng) % 4);
        for (int hashed = 1; hashed >= 0; hashed--) {
            tecs_filter_t *f = tecs_filter_new(t.w);
            tecs_cond_t a = cond_build(&t, f, &c.a, hashed);
            CHECK(a >= 0);
            if (c.how >= 0) {
                tecs_cond_t b = cond_build(&t, f, &c.b, true);
                CHECK(b >= 0);
                combo_build(f, c.how, a, b);
            }
            CHECK_ERR(tecs_filter_error(f), TECS_OK);
            int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f) }, got, 600);
            int m = expected(&t, pred_combo_or_one, &c, want);
            if (n != m)
                fprintf(stderr, "  round %d hashed %d: op %d field %d nk %d how %d / op %d "
                        "field %d\n", round, hashed, c.a.op, c.a.field, c.a.nk, c.how, c.b.op,
                        c.b.field);
            same_ids(got, n, want, m);
            for (int i = 0; hashed && i < t.nents; i++)
                CHECK_EQ(tecs_filter_test(f, t.ents[i]),
                         tecs_is_alive(t.w, t.ents[i]) &&
                         pred_combo_or_one(&t, &c, t.ents[i]));
            tecs_filter_free(f);
        }
        if (round % 16 == 15)
            random_change(&t);
    }
    TW_CHECK(t.w);
    tw_free(t.w);
}

/* != on a unique hash index (one probe table, no chains) and on a chained
** one over the same keys; NaN keys; what a hash index refuses. */
TEST(filter_hash_ne_on_unique_and_chained_indexes_and_refusals)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId), hp = TECS_COMPONENT(w, Health);
    tecs_comp_t sp = TECS_COMPONENT(w, Position);
    tecs_index_t *u = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32, .unique = true });
    tecs_index_t *h = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32 });
    tecs_index_t *fx_ = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT });
    CHECK(u && h && fx_);
    tecs_entity_t ids[40];
    for (int i = 0; i < 40; i++) {
        ids[i] = tecs_new(w);
        if (i % 4 != 3)
            TECS_SET(w, ids[i], net, NetId, { (uint32_t)i, "n" });
        if (i % 2)
            TECS_SET(w, ids[i], hp, Health, { i });
        TECS_SET(w, ids[i], sp, Position, { i % 5 == 0 ? NAN : i % 5 == 1 ? -0.0f
                                                  : (float)(i % 3), 0 });
    }
    tecs_query_t *q = tecs_query_all(w, 1, &net), *qs = tecs_query_all(w, 1, &sp);
    tecs_index_t *both[2] = { u, h };
    for (int k = 0; k < 2; k++) {
        tecs_filter_t *f = tecs_filter_new(w);
        CHECK(tecs_filter_cmp(f, both[k], TECS_NE, tecs_key_uint(6)) >= 0);
        tecs_entity_t got[40];
        int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, 40);
        CHECK_EQ(n, 29);        /* 30 with NetId, less id 6 */
        for (int i = 0; i < n; i++)
            CHECK(got[i] != ids[6] && tecs_has(w, got[i], net));
        /* Unlike not(==): entities without NetId do not match. */
        tecs_query_t *all = tecs_query_all(w, 1, &sp);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = all, .where = f) }, NULL, 0), 29);
        tecs_filter_t *g = tecs_filter_new(w);
        tecs_filter_not(g, tecs_filter_cmp(g, both[k], TECS_EQ, tecs_key_uint(6)));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = all, .where = g) }, NULL, 0), 39);
        CHECK(!tecs_filter_test(f, ids[3]) && tecs_filter_test(g, ids[3]));
        CHECK(!tecs_filter_test(f, ids[6]) && tecs_filter_test(f, ids[5]));
        /* A key nobody has: every entity with NetId. */
        tecs_filter_t *none = tecs_filter_new(w);
        tecs_filter_cmp(none, both[k], TECS_NE, tecs_key_uint(1000));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = all, .where = none) }, NULL, 0), 30);
        /* in on a hash index: repeats harmless, an empty list matches none. */
        tecs_filter_t *in = tecs_filter_new(w);
        tecs_key_t keys[4] = { tecs_key_uint(2), tecs_key_uint(3), tecs_key_uint(2),
                               tecs_key_uint(1000) };
        tecs_filter_in(in, both[k], 4, keys);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = all, .where = in) }, got, 40), 1);   /* 3 has none */
        CHECK_EQ(got[0], ids[2]);
        tecs_filter_free(in);
        in = tecs_filter_new(w);
        CHECK(tecs_filter_in(in, both[k], 0, NULL) >= 0);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = all, .where = in) }, NULL, 0), 0);
        tecs_filter_free(in);
        tecs_filter_free(none);
        tecs_filter_free(g);
        tecs_filter_free(f);
        tecs_query_free(all);
    }
    /* NaN keys differ from every key; -0 equals +0. */
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, fx_, TECS_NE, tecs_key_real(0.0));
    tecs_entity_t got[40];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = qs, .where = f) }, got, 40), m = 0;
    for (int i = 0; i < 40; i++)
        m += TECS_GET(w, ids[i], sp, Position)->x != 0.0f;   /* NaN included */
    CHECK_EQ(n, m);
    for (int i = 0; i < n; i++)
        CHECK(TECS_GET(w, got[i], sp, Position)->x != 0.0f);
    CHECK_EQ(tecs_filter_cmp(f, fx_, TECS_NE, tecs_key_real(NAN)), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    tecs_filter_free(f);
    /* Every other comparison needs an ordered index. */
    const tecs_cmp_t bad[4] = { TECS_LT, TECS_LE, TECS_GT, TECS_GE };
    for (int i = 0; i < 4; i++) {
        f = tecs_filter_new(w);
        CHECK_EQ(tecs_filter_cmp(f, h, bad[i], tecs_key_uint(1)), -1);
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
        CHECK(strstr(tecs_last_error_msg(w), "need an ordered index") != NULL);
        CHECK_ERR(tecs_filter_error(f), TECS_EINVAL);
        tecs_filter_free(f);
    }
    f = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_between(f, u, tecs_key_uint(1), tecs_key_uint(5)), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_filter_cmp(f, u, TECS_NE, tecs_key_int(1)), -1);     /* class */
    tecs_filter_free(f);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- reverse iteration ------------------------------------------------- */

#define MAXR 600

/* What an each-function saw: the entities and their first field. */
typedef struct seen {
    tecs_entity_t e[MAXR];
    const void *field0[MAXR];
    int n, stop_at;
    tecs_comp_t comp;           /* fields[0] must be this component's value */
} seen;

static bool record(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    seen *s = ctx;
    CHECK(tecs_is_deferred(w));
    CHECK(fv[0] == tecs_get(w, e, s->comp));
    s->field0[s->n] = fv[0];
    s->e[s->n++] = e;
    return s->n == s->stop_at;
}

/* The steps of a chunk iteration: their first entity pointer and count. */
typedef struct steps {
    const tecs_entity_t *at[MAXR];
    int count[MAXR];
    int n;
} steps;

static void take_steps(tecs_iter_t it, steps *s)
{
    s->n = 0;
    while (tecs_iter_next(&it)) {
        CHECK(s->n < MAXR);
        s->at[s->n] = it.entities;
        s->count[s->n++] = it.count;
    }
}

/* Forward against reverse for one where: collect, chunk steps, each, early
** stop from the end, a short collect. */
static void check_where_reverse(tecs_world_t *w, tecs_query_t *q, tecs_filter_t *f,
                                tecs_comp_t comp0)
{
    static tecs_entity_t fwd[MAXR], rev[MAXR];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, fwd, MAXR);
    CHECK(n >= 0 && n <= MAXR);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, rev, MAXR), n);
    for (int i = 0; i < n; i++)
        CHECK_EQ(rev[i], fwd[n - 1 - i]);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, NULL, 0), n);
    if (n > 2) {
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, rev, 2), n);
        CHECK(rev[0] == fwd[n - 1] && rev[1] == fwd[n - 2]);
    }
    /* Chunk iterator: the same steps, last first, rows in memory order. */
    static steps sf, sr;
    take_steps(TECS_ITER(w, .query = q, .where = f), &sf);
    take_steps(TECS_ITER(w, .query = q, .where = f, .reverse = true), &sr);
    CHECK_EQ(sf.n, sr.n);
    for (int i = 0; i < sf.n && i < sr.n; i++) {
        CHECK(sr.at[i] == sf.at[sf.n - 1 - i]);
        CHECK_EQ(sr.count[i], sf.count[sf.n - 1 - i]);
    }
    /* Per entity: every one in reverse, with its fields; a stop. */
    static seen a, b;
    a = (seen){ .comp = comp0 };
    b = (seen){ .comp = comp0 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, record, &a), TECS_OK);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, record, &b), TECS_OK);
    CHECK_EQ(a.n, n);
    CHECK_EQ(b.n, n);
    for (int i = 0; i < n; i++) {
        CHECK_EQ(a.e[i], fwd[i]);
        CHECK_EQ(b.e[i], fwd[n - 1 - i]);
        CHECK(b.field0[i] == a.field0[n - 1 - i]);
    }
    b = (seen){ .comp = comp0, .stop_at = 1 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, record, &b), TECS_OK);
    CHECK_EQ(b.n, n ? 1 : 0);
    if (n)
        CHECK_EQ(b.e[0], fwd[n - 1]);
    CHECK(!tecs_is_deferred(w));
}

TEST(filter_where_reverse_is_forward_reversed_for_every_form)
{
    fx t;
    fx_init(&t, false);
    for (int round = 0; round < 120; round++) {
        tecs_filter_t *f = tecs_filter_new(t.w);
        cond a;
        memset(&a, 0, sizeof a);
        a.field = round % NFIELDS;
        a.op = round % 8 < 6 ? round % 6 : 6 + round % 2;
        a.nk = a.op == 7 ? 3 : a.op == 6 ? 2 : 1;
        for (int i = 0; i < a.nk; i++)
            a.k[i] = random_key(&t, a.field);
        bool hashed = (a.op == TECS_EQ || a.op == TECS_NE || a.op == 7) && round % 3 == 0;
        CHECK(cond_build(&t, f, &a, hashed) >= 0);
        if (round % 5 == 1) {
            cond b = { .op = 9, .g = { -30, -30, 30, 30 } };
            tecs_filter_or(f, 0, cond_build(&t, f, &b, false));
        }
        if (round % 4 == 2)     /* key order, ascending or descending */
            CHECK_ERR(tecs_filter_order(f, t.ord[(round / 4) % NFIELDS], round % 8 == 2),
                      TECS_OK);
        check_where_reverse(t.w, t.q, f, t.stats);
        tecs_filter_free(f);
        if (round % 10 == 9)
            random_change(&t);
    }
    /* A lone `not` (scanned) and the empty filter (the whole query). */
    tecs_filter_t *f = tecs_filter_new(t.w);
    check_where_reverse(t.w, t.q, f, t.stats);
    tecs_filter_not(f, tecs_filter_cmp(f, t.hash[F_A], TECS_EQ, tecs_key_int(3)));
    check_where_reverse(t.w, t.q, f, t.stats);
    tecs_filter_free(f);
    TW_CHECK(t.w);
    tw_free(t.w);
}

/* Runs across chunk edges: a reverse step never spans two chunks, and the
** steps are those of the forward iteration. */
TEST(filter_where_reverse_steps_over_chunk_edges)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    for (int i = 0; i < 200; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i % 37 == 0 ? -1 : i });
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(0));
    check_where_reverse(w, q, f, hp);
    steps s;
    take_steps(TECS_ITER(w, .query = q, .where = f, .reverse = true), &s);
    int rows = 0;
    for (int i = 0; i < s.n; i++) {
        CHECK(s.count[i] >= 1 && s.count[i] <= 16);
        rows += s.count[i];
    }
    CHECK_EQ(rows, 200 - 6);
    CHECK(s.n > 200 / 16);
    /* Reverse of a descending order is ascending, ties by slot rising. */
    tecs_filter_t *g = tecs_filter_new(w);
    tecs_filter_cmp(g, x, TECS_LT, tecs_key_int(50));
    tecs_filter_order(g, x, true);
    tecs_entity_t got[200];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = g, .reverse = true) }, got, 200);
    CHECK_EQ(n, 49 - 1 + 6);    /* 1..49 but 37, and six -1 */
    for (int i = 1; i < n; i++) {
        int a0 = TECS_GET(w, got[i - 1], hp, Health)->hp, a1 = TECS_GET(w, got[i], hp, Health)->hp;
        CHECK(a0 < a1 || (a0 == a1 && TECS_ENTITY_INDEX(got[i - 1]) < TECS_ENTITY_INDEX(got[i])));
    }
    tecs_filter_free(g);
    tecs_filter_free(f);
    tw_free(w);
}

static bool destroy_and_add(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    (void)fv;
    seen *s = ctx;
    CHECK(tecs_is_deferred(w));
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);                 /* queued */
    CHECK(tecs_is_alive(w, e));
    CHECK(tecs_new(w) != 0);                                /* queued */
    s->e[s->n++] = e;
    return false;
}

/* Bad flags, NULL arguments, and the rules while a reverse where runs:
** changes are queued, the filter is busy, its index is not freed. */
TEST(filter_where_reverse_bad_flags_and_deferral)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    for (int i = 0; i < 30; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i % 3 });
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_NE, tecs_key_int(0));
    tecs_archetype_t *arch = tecs_archetype_get(w, 1, &hp);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    const tecs_iter_desc_t bad[4] = {
        { .where = f, .reverse = true },                /* a where needs a query */
        { .query = q, .where = f, .archetype = arch },  /* two sources */
        { .query = q, .where = f, .cache = c },
        { .cache = c, .where = f },
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
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = NULL, .where = f, .reverse = true) }, record, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .where = f) }, record, NULL), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, NULL, 3), -1);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = NULL, .where = f, .reverse = true) }, NULL, 0), -1);
    tecs_iter_t it = TECS_ITER(w, .query = NULL, .where = f, .reverse = true);
    CHECK(!tecs_iter_next(&it));
    /* Another world's filter. */
    tecs_world_t *w2 = tw_new();
    tecs_filter_t *f2 = tecs_filter_new(w2);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f2, .reverse = true) }, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    tecs_filter_free(f2);
    tw_free(w2);
    /* Deferral: destroys and births queued until the iteration ends. */
    int32_t before = tecs_world_entity_count(w);
    static seen s;
    s = (seen){ .comp = hp };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f, .reverse = true) }, destroy_and_add, &s),
              TECS_OK);
    CHECK_EQ(s.n, 20);
    for (int i = 0; i < s.n; i++)
        CHECK(!tecs_is_alive(w, s.e[i]));
    CHECK_EQ(tecs_world_entity_count(w), before);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), 0);
    /* While a reverse where is open: the filter is busy, its index stays. */
    for (int i = 0; i < 10; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { 7 });
    it = TECS_ITER(tecs_query_world(q), .query = q, .where = f, .reverse = true);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        CHECK(tecs_is_deferred(w));
        CHECK_ERR(tecs_index_free(x), TECS_EBUSY);
        tecs_iter_t inner = TECS_ITER(tecs_query_world(q), .query = q, .where = f, .reverse = true);
        CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
        CHECK(!tecs_iter_next(&inner));
        rows += it.count;
    }
    CHECK_EQ(rows, 10);
    CHECK(!tecs_is_deferred(w));
    tecs_filter_free(f);
    TW_CHECK(w);
    tw_free(w);
}

/* Ranges of many widths over thousands of rows with shuffled keys (one
** archetype's long runs of scattered matches, and a second archetype):
** the where hands out the brute-force matches in the query's order, each
** step's fields those of its entities. */
TEST(filter_where_wide_ranges_of_shuffled_keys_in_query_order)
{
    enum { N = 6000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    static int key[N];
    uint64_t rng = 3;
    tw_permutation(key, N, &rng);
    for (int i = 0; i < N; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {key[i]});
        if (i % 7 != 0)
            TECS_SET(w, e, pos, Position, {(float)i, (float)key[i]});
    }
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp, .access = TECS_READ},
                                 {.comp = pos, .oper = TECS_OPTIONAL, .access = TECS_READ});
    static tecs_entity_t all[N];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, N), N);
    const int width[] = { 0, 1, 2, 47, 300, 1000, 2500, 5999, 6000 };
    for (size_t c = 0; c < sizeof width / sizeof width[0]; c++) {
        int lo = (int)(tw_rand(&rng) % (uint64_t)(N - width[c] + 1)), hi = lo + width[c] - 1;
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
        tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
        int m = 0, n = 0;
        while (tecs_iter_next(&it)) {
            const Health *hs = tecs_field(&it, 0);
            const Position *ps = tecs_field(&it, 1);
            for (int i = 0; i < it.count; i++, n++) {
                tecs_entity_t e = it.entities[i];
                CHECK(hs[i].hp >= lo && hs[i].hp <= hi);
                CHECK_EQ(hs[i].hp, TECS_GET(w, e, hp, Health)->hp);
                if (ps)
                    CHECK_EQ(ps[i].y, (float)hs[i].hp);
                while (m < N && all[m] != e) {  /* the next match in query order */
                    CHECK(TECS_GET(w, all[m], hp, Health)->hp < lo ||
                          TECS_GET(w, all[m], hp, Health)->hp > hi);
                    m++;
                }
                CHECK(m < N);
                m++;
            }
        }
        CHECK_EQ(n, width[c] > 0 ? width[c] : 0);
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* ---- gathered steps of a read-only where ------------------------------ */

/* A where whose query writes through no term: steps of up to 64 results of
** one archetype, handed out as copies in the same order as a write query's
** steps, values as at the step; optional terms answer per archetype. */
TEST(filter_where_read_only_steps_are_gathered_copies)
{
    enum { N = 400 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position),
                vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t e[N];
    uint64_t rng = 77;
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { (int)(tw_rand(&rng) % 1000) });
        TECS_SET(w, e[i], pos, Position, { (float)i, (float)-i });
        if (i % 3 == 0)
            TECS_SET(w, e[i], vel, Velocity, { (float)i, 1 });
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *rq = TECS_QUERY(w, {.comp = pos, .access = TECS_READ},
                                  {.comp = hp, .access = TECS_READ},
                                  {.comp = vel, .access = TECS_READ, .oper = TECS_OPTIONAL});
    tecs_query_t *wq = TECS_QUERY(w, {.comp = pos}, {.comp = hp, .access = TECS_READ},
                                  {.comp = vel, .access = TECS_READ, .oper = TECS_OPTIONAL});
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_between(f, x, tecs_key_int(100), tecs_key_int(899));
    tecs_entity_t want[N];
    int32_t nw = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = wq, .where = f) }, want, N);
    CHECK(nw > 200 && nw < N);
    for (int order = 0; order < 2; order++) {
        if (order == 1)         /* key order: steps of one archetype still */
            CHECK_ERR(tecs_filter_order(f, x, true), TECS_OK);
        if (order == 1)
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = wq, .where = f) }, want, N), nw);
        tecs_iter_t it = TECS_ITER(w, .query = rq, .where = f);
        CHECK_ERR(tecs_last_error(w), TECS_OK);
        int32_t got = 0, nstep = 0;
        tecs_entity_t later = 0;
        while (tecs_iter_next(&it)) {
            CHECK(it.count >= 1 && it.count <= 64);
            const Position *ps = TECS_FIELD(&it, Position, 0);
            const Health *hs = TECS_FIELD(&it, Health, 1);
            const Velocity *vs = TECS_FIELD(&it, Velocity, 2);
            bool moving = tecs_field_is_set(&it, 2);
            CHECK_EQ(moving, vs != NULL);
            for (int32_t i = 0; i < it.count; i++, got++) {
                tecs_entity_t id = it.entities[i];
                CHECK_EQ(id, want[got]);
                const Position *p = tecs_get(w, id, pos);
                CHECK(p != NULL && p != &ps[i]);        /* a copy */
                CHECK(ps[i].x == p->x && ps[i].y == p->y);
                CHECK_EQ(hs[i].hp, ((const Health *)tecs_get(w, id, hp))->hp);
                CHECK_EQ(moving, tecs_has(w, id, vel));
                if (moving)
                    CHECK(vs[i].x == ((const Velocity *)tecs_get(w, id, vel))->x);
                if (id == later)    /* set after the step before: seen */
                    CHECK(ps[i].y == 12345.0f);
            }
            if (nstep == 0) {
                /* a value set now: not in this step's copies, but in the
                ** step that hands out its entity later */
                Position old = ps[0];
                TECS_SET(w, it.entities[0], pos, Position, { old.x, 777.0f });
                CHECK(ps[0].y == old.y);
                if (got < nw && want[nw - 1] != it.entities[0]) {
                    later = want[nw - 1];
                    TECS_SET(w, later, pos, Position, { 0, 12345.0f });
                }
            }
            nstep++;
        }
        CHECK_EQ(got, nw);
        CHECK(later != 0);
        CHECK(nstep >= (nw + 63) / 64);
    }
    /* A reverse where and a write query keep steps in place. */
    tecs_iter_t it = TECS_ITER(w, .query = rq, .where = f, .reverse = true);
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++)
            CHECK(tecs_field(&it, 0) == tecs_get(w, it.entities[0], pos));
    it = TECS_ITER(w, .query = wq, .where = f);
    while (tecs_iter_next(&it))
        CHECK(tecs_field(&it, 0) == tecs_get(w, it.entities[0], pos));
    tecs_filter_free(f);
    tw_free(w);
}

/* Large components take fewer rows a step; a where_each and a collect over
** gathered steps give every result once. */
TEST(filter_where_read_only_steps_of_large_values)
{
    typedef struct Big { char b[1000]; int v; } Big;
    tecs_world_t *w = tw_new();
    tecs_comp_t big = TECS_COMPONENT(w, Big), hp = TECS_COMPONENT(w, Health);
    for (int i = 0; i < 100; i++) {
        tecs_entity_t e = tecs_new(w);
        Big b;
        memset(&b, 0, sizeof b);
        b.v = i;
        tecs_set(w, e, big, &b);
        TECS_SET(w, e, hp, Health, { (i * 37) % 100 });
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = big, .access = TECS_READ},
                                 {.comp = hp, .access = TECS_READ});
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_NE, tecs_key_int(5));
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    int n = 0, sum = 0;
    while (tecs_iter_next(&it)) {
        CHECK(it.count <= 16);
        const Big *b = tecs_field(&it, 0);
        for (int32_t i = 0; i < it.count; i++, n++) {
            CHECK_EQ(b[i].v, ((const Big *)tecs_get(w, it.entities[i], big))->v);
            sum += b[i].v;
        }
    }
    CHECK_EQ(n, 99);
    CHECK_EQ(sum, 99 * 100 / 2 - 65);  /* 65 * 37 % 100 == 5 */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), 99);
    tecs_filter_free(f);
    tw_free(w);
}
