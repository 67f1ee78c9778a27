/* The JSON module (tinyecs_json): round trips of every field type, exact
** floats, ids, bad and hostile text, out of memory at every allocation of
** an import, calls from callbacks. Built only when jansson is installed. */
#include "json_fixture.h"

#include <float.h>
#include <math.h>

/* Fill a world: entities with every kind of value, holes and generations. */
static void populate(tecs_world_t *w, const comps *c, bool holes)
{
    tecs_entity_t e[8];
    for (int i = 0; i < 8; i++)
        e[i] = tecs_new(w);
    if (holes) {                                   /* gaps and generations */
        tecs_destroy(w, e[1]);
        tecs_destroy(w, e[4]);
        e[1] = tecs_new(w);
    }
    for (int i = 0; i < 8; i++) {
        if (holes && i == 4)
            continue;
        Every v = { .b = i & 1, .i8 = (int8_t)(-100 - i), .i16 = (int16_t)(-30000 + i),
                    .i32 = INT32_MIN + i, .i64 = INT64_MIN + i, .u8 = (uint8_t)(250 + i % 5),
                    .u16 = (uint16_t)(65000 + i), .u32 = UINT32_MAX - (uint32_t)i,
                    .u64 = i % 2 ? UINT64_MAX - (uint64_t)i : (uint64_t)i,
                    .f32 = 0.1f * (float)i, .f64 = 1.0 / (3.0 + i),
                    .ent = e[(i + 3) % 8], .arr = { i, -i, i * i },
                    .at = { (float)i / 7, -(float)i }, .path = { { 1e-3f, 2 }, { FLT_MAX, -0.0f } } };
        CHECK_ERR(tecs_set(w, e[i], c->every, &v), TECS_OK);
        if (i % 2 == 0)
            CHECK_ERR(tecs_set(w, e[i], c->vec2, &(Vec2){ (float)i, 1.5f }), TECS_OK);
        if (i % 3 == 0)
            CHECK_ERR(tecs_add(w, e[i], c->tag), TECS_OK);
        if (i == 2)
            CHECK_ERR(tecs_set(w, e[i], c->blob, &(Health){ 55 }), TECS_OK);
        char name[32];
        snprintf(name, sizeof name, "n\"%d\\\u00e9\n", i);
        CHECK_ERR(tecs_set(w, e[i], c->named, &(Named){ i == 5 ? NULL : name, e[0] }),
                  TECS_OK);
        CHECK_ERR(tecs_set(w, e[i], c->flag, &(uint32_t){ (uint32_t)i }), TECS_OK);
        if (i % 2)
            CHECK_ERR(tecs_enable(w, e[i], c->flag, false), TECS_OK);
        if (i > 5)
            CHECK_ERR(tecs_set(w, e[i], c->sparse, &(double){ -1.0 / i }), TECS_OK);
    }
    tecs_entity_t bare = tecs_new(w);                 /* no components */
    tecs_entity_t only_sparse = tecs_new(w);
    CHECK_ERR(tecs_set(w, only_sparse, c->sparse, &(double){ 2 }), TECS_OK);
    CHECK(bare && only_sparse);
}

