/*
** os.h — the platform layer's interface (os.c): the clock is public
** (tecs_time_now); the thread pool is here. Included by private.h only.
*/
#ifndef TECS_OS_H
#define TECS_OS_H

/* A pool of threads that run jobs: the world's own executor. Its threads
** sleep while no job is queued. One thread (the world's) submits and
** waits; the jobs run on the pool's threads and on the waiting one. One
** block from the world's allocator holds it (os.c draws it); it keeps no
** pointer to the world, so the world passes itself to start and stop. */
typedef struct tecs__pool tecs__pool;

/* The most jobs queued between two waits. */
#define TECS__POOL_JOBS TECS_MAX_THREADS

/* Start a pool of n threads (1..TECS_MAX_THREADS - 1), its memory from w's
** allocator. @return TECS_OK with *out set; TECS_ENOMEM, or TECS_ETHREAD
** (a thread did not start), with the error recorded on w: then no thread
** is left running and nothing is held. */
tecs_err_t tecs__pool_start(tecs_world_t *w, int32_t n, tecs__pool **out);
/* Stop an idle pool: wake, join and free its threads (NULL: nothing). */
void tecs__pool_stop(tecs_world_t *w, tecs__pool *p);
/* Its threads. */
int32_t tecs__pool_threads(const tecs__pool *p);
/* The executor's submit and wait (tecs_executor_t), ctx being the pool:
** submit queues job(arg) (at most TECS__POOL_JOBS between two waits; one
** past that finds the ring full and runs at once on the calling thread);
** wait runs queued jobs on the calling thread too, and returns when every
** job submitted has returned. Memory written before submit is visible to
** the job, and what a job wrote is visible after wait. */
void tecs__pool_submit(void *pool, tecs_job_fn job, void *arg);
void tecs__pool_wait(void *pool);

#endif /* TECS_OS_H */
