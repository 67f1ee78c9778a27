/* Handles of sparse components: tecs_handle_add / tecs_handle_remove (inline) against
** tecs_add, tecs_remove, tecs_has and tecs_get. */
#include "test.h"

static tecs_comp_t sparse_comp(tecs_world_t *w, const char *name, uint32_t size,
                               tecs_ctor_fn ctor, tecs_dtor_fn dtor)
{
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = size,
        .align = size ? 4 : 1, .storage = TECS_STORAGE_SPARSE, .ctor = ctor, .dtor = dtor });
}

/* Random adds and removes through the handle over several pages, with
** destroys and recycled slots between, checked at each step against a
** mirror, tecs_has and tecs_get (a new member's value is zeroed). */
static void against_mirror(uint32_t size)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", size, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    const tecs_handle_t hl = h;
    enum { N = 9000 };          /* three pages of 4096 slots at least */
    static tecs_entity_t e[N];
    static bool in[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        in[i] = false;
    }
    uint32_t x = 777;
    for (int step = 0; step < 60000; step++) {
        x = x * 1103515245u + 12345u;
        int i = (int)((x >> 8) % N);
        bool add = x >> 30 & 1;
        tecs_err_t want = add ? (in[i] ? TECS_EEXIST : TECS_OK) : (in[i] ? TECS_OK : TECS_ENOENT);
        tecs_err_t err = add ? tecs_handle_add(&hl, e[i]) : tecs_handle_remove(&hl, e[i]);
        CHECK_EQ(err, want);
        if (err == TECS_OK)
            in[i] = add;
        CHECK_EQ(tecs_has(w, e[i], sp), in[i]);
        if (size && err == TECS_OK && add) {
            const uint32_t *v = tecs_get(w, e[i], sp);
            CHECK(v != NULL);
            for (uint32_t k = 0; k < size / 4; k++)
                CHECK_EQ(v[k], 0u);
            memset(tecs_get_mut(w, e[i], sp), 0xab, size);     /* dirty for the next add */
        }
        if (step % 4999 == 0) {         /* a recycled slot: the stale id fails */
            tecs_entity_t old = e[i];
            CHECK_ERR(tecs_destroy(w, old), TECS_OK);
            e[i] = tecs_new(w);
            in[i] = false;
            CHECK_ERR(tecs_handle_add(&hl, old), TECS_EDEAD);
            CHECK_ERR(tecs_handle_remove(&hl, old), TECS_EDEAD);
        }
        if (step % 9973 == 0)
            TW_CHECK(w);
    }
    for (int i = 0; i < N; i++)
        CHECK_EQ(tecs_has(w, e[i], sp), in[i]);
    TW_CHECK(w);
    tw_free(w);
}

TEST(handle_sparse_tag_matches_tecs_add)
{
    against_mirror(0);
}

TEST(handle_sparse_small_value_matches_tecs_add)
{
    against_mirror(4);          /* an entry of 8 bytes */
}

TEST(handle_sparse_large_value_matches_tecs_add)
{
    against_mirror(20);
}

/* Adds then removes in slot order: every page made and freed on the way,
** the member list grown, the first member and the last of each page left
** to the library. */
TEST(handle_sparse_in_slot_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    enum { N = 20000 };
    static tecs_entity_t e[N];
    for (int i = 0; i < N; i++)
        e[i] = tecs_new(w);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            CHECK_ERR(tecs_handle_add(&h, e[i]), TECS_OK);
        TW_CHECK(w);
        for (int i = 0; i < N; i += 7)
            CHECK(tecs_has(w, e[i], sp));
        for (int i = round ? N - 1 : 0; round ? i >= 0 : i < N; i += round ? -1 : 1)
            CHECK_ERR(tecs_handle_remove(&h, e[i]), TECS_OK);
        TW_CHECK(w);
        for (int i = 0; i < N; i += 7)
            CHECK(!tecs_has(w, e[i], sp));
    }
    tw_free(w);
}

