/*
** Snapshots and indexes: a world that has indexes (hash, ordered, unique
** ones, spatial, one on a sparse component) and caches (plain, filtered and
** ordered, filtered by a circle) before a load holds, after it, exactly
** what the same indexes and caches hold in the world that was saved, built
** by events: the same where results (in key order where one is asked for),
** lookups, points near a place, and cache members (in the same order). A
** unique index whose loaded keys repeat fails the load; a failed
** allocation anywhere in the load or the rebuild fails it too; either way
** the world is empty, every index and cache empty and consistent, nothing
** leaked. No cache enter / leave callback runs for loaded entities.
*/
#include "test.h"
#include "index/internal.h" /* tecs__indexes_rebuild, for the rows-replaced case */

typedef struct Name { char s[16]; } Name;
typedef struct Rank { int64_t v; } Rank;
typedef struct Stun { float seconds; } Stun;

/* A world with its components, and, once made, its indexes and caches. */
typedef struct iw {
    tecs_world_t *w;
    tecs_comp_t pos, hp, name, rank, stun;
    tecs_index_t *hp_hash, *hp_ord, *name_u, *rank_u, *pos_sp, *stun_ord;
    tecs_query_t *q_h, *q_p, *q_ph, *q_s;
    tecs_cache_t *c_all, *c_rich, *c_near;
    int entered, left;          /* cache member callbacks                   */
} iw;

enum { NMAX = 1024 };

static void iw_components(iw *s)
{
    tecs_world_t *w = s->w;
    s->pos = TECS_COMPONENT(w, Position);
    s->hp = TECS_COMPONENT(w, Health);
    s->name = TECS_COMPONENT(w, Name);
    s->rank = TECS_COMPONENT(w, Rank);
    s->stun = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Stun", .size = sizeof(Stun), .align = _Alignof(Stun),
        .storage = TECS_STORAGE_SPARSE });
    CHECK(s->pos && s->hp && s->name && s->rank && s->stun);
}

/* By hit points, then id. */
static int by_hp(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    const iw *s = ctx;
    const Health *ha = tecs_get(w, a, s->hp), *hb = tecs_get(w, b, s->hp);
    int ka = ha ? ha->hp : -1, kb = hb ? hb->hp : -1;
    return ka != kb ? (ka > kb) - (ka < kb) : (a > b) - (a < b);
}

static void entered(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((iw *)ctx)->entered++;
}

static void left(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((iw *)ctx)->left++;
}

/* The indexes, queries and caches of s; @return TECS_OK, or the error of
** the first one that could not be made (nothing is left half made that
** the world does not free). */
static tecs_err_t iw_indexes(iw *s)
{
    tecs_world_t *w = s->w;
    if (!(s->hp_hash = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 })) ||
        !(s->hp_ord = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 })) ||
        !(s->name_u = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->name, .kind = TECS_INDEX_HASH, .type = TECS_KEY_CHARS,
              .size = sizeof(Name), .unique = true })) ||
        !(s->rank_u = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->rank, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I64,
              .unique = true })) ||
        !(s->pos_sp = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
              .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
              .cell_size = 4 })) ||
        !(s->stun_ord = tecs_index_new(w, &(tecs_index_desc_t){
              .comp = s->stun, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT })) ||
        !(s->q_h = tecs_query_all(w, 1, &s->hp)) || !(s->q_p = tecs_query_all(w, 1, &s->pos)) ||
        !(s->q_ph = tecs_query_all(w, 2, (tecs_comp_t[]){ s->pos, s->hp })) ||
        !(s->q_s = tecs_query_all(w, 1, &s->stun)))
        return tecs_last_error(w);
    tecs_filter_t *rich = tecs_filter_new(w), *near = tecs_filter_new(w);
    if (rich)
        tecs_filter_cmp(rich, s->hp_ord, TECS_GE, tecs_key_int(20));
    if (near)
        tecs_filter_radius(near, s->pos_sp, 40, -20, 15);
    tecs_err_t err = !rich || !near ? TECS_ENOMEM : TECS_OK;
    if (!err && !(s->c_all = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = s->q_ph })))
        err = tecs_last_error(w);
    if (!err && !(s->c_rich = tecs_cache_new(w, &(tecs_cache_desc_t){
                      .query = s->q_h, .filter = rich, .order = by_hp, .ctx = s })))
        err = tecs_last_error(w);
    if (!err && !(s->c_near = tecs_cache_new(w, &(tecs_cache_desc_t){
                      .query = s->q_p, .filter = near, .on_enter = entered,
                      .on_leave = left, .ctx = s })))
        err = tecs_last_error(w);
    tecs_filter_free(rich);
    tecs_filter_free(near);
    return err;
}

