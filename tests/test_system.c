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
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
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

/* ---- the drive form ------------------------------------------------- */

typedef struct drive_ctx {
    int calls;                  /* times the callback ran                     */
    int steps;                  /* tecs_iter_next steps it took               */
    int max_steps;              /* stop (tecs_iter_fini) after this many; <0: all */
    bool leave_open;            /* return with the iteration still open       */
    tecs_err_t rc;              /* what to return                             */
    tecs_entity_t kill;         /* destroyed (queued) when non-zero           */
    double dt;
    int64_t frame;
} drive_ctx;

static tecs_err_t drive_steps(tecs_iter_t *it)
{
    drive_ctx *d = it->ctx;
    d->calls++;
    d->dt = it->delta_time;
    d->frame = it->frame;
    CHECK(tecs_is_deferred(it->world));
    if (d->kill) {
        CHECK_ERR(tecs_destroy(it->world, d->kill), TECS_OK);
        CHECK(tecs_is_alive(it->world, d->kill));   /* queued */
    }
    while (d->max_steps < 0 || d->steps < d->max_steps) {
        if (!tecs_iter_next(it))
            return d->rc;
        d->steps++;
    }
    if (!d->leave_open)
        tecs_iter_fini(it);
    return d->rc;
}

TEST(system_drive_is_called_once_even_when_nothing_matches)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    drive_ctx a = { .max_steps = -1 }, b = { .max_steps = -1 };
    tecs_system_t sa = tecs_system_new(w, &(tecs_system_desc_t){ .name = "empty", .query = q,
                                       .drive = drive_steps, .ctx = &a });
    tecs_system_t sb = tecs_system_new(w, &(tecs_system_desc_t){ .name = "noquery",
                                       .drive = drive_steps, .ctx = &b });
    CHECK(sa && sb);
    CHECK_ERR(tecs_progress(w, 0.5), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0.25), TECS_OK);
    CHECK_EQ(a.calls, 2);
    CHECK_EQ(b.calls, 2);
    CHECK_EQ(a.steps + b.steps, 0);
    CHECK(a.dt == 0.25 && a.frame == 1);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, sa, &st), TECS_OK);
    CHECK_EQ(st.runs, 2);
    CHECK_EQ(st.entities_total, 0);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

TEST(system_drive_steps_stops_early_and_open_iterations_end)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    tecs_entity_t first = 0;
    for (int i = 0; i < 40; i++) {          /* three chunks: 16, 16, 8 rows */
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, pos, Position, { (float)i, 0 });
        if (i == 0)
            first = e;
    }
    drive_ctx d = { .max_steps = -1 };
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "d", .query = q,
                                      .drive = drive_steps, .ctx = &d });
    tecs_system_stats_t st;
    CHECK_ERR(tecs_progress(w, 1), TECS_OK);            /* every row */
    CHECK_EQ(d.steps, 3);
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.entities_last, 40);
    d = (drive_ctx){ .max_steps = 1 };                  /* one chunk, then fini */
    CHECK_ERR(tecs_progress(w, 1), TECS_OK);
    CHECK_EQ(d.steps, 1);
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.entities_last, 16);
    CHECK_EQ(st.entities_total, 56);
    /* Two chunks and returns with the iteration open: the library ends it,
    ** then applies the queued destroy. */
    d = (drive_ctx){ .max_steps = 2, .leave_open = true, .kill = first };
    CHECK_ERR(tecs_progress(w, 1), TECS_OK);
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.entities_last, 32);
    CHECK(!tecs_is_deferred(w));
    CHECK(!tecs_is_alive(w, first));
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);          /* the system's, not open */
    TW_CHECK(w);
    tw_free(w);
}

/* ---- a drive code stops the frame ------------------------------------- */

