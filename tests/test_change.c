/* Change detection: the world's tick, the ticks of writes, change terms. */
#include "test.h"

#if !defined(_WIN32) && !defined(TECS_NO_THREADS)
#define HAVE_THREADS 1
#else
#define HAVE_THREADS 0
#endif

enum { ROWS = 16, CHUNKS = 4, N = ROWS * CHUNKS };

/* A world of 16-row chunks holding N entities with Position (i, 0) and
** Velocity in one archetype: ids[i] is row i, chunk i / ROWS. */
typedef struct cfx {
    tw_alloc al;
    tecs_world_t *w;
    tecs_comp_t pos, vel, tag;
    tecs_entity_t ids[N];
} cfx;

static void cfx_open(cfx *f)
{
    memset(f, 0, sizeof *f);
    f->w = tw_new_ex(&f->al, ROWS);
    f->pos = TECS_COMPONENT(f->w, Position);
    f->vel = TECS_COMPONENT(f->w, Velocity);
    f->tag = TECS_TAG(f->w, Marked);
    for (int i = 0; i < N; i++) {
        f->ids[i] = tecs_new(f->w);
        TECS_SET(f->w, f->ids[i], f->pos, Position, { (float)i, 0 });
        TECS_SET(f->w, f->ids[i], f->vel, Velocity, { 1, 1 });
    }
}

static void cfx_close(cfx *f)
{
    TW_CHECK(f->w);
    tw_free(f->w);
}

/* A query of Position (read) whose term asks `change`, and Velocity. */
static tecs_query_t *change_query(cfx *f, tecs_change_t change)
{
    return TECS_QUERY(f->w, { .comp = f->pos, .access = TECS_READ, .change = change },
                      { .comp = f->vel, .access = TECS_READ });
}

/* One run of q: the rows it hands out, as a bit per entity of the fixture
** (by its x), and their number. */
static int run_rows(tecs_query_t *q, bool *seen)
{
    memset(seen, 0, N * sizeof *seen);
    int n = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    while (tecs_iter_next(&it)) {
        const Position *p = tecs_field(&it, 0);
        for (int32_t i = 0; i < it.count; i++, n++)
            seen[(int)p[i].x] = true;
    }
    return n;
}

/* Are exactly the rows of the chunks of `chunks` (bits) in seen? */
static bool chunks_seen(const bool *seen, unsigned chunks)
{
    for (int i = 0; i < N; i++)
        if (seen[i] != (((chunks >> (i / ROWS)) & 1u) != 0))
            return false;
    return true;
}

/* ---- the ticks ---------------------------------------------------------- */

TEST(change_world_tick_advances)
{
    tecs_world_t *w = tw_new();
    CHECK(tecs_world_tick(NULL) == 0);
    CHECK(tecs_world_tick_advance(NULL) == 0);
    uint64_t t = tecs_world_tick(w);
    CHECK(t == 1);
    CHECK(tecs_world_tick_advance(w) == t + 1);
    CHECK(tecs_world_tick(w) == t + 1);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);    /* a frame starts a tick */
    CHECK(tecs_world_tick(w) == t + 2);
    tw_free(w);
}

