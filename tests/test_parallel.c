/* Threads: workers, parallel and concurrent systems, splits, executors. */
#include "test.h"

#include <stdatomic.h>

#if !defined(_WIN32)
#include <pthread.h>
#define HAVE_PTHREADS 1
#else
#define HAVE_PTHREADS 0
#endif

typedef struct { float x, y; } Pos;
typedef struct { float x, y; } Vel;
typedef struct { int32_t v; } Hp;

/* ---- a counting allocator safe on several threads ---------------------- */

typedef struct lk_alloc {
    atomic_long blocks;
    atomic_long calls;
    long fail_at;               /* fail this call (1-based); 0: none        */
} lk_alloc;

static void *lk_alloc_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    lk_alloc *a = ud;
    (void)osize;
    if (nsize == 0) {
        if (ptr) {
            atomic_fetch_sub(&a->blocks, 1);
            free(ptr);
        }
        return NULL;
    }
    long n = atomic_fetch_add(&a->calls, 1) + 1;
    if (a->fail_at > 0 && n == a->fail_at)
        return NULL;
    void *p = realloc(ptr, nsize);
    if (p && ptr == NULL)
        atomic_fetch_add(&a->blocks, 1);
    return p;
}

static tecs_world_t *lk_new(lk_alloc *a)
{
    atomic_init(&a->blocks, 0);
    atomic_init(&a->calls, 0);
    a->fail_at = 0;
    return tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = lk_alloc_fn, .alloc_ud = a });
}

static void lk_free(tecs_world_t *w, lk_alloc *a)
{
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    CHECK_ERR(tecs_world_free(w), TECS_OK);
    CHECK_EQ(atomic_load(&a->blocks), 0);
}

/* ---- a world of n entities with Pos and Vel ------------------------------ */

typedef struct fx {
    tecs_world_t *w;
    lk_alloc a;
    tecs_comp_t pos, vel, hp, tag;
    tecs_query_t *q;            /* Pos (write), Vel (read)                  */
} fx;

static void fx_open(fx *f, int32_t n, int32_t threads)
{
    f->w = lk_new(&f->a);
    CHECK(f->w != NULL);
    f->pos = TECS_COMPONENT(f->w, Pos);
    f->vel = TECS_COMPONENT(f->w, Vel);
    f->hp = TECS_COMPONENT(f->w, Hp);
    f->tag = tecs_component_new(f->w, &(tecs_component_desc_t){ .name = "Tag" });
    for (int32_t i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(f->w);
        tecs_set(f->w, e, f->pos, &(Pos){ (float)i, 0 });
        tecs_set(f->w, e, f->vel, &(Vel){ 1, 2 });
    }
    f->q = tecs_query_new(f->w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = f->pos },
                                  { .comp = f->vel, .access = TECS_READ } },
        .term_count = 2 });
    CHECK(f->q != NULL);
    CHECK_ERR(tecs_world_set_threads(f->w, threads), TECS_OK);
}

static void fx_close(fx *f)
{
    lk_free(f->w, &f->a);       /* (the world frees the queries) */
}

/* ---- parts --------------------------------------------------------------- */

typedef struct parts_seen {
    atomic_long rows[TECS_MAX_THREADS];
    atomic_int workers;
} parts_seen;

static void count_part(tecs_iter_t *it)
{
    parts_seen *s = it->ctx;
    Pos *p = tecs_field(it, 0);
    const Vel *v = tecs_field(it, 1);
    for (int32_t i = 0; i < it->count; i++)
        p[i].y += v[i].y;
    atomic_fetch_add(&s->rows[it->worker], it->count);
    atomic_store(&s->workers, it->workers);
}