TEST(system_drive_error_stops_the_frame_and_the_frame_counts)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 0, 0 });
    run_log log = { .n = 0 };
    tag_ctx t[3] = { { &log, 0 }, { &log, 1 }, { &log, 2 } };
    drive_ctx d = { .max_steps = -1, .rc = TECS_ELIMIT, .kill = e };
    CHECK(add_task(w, "before", TECS_ON_UPDATE, &t[0]));
    tecs_system_t gone = add_task(w, "gone", TECS_ON_STORE, &t[1]);
    tecs_system_t stop = tecs_system_new(w, &(tecs_system_desc_t){ .name = "stopper",
                                         .drive = drive_steps, .ctx = &d });
    CHECK(add_task(w, "same_phase_later", TECS_ON_UPDATE, &t[2]));
    CHECK(gone && stop);
    CHECK_ERR(tecs_system_free(w, gone), TECS_OK);  /* outside a frame: at once */
    gone = add_task(w, "gone", TECS_ON_STORE, &t[1]);
    CHECK_ERR(tecs_progress(w, 0.5), TECS_ELIMIT);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    CHECK(strstr(tecs_last_error_msg(w), "stopper") != NULL);
    CHECK_EQ(log.n, 1);                          /* "before" only */
    CHECK_EQ(log.order[0], 0);
    CHECK_EQ(d.calls, 1);
    CHECK(!tecs_is_alive(w, e));                 /* its change applied */
    CHECK_EQ(tecs_world_frame_count(w), 1);      /* the frame counted */
    CHECK(!tecs_is_deferred(w));
    /* Still stopping: the frame after runs "before" and stops again. */
    d.kill = 0;
    CHECK_ERR(tecs_progress(w, 0.5), TECS_ELIMIT);
    CHECK_EQ(log.n, 2);
    CHECK_EQ(tecs_world_frame_count(w), 2);
    /* TECS_OK goes on. */
    d.rc = TECS_OK;
    CHECK_ERR(tecs_progress(w, 0.5), TECS_OK);
    CHECK_EQ(log.n, 5);
    CHECK_EQ(tecs_world_frame_count(w), 3);
    TW_CHECK(w);
    tw_free(w);
}

/* A drive system that removes itself and stops the frame: the removal
** happens in the sweep of the frame that stopped. */
static tecs_err_t remove_self_and_stop(tecs_iter_t *it)
{
    tecs_system_t *self = it->ctx;
    CHECK_ERR(tecs_system_free(it->world, *self), TECS_OK);
    return TECS_ECORRUPT;
}

TEST(system_drive_stop_still_sweeps_removed_systems)
{
    tecs_world_t *w = tw_new();
    tecs_system_t self = 0;
    self = tecs_system_new(w, &(tecs_system_desc_t){ .name = "once",
                           .drive = remove_self_and_stop, .ctx = &self });
    CHECK(self);
    CHECK_ERR(tecs_progress(w, 0), TECS_ECORRUPT);
    CHECK(strstr(tecs_last_error_msg(w), "once") != NULL);
    CHECK_EQ(tecs_system_count(w), 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- tecs_system_run -------------------------------------------------- */

TEST(system_run_on_demand_keeps_frames_and_intervals)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 0, 0 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 7 };
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "every_s",
                                      .run = log_run, .ctx = &t, .interval = 1.0 });
    drive_ctx d = { .max_steps = -1, .rc = TECS_OK };
    tecs_system_t ds = tecs_system_new(w, &(tecs_system_desc_t){ .name = "d", .query = q,
                                       .drive = drive_steps, .ctx = &d, .disabled = true,
                                       .groups = 4 });
    CHECK(s && ds);
    CHECK_ERR(tecs_progress(w, 0.6), TECS_OK);
    CHECK_EQ(log.n, 0);
    const double dt = 0.3;      /* a double: x87 keeps the constant wider */
    CHECK_ERR(tecs_system_run(w, s, dt), TECS_OK);      /* runs, no interval */
    CHECK_EQ(log.n, 1);
    CHECK(log.dt[0] == dt);
    CHECK_EQ(log.frame[0], 1);                          /* the next frame's number */
    CHECK_EQ(tecs_world_frame_count(w), 1);
    CHECK_ERR(tecs_progress(w, 0.6), TECS_OK);          /* 1.2 accumulated: due */
    CHECK_EQ(log.n, 2);
    CHECK(log.dt[1] == 1.0);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.runs, 2);
    /* Disabled and in no group of a frame: runs all the same. */
    CHECK_ERR(tecs_system_run(w, ds, 2.0), TECS_OK);
    CHECK_EQ(d.calls, 1);
    CHECK(d.dt == 2.0);
    CHECK_EQ(d.steps, 1);
    CHECK_ERR(tecs_system_stats(w, ds, &st), TECS_OK);
    CHECK_EQ(st.runs, 1);
    CHECK_EQ(st.entities_last, 1);
    /* Changes apply when it ends; the drive's code is returned. */
    d = (drive_ctx){ .max_steps = -1, .rc = TECS_ENOENT, .kill = e };
    CHECK_ERR(tecs_system_run(w, ds, 0), TECS_ENOENT);
    CHECK(strstr(tecs_last_error_msg(w), "'d'") != NULL);
    CHECK(!tecs_is_alive(w, e));
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_frame_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
}

