/*
** Clones and relationships: a clone takes its source's pairs (ChildOf
** too: it is a sibling) but not those of .no_clone relations nor the
** pairs that target the source; clones made from an observer's callback;
** the events of a clone; a unique index; out of memory at every
** allocation.
*/
#include "test.h"
#include "tinyecs/index.h"
#include "tinyecs/observer.h"
#include "tinyecs/relation.h"

/* The sources of (rel, t): ChildOf's are t's children. */
static int32_t sources_count(tecs_world_t *w, tecs_entity_t t, tecs_comp_t rel)
{
    int32_t n = 0;
    for (tecs_walk_t it = tecs_sources(w, t, rel); tecs_walk_next(&it);)
        n++;
    return n;
}

#define children_count(w, p) sources_count((w), (p), tecs_childof(w))


typedef struct rel_world {
    tecs_world_t *w;
    tecs_comp_t co, likes, owes, secret, pos;
    tecs_entity_t root, parent, src, child, fan, a, b;
} rel_world;

static tecs_err_t rel_fixture(rel_world *r, tecs_world_t *w)
{
    r->w = w;
    r->co = tecs_childof(w);
    r->likes = tecs_relation_new(w, &(tecs_relation_desc_t){ .component = { .name = "Likes" } });
    r->owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 }, .exclusive = true });
    r->secret = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Secret" }, .no_clone = true });
    r->pos = TECS_COMPONENT(w, Position);
    if (!r->co || !r->likes || !r->owes || !r->secret || !r->pos)
        return TECS_ENOMEM;
    r->root = tecs_new(w);
    r->parent = tecs_new(w);
    r->src = tecs_new(w);
    r->child = tecs_new(w);
    r->fan = tecs_new(w);
    r->a = tecs_new(w);
    r->b = tecs_new(w);
    tecs_err_t err;
    if ((err = tecs_pair_add(w, r->parent, r->co, r->root)) ||
        (err = tecs_pair_add(w, r->src, r->co, r->parent)) ||
        (err = tecs_pair_add(w, r->child, r->co, r->src)) ||
        (err = TECS_SET(w, r->src, r->pos, Position, { 1, 2 })) ||
        (err = tecs_pair_add(w, r->src, r->likes, r->a)) ||
        (err = tecs_pair_add(w, r->src, r->likes, r->b)) ||
        (err = TECS_PAIR_SET(w, r->src, r->owes, r->a, int32_t, 12)) ||
        (err = tecs_pair_add(w, r->src, r->secret, r->b)) ||
        (err = tecs_pair_add(w, r->fan, r->likes, r->src)))
        return err;
    return TECS_OK;
}

/* Is e a clone of r->src as the fixture made it? */
static bool rel_same(const rel_world *r, tecs_entity_t e)
{
    tecs_world_t *w = r->w;
    const int32_t *owed = e ? tecs_pair_get(w, e, r->owes, r->a) : NULL;
    const Position *p = e ? tecs_get(w, e, r->pos) : NULL;
    return e && tecs_is_alive(w, e) &&
           tecs_entity_archetype(w, e) == tecs_entity_archetype(w, r->src) &&
           tecs_pair_target(w, e, r->co, 0) == r->parent &&
           tecs_pair_has(w, e, r->likes, r->a) && tecs_pair_has(w, e, r->likes, r->b) &&
           tecs_pair_count(w, e, r->likes) == 2 && owed && *owed == 12 &&
           !tecs_pair_has(w, e, r->secret, TECS_WILDCARD) && p && p->x == 1 && p->y == 2 &&
           children_count(w, e) == 0;
}

TEST(clone_relation_copies_pairs_of_the_source)
{
    tecs_world_t *w = tw_new();
    rel_world r;
    CHECK_ERR(rel_fixture(&r, w), TECS_OK);
    int32_t siblings = children_count(w, r.parent);
    tecs_entity_t e = tecs_clone(w, r.src);
    CHECK(rel_same(&r, e));
    CHECK_EQ(children_count(w, r.parent), siblings + 1);
    CHECK_EQ(children_count(w, r.src), 1);             /* its child stays its own */
    CHECK(!tecs_pair_has(w, r.fan, r.likes, e));            /* so do its sources */
    CHECK(tecs_pair_has(w, r.src, r.secret, r.b));
    /* the clone's pairs are its own */
    CHECK_ERR(tecs_pair_remove(w, e, r.likes, r.a), TECS_OK);
    CHECK(tecs_pair_has(w, r.src, r.likes, r.a));
    CHECK_ERR(TECS_PAIR_SET(w, e, r.owes, r.b, int32_t, 1), TECS_OK);   /* exclusive */
    CHECK(tecs_pair_target(w, r.src, r.owes, 0) == r.a);
    /* the parent's destroy takes the clone too */
    CHECK_ERR(tecs_destroy(w, r.parent), TECS_OK);
    CHECK(!tecs_is_alive(w, e) && !tecs_is_alive(w, r.src));
    TW_CHECK(w);
    tw_free(w);
}

