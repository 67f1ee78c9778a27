/* Object lifetimes: copied iterators, frees refused while an object is
** used, filters freed while iterated. */
#include "test.h"

/* A new entity with component c (default-constructed). */
static tecs_entity_t new_with(tecs_world_t *w, tecs_comp_t c)
{
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, c), TECS_OK);
    return e;
}

/* ---- copied iterators -------------------------------------------------- */

/* The defect: ending both copies of an iterator drove the defer depth
** negative, so the next iteration was not deferred and handed out rows
** of destroyed entities. */
TEST(lifetime_iterator_copies_end_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++)
        e[i] = new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_iter_t it = tecs_query_iter(q);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&copy));
    CHECK_EQ(tecs_world_check(w), TECS_EBUSY);  /* one open */
    CHECK(strstr(tecs_last_error_msg(w), "1 iteration") != NULL);
    tecs_iter_fini(&copy);
    CHECK(!tecs_is_deferred(w));
    CHECK(!tecs_iter_next(&it));                /* the other copy sees it ended */
    tecs_iter_fini(&it);                        /* harmless on an ended copy */
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);                                /* no end was doubled */
    it = tecs_query_iter(q);
    copy = it;
    tecs_iter_fini(&it);
    tecs_iter_fini(&copy);                      /* ended twice */
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_check(w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "ended twice") != NULL);
    TW_CHECK(w);                                /* reported once */
    /* The next iteration is deferred: a destroy waits for its end. */
    it = tecs_query_iter(q);
    CHECK(tecs_is_deferred(w));
    int32_t rows = 0;
    while (tecs_iter_next(&it)) {
        for (int32_t r = 0; r < it.count; r++, rows++) {
            CHECK(tecs_is_alive(w, it.entities[r]));
            CHECK_ERR(tecs_destroy(w, e[(r + 1) % 3]), TECS_OK);
        }
    }
    CHECK_EQ(rows, 3);
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* A filtered iteration ended by a copy frees its busy mark once: the
** filter can be iterated again, the index freed. */
TEST(lifetime_where_iterator_copy_ends_it)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    for (int i = 0; i < 8; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i });
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_where(f, x, TECS_GE, tecs_key_int(4));
    tecs_iter_t it = tecs_query_where(q, f);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&copy);
    CHECK(!tecs_iter_next(&it));
    CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0), 4);
    TW_CHECK(w);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

typedef struct nested_ctx {
    tecs_query_t *inner;
    tecs_comp_t pos;
    int32_t rows;
} nested_ctx;

/* Inside the system's own iteration: iterate another query, end it through
** a copy (the original is dropped), and destroy what it hands out. */
static void nested_run(tecs_iter_t *it)
{
    nested_ctx *n = it->ctx;
    tecs_iter_t inner = tecs_query_iter(n->inner);
    tecs_iter_t copy = inner;
    CHECK(tecs_iter_next(&copy));
    n->rows += copy.count;
    CHECK_ERR(tecs_destroy(it->world, copy.entities[0]), TECS_OK);
    tecs_iter_fini(&copy);
    CHECK(!tecs_iter_next(&inner));
    CHECK(tecs_is_deferred(it->world));         /* the system's still open */
    tecs_iter_t own = *it;                      /* and the system's own copy */
    tecs_iter_fini(&own);
}

TEST(lifetime_nested_iteration_ended_by_a_copy_leaves_the_world_consistent)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 4; i++)
        new_with(w, pos);
    new_with(w, vel);
    nested_ctx n = { .inner = TECS_QUERY(w, { .comp = pos }), .pos = pos };
    tecs_query_t *outer = TECS_QUERY(w, { .comp = vel });
    CHECK(tecs_system(w, &(tecs_system_desc_t){ .name = "nested", .query = outer,
                                                .run = nested_run, .ctx = &n }));
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(n.rows, 4);
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_entity_count(w), 4);    /* the destroy was applied */
    TW_CHECK(w);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 3);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- frees refused while used ------------------------------------------ */

static void noop_run(tecs_iter_t *it)
{
    (void)it;
}

/* The defect: freeing a query a system or a cache used left them with a
** dangling query. */
TEST(lifetime_query_free_refused_while_used)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_system_t s = tecs_system(w, &(tecs_system_desc_t){ .name = "s", .query = q,
                                                            .run = noop_run });
    CHECK(s != 0);
    size_t mem = tecs_world_memory(w);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);  /* the system still runs */
    CHECK_ERR(tecs_system_remove(w, s), TECS_OK);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK(c != NULL);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    CHECK_EQ(tecs_cache_count(c), 1);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    tecs_iter_t it = tecs_query_iter(q);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    tecs_iter_fini(&it);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_ERR(tecs_query_free(NULL), TECS_OK);
    tw_free(w);
}

TEST(lifetime_index_free_refused_while_a_where_is_open)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    for (int i = 0; i < 4; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i });
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    tecs_index_t *y = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_where(f, x, TECS_EQ, tecs_key_int(2));
    tecs_iter_t it = tecs_query_where(q, f);
    CHECK_ERR(tecs_index_free(x), TECS_EBUSY);
    CHECK(strstr(tecs_last_error_msg(w), "iteration") != NULL);
    CHECK_ERR(tecs_index_free(y), TECS_OK);     /* not named by the filter */
    CHECK(tecs_iter_next(&it));
    CHECK_EQ(it.count, 1);
    CHECK_EQ(TECS_FIELD(&it, Health, 0)->hp, 2);
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

TEST(lifetime_cache_free_refused_while_iterated)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    tecs_iter_t it = tecs_cache_iter(c);
    tecs_iter_t copy = it;
    CHECK_ERR(tecs_cache_free(c), TECS_EBUSY);
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&copy);                      /* a copy ends it */
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    CHECK_ERR(tecs_cache_free(NULL), TECS_OK);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* ---- filters freed while iterated -------------------------------------- */

/* The defect: a filter freed while its iteration was open was kept until
** the world was freed (memory grew every frame). It is freed when the
** iteration ends; the iteration goes on to its end. */
TEST(lifetime_filter_freed_while_iterated_goes_when_the_iteration_ends)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    for (int i = 0; i < 8; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i });
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    size_t mem = 0;
    for (int frame = 0; frame < 50; frame++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_where(f, x, TECS_LT, tecs_key_int(3));
        tecs_iter_t it = tecs_query_where(q, f);
        tecs_filter_free(f);                    /* while its iteration is open */
        int32_t rows = 0;
        while (tecs_iter_next(&it))
            rows += it.count;
        CHECK_EQ(rows, 3);
        if (frame == 0)
            mem = tecs_world_memory(w);         /* scratch made by the first */
        CHECK_EQ(tecs_world_memory(w), mem);
    }
    /* Ended early, through a copy. */
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_where(f, x, TECS_GE, tecs_key_int(0));
    tecs_iter_t it = tecs_query_where(q, f);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&it));
    tecs_filter_free(f);
    CHECK(tecs_world_memory(w) > mem);
    tecs_iter_fini(&copy);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK(!tecs_iter_next(&it));
    TW_CHECK(w);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}