TEST(handle_sparse_refuses_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(NULL, sp, &h), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, sp, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, 999, &h), TECS_ENOCOMP);
    CHECK_ERR(tecs_handle_init(w, 0, &h), TECS_ENOCOMP);
    /* A handle of a table component: its adds and removes are tecs_add's. */
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    tecs_entity_t d = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, d), TECS_OK);
    CHECK(tecs_has(w, d, pos));
    CHECK_ERR(tecs_handle_add(&h, d), TECS_EEXIST);
    CHECK_ERR(tecs_handle_remove_many(&h, &d, 1, NULL), TECS_OK);
    CHECK_ERR(tecs_handle_remove(&h, d), TECS_ENOENT);
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e), TECS_OK);                 /* the first member */
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_EEXIST);
    CHECK_ERR(tecs_handle_add(&h, 0), TECS_EDEAD);
    CHECK_ERR(tecs_handle_remove(&h, 0), TECS_EDEAD);
    CHECK_ERR(tecs_handle_add(&h, ((tecs_entity_t)1 << 32) | 100000u), TECS_EDEAD);
    CHECK_ERR(tecs_handle_remove(&h, ((tecs_entity_t)1 << 32) | 100000u), TECS_EDEAD);
    CHECK_ERR(tecs_handle_remove(&h, ((tecs_entity_t)7 << 32) | TECS_ENTITY_INDEX(f)),
              TECS_EDEAD);                                      /* a generation never made */
    tecs_entity_t g = tecs_new(w);
    CHECK_ERR(tecs_handle_remove(&h, g), TECS_ENOENT);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    /* A successful inline change sets no error. */
    CHECK_ERR(tecs_handle_add(&h, g), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_ERR(tecs_handle_remove(&h, g), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    /* Dead and recycled ids. */
    tecs_entity_t dead = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, dead), TECS_OK);
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, dead), TECS_EDEAD);
    CHECK_ERR(tecs_handle_remove(&h, dead), TECS_EDEAD);
    tecs_entity_t recycled = tecs_new(w);
    CHECK(TECS_ENTITY_INDEX(recycled) == TECS_ENTITY_INDEX(dead));
    CHECK_ERR(tecs_handle_add(&h, recycled), TECS_OK);
    CHECK_ERR(tecs_handle_remove(&h, dead), TECS_EDEAD);        /* its slot is a member */
    CHECK_ERR(tecs_handle_add(&h, dead), TECS_EDEAD);
    CHECK(tecs_has(w, recycled, sp));
    /* A copy is a handle too. */
    tecs_handle_t copy = h;
    CHECK_ERR(tecs_handle_remove(&copy, recycled), TECS_OK);
    CHECK(!tecs_has(w, recycled, sp));
    TW_CHECK(w);
    tw_free(w);
}

/* Pending births and everything while deferred go to tecs_add /
** tecs_remove, which queue them. */
TEST(handle_sparse_queues_while_deferred)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w), g = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, g), TECS_OK);         /* queued */
    CHECK(!tecs_has(w, g, sp));
    CHECK_ERR(tecs_handle_remove(&h, f), TECS_OK);      /* queued */
    CHECK(tecs_has(w, f, sp));
    tecs_entity_t p = tecs_new(w);                      /* a pending birth */
    CHECK_EQ(tecs_entity_state(w, p), TECS_ENTITY_PENDING);
    CHECK_ERR(tecs_handle_add(&h, p), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_has(w, g, sp) && !tecs_has(w, f, sp) && tecs_has(w, p, sp));
    CHECK(tecs_has(w, e, sp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct ev_log {
    int add, remove, enter, leave;
} ev_log;

static void log_event(const tecs_event_t *ev)
{
    ev_log *l = ev->ctx;
    l->add += ev->kind == TECS_ON_ADD;
    l->remove += ev->kind == TECS_ON_REMOVE;
    l->enter += ev->kind == TECS_ON_ENTER;
    l->leave += ev->kind == TECS_ON_LEAVE;
}

/* Observers, membership events and indexes made after the handle still
** hear every change through it. */
TEST(handle_sparse_fires_observers_added_later)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w), g = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);         /* inline */
    ev_log log = { 0 };
    tecs_observer_t o1 = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = sp, .callback = log_event, .ctx = &log });
    tecs_observer_t o2 = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_REMOVE, .comp = sp, .callback = log_event, .ctx = &log });
    CHECK(o1 != 0 && o2 != 0);
    CHECK_ERR(tecs_handle_add(&h, g), TECS_OK);
    CHECK_ERR(tecs_handle_remove(&h, f), TECS_OK);
    CHECK_EQ(log.add, 1);
    CHECK_EQ(log.remove, 1);
    CHECK_ERR(tecs_observer_free(w, o1), TECS_OK);
    CHECK_ERR(tecs_observer_free(w, o2), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);         /* inline again */
    CHECK_EQ(log.add, 1);
    const tecs_term_t terms[] = { { .comp = sp } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = terms, .term_count = 1, .callback = log_event, .ctx = &log }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
          .terms = terms, .term_count = 1, .callback = log_event, .ctx = &log }) != 0);
    CHECK_ERR(tecs_handle_remove(&h, f), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);
    CHECK_EQ(log.enter, 1);
    CHECK_EQ(log.leave, 1);
    /* A cache made later keeps its count. */
    tecs_query_t *q = tecs_query_all(w, 1, &sp);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK(c != NULL);
    CHECK_EQ(tecs_cache_count(c), 3);
    CHECK_ERR(tecs_handle_remove(&h, e), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 2);
    CHECK_ERR(tecs_handle_add(&h, e), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 3);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

