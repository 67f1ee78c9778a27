/*
** os.c — the platform layer: the calls that differ between POSIX and
** Windows, each with a plain C11 fallback. It owns the clock, the
** processor count and the thread pool; it is the only file that includes
** a system header beyond the C library's.
**
** The clock: QueryPerformanceCounter on Windows; clock_gettime with
** CLOCK_MONOTONIC where POSIX offers it; otherwise C11 timespec_get, which
** is wall-clock time (it can step when the system's time is set; a system's
** statistics can then be off for that frame, never anything else).
** It is public (tecs_time_now), so that a game loop's delta time and a
** system's statistics agree on every platform.
**
** The pool: n threads that sleep until a job is queued, and the world's
** thread, which submits jobs, then waits and runs queued jobs itself while
** it waits. pthreads on POSIX; CreateThread, SRWLOCK and
** CONDITION_VARIABLE on Windows; where there are neither, a pool does not
** start (TECS_ETHREAD) and the world works on its own thread. One block
** from the world's allocator holds all of a pool:
**
**     +--------------------------------------------+------------------+
**     | lock, work, done   ring[TECS__POOL_JOBS]    | thread[0..n-1]   |
**     | head queued pending stop  n made            | (joined at stop) |
**     +--------------------------------------------+------------------+
**
** Under the lock: queued jobs are ring[head .. head + queued) (mod the
** ring); pending counts the queued and the running ones, so queued <=
** pending, and the ring cannot overflow while the caller keeps to
** TECS__POOL_JOBS jobs between two waits. A worker sleeps on `work` while
** nothing is queued and the pool is not stopping; the waiting thread
** sleeps on `done` while nothing is queued and pending is not 0, and the
** worker that brings pending to 0 wakes it. The lock orders memory: what
** the submitter wrote before submit is seen by the job, what the job
** wrote is seen after wait.
**
** No static state: the pool is the world's, as is every other structure
** of the library, so two worlds never share a lock, a queue or a thread;
** the frequency of the clock and the processor count are asked each time.
**
** Calls: base.c (the pool's block, its errors).
*/
#if defined(_WIN32) && !defined(_WIN32_WINNT)
#define _WIN32_WINNT 0x0600          /* SRWLOCK, CONDITION_VARIABLE */
#endif
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L      /* clock_gettime, pthreads, sysconf */
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE 1           /* _SC_NPROCESSORS_ONLN */
#endif
#include "private.h"

#include <stddef.h>
#include <stdatomic.h>
#include <time.h>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#elif defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#if defined(_POSIX_THREADS) && _POSIX_THREADS > 0
#include <pthread.h>
#define TECS__PTHREADS 1
#endif
#endif

/* ---- the clock ---- */

#if defined(_WIN32)

double tecs_time_now(void)
{
    /* The frequency is fixed at boot; asking on each call keeps the
    ** library free of static state, and costs little next to a frame. */
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
}

#elif defined(CLOCK_MONOTONIC)

double tecs_time_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#else

double tecs_time_now(void)
{
    struct timespec ts;
    if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif

/* ---- threads: a lock, a condition, a thread, per platform ----
** The init and start functions return 0 or the system's error code. */

#if defined(_WIN32)

int32_t tecs_cpu_count(void)
{
    SYSTEM_INFO si;
    GetSystemInfo(&si);
    return si.dwNumberOfProcessors > 0 ? (int32_t)si.dwNumberOfProcessors : 1;
}

typedef SRWLOCK os_lock;
typedef CONDITION_VARIABLE os_cond;
typedef HANDLE os_thread;
static long lock_init(os_lock *l) { InitializeSRWLock(l); return 0; }
static void lock_fini(os_lock *l) { (void)l; }
static void lock(os_lock *l) { AcquireSRWLockExclusive(l); }
static void unlock(os_lock *l) { ReleaseSRWLockExclusive(l); }
static long cond_init(os_cond *c) { InitializeConditionVariable(c); return 0; }
static void cond_fini(os_cond *c) { (void)c; }
static void cond_wait(os_cond *c, os_lock *l) { SleepConditionVariableSRW(c, l, INFINITE, 0); }
static void cond_signal(os_cond *c) { WakeConditionVariable(c); }
static void cond_broadcast(os_cond *c) { WakeAllConditionVariable(c); }
static void pool_run(void *pool);
static DWORD WINAPI thread_main(LPVOID pool) { pool_run(pool); return 0; }
static long thread_start(os_thread *t, void *pool)
{
    *t = CreateThread(NULL, 0, thread_main, pool, 0, NULL);
    return *t != NULL ? 0 : (long)GetLastError();
}
static void thread_join(os_thread t)
{
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
}

#elif defined(TECS__PTHREADS)

int32_t tecs_cpu_count(void)
{
#if defined(_SC_NPROCESSORS_ONLN)
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int32_t)n;
#else
    return 1;
#endif
}

