/*
** Lookups in the caller's loop: a handle read inline (tecs_handle_get) and the
** batched lookup (tecs_get_many). Each case compares them with tecs_get
** after the world changes in one way: new archetypes, chunks added and
** freed, destroys, recycled slots, a removed component, a reset; then bad
** input, callbacks, workers and out of memory; then the short path of a
** table's hot archetype and the handles of sparse components.
*/
#include "test.h"

/* The handle, tecs_get_many and tecs_get agree on e (want: its value or
** NULL). */
static void agree(tecs_world_t *w, const tecs_handle_t *h, tecs_comp_t c, tecs_entity_t e,
                  const void *want)
{
    const void *got[1] = { (const void *)1 };
    CHECK(tecs_handle_get(h, e) == want);
    CHECK_ERR(tecs_get_many(w, c, &e, 1, got), TECS_OK);
    CHECK(got[0] == want);
}

static void agree_get(tecs_world_t *w, const tecs_handle_t *h, tecs_comp_t c, tecs_entity_t e)
{
    agree(w, h, c, e, tecs_get(w, e, c));
}

TEST(lookup_reads_what_get_reads)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    tecs_entity_t e[100];
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        if (i % 3 == 0)
            TECS_SET(w, e[i], vel, Velocity, { 1, 1 });
    }
    for (int i = 0; i < 100; i++) {
        const Position *p = TECS_HANDLE_GET(&h, e[i], Position);
        CHECK(p && p->x == (float)i);
        agree_get(w, &h, pos, e[i]);
    }
    /* no Position: NULL, and no error recorded */
    tecs_entity_t bare = tecs_new(w);
    TECS_SET(w, bare, vel, Velocity, { 1, 1 });
    tecs_get(w, e[0], 12345);
    CHECK_ERR(tecs_last_error(w), TECS_ENOCOMP);
    CHECK(tecs_handle_get(&h, bare) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_ENOCOMP);     /* left alone */
    agree(w, &h, pos, bare, NULL);
    /* a batch of all of them, in another order, with made-up ids */
    tecs_entity_t ids[104];
    const void *out[104];
    for (int i = 0; i < 100; i++)
        ids[i] = e[(i * 37) % 100];
    ids[100] = bare;
    ids[101] = 0;
    ids[102] = ((tecs_entity_t)7 << 32) | 5;             /* wrong generation */
    ids[103] = ((tecs_entity_t)1 << 32) | 0x7fffffff;    /* slot never used */
    CHECK_ERR(tecs_get_many(w, pos, ids, 104, out), TECS_OK);
    for (int i = 0; i < 104; i++) {
        CHECK(out[i] == tecs_get(w, ids[i], pos));
        CHECK(tecs_handle_get(&h, ids[i]) == out[i]);
    }
    CHECK_ERR(tecs_get_many(w, pos, NULL, 0, NULL), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

TEST(lookup_follows_new_archetypes_and_chunks)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);               /* small chunks: many of them */
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tags[6];
    for (int k = 0; k < 6; k++) {
        char name[8] = "T0";
        name[1] = (char)('0' + k);
        tags[k] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name });
    }
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);   /* before any of them */
    tecs_entity_t e[2000];
    for (int i = 0; i < 2000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 1 });
        for (int k = 0; k < 6; k++)                     /* 64 archetypes, made as met */
            if (i >> k & 1)
                tecs_add(w, e[i], tags[k]);
        if (i % 97 == 0)                                /* chunks grow meanwhile */
            for (int j = 0; j <= i; j++)
                agree_get(w, &h, pos, e[j]);
    }
    for (int i = 0; i < 2000; i++) {
        const Position *p = TECS_HANDLE_GET(&h, e[i], Position);
        CHECK(p && p->x == (float)i);
    }
    /* a copy of the handle is as good, and so is a second handle */
    tecs_handle_t h2 = h, h3;
    CHECK_ERR(tecs_handle_init(w, pos, &h3), TECS_OK);
    for (int i = 0; i < 2000; i += 7) {
        CHECK(tecs_handle_get(&h2, e[i]) == tecs_get(w, e[i], pos));
        CHECK(tecs_handle_get(&h3, e[i]) == tecs_get(w, e[i], pos));
    }
    /* chunks freed as the world shrinks: rows move, the handle follows */
    for (int i = 0; i < 2000; i++)
        if (i % 5)
            tecs_destroy(w, e[i]);
    for (int i = 0; i < 2000; i++) {
        agree_get(w, &h, pos, e[i]);
        CHECK((tecs_handle_get(&h, e[i]) != NULL) == (i % 5 == 0));
    }
    TW_CHECK(w);
    tw_free(w);
}

