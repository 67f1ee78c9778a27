/*
** os.c — the platform layer: the calls that differ between POSIX and
** Windows, each with a plain C11 fallback.
**
** The clock: QueryPerformanceCounter on Windows; clock_gettime with
** CLOCK_MONOTONIC where POSIX offers it; otherwise C11 timespec_get, which
** is wall-clock time (it can step when the system's time is set; a system's
** statistics can then be off for that frame, never anything else).
** It is public (tecs_time_now), so that a game loop's delta time and a
** system's statistics agree on every platform.
**
** Calls: nothing of the library's (the bottom layer).
*/
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 199309L      /* clock_gettime, CLOCK_MONOTONIC */
#endif
#include "private.h"

#include <time.h>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

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
/* The pool, for now: its jobs run on the calling thread, at submit. */
struct tecs__pool { int n; };
tecs_err_t tecs__pool_start(tecs_world_t *w, int32_t n, tecs__pool **out)
{ tecs__pool *p = tecs__alloc(w, sizeof *p); if (!p) return tecs__err(w, TECS_ENOMEM, "oom pool"); p->n = n; *out = p; return TECS_OK; }
void tecs__pool_stop(tecs_world_t *w, tecs__pool *p) { if (p) tecs__free(w, p, sizeof *p); }
int32_t tecs__pool_threads(const tecs__pool *p) { return p->n; }
void tecs__pool_submit(void *pool, tecs_job_fn job, void *arg) { (void)pool; job(arg); }
void tecs__pool_wait(void *pool) { (void)pool; }
int32_t tecs_cpu_count(void) { return 2; }
