/*
** tinyecs_json.c — a world, or one entity, as JSON text, and back.
**
** Built on tinyecs.h alone: the descriptions (tecs_component_fields) say
** what a value holds, tecs_get reads it, tecs_new and tecs_set write it.
** jansson parses; the writer is a small buffer of our own, because jansson
** writes every real with one precision and f32 values want 9 significant
** digits where f64 values want 17.
**
** The text:
**
**     { "format": "tinyecs-json", "version": 1,
**       "entities": [ { "id": [slot, gen],
**                       "components": { name: value, ... },
**                       "disabled": [ name, ... ],         (when any)
**                       "pairs": [ { "relation": name, "target": [slot, gen],
**                                    "value": value }, ... ] },  (when any)
**                     ... ] }
**
** Relations (tinyecs/relation.h) are never among "components" (ChildOf's
** tag included): an entity's pairs are listed by relation, each
** relation's targets in the entity's order; "value" is there for a
** relation with a size, as a component's value is written.
**
** An import runs in three passes, so that bad text never changes the
** world: (1) check the whole text (shape, names, types, ranges, ids);
** (2) make the entities; (3) set their values, entity fields rewritten
** through the map from the text's ids to the new ones, then their pairs,
** targets through the same map. Passes 2 and 3 can fail only for memory,
** by a hook's refusal or by a cycle of ChildOf; then every entity made so
** far is destroyed.
*/
#include "tinyecs/json.h"

#include <jansson.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs/snapshot.h"

/* Relations, when the library has them (TECS_JSON_RELATIONS, set by the
** build); without, no component is one, so no entity has a pair and an
** import's "pairs" name no relation. */
#ifdef TECS_JSON_RELATIONS
#include "tinyecs/relation.h"
#endif

/* A relation, or one of the tags that follow its pairs (ChildOf's level
** tags, IsA's base tags). */
static bool is_relation(const tecs_world_t *w, tecs_comp_t c)
{
#ifdef TECS_JSON_RELATIONS
    return tecs_is_relation(w, c) || tecs_relation_level(w, c) > 0 ||
           tecs_relation_base(w, c) != 0;
#else
    (void)w;
    (void)c;
    return false;
#endif
}

/* The i-th target of rel held by e, or 0; its value at *value. */
static tecs_entity_t pair_target(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel,
                                 int32_t i, const void **value)
{
#ifdef TECS_JSON_RELATIONS
    tecs_entity_t t = tecs_pair_target(w, e, rel, i);
    *value = t ? tecs_pair_get(w, e, rel, t) : NULL;
    return t;
#else
    (void)w, (void)e, (void)rel, (void)i;
    *value = NULL;
    return 0;
#endif
}

/* Add (rel, t) to e, with *value if not NULL. */
static tecs_err_t pair_put(tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel, tecs_entity_t t,
                           const void *value)
{
#ifdef TECS_JSON_RELATIONS
    return value ? tecs_pair_set(w, e, rel, t, value) : tecs_pair_add(w, e, rel, t);
#else
    (void)w, (void)e, (void)rel, (void)t, (void)value;
    return TECS_EINVAL;
#endif
}

#define FORMAT_NAME "tinyecs-json"
#define FORMAT_VERSION 1

