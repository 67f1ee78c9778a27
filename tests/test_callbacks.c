/*
** test_callbacks.c — callbacks that call back into the world (rule R1 of
** tinyecs.h, "what may be called from where"): lifecycle hooks that change
** the world, frees refused inside callbacks, the world closed while it is
** freed and while its allocator runs, and the table itself, row by row.
*/
#include "test.h"

/* ---- lifecycle hooks that make structural changes --------------------- */

typedef struct busy_hooks {
    tecs_world_t *w;
    tecs_comp_t tag;
    tecs_entity_t victims[64];  /* destroyed one per move hook call         */
    int32_t nvictims, next_victim;
    tecs_entity_t spawned[1024];
    int32_t nspawned;
    tecs_entity_t tagged;       /* the last entity a dtor tagged            */
    int32_t nborn;              /* every birth queued, recorded or not      */
    long calls, not_deferred, bad;
} busy_hooks;

typedef struct Res { uint32_t magic; int32_t value; } Res;
#define RES_LIVE 0x5e5eu
#define RES_DEAD 0xdeadu

static void busy_enter(busy_hooks *b)
{
    b->calls++;
    b->not_deferred += !tecs_is_deferred(b->w);
}

/* Queue n births: enough of them grow the records while rows move. */
static void busy_spawn(busy_hooks *b, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(b->w);
        b->nborn += e != 0;
        if (e != 0 && b->nspawned < 1024)
            b->spawned[b->nspawned++] = e;
    }
}

static void busy_ctor(void *dst, int32_t n, void *ctx)
{
    busy_hooks *b = ctx;
    for (int32_t i = 0; i < n; i++)
        ((Res *)dst)[i] = (Res){ RES_LIVE, 0 };
    busy_enter(b);
    busy_spawn(b, 1);
}

static void busy_dtor(void *p, int32_t n, void *ctx)
{
    busy_hooks *b = ctx;
    for (int32_t i = 0; i < n; i++) {
        b->bad += ((Res *)p)[i].magic != RES_LIVE;
        ((Res *)p)[i].magic = RES_DEAD;
    }
    busy_enter(b);
    if (b->nspawned > 0 && tecs_add(b->w, b->spawned[b->nspawned - 1], b->tag) == TECS_OK)
        b->tagged = b->spawned[b->nspawned - 1];
}

static void busy_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    busy_hooks *b = ctx;
    for (int32_t i = 0; i < n; i++)
        ((Res *)dst)[i].value = ((const Res *)src)[i].value;
    busy_enter(b);
    busy_spawn(b, 1);
}

static void busy_move(void *dst, void *src, int32_t n, void *ctx)
{
    busy_hooks *b = ctx;
    for (int32_t i = 0; i < n; i++) {
        b->bad += ((Res *)src)[i].magic != RES_LIVE;
        ((Res *)dst)[i] = ((Res *)src)[i];
        ((Res *)src)[i].magic = RES_DEAD;
    }
    busy_enter(b);
    if (b->next_victim < b->nvictims)
        tecs_destroy(b->w, b->victims[b->next_victim++]);
    busy_spawn(b, 40);
}

static tecs_comp_t busy_component(tecs_world_t *w, busy_hooks *b)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Res", .size = sizeof(Res), .align = _Alignof(Res), .ctor = busy_ctor,
        .dtor = busy_dtor, .copy = busy_copy, .move = busy_move, .hook_ctx = b });
}

/* Hooks that create, destroy, add and remove while rows move: every hook
** runs deferred, so no record grows under a row move and no hole fill moves
** a row the hook destroyed. */
TEST(callbacks_lifecycle_hooks_change_the_world_safely)
{
    tecs_world_t *w = tw_new();
    busy_hooks b = { .w = w };
    tecs_comp_t res = busy_component(w, &b);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    b.tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    for (int32_t i = 0; i < 64; i++)
        b.victims[b.nvictims++] = tecs_new(w);
    tecs_entity_t ents[200];
    for (int32_t i = 0; i < 200; i++) {
        ents[i] = tecs_new(w);
        CHECK_ERR(tecs_add(w, ents[i], res), TECS_OK);      /* ctor: a birth   */
    }
    for (int32_t i = 0; i < 200; i += 2)                    /* dtor; hole fill */
        CHECK_ERR(tecs_remove(w, ents[i], res), TECS_OK);
    for (int32_t i = 1; i < 200; i += 2) {                  /* move: a kill    */
        CHECK_ERR(TECS_SET(w, ents[i], pos, Position, {1, 2}), TECS_OK);
        CHECK_ERR(tecs_set(w, ents[i], res, &(Res){ RES_LIVE, i }), TECS_OK);   /* copy */
    }
    for (int32_t i = 1; i < 20; i += 2)                     /* dtor, hole fill */
        CHECK_ERR(tecs_destroy(w, ents[i]), TECS_OK);
    CHECK(!tecs_is_deferred(w));
    CHECK(b.calls > 400);
    CHECK_EQ(b.not_deferred, 0);
    CHECK_EQ(b.bad, 0);
    CHECK_EQ(b.next_victim, 64);
    for (int32_t i = 0; i < 64; i++)
        CHECK(!tecs_is_alive(w, b.victims[i]));
    for (int32_t i = 0; i < b.nspawned; i++)                /* applied after   */
        CHECK(tecs_is_alive(w, b.spawned[i]));
    CHECK_EQ(tecs_world_entity_count(w), 64 - 64 + 200 - 10 + b.nborn);
    CHECK(b.tagged != 0 && tecs_has(w, b.tagged, b.tag));
    for (int32_t i = 21; i < 200; i += 2)
        CHECK_EQ(((const Res *)tecs_get(w, ents[i], res))->value, i);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(b.bad, 0);
}

