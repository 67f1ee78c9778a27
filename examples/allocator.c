/*
** allocator.c — the world takes every byte through one function of the
** program's choice, in the form of Lua's lua_Alloc: it is told the old
** size of a block as well as the new one, so it can count. This one keeps
** the live total and refuses to go past a budget; the world then answers
** TECS_ENOMEM and changes nothing.
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

typedef struct budget {
    size_t live;                /* bytes held now                         */
    size_t limit;               /* refuse to hold more (0: no limit)      */
} budget;

/* nsize 0 frees; otherwise a block of nsize bytes, or NULL. */
static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    budget *b = ud;
    if (nsize == 0) {
        free(ptr);
        b->live -= osize;
        return NULL;
    }
    if (b->limit && b->live - osize + nsize > b->limit)
        return NULL;                                /* over budget */
    void *p = realloc(ptr, nsize);
    if (p)
        b->live = b->live - osize + nsize;
    return p;
}

int main(void)
{
    budget b = { 0, 0 };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = counting_alloc, .alloc_ud = &b });
    EXPECT(w != NULL);
    printf("empty world: %zu bytes\n", b.live);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    EXPECT(tecs_new_bulk(w, a, 10000, NULL, 0, NULL) == TECS_OK);
    printf("10000 entities: %zu bytes, %.1f per entity\n", b.live,
           (double)b.live / 10000);
    EXPECT(tecs_world_memory(w) == b.live);         /* the world counts the same */

    /* A budget just above what is held: the next big birth is refused. */
    b.limit = b.live + 1024;
    size_t before = b.live;
    EXPECT(tecs_new_bulk(w, a, 100000, NULL, 0, NULL) == TECS_ENOMEM);
    printf("over budget: %s\n", tecs_last_error_msg(w));
    EXPECT(tecs_world_entity_count(w) == 10000 && b.live == before);

    b.limit = 0;
    tecs_world_free(w);
    printf("after free: %zu bytes\n", b.live);
    EXPECT(b.live == 0);
    return 0;
}
