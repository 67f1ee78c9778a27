/*
** meta.c — component descriptions (reflection).
**
** A component may be registered with a description: its fields, each a
** name, a type, an offset and a count (a fixed-size array), a nested
** described component for TECS_TYPE_STRUCT. The registry (component.c)
** asks this file to check the description and copy it before it commits a
** registration; the copy is one block, the fields then their names:
**
**     [ tecs__meta | fields[0..n-1] | "x\0" "y\0" ... ]
**                    name ----------^
**
** and hangs on the registry entry (tecs__comp.meta) until the world is
** freed. A description never changes after registration, so a nested
** component's size and hash read at registration stay true.
**
** Invariants of a copy: every count >= 1; every field lies inside the
** component and no two overlap; names are unique, non-empty and hold no
** '.', which separates the steps of a path ("pos.x"); a nested component
** is described; a component with a string field, its own or nested, has
** copy and dtor hooks, which own the strings.
**
** The layout hash is 64-bit FNV-1a over a fixed little-endian encoding of
** the component's size and, per field in order, its name, type, offset,
** count and nested hash: the same layout gives the same hash on every run
** and platform, and any change to one of those gives another.
**
** This file sits below component.c: it reads nested components' entries
** through the registry's inline accessors, which call nothing.
**
** Calls: base.c.
*/
#include "private.h"

static const char *const type_names[] = {
    "?", "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    "f32", "f64", "entity", "string", "struct",
};

static const size_t type_sizes[] = {
    0, sizeof(bool), 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, sizeof(tecs_entity_t), sizeof(char *), 0,
};

static bool type_ok(tecs_type_t t)
{
    return t >= TECS_TYPE_BOOL && t <= TECS_TYPE_STRUCT;
}

const char *tecs_type_name(tecs_type_t t)
{
    return type_ok(t) ? type_names[t] : "?";
}

size_t tecs_type_size(tecs_type_t t)
{
    return type_ok(t) ? type_sizes[t] : 0;
}

size_t tecs__meta_elem_size(const tecs_world_t *w, const tecs_field_t *f)
{
    if (f->type != TECS_TYPE_STRUCT)
        return type_sizes[f->type];
    const tecs__comp *ci = tecs__comp_get(w, f->comp);
    return ci ? ci->size : 0;
}

/* ---- checking -------------------------------------------------------- */

/* Record TECS_EINVAL for field i of d. */
#define FIELD_ERR(w, d, i, fmt, ...)                                        \
    tecs__err((w), TECS_EINVAL, "component '%s', field %d ('%s'): " fmt, (d)->name, (int)(i), \
              (d)->fields[i].name ? (d)->fields[i].name : "(null)", __VA_ARGS__)

/* Check field i of d alone: name, type, count, nested component, room. */
static tecs_err_t check_field(tecs_world_t *w, const tecs_component_desc_t *d, int32_t i)
{
    const tecs_field_t *f = &d->fields[i];
    if (f->name == NULL || f->name[0] == '\0')
        return FIELD_ERR(w, d, i, "%s", "a field needs a name");
    if (strchr(f->name, '.'))
        return FIELD_ERR(w, d, i, "%s", "a name cannot hold '.', which separates a path");
    for (int32_t j = 0; j < i; j++)
        if (strcmp(d->fields[j].name, f->name) == 0)
            return FIELD_ERR(w, d, i, "the name is given twice (field %d)", (int)j);
    if (!type_ok(f->type))
        return FIELD_ERR(w, d, i, "type %d is not a tecs_type_t", (int)f->type);
    if (f->count < 0)
        return FIELD_ERR(w, d, i, "count %d is below 1", (int)f->count);
    if (f->type == TECS_TYPE_STRUCT) {
        const tecs__meta *m = tecs__comp_meta(w, f->comp);
        if (tecs__comp_get(w, f->comp) == NULL)
            return FIELD_ERR(w, d, i, "nested component %u is unknown", f->comp);
        if (m == NULL)
            return FIELD_ERR(w, d, i, "nested " TECS__COMP_FMT " has no description",
                             TECS__COMP(w, f->comp));
        if (m->strings && (d->copy == NULL || d->dtor == NULL))
            return FIELD_ERR(w, d, i, "nested " TECS__COMP_FMT " holds strings: the component "
                             "needs copy and dtor hooks, which own them", TECS__COMP(w, f->comp));
    }
    if (f->type == TECS_TYPE_STRING && (d->copy == NULL || d->dtor == NULL))
        return FIELD_ERR(w, d, i, "%s", "a string field needs the component's copy and dtor "
                         "hooks, which own the string");
    uint64_t bytes = (uint64_t)tecs__meta_elem_size(w, f) * (uint64_t)(f->count ? f->count : 1);
    if (f->offset > d->size || bytes > d->size - f->offset)
        return FIELD_ERR(w, d, i, "%llu bytes at offset %zu do not fit inside %zu bytes",
                         (unsigned long long)bytes, f->offset, d->size);
    return TECS_OK;
}

