/*
** bench_store.c — the rows of the stores that change without a move:
** enableable components (toggle, iterate_toggled) and a sparse term
** (iterate_sparse_term), each iteration beside the loop a user would write
** by hand over the same rows (raw_toggled, raw_sparse_term).
*/
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

/* Rows of a run: iterate_toggled disables every other run of RUN rows. */
#define RUN 8

static void *xalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
        exit(2);
    }
    return p;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { PASSES = 20 };

/* A world of n entities with Position (i, i) and an enableable Velocity
** (1, 1); ids into *ids (the caller frees them). */
static tecs_world_t *toggle_world(int64_t n, tecs_comp_t *pos, tecs_comp_t *vel,
                                  tecs_entity_t **ids)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    *pos = TECS_COMPONENT(w, Position);
    *vel = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Velocity",
        .size = sizeof(Velocity), .align = _Alignof(Velocity), .enableable = true });
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ *pos, *vel });
    Position *p = xalloc((size_t)n * sizeof *p);
    Velocity *v = xalloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, (float)i };
        v[i] = (Velocity){ 1, 1 };
    }
    *ids = xalloc((size_t)n * sizeof **ids);
    tecs_err_t err = tecs_new_bulk(w, a, (int32_t)n, *ids, 2,
                                   (tecs_value_t[]){ { *pos, p }, { *vel, v } });
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    free(p);
    free(v);
    return w;
}

/* toggle: tecs_enable(false) on every entity, then tecs_enable(true): ns
** per pair. */
double sc_toggle(int64_t n)
{
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = toggle_world(n, &pos, &vel, &ids);
    tecs_query_t *q = tecs_query_all(w, 1, &vel);
    int64_t errs = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += tecs_enable(w, ids[i], vel, false) != TECS_OK;
    int32_t off = tecs_query_count(q);
    for (int64_t i = 0; i < n; i++)
        errs += tecs_enable(w, ids[i], vel, true) != TECS_OK;
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    CHECK(off == 0, "%d enabled after disabling all", off);
    CHECK(tecs_query_count(q) == n, "%d enabled after enabling all", tecs_query_count(q));
    free(ids);
    tecs_world_free(w);
    return t;
}

static inline void integrate(Position *restrict p, const Velocity *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

static BENCH_NOINLINE void pass_toggled(tecs_query_t *q)
{
    tecs_iter_t it = tecs_query_iter(q);
    while (tecs_iter_next(&it))
        integrate(it.fields[0], it.fields[1], it.count);
}

/* iterate_toggled: p += v over a query whose Velocity is disabled in every
** other run of RUN rows: ns per enabled row (the median of PASSES passes). */
double sc_iterate_toggled(int64_t n)
{
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = toggle_world(n, &pos, &vel, &ids);
    for (int64_t i = 0; i < n; i++)
        if ((i / RUN) & 1)
            tecs_enable(w, ids[i], vel, false);
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    int64_t on = tecs_query_count(q);
    CHECK(on == (n / (2 * RUN)) * RUN + (n % (2 * RUN) < RUN ? n % (2 * RUN) : RUN),
          "%lld rows enabled", (long long)on);
    double t[PASSES];
    pass_toggled(q);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        pass_toggled(q);
        t[k] = (now_ns() - t0) / (double)on;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(w, ids[i], pos, Position);
        float want = (float)i + (((i / RUN) & 1) ? 0 : PASSES + 1);
        bad += p == NULL || p->x != want;
    }
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
    free(ids);
    tecs_world_free(w);
    return median_of(t, PASSES);
}

/* The same rows by hand: two plain arrays, every other run of RUN rows
** skipped. */
static BENCH_NOINLINE void pass_runs(Position *restrict p, const Velocity *restrict v,
                                     int64_t n)
{
    for (int64_t i = 0; i < n; i += 2 * RUN)
        integrate(p + i, v + i, (int32_t)(n - i < RUN ? n - i : RUN));
}

/* raw_toggled: ns per row handed out of iterate_toggled's rows by hand. */
double sc_raw_toggled(int64_t n)
{
    Position *p = xalloc((size_t)n * sizeof *p);
    Velocity *v = xalloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, (float)i };
        v[i] = (Velocity){ 1, 1 };
    }
    int64_t on = (n / (2 * RUN)) * RUN + (n % (2 * RUN) < RUN ? n % (2 * RUN) : RUN);
    double t[PASSES];
    pass_runs(p, v, n);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        pass_runs(p, v, n);
        t[k] = (now_ns() - t0) / (double)on;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += p[i].x != (float)i + (((i / RUN) & 1) ? 0 : PASSES + 1);
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
    free(p);
    free(v);
    return median_of(t, PASSES);
}

/* Every tenth entity holds the sparse tag of iterate_sparse_term, spread
** the same way in its raw loop. */
static bool tagged(int64_t i)
{
    return (i * 7) % 10 == 3;
}

/* iterate_sparse_term: p += v over a query of Position, Velocity and a
** sparse tag held by 10% of the entities: ns per row handed out. */
double sc_iterate_sparse_term(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Marked",
                                         .storage = TECS_STORAGE_SPARSE });
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    Position *p = xalloc((size_t)n * sizeof *p);
    Velocity *v = xalloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, (float)i };
        v[i] = (Velocity){ 1, 1 };
    }
    tecs_entity_t *ids = xalloc((size_t)n * sizeof *ids);
    tecs_err_t err = tecs_new_bulk(w, a, (int32_t)n, ids, 2,
                                   (tecs_value_t[]){ { pos, p }, { vel, v } });
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    int64_t on = 0;
    for (int64_t i = 0; i < n; i++)
        if (tagged(i))
            on += tecs_add(w, ids[i], tag) == TECS_OK;
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos }, { .comp = vel, .access = TECS_READ },
                                 { .comp = tag, .access = TECS_FILTER });
    CHECK(tecs_query_count(q) == on, "%d rows match, %lld tagged", tecs_query_count(q),
          (long long)on);
    double t[PASSES];
    pass_toggled(q);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        pass_toggled(q);
        t[k] = (now_ns() - t0) / (double)on;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *x = TECS_GET(w, ids[i], pos, Position);
        bad += x == NULL || x->x != (float)i + (tagged(i) ? PASSES + 1 : 0);
    }
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
    free(p);
    free(v);
    free(ids);
    tecs_world_free(w);
    return median_of(t, PASSES);
}

/* The same rows by hand: two plain arrays and the list of the rows that
** hold the tag. */
static BENCH_NOINLINE void pass_listed(Position *restrict p, const Velocity *restrict v,
                                       const int32_t *rows, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        p[rows[k]].x += v[rows[k]].x;
        p[rows[k]].y += v[rows[k]].y;
    }
}

/* raw_sparse_term: ns per row of iterate_sparse_term's rows by hand. */
double sc_raw_sparse_term(int64_t n)
{
    Position *p = xalloc((size_t)n * sizeof *p);
    Velocity *v = xalloc((size_t)n * sizeof *v);
    int32_t *rows = xalloc((size_t)n * sizeof *rows);
    int64_t on = 0;
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, (float)i };
        v[i] = (Velocity){ 1, 1 };
        if (tagged(i))
            rows[on++] = (int32_t)i;
    }
    double t[PASSES];
    pass_listed(p, v, rows, on);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        pass_listed(p, v, rows, on);
        t[k] = (now_ns() - t0) / (double)on;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += p[i].x != (float)i + (tagged(i) ? PASSES + 1 : 0);
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
    free(p);
    free(v);
    free(rows);
    return median_of(t, PASSES);
}
