/* Component descriptions: every type, nested components, arrays, strings
** owned by hooks, every check at registration, the layout hash, fields by
** name in indexes, out of memory at every allocation. */
#include "test.h"
#include "private.h"

#include "every.h"

/* ---- a component whose strings its hooks own ---------------------------- */

typedef struct Named { char *name; int32_t score; char *tags[2]; } Named;

static long live_strings;                       /* allocated by the hooks */

static char *str_dup(const char *s)
{
    return tw_str_dup(s, &live_strings);
}

static void str_free(char *s)
{
    tw_str_free(s, &live_strings);
}

static void named_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Named));
}

static void named_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    Named *v = p;
    for (int32_t i = 0; i < n; i++) {
        str_free(v[i].name);
        str_free(v[i].tags[0]);
        str_free(v[i].tags[1]);
    }
}

static void named_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    (void)ctx;
    Named *d = dst;
    const Named *s = src;
    for (int32_t i = 0; i < n; i++) {
        Named t = { str_dup(s[i].name), s[i].score, { str_dup(s[i].tags[0]),
                                                      str_dup(s[i].tags[1]) } };
        named_dtor(&d[i], 1, NULL);
        d[i] = t;
    }
}

static const tecs_field_t named_fields[] = {
    TECS_MEMBER(Named, name, TECS_TYPE_STRING),
    TECS_MEMBER(Named, score, TECS_TYPE_I32),
    TECS_MEMBER_ARRAY(Named, tags, TECS_TYPE_STRING),
};

static tecs_comp_t register_named(tecs_world_t *w)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(Named), .align = _Alignof(Named),
        .ctor = named_ctor, .dtor = named_dtor, .copy = named_copy,
        .fields = named_fields, .nfields = 3 });
}

TEST(meta_describes_every_type)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t vec2 = register_vec2(w);
    tecs_comp_t every = register_every(w, vec2);
    CHECK(vec2 && every);
    int32_t n = -1;
    const tecs_field_t *f = tecs_component_fields(w, every, &n);
    CHECK_EQ(n, 15);
    static const char *const names[] = { "b", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                                         "u64", "f32", "f64", "ent", "arr", "at", "path" };
    for (int32_t i = 0; i < 12; i++) {
        CHECK(strcmp(f[i].name, names[i]) == 0);
        CHECK_EQ(f[i].type, TECS_TYPE_BOOL + i);
        if (i > 0 && i < 11)                       /* the member is named after its type */
            CHECK(strcmp(tecs_type_name(f[i].type), names[i]) == 0);
        CHECK_EQ(f[i].count, 1);
        CHECK_EQ(tecs_type_size(f[i].type) > 0, 1);
    }
    CHECK(strcmp(tecs_type_name(TECS_TYPE_BOOL), "bool") == 0);
    CHECK(strcmp(tecs_type_name(TECS_TYPE_ENTITY), "entity") == 0);
    CHECK(strcmp(tecs_type_name(TECS_TYPE_STRING), "string") == 0);
    CHECK(strcmp(tecs_type_name(TECS_TYPE_STRUCT), "struct") == 0);
    CHECK(strcmp(tecs_type_name((tecs_type_t)0), "?") == 0);
    CHECK(strcmp(tecs_type_name((tecs_type_t)99), "?") == 0);
    CHECK_EQ(tecs_type_size(TECS_TYPE_F64), 8);
    CHECK_EQ(tecs_type_size(TECS_TYPE_STRING), sizeof(char *));
    CHECK_EQ(tecs_type_size(TECS_TYPE_STRUCT), 0);
    CHECK_EQ(tecs_type_size((tecs_type_t)99), 0);
    CHECK_EQ(f[11].offset, offsetof(Every, ent));
    CHECK_EQ(f[12].count, 3);
    CHECK_EQ(f[13].type, TECS_TYPE_STRUCT);
    CHECK_EQ(f[13].comp, vec2);
    CHECK_EQ(f[14].count, 2);
    /* By name and by path. */
    size_t off = 0;
    CHECK(tecs_component_field(w, every, "f64", &off) == &f[10]);
    CHECK_EQ(off, offsetof(Every, f64));
    const tecs_field_t *y = tecs_component_field(w, every, "at.y", &off);
    CHECK(y != NULL && y->type == TECS_TYPE_F32);
    CHECK_EQ(off, offsetof(Every, at) + offsetof(Vec2, y));
    CHECK(tecs_component_field(w, every, "path.x", NULL) == NULL);  /* an array */
    CHECK(tecs_component_field(w, every, "i32.x", NULL) == NULL);   /* not nested */
    CHECK(tecs_component_field(w, every, "at.z", NULL) == NULL);
    CHECK(tecs_component_field(w, every, "at.", NULL) == NULL);
    CHECK(tecs_component_field(w, every, "", NULL) == NULL);
    CHECK(tecs_component_field(w, every, "f6", NULL) == NULL);      /* no prefix match */
    CHECK(tecs_component_field(w, every, NULL, NULL) == NULL);
    CHECK(tecs_component_field(NULL, every, "b", NULL) == NULL);
    /* Undescribed, unknown, NULL. */
    tecs_comp_t plain = TECS_COMPONENT(w, Position);
    CHECK(tecs_component_fields(w, plain, &n) == NULL);
    CHECK_EQ(n, 0);
    CHECK(tecs_component_fields(w, 999, &n) == NULL);
    CHECK(tecs_component_fields(NULL, every, NULL) == NULL);
    CHECK(tecs_component_field(w, plain, "x", NULL) == NULL);
    /* Values are plain data still. */
    tecs_entity_t e = tecs_new(w);
    Every v = { .i64 = -5, .at = { 1, 2 }, .arr = { 1, 2, 3 } };
    CHECK_ERR(tecs_set(w, e, every, &v), TECS_OK);
    CHECK_EQ(((const Every *)tecs_get(w, e, every))->arr[2], 3);
    tw_free(w);
}

