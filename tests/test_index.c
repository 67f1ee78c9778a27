/* Field indexes: kept true under random changes, the ordered tree through
** growth, re-keys and reused slots, bursts of sets, unique indexes and their
** lookups, bad input, NaN keys, out of memory, string keys of hooked
** components; checked against brute force (index_fixture.h). */
#include "index_fixture.h"

TEST(index_created_first_matches_brute_force)
{
    fx t;
    fx_init(&t, true);
    check_random_filters(&t, 200);
    tw_free(t.w);
}

TEST(index_stays_true_under_random_changes)
{
    fx t;
    fx_init(&t, false);
    for (int step = 0; step < 400; step++) {
        random_change(&t);
        if (step % 20 == 0) {
            TW_CHECK(t.w);
            check_random_filters(&t, 10);
        }
    }
    TW_CHECK(t.w);
    check_random_filters(&t, 100);
    /* Each maintained index equals one built from scratch now. */
    for (int fi = 0; fi < NFIELDS; fi++) {
        tecs_index_t *fresh = tecs_index_new(t.w, &(tecs_index_desc_t){
            .comp = t.stats, .kind = TECS_INDEX_ORDERED, .type = fields[fi].type,
            .offset = fields[fi].offset, .size = fields[fi].size });
        CHECK_EQ(tecs_index_count(fresh), tecs_index_count(t.ord[fi]));
        CHECK_EQ(tecs_index_count(fresh), tecs_index_count(t.hash[fi]));
        tecs_entity_t a[600], b[600], c[600];
        for (int desc = 0; desc < 2; desc++) {
            tecs_filter_t *f1 = tecs_filter_new(t.w), *f2 = tecs_filter_new(t.w);
            tecs_filter_not(f1, tecs_filter_in(f1, t.ord[fi], 0, NULL));
            tecs_filter_order(f1, t.ord[fi], desc);
            tecs_filter_not(f2, tecs_filter_in(f2, fresh, 0, NULL));
            tecs_filter_order(f2, fresh, desc);
            int na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f1) }, a, 600);
            int nb = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f2) }, b, 600);
            same_ids(a, na, b, nb);
            tecs_filter_free(f1);
            tecs_filter_free(f2);
        }
        for (int r = 0; r < 20; r++) {
            tecs_key_t k = random_key(&t, fi);
            tecs_filter_t *f1 = tecs_filter_new(t.w), *f2 = tecs_filter_new(t.w);
            tecs_filter_t *f3 = tecs_filter_new(t.w);
            tecs_filter_cmp(f1, t.ord[fi], TECS_EQ, k);
            tecs_filter_cmp(f2, fresh, TECS_EQ, k);
            tecs_filter_cmp(f3, t.hash[fi], TECS_EQ, k);
            int na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f1) }, a, 600);
            int nb = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f2) }, b, 600);
            int nc = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t.q), .query = t.q, .where = f3) }, c, 600);
            same_ids(a, na, b, nb);
            same_ids(c, nc, b, nb);
            tecs_filter_free(f1);
            tecs_filter_free(f2);
            tecs_filter_free(f3);
        }
        CHECK_ERR(tecs_index_free(fresh), TECS_OK);
    }
    tw_free(t.w);
}

/* Entities with Health.hp in [0, range) under an ordered and a hash index,
** hp known to the test in want[]: count those with lo <= hp <= hi. */
static int count_between(const int *want, const tecs_entity_t *ids, int n,
                         tecs_world_t *w, int lo, int hi)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (tecs_is_alive(w, ids[i]) && want[i] >= lo && want[i] <= hi)
            c++;
    return c;
}

