/* Hooks, observers and membership events. */
#include "test.h"

/* ---- an event log ----------------------------------------------------- */

typedef struct ev_rec {
    int who;                    /* which hook / observer (its tag)         */
    tecs_event_kind_t kind;
    tecs_entity_t e;
    tecs_comp_t c;
    float x;                    /* Position.x at the time, if a value      */
} ev_rec;

typedef struct ev_log {
    ev_rec recs[256];
    int n;
} ev_log;

typedef struct ev_tap {
    ev_log *log;
    int who;
} ev_tap;

static void record(const tecs_event_t *ev)
{
    ev_tap *t = ev->ctx;
    CHECK(t->log->n < 256);
    float x = ev->value && ev->kind != TECS_ON_ENTER ? ((Position *)ev->value)->x : -1;
    t->log->recs[t->log->n++] = (ev_rec){ t->who, ev->kind, ev->entity, ev->comp, x };
}

#define EXPECT(log, i, who_, kind_, e_, c_)                                 \
    do {                                                                    \
        CHECK((i) < (log)->n);                                              \
        CHECK_EQ((log)->recs[i].who, who_);                                 \
        CHECK_EQ((log)->recs[i].kind, kind_);                               \
        CHECK_EQ((log)->recs[i].e, e_);                                     \
        CHECK_EQ((log)->recs[i].c, c_);                                     \
    } while (0)

static tecs_observer_t watch(tecs_world_t *w, tecs_event_kind_t kind, tecs_comp_t c,
                             ev_tap *tap)
{
    return tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = kind, .comp = c, .callback = record, .ctx = tap });
}

/* ---- hooks ------------------------------------------------------------ */

TEST(observer_hooks_fire_for_every_kind_of_change)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    ev_log log = { .n = 0 };
    ev_tap hook = { &log, 1 };
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){
        .on_add = record, .on_set = record, .on_remove = record, .ctx = &hook }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);     /* ADD, SET */
    CHECK_ERR(TECS_SET(w, e, pos, Position, {2, 0}), TECS_OK);     /* SET      */
    TECS_GET_MUT(w, e, pos, Position)->x = 3;
    CHECK_ERR(tecs_modified(w, e, pos), TECS_OK);                   /* SET      */
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);                        /* nothing  */
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);                     /* REMOVE   */
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);                        /* ADD      */
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);                         /* REMOVE   */
    CHECK_EQ(log.n, 7);
    EXPECT(&log, 0, 1, TECS_ON_ADD, e, pos);
    EXPECT(&log, 1, 1, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[1].x, 1);
    EXPECT(&log, 2, 1, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[2].x, 2);
    EXPECT(&log, 3, 1, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[3].x, 3);
    EXPECT(&log, 4, 1, TECS_ON_REMOVE, e, pos);
    CHECK_EQ(log.recs[4].x, 3);                 /* value still there */
    EXPECT(&log, 5, 1, TECS_ON_ADD, e, pos);
    CHECK_EQ(log.recs[5].x, 0);                 /* constructed        */
    EXPECT(&log, 6, 1, TECS_ON_REMOVE, e, pos);
    /* Clearing the hooks stops them. */
    CHECK_ERR(tecs_component_hooks(w, pos, NULL), TECS_OK);
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(TECS_SET(w, f, pos, Position, {1, 0}), TECS_OK);
    CHECK_EQ(log.n, 7);
    TW_CHECK(w);
    tw_free(w);
}

TEST(observer_hooks_run_before_observers_on_add_after_on_remove)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap hook = { &log, 1 }, obs = { &log, 2 };
    CHECK(watch(w, TECS_ON_ADD, pos, &obs));
    CHECK(watch(w, TECS_ON_SET, pos, &obs));
    CHECK(watch(w, TECS_ON_REMOVE, pos, &obs));
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){
        .on_add = record, .on_set = record, .on_remove = record, .ctx = &hook }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_EQ(log.n, 6);
    EXPECT(&log, 0, 1, TECS_ON_ADD, e, pos);
    EXPECT(&log, 1, 2, TECS_ON_ADD, e, pos);
    EXPECT(&log, 2, 1, TECS_ON_SET, e, pos);
    EXPECT(&log, 3, 2, TECS_ON_SET, e, pos);
    EXPECT(&log, 4, 2, TECS_ON_REMOVE, e, pos);
    EXPECT(&log, 5, 1, TECS_ON_REMOVE, e, pos);
    TW_CHECK(w);
    tw_free(w);
}

