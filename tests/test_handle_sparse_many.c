/* tecs_handle_add_many / tecs_handle_remove_many: batches through a sparse
** handle against a mirror, tecs_has, tecs_get and a query's count; where a
** batch stops; its events and hooks; deferred, in callbacks, from workers;
** out of memory. */
#include "test.h"

static tecs_comp_t sparse_comp(tecs_world_t *w, const char *name, uint32_t size,
                               tecs_ctor_fn ctor, tecs_dtor_fn dtor)
{
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = size,
        .align = size ? 4 : 1, .storage = TECS_STORAGE_SPARSE, .ctor = ctor, .dtor = dtor });
}

/* Batches in slot order and in random order, over several pages, adds and
** removes, with slots recycled between them: every id as a mirror says,
** every new member's value zeroed, every batch whole. */
static void many_against_mirror(uint32_t size)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", size, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &sp);
    enum { N = 9000, B = 400 };         /* three pages of 4096 slots at least */
    static tecs_entity_t e[N], batch[B];
    static bool in[N], seen[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        in[i] = false;
    }
    uint32_t x = 4242;
    for (int step = 0; step < 600; step++) {
        x = x * 1103515245u + 12345u;
        bool add = x >> 30 & 1, ordered = x >> 29 & 1;
        int32_t n = 0, from = (int32_t)(x >> 8) % N;
        memset(seen, 0, sizeof seen);
        /* Ids that the batch can take: not members (add) or members
        ** (remove), each once. */
        for (int32_t k = 0; k < N && n < (int32_t)(x >> 4) % B + 1; k++) {
            int32_t i = from + k;
            if (!ordered) {
                x = x * 1103515245u + 12345u;
                i = (int32_t)(x >> 8);
            }
            i %= N;
            if (in[i] != add && !seen[i]) {
                seen[i] = true;
                batch[n++] = e[i];
            }
        }
        int32_t done = -1;
        CHECK_ERR(add ? tecs_handle_add_many(&h, batch, n, &done)
                      : tecs_handle_remove_many(&h, batch, n, &done), TECS_OK);
        CHECK_EQ(done, n);
        for (int i = 0; i < N; i++)
            if (seen[i]) {
                in[i] = add;
                CHECK_EQ(tecs_has(w, e[i], sp), add);
                if (add && size) {
                    const uint32_t *v = tecs_get(w, e[i], sp);
                    CHECK(v != NULL);
                    for (uint32_t z = 0; z < size / 4; z++)
                        CHECK_EQ(v[z], 0u);
                    memset(tecs_get_mut(w, e[i], sp), 0xab, size);  /* dirty for later */
                }
            }
        if (step % 53 == 0) {           /* a recycled slot: the stale id is refused */
            int i = (int)(x >> 5) % N;
            tecs_entity_t old = e[i];
            CHECK_ERR(tecs_destroy(w, old), TECS_OK);
            e[i] = tecs_new(w);
            in[i] = false;
            CHECK_ERR(tecs_handle_add_many(&h, &old, 1, &done), TECS_EDEAD);
            CHECK_EQ(done, 0);
            CHECK_ERR(tecs_handle_remove_many(&h, &old, 1, &done), TECS_EDEAD);
        }
        if (step % 97 == 0)
            TW_CHECK(w);
    }
    int32_t members = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(tecs_has(w, e[i], sp), in[i]);
        members += in[i];
    }
    CHECK_EQ(tecs_query_count(q), members);
    TW_CHECK(w);
    tecs_query_free(q);
    tw_free(w);
}

TEST(sparse_many_tag_matches_a_mirror)
{
    many_against_mirror(0);
}

TEST(sparse_many_values_match_a_mirror)
{
    many_against_mirror(4);
    many_against_mirror(8);
    many_against_mirror(20);
}

