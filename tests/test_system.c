/* Systems, phases and tecs_progress. */
#include "test.h"

/* ---- a run log -------------------------------------------------------- */

typedef struct run_log {
    int order[64];
    double dt[64];
    int64_t frame[64];
    int n;
} run_log;

typedef struct tag_ctx {
    run_log *log;
    int tag;
} tag_ctx;

static void log_run(tecs_iter_t *it)
{
    tag_ctx *t = it->ctx;
    CHECK(t->log->n < 64);
    CHECK(tecs_is_deferred(it->world));
    t->log->order[t->log->n] = t->tag;
    t->log->dt[t->log->n] = it->delta_time;
    t->log->frame[t->log->n] = it->frame;
    t->log->n++;
}

static tecs_system_t add_task(tecs_world_t *w, const char *name, tecs_phase_t phase,
                              tag_ctx *ctx)
{
    return tecs_system_new(w, &(tecs_system_desc_t){ .name = name, .phase = phase,
                                                 .run = log_run, .ctx = ctx });
}

TEST(system_phases_run_in_order_and_add_order_within_a_phase)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t[9];
    for (int i = 0; i < 9; i++)
        t[i] = (tag_ctx){ &log, i };
    /* Added out of phase order. */
    CHECK(add_task(w, "store", TECS_ON_STORE, &t[8]));
    CHECK(add_task(w, "update_a", 0, &t[4]));           /* 0 = on update */
    CHECK(add_task(w, "load", TECS_ON_LOAD, &t[1]));
    CHECK(add_task(w, "validate", TECS_ON_VALIDATE, &t[5]));
    CHECK(add_task(w, "update_b", TECS_ON_UPDATE, &t[0]));
    CHECK(add_task(w, "pre_store", TECS_PRE_STORE, &t[7]));
    CHECK(add_task(w, "post_load", TECS_POST_LOAD, &t[2]));
    CHECK(add_task(w, "post_update", TECS_POST_UPDATE, &t[6]));
    CHECK(add_task(w, "pre_update", TECS_PRE_UPDATE, &t[3]));
    CHECK_EQ(tecs_system_count(w), 9);
    CHECK_ERR(tecs_progress(w, 0.5), TECS_OK);
    const int want[9] = { 1, 2, 3, 4, 0, 5, 6, 7, 8 };
    CHECK_EQ(log.n, 9);
    for (int i = 0; i < 9; i++) {
        CHECK_EQ(log.order[i], want[i]);
        CHECK(log.dt[i] == 0.5);
        CHECK_EQ(log.frame[i], 0);
    }
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(log.n, 18);
    CHECK_EQ(log.frame[17], 1);
    CHECK_EQ(tecs_world_frame_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- chunk and per-entity forms; changes seen by the next system ------ */

typedef struct move_ctx {
    tecs_comp_t pos, vel, tag;
    int visited;
} move_ctx;

static void move_chunk(tecs_iter_t *it)
{
    Position *p = TECS_FIELD(it, Position, 0);
    const Velocity *v = TECS_FIELD(it, Velocity, 1);
    for (int32_t i = 0; i < it->count; i++) {
        p[i].x += v[i].x * (float)it->delta_time;
        p[i].y += v[i].y * (float)it->delta_time;
    }
}

/* Tags every entity past x = 1, structurally (queued until the system ends). */
static void tag_far(tecs_iter_t *it, int32_t row)
{
    move_ctx *m = it->ctx;
    const Position *p = TECS_FIELD(it, Position, 0);
    if (p[row].x > 1 && !tecs_has(it->world, it->entities[row], m->tag)) {
        CHECK_ERR(tecs_add(it->world, it->entities[row], m->tag), TECS_OK);
        CHECK(!tecs_has(it->world, it->entities[row], m->tag));   /* queued */
    }
}

static void count_tagged(tecs_iter_t *it, int32_t row)
{
    (void)row;
    ((move_ctx *)it->ctx)->visited++;
}

TEST(system_changes_apply_when_the_system_ends)
{
    tecs_world_t *w = tw_new();
    move_ctx m = { TECS_COMPONENT(w, Position), TECS_COMPONENT(w, Velocity), TECS_TAG(w, Far),
                   0 };
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ m.pos, m.vel });
    for (int i = 0; i < 2000; i++) {
        tecs_entity_t e = tecs_new_in(w, a);
        CHECK_ERR(TECS_SET(w, e, m.vel, Velocity, {(float)(i % 4), 0}), TECS_OK);
    }
    tecs_query_t *mq = TECS_QUERY(w, {.comp = m.pos}, {.comp = m.vel, .access = TECS_READ});
    tecs_query_t *pq = TECS_QUERY(w, {.comp = m.pos, .access = TECS_READ});
    tecs_query_t *tq = TECS_QUERY(w, {.comp = m.tag});
    tecs_system_t sm = tecs_system_new(w, &(tecs_system_desc_t){ .name = "move", .query = mq,
                                       .run = move_chunk });
    tecs_system_t st = tecs_system_new(w, &(tecs_system_desc_t){ .name = "tag", .query = pq,
                                       .each = tag_far, .ctx = &m });
    tecs_system_t sc = tecs_system_new(w, &(tecs_system_desc_t){ .name = "count", .query = tq,
                                       .each = count_tagged, .ctx = &m,
                                       .phase = TECS_POST_UPDATE });
    CHECK(sm && st && sc);
    CHECK_ERR(tecs_progress(w, 1.0), TECS_OK);
    /* After 1 s, x = 0, 1, 2, 3: velocities 2 and 3 are far. */
    CHECK_EQ(m.visited, 1000);
    CHECK_EQ(tecs_query_count(tq), 1000);
    tecs_system_stats_t st_m, st_c;
    CHECK_ERR(tecs_system_stats(w, sm, &st_m), TECS_OK);
    CHECK_ERR(tecs_system_stats(w, sc, &st_c), TECS_OK);
    CHECK_EQ(st_m.runs, 1);
    CHECK_EQ(st_m.entities_last, 2000);
    CHECK_EQ(st_c.entities_last, 1000);
    CHECK_ERR(tecs_progress(w, 1.0), TECS_OK);
    CHECK_ERR(tecs_system_stats(w, sm, &st_m), TECS_OK);
    CHECK_EQ(st_m.runs, 2);
    CHECK_EQ(st_m.entities_total, 4000);
    CHECK(st_m.time_last > 0 && st_m.time_total >= st_m.time_last);
    /* x = 0, 2, 4, 6 now: velocity 1 joined the far ones. */
    CHECK_EQ(tecs_query_count(tq), 1500);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- add, remove, enable during a frame ------------------------------ */

