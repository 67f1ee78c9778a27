/* Structural changes during iteration (queued, then applied with the sets
** that follow them), and the delayed new / destroy API. */
#include "hooks.h"

typedef struct fixture {
    tecs_world_t *w;
    tecs_comp_t pos, vel, hp;
    tecs_query_t *all;                          /* every entity with pos */
} fixture;

static fixture fx_new(int32_t rows)
{
    fixture f;
    f.w = tw_new_ex(NULL, rows);
    f.pos = TECS_COMPONENT(f.w, Position);
    f.vel = TECS_COMPONENT(f.w, Velocity);
    f.hp = TECS_COMPONENT(f.w, Health);
    f.all = tecs_query_all(f.w, 1, &f.pos);
    return f;
}

static tecs_entity_t fx_spawn(fixture *f, float x)
{
    tecs_entity_t e = tecs_new(f->w);
    CHECK_ERR(TECS_SET(f->w, e, f->pos, Position, { x, 0 }), TECS_OK);
    return e;
}

/* ---- changes during iteration ------------------------------------------- */

TEST(defer_changes_wait_for_the_end)
{
    fixture f = fx_new(16);
    tecs_entity_t a = fx_spawn(&f, 1), b = fx_spawn(&f, 2);
    tecs_archetype_t *pv = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    tecs_entity_t made[6] = { 0 }, bulk[3] = { 0 };
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    made[0] = tecs_new(f.w);
    made[1] = tecs_new_in(f.w, pv);
    CHECK_ERR(tecs_new_bulk(f.w, pv, 3, bulk, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, a), TECS_OK);
    CHECK_ERR(tecs_add(f.w, b, f.vel), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, b, f.pos), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, b, f.hp, Health, { 9 }), TECS_OK);
    /* Nothing happened yet, but the ids exist. */
    for (int i = 0; i < 2; i++)
        CHECK(made[i] != 0 && !tecs_is_alive(f.w, made[i]));
    for (int i = 0; i < 3; i++)
        CHECK(bulk[i] != 0 && !tecs_is_alive(f.w, bulk[i]));
    CHECK(made[0] != made[1] && bulk[0] != made[1]);
    CHECK(tecs_is_alive(f.w, a));
    CHECK(tecs_has(f.w, b, f.pos) && !tecs_has(f.w, b, f.vel) && !tecs_has(f.w, b, f.hp));
    CHECK_EQ(tecs_world_entity_count(f.w), 2);
    CHECK_EQ(tecs_archetype_entity_count(pv), 0);
    CHECK(!tecs_iter_next(&it));                  /* the end applies them */
    CHECK(!tecs_is_deferred(f.w));
    CHECK(tecs_is_alive(f.w, made[0]) && tecs_is_alive(f.w, made[1]));
    CHECK(!tecs_is_alive(f.w, a));
    CHECK(!tecs_has(f.w, b, f.pos) && tecs_has(f.w, b, f.vel));
    CHECK_EQ(TECS_GET(f.w, b, f.hp, Health)->hp, 9);
    CHECK_EQ(tecs_archetype_entity_count(pv), 4);
    CHECK_EQ(tecs_world_entity_count(f.w), 6);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(defer_changes_apply_in_call_order)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(TECS_SET(f.w, e, f.vel, Velocity, { 1, 1 }), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, e, f.vel), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, e, f.vel, Velocity, { 2, 2 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, e, f.vel, Velocity, { 3, 3 }), TECS_OK);
    CHECK_ERR(tecs_add(f.w, e, f.hp), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, e, f.hp), TECS_OK);
    /* An entity made, changed and destroyed in one batch. */
    tecs_entity_t n = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, n, f.pos, Position, { 7, 7 }), TECS_OK);
    tecs_entity_t m = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, m, f.hp, Health, { 5 }), TECS_OK);   /* queued on a pending id */
    CHECK_ERR(tecs_add(f.w, m, f.vel), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, n), TECS_OK);     /* cancels n's birth */
    tecs_iter_fini(&it);
    CHECK_EQ(TECS_GET(f.w, e, f.vel, Velocity)->x, 3);
    CHECK(!tecs_has(f.w, e, f.hp));
    CHECK(!tecs_is_alive(f.w, n));
    CHECK(tecs_is_alive(f.w, m));
    CHECK_EQ(TECS_GET(f.w, m, f.hp, Health)->hp, 5);
    CHECK(tecs_has(f.w, m, f.vel));
    CHECK_EQ(tecs_world_entity_count(f.w), 2);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(defer_set_of_existing_component_is_immediate)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    while (tecs_iter_next(&it)) {
        CHECK_ERR(TECS_SET(f.w, e, f.pos, Position, { 42, 0 }), TECS_OK);
        CHECK_EQ(TECS_FIELD(&it, Position, 0)[0].x, 42);
        TECS_GET_MUT(f.w, e, f.pos, Position)->y = 5;
        CHECK_EQ(TECS_FIELD(&it, Position, 0)[0].y, 5);
    }
    tw_free(f.w);
}

TEST(defer_destroy_twice_is_harmless)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_entity_t e = fx_spawn(&f, 1), keep = fx_spawn(&f, 2);
    CHECK_ERR(tecs_add(f.w, e, o), TECS_OK);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);
    CHECK_ERR(tecs_add(f.w, e, f.vel), TECS_OK);   /* after its destroy: dropped */
    tecs_iter_fini(&it);
    CHECK(!tecs_is_alive(f.w, e));
    CHECK(tecs_is_alive(f.w, keep));
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    CHECK_EQ(h.dtor, 1);
    tecs_entity_t again = tecs_new(f.w);            /* the slot is reused once */
    CHECK_EQ(TECS_ENTITY_INDEX(again), TECS_ENTITY_INDEX(e));
    CHECK(tecs_new(f.w) != again);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
}

