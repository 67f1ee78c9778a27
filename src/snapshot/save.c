/*
** snapshot/save.c — a world saved: the writer, and the snapshot's
** sections written (COMP, ENTS, ARCH, SPRS, RSRC; format.c draws them).
** Saving reads the world and changes nothing.
**
** The writer streams each section through an 8 KiB buffer to the user's
** writer callback, summing the payload on the way (tecs__w_begin opens a
** section, tecs__w_end writes its trailer). The memory helper's buffer
** (tecs__save_mem_write, known by its address) is written in place
** instead, with no copy through the buffer. Numbers are built in the
** buffer itself (w_room, w_commit), a buffer's worth at a time. The first
** failure is kept, and every later write skips.
**
** delta.c writes a delta with the same writer and the same sections'
** writers (tecs__save_comps, _rows, _bits, _sparse, _resources).
**
** Calls: format, serializer; resource, sparse, archetype, component,
** alloc.
*/
#include "internal.h"

#include <stdlib.h>

/* Room for n more bytes in the memory helper's buffer (malloc'd: the
** caller frees it with tecs_snapshot_buf_free). */
static tecs_err_t buf_reserve(tecs_snapshot_buf_t *b, size_t n)
{
    if (n <= b->cap - b->size)
        return TECS_OK;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->size < n) {
        if (cap > SIZE_MAX / 2)
            return TECS_ENOMEM;
        cap *= 2;
    }
    unsigned char *p = realloc(b->data, cap);
    if (p == NULL)
        return TECS_ENOMEM;
    b->data = p;
    b->cap = cap;
    return TECS_OK;
}

tecs_err_t tecs__save_mem_write(void *ctx, const void *data, size_t n)
{
    tecs_snapshot_buf_t *b = ctx;
    tecs_err_t err = buf_reserve(b, n);
    if (err)
        return err;
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return TECS_OK;
}

/* The end of the memory helper's buffer, with room for n bytes. */
static unsigned char *w_mem_room(writer *o, size_t n)
{
    tecs_err_t err = buf_reserve(o->mem, n);
    if (err) {
        o->err = tecs__err(o->w, err, "the snapshot's writer failed (%s)", tecs_err_name(err));
        return NULL;
    }
    return o->mem->data + o->mem->size;
}

void tecs__w_flush(writer *o)
{
    if (o->n == 0 || o->err)
        return;
    uint8_t was = cb_close(o->w);
    tecs_err_t err = o->fn(o->ctx, o->buf, o->n);
    cb_open(o->w, was);
    o->n = 0;
    if (err)
        o->err = tecs__err(o->w, err, "the snapshot's writer failed (%s)", tecs_err_name(err));
}

/* Bytes not summed: the header and the trailers. */
static void w_raw(writer *o, const void *data, size_t n)
{
    if (o->err)
        return;
    if (o->mem) {
        unsigned char *p = w_mem_room(o, n);
        if (p && n > 0) {
            memcpy(p, data, n);
            o->mem->size += n;
        }
        return;
    }
    if (n > sizeof o->buf - o->n) {
        tecs__w_flush(o);
        if (n >= sizeof o->buf / 2) {
            if (o->err)
                return;
            uint8_t was = cb_close(o->w);
            tecs_err_t err = o->fn(o->ctx, data, n);
            cb_open(o->w, was);
            if (err)
                o->err = tecs__err(o->w, err, "the snapshot's writer failed (%s)",
                                   tecs_err_name(err));
            return;
        }
    }
    memcpy(o->buf + o->n, data, n);
    o->n += n;
}

/* Bytes summed. The sum follows the copy: the copy reads the bytes from
** memory beside its writes, the sum then finds them in the cache. */
void tecs__w_bytes(writer *o, const void *data, size_t n)
{
    w_raw(o, data, n);
    tecs__sum_add(&o->sum, data, n);
}

/* Room for n bytes (at most the buffer's size) at the buffer's end, to
** be filled in place and kept by w_commit: numbers built there, not in a
** buffer of their own that tecs__w_bytes copies again. NULL after a failure. */
static unsigned char *w_room(writer *o, size_t n)
{
    if (o->err)
        return NULL;
    if (o->mem)
        return w_mem_room(o, n);
    if (n > sizeof o->buf - o->n)
        tecs__w_flush(o);
    return o->err ? NULL : o->buf + o->n;
}

