/*
** snapshot/serializer.c — how a component's values are written: as their
** bytes (plain data), through the component's serializer hooks
** (tecs_component_serializer sets them; a serialize hook writes with
** tecs_snapshot_put), or, a component with lifecycle hooks and a
** description but no serializer, field by field from its description
** (tecs__snap_fields_put, read back by tecs__snap_fields_get). encoding(),
** in internal.h, tells which; the component table saves it, and the
** loader refuses a component whose encoding differs from the saved one.
**
** A serializer runs with the world closed as TECS__SNAPSHOT (cb_close):
** whatever it calls is refused, and the memory it writes to grows through
** tecs__snap_realloc_closed, which opens the allocator for the one call.
**
** Calls: alloc, component, meta.
*/
#include "internal.h"

tecs_err_t tecs_component_serializer(tecs_world_t *w, tecs_comp_t c, const tecs_serializer_t *s)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (w->base.cb_depth > 0)
        return tecs__err(w, TECS_EBUSY, "tecs_component_serializer cannot run inside a callback");
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    if (s && (s->serialize == NULL) != (s->deserialize == NULL))
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT ": a serializer needs both serialize "
                         "and deserialize, or neither", TECS__COMP(w, c));
    tecs__comp *ci = &w->comp.comps[c];
    ci->serialize = s ? s->serialize : NULL;
    ci->deserialize = s ? s->deserialize : NULL;
    ci->convert = s ? s->convert : NULL;
    ci->serial_ctx = s ? s->ctx : NULL;
    return TECS_OK;
}

void *tecs__snap_realloc_closed(tecs_world_t *w, void *p, size_t old, size_t n)
{
    uint8_t was = w->base.closed;
    tecs__set_closed(w, TECS__OPEN);
    void *q = tecs__realloc(w, p, old, n);
    tecs__set_closed(w, was);
    return q;
}

tecs_err_t tecs_snapshot_put(tecs_snapshot_out_t *out, const void *data, size_t n)
{
    if (out == NULL || (data == NULL && n > 0))
        return TECS_EINVAL;
    if (n > SNAP_MAX_BLOB - out->size)
        return TECS_ENOMEM;
    if (out->size + n > out->cap) {
        size_t cap = out->cap ? out->cap : 256;
        while (cap < out->size + n)
            cap *= 2;
        void *p = tecs__snap_realloc_closed(out->w, out->data, out->cap, cap);
        if (p == NULL)
            return TECS_ENOMEM;
        out->data = p;
        out->cap = cap;
    }
    if (n > 0)
        memcpy(out->data + out->size, data, n);
    out->size += n;
    return TECS_OK;
}

/* ---- values field by field (ENC_FIELDS) --------------------------------

** Each element of each field in order: a scalar as its bytes, little-
** endian; a string as u32 length (0xffffffff for NULL) and its bytes; a
** nested component the same way, field by field. */

#define NULL_STR 0xffffffffu

tecs_err_t tecs__snap_fields_put(const tecs_world_t *w, tecs_comp_t c, const unsigned char *v,
                                 tecs_snapshot_out_t *out)
{
    const tecs__meta *m = tecs__comp_meta(w, c);
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; m && i < m->nfields && !err; i++) {
        const tecs_field_t *f = &m->fields[i];
        size_t size = tecs__meta_elem_size(w, f);
        for (int32_t k = 0; k < f->count && !err; k++) {
            const unsigned char *at = v + f->offset + (size_t)k * size;
            unsigned char b[8];
            if (f->type == TECS_TYPE_STRUCT) {
                err = tecs__snap_fields_put(w, f->comp, at, out);
            } else if (f->type == TECS_TYPE_STRING) {
                const char *str = tecs__meta_str_read(at, 0);
                size_t len = str ? strlen(str) : 0;
                if (len >= NULL_STR)
                    return TECS_ENOMEM;
                put32(b, str ? (uint32_t)len : NULL_STR);
                if ((err = tecs_snapshot_put(out, b, 4)) == TECS_OK && str)
                    err = tecs_snapshot_put(out, str, len);
            } else {
                for (size_t j = 0; j < size; j++)   /* the host's order to little-endian */
                    b[j] = at[host_big() ? size - 1 - j : j];
                err = tecs_snapshot_put(out, b, size);
            }
        }
    }
    return err;
}

bool tecs__snap_fields_get(const tecs_world_t *w, tecs_comp_t c, unsigned char *v,
                           const unsigned char *in, size_t n, size_t *pos, char **text)
{
    const tecs__meta *m = tecs__comp_meta(w, c);
    for (int32_t i = 0; m && i < m->nfields; i++) {
        const tecs_field_t *f = &m->fields[i];
        size_t size = tecs__meta_elem_size(w, f);
        for (int32_t k = 0; k < f->count; k++) {
            unsigned char *at = v + f->offset + (size_t)k * size;
            if (f->type == TECS_TYPE_STRUCT) {
                if (!tecs__snap_fields_get(w, f->comp, at, in, n, pos, text))
                    return false;
            } else if (f->type == TECS_TYPE_STRING) {
                if (n - *pos < 4)
                    return false;
                uint32_t len = get32(in + *pos);
                *pos += 4;
                if (len == NULL_STR)
                    continue;           /* (the staging value is zeroed: NULL) */
                if (len > n - *pos)
                    return false;
                memcpy(*text, in + *pos, len);
                (*text)[len] = 0;
                tecs__meta_str_write(at, 0, *text);
                *text += len + 1;
                *pos += len;
            } else {
                if (n - *pos < size)
                    return false;
                for (size_t j = 0; j < size; j++)
                    at[host_big() ? size - 1 - j : j] = in[*pos + j];
                *pos += size;
            }
        }
    }
    return true;
}
