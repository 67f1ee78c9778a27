/* The inspector's API (src/inspect/api.c) called directly: every endpoint
** of the contract checked against the world it answers from, the pages,
** every error row, writes on and off, and refused writes that change
** nothing. Built only with the inspector (libmicrohttpd and jansson). */
#include "inspect_fixture.h"

#include <jansson.h>

#define PAGE 100

/* The answer to method path?args (args "k=v&k=v", taken as decoded) with
** body, writes on or off; its status must be want. Returns the parsed
** answer (json_decref it). */
static json_t *ask(tecs_world_t *w, bool writes, const char *method, const char *path,
                   const char *args, const char *body, int want)
{
    static char buf[4096];
    tecs__inspect_arg a[TECS__INSPECT_MAX_ARGS + 4];
    int32_t n = 0;
    snprintf(buf, sizeof buf, "%s", args ? args : "");
    for (char *p = buf; args && *p && n < TECS__INSPECT_MAX_ARGS + 4;) {
        char *amp = strchr(p, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(p, '=');
        if (eq)
            *eq = '\0';
        a[n++] = (tecs__inspect_arg){ p, eq ? eq + 1 : "" };
        if (amp == NULL)
            break;
        p = amp + 1;
    }
    tecs__inspect_cfg cfg = { .writes = writes, .max_page = PAGE };
    tecs__inspect_req req = { method, path, n, a, body, body ? strlen(body) : 0 };
    char *out = NULL;
    int status = tecs__inspect_answer(w, &cfg, &req, &out);
    CHECK(out != NULL);
    json_error_t je;
    json_t *j = out ? json_loads(out, 0, &je) : NULL;
    if (status != want)
        fprintf(stderr, "  %s %s?%s: %d, not %d: %s\n", method, path, args ? args : "",
                status, want, out ? out : "(null)");
    CHECK_EQ(status, want);
    CHECK(json_is_object(j));
    free(out);
    return j;
}

/* The error answer must name code, and its message must hold part. */
static void error_is(json_t *j, const char *code, const char *part)
{
    const char *c = json_string_value(json_object_get(j, "error"));
    const char *m = json_string_value(json_object_get(j, "message"));
    if (c == NULL || strcmp(c, code) != 0 || m == NULL || (part && strstr(m, part) == NULL))
        fprintf(stderr, "  expected %s (\"%s\"), got %s: %s\n", code, part ? part : "",
                c ? c : "?", m ? m : "?");
    CHECK(c != NULL && strcmp(c, code) == 0);
    CHECK(m != NULL && (part == NULL || strstr(m, part) != NULL));
    json_decref(j);
}

/* GET path?args must fail with status and code. */
static void get_fails(tecs_world_t *w, const char *path, const char *args, int status,
                      const char *code)
{
    error_is(ask(w, false, "GET", path, args, NULL, status), code, NULL);
}

/* The JSON id [s, g] names e. */
static bool is_id(json_t *j, tecs_entity_t e)
{
    return json_is_array(j) && json_array_size(j) == 2 &&
           json_integer_value(json_array_get(j, 0)) == TECS_ENTITY_INDEX(e) &&
           json_integer_value(json_array_get(j, 1)) == TECS_ENTITY_GENERATION(e);
}

/* "S.G" of e. */
static const char *id_text(tecs_entity_t e)
{
    static char b[4][32];
    static int k;
    k = (k + 1) % 4;
    snprintf(b[k], sizeof b[k], "%lu.%lu", (unsigned long)TECS_ENTITY_INDEX(e),
             (unsigned long)TECS_ENTITY_GENERATION(e));
    return b[k];
}

static json_int_t int_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    CHECK(json_is_integer(v));
    return json_integer_value(v);
}

static double num_at(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    CHECK(json_is_number(v));
    return json_number_value(v);
}

TEST(inspect_api_world)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    json_t *j = ask(w, false, "GET", "/api/world", NULL, NULL, 200);
    CHECK_EQ(int_at(j, "entities"), tecs_world_entity_count(w));
    CHECK_EQ(int_at(j, "components"), tecs_world_component_count(w));
    CHECK_EQ(int_at(j, "archetypes"), tecs_world_archetype_count(w));
    CHECK(int_at(j, "memory") > 0);
    CHECK_EQ(int_at(j, "systems"), 2);
    CHECK_EQ(int_at(j, "resources"), 1);
    CHECK_EQ(int_at(j, "frame"), 1);
    CHECK(json_is_false(json_object_get(j, "writes")));
    CHECK(json_is_true(json_object_get(j, "relations")));
    json_decref(j);
    j = ask(w, true, "GET", "/api/world", NULL, NULL, 200);
    CHECK(json_is_true(json_object_get(j, "writes")));
    json_decref(j);
    TW_CHECK(w);
    ifix_free(w, &f);
}

/* The entry of the component named name in /api/components. */
static json_t *comp_entry(json_t *list, const char *name)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *c = json_array_get(list, i);
        if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
            return c;
    }
    CHECK(!"component listed");
    return NULL;
}