/* Enough keys for an ordered tree of several levels: it grows, is re-keyed
** at random, shrinks to nothing and grows again, checked all along. */
TEST(index_ordered_tree_grows_reorders_and_shrinks)
{
    enum { N = 40000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = hp } }, .term_count = 1 });
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *h = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    static tecs_entity_t ids[N];
    static int want[N];
    uint64_t rng = 77;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            ids[i] = tecs_new(w);
            want[i] = (int)(tw_rand(&rng) % 5000);  /* many ties */
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
        }
        TW_CHECK(w);
        for (int step = 0; step < 3 * N; step++) {
            int i = (int)(tw_rand(&rng) % N);
            want[i] = (int)(tw_rand(&rng) % 5000);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
            if (step % 20000 == 0)
                TW_CHECK(w);
        }
        TW_CHECK(w);
        for (int r = 0; r < 20; r++) {
            int lo = (int)(tw_rand(&rng) % 5000), hi = lo + (int)(tw_rand(&rng) % 300);
            tecs_filter_t *f = tecs_filter_new(w);
            tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0),
                     count_between(want, ids, N, w, lo, hi));
            tecs_filter_free(f);
            f = tecs_filter_new(w);
            tecs_filter_cmp(f, h, TECS_EQ, tecs_key_int(lo));
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0),
                     count_between(want, ids, N, w, lo, lo));
            tecs_filter_free(f);
        }
        /* Shrink: every other entity in a shuffled order, then the rest. */
        for (int i = N - 1; i > 0; i--) {
            int j = (int)(tw_rand(&rng) % (uint64_t)(i + 1));
            tecs_entity_t e = ids[i];
            int v = want[i];
            ids[i] = ids[j], want[i] = want[j];
            ids[j] = e, want[j] = v;
        }
        for (int i = 0; i < N; i++) {
            if (i % 2)
                CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
            else
                CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            if (i % 10000 == 0)
                TW_CHECK(w);
        }
        CHECK_EQ(tecs_index_count(x), 0);
        CHECK_EQ(tecs_index_count(h), 0);
        TW_CHECK(w);
    }
    tw_free(w);
}

/* Order of two (key, slot) numbers. */
static int by_key_then_slot(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

enum { RK_N = 3000 };

/* The filter (ordered by x) hands ids out in the order of want[] then
** slot (brute force), and the tree is sound. */
static void check_key_order(tecs_world_t *w, tecs_query_t *q, tecs_filter_t *f,
                            const tecs_entity_t *ids, const int *want)
{
    static tecs_entity_t got[RK_N];
    static long long sorted[RK_N];
    TW_CHECK(w);
    for (int j = 0; j < RK_N; j++)
        sorted[j] = ((long long)want[j] + 1000000) * 65536 + TECS_ENTITY_INDEX(ids[j]);
    qsort(sorted, RK_N, sizeof *sorted, by_key_then_slot);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, RK_N), RK_N);
    for (int j = 0; j < RK_N; j++)
        CHECK_EQ(TECS_ENTITY_INDEX(got[j]), sorted[j] % 65536);
}

/* An index made over existing entities is built at once (several levels
** high); then small re-keys (+-1..3, a neighbour's key, the smallest or
** largest key) keep items in their leaf, move them to a leaf's first or
** last place, or over a leaf's edge. The key order stays the brute-force
** order throughout. */
TEST(index_ordered_small_rekeys_keep_key_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = hp } }, .term_count = 1 });
    static tecs_entity_t ids[RK_N];
    static int want[RK_N];
    for (int i = 0; i < RK_N; i++) {
        ids[i] = tecs_new(w);
        want[i] = 4 * (int)((i * 7919) % RK_N);
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    CHECK_EQ(tecs_index_count(x), RK_N);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK_ERR(tecs_filter_order(f, x, false), TECS_OK);
    check_key_order(w, q, f, ids, want);
    uint64_t rng = 4242;
    for (int step = 1; step <= 20000; step++) {
        int i = (int)(tw_rand(&rng) % RK_N), how = (int)(tw_rand(&rng) % 8);
        if (how < 5)
            want[i] += (int)(tw_rand(&rng) % 7) - 3;
        else if (how == 5)
            want[i] = want[(i + 1) % RK_N] + (int)(tw_rand(&rng) % 3) - 1;
        else if (how == 6)
            want[i] = -1 - step;            /* below every key */
        else
            want[i] = 4 * RK_N + step;      /* above every key */
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
        if (step % 50 == 0)
            check_key_order(w, q, f, ids, want);
    }
    tecs_filter_free(f);
    tw_free(w);
}

