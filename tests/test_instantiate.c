/*
** Instances of prefabs (tecs_instantiate, tecs_instantiate_bulk): every
** component copied without the Prefab tag, table and sparse, enable bits,
** values through the copy hooks; the ChildOf subtree copied in order with
** the pairs inside it pointed at the copies and those outside kept; bulk
** instances; deferred ones (an iteration, an observer's callback); the
** events; a unique index; bad input; out of memory at every allocation.
*/
#include "test.h"
#include "tinyecs/index.h"
#include "tinyecs/observer.h"
#include "tinyecs/relation.h"

typedef struct inst_world {
    tecs_world_t *w;
    tecs_comp_t pf, co, pos, vel, text, spos, tog, likes, owes, secret;
    tecs_entity_t prefab, a, b, b1, ext;
    int strings;                /* live Text strings                          */
} inst_world;

/* The prefab P { Position, Text, SPos (sparse), Tog (disabled), Prefab,
** (Secret, ext) } with children A { Position, Prefab, (Likes, B),
** (Likes, P), (Likes, ext), (Owes, ext) = 7 } and B { Velocity }, and B's
** child B1 { Position, (Owes, A) = 3 }; ext is outside. */
static tecs_err_t inst_fixture(inst_world *f, tecs_world_t *w)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    f->pf = tecs_prefab(w);
    f->co = tecs_childof(w);
    f->pos = TECS_COMPONENT(w, Position);
    f->vel = TECS_COMPONENT(w, Velocity);
    f->text = text_component(w, &f->strings);
    f->spos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "SPos",
        .size = sizeof(Position), .align = _Alignof(Position), .storage = TECS_STORAGE_SPARSE });
    f->tog = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tog",
        .size = sizeof(int32_t), .align = 4, .enableable = true });
    f->likes = tecs_relation_new(w, &(tecs_relation_desc_t){ .component = { .name = "Likes" } });
    f->owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 }, .exclusive = true });
    f->secret = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Secret" }, .no_clone = true });
    if (!f->pf || !f->co || !f->pos || !f->vel || !f->text || !f->spos || !f->tog ||
        !f->likes || !f->owes || !f->secret)
        return TECS_ENOMEM;
    tecs_entity_t p = f->prefab = tecs_new(w), a = f->a = tecs_new(w), b = f->b = tecs_new(w);
    tecs_entity_t b1 = f->b1 = tecs_new(w), ext = f->ext = tecs_new(w);
    Text t = { "hello" };
    tecs_err_t err;
    if ((err = TECS_SET(w, p, f->pos, Position, { 1, 2 })) || (err = tecs_set(w, p, f->text, &t)) ||
        (err = TECS_SET(w, p, f->spos, Position, { 5, 6 })) ||
        (err = TECS_SET(w, p, f->tog, int32_t, 9)) || (err = tecs_enable(w, p, f->tog, false)) ||
        (err = tecs_add(w, p, f->pf)) || (err = tecs_pair_add(w, p, f->secret, ext)) ||
        (err = tecs_pair_add(w, a, f->co, p)) || (err = tecs_pair_add(w, b, f->co, p)) ||
        (err = tecs_pair_add(w, b1, f->co, b)) ||
        (err = TECS_SET(w, a, f->pos, Position, { 10, 0 })) || (err = tecs_add(w, a, f->pf)) ||
        (err = tecs_pair_add(w, a, f->likes, b)) || (err = tecs_pair_add(w, a, f->likes, p)) ||
        (err = tecs_pair_add(w, a, f->likes, ext)) ||
        (err = TECS_PAIR_SET(w, a, f->owes, ext, int32_t, 7)) ||
        (err = TECS_SET(w, b, f->vel, Velocity, { 3, 4 })) ||
        (err = TECS_SET(w, b1, f->pos, Position, { 0, 1 })) ||
        (err = TECS_PAIR_SET(w, b1, f->owes, a, int32_t, 3)))
        return err;
    return TECS_OK;
}

/* The i-th child of e (0 first), or 0. */
static tecs_entity_t child(tecs_world_t *w, tecs_entity_t e, int32_t i)
{
    for (tecs_walk_t it = tecs_sources(w, e, tecs_childof(w)); tecs_walk_next(&it);)
        if (i-- == 0)
            return it.entity;
    return 0;
}