TEST(observer_births_in_bulk_and_with_values_fire_add_then_set)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 2 };
    CHECK(watch(w, TECS_ON_ADD, pos, &obs));
    CHECK(watch(w, TECS_ON_SET, pos, &obs));
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    tecs_entity_t ids[3];
    Position p[3] = { { 1, 0 }, { 2, 0 }, { 3, 0 } };
    CHECK_ERR(tecs_new_bulk(w, a, 3, ids, 1, &(tecs_value_t){ pos, p }), TECS_OK);
    CHECK_EQ(log.n, 6);
    for (int i = 0; i < 3; i++) {
        EXPECT(&log, 2 * i, 2, TECS_ON_ADD, ids[i], pos);
        EXPECT(&log, 2 * i + 1, 2, TECS_ON_SET, ids[i], pos);
        CHECK_EQ(log.recs[2 * i + 1].x, i + 1);
    }
    tecs_entity_t e = tecs_new_in(w, a);
    CHECK_EQ(log.n, 7);
    EXPECT(&log, 6, 2, TECS_ON_ADD, e, pos);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- inside iteration ------------------------------------------------- */

typedef struct churn_ctx {
    tecs_comp_t pos, vel;
    tecs_entity_t made;
} churn_ctx;

TEST(observer_events_inside_iteration_fire_at_the_end_in_call_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 2 };
    tecs_entity_t a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(TECS_SET(w, a, pos, Position, {1, 0}), TECS_OK);
    CHECK_ERR(TECS_SET(w, b, pos, Position, {2, 0}), TECS_OK);
    CHECK(watch(w, TECS_ON_ADD, vel, &obs));
    CHECK(watch(w, TECS_ON_SET, vel, &obs));
    CHECK(watch(w, TECS_ON_REMOVE, pos, &obs));
    CHECK(watch(w, TECS_ON_ADD, pos, &obs));
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ});
    tecs_entity_t c = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        CHECK_ERR(TECS_SET(w, b, vel, Velocity, {5, 0}), TECS_OK);  /* ADD+SET vel b */
        CHECK_ERR(tecs_remove(w, a, pos), TECS_OK);                 /* REMOVE pos a  */
        CHECK_ERR(tecs_add(w, a, vel), TECS_OK);                    /* ADD vel a     */
        c = tecs_new(w);
        CHECK_ERR(TECS_SET(w, c, pos, Position, {9, 0}), TECS_OK);  /* ADD pos c     */
        CHECK_ERR(tecs_destroy(w, b), TECS_OK);                     /* REMOVE pos b  */
        CHECK_EQ(log.n, 0);
    }
    CHECK_EQ(log.n, 6);
    EXPECT(&log, 0, 2, TECS_ON_ADD, b, vel);
    EXPECT(&log, 1, 2, TECS_ON_SET, b, vel);
    EXPECT(&log, 2, 2, TECS_ON_REMOVE, a, pos);
    EXPECT(&log, 3, 2, TECS_ON_ADD, a, vel);
    EXPECT(&log, 4, 2, TECS_ON_ADD, c, pos);
    EXPECT(&log, 5, 2, TECS_ON_REMOVE, b, pos);
    TW_CHECK(w);
    tw_free(w);
}

/* A birth and its set queued in one iteration, watched: the same events as
** a birth then an add, even when the add runs out of memory at the first
** flush and only lands at the next. */
TEST(observer_deferred_birth_and_set_fire_add_then_set)
{
    for (int k = 1; k <= 8; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        tecs_comp_t pos = TECS_COMPONENT(w, Position);
        ev_log log = { .n = 0 };
        ev_tap obs = { &log, 1 };
        for (int i = 0; i < 16; i++)                        /* pos's chunk is full */
            CHECK_ERR(TECS_SET(w, tecs_new(w), pos, Position, { 0, 0 }), TECS_OK);
        CHECK(watch(w, TECS_ON_ADD, pos, &obs));
        CHECK(watch(w, TECS_ON_SET, pos, &obs));
        log.n = 0;                                          /* (what they saw) */
        tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ});
        tecs_iter_t it = TECS_ITER(w, .query = q);
        CHECK(tecs_iter_next(&it));
        tecs_entity_t e = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e, pos, Position, { 9, 1 }), TECS_OK);
        al.fail_at = al.calls + k;
        al.fail_after = true;
        tecs_iter_fini(&it);
        al.fail_at = 0;
        if (!tecs_has(w, e, pos)) {
            CHECK_EQ(log.n, 0);
            it = TECS_ITER(w, .query = q);                        /* its end flushes */
            tecs_iter_fini(&it);
        }
        CHECK(tecs_is_alive(w, e));
        CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 9);
        CHECK_EQ(log.n, 2);
        EXPECT(&log, 0, 1, TECS_ON_ADD, e, pos);
        EXPECT(&log, 1, 1, TECS_ON_SET, e, pos);
        CHECK_EQ(log.recs[1].x, 9);
        TW_CHECK(w);
        tw_free(w);
    }
}

TEST(observer_write_terms_report_set_when_leaving_the_chunk)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap hook = { &log, 1 };
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){ .on_set = record, .ctx = &hook }),
              TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);
    log.n = 0;
    tecs_query_t *rq = TECS_QUERY(w, {.comp = pos, .access = TECS_READ});
    tecs_query_t *wq = TECS_QUERY(w, {.comp = pos});
    tecs_iter_t it = TECS_ITER(w, .query = rq);
    while (tecs_iter_next(&it))
        ;
    CHECK_EQ(log.n, 0);
    it = TECS_ITER(w, .query = wq);
    while (tecs_iter_next(&it))
        TECS_FIELD(&it, Position, 0)[0].x = 4;
    CHECK_EQ(log.n, 1);
    EXPECT(&log, 0, 1, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[0].x, 4);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- narrowing terms ------------------------------------------------- */

