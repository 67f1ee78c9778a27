/*
** boids.h — the flock simulation of the demo, built on the public tinyecs
** API only. A world holds boids, predators and obstacles; systems in the
** frame pipeline find neighbours, steer, move, wrap and count. Neighbours
** come from a spatial index (O(n) a frame) or, in naive mode, from a scan of
** every boid (O(n^2)); both apply the same distance test and sum neighbours
** in the same order, so from one seed they compute identical flocks. The
** search and steering run on the world's workers; the flock is the same
** for any number of them.
*/
#ifndef BOIDS_H
#define BOIDS_H

#include <stdbool.h>
#include <stdint.h>
#include "tinyecs.h"
#include "tinyecs/system.h"

/* The demo's defaults, and the most it simulates: beyond these a run takes
 * too long to watch, or the hazards cover the world. */
#define BOIDS_DEFAULT_BOIDS     10000
#define BOIDS_DEFAULT_PREDATORS 6
#define BOIDS_DEFAULT_OBSTACLES 10
#define BOIDS_MAX_BOIDS         1000000
#define BOIDS_MAX_HAZARDS       1000    /* predators; obstacles likewise  */

/** What to simulate. The counts are taken as given. */
typedef struct boids_config {
    int32_t boids;              /* population, 1 .. BOIDS_MAX_BOIDS       */
    int32_t predators;          /* 0 .. BOIDS_MAX_HAZARDS                 */
    int32_t obstacles;          /* 0 .. BOIDS_MAX_HAZARDS                 */
    float size;                 /* side of the square world (0: 1024; at
                                   least 200, twice the widest search)    */
    uint64_t seed;              /* the same seed gives the same run       */
    bool naive;                 /* all-pairs neighbour search (then the
                                   search runs on one thread)             */
    int32_t threads;            /* the world's workers (0, 1: none); the
                                   run is the same for every count        */
} boids_config;

typedef struct boids_sim boids_sim;

/** What is drawn: one call per agent. */
typedef enum boids_kind { BOIDS_BOID, BOIDS_PREDATOR, BOIDS_OBSTACLE } boids_kind;

typedef void (*boids_agent_fn)(void *ctx, boids_kind kind, float x, float y,
                               float vx, float vy, float radius);

/** Counts and flock measures after the last frame. */
typedef struct boids_counts {
    int32_t boids, predators, obstacles, prefabs;
    int32_t entities;           /* the world's: the prefabs' included      */
    int64_t births, deaths;
    double mean_speed;          /* world units per second                 */
    double polarisation;        /* |mean heading|: 0 disorder .. 1 aligned */
} boids_counts;

/** One system's timing, from tecs_system_stats. */
typedef struct boids_timing {
    const char *name;
    const char *phase;
    int64_t runs;
    double ms_per_run;
    double entities_per_run;
} boids_timing;

#define BOIDS_MAX_SYSTEMS 12

/** Build a world and its flock. @return NULL when a count is out of its
 *  range or memory runs out. */
boids_sim *boids_new(const boids_config *config);

/** Save the run (its world, and its random state, counts and config as
 *  the world's BoidsState resource) to a snapshot file.
 *  @return TECS_OK, TECS_EINVAL (the file cannot be written) or the
 *  library's error. */
tecs_err_t boids_save(boids_sim *sim, const char *path);
/** Go on with a run boids_save saved: its config (but naive and threads,
 *  from config) and flock come from the file. @return NULL with *err and
 *  *msg (valid until the next call) when the file cannot be read or is not
 *  a boids run. */
boids_sim *boids_load(const boids_config *config, const char *path, tecs_err_t *err,
                      const char **msg);
/** Free the world and everything of the sim; NULL does nothing. */
void boids_free(boids_sim *sim);

/** Run one frame of dt seconds, then apply the delayed births and deaths.
 *  @return TECS_OK or the library's error. */
tecs_err_t boids_step(boids_sim *sim, float dt);

/** The workers the world got (1 when its threads could not start). */
int32_t boids_threads(const boids_sim *sim);

/** The seed of the run (a loaded run's is the saved one). */
uint64_t boids_seed(const boids_sim *sim);
/** The world's side length. */
float boids_size(const boids_sim *sim);

/** Call fn for every obstacle, boid and predator (in that order). */
void boids_each(boids_sim *sim, boids_agent_fn fn, void *ctx);

/** Counts after the last frame. */
boids_counts boids_count(boids_sim *sim);

/** Per-system timings, in pipeline order. @return how many (<= cap). */
int32_t boids_timings(boids_sim *sim, boids_timing *out, int32_t cap);

/** The boids within the view radius of boid `e`, in the order they are
 *  summed (by entity slot), by the spatial index or by a full scan.
 *  @return their number (may exceed cap), or -1 if e is not a live boid.
 *  For tests. */
int32_t boids_neighbours(boids_sim *sim, tecs_entity_t e, bool naive,
                         tecs_entity_t *out, int32_t cap);

/** The baseline the spatial index is measured against: the flockmate sums
 *  of every boid (the neighbours system's, hazards aside) by a uniform grid
 *  over plain arrays (cell = the view radius), written by hand and rebuilt
 *  each time from the flock's positions, on the calling thread.
 *  @return its ms per run, the mean of reps runs; -1 out of memory. */
double boids_grid_ms(boids_sim *sim, int32_t reps);

/** Ids of live boids in query order. @return their number (may exceed cap). */
int32_t boids_ids(boids_sim *sim, tecs_entity_t *out, int32_t cap);

/** A hash of the random state, every boid's and predator's id, position
 *  and velocity bits, and every boid's age and life span. */
uint64_t boids_checksum(boids_sim *sim);

/** The world, for inspection. */
tecs_world_t *boids_world(boids_sim *sim);

#endif /* BOIDS_H */