TEST(parallel_parts_cover_every_row_once)
{
    for (int32_t threads = 1; threads <= 4; threads++) {
        fx f;
        fx_open(&f, 10000, threads);
        parts_seen seen;
        memset(&seen, 0, sizeof seen);
        tecs_system_t s = tecs_system_new(f.w, &(tecs_system_desc_t){
            .name = "move", .query = f.q, .run = count_part, .ctx = &seen, .parallel = true,
            .parallel_min = 1 });
        CHECK(s != 0);
        CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
        CHECK_EQ(atomic_load(&seen.workers), threads);
        long total = 0;
        for (int32_t k = 0; k < threads; k++) {
            long r = atomic_load(&seen.rows[k]);
            CHECK(r >= 10000 / threads - 1 && r <= 10000 / threads + 1);   /* about equal */
            total += r;
        }
        CHECK_EQ(total, 10000);
        tecs_iter_t it = TECS_ITER(tecs_query_world(f.q), .query = f.q);
        int32_t n = 0;
        while (tecs_iter_next(&it))
            for (int32_t i = 0; i < it.count; i++, n++)
                CHECK(((Pos *)tecs_field(&it, 0))[i].y == 2.0f);
        CHECK_EQ(n, 10000);
        tecs_system_stats_t st;
        CHECK_ERR(tecs_system_stats(f.w, s, &st), TECS_OK);
        CHECK_EQ(st.entities_last, 10000);
        CHECK_EQ(st.runs, 1);
        fx_close(&f);
    }
}

/* A system over 1,000 rows in a world of 4 threads, parallel or not, runs
** as one part: worker 0 of 1 sees every row. */
static void check_one_part(bool parallel)
{
    fx f;
    fx_open(&f, 1000, 4);
    parts_seen seen;
    memset(&seen, 0, sizeof seen);
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "move", .query = f.q, .run = count_part, .ctx = &seen, .parallel = parallel }));
    CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&seen.workers), 1);
    CHECK_EQ(atomic_load(&seen.rows[0]), 1000);
    fx_close(&f);
}

TEST(parallel_below_its_minimum_runs_as_one_part)
{
    check_one_part(true);       /* 1000 < TECS_PARALLEL_MIN */
}

TEST(serial_system_runs_as_worker_0_of_1)
{
    check_one_part(false);
}

/* ---- what a worker may call ---------------------------------------------- */

typedef struct calls_ctx {
    fx *f;
    tecs_entity_t other;        /* an entity of no part                    */
    atomic_int bad;             /* checks that failed on a worker          */
    atomic_int rows;
} calls_ctx;

#define WCHECK(c, cond) ((cond) ? (void)0 : (void)atomic_fetch_add(&(c)->bad, 1))

static void worker_calls(tecs_iter_t *it)
{
    calls_ctx *c = it->ctx;
    fx *f = c->f;
    tecs_world_t *v = it->world;
    WCHECK(c, v != f->w);                              /* a worker context */
    WCHECK(c, tecs_is_deferred(v));
    for (int32_t i = 0; i < it->count; i++) {
        tecs_entity_t e = it->entities[i];
        /* W1: reads of declared components, of any entity */
        const Pos *p = tecs_get(v, e, f->pos);
        WCHECK(c, p != NULL && tecs_last_error(v) == TECS_OK);
        WCHECK(c, tecs_get(v, c->other, f->vel) != NULL);
        WCHECK(c, tecs_get(v, e, f->hp) == NULL && tecs_last_error(v) == TECS_EACCESS);
        WCHECK(c, tecs_get_mut(v, e, f->vel) == NULL && tecs_last_error(v) == TECS_EACCESS);
        WCHECK(c, tecs_has(v, e, f->pos) && !tecs_has(v, e, f->tag));
        WCHECK(c, tecs_is_alive(v, e));
        /* W3: queued, not seen by the worker itself */
        WCHECK(c, tecs_set(v, e, f->pos, &(Pos){ -1, -1 }) == TECS_OK);
        WCHECK(c, tecs_get(v, e, f->pos) == p && p->x != -1);
        WCHECK(c, tecs_add(v, e, f->tag) == TECS_OK && !tecs_has(v, e, f->tag));
        if (i % 2 == 0)
            WCHECK(c, tecs_destroy(v, e) == TECS_OK && tecs_is_alive(v, e));
        /* W4: refused, the error the worker's own */
        WCHECK(c, tecs_resource_get_mut(v, f->hp) == NULL);
        WCHECK(c, tecs_new(v) == 0 && tecs_last_error(v) == TECS_EBUSY);
        WCHECK(c, tecs_delayed_destroy(v, e, NULL, NULL) == TECS_EBUSY);
        WCHECK(c, tecs_component_new(v, &(tecs_component_desc_t){ .name = "X" }) == 0);
        WCHECK(c, tecs_query_new(v, &(tecs_query_desc_t){ 0 }) == NULL);
        tecs_iter_t qi = TECS_ITER(v, .query = f->q);
        WCHECK(c, !tecs_iter_next(&qi));
        WCHECK(c, tecs_progress(v, 0) == TECS_EBUSY);
        WCHECK(c, tecs_world_set_threads(v, 1) == TECS_EBUSY);
        WCHECK(c, tecs_world_free(v) == TECS_EBUSY);
        /* through the world itself: refused, nothing recorded */
        WCHECK(c, tecs_add(f->w, e, f->hp) == TECS_EBUSY);
        WCHECK(c, tecs_get(f->w, e, f->pos) == NULL);
        atomic_fetch_add(&c->rows, 1);
    }
}

