/*
** model_par.c — the model's parallel work: a parallel system over a model
** query (par_run), concurrent systems run in waves (conc_run), a split of
** a query's rows run part by part (split_run).
**
** The callbacks run on the world's workers, so they change nothing of the
** interpreter: each call writes what it saw and what it queued into its own
** log (one per part of a parallel system or a split, one per concurrent
** system), and the model reads the logs on the calling thread after the
** run, wave by wave (a parallel run or a split is one wave of its parts),
** in the order the library applies them:
**
**   1. what the wave's calls saw is checked against the model: the world
**      from before the wave (queued changes not visible, values of rows
**      as they were, refused calls refused);
**   2. its writes through write-term fields apply in place;
**   3. what callbacks queued while those writes were reported (pushed on
**      the model's queue while the library was not applying queues) is
**      applied, as the report's own flush does;
**   4. then the logs' queued changes, log after log (part order, system
**      order), then what the callbacks of those queued (pushed while the
**      library applied them): one queue, as the workers' merge applies it.
**
** Workers: real threads (tecs_world_set_threads 1..4) in normal runs; in
** OOM runs (m_opts.oom) an executor that runs the jobs at wait on the
** calling thread, last submitted first, so the allocations come in the
** same order in every run. A worker's call that meets an allocation
** failure returns TECS_ENOMEM and queues nothing; its log says so.
*/
#include "model_int.h"

#if TECS_HAS_SYSTEM

/* What a log records. */
enum { L_ROW, L_WRITE, L_CMD, L_OBS, L_REFUSE };

typedef struct lent {
    uint8_t kind;
    uint8_t sub;                /* L_CMD: Q_*; L_OBS: 1 a get was made;
                                   L_REFUSE: 0 tecs_new, 1 an undeclared get */
    int8_t comp;                /* model component                          */
    bool has, alive, ptr;       /* L_OBS: what the worker saw               */
    tecs_entity_t id;
    int64_t v;                  /* L_WRITE, L_CMD (Q_SET): the value        */
    int32_t got;                /* a call's result, or the last error after */
    unsigned char bytes[64];    /* L_OBS: the value the get gave            */
} lent;

typedef struct plog {
    lent *e;
    int32_t n, cap;
    int32_t calls;              /* callback calls (chunks)                  */
    int32_t worker, workers;    /* it->worker, it->workers of the first call */
    bool same;                  /* every call saw those                     */
    int32_t dq_at;              /* the model queue's length at the first call */
    long alloc_start;           /* allocations made when its first call began */
    long alloc_end;             /* ... and when its last call ended         */
} plog;

/* A parallel or concurrent system, or a split. */
typedef struct psys {
    interp *I;
    mquery q;                   /* a copy: a body may free the model's entry */
    uint32_t rd, wr;            /* model components it may read, write      */
    uint32_t reads;             /* of them, declared (desc.reads)           */
    uint32_t z;                 /* varies what rows do                      */
    tecs_comp_t rlist[NC + 1], wlist[NC + 1];
    tecs_system_t s;
    plog log[TECS_MAX_THREADS];
} psys;

/* ---- workers ------------------------------------------------------------------------ */

static void lazy_submit(void *ctx, tecs_job_fn job, void *arg)
{
    interp *I = ctx;
    if (I->lazy.n < TECS_MAX_THREADS) {
        I->lazy.job[I->lazy.n] = job;
        I->lazy.arg[I->lazy.n++] = arg;
    }
}

static void lazy_wait(void *ctx)
{
    interp *I = ctx;
    while (I->lazy.n > 0) {
        I->lazy.n--;
        I->lazy.job[I->lazy.n](I->lazy.arg[I->lazy.n]);
    }
}

/* Give the world n workers: threads, or in OOM runs the executor above.
** @return false if that failed (out of memory): the op stops there. */
static bool set_workers(interp *I, int32_t n)
{
    if (tecs_world_threads(I->w) == n)
        return true;
    bool busy = mi_deferred(I);
    int err;
    if (I->o.oom) {
        I->lazy.n = 0;
        err = (int)tecs_world_set_executor(I->w, &(tecs_executor_t){
            .submit = lazy_submit, .wait = lazy_wait, .ctx = I, .threads = n });
    } else {
        err = (int)tecs_world_set_threads(I->w, n);
    }
    if (mi_result_is(I, err, busy ? TECS_EBUSY : TECS_OK,
                     I->o.oom ? "tecs_world_set_executor" : "tecs_world_set_threads"))
        return false;
    if (!busy)
        EXPECT(I, tecs_world_threads(I->w) == n, "tecs_world_threads is %d, not %d",
               (int)tecs_world_threads(I->w), (int)n);
    return true;
}

/* ---- what a worker does ------------------------------------------------------------- */

static void log_push(plog *L, const lent *x)
{
    if (L->n == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 64;
        L->e = realloc(L->e, (size_t)L->cap * sizeof *L->e);
        if (L->e == NULL)
            abort();
    }
    L->e[L->n++] = *x;
}

