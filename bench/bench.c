/*
** bench.c — the numbers users choose an ECS on, measured against the limit.
**
** Each scenario is one function that builds a fresh world, times one
** repetition of its workload, checks the result (counts, sums), frees the
** world and returns the time per unit (bench.h). The harness runs it once
** to warm up, then `reps` times, and reports the median:
**
**     main ─> run(table[i], n) ─┬─ warm-up rep (discarded)
**                                ├─ rep 1..reps ─> median
**                                └─ iterate family: a raw rep after each
**                                   rep ─> median of the ratios
**
** The iterate family (iterate, iterate_each, system, fragmented, raw) times
** 20 passes over the same world inside one repetition and returns their
** median, so one cold pass does not decide the figure. `raw` is the same
** loop over two plain arrays through restrict pointers: the physical limit.
** It is run right after each repetition of the others, and their ratio is
** the median of the per-repetition ratios, so a shared machine's changing
** load cannot skew a ratio the way two figures taken a minute apart would.
**
** Adding a scenario: write `double sc_NAME(int64_t n)` that builds its world
** outside the timed region, times with now_ns(), checks its result with
** CHECK(), frees the world and returns ns per unit, static here or declared
** in bench.h when it lives in a file of its own (the index rows are in
** bench_index.c); then add one row to `scenarios[]` below (name, default N,
** unit, flags).
**
** Only the public API is used; the build is plain -O3 without -march=native,
** so the figures are those of a portable binary (make bench BENCH_NATIVE=1
** builds with -march=native, defining BENCH_NATIVE, in its own directory).
*/
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- harness state (the bench program's own; the library has none) ---- */

static int g_failed;            /* a result check failed somewhere          */
static const char *g_current;   /* scenario being run, for messages         */
static int g_passes = BENCH_PASSES; /* timed passes per iterate repetition */
int32_t g_rows;                 /* --rows: rows per chunk, 0 = the default  */
bool g_cpu_clock;

void check_failed(const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    const char *base = strrchr(file, '/');
    fprintf(stderr, "CHECK FAILED in %s (%s:%d: %s): ", g_current, base ? base + 1 : file,
            line, expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_failed = 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "bench: out of memory (%zu bytes)\n", size);
        exit(2);
    }
    return p;
}

void shuffle(tecs_entity_t *ids, int64_t n, uint64_t seed)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_next(&seed) % (uint64_t)(i + 1));
        tecs_entity_t t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
}

/* ---- fixtures --------------------------------------------------------- */

/* A world with its three components; freed with tecs_world_free. */
typedef struct fixture {
    tecs_world_t *w;
    tecs_comp_t pos, vel, hp;
    tecs_archetype_t *pv;       /* {Position, Velocity}                     */
    tecs_entity_t *ids;         /* creation order, n of them (or NULL)      */
    int64_t n;
} fixture;

static fixture fx_open(const tecs_world_desc_t *desc)
{
    fixture f = { 0 };
    tecs_world_desc_t d = desc ? *desc : (tecs_world_desc_t){ 0 };
    d.rows_per_chunk = g_rows;
    f.w = tecs_world_new_ex(&d);
    CHECK(f.w != NULL, "world");
    if (f.w == NULL)
        exit(2);
    f.pos = TECS_COMPONENT(f.w, Position);
    f.vel = TECS_COMPONENT(f.w, Velocity);
    f.hp = TECS_COMPONENT(f.w, Health);
    f.pv = tecs_archetype_get(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    CHECK(f.pos && f.vel && f.hp && f.pv, "registration");
    return f;
}

static void fx_close(fixture *f)
{
    tecs_world_free(f->w);
    free(f->ids);
    f->ids = NULL;
}

/* Source arrays: Position (i, i) and Velocity (1, 1). */
void fill_values(Position *p, Velocity *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, (float)i };
        v[i] = (Velocity){ 1, 1 };
    }
}

/* n entities with Position (i, i) and Velocity (1, 1), through the bulk
** path (setup, untimed); ids kept in f->ids. */
static void fx_populate(fixture *f, tecs_archetype_t *arch, int64_t n, int64_t first)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    fill_values(p, v, n);
    for (int64_t i = 0; i < n; i++)
        p[i] = (Position){ (float)(first + i), (float)(first + i) };
    tecs_value_t vals[] = { { f->pos, p }, { f->vel, v } };
    tecs_entity_t *out = f->ids ? f->ids + first : NULL;
    tecs_err_t err = tecs_new_bulk(f->w, arch, (int32_t)n, out, 2, vals);
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    free(p);
    free(v);
}

static fixture fx_world(int64_t n)
{
    fixture f = fx_open(NULL);
    f.n = n;
    f.ids = xmalloc((size_t)n * sizeof *f.ids);
    fx_populate(&f, f.pv, n, 0);
    return f;
}

/* Sum of x over every Position matched by q, and the row count. */
static double sum_x(tecs_query_t *q, int64_t *rows)
{
    double s = 0;
    *rows = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = it.fields[0];
        for (int32_t i = 0; i < it.count; i++)
            s += p[i].x;
        *rows += it.count;
    }
    return s;
}

/* After k passes of p += v, x of entity i is i + k: check every row. */
static void check_passes(tecs_query_t *q, int64_t n, int k)
{
    int64_t rows;
    double s = sum_x(q, &rows);
    double want = (double)n * (double)(n - 1) / 2 + (double)n * k;
    CHECK(rows == n, "%lld rows, want %lld", (long long)rows, (long long)n);
    CHECK(s == want, "sum of x %.0f, want %.0f", s, want);
}

/* ---- the iterate family ----------------------------------------------- */

/* One pass over a query's chunks. */
BENCH_NOINLINE void pass_chunks(tecs_query_t *q)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it))
        integrate(it.fields[0], it.fields[1], it.count);
}

/* Median of g_passes timed passes after one untimed one; checks the sums. */
static double time_passes(tecs_query_t *q, int64_t n)
{
    double t[64];
    pass_chunks(q);
    for (int k = 0; k < g_passes; k++) {
        double t0 = now_ns();
        pass_chunks(q);
        t[k] = (now_ns() - t0) / (double)n;
    }
    check_passes(q, n, g_passes + 1);
    return median(t, g_passes);
}

static double sc_iterate(int64_t n)
{
    fixture f = fx_world(n);
    tecs_query_t *q = tecs_query_all(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    double v = time_passes(q, n);
    fx_close(&f);
    return v;
}

static bool each_fn(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)ctx;
    Position *p = fields[0];
    const Velocity *v = fields[1];
    p->x += v->x;
    p->y += v->y;
    return false;
}

/* One pass of TECS_EACH: the per-entity body inlined into the chunk loop. */
static BENCH_NOINLINE void pass_each(tecs_query_t *q)
{
    TECS_EACH(q, it, i) {
        Position *p = TECS_ROW(it, Position, 0, i);
        const Velocity *v = TECS_ROW(it, const Velocity, 1, i);
        p->x += v->x;
        p->y += v->y;
    }
}

