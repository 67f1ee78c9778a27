/*
** where.c — field indexes narrow a query by value. An index maps one field
** of one component to the entities holding each value, whatever their
** archetype; a filter combines conditions on indexes, and a where (tecs_iter
** with .query and .where) walks the entities that match both the query and the filter, through the
** same chunk iterator as a plain query.
*/
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include "tinyecs.h"
#include "tinyecs/index.h"

/* Stop with a message when a result is not the one this program shows. */
static void fail(int line, const char *what)
{
    fprintf(stderr, "line %d: expected %s\n", line, what);
    exit(1);
}
#define EXPECT(c) ((c) ? (void)0 : fail(__LINE__, #c))

typedef struct Health { int hp; } Health;
typedef struct Position { float x, y; } Position;

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_entity_t ids[1000];
    for (int i = 0; i < 1000; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], hp, Health, {i});
        TECS_SET(w, ids[i], pos, Position, {(float)i, 0});
    }
    /* An ordered index on Health.hp (hash and 2-D spatial indexes exist too). */
    tecs_index_t *by_hp = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32,
        .offset = offsetof(Health, hp) });
    EXPECT(by_hp != NULL && tecs_index_count(by_hp) == 1000);

    /* where 10 <= hp <= 20 or hp == 999, highest hp first */
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_or(f, tecs_filter_between(f, by_hp, tecs_key_int(10), tecs_key_int(20)),
                   tecs_filter_cmp(f, by_hp, TECS_EQ, tecs_key_int(999)));
    tecs_filter_order(f, by_hp, true);
    EXPECT(tecs_filter_error(f) == TECS_OK);

    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = hp, .access = TECS_READ});
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    int n = 0, last = 1000;
    while (tecs_iter_next(&it)) {           /* runs of rows, as for a query */
        const Position *p = TECS_FIELD(&it, Position, 0);
        const Health *h = TECS_FIELD(&it, Health, 1);
        for (int i = 0; i < it.count; i++, n++) {
            printf("%s%g", n ? " " : "x: ", p[i].x);
            EXPECT(h[i].hp < last);         /* descending */
            last = h[i].hp;
        }
    }
    printf("\n");
    EXPECT(n == 12);

    /* The index follows every change: a set re-keys the entity. */
    TECS_SET(w, ids[500], hp, Health, {15});
    tecs_iter_t again = TECS_ITER(w, .query = q, .where = f);
    EXPECT(tecs_iter_collect(&again, NULL, 0) == 13);
    EXPECT(tecs_filter_test(f, ids[500]) && !tecs_filter_test(f, ids[501]));

    /* A unique index answers "which entity has this key?". */
    tecs_index_t *unique = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    EXPECT(unique == NULL && tecs_last_error(w) == TECS_EEXIST);   /* 15 twice */
    TECS_SET(w, ids[500], hp, Health, {500});
    unique = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    EXPECT(tecs_index_lookup(unique, tecs_key_int(42)) == ids[42]);
    printf("hp 42 belongs to entity %u\n", TECS_ENTITY_INDEX(ids[42]));

    tecs_filter_free(f);
    tecs_world_free(w);                     /* frees the indexes and the query */
    return 0;
}
