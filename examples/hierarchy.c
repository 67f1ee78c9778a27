/*
** hierarchy.c — a solar system as a ChildOf hierarchy: the sun, planets
** (children of the sun) and moons (children of their planet). Each body
** has a local transform, relative to its parent, and a world transform,
** propagated from parents to children every frame by one cascade query:
** it hands out the parents' rows before their children's, and a term read
** from the parent gives each run of siblings their parent's world
** transform, ready by then. Destroying a planet destroys its moons;
** giving a moon a new parent is one tecs_pair_add.
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

/* An offset, then a rotation as a unit complex number (cos, sin). */
typedef struct Transform { float x, y, c, s; } Transform;
typedef Transform Local;        /* relative to the parent                    */
typedef Transform World;        /* relative to the system                    */
typedef struct Spin { float c, s; } Spin;  /* the rotation of one frame     */
typedef struct Name { const char *s; } Name;

static tecs_comp_t local, world, spin, name, childof;

/* parent then child: the child's offset turned by the parent's rotation. */
static Transform compose(Transform p, Transform l)
{
    return (Transform){ p.x + p.c * l.x - p.s * l.y, p.y + p.s * l.x + p.c * l.y,
                        p.c * l.c - p.s * l.s, p.s * l.c + p.c * l.s };
}

static tecs_entity_t body(tecs_world_t *w, const char *n, tecs_entity_t parent, float x,
                          Spin turn)
{
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, name, Name, {n});
    TECS_SET(w, e, local, Local, {x, 0, 1, 0});
    TECS_SET(w, e, world, World, {0, 0, 1, 0});
    TECS_SET(w, e, spin, Spin, {turn.c, turn.s});
    if (parent)
        EXPECT(tecs_pair_add(w, e, childof, parent) == TECS_OK);
    return e;
}

/* Every body turns by its spin (renormalized: one Newton step). */
static void turn(tecs_world_t *w, tecs_query_t *spinning)
{
    tecs_iter_t it = TECS_ITER(w, .query = spinning);
    while (tecs_iter_next(&it)) {
        Local *l = TECS_FIELD(&it, Local, 0);
        const Spin *s = TECS_FIELD(&it, Spin, 1);
        for (int32_t i = 0; i < it.count; i++) {
            float c = l[i].c * s[i].c - l[i].s * s[i].s, n = l[i].s * s[i].c + l[i].c * s[i].s;
            float k = (3 - (c * c + n * n)) / 2;
            l[i].c = c * k;
            l[i].s = n * k;
        }
    }
}

/* World transforms: a root's is its local one; each other body's is its
** parent's composed with its own local one. Terms: Local, World, the
** parent's World (one value for the step's rows; NULL for the roots). */
static void propagate(tecs_world_t *w, tecs_query_t *transforms)
{
    tecs_iter_t it = TECS_ITER(w, .query = transforms);
    while (tecs_iter_next(&it)) {
        const Local *l = TECS_FIELD(&it, Local, 0);
        World *wt = TECS_FIELD(&it, World, 1);
        const World *up = TECS_FIELD(&it, World, 2);
        for (int32_t i = 0; i < it.count; i++)
            wt[i] = up ? compose(*up, l[i]) : l[i];
    }
}

/* The hierarchy under root, indented by depth, with world positions. */
static void print_tree(tecs_world_t *w, tecs_entity_t root)
{
    const World *r = TECS_GET(w, root, world, World);
    printf("%s (%.2f, %.2f)\n", TECS_GET(w, root, name, Name)->s, r->x, r->y);
    tecs_walk_t d = tecs_tree(w, root, TECS_TREE_DEPTH_FIRST);
    while (tecs_walk_next(&d)) {
        const World *t = TECS_GET(w, d.entity, world, World);
        printf("%*s%s (%.2f, %.2f)\n", 2 * d.depth, "", TECS_GET(w, d.entity, name, Name)->s,
               t->x, t->y);
    }
}

