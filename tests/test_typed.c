/*
** test_typed.c — the typed macros check the C type's size: a type whose
** size is not the component's is refused before anything is read or
** written (TECS_EINVAL or NULL, a message naming both sizes), and the
** world is left as it was.
*/
#include "test.h"

#include <string.h>

typedef struct Wide { int64_t a; } Wide;            /* 8 bytes, as Position */
typedef struct Big { double v[4]; } Big;            /* 32 bytes */

/* The world's last message names both sizes. */
static bool names_sizes(tecs_world_t *w, const char *comp_size, const char *given)
{
    const char *m = tecs_last_error_msg(w);
    return m && strstr(m, comp_size) && strstr(m, given);
}

TEST(typed_set_of_the_wrong_size_is_refused_before_reading)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    /* A 1-byte value for an 8-byte component: nothing is read past it. */
    CHECK_ERR(TECS_SET(w, e, pos, char, 1), TECS_EINVAL);
    CHECK(names_sizes(w, "is 8 bytes", "given is 1"));
    CHECK(!tecs_has(w, e, pos));
    /* A larger one is refused too. */
    CHECK_ERR(TECS_SET(w, e, pos, Big, {{1, 2, 3, 4}}), TECS_EINVAL);
    CHECK(names_sizes(w, "is 8 bytes", "given is 32"));
    CHECK(!tecs_has(w, e, pos));
    /* The right size, from a brace list or from a variable. */
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);
    Position p = {3, 4};
    CHECK_ERR(TECS_SET(w, e, pos, Position, p), TECS_OK);
    CHECK(TECS_GET(w, e, pos, Position)->y == 4);
    /* A wrong size on an entity that has the component changes nothing. */
    CHECK_ERR(TECS_SET(w, e, pos, int16_t, 7), TECS_EINVAL);
    CHECK(TECS_GET(w, e, pos, Position)->x == 3);
    /* The same size of another type is the user's to choose. */
    CHECK_ERR(TECS_SET(w, e, pos, Wide, {0}), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

TEST(typed_set_of_a_scalar_component)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "hp",
                                        .size = sizeof(int32_t), .align = _Alignof(int32_t) });
    tecs_entity_t e = tecs_new(w);
    int32_t v = 41;
    CHECK_ERR(TECS_SET(w, e, hp, int32_t, v + 1), TECS_OK);
    CHECK_EQ(*TECS_GET(w, e, hp, int32_t), 42);
    CHECK_ERR(TECS_SET(w, e, hp, int64_t, 5), TECS_EINVAL);
    CHECK(names_sizes(w, "is 4 bytes", "given is 8"));
    CHECK_EQ(*TECS_GET(w, e, hp, int32_t), 42);
    tw_free(w);
}

TEST(typed_set_of_a_tag_is_refused)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, tag, char, 0), TECS_EINVAL);
    CHECK(names_sizes(w, "is 0 bytes", "given is 1"));
    CHECK(!tecs_has(w, e, tag));
    tw_free(w);
}

TEST(typed_set_keeps_the_call_errors)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(NULL, e, pos, Position, {1, 2}), TECS_EINVAL);
    /* An unknown component is reported as such, not as a size. */
    CHECK_ERR(TECS_SET(w, e, 999, char, 1), TECS_ENOCOMP);
    tecs_destroy(w, e);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_EDEAD);
    /* A wrong size on a dead entity: the size is checked first. */
    CHECK_ERR(TECS_SET(w, e, pos, char, 1), TECS_EINVAL);
    tw_free(w);
}

TEST(typed_set_inside_an_iteration_and_a_deferred_section)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    TECS_EACH(q, it, i) {
        /* Refused at once, not queued: the queue never holds the bad value. */
        CHECK_ERR(TECS_SET(w, it.entities[i], vel, char, 1), TECS_EINVAL);
        CHECK_ERR(TECS_SET(w, it.entities[i], vel, Velocity, {5, 6}), TECS_OK);
    }
    CHECK(TECS_GET(w, e, vel, Velocity)->y == 6);
    tecs_defer_begin(w);
    CHECK_ERR(TECS_SET(w, e, pos, int16_t, 1), TECS_EINVAL);
    tecs_defer_end(w);
    CHECK(TECS_GET(w, e, pos, Position)->x == 1);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