TEST(inspect_api_components)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    json_t *j = ask(w, false, "GET", "/api/components", NULL, NULL, 200);
    json_t *list = json_object_get(j, "components");
    CHECK_EQ((long long)json_array_size(list), tecs_world_component_count(w));
    for (size_t i = 0; i < json_array_size(list); i++) {        /* by id, every one */
        json_t *c = json_array_get(list, i);
        tecs_comp_t id = (tecs_comp_t)int_at(c, "id");
        CHECK(strcmp(json_string_value(json_object_get(c, "name")),
                     tecs_component_name(w, id)) == 0);
        CHECK_EQ(int_at(c, "size"), tecs_component_size(w, id));
        CHECK(i == 0 || id > json_integer_value(json_object_get(json_array_get(list, i - 1),
                                                                "id")));
    }
    json_t *pos = comp_entry(list, "Position"), *fl = json_object_get(pos, "fields");
    CHECK_EQ(int_at(pos, "id"), f.pos);
    CHECK(strcmp(json_string_value(json_object_get(pos, "storage")), "table") == 0);
    CHECK_EQ((long long)json_array_size(fl), 2);
    json_t *y = json_array_get(fl, 1);
    CHECK(strcmp(json_string_value(json_object_get(y, "name")), "y") == 0);
    CHECK(strcmp(json_string_value(json_object_get(y, "type")), "f32") == 0);
    CHECK_EQ(int_at(y, "offset"), offsetof(Position, y));
    CHECK_EQ(int_at(y, "count"), 1);
    CHECK(json_object_get(y, "struct") == NULL);
    json_t *body = json_object_get(comp_entry(list, "Body"), "fields");
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(body, 1), "struct")),
                 "IVec2") == 0);
    CHECK_EQ(int_at(json_array_get(body, 2), "count"), 3);
    CHECK_EQ((long long)json_array_size(json_object_get(comp_entry(list, "Blob"), "fields")), 0);
    CHECK(strcmp(json_string_value(json_object_get(comp_entry(list, "Score"), "storage")),
                 "sparse") == 0);
    CHECK(json_is_true(json_object_get(comp_entry(list, "Flag"), "enableable")));
    CHECK(json_is_false(json_object_get(pos, "enableable")));
    CHECK(json_is_true(json_object_get(comp_entry(list, "Owes"), "relation")));
    CHECK(json_is_true(json_object_get(comp_entry(list, "ChildOf"), "relation")));
    CHECK(json_is_false(json_object_get(pos, "relation")));
    CHECK(json_is_true(json_object_get(comp_entry(list, "Gravity"), "resource")));
    CHECK(json_is_false(json_object_get(pos, "resource")));
    CHECK(json_is_false(json_object_get(pos, "hidden")));
    CHECK(json_is_false(json_object_get(pos, "inherit")));
    json_decref(j);
    ifix_free(w, &f);
}

TEST(inspect_api_archetypes_paged)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    int32_t n = tecs_world_archetype_count(w);
    json_t *j = ask(w, false, "GET", "/api/archetypes", NULL, NULL, 200);
    json_t *list = json_object_get(j, "archetypes");
    CHECK_EQ(int_at(j, "total"), n);
    CHECK_EQ(int_at(j, "offset"), 0);
    CHECK_EQ((long long)json_array_size(list), n);
    json_t *empty = json_array_get(list, 0);
    CHECK_EQ(int_at(empty, "id"), 0);
    CHECK_EQ((long long)json_array_size(json_object_get(empty, "components")), 0);
    int32_t rows = 0;
    for (int32_t i = 0; i < n; i++) {
        json_t *a = json_array_get(list, (size_t)i);
        tecs_archetype_t *arch = tecs_world_archetype(w, i);
        const tecs_comp_t *ids;
        int32_t nc = tecs_archetype_components(arch, &ids);
        CHECK_EQ(int_at(a, "id"), i);
        CHECK_EQ(int_at(a, "entities"), tecs_archetype_entity_count(arch));
        CHECK_EQ(int_at(a, "chunks"), tecs_archetype_chunk_count(arch));
        CHECK_EQ((long long)json_array_size(json_object_get(a, "components")), nc);
        for (int32_t k = 0; k < nc; k++)
            CHECK(strcmp(json_string_value(json_array_get(json_object_get(a, "components"),
                                                          (size_t)k)),
                         tecs_component_name(w, ids[k])) == 0);
        rows += tecs_archetype_entity_count(arch);
    }
    CHECK_EQ(rows, tecs_world_entity_count(w));
    json_decref(j);
    j = ask(w, false, "GET", "/api/archetypes", "offset=1&limit=2", NULL, 200);
    list = json_object_get(j, "archetypes");
    CHECK_EQ(int_at(j, "total"), n);
    CHECK_EQ(int_at(j, "offset"), 1);
    CHECK_EQ((long long)json_array_size(list), 2);
    CHECK_EQ(int_at(json_array_get(list, 0), "id"), 1);
    CHECK_EQ(int_at(json_array_get(list, 1), "id"), 2);
    json_decref(j);
    j = ask(w, false, "GET", "/api/archetypes", "offset=1000000", NULL, 200);
    CHECK_EQ((long long)json_array_size(json_object_get(j, "archetypes")), 0);
    json_decref(j);
    j = ask(w, false, "GET", "/api/archetypes", "limit=0", NULL, 200);
    CHECK_EQ((long long)json_array_size(json_object_get(j, "archetypes")), 0);
    json_decref(j);
    ifix_free(w, &f);
}