TEST(parallel_worker_calls_follow_the_table)
{
    fx f;
    fx_open(&f, 300, 3);
    calls_ctx c = { .f = &f };
    atomic_init(&c.bad, 0);
    atomic_init(&c.rows, 0);
    c.other = tecs_new(f.w);
    tecs_set(f.w, c.other, f.vel, &(Vel){ 5, 5 });
    tecs_set(f.w, c.other, f.hp, &(Hp){ 1 });
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "calls", .query = f.q, .run = worker_calls, .ctx = &c, .parallel = true,
        .parallel_min = 1, .reads = (tecs_comp_t[]){ f.vel, 0 } }));
    CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&c.bad), 0);
    CHECK_EQ(atomic_load(&c.rows), 300);
    CHECK_EQ(tecs_last_error(f.w), TECS_OK);
    /* after the run: the queued changes applied, the refused ones not */
    CHECK_EQ(tecs_world_entity_count(f.w), 150 + 1);
    tecs_iter_t it = TECS_ITER(tecs_query_world(f.q), .query = f.q);
    int32_t n = 0;
    while (tecs_iter_next(&it)) {
        const Pos *p = tecs_field(&it, 0);
        for (int32_t i = 0; i < it.count; i++, n++) {
            CHECK(p[i].x == -1 && p[i].y == -1);
            CHECK(tecs_has(f.w, it.entities[i], f.tag));
            CHECK(!tecs_has(f.w, it.entities[i], f.hp));
        }
    }
    CHECK_EQ(n, 150);
    CHECK_EQ(tecs_world_component_count(f.w), 4);
    fx_close(&f);
}

static void read_hp(tecs_iter_t *it)
{
    calls_ctx *c = it->ctx;
    for (int32_t i = 0; i < it->count; i++) {
        WCHECK(c, tecs_get(it->world, c->other, c->f->hp) != NULL);
        WCHECK(c, tecs_get_mut(it->world, c->other, c->f->hp) == NULL);
        Hp *h = tecs_get_mut(it->world, it->entities[i], c->f->vel);
        WCHECK(c, h != NULL);
        WCHECK(c, tecs_modified(it->world, it->entities[i], c->f->vel) == TECS_OK);
        WCHECK(c, tecs_modified(it->world, it->entities[i], c->f->hp) == TECS_EACCESS);
    }
}

TEST(parallel_declared_reads_and_writes_widen_the_access)
{
    fx f;
    fx_open(&f, 100, 2);
    calls_ctx c = { .f = &f };
    atomic_init(&c.bad, 0);
    c.other = tecs_new(f.w);
    tecs_set(f.w, c.other, f.hp, &(Hp){ 1 });
    tecs_system_t s = tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "hp", .query = f.q, .run = read_hp, .ctx = &c, .parallel = true,
        .parallel_min = 1, .reads = (tecs_comp_t[]){ f.hp, 0 },
        .writes = (tecs_comp_t[]){ f.vel, 0 } });
    CHECK(s != 0);
    CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&c.bad), 0);
    tecs_system_desc_t d;
    CHECK_ERR(tecs_system_get(f.w, s, &d), TECS_OK);
    CHECK(d.parallel && !d.concurrent && d.parallel_min == 1);
    CHECK(d.reads && d.reads[0] == f.hp && d.reads[1] == 0);
    CHECK(d.writes && d.writes[0] == f.vel && d.writes[1] == 0);
    /* bad descriptions */
    tecs_system_desc_t bad = { .name = "b", .query = f.q, .run = read_hp, .parallel = true,
                               .concurrent = true };
    CHECK(tecs_system_new(f.w, &bad) == 0 && tecs_last_error(f.w) == TECS_EINVAL);
    bad = (tecs_system_desc_t){ .name = "b", .run = read_hp, .reads = (tecs_comp_t[]){ 0 } };
    CHECK(tecs_system_new(f.w, &bad) == 0 && tecs_last_error(f.w) == TECS_EINVAL);
    bad = (tecs_system_desc_t){ .name = "b", .run = read_hp, .concurrent = true,
                                .writes = (tecs_comp_t[]){ 999, 0 } };
    CHECK(tecs_system_new(f.w, &bad) == 0 && tecs_last_error(f.w) == TECS_ENOCOMP);
    bad = (tecs_system_desc_t){ .name = "b", .run = read_hp, .parallel = true,
                                .parallel_min = -1 };
    CHECK(tecs_system_new(f.w, &bad) == 0 && tecs_last_error(f.w) == TECS_EINVAL);
    /* set keeps its place and takes the new access */
    d.reads = NULL;
    CHECK_ERR(tecs_system_set(f.w, s, &d), TECS_OK);
    CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
    CHECK(atomic_load(&c.bad) > 0);             /* Hp is no longer readable */
    fx_close(&f);
}

