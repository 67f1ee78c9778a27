/*
** Delta snapshots: a mirror loaded from a base snapshot and given each
** delta in turn is the source world, byte for byte (its snapshot is the
** source's); a delta's size follows what changed; a delta refuses a
** world that is not at its base; bad input, truncation and every failed
** allocation give a clear error and leave the mirror unchanged or empty,
** with nothing leaked; the callbacks cannot call the world.
*/
#include "hooks.h"

typedef struct Stun { float seconds; } Stun;

typedef struct dw {
    tecs_world_t *w;
    tw_alloc al;
    tecs_comp_t pos, vel, tag, vis, stun, flag, obj, clock;
    hook_counts h;
} dw;

/* Obj through a serializer: its value as 4 bytes (the same host). */
static tecs_err_t obj_save(const void *value, tecs_snapshot_out_t *out, void *ctx)
{
    (void)ctx;
    return tecs_snapshot_put(out, &((const Obj *)value)->value, 4);
}

static tecs_err_t obj_load(void *dst, const void *data, size_t n, void *ctx)
{
    hook_counts *h = ctx;
    if (n != 4)
        return TECS_EINVAL;
    Obj o = { OBJ_LIVE, 0 };
    memcpy(&o.value, data, 4);
    *(Obj *)dst = o;
    h->ctor++;
    return TECS_OK;
}

static void dw_new(dw *d, int32_t rows)
{
    memset(d, 0, sizeof *d);
    d->w = tw_new_ex(&d->al, rows);
    tecs_world_t *w = d->w;
    d->pos = TECS_COMPONENT(w, Position);
    d->vel = TECS_COMPONENT(w, Velocity);
    d->tag = TECS_TAG(w, Enemy);
    d->vis = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Visible", .size = sizeof(Health), .align = _Alignof(Health),
        .enableable = true });
    d->stun = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Stun", .size = sizeof(Stun), .align = _Alignof(Stun),
        .storage = TECS_STORAGE_SPARSE });
    d->flag = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Flag", .storage = TECS_STORAGE_SPARSE });
    d->clock = TECS_COMPONENT_NAMED(w, "Clock", Health);
    d->obj = obj_component(w, "Obj", &d->h);
    CHECK_ERR(tecs_component_serializer(w, d->obj, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = obj_load, .ctx = &d->h }), TECS_OK);
}

static void dw_free(dw *d)
{
    tw_free(d->w);
    CHECK_EQ(hooks_live(&d->h), 0);
    CHECK_EQ(d->h.bad, 0);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* n random changes of every kind to d's world. */
static void churn(dw *d, uint64_t *seed, int n)
{
    tecs_world_t *w = d->w;
    tecs_entity_t all[4096];
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    int32_t ne = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, 4096);
    tecs_query_free(q);
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = ne > 0 ? all[rnd(seed) % (uint32_t)ne] : 0;
        bool alive = e && tecs_is_alive(w, e);
        float f = (float)(rnd(seed) % 1000);
        switch (rnd(seed) % 14) {
        case 0: case 1:
            if (ne < 4096)
                all[ne++] = tecs_new(w);
            break;
        case 2:
            if (alive)
                tecs_destroy(w, e);
            break;
        case 3: case 4:
            if (alive)
                TECS_SET(w, e, d->pos, Position, {f, -f});
            break;
        case 5:
            if (alive)
                TECS_SET(w, e, d->vel, Velocity, {f, 1});
            break;
        case 6:
            if (alive)
                tecs_remove(w, e, rnd(seed) % 2 ? d->vel : d->pos);
            break;
        case 7:
            if (alive)
                rnd(seed) % 2 ? (void)tecs_add(w, e, d->tag) : (void)tecs_remove(w, e, d->tag);
            break;
        case 8:
            if (alive && tecs_has(w, e, d->vis))
                tecs_enable(w, e, d->vis, rnd(seed) % 2);
            else if (alive)
                TECS_SET(w, e, d->vis, Health, {(int)f});
            break;
        case 9:
            if (alive)
                rnd(seed) % 3 ? (void)TECS_SET(w, e, d->stun, Stun, {f})
                              : (void)tecs_remove(w, e, d->stun);
            break;
        case 10:
            if (alive)
                rnd(seed) % 2 ? (void)tecs_add(w, e, d->flag) : (void)tecs_remove(w, e, d->flag);
            break;
        case 11:
            if (alive)
                rnd(seed) % 3 ? (void)TECS_SET(w, e, d->obj, Obj, {OBJ_LIVE, (int)f})
                              : (void)tecs_remove(w, e, d->obj);
            break;
        case 12:
            if (rnd(seed) % 4)
                TECS_RESOURCE_SET(w, d->clock, Health, {(int)f});
            else
                tecs_resource_remove(w, d->clock);
            break;
        default:
            if (alive && tecs_has(w, e, d->pos))
                ((Position *)tecs_get_mut(w, e, d->pos))->x += 1;
            break;
        }
    }
}