/* The live entities of w in slot order; returns how many. */
static int32_t entities(tecs_world_t *w, tecs_entity_t *out, int32_t cap)
{
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, out, cap);
    tecs_query_free(q);
    CHECK(n >= 0 && n <= cap);
    for (int32_t i = 1; i < n; i++)                /* insertion sort by slot */
        for (int32_t j = i; j > 0 && TECS_ENTITY_INDEX(out[j - 1]) > TECS_ENTITY_INDEX(out[j]); j--) {
            tecs_entity_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* The entity of b at the place of a's entity x (0 for 0). */
static tecs_entity_t peer(tecs_entity_t x, const tecs_entity_t *ea, const tecs_entity_t *eb,
                          int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        if (ea[i] == x)
            return eb[i];
    return 0;
}

/* Worlds a and b hold the same entities (in slot order) with the same
** values; entity fields name the peers. */
static void check_same(tecs_world_t *a, const comps *ca, tecs_world_t *b, const comps *cb)
{
    tecs_entity_t ea[64], eb[64];
    int32_t n = entities(a, ea, 64);
    CHECK_EQ(n, tecs_world_entity_count(a));       /* every entity, bare ones too */
    CHECK_EQ(entities(b, eb, 64), n);
    for (int32_t i = 0; i < n; i++) {
        const tecs_comp_t *x = &ca->vec2, *y = &cb->vec2;
        for (int k = 0; k < 7; k++) {
            CHECK_EQ(tecs_has(a, ea[i], x[k]), tecs_has(b, eb[i], y[k]));
            if (tecs_component_enableable(a, x[k]) && tecs_has(a, ea[i], x[k]))
                CHECK_EQ(tecs_is_enabled(a, ea[i], x[k]), tecs_is_enabled(b, eb[i], y[k]));
        }
        const Every *va = tecs_get(a, ea[i], ca->every), *vb = tecs_get(b, eb[i], cb->every);
        if (va) {
            Every t = *va;
            t.ent = peer(va->ent, ea, eb, n);
            CHECK(t.ent == vb->ent);
            CHECK(t.b == vb->b && t.i8 == vb->i8 && t.i16 == vb->i16 && t.i32 == vb->i32);
            CHECK(t.i64 == vb->i64 && t.u8 == vb->u8 && t.u16 == vb->u16);
            CHECK(t.u32 == vb->u32 && t.u64 == vb->u64);
            CHECK(memcmp(&t.f32, &vb->f32, 4) == 0 && memcmp(&t.f64, &vb->f64, 8) == 0);
            CHECK(memcmp(t.arr, vb->arr, sizeof t.arr) == 0);
            CHECK(memcmp(&t.at, &vb->at, sizeof t.at + sizeof t.path) == 0);
        }
        const Vec2 *pa = tecs_get(a, ea[i], ca->vec2), *pb = tecs_get(b, eb[i], cb->vec2);
        CHECK(!pa || memcmp(pa, pb, sizeof *pa) == 0);
        const Named *na = tecs_get(a, ea[i], ca->named), *nb = tecs_get(b, eb[i], cb->named);
        if (na) {
            CHECK((na->name == NULL) == (nb->name == NULL));
            CHECK(na->name == NULL || strcmp(na->name, nb->name) == 0);
            CHECK(peer(na->buddy, ea, eb, n) == nb->buddy);
        }
        const uint32_t *fa = tecs_get(a, ea[i], ca->flag), *fb = tecs_get(b, eb[i], cb->flag);
        CHECK(!fa || *fa == *fb);
        const double *sa = tecs_get(a, ea[i], ca->sparse), *sb = tecs_get(b, eb[i], cb->sparse);
        CHECK(!sa || memcmp(sa, sb, 8) == 0);
        if (tecs_has(a, ea[i], ca->blob))                /* undescribed: default value */
            CHECK_EQ(((const Health *)tecs_get(b, eb[i], cb->blob))->hp, 0);
    }
}

TEST(json_round_trip_every_type)
{
    for (int holes = 0; holes < 2; holes++) {
        live_strings = 0;
        tecs_world_t *a = tw_new(), *b = tw_new();
        TECS_COMPONENT(b, Position);               /* other ids in b */
        comps ca = setup(a), cb = setup(b);
        populate(a, &ca, holes);
        tecs_json_error_t err;
        char *text = tecs_json_export(a, &err);
        CHECK(text != NULL);
        CHECK_EQ(err.code, TECS_OK);
        if (tecs_json_import(b, text, strlen(text), &err) != TECS_OK) {
            fprintf(stderr, "  %s\n", err.text);
            CHECK(!"import");
        }
        TW_CHECK(b);
        check_same(a, &ca, b, &cb);
        /* Without holes the ids are kept, so the texts are the same. */
        char *again = tecs_json_export(b, NULL);
        CHECK(again != NULL);
        CHECK(holes || strcmp(text, again) == 0);
        tecs_json_free(again);
        tecs_json_free(text);
        tw_free(a);
        tw_free(b);
        CHECK_EQ(live_strings, 0);
    }
}

TEST(json_floats_are_exact)
{
    tecs_world_t *a = tw_new(), *b = tw_new();
    comps ca = setup(a), cb = setup(b);
    static const float fs[] = { 0.1f, 1.0f / 3, FLT_MIN, FLT_MAX, -FLT_MAX, FLT_EPSILON,
                                1e-45f /* subnormal */, -0.0f, 0.0f, 16777217.0f, 3.4e38f };
    static const double ds[] = { 0.1, 1.0 / 3, DBL_MIN, DBL_MAX, -DBL_MAX, DBL_EPSILON,
                                 4.9e-324, -0.0, 0.0, 9007199254740993.0, 1e308 };
    int n = (int)(sizeof fs / sizeof fs[0]);
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(a);
        CHECK_ERR(tecs_set(a, e, ca.every, &(Every){ .f32 = fs[i], .f64 = ds[i],
                  .at = { fs[(i + 1) % n], fs[(i + 2) % n] } }), TECS_OK);
    }
    tecs_entity_t s = tecs_new(a);                   /* NaN and the infinities */
    CHECK_ERR(tecs_set(a, s, ca.every, &(Every){ .f32 = NAN, .f64 = -INFINITY,
              .at = { INFINITY, -INFINITY } }), TECS_OK);
    char *text = tecs_json_export(a, NULL);
    CHECK(text != NULL);
    CHECK(strstr(text, "\"f32\": 0.100000001,") != NULL);           /* 9 digits */
    CHECK(strstr(text, "\"f64\": 0.10000000000000001,") != NULL);   /* 17 digits */
    CHECK(strstr(text, "\"f32\": -0.0,") != NULL);
    CHECK(strstr(text, "\"f32\": \"NaN\"") != NULL);
    CHECK(strstr(text, "\"f64\": \"-Infinity\"") != NULL);
    tecs_json_error_t err;
    if (tecs_json_import(b, text, strlen(text), &err) != TECS_OK) {
        fprintf(stderr, "  %s\n", err.text);
        CHECK(!"import");
    }
    tecs_entity_t ea[32], eb[32];
    CHECK_EQ(entities(a, ea, 32), n + 1);
    CHECK_EQ(entities(b, eb, 32), n + 1);
    for (int i = 0; i < n; i++) {
        const Every *x = tecs_get(a, ea[i], ca.every), *y = tecs_get(b, eb[i], cb.every);
        CHECK(memcmp(&x->f32, &y->f32, 4) == 0 && memcmp(&x->f64, &y->f64, 8) == 0);
        CHECK(memcmp(&x->at, &y->at, 8) == 0);
    }
    const Every *y = tecs_get(b, eb[n], cb.every);
    CHECK(isnan(y->f32) && y->f64 == -INFINITY && y->at.x == INFINITY && y->at.y == -INFINITY);
    tecs_json_free(text);
    tw_free(a);
    tw_free(b);
}

