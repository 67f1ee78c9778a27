/* Queries and iteration: matching, fields, order, early stop, collect, nesting. */
#include "hooks.h"

/* ---- random worlds and a brute-force oracle ------------------------------ */

enum { NC = 6, NE = 600 };                     /* components 0..3 data, 4..5 tags */

typedef struct rworld {
    tecs_world_t *w;
    tecs_comp_t c[NC];
    tecs_entity_t e[NE];
    unsigned mask[NE];                         /* components each entity has */
} rworld;

/* Components are added in a random order and some removed again, so moves
** insert and drop columns at every position. */
static void rworld_fill(rworld *r, uint64_t seed)
{
    for (int i = 0; i < NE; i++) {
        r->e[i] = tecs_new(r->w);
        unsigned want = (unsigned)(tw_rand(&seed) % (1u << NC));
        unsigned extra = (unsigned)(tw_rand(&seed) % (1u << NC)) & ~want;
        unsigned all = want | extra;
        r->mask[i] = 0;
        while (r->mask[i] != all) {
            int k = (int)(tw_rand(&seed) % NC);
            if (!(all >> k & 1) || (r->mask[i] >> k & 1))
                continue;
            int32_t v = (int32_t)(i * 10 + k);
            CHECK_ERR(tecs_set(r->w, r->e[i], r->c[k], k < 4 ? &v : NULL), TECS_OK);
            r->mask[i] |= 1u << k;
        }
        for (int k = 0; k < NC; k++) {
            if (extra >> k & 1) {
                CHECK_ERR(tecs_remove(r->w, r->e[i], r->c[k]), TECS_OK);
                r->mask[i] &= ~(1u << k);
            }
        }
    }
    /* Destroy some, so archetypes have holes filled by swaps. */
    for (int i = 0; i < NE; i += 7) {
        CHECK_ERR(tecs_destroy(r->w, r->e[i]), TECS_OK);
        r->mask[i] = 0;
    }
}

static void rworld_init(rworld *r, int32_t rows)
{
    r->w = tw_new_ex(NULL, rows);
    for (int k = 0; k < NC; k++) {
        char name[8] = { 'c', (char)('0' + k), 0 };
        r->c[k] = tecs_component_new(r->w, &(tecs_component_desc_t){
            .name = name, .size = k < 4 ? 4 : 0, .align = 4 });
    }
}

static bool oracle_match(const rworld *r, int i, const tecs_term_t *t, int n)
{
    if (!tecs_is_alive(r->w, r->e[i]))
        return false;
    bool any_term = false, any_hit = false;
    for (int k = 0; k < n; k++) {
        bool has = r->mask[i] >> (t[k].comp - r->c[0]) & 1;
        if (t[k].oper == TECS_WITH && !has)
            return false;
        if (t[k].oper == TECS_NONE && has)
            return false;
        if (t[k].oper == TECS_ANY) {
            any_term = true;
            any_hit = any_hit || has;
        }
    }
    return !any_term || any_hit;
}

/* Iterate q; every row must be a matching entity with the right fields;
** every matching entity must be seen exactly once. */
static void check_against_oracle(rworld *r, tecs_query_t *q, const tecs_term_t *t, int n)
{
    static int seen[NE];
    memset(seen, 0, sizeof seen);
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        for (int row = 0; row < it.count; row++) {
            int i = (int)TECS_ENTITY_INDEX(it.entities[row]);
            CHECK(i < NE && r->e[i] == it.entities[row]);
            CHECK(oracle_match(r, i, t, n));
            seen[i]++;
            for (int k = 0; k < n; k++) {
                int ci = (int)(t[k].comp - r->c[0]);
                bool has = r->mask[i] >> ci & 1;
                bool data = has && ci < 4 && t[k].oper != TECS_NONE &&
                            t[k].access != TECS_FILTER;
                CHECK_EQ(tecs_field_is_set(&it, k), has && t[k].oper != TECS_NONE);
                CHECK_EQ(tecs_field(&it, k) != NULL, data);
                if (data)
                    CHECK_EQ(((int32_t *)tecs_field(&it, k))[row], i * 10 + ci);
            }
        }
    }
    int expect = 0;
    for (int i = 0; i < NE; i++) {
        bool m = oracle_match(r, i, t, n);
        CHECK_EQ(seen[i], m);
        expect += m;
    }
    CHECK_EQ(tecs_query_count(q), expect);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, NULL, 0), expect);
}

