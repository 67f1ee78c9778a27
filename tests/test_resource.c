/* World resources: set, get, has, remove, modified; their lifecycle hooks,
** component hooks and observers (entity 0); calls from callbacks; out of
** memory; world free. */
#include "hooks.h"

typedef struct Time { double now, delta; } Time;
typedef struct Wide { _Alignas(32) float v[8]; } Wide;

/* ---- a log of events ---------------------------------------------------- */

typedef struct ev_rec { tecs_event_kind_t kind; tecs_entity_t e; tecs_comp_t c; double v; } ev_rec;

typedef struct ev_log {
    ev_rec r[64];
    int n;
    int tag;                    /* which callback logged (for order checks) */
} ev_log;

static void log_ev(const tecs_event_t *ev)
{
    ev_log *l = ev->ctx;
    CHECK(l->n < 64);
    CHECK(tecs_is_deferred(ev->world));
    l->r[l->n++] = (ev_rec){ ev->kind, ev->entity, ev->comp,
                             ev->value && ev->comp ? ((const Time *)ev->value)->now : -1 };
}

static tecs_comp_t time_comp(tecs_world_t *w)
{
    tecs_comp_t t = TECS_COMPONENT(w, Time);
    CHECK(t != 0);
    return t;
}

TEST(resource_set_get_has_remove)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w), pos = TECS_COMPONENT(w, Position);
    int32_t archs = tecs_world_archetype_count(w);
    CHECK(!tecs_resource_has(w, t));
    CHECK(tecs_resource_get(w, t) == NULL);
    CHECK_EQ(tecs_resource_count(w), 0);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 1.0, 0.5 }), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(tecs_resource_has(w, t));
    CHECK_EQ(tecs_resource_count(w), 1);
    const Time *tm = TECS_RESOURCE_GET(w, t, Time);
    CHECK(tm != NULL && tm->now == 1.0 && tm->delta == 0.5);
    /* A set writes in place: the pointer stays valid. */
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 2.0, 0.25 }), TECS_OK);
    CHECK(TECS_RESOURCE_GET(w, t, Time) == tm && tm->now == 2.0);
    TECS_RESOURCE_GET_MUT(w, t, Time)->now = 3.0;
    CHECK(tm->now == 3.0);
    /* No entity, archetype or query sees it. */
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_EQ(tecs_world_archetype_count(w), archs);
    tecs_query_t *q = tecs_query_all(w, 1, &t);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(!tecs_iter_next(&it));
    tecs_query_free(q);
    tecs_entity_t e = tecs_new(w);
    CHECK(!tecs_has(w, e, t));
    CHECK(tecs_get(w, e, t) == NULL);
    CHECK(!tecs_resource_has(w, pos));
    TW_CHECK(w);
    CHECK_ERR(tecs_resource_remove(w, t), TECS_OK);
    CHECK(!tecs_resource_has(w, t));
    CHECK(tecs_resource_get(w, t) == NULL);
    CHECK_EQ(tecs_resource_count(w), 0);
    CHECK_ERR(tecs_resource_remove(w, t), TECS_ENOENT);
    /* Set again after a remove; left for the world to free. */
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 4.0, 0 }), TECS_OK);
    CHECK(TECS_RESOURCE_GET(w, t, Time)->now == 4.0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(resource_aligned_to_its_component)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c = TECS_COMPONENT(w, Wide);
    tecs_comp_t big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Big", .size = 128, .align = 64 });
    CHECK_ERR(tecs_resource_set(w, c, &(Wide){ { 1, 2, 3, 4, 5, 6, 7, 8 } }), TECS_OK);
    unsigned char b[128] = { 9 };
    CHECK_ERR(tecs_resource_set(w, big, b), TECS_OK);
    const Wide *v = tecs_resource_get(w, c);
    CHECK((uintptr_t)v % 32 == 0 && v->v[7] == 8);
    CHECK((uintptr_t)tecs_resource_get(w, big) % 64 == 0);
    CHECK(memcmp(tecs_resource_get(w, big), b, sizeof b) == 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(resource_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w), tag = TECS_TAG(w, Paused);
    Time v = { 1, 1 };
    CHECK_ERR(tecs_resource_set(NULL, t, &v), TECS_EINVAL);
    CHECK_ERR(tecs_resource_remove(NULL, t), TECS_EINVAL);
    CHECK_ERR(tecs_resource_modified(NULL, t), TECS_EINVAL);
    CHECK(tecs_resource_get(NULL, t) == NULL && tecs_resource_get_mut(NULL, t) == NULL);
    CHECK(!tecs_resource_has(NULL, t));
    CHECK_EQ(tecs_resource_count(NULL), 0);
    size_t mem = tecs_world_memory(w);
    CHECK_ERR(tecs_resource_set(w, 0, &v), TECS_ENOCOMP);
    CHECK_ERR(tecs_resource_set(w, 999, &v), TECS_ENOCOMP);
    CHECK_ERR(tecs_resource_set(w, TECS_MAX_COMPONENTS + 5, &v), TECS_ENOCOMP);
    CHECK_ERR(tecs_resource_set(w, t, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_resource_remove(w, 999), TECS_ENOCOMP);
    CHECK_ERR(tecs_resource_remove(w, t), TECS_ENOENT);
    CHECK_ERR(tecs_resource_modified(w, 999), TECS_ENOCOMP);
    CHECK_ERR(tecs_resource_modified(w, t), TECS_ENOENT);
    CHECK_EQ(tecs_world_memory(w), mem);            /* nothing made */
    CHECK_EQ(tecs_resource_count(w), 0);
    /* Reads leave the last error alone: they write nothing to the world. */
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK(tecs_resource_get(w, t) == NULL && tecs_resource_get(w, 999) == NULL);
    CHECK(tecs_resource_get_mut(w, t) == NULL && !tecs_resource_has(w, 999));
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 1, 2 }), TECS_OK);
    tecs_clear_error(w);
    CHECK(tecs_resource_get(w, t) != NULL);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    /* A tag: has / set / remove work, no value, no modified. */
    CHECK_ERR(tecs_resource_set(w, tag, NULL), TECS_OK);
    CHECK(tecs_resource_has(w, tag) && tecs_resource_get(w, tag) == NULL);
    CHECK_ERR(tecs_resource_set(w, tag, &v), TECS_OK);  /* a value is ignored */
    CHECK_ERR(tecs_resource_modified(w, tag), TECS_EINVAL);
    CHECK_EQ(tecs_resource_count(w), 2);
    TW_CHECK(w);
    CHECK_ERR(tecs_resource_remove(w, tag), TECS_OK);
    CHECK(!tecs_resource_has(w, tag));
    tw_free(w);
}