/* The mirror's snapshot is the source's, byte for byte, and it passes the
** structure check. */
static void same_bytes(dw *src, dw *mirror)
{
    tecs_snapshot_buf_t a = { 0 }, b = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(src->w, &a), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(mirror->w, &b), TECS_OK);
    CHECK(a.size == b.size && memcmp(a.data, b.data, a.size) == 0);
    TW_CHECK(mirror->w);
    tecs_snapshot_buf_free(&a);
    tecs_snapshot_buf_free(&b);
}

/* A base for src in mirror (made with rows per chunk), the mark in *m. */
static void mirror_base(dw *src, dw *mirror, int32_t rows, tecs_mark_t *m)
{
    tecs_snapshot_buf_t base = { 0 };
    CHECK_ERR(tecs_world_mark(src->w, m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(src->w, &base), TECS_OK);
    dw_new(mirror, rows);
    CHECK_ERR(tecs_snapshot_load_mem(mirror->w, base.data, base.size), TECS_OK);
    tecs_snapshot_buf_free(&base);
}

TEST(delta_replicates)
{
    dw src, mirror;
    uint64_t seed = 7;
    tecs_mark_t m;
    dw_new(&src, 16);
    churn(&src, &seed, 300);
    mirror_base(&src, &mirror, 64, &m);
    same_bytes(&src, &mirror);
    tecs_snapshot_buf_t delta = { 0 };
    for (int round = 0; round < 60; round++) {
        churn(&src, &seed, round % 10 == 3 ? 0 : (int)(rnd(&seed) % 200));
        if (round == 20) {                  /* a component registered later */
            tecs_comp_t late = TECS_COMPONENT_NAMED(src.w, "Late", Health);
            TECS_SET(src.w, tecs_new(src.w), late, Health, {5});
        }
        if (round == 40)
            CHECK_ERR(tecs_world_reset(src.w), TECS_OK);
        CHECK_ERR(tecs_delta_save_mem(src.w, &m, &delta), TECS_OK);
        CHECK_ERR(tecs_delta_apply_mem(mirror.w, delta.data, delta.size), TECS_OK);
        same_bytes(&src, &mirror);
        CHECK_EQ(hooks_live(&mirror.h), hooks_live(&src.h));
    }
    for (int i = 0; i < 50; i++)            /* the same ids come next */
        CHECK_EQ(tecs_new(src.w), tecs_new(mirror.w));
    tecs_snapshot_buf_free(&delta);
    dw_free(&mirror);
    dw_free(&src);
}

/* A delta holds what changed: one value of 20,000 entities is a small
** part of the base; no change at all is smaller still. */
TEST(delta_size_follows_changes)
{
    dw src, mirror;
    tecs_mark_t m;
    tecs_snapshot_buf_t base = { 0 }, delta = { 0 };
    dw_new(&src, 0);
    tecs_entity_t e[20000];
    for (int i = 0; i < 20000; i++) {
        e[i] = tecs_new(src.w);
        TECS_SET(src.w, e[i], src.pos, Position, {(float)i, 0});
        TECS_SET(src.w, e[i], src.vel, Velocity, {1, 1});
    }
    CHECK_ERR(tecs_snapshot_save_mem(src.w, &base), TECS_OK);
    mirror_base(&src, &mirror, 0, &m);
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &delta), TECS_OK);
    size_t none = delta.size;
    CHECK(none < 1024);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, delta.data, delta.size), TECS_OK);
    TECS_SET(src.w, e[12345], src.pos, Position, {-1, -1});
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &delta), TECS_OK);
    CHECK(delta.size > none && delta.size < base.size / 20);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, delta.data, delta.size), TECS_OK);
    CHECK_EQ(((const Position *)tecs_get(mirror.w, e[12345], mirror.pos))->x, -1.0f);
    tecs_destroy(src.w, e[3]);              /* a swap-remove: two chunks at most */
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &delta), TECS_OK);
    CHECK(delta.size < base.size / 10);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, delta.data, delta.size), TECS_OK);
    same_bytes(&src, &mirror);
    tecs_snapshot_buf_free(&base);
    tecs_snapshot_buf_free(&delta);
    dw_free(&mirror);
    dw_free(&src);
}

