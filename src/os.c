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
