/*
** api.c — the inspector's JSON API: one request answered from the world.
**
** It knows no HTTP: server.c hands it a method, a decoded path, decoded
** arguments and a body, and sends back the status and the text it makes.
** /work/notes/inspect-api.md (docs/inspector.md once published) is the
** contract: every endpoint, argument, shape and error status. It is built
** on the public API only, like the JSON module whose value writer and
** reader it uses for component values.
**
**     request ──► route ──► endpoint ──► json_t answer ──► dump (text)
**                   │           │
**                   └── 404 / 405 / 403     └── 400 / 404 / 409 / 500
**                                               (call.code, call.msg)
**
** Rules it keeps:
**   - Every argument is checked before the world is read: ids are "S.G"
**     with both parts decimal and in range, counts are whole decimals;
**     anything else is a 400, a dead or stale id a 404. No input crashes
**     it, leaks, or changes the world but a write that is allowed.
**   - Reads read: queries are TECS_READ, the relation add-on's ChildOf and
**     IsA are looked up by name, never made (tecs_childof would register
**     it), and every query made is freed on every path.
**   - A page is bounded: at most cfg->max_page entities or archetypes; a
**     query's page skips whole iteration steps (it.count rows at once).
**   - A write changes nothing unless it succeeds: a set builds the new
**     value in a stage (export, replace the field, import_value) and hands
**     it to tecs_set, whose copy hook copies its strings; the stage's are
**     freed after.
**   - Out of memory anywhere gives a 500 and frees what was built.
*/
#include "internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tinyecs/json.h"
#include "tinyecs/meta.h"
#include "tinyecs/relation.h"
#include "tinyecs/system.h"
#include "tinyecs/resource.h"

/* The page size when the configuration gives none. */
#define DEFAULT_PAGE 200

/* One request being answered. */
typedef struct call {
    tecs_world_t *w;
    const tecs__inspect_cfg *cfg;
    const tecs__inspect_req *req;
    int32_t max_page;           /* cfg->max_page, or DEFAULT_PAGE             */
    int status;                 /* 0 until an error is set                    */
    const char *code;           /* the error's code                           */
    char msg[256];              /* the error's message                        */
    bool oom;                   /* a json_t could not be made                 */
    tecs_comp_t ids[TECS_MAX_COMPONENTS]; /* the registered components        */
    int32_t nids;
    tecs_comp_t childof, isa;   /* 0 when the world has none                  */
} call;

static char *dump(const json_t *j);

/* Set the error (the first one wins) and return NULL. */
static json_t *refuse(call *c, int status, const char *code, const char *fmt, ...)
{
    if (c->status == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->msg, sizeof c->msg, fmt, ap);
        va_end(ap);
        c->status = status;
        c->code = code;
    }
    return NULL;
}

/* ==================================================================== */
/* Building answers                                                     */
/* ==================================================================== */

/* o[key] = v (v's reference taken); a failure marks the call out of
** memory. */
static void set(call *c, json_t *o, const char *key, json_t *v)
{
    if (json_object_set_new(o, key, v) != 0)
        c->oom = true;
}

/* Append v (its reference taken) to array a. */
static void push(call *c, json_t *a, json_t *v)
{
    if (json_array_append_new(a, v) != 0)
        c->oom = true;
}

static json_t *id_json(tecs_entity_t e)
{
    if (e == 0)
        return json_null();
    return json_pack("[II]", (json_int_t)TECS_ENTITY_INDEX(e),
                     (json_int_t)TECS_ENTITY_GENERATION(e));
}

/* A relation, or one of the tags that follow pairs (ChildOf's level tags,
** IsA's base tags): not a component an entity is shown to have. */
static bool is_relation(const call *c, tecs_comp_t comp)
{
    return tecs_is_relation(c->w, comp) || tecs_relation_level(c->w, comp) > 0 ||
           tecs_relation_base(c->w, comp) != 0;
}

/* The bytes of an undescribed value as {"size": N, "bytes": "hex"}. */
static json_t *bytes_json(call *c, const unsigned char *v, size_t size)
{
    static const char digits[] = "0123456789abcdef";
    char *hex = malloc(2 * size + 1);
    if (hex == NULL) {
        c->oom = true;
        return NULL;
    }
    for (size_t i = 0; i < size; i++) {
        hex[2 * i] = digits[v[i] >> 4];
        hex[2 * i + 1] = digits[v[i] & 15];
    }
    hex[2 * size] = '\0';
    json_t *o = json_object();
    set(c, o, "size", json_integer((json_int_t)size));
    set(c, o, "bytes", json_string(hex));
    free(hex);
    return o;
}

