/*
** bench_system.c — the `system` scenario: the iterate loop (p += v over
** {Position, Velocity}) run as an on-update system through tecs_progress,
** in ns/entity, beside the same loop through a plain query iteration and
** over two plain arrays (`raw`, the physical limit).
**
** Standalone until bench/bench.c (issue 4) reaches this branch. To register
** it there: move sc_system below into bench.c (its fixture fx_world and
** time-keeping now_ns / median replace the small ones here) and add the row
**
**     { "system", sc_system, M, "ns/entity", F_RATIO },
**
** after "iterate" in scenarios[]; the harness then prints the ratio to raw.
**
** Usage: bench_system [N] (default 1,000,000 entities); 20 timed passes
** after one warm-up, median reported.
*/
#define _POSIX_C_SOURCE 200809L
#include "tinyecs.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;

#define PASSES 20

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The loop body every variant runs over one run of rows. */
static inline void integrate(Position *restrict p, const Velocity *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

static void move_system(tecs_iter_t *it)
{
    integrate(TECS_FIELD(it, Position, 0), TECS_FIELD(it, Velocity, 1), it->count);
}

typedef struct world_fx {
    tecs_world_t *w;
    tecs_query_t *q;
    tecs_comp_t pos;
} world_fx;

static world_fx make_world(int64_t n)
{
    world_fx f;
    f.w = tecs_world_new();
    f.pos = TECS_COMPONENT(f.w, Position);
    tecs_comp_t vel = TECS_COMPONENT(f.w, Velocity);
    tecs_archetype_t *a = tecs_archetype(f.w, 2, (tecs_comp_t[]){ f.pos, vel });
    Velocity *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (Velocity){ 1, 1 };
    if (tecs_new_bulk(f.w, a, (int32_t)n, NULL, 1, &(tecs_value_t){ vel, v }) != TECS_OK)
        exit(2);
    free(v);
    f.q = TECS_QUERY(f.w, {.comp = f.pos}, {.comp = vel, .access = TECS_READ});
    return f;
}

/* Sum of x over every entity: the passes really ran. */
static double sum_x(world_fx *f)
{
    double s = 0;
    tecs_iter_t it = tecs_query_iter(f->q);
    while (tecs_iter_next(&it)) {
        const Position *p = TECS_FIELD(&it, Position, 0);
        for (int32_t i = 0; i < it.count; i++)
            s += p[i].x;
    }
    return s;
}

static double sc_raw(int64_t n)
{
    Position *p = calloc((size_t)n, sizeof *p);
    Velocity *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (Velocity){ 1, 1 };
    double t[PASSES];
    integrate(p, v, (int32_t)n);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        integrate(p, v, (int32_t)n);
        t[k] = (now_ns() - t0) / (double)n;
    }
    if (p[n - 1].x != PASSES + 1)
        fprintf(stderr, "raw: wrong result\n");
    free(p);
    free(v);
    return median(t, PASSES);
}

static double sc_iterate(int64_t n)
{
    world_fx f = make_world(n);
    double t[PASSES];
    for (int k = -1; k < PASSES; k++) {
        double t0 = now_ns();
        tecs_iter_t it = tecs_query_iter(f.q);
        while (tecs_iter_next(&it))
            move_system(&it);
        if (k >= 0)
            t[k] = (now_ns() - t0) / (double)n;
    }
    if (sum_x(&f) != (double)n * (PASSES + 1))
        fprintf(stderr, "iterate: wrong result\n");
    tecs_world_free(f.w);
    return median(t, PASSES);
}

static double sc_system(int64_t n)
{
    world_fx f = make_world(n);
    tecs_system(f.w, &(tecs_system_desc_t){ .name = "move", .phase = TECS_ON_UPDATE,
                                            .query = f.q, .run = move_system });
    double t[PASSES];
    for (int k = -1; k < PASSES; k++) {
        double t0 = now_ns();
        tecs_progress(f.w, 1.0 / 60);
        if (k >= 0)
            t[k] = (now_ns() - t0) / (double)n;
    }
    if (sum_x(&f) != (double)n * (PASSES + 1))
        fprintf(stderr, "system: wrong result\n");
    tecs_world_free(f.w);
    return median(t, PASSES);
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    if (n < 1 || n > 50000000) {
        fprintf(stderr, "usage: bench_system [N]\n");
        return 2;
    }
    double raw = sc_raw(n), iter = sc_iterate(n), sys = sc_system(n);
    printf("%-10s %10s %12s %8s\n", "scenario", "N", "ns/entity", "ratio");
    printf("%-10s %10lld %12.3f %8.2f\n", "raw", (long long)n, raw, 1.0);
    printf("%-10s %10lld %12.3f %8.2f\n", "iterate", (long long)n, iter, iter / raw);
    printf("%-10s %10lld %12.3f %8.2f\n", "system", (long long)n, sys, sys / raw);
    return 0;
}
