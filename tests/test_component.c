/* Component registry cases. */
#include "test.h"

static int ctor_calls;

static void count_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Health));
    ctor_calls += n;
}

/* Registering many components after an archetype exists grows the registry;
** the archetype must still construct, copy and move its columns right. */
TEST(component_registry_growth_keeps_archetypes_working)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = tecs_component(w, &(tecs_component_desc_t){
        .name = "Health", .size = sizeof(Health), .align = _Alignof(Health),
        .ctor = count_ctor });
    tecs_archetype_t *a = tecs_archetype(w, 2, (tecs_comp_t[]){ pos, hp });
    CHECK(a != NULL);
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "Tag%d", i);
        CHECK(tecs_component(w, &(tecs_component_desc_t){ .name = name }) != 0);
    }
    ctor_calls = 0;
    tecs_entity_t e = tecs_new_in(w, a);
    CHECK_EQ(ctor_calls, 1);
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 3, 4 }), TECS_OK);
    CHECK_EQ(TECS_GET(w, e, pos, Position)->y, 4);
    CHECK_ERR(tecs_remove(w, e, hp), TECS_OK);
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 3);
    TW_CHECK(w);
    tw_free(w);
}
