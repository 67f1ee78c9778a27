/*
** test_grid.c — the spatial index's grid (src/index/grid.c): points that
** move between cells many times, one by one and in bursts, cells emptied
** and filled again (more points than a block holds), NaN coordinates,
** huge coordinates in the clamped outer cells, and out of memory at every
** allocation of a workload that makes cells and blocks; each checked
** against a scan, through tecs_index_near and a where, and by
** tecs_world_check's verification of the grid; and, white-box, the cell
** table's probe lengths over a dense square of cells.
*/
#include "index_fixture.h"
#include "index/internal.h" /* the cell table and cell_hash, for one case */

typedef struct gw {
    tecs_world_t *w;
    tecs_comp_t pos;
    tecs_index_t *x;
    tecs_query_t *read;         /* Position (read)                          */
    tecs_query_t *write;        /* Position (write)                         */
    tecs_filter_t *f;
    tecs_entity_t e[400];
    int n;
    uint64_t rng;
} gw;

static void gw_index(gw *g, float cell)
{
    g->x = tecs_index_new(g->w, &(tecs_index_desc_t){
        .comp = g->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = cell });
    CHECK(g->x != NULL);
}

/* n points in [0, side)^2, a query and a filter; no index yet. */
static void gw_points(gw *g, tecs_world_t *w, int n, float side)
{
    memset(g, 0, sizeof *g);
    g->rng = 0x9e3779b97f4a7c15ull;
    g->w = w;
    g->pos = TECS_COMPONENT(w, Position);
    for (int i = 0; i < n; i++) {
        Position p = { tw_frand(&g->rng, 0, side), tw_frand(&g->rng, 0, side) };
        g->e[g->n] = tecs_new(w);
        CHECK_ERR(tecs_set(w, g->e[g->n++], g->pos, &p), TECS_OK);
    }
    g->read = TECS_QUERY(w, { .comp = g->pos, .access = TECS_READ });
    g->write = TECS_QUERY(w, { .comp = g->pos, .access = TECS_WRITE });
    g->f = tecs_filter_new(w);
    CHECK(g->read != NULL && g->write != NULL && g->f != NULL);
}

/* n points in [0, side)^2, then a spatial index of cell `cell`. */
static void gw_init(gw *g, tecs_world_t *w, int n, float side, float cell)
{
    gw_points(g, w, n, side);
    gw_index(g, cell);
}

/* Every point moves by up to d along each axis, through a write term. */
static void gw_shake(gw *g, float d)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(g->write), .query = g->write);
    while (tecs_iter_next(&it)) {
        Position *p = TECS_FIELD(&it, Position, 0);
        for (int32_t i = 0; i < it.count; i++) {
            p[i].x = p[i].x + tw_frand(&g->rng, -d, d);
            p[i].y = p[i].y + tw_frand(&g->rng, -d, d);
        }
    }
}

static int ent_order(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

/* The entities within r of (cx, cy), by a scan, sorted. */
static int scan(gw *g, float cx, float cy, float r, tecs_entity_t *out)
{
    int n = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(g->read), .query = g->read);
    while (tecs_iter_next(&it)) {
        const Position *p = TECS_FIELD(&it, Position, 0);
        for (int32_t i = 0; i < it.count; i++) {
            double dx = (double)p[i].x - cx, dy = (double)p[i].y - cy;
            if (dx * dx + dy * dy <= (double)r * r)
                out[n++] = it.entities[i];
        }
    }
    qsort(out, (size_t)n, sizeof *out, ent_order);
    return n;
}

/* tecs_index_near and a where of the circle give the scan's entities. */
static void check_circle(gw *g, float cx, float cy, float r)
{
    static tecs_entity_t want[400], got[400], xy_e[400];
    static float xy[800];
    int n = scan(g, cx, cy, r, want);
    int32_t m = tecs_index_near(g->x, cx, cy, r, got, 400);
    CHECK_EQ(m, n);
    CHECK_EQ(tecs_index_near_xy(g->x, cx, cy, r, xy_e, xy, 400), n);
    for (int32_t i = 0; i < m && i < 400; i++) {
        const Position *p = TECS_GET(g->w, xy_e[i], g->pos, Position);
        CHECK(p != NULL && memcmp(&p->x, &xy[2 * i], 4) == 0 &&
              memcmp(&p->y, &xy[2 * i + 1], 4) == 0);
    }
    qsort(got, (size_t)(m > 0 ? m : 0), sizeof *got, ent_order);
    CHECK(m != n || memcmp(got, want, (size_t)n * sizeof *got) == 0);
    CHECK_ERR(tecs_filter_reset(g->f), TECS_OK);
    tecs_filter_radius(g->f, g->x, cx, cy, r);
    int32_t k = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(g->read), .query = g->read, .where = g->f) }, got, 400);
    CHECK_EQ(k, n);
    qsort(got, (size_t)(k > 0 ? k : 0), sizeof *got, ent_order);
    CHECK(k != n || memcmp(got, want, (size_t)n * sizeof *got) == 0);
}

