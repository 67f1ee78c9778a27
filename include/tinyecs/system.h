/*
** tinyecs/system.h — systems, phases, the frame, and the threads that run
** them (the system add-on; docs/systems.md, docs/threads.md).
*/
#ifndef TINYECS_SYSTEM_H
#define TINYECS_SYSTEM_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Systems and the pipeline                                             */
/* ==================================================================== */

/** The phases of a frame, in the order they run. 0 in a description means
 *  TECS_ON_UPDATE. */
typedef enum tecs_phase_t {
    TECS_ON_LOAD = 1,
    TECS_POST_LOAD,
    TECS_PRE_UPDATE,
    TECS_ON_UPDATE,
    TECS_ON_VALIDATE,
    TECS_POST_UPDATE,
    TECS_PRE_STORE,
    TECS_ON_STORE
} tecs_phase_t;

#define TECS_PHASE_COUNT 8

/** A system id; 0 is never a system. Ids are not reused. */
typedef uint32_t tecs_system_t;

/** Chunk form: called once per non-empty chunk of the query (once per frame
 *  with count 0 for a system without a query). */
typedef void (*tecs_system_fn)(tecs_iter_t *it);

/** Per-entity form: called for row `row` of the chunk in it. */
typedef void (*tecs_system_each_fn)(tecs_iter_t *it, int32_t row);

/**
 * Drive form: called once per run, even when the query matches nothing (and
 * for a system without a query), with an iteration of the query opened and
 * not yet stepped: the callback advances it with tecs_iter_next, and may
 * stop early with tecs_iter_fini; an iteration it leaves open is ended when
 * it returns. delta_time, frame and ctx are set as for the other forms; the
 * statistics count the rows tecs_iter_next handed out through `it`.
 * @return TECS_OK to go on; any other code stops the frame (tecs_progress)
 * after this system's changes are applied, and tecs_progress or
 * tecs_system_run returns it. (The run and each forms cannot stop a frame:
 * write such a system in this form.) If the iteration cannot open
 * (TECS_ENOMEM), the callback is not called and the run returns that code.
 */
typedef tecs_err_t (*tecs_system_drive_fn)(tecs_iter_t *it);

/** A system description; zero means default. */
typedef struct tecs_system_desc_t {
    const char *name;           /* required, unique in the world; copied      */
    tecs_phase_t phase;         /* 0: TECS_ON_UPDATE                          */
    tecs_query_t *query;        /* NULL: run once per frame, no entities.
                                   Not owned; busy (tecs_query_free refuses)
                                   until the system is removed.               */
    tecs_system_fn run;         /* exactly one of run / each / drive          */
    tecs_system_each_fn each;   /* (each needs a query)                       */
    tecs_system_drive_fn drive;
    void *ctx;                  /* it->ctx                                    */
    double interval;            /* seconds; 0 runs every frame                */
    uint32_t groups;            /* group bits (tecs_progress_groups); 0: 1u   */
    bool disabled;              /* start disabled                             */
    /* Threads (see "Threads" below; each works with or without workers):  */
    bool parallel;              /* its rows are split across the workers      */
    int32_t parallel_min;       /* a parallel system with fewer rows runs as
                                   one part; 0: TECS_PARALLEL_MIN             */
    bool concurrent;            /* it may run beside the concurrent systems
                                   of its phase whose access does not
                                   conflict with its own                      */
    const tecs_comp_t *reads;   /* parallel or concurrent: components read on
                                   other entities (tecs_get), beyond the
                                   query's terms; 0 ends the list; copied     */
    const tecs_comp_t *writes;  /* the same for components written there
                                   (tecs_get_mut)                             */
} tecs_system_desc_t;

/**
 * Add a system at the end of its phase. Added while a frame runs, it runs
 * from the next frame on.
 * @return its id, or 0 on error: TECS_EINVAL (NULL, no name, unknown phase,
 * not exactly one of run / each / drive, each without a query, interval
 * negative, NaN or above 1e300),
 * TECS_EEXIST (name taken), TECS_EWORLD (query of another world),
 * TECS_ENOMEM.
 */
tecs_system_t tecs_system_new(tecs_world_t *world, const tecs_system_desc_t *desc);

