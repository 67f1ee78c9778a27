/* Entities: ids, reuse, creation forms, destroy, add/remove/set/get, moves
** between archetypes with their values, bad input. */
#include "hooks.h"
#include "private.h"   /* tecs__make_id, and records for one white-box case */

/* What a user can see of a world, to assert that a failed call changed
** nothing: counts, memory, and the value of every tracked entity. */
typedef struct view {
    int32_t entities, archetypes, components;
    size_t memory;
    long sum;
} view;

static long sum_positions(tecs_world_t *w, const tecs_entity_t *ids, int n, tecs_comp_t pos)
{
    long s = 0;
    for (int i = 0; i < n; i++) {
        s = s * 31 + tecs_is_alive(w, ids[i]);
        const Position *p = tecs_is_alive(w, ids[i]) && tecs_has(w, ids[i], pos)
                                ? TECS_GET(w, ids[i], pos, Position) : NULL;
        s = s * 31 + (p ? (long)p->x * 7 + (long)p->y : -1);
    }
    return s;
}

static view look(tecs_world_t *w, const tecs_entity_t *ids, int n, tecs_comp_t pos)
{
    return (view){ tecs_world_entity_count(w), tecs_world_archetype_count(w),
                   tecs_world_component_count(w), tecs_world_memory(w),
                   sum_positions(w, ids, n, pos) };
}

#define CHECK_SAME(a, b)                                                    \
    do {                                                                    \
        view va_ = (a), vb_ = (b);                                            \
        CHECK_EQ(va_.entities, vb_.entities);                                 \
        CHECK_EQ(va_.archetypes, vb_.archetypes);                             \
        CHECK_EQ(va_.components, vb_.components);                             \
        CHECK_EQ(va_.memory, vb_.memory);                                     \
        CHECK_EQ(va_.sum, vb_.sum);                                           \
    } while (0)

TEST(entity_ids_are_never_zero)
{
    tecs_world_t *w = tw_new();
    for (int i = 0; i < 100; i++) {
        tecs_entity_t e = tecs_new(w);
        CHECK(e != 0);
        CHECK_EQ(TECS_ENTITY_INDEX(e), i);
        CHECK_EQ(TECS_ENTITY_GENERATION(e), 1);
        CHECK(tecs_is_alive(w, e));
    }
    for (uint32_t i = 1; i < 100; i += 2)
        CHECK_ERR(tecs_destroy(w, tecs__make_id(i, 1)), TECS_OK);
    for (int i = 0; i < 50; i++) {
        tecs_entity_t e = tecs_new(w);
        CHECK(e != 0);
        CHECK_EQ(TECS_ENTITY_GENERATION(e), 2);
    }
    CHECK(!tecs_is_alive(w, 0));
    CHECK_EQ(tecs_world_entity_count(w), 100);
    tw_free(w);
}

TEST(entity_reuses_oldest_dead_slot)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t e[6];
    for (int i = 0; i < 6; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, e[4]), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e[1]), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e[3]), TECS_OK);
    /* First in, first out: 4, then 1, then 3, then fresh slots. */
    tecs_entity_t r[4];
    for (int i = 0; i < 4; i++)
        r[i] = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(r[0]), 4);
    CHECK_EQ(TECS_ENTITY_INDEX(r[1]), 1);
    CHECK_EQ(TECS_ENTITY_INDEX(r[2]), 3);
    CHECK_EQ(TECS_ENTITY_INDEX(r[3]), 6);
    CHECK_EQ(TECS_ENTITY_GENERATION(r[0]), 2);
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_stale_id_stays_dead_after_reuse)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t old = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, old), TECS_OK);
    CHECK(!tecs_is_alive(w, old));
    tecs_entity_t now = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(now), TECS_ENTITY_INDEX(old));
    CHECK(now != old);
    CHECK(tecs_is_alive(w, now));
    CHECK(!tecs_is_alive(w, old));
    /* The stale id reaches nothing. */
    CHECK_ERR(tecs_add(w, old, pos), TECS_EDEAD);
    CHECK_ERR(tecs_set(w, old, pos, &(Position){ 1, 1 }), TECS_EDEAD);
    CHECK_ERR(tecs_destroy(w, old), TECS_EDEAD);
    CHECK(!tecs_has(w, now, pos));
    CHECK(tecs_is_alive(w, now));
    tw_free(w);
}