/* A random valid query: distinct components, random operators and access. */
static int random_terms(const rworld *r, uint64_t *seed, tecs_term_t *t)
{
    int n = 1 + (int)(tw_rand(seed) % NC);
    unsigned used = 0;
    for (int k = 0; k < n; k++) {
        int ci;
        do
            ci = (int)(tw_rand(seed) % NC);
        while (used >> ci & 1);
        used |= 1u << ci;
        t[k] = (tecs_term_t){ .comp = r->c[ci], .oper = (tecs_oper_t)(tw_rand(seed) % 4),
                              .access = (tecs_access_t)(tw_rand(seed) % 3) };
    }
    return n;
}

TEST(query_matches_brute_force)
{
    rworld r;
    rworld_init(&r, 16);
    /* Queries made before the archetypes exist ... */
    uint64_t seed = 42;
    tecs_term_t terms[200][NC];
    int nterms[200];
    tecs_query_t *early[200];
    for (int j = 0; j < 200; j++) {
        nterms[j] = random_terms(&r, &seed, terms[j]);
        early[j] = tecs_query_new(r.w, &(tecs_query_desc_t){ .terms = terms[j], .term_count = nterms[j] });
        CHECK(early[j] != NULL);
    }
    rworld_fill(&r, 99);
    TW_CHECK(r.w);
    /* ... and after: same result, same order. */
    tecs_entity_t a[NE], b[NE];
    for (int j = 0; j < 200; j++) {
        check_against_oracle(&r, early[j], terms[j], nterms[j]);
        tecs_query_t *late = tecs_query_new(r.w, &(tecs_query_desc_t){ .terms = terms[j], .term_count = nterms[j] });
        check_against_oracle(&r, late, terms[j], nterms[j]);
        int32_t na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(early[j]), .query = early[j]) }, a, NE);
        int32_t nb = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(late), .query = late) }, b, NE);
        CHECK_EQ(na, nb);
        CHECK(memcmp(a, b, (size_t)na * sizeof *a) == 0);
        CHECK_EQ(tecs_query_archetype_count(early[j]), tecs_query_archetype_count(late));
        tecs_query_free(late);
    }
    tw_free(r.w);                                  /* frees the early queries */
}

TEST(query_all_convenience)
{
    rworld r;
    rworld_init(&r, 1024);
    rworld_fill(&r, 5);
    tecs_query_t *q = tecs_query_all(r.w, 2, (tecs_comp_t[]){ r.c[0], r.c[2] });
    tecs_term_t t[2] = { { .comp = r.c[0] }, { .comp = r.c[2] } };
    check_against_oracle(&r, q, t, 2);
    const tecs_term_t *got;
    CHECK_EQ(tecs_query_terms(q, &got), 2);
    CHECK_EQ(got[1].comp, r.c[2]);
    CHECK(tecs_query_world(q) == r.w);
    CHECK(tecs_query_all(r.w, -1, r.c) == NULL);
    CHECK_EQ(tecs_last_error(r.w), TECS_EINVAL);
    tecs_query_t *every = tecs_query_all(r.w, 0, NULL);    /* every entity */
    CHECK(every != NULL);
    CHECK_EQ(tecs_query_count(every), tecs_world_entity_count(r.w));
    CHECK(tecs_query_all(r.w, 1, NULL) == NULL);
    CHECK(tecs_query_all(r.w, TECS_MAX_TERMS + 1, r.c) == NULL);
    CHECK_EQ(tecs_last_error(r.w), TECS_ELIMIT);
    tecs_query_free(q);
    tecs_query_free(NULL);
    tw_free(r.w);
}

