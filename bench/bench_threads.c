/*
** bench_threads.c — the thread rows: pairs of one workload run on the
** calling thread alone (NAME_1t) and with as many workers as the machine
** has processors (NAME_nt: tecs_world_set_threads(w, tecs_cpu_count())).
** bench.c runs the two rows of a pair in turn and reports the speed-up,
** 1t / nt, next to them.
**
**   heavy     a parallel system costing about 50-100 ns an entity (square
**             roots and sines over Position and Velocity); N entities;
**             heavy_raw runs its kernel over two plain arrays, the limit
**   light     the p += v loop as a parallel system; N entities
**   tiny      50 parallel systems of N / 50 entities each (one tag per
**             system, so one archetype each): every one is below
**             TECS_PARALLEL_MIN and runs as one part on the calling thread,
**             so threads must cost nothing; the value is ns a frame
**   disjoint  two heavy systems of one phase on disjoint components
**             ({Position, Velocity} and {Pos2, Vel2} of the same N
**             entities), concurrent rather than parallel: they run side by
**             side, one on each of two workers
**
** Each scenario builds its world, runs one untimed frame (the pool starts,
** the worker contexts are made, every page is touched), times `frames`
** tecs_progress calls one by one and returns the median frame, per entity
** (per frame for tiny), on the wall clock even under --cpu (the calling
** thread's CPU time leaves the workers' out). Then it checks, bit for bit, every value the frames
** computed against the same kernel run over plain arrays (the reference,
** made once per kernel and size and kept), so the 1t and nt rows of a pair
** are checked equal to each other through it; and through the per-worker
** tallies the callbacks keep (indexed by it->worker, so workers never share
** one) that the rows were split as they should be: into tecs_cpu_count()
** parts for a parallel system with threads, one part otherwise.
**
**   world ──progress──> system callback (per chunk of its part)
**                         ├─ kernel(fields)            the timed work
**                         └─ tally[it->worker] += rows, workers seen
*/
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TINY_SYSTEMS 50
#define DT (1.0 / 60)
#define HEAVY_CHAIN 5

/* A loop over one chunk's columns: what a system does to its rows. */
typedef void (*kernel_fn)(Position *restrict p, Velocity *restrict v, int32_t n);

