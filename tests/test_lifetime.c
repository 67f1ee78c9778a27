/* Object lifetimes: ordered caches re-sorted after writes through every
** tracked path, copied iterators, frees refused while an object is used,
** frees from a cache's own callbacks, filters freed while iterated. */
#include "test.h"

/* A new entity with component c (default-constructed). */
static tecs_entity_t new_with(tecs_world_t *w, tecs_comp_t c)
{
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, c), TECS_OK);
    return e;
}

/* ---- ordered caches and tracked writes --------------------------------- */

typedef struct Key { int32_t k; } Key;

static int by_key(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    tecs_comp_t key = *(const tecs_comp_t *)ctx;
    int32_t ka = TECS_GET(w, a, key, Key)->k, kb = TECS_GET(w, b, key, Key)->k;
    if (ka != kb)
        return ka < kb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* The cache holds its n members in key order. */
static void check_sorted(tecs_world_t *w, tecs_cache_t *c, tecs_comp_t key, int32_t n)
{
    tecs_entity_t out[32];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, out, 32), n);
    for (int32_t i = 1; i < n; i++)
        CHECK(TECS_GET(w, out[i - 1], key, Key)->k <= TECS_GET(w, out[i], key, Key)->k);
}

typedef struct sorted_world {
    tecs_world_t *w;
    tecs_comp_t key;
    tecs_query_t *q;
    tecs_cache_t *c;
    int32_t n;
    tecs_entity_t e[32];
} sorted_world;

/* n entities, the first four with keys 2, 3, 1, 0, the others n - 1 down
** to 4, in an ordered cache over Key (a write term). */
static void sorted_world_new(sorted_world *s, int32_t n)
{
    s->w = tw_new();
    s->key = TECS_COMPONENT(s->w, Key);
    s->n = n;
    static const int32_t keys[4] = { 2, 3, 1, 0 };
    for (int i = 0; i < n; i++) {
        s->e[i] = tecs_new(s->w);
        CHECK_ERR(TECS_SET(s->w, s->e[i], s->key, Key, { i < 4 ? keys[i] : n + 3 - i }),
                  TECS_OK);
    }
    s->q = TECS_QUERY(s->w, { .comp = s->key });
    s->c = tecs_cache_new(s->w, &(tecs_cache_desc_t){ .query = s->q, .order = by_key,
                                                      .ctx = &s->key });
    CHECK(s->c != NULL);
    check_sorted(s->w, s->c, s->key, n);
}

static void sorted_world_free(sorted_world *s)
{
    CHECK_ERR(tecs_cache_free(s->c), TECS_OK);
    CHECK_ERR(tecs_query_free(s->q), TECS_OK);
    tw_free(s->w);
}

/* Rewrite every key handed out by it, in iteration order, the i-th of the
** mod rows getting (m * i + 3) % mod: a new order. @return rows seen. */
static int32_t rewrite_keys(tecs_iter_t *it, int32_t m, int32_t mod, int32_t *seen)
{
    int32_t n = 0;
    while (tecs_iter_next(it)) {
        Key *k = tecs_field(it, 0);
        for (int32_t r = 0; r < it->count; r++, n++) {
            k[r].k = (m * n + 3) % mod;
            seen[n] = (int32_t)TECS_ENTITY_INDEX(it->entities[r]);
        }
    }
    return n;
}

/* Keys 2,3,1,0 rewritten through the cache's own iterator: every row is
** handed out once, and the cache is in order after. */
TEST(lifetime_ordered_cache_resorts_after_its_own_iterator_writes)
{
    sorted_world s;
    sorted_world_new(&s, 4);
    tecs_iter_t it = TECS_ITER(s.w, .cache = s.c);
    int32_t seen[32];
    CHECK_EQ(rewrite_keys(&it, 3, s.n, seen), 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            CHECK(seen[i] != seen[j]);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 4);
    it = TECS_ITER(s.w, .cache = s.c);                  /* later iterations too */
    CHECK_EQ(rewrite_keys(&it, 5, s.n, seen), 4);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 4);
    sorted_world_free(&s);
}

