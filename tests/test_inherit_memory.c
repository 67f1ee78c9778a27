/*
** Inheritance's memory (IsA): instances of a base read the base's value
** of an .inherit component without a copy, so a big value is paid once,
** whatever the number of instances; each instance costs what its own
** components, its record and its pair cost.
*/
#include "test.h"

#include <tinyecs/relation.h>

/* Instances of the case: few enough to run in seconds under valgrind,
** enough that the base's one value is a small part of the total. */
enum { INSTANCES = 100000 };

typedef struct { unsigned char bytes[1024]; } blob;

/* The most world memory an instance takes: its row, its record and its
** pair, never a copy of the base's value, so well under the value's size. */
enum { MAX_BYTES_PER_INSTANCE = sizeof(blob) / 4 };

TEST(inherit_memory_big_value_is_paid_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t big = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "blob", .size = sizeof(blob), .align = _Alignof(blob), .inherit = true });
    tecs_comp_t isa = tecs_isa(w);
    CHECK(pos && big && isa);
    static blob value;
    for (size_t i = 0; i < sizeof value.bytes; i++)
        value.bytes[i] = (unsigned char)i;
    tecs_entity_t base = tecs_new(w);
    CHECK_ERR(tecs_set(w, base, big, &value), TECS_OK);
    const void *shared = tecs_get(w, base, big);
    CHECK(shared != NULL);
    size_t before = tecs_world_memory(w);
    tecs_entity_t e = 0;
    for (int i = 0; i < INSTANCES; i++) {
        e = tecs_new(w);
        CHECK_ERR(tecs_pair_add(w, e, isa, base), TECS_OK);
        CHECK_ERR(TECS_SET(w, e, pos, Position, { (float)i, (float)i }), TECS_OK);
    }
    size_t grown = tecs_world_memory(w) - before;
    if (grown >= (size_t)INSTANCES * MAX_BYTES_PER_INSTANCE)
        fprintf(stderr, "  %zu bytes for %d instances\n", grown, INSTANCES);
    CHECK(grown < (size_t)INSTANCES * MAX_BYTES_PER_INSTANCE);
    /* The last instance reads the base's one value, not a copy. */
    CHECK(tecs_get(w, e, big) == shared);
    CHECK(memcmp(tecs_get(w, e, big), &value, sizeof value) == 0);
    CHECK(!tecs_has(w, e, big));
    CHECK_EQ(tecs_world_entity_count(w), INSTANCES + 1);
    TW_CHECK(w);
    tw_free(w);
}