TEST(system_run_bad_input_changes_nothing)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 0 };
    tecs_system_t s = add_task(w, "s", TECS_ON_UPDATE, &t);
    tecs_system_t gone = add_task(w, "gone", TECS_ON_UPDATE, &t);
    CHECK_ERR(tecs_system_free(w, gone), TECS_OK);
    CHECK_ERR(tecs_system_run(NULL, s, 0), TECS_EINVAL);
    CHECK_ERR(tecs_system_run(w, 0, 0), TECS_ENOENT);
    CHECK_ERR(tecs_system_run(w, 999, 0), TECS_ENOENT);
    CHECK_ERR(tecs_system_run(w, gone, 0), TECS_ENOENT);
    CHECK_ERR(tecs_system_run(w, s, -1), TECS_EINVAL);
    CHECK_ERR(tecs_system_run(w, s, 0.0 / 0.0), TECS_EINVAL);
    CHECK_ERR(tecs_system_run(w, s, 1e301), TECS_EINVAL);
    CHECK_EQ(log.n, 0);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, s, &st), TECS_OK);
    CHECK_EQ(st.runs, 0);
    TW_CHECK(w);
    tw_free(w);
}

/* Where tecs_system_run is refused: each place tries it and counts. */
typedef struct run_try {
    tecs_system_t target;
    int tries;
    int refused;
} run_try;

static void try_run(tecs_world_t *w, run_try *r)
{
    r->tries++;
    if (tecs_system_run(w, r->target, 0.1) == TECS_EBUSY)
        r->refused++;
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    int64_t frames = tecs_world_frame_count(w);
    CHECK_ERR(tecs_progress_groups(w, 0.1, UINT32_MAX), TECS_EBUSY);
    CHECK_EQ(tecs_world_frame_count(w), frames);
}

static void run_from_system(tecs_iter_t *it)
{
    try_run(it->world, it->ctx);
}

static tecs_err_t run_from_drive(tecs_iter_t *it)
{
    try_run(it->world, it->ctx);
    return TECS_OK;
}

static void run_from_event(const tecs_event_t *ev)
{
    try_run(ev->world, ev->ctx);
}

static bool run_from_each(tecs_world_t *w, tecs_entity_t e, void *const *f, void *ctx)
{
    (void)e;
    (void)f;
    try_run(w, ctx);
    return false;
}

