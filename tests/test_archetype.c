/* Archetypes: lookup, chunks, dense rows, memory given back, limits. */
#include "hooks.h"

TEST(archetype_lookup_is_order_independent)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t a = TECS_COMPONENT(w, Position);
    tecs_comp_t b = TECS_COMPONENT(w, Velocity);
    tecs_comp_t c = TECS_COMPONENT(w, Health);
    tecs_archetype_t *x = tecs_archetype_get(w, 3, (tecs_comp_t[]){ a, b, c });
    tecs_archetype_t *y = tecs_archetype_get(w, 3, (tecs_comp_t[]){ c, a, b });
    tecs_archetype_t *z = tecs_archetype_get(w, 3, (tecs_comp_t[]){ b, c, a });
    CHECK(x != NULL && x == y && y == z);
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ a, b }) != x);
    CHECK_EQ(tecs_world_archetype_count(w), 3);
    const tecs_comp_t *ids;
    CHECK_EQ(tecs_archetype_components(x, &ids), 3);
    CHECK(ids[0] < ids[1] && ids[1] < ids[2]);
    CHECK(tecs_archetype_get(w, 0, NULL) == tecs_entity_archetype(w, tecs_new(w)));
    /* An entity reaching the set by add lands in the same archetype. */
    tecs_entity_t e = tecs_new(w);
    tecs_add(w, e, c);
    tecs_add(w, e, a);
    tecs_add(w, e, b);
    CHECK(tecs_entity_archetype(w, e) == x);
    TW_CHECK(w);
    tw_free(w);
}

TEST(archetype_bad_lists)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t a = TECS_COMPONENT(w, Position);
    tecs_comp_t b = TECS_COMPONENT(w, Velocity);
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_archetype_get(w, 3, (tecs_comp_t[]){ a, b, a }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ a, 99 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK(tecs_archetype_get(w, 1, (tecs_comp_t[]){ 0 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK(tecs_archetype_get(w, 2, NULL) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_archetype_get(w, -1, (tecs_comp_t[]){ a }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_world_archetype_count(w), 1);
    CHECK_EQ(tecs_world_memory(w), mem);
    tw_free(w);
}

TEST(archetype_reserve_allocates_ahead)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    CHECK_EQ(tecs_archetype_chunk_count(a), 0);
    CHECK_ERR(tecs_archetype_reserve(w, a, 100), TECS_OK);
    CHECK_EQ(tecs_archetype_chunk_count(a), 7);
    tecs_entity_t tmp[100];                        /* make the id slots exist */
    CHECK_ERR(tecs_new_bulk(w, tecs_archetype_get(w, 0, NULL), 100, tmp, 0, NULL), TECS_OK);
    for (int i = 0; i < 100; i++)
        CHECK_ERR(tecs_destroy(w, tmp[i]), TECS_OK);
    long calls = al.calls;
    for (int i = 0; i < 100; i++)
        CHECK(tecs_new_in(w, a) != 0);
    CHECK_ERR(tecs_new_bulk(w, a, 0, NULL, 0, NULL), TECS_OK);
    CHECK_EQ(al.calls, calls);                     /* no allocation at all */
    CHECK_EQ(tecs_archetype_chunk_count(a), 7);
    CHECK_ERR(tecs_archetype_reserve(w, a, 50), TECS_OK);    /* fewer: no-op */
    CHECK_EQ(tecs_archetype_chunk_count(a), 7);
    CHECK_ERR(tecs_archetype_reserve(w, a, -1), TECS_EINVAL);
    CHECK_ERR(tecs_archetype_reserve(w, NULL, 10), TECS_EINVAL);
    tecs_world_t *w2 = tw_new();
    CHECK_ERR(tecs_archetype_reserve(w2, a, 10), TECS_EWORLD);
    tw_free(w2);
    TW_CHECK(w);
    tw_free(w);
}

/* The memory rule (archetype.c): as rows arrive, an archetype holds at
** most twice the chunks its rows use; as they leave, fewer than four times
** its used chunks and the spare. */
static void check_chunk_rule(const tecs_archetype_t *a, int32_t rows, bool growing)
{
    int32_t used = (tecs_archetype_entity_count(a) + rows - 1) / rows;
    int32_t chunks = tecs_archetype_chunk_count(a);
    CHECK(chunks >= used);
    if (growing)
        CHECK(chunks <= (used > 1 ? 2 * used : 1));
    else
        CHECK(chunks < 4 * (used + 1));
}

TEST(archetype_chunk_counts)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    for (int i = 1; i <= 500; i++) {
        tecs_new_in(w, a);
        CHECK_EQ(tecs_archetype_entity_count(a), i);
        check_chunk_rule(a, 16, true);
    }
    CHECK_EQ(tecs_archetype_entity_count(NULL), 0);
    CHECK_EQ(tecs_archetype_chunk_count(NULL), 0);
    tw_free(w);
}

/* Entities made one at a time, as a game spawns them, lie in few runs of
** memory: a column of their chunks breaks at most once per doubling of the
** archetype, never at every chunk. */
TEST(archetype_rows_born_one_by_one_lie_in_few_runs)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    enum { N = 16 * 1000 };
    for (int i = 0; i < N; i++) {
        tecs_entity_t e = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e, pos, Position, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e, vel, Velocity, { 1, (float)i }), TECS_OK);
    }
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    int breaks[2] = { 0, 0 }, steps = 0, seen = 0;
    const char *end[2] = { NULL, NULL };
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        for (int f = 0; f < 2; f++) {
            const char *p = it.fields[f];
            breaks[f] += end[f] != NULL && p != end[f];
            end[f] = p + (size_t)it.count * 8;
        }
        const Position *p = it.fields[0];
        for (int r = 0; r < it.count; r++, seen++)
            CHECK_EQ(p[r].x, (float)seen);
        steps++;
    }
    CHECK_EQ(seen, N);
    CHECK_EQ(steps, 1000);
    CHECK(breaks[0] <= 10 && breaks[1] <= 10);     /* 1000 chunks: 2^10 > 1000 */
    TW_CHECK(w);
    tw_free(w);
}

