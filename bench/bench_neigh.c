/*
** bench_neigh.c — the neighbour rows: where_small (one radius query of
** about 10 results, its filter set up included), neighbours (the demo's
** search: 10,000 points in a 1024 x 1024 world that wraps, radius 16, the
** spatial index kept through one move per point, then one query per point
** summing its neighbours' positions) and neighbours_raw (the same with a
** hand-written uniform grid over plain arrays, rebuilt every frame: what a
** user would write instead of the index), and neighbours_where (the
** search of neighbours through a where iteration). bench.c lists them in its table;
** neighbours reports its ratio to neighbours_raw.
**
** Both neighbour rows find the same pairs: a point's neighbours are the
** points within NB_R of it or of one of its images across the edges it is
** near (the same float centres, the same inclusive test in doubles), the
** point itself included; a sample is checked against a full scan.
*/
#define _POSIX_C_SOURCE 200809L
#include "bench.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs/index.h"

#define NB_SIZE 1024.0f         /* side of the world, which wraps           */
#define NB_R 16.0f              /* search radius, and the grid's cell       */
#define NB_FRAMES 5             /* frames per repetition                    */
#define NB_SAMPLE 64            /* points checked against a full scan       */

/* ---- where_small ---------------------------------------------------- */

/* where_small: n points in a square sized so that a circle of radius 16
** holds about 10 of them; 20,000 queries at random centres, each with its
** filter reset and its condition added inside the timing. */
double sc_where_small(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    double side = 1;            /* pi r^2 n / side^2 = 10 */
    while (side * side < 3.14159 * NB_R * NB_R * (double)n / 10.0)
        side += 1;
    Position *p = xmalloc((size_t)n * sizeof *p);
    uint64_t seed = 11;
    for (int64_t i = 0; i < n; i++)
        p[i] = (Position){ (float)((double)(rng_next(&seed) % 1000000) / 1e6 * side),
                           (float)((double)(rng_next(&seed) % 1000000) / 1e6 * side) };
    tecs_new_bulk(w, a, (int32_t)n, NULL, 1, (tecs_value_t[]){ { pos, p } });
    free(p);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset_y = offsetof(Position, y), .cell_size = NB_R });
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = pos, .access = TECS_READ } }, .term_count = 1 });
    tecs_filter_t *f = tecs_filter_new(w);
    enum { QUERIES = 20000 };
    float *c = xmalloc(2 * QUERIES * sizeof *c);
    for (int i = 0; i < 2 * QUERIES; i++)
        c[i] = (float)((double)(rng_next(&seed) % 1000000) / 1e6 * side);
    int64_t total = 0;
    double sum = 0, t0 = now_ns();
    for (int i = 0; i < QUERIES; i++) {
        tecs_filter_reset(f);
        tecs_filter_radius(f, x, c[2 * i], c[2 * i + 1], NB_R);
        tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
        while (tecs_iter_next(&it)) {
            const Position *ps = it.fields[0];
            for (int32_t j = 0; j < it.count; j++)
                sum += ps[j].x;
            total += it.count;
        }
    }
    double t = now_ns() - t0;
    CHECK(total > QUERIES * 5 && total < QUERIES * 15 && sum > 0, "results %lld",
          (long long)total);
    free(c);
    tecs_filter_free(f);
    tecs_world_free(w);
    return t / QUERIES;
}

/* ---- the neighbour rows: a shared start ----------------------------- */

/* The start of both neighbour rows: n points and their velocities. */
static void nb_start(int64_t n, Position *p, Velocity *v)
{
    uint64_t seed = 5;
    for (int64_t i = 0; i < n; i++) {
        p[i] = (Position){ (float)(rng_next(&seed) % 1024000) / 1000.0f,
                           (float)(rng_next(&seed) % 1024000) / 1000.0f };
        v[i] = (Velocity){ (float)(rng_next(&seed) % 2001) / 1000.0f - 1.0f,
                           (float)(rng_next(&seed) % 2001) / 1000.0f - 1.0f };
    }
}

