/* Error reporting as a user meets it: the last error describes the latest
** call that can fail (TECS_OK after a success), counts that can fail say -1,
** and messages name the component and the entity they are about. */
#include "test.h"

#include <stddef.h>

/* Make a call fail, so that an error a later success left behind shows. */
static void spoil(tecs_world_t *w)
{
    CHECK_ERR(tecs_destroy(w, 12345), TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
}

/* After a failed call, `call` succeeds and the last error says so. */
#define OK_AFTER_FAILURE(w, call)                                           \
    do {                                                                    \
        spoil(w);                                                           \
        (void)(call);                                                       \
        if (tecs_last_error(w) != TECS_OK)                                  \
            fprintf(stderr, "  %s: %s\n", #call, tecs_last_error_msg(w));   \
        CHECK_EQ(tecs_last_error(w), TECS_OK);                              \
        CHECK(strcmp(tecs_last_error_msg(w), tecs_strerror(TECS_OK)) == 0); \
    } while (0)

static void sys_noop(tecs_iter_t *it)
{
    (void)it;
}

static void obs_noop(const tecs_event_t *ev)
{
    (void)ev;
}

static bool each_noop(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields, (void)ctx;
    return false;
}

/* An initializer: after a failed call, tecs_init_construct succeeds and
** the last error says so (ctx: the world, and the component). */
typedef struct init_probe {
    tecs_world_t *w;
    tecs_comp_t comp;
    tecs_err_t seen;
} init_probe;

static void init_probe_fn(tecs_init_t *init, void *ctx)
{
    init_probe *p = ctx;
    CHECK(tecs_get(p->w, 12345, p->comp) == NULL);
    CHECK(tecs_init_construct(init, p->comp) != NULL);
    p->seen = tecs_last_error(p->w);
}

/* Every kind of call that can fail, made to succeed right after a failure,
** leaves TECS_OK: entities, components, archetypes, queries, indexes,
** filters, caches, observers, systems, delayed changes and the check. */
TEST(errors_success_after_failure_reads_ok)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = 0, hp = 0;
    OK_AFTER_FAILURE(w, pos = TECS_COMPONENT(w, Position));
    OK_AFTER_FAILURE(w, hp = TECS_COMPONENT(w, Health));
    OK_AFTER_FAILURE(w, tecs_component_lookup(w, "Position"));
    tecs_archetype_t *a = NULL;
    OK_AFTER_FAILURE(w, a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp }));
    OK_AFTER_FAILURE(w, tecs_archetype_reserve(w, a, 10));
    tecs_entity_t e = 0;
    OK_AFTER_FAILURE(w, e = tecs_new(w));
    OK_AFTER_FAILURE(w, tecs_new_in(w, a));
    init_probe ip = { w, pos, TECS_EINVAL };
    OK_AFTER_FAILURE(w, tecs_new_with(w, a, init_probe_fn, &ip));
    CHECK_EQ(ip.seen, TECS_OK);
    OK_AFTER_FAILURE(w, tecs_new_bulk(w, a, 3, NULL, 0, NULL));
    OK_AFTER_FAILURE(w, TECS_SET(w, e, hp, Health, { 5 }));
    OK_AFTER_FAILURE(w, tecs_add(w, e, pos));
    OK_AFTER_FAILURE(w, tecs_get(w, e, pos));
    OK_AFTER_FAILURE(w, tecs_get_mut(w, e, hp));
    OK_AFTER_FAILURE(w, tecs_modified(w, e, hp));
    OK_AFTER_FAILURE(w, tecs_entity_archetype(w, e));
    OK_AFTER_FAILURE(w, tecs_remove(w, e, pos));
    tecs_entity_t d = 0;
    OK_AFTER_FAILURE(w, d = tecs_delayed_new(w, a, 0, NULL));
    OK_AFTER_FAILURE(w, tecs_delayed_apply_new(w));
    OK_AFTER_FAILURE(w, tecs_delayed_destroy(w, d, NULL, NULL));
    OK_AFTER_FAILURE(w, tecs_delayed_apply_destroy(w));
    OK_AFTER_FAILURE(w, tecs_delayed_apply(w));
    tecs_entity_t doomed = tecs_new(w);
    OK_AFTER_FAILURE(w, tecs_destroy(w, doomed));

    tecs_query_t *q = NULL;
    OK_AFTER_FAILURE(w, q = TECS_QUERY(w, { .comp = hp }));
    OK_AFTER_FAILURE(w, tecs_query_free(tecs_query_all(w, 1, &pos)));
    OK_AFTER_FAILURE(w, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 0));
    OK_AFTER_FAILURE(w, tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_noop, NULL));
    tecs_iter_t it;
    OK_AFTER_FAILURE(w, it = TECS_ITER(w, .query = q));
    OK_AFTER_FAILURE(w, tecs_iter_next(&it));
    tecs_iter_fini(&it);

    tecs_index_t *x = NULL;
    OK_AFTER_FAILURE(w, x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 }));
    tecs_comp_t id = TECS_COMPONENT_NAMED(w, "Id", Health);
    CHECK_ERR(TECS_SET(w, e, id, Health, { 5 }), TECS_OK);
    tecs_index_t *u = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = id, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    CHECK(u != NULL);
    OK_AFTER_FAILURE(w, tecs_index_count(x));
    OK_AFTER_FAILURE(w, tecs_index_lookup(u, tecs_key_int(5)));
    tecs_filter_t *f = NULL;
    OK_AFTER_FAILURE(w, f = tecs_filter_new(w));
    tecs_cond_t c1 = -1, c2 = -1;
    OK_AFTER_FAILURE(w, c1 = tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(0)));
    OK_AFTER_FAILURE(w, c2 = tecs_filter_between(f, x, tecs_key_int(0), tecs_key_int(9)));
    OK_AFTER_FAILURE(w, tecs_filter_in(f, x, 1, (tecs_key_t[]){ tecs_key_int(5) }));
    OK_AFTER_FAILURE(w, tecs_filter_not(f, c1));
    OK_AFTER_FAILURE(w, tecs_filter_or(f, c1, c2));
    tecs_cond_t both = tecs_filter_and(f, c1, c2);
    OK_AFTER_FAILURE(w, tecs_filter_root(f, both));
    OK_AFTER_FAILURE(w, tecs_filter_order(f, x, true));
    OK_AFTER_FAILURE(w, tecs_filter_test(f, e));
    OK_AFTER_FAILURE(w, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0));
    OK_AFTER_FAILURE(w, tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, each_noop, NULL));
    OK_AFTER_FAILURE(w, it = TECS_ITER(w, .query = q, .where = f));
    tecs_iter_fini(&it);
    tecs_cache_t *k = NULL;
    OK_AFTER_FAILURE(w, k = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f }));
    OK_AFTER_FAILURE(w, tecs_cache_count(k));
    OK_AFTER_FAILURE(w, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = k) }, NULL, 0));
    OK_AFTER_FAILURE(w, it = TECS_ITER(w, .cache = k));
    tecs_iter_fini(&it);
    tecs_cache_free(k);
    OK_AFTER_FAILURE(w, k = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q }));
    tecs_cache_free(k);
    tecs_filter_free(f);
    OK_AFTER_FAILURE(w, tecs_index_free(u));
    tecs_index_t *sp = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y), .cell_size = 4 });
    CHECK(sp != NULL);
    f = tecs_filter_new(w);
    OK_AFTER_FAILURE(w, tecs_filter_radius(f, sp, 0, 0, 10));
    OK_AFTER_FAILURE(w, tecs_filter_box(f, sp, 0, 0, 10, 10));
    tecs_filter_free(f);

    tecs_observer_t o = 0;
    OK_AFTER_FAILURE(w, o = tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = pos, .callback = obs_noop }));
    OK_AFTER_FAILURE(w, tecs_observer_free(w, o));
    OK_AFTER_FAILURE(w, tecs_component_hooks(w, pos, &(tecs_hooks_t){ .on_add = obs_noop }));
    tecs_system_t s = 0;
    OK_AFTER_FAILURE(w, s = tecs_system_new(w, &(tecs_system_desc_t){ .name = "noop",
                                                                 .run = sys_noop }));
    OK_AFTER_FAILURE(w, tecs_system_lookup(w, "noop"));
    OK_AFTER_FAILURE(w, tecs_system_enable(w, s, false));
    tecs_system_stats_t st;
    OK_AFTER_FAILURE(w, tecs_system_stats(w, s, &st));
    OK_AFTER_FAILURE(w, tecs_progress(w, 0.5));
    OK_AFTER_FAILURE(w, tecs_system_free(w, s));
    OK_AFTER_FAILURE(w, tecs_world_check(w));
    tw_free(w);
}