typedef struct edit_ctx {
    run_log *log;
    tecs_system_t victim, self;
    tag_ctx *late_ctx;
    tecs_system_t added;
    int tag;
} edit_ctx;

static void editor(tecs_iter_t *it)
{
    edit_ctx *c = it->ctx;
    c->log->order[c->log->n++] = c->tag;
    if (it->frame != 0)
        return;
    CHECK_ERR(tecs_system_free(it->world, c->victim), TECS_OK);
    CHECK_ERR(tecs_system_free(it->world, c->victim), TECS_ENOENT);
    CHECK_EQ(tecs_system_lookup(it->world, "victim"), 0);
    CHECK_ERR(tecs_system_free(it->world, c->self), TECS_OK);
    c->added = add_task(it->world, "late", TECS_ON_LOAD, c->late_ctx);
    CHECK(c->added);
    CHECK_EQ(tecs_world_check(it->world), TECS_OK);
    CHECK_EQ(tecs_progress(it->world, 1), TECS_EBUSY);
}

TEST(system_add_and_remove_mid_frame_take_effect_at_frame_end)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx tv = { &log, 2 }, tl = { &log, 3 }, td = { &log, 4 };
    edit_ctx ed = { .log = &log, .late_ctx = &tl, .tag = 1 };
    ed.self = tecs_system_new(w, &(tecs_system_desc_t){ .name = "editor", .run = editor,
                              .ctx = &ed });
    ed.victim = add_task(w, "victim", TECS_ON_UPDATE, &tv);
    tecs_system_t dis = add_task(w, "disabled_mid_frame", TECS_ON_STORE, &td);
    CHECK(ed.self && ed.victim && dis);
    CHECK_EQ(tecs_system_count(w), 3);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    /* Frame 0: editor; the victim removed mid-frame still runs this frame;
    ** "late" added mid-frame does not. */
    CHECK_EQ(log.n, 3);
    CHECK_EQ(log.order[0], 1);
    CHECK_EQ(log.order[1], 2);
    CHECK_EQ(log.order[2], 4);
    CHECK_EQ(tecs_system_count(w), 2);        /* late + disabled_mid_frame */
    CHECK_EQ(tecs_system_lookup(w, "late"), ed.added);
    CHECK_ERR(tecs_system_enable(w, dis, false), TECS_OK);
    CHECK(!tecs_system_enabled(w, dis));
    log.n = 0;
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(log.n, 1);
    CHECK_EQ(log.order[0], 3);
    CHECK_ERR(tecs_system_enable(w, dis, true), TECS_OK);
    CHECK_ERR(tecs_system_free(w, ed.added), TECS_OK);
    CHECK_ERR(tecs_system_free(w, ed.added), TECS_ENOENT);
    log.n = 0;
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(log.n, 1);
    CHECK_EQ(log.order[0], 4);
    /* A removed name can be used again. */
    CHECK(add_task(w, "victim", TECS_ON_UPDATE, &tv));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct stopper_ctx {
    tecs_system_t target;
    int runs;
} stopper_ctx;