TEST(resource_lifecycle_hooks_build_and_free_the_value)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    hook_counts h = { 0 };
    int live = 0;
    tecs_comp_t o = obj_component(w, "Obj", &h), txt = text_component(w, &live);
    CHECK_ERR(tecs_resource_set(w, o, &(Obj){ OBJ_LIVE, 5 }), TECS_OK);
    CHECK_EQ(h.ctor, 1);
    CHECK_EQ(h.copy, 1);
    CHECK_EQ(((const Obj *)tecs_resource_get(w, o))->value, 5);
    CHECK_ERR(tecs_resource_set(w, o, &(Obj){ OBJ_LIVE, 6 }), TECS_OK);
    CHECK_EQ(h.ctor, 1);
    CHECK_EQ(h.copy, 2);
    CHECK_ERR(tecs_resource_remove(w, o), TECS_OK);
    CHECK_EQ(h.dtor, 1);
    CHECK_ERR(tecs_resource_set(w, o, &(Obj){ OBJ_LIVE, 7 }), TECS_OK);
    /* Values that own heap memory: the world frees them with itself. */
    CHECK_ERR(tecs_resource_set(w, txt, &(Text){ "level one" }), TECS_OK);
    CHECK_ERR(tecs_resource_set(w, txt, &(Text){ "level two" }), TECS_OK);
    CHECK_EQ(live, 1);
    CHECK(strcmp(((const Text *)tecs_resource_get(w, txt))->s, "level two") == 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live, 0);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