TEST(lookup_dead_recycled_removed_and_reset)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_handle_t h, hv;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    CHECK_ERR(tecs_handle_init(w, vel, &hv), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 1, 2 });
    TECS_SET(w, e, vel, Velocity, { 3, 4 });
    CHECK(TECS_HANDLE_GET(&hv, e, Velocity)->y == 4);
    /* the component removed: the entity moved, Position still read */
    CHECK_ERR(tecs_remove(w, e, vel), TECS_OK);
    agree(w, &hv, vel, e, NULL);
    CHECK(TECS_HANDLE_GET(&h, e, Position)->y == 2);
    agree_get(w, &h, pos, e);
    /* destroyed, then its slot recycled: the old id reads nothing */
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    agree(w, &h, pos, e, NULL);
    tecs_entity_t r = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(r), TECS_ENTITY_INDEX(e));
    agree(w, &h, pos, e, NULL);
    agree(w, &h, pos, r, NULL);
    TECS_SET(w, r, pos, Position, { 5, 6 });
    agree(w, &h, pos, e, NULL);
    CHECK(TECS_HANDLE_GET(&h, r, Position)->x == 5);
    /* the dead slot's own generation, made up: still nothing */
    tecs_entity_t d = tecs_new(w);
    tecs_destroy(w, d);
    agree(w, &h, pos, ((tecs_entity_t)TECS_ENTITY_GENERATION(d) + 1) << 32 |
                          TECS_ENTITY_INDEX(d), NULL);
    /* pending: an id handed out while deferred is not alive yet */
    tecs_defer_begin(w);
    tecs_entity_t p = tecs_new(w);
    agree(w, &h, pos, p, NULL);
    tecs_defer_end(w);
    /* reset: every id dead, chunks gone, archetypes kept; the handle lives on */
    tecs_entity_t many[300];
    for (int i = 0; i < 300; i++) {
        many[i] = tecs_new(w);
        TECS_SET(w, many[i], pos, Position, { (float)i, 0 });
    }
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    for (int i = 0; i < 300; i++)
        agree(w, &h, pos, many[i], NULL);
    agree(w, &h, pos, r, NULL);
    for (int i = 0; i < 300; i++) {
        many[i] = tecs_new(w);
        TECS_SET(w, many[i], pos, Position, { (float)i, 7 });
    }
    for (int i = 0; i < 300; i++) {
        CHECK(TECS_HANDLE_GET(&h, many[i], Position)->x == (float)i);
        agree_get(w, &h, pos, many[i]);
    }
    TW_CHECK(w);
    tw_free(w);
}

TEST(lookup_enableable_disabled_is_still_read)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Tog", .size = sizeof(Health), .align = _Alignof(Health), .enableable = true });
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, t, &h), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, t, Health, { 9 });
    CHECK_ERR(tecs_enable(w, e, t, false), TECS_OK);
    CHECK(TECS_HANDLE_GET(&h, e, Health)->hp == 9);           /* as tecs_get */
    agree_get(w, &h, t, e);
    tw_free(w);
}

