/*
** bench_index.c — the index rows: where_eq (unique hash lookups),
** where_range (an ordered range read through tecs_iter of a where), where_scan
** (the same range by scanning the query), where_radius (spatial), their
** floors where_range_floor and where_radius_floor (the reads a where result
** needs, over plain arrays), and set,
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
#include "tinyecs/index.h"

typedef struct NetKey { int64_t key; } NetKey;

/* n entities with Position and Health, hp a shuffled 0..n-1. */
typedef struct ifix {
    tecs_world_t *w;
    tecs_comp_t pos, hp;
    tecs_query_t *q;            /* Position (read), Health (read)           */
} ifix;

/* The values of ifix's rows: Position (i, 1), hp a shuffle of 0..n-1. */
static void ifix_values(Position *p, Health *h, int64_t n)
{
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
}

static void ifix_init(ifix *f, int64_t n)
{
    f->w = tecs_world_new();
    f->pos = tecs_component_new(f->w, &(tecs_component_desc_t){
        .name = "Position", .size = sizeof(Position), .align = _Alignof(Position) });
    f->hp = tecs_component_new(f->w, &(tecs_component_desc_t){
        .name = "Health", .size = sizeof(Health), .align = _Alignof(Health) });
    tecs_archetype_t *a = tecs_archetype_get(f->w, 2, (tecs_comp_t[]){ f->pos, f->hp });
    Position *p = xmalloc((size_t)n * sizeof *p);
    Health *h = xmalloc((size_t)n * sizeof *h);
    ifix_values(p, h, n);
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
    tecs_iter_t it = TECS_ITER(tecs_query_world(f->q), .query = f->q, .where = flt);
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
        tecs_iter_t it = TECS_ITER(tecs_query_world(f.q), .query = f.q);
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
        tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
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

/* ---- the floors of the where rows -------------------------------------
** What a where result costs at least, written over plain arrays as a user
** would: the entities the index names (a sorted array, a grid by cell),
** then each entity's record (12 bytes: generation, archetype, row, as the
** world keeps them), then its row's values, fetched ahead as the library
** does, and nothing else (no sort, no iterator, no checks). The rows'
** data are laid out as the world lays them out (rows in creation order),
** so a where row over its floor is the library's own cost. */

typedef struct frec { uint32_t gen, arch, row; } frec;

enum { FLOOR_AHEAD = 16 };

#if defined(__GNUC__) || defined(__clang__)
#define FLOOR_FETCH(p) __builtin_prefetch(p)
#else
#define FLOOR_FETCH(p) ((void)(p))
#endif

/* where_range_floor: the data of where_range, the range's entities from
** an array sorted by hp; both terms' values copied out, as a where step
** copies the fields of scattered rows. */
double sc_where_range_floor(int64_t n)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    Health *h = xmalloc((size_t)n * sizeof *h);
    frec *recs = xmalloc((size_t)n * sizeof *recs);
    uint32_t *by_hp = xmalloc((size_t)n * sizeof *by_hp);
    ifix_values(p, h, n);
    for (int64_t i = 0; i < n; i++) {
        recs[i] = (frec){ 1, 0, (uint32_t)i };
        by_hp[h[i].hp] = (uint32_t)i;
    }
    int64_t width = n / 100 > 0 ? n / 100 : 1, total = 0;
    uint32_t *rows = xmalloc((size_t)width * sizeof *rows);
    Position *cp = xmalloc((size_t)width * sizeof *cp);
    Health *ch = xmalloc((size_t)width * sizeof *ch);
    double sum = 0, t = 0;
    for (int rep = 0; rep < 20; rep++) {
        const uint32_t *ents = by_hp + (n - width) * rep / 20;
        double t0 = now_ns();
        for (int64_t i = 0; i < width; i++) {
            if (i + FLOOR_AHEAD < width)
                FLOOR_FETCH(&recs[ents[i + FLOOR_AHEAD]]);
            rows[i] = recs[ents[i]].row;
        }
        for (int64_t i = 0; i < width; i++) {
            if (i + FLOOR_AHEAD < width) {
                FLOOR_FETCH(&p[rows[i + FLOOR_AHEAD]]);
                FLOOR_FETCH(&h[rows[i + FLOOR_AHEAD]]);
            }
            cp[i] = p[rows[i]];
            ch[i] = h[rows[i]];
        }
        for (int64_t i = 0; i < width; i++)
            sum += cp[i].x + (double)(ch[i].hp & 1);
        t += now_ns() - t0;
        total += width;
    }
    CHECK(sum > 0, "sum");
    free(ch);
    free(cp);
    free(rows);
    free(by_hp);
    free(recs);
    free(h);
    free(p);
    return t / (double)total;
}