TEST(entity_is_alive_cases)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t e = tecs_new(w);
    CHECK(tecs_is_alive(w, e));
    CHECK(!tecs_is_alive(w, 0));
    CHECK(!tecs_is_alive(w, e + 1));                         /* never handed out */
    CHECK(!tecs_is_alive(w, tecs__make_id(0, 2)));           /* future generation */
    CHECK(!tecs_is_alive(w, tecs__make_id(0, 0)));
    CHECK(!tecs_is_alive(w, 0xffffffffffffffffull));
    tecs_entity_t p = tecs_delayed_new(w, tecs_archetype_get(w, 0, NULL), 0, NULL);
    CHECK(p != 0 && !tecs_is_alive(w, p));                   /* pending birth */
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_OK);
    CHECK(tecs_is_alive(w, p));
    tw_free(w);
}

TEST(entity_new_in_default_constructs)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new();
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, o });
    tecs_entity_t e = tecs_new_in(w, a);
    CHECK(e != 0);
    CHECK_EQ(TECS_GET(w, e, o, Obj)->value, OBJ_DEFAULT);
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 0);
    CHECK(tecs_entity_archetype(w, e) == a);
    CHECK_EQ(tecs_archetype_entity_count(a), 1);
    CHECK_EQ(h.ctor, 1);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

typedef struct init_ctx {
    tecs_comp_t pos, obj, tag;
    tecs_entity_t seen;
    void *tag_ptr;
} init_ctx;

static void init_pos_only(tecs_init_t *init, void *ctx)
{
    init_ctx *c = ctx;
    c->seen = tecs_init_entity(init);
    Position *p = tecs_init_construct(init, c->pos);
    *p = (Position){ 5, 6 };
    c->tag_ptr = tecs_init_construct(init, c->tag);
}

static void init_obj(tecs_init_t *init, void *ctx)
{
    init_ctx *c = ctx;
    Obj *o = tecs_init_construct(init, c->obj);
    *o = obj(99);                                  /* constructs it in place */
}

TEST(entity_new_with_initializer)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new();
    init_ctx c = { .pos = TECS_COMPONENT(w, Position), .tag = TECS_TAG(w, Marked) };
    c.obj = obj_component(w, "Obj", &h);
    tecs_archetype_t *a = tecs_archetype_get(w, 3, (tecs_comp_t[]){ c.obj, c.pos, c.tag });
    tecs_entity_t e = tecs_new_with(w, a, init_pos_only, &c);
    CHECK(e != 0 && e == c.seen);
    CHECK(c.tag_ptr == NULL);                      /* a tag has no storage */
    CHECK_EQ(TECS_GET(w, e, c.pos, Position)->y, 6);
    CHECK_EQ(TECS_GET(w, e, c.obj, Obj)->value, OBJ_DEFAULT);   /* untouched: ctor */
    CHECK_EQ(h.ctor, 1);
    tecs_entity_t f = tecs_new_with(w, a, init_obj, &c);
    CHECK_EQ(TECS_GET(w, f, c.obj, Obj)->value, 99);
    CHECK_EQ(TECS_GET(w, f, c.pos, Position)->x, 0);  /* untouched plain: zero */
    CHECK_EQ(h.ctor, 1);                           /* not constructed twice */
    CHECK_EQ(tecs_world_entity_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(h.dtor, 2);
    CHECK_EQ(h.bad, 0);
}