/* What e and its component c look like to worker world v. */
static void observe(const psys *ps, plog *L, tecs_world_t *v, tecs_entity_t e, int c)
{
    lent x = { .kind = L_OBS, .id = e, .comp = (int8_t)c };
    x.alive = tecs_is_alive(v, e);
    x.has = tecs_has(v, e, ps->I->cid[c]);
    /* (Not an inherited value the system writes: the base's row, which
    ** another part may be writing, a race the program would make.) */
    if (csize[c] && (ps->rd >> c & 1) && (x.has || !(ps->wr >> c & 1))) {
        const void *p = tecs_get(v, e, ps->I->cid[c]);
        x.sub = 1;
        x.ptr = p != NULL;
        x.got = (int32_t)tecs_last_error(v);
        if (p)
            memcpy(x.bytes, p, csize[c]);
    }
    log_push(L, &x);
}

/* The data components but H (whose copy hook would run on the worker). */
static const int plain[5] = { C_A, C_B, C_V, C_C, C_G };

/* Row r of it: what the row does depends on the entity and the op only,
** never on the part it falls in. */
static void row(psys *ps, plog *L, tecs_iter_t *it, int32_t r)
{
    interp *I = ps->I;
    tecs_world_t *v = it->world;
    tecs_entity_t e = it->entities[r];
    uint64_t h = mi_mix((uint64_t)ps->z << 32 ^ e);
    log_push(L, &(lent){ .kind = L_ROW, .id = e });
    int act = (int)(h % 8);
    switch (act) {
    case 1:                     /* a write through a write term's field */
        for (int32_t t = 0; t < ps->q.nt; t++) {
            int c = ps->q.ci[t];
            char *f = tecs_field(it, t);
            if (f == NULL || ps->q.t[t].access != TECS_WRITE || c == C_H || !csize[c])
                continue;
            int64_t val = mi_mkval((uint32_t)(h >> 32), (uint32_t)e);
            mi_fill_val(c, f + (size_t)r * csize[c], val);
            log_push(L, &(lent){ .kind = L_WRITE, .id = e, .comp = (int8_t)c, .v = val });
            break;
        }
        break;
    case 2:                     /* queued changes of its own entity */
    case 3:
    case 4:
    case 5: {
        int c = act == 2 ? plain[(h >> 8) % 5] : (int)((h >> 8) % NC);
        lent x = { .kind = L_CMD, .id = e, .comp = (int8_t)c };
        if (act == 2) {
            unsigned char buf[64];
            x.sub = Q_SET;
            x.v = mi_mkval((uint32_t)(h >> 24), (uint32_t)c);
            mi_fill_val(c, buf, x.v);
            x.got = (int32_t)tecs_set(v, e, I->cid[c], buf);
        } else if (act == 3) {
            x.sub = Q_ADD;
            x.got = (int32_t)tecs_add(v, e, I->cid[c]);
        } else if (act == 4 && (h >> 40 & 3) == 0) {  /* queued: applies at the merge */
            c = h >> 42 & 1 ? C_T2 : C_V;
            x.comp = (int8_t)c;
            x.sub = h >> 43 & 1 ? Q_ENABLE : Q_DISABLE;
            x.got = (int32_t)tecs_enable(v, e, I->cid[c], x.sub == Q_ENABLE);
        } else if (act == 4) {
            x.sub = Q_REMOVE;
            x.got = (int32_t)tecs_remove(v, e, I->cid[c]);
        } else {
            x.sub = Q_DESTROY;
            x.got = (int32_t)tecs_destroy(v, e);
        }
        log_push(L, &x);
        observe(ps, L, v, e, c);        /* not visible yet */
        break;
    }
    case 6:                     /* a declared read of another entity */
        if (ps->reads && I->ne > 0) {
            int c = (int)((h >> 8) % NC);
            while (!(ps->reads >> c & 1))
                c = (c + 1) % NC;
            observe(ps, L, v, I->e[(h >> 16) % (uint64_t)I->ne].id, c);
        }
        break;
    case 7: {                   /* refused calls */
        int u = -1;
        for (int k = 0; k < NC && u < 0; k++) {
            int c = (int)(((h >> 8) + (uint64_t)k) % NC);
            if (csize[c] && !(ps->rd >> c & 1))
                u = c;
        }
        lent x = { .kind = L_REFUSE, .id = e };
        if (u < 0 || (h >> 20 & 1)) {
            x.ptr = tecs_new(v) != 0;
            x.got = (int32_t)tecs_last_error(v);
        } else {
            x.sub = 1;
            x.comp = (int8_t)u;
            x.ptr = tecs_get(v, e, I->cid[u]) != NULL;
            x.got = (int32_t)tecs_last_error(v);
        }
        log_push(L, &x);
        break;
    }
    default:
        break;
    }
}

static void note_call(plog *L, const interp *I, const tecs_iter_t *it)
{
    if (L->calls++ == 0) {
        L->alloc_start = atomic_load(&I->alloc.calls);
        L->worker = it->worker;
        L->workers = it->workers;
        L->same = true;
        L->dq_at = I->ndq;      /* the calling thread pushes nothing meanwhile */
    } else if (L->worker != it->worker || L->workers != it->workers) {
        L->same = false;
    }
}

