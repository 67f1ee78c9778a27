/* Handles of enableable components: tecs_handle_enable (inline) and its call against
** tecs_enable and tecs_is_enabled. */
#include "test.h"

static tecs_comp_t enableable(tecs_world_t *w, const char *name, bool row_ticks)
{
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = name,
        .size = sizeof(Health), .align = _Alignof(Health), .enableable = true,
        .row_ticks = row_ticks });
}

/* Random toggles of entities spread over more archetypes than a handle
** holds, through the handle, checked against a mirror, tecs_is_enabled
** and a query's count. */
static void toggle_against_mirror(bool row_ticks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", row_ticks);
    tecs_comp_t tags[3] = { TECS_TAG(w, A), TECS_TAG(w, B), TECS_TAG(w, C) };
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    enum { N = 600 };
    tecs_entity_t e[N];
    bool off[N] = { false };
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        for (int t = 0; t < 3; t++)         /* eight archetypes */
            if (i >> t & 1)
                tecs_add(w, e[i], tags[t]);
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    uint32_t x = 12345;
    for (int step = 0; step < 20000; step++) {
        x = x * 1103515245u + 12345u;
        int i = (int)(x >> 8) % N;
        bool on = x >> 30 & 1;
        CHECK_ERR(tecs_handle_enable(&h, e[i], on), TECS_OK);
        off[i] = !on;
        if (step % 997 == 0) {              /* a row moves: the bit goes along */
            tecs_comp_t t = tags[step % 3];
            if (tecs_has(w, e[i], t))
                tecs_remove(w, e[i], t);
            else
                tecs_add(w, e[i], t);
        }
    }
    int32_t on_count = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ(tecs_is_enabled(w, e[i], hp), !off[i]);
        on_count += !off[i];
    }
    CHECK_EQ(tecs_query_count(q), on_count);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

TEST(handle_enable_matches_tecs_enable)
{
    toggle_against_mirror(false);
}

/* Tick columns: the handle leaves such rows to tecs_enable. */
TEST(handle_enable_with_row_ticks_matches_tecs_enable)
{
    toggle_against_mirror(true);
}

TEST(handle_enable_refuses_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Sparse",
        .size = sizeof(Health), .align = _Alignof(Health), .storage = TECS_STORAGE_SPARSE });
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(NULL, hp, &h), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, hp, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, 999, &h), TECS_ENOCOMP);
    CHECK_ERR(tecs_handle_init(w, 0, &h), TECS_ENOCOMP);
    /* A handle of a component that is not enableable: tecs_enable's refusal. */
    tecs_entity_t plain = tecs_new(w);
    TECS_SET(w, plain, pos, Position, { 1, 2 });
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, plain, false), TECS_EINVAL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_handle_enable_many(&h, &plain, 1, false, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, plain, true), TECS_EINVAL);
    CHECK(tecs_is_enabled(w, plain, pos));
    CHECK_ERR(tecs__handle_enable(NULL, hp, 1, true), TECS_EINVAL);
    CHECK_ERR(tecs__handle_enable(w, pos, 1, true), TECS_EDEAD);
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), bare = tecs_new(w);
    TECS_SET(w, e, hp, Health, { 1 });
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);          /* learns the archetype */
    CHECK_ERR(tecs_handle_enable(&h, bare, false), TECS_ENOENT);   /* lacks it */
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_ERR(tecs_handle_enable(&h, 0, false), TECS_EDEAD);
    CHECK_ERR(tecs_handle_enable(&h, ((tecs_entity_t)1 << 32) | 100000u, false), TECS_EDEAD);
    tecs_entity_t dead = tecs_new(w);
    TECS_SET(w, dead, hp, Health, { 2 });
    CHECK_ERR(tecs_handle_enable(&h, dead, false), TECS_OK);
    tecs_destroy(w, dead);
    CHECK_ERR(tecs_handle_enable(&h, dead, true), TECS_EDEAD);
    tecs_entity_t recycled = tecs_new(w);       /* the same slot, a new generation */
    CHECK(TECS_ENTITY_INDEX(recycled) == TECS_ENTITY_INDEX(dead));
    TECS_SET(w, recycled, hp, Health, { 3 });
    CHECK_ERR(tecs_handle_enable(&h, dead, false), TECS_EDEAD);    /* the same archetype */
    CHECK(tecs_is_enabled(w, recycled, hp));
    CHECK_ERR(tecs_handle_enable(&h, recycled, false), TECS_OK);
    CHECK(!tecs_is_enabled(w, recycled, hp));
    /* A successful inline toggle sets no error; a call clears it. */
    CHECK_ERR(tecs_handle_enable(&h, e, true), TECS_OK);
    CHECK(tecs_is_enabled(w, e, hp));
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    /* A copy is a handle too. */
    tecs_handle_t copy = h;
    CHECK_ERR(tecs_handle_enable(&copy, e, false), TECS_OK);
    CHECK(!tecs_is_enabled(w, e, hp));
    TW_CHECK(w);
    tw_free(w);
}