TEST(entity_new_with_bad_input)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_archetype_t *other = tecs_archetype_get(w2, 0, NULL);
    view before = look(w, NULL, 0, pos);
    CHECK_EQ(tecs_new_with(w, a, NULL, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_new_with(w, NULL, init_obj, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_new_with(w, other, init_obj, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK_EQ(tecs_new_in(w, other), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK_EQ(tecs_new_in(w, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_SAME(look(w, NULL, 0, pos), before);
    CHECK_EQ(tecs_world_entity_count(w2), 0);
    tw_free(w);
    tw_free(w2);
}

static void check_bulk(int32_t rows, int32_t n)
{
    tecs_world_t *w = tw_new_ex(NULL, rows);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    tecs_entity_t *ids = malloc((size_t)n * sizeof *ids);
    Position *ps = malloc((size_t)n * sizeof *ps);
    for (int32_t i = 0; i < n; i++)
        ps[i] = (Position){ (float)i, (float)-i };
    tecs_value_t vals[] = { { pos, ps } };
    CHECK_ERR(tecs_new_bulk(w, a, n, ids, 1, vals), TECS_OK);
    CHECK_EQ(tecs_archetype_entity_count(a), n);
    CHECK_EQ(tecs_archetype_chunk_count(a), (n + rows - 1) / rows);
    for (int32_t i = 0; i < n; i++) {
        CHECK(tecs_is_alive(w, ids[i]));
        CHECK_EQ(TECS_GET(w, ids[i], pos, Position)->x, i);
        CHECK_EQ(TECS_GET(w, ids[i], pos, Position)->y, -i);
        CHECK_EQ(TECS_GET(w, ids[i], hp, Health)->hp, 0);
        if (i > 0)
            CHECK_EQ(TECS_ENTITY_INDEX(ids[i]), TECS_ENTITY_INDEX(ids[i - 1]) + 1);
    }
    /* Without ids or values. */
    CHECK_ERR(tecs_new_bulk(w, a, n, NULL, 0, NULL), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 2 * n);
    CHECK_ERR(tecs_new_bulk(w, a, 0, NULL, 0, NULL), TECS_OK);
    TW_CHECK(w);
    free(ids);
    free(ps);
    tw_free(w);
}

TEST(entity_new_bulk_many_chunks)
{
    check_bulk(1024, 3000);
    check_bulk(16, 3000);
    check_bulk(16, 16);
    check_bulk(16, 1);
}

TEST(entity_new_bulk_hooked_values)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_comp_t tag = TECS_TAG(w, Tag);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ o, tag });
    Obj src[50];
    for (int i = 0; i < 50; i++)
        src[i] = obj(i * 10);
    tecs_entity_t ids[50];
    tecs_value_t vals[] = { { o, src }, { tag, NULL } };
    CHECK_ERR(tecs_new_bulk(w, a, 50, ids, 2, vals), TECS_OK);
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(TECS_GET(w, ids[i], o, Obj)->value, i * 10);
        CHECK(tecs_has(w, ids[i], tag));
    }
    CHECK_EQ(h.ctor, 50);
    CHECK_EQ(h.copy, 50);
    CHECK_EQ(h.bad, 0);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(entity_new_bulk_bad_input_creates_nothing)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    Position p[4] = { { 0, 0 } };
    tecs_entity_t ids[4] = { 0 };
    view before = look(w, NULL, 0, pos);
    CHECK_ERR(tecs_new_bulk(w, a, -1, ids, 0, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(w, NULL, 4, ids, 0, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(w, tecs_archetype_get(w2, 0, NULL), 4, ids, 0, NULL), TECS_EWORLD);
    CHECK_ERR(tecs_new_bulk(w, a, 4, ids, 1, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(w, a, 4, ids, 1, &(tecs_value_t){ vel, p }), TECS_ENOCOMP);
    CHECK_ERR(tecs_new_bulk(w, a, 4, ids, 1, &(tecs_value_t){ 77, p }), TECS_ENOCOMP);
    CHECK_ERR(tecs_new_bulk(w, a, 4, ids, 1, &(tecs_value_t){ pos, NULL }), TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(w, a, 4, ids, 2, (tecs_value_t[]){ { pos, p }, { pos, p } }),
              TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(NULL, a, 4, ids, 0, NULL), TECS_EINVAL);
    CHECK_SAME(look(w, NULL, 0, pos), before);
    CHECK_EQ(ids[0], 0);
    TW_CHECK(w);
    tw_free(w);
    tw_free(w2);
}

TEST(entity_destroy_runs_destructors)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &o);
    tecs_entity_t ids[40];
    CHECK_ERR(tecs_new_bulk(w, a, 40, ids, 0, NULL), TECS_OK);
    for (int i = 0; i < 40; i++)
        TECS_GET_MUT(w, ids[i], o, Obj)->value = i;
    for (int i = 0; i < 40; i += 3)
        CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    CHECK_EQ(h.dtor, 14);
    CHECK_EQ(hooks_live(&h), 26);
    for (int i = 0; i < 40; i++) {
        CHECK_EQ(tecs_is_alive(w, ids[i]), i % 3 != 0);
        if (i % 3)
            CHECK_EQ(TECS_GET(w, ids[i], o, Obj)->value, i);   /* survivors moved intact */
    }
    CHECK_EQ(h.bad, 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(entity_add_remove_set_get_has)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t e = tecs_new(w);
    CHECK(!tecs_has(w, e, pos));
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK(tecs_has(w, e, pos));
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 0);
    TECS_GET_MUT(w, e, pos, Position)->x = 3;
    CHECK_ERR(TECS_SET(w, e, vel, Velocity, { 1, 2 }), TECS_OK);   /* set adds */
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 3);                 /* kept on move */
    CHECK_EQ(TECS_GET(w, e, vel, Velocity)->y, 2);
    CHECK_ERR(TECS_SET(w, e, vel, Velocity, { 5, 6 }), TECS_OK);   /* set writes */
    CHECK_EQ(TECS_GET(w, e, vel, Velocity)->x, 5);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK(!tecs_has(w, e, pos));
    CHECK(tecs_get(w, e, pos) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_EQ(TECS_GET(w, e, vel, Velocity)->y, 6);
    const tecs_comp_t *comps;
    CHECK_EQ(tecs_archetype_components(tecs_entity_archetype(w, e), &comps), 1);
    CHECK_EQ(comps[0], vel);
    CHECK_ERR(tecs_remove(w, e, vel), TECS_OK);
    CHECK(tecs_entity_archetype(w, e) == tecs_archetype_get(w, 0, NULL));
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_set_copies_with_copy_hook)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new();
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_entity_t e = tecs_new(w);
    Obj v = obj(11);
    CHECK_ERR(tecs_set(w, e, o, &v), TECS_OK);
    CHECK_EQ(h.ctor, 1);
    CHECK_EQ(h.copy, 1);
    CHECK_EQ(TECS_GET(w, e, o, Obj)->value, 11);
    CHECK_EQ(v.magic, OBJ_LIVE);                   /* the source is untouched */
    v.value = 12;
    CHECK_ERR(tecs_set(w, e, o, &v), TECS_OK);
    CHECK_EQ(h.copy, 2);
    CHECK_EQ(TECS_GET(w, e, o, Obj)->value, 12);
    CHECK_EQ(h.bad, 0);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(entity_add_moves_values_with_move_hook)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new();
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, e[i], o, &(Obj){ OBJ_LIVE, 100 + i }), TECS_OK);
    }
    long moves = h.move;
    CHECK_ERR(tecs_add(w, e[0], pos), TECS_OK);
    /* e0's value moves out, and e2 moves into e0's old row. */
    CHECK_EQ(h.move, moves + 2);
    CHECK_ERR(tecs_add(w, e[0], vel), TECS_OK);
    CHECK_ERR(tecs_remove(w, e[0], pos), TECS_OK);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(TECS_GET(w, e[i], o, Obj)->value, 100 + i);
    CHECK_EQ(hooks_live(&h), 3);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(entity_second_move_uses_cached_edge)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 0);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t e[4];
    for (int i = 0; i < 4; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_add(w, e[0], pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e[0], vel), TECS_OK);
    CHECK_ERR(tecs_remove(w, e[0], vel), TECS_OK);
    CHECK_ERR(tecs_remove(w, e[0], pos), TECS_OK);
    int32_t archs = tecs_world_archetype_count(w);
    CHECK_EQ(archs, 3);
    long calls = al.calls;
    for (int i = 1; i < 4; i++) {
        CHECK_ERR(tecs_add(w, e[i], pos), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], vel), TECS_OK);
    }
    CHECK_ERR(tecs_remove(w, e[1], vel), TECS_OK);
    CHECK_EQ(tecs_world_archetype_count(w), archs);
    CHECK_EQ(al.calls, calls);                     /* chunks exist: no allocation */
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_bad_input_changes_nothing)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t ids[3];
    for (int i = 0; i < 3; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, ids[i], pos, Position, { (float)i, 1 }), TECS_OK);
    }
    tecs_entity_t dead = ids[2];
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);
    tecs_entity_t e = ids[0];
    view before = look(w, ids, 3, pos);
    tecs_entity_t never = tecs__make_id(500, 1);
    /* dead, never handed out, 0 */
    tecs_entity_t bad_ids[] = { dead, never, 0 };
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(tecs_destroy(w, bad_ids[i]), TECS_EDEAD);
        CHECK_ERR(tecs_add(w, bad_ids[i], vel), TECS_EDEAD);
        CHECK_ERR(tecs_remove(w, bad_ids[i], pos), TECS_EDEAD);
        CHECK_ERR(TECS_SET(w, bad_ids[i], pos, Position, { 9, 9 }), TECS_EDEAD);
        CHECK(tecs_get(w, bad_ids[i], pos) == NULL);
        CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
        CHECK(tecs_get_mut(w, bad_ids[i], pos) == NULL);
        CHECK(!tecs_has(w, bad_ids[i], pos));
        CHECK(tecs_entity_archetype(w, bad_ids[i]) == NULL);
        CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    }
    /* unknown components: 0, never registered, past the table */
    tecs_comp_t bad_comps[] = { 0, 77, TECS_MAX_COMPONENTS + 5 };
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(tecs_add(w, e, bad_comps[i]), TECS_ENOCOMP);
        CHECK_ERR(tecs_remove(w, e, bad_comps[i]), TECS_ENOCOMP);
        CHECK_ERR(tecs_set(w, e, bad_comps[i], &(Position){ 0, 0 }), TECS_ENOCOMP);
        CHECK(tecs_get(w, e, bad_comps[i]) == NULL);
        CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
        CHECK(!tecs_has(w, e, bad_comps[i]));
    }
    CHECK_ERR(tecs_add(w, e, pos), TECS_EEXIST);
    CHECK_ERR(tecs_remove(w, e, vel), TECS_ENOENT);
    CHECK(tecs_get(w, e, vel) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_ERR(tecs_set(w, e, pos, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_set(w, e, vel, NULL), TECS_EINVAL);
    CHECK(tecs_new_in(w, tecs_archetype_get(w2, 1, (tecs_comp_t[]){
        TECS_COMPONENT(w2, Position) })) == 0);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK_ERR(tecs_add(NULL, e, pos), TECS_EINVAL);
    CHECK_ERR(tecs_remove(NULL, e, pos), TECS_EINVAL);
    CHECK_ERR(tecs_set(NULL, e, pos, &(Position){ 0, 0 }), TECS_EINVAL);
    CHECK(tecs_get(NULL, e, pos) == NULL);
    CHECK(!tecs_has(NULL, e, pos));
    CHECK_SAME(look(w, ids, 3, pos), before);
    CHECK_EQ(tecs_world_entity_count(w2), 0);
    TW_CHECK(w);
    tw_free(w);
    tw_free(w2);
}

TEST(entity_recycled_id_is_refused)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t old = tecs_new(w);
    CHECK_ERR(TECS_SET(w, old, pos, Position, { 1, 1 }), TECS_OK);
    CHECK_ERR(tecs_destroy(w, old), TECS_OK);
    tecs_entity_t now = tecs_new(w);
    CHECK_ERR(TECS_SET(w, now, pos, Position, { 2, 2 }), TECS_OK);
    view before = look(w, &now, 1, pos);
    CHECK_ERR(tecs_destroy(w, old), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, old, pos), TECS_EDEAD);
    CHECK_ERR(TECS_SET(w, old, pos, Position, { 3, 3 }), TECS_EDEAD);
    CHECK(tecs_get(w, old, pos) == NULL);
    CHECK_SAME(look(w, &now, 1, pos), before);
    CHECK_EQ(TECS_GET(w, now, pos, Position)->x, 2);
    tw_free(w);
}