TEST(change_writes_record_the_tick)
{
    cfx f;
    cfx_open(&f);
    tecs_world_t *w = f.w;
    uint64_t born = tecs_world_tick(w);
    CHECK(tecs_changed_tick(w, f.ids[0], f.pos) == born);
    CHECK(tecs_added_tick(w, f.ids[0], f.pos) == born);
    uint64_t t1 = tecs_world_tick_advance(w);
    TECS_SET(w, f.ids[3], f.pos, Position, { 3, 1 });
    CHECK(tecs_changed_tick(w, f.ids[3], f.pos) == t1);
    CHECK(tecs_changed_tick(w, f.ids[5], f.pos) == t1);     /* its chunk's */
    CHECK(tecs_changed_tick(w, f.ids[ROWS], f.pos) == born);  /* another chunk */
    CHECK(tecs_changed_tick(w, f.ids[3], f.vel) == born);     /* another column */
    CHECK(tecs_added_tick(w, f.ids[3], f.pos) == born);
    uint64_t t2 = tecs_world_tick_advance(w);
    CHECK(tecs_get(w, f.ids[ROWS], f.pos) != NULL);           /* a read: no write */
    CHECK(tecs_changed_tick(w, f.ids[ROWS], f.pos) == born);
    CHECK(tecs_get_mut(w, f.ids[ROWS], f.pos) != NULL);
    CHECK(tecs_changed_tick(w, f.ids[ROWS], f.pos) == t2);
    uint64_t t3 = tecs_world_tick_advance(w);
    CHECK_ERR(tecs_modified(w, f.ids[2 * ROWS], f.vel), TECS_OK);
    CHECK(tecs_changed_tick(w, f.ids[2 * ROWS], f.vel) == t3);
    /* An add moves the row: its new chunk counts it as written and added. */
    uint64_t t4 = tecs_world_tick_advance(w);
    CHECK_ERR(tecs_add(w, f.ids[0], f.tag), TECS_OK);
    CHECK(tecs_added_tick(w, f.ids[0], f.tag) == t4);
    CHECK(tecs_changed_tick(w, f.ids[0], f.pos) == t4);
    /* The hole it left was filled by the last row, from another chunk. */
    CHECK(tecs_changed_tick(w, f.ids[1], f.pos) == t4);
    /* Not alive, or no such component: 0. */
    CHECK(tecs_changed_tick(w, f.ids[1], f.tag) == 0);
    CHECK(tecs_changed_tick(w, 12345, f.pos) == 0);
    CHECK(tecs_added_tick(NULL, f.ids[1], f.pos) == 0);
    tecs_destroy(w, f.ids[1]);
    CHECK(tecs_changed_tick(w, f.ids[1], f.pos) == 0);
    cfx_close(&f);
}

/* ---- change terms --------------------------------------------------------- */

TEST(change_term_passes_the_chunks_written_since_the_last_run)
{
    cfx f;
    cfx_open(&f);
    bool seen[N];
    tecs_query_t *q = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK(tecs_query_last_run(q) == 0);
    CHECK_EQ(run_rows(q, seen), N);                 /* the first run: every row */
    CHECK(tecs_query_last_run(q) != 0);
    CHECK_EQ(run_rows(q, seen), 0);                 /* nothing written since */
    TECS_SET(f.w, f.ids[ROWS + 2], f.pos, Position, { ROWS + 2, 5 });
    CHECK_EQ(run_rows(q, seen), ROWS);
    CHECK(chunks_seen(seen, 1u << 1));
    /* A write to another component does not count. */
    TECS_SET(f.w, f.ids[0], f.vel, Velocity, { 2, 2 });
    CHECK_EQ(run_rows(q, seen), 0);
    /* Written during a run, after its chunk went by: the next run sees it. */
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    CHECK(!tecs_iter_next(&it));
    TECS_SET(f.w, f.ids[3 * ROWS], f.pos, Position, { 3 * ROWS, 1 });
    tecs_iter_fini(&it);
    CHECK_EQ(run_rows(q, seen), ROWS);
    CHECK(chunks_seen(seen, 1u << 3));
    /* Two chunks, through a pointer and tecs_modified. */
    tecs_get_mut(f.w, f.ids[0], f.pos);
    CHECK_ERR(tecs_modified(f.w, f.ids[2 * ROWS], f.pos), TECS_OK);
    CHECK_EQ(run_rows(q, seen), 2 * ROWS);
    CHECK(chunks_seen(seen, 1u | 1u << 2));
    /* Set back to 0: the next run passes every row again. */
    CHECK_ERR(tecs_query_set_last_run(q, 0), TECS_OK);
    CHECK_EQ(run_rows(q, seen), N);
    CHECK_EQ(tecs_query_count(q), N);               /* the latest run's threshold */
    tecs_query_free(q);
    cfx_close(&f);
}

TEST(change_term_sees_its_own_write_terms)
{
    cfx f;
    cfx_open(&f);
    bool seen[N];
    tecs_query_t *q = TECS_QUERY(f.w, { .comp = f.pos, .change = TECS_CHANGE_CHANGED },
                                 { .comp = f.vel, .access = TECS_READ });
    tecs_query_t *probe = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK_EQ(run_rows(probe, seen), N);
    CHECK_EQ(run_rows(q, seen), N);                 /* hands out Position to write */
    CHECK_EQ(run_rows(q, seen), N);                 /* so the last run wrote it all */
    CHECK_EQ(run_rows(probe, seen), N);
    /* A read term is no write. */
    CHECK_EQ(run_rows(probe, seen), 0);
    tecs_query_free(q);
    tecs_query_free(probe);
    cfx_close(&f);
}