/**
 * Remove a system. Inside a frame the removal takes effect at the end of the
 * frame: the frame's list of systems is fixed when it starts, so a removed
 * system whose turn has not come still runs (disable it first to stop it at
 * once). The id is invalid at once either way.
 * @return TECS_OK, or TECS_ENOENT (unknown or removed already).
 */
tecs_err_t tecs_system_free(tecs_world_t *world, tecs_system_t system);

/** Enable or disable a system; takes effect at once, even mid-frame.
 *  @return TECS_OK or TECS_ENOENT. */
tecs_err_t tecs_system_enable(tecs_world_t *world, tecs_system_t system, bool enabled);

/** True if the system exists and is enabled. */
bool tecs_system_enabled(const tecs_world_t *world, tecs_system_t system);

/** Find a system by name. @return its id, or 0 (TECS_ENOENT). */
tecs_system_t tecs_system_lookup(tecs_world_t *world, const char *name);

/** The name of a system, owned by the world; NULL if unknown. */
const char *tecs_system_name(const tecs_world_t *world, tecs_system_t system);

/** Live systems of the world (those removed mid-frame not counted). */
int32_t tecs_system_count(const tecs_world_t *world);

/** The i-th live system in id order (the order they were added), for
 *  0 <= i < tecs_system_count; 0 otherwise and for NULL. Records no error:
 *  allowed in every callback. */
tecs_system_t tecs_system_at(const tecs_world_t *world, int32_t i);

/** Per-system statistics. Times are seconds of a monotonic clock
 *  (CLOCK_MONOTONIC on POSIX, QueryPerformanceCounter on Windows), measured
 *  around the callback and the flush of the changes it made. */
typedef struct tecs_system_stats_t {
    int64_t runs;               /* times it ran                               */
    double time_last;           /* in the last frame (0 if it did not run)    */
    double time_total;
    int64_t entities_last;      /* entities visited in the last frame         */
    int64_t entities_total;
} tecs_system_stats_t;

/** Read a system's statistics. @return TECS_OK, TECS_EINVAL (NULL out),
 *  TECS_ENOENT. After tecs_system_run, time_last and entities_last are that
 *  run's. */
tecs_err_t tecs_system_stats(tecs_world_t *world, tecs_system_t system,
                             tecs_system_stats_t *out);

/**
 * Read a system's current description into *out: groups as stored (never
 * 0), disabled as !tecs_system_enabled. out->name is owned by the world and
 * valid until the system is removed. Allowed from every callback.
 * @return TECS_OK, TECS_EINVAL (NULL out), TECS_ENOENT.
 */
tecs_err_t tecs_system_get(tecs_world_t *world, tecs_system_t system,
                           tecs_system_desc_t *out);

/**
 * Replace a system's callback (run / each / drive), ctx, query, interval,
 * groups and disabled, all from *desc. The system keeps its id, its place in
 * its phase, its statistics and its accumulated interval time. desc->name
 * must be NULL or the system's name, and desc->phase its phase (0 meaning
 * TECS_ON_UPDATE, as in tecs_system_new). The old query stops being busy
 * and the new one is busy from now on. Typical use: tecs_system_get, change
 * a field, tecs_system_set.
 * Takes effect at once: at the system's next run. Called from inside the
 * system's own callback, the running call goes on with the old callback,
 * query and ctx. Refused (TECS_EBUSY) like tecs_system_new: in lifecycle
 * hooks and order functions; allowed from systems and observers.
 * @return TECS_OK, TECS_ENOENT, TECS_EINVAL (NULL, another name, another
 * phase, and what tecs_system_new refuses), TECS_EWORLD (query of another
 * world). On error nothing changed.
 */
tecs_err_t tecs_system_set(tecs_world_t *world, tecs_system_t system,
                           const tecs_system_desc_t *desc);