/* The calls that hand out nothing on failure: after them the last error
** tells "nothing matched" (TECS_OK) from "failed" (why), even when an
** earlier call had failed. */
TEST(errors_where_and_cache_tell_no_results_from_failure)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    for (int i = 0; i < 10; i++)
        CHECK_ERR(TECS_SET(w, tecs_new(w), hp, Health, { i }), TECS_OK);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_filter_t *none = tecs_filter_new(w);           /* valid, matches nothing */
    CHECK(tecs_filter_cmp(none, x, TECS_GT, tecs_key_int(100)) >= 0);
    tecs_filter_t *bad = tecs_filter_new(w);            /* a uint key: refused */
    CHECK_EQ(tecs_filter_cmp(bad, x, TECS_EQ, tecs_key_uint(3)), -1);
    CHECK_EQ(tecs_filter_error(bad), TECS_EINVAL);

    spoil(w);
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = none);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(!tecs_iter_next(&it));
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    it = TECS_ITER(w, .query = q, .where = bad);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(!tecs_iter_next(&it));                        /* an ended iteration */
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);          /* leaves it */
    spoil(w);
    CHECK(!tecs_filter_test(none, tecs_new(w)));        /* no match */
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(!tecs_filter_test(bad, tecs_new(w)));         /* failed */
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);

    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = none });
    CHECK(c != NULL);
    spoil(w);
    it = TECS_ITER(w, .cache = c);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    tecs_iter_t again = TECS_ITER(w, .cache = c);             /* while it is iterated */
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    CHECK(!tecs_iter_next(&again));
    CHECK(!tecs_iter_next(&it));
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK(tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = bad }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    tecs_cache_free(c);
    tecs_filter_free(none);
    tecs_filter_free(bad);
    tw_free(w);
}