/* A batch stops at the first id refused: the ids before it changed, that
** one and those after it not; *done says how many. */
TEST(sparse_many_stops_at_the_first_refused)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e[6];
    for (int i = 0; i < 6; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e[5]), TECS_OK);      /* the list is not empty */
    tecs_entity_t dead = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);
    int32_t done = -1;
    tecs_entity_t b1[] = { e[0], e[1], dead, e[2] };
    CHECK_ERR(tecs_handle_add_many(&h, b1, 4, &done), TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    CHECK_EQ(done, 2);
    CHECK(tecs_has(w, e[0], sp) && tecs_has(w, e[1], sp) && !tecs_has(w, e[2], sp));
    tecs_entity_t b2[] = { e[2], e[3], e[3], e[4] };            /* an id twice */
    CHECK_ERR(tecs_handle_add_many(&h, b2, 4, &done), TECS_EEXIST);
    CHECK_EQ(done, 2);
    CHECK(tecs_has(w, e[3], sp) && !tecs_has(w, e[4], sp));
    tecs_entity_t b3[] = { e[0], e[4], e[1] };
    CHECK_ERR(tecs_handle_remove_many(&h, b3, 3, &done), TECS_ENOENT);
    CHECK_EQ(done, 1);
    CHECK(!tecs_has(w, e[0], sp) && tecs_has(w, e[1], sp));
    /* A success sets the last error to TECS_OK, as every call does. */
    CHECK_ERR(tecs_handle_remove_many(&h, &e[1], 1, &done), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_many_refuses_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h, zero = { 0 };
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    int32_t done = -1;
    CHECK_ERR(tecs_handle_add_many(NULL, &e, 1, &done), TECS_EINVAL);
    CHECK_EQ(done, 0);
    CHECK_ERR(tecs_handle_remove_many(&zero, &e, 1, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_handle_add_many(&h, &e, -1, &done), TECS_EINVAL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_handle_remove_many(&h, NULL, 2, &done), TECS_EINVAL);
    CHECK_ERR(tecs_handle_add_many(&h, NULL, 0, &done), TECS_OK);    /* nothing to do */
    CHECK_EQ(done, 0);
    CHECK_ERR(tecs_handle_add_many(&h, &e, 1, NULL), TECS_OK);
    CHECK(tecs_has(w, e, sp));
    tecs_entity_t unknown = e + 12345;                  /* a slot never made */
    CHECK_ERR(tecs_handle_remove_many(&h, &unknown, 1, &done), TECS_EDEAD);
    CHECK(tecs_has(w, e, sp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct ev_log {
    int add, remove;
    tecs_entity_t order[8];
} ev_log;

static void log_event(const tecs_event_t *ev)
{
    ev_log *l = ev->ctx;
    if (ev->kind == TECS_ON_ADD && l->add < 8)
        l->order[l->add] = ev->entity;
    l->add += ev->kind == TECS_ON_ADD;
    l->remove += ev->kind == TECS_ON_REMOVE;
}

static int ctors, dtors;

static void count_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0x11, (size_t)n * 4);
    ctors += n;
}

static void count_dtor(void *p, int32_t n, void *ctx)
{
    (void)p, (void)ctx;
    dtors += n;
}

/* Observers hear every id, in batch order; lifecycle hooks run once an id;
** the set's ticks are stamped. */
TEST(sparse_many_fires_events_and_hooks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_comp_t obj = sparse_comp(w, "Obj", 4, count_ctor, count_dtor);
    tecs_handle_t h, ho;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    CHECK_ERR(tecs_handle_init(w, obj, &ho), TECS_OK);
    tecs_entity_t e[5];
    for (int i = 0; i < 5; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, e[4]), TECS_OK);
    uint64_t t0 = tecs_world_tick(w);
    tecs_world_tick_advance(w);
    CHECK_ERR(tecs_handle_add_many(&h, e, 2, NULL), TECS_OK);      /* inline */
    CHECK(tecs_added_tick(w, e[1], sp) > t0);
    ev_log log = { 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = sp,
          .callback = log_event, .ctx = &log }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = sp,
          .callback = log_event, .ctx = &log }) != 0);
    tecs_entity_t b[] = { e[3], e[2] };
    CHECK_ERR(tecs_handle_add_many(&h, b, 2, NULL), TECS_OK);
    CHECK_EQ(log.add, 2);
    CHECK_EQ(log.order[0], e[3]);
    CHECK_EQ(log.order[1], e[2]);
    CHECK_ERR(tecs_handle_remove_many(&h, e, 4, NULL), TECS_OK);
    CHECK_EQ(log.remove, 4);
    CHECK_ERR(tecs_handle_add_many(&ho, e, 5, NULL), TECS_OK);
    CHECK_EQ(ctors, 5);
    CHECK_EQ(*(const uint32_t *)tecs_get(w, e[2], obj), 0x11111111u);
    CHECK_ERR(tecs_handle_remove_many(&ho, e, 3, NULL), TECS_OK);
    CHECK_EQ(dtors, 3);
    TW_CHECK(w);
    tw_free(w);
    ctors = dtors = 0;
}

/* Deferred, a batch queues: *done counts the queued ids, which apply in
** order at the end of the section. */
TEST(sparse_many_queues_while_deferred)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e[4];
    for (int i = 0; i < 4; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_handle_add_many(&h, e, 2, NULL), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    int32_t done = -1;
    CHECK_ERR(tecs_handle_add_many(&h, &e[2], 2, &done), TECS_OK);
    CHECK_EQ(done, 2);
    CHECK_ERR(tecs_handle_remove_many(&h, e, 2, &done), TECS_OK);
    CHECK(!tecs_has(w, e[2], sp) && tecs_has(w, e[0], sp));    /* not yet */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_has(w, e[2], sp) && tecs_has(w, e[3], sp));
    CHECK(!tecs_has(w, e[0], sp) && !tecs_has(w, e[1], sp));
    TW_CHECK(w);
    tw_free(w);
}

