/*
** bench_relation.c — the rows of the relation add-on's hierarchy
** (ChildOf): making children (child_new), moving them (reparent),
** destroying trees (subtree_destroy), visiting children (children), and
** the bytes per entity of two shapes of hierarchy (memory_childof_wide:
** one parent; memory_childof_10: ten children a parent), each reported as
** a ratio to the same entities without relationships
** (memory_childof_wide_plain, memory_childof_10_plain); and the instances
** of a prefab with two children, one by one (instantiate) and in bulk
** (instantiate_bulk), and of a prefab with none in bulk (instantiate_flat,
** a ratio to create_bulk).
**
** N is the number of children (child_new, reparent, children, the memory
** rows), of entities destroyed (subtree_destroy) or of entities made (the
** instance rows); parents and prefabs come on top.
*/
#include "bench.h"
#include "tinyecs/relation.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- transform propagation -------------------------------------------- */

/* An affine 3D transform: a 3x3 rotation and scale, then the translation
** (the shape of Bevy's GlobalTransform), 48 bytes. */
typedef struct { float m[3][3], t[3]; } Affine;
typedef Affine Local;           /* the node's transform in its parent's   */
typedef Affine World;           /* the node's transform in the world's    */

enum { CASCADE_PASSES = 5 };    /* timed passes a repetition              */

/* out = a * b (b applied first). Both rows call it through this one
** function, not inlined, so they run the same multiply. */
static BENCH_NOINLINE void affine_mul(Affine *restrict out, const Affine *restrict a,
                                      const Affine *restrict b)
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            out->m[i][j] = a->m[i][0] * b->m[0][j] + a->m[i][1] * b->m[1][j] +
                           a->m[i][2] * b->m[2][j];
        out->t[i] = a->m[i][0] * b->t[0] + a->m[i][1] * b->t[1] + a->m[i][2] * b->t[2] +
                    a->t[i];
    }
}

/* Node i's local transform: a turn about z by a small angle of its own,
** a scale near 1 and a translation, fixed by i. */
static Local local_of(int64_t i)
{
    uint64_t s = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(i + 1);
    float a = (float)(rng_next(&s) % 1000) * 1e-4f, k = 1 + (float)(rng_next(&s) % 100) * 1e-4f;
    float c = 1 - a * a / 2, sn = a;        /* cos and sin, near enough */
    return (Local){ { { k * c, -k * sn, 0 }, { k * sn, k * c, 0 }, { 0, 0, k } },
                    { (float)(i % 7), (float)(i % 11), 1 } };
}

/* The tree: node i's parent is (i - 1) / FANOUT, node 0 the root, so nodes
** come level by level (N = 1,111,111 is the root and six full levels). */
static int64_t parent_of(int64_t i)
{
    return i == 0 ? -1 : (i - 1) / FANOUT;
}

/* world = parent's world * local over plain arrays in depth order. */
static BENCH_NOINLINE void pass_tree_raw(World *restrict world, const Local *restrict local,
                                         const int32_t *restrict parent, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (parent[i] < 0)
            world[i] = local[i];
        else
            affine_mul(&world[i], &world[parent[i]], &local[i]);
    }
}

/* The same pass through the cascade query: Local, World, the parent's
** World (one value a step; absent for the root). */
static BENCH_NOINLINE void pass_tree(tecs_query_t *q)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Local *l = tecs_field(&it, 0);
        World *wd = tecs_field(&it, 1);
        const World *up = tecs_field(&it, 2);
        if (up == NULL)
            memcpy(wd, l, (size_t)it.count * sizeof *wd);
        else
            for (int32_t r = 0; r < it.count; r++)
                affine_mul(&wd[r], up, &l[r]);
    }
}

/* Median of CASCADE_PASSES timed calls of pass (after an untimed one). */
#define TIME_PASSES(out, n, pass)                                           \
    do {                                                                    \
        double t_[CASCADE_PASSES];                                          \
        pass;                                                               \
        for (int k_ = 0; k_ < CASCADE_PASSES; k_++) {                       \
            double t0_ = now_ns();                                          \
            pass;                                                           \
            t_[k_] = (now_ns() - t0_) / (double)(n);                        \
        }                                                                   \
        (out) = median(t_, CASCADE_PASSES);                                 \
    } while (0)