typedef pthread_mutex_t os_lock;
typedef pthread_cond_t os_cond;
typedef pthread_t os_thread;
static long lock_init(os_lock *l) { return pthread_mutex_init(l, NULL); }
static void lock_fini(os_lock *l) { pthread_mutex_destroy(l); }
static void lock(os_lock *l) { pthread_mutex_lock(l); }
static void unlock(os_lock *l) { pthread_mutex_unlock(l); }
static long cond_init(os_cond *c) { return pthread_cond_init(c, NULL); }
static void cond_fini(os_cond *c) { pthread_cond_destroy(c); }
static void cond_wait(os_cond *c, os_lock *l) { pthread_cond_wait(c, l); }
static void cond_signal(os_cond *c) { pthread_cond_signal(c); }
static void cond_broadcast(os_cond *c) { pthread_cond_broadcast(c); }
static void pool_run(void *pool);
static void *thread_main(void *pool) { pool_run(pool); return NULL; }
static long thread_start(os_thread *t, void *pool) { return pthread_create(t, NULL, thread_main, pool); }
static void thread_join(os_thread t) { pthread_join(t, NULL); }

#else /* no threads: a pool never starts, so nothing below ever waits */

int32_t tecs_cpu_count(void) { return 1; }

typedef char os_lock, os_cond, os_thread;
static long lock_init(os_lock *l) { (void)l; return 0; }
static void lock_fini(os_lock *l) { (void)l; }
static void lock(os_lock *l) { (void)l; }
static void unlock(os_lock *l) { (void)l; }
static long cond_init(os_cond *c) { (void)c; return 0; }
static void cond_fini(os_cond *c) { (void)c; }
static void cond_wait(os_cond *c, os_lock *l) { (void)c; (void)l; }
static void cond_signal(os_cond *c) { (void)c; }
static void cond_broadcast(os_cond *c) { (void)c; }
static long thread_start(os_thread *t, void *pool) { (void)t; (void)pool; return -1; }
static void thread_join(os_thread t) { (void)t; }

#endif

/* ---- the pool ---- */

struct tecs__pool {
    os_lock lock;               /* guards the fields up to stop             */
    os_cond work;               /* workers sleep here: nothing queued       */
    os_cond done;               /* the waiter sleeps here: jobs still run   */
    struct {
        tecs_job_fn fn;
        void *arg;
    } ring[TECS__POOL_JOBS];    /* queued jobs, from head on                */
    int32_t head;               /* the next job to run                      */
    int32_t queued;             /* jobs in the ring                         */
    atomic_int ready;           /* queued, for a worker to watch unlocked   */
    atomic_int unfinished;      /* pending, for the waiter to watch         */
    int32_t pending;            /* jobs queued or running                   */
    bool stop;                  /* the workers leave once nothing is queued */
    int32_t threads;            /* room in thread[], the threads asked for  */
    int32_t started;            /* threads started, to be joined            */
    int32_t made;               /* of lock, work, done, how many are made   */
    os_thread thread[];         /* the threads                              */
};

static size_t pool_size(int32_t threads)
{
    return offsetof(tecs__pool, thread) + (size_t)threads * sizeof(os_thread);
}

/* Take the job at head and run it outside the lock; the lock is held on
** entry and on return. */
static void pool_run_one(tecs__pool *p)
{
    tecs_job_fn fn = p->ring[p->head].fn;
    void *arg = p->ring[p->head].arg;
    p->head = (p->head + 1) % TECS__POOL_JOBS;
    p->queued--;
    atomic_fetch_sub_explicit(&p->ready, 1, memory_order_relaxed);
    unlock(&p->lock);
    fn(arg);
    lock(&p->lock);
    p->pending--;
    atomic_fetch_sub_explicit(&p->unfinished, 1, memory_order_relaxed);
}

/* Before sleeping, a worker watches for a job and the waiting thread for
** the last jobs' end, unlocked, for SPIN_SECONDS: a frame's systems come
** in quick succession, and waking a sleeping thread takes longer than a
** light system's part (tens of microseconds), which the submitting
** thread would then run itself. */
#define SPIN_SECONDS 100e-6