/* Import text into a fresh world of the test components: expect code, a
** message holding msg, and the world without entities. */
static void bad_import(const char *text, tecs_err_t code, const char *msg, int line)
{
    tecs_world_t *w = tw_new();
    setup(w);
    tecs_json_error_t err;
    tecs_err_t got = tecs_json_import(w, text, strlen(text), &err);
    if (got != code || err.code != code || strstr(err.text, msg) == NULL) {
        fprintf(stderr, "  line %d: %s (%d): %s\n", line, tecs_strerror(got), (int)got, err.text);
        test_fail(__FILE__, line, "bad_import");
    }
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

#define BAD_IMPORT(text, code, msg) bad_import((text), (code), (msg), __LINE__)
#define WORLD(ents) "{\"format\": \"tinyecs-json\", \"version\": 1, \"entities\": [" ents "]}"

TEST(json_import_refuses_bad_text)
{
    live_strings = 0;
    BAD_IMPORT("", TECS_EFORMAT, "malformed JSON at line");
    BAD_IMPORT("{\"format\": ", TECS_EFORMAT, "malformed JSON");
    BAD_IMPORT("[1, 2]", TECS_EFORMAT, "expected an object at the top");
    BAD_IMPORT("{\"format\": \"x\", \"version\": 1, \"entities\": []}", TECS_EFORMAT, "\"format\"");
    BAD_IMPORT("{\"format\": \"tinyecs-json\", \"version\": 2, \"entities\": []}", TECS_EFORMAT,
               "\"version\" must be 1");
    BAD_IMPORT("{\"format\": \"tinyecs-json\", \"version\": 1}", TECS_EFORMAT, "\"entities\"");
    BAD_IMPORT("{\"format\": \"tinyecs-json\", \"version\": 1, \"entities\": [], \"x\": 1}",
               TECS_EFORMAT, "unknown key 'x'");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"id\": [2, 1], \"components\": {}}"), TECS_EFORMAT,
               "duplicate");
    BAD_IMPORT(WORLD("7"), TECS_EFORMAT, "entities[0]: expected an object");
    BAD_IMPORT(WORLD("{\"components\": {}}"), TECS_EFORMAT, "entities[0]: \"id\"");
    BAD_IMPORT(WORLD("{\"id\": [0, 0], \"components\": {}}"), TECS_EFORMAT, "\"id\"");
    /* No entity has generation 0, as in a snapshot. */
    BAD_IMPORT(WORLD("{\"id\": [3, 0], \"components\": {}}"), TECS_EFORMAT,
               "the generation 1..4294967295");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"ent\": [2, 0]}}}"),
               TECS_EFORMAT, "field 'ent': expected an entity id");
    BAD_IMPORT(WORLD("{\"id\": [-1, 1], \"components\": {}}"), TECS_EFORMAT, "\"id\"");
    BAD_IMPORT(WORLD("{\"id\": [4294967296, 1], \"components\": {}}"), TECS_EFORMAT, "\"id\"");
    BAD_IMPORT(WORLD("{\"id\": [1, 0, 0], \"components\": {}}"), TECS_EFORMAT, "\"id\"");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": []}"), TECS_EFORMAT, "\"components\"");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {}, \"more\": 1}"), TECS_EFORMAT,
               "unknown key 'more'");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {}}, {\"id\": [1, 1], \"components\": {}}"),
               TECS_EFORMAT, "entity [1, 1] is given twice");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Nope\": true}}"), TECS_ENOCOMP,
               "no component named 'Nope'");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Enemy\": 1}}"), TECS_EFORMAT,
               "tag 'Enemy': expected true");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Health\": {\"hp\": 1}}}"), TECS_EFORMAT,
               "no description");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": [1, 2]}}"), TECS_EFORMAT,
               "expected an object of fields");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": {\"z\": 1}}}"), TECS_EFORMAT,
               "field 'z': no such field");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": {\"x\": \"1\"}}}"), TECS_EFORMAT,
               "field 'x': expected a number");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": {\"x\": 1e39}}}"), TECS_EFORMAT,
               "out of range for f32");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"b\": 1}}}"), TECS_EFORMAT,
               "field 'b': expected true or false");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"i8\": 128}}}"), TECS_EFORMAT,
               "128 is out of range for i8");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"u8\": -1}}}"), TECS_EFORMAT,
               "out of range for u8");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"u32\": 4294967296}}}"),
               TECS_EFORMAT, "out of range for u32");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"i32\": 1.5}}}"), TECS_EFORMAT,
               "expected an integer (i32)");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"i64\": 99999999999999999999}}}"),
               TECS_EFORMAT, "malformed JSON");                /* too big for jansson */
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"u64\": \"18446744073709551616\"}}}"),
               TECS_EFORMAT, "expected a u64");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"u64\": \"-1\"}}}"),
               TECS_EFORMAT, "expected a u64");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"arr\": [1, 2]}}}"),
               TECS_EFORMAT, "field 'arr': expected an array of 3 i32");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"arr\": [1, 2, 3, 4]}}}"),
               TECS_EFORMAT, "expected an array of 3");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"arr\": [1, true, 3]}}}"),
               TECS_EFORMAT, "field 'arr[1]': expected an integer");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"path\": [{}, {\"y\": null}]}}}"),
               TECS_EFORMAT, "field 'path[1].y': expected a number");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"at\": {\"x\": 1, \"w\": 2}}}}"),
               TECS_EFORMAT, "field 'at.w': no such field");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Every\": {\"ent\": [1]}}}"), TECS_EFORMAT,
               "field 'ent': expected an entity id");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Named\": {\"name\": 5}}}"), TECS_EFORMAT,
               "field 'name': expected a string or null");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Named\": {\"name\": \"a\\u0000b\"}}}"),
               TECS_EFORMAT, "\\u0000 is not allowed");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": {}}, \"disabled\": [\"Vec2\"]}"),
               TECS_EFORMAT, "\"disabled\"[0] must name an enableable");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {}, \"disabled\": [\"Flag\"]}"),
               TECS_EFORMAT, "\"disabled\"[0]");
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {}, \"disabled\": 3}"), TECS_EFORMAT,
               "\"disabled\" must be an array");
    /* A good entity before a bad one: nothing is made. */
    BAD_IMPORT(WORLD("{\"id\": [1, 1], \"components\": {\"Vec2\": {\"x\": 1}}},"
                     "{\"id\": [2, 1], \"components\": {\"Vec2\": {\"x\": true}}}"),
               TECS_EFORMAT, "entity [2, 1], component 'Vec2', field 'x'");
    /* Deep nesting is the parser's to refuse. */
    char deep[5000];
    memset(deep, '[', 4000);
    deep[4000] = '\0';
    BAD_IMPORT(deep, TECS_EFORMAT, "malformed JSON");
}