/* The value v of comp as the contract's VALUE: the JSON module's text for
** a described component, true for a tag, the bytes otherwise. NULL with
** the call's error (or oom) when it cannot be written. */
static json_t *value_json(call *c, tecs_comp_t comp, const void *v)
{
    size_t size = tecs_component_size(c->w, comp);
    if (size == 0)
        return json_true();
    if (v == NULL)
        return json_null();
    if (tecs_component_fields(c->w, comp, NULL) == NULL)
        return bytes_json(c, v, size);
    tecs_json_error_t err;
    char *text = tecs_json_export_value(c->w, comp, v, &err);
    if (text == NULL) {
        if (err.code == TECS_ENOMEM)
            c->oom = true;
        return refuse(c, 500, "internal", "component '%s': %s",
                      tecs_component_name(c->w, comp), err.text);
    }
    json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
    tecs_json_free(text);
    if (j == NULL)
        c->oom = true;
    return j;
}

/* o[name of comp] = its value on entity e (its own, or read through IsA). */
static void put_value(call *c, json_t *o, tecs_entity_t e, tecs_comp_t comp)
{
    const void *v = tecs_component_size(c->w, comp) ? tecs_get(c->w, e, comp) : NULL;
    json_t *j = value_json(c, comp, v);
    if (j)
        set(c, o, tecs_component_name(c->w, comp), j);
}

/* ==================================================================== */
/* Arguments                                                            */
/* ==================================================================== */

/* The value of argument key, or NULL when absent. */
static const char *arg(const call *c, const char *key)
{
    for (int32_t i = 0; i < c->req->nargs; i++)
        if (c->req->args[i].key && strcmp(c->req->args[i].key, key) == 0)
            return c->req->args[i].value ? c->req->args[i].value : "";
    return NULL;
}

/* A whole decimal number 0..max (digits only, at least one). */
static bool parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > max)
            return false;
    }
    *out = v;
    return true;
}

/* An entity id "S.G" (or "0", none); false if malformed. */
static bool parse_id_text(const char *s, tecs_entity_t *out)
{
    uint64_t slot, gen;
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return true;
    }
    const char *dot = strchr(s, '.');
    if (dot == NULL || !parse_uint(s, (size_t)(dot - s), UINT32_MAX, &slot) ||
        !parse_uint(dot + 1, strlen(dot + 1), UINT32_MAX, &gen))
        return false;
    *out = gen << 32 | slot;
    return true;
}

/* An entity id of a body: "S.G" or [s, g]. */
static bool parse_id_json(json_t *j, tecs_entity_t *out)
{
    if (json_is_string(j))
        return strlen(json_string_value(j)) == json_string_length(j) &&
               parse_id_text(json_string_value(j), out);
    if (!json_is_array(j) || json_array_size(j) != 2)
        return false;
    json_t *s = json_array_get(j, 0), *g = json_array_get(j, 1);
    if (!json_is_integer(s) || !json_is_integer(g))
        return false;
    json_int_t si = json_integer_value(s), gi = json_integer_value(g);
    if (si < 0 || si > (json_int_t)UINT32_MAX || gi < 0 || gi > (json_int_t)UINT32_MAX)
        return false;
    *out = (tecs_entity_t)gi << 32 | (tecs_entity_t)si;
    return true;
}

/* Argument key as an entity id: *out 0 when absent or "0". */
static bool id_arg(call *c, const char *key, tecs_entity_t *out)
{
    const char *s = arg(c, key);
    *out = 0;
    if (s && !parse_id_text(s, out)) {
        refuse(c, 400, "bad_argument", "'%s' must be an entity id SLOT.GEN (decimal "
               "numbers of at most 4294967295)", key);
        return false;
    }
    return true;
}

/* A live entity, else the call's 404. */
static bool alive(call *c, tecs_entity_t e)
{
    if (tecs_is_alive(c->w, e))
        return true;
    refuse(c, 404, "dead", "entity %lu.%lu is not alive", (unsigned long)TECS_ENTITY_INDEX(e),
           (unsigned long)TECS_ENTITY_GENERATION(e));
    return false;
}

/* offset and limit: whole decimals, limit at most the page. */
static bool page_args(call *c, int32_t *offset, int32_t *limit)
{
    const char *o = arg(c, "offset"), *l = arg(c, "limit");
    uint64_t v;
    *offset = 0;
    *limit = c->max_page;
    if (o) {
        if (!parse_uint(o, strlen(o), INT32_MAX, &v)) {
            refuse(c, 400, "bad_argument", "'offset' must be a whole number 0..%ld",
                   (long)INT32_MAX);
            return false;
        }
        *offset = (int32_t)v;
    }
    if (l) {
        if (!parse_uint(l, strlen(l), (uint64_t)c->max_page, &v)) {
            refuse(c, 400, "bad_argument", "'limit' must be a whole number 0..%ld",
                   (long)c->max_page);
            return false;
        }
        *limit = (int32_t)v;
    }
    return true;
}

/* The registered component named name (exactly), or 0. */
static tecs_comp_t find_comp(const call *c, const char *name, size_t len)
{
    for (int32_t i = 0; i < c->nids; i++) {
        const char *n = tecs_component_name(c->w, c->ids[i]);
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return c->ids[i];
    }
    return 0;
}