/* Fill *err (may be NULL) and return code. */
static tecs_err_t fail(tecs_json_error_t *err, tecs_err_t code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        err->line = err->column = 0;
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* One element's value, of any type but a struct. */
typedef union scalar {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    tecs_entity_t e;
    const char *s;
} scalar;

/* ==================================================================== */
/* Writing                                                              */
/* ==================================================================== */

typedef struct text_buf {
    char *p;
    size_t n, cap;
    bool oom;
} text_buf;

static void put(text_buf *o, const char *s, size_t n)
{
    if (o->oom)
        return;
    if (o->n + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->n + n + 1)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (p == NULL) {
            o->oom = true;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
    o->p[o->n] = '\0';
}

static void puts_(text_buf *o, const char *s)
{
    put(o, s, strlen(s));
}

static void putf(text_buf *o, const char *fmt, ...)
{
    char b[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    put(o, b, (size_t)n);
}

/* A JSON string for s (UTF-8, escaped by jansson); false if s is not UTF-8
** or memory ran out (o->oom). */
static bool put_str(text_buf *o, const char *s)
{
    json_t *j = json_string(s);
    if (j == NULL)
        return false;
    char *t = json_dumps(j, JSON_ENCODE_ANY);
    json_decref(j);
    if (t == NULL) {
        o->oom = true;
        return true;
    }
    puts_(o, t);
    free(t);
    return true;
}

/* A real: digits significant digits, NaN and infinities as strings, and
** always a '.' or an exponent, so that it reads back as a real (-0.0). */
static void put_real(text_buf *o, double v, int digits)
{
    if (isnan(v)) {
        puts_(o, "\"NaN\"");
    } else if (isinf(v)) {
        puts_(o, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    } else {
        char b[40];
        snprintf(b, sizeof b, "%.*g", digits, v);
        if (strpbrk(b, ".e") == NULL)
            strcat(b, ".0");
        puts_(o, b);
    }
}

static void put_entity(text_buf *o, tecs_entity_t e)
{
    if (e == 0)
        puts_(o, "null");
    else
        putf(o, "[%lu, %lu]", (unsigned long)TECS_ENTITY_INDEX(e),
             (unsigned long)TECS_ENTITY_GENERATION(e));
}

typedef struct writer {
    tecs_world_t *w;
    text_buf o;
    tecs_json_error_t *err;
    const char *comp;           /* the component being written, for errors */
} writer;

static tecs_err_t put_fields(writer *x, tecs_comp_t c, const char *v);

/* One element of field f at p. */
static tecs_err_t put_elem(writer *x, const tecs_field_t *f, const char *p)
{
    text_buf *o = &x->o;
    scalar u;
    memcpy(&u, p, tecs_type_size(f->type));     /* 0 bytes for a struct */
    switch (f->type) {
    case TECS_TYPE_BOOL: puts_(o, *(const unsigned char *)p ? "true" : "false"); break;
    case TECS_TYPE_I8: putf(o, "%d", u.i8); break;
    case TECS_TYPE_I16: putf(o, "%d", u.i16); break;
    case TECS_TYPE_I32: putf(o, "%ld", (long)u.i32); break;
    case TECS_TYPE_I64: putf(o, "%lld", (long long)u.i64); break;
    case TECS_TYPE_U8: putf(o, "%u", u.u8); break;
    case TECS_TYPE_U16: putf(o, "%u", u.u16); break;
    case TECS_TYPE_U32: putf(o, "%lu", (unsigned long)u.u32); break;
    case TECS_TYPE_U64:
        putf(o, u.u64 > (uint64_t)INT64_MAX ? "\"%llu\"" : "%llu", (unsigned long long)u.u64);
        break;
    case TECS_TYPE_F32: put_real(o, u.f, 9); break;
    case TECS_TYPE_F64: put_real(o, u.d, 17); break;
    case TECS_TYPE_ENTITY: put_entity(o, u.e); break;
    case TECS_TYPE_STRING:
        if (u.s == NULL)
            puts_(o, "null");
        else if (!put_str(o, u.s))
            return fail(x->err, TECS_EINVAL, "component '%s', field '%s': the string is not "
                        "UTF-8", x->comp, f->name);
        break;
    case TECS_TYPE_STRUCT: return put_fields(x, f->comp, p);
    }
    return TECS_OK;
}

/* The value v of described component c as an object of its fields. */
static tecs_err_t put_fields(writer *x, tecs_comp_t c, const char *v)
{
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(x->w, c, &n);
    puts_(&x->o, "{");
    for (int32_t i = 0; i < n; i++) {
        puts_(&x->o, i ? ", " : "");
        put_str(&x->o, f[i].name);
        puts_(&x->o, ": ");
        size_t es = f[i].type == TECS_TYPE_STRUCT ? tecs_component_size(x->w, f[i].comp)
                                                  : tecs_type_size(f[i].type);
        if (f[i].count > 1)
            puts_(&x->o, "[");
        for (int32_t k = 0; k < f[i].count; k++) {
            if (k)
                puts_(&x->o, ", ");
            tecs_err_t e = put_elem(x, &f[i], v + f[i].offset + (size_t)k * es);
            if (e)
                return e;
        }
        if (f[i].count > 1)
            puts_(&x->o, "]");
    }
    puts_(&x->o, "}");
    return TECS_OK;
}

/* The registered components, by id (0 ends the list). */
static int32_t components(tecs_world_t *w, tecs_comp_t *ids)
{
    int32_t n = 0;
    for (tecs_comp_t c = 1; c < TECS_MAX_COMPONENTS; c++)
        if (tecs_component_name(w, c))
            ids[n++] = c;
    return n;
}

/* Entity e's pairs, if any, as ', "pairs": [...]'. */
static tecs_err_t put_pairs(writer *x, tecs_entity_t e, const tecs_comp_t *ids, int32_t n)
{
    text_buf *o = &x->o;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!is_relation(x->w, ids[i]))
            continue;
        x->comp = tecs_component_name(x->w, ids[i]);
        tecs_entity_t t;
        const void *value;
        for (int32_t j = 0; (t = pair_target(x->w, e, ids[i], j, &value)) != 0; j++) {
            puts_(o, k++ ? ", " : ", \"pairs\": [");
            puts_(o, "{\"relation\": ");
            put_str(o, x->comp);
            puts_(o, ", \"target\": ");
            put_entity(o, t);
            if (tecs_component_size(x->w, ids[i]) > 0) {
                puts_(o, ", \"value\": ");
                if (tecs_component_fields(x->w, ids[i], NULL) == NULL) {
                    puts_(o, "null");
                } else {
                    tecs_err_t err = put_fields(x, ids[i], value);
                    if (err)
                        return err;
                }
            }
            puts_(o, "}");
        }
    }
    if (k)
        puts_(o, "]");
    return TECS_OK;
}

/* Entity e as {"id": ..., "components": {...}[, "disabled": [...]]
** [, "pairs": [...]]}. */
static tecs_err_t put_entity_obj(writer *x, tecs_entity_t e, const tecs_comp_t *ids, int32_t n)
{
    text_buf *o = &x->o;
    puts_(o, "{\"id\": ");
    put_entity(o, e);
    puts_(o, ", \"components\": {");
    int32_t k = 0, ndisabled = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!tecs_has(x->w, e, ids[i]) || is_relation(x->w, ids[i]))
            continue;
        x->comp = tecs_component_name(x->w, ids[i]);
        puts_(o, k++ ? ", " : "");
        put_str(o, x->comp);
        puts_(o, ": ");
        ndisabled += tecs_component_enableable(x->w, ids[i]) && !tecs_is_enabled(x->w, e, ids[i]);
        if (tecs_component_size(x->w, ids[i]) == 0) {
            puts_(o, "true");
        } else if (tecs_component_fields(x->w, ids[i], NULL) == NULL) {
            puts_(o, "null");
        } else {
            tecs_err_t err = put_fields(x, ids[i], tecs_get(x->w, e, ids[i]));
            if (err)
                return err;
        }
    }
    puts_(o, "}");
    if (ndisabled) {
        puts_(o, ", \"disabled\": [");
        k = 0;
        for (int32_t i = 0; i < n; i++)
            if (tecs_has(x->w, e, ids[i]) && tecs_component_enableable(x->w, ids[i]) &&
                !tecs_is_enabled(x->w, e, ids[i])) {
                puts_(o, k++ ? ", " : "");
                put_str(o, tecs_component_name(x->w, ids[i]));
            }
        puts_(o, "]");
    }
    tecs_err_t err = put_pairs(x, e, ids, n);
    puts_(o, "}");
    return err;
}