TEST(observer_terms_narrow_by_the_archetype_at_event_time)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t frozen = TECS_TAG(w, Frozen);
    ev_log log = { .n = 0 };
    ev_tap set = { &log, 1 }, rem = { &log, 2 }, add = { &log, 3 };
    const tecs_term_t terms[] = { { .comp = vel }, { .comp = frozen, .oper = TECS_NONE } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = pos,
          .terms = terms, .term_count = 2, .callback = record, .ctx = &set }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = vel,
          .terms = (tecs_term_t[]){ { .comp = vel }, { .comp = pos } }, .term_count = 2,
          .callback = record, .ctx = &rem }));
    tecs_query_t *with_pos = TECS_QUERY(w, {.comp = pos});
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = vel,
          .query = with_pos, .callback = record, .ctx = &add }));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);  /* no vel: nothing    */
    CHECK_EQ(log.n, 0);
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);                    /* has pos: add fires */
    CHECK_ERR(TECS_SET(w, e, pos, Position, {2, 0}), TECS_OK);  /* fires              */
    CHECK_ERR(tecs_add(w, e, frozen), TECS_OK);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {3, 0}), TECS_OK);  /* frozen: nothing    */
    CHECK_ERR(tecs_remove(w, e, vel), TECS_OK);                 /* before: has both   */
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, vel), TECS_OK);                 /* no pos: nothing    */
    CHECK_EQ(log.n, 4);
    EXPECT(&log, 0, 3, TECS_ON_ADD, e, vel);
    EXPECT(&log, 1, 1, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[1].x, 2);
    EXPECT(&log, 2, 2, TECS_ON_REMOVE, e, vel);
    EXPECT(&log, 3, 3, TECS_ON_ADD, e, vel);
    /* The observer copied the query's terms: freeing it changes nothing. */
    tecs_query_free(with_pos);
    CHECK_ERR(tecs_remove(w, e, vel), TECS_ENOENT);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);
    CHECK_EQ(log.n, 5);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- chains of changes made by observers ------------------------------ */

typedef struct chain_ctx {
    tecs_comp_t hp;
    int made;
    int limit;
    tecs_entity_t last;
} chain_ctx;

/* Each new Health makes the next entity, with hp one more. */
static void chain_next(const tecs_event_t *ev)
{
    chain_ctx *c = ev->ctx;
    CHECK(tecs_is_deferred(ev->world));
    int hp = ((Health *)ev->value)->hp;
    CHECK_EQ(hp, c->made);
    if (++c->made >= c->limit)
        return;
    tecs_entity_t e = tecs_new(ev->world);
    CHECK_ERR(TECS_SET(ev->world, e, c->hp, Health, {hp + 1}), TECS_OK);
    c->last = e;
}

TEST(observer_chains_of_changes_apply_in_order_without_recursion)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    chain_ctx c = { hp, 0, 100000, 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = hp,
          .callback = chain_next, .ctx = &c }));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, hp, Health, {0}), TECS_OK);
    CHECK_EQ(c.made, 100000);
    CHECK_EQ(tecs_world_entity_count(w), 100000);
    CHECK_EQ(TECS_GET(w, c.last, hp, Health)->hp, 99999);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

/* ---- removal during delivery ------------------------------------------ */

typedef struct self_ctx {
    tecs_observer_t me, other;
    int calls;
} self_ctx;

static void remove_self_and_other(const tecs_event_t *ev)
{
    self_ctx *s = ev->ctx;
    s->calls++;
    CHECK_ERR(tecs_observer_free(ev->world, s->me), TECS_OK);
    CHECK_ERR(tecs_observer_free(ev->world, s->me), TECS_ENOENT);
    if (s->other)
        CHECK_ERR(tecs_observer_free(ev->world, s->other), TECS_OK);
    CHECK_EQ(tecs_world_check(ev->world), TECS_OK);
}

TEST(observer_removed_during_delivery_fires_no_more)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap later = { &log, 9 };
    self_ctx s = { 0, 0, 0 };
    s.me = tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
                             .callback = remove_self_and_other, .ctx = &s });
    s.other = watch(w, TECS_ON_ADD, pos, &later);
    CHECK(s.me && s.other);
    CHECK_EQ(tecs_observer_count(w), 2);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_EQ(s.calls, 1);
    CHECK_EQ(log.n, 0);             /* removed before its turn */
    CHECK_EQ(tecs_observer_count(w), 0);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_EQ(s.calls, 1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- membership ------------------------------------------------------- */

typedef struct member_set {
    bool in[512];               /* by entity slot index                     */
    int enters, leaves;
    bool bad;                   /* enter while in, leave while out          */
} member_set;

static void on_enter(const tecs_event_t *ev)
{
    member_set *m = ev->ctx;
    uint32_t i = TECS_ENTITY_INDEX(ev->entity);
    m->bad |= m->in[i];
    m->in[i] = true;
    m->enters++;
}

static void on_leave(const tecs_event_t *ev)
{
    member_set *m = ev->ctx;
    uint32_t i = TECS_ENTITY_INDEX(ev->entity);
    m->bad |= !m->in[i];
    m->in[i] = false;
    m->leaves++;
}

static void watch_members(tecs_world_t *w, tecs_query_t *q, member_set *m)
{
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .query = q,
          .callback = on_enter, .ctx = m }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE, .query = q,
          .callback = on_leave, .ctx = m }));
}