TEST(inspect_api_entity)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    char args[64];
    snprintf(args, sizeof args, "id=%s", id_text(f.e1));
    json_t *j = ask(w, false, "GET", "/api/entity", args, NULL, 200);
    CHECK(is_id(json_object_get(j, "id"), f.e1));
    tecs_archetype_t *arch = tecs_entity_archetype(w, f.e1);
    CHECK(tecs_world_archetype(w, (int32_t)int_at(j, "archetype")) == arch);
    json_t *c = json_object_get(j, "components");
    const Position *p = tecs_get(w, f.e1, f.pos);
    CHECK(num_at(json_object_get(c, "Position"), "x") == p->x);    /* moved by the frame */
    CHECK(p->x == 6.5f);
    CHECK(num_at(json_object_get(c, "Position"), "y") == -2);
    CHECK(num_at(json_object_get(c, "Velocity"), "x") == 10);
    json_t *blob = json_object_get(c, "Blob");
    CHECK_EQ(int_at(blob, "size"), 4);
    CHECK(strcmp(json_string_value(json_object_get(blob, "bytes")), "012abeff") == 0);
    CHECK(json_is_true(json_object_get(c, "Enemy")));
    CHECK_EQ(int_at(json_object_get(c, "Flag"), "on"), 7);
    CHECK(num_at(json_object_get(c, "Score"), "v") == 0.25);
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(c, "Named"), "name")),
                 "first") == 0);
    json_t *body = json_object_get(c, "Body");
    CHECK(num_at(json_object_get(body, "at"), "y") == 4);
    CHECK_EQ(json_integer_value(json_array_get(json_object_get(body, "v"), 2)), 7);
    CHECK(json_object_get(c, "ChildOf") == NULL);        /* relations are not components */
    CHECK(json_object_get(c, "Owes") == NULL);
    CHECK_EQ((long long)json_object_size(c), 8);
    json_t *en = json_object_get(j, "enabled");
    CHECK_EQ((long long)json_object_size(en), 1);
    CHECK(json_is_false(json_object_get(en, "Flag")));
    json_t *pairs = json_object_get(j, "pairs");
    CHECK_EQ((long long)json_array_size(pairs), 1);
    json_t *pr = json_array_get(pairs, 0);
    CHECK(strcmp(json_string_value(json_object_get(pr, "relation")), "Owes") == 0);
    CHECK(is_id(json_object_get(pr, "target"), f.e2));
    CHECK_EQ(int_at(json_object_get(pr, "value"), "amount"), 40);
    CHECK(is_id(json_object_get(j, "parent"), f.parent));
    CHECK_EQ(int_at(j, "children"), 0);
    CHECK_EQ((long long)json_object_size(json_object_get(j, "inherited")), 0);
    json_decref(j);

    snprintf(args, sizeof args, "id=%s", id_text(f.parent));
    j = ask(w, false, "GET", "/api/entity", args, NULL, 200);
    CHECK_EQ(int_at(j, "children"), 3);
    CHECK(json_is_null(json_object_get(j, "parent")));
    CHECK_EQ((long long)json_object_size(json_object_get(j, "components")), 0);
    json_decref(j);

    /* An instance reads its base's Velocity: inherited, not its own. */
    snprintf(args, sizeof args, "id=%s", id_text(f.inst));
    j = ask(w, false, "GET", "/api/entity", args, NULL, 200);
    CHECK(json_object_get(json_object_get(j, "components"), "Velocity") == NULL);
    CHECK(num_at(json_object_get(json_object_get(j, "inherited"), "Velocity"), "y") == 3);
    pr = json_array_get(json_object_get(j, "pairs"), 0);
    CHECK(strcmp(json_string_value(json_object_get(pr, "relation")), "IsA") == 0);
    CHECK(is_id(json_object_get(pr, "target"), f.base));
    CHECK(json_object_get(pr, "value") == NULL);                   /* a tag relation */
    json_decref(j);
    ifix_free(w, &f);
}

/* Every malformed id is a 400, a dead or stale one a 404. */
TEST(inspect_api_entity_bad_ids)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    const char *bad[] = { "id=", "id=abc", "id=1", "id=1.", "id=.1", "id=1.2.3", "id=-1.1",
                          "id=1.-1", "id=+1.1", "id=1.1x", "id= 1.1", "id=1.1 ",
                          "id=4294967296.1", "id=1.4294967296", "id=99999999999999999999.1",
                          "id=0x1.1", "id=1,1", NULL };
    for (int i = 0; bad[i]; i++)
        get_fails(w, "/api/entity", bad[i], 400, "bad_argument");
    get_fails(w, "/api/entity", NULL, 400, "bad_argument");
    get_fails(w, "/api/entity", "id=0", 400, "bad_argument");
    get_fails(w, "/api/entity", "id=4294967295.4294967295", 404, "dead");
    get_fails(w, "/api/entity", "id=3.0", 404, "dead");
    char args[64];
    tecs_entity_t gone = tecs_new(w);
    snprintf(args, sizeof args, "id=%s", id_text(gone));
    CHECK_ERR(tecs_destroy(w, gone), TECS_OK);
    tecs_entity_t again = tecs_new(w);                     /* its slot, a new generation */
    CHECK_EQ(TECS_ENTITY_INDEX(again), TECS_ENTITY_INDEX(gone));
    error_is(ask(w, false, "GET", "/api/entity", args, NULL, 404), "dead", id_text(gone));
    snprintf(args, sizeof args, "id=%s", id_text(again));
    json_decref(ask(w, false, "GET", "/api/entity", args, NULL, 200));
    TW_CHECK(w);
    ifix_free(w, &f);
}