/* Entities of ids[0..n) alive with key in [lo, hi] (brute force), in id
** order; the where of the same range, sorted by id, must equal it. */
static void check_range(tecs_world_t *w, tecs_query_t *q, tecs_index_t *x, tecs_comp_t hp,
                        const tecs_entity_t *ids, int n, int lo, int hi)
{
    static tecs_entity_t want[1000], got[1000];
    int nw = 0;
    for (int i = 0; i < n; i++) {
        const Health *h = tecs_is_alive(w, ids[i]) ? TECS_GET(w, ids[i], hp, Health) : NULL;
        if (h && h->hp >= lo && h->hp <= hi)
            want[nw++] = ids[i];
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
    int ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, 1000);
    tecs_filter_free(f);
    CHECK_EQ(ng, nw);
    for (int a = 1; a < ng; a++)            /* insertion sort by id */
        for (int b = a; b > 0 && got[b - 1] > got[b]; b--) {
            tecs_entity_t t = got[b];
            got[b] = got[b - 1];
            got[b - 1] = t;
        }
    for (int j = 0; j < ng && j < nw; j++)
        CHECK_EQ(got[j], want[j]);
}

/* Counts the SET events it sees (ctx: an int). */
static void count_sets(const tecs_event_t *ev)
{
    (*(int *)ev->ctx)++;
}

/* An index asleep after a burst leaves the component's other listeners as
** they were (an observer still sees every set), and freeing it then, or
** using it, puts the component's counts back (the world check verifies
** them); an index a cache depends on never sleeps. */
TEST(index_asleep_after_a_burst_keeps_other_listeners)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    int seen = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = hp,
                                                    .callback = count_sets, .ctx = &seen }));
    enum { N = 400 };
    tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], hp, Health, { i });
    }
    tecs_index_t *a = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *b = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, b, TECS_LT, tecs_key_int(100));
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
    CHECK(c != NULL);
    seen = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)         /* a burst: every value moves */
            TECS_SET(w, ids[i], hp, Health, { (i * 7 + round) % N });
        TW_CHECK(w);
        int below = 0;
        for (int i = 0; i < N; i++)
            below += (i * 7 + round) % N < 100;
        CHECK_EQ(tecs_cache_count(c), below);   /* b followed at once */
        CHECK_EQ(tecs_index_count(a), N);       /* a rebuilt on use */
        TW_CHECK(w);
    }
    CHECK_EQ(seen, 3 * N);
    for (int i = 0; i < N; i++)
        TECS_SET(w, ids[i], hp, Health, { i });
    CHECK_ERR(tecs_index_free(a), TECS_OK);     /* freed while asleep */
    TW_CHECK(w);
    tecs_cache_free(c);
    tecs_filter_free(f);
    tw_free(w);
}

