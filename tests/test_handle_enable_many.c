/* tecs_handle_enable_many: batches of toggles through a handle, against a mirror,
** tecs_is_enabled and queries' counts; where it stops; its events, calls
** from callbacks and from workers. */
#include "test.h"

static tecs_comp_t enableable(tecs_world_t *w, const char *name, bool row_ticks)
{
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = name,
        .size = sizeof(Health), .align = _Alignof(Health), .enableable = true,
        .row_ticks = row_ticks });
}

/* Batches in row order and in random order, over several chunks and
** archetypes, with rows moving and dying between them: every id's state
** as a mirror says, every batch whole. */
static void many_against_mirror(int32_t rows, bool row_ticks)
{
    tecs_world_t *w = tw_new_ex(NULL, rows);
    CHECK(w != NULL);
    tecs_comp_t hp = enableable(w, "Health", row_ticks);
    tecs_comp_t tags[2] = { TECS_TAG(w, A), TECS_TAG(w, B) };
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    enum { N = 2000, B = 300 };
    tecs_entity_t *e = malloc(N * sizeof *e), batch[B];
    bool *off = calloc(N, sizeof *off);
    CHECK(e != NULL && off != NULL);
    CHECK_ERR(tecs_new_bulk(w, a, N, e, 0, NULL), TECS_OK);
    for (int i = 0; i < N; i += 5)                  /* three archetypes */
        CHECK_ERR(tecs_add(w, e[i], tags[i % 2]), TECS_OK);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    uint32_t x = 777;
    for (int step = 0; step < 400; step++) {
        x = x * 1103515245u + 12345u;
        int32_t n = (int32_t)(x >> 8) % B + 1, from = (int32_t)(x >> 4) % (N - n);
        bool on = x >> 29 & 1, ordered = x >> 30 & 1;
        int32_t at[B];
        for (int32_t k = 0; k < n; k++) {
            at[k] = from + k;
            if (!ordered) {
                x = x * 1103515245u + 12345u;
                at[k] = (int32_t)(x >> 8) % N;
            }
            batch[k] = e[at[k]];
        }
        int32_t done = -1;
        CHECK_ERR(tecs_handle_enable_many(&h, batch, n, on, &done), TECS_OK);
        CHECK_EQ(done, n);
        for (int32_t k = 0; k < n; k++)
            off[at[k]] = !on;
        if (step % 37 == 0) {               /* a row moves: its bit goes along */
            int i = (int)(x >> 3) % N;
            tecs_comp_t t = tags[step % 2];
            CHECK_ERR(tecs_has(w, e[i], t) ? tecs_remove(w, e[i], t) : tecs_add(w, e[i], t),
                      TECS_OK);
        }
    }
    int32_t n_on = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(tecs_is_enabled(w, e[i], hp), !off[i]);
        n_on += !off[i];
    }
    CHECK_EQ(tecs_query_count(q), n_on);
    TW_CHECK(w);
    tecs_query_free(q);
    free(off);
    free(e);
    tw_free(w);
}

TEST(toggle_many_matches_a_mirror)
{
    many_against_mirror(0, false);
    many_against_mirror(16, false);
    many_against_mirror(128, false);
    many_against_mirror(64, true);      /* tick columns: every id is a call */
}

/* Random batches checked id by id: the same toggles one by one in a second
** world must leave the same states. */
TEST(toggle_many_equals_toggles_one_by_one)
{
    tecs_world_t *w[2];
    tecs_comp_t hp[2];
    tecs_entity_t e[2][500];
    tecs_handle_t h[2];
    for (int k = 0; k < 2; k++) {
        w[k] = tw_new_ex(NULL, 32);
        CHECK(w[k] != NULL);
        hp[k] = enableable(w[k], "Health", false);
        tecs_comp_t tag = TECS_TAG(w[k], T);
        for (int i = 0; i < 500; i++) {
            e[k][i] = tecs_new(w[k]);
            TECS_SET(w[k], e[k][i], hp[k], Health, { i });
            if (i % 7 == 3)
                tecs_add(w[k], e[k][i], tag);
        }
        CHECK_ERR(tecs_handle_init(w[k], hp[k], &h[k]), TECS_OK);
    }
    uint32_t x = 4242;
    for (int step = 0; step < 300; step++) {
        tecs_entity_t ids[2][40];
        x = x * 1103515245u + 12345u;
        int32_t n = (int32_t)(x >> 9) % 40;
        bool on = x >> 28 & 1;
        for (int32_t j = 0; j < n; j++) {
            x = x * 1103515245u + 12345u;
            int i = (int)(x >> 8) % 500;
            if (x >> 27 & 1)                /* a run in row order now and then */
                i = (int)((x >> 8) % 460) + j;
            ids[0][j] = e[0][i];
            ids[1][j] = e[1][i];
        }
        CHECK_ERR(tecs_handle_enable_many(&h[0], ids[0], n, on, NULL), TECS_OK);
        for (int32_t j = 0; j < n; j++)
            CHECK_ERR(tecs_handle_enable(&h[1], ids[1][j], on), TECS_OK);
    }
    for (int i = 0; i < 500; i++)
        CHECK_EQ(tecs_is_enabled(w[0], e[0][i], hp[0]), tecs_is_enabled(w[1], e[1][i], hp[1]));
    for (int k = 0; k < 2; k++) {
        TW_CHECK(w[k]);
        tw_free(w[k]);
    }
}

