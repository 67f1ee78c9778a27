/*
** Inheritance (IsA): an entity with (IsA, base) reads through its base
** every table component it has none of (tecs_get, .inherited terms),
** down a chain of bases; setting its own value overrides, removing it
** inherits again; a cycle is refused, a base with instances is not
** destroyed; caches and membership observers follow the base's changes.
*/
#include "test.h"

#include <tinyecs/handle.h>
#include <tinyecs/observer.h>
#include <tinyecs/relation.h>
#include <tinyecs/snapshot.h>

typedef struct { float x, y; } pos;
typedef struct { float x, y; } vel;

typedef struct {
    tecs_world_t *w;
    tecs_comp_t pos, vel, isa;
} fx;

static fx fx_new(void)
{
    fx f = { .w = tw_new() };
    f.pos = TECS_COMPONENT(f.w, pos);
    f.vel = tecs_component_new(f.w, &(tecs_component_desc_t){
        .name = "vel", .size = sizeof(vel), .align = _Alignof(vel), .inherit = true });
    f.isa = tecs_isa(f.w);
    return f;
}

/* The base's value of Vel for every Pos entity, summed by a query with
** an inherited term; *shared counts the steps whose field was shared. */
static float sum_vel_dir(fx *f, int *rows, int *shared, bool reverse)
{
    tecs_query_t *q = TECS_QUERY(f->w, { .comp = f->pos },
                                 { .comp = f->vel, .access = TECS_READ, .inherited = true });
    float sum = 0;
    *rows = 0;
    *shared = 0;
    tecs_iter_t it = tecs_iter(f->w, &(tecs_iter_desc_t){ .query = q, .reverse = reverse });
    while (tecs_iter_next(&it)) {
        const vel *v = tecs_field(&it, 1);
        bool self = tecs_field_is_self(&it, 1);
        *shared += !self;
        for (int i = 0; i < it.count; i++)
            sum += self ? v[i].x : v[0].x;
        *rows += it.count;
    }
    tecs_query_free(q);
    return sum;
}

/* Both directions agree (steps may differ). */
static float sum_vel(fx *f, int *rows, int *shared)
{
    int rrows, rshared;
    float back = sum_vel_dir(f, &rrows, &rshared, true);
    float sum = sum_vel_dir(f, rows, shared, false);
    CHECK(back == sum);
    CHECK_EQ(rrows, *rows);
    return sum;
}

