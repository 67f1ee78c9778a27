/*
** Relationships and hierarchies (tinyecs/relation.h): pairs, ChildOf, the
** walks, cleanup when a target dies, deferral, bad input and out of memory.
*/
#include "test.h"

typedef struct { float x, y; } RPos;

/* The entities a walk visits, in order (at most cap). */
static int walk_all(tecs_walk_t it, tecs_entity_t *out, int cap)
{
    int n = 0;
    while (tecs_walk_next(&it))
        if (n < cap)
            out[n++] = it.entity;
    return n;
}

TEST(relation_pairs_add_has_get_remove)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = sizeof(int32_t), .align = 4 } });
    CHECK(likes != 0 && owes != 0);
    CHECK(tecs_is_relation(w, likes));
    CHECK(!tecs_is_relation(w, 0));
    tecs_entity_t a = tecs_new(w), b = tecs_new(w), c = tecs_new(w);

    CHECK_ERR(tecs_pair_add(w, a, likes, b), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, a, likes, c), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, a, likes, b), TECS_OK);          /* already there */
    CHECK(tecs_pair_has(w, a, likes, b));
    CHECK(tecs_pair_has(w, a, likes, TECS_WILDCARD));
    CHECK(tecs_pair_has(w, a, TECS_WILDCARD, c));
    CHECK(!tecs_pair_has(w, b, likes, a));
    CHECK_EQ(tecs_pair_count(w, a, likes), 2);
    CHECK_EQ(tecs_pair_target(w, a, likes, 0), b);
    CHECK_EQ(tecs_pair_target(w, a, likes, 1), c);
    CHECK_EQ(tecs_pair_target(w, a, likes, 2), 0);
    CHECK(tecs_pair_get(w, a, likes, b) == NULL);               /* a tag */

    CHECK_ERR(TECS_PAIR_SET(w, a, owes, b, int32_t, 10), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, a, owes, c, int32_t, 20), TECS_OK);
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, a, owes, b), 10);
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, a, owes, c), 20);
    CHECK_ERR(TECS_PAIR_SET(w, a, owes, b, int32_t, 11), TECS_OK);
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, a, owes, b), 11);
    CHECK_ERR(tecs_pair_add(w, b, owes, c), TECS_OK);            /* zero-filled */
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, b, owes, c), 0);
    CHECK_EQ(tecs_pair_count(w, a, TECS_WILDCARD), 4);
    /* Pairs move no row: a's archetype is the empty one still. */
    CHECK(tecs_entity_archetype(w, a) == tecs_entity_archetype(w, c));
    TW_CHECK(w);

    CHECK_ERR(tecs_pair_remove(w, a, likes, b), TECS_OK);
    CHECK(!tecs_pair_has(w, a, likes, b));
    CHECK_EQ(tecs_pair_target(w, a, likes, 0), c);
    CHECK_ERR(tecs_pair_remove(w, a, likes, b), TECS_ENOENT);
    CHECK_ERR(tecs_pair_remove(w, a, owes, TECS_WILDCARD), TECS_OK);
    CHECK_EQ(tecs_pair_count(w, a, owes), 0);
    CHECK_ERR(tecs_pair_remove(w, a, owes, TECS_WILDCARD), TECS_ENOENT);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_exclusive_replaces_its_target)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t wields = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Wields", .size = 4, .align = 4 }, .exclusive = true });
    tecs_entity_t hero = tecs_new(w), sword = tecs_new(w), axe = tecs_new(w);
    CHECK_ERR(TECS_PAIR_SET(w, hero, wields, sword, int32_t, 7), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, hero, wields, axe), TECS_OK);
    CHECK_EQ(tecs_pair_count(w, hero, wields), 1);
    CHECK_EQ(tecs_pair_target(w, hero, wields, 0), axe);
    CHECK(!tecs_pair_has(w, hero, wields, sword));
    CHECK_EQ(*(const int32_t *)tecs_pair_get(w, hero, wields, axe), 0);
    tecs_entity_t src[4];
    CHECK_EQ(walk_all(tecs_sources(w, sword, wields), src, 4), 0);
    CHECK_EQ(walk_all(tecs_sources(w, axe, wields), src, 4), 1);
    CHECK_EQ(src[0], hero);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_sources_walk)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t fears = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Fears" } });
    tecs_entity_t bob = tecs_new(w), e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_pair_add(w, e[i], i < 3 ? likes : fears, bob), TECS_OK);
    }
    tecs_entity_t out[8];
    CHECK_EQ(walk_all(tecs_sources(w, bob, likes), out, 8), 3);
    for (int i = 0; i < 3; i++)
        CHECK_EQ(out[i], e[i]);
    CHECK_EQ(walk_all(tecs_sources(w, bob, TECS_WILDCARD), out, 8), 5);
    CHECK_EQ(out[3], e[3]);
    CHECK_EQ(out[4], e[4]);
    tecs_walk_t it = tecs_sources(w, bob, fears);
    CHECK(tecs_walk_next(&it));
    CHECK_EQ(it.rel, fears);
    /* A change ends the walk. */
    CHECK_ERR(tecs_pair_remove(w, e[4], fears, bob), TECS_OK);
    CHECK(!tecs_walk_next(&it));
    CHECK(it.stale);
    tw_free(w);
}

/* A tree: root -> a, b; a -> a1, a2; a1 -> a11. */
typedef struct tree { tecs_entity_t root, a, b, a1, a2, a11; } tree;