/* ---- concurrent systems -------------------------------------------------- */

/* An executor that runs the jobs at wait, last first, and counts batches. */
typedef struct lazy_exec {
    tecs_job_fn job[TECS_MAX_THREADS];
    void *arg[TECS_MAX_THREADS];
    int n;
    int batches;
    int jobs;                   /* jobs in the last batch                  */
    int max_jobs;
} lazy_exec;

static void lazy_submit(void *ctx, tecs_job_fn job, void *arg)
{
    lazy_exec *x = ctx;
    CHECK(x->n < TECS_MAX_THREADS);
    x->job[x->n] = job;
    x->arg[x->n++] = arg;
}

static void lazy_wait(void *ctx)
{
    lazy_exec *x = ctx;
    x->batches++;
    x->jobs = x->n;
    x->max_jobs = x->n > x->max_jobs ? x->n : x->max_jobs;
    while (x->n > 0) {
        x->n--;
        x->job[x->n](x->arg[x->n]);
    }
}

typedef struct wave_ctx {
    fx *f;
    tecs_entity_t e;
    int saw_tag;                /* what the reader saw: 1 tagged, 0 not    */
} wave_ctx;

static void tag_it(tecs_iter_t *it)
{
    wave_ctx *c = it->ctx;
    CHECK_ERR(tecs_add(it->world, c->e, c->f->tag), TECS_OK);
}

static void look_for_tag(tecs_iter_t *it)
{
    wave_ctx *c = it->ctx;
    c->saw_tag = tecs_has(it->world, c->e, c->f->tag);
}

TEST(concurrent_systems_run_side_by_side_when_access_allows)
{
    fx f;
    fx_open(&f, 10, 0);
    lazy_exec x = { .n = 0 };
    CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){
        .submit = lazy_submit, .wait = lazy_wait, .ctx = &x, .threads = 4 }), TECS_OK);
    CHECK_EQ(tecs_world_threads(f.w), 4);
    tecs_query_t *qp = tecs_query_all(f.w, 1, &f.pos);       /* writes Pos */
    tecs_query_t *qv = tecs_query_all(f.w, 1, &f.vel);       /* writes Vel */
    tecs_query_t *qr = tecs_query_new(f.w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = f.pos, .access = TECS_READ } }, .term_count = 1 });
    wave_ctx a = { .f = &f, .e = tecs_new(f.w) }, b = a, r = a;
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "a", .query = qp, .run = tag_it, .ctx = &a, .concurrent = true }));
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "b", .query = qv, .run = look_for_tag, .ctx = &b, .concurrent = true }));
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){      /* reads what a writes */
        .name = "r", .query = qr, .run = look_for_tag, .ctx = &r, .concurrent = true }));
    CHECK_ERR(tecs_progress(f.w, 0.1), TECS_OK);
    CHECK_EQ(x.batches, 1);                     /* {a, b}; {r} alone runs on */
    CHECK_EQ(x.max_jobs, 2);                    /* the calling thread        */
    CHECK_EQ(b.saw_tag, 0);                     /* beside a: the world before */
    CHECK_EQ(r.saw_tag, 1);                     /* after a's wave          */
    CHECK(tecs_has(f.w, a.e, f.tag));
    CHECK_ERR(tecs_world_set_executor(f.w, NULL), TECS_OK);
    CHECK_EQ(tecs_world_threads(f.w), 1);
    CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){ .wait = lazy_wait,
                                                               .threads = 2 }), TECS_EINVAL);
    CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){
        .submit = lazy_submit, .wait = lazy_wait, .threads = 0 }), TECS_EINVAL);
    CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){
        .submit = lazy_submit, .wait = lazy_wait, .threads = TECS_MAX_THREADS + 1 }),
        TECS_EINVAL);
    /* a system that is not concurrent ends a wave, and runs alone */
    tecs_system_free(f.w, tecs_system_lookup(f.w, "r"));
    CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){
        .submit = lazy_submit, .wait = lazy_wait, .ctx = &x, .threads = 4 }), TECS_OK);
    fx_close(&f);
}

