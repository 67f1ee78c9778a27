/*
** bench_relation.c — the rows of the relation add-on's hierarchy
** (ChildOf): making children (child_new), moving them (reparent),
** destroying trees (subtree_destroy), visiting children (children), and
** the bytes per entity of two shapes of hierarchy (memory_childof_wide:
** one parent; memory_childof_10: ten children a parent), each reported as
** a ratio to the same entities without relationships
** (memory_childof_wide_plain, memory_childof_10_plain).
**
** N is the number of children (child_new, reparent, children, the memory
** rows) or of entities destroyed (subtree_destroy); parents come on top.
*/
#include "bench.h"
#include "tinyecs/relation.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum {
    FANOUT = 10,                /* children a parent                          */
    TREE_DEPTH = 3              /* subtree_destroy: levels below a root       */
};

/* A world with Position and Velocity (ids in *pos, *vel) and ChildOf. */
static tecs_world_t *rel_world(const tecs_world_desc_t *desc, tecs_comp_t *pos,
                               tecs_comp_t *vel, tecs_comp_t *childof)
{
    tecs_world_t *w = tecs_world_new_ex(desc);
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    *pos = TECS_COMPONENT(w, Position);
    *vel = TECS_COMPONENT(w, Velocity);
    *childof = tecs_childof(w);
    CHECK(*pos && *vel && *childof, "registration");
    return w;
}

/* n entities with Position (i, i) and Velocity (1, 1) into ids (setup). */
static void make_pv(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel, tecs_entity_t *ids,
                    int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        ids[i] = tecs_new(w);
        tecs_set(w, ids[i], pos, &(Position){ (float)i, (float)i });
        tecs_set(w, ids[i], vel, &(Velocity){ 1, 1 });
    }
}

/* n children, FANOUT a parent: parents (setup) into par, children into kid;
** the number of failed calls. */
static int64_t make_families(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel,
                             tecs_comp_t childof, tecs_entity_t *par, tecs_entity_t *kid,
                             int64_t n)
{
    int64_t errs = 0;
    make_pv(w, pos, vel, par, (n + FANOUT - 1) / FANOUT);
    for (int64_t i = 0; i < n; i++) {
        kid[i] = tecs_new(w);
        errs += tecs_pair_add(w, kid[i], childof, par[i / FANOUT]) != TECS_OK;
    }
    return errs;
}

/* tecs_new + tecs_pair_add(ChildOf, parent) per child: ns per child. */
double sc_child_new(int64_t n)
{
    tecs_comp_t pos, vel, childof;
    tecs_world_t *w = rel_world(NULL, &pos, &vel, &childof);
    int64_t np = (n + FANOUT - 1) / FANOUT, errs = 0;
    tecs_entity_t *par = xmalloc((size_t)np * sizeof *par);
    tecs_entity_t *kid = xmalloc((size_t)n * sizeof *kid);
    make_pv(w, pos, vel, par, np);
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        kid[i] = tecs_new(w);
        errs += tecs_pair_add(w, kid[i], childof, par[i / FANOUT]) != TECS_OK;
    }
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += tecs_pair_target(w, kid[i], childof, 0) != par[i / FANOUT];
    CHECK(bad == 0, "%lld children with the wrong parent", (long long)bad);
    free(par);
    free(kid);
    tecs_world_free(w);
    return t;
}

/* Every child moved to the next parent (a root, as its old one): ns per
** reparent. */
double sc_reparent(int64_t n)
{
    tecs_comp_t pos, vel, childof;
    tecs_world_t *w = rel_world(NULL, &pos, &vel, &childof);
    int64_t np = (n + FANOUT - 1) / FANOUT, errs;
    tecs_entity_t *par = xmalloc((size_t)np * sizeof *par);
    tecs_entity_t *kid = xmalloc((size_t)n * sizeof *kid);
    errs = make_families(w, pos, vel, childof, par, kid, n);
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += tecs_pair_add(w, kid[i], childof, par[(i / FANOUT + 1) % np]) != TECS_OK;
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += tecs_pair_target(w, kid[i], childof, 0) != par[(i / FANOUT + 1) % np] ||
               tecs_depth(w, kid[i]) != 1;
    CHECK(bad == 0, "%lld children with the wrong parent", (long long)bad);
    free(par);
    free(kid);
    tecs_world_free(w);
    return t;
}

/* Entities of one tree: a root and TREE_DEPTH levels of FANOUT each. */
static int64_t tree_size(void)
{
    int64_t size = 1, level = 1;
    for (int d = 0; d < TREE_DEPTH; d++)
        size += level *= FANOUT;
    return size;
}