/* The system's run callback: log k is part k (0 for a concurrent one). */
static void par_cb(tecs_iter_t *it)
{
    psys *ps = it->ctx;
    int32_t k = it->worker >= 0 && it->worker < TECS_MAX_THREADS ? it->worker : 0;
    plog *L = &ps->log[k];
    note_call(L, ps->I, it);
    for (int32_t r = 0; r < it->count; r++)
        row(ps, L, it, r);
    L->alloc_end = atomic_load(&ps->I->alloc.calls);
}

/* ---- setting up --------------------------------------------------------------------- */

/* A system's context over model query q; extra reads and writes from the
** masks (data components; a declared read is never one it writes, so what
** it reads of other rows no part changes meanwhile). */
static psys *psys_new(interp *I, const mquery *q, uint32_t z, uint32_t rmask, uint32_t wmask,
                      bool all)
{
    psys *ps = calloc(1, sizeof *ps);
    if (ps == NULL)
        abort();
    ps->I = I;
    ps->q = *q;
    ps->z = z;
    for (int32_t t = 0; t < q->nt; t++) {
        if (q->t[t].oper == TECS_NONE || q->t[t].access == TECS_FILTER)
            continue;
        int c = q->ci[t] >= CI_PARENT && q->ci[t] < CI_PREFAB ? q->ci[t] - CI_PARENT : q->ci[t];
        ps->rd |= 1u << c;          /* a parent's component is read too */
        if (q->t[t].access == TECS_WRITE)
            ps->wr |= 1u << q->ci[t];
    }
    uint32_t wterms = ps->wr;
    wmask &= DATA_MASK;
    rmask &= DATA_MASK & ~wterms & ~wmask;
    int32_t nr = 0, nw = 0;
    for (int c = 0; c < NC; c++) {
        if (rmask >> c & 1)
            ps->rlist[nr++] = I->cid[c];
        if (wmask >> c & 1)
            ps->wlist[nw++] = I->cid[c];
    }
    ps->rd |= rmask | wmask;
    ps->wr |= wmask;
    ps->reads = rmask;
    if (all) {                  /* a split: no access list */
        ps->rd = ps->wr = 0xff;
        ps->reads = DATA_MASK & ~wterms;
    }
    for (int32_t k = 0; k < TECS_MAX_THREADS; k++)
        ps->log[k].dq_at = -1;
    return ps;
}

static void psys_free(psys *ps)
{
    for (int32_t k = 0; k < TECS_MAX_THREADS; k++)
        free(ps->log[k].e);
    free(ps);
}

static tecs_system_t psys_system(interp *I, psys *ps, const char *name, bool parallel,
                                 int32_t pmin)
{
    tecs_system_desc_t d = { .name = name, .query = ps->q.q, .run = par_cb, .ctx = ps,
                             .parallel = parallel, .concurrent = !parallel,
                             .parallel_min = parallel ? pmin : 0,
                             .reads = ps->rlist[0] ? ps->rlist : NULL,
                             .writes = ps->wlist[0] ? ps->wlist : NULL };
    ps->s = tecs_system_new(I->w, &d);
    if (mi_result_is(I, mi_got_err(I, ps->s != 0), TECS_OK, "tecs_system_new (threads)"))
        return 0;
    I->par_q[I->npar_q++] = ps->q.q;
    return ps->s;
}

/* ---- checking and applying the logs ------------------------------------------------- */

/* What x saw against the model (the world before the wave). */
static void check_obs(interp *I, const lent *x, const char *who)
{
    ment *m = mi_find(I, x->id);
    bool alive = m && m->st == ST_ALIVE, has = alive && (m->mask >> x->comp & 1);
    EXPECT(I, x->alive == alive && x->has == has,
           "%s: %s saw %llx alive %d has(%s) %d, the model %d %d", who, "a worker",
           (unsigned long long)x->id, x->alive, cname[x->comp], x->has, alive, has);
    if (!x->sub)
        return;
    /* Its own value, or its base's: another entity's row, which the wave
    ** may be writing (its value is the race's), so only found. */
    const ment *h = alive ? mr_holder(I, m, x->comp) : NULL;
    if (h)
        EXPECT(I, x->ptr && x->got == TECS_OK &&
                  (h != m || mi_same_val(x->comp, x->bytes, h->val[x->comp])),
               "%s: a worker's tecs_get of %s gave %s (%s), or another value than the model's",
               who, cname[x->comp], x->ptr ? "a value" : "NULL",
               tecs_err_name((tecs_err_t)x->got));
    else
        EXPECT(I, !x->ptr && x->got == (alive ? TECS_ENOENT : TECS_EDEAD),
               "%s: a worker's tecs_get of %s of %s: %s, the model says %s", who,
               cname[x->comp], alive ? "an entity without it" : "a dead entity",
               x->ptr ? "a value" : tecs_err_name((tecs_err_t)x->got),
               alive ? "TECS_ENOENT" : "TECS_EDEAD");
}