/* A burst of sets (more than n/16 between two uses) is left to a rebuild
** at the next use: what a where, a count or a lookup sees is the same as
** when every set re-keys at once, through sets, removals and destroys in
** the burst; short runs of sets keep re-keying at once. */
TEST(index_burst_of_sets_is_rebuilt_before_use)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    enum { N = 1000 };
    static tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], hp, Health, { i });
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *u = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    uint64_t rng = 77;
    for (int round = 0; round < 6; round++) {
        int sets = round % 2 ? 20 : 700;    /* under and over the burst limit */
        for (int s = 0; s < sets; s++) {
            int i = (int)(tw_rand(&rng) % N);
            if (!tecs_is_alive(w, ids[i]))
                continue;
            if (s % 97 == 5)
                CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            else if (s % 89 == 7 && tecs_has(w, ids[i], hp))
                CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
            else
                TECS_SET(w, ids[i], hp, Health, { (int)(tw_rand(&rng) % 400) });
        }
        int with = 0;                       /* entities with the component */
        for (int i = 0; i < N; i++)
            with += tecs_is_alive(w, ids[i]) && tecs_has(w, ids[i], hp);
        CHECK_EQ(tecs_index_count(x), with);
        CHECK_EQ(tecs_index_count(u), with);
        TW_CHECK(w);
        check_range(w, q, x, hp, ids, N, 100, 180);
        check_range(w, q, x, hp, ids, N, 0, 399);
        int k = (int)(tw_rand(&rng) % 400), nk = 0;
        for (int i = 0; i < N; i++) {
            const Health *h = tecs_is_alive(w, ids[i]) ? TECS_GET(w, ids[i], hp, Health) : NULL;
            nk += h && h->hp == k;
        }
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, u, TECS_EQ, tecs_key_int(k));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), nk);
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Each entity's item is found through a map from entity slot to leaf:
** slots freed by destroy and taken again by new entities, the component
** removed and added back, re-keys to the same key and to a neighbour's key,
** leaves split and emptied, with one index kept from the start and one
** built at once over existing entities. The structure check compares the
** map with the leaves after every phase. */
TEST(index_ordered_leaf_map_follows_reused_slots)
{
    enum { LM_N = 3000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *y = NULL;
    static tecs_entity_t ids[LM_N];
    uint64_t rng = 31337;
    for (int i = 0; i < 2; i++) {   /* one item, the root leaf: emptied, refilled */
        ids[0] = tecs_new(w);
        CHECK_ERR(tecs_set(w, ids[0], hp, &(Health){ 7 }), TECS_OK);
        TW_CHECK(w);
        CHECK_ERR(tecs_set(w, ids[0], hp, &(Health){ 8 }), TECS_OK);
        TW_CHECK(w);
        CHECK_ERR(tecs_destroy(w, ids[0]), TECS_OK);
        TW_CHECK(w);
    }
    for (int i = 0; i < LM_N; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
    }
    TW_CHECK(w);
    for (int round = 0; round < 4; round++) {
        if (round == 1)         /* built at once: leaves 3/4 full */
            y = tecs_index_new(w, &(tecs_index_desc_t){
                .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        for (int i = round % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        for (int i = (round + 1) % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
        TW_CHECK(w);
        for (int i = round % 3; i < LM_N; i += 3) {     /* slots taken again */
            ids[i] = tecs_new(w);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
        }
        for (int i = (round + 1) % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
        TW_CHECK(w);
        for (int step = 0; step < 4 * LM_N; step++) {
            int i = (int)(tw_rand(&rng) % LM_N), how = (int)(tw_rand(&rng) % 4);
            const Health *old = tecs_get(w, ids[i], hp);
            int k = how == 0 ? old->hp                                  /* same key */
                  : how == 1 ? ((const Health *)tecs_get(w, ids[(i + 1) % LM_N], hp))->hp
                  : how == 2 ? old->hp + (int)(tw_rand(&rng) % 5) - 2
                             : (int)(tw_rand(&rng) % 400);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ k }), TECS_OK);
            if (step % 1500 == 0)
                TW_CHECK(w);
        }
        TW_CHECK(w);
        CHECK_EQ(tecs_index_count(x), LM_N);
        if (y)
            CHECK_EQ(tecs_index_count(y), LM_N);
    }
    tw_free(w);
}

/* ---- unique ----------------------------------------------------------- */

static int32_t net_of(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    const NetId *n = tecs_get(w, e, c);
    return n ? (int32_t)n->id : -1;
}

TEST(index_unique_refuses_duplicates_and_leaves_world_unchanged)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32, .unique = true });
    CHECK(x != NULL);
    tecs_entity_t e1 = tecs_new(w), e2 = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {7, "a"}), TECS_OK);
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {8, "b"}), TECS_OK);
    int32_t archs = tecs_world_archetype_count(w);
    /* set on an existing component */
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {7, "c"}), TECS_EEXIST);
    CHECK_EQ(net_of(w, net, e2), 8);
    CHECK_EQ(strcmp(TECS_GET(w, e2, net, NetId)->tagname, "b"), 0);
    /* set that adds */
    tecs_entity_t e3 = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e3, net, NetId, {8, "d"}), TECS_EEXIST);
    CHECK(!tecs_has(w, e3, net));
    /* add without value: the default key 0, then a second one */
    CHECK_ERR(tecs_add(w, e3, net), TECS_OK);
    tecs_entity_t e4 = tecs_new(w);
    CHECK_ERR(tecs_add(w, e4, net), TECS_EEXIST);
    CHECK(!tecs_has(w, e4, net));
    /* births with values */
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &net);
    int32_t alive = tecs_world_entity_count(w);
    NetId batch[3] = { {20, ""}, {21, ""}, {20, ""} };
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_EEXIST);
    batch[2].id = 7;
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), alive);
    batch[2].id = 22;
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), alive + 3);
    /* a delayed birth with a taken key is cancelled when applied */
    tecs_entity_t d = tecs_delayed_new(w, a, 1, (tecs_value_t[]){ { net, &batch[0] } });
    CHECK(d != 0);
    tecs_delayed_apply(w);
    CHECK(!tecs_is_alive(w, d));
    /* a raw write then tecs_modified: undone, reported */
    NetId *p = TECS_GET_MUT(w, e2, net, NetId);
    p->id = 7;
    CHECK_ERR(tecs_modified(w, e2, net), TECS_EEXIST);
    CHECK_EQ(net_of(w, net, e2), 8);
    /* a write through a query iteration */
    tecs_query_t *q = tecs_query_all(w, 1, &net);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        NetId *n = TECS_FIELD(&it, NetId, 0);
        for (int i = 0; i < it.count; i++)
            if (it.entities[i] == e2)
                n[i].id = 21;
    }
    CHECK_EQ(net_of(w, net, e2), 8);
    CHECK_EQ(tecs_world_archetype_count(w), archs + 0 * archs);
    /* lookups */
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), e1);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(8)), e2);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(999)), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_int(7)), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* moving a key away frees it */
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {70, ""}), TECS_OK);
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {7, ""}), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), e2);
    CHECK_ERR(tecs_destroy(w, e2), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* A unique hash index under churn: keys from a small range (so probes
** run into each other and erasures shift cells back), duplicates refused,
** components removed and added, entities destroyed; every key looked up
** against a model after each step. */
TEST(index_unique_table_follows_random_churn)
{
    enum { N = 400, KEYS = 600 };
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32, .unique = true });
    static tecs_entity_t ids[N], owner[KEYS];
    static int key_of[N];       /* -1: no NetId */
    uint64_t rng = 99;
    for (int i = 0; i < N; i++)
        ids[i] = tecs_new(w), key_of[i] = -1;
    for (int step = 0; step < 20000; step++) {
        int i = (int)(tw_rand(&rng) % N), k = (int)(tw_rand(&rng) % KEYS);
        int how = (int)(tw_rand(&rng) % 10);
        if (how < 7) {
            bool held = owner[k] != 0 && owner[k] != ids[i];
            CHECK_ERR(TECS_SET(w, ids[i], net, NetId, {(uint32_t)k, "x"}),
                      held ? TECS_EEXIST : TECS_OK);
            if (!held) {
                if (key_of[i] >= 0)
                    owner[key_of[i]] = 0;
                owner[k] = ids[i], key_of[i] = k;
            }
        } else if (how < 9) {
            if (key_of[i] >= 0) {
                CHECK_ERR(tecs_remove(w, ids[i], net), TECS_OK);
                owner[key_of[i]] = 0, key_of[i] = -1;
            }
        } else {
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            if (key_of[i] >= 0)
                owner[key_of[i]] = 0, key_of[i] = -1;
            ids[i] = tecs_new(w);
        }
        for (int j = 0; j < 8; j++) {
            int q = (int)(tw_rand(&rng) % KEYS);
            CHECK_EQ(tecs_index_lookup(x, tecs_key_uint((uint64_t)q)), owner[q]);
        }
        if (step % 500 == 0)
            TW_CHECK(w);
    }
    int32_t n = 0;
    for (int k = 0; k < KEYS; k++) {
        CHECK_EQ(tecs_index_lookup(x, tecs_key_uint((uint64_t)k)), owner[k]);
        n += owner[k] != 0;
    }
    CHECK_EQ(tecs_index_count(x), n);
    TW_CHECK(w);
    tw_free(w);
}