/**
 * Run one frame: every enabled system once, phase by phase, in the order
 * added within a phase. Changes a system makes are applied when it ends, so
 * the next system sees them. A system with an interval runs at most once per
 * frame: when its accumulated delta time reaches the interval; the whole
 * intervals k = floor(accumulated / interval) are taken off (the rest carries
 * over) and it->delta_time is k * interval; when k passes 2^53 (a tiny
 * interval, a huge delta_time) the whole accumulated time is taken instead,
 * so it->delta_time is always finite. Time does not accumulate while it is
 * disabled. Others get it->delta_time = delta_time.
 * A drive system that returns a code other than TECS_OK stops the frame: its
 * changes are applied, the systems after it do not run (nor accumulate
 * interval time), the frame still counts (tecs_world_frame_count advances,
 * systems removed during it go) and the code is returned, the last error
 * naming the system.
 * @return TECS_OK, TECS_EINVAL (delta_time negative, NaN or above 1e300), TECS_EBUSY
 * (inside an iteration, a callback or another frame), or a drive system's code.
 * Same as tecs_progress_groups(world, delta_time, UINT32_MAX).
 */
tecs_err_t tecs_progress(tecs_world_t *world, double delta_time);

/**
 * Run a frame of some groups only: the enabled systems whose groups share a
 * bit with mask. The others are skipped as if disabled: they do not run and
 * their interval time does not accumulate. The frame counts as any frame
 * (the frame number advances, even with mask 0). @return as tecs_progress.
 */
tecs_err_t tecs_progress_groups(tecs_world_t *world, double delta_time, uint32_t mask);

/**
 * Run one system now, outside a frame, with it->delta_time = delta_time and
 * it->frame = tecs_world_frame_count (the number the next frame gets). It
 * runs even when disabled or in no group of a frame, and whatever its
 * interval: no interval time accumulates (its own included) and the frame
 * count does not advance. Its statistics count the run; its changes are
 * applied when it ends. Refused where tecs_progress is: inside an
 * iteration, any callback (a system's included) or a frame.
 * @return the drive callback's code (TECS_OK for the run and each forms;
 * the last error then names the system), or TECS_EINVAL (delta_time as
 * tecs_progress), TECS_EBUSY, TECS_ENOENT; refused, nothing ran.
 */
tecs_err_t tecs_system_run(tecs_world_t *world, tecs_system_t system, double delta_time);

/** Frames run so far (the frame number the next tecs_progress gets). */
int64_t tecs_world_frame_count(const tecs_world_t *world);


/* ==================================================================== */
/* Threads                                                              */
/* ==================================================================== */

/*
 * A world can run systems on several threads: its workers. A parallel
 * system (desc.parallel) has its matched rows split in about equal parts,
 * one per worker; concurrent systems (desc.concurrent) of one phase whose
 * access does not conflict run side by side. Both kinds run the same way
 * whatever the number of threads, workers or none, so the world after a
 * frame is the same for 1 thread or 64:
 *
 *  - each part (or each concurrent system) calls the world through its own
 *    worker context, it->world, never through the world pointer itself;
 *  - it sees the world as it was when the run began; the changes it queues
 *    apply after the run, on the calling thread: first the SET events of
 *    writes through write terms that a field index or observer watches, in
 *    row order, then each part's queued changes in part order (the order of
 *    the rows), or each concurrent system's in the order the systems were
 *    added. Hooks, observers and index upkeep run then, on that thread.
 *
 * What may be called from a worker, through it->world (W1-W4):
 *
 *   W1 reads, allowed: tecs_get, tecs_has, tecs_is_alive, tecs_entity_state,
 *      tecs_entity_archetype, tecs_component_lookup / _name / _size, the
 *      resource reads, tecs_field, counts, tecs_last_error (the worker's
 *      own), tecs_index_near (any index: indexes are not under the access
 *      list; its errors are not recorded). A system's worker reads
 *      (tecs_get) only its query's terms and its desc.reads /
 *      desc.writes, and writes (tecs_get_mut) only its write terms and
 *      desc.writes: anything else is TECS_EACCESS. A value
 *      another worker of the same run writes must not be read (that is a
 *      race, as in any threaded program).
 *   W2 writes in place, allowed: through the fields of the worker's own
 *      rows, or tecs_get_mut within the access above. Report such a write
 *      to a field index with tecs_modified (queued).
 *   W3 changes, queued: tecs_add, tecs_remove, tecs_set (always queued
 *      from a worker, even of a value the entity has), tecs_destroy,
 *      tecs_modified. The worker's own later reads do not see them.
 *   W4 everything else, refused with TECS_EBUSY: births (their ids would
 *      depend on which thread ran first), delayed changes, iterations and
 *      where queries, creating or freeing objects, resources' writes,
 *      frames, threads. A call through the world pointer itself while
 *      workers run is refused too, and records nothing.
 *
 * The world's allocator is called from the workers (each queue grows in
 * its own thread): it must be safe to call from several threads at once,
 * as the default (the C library's) is.
 */

