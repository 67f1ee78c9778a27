/*
** test_near.c — tecs_index_near, the read-only neighbour lookup of a
** spatial index: its results against a brute-force scan (random points,
** radii, after moves, removes and destroys), its grid order, a cap smaller
** than the count, bad input, hostile circles and boxes (non-finite, huge
** and tiny values, edges the test rounds) on which near, the filters and
** a scan by the header's rule agree, and calls from an observer, a
** system, a parallel system's workers (the index stale from a burst
** before the run) and a split's parts; a where of one circle against the scan, in its
** order, over one crowded cell, for result counts around the cut-offs of
** the few-results paths, and two where iterations stepped in turn.
*/
#include "index_fixture.h"

#include <float.h>

#if !defined(_WIN32)
#include <pthread.h>
#define NEAR_THREADS 1
#else
#define NEAR_THREADS 0
#endif

/* A small grid world of its own: n entities with a Position on a square of
** side `side`, a spatial index of cell `cell`. */
typedef struct grid {
    tecs_world_t *w;
    tecs_comp_t pos;
    tecs_index_t *x;
    tecs_query_t *q;            /* Position (write)                         */
    tecs_entity_t e[2000];
    int n;
    uint64_t rng;
} grid;

static void grid_init(grid *g, int n, float side, float cell)
{
    memset(g, 0, sizeof *g);
    g->rng = 0x2545f4914f6cdd1dull;
    g->w = tw_new();
    g->pos = TECS_COMPONENT(g->w, Position);
    g->x = tecs_index_new(g->w, &(tecs_index_desc_t){
        .comp = g->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = cell });
    g->q = TECS_QUERY(g->w, { .comp = g->pos, .access = TECS_WRITE });
    CHECK(g->x != NULL && g->q != NULL);
    for (int i = 0; i < n; i++) {
        Position p = { tw_frand(&g->rng, 0, side), tw_frand(&g->rng, 0, side) };
        g->e[g->n] = tecs_new(g->w);
        CHECK_ERR(tecs_set(g->w, g->e[g->n], g->pos, &p), TECS_OK);
        g->n++;
    }
}

/* The live entities with a Position within r of (cx, cy), by a scan (a
** read-only one: writes through a write term would re-key the index). */
static int brute(tecs_world_t *w, tecs_comp_t pos, float cx, float cy, float r,
                 tecs_entity_t *out)
{
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ });
    int n = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = TECS_FIELD(&it, Position, 0);
        for (int32_t i = 0; i < it.count; i++) {
            double dx = (double)p[i].x - cx, dy = (double)p[i].y - cy;
            if (dx * dx + dy * dy <= (double)r * r)
                out[n++] = it.entities[i];
        }
    }
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    return n;
}

