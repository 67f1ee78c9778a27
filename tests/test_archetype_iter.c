/* Iterating exactly one archetype: its entities only, fields in component
** order, reverse, early stop, deferral, nesting, copies, bad input. */
#include "test.h"

typedef struct aworld {
    tecs_world_t *w;
    tecs_comp_t pos, vel, tag;
    tecs_archetype_t *p, *pv, *pt, *pvt;        /* {pos} and its supersets */
} aworld;

static void aworld_init(aworld *a, int32_t rows)
{
    a->w = tw_new_ex(NULL, rows);
    a->pos = TECS_COMPONENT(a->w, Position);
    a->vel = TECS_COMPONENT(a->w, Velocity);
    a->tag = TECS_TAG(a->w, Tag);
    a->p = tecs_archetype_get(a->w, 1, &a->pos);
    a->pv = tecs_archetype_get(a->w, 2, (tecs_comp_t[]){ a->vel, a->pos });
    a->pt = tecs_archetype_get(a->w, 2, (tecs_comp_t[]){ a->pos, a->tag });
    a->pvt = tecs_archetype_get(a->w, 3, (tecs_comp_t[]){ a->tag, a->vel, a->pos });
    CHECK(a->p && a->pv && a->pt && a->pvt);
}

/* One entity in arch with these values; 0 on error. */
static tecs_entity_t new_one(tecs_world_t *w, tecs_archetype_t *arch, int32_t nvals,
                             const tecs_value_t *vals)
{
    tecs_entity_t e = 0;
    return tecs_new_bulk(w, arch, 1, &e, nvals, vals) == TECS_OK ? e : 0;
}

/* n entities in arch with Position {i, base + i}. */
static void fill(aworld *a, tecs_archetype_t *arch, int n, float base, tecs_entity_t *out)
{
    for (int i = 0; i < n; i++) {
        Position p = { (float)i, base + (float)i };
        tecs_entity_t e = new_one(a->w, arch, 1, &(tecs_value_t){ a->pos, &p });
        CHECK(e != 0);
        if (out)
            out[i] = e;
    }
}

/* Every entity of the iteration, in the order steps and rows come. */
static int32_t walk(tecs_iter_t *it, tecs_entity_t *out, int32_t cap)
{
    int32_t n = 0;
    while (tecs_iter_next(it))
        for (int32_t r = 0; r < it->count; r++, n++)
            if (n < cap)
                out[n] = it->entities[r];
    return n;
}

TEST(archetype_iter_visits_only_its_entities)
{
    aworld a;
    aworld_init(&a, 0);
    tecs_entity_t mine[5];
    fill(&a, a.pv, 4, 100, NULL);
    fill(&a, a.p, 5, 0, mine);
    fill(&a, a.pt, 3, 200, NULL);
    fill(&a, a.pvt, 2, 300, NULL);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.p);
    CHECK_EQ(tecs_last_error(a.w), TECS_OK);
    CHECK(tecs_is_deferred(a.w));
    int32_t n = 0;
    while (tecs_iter_next(&it)) {
        Position *p = TECS_FIELD(&it, Position, 0);
        CHECK(p != NULL && tecs_field_is_set(&it, 0));
        CHECK(tecs_field(&it, 1) == NULL && !tecs_field_is_set(&it, 1));
        for (int32_t r = 0; r < it.count; r++, n++) {
            CHECK_EQ(it.entities[r], mine[n]);
            CHECK_EQ(p[r].y, (float)n);
        }
    }
    CHECK_EQ(n, 5);
    CHECK(!tecs_is_deferred(a.w));
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Term i is the i-th component in tecs_archetype_components order; a tag's
** field is NULL but set. */
TEST(archetype_iter_fields_in_component_order)
{
    aworld a;
    aworld_init(&a, 0);
    Position p = { 1, 2 };
    Velocity v = { 3, 4 };
    tecs_entity_t e = new_one(a.w, a.pvt, 2, (tecs_value_t[]){ { a.vel, &v },
                                                                      { a.pos, &p } });
    const tecs_comp_t *comps;
    CHECK_EQ(tecs_archetype_components(a.pvt, &comps), 3);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.pvt);
    CHECK(tecs_iter_next(&it));
    CHECK_EQ(it.count, 1);
    CHECK_EQ(it.entities[0], e);
    for (int32_t t = 0; t < 3; t++) {
        CHECK(tecs_field_is_set(&it, t));
        if (comps[t] == a.tag)
            CHECK(tecs_field(&it, t) == NULL);
        else if (comps[t] == a.pos)
            CHECK_EQ(TECS_FIELD(&it, Position, t)->y, 2);
        else
            CHECK_EQ(TECS_FIELD(&it, Velocity, t)->x, 3);
    }
    CHECK(!tecs_field_is_set(&it, 3));
    CHECK(!tecs_iter_next(&it));
    CHECK(!tecs_field_is_set(&it, 0));               /* ended */
    tw_free(a.w);
}

