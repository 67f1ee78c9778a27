/* Limits and memory: chunk budget, failed reservations, queued births and
** their memory, unique keys at apply time, NaN keys, system intervals, and
** indexes made while an entity is being destroyed. */
#include "test.h"

#include <float.h>
#include <math.h>

typedef struct Pos { float x, y; } Pos;
typedef struct Key { double k; } Key;

/* ---- system intervals ------------------------------------------------- */

typedef struct dt_log {
    int runs;
    double last;
    bool finite;
} dt_log;

static void log_dt(tecs_iter_t *it)
{
    dt_log *l = it->ctx;
    l->runs++;
    l->last = it->delta_time;
    l->finite = l->finite && isfinite(it->delta_time) && it->delta_time >= 0;
}

static dt_log run_frames(double interval, double dt, int frames)
{
    tecs_world_t *w = tw_new();
    dt_log l = { 0, 0, true };
    CHECK(tecs_system(w, &(tecs_system_desc_t){ .name = "s", .run = log_dt, .ctx = &l,
                                                .interval = interval }) != 0);
    for (int i = 0; i < frames; i++)
        CHECK_ERR(tecs_progress(w, dt), TECS_OK);
    tw_free(w);
    return l;
}

TEST(limits_subnormal_interval_keeps_running)
{
    dt_log l = run_frames(DBL_TRUE_MIN, 1.0 / 60, 5);
    CHECK_EQ(l.runs, 5);
    CHECK(l.finite);
    CHECK(l.last == 1.0 / 60);
    l = run_frames(DBL_MIN / 4, 1.0 / 60, 3);
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
}

TEST(limits_huge_delta_time_and_interval)
{
    dt_log l = run_frames(1e-300, 1e300, 3);        /* 1e600 intervals a frame */
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
    CHECK(l.last == 1e300);
    l = run_frames(1e300, 1e300, 4);                /* one interval a frame */
    CHECK_EQ(l.runs, 4);
    CHECK(l.finite);
    CHECK(l.last == 1e300);
    l = run_frames(1.0, 1e300, 3);                  /* 1e300 whole intervals */
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
    l = run_frames(1e300, 1e299, 20);               /* due every tenth frame */
    CHECK_EQ(l.runs, 2);
    CHECK(l.finite);
}