/* After any destroy, the rows hold exactly the live entities, each with its
** own value: check through a query walk. */
TEST(archetype_swap_remove_keeps_rows_dense)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    enum { N = 100 };
    tecs_entity_t ids[N];
    Health vals[N];
    for (int i = 0; i < N; i++)
        vals[i].hp = i;
    CHECK_ERR(tecs_new_bulk(w, a, N, ids, 1, &(tecs_value_t){ hp, vals }), TECS_OK);
    uint64_t seed = 7;
    int alive = N;
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    while (alive > 0) {
        int i = (int)(tw_rand(&seed) % N);
        if (!tecs_is_alive(w, ids[i]))
            continue;
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        alive--;
        CHECK_EQ(tecs_archetype_entity_count(a), alive);
        int seen = 0;
        tecs_iter_t it = TECS_ITER(w, .query = q);
        while (tecs_iter_next(&it)) {
            Health *h = TECS_FIELD(&it, Health, 0);
            for (int r = 0; r < it.count; r++, seen++) {
                CHECK(tecs_is_alive(w, it.entities[r]));
                CHECK_EQ(TECS_ENTITY_INDEX(it.entities[r]), h[r].hp);
            }
            CHECK(it.count == 16 || seen == alive);   /* only the last chunk is partial */
        }
        CHECK_EQ(seen, alive);
        TW_CHECK(w);
    }
    tw_free(w);
}