TEST(entity_generation_exhausted_slot_retires)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t e = tecs_new(w);
    w->ei.recs[TECS_ENTITY_INDEX(e)].gen = UINT32_MAX;   /* pretend 4e9 reuses */
    e = tecs__make_id(TECS_ENTITY_INDEX(e), UINT32_MAX);
    CHECK(tecs_is_alive(w, e));
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK(!tecs_is_alive(w, e));
    tecs_entity_t f = tecs_new(w);
    CHECK(TECS_ENTITY_INDEX(f) != TECS_ENTITY_INDEX(e));   /* never reused */
    CHECK(!tecs_is_alive(w, tecs__make_id(TECS_ENTITY_INDEX(e), 0)));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct init_changes {
    tecs_world_t *w;
    tecs_comp_t vel;
    tecs_entity_t made;
    bool destroy_self;
} init_changes;

static void init_with_changes(tecs_init_t *init, void *ctx)
{
    init_changes *c = ctx;
    tecs_entity_t self = tecs_init_entity(init);
    c->made = tecs_new(c->w);
    CHECK(!tecs_is_alive(c->w, c->made));
    CHECK_ERR(tecs_add(c->w, self, c->vel), TECS_OK);
    if (c->destroy_self)
        CHECK_ERR(tecs_destroy(c->w, self), TECS_OK);
}