/* Every entity present at the start is visited exactly once, whatever the
** loop adds, removes, creates or destroys; nothing created is visited. */
TEST(defer_iteration_neither_skips_nor_repeats)
{
    fixture f = fx_new(16);
    enum { N = 200 };
    tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = fx_spawn(&f, (float)i);
        if (i % 3 == 0)
            tecs_add(f.w, ids[i], f.hp);
    }
    static int seen[N + 400];
    memset(seen, 0, sizeof seen);
    int visits = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    while (tecs_iter_next(&it)) {
        for (int r = 0; r < it.count; r++) {
            tecs_entity_t e = it.entities[r];
            seen[TECS_ENTITY_INDEX(e)]++;
            visits++;
            int i = (int)TECS_ENTITY_INDEX(e);
            tecs_add(f.w, e, f.vel);                       /* moves it later */
            if (i % 5 == 0)
                tecs_remove(f.w, e, f.pos);                /* leaves the query */
            if (i + 1 < N && i % 7 == 0)
                tecs_destroy(f.w, ids[i + 1]);             /* one not yet visited */
            fx_spawn(&f, -1);                              /* new one with pos */
        }
    }
    CHECK_EQ(visits, N);
    for (int i = 0; i < N; i++)
        CHECK_EQ(seen[i], 1);
    int destroyed = 0;
    for (int i = 0; i + 1 < N; i++)
        destroyed += i % 7 == 0;
    CHECK_EQ(tecs_world_entity_count(f.w), 2 * N - destroyed);
    TW_CHECK(f.w);
    tw_free(f.w);
}

typedef struct init_seen { tecs_comp_t hp; int calls; bool deferred; } init_seen;

static void init_hp(tecs_init_t *init, void *ctx)
{
    init_seen *s = ctx;
    s->calls++;
    ((Health *)tecs_init_construct(init, s->hp))->hp = 77;
}

TEST(defer_new_with_and_bulk_values)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    fx_spawn(&f, 0);
    tecs_archetype_t *ah = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.hp, o });
    init_seen s = { .hp = f.hp };
    Obj vals[20];
    for (int i = 0; i < 20; i++)
        vals[i] = obj(i);
    tecs_entity_t ids[20], e;
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    e = tecs_new_with(f.w, ah, init_hp, &s);
    CHECK(e != 0 && s.calls == 0);                  /* runs at the flush */
    CHECK_ERR(tecs_new_bulk(f.w, ah, 20, ids, 1, &(tecs_value_t){ o, vals }), TECS_OK);
    for (int i = 0; i < 20; i++)
        vals[i].value = -1;                          /* copied already */
    tecs_iter_fini(&it);
    CHECK_EQ(s.calls, 1);
    CHECK_EQ(TECS_GET(f.w, e, f.hp, Health)->hp, 77);
    CHECK_EQ(TECS_GET(f.w, e, o, Obj)->value, OBJ_DEFAULT);
    for (int i = 0; i < 20; i++)
        CHECK_EQ(TECS_GET(f.w, ids[i], o, Obj)->value, i);
    CHECK_EQ(hooks_live(&h), 21);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(defer_world_freed_with_iteration_open)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_entity_t e = fx_spawn(&f, 1);
    tecs_archetype_t *ao = tecs_archetype_get(f.w, 1, &o);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_set(f.w, e, o, &(Obj){ OBJ_LIVE, 3 }), TECS_OK);
    CHECK(tecs_new_in(f.w, ao) != 0);
    Obj v[2] = { obj(1), obj(2) };
    CHECK_ERR(tecs_new_bulk(f.w, ao, 2, NULL, 1, &(tecs_value_t){ o, v }), TECS_OK);
    CHECK(tecs_delayed_new(f.w, ao, 1, &(tecs_value_t){ o, v }) != 0);
    tw_free(f.w);                                   /* leak check inside */
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

/* ---- a queued birth and the changes behind it --------------------------- */

/* A birth followed by adds and sets of the same entity in one batch lands
** with every value right, hooks balanced, whatever the order. */
TEST(defer_birth_then_sets_in_one_batch)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_comp_t tag = TECS_TAG(f.w, Tag);
    fx_spawn(&f, 0);
    tecs_archetype_t *ao = tecs_archetype_get(f.w, 1, &o);
    tecs_entity_t n[4];
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    n[0] = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, n[0], f.hp, Health, { 1 }), TECS_OK);
    CHECK_ERR(tecs_add(f.w, n[0], tag), TECS_OK);
    CHECK_ERR(tecs_set(f.w, n[0], o, &(Obj){ OBJ_LIVE, 10 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, n[0], f.pos, Position, { 2, 3 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, n[0], f.hp, Health, { 4 }), TECS_OK);       /* again */
    n[1] = tecs_new_in(f.w, ao);
    CHECK_ERR(tecs_set(f.w, n[1], o, &(Obj){ OBJ_LIVE, 20 }), TECS_OK);  /* in it already */
    CHECK_ERR(tecs_add(f.w, n[1], o), TECS_OK);                          /* conflicts: dropped */
    CHECK_ERR(tecs_add(f.w, n[1], f.vel), TECS_OK);
    n[2] = tecs_new(f.w);
    CHECK_ERR(tecs_add(f.w, n[2], f.hp), TECS_OK);
    n[3] = tecs_new(f.w);
    CHECK_ERR(tecs_set(f.w, n[2], o, &(Obj){ OBJ_LIVE, 30 }), TECS_OK);  /* after another new */
    CHECK_ERR(tecs_set(f.w, n[3], o, &(Obj){ OBJ_LIVE, 40 }), TECS_OK);
    tecs_iter_fini(&it);
    CHECK_EQ(TECS_GET(f.w, n[0], f.hp, Health)->hp, 4);
    CHECK(tecs_has(f.w, n[0], tag));
    CHECK_EQ(TECS_GET(f.w, n[0], o, Obj)->value, 10);
    CHECK_EQ(TECS_GET(f.w, n[0], f.pos, Position)->y, 3);
    CHECK_EQ(TECS_GET(f.w, n[1], o, Obj)->value, 20);
    CHECK(tecs_has(f.w, n[1], f.vel));
    CHECK_EQ(TECS_GET(f.w, n[2], f.hp, Health)->hp, 0);
    CHECK_EQ(TECS_GET(f.w, n[2], o, Obj)->value, 30);
    CHECK_EQ(TECS_GET(f.w, n[3], o, Obj)->value, 40);
    CHECK_EQ(tecs_world_entity_count(f.w), 5);
    CHECK_EQ(hooks_live(&h), 4);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

/* A set queued right behind its entity's birth joins it; whatever comes
** later for that entity in the same iteration is still applied, in order. */
TEST(defer_birth_set_then_remove_destroy_or_set_again)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    fx_spawn(&f, 0);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    tecs_entity_t removed = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, removed, f.pos, Position, { 1, 2 }), TECS_OK);
    CHECK_ERR(tecs_set(f.w, removed, o, &(Obj){ OBJ_LIVE, 5 }), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, removed, f.pos), TECS_OK);
    tecs_entity_t killed = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, killed, f.pos, Position, { 3, 4 }), TECS_OK);
    tecs_entity_t killed_obj = tecs_new(f.w);
    CHECK_ERR(tecs_set(f.w, killed_obj, o, &(Obj){ OBJ_LIVE, 6 }), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, killed), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, killed_obj), TECS_OK);
    tecs_entity_t twice = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, twice, f.pos, Position, { 5, 6 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, twice, f.pos, Position, { 7, 8 }), TECS_OK);
    tecs_entity_t twice_obj = tecs_new(f.w);
    CHECK_ERR(tecs_set(f.w, twice_obj, o, &(Obj){ OBJ_LIVE, 7 }), TECS_OK);
    CHECK_ERR(tecs_set(f.w, twice_obj, o, &(Obj){ OBJ_LIVE, 8 }), TECS_OK);
    tecs_entity_t added = tecs_new(f.w);
    CHECK_ERR(tecs_add(f.w, added, f.vel), TECS_OK);
    CHECK_ERR(tecs_add(f.w, added, f.vel), TECS_OK);            /* conflicts: dropped */
    tecs_entity_t in_pos = tecs_new_in(f.w, tecs_archetype_get(f.w, 1, &f.pos));
    CHECK_ERR(TECS_SET(f.w, in_pos, f.pos, Position, { 9, 10 }), TECS_OK);  /* has it */
    CHECK(!tecs_is_alive(f.w, removed));
    tecs_iter_fini(&it);
    CHECK(tecs_is_alive(f.w, removed) && !tecs_has(f.w, removed, f.pos));
    CHECK_EQ(TECS_GET(f.w, removed, o, Obj)->value, 5);
    CHECK(!tecs_is_alive(f.w, killed) && !tecs_is_alive(f.w, killed_obj));
    CHECK_EQ(TECS_GET(f.w, twice, f.pos, Position)->x, 7);
    CHECK_EQ(TECS_GET(f.w, twice, f.pos, Position)->y, 8);
    CHECK_EQ(TECS_GET(f.w, twice_obj, o, Obj)->value, 8);
    CHECK(tecs_has(f.w, added, f.vel) && !tecs_has(f.w, added, f.pos));
    CHECK_EQ(TECS_GET(f.w, added, f.vel, Velocity)->x, 0);
    CHECK_EQ(TECS_GET(f.w, in_pos, f.pos, Position)->y, 10);
    CHECK_EQ(tecs_world_entity_count(f.w), 6);
    CHECK_EQ(hooks_live(&h), 2);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(hooks_live(&h), 0);
}