static double sc_iterate_each(int64_t n)
{
    fixture f = fx_world(n);
    tecs_query_t *q = tecs_query_all(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    double t[64];
    pass_each(q);
    for (int k = 0; k < g_passes; k++) {
        double t0 = now_ns();
        pass_each(q);
        t[k] = (now_ns() - t0) / (double)n;
    }
    check_passes(q, n, g_passes + 1);
    fx_close(&f);
    return median(t, g_passes);
}

/* The same through tecs_iter_each: a call per entity. */
static double sc_iterate_each_fn(int64_t n)
{
    fixture f = fx_world(n);
    tecs_query_t *q = tecs_query_all(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    double t[64];
    tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, each_fn, NULL);
    for (int k = 0; k < g_passes; k++) {
        double t0 = now_ns();
        tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, each_fn, NULL);
        t[k] = (now_ns() - t0) / (double)n;
    }
    check_passes(q, n, g_passes + 1);
    fx_close(&f);
    return median(t, g_passes);
}

/* The iterate loop as an on-update system, one tecs_progress per pass: what
** the frame pipeline costs over a plain iteration. */
static void system_move(tecs_iter_t *it)
{
    integrate(it->fields[0], it->fields[1], it->count);
}

static double sc_system(int64_t n)
{
    fixture f = fx_world(n);
    tecs_query_t *q = tecs_query_all(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    tecs_system_t s = tecs_system_new(f.w, &(tecs_system_desc_t){ .name = "move",
        .phase = TECS_ON_UPDATE, .query = q, .run = system_move });
    CHECK(s != 0, "tecs_system_new: %s", tecs_last_error_msg(f.w));
    double t[64];
    tecs_progress(f.w, 1.0 / 60);
    for (int k = 0; k < g_passes; k++) {
        double t0 = now_ns();
        tecs_progress(f.w, 1.0 / 60);
        t[k] = (now_ns() - t0) / (double)n;
    }
    check_passes(q, n, g_passes + 1);
    tecs_system_stats_t st;
    tecs_system_stats(f.w, s, &st);
    CHECK(st.runs == g_passes + 1 && st.entities_last == n, "system stats: %lld runs",
          (long long)st.runs);
    fx_close(&f);
    return median(t, g_passes);
}

static double sc_fragmented(int64_t n)
{
    fixture f = fx_open(NULL);
    f.n = n;
    f.ids = xmalloc((size_t)n * sizeof *f.ids);
    tecs_archetype_t *arch[64];
    for (int t = 0; t < 64; t++) {
        char name[16];
        snprintf(name, sizeof name, "Tag%d", t);
        tecs_comp_t tag = tecs_component_new(f.w, &(tecs_component_desc_t){ .name = name });
        arch[t] = tecs_archetype_get(f.w, 3, (tecs_comp_t[]){ f.pos, f.vel, tag });
        CHECK(tag && arch[t], "tag %d", t);
    }
    /* Entity i gets tag i % 64: created one by one, in id order. */
    for (int64_t i = 0; i < n; i++) {
        tecs_value_t vals[] = { { f.pos, &(Position){ (float)i, (float)i } },
                                { f.vel, &(Velocity){ 1, 1 } } };
        f.ids[i] = tecs_delayed_new(f.w, arch[i % 64], 2, vals);
    }
    CHECK(tecs_delayed_apply_new(f.w) == TECS_OK, "apply");
    tecs_query_t *q = tecs_query_all(f.w, 2, (tecs_comp_t[]){ f.pos, f.vel });
    CHECK(tecs_query_count(q) == n, "count");
    double v = time_passes(q, n);
    fx_close(&f);
    return v;
}

/* The physical limit: the same loop over two plain arrays. */
static BENCH_NOINLINE void pass_raw(Position *restrict p,
                                               const Velocity *restrict v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

static double sc_raw(int64_t n)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    fill_values(p, v, n);
    double t[64];
    pass_raw(p, v, n);
    for (int k = 0; k < g_passes; k++) {
        double t0 = now_ns();
        pass_raw(p, v, n);
        t[k] = (now_ns() - t0) / (double)n;
    }
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += p[i].x;
    double want = (double)n * (double)(n - 1) / 2 + (double)n * (g_passes + 1);
    CHECK(s == want, "sum of x %.0f, want %.0f", s, want);
    free(p);
    free(v);
    return median(t, g_passes);
}

/* ---- structural changes ----------------------------------------------- */

/* Every entity of ids alive with Position (i, i) and Velocity (1, 1). */
static void check_created(fixture *f, const tecs_entity_t *ids, int64_t n)
{
    CHECK(tecs_world_entity_count(f->w) == n, "%d alive", tecs_world_entity_count(f->w));
    CHECK(tecs_archetype_entity_count(f->pv) == n, "%d in {P,V}",
          tecs_archetype_entity_count(f->pv));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(f->w, ids[i], f->pos, Position);
        const Velocity *v = TECS_GET(f->w, ids[i], f->vel, Velocity);
        bad += !p || !v || p->x != (float)i || p->y != (float)i || v->x != 1 || v->y != 1;
    }
    CHECK(bad == 0, "%lld entities with wrong values", (long long)bad);
}

static double sc_create(int64_t n)
{
    fixture f = fx_open(NULL);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(f.w);
        tecs_set(f.w, e, f.pos, &(Position){ (float)i, (float)i });
        tecs_set(f.w, e, f.vel, &(Velocity){ 1, 1 });
        ids[i] = e;
    }
    double t = (now_ns() - t0) / (double)n;
    check_created(&f, ids, n);
    free(ids);
    fx_close(&f);
    return t;
}

static double sc_create_bulk(int64_t n)
{
    fixture f = fx_open(NULL);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    fill_values(p, v, n);
    double t0 = now_ns();
    tecs_value_t vals[] = { { f.pos, p }, { f.vel, v } };
    tecs_err_t err = tecs_new_bulk(f.w, f.pv, (int32_t)n, ids, 2, vals);
    double t = (now_ns() - t0) / (double)n;
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    check_created(&f, ids, n);
    free(p);
    free(v);
    free(ids);
    fx_close(&f);
    return t;
}

/* The source of the clone rows: Position (1, 2), Velocity (3, 4), a tag
** and Health (a plain value: no copy hook). */
static tecs_entity_t clone_source(fixture *f, tecs_comp_t *tag)
{
    *tag = tecs_component_new(f->w, &(tecs_component_desc_t){ .name = "Tag" });
    tecs_entity_t src = tecs_new(f->w);
    tecs_set(f->w, src, f->pos, &(Position){ 1, 2 });
    tecs_set(f->w, src, f->vel, &(Velocity){ 3, 4 });
    tecs_add(f->w, src, *tag);
    tecs_set(f->w, src, f->hp, &(Health){ 100 });
    return src;
}