/* The end of field f (offset past its last element). */
static size_t field_end(const tecs_world_t *w, const tecs_field_t *f)
{
    return f->offset + tecs__meta_elem_size(w, f) * (size_t)(f->count ? f->count : 1);
}

/* No two fields of d overlap: sorted by offset, each ends before the next
** begins. */
static tecs_err_t check_overlap(tecs_world_t *w, const tecs_component_desc_t *d)
{
    int16_t by_off[TECS_MAX_FIELDS];
    for (int32_t i = 0; i < d->nfields; i++) {
        int32_t j = i;
        for (; j > 0 && d->fields[by_off[j - 1]].offset > d->fields[i].offset; j--)
            by_off[j] = by_off[j - 1];
        by_off[j] = (int16_t)i;
    }
    for (int32_t k = 1; k < d->nfields; k++) {
        const tecs_field_t *a = &d->fields[by_off[k - 1]];
        if (field_end(w, a) > d->fields[by_off[k]].offset)
            return FIELD_ERR(w, d, by_off[k], "it overlaps field '%s' (bytes %zu..%zu)",
                             a->name, a->offset, field_end(w, a) - 1);
    }
    return TECS_OK;
}

static tecs_err_t check_desc(tecs_world_t *w, const tecs_component_desc_t *d)
{
    if (d->nfields < 0 || d->nfields > TECS_MAX_FIELDS)
        return tecs__err(w, TECS_EINVAL, "component '%s': %d fields, not 0..%d", d->name,
                         (int)d->nfields, TECS_MAX_FIELDS);
    if (d->nfields > 0 && d->fields == NULL)
        return tecs__err(w, TECS_EINVAL, "component '%s': %d fields but NULL fields",
                         d->name, (int)d->nfields);
    if (d->nfields > 0 && d->size == 0)
        return tecs__err(w, TECS_EINVAL, "tag '%s' (size 0) cannot have fields", d->name);
    for (int32_t i = 0; i < d->nfields; i++)
        if (check_field(w, d, i))
            return w->base.err;
    return check_overlap(w, d);
}

/* ---- the copy and its hash ------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3u;
    return h;
}

/* Hash x as 8 little-endian bytes, whatever the platform's order. */
static uint64_t fnv_u64(uint64_t h, uint64_t x)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(x >> (8 * i));
    return fnv(h, b, 8);
}

static uint64_t layout_hash(const tecs_world_t *w, const tecs_component_desc_t *d,
                            const tecs_field_t *fields)
{
    uint64_t h = fnv(0xcbf29ce484222325u, "tecs-layout-1", 13);
    h = fnv_u64(h, d->size);
    h = fnv_u64(h, (uint64_t)d->nfields);
    for (int32_t i = 0; i < d->nfields; i++) {
        const tecs_field_t *f = &fields[i];
        h = fnv(h, f->name, strlen(f->name) + 1);
        h = fnv_u64(h, (uint64_t)f->type);
        h = fnv_u64(h, f->offset);
        h = fnv_u64(h, (uint64_t)f->count);
        h = fnv_u64(h, f->type == TECS_TYPE_STRUCT ? tecs__comp_meta(w, f->comp)->hash : 0);
    }
    return h;
}

