/*
** bench.h — what the scenario files share with the harness in bench.c.
**
** A scenario is `double sc_NAME(int64_t n)`: it builds a fresh world outside
** the timed region, times its workload with now_ns(), checks its result
** with CHECK(), frees the world and returns the time (or the bytes) per
** unit. bench.c runs it and lists every scenario, of every file, in its
** table of rows.
*/
#ifndef TECS_BENCH_H
#define TECS_BENCH_H

#include "tinyecs.h"
#include "tinyecs/handle.h"
#include "tinyecs/system.h"

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* The thread CPU clock of --cpu: POSIX's, where it exists. */
#if defined(CLOCK_THREAD_CPUTIME_ID) && !defined(_WIN32)
#define BENCH_CPU_CLOCK 1
#else
#define BENCH_CPU_CLOCK 0
#endif

#if defined(__GNUC__)
#define BENCH_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define BENCH_NOINLINE __declspec(noinline)
#else
#define BENCH_NOINLINE
#endif

typedef struct { float x, y; } Position;
typedef struct { float x, y; } Velocity;
typedef struct { int hp; } Health;

/* Timed passes in a repetition of an iterate row: its figure is their
** median. */
enum { BENCH_PASSES = 20 };

/* A scenario: n units of work, the value per unit. */
typedef double (*scenario_fn)(int64_t n);

extern bool g_cpu_clock;        /* --cpu: this thread's CPU time           */
extern int32_t g_rows;          /* --rows: rows per chunk, 0 = the default */

/* A failed result check: reported with the scenario's name, and the
** program exits non-zero at the end. */
#define CHECK(cond, ...) \
    do { if (!(cond)) check_failed(__FILE__, __LINE__, #cond, __VA_ARGS__); } while (0)

void check_failed(const char *file, int line, const char *expr, const char *fmt, ...);

/* Now, in ns, on the clock the run was asked for. */
static inline double now_ns(void)
{
#if BENCH_CPU_CLOCK
    if (g_cpu_clock) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
    }
#endif
    return tecs_time_now() * 1e9;
}

/* xorshift64*: fixed-seed sequences that are the same on every run. */
static inline uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* The harness's helpers (bench.c): the median of v (sorted in place);
** malloc that exits on failure; Position (i, i) and Velocity (1, 1); one
** pass of integrate over a query's steps (fields 0 and 1). */
double median(double *v, int n);
void *xmalloc(size_t size);
/* A fixed-seed shuffle of ids, the same on every run (the random_get
** rows' order with seed 0x9E3779B97F4A7C15). */
void shuffle(tecs_entity_t *ids, int64_t n, uint64_t seed);
/* An allocator hook (tecs_world_desc_t.alloc) that counts the bytes a world
** holds in the counter its ud points to: the memory rows. */
typedef struct counter { size_t live; } counter;
void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
void fill_values(Position *p, Velocity *v, int64_t n);
void pass_chunks(tecs_query_t *q);

/* The loop every iterate scenario runs, on one column pair. */
static inline void integrate(Position *restrict p, const Velocity *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

/* The rows of enableable components and sparse terms (bench_store.c). */
double sc_toggle(int64_t n);
double sc_toggle_inline(int64_t n);
double sc_toggle_call(int64_t n);
double sc_toggle_raw(int64_t n);
double sc_iterate_toggled(int64_t n);
double sc_raw_toggled(int64_t n);
double sc_iterate_sparse_term(int64_t n);
double sc_raw_sparse_term(int64_t n);

/* The lookup rows (bench_lookup.c), on random_get_world (bench.c). */
tecs_world_t *random_get_world(int64_t n, tecs_comp_t *pos, tecs_entity_t **ids);
double sc_random_get(int64_t n);
double sc_random_get_many(int64_t n);
double sc_random_get_call(int64_t n);

/* The snapshot rows (bench_snap.c). */
double sc_save(int64_t n);
double sc_load(int64_t n);
double sc_snap_memcpy(int64_t n);
double sc_delta_save(int64_t n);
double sc_delta_apply(int64_t n);

/* The index rows (bench_index.c). */
double sc_where_eq(int64_t n);
double sc_where_range(int64_t n);
double sc_where_scan(int64_t n);
double sc_where_radius(int64_t n);
double sc_where_range_floor(int64_t n);
double sc_where_radius_floor(int64_t n);
double sc_set(int64_t n);
double sc_set_indexed(int64_t n);
double sc_set_indexed_hash(int64_t n);

/* The neighbour rows (bench_neigh.c): neighbours and neighbours_where are
** reported as ratios to neighbours_raw, a hand-written grid. */
double sc_where_small(int64_t n);
double sc_neighbours(int64_t n);
double sc_neighbours_where(int64_t n);
double sc_neighbours_raw(int64_t n);

/* The rows of systems over wide rows (bench_systems.c): systems_wide is
** reported as a ratio to systems_wide_raw, the same bodies by hand. */
double sc_systems_wide(int64_t n);
double sc_systems_wide_raw(int64_t n);
/* Work after each timed tecs_progress of systems_wide: start gets the
** world once the systems exist and returns the ud frame and stop get. */
typedef struct wide_hook {
    void *(*start)(tecs_world_t *w);
    void (*frame)(void *ud);
    void (*stop)(void *ud);
} wide_hook;
double systems_wide_hooked(int64_t n, const wide_hook *hook);

/* The inspector's rows (bench_inspect.c, built with tinyecs_inspect):
** frame_inspect is systems_wide with the inspector polled after each
** frame, reported as a ratio to systems_wide; inspect_entity is one GET
** /api/entity over loopback, in microseconds. */
double sc_frame_inspect(int64_t n);
double sc_inspect_entity(int64_t n);

/* The thread rows (bench_threads.c): pairs, NAME_1t without threads and
** NAME_nt with tecs_cpu_count() workers. */
double sc_heavy_1t(int64_t n);
double sc_heavy_raw(int64_t n);
double sc_heavy_nt(int64_t n);
double sc_light_1t(int64_t n);
double sc_light_nt(int64_t n);
double sc_tiny_1t(int64_t n);
double sc_tiny_nt(int64_t n);
double sc_disjoint_1t(int64_t n);
double sc_disjoint_nt(int64_t n);

/* The relation rows (bench_relation.c): the memory_childof rows are
** reported as ratios to their _plain rows, the same entities without
** relationships; cascade as a ratio to cascade_raw, the same pass by
** hand; instantiate_flat as a ratio to create_bulk. */
double sc_child_new(int64_t n);
double sc_instantiate(int64_t n);
double sc_instantiate_bulk(int64_t n);
double sc_instantiate_flat(int64_t n);
double sc_reparent(int64_t n);
double sc_subtree_destroy(int64_t n);
double sc_children(int64_t n);
double sc_memory_childof_wide(int64_t n);
double sc_memory_childof_wide_plain(int64_t n);
double sc_memory_childof_10(int64_t n);
double sc_memory_childof_10_plain(int64_t n);
double sc_cascade(int64_t n);
double sc_cascade_raw(int64_t n);

/* The inheritance rows (bench_inherit.c): get_inherited is reported as a
** ratio to random_get, iterate_inherited to iterate_inherited_raw, the
** same pass by hand. */
double sc_get_inherited(int64_t n);
double sc_iterate_inherited(int64_t n);
double sc_iterate_inherited_raw(int64_t n);
double sc_memory_inherited(int64_t n);

#endif