TEST(meta_copies_the_description)
{
    tecs_world_t *w = tw_new();
    char name[8] = "x";
    tecs_field_t fields[1] = { { name, TECS_TYPE_F32, 0, 0, 0 } };  /* count 0: 1 */
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "One", .size = 4, .align = 4, .fields = fields, .nfields = 1 });
    CHECK(c != 0);
    strcpy(name, "zz");
    fields[0].offset = 99;
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(w, c, &n);
    CHECK(n == 1 && strcmp(f[0].name, "x") == 0 && f[0].offset == 0 && f[0].count == 1);
    /* An empty list is no description. */
    tecs_comp_t none = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "None", .size = 4, .fields = fields, .nfields = 0 });
    CHECK(none != 0 && tecs_component_fields(w, none, NULL) == NULL);
    tw_free(w);
}

/* Register a component of 16 bytes with the fields; expect TECS_EINVAL
** and a message naming `who`, and the registry unchanged. */
static void refused(tecs_world_t *w, const tecs_field_t *fields, int32_t n, bool hooks,
                    size_t size, const char *who, int line)
{
    int32_t before = tecs_world_component_count(w);
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Bad", .size = size, .align = size ? 4 : 0, .fields = fields, .nfields = n,
        .ctor = hooks ? named_ctor : NULL, .dtor = hooks ? named_dtor : NULL,
        .copy = hooks ? named_copy : NULL });
    if (c != 0 || tecs_last_error(w) != TECS_EINVAL ||
        strstr(tecs_last_error_msg(w), who) == NULL) {
        fprintf(stderr, "  line %d: %u, %s\n", line, c, tecs_last_error_msg(w));
        test_fail(__FILE__, line, "refused");
    }
    CHECK_EQ(tecs_world_component_count(w), before);
    CHECK_EQ(tecs_component_lookup(w, "Bad"), 0);
}

#define REFUSED(w, hooks, size, who, ...)                                   \
    refused((w), (const tecs_field_t[]){ __VA_ARGS__ },                     \
            (int32_t)(sizeof((const tecs_field_t[]){ __VA_ARGS__ }) / sizeof(tecs_field_t)), \
            (hooks), (size), (who), __LINE__)