static int cmp_ent(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

/* floor(v), without libm. */
static long long floor_ll(double v)
{
    long long t = (long long)v;
    return (double)t > v ? t - 1 : t;
}

/* The cell of e's point. */
static void cell_of_ent(tecs_world_t *w, tecs_comp_t pos, tecs_entity_t e, float cell,
                        long long *cx, long long *cy)
{
    const Position *p = TECS_GET(w, e, pos, Position);
    *cx = floor_ll((double)p->x / cell);
    *cy = floor_ll((double)p->y / cell);
}

/* tecs_index_near at (cx, cy, r) gives the scan's set, twice in the same
** order, and in grid order when it walks cells. */
static void check_near(tecs_world_t *w, tecs_comp_t pos, tecs_index_t *x, float cell,
                       int points, float cx, float cy, float r)
{
    static tecs_entity_t got[2000], again[2000], want[2000];
    int32_t n = tecs_index_near(x, cx, cy, r, got, 2000);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    int nw = brute(w, pos, cx, cy, r, want);
    CHECK_EQ(n, nw);
    if (n != nw || n < 0)
        return;
    CHECK_EQ(tecs_index_near(x, cx, cy, r, again, 2000), n);
    CHECK(memcmp(got, again, (size_t)n * sizeof got[0]) == 0);
    double span = 2.0 * r / cell + 2.0;
    if (span * span <= points) {            /* grid order: cells by x, then y */
        long long px = 0, py = 0;
        for (int32_t i = 0; i < n; i++) {
            long long ex, ey;
            cell_of_ent(w, pos, got[i], cell, &ex, &ey);
            CHECK(i == 0 || ex > px || (ex == px && ey >= py));
            px = ex, py = ey;
        }
    }
    qsort(got, (size_t)n, sizeof got[0], cmp_ent);
    qsort(want, (size_t)n, sizeof want[0], cmp_ent);
    CHECK(memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
}

TEST(near_matches_brute_force)
{
    grid g;
    grid_init(&g, 1500, 200.0f, 8.0f);
    for (int round = 0; round < 6; round++) {
        for (int k = 0; k < 60; k++) {
            float r = k % 10 == 0 ? tw_frand(&g.rng, 0, 300) : tw_frand(&g.rng, 0, 25);
            check_near(g.w, g.pos, g.x, 8.0f, tecs_index_count(g.x), tw_frand(&g.rng, -20, 220),
                       tw_frand(&g.rng, -20, 220), r);
        }
        check_near(g.w, g.pos, g.x, 8.0f, tecs_index_count(g.x), 50, 50, 0);
        /* Moves (some bursts, some one by one), removes, destroys, births. */
        int moves = round % 2 ? 1200 : 40;
        for (int i = 0; i < moves; i++) {
            tecs_entity_t e = g.e[tw_rand(&g.rng) % (uint64_t)g.n];
            Position p = { tw_frand(&g.rng, 0, 200), tw_frand(&g.rng, 0, 200) };
            if (tecs_is_alive(g.w, e))         /* (adds it back where removed) */
                CHECK_ERR(tecs_set(g.w, e, g.pos, &p), TECS_OK);
        }
        for (int i = 0; i < 30; i++) {
            int k = (int)(tw_rand(&g.rng) % (uint64_t)g.n);
            if (!tecs_is_alive(g.w, g.e[k]))
                continue;
            if (i % 3 == 0)
                CHECK_ERR(tecs_destroy(g.w, g.e[k]), TECS_OK);
            else if (i % 3 == 1 && tecs_has(g.w, g.e[k], g.pos))
                CHECK_ERR(tecs_remove(g.w, g.e[k], g.pos), TECS_OK);
            else if (g.n < 2000) {
                Position p = { tw_frand(&g.rng, 0, 200), tw_frand(&g.rng, 0, 200) };
                g.e[g.n] = tecs_new(g.w);
                CHECK_ERR(tecs_set(g.w, g.e[g.n++], g.pos, &p), TECS_OK);
            }
        }
    }
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* A where of the circle (cx, cy, r) through q and f (reset first) hands
** out the scan's entities in the scan's (the query's) order: their count. */
static int where_circle_is_scan(const grid *g, tecs_query_t *q, tecs_filter_t *f, float cx,
                                float cy, float r)
{
    static tecs_entity_t got[2000], want[2000];
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    CHECK(tecs_filter_radius(f, g->x, cx, cy, r) >= 0);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, got, 2000);
    int nw = brute(g->w, g->pos, cx, cy, r, want);
    CHECK_EQ(n, nw);
    if (n == nw && n > 0)
        CHECK(memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
    return nw;
}

/* A where of one circle hands out the scan's entities in the scan's (the
** query's) order: centres on cell edges and on points, radius 0, points
** exactly on the circle, circles wider than the grid. */
TEST(near_where_circle_matches_scan)
{
    grid g;
    grid_init(&g, 1200, 100.0f, 4.0f);
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    tecs_filter_t *f = tecs_filter_new(g.w);
    for (int k = 0; k < 300; k++) {
        float cx = tw_frand(&g.rng, -10, 110), cy = tw_frand(&g.rng, -10, 110);
        float r = k % 7 == 0 ? 0.0f : k % 13 == 0 ? tw_frand(&g.rng, 100, 400)
                                                  : tw_frand(&g.rng, 0, 12);
        if (k % 5 == 0) {               /* centre on a point, or on an edge */
            const Position *p = TECS_GET(g.w, g.e[k % g.n], g.pos, Position);
            cx = p->x, cy = p->y;
        } else if (k % 5 == 1) {
            cx = 4.0f * (float)(k % 20), cy = 4.0f * (float)(k % 9);
        }
        if (k % 11 == 0) {              /* a point exactly on the circle */
            const Position *p = TECS_GET(g.w, g.e[(k * 7) % g.n], g.pos, Position);
            cx = p->x + r, cy = p->y;
        }
        where_circle_is_scan(&g, q, f, cx, cy, r);
    }
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* A where of one circle over a cell of many points: the cell's chain is
** longer than the snapshot's room, which grows in the middle of it, and
** the matches still equal the scan's, in its order. */
TEST(near_where_circle_one_crowded_cell)
{
    grid g;
    grid_init(&g, 1500, 10.0f, 100.0f);
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    tecs_filter_t *f = tecs_filter_new(g.w);
    const float circles[][3] = { { 5, 5, 20 }, { 5, 5, 3 }, { 0, 0, 7 }, { 9, 2, 4.5f } };
    for (int k = 0; k < 4; k++) {
        int nw = where_circle_is_scan(&g, q, f, circles[k][0], circles[k][1], circles[k][2]);
        CHECK(k > 0 || nw == 1500);
    }
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* Where of one circle over n points on a line (x = 0, 1, ..., created in
** a shuffled order, every third with a Velocity): the circle at (-0.5, 0)
** of radius k holds the points x < k. Result counts 0, 1 and on both sides
** of the cut-offs for few places and the small sort, forward and in
** reverse, equal the scan's in its order; an iteration of a write query
** writes every row, and a destroy in it waits for the end; the same query
** and filter are used again after entities change archetype and die. */
TEST(near_where_circle_results_of_every_small_count)
{
    static tecs_entity_t got[200], want[200];
    enum { N = 120 };
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = 4.0f });
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ });
    tecs_query_t *qw = TECS_QUERY(w, { .comp = pos, .access = TECS_WRITE });
    CHECK(x != NULL && q != NULL && qw != NULL);
    int order[N];
    uint64_t rng = 99;
    tw_permutation(order, N, &rng);
    for (int i = 0; i < N; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, pos, Position, {(float)order[i], 0});
        if (i % 3 == 0)
            TECS_SET(w, e, vel, Velocity, {1, 1});
    }
    tecs_filter_t *f = tecs_filter_new(w);
    const int counts[] = { 0, 1, 2, 10, 31, 32, 33, 34, 47, 48, 49, 50, 80 };
    for (int round = 0; round < 3; round++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            float r = (float)counts[c] - (round == 2 && counts[c] > 0 ? 0.75f : 0.0f);
            CHECK_ERR(tecs_filter_reset(f), TECS_OK);
            CHECK(tecs_filter_radius(f, x, -0.5f, 0, r) >= 0);
            int nw = brute(w, pos, -0.5f, 0, r, want);
            CHECK(round > 0 || nw == counts[c]);
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, got, 200), nw);
            CHECK(memcmp(got, want, (size_t)nw * sizeof got[0]) == 0);
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f, .reverse = true) }, got, 200), nw);
            for (int i = 0; i < nw; i++)
                CHECK_EQ(got[i], want[nw - 1 - i]);
            int m = 0;                  /* writes through a write query */
            tecs_entity_t doomed = 0;
            tecs_iter_t it = TECS_ITER(w, .query = qw, .where = f);
            while (tecs_iter_next(&it)) {
                Position *p = TECS_FIELD(&it, Position, 0);
                for (int32_t i = 0; i < it.count; i++, m++) {
                    CHECK(m < nw && it.entities[i] == want[m]);
                    p[i].y = 0;         /* the same key: the index keeps it */
                }
                if (round == 1 && doomed == 0 && it.count > 0) {
                    doomed = it.entities[0];
                    tecs_destroy(w, doomed);
                    CHECK(tecs_is_alive(w, doomed));    /* deferred */
                }
            }
            CHECK_EQ(m, nw);
            CHECK(doomed == 0 || !tecs_is_alive(w, doomed));
        }
        tecs_entity_t all[N];           /* entities change archetype */
        int32_t na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, N);
        for (int32_t i = 0; i < na; i += 5) {
            if (tecs_has(w, all[i], vel))
                tecs_remove(w, all[i], vel);
            else
                TECS_SET(w, all[i], vel, Velocity, {2, 2});
        }
    }
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    CHECK_ERR(tecs_query_free(qw), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* Two where iterations stepped in turn: the older one is not the newest
** open, so its steps take the slow path; both hand out what each hands
** out alone, and the world is no longer deferred after both end. */
TEST(near_where_interleaved_iterations)
{
    static tecs_entity_t a1[2000], b1[2000];
    grid g;
    grid_init(&g, 800, 60.0f, 4.0f);
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    tecs_filter_t *fa = tecs_filter_new(g.w), *fb = tecs_filter_new(g.w);
    tecs_filter_radius(fa, g.x, 20, 20, 9);
    tecs_filter_radius(fb, g.x, 40, 35, 12);
    int32_t na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = fa) }, a1, 2000);
    int32_t nb = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = fb) }, b1, 2000);
    CHECK(na > 1 && nb > 1);
    tecs_iter_t ia = TECS_ITER(tecs_query_world(q), .query = q, .where = fa), ib = TECS_ITER(tecs_query_world(q), .query = q, .where = fb);
    int32_t ka = 0, kb = 0;
    bool more_a = true, more_b = true;
    while (more_a || more_b) {
        if (more_a && (more_a = tecs_iter_next(&ia)))
            for (int32_t i = 0; i < ia.count; i++, ka++)
                CHECK(ka < na && ia.entities[i] == a1[ka]);
        if (more_b && (more_b = tecs_iter_next(&ib)))
            for (int32_t i = 0; i < ib.count; i++, kb++)
                CHECK(kb < nb && ib.entities[i] == b1[kb]);
    }
    CHECK_EQ(ka, na);
    CHECK_EQ(kb, nb);
    CHECK(!tecs_is_deferred(g.w));
    tecs_entity_t e = tecs_new(g.w);    /* applied at once */
    CHECK(tecs_is_alive(g.w, e));
    tecs_filter_free(fa);
    tecs_filter_free(fb);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* The shared fixture's grid (NaN points, negative coordinates, cell 4),
