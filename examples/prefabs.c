/*
** prefabs.c — monster templates for a small dungeon: a goblin prefab with
** a sword as its child, a chief that is a variant of it, a pack made in
** one call. Instances copy what each owns (Position, Health) and share
** what the prefab's components say is inherited (Stats: one value for
** every goblin, changed once for all); an instance that sets its own
** overrides it. Queries leave the prefabs out without a term for it, and
** an inherited term hands the shared value out once per step.
*/
#include <stdio.h>
#include <stdlib.h>
#include "tinyecs.h"
#include "tinyecs/relation.h"

/* Stop with a message when a result is not the one this program shows. */
static void fail(int line, const char *what)
{
    fprintf(stderr, "line %d: expected %s\n", line, what);
    exit(1);
}
#define EXPECT(c) ((c) ? (void)0 : fail(__LINE__, #c))

typedef struct Position { float x, y; } Position;
typedef struct Health { int32_t hp; } Health;
typedef struct Stats { int32_t attack, speed; } Stats;     /* shared by a kind */
typedef struct Item { const char *name; } Item;

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), health = TECS_COMPONENT(w, Health);
    tecs_comp_t item = TECS_COMPONENT(w, Item);
    tecs_comp_t stats = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Stats", .size = sizeof(Stats), .align = _Alignof(Stats), .inherit = true });
    tecs_comp_t prefab = tecs_prefab(w), childof = tecs_childof(w), isa = tecs_isa(w);

    /* The goblin: a prefab, and its sword, a prefab child. */
    tecs_entity_t goblin = tecs_new(w);
    TECS_SET(w, goblin, pos, Position, {0, 0});
    TECS_SET(w, goblin, health, Health, {7});
    TECS_SET(w, goblin, stats, Stats, {3, 2});
    tecs_add(w, goblin, prefab);
    tecs_entity_t sword = tecs_new(w);
    TECS_SET(w, sword, item, Item, {"rusty sword"});
    tecs_add(w, sword, prefab);
    tecs_pair_add(w, sword, childof, goblin);

    /* The chief: a variant, its own Stats over the goblin's. */
    tecs_entity_t chief = tecs_instantiate(w, goblin);
    tecs_add(w, chief, prefab);
    TECS_SET(w, chief, stats, Stats, {6, 2});
    TECS_SET(w, chief, health, Health, {20});

    /* A pack of five goblins and their chief, each with a sword of its own. */
    tecs_entity_t pack[5];
    EXPECT(tecs_instantiate_bulk(w, goblin, 5, pack) == TECS_OK);
    tecs_entity_t boss = tecs_instantiate(w, chief);
    for (int i = 0; i < 5; i++)
        TECS_SET(w, pack[i], pos, Position, {(float)i, 0});
    EXPECT(tecs_pair_target(w, pack[0], isa, 0) == goblin);
    EXPECT(TECS_GET(w, pack[0], stats, Stats)->attack == 3);     /* the goblin's */
    EXPECT(TECS_GET(w, boss, stats, Stats)->attack == 6);        /* the chief's */
    EXPECT(!tecs_has(w, pack[0], stats));                        /* shared, not copied */
    tecs_walk_t kids = tecs_sources(w, pack[0], childof);
    EXPECT(tecs_walk_next(&kids) && TECS_GET(w, kids.entity, item, Item) != NULL);

    /* The templates walk nowhere: a query sees the six monsters only. */
    tecs_query_t *monsters = TECS_QUERY(w, {.comp = pos}, {.comp = health},
                                        {.comp = stats, .access = TECS_READ, .inherited = true});
    EXPECT(tecs_query_count(monsters) == 6);

    /* A balance patch: goblins hit harder, every goblin at once. */
    TECS_SET(w, goblin, stats, Stats, {4, 2});
    int32_t total = 0, shared_steps = 0;
    tecs_iter_t it = TECS_ITER(w, .query = monsters);
    while (tecs_iter_next(&it)) {
        const Stats *s = TECS_FIELD(&it, Stats, 2);
        bool own = tecs_field_is_self(&it, 2);
        shared_steps += !own;
        for (int32_t i = 0; i < it.count; i++)
            total += own ? s[i].attack : s[0].attack;
    }
    EXPECT(total == 5 * 4 + 6);
    printf("six monsters, attack %d in all, %d shared steps\n", (int)total, (int)shared_steps);

    /* An override: one goblin found a better blade. */
    TECS_SET(w, pack[2], stats, Stats, {9, 2});
    EXPECT(TECS_GET(w, pack[2], stats, Stats)->attack == 9);
    EXPECT(TECS_GET(w, pack[3], stats, Stats)->attack == 4);

    /* A prefab with instances is kept: destroy the instances first. */
    EXPECT(tecs_destroy(w, goblin) == TECS_EBUSY);
    tecs_query_free(monsters);
    tecs_world_free(w);
    return 0;
}
