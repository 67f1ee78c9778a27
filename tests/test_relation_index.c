/*
** Field indexes over a relation's values (tinyecs/index.h's desc.target,
** docs/relationships.md "Indexes over a relation's value"): after every
** kind of pair change the filters' answers, the where iterations and the
** counts are those of a brute-force pass over tecs_pair_get; the refused
** descriptions; unique keys; snapshots, deltas and resets; out of memory.
*/
#include "test.h"

#include <stddef.h>

typedef struct { float x, y; } Spot;

#define NE 24

/* A world with the value relation Owes (int32, several targets, cleanup
** as given), the exclusive Rank (int32) and NE entities. */
typedef struct fx {
    tecs_world_t *w;
    tecs_comp_t owes, rank;
    tecs_entity_t e[NE];
} fx;

static void fx_make(fx *f, tecs_world_t *w, tecs_cleanup_t cleanup)
{
    f->w = w;
    f->owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 }, .cleanup = cleanup });
    f->rank = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Rank", .size = 4, .align = 4 }, .exclusive = true });
    CHECK(f->owes != 0 && f->rank != 0);
    for (int i = 0; i < NE; i++)
        f->e[i] = tecs_new(w);
}

static tecs_index_t *rel_index(tecs_world_t *w, tecs_comp_t rel, tecs_entity_t t,
                               tecs_index_kind_t kind, bool unique)
{
    return tecs_index_new(w, &(tecs_index_desc_t){ .comp = rel, .target = t, .kind = kind,
                                                   .type = TECS_KEY_I32, .unique = unique });
}

/* The brute force: does e's value of (rel, t) (t TECS_WILDCARD: its one
** pair's) compare with key as cmp? false when e has no such pair. */
static bool want(tecs_world_t *w, tecs_comp_t rel, tecs_entity_t t, tecs_entity_t e,
                 tecs_cmp_t cmp, int32_t key)
{
    if (t == (tecs_entity_t)TECS_WILDCARD)
        t = tecs_pair_target(w, e, rel, 0);
    const int32_t *v = t ? tecs_pair_get(w, e, rel, t) : NULL;
    if (v == NULL)
        return false;
    switch (cmp) {
    case TECS_EQ: return *v == key;
    case TECS_NE: return *v != key;
    case TECS_LT: return *v < key;
    case TECS_LE: return *v <= key;
    case TECS_GT: return *v > key;
    default: return *v >= key;
    }
}

/* The index agrees with the pairs: its count, and for a few comparisons
** the filter's test of each entity and a where over every entity. */
static void agree(fx *f, tecs_index_t *ix, tecs_comp_t rel, tecs_entity_t t)
{
    tecs_world_t *w = f->w;
    int32_t holders = 0;
    for (int i = 0; i < NE; i++)
        holders += want(w, rel, t, f->e[i], TECS_GE, INT32_MIN);
    CHECK_EQ(tecs_index_count(ix), holders);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .term_count = 0 });
    CHECK(q != NULL);
    static const tecs_cmp_t cmps[] = { TECS_EQ, TECS_NE, TECS_LT, TECS_GE };
    static const int32_t keys[] = { 0, 5, 12 };
    for (size_t c = 0; c < sizeof cmps / sizeof cmps[0]; c++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            tecs_filter_t *fl = tecs_filter_new(w);
            tecs_cond_t cond = tecs_filter_cmp(fl, ix, cmps[c], tecs_key_int(keys[k]));
            if (cond < 0) {                     /* a hash index: EQ and NE only */
                CHECK(cmps[c] != TECS_EQ && cmps[c] != TECS_NE);
                tecs_filter_free(fl);
                continue;
            }
            int32_t n = 0;
            for (int i = 0; i < NE; i++) {
                bool yes = want(w, rel, t, f->e[i], cmps[c], keys[k]);
                n += yes;
                CHECK(tecs_filter_test(fl, f->e[i]) == yes);
            }
            tecs_entity_t got[NE + 1];
            tecs_iter_t it = TECS_ITER(w, .query = q, .where = fl);
            int32_t m = tecs_iter_collect(&it, got, NE + 1);
            CHECK_EQ(m, n);
            for (int32_t j = 0; j < m && j <= NE; j++)
                CHECK(want(w, rel, t, got[j], cmps[c], keys[k]));
            tecs_filter_free(fl);
        }
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(w);
}

