/*
** systems.c — a frame is a list of systems run by tecs_progress, phase by
** phase (ON_LOAD ... ON_STORE), in the order added within a phase. A system
** iterates its query, or runs once per frame without one; with an interval
** it runs only when that much time has passed. Changes a system makes are
** applied when it ends, so the next system sees them. A drive system
** steps its query itself and can stop the frame; a frame can run some
** groups only; tecs_system_run runs one system on demand.
*/
#include <stdio.h>
#include <stdlib.h>
#include "tinyecs.h"
#include "tinyecs/system.h"

/* Stop with a message when a result is not the one this program shows. */
static void fail(int line, const char *what)
{
    fprintf(stderr, "line %d: expected %s\n", line, what);
    exit(1);
}
#define EXPECT(c) ((c) ? (void)0 : fail(__LINE__, #c))

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;

/* ON_UPDATE, terms Position (write), Velocity (read): x += v dt. */
static void move(tecs_iter_t *it)
{
    Position *p = TECS_FIELD(it, Position, 0);
    const Velocity *v = TECS_FIELD(it, Velocity, 1);
    for (int i = 0; i < it->count; i++)
        p[i].x += v[i].x * (float)it->delta_time;
}

/* ON_LOAD, no query, every second: a new entity with a Position. */
static void spawn(tecs_iter_t *it)
{
    tecs_comp_t pos = *(tecs_comp_t *)it->ctx;
    TECS_SET(it->world, tecs_new(it->world), pos, Position, {0, 0});
    printf("  frame %lld: spawn after %g s\n", (long long)it->frame, it->delta_time);
}

/* ON_STORE, no query: the last word of each frame. */
static void report(tecs_iter_t *it)
{
    printf("frame %lld done, %d entities\n", (long long)it->frame,
           tecs_world_entity_count(it->world));
}

/* ON_VALIDATE, terms Position (read), Velocity (filter), drive form: the
** whole set at once. Stops the frame once every mover has passed x = 5. */
static tecs_err_t arrived(tecs_iter_t *it)
{
    int32_t far = 0, all = 0;
    while (tecs_iter_next(it)) {
        const Position *p = TECS_FIELD(it, Position, 0);
        for (int32_t i = 0; i < it->count; i++)
            far += p[i].x >= 5;
        all += it->count;
    }
    return all > 0 && far == all ? TECS_ELIMIT : TECS_OK;
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t ship = tecs_new(w);
    TECS_SET(w, ship, pos, Position, {0, 0});
    TECS_SET(w, ship, vel, Velocity, {2, 0});
    /* Added out of order: the phases decide when each runs. */
    tecs_system_new(w, &(tecs_system_desc_t){ .name = "report", .phase = TECS_ON_STORE,
                                              .run = report, .groups = 1 | 2 });
    tecs_system_t mover = tecs_system_new(w, &(tecs_system_desc_t){ .name = "move",
        .query = TECS_QUERY(w, {.comp = pos}, {.comp = vel, .access = TECS_READ}),
        .run = move });                             /* phase 0: ON_UPDATE */
    tecs_system_new(w, &(tecs_system_desc_t){ .name = "spawn", .phase = TECS_ON_LOAD,
                                              .run = spawn, .ctx = &pos, .interval = 1.0 });
    EXPECT(tecs_system_count(w) == 3);

    for (int f = 0; f < 8; f++)                     /* 8 frames of 0.25 s */
        EXPECT(tecs_progress(w, 0.25) == TECS_OK);
    EXPECT(TECS_GET(w, ship, pos, Position)->x == 4);   /* 2 units/s for 2 s */
    EXPECT(tecs_world_entity_count(w) == 3);            /* spawned at 1 s and 2 s */

    tecs_system_enable(w, mover, false);            /* a disabled system is skipped */
    EXPECT(tecs_progress(w, 0.25) == TECS_OK);
    EXPECT(TECS_GET(w, ship, pos, Position)->x == 4);
    tecs_system_stats_t st;
    EXPECT(tecs_system_stats(w, mover, &st) == TECS_OK && st.runs == 8);
    printf("move ran %lld times over %lld entities\n", (long long)st.runs,
           (long long)st.entities_total);


    /* Groups: a paused frame runs group 2 only ("report"); a frame still. */
    tecs_system_enable(w, mover, true);
    EXPECT(tecs_progress_groups(w, 0.25, 2) == TECS_OK);
    EXPECT(TECS_GET(w, ship, pos, Position)->x == 4);
    /* On demand: its own delta time, no frame. */
    int64_t frames = tecs_world_frame_count(w);
    EXPECT(tecs_system_run(w, mover, 0.5) == TECS_OK);
    EXPECT(TECS_GET(w, ship, pos, Position)->x == 5);
    EXPECT(tecs_world_frame_count(w) == frames);
    /* A drive system's code stops the frame before "report" runs. */
    tecs_system_new(w, &(tecs_system_desc_t){ .name = "arrived", .phase = TECS_ON_VALIDATE,
        .query = TECS_QUERY(w, {.comp = pos, .access = TECS_READ},
                            {.comp = vel, .access = TECS_FILTER}),
        .drive = arrived });
    EXPECT(tecs_progress(w, 0.25) == TECS_ELIMIT);
    printf("stopped: %s\n", tecs_last_error_msg(w));
    EXPECT(tecs_world_frame_count(w) == frames + 1);

    tecs_world_free(w);
    return 0;
}
