/* Limits and memory: chunk budget, failed reservations, queued births and
** their memory, unique keys at apply time, NaN keys, system intervals, and
** indexes made while an entity is being destroyed. */
#include "test.h"

#include <float.h>
#include <math.h>

typedef struct Pos { float x, y; } Pos;
typedef struct Key { double k; } Key;

/* ---- system intervals ------------------------------------------------- */

typedef struct dt_log {
    int runs;
    double last;
    bool finite;
} dt_log;

static void log_dt(tecs_iter_t *it)
{
    dt_log *l = it->ctx;
    l->runs++;
    l->last = it->delta_time;
    l->finite = l->finite && isfinite(it->delta_time) && it->delta_time >= 0;
}

static dt_log run_frames(double interval, double dt, int frames)
{
    tecs_world_t *w = tw_new();
    dt_log l = { 0, 0, true };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .run = log_dt, .ctx = &l,
                                                .interval = interval }) != 0);
    for (int i = 0; i < frames; i++)
        CHECK_ERR(tecs_progress(w, dt), TECS_OK);
    tw_free(w);
    return l;
}

TEST(limits_subnormal_interval_keeps_running)
{
    const double dt = 1.0 / 60;     /* a double: x87 keeps constants wider */
    dt_log l = run_frames(DBL_TRUE_MIN, dt, 5);
    CHECK_EQ(l.runs, 5);
    CHECK(l.finite);
    CHECK(l.last == dt);
    l = run_frames(DBL_MIN / 4, dt, 3);
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
}

TEST(limits_huge_delta_time_and_interval)
{
    const double big = 1e300;       /* a double: x87 keeps constants wider */
    dt_log l = run_frames(1e-300, big, 3);          /* 1e600 intervals a frame */
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
    CHECK(l.last == big);
    l = run_frames(1e300, 1e300, 4);                /* one interval a frame */
    CHECK_EQ(l.runs, 4);
    CHECK(l.finite);
    CHECK(l.last == big);
    l = run_frames(1.0, 1e300, 3);                  /* 1e300 whole intervals */
    CHECK_EQ(l.runs, 3);
    CHECK(l.finite);
    l = run_frames(1e300, 1e299, 20);               /* due every tenth frame */
    CHECK_EQ(l.runs, 2);
    CHECK(l.finite);
}

/* ---- the chunk budget and failed reservations --------------------------- */

/* A counting allocator that refuses any block larger than `cap` bytes. */
typedef struct capped {
    tw_alloc a;
    size_t cap;
} capped;

static void *capped_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    capped *c = ud;
    if (nsize > c->cap)
        return NULL;
    return tw_alloc_fn(&c->a, ptr, osize, nsize);
}

static tecs_world_t *capped_world(capped *c, size_t cap, int32_t rows)
{
    *c = (capped){ .cap = cap };
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = capped_fn, .alloc_ud = c, .rows_per_chunk = rows });
    CHECK(w != NULL);
    return w;
}

static void capped_free(tecs_world_t *w, capped *c)
{
    CHECK_ERR(tecs_world_check(w), TECS_OK);
    tecs_world_free(w);
    CHECK_EQ(c->a.blocks, 0);
    CHECK_EQ(c->a.bytes, 0);
}