/* The text of x, or NULL with the error (e, or out of memory). */
static char *finish(writer *x, tecs_err_t e)
{
    if (!e && x->o.oom)
        e = fail(x->err, TECS_ENOMEM, "out of memory writing JSON");
    if (e) {
        free(x->o.p);
        return NULL;
    }
    if (x->err)
        *x->err = (tecs_json_error_t){ 0 };
    return x->o.p;
}

static int by_slot(const void *a, const void *b)
{
    uint32_t x = TECS_ENTITY_INDEX(*(const tecs_entity_t *)a);
    uint32_t y = TECS_ENTITY_INDEX(*(const tecs_entity_t *)b);
    return (x > y) - (x < y);
}

/* A query of every entity, those with a hidden tag (prefabs) too: each
** hidden tag an optional term. */
static tecs_query_t *every_entity(tecs_world_t *w)
{
    tecs_term_t t[TECS_MAX_TERMS];
    int32_t n = 0;
    for (tecs_comp_t c = 1; c < TECS_MAX_COMPONENTS && n < TECS_MAX_TERMS; c++)
        if (tecs_component_hidden(w, c))
            t[n++] = (tecs_term_t){ .comp = c, .oper = TECS_OPTIONAL, .access = TECS_FILTER };
    if (n == 0)
        return tecs_query_all(w, 0, NULL);
    return tecs_query_new(w, &(tecs_query_desc_t){ .terms = t, .term_count = n });
}

char *tecs_json_export(tecs_world_t *w, tecs_json_error_t *err)
{
    if (w == NULL) {
        fail(err, TECS_EINVAL, "tecs_json_export: NULL world");
        return NULL;
    }
    writer x = { .w = w, .err = err };
    tecs_query_t *q = every_entity(w);
    if (q == NULL) {
        fail(err, tecs_last_error(w), "%s", tecs_last_error_msg(w));
        return NULL;
    }
    int32_t n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, NULL, 0);
    tecs_entity_t *es = n > 0 ? malloc((size_t)n * sizeof *es) : NULL;
    tecs_comp_t *ids = malloc(TECS_MAX_COMPONENTS * sizeof *ids);
    tecs_err_t e = TECS_OK;
    if (n < 0)
        e = fail(err, tecs_last_error(w), "%s", tecs_last_error_msg(w));
    else if ((n > 0 && es == NULL) || ids == NULL)
        e = fail(err, TECS_ENOMEM, "out of memory writing JSON");
    else if (n > 0 && tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, es, n) != n)
        e = fail(err, TECS_EINVAL, "the world changed while it was written");
    tecs_query_free(q);
    if (!e) {
        qsort(es, (size_t)n, sizeof *es, by_slot);
        int32_t nc = components(w, ids);
        putf(&x.o, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"entities\": [",
             FORMAT_NAME, FORMAT_VERSION);
        for (int32_t i = 0; i < n && !e; i++) {
            puts_(&x.o, i ? ",\n    " : "\n    ");
            e = put_entity_obj(&x, es[i], ids, nc);
        }
        puts_(&x.o, n ? "\n  ]\n}\n" : "]\n}\n");
    }
    free(es);
    free(ids);
    return finish(&x, e);
}

char *tecs_json_export_entity(tecs_world_t *w, tecs_entity_t e, tecs_json_error_t *err)
{
    if (w == NULL) {
        fail(err, TECS_EINVAL, "tecs_json_export_entity: NULL world");
        return NULL;
    }
    if (!tecs_is_alive(w, e)) {
        fail(err, TECS_EDEAD, "entity [%lu, %lu] is not alive",
             (unsigned long)TECS_ENTITY_INDEX(e), (unsigned long)TECS_ENTITY_GENERATION(e));
        return NULL;
    }
    writer x = { .w = w, .err = err };
    tecs_comp_t *ids = malloc(TECS_MAX_COMPONENTS * sizeof *ids);
    tecs_err_t r = ids ? put_entity_obj(&x, e, ids, components(w, ids))
                       : fail(err, TECS_ENOMEM, "out of memory writing JSON");
    puts_(&x.o, "\n");
    free(ids);
    return finish(&x, r);
}

char *tecs_json_export_value(tecs_world_t *w, tecs_comp_t c, const void *value,
                             tecs_json_error_t *err)
{
    const char *name = w ? tecs_component_name(w, c) : NULL;
    if (name == NULL) {
        fail(err, w ? TECS_ENOCOMP : TECS_EINVAL, "tecs_json_export_value: %s",
             w ? "unknown component" : "NULL world");
        return NULL;
    }
    bool described = tecs_component_fields(w, c, NULL) != NULL;
    if (described && value == NULL) {
        fail(err, TECS_EINVAL, "tecs_json_export_value: NULL value of '%s'", name);
        return NULL;
    }
    writer x = { .w = w, .err = err, .comp = name };
    tecs_err_t r = TECS_OK;
    if (tecs_component_size(w, c) == 0)
        puts_(&x.o, "true");
    else if (!described)
        puts_(&x.o, "null");
    else
        r = put_fields(&x, c, value);
    return finish(&x, r);
}

/* ==================================================================== */
/* Reading                                                              */
/* ==================================================================== */

typedef struct idmap {
    tecs_entity_t old, now;     /* the id in the text, the entity made      */
} idmap;

typedef struct reader {
    tecs_world_t *w;
    tecs_json_error_t *err;
    bool whole;                 /* a whole world (else one entity)          */
    idmap *map;                 /* sorted by old, once made                 */
    size_t nmap;
    tecs_comp_t *ids;           /* the registered components                */
    int32_t nids;
    char ent[48];               /* "entity [s, g]" or "entities[i]"        */
    const char *comp;           /* the component being read                 */
    char path[256];             /* the field being read ("at.x", "v[2]")    */
} reader;

/* Record TECS_EFORMAT at the field being read. */
#define BAD(r, fmt, ...)                                                    \
    fail((r)->err, TECS_EFORMAT, "%s, component '%s', field '%s': " fmt, (r)->ent, (r)->comp, \
         (r)->path, __VA_ARGS__)