/* Callbacks run during a move (an ENTER observer after an add, an on_remove
** hook before a remove from an archetype with hooks) that queue many
** births: the records grow meanwhile, and the move must not keep writing
** to the old ones (the sanitizer build sees it). */
static void spawn_many(const tecs_event_t *ev)
{
    int32_t *n = ev->ctx;
    for (int32_t i = 0; i < 3000; i++)
        *n += tecs_new(ev->world) != 0;
}

TEST(callbacks_births_queued_during_a_move)
{
    tecs_world_t *w = tw_new();
    busy_hooks b = { .w = w };
    tecs_comp_t res = busy_component(w, &b);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    int32_t born = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = (tecs_term_t[]){ { .comp = pos } }, .term_count = 1,
          .callback = spawn_many, .ctx = &born }));
    CHECK_ERR(tecs_component_hooks(w, vel, &(tecs_hooks_t){ .on_remove = spawn_many,
                                                            .ctx = &born }), TECS_OK);
    tecs_entity_t e = tecs_new(w), f = tecs_new(w);
    CHECK_ERR(tecs_add(w, f, res), TECS_OK);
    CHECK_ERR(tecs_add(w, f, vel), TECS_OK);
    CHECK_ERR(tecs_add(w, e, res), TECS_OK);
    CHECK_ERR(tecs_add(w, e, vel), TECS_OK);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);  /* ENTER */
    CHECK_ERR(tecs_remove(w, f, vel), TECS_OK);                 /* on_remove */
    CHECK_EQ(born, 6000);
    CHECK(tecs_has(w, e, pos) && tecs_has(w, e, vel) && !tecs_has(w, f, vel));
    CHECK(TECS_GET(w, e, pos, Position)->y == 2);
    CHECK_EQ(tecs_world_entity_count(w), 6000 + 2 + b.nborn);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(b.bad, 0);
}

static void free_from_system(tecs_iter_t *it);
static void free_from_observer(const tecs_event_t *ev);

/* Inside a lifecycle hook every object constructor (and the row
** reservation) is refused, with a message that says why. */
typedef struct obj_refusals {
    tecs_world_t *w;
    tecs_comp_t pos;
    tecs_query_t *q;
    bool armed;
    int refused, tried;
    char msg[160];
} obj_refusals;

static void count_refusal(obj_refusals *o, bool made)
{
    o->tried++;
    o->refused += !made && tecs_last_error(o->w) == TECS_EBUSY;
}

static void refusing_ctor(void *dst, int32_t n, void *ctx)
{
    memset(dst, 0, (size_t)n * sizeof(Position));
    obj_refusals *o = ctx;
    if (!o->armed)
        return;
    o->armed = false;
    tecs_world_t *w = o->w;
    count_refusal(o, tecs_component_new(w, &(tecs_component_desc_t){ .name = "Late",
                                                                 .size = 4 }) != 0);
    snprintf(o->msg, sizeof o->msg, "%s", tecs_last_error_msg(w));
    count_refusal(o, tecs_query_all(w, 1, &o->pos) != NULL);
    count_refusal(o, tecs_filter_new(w) != NULL);
    count_refusal(o, tecs_index_new(w, &(tecs_index_desc_t){
        .comp = o->pos, .type = TECS_KEY_FLOAT, .offset = offsetof(Position, x) }) != NULL);
    count_refusal(o, tecs_cache_new(w, &(tecs_cache_desc_t){ .query = o->q }) != NULL);
    count_refusal(o, tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = o->pos, .callback = free_from_observer }) != 0);
    count_refusal(o, tecs_system_new(w, &(tecs_system_desc_t){ .name = "late",
                                                           .run = free_from_system }) != 0);
    count_refusal(o, tecs_archetype_reserve(w, tecs_archetype_get(w, 1, &o->pos), 5000) ==
                         TECS_OK);
}