static tree make_tree(tecs_world_t *w, tecs_comp_t co)
{
    tree t = { tecs_new(w), tecs_new(w), tecs_new(w), tecs_new(w), tecs_new(w), tecs_new(w) };
    CHECK_ERR(tecs_pair_add(w, t.a, co, t.root), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, t.b, co, t.root), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, t.a1, co, t.a), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, t.a2, co, t.a), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, t.a11, co, t.a1), TECS_OK);
    return t;
}

TEST(relation_hierarchy_parent_children_depth_walks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    CHECK(co != 0);
    CHECK_EQ(tecs_childof(w), co);
    CHECK(tecs_is_relation(w, co));
    CHECK_EQ(tecs_relation_cleanup(w, co), TECS_CLEANUP_DESTROY);
    tree t = make_tree(w, co);
    CHECK_EQ(tecs_pair_target(w, t.a1, co, 0), t.a);
    CHECK_EQ(tecs_pair_target(w, t.root, co, 0), 0);
    CHECK(tecs_has(w, t.a1, co));
    CHECK(!tecs_has(w, t.root, co));
    CHECK_EQ(tecs_depth(w, t.root), 0);
    CHECK_EQ(tecs_depth(w, t.a11), 3);
    CHECK_EQ(tecs_depth(w, 0), -1);

    tecs_entity_t out[8];
    CHECK_EQ(walk_all(tecs_sources(w, t.root, co), out, 8), 2);
    CHECK(out[0] == t.a && out[1] == t.b);
    CHECK_EQ(walk_all(tecs_tree(w, t.root, TECS_TREE_DEPTH_FIRST), out, 8), 5);
    tecs_entity_t dfs[] = { t.a, t.a1, t.a11, t.a2, t.b };
    for (int i = 0; i < 5; i++)
        CHECK_EQ(out[i], dfs[i]);
    CHECK_EQ(walk_all(tecs_tree(w, t.root, TECS_TREE_BREADTH_FIRST), out, 8), 5);
    tecs_entity_t bfs[] = { t.a, t.b, t.a1, t.a2, t.a11 };
    for (int i = 0; i < 5; i++)
        CHECK_EQ(out[i], bfs[i]);
    tecs_walk_t it = tecs_tree(w, t.root, TECS_TREE_BREADTH_FIRST);
    int depths[5], k = 0;
    while (tecs_walk_next(&it))
        depths[k++] = it.depth;
    CHECK(depths[0] == 1 && depths[1] == 1 && depths[2] == 2 && depths[4] == 3);
    CHECK_EQ(walk_all(tecs_tree(w, t.a11, TECS_TREE_ANCESTORS), out, 8), 3);
    CHECK(out[0] == t.a1 && out[1] == t.a && out[2] == t.root);
    CHECK_EQ(walk_all(tecs_tree(w, t.a, TECS_TREE_DEPTH_FIRST), out, 8), 3);
    CHECK_EQ(walk_all(tecs_tree(w, t.b, TECS_TREE_DEPTH_FIRST), out, 8), 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_reparent_and_cycles)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tree t = make_tree(w, co);
    tecs_archetype_t *arch = tecs_entity_archetype(w, t.a1);
    CHECK_ERR(tecs_pair_add(w, t.a1, co, t.b), TECS_OK);        /* reparent */
    CHECK_EQ(tecs_pair_target(w, t.a1, co, 0), t.b);
    CHECK(tecs_entity_archetype(w, t.a1) == arch);              /* no move */
    CHECK_EQ(tecs_depth(w, t.a11), 3);
    tecs_entity_t out[8];
    CHECK_EQ(walk_all(tecs_sources(w, t.a, co), out, 8), 1);
    CHECK_EQ(out[0], t.a2);

    /* Cycles: an entity under itself or under its own descendant. */
    CHECK_ERR(tecs_pair_add(w, t.root, co, t.root), TECS_ECYCLE);
    CHECK_ERR(tecs_pair_add(w, t.b, co, t.a11), TECS_ECYCLE);
    CHECK(strstr(tecs_last_error_msg(w), "own ancestor") != NULL);
    CHECK_ERR(tecs_pair_add(w, t.root, co, t.a11), TECS_ECYCLE);
    CHECK_EQ(tecs_pair_target(w, t.b, co, 0), t.root);
    CHECK_EQ(tecs_pair_target(w, t.root, co, 0), 0);
    TW_CHECK(w);

    /* Removing the pair makes a root; the children stay with it. */
    CHECK_ERR(tecs_pair_remove(w, t.a1, co, t.a), TECS_ENOENT);   /* not its parent */
    CHECK_ERR(tecs_pair_remove(w, t.a1, co, TECS_WILDCARD), TECS_OK);
    CHECK(!tecs_has(w, t.a1, co));
    CHECK_EQ(tecs_depth(w, t.a11), 1);
    CHECK_ERR(tecs_pair_remove(w, t.a1, co, TECS_WILDCARD), TECS_ENOENT);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_destroy_parent_destroys_subtree)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tree t = make_tree(w, co);
    tecs_entity_t other = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, t.a), TECS_OK);
    CHECK(!tecs_is_alive(w, t.a) && !tecs_is_alive(w, t.a1) && !tecs_is_alive(w, t.a2) &&
          !tecs_is_alive(w, t.a11));
    CHECK(tecs_is_alive(w, t.root) && tecs_is_alive(w, t.b) && tecs_is_alive(w, other));
    tecs_entity_t out[8];
    CHECK_EQ(walk_all(tecs_sources(w, t.root, co), out, 8), 1);
    CHECK_EQ(out[0], t.b);
    CHECK_EQ(tecs_world_entity_count(w), 3);
    TW_CHECK(w);
    /* A leaf's destroy leaves its parent's other children. */
    CHECK_ERR(tecs_destroy(w, t.b), TECS_OK);
    CHECK_EQ(walk_all(tecs_sources(w, t.root, co), out, 8), 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_cleanup_policies)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t in = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "In" }, .cleanup = TECS_CLEANUP_DESTROY });
    tecs_comp_t owns = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "OwnedBy" }, .cleanup = TECS_CLEANUP_REFUSE });
    CHECK_EQ(tecs_relation_cleanup(w, in), TECS_CLEANUP_DESTROY);
    tecs_comp_t co = tecs_childof(w);

    /* REMOVE: the sources live on without the pair. */
    tecs_entity_t bob = tecs_new(w), fan = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, fan, likes, bob), TECS_OK);
    CHECK_ERR(tecs_destroy(w, bob), TECS_OK);
    CHECK(tecs_is_alive(w, fan));
    CHECK_EQ(tecs_pair_count(w, fan, likes), 0);
    TW_CHECK(w);

    /* DESTROY: the sources die, with their own children and sources. */
    tecs_entity_t room = tecs_new(w), chair = tecs_new(w), leg = tecs_new(w);
    tecs_entity_t cushion = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, chair, in, room), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, leg, co, chair), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, cushion, in, leg), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, room, in, cushion), TECS_OK);     /* a loop of In */
    CHECK_ERR(tecs_destroy(w, room), TECS_OK);
    CHECK(!tecs_is_alive(w, chair) && !tecs_is_alive(w, leg) && !tecs_is_alive(w, cushion));
    TW_CHECK(w);

    /* REFUSE: the destroy fails and nothing changes, also for a target
    ** deep in the subtree that would die. */
    tecs_entity_t king = tecs_new(w), crown = tecs_new(w), castle = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, crown, owns, king), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, king, co, castle), TECS_OK);
    int32_t n = tecs_world_entity_count(w);
    CHECK_ERR(tecs_destroy(w, king), TECS_EBUSY);
    CHECK(strstr(tecs_last_error_msg(w), "OwnedBy") != NULL);
    CHECK_ERR(tecs_destroy(w, castle), TECS_EBUSY);
    CHECK_EQ(tecs_world_entity_count(w), n);
    CHECK(tecs_pair_has(w, king, co, castle));
    TW_CHECK(w);
    CHECK_ERR(tecs_pair_remove(w, crown, owns, king), TECS_OK);
    CHECK_ERR(tecs_destroy(w, castle), TECS_OK);
    CHECK(!tecs_is_alive(w, king) && tecs_is_alive(w, crown));
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_refuses_direct_component_calls)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_entity_t p = tecs_new(w), c = tecs_new(w);
    CHECK_ERR(tecs_add(w, c, co), TECS_EINVAL);
    CHECK_ERR(tecs_add(w, c, likes), TECS_EINVAL);
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    CHECK_ERR(tecs_remove(w, c, co), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "tecs_pair_remove") != NULL);
    CHECK(tecs_pair_has(w, c, co, p));
    tecs_archetype_t *a = tecs_entity_archetype(w, c);
    CHECK(tecs_new_in(w, a) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 0, NULL), TECS_EINVAL);
    /* Bad arguments. */
    CHECK_ERR(tecs_pair_add(w, c, 0, p), TECS_ENOCOMP);
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    CHECK_ERR(tecs_pair_add(w, c, pos, p), TECS_EINVAL);
    CHECK_ERR(tecs_pair_add(w, c, likes, TECS_WILDCARD), TECS_EINVAL);
    CHECK_ERR(tecs_pair_add(w, c, likes, 12345), TECS_EDEAD);
    CHECK_ERR(tecs_pair_add(w, 12345, likes, p), TECS_EDEAD);
    CHECK_ERR(tecs_pair_set(w, c, likes, p, &(int){ 1 }), TECS_EINVAL);   /* a tag */
    CHECK_ERR(tecs_pair_add(NULL, c, likes, p), TECS_EINVAL);
    CHECK(!tecs_pair_has(NULL, c, likes, p));
    CHECK_EQ(tecs_pair_target(w, 999, co, 0), 0);
    CHECK(tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Sparse", .size = 4, .storage = TECS_STORAGE_SPARSE } }) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_relation_new(w, NULL) == 0);
    /* A dead id, then the recycled one. */
    CHECK_ERR(tecs_destroy(w, c), TECS_OK);
    CHECK(!tecs_pair_has(w, c, co, p));
    tecs_entity_t again = tecs_new(w);
    CHECK(TECS_ENTITY_INDEX(again) == TECS_ENTITY_INDEX(c) || again != c);
    CHECK(!tecs_pair_has(w, again, co, TECS_WILDCARD));
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_EDEAD);
    TW_CHECK(w);
    tw_free(w);
}