/* An id [slot, gen] (gen >= 1) or null (0): false if j is neither. */
static bool parse_id(json_t *j, tecs_entity_t *out)
{
    if (json_is_null(j)) {
        *out = 0;
        return true;
    }
    if (!json_is_array(j) || json_array_size(j) != 2)
        return false;
    json_t *s = json_array_get(j, 0), *g = json_array_get(j, 1);
    if (!json_is_integer(s) || !json_is_integer(g))
        return false;
    /* No entity has generation 0: the entity index never hands it out. */
    json_int_t si = json_integer_value(s), gi = json_integer_value(g);
    if (si < 0 || si > (json_int_t)UINT32_MAX || gi < 1 || gi > (json_int_t)UINT32_MAX)
        return false;
    *out = (tecs_entity_t)gi << 32 | (tecs_entity_t)si;
    return true;
}

static int by_old(const void *a, const void *b)
{
    tecs_entity_t x = ((const idmap *)a)->old, y = ((const idmap *)b)->old;
    return (x > y) - (x < y);
}

/* The entity an id of the text names in the world (see the header). */
static tecs_entity_t map_id(const reader *r, tecs_entity_t old)
{
    if (old == 0)
        return 0;
    idmap key = { old, 0 };
    const idmap *m = bsearch(&key, r->map, r->nmap, sizeof *m, by_old);
    if (m)
        return m->now;
    /* One entity: an id alive before the import is kept; the entity the
    ** import made was not alive before it. */
    return !r->whole && old != r->map[0].now && tecs_is_alive(r->w, old) ? old : 0;
}

/* Is v in the range of integer type t? */
static bool int_fits(tecs_type_t t, json_int_t v)
{
    switch (t) {
    case TECS_TYPE_I8: return v >= INT8_MIN && v <= INT8_MAX;
    case TECS_TYPE_I16: return v >= INT16_MIN && v <= INT16_MAX;
    case TECS_TYPE_I32: return v >= INT32_MIN && v <= INT32_MAX;
    case TECS_TYPE_U8: return v >= 0 && v <= UINT8_MAX;
    case TECS_TYPE_U16: return v >= 0 && v <= UINT16_MAX;
    case TECS_TYPE_U32: return v >= 0 && v <= (json_int_t)UINT32_MAX;
    case TECS_TYPE_U64: return v >= 0;
    default: return true;
    }
}

/* A u64 written as a decimal string: digits only, at most UINT64_MAX. */
static bool parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return true;
}

/* A real, or the strings for NaN and the infinities. */
static bool parse_real(json_t *j, double *out)
{
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return true;
    }
    const char *s = json_string_value(j);
    if (s && strcmp(s, "NaN") == 0)
        *out = NAN;
    else if (s && strcmp(s, "Infinity") == 0)
        *out = INFINITY;
    else if (s && strcmp(s, "-Infinity") == 0)
        *out = -INFINITY;
    else
        return false;
    return true;
}

static tecs_err_t get_fields(reader *r, tecs_comp_t c, json_t *o, char *dst);


/* An integer of f's type from j, range-checked (a u64 may be digits in a
** string). */
static tecs_err_t get_int(reader *r, const tecs_field_t *f, json_t *j, scalar *u)
{
    if (f->type == TECS_TYPE_U64 && json_is_string(j)) {
        if (!parse_u64(json_string_value(j), &u->u64))
            return BAD(r, "%s", "expected a u64 (a number, or digits in a string)");
        return TECS_OK;
    }
    if (!json_is_integer(j))
        return BAD(r, "expected an integer (%s)", tecs_type_name(f->type));
    json_int_t v = json_integer_value(j);
    if (!int_fits(f->type, v))
        return BAD(r, "%lld is out of range for %s", (long long)v, tecs_type_name(f->type));
    switch (f->type) {
    case TECS_TYPE_I8: u->i8 = (int8_t)v; break;
    case TECS_TYPE_I16: u->i16 = (int16_t)v; break;
    case TECS_TYPE_I32: u->i32 = (int32_t)v; break;
    case TECS_TYPE_I64: u->i64 = (int64_t)v; break;
    case TECS_TYPE_U8: u->u8 = (uint8_t)v; break;
    case TECS_TYPE_U16: u->u16 = (uint16_t)v; break;
    case TECS_TYPE_U32: u->u32 = (uint32_t)v; break;
    default: u->u64 = (uint64_t)v; break;
    }
    return TECS_OK;
}