/* The heavy loop: about 50-100 ns a row on a current x86 core (two square
** roots, two sines, then a chain of HEAVY_CHAIN + 1 sines each waiting for
** the last, two divisions: about 70 ns on the 2-core EPYC of docs/BENCHMARKS.md).
** It stays bounded: |v| <= 2, so p moves at most 2 a frame, and its results
** are exact functions of the row (no state across rows), so any split
** gives the same bits. */
static BENCH_NOINLINE void heavy_rows(Position *restrict p, Velocity *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float r = sqrtf(p[i].x * p[i].x + p[i].y * p[i].y + 1.0f);
        float d = sqrtf(v[i].x * v[i].x + v[i].y * v[i].y + 1.0f);
        float s = sinf(r * 0.01f), c = sinf(r * 0.01f + 1.5707964f);
        float w = sinf(d + r * 0.001f);
        for (int k = 0; k < HEAVY_CHAIN; k++)      /* each sine waits for the last */
            w = sinf(w * 3.0f + s);
        v[i].x = 0.5f * v[i].x + (c + 0.25f * w) / d;
        v[i].y = 0.5f * v[i].y + (s - 0.25f * w) / d;
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

/* The light loop: p += v (v is read only). */
static BENCH_NOINLINE void light_rows(Position *restrict p, Velocity *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

/* ---- initial values and the reference ---------------------------------- */

/* Row i's starting values; seed 0 for {Position, Velocity}, 1 for the
** disjoint rows' {Pos2, Vel2}, so a mix-up of the two shows. */
static void init_values(Position *p, Velocity *v, int64_t n, int seed)
{
    for (int64_t i = 0; i < n; i++) {
        float f = (float)i;
        p[i] = seed ? (Position){ -f, 0.5f * f } : (Position){ f, f };
        v[i] = seed ? (Velocity){ 0, -1 } : (Velocity){ 1, 1 };
    }
}

/* The values after `frames` runs of kernel over n rows of seed's start:
** made over plain arrays, once per (kernel, seed, n, frames), and kept. */
typedef struct reference {
    kernel_fn kernel;
    int seed, frames;
    int64_t n;
    Position *p;
    Velocity *v;
} reference;

static reference g_refs[4];
static int g_ref_next;

static const reference *reference_get(kernel_fn kernel, int seed, int64_t n, int frames)
{
    for (int k = 0; k < 4; k++) {
        reference *r = &g_refs[k];
        if (r->p && r->kernel == kernel && r->seed == seed && r->n == n && r->frames == frames)
            return r;
    }
    reference *r = &g_refs[g_ref_next++ % 4];
    free(r->p);
    free(r->v);
    *r = (reference){ kernel, seed, frames, n, malloc((size_t)n * sizeof *r->p),
                      malloc((size_t)n * sizeof *r->v) };
    if (r->p == NULL || r->v == NULL) {
        fprintf(stderr, "bench: out of memory (reference of %lld rows)\n", (long long)n);
        exit(2);
    }
    init_values(r->p, r->v, n, seed);
    for (int f = 0; f < frames; f++)
        for (int64_t i = 0; i < n; i += 1 << 20)
            kernel(r->p + i, r->v + i, (int32_t)(n - i < (1 << 20) ? n - i : 1 << 20));
    return r;
}

/* Rows of q (iterated in order: the rows of a world built by tecs_new_bulk
** and never changed structurally) that differ from the reference by a bit. */
static int64_t count_mismatches(tecs_query_t *q, const reference *r, int64_t *rows)
{
    int64_t bad = 0, k = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = it.fields[0];
        const Velocity *v = it.fields[1];
        for (int32_t i = 0; i < it.count; i++, k++)
            bad += k >= r->n || memcmp(&p[i], &r->p[k], sizeof *p) != 0 ||
                   memcmp(&v[i], &r->v[k], sizeof *v) != 0;
    }
    *rows = k;
    return bad;
}

/* ---- systems and their per-worker tallies ------------------------------ */

/* One worker's tally, alone on its cache line. */
typedef struct tally {
    _Alignas(64) int64_t rows;  /* rows this worker ran, every frame        */
    int32_t workers;            /* it->workers it was last told             */
    char pad[64 - sizeof(int64_t) - sizeof(int32_t)];
} tally;

/* A system's ctx: its kernel and one tally per worker. */
typedef struct sysctx {
    kernel_fn kernel;
    tally per[TECS_MAX_THREADS];
} sysctx;

static void run_kernel(tecs_iter_t *it)
{
    sysctx *c = it->ctx;
    c->kernel(it->fields[0], it->fields[1], it->count);
    tally *t = &c->per[it->worker];
    t->rows += it->count;
    t->workers = it->workers;
}

/* The parts the tallies show: how many workers ran rows, all having been
** told `parts` workers (-1 if they were told different counts), and the
** rows they ran. */
static int32_t parts_seen(const sysctx *c, int64_t *rows)
{
    int32_t used = 0, told = 0;
    *rows = 0;
    for (int32_t k = 0; k < TECS_MAX_THREADS; k++) {
        if (c->per[k].rows == 0)
            continue;
        *rows += c->per[k].rows;
        used++;
        if (told && told != c->per[k].workers)
            return -1;
        told = c->per[k].workers;
    }
    return used == told ? used : -1;
}

/* ---- the scenarios ------------------------------------------------------ */

typedef enum { HEAVY, LIGHT, TINY, DISJOINT } workload;

static const char *const g_names[] = { "heavy", "light", "tiny", "disjoint" };

/* One run of a workload: its world, its queries (one per system; the
** disjoint one's second system reads {Pos2, Vel2}), their contexts. */
typedef struct tworld {
    tecs_world_t *w;
    int nsys;
    tecs_query_t *q[TINY_SYSTEMS];
    tecs_query_t *all[2];       /* every row of {P, V} (and {Pos2, Vel2})    */
    sysctx *ctx;                /* nsys of them                              */
    void *ctx_raw;              /* the block they are in                     */
    int64_t rows;               /* rows of {P, V}                            */
} tworld;

static tecs_comp_t comp(tecs_world_t *w, const char *name)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = sizeof(Position), .align = _Alignof(Position) });
}

/* Bulk-create n rows in arch with seed's values in the column pairs given. */
static void populate(tecs_world_t *w, tecs_archetype_t *arch, int64_t n, int64_t first,
                     int npairs, const tecs_comp_t *pairs)
{
    Position *p[2];
    Velocity *v[2];
    tecs_value_t vals[4];
    for (int k = 0; k < npairs; k++) {
        p[k] = malloc((size_t)(first + n) * sizeof *p[k]);
        v[k] = malloc((size_t)(first + n) * sizeof *v[k]);
        if (p[k] == NULL || v[k] == NULL) {
            fprintf(stderr, "bench: out of memory (%lld rows)\n", (long long)(first + n));
            exit(2);
        }
        init_values(p[k], v[k], first + n, k);
        vals[2 * k] = (tecs_value_t){ pairs[2 * k], p[k] + first };
        vals[2 * k + 1] = (tecs_value_t){ pairs[2 * k + 1], v[k] + first };
    }
    tecs_err_t err = tecs_new_bulk(w, arch, (int32_t)n, NULL, 2 * npairs, vals);
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    for (int k = 0; k < npairs; k++) {
        free(p[k]);
        free(v[k]);
    }
}