TEST(change_term_added)
{
    cfx f;
    cfx_open(&f);
    bool seen[N];
    tecs_query_t *q = TECS_QUERY(f.w, { .comp = f.pos, .access = TECS_READ },
                                 { .comp = f.tag, .change = TECS_CHANGE_ADDED });
    CHECK_EQ(run_rows(q, seen), 0);                 /* nobody has the tag */
    CHECK_ERR(tecs_add(f.w, f.ids[7], f.tag), TECS_OK);
    CHECK_EQ(run_rows(q, seen), 1);
    CHECK(seen[7]);
    CHECK_EQ(run_rows(q, seen), 0);
    /* A write is no add. */
    TECS_SET(f.w, f.ids[7], f.pos, Position, { 7, 9 });
    CHECK_EQ(run_rows(q, seen), 0);
    tecs_query_t *born = change_query(&f, TECS_CHANGE_ADDED);
    CHECK_EQ(run_rows(born, seen), N);              /* every row (the first run) */
    CHECK_EQ(run_rows(born, seen), 0);
    tecs_entity_t e = tecs_new(f.w);                /* a birth: its chunk */
    TECS_SET(f.w, e, f.pos, Position, { 0, 0 });
    TECS_SET(f.w, e, f.vel, Velocity, { 0, 0 });
    CHECK(run_rows(born, seen) >= 1);
    CHECK(seen[0]);
    tecs_query_free(q);
    tecs_query_free(born);
    cfx_close(&f);
}

static bool count_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    ++*(int *)ctx;
    return false;               /* go on */
}

TEST(change_term_in_counts_each_and_systems)
{
    cfx f;
    cfx_open(&f);
    tecs_query_t *q = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK_EQ(tecs_query_count(q), N);               /* never ran: every row */
    int n = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, count_each, &n), TECS_OK);
    CHECK_EQ(n, N);
    TECS_SET(f.w, f.ids[0], f.pos, Position, { 0, 3 });
    n = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, count_each, &n), TECS_OK);
    CHECK_EQ(n, ROWS);
    /* A count applies the latest run's threshold and runs nothing. */
    CHECK_EQ(tecs_query_count(q), ROWS);
    CHECK_EQ(tecs_query_count(q), ROWS);
    tecs_entity_t out[N];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, out, N), 0);     /* a run: nothing since */
    tecs_query_free(q);
    cfx_close(&f);
}

typedef struct sys_rows { int rows[8]; int frame; } sys_rows;

static void count_rows(tecs_iter_t *it)
{
    sys_rows *s = it->ctx;
    s->rows[s->frame] += it->count;
}

TEST(change_term_in_a_system_between_frames)
{
    cfx f;
    cfx_open(&f);
    sys_rows s = { { 0 }, 0 };
    tecs_query_t *q = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK(tecs_system_new(f.w, &(tecs_system_desc_t){ .name = "watch", .query = q,
                                                      .run = count_rows, .ctx = &s }) != 0);
    CHECK_ERR(tecs_progress(f.w, 0.0), TECS_OK);
    s.frame = 1;
    CHECK_ERR(tecs_progress(f.w, 0.0), TECS_OK);
    s.frame = 2;
    TECS_SET(f.w, f.ids[2 * ROWS + 1], f.pos, Position, { 2 * ROWS + 1, 1 });
    CHECK_ERR(tecs_progress(f.w, 0.0), TECS_OK);
    CHECK_EQ(s.rows[0], N);
    CHECK_EQ(s.rows[1], 0);
    CHECK_EQ(s.rows[2], ROWS);
    cfx_close(&f);
}

TEST(change_term_of_a_sparse_component)
{
    cfx f;
    cfx_open(&f);
    bool seen[N];
    tecs_comp_t hp = tecs_component_new(f.w, &(tecs_component_desc_t){ .name = "Health",
        .size = sizeof(Health), .align = 4, .storage = TECS_STORAGE_SPARSE });
    for (int i = 0; i < N; i += 4)
        TECS_SET(f.w, f.ids[i], hp, Health, { i });
    tecs_query_t *q = TECS_QUERY(f.w, { .comp = f.pos, .access = TECS_READ },
                                 { .comp = hp, .access = TECS_READ,
                                   .change = TECS_CHANGE_CHANGED });
    CHECK_EQ(run_rows(q, seen), N / 4);
    CHECK_EQ(run_rows(q, seen), 0);
    uint64_t t = tecs_world_tick_advance(f.w);
    TECS_SET(f.w, f.ids[8], hp, Health, { 1 });     /* the set as a whole */
    CHECK(tecs_changed_tick(f.w, f.ids[8], hp) == t);
    CHECK(tecs_changed_tick(f.w, f.ids[12], hp) == t);
    CHECK(tecs_changed_tick(f.w, f.ids[1], hp) == 0);   /* not a member */
    CHECK_EQ(run_rows(q, seen), N / 4);
    tecs_query_free(q);
    cfx_close(&f);
}