TEST(index_unique_string_keys_and_creation_over_duplicates)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_entity_t e1 = tecs_new(w), e2 = tecs_new(w);
    TECS_SET(w, e1, net, NetId, {1, "abc"});
    TECS_SET(w, e2, net, NetId, {2, "abc"});
    tecs_index_desc_t d = { .comp = net, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_CHARS,
                            .offset = offsetof(NetId, tagname), .size = 4, .unique = true };
    tecs_filter_free(tecs_filter_new(w)); /* the world's index registry, kept */
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_index_new(w, &d) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(tecs_world_memory(w), mem);
    TECS_SET(w, e2, net, NetId, {2, "abd"});
    tecs_index_t *x = tecs_index_new(w, &d);
    CHECK(x != NULL);
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {1, "abd"}), TECS_EEXIST);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_str("abd")), e2);
    /* a full char[4] with no NUL is a 4-byte key */
    CHECK_ERR(tecs_set(w, e1, net, &(NetId){ 1, { 'w', 'x', 'y', 'z' } }), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_str("wxyz")), e1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- bad input -------------------------------------------------------- */

TEST(index_bad_input_is_refused)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "T" });
    tecs_comp_t hp2 = TECS_COMPONENT(w2, Health);
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_index_new(w, NULL) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = 99, .type = TECS_KEY_I32 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I64 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32,
                                                   .offset = 1 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = tag, .type = TECS_KEY_I8 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = 99 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32,
                                                   .kind = 7 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = pos, .kind = TECS_INDEX_SPATIAL,
                                                   .type = TECS_KEY_FLOAT, .offset_y = 4,
                                                   .cell_size = 0 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = pos, .kind = TECS_INDEX_SPATIAL,
                                                   .type = TECS_KEY_FLOAT, .offset_y = 6,
                                                   .cell_size = 1 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_world_memory(w), mem);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32 });
    tecs_index_t *o = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *x2 = tecs_index_new(w2, &(tecs_index_desc_t){ .comp = hp2, .type = TECS_KEY_I32 });
    CHECK(x && o && x2);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(1)), -1);       /* hash: no < */
    CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
    tecs_filter_t *g = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(g, x2, TECS_EQ, tecs_key_int(1)), -1);      /* other world */
    CHECK_EQ(tecs_filter_error(g), TECS_EWORLD);
    tecs_filter_t *h = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(h, o, TECS_EQ, tecs_key_real(1)), -1);      /* wrong class */
    CHECK_EQ(tecs_filter_and(h, 0, 5), -1);
    CHECK_EQ(tecs_filter_radius(h, o, 0, 0, 1), -1);                 /* not spatial */
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = h) }, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    tecs_filter_t *k = tecs_filter_new(w);
    tecs_filter_cmp(k, o, TECS_EQ, tecs_key_int(3));
    CHECK_ERR(tecs_index_free(o), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = k) }, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    tecs_filter_t *m = tecs_filter_new(w2);
    tecs_query_t *q2 = tecs_query_all(w2, 1, &hp2);
    (void)q2;
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = m) }, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK(tecs_index_free(NULL) == TECS_OK);
    tecs_filter_free(NULL);
    tecs_cache_free(NULL);
    tw_free(w);
    tw_free(w2);
}