TEST(lookup_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    tecs_comp_t sp = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Sp", .size = sizeof(Health), .align = _Alignof(Health),
        .storage = TECS_STORAGE_SPARSE });
    tecs_comp_t stag = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "STag", .storage = TECS_STORAGE_SPARSE });
    tecs_handle_t h;
    long blocks = 0;
    CHECK_ERR(tecs_handle_init(NULL, pos, &h), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, pos, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_handle_init(w, 0, &h), TECS_ENOCOMP);
    CHECK_ERR(tecs_handle_init(w, 4000, &h), TECS_ENOCOMP);
    /* A tag has no value: a handle of it reads NULL, and adds and removes. */
    tecs_entity_t t = tecs_new(w);
    CHECK_ERR(tecs_handle_init(w, tag, &h), TECS_OK);
    CHECK_ERR(tecs_handle_add(&h, t), TECS_OK);
    CHECK(tecs_has(w, t, tag) && tecs_handle_get(&h, t) == NULL);
    CHECK_ERR(tecs_handle_remove(&h, t), TECS_OK);
    CHECK_ERR(tecs_handle_init(w, stag, &h), TECS_OK);       /* a sparse tag */
    CHECK_ERR(tecs_handle_add(&h, t), TECS_OK);
    CHECK(tecs_has(w, t, stag) && tecs_handle_get(&h, t) == NULL);
    CHECK_ERR(tecs_handle_remove(&h, t), TECS_OK);
    CHECK(!tecs_has(w, t, stag));
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);         /* a sparse value */
    (void)blocks;
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 1, 2 });
    const void *out[2] = { NULL, NULL };
    tecs_entity_t ids[2] = { e, 0 };
    CHECK_ERR(tecs_get_many(NULL, pos, ids, 2, out), TECS_EINVAL);
    CHECK_ERR(tecs_get_many(w, pos, NULL, 2, out), TECS_EINVAL);
    CHECK_ERR(tecs_get_many(w, pos, ids, 2, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_get_many(w, pos, ids, -1, out), TECS_EINVAL);
    CHECK_ERR(tecs_get_many(w, 999, ids, 2, out), TECS_ENOCOMP);
    CHECK_ERR(tecs_get_many(w, tag, ids, 2, out), TECS_EINVAL);
    CHECK_ERR(tecs_get_many(w, stag, ids, 2, out), TECS_EINVAL);
    CHECK(out[0] == NULL && out[1] == NULL);            /* a refused call wrote nothing */
    CHECK_ERR(tecs_get_many(w, pos, ids, 2, out), TECS_OK);
    CHECK(out[0] == tecs_get(w, e, pos) && out[1] == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_OK);
    /* sparse components: get_many reads them */
    TECS_SET(w, e, sp, Health, { 42 });
    CHECK_ERR(tecs_get_many(w, sp, ids, 2, out), TECS_OK);
    CHECK(out[0] == tecs_get(w, e, sp) && ((const Health *)out[0])->hp == 42 && out[1] == NULL);
    tecs_destroy(w, e);
    CHECK_ERR(tecs_get_many(w, sp, ids, 2, out), TECS_OK);
    CHECK(out[0] == NULL);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- callbacks --------------------------------------------------------- */

typedef struct cb_state {
    tecs_handle_t h;
    tecs_comp_t pos, vel;
    int calls, ok;
    tecs_err_t init_err, many_err;
} cb_state;

/* An observer of Velocity's SET: reads the entity's Position three ways
** and makes a handle of its own. */
static void on_vel_set(const tecs_event_t *ev)
{
    cb_state *s = ev->ctx;
    tecs_handle_t mine;
    const void *many = NULL;
    s->calls++;
    s->init_err = tecs_handle_init(ev->world, s->pos, &mine);
    s->many_err = tecs_get_many(ev->world, s->pos, &ev->entity, 1, &many);
    const void *got = tecs_get(ev->world, ev->entity, s->pos);
    s->ok += got != NULL && tecs_handle_get(&s->h, ev->entity) == got && many == got &&
             (s->init_err || tecs_handle_get(&mine, ev->entity) == got);
}

/* A ctor hook of Velocity (rows in motion): reads through the handle. */
static cb_state *g_hook_state;
static void vel_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Velocity));
    cb_state *s = g_hook_state;
    if (s)
        s->calls++;
}

TEST(lookup_from_callbacks)
{
    tecs_world_t *w = tw_new();
    cb_state s = { 0 };
    s.pos = TECS_COMPONENT(w, Position);
    s.vel = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Velocity", .size = sizeof(Velocity), .align = _Alignof(Velocity),
        .ctor = vel_ctor });
    CHECK_ERR(tecs_handle_init(w, s.pos, &s.h), TECS_OK);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_SET, .comp = s.vel, .callback = on_vel_set, .ctx = &s }));
    g_hook_state = &s;
    for (int i = 0; i < 50; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, s.pos, Position, { (float)i, 0 });
        TECS_SET(w, e, s.vel, Velocity, { 1, 1 });      /* moves it to a new archetype */
    }
    g_hook_state = NULL;
    CHECK_EQ(s.calls, 100);
    CHECK_EQ(s.ok, 50);
    CHECK_ERR(s.init_err, TECS_OK);
    CHECK_ERR(s.many_err, TECS_OK);
    /* inside an iteration (deferred): reads allowed */
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = s.pos } }, .term_count = 1 });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int n = 0;
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++, n++) {
            tecs_handle_t in;
            CHECK_ERR(tecs_handle_init(w, s.pos, &in), TECS_OK);
            CHECK(tecs_handle_get(&in, it.entities[i]) == (const Position *)it.fields[0] + i);
            CHECK(tecs_handle_get(&s.h, it.entities[i]) == (const Position *)it.fields[0] + i);
        }
    CHECK_EQ(n, 50);
    tw_free(w);
}