TEST(inspect_api_tree)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    json_t *j = ask(w, false, "GET", "/api/tree", NULL, NULL, 200);
    int32_t roots = tecs_world_entity_count(w) - 3;     /* all but the parent's children */
    CHECK_EQ(int_at(j, "total"), roots);
    json_t *list = json_object_get(j, "entities");
    CHECK_EQ((long long)json_array_size(list), roots);
    bool saw_parent = false;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *x = json_array_get(list, i);
        CHECK(!is_id(json_object_get(x, "id"), f.e1) && !is_id(json_object_get(x, "id"), f.kid1));
        if (is_id(json_object_get(x, "id"), f.parent)) {
            saw_parent = true;
            CHECK_EQ(int_at(x, "children"), 3);
            CHECK_EQ((long long)json_array_size(json_object_get(x, "components")), 0);
        }
        if (is_id(json_object_get(x, "id"), f.e2)) {
            json_t *names = json_object_get(x, "components");
            CHECK_EQ((long long)json_array_size(names), 1);
            CHECK(strcmp(json_string_value(json_array_get(names, 0)), "Position") == 0);
        }
    }
    CHECK(saw_parent);
    json_decref(j);
    char args[64];
    snprintf(args, sizeof args, "parent=%s", id_text(f.parent));
    j = ask(w, false, "GET", "/api/tree", args, NULL, 200);
    list = json_object_get(j, "entities");
    CHECK_EQ(int_at(j, "total"), 3);
    CHECK_EQ((long long)json_array_size(list), 3);
    json_decref(j);
    snprintf(args, sizeof args, "parent=%s&offset=1&limit=1", id_text(f.parent));
    j = ask(w, false, "GET", "/api/tree", args, NULL, 200);
    list = json_object_get(j, "entities");
    CHECK_EQ(int_at(j, "total"), 3);
    CHECK_EQ(int_at(j, "offset"), 1);
    CHECK_EQ((long long)json_array_size(list), 1);
    tecs_walk_t walk = tecs_sources(w, f.parent, f.childof);
    CHECK(tecs_walk_next(&walk) && tecs_walk_next(&walk));
    CHECK(is_id(json_object_get(json_array_get(list, 0), "id"), walk.entity));
    json_decref(j);
    j = ask(w, false, "GET", "/api/tree", "parent=0&offset=5&limit=3", NULL, 200);
    CHECK_EQ(int_at(j, "total"), roots);
    CHECK_EQ((long long)json_array_size(json_object_get(j, "entities")), 3);
    json_decref(j);
    get_fails(w, "/api/tree", "parent=1", 400, "bad_argument");
    get_fails(w, "/api/tree", "parent=77.1", 404, "dead");
    get_fails(w, "/api/tree", "limit=101", 400, "bad_argument");
    ifix_free(w, &f);
}

/* The ids of a page of entities. */
static int32_t page_ids(json_t *j, tecs_entity_t *out, int32_t cap)
{
    json_t *list = json_object_get(j, "entities");
    int32_t n = (int32_t)json_array_size(list);
    for (int32_t i = 0; i < n && i < cap; i++) {
        json_t *id = json_object_get(json_array_get(list, (size_t)i), "id");
        out[i] = (tecs_entity_t)json_integer_value(json_array_get(id, 1)) << 32 |
                 (tecs_entity_t)json_integer_value(json_array_get(id, 0));
    }
    return n;
}

TEST(inspect_api_query)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    json_t *j = ask(w, false, "GET", "/api/query", "q=Position, Velocity", NULL, 200);
    CHECK_EQ(int_at(j, "total"), 1);
    json_t *terms = json_object_get(j, "terms");
    CHECK_EQ((long long)json_array_size(terms), 2);
    CHECK(strcmp(json_string_value(json_array_get(terms, 1)), "Velocity") == 0);
    json_t *x = json_array_get(json_object_get(j, "entities"), 0);
    CHECK(is_id(json_object_get(x, "id"), f.e1));
    json_t *c = json_object_get(x, "components");
    CHECK_EQ((long long)json_object_size(c), 2);
    CHECK(num_at(json_object_get(c, "Velocity"), "x") == 10);
    json_decref(j);

    j = ask(w, false, "GET", "/api/query", "q=Position !Velocity,?Enemy", NULL, 200);
    CHECK_EQ(int_at(j, "total"), f.npos - 1);
    terms = json_object_get(j, "terms");
    CHECK(strcmp(json_string_value(json_array_get(terms, 1)), "!Velocity") == 0);
    CHECK(strcmp(json_string_value(json_array_get(terms, 2)), "?Enemy") == 0);
    json_decref(j);
    j = ask(w, false, "GET", "/api/query", "q=?Enemy,Position", NULL, 200);
    CHECK_EQ(int_at(j, "total"), f.npos);
    json_t *list = json_object_get(j, "entities");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *e = json_array_get(list, i);
        bool first = is_id(json_object_get(e, "id"), f.e1);
        CHECK(json_is_true(json_object_get(json_object_get(e, "components"), "Enemy")) == first);
    }
    json_decref(j);

    /* Empty text: every entity (not the prefab-like hidden ones). */
    j = ask(w, false, "GET", "/api/query", "q=", NULL, 200);
    CHECK_EQ(int_at(j, "total"), tecs_world_entity_count(w));
    CHECK_EQ((long long)json_array_size(json_object_get(j, "terms")), 0);
    json_decref(j);
    j = ask(w, false, "GET", "/api/query", NULL, NULL, 200);
    CHECK_EQ(int_at(j, "total"), tecs_world_entity_count(w));
    json_decref(j);

    /* Pages: in the iteration's order, crossing chunks (16 rows each). */
    tecs_entity_t all[128], got[128];
    tecs_query_t *q = TECS_QUERY(w, { .comp = f.pos, .access = TECS_READ });
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, all, 128);
    tecs_query_free(q);
    CHECK_EQ(n, f.npos);
    int32_t offsets[] = { 0, 1, 15, 16, 17, 20, 40, 41, 42, 1000 };
    for (size_t k = 0; k < sizeof offsets / sizeof offsets[0]; k++) {
        char args[64];
        snprintf(args, sizeof args, "q=Position&offset=%d&limit=10", (int)offsets[k]);
        j = ask(w, false, "GET", "/api/query", args, NULL, 200);
        CHECK_EQ(int_at(j, "total"), n);
        CHECK_EQ(int_at(j, "offset"), offsets[k]);
        int32_t m = page_ids(j, got, 128), want = n - offsets[k];
        want = want < 0 ? 0 : want > 10 ? 10 : want;
        CHECK_EQ(m, want);
        for (int32_t i = 0; i < m; i++)
            CHECK_EQ(got[i], all[offsets[k] + i]);
        json_decref(j);
    }
    TW_CHECK(w);
    ifix_free(w, &f);
}