** after random changes of every kind. */
TEST(near_fixture_changes)
{
    fx t;
    fx_init(&t, false);
    for (int round = 0; round < 5; round++) {
        for (int k = 0; k < 40; k++) {
            float cx = (float)(tw_rand(&t.rng) % 1200) / 10.0f - 60.0f;
            float cy = (float)(tw_rand(&t.rng) % 1200) / 10.0f - 60.0f;
            float r = (float)(tw_rand(&t.rng) % 300) / 10.0f;
            check_near(t.w, t.pos, t.grid, 4.0f, tecs_index_count(t.grid), cx, cy, r);
        }
        for (int i = 0; i < 60; i++)
            random_change(&t);
    }
    tw_free(t.w);
}

TEST(near_cap_smaller_than_count)
{
    grid g;
    grid_init(&g, 800, 100.0f, 5.0f);
    tecs_entity_t all[800], part[800];
    int32_t n = tecs_index_near(g.x, 50, 50, 20, all, 800);
    CHECK(n > 20);
    CHECK_EQ(tecs_index_near(g.x, 50, 50, 20, NULL, 0), n);
    for (int32_t cap = 1; cap < n; cap += 7) {
        for (int32_t i = 0; i < 800; i++)
            part[i] = 0;
        CHECK_EQ(tecs_index_near(g.x, 50, 50, 20, part, cap), n);
        CHECK(memcmp(part, all, (size_t)cap * sizeof part[0]) == 0);
        CHECK_EQ(part[cap], 0);                 /* nothing written past cap */
    }
    CHECK_EQ(tecs_index_near(g.x, 500, 500, 1, part, 800), 0);
    tw_free(g.w);
}

TEST(near_bad_input)
{
    grid g;
    grid_init(&g, 50, 10.0f, 1.0f);
    tecs_comp_t hp = TECS_COMPONENT(g.w, Health);
    tecs_index_t *h = tecs_index_new(g.w, &(tecs_index_desc_t){ .comp = hp,
                                                                 .type = TECS_KEY_I32 });
    CHECK(h != NULL);
    tecs_entity_t out[64];
    size_t mem = tecs_world_memory(g.w);
    CHECK_EQ(tecs_index_near(NULL, 0, 0, 1, out, 64), -1);
    CHECK_EQ(tecs_index_near(h, 0, 0, 1, out, 64), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(g.w), "not a spatial index") != NULL);
    CHECK_EQ(tecs_index_near(g.x, 0, 0, -1, out, 64), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_index_near(g.x, 0, 0, NAN, out, 64), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_index_near(g.x, NAN, 0, 1, out, 64), -1);
    CHECK_EQ(tecs_index_near(g.x, 0, NAN, 1, out, 64), -1);
    CHECK_EQ(tecs_index_near(g.x, INFINITY, 5, 3, out, 64), -1);    /* no centre at infinity */
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(g.w), "the centre is not finite") != NULL);
    CHECK_EQ(tecs_index_near(g.x, 5, -INFINITY, 3, out, 64), -1);
    CHECK_EQ(tecs_index_near(g.x, 5, 5, -INFINITY, out, 64), -1);
    CHECK_EQ(tecs_index_near(g.x, 0, 0, 1, NULL, 1), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_index_near(g.x, 0, 0, 1, out, -1), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_world_memory(g.w), mem);
    /* A good call clears the last error; an infinite radius takes all. */
    CHECK_EQ(tecs_index_near(g.x, 5, 5, INFINITY, out, 64), 50);
    CHECK_EQ(tecs_last_error(g.w), TECS_OK);
    /* A freed index's handle must not be used; a freed world's neither:
    ** nothing to test there. An empty index finds nothing. */
    tecs_comp_t vel = TECS_COMPONENT(g.w, Velocity);
    tecs_index_t *empty = tecs_index_new(g.w, &(tecs_index_desc_t){
        .comp = vel, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Velocity, x), .offset_y = offsetof(Velocity, y), .cell_size = 1 });
    CHECK_EQ(tecs_index_near(empty, 0, 0, 100, out, 64), 0);
    tw_free(g.w);
}