static void never_called(const tecs_event_t *ev)
{
    (void)ev;
    CHECK(!"an observer with change terms ran");
}

TEST(change_term_refused_where_it_means_nothing)
{
    cfx f;
    cfx_open(&f);
    tecs_world_t *w = f.w;
    CHECK(TECS_QUERY(w, { .comp = f.pos, .oper = TECS_OPTIONAL,
                          .change = TECS_CHANGE_CHANGED }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(TECS_QUERY(w, { .comp = f.pos, .oper = TECS_NONE, .change = TECS_CHANGE_ADDED }) == NULL);
    CHECK(TECS_QUERY(w, { .comp = f.tag, .change = TECS_CHANGE_CHANGED }) == NULL);
    CHECK(strstr(tecs_last_error_msg(w), "tag") != NULL);
    CHECK(TECS_QUERY(w, { .comp = f.pos, .change = (tecs_change_t)7 }) == NULL);
    tecs_query_t *q = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK(tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
        .query = q, .callback = never_called }) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_query_set_last_run(NULL, 0), TECS_EINVAL);
    CHECK_ERR(tecs_query_set_last_run(q, tecs_world_tick(w) + 1), TECS_EINVAL);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_query_set_last_run(q, 0), TECS_EBUSY);
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_query_set_last_run(q, 0), TECS_OK);
    tecs_query_free(q);
    cfx_close(&f);
}

/* ---- workers -------------------------------------------------------------- */

typedef struct far_write { tecs_comp_t pos; tecs_entity_t target, first; } far_write;

/* Writes Position through its write term. */
static void step_rows(tecs_iter_t *it)
{
    Position *p = tecs_field(it, 0);
    for (int32_t i = 0; i < it->count; i++)
        p[i].y += 1;
}

/* Writes the target's Position through tecs_get_mut (declared in
** desc.writes), from the first worker. */
static void poke_far(tecs_iter_t *it)
{
    const far_write *fw = it->ctx;
    if (it->count > 0 && it->entities[0] == fw->first) {
        Position *t = tecs_get_mut(it->world, fw->target, fw->pos);
        if (t)
            t->y += 1;
    }
}

TEST(parallel_change_terms_see_the_workers_writes)
{
    for (int threads = 1; threads <= 2 * HAVE_THREADS; threads++) {
        cfx f;
        cfx_open(&f);
        bool seen[N];
        tecs_comp_t other = TECS_TAG(f.w, Other);
        tecs_entity_t target = tecs_new(f.w);
        TECS_SET(f.w, target, f.pos, Position, { 0, 0 });
        tecs_add(f.w, target, other);
        CHECK_ERR(tecs_world_set_threads(f.w, threads), TECS_OK);
        far_write fw = { f.pos, target, f.ids[0] };
        tecs_query_t *writer = TECS_QUERY(f.w, { .comp = f.pos }, { .comp = f.vel });
        tecs_query_t *poker = TECS_QUERY(f.w, { .comp = f.vel, .access = TECS_READ });
        tecs_query_t *watch = change_query(&f, TECS_CHANGE_CHANGED);
        tecs_query_t *watch_other = TECS_QUERY(f.w, { .comp = f.pos, .access = TECS_READ,
                                                      .change = TECS_CHANGE_CHANGED },
                                               { .comp = other });
        CHECK_EQ(run_rows(watch, seen), N);
        CHECK_EQ(run_rows(watch_other, seen), 1);
        tecs_system_t s1 = tecs_system_new(f.w, &(tecs_system_desc_t){ .name = "step",
            .query = writer, .run = step_rows, .parallel = true,
            .parallel_min = 1 });
        CHECK(s1 != 0);
        CHECK_ERR(tecs_progress(f.w, 0.0), TECS_OK);
        CHECK_EQ(run_rows(watch, seen), N);         /* the parts' write terms */
        CHECK_EQ(run_rows(watch_other, seen), 0);
        tecs_system_t s2 = tecs_system_new(f.w, &(tecs_system_desc_t){ .name = "poke",
            .query = poker, .run = poke_far, .ctx = &fw, .parallel = true, .parallel_min = 1,
            .writes = (tecs_comp_t[]){ f.pos, 0 } });
        CHECK(s2 != 0 && tecs_system_enable(f.w, s1, false) == TECS_OK);
        CHECK_ERR(tecs_progress(f.w, 0.0), TECS_OK);
        CHECK_EQ(TECS_GET(f.w, target, f.pos, Position)->y, 1);
        CHECK_EQ(run_rows(watch_other, seen), 1);   /* written by a worker */
        tecs_world_set_threads(f.w, 0);
        cfx_close(&f);
    }
}