TEST(callbacks_lifecycle_hooks_refuse_objects)
{
    tecs_world_t *w = tw_new();
    obj_refusals o = { .w = w };
    o.pos = TECS_COMPONENT(w, Position);
    o.q = tecs_query_all(w, 1, &o.pos);
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Position), .align = _Alignof(Position),
        .ctor = refusing_ctor, .hook_ctx = &o });
    tecs_entity_t e = tecs_new(w);
    o.armed = true;
    CHECK_ERR(tecs_add(w, e, obj), TECS_OK);
    CHECK_EQ(o.tried, 8);
    CHECK_EQ(o.refused, 8);
    CHECK(strstr(o.msg, "lifecycle hook") != NULL);
    CHECK_EQ(tecs_world_component_count(w), 2);
    CHECK_EQ(tecs_observer_count(w), 0);
    CHECK_EQ(tecs_system_count(w), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- destructors run by tecs_world_free ------------------------------ */

typedef struct free_calls {
    tecs_world_t *w;
    tecs_comp_t pos;
    bool armed;
    int runs;
    void *filter, *index, *query;
    tecs_err_t progress, filter_err, index_err, query_err;
    char msg[160];
} free_calls;

static void free_calls_dtor(void *p, int32_t n, void *ctx)
{
    (void)p, (void)n;
    free_calls *f = ctx;
    if (!f->armed || f->runs++ > 0)
        return;
    tecs_world_t *w = f->w;
    f->filter = tecs_filter_new(w);
    f->filter_err = tecs_last_error(w);
    snprintf(f->msg, sizeof f->msg, "%s", tecs_last_error_msg(w));
    f->index = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = f->pos, .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x) });
    f->index_err = tecs_last_error(w);
    f->progress = tecs_progress(w, 0.1);
    f->query = tecs_query_all(w, 1, &f->pos);
    f->query_err = tecs_last_error(w);
}

/* A destructor run by tecs_world_free that calls the API: the world is
** closed while it is freed, so each call is refused and nothing leaks
** (tw_free checks). */
TEST(callbacks_world_free_refuses_calls_from_destructors)
{
    tecs_world_t *w = tw_new();
    free_calls f = { .w = w };
    f.pos = TECS_COMPONENT(w, Position);
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = 8, .align = 4, .dtor = free_calls_dtor, .hook_ctx = &f });
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, f.pos, Position, {1, 2}), TECS_OK);
    CHECK_ERR(tecs_add(w, e, obj), TECS_OK);
    CHECK(tecs_query_all(w, 1, &f.pos) != NULL);            /* freed with it */
    f.armed = true;
    tw_free(w);
    CHECK_EQ(f.runs, 1);
    CHECK(f.filter == NULL);
    CHECK_EQ(f.filter_err, TECS_EBUSY);
    CHECK(strstr(f.msg, "being freed") != NULL);
    CHECK(f.index == NULL);
    CHECK_EQ(f.index_err, TECS_EBUSY);
    CHECK_EQ(f.progress, TECS_EBUSY);
    CHECK(f.query == NULL);
    CHECK_EQ(f.query_err, TECS_EBUSY);
}

/* ---- tecs_world_free inside a callback ------------------------------- */

typedef struct free_inside {
    int runs;
    tecs_err_t err;
} free_inside;

static void free_from_system(tecs_iter_t *it)
{
    free_inside *f = it->ctx;
    f->runs++;
    f->err = tecs_world_free(it->world);
}

static void free_from_observer(const tecs_event_t *ev)
{
    free_inside *f = ev->ctx;
    f->runs++;
    f->err = tecs_world_free(ev->world);
}

/* tecs_world_free from a system or an observer would free the world under
** the running callback: it is refused (TECS_EBUSY), nothing is freed, and
** the world works on. */
TEST(callbacks_world_free_refused_inside_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    free_inside sys = { 0 }, obs = { 0 };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "free", .run = free_from_system,
                                                .ctx = &sys }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
                                                    .callback = free_from_observer,
                                                    .ctx = &obs }));
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(sys.runs, 1);
    CHECK_EQ(sys.err, TECS_EBUSY);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);
    CHECK_EQ(obs.runs, 1);
    CHECK_EQ(obs.err, TECS_EBUSY);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);               /* still a world */
    CHECK(tecs_new(w) != 0);
    CHECK_EQ(tecs_world_entity_count(w), 2);
    TW_CHECK(w);
    CHECK_ERR(tecs_world_free(NULL), TECS_OK);
    tw_free(w);
}