/* Many births with a set each, queued in one iteration across several
** chunks, interleaved with other archetypes and followed by later changes
** of some of them: each lands once, with its value, in call order. */
TEST(defer_many_births_with_sets_land_in_order)
{
    fixture f = fx_new(16);
    tecs_comp_t tag = TECS_TAG(f.w, Tag);
    tecs_archetype_t *av = tecs_archetype_get(f.w, 1, &f.vel);
    fx_spawn(&f, 0);
    tecs_entity_t e[100];
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    for (int i = 0; i < 100; i++) {
        e[i] = i % 30 == 29 ? tecs_new_in(f.w, av) : tecs_new(f.w);
        CHECK_ERR(TECS_SET(f.w, e[i], f.pos, Position, { (float)i, (float)-i }), TECS_OK);
        if (i % 40 == 39)
            CHECK_ERR(tecs_add(f.w, e[i], tag), TECS_OK);
    }
    CHECK_ERR(tecs_destroy(f.w, e[5]), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, e[7], f.hp, Health, { 70 }), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, e[8], f.pos), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    tecs_iter_fini(&it);
    CHECK_EQ(tecs_world_entity_count(f.w), 100);
    for (int i = 0; i < 100; i++) {
        if (i == 5 || i == 8)
            continue;
        const Position *p = TECS_GET(f.w, e[i], f.pos, Position);
        CHECK(p != NULL);
        CHECK_EQ(p->x, (float)i);
        CHECK_EQ(p->y, (float)-i);
        CHECK_EQ(tecs_has(f.w, e[i], f.vel), i % 30 == 29);
        CHECK_EQ(tecs_has(f.w, e[i], tag), i % 40 == 39);
    }
    CHECK(!tecs_is_alive(f.w, e[5]));
    CHECK_EQ(TECS_GET(f.w, e[7], f.hp, Health)->hp, 70);
    CHECK(tecs_is_alive(f.w, e[8]) && !tecs_has(f.w, e[8], f.pos));
    int64_t rows = 0;
    tecs_iter_t all = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    while (tecs_iter_next(&all))
        rows += all.count;
    CHECK_EQ(rows, 99);                             /* with the first one */
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(defer_new_then_set_is_born_with_the_values)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t tag = TECS_TAG(w, Marked);
    int live = 0;
    tecs_comp_t name = text_component(w, &live);
    tecs_entity_t first = tecs_new(w);
    CHECK_ERR(TECS_SET(w, first, pos, Position, { 0, 0 }), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_entity_t e[10];
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    for (int i = 0; i < 10; i++) {
        e[i] = tecs_new(w);
        CHECK(e[i] != 0);
        CHECK(!tecs_is_alive(w, e[i]));
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 1 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { 2, 3 }), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], tag), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], name, Text, { "n" }), TECS_OK);
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
        CHECK(strcmp(TECS_GET(w, e[i], name, Text)->s, "n") == 0);
    }
    CHECK_EQ(live, 10);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live, 0);
}

TEST(defer_set_after_destroy_of_pending_leaves_it_dead)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t a = tecs_new(w);
    CHECK_ERR(TECS_SET(w, a, pos, Position, { 0, 0 }), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
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
TEST(defer_new_set_out_of_memory_changes_nothing)
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
        tecs_iter_t it = TECS_ITER(w, .query = q);
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

/* ---- delayed new -------------------------------------------------------- */

TEST(delayed_new_born_at_apply)
{
    fixture f = fx_new(16);
    tecs_archetype_t *ap = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.pos, f.hp });
    Position p = { 3, 4 };
    tecs_entity_t e = tecs_delayed_new(f.w, ap, 1, &(tecs_value_t){ f.pos, &p });
    CHECK(e != 0);
    p.x = 100;                                      /* copied at the call */
    CHECK(!tecs_is_alive(f.w, e));
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_EQ(tecs_world_entity_count(f.w), 0);
    CHECK_EQ(tecs_query_count(f.all), 0);
    CHECK(tecs_new(f.w) != e);                      /* its id is taken */
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);      /* kills only: still pending */
    CHECK(!tecs_is_alive(f.w, e));
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK(tecs_is_alive(f.w, e));
    CHECK_EQ(TECS_GET(f.w, e, f.pos, Position)->x, 3);
    CHECK_EQ(TECS_GET(f.w, e, f.hp, Health)->hp, 0);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    CHECK_EQ(tecs_world_entity_count(f.w), 2);
    CHECK_EQ(tecs_query_count(f.all), 1);
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);       /* nothing left: no-op */
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_news_apply_in_call_order)
{
    fixture f = fx_new(16);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    tecs_archetype_t *b = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    tecs_entity_t e[6];
    for (int i = 0; i < 6; i++)
        e[i] = tecs_delayed_new(f.w, i % 2 ? b : a, 0, NULL);
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    tecs_entity_t got[6];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(f.all), .query = f.all) }, got, 6), 6);
    /* a's rows then b's rows, each in call order. */
    tecs_entity_t want[6] = { e[0], e[2], e[4], e[1], e[3], e[5] };
    CHECK(memcmp(got, want, sizeof want) == 0);
    tw_free(f.w);
}