TEST(archetype_emptied_chunks_are_freed)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t ids[160];
    size_t empty = tecs_world_memory(w);
    for (int k = 0; k < 10; k++)                   /* a chunk's rows per call */
        CHECK_ERR(tecs_new_bulk(w, a, 16, ids + 16 * k, 0, NULL), TECS_OK);
    size_t full = tecs_world_memory(w);
    int32_t most = tecs_archetype_chunk_count(a);
    check_chunk_rule(a, 16, true);
    for (int i = 159; i >= 40; i--) {
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        check_chunk_rule(a, 16, false);
    }
    int32_t some = tecs_archetype_chunk_count(a);
    size_t part = tecs_world_memory(w);
    CHECK(some < most && part < full);
    for (int i = 0; i < 40; i++)
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    CHECK_EQ(tecs_archetype_chunk_count(a), 1);    /* empty: one chunk kept */
    size_t chunk = (full - part) / (size_t)(most - some);
    CHECK_EQ(full - part, (size_t)(most - some) * chunk);  /* counted per chunk */
    CHECK_EQ(part - tecs_world_memory(w), (size_t)(some - 1) * chunk);
    CHECK(chunk >= 16 * sizeof(Position));
    CHECK(empty < tecs_world_memory(w));
    /* Moving out empties chunks too. */
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    CHECK_ERR(tecs_new_bulk(w, a, 64, ids, 0, NULL), TECS_OK);
    for (int i = 0; i < 64; i++)
        CHECK_ERR(tecs_add(w, ids[i], vel), TECS_OK);
    CHECK_EQ(tecs_archetype_chunk_count(a), 1);
    TW_CHECK(w);
    tw_free(w);
}

/* Rows that come and go across a chunk's boundary, over and over, neither
** allocate nor free: a group made as the archetype doubled is given back
** only once its rows have halved. */
TEST(archetype_rows_at_a_boundary_allocate_nothing)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t ids[64 + 40];
    for (int i = 0; i < 64; i++)
        ids[i] = tecs_new_in(w, a);
    long calls = al.calls;
    for (int round = 0; round < 50; round++) {
        for (int i = 64; i < 64 + 40; i++)
            CHECK((ids[i] = tecs_new_in(w, a)) != 0);
        for (int i = 64 + 40 - 1; i >= 64; i--)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        if (round == 0)
            calls = al.calls;                      /* the first round grew it */
    }
    CHECK_EQ(al.calls, calls);
    check_chunk_rule(a, 16, false);
    TW_CHECK(w);
    tw_free(w);
}

/* One reservation allocates its chunks as one group, column by column; the
** group is replaced by a smaller one once it is at most a quarter used (or
** empty), and memory is counted per chunk either way. */
TEST(archetype_chunk_groups_shrink_when_quarter_used)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    tecs_archetype_t *one = tecs_archetype_get(w, 1, &pos);
    enum { N = 160 };
    tecs_entity_t ids[N];
    Position ps[N];
    Health hs[N];
    for (int i = 0; i < N; i++) {
        ps[i] = (Position){ (float)i, (float)-i };
        hs[i].hp = 1000 + i;
    }
    size_t empty = tecs_world_memory(w);
    tecs_value_t vals[] = { { pos, ps }, { hp, hs } };
    CHECK_ERR(tecs_new_bulk(w, a, N, ids, 2, vals), TECS_OK);
    CHECK_EQ(tecs_archetype_chunk_count(a), 10);
    size_t per_chunk = (tecs_world_memory(w) - empty) / 10;
    int alive = N;
    for (int i = N - 1; i >= 0; i--) {
        if (i % 3 == 0)
            CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);   /* moves it to {pos} */
        else
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        alive--;
        int32_t used = (alive + 15) / 16, chunks = tecs_archetype_chunk_count(a);
        CHECK(chunks > used || (alive % 16 != 0 && chunks == used));
        CHECK(chunks <= 4 * (used + 1));
        for (int j = 0; j < alive; j++) {
            CHECK_EQ(TECS_GET(w, ids[j], pos, Position)->x, (float)j);
            CHECK_EQ(TECS_GET(w, ids[j], hp, Health)->hp, 1000 + j);
        }
        TW_CHECK(w);
    }
    CHECK_EQ(tecs_archetype_chunk_count(a), 1);
    for (int i = 0; i < N; i += 3)
        CHECK_EQ(TECS_GET(w, ids[i], pos, Position)->y, (float)-i);
    CHECK(tecs_world_memory(w) >= empty + per_chunk);
    CHECK_EQ(tecs_archetype_entity_count(one), (N + 2) / 3);
    tw_free(w);
}