/* Every id of ids a clone of src, in src's archetype. */
static void check_clones(fixture *f, tecs_entity_t src, tecs_comp_t tag,
                         const tecs_entity_t *ids, int64_t n)
{
    CHECK(tecs_world_entity_count(f->w) == n + 1, "%d alive", tecs_world_entity_count(f->w));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(f->w, ids[i], f->pos, Position);
        const Velocity *v = TECS_GET(f->w, ids[i], f->vel, Velocity);
        const Health *h = TECS_GET(f->w, ids[i], f->hp, Health);
        bad += !p || !v || !h || p->x != 1 || p->y != 2 || v->x != 3 || v->y != 4 ||
               h->hp != 100 || !tecs_has(f->w, ids[i], tag) ||
               tecs_entity_archetype(f->w, ids[i]) != tecs_entity_archetype(f->w, src);
    }
    CHECK(bad == 0, "%lld clones with wrong values", (long long)bad);
}

static double sc_clone(int64_t n)
{
    fixture f = fx_open(NULL);
    tecs_comp_t tag;
    tecs_entity_t src = clone_source(&f, &tag);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        ids[i] = tecs_clone(f.w, src);
    double t = (now_ns() - t0) / (double)n;
    check_clones(&f, src, tag, ids, n);
    free(ids);
    fx_close(&f);
    return t;
}

static double sc_clone_bulk(int64_t n)
{
    fixture f = fx_open(NULL);
    tecs_comp_t tag;
    tecs_entity_t src = clone_source(&f, &tag);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    double t0 = now_ns();
    tecs_err_t err = tecs_clone_bulk(f.w, src, (int32_t)n, ids);
    double t = (now_ns() - t0) / (double)n;
    CHECK(err == TECS_OK, "tecs_clone_bulk: %s", tecs_strerror(err));
    check_clones(&f, src, tag, ids, n);
    free(ids);
    fx_close(&f);
    return t;
}

static double sc_add_remove(int64_t n)
{
    fixture f = fx_world(n);
    tecs_query_t *qh = tecs_query_all(f.w, 1, (tecs_comp_t[]){ f.hp });
    int64_t errs = 0, with = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += tecs_add(f.w, f.ids[i], f.hp) != TECS_OK;
    with = tecs_query_count(qh);
    for (int64_t i = 0; i < n; i++)
        errs += tecs_remove(f.w, f.ids[i], f.hp) != TECS_OK;
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    CHECK(with == n, "%lld had Health after the adds", (long long)with);
    CHECK(tecs_query_count(qh) == 0, "Health left on %d", tecs_query_count(qh));
    check_created(&f, f.ids, n);
    fx_close(&f);
    return t;
}

/* A sparse component: values in a sparse set by entity slot. */
static tecs_comp_t sparse_health(tecs_world_t *w)
{
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "SparseHealth", .size = sizeof(Health), .align = _Alignof(Health),
        .storage = TECS_STORAGE_SPARSE });
    CHECK(c != 0, "registration");
    return c;
}

/* How add_remove_sparse adds and removes: tecs_handle_add_many /
** _remove_many on batches of SPARSE_BATCH ids, the inline tecs_handle_add /
** _remove per id, or tecs_add / tecs_remove per id. */
typedef enum sparse_form { SPARSE_MANY, SPARSE_INLINE, SPARSE_CALL } sparse_form;

enum { SPARSE_BATCH = 256 };

/* Every entity's sparse component added (add true) or removed, ids in
** order, one way: the number of failed calls. */
static int64_t sparse_all(tecs_world_t *w, tecs_comp_t sp, const tecs_handle_t *hp,
                          const tecs_entity_t *ids, int64_t n, sparse_form form, bool add)
{
    int64_t errs = 0;
    const tecs_handle_t hl = *hp;       /* a local copy: its fields stay in registers */
    switch (form) {
    case SPARSE_MANY:
        for (int64_t i = 0; i < n; i += SPARSE_BATCH) {
            int32_t k = n - i < SPARSE_BATCH ? (int32_t)(n - i) : SPARSE_BATCH;
            errs += (add ? tecs_handle_add_many(&hl, ids + i, k, NULL)
                         : tecs_handle_remove_many(&hl, ids + i, k, NULL)) != TECS_OK;
        }
        break;
    case SPARSE_INLINE:
        for (int64_t i = 0; i < n; i++)
            errs += (add ? tecs_handle_add(&hl, ids[i]) : tecs_handle_remove(&hl, ids[i])) !=
                    TECS_OK;
        break;
    case SPARSE_CALL:
        for (int64_t i = 0; i < n; i++)
            errs += (add ? tecs_add(w, ids[i], sp) : tecs_remove(w, ids[i], sp)) != TECS_OK;
        break;
    }
    return errs;
}

/* add_remove with a sparse component: no row moves. An add of every
** entity, then a remove of every entity, ids in order, one way: ns per
** pair. */
static double add_remove_sparse(int64_t n, sparse_form form)
{
    fixture f = fx_world(n);
    tecs_comp_t sp = sparse_health(f.w);
    tecs_handle_t h;
    int64_t errs = tecs_handle_init(f.w, sp, &h) != TECS_OK, with = 0;
    double t0 = now_ns();
    errs += sparse_all(f.w, sp, &h, f.ids, n, form, true);
    double t1 = now_ns();
    for (int64_t i = 0; i < n; i++)
        with += tecs_has(f.w, f.ids[i], sp);
    double t2 = now_ns();
    errs += sparse_all(f.w, sp, &h, f.ids, n, form, false);
    double t = (now_ns() - t2 + t1 - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    CHECK(with == n, "%lld had SparseHealth after the adds", (long long)with);
    CHECK(!tecs_has(f.w, f.ids[n / 2], sp), "SparseHealth left");
    CHECK(tecs_world_check(f.w) == TECS_OK, "the world's structure");
    check_created(&f, f.ids, n);
    fx_close(&f);
    return t;
}

/* add_remove_sparse: through tecs_handle_add_many / _remove_many. */
static double sc_add_remove_sparse(int64_t n)
{
    return add_remove_sparse(n, SPARSE_MANY);
}

/* add_remove_sparse_inline: the same through the inline form, id by id. */
static double sc_add_remove_sparse_inline(int64_t n)
{
    return add_remove_sparse(n, SPARSE_INLINE);
}

/* add_remove_sparse_call: the same through tecs_add / tecs_remove. */
static double sc_add_remove_sparse_call(int64_t n)
{
    return add_remove_sparse(n, SPARSE_CALL);
}

static double sc_destroy(int64_t n)
{
    fixture f = fx_world(n);
    int64_t errs = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += tecs_destroy(f.w, f.ids[i]) != TECS_OK;
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed destroys", (long long)errs);
    CHECK(tecs_world_entity_count(f.w) == 0, "%d alive", tecs_world_entity_count(f.w));
    CHECK(!tecs_is_alive(f.w, f.ids[n - 1]), "last still alive");
    fx_close(&f);
    return t;
}

/* The world of the random_get rows (bench_lookup.c): n entities of
** {Position, Velocity}, Position (i, i), made in bulk; their ids in a fixed
** random order. The caller frees the world and the ids. */
tecs_world_t *random_get_world(int64_t n, tecs_comp_t *pos, tecs_entity_t **ids)
{
    fixture f = fx_world(n);
    shuffle(f.ids, n, 0x9E3779B97F4A7C15ULL);
    *pos = f.pos;
    *ids = f.ids;
    return f.w;
}

/* The world of the random_get_sparse rows: random_get_world's, with a
** sparse component every entity has (hp = its index), set in id order. */
static fixture sparse_get_world(int64_t n, tecs_comp_t *sp)
{
    fixture f = fx_world(n);
    *sp = sparse_health(f.w);
    for (int64_t i = 0; i < n; i++)
        tecs_set(f.w, f.ids[i], *sp, &(Health){ (int)i });
    shuffle(f.ids, n, 0x9E3779B97F4A7C15ULL);
    return f;
}

static void check_hp(double s, int64_t miss, int64_t n)
{
    CHECK(miss == 0, "%lld lookups failed", (long long)miss);
    CHECK(s == (double)n * (double)(n - 1) / 2, "sum of hp %.0f", s);
}

/* random_get of the sparse component: a lookup handle, read inline. */
static double sc_random_get_sparse(int64_t n)
{
    tecs_comp_t sp;
    fixture f = sparse_get_world(n, &sp);
    tecs_handle_t h;
    tecs_err_t err = tecs_handle_init(f.w, sp, &h);
    CHECK(err == TECS_OK, "tecs_handle_init: %s", tecs_strerror(err));
    double s = 0;
    int64_t miss = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Health *v = TECS_HANDLE_GET(&h, f.ids[i], Health);
        if (v)
            s += v->hp;
        else
            miss++;
    }
    double t = (now_ns() - t0) / (double)n;
    check_hp(s, miss, n);
    fx_close(&f);
    return t;
}