/* The members the events built equal a fresh collect of the query. */
static void check_members(tecs_query_t *q, const member_set *m)
{
    static tecs_entity_t ids[512];
    bool want[512] = { false };
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, ids, 512);
    CHECK(n >= 0 && n <= 512);
    for (int32_t i = 0; i < n; i++)
        want[TECS_ENTITY_INDEX(ids[i])] = true;
    CHECK(!m->bad);
    for (int i = 0; i < 512; i++)
        CHECK_EQ(m->in[i], want[i]);
}

/* One random change to one of the entities in e[]. */
static void random_change(tecs_world_t *w, uint64_t *seed, tecs_entity_t *e, int ne,
                          const tecs_comp_t *comps, int nc)
{
    int k = (int)(tw_rand(seed) % (uint64_t)ne);
    tecs_comp_t c = comps[tw_rand(seed) % (uint64_t)nc];
    switch (tw_rand(seed) % 6) {
    case 0:
        tecs_destroy(w, e[k]);
        e[k] = tecs_new(w);
        break;
    case 1:
    case 2:
        tecs_add(w, e[k], c);
        break;
    case 3:
    case 4:
        tecs_remove(w, e[k], c);
        break;
    default: {
        tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ comps[0], c == comps[0]
                                                                    ? comps[1] : c });
        tecs_destroy(w, e[k]);
        e[k] = tecs_new_in(w, a);
    }
    }
}

TEST(observer_membership_matches_brute_force_after_random_changes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t comps[4];
    comps[0] = TECS_COMPONENT(w, Position);
    comps[1] = TECS_COMPONENT(w, Velocity);
    comps[2] = TECS_COMPONENT(w, Health);
    comps[3] = TECS_TAG(w, Frozen);
    tecs_query_t *q[3] = {
        TECS_QUERY(w, {.comp = comps[0]}, {.comp = comps[1]}),
        TECS_QUERY(w, {.comp = comps[0]}, {.comp = comps[3], .oper = TECS_NONE}),
        TECS_QUERY(w, {.comp = comps[1], .oper = TECS_ANY}, {.comp = comps[2], .oper = TECS_ANY}),
    };
    static member_set m[3];
    memset(m, 0, sizeof m);
    for (int i = 0; i < 3; i++)
        watch_members(w, q[i], &m[i]);
    tecs_entity_t e[64];
    for (int i = 0; i < 64; i++)
        e[i] = tecs_new(w);
    uint64_t seed = 12345;
    for (int step = 0; step < 3000; step++) {
        bool batch = step % 7 == 0;
        if (!batch) {
            random_change(w, &seed, e, 64, comps, 4);
        } else {
            /* A batch of changes inside an iteration, applied at its end. */
            tecs_iter_t it = TECS_ITER(w, .query = q[0]);
            for (int j = 0; j < 20; j++)
                random_change(w, &seed, e, 64, comps, 4);
            tecs_iter_fini(&it);
        }
        for (int i = 0; i < 3; i++)
            check_members(q[i], &m[i]);
    }
    for (int i = 0; i < 3; i++)
        CHECK(m[i].enters > 100 && m[i].leaves > 100);
    TW_CHECK(w);
    tw_free(w);
}

TEST(observer_membership_order_around_add_and_remove)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap enter = { &log, 1 }, leave = { &log, 2 }, hook = { &log, 3 };
    const tecs_term_t t[] = { { .comp = pos } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .terms = t,
          .term_count = 1, .callback = record, .ctx = &enter }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE, .terms = t,
          .term_count = 1, .callback = record, .ctx = &leave }));
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){
        .on_add = record, .on_remove = record, .ctx = &hook }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK_EQ(log.n, 8);
    EXPECT(&log, 0, 1, TECS_ON_ENTER, e, 0);
    EXPECT(&log, 1, 3, TECS_ON_ADD, e, pos);
    EXPECT(&log, 2, 3, TECS_ON_REMOVE, e, pos);
    EXPECT(&log, 3, 2, TECS_ON_LEAVE, e, 0);
    EXPECT(&log, 4, 1, TECS_ON_ENTER, e, 0);
    EXPECT(&log, 5, 3, TECS_ON_ADD, e, pos);
    EXPECT(&log, 6, 3, TECS_ON_REMOVE, e, pos);
    EXPECT(&log, 7, 2, TECS_ON_LEAVE, e, 0);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- world free ------------------------------------------------------- */