TEST(index_nan_keys_follow_ieee_comparisons)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT });
    tecs_entity_t en = tecs_new(w), e1 = tecs_new(w), ez = tecs_new(w);
    TECS_SET(w, en, pos, Position, {NAN, 0});
    TECS_SET(w, e1, pos, Position, {1, 0});
    TECS_SET(w, ez, pos, Position, {-0.0f, 0});
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_entity_t out[4];
    static const struct { tecs_cmp_t op; int n; } cases[] = {
        { TECS_EQ, 1 }, { TECS_NE, 2 }, { TECS_LT, 1 }, { TECS_LE, 2 },
        { TECS_GT, 0 }, { TECS_GE, 1 } };
    for (int i = 0; i < 6; i++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, cases[i].op, tecs_key_real(1.0));
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 4), cases[i].n);
        tecs_filter_free(f);
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_real(-INFINITY));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 4), 2);      /* not the NaN */
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(0.0));              /* -0 == +0 */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 4), 1);
    CHECK_EQ(out[0], ez);
    tecs_filter_not(f, tecs_filter_cmp(f, x, TECS_LE, tecs_key_real(INFINITY)));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 4), 1);
    CHECK_EQ(out[0], en);
    CHECK_EQ(tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(NAN)), -1);
    CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
    tw_free(w);
}