/* ---- workers ----------------------------------------------------------- */

typedef struct par_state {
    tecs_comp_t pos, vel;
    tecs_handle_t h;            /* made before the run                      */
    const tecs_entity_t *others;
    atomic_long bad;
    atomic_int refused;
} par_state;

/* A parallel system over Velocity: reads other entities' Position through
** the shared handle, a handle of its own, and tecs_get_many. A handle of
** its own of a component its system does not read reads NULL. */
static void par_read(tecs_iter_t *it)
{
    par_state *s = it->ctx;
    tecs_handle_t mine;
    if (tecs_handle_init(it->world, s->pos, &mine) != TECS_OK) {
        atomic_fetch_add(&s->bad, 1);
        return;
    }
    for (int32_t i = 0; i < it->count; i++) {
        tecs_entity_t o = s->others[(it->entities[i] >> 1) % 64];
        const void *many = NULL;
        const void *via = tecs_handle_get(&s->h, o);
        tecs_err_t me = tecs_get_many(it->world, s->pos, &o, 1, &many);
        if (me == TECS_OK) {
            if (via == NULL || many != via || tecs_handle_get(&mine, o) != via ||
                tecs_get(it->world, o, s->pos) != via)
                atomic_fetch_add(&s->bad, 1);
        } else if (me == TECS_EACCESS && tecs_handle_get(&mine, o) == NULL) {
            atomic_fetch_add(&s->refused, 1);
        } else {
            atomic_fetch_add(&s->bad, 1);
        }
    }
}

TEST(lookup_from_workers)
{
    tecs_world_t *w = tw_new();
    static par_state s;
    memset(&s, 0, sizeof s);
    s.pos = TECS_COMPONENT(w, Position);
    s.vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t others[64];
    for (int i = 0; i < 64; i++) {
        others[i] = tecs_new(w);
        TECS_SET(w, others[i], s.pos, Position, { (float)i, 0 });
    }
    s.others = others;
    for (int i = 0; i < 4000; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, s.vel, Velocity, { 1, 1 });
    }
    CHECK_ERR(tecs_handle_init(w, s.pos, &s.h), TECS_OK);
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = s.vel, .access = TECS_READ } }, .term_count = 1 });
    /* declared: every read agrees */
    tecs_system_t sys = tecs_system_new(w, &(tecs_system_desc_t){
        .name = "reads", .query = q, .run = par_read, .ctx = &s, .parallel = true,
        .parallel_min = 1, .reads = (tecs_comp_t[]){ s.pos, 0 } });
    CHECK(sys != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&s.bad), 0);
    CHECK_EQ(atomic_load(&s.refused), 0);
    CHECK_ERR(tecs_system_free(w, sys), TECS_OK);
    /* not declared: get_many refused, the worker's own handle reads NULL */
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){
        .name = "undeclared", .query = q, .run = par_read, .ctx = &s, .parallel = true,
        .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&s.bad), 0);
    CHECK(atomic_load(&s.refused) > 0);
    tw_free(w);
}

/* Through a worker context: the first handle of a component is refused
** (making the world's table is a write), later ones read the world. */
static void par_first_handle(tecs_iter_t *it)
{
    par_state *s = it->ctx;
    tecs_handle_t mine;
    tecs_err_t err = tecs_handle_init(it->world, s->vel, &mine);
    if (err == TECS_EBUSY) {
        atomic_fetch_add(&s->refused, 1);
        return;
    }
    if (err != TECS_OK) {
        atomic_fetch_add(&s->bad, 1);
        return;
    }
    for (int32_t i = 0; i < it->count; i++)
        if (tecs_handle_get(&mine, it->entities[i]) != (const Velocity *)tecs_field(it, 0) + i)
            atomic_fetch_add(&s->bad, 1);
}

