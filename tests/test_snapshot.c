/*
** Snapshots: a world saved and loaded back is the same world (ids,
** generations, the free list's order, rows, values, bits, sparse members,
** resources); bad input of every kind fails with a clear error and leaves
** the world empty; so does every failed allocation of a load; the
** callbacks cannot call the world; a committed snapshot loads on every
** platform.
*/
#include "hooks.h"

typedef struct Stun { float seconds; } Stun;

typedef struct sw {
    tecs_world_t *w;
    tecs_comp_t pos, vel, tag, vis, stun, flag, obj, clock;
    hook_counts h;
} sw;

/* Obj through a serializer: its value as 4 little-endian bytes. */
static tecs_err_t obj_save(const void *value, tecs_snapshot_out_t *out, void *ctx)
{
    (void)ctx;
    const Obj *o = value;
    uint32_t v = (uint32_t)o->value;
    unsigned char b[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 24) };
    return tecs_snapshot_put(out, b, 4);
}

static int obj_fail_at = -1;                    /* deserialize fails at this call */

static tecs_err_t obj_load(void *dst, const void *data, size_t n, void *ctx)
{
    hook_counts *h = ctx;
    const unsigned char *b = data;
    if (n != 4 || obj_fail_at-- == 0)
        return TECS_EINVAL;
    *(Obj *)dst = (Obj){ OBJ_LIVE, (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 |
                                             (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24) };
    h->ctor++;
    return TECS_OK;
}

/* The components of a snapshot world, registered in w. */
static void sw_components(sw *s, bool with_obj)
{
    tecs_world_t *w = s->w;
    s->pos = TECS_COMPONENT(w, Position);
    s->vel = TECS_COMPONENT(w, Velocity);
    s->tag = TECS_TAG(w, Enemy);
    s->vis = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Visible", .size = sizeof(Health), .align = _Alignof(Health),
        .enableable = true });
    s->stun = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Stun", .size = sizeof(Stun), .align = _Alignof(Stun),
        .storage = TECS_STORAGE_SPARSE });
    s->flag = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Flag", .storage = TECS_STORAGE_SPARSE });
    s->clock = TECS_COMPONENT_NAMED(w, "Clock", Health);
    if (with_obj) {
        s->obj = obj_component(w, "Obj", &s->h);
        CHECK_ERR(tecs_component_serializer(w, s->obj, &(tecs_serializer_t){
            .serialize = obj_save, .deserialize = obj_load, .ctx = &s->h }), TECS_OK);
    }
}

/* A world with a bit of everything: several archetypes, dead slots, a
** disabled bit, sparse members, a resource. */
static void sw_fill(sw *s, int n, bool with_obj)
{
    tecs_world_t *w = s->w;
    tecs_entity_t ids[512];
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = ids[i] = tecs_new(w);
        TECS_SET(w, e, s->pos, Position, {(float)i, (float)-i});
        if (i % 2)
            TECS_SET(w, e, s->vel, Velocity, {0.5f * (float)i, 1});
        if (i % 3 == 0)
            tecs_add(w, e, s->tag);
        if (i % 4 == 0) {
            TECS_SET(w, e, s->vis, Health, {i});
            if (i % 8 == 0)
                tecs_enable(w, e, s->vis, false);
        }
        if (i % 5 == 0)
            TECS_SET(w, e, s->stun, Stun, {(float)i / 4});
        if (i % 7 == 0)
            tecs_add(w, e, s->flag);
        if (with_obj && i % 6 == 0)
            TECS_SET(w, e, s->obj, Obj, {OBJ_LIVE, 1000 + i});
    }
    for (int i = 0; i < n; i += 9)
        tecs_destroy(w, ids[i]);
    tecs_entity_t bare = tecs_new(w);           /* one in the empty archetype */
    (void)bare;
    TECS_RESOURCE_SET(w, s->clock, Health, {42});
}

static tecs_entity_t collect_all(tecs_world_t *w, tecs_entity_t *out, int cap)
{
    int n = 0;
    for (int32_t i = 0; i < tecs_world_archetype_count(w); i++)
        (void)i;
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, cap);
    tecs_query_free(q);
    return (tecs_entity_t)n;
}

/* b holds what a holds: the same ids, components, values and bits. */
static void same_world(sw *a, sw *b)
{
    static tecs_entity_t ea[1024], eb[1024];
    int na = (int)collect_all(a->w, ea, 1024), nb = (int)collect_all(b->w, eb, 1024);
    CHECK_EQ(na, nb);
    CHECK_EQ(tecs_world_entity_count(a->w), tecs_world_entity_count(b->w));
    for (int i = 0; i < na && i < nb; i++) {
        tecs_entity_t e = ea[i];
        CHECK(tecs_is_alive(b->w, e));
        tecs_comp_t ca[] = { a->pos, a->vel, a->tag, a->vis, a->stun, a->flag, a->obj };
        tecs_comp_t cb[] = { b->pos, b->vel, b->tag, b->vis, b->stun, b->flag, b->obj };
        for (int k = 0; k < 7; k++) {
            if (ca[k] == 0)
                continue;
            CHECK_EQ(tecs_has(a->w, e, ca[k]), tecs_has(b->w, e, cb[k]));
            size_t size = tecs_component_size(a->w, ca[k]);
            const void *va = size ? tecs_get(a->w, e, ca[k]) : NULL;
            const void *vb = size ? tecs_get(b->w, e, cb[k]) : NULL;
            CHECK_EQ(va != NULL, vb != NULL);
            if (va && vb)
                CHECK(memcmp(va, vb, size) == 0);
        }
        if (tecs_has(a->w, e, a->vis))
            CHECK_EQ(tecs_is_enabled(a->w, e, a->vis), tecs_is_enabled(b->w, e, b->vis));
    }
    CHECK(memcmp(tecs_resource_get(a->w, a->clock), tecs_resource_get(b->w, b->clock),
                 sizeof(Health)) == 0);
    TW_CHECK(b->w);
    /* The next ids are the same. */
    for (int i = 0; i < 20; i++)
        CHECK_EQ(tecs_new(a->w), tecs_new(b->w));
}

