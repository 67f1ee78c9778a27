/*
** app.c — the outside program of the packaging test: it includes the
** installed header, links the library and prints one line the test checks.
*/
#include <stdio.h>
#include "tinyecs.h"

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    if (w == NULL)
        return 1;
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 3; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, pos, Position, {(float)i, 0});
        TECS_SET(w, e, vel, Velocity, {1, 0});
    }
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = vel, .access = TECS_READ});
    float sum = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        Position *p = TECS_FIELD(&it, Position, 0);
        const Velocity *v = TECS_FIELD(&it, Velocity, 1);
        for (int32_t i = 0; i < it.count; i++) {
            p[i].x += v[i].x;
            sum += p[i].x;
        }
    }
    /* The library linked is the one the header describes. */
    if (tecs_version() != TECS_VERSION) {
        printf("header %d, library %d\n", TECS_VERSION, tecs_version());
        return 1;
    }
    printf("tinyecs %s: %d entities, sum %g\n", TECS_VERSION_STRING,
           (int)tecs_world_entity_count(w), sum);
    tecs_world_free(w);
    return 0;
}
