/*
** Prefabs and hidden tags: an entity with the prefab tag (tecs_prefab) is
** left out of every query, cache, where and membership observer that does
** not name the tag; a query naming it sees prefabs (TECS_WITH: only them,
** TECS_OPTIONAL: them too); a snapshot keeps the tag hidden.
*/
#include "test.h"

#include <tinyecs/index.h>
#include <tinyecs/observer.h>
#include <tinyecs/relation.h>
#include <tinyecs/snapshot.h>

typedef struct { float x, y; } pos;

static int count_of(tecs_world_t *w, tecs_iter_desc_t d)
{
    tecs_iter_t it = tecs_iter(w, &d);
    return (int)tecs_iter_collect(&it, NULL, 0);
}

static void counted(const tecs_event_t *ev)
{
    ++*(int *)ev->ctx;
}

TEST(prefab_is_a_hidden_tag)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pf = tecs_prefab(w);
    CHECK(pf != 0);
    CHECK_EQ(tecs_prefab(w), pf);
    CHECK(tecs_component_hidden(w, pf));
    CHECK_EQ(tecs_component_size(w, pf), 0);
    CHECK(strcmp(tecs_component_name(w, pf), "Prefab") == 0);
    /* Only a tag of the table store may be hidden. */
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Big", .size = 4,
                                                             .hidden = true }), 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){
                 .name = "Spread", .hidden = true, .storage = TECS_STORAGE_SPARSE }), 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    tw_free(w);

    /* A "Prefab" that is not hidden is not the prefab tag. */
    w = tw_new();
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Prefab" }) != 0);
    CHECK_EQ(tecs_prefab(w), 0);
    CHECK_ERR(tecs_last_error(w), TECS_EEXIST);
    tw_free(w);
}

TEST(prefab_skipped_unless_named)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t Pos = TECS_COMPONENT(w, pos), pf = tecs_prefab(w);
    tecs_entity_t live = tecs_new(w), tmpl = tecs_new(w);
    TECS_SET(w, live, Pos, pos, { 1, 1 });
    TECS_SET(w, tmpl, Pos, pos, { 2, 2 });
    CHECK_ERR(tecs_add(w, tmpl, pf), TECS_OK);
    tecs_query_t *plain = TECS_QUERY(w, { .comp = Pos });
    tecs_query_t *only = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = Pos }, { .comp = pf } }, .term_count = 2 });
    tecs_query_t *both = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = Pos }, { .comp = pf, .oper = TECS_OPTIONAL } },
        .term_count = 2 });
    tecs_query_t *none = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = Pos }, { .comp = pf, .oper = TECS_NONE } },
        .term_count = 2 });
    tecs_query_t *all = tecs_query_all(w, 0, NULL);
    CHECK(plain && only && both && none && all);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = plain }), 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = only }), 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = both }), 2);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = none }), 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = all }), 1);
    CHECK_EQ(tecs_query_count(plain), 1);
    tecs_entity_t got;
    tecs_iter_t it = tecs_iter(w, &(tecs_iter_desc_t){ .query = only });
    CHECK_EQ(tecs_iter_collect(&it, &got, 1), 1);
    CHECK(got == tmpl);
    /* Its own archetype, iterated by name, is the caller's choice. */
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .archetype = tecs_entity_archetype(w, tmpl) }), 1);

    /* A where over an index of Pos: the index has both, the where one. */
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = Pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_real(0));
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = plain, .where = f }), 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .query = both, .where = f }), 2);

    /* A cache and a membership observer: the tag coming is a LEAVE, going
    ** an ENTER; an observer of Pos's events with no terms hears prefabs
    ** as a hook does, one with terms as its query says. */
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = plain });
    int enters = 0, leaves = 0, adds = 0, adds_termed = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
                                                     .query = plain, .callback = counted,
                                                     .ctx = &enters }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
                                                     .query = plain, .callback = counted,
                                                     .ctx = &leaves }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = Pos,
                                                     .callback = counted, .ctx = &adds }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = Pos, .terms = (tecs_term_t[]){ { .comp = Pos } },
        .term_count = 1, .callback = counted, .ctx = &adds_termed }));
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .cache = c }), 1);
    CHECK_ERR(tecs_add(w, live, pf), TECS_OK);
    CHECK_EQ(leaves, 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .cache = c }), 0);
    CHECK_ERR(tecs_remove(w, tmpl, pf), TECS_OK);
    CHECK_EQ(enters, 1);
    CHECK_EQ(count_of(w, (tecs_iter_desc_t){ .cache = c }), 1);
    tecs_entity_t p2 = tecs_new(w);
    CHECK_ERR(tecs_add(w, p2, pf), TECS_OK);
    TECS_SET(w, p2, Pos, pos, { 3, 3 });
    CHECK_EQ(adds, 1);
    CHECK_EQ(adds_termed, 0);
    CHECK_EQ(enters, 1);
    TW_CHECK(w);
    tecs_filter_free(f);
    tw_free(w);
}

TEST(prefab_survives_a_snapshot)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t Pos = TECS_COMPONENT(w, pos), pf = tecs_prefab(w);
    tecs_entity_t tmpl = tecs_new(w), live = tecs_new(w);
    TECS_SET(w, tmpl, Pos, pos, { 1, 1 });
    TECS_SET(w, live, Pos, pos, { 2, 2 });
    CHECK_ERR(tecs_add(w, tmpl, pf), TECS_OK);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_OK);

    /* Into an empty world: the tag comes back hidden, and is the world's
    ** prefab tag. */
    tecs_world_t *v = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(v, buf.data, buf.size), TECS_OK);
    tecs_comp_t vpf = tecs_component_lookup(v, "Prefab");
    CHECK(vpf != 0 && tecs_component_hidden(v, vpf));
    CHECK_EQ(tecs_prefab(v), vpf);
    CHECK(tecs_has(v, tmpl, vpf));
    tecs_query_t *q = TECS_QUERY(v, { .comp = tecs_component_lookup(v, "pos") });
    CHECK_EQ(count_of(v, (tecs_iter_desc_t){ .query = q }), 1);
    TW_CHECK(v);
    tw_free(v);

    /* Into a world whose "Prefab" is a plain tag: refused, by name. */
    v = tw_new();
    CHECK(tecs_component_new(v, &(tecs_component_desc_t){ .name = "Prefab" }) != 0);
    CHECK_ERR(tecs_snapshot_load_mem(v, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(v), "hidden") != NULL);
    tw_free(v);
    tecs_snapshot_buf_free(&buf);
    tw_free(w);
}