TEST(snapshot_round_trip)
{
    sw a = { .w = tw_new() }, b = { .w = tw_new() };
    sw_components(&a, true);
    sw_fill(&a, 300, true);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    CHECK(buf.size > 300 * 8);
    /* b registers its components in another order: matched by name. */
    b.obj = obj_component(b.w, "Obj", &b.h);
    CHECK_ERR(tecs_component_serializer(b.w, b.obj, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = obj_load, .ctx = &b.h }), TECS_OK);
    b.clock = TECS_COMPONENT_NAMED(b.w, "Clock", Health);
    b.vel = TECS_COMPONENT(b.w, Velocity);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    b.pos = tecs_component_lookup(b.w, "Position");
    b.tag = tecs_component_lookup(b.w, "Enemy");
    b.vis = tecs_component_lookup(b.w, "Visible");
    b.stun = tecs_component_lookup(b.w, "Stun");
    b.flag = tecs_component_lookup(b.w, "Flag");
    CHECK(b.pos && b.tag && b.vis && b.stun && b.flag);
    CHECK(tecs_component_enableable(b.w, b.vis));
    CHECK_EQ(tecs_component_storage(b.w, b.stun), TECS_STORAGE_SPARSE);
    same_world(&a, &b);
    /* Saved again, the loaded world gives the same bytes. */
    tecs_snapshot_buf_t again = { 0 };
    sw c = { .w = tw_new() };
    sw_components(&c, true);
    CHECK_ERR(tecs_snapshot_load_mem(c.w, buf.data, buf.size), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(c.w, &again), TECS_OK);
    CHECK_EQ(again.size, buf.size);
    CHECK(memcmp(again.data, buf.data, buf.size) == 0);
    tecs_snapshot_buf_free(&again);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(b.w);
    tw_free(c.w);
    CHECK_EQ(a.h.bad + b.h.bad + c.h.bad, 0);
    CHECK_EQ(hooks_live(&b.h), 0);
    CHECK_EQ(hooks_live(&c.h), 0);
}

TEST(snapshot_file_round_trip)
{
    sw a = { .w = tw_new() }, b = { .w = tw_new() };
    sw_components(&a, false);
    sw_fill(&a, 100, false);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK_ERR(tecs_snapshot_save_file(a.w, f), TECS_OK);
    rewind(f);
    sw_components(&b, false);
    CHECK_ERR(tecs_snapshot_load_file(b.w, f), TECS_OK);
    fclose(f);
    same_world(&a, &b);
    CHECK_ERR(tecs_snapshot_save_file(a.w, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_load_file(a.w, NULL), TECS_EINVAL);
    tw_free(a.w);
    tw_free(b.w);
}

/* A world's snapshot in buf (no Obj: plain components only). */
static void small_snapshot(tecs_snapshot_buf_t *buf, int n)
{
    sw a = { .w = tw_new() };
    sw_components(&a, false);
    sw_fill(&a, n, false);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, buf), TECS_OK);
    tw_free(a.w);
}

/* w is empty: no entity, no resource, and it passes the check. */
static void check_empty(tecs_world_t *w)
{
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_EQ(tecs_resource_count(w), 0);
    TW_CHECK(w);
}

/* A reader over memory through the callback API: the loader's path for
** a reader it cannot look into (tecs_snapshot_load_mem reads in place). */
typedef struct stream { const unsigned char *p; size_t left; } stream;

static tecs_err_t stream_read(void *ctx, void *data, size_t n)
{
    stream *s = ctx;
    if (n > s->left)
        return TECS_EFORMAT;
    memcpy(data, s->p, n);
    s->p += n;
    s->left -= n;
    return TECS_OK;
}

/* Load data[0, n) in place (stream false) or through stream_read. */
static tecs_err_t load_via(tecs_world_t *w, const unsigned char *data, size_t n, bool streamed)
{
    stream s = { data, n };
    return streamed ? tecs_snapshot_load(w, stream_read, &s) : tecs_snapshot_load_mem(w, data, n);
}

/* Every truncation and a flipped bit at every byte fail with
** TECS_EFORMAT and leave the world empty, on either reading path. */
static void truncated_and_corrupt(bool streamed)
{
    tecs_snapshot_buf_t buf = { 0 };
    small_snapshot(&buf, 40);
    tecs_world_t *w = tw_new();
    for (size_t n = 0; n < buf.size; n++) {
        CHECK_ERR(load_via(w, buf.data, n, streamed), TECS_EFORMAT);
        check_empty(w);
    }
    for (size_t i = 0; i < buf.size; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            buf.data[i] ^= (unsigned char)(1u << bit);
            tecs_err_t err = load_via(w, buf.data, buf.size, streamed);
            if (err != TECS_EFORMAT)
                fprintf(stderr, "  byte %zu bit %d: %s\n", i, bit, tecs_err_name(err));
            CHECK_ERR(err, TECS_EFORMAT);
            check_empty(w);
            buf.data[i] ^= (unsigned char)(1u << bit);
        }
    /* Bytes after the end (a reader that cannot tell stops at the end). */
    unsigned char *more = malloc(buf.size + 1);
    memcpy(more, buf.data, buf.size);
    more[buf.size] = 0;
    tecs_world_t *x = tw_new();
    CHECK_ERR(load_via(x, more, buf.size + 1, streamed), streamed ? TECS_OK : TECS_EFORMAT);
    tw_free(x);
    free(more);
    CHECK_ERR(load_via(w, buf.data, buf.size, streamed), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 40 - 5 + 1);
    TW_CHECK(w);
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
}

TEST(snapshot_truncated_and_corrupt)
{
    truncated_and_corrupt(false);
}

TEST(snapshot_stream_truncated_and_corrupt)
{
    truncated_and_corrupt(true);
}

TEST(snapshot_bad_header)
{
    tecs_snapshot_buf_t buf = { 0 };
    small_snapshot(&buf, 5);
    tecs_world_t *w = tw_new();
    buf.data[0] = 'X';
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(w), "magic") != NULL);
    buf.data[0] = 'T';
    buf.data[8] = 9;                            /* version 9: its sum fails first */
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(w), "header") != NULL);
    buf.data[8] = 1;
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
}

/* Hostile counts, with valid sums: a snapshot made by hand. */
typedef struct hand { unsigned char b[4096]; size_t n, sec; } hand;

static void h32(hand *h, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        h->b[h->n++] = (unsigned char)(v >> (8 * i));
}

TEST(snapshot_hostile_counts)
{
    /* A real snapshot's header and component table, then an ENTS section
    ** that claims 2^31 - 2 slots and ends: the load must fail on the
    ** missing bytes, having allocated only for what arrived. */
    tecs_snapshot_buf_t buf = { 0 };
    small_snapshot(&buf, 3);
    tecs_world_t *w = tw_new();
    hand h = { .n = 0 };
    size_t ents = 0;
    for (size_t i = 24; i + 4 <= buf.size; i++)
        if (memcmp(buf.data + i, "ENTS", 4) == 0) {
            ents = i;
            break;
        }
    CHECK(ents > 0);
    memcpy(h.b, buf.data, ents + 4);
    h.n = ents + 4;
    h32(&h, 0x7ffffffeu);
    for (int i = 0; i < 100; i++)
        h32(&h, 1);
    size_t before = tecs_world_memory(w);
    CHECK_ERR(tecs_snapshot_load_mem(w, h.b, h.n), TECS_EFORMAT);
    check_empty(w);
    CHECK(tecs_world_memory(w) < before + 64 * 1024);
    /* An entity count above the world's limit. */
    tecs_world_t *small = tecs_world_new_ex(&(tecs_world_desc_t){ .max_entities = 2 });
    CHECK_ERR(tecs_snapshot_load_mem(small, buf.data, buf.size), TECS_ELIMIT);
    CHECK_EQ(tecs_world_entity_count(small), 0);
    tecs_world_free(small);
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
}

