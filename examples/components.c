/*
** components.c — components and tags, and the archetypes they make: every
** entity lives in the archetype of exactly its set of components, and
** adding or removing one moves it to another.
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
typedef struct Health { int hp; } Health;

/* Print the names of an archetype's components. */
static void print_archetype(tecs_world_t *w, const char *what, const tecs_archetype_t *a)
{
    const tecs_comp_t *ids;
    int32_t n = tecs_archetype_components(a, &ids);
    printf("%-22s {", what);
    for (int32_t i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", tecs_component_name(w, ids[i]));
    printf("}, %d entities\n", tecs_archetype_entity_count(a));
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);  /* name "Position", sizeof */
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t enemy = TECS_TAG(w, Enemy);         /* size 0: a tag, no data */
    EXPECT(tecs_component_lookup(w, "Enemy") == enemy);
    EXPECT(tecs_component_size(w, pos) == sizeof(Position));
    EXPECT(tecs_component_size(w, enemy) == 0);

    /* tecs_add gives a default value (zero-filled for plain data). */
    tecs_entity_t e = tecs_new(w);
    EXPECT(tecs_add(w, e, pos) == TECS_OK);
    EXPECT(TECS_GET(w, e, pos, Position)->x == 0);
    EXPECT(tecs_add(w, e, enemy) == TECS_OK);
    EXPECT(tecs_has(w, e, enemy) && !tecs_has(w, e, hp));
    EXPECT(tecs_add(w, e, pos) == TECS_EEXIST);     /* it has one already */
    print_archetype(w, "after add pos, enemy:", tecs_entity_archetype(w, e));

    /* An archetype is found by its set of components, in any order. */
    tecs_archetype_t *pe = tecs_archetype_get(w, 2, (tecs_comp_t[]){ enemy, pos });
    EXPECT(tecs_entity_archetype(w, e) == pe);

    /* Removing the tag moves the entity back to {Position}; values move along. */
    EXPECT(TECS_SET(w, e, pos, Position, {3, 4}) == TECS_OK);
    EXPECT(tecs_remove(w, e, enemy) == TECS_OK);
    EXPECT(tecs_remove(w, e, enemy) == TECS_ENOENT);
    print_archetype(w, "after remove enemy:", tecs_entity_archetype(w, e));
    EXPECT(TECS_GET(w, e, pos, Position)->y == 4);
    EXPECT(tecs_archetype_entity_count(pe) == 0);

    /* Many entities straight into one archetype, with their values. */
    tecs_archetype_t *ph = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    Health hps[100];
    for (int i = 0; i < 100; i++)
        hps[i].hp = i;
    EXPECT(tecs_new_bulk(w, ph, 100, NULL, 1, &(tecs_value_t){ hp, hps }) == TECS_OK);
    print_archetype(w, "bulk:", ph);
    EXPECT(tecs_archetype_entity_count(ph) == 100);
    printf("%d archetypes (the empty one included), %d entities\n",
           tecs_world_archetype_count(w), tecs_world_entity_count(w));
    EXPECT(tecs_world_entity_count(w) == 101);

    tecs_world_free(w);
    return 0;
}
