/* Cases for the paths the benchmarks lean on: new then set, moves of plain
** and hooked values, a queued new applied together with the sets and adds
** that follow it, bulk births over free and fresh slots. */
#include "test.h"

static int live_strings;

/* A hooked component: a heap-owning value, so a lost or doubled move shows
** up as a leak or a double free under the sanitizers. */
typedef struct Name { char *s; } Name;

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

static void name_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Name));
}

static void name_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    Name *v = p;
    for (int32_t i = 0; i < n; i++)
        if (v[i].s) {
            free(v[i].s);
            live_strings--;
        }
}

static void name_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    name_dtor(dst, n, ctx);
    Name *d = dst;
    const Name *s = src;
    for (int32_t i = 0; i < n; i++) {
        d[i].s = s[i].s ? dup_str(s[i].s) : NULL;
        live_strings += d[i].s != NULL;
    }
}

static tecs_comp_t name_comp(tecs_world_t *w)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Name", .size = sizeof(Name), .align = _Alignof(Name),
        .ctor = name_ctor, .dtor = name_dtor, .copy = name_copy });
}

TEST(entity_new_set_set_lands_in_full_archetype)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *pv = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, (float)-i }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { 1, 2 }), TECS_OK);
    }
    CHECK_EQ(tecs_archetype_entity_count(pv), 3000);
    CHECK_EQ(tecs_archetype_entity_count(tecs_archetype_get(w, 0, NULL)), 0);
    for (int i = 0; i < 3000; i++) {
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->y, -i);
        CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->y, 2);
    }
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_add_remove_keeps_other_values)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t name = name_comp(w);
    tecs_entity_t e[50];
    live_strings = 0;
    for (int i = 0; i < 50; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], name, Name, { "x" }), TECS_OK);
    }
    CHECK_EQ(live_strings, 50);
    for (int i = 0; i < 50; i++)
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, 0);
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
        CHECK(strcmp(TECS_GET(w, e[i], name, Name)->s, "x") == 0);
    }
    for (int i = 0; i < 50; i += 2)
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
    CHECK_EQ(live_strings, 50);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

TEST(deferred_new_then_set_is_born_with_the_values)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_comp_t name = name_comp(w);
    tecs_entity_t first = tecs_new(w);
    CHECK_ERR(TECS_SET(w, first, pos, Position, { 0, 0 }), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    live_strings = 0;
    tecs_entity_t e[10];
    tecs_iter_t it = tecs_query_iter(q);
    CHECK(tecs_iter_next(&it));
    for (int i = 0; i < 10; i++) {
        e[i] = tecs_new(w);
        CHECK(e[i] != 0);
        CHECK(!tecs_is_alive(w, e[i]));
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 1 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { 2, 3 }), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], tag), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], name, Name, { "n" }), TECS_OK);
        /* A second set of the same component still applies, in order. */
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 5 }), TECS_OK);
    }
    CHECK_EQ(tecs_world_entity_count(w), 1);
    tecs_iter_fini(&it);
    CHECK_EQ(tecs_world_entity_count(w), 11);
    for (int i = 0; i < 10; i++) {
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->y, 5);
        CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->y, 3);
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, 0);
        CHECK(tecs_has(w, e[i], tag));
        CHECK(strcmp(TECS_GET(w, e[i], name, Name)->s, "n") == 0);
    }
    CHECK_EQ(live_strings, 10);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

TEST(deferred_set_after_destroy_of_pending_leaves_it_dead)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t a = tecs_new(w);
    CHECK_ERR(TECS_SET(w, a, pos, Position, { 0, 0 }), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = tecs_query_iter(q);
    CHECK(tecs_iter_next(&it));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    /* The destroy is queued behind the birth; a set after it is dropped at
    ** the flush with the dead entity. */
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 1, 1 }), TECS_OK);
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(TECS_SET(w, f, pos, Position, { 7, 7 }), TECS_OK);
    tecs_iter_fini(&it);
    CHECK(!tecs_is_alive(w, e));
    CHECK_EQ(TECS_GET(w, f, pos, Position)->x, 7);
    CHECK_EQ(tecs_world_entity_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
}

