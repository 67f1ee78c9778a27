/*
** inspect_fixture.h — the world of the inspector API's tests and of its
** fuzz target: described Position, Velocity and Body (a nested component
** and an array), Named (a string its hooks own; live_strings counts them),
** an undescribed Blob, a tag, an enableable and a sparse component, a
** described relation Owes, a ChildOf parent with two children, a base with
** an instance (IsA), a Gravity resource, and two systems that ran a frame.
** Position entities fill several chunks, so that pages cross steps.
*/
#ifndef TECS_INSPECT_FIXTURE_H
#define TECS_INSPECT_FIXTURE_H

#include "test.h"
#include "tinyecs/json.h"
#include "../src/inspect/internal.h"

typedef struct IVec2 { float x, y; } IVec2;
typedef struct Body { float mass; IVec2 at; int32_t v[3]; } Body;
typedef struct Blob { unsigned char b[4]; } Blob;
typedef struct Debt { int32_t amount; } Debt;
typedef struct Gravity { float g; } Gravity;
typedef struct INamed { char *name; } INamed;

static long live_strings;                      /* allocated by INamed's hooks */

static void inamed_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    INamed *v = p;
    for (int32_t i = 0; i < n; i++)
        tw_str_free(v[i].name, &live_strings);
}

static void inamed_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    INamed *d = dst;
    const INamed *s = src;
    for (int32_t i = 0; i < n; i++) {
        char *t = tw_str_dup(s[i].name, &live_strings);
        inamed_dtor(&d[i], 1, ctx);
        d[i].name = t;
    }
}

/* The fixture's ids. */
typedef struct ifix {
    tecs_comp_t pos, vel, vec, body, named, blob, tag, flag, score, owes, grav, childof, isa;
    tecs_entity_t e1, e2, parent, kid1, kid2, base, inst, unique_a;
    tecs_system_t move, count;
    tecs_query_t *move_q;
    tecs_index_t *unique;
    int32_t npos;               /* entities with Position                    */
} ifix;

static void ifix_move(tecs_iter_t *it)
{
    Position *p = TECS_FIELD(it, Position, 0);
    const Velocity *v = TECS_FIELD(it, const Velocity, 1);
    for (int32_t i = 0; i < it->count; i++)
        p[i].x += v[i].x * (float)it->delta_time;
}

static void ifix_count(tecs_iter_t *it)
{
    (void)it;
}