TEST(query_count_without_iterating)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK_EQ(tecs_query_count(q), 0);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_archetype_t *b = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    CHECK_ERR(tecs_new_bulk(w, a, 100, NULL, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_new_bulk(w, b, 33, NULL, 0, NULL), TECS_OK);
    CHECK_EQ(tecs_query_count(q), 133);
    CHECK_EQ(tecs_query_archetype_count(q), 2);
    CHECK_EQ(tecs_query_count(NULL), 0);
    tw_free(w);
}

TEST(query_fields_null_for_tag_filter_absent)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t tag = TECS_TAG(w, Tag);
    tecs_entity_t e = tecs_new(w);
    tecs_add(w, e, pos);
    tecs_add(w, e, tag);
    tecs_add(w, e, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos }, { .comp = tag },
                                 { .comp = hp, .access = TECS_FILTER },
                                 { .comp = vel, .oper = TECS_OPTIONAL });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    CHECK_EQ(it.count, 1);
    CHECK(tecs_field(&it, 0) != NULL && tecs_field_is_set(&it, 0));
    CHECK(tecs_field(&it, 1) == NULL && tecs_field_is_set(&it, 1));   /* tag */
    CHECK(tecs_field(&it, 2) == NULL && tecs_field_is_set(&it, 2));   /* filter */
    CHECK(tecs_field(&it, 3) == NULL && !tecs_field_is_set(&it, 3));  /* absent */
    CHECK(tecs_field(&it, -1) == NULL && !tecs_field_is_set(&it, 4));
    CHECK(!tecs_iter_next(&it));
    tw_free(w);
}

/* Ids in the order a user would expect: archetypes by creation, then rows. */
static void build_ordered(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel,
                          tecs_entity_t *ids)
{
    tecs_archetype_t *b = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    CHECK_ERR(tecs_new_bulk(w, b, 40, ids, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_new_bulk(w, a, 40, ids + 40, 0, NULL), TECS_OK);
}

TEST(query_order_is_deterministic)
{
    tecs_entity_t ids[80], got[80], again[80];
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    build_ordered(w, pos, vel, ids);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, got, 80), 80);
    CHECK(memcmp(got, ids, sizeof ids) == 0);     /* creation order, row order */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, got, 80), 80);
    for (int i = 0; i < 80; i++)
        CHECK_EQ(got[i], ids[79 - i]);
    /* A second world built by the same calls gives the same ids and order. */
    tecs_world_t *w2 = tw_new_ex(NULL, 16);
    tecs_comp_t pos2 = TECS_COMPONENT(w2, Position);
    build_ordered(w2, pos2, TECS_COMPONENT(w2, Velocity), got);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(tecs_query_all(w2, 1, &pos2)), .query = tecs_query_all(w2, 1, &pos2)) }, again, 80), 80);
    CHECK(memcmp(again, ids, sizeof ids) == 0);
    tw_free(w);
    tw_free(w2);
}

TEST(query_reverse_chunks)
{
    tecs_entity_t ids[80];
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    build_ordered(w, pos, TECS_COMPONENT(w, Velocity), ids);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    /* The chunk iterator walks chunks backwards; rows stay in order. */
    tecs_iter_t it = TECS_ITER(w, .query = q, .reverse = true);
    int k = 0, last = 80;
    while (tecs_iter_next(&it)) {
        CHECK(it.count == 8 || it.count == 16);
        last -= it.count;
        for (int r = 0; r < it.count; r++)
            CHECK_EQ(it.entities[r], ids[last + r]);
        k++;
    }
    CHECK_EQ(k, 6);
    CHECK_EQ(last, 0);
    tw_free(w);
}

typedef struct each_ctx { int visits; int stop_at; tecs_entity_t order[80]; } each_ctx;

static bool each_visit(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w;
    each_ctx *c = ctx;
    CHECK(fields[0] != NULL);
    ((Position *)fields[0])->x = (float)c->visits;
    c->order[c->visits++] = e;
    return c->visits == c->stop_at;
}