/* The same through tecs_get, the checked call. */
static double sc_random_get_sparse_call(int64_t n)
{
    tecs_comp_t sp;
    fixture f = sparse_get_world(n, &sp);
    double s = 0;
    int64_t miss = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Health *v = TECS_GET(f.w, f.ids[i], sp, Health);
        if (v)
            s += v->hp;
        else
            miss++;
    }
    double t = (now_ns() - t0) / (double)n;
    check_hp(s, miss, n);
    fx_close(&f);
    return t;
}

/* random_raw: the lookups of random_get over plain arrays, through a call
** the compiler may not inline, as tecs_get is a library call: the id's slot
** checked against the table's size and the record's generation, then the
** row's Position. The least a lookup by call can do; random_get adds the
** component's column in the entity's archetype and the chunk of the row. */
typedef struct { uint32_t gen, arch, row; } raw_record;   /* 12 bytes, as the library's */
typedef struct { uint32_t n; const raw_record *recs; const Position *pos; } raw_table;

static BENCH_NOINLINE const Position *raw_lookup(const raw_table *t, tecs_entity_t id)
{
    uint32_t i = (uint32_t)id;
    if (i >= t->n)
        return NULL;
    const raw_record *r = &t->recs[i];
    if (r->gen != (uint32_t)(id >> 32))
        return NULL;
    return &t->pos[r->row];
}

static double sc_random_raw(int64_t n)
{
    raw_record *recs = xmalloc((size_t)n * sizeof *recs);
    Position *pos = xmalloc((size_t)n * sizeof *pos);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    for (int64_t i = 0; i < n; i++) {
        recs[i] = (raw_record){ 1, 1, (uint32_t)i };
        pos[i] = (Position){ (float)i, (float)i };
        ids[i] = ((tecs_entity_t)1 << 32) | (uint64_t)i;
    }
    shuffle(ids, n, 0x9E3779B97F4A7C15ULL);
    const raw_table t = { (uint32_t)n, recs, pos };
    double s = 0;
    int64_t miss = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Position *p = raw_lookup(&t, ids[i]);
        if (p)
            s += p->x;
        else
            miss++;
    }
    double dt = (now_ns() - t0) / (double)n;
    CHECK(miss == 0, "%lld lookups failed", (long long)miss);
    CHECK(s == (double)n * (double)(n - 1) / 2, "sum of x %.0f", s);
    free(ids);
    free(pos);
    free(recs);
    return dt;
}

/* add_remove_floor: the moves of add_remove over plain arrays written by
** hand, through a call the compiler may not inline: the id's slot and
** generation checked, the row copied (id, Position, Velocity; Health
** zeroed on an add) to the end of the other table, the hole filled with
** the last row and its record told, then the entity's record. The least
** a table-store move can do with its layout fixed at compile time; the
** library finds its columns, their sizes and chunks at run time. */
typedef struct raw_store {
    tecs_entity_t *ids;
    Position *pos;
    Velocity *vel;
    Health *hp;                 /* NULL in the table without Health         */
    uint32_t count;
} raw_store;

static BENCH_NOINLINE int raw_move(raw_record *recs, uint32_t nrecs, raw_store *t,
                                   tecs_entity_t id, uint32_t to)
{
    uint32_t i = (uint32_t)id;
    if (i >= nrecs || recs[i].gen != (uint32_t)(id >> 32) || recs[i].arch == to)
        return -1;
    raw_record *r = &recs[i];
    raw_store *a = &t[r->arch], *b = &t[to];
    uint32_t src = r->row, dst = b->count++, last = --a->count;
    b->ids[dst] = a->ids[src];
    b->pos[dst] = a->pos[src];
    b->vel[dst] = a->vel[src];
    if (b->hp)
        b->hp[dst] = (Health){ 0 };
    if (src != last) {
        a->ids[src] = a->ids[last];
        a->pos[src] = a->pos[last];
        a->vel[src] = a->vel[last];
        if (a->hp)
            a->hp[src] = a->hp[last];
        recs[(uint32_t)a->ids[src]].row = src;
    }
    r->arch = to;
    r->row = dst;
    return 0;
}

static double sc_add_remove_floor(int64_t n)
{
    raw_record *recs = xmalloc((size_t)n * sizeof *recs);
    raw_store t[2];
    for (int k = 0; k < 2; k++)
        t[k] = (raw_store){ xmalloc((size_t)n * sizeof *t[k].ids),
                            xmalloc((size_t)n * sizeof *t[k].pos),
                            xmalloc((size_t)n * sizeof *t[k].vel),
                            k ? xmalloc((size_t)n * sizeof *t[k].hp) : NULL, 0 };
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    fill_values(t[0].pos, t[0].vel, n);
    for (int64_t i = 0; i < n; i++) {
        ids[i] = ((tecs_entity_t)1 << 32) | (uint64_t)i;
        recs[i] = (raw_record){ 1, 0, (uint32_t)i };
        t[0].ids[i] = ids[i];
    }
    t[0].count = (uint32_t)n;
    int64_t errs = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += raw_move(recs, (uint32_t)n, t, ids[i], 1) != 0;
    int64_t with = t[1].count;
    for (int64_t i = 0; i < n; i++)
        errs += raw_move(recs, (uint32_t)n, t, ids[i], 0) != 0;
    double dt = (now_ns() - t0) / (double)n;
    CHECK(errs == 0 && with == n && t[0].count == n, "%lld failed moves", (long long)errs);
    double s = 0;
    for (int64_t i = 0; i < n; i++)
        s += t[0].pos[recs[i].row].x;
    CHECK(s == (double)n * (double)(n - 1) / 2, "sum of x %.0f", s);
    for (int k = 0; k < 2; k++) {
        free(t[k].ids);
        free(t[k].pos);
        free(t[k].vel);
        free(t[k].hp);
    }
    free(ids);
    free(recs);
    return dt;
}

