/*
** Relationships in snapshots, deltas and their undo: a loaded world has
** the saved pairs, parents, children in order, sources in order and
** values; a snapshot without relations is the same bytes as before and a
** snapshot without the RELS section still loads; a bad, truncated or
** hostile RELS section, a pair naming a dead slot or no relation, a cycle
** of ChildOf, each fails the load and leaves the world empty; every failed
** allocation of a save and of a load too; a mirror kept by deltas has the
** source's pairs.
*/
#include "test.h"

typedef struct Debt { int32_t amount; float rate; } Debt;

typedef struct rw {
    tecs_world_t *w;
    tecs_comp_t childof, owes, likes, pos;
    tecs_entity_t e[12];
} rw;

/* The relations of rw, registered in w (a loading world may have them). */
static void rw_relations(rw *r)
{
    tecs_world_t *w = r->w;
    r->pos = TECS_COMPONENT(w, Position);
    r->childof = tecs_childof(w);
    r->owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = sizeof(Debt), .align = _Alignof(Debt),
                       .fields = (const tecs_field_t[]){
                           TECS_MEMBER(Debt, amount, TECS_TYPE_I32),
                           TECS_MEMBER(Debt, rate, TECS_TYPE_F32) },
                       .nfields = 2 } });
    r->likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" }, .exclusive = true });
    CHECK(r->childof && r->owes && r->likes);
}

/* A forest and pairs whose orders differ from the ids' and the
** creation's: children reparented and removed, sources added out of
** order, a value per pair. */
static void rw_fill(rw *r)
{
    tecs_world_t *w = r->w;
    tecs_entity_t *e = r->e;
    for (int i = 0; i < 12; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], r->pos, Position, { (float)i, 0 });
    }
    tecs_destroy(w, e[11]);                         /* a free slot in between */
    e[11] = 0;
    /* e0 { e3, e1, e4 { e6, e5 } }, e2 { e7 }; e8 a root */
    CHECK_ERR(tecs_pair_add(w, e[3], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[1], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[9], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[4], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[6], r->childof, e[4]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[5], r->childof, e[4]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[7], r->childof, e[2]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[9], r->childof, e[2]), TECS_OK);   /* reparented */
    CHECK_ERR(tecs_pair_remove(w, e[9], r->childof, e[2]), TECS_OK); /* a root again */
    /* Owes: e5 -> e2, e1 -> e2, e5 -> e0, e9 -> e2 (ring of e2: e5, e1, e9) */
    Debt d[4] = { { 10, 0.5f }, { 20, 1.5f }, { 30, 2.5f }, { 40, 3.5f } };
    CHECK_ERR(tecs_pair_set(w, e[5], r->owes, e[2], &d[0]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[1], r->owes, e[2], &d[1]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[5], r->owes, e[0], &d[2]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[9], r->owes, e[2], &d[3]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[1], r->owes, e[8]), TECS_OK);      /* zero-filled */
    /* Likes (exclusive): e7 -> e8, e3 -> e8, e0 -> e8 and e3 moved to e6 */
    CHECK_ERR(tecs_pair_add(w, e[7], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[0], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], r->likes, e[6]), TECS_OK);
    TW_CHECK(w);
}

static int walk_all(tecs_walk_t it, tecs_entity_t *out, int cap)
{
    int n = 0;
    while (tecs_walk_next(&it))
        if (n < cap)
            out[n++] = it.entity;
    return n;
}

/* The relation named name in w. */
static tecs_comp_t rel_named(tecs_world_t *w, const char *name)
{
    tecs_comp_t c = tecs_component_lookup(w, name);
    CHECK(c != 0 && tecs_is_relation(w, c));
    return c;
}