TEST(delayed_destroy_of_pending_birth_cancels_it)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_archetype_t *ao = tecs_archetype_get(f.w, 1, &o);
    tecs_entity_t e = tecs_delayed_new(f.w, ao, 1, &(tecs_value_t){ o, &(Obj){ OBJ_LIVE, 5 } });
    tecs_entity_t keep = tecs_delayed_new(f.w, ao, 0, NULL);
    CHECK_EQ(tecs_delayed_new_count(f.w), 2);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_EDEAD);
    tecs_entity_t reuse = tecs_new(f.w);             /* takes e's slot */
    CHECK_EQ(TECS_ENTITY_INDEX(reuse), TECS_ENTITY_INDEX(e));
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK(!tecs_is_alive(f.w, e));
    CHECK(tecs_is_alive(f.w, keep));
    CHECK(tecs_entity_archetype(f.w, reuse) == tecs_archetype_get(f.w, 0, NULL));
    CHECK_EQ(tecs_archetype_entity_count(ao), 1);
    CHECK_EQ(tecs_world_entity_count(f.w), 2);
    CHECK_EQ(hooks_live(&h), 1);                    /* the queued copy was dropped */
    CHECK_EQ(h.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_new_bad_input)
{
    fixture f = fx_new(16);
    tecs_world_t *w2 = tw_new();
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    CHECK_EQ(tecs_delayed_new(f.w, NULL, 0, NULL), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_EINVAL);
    CHECK_EQ(tecs_delayed_new(f.w, tecs_archetype_get(w2, 0, NULL), 0, NULL), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_EWORLD);
    CHECK_EQ(tecs_delayed_new(f.w, a, 1, &(tecs_value_t){ f.vel, &(Velocity){ 0, 0 } }), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_ENOCOMP);
    CHECK_EQ(tecs_delayed_new(f.w, a, 1, NULL), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_EINVAL);
    CHECK_EQ(tecs_delayed_new(NULL, a, 0, NULL), 0);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    CHECK(tecs_delayed_new(f.w, a, 0, NULL) != 0);
    tw_free(w2);
    tw_free(f.w);
}

/* ---- delayed kill ------------------------------------------------------- */

typedef struct kill_log {
    int calls;
    tecs_entity_t last;
    bool alive_inside;
    tecs_comp_t pos;
    tecs_entity_t made;                             /* made inside the callback */
} kill_log;

static void on_kill(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    kill_log *k = ctx;
    k->calls++;
    k->last = e;
    k->alive_inside = tecs_is_alive(w, e) && tecs_has(w, e, k->pos);
}

TEST(delayed_kill_runs_callback_before_kill)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1), g = fx_spawn(&f, 2);
    kill_log k = { .pos = f.pos };
    CHECK_ERR(tecs_delayed_destroy(f.w, e, on_kill, &k), TECS_OK);
    CHECK(tecs_is_alive(f.w, e));
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 1);
    CHECK_EQ(tecs_query_count(f.all), 2);           /* still iterated */
    CHECK_ERR(tecs_add(f.w, e, f.vel), TECS_OK);     /* still changeable */
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);        /* news only: still alive */
    CHECK(tecs_is_alive(f.w, e));
    CHECK_EQ(k.calls, 0);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 1);
    CHECK_EQ(k.last, e);
    CHECK(k.alive_inside);
    CHECK(!tecs_is_alive(f.w, e));
    CHECK(tecs_is_alive(f.w, g));
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 0);
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    CHECK_ERR(tecs_delayed_destroy(f.w, g, NULL, NULL), TECS_OK);   /* no callback */
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(f.w), 0);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_kill_twice_is_one_kill)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_entity_t e = fx_spawn(&f, 1);
    tecs_add(f.w, e, o);
    kill_log k1 = { .pos = f.pos }, k2 = { .pos = f.pos };
    CHECK_ERR(tecs_delayed_destroy(f.w, e, on_kill, &k1), TECS_OK);
    CHECK_ERR(tecs_delayed_destroy(f.w, e, on_kill, &k2), TECS_OK);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 1);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k1.calls + k2.calls, 1);
    CHECK_EQ(k1.calls, 1);                          /* the first callback */
    CHECK_EQ(h.dtor, 1);
    CHECK_EQ(tecs_world_entity_count(f.w), 0);
    tw_free(f.w);
}

TEST(delayed_stale_kill_never_hits_reused_slot)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    kill_log k = { .pos = f.pos };
    CHECK_ERR(tecs_delayed_destroy(f.w, e, on_kill, &k), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);        /* killed directly */
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 0);
    tecs_entity_t reuse = fx_spawn(&f, 2);
    CHECK_EQ(TECS_ENTITY_INDEX(reuse), TECS_ENTITY_INDEX(e));
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 0);
    CHECK(tecs_is_alive(f.w, reuse));
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    /* The new entity may be delayed-killed in its own right. */
    CHECK_ERR(tecs_delayed_destroy(f.w, reuse, on_kill, &k), TECS_OK);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 1);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 1);
    CHECK(!tecs_is_alive(f.w, reuse));
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_kill_bad_input)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);
    CHECK_ERR(tecs_delayed_destroy(f.w, e, NULL, NULL), TECS_EDEAD);
    CHECK_ERR(tecs_delayed_destroy(f.w, 0, NULL, NULL), TECS_EDEAD);
    CHECK_ERR(tecs_delayed_destroy(NULL, e, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_delayed_apply_new(NULL), TECS_EINVAL);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 0);
    CHECK_EQ(tecs_delayed_destroy_count(NULL), 0);
    CHECK_EQ(tecs_delayed_new_count(NULL), 0);
    tw_free(f.w);
}