/* tecs_index_count and tecs_cache_count say -1 when they fail (NULL, out
** of memory while rebuilding), so that 0 means empty. */
TEST(errors_counts_that_fail_return_minus_one)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 0);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    CHECK_EQ(tecs_index_count(NULL), -1);
    CHECK_EQ(tecs_cache_count(NULL), -1);

    /* An index left asleep by a burst of sets is rebuilt at its next use. */
    enum { N = 400 };
    tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, ids[i], hp, Health, { i }), TECS_OK);
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    CHECK_EQ(tecs_index_count(x), N);
    for (int i = 0; i < N; i++)
        CHECK_ERR(TECS_SET(w, ids[i], hp, Health, { (i * 7) % N }), TECS_OK);
    al.fail_at = al.calls + 1;
    al.fail_after = true;
    CHECK_EQ(tecs_index_count(x), -1);
    CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
    al.fail_at = 0;
    CHECK_EQ(tecs_index_count(x), N);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_ERR(tecs_index_free(x), TECS_OK);

    /* A cache whose update ran out of memory is rebuilt at its next use. */
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    CHECK_ERR(tecs_archetype_reserve(w, a, 64), TECS_OK);
    tecs_entity_t e = tecs_new(w), warm = tecs_new(w);
    CHECK_ERR(tecs_add(w, warm, pos), TECS_OK);         /* the edges exist */
    CHECK_ERR(tecs_remove(w, warm, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, hp), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, hp), TECS_OK);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK_EQ(tecs_cache_count(c), 0);
    al.fail_at = al.calls + 1;
    al.fail_after = true;
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);            /* the cache goes stale */
    long failures = al.failures;
    CHECK(failures > 0);
    CHECK_EQ(tecs_cache_count(c), -1);
    CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, NULL, 0), -1);
    al.fail_at = 0;
    CHECK_EQ(tecs_cache_count(c), 1);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    TW_CHECK(w);
    tecs_cache_free(c);
    tw_free(w);
}