typedef struct each_log {
    tecs_entity_t got[256];
    float y[256];
    int32_t n, stop_at;
    bool deferred;
} each_log;

static bool log_one(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    each_log *l = ctx;
    l->deferred = l->deferred || tecs_is_deferred(w);
    l->y[l->n] = fields[0] ? ((const Position *)fields[0])->y : -1;
    l->got[l->n++] = e;
    return l->n == l->stop_at;
}

/* log_one for an archetype without components (no fields[0]). */
static bool log_entity(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)fields;
    each_log *l = ctx;
    l->got[l->n++] = e;
    return l->n == l->stop_at;
}

/* The chunk iterator in reverse steps from the last chunk, each step's rows
** in memory order; each and collect in reverse give the rows last to first. */
TEST(archetype_iter_reverse_across_chunks)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[70];
    fill(&a, a.p, 70, 0, e);
    fill(&a, a.pv, 20, 0, NULL);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.p, .reverse = true);
    int32_t steps = 0, seen = 0;
    while (tecs_iter_next(&it)) {
        int32_t first = (4 - steps) * 16;          /* chunks 4, 3, 2, 1, 0 */
        CHECK_EQ(it.count, steps == 0 ? 6 : 16);
        for (int32_t r = 0; r < it.count; r++)
            CHECK_EQ(it.entities[r], e[first + r]);
        seen += it.count;
        steps++;
    }
    CHECK_EQ(steps, 5);
    CHECK_EQ(seen, 70);
    each_log l = { .stop_at = -1 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .reverse = true) }, log_one, &l), TECS_OK);
    CHECK_EQ(l.n, 70);
    CHECK(l.deferred);
    for (int32_t i = 0; i < 70; i++) {
        CHECK_EQ(l.got[i], e[69 - i]);
        CHECK_EQ(l.y[i], (float)(69 - i));
    }
    tecs_entity_t out[80];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .reverse = true) }, out, 80), 70);
    for (int32_t i = 0; i < 70; i++)
        CHECK_EQ(out[i], e[69 - i]);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, out, 10), 70);   /* cap: first 10 */
    for (int32_t i = 0; i < 10; i++)
        CHECK_EQ(out[i], e[i]);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, NULL, 0), 70);
    CHECK(!tecs_is_deferred(a.w));
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Many chunks, with holes filled by swaps: every entity once. */
TEST(archetype_iter_many_chunks)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[200];
    fill(&a, a.pt, 200, 0, e);
    for (int i = 0; i < 200; i += 3)
        CHECK_ERR(tecs_destroy(a.w, e[i]), TECS_OK);
    tecs_entity_t got[200];
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.pt);
    int32_t steps = 0, n = 0;
    while (tecs_iter_next(&it)) {
        CHECK(it.count > 0 && it.count <= 16);
        for (int32_t r = 0; r < it.count; r++)
            got[n++] = it.entities[r];
        steps++;
    }
    CHECK_EQ(n, tecs_archetype_entity_count(a.pt));
    CHECK_EQ(n, 133);
    CHECK_EQ(steps, 9);
    for (int32_t i = 0; i < n; i++) {
        CHECK(tecs_is_alive(a.w, got[i]));
        for (int32_t j = 0; j < i; j++)
            CHECK(got[i] != got[j]);
    }
    tw_free(a.w);
}