static void kill_and_spawn(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    kill_log *k = ctx;
    on_kill(w, e, ctx);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_EBUSY);
    k->made = tecs_new(w);                          /* queued, applied after */
    CHECK(!tecs_is_alive(w, k->made));
}

TEST(delayed_kill_callback_changes_are_applied)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    kill_log k = { .pos = f.pos };
    CHECK_ERR(tecs_delayed_destroy(f.w, e, kill_and_spawn, &k), TECS_OK);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 1);
    CHECK(!tecs_is_alive(f.w, e));
    CHECK(tecs_is_alive(f.w, k.made));
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_apply_inside_iteration_is_ebusy)
{
    fixture f = fx_new(16);
    tecs_entity_t e = fx_spawn(&f, 1);
    tecs_entity_t n = tecs_delayed_new(f.w, tecs_archetype_get(f.w, 1, &f.pos), 0, NULL);
    CHECK_ERR(tecs_delayed_destroy(f.w, e, NULL, NULL), TECS_OK);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_EBUSY);
    tecs_iter_fini(&it);
    CHECK(tecs_is_alive(f.w, e) && !tecs_is_alive(f.w, n));
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 1);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK(!tecs_is_alive(f.w, e) && tecs_is_alive(f.w, n));
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_counts_stay_right)
{
    fixture f = fx_new(16);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    tecs_entity_t live[10], born[10];
    for (int i = 0; i < 10; i++) {
        live[i] = fx_spawn(&f, (float)i);
        born[i] = tecs_delayed_new(f.w, a, 0, NULL);
    }
    for (int i = 0; i < 10; i += 2)
        CHECK_ERR(tecs_delayed_destroy(f.w, live[i], NULL, NULL), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, born[3]), TECS_OK);  /* cancel one birth */
    CHECK_ERR(tecs_destroy(f.w, live[4]), TECS_OK);  /* one kill goes stale */
    CHECK_EQ(tecs_world_entity_count(f.w), 9);
    CHECK_EQ(tecs_delayed_new_count(f.w), 9);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 4);
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(f.w), 18);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 4);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(f.w), 14);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 0);
    CHECK_EQ(tecs_query_count(f.all), 14);
    TW_CHECK(f.w);
    tw_free(f.w);
}

/* A delayed birth is not born by the end of an iteration, so changes to it
** cannot be queued there: they fail at once, as outside an iteration,
** instead of being lost at the flush. */
TEST(delayed_pending_id_refused_inside_iteration)
{
    fixture f = fx_new(16);
    fx_spawn(&f, 1);
    tecs_entity_t d = tecs_delayed_new(f.w, tecs_archetype_get(f.w, 1, &f.pos), 0, NULL);
    CHECK_ERR(tecs_add(f.w, d, f.vel), TECS_EDEAD);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_add(f.w, d, f.vel), TECS_EDEAD);
    CHECK_ERR(TECS_SET(f.w, d, f.hp, Health, { 1 }), TECS_EDEAD);
    CHECK_ERR(tecs_remove(f.w, d, f.pos), TECS_EDEAD);
    tecs_entity_t n = tecs_new(f.w);                /* born at the end: queued */
    CHECK_ERR(tecs_add(f.w, n, f.vel), TECS_OK);
    tecs_iter_fini(&it);
    CHECK(tecs_has(f.w, n, f.vel));
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK(tecs_is_alive(f.w, d) && !tecs_has(f.w, d, f.vel));
    TW_CHECK(f.w);
    tw_free(f.w);
}

static void kill_self_too(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    kill_log *k = ctx;
    k->calls++;
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);         /* queued: still alive here */
    CHECK(tecs_is_alive(w, e));
    CHECK_ERR(tecs_add(w, e, k->pos), TECS_OK);     /* queued, then moot */
    CHECK_ERR(tecs_delayed_destroy(w, e, kill_self_too, ctx), TECS_OK);   /* already queued */
}

TEST(delayed_kill_callback_destroying_itself)
{
    hook_counts h = { 0 };
    fixture f = fx_new(16);
    tecs_comp_t o = obj_component(f.w, "Obj", &h);
    tecs_entity_t e = tecs_new(f.w);
    tecs_add(f.w, e, o);
    kill_log k = { .pos = f.pos };
    CHECK_ERR(tecs_delayed_destroy(f.w, e, kill_self_too, &k), TECS_OK);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 1);
    CHECK(!tecs_is_alive(f.w, e));
    CHECK_EQ(h.dtor, 1);
    CHECK_EQ(tecs_delayed_destroy_count(f.w), 0);
    CHECK_EQ(tecs_world_entity_count(f.w), 0);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);
    CHECK_EQ(k.calls, 1);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(h.bad, 0);
}

/* ---- delayed new with an initializer ------------------------------------ */

/* What the initializers and kill callbacks of one test saw, in order. */
typedef struct birth_log {
    tecs_world_t *w;
    tecs_comp_t pos, vel, hp, obj;
    char seq[64];                       /* one letter per callback run      */
    int n;
    tecs_entity_t seen[8];              /* tecs_init_entity, by run         */
    tecs_entity_t watch;                /* an entity whose fate they note   */
    bool watch_alive[8];
    bool self_alive;                    /* the entity being built, inside   */
    float x;                            /* the Position value written       */
    tecs_entity_t made;                 /* made inside                      */
    int add_err, destroy_err, kill_err;
    hook_counts *hc;                    /* Obj's hook counts                */
} birth_log;

static void log_init(tecs_init_t *init, void *ctx, char letter)
{
    birth_log *l = ctx;
    if (l->n < 8) {
        l->seen[l->n] = tecs_init_entity(init);
        l->watch_alive[l->n] = l->watch && tecs_is_alive(l->w, l->watch);
    }
    l->seq[l->n++] = letter;
    l->self_alive |= tecs_is_alive(l->w, tecs_init_entity(init));
    Position *p = tecs_init_construct(init, l->pos);
    if (p)
        *p = (Position){ l->x, (float)l->n };
}

static void init_a(tecs_init_t *init, void *ctx) { log_init(init, ctx, 'a'); }
static void init_b(tecs_init_t *init, void *ctx) { log_init(init, ctx, 'b'); }

static void log_kill(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    birth_log *l = ctx;
    l->seq[l->n++] = 'k';
}