/* ---- out of memory ---------------------------------------------------- */

TEST(index_out_of_memory_on_creation_and_maintenance)
{
    for (long k = 1; k < 400; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        tecs_comp_t st = TECS_COMPONENT(w, Stats);
        uint64_t rng = 42;
        tecs_entity_t ents[80];
        for (int i = 0; i < 80; i++) {
            Stats v;
            random_stats(&v, &rng);
            ents[i] = tecs_new(w);
            tecs_set(w, ents[i], st, &v);
        }
        tecs_index_t *y = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = st, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I64, .unique = true,
            .offset = offsetof(Stats, big) });
        CHECK(y == NULL);       /* random bigs repeat */
        al.fail_at = al.calls + k;
        tecs_index_desc_t d = { .comp = st, .kind = (tecs_index_kind_t)(k % 2),
                                .type = TECS_KEY_STR, .offset = offsetof(Stats, s) };
        size_t mem = tecs_world_memory(w);
        tecs_index_t *x = tecs_index_new(w, &d);
        if (x == NULL) {
            CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
            CHECK_EQ(tecs_world_memory(w), mem);
            tw_free(w);
            continue;
        }
        al.fail_at = 0;
        for (int i = 0; i < 80; i++)
            if (tecs_has(w, ents[i], st))
                TECS_GET_MUT(w, ents[i], st, Stats)->a = 1000 + i;
        y = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = st, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32, .unique = true });
        CHECK(y != NULL);
        al.fail_at = al.calls + k % 50 + 1;
        al.fail_after = false;
        /* Maintenance with failures: a failed call changes nothing; the
        ** index is never seen stale. */
        for (int i = 0; i < 200; i++) {
            tecs_entity_t e = ents[tw_rand(&rng) % 80];
            Stats v;
            random_stats(&v, &rng);
            v.a = (int32_t)(tw_rand(&rng) % 1000);
            Stats before = tecs_has(w, e, st) ? *TECS_GET(w, e, st, Stats) : v;
            tecs_err_t err = tecs_set(w, e, st, &v);
            if (err != TECS_OK && tecs_has(w, e, st))
                CHECK_EQ(TECS_GET(w, e, st, Stats)->a, before.a);
            if (i % 7 == 0)
                tecs_remove(w, e, st);
        }
        al.fail_at = 0;
        TW_CHECK(w);
        tecs_query_t *q = tecs_query_all(w, 1, &st);
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_EQ, tecs_key_str("cat"));
        int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), m = 0;
        tecs_entity_t all[80];
        int na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, 80);
        for (int i = 0; i < na; i++) {
            const char *s = TECS_GET(w, all[i], st, Stats)->s;
            m += s && strcmp(s, "cat") == 0;
        }
        CHECK_EQ(n, m);
        (void)y;
        tw_free(w);
    }
}

/* ---- components with hooks -------------------------------------------- */

typedef struct Named { char *name; int id; } Named;

static void named_ctor(void *dst, int32_t n, void *ctx)
{
    int *next = ctx;
    Named *v = dst;
    for (int32_t i = 0; i < n; i++)
        v[i] = (Named){ NULL, ++*next };
}

static void named_dtor(void *p, int32_t n, void *ctx)
{
    Named *v = p;
    (void)ctx;
    for (int32_t i = 0; i < n; i++)
        free(v[i].name);
}

static void named_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    Named *d = dst;
    const Named *s = src;
    (void)ctx;
    for (int32_t i = 0; i < n; i++) {
        free(d[i].name);
        d[i].name = s[i].name ? strcpy(malloc(strlen(s[i].name) + 1), s[i].name) : NULL;
        d[i].id = s[i].id;
    }
}