TEST(json_import_every_truncation)
{
    live_strings = 0;
    tecs_world_t *a = tw_new();
    comps ca = setup(a);
    populate(a, &ca, true);
    char *text = tecs_json_export(a, NULL);
    CHECK(text != NULL);
    size_t len = strlen(text);
    for (size_t k = 0; k + 1 < len; k++) {       /* all but the final newline */
        tecs_world_t *b = tw_new();
        setup(b);
        tecs_json_error_t err;
        CHECK_ERR(tecs_json_import(b, text, k, &err), TECS_EFORMAT);
        CHECK(err.line > 0);
        CHECK_EQ(tecs_world_entity_count(b), 0);
        tw_free(b);
    }
    tecs_json_free(text);
    tw_free(a);
    CHECK_EQ(live_strings, 0);
}

TEST(json_import_needs_an_empty_world_and_no_defer)
{
    live_strings = 0;
    tecs_world_t *w = tw_new();
    comps c = setup(w);
    const char *text = WORLD("{\"id\": [1, 1], \"components\": {\"Enemy\": true}}");
    tecs_entity_t e = tecs_new(w);
    tecs_json_error_t err;
    CHECK_ERR(tecs_json_import(w, text, strlen(text), &err), TECS_EINVAL);
    CHECK(strstr(err.text, "has 1 entities") != NULL);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    CHECK_ERR(tecs_json_import(NULL, text, strlen(text), &err), TECS_EINVAL);
    CHECK_ERR(tecs_json_import(w, NULL, 0, NULL), TECS_EINVAL);
    CHECK(tecs_json_export(NULL, &err) == NULL && err.code == TECS_EINVAL);
    CHECK(tecs_json_export_entity(w, 0, &err) == NULL && err.code == TECS_EDEAD);
    CHECK(tecs_json_export_entity(NULL, e, &err) == NULL && err.code == TECS_EINVAL);
    CHECK_EQ(tecs_json_import_entity(w, "{", 1, &err), 0);
    CHECK_EQ(err.code, TECS_EFORMAT);
    tecs_destroy(w, e);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);       /* deferred: refused */
    CHECK_ERR(tecs_json_import(w, text, strlen(text), &err), TECS_EBUSY);
    CHECK_EQ(tecs_json_import_entity(w, "{}", 2, &err), 0);
    CHECK_EQ(err.code, TECS_EBUSY);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    (void)c;
    tw_free(w);
}

/* An each callback: an entity written from inside an iteration. */
static bool export_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)fields;
    char *t = tecs_json_export_entity(w, e, NULL);
    CHECK(t != NULL && strstr(t, "\"Vec2\": {\"x\": 3.0, \"y\": 4.0}") != NULL);
    tecs_json_free(t);
    tecs_json_error_t err;
    CHECK_EQ(tecs_json_import_entity(w, "{}", 2, &err), 0);   /* deferred: refused */
    CHECK_EQ(err.code, TECS_EBUSY);
    ++*(int *)ctx;
    return false;
}

TEST(json_entity_round_trip)
{
    live_strings = 0;
    tecs_world_t *a = tw_new(), *b = tw_new();
    comps ca = setup(a), cb = setup(b);
    tecs_entity_t x = tecs_new(a), y = tecs_new(a);
    CHECK_ERR(tecs_set(a, y, ca.vec2, &(Vec2){ 3, 4 }), TECS_OK);
    CHECK_ERR(tecs_set(a, y, ca.named, &(Named){ "me", x }), TECS_OK);
    CHECK_ERR(tecs_set(a, y, ca.every, &(Every){ .ent = y, .i32 = 9 }), TECS_OK);
    CHECK_ERR(tecs_add(a, y, ca.tag), TECS_OK);
    char *t = tecs_json_export_entity(a, y, NULL);
    CHECK(t != NULL);
    /* Into the same world: a copy; x is alive there, so the friend stays x;
    ** its own id maps to the copy. */
    tecs_entity_t c = tecs_json_import_entity(a, t, strlen(t), NULL);
    CHECK(c != 0 && c != y);
    CHECK_EQ(((const Named *)tecs_get(a, c, ca.named))->buddy, x);
    CHECK_EQ(((const Every *)tecs_get(a, c, ca.every))->ent, c);
    CHECK(tecs_has(a, c, ca.tag));
    CHECK(strcmp(((const Named *)tecs_get(a, c, ca.named))->name, "me") == 0);
    /* Into another world: x is not there (slot 1 is free), so friend is 0. */
    tecs_entity_t d = tecs_json_import_entity(b, t, strlen(t), NULL);
    CHECK(d != 0);
    CHECK_EQ(((const Named *)tecs_get(b, d, cb.named))->buddy, 0);
    CHECK_EQ(((const Vec2 *)tecs_get(b, d, cb.vec2))->y, 4);
    /* A bad entity changes nothing. */
    tecs_json_error_t err;
    const char *bad = "{\"id\": [1, 1], \"components\": {\"Vec2\": {\"x\": \"no\"}}}";
    CHECK_EQ(tecs_json_import_entity(b, bad, strlen(bad), &err), 0);
    CHECK_EQ(tecs_world_entity_count(b), 1);
    /* From an each callback: export allowed, import refused. */
    tecs_query_t *q = TECS_QUERY(a, { .comp = ca.vec2 });
    int calls = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(a, .query = q) }, export_each, &calls), TECS_OK);
    CHECK_EQ(calls, 2);
    tecs_query_free(q);
    tecs_json_free(t);
    tw_free(a);
    tw_free(b);
    CHECK_EQ(live_strings, 0);
}