/* ---- the allocator --------------------------------------------------- */

typedef struct alloc_probe {
    tw_alloc base;
    tecs_world_t *w;
    bool armed;
    int runs;
    tecs_entity_t born;
    tecs_err_t new_err, free_err;
    char msg[160];
} alloc_probe;

static void *probing_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    alloc_probe *a = ud;
    if (a->armed && a->runs++ == 0) {          /* the first call probes */
        a->born = tecs_new(a->w);
        a->new_err = tecs_last_error(a->w);
        snprintf(a->msg, sizeof a->msg, "%s", tecs_last_error_msg(a->w));
        a->free_err = tecs_world_free(a->w);
    }
    return tw_alloc_fn(&a->base, ptr, osize, nsize);
}

/* A call from inside the world's allocator is refused: the structure that
** asked for memory is half changed. Once the allocator returns the world
** takes calls again. */
TEST(callbacks_allocator_refuses_calls)
{
    alloc_probe a = { 0 };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = probing_alloc,
                                                               .alloc_ud = &a });
    CHECK(w != NULL);
    a.w = w;
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    a.armed = true;
    CHECK_ERR(TECS_SET(w, e, pos, Position, {1, 2}), TECS_OK);   /* allocates */
    a.armed = false;
    CHECK(a.runs >= 1);
    CHECK_EQ(a.born, 0);
    CHECK_EQ(a.new_err, TECS_EBUSY);
    CHECK(strstr(a.msg, "allocator") != NULL);
    CHECK_EQ(a.free_err, TECS_EBUSY);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    CHECK(tecs_new(w) != 0);                                /* open again */
    TW_CHECK(w);
    CHECK_ERR(tecs_world_free(w), TECS_OK);
    CHECK_EQ(a.base.blocks, 0);
}

/* ---- the table, row by row ------------------------------------------- */

/* The callbacks the table names, each triggered below. */
typedef enum kind {
    K_CTOR, K_DTOR, K_COPY, K_MOVE,
    K_ON_ADD, K_ON_SET, K_ON_REMOVE,
    K_OBS_ADD, K_OBS_SET, K_OBS_REMOVE, K_OBS_ENTER, K_OBS_LEAVE,
    K_CACHE_ENTER, K_CACHE_LEAVE, K_ORDER,
    K_SYSTEM, K_EACH, K_WHERE_EACH, K_INIT, K_KILL, K_DELAYED_INIT,
    K_ALLOC, K_FREEING,
    K_COUNT
} kind;

/* The rows of the table these fall in. */
typedef enum row {
    ROW_HOOK,                   /* lifecycle hooks, order functions         */
    ROW_CALLBACK,               /* every other callback                     */
    ROW_CLOSED                  /* the allocator; callbacks of world free   */
} row;

static row row_of(kind k)
{
    if (k <= K_MOVE || k == K_ORDER)
        return ROW_HOOK;
    return k >= K_ALLOC ? ROW_CLOSED : ROW_CALLBACK;
}

typedef struct probe {
    tw_alloc base;
    tecs_world_t *w;
    tecs_comp_t pos, vel, obj, tag;
    tecs_entity_t target;       /* Position {1, 1}; the probe sets {2, 2}   */
    tecs_entity_t holder;       /* holds an Obj                             */
    kind k;
    bool armed;
    int runs;
    /* what the probe saw */
    bool deferred, born_alive, read_ok, made_filter;
    tecs_entity_t born;
    tecs_err_t new_err, set_err, filter_err, free_err, progress_err, apply_err;
    float seen_x;
} probe;

/* One call of each column, from inside callback kind k. */
static void probe_run(probe *p, kind k)
{
    if (!p->armed || p->k != k || p->runs++ > 0)   /* the first call probes */
        return;
    tecs_world_t *w = p->w;
    p->deferred = tecs_is_deferred(w);
    p->born = tecs_new(w);                                      /* structural */
    p->new_err = tecs_last_error(w);
    p->born_alive = p->born != 0 && tecs_is_alive(w, p->born);
    p->set_err = TECS_SET(w, p->target, p->pos, Position, {2, 2});   /* write */
    if (k != K_ALLOC) {                                         /* reads      */
        const Position *v = tecs_get(w, p->target, p->pos);
        p->seen_x = v ? v->x : -1;
        p->read_ok = v != NULL && tecs_has(w, p->target, p->pos) &&
                     tecs_is_alive(w, p->holder) && tecs_world_entity_count(w) >= 2;
    }
    tecs_filter_t *f = tecs_filter_new(w);                      /* an object  */
    p->filter_err = tecs_last_error(w);
    p->made_filter = f != NULL;
    tecs_filter_free(f);
    p->free_err = tecs_world_free(w);                           /* the world  */
    p->progress_err = tecs_progress(w, 0);
    p->apply_err = tecs_delayed_apply(w);
}

