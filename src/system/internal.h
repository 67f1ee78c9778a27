/*
** system/internal.h — what system.c and worker.c share: the workers'
** interface (worker.c), which system.c runs its parallel systems and
** waves on. Included by the files of system/ only.
*/
#ifndef TECS_SYSTEM_INTERNAL_H
#define TECS_SYSTEM_INTERNAL_H

#include "../core/private.h"

/* The most worker contexts one run uses: a parallel system's parts (one
** per thread), a wave's concurrent systems. */
#define TECS__CONTEXTS_MAX TECS_MAX_THREADS

/* Make sure n worker contexts exist: TECS_OK, or TECS_ENOMEM recorded. */
tecs_err_t tecs__workers_reserve(tecs_world_t *w, int32_t n);
/* Context k (reserved), made ready for a run: a copy of w through which a
** worker reads, and queues its changes; it may read (tecs_get) the
** components of `read` and write (tecs_get_mut) those of `write`
** (TECS_MAX_COMPONENTS bits each; NULL: any). */
tecs_world_t *tecs__worker_ready(tecs_world_t *w, int32_t k, const uint64_t *read,
                                 const uint64_t *write);
/* Run task(arg, i) for every i in 0..n-1 on the workers, and return when
** all have returned. w refuses every call meanwhile (TECS__PARALLEL). */
void tecs__workers_run(tecs_world_t *w, int32_t n, void (*task)(void *arg, int32_t i),
                       void *arg);
/* Apply the changes the contexts queued, in context order, on this thread,
** and retire them (w open and not deferred). @return as tecs__cmd_merge. */
tecs_err_t tecs__workers_merge(tecs_world_t *w);

#endif /* TECS_SYSTEM_INTERNAL_H */