TEST(typed_get_of_the_wrong_size_is_null)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);
    CHECK(TECS_GET(w, e, pos, Big) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(names_sizes(w, "is 8 bytes", "given is 32"));
    CHECK(TECS_GET_MUT(w, e, pos, char) == NULL);
    CHECK(names_sizes(w, "TECS_GET_MUT", "given is 1"));
    CHECK(TECS_GET(w, e, pos, Position) != NULL);
    CHECK_ERR(tecs_last_error(w), TECS_OK);
    CHECK(TECS_GET_MUT(w, e, pos, Position)->x == 1);
    tw_free(w);
}

TEST(typed_lookup_of_the_wrong_size_is_null)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "sp",
        .size = sizeof(Velocity), .align = _Alignof(Velocity), .storage = TECS_STORAGE_SPARSE });
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);
    CHECK_ERR(TECS_SET(w, e, sp, Velocity, {3, 4}), TECS_OK);
    tecs_handle_t h, hs;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    CHECK_ERR(tecs_handle_init(w, sp, &hs), TECS_OK);
    CHECK(TECS_HANDLE_GET(&h, e, Position)->y == 2);
    CHECK(TECS_HANDLE_GET(&hs, e, Velocity)->y == 4);
    CHECK(TECS_HANDLE_GET(&h, e, Big) == NULL);
    CHECK(TECS_HANDLE_GET(&hs, e, char) == NULL);
    tw_free(w);
}

TEST(typed_fields_and_rows_of_the_wrong_size_are_null)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 3; i++) {
        tecs_entity_t e = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e, pos, Position, {(float)i, 0}), TECS_OK);
        CHECK_ERR(TECS_SET(w, e, vel, Velocity, {1, 1}), TECS_OK);
    }
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = vel, .access = TECS_READ});
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int steps = 0;
    while (tecs_iter_next(&it)) {
        steps++;
        CHECK(it.sizes[0] == sizeof(Position) && it.sizes[1] == sizeof(Velocity));
        CHECK(TECS_FIELD(&it, Big, 0) == NULL);
        CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
        CHECK(names_sizes(w, "is 8 bytes", "given is 32"));
        CHECK(TECS_FIELD(&it, Position, 0) != NULL);
        CHECK(TECS_FIELD(&it, const Velocity, 1) != NULL);
    }
    CHECK_EQ(steps, 1);
    int rows = 0, refused = 0;
    TECS_EACH(q, it2, i) {
        rows++;
        CHECK(TECS_ROW(it2, Position, 0, i)->x == (float)i);
        refused += TECS_ROW(it2, int16_t, 1, i) == NULL;
    }
    CHECK_EQ(rows, 3);
    CHECK_EQ(refused, 3);
    /* An archetype's iteration knows its terms' sizes too. */
    tecs_entity_t first;
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, &first, 1), 3);
    tecs_iter_t ai = TECS_ITER(w, .archetype = tecs_entity_archetype(w, first));
    while (tecs_iter_next(&ai)) {
        CHECK(TECS_FIELD(&ai, Position, 0) != NULL);
        CHECK(TECS_FIELD(&ai, Big, 1) == NULL);
        CHECK(names_sizes(w, "Velocity", "given is 32"));
    }
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

TEST(typed_resources_of_the_wrong_size)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t clock = TECS_COMPONENT(w, Wide);
    CHECK_ERR(TECS_RESOURCE_SET(w, clock, int16_t, 3), TECS_EINVAL);
    CHECK(names_sizes(w, "is 8 bytes", "given is 2"));
    CHECK(!tecs_resource_has(w, clock));
    Wide v = {42};
    CHECK_ERR(TECS_RESOURCE_SET(w, clock, Wide, v), TECS_OK);
    CHECK_ERR(TECS_RESOURCE_SET(w, clock, Big, {{0}}), TECS_EINVAL);
    CHECK_EQ(TECS_RESOURCE_GET(w, clock, Wide)->a, 42);
    CHECK_ERR(TECS_RESOURCE_SET(w, clock, Wide, {43}), TECS_OK);
    /* Reads record nothing: NULL, as for an absent resource. */
    CHECK(TECS_RESOURCE_GET(w, clock, char) == NULL);
    CHECK(TECS_RESOURCE_GET_MUT(w, clock, Big) == NULL);
    CHECK(tecs_resource_has(w, clock));
    TECS_RESOURCE_GET_MUT(w, clock, Wide)->a++;
    CHECK_EQ(TECS_RESOURCE_GET(w, clock, Wide)->a, 44);
    tw_free(w);
}