/* A world that is not at the delta's base is refused and unchanged. */
TEST(delta_not_at_base)
{
    dw src, mirror;
    tecs_mark_t m, m0;
    uint64_t seed = 3;
    tecs_snapshot_buf_t d1 = { 0 }, d2 = { 0 };
    dw_new(&src, 0);
    churn(&src, &seed, 100);
    mirror_base(&src, &mirror, 0, &m);
    m0 = m;
    tecs_new(src.w);
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &d1), TECS_OK);
    tecs_new(src.w);
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &d2), TECS_OK);
    int32_t n = tecs_world_entity_count(mirror.w);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, d2.data, d2.size), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(mirror.w), "not where the delta starts") != NULL);
    CHECK_EQ(tecs_world_entity_count(mirror.w), n);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, d1.data, d1.size), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, d1.data, d1.size), TECS_EINVAL);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, d2.data, d2.size), TECS_OK);
    same_bytes(&src, &mirror);
    /* A mark of the past that moved on is not of this world's past any more
    ** once the world went elsewhere; a mark of another world neither. */
    tecs_mark_t bogus = m0;
    bogus.tick = UINT64_MAX;
    CHECK_ERR(tecs_delta_save_mem(src.w, &bogus, &d1), TECS_EINVAL);
    CHECK_EQ(d1.size, 0);
    CHECK_ERR(tecs_delta_save_mem(src.w, NULL, &d1), TECS_EINVAL);
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_world_mark(src.w, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_world_mark(NULL, &m), TECS_EINVAL);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, NULL, 4), TECS_EINVAL);
    CHECK_ERR(tecs_delta_apply(mirror.w, NULL, NULL), TECS_EINVAL);
    /* A snapshot is not a delta, nor a delta a snapshot. */
    tecs_snapshot_buf_t snap = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(src.w, &snap), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, snap.data, snap.size), TECS_EFORMAT);
    same_bytes(&src, &mirror);
    tecs_snapshot_buf_free(&snap);
    tecs_snapshot_buf_free(&d1);
    tecs_snapshot_buf_free(&d2);
    dw_free(&mirror);
    dw_free(&src);
}

/* A mark names its world: another world's mark and a zeroed one are
** refused, even where their counts would fit; a mark taken before a reset
** is of the world's past, and its delta carries the reset. */
TEST(delta_mark_of_another_world_or_zeroed)
{
    dw src, twin, mirror;
    uint64_t seed = 5, twin_seed = 5;
    tecs_mark_t m, other;
    dw_new(&src, 16);
    dw_new(&twin, 16);
    churn(&src, &seed, 100);
    churn(&twin, &twin_seed, 100);           /* the same history, counts alike */
    mirror_base(&src, &mirror, 16, &m);
    CHECK_ERR(tecs_world_mark(twin.w, &other), TECS_OK);
    tecs_snapshot_buf_t d = { 0 };
    CHECK_ERR(tecs_delta_save_mem(src.w, &other, &d), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(src.w), "another world") != NULL);
    CHECK_EQ(d.size, 0);
    tecs_mark_t zero;
    memset(&zero, 0, sizeof zero);
    CHECK_ERR(tecs_delta_save_mem(src.w, &zero, &d), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(src.w), "zeroed") != NULL);
    /* The refusals moved neither mark. */
    CHECK_ERR(tecs_delta_save_mem(twin.w, &other, &d), TECS_OK);
    churn(&src, &seed, 50);
    CHECK_ERR(tecs_world_reset(src.w), TECS_OK);
    churn(&src, &seed, 80);
    CHECK_ERR(tecs_delta_save_mem(src.w, &m, &d), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, d.data, d.size), TECS_OK);
    same_bytes(&src, &mirror);
    tecs_snapshot_buf_free(&d);
    dw_free(&mirror);
    dw_free(&twin);
    dw_free(&src);
}