/* b's relationships are a's, entity by entity (the same ids): targets in
** order, values, sources in order, the depth-first trees. */
static void same_relations(tecs_world_t *a, tecs_world_t *b, const tecs_entity_t *ents, int n)
{
    const char *names[] = { "ChildOf", "Owes", "Likes" };
    CHECK_EQ(tecs_world_entity_count(b), tecs_world_entity_count(a));
    for (int k = 0; k < 3; k++) {
        tecs_comp_t ra = rel_named(a, names[k]), rb = rel_named(b, names[k]);
        for (int i = 0; i < n; i++) {
            tecs_entity_t e = ents[i];
            CHECK(tecs_is_alive(b, e));
            CHECK_EQ(tecs_pair_count(b, e, rb), tecs_pair_count(a, e, ra));
            for (int32_t j = 0; j <= tecs_pair_count(a, e, ra); j++) {
                tecs_entity_t t = tecs_pair_target(a, e, ra, j);
                CHECK_EQ(tecs_pair_target(b, e, rb, j), t);
                const void *va = t ? tecs_pair_get(a, e, ra, t) : NULL;
                const void *vb = t ? tecs_pair_get(b, e, rb, t) : NULL;
                CHECK((va == NULL) == (vb == NULL));
                if (va && vb)
                    CHECK(memcmp(va, vb, sizeof(Debt)) == 0);
            }
            tecs_entity_t sa[64], sb[64];
            int na = walk_all(tecs_sources(a, e, ra), sa, 64);
            CHECK_EQ(walk_all(tecs_sources(b, e, rb), sb, 64), na);
            CHECK(memcmp(sa, sb, (size_t)na * sizeof *sa) == 0);
            if (k == 0) {
                na = walk_all(tecs_tree(a, e, TECS_TREE_DEPTH_FIRST), sa, 64);
                CHECK_EQ(walk_all(tecs_tree(b, e, TECS_TREE_DEPTH_FIRST), sb, 64), na);
                CHECK(memcmp(sa, sb, (size_t)na * sizeof *sa) == 0);
                CHECK(tecs_has(b, e, rb) == tecs_has(a, e, ra));
            }
        }
    }
}

TEST(relsnap_round_trip_keeps_pairs_and_orders)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* Into a world that knows nothing: the relations come from the snapshot. */
    tecs_world_t *b = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    TW_CHECK(b);
    same_relations(a.w, b, a.e, 11);
    CHECK_EQ(tecs_childof(b), rel_named(b, "ChildOf"));
    CHECK_EQ(tecs_relation_cleanup(b, rel_named(b, "ChildOf")), TECS_CLEANUP_DESTROY);
    /* The loaded relations work: exclusive still, and the subtree dies with e0. */
    tecs_comp_t likes = rel_named(b, "Likes");
    CHECK_ERR(tecs_pair_add(b, a.e[3], likes, a.e[8]), TECS_OK);
    CHECK_EQ(tecs_pair_count(b, a.e[3], likes), 1);
    CHECK_ERR(tecs_destroy(b, a.e[0]), TECS_OK);
    CHECK(!tecs_is_alive(b, a.e[5]) && !tecs_is_alive(b, a.e[4]) && tecs_is_alive(b, a.e[2]));
    TW_CHECK(b);
    tw_free(b);
    /* Into a world that registered two of them first (in another order). */
    rw c = { .w = tw_new() };
    c.likes = tecs_relation_new(c.w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" }, .exclusive = true });
    c.childof = tecs_childof(c.w);
    CHECK(c.likes && c.childof);
    CHECK_ERR(tecs_snapshot_load_mem(c.w, buf.data, buf.size), TECS_OK);
    TW_CHECK(c.w);
    same_relations(a.w, c.w, a.e, 11);
    /* Saved again, the same bytes. */
    tecs_snapshot_buf_t again = { 0 };
    tecs_world_t *d = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(d, buf.data, buf.size), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(d, &again), TECS_OK);
    CHECK_EQ(again.size, buf.size);
    CHECK(memcmp(again.data, buf.data, buf.size) == 0);
    tecs_snapshot_buf_free(&again);
    tw_free(d);
    tw_free(c.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

TEST(relsnap_relation_kinds_must_agree)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* "Owes" a plain component here: refused, by name. */
    tecs_world_t *b = tw_new();
    tecs_component_new(b, &(tecs_component_desc_t){    /* the same layout */
        .name = "Owes", .size = sizeof(Debt), .align = _Alignof(Debt),
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Debt, amount, TECS_TYPE_I32),
                                          TECS_MEMBER(Debt, rate, TECS_TYPE_F32) },
        .nfields = 2 });
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(b), "Owes") != NULL);
    CHECK(strstr(tecs_last_error_msg(b), "plain component") != NULL);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    TW_CHECK(b);
    tw_free(b);
    /* "Likes" not exclusive here: refused. */
    b = tw_new();
    tecs_relation_new(b, &(tecs_relation_desc_t){ .component = { .name = "Likes" } });
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(b), "Likes") != NULL);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    TW_CHECK(b);
    tw_free(b);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}