typedef struct fini_ctx {
    tecs_entity_t order[16];
    int n;
    tecs_comp_t pos;
    int leaves;
} fini_ctx;

static void fini_remove(const tecs_event_t *ev)
{
    fini_ctx *f = ev->ctx;
    CHECK(f->n < 16);
    CHECK(tecs_is_alive(ev->world, ev->entity));
    f->order[f->n++] = ev->entity;
    /* The world is being freed: changes are refused, reads work. */
    CHECK(tecs_new(ev->world) == 0);
    CHECK_EQ(tecs_last_error(ev->world), TECS_EBUSY);
    CHECK_ERR(tecs_destroy(ev->world, ev->entity), TECS_EBUSY);
    CHECK_ERR(TECS_SET(ev->world, ev->entity, f->pos, Position, {7, 7}), TECS_EBUSY);
}

static void fini_leave(const tecs_event_t *ev)
{
    ((fini_ctx *)ev->ctx)->leaves++;
}

TEST(observer_world_free_announces_every_live_component)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    fini_ctx f = { .n = 0, .pos = pos };
    tecs_entity_t a = tecs_new(w), b = tecs_new(w), c = tecs_new(w), d = tecs_new(w);
    CHECK_ERR(TECS_SET(w, a, vel, Velocity, {1, 0}), TECS_OK);   /* archetype {vel}     */
    CHECK_ERR(TECS_SET(w, b, pos, Position, {1, 0}), TECS_OK);   /* {vel, pos} later    */
    CHECK_ERR(TECS_SET(w, b, vel, Velocity, {1, 0}), TECS_OK);
    CHECK_ERR(TECS_SET(w, c, pos, Position, {1, 0}), TECS_OK);   /* {pos}               */
    (void)d;                                                      /* no components      */
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){ .on_remove = fini_remove, .ctx = &f }),
              TECS_OK);
    CHECK_ERR(tecs_component_hooks(w, vel, &(tecs_hooks_t){ .on_remove = fini_remove, .ctx = &f }),
              TECS_OK);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
          .terms = (tecs_term_t[]){ { .comp = pos } }, .term_count = 1,
          .callback = fini_leave, .ctx = &f }));
    /* A queued birth is never born, so never announced. */
    tecs_delayed_new(w, tecs_entity_archetype(w, c), 0, NULL);
    TW_CHECK(w);
    tw_free(w);
    /* Archetypes in creation order: {vel} (a), {pos} (c), {pos, vel} (b);
    ** components of one entity in id order (pos before vel). */
    CHECK_EQ(f.n, 4);
    CHECK_EQ(f.order[0], a);
    CHECK_EQ(f.order[1], c);
    CHECK_EQ(f.order[2], b);
    CHECK_EQ(f.order[3], b);
    CHECK_EQ(f.leaves, 2);
}

/* ---- bad input and out of memory --------------------------------------- */

static void nop(const tecs_event_t *ev)
{
    (void)ev;
}

TEST(observer_bad_input_is_refused_and_changes_nothing)
{
    tecs_world_t *w = tw_new();
    tecs_world_t *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = TECS_TAG(w, Frozen);
    tecs_comp_t pos2 = TECS_COMPONENT(w2, Position);
    tecs_query_t *q2 = TECS_QUERY(w2, {.comp = pos2});
    const tecs_term_t t[] = { { .comp = pos } };
    size_t mem = tecs_world_memory(w);
    CHECK_EQ(tecs_observer_new(w, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = 0, .comp = pos,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = 99, .comp = pos,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = 77,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = tag,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .comp = pos,
             .terms = t, .term_count = 1, .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .query = q2,
             .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
             .terms = (tecs_term_t[]){ { .comp = 99 } }, .term_count = 1, .callback = nop }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK_EQ(tecs_component_hooks(w, tag, &(tecs_hooks_t){ .on_set = nop }), TECS_EINVAL);
    CHECK_EQ(tecs_component_hooks(w, 99, &(tecs_hooks_t){ .on_add = nop }), TECS_ENOCOMP);
    CHECK_EQ(tecs_observer_free(w, 0), TECS_ENOENT);
    CHECK_EQ(tecs_observer_free(w, 12345), TECS_ENOENT);
    CHECK_EQ(tecs_observer_count(w), 0);
    CHECK_EQ(tecs_world_memory(w), mem);
    /* Removing twice. */
    tecs_observer_t o = tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD,
                                          .comp = pos, .callback = nop });
    CHECK(o);
    CHECK_ERR(tecs_observer_free(w, o), TECS_OK);
    CHECK_ERR(tecs_observer_free(w, o), TECS_ENOENT);
    CHECK_EQ(tecs_observer_count(w), 0);
    tw_free(w2);
    TW_CHECK(w);
    tw_free(w);
}

static void count_event(const tecs_event_t *ev)
{
    ++*(int *)ev->ctx;
}