/* Keep, and sum, the n bytes filled at w_room's pointer. */
static void w_commit(writer *o, size_t n)
{
    if (o->mem) {
        tecs__sum_add(&o->sum, o->mem->data + o->mem->size, n);
        o->mem->size += n;
        return;
    }
    tecs__sum_add(&o->sum, o->buf + o->n, n);
    o->n += n;
}

void tecs__w_u32(writer *o, uint32_t v)
{
    unsigned char b[4];
    put32(b, v);
    tecs__w_bytes(o, b, 4);
}

void tecs__w_begin(writer *o, uint32_t tag)
{
    unsigned char b[4];
    put32(b, tag);
    w_raw(o, b, 4);
    tecs__sum_init(&o->sum);
}

void tecs__w_end(writer *o)
{
    unsigned char b[16];
    put64(b, o->sum.total);
    put64(b + 8, tecs__sum_end(&o->sum));
    w_raw(o, b, 16);
}


/* One value through ci's serializer: its length, then its bytes. */
static void w_serial(writer *o, const tecs__comp *ci, tecs_comp_t c, const void *value)
{
    if (o->err)
        return;
    o->out.size = 0;
    uint8_t was = cb_close(o->w);
    tecs_err_t err = encoding(ci) == ENC_FIELDS
                     ? tecs__snap_fields_put(o->w, c, value, &o->out)
                     : ci->serialize(value, &o->out, ci->serial_ctx);
    cb_open(o->w, was);
    if (err) {
        o->err = tecs__err(o->w, err, "the serializer of " TECS__COMP_FMT " failed (%s)",
                           TECS__COMP(o->w, c), tecs_err_name(err));
        return;
    }
    tecs__w_u32(o, (uint32_t)o->out.size);
    tecs__w_bytes(o, o->out.data, o->out.size);
}

void tecs__save_header(writer *o, const unsigned char *kind)
{
    unsigned char b[24];
    memcpy(b, kind, 8);
    put32(b + 8, SNAP_VERSION);
    put32(b + 12, (host_big() ? SNAP_FLAG_BE : 0) |
                  (tecs__rel_count(o->w) > 0 ? SNAP_FLAG_RELS : 0));
    tecs__sum_init(&o->sum);
    tecs__sum_add(&o->sum, b, 16);
    put64(b + 16, tecs__sum_end(&o->sum));
    w_raw(o, b, 24);
}

/* Is c a component whose values the save writes: does some archetype
** with rows, its sparse set, or a resource hold one? */
static bool has_values(tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    if (ci->size == 0)
        return false;
    if (ci->sparse)
        return tecs__sparse_count(w, c) > 0 || tecs_resource_has(w, c);
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        const tecs_archetype_t *a = w->arch.archs[i];
        if (a->count > 0 && tecs__arch_col(a, c) >= 0)
            return true;
    }
    return tecs_resource_has(w, c);
}

/* COMP: count, then per component: id, name, size, align, storage,
** enableable, serialized, hidden, layout hash. */
/* A component's description in the table: u32 n, then per field its
** name (u32 length, bytes), u8 type, 3 bytes 0, u32 offset, u32 count, and
** u32 the nested component's place in the table (NO_PLACE: none). */

static void save_fields(writer *o, const tecs__comp *ci)
{
    const tecs__meta *m = ci->meta;
    tecs__w_u32(o, m ? (uint32_t)m->nfields : 0);
    for (int32_t i = 0; m && i < m->nfields; i++) {
        const tecs_field_t *f = &m->fields[i];
        unsigned char b[16] = { (unsigned char)f->type, 0, 0, 0 };
        uint32_t len = (uint32_t)strlen(f->name);
        tecs__w_u32(o, len);
        tecs__w_bytes(o, f->name, len);
        put32(b + 4, (uint32_t)f->offset);
        put32(b + 8, (uint32_t)f->count);
        put32(b + 12, f->type == TECS_TYPE_STRUCT ? o->index[f->comp] : NO_PLACE);
        tecs__w_bytes(o, b, 16);
    }
}