/* ---- hostile centres and radii --------------------------------------- */

/* The rule the header states for a circle (x, y, r), written out on its
** own: refused when x or y is not finite or r is NaN or negative; else
** the points with no NaN coordinate whose distance from the centre,
** squared in doubles, is at most r * r (an infinite r takes every one). */
static bool rule_refuses(float x, float y, float r)
{
    return !(x >= -FLT_MAX && x <= FLT_MAX) || !(y >= -FLT_MAX && y <= FLT_MAX) || !(r >= 0);
}

static bool rule_holds(Position p, float x, float y, float r)
{
    double dx = (double)p.x - x, dy = (double)p.y - y;
    return p.x == p.x && p.y == p.y && dx * dx + dy * dy <= (double)r * r;
}

/* Points of every kind: ordinary, tiny, huge, at FLT_MAX, infinite, and
** two with a NaN coordinate (in no cell: no circle holds them). */
static const Position hostile_pts[15] = {
    { 0, 0 }, { 1, 2 }, { -3, 4 }, { FLT_TRUE_MIN, -FLT_TRUE_MIN }, { 1e30f, 1e30f },
    { -1e30f, 1e30f }, { FLT_MAX, -FLT_MAX }, { -FLT_MAX, FLT_MAX }, { 1e30f, 0 },
    { 0, -1e30f }, { INFINITY, 0 }, { 0, -INFINITY }, { INFINITY, INFINITY },
    { NAN, 1 }, { 1, NAN },
};

/* A world of the 15 hostile points (rounds more copies of them when
** rounds > 1, so that some circles walk cells) and a spatial index of
** cell `cell`. */
static void hostile_init(grid *g, float cell, int rounds)
{
    memset(g, 0, sizeof *g);
    g->w = tw_new();
    g->pos = TECS_COMPONENT(g->w, Position);
    g->x = tecs_index_new(g->w, &(tecs_index_desc_t){
        .comp = g->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = cell });
    g->q = TECS_QUERY(g->w, { .comp = g->pos, .access = TECS_READ });
    CHECK(g->x != NULL && g->q != NULL);
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < 15; i++) {
            g->e[g->n] = tecs_new(g->w);
            CHECK_ERR(tecs_set(g->w, g->e[g->n++], g->pos, &hostile_pts[i]), TECS_OK);
        }
}

/* Does every search of the circle (x, y, r) give the rule's answer:
** tecs_index_near and _near_xy, a where of the lone circle, of the
** circle `or` itself, of the circle `and` a box of the whole plane, and
** tecs_filter_test of each entity? Refused inputs are TECS_EINVAL from
** each. @return the rule's count, or -1 for a refusal. */
static int check_circle(grid *g, tecs_filter_t *f, float x, float y, float r)
{
    static tecs_entity_t want[2000], got[2000];
    static float xy[4000];
    bool refused = rule_refuses(x, y, r);
    int nw = 0;
    for (int i = 0; i < g->n && !refused; i++)
        if (rule_holds(*TECS_GET(g->w, g->e[i], g->pos, Position), x, y, r))
            want[nw++] = g->e[i];
    int32_t n = tecs_index_near_xy(g->x, x, y, r, got, xy, 2000);
    CHECK_EQ(n, refused ? -1 : nw);
    CHECK_EQ(tecs_last_error(g->w), refused ? TECS_EINVAL : TECS_OK);
    for (int32_t i = 0; i < n && i < 2000; i++) {
        const Position *p = TECS_GET(g->w, got[i], g->pos, Position);
        CHECK(p->x == xy[2 * i] && p->y == xy[2 * i + 1]);
    }
    qsort(got, n > 0 ? (size_t)n : 0, sizeof got[0], cmp_ent);
    CHECK(n != nw || n <= 0 || memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
    CHECK_EQ(tecs_index_near(g->x, x, y, r, got, 2000), refused ? -1 : nw);
    for (int shape = 0; shape < 3; shape++) {
        CHECK_ERR(tecs_filter_reset(f), TECS_OK);
        tecs_cond_t c = tecs_filter_radius(f, g->x, x, y, r);
        CHECK_EQ(c < 0, refused);
        CHECK_EQ(tecs_filter_error(f), refused ? TECS_EINVAL : TECS_OK);
        if (shape == 1)
            tecs_filter_or(f, c, tecs_filter_radius(f, g->x, x, y, r));
        if (shape == 2)
            tecs_filter_and(f, c, tecs_filter_box(f, g->x, -INFINITY, -INFINITY, INFINITY,
                                                  INFINITY));
        n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(g->q), .query = g->q, .where = f) }, got, 2000);
        CHECK_EQ(n, refused ? -1 : nw);
        qsort(got, n > 0 ? (size_t)n : 0, sizeof got[0], cmp_ent);
        CHECK(n != nw || n <= 0 || memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
    }
    for (int i = 0, j = 0; i < g->n && !refused; i++) {
        bool in = j < nw && want[j] == g->e[i];
        j += in;
        CHECK_EQ(tecs_filter_test(f, g->e[i]), in);
    }
    return refused ? -1 : nw;
}