TEST(observer_out_of_memory_changes_nothing)
{
    for (long k = 1;; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        CHECK(w);
        tecs_comp_t pos = TECS_COMPONENT(w, Position);
        tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
        int sets = 0, adds = 0;
        al.fail_at = al.calls + k;
        tecs_observer_t o = tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET,
            .comp = pos, .terms = (tecs_term_t[]){ { .comp = vel } }, .term_count = 1,
            .callback = count_event, .ctx = &sets });
        tecs_err_t oerr = tecs_last_error(w);
        tecs_err_t herr = tecs_component_hooks(w, vel, &(tecs_hooks_t){
            .on_add = count_event, .ctx = &adds });
        bool failed = al.failures > 0;
        al.fail_at = 0;
        if (o == 0)
            CHECK_EQ(oerr, TECS_ENOMEM);
        CHECK(herr == TECS_OK || herr == TECS_ENOMEM);
        CHECK_EQ(tecs_observer_count(w), o ? 1 : 0);
        /* What failed does not fire; what succeeded does. */
        tecs_entity_t e = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e, vel, Velocity, {1, 0}), TECS_OK);
        CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);
        CHECK_EQ(sets, o ? 1 : 0);
        CHECK_EQ(adds, herr ? 0 : 1);
        TW_CHECK(w);
        TW_CHECK(w);
    tw_free(w);
        if (!failed)
            break;
    }
}

/* ---- model-based: hooks and membership under random changes ------------ */

enum { MB_SLOTS = 512, MB_COMPS = 4 };

typedef struct mb_state {
    bool has[MB_SLOTS][MB_COMPS];   /* what the hooks were told            */
    tecs_comp_t comps[MB_COMPS];
    long adds, sets, removes;
    bool bad;
} mb_state;

static int mb_index(const mb_state *m, tecs_comp_t c)
{
    for (int k = 0; k < MB_COMPS; k++)
        if (m->comps[k] == c)
            return k;
    return -1;
}

static void mb_hook(const tecs_event_t *ev)
{
    mb_state *m = ev->ctx;
    uint32_t i = TECS_ENTITY_INDEX(ev->entity);
    int k = mb_index(m, ev->comp);
    if (i >= MB_SLOTS || k < 0) {
        m->bad = true;
        return;
    }
    bool *h = &m->has[i][k];
    /* The hooks see the entity as it is: has it on add/set/remove. */
    m->bad |= !tecs_has(ev->world, ev->entity, ev->comp);
    if (ev->kind == TECS_ON_ADD) {
        m->bad |= *h;
        *h = true;
        m->adds++;
    } else if (ev->kind == TECS_ON_SET) {
        m->bad |= !*h;
        m->sets++;
    } else {
        m->bad |= !*h;
        *h = false;
        m->removes++;
    }
}

/* Every live entity's hook view equals what it has; dead slots hold nothing. */
static void mb_check(tecs_world_t *w, const mb_state *m, const tecs_entity_t *e, int ne)
{
    bool live[MB_SLOTS] = { false };
    CHECK(!m->bad);
    for (int j = 0; j < ne; j++) {
        if (!tecs_is_alive(w, e[j]))
            continue;
        uint32_t i = TECS_ENTITY_INDEX(e[j]);
        live[i] = true;
        for (int k = 0; k < MB_COMPS; k++)
            CHECK_EQ(m->has[i][k], tecs_has(w, e[j], m->comps[k]));
    }
    for (int i = 0; i < MB_SLOTS; i++)
        for (int k = 0; k < MB_COMPS && !live[i]; k++)
            CHECK(!m->has[i][k]);
}

/* One random operation of any kind on the entities in e[]. */
static void mb_step(tecs_world_t *w, uint64_t *seed, tecs_entity_t *e, int ne,
                    const tecs_comp_t *c, tecs_archetype_t *const *archs)
{
    int j = (int)(tw_rand(seed) % (uint64_t)ne);
    tecs_comp_t comp = c[tw_rand(seed) % MB_COMPS];
    Position v = { (float)(tw_rand(seed) % 100), 0 };   /* 8 bytes: fits every comp */
    switch (tw_rand(seed) % 10) {
    case 0: tecs_destroy(w, e[j]); e[j] = tecs_new(w); break;
    case 1: tecs_destroy(w, e[j]); e[j] = tecs_new_in(w, archs[tw_rand(seed) % 3]); break;
    case 2: tecs_add(w, e[j], comp); break;
    case 3: tecs_remove(w, e[j], comp); break;
    case 4: tecs_set(w, e[j], comp, comp == c[3] ? NULL : (const void *)&v); break;
    case 5: tecs_modified(w, e[j], comp); break;
    case 6: tecs_delayed_destroy(w, e[j], NULL, NULL); break;
    case 7: {
        tecs_entity_t k = tecs_delayed_new(w, archs[tw_rand(seed) % 3], 0, NULL);
        if (k) {
            tecs_destroy(w, e[j]);
            e[j] = k;
        }
        break;
    }
    case 8: tecs_delayed_apply(w); break;
    default: {
        tecs_entity_t ids[3];
        if (tecs_new_bulk(w, archs[tw_rand(seed) % 3], 3, ids, 0, NULL) == TECS_OK)
            for (int k = 0; k < 3; k++) {
                int at = (j + k) % ne;
                tecs_destroy(w, e[at]);
                e[at] = ids[k];
            }
    }
    }
}