TEST(limits_chunk_has_a_byte_budget)
{
    tecs_world_t *w = tw_new();             /* 1,024 rows per chunk */
    tecs_comp_t big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Big", .size = TECS_MAX_COMPONENT_SIZE });
    tecs_comp_t fit = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Fit", .size = TECS_MAX_CHUNK_BYTES / 1024 - 8 });   /* with the id: 32 KiB */
    tecs_comp_t pos = TECS_COMPONENT(w, Pos);
    CHECK(big && fit && pos);
    tecs_entity_t e = tecs_new(w);
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_archetype_get(w, 1, &big) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    CHECK(strstr(tecs_last_error_msg(w), "'Big'") != NULL);
    CHECK_ERR(tecs_add(w, e, big), TECS_ELIMIT);
    CHECK(tecs_world_memory(w) <= mem + 4096);
    /* The fattest row that fits: one chunk, within the budget. */
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &fit);
    CHECK(a != NULL);
    mem = tecs_world_memory(w);
    CHECK_ERR(tecs_add(w, e, fit), TECS_OK);
    CHECK(tecs_world_memory(w) - mem <= (size_t)TECS_MAX_CHUNK_BYTES + 4096);
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ fit, pos }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    TW_CHECK(w);
    tw_free(w);
    /* At 16 rows a value of the largest size fits. */
    w = tw_new_ex(NULL, 16);
    big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Big", .size = TECS_MAX_COMPONENT_SIZE });
    e = tecs_new(w);
    mem = tecs_world_memory(w);
    CHECK_ERR(tecs_add(w, e, big), TECS_OK);
    CHECK(tecs_world_memory(w) - mem <= (size_t)TECS_MAX_CHUNK_BYTES + 4096);
    CHECK_ERR(tecs_archetype_reserve(w, tecs_entity_archetype(w, e), 2), TECS_OK);
    CHECK(tecs_world_memory(w) - mem <= (size_t)TECS_MAX_CHUNK_BYTES + 4096);
    TW_CHECK(w);
    tw_free(w);
}

TEST(limits_failed_reserve_keeps_no_memory)
{
    capped c;
    tecs_world_t *w = capped_world(&c, (size_t)256 << 20, 0);
    tecs_comp_t pos = TECS_COMPONENT(w, Pos);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t e = tecs_new_in(w, a);
    CHECK(e != 0);
    size_t mem = tecs_world_memory(w);
    long blocks = c.a.blocks;
    int32_t chunks = tecs_archetype_chunk_count(a);
    CHECK_ERR(tecs_archetype_reserve(w, a, INT32_MAX), TECS_ENOMEM);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK_EQ(c.a.blocks, blocks);
    CHECK_EQ(tecs_archetype_chunk_count(a), chunks);
    CHECK_ERR(tecs_archetype_reserve(w, a, 5000), TECS_OK);
    CHECK(tecs_is_alive(w, e));
    capped_free(w, &c);
}

/* ---- NaN keys in a unique index ----------------------------------------- */

static void nan_keys_in(tecs_index_kind_t kind)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t key = TECS_COMPONENT(w, Key);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = key, .kind = kind, .type = TECS_KEY_DOUBLE, .unique = true });
    CHECK(x != NULL);
    tecs_entity_t e[6];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, e[i], key, &(Key){ NAN }), TECS_OK);
    }
    Key two[2] = { { NAN }, { -NAN } };
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &key);
    CHECK_ERR(tecs_new_bulk(w, a, 2, e + 3, 1, &(tecs_value_t){ key, two }), TECS_OK);
    e[5] = tecs_new(w);
    CHECK_ERR(tecs_set(w, e[5], key, &(Key){ 1.0 }), TECS_OK);
    CHECK_EQ(tecs_index_count(x), 6);
    TW_CHECK(w);
    /* A raw write to NaN is no collision either; 1.0 still is. */
    ((Key *)tecs_get_mut(w, e[5], key))->k = NAN;
    CHECK_ERR(tecs_modified(w, e[5], key), TECS_OK);
    CHECK_ERR(tecs_set(w, e[0], key, &(Key){ 1.0 }), TECS_OK);
    CHECK_ERR(tecs_set(w, e[1], key, &(Key){ 1.0 }), TECS_EEXIST);
    CHECK(tecs_index_lookup(x, tecs_key_real(1.0)) == e[0]);
    CHECK_ERR(tecs_destroy(w, e[3]), TECS_OK);
    CHECK_ERR(tecs_set(w, e[4], key, &(Key){ 2.0 }), TECS_OK);
    CHECK_EQ(tecs_index_count(x), 5);
    TW_CHECK(w);
    /* A new index over the NaN keys accepts them all. */
    tecs_index_t *y = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = key, .kind = kind, .type = TECS_KEY_DOUBLE, .unique = true });
    CHECK(y != NULL);
    CHECK_EQ(tecs_index_count(y), 5);
    TW_CHECK(w);
    tw_free(w);
}