/* The {"total", "offset", key: []} of a page. */
static json_t *page_json(call *c, int32_t total, int32_t offset, const char *key, json_t **list)
{
    json_t *o = json_object();
    set(c, o, "total", json_integer(total));
    set(c, o, "offset", json_integer(offset));
    *list = json_array();
    json_incref(*list);
    set(c, o, key, *list);
    return o;
}

/* ==================================================================== */
/* GET endpoints                                                        */
/* ==================================================================== */

static json_t *get_world(call *c)
{
    json_t *o = json_object();
    set(c, o, "entities", json_integer(tecs_world_entity_count(c->w)));
    set(c, o, "components", json_integer(tecs_world_component_count(c->w)));
    set(c, o, "archetypes", json_integer(tecs_world_archetype_count(c->w)));
    set(c, o, "memory", json_integer((json_int_t)tecs_world_memory(c->w)));
    set(c, o, "systems", json_integer(tecs_system_count(c->w)));
    set(c, o, "frame", json_integer(tecs_world_frame_count(c->w)));
    set(c, o, "resources", json_integer(tecs_resource_count(c->w)));
    set(c, o, "writes", json_boolean(c->cfg->writes));
    set(c, o, "relations", json_true());
    return o;
}

static bool has_resource(const call *c, tecs_comp_t comp)
{
    return tecs_resource_has(c->w, comp);
}

/* The fields of a described component, as the contract lists them. */
static json_t *fields_json(call *c, tecs_comp_t comp)
{
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(c->w, comp, &n);
    json_t *a = json_array();
    for (int32_t i = 0; i < n; i++) {
        json_t *o = json_object();
        set(c, o, "name", json_string(f[i].name));
        set(c, o, "type", json_string(tecs_type_name(f[i].type)));
        set(c, o, "offset", json_integer((json_int_t)f[i].offset));
        set(c, o, "count", json_integer(f[i].count));
        if (f[i].type == TECS_TYPE_STRUCT)
            set(c, o, "struct", json_string(tecs_component_name(c->w, f[i].comp)));
        push(c, a, o);
    }
    return a;
}

static json_t *get_components(call *c)
{
    json_t *o = json_object(), *a = json_array();
    json_incref(a);
    set(c, o, "components", a);
    for (int32_t i = 0; i < c->nids && !c->oom; i++) {
        tecs_comp_t id = c->ids[i];
        json_t *x = json_object();
        set(c, x, "id", json_integer(id));
        set(c, x, "name", json_string(tecs_component_name(c->w, id)));
        set(c, x, "size", json_integer((json_int_t)tecs_component_size(c->w, id)));
        set(c, x, "storage", json_string(tecs_component_storage(c->w, id) ==
                                         TECS_STORAGE_SPARSE ? "sparse" : "table"));
        set(c, x, "enableable", json_boolean(tecs_component_enableable(c->w, id)));
        set(c, x, "hidden", json_boolean(tecs_component_hidden(c->w, id)));
        set(c, x, "inherit", json_boolean(tecs_component_inherit(c->w, id)));
        set(c, x, "relation", json_boolean(tecs_is_relation(c->w, id)));
        set(c, x, "resource", json_boolean(has_resource(c, id)));
        set(c, x, "fields", fields_json(c, id));
        push(c, a, x);
    }
    json_decref(a);
    return o;
}

/* The names of n components. */
static json_t *names_json(call *c, const tecs_comp_t *ids, int32_t n)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < n; i++)
        push(c, a, json_string(tecs_component_name(c->w, ids[i])));
    return a;
}

static json_t *get_archetypes(call *c)
{
    int32_t offset, limit, total = tecs_world_archetype_count(c->w);
    if (!page_args(c, &offset, &limit))
        return NULL;
    json_t *list, *o = page_json(c, total, offset, "archetypes", &list);
    for (int32_t i = offset; i < total && i - offset < limit && !c->oom; i++) {
        tecs_archetype_t *a = tecs_world_archetype(c->w, i);
        const tecs_comp_t *ids;
        int32_t n = tecs_archetype_components(a, &ids);
        json_t *x = json_object();
        set(c, x, "id", json_integer(i));
        set(c, x, "components", names_json(c, ids, n));
        set(c, x, "entities", json_integer(tecs_archetype_entity_count(a)));
        set(c, x, "chunks", json_integer(tecs_archetype_chunk_count(a)));
        push(c, list, x);
    }
    json_decref(list);
    return o;
}

/* The parent of e (0 for a root or without the relation add-on). */
static tecs_entity_t parent_of(const call *c, tecs_entity_t e)
{
    return c->childof ? tecs_pair_target(c->w, e, c->childof, 0) : 0;
}

/* The children of e, counted; the first skip are passed over and the next
** up to room go to out (may be NULL). */
static int32_t children_of(const call *c, tecs_entity_t e, int32_t skip, tecs_entity_t *out,
                           int32_t room)
{
    int32_t n = 0;
    if (c->childof == 0)
        return 0;
    tecs_walk_t walk = tecs_sources(c->w, e, c->childof);
    for (; tecs_walk_next(&walk); n++)
        if (out && n >= skip && n - skip < room)
            out[n - skip] = walk.entity;
    return n;
}

