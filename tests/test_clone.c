/*
** Clones (tecs_clone, tecs_clone_bulk): every component copied into the
** source's archetype, table and sparse, tags, enable bits, values through
** the copy hooks; bulk clones; deferred clones; errors; out of memory at
** every allocation. Pairs are in test_clone_relation.c.
*/
#include "test.h"

/* ---- a component whose string its hooks own --------------------------- */

typedef struct Label { char *text; int32_t n; } Label;

static long live_labels;

static void label_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    Label *l = dst;
    for (int32_t i = 0; i < n; i++)
        l[i] = (Label){ NULL, 0 };
}

static void label_dtor(void *ptr, int32_t n, void *ctx)
{
    (void)ctx;
    Label *l = ptr;
    for (int32_t i = 0; i < n; i++)
        tw_str_free(l[i].text, &live_labels);
}

static void label_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    (void)ctx;
    Label *d = dst;
    const Label *s = src;
    for (int32_t i = 0; i < n; i++) {
        tw_str_free(d[i].text, &live_labels);
        d[i] = (Label){ tw_str_dup(s[i].text, &live_labels), s[i].n };
    }
}

static tecs_comp_t label_comp(tecs_world_t *w, tecs_storage_t storage)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = storage == TECS_STORAGE_SPARSE ? "SLabel" : "Label", .size = sizeof(Label),
        .align = _Alignof(Label), .ctor = label_ctor, .dtor = label_dtor, .copy = label_copy,
        .storage = storage });
}

typedef struct clone_world {
    tecs_world_t *w;
    tecs_comp_t pos, vel, tag, label, slabel, spos, tog;
    tecs_entity_t src;
} clone_world;

/* A source with table values, a tag, a hooked string, sparse values and a
** disabled enableable component. */
static tecs_err_t clone_fixture(clone_world *c, tecs_world_t *w)
{
    c->w = w;
    c->pos = TECS_COMPONENT(w, Position);
    c->vel = TECS_COMPONENT(w, Velocity);
    c->tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    c->label = label_comp(w, TECS_STORAGE_TABLE);
    c->slabel = label_comp(w, TECS_STORAGE_SPARSE);
    c->spos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "SPos",
        .size = sizeof(Position), .align = _Alignof(Position), .storage = TECS_STORAGE_SPARSE });
    c->tog = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tog",
        .size = sizeof(int32_t), .align = 4, .enableable = true });
    if (!c->pos || !c->vel || !c->tag || !c->label || !c->slabel || !c->spos || !c->tog)
        return TECS_ENOMEM;
    tecs_entity_t e = c->src = tecs_new(w);
    Label l = { "hello", 3 }, sl = { "sparse", 4 };
    tecs_err_t err;
    if ((err = TECS_SET(w, e, c->pos, Position, { 1, 2 })) ||
        (err = TECS_SET(w, e, c->vel, Velocity, { 3, 4 })) ||
        (err = tecs_add(w, e, c->tag)) || (err = tecs_set(w, e, c->label, &l)) ||
        (err = tecs_set(w, e, c->slabel, &sl)) ||
        (err = TECS_SET(w, e, c->spos, Position, { 5, 6 })) ||
        (err = TECS_SET(w, e, c->tog, int32_t, 9)) || (err = tecs_enable(w, e, c->tog, false)))
        return err;
    return TECS_OK;
}

/* Is e a clone of c->src: same archetype, same values, own strings? */
static bool clone_same(const clone_world *c, tecs_entity_t e)
{
    tecs_world_t *w = c->w;
    if (e == 0 || e == c->src || !tecs_is_alive(w, e) ||
        tecs_entity_archetype(w, e) != tecs_entity_archetype(w, c->src))
        return false;
    const Position *p = tecs_get(w, e, c->pos), *sp = tecs_get(w, e, c->spos);
    const Velocity *v = tecs_get(w, e, c->vel);
    const Label *l = tecs_get(w, e, c->label), *sl = tecs_get(w, e, c->slabel);
    const Label *l0 = tecs_get(w, c->src, c->label);
    const int32_t *t = tecs_get(w, e, c->tog);
    return p && p->x == 1 && p->y == 2 && v && v->x == 3 && v->y == 4 &&
           tecs_has(w, e, c->tag) && l && l->text && strcmp(l->text, "hello") == 0 &&
           l->n == 3 && l->text != l0->text && sl && sl->text &&
           strcmp(sl->text, "sparse") == 0 && sl->n == 4 && sp && sp->x == 5 && sp->y == 6 &&
           t && *t == 9 && !tecs_is_enabled(w, e, c->tog);
}