tecs_err_t tecs__save_comps(writer *o)
{
    tecs_world_t *w = o->w;
    uint32_t n = 0;
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci == NULL)
            continue;
        if (has_hooks(ci) && !serialized(ci) && has_values(w, c))
            return o->err = tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " has hooks but no serializer "
                             "(tecs_component_serializer) or description (its fields): its "
                             "values cannot be saved", TECS__COMP(w, c));
        o->index[c] = n++;
    }
    tecs__w_begin(o, TAG_COMP);
    tecs__w_u32(o, n);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci == NULL)
            continue;
        unsigned char b[12];
        uint32_t len = (uint32_t)(ci->name_len > SNAP_MAX_NAME ? SNAP_MAX_NAME : ci->name_len);
        if (ci->name_len > SNAP_MAX_NAME)
            return o->err = tecs__err(w, TECS_EINVAL, TECS__COMP_FMT ": a name above %u bytes cannot "
                             "be saved", TECS__COMP(w, c), SNAP_MAX_NAME);
        tecs__w_u32(o, c);
        tecs__w_u32(o, len);
        tecs__w_bytes(o, ci->name, len);
        put32(b, ci->size);
        put32(b + 4, ci->align);
        b[8] = ci->sparse;
        b[9] = ci->enableable;
        b[10] = (unsigned char)encoding(ci);
        b[11] = (unsigned char)(ci->hidden | ci->inherit << 1);
        tecs__w_bytes(o, b, 12);
        unsigned char h[8];
        put64(h, tecs__snap_layout_hash(ci));
        tecs__w_bytes(o, h, 8);
        save_fields(o, ci);
    }
    tecs__w_end(o);
    return o->err;
}

/* ENTS: slot count, generations, free count, the free list oldest first.
** The numbers go straight into the writer's buffer, a buffer's worth at a
** time. */
#define W_FIT ((uint32_t)(sizeof ((writer *)0)->buf / 4))   /* u32 in the buffer */

static void save_ents(writer *o)
{
    const tecs__ei_state *s = &o->w->ei;
    tecs__w_begin(o, TAG_ENTS);
    tecs__w_u32(o, (uint32_t)s->nrecs);
    for (uint32_t i = 0; i < (uint32_t)s->nrecs;) {
        uint32_t k = (uint32_t)s->nrecs - i < W_FIT ? (uint32_t)s->nrecs - i : W_FIT;
        unsigned char *p = w_room(o, (size_t)k * 4);
        if (p == NULL)
            return;
        const tecs__record *r = s->recs + i;
        for (uint32_t j = 0; j < k; j++)
            put32(p + 4 * j, r[j].gen);
        w_commit(o, (size_t)k * 4);
        i += k;
    }
    tecs__w_u32(o, (uint32_t)s->nfree);
    for (uint32_t i = s->free_head; i != TECS__NO_SLOT && !o->err;) {
        unsigned char *p = w_room(o, (size_t)W_FIT * 4);
        uint32_t k = 0;
        for (; p && k < W_FIT && i != TECS__NO_SLOT; i = s->recs[i].row)
            put32(p + 4 * k++, i);
        if (p)
            w_commit(o, (size_t)k * 4);
    }
    tecs__w_end(o);
}

/* Rows [start, start + n) of column col. */
void tecs__save_rows(writer *o, tecs_archetype_t *a, int32_t col, uint32_t start, uint32_t n)
{
    tecs_world_t *w = o->w;
    const tecs__comp *ci = tecs__col_info(w, a, col);
    if (serialized(ci)) {
        for (uint32_t r = start; r < start + n && !o->err; r++)
            w_serial(o, ci, a->col_comp[col], tecs__col_ptr(a, w, col, r));
        return;
    }
    for (uint32_t r = start; r < start + n;) {
        uint32_t k = w->arch.rows - (r & w->arch.mask);
        k = k < start + n - r ? k : start + n - r;
        tecs__w_bytes(o, tecs__col_ptr(a, w, col, r), (size_t)k * a->col_size[col]);
        r += k;
    }
}