/* Pending births and queued changes while deferred go to tecs_enable,
** which queues them as it queues its own. */
TEST(handle_enable_queues_behind_queued_changes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w);
    TECS_SET(w, f, hp, Health, { 1 });
    CHECK_ERR(tecs_handle_enable(&h, f, true), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, hp), TECS_OK);             /* queued */
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);      /* queued behind it */
    CHECK_ERR(tecs_handle_enable(&h, f, false), TECS_OK);      /* f has it: at once */
    CHECK(!tecs_is_enabled(w, f, hp));
    tecs_entity_t g = tecs_new(w);                      /* pending birth */
    CHECK_EQ(tecs_entity_state(w, g), TECS_ENTITY_PENDING);
    CHECK_ERR(tecs_set(w, g, hp, &(Health){ 3 }), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, g, false), TECS_OK);
    CHECK_ERR(tecs_remove(w, f, hp), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, f, true), TECS_OK);       /* after the remove: dropped */
    CHECK(!tecs_is_enabled(w, f, hp));
    CHECK_ERR(tecs_defer_end(w), TECS_ENOENT);          /* the drop is reported */
    CHECK(tecs_has(w, e, hp) && !tecs_is_enabled(w, e, hp));
    CHECK(tecs_has(w, g, hp) && !tecs_is_enabled(w, g, hp));
    CHECK(!tecs_has(w, f, hp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct ev_log {
    int enable, disable, enter, leave;
} ev_log;

static void log_event(const tecs_event_t *ev)
{
    ev_log *l = ev->ctx;
    l->enable += ev->kind == TECS_ON_ENABLE;
    l->disable += ev->kind == TECS_ON_DISABLE;
    l->enter += ev->kind == TECS_ON_ENTER;
    l->leave += ev->kind == TECS_ON_LEAVE;
}

/* Observers made after the handle learnt an archetype still hear it. */
TEST(handle_enable_fires_observers_added_later)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, hp, Health, { 1 });
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, e, true), TECS_OK);           /* inline now */
    ev_log log = { 0 };
    tecs_observer_t o1 = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_DISABLE, .comp = hp, .callback = log_event, .ctx = &log });
    CHECK(o1 != 0);
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);
    CHECK_EQ(log.disable, 1);
    CHECK_ERR(tecs_observer_free(w, o1), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, e, true), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);
    CHECK_EQ(log.disable, 1);
    const tecs_term_t terms[] = { { .comp = hp } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = terms, .term_count = 1, .callback = log_event, .ctx = &log }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
          .terms = terms, .term_count = 1, .callback = log_event, .ctx = &log }) != 0);
    CHECK_ERR(tecs_handle_enable(&h, e, true), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);
    CHECK_EQ(log.enter, 1);
    CHECK_EQ(log.leave, 1);
    TW_CHECK(w);
    tw_free(w);
}

/* The inline form stamps the chunk as entered, as tecs_enable does. */
TEST(handle_enable_stamps_the_added_tick)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, hp, Health, { 1 });
    CHECK_ERR(tecs_handle_enable(&h, e, false), TECS_OK);
    uint64_t t = tecs_world_tick_advance(w);
    CHECK(tecs_added_tick(w, e, hp) < t);
    CHECK_ERR(tecs_handle_enable(&h, e, true), TECS_OK);           /* inline */
    CHECK_EQ(tecs_added_tick(w, e, hp), t);
    TW_CHECK(w);
    tw_free(w);
}