/* The rows a log visited: each a live entity the query matches, each once,
** all of them. */
static void check_rows(interp *I, const psys *ps, plog *const *logs, int32_t n, const char *who)
{
    int32_t want = 0, got = 0;
    for (int32_t i = 0; i < I->ne; i++)
        want += I->e[i].st == ST_ALIVE && m_match(&ps->q, &I->e[i]);
    for (int32_t k = 0; k < n; k++)
        for (int32_t i = 0; i < logs[k]->n; i++) {
            const lent *x = &logs[k]->e[i];
            if (x->kind != L_ROW)
                continue;
            ment *m = mi_find(I, x->id);
            EXPECT(I, m && m->st == ST_ALIVE && m_match(&ps->q, m),
                   "%s: a worker was handed %llx, which the query does not match", who,
                   (unsigned long long)x->id);
            uint32_t index = TECS_ENTITY_INDEX(x->id);
            EXPECT(I, I->mark[index] != x->id, "%s: %llx handed out twice", who,
                   (unsigned long long)x->id);
            I->mark[index] = x->id;
            got++;
        }
    for (int32_t k = 0; k < n; k++)
        for (int32_t i = 0; i < logs[k]->n; i++)
            if (logs[k]->e[i].kind == L_ROW)
                I->mark[TECS_ENTITY_INDEX(logs[k]->e[i].id)] = 0;
    EXPECT(I, got == want, "%s: the workers were handed %d rows, the query has %d", who,
           (int)got, (int)want);
}

/* Check one log's calls (before the wave applies) and push its queued
** changes on the model's queue. */
static void check_log(interp *I, const psys *ps, const plog *L, const char *who)
{
    for (int32_t i = 0; i < L->n; i++) {
        const lent *x = &L->e[i];
        switch (x->kind) {
        case L_CMD: {
            ment *m = mi_find(I, x->id);
            EXPECT(I, m && m->st == ST_ALIVE, "%s: a row's entity is not alive", who);
            if (x->got == TECS_ENOMEM && mi_injected(I)) {
                I->res->enomem++;
                break;          /* nothing queued */
            }
            EXPECT(I, x->got == TECS_OK, "%s: a worker's %s: %s, the model says TECS_OK", who,
                   x->sub == Q_SET ? "tecs_set" : x->sub == Q_ADD ? "tecs_add"
                   : x->sub == Q_REMOVE ? "tecs_remove" : x->sub == Q_DESTROY ? "tecs_destroy"
                   : "tecs_enable",
                   tecs_err_name((tecs_err_t)x->got));
            mcmd c = { .op = x->sub, .id = x->id, .comp = x->comp };
            c.val[x->comp] = x->v;
            mi_push_dq(I, &c);
            break;
        }
        case L_OBS:
            check_obs(I, x, who);
            break;
        case L_REFUSE:
            if (x->sub == 0)
                EXPECT(I, !x->ptr && x->got == TECS_EBUSY,
                       "%s: tecs_new on a worker: %s, last error %s", who,
                       x->ptr ? "an id" : "0", tecs_err_name((tecs_err_t)x->got));
            else
                EXPECT(I, !x->ptr && x->got == TECS_EACCESS && !(ps->rd >> x->comp & 1),
                       "%s: tecs_get of undeclared %s on a worker: %s, last error %s", who,
                       cname[x->comp], x->ptr ? "a value" : "NULL",
                       tecs_err_name((tecs_err_t)x->got));
            break;
        default:
            break;
        }
    }
}

/* Apply the writes through fields of a log. */
static void apply_writes(interp *I, const plog *L)
{
    for (int32_t i = 0; i < L->n; i++) {
        const lent *x = &L->e[i];
        if (x->kind != L_WRITE)
            continue;
        ment *m = mi_find(I, x->id);
        if (m) {
            m->val[x->comp] = x->v;
            I->keys_written = true;
        }
    }
}

/* A wave: its systems' contexts, and per context the logs in apply order. */
typedef struct pwave {
    psys *ps[TECS_MAX_THREADS];
    plog *logs[TECS_MAX_THREADS];
    int32_t n;
} pwave;

/* Flush the model's queue as one flush of the library: its drops counted
** on their own (the library's count restarts), then added to the step's.
** @return its drops; *err gets the first one's error if there was one. */
static int32_t flush_one(interp *I, int *err)
{
    int32_t d0 = I->mdrops;
    int e0 = I->mdrop_err;
    I->mdrops = 0;
    I->mdrop_err = TECS_OK;
    m_flush(I);
    int32_t n = I->mdrops;
    if (n > 0)
        *err = I->mdrop_err;
    I->mdrops += d0;
    I->mdrop_err = d0 ? e0 : I->mdrop_err;
    return n;
}