TEST(isa_reads_through_the_base)
{
    fx f = fx_new();
    CHECK(f.isa != 0);
    CHECK_EQ(tecs_isa(f.w), f.isa);
    CHECK(tecs_is_relation(f.w, f.isa));
    CHECK_EQ(tecs_relation_cleanup(f.w, f.isa), TECS_CLEANUP_REFUSE);
    CHECK(tecs_component_inherit(f.w, f.vel));
    tecs_entity_t base = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 3, 4 }), TECS_OK);
    tecs_entity_t e = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, e, f.pos, pos, { 0, 0 }), TECS_OK);
    CHECK(tecs_get(f.w, e, f.vel) == NULL);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    CHECK_EQ(tecs_pair_target(f.w, e, f.isa, 0), base);
    const vel *v = tecs_get(f.w, e, f.vel);
    CHECK(v != NULL && v == tecs_get(f.w, base, f.vel));
    CHECK(!tecs_has(f.w, e, f.vel));               /* own only */
    CHECK(tecs_get_mut(f.w, e, f.vel) == NULL);    /* no write through */
    CHECK_ERR(tecs_last_error(f.w), TECS_ENOENT);
    /* A change of the base's value is seen through it. */
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 5, 6 }), TECS_OK);
    CHECK(TECS_GET(f.w, e, f.vel, vel)->x == 5);
    /* An override, then back to the base's. */
    CHECK_ERR(TECS_SET(f.w, e, f.vel, vel, { 7, 8 }), TECS_OK);
    CHECK(TECS_GET(f.w, e, f.vel, vel)->x == 7);
    CHECK(TECS_GET(f.w, base, f.vel, vel)->x == 5);
    CHECK_ERR(tecs_remove(f.w, e, f.vel), TECS_OK);
    CHECK(TECS_GET(f.w, e, f.vel, vel)->x == 5);
    /* No longer an instance: nothing inherited. */
    CHECK_ERR(tecs_pair_remove(f.w, e, f.isa, base), TECS_OK);
    CHECK(tecs_get(f.w, e, f.vel) == NULL);
    CHECK_ERR(tecs_last_error(f.w), TECS_ENOENT);
    CHECK(TECS_GET(f.w, e, f.pos, pos) != NULL);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_query_term_shares_the_base_value)
{
    fx f = fx_new();
    tecs_entity_t base = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 2, 0 }), TECS_OK);
    tecs_entity_t inst[10];
    for (int i = 0; i < 10; i++) {
        inst[i] = tecs_new(f.w);
        CHECK_ERR(TECS_SET(f.w, inst[i], f.pos, pos, { 0, 0 }), TECS_OK);
        CHECK_ERR(tecs_pair_add(f.w, inst[i], f.isa, base), TECS_OK);
    }
    tecs_entity_t own = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, own, f.pos, pos, { 0, 0 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, own, f.vel, vel, { 100, 0 }), TECS_OK);
    tecs_entity_t none = tecs_new(f.w);      /* neither own nor inherited */
    CHECK_ERR(TECS_SET(f.w, none, f.pos, pos, { 0, 0 }), TECS_OK);
    int rows, shared;
    CHECK(sum_vel(&f, &rows, &shared) == 10 * 2 + 100);
    CHECK_EQ(rows, 11);
    CHECK_EQ(shared, 1);                    /* one step for the ten */
    /* A plain term sees own values only. */
    tecs_query_t *plain = TECS_QUERY(f.w, { .comp = f.pos }, { .comp = f.vel });
    CHECK_EQ(tecs_query_count(plain), 1);
    tecs_query_free(plain);
    /* Two overrides: they leave the shared step. */
    CHECK_ERR(TECS_SET(f.w, inst[0], f.vel, vel, { 10, 0 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, inst[1], f.vel, vel, { 10, 0 }), TECS_OK);
    CHECK(sum_vel(&f, &rows, &shared) == 8 * 2 + 100 + 20);
    CHECK_EQ(rows, 11);
    /* The base loses the value: its instances have none to read. */
    CHECK_ERR(tecs_remove(f.w, base, f.vel), TECS_OK);
    CHECK(sum_vel(&f, &rows, &shared) == 100 + 20);
    CHECK_EQ(rows, 3);
    /* A none-term over an inherited component. */
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 2, 0 }), TECS_OK);
    tecs_query_t *without = TECS_QUERY(f.w, { .comp = f.pos },
                                       { .comp = f.vel, .oper = TECS_NONE, .inherited = true });
    CHECK_EQ(tecs_query_count(without), 1);     /* `none` alone */
    tecs_query_free(without);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_variants_and_cycles)
{
    fx f = fx_new();
    tecs_entity_t a = tecs_new(f.w), b = tecs_new(f.w), e = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, a, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, a, f.pos, pos, { 9, 9 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, b, f.isa, a), TECS_OK);      /* b: a variant of a */
    CHECK_ERR(TECS_SET(f.w, b, f.pos, pos, { 5, 5 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, b), TECS_OK);
    CHECK(TECS_GET(f.w, e, f.vel, vel)->x == 1);    /* from a, through b */
    CHECK(TECS_GET(f.w, e, f.pos, pos)->x == 5);    /* b's override */
    /* Cycles are refused, whatever their length. */
    CHECK_ERR(tecs_pair_add(f.w, a, f.isa, e), TECS_ECYCLE);
    CHECK_ERR(tecs_pair_add(f.w, a, f.isa, b), TECS_ECYCLE);
    CHECK_ERR(tecs_pair_add(f.w, a, f.isa, a), TECS_ECYCLE);
    CHECK_EQ(tecs_pair_target(f.w, a, f.isa, 0), 0);
    /* Retargeting: e now inherits from a directly. */
    CHECK_ERR(TECS_SET(f.w, a, f.pos, pos, { 9, 9 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, a), TECS_OK);
    CHECK(TECS_GET(f.w, e, f.pos, pos)->x == 9);
    int rows, shared;
    CHECK(sum_vel(&f, &rows, &shared) == 1 + 1);   /* a owns, b inherits (e has no pos) */
    CHECK_EQ(rows, 2);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_base_with_instances_is_not_destroyed)
{
    fx f = fx_new();
    tecs_entity_t base = tecs_new(f.w), e = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, base), TECS_EBUSY);
    CHECK(tecs_is_alive(f.w, base));
    CHECK(TECS_GET(f.w, e, f.vel, vel) != NULL);
    /* The instance goes first, then the base may. */
    CHECK_ERR(tecs_destroy(f.w, e), TECS_OK);
    CHECK_ERR(tecs_destroy(f.w, base), TECS_OK);
    /* Its tag is taken again by the next base. */
    int32_t ncomps = tecs_world_component_count(f.w);
    tecs_entity_t b2 = tecs_new(f.w), e2 = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, b2, f.vel, vel, { 4, 0 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e2, f.isa, b2), TECS_OK);
    CHECK_EQ(tecs_world_component_count(f.w), ncomps);
    CHECK(TECS_GET(f.w, e2, f.vel, vel)->x == 4);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_tags_are_the_add_ons)
{
    fx f = fx_new();
    tecs_entity_t base = tecs_new(f.w), e = tecs_new(f.w);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    tecs_comp_t tag = tecs_component_lookup(f.w, "IsA.1");
    CHECK(tag != 0);
    CHECK(tecs_has(f.w, e, tag));
    CHECK_ERR(tecs_remove(f.w, e, tag), TECS_EINVAL);
    CHECK_ERR(tecs_add(f.w, base, tag), TECS_EINVAL);
    CHECK(tecs_has(f.w, e, tag));
    /* Bad terms. */
    CHECK(TECS_QUERY(f.w, { .comp = f.vel, .inherited = true, .access = TECS_WRITE }) == NULL);
    CHECK_ERR(tecs_last_error(f.w), TECS_EINVAL);
    CHECK(TECS_QUERY(f.w, { .comp = f.vel, .inherited = true, .from_parent = true }) == NULL);
    CHECK_ERR(tecs_last_error(f.w), TECS_EINVAL);
    CHECK(TECS_QUERY(f.w, { .comp = f.isa, .inherited = true, .access = TECS_FILTER }) == NULL);
    CHECK_ERR(tecs_last_error(f.w), TECS_EINVAL);
    /* Only a table component with a value is inherit. */
    CHECK_EQ(tecs_component_new(f.w, &(tecs_component_desc_t){ .name = "T", .inherit = true }),
             0);
    CHECK_ERR(tecs_last_error(f.w), TECS_EINVAL);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_inherited_term_without_the_add_on)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t p = TECS_COMPONENT(w, pos);
    CHECK(TECS_QUERY(w, { .comp = p, .inherited = true }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    tw_free(w);
}

static void count_enter(const tecs_event_t *ev)
{
    ++*(int *)ev->ctx;
}

TEST(isa_membership_follows_the_base)
{
    fx f = fx_new();
    tecs_entity_t base = tecs_new(f.w);
    tecs_entity_t e = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, e, f.pos, pos, { 0, 0 }), TECS_OK);
    int enters = 0, leaves = 0;
    tecs_term_t terms[] = { { .comp = f.pos },
                            { .comp = f.vel, .access = TECS_READ, .inherited = true } };
    tecs_observer_t in = tecs_observer_new(f.w, &(tecs_observer_desc_t){
        .event = TECS_ON_ENTER, .terms = terms, .term_count = 2,
        .callback = count_enter, .ctx = &enters });
    tecs_observer_t out = tecs_observer_new(f.w, &(tecs_observer_desc_t){
        .event = TECS_ON_LEAVE, .terms = terms, .term_count = 2,
        .callback = count_enter, .ctx = &leaves });
    CHECK(in != 0 && out != 0);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    CHECK_EQ(enters, 0);                    /* the base has no vel */
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_EQ(enters, 1);                    /* the instance gains it */
    CHECK_ERR(TECS_SET(f.w, e, f.vel, vel, { 2, 0 }), TECS_OK);
    CHECK_EQ(enters, 1);                    /* an override: still a member */
    CHECK_EQ(leaves, 0);
    CHECK_ERR(tecs_remove(f.w, e, f.vel), TECS_OK);
    CHECK_ERR(tecs_remove(f.w, base, f.vel), TECS_OK);
    CHECK_EQ(leaves, 1);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_EQ(enters, 2);
    CHECK_ERR(tecs_pair_remove(f.w, e, f.isa, TECS_WILDCARD), TECS_OK);
    CHECK_EQ(leaves, 2);
    TW_CHECK(f.w);
    tw_free(f.w);
}