/* A write term of a plain query's iteration, and of a where. */
TEST(lifetime_ordered_cache_resorts_after_query_writes)
{
    sorted_world s;
    sorted_world_new(&s, 24);
    int32_t seen[32];
    tecs_iter_t it = TECS_ITER(tecs_query_world(s.q), .query = s.q);
    CHECK_EQ(rewrite_keys(&it, 7, s.n, seen), 24);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 24);
    it = TECS_ITER(tecs_query_world(s.q), .query = s.q, .reverse = true);
    CHECK_EQ(rewrite_keys(&it, 11, s.n, seen), 24);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 24);
    tecs_filter_t *f = tecs_filter_new(s.w);   /* matches every entity */
    it = TECS_ITER(tecs_query_world(s.q), .query = s.q, .where = f);
    CHECK_EQ(rewrite_keys(&it, 13, s.n, seen), 24);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 24);
    tecs_filter_free(f);
    sorted_world_free(&s);
}

/* Step an iteration of the sorted world's query to its first chunk and
** write new keys there, not reported until the iteration leaves it. */
static Key *write_keys_unreported(tecs_iter_t *it)
{
    CHECK(tecs_iter_next(it));
    Key *k = tecs_field(it, 0);
    for (int32_t r = 0; r < it->count; r++)
        k[r].k = 10 - r;
    return k;
}

/* tecs_set and tecs_modified inside an open iteration (other keys written
** and not yet reported), read while it is open, and after it ends. */
TEST(lifetime_ordered_cache_resorts_after_sets_inside_an_iteration)
{
    sorted_world s;
    sorted_world_new(&s, 4);
    tecs_iter_t it = TECS_ITER(tecs_query_world(s.q), .query = s.q);
    Key *k = write_keys_unreported(&it);
    CHECK_ERR(TECS_SET(s.w, s.e[3], s.key, Key, { 20 }), TECS_OK);
    TECS_GET_MUT(s.w, s.e[2], s.key, Key)->k = -5;
    CHECK_ERR(tecs_modified(s.w, s.e[2], s.key), TECS_OK);
    check_sorted(s.w, s.c, s.key, 4);           /* read while open: sorted first */
    k[0].k = 30;                                /* written after that read */
    tecs_iter_fini(&it);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 4);
    tecs_entity_t out[4];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(s.w, .cache = s.c) }, out, 4), 4);
    CHECK_EQ(TECS_GET(s.w, out[0], s.key, Key)->k, -5);
    CHECK_EQ(TECS_GET(s.w, out[3], s.key, Key)->k, 30);
    for (int i = 0; i < 4; i++)                 /* outside any iteration */
        CHECK_ERR(TECS_SET(s.w, s.e[i], s.key, Key, { (i * 5) % 4 }), TECS_OK);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 4);
    sorted_world_free(&s);
}

/* Keys written through an open iteration and not reported yet leave an
** ordered cache out of order until the iteration ends: no corruption, so
** the structure check reports the open iteration, not a broken cache. */
TEST(lifetime_check_inside_an_iteration_that_wrote_keys_is_busy)
{
    sorted_world s;
    sorted_world_new(&s, 4);
    tecs_iter_t it = TECS_ITER(tecs_query_world(s.q), .query = s.q);
    write_keys_unreported(&it);
    CHECK_ERR(tecs_world_check(s.w), TECS_EBUSY);
    tecs_iter_fini(&it);
    TW_CHECK(s.w);
    check_sorted(s.w, s.c, s.key, 4);
    sorted_world_free(&s);
}

/* ---- copied iterators -------------------------------------------------- */

