/*
** delayed.c — changing the world while walking it. Inside an iteration new,
** destroy, add and remove are queued until the outermost iteration ends. The
** delayed queue holds births and destroys until the program applies them.
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

/* Runs just before a delayed destroy kills the entity. */
static void farewell(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    printf("  destroying entity %u (still alive: %d)\n", TECS_ENTITY_INDEX(e),
           tecs_is_alive(w, e));
    ++*(int *)ctx;
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    for (int i = 0; i < 6; i++)
        TECS_SET(w, tecs_new(w), pos, Position, {(float)i, 0});
    tecs_query_t *q = tecs_query_all(w, 1, &pos);

    /* 1. Mid-walk, destroy the even ones and spawn two for each. */
    int visited = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = TECS_FIELD(&it, Position, 0);
        for (int i = 0; i < it.count; i++, visited++) {
            EXPECT(tecs_is_deferred(w));
            if ((int)p[i].x % 2 == 0) {
                tecs_destroy(w, it.entities[i]);                /* queued */
                for (int k = 1; k <= 2; k++)                    /* queued too */
                    TECS_SET(w, tecs_new(w), pos, Position, {p[i].x + 100 * k, 0});
            }
        }
        EXPECT(tecs_world_entity_count(w) == 6);    /* nothing applied yet */
    }
    printf("visited %d, now %d entities\n", visited, tecs_world_entity_count(w));
    EXPECT(visited == 6 && tecs_world_entity_count(w) == 9 && !tecs_is_deferred(w));

    /* 2. The delayed queue: the id exists now, the entity when applied. */
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t born = tecs_delayed_new(w, a, 1, &(tecs_value_t){ pos, &(Position){ 7, 7 } });
    EXPECT(born != 0 && !tecs_is_alive(w, born) && tecs_delayed_new_count(w) == 1);

    tecs_entity_t victim = tecs_new(w);
    int farewells = 0;
    EXPECT(tecs_delayed_destroy(w, victim, farewell, &farewells) == TECS_OK);
    EXPECT(tecs_is_alive(w, victim) && tecs_delayed_destroy_count(w) == 1);

    EXPECT(tecs_delayed_apply_new(w) == TECS_OK);       /* births only */
    EXPECT(tecs_is_alive(w, born) && TECS_GET(w, born, pos, Position)->x == 7);
    EXPECT(tecs_is_alive(w, victim));
    EXPECT(tecs_delayed_apply_destroy(w) == TECS_OK);   /* destroys only */
    EXPECT(!tecs_is_alive(w, victim) && farewells == 1);

    /* tecs_delayed_apply does both, in call order. */
    tecs_entity_t twin = tecs_delayed_new(w, a, 0, NULL);
    EXPECT(tecs_delayed_destroy(w, born, farewell, &farewells) == TECS_OK);
    EXPECT(tecs_delayed_apply(w) == TECS_OK);
    EXPECT(tecs_is_alive(w, twin) && !tecs_is_alive(w, born) && farewells == 2);
    printf("after the applies: %d entities\n", tecs_world_entity_count(w));

    tecs_world_free(w);
    return 0;
}