/* A refusal after the world changed (a unique index vetoes a repeated
** key): the import destroys what it made. */
TEST(json_import_undone_when_a_set_is_refused)
{
    live_strings = 0;
    tecs_world_t *w = tw_new();
    comps c = setup(w);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = c.named, .field = "name",
                                                            .unique = true });
    CHECK(x != NULL);
    const char *text = WORLD("{\"id\": [0, 1], \"components\": {\"Named\": {\"name\": \"a\"}}},"
                             "{\"id\": [1, 1], \"components\": {\"Named\": {\"name\": \"a\"}}}");
    tecs_json_error_t err;
    CHECK_ERR(tecs_json_import(w, text, strlen(text), &err), TECS_EEXIST);
    CHECK(strstr(err.text, "entity [1, 1], Named:") != NULL);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_EQ(tecs_index_count(x), 0);
    CHECK_EQ(live_strings, 0);
    TW_CHECK(w);
    /* One entity into a world that has the key: the world as it was. */
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, c.named, &(Named){ "a", 0 }), TECS_OK);
    const char *one = "{\"id\": [5, 1], \"components\": {\"Named\": {\"name\": \"a\"}}}";
    CHECK_EQ(tecs_json_import_entity(w, one, strlen(one), &err), 0);
    CHECK_EQ(err.code, TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), 1);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_str("a")), e);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

/* Import text with the k-th allocation of the world failing (0: none);
** whether a failure happened. */
static bool oom_import(const char *text, long k, bool whole)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 0);
    CHECK(w != NULL);
    setup(w);
    tecs_entity_t keep = whole ? 0 : tecs_new(w);
    al.fail_at = k ? al.calls + k : 0;
    tecs_json_error_t err;
    tecs_err_t got = whole ? tecs_json_import(w, text, strlen(text), &err)
                           : (tecs_json_import_entity(w, text, strlen(text), &err)
                              ? TECS_OK : err.code);
    bool hit = al.failures > 0;
    al.fail_at = 0;
    if (!hit && got)
        fprintf(stderr, "  %s\n", err.text);
    if (hit && got != TECS_OK) {                 /* a failure some call absorbed: fine */
        CHECK_ERR(got, TECS_ENOMEM);
        CHECK_EQ(tecs_world_entity_count(w), whole ? 0 : 1);
        CHECK(whole || tecs_is_alive(w, keep));
        TW_CHECK(w);
        got = whole ? tecs_json_import(w, text, strlen(text), &err)
                    : (tecs_json_import_entity(w, text, strlen(text), &err) ? TECS_OK : err.code);
    }
    CHECK_ERR(got, TECS_OK);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
    return hit;
}

TEST(json_oom_every_allocation_of_an_import)
{
    live_strings = 0;
    tecs_world_t *a = tw_new();
    comps ca = setup(a);
    populate(a, &ca, true);
    char *text = tecs_json_export(a, NULL);
    tecs_entity_t es[16];
    CHECK(entities(a, es, 16) > 2);
    char *one = tecs_json_export_entity(a, es[2], NULL);
    CHECK(text != NULL && one != NULL);
    tw_free(a);
    CHECK(!oom_import(text, 0, true));
    long k = 1;
    while (oom_import(text, k, true))
        k++;
    CHECK(k > 20);
    for (k = 1; oom_import(one, k, false); k++)
        ;
    tecs_json_free(text);
    tecs_json_free(one);
    CHECK_EQ(live_strings, 0);
}

/* The JSON example of docs/json.md (once the README's) is what the export
** gives for its world. */
TEST(json_readme_example)
{
    live_strings = 0;
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                            TECS_MEMBER(Position, y, TECS_TYPE_F32));
    tecs_comp_t named = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(Named), .align = _Alignof(Named),
        .dtor = named_dtor, .copy = named_copy,
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Named, name, TECS_TYPE_STRING),
                                          TECS_MEMBER(Named, buddy, TECS_TYPE_ENTITY) },
        .nfields = 2 });
    tecs_comp_t enemy = TECS_TAG(w, Enemy);
    tecs_comp_t health = TECS_COMPONENT(w, Health);
    CHECK(pos && named && enemy && health);
    tecs_entity_t a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(tecs_set(w, a, pos, &(Position){ 0.1f, -2 }), TECS_OK);
    CHECK_ERR(tecs_set(w, a, named, &(Named){ "scout \"7\"", b }), TECS_OK);
    CHECK_ERR(tecs_set(w, b, pos, &(Position){ 1e10f, NAN }), TECS_OK);
    CHECK_ERR(tecs_add(w, b, enemy), TECS_OK);
    CHECK_ERR(tecs_set(w, b, health, &(Health){ 40 }), TECS_OK);
    char *text = tecs_json_export(w, NULL);
    CHECK(text != NULL);
    FILE *f = fopen(TECS_SOURCE_DIR "/docs/json.md", "rb");
    CHECK(f != NULL);
    static char readme[1 << 20];
    size_t n = fread(readme, 1, sizeof readme - 1, f);
    fclose(f);
    readme[n] = '\0';
    const char *mark = "<!-- made by the test json_readme_example -->\n```json\n";
    const char *at = strstr(readme, mark);
    if (at == NULL || strncmp(at + strlen(mark), text, strlen(text)) != 0 ||
        strncmp(at + strlen(mark) + strlen(text), "```", 3) != 0) {
        fprintf(stderr, "  the JSON example of docs/json.md should read:\n%s", text);
        CHECK(!"docs/json.md example");
    }
    tecs_json_free(text);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

