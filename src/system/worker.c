/*
** worker.c — the world's workers: its own threads (os.c's pool) or a job
** system it is given, the worker contexts parallel work calls the world
** through, splits of a query's rows, and the running of a batch of tasks.
**
** A worker context is a copy of the world struct, made ready on the
** calling thread just before a run (tecs__worker_ready):
**
**     world: [base | ei comp bus arch store | cmd | query | ...pointers]
**        copied ^       ^ the same tables, read by the worker
**     context k: [own base | (copy) | own deferred queue | (copy) ...]
**
** Its tables are the world's, which nothing changes while workers run: the
** world itself is closed (TECS__PARALLEL), so a call through it is refused
** without a write, and every change a worker makes is queued. Its base is
** its own: the last error, closed as TECS__WORKER (tecs__enter refuses
** everything but reads and the changes that queue), deferred and at hook
** depth 1 (so tecs_set and tecs_modified always queue, as in a hook), and
** the bits of the components its system may read and write. Its deferred
** queue is its own too, kept from run to run; the queue's memory is
** counted in the context and folded into the world's count after each run.
**
** After a run, the contexts' queues are applied in context order, on the
** calling thread, as if they were one queue (tecs__cmd_merge: what the
** callbacks of those changes queue comes after the last). That order
** (parts in row order, concurrent systems in the order added) is fixed by
** the work, never by the threads, so the world after a run is the same
** for any thread count. The merge then retires every context
** (TECS__RETIRED: a call through one kept past its run is refused), and a
** part iterator steps only in the run that made it (base.run).
**
** A batch of n tasks runs as min(n, workers) jobs, each taking the next
** task until none is left (an atomic counter); with one worker the calling
** thread runs them in order.
**
** Before a run (and a split) the bus tells its listeners that workers
** are to start (tecs__emit_before_workers), on the calling thread: the
** index add-on rebuilds its stale indexes then, as workers read indexes
** (tecs_index_near) but must not write them.
**
** Calls: base.c, os.c (the pool), event.c (it listens for the world's
** end, and announces a run), command.c (the contexts' queues), query.c
** (parts).
*/
#include "internal.h"

#include <stdatomic.h>

struct tecs__worker_state {
    tecs__pool *pool;           /* the world's threads, or NULL             */
    tecs_executor_t ex;         /* the pool's, the user's; submit NULL: the
                                   calling thread runs every task           */
    int32_t threads;            /* workers: the pool's threads + 1, the
                                   executor's, or 1                         */
    tecs_world_t **ctxs;        /* the contexts, made as needed, kept       */
    int32_t nctxs;
    int32_t cap_ctxs;
    tecs_query_t *split;        /* the query of an open split, or NULL      */
    int32_t split_parts;
    int64_t split_rows;         /* the rows it matched when it began        */
};

typedef struct tecs__worker_state worker_state;

/* ---- workers_of ----------------------------------------------------------- */

static void stop_pool(tecs_world_t *w, worker_state *s)
{
    tecs__pool_stop(w, s->pool);
    s->pool = NULL;
    s->ex = (tecs_executor_t){ 0 };
    s->threads = 1;
}

static void worker_on_fini(tecs_world_t *w, void *ctx)
{
    worker_state *s = ctx;
    stop_pool(w, s);
    for (int32_t k = 0; k < s->nctxs; k++) {
        tecs__cmd_buf_fini(w, &s->ctxs[k]->cmd.deferred);
        tecs__free(w, s->ctxs[k], sizeof *s->ctxs[k]);
    }
    tecs__free(w, s->ctxs, (size_t)s->cap_ctxs * sizeof *s->ctxs);
    tecs__free(w, s, sizeof *s);
    w->workers = NULL;
}

static worker_state *workers_of(tecs_world_t *w)
{
    if (w->workers)
        return w->workers;
    tecs__listener l = { .on_fini = worker_on_fini };
    worker_state *s = tecs__plug(w, sizeof *s, &l, "the workers' workers_of");
    if (s == NULL)
        return NULL;
    s->threads = 1;
    w->workers = s;
    return s;
}

/* Refuse a change of the workers where it cannot happen: w is entered. */
static tecs_err_t check_idle(tecs_world_t *w, const char *fn)
{
    if (tecs__cmd_nested(w) || w->base.cb_depth > 0)
        return tecs__err(w, TECS_EBUSY, "%s cannot run inside an iteration, a callback or a "
                         "deferred section", fn);
    return TECS_OK;
}