static int32_t children(tecs_world_t *w, tecs_entity_t e)
{
    int32_t n = 0;
    for (tecs_walk_t it = tecs_sources(w, e, tecs_childof(w)); tecs_walk_next(&it);)
        n++;
    return n;
}

static int32_t owed(tecs_world_t *w, tecs_comp_t owes, tecs_entity_t e, tecs_entity_t t)
{
    const int32_t *v = tecs_pair_get(w, e, owes, t);
    return v ? *v : -1;
}

static bool pos_is(tecs_world_t *w, tecs_comp_t pos, tecs_entity_t e, float x, float y)
{
    const Position *p = tecs_get(w, e, pos);
    return p && p->x == x && p->y == y;
}

/* Is i an instance of f's prefab, as the fixture made it? */
static bool inst_same(const inst_world *f, tecs_entity_t i)
{
    tecs_world_t *w = f->w;
    if (i == 0 || !tecs_is_alive(w, i) || i == f->prefab)
        return false;
    tecs_entity_t a = child(w, i, 0), b = child(w, i, 1), b1 = child(w, b, 0);
    const Text *t = tecs_get(w, i, f->text), *t0 = tecs_get(w, f->prefab, f->text);
    const Position *sp = tecs_get(w, i, f->spos);
    const Velocity *v = b ? tecs_get(w, b, f->vel) : NULL;
    const int32_t *tog = tecs_get(w, i, f->tog);
    return a && b && b1 && children(w, i) == 2 && children(w, a) == 0 &&
           children(w, b) == 1 && children(w, b1) == 0 &&
           a != f->a && b != f->b && b1 != f->b1 &&
           tecs_pair_target(w, i, f->co, 0) == 0 && tecs_depth(w, i) == 0 &&
           tecs_depth(w, a) == 1 && tecs_depth(w, b1) == 2 &&
           !tecs_has(w, i, f->pf) && !tecs_has(w, a, f->pf) &&
           pos_is(w, f->pos, i, 1, 2) && t && t->s && t->s != t0->s &&
           strcmp(t->s, "hello") == 0 && sp && sp->x == 5 && sp->y == 6 && tog && *tog == 9 &&
           !tecs_is_enabled(w, i, f->tog) && !tecs_pair_has(w, i, f->secret, TECS_WILDCARD) &&
           pos_is(w, f->pos, a, 10, 0) && tecs_pair_count(w, a, f->likes) == 3 &&
           tecs_pair_target(w, a, f->likes, 0) == b && tecs_pair_target(w, a, f->likes, 1) == i &&
           tecs_pair_target(w, a, f->likes, 2) == f->ext && owed(w, f->owes, a, f->ext) == 7 &&
           v && v->x == 3 && v->y == 4 && pos_is(w, f->pos, b1, 0, 1) &&
           owed(w, f->owes, b1, a) == 3 && tecs_pair_count(w, b1, f->owes) == 1;
}

/* Is the prefab's subtree as the fixture made it? */
static bool prefab_same(const inst_world *f)
{
    tecs_world_t *w = f->w;
    return tecs_has(w, f->prefab, f->pf) && children(w, f->prefab) == 2 &&
           child(w, f->prefab, 0) == f->a && child(w, f->prefab, 1) == f->b &&
           child(w, f->b, 0) == f->b1 && tecs_pair_target(w, f->a, f->likes, 0) == f->b &&
           tecs_pair_target(w, f->a, f->likes, 1) == f->prefab &&
           owed(w, f->owes, f->b1, f->a) == 3 && tecs_pair_count(w, f->b1, f->owes) == 1;
}

/* Entities with a Position that queries see. */
static int32_t seen(tecs_world_t *w, tecs_comp_t pos)
{
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    int32_t n = q ? tecs_query_count(q) : -1;
    tecs_query_free(q);
    return n;
}