/* The last error's message holds every one of the n strings. */
static void msg_has(tecs_world_t *w, int line, int n, const char *const *parts)
{
    const char *msg = tecs_last_error_msg(w);
    for (int i = 0; i < n; i++) {
        if (strstr(msg, parts[i]) == NULL) {
            fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", msg, parts[i]);
            test_fail(__FILE__, line, "message");
        }
    }
}

#define MSG_HAS(w, ...)                                                      \
    msg_has((w), __LINE__, (int)(sizeof((const char *[]){ __VA_ARGS__ }) /  \
                                 sizeof(const char *)),                      \
            (const char *[]){ __VA_ARGS__ })

/* "entity 12:3" for e. */
static const char *ent_str(tecs_entity_t e)
{
    static char buf[4][32];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, sizeof buf[0], "entity %u:%u", TECS_ENTITY_INDEX(e), TECS_ENTITY_GENERATION(e));
    return b;
}

typedef struct marker_ctx {
    tecs_world_t *w;
    tecs_comp_t tag;
    char msg[200];
} marker_ctx;

/* Inside an initializer: asks for storage of a tag and keeps the message. */
static void init_tag(tecs_init_t *init, void *ctx)
{
    marker_ctx *m = ctx;
    CHECK(tecs_init_construct(init, m->tag) == NULL);
    snprintf(m->msg, sizeof m->msg, "%s", tecs_last_error_msg(m->w));
}

/* Messages name the component (its name and id) and the entity. */
TEST(errors_messages_name_the_component_and_the_entity)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t tag = TECS_TAG(w, Marker);
    tecs_entity_t e = tecs_new(w);
    tecs_entity_t dead = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);

    CHECK(tecs_get(w, e, pos) == NULL);
    MSG_HAS(w, ent_str(e), "does not have", "component 'Position' (1)");
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_EEXIST);
    MSG_HAS(w, ent_str(e), "already has", "component 'Position' (1)");
    CHECK_ERR(tecs_remove(w, e, vel), TECS_ENOENT);
    MSG_HAS(w, ent_str(e), "does not have", "component 'Velocity' (2)");
    CHECK_ERR(tecs_add(w, e, tag), TECS_OK);
    CHECK(tecs_get(w, e, tag) == NULL);
    MSG_HAS(w, "component 'Marker' (3)", "is a tag");
    CHECK_ERR(tecs_set(w, e, pos, NULL), TECS_EINVAL);
    MSG_HAS(w, "NULL value", "component 'Position' (1)");
    CHECK_ERR(tecs_destroy(w, dead), TECS_EDEAD);
    MSG_HAS(w, ent_str(dead), "is not alive");
    CHECK_ERR(tecs_set(w, dead, pos, &(Position){ 1, 2 }), TECS_EDEAD);
    MSG_HAS(w, ent_str(dead));
    CHECK_ERR(tecs_delayed_destroy(w, dead, NULL, NULL), TECS_EDEAD);
    MSG_HAS(w, ent_str(dead));

    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, tag });
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ vel, vel }) == NULL);
    MSG_HAS(w, "component 'Velocity' (2)", "repeated");
    CHECK_ERR(tecs_new_bulk(w, a, 2, NULL, 1, &(tecs_value_t){ vel, &(Velocity){ 0, 0 } }),
              TECS_ENOCOMP);
    MSG_HAS(w, "component 'Velocity' (2)", "not in the archetype");
    marker_ctx m = { w, tag, "" };
    tecs_entity_t born = tecs_new_with(w, a, init_tag, &m);
    CHECK(born != 0);
    CHECK(strstr(m.msg, "component 'Marker' (3)") && strstr(m.msg, ent_str(born)));

    /* A unique key taken: the entity holding it is named. */
    tecs_comp_t id = TECS_COMPONENT_NAMED(w, "Id", Health);
    tecs_index_t *u = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = id, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32, .unique = true });
    CHECK_ERR(TECS_SET(w, e, id, Health, { 7 }), TECS_OK);
    CHECK_ERR(TECS_SET(w, born, id, Health, { 7 }), TECS_EEXIST);
    MSG_HAS(w, "component 'Id' (4)", ent_str(e), "holds that key");
    CHECK_EQ(tecs_index_lookup(u, tecs_key_int(8)), 0);
    MSG_HAS(w, "no entity has this key", "hash index on component 'Id' (4)");
    tw_free(w);
}

