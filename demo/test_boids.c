/*
** test_boids.c — checks of the demo's deterministic parts, one CTest case
** per argument: the spatial search finds exactly the flockmates the full
** scan finds, in the same order; a whole run is the same bit for bit with
** either search, and with 1 or 2 worker threads (the search and steering
** are parallel systems); the population holds while boids die and are born through
** the delayed calls; a flock without predators or obstacles runs; counts out
** of range are refused; the line rasteriser and the heading colours.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boids.h"
#include "render.h"

static int failures;

#define CHECK(cond)                                                             \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                         \
        }                                                                       \
    } while (0)

/* A dense little world, so that searches find many flockmates and many
 * circles cross the wrapped edges. */
static boids_sim *small_sim(bool naive)
{
    return boids_new(&(boids_config){ .boids = 900, .predators = 3, .obstacles = 4,
                                      .size = 200.0f, .seed = 42, .naive = naive });
}

/* Every boid: the index and the scan give the same flockmates. @return how
 * many flockmates were seen in all. */
static long same_neighbours(boids_sim *s)
{
    enum { CAP = 1024 };
    static tecs_entity_t ids[2048], a[CAP], b[CAP];
    int32_t n = boids_ids(s, ids, 2048);
    long total = 0;
    CHECK(n > 0 && n <= 2048);
    for (int32_t i = 0; i < n && i < 2048; i++) {
        int32_t na = boids_neighbours(s, ids[i], false, a, CAP);
        int32_t nb = boids_neighbours(s, ids[i], true, b, CAP);
        CHECK(na == nb && na >= 0 && na <= CAP);
        if (na != nb || na < 0 || na > CAP)
            return -1;
        CHECK(memcmp(a, b, (size_t)na * sizeof a[0]) == 0);
        total += na;
    }
    return total;
}

static void test_neighbours(void)
{
    boids_sim *s = small_sim(false);
    CHECK(s != NULL);
    long first = same_neighbours(s);
    CHECK(first > 900);                     /* not vacuous: many flockmates */
    for (int f = 0; f < 40; f++)
        CHECK(boids_step(s, 1.0f / 60.0f) == TECS_OK);
    CHECK(same_neighbours(s) > 900);
    CHECK(boids_neighbours(s, 0, false, NULL, 0) == -1);
    boids_free(s);
}

static void test_same_run(void)
{
    boids_sim *a = small_sim(false), *b = small_sim(true);
    CHECK(a != NULL && b != NULL);
    uint64_t start = boids_checksum(a);
    CHECK(start == boids_checksum(b));
    for (int f = 0; f < 60; f++) {
        CHECK(boids_step(a, 1.0f / 60.0f) == TECS_OK);
        CHECK(boids_step(b, 1.0f / 60.0f) == TECS_OK);
        CHECK(boids_checksum(a) == boids_checksum(b));
    }
    CHECK(boids_checksum(a) != start);      /* the flock did move */
    boids_counts ka = boids_count(a), kb = boids_count(b);
    CHECK(ka.births == kb.births && ka.deaths == kb.deaths);
    CHECK(ka.mean_speed == kb.mean_speed);
    boids_free(a);
    boids_free(b);
}

/* One seed on 1 thread and on 2 (and the all-pairs search on 2, which
 * runs its search on one): the same flock, frame by frame. */
static void test_threads(void)
{
    boids_config cfg = { .boids = 900, .predators = 3, .obstacles = 4, .size = 200.0f,
                         .seed = 42, .threads = 1 };
    boids_sim *a = boids_new(&cfg);
    cfg.threads = 2;
    boids_sim *b = boids_new(&cfg);
    cfg.naive = true;
    boids_sim *c = boids_new(&cfg);
    CHECK(a != NULL && b != NULL && c != NULL);
    if (a == NULL || b == NULL || c == NULL)
        return;
    CHECK(boids_threads(a) == 1 && boids_threads(b) == 2);
    for (int f = 0; f < 60; f++) {
        CHECK(boids_step(a, 1.0f / 60.0f) == TECS_OK);
        CHECK(boids_step(b, 1.0f / 60.0f) == TECS_OK);
        CHECK(boids_step(c, 1.0f / 60.0f) == TECS_OK);
        CHECK(boids_checksum(a) == boids_checksum(b));
        CHECK(boids_checksum(a) == boids_checksum(c));
    }
    boids_counts ka = boids_count(a), kb = boids_count(b);
    CHECK(ka.births == kb.births && ka.deaths == kb.deaths && ka.deaths > 0);
    CHECK(tecs_world_check(boids_world(b)) == TECS_OK);
    boids_free(a);
    boids_free(b);
    boids_free(c);
}