TEST(query_each_and_early_stop_across_archetypes)
{
    tecs_entity_t ids[80];
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    build_ordered(w, pos, TECS_COMPONENT(w, Velocity), ids);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    each_ctx c = { .stop_at = -1 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_visit, &c), TECS_OK);
    CHECK_EQ(c.visits, 80);
    CHECK(memcmp(c.order, ids, sizeof ids) == 0);
    CHECK_EQ(TECS_GET(w, ids[79], pos, Position)->x, 79);
    /* Stop in the second archetype, and in the first one. */
    c = (each_ctx){ .stop_at = 45 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_visit, &c), TECS_OK);
    CHECK_EQ(c.visits, 45);
    CHECK(!tecs_is_deferred(w));                  /* the iteration ended */
    c = (each_ctx){ .stop_at = 3 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, each_visit, &c), TECS_OK);
    CHECK_EQ(c.visits, 3);
    CHECK_EQ(c.order[0], ids[79]);
    CHECK_EQ(c.order[2], ids[77]);
    CHECK(!tecs_is_deferred(w));
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = NULL) }, each_visit, &c), TECS_EINVAL);
    tw_free(w);
}

TEST(query_iter_fini_ends_early)
{
    tecs_entity_t ids[80];
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    build_ordered(w, pos, TECS_COMPONENT(w, Velocity), ids);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_is_deferred(w));
    CHECK(tecs_iter_next(&it));
    CHECK(tecs_destroy(w, ids[0]) == TECS_OK);   /* queued */
    CHECK(tecs_is_alive(w, ids[0]));
    tecs_iter_fini(&it);
    CHECK(!tecs_is_deferred(w));
    CHECK(!tecs_is_alive(w, ids[0]));             /* applied at the end */
    tecs_iter_fini(&it);                          /* harmless twice */
    CHECK(!tecs_iter_next(&it));
    CHECK_EQ(tecs_world_entity_count(w), 79);
    tecs_iter_t none = TECS_ITER(w, .query = NULL);
    CHECK(!tecs_iter_next(&none));
    tecs_iter_fini(&none);
    tecs_iter_fini(NULL);
    CHECK(!tecs_is_deferred(w));
    tw_free(w);
}

TEST(query_collect_count_first)
{
    tecs_entity_t ids[80];
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    build_ordered(w, pos, TECS_COMPONENT(w, Velocity), ids);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 0);
    CHECK_EQ(n, 80);
    tecs_entity_t *out = malloc((size_t)n * sizeof *out);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, n), 80);
    CHECK(memcmp(out, ids, sizeof ids) == 0);
    tecs_entity_t small[5] = { 0 };
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, small, 3), 80); /* says how many there are */
    CHECK_EQ(small[2], ids[2]);
    CHECK_EQ(small[3], 0);                         /* nothing past cap */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 5), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, -1), -1);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = NULL) }, out, 5), -1);
    free(out);
    tw_free(w);
}

TEST(query_nested_iterations)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_archetype_t *b = tecs_archetype_get(w, 1, &vel);
    CHECK_ERR(tecs_new_bulk(w, a, 20, NULL, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_new_bulk(w, b, 30, NULL, 0, NULL), TECS_OK);
    tecs_query_t *qa = tecs_query_all(w, 1, &pos);
    tecs_query_t *qb = tecs_query_all(w, 1, &vel);
    long pairs = 0;
    tecs_entity_t first = 0;
    tecs_iter_t outer = TECS_ITER(w, .query = qa);
    while (tecs_iter_next(&outer)) {
        for (int i = 0; i < outer.count; i++) {
            tecs_iter_t inner = TECS_ITER(w, .query = qb);
            while (tecs_iter_next(&inner)) {
                pairs += inner.count;
                if (first == 0)
                    first = tecs_new(w);          /* queued until the outer ends */
            }
            CHECK(tecs_is_deferred(w));           /* the outer one is still open */
            CHECK(!tecs_is_alive(w, first));      /* the inner end did not apply it */
        }
    }
    CHECK_EQ(pairs, 20 * 30);
    CHECK(!tecs_is_deferred(w));
    CHECK(tecs_is_alive(w, first));
    CHECK_EQ(tecs_world_entity_count(w), 51);
    tw_free(w);
}

