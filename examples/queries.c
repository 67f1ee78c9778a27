/*
** queries.c — a query has one term per component: with (the default), none
** or optional; read or write. The chunk iterator hands out whole columns,
** tecs_iter_each one entity at a time; .reverse walks backwards.
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
typedef struct Health { int hp; } Health;

/* Per entity: fields[i] points to the entity's value of term i. */
static bool print_entity(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    const Position *p = fields[0];
    const Health *h = fields[3];                    /* NULL: no Health */
    (void)w;
    printf("  entity %u at x = %g, hp %s\n", TECS_ENTITY_INDEX(e), p->x, h ? "yes" : "no");
    return ++*(int *)ctx == 3;                      /* true stops the walk */
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = TECS_COMPONENT(w, Health), frozen = TECS_TAG(w, Frozen);
    for (int i = 0; i < 10; i++) {                  /* 0, 3, 6, 9 frozen */
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, pos, Position, {(float)i, 0});
        TECS_SET(w, e, vel, Velocity, {1, 0});
        if (i % 2 == 0)
            TECS_SET(w, e, hp, Health, {100});
        if (i % 3 == 0)
            tecs_add(w, e, frozen);
    }
    /* Moving things that are not frozen; Health if they have it. */
    tecs_query_t *q = TECS_QUERY(w,
        {.comp = pos},                                          /* 0: read-write */
        {.comp = vel, .access = TECS_READ},                     /* 1: read only */
        {.comp = frozen, .oper = TECS_NONE},                    /* 2: must lack it */
        {.comp = hp, .oper = TECS_OPTIONAL, .access = TECS_READ}); /* 3: may have it */

    /* The chunk iterator: each step is `count` rows of one chunk. */
    int moved = 0, with_hp = 0, seen = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        Position *p = TECS_FIELD(&it, Position, 0);
        const Velocity *v = TECS_FIELD(&it, Velocity, 1);
        const Health *h = TECS_FIELD(&it, Health, 3);   /* NULL in chunks without */
        for (int i = 0; i < it.count; i++)
            p[i].x += v[i].x;
        moved += it.count;
        with_hp += h ? it.count : 0;
    }
    printf("moved %d entities, %d of them with Health\n", moved, with_hp);
    EXPECT(moved == 6 && with_hp == 3 && tecs_query_count(q) == 6);

    /* Per entity, stopped early by the callback: tecs_iter_each takes any
       iteration and ends it. */
    tecs_iter_t all = TECS_ITER(w, .query = q);
    EXPECT(tecs_iter_each(&all, print_entity, &seen) == TECS_OK && seen == 3);

    /* The same ids forwards and in reverse. */
    tecs_entity_t fwd[6], rev[6];
    tecs_iter_t forwards = TECS_ITER(w, .query = q);
    EXPECT(tecs_iter_collect(&forwards, fwd, 6) == 6);
    tecs_iter_t backwards = TECS_ITER(w, .query = q, .reverse = true);
    EXPECT(tecs_iter_collect(&backwards, rev, 6) == 6);
    printf("first entity %u, last in reverse\n", TECS_ENTITY_INDEX(fwd[0]));
    EXPECT(fwd[0] == rev[5] && fwd[2] == rev[3] && fwd[5] == rev[0]);

    tecs_world_free(w);                             /* frees the query too */
    return 0;
}