TEST(instantiate_copies_the_prefab_and_its_subtree)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    int32_t n = tecs_world_entity_count(w), sees = seen(w, f.pos);
    CHECK_EQ(sees, 1);                          /* B1: a prefab's child, no prefab */
    int strings = f.strings;
    tecs_entity_t i = tecs_instantiate(w, f.prefab);
    CHECK(inst_same(&f, i));
    CHECK(prefab_same(&f));
    CHECK_EQ(tecs_world_entity_count(w), n + 4);
    CHECK_EQ(seen(w, f.pos), sees + 3);         /* the instance is seen, its prefab not */
    CHECK_EQ(f.strings, strings + 1);
    /* the archetype is the prefab's without the tag */
    CHECK(tecs_entity_archetype(w, i) != tecs_entity_archetype(w, f.prefab));
    CHECK(tecs_has(w, i, f.pos) && tecs_has(w, i, f.text) && tecs_has(w, i, f.tog));
    /* the instance is its own: its changes do not reach the prefab */
    CHECK_ERR(TECS_SET(w, i, f.pos, Position, { 7, 7 }), TECS_OK);
    CHECK(pos_is(w, f.pos, f.prefab, 1, 2));
    CHECK_ERR(tecs_destroy(w, i), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), n);
    CHECK(prefab_same(&f));
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(f.strings, 0);
}

TEST(instantiate_of_a_child_prefab_is_a_root)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    tecs_entity_t top = tecs_new(w), mid = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, mid, f.co, top), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f.prefab, f.co, mid), TECS_OK);     /* level 2 */
    tecs_entity_t i = tecs_instantiate(w, f.prefab);
    CHECK(inst_same(&f, i));
    CHECK_EQ(children(w, mid), 1);              /* no sibling of the prefab */
    CHECK_EQ(tecs_depth(w, f.b1), 4);
    /* a prefab's instance of a subtree member: the subtree below it */
    tecs_entity_t j = tecs_instantiate(w, f.a);
    CHECK(j != 0 && tecs_depth(w, j) == 0 && !tecs_has(w, j, f.pf) && !tecs_has(w, j, f.co));
    CHECK(tecs_pair_target(w, j, f.likes, 0) == f.b);      /* outside its subtree now */
    CHECK(tecs_pair_target(w, j, f.likes, 1) == f.prefab);
    TW_CHECK(w);
    tw_free(w);
}

TEST(instantiate_bulk_gives_each_its_subtree)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    int32_t n = tecs_world_entity_count(w);
    tecs_entity_t out[7];
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 7, out), TECS_OK);
    for (int k = 0; k < 7; k++) {
        CHECK(inst_same(&f, out[k]));
        for (int j = 0; j < k; j++)
            CHECK(child(w, out[k], 0) != child(w, out[j], 0));
    }
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 3, NULL), TECS_OK);
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 0, NULL), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), n + 10 * 4);
    CHECK(prefab_same(&f));
    TW_CHECK(w);
    tw_free(w);
}

TEST(instantiate_flat_prefab_in_bulk)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pf = tecs_prefab(w), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_entity_t p = tecs_new(w);
    CHECK_ERR(TECS_SET(w, p, pos, Position, { 1, 2 }), TECS_OK);
    CHECK_ERR(TECS_SET(w, p, vel, Velocity, { 3, 4 }), TECS_OK);
    CHECK_ERR(tecs_add(w, p, pf), TECS_OK);
    tecs_entity_t out[300];
    CHECK_ERR(tecs_instantiate_bulk(w, p, 300, out), TECS_OK);
    for (int k = 0; k < 300; k++) {
        CHECK(pos_is(w, pos, out[k], 1, 2) && !tecs_has(w, out[k], pf));
        CHECK(tecs_entity_archetype(w, out[k]) == tecs_entity_archetype(w, out[0]));
    }
    CHECK_EQ(seen(w, pos), 300);
    TW_CHECK(w);
    tw_free(w);
}