/* Circles over the square [0, side)^2 and a little around it. */
static void check_circles(gw *g, float side, int count)
{
    for (int i = 0; i < count; i++)
        check_circle(g, tw_frand(&g->rng, -side / 8, side * 9 / 8),
                     tw_frand(&g->rng, -side / 8, side * 9 / 8),
                     i % 7 == 0 ? tw_frand(&g->rng, 0, side) : tw_frand(&g->rng, 0, side / 6));
    TW_CHECK(g->w);
}

static void move_to(gw *g, tecs_entity_t e, float x, float y)
{
    Position p = { x, y };
    CHECK_ERR(tecs_set(g->w, e, g->pos, &p), TECS_OK);
}

TEST(grid_points_move_between_cells_many_times)
{
    gw g;
    gw_init(&g, tw_new(), 200, 40.0f, 4.0f);
    for (int round = 0; round < 40; round++) {
        /* Fewer sets than a burst between two uses: each is a re-key. */
        for (int i = 0; i < 30; i++) {
            tecs_entity_t e = g.e[tw_rand(&g.rng) % (uint64_t)g.n];
            move_to(&g, e, tw_frand(&g.rng, 0, 40), tw_frand(&g.rng, 0, 40));
        }
        CHECK_EQ(tecs_index_count(g.x), g.n);
        if (round % 4 == 0)
            check_circles(&g, 40.0f, 20);
    }
    /* Back and forth between two cells, within a cell too. */
    for (int i = 0; i < 500; i++) {
        tecs_entity_t e = g.e[i % 50];
        move_to(&g, e, i % 2 ? 1.5f : 37.5f, (float)(i % 3));
        if (i % 40 == 0) {
            CHECK_EQ(tecs_index_count(g.x), g.n);
            TW_CHECK(g.w);
        }
    }
    check_circles(&g, 40.0f, 40);
    tw_free(g.w);
}

TEST(grid_cells_emptied_and_refilled)
{
    gw g;
    gw_init(&g, tw_new(), 0, 10.0f, 10.0f);
    for (int i = 0; i < 37; i++) {          /* several blocks in one cell */
        g.e[g.n] = tecs_new(g.w);
        move_to(&g, g.e[g.n++], 1.0f + 0.2f * (float)i, 2.0f);
    }
    CHECK_EQ(tecs_index_count(g.x), 37);
    check_circles(&g, 10.0f, 10);
    for (int pass = 0; pass < 3; pass++) {
        /* Out of the cell one by one, from the middle and both ends ... */
        for (int i = 0; i < g.n; i++) {
            int k = (i * 7 + pass) % g.n;
            move_to(&g, g.e[k], 15.0f + (float)(i % 4), 25.0f);
            if (i % 5 == 0) {
                CHECK_EQ(tecs_index_count(g.x), g.n);
                TW_CHECK(g.w);
            }
        }
        check_circle(&g, 5, 5, 5);              /* the emptied cell */
        CHECK_EQ(tecs_index_near(g.x, 5, 5, 4, NULL, 0), 0);
        check_circles(&g, 30.0f, 10);
        /* ... and back, some removed and added again on the way. */
        for (int i = 0; i < g.n; i++) {
            move_to(&g, g.e[i], 9.0f - 0.2f * (float)i, 1.0f);
            if (i % 9 == 0) {
                CHECK_ERR(tecs_remove(g.w, g.e[i], g.pos), TECS_OK);
                move_to(&g, g.e[i], 9.0f - 0.2f * (float)i, 1.0f);
            }
            if (i % 5 == 0)
                CHECK_EQ(tecs_index_count(g.x), g.n);
        }
        check_circles(&g, 30.0f, 10);
        CHECK_EQ(tecs_index_near(g.x, 5, 5, 8, NULL, 0), g.n);
    }
    tw_free(g.w);
}

