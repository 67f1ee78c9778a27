/*
** Relationships and observers: ADD / SET / REMOVE of a relation's pairs,
** ChildOf's included, with the pair's target in the event, on a target's
** death too, and changes made from the callbacks.
*/
#include "test.h"

typedef struct seen {
    int n;
    tecs_event_kind_t kind[16];
    tecs_entity_t entity[16], target[16];
    int32_t value[16];
    tecs_comp_t rel;
    tecs_entity_t spawn_parent;         /* the callback adds a child of it */
    tecs_err_t err;
} seen;

static void record(const tecs_event_t *ev)
{
    seen *s = ev->ctx;
    if (s->n < 16) {
        s->kind[s->n] = ev->kind;
        s->entity[s->n] = ev->entity;
        s->target[s->n] = ev->target;
        s->value[s->n] = ev->value ? *(const int32_t *)ev->value : -1;
        s->n++;
    }
    /* What the callbacks may do: pair changes queue; reads see now. */
    if (s->spawn_parent) {
        tecs_entity_t kid = tecs_new(ev->world);
        s->err = tecs_pair_add(ev->world, kid, tecs_childof(ev->world), s->spawn_parent);
        if (tecs_pair_has(ev->world, kid, tecs_childof(ev->world), s->spawn_parent))
            s->err = TECS_ECORRUPT;                     /* applied too early */
        s->spawn_parent = 0;
    }
}

static void watch(tecs_world_t *w, tecs_comp_t c, seen *s)
{
    tecs_event_kind_t kinds[] = { TECS_ON_ADD, TECS_ON_SET, TECS_ON_REMOVE };
    for (int i = 0; i < 3; i++)
        if (kinds[i] != TECS_ON_SET || tecs_component_size(w, c) > 0)
            CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = kinds[i], .comp = c,
                                                             .callback = record, .ctx = s }));
}

TEST(relation_events_of_pairs)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 }, .exclusive = true });
    seen s = { 0 };
    watch(w, owes, &s);
    tecs_entity_t a = tecs_new(w), bob = tecs_new(w), ann = tecs_new(w);
    CHECK_ERR(TECS_PAIR_SET(w, a, owes, bob, int32_t, 10), TECS_OK);
    CHECK_EQ(s.n, 2);
    CHECK(s.kind[0] == TECS_ON_ADD && s.kind[1] == TECS_ON_SET);
    CHECK(s.entity[1] == a && s.target[1] == bob && s.value[1] == 10);
    CHECK_ERR(tecs_pair_add(w, a, owes, ann), TECS_OK);         /* exclusive: replaced */
    CHECK_EQ(s.n, 3 + 1);
    CHECK(s.kind[2] == TECS_ON_REMOVE && s.target[2] == bob && s.value[2] == 10);
    CHECK(s.kind[3] == TECS_ON_ADD && s.target[3] == ann && s.value[3] == 0);
    /* The target dies: the pair goes, announced. */
    CHECK_ERR(tecs_destroy(w, ann), TECS_OK);
    CHECK_EQ(s.n, 5);
    CHECK(s.kind[4] == TECS_ON_REMOVE && s.entity[4] == a && s.target[4] == ann);
    CHECK_EQ(tecs_pair_count(w, a, owes), 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_events_of_childof)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    seen s = { 0 };
    watch(w, co, &s);
    tecs_entity_t p = tecs_new(w), q = tecs_new(w), c = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    CHECK_EQ(s.n, 1);
    CHECK(s.kind[0] == TECS_ON_ADD && s.entity[0] == c && s.target[0] == p);
    CHECK_ERR(tecs_pair_add(w, c, co, q), TECS_OK);              /* reparent */
    CHECK_EQ(s.n, 3);
    CHECK(s.kind[1] == TECS_ON_REMOVE && s.target[1] == p);
    CHECK(s.kind[2] == TECS_ON_ADD && s.target[2] == q);
    CHECK_ERR(tecs_pair_remove(w, c, co, TECS_WILDCARD), TECS_OK);
    CHECK_EQ(s.n, 4);
    CHECK(s.kind[3] == TECS_ON_REMOVE && s.target[3] == q);
    TW_CHECK(w);

    /* A callback adds a child: queued, applied after the event's call. */
    s.spawn_parent = p;
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    CHECK_ERR(s.err, TECS_OK);
    tecs_walk_t kids = tecs_sources(w, p, co);
    int n = 0;
    while (tecs_walk_next(&kids))
        n++;
    CHECK_EQ(n, 2);
    /* Destroying the parent destroys both, each announced. */
    int before = s.n;
    CHECK_ERR(tecs_destroy(w, p), TECS_OK);
    CHECK_EQ(s.n, before + 2);
    CHECK(s.kind[before] == TECS_ON_REMOVE);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    TW_CHECK(w);
    tw_free(w);
}