TEST(query_bad_descriptions_create_nothing)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *keep = tecs_query_all(w, 1, &pos);   /* listener exists already */
    size_t mem = tecs_world_memory(w);
    tecs_term_t many[TECS_MAX_TERMS + 1];
    for (int i = 0; i <= TECS_MAX_TERMS; i++)
        many[i] = (tecs_term_t){ .comp = pos, .oper = TECS_OPTIONAL };
    struct { tecs_query_desc_t d; tecs_err_t err; } bad[] = {
        { { .terms = NULL, .term_count = 1 }, TECS_EINVAL },
        { { .terms = (tecs_term_t[]){ { .comp = pos } }, .term_count = -1 }, TECS_EINVAL },
        { { .terms = (tecs_term_t[]){ { .comp = 99 } }, .term_count = 1 }, TECS_ENOCOMP },
        { { .terms = (tecs_term_t[]){ { .comp = 0 } }, .term_count = 1 }, TECS_ENOCOMP },
        { { .terms = (tecs_term_t[]){ { .comp = pos }, { .comp = pos, .oper = TECS_NONE } },
            .term_count = 2 }, TECS_EINVAL },
        { { .terms = (tecs_term_t[]){ { .comp = pos, .oper = (tecs_oper_t)9 } },
            .term_count = 1 }, TECS_EINVAL },
        { { .terms = (tecs_term_t[]){ { .comp = vel, .access = (tecs_access_t)9 } },
            .term_count = 1 }, TECS_EINVAL },
        { { .terms = many, .term_count = TECS_MAX_TERMS + 1 }, TECS_ELIMIT },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(tecs_query_new(w, &bad[i].d) == NULL);
        CHECK_EQ(tecs_last_error(w), bad[i].err);
    }
    CHECK(tecs_query_new(w, NULL) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* A component of another world is unknown here. */
    TECS_TAG(w2, A); TECS_TAG(w2, B); TECS_TAG(w2, C);
    tecs_comp_t foreign = TECS_TAG(w2, Foreign);
    CHECK(tecs_query_new(w, &(tecs_query_desc_t){ .terms = (tecs_term_t[]){ { .comp = foreign } }, .term_count = 1 })
          == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK_EQ(tecs_world_memory(w), mem);
    /* The limit itself is fine. */
    tecs_term_t ok[TECS_MAX_TERMS];
    for (int i = 0; i < TECS_MAX_TERMS; i++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", i);
        ok[i] = (tecs_term_t){ .comp = tecs_component_new(w, &(tecs_component_desc_t){
                                   .name = name, .size = 4 }), .oper = TECS_OPTIONAL };
    }
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = ok, .term_count = TECS_MAX_TERMS });
    CHECK(q != NULL);
    tecs_entity_t e = tecs_new(w);
    tecs_add(w, e, ok[TECS_MAX_TERMS - 1].comp);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    CHECK(tecs_field(&it, TECS_MAX_TERMS - 1) != NULL);
    tecs_iter_fini(&it);
    tecs_query_free(keep);
    tw_free(w);
    tw_free(w2);
}

TEST(query_empty_archetypes_are_skipped)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t ids[8];
    for (int i = 0; i < 8; i++) {
        char name[8] = { 'x', (char)('0' + i), 0 };
        ids[i] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name });
        tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, ids[i] });
    }
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK_EQ(tecs_query_archetype_count(q), 8);
    tecs_entity_t e = tecs_new_in(w, tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, ids[5] }));
    int steps = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        CHECK_EQ(it.count, 1);
        CHECK_EQ(it.entities[0], e);
        steps++;
    }
    CHECK_EQ(steps, 1);
    tw_free(w);
}