TEST(resource_component_hooks_fire_with_entity_zero)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w);
    ev_log l = { .n = 0 };
    CHECK_ERR(tecs_component_hooks(w, t, &(tecs_hooks_t){ .on_add = log_ev, .on_set = log_ev,
                                                            .on_remove = log_ev, .ctx = &l }),
              TECS_OK);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 1, 0 }), TECS_OK);
    CHECK_EQ(l.n, 2);
    CHECK(l.r[0].kind == TECS_ON_ADD && l.r[0].e == 0 && l.r[0].c == t && l.r[0].v == 1);
    CHECK(l.r[1].kind == TECS_ON_SET && l.r[1].e == 0 && l.r[1].v == 1);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 2, 0 }), TECS_OK);
    CHECK(l.n == 3 && l.r[2].kind == TECS_ON_SET && l.r[2].v == 2);
    TECS_RESOURCE_GET_MUT(w, t, Time)->now = 3;           /* not reported ... */
    CHECK_EQ(l.n, 3);
    CHECK_ERR(tecs_resource_modified(w, t), TECS_OK);      /* ... until now */
    CHECK(l.n == 4 && l.r[3].kind == TECS_ON_SET && l.r[3].v == 3);
    CHECK_ERR(tecs_resource_remove(w, t), TECS_OK);
    CHECK(l.n == 5 && l.r[4].kind == TECS_ON_REMOVE && l.r[4].e == 0 && l.r[4].v == 3);
    /* The same hooks still fire for entities, with the entity. */
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, t, Time, { 9, 0 }), TECS_OK);
    CHECK(l.n == 7 && l.r[5].e == e && l.r[6].e == e);
    /* At world free: announced with entity 0, after the entities. */
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 4, 0 }), TECS_OK);
    l.n = 0;
    tw_free(w);
    CHECK_EQ(l.n, 2);
    CHECK(l.r[0].kind == TECS_ON_REMOVE && l.r[0].e == e);
    CHECK(l.r[1].kind == TECS_ON_REMOVE && l.r[1].e == 0 && l.r[1].v == 4);
}

