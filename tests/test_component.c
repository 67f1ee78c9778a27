/* Components: registration, tags, names, chosen ids, bad descriptions, hooks. */
#include "hooks.h"

TEST(component_register_and_lookup)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    CHECK(pos != 0 && vel != 0 && pos != vel);
    CHECK_EQ(tecs_component_lookup(w, "Position"), pos);
    CHECK_EQ(tecs_component_lookup(w, "Velocity"), vel);
    CHECK(strcmp(tecs_component_name(w, pos), "Position") == 0);
    CHECK_EQ(tecs_component_size(w, pos), sizeof(Position));
    CHECK_EQ(tecs_world_component_count(w), 2);
    CHECK_EQ(tecs_component_lookup(w, "Pos"), 0);  /* no prefix match */
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_EQ(tecs_component_lookup(w, "PositionX"), 0);
    CHECK(tecs_component_name(w, 999) == NULL);
    CHECK_EQ(tecs_component_size(w, 999), 0);
    CHECK(tecs_component_name(w, 0) == NULL);
    CHECK_EQ(tecs_component_lookup(w, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_component_lookup(NULL, "Position"), 0);
    tw_free(w);
}

TEST(component_name_is_copied)
{
    tecs_world_t *w = tw_new();
    char name[16] = "Temp";
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = 4 });
    strcpy(name, "Changed");
    CHECK_EQ(tecs_component_lookup(w, "Temp"), c);
    CHECK(strcmp(tecs_component_name(w, c), "Temp") == 0);
    tw_free(w);
}

TEST(component_tag_has_no_column)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t enemy = TECS_TAG(w, Enemy);
    CHECK(enemy != 0);
    CHECK_EQ(tecs_component_size(w, enemy), 0);
    tecs_archetype_t *tagged = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, enemy });
    tecs_archetype_t *plain = tecs_archetype_get(w, 1, &pos);
    CHECK(tagged != plain);
    tecs_entity_t e = tecs_new_in(w, tagged);
    CHECK(tecs_has(w, e, enemy));
    CHECK(tecs_get(w, e, enemy) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_get_mut(w, e, enemy) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* A tag costs no chunk space: same chunk size as without it. */
    size_t before = tecs_world_memory(w);
    tecs_new_in(w, plain);
    size_t chunk_plain = tecs_world_memory(w) - before;
    tecs_archetype_t *more = tecs_archetype_get(w, 1, &enemy);
    before = tecs_world_memory(w);
    tecs_new_in(w, more);
    size_t chunk_tag = tecs_world_memory(w) - before;
    CHECK(chunk_tag < chunk_plain);                /* entity column only */
    CHECK_ERR(tecs_set(w, e, enemy, NULL), TECS_OK);   /* set a tag: no value */
    CHECK_ERR(tecs_remove(w, e, enemy), TECS_OK);
    CHECK(!tecs_has(w, e, enemy));
    CHECK_ERR(tecs_set(w, e, enemy, NULL), TECS_OK);   /* set adds a tag */
    CHECK(tecs_has(w, e, enemy));
    TW_CHECK(w);
    tw_free(w);
}

TEST(component_same_type_two_names)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t cur = TECS_COMPONENT_NAMED(w, "CurrentPos", Position);
    tecs_comp_t old = TECS_COMPONENT_NAMED(w, "OldPos", Position);
    CHECK(cur != 0 && old != 0 && cur != old);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, cur, Position, { 1, 2 }), TECS_OK);
    CHECK_ERR(TECS_SET(w, e, old, Position, { 3, 4 }), TECS_OK);
    CHECK_EQ(TECS_GET(w, e, cur, Position)->x, 1);
    CHECK_EQ(TECS_GET(w, e, old, Position)->x, 3);
    CHECK_ERR(tecs_remove(w, e, cur), TECS_OK);
    CHECK(!tecs_has(w, e, cur));
    CHECK_EQ(TECS_GET(w, e, old, Position)->y, 4);
    tw_free(w);
}

TEST(component_duplicate_name_is_eexist)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK_EQ(TECS_COMPONENT_NAMED(w, "Position", Velocity), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(TECS_COMPONENT(w, Position), 0);
    CHECK_EQ(tecs_world_component_count(w), 1);
    CHECK_EQ(tecs_component_lookup(w, "Position"), pos);
    CHECK_EQ(tecs_component_size(w, pos), sizeof(Position));
    tw_free(w);
}

TEST(component_chosen_ids)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t a = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "A", .size = 4, .id = 3 });
    CHECK_EQ(a, 3);
    tecs_comp_t big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Big", .size = 8, .id = TECS_MAX_COMPONENTS - 1 });
    CHECK_EQ(big, TECS_MAX_COMPONENTS - 1);
    /* Automatic ids skip the taken one. */
    tecs_comp_t ids[4];
    for (int i = 0; i < 4; i++) {
        char name[8] = { 'c', (char)('0' + i), 0 };
        ids[i] = tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = 4 });
    }
    CHECK_EQ(ids[0], 1);
    CHECK_EQ(ids[1], 2);
    CHECK_EQ(ids[2], 4);
    CHECK_EQ(ids[3], 5);
    /* Taken id: EEXIST; out of range: EINVAL. */
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "X", .size = 4, .id = 3 }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Y", .size = 4, .id = TECS_MAX_COMPONENTS }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_world_component_count(w), 6);
    /* A chosen high id works in archetypes and on entities. */
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, big, &(int64_t){ 42 }), TECS_OK);
    CHECK_ERR(tecs_add(w, e, a), TECS_OK);
    CHECK_EQ(*(const int64_t *)tecs_get(w, e, big), 42);
    TW_CHECK(w);
    tw_free(w);
}