TEST(lookup_first_handle_not_in_a_worker)
{
    tecs_world_t *w = tw_new();
    static par_state s;
    memset(&s, 0, sizeof s);
    s.vel = TECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 3000; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, s.vel, Velocity, { (float)i, 1 });
    }
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = s.vel, .access = TECS_READ } }, .term_count = 1 });
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){
        .name = "first", .query = q, .run = par_first_handle, .ctx = &s, .parallel = true,
        .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK(atomic_load(&s.refused) > 0);
    CHECK_EQ(atomic_load(&s.bad), 0);
    atomic_store(&s.refused, 0);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, s.vel, &h), TECS_OK);     /* now the table exists */
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&s.refused), 0);
    CHECK_EQ(atomic_load(&s.bad), 0);
    tw_free(w);
}

/* ---- out of memory ----------------------------------------------------- */

TEST(lookup_out_of_memory)
{
    for (long k = 1;; k++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 16);
        CHECK(w != NULL);
        tecs_comp_t pos = TECS_COMPONENT(w, Position);
        tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "T" });
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, pos, Position, { 3, 4 });
        a.calls = 0;
        a.fail_at = k;
        tecs_handle_t h;
        tecs_err_t err = tecs_handle_init(w, pos, &h);
        CHECK(err == TECS_OK || err == TECS_ENOMEM);
        bool failed = a.failures > 0;
        if (err == TECS_OK) {
            CHECK(TECS_HANDLE_GET(&h, e, Position)->y == 4);
            tecs_entity_t f = tecs_new(w);               /* a new archetype */
            tecs_add(w, f, tag);
            if (tecs_set(w, f, pos, &(Position){ 5, 6 }) == TECS_OK)
                CHECK(TECS_HANDLE_GET(&h, f, Position)->x == 5);
            else
                CHECK(tecs_handle_get(&h, f) == tecs_get(w, f, pos));
            CHECK(tecs_handle_get(&h, e) == tecs_get(w, e, pos));
        } else {
            CHECK_ERR(tecs_last_error(w), TECS_ENOMEM);
        }
        a.fail_at = 0;
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}

/* ---- the hot archetype ------------------------------------------------- */

TEST(lookup_hot_archetype_follows_groups_and_moves)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "T" });
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);        /* no archetype yet */
    tecs_comp_t pv[2] = { pos, vel };
    tecs_archetype_t *arch = tecs_archetype_get(w, 2, pv);
    /* made in bulk: one group of chunks, read on the short path */
    enum { N = 1000 };
    static Position ps[N];
    static Velocity vs[N];
    static tecs_entity_t e[N];
    for (int i = 0; i < N; i++)
        ps[i] = (Position){ (float)i, 1 };
    tecs_value_t vals[] = { { pos, ps }, { vel, vs } };
    CHECK_ERR(tecs_new_bulk(w, arch, N, e, 2, vals), TECS_OK);
    for (int i = 0; i < N; i++) {
        CHECK(TECS_HANDLE_GET(&h, e[i], Position)->x == (float)i);
        agree_get(w, &h, pos, e[i]);
    }
    TW_CHECK(w);
    /* rows past the group: chunks of their own, through the chunk table */
    tecs_entity_t more[100];
    for (int i = 0; i < 100; i++) {
        more[i] = tecs_new(w);
        TECS_SET(w, more[i], pos, Position, { (float)(N + i), 2 });
        TECS_SET(w, more[i], vel, Velocity, { 0, 0 });
    }
    for (int i = 0; i < 100; i++)
        CHECK(TECS_HANDLE_GET(&h, more[i], Position)->x == (float)(N + i));
    /* most of them leave: groups freed, the straddling one shrunk (rows
    ** move); the rest move to a bigger archetype, which takes the hot place */
    for (int i = 0; i < N; i++)
        if (i % 10)
            tecs_destroy(w, e[i]);
    TW_CHECK(w);
    for (int i = 0; i < N; i++)
        agree_get(w, &h, pos, e[i]);
    for (int i = 0; i < 100; i++)
        agree_get(w, &h, pos, more[i]);
    tecs_entity_t big[3000];
    for (int i = 0; i < 3000; i++) {
        big[i] = tecs_new(w);
        tecs_add(w, big[i], tag);
        TECS_SET(w, big[i], pos, Position, { (float)i, 3 });
    }
    TW_CHECK(w);
    for (int i = 0; i < 3000; i++)
        CHECK(TECS_HANDLE_GET(&h, big[i], Position)->x == (float)i);
    for (int i = 0; i < N; i += 10)
        CHECK(TECS_HANDLE_GET(&h, e[i], Position)->x == (float)i);
    /* a reserve: one group for what follows, then a reset */
    CHECK_ERR(tecs_archetype_reserve(w, arch, 5000), TECS_OK);
    TW_CHECK(w);
    for (int i = 0; i < 100; i++)
        agree_get(w, &h, pos, more[i]);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    TW_CHECK(w);
    for (int i = 0; i < 3000; i += 3)
        agree(w, &h, pos, big[i], NULL);
    CHECK_ERR(tecs_new_bulk(w, arch, N, e, 2, vals), TECS_OK);
    for (int i = 0; i < N; i++)
        CHECK(TECS_HANDLE_GET(&h, e[i], Position)->x == (float)i);
    TW_CHECK(w);
    tw_free(w);
}