/* Ending both copies of an iterator ends the iteration once: the defer
** depth stays right, so the next iteration is deferred too and hands out
** no rows of destroyed entities. */
TEST(lifetime_iterator_copies_end_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++)
        e[i] = new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&copy));
    CHECK_EQ(tecs_world_check(w), TECS_EBUSY);  /* one open */
    CHECK(strstr(tecs_last_error_msg(w), "1 iteration") != NULL);
    tecs_iter_fini(&copy);
    CHECK(!tecs_is_deferred(w));
    CHECK(!tecs_iter_next(&it));                /* the other copy sees it ended */
    tecs_iter_fini(&it);                        /* harmless on an ended copy */
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);                                /* no end was doubled */
    it = TECS_ITER(w, .query = q);
    copy = it;
    tecs_iter_fini(&it);
    tecs_iter_fini(&copy);                      /* ended twice */
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_check(w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "ended twice") != NULL);
    TW_CHECK(w);                                /* reported once */
    /* The next iteration is deferred: a destroy waits for its end. */
    it = TECS_ITER(w, .query = q);
    CHECK(tecs_is_deferred(w));
    int32_t rows = 0;
    while (tecs_iter_next(&it)) {
        for (int32_t r = 0; r < it.count; r++, rows++) {
            CHECK(tecs_is_alive(w, it.entities[r]));
            CHECK_ERR(tecs_destroy(w, e[(r + 1) % 3]), TECS_OK);
        }
    }
    CHECK_EQ(rows, 3);
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* A copy that outlives its iteration touches nothing: its query may be
** freed already. */
TEST(lifetime_iterator_copy_outlives_its_query)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    tecs_iter_t copy = it;
    CHECK(tecs_field_is_set(&copy, 0));
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    CHECK(!tecs_field_is_set(&copy, 0));
    CHECK(!tecs_iter_next(&copy));
    tecs_iter_fini(&copy);
    CHECK_EQ(tecs_world_check(w), TECS_OK);     /* next saw it ended: no second end */
    tw_free(w);
}

/* n entities with Health 0 .. n-1. */
static void hp_entities(tecs_world_t *w, tecs_comp_t hp, int n)
{
    for (int i = 0; i < n; i++)
        TECS_SET(w, tecs_new(w), hp, Health, { i });
}

/* An ordered index on Health. */
static tecs_index_t *hp_index(tecs_world_t *w, tecs_comp_t hp)
{
    return tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .kind = TECS_INDEX_ORDERED,
                                                   .type = TECS_KEY_I32 });
}

/* A filtered iteration ended by a copy frees its busy mark once: the
** filter can be iterated again, the index freed. */
TEST(lifetime_where_iterator_copy_ends_it)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    hp_entities(w, hp, 8);
    tecs_index_t *x = hp_index(w, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(4));
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&copy);
    CHECK(!tecs_iter_next(&it));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), 4);
    TW_CHECK(w);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

typedef struct nested_ctx {
    tecs_query_t *inner;
    tecs_comp_t pos;
    int32_t rows;
} nested_ctx;

/* Inside the system's own iteration: iterate another query, end it through
** a copy (the original is dropped), and destroy what it hands out. */
static void nested_run(tecs_iter_t *it)
{
    nested_ctx *n = it->ctx;
    tecs_iter_t inner = TECS_ITER(tecs_query_world(n->inner), .query = n->inner);
    tecs_iter_t copy = inner;
    CHECK(tecs_iter_next(&copy));
    n->rows += copy.count;
    CHECK_ERR(tecs_destroy(it->world, copy.entities[0]), TECS_OK);
    tecs_iter_fini(&copy);
    CHECK(!tecs_iter_next(&inner));
    CHECK(tecs_is_deferred(it->world));         /* the system's still open */
    tecs_iter_t own = *it;                      /* and the system's own copy */
    tecs_iter_fini(&own);
}

TEST(lifetime_nested_iteration_ended_by_a_copy_leaves_the_world_consistent)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    for (int i = 0; i < 4; i++)
        new_with(w, pos);
    new_with(w, vel);
    nested_ctx n = { .inner = TECS_QUERY(w, { .comp = pos }), .pos = pos };
    tecs_query_t *outer = TECS_QUERY(w, { .comp = vel });
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "nested", .query = outer,
                                                .run = nested_run, .ctx = &n }));
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(n.rows, 4);
    CHECK(!tecs_is_deferred(w));
    CHECK_EQ(tecs_world_entity_count(w), 4);    /* the destroy was applied */
    TW_CHECK(w);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 3);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- frees refused while used ------------------------------------------ */