TEST(delayed_new_with_runs_at_apply_in_queue_order)
{
    fixture f = fx_new(16);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    birth_log l = { .w = f.w, .pos = f.pos, .x = 4 };
    tecs_entity_t victim = fx_spawn(&f, 9);
    tecs_entity_t plain = tecs_delayed_new(f.w, a, 0, NULL);
    l.watch = plain;
    tecs_entity_t e1 = tecs_delayed_new_with(f.w, a, init_a, &l);
    CHECK_ERR(tecs_delayed_destroy(f.w, victim, log_kill, &l), TECS_OK);
    tecs_entity_t e2 = tecs_delayed_new_with(f.w, a, init_b, &l);
    CHECK(e1 != 0 && e2 != 0 && e1 != e2);
    CHECK_EQ(l.n, 0);                               /* nothing runs at the call */
    CHECK(!tecs_is_alive(f.w, e1) && !tecs_is_alive(f.w, e2));
    CHECK_EQ(tecs_delayed_new_count(f.w), 3);
    CHECK_EQ(tecs_query_count(f.all), 1);
    CHECK_ERR(tecs_delayed_apply_destroy(f.w), TECS_OK);    /* the kill only */
    CHECK_EQ(l.n, 1);
    CHECK(!tecs_is_alive(f.w, victim));
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    l.seq[l.n] = 0;
    CHECK(strcmp(l.seq, "kab") == 0);
    CHECK(l.seen[1] == e1 && l.seen[2] == e2);
    CHECK(l.watch_alive[1] && l.watch_alive[2]);    /* the birth queued first, born first */
    CHECK(!l.self_alive);                           /* nobody sees it half built */
    CHECK(tecs_is_alive(f.w, e1) && tecs_is_alive(f.w, e2));
    CHECK_EQ(TECS_GET(f.w, e1, f.pos, Position)->y, 2);
    CHECK_EQ(TECS_GET(f.w, e2, f.pos, Position)->y, 3);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    /* Births and destroys in one apply: the order of the calls. */
    l = (birth_log){ .w = f.w, .pos = f.pos };
    tecs_entity_t g = fx_spawn(&f, 1), h = fx_spawn(&f, 2);
    l.watch = g;
    CHECK(tecs_delayed_new_with(f.w, a, init_a, &l) != 0);
    CHECK_ERR(tecs_delayed_destroy(f.w, g, log_kill, &l), TECS_OK);
    CHECK(tecs_delayed_new_with(f.w, a, init_b, &l) != 0);
    CHECK_ERR(tecs_delayed_destroy(f.w, h, log_kill, &l), TECS_OK);
    CHECK(tecs_delayed_new_with(f.w, a, init_a, &l) != 0);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    l.seq[l.n] = 0;
    CHECK(strcmp(l.seq, "akbka") == 0);
    CHECK(l.watch_alive[0] && !l.watch_alive[2] && !l.watch_alive[4]);
    CHECK_EQ(tecs_query_count(f.all), 6);
    TW_CHECK(f.w);
    tw_free(f.w);
}

static void count_add(const tecs_event_t *ev)
{
    birth_log *l = ev->ctx;
    /* The birth is announced once the initializer's values are in place. */
    if (ev->comp == l->pos)
        l->x = ((const Position *)ev->value)->x;
    l->seq[l->n++] = 'h';
}

static void init_builds(tecs_init_t *init, void *ctx)
{
    birth_log *l = ctx;
    l->seq[l->n++] = 'i';
    Position *p = tecs_init_construct(init, l->pos);
    *p = (Position){ 21, 22 };
    Obj *o = tecs_init_construct(init, l->obj);     /* constructed here, in place */
    obj_ctor(o, 1, l->hc);
    o->value = 55;
    l->seen[0] = tecs_init_entity(init);
    CHECK(tecs_init_construct(init, l->vel) == NULL);   /* not in the archetype */
}

TEST(delayed_new_with_builds_its_entity)
{
    hook_counts hc = { 0 };
    fixture f = fx_new(16);
    birth_log l = { .w = f.w, .pos = f.pos, .hp = f.hp, .vel = f.vel, .hc = &hc };
    l.obj = obj_component(f.w, "Obj", &hc);
    tecs_comp_t other = obj_component(f.w, "Other", &hc);
    CHECK_ERR(tecs_component_hooks(f.w, f.pos, &(tecs_hooks_t){ .on_add = count_add, .ctx = &l }),
              TECS_OK);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 4, (tecs_comp_t[]){ f.pos, f.hp, l.obj, other });
    tecs_entity_t e = tecs_delayed_new_with(f.w, a, init_builds, &l);
    CHECK(e != 0);
    CHECK_EQ(hc.ctor, 0);                           /* nothing built at the call */
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    l.seq[l.n] = 0;
    CHECK(strcmp(l.seq, "ih") == 0);                /* initializer, then the on_add hook */
    CHECK_EQ(l.x, 21);
    CHECK(l.seen[0] == e);
    CHECK_EQ(TECS_GET(f.w, e, f.pos, Position)->y, 22);
    CHECK_EQ(TECS_GET(f.w, e, l.obj, Obj)->value, 55);
    CHECK_EQ(TECS_GET(f.w, e, other, Obj)->value, OBJ_DEFAULT);  /* left alone: ctor */
    CHECK_EQ(TECS_GET(f.w, e, f.hp, Health)->hp, 0);             /* plain: zero */
    CHECK_EQ(hc.ctor, 2);                           /* Obj by fn, Other after it */
    CHECK_EQ(tecs_query_count(f.all), 1);
    /* fn NULL: tecs_delayed_new without values. */
    tecs_entity_t n = tecs_delayed_new_with(f.w, a, NULL, NULL);
    CHECK(n != 0 && !tecs_is_alive(f.w, n));
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK_EQ(TECS_GET(f.w, n, l.obj, Obj)->value, OBJ_DEFAULT);
    CHECK_EQ(TECS_GET(f.w, n, f.pos, Position)->x, 0);
    CHECK_EQ(hooks_live(&hc), 4);
    CHECK_EQ(hc.bad, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(hooks_live(&hc), 0);
    CHECK_EQ(hc.bad, 0);
}