/* An f32 from j. Up to half a step above FLT_MAX rounds to FLT_MAX (its
** 9-digit text is above it); beyond that is out of range. */
static tecs_err_t get_f32(reader *r, json_t *j, scalar *u)
{
    double d;
    if (!parse_real(j, &d))
        return BAD(r, "%s", "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
    if (isfinite(d) && fabs(d) >= 0x1.ffffffp127)
        return BAD(r, "%g is out of range for f32", d);
    u->f = isfinite(d) && fabs(d) > FLT_MAX ? (d > 0 ? FLT_MAX : -FLT_MAX) : (float)d;
    return TECS_OK;
}

/* Check one element of field f in j; write it at dst unless dst is NULL. */
static tecs_err_t get_elem(reader *r, const tecs_field_t *f, json_t *j, char *dst)
{
    scalar u;
    tecs_err_t e;
    switch (f->type) {
    case TECS_TYPE_BOOL:
        if (!json_is_boolean(j))
            return BAD(r, "%s", "expected true or false");
        u.b = json_is_true(j);
        break;
    case TECS_TYPE_I8: case TECS_TYPE_I16: case TECS_TYPE_I32: case TECS_TYPE_I64:
    case TECS_TYPE_U8: case TECS_TYPE_U16: case TECS_TYPE_U32: case TECS_TYPE_U64:
        if ((e = get_int(r, f, j, &u)) != TECS_OK)
            return e;
        break;
    case TECS_TYPE_F32:
        if ((e = get_f32(r, j, &u)) != TECS_OK)
            return e;
        break;
    case TECS_TYPE_F64:
        if (!parse_real(j, &u.d))
            return BAD(r, "%s", "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
        break;
    case TECS_TYPE_ENTITY:
        if (!parse_id(j, &u.e))
            return BAD(r, "%s", "expected an entity id [slot, generation] or null");
        if (dst)
            u.e = map_id(r, u.e);
        break;
    case TECS_TYPE_STRING:
        if (!json_is_null(j) && !json_is_string(j))
            return BAD(r, "%s", "expected a string or null");
        u.s = json_string_value(j);
        if (u.s && strlen(u.s) != json_string_length(j))
            return BAD(r, "%s", "the string holds a NUL character");
        break;
    case TECS_TYPE_STRUCT:
        return get_fields(r, f->comp, j, dst);
    }
    if (dst)
        memcpy(dst, &u, tecs_type_size(f->type));
    return TECS_OK;
}

/* Append ".name" (or "name" first) to r->path; return the old length, to
** cut it back to. */
static size_t path_push(reader *r, const char *name)
{
    size_t n = strlen(r->path);
    snprintf(r->path + n, sizeof r->path - n, "%s%s", n ? "." : "", name);
    return n;
}

/* Field f of a value at dst (NULL: check only) from j. */
static tecs_err_t get_field(reader *r, const tecs_field_t *f, json_t *j, char *dst)
{
    size_t es = f->type == TECS_TYPE_STRUCT ? tecs_component_size(r->w, f->comp)
                                            : tecs_type_size(f->type);
    if (f->count == 1)
        return get_elem(r, f, j, dst ? dst + f->offset : NULL);
    if (!json_is_array(j) || json_array_size(j) != (size_t)f->count)
        return BAD(r, "expected an array of %d %s", (int)f->count, tecs_type_name(f->type));
    size_t keep = strlen(r->path);
    for (int32_t k = 0; k < f->count; k++) {
        snprintf(r->path + keep, sizeof r->path - keep, "[%d]", (int)k);
        tecs_err_t e = get_elem(r, f, json_array_get(j, (size_t)k),
                                dst ? dst + f->offset + (size_t)k * es : NULL);
        if (e)
            return e;
    }
    r->path[keep] = '\0';
    return TECS_OK;
}

/* The fields of described component c from object o into dst (NULL: check
** only). A field the object leaves out stays zero; a name the description
** does not have is an error. */
static tecs_err_t get_fields(reader *r, tecs_comp_t c, json_t *o, char *dst)
{
    if (!json_is_object(o))
        return BAD(r, "%s", "expected an object of fields");
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(r->w, c, &n);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        int32_t i = 0;
        while (i < n && strcmp(f[i].name, key) != 0)
            i++;
        size_t keep = path_push(r, key);
        if (i == n)
            return BAD(r, "%s", "no such field in the description");
        tecs_err_t e = get_field(r, &f[i], v, dst);
        if (e)
            return e;
        r->path[keep] = '\0';
    }
    return TECS_OK;
}

/* The registered component named name, or 0. */
static tecs_comp_t find_comp(const reader *r, const char *name)
{
    for (int32_t i = 0; i < r->nids; i++)
        if (strcmp(tecs_component_name(r->w, r->ids[i]), name) == 0)
            return r->ids[i];
    return 0;
}

/* Check one value of component c. */
static tecs_err_t check_value(reader *r, tecs_comp_t c, json_t *v)
{
    r->path[0] = '\0';
    if (tecs_component_size(r->w, c) == 0) {
        if (!json_is_true(v))
            return fail(r->err, TECS_EFORMAT, "%s, tag '%s': expected true", r->ent, r->comp);
        return TECS_OK;
    }
    if (tecs_component_fields(r->w, c, NULL) == NULL) {
        if (!json_is_null(v))
            return fail(r->err, TECS_EFORMAT, "%s, component '%s': it has no description, "
                        "so its value is null", r->ent, r->comp);
        return TECS_OK;
    }
    return get_fields(r, c, v, NULL);
}

/* Check the "pairs" of an entity (NULL: none): each an object of a
** relation's name, a target id and, for a relation with a size, a value.
** The targets are checked once every id of the text is known
** (check_targets). */
static tecs_err_t check_pairs(reader *r, json_t *ps)
{
    if (ps == NULL)
        return TECS_OK;
    if (!json_is_array(ps))
        return fail(r->err, TECS_EFORMAT, "%s: \"pairs\" must be an array", r->ent);
    for (size_t k = 0; k < json_array_size(ps); k++) {
        json_t *p = json_array_get(ps, k), *v;
        const char *key, *name = json_string_value(json_object_get(p, "relation"));
        tecs_entity_t t;
        if (!json_is_object(p) || name == NULL || !parse_id(json_object_get(p, "target"), &t) ||
            t == 0)
            return fail(r->err, TECS_EFORMAT, "%s: \"pairs\"[%lu] must be {\"relation\": "
                        "name, \"target\": [slot, generation]}", r->ent, (unsigned long)k);
        json_object_foreach(p, key, v)
            if (strcmp(key, "relation") && strcmp(key, "target") && strcmp(key, "value"))
                return fail(r->err, TECS_EFORMAT, "%s: \"pairs\"[%lu]: unknown key '%s'",
                            r->ent, (unsigned long)k, key);
        tecs_comp_t c = find_comp(r, name);
        if (c == 0 || !is_relation(r->w, c))
            return fail(r->err, c ? TECS_EFORMAT : TECS_ENOCOMP, "%s: \"pairs\"[%lu]: no "
                        "relation named '%s' in the world", r->ent, (unsigned long)k, name);
        r->comp = name;
        v = json_object_get(p, "value");
        bool sized = tecs_component_size(r->w, c) > 0;
        if (!sized && v != NULL)
            return fail(r->err, TECS_EFORMAT, "%s: \"pairs\"[%lu]: '%s' is a tag relation, "
                        "with no value", r->ent, (unsigned long)k, name);
        if (sized && v == NULL)
            return fail(r->err, TECS_EFORMAT, "%s: \"pairs\"[%lu]: '%s' needs a \"value\"",
                        r->ent, (unsigned long)k, name);
        tecs_err_t e = sized ? check_value(r, c, v) : TECS_OK;
        if (e)
            return e;
    }
    return TECS_OK;
}

/* Check entity object o (number i of the text); *old gets its id. */
static tecs_err_t check_entity(reader *r, json_t *o, size_t i, tecs_entity_t *old)
{
    snprintf(r->ent, sizeof r->ent, "entities[%lu]", (unsigned long)i);
    if (!json_is_object(o))
        return fail(r->err, TECS_EFORMAT, "%s: expected an object", r->ent);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
        if (strcmp(key, "id") && strcmp(key, "components") && strcmp(key, "disabled") &&
            strcmp(key, "pairs"))
            return fail(r->err, TECS_EFORMAT, "%s: unknown key '%s'", r->ent, key);
    if (!parse_id(json_object_get(o, "id"), old) || *old == 0)
        return fail(r->err, TECS_EFORMAT, "%s: \"id\" must be [slot, generation], the slot "
                    "0..4294967295, the generation 1..4294967295", r->ent);
    snprintf(r->ent, sizeof r->ent, "entity [%lu, %lu]", (unsigned long)TECS_ENTITY_INDEX(*old),
             (unsigned long)TECS_ENTITY_GENERATION(*old));
    json_t *cs = json_object_get(o, "components");
    if (!json_is_object(cs))
        return fail(r->err, TECS_EFORMAT, "%s: \"components\" must be an object", r->ent);
    json_object_foreach(cs, key, v) {
        r->comp = key;
        tecs_comp_t c = find_comp(r, key);
        if (c == 0)
            return fail(r->err, TECS_ENOCOMP, "%s: no component named '%s' in the world",
                        r->ent, key);
        if (is_relation(r->w, c))
            return fail(r->err, TECS_EFORMAT, "%s: '%s' is a relation: its pairs go under "
                        "\"pairs\"", r->ent, key);
        tecs_err_t e = check_value(r, c, v);
        if (e)
            return e;
    }
    tecs_err_t e = check_pairs(r, json_object_get(o, "pairs"));
    if (e)
        return e;
    json_t *dis = json_object_get(o, "disabled");
    if (dis == NULL)
        return TECS_OK;
    if (!json_is_array(dis))
        return fail(r->err, TECS_EFORMAT, "%s: \"disabled\" must be an array of names", r->ent);
    for (size_t k = 0; k < json_array_size(dis); k++) {
        const char *name = json_string_value(json_array_get(dis, k));
        tecs_comp_t c = name ? find_comp(r, name) : 0;
        if (c == 0 || !json_object_get(cs, name) || !tecs_component_enableable(r->w, c))
            return fail(r->err, TECS_EFORMAT, "%s: \"disabled\"[%lu] must name an enableable "
                        "component of the entity", r->ent, (unsigned long)k);
    }
    return TECS_OK;
}

/* The world's error of a failed call, as the import's. */
static tecs_err_t world_fail(reader *r, const char *what)
{
    return fail(r->err, tecs_last_error(r->w), "%s, %s: %s", r->ent, what,
                tecs_last_error_msg(r->w));
}

/* Give entity e the values of checked entity object o. */
static tecs_err_t set_entity(reader *r, json_t *o, tecs_entity_t e)
{
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(o, "components"), key, v) {
        tecs_comp_t c = find_comp(r, key);
        size_t size = tecs_component_size(r->w, c);
        r->comp = key;
        if (size == 0 || tecs_component_fields(r->w, c, NULL) == NULL) {
            if (tecs_add(r->w, e, c))
                return world_fail(r, key);
            continue;
        }
        char *stage = calloc(1, size);
        if (stage == NULL)
            return fail(r->err, TECS_ENOMEM, "out of memory reading JSON");
        tecs_err_t err = get_fields(r, c, v, stage);
        if (!err && tecs_set(r->w, e, c, stage))
            err = world_fail(r, key);
        free(stage);
        if (err)
            return err;
    }
    json_t *dis = json_object_get(o, "disabled");
    for (size_t k = 0; k < json_array_size(dis); k++) {
        const char *name = json_string_value(json_array_get(dis, k));
        if (tecs_enable(r->w, e, find_comp(r, name), false))
            return world_fail(r, name);
    }
    return TECS_OK;
}