/* Every allocation of a load failed in turn: TECS_ENOMEM, the world
** empty, nothing leaked; then the same world loads. */
static void load_oom(bool streamed)
{
    tecs_snapshot_buf_t buf = { 0 };
    sw a = { .w = tw_new() };
    sw_components(&a, true);
    sw_fill(&a, 200, true);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    bool done = false;
    for (long k = 1; !done && k < 10000; k++) {
        tw_alloc al = { 0 };
        sw b = { .w = tw_new_ex(&al, 64) };
        b.obj = obj_component(b.w, "Obj", &b.h);
        tecs_component_serializer(b.w, b.obj, &(tecs_serializer_t){
            .serialize = obj_save, .deserialize = obj_load, .ctx = &b.h });
        al.fail_at = al.calls + k;
        tecs_err_t err = load_via(b.w, buf.data, buf.size, streamed);
        al.fail_at = 0;
        if (err == TECS_OK) {
            done = true;
            CHECK_EQ(tecs_world_entity_count(b.w), tecs_world_entity_count(a.w));
            TW_CHECK(b.w);
        } else {
            CHECK_ERR(err, TECS_ENOMEM);
            check_empty(b.w);
            CHECK_EQ(hooks_live(&b.h), 0);
            /* Memory back, the same world loads. */
            CHECK_ERR(load_via(b.w, buf.data, buf.size, streamed), TECS_OK);
            CHECK_EQ(tecs_world_entity_count(b.w), tecs_world_entity_count(a.w));
        }
        tw_free(b.w);
        CHECK_EQ(hooks_live(&b.h), 0);
        CHECK_EQ(b.h.bad, 0);
    }
    CHECK(done);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

TEST(snapshot_stream_oom)
{
    load_oom(true);
}

TEST(snapshot_oom)
{
    load_oom(false);
    /* The save, too. */
    for (long k = 1; k < 50; k++) {
        tecs_snapshot_buf_t out = { 0 };
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        tecs_comp_t p = TECS_COMPONENT(w, Position);
        TECS_SET(w, tecs_new(w), p, Position, {1, 2});
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_snapshot_save_mem(w, &out);
        al.fail_at = 0;
        CHECK(err == TECS_OK || err == TECS_ENOMEM);
        CHECK_EQ(tecs_world_entity_count(w), 1);
        tecs_snapshot_buf_free(&out);
        tw_free(w);
    }
}

TEST(snapshot_deserialize_fails)
{
    tecs_snapshot_buf_t buf = { 0 };
    sw a = { .w = tw_new() };
    sw_components(&a, true);
    sw_fill(&a, 100, true);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    int failures = 0;
    for (int k = 0; k < 1000; k++) {
        sw b = { .w = tw_new() };
        b.obj = obj_component(b.w, "Obj", &b.h);
        tecs_component_serializer(b.w, b.obj, &(tecs_serializer_t){
            .serialize = obj_save, .deserialize = obj_load, .ctx = &b.h });
        obj_fail_at = k;
        tecs_err_t err = tecs_snapshot_load_mem(b.w, buf.data, buf.size);
        obj_fail_at = -1;
        if (err == TECS_OK) {                   /* k is past the last value */
            tw_free(b.w);
            break;
        }
        failures++;
        CHECK_ERR(err, TECS_EINVAL);
        CHECK(strstr(tecs_last_error_msg(b.w), "Obj") != NULL);
        check_empty(b.w);
        CHECK_EQ(hooks_live(&b.h), 0);
        tw_free(b.w);
        CHECK_EQ(b.h.bad, 0);
    }
    CHECK(failures >= 10);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

static tecs_err_t write_calls_world(void *ctx, const void *data, size_t n)
{
    (void)data, (void)n;
    tecs_world_t *w = ctx;
    CHECK_EQ(tecs_new(w), 0);
    CHECK_ERR(tecs_last_error(w), TECS_EBUSY);
    CHECK(strstr(tecs_last_error_msg(w), "snapshot") != NULL);
    CHECK(tecs_get(w, tecs_new(w), 1) == NULL);
    CHECK_ERR(tecs_snapshot_save(w, write_calls_world, w), TECS_EBUSY);
    return TECS_OK;
}

static tecs_err_t write_fails(void *ctx, const void *data, size_t n)
{
    (void)ctx, (void)data, (void)n;
    return TECS_ENOMEM;
}

static bool save_in_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)e, (void)fields, (void)ctx;
    tecs_snapshot_buf_t b = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &b), TECS_EBUSY);
    CHECK_ERR(tecs_snapshot_load_mem(w, NULL, 0), TECS_EBUSY);
    tecs_snapshot_buf_free(&b);
    return false;
}

TEST(snapshot_refusals)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t p = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, p, Position, {1, 2});
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save(NULL, write_fails, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_save(w, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_save_mem(w, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_load(w, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_load_mem(NULL, "x", 1), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_load_mem(w, NULL, 1), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_put(NULL, "x", 1), TECS_EINVAL);
    CHECK_ERR(tecs_component_serializer(NULL, p, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_snapshot_save(w, write_calls_world, w), TECS_OK);
    CHECK_ERR(tecs_snapshot_save(w, write_fails, NULL), TECS_ENOMEM);
    CHECK(strstr(tecs_last_error_msg(w), "writer") != NULL);
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_OK);
    /* Not empty. */
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_EINVAL);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    /* Inside an iteration. */
    tecs_query_t *q = tecs_query_all(w, 1, &p);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, save_in_each, NULL), TECS_OK);
    /* With a delayed birth waiting. */
    CHECK(tecs_delayed_new(w, tecs_archetype_get(w, 0, NULL), 0, NULL) != 0);
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply(w), TECS_OK);
    /* A component with hooks, values and no serializer. */
    hook_counts h = { 0 };
    tecs_comp_t o = obj_component(w, "Obj", &h);
    CHECK_ERR(tecs_add(w, e, o), TECS_OK);
    CHECK(tecs_has(w, e, o));
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "'Obj'") != NULL);
    CHECK_ERR(tecs_component_serializer(w, o, &(tecs_serializer_t){ .serialize = obj_save }),
              TECS_EINVAL);
    CHECK_ERR(tecs_component_serializer(w, 999, NULL), TECS_ENOCOMP);
    tecs_remove(w, e, o);
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_OK);
    /* A world with an index: the load fills it (test_snapshot_index.c). */
    tecs_world_t *x = tw_new();
    tecs_comp_t xp = TECS_COMPONENT(x, Position);
    tecs_index_t *ix = tecs_index_new(x, &(tecs_index_desc_t){
        .comp = xp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT, .offset = 0 });
    CHECK(ix != NULL);
    CHECK_ERR(tecs_snapshot_load_mem(x, buf.data, buf.size), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(x), 2);
    CHECK_EQ(tecs_index_count(ix), 1);
    tecs_snapshot_buf_free(&buf);
    tw_free(x);
    tw_free(w);
}