/* Query text that does not parse, or names what the world has not, is a
** 400 bad_query whose message says which and where. */
TEST(inspect_api_query_errors)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    struct { const char *q, *part; } bad[] = {
        { "q=Nope", "'Nope'" }, { "q=Position,Nope", "character 10" },
        { "q=Position Position", "twice" }, { "q=Position,!Position", "twice" },
        { "q=Pos$ition", "character 4" }, { "q=!", "character 2" }, { "q=?,Position", NULL },
        { "q=Position;Velocity", NULL }, { "q=!!Position", NULL }, { "q=Position!", NULL },
        { "q=position", "'position'" }, { "q=\xff", NULL }, { "q=Posit\tion", NULL },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        error_is(ask(w, false, "GET", "/api/query", bad[i].q, NULL, 400), "bad_query",
                 bad[i].part);
    get_fails(w, "/api/query", "q=Position&offset=-1", 400, "bad_argument");
    get_fails(w, "/api/query", "q=Position&limit=x", 400, "bad_argument");
    /* At most TECS_MAX_TERMS terms. */
    char text[1024] = "q=";
    for (int i = 0; i < TECS_MAX_TERMS + 1; i++) {
        char name[16];
        snprintf(name, sizeof name, "T%d", i);
        CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = name }) != 0);
        strcat(text, i ? ",?" : "?");
        strcat(text, name);
    }
    error_is(ask(w, false, "GET", "/api/query", text, NULL, 400), "bad_query", "terms");
    TW_CHECK(w);
    ifix_free(w, &f);
}

TEST(inspect_api_systems_and_resources)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    json_t *j = ask(w, false, "GET", "/api/systems", NULL, NULL, 200);
    CHECK_EQ(int_at(j, "frame"), 1);
    json_t *list = json_object_get(j, "systems");
    CHECK_EQ((long long)json_array_size(list), 2);
    json_t *m = json_array_get(list, 0), *c = json_array_get(list, 1);
    CHECK_EQ(int_at(m, "id"), f.move);
    CHECK(strcmp(json_string_value(json_object_get(m, "name")), "move") == 0);
    CHECK(strcmp(json_string_value(json_object_get(m, "phase")), "on_update") == 0);
    CHECK(strcmp(json_string_value(json_object_get(c, "phase")), "on_store") == 0);
    CHECK(json_is_true(json_object_get(m, "enabled")));
    CHECK_EQ(int_at(m, "runs"), 1);
    CHECK_EQ(int_at(m, "entities_last"), 1);
    CHECK(num_at(m, "time_last") >= 0 && num_at(m, "time_total") >= num_at(m, "time_last"));
    json_decref(j);
    j = ask(w, false, "GET", "/api/resources", NULL, NULL, 200);
    list = json_object_get(j, "resources");
    CHECK_EQ((long long)json_array_size(list), 1);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(list, 0), "name")),
                 "Gravity") == 0);
    CHECK(num_at(json_object_get(json_array_get(list, 0), "value"), "g") == -9.5);
    json_decref(j);
    ifix_free(w, &f);
}

/* POST /api/set body for entity e. */
static const char *set_body(tecs_entity_t e, const char *comp, const char *field,
                            const char *value)
{
    static char b[512];
    snprintf(b, sizeof b, "{\"id\": \"%s\", \"component\": \"%s\", \"field\": \"%s\", "
             "\"value\": %s}", id_text(e), comp, field, value);
    return b;
}