/* Inside the initializer (R1, an initializer's row): changes queue, the
** entity's own ones too, and apply right after its birth, before the next
** delayed change; writes of other entities land at once; objects may be
** made; the world's free, progress and applies are refused. */
static void init_calls_back(tecs_init_t *init, void *ctx)
{
    birth_log *l = ctx;
    tecs_world_t *w = l->w;
    tecs_entity_t self = tecs_init_entity(init);
    l->seq[l->n++] = 'i';
    CHECK(tecs_is_deferred(w));
    l->add_err = tecs_add(w, self, l->vel);                      /* queued */
    CHECK(!tecs_has(w, self, l->vel));
    CHECK_ERR(TECS_SET(w, self, l->hp, Health, { 40 }), TECS_OK);  /* queued too */
    CHECK_ERR(TECS_SET(w, l->watch, l->pos, Position, { 8, 8 }), TECS_OK);
    CHECK_EQ(TECS_GET(w, l->watch, l->pos, Position)->x, 8);     /* at once */
    l->made = tecs_new(w);
    CHECK(l->made != 0 && !tecs_is_alive(w, l->made));
    tecs_query_t *q = tecs_query_all(w, 1, &l->vel);             /* an object */
    CHECK(q != NULL);
    CHECK(tecs_query_count(q) >= 0);
    tecs_query_free(q);
    CHECK_ERR(tecs_delayed_apply(w), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_EBUSY);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_EBUSY);
    CHECK_ERR(tecs_world_free(w), TECS_EBUSY);
    /* Not alive yet: it cannot be delayed-destroyed, only destroyed. */
    l->kill_err = tecs_delayed_destroy(w, self, NULL, NULL);
    if (l->x > 0)
        l->destroy_err = tecs_destroy(w, self);
}

static void note_vel(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    birth_log *l = ctx;
    (void)e;
    /* The births before this kill, with what their initializers queued. */
    l->seq[l->n++] = tecs_has(w, l->seen[0], l->vel) ? 'K' : 'k';
}

TEST(delayed_new_with_callback_rules)
{
    fixture f = fx_new(16);
    birth_log l = { .w = f.w, .pos = f.pos, .vel = f.vel, .hp = f.hp };
    l.watch = fx_spawn(&f, 1);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    tecs_entity_t e = tecs_delayed_new_with(f.w, a, init_calls_back, &l);
    l.seen[0] = e;
    CHECK_ERR(tecs_delayed_destroy(f.w, l.watch, note_vel, &l), TECS_OK);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK_EQ(tecs_last_error(f.w), TECS_OK);
    l.seq[l.n] = 0;
    CHECK(strcmp(l.seq, "iK") == 0);                /* its changes came before the kill */
    CHECK_ERR(l.add_err, TECS_OK);
    CHECK_ERR(l.kill_err, TECS_EDEAD);
    CHECK(tecs_is_alive(f.w, e));
    CHECK(tecs_has(f.w, e, f.vel));
    CHECK_EQ(TECS_GET(f.w, e, f.hp, Health)->hp, 40);
    CHECK(tecs_is_alive(f.w, l.made));
    CHECK(!tecs_is_alive(f.w, l.watch));
    CHECK(!tecs_is_deferred(f.w));
    /* An initializer destroying its own entity: born, then destroyed. */
    l = (birth_log){ .w = f.w, .pos = f.pos, .vel = f.vel, .hp = f.hp, .x = 1 };
    l.watch = fx_spawn(&f, 1);
    tecs_entity_t d = tecs_delayed_new_with(f.w, a, init_calls_back, &l);
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK_ERR(l.destroy_err, TECS_OK);
    CHECK(!tecs_is_alive(f.w, d));
    CHECK(tecs_is_alive(f.w, l.made));
    CHECK_EQ(tecs_dropped_changes(f.w), 0);        /* its queued changes were skipped */
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(delayed_new_with_cancelled_never_runs)
{
    hook_counts hc = { 0 };
    fixture f = fx_new(16);
    birth_log l = { .w = f.w, .pos = f.pos };
    tecs_comp_t o = obj_component(f.w, "Obj", &hc);
    tecs_archetype_t *a = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.pos, o });
    tecs_entity_t e = tecs_delayed_new_with(f.w, a, init_a, &l);
    tecs_entity_t k = tecs_delayed_new_with(f.w, a, init_b, &l);
    CHECK_ERR(tecs_delayed_destroy(f.w, e, NULL, NULL), TECS_EDEAD);  /* not alive yet */
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);        /* cancels the birth */
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_ERR(tecs_destroy(f.w, e), TECS_EDEAD);
    tecs_entity_t reuse = tecs_new(f.w);             /* takes e's slot */
    CHECK_EQ(TECS_ENTITY_INDEX(reuse), TECS_ENTITY_INDEX(e));
    /* Cancelled inside an iteration: queued, then applied at its end. */
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.all), .query = f.all);
    CHECK_ERR(tecs_destroy(f.w, k), TECS_OK);
    tecs_iter_fini(&it);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK_EQ(l.n, 0);                               /* neither initializer ran */
    CHECK(!tecs_is_alive(f.w, e) && !tecs_is_alive(f.w, k));
    CHECK(tecs_is_alive(f.w, reuse));
    CHECK_EQ(tecs_world_entity_count(f.w), 1);
    CHECK_EQ(hc.ctor, 0);
    TW_CHECK(f.w);
    tw_free(f.w);
}

/* A unique key written by the initializer is checked when the birth
** applies, as tecs_new_with checks it: taken, the birth is dropped. */
typedef struct key_init { tecs_comp_t hp; int hp_val; int runs; } key_init;

static void init_key(tecs_init_t *init, void *ctx)
{
    key_init *k = ctx;
    k->runs++;
    ((Health *)tecs_init_construct(init, k->hp))->hp = k->hp_val;
}

TEST(delayed_new_with_unique_key_taken_is_dropped)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    CHECK(x != NULL);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    tecs_entity_t held = tecs_new_in(w, a);
    CHECK_ERR(TECS_SET(w, held, hp, Health, { 9 }), TECS_OK);
    key_init k1 = { hp, 7, 0 }, k2 = { hp, 7, 0 }, k3 = { hp, 9, 0 }, k4 = { hp, 8, 0 };
    tecs_entity_t e1 = tecs_delayed_new_with(w, a, init_key, &k1);
    tecs_entity_t e2 = tecs_delayed_new_with(w, a, init_key, &k2);
    tecs_entity_t e3 = tecs_delayed_new_with(w, a, init_key, &k3);
    tecs_entity_t e4 = tecs_delayed_new_with(w, a, init_key, &k4);
    CHECK(e1 && e2 && e3 && e4);
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_EEXIST);
    CHECK_EQ(tecs_dropped_changes(w), 2);
    CHECK(strstr(tecs_last_error_msg(w), "dropped 2") != NULL);
    CHECK(k1.runs == 1 && k2.runs == 1 && k3.runs == 1 && k4.runs == 1);
    CHECK(tecs_is_alive(w, e1) && tecs_is_alive(w, e4));
    CHECK(!tecs_is_alive(w, e2) && !tecs_is_alive(w, e3));
    CHECK_EQ(tecs_delayed_new_count(w), 0);
    CHECK(tecs_index_lookup(x, tecs_key_int(7)) == e1);
    CHECK_EQ(tecs_index_count(x), 3);
    CHECK_EQ(tecs_world_entity_count(w), 3);
    TW_CHECK(w);
    tw_free(w);
}

