/*
** bench_index.c — the index rows: where_eq (unique hash lookups),
** where_range (an ordered range read through tecs_query_where), where_scan
** (the same range by scanning the query), where_radius (spatial), and set,
** set_indexed, set_hashed (tecs_set of a field with no index, an ordered
** one, a hash one). Each is a scenario as bench.h describes; bench.c lists
** them in its table.
*/
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct NetKey { int64_t key; } NetKey;

/* n entities with Position and Health, hp a shuffled 0..n-1. */
typedef struct ifix {
    tecs_world_t *w;
    tecs_comp_t pos, hp;
    tecs_query_t *q;            /* Position (read), Health (read)           */
} ifix;

static void ifix_init(ifix *f, int64_t n)
{
    f->w = tecs_world_new();
    f->pos = tecs_component_new(f->w, &(tecs_component_desc_t){
        .name = "Position", .size = sizeof(Position), .align = _Alignof(Position) });
    f->hp = tecs_component_new(f->w, &(tecs_component_desc_t){
        .name = "Health", .size = sizeof(Health), .align = _Alignof(Health) });
    tecs_archetype_t *a = tecs_archetype_get(f->w, 2, (tecs_comp_t[]){ f->pos, f->hp });
    Position *p = malloc((size_t)n * sizeof *p);
    Health *h = malloc((size_t)n * sizeof *h);
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)i, 1 };
        h[i].hp = (int)i;
    }
    uint64_t seed = 12345;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_next(&seed) % (uint64_t)(i + 1));
        int t = h[i].hp;
        h[i].hp = h[j].hp;
        h[j].hp = t;
    }
    tecs_new_bulk(f->w, a, (int32_t)n, NULL, 2,
                  (tecs_value_t[]){ { f->pos, p }, { f->hp, h } });
    free(p);
    free(h);
    f->q = tecs_query_new(f->w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = f->pos, .access = TECS_READ },
                                  { .comp = f->hp, .access = TECS_READ } },
        .term_count = 2 });
}

/* where_eq: a unique hash index on an int key, one key -> one entity. */
double sc_where_eq(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "NetKey", .size = sizeof(NetKey), .align = _Alignof(NetKey) });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &c);
    NetKey *k = malloc((size_t)n * sizeof *k);
    for (int64_t i = 0; i < n; i++)
        k[i].key = i * 7919;
    tecs_new_bulk(w, a, (int32_t)n, NULL, 1, (tecs_value_t[]){ { c, k } });
    free(k);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = c, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I64, .unique = true });
    int64_t lookups = 1000000, found = 0;
    uint64_t seed = 99;
    double t0 = now_ns();
    for (int64_t i = 0; i < lookups; i++)
        found += tecs_index_lookup(x, tecs_key_int((int64_t)(rng_next(&seed) % (uint64_t)n)
                                                   * 7919)) != 0;
    double t = now_ns() - t0;
    CHECK(found == lookups, "found %lld", (long long)found);
    tecs_world_free(w);
    return t / (double)lookups;
}

/* The range [lo, lo + n/100) read through the index: results and sum. */
static int64_t range_pass(ifix *f, tecs_filter_t *flt, double *sum)
{
    int64_t k = 0;
    tecs_iter_t it = tecs_query_where(f->q, flt);
    while (tecs_iter_next(&it)) {
        const Position *p = tecs_field(&it, 0);
        for (int32_t i = 0; i < it.count; i++)
            *sum += p[i].x;
        k += it.count;
    }
    return k;
}