TEST(resource_observers_fire_only_with_the_resource_flag)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w), tag = TECS_TAG(w, Paused);
    ev_log res = { .n = 0 }, ent = { .n = 0 };
    tecs_observer_t ids[4];
    tecs_event_kind_t kinds[3] = { TECS_ON_ADD, TECS_ON_SET, TECS_ON_REMOVE };
    for (int i = 0; i < 3; i++) {
        ids[i] = tecs_observer_new(w, &(tecs_observer_desc_t){ .event = kinds[i], .comp = t,
                                   .callback = log_ev, .ctx = &res, .resource = true });
        CHECK(ids[i] != 0);
    }
    ids[3] = tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = t,
                               .callback = log_ev, .ctx = &ent });
    CHECK(ids[3] != 0);
    TW_CHECK(w);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 1, 0 }), TECS_OK);
    CHECK_EQ(res.n, 2);
    CHECK(res.r[0].kind == TECS_ON_ADD && res.r[0].e == 0 && res.r[1].kind == TECS_ON_SET);
    CHECK_EQ(ent.n, 0);                 /* an entity observer never sees it */
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, t, Time, { 2, 0 }), TECS_OK);
    CHECK_EQ(res.n, 2);                 /* a resource observer never sees entities */
    CHECK(ent.n == 1 && ent.r[0].e == e);
    CHECK_ERR(tecs_resource_remove(w, t), TECS_OK);
    CHECK(res.n == 3 && res.r[2].kind == TECS_ON_REMOVE && res.r[2].v == 1);
    CHECK_ERR(tecs_observer_free(w, ids[1]), TECS_OK);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 3, 0 }), TECS_OK);
    CHECK(res.n == 4 && res.r[3].kind == TECS_ON_ADD);
    TW_CHECK(w);
    /* Refused forms: membership events, terms, a query. */
    tecs_query_t *q = tecs_query_all(w, 1, &t);
    tecs_observer_desc_t bad[3] = {
        { .event = TECS_ON_ENTER, .terms = &(tecs_term_t){ .comp = t }, .term_count = 1,
          .callback = log_ev, .resource = true },
        { .event = TECS_ON_ADD, .comp = t, .terms = &(tecs_term_t){ .comp = tag },
          .term_count = 1, .callback = log_ev, .resource = true },
        { .event = TECS_ON_ADD, .comp = t, .query = q, .callback = log_ev, .resource = true },
    };
    for (int i = 0; i < 3; i++) {
        CHECK(tecs_observer_new(w, &bad[i]) == 0);
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    }
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = tag,
                            .callback = log_ev, .resource = true }) == 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* A tag resource: ADD and REMOVE, no value. */
    ev_log tl = { .n = 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = tag,
                            .callback = log_ev, .ctx = &tl, .resource = true }) != 0);
    CHECK_ERR(tecs_resource_set(w, tag, NULL), TECS_OK);
    CHECK_ERR(tecs_resource_set(w, tag, NULL), TECS_OK);   /* present: nothing fires */
    CHECK(tl.n == 1 && tl.r[0].e == 0 && tl.r[0].v == -1);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- calls from callbacks ------------------------------------------------ */

typedef struct cb_ctx {
    tecs_world_t *w;
    tecs_comp_t t, other;
    int mode;
    int calls;
    tecs_err_t got[4];
    bool saw_at_once;
} cb_ctx;

/* From an entity observer, a system, an iteration: set applies at once. */
static void set_other(const tecs_event_t *ev)
{
    cb_ctx *x = ev->ctx;
    x->got[0] = TECS_RESOURCE_SET(x->w, x->other, Time, { 42, 0 });
    x->saw_at_once = tecs_resource_has(x->w, x->other) &&
                     TECS_RESOURCE_GET(x->w, x->other, Time)->now == 42;
    x->got[1] = tecs_resource_remove(x->w, x->t);
    x->saw_at_once = x->saw_at_once && !tecs_resource_has(x->w, x->t);
    x->calls++;
}

static void system_run(tecs_iter_t *it)
{
    cb_ctx *x = it->ctx;
    const Time *tm = TECS_RESOURCE_GET(it->world, x->t, Time);
    CHECK(tm != NULL);
    x->got[0] = TECS_RESOURCE_SET(it->world, x->t, Time, { tm->now + it->delta_time, 0 });
    x->calls++;
}

TEST(resource_calls_from_observers_systems_and_iterations)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w), o = TECS_COMPONENT_NAMED(w, "Clock", Time), pos = TECS_COMPONENT(w, Position);
    cb_ctx x = { .w = w, .t = t, .other = o };
    ev_log l = { .n = 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = o,
                            .callback = log_ev, .ctx = &l, .resource = true }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = pos,
                            .callback = set_other, .ctx = &x }) != 0);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 0, 0 }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 1, 2 }), TECS_OK);
    CHECK_EQ(x.calls, 1);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK_ERR(x.got[1], TECS_OK);
    CHECK(x.saw_at_once);
    CHECK(l.n == 1 && l.r[0].e == 0);           /* its observer ran inside */
    CHECK(!tecs_resource_has(w, t) && tecs_resource_has(w, o));
    /* A system reads and writes a resource every frame. */
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 0, 0 }), TECS_OK);
    x.calls = 0;
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "clock", .run = system_run,
                          .ctx = &x }) != 0);
    CHECK_ERR(tecs_progress(w, 0.5), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(x.calls, 2);
    CHECK(TECS_RESOURCE_GET(w, t, Time)->now == 0.75);
    /* Inside an open iteration: at once, the rows stay put. */
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_resource_remove(w, o), TECS_OK);
    CHECK(!tecs_resource_has(w, o));
    CHECK_ERR(TECS_RESOURCE_SET(w, o, Time, { 5, 0 }), TECS_OK);
    CHECK(tecs_resource_has(w, o) && l.n == 2);
    CHECK(!tecs_iter_next(&it));
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* An entity's lifecycle hook sets and removes a resource: at once. */
static cb_ctx *life_ctx;