/* A callback that changes relations from inside an observer. */
typedef struct rel_cb {
    tecs_comp_t co;
    tecs_entity_t parent;
    int calls;
    tecs_err_t err;
} rel_cb;

static bool reparent_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)fields;
    rel_cb *c = ctx;
    c->calls++;
    c->err = tecs_pair_add(w, e, c->co, c->parent);     /* queued: the world is deferred */
    if (tecs_pair_has(w, e, c->co, c->parent))
        c->err = TECS_ECORRUPT;                          /* applied too early */
    return false;
}

TEST(relation_changes_queue_while_deferred)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    tecs_entity_t p = tecs_new(w), e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, RPos, { 0, 0 }), TECS_OK);
    }
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    rel_cb c = { .co = co, .parent = p };
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_iter_each(&it, reparent_each, &c), TECS_OK);
    CHECK_EQ(c.calls, 3);
    CHECK_ERR(c.err, TECS_OK);
    for (int i = 0; i < 3; i++)
        CHECK(tecs_pair_has(w, e[i], co, p));

    /* A queued destroy of the parent, then a queued child of it: the child
    ** is made at the flush before the destroy, and dies with it. */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t late = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, late, co, p), TECS_OK);
    CHECK_ERR(tecs_destroy(w, p), TECS_OK);
    CHECK(tecs_is_alive(w, p));
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_is_alive(w, p) && !tecs_is_alive(w, late) && !tecs_is_alive(w, e[0]));

    /* A queued cycle is dropped when it applies. */
    tecs_entity_t x = tecs_new(w), y = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, y, co, x), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, x, co, y), TECS_OK);      /* a cycle once the first applies */
    CHECK_ERR(tecs_defer_end(w), TECS_ECYCLE);
    CHECK_EQ(tecs_dropped_changes(w), 1);
    CHECK(tecs_pair_has(w, y, co, x) && !tecs_pair_has(w, x, co, y));
    TW_CHECK(w);
    tecs_query_free(q);
    tw_free(w);
}