/* Entities with a bit of everything, some destroyed, then a burst of sets
** (an index nothing follows sleeps through it, to be rebuilt on use). */
static void iw_fill(iw *s, int n, bool unique_hp)
{
    tecs_world_t *w = s->w;
    tecs_entity_t ids[NMAX];
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = ids[i] = tecs_new(w);
        TECS_SET(w, e, s->pos, Position, {(float)i, (float)-i / 2});
        if (i % 2 == 0)
            TECS_SET(w, e, s->hp, Health, {unique_hp ? i : i % 37});
        if (i % 3 == 0) {
            Name nm = { { 0 } };
            snprintf(nm.s, sizeof nm.s, "e%d", i);
            CHECK_ERR(tecs_set(w, e, s->name, &nm), TECS_OK);
        }
        if (i % 4 == 0)
            TECS_SET(w, e, s->rank, Rank, {1000 - i});
        if (i % 5 == 0)
            TECS_SET(w, e, s->stun, Stun, {(float)i / 4});
    }
    for (int i = 0; i < n; i += 9)
        tecs_destroy(w, ids[i]);
    for (int i = 2; i < n; i += 2)
        if (tecs_is_alive(w, ids[i]))
            TECS_SET(w, ids[i], s->hp, Health, {unique_hp ? i + 1 : (i * 7) % 41});
}

static int cmp_ids(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

/* A filter of kind k on s's indexes, and the query it goes with. */
static tecs_filter_t *filter_of(iw *s, int k, tecs_query_t **q)
{
    tecs_filter_t *f = tecs_filter_new(s->w);
    CHECK(f != NULL);
    *q = s->q_h;
    switch (k) {
    case 0:
        tecs_filter_cmp(f, s->hp_hash, TECS_EQ, tecs_key_int(5));
        break;
    case 1:
        tecs_filter_between(f, s->hp_ord, tecs_key_int(10), tecs_key_int(30));
        tecs_filter_order(f, s->hp_ord, false);
        break;
    case 2:
        *q = s->q_p;
        tecs_filter_cmp(f, s->name_u, TECS_NE, tecs_key_str("e12"));
        break;
    case 3:
        *q = s->q_p;
        tecs_filter_cmp(f, s->rank_u, TECS_LT, tecs_key_int(950));
        tecs_filter_order(f, s->rank_u, true);
        break;
    case 4:
        *q = s->q_p;
        tecs_filter_box(f, s->pos_sp, 10, -60, 120, -5);
        break;
    case 5:
        *q = s->q_s;
        tecs_filter_cmp(f, s->stun_ord, TECS_GE, tecs_key_real(10));
        tecs_filter_order(f, s->stun_ord, false);
        break;
    default: {
        *q = s->q_ph;
        tecs_cond_t a = tecs_filter_cmp(f, s->hp_hash, TECS_EQ, tecs_key_int(14));
        tecs_cond_t b = tecs_filter_radius(f, s->pos_sp, 100, -50, 30);
        tecs_filter_and(f, tecs_filter_not(f, a), b);
        break;
    }
    }
    CHECK_ERR(tecs_filter_error(f), TECS_OK);
    return f;
}

enum { NFILTERS = 7 };

/* Filters 1, 3 and 5 hand out key order; the others the query's order,
** which follows the archetypes' creation: compared as sets. */
static bool key_order(int k)
{
    return k == 1 || k == 3 || k == 5;
}

static int32_t where_ids(iw *s, int k, tecs_entity_t *out)
{
    tecs_query_t *q;
    tecs_filter_t *f = filter_of(s, k, &q);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, out, NMAX);
    tecs_filter_free(f);
    CHECK(n >= 0 && n <= NMAX);
    if (!key_order(k) && n > 0)
        qsort(out, (size_t)n, sizeof *out, cmp_ids);
    return n;
}