/* The two searches of the issue, over the 15 points: a centre at
** (-FLT_MAX, -inf) with an infinite radius, and one at (1e30, inf), are
** refused at once by tecs_index_near and by the radius filter alike; the
** same infinite radius about a finite centre, however far out, takes the
** 13 points with no NaN coordinate, infinite ones included. */
TEST(near_infinite_circles_of_the_issue)
{
    grid g;
    hostile_init(&g, 1.0f, 1);
    tecs_filter_t *f = tecs_filter_new(g.w);
    tecs_entity_t out[16];
    double t0 = tecs_time_now();
    CHECK_EQ(tecs_index_near(g.x, -FLT_MAX, -INFINITY, INFINITY, out, 16), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(g.w), "not finite") != NULL);
    CHECK_EQ(check_circle(&g, f, -FLT_MAX, -INFINITY, INFINITY), -1);
    CHECK_EQ(check_circle(&g, f, 1e30f, INFINITY, INFINITY), -1);
    CHECK_EQ(check_circle(&g, f, -FLT_MAX, -FLT_MAX, INFINITY), 13);
    CHECK_EQ(check_circle(&g, f, 1e30f, 0, INFINITY), 13);
    CHECK_EQ(check_circle(&g, f, 0, 0, FLT_MAX), 8);
    CHECK(tecs_time_now() - t0 < 1.0);
    tecs_filter_free(f);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* The hostile values of the two cases below, and their two cell sizes. */
static const float hostile_v[10] = { 0, FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e30f, -1e30f,
                                     FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN };
static const float hostile_cells[2] = { 1.0f, 1e37f };

/* Every circle whose x, y and r are drawn from 0, +-tiny, +-1e30,
** +-FLT_MAX, +-inf and NaN: tecs_index_near, the where paths and a scan by
** the stated rule agree, over cells of size 1 (huge points clamped into
** the outer cells, huge circles walking the entries) and of size 1e37
** (huge circles walking cells), in a time bounded by the points. */
TEST(near_hostile_values_agree_with_filter_and_scan)
{
    const float *v = hostile_v;
    for (int c = 0; c < 2; c++) {
        grid g;
        hostile_init(&g, hostile_cells[c], c == 0 ? 1 : 40);
        tecs_filter_t *f = tecs_filter_new(g.w);
        double t0 = tecs_time_now();
        int refused = 0, found = 0;
        for (int i = 0; i < 1000; i++) {
            int n = check_circle(&g, f, v[i % 10], v[i / 10 % 10], v[i / 100]);
            refused += n < 0;
            found += n > 0 ? n : 0;
        }
        CHECK_EQ(refused, 1000 - 7 * 7 * 5);        /* 7 finite values, 5 r >= 0 */
        CHECK(found > 0);
        CHECK(tecs_time_now() - t0 < 5.0);
        tecs_filter_free(f);
        TW_CHECK(g.w);
        tw_free(g.w);
    }
}

/* A circle whose edge touches the origin, of ordinary size: points a hair
** below it are farther than r, but the test's squares round their
** distance to r, so they are in, by every search, although their cells
** lie outside the circle's bounding box. */
TEST(near_circle_edge_rounded_by_the_test)
{
    grid g;
    memset(&g, 0, sizeof g);
    g.w = tw_new();
    g.pos = TECS_COMPONENT(g.w, Position);
    g.x = tecs_index_new(g.w, &(tecs_index_desc_t){
        .comp = g.pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = 1e5f });
    g.q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    const Position pts[5] = { { 0, 0 }, { 0, -1e-20f }, { -1e-20f, 0 }, { 0, -1 }, { -1, 0 } };
    for (int i = 0; i < 5; i++) {
        g.e[g.n] = tecs_new(g.w);
        CHECK_ERR(tecs_set(g.w, g.e[g.n++], g.pos, &pts[i]), TECS_OK);
    }
    tecs_filter_t *f = tecs_filter_new(g.w);
    CHECK_EQ(check_circle(&g, f, 0, 47918.5f, 47918.5f), 3);    /* not (0, -1), (-1, 0) */
    CHECK_EQ(check_circle(&g, f, 47918.5f, 0, 47918.5f), 3);
    tecs_filter_free(f);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* Every box whose bounds are drawn from the same hostile values: a where
** gives the points with no NaN coordinate inside it (an infinite bound
** leaves a side open, an inverted box is empty), and a NaN bound is
** TECS_EINVAL, at both cell sizes. */
TEST(near_hostile_boxes_agree_with_scan)
{
    const float *v = hostile_v;
    static tecs_entity_t got[2000], want[2000];
    for (int c = 0; c < 2; c++) {
        grid g;
        hostile_init(&g, hostile_cells[c], c == 0 ? 1 : 40);
        tecs_filter_t *f = tecs_filter_new(g.w);
        int refused = 0, found = 0;
        for (int i = 0; i < 10000; i++) {
            float x0 = v[i % 10], y0 = v[i / 10 % 10], x1 = v[i / 100 % 10], y1 = v[i / 1000];
            bool nan = x0 != x0 || y0 != y0 || x1 != x1 || y1 != y1;
            int nw = 0;
            for (int k = 0; k < g.n && !nan; k++) {
                const Position *p = TECS_GET(g.w, g.e[k], g.pos, Position);
                if (p->x >= x0 && p->x <= x1 && p->y >= y0 && p->y <= y1)
                    want[nw++] = g.e[k];
            }
            CHECK_ERR(tecs_filter_reset(f), TECS_OK);
            CHECK_EQ(tecs_filter_box(f, g.x, x0, y0, x1, y1) < 0, nan);
            CHECK_EQ(tecs_filter_error(f), nan ? TECS_EINVAL : TECS_OK);
            int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(g.q), .query = g.q, .where = f) }, got, 2000);
            CHECK_EQ(n, nan ? -1 : nw);
            qsort(got, n > 0 ? (size_t)n : 0, sizeof got[0], cmp_ent);
            CHECK(n != nw || n <= 0 || memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
            refused += nan;
            found += nw;
        }
        CHECK_EQ(refused, 10000 - 9 * 9 * 9 * 9);
        CHECK(found > 0);
        tecs_filter_free(f);
        TW_CHECK(g.w);
        tw_free(g.w);
    }
}