/* A point of where_radius_floor's grid: as the spatial index keeps it. */
typedef struct fpoint { float x, y; uint64_t e; } fpoint;

/* where_radius_floor: the points and the queries of where_radius, a grid
** of cells of side r over the square whose cells' points lie one after
** another (a cell's start in a table), the circle's test in double. */
double sc_where_radius_floor(int64_t n)
{
    float side = 1000.0f;
    Position *p = xmalloc((size_t)n * sizeof *p);
    frec *recs = xmalloc((size_t)n * sizeof *recs);
    uint64_t seed = 7;
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)(rng_next(&seed) % 1000000) / 1e6f * side,
                           (float)(rng_next(&seed) % 1000000) / 1e6f * side };
        recs[i] = (frec){ 1, 0, (uint32_t)i };
    }
    double root = 1;
    while (root * root < (double)n)
        root += 1;
    float r = side * 0.5642f * 10.0f / (float)root;
    int32_t g = (int32_t)(side / r) + 1;
    int32_t *start = xmalloc(((size_t)g * (size_t)g + 1) * sizeof *start);
    int32_t *fill = xmalloc((size_t)g * (size_t)g * sizeof *fill);
    fpoint *pts = xmalloc((size_t)n * sizeof *pts);
    memset(start, 0, ((size_t)g * (size_t)g + 1) * sizeof *start);
#define FLOOR_CELL(i) ((int32_t)(p[i].x / r) * g + (int32_t)(p[i].y / r))
    for (int64_t i = 0; i < n; i++)
        start[FLOOR_CELL(i) + 1]++;
    for (int32_t c = 0; c < g * g; c++)
        start[c + 1] += start[c];
    memcpy(fill, start, (size_t)g * (size_t)g * sizeof *fill);
    for (int64_t i = 0; i < n; i++)
        pts[fill[FLOOR_CELL(i)]++] = (fpoint){ p[i].x, p[i].y, (uint64_t)i };
#undef FLOOR_CELL
    uint64_t *found = xmalloc((size_t)n * sizeof *found);
    int64_t total = 0;
    double t = 0, sum = 0, r2 = (double)r * r;
    for (int rep = 0; rep < 200; rep++) {
        double cx = (double)(rng_next(&seed) % 800 + 100);
        double cy = (double)(rng_next(&seed) % 800 + 100);
        double t0 = now_ns();
        int32_t x0 = (int32_t)((cx - r) / r), x1 = (int32_t)((cx + r) / r);
        int32_t y0 = (int32_t)((cy - r) / r), y1 = (int32_t)((cy + r) / r);
        x0 = x0 > 0 ? x0 : 0, y0 = y0 > 0 ? y0 : 0;
        x1 = x1 < g - 1 ? x1 : g - 1, y1 = y1 < g - 1 ? y1 : g - 1;
        int64_t k = 0;
        for (int32_t gx = x0; gx <= x1; gx++)
            for (int32_t gy = y0; gy <= y1; gy++)
                for (int32_t j = start[gx * g + gy], end = start[gx * g + gy + 1]; j < end; j++) {
                    double dx = (double)pts[j].x - cx, dy = (double)pts[j].y - cy;
                    found[k] = pts[j].e;
                    k += dx * dx + dy * dy <= r2;
                }
        for (int64_t i = 0; i < k; i++)
            FLOOR_FETCH(&recs[found[i]]);
        for (int64_t i = 0; i < k; i++)
            found[i] = recs[found[i]].row;
        for (int64_t i = 0; i < k; i++) {
            if (i + FLOOR_AHEAD < k)
                FLOOR_FETCH(&p[found[i + FLOOR_AHEAD]]);
            sum += p[found[i]].x;
        }
        t += now_ns() - t0;
        total += k;
    }
    CHECK(total > 200 * 50 && sum > 0, "results %lld", (long long)total);
    free(found);
    free(pts);
    free(fill);
    free(start);
    free(recs);
    free(p);
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
    CHECK(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(f.q), .query = f.q) }, ids, (int32_t)n) == n, "collect");
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