/* Bit column j's bits of rows [start, start + n): a bit a row, the lowest
** first, a buffer's worth a step. */
void tecs__save_bits(writer *o, tecs_archetype_t *a, int32_t j, uint32_t start, uint32_t n)
{
    tecs_world_t *w = o->w;
    for (uint32_t r = start; r < start + n;) {
        uint32_t nb = (start + n - r + 7) / 8;
        nb = nb < sizeof o->buf ? nb : (uint32_t)sizeof o->buf;
        uint32_t end = start + n - r < 8 * nb ? start + n : r + 8 * nb;
        unsigned char *p = w_room(o, nb);
        if (p == NULL)
            return;
        memset(p, 0, nb);
        for (uint32_t q = r; q < end; q++)
            p[(q - r) / 8] |= (unsigned char)(tecs__arch_bit(a, w, j, q) << ((q - start) & 7));
        w_commit(o, nb);
        r = end;
    }
}

/* ARCH: component count, component places, row count, the rows' slots,
** each column's values, each enableable component's bits (a bit a row,
** the lowest first; set: disabled). */
static void save_arch(writer *o, tecs_archetype_t *a)
{
    tecs_world_t *w = o->w;
    tecs__w_begin(o, TAG_ARCH);
    tecs__w_u32(o, (uint32_t)a->ncomps);
    for (int32_t i = 0; i < a->ncomps; i++)
        tecs__w_u32(o, o->index[a->comps[i]]);
    tecs__w_u32(o, (uint32_t)a->count);
    for (uint32_t r = 0; r < (uint32_t)a->count;) {   /* within a chunk a step */
        uint32_t k = (uint32_t)a->count - r, in_chunk = w->arch.rows - (r & w->arch.mask);
        k = k < in_chunk ? k : in_chunk;
        k = k < W_FIT ? k : W_FIT;
        unsigned char *p = w_room(o, (size_t)k * 4);
        if (p == NULL)
            return;
        const tecs_entity_t *ents = tecs__ent_ptr(a, w, r);
        for (uint32_t i = 0; i < k; i++)
            put32(p + 4 * i, TECS_ENTITY_INDEX(ents[i]));
        w_commit(o, (size_t)k * 4);
        r += k;
    }
    for (int32_t i = 0; i < a->ncomps; i++) {
        int32_t col = tecs__arch_col(a, a->comps[i]);
        if (col >= 0)
            tecs__save_rows(o, a, col, 0, (uint32_t)a->count);
    }
    for (int32_t j = 0; j < a->ntog; j++)
        tecs__save_bits(o, a, j, 0, (uint32_t)a->count);
    tecs__w_end(o);
}

/* SPRS: component place, member count, members' slots (the set's order),
** their values. */
void tecs__save_sparse(writer *o, tecs_comp_t c, uint32_t tag)
{
    tecs_world_t *w = o->w;
    const tecs__comp *ci = &w->comp.comps[c];
    int32_t n = tecs__sparse_count(w, c);
    const tecs_entity_t *m = tecs__sparse_members(w, c);
    tecs__w_begin(o, tag);
    tecs__w_u32(o, o->index[c]);
    tecs__w_u32(o, (uint32_t)n);
    for (int32_t i = 0; i < n; i++)
        tecs__w_u32(o, TECS_ENTITY_INDEX(m[i]));
    for (int32_t i = 0; i < n && ci->size > 0; i++) {
        const void *v = tecs__sparse_get(w, c, TECS_ENTITY_INDEX(m[i]));
        if (serialized(ci))
            w_serial(o, ci, c, v);
        else
            tecs__w_bytes(o, v, ci->size);
    }
    tecs__w_end(o);
}

/* RSRC: count, then per resource its component's place and its value. */
void tecs__save_resources(writer *o)
{
    tecs_world_t *w = o->w;
    tecs__w_begin(o, TAG_RSRC);
    tecs__w_u32(o, (uint32_t)tecs_resource_count(w));
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci == NULL || !tecs_resource_has(w, c))
            continue;
        tecs__w_u32(o, o->index[c]);
        if (ci->size == 0)
            continue;
        const void *v = tecs_resource_get(w, c);
        if (serialized(ci))
            w_serial(o, ci, c, v);
        else
            tecs__w_bytes(o, v, ci->size);
    }
    tecs__w_end(o);
}

