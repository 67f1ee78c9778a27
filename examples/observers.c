/*
** observers.c — observers hear of changes as they are applied: ADD, SET and
** REMOVE of one component, and ENTER / LEAVE when an entity starts or
** stops matching a set of terms. This program logs each event and checks
** the order in which they come.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs.h"
#include "tinyecs/observer.h"

/* Stop with a message when a result is not the one this program shows. */
static void fail(int line, const char *what)
{
    fprintf(stderr, "line %d: expected %s\n", line, what);
    exit(1);
}
#define EXPECT(c) ((c) ? (void)0 : fail(__LINE__, #c))

typedef struct Position { float x, y; } Position;
typedef struct Health { int hp; } Health;

static char trail[256];         /* one letter per event, in order */

static void log_event(const tecs_event_t *ev)
{
    static const char *const names[] = { "", "ADD", "SET", "REMOVE", "ENTER", "LEAVE" };
    const Health *h = ev->value;                    /* NULL for ENTER / LEAVE */
    printf("  %-6s entity %u", names[ev->kind], TECS_ENTITY_INDEX(ev->entity));
    if (h)
        printf(", hp %d", h->hp);
    printf("\n");
    strncat(trail, names[ev->kind], 1);
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), hp = TECS_COMPONENT(w, Health);
    for (tecs_event_kind_t k = TECS_ON_ADD; k <= TECS_ON_REMOVE; k++)   /* of Health */
        EXPECT(tecs_observer_new(w, &(tecs_observer_desc_t){
            .event = k, .comp = hp, .callback = log_event }) != 0);
    /* ENTER / LEAVE: "has a Position and a Health". */
    tecs_term_t alive[] = { { .comp = pos }, { .comp = hp } };
    tecs_observer_t enter = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ENTER, .terms = alive, .term_count = 2, .callback = log_event });
    EXPECT(enter && tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_LEAVE, .terms = alive, .term_count = 2, .callback = log_event }));

    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, {0, 0});          /* nothing observed yet */
    TECS_SET(w, e, hp, Health, {10});               /* ENTER, ADD, SET */
    TECS_SET(w, e, hp, Health, {5});                /* SET */
    tecs_remove(w, e, hp);                          /* REMOVE, LEAVE */
    printf("trail: %s\n", trail);
    EXPECT(strcmp(trail, "EASSRL") == 0);

    /* Removed, an observer hears nothing more. */
    EXPECT(tecs_observer_free(w, enter) == TECS_OK);
    trail[0] = '\0';
    TECS_SET(w, e, hp, Health, {7});                /* ADD, SET */
    tecs_destroy(w, e);                             /* REMOVE, LEAVE */
    printf("trail: %s\n", trail);
    EXPECT(strcmp(trail, "ASRL") == 0 && tecs_observer_count(w) == 4);

    tecs_world_free(w);
    return 0;
}