/* The pairs of e but ChildOf's, as the contract lists them. */
static json_t *pairs_json(call *c, tecs_entity_t e)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < c->nids && !c->oom; i++) {
        tecs_comp_t rel = c->ids[i];
        if (!tecs_is_relation(c->w, rel) || rel == c->childof)
            continue;
        tecs_entity_t t;
        for (int32_t k = 0; (t = tecs_pair_target(c->w, e, rel, k)) != 0; k++) {
            json_t *p = json_object();
            set(c, p, "relation", json_string(tecs_component_name(c->w, rel)));
            set(c, p, "target", id_json(t));
            if (tecs_component_size(c->w, rel) > 0) {
                json_t *v = value_json(c, rel, tecs_pair_get(c->w, e, rel, t));
                if (v)
                    set(c, p, "value", v);
            }
            push(c, a, p);
        }
    }
    return a;
}

/* True if e inherits through IsA (so some values may be its base's). */
static bool inherits(const call *c, tecs_entity_t e)
{
    return c->isa && tecs_pair_target(c->w, e, c->isa, 0) != 0;
}

/* Entity e as GET /api/entity answers it. */
static json_t *entity_json(call *c, tecs_entity_t e)
{
    json_t *o = json_object(), *comps = json_object(), *enabled = json_object();
    json_t *inherited = json_object();
    tecs_archetype_t *arch = tecs_entity_archetype(c->w, e);
    int32_t ai = 0;
    while (ai < tecs_world_archetype_count(c->w) && tecs_world_archetype(c->w, ai) != arch)
        ai++;
    set(c, o, "id", id_json(e));
    set(c, o, "archetype", json_integer(ai));
    bool base = inherits(c, e);
    for (int32_t i = 0; i < c->nids && !c->oom && !c->status; i++) {
        tecs_comp_t comp = c->ids[i];
        if (is_relation(c, comp))
            continue;
        if (tecs_has(c->w, e, comp)) {
            put_value(c, comps, e, comp);
            if (tecs_component_enableable(c->w, comp))
                set(c, enabled, tecs_component_name(c->w, comp),
                    json_boolean(tecs_is_enabled(c->w, e, comp)));
        } else if (base && tecs_component_size(c->w, comp) > 0 &&
                   tecs_get(c->w, e, comp) != NULL) {
            put_value(c, inherited, e, comp);
        }
    }
    set(c, o, "components", comps);
    set(c, o, "enabled", enabled);
    set(c, o, "pairs", pairs_json(c, e));
    set(c, o, "parent", id_json(parent_of(c, e)));
    set(c, o, "children", json_integer(children_of(c, e, 0, NULL, 0)));
    set(c, o, "inherited", inherited);
    return o;
}

static json_t *get_entity(call *c)
{
    tecs_entity_t e;
    if (!id_arg(c, "id", &e))
        return NULL;
    if (e == 0)
        return refuse(c, 400, "bad_argument", "'id' is required: an entity id SLOT.GEN");
    if (!alive(c, e))
        return NULL;
    return entity_json(c, e);
}

/* The names of the components e has (relations and their tags left out). */
static json_t *own_names(call *c, tecs_entity_t e)
{
    json_t *a = json_array();
    for (int32_t i = 0; i < c->nids; i++)
        if (!is_relation(c, c->ids[i]) && tecs_has(c->w, e, c->ids[i]))
            push(c, a, json_string(tecs_component_name(c->w, c->ids[i])));
    return a;
}

/* One entry of a tree's page. */
static json_t *tree_entry(call *c, tecs_entity_t e)
{
    json_t *x = json_object();
    set(c, x, "id", id_json(e));
    set(c, x, "children", json_integer(children_of(c, e, 0, NULL, 0)));
    set(c, x, "components", own_names(c, e));
    return x;
}

/* Iterate q's matches: the rows offset.. (whole steps skipped), up to
** limit, each handed to fn; the query is freed. */
typedef void (*row_fn)(call *c, json_t *list, tecs_entity_t e, const void *ctx);

static void page_rows(call *c, tecs_query_t *q, int32_t offset, int32_t limit, json_t *list,
                      row_fn fn, const void *ctx)
{
    int32_t skipped = 0, taken = 0;
    tecs_iter_t it = TECS_ITER(c->w, .query = q);
    while (taken < limit && tecs_iter_next(&it)) {
        if (skipped + it.count <= offset) {
            skipped += it.count;
            continue;
        }
        for (int32_t r = offset > skipped ? offset - skipped : 0;
             r < it.count && taken < limit && !c->oom && !c->status; r++, taken++)
            fn(c, list, it.entities[r], ctx);
        skipped += it.count;
        if (c->oom || c->status)
            break;
    }
    tecs_iter_fini(&it);
    tecs_query_free(q);
}

static void tree_row(call *c, json_t *list, tecs_entity_t e, const void *ctx)
{
    (void)ctx;
    push(c, list, tree_entry(c, e));
}