/* ---- determinism ------------------------------------------------------- */

typedef struct det_ctx {
    fx *f;
    tecs_entity_t hub;
} det_ctx;

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

/* Moves its rows, and queues changes that depend on the row. */
static void det_move(tecs_iter_t *it)
{
    det_ctx *c = it->ctx;
    fx *f = c->f;
    Pos *p = tecs_field(it, 0);
    const Vel *v = tecs_field(it, 1);
    for (int32_t i = 0; i < it->count; i++) {
        tecs_entity_t e = it->entities[i];
        p[i].x += v[i].x * (float)it->delta_time;
        p[i].y += v[i].y;
        uint32_t h = mix((uint32_t)e ^ (uint32_t)(p[i].y * 7));
        switch (h % 16) {
        case 0: tecs_destroy(it->world, e); break;
        case 1: tecs_add(it->world, e, f->tag); break;
        case 2: tecs_remove(it->world, e, f->tag); break;
        case 3: tecs_set(it->world, e, f->hp, &(Hp){ (int32_t)(h >> 8) }); break;
        case 4: tecs_remove(it->world, e, f->hp); break;
        case 5: tecs_set(it->world, c->hub, f->hp, &(Hp){ (int32_t)e }); break;
        default: break;
        }
    }
}

/* A concurrent system: heals what has Hp. */
static void det_heal(tecs_iter_t *it)
{
    Hp *h = tecs_field(it, 0);
    for (int32_t i = 0; i < it->count; i++)
        h[i].v = h[i].v / 2 + 3;
}

/* A concurrent system on Vel: turns. */
static void det_turn(tecs_iter_t *it)
{
    Vel *v = tecs_field(it, 0);
    for (int32_t i = 0; i < it->count; i++) {
        float x = v[i].x;
        v[i].x = -v[i].y * 0.5f;
        v[i].y = x + 0.25f;
    }
}