static void same_ids(const tecs_entity_t *a, int32_t na, const tecs_entity_t *b, int32_t nb)
{
    CHECK_EQ(na, nb);
    for (int32_t i = 0; i < na && i < nb; i++)
        CHECK_EQ(a[i], b[i]);
}

/* b's indexes and caches hold what a's hold. */
static void same_indexes(iw *a, iw *b)
{
    static tecs_entity_t ga[NMAX], gb[NMAX];
    tecs_index_t *xa[] = { a->hp_hash, a->hp_ord, a->name_u, a->rank_u, a->pos_sp, a->stun_ord };
    tecs_index_t *xb[] = { b->hp_hash, b->hp_ord, b->name_u, b->rank_u, b->pos_sp, b->stun_ord };
    for (int i = 0; i < 6; i++) {
        CHECK(tecs_index_count(xa[i]) > 0);
        CHECK_EQ(tecs_index_count(xa[i]), tecs_index_count(xb[i]));
    }
    for (int k = 0; k < NFILTERS; k++) {
        int32_t na = where_ids(a, k, ga), nb = where_ids(b, k, gb);
        CHECK(na > 0);
        same_ids(ga, na, gb, nb);
    }
    for (int i = 0; i < 120; i += 3) {
        char key[16];
        snprintf(key, sizeof key, "e%d", i);
        CHECK_EQ(tecs_index_lookup(a->name_u, tecs_key_str(key)),
                 tecs_index_lookup(b->name_u, tecs_key_str(key)));
        CHECK_EQ(tecs_index_lookup(a->rank_u, tecs_key_int(1000 - i)),
                 tecs_index_lookup(b->rank_u, tecs_key_int(1000 - i)));
    }
    int32_t na = tecs_index_near(a->pos_sp, 60, -30, 12, ga, NMAX);
    int32_t nb = tecs_index_near(b->pos_sp, 60, -30, 12, gb, NMAX);
    CHECK(na > 0);
    qsort(ga, (size_t)na, sizeof *ga, cmp_ids);
    qsort(gb, (size_t)nb, sizeof *gb, cmp_ids);
    same_ids(ga, na, gb, nb);
    tecs_cache_t *ca[] = { a->c_all, a->c_rich, a->c_near };
    tecs_cache_t *cb[] = { b->c_all, b->c_rich, b->c_near };
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(tecs_cache_count(ca[i]), tecs_cache_count(cb[i]));
        na = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a->w, .cache = ca[i]) }, ga, NMAX);
        nb = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(b->w, .cache = cb[i]) }, gb, NMAX);
        CHECK(na > 0);
        if (i != 1) {           /* c_rich is ordered; the others by arrival */
            qsort(ga, (size_t)na, sizeof *ga, cmp_ids);
            qsort(gb, (size_t)nb, sizeof *gb, cmp_ids);
        }
        same_ids(ga, na, gb, nb);
    }
}

/* Every index and cache of s is empty. */
static void all_empty(iw *s)
{
    tecs_index_t *x[] = { s->hp_hash, s->hp_ord, s->name_u, s->rank_u, s->pos_sp, s->stun_ord };
    for (int i = 0; i < 6; i++)
        CHECK_EQ(tecs_index_count(x[i]), 0);
    CHECK_EQ(tecs_cache_count(s->c_all), 0);
    CHECK_EQ(tecs_cache_count(s->c_rich), 0);
    CHECK_EQ(tecs_cache_count(s->c_near), 0);
    CHECK_EQ(tecs_world_entity_count(s->w), 0);
    TW_CHECK(s->w);
}

