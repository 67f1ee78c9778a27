/* Object lifetimes: copied iterators. */
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
    tecs_query_free(q);
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
    tecs_query_free(q);
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
