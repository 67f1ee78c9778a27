/*
** bench_inherit.c — the rows of inheritance (IsA, the relation add-on):
** N instances of one base, each with a Position of its own and the pair
** (IsA, base); the base holds a component registered .inherit, which
** every instance reads as its own without a copy.
**
**     get_inherited           tecs_get of the base's 16-byte value through
**                             each instance, the ids in random_get's order
**     iterate_inherited       p += v, p each instance's Position, v the
**                             base's Velocity: one value for each step
**     iterate_inherited_raw   the same loop over a plain array and one
**                             Velocity
**     memory_inherited        bytes per entity when the base's value is
**                             1 KiB
**
**     instance i:  [ Position (own) | IsA.1 (tag) ]  ──(IsA)──>  base
**     base:        [ inherited component (one value) ]
**
** The instances share one archetype (the base's tag is in it), so a step
** of the iterate row is a whole chunk with the inherited field shared.
*/
#include "bench.h"
#include "tinyecs/relation.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The 16-byte value of get_inherited. */
typedef struct { float a, b, c, d; } Stats;

/* The 1 KiB value of memory_inherited. */
typedef struct { unsigned char bytes[1024]; } Blob;

/* An inheritable component: T registered with .inherit. */
#define INHERIT_COMPONENT(w, T)                                             \
    tecs_component_new((w), &(tecs_component_desc_t){                       \
        .name = #T, .size = sizeof(T), .align = _Alignof(T), .inherit = true })

/* A world with Position (in *pos) and IsA (in *isa), --rows rows a chunk
** as the iterate rows' worlds. */
static tecs_world_t *inherit_world(const tecs_world_desc_t *desc, tecs_comp_t *pos,
                                   tecs_comp_t *isa)
{
    tecs_world_desc_t d = desc ? *desc : (tecs_world_desc_t){ 0 };
    d.rows_per_chunk = g_rows;
    tecs_world_t *w = tecs_world_new_ex(&d);
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    *pos = TECS_COMPONENT(w, Position);
    *isa = tecs_isa(w);
    CHECK(*pos && *isa, "registration");
    return w;
}

/* A base holding value of comp; n instances of it, Position (i, i) each,
** into ids (setup). Each becomes an instance before it takes its Position,
** so it moves once into the archetype of the base's instances. */
static tecs_entity_t make_instances(tecs_world_t *w, tecs_comp_t pos, tecs_comp_t isa,
                                    tecs_comp_t comp, const void *value, tecs_entity_t *ids,
                                    int64_t n)
{
    tecs_entity_t base = tecs_new(w);
    int64_t errs = tecs_set(w, base, comp, value) != TECS_OK;
    for (int64_t i = 0; i < n; i++) {
        ids[i] = tecs_new(w);
        errs += tecs_pair_add(w, ids[i], isa, base) != TECS_OK;
        errs += tecs_set(w, ids[i], pos, &(Position){ (float)i, (float)i }) != TECS_OK;
    }
    CHECK(errs == 0, "%lld failed calls making the instances", (long long)errs);
    return base;
}

/* ---- lookups ----------------------------------------------------------- */

/* tecs_get of the base's Stats through every instance, in random_get's
** random order: ns per read. */
double sc_get_inherited(int64_t n)
{
    tecs_comp_t pos, isa;
    tecs_world_t *w = inherit_world(NULL, &pos, &isa);
    tecs_comp_t stats = INHERIT_COMPONENT(w, Stats);
    CHECK(stats != 0, "registration");
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    tecs_entity_t base = make_instances(w, pos, isa, stats, &(Stats){ 1, 2, 3, 4 }, ids, n);
    shuffle(ids, n, 0x9E3779B97F4A7C15ULL);
    const Stats *shared = TECS_GET(w, base, stats, Stats);
    double s = 0;
    int64_t miss = 0, copies = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Stats *v = TECS_GET(w, ids[i], stats, Stats);
        if (v) {
            s += v->a + v->b + v->c + v->d;
            copies += v != shared;
        } else {
            miss++;
        }
    }
    double t = (now_ns() - t0) / (double)n;
    CHECK(miss == 0, "%lld reads failed", (long long)miss);
    CHECK(copies == 0, "%lld reads of a value not the base's", (long long)copies);
    CHECK(s == 10.0 * (double)n, "sum %.0f, want %.0f", s, 10.0 * (double)n);
    free(ids);
    tecs_world_free(w);
    return t;
}

/* ---- iteration --------------------------------------------------------- */

/* p += v over n rows, v one value. */
static inline void integrate_shared(Position *restrict p, const Velocity *restrict v, int32_t n)
{
    const Velocity d = *v;
    for (int32_t i = 0; i < n; i++) {
        p[i].x += d.x;
        p[i].y += d.y;
    }
}

/* One pass of the query: a step whose Velocity is inherited reads one
** value, any other a column. */
static BENCH_NOINLINE void pass_inherited(tecs_query_t *q)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        if (tecs_field_is_self(&it, 1))
            integrate(it.fields[0], it.fields[1], it.count);
        else
            integrate_shared(it.fields[0], it.fields[1], it.count);
    }
}