TEST(clone_copies_every_component)
{
    tecs_world_t *w = tw_new();
    clone_world c;
    CHECK_ERR(clone_fixture(&c, w), TECS_OK);
    long strings = live_labels;
    tecs_entity_t e = tecs_clone(w, c.src);
    CHECK(clone_same(&c, e));
    CHECK_EQ(live_labels, strings + 2);         /* its own copies */
    CHECK_EQ(tecs_world_entity_count(w), 2);
    /* the clone is independent of its source */
    CHECK_ERR(TECS_SET(w, c.src, c.pos, Position, { 7, 7 }), TECS_OK);
    CHECK_ERR(tecs_enable(w, c.src, c.tog, true), TECS_OK);
    CHECK(!tecs_is_enabled(w, e, c.tog));
    CHECK(((const Position *)tecs_get(w, e, c.pos))->x == 1);
    /* a clone of an enabled source is enabled */
    tecs_entity_t f = tecs_clone(w, c.src);
    CHECK(f != 0 && tecs_is_enabled(w, f, c.tog));
    CHECK(((const Position *)tecs_get(w, f, c.pos))->x == 7);
    CHECK_ERR(tecs_destroy(w, c.src), TECS_OK);
    CHECK(((const Label *)tecs_get(w, e, c.label))->text != NULL);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_labels, 0);
}

TEST(clone_of_empty_entity_and_errors)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t a = tecs_new(w);
    tecs_entity_t b = tecs_clone(w, a);
    CHECK(b != 0 && b != a && tecs_is_alive(w, b));
    CHECK(tecs_entity_archetype(w, b) == tecs_entity_archetype(w, a));
    CHECK_ERR(tecs_destroy(w, a), TECS_OK);
    CHECK(tecs_clone(w, a) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    CHECK(tecs_clone(w, 0) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    CHECK(tecs_clone(NULL, b) == 0);
    tecs_entity_t out[2] = { 0, 0 };
    CHECK_ERR(tecs_clone_bulk(w, b, -1, out), TECS_EINVAL);
    CHECK_ERR(tecs_clone_bulk(w, a, 2, out), TECS_EDEAD);
    CHECK_ERR(tecs_clone_bulk(w, b, 0, out), TECS_OK);
    CHECK_ERR(tecs_clone_bulk(NULL, b, 1, out), TECS_EINVAL);
    CHECK(out[0] == 0 && out[1] == 0);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    TW_CHECK(w);
    tw_free(w);
}

TEST(clone_bulk_makes_n_equal_clones)
{
    tecs_world_t *w = tw_new_ex(&(tw_alloc){ 0 }, 64);   /* clones across chunks */
    clone_world c;
    CHECK_ERR(clone_fixture(&c, w), TECS_OK);
    enum { N = 200 };
    static tecs_entity_t out[N];
    CHECK_ERR(tecs_clone_bulk(w, c.src, N, out), TECS_OK);
    for (int i = 0; i < N; i++) {
        CHECK(clone_same(&c, out[i]));
        for (int j = 0; j < i; j++)
            CHECK(out[j] != out[i]);
    }
    CHECK_EQ(tecs_world_entity_count(w), N + 1);
    CHECK_ERR(tecs_clone_bulk(w, c.src, 5, NULL), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), N + 6);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_labels, 0);
}