/* ---- from callbacks ------------------------------------------------------ */

typedef struct near_probe {
    tecs_index_t *x;
    tecs_comp_t pos;
    int calls, bad;
    int32_t found[64];          /* a worker part's counts, by row         */
} near_probe;

/* An observer of Position SET: the lookup sees the index up to date. */
static void on_set_near(const tecs_event_t *ev)
{
    near_probe *p = ev->ctx;
    const Position *v = ev->value;
    tecs_entity_t out[4];
    int32_t n = tecs_index_near(p->x, v->x, v->y, 0.0f, out, 4);
    p->calls++;
    bool self = false;
    for (int32_t i = 0; i < n && i < 4; i++)
        self |= out[i] == ev->entity;
    p->bad += n < 1 || !self;
    p->bad += tecs_index_near(p->x, 0, 0, -1.0f, out, 4) != -1;
}

/* A system on the calling thread: the lookup records its errors there,
** and the index is fresh (the burst before the frame is rebuilt). */
static void sys_near_one(tecs_iter_t *it)
{
    near_probe *p = it->ctx;
    const Position *v = TECS_FIELD(it, Position, 0);
    tecs_entity_t out[4];
    for (int32_t i = 0; i < it->count; i++) {
        int32_t n = tecs_index_near(p->x, v[i].x, v[i].y, 0.0f, out, 4);
        p->calls++;
        p->bad += n < 1;
    }
    p->bad += tecs_index_near(p->x, 0, 0, -1.0f, out, 4) != -1;
    p->bad += tecs_last_error(it->world) != TECS_EINVAL;
}

TEST(near_from_observer_and_system)
{
    grid g;
    grid_init(&g, 100, 20.0f, 2.0f);
    near_probe p = { .x = g.x, .pos = g.pos };
    CHECK(tecs_observer_new(g.w, &(tecs_observer_desc_t){
        .event = TECS_ON_SET, .comp = g.pos, .callback = on_set_near, .ctx = &p }) != 0);
    for (int i = 0; i < 30; i++) {
        Position v = { (float)i * 0.5f, 3.0f };
        CHECK_ERR(tecs_set(g.w, g.e[i], g.pos, &v), TECS_OK);
    }
    CHECK_EQ(p.calls, 30);
    CHECK_EQ(p.bad, 0);
    CHECK_EQ(tecs_last_error(g.w), TECS_OK);     /* the observer's error is its own */
    near_probe ps = { .x = g.x, .pos = g.pos };
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    CHECK(tecs_system_new(g.w, &(tecs_system_desc_t){ .name = "near", .query = q,
                                                      .run = sys_near_one, .ctx = &ps }) != 0);
    CHECK_ERR(tecs_progress(g.w, 0.016), TECS_OK);
    CHECK_EQ(ps.calls, 100);
    CHECK_EQ(ps.bad, 0);
    CHECK_EQ(tecs_last_error(g.w), TECS_OK);     /* the system's error is its own */
    tw_free(g.w);
}

/* A parallel system: every row looks up its neighbours, compares with what
** the calling thread found before the run, and tries bad input. */
typedef struct near_job {
    tecs_index_t *x, *hash;
    const int32_t *want;        /* by row of the query                      */
    int32_t rows_seen, bad;     /* (one part per worker: rows_seen adds up) */
} near_job;

static void sys_near(tecs_iter_t *it)
{
    near_job *j = it->ctx;
    const Position *p = TECS_FIELD(it, Position, 0);
    tecs_entity_t out[8];
    for (int32_t i = 0; i < it->count; i++) {
        int32_t n = tecs_index_near(j->x, p[i].x, p[i].y, 3.0f, out, 8);
        if (n < 0 || n != j->want[TECS_ENTITY_INDEX(it->entities[i])])
            j->bad++;
        if (tecs_index_near(j->x, p[i].x, p[i].y, -1.0f, out, 8) != -1 ||
            tecs_index_near(j->hash, 0, 0, 1.0f, out, 8) != -1)
            j->bad++;
    }
    if (tecs_last_error(it->world) != TECS_OK)   /* the worker's own: untouched */
        j->bad++;
}