/* each stops at the first true; the iteration is ended, the world not
** deferred any more. */
TEST(archetype_each_early_stop)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[40];
    fill(&a, a.p, 40, 0, e);
    each_log l = { .stop_at = 3 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, log_one, &l), TECS_OK);
    CHECK_EQ(l.n, 3);
    CHECK_EQ(l.got[2], e[2]);
    l = (each_log){ .stop_at = 20 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .reverse = true) }, log_one, &l), TECS_OK);
    CHECK_EQ(l.n, 20);
    CHECK_EQ(l.got[19], e[20]);
    CHECK(!tecs_is_deferred(a.w));
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Destroy and add during the iteration: queued, the rows stay put, applied
** when the iteration ends. */
TEST(archetype_iter_defers_changes)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[50];
    fill(&a, a.p, 50, 0, e);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.p);
    int32_t n = 0;
    while (tecs_iter_next(&it)) {
        for (int32_t r = 0; r < it.count; r++, n++) {
            CHECK_EQ(it.entities[r], e[n]);
            if (n % 2 == 0)
                CHECK_ERR(tecs_destroy(a.w, it.entities[r]), TECS_OK);
            else if (n % 5 == 0)
                CHECK_ERR(tecs_add(a.w, it.entities[r], a.vel), TECS_OK);
        }
        CHECK_EQ(tecs_archetype_entity_count(a.p), 50);
        CHECK(tecs_new_in(a.w, a.p) != 0);           /* born at the end */
    }
    CHECK_EQ(n, 50);
    CHECK(!tecs_is_deferred(a.w));
    /* 25 destroyed, 5 moved to {pos, vel} (n = 5, 15, 25, 35, 45), 4 born */
    CHECK_EQ(tecs_archetype_entity_count(a.p), 50 - 25 - 5 + 4);
    CHECK_EQ(tecs_archetype_entity_count(a.pv), 5);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(tecs_is_alive(a.w, e[i]), i % 2 == 1);
    TW_CHECK(a.w);
    tw_free(a.w);
}

typedef struct destroyer {
    tecs_comp_t vel;
    int32_t n;
} destroyer;

static bool destroy_or_add(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)fields;
    destroyer *d = ctx;
    if (d->n++ % 2)
        CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    else
        CHECK_ERR(tecs_add(w, e, d->vel), TECS_OK);
    CHECK(tecs_is_alive(w, e));                       /* queued */
    return false;
}