/** The rows below which a parallel system runs as one part (its default
 *  desc.parallel_min): splitting a light loop over fewer rows costs more
 *  than it saves. */
#define TECS_PARALLEL_MIN 16384

/** A job: what an executor runs. */
typedef void (*tecs_job_fn)(void *arg);

/**
 * Your own job system, given to a world instead of its own threads. The
 * world calls submit a number of times, then wait once, on the thread that
 * runs the frame; it never calls them from a job. submit may run the job at
 * once or hand it to another thread; wait returns when every job submitted
 * since the last wait has returned.
 */
typedef struct tecs_executor_t {
    void (*submit)(void *ctx, tecs_job_fn job, void *arg);
    void (*wait)(void *ctx);
    void *ctx;
    int32_t threads;            /* jobs that may run at once, 1..TECS_MAX_THREADS:
                                   the parts a parallel system is split into  */
} tecs_executor_t;

/**
 * Give the world n workers: a pool of n - 1 threads it owns, the calling
 * thread being the n-th (0 or 1: no threads). The pool is made when first
 * asked for, resized or stopped by the next call, and stopped with the
 * world; its threads sleep when the world runs no parallel work. Replaces
 * an executor given before.
 * Refused (TECS_EBUSY) in every callback, in an iteration, a deferred
 * section or a split.
 * @return TECS_OK; TECS_EINVAL (n negative or above TECS_MAX_THREADS);
 * TECS_ENOMEM or TECS_ETHREAD (a thread could not be started): then the
 * world has no threads (it works on the calling thread alone).
 */
tecs_err_t tecs_world_set_threads(tecs_world_t *world, int32_t n);

/** The world's workers: its threads' count, or the executor's, 1 with neither. */
int32_t tecs_world_threads(const tecs_world_t *world);

/**
 * Run the world's parallel work on your own job system instead of its
 * threads (its pool is stopped); the executor is copied. NULL: neither,
 * one worker. Refused where tecs_world_set_threads is.
 * @return TECS_OK, TECS_EINVAL (submit or wait NULL, threads out of
 * range), TECS_EBUSY.
 */
tecs_err_t tecs_world_set_executor(tecs_world_t *world, const tecs_executor_t *executor);

/** The processors this machine has online (at least 1). Safe from any thread. */
int32_t tecs_cpu_count(void);

/**
 * A split: a query's rows handed out in parts, for your own threads.
 * tecs_split_begin(q, n) readies n parts; each of your threads then starts
 * its part k (one thread per part) with
 * TECS_ITER(w, .query = q, .parts = n, .part = k) (tecs_iter_desc_t),
 * iterates it,
 * and calls the world through it->world as a worker (W1-W4 above, with
 * no access list: any component may be read and written there).
 * tecs_split_end(q), on the thread that began it, once every part is done,
 * applies what the parts queued, part 0 first, as a parallel system does.
 * Between begin and end the world takes no other call (TECS_EBUSY).
 * Parts cover the rows in iteration order: part k holds rows
 * [k * N / n, (k + 1) * N / n) of the N the query matches.
 * @return TECS_OK; TECS_EINVAL (NULL, n out of 1..TECS_MAX_THREADS);
 * TECS_EBUSY (in a callback, an iteration, a deferred section, another
 * split, or the world closed); TECS_ENOMEM.
 */
tecs_err_t tecs_split_begin(tecs_query_t *query, int32_t parts);

/** End the split of query: apply the parts' changes (see tecs_split_begin).
 *  @return TECS_OK, TECS_EINVAL (NULL, or not the query split), or the
 *  error of a queued change that could not apply (the others still do). */
tecs_err_t tecs_split_end(tecs_query_t *query);

/**
 * Seconds on the clock system statistics use: monotonic, from an arbitrary
 * origin, so only differences mean anything (a frame's delta_time, say).
 * CLOCK_MONOTONIC on POSIX, QueryPerformanceCounter on Windows, C11
 * timespec_get elsewhere (which follows the wall clock). Needs no world;
 * safe from any thread and any callback.
 */
double tecs_time_now(void);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_SYSTEM_H */