/* Out of memory at every step of a deferred new + set: the failed call
** changes nothing, and what was queued still applies. */
TEST(deferred_new_set_out_of_memory_changes_nothing)
{
    int failed = 0;
    for (long k = 1; k < 40; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        CHECK(w != NULL);
        tecs_comp_t pos = TECS_COMPONENT(w, Position);
        tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
        tecs_entity_t a = tecs_new(w);
        CHECK_ERR(TECS_SET(w, a, pos, Position, { 0, 0 }), TECS_OK);
        tecs_query_t *q = tecs_query_all(w, 1, &pos);
        tecs_iter_t it = tecs_query_iter(q);
        CHECK(tecs_iter_next(&it));
        al.fail_at = al.calls + k;
        tecs_entity_t e = tecs_new(w);
        tecs_err_t s1 = e ? TECS_SET(w, e, pos, Position, { 3, 4 }) : TECS_ENOMEM;
        int32_t archs = tecs_world_archetype_count(w);
        tecs_err_t s2 = e ? TECS_SET(w, e, vel, Velocity, { 5, 6 }) : TECS_ENOMEM;
        failed += e == 0 || s1 != TECS_OK || s2 != TECS_OK;
        if (s2 != TECS_OK)
            CHECK_EQ(tecs_world_archetype_count(w), archs);
        al.fail_at = 0;
        tecs_iter_fini(&it);
        if (e) {
            CHECK(tecs_is_alive(w, e));
            CHECK_EQ(tecs_has(w, e, pos), s1 == TECS_OK);
            CHECK_EQ(tecs_has(w, e, vel), s2 == TECS_OK);
            if (s1 == TECS_OK)
                CHECK_EQ(TECS_GET(w, e, pos, Position)->y, 4);
            if (s2 == TECS_OK)
                CHECK_EQ(TECS_GET(w, e, vel, Velocity)->y, 6);
        }
        TW_CHECK(w);
        tw_free(w);
    }
    CHECK(failed > 0);
}

TEST(entity_new_bulk_reuses_free_slots_then_fresh_ones)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t old[10], ids[20];
    CHECK_ERR(tecs_new_bulk(w, a, 10, old, 0, NULL), TECS_OK);
    for (int i = 0; i < 10; i += 2)
        CHECK_ERR(tecs_destroy(w, old[i]), TECS_OK);
    Position p[20];
    for (int i = 0; i < 20; i++)
        p[i] = (Position){ (float)i, 0 };
    CHECK_ERR(tecs_new_bulk(w, a, 20, ids, 1, &(tecs_value_t){ pos, p }), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 25);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(TECS_ENTITY_INDEX(ids[i]), TECS_ENTITY_INDEX(old[2 * i]));
        CHECK_EQ(TECS_ENTITY_GENERATION(ids[i]), TECS_ENTITY_GENERATION(old[2 * i]) + 1);
        CHECK(!tecs_is_alive(w, old[2 * i]));
    }
    for (int i = 0; i < 20; i++) {
        CHECK(tecs_is_alive(w, ids[i]));
        CHECK_EQ(TECS_GET(w, ids[i], pos, Position)->x, i);
        for (int j = 0; j < i; j++)
            CHECK(ids[i] != ids[j]);
    }
    TW_CHECK(w);
    tw_free(w);
}

/* The quiet paths of tecs_set, tecs_add, tecs_remove and tecs_destroy free
** the chunks they empty, as the long paths do, and keep every value. */
TEST(entity_quiet_moves_free_emptied_chunks)
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
    CHECK_EQ(tecs_archetype_chunk_count(p), 10);
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
    CHECK_EQ(tecs_archetype_chunk_count(pv), 6);   /* 80 rows: 5 used, 1 spare */
    for (int i = 1; i < N; i += 2)
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, (float)i);
    TW_CHECK(w);
    tw_free(w);
}

/* The archetype of e holds exactly the n components of want (sorted). */
static bool in_archetype(tecs_world_t *w, tecs_entity_t e, int32_t n, const tecs_comp_t *want)
{
    const tecs_comp_t *have;
    int32_t k = tecs_archetype_components(tecs_entity_archetype(w, e), &have);
    return k == n && (n == 0 || memcmp(have, want, (size_t)n * sizeof *want) == 0);
}