/* The values e reads in w, as they would be compared across worlds. */
static void same_reads(fx *a, tecs_world_t *b, tecs_comp_t bvel, tecs_entity_t e)
{
    const vel *va = tecs_get(a->w, e, a->vel), *vb = tecs_get(b, e, bvel);
    CHECK((va == NULL) == (vb == NULL));
    if (va && vb)
        CHECK(va->x == vb->x && va->y == vb->y);
}

TEST(isa_snapshot_and_delta_keep_bases)
{
    fx a = fx_new();
    tecs_entity_t base = tecs_new(a.w), variant = tecs_new(a.w), e[6];
    CHECK_ERR(TECS_SET(a.w, base, a.vel, vel, { 1, 2 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(a.w, variant, a.isa, base), TECS_OK);
    for (int i = 0; i < 6; i++) {
        e[i] = tecs_new(a.w);
        CHECK_ERR(TECS_SET(a.w, e[i], a.pos, pos, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(tecs_pair_add(a.w, e[i], a.isa, i % 2 ? base : variant), TECS_OK);
    }
    CHECK_ERR(TECS_SET(a.w, e[0], a.vel, vel, { 9, 9 }), TECS_OK);      /* an override */
    tecs_mark_t m;
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* A fresh world: the load's IsA is the world's. */
    tecs_world_t *b = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    TW_CHECK(b);
    tecs_comp_t bvel = tecs_component_lookup(b, "vel"), bisa = tecs_isa(b);
    CHECK(bisa != 0 && tecs_component_inherit(b, bvel));
    for (int i = 0; i < 6; i++) {
        same_reads(&a, b, bvel, e[i]);
        CHECK_EQ(tecs_pair_target(b, e[i], bisa, 0), i % 2 ? base : variant);
    }
    CHECK_ERR(tecs_destroy(b, base), TECS_EBUSY);
    /* Deltas follow the bases' changes, new instances, a new base. */
    CHECK_ERR(TECS_SET(a.w, base, a.vel, vel, { 3, 4 }), TECS_OK);
    tecs_entity_t base2 = tecs_new(a.w);
    CHECK_ERR(TECS_SET(a.w, base2, a.vel, vel, { 7, 7 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(a.w, e[1], a.isa, base2), TECS_OK);
    CHECK_ERR(tecs_pair_remove(a.w, e[2], a.isa, TECS_WILDCARD), TECS_OK);
    CHECK_ERR(tecs_delta_save_mem(a.w, &m, &buf), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(b, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    TW_CHECK(b);
    for (int i = 0; i < 6; i++)
        same_reads(&a, b, bvel, e[i]);
    CHECK(TECS_GET(b, e[1], bvel, vel)->x == 7);
    CHECK(tecs_get(b, e[2], bvel) == NULL);
    /* A world that made IsA first loads into it too. */
    tecs_world_t *c = tw_new();
    CHECK(tecs_isa(c) != 0);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    CHECK_ERR(tecs_snapshot_load_mem(c, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    TW_CHECK(c);
    tecs_comp_t cvel = tecs_component_lookup(c, "vel");
    for (int i = 0; i < 6; i++)
        same_reads(&a, c, cvel, e[i]);
    tw_free(c);
    tw_free(b);
    TW_CHECK(a.w);
    tw_free(a.w);
}

TEST(isa_get_many_reads_through_handles_do_not)
{
    fx f = fx_new();
    tecs_entity_t base = tecs_new(f.w), e = tecs_new(f.w), own = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, own, f.vel, vel, { 2, 0 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    tecs_entity_t ids[3] = { e, own, base };
    const void *out[3];
    CHECK_ERR(tecs_get_many(f.w, f.vel, ids, 3, out), TECS_OK);
    for (int i = 0; i < 3; i++)
        CHECK(out[i] == tecs_get(f.w, ids[i], f.vel));
    tecs_handle_t h;
    CHECK_ERR(tecs_handle_init(f.w, f.vel, &h), TECS_OK);
    CHECK(tecs_handle_get(&h, e) == NULL);
    CHECK(tecs_handle_get(&h, own) == tecs_get(f.w, own, f.vel));
    /* An enableable component is an entity's own. */
    tecs_comp_t en = tecs_component_new(f.w, &(tecs_component_desc_t){
        .name = "en", .size = 4, .align = 4, .enableable = true });
    CHECK(TECS_QUERY(f.w, { .comp = en, .access = TECS_READ, .inherited = true }) == NULL);
    CHECK_ERR(tecs_last_error(f.w), TECS_EINVAL);
    TW_CHECK(f.w);
    tw_free(f.w);
}

TEST(isa_base_in_a_hierarchy_keeps_its_tag)
{
    fx f = fx_new();
    tecs_comp_t childof = tecs_childof(f.w);
    tecs_entity_t p = tecs_new(f.w), base = tecs_new(f.w), e = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, base, f.vel, vel, { 1, 0 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, base, childof, p), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, e, f.isa, base), TECS_OK);
    CHECK_ERR(tecs_pair_remove(f.w, base, childof, p), TECS_OK);
    TW_CHECK(f.w);
    CHECK(TECS_GET(f.w, e, f.vel, vel) != NULL);
    CHECK_ERR(tecs_pair_add(f.w, base, childof, e), TECS_OK);   /* a child of its instance */
    CHECK_ERR(tecs_destroy(f.w, p), TECS_OK);
    /* The instance's subtree holds the base: refused as a whole. */
    CHECK_ERR(tecs_destroy(f.w, e), TECS_EBUSY);
    CHECK(tecs_is_alive(f.w, e) && tecs_is_alive(f.w, base));
    TW_CHECK(f.w);
    tw_free(f.w);
}

/* Every failed allocation of an IsA pair's add (a first base: its tag
** made; a retarget: the instance moves) and remove: TECS_ENOMEM, the
** instance where it was, reading what it read, nothing leaked. */
TEST(isa_out_of_memory_changes_nothing)
{
    for (int step = 0; step < 3; step++) {
        bool done = false;
        for (long k = 1; k < 400 && !done; k++) {
            tw_alloc a = { 0 };
            tecs_world_t *w = tw_new_ex(&a, 0);
            tecs_comp_t p = TECS_COMPONENT(w, pos);
            tecs_comp_t v = tecs_component_new(w, &(tecs_component_desc_t){
                .name = "vel", .size = sizeof(vel), .align = _Alignof(vel), .inherit = true });
            tecs_comp_t isa = tecs_isa(w);
            tecs_entity_t b1 = tecs_new(w), b2 = tecs_new(w), e = tecs_new(w);
            CHECK(isa != 0);
            CHECK_ERR(TECS_SET(w, b1, v, vel, { 1, 0 }), TECS_OK);
            CHECK_ERR(TECS_SET(w, b2, v, vel, { 2, 0 }), TECS_OK);
            CHECK_ERR(TECS_SET(w, e, p, pos, { 0, 0 }), TECS_OK);
            if (step > 0)
                CHECK_ERR(tecs_pair_add(w, e, isa, b1), TECS_OK);
            tecs_archetype_t *was = tecs_entity_archetype(w, e);
            tecs_entity_t base = tecs_pair_target(w, e, isa, 0);
            a.fail_at = a.calls + k;
            tecs_err_t err = step == 0 ? tecs_pair_add(w, e, isa, b1)
                           : step == 1 ? tecs_pair_add(w, e, isa, b2)
                                       : tecs_pair_remove(w, e, isa, b1);
            done = a.failures == 0;
            a.fail_at = 0;
            TW_CHECK(w);
            if (err == TECS_ENOMEM) {
                CHECK(tecs_entity_archetype(w, e) == was);
                CHECK_EQ(tecs_pair_target(w, e, isa, 0), base);
                const vel *got = tecs_get(w, e, v);
                CHECK(base ? got && got->x == 1 : got == NULL);
            } else {
                CHECK_ERR(err, TECS_OK);
                const vel *got = tecs_get(w, e, v);
                CHECK(step == 2 ? got == NULL : got && got->x == (float)(step + 1));
            }
            tw_free(w);
        }
        CHECK(done);
    }
}

/* An instance of a prefab holding an inherited component shares it: no
** copy, the prefab its base; its subtree's copies inherit from the
** prefab's children the same way; a prefab with nothing to share makes
** plain copies, and may die while they live. */
TEST(isa_instances_share_what_is_inherited)
{
    fx f = fx_new();
    tecs_comp_t pf = tecs_prefab(f.w), childof = tecs_childof(f.w);
    tecs_entity_t orc = tecs_new(f.w), axe = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, orc, f.pos, pos, { 1, 1 }), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, orc, f.vel, vel, { 2, 0 }), TECS_OK);
    CHECK_ERR(tecs_add(f.w, orc, pf), TECS_OK);
    CHECK_ERR(TECS_SET(f.w, axe, f.vel, vel, { 5, 0 }), TECS_OK);
    CHECK_ERR(tecs_add(f.w, axe, pf), TECS_OK);
    CHECK_ERR(tecs_pair_add(f.w, axe, childof, orc), TECS_OK);
    tecs_entity_t e[3];
    CHECK_ERR(tecs_instantiate_bulk(f.w, orc, 3, e), TECS_OK);
    for (int i = 0; i < 3; i++) {
        CHECK(tecs_has(f.w, e[i], f.pos) && !tecs_has(f.w, e[i], f.vel));
        CHECK_EQ(tecs_pair_target(f.w, e[i], f.isa, 0), orc);
        CHECK(tecs_get(f.w, e[i], f.vel) == tecs_get(f.w, orc, f.vel));
        tecs_walk_t it = tecs_sources(f.w, e[i], childof);
        CHECK(tecs_walk_next(&it));
        tecs_entity_t kid = it.entity;
        CHECK_EQ(tecs_pair_target(f.w, kid, f.isa, 0), axe);
        CHECK(TECS_GET(f.w, kid, f.vel, vel)->x == 5);
    }
    int rows, shared;
    CHECK(sum_vel(&f, &rows, &shared) == 3 * 2);       /* the prefabs are hidden */
    CHECK_EQ(rows, 3);
    CHECK_EQ(shared, 1);
    CHECK_ERR(tecs_destroy(f.w, orc), TECS_EBUSY);
    /* A variant: an instance made a prefab, its own vel over orc's. */
    tecs_entity_t chief = tecs_instantiate(f.w, orc);
    CHECK_ERR(tecs_add(f.w, chief, pf), TECS_OK);
    tecs_entity_t boss = tecs_instantiate(f.w, chief);
    CHECK_EQ(tecs_pair_target(f.w, boss, f.isa, 0), chief);
    CHECK(TECS_GET(f.w, boss, f.vel, vel)->x == 2);     /* orc's, through chief */
    CHECK_ERR(TECS_SET(f.w, chief, f.vel, vel, { 7, 0 }), TECS_OK);
    CHECK(TECS_GET(f.w, boss, f.vel, vel)->x == 7);
    /* Nothing to share: plain copies. */
    tecs_entity_t rock = tecs_new(f.w);
    CHECK_ERR(TECS_SET(f.w, rock, f.pos, pos, { 3, 3 }), TECS_OK);
    CHECK_ERR(tecs_add(f.w, rock, pf), TECS_OK);
    tecs_entity_t pebble = tecs_instantiate(f.w, rock);
    CHECK_EQ(tecs_pair_target(f.w, pebble, f.isa, 0), 0);
    CHECK_ERR(tecs_destroy(f.w, rock), TECS_OK);
    CHECK(TECS_GET(f.w, pebble, f.pos, pos)->x == 3);
    TW_CHECK(f.w);
    tw_free(f.w);
}