/* add_remove_generic: the moves of add_remove_floor with the table store's
** layout read at run time, as a library must: a table's columns, their
** count and sizes in arrays, its rows in chunks of GENERIC_ROWS (the
** world's default) whose column pointers a chunk table holds, each value
** copied by its size. Still no hop, no listener and no tick to mind. */
enum { GENERIC_SHIFT = 10, GENERIC_ROWS = 1 << GENERIC_SHIFT, GENERIC_COLS = 4 };

typedef struct generic_store {
    char **cols;                /* chunk k's column j: cols[k * GENERIC_COLS + j];
                                   column 0 the ids                         */
    uint32_t size[GENERIC_COLS];
    int32_t ncols;
    uint32_t count;
} generic_store;

static void generic_copy(void *to, const void *from, uint32_t size)
{
    if (size == 8)
        memcpy(to, from, 8);
    else if (size == 4)
        memcpy(to, from, 4);
    else
        memcpy(to, from, size);
}

static BENCH_NOINLINE int generic_move(raw_record *recs, uint32_t nrecs, generic_store *t,
                                       tecs_entity_t id, uint32_t to)
{
    uint32_t i = (uint32_t)id;
    if (i >= nrecs || recs[i].gen != (uint32_t)(id >> 32) || recs[i].arch == to)
        return -1;
    raw_record *r = &recs[i];
    generic_store *a = &t[r->arch], *b = &t[to];
    uint32_t src = r->row, dst = b->count++, last = --a->count;
    char **sc = a->cols + (size_t)(src >> GENERIC_SHIFT) * GENERIC_COLS;
    char **dc = b->cols + (size_t)(dst >> GENERIC_SHIFT) * GENERIC_COLS;
    size_t si = src & (GENERIC_ROWS - 1), di = dst & (GENERIC_ROWS - 1);
    int32_t same = a->ncols < b->ncols ? a->ncols : b->ncols;
    for (int32_t j = 0; j < same; j++)
        generic_copy(dc[j] + di * b->size[j], sc[j] + si * a->size[j], a->size[j]);
    for (int32_t j = same; j < b->ncols; j++)
        memset(dc[j] + di * b->size[j], 0, b->size[j]);
    if (src != last) {
        char **lc = a->cols + (size_t)(last >> GENERIC_SHIFT) * GENERIC_COLS;
        size_t li = last & (GENERIC_ROWS - 1);
        for (int32_t j = 0; j < a->ncols; j++)
            generic_copy(sc[j] + si * a->size[j], lc[j] + li * a->size[j], a->size[j]);
        tecs_entity_t moved;
        memcpy(&moved, sc[0] + si * sizeof moved, sizeof moved);
        recs[(uint32_t)moved].row = src;
    }
    r->arch = to;
    r->row = dst;
    return 0;
}

static double sc_add_remove_generic(int64_t n)
{
    raw_record *recs = xmalloc((size_t)n * sizeof *recs);
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    int64_t nchunks = n / GENERIC_ROWS + 1;
    generic_store t[2];
    for (int k = 0; k < 2; k++) {
        t[k] = (generic_store){ xmalloc((size_t)nchunks * GENERIC_COLS * sizeof(char *)),
                                { 8, 8, 8, 4 }, 3 + k, 0 };
        for (int64_t c = 0; c < nchunks; c++)
            for (int32_t j = 0; j < t[k].ncols; j++)
                t[k].cols[c * GENERIC_COLS + j] = xmalloc((size_t)GENERIC_ROWS * t[k].size[j]);
    }
    for (int64_t i = 0; i < n; i++) {
        ids[i] = ((tecs_entity_t)1 << 32) | (uint64_t)i;
        recs[i] = (raw_record){ 1, 0, (uint32_t)i };
        char **c = t[0].cols + (i >> GENERIC_SHIFT) * GENERIC_COLS;
        size_t at = (size_t)i & (GENERIC_ROWS - 1);
        memcpy(c[0] + at * 8, &ids[i], 8);
        memcpy(c[1] + at * 8, &(Position){ (float)i, (float)i }, 8);
        memcpy(c[2] + at * 8, &(Velocity){ 1, 1 }, 8);
    }
    t[0].count = (uint32_t)n;
    int64_t errs = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++)
        errs += generic_move(recs, (uint32_t)n, t, ids[i], 1) != 0;
    int64_t with = t[1].count;
    for (int64_t i = 0; i < n; i++)
        errs += generic_move(recs, (uint32_t)n, t, ids[i], 0) != 0;
    double dt = (now_ns() - t0) / (double)n;
    CHECK(errs == 0 && with == n && t[0].count == n, "%lld failed moves", (long long)errs);
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        Position p;
        uint32_t row = recs[i].row;
        memcpy(&p, t[0].cols[(row >> GENERIC_SHIFT) * GENERIC_COLS + 1] +
                       (size_t)(row & (GENERIC_ROWS - 1)) * 8, 8);
        s += p.x;
    }
    CHECK(s == (double)n * (double)(n - 1) / 2, "sum of x %.0f", s);
    for (int k = 0; k < 2; k++) {
        for (int64_t c = 0; c < nchunks; c++)
            for (int32_t j = 0; j < t[k].ncols; j++)
                free(t[k].cols[c * GENERIC_COLS + j]);
        free(t[k].cols);
    }
    free(ids);
    free(recs);
    return dt;
}

static double sc_deferred(int64_t n)
{
    fixture f = fx_world(1);
    tecs_query_t *q = tecs_query_all(f.w, 1, (tecs_comp_t[]){ f.pos });
    tecs_entity_t *ids = xmalloc((size_t)n * sizeof *ids);
    double t0 = now_ns();
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    bool open = tecs_iter_next(&it);
    for (int64_t i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(f.w);
        tecs_set(f.w, e, f.pos, &(Position){ (float)i, (float)i });
        ids[i] = e;
    }
    tecs_iter_fini(&it);
    double t = (now_ns() - t0) / (double)n;
    CHECK(open, "the iteration did not open");
    CHECK(tecs_world_entity_count(f.w) == n + 1, "%d alive", tecs_world_entity_count(f.w));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(f.w, ids[i], f.pos, Position);
        bad += !p || p->x != (float)i || p->y != (float)i;
    }
    CHECK(bad == 0, "%lld entities with wrong values", (long long)bad);
    free(ids);
    fx_close(&f);
    return t;
}