/* Ids in row order, as the bench toggles them: each chunk's first toggle
** goes through tecs__handle_enable and opens the chunk, the rest are inline
** and do not count; the counts queries read, the bits moved by hole fills
** and moves, and the structure checker agree with tecs_is_enabled. With
** fewer rows a chunk than a bit word holds too. */
static void toggle_in_row_order(int32_t rows)
{
    tecs_world_t *w = tw_new_ex(NULL, rows);
    CHECK(w != NULL);
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    enum { N = 3000 };
    tecs_entity_t *e = malloc(N * sizeof *e);
    bool *off = calloc(N, sizeof *off);
    CHECK(e != NULL && off != NULL);
    CHECK_ERR(tecs_new_bulk(w, a, N, e, 0, NULL), TECS_OK);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    const tecs_handle_t hl = h;
    tecs_query_t *on = tecs_query_all(w, 1, &hp);
    tecs_query_t *dis = TECS_QUERY(w, { .comp = hp, .toggle = TECS_TOGGLE_DISABLED });
    for (int i = 0; i < N; i++)
        CHECK_ERR(tecs_handle_enable(&hl, e[i], false), TECS_OK);
    CHECK_EQ(tecs_query_count(on), 0);
    CHECK_EQ(tecs_query_count(dis), N);
    TW_CHECK(w);
    for (int i = 0; i < N; i += 3) {        /* every third enabled again */
        CHECK_ERR(tecs_handle_enable(&hl, e[i], true), TECS_OK);
        CHECK_ERR(tecs_handle_enable(&hl, e[i], true), TECS_OK);  /* no change */
    }
    for (int i = 0; i < N; i++)
        off[i] = i % 3 != 0;
    for (int i = 1; i < N; i += 7) {        /* hole fills move bits */
        CHECK_ERR(tecs_destroy(w, e[i]), TECS_OK);
        e[i] = 0;
    }
    for (int i = 2; i < N; i += 11)         /* rows move out and back */
        if (e[i]) {
            CHECK_ERR(tecs_add(w, e[i], tag), TECS_OK);
            if (i % 2)
                CHECK_ERR(tecs_remove(w, e[i], tag), TECS_OK);
        }
    TW_CHECK(w);
    for (int i = N - 1; i >= 0; i -= 2)     /* backwards, through moved rows */
        if (e[i]) {
            CHECK_ERR(tecs_handle_enable(&hl, e[i], i % 4 == 1), TECS_OK);
            off[i] = i % 4 != 1;
        }
    int32_t n_on = 0, n_off = 0;
    for (int i = 0; i < N; i++)
        if (e[i]) {
            CHECK_EQ(tecs_is_enabled(w, e[i], hp), !off[i]);
            n_on += !off[i];
            n_off += off[i];
        }
    CHECK_EQ(tecs_query_count(on), n_on);
    CHECK_EQ(tecs_query_count(dis), n_off);
    TW_CHECK(w);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);    /* the counts hold again */
    TW_CHECK(w);
    tecs_query_free(dis);
    tecs_query_free(on);
    free(off);
    free(e);
    tw_free(w);
}

TEST(handle_enable_in_row_order_matches_tecs_enable)
{
    toggle_in_row_order(0);
    toggle_in_row_order(16);
    toggle_in_row_order(128);
}

static int run_rows(tecs_query_t *q)
{
    int n = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it))
        n += it.count;
    return n;
}