static void life_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Health));
    cb_ctx *x = life_ctx;
    x->got[0] = TECS_RESOURCE_SET(x->w, x->t, Time, { 7, 0 });
    x->saw_at_once = TECS_RESOURCE_GET(x->w, x->t, Time) != NULL &&
                     TECS_RESOURCE_GET(x->w, x->t, Time)->now == 7;
    x->calls++;
}

TEST(resource_calls_from_lifecycle_hooks_apply_at_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w);
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Health", .size = sizeof(Health), .align = _Alignof(Health), .ctor = life_ctor });
    cb_ctx x = { .w = w, .t = t };
    life_ctx = &x;
    ev_log l = { .n = 0 };
    CHECK_ERR(tecs_component_hooks(w, t, &(tecs_hooks_t){ .on_add = log_ev, .ctx = &l }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, hp), TECS_OK);
    CHECK_EQ(x.calls, 1);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK(x.saw_at_once);
    CHECK(l.n == 1 && l.r[0].e == 0);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- a resource's own callbacks ------------------------------------------ */

static void own_cb(const tecs_event_t *ev)
{
    cb_ctx *x = ev->ctx;
    tecs_world_t *w = ev->world;
    int k = x->calls++;
    CHECK(ev->entity == 0);
    switch (x->mode) {
    case 1:     /* on_remove: remove again is OK, set and modified refused */
        x->got[0] = tecs_resource_remove(w, x->t);
        x->got[1] = TECS_RESOURCE_SET(w, x->t, Time, { 9, 0 });
        x->got[2] = tecs_resource_modified(w, x->t);
        x->saw_at_once = tecs_resource_has(w, x->t) && TECS_RESOURCE_GET(w, x->t, Time)->now == 1;
        break;
    case 2:     /* on_set: set itself once more, at once (guarded) */
        if (k == 0)
            x->got[0] = TECS_RESOURCE_SET(w, x->t, Time, { 2, 0 });
        break;
    case 3:     /* on_add: remove it; later callbacks of the set must not run */
        x->got[0] = tecs_resource_remove(w, x->t);
        break;
    case 4:     /* on_add: remove and set again */
        if (k == 0) {
            x->got[0] = tecs_resource_remove(w, x->t);
            x->got[1] = TECS_RESOURCE_SET(w, x->t, Time, { 8, 0 });
        }
        break;
    default:
        break;
    }
}

static tecs_world_t *own_world(cb_ctx *x, tecs_event_kind_t kind, int mode, ev_log *l)
{
    tecs_world_t *w = tw_new();
    *x = (cb_ctx){ .w = w, .t = time_comp(w), .mode = mode };
    tecs_hooks_t h = { .ctx = x };
    if (kind == TECS_ON_ADD)
        h.on_add = own_cb;
    else if (kind == TECS_ON_SET)
        h.on_set = own_cb;
    else
        h.on_remove = own_cb;
    CHECK_ERR(tecs_component_hooks(w, x->t, &h), TECS_OK);
    /* An observer of each kind after the hook, logging what it is handed. */
    for (int k = TECS_ON_ADD; k <= TECS_ON_REMOVE; k++)
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = (tecs_event_kind_t)k,
                                .comp = x->t, .callback = log_ev, .ctx = l,
                                .resource = true }) != 0);
    return w;
}