TEST(system_run_is_refused_inside_callbacks_and_iterations)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ});
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 0 };
    run_try r = { 0 };
    r.target = add_task(w, "target", TECS_ON_STORE, &t);
    CHECK(tecs_system_enable(w, r.target, false) == TECS_OK);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "a", .run = run_from_system,
                          .ctx = &r }));
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "b", .query = q,
                          .drive = run_from_drive, .ctx = &r }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = vel,
                            .callback = run_from_event, .ctx = &r }));
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){ .on_set = run_from_event,
                                   .ctx = &r }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 1, 2 });                 /* the on_set hook */
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);                 /* the observer */
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);                 /* two systems */
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, run_from_each, &r), TECS_OK);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    try_run(w, &r);                                          /* an iteration */
    tecs_iter_fini(&it);
    CHECK_EQ(r.tries, 6);
    CHECK_EQ(r.refused, 6);
    CHECK_EQ(log.n, 0);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, r.target, &st), TECS_OK);
    CHECK_EQ(st.runs, 0);
    CHECK_EQ(tecs_world_frame_count(w), 1);
    CHECK_ERR(tecs_system_run(w, r.target, 0), TECS_OK);    /* outside: runs */
    CHECK_EQ(log.n, 1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- groups ----------------------------------------------------------- */

TEST(system_groups_mask_the_systems_a_frame_runs)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t[4] = { { &log, 0 }, { &log, 1 }, { &log, 2 }, { &log, 3 } };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "g0", .run = log_run,
                          .ctx = &t[0] }));                       /* group 1 */
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "g2", .run = log_run,
                          .ctx = &t[1], .groups = 2 }));
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "g3", .run = log_run,
                          .ctx = &t[2], .groups = 3 }));
    tecs_system_t iv = tecs_system_new(w, &(tecs_system_desc_t){ .name = "iv",
                                       .run = log_run, .ctx = &t[3], .groups = 2,
                                       .interval = 1.0 });
    tecs_system_desc_t got;
    CHECK_ERR(tecs_system_get(w, tecs_system_lookup(w, "g0"), &got), TECS_OK);
    CHECK_EQ(got.groups, 1);
    CHECK_ERR(tecs_progress_groups(w, 0.6, 1), TECS_OK);    /* g0, g3; iv skipped */
    CHECK_EQ(log.n, 2);
    CHECK_EQ(log.order[0], 0);
    CHECK_EQ(log.order[1], 2);
    CHECK_ERR(tecs_progress_groups(w, 0.6, 2), TECS_OK);    /* g2, g3; iv at 0.6 */
    CHECK_EQ(log.n, 4);
    CHECK_EQ(log.order[2], 1);
    CHECK_EQ(log.order[3], 2);
    CHECK_ERR(tecs_progress_groups(w, 0.6, 0), TECS_OK);    /* nothing, but a frame */
    CHECK_EQ(log.n, 4);
    CHECK_EQ(tecs_world_frame_count(w), 3);
    CHECK_ERR(tecs_progress(w, 0.6), TECS_OK);              /* all; iv at 1.2: due */
    CHECK_EQ(log.n, 8);
    CHECK_EQ(log.order[7], 3);
    CHECK(log.dt[7] == 1.0);
    CHECK_EQ(log.frame[7], 3);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, iv, &st), TECS_OK);
    CHECK_EQ(st.runs, 1);
    CHECK_ERR(tecs_progress_groups(w, -1, 1), TECS_EINVAL);
    CHECK_ERR(tecs_progress_groups(NULL, 0, 1), TECS_EINVAL);
    CHECK_EQ(tecs_world_frame_count(w), 4);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- get and set ------------------------------------------------------ */

