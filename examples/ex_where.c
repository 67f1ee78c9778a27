/*
** ex_where.c — a field index narrows a query by value: an ordered index on
** Health.hp, a filter "10 <= hp <= 20 or hp == 999", results in descending
** hp order, read through the same chunk iterator as a plain query.
*/
#include <stdio.h>
#include <stddef.h>
#include "tinyecs.h"

typedef struct Health { int hp; } Health;
typedef struct Position { float x, y; } Position;

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    for (int i = 0; i < 1000; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {i});
        TECS_SET(w, e, pos, Position, {(float)i, 0});
    }
    /* An ordered index on Health.hp (hash and 2-D spatial exist too). */
    tecs_index_t *by_hp = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32,
        .offset = offsetof(Health, hp) });

    /* where 10 <= hp <= 20 or hp == 999, highest hp first */
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_or(f, tecs_filter_between(f, by_hp, tecs_key_int(10), tecs_key_int(20)),
                     tecs_filter_cmp(f, by_hp, TECS_EQ, tecs_key_int(999)));
    tecs_filter_order(f, by_hp, true);

    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = hp, .access = TECS_READ});
    tecs_iter_t it = tecs_query_where(q, f);
    while (tecs_iter_next(&it)) {           /* runs of rows, like a query */
        Position *p = TECS_FIELD(&it, Position, 0);
        for (int i = 0; i < it.count; i++)
            printf("%g\n", p[i].x);
    }
    tecs_filter_free(f);
    tecs_world_free(w);                     /* frees the index and the query */
    return 0;
}