/* The saved component has another layout: an error naming it, or the
** convert hook. */
typedef struct Pos3 { float x, y, z; } Pos3;

static tecs_err_t pos_convert(void *dst, const void *old, size_t n, void *ctx)
{
    (void)ctx;
    if (n != sizeof(Position))
        return TECS_EINVAL;
    Position p;
    memcpy(&p, old, sizeof p);
    *(Pos3 *)dst = (Pos3){ p.x, p.y, 9 };
    return TECS_OK;
}

TEST(snapshot_layout_mismatch)
{
    tecs_snapshot_buf_t buf = { 0 };
    small_snapshot(&buf, 10);
    tecs_world_t *w = tw_new();
    tecs_comp_t p3 = TECS_COMPONENT_NAMED(w, "Position", Pos3);
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(w), "'Position'") != NULL);
    check_empty(w);
    CHECK_ERR(tecs_component_serializer(w, p3, &(tecs_serializer_t){ .convert = pos_convert }),
              TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &p3);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int n = 0;
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++, n++)
            CHECK(TECS_FIELD(&it, Pos3, 0)[i].z == 9);
    CHECK_EQ(n, 10 - 2);
    TW_CHECK(w);
    tw_free(w);
    /* Storage differs: no convert for that. */
    w = tw_new();
    tecs_component_new(w, &(tecs_component_desc_t){ .name = "Stun", .size = sizeof(Stun),
                                                    .align = _Alignof(Stun) });
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(w), "storage") != NULL);
    check_empty(w);
    tw_free(w);
    tecs_snapshot_buf_free(&buf);
}

/* A world emptied of its entities (spare chunks, dead slots) loads too. */
TEST(snapshot_into_emptied_world)
{
    tecs_snapshot_buf_t buf = { 0 };
    small_snapshot(&buf, 50);
    sw b = { .w = tw_new() };
    sw_components(&b, false);
    sw_fill(&b, 80, false);
    tecs_resource_remove(b.w, b.clock);
    CHECK_ERR(tecs_world_reset(b.w), TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(b.w), 50 - 6 + 1);
    TW_CHECK(b.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(b.w);
}

TEST(snapshot_empty_world)
{
    tecs_world_t *a = tw_new(), *b = tw_new();
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    CHECK_EQ(tecs_new(a), tecs_new(b));
    tecs_snapshot_buf_free(&buf);
    tecs_snapshot_buf_free(NULL);
    tw_free(a);
    tw_free(b);
}

/* ---- the committed snapshots (tests/data/) ------------------------------ */

/* tests/data/portable.tecs holds tags, a sparse tag, an enableable tag
** and Obj values through the serializer (little-endian by its own code):
** it loads on every host. tests/data/plain_le.tecs holds Position values
** as bytes, saved on a little-endian host: big-endian hosts refuse it. */
static void portable_world(tecs_world_t *w, hook_counts *h)
{
    tecs_comp_t tag = TECS_TAG(w, Enemy);
    tecs_comp_t flag = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Flag", .storage = TECS_STORAGE_SPARSE });
    tecs_comp_t vis = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Visible", .enableable = true });
    tecs_comp_t o = obj_component(w, "Obj", h);
    tecs_component_serializer(w, o, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = obj_load, .ctx = h });
    tecs_entity_t ids[30];
    for (int i = 0; i < 30; i++) {
        ids[i] = tecs_new(w);
        if (i % 2)
            tecs_add(w, ids[i], tag);
        if (i % 3 == 0)
            TECS_SET(w, ids[i], o, Obj, {OBJ_LIVE, 70000 * i - 5});
        if (i % 4 == 0)
            tecs_add(w, ids[i], flag);
        if (i % 5 == 0) {
            tecs_add(w, ids[i], vis);
            tecs_enable(w, ids[i], vis, i % 10 != 0);
        }
    }
    for (int i = 0; i < 30; i += 7)
        tecs_destroy(w, ids[i]);
    for (int i = 0; i < 3; i++)                 /* generations move on */
        tecs_destroy(w, tecs_new(w));
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    unsigned char *p = malloc(1 << 16);
    *n = fread(p, 1, 1 << 16, f);
    fclose(f);
    return p;
}

TEST(snapshot_committed_file)
{
    hook_counts ha = { 0 }, hb = { 0 };
    tecs_world_t *a = tw_new(), *b = tw_new();
    portable_world(a, &ha);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    if (getenv("TECS_WRITE_SNAPSHOTS")) {       /* regenerate the committed file */
        FILE *f = fopen(TECS_SOURCE_DIR "/tests/data/portable.tecs", "wb");
        fwrite(buf.data, 1, buf.size, f);
        fclose(f);
    }
    size_t n = 0;
    unsigned char *file = read_all(TECS_SOURCE_DIR "/tests/data/portable.tecs", &n);
    CHECK(file != NULL);
    tecs_comp_t o = obj_component(b, "Obj", &hb);
    tecs_component_serializer(b, o, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = obj_load, .ctx = &hb });
    CHECK_ERR(tecs_snapshot_load_mem(b, file, n), TECS_OK);
    /* The file's world is the one portable_world makes here. */
    tecs_snapshot_buf_t again = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(b, &again), TECS_OK);
    tecs_entity_t ea[64], eb[64];
    int na = (int)collect_all(a, ea, 64), nb = (int)collect_all(b, eb, 64);
    CHECK_EQ(na, nb);
    for (int i = 0; i < na && i < nb; i++) {
        CHECK_EQ(ea[i], eb[i]);
        const Obj *va = tecs_get(a, ea[i], tecs_component_lookup(a, "Obj"));
        const Obj *vb = tecs_get(b, eb[i], o);
        CHECK_EQ(va != NULL, vb != NULL);
        if (va && vb)
            CHECK_EQ(va->value, vb->value);
    }
    TW_CHECK(b);
    CHECK_EQ(tecs_new(a), tecs_new(b));
    free(file);
    tecs_snapshot_buf_free(&again);
    tecs_snapshot_buf_free(&buf);
    tw_free(a);
    tw_free(b);
    CHECK_EQ(hooks_live(&hb), 0);
}