TEST(meta_refuses_bad_descriptions)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t vec2 = register_vec2(w);
    tecs_comp_t plain = TECS_COMPONENT(w, Position);
    tecs_comp_t named = register_named(w);
    CHECK(vec2 && plain && named);
    tecs_field_t ok = { "a", TECS_TYPE_I32, 0, 1, 0 };
    refused(w, NULL, 1, false, 16, "NULL fields", __LINE__);
    refused(w, &ok, -1, false, 16, "-1 fields", __LINE__);
    refused(w, &ok, TECS_MAX_FIELDS + 1, false, 16, "257 fields", __LINE__);
    refused(w, &ok, 1, false, 0, "tag 'Bad'", __LINE__);
    REFUSED(w, false, 16, "field 0 ('(null)')", { NULL, TECS_TYPE_I32, 0, 1, 0 });
    REFUSED(w, false, 16, "field 1 (''): a field needs a name", ok, { "", TECS_TYPE_I32, 4, 1, 0 });
    REFUSED(w, false, 16, "'a.b'", { "a.b", TECS_TYPE_I32, 0, 1, 0 });
    REFUSED(w, false, 16, "('a'): the name is given twice", ok, { "a", TECS_TYPE_I32, 4, 1, 0 });
    REFUSED(w, false, 16, "('t'): type 0", { "t", (tecs_type_t)0, 0, 1, 0 });
    REFUSED(w, false, 16, "('t'): type 99", { "t", (tecs_type_t)99, 0, 1, 0 });
    REFUSED(w, false, 16, "('c'): count -1", { "c", TECS_TYPE_I32, 0, -1, 0 });
    REFUSED(w, false, 16, "('o'): 4 bytes at offset 13", { "o", TECS_TYPE_I32, 13, 1, 0 });
    REFUSED(w, false, 16, "('o')", { "o", TECS_TYPE_I32, (size_t)-1, 1, 0 });
    REFUSED(w, false, 16, "('arr'): 20 bytes", { "arr", TECS_TYPE_I32, 0, 5, 0 });
    REFUSED(w, false, 16, "('big')", { "big", TECS_TYPE_I64, 0, INT32_MAX, 0 });
    REFUSED(w, false, 16, "('b'): it overlaps field 'a'", ok, { "b", TECS_TYPE_I16, 2, 1, 0 });
    REFUSED(w, false, 16, "('a'): it overlaps field 'b'", { "a", TECS_TYPE_I32, 4, 2, 0 },
            { "b", TECS_TYPE_I32, 0, 2, 0 });
    REFUSED(w, false, 16, "('n'): nested component 999 is unknown",
            { "n", TECS_TYPE_STRUCT, 0, 1, 999 });
    REFUSED(w, false, 16, "('n'): nested component 'Position'",
            { "n", TECS_TYPE_STRUCT, 0, 1, plain });
    REFUSED(w, false, 16, "('n'): 24 bytes", { "n", TECS_TYPE_STRUCT, 0, 3, vec2 });
    REFUSED(w, false, 16, "('s'): a string field needs", { "s", TECS_TYPE_STRING, 0, 1, 0 });
    REFUSED(w, false, 32, "('n'): nested component 'Named'",
            { "n", TECS_TYPE_STRUCT, 0, 1, named });
    /* The same with hooks is taken. */
    tecs_comp_t with = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Holder", .size = sizeof(Named), .align = _Alignof(Named),
        .ctor = named_ctor, .dtor = named_dtor, .copy = named_copy,
        .fields = (const tecs_field_t[]){ { "n", TECS_TYPE_STRUCT, 0, 1, named } },
        .nfields = 1 });
    CHECK(with != 0);
    CHECK(tecs__comp_meta(w, with)->strings);
    CHECK(!tecs__comp_meta(w, vec2)->strings);
    /* The description's check comes after the component's own. */
    CHECK_EQ(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Vec2", .size = 8,
                                .fields = &ok, .nfields = 1 }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    tw_free(w);
}

/* The layout hash of c (src/meta.h). */
static uint64_t hash_of(tecs_world_t *w, tecs_comp_t c)
{
    return tecs__comp_meta(w, c)->hash;
}