TEST(relation_queued_destroy_refused_at_apply)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t owns = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "OwnedBy" }, .cleanup = TECS_CLEANUP_REFUSE });
    tecs_entity_t king = tecs_new(w), crown = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, crown, owns, king), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_destroy(w, king), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, king), TECS_ENTITY_DOOMED);
    CHECK_ERR(tecs_defer_end(w), TECS_EBUSY);
    CHECK(tecs_is_alive(w, king));
    CHECK_EQ(tecs_dropped_changes(w), 1);
    CHECK_EQ(tecs_entity_state(w, king), TECS_ENTITY_ALIVE);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_delayed_destroy_refused_at_apply)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t owns = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "OwnedBy" }, .cleanup = TECS_CLEANUP_REFUSE });
    tecs_entity_t king = tecs_new(w), crown = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, crown, owns, king), TECS_OK);
    CHECK_ERR(tecs_delayed_destroy(w, king, NULL, NULL), TECS_OK);
    CHECK_EQ(tecs_delayed_destroy_count(w), 1);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_EBUSY);
    CHECK_EQ(tecs_dropped_changes(w), 1);
    CHECK(tecs_is_alive(w, king));
    CHECK_EQ(tecs_entity_state(w, king), TECS_ENTITY_ALIVE);
    CHECK_EQ(tecs_delayed_destroy_count(w), 0);

    /* Once the pair is gone, a new delayed destroy applies. */
    CHECK_ERR(tecs_pair_remove(w, crown, owns, king), TECS_OK);
    CHECK_ERR(tecs_delayed_destroy(w, king, NULL, NULL), TECS_OK);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_OK);
    CHECK(!tecs_is_alive(w, king));
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_remove_names_the_target_by_its_full_id)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_entity_t old = tecs_new(w);
    CHECK_ERR(tecs_destroy(w, old), TECS_OK);
    tecs_entity_t p = tecs_new(w), c = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(p), TECS_ENTITY_INDEX(old));   /* the slot, reused */
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, c, likes, p), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, c, co, old), TECS_ENOENT);
    CHECK_ERR(tecs_pair_remove(w, c, likes, old), TECS_ENOENT);
    CHECK(tecs_pair_has(w, c, co, p) && tecs_pair_has(w, c, likes, p));
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_world_reset_and_free_drop_every_pair)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" }, .cleanup = TECS_CLEANUP_REFUSE });
    tree t = make_tree(w, co);
    CHECK_ERR(tecs_pair_add(w, t.b, likes, t.a), TECS_OK);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    tecs_entity_t p = tecs_new(w), c = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, p, likes, c), TECS_OK);
    TW_CHECK(w);
    tw_free(w);                 /* frees with pairs, REFUSE included */
}

/* One step of the out-of-memory run: a world with a hierarchy and pairs,
** then the call under test with the k-th allocation failing. */
typedef tecs_err_t (*oom_step)(tecs_world_t *w, tecs_comp_t co, tecs_comp_t rel,
                               tecs_entity_t *e);

static tecs_err_t oom_child(tecs_world_t *w, tecs_comp_t co, tecs_comp_t rel, tecs_entity_t *e)
{
    (void)rel;
    return tecs_pair_add(w, e[5], co, e[4]);
}

static tecs_err_t oom_pair(tecs_world_t *w, tecs_comp_t co, tecs_comp_t rel, tecs_entity_t *e)
{
    (void)co;
    return TECS_PAIR_SET(w, e[5], rel, e[0], int32_t, 3);
}