typedef struct Triple { float a, b, c; } Triple;

/* Sum of Triple.a over the query's rows, counting them. */
static double sum_triples(tecs_query_t *q, int *rows)
{
    double s = 0;
    *rows = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Triple *t = TECS_FIELD(&it, Triple, 0);
        for (int i = 0; i < it.count; i++)
            s += t[i].a;
        *rows += it.count;
    }
    return s;
}

TEST(archetype_values_survive_chunk_table_growth)
{
    /* Entities added one by one to two archetypes with columns of three
    ** sizes: the table of chunks (and of their column pointers) grows many
    ** times, and shrinks as rows leave; every value stays where get and the
    ** query read it. */
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t tri = TECS_COMPONENT(w, Triple), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = TECS_QUERY(w, { .comp = tri });
    enum { N = 600 };
    tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], tri, Triple, { (float)i, (float)(2 * i), (float)(3 * i) });
        TECS_SET(w, ids[i], hp, Health, { i });
        if (i % 2)
            TECS_SET(w, ids[i], pos, Position, { (float)-i, 0 });
    }
    int rows;
    CHECK_EQ(sum_triples(q, &rows), (double)N * (N - 1) / 2);
    CHECK_EQ(rows, N);
    TW_CHECK(w);
    double want = (double)N * (N - 1) / 2;
    for (int i = 0; i < N; i += 3) {        /* rows leave both archetypes */
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        want -= i;
    }
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0)
            continue;
        const Triple *t = TECS_GET(w, ids[i], tri, Triple);
        CHECK(t && t->a == (float)i && t->b == (float)(2 * i) && t->c == (float)(3 * i));
        CHECK_EQ(TECS_GET(w, ids[i], hp, Health)->hp, i);
        CHECK(i % 2 == 0 || TECS_GET(w, ids[i], pos, Position)->x == (float)-i);
    }
    CHECK_EQ(sum_triples(q, &rows), want);
    CHECK_EQ(rows, N - (N + 2) / 3);
    TW_CHECK(w);
    tw_free(w);
}

TEST(archetype_entity_limit)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = tw_alloc_fn, .alloc_ud = &al, .max_entities = 10 });
    tecs_archetype_t *root = tecs_archetype_get(w, 0, NULL);
    tecs_entity_t ids[10];
    CHECK_ERR(tecs_new_bulk(w, root, 11, ids, 0, NULL), TECS_ELIMIT);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_ERR(tecs_new_bulk(w, root, 8, ids, 0, NULL), TECS_OK);
    CHECK(tecs_delayed_new(w, root, 0, NULL) != 0);      /* pending ones count too */
    CHECK(tecs_new(w) != 0);
    CHECK_EQ(tecs_new(w), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    CHECK_EQ(tecs_new_in(w, root), 0);
    CHECK_EQ(tecs_delayed_new(w, root, 0, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    CHECK_EQ(tecs_world_entity_count(w), 9);
    CHECK_ERR(tecs_destroy(w, ids[0]), TECS_OK);
    CHECK(tecs_new(w) != 0);
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    tecs_world_free(w);
    CHECK_EQ(al.blocks, 0);
}

TEST(archetype_count_limit)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = tw_alloc_fn, .alloc_ud = &al, .max_archetypes = 3 });
    tecs_comp_t a = TECS_COMPONENT(w, Position);
    tecs_comp_t b = TECS_COMPONENT(w, Velocity);
    CHECK(tecs_archetype_get(w, 1, &a) != NULL);
    CHECK(tecs_archetype_get(w, 1, &b) != NULL);
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ a, b }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, a), TECS_OK);           /* existing archetype: fine */
    CHECK_ERR(tecs_add(w, e, b), TECS_ELIMIT);       /* would need a fourth */
    CHECK(tecs_has(w, e, a) && !tecs_has(w, e, b));
    CHECK_EQ(tecs_world_archetype_count(w), 3);
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    tecs_world_free(w);
    CHECK_EQ(al.blocks, 0);
}