/* One message per cause: the code's own text is general, and each cause
** that shares a code says what it is. */
TEST(errors_each_cause_has_its_own_message)
{
    CHECK(strstr(tecs_strerror(TECS_EBUSY), "iteration") == NULL);
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t tag = TECS_TAG(w, Marker);
    typedef struct Spot { float x, y; } Spot;
    tecs_comp_t spot = TECS_COMPONENT(w, Spot);
    for (int i = 0; i < 4; i++)
        CHECK_ERR(TECS_SET(w, tecs_new(w), hp, Health, { i }), TECS_OK);

    /* An index on a tag, and a field that does not fit. */
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = tag, .type = TECS_KEY_I32 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    MSG_HAS(w, "component 'Marker' (2) is a tag: it has no fields to index");
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I64 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    MSG_HAS(w, "int64 field (8 bytes) at offset 0 does not fit", "'Health' (1) of 4 bytes");

    /* A key of the wrong class, and a NaN key. */
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *h = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    tecs_index_t *sx = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = spot, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Spot, x) });
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(f, x, TECS_EQ, tecs_key_uint(3)), -1);
    MSG_HAS(w, "key class uint for int32 keys of the ordered index on component 'Health' (1)");
    CHECK_EQ(tecs_filter_cmp(f, sx, TECS_EQ, tecs_key_real(0.0 / 0.0)), -1);
    MSG_HAS(w, "the key is NaN");
    CHECK(strstr(tecs_last_error_msg(w), "class") == NULL);
    CHECK_EQ(tecs_filter_cmp(f, h, TECS_LT, tecs_key_int(3)), -1);
    MSG_HAS(w, "a hash index takes == (TECS_EQ) and in only");
    /* The filter keeps its first error and says it when used. */
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_iter_t it = TECS_ITER(w, .query = q, .where = f);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    MSG_HAS(w, "the filter failed while being built", "key class uint for int32 keys");
    CHECK(!tecs_iter_next(&it));
    tecs_filter_free(f);

    /* Three causes of TECS_EBUSY, three messages. */
    f = tecs_filter_new(w);
    CHECK(tecs_filter_cmp(f, x, TECS_GE, tecs_key_int(0)) >= 0);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
    CHECK_ERR(tecs_index_free(x), TECS_EBUSY);
    MSG_HAS(w, "a cache uses the ordered index on component 'Health' (1)");
    char cache_uses[200];
    snprintf(cache_uses, sizeof cache_uses, "%s", tecs_last_error_msg(w));
    it = TECS_ITER(w, .cache = c);
    tecs_iter_t again = TECS_ITER(w, .cache = c);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    MSG_HAS(w, "the cache is being iterated");
    CHECK(!tecs_iter_next(&again));
    tecs_iter_t where = TECS_ITER(w, .query = q, .where = f);
    tecs_iter_t where2 = TECS_ITER(w, .query = q, .where = f);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    MSG_HAS(w, "the filter is being iterated");
    CHECK(strcmp(cache_uses, tecs_last_error_msg(w)) != 0);
    CHECK(!tecs_iter_next(&where2));
    CHECK_ERR(tecs_delayed_apply(w), TECS_EBUSY);
    MSG_HAS(w, "delayed changes cannot apply inside an iteration");
    tecs_iter_fini(&where);
    tecs_iter_fini(&it);
    tecs_cache_free(c);
    tecs_filter_free(f);
    tw_free(w);
}