/*
** Check and apply waves w[0..nw) after the run; d[0..nd) is what the
** model's queue held after it (pushed by callbacks on the calling thread).
** *last_drops gets the drops of the last wave's merge (what
** tecs_dropped_changes says after the run), *last_err the error of the
** last flush that dropped something (what the last error says), or TECS_OK;
** *merge_err the first drop's error of the last wave's merge.
*/
static void replay(interp *I, pwave *w, int32_t nw, const mcmd *d, int32_t nd, const char *who,
                   int32_t *last_drops, int *last_err, int *merge_err)
{
    int32_t at = 0;
    *last_drops = 0;
    *last_err = TECS_OK;
    *merge_err = TECS_OK;
    for (int32_t k = 0; k < nw; k++) {
        *last_drops = 0;
        int32_t start = -1;
        for (int32_t i = 0; i < w[k].n; i++)
            if (w[k].logs[i]->calls > 0 && (start < 0 || w[k].logs[i]->dq_at < start))
                start = w[k].logs[i]->dq_at;
        if (start < 0)
            continue;           /* no call: no write, nothing queued */
        int32_t end = nd;
        for (int32_t j = k + 1; j < nw && end == nd; j++)
            for (int32_t i = 0; i < w[j].n; i++)
                if (w[j].logs[i]->calls > 0 && w[j].logs[i]->dq_at < end)
                    end = w[j].logs[i]->dq_at;
        EXPECT(I, start >= at && end >= start, "%s: the waves' callbacks ran out of order", who);
        for (; at < start; at++)            /* (none expected) */
            mi_push_dq(I, &d[at]);
        m_flush(I);
        /* 1: what the calls saw; each context's rows */
        for (int32_t i = 0; i < w[k].n; i++) {
            int32_t j = i;
            while (j + 1 < w[k].n && w[k].ps[j + 1] == w[k].ps[i])
                j++;
            check_rows(I, w[k].ps[i], &w[k].logs[i], j - i + 1, who);
            i = j;
        }
        int32_t q0 = I->ndq;
        for (int32_t i = 0; i < w[k].n; i++)
            check_log(I, w[k].ps[i], w[k].logs[i], who);
        /* the queued changes wait for step 4 */
        int32_t nq = I->ndq - q0;
        mcmd *queued = malloc(((size_t)nq + 1) * sizeof *queued);
        if (queued == NULL)
            abort();
        if (nq > 0)
            memcpy(queued, I->dq + q0, (size_t)nq * sizeof *queued);
        I->ndq = q0;
        /* 2: writes in place */
        for (int32_t i = 0; i < w[k].n; i++)
            apply_writes(I, w[k].logs[i]);
        /* 3: the report's callbacks, 4: the merge */
        int32_t post = start;
        while (post < end && !d[post].applying)
            post++;
        for (int32_t i = post; i < end; i++)
            EXPECT(I, d[i].applying, "%s: a change queued by a write's report comes after "
                   "the merge's", who);
        for (; at < post; at++)
            mi_push_dq(I, &d[at]);
        if (I->ndq > 0)
            flush_one(I, last_err);
        for (int32_t i = 0; i < nq; i++)
            mi_push_dq(I, &queued[i]);
        for (; at < end; at++)
            mi_push_dq(I, &d[at]);
        free(queued);
        *merge_err = TECS_OK;
        if ((*last_drops = flush_one(I, merge_err)) > 0)
            *last_err = *merge_err;
    }
    for (; at < nd; at++)
        mi_push_dq(I, &d[at]);
    m_flush(I);
}

/* Take what the model's queue holds (the run's callbacks pushed it). */
static mcmd *take_dq(interp *I, int32_t *n)
{
    *n = I->ndq;
    mcmd *d = malloc(((size_t)I->ndq + 1) * sizeof *d);
    if (d == NULL)
        abort();
    if (I->ndq > 0)             /* (an empty queue may have no array) */
        memcpy(d, I->dq, (size_t)I->ndq * sizeof *d);
    I->ndq = 0;
    return d;
}

/* Replay the parts of one system's run (its logs, in part order) and the
** deferred queue the model holds, as replay does for a wave. */
static void replay_parts(interp *I, psys *ps, int32_t parts, const char *who,
                         int32_t *last_drops, int *last_err, int *merge_err)
{
    pwave wv = { .n = parts };
    for (int32_t k = 0; k < parts; k++)
        wv.ps[k] = ps, wv.logs[k] = &ps->log[k];
    int32_t nd;
    mcmd *d = take_dq(I, &nd);
    replay(I, &wv, 1, d, nd, who, last_drops, last_err, merge_err);
    free(d);
}

static int32_t model_rows(interp *I, const mquery *q)
{
    int32_t n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        n += I->e[i].st == ST_ALIVE && m_match(q, &I->e[i]);
    return n;
}

