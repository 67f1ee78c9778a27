/*
** fuzz_json — libFuzzer target for the JSON import (tinyecs_json): the
** input is the text, read into a fresh world of the JSON tests' components
** (tests/json_fixture.h) and, as one entity, into a world that has some.
** An input starting with "OM" k0 k1 also makes allocation 1 + k0 + 256 k1
** of the whole import fail.
**
** The input is also read as one value of each component
** (tecs_json_import_value).
**
** Checks beyond crashes and leaks: a failed import leaves the world without
** entities (the entity import: as it was), and a text that imports writes
** back a text that reads into another world and writes the same again; a
** value that reads writes a text that reads back and writes the same.
*/
#include "json_fixture.h"
#include "tinyecs/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write w, read it into a fresh world, write that: the two texts agree. */
static void round_trip(tecs_world_t *w)
{
    char *a = tecs_json_export(w, NULL);
    if (a == NULL)
        return;                                  /* a string that is not UTF-8 */
    tecs_world_t *b = tw_new();
    setup(b);
    CHECK_ERR(tecs_json_import(b, a, strlen(a), NULL), TECS_OK);
    char *c = tecs_json_export(b, NULL);
    tecs_world_t *d = tw_new();
    setup(d);
    CHECK(c != NULL);
    CHECK_ERR(tecs_json_import(d, c, strlen(c), NULL), TECS_OK);
    char *e = tecs_json_export(d, NULL);
    CHECK(e != NULL && strcmp(c, e) == 0);
    tecs_json_free(a);
    tecs_json_free(c);
    tecs_json_free(e);
    tw_free(b);
    tw_free(d);
}

/* text as one value of each of c's components: a value that reads writes
** back a text that reads to the same text again. */
static void values(tecs_world_t *w, const comps *c, const char *text, size_t size)
{
    const tecs_comp_t ids[] = { c->vec2, c->every, c->named, c->tag, c->blob, c->flag,
                                c->sparse };
    static unsigned char stage[2][512];
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        CHECK(tecs_component_size(w, ids[i]) <= sizeof stage[0]);
        if (tecs_json_import_value(w, ids[i], text, size, stage[0], NULL) != TECS_OK)
            continue;
        char *a = tecs_json_export_value(w, ids[i], stage[0], NULL);
        if (a != NULL) {
            CHECK_ERR(tecs_json_import_value(w, ids[i], a, strlen(a), stage[1], NULL), TECS_OK);
            char *b = tecs_json_export_value(w, ids[i], stage[1], NULL);
            CHECK(b != NULL && strcmp(a, b) == 0);
            tecs_json_free_value(w, ids[i], stage[1]);
            tecs_json_free(b);
        }
        tecs_json_free_value(w, ids[i], stage[0]);
        tecs_json_free(a);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    long fail_at = 0;
    if (size >= 4 && data[0] == 'O' && data[1] == 'M') {
        fail_at = 1 + data[2] + 256 * data[3];
        data += 4;
        size -= 4;
    }
    const char *text = (const char *)data;
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 0);
    setup(w);
    al.fail_at = fail_at ? al.calls + fail_at : 0;
    tecs_err_t err = tecs_json_import(w, text, size, NULL);
    al.fail_at = 0;
    TW_CHECK(w);
    /* The world and the text are there and the world is empty: any fault
    ** is the text's (TECS_EFORMAT), a name's, or memory's. */
    if (err)
        CHECK(err == TECS_EFORMAT || err == TECS_ENOCOMP || err == TECS_ENOMEM);
    if (err)
        CHECK_EQ(tecs_world_entity_count(w), 0);
    else if (!fail_at)
        round_trip(w);
    tw_free(w);

    tecs_world_t *v = tw_new();
    comps c = setup(v);
    for (int i = 0; i < 3; i++)
        tecs_set(v, tecs_new(v), c.vec2, &(Vec2){ (float)i, 0 });
    tecs_entity_t e = tecs_json_import_entity(v, text, size, NULL);
    CHECK_EQ(tecs_world_entity_count(v), e ? 4 : 3);
    values(v, &c, text, size);
    TW_CHECK(v);
    tw_free(v);
    CHECK_EQ(live_strings, 0);
    return 0;
}