/* Build the fixture's world (rows per chunk 16). */
static tecs_world_t *ifix_new(tw_alloc *al, ifix *f)
{
    tecs_world_t *w = tw_new_ex(al, 16);
    memset(f, 0, sizeof *f);
    f->pos = TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Position, y, TECS_TYPE_F32));
    f->vel = TECS_COMPONENT_FIELDS(w, Velocity, TECS_MEMBER(Velocity, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Velocity, y, TECS_TYPE_F32));
    f->vec = TECS_COMPONENT_FIELDS(w, IVec2, TECS_MEMBER(IVec2, x, TECS_TYPE_F32),
                                   TECS_MEMBER(IVec2, y, TECS_TYPE_F32));
    f->body = TECS_COMPONENT_FIELDS(w, Body, TECS_MEMBER(Body, mass, TECS_TYPE_F32),
                                    TECS_MEMBER_STRUCT(Body, at, f->vec),
                                    TECS_MEMBER_ARRAY(Body, v, TECS_TYPE_I32));
    f->named = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(INamed), .align = _Alignof(INamed),
        .dtor = inamed_dtor, .copy = inamed_copy,
        .fields = (const tecs_field_t[]){ TECS_MEMBER(INamed, name, TECS_TYPE_STRING) },
        .nfields = 1 });
    f->blob = TECS_COMPONENT(w, Blob);
    f->tag = TECS_TAG(w, Enemy);
    f->flag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Flag", .size = 4,
        .align = 4, .enableable = true,
        .fields = (const tecs_field_t[]){ { "on", TECS_TYPE_U32, 0, 1, 0 } }, .nfields = 1 });
    f->score = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Score", .size = 8,
        .align = 8, .storage = TECS_STORAGE_SPARSE,
        .fields = (const tecs_field_t[]){ { "v", TECS_TYPE_F64, 0, 1, 0 } }, .nfields = 1 });
    f->owes = tecs_relation_new(w, &(tecs_relation_desc_t){ .component = {
        .name = "Owes", .size = sizeof(Debt), .align = _Alignof(Debt),
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Debt, amount, TECS_TYPE_I32) },
        .nfields = 1 } });
    f->grav = TECS_COMPONENT_FIELDS(w, Gravity, TECS_MEMBER(Gravity, g, TECS_TYPE_F32));
    f->childof = tecs_childof(w);
    f->isa = tecs_isa(w);
    CHECK(f->pos && f->vel && f->vec && f->body && f->named && f->blob && f->tag && f->flag &&
          f->score && f->owes && f->grav && f->childof && f->isa);

    f->e1 = tecs_new(w);
    f->e2 = tecs_new(w);
    CHECK_ERR(tecs_set(w, f->e1, f->pos, &(Position){ 1.5f, -2 }), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->vel, &(Velocity){ 10, 0 }), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->blob, &(Blob){ { 1, 0x2a, 0xbe, 0xff } }), TECS_OK);
    CHECK_ERR(tecs_add(w, f->e1, f->tag), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->flag, &(uint32_t){ 7 }), TECS_OK);
    CHECK_ERR(tecs_enable(w, f->e1, f->flag, false), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->score, &(double){ 0.25 }), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->named, &(INamed){ "first" }), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e1, f->body, &(Body){ 2, { 3, 4 }, { 5, 6, 7 } }), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, f->e1, f->owes, f->e2, &(Debt){ 40 }), TECS_OK);
    CHECK_ERR(tecs_set(w, f->e2, f->pos, &(Position){ 0, 0 }), TECS_OK);
    f->npos = 2;
    f->parent = tecs_new(w);
    f->kid1 = tecs_new(w);
    f->kid2 = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, f->kid1, f->childof, f->parent), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f->kid2, f->childof, f->parent), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f->e1, f->childof, f->parent), TECS_OK);
    f->base = tecs_new(w);
    f->inst = tecs_new(w);
    CHECK_ERR(tecs_set(w, f->base, f->vel, &(Velocity){ 3, 3 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, f->inst, f->isa, f->base), TECS_OK);
    /* A unique index over Flag.on: a set to a key another entity holds is
    ** refused. */
    f->unique = tecs_index_new(w, &(tecs_index_desc_t){ .comp = f->flag, .field = "on",
                                                       .unique = true });
    f->unique_a = tecs_new(w);
    CHECK(f->unique && f->unique_a);
    CHECK_ERR(tecs_set(w, f->unique_a, f->flag, &(uint32_t){ 100 }), TECS_OK);
    for (int i = 0; i < 40; i++, f->npos++)
        CHECK_ERR(tecs_set(w, tecs_new(w), f->pos, &(Position){ (float)i, 1 }), TECS_OK);
    CHECK_ERR(tecs_resource_set(w, f->grav, &(Gravity){ -9.5f }), TECS_OK);
    f->move_q = TECS_QUERY(w, { .comp = f->pos }, { .comp = f->vel, .access = TECS_READ });
    f->move = tecs_system_new(w, &(tecs_system_desc_t){ .name = "move", .query = f->move_q,
                                                       .run = ifix_move });
    f->count = tecs_system_new(w, &(tecs_system_desc_t){ .name = "count",
                                                        .phase = TECS_ON_STORE,
                                                        .run = ifix_count });
    CHECK(f->move && f->count);
    CHECK_ERR(tecs_progress(w, 0.5), TECS_OK);
    return w;
}

/* Free the fixture's world (its systems first: they hold the query). */
static void ifix_free(tecs_world_t *w, ifix *f)
{
    tecs_system_free(w, f->move);
    tecs_system_free(w, f->count);
    tecs_query_free(f->move_q);
    tw_free(w);
}

#endif /* TECS_INSPECT_FIXTURE_H */