static bool big_endian(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 0;
}

TEST(snapshot_committed_plain_byte_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t p = TECS_COMPONENT(w, Position);
    if (getenv("TECS_WRITE_SNAPSHOTS") && !big_endian()) {
        tecs_world_t *a = tw_new();
        tecs_comp_t ap = TECS_COMPONENT(a, Position);
        for (int i = 0; i < 5; i++)
            TECS_SET(a, tecs_new(a), ap, Position, {(float)i, 0.5f});
        FILE *f = fopen(TECS_SOURCE_DIR "/tests/data/plain_le.tecs", "wb");
        CHECK_ERR(tecs_snapshot_save_file(a, f), TECS_OK);
        fclose(f);
        tw_free(a);
    }
    size_t n = 0;
    unsigned char *file = read_all(TECS_SOURCE_DIR "/tests/data/plain_le.tecs", &n);
    CHECK(file != NULL);
    tecs_err_t err = tecs_snapshot_load_mem(w, file, n);
    if (big_endian()) {
        CHECK_ERR(err, TECS_EFORMAT);
        CHECK(strstr(tecs_last_error_msg(w), "byte order") != NULL);
        check_empty(w);
    } else {
        CHECK_ERR(err, TECS_OK);
        CHECK_EQ(tecs_world_entity_count(w), 5);
        CHECK(TECS_GET(w, tecs_new(w) - 1, p, Position)->x == 4);
    }
    free(file);
    tw_free(w);
}

/* A snapshot for the tecs-dump test (CTest runs it first): 12 slots, 3
** free, 9 alive in 3 archetypes, a resource. */
TEST(snapshot_dump_file)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t p = TECS_COMPONENT(w, Position), v = TECS_COMPONENT(w, Velocity);
    tecs_comp_t clock = TECS_COMPONENT_NAMED(w, "Clock", Health);
    tecs_entity_t ids[12];
    for (int i = 0; i < 12; i++) {
        ids[i] = tecs_new(w);
        if (i < 8)
            TECS_SET(w, ids[i], p, Position, {(float)i, 0});
        if (i < 4)
            TECS_SET(w, ids[i], v, Velocity, {1, 1});
    }
    for (int i = 5; i < 8; i++)
        tecs_destroy(w, ids[i]);
    TECS_RESOURCE_SET(w, clock, Health, {3});
    FILE *f = fopen("dump_sample.tecs", "wb");
    CHECK(f != NULL);
    CHECK_ERR(tecs_snapshot_save_file(w, f), TECS_OK);
    fclose(f);
    tw_free(w);
}

/* ---- from callbacks --------------------------------------------------- */

static int cb_calls;

static void snapshot_refused_here(tecs_world_t *w)
{
    tecs_snapshot_buf_t b = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &b), TECS_EBUSY);
    CHECK_ERR(tecs_snapshot_load_mem(w, "TECSSNAP", 8), TECS_EBUSY);
    CHECK_ERR(tecs_component_serializer(w, 1, NULL), TECS_EBUSY);
    CHECK_EQ(b.size, 0);
    tecs_snapshot_buf_free(&b);
    cb_calls++;
}

static void observer_snapshots(const tecs_event_t *ev)
{
    snapshot_refused_here(ev->world);
}

static void system_snapshots(tecs_iter_t *it)
{
    snapshot_refused_here(it->world);
}

static tecs_err_t deserialize_calls_world(void *dst, const void *data, size_t n, void *ctx)
{
    tecs_world_t *w = ctx;
    (void)n;
    CHECK_EQ(tecs_new(w), 0);
    CHECK_ERR(tecs_last_error(w), TECS_EBUSY);
    CHECK_ERR(tecs_snapshot_load_mem(w, data, 4), TECS_EBUSY);
    memset(dst, 0, sizeof(Obj));
    ((Obj *)dst)->magic = OBJ_LIVE;
    cb_calls++;
    return TECS_OK;
}

TEST(snapshot_from_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t p = TECS_COMPONENT(w, Position);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = p,
                                                        .callback = observer_snapshots }));
    tecs_query_t *q = tecs_query_all(w, 1, &p);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "snap", .query = q,
                                                    .run = system_snapshots }));
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, p, Position, {1, 2});
    CHECK_ERR(tecs_progress(w, 0.016), TECS_OK);
    CHECK_EQ(cb_calls, 2);
    /* A deserializer's calls are refused; the load goes on. */
    hook_counts h = { 0 };
    tecs_comp_t o = obj_component(w, "Obj", &h);
    CHECK_ERR(tecs_component_serializer(w, o, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = obj_load, .ctx = &h }), TECS_OK);
    TECS_SET(w, e, o, Obj, {OBJ_LIVE, 5});
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_OK);
    tecs_world_t *x = tw_new();
    hook_counts hx = { 0 };
    tecs_comp_t xo = obj_component(x, "Obj", &hx);
    CHECK_ERR(tecs_component_serializer(x, xo, &(tecs_serializer_t){
        .serialize = obj_save, .deserialize = deserialize_calls_world, .ctx = x }), TECS_OK);
    int before = cb_calls;
    /* An observer on x: a load fires no event. */
    tecs_comp_t xp = TECS_COMPONENT(x, Position);
    CHECK(tecs_observer_new(x, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = xp,
                                                        .callback = observer_snapshots }));
    CHECK_ERR(tecs_snapshot_load_mem(x, buf.data, buf.size), TECS_OK);
    CHECK_EQ(cb_calls, before + 1);             /* the deserializer, no observer */
    CHECK(tecs_is_alive(x, e));
    CHECK(tecs_has(x, e, xo));
    tecs_remove(x, e, xo);                      /* built outside hx's count */
    hx.dtor--;
    tecs_snapshot_buf_free(&buf);
    tw_free(x);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