/* ---- memory ------------------------------------------------------------ */

void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
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

/* Bytes per entity, counted by the allocator hook (not timed). The world is
** built the common way: new + set per entity. */
static double sc_memory(int64_t n)
{
    counter c = { 0 };
    fixture f = fx_open(&(tecs_world_desc_t){ .alloc = counting_alloc, .alloc_ud = &c });
    size_t empty = c.live;
    for (int64_t i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(f.w);
        tecs_set(f.w, e, f.pos, &(Position){ (float)i, (float)i });
        tecs_set(f.w, e, f.vel, &(Velocity){ 1, 1 });
    }
    CHECK(tecs_world_entity_count(f.w) == n, "%d alive", tecs_world_entity_count(f.w));
    CHECK(tecs_world_memory(f.w) == c.live, "world says %zu bytes, allocator %zu",
          tecs_world_memory(f.w), c.live);
    double v = (double)(c.live - empty) / (double)n;
    fx_close(&f);
    CHECK(c.live == 0, "%zu bytes left after free", c.live);
    return v;
}

/* ---- the table --------------------------------------------------------- */

enum {
    F_RATIO = 1,                /* iterate family: report ratio to raw      */
    F_ONCE = 2,                 /* deterministic: one repetition is enough  */
    F_SCALING = 4,              /* part of --scaling                        */
    F_PAIR = 8                  /* NAME_1t: the next row is NAME_nt; both
                                   run in turn, and their speed-up is shown */
};

typedef struct scenario {
    const char *name;
    scenario_fn fn;
    int64_t n;                  /* default N                                */
    const char *unit;
    int flags;
} scenario;

#define M 1000000
static const scenario scenarios[] = {
    { "create",       sc_create,       M,      "ns/entity", F_SCALING },
    { "create_bulk",  sc_create_bulk,  M,      "ns/entity", 0 },
    { "clone",        sc_clone,        M,      "ns/entity", 0 },
    { "clone_bulk",   sc_clone_bulk,   M,      "ns/entity", F_RATIO },
    { "instantiate",  sc_instantiate,  M,      "ns/entity", 0 },
    { "instantiate_bulk", sc_instantiate_bulk, M, "ns/entity", 0 },
    { "instantiate_flat", sc_instantiate_flat, M, "ns/entity", F_RATIO },
    { "iterate",      sc_iterate,      M,      "ns/entity", F_RATIO | F_SCALING },
    { "iterate_each", sc_iterate_each, M,      "ns/entity", F_RATIO | F_SCALING },
    { "iterate_each_fn", sc_iterate_each_fn, M, "ns/entity", F_RATIO },
    { "system",       sc_system,       M,      "ns/entity", F_RATIO },
    { "systems_wide", sc_systems_wide, 1 << 18, "ns/entity", F_RATIO },
    { "systems_wide_raw", sc_systems_wide_raw, 1 << 18, "ns/entity", 0 },
#ifdef TECS_BENCH_INSPECT
    { "frame_inspect", sc_frame_inspect, 1 << 18, "ns/entity", F_RATIO },
    { "inspect_entity", sc_inspect_entity, 2000, "us/request", 0 },
#endif
    { "fragmented",   sc_fragmented,   M,      "ns/entity", F_RATIO },
    { "add_remove",   sc_add_remove,   100000, "ns/pair",   0 },
    { "add_remove_floor", sc_add_remove_floor, 100000, "ns/pair", 0 },
    { "add_remove_generic", sc_add_remove_generic, 100000, "ns/pair", 0 },
    { "add_remove_sparse", sc_add_remove_sparse, M, "ns/pair", 0 },
    { "add_remove_sparse_inline", sc_add_remove_sparse_inline, M, "ns/pair", 0 },
    { "add_remove_sparse_call", sc_add_remove_sparse_call, M, "ns/pair", 0 },
    { "destroy",      sc_destroy,      M,      "ns/entity", 0 },
    { "toggle",       sc_toggle,       M,      "ns/pair",   0 },
    { "toggle_inline", sc_toggle_inline, M,    "ns/pair",   0 },
    { "toggle_call",  sc_toggle_call,  M,      "ns/pair",   0 },
    { "toggle_raw",   sc_toggle_raw,   M,      "ns/pair",   0 },
    { "iterate_toggled", sc_iterate_toggled, M, "ns/row",   F_RATIO },
    { "raw_toggled",  sc_raw_toggled,  M,      "ns/row",    0 },
    { "iterate_sparse_term", sc_iterate_sparse_term, M, "ns/row", F_RATIO },
    { "raw_sparse_term", sc_raw_sparse_term, M, "ns/row",   0 },
    { "random_get",   sc_random_get,   M,      "ns/lookup", F_SCALING },
    { "random_get_many", sc_random_get_many, M, "ns/lookup", 0 },
    { "random_get_call", sc_random_get_call, M, "ns/lookup", 0 },
    { "random_get_sparse", sc_random_get_sparse, M, "ns/lookup", 0 },
    { "random_get_sparse_call", sc_random_get_sparse_call, M, "ns/lookup", 0 },
    { "random_raw",   sc_random_raw,   M,      "ns/lookup", 0 },
    { "deferred",     sc_deferred,     100000, "ns/entity", 0 },
    { "raw",          sc_raw,          M,      "ns/entity", F_RATIO | F_SCALING },
    { "memory",       sc_memory,       M,      "B/entity",  F_ONCE },
    { "where_eq",     sc_where_eq,     M,      "ns/lookup", 0 },
    { "where_range",  sc_where_range,  M,      "ns/result", 0 },
    { "where_scan",   sc_where_scan,   M,      "ns/result", 0 },
    { "where_radius", sc_where_radius, M,      "ns/result", 0 },
    { "where_range_floor", sc_where_range_floor, M, "ns/result", 0 },
    { "where_radius_floor", sc_where_radius_floor, M, "ns/result", 0 },
    { "where_small",  sc_where_small,  100000, "ns/query",  0 },
    { "neighbours",   sc_neighbours,   10000,  "ns/point",  F_RATIO },
    { "neighbours_where", sc_neighbours_where, 10000, "ns/point", F_RATIO },
    { "neighbours_raw", sc_neighbours_raw, 10000, "ns/point", 0 },
    { "set",          sc_set,          M,      "ns/set",    0 },
    { "set_indexed",  sc_set_indexed,  M,      "ns/set",    0 },
    { "set_hashed",   sc_set_indexed_hash, M,  "ns/set",    0 },
    { "save",         sc_save,         M,      "ns/entity", 0 },
    { "load",         sc_load,         M,      "ns/entity", 0 },
    { "snap_memcpy",  sc_snap_memcpy,  M,      "ns/entity", 0 },
    { "delta_save",   sc_delta_save,   M,      "ns/changed", 0 },
    { "delta_apply",  sc_delta_apply,  M,      "ns/changed", 0 },
    { "child_new",    sc_child_new,    M,      "ns/entity", 0 },
    { "reparent",     sc_reparent,     M,      "ns/reparent", 0 },
    { "subtree_destroy", sc_subtree_destroy, M, "ns/entity", 0 },
    { "children",     sc_children,     M,      "ns/child",  0 },
    { "memory_childof_wide", sc_memory_childof_wide, M, "B/entity", F_ONCE | F_RATIO },
    { "memory_childof_wide_plain", sc_memory_childof_wide_plain, M, "B/entity", F_ONCE },
    { "memory_childof_10", sc_memory_childof_10, M, "B/entity", F_ONCE | F_RATIO },
    { "memory_childof_10_plain", sc_memory_childof_10_plain, M, "B/entity", F_ONCE },
    { "cascade",      sc_cascade,      1111111, "ns/node",  F_RATIO },
    { "cascade_raw",  sc_cascade_raw,  1111111, "ns/node",  0 },
    { "get_inherited", sc_get_inherited, M,    "ns/read",   F_RATIO },
    { "iterate_inherited", sc_iterate_inherited, M, "ns/entity", F_RATIO },
    { "iterate_inherited_raw", sc_iterate_inherited_raw, M, "ns/entity", 0 },
    { "memory_inherited", sc_memory_inherited, M, "B/entity", F_ONCE },
    { "heavy_1t",     sc_heavy_1t,     M,      "ns/entity", F_PAIR },
    { "heavy_nt",     sc_heavy_nt,     M,      "ns/entity", 0 },
    { "heavy_raw",    sc_heavy_raw,    M,      "ns/entity", 0 },
    { "light_1t",     sc_light_1t,     M,      "ns/entity", F_PAIR },
    { "light_nt",     sc_light_nt,     M,      "ns/entity", 0 },
    { "tiny_1t",      sc_tiny_1t,      50000,  "ns/frame",  F_PAIR },
    { "tiny_nt",      sc_tiny_nt,      50000,  "ns/frame",  0 },
    { "disjoint_1t",  sc_disjoint_1t,  M,      "ns/entity", F_PAIR },
    { "disjoint_nt",  sc_disjoint_nt,  M,      "ns/entity", 0 },
};
#define NSCEN ((int)(sizeof scenarios / sizeof scenarios[0]))