/* The guess by slot (an id's row taken as its slot less row 0's, checked
** against its slot): ids of the hot archetype made in order, then churn
** that breaks the guess in every way: row 0 replaced, slots recycled into
** the archetype at other rows, entities moved out and back, rows swapped
** into holes, groups shrunk. Every id ever made agrees with tecs_get after
** each step, stale ones NULL. */
TEST(lookup_guess_by_slot_never_misleads)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "T" });
    tecs_archetype_t *arch = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    enum { N = 200, MAX = 2000 };
    static Position ps[N];
    static tecs_entity_t ids[MAX];
    for (int i = 0; i < N; i++)
        ps[i] = (Position){ (float)i, 0 };
    CHECK_ERR(tecs_new_bulk(w, arch, N, ids, 1, (tecs_value_t[]){ { pos, ps } }), TECS_OK);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, pos, &h), TECS_OK);
    int n = N;
    for (int i = 0; i < N; i++)
        CHECK(TECS_HANDLE_GET(&h, ids[i], Position)->x == (float)i);
    uint64_t rng = 7;
    for (int step = 0; step < 600; step++) {
        tecs_entity_t e = ids[tw_rand(&rng) % (uint64_t)n];
        switch (tw_rand(&rng) % 4) {
        case 0:             /* a hole, filled by the last row */
            tecs_destroy(w, e);
            break;
        case 1:             /* a slot, maybe recycled, at the archetype's end */
            if (n < MAX) {
                ids[n] = tecs_new(w);
                TECS_SET(w, ids[n], pos, Position, { (float)n, 1 });
                TECS_SET(w, ids[n], vel, Velocity, { 0, 0 });
                n++;
            }
            break;
        case 2:             /* out to another archetype, and maybe back */
            if (tecs_is_alive(w, e) && !tecs_has(w, e, tag))
                tecs_add(w, e, tag);
            else if (tecs_is_alive(w, e))
                tecs_remove(w, e, tag);
            break;
        default:            /* row 0 leaves: every guess shifts */
            if (tecs_archetype_entity_count(arch) > 0) {
                tecs_entity_t first;
                CHECK(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .archetype = arch) }, &first, 1) >= 1);
                CHECK_ERR(tecs_add(w, first, tag), TECS_OK);
            }
            break;
        }
        for (int i = 0; i < n; i++)
            agree_get(w, &h, pos, ids[i]);
    }
    TW_CHECK(w);
    tw_free(w);
}

/* ---- sparse components ------------------------------------------------- */

static tecs_comp_t sparse_health(tecs_world_t *w, const char *name)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = sizeof(Health), .align = _Alignof(Health),
        .storage = TECS_STORAGE_SPARSE });
}

