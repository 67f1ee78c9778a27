/* Queries with sparse terms: every term kind, both ways of walking,
** membership events, caches, where, parallel parts. */
#include "test.h"
#include "query_oracle.h"

static tecs_comp_t sparse(tecs_world_t *w, const char *name, size_t size)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = size, .align = size ? 4 : 0, .storage = TECS_STORAGE_SPARSE });
}

/* Sparse terms of every kind, with table and toggle terms, against the
** oracle; with many members (the rows are walked) and with few (the
** members are). */
static void sparse_terms(int32_t rows_per_chunk, int n, int share)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, rows_per_chunk);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Health",
        .size = sizeof(Health), .align = 4, .enableable = true });
    tecs_comp_t sv = sparse(w, "SVel", sizeof(Velocity));
    tecs_comp_t st = sparse(w, "Stunned", 0);
    tecs_comp_t tag = TECS_TAG(w, Tag);
    tecs_entity_t *e = malloc((size_t)n * sizeof *e);
    uint64_t rng = 11;
    for (int i = 0; i < n; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        if (tw_rand(&rng) % 2) TECS_SET(w, e[i], hp, Health, { i });
        if (tw_rand(&rng) % 3 == 0) tecs_add(w, e[i], tag);
        if ((int)(tw_rand(&rng) % 100) < share) TECS_SET(w, e[i], sv, Velocity, { 1, 2 });
        if ((int)(tw_rand(&rng) % 100) < share) tecs_add(w, e[i], st);
        if (tw_rand(&rng) % 4 == 0) tecs_enable(w, e[i], hp, false);
    }
    const tecs_term_t sets[][4] = {
        { { .comp = pos }, { .comp = sv } },
        { { .comp = pos }, { .comp = st, .access = TECS_FILTER } },
        { { .comp = pos }, { .comp = st, .oper = TECS_NONE } },
        { { .comp = pos }, { .comp = sv, .oper = TECS_OPTIONAL, .access = TECS_READ } },
        { { .comp = pos }, { .comp = sv, .oper = TECS_ANY }, { .comp = tag, .oper = TECS_ANY } },
        { { .comp = sv }, { .comp = hp }, { .comp = st, .oper = TECS_NONE } },
        { { .comp = st }, { .comp = sv, .oper = TECS_OPTIONAL }, { .comp = tag } },
        { { .comp = sv }, { .comp = st } },
    };
    const int nterms[] = { 2, 2, 2, 2, 3, 3, 3, 2 };
    enum { NQ = sizeof nterms / sizeof nterms[0] };
    for (int k = 0; k < NQ; k++) {
        tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = sets[k], .term_count = nterms[k] });
        CHECK(q != NULL);
        int32_t fwd = oracle_walk(w, q, sets[k], nterms[k], e, n, 0);
        int32_t rev = oracle_walk(w, q, sets[k], nterms[k], e, n, true);
        CHECK_EQ(fwd, rev);
        CHECK_EQ(tecs_query_count(q), fwd);
        CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 0), fwd);
        tecs_query_free(q);
    }
    free(e);
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_query_terms_of_every_kind)
{
    sparse_terms(64, 1200, 50);         /* many members: the rows are walked */
    sparse_terms(1024, 3000, 5);        /* few: the members are */
}

/* A write through a sparse write term lands in the set, and an index on
** the sparse field hears of it when the step is left. */
TEST(sparse_query_writes_through_fields)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sv = sparse(w, "SVel", sizeof(Velocity));
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = sv,
        .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT, .offset = offsetof(Velocity, x) });
    CHECK(x != NULL);
    tecs_entity_t e[50];
    for (int i = 0; i < 50; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        if (i % 2)
            TECS_SET(w, e[i], sv, Velocity, { 0, 0 });
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ }, { .comp = sv });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        CHECK_EQ(it.count, 1);                  /* a sparse value: a row a step */
        const Position *p = TECS_FIELD(&it, Position, 0);
        Velocity *v = TECS_FIELD(&it, Velocity, 1);
        v->x = p->x * 10;
        rows++;
    }
    CHECK_EQ(rows, 25);
    for (int i = 1; i < 50; i += 2)
        CHECK_EQ(TECS_GET(w, e[i], sv, Velocity)->x, (float)i * 10);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK(tecs_filter_cmp(f, x, TECS_GE, tecs_key_real(200)) >= 0);
    tecs_entity_t out[50];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 50), 15);      /* x = 210 .. 490 */
    tecs_filter_free(f);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct mlog {
    int enter, leave;
    tecs_entity_t last;
} mlog;