/* The query of the roots (every entity without a relation add-on),
** prefabs too: each hidden tag an optional term. */
static tecs_query_t *roots_query(call *c)
{
    tecs_term_t t[TECS_MAX_TERMS];
    int32_t n = 0;
    if (c->childof)
        t[n++] = (tecs_term_t){ .comp = c->childof, .oper = TECS_NONE, .access = TECS_FILTER };
    for (int32_t i = 0; i < c->nids && n < TECS_MAX_TERMS; i++)
        if (tecs_component_hidden(c->w, c->ids[i]))
            t[n++] = (tecs_term_t){ .comp = c->ids[i], .oper = TECS_OPTIONAL,
                                    .access = TECS_FILTER };
    return tecs_query_new(c->w, &(tecs_query_desc_t){ .terms = t, .term_count = n });
}

static json_t *get_tree(call *c)
{
    tecs_entity_t parent;
    int32_t offset, limit;
    if (!id_arg(c, "parent", &parent) || !page_args(c, &offset, &limit))
        return NULL;
    if (parent && !alive(c, parent))
        return NULL;
    json_t *list, *o;
    if (parent) {
        tecs_entity_t *kids = malloc((size_t)limit * sizeof *kids + 1);
        if (kids == NULL) {
            c->oom = true;
            return NULL;
        }
        int32_t total = children_of(c, parent, offset, kids, limit);
        o = page_json(c, total, offset, "entities", &list);
        for (int32_t i = 0; offset < total && i < total - offset && i < limit && !c->oom; i++)
            push(c, list, tree_entry(c, kids[i]));
        free(kids);
    } else {
        tecs_query_t *q = roots_query(c);
        if (q == NULL)
            return refuse(c, 500, "internal", "%s", tecs_last_error_msg(c->w));
        o = page_json(c, tecs_query_count(q), offset, "entities", &list);
        page_rows(c, q, offset, limit, list, tree_row, NULL);
    }
    json_decref(list);
    return o;
}

/* ---- query text ----------------------------------------------------- */

static bool name_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == ':';
}

/* Parse query text s into terms (*n of them): names separated by commas
** and spaces, "!Name" a none term, "?Name" an optional one. False with the
** call's 400 bad_query, which names the place (1-based) and what is wrong. */
static bool parse_query(call *c, const char *s, tecs_term_t *t, int32_t *n)
{
    *n = 0;
    for (size_t i = 0; s[i];) {
        if (s[i] == ',' || s[i] == ' ') {
            i++;
            continue;
        }
        size_t at = i;
        tecs_oper_t oper = TECS_WITH;
        if (s[i] == '!' || s[i] == '?')
            oper = s[i++] == '!' ? TECS_NONE : TECS_OPTIONAL;
        size_t start = i;
        while (name_char(s[i]))
            i++;
        if (i == start || (s[i] && s[i] != ',' && s[i] != ' ')) {
            refuse(c, 400, "bad_query", "at character %lu: expected a component name "
                   "([A-Za-z0-9_.:]+, after an optional ! or ?)",
                   (unsigned long)(i == start ? start : i) + 1);
            return false;
        }
        tecs_comp_t comp = find_comp(c, s + start, i - start);
        int len = i - start > 64 ? 64 : (int)(i - start);
        if (comp == 0) {
            refuse(c, 400, "bad_query", "at character %lu: no component named '%.*s'",
                   (unsigned long)at + 1, len, s + start);
            return false;
        }
        for (int32_t k = 0; k < *n; k++)
            if (t[k].comp == comp) {
                refuse(c, 400, "bad_query", "at character %lu: '%.*s' is named twice",
                       (unsigned long)at + 1, len, s + start);
                return false;
            }
        if (*n == TECS_MAX_TERMS) {
            refuse(c, 400, "bad_query", "at character %lu: more than %d terms",
                   (unsigned long)at + 1, TECS_MAX_TERMS);
            return false;
        }
        t[(*n)++] = (tecs_term_t){ .comp = comp, .oper = oper, .access = TECS_READ };
    }
    return true;
}

/* One entity of a query's page: its values of the terms it has. */
static void query_row(call *c, json_t *list, tecs_entity_t e, const void *ctx)
{
    const tecs_query_t *q = ctx;
    const tecs_term_t *t;
    int32_t n = tecs_query_terms(q, &t);
    json_t *x = json_object(), *comps = json_object();
    set(c, x, "id", id_json(e));
    for (int32_t i = 0; i < n && !c->oom && !c->status; i++) {
        if (t[i].oper == TECS_NONE || !tecs_has(c->w, e, t[i].comp))
            continue;
        if (is_relation(c, t[i].comp))
            set(c, comps, tecs_component_name(c->w, t[i].comp), json_true());
        else
            put_value(c, comps, e, t[i].comp);
    }
    set(c, x, "components", comps);
    push(c, list, x);
}