/* ---- running and reporting --------------------------------------------- */

typedef struct options {
    int reps;                   /* timed repetitions after the warm-up      */
    bool quick, scaling;
    const char *csv;
    const char *only;           /* comma-separated names, or NULL           */
    int64_t n;                  /* --n: N for every scenario (profiling)    */
} options;

static FILE *g_csv;

/* Repetitions for n: fewer for big worlds, more for tiny ones. */
static int reps_for(const options *o, const scenario *s, int64_t n)
{
    if (s->flags & F_ONCE)
        return 1;
    int r = o->reps;
    if (n >= 10 * M)
        r = r > 3 ? 3 : r;
    else if (n <= 10000)
        r *= 3;
    return r;
}

/* A figure: the median value, and for the iterate family the median of
** per-repetition ratios to a raw run made right after each repetition (so
** a change in the machine's load between scenarios cannot skew them). */
typedef struct result { double value, ratio; } result;

/* The raw loop a ratio row is compared with: `raw`, or for a row over
** some of the rows only, those rows by hand. */
static scenario_fn raw_of(const scenario *s)
{
    static const struct { scenario_fn row, raw; } own[] = {
        { sc_iterate_toggled, sc_raw_toggled },
        { sc_iterate_sparse_term, sc_raw_sparse_term },
        { sc_systems_wide, sc_systems_wide_raw },
        { sc_neighbours, sc_neighbours_raw },
        { sc_neighbours_where, sc_neighbours_raw },
        { sc_memory_childof_wide, sc_memory_childof_wide_plain },
        { sc_memory_childof_10, sc_memory_childof_10_plain },
        { sc_cascade, sc_cascade_raw },
        { sc_clone_bulk, sc_create_bulk },
        { sc_get_inherited, sc_random_get },
        { sc_iterate_inherited, sc_iterate_inherited_raw },
        { sc_instantiate_flat, sc_create_bulk },
#ifdef TECS_BENCH_INSPECT
        { sc_frame_inspect, sc_systems_wide },
#endif
    };
    for (size_t k = 0; k < sizeof own / sizeof own[0]; k++)
        if (own[k].row == s->fn)
            return own[k].raw;
    return sc_raw;
}

static result run(const options *o, const scenario *s, int64_t n)
{
    double v[128], q[128];
    int reps = reps_for(o, s, n);
    bool ratio = (s->flags & F_RATIO) && s->fn != sc_raw;
    g_current = s->name;
    if (!(s->flags & F_ONCE))
        s->fn(n);       /* warm-up: caches, heap, branch predictors */
    for (int r = 0; r < reps; r++) {
        v[r] = s->fn(n);
        q[r] = ratio ? v[r] / raw_of(s)(n) : 1.0;
    }
    return (result){ median(v, reps), (s->flags & F_RATIO) ? median(q, reps) : 0 };
}

static void report(const scenario *s, int64_t n, result res)
{
    char ratio[32] = "";
    double value = res.value;
    if (s->flags & F_RATIO)
        snprintf(ratio, sizeof ratio, "%.3f", res.ratio);
    printf("%-16s %10lld %10.3f  %-10s %8s\n", s->name, (long long)n, value, s->unit,
           ratio[0] ? ratio : "");
    fflush(stdout);
    if (g_csv)
        fprintf(g_csv, "%s,%lld,%.4f,%s,%s\n", s->name, (long long)n, value, s->unit, ratio);
}

/* The speed-up (1t / nt) each pair is to reach with 2 cores or more (issue
** 22's targets); tiny's threads may cost at most a fifth more. */
static const struct { const char *pair; double min; } targets[] = {
    { "heavy", 1.85 }, { "light", 1.6 }, { "tiny", 1 / 1.2 }, { "disjoint", 1.7 },
};

/* The speed-up row of pair s (its NAME_1t row): NAME_speedup, 1t / nt. */
static void report_speedup(const scenario *s, int64_t n, double x)
{
    int len = (int)(strlen(s->name) - strlen("_1t"));
    double min = 0;
    for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++)
        if ((int)strlen(targets[k].pair) == len && strncmp(targets[k].pair, s->name, len) == 0)
            min = targets[k].min;
    char name[32];
    snprintf(name, sizeof name, "%.*s_speedup", len, s->name);
    printf("%-16s %10lld %10.3f  %-10s %8s  %d threads; target >= %.2f%s\n", name,
           (long long)n, x, "1t/nt", "", (int)tecs_cpu_count(), min,
           tecs_cpu_count() < 2 ? " (one core: no target)" : x >= min ? "" : ": MISSED");
    fflush(stdout);
    if (g_csv)
        fprintf(g_csv, "%s,%lld,%.4f,%s,\n", name, (long long)n, x, "1t/nt");
}