static float dist2(const World *a, const World *b)
{
    return (a->x - b->x) * (a->x - b->x) + (a->y - b->y) * (a->y - b->y);
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    local = TECS_COMPONENT(w, Local);
    world = TECS_COMPONENT(w, World);
    spin = TECS_COMPONENT(w, Spin);
    name = TECS_COMPONENT(w, Name);
    childof = tecs_childof(w);
    EXPECT(childof != 0);

    const Spin slow = { 0.99875f, 0.04998f }, fast = { 0.98007f, 0.19867f }; /* 0.05, 0.2 rad */
    tecs_entity_t sun = body(w, "Sun", 0, 0, slow);
    tecs_entity_t earth = body(w, "Earth", sun, 10, fast);
    tecs_entity_t moon = body(w, "Moon", earth, 2, slow);
    tecs_entity_t mars = body(w, "Mars", sun, 15, fast);
    tecs_entity_t phobos = body(w, "Phobos", mars, 1, fast);
    tecs_entity_t deimos = body(w, "Deimos", mars, 1.5f, fast);
    tecs_entity_t jupiter = body(w, "Jupiter", sun, 25, slow);
    tecs_entity_t io = body(w, "Io", jupiter, 3, fast);
    tecs_entity_t europa = body(w, "Europa", jupiter, 4, fast);
    EXPECT(tecs_depth(w, sun) == 0 && tecs_depth(w, earth) == 1 && tecs_depth(w, io) == 2);

    /* Parents before children (cascade), the parent's World beside each
    ** body's own; optional, so the roots come too. */
    tecs_query_t *transforms = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ {.comp = local, .access = TECS_READ}, {.comp = world},
                                  {.comp = world, .from_parent = true, .access = TECS_READ,
                                   .oper = TECS_OPTIONAL} },
        .term_count = 3, .cascade = true });
    EXPECT(transforms != NULL);
    tecs_query_t *spinning = TECS_QUERY(w, {.comp = local}, {.comp = spin, .access = TECS_READ});

    for (int frame = 0; frame < 10; frame++) {
        turn(w, spinning);
        propagate(w, transforms);
    }
    print_tree(w, sun);
    /* The Moon's world transform is the chain of local ones from the sun. */
    World want = compose(compose(*TECS_GET(w, sun, local, Local),
                                 *TECS_GET(w, earth, local, Local)),
                         *TECS_GET(w, moon, local, Local));
    EXPECT(dist2(TECS_GET(w, moon, world, World), &want) < 1e-6f);

    /* Mars goes, and its moons with it (children first). */
    EXPECT(tecs_destroy(w, mars) == TECS_OK);
    EXPECT(!tecs_is_alive(w, phobos) && !tecs_is_alive(w, deimos));
    int children = 0;
    for (tecs_walk_t c = tecs_sources(w, sun, childof); tecs_walk_next(&c);)
        children++;
    EXPECT(children == 2);

    /* Europa leaves Jupiter for Earth: the same depth, a new parent. */
    EXPECT(tecs_pair_add(w, europa, childof, earth) == TECS_OK);
    EXPECT(tecs_pair_target(w, europa, childof, 0) == earth && tecs_depth(w, europa) == 2);
    EXPECT(tecs_pair_has(w, europa, childof, earth) && !tecs_pair_has(w, europa, childof, jupiter));
    for (int frame = 0; frame < 10; frame++) {
        turn(w, spinning);
        propagate(w, transforms);
    }
    printf("after Mars was destroyed and Europa moved to Earth:\n");
    print_tree(w, sun);
    /* Europa now circles Earth at its local distance, 4. */
    float d2 = dist2(TECS_GET(w, europa, world, World), TECS_GET(w, earth, world, World));
    EXPECT(d2 > 16 - 1e-3f && d2 < 16 + 1e-3f);
    printf("Europa to Earth, squared: %.2f\n", d2);
    tecs_world_free(w);                               /* frees the queries too */
    return 0;
}