/* An observer on the main thread: births follow a tag. */
static void det_on_tag(const tecs_event_t *ev)
{
    tecs_world_t *w = ev->world;
    tecs_entity_t e = ev->entity;
    det_ctx *d = ev->ctx;
    if (mix((uint32_t)e) % 4 == 0) {
        tecs_entity_t n = tecs_new(w);
        tecs_set(w, n, d->f->pos, &(Pos){ 1, (float)(e & 0xff) });
        tecs_set(w, n, d->f->vel, &(Vel){ 2, 1 });
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* Every entity in iteration order, its components and values, and the
** index's answers. */
static uint64_t world_sum(fx *f, tecs_index_t *x)
{
    uint64_t h = 1469598103934665603u;
    tecs_query_t *all = tecs_query_new(f->w, &(tecs_query_desc_t){ 0 });
    tecs_iter_t it = TECS_ITER(tecs_query_world(all), .query = all);
    while (tecs_iter_next(&it)) {
        for (int32_t i = 0; i < it.count; i++) {
            tecs_entity_t e = it.entities[i];
            h = fnv(h, &e, sizeof e);
            tecs_comp_t cs[] = { f->pos, f->vel, f->hp };
            size_t sz[] = { sizeof(Pos), sizeof(Vel), sizeof(Hp) };
            for (int k = 0; k < 3; k++) {
                const void *v = tecs_has(f->w, e, cs[k]) ? tecs_get(f->w, e, cs[k]) : NULL;
                h = v ? fnv(h, v, sz[k]) : fnv(h, "-", 1);
            }
            h = fnv(h, tecs_has(f->w, e, f->tag) ? "t" : "n", 1);
        }
    }
    tecs_query_free(all);
    int32_t n = tecs_index_count(x);
    h = fnv(h, &n, sizeof n);
    for (int32_t k = 0; k < 64; k++) {
        tecs_entity_t e = tecs_index_lookup(x, tecs_key_int(k * 3));
        h = fnv(h, &e, sizeof e);
    }
    return h;
}

static uint64_t det_run(int32_t threads, bool lazy)
{
    fx f;
    fx_open(&f, 30000, threads);
    lazy_exec x = { .n = 0 };
    if (lazy)
        CHECK_ERR(tecs_world_set_executor(f.w, &(tecs_executor_t){
            .submit = lazy_submit, .wait = lazy_wait, .ctx = &x, .threads = threads }),
            TECS_OK);
    det_ctx c = { .f = &f, .hub = tecs_new(f.w) };
    tecs_index_t *ix = tecs_index_new(f.w, &(tecs_index_desc_t){
        .comp = f.hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32,
        .offset = offsetof(Hp, v) });
    CHECK(ix != NULL);
    CHECK(tecs_observer_new(f.w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = f.tag, .callback = det_on_tag, .ctx = &c }));
    tecs_query_t *qh = tecs_query_all(f.w, 1, &f.hp);
    tecs_query_t *qv = tecs_query_all(f.w, 1, &f.vel);
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "move", .query = f.q, .run = det_move, .ctx = &c, .parallel = true,
        .parallel_min = 100 }));
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "heal", .query = qh, .run = det_heal, .concurrent = true }));
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "turn", .query = qv, .run = det_turn, .concurrent = true }));
    for (int frame = 0; frame < 12; frame++)
        CHECK_ERR(tecs_progress(f.w, 0.25), TECS_OK);
    uint64_t sum = world_sum(&f, ix);
    TW_CHECK(f.w);
    CHECK_ERR(tecs_world_free(f.w), TECS_OK);
    CHECK_EQ(atomic_load(&f.a.blocks), 0);
    return sum;
}

TEST(parallel_results_do_not_depend_on_the_threads)
{
    uint64_t one = det_run(1, false);
    CHECK(one == det_run(2, false));
    CHECK(one == det_run(3, false));
    CHECK(one == det_run(8, false));
    CHECK(one == det_run(3, true));             /* jobs run last first */
}

/* ---- threads: start, resize, stop ----------------------------------------- */

TEST(threads_start_resize_and_stop)
{
    lk_alloc a;
    tecs_world_t *w = lk_new(&a);
    size_t base = tecs_world_memory(w);
    for (int i = 0; i < 60; i++) {
        int32_t n = (i * 7) % 10;
        CHECK_ERR(tecs_world_set_threads(w, n), TECS_OK);
        CHECK_EQ(tecs_world_threads(w), n < 1 ? 1 : n);
    }
    CHECK_ERR(tecs_world_set_threads(w, -1), TECS_EINVAL);
    CHECK_ERR(tecs_world_set_threads(w, TECS_MAX_THREADS + 1), TECS_EINVAL);
    CHECK_ERR(tecs_world_set_threads(w, 0), TECS_OK);
    CHECK_EQ(tecs_world_threads(w), 1);
    CHECK(tecs_world_memory(w) <= base + 4096);         /* the pool's state only */
    CHECK_ERR(tecs_world_set_threads(w, 3), TECS_OK);
    CHECK(tecs_cpu_count() >= 1);
    lk_free(w, &a);                                      /* freed with workers idle */
}

static void set_threads_inside(tecs_iter_t *it)
{
    int *rc = it->ctx;
    *rc = tecs_world_set_threads(it->world, 2);
}

TEST(threads_refused_inside_callbacks_and_iterations)
{
    tecs_world_t *w = tw_new();
    int rc = -1;
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .run = set_threads_inside,
                                                    .ctx = &rc }));
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(rc, TECS_EBUSY);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ 0 });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_EBUSY);
    CHECK_ERR(tecs_split_begin(q, 2), TECS_EBUSY);
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_world_set_executor(w, NULL), TECS_EBUSY);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_query_free(q);
    tw_free(w);
}