TEST(archetype_each_defers_changes)
{
    aworld a;
    aworld_init(&a, 16);
    fill(&a, a.p, 30, 0, NULL);
    destroyer d = { .vel = a.vel };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .reverse = true) }, destroy_or_add, &d), TECS_OK);
    CHECK_EQ(d.n, 30);
    CHECK_EQ(tecs_archetype_entity_count(a.p), 0);
    CHECK_EQ(tecs_archetype_entity_count(a.pv), 15);
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Nested with a query iteration either way round: the changes wait for the
** outermost. */
TEST(archetype_iter_nested_with_query)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[20];
    fill(&a, a.p, 20, 0, e);
    fill(&a, a.pv, 10, 0, NULL);
    tecs_query_t *q = tecs_query_all(a.w, 1, &a.pos);
    tecs_iter_t qi = TECS_ITER(tecs_query_world(q), .query = q);
    CHECK(tecs_iter_next(&qi));
    tecs_iter_t ai = TECS_ITER(a.w, .archetype = a.p, .reverse = true);
    tecs_entity_t got[32];
    CHECK_EQ(walk(&ai, got, 32), 20);
    CHECK_EQ(got[0], e[16]);                          /* last chunk first */
    CHECK_ERR(tecs_destroy(a.w, e[0]), TECS_OK);
    CHECK(tecs_is_deferred(a.w));                     /* the query's is open */
    CHECK_EQ(tecs_world_check(a.w), TECS_EBUSY);
    ai = TECS_ITER(a.w, .archetype = a.p);            /* outlives the query's */
    CHECK(tecs_iter_next(&ai));
    tecs_iter_fini(&qi);
    CHECK(tecs_is_deferred(a.w));                     /* the archetype's is open */
    CHECK(tecs_is_alive(a.w, e[0]));
    tecs_iter_fini(&ai);
    CHECK(!tecs_is_deferred(a.w));
    CHECK(!tecs_is_alive(a.w, e[0]));
    /* the other way round */
    ai = TECS_ITER(a.w, .archetype = a.p);
    CHECK(tecs_iter_next(&ai));
    qi = TECS_ITER(tecs_query_world(q), .query = q);
    CHECK_EQ(walk(&qi, got, 32), 29);
    CHECK_ERR(tecs_destroy(a.w, e[1]), TECS_OK);
    CHECK(tecs_is_alive(a.w, e[1]));
    CHECK(tecs_iter_next(&ai));                       /* 19 rows: two chunks */
    CHECK(tecs_is_alive(a.w, e[1]));
    CHECK(!tecs_iter_next(&ai));
    CHECK(!tecs_is_alive(a.w, e[1]));
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Two archetype iterations of the same archetype open at once. */
TEST(archetype_iter_nested_twice)
{
    aworld a;
    aworld_init(&a, 16);
    fill(&a, a.p, 20, 0, NULL);
    tecs_iter_t outer = TECS_ITER(a.w, .archetype = a.p);
    int32_t n = 0;
    while (tecs_iter_next(&outer)) {
        tecs_entity_t got[32];
        tecs_iter_t inner = TECS_ITER(a.w, .archetype = a.p, .reverse = true);
        CHECK_EQ(walk(&inner, got, 32), 20);
        CHECK_EQ(TECS_FIELD(&outer, Position, 0)[0].y, (float)n);
        n += outer.count;
    }
    CHECK_EQ(n, 20);
    CHECK(!tecs_is_deferred(a.w));
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Copies name the same iteration: the first end ends it for all. */
TEST(archetype_iter_copies)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[40];
    fill(&a, a.p, 40, 0, e);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.p);
    CHECK(tecs_iter_next(&it));
    tecs_iter_t copy = it;
    CHECK(tecs_iter_next(&copy));
    CHECK_EQ(copy.entities[0], e[16]);
    CHECK_ERR(tecs_destroy(a.w, e[0]), TECS_OK);
    tecs_iter_fini(&copy);
    CHECK(!tecs_is_deferred(a.w));
    CHECK(!tecs_is_alive(a.w, e[0]));
    CHECK(!tecs_iter_next(&it));                      /* ended by the copy */
    CHECK(!tecs_field_is_set(&it, 0));
    CHECK_ERR(tecs_world_check(a.w), TECS_OK);
    it = TECS_ITER(a.w, .archetype = a.p);
    copy = it;
    CHECK(tecs_iter_next(&it));
    tecs_iter_fini(&it);
    tecs_iter_fini(&copy);                            /* ended twice */
    CHECK_ERR(tecs_world_check(a.w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(a.w), "ended twice") != NULL);
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* An archetype with no entities, and the empty archetype. */
TEST(archetype_iter_empty)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t got[8];
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.pv);
    CHECK(tecs_is_deferred(a.w));
    CHECK_EQ(walk(&it, got, 8), 0);
    CHECK(!tecs_is_deferred(a.w));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.pv) }, got, 8), 0);
    tecs_archetype_t *none = tecs_archetype_get(a.w, 0, NULL);
    CHECK(none != NULL);
    tecs_entity_t e = tecs_new(a.w);
    fill(&a, a.p, 3, 0, NULL);
    it = TECS_ITER(a.w, .archetype = none);
    CHECK_EQ(walk(&it, got, 8), 1);
    CHECK_EQ(got[0], e);
    CHECK(tecs_field(&it, 0) == NULL);
    each_log l = { .stop_at = -1 };      /* no components: no fields to read */
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = none) }, log_entity, &l), TECS_OK);
    CHECK_EQ(l.n, 1);
    CHECK_EQ(l.got[0], e);
    TW_CHECK(a.w);
    tw_free(a.w);
}