TEST(resource_reentry_from_its_own_hooks)
{
    cb_ctx x;
    ev_log l = { .n = 0 };
    /* Remove inside its own on_remove: TECS_OK, the removal goes on once. */
    tecs_world_t *w = own_world(&x, TECS_ON_REMOVE, 1, &l);
    CHECK_ERR(TECS_RESOURCE_SET(w, x.t, Time, { 1, 0 }), TECS_OK);
    CHECK_ERR(tecs_resource_remove(w, x.t), TECS_OK);
    CHECK_EQ(x.calls, 1);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK_ERR(x.got[1], TECS_EBUSY);
    CHECK_ERR(x.got[2], TECS_EBUSY);
    CHECK(x.saw_at_once);               /* the value is there while it is announced */
    CHECK(!tecs_resource_has(w, x.t));
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    TW_CHECK(w);
    tw_free(w);

    /* Set inside its own on_set: runs at once, on_set again. */
    l.n = 0;
    w = own_world(&x, TECS_ON_SET, 2, &l);
    CHECK_ERR(TECS_RESOURCE_SET(w, x.t, Time, { 1, 0 }), TECS_OK);
    CHECK_EQ(x.calls, 2);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK(TECS_RESOURCE_GET(w, x.t, Time)->now == 2);
    /* ADD, then the inner set's SET (value 2), then the outer's SET: the
    ** value it hands is the value now. */
    CHECK(l.n == 3 && l.r[0].kind == TECS_ON_ADD && l.r[1].kind == TECS_ON_SET &&
          l.r[2].kind == TECS_ON_SET && l.r[1].v == 2 && l.r[2].v == 2);
    TW_CHECK(w);
    tw_free(w);

    /* Remove inside its own on_add: the delivery stops, no SET, no observer
    ** is handed the freed value. */
    l.n = 0;
    w = own_world(&x, TECS_ON_ADD, 3, &l);
    CHECK_ERR(TECS_RESOURCE_SET(w, x.t, Time, { 1, 0 }), TECS_OK);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK(!tecs_resource_has(w, x.t));
    CHECK(l.n == 1 && l.r[0].kind == TECS_ON_REMOVE);  /* only the removal's */
    TW_CHECK(w);
    tw_free(w);

    /* Remove and set again inside on_add: the new one's events fire, the
    ** old delivery stops. */
    l.n = 0;
    w = own_world(&x, TECS_ON_ADD, 4, &l);
    CHECK_ERR(TECS_RESOURCE_SET(w, x.t, Time, { 1, 0 }), TECS_OK);
    CHECK_ERR(x.got[0], TECS_OK);
    CHECK_ERR(x.got[1], TECS_OK);
    CHECK(TECS_RESOURCE_GET(w, x.t, Time)->now == 8);
    CHECK(l.n == 3 && l.r[0].kind == TECS_ON_REMOVE && l.r[1].kind == TECS_ON_ADD &&
          l.r[2].kind == TECS_ON_SET && l.r[2].v == 8);
    TW_CHECK(w);
    tw_free(w);
}

/* Obj's lifecycle hooks try to change their own resource. */
static cb_ctx *own_life;

static void own_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    obj_copy(dst, src, n, ctx);
    cb_ctx *x = own_life;
    if (x->mode == 0)
        return;
    x->got[0] = tecs_resource_set(x->w, x->t, &(Obj){ OBJ_LIVE, 1 });
    x->got[1] = tecs_resource_remove(x->w, x->t);
    x->got[2] = tecs_resource_modified(x->w, x->t);
    x->saw_at_once = tecs_resource_get(x->w, x->t) == dst;
    x->calls++;
}