TEST(toggle_many_stops_at_the_first_refusal)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_entity_t bare = tecs_new(w), dead = tecs_new(w);
    tecs_destroy(w, dead);
    int32_t done = -1;
    CHECK_ERR(tecs_handle_enable_many(NULL, e, 6, false, &done), TECS_EINVAL);
    CHECK_EQ(done, 0);
    CHECK_ERR(tecs_handle_enable_many(&h, e, -1, false, &done), TECS_EINVAL);
    CHECK_ERR(tecs_handle_enable_many(&h, NULL, 2, false, &done), TECS_EINVAL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_handle_enable_many(&h, NULL, 0, false, &done), TECS_OK);
    CHECK_EQ(done, 0);
    /* A dead id third: the first two change, the rest do not. */
    tecs_entity_t ids[] = { e[0], e[1], dead, e[2], e[3] };
    CHECK_ERR(tecs_handle_enable_many(&h, ids, 5, false, &done), TECS_EDEAD);
    CHECK_EQ(done, 2);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    CHECK(!tecs_is_enabled(w, e[0], hp) && !tecs_is_enabled(w, e[1], hp));
    CHECK(tecs_is_enabled(w, e[2], hp) && tecs_is_enabled(w, e[3], hp));
    /* An id without the component, after ids the short path takes. */
    tecs_entity_t ids2[] = { e[0], e[1], e[2], bare, e[4] };
    CHECK_ERR(tecs_handle_enable_many(&h, ids2, 5, true, &done), TECS_ENOENT);
    CHECK_EQ(done, 3);
    CHECK(tecs_is_enabled(w, e[0], hp) && tecs_is_enabled(w, e[2], hp));
    CHECK(tecs_is_enabled(w, e[4], hp));
    CHECK_ERR(tecs_handle_enable_many(&h, ids2 + 4, 1, false, NULL), TECS_OK);
    CHECK(!tecs_is_enabled(w, e[4], hp));
    /* Ids that are not ids: past the slots, id 0, a recycled slot. */
    tecs_entity_t recycled = tecs_new(w);
    CHECK(TECS_ENTITY_INDEX(recycled) == TECS_ENTITY_INDEX(dead));
    TECS_SET(w, recycled, hp, Health, { 9 });
    tecs_entity_t bad[] = { ((tecs_entity_t)1 << 32) | 100000u, 0, dead };
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(tecs_handle_enable_many(&h, bad + i, 1, false, &done), TECS_EDEAD);
        CHECK_EQ(done, 0);
    }
    CHECK(tecs_is_enabled(w, recycled, hp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct order_ctx {
    tecs_world_t *w;
    tecs_entity_t seen[16];
    int n;
    tecs_entity_t kill;         /* destroyed at the first event, if not 0   */
    const tecs_handle_t *h;    /* toggled again from the observer          */
    tecs_entity_t other;
    tecs_err_t inner;
} order_ctx;

static void note_disable(const tecs_event_t *ev)
{
    order_ctx *c = ev->ctx;
    if (c->n < 16)
        c->seen[c->n++] = ev->entity;
    if (c->kill) {
        tecs_destroy(c->w, c->kill);
        c->kill = 0;
    }
    if (c->h && ev->entity != c->other) {
        tecs_entity_t one = c->other;
        c->inner = tecs_handle_enable_many(c->h, &one, 1, true, NULL);
    }
}

/* Events fire in the order of the ids; an observer may destroy an id of
** the batch (the batch stops there) and may call tecs_handle_enable_many. */
TEST(toggle_many_events_in_order_and_observers_calling_back)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e[8];
    for (int i = 0; i < 8; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    CHECK_ERR(tecs_handle_enable_many(&h, e, 8, true, NULL), TECS_OK);    /* opens the chunk */
    order_ctx c = { .w = w };
    tecs_observer_t o = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_DISABLE, .comp = hp, .callback = note_disable, .ctx = &c });
    CHECK(o != 0);
    tecs_entity_t ids[] = { e[5], e[1], e[7], e[0] };
    CHECK_ERR(tecs_handle_enable_many(&h, ids, 4, false, NULL), TECS_OK);
    CHECK_EQ(c.n, 4);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(c.seen[i], ids[i]);
    /* The first event destroys the third id: the batch stops at it. */
    CHECK_ERR(tecs_handle_enable_many(&h, e, 8, true, NULL), TECS_OK);
    c = (order_ctx){ .w = w, .kill = e[2] };
    int32_t done = -1;
    CHECK_ERR(tecs_handle_enable_many(&h, e, 8, false, &done), TECS_EDEAD);
    CHECK_EQ(done, 2);
    CHECK_EQ(c.n, 2);
    CHECK(tecs_is_enabled(w, e[3], hp));
    /* An observer toggling through the same handle, inside the batch. */
    CHECK_ERR(tecs_handle_enable_many(&h, e + 3, 5, true, NULL), TECS_OK);
    c = (order_ctx){ .w = w, .h = &h, .other = e[7], .inner = TECS_EINVAL };
    CHECK_ERR(tecs_handle_enable_many(&h, e + 3, 5, false, &done), TECS_OK);
    CHECK_EQ(done, 5);
    CHECK_EQ(c.inner, TECS_OK);
    /* e[7], last, was enabled again by the events before it, then disabled. */
    CHECK(!tecs_is_enabled(w, e[7], hp));
    CHECK_ERR(tecs_observer_free(w, o), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

static tecs_handle_t *g_h;
static tecs_entity_t g_ids[3];
static tecs_err_t g_err;

static void ctor_toggles_many(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (g_h)
        g_err = tecs_handle_enable_many(g_h, g_ids, 3, false, NULL);
}

/* Deferred: ids whose component comes with the queue queue their toggles;
** in a lifecycle hook every toggle queues. */
TEST(toggle_many_deferred_and_in_hooks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_comp_t pos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Position",
        .size = sizeof(Position), .align = _Alignof(Position), .ctor = ctor_toggles_many });
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    for (int i = 0; i < 3; i++) {
        g_ids[i] = tecs_new(w);
        TECS_SET(w, g_ids[i], hp, Health, { i });
    }
    tecs_entity_t late = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, late, hp), TECS_OK);              /* queued */
    tecs_entity_t ids[] = { g_ids[0], late, g_ids[1] };
    int32_t done = -1;
    CHECK_ERR(tecs_handle_enable_many(&h, ids, 3, false, &done), TECS_OK);
    CHECK_EQ(done, 3);
    CHECK(!tecs_is_enabled(w, g_ids[0], hp) && !tecs_is_enabled(w, g_ids[1], hp));
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_has(w, late, hp) && !tecs_is_enabled(w, late, hp));
    CHECK_ERR(tecs_handle_enable_many(&h, g_ids, 3, true, NULL), TECS_OK);
    g_h = &h;
    g_err = TECS_EINVAL;
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);                /* the ctor runs */
    g_h = NULL;
    CHECK_EQ(g_err, TECS_OK);
    for (int i = 0; i < 3; i++)
        CHECK(!tecs_is_enabled(w, g_ids[i], hp));           /* applied after the add */
    TW_CHECK(w);
    tw_free(w);
}