/* Parts: log k holds part k, rows [k N / p, (k + 1) N / p) of the N the
** query had, in its iteration order (order[0..N)); it->worker k,
** it->workers p; no log past p. */
static void check_parts(interp *I, const psys *ps, const tecs_entity_t *order, int32_t rows,
                        int32_t parts, const char *who)
{
    int32_t pos = 0;
    for (int32_t k = 0; k < TECS_MAX_THREADS; k++) {
        const plog *L = &ps->log[k];
        if (k >= parts) {
            EXPECT(I, L->calls == 0, "%s: part %d of %d ran", who, (int)k, (int)parts);
            continue;
        }
        int64_t first = (int64_t)rows * k / parts, end = (int64_t)rows * (k + 1) / parts;
        int32_t n = 0;
        for (int32_t i = 0; i < L->n; i++) {
            if (L->e[i].kind != L_ROW)
                continue;
            EXPECT(I, pos < rows && order[pos] == L->e[i].id,
                   "%s: part %d hands out %llx at row %d, not the query's order", who, (int)k,
                   (unsigned long long)L->e[i].id, (int)pos);
            pos++;
            n++;
        }
        EXPECT(I, n == end - first, "%s: part %d of %d has %d rows, not %lld", who, (int)k,
               (int)parts, (int)n, (long long)(end - first));
        if (L->calls > 0)
            EXPECT(I, L->same && L->worker == k && L->workers == parts,
                   "%s: part %d's iterator says worker %d of %d (model: %d of %d)", who, (int)k,
                   (int)L->worker, (int)L->workers, (int)k, (int)parts);
    }
    EXPECT(I, pos == rows, "%s: the parts cover %d of %d rows", who, (int)pos, (int)rows);
}

/* The ids query q hands out, in order; *n of them. Caller frees. The
** collection is an iteration: it reports writes, callbacks run. */
static tecs_entity_t *collect(interp *I, const mquery *q, int32_t *n)
{
    tecs_entity_t *ids = malloc(((size_t)I->ne + 17) * sizeof *ids);
    if (ids == NULL)
        abort();
    I->checking++;              /* its write terms' report runs no body */
    *n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q) }, ids, I->ne + 16);
    I->checking--;
    if (*n < 0 || *n > I->ne + 16) {
        mi_result_is(I, mi_got_err(I, false), TECS_OK, "tecs_iter_collect");
        *n = 0;
    }
    return ids;
}

/* The run's result: want, or TECS_ENOMEM when an allocation was made to
** fail; its last error is checked after the replay (check_drops). */
static bool run_result(interp *I, int got, int want, const char *what)
{
    uint32_t off = I->off;
    I->off |= MF_LASTERR;
    bool enomem = mi_result_is(I, got, want, what);
    I->off = off;
    return enomem;
}

/* After a run that succeeded: tecs_dropped_changes counts its last merge's
** drops, and the last error names the last flush that dropped changes
** (the report's or a merge's; each merge starts its own count). The
** step's own check of drops has nothing left to do. */
static void check_drops(interp *I, int err, int32_t drops, int last_err, const char *what)
{
    if (err == TECS_OK && !mi_injected(I)) {
        EXPECT(I, tecs_dropped_changes(I->w) == drops, "%s: the library dropped %d queued "
               "change(s) in its last merge, the model %d", what,
               (int)tecs_dropped_changes(I->w), (int)drops);
        EXPECT(I, tecs_last_error(I->w) == (tecs_err_t)last_err || !on(I, MF_LASTERR),
               "%s: last error %s (%s), the model says %s", what,
               tecs_err_name(tecs_last_error(I->w)), tecs_last_error_msg(I->w),
               tecs_err_name((tecs_err_t)last_err));
    }
    I->mdrops = 0;
    I->mdrop_err = TECS_OK;
    I->ldrops = -1;
}

/*
** Did the allocation made to fail (an OOM run) come after a callback
** began, but outside every callback: in a merge of queues (calls0: the
** allocations made before the run)? The library then keeps what it could
** not apply in the workers' queues, where no later call of the world sees
** it, until the next parallel run's merge: the model cannot follow that,
** and the program is cut there (mi_cut).
*/
static bool merge_failed(interp *I, long calls0, psys *const *ps, int32_t n)
{
    long at = I->o.fail_at;
    if (!at || !mi_injected(I) || at <= calls0)
        return false;
    bool after = false, queued = false;
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = 0; k < TECS_MAX_THREADS; k++) {
            const plog *L = &ps[i]->log[k];
            if (L->calls == 0)
                continue;
            if (at > L->alloc_start && at <= L->alloc_end)
                return false;   /* a worker's own call met it */
            after = after || at > L->alloc_start;
            for (int32_t j = 0; j < L->n && !queued; j++)
                queued = L->e[j].kind == L_CMD && L->e[j].got == TECS_OK;
        }
    return after && queued;
}

static const char merge_cut[] = "an allocation failed in the workers' merge: what it did "
                                "not apply waits for a later flush or merge";

/* ---- the ops -------------------------------------------------------------------------- */

