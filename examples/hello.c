/*
** hello.c — the smallest tinyecs program: a world, two components, one
** entity, its values written and read back, and what a dead id answers.
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

int main(void)
{
    /* The world owns everything: entities, components, queries. */
    tecs_world_t *w = tecs_world_new();
    EXPECT(w != NULL);

    /* A component is a block of bytes registered at run time; the macro
    ** fills in the C type's name, size and alignment. */
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);

    /* An entity is a 64-bit id: a slot and a generation. It starts empty. */
    tecs_entity_t e = tecs_new(w);
    printf("entity %u:%u\n", TECS_ENTITY_INDEX(e), TECS_ENTITY_GENERATION(e));

    /* tecs_set adds the component when the entity lacks it, then copies
    ** the value in. */
    EXPECT(TECS_SET(w, e, pos, Position, {10, 20}) == TECS_OK);
    EXPECT(TECS_SET(w, e, vel, Velocity, {1, 2}) == TECS_OK);

    /* tecs_get_mut hands out the value in place: one step of motion. */
    Position *p = TECS_GET_MUT(w, e, pos, Position);
    const Velocity *v = TECS_GET(w, e, vel, Velocity);
    p->x += v->x;
    p->y += v->y;

    const Position *q = TECS_GET(w, e, pos, Position);
    printf("position after one step: (%g, %g)\n", q->x, q->y);
    EXPECT(q->x == 11 && q->y == 22);

    /* Errors are codes with a message, never an abort: a destroyed id is
    ** stale, and reading through it says so. */
    EXPECT(tecs_destroy(w, e) == TECS_OK);
    EXPECT(!tecs_is_alive(w, e));
    EXPECT(tecs_get(w, e, pos) == NULL);
    EXPECT(tecs_last_error(w) == TECS_EDEAD);
    printf("get after destroy: %s\n", tecs_last_error_msg(w));

    tecs_world_free(w);
    return 0;
}