/* Give entity e the pairs of checked entity object o, targets mapped. */
static tecs_err_t set_pairs(reader *r, json_t *o, tecs_entity_t e)
{
    json_t *ps = json_object_get(o, "pairs");
    for (size_t k = 0; k < json_array_size(ps); k++) {
        json_t *p = json_array_get(ps, k), *v = json_object_get(p, "value");
        const char *name = json_string_value(json_object_get(p, "relation"));
        tecs_comp_t c = find_comp(r, name);
        tecs_entity_t t;
        parse_id(json_object_get(p, "target"), &t);
        t = map_id(r, t);
        r->comp = name;
        if (v == NULL || tecs_component_fields(r->w, c, NULL) == NULL) {
            if (pair_put(r->w, e, c, t, NULL))
                return world_fail(r, name);
            continue;
        }
        char *stage = calloc(1, tecs_component_size(r->w, c));
        if (stage == NULL)
            return fail(r->err, TECS_ENOMEM, "out of memory reading JSON");
        tecs_err_t err = get_fields(r, c, v, stage);
        if (!err && pair_put(r->w, e, c, t, stage))
            err = world_fail(r, name);
        free(stage);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Make entities for the n objects of ents (checked; olds their ids), set
** their values, then their pairs; on failure destroy them all. */
static tecs_err_t make_entities(reader *r, json_t **ents, const tecs_entity_t *olds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        r->map[i] = (idmap){ olds[i], tecs_new(r->w) };
        if (r->map[i].now == 0) {
            tecs_err_t e = world_fail(r, "a new entity");
            for (size_t k = 0; k < i; k++)
                tecs_destroy(r->w, r->map[k].now);
            return e;
        }
    }
    tecs_entity_t *now = malloc(n * sizeof *now + 1);
    tecs_err_t e = now ? TECS_OK : fail(r->err, TECS_ENOMEM, "out of memory reading JSON");
    for (size_t i = 0; i < n && now; i++)
        now[i] = r->map[i].now;
    r->nmap = n;
    qsort(r->map, n, sizeof *r->map, by_old);
    for (size_t i = 0; i < n && !e; i++) {
        snprintf(r->ent, sizeof r->ent, "entity [%lu, %lu]",
                 (unsigned long)TECS_ENTITY_INDEX(olds[i]),
                 (unsigned long)TECS_ENTITY_GENERATION(olds[i]));
        e = set_entity(r, ents[i], now[i]);
    }
    for (size_t i = 0; i < n && !e; i++) {
        snprintf(r->ent, sizeof r->ent, "entity [%lu, %lu]",
                 (unsigned long)TECS_ENTITY_INDEX(olds[i]),
                 (unsigned long)TECS_ENTITY_GENERATION(olds[i]));
        e = set_pairs(r, ents[i], now[i]);
    }
    for (size_t i = 0; i < n && e; i++)
        if (tecs_is_alive(r->w, now ? now[i] : r->map[i].now))  /* (a subtree goes whole) */
            tecs_destroy(r->w, now ? now[i] : r->map[i].now);
    free(now);
    return e;
}

/* Parse text into *root; check the world can take it. */
static tecs_err_t begin(reader *r, const char *text, size_t len, json_t **root)
{
    *root = NULL;
    if (r->w == NULL || text == NULL)
        return fail(r->err, TECS_EINVAL, "NULL world or text");
    if (tecs_is_deferred(r->w))
        return fail(r->err, TECS_EBUSY, "the world is deferred (a callback, an iteration or a "
                    "deferred section): an import applies at once");
    if (r->whole && tecs_world_entity_count(r->w) != 0)
        return fail(r->err, TECS_EINVAL, "the world has %ld entities: a whole world is read "
                    "into a world without any", (long)tecs_world_entity_count(r->w));
    json_error_t je;
    *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (*root == NULL) {
        fail(r->err, TECS_EFORMAT, "malformed JSON at line %d, column %d: %s", je.line,
             je.column, je.text);
        if (r->err) {
            r->err->line = je.line;
            r->err->column = je.column;
        }
        return TECS_EFORMAT;
    }
    r->ids = malloc(TECS_MAX_COMPONENTS * sizeof *r->ids);
    if (r->ids == NULL)
        return fail(r->err, TECS_ENOMEM, "out of memory reading JSON");
    r->nids = components(r->w, r->ids);
    return TECS_OK;
}

/* Check the envelope of a whole world; *ents gets its entity array. */
static tecs_err_t check_world(reader *r, json_t *root, json_t **ents)
{
    if (!json_is_object(root))
        return fail(r->err, TECS_EFORMAT, "expected an object at the top");
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
        if (strcmp(key, "format") && strcmp(key, "version") && strcmp(key, "entities"))
            return fail(r->err, TECS_EFORMAT, "unknown key '%s' at the top", key);
    const char *format = json_string_value(json_object_get(root, "format"));
    if (format == NULL || strcmp(format, FORMAT_NAME) != 0)
        return fail(r->err, TECS_EFORMAT, "\"format\" must be \"%s\"", FORMAT_NAME);
    json_t *version = json_object_get(root, "version");
    if (!json_is_integer(version) || json_integer_value(version) != FORMAT_VERSION)
        return fail(r->err, TECS_EFORMAT, "\"version\" must be %d (this library's)",
                    FORMAT_VERSION);
    *ents = json_object_get(root, "entities");
    if (!json_is_array(*ents))
        return fail(r->err, TECS_EFORMAT, "\"entities\" must be an array");
    return TECS_OK;
}

/* Every target of checked entity object o (id old) is an entity of the
** text, or, for one entity, itself or alive in the world (r->map sorted
** by the text's ids). */
static tecs_err_t check_targets(reader *r, json_t *o, tecs_entity_t old)
{
    json_t *ps = json_object_get(o, "pairs");
    for (size_t k = 0; k < json_array_size(ps); k++) {
        tecs_entity_t t;
        parse_id(json_object_get(json_array_get(ps, k), "target"), &t);
        idmap key = { t, 0 };
        bool known = bsearch(&key, r->map, r->nmap, sizeof key, by_old) != NULL ||
                     (!r->whole && t != old && tecs_is_alive(r->w, t));
        if (!known)
            return fail(r->err, TECS_EFORMAT, "entity [%lu, %lu]: \"pairs\"[%lu]: the target "
                        "[%lu, %lu] is %s", (unsigned long)TECS_ENTITY_INDEX(old),
                        (unsigned long)TECS_ENTITY_GENERATION(old), (unsigned long)k,
                        (unsigned long)TECS_ENTITY_INDEX(t),
                        (unsigned long)TECS_ENTITY_GENERATION(t),
                        r->whole ? "not in the text" : "not alive in the world");
    }
    return TECS_OK;
}

/* Check every entity of ents (n of them) into olds; ids must not repeat;
** every pair's target must be known. */
static tecs_err_t check_all(reader *r, json_t **ents, tecs_entity_t *olds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tecs_err_t e = check_entity(r, ents[i], i, &olds[i]);
        if (e)
            return e;
        r->map[i] = (idmap){ olds[i], 0 };
    }
    qsort(r->map, n, sizeof *r->map, by_old);
    for (size_t i = 1; i < n; i++)
        if (r->map[i].old == r->map[i - 1].old)
            return fail(r->err, TECS_EFORMAT, "entity [%lu, %lu] is given twice",
                        (unsigned long)TECS_ENTITY_INDEX(r->map[i].old),
                        (unsigned long)TECS_ENTITY_GENERATION(r->map[i].old));
    r->nmap = n;
    for (size_t i = 0; i < n; i++) {
        tecs_err_t e = check_targets(r, ents[i], olds[i]);
        if (e)
            return e;
    }
    r->nmap = 0;
    return TECS_OK;
}