/*
** A parallel system over a model query, with x % 4 + 1 workers and
** parallel_min 1 + 3 (y & 3); y >> 4 declares reads (data components it
** does not write); run by a frame (x & 4) or tecs_system_run. Its rows
** write through a write term, queue changes of their own entity, read a
** declared component of another entity, make refused calls (row()). Inside
** an iteration or a deferred section the run is refused and nothing runs.
*/
/* Parts follow the archetypes' rows, while an iteration of a query with a
** sparse with-term may walk its members instead: the checks here compare
** parts with the iteration's order, so queries with sparse terms sit out
** (test_sparse_query.c runs parallel parts over a sparse term). */
void op_par_run(interp *I, const m_op *op)
{
    if (I->nq == 0 || I->npar_q > 0 || mq_sparse(&I->qs[op->z % (uint32_t)I->nq]))
        return;
    int32_t n = 1 + op->x % 4;
    if (!set_workers(I, n))
        return;
    const mquery *q = &I->qs[op->z % (uint32_t)I->nq];
    psys *ps = psys_new(I, q, op->z, op->y >> 4, 0, false);
    int32_t pmin = 1 + 3 * (op->y & 3);
    if (psys_system(I, ps, "model_par", true, pmin) == 0) {
        psys_free(ps);
        return;
    }
    bool busy = mi_deferred(I), frame = op->x & 4;
    int32_t rows = 0;
    tecs_entity_t *order = busy ? NULL : collect(I, q, &rows);
    EXPECT(I, busy || rows == model_rows(I, q), "the query has %d rows, the model %d",
           (int)rows, (int)model_rows(I, q));
    int32_t threads = tecs_world_threads(I->w);
    int32_t parts = rows < pmin || rows < threads ? 1 : threads;
    long calls0 = I->alloc.calls;
    int err = frame ? (int)tecs_progress(I->w, 0.125) : (int)tecs_system_run(I->w, ps->s, 0.125);
    const char *what = frame ? "tecs_progress (parallel)" : "tecs_system_run (parallel)";
    bool enomem = run_result(I, err, busy ? TECS_EBUSY : TECS_OK, what);
    int32_t calls = 0;
    for (int32_t k = 0; k < TECS_MAX_THREADS; k++)
        calls += ps->log[k].calls;
    if (merge_failed(I, calls0, &ps, 1)) {
        free(order);
        psys_free(ps);
        mi_cut(I, merge_cut);
    }
    if (busy || (enomem && calls == 0)) {
        EXPECT(I, calls == 0, "a refused run ran its callback");
    } else {
        check_parts(I, ps, order, rows, parts, "par_run");
        int32_t drops;
        int derr, merr;
        replay_parts(I, ps, parts, "par_run", &drops, &derr, &merr);
        check_drops(I, err, drops, derr, what);
        mi_settle(I);
        m_flush(I);
    }
    free(order);
    mi_result_is(I, tecs_system_free(I->w, ps->s), TECS_OK, "tecs_system_free");
    I->npar_q = 0;
    psys_free(ps);
}

/*
** 2 or 3 concurrent systems (x & 1) over model queries, with 1..4 workers
** (x >> 1), each with declared reads and maybe a declared write (y, z),
** run in one frame. The model makes the waves as the library must:
** consecutive systems up to one whose access conflicts with one of the
** wave's (one writes what the other reads or writes); each wave sees the
** world from before it, and its changes apply after it, system by system.
*/
void op_conc_run(interp *I, const m_op *op)
{
    if (I->nq == 0 || I->npar_q > 0)
        return;
    int32_t nsys = 2 + (op->x & 1);
    for (int32_t i = 0; i < nsys; i++)        /* (see op_par_run) */
        if (mq_sparse(&I->qs[(uint32_t)mi_mix(op->z + (uint32_t)i) % (uint32_t)I->nq]))
            return;
    if (!set_workers(I, 1 + (op->x >> 1) % 4))
        return;
    static const char *const names[3] = { "model_conc0", "model_conc1", "model_conc2" };
    psys *ps[3] = { 0 };
    int32_t made = 0;
    for (int32_t i = 0; i < nsys; i++) {
        uint32_t zi = (uint32_t)mi_mix(op->z + (uint32_t)i);
        const mquery *q = &I->qs[zi % (uint32_t)I->nq];
        uint32_t wmask = (op->y >> (13 + i) & 1) ? 1u << plain[(zi >> 8) % 5] : 0;
        ps[i] = psys_new(I, q, zi, (uint32_t)(op->y >> (4 * i)) & 0xf3, wmask, false);
        if (psys_system(I, ps[i], names[i], false, 0) == 0) {
            psys_free(ps[i]);
            ps[i] = NULL;
            break;
        }
        made++;
    }
    if (made == nsys) {
        bool busy = mi_deferred(I);
        long calls0 = I->alloc.calls;
        int err = (int)tecs_progress(I->w, 0.125);
        bool enomem = run_result(I, err, busy ? TECS_EBUSY : TECS_OK,
                                 "tecs_progress (concurrent)");
        int32_t calls = 0;
        for (int32_t i = 0; i < nsys; i++)
            calls += ps[i]->log[0].calls;
        if (merge_failed(I, calls0, ps, nsys)) {
            for (int32_t i = 0; i < nsys; i++)
                psys_free(ps[i]);
            mi_cut(I, merge_cut);
        }
        if (busy || (enomem && calls == 0)) {
            EXPECT(I, calls == 0, "a refused frame ran a concurrent system");
        } else {
            pwave wv[3] = { 0 };
            int32_t nw = 0;
            for (int32_t i = 0; i < nsys; i++) {
                bool clash = nw == 0;
                for (int32_t j = 0; nw > 0 && j < wv[nw - 1].n; j++) {
                    const psys *o = wv[nw - 1].ps[j];
                    clash = clash || (o->wr & ps[i]->rd) || (ps[i]->wr & o->rd);
                }
                if (clash)
                    nw++;
                pwave *cur = &wv[nw - 1];
                cur->ps[cur->n] = ps[i];
                cur->logs[cur->n++] = &ps[i]->log[0];
                EXPECT(I, ps[i]->log[0].calls == 0 ||
                       (ps[i]->log[0].same && ps[i]->log[0].worker == 0 &&
                        ps[i]->log[0].workers == 1),
                       "a concurrent system's iterator says worker %d of %d",
                       (int)ps[i]->log[0].worker, (int)ps[i]->log[0].workers);
                for (int32_t k = 1; k < TECS_MAX_THREADS; k++)
                    EXPECT(I, ps[i]->log[k].calls == 0, "a concurrent system ran as part %d",
                           (int)k);
            }
            int32_t nd, drops;
            int derr;
            int merr;
            mcmd *d = take_dq(I, &nd);
            replay(I, wv, nw, d, nd, "conc_run", &drops, &derr, &merr);
            free(d);
            check_drops(I, err, drops, derr, "tecs_progress (concurrent)");
            mi_settle(I);
            m_flush(I);
        }
    }
    for (int32_t i = 0; i < made; i++)
        mi_result_is(I, tecs_system_free(I->w, ps[i]->s), TECS_OK, "tecs_system_free");
    I->npar_q = 0;
    for (int32_t i = 0; i < nsys; i++)
        if (ps[i])
            psys_free(ps[i]);
}