TEST(relidx_follows_pair_changes)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_entity_t bob = f.e[0], carol = f.e[1];
    for (int i = 2; i < 12; i++)
        CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.owes, bob, int32_t, i), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.owes, carol, int32_t, 5), TECS_OK);   /* not bob's */
    tecs_index_t *ord = rel_index(w, f.owes, bob, TECS_INDEX_ORDERED, false);
    tecs_index_t *hash = rel_index(w, f.owes, bob, TECS_INDEX_HASH, false);
    CHECK(ord != NULL && hash != NULL);
    agree(&f, ord, f.owes, bob);
    agree(&f, hash, f.owes, bob);
    /* set, add (zeroed, or keeping the value), remove, another target's */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.owes, bob, int32_t, 12), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f.e[12], f.owes, bob), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f.e[5], f.owes, bob), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, f.e[6], f.owes, bob), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[7], f.owes, carol, int32_t, 0), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, f.e[3], f.owes, carol), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, f.e[8], f.owes, TECS_WILDCARD), TECS_OK);
    agree(&f, ord, f.owes, bob);
    agree(&f, hash, f.owes, bob);
    /* queued in a deferred section, and from inside an iteration */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[13], f.owes, bob, int32_t, 5), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, f.e[9], f.owes, bob), TECS_OK);
    CHECK_EQ(tecs_index_count(ord), 9);             /* not applied yet */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    agree(&f, ord, f.owes, bob);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .term_count = 0 });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        for (int32_t r = 0; r < it.count; r++)
            if (it.entities[r] == f.e[14])
                TECS_PAIR_SET(w, it.entities[r], f.owes, bob, int32_t, 0);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    agree(&f, ord, f.owes, bob);
    agree(&f, hash, f.owes, bob);
    /* a burst of sets leaves the index to a rebuild at its next use */
    for (int round = 0; round < 40; round++)
        for (int i = 2; i < 16; i++)
            TECS_PAIR_SET(w, f.e[i], f.owes, bob, int32_t, (round * 7 + i) % 13);
    agree(&f, ord, f.owes, bob);
    agree(&f, hash, f.owes, bob);
    /* the source's destroy */
    CHECK_ERR(tecs_destroy(w, f.e[4]), TECS_OK);
    f.e[4] = tecs_new(w);
    agree(&f, ord, f.owes, bob);
    CHECK_ERR(tecs_index_free(hash), TECS_OK);
    tw_free(w);
}

/* A pair term and a where over the relation's index in one iteration. */
TEST(relidx_where_composes_with_pair_terms)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_entity_t bob = f.e[0], carol = f.e[1];
    for (int i = 2; i < NE; i++) {
        CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.owes, bob, int32_t, i % 7), TECS_OK);
        if (i % 3 == 0)
            CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.owes, carol, int32_t, i), TECS_OK);
    }
    tecs_index_t *ix = rel_index(w, f.owes, bob, TECS_INDEX_ORDERED, false);
    tecs_query_t *q = TECS_QUERY(w, { .comp = f.owes, .target = carol, .access = TECS_READ });
    tecs_filter_t *fl = tecs_filter_new(w);
    tecs_filter_cmp(fl, ix, TECS_LT, tecs_key_int(3));
    tecs_filter_order(fl, ix, false);
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = fl);
    int32_t n = 0, last = -1;
    while (tecs_iter_next(&it)) {
        const int32_t *v = tecs_field(&it, 0);
        for (int32_t r = 0; r < it.count; r++) {
            tecs_entity_t e = it.entities[r];
            int32_t owed = *(const int32_t *)tecs_pair_get(w, e, f.owes, bob);
            CHECK(owed < 3 && owed >= last);
            CHECK_EQ(v[r], *(const int32_t *)tecs_pair_get(w, e, f.owes, carol));
            last = owed;
            n++;
        }
    }
    int32_t want_n = 0;
    for (int i = 2; i < NE; i++)
        want_n += i % 3 == 0 && i % 7 < 3;
    CHECK_EQ(n, want_n);
    tecs_filter_free(fl);
    tw_free(w);
}