/* n entities: the odd ones with Position (i, 0), the even ones with
** Velocity (0, i). */
static void new_alternating(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel,
                            tecs_entity_t *e, int n)
{
    for (int i = 0; i < n; i++) {
        e[i] = tecs_new(w);
        if (i % 2)
            CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 0 }), TECS_OK);
        else
            CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { 0, (float)i }), TECS_OK);
    }
}

TEST(entity_moves_from_alternating_archetypes_land_right)
{
    /* Adds and removes of one component from two archetypes in turn, and a
    ** tag between them: each move must start from the entity's own
    ** archetype, whichever move of that component came before. */
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    enum { N = 50 };
    tecs_entity_t e[N];
    new_alternating(w, pos, vel, e, N);
    for (int i = 0; i < N; i++) {
        CHECK_ERR(TECS_SET(w, e[i], hp, Health, { i }), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], tag), TECS_OK);
    }
    for (int i = 0; i < N; i++) {
        const tecs_comp_t *own = i % 2 ? &pos : &vel;
        CHECK(in_archetype(w, e[i], 3, (tecs_comp_t[]){ *own, hp, tag }));
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, i);
    }
    for (int i = 0; i < N; i++)
        CHECK_ERR(tecs_remove(w, e[i], i % 3 ? hp : tag), TECS_OK);
    for (int i = 0; i < N; i++) {
        tecs_comp_t own = i % 2 ? pos : vel;
        tecs_comp_t left = i % 3 ? tag : hp;
        CHECK(in_archetype(w, e[i], 2, (tecs_comp_t[]){ own, left }));
        if (i % 2)
            CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, (float)i);
        else
            CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->y, (float)i);
        CHECK(i % 3 ? !tecs_has(w, e[i], hp) : TECS_GET(w, e[i], hp, Health)->hp == i);
    }
    CHECK_ERR(tecs_remove(w, e[1], hp), TECS_ENOENT);   /* gone already */
    TW_CHECK(w);
    tw_free(w);
}

static void count_event(const tecs_event_t *ev)
{
    ++*(int *)ev->ctx;
}

TEST(entity_moves_tell_observers_made_after_a_burst)
{
    /* A burst of plain adds and removes first, then observers: the next
    ** moves of the same kind must reach them. */
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    enum { N = 20 };
    tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 0 }), TECS_OK);
    }
    for (int i = 0; i < N / 2; i++) {
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    }
    int added = 0, removed = 0, entered = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = hp,
                                                    .callback = count_event, .ctx = &added }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = hp,
                                                    .callback = count_event, .ctx = &removed }));
    for (int i = N / 2; i < N; i++) {
        CHECK_ERR(TECS_SET(w, e[i], hp, Health, { i }), TECS_OK);
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    }
    CHECK_EQ(added, N / 2);
    CHECK_EQ(removed, N / 2);
    tecs_term_t terms[] = { { .comp = hp } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .terms = terms,
                                                    .term_count = 1, .callback = count_event,
                                                    .ctx = &entered }));
    for (int i = 0; i < N; i++)
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
    CHECK_EQ(entered, N);
    CHECK_EQ(added, N / 2 + N);
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_destroys_from_alternating_archetypes_keep_the_rest)
{
    /* Destroys from two archetypes in turn: each must free the row of the
    ** entity's own archetype, whichever archetype the destroy before it
    ** was in. */
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *p = tecs_archetype_get(w, 1, &pos);
    tecs_archetype_t *v = tecs_archetype_get(w, 1, &vel);
    enum { N = 60 };
    tecs_entity_t e[N];
    new_alternating(w, pos, vel, e, N);
    for (int i = 0; i < N; i += 3)
        CHECK_ERR(tecs_destroy(w, e[i]), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e[0]), TECS_EDEAD);
    CHECK_EQ(tecs_archetype_entity_count(p), N / 2 - N / 6);
    CHECK_EQ(tecs_archetype_entity_count(v), N / 2 - N / 6);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(tecs_is_alive(w, e[i]), i % 3 != 0);
        if (i % 3 == 0)
            continue;
        if (i % 2)
            CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, (float)i);
        else
            CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->y, (float)i);
    }
    TW_CHECK(w);
    tw_free(w);
}