static void named_move(void *dst, void *src, int32_t n, void *ctx)
{
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Named));
}

TEST(index_string_keys_of_hooked_components_are_copied)
{
    tecs_world_t *w = tw_new();
    int next = 0;
    tecs_comp_t nm = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(Named), .align = _Alignof(Named), .ctor = named_ctor,
        .dtor = named_dtor, .copy = named_copy, .move = named_move, .hook_ctx = &next });
    tecs_index_t *by_name = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = nm, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_STR,
        .offset = offsetof(Named, name) });
    tecs_index_t *by_id = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = nm, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32,
        .offset = offsetof(Named, id), .unique = true });
    /* Defaults come from the constructor: distinct ids, so adds succeed. */
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_add(w, e[i], nm), TECS_OK);
    }
    char buf[16];
    strcpy(buf, "zed");
    CHECK_ERR(tecs_set(w, e[0], nm, &(Named){ buf, 100 }), TECS_OK);
    strcpy(buf, "amy");                 /* the caller's buffer changes ... */
    CHECK_ERR(tecs_set(w, e[1], nm, &(Named){ buf, 101 }), TECS_OK);
    CHECK_ERR(tecs_set(w, e[2], nm, &(Named){ buf, 100 }), TECS_EEXIST);
    tecs_query_t *q = tecs_query_all(w, 1, &nm);
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, by_name, TECS_GE, tecs_key_str("b"));
    tecs_entity_t out[3];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 3), 1);   /* ... the keys do not */
    CHECK_EQ(out[0], e[0]);
    tecs_filter_order(f, by_name, false);
    tecs_filter_not(f, tecs_filter_in(f, by_name, 0, NULL));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 3), 3);
    CHECK_EQ(out[0], e[2]);                                /* NULL first */
    CHECK_EQ(out[1], e[1]);
    CHECK_EQ(tecs_index_lookup(by_id, tecs_key_int(101)), e[1]);
    TW_CHECK(w);
    tw_free(w);
}

/* An integer unique index: lookups of keys at their home cell and past it
** (thousands of keys, so that some share a home), of absent keys, of keys
** of the wrong class, on a non-unique index, after sets, removes and
** destroys move keys around; each answer and error checked. */
typedef struct Serial { int64_t v; } Serial;

TEST(index_unique_int_lookup_home_past_home_and_absent)
{
    enum { N = 3000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t sc = TECS_COMPONENT(w, Serial);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sc, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I64, .unique = true });
    tecs_index_t *y = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sc, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I64 });
    static tecs_entity_t ids[N];
    static int64_t key[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        key[i] = (int64_t)i * 7919 - 1000000;
        CHECK_ERR(TECS_SET(w, ids[i], sc, Serial, {key[i]}), TECS_OK);
    }
    uint64_t rng = 5;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            CHECK_EQ(tecs_index_lookup(x, tecs_key_int(key[i])), ids[i]);
            CHECK_EQ(tecs_last_error(w), TECS_OK);
        }
        CHECK_EQ(tecs_index_lookup(x, tecs_key_int(1)), 0);     /* no multiple of 7919 */
        CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
        CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(5)), 0);    /* wrong class */
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
        CHECK_EQ(tecs_index_lookup(y, tecs_key_int(key[0])), 0); /* not unique */
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
        for (int j = 0; j < N / 3; j++) {                       /* keys move */
            int i = (int)(tw_rand(&rng) % N);
            if (j % 3 == 0) {
                CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
                CHECK_EQ(tecs_index_lookup(x, tecs_key_int(key[i])), 0);
                ids[i] = tecs_new(w);
            }
            key[i] = -key[i] - (int64_t)(round + 1) * 100000007;
            CHECK_ERR(TECS_SET(w, ids[i], sc, Serial, {key[i]}), TECS_OK);
        }
        TW_CHECK(w);
    }
    CHECK_EQ(tecs_index_lookup(NULL, tecs_key_int(0)), 0);
    tw_free(w);
}