static void *probe_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    probe *p = ud;
    probe_run(p, K_ALLOC);
    return tw_alloc_fn(&p->base, ptr, osize, nsize);
}

static void p_ctor(void *dst, int32_t n, void *ctx)
{
    memset(dst, 0, (size_t)n * sizeof(Velocity));
    probe_run(ctx, K_CTOR);
}

static void p_dtor(void *ptr, int32_t n, void *ctx)
{
    (void)ptr, (void)n;
    probe_run(ctx, K_DTOR);
    probe_run(ctx, K_FREEING);
}

static void p_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    memcpy(dst, src, (size_t)n * sizeof(Velocity));
    probe_run(ctx, K_COPY);
}

static void p_move(void *dst, void *src, int32_t n, void *ctx)
{
    memcpy(dst, src, (size_t)n * sizeof(Velocity));
    probe_run(ctx, K_MOVE);
}

static void p_event(const tecs_event_t *ev)
{
    static const kind hook_kind[] = { [TECS_ON_ADD] = K_ON_ADD, [TECS_ON_SET] = K_ON_SET,
                                      [TECS_ON_REMOVE] = K_ON_REMOVE };
    probe *p = ev->ctx;
    probe_run(p, hook_kind[ev->kind]);
}

static void p_observer(const tecs_event_t *ev)
{
    probe *p = ev->ctx;
    kind k = ev->kind == TECS_ON_ADD ? K_OBS_ADD : ev->kind == TECS_ON_SET ? K_OBS_SET
             : ev->kind == TECS_ON_REMOVE ? K_OBS_REMOVE
             : ev->kind == TECS_ON_ENTER ? K_OBS_ENTER : K_OBS_LEAVE;
    probe_run(p, k);
}

static void p_member(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    probe *p = ctx;
    (void)e;
    probe_run(p, tecs_has(w, e, p->vel) ? K_CACHE_ENTER : K_CACHE_LEAVE);
}

static int p_order(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    (void)w;
    probe_run(ctx, K_ORDER);
    return a < b ? -1 : a > b;
}

static void p_system(tecs_iter_t *it)
{
    probe_run(it->ctx, K_SYSTEM);
}

static bool p_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    probe_run(ctx, K_EACH);
    return false;
}

static bool p_where_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    probe_run(ctx, K_WHERE_EACH);
    return false;
}

static void p_init(tecs_init_t *init, void *ctx)
{
    (void)init;
    probe_run(ctx, K_INIT);
}

static void p_delayed_init(tecs_init_t *init, void *ctx)
{
    (void)init;
    probe_run(ctx, K_DELAYED_INIT);
}

static void p_kill(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    probe_run(ctx, K_KILL);
}

/* A world for probing kind k: target and holder, the callbacks k needs. */
static tecs_world_t *probe_world(probe *p, kind k)
{
    *p = (probe){ .k = k };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = probe_alloc,
                                                               .alloc_ud = p });
    CHECK(w != NULL);
    p->w = w;
    p->pos = TECS_COMPONENT(w, Position);
    p->vel = TECS_COMPONENT(w, Velocity);
    p->tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    p->obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Velocity), .align = _Alignof(Velocity),
        .ctor = p_ctor, .dtor = p_dtor, .copy = p_copy, .move = p_move, .hook_ctx = p });
    p->target = tecs_new(w);
    CHECK_ERR(TECS_SET(w, p->target, p->pos, Position, {1, 1}), TECS_OK);
    p->holder = tecs_new(w);
    CHECK_ERR(tecs_add(w, p->holder, p->obj), TECS_OK);
    if (k >= K_ON_ADD && k <= K_ON_REMOVE)
        CHECK_ERR(tecs_component_hooks(w, p->vel, &(tecs_hooks_t){
                      .on_add = p_event, .on_set = p_event, .on_remove = p_event,
                      .ctx = p }), TECS_OK);
    static const tecs_event_kind_t obs_event[] = {
        [K_OBS_ADD] = TECS_ON_ADD, [K_OBS_SET] = TECS_ON_SET,
        [K_OBS_REMOVE] = TECS_ON_REMOVE, [K_OBS_ENTER] = TECS_ON_ENTER,
        [K_OBS_LEAVE] = TECS_ON_LEAVE };
    if (k >= K_OBS_ADD && k <= K_OBS_LEAVE) {
        bool member = k >= K_OBS_ENTER;
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
            .event = obs_event[k], .comp = member ? 0 : p->vel,
            .terms = member ? (tecs_term_t[]){ { .comp = p->vel } } : NULL,
            .term_count = member, .callback = p_observer, .ctx = p }));
    }
    return w;
}