TEST(relidx_wildcard_follows_exclusive_retarget)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_entity_t army = f.e[0], navy = f.e[1];
    for (int i = 2; i < 10; i++)
        CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.rank, i % 2 ? army : navy, int32_t, i), TECS_OK);
    tecs_index_t *any = rel_index(w, f.rank, TECS_WILDCARD, TECS_INDEX_ORDERED, false);
    tecs_index_t *of_army = rel_index(w, f.rank, army, TECS_INDEX_HASH, false);
    CHECK(any != NULL && of_army != NULL);
    agree(&f, any, f.rank, TECS_WILDCARD);
    agree(&f, of_army, f.rank, army);
    /* a new target: REMOVE of the old pair, ADD of the new one */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.rank, navy, int32_t, 5), TECS_OK);   /* army -> navy */
    CHECK_ERR(tecs_pair_add(w, f.e[4], f.rank, army), TECS_OK);               /* zeroed */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[10], f.rank, army, int32_t, 12), TECS_OK);
    agree(&f, any, f.rank, TECS_WILDCARD);
    agree(&f, of_army, f.rank, army);
    CHECK_ERR(tecs_destroy(w, army), TECS_OK);          /* cleanup REMOVE */
    f.e[0] = tecs_new(w);
    agree(&f, any, f.rank, TECS_WILDCARD);
    CHECK_EQ(tecs_index_count(of_army), 0);
    tw_free(w);
}

/* The target's death takes its pairs by the relation's cleanup; an index
** of that target is then empty and stays valid (and empty: no pair can
** name a dead entity, nor a new one born in its slot). */
TEST(relidx_target_death_by_each_cleanup)
{
    static const tecs_cleanup_t policy[] = { TECS_CLEANUP_REMOVE, TECS_CLEANUP_DESTROY,
                                             TECS_CLEANUP_REFUSE };
    for (int p = 0; p < 3; p++) {
        fx f;
        fx_make(&f, tw_new(), policy[p]);
        tecs_world_t *w = f.w;
        tecs_entity_t bob = f.e[0], carol = f.e[1];
        for (int i = 2; i < 12; i++) {
            CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.owes, bob, int32_t, i), TECS_OK);
            CHECK_ERR(TECS_PAIR_SET(w, f.e[i + 10], f.owes, carol, int32_t, i), TECS_OK);
        }
        tecs_index_t *of_bob = rel_index(w, f.owes, bob, TECS_INDEX_ORDERED, false);
        tecs_index_t *of_carol = rel_index(w, f.owes, carol, TECS_INDEX_HASH, false);
        tecs_filter_t *fl = tecs_filter_new(w);
        tecs_filter_cmp(fl, of_bob, TECS_GE, tecs_key_int(0));
        tecs_err_t err = tecs_destroy(w, bob);
        CHECK_ERR(err, policy[p] == TECS_CLEANUP_REFUSE ? TECS_EBUSY : TECS_OK);
        if (policy[p] == TECS_CLEANUP_REFUSE) {
            CHECK_EQ(tecs_index_count(of_bob), 10);
            agree(&f, of_bob, f.owes, bob);
        } else {
            CHECK_EQ(tecs_index_count(of_bob), 0);
            CHECK_EQ(tecs_filter_error(fl), TECS_OK);
            for (int i = 0; i < NE; i++)
                CHECK(!tecs_filter_test(fl, f.e[i]));
            tecs_filter_t *none = tecs_filter_new(w);
            tecs_filter_not(none, tecs_filter_cmp(none, of_bob, TECS_GE, tecs_key_int(0)));
            CHECK(tecs_filter_test(none, carol));
            tecs_filter_free(none);
            tecs_entity_t reborn = tecs_new(w);        /* maybe in bob's slot */
            CHECK_ERR(TECS_PAIR_SET(w, f.e[12], f.owes, reborn, int32_t, 1), TECS_OK);
            CHECK_EQ(tecs_index_count(of_bob), 0);
            TW_CHECK(w);
            /* the sources died with bob under DESTROY */
            CHECK(tecs_is_alive(w, f.e[2]) == (policy[p] == TECS_CLEANUP_REMOVE));
        }
        for (int i = 0; i < NE; i++)
            if (!tecs_is_alive(w, f.e[i]))
                f.e[i] = tecs_new(w);
        agree(&f, of_carol, f.owes, carol);
        /* carol's sources die: their pairs go from its index */
        CHECK_ERR(tecs_destroy(w, f.e[13]), TECS_OK);
        f.e[13] = tecs_new(w);
        agree(&f, of_carol, f.owes, carol);
        tecs_filter_free(fl);
        tw_free(w);
    }
}