static tecs_err_t oom_destroy(tecs_world_t *w, tecs_comp_t co, tecs_comp_t rel,
                              tecs_entity_t *e)
{
    (void)co;
    (void)rel;
    return tecs_destroy(w, e[0]);
}

static tecs_err_t oom_queued(tecs_world_t *w, tecs_comp_t co, tecs_comp_t rel,
                             tecs_entity_t *e)
{
    (void)rel;
    tecs_err_t err = tecs_defer_begin(w);
    if (err == TECS_OK)
        err = tecs_pair_add(w, e[5], co, e[3]);
    tecs_err_t end = tecs_defer_end(w);
    return err ? err : end;
}

TEST(relation_plain_components_are_not_relations)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = tw_dirty_alloc });
    CHECK(w != NULL);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    tecs_entity_t a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, a, likes, b), TECS_OK);
    CHECK(tecs_is_relation(w, likes) && !tecs_is_relation(w, pos));
    CHECK_EQ(tecs_pair_count(w, a, pos), 0);
    CHECK(!tecs_pair_has(w, a, pos, TECS_WILDCARD));
    CHECK_EQ(tecs_pair_target(w, a, pos, 0), 0);
    CHECK_ERR(tecs_pair_add(w, a, pos, b), TECS_EINVAL);
    CHECK_ERR(tecs_world_free(w), TECS_OK);
}

TEST(relation_out_of_memory_changes_nothing)
{
    oom_step steps[] = { oom_child, oom_pair, oom_destroy, oom_queued };
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        for (long k = 1; k < 200; k++) {
            tw_alloc a = { 0 };
            tecs_world_t *w = tw_new_ex(&a, 0);
            tecs_comp_t co = tecs_childof(w);
            tecs_comp_t rel = tecs_relation_new(w, &(tecs_relation_desc_t){
                .component = { .name = "Owes", .size = 4, .align = 4 } });
            tecs_entity_t e[6];
            for (int i = 0; i < 6; i++)
                e[i] = tecs_new(w);
            CHECK_ERR(tecs_pair_add(w, e[1], co, e[0]), TECS_OK);
            CHECK_ERR(tecs_pair_add(w, e[2], co, e[1]), TECS_OK);
            CHECK_ERR(tecs_pair_add(w, e[3], rel, e[2]), TECS_OK);
            int32_t n = tecs_world_entity_count(w);
            a.fail_at = a.calls + k;
            tecs_err_t err = steps[s](w, co, rel, e);
            bool failed = a.failures > 0;
            a.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                CHECK_EQ(tecs_world_entity_count(w), n);
                CHECK(!tecs_pair_has(w, e[5], co, TECS_WILDCARD));
                CHECK(!tecs_pair_has(w, e[5], rel, TECS_WILDCARD));
                CHECK(tecs_pair_has(w, e[2], co, e[1]));
                CHECK_ERR(steps[s](w, co, rel, e), TECS_OK);
                TW_CHECK(w);
            } else if (s == 3 && failed) {
                /* A queued change that could not apply keeps its place: the
                ** flush applies it once memory is back. */
                CHECK(err == TECS_OK);
            } else {
                CHECK_ERR(err, TECS_OK);
            }
            tw_free(w);
            if (!failed)
                break;          /* every allocation of the step was tried */
        }
    }
}

/* The ids a query's iteration visits, in order. */
static int iter_ids(tecs_world_t *w, tecs_query_t *q, tecs_entity_t *out, int cap)
{
    tecs_iter_t it = TECS_ITER(w, .query = q);
    return tecs_iter_collect(&it, out, cap);
}