/* A point that wanders over ever new cells leaves no cell behind: the
** grid's memory stays what a few cells take. */
TEST(grid_wandering_point_leaves_no_cells)
{
    gw g;
    gw_init(&g, tw_new(), 20, 10.0f, 1.0f);
    for (int i = 0; i < 200; i++)               /* the grid at its working size */
        move_to(&g, g.e[0], 20.0f + (float)(i % 50), 3.0f);
    CHECK_EQ(tecs_index_count(g.x), g.n);
    size_t mem = tecs_world_memory(g.w);
    for (int i = 0; i < 20000; i++) {
        move_to(&g, g.e[i % 2], 100.0f + (float)i * 1.5f, -50.0f - (float)i);
        if (i % 50 == 0)
            CHECK_EQ(tecs_index_count(g.x), g.n);
    }
    CHECK(tecs_world_memory(g.w) <= mem + 1024);
    check_circles(&g, 10.0f, 10);
    tw_free(g.w);
}

TEST(grid_burst_of_moves_then_single_moves)
{
    gw g;
    gw_init(&g, tw_new(), 400, 100.0f, 5.0f);
    for (int frame = 0; frame < 6; frame++) {
        gw_shake(&g, 6.0f);     /* a burst: the index rebuilt at its next use */
        check_circles(&g, 100.0f, 15);
        for (int i = 0; i < 20; i++)
            move_to(&g, g.e[tw_rand(&g.rng) % (uint64_t)g.n], tw_frand(&g.rng, 0, 100),
                    tw_frand(&g.rng, 0, 100));
        check_circles(&g, 100.0f, 5);
    }
    tw_free(g.w);
}

TEST(grid_nan_coordinates_are_in_no_cell)
{
    gw g;
    gw_init(&g, tw_new(), 50, 20.0f, 2.0f);
    for (int round = 0; round < 4; round++) {
        int nan = 0;
        for (int i = 0; i < 10; i++) {
            move_to(&g, g.e[i], i % 2 ? NAN : 3.0f, i % 3 ? 3.0f : NAN);
            nan += i % 2 || i % 3 == 0;
        }
        CHECK_EQ(tecs_index_count(g.x), g.n);
        TW_CHECK(g.w);
        check_circles(&g, 20.0f, 10);
        CHECK_EQ(tecs_index_near(g.x, 3, 3, 1000, NULL, 0), g.n - nan);
        for (int i = 0; i < 10; i++)
            move_to(&g, g.e[i], 3.0f + (float)i / 8, 3.0f);
        TW_CHECK(g.w);
        CHECK_EQ(tecs_index_near(g.x, 3, 3, 1000, NULL, 0), g.n);
        check_circles(&g, 20.0f, 5);
    }
    /* NaN points through a rebuild too. */
    for (int i = 0; i < 10; i++)
        move_to(&g, g.e[i], NAN, NAN);
    CHECK_ERR(tecs_index_free(g.x), TECS_OK);
    gw_index(&g, 2.0f);
    TW_CHECK(g.w);
    check_circles(&g, 20.0f, 10);
    tw_free(g.w);
}

TEST(grid_huge_coordinates_in_clamped_cells)
{
    gw g;
    gw_init(&g, tw_new(), 20, 10.0f, 1.0f);
    const float far[] = { 1e30f, -1e30f, 3e38f, -3e38f, 2e9f, -2e9f, 1.5e9f };
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            tecs_entity_t e = tecs_new(g.w);
            g.e[g.n++] = e;
            move_to(&g, e, far[i], far[j]);
        }
    CHECK_EQ(tecs_index_count(g.x), g.n);
    TW_CHECK(g.w);
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 7; j++) {
            check_circle(&g, far[i], far[j], 1.0f);     /* one clamped cell */
            check_circle(&g, far[i], far[j], 0.0f);
            CHECK(tecs_index_near(g.x, far[i], far[j], 0.5f, NULL, 0) >= 1);
            check_circle(&g, far[i] * 0.999f, far[j], 1.0f);
        }
    check_circles(&g, 10.0f, 20);
    /* Moves between the outer cells and the middle. */
    for (int k = 0; k < 49; k++) {
        tecs_entity_t e = g.e[20 + k];
        move_to(&g, e, k % 2 ? 5.0f : far[k % 7], far[(k + 3) % 7]);
    }
    TW_CHECK(g.w);
    for (int i = 0; i < 7; i++)
        check_circle(&g, far[i], far[(i + 3) % 7], 2.0f);
    tw_free(g.w);
}