TEST(system_set_replaces_and_keeps_place_stats_and_interval)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t[4] = { { &log, 0 }, { &log, 1 }, { &log, 2 }, { &log, 3 } };
    tecs_system_t a = tecs_system_new(w, &(tecs_system_desc_t){ .name = "a",
                                      .phase = TECS_ON_STORE, .run = log_run, .ctx = &t[0],
                                      .interval = 1.0 });
    CHECK(add_task(w, "b", TECS_ON_STORE, &t[1]));
    CHECK_ERR(tecs_progress(w, 0.6), TECS_OK);              /* b only; a at 0.6 */
    CHECK_EQ(log.n, 1);
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(w, a, &d), TECS_OK);
    CHECK(strcmp(d.name, "a") == 0 && d.phase == TECS_ON_STORE && d.run == log_run);
    CHECK(d.each == NULL && d.drive == NULL && d.ctx == &t[0] && d.query == NULL);
    CHECK(d.interval == 1.0 && d.groups == 1 && !d.disabled);
    d.ctx = &t[2];
    d.interval = 0.5;
    CHECK_ERR(tecs_system_set(w, a, &d), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);    /* 0.6 kept: due at 0.5, before b */
    CHECK_EQ(log.n, 3);
    CHECK_EQ(log.order[1], 2);
    CHECK(log.dt[1] == 0.5);
    CHECK_EQ(log.order[2], 1);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, a, &st), TECS_OK);
    CHECK_EQ(st.runs, 1);
    /* Name NULL keeps it; disabled and groups apply. */
    d.name = NULL;
    d.disabled = true;
    CHECK_ERR(tecs_system_set(w, a, &d), TECS_OK);
    CHECK(!tecs_system_enabled(w, a));
    CHECK(strcmp(tecs_system_name(w, a), "a") == 0);
    d.disabled = false;
    d.groups = 8;
    CHECK_ERR(tecs_system_set(w, a, &d), TECS_OK);
    CHECK(tecs_system_enabled(w, a));
    CHECK_ERR(tecs_progress_groups(w, 1.0, 8), TECS_OK);
    CHECK_EQ(log.n, 4);
    CHECK_EQ(log.order[3], 2);
    TW_CHECK(w);
    tw_free(w);
}

#define SET_REFUSED(w, s, code, ...)                                        \
    do {                                                                    \
        CHECK_ERR(tecs_system_set((w), (s), &(tecs_system_desc_t){ __VA_ARGS__ }), (code));\
        CHECK_EQ(tecs_last_error(w), (code));                               \
    } while (0)