TEST(relation_query_pair_terms)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 } });
    tecs_comp_t co = tecs_childof(w);
    tecs_entity_t bob = tecs_new(w), ann = tecs_new(w), e[6];
    for (int i = 0; i < 6; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, RPos, { (float)i, 0 }), TECS_OK);
    }
    CHECK_ERR(tecs_pair_add(w, e[1], likes, bob), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], likes, bob), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], likes, ann), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[4], likes, ann), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, e[2], owes, bob, int32_t, 5), TECS_OK);
    CHECK_ERR(TECS_PAIR_SET(w, e[5], owes, bob, int32_t, 9), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[0], co, bob), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[5], co, ann), TECS_OK);
    tecs_entity_t out[8];

    tecs_query_t *q = TECS_QUERY(w, { .comp = pos },
                                 { .comp = likes, .target = bob, .access = TECS_FILTER });
    CHECK(q != NULL);
    CHECK_EQ(iter_ids(w, q, out, 8), 2);
    CHECK(out[0] == e[1] && out[1] == e[3]);
    tecs_query_free(q);

    /* (Likes, *) hands out each row's target (its first). */
    q = TECS_QUERY(w, { .comp = pos }, { .comp = likes, .target = TECS_WILDCARD,
                                         .access = TECS_READ });
    CHECK_EQ(iter_ids(w, q, out, 8), 3);
    tecs_iter_t ti = TECS_ITER(w, .query = q);
    int got = 0;
    while (tecs_iter_next(&ti))
        for (int32_t r = 0; r < ti.count; r++, got++)
            CHECK_EQ(((const tecs_entity_t *)tecs_field(&ti, 1))[r],
                     tecs_pair_target(w, ti.entities[r], likes, 0));
    CHECK_EQ(got, 3);
    tecs_query_free(q);
    q = TECS_QUERY(w, { .comp = pos }, { .comp = likes, .target = TECS_WILDCARD,
                                         .oper = TECS_NONE, .access = TECS_FILTER });
    CHECK_EQ(iter_ids(w, q, out, 8), 3);                /* e2, then e0 and e5 (ChildOf) */
    CHECK(out[0] == e[2] && out[1] == e[0] && out[2] == e[5]);
    tecs_query_free(q);

    /* (*, bob): any relation, ChildOf included. */
    q = TECS_QUERY(w, { .comp = pos },
                   { .comp = TECS_WILDCARD, .target = bob, .access = TECS_FILTER });
    CHECK_EQ(iter_ids(w, q, out, 8), 5);                /* e0 e1 e2 e3 e5 */
    tecs_query_free(q);

    /* A value relation's pair hands out its value. */
    q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ },
                   { .comp = owes, .target = bob, .access = TECS_READ });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int32_t sum = 0, rows = 0;
    while (tecs_iter_next(&it))
        for (int32_t r = 0; r < it.count; r++, rows++)
            sum += ((const int32_t *)tecs_field(&it, 1))[r];
    CHECK_EQ(rows, 2);
    CHECK_EQ(sum, 14);
    tecs_query_free(q);

    /* (ChildOf, p): p's children; (ChildOf, *): every child. */
    q = TECS_QUERY(w, { .comp = pos }, { .comp = co, .target = ann, .access = TECS_FILTER });
    CHECK_EQ(iter_ids(w, q, out, 8), 1);
    CHECK_EQ(out[0], e[5]);
    tecs_query_free(q);
    /* (ChildOf, *) hands out the parent: one id for a step of siblings. */
    q = TECS_QUERY(w, { .comp = pos }, { .comp = co, .target = TECS_WILDCARD,
                                         .access = TECS_READ });
    CHECK_EQ(iter_ids(w, q, out, 8), 2);
    ti = TECS_ITER(w, .query = q);
    got = 0;
    while (tecs_iter_next(&ti)) {
        CHECK(!tecs_field_is_self(&ti, 1));
        CHECK_EQ(ti.count, 1);                  /* e0 and e5: two parents */
        CHECK_EQ(*(const tecs_entity_t *)tecs_field(&ti, 1),
                 tecs_pair_target(w, ti.entities[0], co, 0));
        got++;
    }
    CHECK_EQ(got, 2);
    tecs_query_free(q);

    /* A pair term follows the changes; a dead target matches nothing. */
    q = TECS_QUERY(w, { .comp = pos }, { .comp = likes, .target = ann, .access = TECS_FILTER });
    CHECK_EQ(iter_ids(w, q, out, 8), 2);
    CHECK_ERR(tecs_destroy(w, ann), TECS_OK);
    CHECK_EQ(iter_ids(w, q, out, 8), 0);
    tecs_query_free(q);

    /* Bad terms. */
    CHECK(TECS_QUERY(w, { .comp = pos, .target = bob }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(TECS_QUERY(w, { .comp = TECS_WILDCARD, .target = bob }) == NULL);   /* a value */
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(TECS_QUERY(w, { .comp = likes, .target = bob },
                     { .comp = likes, .target = bob }) == NULL);
    CHECK(TECS_QUERY(w, { .comp = likes, .access = TECS_FILTER }) == NULL);  /* no target */
    CHECK(strstr(tecs_last_error_msg(w), "target") != NULL);
    CHECK(TECS_QUERY(w, { .comp = likes, .target = bob }) == NULL);     /* a write term */
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    q = TECS_QUERY(w, { .comp = likes, .target = bob, .access = TECS_FILTER },
                   { .comp = likes, .target = e[0], .access = TECS_FILTER });
    CHECK(q != NULL);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

TEST(relation_query_reads_from_the_parent)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    typedef struct { float x; } Mass;
    tecs_comp_t mass = TECS_COMPONENT(w, Mass);
    tecs_entity_t p[3], c[9];
    for (int i = 0; i < 3; i++) {
        p[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, p[i], pos, RPos, { (float)(100 * (i + 1)), 0 }), TECS_OK);
    }
    CHECK_ERR(tecs_remove(w, p[2], pos), TECS_OK);      /* p2's children: no value */
    CHECK_ERR(TECS_SET(w, p[2], mass, Mass, { 1 }), TECS_OK);
    for (int i = 0; i < 9; i++) {
        c[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, c[i], pos, RPos, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(tecs_pair_add(w, c[i], co, p[i % 3]), TECS_OK);   /* interleaved */
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos, .access = TECS_READ },
                                 { .comp = pos, .from_parent = true, .access = TECS_READ });
    CHECK(q != NULL);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        CHECK(tecs_field_is_self(&it, 0));
        CHECK(!tecs_field_is_self(&it, 1));
        const RPos *mine = tecs_field(&it, 0), *up = tecs_field(&it, 1);
        for (int32_t r = 0; r < it.count; r++, rows++) {
            tecs_entity_t parent = tecs_pair_target(w, it.entities[r], co, 0);
            CHECK_EQ(up->x, TECS_GET(w, parent, pos, RPos)->x);
            CHECK_EQ(mine[r].x, TECS_GET(w, it.entities[r], pos, RPos)->x);
        }
    }
    CHECK_EQ(rows, 6);                  /* the children of p0 and p1 */
    tecs_query_free(q);

    /* Consecutive children of one parent come in one step. */
    tecs_entity_t p3 = tecs_new(w);
    CHECK_ERR(TECS_SET(w, p3, pos, RPos, { 7, 0 }), TECS_OK);
    for (int i = 0; i < 5; i++) {
        tecs_entity_t k = tecs_new(w);
        CHECK_ERR(TECS_SET(w, k, pos, RPos, { 0, 0 }), TECS_OK);
        CHECK_ERR(tecs_pair_add(w, k, co, p3), TECS_OK);
    }
    q = TECS_QUERY(w, { .comp = mass, .from_parent = true, .access = TECS_FILTER },
                   { .comp = pos, .from_parent = true, .access = TECS_READ,
                     .oper = TECS_OPTIONAL });
    it = TECS_ITER(w, .query = q);
    rows = 0;
    while (tecs_iter_next(&it)) {
        CHECK(tecs_field(&it, 1) == NULL);      /* p2 has mass, no position */
        rows += it.count;
    }
    CHECK_EQ(rows, 3);
    tecs_query_free(q);
    q = TECS_QUERY(w, { .comp = pos, .from_parent = true, .access = TECS_READ });
    it = TECS_ITER(w, .query = q);
    int steps = 0, big = 0;
    while (tecs_iter_next(&it)) {
        steps++;
        big += it.count == 5 && ((const RPos *)tecs_field(&it, 0))->x == 7;
    }
    CHECK_EQ(big, 1);
    CHECK_EQ(steps, 7);                 /* 6 interleaved children, then p3's five */
    tecs_query_free(q);

    /* Read-only, and only of a table component. */
    CHECK(TECS_QUERY(w, { .comp = pos, .from_parent = true }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(TECS_QUERY(w, { .comp = co, .from_parent = true, .access = TECS_FILTER }) == NULL);
    TW_CHECK(w);
    tw_free(w);
}

/* Walk q (reverse or not) and check each step against the tree: its rows
** share their parent, each term read from the parent (terms t of shared,
** component comp[t], operator oper[t]) points to that parent's value or
** is NULL, a ChildOf term (term ct, or -1) points to the parent's id, and
** every entity of e[0..n) that matches comes once. @return the rows. */
static int32_t walk_parents(tecs_world_t *w, tecs_query_t *q, bool reverse, tecs_comp_t co,
                            const tecs_term_t *terms, int nterms, const tecs_entity_t *e, int n)
{
    enum { MAXN = 4096 };
    static uint8_t seen[MAXN];
    memset(seen, 0, sizeof seen);
    int32_t rows = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q, .reverse = reverse);
    while (tecs_iter_next(&it)) {
        CHECK(it.count > 0);
        tecs_entity_t up = tecs_pair_target(w, it.entities[0], co, 0);
        for (int32_t r = 0; r < it.count; r++, rows++) {
            tecs_entity_t x = it.entities[r];
            CHECK(TECS_ENTITY_INDEX(x) < MAXN && !seen[TECS_ENTITY_INDEX(x)]);
            seen[TECS_ENTITY_INDEX(x)] = 1;
            CHECK(tecs_pair_target(w, x, co, 0) == up);
        }
        for (int t = 0; t < nterms; t++) {
            const void *f = tecs_field(&it, t);
            if (terms[t].comp == co) {
                CHECK(f != NULL && *(const tecs_entity_t *)f == up);
            } else if (terms[t].from_parent) {
                const void *want = up ? tecs_get(w, up, terms[t].comp) : NULL;
                CHECK(f == (terms[t].access == TECS_FILTER || terms[t].oper == TECS_NONE
                                ? NULL : want));
            }
        }
    }
    /* Every entity that matches came. */
    for (int i = 0; i < n; i++) {
        tecs_entity_t up = tecs_pair_target(w, e[i], co, 0);
        bool match = true;
        for (int t = 0; t < nterms; t++) {
            bool has = terms[t].comp == co ? up != 0 &&
                       (terms[t].target == TECS_WILDCARD || terms[t].target == up)
                       : terms[t].from_parent ? up != 0 && tecs_has(w, up, terms[t].comp)
                       : tecs_has(w, e[i], terms[t].comp);
            if (terms[t].oper == TECS_WITH)
                match = match && has;
            else if (terms[t].oper == TECS_NONE)
                match = match && !has;
        }
        CHECK_EQ(seen[TECS_ENTITY_INDEX(e[i])], match);
    }
    return rows;
}