/* Trigger callback kind k of the world (the outer call). */
static void probe_trigger(probe *p, tecs_query_t *q)
{
    tecs_world_t *w = p->w;
    tecs_entity_t h = p->holder;
    switch (p->k) {
    case K_CTOR: CHECK_ERR(tecs_remove(w, h, p->obj), TECS_OK);
                 p->armed = true;
                 CHECK_ERR(tecs_add(w, h, p->obj), TECS_OK);
                 break;
    case K_DTOR: p->armed = true; CHECK_ERR(tecs_remove(w, h, p->obj), TECS_OK); break;
    case K_COPY: p->armed = true;
                 CHECK_ERR(tecs_set(w, h, p->obj, &(Velocity){ 3, 3 }), TECS_OK);
                 break;
    case K_MOVE: p->armed = true; CHECK_ERR(tecs_add(w, h, p->tag), TECS_OK); break;
    case K_ON_ADD: case K_OBS_ADD: case K_OBS_ENTER: case K_CACHE_ENTER: case K_ORDER:
                 p->armed = true; CHECK_ERR(tecs_add(w, h, p->vel), TECS_OK); break;
    case K_ON_SET: case K_OBS_SET:
                 CHECK_ERR(tecs_add(w, h, p->vel), TECS_OK);
                 p->armed = true;
                 CHECK_ERR(TECS_SET(w, h, p->vel, Velocity, {5, 5}), TECS_OK);
                 break;
    case K_ON_REMOVE: case K_OBS_REMOVE: case K_OBS_LEAVE: case K_CACHE_LEAVE:
                 CHECK_ERR(tecs_add(w, h, p->vel), TECS_OK);
                 p->armed = true;
                 CHECK_ERR(tecs_remove(w, h, p->vel), TECS_OK);
                 break;
    case K_SYSTEM: p->armed = true; CHECK_ERR(tecs_progress(w, 0.1), TECS_OK); break;
    case K_EACH: p->armed = true; CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, p_each, p), TECS_OK); break;
    case K_WHERE_EACH: {
        tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = p->pos, .type = TECS_KEY_FLOAT, .offset = offsetof(Position, x) });
        tecs_filter_t *f = tecs_filter_new(w);
        CHECK(x != NULL && f != NULL);
        CHECK(tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(1)) >= 0);
        p->armed = true;
        CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, p_where_each, p), TECS_OK);
        tecs_filter_free(f);
        break;
    }
    case K_INIT: p->armed = true;
                 CHECK(tecs_new_with(w, tecs_archetype_get(w, 1, &p->pos), p_init, p) != 0);
                 break;
    case K_KILL: CHECK_ERR(tecs_delayed_destroy(w, tecs_new(w), p_kill, p), TECS_OK);
                 p->armed = true;
                 CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_OK);
                 break;
    case K_DELAYED_INIT:
                 CHECK(tecs_delayed_new_with(w, tecs_archetype_get(w, 1, &p->pos), p_delayed_init,
                                             p) != 0);
                 p->armed = true;
                 CHECK_ERR(tecs_delayed_apply_new(w), TECS_OK);
                 break;
    case K_ALLOC: p->armed = true;
                  CHECK_ERR(tecs_new_bulk(w, tecs_entity_archetype(w, p->target), 3000, NULL,
                                          0, NULL), TECS_OK);
                  break;
    case K_FREEING: p->armed = true; CHECK_ERR(tecs_world_free(w), TECS_OK); break;
    case K_COUNT: break;
    }
    p->armed = false;
}

/* What the probe of kind k saw and left, against the table's row. */
static void probe_verify(const probe *p, kind k)
{
    row r = row_of(k);
    if (p->runs < 1)
        fprintf(stderr, "  kind %d never ran\n", (int)k);
    CHECK(p->runs >= 1);
    CHECK_EQ(p->free_err, TECS_EBUSY);              /* world free, progress, apply */
    CHECK_EQ(p->progress_err, TECS_EBUSY);
    CHECK_EQ(p->apply_err, TECS_EBUSY);
    if (k != K_ALLOC)
        CHECK(p->read_ok);                          /* reads */
    if (r == ROW_CLOSED) {                          /* everything else refused */
        CHECK_EQ(p->born, 0);
        CHECK_EQ(p->new_err, TECS_EBUSY);
        CHECK_EQ(p->set_err, TECS_EBUSY);
        CHECK(!p->made_filter);
        CHECK_EQ(p->filter_err, TECS_EBUSY);
        if (k == K_FREEING)
            CHECK(p->seen_x == 1);
        return;
    }
    CHECK(p->deferred);
    CHECK(p->born != 0);                            /* structural: queued */
    CHECK_EQ(p->new_err, TECS_OK);
    CHECK(!p->born_alive);
    CHECK(tecs_is_alive(p->w, p->born));            /* applied after */
    CHECK_EQ(p->set_err, TECS_OK);                  /* writes */
    CHECK(p->seen_x == (r == ROW_HOOK ? 1 : 2));    /* hook: queued */
    CHECK(TECS_GET(p->w, p->target, p->pos, Position)->x == 2);
    CHECK_EQ(p->made_filter, r == ROW_CALLBACK);    /* objects: hooks refuse */
    CHECK_EQ(p->filter_err, r == ROW_HOOK ? TECS_EBUSY : TECS_OK);
}