/* Components matched by name under other ids: columns and bit columns
** follow the names, not the saved order. */
TEST(snapshot_ids_reordered)
{
    tecs_world_t *a = tw_new(), *b = tw_new();
    tecs_comp_t e1 = tecs_component_new(a, &(tecs_component_desc_t){
        .name = "E1", .size = 4, .align = 4, .enableable = true });
    tecs_comp_t e2 = tecs_component_new(a, &(tecs_component_desc_t){
        .name = "E2", .size = 8, .align = 8, .enableable = true });
    for (int i = 0; i < 10; i++) {
        tecs_entity_t e = tecs_new(a);
        int32_t v1 = i;
        int64_t v2 = 100 + i;
        tecs_set(a, e, e1, &v1);
        tecs_set(a, e, e2, &v2);
        tecs_enable(a, e, i % 2 ? e1 : e2, false);
    }
    tecs_comp_t f2 = tecs_component_new(b, &(tecs_component_desc_t){
        .name = "E2", .size = 8, .align = 8, .enableable = true });
    tecs_comp_t f1 = tecs_component_new(b, &(tecs_component_desc_t){
        .name = "E1", .size = 4, .align = 4, .enableable = true });
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    tecs_entity_t ids[10];
    CHECK_EQ(collect_all(a, ids, 10), 10);
    for (int i = 0; i < 10; i++) {
        tecs_entity_t e = ids[i];
        CHECK_EQ(*(const int32_t *)tecs_get(b, e, f1), *(const int32_t *)tecs_get(a, e, e1));
        CHECK_EQ(*(const int64_t *)tecs_get(b, e, f2), *(const int64_t *)tecs_get(a, e, e2));
        CHECK_EQ(tecs_is_enabled(b, e, f1), tecs_is_enabled(a, e, e1));
        CHECK_EQ(tecs_is_enabled(b, e, f2), tecs_is_enabled(a, e, e2));
    }
    TW_CHECK(b);
    tecs_snapshot_buf_free(&buf);
    tw_free(a);
    tw_free(b);
}

/* ---- described components across byte orders ---------------------------- */

typedef struct SVec2 { float x, y; } SVec2;
/* The 8-byte fields aligned to 8 on every ABI (i686 aligns them to 4 in
** a struct), so the layout, and the committed file, are the same
** everywhere. */
typedef struct Mixed {
    int16_t a;
    uint32_t b;
    _Alignas(8) double c;
    _Alignas(8) int64_t d[2];
    SVec2 at;
    _Alignas(8) tecs_entity_t ref;
    bool flag;
} Mixed;

/* Register SVec2 and Mixed, described (Mixed's y field named `y_name`). */
static tecs_comp_t mixed_component(tecs_world_t *w, const char *y_name)
{
    tecs_comp_t v2 = tecs_component_new(w, &(tecs_component_desc_t){ .name = "SVec2",
        .size = sizeof(SVec2), .align = _Alignof(SVec2), .nfields = 2,
        .fields = (tecs_field_t[]){ TECS_MEMBER(SVec2, x, TECS_TYPE_F32),
                                    { .name = y_name, .type = TECS_TYPE_F32,
                                      .offset = offsetof(SVec2, y) } } });
    return TECS_COMPONENT_FIELDS(w, Mixed, TECS_MEMBER(Mixed, a, TECS_TYPE_I16),
        TECS_MEMBER(Mixed, b, TECS_TYPE_U32), TECS_MEMBER(Mixed, c, TECS_TYPE_F64),
        TECS_MEMBER_ARRAY(Mixed, d, TECS_TYPE_I64), TECS_MEMBER_STRUCT(Mixed, at, v2),
        TECS_MEMBER(Mixed, ref, TECS_TYPE_ENTITY), TECS_MEMBER(Mixed, flag, TECS_TYPE_BOOL));
}

static Mixed mixed_value(int i)
{
    Mixed m;
    memset(&m, 0, sizeof m);
    m.a = (int16_t)(-300 * i), m.b = 0xa0b0c0d0u + (uint32_t)i, m.c = 1.0 / (i + 3);
    m.d[0] = -((int64_t)1 << 40) * i, m.d[1] = 0x0102030405060708 + i;
    m.at = (SVec2){ 0.25f * (float)i, -2.5f }, m.ref = ((uint64_t)(i + 1) << 32) | 7u;
    m.flag = i & 1;
    return m;
}

/* A snapshot written on a little-endian host, of described plain values:
** every host loads it, the other byte order turning each field. */
TEST(snapshot_committed_described_byte_order)
{
    if (getenv("TECS_WRITE_SNAPSHOTS") && !big_endian()) {
        tecs_world_t *a = tw_new();
        tecs_comp_t am = mixed_component(a, "y");
        for (int i = 0; i < 6; i++) {
            Mixed v = mixed_value(i);
            CHECK_ERR(tecs_set(a, tecs_new(a), am, &v), TECS_OK);
        }
        FILE *f = fopen(TECS_SOURCE_DIR "/tests/data/described_le.tecs", "wb");
        CHECK_ERR(tecs_snapshot_save_file(a, f), TECS_OK);
        fclose(f);
        tw_free(a);
    }
    size_t n = 0;
    unsigned char *file = read_all(TECS_SOURCE_DIR "/tests/data/described_le.tecs", &n);
    CHECK(file != NULL);
    tecs_world_t *w = tw_new();
    tecs_comp_t m = mixed_component(w, "y");
    CHECK_ERR(tecs_snapshot_load_mem(w, file, n), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 6);
    for (int i = 0; i < 6; i++) {
        const Mixed *v = tecs_get(w, ((uint64_t)1 << 32) | (uint32_t)i, m);
        Mixed want = mixed_value(i);
        CHECK(v != NULL);
        if (v) {
            CHECK(v->a == want.a && v->b == want.b && v->c == want.c);
            CHECK(v->d[0] == want.d[0] && v->d[1] == want.d[1]);
            CHECK(v->at.x == want.at.x && v->at.y == want.at.y);
            CHECK(v->ref == want.ref && v->flag == want.flag);
        }
    }
    TW_CHECK(w);
    tw_free(w);
    /* A world that knows none of its components (a tool) registers them
    ** with the descriptions the snapshot holds, so it reads them on either
    ** byte order, and (on the saver's order) saves the same bytes again. */
    w = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(w, file, n), TECS_OK);
    int32_t nf = 0;
    const tecs_field_t *f = tecs_component_fields(w, tecs_component_lookup(w, "Mixed"), &nf);
    CHECK(f != NULL && nf == 7 && strcmp(f[4].name, "at") == 0 &&
          f[4].comp == tecs_component_lookup(w, "SVec2"));
    const Mixed *v5 = tecs_get(w, ((uint64_t)1 << 32) | 5u, tecs_component_lookup(w, "Mixed"));
    CHECK(v5 && v5->b == mixed_value(5).b && v5->at.x == mixed_value(5).at.x);
    if (!big_endian()) {
        tecs_snapshot_buf_t again = { 0 };
        CHECK_ERR(tecs_snapshot_save_mem(w, &again), TECS_OK);
        CHECK(again.size == n && memcmp(again.data, file, n) == 0);
        tecs_snapshot_buf_free(&again);
    }
    tw_free(w);
    /* Another description of the same bytes is another layout. */
    w = tw_new();
    mixed_component(w, "why");
    CHECK_ERR(tecs_snapshot_load_mem(w, file, n), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(w), "Mixed") != NULL ||
          strstr(tecs_last_error_msg(w), "SVec2") != NULL);
    check_empty(w);
    tw_free(w);
    free(file);
}