TEST(lookup_sparse_reads_what_get_reads)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 16);
    tecs_comp_t sp = sparse_health(w, "Sp");
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, sp, &h), TECS_OK);         /* before any member */
    TW_CHECK(w);
    /* enough slots for several pages; every third entity a member */
    enum { N = 10000 };
    static tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        if (i % 2)
            TECS_SET(w, e[i], pos, Position, { 0, 0 });
        if (i % 3 == 0)
            TECS_SET(w, e[i], sp, Health, { i });
    }
    for (int i = 0; i < N; i++) {
        const Health *v = TECS_HANDLE_GET(&h, e[i], Health);
        CHECK((v != NULL) == (i % 3 == 0));
        if (v)
            CHECK_EQ(v->hp, i);
        agree_get(w, &h, sp, e[i]);
    }
    /* a batch, with made-up ids: 0, a wrong generation, generation 0, far */
    tecs_entity_t ids[8] = { e[3], e[4], 0, e[9] + ((tecs_entity_t)5 << 32),
                             TECS_ENTITY_INDEX(e[6]), ((tecs_entity_t)1 << 32) | 0x7fffffff,
                             e[N - 1], e[N - 3] };
    const void *out[8];
    CHECK_ERR(tecs_get_many(w, sp, ids, 8, out), TECS_OK);
    for (int k = 0; k < 8; k++) {
        CHECK(out[k] == tecs_get(w, ids[k], sp));
        CHECK(tecs_handle_get(&h, ids[k]) == out[k]);
    }
    CHECK(out[0] != NULL && out[1] == NULL && out[2] == NULL && out[3] == NULL && out[4] == NULL);
    /* removed, added back, moved between archetypes: the address holds
    ** while it is a member */
    const Health *v3 = TECS_HANDLE_GET(&h, e[3], Health);
    TECS_SET(w, e[3], pos, Position, { 1, 1 });
    CHECK(TECS_HANDLE_GET(&h, e[3], Health) == v3);
    CHECK_ERR(tecs_remove(w, e[3], sp), TECS_OK);
    agree(w, &h, sp, e[3], NULL);
    TECS_SET(w, e[3], sp, Health, { 33 });
    CHECK(TECS_HANDLE_GET(&h, e[3], Health)->hp == 33);
    /* destroyed and recycled: the old id reads nothing, the new one its own */
    CHECK_ERR(tecs_destroy(w, e[6]), TECS_OK);
    agree(w, &h, sp, e[6], NULL);
    tecs_entity_t r = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(r), TECS_ENTITY_INDEX(e[6]));
    agree(w, &h, sp, r, NULL);
    TECS_SET(w, r, sp, Health, { 66 });
    agree(w, &h, sp, e[6], NULL);
    CHECK(TECS_HANDLE_GET(&h, r, Health)->hp == 66);
    /* a page emptied and freed: its slots read nothing, then a new page */
    for (int i = 0; i < N; i += 3)
        if (i != 6)
            CHECK_ERR(tecs_remove(w, e[i], sp), TECS_OK);
    CHECK_ERR(tecs_remove(w, r, sp), TECS_OK);
    TW_CHECK(w);
    for (int i = 0; i < N; i++)
        agree(w, &h, sp, e[i], NULL);
    TECS_SET(w, e[N - 1], sp, Health, { 7 });
    CHECK(TECS_HANDLE_GET(&h, e[N - 1], Health)->hp == 7);
    agree_get(w, &h, sp, e[N - 1]);
    /* a pending id: not alive, not a member */
    tecs_defer_begin(w);
    tecs_entity_t p = tecs_new(w);
    tecs_set(w, p, sp, &(Health){ 1 });
    agree(w, &h, sp, p, NULL);
    tecs_defer_end(w);
    CHECK(TECS_HANDLE_GET(&h, p, Health)->hp == 1);
    /* reset: the pages go, the set and the handle stay */
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    agree(w, &h, sp, e[N - 1], NULL);
    agree(w, &h, sp, p, NULL);
    tecs_entity_t f = tecs_new(w);
    TECS_SET(w, f, sp, Health, { 8 });
    CHECK(TECS_HANDLE_GET(&h, f, Health)->hp == 8);
    /* a second handle and a copy read the same */
    tecs_handle_t h2 = h, h3;
    CHECK_ERR(tecs_handle_init(w, sp, &h3), TECS_OK);
    CHECK(tecs_handle_get(&h2, f) == tecs_get(w, f, sp));
    CHECK(tecs_handle_get(&h3, f) == tecs_get(w, f, sp));
    TW_CHECK(w);
    tw_free(w);
}

/* An observer of a sparse component's SET: reads it through a handle made
** before, one made in the callback, and tecs_get_many. */
typedef struct sp_cb_state {
    tecs_handle_t h;
    tecs_comp_t sp;
    int calls, ok;
} sp_cb_state;