TEST(meta_layout_hash_is_stable)
{
    tecs_world_t *a = tw_new(), *b = tw_new();
    TECS_COMPONENT(b, Position);                   /* other ids in b */
    tecs_comp_t va = register_vec2(a), vb = register_vec2(b);
    tecs_comp_t ea = register_every(a, va), eb = register_every(b, vb);
    CHECK(va != vb);
    CHECK(hash_of(a, va) == hash_of(b, vb));
    CHECK(hash_of(a, ea) == hash_of(b, eb));
    /* The value every run and platform gives for this layout. */
    /* The value every run and platform gives for Vec2's layout (its size
    ** and offsets are the same on every target; Every's are not). */
    CHECK(hash_of(a, va) == 0x4defa5f300f23d3cu);
    /* Each part of a layout changes it. */
    tecs_field_t f[2] = { { "x", TECS_TYPE_F32, 0, 1, 0 }, { "y", TECS_TYPE_F32, 4, 1, 0 } };
    const char *names[] = { "V1", "V2", "V3", "V4", "V5" };
    uint64_t h[5];
    for (int i = 0; i < 5; i++) {
        tecs_field_t g[2] = { f[0], f[1] };
        size_t size = 8;
        if (i == 1)
            g[1].name = "z";
        if (i == 2)
            g[1].type = TECS_TYPE_I32;
        if (i == 3)
            g[1].offset = 8, size = 12;
        if (i == 4)
            size = 12;
        tecs_comp_t c = tecs_component_new(a, &(tecs_component_desc_t){
            .name = names[i], .size = size, .align = 4, .fields = g, .nfields = 2 });
        CHECK(c != 0);
        h[i] = hash_of(a, c);
        CHECK(i != 0 || h[0] == hash_of(a, va));
        for (int j = 0; j < i; j++)
            CHECK(h[i] != h[j]);
    }
    /* A nested layout is part of the outer one. */
    tecs_comp_t n1 = tecs_component_new(a, &(tecs_component_desc_t){ .name = "N1", .size = 8,
        .align = 4, .fields = (tecs_field_t[]){ { "v", TECS_TYPE_STRUCT, 0, 1, va } },
        .nfields = 1 });
    tecs_comp_t v3 = tecs_component_lookup(a, "V3");
    tecs_comp_t n2 = tecs_component_new(a, &(tecs_component_desc_t){ .name = "N2", .size = 8,
        .align = 4, .fields = (tecs_field_t[]){ { "v", TECS_TYPE_STRUCT, 0, 1, v3 } },
        .nfields = 1 });
    CHECK(n1 && n2 && hash_of(a, n1) != hash_of(a, n2));
    tw_free(a);
    tw_free(b);
}

TEST(meta_strings_are_owned_by_hooks)
{
    tecs_world_t *w = tw_new();
    live_strings = 0;
    tecs_comp_t named = register_named(w);
    CHECK(named != 0);
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(w, named, &n);
    CHECK(n == 3 && f[0].type == TECS_TYPE_STRING && f[2].count == 2);
    tecs_entity_t e = tecs_new(w), g = tecs_new(w);
    /* A loader's write: a staging value pointing at text it keeps. */
    char text[] = "alice";
    Named stage = { 0 };
    tecs__meta_str_write(&stage, f[0].offset, text);
    stage.score = 3;
    CHECK_ERR(tecs_set(w, e, named, &stage), TECS_OK);
    text[0] = 'X';
    const Named *v = tecs_get(w, e, named);
    CHECK(strcmp(tecs__meta_str_read(v, f[0].offset), "alice") == 0);
    CHECK(tecs__meta_str_read(v, f[2].offset) == NULL);
    CHECK_ERR(tecs_set(w, g, named, &(Named){ "bob", 1, { "a", NULL } }), TECS_OK);
    CHECK_EQ(live_strings, 3);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK_EQ(live_strings, 2);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

/* An each callback: descriptions read from inside an iteration. */
static bool read_fields(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)e;
    (void)fields;
    int32_t n = 0;
    CHECK(tecs_component_fields(w, *(tecs_comp_t *)ctx, &n) != NULL && n == 2);
    CHECK(tecs_component_field(w, *(tecs_comp_t *)ctx, "y", NULL) != NULL);
    return false;
}

