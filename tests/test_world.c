/* World: creation options, allocator hooks, independence, teardown, errors. */
#include "hooks.h"

TEST(world_new_defaults)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL);
    CHECK_EQ(tecs_world_rows_per_chunk(w), 1024);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_EQ(tecs_world_component_count(w), 0);
    CHECK_EQ(tecs_world_archetype_count(w), 1);   /* the empty archetype */
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(tecs_world_memory(w) > 0);
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    tecs_world_free(w);
    tecs_world_free(NULL);                         /* harmless */
}

/* The library, the header and the build agree on the version: CMake reads
** its version (and so the soname and the packages') from the header. */
TEST(world_version)
{
    CHECK_EQ(tecs_version(), TECS_VERSION);
    CHECK_EQ(TECS_VERSION, TECS_VERSION_MAJOR * 10000 + TECS_VERSION_MINOR * 100 +
                           TECS_VERSION_PATCH);
    char parts[32];
    snprintf(parts, sizeof parts, "%d.%d.%d", TECS_VERSION_MAJOR, TECS_VERSION_MINOR,
             TECS_VERSION_PATCH);
    CHECK(strcmp(TECS_VERSION_STRING, parts) == 0);
    CHECK(strcmp(TECS_PROJECT_VERSION, parts) == 0);
}

TEST(world_new_ex_rows_per_chunk)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .rows_per_chunk = 16 });
    CHECK_EQ(tecs_world_rows_per_chunk(w), 16);
    tecs_world_free(w);
    w = tecs_world_new_ex(&(tecs_world_desc_t){ .rows_per_chunk = 65536 });
    CHECK_EQ(tecs_world_rows_per_chunk(w), 65536);
    tecs_world_free(w);
    w = tecs_world_new_ex(NULL);
    CHECK_EQ(tecs_world_rows_per_chunk(w), 1024);
    tecs_world_free(w);
}

TEST(world_new_ex_bad_desc_is_null)
{
    int32_t bad_rows[] = { 1, 8, 15, 17, 100, 1000, 65537, 131072, -16 };
    tw_alloc a = { 0 };
    for (size_t i = 0; i < sizeof bad_rows / sizeof bad_rows[0]; i++) {
        tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
            .alloc = tw_alloc_fn, .alloc_ud = &a, .rows_per_chunk = bad_rows[i] });
        CHECK(w == NULL);
    }
    CHECK(tecs_world_new_ex(&(tecs_world_desc_t){ .max_entities = -1 }) == NULL);
    CHECK(tecs_world_new_ex(&(tecs_world_desc_t){ .max_archetypes = -1 }) == NULL);
    CHECK(tecs_world_new_ex(&(tecs_world_desc_t){ .max_archetypes = TECS_MAX_ARCHETYPES + 1 }) == NULL);
    CHECK_EQ(a.blocks, 0);
    CHECK_EQ(a.calls, 0);                          /* rejected before allocating */
}

TEST(world_new_out_of_memory_is_null)
{
    for (long k = 1;; k++) {
        tw_alloc a = { .fail_at = k };
        tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
            .alloc = tw_alloc_fn, .alloc_ud = &a });
        if (w != NULL) {
            CHECK_EQ(a.failures, 0);
            tecs_world_free(w);
            CHECK_EQ(a.blocks, 0);
            break;
        }
        CHECK_EQ(a.failures, 1);
        CHECK_EQ(a.blocks, 0);
        CHECK(k < 100);
    }
}

/* Each block the hook hands out is taken back by it, and the world's own
** byte count agrees with the hook's. */
TEST(world_allocator_sees_every_block)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);
    CHECK(a.blocks > 0);
    CHECK_EQ(tecs_world_memory(w), a.bytes);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *arch = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    for (int i = 0; i < 1000; i++)                 /* groups of 1, 1, 2, 4 .. 32 chunks */
        CHECK(tecs_new_in(w, arch) != 0);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK(q != NULL);
    tecs_entity_t e = tecs_delayed_new(w, arch, 0, NULL);
    CHECK(e != 0);
    CHECK_EQ(tecs_world_memory(w), a.bytes);
    CHECK(tecs_archetype_chunk_count(arch) >= 63);
    CHECK(a.blocks > 7);                           /* 7 groups of chunks at least */
    tw_free(w);                                    /* checks a.blocks == 0 */
}

TEST(world_two_worlds_are_independent)
{
    tecs_world_t *w1 = tw_new(), *w2 = tw_new();
    tecs_comp_t p1 = TECS_COMPONENT(w1, Position);
    tecs_comp_t h2 = TECS_COMPONENT(w2, Health);
    tecs_comp_t p2 = TECS_COMPONENT(w2, Position);
    CHECK_EQ(p1, 1);
    CHECK_EQ(h2, 1);                               /* ids are per world */
    CHECK_EQ(tecs_component_lookup(w1, "Health"), 0);
    tecs_clear_error(w1);
    tecs_entity_t a = tecs_new(w1);
    tecs_entity_t b = tecs_new(w2);
    CHECK_EQ(a, b);                                /* same first id in each */
    CHECK_ERR(TECS_SET(w1, a, p1, Position, { 1, 2 }), TECS_OK);
    CHECK(!tecs_has(w2, b, p2));
    CHECK_ERR(tecs_destroy(w2, b), TECS_OK);
    CHECK(tecs_is_alive(w1, a));
    CHECK_EQ(tecs_world_entity_count(w1), 1);
    CHECK_EQ(tecs_world_entity_count(w2), 0);
    CHECK_EQ(tecs_world_component_count(w2), 2);
    CHECK_EQ(tecs_last_error(w1), TECS_OK);
    CHECK_ERR(tecs_destroy(w2, b), TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w1), TECS_OK);       /* errors are per world */
    TW_CHECK(w1);
    TW_CHECK(w2);
    tw_free(w1);
    tw_free(w2);
}