/* A source world built by events, with its indexes made first. */
static void source(iw *a, tecs_snapshot_buf_t *buf, int n, bool unique_hp)
{
    a->w = tw_new();
    iw_components(a);
    CHECK_ERR(iw_indexes(a), TECS_OK);
    iw_fill(a, n, unique_hp);
    CHECK(a->entered > 0);
    TW_CHECK(a->w);
    CHECK_ERR(tecs_snapshot_save_mem(a->w, buf), TECS_OK);
}

TEST(snapshot_index_rebuilt)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 }, b = { .w = tw_new() };
    source(&a, &buf, 300, false);
    iw_components(&b);
    CHECK_ERR(iw_indexes(&b), TECS_OK);
    all_empty(&b);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    TW_CHECK(b.w);
    CHECK_EQ(b.entered + b.left, 0);        /* no member callback on a load */
    same_indexes(&a, &b);
    /* The loaded world goes on by events like the source. */
    for (int i = 1; i < 40; i++) {
        tecs_entity_t e = tecs_new(a.w);
        CHECK_EQ(tecs_new(b.w), e);
        TECS_SET(a.w, e, a.hp, Health, {i % 13});
        TECS_SET(b.w, e, b.hp, Health, {i % 13});
        TECS_SET(a.w, e, a.pos, Position, {40, (float)-i});
        TECS_SET(b.w, e, b.pos, Position, {40, (float)-i});
    }
    CHECK_EQ(a.entered > 0, b.entered > 0);
    same_indexes(&a, &b);
    TW_CHECK(b.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(b.w);
}

/* An index made after a failed load, and a load into a world whose indexes
** were made by name, give the same too; a second world loads the same. */
TEST(snapshot_index_after_failed_load)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 }, b = { .w = tw_new() };
    source(&a, &buf, 200, false);
    iw_components(&b);
    CHECK_ERR(iw_indexes(&b), TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size - 1), TECS_EFORMAT);
    all_empty(&b);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    same_indexes(&a, &b);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(b.w);
}

/* A unique index whose loaded keys repeat: the load fails naming it, the
** world and the index are empty; without the index the same bytes load. */
TEST(snapshot_index_unique_collision)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 };
    source(&a, &buf, 100, false);           /* hit points repeat */
    for (int kind = 0; kind < 2; kind++) {
        iw b = { .w = tw_new() };
        iw_components(&b);
        CHECK_ERR(iw_indexes(&b), TECS_OK);
        tecs_index_t *u = tecs_index_new(b.w, &(tecs_index_desc_t){
            .comp = b.hp, .kind = kind ? TECS_INDEX_ORDERED : TECS_INDEX_HASH,
            .type = TECS_KEY_I32, .unique = true });
        CHECK(u != NULL);
        CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_EEXIST);
        CHECK(strstr(tecs_last_error_msg(b.w), "snapshot") != NULL);
        CHECK(strstr(tecs_last_error_msg(b.w), "'Health'") != NULL);
        CHECK(strstr(tecs_last_error_msg(b.w), "share a key") != NULL);
        CHECK_EQ(tecs_index_count(u), 0);
        all_empty(&b);
        CHECK_EQ(b.entered + b.left, 0);
        /* The index still works, and refuses a repeat made by events. */
        tecs_entity_t e = tecs_new(b.w), f = tecs_new(b.w);
        TECS_SET(b.w, e, b.hp, Health, {3});
        CHECK_ERR(tecs_set(b.w, f, b.hp, &(Health){ 3 }), TECS_EEXIST);
        CHECK_EQ(tecs_index_count(u), 1);
        tecs_destroy(b.w, e);
        tecs_destroy(b.w, f);
        TW_CHECK(b.w);
        /* Without it, the same bytes load. The world is not empty of slots:
        ** the two entities just made are dead now, and the load takes the
        ** snapshot's slots anyway. */
        CHECK_ERR(tecs_index_free(u), TECS_OK);
        CHECK_EQ(tecs_world_entity_count(b.w), 0);
        CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
        same_indexes(&a, &b);
        tw_free(b.w);
    }
    /* Keys unique in the source: the unique index on hit points loads. */
    tecs_snapshot_buf_t ubuf = { 0 };
    iw c = { 0 }, d = { .w = tw_new() };
    source(&c, &ubuf, 100, true);
    iw_components(&d);
    tecs_index_t *u = tecs_index_new(d.w, &(tecs_index_desc_t){
        .comp = d.hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    CHECK_ERR(tecs_snapshot_load_mem(d.w, ubuf.data, ubuf.size), TECS_OK);
    CHECK_EQ(tecs_index_count(u), tecs_index_count(c.hp_hash));
    CHECK(tecs_index_lookup(u, tecs_key_int(5)) != 0);
    TW_CHECK(d.w);
    tecs_snapshot_buf_free(&ubuf);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(c.w);
    tw_free(d.w);
}

/* Every allocation of a load into a world with indexes and caches fails in
** turn: the load fails, the world and every index and cache are empty and
** consistent, nothing leaks, and the same bytes then load. */
TEST(snapshot_index_oom)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 };
    source(&a, &buf, 120, false);
    long total = 0, failed = 0;
    for (long k = 0; k == 0 || k <= total; k++) {
        tw_alloc al = { 0 };
        iw b = { .w = tw_new_ex(&al, 64) };
        iw_components(&b);
        CHECK_ERR(iw_indexes(&b), TECS_OK);
        long calls = al.calls;
        al.fail_at = k ? calls + k : 0;
        tecs_err_t err = tecs_snapshot_load_mem(b.w, buf.data, buf.size);
        al.fail_at = 0;
        if (k == 0)             /* the allocations of a load that succeeds */
            total = al.calls - calls;
        if (err != TECS_OK) {   /* (a failed compaction is only a layout) */
            failed++;
            CHECK_ERR(err, TECS_ENOMEM);
            all_empty(&b);
            CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
        }
        TW_CHECK(b.w);
        CHECK_EQ(b.entered + b.left, 0);
        same_indexes(&a, &b);
        tw_free(b.w);
    }
    CHECK(failed > total / 2);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