/* Changes made inside an initializer wait until the entity is built. */
TEST(entity_new_with_changes_inside_are_queued)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    init_changes c = { .w = w, .vel = TECS_COMPONENT(w, Velocity) };
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t e = tecs_new_with(w, a, init_with_changes, &c);
    CHECK(tecs_is_alive(w, e) && tecs_is_alive(w, c.made));
    CHECK(tecs_has(w, e, c.vel) && tecs_has(w, e, pos));
    TW_CHECK(w);
    c.destroy_self = true;
    tecs_entity_t f = tecs_new_with(w, a, init_with_changes, &c);
    CHECK(f != 0);
    CHECK(!tecs_is_alive(w, f));
    CHECK(tecs_is_alive(w, c.made));
    CHECK_EQ(tecs_world_entity_count(w), 3);
    CHECK_EQ(tecs_archetype_entity_count(a), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* Random adds and removes over hooked and plain columns: every value
** survives every move, and the hooks see each value constructed and
** destroyed once. */
TEST(entity_random_moves_keep_values)
{
    enum { NE = 40, NK = 5, OPS = 3000 };
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t c[NK];
    for (int k = 0; k < NK - 1; k++) {
        char name[8] = { 'o', (char)('0' + k), 0 };
        c[k] = obj_component(w, name, &h);
    }
    c[NK - 1] = TECS_COMPONENT(w, Health);
    tecs_entity_t e[NE];
    int32_t val[NE][NK];
    unsigned mask[NE] = { 0 };
    for (int i = 0; i < NE; i++)
        e[i] = tecs_new(w);
    uint64_t seed = 1234;
    for (int op = 0; op < OPS; op++) {
        int i = (int)(tw_rand(&seed) % NE), k = (int)(tw_rand(&seed) % NK);
        if (mask[i] >> k & 1) {
            CHECK_ERR(tecs_remove(w, e[i], c[k]), TECS_OK);
            mask[i] &= ~(1u << k);
        } else {
            val[i][k] = op;
            if (k < NK - 1)
                CHECK_ERR(tecs_set(w, e[i], c[k], &(Obj){ OBJ_LIVE, op }), TECS_OK);
            else
                CHECK_ERR(TECS_SET(w, e[i], c[k], Health, { op }), TECS_OK);
            mask[i] |= 1u << k;
        }
        long live = 0;
        for (int j = 0; j < NE; j++) {
            for (int q = 0; q < NK; q++) {
                CHECK_EQ(tecs_has(w, e[j], c[q]), mask[j] >> q & 1);
                if (!(mask[j] >> q & 1))
                    continue;
                const int32_t *v = q < NK - 1 ? &TECS_GET(w, e[j], c[q], Obj)->value
                                              : &TECS_GET(w, e[j], c[q], Health)->hp;
                CHECK_EQ(*v, val[j][q]);
                live += q < NK - 1;
            }
        }
        CHECK_EQ(hooks_live(&h), live);
    }
    CHECK_EQ(h.bad, 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

typedef struct init_probe { tecs_query_t *q; int32_t seen; tecs_err_t check; } init_probe;

static void init_look_around(tecs_init_t *init, void *ctx)
{
    (void)init;
    init_probe *p = ctx;
    p->seen = tecs_query_count(p->q) + tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(p->q), .query = p->q) }, NULL, 0);
    p->check = tecs_world_check(tecs_query_world(p->q));
}

/* Nothing sees an entity while its initializer runs. */
TEST(entity_new_with_is_invisible_while_built)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    init_probe p = { .q = tecs_query_all(w, 1, &pos), .seen = -1 };
    tecs_entity_t e = tecs_new_with(w, a, init_look_around, &p);
    CHECK_EQ(p.seen, 0);
    CHECK_EQ(p.check, TECS_OK);
    CHECK(tecs_is_alive(w, e));
    CHECK_EQ(tecs_query_count(p.q), 1);
    tecs_new_with(w, a, init_look_around, &p);
    CHECK_EQ(p.seen, 2);                          /* the first one only */
    TW_CHECK(w);
    tw_free(w);
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
    int live = 0;
    tecs_comp_t name = text_component(w, &live);
    tecs_entity_t e[50];
    for (int i = 0; i < 50; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], name, Text, { "x" }), TECS_OK);
    }
    CHECK_EQ(live, 50);
    for (int i = 0; i < 50; i++)
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, 0);
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
        CHECK(strcmp(TECS_GET(w, e[i], name, Text)->s, "x") == 0);
    }
    for (int i = 0; i < 50; i += 2)
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
    CHECK_EQ(live, 50);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live, 0);
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