TEST(relidx_refuses_bad_descriptions)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t health = TECS_COMPONENT(w, Health);
    tecs_comp_t childof = tecs_childof(w);
    tecs_entity_t bob = f.e[0], gone = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, gone), TECS_OK);
    struct { tecs_comp_t c; tecs_entity_t t; tecs_err_t err; const char *msg; } bad[] = {
        { health, bob, TECS_EINVAL, "has no target" },
        { f.owes, 0, TECS_EINVAL, "names the pairs' target" },
        { f.owes, TECS_WILDCARD, TECS_EINVAL, "exclusive" },
        { likes, bob, TECS_EINVAL, "tag relation" },
        { childof, bob, TECS_EINVAL, "ChildOf" },
        { f.owes, gone, TECS_EDEAD, "not alive" },
    };
    int32_t before = tecs_world_entity_count(w);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = bad[i].c, .target = bad[i].t,
                                                      .type = TECS_KEY_I32 }) == NULL);
        CHECK_ERR(tecs_last_error(w), bad[i].err);
        CHECK(strstr(tecs_last_error_msg(w), bad[i].msg) != NULL);
    }
    CHECK_EQ(tecs_world_entity_count(w), before);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relidx_unique_refuses_a_taken_key)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_entity_t bob = f.e[0], carol = f.e[1];
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.owes, bob, int32_t, 7), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.owes, bob, int32_t, 7), TECS_OK);
    CHECK(rel_index(w, f.owes, bob, TECS_INDEX_HASH, true) == NULL);    /* shared now */
    CHECK_ERR(tecs_last_error(w), TECS_EEXIST);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.owes, bob, int32_t, 8), TECS_OK);
    tecs_index_t *ix = rel_index(w, f.owes, bob, TECS_INDEX_HASH, true);
    CHECK(ix != NULL);
    CHECK_EQ(tecs_index_lookup(ix, tecs_key_int(8)), f.e[3]);
    /* a set, an add (zero) and a queued change that would repeat a key */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.owes, bob, int32_t, 7), TECS_EEXIST);
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, f.e[3], f.owes, bob), 8);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[4], f.owes, bob, int32_t, 7), TECS_EEXIST);
    CHECK(!tecs_pair_has(w, f.e[4], f.owes, bob));
    CHECK_ERR(tecs_pair_add(w, f.e[4], f.owes, bob), TECS_OK);               /* 0 */
    CHECK_ERR(tecs_pair_add(w, f.e[5], f.owes, bob), TECS_EEXIST);
    CHECK(!tecs_pair_has(w, f.e[5], f.owes, bob));
    CHECK_ERR(TECS_PAIR_SET(w, f.e[5], f.owes, carol, int32_t, 7), TECS_OK); /* carol's */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.owes, bob, int32_t, 7), TECS_OK);   /* its own */
    int32_t dropped = tecs_dropped_changes(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[6], f.owes, bob, int32_t, 8), TECS_OK);   /* queued */
    tecs_defer_end(w);
    CHECK(!tecs_pair_has(w, f.e[6], f.owes, bob));
    CHECK_EQ(tecs_dropped_changes(w), dropped + 1);
    agree(&f, ix, f.owes, bob);
    /* the exclusive relation's one pair, whatever its target */
    tecs_index_t *rank = rel_index(w, f.rank, TECS_WILDCARD, TECS_INDEX_ORDERED, true);
    CHECK(rank != NULL);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.rank, bob, int32_t, 1), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.rank, carol, int32_t, 1), TECS_EEXIST);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.rank, carol, int32_t, 1), TECS_OK); /* retarget */
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.rank, bob, int32_t, 2), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f.e[3], f.rank, carol), TECS_OK);            /* to 0 */
    CHECK_ERR(tecs_pair_add(w, f.e[4], f.rank, carol), TECS_EEXIST);
    CHECK_EQ(tecs_index_lookup(rank, tecs_key_int(0)), f.e[3]);
    agree(&f, rank, f.rank, TECS_WILDCARD);
    tw_free(w);
}