/* Past TECS_MAX_TERMS components, the first TECS_MAX_TERMS are fields. */
TEST(archetype_iter_wide_archetype)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c[40];
    for (int i = 0; i < 40; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", i);
        c[i] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = 4,
                                                               .align = 4 });
    }
    tecs_archetype_t *arch = tecs_archetype_get(w, 40, c);
    int32_t v = 7;
    tecs_entity_t e = new_one(w, arch, 1, &(tecs_value_t){ c[31], &v });
    CHECK(e != 0);
    tecs_iter_t it = TECS_ITER(w, .archetype = arch);
    CHECK(tecs_iter_next(&it));
    CHECK_EQ(TECS_FIELD(&it, int32_t, 31)[0], 7);
    CHECK(tecs_field_is_set(&it, 31) && !tecs_field_is_set(&it, 32));
    CHECK(tecs_field(&it, 32) == NULL);
    CHECK(!tecs_iter_next(&it));
    tw_free(w);
}

static bool never(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields, (void)ctx;
    CHECK(false);
    return true;
}

/* An empty iteration: no rows, nothing deferred. */
static void check_refused(tecs_world_t *w, tecs_iter_t *it, tecs_err_t err)
{
    CHECK_EQ(tecs_last_error(w), err);
    CHECK(!tecs_is_deferred(w));
    CHECK(!tecs_iter_next(it));
    CHECK_EQ(it->count, 0);
    tecs_iter_fini(it);
    CHECK_EQ(tecs_last_error(w), err);               /* kept through the loop */
}

TEST(archetype_iter_bad_input)
{
    aworld a, b;
    aworld_init(&a, 16);
    aworld_init(&b, 16);
    fill(&a, a.p, 3, 0, NULL);
    fill(&b, b.p, 3, 0, NULL);
    tecs_iter_t it = TECS_ITER(NULL, .archetype = a.p);
    CHECK(it.world == NULL && !tecs_iter_next(&it));
    it = TECS_ITER(a.w, .archetype = NULL);
    check_refused(a.w, &it, TECS_EINVAL);
    it = TECS_ITER(a.w, .archetype = b.p);
    check_refused(a.w, &it, TECS_EWORLD);
    CHECK(strstr(tecs_last_error_msg(a.w), "another world") != NULL);
    tecs_query_t *q = tecs_query_all(a.w, 0, NULL);
    it = TECS_ITER(a.w, .archetype = a.p, .query = q);
    check_refused(a.w, &it, TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(a.w), "exactly one") != NULL);
    it = TECS_ITER(a.w, .archetype = a.p, .parts = 2, .reverse = true);
    check_refused(a.w, &it, TECS_EINVAL);
    it = TECS_ITER(a.w, .archetype = a.p, .part = -1);
    check_refused(a.w, &it, TECS_EINVAL);

    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(NULL, .archetype = a.p) }, never, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = NULL) }, never, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = b.p) }, never, NULL), TECS_EWORLD);
    CHECK_EQ(tecs_last_error(a.w), TECS_EWORLD);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .query = q) }, never, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, NULL, NULL), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(a.w), "NULL callback") != NULL);
    CHECK(!tecs_is_deferred(a.w));

    tecs_entity_t out[4];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(NULL, .archetype = a.p) }, out, 4), -1);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = NULL) }, out, 4), -1);
    CHECK_EQ(tecs_last_error(a.w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = b.p) }, out, 4), -1);
    CHECK_EQ(tecs_last_error(a.w), TECS_EWORLD);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p, .parts = 1) }, out, 4), -1);
    CHECK_EQ(tecs_last_error(a.w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, out, -1), -1);
    CHECK_EQ(tecs_last_error(a.w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, NULL, 2), -1);
    CHECK_EQ(tecs_last_error(a.w), TECS_EINVAL);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(a.w, .archetype = a.p) }, out, 4), 3);
    CHECK_EQ(tecs_last_error(a.w), TECS_OK);
    TW_CHECK(a.w);
    TW_CHECK(b.w);
    tw_free(a.w);
    tw_free(b.w);
}

