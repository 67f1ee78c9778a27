/*
** bench_store.c — the rows of the stores that change without a move:
** enableable components (toggle, toggle_inline, toggle_call, iterate_toggled)
** and a sparse term (iterate_sparse_term), each beside the loop a user
** would write by hand over the same data (toggle_raw, raw_toggled,
** raw_sparse_term).
*/
#include "bench.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a run: iterate_toggled disables every other run of RUN rows. */
#define RUN 8

enum { PASSES = 20 };

/* A world of n entities with Position (i, i) and Velocity (1, 1), Velocity
** enableable if asked; ids into *ids (the caller frees them). */
static tecs_world_t *pv_world(int64_t n, bool enableable, tecs_comp_t *pos, tecs_comp_t *vel,
                              tecs_entity_t **ids)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    *pos = TECS_COMPONENT(w, Position);
    *vel = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Velocity",
        .size = sizeof(Velocity), .align = _Alignof(Velocity), .enableable = enableable });
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ *pos, *vel });
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    fill_values(p, v, n);
    *ids = xmalloc((size_t)n * sizeof **ids);
    tecs_err_t err = tecs_new_bulk(w, a, (int32_t)n, *ids, 2,
                                   (tecs_value_t[]){ { *pos, p }, { *vel, v } });
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    free(p);
    free(v);
    return w;
}

/* How toggle_pairs toggles: tecs_handle_enable_many on batches of TOGGLE_BATCH
** ids, tecs_handle_enable per id, or tecs_enable per id. */
typedef enum toggle_form { TOGGLE_MANY, TOGGLE_INLINE, TOGGLE_CALL } toggle_form;

enum { TOGGLE_BATCH = 256 };

/* Every entity's component enabled or disabled, ids in order, one way:
** the number of failed calls. */
static int64_t toggle_all(tecs_world_t *w, tecs_comp_t vel, const tecs_handle_t *hp,
                          const tecs_entity_t *ids, int64_t n, toggle_form form, bool on)
{
    int64_t errs = 0;
    const tecs_handle_t hl = *hp;       /* a local copy: its fields stay in registers */
    switch (form) {
    case TOGGLE_MANY:
        for (int64_t i = 0; i < n; i += TOGGLE_BATCH) {
            int32_t k = n - i < TOGGLE_BATCH ? (int32_t)(n - i) : TOGGLE_BATCH;
            errs += tecs_handle_enable_many(&hl, ids + i, k, on, NULL) != TECS_OK;
        }
        break;
    case TOGGLE_INLINE:
        for (int64_t i = 0; i < n; i++)
            errs += tecs_handle_enable(&hl, ids[i], on) != TECS_OK;
        break;
    case TOGGLE_CALL:
        for (int64_t i = 0; i < n; i++)
            errs += tecs_enable(w, ids[i], vel, on) != TECS_OK;
        break;
    }
    return errs;
}