/* ---- threads and executors ------------------------------------------- */

tecs_err_t tecs_world_set_threads(tecs_world_t *w, int32_t n)
{
    tecs_err_t err = tecs__enter_world_object(w);
    if (err || (err = check_idle(w, "tecs_world_set_threads")))
        return err;
    if (n < 0 || n > TECS_MAX_THREADS)
        return tecs__err(w, TECS_EINVAL, "tecs_world_set_threads: %d threads (0..%d)", (int)n,
                         TECS_MAX_THREADS);
    if (n <= 1 && w->workers == NULL)
        return TECS_OK;
    worker_state *s = workers_of(w);
    if (s == NULL)
        return w->base.err;
    stop_pool(w, s);
    if (n <= 1)
        return TECS_OK;
    tecs__pool *p;
    if ((err = tecs__pool_start(w, n - 1, &p)) != TECS_OK)
        return err;
    s->pool = p;
    s->ex = (tecs_executor_t){ .submit = tecs__pool_submit, .wait = tecs__pool_wait, .ctx = p,
                               .threads = n };
    s->threads = n;
    return TECS_OK;
}

int32_t tecs_world_threads(const tecs_world_t *w)
{
    return w && w->workers ? w->workers->threads : 1;
}

tecs_err_t tecs_world_set_executor(tecs_world_t *w, const tecs_executor_t *ex)
{
    tecs_err_t err = tecs__enter_world_object(w);
    if (err || (err = check_idle(w, "tecs_world_set_executor")))
        return err;
    if (ex && (ex->submit == NULL || ex->wait == NULL))
        return tecs__err(w, TECS_EINVAL, "tecs_world_set_executor: submit and wait are needed");
    if (ex && (ex->threads < 1 || ex->threads > TECS_MAX_THREADS))
        return tecs__err(w, TECS_EINVAL, "tecs_world_set_executor: %d threads (1..%d)",
                         (int)ex->threads, TECS_MAX_THREADS);
    if (ex == NULL && w->workers == NULL)
        return TECS_OK;
    worker_state *s = workers_of(w);
    if (s == NULL)
        return w->base.err;
    stop_pool(w, s);
    if (ex) {
        s->ex = *ex;
        s->threads = ex->threads;
    }
    return TECS_OK;
}

/* ---- contexts -------------------------------------------------------- */

tecs_err_t tecs__workers_reserve(tecs_world_t *w, int32_t n)
{
    worker_state *s = workers_of(w);
    if (s == NULL)
        return w->base.err;
    if (n <= s->nctxs)
        return TECS_OK;
    if (tecs__grow(w, (void **)&s->ctxs, &s->cap_ctxs, n, sizeof *s->ctxs))
        return tecs__err(w, TECS_ENOMEM, "out of memory making worker contexts");
    while (s->nctxs < n) {
        tecs_world_t *v = tecs__alloc(w, sizeof *v);
        if (v == NULL)
            return tecs__err(w, TECS_ENOMEM, "out of memory making worker contexts");
        memset(v, 0, sizeof *v);
        s->ctxs[s->nctxs++] = v;
    }
    return TECS_OK;
}

tecs_world_t *tecs__worker_ready(tecs_world_t *w, int32_t k, const uint64_t *read,
                                 const uint64_t *write)
{
    tecs_world_t *v = w->workers->ctxs[k];
    tecs__cmdbuf q = v->cmd.deferred;
    uint32_t run = v->base.run;
    memcpy(v, w, sizeof *v);
    memset(&v->cmd, 0, sizeof v->cmd);
    v->cmd.deferred = q;
    v->base.mem = 0;
    v->base.err = TECS_OK;
    v->base.errmsg[0] = '\0';
    tecs__set_closed(v, TECS__WORKER);
    v->base.cb_depth = 1;
    v->base.hook_depth = 1;
    tecs__stop_sync(&v->base);
    v->base.defer_depth = 1;
    v->base.owner = w;
    v->base.may_read = read;
    v->base.may_write = write;
    v->base.may_n = TECS_MAX_COMPONENTS;
    v->base.run = run + 1;
    return v;
}

/* ---- running --------------------------------------------------------- */

typedef struct batch {
    void (*task)(void *arg, int32_t i);
    void *arg;
    int32_t n;
    atomic_int next;            /* the next task to take                    */
} batch;

static void runner(void *p)
{
    batch *b = p;
    for (int32_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;)
        b->task(b->arg, i);
}