/* ---- ticks per row -------------------------------------------------------- */

/* The fixture, Position kept with ticks per row. */
static void cfx_open_rows(cfx *f)
{
    memset(f, 0, sizeof *f);
    f->w = tw_new_ex(&f->al, ROWS);
    f->pos = tecs_component_new(f->w, &(tecs_component_desc_t){ .name = "Position",
        .size = sizeof(Position), .align = 4, .row_ticks = true });
    f->vel = TECS_COMPONENT(f->w, Velocity);
    f->tag = TECS_TAG(f->w, Marked);
    for (int i = 0; i < N; i++) {
        f->ids[i] = tecs_new(f->w);
        TECS_SET(f->w, f->ids[i], f->pos, Position, { (float)i, 0 });
        TECS_SET(f->w, f->ids[i], f->vel, Velocity, { 1, 1 });
    }
}

TEST(change_row_ticks_pass_the_rows_written)
{
    cfx f;
    cfx_open_rows(&f);
    bool seen[N];
    tecs_query_t *q = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK_EQ(run_rows(q, seen), N);
    CHECK_EQ(run_rows(q, seen), 0);
    uint64_t t = tecs_world_tick(f.w);
    TECS_SET(f.w, f.ids[ROWS + 2], f.pos, Position, { ROWS + 2, 5 });
    tecs_get_mut(f.w, f.ids[3 * ROWS + 15], f.pos);
    CHECK(tecs_changed_tick(f.w, f.ids[ROWS + 2], f.pos) == t);
    CHECK(tecs_changed_tick(f.w, f.ids[ROWS + 3], f.pos) < t);    /* its own tick */
    CHECK_EQ(run_rows(q, seen), 2);
    CHECK(seen[ROWS + 2] && seen[3 * ROWS + 15]);
    /* A move is no write: the row keeps its ticks; nor is the hole fill. */
    CHECK_ERR(tecs_add(f.w, f.ids[5], f.tag), TECS_OK);
    CHECK_EQ(run_rows(q, seen), 0);
    tecs_query_t *added = change_query(&f, TECS_CHANGE_ADDED);
    CHECK_EQ(run_rows(added, seen), N);
    CHECK_ERR(tecs_remove(f.w, f.ids[5], f.tag), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, f.ids[6], f.pos), TECS_OK);
    CHECK_EQ(run_rows(added, seen), 0);
    CHECK_ERR(tecs_add(f.w, f.ids[6], f.pos), TECS_OK);          /* got it again */
    CHECK_EQ(run_rows(added, seen), 1);
    CHECK(seen[0]);             /* (its x is 0 now: the add zeroes the value) */
    CHECK_EQ(run_rows(q, seen), 1);                             /* and a value */
    tecs_query_free(q);
    tecs_query_free(added);
    cfx_close(&f);
}

TEST(change_row_ticks_of_write_terms_are_the_rows_handed_out)
{
    cfx f;
    cfx_open_rows(&f);
    bool seen[N];
    tecs_comp_t on = tecs_component_new(f.w, &(tecs_component_desc_t){ .name = "On",
        .enableable = true });
    for (int i = 0; i < N; i++) {
        tecs_add(f.w, f.ids[i], on);
        if ((i / 3) & 1)
            tecs_enable(f.w, f.ids[i], on, false);
    }
    tecs_query_t *probe = change_query(&f, TECS_CHANGE_CHANGED);
    CHECK_EQ(run_rows(probe, seen), N);
    tecs_query_t *writer = TECS_QUERY(f.w, { .comp = f.pos }, { .comp = on });
    int handed = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(writer), .query = writer);
    while (tecs_iter_next(&it))
        handed += it.count;
    CHECK(handed > 0 && handed < N);
    CHECK_EQ(run_rows(probe, seen), handed);
    for (int i = 0; i < N; i++)
        CHECK(seen[i] == !((i / 3) & 1));
    /* Enabling a row's component: that row comes (for a component kept by
    ** row, only its own). */
    CHECK_EQ(run_rows(probe, seen), 0);
    tecs_query_free(probe);
    tecs_query_free(writer);
    cfx_close(&f);
}