/* The sum of x over every Position the query matches, the rows, and the
** rows of steps whose Velocity is the base's. */
static double sum_inherited(tecs_query_t *q, int64_t *rows, int64_t *shared)
{
    double s = 0;
    *rows = *shared = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = it.fields[0];
        for (int32_t i = 0; i < it.count; i++)
            s += p[i].x;
        *rows += it.count;
        *shared += tecs_field_is_self(&it, 1) ? 0 : it.count;
    }
    return s;
}

/* After k passes of p += (1, 1), x of instance i is i + k. */
static double want_x(int64_t n, int k)
{
    return (double)n * (double)(n - 1) / 2 + (double)n * k;
}

/* p += v by a query whose Velocity term is inherited, over n instances of
** a base holding Velocity (1, 1): ns per entity, the median of BENCH_PASSES
** passes after an untimed one; every row checked. */
double sc_iterate_inherited(int64_t n)
{
    tecs_comp_t pos, isa;
    tecs_world_t *w = inherit_world(NULL, &pos, &isa);
    tecs_comp_t vel = INHERIT_COMPONENT(w, Velocity);
    CHECK(vel != 0, "registration");
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    make_instances(w, pos, isa, vel, &(Velocity){ 1, 1 }, ids, n);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos },
                                 { .comp = vel, .access = TECS_READ, .inherited = true });
    CHECK(q != NULL, "query: %s", tecs_last_error_msg(w));
    double t[64];
    pass_inherited(q);
    for (int k = 0; k < BENCH_PASSES; k++) {
        double t0 = now_ns();
        pass_inherited(q);
        t[k] = (now_ns() - t0) / (double)n;
    }
    int64_t rows, shared;
    double s = sum_inherited(q, &rows, &shared);
    CHECK(rows == n && shared == n, "%lld rows, %lld shared, want %lld", (long long)rows,
          (long long)shared, (long long)n);
    CHECK(s == want_x(n, BENCH_PASSES + 1), "sum of x %.0f, want %.0f", s,
          want_x(n, BENCH_PASSES + 1));
    tecs_query_free(q);
    free(ids);
    tecs_world_free(w);
    return median(t, BENCH_PASSES);
}

/* The loop of iterate_inherited over a plain array and one Velocity. */
static BENCH_NOINLINE void pass_inherited_raw(Position *restrict p, const Velocity *restrict v,
                                              int64_t n)
{
    const Velocity d = *v;
    for (int64_t i = 0; i < n; i++) {
        p[i].x += d.x;
        p[i].y += d.y;
    }
}

/* iterate_inherited by hand, timed the same way. */
double sc_iterate_inherited_raw(int64_t n)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    const Velocity v = { 1, 1 };
    for (int64_t i = 0; i < n; i++)
        p[i] = (Position){ (float)i, (float)i };
    double t[64];
    pass_inherited_raw(p, &v, n);
    for (int k = 0; k < BENCH_PASSES; k++) {
        double t0 = now_ns();
        pass_inherited_raw(p, &v, n);
        t[k] = (now_ns() - t0) / (double)n;
    }
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += p[i].x;
    CHECK(s == want_x(n, BENCH_PASSES + 1), "sum of x %.0f, want %.0f", s,
          want_x(n, BENCH_PASSES + 1));
    free(p);
    return median(t, BENCH_PASSES);
}

/* ---- memory ------------------------------------------------------------ */

/* Bytes per entity (the base counted) of a base holding a 1 KiB Blob and
** n instances of it, counted by the allocator hook: the instances share
** the base's Blob, so it is paid once. */
double sc_memory_inherited(int64_t n)
{
    counter c = { 0 };
    tecs_comp_t pos, isa;
    tecs_world_t *w = inherit_world(&(tecs_world_desc_t){ .alloc = counting_alloc,
                                                          .alloc_ud = &c }, &pos, &isa);
    tecs_comp_t blob = INHERIT_COMPONENT(w, Blob);
    CHECK(blob != 0, "registration");
    size_t empty = c.live;
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    Blob *value = xmalloc(sizeof *value);
    for (size_t i = 0; i < sizeof value->bytes; i++)
        value->bytes[i] = (unsigned char)i;
    tecs_entity_t base = make_instances(w, pos, isa, blob, value, ids, n);
    CHECK(tecs_world_entity_count(w) == n + 1, "%d alive", tecs_world_entity_count(w));
    CHECK(tecs_world_memory(w) == c.live, "world says %zu bytes, allocator %zu",
          tecs_world_memory(w), c.live);
    const void *shared = tecs_get(w, base, blob);
    CHECK(shared != NULL && tecs_get(w, ids[n - 1], blob) == shared,
          "the last instance does not read the base's Blob");
    double v = (double)(c.live - empty) / (double)(n + 1);
    CHECK(v < (double)sizeof(Blob), "%.1f bytes per entity: the Blob is copied", v);
    free(value);
    free(ids);
    tecs_world_free(w);
    CHECK(c.live == 0, "%zu bytes left after free", c.live);
    return v;
}