static void on_sparse_set(const tecs_event_t *ev)
{
    sp_cb_state *s = ev->ctx;
    tecs_handle_t mine;
    const void *many = NULL;
    s->calls++;
    const void *got = tecs_get(ev->world, ev->entity, s->sp);
    if (tecs_handle_init(ev->world, s->sp, &mine) == TECS_OK &&
        tecs_get_many(ev->world, s->sp, &ev->entity, 1, &many) == TECS_OK && got != NULL &&
        tecs_handle_get(&mine, ev->entity) == got && tecs_handle_get(&s->h, ev->entity) == got &&
        many == got)
        s->ok++;
}

TEST(lookup_sparse_from_callbacks_and_workers)
{
    tecs_world_t *w = tw_new();
    sp_cb_state s = { .sp = sparse_health(w, "Sp") };
    CHECK_ERR(tecs_handle_init(w, s.sp, &s.h), TECS_OK);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_SET, .comp = s.sp, .callback = on_sparse_set, .ctx = &s }));
    tecs_entity_t e[20];
    for (int i = 0; i < 20; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], s.sp, Health, { i });
    }
    CHECK_EQ(s.calls, 20);
    CHECK_EQ(s.ok, 20);
    /* deferred (inside a deferred section): reads allowed, values now */
    tecs_defer_begin(w);
    for (int i = 0; i < 20; i++)
        CHECK(TECS_HANDLE_GET(&s.h, e[i], Health)->hp == i);
    tecs_defer_end(w);
    tw_free(w);
}

/* A parallel system over Velocity reads a sparse component through a
** handle of its own: refused while the component has no set (a worker
** makes none), read once it has one. */
static void par_sparse(tecs_iter_t *it)
{
    par_state *s = it->ctx;
    tecs_handle_t mine;
    tecs_err_t err = tecs_handle_init(it->world, s->pos, &mine);
    if (err == TECS_EBUSY) {
        atomic_fetch_add(&s->refused, 1);
        return;
    }
    if (err != TECS_OK) {
        atomic_fetch_add(&s->bad, 1);
        return;
    }
    for (int32_t i = 0; i < it->count; i++) {
        const Health *v = tecs_handle_get(&mine, it->entities[i]);
        if (v == NULL || v->hp != (int)((const Velocity *)tecs_field(it, 0))[i].x)
            atomic_fetch_add(&s->bad, 1);
    }
}

TEST(lookup_sparse_first_handle_not_in_a_worker)
{
    tecs_world_t *w = tw_new();
    static par_state s;
    memset(&s, 0, sizeof s);
    s.vel = TECS_COMPONENT(w, Velocity);
    s.pos = sparse_health(w, "Sp");                         /* the sparse one */
    static tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], s.vel, Velocity, { (float)i, 1 });
    }
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = s.vel, .access = TECS_READ } }, .term_count = 1 });
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){
        .name = "sparse", .query = q, .run = par_sparse, .ctx = &s, .parallel = true,
        .parallel_min = 1, .reads = (tecs_comp_t[]){ s.pos, 0 } }) != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK(atomic_load(&s.refused) > 0);
    CHECK_EQ(atomic_load(&s.bad), 0);
    atomic_store(&s.refused, 0);
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(w, s.pos, &h), TECS_OK);    /* now the set exists */
    for (int i = 0; i < 3000; i++)
        TECS_SET(w, e[i], s.pos, Health, { i });
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&s.refused), 0);
    CHECK_EQ(atomic_load(&s.bad), 0);
    tw_free(w);
}

TEST(lookup_sparse_first_handle_makes_the_set)
{
    for (long k = 1;; k++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 16);
        CHECK(w != NULL);
        tecs_comp_t sp = sparse_health(w, "Sp");
        tecs_entity_t e = tecs_new(w);
        a.calls = 0;
        a.fail_at = k;
        tecs_handle_t h;
        tecs_err_t err = tecs_handle_init(w, sp, &h);
        CHECK(err == TECS_OK || err == TECS_ENOMEM);
        bool failed = a.failures > 0;
        if (err == TECS_OK) {
            CHECK(tecs_handle_get(&h, e) == NULL);
            if (tecs_set(w, e, sp, &(Health){ 5 }) == TECS_OK)
                CHECK(TECS_HANDLE_GET(&h, e, Health)->hp == 5);
            CHECK(tecs_handle_get(&h, e) == tecs_get(w, e, sp));
        } else {
            CHECK_ERR(tecs_last_error(w), TECS_ENOMEM);
        }
        a.fail_at = 0;
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}