TEST(observer_model_hooks_and_membership_under_random_changes)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    static mb_state m;
    memset(&m, 0, sizeof m);
    m.comps[0] = TECS_COMPONENT(w, Position);
    m.comps[1] = TECS_COMPONENT(w, Velocity);
    m.comps[2] = TECS_COMPONENT(w, Health);
    m.comps[3] = TECS_TAG(w, Frozen);
    for (int k = 0; k < MB_COMPS; k++)
        CHECK_ERR(tecs_component_hooks(w, m.comps[k], &(tecs_hooks_t){ .on_add = mb_hook,
                  .on_set = k == 3 ? NULL : mb_hook, .on_remove = mb_hook, .ctx = &m }),
                  TECS_OK);
    tecs_archetype_t *archs[3] = {
        tecs_archetype_get(w, 1, &m.comps[0]),
        tecs_archetype_get(w, 2, (tecs_comp_t[]){ m.comps[0], m.comps[1] }),
        tecs_archetype_get(w, 2, (tecs_comp_t[]){ m.comps[2], m.comps[3] }),
    };
    tecs_query_t *q = TECS_QUERY(w, {.comp = m.comps[0]}, {.comp = m.comps[3],
                                 .oper = TECS_NONE});
    static member_set ms;
    memset(&ms, 0, sizeof ms);
    watch_members(w, q, &ms);
    tecs_entity_t e[48];
    for (int i = 0; i < 48; i++)
        e[i] = tecs_new(w);
    uint64_t seed = 99;
    for (int step = 0; step < 4000; step++) {
        if (step % 5 == 0) {
            tecs_iter_t it = TECS_ITER(w, .query = q);   /* a batch, applied at the end */
            for (int k = 0; k < 10; k++)
                mb_step(w, &seed, e, 48, m.comps, archs);
            tecs_iter_fini(&it);
        } else {
            mb_step(w, &seed, e, 48, m.comps, archs);
        }
        mb_check(w, &m, e, 48);
        check_members(q, &ms);
    }
    CHECK(m.adds > 1000 && m.sets > 300 && m.removes > 1000);
    TW_CHECK(w);
    tw_free(w);
    /* World free told the hooks about every value left. */
    CHECK(!m.bad);
    CHECK_EQ(m.adds, m.removes);
}

/* ---- details of timing ------------------------------------------------ */

TEST(observer_set_of_a_present_value_inside_iteration_fires_at_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 2 };
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);
    CHECK(watch(w, TECS_ON_SET, pos, &obs));
    CHECK(watch(w, TECS_ON_ADD, vel, &obs));
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ});
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        CHECK_ERR(tecs_add(w, e, vel), TECS_OK);                    /* queued   */
        CHECK_ERR(TECS_SET(w, e, pos, Position, {2, 0}), TECS_OK);  /* at once  */
        CHECK_EQ(log.n, 1);
    }
    CHECK_EQ(log.n, 2);
    EXPECT(&log, 0, 2, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[0].x, 2);
    EXPECT(&log, 1, 2, TECS_ON_ADD, e, vel);
    TW_CHECK(w);
    tw_free(w);
}

/* A birth queued with later sets is applied step by step when observed, so
** a narrowed observer sees the archetypes one at a time, as outside. */
TEST(observer_queued_birth_and_sets_are_seen_step_by_step)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 5 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
          .terms = (tecs_term_t[]){ { .comp = vel, .oper = TECS_NONE } }, .term_count = 1,
          .callback = record, .ctx = &obs }));
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    tecs_entity_t e = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    e = tecs_new_in(w, a);
    CHECK_ERR(TECS_SET(w, e, vel, Velocity, {1, 1}), TECS_OK);
    tecs_iter_fini(&it);
    CHECK(tecs_has(w, e, vel));
    CHECK_EQ(log.n, 1);                 /* born with pos, without vel */
    EXPECT(&log, 0, 5, TECS_ON_ADD, e, pos);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct late_ctx {
    ev_tap *tap;
    tecs_comp_t pos;
    int calls;
} late_ctx;

static void make_observer(const tecs_event_t *ev)
{
    late_ctx *l = ev->ctx;
    if (l->calls++ == 0)
        CHECK(watch(ev->world, TECS_ON_ADD, l->pos, l->tap));
}

TEST(observer_created_in_a_callback_sees_only_later_events)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap tap = { &log, 7 };
    late_ctx l = { &tap, pos, 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
          .callback = make_observer, .ctx = &l }));
    tecs_entity_t a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(tecs_add(w, a, pos), TECS_OK);
    CHECK_EQ(log.n, 0);
    CHECK_ERR(tecs_add(w, b, pos), TECS_OK);
    CHECK_EQ(log.n, 1);
    EXPECT(&log, 0, 7, TECS_ON_ADD, b, pos);
    CHECK_EQ(tecs_observer_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
}