static int ctors, dtors;

static void count_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0x5a, (size_t)n * 4);
    ctors += n;
}

static void count_dtor(void *p, int32_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    dtors += n;
}

/* A constructor or a destructor sends the change to the library, which
** runs it. */
TEST(handle_sparse_runs_lifecycle_hooks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t withc = sparse_comp(w, "Ctor", 4, count_ctor, NULL);
    tecs_comp_t withd = sparse_comp(w, "Dtor", 4, NULL, count_dtor);
    tecs_handle_t hc, hd;
    CHECK_ERR(tecs_handle_init(w, withc, &hc), TECS_OK);
    CHECK_ERR(tecs_handle_init(w, withd, &hd), TECS_OK);
    ctors = dtors = 0;
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_handle_add(&hc, e[i]), TECS_OK);
        CHECK_ERR(tecs_handle_add(&hd, e[i]), TECS_OK);
        CHECK_EQ(*(const uint32_t *)tecs_get(w, e[i], withc), 0x5a5a5a5au);
    }
    CHECK_EQ(ctors, 3);
    CHECK_ERR(tecs_handle_remove(&hd, e[0]), TECS_OK);
    CHECK_ERR(tecs_handle_remove(&hc, e[0]), TECS_OK);
    CHECK_EQ(dtors, 1);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(dtors, 3);
}

/* The change stamps the set as tecs_add and tecs_remove do: change
** queries and ticks see it. */
TEST(handle_sparse_stamps_the_ticks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w), g = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, g), TECS_OK);
    uint64_t t0 = tecs_world_tick(w);
    tecs_world_tick_advance(w);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);         /* inline */
    CHECK(tecs_added_tick(w, f, sp) > t0);
    TW_CHECK(w);
    tw_free(w);
}

static tecs_handle_t *g_h;
static tecs_entity_t g_other;
static tecs_err_t g_err;
static bool g_applied;

static void ctor_adds(void *dst, int32_t n, void *ctx)
{
    tecs_world_t *w = ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (g_h) {
        g_err = tecs_handle_add(g_h, g_other);
        g_applied = tecs_has(w, g_other, g_h->comp_);
    }
}

static void observer_adds(const tecs_event_t *ev)
{
    g_err = tecs_handle_add(g_h, g_other);
    g_applied = tecs_has(ev->world, g_other, g_h->comp_);
}

static void dtor_adds(void *p, int32_t n, void *ctx)
{
    (void)p;
    (void)n;
    (void)ctx;
    if (g_h)
        g_err = tecs_handle_add(g_h, g_other);
}

/* In a lifecycle hook, an observer, an iteration and a system the change
** queues (as tecs_add's); in a closed world it is refused. */
TEST(handle_sparse_in_callbacks)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_comp_t pos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Position",
        .size = sizeof(Position), .align = _Alignof(Position), .ctor = ctor_adds, .hook_ctx = w });
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t first = tecs_new(w), other = tecs_new(w), e = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, first), TECS_OK);
    g_h = &h;
    g_other = other;
    /* A lifecycle hook. */
    g_err = TECS_EINVAL;
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_EQ(g_err, TECS_OK);
    CHECK(!g_applied);
    CHECK(tecs_has(w, other, sp));
    CHECK_ERR(tecs_handle_remove(&h, other), TECS_OK);
    /* An observer. */
    g_err = TECS_EINVAL;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = tag,
          .callback = observer_adds }) != 0);
    CHECK_ERR(tecs_add(w, e, tag), TECS_OK);
    CHECK_EQ(g_err, TECS_OK);
    CHECK(!g_applied);
    CHECK(tecs_has(w, other, sp));
    /* An iteration. */
    tecs_query_t *q = tecs_query_all(w, 1, &sp);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        rows += it.count;
        CHECK_ERR(tecs_handle_remove(&h, other), TECS_OK);
        CHECK(tecs_has(w, other, sp));
    }
    CHECK_EQ(rows, 2);
    CHECK(!tecs_has(w, other, sp));
    tecs_query_free(q);
    TW_CHECK(w);
    /* A closed world: a destructor run by tecs_world_free. */
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Obj",
        .size = 4, .align = 4, .dtor = dtor_adds });
    CHECK_ERR(tecs_set(w, e, obj, &(int){ 1 }), TECS_OK);
    g_err = TECS_OK;
    tecs_world_free(w);
    CHECK_EQ(g_err, TECS_EBUSY);
    CHECK_EQ(a.blocks, 0);
    g_h = NULL;
}