/* A spatial index over a relation's two float fields. */
TEST(relidx_spatial_over_pairs)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t at = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "At", .size = sizeof(Spot), .align = _Alignof(Spot) } });
    tecs_entity_t map = tecs_new(w), other = tecs_new(w), e[64];
    uint64_t seed = 5;
    for (int i = 0; i < 64; i++) {
        e[i] = tecs_new(w);
        Spot s = { tw_frand(&seed, 0, 100), tw_frand(&seed, 0, 100) };
        CHECK_ERR(tecs_pair_set(w, e[i], at, i % 4 ? map : other, &s), TECS_OK);
    }
    tecs_index_t *ix = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = at, .target = map, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Spot, x), .offset_y = offsetof(Spot, y), .cell_size = 10 });
    CHECK(ix != NULL);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 64; i += 3) {
            Spot s = { tw_frand(&seed, 0, 100), tw_frand(&seed, 0, 100) };
            CHECK_ERR(tecs_pair_set(w, e[i], at, (i + round) % 4 ? map : other, &s), TECS_OK);
        }
        tecs_entity_t got[64];
        int32_t n = tecs_index_near(ix, 50, 50, 30, got, 64), want_n = 0;
        for (int i = 0; i < 64; i++) {
            const Spot *s = tecs_pair_get(w, e[i], at, map);
            want_n += s && (s->x - 50) * (s->x - 50) + (s->y - 50) * (s->y - 50) <= 900;
        }
        CHECK_EQ(n, want_n);
        CHECK(n > 0);
        for (int32_t k = 0; k < n; k++)
            CHECK(tecs_pair_get(w, got[k], at, map) != NULL);
        TW_CHECK(w);
    }
    tw_free(w);
}

/* A cache whose filter names a relation's index follows the pairs. */
TEST(relidx_cache_follows_pairs)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    tecs_entity_t bob = f.e[0];
    tecs_index_t *ix = rel_index(w, f.owes, bob, TECS_INDEX_ORDERED, false);
    tecs_filter_t *fl = tecs_filter_new(w);
    tecs_filter_cmp(fl, ix, TECS_GT, tecs_key_int(10));
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .term_count = 0 });
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = fl });
    CHECK(c != NULL);
    CHECK_EQ(tecs_cache_count(c), 0);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.owes, bob, int32_t, 11), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[3], f.owes, bob, int32_t, 12), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[4], f.owes, f.e[1], int32_t, 13), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 2);
    CHECK_ERR(TECS_PAIR_SET(w, f.e[2], f.owes, bob, int32_t, 1), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 1);
    CHECK_ERR(tecs_destroy(w, bob), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 0);
    TW_CHECK(w);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    tecs_filter_free(fl);
    tw_free(w);
}