TEST(threads_out_of_memory_at_every_allocation)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    tecs_comp_t pos = TECS_COMPONENT(w, Pos);
    for (int i = 0; i < 50; i++)
        tecs_set(w, tecs_new(w), pos, &(Pos){ 1, 1 });
    bool done = false;
    for (long k = 1; !done && k < 200; k++) {
        a.fail_at = a.calls + k;
        tecs_err_t err = tecs_world_set_threads(w, 4);
        a.fail_at = 0;
        if (err == TECS_OK) {
            done = true;
            CHECK_EQ(tecs_world_threads(w), 4);
        } else {
            CHECK(err == TECS_ENOMEM);
            CHECK_EQ(tecs_world_threads(w), 1);         /* it works on one thread */
        }
        CHECK_ERR(tecs_world_set_threads(w, 0), TECS_OK);
        TW_CHECK(w);
    }
    CHECK(done);
    tw_free(w);
}

/* ---- splits -------------------------------------------------------------- */

typedef struct split_job {
    fx *f;
    tecs_entity_t hub;
    int32_t part, parts;
    long rows;
} split_job;

static void split_work(split_job *j)
{
    tecs_iter_t it = TECS_ITER(j->f->w, .query = j->f->q, .parts = j->parts, .part = j->part);
    while (tecs_iter_next(&it)) {
        Pos *p = tecs_field(&it, 0);
        for (int32_t i = 0; i < it.count; i++)
            p[i].y = (float)it.worker;
        j->rows += it.count;
        tecs_set(it.world, j->hub, j->f->hp, &(Hp){ it.worker });
        CHECK(tecs_new(it.world) == 0);
    }
}

#if HAVE_PTHREADS
static void *split_thread(void *arg)
{
    split_work(arg);
    return NULL;
}
#endif

TEST(split_parts_for_your_own_threads)
{
    for (int threaded = 0; threaded <= HAVE_PTHREADS; threaded++) {
        fx f;
        fx_open(&f, 5000, 1);
        tecs_entity_t hub = tecs_new(f.w);
        enum { PARTS = 4 };
        CHECK_ERR(tecs_split_begin(f.q, PARTS), TECS_OK);
        CHECK(tecs_new(f.w) == 0);                      /* the world is the parts' */
        CHECK_ERR(tecs_world_free(f.w), TECS_EBUSY);
        CHECK_ERR(tecs_query_free(f.q), TECS_EBUSY);
        CHECK_ERR(tecs_split_begin(f.q, PARTS), TECS_EBUSY);
        tecs_iter_t none = TECS_ITER(f.w, .query = f.q, .parts = PARTS, .part = PARTS);
        CHECK(!tecs_iter_next(&none));
        CHECK_EQ(tecs_iter_collect(&none, NULL, 0), -1);       /* EINVAL, not recorded */
        tecs_iter_t wrong = TECS_ITER(f.w, .query = f.q, .parts = PARTS - 1, .part = 0);
        CHECK(!tecs_iter_next(&wrong));
        split_job jobs[PARTS];
        for (int k = 0; k < PARTS; k++)
            jobs[k] = (split_job){ .f = &f, .hub = hub, .part = k, .parts = PARTS };
#if HAVE_PTHREADS
        if (threaded) {
            pthread_t t[PARTS];
            for (int k = 0; k < PARTS; k++)
                CHECK(pthread_create(&t[k], NULL, split_thread, &jobs[k]) == 0);
            for (int k = 0; k < PARTS; k++)
                pthread_join(t[k], NULL);
        }
#endif
        if (!threaded)
            for (int k = PARTS - 1; k >= 0; k--)       /* any order */
                split_work(&jobs[k]);
        tecs_iter_t stale = TECS_ITER(f.w, .query = f.q, .parts = PARTS, .part = 0);
        tecs_world_t *ctx0 = stale.world;
        CHECK_ERR(tecs_split_end(f.q), TECS_OK);
        CHECK(!tecs_iter_next(&stale));                 /* its run has ended */
        CHECK_ERR(tecs_add(ctx0, hub, f.tag), TECS_EBUSY);
        tecs_iter_t after = TECS_ITER(f.w, .query = f.q, .parts = PARTS, .part = 0);
        CHECK(!tecs_iter_next(&after) && tecs_iter_each(&after, NULL, NULL) == TECS_EINVAL);
        long total = 0;
        for (int k = 0; k < PARTS; k++) {
            CHECK_EQ(jobs[k].rows, 5000 / PARTS);
            total += jobs[k].rows;
        }
        CHECK_EQ(total, 5000);
        const Hp *h = tecs_get(f.w, hub, f.hp);
        CHECK(h != NULL && h->v == PARTS - 1);          /* the last part's set, last */
        tecs_iter_t it = TECS_ITER(ctx0, .query = f.q);
        int32_t row = 0;
        while (tecs_iter_next(&it))
            for (int32_t i = 0; i < it.count; i++, row++)
                CHECK(((Pos *)tecs_field(&it, 0))[i].y == (float)(row / (5000 / PARTS)));
        CHECK_ERR(tecs_split_end(f.q), TECS_EINVAL);
        CHECK_ERR(tecs_split_begin(f.q, 0), TECS_EINVAL);
        CHECK_ERR(tecs_split_begin(f.q, TECS_MAX_THREADS + 1), TECS_EINVAL);
        CHECK_ERR(tecs_split_begin(NULL, 2), TECS_EINVAL);
        fx_close(&f);
    }
}

