#include "test.h"

TEST(smoke_create_move_iterate)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    CHECK(pos && vel);
    tecs_entity_t e[100];
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(w);
        CHECK(e[i] != 0);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, {(float)i, 0}), TECS_OK);
        if (i % 2)
            CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, {1, 2}), TECS_OK);
    }
    TW_CHECK(w);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = vel, .access = TECS_READ});
    CHECK(q);
    CHECK_EQ(tecs_query_count(q), 50);
    int n = 0;
    tecs_iter_t it = tecs_query_iter(q);
    while (tecs_iter_next(&it)) {
        Position *p = TECS_FIELD(&it, Position, 0);
        Velocity *v = TECS_FIELD(&it, Velocity, 1);
        for (int i = 0; i < it.count; i++) {
            p[i].x += v[i].x;
            n++;
        }
    }
    CHECK_EQ(n, 50);
    CHECK_EQ(TECS_GET(w, e[1], pos, Position)->x, 2);
    CHECK_EQ(TECS_GET(w, e[2], pos, Position)->x, 2);
    for (int i = 0; i < 100; i += 3)
        CHECK_ERR(tecs_destroy(w, e[i]), TECS_OK);
    TW_CHECK(w);
    CHECK_EQ(tecs_world_entity_count(w), 66);
    tw_free(w);
}