/* A dense square of 240 x 240 cells, a point in each: every cell of the
** table lies a few slots from its home slot, so a lookup (a query's cell
** walk, a point's move) probes a few slots, not a cluster of hundreds. */
TEST(grid_dense_square_keeps_cell_probes_short)
{
    enum { SIDE = 240, N = SIDE * SIDE };
    tecs_world_t *w = tecs_world_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    Position *p = malloc(N * sizeof *p);
    CHECK(p != NULL);
    for (int i = 0; i < N; i++)
        p[i] = (Position){ (float)(i / SIDE) + 0.5f, (float)(i % SIDE) + 0.5f };
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    CHECK(tecs_new_bulk(w, a, N, NULL, 1, (tecs_value_t[]){ { pos, p } }) == TECS_OK);
    free(p);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = 1 });
    CHECK(x != NULL);
    CHECK(x->ncells == N);
    uint32_t mask = (uint32_t)x->nctab - 1, longest = 0;
    for (int32_t s = 0; s < x->nctab; s++) {
        if (x->ctab[s].key == NOWHERE_CELL)
            continue;
        uint32_t d = ((uint32_t)s - cell_hash(x->ctab[s].key)) & mask;
        longest = d > longest ? d : longest;
    }
    CHECK(longest < 32);
    tecs_entity_t out[16];
    float xy[32];
    CHECK(tecs_index_near_xy(x, 120.5f, 7.5f, 0.25f, out, xy, 16) == 1);
    CHECK(xy[0] == 120.5f && xy[1] == 7.5f);
    CHECK(tecs_world_check(w) == TECS_OK);
    tecs_world_free(w);
}

/* The points of a workload that makes cells and blocks; a failed
** allocation leaves the index as it was (checked by the scan and by
** tecs_world_check); true if an allocation failed. */
static bool grid_oom_run(long k)
{
    tw_alloc al = { 0 };
    gw g;
    gw_points(&g, tw_new_ex(&al, 16), 30, 8.0f);
    uint64_t rng = 77;
    al.fail_at = k ? al.calls + k : 0;
    size_t mem = tecs_world_memory(g.w);
    g.x = tecs_index_new(g.w, &(tecs_index_desc_t){
        .comp = g.pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = 1.0f });
    if (g.x == NULL) {                          /* made again, allocations working */
        CHECK_EQ(tecs_last_error(g.w), TECS_ENOMEM);
        CHECK_EQ(tecs_world_memory(g.w), mem);
        al.fail_at = 0;
        gw_index(&g, 1.0f);
    }
    for (int i = 0; i < 150; i++) {
        int pick = (int)(tw_rand(&rng) % 4);
        tecs_entity_t e = g.e[tw_rand(&rng) % (uint64_t)g.n];
        Position p = { tw_frand(&rng, -40, 40), tw_frand(&rng, -40, 40) };
        if (pick == 0 && g.n < 400) {           /* a birth, in a new cell often */
            e = tecs_new(g.w);
            if (e == 0) {
                CHECK_EQ(tecs_last_error(g.w), TECS_ENOMEM);
                continue;
            }
            g.e[g.n++] = e;
        }
        bool had = tecs_has(g.w, e, g.pos);
        Position before = had ? *TECS_GET(g.w, e, g.pos, Position) : p;
        tecs_err_t err = pick == 3 && had ? tecs_remove(g.w, e, g.pos)
                                          : tecs_set(g.w, e, g.pos, &p);
        if (err != TECS_OK) {
            CHECK_EQ(err, TECS_ENOMEM);
            CHECK_EQ(tecs_has(g.w, e, g.pos), had);
            if (had)
                CHECK(memcmp(TECS_GET(g.w, e, g.pos, Position), &before, sizeof before) == 0);
        }
        if (i % 10 == 0)
            tecs_index_count(g.x);
    }
    /* A burst, then its rebuild at the next use: an error, or the new
    ** points; the index is never seen stale. */
    gw_shake(&g, 30.0f);
    int32_t n = tecs_index_count(g.x);
    CHECK(n >= 0 || tecs_last_error(g.w) == TECS_ENOMEM);
    bool hit = al.failures > 0;
    al.fail_at = 0;
    TW_CHECK(g.w);
    CHECK(tecs_index_count(g.x) >= 0);
    for (int i = 0; i < 12; i++)
        check_circle(&g, tw_frand(&rng, -45, 45), tw_frand(&rng, -45, 45), tw_frand(&rng, 0, 20));
    tw_free(g.w);
    return hit;
}

TEST(grid_out_of_memory_at_every_allocation)
{
    CHECK(!grid_oom_run(0));
    long k = 1;
    while (grid_oom_run(k) && k < 2000)
        k++;
    CHECK(k > 10 && k < 2000);
}