TEST(meta_fields_read_from_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t vec2 = register_vec2(w);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, vec2, &(Vec2){ 1, 2 }), TECS_OK);
    tecs_query_t *q = TECS_QUERY(w, { .comp = vec2 });
    CHECK(q != NULL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, read_fields, &vec2), TECS_OK);
    tecs_query_free(q);
    tw_free(w);
}

TEST(meta_index_by_field_name)
{
    tecs_world_t *w = tw_new();
    live_strings = 0;
    tecs_comp_t vec2 = register_vec2(w);
    tecs_comp_t every = register_every(w, vec2);
    tecs_comp_t named = register_named(w);
    tecs_entity_t e[4];
    for (int i = 0; i < 4; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, e[i], every, &(Every){ .i16 = (int16_t)(i * 10), .u64 = 7,
                  .ent = e[0], .b = i == 2, .at = { (float)i, -(float)i } }), TECS_OK);
        CHECK_ERR(tecs_set(w, e[i], vec2, &(Vec2){ (float)i, 0 }), TECS_OK);
    }
    char nm[] = "carol";
    CHECK_ERR(tecs_set(w, e[1], named, &(Named){ nm, 5, { 0 } }), TECS_OK);
    /* The index does not keep the name. */
    char fname[8] = "i16";
    tecs_index_t *by_i16 = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
        .field = fname, .unique = true });
    CHECK(by_i16 != NULL);
    strcpy(fname, "zz");
    CHECK_EQ(tecs_index_lookup(by_i16, tecs_key_int(20)), e[2]);
    tecs_index_t *by_at = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
        .kind = TECS_INDEX_ORDERED, .field = "at.y", .unique = true });
    CHECK(by_at != NULL);
    CHECK_EQ(tecs_index_lookup(by_at, tecs_key_real(-3)), e[3]);
    tecs_index_t *by_ent = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
        .field = "ent" });
    CHECK(by_ent && tecs_index_count(by_ent) == 4);
    tecs_index_t *by_b = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
        .field = "b" });
    CHECK(by_b != NULL);
    tecs_index_t *by_f64 = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
        .field = "f64", .kind = TECS_INDEX_ORDERED });
    CHECK(by_f64 != NULL);
    tecs_index_t *by_name = tecs_index_new(w, &(tecs_index_desc_t){ .comp = named,
        .field = "name", .unique = true });
    CHECK(by_name != NULL);
    CHECK_EQ(tecs_index_lookup(by_name, tecs_key_str("carol")), e[1]);
    tecs_index_t *near = tecs_index_new(w, &(tecs_index_desc_t){ .comp = vec2,
        .kind = TECS_INDEX_SPATIAL, .field = "x", .field_y = "y", .cell_size = 1 });
    CHECK(near != NULL);
    tecs_entity_t out[4];
    CHECK_EQ(tecs_index_near(near, 3, 0, 0.5f, out, 4), 1);
    CHECK_EQ(out[0], e[3]);
    /* Refused: each names its cause. */
    struct { tecs_index_desc_t d; tecs_err_t err; const char *msg; } bad[] = {
        { { .comp = every, .field = "nope" }, TECS_EINVAL, "no field 'nope'" },
        { { .comp = every, .field = "arr" }, TECS_EINVAL, "an array of i32" },
        { { .comp = every, .field = "at" }, TECS_EINVAL, "is struct" },
        { { .comp = every, .field = "path.x" }, TECS_EINVAL, "no field 'path.x'" },
        { { .comp = named, .field = "tags" }, TECS_EINVAL, "an array of string" },
        { { .comp = every, .field = "i16", .type = TECS_KEY_I16 }, TECS_EINVAL, "not both" },
        { { .comp = every, .field = "i16", .offset = 2 }, TECS_EINVAL, "not both" },
        { { .comp = every, .field_y = "i16" }, TECS_EINVAL, "without field" },
        { { .comp = every, .field = "i16", .field_y = "i32" }, TECS_EINVAL, "spatial" },
        { { .comp = vec2, .field = "x", .kind = TECS_INDEX_SPATIAL, .cell_size = 1 },
          TECS_EINVAL, "needs field_y" },
        { { .comp = every, .field = "at.x", .field_y = "i32", .kind = TECS_INDEX_SPATIAL,
            .cell_size = 1 }, TECS_EINVAL, "field_y 'i32' is not one" },
        { { .comp = every, .field = "i32", .field_y = "f32", .kind = TECS_INDEX_SPATIAL,
            .cell_size = 1 }, TECS_EINVAL, "float fields" },
        { { .comp = TECS_COMPONENT(w, Position), .field = "x" }, TECS_EINVAL,
          "has no description" },
        { { .comp = 999, .field = "x" }, TECS_ENOCOMP, "999" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(tecs_index_new(w, &bad[i].d) == NULL);
        CHECK_EQ(tecs_last_error(w), bad[i].err);
        if (strstr(tecs_last_error_msg(w), bad[i].msg) == NULL) {
            fprintf(stderr, "  case %zu: %s\n", i, tecs_last_error_msg(w));
            CHECK(!"message");
        }
    }
    CHECK(tecs_index_new(w, NULL) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
}

/* One run of a workload with the k-th allocation failing: every failed
** call reports TECS_ENOMEM and has changed nothing; then it succeeds. */
static bool oom_run(long k)
{
    tw_alloc a = { 0 };
    live_strings = 0;
    tecs_world_t *w = tw_new_ex(&a, 0);
    CHECK(w != NULL);
    a.fail_at = k ? a.calls + k : 0;
    bool hit = false;
    tecs_comp_t vec2 = 0, every = 0, named = 0;
    tecs_entity_t e = 0;
    tecs_index_t *x = NULL, *s = NULL;
    for (int step = 0; step < 7; step++) {
        for (;;) {
            long fails = a.failures;
            int32_t ncomps = tecs_world_component_count(w);
            bool ok = true;
            switch (step) {
            case 0: ok = (vec2 = register_vec2(w)) != 0; break;
            case 1: ok = (every = register_every(w, vec2)) != 0; break;
            case 2: ok = (named = register_named(w)) != 0; break;
            case 3: ok = (e = tecs_new(w)) != 0; break;
            case 4: ok = !tecs_set(w, e, named, &(Named){ "dave", 1, { "t", NULL } }); break;
            case 5: ok = (x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = every,
                          .field = "at.x", .kind = TECS_INDEX_ORDERED })) != NULL; break;
            case 6: ok = (s = tecs_index_new(w, &(tecs_index_desc_t){ .comp = named,
                          .field = "name" })) != NULL; break;
            }
            if (ok)
                break;
            CHECK(a.failures > fails);
            CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
            CHECK_EQ(tecs_world_component_count(w), ncomps);
            TW_CHECK(w);
            hit = true;
            a.fail_at = 0;
        }
    }
    CHECK(tecs_get(w, e, named) != NULL);
    CHECK_EQ(tecs_index_lookup(s, tecs_key_str("dave")), 0);   /* not unique */
    CHECK_EQ(tecs_index_count(s), 1);
    CHECK_EQ(tecs_index_count(x), 0);
    CHECK_EQ(live_strings, 2);
    tw_free(w);
    CHECK_EQ(live_strings, 0);
    return hit;
}