typedef struct par_ctx {
    tecs_comp_t hp;
    int32_t rows[TECS_MAX_THREADS];
    tecs_err_t err[TECS_MAX_THREADS];
} par_ctx;

/* A worker's part, disabled in one batch through its context's handle. */
static void disable_part(tecs_iter_t *it)
{
    par_ctx *c = it->ctx;
    tecs_handle_t h;
    tecs_err_t err = tecs_handle_init(it->world, c->hp, &h);
    if (err == TECS_OK)
        err = tecs_handle_enable_many(&h, it->entities, it->count, false, NULL);
    if (err == TECS_OK && it->count > 0 && !tecs_is_enabled(it->world, it->entities[0], c->hp))
        err = TECS_EINVAL;                      /* applied at once: wrong */
    if (err)
        c->err[it->worker] = err;
    c->rows[it->worker] += it->count;
}

TEST(toggle_many_from_workers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    enum { N = 3000 };
    tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    par_ctx c = { .hp = hp };
    tecs_handle_t first;        /* the first handle of hp: before the run */
    CHECK_ERR(tecs_handle_init(w, hp, &first), TECS_OK);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "off", .query = q,
          .run = disable_part, .ctx = &c, .parallel = true, .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(c.rows[0] + c.rows[1], N);
    CHECK_EQ(c.err[0], TECS_OK);
    CHECK_EQ(c.err[1], TECS_OK);
    CHECK_EQ(tecs_query_count(q), 0);           /* applied after the run */
    TW_CHECK(w);
    tw_free(w);
}

/* Out of memory while the toggles queue: the error of the id that could
** not queue, the ids before it queued, nothing leaked. */
TEST(toggle_many_out_of_memory_while_queued)
{
    for (long fail = 1; fail < 200; fail++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 0);
        CHECK(w != NULL);
        tecs_comp_t hp = enableable(w, "Health", false);
        tecs_handle_t h;
        CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
        enum { N = 40 };
        tecs_entity_t e[N];
        CHECK_ERR(tecs_defer_begin(w), TECS_OK);
        for (int i = 0; i < N; i++) {
            e[i] = tecs_new(w);                 /* pending: each toggle queues */
            CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
        }
        a.fail_at = a.calls + fail;
        int32_t done = -1;
        tecs_err_t err = tecs_handle_enable_many(&h, e, N, false, &done);
        a.fail_at = 0;
        bool failed = a.failures > 0;
        CHECK_ERR(err, failed ? TECS_ENOMEM : TECS_OK);
        CHECK(failed ? done < N : done == N);
        CHECK_ERR(tecs_defer_end(w), TECS_OK);
        for (int i = 0; i < N; i++)
            CHECK_EQ(tecs_is_enabled(w, e[i], hp), i >= done);
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}