static json_t *get_query(call *c)
{
    const char *text = arg(c, "q");
    tecs_term_t t[TECS_MAX_TERMS];
    int32_t n, offset, limit;
    if (!page_args(c, &offset, &limit) || !parse_query(c, text ? text : "", t, &n))
        return NULL;
    tecs_query_t *q = tecs_query_new(c->w, &(tecs_query_desc_t){ .terms = t, .term_count = n });
    if (q == NULL) {
        if (tecs_last_error(c->w) == TECS_ENOMEM)
            c->oom = true;
        return refuse(c, 400, "bad_query", "%s", tecs_last_error_msg(c->w));
    }
    json_t *list, *o = page_json(c, tecs_query_count(q), offset, "entities", &list);
    json_t *terms = json_array();
    for (int32_t i = 0; i < n; i++) {
        char name[300];
        snprintf(name, sizeof name, "%s%s", t[i].oper == TECS_NONE ? "!"
                 : t[i].oper == TECS_OPTIONAL ? "?" : "", tecs_component_name(c->w, t[i].comp));
        push(c, terms, json_string(name));
    }
    set(c, o, "terms", terms);
    page_rows(c, q, offset, limit, list, query_row, q);
    json_decref(list);
    return o;
}

/* ---- systems and resources ------------------------------------------- */

static const char *phase_name(tecs_phase_t p)
{
    static const char *const names[] = { "?", "on_load", "post_load", "pre_update",
        "on_update", "on_validate", "post_update", "pre_store", "on_store" };
    return p >= 1 && p <= TECS_PHASE_COUNT ? names[p] : "?";
}

static json_t *system_json(call *c, tecs_system_t id)
{
    tecs_system_stats_t st = { 0 };
    tecs_system_desc_t d = { 0 };
    tecs_system_stats(c->w, id, &st);
    tecs_system_get(c->w, id, &d);
    json_t *x = json_object();
    set(c, x, "id", json_integer(id));
    set(c, x, "name", json_string(tecs_system_name(c->w, id)));
    set(c, x, "phase", json_string(phase_name(d.phase)));
    set(c, x, "enabled", json_boolean(tecs_system_enabled(c->w, id)));
    set(c, x, "runs", json_integer(st.runs));
    set(c, x, "time_last", json_real(st.time_last));
    set(c, x, "time_total", json_real(st.time_total));
    set(c, x, "entities_last", json_integer(st.entities_last));
    return x;
}

static json_t *get_systems(call *c)
{
    json_t *o = json_object(), *a = json_array();
    json_incref(a);
    set(c, o, "systems", a);
    set(c, o, "frame", json_integer(tecs_world_frame_count(c->w)));
    tecs_system_t id;
    for (int32_t i = 0; (id = tecs_system_at(c->w, i)) != 0 && !c->oom; i++)
        push(c, a, system_json(c, id));
    json_decref(a);
    return o;
}

static json_t *get_resources(call *c)
{
    json_t *o = json_object(), *a = json_array();
    json_incref(a);
    set(c, o, "resources", a);
    for (int32_t i = 0; i < c->nids && !c->oom && !c->status; i++) {
        tecs_comp_t comp = c->ids[i];
        if (!tecs_resource_has(c->w, comp))
            continue;
        const void *v = tecs_component_size(c->w, comp) ? tecs_resource_get(c->w, comp) : NULL;
        json_t *x = json_object(), *j = value_json(c, comp, v);
        set(c, x, "name", json_string(tecs_component_name(c->w, comp)));
        if (j)
            set(c, x, "value", j);
        push(c, a, x);
    }
    json_decref(a);
    return o;
}

/* ==================================================================== */
/* POST endpoints                                                       */
/* ==================================================================== */

/* The body as a JSON object, or NULL with the call's 400. */
static json_t *body_object(call *c)
{
    json_error_t je;
    json_t *b = c->req->body ? json_loadb(c->req->body, c->req->body_len,
                                          JSON_REJECT_DUPLICATES, &je) : NULL;
    if (!json_is_object(b)) {
        json_decref(b);
        return refuse(c, 400, "bad_body", "the body must be a JSON object%s%s",
                      c->req->body ? ": " : "", c->req->body ? je.text : "");
    }
    return b;
}

/* The live entity a body's "id" names, or 0 with the call's error. */
static tecs_entity_t body_entity(call *c, json_t *b)
{
    tecs_entity_t e;
    if (!parse_id_json(json_object_get(b, "id"), &e) || e == 0) {
        refuse(c, 400, "bad_body", "\"id\" must be an entity id \"SLOT.GEN\" or [slot, gen]");
        return 0;
    }
    return alive(c, e) ? e : 0;
}