TEST(parallel_system_index_near)
{
    grid g;
    grid_init(&g, 1000, 60.0f, 3.0f);
    tecs_comp_t hp = TECS_COMPONENT(g.w, Health);
    near_job j = { .x = g.x };
    j.hash = tecs_index_new(g.w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32 });
    static int32_t want[4096];
    j.want = want;
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    CHECK(tecs_system_new(g.w, &(tecs_system_desc_t){
        .name = "near", .query = q, .run = sys_near, .ctx = &j, .parallel = true,
        .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_world_set_threads(g.w, 2), TECS_OK);
    for (int frame = 0; frame < 4; frame++) {
        /* A burst of moves leaves the index stale: it is rebuilt before
        ** the workers start, never by them. */
        for (int i = 0; i < g.n; i++) {
            Position v = { tw_frand(&g.rng, 0, 60), tw_frand(&g.rng, 0, 60) };
            CHECK_ERR(tecs_set(g.w, g.e[i], g.pos, &v), TECS_OK);
        }
        for (int i = 0; i < g.n; i++) {
            const Position *v = TECS_GET(g.w, g.e[i], g.pos, Position);
            want[TECS_ENTITY_INDEX(g.e[i])] = tecs_index_near(g.x, v->x, v->y, 3.0f, NULL, 0);
        }
        if (frame % 2)                  /* stale again: only the run rebuilds it */
            for (int i = 0; i < g.n; i++) {
                Position v = *TECS_GET(g.w, g.e[i], g.pos, Position);
                CHECK_ERR(tecs_set(g.w, g.e[i], g.pos, &v), TECS_OK);
            }
        CHECK_ERR(tecs_progress(g.w, 0.016), TECS_OK);
        CHECK_EQ(j.bad, 0);
    }
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* A split's part: look up every row's neighbours, count the wrong ones. */
typedef struct near_part {
    tecs_query_t *q;
    tecs_index_t *x;
    const int32_t *want;        /* by entity slot                           */
    int32_t k, rows, bad;
} near_part;

static void *near_part_run(void *arg)
{
    near_part *p = arg;
    tecs_iter_t it = TECS_ITER(tecs_query_world(p->q), .query = p->q, .parts = 3, .part = p->k);
    while (tecs_iter_next(&it)) {
        const Position *v = TECS_FIELD(&it, Position, 0);
        for (int32_t i = 0; i < it.count; i++, p->rows++)
            p->bad += tecs_index_near(p->x, v[i].x, v[i].y, 2.5f, NULL, 0) !=
                      p->want[TECS_ENTITY_INDEX(it.entities[i])];
    }
    return NULL;
}

/* A split's parts look up neighbours too, each on a thread of its own
** where there are threads. */
TEST(split_parts_index_near)
{
    grid g;
    grid_init(&g, 300, 30.0f, 2.0f);
    static int32_t want[1024];
    for (int i = 0; i < g.n; i++) {
        Position v = { tw_frand(&g.rng, 0, 30), tw_frand(&g.rng, 0, 30) };
        CHECK_ERR(tecs_set(g.w, g.e[i], g.pos, &v), TECS_OK);
    }
    for (int i = 0; i < g.n; i++) {
        const Position *v = TECS_GET(g.w, g.e[i], g.pos, Position);
        want[TECS_ENTITY_INDEX(g.e[i])] = tecs_index_near(g.x, v->x, v->y, 2.5f, NULL, 0);
    }
    for (int i = 0; i < g.n; i++) {         /* a burst: stale before the split */
        Position same = *TECS_GET(g.w, g.e[i], g.pos, Position);
        CHECK_ERR(tecs_set(g.w, g.e[i], g.pos, &same), TECS_OK);
    }
    CHECK_ERR(tecs_split_begin(g.q, 3), TECS_OK);
    near_part parts[3];
    for (int32_t k = 0; k < 3; k++)
        parts[k] = (near_part){ .q = g.q, .x = g.x, .want = want, .k = k };
#if NEAR_THREADS
    pthread_t t[3];
    for (int32_t k = 0; k < 3; k++)
        CHECK(pthread_create(&t[k], NULL, near_part_run, &parts[k]) == 0);
    for (int32_t k = 0; k < 3; k++)
        pthread_join(t[k], NULL);
#else
    for (int32_t k = 0; k < 3; k++)
        near_part_run(&parts[k]);
#endif
    CHECK_ERR(tecs_split_end(g.q), TECS_OK);
    CHECK_EQ(parts[0].rows + parts[1].rows + parts[2].rows, g.n);
    CHECK_EQ(parts[0].bad + parts[1].bad + parts[2].bad, 0);
    tw_free(g.w);
}

/* ---- points with the ids, and where filters reused ---------------------- */

/* tecs_index_near_xy gives tecs_index_near's ids, in its order, each with
** its component's point; NULL xy is tecs_index_near; bad input as near's. */
TEST(near_xy_points_are_the_components)
{
    grid g;
    grid_init(&g, 600, 100.0f, 5.0f);
    static tecs_entity_t ids[600], ids2[600];
    static float xy[1200];
    for (int k = 0; k < 40; k++) {
        float cx = tw_frand(&g.rng, -10, 110), cy = tw_frand(&g.rng, -10, 110);
        float r = k % 8 == 0 ? tw_frand(&g.rng, 0, 200) : tw_frand(&g.rng, 0, 15);
        int32_t n = tecs_index_near_xy(g.x, cx, cy, r, ids, xy, 600);
        CHECK(n >= 0);
        CHECK_EQ(tecs_index_near(g.x, cx, cy, r, ids2, 600), n);
        CHECK(n <= 0 || memcmp(ids, ids2, (size_t)n * sizeof ids[0]) == 0);
        for (int32_t i = 0; i < n; i++) {
            const Position *p = TECS_GET(g.w, ids[i], g.pos, Position);
            CHECK(p != NULL && p->x == xy[2 * i] && p->y == xy[2 * i + 1]);
        }
        CHECK_EQ(tecs_index_near_xy(g.x, cx, cy, r, ids2, NULL, 600), n);
        for (int i = 0; i < 200; i++) {      /* moves: a burst every other round */
            tecs_entity_t e = g.e[tw_rand(&g.rng) % (uint64_t)g.n];
            Position p = { tw_frand(&g.rng, 0, 100), tw_frand(&g.rng, 0, 100) };
            if (k % 2 || i < 20)
                CHECK_ERR(tecs_set(g.w, e, g.pos, &p), TECS_OK);
        }
    }
    /* A cap below the count: nothing written past it, in ids or in xy. */
    float part[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
    int32_t n = tecs_index_near_xy(g.x, 50, 50, 30, ids, part, 3);
    CHECK(n > 3);
    CHECK(part[5] != -1 && part[6] == -1 && part[7] == -1);
    CHECK_EQ(tecs_index_near_xy(g.x, 50, 50, 30, NULL, NULL, 0), n);
    CHECK_EQ(tecs_index_near_xy(g.x, 50, 50, -1, ids, xy, 600), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_index_near_xy(g.x, 50, 50, 1, NULL, xy, 1), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_EINVAL);
    CHECK_EQ(tecs_index_near_xy(NULL, 0, 0, 1, ids, xy, 600), -1);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* The ids where(q, f) gives, sorted; -1 on error. */
static int32_t where_sorted(tecs_query_t *q, tecs_filter_t *f, tecs_entity_t *out, int32_t cap)
{
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, out, cap);
    if (n > 0)
        qsort(out, (size_t)n, sizeof out[0], cmp_ent);
    return n;
}

/* One filter reset and built again for each of many searches gives what a
** new filter gives, and allocates nothing once it has held the largest:
** circles, boxes, an `or` of overlapping shapes (nothing twice), an `and`
** with a hash condition, key order; a building error does not outlive a
** reset. */
TEST(filter_reset_reuses_one_filter_for_every_search)
{
    grid g;
    grid_init(&g, 800, 100.0f, 6.0f);
    tecs_comp_t hp = TECS_COMPONENT(g.w, Health);
    for (int i = 0; i < g.n; i += 2)
        TECS_SET(g.w, g.e[i], hp, Health, {i % 7});
    tecs_index_t *h = tecs_index_new(g.w, &(tecs_index_desc_t){ .comp = hp,
                                                                 .type = TECS_KEY_I32 });
    tecs_index_t *o = tecs_index_new(g.w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    tecs_filter_t *f = tecs_filter_new(g.w);
    static tecs_entity_t got[800], want[800];
    /* The largest search first: every point, the most conditions. */
    tecs_filter_and(f, tecs_filter_or(f, tecs_filter_radius(f, g.x, 50, 50, 1000),
                                      tecs_filter_box(f, g.x, 0, 0, 1, 1)),
                    tecs_filter_cmp(f, h, TECS_NE, tecs_key_int(-1)));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), g.n / 2);
    CHECK_ERR(tecs_filter_order(f, o, true), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), g.n / 2);
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    tecs_filter_radius(f, g.x, 50, 50, 1000);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), g.n);
    size_t mem = tecs_world_memory(g.w);
    for (int k = 0; k < 120; k++) {
        float cx = tw_frand(&g.rng, -10, 110), cy = tw_frand(&g.rng, -10, 110);
        float r = tw_frand(&g.rng, 0, 20);
        tecs_filter_t *fresh = tecs_filter_new(g.w);
        for (int pass = 0; pass < 2; pass++) {
            tecs_filter_t *b = pass ? fresh : f;
            if (pass == 0)
                CHECK_ERR(tecs_filter_reset(f), TECS_OK);
            tecs_cond_t c = tecs_filter_radius(b, g.x, cx, cy, r);
            if (k % 3 == 1)     /* overlapping shapes: an `or` */
                c = tecs_filter_or(b, c, tecs_filter_box(b, g.x, cx, cy, cx + r, cy + 2 * r));
            if (k % 3 == 2)
                c = tecs_filter_or(b, tecs_filter_radius(b, g.x, cx + r, cy, r), c);
            if (k % 5 == 4)
                tecs_filter_and(b, c, tecs_filter_cmp(b, h, TECS_NE, tecs_key_int(3)));
            if (k % 7 == 6)
                CHECK_ERR(tecs_filter_order(b, o, k % 2), TECS_OK);
        }
        int32_t n = where_sorted(q, f, got, 800), nw = where_sorted(q, fresh, want, 800);
        CHECK(n >= 0 && n == nw);
        CHECK(n <= 0 || memcmp(got, want, (size_t)n * sizeof got[0]) == 0);
        for (int32_t i = 1; i < n; i++)
            CHECK(got[i] != got[i - 1]);
        tecs_filter_free(fresh);
        CHECK_EQ(tecs_world_memory(g.w), mem);
    }
    /* A building error is the filter's until a reset. */
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    CHECK_EQ(tecs_filter_radius(f, h, 0, 0, 1), -1);
    CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), -1);
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    CHECK_EQ(tecs_filter_error(f), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), g.n);   /* empty: all match */
    CHECK_EQ(tecs_filter_radius(f, g.x, 50, 50, 1000), 0);    /* handles from 0 */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), g.n);
    CHECK_ERR(tecs_filter_reset(NULL), TECS_EINVAL);
    tecs_filter_free(f);
    TW_CHECK(g.w);
    tw_free(g.w);
}