/* The size rule: a size that is not a multiple of the alignment
** (which C's sizeof never gives) is refused, and the message says so; the
** other alignment errors say theirs. */
TEST(errors_size_must_be_a_multiple_of_the_alignment)
{
    tecs_world_t *w = tw_new();
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Odd", .size = 8,
                                                         .align = 64 }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    MSG_HAS(w, "'Odd'", "size 8 is not a multiple of its alignment 64");
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Odd", .size = 8,
                                                         .align = 3 }), 0);
    MSG_HAS(w, "'Odd'", "alignment 3 is not a power of two");
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Odd", .size = 128,
                                                         .align = 128 }), 0);
    MSG_HAS(w, "'Odd'", "alignment 128", "TECS_MAX_ALIGN (64)");
    typedef struct Wide { _Alignas(64) float x; } Wide;
    CHECK(TECS_COMPONENT(w, Wide) != 0);                /* what sizeof gives */
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Line", .size = 64,
                                                      .align = 64 }) != 0);
    tw_free(w);
}

/* The term rule: a component has one term at most, whatever the
** two terms say (read and write, or the same term twice); the message names
** the component and both terms. */
TEST(errors_one_term_per_component)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    CHECK(TECS_QUERY(w, { .comp = vel }, { .comp = pos, .access = TECS_READ },
                     { .comp = pos }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    MSG_HAS(w, "component 'Position' (1) is in terms 1 and 2", "one term");
    CHECK(TECS_QUERY(w, { .comp = pos }, { .comp = pos }) == NULL);
    MSG_HAS(w, "component 'Position' (1) is in terms 0 and 1");
    CHECK(TECS_QUERY(w, { .comp = pos }, { .comp = vel, .access = TECS_READ }) != NULL);
    tw_free(w);
}

/* An observer whose own call fails: it sees its error, the outer call's
** caller does not (ctx: where to keep what the observer saw). */
static void obs_fails_inside(const tecs_event_t *ev)
{
    tecs_err_t *seen = ev->ctx;
    CHECK(tecs_get(ev->world, 12345, ev->comp) == NULL);
    *seen = tecs_last_error(ev->world);
}

static bool each_fails_inside(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)e, (void)fields;
    CHECK_ERR(tecs_destroy(w, 12345), TECS_EDEAD);
    *(tecs_err_t *)ctx = tecs_last_error(w);
    return false;
}

/* A callback's failed calls are its own: after the outer call succeeds the
** last error is TECS_OK, while inside the callback it was the failure. */
TEST(errors_of_calls_inside_callbacks_stay_inside)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_err_t seen = TECS_OK;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
                                                     .callback = obs_fails_inside,
                                                     .ctx = &seen }) != 0);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_EQ(seen, TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w), TECS_OK);

    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    seen = TECS_OK;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_fails_inside, &seen), TECS_OK);
    CHECK_EQ(seen, TECS_EDEAD);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    tw_free(w);
}

/* A queued change skipped because its entity died meanwhile is no error:
** the apply and the flush that skip it leave TECS_OK. */
TEST(errors_skipped_queued_changes_leave_no_error)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_delayed_destroy(w, e, NULL, NULL), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);

    tecs_entity_t f = tecs_new(w);
    tecs_query_t *qa = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (const tecs_term_t[]){ { .comp = pos, .oper = TECS_NONE } }, .term_count = 1 });
    tecs_iter_t it = TECS_ITER(w, .query = qa);
    CHECK_ERR(tecs_destroy(w, f), TECS_OK);             /* queued */
    CHECK_ERR(tecs_add(w, f, pos), TECS_OK);            /* queued, skipped at the flush */
    tecs_iter_fini(&it);
    CHECK(!tecs_is_alive(w, f));
    CHECK_EQ(tecs_dropped_changes(w), 0);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    tw_free(w);
}

