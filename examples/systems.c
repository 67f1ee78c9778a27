/*
** systems.c — a frame is a list of systems run by tecs_progress, phase by
** phase (ON_LOAD ... ON_STORE), in the order added within a phase. A system
** iterates its query, or runs once per frame without one; with an interval
** it runs only when that much time has passed. Changes a system makes are
** applied when it ends, so the next system sees them.
*/
#include <stdio.h>
#include <stdlib.h>
#include "tinyecs.h"

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

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t ship = tecs_new(w);
    TECS_SET(w, ship, pos, Position, {0, 0});
    TECS_SET(w, ship, vel, Velocity, {2, 0});
    /* Added out of order: the phases decide when each runs. */
    tecs_system_new(w, &(tecs_system_desc_t){ .name = "report", .phase = TECS_ON_STORE,
                                              .run = report });
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

    tecs_world_free(w);
    return 0;
}