/* world_free destroys every live value, in every archetype and chunk, and
** the values of queued changes. */
TEST(world_free_runs_every_destructor)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a1 = tecs_archetype_get(w, 1, &o);
    tecs_archetype_t *a2 = tecs_archetype_get(w, 2, (tecs_comp_t[]){ o, pos });
    CHECK_ERR(tecs_new_bulk(w, a1, 100, NULL, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_new_bulk(w, a2, 37, NULL, 0, NULL), TECS_OK);
    Obj v = obj(5);
    CHECK(tecs_delayed_new(w, a1, 1, &(tecs_value_t){ o, &v }) != 0);
    CHECK_EQ(hooks_live(&h), 138);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.dtor, h.ctor);
    CHECK_EQ(h.bad, 0);
}

TEST(world_error_names_and_messages)
{
    const char *names[] = { "TECS_OK", "TECS_EINVAL", "TECS_ENOMEM", "TECS_EDEAD",
                            "TECS_ENOCOMP", "TECS_EEXIST", "TECS_ENOENT", "TECS_ELIMIT",
                            "TECS_EWORLD", "TECS_EBUSY", "TECS_ECORRUPT", "TECS_EACCESS",
                            "TECS_ETHREAD", "TECS_EFORMAT", "TECS_ECYCLE" };
    CHECK_EQ(sizeof names / sizeof names[0], TECS_ERR_COUNT);
    for (int e = 0; e < TECS_ERR_COUNT; e++) {
        CHECK(strcmp(tecs_err_name((tecs_err_t)e), names[e]) == 0);
        const char *msg = tecs_strerror((tecs_err_t)e);
        CHECK(msg != NULL && msg[0] != '\0');
        for (int f = 0; f < e; f++)
            CHECK(strcmp(msg, tecs_strerror((tecs_err_t)f)) != 0);
    }
    CHECK(tecs_strerror(TECS_ERR_COUNT) != NULL);
    CHECK(tecs_strerror((tecs_err_t)-1) != NULL);
    CHECK(tecs_err_name((tecs_err_t)999) != NULL);
}

TEST(world_last_error_is_the_latest_calls)
{
    tecs_world_t *w = tw_new();
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_ERR(tecs_destroy(w, 12345), TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    CHECK(strstr(tecs_last_error_msg(w), "alive") != NULL);
    CHECK(tecs_new(w) != 0);                       /* success clears it */
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_EQ(tecs_component_lookup(w, "Nope"), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK(strstr(tecs_last_error_msg(w), "Nope") != NULL);
    tecs_clear_error(w);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(strcmp(tecs_last_error_msg(w), tecs_strerror(TECS_OK)) == 0);
    tw_free(w);
}

TEST(world_null_world_is_harmless)
{
    CHECK_EQ(tecs_last_error(NULL), TECS_EINVAL);
    CHECK(tecs_last_error_msg(NULL) != NULL);
    tecs_clear_error(NULL);
    CHECK_EQ(tecs_world_entity_count(NULL), 0);
    CHECK_EQ(tecs_world_memory(NULL), 0);
    CHECK_EQ(tecs_world_check(NULL), TECS_EINVAL);
    CHECK_EQ(tecs_new(NULL), 0);
    CHECK_ERR(tecs_destroy(NULL, 1), TECS_EINVAL);
    CHECK(!tecs_is_alive(NULL, 1));
    CHECK(tecs_archetype_get(NULL, 0, NULL) == NULL);
    CHECK(tecs_query_new(NULL, NULL) == NULL);
    CHECK_EQ(tecs_component_new(NULL, NULL), 0);
    CHECK(!tecs_is_deferred(NULL));
}

/* tecs_world_archetype hands out every archetype in creation order, the
** empty one first, and NULL outside 0..count-1. */
TEST(world_archetype_enumerates_in_creation_order)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t a = tecs_component_new(w, &(tecs_component_desc_t){ .name = "A", .size = 4 });
    tecs_comp_t b = tecs_component_new(w, &(tecs_component_desc_t){ .name = "B", .size = 8 });
    CHECK(a && b);
    tecs_archetype_t *ab = tecs_archetype_get(w, 2, (tecs_comp_t[]){ a, b });
    tecs_archetype_t *only_b = tecs_archetype_get(w, 1, (tecs_comp_t[]){ b });
    CHECK(ab && only_b);
    int32_t n = tecs_world_archetype_count(w);
    CHECK(n >= 3);
    CHECK(tecs_world_archetype(w, 0) == tecs_archetype_get(w, 0, NULL));
    int32_t at_ab = -1, at_b = -1;
    for (int32_t i = 0; i < n; i++) {
        CHECK(tecs_world_archetype(w, i) != NULL);
        at_ab = tecs_world_archetype(w, i) == ab ? i : at_ab;
        at_b = tecs_world_archetype(w, i) == only_b ? i : at_b;
    }
    CHECK(at_ab > 0 && at_b > at_ab);
    CHECK(tecs_world_archetype(w, n) == NULL);
    CHECK(tecs_world_archetype(w, -1) == NULL);
    CHECK(tecs_world_archetype(w, INT32_MAX) == NULL);
    CHECK(tecs_world_archetype(NULL, 0) == NULL);
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    tecs_world_free(w);
}