/* Rows changed behind the indexes' back (as a delta applies them, without
** events): the rebuild clears what the indexes and caches held and builds
** them from the rows as they are; again, it changes nothing. */
TEST(snapshot_index_rebuild_replaced_rows)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 };
    source(&a, &buf, 200, false);
    tecs_world_t *w = a.w;
    int32_t counts[3] = { tecs_cache_count(a.c_all), tecs_cache_count(a.c_rich),
                          tecs_cache_count(a.c_near) };
    CHECK_ERR(tecs__indexes_rebuild(w), TECS_OK);
    TW_CHECK(w);
    CHECK_EQ(tecs_cache_count(a.c_all), counts[0]);
    CHECK_EQ(tecs_cache_count(a.c_rich), counts[1]);
    CHECK_EQ(tecs_cache_count(a.c_near), counts[2]);
    /* Raw writes, unreported: every hit point becomes 50, every position
    ** moves far away. */
    tecs_entity_t ids[NMAX];
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = a.q_h) }, ids, NMAX);
    for (int32_t i = 0; i < n; i++)
        ((Health *)(uintptr_t)tecs_get(w, ids[i], a.hp))->hp = 50;
    int32_t np = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = a.q_p) }, ids, NMAX);
    for (int32_t i = 0; i < np; i++)
        ((Position *)(uintptr_t)tecs_get(w, ids[i], a.pos))->x = 1e6f;
    int entered = a.entered, gone = a.left;
    CHECK_ERR(tecs__indexes_rebuild(w), TECS_OK);
    CHECK_EQ(a.entered, entered);
    CHECK_EQ(a.left, gone);
    TW_CHECK(w);
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, a.hp_hash, TECS_EQ, tecs_key_int(50));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = a.q_h, .where = f) }, NULL, 0), n);
    tecs_filter_free(f);
    CHECK_EQ(tecs_cache_count(a.c_rich), n);
    CHECK_EQ(tecs_cache_count(a.c_near), 0);
    CHECK_EQ(tecs_index_near(a.pos_sp, 40, -20, 100, NULL, 0), 0);
    CHECK_EQ(tecs_index_count(a.pos_sp), np);
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
}