/* Add system k over query q with kernel; parallel or concurrent. */
static void add_system(tworld *t, int k, tecs_query_t *q, kernel_fn kernel, bool parallel)
{
    char name[32];
    snprintf(name, sizeof name, "sys%d", k);
    t->q[k] = q;
    t->ctx[k].kernel = kernel;
    tecs_system_t s = tecs_system_new(t->w, &(tecs_system_desc_t){ .name = name,
        .query = q, .run = run_kernel, .ctx = &t->ctx[k], .parallel = parallel,
        .concurrent = !parallel });
    CHECK(q && s, "system %d: %s", k, tecs_last_error_msg(t->w));
}

/* The world of workload wl over n rows (tiny: n / 50 per system). */
static tworld build(workload wl, int64_t n)
{
    tworld t = { .w = tecs_world_new(), .nsys = wl == TINY ? TINY_SYSTEMS : wl == DISJOINT ? 2 : 1 };
    CHECK(t.w != NULL, "world");
    /* Aligned by hand (C11's aligned_alloc is not everywhere), so that
    ** each tally is alone on its line: workers bump theirs once a chunk. */
    t.ctx_raw = calloc(1, (size_t)t.nsys * sizeof *t.ctx + _Alignof(sysctx));
    t.ctx = t.ctx_raw ? (sysctx *)(((uintptr_t)t.ctx_raw + _Alignof(sysctx) - 1) &
                                   ~(uintptr_t)(_Alignof(sysctx) - 1))
                      : NULL;
    if (t.w == NULL || t.ctx == NULL)
        exit(2);
    tecs_comp_t c[4] = { TECS_COMPONENT(t.w, Position), TECS_COMPONENT(t.w, Velocity),
                         comp(t.w, "Pos2"), comp(t.w, "Vel2") };
    tecs_access_t vel = wl == HEAVY || wl == DISJOINT ? TECS_WRITE : TECS_READ;
    t.all[0] = tecs_query_all(t.w, 2, c);
    if (wl == TINY) {
        int64_t per = n / TINY_SYSTEMS;
        for (int k = 0; k < TINY_SYSTEMS; k++) {
            char name[16];
            snprintf(name, sizeof name, "Tag%d", k);
            tecs_comp_t tag = tecs_component_new(t.w, &(tecs_component_desc_t){ .name = name });
            tecs_archetype_t *a = tecs_archetype_get(t.w, 3, (tecs_comp_t[]){ c[0], c[1], tag });
            CHECK(tag && a, "tag %d", k);
            populate(t.w, a, per, per * k, 1, c);
            add_system(&t, k, TECS_QUERY(t.w, { .comp = c[0] }, { .comp = c[1], .access = vel },
                                         { .comp = tag, .access = TECS_READ }),
                       light_rows, true);
        }
        t.rows = per * TINY_SYSTEMS;
        return t;
    }
    int ncomp = wl == DISJOINT ? 4 : 2;
    tecs_archetype_t *a = tecs_archetype_get(t.w, ncomp, c);
    CHECK(c[0] && c[1] && c[2] && c[3] && a, "registration");
    populate(t.w, a, n, 0, ncomp / 2, c);
    kernel_fn kernel = wl == LIGHT ? light_rows : heavy_rows;
    add_system(&t, 0, TECS_QUERY(t.w, { .comp = c[0] }, { .comp = c[1], .access = vel }),
               kernel, wl != DISJOINT);
    if (wl == DISJOINT) {
        t.all[1] = tecs_query_all(t.w, 2, c + 2);
        add_system(&t, 1, TECS_QUERY(t.w, { .comp = c[2] }, { .comp = c[3] }), kernel, false);
    }
    t.rows = n;
    return t;
}