tecs_err_t tecs__meta_new(tecs_world_t *w, const tecs_component_desc_t *d, tecs__meta **out)
{
    *out = NULL;
    if (d->nfields == 0 && d->fields == NULL)
        return TECS_OK;
    if (check_desc(w, d))
        return w->base.err;
    if (d->nfields == 0)
        return TECS_OK;
    size_t names = 0;
    for (int32_t i = 0; i < d->nfields; i++)
        names += strlen(d->fields[i].name) + 1;
    size_t bytes = sizeof(tecs__meta) + (size_t)d->nfields * sizeof(tecs_field_t) + names;
    tecs__meta *m = tecs__alloc(w, bytes);
    if (m == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory registering component '%s'", d->name);
    *m = (tecs__meta){ .fields = (tecs_field_t *)(m + 1), .nfields = d->nfields,
                       .bytes = bytes };
    char *name = (char *)(m->fields + d->nfields);
    for (int32_t i = 0; i < d->nfields; i++) {
        tecs_field_t f = d->fields[i];
        size_t len = strlen(f.name) + 1;
        memcpy(name, f.name, len);
        f.name = name;
        name += len;
        f.count = f.count ? f.count : 1;
        f.comp = f.type == TECS_TYPE_STRUCT ? f.comp : 0;
        m->fields[i] = f;
        m->strings |= f.type == TECS_TYPE_STRING ||
                      (f.type == TECS_TYPE_STRUCT && tecs__comp_meta(w, f.comp)->strings);
    }
    m->hash = layout_hash(w, d, m->fields);
    *out = m;
    return TECS_OK;
}

void tecs__meta_free(tecs_world_t *w, tecs__meta *m)
{
    if (m)
        tecs__free(w, m, m->bytes);
}

/* ---- queries --------------------------------------------------------- */

const tecs_field_t *tecs_component_fields(const tecs_world_t *w, tecs_comp_t c, int32_t *count)
{
    const tecs__meta *m = w ? tecs__comp_meta(w, c) : NULL;
    if (count)
        *count = m ? m->nfields : 0;
    return m ? m->fields : NULL;
}

/* The field of m named by the len bytes at name, or NULL. */
static const tecs_field_t *find_step(const tecs__meta *m, const char *name, size_t len)
{
    for (int32_t i = 0; m && i < m->nfields; i++)
        if (strncmp(m->fields[i].name, name, len) == 0 && m->fields[i].name[len] == '\0')
            return &m->fields[i];
    return NULL;
}

const tecs_field_t *tecs_component_field(const tecs_world_t *w, tecs_comp_t c, const char *path,
                                         size_t *offset)
{
    if (w == NULL || path == NULL)
        return NULL;
    const tecs__meta *m = tecs__comp_meta(w, c);
    size_t off = 0;
    for (;;) {
        const char *dot = strchr(path, '.');
        size_t len = dot ? (size_t)(dot - path) : strlen(path);
        const tecs_field_t *f = find_step(m, path, len);
        if (f == NULL)
            return NULL;
        off += f->offset;
        if (dot == NULL) {
            if (offset)
                *offset = off;
            return f;
        }
        /* A path steps into one nested component, never into an array:
        ** it names one place. */
        if (f->type != TECS_TYPE_STRUCT || f->count != 1)
            return NULL;
        m = tecs__comp_meta(w, f->comp);
        path = dot + 1;
    }
}

/* ---- byte order ------------------------------------------------------- */

/* Reverse the n bytes at p. */
static void swap_bytes(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        unsigned char t = p[i];
        p[i] = p[n - 1 - i];
        p[n - 1 - i] = t;
    }
}

bool tecs__meta_swap(const tecs_world_t *w, tecs_comp_t c, void *value)
{
    const tecs__comp *ci = tecs__comp_get(w, c);
    const tecs__meta *m = ci ? ci->meta : NULL;
    if (m == NULL || m->strings)
        return false;
    for (int32_t i = 0; i < m->nfields; i++) {
        const tecs_field_t *f = &m->fields[i];
        size_t size = tecs__meta_elem_size(w, f);
        unsigned char *at = (unsigned char *)value + f->offset;
        for (int32_t k = 0; k < f->count; k++, at += size) {
            if (f->type == TECS_TYPE_STRUCT) {
                if (!tecs__meta_swap(w, f->comp, at))
                    return false;
            } else {
                swap_bytes(at, size);
            }
        }
    }
    return true;
}