/* tecs_set of a tag the entity has is a no-op that succeeds; queued (here
** for a birth queued in an iteration, applied apart from it) it is no drop
** either: the flush applies everything and leaves TECS_OK. */
TEST(errors_queued_set_of_a_tag_it_has_is_no_drop)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = TECS_TAG(w, Marked);
    CHECK_ERR(tecs_add(w, tecs_new(w), pos), TECS_OK);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    tecs_entity_t n = tecs_new_in(w, tecs_archetype_get(w, 1, &tag));     /* queued */
    CHECK(n != 0);
    CHECK(tecs_new(w) != 0);                    /* keeps the set apart from the birth */
    CHECK_ERR(tecs_set(w, n, tag, NULL), TECS_OK);
    tecs_iter_fini(&it);
    CHECK(tecs_has(w, n, tag));
    CHECK_EQ(tecs_dropped_changes(w), 0);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    tw_free(w);
}

/* A copy hook that queues the add of a component its entity already has
** (a change the flush drops). */
typedef struct copy_drops {
    tecs_world_t *w;
    tecs_entity_t has;
    tecs_comp_t comp;
    int ran;
} copy_drops;

static void copy_and_add_again(void *dst, const void *src, int32_t n, void *ctx)
{
    memcpy(dst, src, (size_t)n * sizeof(Velocity));
    copy_drops *c = ctx;
    c->ran++;
    (void)tecs_add(c->w, c->has, c->comp);
}

/* tecs_delayed_new that runs out of memory after its value's copy hook
** queued a change: the change still applies (here it is dropped), and the
** last error stays the call's own TECS_ENOMEM, not the flush's report. */
TEST(errors_failed_call_keeps_its_error_over_the_flush)
{
    int hits = 0;
    for (long k = 1; k <= 40; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        copy_drops ctx = { .w = w, .comp = TECS_COMPONENT(w, Position) };
        tecs_comp_t vel = tecs_component_new(w, &(tecs_component_desc_t){
            .name = "Vel", .size = sizeof(Velocity), .align = _Alignof(Velocity),
            .copy = copy_and_add_again, .hook_ctx = &ctx });
        ctx.has = tecs_new(w);
        CHECK_ERR(tecs_add(w, ctx.has, ctx.comp), TECS_OK);
        tecs_archetype_t *a = tecs_archetype_get(w, 1, &vel);
        CHECK(a != NULL);
        al.fail_at = al.calls + k;
        tecs_entity_t e = tecs_delayed_new(w, a, 1, &(tecs_value_t){ vel, &(Velocity){ 1, 2 } });
        al.fail_at = 0;
        if (e == 0) {
            CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
            hits += ctx.ran > 0;
        }
        tw_free(w);
    }
    CHECK(hits > 0);
}

/* A cache that runs out of memory while it follows a change goes stale and
** is rebuilt at its next use: the call that made the change succeeded, and
** its last error says so. */
TEST(errors_stale_cache_leaves_the_call_ok)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 0);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    CHECK_ERR(tecs_archetype_reserve(w, tecs_archetype_get(w, 1, &pos), 64), TECS_OK);
    tecs_entity_t e = tecs_new(w), warm = tecs_new(w);
    CHECK_ERR(tecs_add(w, warm, pos), TECS_OK);         /* the edges exist */
    CHECK_ERR(tecs_remove(w, warm, pos), TECS_OK);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK_EQ(tecs_cache_count(c), 0);
    al.fail_at = al.calls + 1;
    al.fail_after = true;
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);            /* the cache goes stale */
    CHECK(al.failures > 0);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    al.fail_at = 0;
    CHECK_EQ(tecs_cache_count(c), 1);
    CHECK_ERR(tecs_cache_free(c), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}