typedef struct JDebt { int32_t amount; float rate; } JDebt;

typedef struct jrels { tecs_comp_t childof, owes, blob, likes; } jrels;

/* The relations of the pair tests: ChildOf, Owes (described), Blob (a
** value without a description), Likes (a tag). */
static jrels json_relations(tecs_world_t *w)
{
    jrels r = { .childof = tecs_childof(w) };
    r.owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = sizeof(JDebt), .align = _Alignof(JDebt),
                       .fields = (const tecs_field_t[]){
                           TECS_MEMBER(JDebt, amount, TECS_TYPE_I32),
                           TECS_MEMBER(JDebt, rate, TECS_TYPE_F32) },
                       .nfields = 2 } });
    r.blob = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Blob", .size = 4, .align = 4 } });
    r.likes = tecs_relation_new(w, &(tecs_relation_desc_t){ .component = { .name = "Likes" } });
    CHECK(r.childof && r.owes && r.blob && r.likes);
    return r;
}

TEST(json_pairs_round_trip)
{
    tecs_world_t *a = tw_new();
    jrels ra = json_relations(a);
    tecs_entity_t e[5];
    for (int i = 0; i < 5; i++)
        e[i] = tecs_new(a);
    CHECK_ERR(tecs_pair_add(a, e[2], ra.childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(a, e[1], ra.childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(a, e[3], ra.childof, e[1]), TECS_OK);
    CHECK_ERR(tecs_pair_set(a, e[3], ra.owes, e[4], &(JDebt){ -7, 0.25f }), TECS_OK);
    CHECK_ERR(tecs_pair_set(a, e[3], ra.owes, e[0], &(JDebt){ 9, 1.5f }), TECS_OK);
    CHECK_ERR(tecs_pair_set(a, e[4], ra.blob, e[4], &(int32_t){ 77 }), TECS_OK);
    CHECK_ERR(tecs_pair_add(a, e[0], ra.likes, e[3]), TECS_OK);
    tecs_json_error_t err;
    char *text = tecs_json_export(a, &err);
    CHECK(text != NULL);
    CHECK(strstr(text, "\"ChildOf\": true") == NULL);        /* a pair, not a tag */
    CHECK(strstr(text, "{\"relation\": \"Owes\", \"target\": [4, 1], \"value\": "
                       "{\"amount\": -7, \"rate\": 0.25}}") != NULL);
    CHECK(strstr(text, "{\"relation\": \"Blob\", \"target\": [4, 1], \"value\": null}") != NULL);
    CHECK(strstr(text, "{\"relation\": \"ChildOf\", \"target\": [0, 1]}") != NULL);
    tecs_world_t *b = tw_new();
    jrels rb = json_relations(b);
    CHECK_ERR(tecs_json_import(b, text, strlen(text), &err), TECS_OK);
    TW_CHECK(b);
    /* A fresh world: the same ids. */
    CHECK_EQ(tecs_pair_target(b, e[1], rb.childof, 0), e[0]);
    CHECK_EQ(tecs_pair_target(b, e[2], rb.childof, 0), e[0]);
    CHECK_EQ(tecs_pair_target(b, e[3], rb.childof, 0), e[1]);
    CHECK(tecs_has(b, e[3], rb.childof));
    CHECK_EQ(tecs_pair_count(b, e[3], rb.owes), 2);
    CHECK_EQ(tecs_pair_target(b, e[3], rb.owes, 0), e[4]);     /* the entity's order */
    CHECK_EQ(tecs_pair_target(b, e[3], rb.owes, 1), e[0]);
    const JDebt *d = tecs_pair_get(b, e[3], rb.owes, e[4]);
    CHECK(d && d->amount == -7 && d->rate == 0.25f);
    const int32_t *blob = tecs_pair_get(b, e[4], rb.blob, e[4]);
    CHECK(blob && *blob == 0);                  /* undescribed: the default value */
    CHECK(tecs_pair_has(b, e[0], rb.likes, e[3]));
    CHECK_EQ(tecs_pair_count(b, e[0], TECS_WILDCARD), 1);
    /* One entity, whose pairs name entities alive in the world. */
    char *one = tecs_json_export_entity(a, e[3], &err);
    CHECK(one != NULL);
    tecs_entity_t copy = tecs_json_import_entity(b, one, strlen(one), &err);
    CHECK(copy != 0);
    CHECK_EQ(tecs_pair_target(b, copy, rb.childof, 0), e[1]);
    CHECK_EQ(tecs_pair_target(b, copy, rb.owes, 1), e[0]);
    TW_CHECK(b);
    tecs_json_free(one);
    tecs_json_free(text);
    tw_free(b);
    tw_free(a);
}

TEST(json_pairs_refused)
{
    tecs_world_t *w = tw_new();
    jrels r = json_relations(w);
    (void)r;
    TECS_COMPONENT(w, Position);
    struct { const char *text; tecs_err_t code; const char *what; } bad[] = {
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Hates\", "
          "\"target\": [0, 1]}]}", TECS_ENOCOMP, "Hates" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Position\", "
          "\"target\": [0, 1]}]}", TECS_EFORMAT, "no relation" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Likes\", "
          "\"target\": [5, 1]}]}", TECS_EFORMAT, "not in the text" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Likes\", "
          "\"target\": [0, 1], \"value\": 1}]}", TECS_EFORMAT, "tag relation" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Owes\", "
          "\"target\": [0, 1]}]}", TECS_EFORMAT, "needs a" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"Owes\", "
          "\"target\": [0, 1], \"value\": {\"amount\": \"x\"}}]}", TECS_EFORMAT, "amount" },
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": {}}", TECS_EFORMAT, "array" },
        { "{\"id\": [0, 1], \"components\": {\"ChildOf\": true}}", TECS_EFORMAT, "relation" },
        /* A cycle of ChildOf: refused as the pairs apply, the import undone. */
        { "{\"id\": [0, 1], \"components\": {}, \"pairs\": [{\"relation\": \"ChildOf\", "
          "\"target\": [1, 1]}]}, {\"id\": [1, 1], \"components\": {}, \"pairs\": "
          "[{\"relation\": \"ChildOf\", \"target\": [0, 1]}]}", TECS_ECYCLE, "ancestor" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"format\": \"tinyecs-json\", \"version\": 1, "
                 "\"entities\": [%s]}", bad[i].text);
        tecs_json_error_t err;
        CHECK_ERR(tecs_json_import(w, text, strlen(text), &err), bad[i].code);
        if (strstr(err.text, bad[i].what) == NULL) {
            fprintf(stderr, "  case %zu: %s\n", i, err.text);
            CHECK(!"the message names the fault");
        }
        CHECK_EQ(tecs_world_entity_count(w), 0);
        TW_CHECK(w);
    }
    tw_free(w);
}