TEST(system_set_and_get_bad_input_change_nothing)
{
    tecs_world_t *w = tw_new();
    tecs_world_t *w2 = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t pos2 = TECS_COMPONENT(w2, Position);
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos});
    tecs_query_t *q2 = TECS_QUERY(w2, {.comp = pos2});
    int ctx = 0;
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "s",
                                      .phase = TECS_ON_LOAD, .query = q, .each = noop_each,
                                      .ctx = &ctx, .interval = 2 });
    CHECK(add_task(w, "other", TECS_ON_UPDATE, &(tag_ctx){ 0 }));
    CHECK(s);
    tecs_system_desc_t before;
    CHECK_ERR(tecs_system_get(w, s, &before), TECS_OK);
    size_t mem = tecs_world_memory(w);
    CHECK_ERR(tecs_system_set(NULL, s, &before), TECS_EINVAL);
    CHECK_ERR(tecs_system_set(w, s, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_system_set(w, 999, &before), TECS_ENOENT);
    CHECK_ERR(tecs_system_set(w, 0, &before), TECS_ENOENT);
    SET_REFUSED(w, s, TECS_EINVAL, .name = "other", .phase = TECS_ON_LOAD, .run = noop_run);
    SET_REFUSED(w, s, TECS_EINVAL, .name = "t", .phase = TECS_ON_LOAD, .run = noop_run);
    SET_REFUSED(w, s, TECS_EINVAL, .phase = TECS_ON_STORE, .run = noop_run);
    SET_REFUSED(w, s, TECS_EINVAL, .run = noop_run);                 /* 0: on update */
    SET_REFUSED(w, s, TECS_EINVAL, .phase = TECS_ON_LOAD);
    SET_REFUSED(w, s, TECS_EINVAL, .phase = TECS_ON_LOAD, .run = noop_run,
                .drive = drive_steps);
    SET_REFUSED(w, s, TECS_EINVAL, .phase = TECS_ON_LOAD, .each = noop_each);
    SET_REFUSED(w, s, TECS_EINVAL, .phase = TECS_ON_LOAD, .run = noop_run, .interval = -1);
    SET_REFUSED(w, s, TECS_EWORLD, .phase = TECS_ON_LOAD, .query = q2, .run = noop_run);
    REFUSED(w, TECS_EINVAL, .name = "p", .run = noop_run, .drive = drive_steps);
    REFUSED(w, TECS_EINVAL, .name = "p", .each = noop_each, .query = q,
            .drive = drive_steps);
    CHECK_ERR(tecs_system_get(w, s, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_system_get(w, 999, &(tecs_system_desc_t){ 0 }), TECS_ENOENT);
    CHECK_ERR(tecs_system_get(NULL, s, &(tecs_system_desc_t){ 0 }), TECS_EINVAL);
    tecs_system_desc_t after;
    CHECK_ERR(tecs_system_get(w, s, &after), TECS_OK);
    CHECK(before.name == after.name && before.phase == after.phase &&
          before.query == after.query && before.run == after.run &&
          before.each == after.each && before.drive == after.drive &&
          before.ctx == after.ctx && before.interval == after.interval &&
          before.groups == after.groups && before.disabled == after.disabled);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    /* The same description, the phase spelled out: accepted. */
    CHECK_ERR(tecs_system_set(w, s, &before), TECS_OK);
    tw_free(w2);
    TW_CHECK(w);
    tw_free(w);
}

TEST(system_set_moves_the_busy_mark_between_queries)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q1 = TECS_QUERY(w, {.comp = pos});
    tecs_query_t *q2 = TECS_QUERY(w, {.comp = vel});
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .query = q1,
                                      .run = noop_run });
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(w, s, &d), TECS_OK);
    d.query = q2;
    CHECK_ERR(tecs_system_set(w, s, &d), TECS_OK);
    CHECK_ERR(tecs_query_free(q2), TECS_EBUSY);
    CHECK_ERR(tecs_query_free(q1), TECS_OK);
    CHECK_ERR(tecs_system_set(w, s, &d), TECS_OK);      /* the same query: still busy */
    CHECK_ERR(tecs_query_free(q2), TECS_EBUSY);
    d.query = NULL;
    CHECK_ERR(tecs_system_set(w, s, &d), TECS_OK);
    CHECK_ERR(tecs_query_free(q2), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* A per-entity system that, at its first row, replaces itself with a drive
** system on another query; the running call goes on with the old one. */
typedef struct self_set {
    tecs_system_t self;
    tecs_query_t *next_query;
    drive_ctx drive;
    int rows;
    int sets;
} self_set;

static void set_self(tecs_iter_t *it, int32_t row)
{
    (void)row;
    self_set *ss = it->ctx;
    ss->rows++;
    if (ss->sets++ > 0)
        return;
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(it->world, ss->self, &d), TECS_OK);
    d.each = NULL;
    d.drive = drive_steps;
    d.ctx = &ss->drive;
    d.query = ss->next_query;
    CHECK_ERR(tecs_system_set(it->world, ss->self, &d), TECS_OK);
    CHECK(tecs_query_free(d.query) == TECS_EBUSY);
}

static void set_other(const tecs_event_t *ev)
{
    self_set *ss = ev->ctx;
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(ev->world, ss->self, &d), TECS_OK);
    d.disabled = true;
    CHECK_ERR(tecs_system_set(ev->world, ss->self, &d), TECS_OK);
}

