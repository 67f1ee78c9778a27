/*
** meta.h — component descriptions (meta.c): the checked copy of the fields
** a component was registered with, and its layout hash. What JSON, field
** indexes, tools and a saver read. Included by private.h only.
**
** A saver's use: tecs__comp_meta(w, c) gives the description (NULL when
** the component has none); its hash names the layout (names, types,
** offsets, counts and nested layouts, the component's size), the same on
** every run and platform for the same layout, so a loader can refuse a
** value saved under another one. A string field is read with
** tecs__meta_str_read. It is written by building a staging value whose
** field points at the loader's own text (tecs__meta_str_write) and handing
** it to the world (tecs_set): the component's copy hook, which a component
** with strings always has, duplicates the text into the stored value, and
** the staging value is released by the loader, never by the dtor hook.
*/
#ifndef TECS_META_H
#define TECS_META_H

typedef struct tecs__meta {
    tecs_field_t *fields;       /* nfields, in registration order; count >= 1;
                                   the names follow in the same block       */
    int32_t nfields;
    size_t bytes;               /* the block's size, for tecs__free         */
    uint64_t hash;              /* the layout hash (tecs__meta_new)         */
    bool strings;               /* a string field, here or nested           */
} tecs__meta;

/* Check d's description (TECS_EINVAL naming the field) and copy it into
** one block: *out is the copy, or NULL when d has no fields. */
tecs_err_t tecs__meta_new(tecs_world_t *w, const tecs_component_desc_t *d, tecs__meta **out);
/* Free a copy (NULL does nothing). */
void tecs__meta_free(tecs_world_t *w, tecs__meta *m);
/* The bytes of one element of f (a nested component's size for a struct). */
size_t tecs__meta_elem_size(const tecs_world_t *w, const tecs_field_t *f);

/* The pointer of a string field at offset in a value (may be NULL). */
static inline const char *tecs__meta_str_read(const void *value, size_t offset)
{
    const char *s;
    memcpy(&s, (const char *)value + offset, sizeof s);
    return s;
}

/* Point the string field at offset of a staging value at s, which the
** caller keeps owning (see the top of this file). */
static inline void tecs__meta_str_write(void *staging, size_t offset, const char *s)
{
    memcpy((char *)staging + offset, &s, sizeof s);
}

/* Turn a value of c, described, from the other byte order into this
** host's, field by field (bytes no field covers stay as they are). False,
** the value untouched, if c has no description or a string field, here
** or nested (nested components are always described). */
bool tecs__meta_swap(const tecs_world_t *w, tecs_comp_t c, void *value);

#endif /* TECS_META_H */