/* One move: p += v, back into [0, NB_SIZE). */
static inline Position nb_move(Position p, Velocity v)
{
    p.x += v.x, p.y += v.y;
    p.x = p.x < 0 ? p.x + NB_SIZE : p.x >= NB_SIZE ? p.x - NB_SIZE : p.x;
    p.y = p.y < 0 ? p.y + NB_SIZE : p.y >= NB_SIZE ? p.y - NB_SIZE : p.y;
    return p;
}

/* The offset of the image of a point at c that crosses an edge: the
** world's side towards the far edge, or 0 when c is not that close. */
static inline float nb_image(float c)
{
    return c < NB_R ? NB_SIZE : c > NB_SIZE - NB_R ? -NB_SIZE : 0.0f;
}

/* Is q within NB_R of the centre (cx, cy)? The index's own test. */
static inline bool nb_in(Position q, float cx, float cy)
{
    double dx = (double)q.x - cx, dy = (double)q.y - cy;
    return dx * dx + dy * dy <= (double)NB_R * NB_R;
}

/* What a frame found: the pairs and the sum of the neighbours' x + y. */
typedef struct nb_sum { int64_t pairs; double sum; } nb_sum;

/* The neighbours of point p among all n points, by a full scan. */
static nb_sum nb_scan(const Position *all, int64_t n, Position p)
{
    nb_sum s = { 0, 0 };
    float ox = nb_image(p.x), oy = nb_image(p.y);
    for (int64_t j = 0; j < n; j++) {
        Position q = all[j];
        if (nb_in(q, p.x, p.y) || (ox != 0 && nb_in(q, p.x + ox, p.y)) ||
            (oy != 0 && nb_in(q, p.x, p.y + oy)) ||
            (ox != 0 && oy != 0 && nb_in(q, p.x + ox, p.y + oy))) {
            s.pairs++;
            s.sum += (double)q.x + q.y;
        }
    }
    return s;
}

/* Check NB_SAMPLE points' results (got) against a full scan. */
static void nb_check(const Position *all, int64_t n, const Position *at, const nb_sum *got)
{
    int bad = 0;
    for (int64_t i = 0; i < NB_SAMPLE && i < n; i++) {
        nb_sum s = nb_scan(all, n, at[i]);
        bad += s.pairs != got[i].pairs || s.sum != got[i].sum;
    }
    CHECK(bad == 0, "%d of %d points found other neighbours than a full scan", bad, NB_SAMPLE);
}

/* ---- neighbours: through the spatial index -------------------------- */

typedef struct nb_world {
    tecs_world_t *w;
    tecs_comp_t pos, vel;
    tecs_index_t *x;
    tecs_query_t *move;         /* Position (write), Velocity (read)        */
    tecs_query_t *read;         /* Position (read)                          */
    tecs_filter_t *f;           /* reset for every search                   */
    bool where;                 /* search with where, not tecs_index_near_xy */
    tecs_entity_t ids[256];     /* tecs_index_near_xy's room                */
    float xy[512];
} nb_world;

/* The neighbours of p, through a where: one condition per image of its
** circle, in a filter reset for each search. */
static nb_sum nb_query_where(nb_world *b, Position p)
{
    nb_sum s = { 0, 0 };
    float ox = nb_image(p.x), oy = nb_image(p.y);
    tecs_filter_t *f = b->f;
    tecs_filter_reset(f);
    tecs_cond_t c = tecs_filter_radius(f, b->x, p.x, p.y, NB_R);
    if (ox != 0)
        c = tecs_filter_or(f, c, tecs_filter_radius(f, b->x, p.x + ox, p.y, NB_R));
    if (oy != 0)
        c = tecs_filter_or(f, c, tecs_filter_radius(f, b->x, p.x, p.y + oy, NB_R));
    if (ox != 0 && oy != 0)
        tecs_filter_or(f, c, tecs_filter_radius(f, b->x, p.x + ox, p.y + oy, NB_R));
    tecs_iter_t it = TECS_ITER(tecs_query_world(b->read), .query = b->read, .where = f);
    while (tecs_iter_next(&it)) {
        const Position *q = it.fields[0];
        for (int32_t j = 0; j < it.count; j++)
            s.sum += (double)q[j].x + q[j].y;
        s.pairs += it.count;
    }
    return s;
}