/* A walk's write terms count the chunks it handed out as written, and
** only those: by chunk, and by row for a component kept with ticks per
** row; forward and in reverse; also when the walk is ended early. */
TEST(change_plain_walk_writes_the_chunks_handed_out)
{
    for (int rowwise = 0; rowwise < 2; rowwise++) {
        cfx f;
        if (rowwise)
            cfx_open_rows(&f);
        else
            cfx_open(&f);
        bool seen[N];
        tecs_query_t *probe = change_query(&f, TECS_CHANGE_CHANGED);
        CHECK_EQ(run_rows(probe, seen), N);
        CHECK_EQ(run_rows(probe, seen), 0);
        tecs_query_t *writer = TECS_QUERY(f.w, { .comp = f.pos });
        tecs_iter_t it = TECS_ITER(tecs_query_world(writer), .query = writer);
        CHECK(tecs_iter_next(&it) && tecs_iter_next(&it));     /* chunks 0 and 1 */
        tecs_iter_fini(&it);
        CHECK_EQ(run_rows(probe, seen), 2 * ROWS);
        CHECK(chunks_seen(seen, 3u));
        it = TECS_ITER(tecs_query_world(writer), .query = writer, .reverse = true);
        CHECK(tecs_iter_next(&it));                            /* chunk 3 */
        tecs_iter_fini(&it);
        CHECK_EQ(run_rows(probe, seen), ROWS);
        CHECK(chunks_seen(seen, 8u));
        tecs_query_t *reader = TECS_QUERY(f.w, { .comp = f.pos, .access = TECS_READ });
        CHECK_EQ(run_rows(reader, seen), N);
        CHECK_EQ(run_rows(probe, seen), 0);
        tecs_query_free(probe);
        tecs_query_free(writer);
        tecs_query_free(reader);
        cfx_close(&f);
    }
}

TEST(change_row_ticks_refused_for_sparse_components)
{
    tecs_world_t *w = tw_new();
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "S", .size = 4, .align = 4,
        .storage = TECS_STORAGE_SPARSE, .row_ticks = true }) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    tw_free(w);
}

TEST(change_row_ticks_follow_enabling)
{
    tecs_world_t *w = tw_new_ex(NULL, ROWS);
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Health",
        .size = sizeof(Health), .align = 4, .enableable = true, .row_ticks = true });
    tecs_entity_t e[8];
    for (int i = 0; i < 8; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp, .access = TECS_READ,
                                      .change = TECS_CHANGE_ADDED });
    tecs_entity_t out[8];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, 8), 8);
    CHECK_ERR(tecs_enable(w, e[2], hp, false), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, 8), 0);     /* gone: nothing came */
    CHECK_ERR(tecs_enable(w, e[2], hp, true), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, 8), 1);
    CHECK(out[0] == e[2]);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* A load is a birth of every row: a change query that ran before it sees
** them all, and so does one whose first run comes after. */
TEST(change_terms_see_a_loaded_world)
{
    cfx f;
    cfx_open(&f);
    bool seen[N];
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(f.w, &buf), TECS_OK);
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_query_t *before = TECS_QUERY(w, { .comp = pos, .access = TECS_READ,
                                           .change = TECS_CHANGE_ADDED });
    tecs_iter_t it = TECS_ITER(w, .query = before);  /* its first run: nothing yet */
    CHECK(!tecs_iter_next(&it));
    CHECK(tecs_query_last_run(before) != 0);
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_OK);
    cfx g = f;
    g.w = w;
    g.pos = pos;
    g.vel = tecs_component_lookup(w, "Velocity");
    tecs_query_t *after = change_query(&g, TECS_CHANGE_CHANGED);
    CHECK_EQ(run_rows(after, seen), N);
    CHECK_EQ(run_rows(after, seen), 0);
    tecs_entity_t out[N];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = before) }, out, N), N);
    tecs_query_free(before);
    tecs_query_free(after);
    tecs_snapshot_buf_free(&buf);
    TW_CHECK(w);
    tw_free(w);
    cfx_close(&f);
}