static void noop_run(tecs_iter_t *it)
{
    (void)it;
}

/* A query a system or a cache uses is not freed under them. */
TEST(lifetime_query_free_refused_while_used)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_system_t s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .query = q,
                                                            .run = noop_run });
    CHECK(s != 0);
    size_t mem = tecs_world_memory(w);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);  /* the system still runs */
    CHECK_ERR(tecs_system_free(w, s), TECS_OK);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK(c != NULL);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    CHECK_EQ(tecs_cache_count(c), 1);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
    tecs_iter_fini(&it);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_ERR(tecs_query_free(NULL), TECS_OK);
    tw_free(w);
}

TEST(lifetime_index_free_refused_while_a_where_is_open)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    hp_entities(w, hp, 4);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    tecs_index_t *y = hp_index(w, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_int(2));
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    CHECK_ERR(tecs_index_free(x), TECS_EBUSY);
    CHECK(strstr(tecs_last_error_msg(w), "iteration") != NULL);
    CHECK_ERR(tecs_index_free(y), TECS_OK);     /* not named by the filter */
    CHECK(tecs_iter_next(&it));
    CHECK_EQ(it.count, 1);
    CHECK_EQ(TECS_FIELD(&it, Health, 0)->hp, 2);
    tecs_iter_fini(&it);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    tecs_filter_free(f);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

TEST(lifetime_cache_free_refused_while_iterated)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    new_with(w, pos);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    tecs_iter_t it = TECS_ITER(w, .cache = c);
    tecs_iter_t copy = it;
    CHECK_ERR(tecs_cache_free(c), TECS_EBUSY);
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&copy);                      /* a copy ends it */
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    CHECK_ERR(tecs_cache_free(NULL), TECS_OK);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* ---- a cache freed from its own callbacks ------------------------------ */

typedef struct freeing_ctx {
    tecs_cache_t *self;         /* freed by its own callback                */
    tecs_cache_t *other;        /* freed by that callback too (or NULL)     */
    int calls;
    tecs_err_t err;
} freeing_ctx;

static void free_self(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    freeing_ctx *f = ctx;
    (void)w, (void)e;
    f->calls++;
    if (f->self) {
        f->err = tecs_cache_free(f->self);
        if (f->other)
            CHECK_ERR(tecs_cache_free(f->other), TECS_OK);
        f->self = f->other = NULL;
    }
}

static void count_enter(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ++*(int *)ctx;
}

/* A filter on index x that matches every entity with Health. */
static tecs_filter_t *every(tecs_world_t *w, tecs_index_t *x)
{
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(INT32_MIN));
    return f;
}

/* A cache freed from its own on_enter goes once the event delivery is
** over, not under it. Whether a cache is gone shows in tecs_index_free,
** refused while a cache's filter names the index. */
TEST(lifetime_cache_freed_from_its_own_callback)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = hp_index(w, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *all = every(w, x);
    int later = 0;
    tecs_cache_t *stay = tecs_cache_new(w, &(tecs_cache_desc_t){
        .query = q, .on_enter = count_enter, .ctx = &later });
    freeing_ctx f = { 0 };
    tecs_cache_t *other = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = all });
    f.self = tecs_cache_new(w, &(tecs_cache_desc_t){
        .query = q, .filter = all, .on_enter = free_self, .on_leave = free_self, .ctx = &f });
    f.other = other;                            /* next in the world's list */
    CHECK(stay && f.self && other);
    tecs_filter_free(all);
    CHECK_ERR(tecs_index_free(x), TECS_EBUSY);  /* the two caches use it */
    tecs_entity_t e = new_with(w, hp);
    CHECK_EQ(f.calls, 1);
    CHECK_ERR(f.err, TECS_OK);
    CHECK_ERR(tecs_index_free(x), TECS_OK);     /* both freed once it returned */
    CHECK_EQ(later, 1);                         /* the others still got it */
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    new_with(w, hp);
    CHECK_EQ(f.calls, 1);
    CHECK_EQ(later, 2);
    CHECK_EQ(tecs_cache_count(stay), 1);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_EBUSY);  /* stay uses it */
    CHECK_ERR(tecs_cache_free(stay), TECS_OK);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* on_leave, while the entity leaves by a destroy queued in an iteration. */