/* The neighbours of p, straight from the index: one call per image of
** its circle, the points read from what the index holds. */
static nb_sum nb_query_near(nb_world *b, Position p)
{
    nb_sum s = { 0, 0 };
    float ox = nb_image(p.x), oy = nb_image(p.y);
    const float cx[4] = { p.x, p.x + ox, p.x, p.x + ox }, cy[4] = { p.y, p.y, p.y + oy, p.y + oy };
    const bool on[4] = { true, ox != 0, oy != 0, ox != 0 && oy != 0 };
    for (int k = 0; k < 4; k++) {
        if (!on[k])
            continue;
        int32_t n = tecs_index_near_xy(b->x, cx[k], cy[k], NB_R, b->ids, b->xy, 256);
        CHECK(n >= 0 && n <= 256, "tecs_index_near_xy: %d", (int)n);
        for (int32_t j = 0; j < n && j < 256; j++)
            s.sum += (double)b->xy[2 * j] + b->xy[2 * j + 1];
        s.pairs += n;
    }
    return s;
}

static nb_sum nb_query(nb_world *b, Position p)
{
    return b->where ? nb_query_where(b, p) : nb_query_near(b, p);
}

/* One frame: every point moves, then every point finds its neighbours. */
static nb_sum nb_frame(nb_world *b, Position *at, nb_sum *got)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(b->move), .query = b->move);
    while (tecs_iter_next(&it)) {
        Position *p = it.fields[0];
        const Velocity *v = it.fields[1];
        for (int32_t j = 0; j < it.count; j++)
            p[j] = nb_move(p[j], v[j]);
    }
    nb_sum all = { 0, 0 };
    int64_t i = 0;
    it = TECS_ITER(tecs_query_world(b->read), .query = b->read);
    while (tecs_iter_next(&it)) {
        const Position *p = it.fields[0];
        for (int32_t j = 0; j < it.count; j++, i++) {
            nb_sum s = nb_query(b, p[j]);
            if (i < NB_SAMPLE) {
                at[i] = p[j];
                got[i] = s;
            }
            all.pairs += s.pairs;
            all.sum += s.sum;
        }
    }
    return all;
}

/* NB_FRAMES frames; ns per point and frame. */
static double nb_run(int64_t n, bool where)
{
    static nb_world b;
    b.where = where;
    b.w = tecs_world_new();
    b.pos = TECS_COMPONENT(b.w, Position);
    b.vel = TECS_COMPONENT(b.w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(b.w, 2, (tecs_comp_t[]){ b.pos, b.vel });
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    nb_start(n, p, v);
    tecs_new_bulk(b.w, a, (int32_t)n, NULL, 2, (tecs_value_t[]){ { b.pos, p }, { b.vel, v } });
    b.x = tecs_index_new(b.w, &(tecs_index_desc_t){
        .comp = b.pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset_y = offsetof(Position, y), .cell_size = NB_R });
    b.move = tecs_query_new(b.w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = b.pos, .access = TECS_WRITE },
                                  { .comp = b.vel, .access = TECS_READ } }, .term_count = 2 });
    b.read = tecs_query_new(b.w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = b.pos, .access = TECS_READ } }, .term_count = 1 });
    b.f = tecs_filter_new(b.w);
    Position at[NB_SAMPLE];
    nb_sum got[NB_SAMPLE], all = { 0, 0 };
    double t0 = now_ns();
    for (int k = 0; k < NB_FRAMES; k++)
        all = nb_frame(&b, at, got);
    double t = now_ns() - t0;
    CHECK(all.pairs > n, "pairs %lld", (long long)all.pairs);
    int64_t i = 0;              /* the last frame's positions, for the check */
    tecs_iter_t it = TECS_ITER(tecs_query_world(b.read), .query = b.read);
    while (tecs_iter_next(&it))
        for (int32_t j = 0; j < it.count; j++)
            p[i++] = ((const Position *)it.fields[0])[j];
    nb_check(p, n, at, got);
    free(p);
    free(v);
    tecs_filter_free(b.f);
    tecs_world_free(b.w);
    return t / (double)(n * NB_FRAMES);
}

/* neighbours: each search by tecs_index_near_xy. */
double sc_neighbours(int64_t n)
{
    return nb_run(n, false);
}