TEST(meta_oom_every_allocation)
{
    CHECK(!oom_run(0));
    long k = 1;
    while (oom_run(k))
        k++;
    CHECK(k > 5);
}

/* A lifecycle hook of a described component: descriptions read, objects
** (a described component, an index by name) refused there. */
static tecs_world_t *hook_world;
static int hook_runs;

static void probe_ctor(void *dst, int32_t n, void *ctx)
{
    tecs_world_t *w = hook_world;
    tecs_comp_t self = *(tecs_comp_t *)ctx;
    memset(dst, 0, (size_t)n * sizeof(Vec2));
    int32_t k = 0;
    CHECK(tecs_component_fields(w, self, &k) != NULL && k == 2);
    CHECK(tecs_component_field(w, self, "x", NULL) != NULL);
    CHECK_EQ(register_vec2(w), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = self, .field = "x" }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
    hook_runs++;
}

/* An observer: a described component and an index by name are made. */
static void probe_observer(const tecs_event_t *ev)
{
    tecs_comp_t *made = ev->ctx;
    if (made[0] == 0) {
        made[0] = tecs_component_new(ev->world, &(tecs_component_desc_t){ .name = "Late",
            .size = 4, .align = 4,
            .fields = (const tecs_field_t[]){ { "v", TECS_TYPE_F32, 0, 1, 0 } }, .nfields = 1 });
        CHECK(made[0] != 0);
        CHECK(tecs_index_new(ev->world, &(tecs_index_desc_t){ .comp = made[0], .field = "v",
                             .kind = TECS_INDEX_ORDERED }) != NULL);
    }
}