/* A prefab is an entity of the world like any other: exported, and
** imported back with its hidden tag. */
TEST(json_keeps_prefabs)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pf = tecs_prefab(w), tag = tecs_component_new(w, &(tecs_component_desc_t){
                                                 .name = "Marked" });
    tecs_entity_t live = tecs_new(w), tmpl = tecs_new(w);
    CHECK_ERR(tecs_add(w, live, tag), TECS_OK);
    CHECK_ERR(tecs_add(w, tmpl, tag), TECS_OK);
    CHECK_ERR(tecs_add(w, tmpl, pf), TECS_OK);
    tecs_json_error_t err;
    char *text = tecs_json_export(w, &err);
    CHECK(text != NULL);
    CHECK(text && strstr(text, "\"Prefab\"") != NULL);
    tecs_world_t *v = tw_new();
    tecs_comp_t vpf = tecs_prefab(v);
    CHECK(tecs_component_new(v, &(tecs_component_desc_t){ .name = "Marked" }) != 0);
    CHECK_ERR(tecs_json_import(v, text, strlen(text), &err), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(v), 2);
    CHECK(tecs_has(v, tmpl, vpf) && !tecs_has(v, live, vpf));
    tecs_json_free(text);
    tw_free(v);
    tw_free(w);
}

/* Instances come back as instances: their IsA pairs imported, the base
** tags left to follow them, overrides their own values. */
TEST(json_keeps_instances)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Hp", .size = sizeof(int32_t), .align = _Alignof(int32_t), .inherit = true,
        .fields = (const tecs_field_t[]){ { .name = "v", .type = TECS_TYPE_I32 } },
        .nfields = 1 });
    tecs_comp_t isa = tecs_isa(w);
    tecs_entity_t base = tecs_new(w), a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(TECS_SET(w, base, hp, int32_t, 10), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, a, isa, base), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, b, isa, base), TECS_OK);
    CHECK_ERR(TECS_SET(w, b, hp, int32_t, 3), TECS_OK);
    tecs_json_error_t err;
    char *text = tecs_json_export(w, &err);
    CHECK(text != NULL);
    CHECK(text && strstr(text, "IsA.") == NULL);
    tecs_world_t *v = tw_new();
    tecs_comp_t vhp = tecs_component_new(v, &(tecs_component_desc_t){
        .name = "Hp", .size = sizeof(int32_t), .align = _Alignof(int32_t), .inherit = true,
        .fields = (const tecs_field_t[]){ { .name = "v", .type = TECS_TYPE_I32 } },
        .nfields = 1 });
    tecs_comp_t visa = tecs_isa(v);
    CHECK_ERR(tecs_json_import(v, text, strlen(text), &err), TECS_OK);
    CHECK_EQ(tecs_pair_target(v, a, visa, 0), base);
    CHECK(*TECS_GET(v, a, vhp, int32_t) == 10);
    CHECK(*TECS_GET(v, b, vhp, int32_t) == 3);
    CHECK(!tecs_has(v, a, vhp) && tecs_has(v, b, vhp));
    TW_CHECK(v);
    tecs_json_free(text);
    tw_free(v);
    tw_free(w);
}