/* neighbours_where: each search by a where over a filter reset for it. */
double sc_neighbours_where(int64_t n)
{
    return nb_run(n, true);
}

/* ---- neighbours_raw: a hand-written grid ---------------------------- */

#define NB_CELLS 64             /* NB_SIZE / NB_R cells a side              */

/* The grid: points sorted by cell (a counting sort), start[c] the first
** of cell c, start[c + 1] its end. */
typedef struct nb_grid {
    int32_t start[NB_CELLS * NB_CELLS + 1];
    Position *pts;
} nb_grid;

static inline int32_t nb_cell(float v)
{
    int32_t c = (int32_t)(v / NB_R);
    return c < 0 ? 0 : c >= NB_CELLS ? NB_CELLS - 1 : c;
}

static void nb_grid_build(nb_grid *g, const Position *p, int64_t n, int32_t *cellof)
{
    memset(g->start, 0, sizeof g->start);
    for (int64_t i = 0; i < n; i++) {
        cellof[i] = nb_cell(p[i].y) * NB_CELLS + nb_cell(p[i].x);
        g->start[cellof[i] + 1]++;
    }
    for (int32_t c = 0; c < NB_CELLS * NB_CELLS; c++)
        g->start[c + 1] += g->start[c];
    int32_t fill[NB_CELLS * NB_CELLS];
    memcpy(fill, g->start, sizeof fill);
    for (int64_t i = 0; i < n; i++)
        g->pts[fill[cellof[i]]++] = p[i];
}

/* The neighbours of p: the 3 x 3 cells around its cell, wrapping; a point
** of a wrapped cell is tested against the image of p on that side. */
static nb_sum nb_grid_query(const nb_grid *g, Position p)
{
    nb_sum s = { 0, 0 };
    int32_t cx = nb_cell(p.x), cy = nb_cell(p.y);
    for (int32_t dy = -1; dy <= 1; dy++) {
        int32_t y = cy + dy;
        float iy = y < 0 ? NB_SIZE : y >= NB_CELLS ? -NB_SIZE : 0.0f;
        y = (y + NB_CELLS) % NB_CELLS;
        for (int32_t dx = -1; dx <= 1; dx++) {
            int32_t x = cx + dx;
            float ix = x < 0 ? NB_SIZE : x >= NB_CELLS ? -NB_SIZE : 0.0f;
            x = (x + NB_CELLS) % NB_CELLS;
            float px = p.x + ix, py = p.y + iy;
            const int32_t c = y * NB_CELLS + x;
            for (int32_t k = g->start[c]; k < g->start[c + 1]; k++)
                if (nb_in(g->pts[k], px, py)) {
                    s.pairs++;
                    s.sum += (double)g->pts[k].x + g->pts[k].y;
                }
        }
    }
    return s;
}

/* neighbours_raw: the same frames over plain arrays. */
double sc_neighbours_raw(int64_t n)
{
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    int32_t *cellof = xmalloc((size_t)n * sizeof *cellof);
    nb_grid *g = xmalloc(sizeof *g);
    g->pts = xmalloc((size_t)n * sizeof *g->pts);
    nb_start(n, p, v);
    Position at[NB_SAMPLE];
    nb_sum got[NB_SAMPLE], all = { 0, 0 };
    double t0 = now_ns();
    for (int k = 0; k < NB_FRAMES; k++) {
        for (int64_t i = 0; i < n; i++)
            p[i] = nb_move(p[i], v[i]);
        nb_grid_build(g, p, n, cellof);
        all = (nb_sum){ 0, 0 };
        for (int64_t i = 0; i < n; i++) {
            nb_sum s = nb_grid_query(g, p[i]);
            if (i < NB_SAMPLE) {
                at[i] = p[i];
                got[i] = s;
            }
            all.pairs += s.pairs;
            all.sum += s.sum;
        }
    }
    double t = now_ns() - t0;
    CHECK(all.pairs > n, "pairs %lld", (long long)all.pairs);
    nb_check(p, n, at, got);
    free(g->pts);
    free(g);
    free(cellof);
    free(p);
    free(v);
    return t / (double)(n * NB_FRAMES);
}