TEST(lifetime_cache_freed_from_its_on_leave)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_entity_t e = new_with(w, hp);
    tecs_index_t *x = hp_index(w, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *all = every(w, x);
    freeing_ctx f = { 0 };
    f.self = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = all,
                                                     .on_leave = free_self, .ctx = &f });
    tecs_filter_free(all);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK(tecs_iter_next(&it));
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK(!tecs_iter_next(&it));                /* ends: the destroy applies */
    CHECK_EQ(f.calls, 1);
    CHECK_ERR(f.err, TECS_OK);
    CHECK_ERR(tecs_index_free(x), TECS_OK);     /* the cache is gone */
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

typedef struct self_order {
    tecs_comp_t key;
    tecs_cache_t *c;            /* set once made                            */
    int refused;
} self_order;

/* An order function that tries to free its own cache. */
static int order_and_free(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    self_order *o = ctx;
    if (o->c && tecs_cache_free(o->c) == TECS_EBUSY)
        o->refused++;
    return by_key(w, a, b, &o->key);
}

/* From its own order function (a sort, an insertion) the free is refused. */
TEST(lifetime_cache_free_refused_from_its_order_function)
{
    tecs_world_t *w = tw_new();
    self_order o = { .key = TECS_COMPONENT(w, Key) };
    for (int i = 0; i < 3; i++)
        TECS_SET(w, tecs_new(w), o.key, Key, { i });
    tecs_query_t *q = TECS_QUERY(w, { .comp = o.key });
    o.c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .order = order_and_free,
                                                  .ctx = &o });
    CHECK(o.c != NULL);
    TECS_SET(w, tecs_new(w), o.key, Key, { -1 });   /* an insertion */
    CHECK(o.refused > 0);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        for (int32_t r = 0; r < it.count; r++)
            TECS_FIELD(&it, Key, 0)[r].k = 10 - r;  /* a sort at the end */
    int before = o.refused;
    CHECK_EQ(tecs_cache_count(o.c), 4);
    CHECK(o.refused >= before);
    TW_CHECK(w);
    tecs_cache_t *c = o.c;
    o.c = NULL;
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

/* ---- filters freed while iterated -------------------------------------- */

/* A filter freed while its iteration is open is freed when the iteration
** ends, not kept until the world is freed; the iteration goes on to its
** end. */
TEST(lifetime_filter_freed_while_iterated_goes_when_the_iteration_ends)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    hp_entities(w, hp, 8);
    tecs_index_t *x = hp_index(w, hp);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    size_t mem = 0;
    for (int frame = 0; frame < 50; frame++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(3));
        tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
        tecs_filter_free(f);                    /* while its iteration is open */
        int32_t rows = 0;
        while (tecs_iter_next(&it))
            rows += it.count;
        CHECK_EQ(rows, 3);
        if (frame == 0)
            mem = tecs_world_memory(w);         /* scratch made by the first */
        CHECK_EQ(tecs_world_memory(w), mem);
    }
    /* Ended early, through a copy. */
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(0));
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&it));
    tecs_filter_free(f);
    CHECK(tecs_world_memory(w) > mem);
    tecs_iter_fini(&copy);
    CHECK_EQ(tecs_world_memory(w), mem);
    CHECK(!tecs_iter_next(&it));
    TW_CHECK(w);
    CHECK_ERR(tecs_index_free(x), TECS_OK);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}