/* A reset while the filter's iteration is open, from inside it, and from
** an each-function of another filter's iteration; a filter naming an
** index that was freed works again once reset and built on another. */
typedef struct reset_probe {
    tecs_filter_t *own, *other;
    tecs_index_t *x;
    int32_t calls, bad;
} reset_probe;

static bool each_reset(tecs_world_t *w, tecs_entity_t e, void *const *vals, void *ctx)
{
    reset_probe *p = ctx;
    const Position *pos = vals[0];
    (void)e;
    p->calls++;
    if (tecs_filter_reset(p->own) != TECS_EBUSY || tecs_last_error(w) != TECS_EBUSY)
        p->bad++;
    if (tecs_filter_reset(p->other) != TECS_OK ||
        tecs_filter_radius(p->other, p->x, pos->x, pos->y, 3) != 0)
        p->bad++;
    return false;
}

TEST(filter_reset_busy_in_callbacks_and_after_index_free)
{
    grid g;
    grid_init(&g, 200, 40.0f, 4.0f);
    tecs_query_t *q = TECS_QUERY(g.w, { .comp = g.pos, .access = TECS_READ });
    tecs_filter_t *f = tecs_filter_new(g.w), *o = tecs_filter_new(g.w);
    tecs_filter_radius(f, g.x, 20, 20, 8);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0);
    CHECK(n > 0);
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q, .where = f);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_filter_reset(f), TECS_EBUSY);
    CHECK_EQ(tecs_filter_error(f), TECS_OK);            /* nothing changed */
    tecs_iter_fini(&it);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), n);
    reset_probe p = { f, o, g.x, 0, 0 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, each_reset, &p), TECS_OK);
    CHECK_EQ(p.calls, n);
    CHECK_EQ(p.bad, 0);
    CHECK(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = o) }, NULL, 0) > 0);
    /* The index goes: the filter fails, until reset onto another one. */
    tecs_index_t *y = tecs_index_new(g.w, &(tecs_index_desc_t){
        .comp = g.pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset_y = offsetof(Position, y), .cell_size = 10 });
    CHECK_ERR(tecs_index_free(g.x), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(g.w), TECS_ENOENT);
    CHECK_ERR(tecs_filter_reset(f), TECS_OK);
    tecs_filter_radius(f, y, 20, 20, 8);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, NULL, 0), n);
    tecs_filter_free(f);
    tecs_filter_free(o);
    TW_CHECK(g.w);
    tw_free(g.w);
}