/* A base and one delta of a churned world, for the failure cases. */
typedef struct fixture {
    dw src;
    tecs_snapshot_buf_t base, delta;
} fixture;

static void fixture_make(fixture *f)
{
    uint64_t seed = 11;
    tecs_mark_t m;
    dw_new(&f->src, 16);
    churn(&f->src, &seed, 200);
    memset(&f->base, 0, sizeof f->base);
    memset(&f->delta, 0, sizeof f->delta);
    CHECK_ERR(tecs_world_mark(f->src.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(f->src.w, &f->base), TECS_OK);
    churn(&f->src, &seed, 150);
    CHECK_ERR(tecs_delta_save_mem(f->src.w, &m, &f->delta), TECS_OK);
}

static void fixture_free(fixture *f)
{
    tecs_snapshot_buf_free(&f->base);
    tecs_snapshot_buf_free(&f->delta);
    dw_free(&f->src);
}

static void load_base(dw *mirror, const fixture *f, int32_t rows)
{
    dw_new(mirror, rows);
    CHECK_ERR(tecs_snapshot_load_mem(mirror->w, f->base.data, f->base.size), TECS_OK);
}

/* b holds a's entities with a's components, values and bits. */
static void same_entities(dw *a, dw *b)
{
    static tecs_entity_t ids[4096];
    tecs_query_t *q = tecs_query_all(a->w, 0, NULL);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, ids, 4096);
    tecs_query_free(q);
    CHECK_EQ(tecs_world_entity_count(a->w), tecs_world_entity_count(b->w));
    const tecs_comp_t ca[] = { a->pos, a->vel, a->tag, a->vis, a->stun, a->flag, a->obj };
    const tecs_comp_t cb[] = { b->pos, b->vel, b->tag, b->vis, b->stun, b->flag, b->obj };
    for (int32_t i = 0; i < n; i++) {
        CHECK(tecs_is_alive(b->w, ids[i]));
        for (int k = 0; k < 7; k++) {
            CHECK_EQ(tecs_has(a->w, ids[i], ca[k]), tecs_has(b->w, ids[i], cb[k]));
            size_t size = tecs_component_size(a->w, ca[k]);
            const void *va = size ? tecs_get(a->w, ids[i], ca[k]) : NULL;
            const void *vb = size ? tecs_get(b->w, ids[i], cb[k]) : NULL;
            CHECK(va == vb || (va && vb && memcmp(va, vb, size) == 0));
        }
        if (tecs_has(a->w, ids[i], a->vis))
            CHECK_EQ(tecs_is_enabled(a->w, ids[i], a->vis),
                     tecs_is_enabled(b->w, ids[i], b->vis));
    }
}

/* After a failed apply the mirror is unchanged (it holds the base's
** entities; components and archetypes the apply registered may stay) or
** empty, and passes the check; nothing leaks when it is freed. */
static void after_failure(dw *mirror, const fixture *f)
{
    TW_CHECK(mirror->w);
    if (tecs_world_entity_count(mirror->w) > 0) {
        dw base;
        load_base(&base, f, 0);
        same_entities(&base, mirror);
        dw_free(&base);
    } else {
        CHECK_EQ(tecs_resource_count(mirror->w), 0);
    }
    dw_free(mirror);
}