/* The place path ("a.b", "v[2]") names inside value j: *parent and, for an
** object member, *key (else *index). False if it names none. */
static bool find_place(json_t *j, const char *path, json_t **parent, char *key, size_t cap,
                       size_t *index)
{
    const char *p = path;
    *parent = NULL;
    for (;;) {
        size_t len = strcspn(p, ".[");
        if (len == 0 || len >= cap || !json_is_object(j))
            return false;
        memcpy(key, p, len);
        key[len] = '\0';
        *parent = j;
        j = json_object_get(j, key);
        p += len;
        if (j == NULL)
            return false;
        while (*p == '[') {
            size_t n = strcspn(p + 1, "]");
            uint64_t k;
            if (p[1 + n] != ']' || !parse_uint(p + 1, n, SIZE_MAX >> 1, &k) ||
                !json_is_array(j) || k >= json_array_size(j))
                return false;
            *parent = j;
            *index = (size_t)k;
            key[0] = '\0';
            j = json_array_get(j, (size_t)k);
            p += n + 2;
        }
        if (*p == '\0')
            return true;
        if (*p != '.')
            return false;
        p++;
    }
}

/* Write v (a JSON value) at path of e's value of comp, through a stage and
** tecs_set. */
static void set_field(call *c, tecs_entity_t e, tecs_comp_t comp, const char *path, json_t *v)
{
    const char *name = tecs_component_name(c->w, comp);
    json_t *cur = value_json(c, comp, tecs_get(c->w, e, comp)), *parent;
    char key[256];
    size_t index = 0;
    if (cur == NULL)
        return;
    if (!find_place(cur, path, &parent, key, sizeof key, &index)) {
        json_decref(cur);
        refuse(c, 404, "no_field", "component '%s' has no field '%.100s'", name, path);
        return;
    }
    int r = key[0] ? json_object_set(parent, key, v) : json_array_set(parent, index, v);
    char *text = r == 0 ? dump(cur) : NULL;
    json_decref(cur);
    size_t size = tecs_component_size(c->w, comp);
    void *stage = text ? calloc(1, size) : NULL;
    if (stage == NULL) {
        free(text);
        c->oom = true;
        return;
    }
    tecs_json_error_t err;
    tecs_err_t e1 = tecs_json_import_value(c->w, comp, text, strlen(text), stage, &err);
    free(text);
    if (e1 == TECS_ENOMEM)
        c->oom = true;
    else if (e1)
        refuse(c, 400, "bad_body", "\"value\": %s", err.text);
    else if (tecs_set(c->w, e, comp, stage) != TECS_OK)
        refuse(c, 409, "refused", "%s", tecs_last_error_msg(c->w));
    if (e1 == TECS_OK)
        tecs_json_free_value(c->w, comp, stage);
    free(stage);
}

static json_t *post_set(call *c, json_t *b)
{
    tecs_entity_t e = body_entity(c, b);
    const char *cname = json_string_value(json_object_get(b, "component"));
    const char *path = json_string_value(json_object_get(b, "field"));
    json_t *v = json_object_get(b, "value");
    if (e == 0)
        return NULL;
    if (cname == NULL || path == NULL || path[0] == '\0' || v == NULL)
        return refuse(c, 400, "bad_body", "the body is {\"id\": ..., \"component\": NAME, "
                      "\"field\": PATH, \"value\": JSON}");
    tecs_comp_t comp = find_comp(c, cname, strlen(cname));
    if (comp == 0 || is_relation(c, comp) || !tecs_has(c->w, e, comp))
        return refuse(c, 404, "no_component", "entity %lu.%lu has no component '%.100s'",
                      (unsigned long)TECS_ENTITY_INDEX(e),
                      (unsigned long)TECS_ENTITY_GENERATION(e), cname);
    if (tecs_component_size(c->w, comp) == 0 ||
        tecs_component_fields(c->w, comp, NULL) == NULL)
        return refuse(c, 404, "no_field", "component '%s' has no described fields",
                      tecs_component_name(c->w, comp));
    set_field(c, e, comp, path, v);
    if (c->status || c->oom)
        return NULL;
    return entity_json(c, e);
}

static json_t *post_system(call *c, json_t *b)
{
    json_t *id = json_object_get(b, "id"), *name = json_object_get(b, "name");
    json_t *en = json_object_get(b, "enabled");
    if (!json_is_boolean(en) || (id ? !json_is_integer(id) : !json_is_string(name)))
        return refuse(c, 400, "bad_body", "the body is {\"name\": NAME or \"id\": N, "
                      "\"enabled\": BOOL}");
    tecs_system_t s = 0;
    if (id && json_integer_value(id) > 0 && json_integer_value(id) <= (json_int_t)UINT32_MAX)
        s = (tecs_system_t)json_integer_value(id);
    else if (!id)
        s = tecs_system_lookup(c->w, json_string_value(name));
    if (s == 0 || tecs_system_name(c->w, s) == NULL)
        return refuse(c, 404, "no_system", "no such system");
    if (tecs_system_enable(c->w, s, json_is_true(en)) != TECS_OK)
        return refuse(c, 409, "refused", "%s", tecs_last_error_msg(c->w));
    json_t *o = json_object();
    set(c, o, "id", json_integer(s));
    set(c, o, "name", json_string(tecs_system_name(c->w, s)));
    set(c, o, "enabled", json_boolean(tecs_system_enabled(c->w, s)));
    return o;
}