TEST(callbacks_table_row_by_row)
{
    for (int k = 0; k < K_COUNT; k++) {
        probe p;
        tecs_world_t *w = probe_world(&p, (kind)k);
        tecs_query_t *q = tecs_query_all(w, 1, &p.pos);
        if (k == K_SYSTEM)
            CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "probe", .run = p_system,
                                                        .ctx = &p }));
        if (k == K_CACHE_ENTER || k == K_CACHE_LEAVE || k == K_ORDER) {
            tecs_query_t *qv = tecs_query_all(w, 1, &p.vel);
            tecs_entity_t other = tecs_new(w);      /* so that the order runs */
            CHECK_ERR(TECS_SET(w, other, p.vel, Velocity, {0, 0}), TECS_OK);
            CHECK(tecs_cache_new(w, &(tecs_cache_desc_t){
                .query = qv, .order = k == K_ORDER ? p_order : NULL,
                .on_enter = k == K_CACHE_ENTER ? p_member : NULL,
                .on_leave = k == K_CACHE_LEAVE ? p_member : NULL, .ctx = &p }));
        }
        probe_trigger(&p, q);
        if (k == K_FREEING) {
            probe_verify(&p, (kind)k);
            CHECK_EQ(p.base.blocks, 0);
            continue;
        }
        probe_verify(&p, (kind)k);
        if (k == K_ALLOC)
            CHECK(TECS_GET(w, p.target, p.pos, Position)->x == 1);
        TW_CHECK(w);
        CHECK_ERR(tecs_world_free(w), TECS_OK);
        CHECK_EQ(p.base.blocks, 0);
    }
}

/* An order function run while a cache is filled (tecs_cache_new, or the
** rebuild of a stale cache) queues its changes like any other: applied
** when the call that ran it returns. */
typedef struct order_births {
    int calls;
    bool deferred;
    tecs_entity_t born;
} order_births;

static int order_and_spawn(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    order_births *o = ctx;
    if (o->calls++ == 0) {
        o->deferred = tecs_is_deferred(w);
        o->born = tecs_new(w);
    }
    return a < b ? -1 : a > b;
}

TEST(callbacks_order_function_changes_apply_after_cache_new)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    for (int i = 0; i < 4; i++)
        CHECK_ERR(TECS_SET(w, tecs_new(w), pos, Position, {0, 0}), TECS_OK);
    order_births o = { 0 };
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    CHECK(tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .order = order_and_spawn,
                                                  .ctx = &o }) != NULL);
    CHECK(o.calls > 0);
    CHECK(o.deferred);
    CHECK(o.born != 0);
    CHECK(tecs_is_alive(w, o.born));
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

/* A copy hook run while a value is queued (tecs_delayed_new copies its
** values) queues its changes too; they apply when that call returns. */
typedef struct copy_births {
    tecs_world_t *w;
    tecs_entity_t born;
} copy_births;

static void copy_and_spawn(void *dst, const void *src, int32_t n, void *ctx)
{
    memcpy(dst, src, (size_t)n * sizeof(Position));
    copy_births *c = ctx;
    if (c->born == 0)
        c->born = tecs_new(c->w);
}

TEST(callbacks_copy_hook_changes_apply_after_delay_new)
{
    tecs_world_t *w = tw_new();
    copy_births ctx = { .w = w };
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Position), .align = _Alignof(Position),
        .copy = copy_and_spawn, .hook_ctx = &ctx });
    tecs_entity_t later = tecs_delayed_new(w, tecs_archetype_get(w, 1, &obj), 1,
                                           &(tecs_value_t){ obj, &(Position){ 1, 2 } });
    CHECK(later != 0);
    CHECK(ctx.born != 0);
    CHECK(tecs_is_alive(w, ctx.born));              /* applied at once after */
    CHECK(!tecs_is_alive(w, later));                /* waits for the apply */
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_OK);
    CHECK(tecs_is_alive(w, later));
    CHECK(TECS_GET(w, later, obj, Position)->y == 2);
    TW_CHECK(w);
    tw_free(w);
}