TEST(relation_from_parent_walks_match_the_tree)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t pos = TECS_COMPONENT(w, RPos);
    typedef struct { float m; } Mass;
    typedef struct { int32_t k; } Kind;
    tecs_comp_t mass = TECS_COMPONENT(w, Mass), kind = TECS_COMPONENT(w, Kind);
    /* A forest of 3000 nodes past several link pages: runs of siblings made
    ** together, interleaved ones, parents with and without Mass and Kind. */
    enum { N = 3000 };
    static tecs_entity_t e[N];
    uint64_t s = 42;
    for (int i = 0; i < N; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, RPos, { (float)i, 0 }), TECS_OK);
        if ((s >> 33) % 10 < 7)
            CHECK_ERR(TECS_SET(w, e[i], mass, Mass, { (float)i }), TECS_OK);
        if ((s >> 40) % 2)
            CHECK_ERR(TECS_SET(w, e[i], kind, Kind, { i }), TECS_OK);
        int parent = i < 20 ? -1 : (s >> 45) % 4 == 0 ? (int)((s >> 20) % (uint64_t)(i / 2))
                                                      : (i - 20) / 6;
        if (parent >= 0)
            CHECK_ERR(tecs_pair_add(w, e[i], co, e[parent]), TECS_OK);
    }
    TW_CHECK(w);
    tecs_entity_t some = e[100];
    const tecs_term_t shapes[][3] = {
        { { .comp = pos, .access = TECS_READ },
          { .comp = mass, .from_parent = true, .access = TECS_READ } },
        { { .comp = pos },
          { .comp = mass, .from_parent = true, .access = TECS_READ, .oper = TECS_OPTIONAL } },
        { { .comp = pos, .access = TECS_READ },
          { .comp = mass, .from_parent = true, .access = TECS_FILTER, .oper = TECS_NONE } },
        { { .comp = pos, .access = TECS_READ },
          { .comp = mass, .from_parent = true, .access = TECS_READ },
          { .comp = kind, .from_parent = true, .access = TECS_READ, .oper = TECS_OPTIONAL } },
        { { .comp = pos, .access = TECS_READ },
          { .comp = co, .target = TECS_WILDCARD, .access = TECS_READ } },
        { { .comp = pos, .access = TECS_READ },
          { .comp = co, .target = some, .access = TECS_READ } },
    };
    const int nterms[] = { 2, 2, 2, 3, 2, 2 };
    for (int cascade = 0; cascade < 2; cascade++)
        for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
            tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
                .terms = shapes[k], .term_count = nterms[k], .cascade = cascade });
            CHECK(q != NULL);
            int32_t fwd = walk_parents(w, q, false, co, shapes[k], nterms[k], e, N);
            int32_t rev = walk_parents(w, q, true, co, shapes[k], nterms[k], e, N);
            CHECK_EQ(fwd, rev);
            CHECK(fwd > 0);
            tecs_query_free(q);
        }
    tw_free(w);
}

