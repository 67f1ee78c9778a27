/* Cases for the direct paths of common structural changes: new then set,
** moves of plain and hooked values. */
#include "test.h"

static int live_strings;

/* A hooked component: a heap-owning value, so a lost or doubled move shows
** up as a leak or a double free under the sanitizers. */
typedef struct Name { char *s; } Name;

static char *dup_str(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    if (d)
        strcpy(d, s);
    return d;
}

static void name_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Name));
}

static void name_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    Name *v = p;
    for (int32_t i = 0; i < n; i++)
        if (v[i].s) {
            free(v[i].s);
            live_strings--;
        }
}

static void name_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    name_dtor(dst, n, ctx);
    Name *d = dst;
    const Name *s = src;
    for (int32_t i = 0; i < n; i++) {
        d[i].s = s[i].s ? dup_str(s[i].s) : NULL;
        live_strings += d[i].s != NULL;
    }
}

static tecs_comp_t name_comp(tecs_world_t *w)
{
    return tecs_component(w, &(tecs_component_desc_t){
        .name = "Name", .size = sizeof(Name), .align = _Alignof(Name),
        .ctor = name_ctor, .dtor = name_dtor, .copy = name_copy });
}

TEST(entity_new_set_set_lands_in_full_archetype)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *pv = tecs_archetype(w, 2, (tecs_comp_t[]){ pos, vel });
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, (float)-i }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], vel, Velocity, { 1, 2 }), TECS_OK);
    }
    CHECK_EQ(tecs_archetype_entity_count(pv), 3000);
    CHECK_EQ(tecs_archetype_entity_count(tecs_archetype(w, 0, NULL)), 0);
    for (int i = 0; i < 3000; i++) {
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->y, -i);
        CHECK_EQ(TECS_GET(w, e[i], vel, Velocity)->y, 2);
    }
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_add_remove_keeps_other_values)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_comp_t name = name_comp(w);
    tecs_entity_t e[50];
    live_strings = 0;
    for (int i = 0; i < 50; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(TECS_SET(w, e[i], pos, Position, { (float)i, 0 }), TECS_OK);
        CHECK_ERR(TECS_SET(w, e[i], name, Name, { "x" }), TECS_OK);
    }
    CHECK_EQ(live_strings, 50);
    for (int i = 0; i < 50; i++)
        CHECK_ERR(tecs_add(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++) {
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, 0);
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
        CHECK(strcmp(TECS_GET(w, e[i], name, Name)->s, "x") == 0);
    }
    for (int i = 0; i < 50; i += 2)
        CHECK_ERR(tecs_remove(w, e[i], hp), TECS_OK);
    for (int i = 0; i < 50; i++)
        CHECK_EQ(TECS_GET(w, e[i], pos, Position)->x, i);
    CHECK_EQ(live_strings, 50);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}