/* Archetypes and queries made while an iteration is open are matched like
** any other; the running iteration is not disturbed. */
TEST(query_made_during_iteration)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    CHECK_ERR(tecs_new_bulk(w, a, 40, NULL, 0, NULL), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_query_t *inner = NULL;
    int rows = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q, .reverse = true);
    while (tecs_iter_next(&it)) {
        rows += it.count;
        if (inner == NULL) {
            tecs_archetype_t *b = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
            CHECK(b != NULL);
            CHECK_ERR(tecs_archetype_reserve(w, a, 500), TECS_OK);   /* chunk array grows */
            inner = tecs_query_all(w, 2, (tecs_comp_t[]){ vel, pos });
            CHECK(inner != NULL);
            CHECK(tecs_new_in(w, b) != 0);
            CHECK_EQ(tecs_query_count(inner), 0);
        }
    }
    CHECK_EQ(rows, 40);
    CHECK_EQ(tecs_query_count(inner), 1);
    CHECK_EQ(tecs_query_count(q), 41);
    TW_CHECK(w);
    tw_free(w);
}

static bool each_nested(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)fields;
    tecs_query_t *q = ctx;
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 0);
    tecs_entity_t buf[64];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, buf, 64), n);   /* nested collect */
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);        /* queued */
    CHECK(tecs_is_alive(w, e));
    return false;
}

TEST(query_each_with_nested_collect_and_destroy)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK_ERR(tecs_new_bulk(w, tecs_archetype_get(w, 1, &pos), 50, NULL, 0, NULL), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_nested, q), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

static bool each_count(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    ++*(int *)ctx;
    return false;
}

/* tecs_iter refuses a description that is not one source, and opens
** nothing; its helpers return the refusal. */
TEST(query_unknown_iteration_flags_are_refused)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK_ERR(tecs_new_bulk(w, tecs_archetype_get(w, 1, &pos), 20, NULL, 0, NULL), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_archetype_t *arch = tecs_archetype_get(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q, .archetype = arch, .reverse = true);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(!tecs_iter_next(&it));
    CHECK(!tecs_is_deferred(w));
    it = tecs_iter(w, NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(!tecs_iter_next(&it));
    it = TECS_ITER(w, .reverse = true);                 /* no source */
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(!tecs_iter_next(&it));
    int calls = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .parts = 2) }, each_count, &calls), TECS_EINVAL);
    CHECK_EQ(calls, 0);
    tecs_entity_t out[20];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .archetype = arch, .part = 1) }, out, 20), -1);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, out, 20), 20);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, each_count, &calls), TECS_OK);
    CHECK_EQ(calls, 20);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- the plain walk: start, steps and end -------------------------------- */