/* A load and a delta rebuild the indexes after the pairs are restored. */
TEST(relidx_snapshot_and_delta_rebuild)
{
    fx a;
    fx_make(&a, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_entity_t bob = a.e[0], navy = a.e[1];
    for (int i = 2; i < 14; i++) {
        CHECK_ERR(TECS_PAIR_SET(a.w, a.e[i], a.owes, bob, int32_t, i % 5), TECS_OK);
        CHECK_ERR(TECS_PAIR_SET(a.w, a.e[i], a.rank, navy, int32_t, i), TECS_OK);
    }
    tecs_mark_t m;
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* The mirror: its relations and a wildcard index made before the load. */
    fx b = a;
    b.w = tw_new();
    b.owes = tecs_relation_new(b.w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 } });
    b.rank = tecs_relation_new(b.w, &(tecs_relation_desc_t){
        .component = { .name = "Rank", .size = 4, .align = 4 }, .exclusive = true });
    tecs_index_t *rank = rel_index(b.w, b.rank, TECS_WILDCARD, TECS_INDEX_ORDERED, false);
    CHECK(rank != NULL);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    CHECK_EQ(tecs_index_count(rank), 12);
    agree(&b, rank, b.rank, TECS_WILDCARD);
    tecs_index_t *owed = rel_index(b.w, b.owes, bob, TECS_INDEX_HASH, false);
    CHECK(owed != NULL);
    agree(&b, owed, b.owes, bob);
    uint64_t seed = 3;
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < 6; k++) {
            int i = 2 + (int)(tw_rand(&seed) % (NE - 2));
            int32_t v = (int32_t)(tw_rand(&seed) % 20);
            if (k % 3 == 0)
                tecs_pair_remove(a.w, a.e[i], a.owes, TECS_WILDCARD);   /* or ENOENT */
            else
                CHECK_ERR(TECS_PAIR_SET(a.w, a.e[i], k % 2 ? a.owes : a.rank, bob, int32_t, v),
                          TECS_OK);
        }
        CHECK_ERR(tecs_delta_save_mem(a.w, &m, &buf), TECS_OK);
        CHECK_ERR(tecs_delta_apply_mem(b.w, buf.data, buf.size), TECS_OK);
        tecs_snapshot_buf_free(&buf);
        agree(&b, rank, b.rank, TECS_WILDCARD);
        agree(&b, owed, b.owes, bob);
    }
    /* bob dies in the source: the mirror's index of bob is empty */
    CHECK_ERR(tecs_destroy(a.w, bob), TECS_OK);
    CHECK_ERR(tecs_delta_save_mem(a.w, &m, &buf), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(b.w, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    CHECK_EQ(tecs_index_count(owed), 0);
    TW_CHECK(b.w);
    tw_free(b.w);
    tw_free(a.w);
}

/* A loaded pair that repeats a unique index's key fails the load. */
TEST(relidx_snapshot_unique_conflict_fails_load)
{
    fx a;
    fx_make(&a, tw_new(), TECS_CLEANUP_REMOVE);
    CHECK_ERR(TECS_PAIR_SET(a.w, a.e[2], a.rank, a.e[0], int32_t, 4), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(a.w, a.e[3], a.rank, a.e[1], int32_t, 4), TECS_OK);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    tecs_world_t *b = tw_new();
    tecs_comp_t rank = tecs_relation_new(b, &(tecs_relation_desc_t){
        .component = { .name = "Rank", .size = 4, .align = 4 }, .exclusive = true });
    tecs_index_t *ix = rel_index(b, rank, TECS_WILDCARD, TECS_INDEX_HASH, true);
    CHECK(ix != NULL);
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    CHECK_EQ(tecs_index_count(ix), 0);
    TW_CHECK(b);
    tecs_snapshot_buf_free(&buf);
    tw_free(b);
    tw_free(a.w);
}

TEST(relidx_world_reset_empties)
{
    fx f;
    fx_make(&f, tw_new(), TECS_CLEANUP_REMOVE);
    tecs_world_t *w = f.w;
    for (int i = 2; i < 12; i++)
        CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.rank, f.e[i % 2], int32_t, i), TECS_OK);
    tecs_index_t *any = rel_index(w, f.rank, TECS_WILDCARD, TECS_INDEX_ORDERED, true);
    tecs_index_t *of0 = rel_index(w, f.rank, f.e[0], TECS_INDEX_HASH, false);
    CHECK(any && of0);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(tecs_index_count(any), 0);
    CHECK_EQ(tecs_index_count(of0), 0);
    TW_CHECK(w);
    for (int i = 0; i < NE; i++)
        f.e[i] = tecs_new(w);
    for (int i = 2; i < 12; i++)
        CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.rank, f.e[0], int32_t, i), TECS_OK);
    agree(&f, any, f.rank, TECS_WILDCARD);
    CHECK_EQ(tecs_index_count(of0), 0);
    tw_free(w);
}