/* A disable + enable pair on every entity, ids in order: ns per pair. */
static double toggle_pairs(int64_t n, toggle_form form)
{
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = pv_world(n, true, &pos, &vel, &ids);
    tecs_query_t *q = tecs_query_all(w, 1, &vel);
    tecs_handle_t h;
    int64_t errs = tecs_handle_init(w, vel, &h) != TECS_OK;
    double t0 = now_ns();
    errs += toggle_all(w, vel, &h, ids, n, form, false);
    double t1 = now_ns();
    int32_t off = tecs_query_count(q);
    double t2 = now_ns();
    errs += toggle_all(w, vel, &h, ids, n, form, true);
    double t = (now_ns() - t2 + t1 - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    CHECK(off == 0, "%d enabled after disabling all", off);
    CHECK(tecs_query_count(q) == n, "%d enabled after enabling all", tecs_query_count(q));
    free(ids);
    tecs_world_free(w);
    return t;
}

/* toggle: disable, then enable, every entity through tecs_handle_enable_many. */
double sc_toggle(int64_t n)
{
    return toggle_pairs(n, TOGGLE_MANY);
}

/* toggle_inline: the same through tecs_handle_enable, one id at a time. */
double sc_toggle_inline(int64_t n)
{
    return toggle_pairs(n, TOGGLE_INLINE);
}

/* toggle_call: the same through tecs_enable. */
double sc_toggle_call(int64_t n)
{
    return toggle_pairs(n, TOGGLE_CALL);
}

/* toggle_raw: the floor of toggle, the loop a user would write over plain
** arrays: id -> a record of 12 bytes {generation, archetype, row} as the
** world keeps them, checked by generation, then the row's bit flipped in a
** bit array laid out as a chunk group's bit column (a bit a row, 64 rows a
** word, set while disabled) if it differs, counted in an int. */
typedef struct raw_rec { uint32_t gen, arch, row; } raw_rec;

static int raw_flip(const raw_rec *recs, uint64_t *bits, const tecs_entity_t *ids, int64_t n,
                    bool enable)
{
    int flipped = 0;
    for (int64_t i = 0; i < n; i++) {
        const raw_rec *r = &recs[TECS_ENTITY_INDEX(ids[i])];
        if (r->gen != TECS_ENTITY_GENERATION(ids[i]))
            continue;
        uint64_t *word = bits + (r->row >> 6), bit = (uint64_t)1 << (r->row & 63);
        if (((*word & bit) != 0) == enable) {
            *word ^= bit;
            flipped++;
        }
    }
    return flipped;
}

double sc_toggle_raw(int64_t n)
{
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = pv_world(n, true, &pos, &vel, &ids);
    raw_rec *recs = xmalloc((size_t)n * sizeof *recs);
    uint64_t *bits = xmalloc(((size_t)n + 63) / 64 * sizeof *bits);
    memset(bits, 0, ((size_t)n + 63) / 64 * sizeof *bits);
    for (int64_t i = 0; i < n; i++)
        recs[TECS_ENTITY_INDEX(ids[i])] = (raw_rec){ TECS_ENTITY_GENERATION(ids[i]), 1,
                                                     (uint32_t)i };
    double t0 = now_ns();
    int off = raw_flip(recs, bits, ids, n, false);
    int on = raw_flip(recs, bits, ids, n, true);
    double t = (now_ns() - t0) / (double)n;
    CHECK(off == n && on == n, "%d disabled, %d enabled of %lld", off, on, (long long)n);
    free(bits);
    free(recs);
    free(ids);
    tecs_world_free(w);
    return t;
}

/* The median over PASSES passes of p += v through q (after one untimed
** pass), per row of the `rows` it hands out. */
static double time_query(tecs_query_t *q, int64_t rows)
{
    double t[PASSES];
    pass_chunks(q);
    for (int k = 0; k < PASSES; k++) {
        double t0 = now_ns();
        pass_chunks(q);
        t[k] = (now_ns() - t0) / (double)rows;
    }
    return median(t, PASSES);
}

/* Row i's x after the passes: moved PASSES + 1 times if the passes took
** it, else where it began. */
static void check_x(tecs_world_t *w, tecs_comp_t pos, const tecs_entity_t *ids, int64_t n,
                    bool (*taken)(int64_t i))
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(w, ids[i], pos, Position);
        bad += p == NULL || p->x != (float)i + (taken(i) ? PASSES + 1 : 0);
    }
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
}

/* iterate_toggled's rows: the first of every two runs of RUN. */
static bool enabled_row(int64_t i)
{
    return !((i / RUN) & 1);
}

static int64_t enabled_rows(int64_t n)
{
    return (n / (2 * RUN)) * RUN + (n % (2 * RUN) < RUN ? n % (2 * RUN) : RUN);
}