typedef struct par_ctx {
    tecs_comp_t sp;
    int32_t rows[TECS_MAX_THREADS];
    tecs_err_t err[TECS_MAX_THREADS];
} par_ctx;

/* A worker's handle is its context's: its changes queue. */
static void add_through_context(tecs_iter_t *it)
{
    par_ctx *c = it->ctx;
    tecs_handle_t h;
    tecs_err_t err = tecs_handle_init(it->world, c->sp, &h);
    for (int32_t r = 0; err == TECS_OK && r < it->count; r++) {
        err = tecs_handle_add(&h, it->entities[r]);
        if (err == TECS_OK && tecs_has(it->world, it->entities[r], c->sp))
            err = TECS_EINVAL;                  /* applied at once: wrong */
    }
    if (err)
        c->err[it->worker] = err;
    c->rows[it->worker] += it->count;
}

TEST(handle_sparse_from_workers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    par_ctx c = { .sp = sp };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "add", .query = q,
          .run = add_through_context, .ctx = &c, .parallel = true,
          .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(c.rows[0] + c.rows[1], 3000);
    CHECK_EQ(c.err[0], TECS_OK);
    CHECK_EQ(c.err[1], TECS_OK);
    for (int i = 0; i < 3000; i += 97)
        CHECK(tecs_has(w, e[i], sp));                   /* applied after the run */
    CHECK_ERR(tecs_handle_remove(&h, e[1]), TECS_OK);   /* the world's handle again */
    CHECK(!tecs_has(w, e[1], sp));
    TW_CHECK(w);
    tw_free(w);
}

/* Every allocation of a handle's work fails once: the call reports
** TECS_ENOMEM and leaves the world as it was. */
TEST(handle_sparse_oom_every_allocation)
{
    for (long k = 1;; k++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 0);
        tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
        enum { N = 5000 };
        static tecs_entity_t e[N];
        for (int i = 0; i < N; i++)
            e[i] = tecs_new(w);
        a.fail_at = a.calls + k;
        tecs_handle_t h;
        tecs_err_t err = tecs_handle_init(w, sp, &h);
        int i = 0, removed = 0;
        for (; err == TECS_OK && i < N; i++)
            err = tecs_handle_add(&h, e[i]);
        if (err == TECS_OK)
            for (; err == TECS_OK && removed < N; removed++)
                err = tecs_handle_remove(&h, e[removed]);
        bool failed = a.failures > 0;
        if (failed) {
            CHECK_EQ(err, TECS_ENOMEM);
            if (i > 0 && removed == 0)              /* an add failed */
                CHECK(!tecs_has(w, e[i - 1], sp));
            TW_CHECK(w);
        } else {
            CHECK_EQ(err, TECS_OK);
        }
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}

/* The handle reads the world's own tables: components registered after
** it (the registry grows), a reset, new pages and a grown member list
** leave it valid. */
TEST(handle_sparse_survives_growth_and_reset)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e[100];
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_handle_add(&h, e[i]), TECS_OK);
    }
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "Extra%d", i);
        CHECK(sparse_comp(w, name, 4, NULL, NULL) != 0);
    }
    for (int i = 0; i < 100; i += 2)
        CHECK_ERR(tecs_handle_remove(&h, e[i]), TECS_OK);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK(!tecs_is_alive(w, e[1]));
    CHECK_ERR(tecs_handle_remove(&h, e[1]), TECS_EDEAD);
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_handle_add(&h, e[i]), TECS_OK);
        CHECK(tecs_has(w, e[i], sp));
    }
    for (int i = 0; i < 100; i += 3)
        CHECK_ERR(tecs_handle_remove(&h, e[i]), TECS_OK);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(tecs_has(w, e[i], sp), i % 3 != 0);
    TW_CHECK(w);
    tw_free(w);
}