/* A component whose ctor and dtor queue a delayed birth with an
** initializer: from a lifecycle hook it is queued as tecs_delayed_new is;
** from what tecs_world_free runs it is refused. */
typedef struct hook_births {
    tecs_world_t *w;
    tecs_archetype_t *a;
    birth_log *l;
    tecs_entity_t born;
    int ctor_err, dtor_err;
    tecs_entity_t dtor_born;
} hook_births;

static void hb_ctor(void *dst, int32_t n, void *ctx)
{
    hook_births *h = ctx;
    memset(dst, 0, (size_t)n * sizeof(Health));
    if (h->born == 0) {
        h->born = tecs_delayed_new_with(h->w, h->a, init_a, h->l);
        h->ctor_err = tecs_last_error(h->w);
    }
}

static void hb_dtor(void *p, int32_t n, void *ctx)
{
    hook_births *h = ctx;
    (void)p, (void)n;
    h->dtor_born = tecs_delayed_new_with(h->w, h->a, init_a, h->l);
    h->dtor_err = tecs_last_error(h->w);
}

TEST(delayed_new_with_bad_input)
{
    fixture f = fx_new(16);
    birth_log l = { .w = f.w, .pos = f.pos };
    tecs_world_t *w2 = tw_new();
    tecs_archetype_t *a = tecs_archetype_get(f.w, 1, &f.pos);
    CHECK_EQ(tecs_delayed_new_with(NULL, a, init_a, &l), 0);
    CHECK_EQ(tecs_delayed_new_with(f.w, NULL, init_a, &l), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_EINVAL);
    CHECK_EQ(tecs_delayed_new_with(f.w, tecs_archetype_get(w2, 0, NULL), init_a, &l), 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_EWORLD);
    CHECK_EQ(tecs_delayed_new_count(f.w), 0);
    CHECK_EQ(tecs_delayed_new_count(w2), 0);
    CHECK(tecs_delayed_new_with(f.w, a, init_a, &l) != 0);
    CHECK_EQ(tecs_last_error(f.w), TECS_OK);
    CHECK_ERR(tecs_delayed_apply(f.w), TECS_OK);
    CHECK_EQ(l.n, 1);
    tw_free(w2);
    /* From a lifecycle hook: queued; from what tecs_world_free runs
    ** (the world closed): refused. */
    hook_births hb = { .w = f.w, .a = a, .l = &l };
    tecs_comp_t c = tecs_component_new(f.w, &(tecs_component_desc_t){
        .name = "Hooked", .size = sizeof(Health), .align = _Alignof(Health),
        .ctor = hb_ctor, .dtor = hb_dtor, .hook_ctx = &hb });
    tecs_entity_t e = tecs_new(f.w);
    CHECK_ERR(tecs_add(f.w, e, c), TECS_OK);
    CHECK(hb.born != 0);
    CHECK_ERR(hb.ctor_err, TECS_OK);
    CHECK(!tecs_is_alive(f.w, hb.born));
    CHECK_EQ(tecs_delayed_new_count(f.w), 1);
    CHECK_ERR(tecs_delayed_apply_new(f.w), TECS_OK);
    CHECK(tecs_is_alive(f.w, hb.born));
    CHECK_EQ(l.n, 2);
    CHECK(l.seen[1] == hb.born);
    TW_CHECK(f.w);
    tw_free(f.w);
    CHECK_EQ(hb.dtor_born, 0);
    CHECK_ERR(hb.dtor_err, TECS_EBUSY);
    CHECK_EQ(l.n, 2);
}

/* Out of memory: the call that meets the failure (the k-th allocation, for
** every k) returns 0 and leaves no pending id and nothing queued; an apply
** that meets it keeps the birth queued, its initializer not run, and a
** later apply runs it once. */
TEST(delayed_new_with_out_of_memory)
{
    for (long k = 1;; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        hook_counts hc = { 0 };
        tecs_comp_t pos = TECS_COMPONENT(w, Position);
        tecs_comp_t o = obj_component(w, "Obj", &hc);
        tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, o });
        tecs_entity_t live = tecs_new(w);
        CHECK(live != 0);
        birth_log l = { .w = w, .pos = pos, .x = 3 };
        al.fail_at = al.calls + k;
        int32_t queued = 0;
        tecs_entity_t ids[40];
        bool hit = false;
        for (int i = 0; i < 40; i++) {
            long before = al.failures;
            int32_t count = tecs_world_entity_count(w);
            ids[i] = tecs_delayed_new_with(w, a, i % 2 ? init_a : init_b, &l);
            if (al.failures != before) {
                hit = true;
                al.fail_at = 0;
                CHECK_EQ(ids[i], 0);
                CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
                CHECK_EQ(tecs_delayed_new_count(w), queued);   /* no pending id */
                CHECK_EQ(tecs_world_entity_count(w), count);
                TW_CHECK(w);
                ids[i] = tecs_delayed_new_with(w, a, i % 2 ? init_a : init_b, &l);
            }
            CHECK(ids[i] != 0);
            queued++;
        }
        CHECK_EQ(tecs_delayed_new_count(w), 40);
        int tries = 0;
        tecs_err_t err;
        while ((err = tecs_delayed_apply_new(w)) != TECS_OK) {
            CHECK_EQ(err, TECS_ENOMEM);
            CHECK(al.failures > 0 && tries++ < 2);
            hit = true;
            al.fail_at = 0;
            CHECK_EQ(tecs_delayed_new_count(w), 40 - l.n);  /* each ran once, or waits */
            TW_CHECK(w);
        }
        CHECK_EQ(l.n, 40);                          /* every initializer, once */
        CHECK_EQ(tecs_delayed_new_count(w), 0);
        for (int i = 0; i < 40; i++) {
            CHECK(tecs_is_alive(w, ids[i]));
            CHECK_EQ(TECS_GET(w, ids[i], pos, Position)->x, 3);
        }
        CHECK_EQ(tecs_world_entity_count(w), 41);
        CHECK_EQ(hooks_live(&hc), 40);
        TW_CHECK(w);
        hit = hit || al.failures > 0;
        tw_free(w);
        CHECK_EQ(hc.bad, 0);
        if (!hit)
            break;
    }
}