TEST(limits_unique_index_takes_many_nan_keys)
{
    nan_keys_in(TECS_INDEX_HASH);
    nan_keys_in(TECS_INDEX_ORDERED);
}

/* ---- an index made while an entity leaves --------------------------------- */

typedef struct late_index {
    tecs_comp_t key;
    tecs_index_t *x;
} late_index;

static void make_index(const tecs_event_t *ev)
{
    late_index *l = ev->ctx;
    if (l->x == NULL)
        l->x = tecs_index_new(ev->world, &(tecs_index_desc_t){
            .comp = l->key, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_DOUBLE });
    CHECK(l->x != NULL);
}

TEST(limits_index_made_in_on_remove_of_a_destroy)
{
    tecs_world_t *w = tw_new();
    late_index l = { TECS_COMPONENT(w, Key), NULL };
    tecs_comp_t pos = TECS_COMPONENT(w, Pos);       /* after Key: its REMOVE comes later */
    CHECK_ERR(tecs_component_hooks(w, pos, &(tecs_hooks_t){ .on_remove = make_index,
                                                             .ctx = &l }), TECS_OK);
    tecs_entity_t keep = tecs_new(w), dies = tecs_new(w);
    CHECK_ERR(tecs_set(w, keep, l.key, &(Key){ 1 }), TECS_OK);
    CHECK_ERR(tecs_set(w, dies, l.key, &(Key){ 2 }), TECS_OK);
    CHECK_ERR(tecs_set(w, dies, pos, &(Pos){ 0, 0 }), TECS_OK);
    CHECK_ERR(tecs_destroy(w, dies), TECS_OK);
    CHECK(l.x != NULL);
    CHECK_EQ(tecs_index_count(l.x), 1);
    TW_CHECK(w);
    tw_free(w);
}

TEST(limits_index_made_in_on_remove_of_a_remove)
{
    tecs_world_t *w = tw_new();
    late_index l = { TECS_COMPONENT(w, Key), NULL };
    tecs_comp_t pos = TECS_COMPONENT(w, Pos);       /* an index first: its listener */
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){  /* is told before the hooks     */
        .comp = pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT }) != NULL);
    CHECK_ERR(tecs_component_hooks(w, l.key, &(tecs_hooks_t){ .on_remove = make_index,
                                                               .ctx = &l }), TECS_OK);
    tecs_entity_t keep = tecs_new(w), loses = tecs_new(w);
    CHECK_ERR(tecs_set(w, keep, l.key, &(Key){ 1 }), TECS_OK);
    CHECK_ERR(tecs_set(w, loses, l.key, &(Key){ 2 }), TECS_OK);
    CHECK_ERR(tecs_remove(w, loses, l.key), TECS_OK);
    CHECK(l.x != NULL);
    CHECK_EQ(tecs_index_count(l.x), 1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- unique keys of queued births: dropped, never silently ---------------- */

typedef struct Name { int64_t id; } Name;

static tecs_index_t *unique_names(tecs_world_t *w, tecs_comp_t name)
{
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = name, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I64, .unique = true });
    CHECK(x != NULL);
    return x;
}