/* What a cache's order function calls while the load refills the cache:
** reads answer, a structural change is queued and applied before the load
** returns, making objects and loading again are refused. */
typedef struct probe_ctx {
    iw *s;
    tecs_comp_t seen;
    int calls, refused;
} probe_ctx;

static int probing_order(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    probe_ctx *p = ctx;
    p->calls++;
    CHECK(tecs_get(w, a, p->s->hp) != NULL);
    tecs_add(w, a, p->seen);
    p->refused += tecs_snapshot_load_mem(w, "x", 1) == TECS_EBUSY;
    p->refused += tecs_index_new(w, &(tecs_index_desc_t){
        .comp = p->s->hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 }) == NULL;
    p->refused += tecs_cache_new(w, &(tecs_cache_desc_t){ .query = p->s->q_h }) == NULL;
    return by_hp(w, a, b, p->s);
}

TEST(snapshot_index_order_fn_calls)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 }, b = { .w = tw_new() };
    source(&a, &buf, 60, false);
    iw_components(&b);
    probe_ctx p = { .s = &b, .seen = TECS_TAG(b.w, Seen) };
    b.q_h = tecs_query_all(b.w, 1, &b.hp);
    tecs_cache_t *c = tecs_cache_new(b.w, &(tecs_cache_desc_t){
        .query = b.q_h, .order = probing_order, .ctx = &p });
    CHECK(c != NULL);
    CHECK_EQ(p.calls, 0);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    CHECK(p.calls > 0);
    CHECK_EQ(p.refused, 3 * p.calls);
    CHECK_EQ(tecs_last_error(b.w), TECS_OK);
    tecs_entity_t ids[NMAX];
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(b.w, .cache = c) }, ids, NMAX);
    CHECK_EQ(n, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(a.q_h), .query = a.q_h) }, NULL, 0));
    int seen = 0;
    for (int32_t i = 0; i < n; i++) {
        seen += tecs_has(b.w, ids[i], p.seen);
        if (i > 0)
            CHECK(by_hp(b.w, ids[i - 1], ids[i], &b) < 0);
    }
    CHECK(seen > 0);
    TW_CHECK(b.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(b.w);
}

/* An index asleep after a burst (its component's calls skip it), in a world
** emptied again: the load wakes it, rebuilt, and it follows events again. */
TEST(snapshot_index_asleep_before_load)
{
    tecs_snapshot_buf_t buf = { 0 };
    iw a = { 0 }, b = { .w = tw_new() };
    source(&a, &buf, 200, false);
    iw_components(&b);
    tecs_index_t *x = tecs_index_new(b.w, &(tecs_index_desc_t){
        .comp = b.hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    tecs_entity_t ids[300];
    for (int i = 0; i < 300; i++)
        TECS_SET(b.w, ids[i] = tecs_new(b.w), b.hp, Health, {i});
    CHECK_EQ(tecs_index_count(x), 300);
    for (int i = 0; i < 300; i++)       /* a burst: the index sleeps */
        TECS_SET(b.w, ids[i], b.hp, Health, {i + 1});
    for (int i = 0; i < 300; i++)
        tecs_destroy(b.w, ids[i]);
    TW_CHECK(b.w);
    CHECK(x->asleep && x->dirty);
    CHECK_ERR(tecs_snapshot_load_mem(b.w, buf.data, buf.size), TECS_OK);
    CHECK(!x->asleep && !x->dirty);
    TW_CHECK(b.w);
    CHECK_EQ(tecs_index_count(x), tecs_index_count(a.hp_hash));
    tecs_filter_t *f = tecs_filter_new(b.w);
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_int(1234));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(tecs_query_all(b.w, 1, &b.hp)), .query = tecs_query_all(b.w, 1, &b.hp), .where = f) }, NULL, 0), 0);
    tecs_entity_t e = tecs_new(b.w);
    TECS_SET(b.w, e, b.hp, Health, {1234});
    CHECK_EQ(tecs_filter_test(f, e), true);
    tecs_filter_free(f);
    TW_CHECK(b.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
    tw_free(b.w);
}