static void stopper(tecs_iter_t *it)
{
    stopper_ctx *s = it->ctx;
    CHECK_ERR(tecs_system_enable(it->world, s->target, false), TECS_OK);
}

static void stopped(tecs_iter_t *it)
{
    ((stopper_ctx *)it->ctx)->runs++;
}

TEST(system_disable_mid_frame_takes_effect_at_once)
{
    tecs_world_t *w = tw_new();
    stopper_ctx s = { 0, 0 };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "stopper", .phase = TECS_ON_LOAD,
                          .run = stopper, .ctx = &s }));
    s.target = tecs_system_new(w, &(tecs_system_desc_t){ .name = "stopped", .run = stopped,
                               .ctx = &s });
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(s.runs, 0);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "off", .run = stopped, .ctx = &s,
                          .disabled = true }));
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(s.runs, 0);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- intervals ------------------------------------------------------- */

TEST(system_interval_over_a_sequence_of_delta_times)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 1 };
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "tick", .run = log_run,
                                      .ctx = &t, .interval = 0.5 });
    CHECK(s);
    /* dt:        0.25  0.25  0.125  1.25   0      0.375  0.5   2.0  */
    /* acc:       0.25  0.5   0.125  1.375  0.375  0.75   0.75  2.25 */
    /* runs with:       0.5          1.0           0.5    0.5   2.0  */
    const double dts[] = { 0.25, 0.25, 0.125, 1.25, 0, 0.375, 0.5, 2.0 };
    const int64_t frames[] = { 1, 3, 5, 6, 7 };
    const double covered[] = { 0.5, 1.0, 0.5, 0.5, 2.0 };
    for (int i = 0; i < 8; i++)
        CHECK_ERR(tecs_progress(w, dts[i]), TECS_OK);
    CHECK_EQ(log.n, 5);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ(log.frame[i], frames[i]);
        CHECK(log.dt[i] == covered[i]);
    }
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.runs, 5);
    /* Time is never lost: 4.75 s elapsed, 4.5 s covered, 0.25 s carried. */
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(log.n, 6);
    CHECK(log.dt[5] == 0.5);
    /* No time accumulates while disabled. */
    CHECK_ERR(tecs_system_enable(w, s, false), TECS_OK);
    CHECK_ERR(tecs_progress(w, 5), TECS_OK);
    CHECK_ERR(tecs_system_enable(w, s, true), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(log.n, 6);
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(log.n, 7);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- bad input -------------------------------------------------------- */

static void noop_run(tecs_iter_t *it)
{
    (void)it;
}

static void noop_each(tecs_iter_t *it, int32_t row)
{
    (void)it;
    (void)row;
}

#define REFUSED(w, code, ...)                                               \
    do {                                                                    \
        CHECK_EQ(tecs_system_new((w), &(tecs_system_desc_t){ __VA_ARGS__ }), 0);\
        CHECK_EQ(tecs_last_error(w), (code));                               \
    } while (0)

TEST(system_bad_input_is_refused_and_changes_nothing)
{
    tecs_world_t *w = tw_new();
    tecs_world_t *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t pos2 = TECS_COMPONENT(w2, Position);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    tecs_query_t *q2 = TECS_QUERY(w2, {.comp = pos2});
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .run = noop_run });
    CHECK(s);
    size_t mem = tecs_world_memory(w);
    CHECK_EQ(tecs_system_new(w, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    REFUSED(w, TECS_EINVAL, .run = noop_run);
    REFUSED(w, TECS_EINVAL, .name = "", .run = noop_run);
    REFUSED(w, TECS_EINVAL, .name = "p", .phase = 9, .run = noop_run);
    REFUSED(w, TECS_EINVAL, .name = "p", .phase = -1, .run = noop_run);
    REFUSED(w, TECS_EINVAL, .name = "p");
    REFUSED(w, TECS_EINVAL, .name = "p", .query = q, .run = noop_run, .each = noop_each);
    REFUSED(w, TECS_EINVAL, .name = "p", .each = noop_each);
    REFUSED(w, TECS_EINVAL, .name = "p", .run = noop_run, .interval = -1);
    REFUSED(w, TECS_EWORLD, .name = "p", .query = q2, .run = noop_run);
    REFUSED(w, TECS_EEXIST, .name = "s", .run = noop_run);
    CHECK_EQ(tecs_system_count(w), 1);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK_ERR(tecs_progress(w, -1), TECS_EINVAL);
    CHECK_ERR(tecs_progress(w, 0.0 / 0.0), TECS_EINVAL);
    CHECK_EQ(tecs_world_frame_count(w), 0);
    tecs_iter_t it = tecs_query_iter(q);
    CHECK_ERR(tecs_progress(w, 1), TECS_EBUSY);
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_system_enable(w, 999, true), TECS_ENOENT);
    CHECK_ERR(tecs_system_stats(w, s, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_system_stats(w, 999, &(tecs_system_stats_t){ 0 }), TECS_ENOENT);
    CHECK_EQ(tecs_system_lookup(w, "nope"), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_EQ(tecs_system_lookup(w, NULL), 0);
    CHECK(tecs_system_name(w, 999) == NULL);
    CHECK(strcmp(tecs_system_name(w, s), "s") == 0);
    CHECK_ERR(tecs_system_free(w, s), TECS_OK);
    CHECK_ERR(tecs_system_free(w, s), TECS_ENOENT);
    CHECK_ERR(tecs_system_free(w, 0), TECS_ENOENT);
    CHECK_EQ(tecs_system_count(w), 0);
    CHECK_ERR(tecs_progress(NULL, 1), TECS_EINVAL);
    tw_free(w2);
    TW_CHECK(w);
    tw_free(w);
}

TEST(system_out_of_memory_changes_nothing)
{
    for (long k = 1;; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        CHECK(w);
        tecs_system_t a = tecs_system_new(w, &(tecs_system_desc_t){ .name = "a", .run = noop_run });
        CHECK(a);
        al.fail_at = al.calls + k;
        tecs_system_t b = tecs_system_new(w, &(tecs_system_desc_t){ .name = "b", .run = noop_run });
        bool failed = al.failures > 0;
        al.fail_at = 0;
        if (b == 0) {
            CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
            CHECK_EQ(tecs_system_count(w), 1);
            CHECK_EQ(tecs_system_lookup(w, "b"), 0);
        } else {
            CHECK_EQ(tecs_system_count(w), 2);
        }
        CHECK_ERR(tecs_progress(w, 1), TECS_OK);
        TW_CHECK(w);
    tw_free(w);
        if (!failed)
            break;
    }
}

/* ---- systems and observers together ---------------------------------- */

typedef struct sys_obs_ctx {
    tecs_comp_t vel;
    int order[8];
    int n;
} sys_obs_ctx;

static void give_velocity(tecs_iter_t *it, int32_t row)
{
    sys_obs_ctx *c = it->ctx;
    CHECK_ERR(tecs_add(it->world, it->entities[row], c->vel), TECS_OK);
    c->order[c->n++] = 1;
}

static void saw_add(const tecs_event_t *ev)
{
    sys_obs_ctx *c = ev->ctx;
    c->order[c->n++] = 2;
}

static void next_system(tecs_iter_t *it)
{
    sys_obs_ctx *c = it->ctx;
    c->order[c->n++] = 3;
}

TEST(system_changes_fire_their_events_before_the_next_system)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    sys_obs_ctx c = { .vel = TECS_COMPONENT(w, Velocity) };
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = c.vel,
          .callback = saw_add, .ctx = &c }));
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = c.vel, .oper = TECS_NONE});
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "give", .query = q,
          .each = give_velocity, .ctx = &c }));
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "next", .run = next_system,
          .ctx = &c }));
    CHECK_ERR(tecs_progress(w, 1), TECS_OK);
    CHECK_EQ(c.n, 3);
    CHECK_EQ(c.order[0], 1);
    CHECK_EQ(c.order[1], 2);
    CHECK_EQ(c.order[2], 3);
    CHECK(tecs_has(w, e, c.vel));
    TW_CHECK(w);
    tw_free(w);
}

/* A system that spins until the clock has moved on by `ctx` seconds (or,
** should the clock stand still, for 10,000,000 readings). */
static void spin(tecs_iter_t *it)
{
    const double *wait = it->ctx;
    double t0 = tecs_time_now();
    for (long n = 0; tecs_time_now() - t0 < *wait && n < 10000000; n++)
        ;
}

TEST(system_stats_use_the_clock_tecs_time_now_gives)
{
    tecs_world_t *w = tw_new();
    const double wait = 0.002;
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "spin", .run = spin,
                                      .ctx = (void *)&wait });
    CHECK(s);
    double before = tecs_time_now();
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    double after = tecs_time_now();
    CHECK(after >= before + 2 * wait);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.runs, 2);
    /* Each run spun for `wait` at least, inside the frames measured around. */
    CHECK(st.time_last >= wait && st.time_total >= 2 * wait);
    CHECK(st.time_total <= after - before);
    tw_free(w);
}