void tecs__workers_run(tecs_world_t *w, int32_t n, void (*task)(void *arg, int32_t i),
                       void *arg)
{
    worker_state *s = w->workers;
    batch b = { .task = task, .arg = arg, .n = n };
    atomic_init(&b.next, 0);
    int32_t jobs = s && s->ex.submit ? (n < s->threads ? n : s->threads) : 1;
    uint8_t closed = w->base.closed;
    tecs__emit_before_workers(w);       /* workers read indexes, never rebuild them */
    tecs__set_closed(w, TECS__PARALLEL);
    if (jobs <= 1) {
        runner(&b);
    } else {
        for (int32_t j = 0; j < jobs; j++)
            s->ex.submit(s->ex.ctx, runner, &b);
        s->ex.wait(s->ex.ctx);
    }
    tecs__set_closed(w, closed);
}

tecs_err_t tecs__workers_merge(tecs_world_t *w)
{
    worker_state *s = w->workers;
    tecs__cmdbuf *queues[TECS__CONTEXTS_MAX];
    /* Every context: one may hold what an earlier merge could not apply. */
    int32_t n = s->nctxs;
    assert(n <= TECS__CONTEXTS_MAX);
    for (int32_t k = 0; k < n; k++) {
        tecs_world_t *v = s->ctxs[k];
        w->base.mem += v->base.mem;     /* (wraps back when it freed more) */
        v->base.mem = 0;
        tecs__set_closed(v, TECS__RETIRED);
        queues[k] = &v->cmd.deferred;
    }
    return tecs__cmd_merge(w, queues, n);
}

/* ---- splits ---------------------------------------------------------- */

static tecs_iter_t split_part(tecs_world_t *w, const tecs_iter_desc_t *d);

tecs_err_t tecs_split_begin(tecs_query_t *q, int32_t parts)
{
    if (q == NULL)
        return TECS_EINVAL;
    tecs_world_t *w = tecs_query_world(q);
    tecs_err_t err = tecs__enter_object(w);
    if (err || (err = check_idle(w, "tecs_split_begin")))
        return err;
    if (parts < 1 || parts > TECS_MAX_THREADS)
        return tecs__err(w, TECS_EINVAL, "tecs_split_begin: %d parts (1..%d)", (int)parts,
                         TECS_MAX_THREADS);
    if ((err = tecs__workers_reserve(w, parts)) || (err = tecs__query_reports_reserve(w)))
        return err;
    worker_state *s = w->workers;
    w->base.part_start = split_part;
    s->split = q;
    s->split_parts = parts;
    tecs__query_run(q, true);
    s->split_rows = tecs__query_rows(q);
    for (int32_t k = 0; k < parts; k++)
        tecs__worker_ready(w, k, NULL, NULL);
    tecs__emit_before_workers(w);       /* the parts read indexes, never rebuild them */
    tecs__set_closed(w, TECS__PARALLEL);
    return TECS_OK;
}

/* tecs_iter's part form (base.part_start): part d->part of the split of
** d->query, read without writing to the world, whose workers may run. */
static tecs_iter_t split_part(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    const worker_state *s = w->workers;
    int32_t k = d->part;
    if (s == NULL || s->split != d->query || d->parts != s->split_parts || k < 0 ||
        k >= s->split_parts)
        return tecs__iter_failed(w, TECS_EINVAL);
    int64_t first = s->split_rows * k / s->split_parts;
    int64_t end = s->split_rows * (k + 1) / s->split_parts;
    tecs_iter_t it;
    tecs__iter_part(&it, d->query, s->ctxs[k], first, end - first);
    it.worker = k;
    it.workers = s->split_parts;
    return it;
}

tecs_err_t tecs_split_end(tecs_query_t *q)
{
    if (q == NULL)
        return TECS_EINVAL;
    tecs_world_t *w = tecs_query_world(q);
    worker_state *s = w->workers;
    if (s == NULL || s->split != q) {
        if (w->base.closed == TECS__PARALLEL)
            return TECS_EINVAL;         /* another query's split: w is not ours to write */
        return tecs__err(w, TECS_EINVAL, "tecs_split_end: the query is not split");
    }
    s->split = NULL;
    tecs__set_closed(w, TECS__OPEN);
    w->base.err = TECS_OK;
    uint32_t serial = tecs__query_reports_begin(w);
    if (tecs__query_writes_watched(q))
        tecs__query_report_writes(q, 0, s->split_rows);
    tecs__query_reports_end(w, serial);
    return tecs__workers_merge(w);
}