/* Read text (a world, or one entity into *made). */
static tecs_err_t import(reader *r, const char *text, size_t len, tecs_entity_t *made)
{
    json_t *root, *arr = NULL;
    tecs_err_t e = begin(r, text, len, &root);
    if (!e && r->whole)
        e = check_world(r, root, &arr);
    size_t n = e ? 0 : r->whole ? json_array_size(arr) : 1;
    json_t **ents = malloc(n * sizeof *ents + 1);
    tecs_entity_t *olds = malloc(n * sizeof *olds + 1);
    r->map = malloc(n * sizeof *r->map + 1);
    if (!e && (ents == NULL || olds == NULL || r->map == NULL))
        e = fail(r->err, TECS_ENOMEM, "out of memory reading JSON");
    for (size_t i = 0; i < n && !e; i++)
        ents[i] = r->whole ? json_array_get(arr, i) : root;
    if (!e)
        e = check_all(r, ents, olds, n);
    if (!e)
        e = make_entities(r, ents, olds, n);
    if (!e && made)
        *made = r->map[0].now;
    if (!e && r->err)
        *r->err = (tecs_json_error_t){ 0 };
    free(ents);
    free(olds);
    free(r->map);
    free(r->ids);
    json_decref(root);
    return e;
}

/* Give every string field of stage (pointing into the parsed text, or
** NULL) a malloc'd copy of its text; once memory runs out (*oom) the rest
** become NULL, so that tecs_json_free_value can free what was copied. */
static void own_strings(tecs_world_t *w, tecs_comp_t c, char *stage, bool *oom)
{
    int32_t n;
    const tecs_field_t *f = tecs_component_fields(w, c, &n);
    for (int32_t i = 0; i < n; i++) {
        size_t es = f[i].type == TECS_TYPE_STRUCT ? tecs_component_size(w, f[i].comp)
                                                  : tecs_type_size(f[i].type);
        for (int32_t k = 0; k < f[i].count; k++) {
            char *at = stage + f[i].offset + (size_t)k * es, *str, *copy = NULL;
            if (f[i].type == TECS_TYPE_STRUCT) {
                own_strings(w, f[i].comp, at, oom);
                continue;
            }
            if (f[i].type != TECS_TYPE_STRING)
                continue;
            memcpy(&str, at, sizeof str);
            if (str && !*oom) {
                size_t len = strlen(str) + 1;
                copy = malloc(len);
                *oom = copy == NULL;
                if (copy)
                    memcpy(copy, str, len);
            }
            memcpy(at, &copy, sizeof copy);
        }
    }
}