/* One pair of RELS: source, target, rank, value. */
static void save_pair(void *ctx, const tecs__rel_pair *p)
{
    writer *o = ctx;
    tecs__w_u32(o, p->src);
    tecs__w_u32(o, p->tgt);
    tecs__w_u32(o, p->rank);
    if (p->value == NULL)
        return;
    const tecs__comp *ci = tecs__comp_get(o->w, p->rel);
    if (serialized(ci))
        w_serial(o, ci, p->rel, p->value);
    else
        tecs__w_bytes(o, p->value, ci->size);
}

/* RELS: count, then per relation its place, exclusive, cleanup, ChildOf,
** a zero byte, its pair count and its pairs. */
void tecs__save_rels(writer *o)
{
    tecs_world_t *w = o->w;
    int32_t n = tecs__rel_count(w);
    if (n == 0)
        return;
    tecs__w_begin(o, TAG_RELS);
    tecs__w_u32(o, (uint32_t)n);
    for (int32_t i = 0; i < n && !o->err; i++) {
        tecs__rel_desc d = tecs__rel_get(w, i);
        unsigned char b[4] = { d.exclusive, d.cleanup, d.childof, 0 };
        tecs__w_u32(o, o->index[d.comp]);
        tecs__w_bytes(o, b, 4);
        tecs__w_u32(o, (uint32_t)d.npairs);
        tecs_err_t err = tecs__rel_pairs(w, i, save_pair, o);
        if (err && !o->err)
            o->err = err;
    }
    tecs__w_end(o);
}

static void save_all(writer *o)
{
    tecs_world_t *w = o->w;
    tecs__save_header(o, tecs__snap_magic);
    if (tecs__save_comps(o))
        return;
    save_ents(o);
    for (int32_t i = 0; i < w->arch.narchs && !o->err; i++)   /* the empty ones too */
        save_arch(o, w->arch.archs[i]);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps && !o->err; c++)
        if (tecs__comp_is_sparse(w, c) && tecs__comp_get(w, c) && tecs__sparse_count(w, c) > 0)
            tecs__save_sparse(o, c, TAG_SPRS);
    tecs__save_resources(o);
    tecs__save_rels(o);
    tecs__w_begin(o, TAG_END);
    tecs__w_end(o);
    tecs__w_flush(o);
}

/* Bytes of a writer's index (component id -> place in COMP). */
static size_t index_bytes(const tecs_world_t *w)
{
    return tecs__bytes((uint64_t)w->comp.cap_comps + 1, sizeof(uint32_t));
}

tecs_err_t tecs__save_may(tecs_world_t *w, tecs_write_fn write, const char *what)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (write == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL writer");
    return refuse_now(w, what);
}

tecs_err_t tecs__save_open(tecs_world_t *w, tecs_write_fn write, void *ctx, writer **out)
{
    writer *o = tecs__alloc(w, sizeof *o);
    uint32_t *index = tecs__alloc(w, index_bytes(w));
    if (o == NULL || index == NULL) {
        tecs__free(w, index, index_bytes(w));
        tecs__free(w, o, o ? sizeof *o : 0);
        return tecs__err(w, TECS_ENOMEM, "out of memory saving a snapshot");
    }
    memset(o, 0, sizeof *o);
    o->w = w, o->fn = write, o->ctx = ctx, o->index = index;
    o->mem = write == tecs__save_mem_write ? ctx : NULL;   /* (no copy through buf) */
    o->out.w = w;
    *out = o;
    return TECS_OK;
}

tecs_err_t tecs__save_close(writer *o)
{
    tecs_world_t *w = o->w;
    tecs_err_t err = o->err;
    tecs__free(w, o->out.data, o->out.cap);
    tecs__free(w, o->index, index_bytes(w));
    tecs__free(w, o, sizeof *o);
    return err;
}

tecs_err_t tecs_snapshot_save(tecs_world_t *w, tecs_write_fn write, void *ctx)
{
    writer *o;
    tecs_err_t err = tecs__save_may(w, write, "tecs_snapshot_save");
    if (err || (err = tecs__save_open(w, write, ctx, &o)))
        return err;
    save_all(o);
    if ((err = tecs__save_close(o)) == TECS_OK)
        w->base.err = TECS_OK;
    return err;
}
