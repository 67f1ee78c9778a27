/*
** json_fixture.h — the components of the JSON tests and of the JSON fuzz
** target: every field type (Every), a nested one (Vec2), strings owned by
** hooks (Named; live_strings counts them), a tag, an undescribed
** component, an enableable one and a sparse one.
*/
#ifndef TECS_JSON_FIXTURE_H
#define TECS_JSON_FIXTURE_H

#include "test.h"
#include "tinyecs/json.h"
#include "every.h"


typedef struct Named { char *name; tecs_entity_t buddy; } Named;

static long live_strings;                      /* allocated by Named's hooks */

static char *str_dup(const char *s)
{
    return tw_str_dup(s, &live_strings);
}

static void named_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    Named *v = p;
    for (int32_t i = 0; i < n; i++)
        tw_str_free(v[i].name, &live_strings);
}

static void named_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    Named *d = dst;
    const Named *s = src;
    for (int32_t i = 0; i < n; i++) {
        char *t = str_dup(s[i].name);
        named_dtor(&d[i], 1, ctx);
        d[i] = (Named){ t, s[i].buddy };
    }
}

typedef struct comps { tecs_comp_t vec2, every, named, tag, blob, flag, sparse; } comps;

/* The same components in every world of these tests. */
static comps setup(tecs_world_t *w)
{
    comps c;
    c.vec2 = register_vec2(w);
    c.every = register_every(w, c.vec2);
    c.named = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(Named), .align = _Alignof(Named),
        .dtor = named_dtor, .copy = named_copy,
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Named, name, TECS_TYPE_STRING),
                                          TECS_MEMBER(Named, buddy, TECS_TYPE_ENTITY) },
        .nfields = 2 });
    c.tag = TECS_TAG(w, Enemy);
    c.blob = TECS_COMPONENT(w, Health);            /* no description */
    c.flag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Flag", .size = 4,
        .align = 4, .enableable = true,
        .fields = (const tecs_field_t[]){ { "on", TECS_TYPE_U32, 0, 1, 0 } }, .nfields = 1 });
    c.sparse = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Score", .size = 8,
        .align = 8, .storage = TECS_STORAGE_SPARSE,
        .fields = (const tecs_field_t[]){ { "v", TECS_TYPE_F64, 0, 1, 0 } }, .nfields = 1 });
    CHECK(c.vec2 && c.every && c.named && c.tag && c.blob && c.flag && c.sparse);
    return c;
}

#endif /* TECS_JSON_FIXTURE_H */