/* Spin while *count is `while_is`, at most SPIN_SECONDS. */
static void spin_while(atomic_int *count, int while_is)
{
    double until = tecs_time_now() + SPIN_SECONDS;
    for (int i = 0; atomic_load_explicit(count, memory_order_relaxed) == while_is; i++) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        __builtin_ia32_pause();
#endif
        if ((i & 63) == 63 && tecs_time_now() > until)
            return;
    }
}

#if defined(_WIN32) || defined(TECS__PTHREADS)
/* A worker: run queued jobs, watch a while when there are none, then
** sleep; leave on stop. */
static void pool_run(void *pool)
{
    tecs__pool *p = pool;
    lock(&p->lock);
    for (;;) {
        if (p->queued == 0 && !p->stop) {
            unlock(&p->lock);
            spin_while(&p->ready, 0);
            lock(&p->lock);
        }
        while (p->queued == 0 && !p->stop)
            cond_wait(&p->work, &p->lock);
        if (p->queued == 0)
            break;
        pool_run_one(p);
        if (p->pending == 0)
            cond_signal(&p->done);
    }
    unlock(&p->lock);
}
#endif

/* Wake the workers to leave, join those started, undo what was made and
** free the block: the end of a pool, and of a start that failed midway
** (no thread starts before the lock and both conditions are made). */
static void pool_teardown(tecs_world_t *w, tecs__pool *p)
{
    if (p->started > 0) {
        lock(&p->lock);
        p->stop = true;
        cond_broadcast(&p->work);
        unlock(&p->lock);
    }
    for (int32_t i = 0; i < p->started; i++)
        thread_join(p->thread[i]);
    if (p->made > 2)
        cond_fini(&p->done);
    if (p->made > 1)
        cond_fini(&p->work);
    if (p->made > 0)
        lock_fini(&p->lock);
    tecs__free(w, p, pool_size(p->threads));
}

tecs_err_t tecs__pool_start(tecs_world_t *w, int32_t n, tecs__pool **out)
{
    assert(n >= 1 && n < TECS_MAX_THREADS);
    *out = NULL;
    tecs__pool *p = tecs__alloc(w, pool_size(n));
    if (p == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory starting %d threads", n);
    memset(p, 0, pool_size(n));
    atomic_init(&p->ready, 0);
    atomic_init(&p->unfinished, 0);
    p->threads = n;
    long code = lock_init(&p->lock);
    if (code == 0 && ++p->made == 1)
        code = cond_init(&p->work);
    if (code == 0 && ++p->made == 2)
        code = cond_init(&p->done);
    if (code == 0 && ++p->made == 3)
        while (p->started < n && (code = thread_start(&p->thread[p->started], p)) == 0)
            p->started++;
    if (code == 0) {
        *out = p;
        return TECS_OK;
    }
    int32_t made = p->made, started = p->started;
    pool_teardown(w, p);
    if (made < 3)
        return tecs__err(w, TECS_ETHREAD, "the pool's lock or conditions could not be made "
                                          "(error %ld)", code);
    return tecs__err(w, TECS_ETHREAD, "thread %d of %d could not be started (error %ld)",
                     (int)started + 1, (int)n, code);
}

void tecs__pool_stop(tecs_world_t *w, tecs__pool *p)
{
    if (p != NULL)
        pool_teardown(w, p);
}

int32_t tecs__pool_threads(const tecs__pool *p)
{
    return p != NULL ? p->threads : 0;
}

void tecs__pool_submit(void *pool, tecs_job_fn job, void *arg)
{
    tecs__pool *p = pool;
    lock(&p->lock);
    if (p->queued == TECS__POOL_JOBS) {
        /* More jobs than the interface allows between two waits: the ring
        ** is full, so this one runs here and now. */
        unlock(&p->lock);
        job(arg);
        return;
    }
    int32_t tail = (p->head + p->queued) % TECS__POOL_JOBS;
    p->ring[tail].fn = job;
    p->ring[tail].arg = arg;
    p->queued++;
    p->pending++;
    atomic_fetch_add_explicit(&p->ready, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&p->unfinished, 1, memory_order_relaxed);
    cond_signal(&p->work);
    unlock(&p->lock);
}

void tecs__pool_wait(void *pool)
{
    tecs__pool *p = pool;
    lock(&p->lock);
    while (p->pending > 0) {
        if (p->queued > 0) {
            pool_run_one(p);
            continue;
        }
        /* The last jobs run on the workers: watch them end a while before
        ** sleeping, as the workers watch for jobs. */
        int32_t left = p->pending;
        unlock(&p->lock);
        spin_while(&p->unfinished, left);
        lock(&p->lock);
        if (p->pending == left)
            cond_wait(&p->done, &p->lock);
    }
    unlock(&p->lock);
}