/*
** A split of a model query in 1 + x % 4 parts, run on the calling thread
** in an order drawn from z; each part's rows do what a parallel system's
** do (no access list: every component may be read). tecs_split_end applies
** the parts' changes, part 0 first, and returns the first drop's error.
** A part past the last, or of another query, is empty.
*/
void op_split_run(interp *I, const m_op *op)
{
    if (I->nq == 0 || I->npar_q > 0 || mq_sparse(&I->qs[op->z % (uint32_t)I->nq]))
        return;
    int32_t parts = 1 + op->x % 4;
    const mquery *q = &I->qs[op->z % (uint32_t)I->nq];
    bool busy = mi_deferred(I);
    int32_t rows = 0;
    tecs_entity_t *order = busy ? NULL : collect(I, q, &rows);
    int err = (int)tecs_split_begin(q->q, parts);
    if (mi_result_is(I, err, busy ? TECS_EBUSY : TECS_OK, "tecs_split_begin") ||
        err != TECS_OK) {
        free(order);
        return;
    }
    psys *ps = psys_new(I, q, op->z, 0, 0, true);
    int32_t perm[4] = { 0, 1, 2, 3 };
    uint32_t z = op->z;
    for (int32_t i = parts - 1; i > 0; i--) {
        z = (uint32_t)mi_mix(z);
        int32_t j = (int32_t)(z % (uint32_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int32_t i = 0; i < parts; i++) {
        tecs_iter_t it = TECS_ITER(I->w, .query = q->q, .parts = parts, .part = perm[i]);
        while (tecs_iter_next(&it)) {
            plog *L = &ps->log[perm[i]];
            note_call(L, I, &it);
            for (int32_t r = 0; r < it.count; r++)
                row(ps, L, &it, r);
            L->alloc_end = atomic_load(&I->alloc.calls);
        }
    }
    tecs_iter_t none = TECS_ITER(I->w, .query = q->q, .parts = parts, .part = parts);
    bool empty = !tecs_iter_next(&none);
    I->split_q = q->q;          /* a callback may free it: q is then stale */
    long calls0 = I->alloc.calls;
    err = (int)tecs_split_end(q->q);
    I->split_q = NULL;
    if (merge_failed(I, calls0, &ps, 1)) {
        free(order);
        psys_free(ps);
        mi_cut(I, merge_cut);
    }
    EXPECT(I, empty, "a split part %d of %d is not empty", (int)parts, (int)parts);
    check_parts(I, ps, order, rows, parts, "split_run");
    int32_t drops;
    int derr, merr;
    replay_parts(I, ps, parts, "split_run", &drops, &derr, &merr);
    if (!(err == TECS_ENOMEM && mi_injected(I)))
        EXPECT(I, err == merr, "tecs_split_end: %s, the model says %s (%d dropped)",
               tecs_err_name((tecs_err_t)err), tecs_err_name((tecs_err_t)merr), (int)drops);
    else
        I->res->enomem++;
    check_drops(I, err == merr ? TECS_OK : err, drops, derr, "tecs_split_end");
    mi_settle(I);
    m_flush(I);
    free(order);
    psys_free(ps);
}
#endif /* TECS_HAS_SYSTEM */