tecs_err_t tecs_json_import(tecs_world_t *w, const char *text, size_t len,
                            tecs_json_error_t *err)
{
    reader r = { .w = w, .err = err, .whole = true };
    return import(&r, text, len, NULL);
}

tecs_entity_t tecs_json_import_entity(tecs_world_t *w, const char *text, size_t len,
                                      tecs_json_error_t *err)
{
    reader r = { .w = w, .err = err, .whole = false };
    tecs_entity_t e = 0;
    return import(&r, text, len, &e) ? 0 : e;
}

tecs_err_t tecs_json_import_value(tecs_world_t *w, tecs_comp_t c, const char *text, size_t len,
                                  void *value, tecs_json_error_t *err)
{
    const char *name = w ? tecs_component_name(w, c) : NULL;
    if (w == NULL || text == NULL)
        return fail(err, TECS_EINVAL, "tecs_json_import_value: NULL %s", w ? "text" : "world");
    if (name == NULL)
        return fail(err, TECS_ENOCOMP, "tecs_json_import_value: no component %lu",
                    (unsigned long)c);
    bool described = tecs_component_fields(w, c, NULL) != NULL;
    if (described && value == NULL)
        return fail(err, TECS_EINVAL, "tecs_json_import_value: NULL value of '%s'", name);
    idmap none = { 0, 0 };      /* no text ids to map: entity fields stay if alive */
    reader r = { .w = w, .err = err, .map = &none, .comp = name };
    snprintf(r.ent, sizeof r.ent, "value");
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (root == NULL) {
        fail(err, TECS_EFORMAT, "malformed JSON at line %d, column %d: %s", je.line,
             je.column, je.text);
        if (err) {
            err->line = je.line;
            err->column = je.column;
        }
        return TECS_EFORMAT;
    }
    size_t size = tecs_component_size(w, c);
    char *stage = described ? calloc(1, size) : NULL;
    tecs_err_t e = described && stage == NULL
                       ? fail(err, TECS_ENOMEM, "out of memory reading JSON")
                       : check_value(&r, c, root);
    if (!e && described)
        e = get_fields(&r, c, root, stage);
    bool oom = false;
    if (!e && described)
        own_strings(w, c, stage, &oom);
    if (!e && oom) {
        tecs_json_free_value(w, c, stage);
        e = fail(err, TECS_ENOMEM, "out of memory reading JSON");
    }
    if (!e && described)
        memcpy(value, stage, size);
    if (!e && err)
        *err = (tecs_json_error_t){ 0 };
    free(stage);
    json_decref(root);
    return e;
}

void tecs_json_free_value(tecs_world_t *w, tecs_comp_t c, void *value)
{
    int32_t n;
    const tecs_field_t *f = w && value ? tecs_component_fields(w, c, &n) : NULL;
    for (int32_t i = 0; f && i < n; i++) {
        size_t es = f[i].type == TECS_TYPE_STRUCT ? tecs_component_size(w, f[i].comp)
                                                  : tecs_type_size(f[i].type);
        for (int32_t k = 0; k < f[i].count; k++) {
            char *at = (char *)value + f[i].offset + (size_t)k * es;
            if (f[i].type == TECS_TYPE_STRUCT) {
                tecs_json_free_value(w, f[i].comp, at);
            } else if (f[i].type == TECS_TYPE_STRING) {
                char *str, *none = NULL;
                memcpy(&str, at, sizeof str);
                free(str);
                memcpy(at, &none, sizeof none);
            }
        }
    }
}

void tecs_json_free(char *text)
{
    free(text);
}