/* An observer the batch fires destroys an id later in the batch (its
** destroy applies when the add that ran it returns): the batch stops
** there with TECS_EDEAD, and re-reads the tables after each call, so the
** ids after a call see the world as that call left it. */
static tecs_entity_t g_victim;

static void destroy_victim(const tecs_event_t *ev)
{
    tecs_destroy(ev->world, g_victim);
}

TEST(sparse_many_callback_destroys_a_later_id)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    tecs_entity_t e[4];
    for (int i = 0; i < 4; i++)
        e[i] = tecs_new(w);
    g_victim = e[2];
    tecs_observer_t o = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = sp, .callback = destroy_victim });
    CHECK(o != 0);
    int32_t done = -1;
    CHECK_ERR(tecs_handle_add_many(&h, e, 4, &done), TECS_EDEAD);
    CHECK_EQ(done, 2);
    CHECK(!tecs_is_alive(w, e[2]));
    CHECK(tecs_has(w, e[0], sp) && tecs_has(w, e[1], sp) && !tecs_has(w, e[3], sp));
    CHECK_ERR(tecs_observer_free(w, o), TECS_OK);
    /* The same for a remove: the destroyed id, a member, is refused. */
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(tecs_handle_add(&h, f), TECS_OK);
    g_victim = f;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = sp,
          .callback = destroy_victim }) != 0);
    tecs_entity_t b[] = { e[0], f, e[1] };
    CHECK_ERR(tecs_handle_remove_many(&h, b, 3, &done), TECS_EDEAD);
    CHECK_EQ(done, 1);
    CHECK(!tecs_is_alive(w, f) && !tecs_has(w, e[0], sp) && tecs_has(w, e[1], sp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct par_ctx {
    tecs_comp_t sp;
    int32_t rows[TECS_MAX_THREADS];
    tecs_err_t err[TECS_MAX_THREADS];
} par_ctx;

/* A worker's batch through its context's handle: queued, applied after. */
static void add_batch_through_context(tecs_iter_t *it)
{
    par_ctx *c = it->ctx;
    tecs_handle_t h;
    int32_t done = -1;
    tecs_err_t err = tecs_handle_init(it->world, c->sp, &h);
    if (err == TECS_OK)
        err = tecs_handle_add_many(&h, it->entities, it->count, &done);
    if (err == TECS_OK && (done != it->count ||
                           (it->count > 0 && tecs_has(it->world, it->entities[0], c->sp))))
        err = TECS_EINVAL;                              /* applied at once: wrong */
    if (err)
        c->err[it->worker] = err;
    c->rows[it->worker] += it->count;
}

TEST(sparse_many_from_workers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sparse", 4, NULL, NULL);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    par_ctx c = { .sp = sp };
    tecs_handle_t first;        /* the first handle of sp: before the run */
    CHECK_ERR(tecs_handle_init(w, sp, &first), TECS_OK);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "add", .query = q,
          .run = add_batch_through_context, .ctx = &c, .parallel = true,
          .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(c.rows[0] + c.rows[1], 3000);
    CHECK_EQ(c.err[0], TECS_OK);
    CHECK_EQ(c.err[1], TECS_OK);
    for (int i = 0; i < 3000; i++)
        CHECK(tecs_has(w, e[i], sp));
    TW_CHECK(w);
    tw_free(w);
}

/* Every allocation of a batch's work fails once: the batch stops at the id
** whose add ran out of memory, the ids before it added, the rest not, and
** the world stays whole. */
TEST(sparse_many_oom_every_allocation)
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
        int32_t done = 0, removed = 0;
        if (err == TECS_OK)
            err = tecs_handle_add_many(&h, e, N, &done);
        if (err == TECS_OK)
            err = tecs_handle_remove_many(&h, e, N, &removed);
        bool failed = a.failures > 0;
        if (failed) {
            CHECK_EQ(err, TECS_ENOMEM);
            if (done < N) {                             /* an add failed */
                for (int32_t i = 0; i < N; i++)
                    CHECK_EQ(tecs_has(w, e[i], sp), i < done);
            } else {
                for (int32_t i = 0; i < N; i++)
                    CHECK_EQ(tecs_has(w, e[i], sp), i >= removed);
            }
        } else {
            CHECK_ERR(err, TECS_OK);
            CHECK_EQ(removed, N);
        }
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}