/* A pair: NAME_1t (s) and NAME_nt (s + 1), in turn in each repetition (the
** one to go first alternates), so both see the same machine; the speed-up
** is the median of the per-repetition ratios, as ratios to raw are. */
static void run_pair(const options *o, const scenario *s, int64_t n)
{
    const scenario *p[2] = { s, s + 1 };
    double v[2][128], q[128];
    int reps = reps_for(o, s, n);
    for (int k = 0; k < 2; k++) {
        g_current = p[k]->name;
        p[k]->fn(n);    /* warm-up */
    }
    for (int r = 0; r < reps; r++) {
        for (int j = 0; j < 2; j++) {
            int k = (r + j) % 2;
            g_current = p[k]->name;
            v[k][r] = p[k]->fn(n);
        }
        q[r] = v[0][r] / v[1][r];
    }
    for (int k = 0; k < 2; k++)
        report(p[k], n, (result){ median(v[k], reps), 0 });
    report_speedup(s, n, median(q, reps));
}

static const scenario *find(const char *name, size_t len)
{
    for (int i = 0; i < NSCEN; i++)
        if (strlen(scenarios[i].name) == len && strncmp(scenarios[i].name, name, len) == 0)
            return &scenarios[i];
    return NULL;
}

static bool selected(const options *o, const scenario *s)
{
    if (o->only == NULL)
        return true;
    for (const char *p = o->only; *p;) {
        size_t len = strcspn(p, ",");
        if (find(p, len) == s)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void run_table(const options *o)
{
    for (int i = 0; i < NSCEN; i++) {
        const scenario *s = &scenarios[i];
        int64_t n = o->n ? o->n : s->n;
        if ((s->flags & F_PAIR) && selected(o, s) && selected(o, s + 1))
            run_pair(o, s, n), i++;
        else if (selected(o, s))
            report(s, n, run(o, s, n));
    }
}

static void run_scaling(const options *o)
{
    static const int64_t sizes[] = { 1000, 10000, 100000, 1000000, 10000000 };
    int nsizes = o->quick ? 4 : 5;
    for (int k = 0; k < nsizes; k++) {
        int64_t n = sizes[k];
        for (int i = 0; i < NSCEN; i++) {
            const scenario *s = &scenarios[i];
            if ((s->flags & F_SCALING) && selected(o, s))
                report(s, n, run(o, s, n));
        }
    }
}

static void usage(void)
{
    fprintf(stderr,
            "usage: tinyecs_bench [--quick] [--scaling] [--csv FILE] [--only NAME[,NAME]]\n"
            "                     [--reps K] [--n N] [--rows R] [--cpu]\n"
            "  --reps K  timed repetitions (default 11, --quick 3)\n"
            "  --n N     the same N for every scenario (for profiling)\n"
            "  --rows R  rows per chunk of every world (default: the library's)\n"
            "  --cpu     time with this thread's CPU clock, not the wall clock (POSIX)\n"
            "            (on a shared machine: time spent descheduled is left out)\n"
            "scenarios:");
    for (int i = 0; i < NSCEN; i++)
        fprintf(stderr, " %s", scenarios[i].name);
    fputc('\n', stderr);
    exit(2);
}

static options parse(int argc, char **argv)
{
    options o = { .reps = 11 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0)
            o.quick = true;
        else if (strcmp(a, "--scaling") == 0)
            o.scaling = true;
        else if (strcmp(a, "--csv") == 0 && i + 1 < argc)
            o.csv = argv[++i];
        else if (strcmp(a, "--only") == 0 && i + 1 < argc)
            o.only = argv[++i];
        else if (strcmp(a, "--cpu") == 0 && BENCH_CPU_CLOCK)
            g_cpu_clock = true;
        else if (strcmp(a, "--rows") == 0 && i + 1 < argc)
            g_rows = atoi(argv[++i]);
        else if (strcmp(a, "--n") == 0 && i + 1 < argc)
            o.n = atoll(argv[++i]);
        else if (strcmp(a, "--reps") == 0 && i + 1 < argc)
            o.reps = atoi(argv[++i]);
        else
            usage();
    }
    if (o.quick)
        o.reps = 3;
    if (o.reps < 1 || o.reps > 40 || o.n < 0 || o.n > 100 * M)
        usage();
    for (const char *p = o.only; p && *p;) {
        size_t len = strcspn(p, ",");
        if (find(p, len) == NULL) {
            fprintf(stderr, "unknown scenario '%.*s'\n", (int)len, p);
            usage();
        }
        p += len + (p[len] == ',');
    }
    return o;
}

#if defined(__OPTIMIZE__) && defined(NDEBUG) && defined(BENCH_NATIVE)
#define BUILD_NOTE "release build (make bench BENCH_NATIVE=1: -O3 -march=native)"
#elif defined(__OPTIMIZE__) && defined(NDEBUG)
#define BUILD_NOTE "release build (make bench: -O3, no -march=native)"
#else
#define BUILD_NOTE "NOT a release build: figures mean nothing"
#endif

static void header(const options *o)
{
    const char *tun = getenv("GLIBC_TUNABLES");
    bool warm = tun && strstr(tun, "mmap_max=0") && strstr(tun, "trim_threshold");
    printf("tinyecs %d.%d.%d bench: %s, heap %s, " BUILD_NOTE ", "
           "median of %d reps after a warm-up, iterate: median of %d passes",
           TECS_VERSION_MAJOR, TECS_VERSION_MINOR, TECS_VERSION_PATCH,
           o->scaling ? "scaling" : o->quick ? "quick" : "full",
           warm ? "warm (GLIBC_TUNABLES keeps freed memory mapped)"
                : "cold (first touch of each page is paid)",
           o->reps, g_passes);
    if (g_rows)
        printf(", %d rows per chunk", (int)g_rows);
    printf(", %s", g_cpu_clock ? "thread CPU clock" : "wall clock");
    printf(", NAME_nt rows: %d threads", (int)tecs_cpu_count());
    printf("\n");
    printf("%-16s %10s %10s  %-10s %8s\n", "scenario", "n", "value", "unit", "x raw");
}

int main(int argc, char **argv)
{
    options o = parse(argc, argv);
    if (o.csv) {
        g_csv = fopen(o.csv, "w");
        if (g_csv == NULL) {
            perror(o.csv);
            return 2;
        }
        fprintf(g_csv, "scenario,n,value,unit,ratio_to_raw\n");
    }
    header(&o);
    double w0 = tecs_time_now();
    if (o.scaling)
        run_scaling(&o);
    else
        run_table(&o);
    printf("total %.1f s%s\n", tecs_time_now() - w0,
           g_failed ? "; SOME RESULT CHECKS FAILED" : "");
    if (g_csv)
        fclose(g_csv);
    return g_failed ? 1 : 0;
}