TEST(inspect_api_set)
{
    live_strings = 0;
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    /* Writes off: refused, nothing changed. */
    Position before = *(const Position *)tecs_get(w, f.e1, f.pos);
    error_is(ask(w, false, "POST", "/api/set", NULL, set_body(f.e1, "Position", "x", "9"),  403),
             "read_only", NULL);
    CHECK(((const Position *)tecs_get(w, f.e1, f.pos))->x == before.x);

    json_t *j = ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Position", "x", "9.25"), 
                    200);
    CHECK(is_id(json_object_get(j, "id"), f.e1));
    CHECK(num_at(json_object_get(json_object_get(j, "components"), "Position"), "x") == 9.25);
    json_decref(j);
    const Position *p = tecs_get(w, f.e1, f.pos);
    CHECK(p->x == 9.25f && p->y == before.y);
    /* Nested, array and [s, g] ids. */
    char body[256];
    snprintf(body, sizeof body, "{\"id\": [%lu, %lu], \"component\": \"Body\", \"field\": "
             "\"at.y\", \"value\": -1}", (unsigned long)TECS_ENTITY_INDEX(f.e1),
             (unsigned long)TECS_ENTITY_GENERATION(f.e1));
    json_decref(ask(w, true, "POST", "/api/set", NULL, body, 200));
    json_decref(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Body", "v[1]", "-60"), 
                    200));
    const Body *b = tecs_get(w, f.e1, f.body);
    CHECK(b->at.y == -1 && b->at.x == 3 && b->v[0] == 5 && b->v[1] == -60 && b->v[2] == 7);
    /* A string: the world's copy changes, no string leaks. */
    long strings = live_strings;
    json_decref(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Named", "name",
                                                         "\"second \\u00e9\""),  200));
    CHECK(strcmp(((const INamed *)tecs_get(w, f.e1, f.named))->name, "second \xc3\xa9") == 0);
    CHECK_EQ(live_strings, strings);
    json_decref(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Named", "name", "null"), 
                    200));
    CHECK(((const INamed *)tecs_get(w, f.e1, f.named))->name == NULL);
    /* A disabled enableable component is still the entity's to set. */
    json_decref(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Flag", "on", "8"),  200));
    CHECK_EQ(*(const uint32_t *)tecs_get(w, f.e1, f.flag), 8);
    CHECK(!tecs_is_enabled(w, f.e1, f.flag));
    json_decref(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Score", "v", "-2.5"), 
                    200));
    CHECK(*(const double *)tecs_get(w, f.e1, f.score) == -2.5);
    TW_CHECK(w);
    ifix_free(w, &f);
    CHECK_EQ(live_strings, 0);
}

/* Every refusal of a set changes nothing. */
TEST(inspect_api_set_refused)
{
    live_strings = 0;
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    Body b0 = *(const Body *)tecs_get(w, f.e1, f.body);
    tecs_entity_t dead = tecs_new(w);
    tecs_destroy(w, dead);
    const char *rows[][4] = {
        { "Body", "mass", "\"heavy\"", "bad_body" }, { "Body", "v[0]", "1.5", "bad_body" },
        { "Body", "v[0]", "99999999999", "bad_body" },
        { "Body", "at", "{\"x\": 1, \"q\": 2}", "bad_body" }, { "Body", "", "1", "bad_body" },
        { "Body", "nope", "1", "no_field" }, { "Body", "at.z", "1", "no_field" },
        { "Body", "v[3]", "1", "no_field" }, { "Body", "v[-1]", "1", "no_field" },
        { "Body", "v[]", "1", "no_field" }, { "Body", "mass.x", "1", "no_field" },
        { "Body", "at..x", "1", "no_field" }, { "Body", "v[1]x", "1", "no_field" },
        { "Blob", "b", "1", "no_field" }, { "Enemy", "x", "1", "no_field" },
        { "Nope", "x", "1", "no_component" }, { "Owes", "amount", "1", "no_component" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *code = rows[i][3];
        int status = strcmp(code, "bad_body") == 0 ? 400 : 404;
        error_is(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, rows[i][0], rows[i][1],
                                                           rows[i][2]),  status), code, NULL);
    }
    const char *raw[] = { "", "[]", "{", "{\"id\": \"1.1\"}", "\"x\"", "{\"id\": \"x\", "
                          "\"component\": \"Body\", \"field\": \"mass\", \"value\": 1}",
                          "{\"id\": [1], \"component\": \"Body\", \"field\": \"mass\", "
                          "\"value\": 1}", "{\"id\": [1, -1], \"component\": \"Body\", "
                          "\"field\": \"mass\", \"value\": 1}", "{\"a\": 1, \"a\": 2}", NULL };
    for (int i = 0; raw[i]; i++)
        error_is(ask(w, true, "POST", "/api/set", NULL, raw[i], 400), "bad_body", NULL);
    error_is(ask(w, true, "POST", "/api/set", NULL, NULL, 400), "bad_body", NULL);
    error_is(ask(w, true, "POST", "/api/set", NULL, set_body(f.e2, "Body", "mass", "1"), 404),
             "no_component", NULL);
    error_is(ask(w, true, "POST", "/api/set", NULL, set_body(f.inst, "Velocity", "x", "1"), 404),
             "no_component", NULL);
    error_is(ask(w, true, "POST", "/api/set", NULL, set_body(dead, "Body", "mass", "1"), 404),
             "dead", NULL);
    /* The unique index refuses a key another entity holds: 409, unchanged. */
    error_is(ask(w, true, "POST", "/api/set", NULL, set_body(f.e1, "Flag", "on", "100"), 409),
             "refused", NULL);
    CHECK_EQ(*(const uint32_t *)tecs_get(w, f.e1, f.flag), 7);
    const Body *b = tecs_get(w, f.e1, f.body);
    CHECK(memcmp(b, &b0, sizeof b0) == 0);
    TW_CHECK(w);
    ifix_free(w, &f);
    CHECK_EQ(live_strings, 0);
}