/* Writes through write terms reach a field index after the run. */
static void bump_hp(tecs_iter_t *it)
{
    Hp *h = tecs_field(it, 0);
    for (int32_t i = 0; i < it->count; i++)
        h[i].v += 1000;
}

TEST(parallel_writes_reach_field_indexes)
{
    fx f;
    fx_open(&f, 0, 2);
    tecs_index_t *ix = tecs_index_new(f.w, &(tecs_index_desc_t){
        .comp = f.hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .offset = 0,
        .unique = true });
    tecs_entity_t e[100];
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(f.w);
        tecs_set(f.w, e[i], f.hp, &(Hp){ i });
    }
    tecs_query_t *q = tecs_query_all(f.w, 1, &f.hp);
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "bump", .query = q, .run = bump_hp, .parallel = true, .parallel_min = 1 }));
    CHECK_ERR(tecs_progress(f.w, 0), TECS_OK);
    for (int i = 0; i < 100; i++) {
        CHECK(tecs_index_lookup(ix, tecs_key_int(i + 1000)) == e[i]);
        CHECK(tecs_index_lookup(ix, tecs_key_int(i)) == 0);
    }
    fx_close(&f);
}

/* A drive system that takes one step of its part: only the rows handed
** out are reported written. */
static tecs_err_t one_step(tecs_iter_t *it)
{
    if (tecs_iter_next(it)) {
        Hp *h = tecs_field(it, 0);
        for (int32_t i = 0; i < it->count; i++)
            h[i].v = -1;
    }
    return TECS_OK;
}

static void count_set(const tecs_event_t *ev)
{
    long *n = ev->ctx;
    CHECK(((const Hp *)ev->value)->v == -1);
    ++*n;
}

TEST(parallel_reports_only_the_rows_handed_out)
{
    fx f;
    fx_open(&f, 0, 2);
    for (int i = 0; i < 5000; i++)
        tecs_set(f.w, tecs_new(f.w), f.hp, &(Hp){ i });
    long sets = 0;
    CHECK(tecs_observer_new(f.w, &(tecs_observer_desc_t){
        .event = TECS_ON_SET, .comp = f.hp, .callback = count_set, .ctx = &sets }));
    tecs_query_t *q = tecs_query_all(f.w, 1, &f.hp);
    tecs_system_t s = tecs_system_new(f.w, &(tecs_system_desc_t){
        .name = "one", .query = q, .drive = one_step, .parallel = true, .parallel_min = 1 });
    CHECK_ERR(tecs_progress(f.w, 0), TECS_OK);
    tecs_system_stats_t st;
    CHECK_ERR(tecs_system_stats(f.w, s, &st), TECS_OK);
    int32_t rows = tecs_world_rows_per_chunk(f.w);
    CHECK_EQ(st.entities_last, rows + (rows - 2500 % rows));   /* a chunk each */
    CHECK_EQ(sets, st.entities_last);
    fx_close(&f);
}