TEST(clone_while_deferred_copies_when_applied)
{
    tecs_world_t *w = tw_new();
    clone_world c;
    CHECK_ERR(clone_fixture(&c, w), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t e = tecs_clone(w, c.src);
    tecs_entity_t out[3];
    CHECK_ERR(tecs_clone_bulk(w, c.src, 3, out), TECS_OK);
    CHECK(e != 0);
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_PENDING);
    CHECK_ERR(TECS_SET(w, c.src, c.pos, Position, { 8, 8 }), TECS_OK);   /* written now */
    tecs_entity_t gone = tecs_clone(w, c.src);
    CHECK_ERR(tecs_destroy(w, gone), TECS_OK);      /* cancels it */
    tecs_entity_t late = tecs_clone(w, e);          /* a pending source */
    CHECK(late != 0);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_ALIVE);
    CHECK(((const Position *)tecs_get(w, e, c.pos))->x == 8);    /* src when applied */
    CHECK(((const Position *)tecs_get(w, late, c.pos))->x == 8);
    tecs_entity_t all[5] = { c.src, e, late, out[0], out[1] };
    for (int i = 0; i < 5; i++)
        CHECK_ERR(TECS_SET(w, all[i], c.pos, Position, { 1, 2 }), TECS_OK);
    CHECK(clone_same(&c, e) && clone_same(&c, late));
    for (int i = 0; i < 2; i++)
        CHECK(clone_same(&c, out[i]));
    CHECK(!tecs_is_alive(w, gone));
    CHECK_EQ(tecs_world_entity_count(w), 6);
    /* in queue order: a destroy of the source queued after the clone comes
    ** after it, so does a pending source's (born, cloned, then destroyed) */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t kept = tecs_clone(w, c.src);
    CHECK_ERR(tecs_destroy(w, c.src), TECS_OK);
    tecs_entity_t x = tecs_new(w);
    tecs_entity_t orphan = tecs_clone(w, x);
    CHECK(orphan != 0);
    CHECK_ERR(tecs_destroy(w, x), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_is_alive(w, kept) && !tecs_is_alive(w, c.src));
    CHECK(tecs_is_alive(w, orphan) && !tecs_is_alive(w, x));
    CHECK_EQ(tecs_world_entity_count(w), 7);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_labels, 0);
}

typedef tecs_err_t (*clone_step)(clone_world *c, tecs_entity_t *out);

static tecs_err_t step_one(clone_world *c, tecs_entity_t *out)
{
    out[0] = tecs_clone(c->w, c->src);
    return out[0] ? TECS_OK : tecs_last_error(c->w);
}

static tecs_err_t step_bulk(clone_world *c, tecs_entity_t *out)
{
    return tecs_clone_bulk(c->w, c->src, 40, out);
}

static tecs_err_t step_deferred(clone_world *c, tecs_entity_t *out)
{
    tecs_err_t err = tecs_defer_begin(c->w);
    if (err == TECS_OK)
        err = tecs_clone_bulk(c->w, c->src, 2, out);
    tecs_err_t end = tecs_defer_end(c->w);
    return err ? err : end;
}

TEST(clone_out_of_memory_changes_nothing)
{
    clone_step steps[] = { step_one, step_bulk, step_deferred };
    int counts[] = { 1, 40, 2 };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        bool done = false;
        for (long k = 1; k < 400 && !done; k++) {
            tw_alloc a = { 0 };
            tecs_world_t *w = tw_new_ex(&a, 16);
            clone_world c;
            CHECK_ERR(clone_fixture(&c, w), TECS_OK);
            long strings = live_labels;
            tecs_entity_t out[40] = { 0 };
            a.fail_at = a.calls + k;
            tecs_err_t err = steps[s](&c, out);
            done = a.failures == 0;
            a.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                CHECK_EQ(tecs_world_entity_count(w), 1);
                CHECK_EQ(live_labels, strings);
                CHECK_ERR(steps[s](&c, out), TECS_OK);
            } else {
                CHECK_ERR(err, TECS_OK);
            }
            CHECK_EQ(tecs_world_entity_count(w), 1 + counts[s]);
            for (int i = 0; i < counts[s]; i++)
                CHECK(clone_same(&c, out[i]));
            TW_CHECK(w);
            tw_free(w);
            CHECK_EQ(live_labels, 0);
        }
        CHECK(done);
    }
}