TEST(archetype_component_limit)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t ids[TECS_MAX_ARCH_COMPONENTS + 1];
    for (int i = 0; i <= TECS_MAX_ARCH_COMPONENTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        ids[i] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name,
                                                             .size = (size_t)(i % 3) * 4 });
    }
    CHECK(tecs_archetype_get(w, TECS_MAX_ARCH_COMPONENTS + 1, ids) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    tecs_archetype_t *full = tecs_archetype_get(w, TECS_MAX_ARCH_COMPONENTS, ids);
    CHECK(full != NULL);
    tecs_entity_t e = tecs_new_in(w, full);
    CHECK(e != 0);
    CHECK_ERR(tecs_add(w, e, ids[TECS_MAX_ARCH_COMPONENTS]), TECS_ELIMIT);
    CHECK_ERR(tecs_set(w, e, ids[TECS_MAX_ARCH_COMPONENTS], &(int64_t){ 1 }), TECS_ELIMIT);
    CHECK(tecs_entity_archetype(w, e) == full);
    CHECK_ERR(tecs_remove(w, e, ids[5]), TECS_OK);
    CHECK_ERR(tecs_add(w, e, ids[TECS_MAX_ARCH_COMPONENTS]), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

TEST(archetype_components_of_null)
{
    const tecs_comp_t *ids = NULL;
    CHECK_EQ(tecs_archetype_components(NULL, &ids), 0);
    tecs_world_t *w = tw_new();
    CHECK_EQ(tecs_archetype_components(tecs_archetype_get(w, 0, NULL), &ids), 0);
    CHECK(tecs_entity_archetype(w, 5) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    tw_free(w);
}

TEST(archetype_chunk_too_large_is_elimit)
{
    tecs_world_t *w = tw_new_ex(NULL, 65536);
    tecs_comp_t big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Big", .size = TECS_MAX_COMPONENT_SIZE });
    CHECK(big != 0);
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_archetype_get(w, 1, &big) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, big), TECS_ELIMIT);
    CHECK(!tecs_has(w, e, big));
    CHECK_EQ(tecs_world_archetype_count(w), 1);
    CHECK(tecs_world_memory(w) >= mem);
    TW_CHECK(w);
    tw_free(w);
}

/* tecs_set, tecs_add, tecs_remove and tecs_destroy with nothing listening
** (no hooks, observers or indexes) free the chunks they empty, as they do
** when something listens, and keep every value. */
TEST(archetype_moves_free_emptied_chunks)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *p = tecs_archetype_get(w, 1, &pos);
    tecs_archetype_t *pv = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    enum { N = 160 };
    tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, (float)-i }), TECS_OK);
    }
    check_chunk_rule(p, 16, true);
    for (int i = 0; i < N; i++)                    /* {pos} empties from the front */
        CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { (float)i, 1 }), TECS_OK);
    CHECK_EQ(tecs_archetype_entity_count(p), 0);
    CHECK_EQ(tecs_archetype_chunk_count(p), 1);
    for (int i = 0; i < N; i++)
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
    CHECK_EQ(tecs_archetype_chunk_count(pv), 1);
    for (int i = N - 1; i >= 0; i--)
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    CHECK_EQ(tecs_archetype_entity_count(pv), N);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->y, (float)-i);
        CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->x, (float)i);
        CHECK(!tecs_has(w, e[i], hp));
    }
    TW_CHECK(w);
    for (int i = 0; i < N; i += 2)
        CHECK_ERR(tecs_destroy(w, e[i]), TECS_OK);
    check_chunk_rule(pv, 16, false);               /* 80 rows: 5 used */
    for (int i = 1; i < N; i += 2)
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, (float)i);
    TW_CHECK(w);
    tw_free(w);
}