TEST(resource_own_lifecycle_hooks_cannot_change_it)
{
    tecs_world_t *w = tw_new();
    hook_counts h = { 0 };
    tecs_comp_t o = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Obj), .align = _Alignof(Obj),
        .ctor = obj_ctor, .dtor = obj_dtor, .copy = own_copy, .move = obj_move, .hook_ctx = &h });
    cb_ctx x = { .w = w, .t = o, .mode = 1 };
    own_life = &x;
    CHECK_ERR(tecs_resource_set(w, o, &(Obj){ OBJ_LIVE, 3 }), TECS_OK);
    CHECK_EQ(x.calls, 1);
    CHECK_ERR(x.got[0], TECS_EBUSY);
    CHECK_ERR(x.got[1], TECS_EBUSY);
    CHECK_ERR(x.got[2], TECS_EBUSY);
    CHECK(x.saw_at_once);
    CHECK_EQ(((const Obj *)tecs_resource_get(w, o))->value, 3);
    CHECK_ERR(tecs_resource_set(w, o, &(Obj){ OBJ_LIVE, 4 }), TECS_OK);
    CHECK_EQ(x.calls, 2);
    CHECK_ERR(x.got[1], TECS_EBUSY);
    CHECK_EQ(((const Obj *)tecs_resource_get(w, o))->value, 4);
    x.mode = 0;
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

/* ---- world free ---------------------------------------------------------- */

static void free_cb(const tecs_event_t *ev)
{
    cb_ctx *x = ev->ctx;
    if (ev->entity != 0) {          /* an entity's on_remove reads the resource */
        x->saw_at_once = TECS_RESOURCE_GET(ev->world, x->other, Time) != NULL;
        return;
    }
    x->got[0] = TECS_RESOURCE_SET(ev->world, x->other, Time, { 1, 0 });
    x->got[1] = tecs_resource_remove(ev->world, x->other);
    x->got[2] = tecs_resource_remove(ev->world, ev->comp);
    x->calls++;
}

TEST(resource_world_free_announces_and_refuses_changes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = time_comp(w), o = TECS_COMPONENT_NAMED(w, "Clock", Time);
    cb_ctx x = { .w = w, .t = t, .other = o };
    CHECK_ERR(tecs_component_hooks(w, t, &(tecs_hooks_t){ .on_remove = free_cb, .ctx = &x }),
              TECS_OK);
    CHECK_ERR(TECS_RESOURCE_SET(w, t, Time, { 1, 0 }), TECS_OK);
    CHECK_ERR(TECS_RESOURCE_SET(w, o, Time, { 1, 0 }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, t, Time, { 2, 0 }), TECS_OK);
    tw_free(w);
    CHECK(x.saw_at_once);
    CHECK_EQ(x.calls, 1);
    CHECK_ERR(x.got[0], TECS_EBUSY);
    CHECK_ERR(x.got[1], TECS_EBUSY);
    CHECK_ERR(x.got[2], TECS_EBUSY);
}

/* ---- out of memory ------------------------------------------------------- */