TEST(component_bad_descriptions)
{
    tecs_world_t *w = tw_new();
    size_t mem = tecs_world_memory(w);
    tecs_component_desc_t bad[] = {
        { .name = NULL, .size = 4 },
        { .name = "", .size = 4 },
        { .name = "Huge", .size = TECS_MAX_COMPONENT_SIZE + 1 },
        { .name = "Align3", .size = 6, .align = 3 },
        { .name = "Align128", .size = 128, .align = 128 },
        { .name = "SizeNotMultiple", .size = 6, .align = 4 },
        { .name = "TagWithHook", .size = 0, .ctor = obj_ctor },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(tecs_component_new(w, &bad[i]), 0);
        CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    }
    CHECK_EQ(tecs_component_new(w, NULL), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_world_component_count(w), 0);
    CHECK_EQ(tecs_world_memory(w), mem);
    /* The limits themselves are fine. */
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "A64", .size = 64,
                                                       .align = 64 }) != 0);
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Max",
                                                       .size = TECS_MAX_COMPONENT_SIZE }) != 0);
    tw_free(w);
}

TEST(component_alignment_is_kept)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t c1 = tecs_component_new(w, &(tecs_component_desc_t){ .name = "B", .size = 1 });
    tecs_comp_t c64 = tecs_component_new(w, &(tecs_component_desc_t){ .name = "A", .size = 64,
                                                                  .align = 64 });
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ c1, c64 });
    for (int i = 0; i < 40; i++) {
        tecs_entity_t e = tecs_new_in(w, a);
        CHECK(((uintptr_t)tecs_get(w, e, c64) & 63) == 0);
    }
    tw_free(w);
}

TEST(component_plain_data_zero_filled)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    for (int i = 0; i < 3; i++) {
        tecs_entity_t e = tecs_new_in(w, a);
        CHECK_ERR(TECS_SET(w, e, pos, Position, { 9, 9 }), TECS_OK);
        CHECK_ERR(tecs_destroy(w, e), TECS_OK);     /* leaves garbage in the row */
    }
    tecs_entity_t e = tecs_new_in(w, a);
    CHECK_EQ(TECS_GET(w, e, pos, Position)->x, 0);
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(tecs_add(w, f, pos), TECS_OK);
    CHECK_EQ(TECS_GET(w, f, pos, Position)->y, 0);
    tw_free(w);
}

TEST(component_hooks_called_with_counts)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &o);
    CHECK_ERR(tecs_new_bulk(w, a, 40, NULL, 0, NULL), TECS_OK);
    CHECK_EQ(h.ctor, 40);
    CHECK_EQ(h.calls, 3);                          /* one call per chunk: 16+16+8 */
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, o, &(Obj){ OBJ_LIVE, 3 }), TECS_OK);
    CHECK_EQ(h.ctor, 41);
    CHECK_EQ(h.copy, 1);
    CHECK_EQ(TECS_GET(w, e, o, Obj)->value, 3);
    CHECK_ERR(tecs_set(w, e, o, &(Obj){ OBJ_LIVE, 4 }), TECS_OK);
    CHECK_EQ(h.ctor, 41);                          /* existing value: copy only */
    CHECK_EQ(h.copy, 2);
    CHECK_ERR(tecs_remove(w, e, o), TECS_OK);
    CHECK_EQ(h.dtor, 1);
    CHECK_EQ(hooks_live(&h), 40);
    CHECK_EQ(h.bad, 0);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

TEST(component_limit_of_ids)
{
    tecs_world_t *w = tw_new();
    char name[16];
    for (int i = 1; i < TECS_MAX_COMPONENTS; i++) {
        snprintf(name, sizeof name, "c%d", i);
        CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = name }) != 0);
    }
    CHECK_EQ(tecs_world_component_count(w), TECS_MAX_COMPONENTS - 1);
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "one_more" }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ELIMIT);
    tw_free(w);
}

/* Registering many components after archetypes exist grows the registry;
** archetypes made before must still reach the right hooks. */
TEST(component_registered_after_archetypes)
{
    hook_counts h = { 0 };
    tecs_world_t *w = tw_new();
    tecs_comp_t o = obj_component(w, "Obj", &h);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &o);
    tecs_entity_t e = tecs_new_in(w, a);
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "later%d", i);
        CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = name, .size = 8 }) != 0);
    }
    tecs_entity_t f = tecs_new_in(w, a);
    CHECK_EQ(TECS_GET(w, f, o, Obj)->value, OBJ_DEFAULT);
    CHECK_EQ(h.ctor, 2);
    CHECK_ERR(tecs_add(w, e, tecs_component_lookup(w, "later99")), TECS_OK);
    CHECK_EQ(TECS_GET(w, e, o, Obj)->value, OBJ_DEFAULT);
    CHECK_ERR(tecs_destroy(w, f), TECS_OK);
    CHECK_EQ(h.dtor, 1);
    CHECK_EQ(h.bad, 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

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
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Health", .size = sizeof(Health), .align = _Alignof(Health),
        .ctor = count_ctor });
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, hp });
    CHECK(a != NULL);
    for (int i = 0; i < 200; i++) {
        char name[16];
        snprintf(name, sizeof name, "Tag%d", i);
        CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = name }) != 0);
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