/* A copy hook that tags the entity whose value it copies (ctx). */
typedef struct copy_tags {
    tecs_world_t *w;
    tecs_entity_t e;
    tecs_comp_t tag;
    tecs_err_t err;
} copy_tags;

static void copy_and_tag(void *dst, const void *src, int32_t n, void *ctx)
{
    memcpy(dst, src, (size_t)n * sizeof(Position));
    copy_tags *c = ctx;
    if (c->e != 0)
        c->err = tecs_add(c->w, c->e, c->tag);
}

/* A tecs_set of a birth queued just before it, whose copy hook queues a
** change of the same entity: both apply, the hook's first (call order),
** none is lost. */
TEST(callbacks_copy_hook_change_of_a_queued_birth_applies)
{
    tecs_world_t *w = tw_new();
    copy_tags ctx = { .w = w, .tag = TECS_TAG(w, Tagged) };
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Position), .align = _Alignof(Position),
        .copy = copy_and_tag, .hook_ctx = &ctx });
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK_ERR(tecs_add(w, tecs_new(w), pos), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    ctx.e = tecs_new(w);                        /* queued */
    CHECK_ERR(tecs_set(w, ctx.e, obj, &(Position){ 3, 4 }), TECS_OK);
    CHECK_ERR(ctx.err, TECS_OK);
    tecs_entity_t e = ctx.e;
    ctx.e = 0;                                  /* later copies tag nothing */
    tecs_iter_fini(&it);
    CHECK(tecs_has(w, e, ctx.tag));
    CHECK(TECS_GET(w, e, obj, Position)->y == 4);
    CHECK_EQ(tecs_dropped_changes(w), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* An observer that makes an index on its component the first time it runs. */
typedef struct index_maker {
    tecs_comp_t comp;
    tecs_index_t *made;
} index_maker;

static void make_index(const tecs_event_t *ev)
{
    index_maker *m = ev->ctx;
    if (m->made == NULL)
        m->made = tecs_index_new(ev->world, &(tecs_index_desc_t){ .comp = m->comp,
                                                                  .type = TECS_KEY_I32 });
}

/* An index made by a LEAVE observer of a destroy, while the dying entity
** still has its row: the index does not take that entity, whose removal it
** cannot hear of any more. */
TEST(callbacks_index_made_while_an_entity_dies_skips_it)
{
    tecs_world_t *w = tw_new();
    index_maker m = { .comp = TECS_COMPONENT(w, Health) };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
              .event = TECS_ON_LEAVE, .terms = (const tecs_term_t[]){ { .comp = m.comp } },
              .term_count = 1, .callback = make_index, .ctx = &m }) != 0);
    tecs_entity_t keep = tecs_new(w), dies = tecs_new(w);
    CHECK_ERR(TECS_SET(w, keep, m.comp, Health, { 1 }), TECS_OK);
    CHECK_ERR(TECS_SET(w, dies, m.comp, Health, { 2 }), TECS_OK);
    CHECK_ERR(tecs_destroy(w, dies), TECS_OK);
    CHECK(m.made != NULL);
    CHECK_EQ(tecs_index_count(m.made), 1);
    TW_CHECK(w);
    CHECK_ERR(tecs_index_free(m.made), TECS_OK);
    tw_free(w);
}

/* A cache on_leave that makes a second cache over the same query. */
typedef struct cache_maker {
    tecs_query_t *q;
    tecs_cache_t *made;
} cache_maker;

static void make_cache(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)e;
    cache_maker *m = ctx;
    if (m->made == NULL)
        m->made = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = m->q });
}

/* A cache made by another cache's on_leave while an entity dies, its row
** still there: the new cache does not take the dying entity, whose death
** it cannot hear of any more. */
TEST(callbacks_cache_made_while_an_entity_dies_skips_it)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    cache_maker m = { .q = tecs_query_all(w, 1, &hp) };
    tecs_cache_t *first = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = m.q,
                                                                   .on_leave = make_cache,
                                                                   .ctx = &m });
    CHECK(first != NULL);
    tecs_entity_t keep = tecs_new(w), dies = tecs_new(w);
    CHECK_ERR(TECS_SET(w, keep, hp, Health, { 1 }), TECS_OK);
    CHECK_ERR(TECS_SET(w, dies, hp, Health, { 2 }), TECS_OK);
    CHECK_ERR(tecs_destroy(w, dies), TECS_OK);
    CHECK(m.made != NULL);
    CHECK_EQ(tecs_cache_count(m.made), 1);
    TW_CHECK(w);
    CHECK_ERR(tecs_cache_free(m.made), TECS_OK);
    CHECK_ERR(tecs_cache_free(first), TECS_OK);
    tw_free(w);
}