static void test_population(void)
{
    boids_sim *s = small_sim(false);
    CHECK(s != NULL);
    for (int f = 0; f < 120; f++) {
        CHECK(boids_step(s, 1.0f / 60.0f) == TECS_OK);
        boids_counts k = boids_count(s);
        CHECK(k.boids == 900 && k.predators == 3 && k.obstacles == 4);
        CHECK(k.entities == 907 + k.prefabs);       /* the live ones and the prefabs */
        CHECK(k.births == k.deaths);
        CHECK(tecs_delayed_new_count(boids_world(s)) == 0);
    }
    boids_counts k = boids_count(s);
    CHECK(k.deaths > 10);                   /* boids did come and go */
    CHECK(k.mean_speed > 10.0 && k.polarisation >= 0.0 && k.polarisation <= 1.0);
    CHECK(tecs_world_check(boids_world(s)) == TECS_OK);
    boids_free(s);
}

/* No predators and no obstacles: a flock with nothing to flee. */
static void test_no_hazards(void)
{
    boids_sim *s = boids_new(&(boids_config){ .boids = 300, .predators = 0, .obstacles = 0,
                                              .size = 200.0f, .seed = 7 });
    CHECK(s != NULL);
    if (s == NULL)
        return;
    for (int f = 0; f < 60; f++)
        CHECK(boids_step(s, 1.0f / 60.0f) == TECS_OK);
    boids_counts k = boids_count(s);
    CHECK(k.boids == 300 && k.predators == 0 && k.obstacles == 0 &&
          k.entities == 300 + k.prefabs);
    CHECK(tecs_world_check(boids_world(s)) == TECS_OK);
    boids_free(s);
}

/* Counts outside their ranges build nothing. */
static void test_config_range(void)
{
    static const boids_config bad[] = {
        { .boids = 0 },
        { .boids = BOIDS_MAX_BOIDS + 1 },
        { .boids = 10, .predators = -1 },
        { .boids = 10, .obstacles = BOIDS_MAX_HAZARDS + 1 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(boids_new(&bad[i]) == NULL);
    boids_sim *s = boids_new(&(boids_config){ .boids = 1, .predators = BOIDS_MAX_HAZARDS,
                                              .obstacles = 0, .seed = 3 });
    CHECK(s != NULL);
    boids_free(s);
}

static uint32_t pixel(const canvas *c, int x, int y)
{
    const uint8_t *p = c->rgb + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Pixels of colour rgb on the canvas. */
static int count_colour(const canvas *c, uint32_t rgb)
{
    int n = 0;
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++)
            n += pixel(c, x, y) == rgb;
    return n;
}

static void test_raster(void)
{
    canvas c;
    CHECK(canvas_init(&c, 32, 32));
    canvas_clear(&c, 0);
    canvas_line(&c, 2, 3, 20, 9, 0xffffffu);        /* shallow: one pixel a column */
    CHECK(pixel(&c, 2, 3) == 0xffffffu && pixel(&c, 20, 9) == 0xffffffu);
    CHECK(count_colour(&c, 0xffffffu) == 19);
    canvas_line(&c, 30, 30, 30, 0, 0x00ff00u);      /* vertical, upwards */
    CHECK(count_colour(&c, 0x00ff00u) == 31);
    canvas_line(&c, -10, 5, 40, 5, 0x0000ffu);      /* clipped at the edges */
    CHECK(pixel(&c, 0, 5) == 0x0000ffu && pixel(&c, 31, 5) == 0x0000ffu);
    canvas_disc(&c, 16.0f, 16.0f, 3.0f, 0xff0000u);
    int disc = count_colour(&c, 0xff0000u);
    CHECK(disc >= 24 && disc <= 32);                /* about pi * 9 */
    canvas_fini(&c);
    CHECK(heading_colour(1.0f, 0.0f) == 0xff0000u);
    CHECK(heading_colour(-1.0f, 0.0f) == 0x00ffffu);
    CHECK(heading_colour(0.0f, 1.0f) != heading_colour(0.0f, -1.0f));
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*fn)(void); } cases[] = {
        { "neighbours", test_neighbours }, { "same_run", test_same_run },
        { "threads", test_threads },
        { "population", test_population }, { "no_hazards", test_no_hazards },
        { "config_range", test_config_range }, { "raster", test_raster } };
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (argc < 2 || strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            ran++;
        }
    if (ran == 0) {
        fprintf(stderr, "test_boids: no case named %s\n", argv[1]);
        return 2;
    }
    if (failures > 0)
        fprintf(stderr, "test_boids: %d checks failed\n", failures);
    return failures > 0;
}