/* where_range: ordered index on Health.hp, a 1% range, reading Position. */
double sc_where_range(int64_t n)
{
    ifix f;
    ifix_init(&f, n);
    tecs_index_t *x = tecs_index_new(f.w, &(tecs_index_desc_t){
        .comp = f.hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    int64_t width = n / 100 > 0 ? n / 100 : 1, total = 0;
    double sum = 0, t = 0;
    for (int rep = 0; rep < 20; rep++) {
        int64_t lo = (n - width) * rep / 20;
        tecs_filter_t *flt = tecs_filter_new(f.w);
        tecs_filter_between(flt, x, tecs_key_int(lo), tecs_key_int(lo + width - 1));
        double t0 = now_ns();
        int64_t k = range_pass(&f, flt, &sum);
        t += now_ns() - t0;
        CHECK(k == width, "results %lld", (long long)k);
        total += k;
        tecs_filter_free(flt);
    }
    CHECK(sum > 0, "sum");
    tecs_world_free(f.w);
    return t / (double)total;
}

/* where_scan: the same predicate by scanning the query. */
double sc_where_scan(int64_t n)
{
    ifix f;
    ifix_init(&f, n);
    int64_t width = n / 100 > 0 ? n / 100 : 1, total = 0;
    double sum = 0, t = 0;
    for (int rep = 0; rep < 20; rep++) {
        int lo = (int)((n - width) * rep / 20), hi = lo + (int)width - 1;
        int64_t k = 0;
        double t0 = now_ns();
        tecs_iter_t it = tecs_query_iter(f.q);
        while (tecs_iter_next(&it)) {
            const Position *p = tecs_field(&it, 0);
            const Health *h = tecs_field(&it, 1);
            for (int32_t i = 0; i < it.count; i++)
                if (h[i].hp >= lo && h[i].hp <= hi) {
                    sum += p[i].x;
                    k++;
                }
        }
        t += now_ns() - t0;
        CHECK(k == width, "results %lld", (long long)k);
        total += k;
    }
    CHECK(sum > 0, "sum");
    tecs_world_free(f.w);
    return t / (double)total;
}

/* where_radius: n points uniform in a square, radius queries of ~100. */
double sc_where_radius(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Position", .size = sizeof(Position), .align = _Alignof(Position) });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    Position *p = malloc((size_t)n * sizeof *p);
    uint64_t seed = 7;
    float side = 1000.0f;
    for (int64_t i = 0; i < n; i++)
        p[i] = (Position){ (float)(rng_next(&seed) % 1000000) / 1e6f * side,
                           (float)(rng_next(&seed) % 1000000) / 1e6f * side };
    tecs_new_bulk(w, a, (int32_t)n, NULL, 1, (tecs_value_t[]){ { pos, p } });
    free(p);
    /* ~100 points: pi r^2 n / side^2 = 100. */
    double root = 1;
    while (root * root < (double)n)
        root += 1;
    float r = side * 0.5642f * 10.0f / (float)root;
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset_y = offsetof(Position, y), .cell_size = r });
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = pos, .access = TECS_READ } }, .term_count = 1 });
    int64_t total = 0;
    double t = 0, sum = 0;
    for (int rep = 0; rep < 200; rep++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_radius(f, x, (float)(rng_next(&seed) % 800 + 100),
                           (float)(rng_next(&seed) % 800 + 100), r);
        double t0 = now_ns();
        tecs_iter_t it = tecs_query_where(q, f);
        while (tecs_iter_next(&it)) {
            const Position *ps = tecs_field(&it, 0);
            for (int32_t i = 0; i < it.count; i++)
                sum += ps[i].x;
            total += it.count;
        }
        t += now_ns() - t0;
        tecs_filter_free(f);
    }
    CHECK(total > 200 * 50 && sum > 0, "results %lld", (long long)total);
    tecs_world_free(w);
    return t / (double)total;
}

/* n tecs_set calls on Health.hp: kind < 0 not indexed, else an index. */
static double set_run(int64_t n, int kind)
{
    ifix f;
    ifix_init(&f, n);
    tecs_index_t *x = kind < 0 ? NULL : tecs_index_new(f.w, &(tecs_index_desc_t){
        .comp = f.hp, .kind = (tecs_index_kind_t)kind, .type = TECS_KEY_I32 });
    tecs_entity_t *ids = malloc((size_t)n * sizeof *ids);
    CHECK(tecs_query_collect(f.q, ids, (int32_t)n) == n, "collect");
    uint64_t seed = 3;
    int64_t sets = n < 1000000 ? n : 1000000;
    double t0 = now_ns();
    for (int64_t i = 0; i < sets; i++) {
        Health h = { (int)(rng_next(&seed) % (uint64_t)n) };
        tecs_set(f.w, ids[rng_next(&seed) % (uint64_t)n], f.hp, &h);
    }
    /* One use of the index inside the timing: a re-key it put off (a burst
    ** is left to a rebuild at the next use) is paid here. */
    CHECK(x == NULL || tecs_index_count(x) == n, "index count");
    double t = now_ns() - t0;
    free(ids);
    tecs_world_free(f.w);
    return t / (double)sets;
}

double sc_set(int64_t n)
{
    return set_run(n, -1);
}

/* set_indexed: the field has an ordered index (the costliest to keep). */
double sc_set_indexed(int64_t n)
{
    return set_run(n, TECS_INDEX_ORDERED);
}

/* set_hashed: the same with a hash index. */
double sc_set_indexed_hash(int64_t n)
{
    return set_run(n, TECS_INDEX_HASH);
}