/* One value written by tecs_json_export_value reads back into a stage with
** tecs_json_import_value, every field type included; the stage's strings
** are its own copies, which tecs_json_free_value frees. */
TEST(json_value_round_trip)
{
    live_strings = 0;
    tecs_world_t *w = tw_new();
    comps c = setup(w);
    tecs_entity_t other = tecs_new(w);
    Every v = { .b = true, .i8 = -7, .i16 = -300, .i32 = INT32_MIN, .i64 = INT64_MIN,
                .u8 = 255, .u16 = 65535, .u32 = UINT32_MAX, .u64 = UINT64_MAX, .f32 = 0.1f,
                .f64 = 1.0 / 3.0, .ent = other, .arr = { 1, -2, 3 }, .at = { 1.5f, -0.0f },
                .path = { { FLT_MAX, 1e-3f }, { NAN, INFINITY } } };
    char *text = tecs_json_export_value(w, c.every, &v, NULL);
    CHECK(text != NULL && text[0] == '{');
    Every back;
    memset(&back, 0xab, sizeof back);
    tecs_json_error_t err;
    CHECK_ERR(tecs_json_import_value(w, c.every, text, strlen(text), &back, &err), TECS_OK);
    CHECK_EQ(err.code, TECS_OK);
    CHECK(back.b && back.i8 == -7 && back.i16 == -300 && back.i32 == INT32_MIN &&
          back.i64 == INT64_MIN && back.u8 == 255 && back.u16 == 65535 &&
          back.u32 == UINT32_MAX && back.u64 == UINT64_MAX && back.f32 == 0.1f &&
          back.f64 == 1.0 / 3.0 && back.ent == other && back.arr[1] == -2 &&
          back.at.x == 1.5f && back.path[0].x == FLT_MAX && isnan(back.path[1].x) &&
          isinf(back.path[1].y));
    tecs_json_free(text);

    Named n = { "scout \"7\" \u00e9", other };
    text = tecs_json_export_value(w, c.named, &n, NULL);
    CHECK(text != NULL);
    Named nb = { NULL, 0 };
    CHECK_ERR(tecs_json_import_value(w, c.named, text, strlen(text), &nb, NULL), TECS_OK);
    CHECK(nb.name != NULL && nb.name != n.name && strcmp(nb.name, n.name) == 0);
    CHECK_EQ(nb.buddy, other);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, c.named, &nb), TECS_OK);       /* the hook copies */
    tecs_json_free_value(w, c.named, &nb);
    CHECK(nb.name == NULL);
    const Named *got = tecs_get(w, e, c.named);
    CHECK(got && strcmp(got->name, n.name) == 0);
    tecs_json_free(text);
    /* A field the text leaves out is zero; a dead entity field is 0. */
    tecs_destroy(w, other);
    char part[64];
    snprintf(part, sizeof part, "{\"buddy\": [%lu, %lu]}",
             (unsigned long)TECS_ENTITY_INDEX(other), (unsigned long)TECS_ENTITY_GENERATION(other));
    nb = (Named){ NULL, 99 };
    CHECK_ERR(tecs_json_import_value(w, c.named, part, strlen(part), &nb, NULL), TECS_OK);
    CHECK(nb.name == NULL && nb.buddy == 0);
    tecs_json_free_value(w, c.named, NULL);                  /* harmless */
    tecs_json_free_value(NULL, c.named, &nb);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

/* Bad text, a value of the wrong type, an unknown field and bad arguments
** are refused with *value unchanged. */
TEST(json_value_bad_text)
{
    tecs_world_t *w = tw_new();
    comps c = setup(w);
    Vec2 v = { 5, 6 };
    tecs_json_error_t err;
    const char *bad[] = { "", "{", "{\"x\": 1,}", "{\"x\": \"a\"}", "{\"z\": 1}",
                          "{\"x\": 1, \"x\": 2}", "[1, 2]", "null", "true", "{\"x\": 1e39}" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_ERR(tecs_json_import_value(w, c.vec2, bad[i], strlen(bad[i]), &v, &err),
                  TECS_EFORMAT);
        CHECK_EQ(err.code, TECS_EFORMAT);
        CHECK(err.text[0] != '\0');
        CHECK(v.x == 5 && v.y == 6);
    }
    CHECK_ERR(tecs_json_import_value(w, c.vec2, "{\"x\": 1}", 3, &v, NULL), TECS_EFORMAT);
    CHECK_ERR(tecs_json_import_value(w, c.vec2, NULL, 0, &v, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_json_import_value(w, c.vec2, "{}", 2, NULL, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_json_import_value(NULL, c.vec2, "{}", 2, &v, NULL), TECS_EINVAL);
    CHECK_ERR(tecs_json_import_value(w, 999, "{}", 2, &v, &err), TECS_ENOCOMP);
    CHECK(tecs_json_export_value(w, 999, &v, &err) == NULL);
    CHECK_EQ(err.code, TECS_ENOCOMP);
    CHECK(tecs_json_export_value(NULL, c.vec2, &v, &err) == NULL);
    CHECK_EQ(err.code, TECS_EINVAL);
    CHECK(tecs_json_export_value(w, c.vec2, NULL, &err) == NULL);
    CHECK_EQ(err.code, TECS_EINVAL);
    /* A string that is not UTF-8 cannot be written. */
    Named n = { "\xff\xfe", 0 };
    CHECK(tecs_json_export_value(w, c.named, &n, &err) == NULL);
    CHECK_EQ(err.code, TECS_EINVAL);
    CHECK(v.x == 5 && v.y == 6);
    tw_free(w);
}

/* A component without a description is null and a tag is true, both ways;
** neither has a value to write. */
TEST(json_value_undescribed_and_tag)
{
    tecs_world_t *w = tw_new();
    comps c = setup(w);
    char *t = tecs_json_export_value(w, c.blob, &(Health){ 3 }, NULL);
    CHECK(t && strcmp(t, "null") == 0);
    tecs_json_free(t);
    t = tecs_json_export_value(w, c.tag, NULL, NULL);
    CHECK(t && strcmp(t, "true") == 0);
    tecs_json_free(t);
    Health h = { 3 };
    CHECK_ERR(tecs_json_import_value(w, c.blob, "null", 4, &h, NULL), TECS_OK);
    CHECK_ERR(tecs_json_import_value(w, c.blob, "null", 4, NULL, NULL), TECS_OK);
    CHECK(memcmp(&h, &(Health){ 3 }, sizeof h) == 0);
    CHECK_ERR(tecs_json_import_value(w, c.blob, "{}", 2, &h, NULL), TECS_EFORMAT);
    CHECK_ERR(tecs_json_import_value(w, c.tag, "true", 4, NULL, NULL), TECS_OK);
    CHECK_ERR(tecs_json_import_value(w, c.tag, "false", 5, NULL, NULL), TECS_EFORMAT);
    CHECK_ERR(tecs_json_import_value(w, c.tag, "{}", 2, NULL, NULL), TECS_EFORMAT);
    tw_free(w);
}