static json_t *post_destroy(call *c, json_t *b)
{
    tecs_entity_t e = body_entity(c, b);
    if (e == 0)
        return NULL;
    if (tecs_destroy(c->w, e) != TECS_OK)
        return refuse(c, 409, "refused", "%s", tecs_last_error_msg(c->w));
    json_t *o = json_object();
    set(c, o, "destroyed", id_json(e));
    return o;
}

/* ==================================================================== */
/* Text                                                                 */
/* ==================================================================== */

/* The text being dumped: failed once any piece could not be added. */
typedef struct dump_buf {
    char *p;
    size_t n, cap;
    bool failed;
} dump_buf;

static int dump_piece(const char *s, size_t n, void *data)
{
    dump_buf *b = data;
    if (b->failed)
        return -1;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->failed = true;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

/* j as compact text (malloc'd), or NULL. jansson's own dump goes on past
** an object key it could not write, so every piece is checked here. */
static char *dump(const json_t *j)
{
    dump_buf b = { 0 };
    if (j == NULL || json_dump_callback(j, dump_piece, &b, JSON_COMPACT) != 0 || b.failed ||
        b.p == NULL) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* ==================================================================== */
/* Routing                                                              */
/* ==================================================================== */

typedef struct route {
    const char *path;
    json_t *(*get)(call *c);
    json_t *(*post)(call *c, json_t *body);
} route;

static const route routes[] = {
    { "/api/world", get_world, NULL },
    { "/api/components", get_components, NULL },
    { "/api/archetypes", get_archetypes, NULL },
    { "/api/entity", get_entity, NULL },
    { "/api/tree", get_tree, NULL },
    { "/api/query", get_query, NULL },
    { "/api/systems", get_systems, NULL },
    { "/api/resources", get_resources, NULL },
    { "/api/set", NULL, post_set },
    { "/api/system", NULL, post_system },
    { "/api/destroy", NULL, post_destroy },
};

/* The registered components and the relation add-on's built-ins. */
static void prepare(call *c)
{
    for (tecs_comp_t id = 1; id < TECS_MAX_COMPONENTS; id++)
        if (tecs_component_name(c->w, id))
            c->ids[c->nids++] = id;
    c->childof = find_comp(c, "ChildOf", 7);
    c->isa = find_comp(c, "IsA", 3);
    if (c->childof && !tecs_is_relation(c->w, c->childof))
        c->childof = 0;
    if (c->isa && !tecs_is_relation(c->w, c->isa))
        c->isa = 0;
}

/* The answer of a routed request. */
static json_t *dispatch(call *c)
{
    const tecs__inspect_req *r = c->req;
    const route *rt = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0] && r->path; i++)
        if (strcmp(routes[i].path, r->path) == 0)
            rt = &routes[i];
    if (rt == NULL)
        return refuse(c, 404, "not_found", "no such endpoint");
    const char *want = rt->get ? "GET" : "POST";
    if (r->method == NULL || strcmp(r->method, want) != 0)
        return refuse(c, 405, "method", "%s takes %s", rt->path, want);
    if (r->nargs < 0 || r->nargs > TECS__INSPECT_MAX_ARGS || (r->nargs > 0 && !r->args))
        return refuse(c, 400, "bad_argument", "at most %d arguments", TECS__INSPECT_MAX_ARGS);
    prepare(c);
    if (rt->get)
        return rt->get(c);
    if (!c->cfg->writes)
        return refuse(c, 403, "read_only", "writes are off (tecs_inspect_opts_t.writes)");
    json_t *body = body_object(c);
    json_t *o = body ? rt->post(c, body) : NULL;
    json_decref(body);
    return o;
}

char *tecs__inspect_error(const char *code, const char *message)
{
    json_t *o = json_pack("{s:s, s:s}", "error", code ? code : "internal", "message",
                          message ? message : "");
    char *text = dump(o);
    if (o == NULL) {            /* a message that is not UTF-8 */
        o = json_pack("{s:s, s:s}", "error", code ? code : "internal", "message", "");
        text = dump(o);
    }
    json_decref(o);
    return text;
}

int tecs__inspect_answer(tecs_world_t *world, const tecs__inspect_cfg *cfg,
                         const tecs__inspect_req *req, char **out)
{
    *out = NULL;
    call *c = calloc(1, sizeof *c);
    if (c == NULL)
        return 500;
    static const tecs__inspect_cfg none = { 0 };
    c->w = world;
    c->cfg = cfg ? cfg : &none;
    c->req = req;
    c->max_page = c->cfg->max_page > 0 ? c->cfg->max_page : DEFAULT_PAGE;
    json_t *o = world && req ? dispatch(c) : refuse(c, 500, "internal", "no world");
    if (!c->status && !c->oom)
        *out = dump(o);
    json_decref(o);
    int status = c->status ? c->status : 200;
    if (c->oom || (!c->status && *out == NULL)) {
        status = 500;
        *out = tecs__inspect_error("internal", "out of memory");
    } else if (c->status) {
        *out = tecs__inspect_error(c->code, c->msg);
    }
    if (*out == NULL)
        status = 500;
    free(c);
    return status;
}