static void on_member(const tecs_event_t *ev)
{
    mlog *l = ev->ctx;
    if (ev->kind == TECS_ON_ENTER)
        l->enter++;
    else
        l->leave++;
    l->last = ev->entity;
}

static void cache_in(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((mlog *)ctx)->enter++;
}

static void cache_out(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((mlog *)ctx)->leave++;
}

/* Adding and removing a sparse component moves no row, yet membership
** observers and caches of its terms hear of it. */
TEST(sparse_query_membership_events)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t st = sparse(w, "Stunned", 0);
    const tecs_term_t terms[] = { { .comp = pos }, { .comp = st } };
    mlog obs = { 0 }, cache = { 0 };
    for (int k = 0; k < 2; k++)
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
              .event = k ? TECS_ON_LEAVE : TECS_ON_ENTER, .terms = terms, .term_count = 2,
              .callback = on_member, .ctx = &obs }) != 0);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = terms, .term_count = 2 });
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q,
        .on_enter = cache_in, .on_leave = cache_out, .ctx = &cache });
    CHECK(c != NULL);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 0, 0 });
    CHECK_EQ(obs.enter, 0);
    tecs_add(w, e, st);                         /* ENTER */
    CHECK_EQ(obs.enter, 1);
    CHECK_EQ(cache.enter, 1);
    CHECK_EQ(tecs_cache_count(c), 1);
    tecs_remove(w, e, pos);                     /* LEAVE through the move */
    CHECK_EQ(obs.leave, 1);
    CHECK_EQ(cache.leave, 1);
    tecs_add(w, e, pos);                        /* ENTER through the move */
    CHECK_EQ(obs.enter, 2);
    tecs_remove(w, e, st);                      /* LEAVE, no move */
    CHECK_EQ(obs.leave, 2);
    CHECK_EQ(cache.leave, 2);
    CHECK_EQ(tecs_cache_count(c), 0);
    tecs_add(w, e, st);
    CHECK_EQ(obs.enter, 3);
    tecs_destroy(w, e);                         /* LEAVE once */
    CHECK_EQ(obs.leave, 3);
    CHECK_EQ(cache.leave, 3);
    CHECK_EQ(tecs_cache_count(c), 0);
    tecs_entity_t f = tecs_new(w);              /* queued: events at the end */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    TECS_SET(w, f, pos, Position, { 0, 0 });
    tecs_add(w, f, st);
    CHECK_EQ(obs.enter, 3);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(obs.enter, 4);
    CHECK_EQ(tecs_cache_count(c), 1);
    tecs_cache_free(c);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct par_sum {
    tecs_comp_t sv;
    int32_t rows[TECS_MAX_THREADS];
} par_sum;

static void par_rows(tecs_iter_t *it)
{
    par_sum *p = it->ctx;
    Velocity *v = TECS_FIELD(it, Velocity, 1);
    for (int32_t r = 0; r < it->count; r++)
        v[r].y += 1;
    p->rows[it->worker] += it->count;
}

/* A parallel system over a sparse term: its parts split the rows that
** have it. */
TEST(parallel_sparse_term)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sv = sparse(w, "SVel", sizeof(Velocity));
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_entity_t e[2000];
    for (int i = 0; i < 2000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { 0, 0 });
        if (i % 2)
            TECS_SET(w, e[i], sv, Velocity, { 0, 0 });
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ }, { .comp = sv });
    par_sum p = { .sv = sv };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "up", .query = q, .run = par_rows,
          .ctx = &p, .parallel = true, .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(p.rows[0] + p.rows[1], 1000);
    CHECK(p.rows[0] > 0 && p.rows[1] > 0);
    for (int i = 1; i < 2000; i += 2)
        CHECK_EQ(TECS_GET(w, e[i], sv, Velocity)->y, 1);
    TW_CHECK(w);
    tw_free(w);
}