/* The frames a scenario times: heavy ones are long enough to time few. */
static int frames_of(workload wl)
{
    return wl == HEAVY || wl == DISJOINT ? 5 : 20;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Check t after `frames` frames with `threads` workers. */
static void check_world(const tworld *t, workload wl, int32_t threads, int frames)
{
    kernel_fn kernel = wl == LIGHT || wl == TINY ? light_rows : heavy_rows;
    for (int s = 0; s < (wl == DISJOINT ? 2 : 1); s++) {
        int64_t rows;
        const reference *r = reference_get(kernel, s, t->rows, frames);
        int64_t bad = count_mismatches(t->all[s], r, &rows);
        CHECK(rows == t->rows, "%s: %lld rows, want %lld", g_names[wl], (long long)rows,
              (long long)t->rows);
        CHECK(bad == 0, "%s: %lld rows differ from the reference", g_names[wl],
              (long long)bad);
    }
    /* The parts: a parallel system with threads and enough rows is split
    ** in one part per worker; below TECS_PARALLEL_MIN (tiny), or concurrent
    ** (disjoint), or without threads, it runs as one part. */
    int32_t want = wl == HEAVY || wl == LIGHT ? threads : 1;
    for (int s = 0; s < t->nsys; s++) {
        int64_t rows;
        int32_t parts = parts_seen(&t->ctx[s], &rows);
        int64_t per = t->rows / (t->nsys == TINY_SYSTEMS ? TINY_SYSTEMS : 1);
        CHECK(parts == want, "%s: system %d ran in %d parts, want %d", g_names[wl], s,
              (int)parts, (int)want);
        CHECK(rows == per * frames, "%s: system %d ran %lld rows, want %lld", g_names[wl], s,
              (long long)rows, (long long)(per * frames));
    }
}

/* Workload wl over n rows, with tecs_cpu_count() workers or none: the
** median frame, per row (per frame for tiny), in ns. */
static double run_workload(workload wl, bool threads, int64_t n)
{
    tworld t = build(wl, n);
    int32_t want = threads ? tecs_cpu_count() : 1;
    if (threads) {
        tecs_err_t err = tecs_world_set_threads(t.w, want);
        CHECK(err == TECS_OK, "tecs_world_set_threads(%d): %s", (int)want, tecs_strerror(err));
    }
    CHECK(tecs_world_threads(t.w) == want, "%d workers, want %d",
          (int)tecs_world_threads(t.w), (int)want);
    int frames = frames_of(wl);
    double ns[32];
    tecs_err_t err = tecs_progress(t.w, DT);
    for (int f = 0; f < frames; f++) {
        double t0 = tecs_time_now();
        err = err ? err : tecs_progress(t.w, DT);
        ns[f] = (tecs_time_now() - t0) * 1e9;
    }
    CHECK(err == TECS_OK, "tecs_progress: %s", tecs_strerror(err));
    check_world(&t, wl, tecs_world_threads(t.w), frames + 1);
    tecs_world_free(t.w);
    free(t.ctx_raw);
    qsort(ns, (size_t)frames, sizeof *ns, cmp_double);
    double frame = frames % 2 ? ns[frames / 2] : (ns[frames / 2 - 1] + ns[frames / 2]) / 2;
    return wl == TINY ? frame : frame / (double)t.rows;
}

/* heavy_raw: the heavy kernel over two plain arrays, one call a frame, timed
** as run_workload times a frame; checked against the reference. */
double sc_heavy_raw(int64_t n)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    init_values(p, v, n, 0);
    int frames = frames_of(HEAVY);
    double ns[32];
    heavy_rows(p, v, (int32_t)n);
    for (int f = 0; f < frames; f++) {
        double t0 = tecs_time_now();
        heavy_rows(p, v, (int32_t)n);
        ns[f] = (tecs_time_now() - t0) * 1e9;
    }
    const reference *r = reference_get(heavy_rows, 0, n, frames + 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += memcmp(&p[i], &r->p[i], sizeof *p) != 0 || memcmp(&v[i], &r->v[i], sizeof *v) != 0;
    CHECK(bad == 0, "heavy_raw: %lld rows differ from the reference", (long long)bad);
    free(p);
    free(v);
    qsort(ns, (size_t)frames, sizeof *ns, cmp_double);
    return (frames % 2 ? ns[frames / 2] : (ns[frames / 2 - 1] + ns[frames / 2]) / 2) / (double)n;
}

double sc_heavy_1t(int64_t n) { return run_workload(HEAVY, false, n); }
double sc_heavy_nt(int64_t n) { return run_workload(HEAVY, true, n); }
double sc_light_1t(int64_t n) { return run_workload(LIGHT, false, n); }
double sc_light_nt(int64_t n) { return run_workload(LIGHT, true, n); }
double sc_tiny_1t(int64_t n) { return run_workload(TINY, false, n); }
double sc_tiny_nt(int64_t n) { return run_workload(TINY, true, n); }
double sc_disjoint_1t(int64_t n) { return run_workload(DISJOINT, false, n); }
double sc_disjoint_nt(int64_t n) { return run_workload(DISJOINT, true, n); }