/* Instances from inside an iteration are queued. */
TEST(instantiate_deferred_in_an_iteration)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    tecs_query_t *q = TECS_QUERY(w, { .comp = f.pos });
    tecs_entity_t made[4] = { 0 };
    int k = 0;
    tecs_iter_t it = tecs_iter(w, &(tecs_iter_desc_t){ .query = q });
    while (tecs_iter_next(&it))
        for (int32_t r = 0; r < it.count && k < 4; r++) {
            made[k] = tecs_instantiate(w, f.prefab);
            CHECK(tecs_entity_state(w, made[k]) == TECS_ENTITY_PENDING);
            k++;
        }
    CHECK_EQ(k, 1);                             /* B1 alone is seen */
    CHECK(inst_same(&f, made[0]));
    /* a section: the prefab as it is when the queue applies */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t i = tecs_instantiate(w, f.prefab), out[2];
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 2, out), TECS_OK);
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 2, NULL), TECS_OK);
    CHECK_ERR(TECS_SET(w, f.prefab, f.pos, Position, { 1, 2 }), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(inst_same(&f, i) && inst_same(&f, out[0]) && inst_same(&f, out[1]));
    /* the prefab gone, or no prefab, when the queue applies: cancelled */
    int32_t n = tecs_world_entity_count(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_remove(w, f.prefab, f.pf), TECS_OK);      /* queued first */
    tecs_entity_t x = tecs_instantiate(w, f.prefab);
    CHECK_ERR(tecs_defer_end(w), TECS_EINVAL);          /* the instance's error */
    CHECK(x != 0 && !tecs_is_alive(w, x));
    CHECK_EQ(tecs_world_entity_count(w), n);
    CHECK_ERR(tecs_add(w, f.prefab, f.pf), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_destroy(w, f.prefab), TECS_OK);
    x = tecs_instantiate(w, f.prefab);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);              /* a stale change: silent */
    CHECK(x != 0 && !tecs_is_alive(w, x));
    CHECK_EQ(tecs_world_entity_count(w), n - 4);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct inst_tap {
    int adds, sets, enters, child_adds, likes_adds;
    tecs_entity_t prefab, made;
    tecs_comp_t co, likes;
} inst_tap;

static void tap_event(const tecs_event_t *ev)
{
    inst_tap *t = ev->ctx;
    if (ev->kind == TECS_ON_ADD && ev->comp == t->co)
        t->child_adds++;
    else if (ev->kind == TECS_ON_ADD && ev->comp == t->likes)
        t->likes_adds++;
    else if (ev->kind == TECS_ON_ADD)
        t->adds++;
    else if (ev->kind == TECS_ON_SET)
        t->sets++;
    else if (ev->kind == TECS_ON_ENTER)
        t->enters++;
}

/* Instantiates the prefab once, from the callback: queued. */
static void inst_in_callback(const tecs_event_t *ev)
{
    inst_tap *t = ev->ctx;
    if (t->made == 0) {
        t->made = tecs_instantiate(ev->world, t->prefab);
        if (tecs_entity_state(ev->world, t->made) != TECS_ENTITY_PENDING)
            t->made = 0;
    }
}

TEST(instantiate_events_and_callbacks)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    inst_tap t = { .co = f.co, .likes = f.likes };
    tecs_event_kind_t kinds[] = { TECS_ON_ADD, TECS_ON_SET };
    for (int k = 0; k < 2; k++)
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = kinds[k], .comp = f.pos,
              .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = f.co,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = f.likes,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = (tecs_term_t[]){ { .comp = f.pos } }, .term_count = 1,
          .callback = tap_event, .ctx = &t }));
    CHECK(tecs_instantiate(w, f.prefab) != 0);
    CHECK_EQ(t.adds, 3);                        /* the root, A and B1 have a Position */
    CHECK_EQ(t.sets, 3);
    CHECK_EQ(t.enters, 3);
    CHECK_EQ(t.child_adds, 3);                  /* A, B, B1 */
    CHECK_EQ(t.likes_adds, 3);
    /* an instance made from an observer's callback is queued, made after it */
    inst_tap u = { .prefab = f.prefab };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = f.vel,
          .callback = inst_in_callback, .ctx = &u }));
    tecs_entity_t x = tecs_new(w);
    CHECK_ERR(TECS_SET(w, x, f.vel, Velocity, { 4, 5 }), TECS_OK);
    CHECK(inst_same(&f, u.made));
    TW_CHECK(w);
    tw_free(w);
}