TEST(system_set_from_inside_callbacks_takes_effect_at_the_next_run)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q1 = TECS_QUERY(w, {.comp = pos});
    tecs_query_t *q2 = TECS_QUERY(w, {.comp = vel});
    for (int i = 0; i < 3; i++)
        TECS_SET(w, tecs_new(w), pos, Position, { 0, 0 });
    self_set ss = { .next_query = q2, .drive = { .max_steps = -1 } };
    ss.self = tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .query = q1,
                              .each = set_self, .ctx = &ss });
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(ss.rows, 3);                   /* the whole run with the old form */
    CHECK_EQ(ss.drive.calls, 0);
    CHECK_ERR(tecs_query_free(q1), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(ss.rows, 3);
    CHECK_EQ(ss.drive.calls, 1);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(w, ss.self, &st), TECS_OK);
    CHECK_EQ(st.runs, 2);
    CHECK_EQ(st.entities_total, 3);
    /* From an observer: allowed, at once. */
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = vel,
                            .callback = set_other, .ctx = &ss }));
    TECS_SET(w, tecs_new(w), vel, Velocity, { 0, 0 });
    CHECK(!tecs_system_enabled(w, ss.self));
    TW_CHECK(w);
    tw_free(w);
}

/* In a constructor hook rows are in motion: tecs_system_set is refused like
** tecs_system_new, tecs_system_run like tecs_progress; get still reads. */
typedef struct hook_try {
    tecs_world_t *w;
    tecs_system_t s;
    bool armed;
    int refused;
} hook_try;

static void ctor_tries(void *dst, int32_t n, void *ctx)
{
    memset(dst, 0, (size_t)n * sizeof(Position));
    hook_try *h = ctx;
    if (!h->armed)
        return;
    h->armed = false;
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(h->w, h->s, &d), TECS_OK);
    d.disabled = true;
    h->refused += tecs_system_set(h->w, h->s, &d) == TECS_EBUSY;
    h->refused += tecs_system_run(h->w, h->s, 0) == TECS_EBUSY;
}

TEST(system_set_and_run_are_refused_in_lifecycle_hooks)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 0 };
    hook_try h = { .w = w, .s = add_task(w, "s", TECS_ON_UPDATE, &t) };
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Position), .align = _Alignof(Position),
        .ctor = ctor_tries, .hook_ctx = &h });
    h.armed = true;
    CHECK_ERR(tecs_add(w, tecs_new(w), obj), TECS_OK);
    CHECK_EQ(h.refused, 2);
    CHECK(tecs_system_enabled(w, h.s));
    CHECK_EQ(log.n, 0);
    TW_CHECK(w);
    tw_free(w);
}

/* tecs_system_at hands out the live systems in id order, skipping removed
** ones, and 0 outside 0..count-1. */
TEST(system_at_enumerates_live_systems_in_id_order)
{
    tecs_world_t *w = tw_new();
    run_log log = { .n = 0 };
    tag_ctx t = { &log, 1 };
    tecs_system_t a = add_task(w, "a", TECS_ON_STORE, &t);
    tecs_system_t b = add_task(w, "b", TECS_ON_LOAD, &t);
    tecs_system_t c = add_task(w, "c", TECS_ON_UPDATE, &t);
    CHECK(a && b && c);
    CHECK_EQ(tecs_system_at(w, 0), a);
    CHECK_EQ(tecs_system_at(w, 1), b);
    CHECK_EQ(tecs_system_at(w, 2), c);
    CHECK_EQ(tecs_system_at(w, 3), 0);
    CHECK_ERR(tecs_system_free(w, b), TECS_OK);
    CHECK_EQ(tecs_system_count(w), 2);
    CHECK_EQ(tecs_system_at(w, 0), a);
    CHECK_EQ(tecs_system_at(w, 1), c);
    CHECK_EQ(tecs_system_at(w, 2), 0);
    CHECK_EQ(tecs_system_at(w, -1), 0);
    CHECK_EQ(tecs_system_at(w, INT32_MAX), 0);
    CHECK_EQ(tecs_system_at(NULL, 0), 0);
    tw_free(w);
}