TEST(clone_relation_bulk_and_deferred)
{
    tecs_world_t *w = tw_new();
    rel_world r;
    CHECK_ERR(rel_fixture(&r, w), TECS_OK);
    tecs_entity_t out[50];
    CHECK_ERR(tecs_clone_bulk(w, r.src, 50, out), TECS_OK);
    for (int i = 0; i < 50; i++)
        CHECK(rel_same(&r, out[i]));
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t e = tecs_clone(w, r.src);
    CHECK(!tecs_pair_has(w, e, r.likes, r.a));
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(rel_same(&r, e));
    CHECK_EQ(children_count(w, r.parent), 52);
    /* a clone of a root has no parent */
    tecs_entity_t top = tecs_clone(w, r.root);
    CHECK(top && tecs_pair_target(w, top, r.co, 0) == 0);
    CHECK(tecs_entity_archetype(w, top) == tecs_entity_archetype(w, r.root));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct clone_tap {
    int adds, sets, enters, pair_adds;
    tecs_entity_t made;
    tecs_comp_t pos, likes;
} clone_tap;

static void tap_event(const tecs_event_t *ev)
{
    clone_tap *t = ev->ctx;
    if (ev->kind == TECS_ON_ADD && ev->comp == t->likes)
        t->pair_adds++;
    else if (ev->kind == TECS_ON_ADD)
        t->adds++;
    else if (ev->kind == TECS_ON_SET)
        t->sets++;
    else if (ev->kind == TECS_ON_ENTER)
        t->enters++;
}

/* Clones its entity once, from the callback: the clone is queued. */
static void clone_in_callback(const tecs_event_t *ev)
{
    clone_tap *t = ev->ctx;
    if (t->made == 0) {
        t->made = tecs_clone(ev->world, ev->entity);
        if (t->made)
            t->made = tecs_entity_state(ev->world, t->made) == TECS_ENTITY_PENDING ? t->made : 0;
    }
}

TEST(clone_relation_events_and_callbacks)
{
    tecs_world_t *w = tw_new();
    rel_world r;
    CHECK_ERR(rel_fixture(&r, w), TECS_OK);
    clone_tap t = { .pos = r.pos, .likes = r.likes };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = r.pos,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = r.pos,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = r.likes,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = (tecs_term_t[]){ { .comp = r.pos } }, .term_count = 1,
          .callback = tap_event, .ctx = &t }));
    tecs_entity_t out[3];
    CHECK_ERR(tecs_clone_bulk(w, r.src, 3, out), TECS_OK);
    CHECK_EQ(t.adds, 3);
    CHECK_EQ(t.sets, 3);
    CHECK_EQ(t.enters, 3);
    CHECK_EQ(t.pair_adds, 6);
    /* a clone made inside an observer's callback is queued, made after it */
    clone_tap u = { 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = r.pos,
          .callback = clone_in_callback, .ctx = &u }));
    tecs_entity_t x = tecs_new(w);
    CHECK_ERR(TECS_SET(w, x, r.pos, Position, { 4, 5 }), TECS_OK);
    CHECK(u.made != 0 && tecs_is_alive(w, u.made));
    const Position *p = tecs_get(w, u.made, r.pos);
    CHECK(p && p->x == 4 && p->y == 5);
    TW_CHECK(w);
    tw_free(w);
}

TEST(clone_relation_out_of_memory_changes_nothing)
{
    for (int bulk = 0; bulk < 2; bulk++) {
        bool done = false;
        for (long k = 1; k < 400 && !done; k++) {
            tw_alloc a = { 0 };
            tecs_world_t *w = tw_new_ex(&a, 0);
            rel_world r;
            CHECK_ERR(rel_fixture(&r, w), TECS_OK);
            int32_t n = tecs_world_entity_count(w), sibs = children_count(w, r.parent);
            int32_t likes = sources_count(w, r.a, r.likes);
            tecs_entity_t out[20] = { 0 };
            a.fail_at = a.calls + k;
            tecs_err_t err = tecs_clone_bulk(w, r.src, bulk ? 20 : 1, out);
            done = a.failures == 0;
            a.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                CHECK_EQ(tecs_world_entity_count(w), n);
                CHECK_EQ(children_count(w, r.parent), sibs);
                CHECK_EQ(sources_count(w, r.a, r.likes), likes);
                CHECK_ERR(tecs_clone_bulk(w, r.src, bulk ? 20 : 1, out), TECS_OK);
            } else {
                CHECK_ERR(err, TECS_OK);
            }
            for (int i = 0; i < (bulk ? 20 : 1); i++)
                CHECK(rel_same(&r, out[i]));
            TW_CHECK(w);
            tw_free(w);
        }
        CHECK(done);
    }
}

TEST(clone_unique_index_refuses_a_taken_key)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_index_t *ix = tecs_index_new(w, &(tecs_index_desc_t){ .comp = pos,
        .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT, .offset = offsetof(Position, x),
        .unique = true });
    CHECK(ix != NULL);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 1, 2 }), TECS_OK);
    CHECK(tecs_clone(w, e) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EEXIST);
    CHECK_ERR(tecs_clone_bulk(w, e, 3, NULL), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    TW_CHECK(w);
    tw_free(w);
}