/* Out of memory opening the iteration: empty, TECS_ENOMEM, nothing held;
** the next one works. */
TEST(archetype_iter_out_of_memory)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *p = tecs_archetype_get(w, 1, &pos);
    for (int i = 0; i < 5; i++)
        CHECK(tecs_new_in(w, p) != 0);
    bool failed = false;
    for (long k = 1; k < 20; k++) {
        al.fail_at = al.calls + k;
        tecs_iter_t it = TECS_ITER(w, .archetype = p);
        bool refused = tecs_last_error(w) == TECS_ENOMEM;
        al.fail_at = 0;
        tecs_entity_t got[8];
        CHECK_EQ(walk(&it, got, 8), refused ? 0 : 5);
        CHECK(!tecs_is_deferred(w));
        failed = failed || refused;
        if (!refused)
            break;
    }
    CHECK(failed);
    each_log l = { .stop_at = -1 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .archetype = p) }, log_one, &l), TECS_OK);
    CHECK_EQ(l.n, 5);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- called while tecs_world_free runs ---------------------------------- */

typedef struct closed_calls {
    tecs_world_t *w;
    tecs_archetype_t *arch;
    bool armed;
    int runs;
    tecs_err_t iter_err, each_err;
    int32_t collected;
    bool stepped;
} closed_calls;

static void closed_dtor(void *p, int32_t n, void *ctx)
{
    (void)p, (void)n;
    closed_calls *c = ctx;
    if (!c->armed || c->runs++ > 0)
        return;
    tecs_iter_t it = TECS_ITER(c->w, .archetype = c->arch);
    c->iter_err = tecs_last_error(c->w);
    c->stepped = tecs_iter_next(&it);
    c->each_err = tecs_iter_each((tecs_iter_t[]){ TECS_ITER(c->w, .archetype = c->arch) }, never, NULL);
    c->collected = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(c->w, .archetype = c->arch) }, NULL, 0);
}

TEST(archetype_iter_refused_while_world_is_freed)
{
    tecs_world_t *w = tw_new();
    closed_calls c = { .w = w };
    tecs_comp_t obj = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = 8, .align = 4, .dtor = closed_dtor, .hook_ctx = &c });
    c.arch = tecs_archetype_get(w, 1, &obj);
    CHECK(tecs_new_in(w, c.arch) != 0);
    c.armed = true;
    tw_free(w);
    CHECK_EQ(c.runs, 1);
    CHECK_EQ(c.iter_err, TECS_EBUSY);
    CHECK(!c.stepped);
    CHECK_EQ(c.each_err, TECS_EBUSY);
    CHECK_EQ(c.collected, -1);
}

/* Writes through the fields are reported as a query's write terms are: an
** index on the component sees them. */
TEST(archetype_iter_reports_writes)
{
    aworld a;
    aworld_init(&a, 16);
    tecs_entity_t e[20];
    fill(&a, a.p, 20, 0, e);
    tecs_index_t *x = tecs_index_new(a.w, &(tecs_index_desc_t){
        .comp = a.pos, .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, y) });
    CHECK(x != NULL);
    tecs_iter_t it = TECS_ITER(a.w, .archetype = a.p);
    while (tecs_iter_next(&it))
        for (int32_t r = 0; r < it.count; r++)
            TECS_FIELD(&it, Position, 0)[r].y += 1000;
    tecs_filter_t *f = tecs_filter_new(a.w);
    CHECK(f != NULL);
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(1005));
    tecs_query_t *q = tecs_query_all(a.w, 1, &a.pos);
    tecs_entity_t got[4];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q, .where = f) }, got, 4), 1);
    CHECK_EQ(got[0], e[5]);
    TW_CHECK(a.w);
    tecs_filter_free(f);
    tw_free(a.w);
}