TEST(inspect_api_system_and_destroy)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    error_is(ask(w, false, "POST", "/api/system", NULL, "{\"name\": \"move\", \"enabled\": false}",
                 403), "read_only", NULL);
    CHECK(tecs_system_enabled(w, f.move));
    json_t *j = ask(w, true, "POST", "/api/system", NULL,
                    "{\"name\": \"move\", \"enabled\": false}", 200);
    CHECK_EQ(int_at(j, "id"), f.move);
    CHECK(strcmp(json_string_value(json_object_get(j, "name")), "move") == 0);
    CHECK(json_is_false(json_object_get(j, "enabled")));
    json_decref(j);
    CHECK(!tecs_system_enabled(w, f.move));
    char body[128];
    snprintf(body, sizeof body, "{\"id\": %lu, \"enabled\": true}", (unsigned long)f.move);
    json_decref(ask(w, true, "POST", "/api/system", NULL, body, 200));
    CHECK(tecs_system_enabled(w, f.move));
    error_is(ask(w, true, "POST", "/api/system", NULL, "{\"name\": \"nope\", \"enabled\": true}",
                 404), "no_system", NULL);
    error_is(ask(w, true, "POST", "/api/system", NULL, "{\"id\": 999, \"enabled\": true}", 404),
             "no_system", NULL);
    error_is(ask(w, true, "POST", "/api/system", NULL, "{\"id\": -1, \"enabled\": true}", 404),
             "no_system", NULL);
    const char *bad[] = { "{\"name\": \"move\"}", "{\"name\": \"move\", \"enabled\": 1}",
                          "{\"enabled\": true}", "{\"name\": 3, \"enabled\": true}",
                          "{\"id\": \"1\", \"enabled\": true}", "7", NULL };
    for (int i = 0; bad[i]; i++)
        error_is(ask(w, true, "POST", "/api/system", NULL, bad[i], 400), "bad_body", NULL);
    CHECK(tecs_system_enabled(w, f.move));

    snprintf(body, sizeof body, "{\"id\": \"%s\"}", id_text(f.e2));
    error_is(ask(w, false, "POST", "/api/destroy", NULL, body, 403), "read_only", NULL);
    CHECK(tecs_is_alive(w, f.e2));
    j = ask(w, true, "POST", "/api/destroy", NULL, body, 200);
    CHECK(is_id(json_object_get(j, "destroyed"), f.e2));
    json_decref(j);
    CHECK(!tecs_is_alive(w, f.e2));
    error_is(ask(w, true, "POST", "/api/destroy", NULL, body, 404), "dead", NULL);
    /* A base with instances is refused by IsA's cleanup: 409, alive. */
    snprintf(body, sizeof body, "{\"id\": \"%s\"}", id_text(f.base));
    error_is(ask(w, true, "POST", "/api/destroy", NULL, body, 409), "refused", NULL);
    CHECK(tecs_is_alive(w, f.base));
    error_is(ask(w, true, "POST", "/api/destroy", NULL, "{\"id\": \"0\"}", 400), "bad_body",
             NULL);
    error_is(ask(w, true, "POST", "/api/destroy", NULL, "{}", 400), "bad_body", NULL);
    TW_CHECK(w);
    ifix_free(w, &f);
}

/* Paths, methods, arguments and the error text. */
TEST(inspect_api_routing_errors)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    get_fails(w, "/api/nope", NULL, 404, "not_found");
    get_fails(w, "/api", NULL, 404, "not_found");
    get_fails(w, "/api/world/", NULL, 404, "not_found");
    get_fails(w, "", NULL, 404, "not_found");
    get_fails(w, "/API/WORLD", NULL, 404, "not_found");
    error_is(ask(w, true, "POST", "/api/world", NULL, "{}", 405), "method", NULL);
    error_is(ask(w, true, "PUT", "/api/world", NULL, NULL, 405), "method", NULL);
    error_is(ask(w, true, "get", "/api/world", NULL, NULL, 405), "method", NULL);
    error_is(ask(w, true, "GET", "/api/set", NULL, NULL, 405), "method", NULL);
    error_is(ask(w, true, "DELETE", "/api/destroy", NULL, NULL, 405), "method", NULL);
    const char *pages[] = { "offset=-1", "limit=-1", "offset=", "limit=", "offset=1e3",
                            "offset=2147483648", "offset=99999999999999999999", "limit=101",
                            "limit=1.0", "offset=+1", "offset=0x10", "limit= 5", NULL };
    for (int i = 0; pages[i]; i++) {
        get_fails(w, "/api/archetypes", pages[i], 400, "bad_argument");
        get_fails(w, "/api/query", pages[i], 400, "bad_argument");
        get_fails(w, "/api/tree", pages[i], 400, "bad_argument");
    }
    json_decref(ask(w, false, "GET", "/api/archetypes", "offset=2147483647&limit=100", NULL, 200));
    json_decref(ask(w, false, "GET", "/api/archetypes", "offset=007&limit=0100", NULL, 200));
    get_fails(w, "/api/world", "a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11&l=12&m=13&n=14&"
              "o=15&p=16&q=17", 400, "bad_argument");
    json_decref(ask(w, false, "GET", "/api/world", "token=abc&unknown=1", NULL, 200));

    /* A NULL path or method is no endpoint; a NULL world or request answers
    ** 500 with a text. */
    char *out = NULL;
    tecs__inspect_cfg cfg = { .max_page = PAGE };
    tecs__inspect_req req = { NULL, NULL, 0, NULL, NULL, 0 };
    CHECK_EQ(tecs__inspect_answer(w, &cfg, &req, &out), 404);
    free(out);
    req.path = "/api/world";
    CHECK_EQ(tecs__inspect_answer(w, &cfg, &req, &out), 405);
    free(out);
    CHECK_EQ(tecs__inspect_answer(NULL, &cfg, &req, &out), 500);
    CHECK(out != NULL);
    free(out);
    req.method = "GET";
    CHECK_EQ(tecs__inspect_answer(w, NULL, &req, &out), 200);  /* the defaults */
    free(out);

    char *e = tecs__inspect_error("dead", "entity \"1.1\" is not alive");
    json_t *j = json_loads(e, 0, NULL);
    CHECK(strcmp(json_string_value(json_object_get(j, "error")), "dead") == 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "message")),
                 "entity \"1.1\" is not alive") == 0);
    json_decref(j);
    free(e);
    e = tecs__inspect_error("internal", "\xff not UTF-8");
    CHECK(e != NULL && strstr(e, "internal") != NULL);
    free(e);
    TW_CHECK(w);
    ifix_free(w, &f);
}