/* tecs_destroy of the roots of trees (fan-out FANOUT, TREE_DEPTH levels
** below the root), each entity with Position and Velocity: ns per entity
** destroyed. */
double sc_subtree_destroy(int64_t n)
{
    tecs_comp_t pos, vel, childof;
    tecs_world_t *w = rel_world(NULL, &pos, &vel, &childof);
    int64_t size = tree_size(), ntrees = n / size > 0 ? n / size : 1, errs = 0;
    tecs_entity_t *root = xmalloc((size_t)ntrees * sizeof *root);
    tecs_entity_t *ids = xmalloc((size_t)size * sizeof *ids);
    for (int64_t k = 0; k < ntrees; k++) {
        make_pv(w, pos, vel, ids, size);
        /* ids[0] the root; the children of ids[i] are ids[i*FANOUT+1 ..]. */
        for (int64_t i = 1; i < size; i++)
            errs += tecs_pair_add(w, ids[i], childof, ids[(i - 1) / FANOUT]) != TECS_OK;
        root[k] = ids[0];
    }
    CHECK(errs == 0, "%lld failed calls building the trees", (long long)errs);
    int64_t total = tecs_world_entity_count(w);
    CHECK(total == ntrees * size, "%lld alive", (long long)total);
    double t0 = now_ns();
    for (int64_t k = 0; k < ntrees; k++)
        errs += tecs_destroy(w, root[k]) != TECS_OK;
    double t = (now_ns() - t0) / (double)total;
    CHECK(errs == 0, "%lld failed destroys", (long long)errs);
    CHECK(tecs_world_entity_count(w) == 0, "%d alive", tecs_world_entity_count(w));
    free(root);
    free(ids);
    tecs_world_free(w);
    return t;
}

/* The children of every parent through tecs_sources, FANOUT each: ns per
** child visited. */
double sc_children(int64_t n)
{
    tecs_comp_t pos, vel, childof;
    tecs_world_t *w = rel_world(NULL, &pos, &vel, &childof);
    int64_t np = (n + FANOUT - 1) / FANOUT;
    tecs_entity_t *par = xmalloc((size_t)np * sizeof *par);
    tecs_entity_t *kid = xmalloc((size_t)n * sizeof *kid);
    int64_t errs = make_families(w, pos, vel, childof, par, kid, n);
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    int64_t seen = 0;
    uint64_t sum = 0;
    double t0 = now_ns();
    for (int64_t p = 0; p < np; p++) {
        tecs_walk_t it = tecs_sources(w, par[p], childof);
        while (tecs_walk_next(&it)) {
            sum += it.entity;
            seen++;
        }
    }
    double t = (now_ns() - t0) / (double)n;
    uint64_t want = 0;
    for (int64_t i = 0; i < n; i++)
        want += kid[i];
    CHECK(seen == n && sum == want, "%lld children visited", (long long)seen);
    free(par);
    free(kid);
    tecs_world_free(w);
    return t;
}

/* ---- memory ------------------------------------------------------------ */

typedef struct counter { size_t live; } counter;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    counter *c = ud;
    if (nsize == 0) {
        c->live -= osize;
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p)
        c->live += nsize - osize;
    return p;
}

/* Bytes per entity of np parents and n children (n / np a parent), each
** with Position and Velocity made by new + set (as the memory row), each
** child linked to its parent with ChildOf as it is made, or not (plain);
** counted by the allocator hook. */
static double memory_shape(int64_t np, int64_t n, bool linked)
{
    counter c = { 0 };
    tecs_comp_t pos, vel, childof;
    tecs_world_t *w = rel_world(&(tecs_world_desc_t){ .alloc = counting_alloc,
                                                      .alloc_ud = &c }, &pos, &vel, &childof);
    size_t empty = c.live;
    tecs_entity_t *par = xmalloc((size_t)np * sizeof *par);
    tecs_entity_t *kid = xmalloc((size_t)n * sizeof *kid);
    make_pv(w, pos, vel, par, np);
    int64_t errs = 0;
    for (int64_t i = 0; i < n; i++) {
        kid[i] = tecs_new(w);
        tecs_set(w, kid[i], pos, &(Position){ (float)i, (float)i });
        tecs_set(w, kid[i], vel, &(Velocity){ 1, 1 });
        if (linked)
            errs += tecs_pair_add(w, kid[i], childof, par[i / (n / np)]) != TECS_OK;
    }
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    CHECK(tecs_world_entity_count(w) == np + n, "%d alive", tecs_world_entity_count(w));
    CHECK(tecs_world_memory(w) == c.live, "world says %zu bytes, allocator %zu",
          tecs_world_memory(w), c.live);
    double v = (double)(c.live - empty) / (double)(np + n);
    free(par);
    free(kid);
    tecs_world_free(w);
    CHECK(c.live == 0, "%zu bytes left after free", c.live);
    return v;
}

/* One parent with n children. */
double sc_memory_childof_wide(int64_t n)
{
    return memory_shape(1, n, true);
}

double sc_memory_childof_wide_plain(int64_t n)
{
    return memory_shape(1, n, false);
}

/* n / FANOUT parents with FANOUT children each. */
double sc_memory_childof_10(int64_t n)
{
    return memory_shape(n / FANOUT > 0 ? n / FANOUT : 1, n / FANOUT > 0 ? n / FANOUT * FANOUT : n,
                        true);
}

double sc_memory_childof_10_plain(int64_t n)
{
    return memory_shape(n / FANOUT > 0 ? n / FANOUT : 1, n / FANOUT > 0 ? n / FANOUT * FANOUT : n,
                        false);
}