TEST(limits_delayed_births_with_one_unique_key_are_reported)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t name = TECS_COMPONENT(w, Name);
    tecs_index_t *x = unique_names(w, name);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &name);
    tecs_entity_t held = tecs_new_in(w, a);
    CHECK_ERR(tecs_set(w, held, name, &(Name){ 9 }), TECS_OK);
    tecs_entity_t e1 = tecs_delayed_new(w, a, 1, &(tecs_value_t){ name, &(Name){ 7 } });
    tecs_entity_t e2 = tecs_delayed_new(w, a, 1, &(tecs_value_t){ name, &(Name){ 7 } });
    tecs_entity_t e3 = tecs_delayed_new(w, a, 1, &(tecs_value_t){ name, &(Name){ 9 } });
    tecs_entity_t e4 = tecs_delayed_new(w, a, 1, &(tecs_value_t){ name, &(Name){ 8 } });
    CHECK(e1 && e2 && e3 && e4);
    CHECK_EQ(tecs_delayed_new_count(w), 4);
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_EEXIST);
    CHECK_EQ(tecs_dropped_changes(w), 2);
    CHECK(strstr(tecs_last_error_msg(w), "dropped 2") != NULL);
    CHECK(tecs_is_alive(w, e1) && tecs_is_alive(w, e4));
    CHECK(!tecs_is_alive(w, e2) && !tecs_is_alive(w, e3));
    CHECK_EQ(tecs_delayed_new_count(w), 0);
    CHECK(tecs_index_lookup(x, tecs_key_int(7)) == e1);
    CHECK_EQ(tecs_index_count(x), 3);
    /* A clean apply reports none. */
    CHECK(tecs_delayed_new(w, a, 1, &(tecs_value_t){ name, &(Name){ 10 } }) != 0);
    CHECK_ERR(tecs_delayed_apply(w), TECS_OK);
    CHECK_EQ(tecs_dropped_changes(w), 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(limits_deferred_births_with_one_unique_key_are_reported)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t name = TECS_COMPONENT(w, Name), pos = TECS_COMPONENT(w, Pos);
    tecs_index_t *x = unique_names(w, name);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &name);
    tecs_entity_t walker = tecs_new(w);
    CHECK_ERR(tecs_set(w, walker, pos, &(Pos){ 0, 0 }), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_entity_t s1 = 0, s2 = 0, b[2] = { 0, 0 };
    Name same[2] = { { 5 }, { 5 } };
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        s1 = tecs_new(w);                       /* births, then a set that adds */
        CHECK_ERR(tecs_set(w, s1, name, &(Name){ 3 }), TECS_OK);
        s2 = tecs_new(w);
        CHECK_ERR(tecs_set(w, s2, name, &(Name){ 3 }), TECS_OK);
        CHECK_ERR(tecs_new_bulk(w, a, 2, b, 1, &(tecs_value_t){ name, same }), TECS_OK);
        CHECK_ERR(tecs_add(w, walker, name), TECS_OK);   /* key 0, then a set */
        CHECK_ERR(tecs_set(w, walker, name, &(Name){ 3 }), TECS_OK);  /* of s1's key */
    }
    CHECK_EQ(tecs_dropped_changes(w), 3);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK(tecs_has(w, s1, name) && !tecs_has(w, s2, name));
    CHECK(tecs_is_alive(w, s2));                /* its birth applied, its set not */
    CHECK(tecs_is_alive(w, b[0]) && !tecs_is_alive(w, b[1]));
    CHECK_EQ(TECS_GET(w, walker, name, Name)->id, 0);   /* the refused write undone */
    CHECK_EQ(tecs_index_count(x), 3);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- the memory of queued births ------------------------------------------ */

typedef struct Vel { float x, y, z, w; } Vel;