/* iterate_toggled: p += v over a query whose Velocity is disabled in every
** other run of RUN rows: ns per enabled row (the median of PASSES passes). */
double sc_iterate_toggled(int64_t n)
{
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = pv_world(n, true, &pos, &vel, &ids);
    for (int64_t i = 0; i < n; i++)
        if (!enabled_row(i))
            tecs_enable(w, ids[i], vel, false);
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    int64_t on = tecs_query_count(q);
    CHECK(on == enabled_rows(n), "%lld rows enabled", (long long)on);
    double t = time_query(q, on);
    check_x(w, pos, ids, n, enabled_row);
    free(ids);
    tecs_world_free(w);
    return t;
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
    tecs_comp_t pos, vel;
    tecs_entity_t *ids;
    tecs_world_t *w = pv_world(n, false, &pos, &vel, &ids);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Marked",
                                         .storage = TECS_STORAGE_SPARSE });
    int64_t on = 0;
    for (int64_t i = 0; i < n; i++)
        if (tagged(i))
            on += tecs_add(w, ids[i], tag) == TECS_OK;
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos }, { .comp = vel, .access = TECS_READ },
                                 { .comp = tag, .access = TECS_FILTER });
    CHECK(tecs_query_count(q) == on, "%d rows match, %lld tagged", tecs_query_count(q),
          (long long)on);
    double t = time_query(q, on);
    check_x(w, pos, ids, n, tagged);
    free(ids);
    tecs_world_free(w);
    return t;
}

/* The raw loops: the same rows by hand, over two plain arrays. */

static BENCH_NOINLINE void pass_runs(Position *restrict p, const Velocity *restrict v,
                                     int64_t n)
{
    for (int64_t i = 0; i < n; i += 2 * RUN)
        integrate(p + i, v + i, (int32_t)(n - i < RUN ? n - i : RUN));
}

static BENCH_NOINLINE void pass_listed(Position *restrict p, const Velocity *restrict v,
                                       const int32_t *rows, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        p[rows[k]].x += v[rows[k]].x;
        p[rows[k]].y += v[rows[k]].y;
    }
}

/* n values of size bytes, 64-byte aligned as a chunk's columns are: a run
** of 8 rows is then one cache line here as there (malloc's 16-byte
** alignment would spread it over two, and the raw loop would read every
** line where the iteration reads half of them).
** The block is xmalloc's, 64 bytes larger; the pointer xmalloc gave sits
** just below the one handed out, for free_lines (aligned_alloc is missing
** from the C runtime of Windows). */
static void *xmalloc_lines(int64_t n, size_t size)
{
    char *raw = xmalloc((size_t)n * size + 64 + sizeof(void *));
    uintptr_t at = ((uintptr_t)raw + sizeof(void *) + 63) & ~(uintptr_t)63;
    memcpy((char *)at - sizeof(void *), &raw, sizeof raw);
    return (void *)at;
}

static void free_lines(void *p)
{
    void *raw;
    memcpy(&raw, (char *)p - sizeof(void *), sizeof raw);
    free(raw);
}

/* A raw loop's figure: PASSES passes after an untimed one, ns per row of
** the `on` the rows list holds (NULL: iterate_toggled's runs), x checked. */
static double time_raw(int64_t n, const int32_t *rows, int64_t on, bool (*taken)(int64_t i))
{
    Position *p = xmalloc_lines(n, sizeof *p);
    Velocity *v = xmalloc_lines(n, sizeof *v);
    fill_values(p, v, n);
    double t[PASSES];
    for (int k = -1; k < PASSES; k++) {
        double t0 = now_ns();
        if (rows)
            pass_listed(p, v, rows, on);
        else
            pass_runs(p, v, n);
        if (k >= 0)
            t[k] = (now_ns() - t0) / (double)on;
    }
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        bad += p[i].x != (float)i + (taken(i) ? PASSES + 1 : 0);
    CHECK(bad == 0, "%lld rows with a wrong x", (long long)bad);
    free_lines(p);
    free_lines(v);
    return median(t, PASSES);
}

/* raw_toggled: ns per row of iterate_toggled's rows by hand. */
double sc_raw_toggled(int64_t n)
{
    return time_raw(n, NULL, enabled_rows(n), enabled_row);
}

/* raw_sparse_term: ns per row of iterate_sparse_term's rows by hand,
** through the list of the rows that hold the tag. */
double sc_raw_sparse_term(int64_t n)
{
    int32_t *rows = xmalloc((size_t)n * sizeof *rows);
    int64_t on = 0;
    for (int64_t i = 0; i < n; i++)
        if (tagged(i))
            rows[on++] = (int32_t)i;
    double t = time_raw(n, rows, on, tagged);
    free(rows);
    return t;
}