/* Each allocation of a workload of sets fails in turn: the failing set
** reports TECS_ENOMEM and changes nothing; the workload then completes. */
TEST(resource_set_out_of_memory_changes_nothing)
{
    for (long k = 1;; k++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 0);
        int live = 0;
        hook_counts h = { 0 };
        tecs_comp_t t = time_comp(w), txt = text_component(w, &live);
        tecs_comp_t o = obj_component(w, "Obj", &h), tag = TECS_TAG(w, Paused);
        tecs_comp_t far = tecs_component_new(w, &(tecs_component_desc_t){
            .name = "Far", .size = 8, .align = 8, .id = 3000 });
        ev_log l = { .n = 0 };
        CHECK(far != 0 && tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD,
                          .comp = o, .callback = log_ev, .ctx = &l, .resource = true }) != 0);
        a.fail_at = a.calls + k;
        int done = 0;
        struct { tecs_comp_t c; const void *v; } steps[] = {
            { t, &(Time){ 1, 2 } }, { tag, NULL }, { txt, &(Text){ "x" } },
            { o, &(Obj){ OBJ_LIVE, 4 } }, { far, &(double){ 5 } }, { t, &(Time){ 3, 4 } },
        };
        int nsteps = (int)(sizeof steps / sizeof steps[0]);
        for (int i = 0; i < nsteps; i++) {
            int32_t n0 = tecs_resource_count(w);
            size_t mem = tecs_world_memory(w);
            bool had = tecs_resource_has(w, steps[i].c);
            long ctors = h.ctor;
            int events = l.n;
            tecs_err_t err = tecs_resource_set(w, steps[i].c, steps[i].v);
            if (err == TECS_ENOMEM) {
                CHECK(a.failures > 0);
                CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
                CHECK_EQ(tecs_resource_count(w), n0);
                CHECK(tecs_resource_has(w, steps[i].c) == had);
                CHECK(tecs_world_memory(w) >= mem);      /* a table may have grown */
                CHECK_EQ(h.ctor, ctors);
                CHECK_EQ(l.n, events);
                TW_CHECK(w);
                CHECK_ERR(tecs_resource_set(w, steps[i].c, steps[i].v), TECS_OK);
            } else {
                CHECK_ERR(err, TECS_OK);
            }
            done++;
        }
        CHECK_EQ(done, nsteps);
        CHECK_EQ(tecs_resource_count(w), 5);
        CHECK(TECS_RESOURCE_GET(w, t, Time)->now == 3);
        CHECK(strcmp(((const Text *)tecs_resource_get(w, txt))->s, "x") == 0);
        CHECK_EQ(l.n, 1);
        TW_CHECK(w);
        long failures = a.failures;
        tw_free(w);
        CHECK_EQ(live, 0);
        CHECK_EQ(hooks_live(&h), 0);
        if (failures == 0)
            break;
    }
}

/* ---- inside the world's allocator ----------------------------------------- */

typedef struct spy_alloc {
    tw_alloc a;
    tecs_world_t *w;
    tecs_comp_t t;
    bool armed;
    int calls;
    bool read_none;
    tecs_err_t set, rm;
} spy_alloc;

static void *spy_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    spy_alloc *s = ud;
    if (s->armed && s->w) {
        s->armed = false;
        s->calls++;
        s->read_none = tecs_resource_get(s->w, s->t) == NULL && !tecs_resource_has(s->w, s->t) &&
                       tecs_resource_get_mut(s->w, s->t) == NULL;
        s->set = TECS_RESOURCE_SET(s->w, s->t, Time, { 5, 5 });
        s->rm = tecs_resource_remove(s->w, s->t);
    }
    return tw_alloc_fn(&s->a, ptr, osize, nsize);
}

/* Inside the allocator the world is half changed: reads give nothing,
** changes are refused. */
TEST(resource_calls_from_inside_the_allocator)
{
    spy_alloc s = { .a = { 0 } };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = spy_fn, .alloc_ud = &s });
    CHECK(w != NULL);
    s.w = w;
    s.t = time_comp(w);
    tecs_comp_t o = TECS_COMPONENT(w, Velocity);
    CHECK_ERR(TECS_RESOURCE_SET(w, s.t, Time, { 1, 0 }), TECS_OK);
    s.armed = true;
    CHECK_ERR(tecs_resource_set(w, o, &(Velocity){ 1, 1 }), TECS_OK);   /* allocates */
    CHECK_EQ(s.calls, 1);
    CHECK(s.read_none);
    CHECK_ERR(s.set, TECS_EBUSY);
    CHECK_ERR(s.rm, TECS_EBUSY);
    CHECK(TECS_RESOURCE_GET(w, s.t, Time)->now == 1);
    TW_CHECK(w);
    s.w = NULL;
    CHECK_ERR(tecs_world_free(w), TECS_OK);
    CHECK_EQ(s.a.blocks, 0);
}