static void init_five(tecs_init_t *init, void *ctx)
{
    Position *p = tecs_init_construct(init, *(tecs_comp_t *)ctx);
    *p = (Position){ 5, 0 };
}

static void kill_note(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    ev_log *log = ctx;
    CHECK(tecs_is_alive(w, e));
    log->recs[log->n++] = (ev_rec){ 99, 0, e, 0, -1 };
}

TEST(observer_births_with_initializer_and_delayed_changes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 2 };
    CHECK(watch(w, TECS_ON_ADD, pos, &obs));
    CHECK(watch(w, TECS_ON_SET, pos, &obs));
    CHECK(watch(w, TECS_ON_REMOVE, pos, &obs));
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    /* An initializer's values are there when ADD fires; no SET. */
    tecs_entity_t e = tecs_new_with(w, a, init_five, &pos);
    CHECK_EQ(log.n, 1);
    EXPECT(&log, 0, 2, TECS_ON_ADD, e, pos);
    CHECK_EQ(log.recs[0].x, 5);
    /* Delayed births fire when applied: ADD, then SET for a given value. */
    tecs_entity_t d = tecs_delayed_new(w, a, 1, &(tecs_value_t){ pos, &(Position){ 3, 0 } });
    CHECK(d);
    CHECK_ERR(tecs_delayed_destroy(w, e, kill_note, &log), TECS_OK);
    CHECK_EQ(log.n, 1);
    CHECK_ERR(tecs_delayed_apply(w), TECS_OK);
    CHECK_EQ(log.n, 5);
    EXPECT(&log, 1, 2, TECS_ON_ADD, d, pos);
    EXPECT(&log, 2, 2, TECS_ON_SET, d, pos);
    CHECK_EQ(log.recs[2].x, 3);
    /* A delayed kill: its callback, then REMOVE while still alive. */
    EXPECT(&log, 3, 99, 0, e, 0);
    EXPECT(&log, 4, 2, TECS_ON_REMOVE, e, pos);
    CHECK(!tecs_is_alive(w, e));
    TW_CHECK(w);
    tw_free(w);
}

/* A component watched only for ADD by a hook is not reported per row on
** writes through an iteration; an index on it still is. */
static void count_sets(const tecs_event_t *ev)
{
    ++*(int *)ev->ctx;
}

TEST(observer_add_only_hook_leaves_index_following_writes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    int adds = 0, sets = 0;
    CHECK_ERR(tecs_component_hooks(w, hp, &(tecs_hooks_t){ .on_add = count_sets, .ctx = &adds }),
              TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, hp, Health, {1}), TECS_OK);
    CHECK_EQ(adds, 1);
    tecs_index_t *ix = tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp,
        .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .offset = 0, .unique = true });
    CHECK(ix);
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp});
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        TECS_FIELD(&it, Health, 0)[0].hp = 42;
    CHECK_EQ(tecs_index_lookup(ix, tecs_key_int(42)), e);
    /* With an on_set hook too, the write is reported to it. */
    CHECK_ERR(tecs_component_hooks(w, hp, &(tecs_hooks_t){ .on_add = count_sets,
              .on_set = count_sets, .ctx = &sets }), TECS_OK);
    it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        TECS_FIELD(&it, Health, 0)[0].hp = 43;
    CHECK_EQ(sets, 1);
    CHECK_EQ(tecs_index_lookup(ix, tecs_key_int(43)), e);
    TW_CHECK(w);
    tw_free(w);
}

/* Remove then set inside an iteration ends as outside: the entity has the
** new value, and the events are REMOVE, ADD, SET in that order. */
TEST(observer_remove_then_set_inside_iteration_matches_outside)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = TECS_TAG(w, Frozen);
    ev_log log = { .n = 0 };
    ev_tap obs = { &log, 2 };
    CHECK(watch(w, TECS_ON_ADD, pos, &obs));
    CHECK(watch(w, TECS_ON_SET, pos, &obs));
    CHECK(watch(w, TECS_ON_REMOVE, pos, &obs));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 0}), TECS_OK);
    CHECK_ERR(tecs_add(w, e, tag), TECS_OK);
    log.n = 0;
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {2, 0}), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, tag), TECS_OK);
    CHECK_ERR(tecs_set(w, e, tag, NULL), TECS_OK);
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 1);     /* nothing applied yet */
    CHECK_EQ(tecs_world_check(w), TECS_EBUSY);    /* the iteration is open */
    tecs_iter_fini(&it);
    CHECK(tecs_has(w, e, tag));
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 2);
    CHECK_EQ(log.n, 3);
    EXPECT(&log, 0, 2, TECS_ON_REMOVE, e, pos);
    EXPECT(&log, 1, 2, TECS_ON_ADD, e, pos);
    EXPECT(&log, 2, 2, TECS_ON_SET, e, pos);
    CHECK_EQ(log.recs[2].x, 2);
    TW_CHECK(w);
    tw_free(w);
}

TEST(observer_made_after_a_burst_of_moves_hears_the_next)
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