/* ---- strings through a description ---------------------------------------- */

typedef struct Label { char *text; int32_t n; char *alt[2]; } Label;

static long live_labels;        /* strings the hooks below hold */

static char *label_dup(const char *s)
{
    return tw_str_dup(s, &live_labels);
}

static void label_drop(char *s)
{
    tw_str_free(s, &live_labels);
}

static void label_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    for (Label *v = p; n-- > 0; v++) {
        label_drop(v->text);
        label_drop(v->alt[0]);
        label_drop(v->alt[1]);
    }
}

static void label_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    Label *d = dst;
    const Label *s = src;
    for (int32_t i = 0; i < n; i++) {
        Label t = { label_dup(s[i].text), s[i].n, { label_dup(s[i].alt[0]),
                                                    label_dup(s[i].alt[1]) } };
        label_dtor(&d[i], 1, ctx);
        d[i] = t;
    }
}

static tecs_comp_t label_component(tecs_world_t *w)
{
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = "Label",
        .size = sizeof(Label), .align = _Alignof(Label), .dtor = label_dtor, .copy = label_copy,
        .nfields = 3, .fields = (tecs_field_t[]){ TECS_MEMBER(Label, text, TECS_TYPE_STRING),
                                                  TECS_MEMBER(Label, n, TECS_TYPE_I32),
                                                  TECS_MEMBER_ARRAY(Label, alt, TECS_TYPE_STRING) } });
}

static const char *const label_texts[] = { "alpha", "", NULL, "gr\xc3\xbc\xc3\x9f" "e", "a longer label" };

/* A component with hooks and a description, and no serializer, is saved
** field by field: its strings come back as the component's own copies. */
TEST(snapshot_strings_through_descriptions)
{
    live_labels = 0;
    tecs_world_t *a = tw_new();
    tecs_comp_t la = label_component(a);
    for (int i = 0; i < 5; i++) {
        Label v = { (char *)(uintptr_t)label_texts[i], i * 7,
                    { (char *)(uintptr_t)label_texts[(i + 1) % 5], NULL } };
        CHECK_ERR(tecs_set(a, tecs_new(a), la, &v), TECS_OK);
    }
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    long held = live_labels;
    tecs_world_t *b = tw_new();
    tecs_comp_t lb = label_component(b);
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    CHECK_EQ(live_labels, 2 * held);
    for (int i = 0; i < 5; i++) {
        const Label *v = tecs_get(b, ((uint64_t)1 << 32) | (uint32_t)i, lb);
        const char *want = label_texts[i], *alt = label_texts[(i + 1) % 5];
        CHECK(v != NULL && v->n == i * 7 && v->alt[1] == NULL);
        if (v) {
            CHECK(want ? v->text && strcmp(v->text, want) == 0 : v->text == NULL);
            CHECK(alt ? v->alt[0] && strcmp(v->alt[0], alt) == 0 : v->alt[0] == NULL);
            CHECK(v->text == NULL || v->text != label_texts[i]);    /* its own copy */
        }
    }
    tecs_snapshot_buf_t again = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(b, &again), TECS_OK);
    CHECK(again.size == buf.size && memcmp(again.data, buf.data, buf.size) == 0);
    tecs_snapshot_buf_free(&again);
    TW_CHECK(b);
    tw_free(b);
    CHECK_EQ(live_labels, held);
    /* A world without the hooks cannot build the values. */
    b = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EFORMAT);
    check_empty(b);
    tw_free(b);
    /* Every cut, every failed allocation: an error, an empty world, no
    ** string left. */
    for (size_t cut = 0; cut < buf.size; cut += 1 + cut / 64) {
        b = tw_new();
        label_component(b);
        CHECK(tecs_snapshot_load_mem(b, buf.data, cut) != TECS_OK);
        check_empty(b);
        tw_free(b);
        CHECK_EQ(live_labels, held);
    }
    bool done = false;
    for (long k = 1; !done && k < 1000; k++) {
        tw_alloc al = { 0 };
        b = tw_new_ex(&al, 0);
        label_component(b);
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_snapshot_load_mem(b, buf.data, buf.size);
        al.fail_at = 0;
        done = err == TECS_OK;
        if (!done) {
            CHECK_ERR(err, TECS_ENOMEM);
            check_empty(b);
        }
        tw_free(b);
        CHECK_EQ(live_labels, held);
    }
    CHECK(done);
    tecs_snapshot_buf_free(&buf);
    tw_free(a);
    CHECK_EQ(live_labels, 0);
}