/* No read changes the world: the same answers twice, nothing made. */
TEST(inspect_api_reads_change_nothing)
{
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    int32_t comps = tecs_world_component_count(w), archs = tecs_world_archetype_count(w);
    int32_t ents = tecs_world_entity_count(w);
    const char *paths[] = { "/api/world", "/api/components", "/api/archetypes", "/api/tree",
                            "/api/query", "/api/systems", "/api/resources", NULL };
    for (int i = 0; paths[i]; i++)
        json_decref(ask(w, true, "GET", paths[i], "q=Position", NULL, 200));
    char args[64];
    snprintf(args, sizeof args, "id=%s", id_text(f.e1));
    json_decref(ask(w, true, "GET", "/api/entity", args, NULL, 200));
    CHECK_EQ(tecs_world_component_count(w), comps);
    CHECK_EQ(tecs_world_archetype_count(w), archs);
    CHECK_EQ(tecs_world_entity_count(w), ents);
    /* A system's query reads no write from the inspector's queries. */
    TW_CHECK(w);
    ifix_free(w, &f);
}

/* jansson's allocations, the k-th one failing (0: none). */
static long jansson_calls, jansson_fail_at;

static void *failing_malloc(size_t n)
{
    if (++jansson_calls == jansson_fail_at)
        return NULL;
    return malloc(n);
}

/* The answer to one request while jansson's k-th allocation fails. */
static int answer_failing(tecs_world_t *w, const char *method, const char *path,
                          const char *key, const char *value, const char *body, long k,
                          char **out)
{
    tecs__inspect_arg a[1] = { { key, value } };
    tecs__inspect_cfg cfg = { .writes = true, .max_page = PAGE };
    tecs__inspect_req req = { method, path, key ? 1 : 0, a, body, body ? strlen(body) : 0 };
    jansson_calls = 0;
    jansson_fail_at = k;
    json_set_alloc_funcs(failing_malloc, free);
    int status = tecs__inspect_answer(w, &cfg, &req, out);
    json_set_alloc_funcs(malloc, free);
    return status;
}

/* Out of memory in jansson at every allocation of an answer: a 500 (with
** a text, or none when even the error's could not be made) or the answer,
** never a crash or a leak (valgrind and the sanitizers check that); a set
** that fails before tecs_set leaves the value as it was. */
TEST(inspect_api_out_of_memory)
{
    live_strings = 0;
    tw_alloc al = { 0 };
    ifix f;
    tecs_world_t *w = ifix_new(&al, &f);
    char id[32];
    snprintf(id, sizeof id, "%s", id_text(f.e1));
    struct { const char *method, *path, *key, *value, *body; } reqs[] = {
        { "GET", "/api/world", NULL, NULL, NULL },
        { "GET", "/api/components", NULL, NULL, NULL },
        { "GET", "/api/archetypes", NULL, NULL, NULL },
        { "GET", "/api/entity", "id", id, NULL },
        { "GET", "/api/tree", NULL, NULL, NULL },
        { "GET", "/api/query", "q", "Position ?Named ?Body ?Blob", NULL },
        { "GET", "/api/systems", NULL, NULL, NULL },
        { "GET", "/api/resources", NULL, NULL, NULL },
        { "GET", "/api/nope", NULL, NULL, NULL },
        { "POST", "/api/system", NULL, NULL, "{\"name\": \"count\", \"enabled\": true}" },
        { "POST", "/api/set", NULL, NULL, set_body(f.e1, "Named", "name", "\"oom\"") },
    };
    for (size_t r = 0; r < sizeof reqs / sizeof reqs[0]; r++) {
        for (long k = 1;; k++) {
            char *out = NULL;
            int status = answer_failing(w, reqs[r].method, reqs[r].path, reqs[r].key,
                                        reqs[r].value, reqs[r].body, k, &out);
            bool done = jansson_calls < k;          /* no allocation failed */
            if (!done && status != 500 && status != 404 && status != 400)
                fprintf(stderr, "  %s %s, allocation %ld failed: %d %s\n", reqs[r].method,
                        reqs[r].path, k, status, out ? out : "");
            if (!done)
                CHECK(status == 500 || status == 404 || status == 400);
            CHECK(out != NULL || status == 500);
            free(out);
            TW_CHECK(w);
            if (strcmp(reqs[r].path, "/api/set") == 0) {
                const char *name = ((const INamed *)tecs_get(w, f.e1, f.named))->name;
                CHECK(strcmp(name, "first") == 0 || strcmp(name, "oom") == 0);
                CHECK_ERR(tecs_set(w, f.e1, f.named, &(INamed){ "first" }), TECS_OK);
            }
            if (done) {
                CHECK_EQ(status, strcmp(reqs[r].path, "/api/nope") == 0 ? 404 : 200);
                break;
            }
        }
    }
    ifix_free(w, &f);
    CHECK_EQ(live_strings, 0);
}