TEST(delta_truncated_and_corrupt)
{
    fixture f;
    fixture_make(&f);
    for (size_t cut = 0; cut < f.delta.size; cut += 1 + cut / 16) {
        dw mirror;
        load_base(&mirror, &f, 0);
        CHECK_ERR(tecs_delta_apply_mem(mirror.w, f.delta.data, cut), TECS_EFORMAT);
        after_failure(&mirror, &f);
    }
    for (size_t at = 0; at < f.delta.size; at += 1 + at / 8) {
        dw mirror;
        load_base(&mirror, &f, 0);
        f.delta.data[at] ^= 0x20;
        tecs_err_t err = tecs_delta_apply_mem(mirror.w, f.delta.data, f.delta.size);
        f.delta.data[at] ^= 0x20;
        CHECK(err == TECS_EFORMAT || err == TECS_EINVAL);
        after_failure(&mirror, &f);
    }
    /* Bytes after its end. */
    dw mirror;
    load_base(&mirror, &f, 0);
    unsigned char *more = malloc(f.delta.size + 1);
    memcpy(more, f.delta.data, f.delta.size);
    more[f.delta.size] = 0;
    CHECK_ERR(tecs_delta_apply_mem(mirror.w, more, f.delta.size + 1), TECS_EFORMAT);
    free(more);
    after_failure(&mirror, &f);
    fixture_free(&f);
}

TEST(delta_oom)
{
    fixture f;
    fixture_make(&f);
    bool done = false;
    for (long k = 1; !done && k < 10000; k++) {
        dw mirror;
        load_base(&mirror, &f, 64);
        mirror.al.fail_at = mirror.al.calls + k;
        tecs_err_t err = tecs_delta_apply_mem(mirror.w, f.delta.data, f.delta.size);
        mirror.al.fail_at = 0;
        if (err == TECS_OK) {
            done = true;
            same_bytes(&f.src, &mirror);
            dw_free(&mirror);
            continue;
        }
        CHECK_ERR(err, TECS_ENOMEM);
        after_failure(&mirror, &f);
    }
    CHECK(done);
    /* The save: every failure is TECS_ENOMEM and leaves the mark. */
    for (long k = 1; k < 40; k++) {
        tecs_mark_t m;
        tecs_snapshot_buf_t out = { 0 };
        dw a;
        dw_new(&a, 0);
        TECS_SET(a.w, tecs_new(a.w), a.pos, Position, {1, 2});
        CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
        TECS_SET(a.w, tecs_new(a.w), a.obj, Obj, {OBJ_LIVE, 3});
        tecs_mark_t was = m;
        a.al.fail_at = a.al.calls + k;
        tecs_err_t err = tecs_delta_save_mem(a.w, &m, &out);
        a.al.fail_at = 0;
        CHECK(err == TECS_OK || err == TECS_ENOMEM);
        if (err)
            CHECK(memcmp(&was, &m, sizeof m) == 0);
        tecs_snapshot_buf_free(&out);
        dw_free(&a);
    }
    fixture_free(&f);
}

/* ---- from callbacks ------------------------------------------------------ */

typedef struct cb_try {
    tecs_mark_t *m;
    tecs_snapshot_buf_t *buf;
    tecs_err_t mark, save, apply;
} cb_try;

static void try_all(tecs_world_t *w, cb_try *t)
{
    t->mark = tecs_world_mark(w, t->m);
    t->save = tecs_delta_save_mem(w, t->m, t->buf);
    t->apply = tecs_delta_apply_mem(w, "TECSDLTA", 8);
}

static void on_add(const tecs_event_t *ev)
{
    try_all(ev->world, ev->ctx);
}

static cb_try *sys_try;

static void sys_run(tecs_iter_t *it)
{
    try_all(it->world, sys_try);
}

static tecs_err_t writer_calls(void *ctx, const void *data, size_t n)
{
    (void)data, (void)n;
    tecs_world_t *w = ctx;
    return tecs_new(w) == 0 ? TECS_OK : TECS_EINVAL;
}