/* A transform pass over a tree of n nodes (fan-out FANOUT), each with a
** Local and a World, made parents first with the children of one parent
** one after another: one cascade query, the parent's World read through a
** from_parent term; ns per node. Checked against pass_tree_raw. */
double sc_cascade(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    tecs_comp_t childof = tecs_childof(w);
    tecs_comp_t local = TECS_COMPONENT(w, Local), world = TECS_COMPONENT(w, World);
    CHECK(childof && local && world, "registration");
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    int64_t errs = 0;
    for (int64_t i = 0; i < n; i++) {
        Local l = local_of(i);
        ids[i] = tecs_new(w);
        errs += tecs_set(w, ids[i], local, &l) != TECS_OK;
        errs += tecs_set(w, ids[i], world, &l) != TECS_OK;
        if (i > 0)
            errs += tecs_pair_add(w, ids[i], childof, ids[parent_of(i)]) != TECS_OK;
    }
    CHECK(errs == 0, "%lld failed calls building the tree", (long long)errs);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = local, .access = TECS_READ }, { .comp = world },
                                  { .comp = world, .from_parent = true, .access = TECS_READ,
                                    .oper = TECS_OPTIONAL } },
        .term_count = 3, .cascade = true });
    CHECK(q != NULL, "query: %s", tecs_last_error_msg(w));
    double t = 0;
    if (q != NULL)
        TIME_PASSES(t, n, pass_tree(q));
    /* The same world transforms as the hand-written pass, bit for bit. */
    Local *l = xmalloc((size_t)n * sizeof *l);
    World *want = xmalloc((size_t)n * sizeof *want);
    int32_t *par = xmalloc((size_t)n * sizeof *par);
    for (int64_t i = 0; i < n; i++) {
        l[i] = local_of(i);
        par[i] = (int32_t)parent_of(i);
    }
    pass_tree_raw(want, l, par, n);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const World *got = tecs_get(w, ids[i], world);
        bad += got == NULL || memcmp(got, &want[i], sizeof *got) != 0;
    }
    CHECK(bad == 0, "%lld nodes with another world transform", (long long)bad);
    free(l);
    free(want);
    free(par);
    free(ids);
    tecs_query_free(q);
    tecs_world_free(w);
    return t;
}

/* The pass of cascade by hand: plain arrays in depth order (a node's
** parent comes before it), the parent's index per node; ns per node. */
double sc_cascade_raw(int64_t n)
{
    Local *l = xmalloc((size_t)n * sizeof *l);
    World *wd = xmalloc((size_t)n * sizeof *wd);
    int32_t *par = xmalloc((size_t)n * sizeof *par);
    for (int64_t i = 0; i < n; i++) {
        l[i] = local_of(i);
        wd[i] = l[i];
        par[i] = (int32_t)parent_of(i);
    }
    double t;
    TIME_PASSES(t, n, pass_tree_raw(wd, l, par, n));
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += wd[i].t[0];
    CHECK(s == s, "a NaN in the world transforms");
    free(l);
    free(wd);
    free(par);
    return t;
}

/* ---- instances of prefabs ------------------------------------------------- */

enum { INST_KIDS = 2 };         /* children of the instance rows' prefab      */

/* A prefab of Position (1, 2), Velocity (3, 4), Health 100 and a tag, with
** kids children of Position (5, 6) each (setup). */
static tecs_entity_t make_prefab(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t vel,
                                 tecs_comp_t childof, int kids, tecs_comp_t *hp)
{
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    *hp = TECS_COMPONENT(w, Health);
    tecs_entity_t p = tecs_new(w);
    tecs_set(w, p, pos, &(Position){ 1, 2 });
    tecs_set(w, p, vel, &(Velocity){ 3, 4 });
    tecs_set(w, p, *hp, &(Health){ 100 });
    tecs_add(w, p, tag);
    tecs_add(w, p, tecs_prefab(w));
    for (int k = 0; k < kids; k++) {
        tecs_entity_t c = tecs_new(w);
        tecs_set(w, c, pos, &(Position){ 5, 6 });
        tecs_pair_add(w, c, childof, p);
    }
    return p;
}

/* Every root an instance of the prefab: its values, kids children. */
static void check_instances(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t hp,
                            tecs_comp_t childof, const tecs_entity_t *ids, int64_t n, int kids)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(w, ids[i], pos, Position);
        const Health *h = TECS_GET(w, ids[i], hp, Health);
        int32_t nk = 0;
        for (tecs_walk_t it = tecs_sources(w, ids[i], childof); tecs_walk_next(&it);)
            nk++;
        bad += !p || !h || p->x != 1 || p->y != 2 || h->hp != 100 || nk != kids;
    }
    CHECK(bad == 0, "%lld wrong instances", (long long)bad);
    CHECK(tecs_world_entity_count(w) == (int32_t)(n * (kids + 1) + kids + 1), "%d alive",
          tecs_world_entity_count(w));
}

/* n / 3 instances of a prefab with two children, made one by one (bulk),
** or n of a prefab without children in bulk (flat): ns per entity made. */
static double instances(int64_t n, bool bulk, int kids)
{
    tecs_comp_t pos, vel, childof, hp;
    tecs_world_t *w = rel_world(NULL, &pos, &vel, &childof);
    tecs_entity_t prefab = make_prefab(w, pos, vel, childof, kids, &hp);
    int64_t k = n / (kids + 1), errs = 0;
    tecs_entity_t *ids = xmalloc((size_t)k * sizeof *ids);
    double t0 = now_ns();
    if (bulk)
        errs += tecs_instantiate_bulk(w, prefab, (int32_t)k, ids) != TECS_OK;
    for (int64_t i = 0; !bulk && i < k; i++)
        errs += (ids[i] = tecs_instantiate(w, prefab)) == 0;
    double t = (now_ns() - t0) / (double)(k * (kids + 1));
    CHECK(errs == 0, "%lld failed instances", (long long)errs);
    check_instances(w, pos, hp, childof, ids, k, kids);
    free(ids);
    tecs_world_free(w);
    return t;
}

double sc_instantiate(int64_t n)
{
    return instances(n, false, INST_KIDS);
}

double sc_instantiate_bulk(int64_t n)
{
    return instances(n, true, INST_KIDS);
}

double sc_instantiate_flat(int64_t n)
{
    return instances(n, true, 0);
}