TEST(instantiate_refuses_bad_input)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    CHECK(tecs_instantiate(NULL, f.prefab) == 0);
    CHECK_ERR(tecs_instantiate_bulk(NULL, f.prefab, 1, NULL), TECS_EINVAL);
    CHECK(tecs_instantiate(w, f.ext) == 0);     /* no prefab: tecs_clone it */
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_instantiate(w, f.b) == 0);       /* a prefab's child is none */
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, -1, NULL), TECS_EINVAL);
    CHECK(tecs_instantiate(w, 0) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    tecs_entity_t gone = tecs_new(w);
    CHECK_ERR(tecs_add(w, gone, f.pf), TECS_OK);
    CHECK_ERR(tecs_destroy(w, gone), TECS_OK);
    CHECK(tecs_instantiate(w, gone) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    /* a recycled slot: the old id is stale */
    tecs_entity_t again = 0;
    for (int k = 0; k < 100000 && again == 0; k++) {
        tecs_entity_t e = tecs_new(w);
        if (TECS_ENTITY_INDEX(e) == TECS_ENTITY_INDEX(gone))
            again = e;
    }
    CHECK(again != 0 && again != gone);
    CHECK_ERR(tecs_add(w, again, f.pf), TECS_OK);
    CHECK(tecs_instantiate(w, gone) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    CHECK_ERR(tecs_instantiate_bulk(w, gone, 2, NULL), TECS_EDEAD);
    /* an entity made in a section is no prefab */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t pend = tecs_new(w);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_instantiate(w, pend) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    /* a delayed birth is no entity yet */
    tecs_entity_t late = tecs_delayed_new(w, tecs_archetype_get(w, 0, NULL), 0, NULL);
    CHECK(tecs_instantiate(w, late) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EDEAD);
    CHECK_ERR(tecs_delayed_apply_new(w), TECS_OK);
    CHECK(prefab_same(&f));
    TW_CHECK(w);
    tw_free(w);
}

TEST(instantiate_unique_index_refuses_a_taken_key)
{
    tecs_world_t *w = tw_new();
    inst_world f;
    CHECK_ERR(inst_fixture(&f, w), TECS_OK);
    tecs_index_t *ix = tecs_index_new(w, &(tecs_index_desc_t){ .comp = f.vel,
        .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT, .offset = offsetof(Velocity, x),
        .unique = true });
    CHECK(ix != NULL);
    int32_t n = tecs_world_entity_count(w);
    CHECK(tecs_instantiate(w, f.prefab) == 0);  /* B's key is taken by B */
    CHECK_ERR(tecs_last_error(w), TECS_EEXIST);
    CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, 3, NULL), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), n);
    CHECK(prefab_same(&f));
    TW_CHECK(w);
    tw_free(w);
}

TEST(instantiate_out_of_memory_changes_nothing)
{
    for (int bulk = 0; bulk < 2; bulk++) {
        bool done = false;
        int32_t count = bulk ? 5 : 1;
        for (long k = 1; k < 1000 && !done; k++) {
            tw_alloc al = { 0 };
            tecs_world_t *w = tw_new_ex(&al, 0);
            inst_world f;
            CHECK_ERR(inst_fixture(&f, w), TECS_OK);
            tecs_entity_t out[5] = { 0 };
            int32_t n = tecs_world_entity_count(w), strings = f.strings;
            int32_t ext_src = 0;
            for (tecs_walk_t it = tecs_sources(w, f.ext, TECS_WILDCARD); tecs_walk_next(&it);)
                ext_src++;
            al.fail_at = al.calls + k;
            tecs_err_t err = tecs_instantiate_bulk(w, f.prefab, count, out);
            done = al.failures == 0;
            al.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                int32_t now = 0;
                for (tecs_walk_t it = tecs_sources(w, f.ext, TECS_WILDCARD); tecs_walk_next(&it);)
                    now++;
                CHECK_EQ(tecs_world_entity_count(w), n);
                CHECK_EQ(f.strings, strings);
                CHECK_EQ(now, ext_src);
                CHECK(prefab_same(&f));
                CHECK_ERR(tecs_instantiate_bulk(w, f.prefab, count, out), TECS_OK);
            } else {
                CHECK_ERR(err, TECS_OK);
            }
            for (int32_t i = 0; i < count; i++)
                CHECK(inst_same(&f, out[i]));
            TW_CHECK(w);
            tw_free(w);
        }
        CHECK(done);
    }
}

/* Out of memory while a queued instance applies: it is cancelled, whole. */
TEST(instantiate_out_of_memory_when_queued)
{
    bool done = false;
    for (long k = 1; k < 1000 && !done; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        inst_world f;
        CHECK_ERR(inst_fixture(&f, w), TECS_OK);
        int32_t n = tecs_world_entity_count(w);
        CHECK_ERR(tecs_defer_begin(w), TECS_OK);
        tecs_entity_t i = tecs_instantiate(w, f.prefab);
        CHECK(i != 0);
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_defer_end(w);
        done = al.failures == 0;
        al.fail_at = 0;
        (void)err;
        TW_CHECK(w);
        if (tecs_is_alive(w, i))
            CHECK(inst_same(&f, i));
        else
            CHECK_EQ(tecs_world_entity_count(w), n);
        CHECK(prefab_same(&f));
        TW_CHECK(w);
        tw_free(w);
    }
    CHECK(done);
}