/* Whatever moves the tick on (tecs_world_tick_advance, a run of a query
** with change terms, a delta mark, tecs_progress) closes the short path,
** so the next toggle there stamps its chunk at the new tick, as
** tecs_enable does: change queries and deltas see every toggle. */
TEST(handle_enable_stamps_whatever_moves_the_tick)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_query_t *added = TECS_QUERY(w, { .comp = hp, .toggle = TECS_TOGGLE_ANY,
                                          .change = TECS_CHANGE_ADDED });
    run_rows(added);                        /* from now on: what enters */
    CHECK_EQ(run_rows(added), 0);
    for (int round = 0; round < 8; round++) {
        CHECK_ERR(tecs_handle_enable(&h, e[round % 4], round % 2 != 0), TECS_OK);
        CHECK_ERR(tecs_handle_enable(&h, e[(round + 1) % 4], round % 2 != 0), TECS_OK);
        CHECK_EQ(tecs_added_tick(w, e[round % 4], hp), tecs_world_tick(w));
        CHECK_EQ(tecs_added_tick(w, e[(round + 1) % 4], hp), tecs_world_tick(w));
        TW_CHECK(w);
        if (round % 4 == 0) {
            tecs_world_tick_advance(w);
        } else if (round % 4 == 1) {
            CHECK_EQ(run_rows(added), 4);   /* the toggled chunk, and a new tick */
            CHECK_EQ(run_rows(added), 0);
        } else if (round % 4 == 2) {
            tecs_mark_t m;
            CHECK_ERR(tecs_world_mark(w, &m), TECS_OK);
        } else {
            CHECK_ERR(tecs_progress(w, 0.0f), TECS_OK);
        }
    }
    tecs_query_free(added);
    TW_CHECK(w);
    tw_free(w);
}

/* A cache and an index made after the short path opened: the next toggle
** there raises their events, as tecs_enable's would. */
TEST(handle_enable_feeds_caches_and_indexes_made_later)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e[10];
    for (int i = 0; i < 10; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    CHECK_ERR(tecs_handle_enable(&h, e[0], false), TECS_OK);      /* opens the chunk */
    CHECK_ERR(tecs_handle_enable(&h, e[0], true), TECS_OK);       /* inline */
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK(c != NULL);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp,
        .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    CHECK(x != NULL);
    CHECK_EQ(tecs_cache_count(c), 10);
    CHECK_ERR(tecs_handle_enable(&h, e[3], false), TECS_OK);
    CHECK_ERR(tecs_handle_enable(&h, e[4], false), TECS_OK);
    CHECK_EQ(tecs_cache_count(c), 8);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK(tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(6)) >= 0);
    tecs_entity_t out[10];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 10), 4);   /* 0 1 2 5 */
    tecs_filter_free(f);
    tecs_cache_free(c);
    tecs_index_free(x);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* Chunks added and freed, new archetypes, a reset: the handle holds. */
TEST(handle_enable_survives_growth_and_reset)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    for (int round = 0; round < 2; round++) {
        tecs_entity_t first = tecs_new(w);
        TECS_SET(w, first, hp, Health, { 0 });
        CHECK_ERR(tecs_handle_enable(&h, first, false), TECS_OK);
        enum { N = 5000 };                  /* many chunks: the table moves */
        tecs_entity_t *e = malloc(N * sizeof *e);
        CHECK(e != NULL);
        for (int i = 0; i < N; i++) {
            e[i] = tecs_new(w);
            TECS_SET(w, e[i], hp, Health, { i });
            if (i % 2)
                tecs_add(w, e[i], tag);
        }
        for (int i = 0; i < N; i++)
            CHECK_ERR(tecs_handle_enable(&h, e[i], i % 3 != 0), TECS_OK);
        for (int i = N / 2; i < N; i++)     /* chunks freed */
            tecs_destroy(w, e[i]);
        for (int i = 0; i < N / 2; i++)
            CHECK_ERR(tecs_handle_enable(&h, e[i], i % 5 == 0), TECS_OK);
        for (int i = 0; i < N / 2; i++)
            CHECK_EQ(tecs_is_enabled(w, e[i], hp), i % 5 == 0);
        TW_CHECK(w);
        CHECK_ERR(tecs_world_reset(w), TECS_OK);
        CHECK_ERR(tecs_handle_enable(&h, e[0], true), TECS_EDEAD);
        free(e);
    }
    tw_free(w);
}

/* ---- callbacks and workers ------------------------------------------------ */

typedef struct cb_ctx {
    tecs_world_t *w;
    tecs_handle_t *h;
    tecs_entity_t other;
    tecs_comp_t hp;
    tecs_err_t err;
    bool applied_inside;
    tecs_comp_t fresh;          /* enableable, no handle yet */
    tecs_err_t fresh_err;
} cb_ctx;

static cb_ctx *g_cb;