/* Bytes n entities of Pos (and Vel, if two) cost made directly, and queued
** as delayed births; then, once applied, what the world holds beyond the
** direct one. */
static void birth_memory(int32_t n, bool two, size_t *direct, size_t *queued, ptrdiff_t *extra)
{
    tecs_world_t *d = tw_new(), *w = tw_new();
    tecs_world_t *both[2] = { d, w };
    size_t m0[2], m1[2];
    for (int k = 0; k < 2; k++) {
        tecs_world_t *x = both[k];
        tecs_comp_t p = TECS_COMPONENT(x, Pos), v = TECS_COMPONENT(x, Vel);
        tecs_archetype_t *a = tecs_archetype_get(x, two ? 2 : 1, (tecs_comp_t[]){ p, v });
        m0[k] = tecs_world_memory(x);
        for (int32_t i = 0; i < n; i++) {
            tecs_value_t vals[2] = { { p, &(Pos){ (float)i, 0 } }, { v, &(Vel){ 1, 2, 3, 4 } } };
            tecs_entity_t e;
            if (k == 0)
                CHECK_ERR(tecs_new_bulk(x, a, 1, &e, two ? 2 : 1, vals), TECS_OK);
            else
                CHECK(tecs_delayed_new(x, a, two ? 2 : 1, vals) != 0);
        }
        m1[k] = tecs_world_memory(x);
    }
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), tecs_world_entity_count(d));
    *direct = m1[0] - m0[0];
    *queued = m1[1] - m0[1];
    *extra = (ptrdiff_t)tecs_world_memory(w) - (ptrdiff_t)tecs_world_memory(d);
    TW_CHECK(w);
    tw_free(d);
    tw_free(w);
}

TEST(limits_queued_births_cost_at_most_twice_and_give_memory_back)
{
    static const int32_t ns[] = { 3000, 100000, 250000 };
    for (int i = 0; i < 3; i++) {
        for (int two = 0; two < 2; two++) {
            size_t direct, queued;
            ptrdiff_t extra;
            birth_memory(ns[i], two, &direct, &queued, &extra);
            if (queued > 2 * direct || extra > 256 * 1024)
                fprintf(stderr, "  n %d, %d values: direct %zu, queued %zu, kept %td\n",
                        ns[i], 1 + two, direct, queued, extra);
            CHECK(queued <= 2 * direct);
            CHECK(extra <= 256 * 1024);     /* the queue's bounded spare */
        }
    }
}

/* The same changes, delayed (kills with callbacks, then births with values)
** or made directly: once applied, the delayed world holds no more than the
** direct one and the queue's bounded spare. */
static void count_kill(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w;
    (void)e;
    ++*(int *)ctx;
}

TEST(limits_delayed_kills_give_the_queue_back)
{
    enum { N = 50000 };
    static tecs_entity_t ids[2][N];
    tecs_world_t *x[2] = { tw_new(), tw_new() };
    int kills = 0;
    for (int k = 0; k < 2; k++) {
        tecs_comp_t p = TECS_COMPONENT(x[k], Pos);
        tecs_archetype_t *a = tecs_archetype_get(x[k], 1, &p);
        CHECK_ERR(tecs_new_bulk(x[k], a, N, ids[k], 0, NULL), TECS_OK);
        for (int i = 0; k == 1 && i < N; i++)
            CHECK_ERR(tecs_delayed_destroy(x[k], ids[k][i], count_kill, &kills), TECS_OK);
        for (int i = 0; i < N; i++) {
            tecs_value_t v = { p, &(Pos){ 1, 2 } };
            tecs_entity_t e;
            if (k == 0)
                CHECK_ERR(tecs_new_bulk(x[k], a, 1, &e, 1, &v), TECS_OK);
            else
                CHECK(tecs_delayed_new(x[k], a, 1, &v) != 0);
        }
        for (int i = 0; k == 0 && i < N; i++)
            CHECK_ERR(tecs_destroy(x[k], ids[k][i]), TECS_OK);
    }
    CHECK_ERR(tecs_delayed_apply_new(x[1]), TECS_OK);       /* the kills stay queued */
    CHECK_EQ(tecs_delayed_destroy_count(x[1]), N);
    CHECK_ERR(tecs_delayed_apply_destroy(x[1]), TECS_OK);
    CHECK_EQ(kills, N);
    CHECK_EQ(tecs_world_entity_count(x[1]), tecs_world_entity_count(x[0]));
    CHECK(tecs_world_memory(x[1]) <= tecs_world_memory(x[0]) + 256 * 1024);
    TW_CHECK(x[1]);
    tw_free(x[0]);
    tw_free(x[1]);
}