typedef struct { float x, y; } Local;
typedef struct { float x, y; } World;

TEST(relation_cascade_parents_before_children)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t local = TECS_COMPONENT(w, Local), world = TECS_COMPONENT(w, World);
    /* The deepest archetypes made first: a chain whose nodes get their
    ** components from the bottom up. */
    tecs_entity_t chain[4];
    for (int i = 0; i < 4; i++) {
        chain[i] = tecs_new(w);
        if (i > 0)
            CHECK_ERR(tecs_pair_add(w, chain[i], co, chain[i - 1]), TECS_OK);
    }
    for (int i = 3; i >= 0; i--) {
        CHECK_ERR(TECS_SET(w, chain[i], local, Local, { 0, 0 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, chain[i], world, World, { 0, 0 }), TECS_OK);
    }
    enum { N = 40 };
    tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], local, Local, { 1, (float)i }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], world, World, { 0, 0 }), TECS_OK);
    }
    /* A tree: e[i]'s parent is e[(i - 1) / 3], attached deepest first. */
    for (int i = N - 1; i >= 1; i--)
        CHECK_ERR(tecs_pair_add(w, e[i], co, e[(i - 1) / 3]), TECS_OK);
    TW_CHECK(w);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = local, .access = TECS_READ },
                                  { .comp = world },
                                  { .comp = world, .from_parent = true,
                                    .access = TECS_READ, .oper = TECS_OPTIONAL } },
        .term_count = 3, .cascade = true });
    CHECK(q != NULL);
    /* World = parent's world + local: one pass, parents first. */
    for (int pass = 0; pass < 2; pass++) {
        tecs_iter_t it = TECS_ITER(w, .query = q);
        while (tecs_iter_next(&it)) {
            const Local *l = tecs_field(&it, 0);
            World *wd = tecs_field(&it, 1);
            const World *up = tecs_field(&it, 2);
            for (int32_t r = 0; r < it.count; r++) {
                wd[r].x = l[r].x + (up ? up->x : 0);
                wd[r].y = l[r].y + (up ? up->y : 0);
            }
        }
        for (int i = 0; i < N; i++) {
            float depth = (float)tecs_depth(w, e[i]) + 1, ysum = 0;
            for (tecs_entity_t k = e[i]; k != 0; k = tecs_pair_target(w, k, co, 0))
                ysum += TECS_GET(w, k, local, Local)->y;
            const World *got = TECS_GET(w, e[i], world, World);
            CHECK_EQ(got->x, depth);
            CHECK_EQ(got->y, ysum);
        }
        /* Reparent a subtree one level up, then run again. */
        CHECK_ERR(tecs_pair_add(w, e[4], co, e[0]), TECS_OK);
        TW_CHECK(w);
    }
    CHECK_EQ(tecs_depth(w, e[13]), 2);          /* 13 -> 4 -> 0 */
    /* The depth tags are the add-on's. */
    tecs_comp_t d1 = tecs_component_lookup(w, "ChildOf.1");
    CHECK(d1 != 0);
    CHECK_ERR(tecs_add(w, e[0], d1), TECS_EINVAL);
    CHECK_ERR(tecs_remove(w, e[1], d1), TECS_EINVAL);
    /* Roots: a node leaves the tree with its subtree. */
    CHECK_ERR(tecs_pair_remove(w, e[4], co, TECS_WILDCARD), TECS_OK);
    CHECK_EQ(tecs_depth(w, e[13]), 1);
    TW_CHECK(w);
    tecs_query_free(q);
    tw_free(w);
}