/* A query of one archetype whose only chunk is emptied from inside the
** walk: the destroys and removes queue, the walk hands out the chunk once
** and ends, and the changes apply at its end. */
TEST(query_walk_empties_its_only_chunk)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    tecs_entity_t ids[10];
    CHECK_ERR(tecs_new_bulk(w, a, 10, ids, 0, NULL), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    int steps = 0, rows = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        CHECK(it.fields[0] != NULL && it.fields[1] != NULL);
        for (int32_t i = 0; i < it.count; i++) {
            if (i & 1)
                CHECK_ERR(tecs_destroy(w, it.entities[i]), TECS_OK);
            else
                CHECK_ERR(tecs_remove(w, it.entities[i], vel), TECS_OK);
            CHECK(tecs_is_alive(w, it.entities[i]));    /* queued */
        }
        rows += it.count;
        steps++;
    }
    CHECK_EQ(steps, 1);
    CHECK_EQ(rows, 10);
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_archetype_entity_count(a), 0);
    CHECK_EQ(tecs_world_entity_count(w), 5);
    CHECK(!tecs_iter_next(&it));                        /* ended stays ended */
    it = TECS_ITER(w, .query = q);                            /* nothing to hand out */
    CHECK(!tecs_iter_next(&it));
    CHECK(!tecs_is_deferred(w));
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* An iteration ended before its first step: an iterator of no rows and
** no fields, the world deferred until the end, the query busy. */
TEST(query_walk_ended_before_its_first_step)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK_ERR(tecs_new_bulk(w, tecs_archetype_get(w, 1, &pos), 40, NULL, 0, NULL), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_last_error(w), TECS_OK);
    CHECK(it.world == w && it.count == 0 && it.entities == NULL);
    for (int32_t t = 0; t < TECS_MAX_TERMS; t++)
        CHECK(it.fields[t] == NULL && tecs_field(&it, t) == NULL);
    CHECK(it.delta_time == 0 && it.frame == 0 && it.ctx == NULL && it.worker == 0 &&
          it.workers == 1);
    CHECK(tecs_is_deferred(w));
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    tecs_entity_t e = tecs_new(w);                      /* queued */
    tecs_iter_t copy = it;
    tecs_iter_fini(&it);
    CHECK(!tecs_is_deferred(w));
    CHECK(tecs_is_alive(w, e));
    CHECK(!tecs_iter_next(&it));
    TW_CHECK(w);
    tecs_iter_fini(&copy);                              /* an end twice: reported */
    CHECK_ERR(tecs_world_check(w), TECS_EINVAL);
    TW_CHECK(w);                                        /* once */
    CHECK(!tecs_iter_next(&copy));
    copy = TECS_ITER(w, .query = q);
    it = copy;
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&it);
    CHECK(!tecs_iter_next(&copy));                      /* ended by the other copy */
    TW_CHECK(w);
    /* Ended in the middle, with another iteration opened after it. */
    it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    tecs_iter_t inner = TECS_ITER(w, .query = q);
    tecs_iter_fini(&it);
    CHECK(tecs_is_deferred(w));
    int rows = 0;
    while (tecs_iter_next(&inner))
        rows += inner.count;
    CHECK_EQ(rows, 40);
    CHECK(!tecs_is_deferred(w));
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* Archetypes with no chunk (never held a row, or emptied) before, between
** and after those with rows: the walk hands out the rows of the others,
** chunk by chunk, in order, with their fields, and ends. */
TEST(query_walk_skips_archetypes_without_chunks)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t tags[4];
    tecs_archetype_t *arch[4];
    for (int i = 0; i < 4; i++) {
        char name[8] = { 't', (char)('0' + i), 0 };
        tags[i] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name });
        arch[i] = tecs_archetype_get(w, 3, (tecs_comp_t[]){ pos, vel, tags[i] });
    }
    tecs_entity_t ids[60];
    CHECK_ERR(tecs_new_bulk(w, arch[1], 40, ids, 0, NULL), TECS_OK);      /* 3 chunks */
    CHECK_ERR(tecs_new_bulk(w, arch[3], 20, ids + 40, 0, NULL), TECS_OK);
    tecs_entity_t gone[5];
    CHECK_ERR(tecs_new_bulk(w, arch[2], 5, gone, 0, NULL), TECS_OK);
    for (int i = 0; i < 5; i++)
        CHECK_ERR(tecs_destroy(w, gone[i]), TECS_OK);
    for (int i = 0; i < 60; i++)
        TECS_SET(w, ids[i], pos, Position, { (float)i, 0 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos }, { .comp = vel, .access = TECS_READ },
                                 { .comp = tags[0], .oper = TECS_OPTIONAL });
    CHECK_EQ(tecs_query_archetype_count(q), 4);
    for (int pass = 0; pass < 3; pass++) {
        int steps = 0, rows = 0;
        tecs_iter_t it = TECS_ITER(w, .query = q);
        while (tecs_iter_next(&it)) {
            const Position *p = it.fields[0];
            CHECK(it.count > 0 && it.count <= 16);
            CHECK(p != NULL && it.fields[1] != NULL && it.fields[2] == NULL);
            CHECK(tecs_field_is_set(&it, 1) && !tecs_field_is_set(&it, 2));
            for (int32_t i = 0; i < it.count; i++, rows++) {
                CHECK_EQ(it.entities[i], ids[rows]);
                CHECK_EQ((int)p[i].x, rows);
            }
            steps++;
        }
        CHECK_EQ(steps, 5);                             /* 16 + 16 + 8, then 16 + 4 */
        CHECK_EQ(rows, 60);
        CHECK(!tecs_field_is_set(&it, 0));
        CHECK(!tecs_is_deferred(w));
    }
    /* None of the archetypes with rows left: no step. */
    for (int i = 0; i < 60; i++)
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(!tecs_iter_next(&it));
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}