static void ctor_toggles(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (g_cb) {
        g_cb->err = tecs_handle_enable(g_cb->h, g_cb->other, false);
        g_cb->applied_inside = !tecs_is_enabled(g_cb->w, g_cb->other, g_cb->hp);
        tecs_handle_t first;
        g_cb->fresh_err = tecs_handle_init(g_cb->w, g_cb->fresh, &first);
    }
}

static void observer_toggles(const tecs_event_t *ev)
{
    cb_ctx *c = ev->ctx;
    c->err = tecs_handle_enable(c->h, c->other, false);
    c->applied_inside = !tecs_is_enabled(c->w, c->other, c->hp);
}

/* In a lifecycle hook rows are in motion: the toggle queues. In an
** observer and in an iteration it applies at once. */
TEST(handle_enable_in_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    tecs_comp_t pos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Position",
        .size = sizeof(Position), .align = _Alignof(Position), .ctor = ctor_toggles });
    tecs_comp_t tag = TECS_TAG(w, Marked);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t other = tecs_new(w);
    TECS_SET(w, other, hp, Health, { 1 });
    CHECK_ERR(tecs_handle_enable(&h, other, true), TECS_OK);       /* learnt */
    cb_ctx c = { w, &h, other, hp, TECS_EINVAL, true, enableable(w, "Fresh", false),
                 TECS_OK };
    g_cb = &c;
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    g_cb = NULL;
    CHECK_EQ(c.err, TECS_OK);
    CHECK_EQ(c.fresh_err, TECS_EBUSY);          /* the first handle allocates */
    CHECK(!c.applied_inside);
    CHECK(!tecs_is_enabled(w, other, hp));      /* applied after the add */
    CHECK_ERR(tecs_handle_enable(&h, other, true), TECS_OK);
    c = (cb_ctx){ w, &h, other, hp, TECS_EINVAL, false, 0, TECS_OK };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = tag,
          .callback = observer_toggles, .ctx = &c }) != 0);
    CHECK_ERR(tecs_add(w, e, tag), TECS_OK);
    CHECK_EQ(c.err, TECS_OK);
    CHECK(c.applied_inside);
    /* In an iteration: at once, and the rows not handed out yet see it. */
    CHECK_ERR(tecs_handle_enable(&h, other, true), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        rows += it.count;
        CHECK_ERR(tecs_handle_enable(&h, other, false), TECS_OK);
        CHECK(!tecs_is_enabled(w, other, hp));
    }
    CHECK_EQ(rows, 1);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct par_ctx {
    tecs_comp_t hp;
    int32_t rows[TECS_MAX_THREADS];
    tecs_err_t err[TECS_MAX_THREADS];
} par_ctx;

/* A worker's handle is its context's: its toggles queue. */
static void disable_through_context(tecs_iter_t *it)
{
    par_ctx *c = it->ctx;
    tecs_handle_t h;
    tecs_err_t err = tecs_handle_init(it->world, c->hp, &h);
    for (int32_t r = 0; err == TECS_OK && r < it->count; r++) {
        err = tecs_handle_enable(&h, it->entities[r], false);
        if (err == TECS_OK && !tecs_is_enabled(it->world, it->entities[r], c->hp))
            err = TECS_EINVAL;                  /* applied at once: wrong */
    }
    if (err)
        c->err[it->worker] = err;
    c->rows[it->worker] += it->count;
}

TEST(handle_enable_from_workers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", false);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, hp, &h), TECS_OK);
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        if (i % 3 == 0)
            CHECK_ERR(tecs_handle_enable(&h, e[i], false), TECS_OK);
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    par_ctx c = { .hp = hp };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "off", .query = q,
          .run = disable_through_context, .ctx = &c, .parallel = true,
          .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK_EQ(c.rows[0] + c.rows[1], 2000);
    CHECK_EQ(c.err[0], TECS_OK);
    CHECK_EQ(c.err[1], TECS_OK);
    CHECK_EQ(tecs_query_count(q), 0);           /* applied after the run */
    for (int i = 0; i < 3000; i += 97)
        CHECK(!tecs_is_enabled(w, e[i], hp));
    CHECK_ERR(tecs_handle_enable(&h, e[1], true), TECS_OK);    /* the world's handle again */
    CHECK(tecs_is_enabled(w, e[1], hp));
    TW_CHECK(w);
    tw_free(w);
}