static uint32_t le32_at(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64_at(const unsigned char *p)
{
    return (uint64_t)le32_at(p) | (uint64_t)le32_at(p + 4) << 32;
}

static void put_le32_at(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The section whose tag is at tag: its payload's length, checked against
** its trailer, whose sum is the documented one. */
static size_t section_len(const unsigned char *tag, size_t len)
{
    CHECK_EQ(le64_at(tag + 4 + len), (uint64_t)len);
    CHECK_EQ(le64_at(tag + 4 + len + 8), tw_doc_sum(tag + 4, len));
    return len;
}

/* Give the section at tag (payload of len bytes) its sum again. */
static void resum(unsigned char *tag, size_t len)
{
    uint64_t h = tw_doc_sum(tag + 4, len);
    put_le32_at(tag + 4 + len + 8, (uint32_t)h);
    put_le32_at(tag + 4 + len + 12, (uint32_t)(h >> 32));
}

/* Bad slots behind valid sums: generation 0 in either batch of the slot
** loader, a row naming a slot twice (within a chunk and across chunks),
** past the last slot, or free (alone, or within a run of slots in
** order). Each fails with its message and leaves the world empty; the
** snapshot itself loads. */
TEST(snapshot_bad_slots_valid_sums)
{
    enum { N = 5000 };
    tecs_world_t *a = tw_new();
    tecs_comp_t p = TECS_COMPONENT(a, Position);
    tecs_entity_t first = 0;
    for (int i = 0; i < N; i++) {
        tecs_entity_t e = tecs_new(a);
        TECS_SET(a, e, p, Position, {(float)i, 0});
        first = i == 0 ? e : first;
    }
    CHECK_ERR(tecs_destroy(a, first), TECS_OK);     /* slot 0 free */
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    unsigned char *ents = NULL;
    for (size_t i = 24; i + 4 <= buf.size && ents == NULL; i++)
        if (memcmp(buf.data + i, "ENTS", 4) == 0)
            ents = buf.data + i;
    CHECK(ents != NULL);
    CHECK_EQ(le32_at(ents + 4), (uint32_t)N);
    CHECK_EQ(le32_at(ents + 8 + 4 * N), 1u);        /* one free slot: 0 */
    size_t ents_len = section_len(ents, 4 + 4 * (size_t)N + 4 + 4);
    /* The ARCH section of Position's archetype: the world's others have
    ** no component and (an empty one's section, if saved) no row. */
    unsigned char *arch = ents + 4 + ents_len + 16;
    while (memcmp(arch, "ARCH", 4) == 0 && le32_at(arch + 4) == 0)
        arch += 4 + section_len(arch, 8 + 4 * (size_t)le32_at(arch + 8)) + 16;
    CHECK(memcmp(arch, "ARCH", 4) == 0);
    CHECK_EQ(le32_at(arch + 4), 1u);
    uint32_t rows = le32_at(arch + 12);
    CHECK_EQ(rows, (uint32_t)N - 1);
    size_t arch_len = section_len(arch, 12 + 4 * (size_t)rows + sizeof(Position) * rows);
    unsigned char *slots = arch + 16;
    struct { unsigned char *at; uint32_t value; unsigned char *tag; size_t len;
             const char *msg; } bad[] = {
        { ents + 8 + 4 * 10, 0, ents, ents_len, "generation 0" },
        { ents + 8 + 4 * 4500, 0, ents, ents_len, "generation 0" },
        { slots + 4 * 3000, le32_at(slots + 4 * 2999), arch, arch_len, "repeated" },
        { slots + 4 * 1024, le32_at(slots + 4 * 1023), arch, arch_len, "repeated" },
        { slots + 4 * 4000, N, arch, arch_len, "repeated" },
        { slots + 4 * 5, 0, arch, arch_len, "repeated" },
    };
    tecs_world_t *w = tw_new();
    for (int streamed = 0; streamed < 2; streamed++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            uint32_t was = le32_at(bad[i].at);
            put_le32_at(bad[i].at, bad[i].value);
            resum(bad[i].tag, bad[i].len);
            CHECK_ERR(load_via(w, buf.data, buf.size, streamed), TECS_EFORMAT);
            CHECK(strstr(tecs_last_error_msg(w), bad[i].msg) != NULL);
            check_empty(w);
            put_le32_at(bad[i].at, was);
            resum(bad[i].tag, bad[i].len);
        }
    /* The rows' slots one run that takes in the free slot 0: 0 .. N - 2,
    ** each slot once in the rows, so only the free list repeats it. */
    for (uint32_t i = 0; i < rows; i++)
        put_le32_at(slots + 4 * i, i);
    resum(arch, arch_len);
    for (int streamed = 0; streamed < 2; streamed++) {
        CHECK_ERR(load_via(w, buf.data, buf.size, streamed), TECS_EFORMAT);
        CHECK(strstr(tecs_last_error_msg(w), "repeated") != NULL);
        check_empty(w);
    }
    for (uint32_t i = 0; i < rows; i++)
        put_le32_at(slots + 4 * i, i + 1);
    resum(arch, arch_len);
    CHECK_ERR(tecs_snapshot_load_mem(w, buf.data, buf.size), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), N - 1);
    TW_CHECK(w);
    CHECK_EQ(tecs_new(w), tecs_new(a));
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
    tw_free(a);
}

/* Slots neither alive nor free: retired when their generation is at its
** maximum (a load keeps them so: never reused, saved again the same),
** else the load fails. The snapshot's ENTS section is rewritten with slot
** 0 out of the free list, at generation gen. */
static size_t ents_without_free(const tecs_snapshot_buf_t *in, unsigned char *out, uint32_t n,
                                uint32_t gen)
{
    const unsigned char *ents = NULL;
    for (size_t i = 24; i + 4 <= in->size && ents == NULL; i++)
        if (memcmp(in->data + i, "ENTS", 4) == 0)
            ents = in->data + i;
    CHECK(ents != NULL && le32_at(ents + 4) == n && le32_at(ents + 8 + 4 * n) == 1);
    size_t head = (size_t)(ents - in->data), len = 4 + 4 * (size_t)n + 4;
    size_t rest = head + 4 + section_len(ents, len + 4) + 16;
    memcpy(out, in->data, head + 4 + 4 + 4 * (size_t)n);
    unsigned char *tag = out + head;
    put_le32_at(tag + 8, gen);                  /* slot 0 */
    put_le32_at(tag + 4 + len - 4, 0);          /* no free slot */
    put_le32_at(tag + 4 + len, (uint32_t)len);
    put_le32_at(tag + 4 + len + 4, 0);
    resum(tag, len);
    memcpy(tag + 4 + len + 16, in->data + rest, in->size - rest);
    return head + 4 + len + 16 + in->size - rest;
}

TEST(snapshot_retired_slots)
{
    enum { N = 3000 };
    tecs_world_t *a = tw_new();
    tecs_comp_t p = TECS_COMPONENT(a, Position);
    tecs_entity_t first = 0;
    for (int i = 0; i < N; i++) {
        tecs_entity_t e = tecs_new(a);
        TECS_SET(a, e, p, Position, {(float)i, 0});
        first = i == 0 ? e : first;
    }
    CHECK_ERR(tecs_destroy(a, first), TECS_OK);     /* slot 0 free */
    tecs_snapshot_buf_t buf = { 0 }, again = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a, &buf), TECS_OK);
    unsigned char *edited = malloc(buf.size);
    for (int streamed = 0; streamed < 2; streamed++) {
        size_t n = ents_without_free(&buf, edited, N, 7);
        tecs_world_t *w = tw_new();
        CHECK_ERR(load_via(w, edited, n, streamed), TECS_EFORMAT);
        CHECK(strstr(tecs_last_error_msg(w), "neither alive, free nor retired") != NULL);
        check_empty(w);
        n = ents_without_free(&buf, edited, N, UINT32_MAX);
        CHECK_ERR(load_via(w, edited, n, streamed), TECS_OK);
        CHECK_EQ(tecs_world_entity_count(w), N - 1);
        TW_CHECK(w);
        CHECK_ERR(tecs_snapshot_save_mem(w, &again), TECS_OK);
        CHECK(again.size == n && memcmp(again.data, edited, n) == 0);
        CHECK_EQ(TECS_ENTITY_INDEX(tecs_new(w)), (uint32_t)N);     /* slot 0 stays out */
        tw_free(w);
    }
    free(edited);
    tecs_snapshot_buf_free(&again);
    tecs_snapshot_buf_free(&buf);
    tw_free(a);
}