/* ---- out of memory ------------------------------------------------------ */

typedef tecs_err_t (*oom_step)(fx *f, tecs_index_t **ix);

static tecs_err_t oom_new(fx *f, tecs_index_t **ix)
{
    tecs_index_t *x = rel_index(f->w, f->owes, f->e[0], TECS_INDEX_ORDERED, false);
    if (x == NULL)
        return tecs_last_error(f->w);
    tecs_index_free(ix[0]);
    ix[0] = x;
    return TECS_OK;
}

static tecs_err_t oom_add(fx *f, tecs_index_t **ix)
{
    (void)ix;
    return TECS_PAIR_SET(f->w, f->e[20], f->owes, f->e[0], int32_t, 3);
}

static tecs_err_t oom_retarget(fx *f, tecs_index_t **ix)
{
    (void)ix;
    return TECS_PAIR_SET(f->w, f->e[2], f->rank, f->e[1], int32_t, 30);
}

static tecs_err_t oom_destroy_target(fx *f, tecs_index_t **ix)
{
    (void)ix;
    return tecs_destroy(f->w, f->e[0]);
}

static tecs_err_t oom_queued(fx *f, tecs_index_t **ix)
{
    (void)ix;
    tecs_err_t err = tecs_defer_begin(f->w);
    if (err == TECS_OK)
        err = TECS_PAIR_SET(f->w, f->e[21], f->owes, f->e[0], int32_t, 4);
    tecs_err_t end = tecs_defer_end(f->w);
    return err ? err : end;
}

/* Each step with the k-th allocation failing, for every k: a refused
** step leaves the pairs and the indexes as they were, and the indexes
** agree with the pairs whatever the step did. */
TEST(relidx_out_of_memory_changes_nothing)
{
    oom_step steps[] = { oom_new, oom_add, oom_retarget, oom_destroy_target, oom_queued };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        for (long k = 1; k < 400; k++) {
            tw_alloc a = { 0 };
            fx f;
            fx_make(&f, tw_new_ex(&a, 0), TECS_CLEANUP_REMOVE);
            tecs_world_t *w = f.w;
            for (int i = 2; i < 12; i++) {
                CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.owes, f.e[0], int32_t, i), TECS_OK);
                CHECK_ERR(TECS_PAIR_SET(w, f.e[i], f.rank, f.e[0], int32_t, i), TECS_OK);
            }
            tecs_index_t *ix[3] = {
                rel_index(w, f.owes, f.e[0], TECS_INDEX_HASH, false),
                rel_index(w, f.rank, TECS_WILDCARD, TECS_INDEX_ORDERED, true),
                rel_index(w, f.rank, f.e[1], TECS_INDEX_ORDERED, false),
            };
            CHECK(ix[0] && ix[1] && ix[2]);
            int32_t n0 = tecs_index_count(ix[0]), n2 = tecs_index_count(ix[2]);
            a.fail_at = a.calls + k;
            tecs_err_t err = steps[s](&f, ix);
            bool failed = a.failures > 0;
            a.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                CHECK(tecs_is_alive(w, f.e[0]));
                CHECK(!tecs_pair_has(w, f.e[20], f.owes, TECS_WILDCARD));
                CHECK_EQ(*(const int32_t *)tecs_pair_get(w, f.e[2], f.rank, f.e[0]), 2);
                CHECK_EQ(tecs_index_count(ix[0]), n0);
                CHECK_EQ(tecs_index_count(ix[2]), n2);
            } else if (!(s == 4 && failed)) {
                CHECK_ERR(err, TECS_OK);
            }
            if (tecs_is_alive(w, f.e[0]))
                agree(&f, ix[0], f.owes, f.e[0]);
            agree(&f, ix[1], f.rank, TECS_WILDCARD);
            agree(&f, ix[2], f.rank, f.e[1]);
            tw_free(w);
            if (!failed)
                break;          /* every allocation of the step was tried */
        }
    }
}