TEST(delta_from_callbacks)
{
    dw a;
    tecs_mark_t m;
    tecs_snapshot_buf_t buf = { 0 };
    dw_new(&a, 0);
    CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
    cb_try t = { .m = &m, .buf = &buf };
    CHECK(tecs_observer_new(a.w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD,
        .comp = a.pos, .callback = on_add, .ctx = &t }));
    TECS_SET(a.w, tecs_new(a.w), a.pos, Position, {1, 1});
    CHECK_ERR(t.mark, TECS_EBUSY);
    CHECK_ERR(t.save, TECS_EBUSY);
    CHECK_ERR(t.apply, TECS_EBUSY);
    /* In a system, and in an iteration. */
    tecs_query_t *q = tecs_query_all(a.w, 1, &a.pos);
    t = (cb_try){ .m = &m, .buf = &buf };
    sys_try = &t;
    CHECK(tecs_system_new(a.w, &(tecs_system_desc_t){ .name = "delta", .query = q,
                                                      .run = sys_run }));
    CHECK_ERR(tecs_progress(a.w, 0.016), TECS_OK);
    CHECK_ERR(t.mark, TECS_EBUSY);
    CHECK_ERR(t.save, TECS_EBUSY);
    CHECK_ERR(t.apply, TECS_EBUSY);
    t = (cb_try){ .m = &m, .buf = &buf };
    tecs_iter_t it = TECS_ITER(tecs_query_world(q), .query = q);
    CHECK(tecs_iter_next(&it));
    try_all(a.w, &t);
    CHECK_ERR(t.mark, TECS_EBUSY);
    CHECK_ERR(t.save, TECS_EBUSY);
    CHECK_ERR(t.apply, TECS_EBUSY);
    tecs_iter_fini(&it);
    /* Deferred. */
    tecs_defer_begin(a.w);
    try_all(a.w, &t);
    CHECK_ERR(t.mark, TECS_EBUSY);
    CHECK_ERR(t.save, TECS_EBUSY);
    tecs_defer_end(a.w);
    /* The writer may not call the world. */
    CHECK_ERR(tecs_delta_save(a.w, &m, writer_calls, a.w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(a.w), 1);
    tecs_snapshot_buf_free(&buf);
    dw_free(&a);
}

/* A mirror with an index and a cache made before the base: after each
** delta they hold what a fresh query and a scan say. */
TEST(delta_rebuilds_indexes_and_caches)
{
    dw src, mirror;
    uint64_t seed = 21;
    tecs_mark_t m;
    tecs_snapshot_buf_t base = { 0 }, delta = { 0 };
    static tecs_entity_t got[4096], want[4096];
    dw_new(&src, 0);
    churn(&src, &seed, 300);
    CHECK_ERR(tecs_world_mark(src.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(src.w, &base), TECS_OK);
    dw_new(&mirror, 0);
    tecs_index_t *ix = tecs_index_new(mirror.w, &(tecs_index_desc_t){
        .comp = mirror.pos, .type = TECS_KEY_FLOAT, .offset = offsetof(Position, x),
        .kind = TECS_INDEX_ORDERED });
    tecs_query_t *q = tecs_query_all(mirror.w, 1, &mirror.vel);
    tecs_cache_t *c = tecs_cache_new(mirror.w, &(tecs_cache_desc_t){ .query = q });
    CHECK(ix != NULL && c != NULL);
    CHECK_ERR(tecs_snapshot_load_mem(mirror.w, base.data, base.size), TECS_OK);
    for (int round = 0; round < 10; round++) {
        churn(&src, &seed, 150);
        CHECK_ERR(tecs_delta_save_mem(src.w, &m, &delta), TECS_OK);
        CHECK_ERR(tecs_delta_apply_mem(mirror.w, delta.data, delta.size), TECS_OK);
        same_bytes(&src, &mirror);
        tecs_query_t *p = tecs_query_all(mirror.w, 1, &mirror.pos);
        CHECK_EQ(tecs_index_count(ix), tecs_query_count(p));
        tecs_query_free(p);
        int32_t ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(mirror.w, .cache = c) }, got, 4096), nw = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, want, 4096);
        CHECK_EQ(ng, nw);
        for (int32_t i = 0; i < nw; i++) {      /* the same members, in any order */
            bool found = false;
            for (int32_t j = 0; j < ng && !found; j++)
                found = got[j] == want[i];
            CHECK(found);
        }
    }
    tecs_cache_free(c);
    tecs_query_free(q);
    tecs_index_free(ix);
    tecs_snapshot_buf_free(&base);
    tecs_snapshot_buf_free(&delta);
    dw_free(&mirror);
    dw_free(&src);
}