TEST(meta_calls_from_hooks_and_observers)
{
    tecs_world_t *w = tw_new();
    hook_world = w;
    hook_runs = 0;
    static tecs_comp_t self;
    self = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Probe",
        .size = sizeof(Vec2), .align = _Alignof(Vec2), .ctor = probe_ctor, .hook_ctx = &self,
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Vec2, x, TECS_TYPE_F32),
                                          TECS_MEMBER(Vec2, y, TECS_TYPE_F32) },
        .nfields = 2 });
    CHECK(self != 0);
    tecs_comp_t made[1] = { 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = self,
                            .callback = probe_observer, .ctx = made }) != 0);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, self), TECS_OK);
    CHECK_EQ(hook_runs, 1);
    CHECK(made[0] != 0 && tecs_component_fields(w, made[0], NULL) != NULL);
    CHECK_EQ(tecs_world_component_count(w), 2);
    TW_CHECK(w);
    tw_free(w);
}

/* The other byte order, field by field: each scalar reversed in place, an
** array element by element, a nested component through its description;
** twice is the value again. Strings cannot be turned (a pointer). */
TEST(meta_swap_turns_each_field)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t vec2 = register_vec2(w);
    tecs_comp_t every = register_every(w, vec2);
    Every v, orig;
    memset(&v, 0, sizeof v);
    v.b = true, v.i8 = -3, v.i16 = 0x1234, v.i32 = 0x01020304, v.i64 = 0x0102030405060708;
    v.u8 = 200, v.u16 = 0xabcd, v.u32 = 0xdeadbeef, v.u64 = 0x1122334455667788u;
    v.f32 = 1.5f, v.f64 = -2.25, v.ent = 0x0000000700000009u;
    v.arr[0] = 1, v.arr[1] = 2, v.arr[2] = 0x7f000000;
    v.at = (Vec2){ 3.0f, 4.0f }, v.path[0] = (Vec2){ 5, 6 }, v.path[1] = (Vec2){ 7, 8 };
    orig = v;
    CHECK(tecs__meta_swap(w, every, &v));
    CHECK(v.b == orig.b && v.i8 == orig.i8 && v.u8 == orig.u8);     /* one byte */
    CHECK_EQ((uint16_t)v.i16, 0x3412);
    CHECK_EQ((uint32_t)v.i32, 0x04030201);
    CHECK_EQ((uint64_t)v.i64, 0x0807060504030201);
    CHECK_EQ(v.u32, 0xefbeadde);
    CHECK_EQ(v.u64, 0x8877665544332211u);
    CHECK_EQ(v.ent, 0x0900000007000000u);
    CHECK_EQ((uint32_t)v.arr[2], 0x0000007f);
    uint32_t bits, want;
    memcpy(&bits, &v.at.y, 4);
    memcpy(&want, &orig.at.y, 4);
    CHECK_EQ(bits, __builtin_bswap32(want));
    memcpy(&bits, &v.path[1].x, 4);
    memcpy(&want, &orig.path[1].x, 4);
    CHECK_EQ(bits, __builtin_bswap32(want));
    CHECK(tecs__meta_swap(w, every, &v));
    CHECK(memcmp(&v, &orig, sizeof v) == 0);
    tecs_comp_t named = register_named(w);
    Named n = { NULL, 1, { NULL, NULL } };
    CHECK(!tecs__meta_swap(w, named, &n));
    CHECK_EQ(n.score, 1);                       /* untouched */
    CHECK(!tecs__meta_swap(w, TECS_COMPONENT(w, Position), &orig));
    tw_free(w);
}
