/*
** snapshot.c — a world saved to bytes and loaded back (docs/SNAPSHOT.md
** is the format; this essay is how the code keeps it).
**
** A snapshot is a header and sections, every number little-endian:
**
**     header   "TECSSNAP" version flags                  (16 bytes + sum)
**     COMP     the component table, by name
**     ENTS     slots: generations, the free list in order
**     ARCH     one per archetype, in the world's order: its components, its rows'
**              slots, its values column by column, its enableable bits
**     SPRS     one per sparse component with members: slots, values
**     RSRC     the resources
**     END.
**
** Each section is its tag, its payload, then a trailer: the payload's
** length and its checksum (sum64 below), so a writer streams a section
** without knowing its length first, and a reader parses the payload by
** its structure and checks the trailer at its end.
**
** Saving reads the world and changes nothing. Loading is one pass over
** the input: every count is checked against the limits and the counts
** before it, and memory grows only as the input that justifies it
** arrives (the slots a chunk at a time), so a hostile count costs the
** bytes that back it, never an allocation of its own size. Rows are
** written straight into fresh chunks, and each slot's record once, whole,
** when its row (or its place in the free list) is read: the generations
** wait where they lie in the input (the memory helper's, read in place)
** or in a copy, and a bit a slot marks the records written (in->seen);
** the slots never named are retired at the end (fill_records). Rows whose
** slots follow each other (a world saved in slot order) are written as
** runs: generations, records and ids in order, a vector at a time
** (put_run). a->count and the entity count are set as each archetype
** completes. The memory helper's input is summed as it is copied into
** the chunks, in one pass (sum_copy). Any failure undoes the lot
** (undo_load): values destroyed, chunks and sparse pages freed, every
** slot dead, resources removed: the world is empty again. No event is
** raised for a loaded entity (observers and hooks do not fire); the
** world's indexes and caches, which follow events, are rebuilt from the
** loaded rows at the end (tecs__indexes_rebuild), and a unique index whose
** keys repeat fails the load.
**
** A delta (the last part of this file) is what changed since a mark, in
** the same sections' style; its applier replaces rows in place, under the
** same rules.
**
** The user's callbacks (writer, reader, serializer) run with the world
** closed as TECS__SNAPSHOT: whatever they call is refused.
**
** Calls: alloc, entity_index, component, archetype, sparse, resource,
** index (the rebuild).
*/
#include "private.h"
#include "index/internal.h"

#include <errno.h>
#include <stdlib.h>
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

#define SNAP_VERSION    1u
#define SNAP_FLAG_BE    1u           /* the writer's host is big-endian    */
#define SNAP_MAX_NAME   255u
#define SNAP_MAX_BLOB   (1u << 24)   /* bytes of one serialized value       */
#define SNAP_BATCH      4096u        /* slots read or written at a time    */

enum {                               /* section tags: four ASCII letters   */
    TAG_COMP = 0x504d4f43u,          /* "COMP" */
    TAG_ENTS = 0x53544e45u,          /* "ENTS" */
    TAG_ARCH = 0x48435241u,          /* "ARCH" */
    TAG_SPRS = 0x53525053u,          /* "SPRS" */
    TAG_RSRC = 0x43525352u,          /* "RSRC" */
    TAG_END  = 0x2e444e45u,          /* "END." */
    TAG_BASE = 0x45534142u,          /* "BASE": a delta's, and the rest */
    TAG_DENT = 0x544e4544u,          /* "DENT" */
    TAG_DROW = 0x574f5244u,          /* "DROW" */
    TAG_DVAL = 0x4c415644u,          /* "DVAL" */
    TAG_DSPR = 0x52505344u           /* "DSPR" */
};

static const unsigned char magic[8] = { 'T', 'E', 'C', 'S', 'S', 'N', 'A', 'P' };
static const unsigned char magic_delta[8] = { 'T', 'E', 'C', 'S', 'D', 'L', 'T', 'A' };

/* ---- bytes ------------------------------------------------------------ */

static bool host_big(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Numbers little-endian, whatever the host: on a little-endian one a
** plain copy, which the hot loops need (built byte by byte, the compiler
** shuffles bytes through vector registers). */
static inline void put32(unsigned char *p, uint32_t v)
{
    if (!host_big()) {
        memcpy(p, &v, 4);
        return;
    }
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    if (!host_big()) {
        memcpy(&v, p, 4);
        return v;
    }
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- the checksum ----------------------------------------------------- */

/* sum64: a Fletcher-style sum over the input's 64-bit little-endian
** words, in four lanes (32 bytes a step): each lane adds the word to a,
** and a to b, modulo 2^64, so a changed word changes a, and two swapped
** words change b. The tail bytes go into lane 0 one by one; the lanes and
** the length are folded and mixed at the end. Adds only, so it keeps up
** with memcpy. Streaming: pieces of any size give the sum of the whole. */
#define SUM_PRIME 0x100000001b3ull
#define SUM_BASIS 0xcbf29ce484222325ull

typedef struct sum64 {
    uint64_t a[4], b[4];
    uint64_t total;             /* bytes so far                             */
    unsigned char buf[32];      /* a partial step                           */
    uint32_t nbuf;
} sum64;

static void sum_init(sum64 *s)
{
    for (int i = 0; i < 4; i++)
        s->a[i] = s->b[i] = (uint64_t)i + 1;
    s->total = 0;
    s->nbuf = 0;
}

static inline uint64_t word_le(const unsigned char *p, bool big)
{
    uint64_t v;
    memcpy(&v, p, 8);
    if (big) {
        v = (v >> 32) | (v << 32);
        v = ((v & 0xffff0000ffff0000ull) >> 16) | ((v & 0x0000ffff0000ffffull) << 16);
        v = ((v & 0xff00ff00ff00ff00ull) >> 8) | ((v & 0x00ff00ff00ff00ffull) << 8);
    }
    return v;
}

static void sum_blocks(sum64 *s, const unsigned char *p, size_t n)
{
    uint64_t a[4], b[4];
    const bool big = host_big();
    memcpy(a, s->a, sizeof a);
    memcpy(b, s->b, sizeof b);
    for (size_t i = 0; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            a[k] += word_le(p + i + 8 * k, big);
            b[k] += a[k];
        }
    memcpy(s->a, a, sizeof a);
    memcpy(s->b, b, sizeof b);
}

static void sum_add(sum64 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->total += n;
    if (s->nbuf > 0) {
        size_t k = 32 - s->nbuf < n ? 32 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, k);
        s->nbuf += (uint32_t)k, p += k, n -= k;
        if (s->nbuf < 32)
            return;
        sum_blocks(s, s->buf, 32);
        s->nbuf = 0;
    }
    size_t whole = n & ~(size_t)31;
    sum_blocks(s, p, whole);
    memcpy(s->buf, p + whole, n - whole);
    s->nbuf = (uint32_t)(n - whole);
}

/* sum_blocks, the bytes copied to dst on the way: one pass over them. */
static void sum_copy_blocks(sum64 *s, unsigned char *dst, const unsigned char *p, size_t n)
{
    uint64_t a[4], b[4];
    const bool big = host_big();
    memcpy(a, s->a, sizeof a);
    memcpy(b, s->b, sizeof b);
    for (size_t i = 0; i + 32 <= n; i += 32) {
        memcpy(dst + i, p + i, 32);
        for (int k = 0; k < 4; k++) {
            a[k] += word_le(p + i + 8 * k, big);
            b[k] += a[k];
        }
    }
    memcpy(s->a, a, sizeof a);
    memcpy(s->b, b, sizeof b);
}

/* memcpy(dst, data, n) and sum_add(s, data, n) in one pass. */
static void sum_copy(sum64 *s, void *dst, const void *data, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *p = data;
    size_t head = s->nbuf == 0 ? 0 : 32 - s->nbuf < n ? 32 - s->nbuf : n;
    memcpy(d, p, head);
    sum_add(s, p, head);
    size_t whole = (n - head) & ~(size_t)31;
    sum_copy_blocks(s, d + head, p + head, whole);
    s->total += whole;
    memcpy(d + head + whole, p + head + whole, n - head - whole);
    sum_add(s, p + head + whole, n - head - whole);
}

static uint64_t sum_end(const sum64 *s)
{
    uint64_t a0 = s->a[0], b0 = s->b[0];
    for (uint32_t i = 0; i < s->nbuf; i++) {
        a0 += s->buf[i] + 1u;
        b0 += a0;
    }
    uint64_t h = SUM_BASIS ^ s->total;
    uint64_t v[8] = { a0, b0, s->a[1], s->b[1], s->a[2], s->b[2], s->a[3], s->b[3] };
    for (int i = 0; i < 8; i++) {
        h = (h ^ v[i]) * SUM_PRIME;
        h ^= h >> 29;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The hash of a component's layout: what the loader compares. Its size,
** alignment, storage and enableable flag, and its description's layout
** hash (meta.c: names, types, offsets, counts) when it has one. A
** component a load registered keeps the hash it was saved with, so that
** saving it again gives the same snapshot. */
static uint64_t layout_hash(const tecs__comp *ci)
{
    if (ci->meta == NULL && ci->saved_hash != 0)
        return ci->saved_hash;
    unsigned char b[18];
    put32(b, ci->size);
    put32(b + 4, ci->align);
    b[8] = ci->sparse;
    b[9] = ci->enableable;
    put64(b + 10, ci->meta ? ci->meta->hash : 0);
    uint64_t h = SUM_BASIS;
    for (size_t i = 0; i < (ci->meta ? sizeof b : 10); i++)
        h = (h ^ b[i]) * SUM_PRIME;
    return h;
}

/* ---- around the user's callbacks ---------------------------------------- */

/* Close the world for the length of a callback: its calls are refused. */
static uint8_t cb_close(tecs_world_t *w)
{
    uint8_t was = w->base.closed;
    tecs__set_closed(w, TECS__SNAPSHOT);
    return was;
}

static void cb_open(tecs_world_t *w, uint8_t was)
{
    tecs__set_closed(w, was);
}

/* Why a save or a load cannot run now, or TECS_OK. */
static tecs_err_t refuse_now(tecs_world_t *w, const char *what)
{
    if (w->base.cb_depth > 0 || tecs__cmd_nested(w))
        return tecs__err(w, TECS_EBUSY, "%s cannot run inside a callback, an iteration, a "
                         "deferred section or a frame", what);
    if (w->ei.npending > 0 || w->cmd.delayed.count > 0 || w->cmd.deferred.count > 0)
        return tecs__err(w, TECS_EBUSY, "%s: changes wait in the delayed queues (apply them "
                         "first)", what);
    return TECS_OK;
}

static bool has_hooks(const tecs__comp *ci)
{
    return ci->ctor || ci->dtor || ci->copy || ci->move;
}

/* How the values of ci are written: as bytes, through its serializer
** (ENC_USER), or, a component with hooks and a description but no
** serializer, field by field from the description (ENC_FIELDS). */
enum { ENC_BYTES, ENC_USER, ENC_FIELDS };

static int encoding(const tecs__comp *ci)
{
    if (ci->size == 0)
        return ENC_BYTES;
    if (ci->serialize != NULL)
        return ENC_USER;
    return has_hooks(ci) && ci->meta ? ENC_FIELDS : ENC_BYTES;
}

/* Values of ci go through a serializer (its own or its description). */
static bool serialized(const tecs__comp *ci)
{
    return encoding(ci) != ENC_BYTES;
}

/* ---- values field by field (ENC_FIELDS) --------------------------------

** Each element of each field in order: a scalar as its bytes, little-
** endian; a string as u32 length (0xffffffff for NULL) and its bytes; a
** nested component the same way, field by field. */

#define NULL_STR 0xffffffffu

static tecs_err_t fields_put(const tecs_world_t *w, tecs_comp_t c, const unsigned char *v,
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
                err = fields_put(w, f->comp, at, out);
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

/* Read a value of c written by fields_put from in[*pos, n) into v (zeroed,
** the staging value): strings are copied, ended by a zero, to *text, which
** has room for n more bytes. */
static bool fields_get(const tecs_world_t *w, tecs_comp_t c, unsigned char *v,
                       const unsigned char *in, size_t n, size_t *pos, char **text)
{
    const tecs__meta *m = tecs__comp_meta(w, c);
    for (int32_t i = 0; m && i < m->nfields; i++) {
        const tecs_field_t *f = &m->fields[i];
        size_t size = tecs__meta_elem_size(w, f);
        for (int32_t k = 0; k < f->count; k++) {
            unsigned char *at = v + f->offset + (size_t)k * size;
            if (f->type == TECS_TYPE_STRUCT) {
                if (!fields_get(w, f->comp, at, in, n, pos, text))
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

/* ==================================================================== */
/* Saving                                                               */
/* ==================================================================== */

struct tecs_snapshot_out_t {
    tecs_world_t *w;
    unsigned char *data;        /* one serialized value                     */
    size_t size, cap;
    tecs_err_t err;
};

typedef struct writer {
    tecs_world_t *w;
    tecs_write_fn fn;
    void *ctx;
    tecs_snapshot_buf_t *mem;   /* the memory helper's buffer, written in
                                   place (buf and fn unused); or NULL      */
    tecs_err_t err;             /* the first failure; later writes skip    */
    sum64 sum;                  /* of the open section's payload            */
    size_t n;                   /* bytes in buf                             */
    unsigned char buf[8192];
    tecs_snapshot_out_t out;
    uint32_t *index;            /* component id -> its place in COMP        */
} writer;

static tecs_err_t mem_write(void *ctx, const void *data, size_t n);

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

static void w_flush(writer *o)
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
        w_flush(o);
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
static void w_bytes(writer *o, const void *data, size_t n)
{
    w_raw(o, data, n);
    sum_add(&o->sum, data, n);
}

/* Room for n bytes (at most the buffer's size) at the buffer's end, to
** be filled in place and kept by w_commit: numbers built there, not in a
** buffer of their own that w_bytes copies again. NULL after a failure. */
static unsigned char *w_room(writer *o, size_t n)
{
    if (o->err)
        return NULL;
    if (o->mem)
        return w_mem_room(o, n);
    if (n > sizeof o->buf - o->n)
        w_flush(o);
    return o->err ? NULL : o->buf + o->n;
}

/* Keep, and sum, the n bytes filled at w_room's pointer. */
static void w_commit(writer *o, size_t n)
{
    if (o->mem) {
        sum_add(&o->sum, o->mem->data + o->mem->size, n);
        o->mem->size += n;
        return;
    }
    sum_add(&o->sum, o->buf + o->n, n);
    o->n += n;
}

static void w_u32(writer *o, uint32_t v)
{
    unsigned char b[4];
    put32(b, v);
    w_bytes(o, b, 4);
}

static void w_begin(writer *o, uint32_t tag)
{
    unsigned char b[4];
    put32(b, tag);
    w_raw(o, b, 4);
    sum_init(&o->sum);
}

static void w_end(writer *o)
{
    unsigned char b[16];
    put64(b, o->sum.total);
    put64(b + 8, sum_end(&o->sum));
    w_raw(o, b, 16);
}

/* tecs__realloc from inside a user callback of a save or a load, while
** the world is closed to the callback: the allocator would refuse. */
static void *realloc_closed(tecs_world_t *w, void *p, size_t old, size_t n)
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
        void *p = realloc_closed(out->w, out->data, out->cap, cap);
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

/* One value through ci's serializer: its length, then its bytes. */
static void w_serial(writer *o, const tecs__comp *ci, tecs_comp_t c, const void *value)
{
    if (o->err)
        return;
    o->out.size = 0;
    uint8_t was = cb_close(o->w);
    tecs_err_t err = encoding(ci) == ENC_FIELDS
                     ? fields_put(o->w, c, value, &o->out)
                     : ci->serialize(value, &o->out, ci->serial_ctx);
    cb_open(o->w, was);
    if (err) {
        o->err = tecs__err(o->w, err, "the serializer of " TECS__COMP_FMT " failed (%s)",
                           TECS__COMP(o->w, c), tecs_err_name(err));
        return;
    }
    w_u32(o, (uint32_t)o->out.size);
    w_bytes(o, o->out.data, o->out.size);
}

static void save_header(writer *o, const unsigned char *kind)
{
    unsigned char b[24];
    memcpy(b, kind, 8);
    put32(b + 8, SNAP_VERSION);
    put32(b + 12, host_big() ? SNAP_FLAG_BE : 0);
    sum_init(&o->sum);
    sum_add(&o->sum, b, 16);
    put64(b + 16, sum_end(&o->sum));
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
** enableable, serialized, a zero byte, layout hash. */
/* A component's description in the table: u32 n, then per field its
** name (u32 length, bytes), u8 type, 3 bytes 0, u32 offset, u32 count, and
** u32 the nested component's place in the table (NO_PLACE: none). */
#define NO_PLACE 0xffffffffu

static void save_fields(writer *o, const tecs__comp *ci)
{
    const tecs__meta *m = ci->meta;
    w_u32(o, m ? (uint32_t)m->nfields : 0);
    for (int32_t i = 0; m && i < m->nfields; i++) {
        const tecs_field_t *f = &m->fields[i];
        unsigned char b[16] = { (unsigned char)f->type, 0, 0, 0 };
        uint32_t len = (uint32_t)strlen(f->name);
        w_u32(o, len);
        w_bytes(o, f->name, len);
        put32(b + 4, (uint32_t)f->offset);
        put32(b + 8, (uint32_t)f->count);
        put32(b + 12, f->type == TECS_TYPE_STRUCT ? o->index[f->comp] : NO_PLACE);
        w_bytes(o, b, 16);
    }
}

static tecs_err_t save_comps(writer *o)
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
    w_begin(o, TAG_COMP);
    w_u32(o, n);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci == NULL)
            continue;
        unsigned char b[12];
        uint32_t len = (uint32_t)(ci->name_len > SNAP_MAX_NAME ? SNAP_MAX_NAME : ci->name_len);
        if (ci->name_len > SNAP_MAX_NAME)
            return o->err = tecs__err(w, TECS_EINVAL, TECS__COMP_FMT ": a name above %u bytes cannot "
                             "be saved", TECS__COMP(w, c), SNAP_MAX_NAME);
        w_u32(o, c);
        w_u32(o, len);
        w_bytes(o, ci->name, len);
        put32(b, ci->size);
        put32(b + 4, ci->align);
        b[8] = ci->sparse;
        b[9] = ci->enableable;
        b[10] = (unsigned char)encoding(ci);
        b[11] = 0;
        w_bytes(o, b, 12);
        unsigned char h[8];
        put64(h, layout_hash(ci));
        w_bytes(o, h, 8);
        save_fields(o, ci);
    }
    w_end(o);
    return o->err;
}

/* ENTS: slot count, generations, free count, the free list oldest first.
** The numbers go straight into the writer's buffer, a buffer's worth at a
** time. */
#define W_FIT ((uint32_t)(sizeof ((writer *)0)->buf / 4))   /* u32 in the buffer */

static void save_ents(writer *o)
{
    const tecs__ei_state *s = &o->w->ei;
    w_begin(o, TAG_ENTS);
    w_u32(o, (uint32_t)s->nrecs);
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
    w_u32(o, (uint32_t)s->nfree);
    for (uint32_t i = s->free_head; i != TECS__NO_SLOT && !o->err;) {
        unsigned char *p = w_room(o, (size_t)W_FIT * 4);
        uint32_t k = 0;
        for (; p && k < W_FIT && i != TECS__NO_SLOT; i = s->recs[i].row)
            put32(p + 4 * k++, i);
        if (p)
            w_commit(o, (size_t)k * 4);
    }
    w_end(o);
}

/* Rows [start, start + n) of column col. */
static void save_rows(writer *o, tecs_archetype_t *a, int32_t col, uint32_t start, uint32_t n)
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
        w_bytes(o, tecs__col_ptr(a, w, col, r), (size_t)k * a->col_size[col]);
        r += k;
    }
}

/* Bit column j's bits of rows [start, start + n): a bit a row, the lowest
** first, a buffer's worth a step. */
static void save_bits(writer *o, tecs_archetype_t *a, int32_t j, uint32_t start, uint32_t n)
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
    w_begin(o, TAG_ARCH);
    w_u32(o, (uint32_t)a->ncomps);
    for (int32_t i = 0; i < a->ncomps; i++)
        w_u32(o, o->index[a->comps[i]]);
    w_u32(o, (uint32_t)a->count);
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
            save_rows(o, a, col, 0, (uint32_t)a->count);
    }
    for (int32_t j = 0; j < a->ntog; j++)
        save_bits(o, a, j, 0, (uint32_t)a->count);
    w_end(o);
}

/* SPRS: component place, member count, members' slots (the set's order),
** their values. */
static void save_sparse(writer *o, tecs_comp_t c, uint32_t tag)
{
    tecs_world_t *w = o->w;
    const tecs__comp *ci = &w->comp.comps[c];
    int32_t n = tecs__sparse_count(w, c);
    const tecs_entity_t *m = tecs__sparse_members(w, c);
    w_begin(o, tag);
    w_u32(o, o->index[c]);
    w_u32(o, (uint32_t)n);
    for (int32_t i = 0; i < n; i++)
        w_u32(o, TECS_ENTITY_INDEX(m[i]));
    for (int32_t i = 0; i < n && ci->size > 0; i++) {
        const void *v = tecs__sparse_get(w, c, TECS_ENTITY_INDEX(m[i]));
        if (serialized(ci))
            w_serial(o, ci, c, v);
        else
            w_bytes(o, v, ci->size);
    }
    w_end(o);
}

/* RSRC: count, then per resource its component's place and its value. */
static void save_resources(writer *o)
{
    tecs_world_t *w = o->w;
    w_begin(o, TAG_RSRC);
    w_u32(o, (uint32_t)tecs_resource_count(w));
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci == NULL || !tecs_resource_has(w, c))
            continue;
        w_u32(o, o->index[c]);
        if (ci->size == 0)
            continue;
        const void *v = tecs_resource_get(w, c);
        if (serialized(ci))
            w_serial(o, ci, c, v);
        else
            w_bytes(o, v, ci->size);
    }
    w_end(o);
}

static void save_all(writer *o)
{
    tecs_world_t *w = o->w;
    save_header(o, magic);
    if (save_comps(o))
        return;
    save_ents(o);
    for (int32_t i = 0; i < w->arch.narchs && !o->err; i++)   /* the empty ones too */
        save_arch(o, w->arch.archs[i]);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps && !o->err; c++)
        if (tecs__comp_is_sparse(w, c) && tecs__comp_get(w, c) && tecs__sparse_count(w, c) > 0)
            save_sparse(o, c, TAG_SPRS);
    save_resources(o);
    w_begin(o, TAG_END);
    w_end(o);
    w_flush(o);
}

static void save_delta(writer *o, const tecs_mark_t *m);
static tecs_err_t mark_check(tecs_world_t *w, const tecs_mark_t *m);
static void mark_now(tecs_world_t *w, tecs_mark_t *m);

/* A snapshot (mark NULL) or the delta since mark, which then moves to now. */
static tecs_err_t save_with(tecs_world_t *w, tecs_write_fn write, void *ctx, tecs_mark_t *mark,
                            const char *what)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (write == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL writer");
    if ((err = refuse_now(w, what)) || (mark && (err = mark_check(w, mark))))
        return err;
    writer *o = tecs__alloc(w, sizeof *o);
    size_t index_bytes = tecs__bytes((uint64_t)w->comp.cap_comps + 1, sizeof(uint32_t));
    uint32_t *index = tecs__alloc(w, index_bytes);
    if (o == NULL || index == NULL) {
        tecs__free(w, index, index_bytes);
        tecs__free(w, o, o ? sizeof *o : 0);
        return tecs__err(w, TECS_ENOMEM, "out of memory saving a snapshot");
    }
    memset(o, 0, sizeof *o);
    o->w = w, o->fn = write, o->ctx = ctx, o->index = index;
    o->mem = write == mem_write ? ctx : NULL;   /* (no copy through buf) */
    o->out.w = w;
    if (mark)
        save_delta(o, mark);
    else
        save_all(o);
    err = o->err;
    tecs__free(w, o->out.data, o->out.cap);
    tecs__free(w, index, index_bytes);
    tecs__free(w, o, sizeof *o);
    if (err == TECS_OK && mark)
        mark_now(w, mark);
    if (err == TECS_OK)
        w->base.err = TECS_OK;
    return err;
}

tecs_err_t tecs_snapshot_save(tecs_world_t *w, tecs_write_fn write, void *ctx)
{
    return save_with(w, write, ctx, NULL, "tecs_snapshot_save");
}

/* ==================================================================== */
/* Loading                                                              */
/* ==================================================================== */

/* The bytes of input left, when the reader knows them (the memory
** helper): a count that these bytes can back is reserved at once, not as
** its input arrives. */
typedef size_t (*left_fn)(void *ctx);

/* The next n bytes of input in place, or NULL when fewer are left (the
** memory helper's: its input stays put for the whole load, so the loader
** reads the slots and generations where they are and copies values once). */
typedef const unsigned char *(*view_fn)(void *ctx, size_t n);

/* A component of the snapshot, matched with the world's. */
typedef struct lcomp {
    tecs_comp_t id;             /* in the world                             */
    uint32_t size, align;       /* as saved                                 */
    bool sparse, enableable, serialized;
    bool convert;               /* saved layout differs: its convert hook   */
    bool fields;                /* saved field by field (ENC_FIELDS)        */
    bool swap;                  /* saved in the other byte order: turned
                                   field by field (its description)         */
    bool made;                  /* registered by this load, as plain data   */
} lcomp;

typedef struct reader {
    tecs_world_t *w;
    tecs_field_t fields[TECS_MAX_FIELDS]; /* the description being read (its
                                   names in blob, each ended by a zero)     */
    int32_t nfields;
    tecs_read_fn fn;
    void *ctx;
    left_fn left;               /* NULL: unknown                            */
    view_fn view;               /* NULL: every byte goes through fn         */
    sum64 sum;
    bool foreign;               /* saved on a host of the other byte order */
    uint32_t ncomps;
    lcomp *comps;
    unsigned char *blob;        /* one serialized or converted value        */
    size_t blob_cap;
    unsigned char *stage;       /* ENC_FIELDS: the staging value, its text  */
    size_t stage_cap;
    const unsigned char *gens;  /* ENTS: the slots' generations, little-
                                   endian: in the input (view) or in own   */
    unsigned char *own;         /* the generations read through fn          */
    int32_t own_cap;            /* (in generations)                         */
    uint64_t *seen;             /* a bit a slot: its record is written      */
    uint32_t nseen;             /* (words: the slots' bits and one)         */
} reader;

static tecs_err_t bad(reader *in, const char *fmt, const char *what)
{
    return tecs__err(in->w, TECS_EFORMAT, fmt, what);
}

static tecs_err_t ends_early(reader *in)
{
    return tecs__err(in->w, TECS_EFORMAT, "snapshot: the input ends early");
}

static tecs_err_t r_raw(reader *in, void *data, size_t n)
{
    if (n == 0)
        return TECS_OK;
    uint8_t was = cb_close(in->w);
    tecs_err_t err = in->fn(in->ctx, data, n);
    cb_open(in->w, was);
    if (err == TECS_EFORMAT)
        return ends_early(in);
    if (err)
        return tecs__err(in->w, err, "the snapshot's reader failed (%s)", tecs_err_name(err));
    return TECS_OK;
}

static tecs_err_t r_bytes(reader *in, void *data, size_t n)
{
    if (in->view) {
        const unsigned char *p = in->view(in->ctx, n);
        if (p == NULL)
            return ends_early(in);
        sum_copy(&in->sum, data, p, n);
        return TECS_OK;
    }
    tecs_err_t err = r_raw(in, data, n);
    if (err == TECS_OK)
        sum_add(&in->sum, data, n);
    return err;
}

/* The next n bytes, summed, at *p: in place with a view, else read into
** buf (room for n). */
static tecs_err_t r_view(reader *in, unsigned char *buf, size_t n, const unsigned char **p)
{
    if (in->view == NULL) {
        *p = buf;
        return r_bytes(in, buf, n);
    }
    if ((*p = in->view(in->ctx, n)) == NULL)
        return ends_early(in);
    sum_add(&in->sum, *p, n);
    return TECS_OK;
}

static tecs_err_t r_u32(reader *in, uint32_t *v)
{
    unsigned char b[4] = { 0 };
    tecs_err_t err = r_bytes(in, b, 4);
    *v = get32(b);
    return err;
}

static const char *tag_name(uint32_t tag)
{
    switch (tag) {
    case TAG_COMP: return "COMP";
    case TAG_ENTS: return "ENTS";
    case TAG_ARCH: return "ARCH";
    case TAG_SPRS: return "SPRS";
    case TAG_RSRC: return "RSRC";
    case TAG_BASE: return "BASE";
    case TAG_DENT: return "DENT";
    case TAG_DROW: return "DROW";
    case TAG_DVAL: return "DVAL";
    case TAG_DSPR: return "DSPR";
    default: return "END.";
    }
}

/* The next section's tag (not summed), and a fresh sum. */
static tecs_err_t r_tag(reader *in, uint32_t *tag)
{
    unsigned char b[4] = { 0 };
    tecs_err_t err = r_raw(in, b, 4);
    *tag = get32(b);
    sum_init(&in->sum);
    return err;
}

static tecs_err_t r_end(reader *in, uint32_t tag)
{
    unsigned char b[16];
    tecs_err_t err = r_raw(in, b, 16);
    if (err)
        return err;
    bool sum_ok = get64(b + 8) == sum_end(&in->sum);
#ifdef TECS_FUZZING_SKIP_SUMS
    sum_ok = true;              /* fuzz builds only: see CMakeLists.txt */
#endif
    if (get64(b) != in->sum.total || !sum_ok)
        return bad(in, "snapshot: section %s is corrupt (its checksum or length differs)",
                   tag_name(tag));
    return TECS_OK;
}

/* Room for n bytes in the blob. */
static tecs_err_t blob_room(reader *in, size_t n)
{
    if (n <= in->blob_cap)
        return TECS_OK;
    void *p = tecs__realloc(in->w, in->blob, in->blob_cap, n);
    if (p == NULL)
        return tecs__err(in->w, TECS_ENOMEM, "out of memory loading a snapshot");
    in->blob = p;
    in->blob_cap = n;
    return TECS_OK;
}

static tecs_err_t load_header(reader *in, const unsigned char *kind)
{
    unsigned char b[24];
    tecs_err_t err = r_raw(in, b, 24);
    if (err)
        return err;
    if (memcmp(b, kind, 8) != 0)
        return bad(in, "snapshot: %s", kind == magic ? "bad magic (not a tinyecs snapshot)"
                                                     : "bad magic (not a tinyecs delta)");
    sum_init(&in->sum);
    sum_add(&in->sum, b, 16);
    bool sum_ok = get64(b + 16) == sum_end(&in->sum);
#ifdef TECS_FUZZING_SKIP_SUMS
    sum_ok = true;
#endif
    if (!sum_ok)
        return bad(in, "snapshot: %s", "the header is corrupt");
    if (get32(b + 8) != SNAP_VERSION)
        return tecs__err(in->w, TECS_EFORMAT, "snapshot: version %u, this library reads "
                         "version %u", get32(b + 8), SNAP_VERSION);
    uint32_t flags = get32(b + 12);
    if (flags & ~SNAP_FLAG_BE)
        return bad(in, "snapshot: %s", "unknown flags");
    in->foreign = ((flags & SNAP_FLAG_BE) != 0) != host_big();
    return TECS_OK;
}

/* Match the saved component (name, saved) with the world's, registering
** it when the world has none of that name. */
static tecs_err_t match_comp(reader *in, const char *name, tecs_comp_t saved_id,
                             const tecs__comp *saved, uint64_t hash, lcomp *lc)
{
    tecs_world_t *w = in->w;
    tecs_comp_t c = tecs_component_lookup(w, name);
    if (c == 0) {
        tecs_comp_t want = saved_id < TECS_MAX_COMPONENTS && tecs__comp_get(w, saved_id) == NULL
                               ? saved_id : 0;
        /* With its saved description, unless it has strings: their
        ** values need the hooks that own them, which are code. */
        bool strings = false;
        for (int32_t k = 0; k < in->nfields; k++)
            strings = strings || in->fields[k].type == TECS_TYPE_STRING;
        c = tecs_component_new(w, &(tecs_component_desc_t){
            .name = name, .size = saved->size, .align = saved->align, .id = want,
            .storage = saved->sparse ? TECS_STORAGE_SPARSE : TECS_STORAGE_TABLE,
            .enableable = saved->enableable, .fields = strings ? NULL : in->fields,
            .nfields = strings ? 0 : in->nfields });
        if (c == 0)
            return w->base.err == TECS_ENOMEM || w->base.err == TECS_ELIMIT
                       ? w->base.err
                       : tecs__err(w, TECS_EFORMAT, "snapshot: component '%s' cannot be "
                                   "registered: %s", name, w->base.errmsg);
        if (saved->size > 0 && lc->serialized)
            return tecs__err(w, TECS_EFORMAT, "snapshot: component '%s' was saved through a "
                             "serializer: register it with its hooks and serializer before "
                             "the load", name);
        lc->made = true;
        w->comp.comps[c].saved_hash = hash;
    }
    const tecs__comp *ci = tecs__comp_get(w, c);
    lc->id = c;
    if (ci->sparse != saved->sparse || ci->enableable != saved->enableable)
        return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " differs in %s from "
                         "the saved one", TECS__COMP(w, c),
                         ci->sparse != saved->sparse ? "storage" : "enableable");
    if (saved->size > 0 && lc->serialized && (lc->fields != (encoding(ci) == ENC_FIELDS) ||
                                              (lc->fields && layout_hash(ci) != hash)))
        return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " was saved %s, and "
                         "is %s here", TECS__COMP(w, c),
                         lc->fields ? "field by field from its description"
                                    : "through its serializer",
                         encoding(ci) == ENC_USER ? "given a serializer"
                         : encoding(ci) == ENC_FIELDS ? "described otherwise, with no serializer"
                                                      : "plain data");
    if (lc->serialized != serialized(ci) && saved->size > 0)
        return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " was saved %s a "
                         "serializer, and has %s now", TECS__COMP(w, c),
                         lc->serialized ? "through" : "without", lc->serialized ? "none" : "one");
    if (!lc->serialized && !lc->made && layout_hash(ci) != hash) {
        if (ci->convert == NULL || ci->size == 0)
            return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " has size %u, "
                             "alignment %u here, %u and %u in the snapshot (or another "
                             "layout), and no convert hook", TECS__COMP(w, c), ci->size,
                             ci->align, saved->size, saved->align);
        lc->convert = true;
    }
    /* The other byte order: a description without strings turns the values
    ** field by field; nothing else can read them. */
    if (in->foreign && !lc->serialized && saved->size > 0) {
        if (lc->convert || ci->meta == NULL || ci->meta->strings)
            return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " was saved on a "
                             "host of the other byte order, and has no serializer or "
                             "description (of its saved layout, without strings): its bytes "
                             "cannot be read here", TECS__COMP(w, c));
        lc->swap = true;
    }
    return TECS_OK;
}

/* Read component i's description into in->fields (in->nfields), its
** names into in->blob; a nested component must come earlier in the table
** (it was registered, described, before the one that holds it). */
static tecs_err_t load_fields(reader *in, uint32_t i, const char *name)
{
    uint32_t n, at[TECS_MAX_FIELDS];
    size_t used = 0;
    tecs_err_t err = r_u32(in, &n);
    if (err)
        return err;
    if (n > TECS_MAX_FIELDS)
        return bad(in, "snapshot: component '%s' has too many fields", name);
    in->nfields = (int32_t)n;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t len;
        unsigned char b[16];
        if ((err = r_u32(in, &len)))
            return err;
        if (len == 0 || len > SNAP_MAX_NAME)
            return bad(in, "snapshot: a field name of component '%s' is empty or too long",
                       name);
        if ((err = blob_room(in, used + len + 1)) ||
            (err = r_bytes(in, in->blob + used, len)) || (err = r_bytes(in, b, 16)))
            return err;
        in->blob[used + len] = 0;
        uint32_t place = get32(b + 12);
        if (strlen((const char *)in->blob + used) != len || b[1] || b[2] || b[3] ||
            get32(b + 8) > INT32_MAX || (b[0] == TECS_TYPE_STRUCT) != (place != NO_PLACE) ||
            (place != NO_PLACE && place >= i))
            return bad(in, "snapshot: a field of component '%s' is malformed", name);
        in->fields[k] = (tecs_field_t){ .type = (tecs_type_t)b[0], .offset = get32(b + 4),
                                        .count = (int32_t)get32(b + 8),
                                        .comp = place != NO_PLACE ? in->comps[place].id : 0 };
        at[k] = (uint32_t)used;
        used += len + 1;
    }
    for (uint32_t k = 0; k < n; k++)        /* (the blob is where it will stay) */
        in->fields[k].name = (const char *)in->blob + at[k];
    return TECS_OK;
}

static tecs_err_t load_comps(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t tag, n;
    tecs_err_t err;
    if ((err = r_tag(in, &tag)) || (err = r_u32(in, &n)))
        return err;
    if (tag != TAG_COMP)
        return bad(in, "snapshot: %s", "the component table is missing");
    if (n >= TECS_MAX_COMPONENTS)
        return bad(in, "snapshot: %s", "too many components");
    in->comps = tecs__alloc(w, (size_t)n * sizeof *in->comps + 1);
    if (in->comps == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory loading a snapshot");
    in->ncomps = n;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id, len;
        char name[SNAP_MAX_NAME + 1];
        unsigned char b[20];
        if ((err = r_u32(in, &id)) || (err = r_u32(in, &len)))
            return err;
        if (len == 0 || len > SNAP_MAX_NAME)
            return bad(in, "snapshot: %s", "a component name is empty or too long");
        if ((err = r_bytes(in, name, len)) || (err = r_bytes(in, b, 20)))
            return err;
        name[len] = 0;
        if (strlen(name) != len)
            return bad(in, "snapshot: %s", "a component name holds a zero byte");
        tecs__comp saved = { .size = get32(b), .align = get32(b + 4), .sparse = b[8] != 0,
                             .enableable = b[9] != 0 };
        if (b[8] > 1 || b[9] > 1 || b[10] > ENC_FIELDS || b[11] != 0 ||
            saved.size > TECS_MAX_COMPONENT_SIZE || saved.align == 0 ||
            saved.align > TECS_MAX_ALIGN || (saved.align & (saved.align - 1)) ||
            saved.size % saved.align)
            return bad(in, "snapshot: component '%s' has a bad size, alignment or flag", name);
        lcomp *lc = &in->comps[i];
        *lc = (lcomp){ .size = saved.size, .align = saved.align, .sparse = saved.sparse,
                       .enableable = saved.enableable, .serialized = b[10] != 0,
                       .fields = b[10] == ENC_FIELDS };
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(tecs__comp_name(w, in->comps[j].id), name) == 0)
                return bad(in, "snapshot: component '%s' is listed twice", name);
        if ((err = load_fields(in, i, name)) ||
            (err = match_comp(in, name, id, &saved, get64(b + 12), lc)))
            return err;
    }
    return r_end(in, TAG_COMP);
}

/* The n generations of ENTS, checked (none is 0) and summed, at
** in->gens: in place with a view, else copied to in->own as they arrive. */
static tecs_err_t load_gens(reader *in, uint32_t n)
{
    const unsigned char *p = NULL;
    tecs_err_t err;
    if (in->view && (p = in->view(in->ctx, (size_t)n * 4)) == NULL && n > 0)
        return ends_early(in);
    for (uint32_t i = 0; i < n; i += SNAP_BATCH) {
        uint32_t k = n - i < SNAP_BATCH ? n - i : SNAP_BATCH;
        const unsigned char *b;
        if (p != NULL) {
            b = p + (size_t)i * 4;
            sum_add(&in->sum, b, (size_t)k * 4);
        } else {
            if (tecs__grow(in->w, (void **)&in->own, &in->own_cap, (int32_t)(i + k), 4))
                return tecs__err(in->w, TECS_ENOMEM, "out of memory loading a snapshot");
            b = in->own + (size_t)i * 4;
            if ((err = r_bytes(in, in->own + (size_t)i * 4, (size_t)k * 4)))
                return err;
        }
        uint32_t zeros = 0;                 /* counted: the loop vectorizes */
        for (uint32_t j = 0; j < k; j++)
            zeros += get32(b + 4 * j) == 0;
        if (zeros > 0)
            return bad(in, "snapshot: %s", "a slot has generation 0");
    }
    in->gens = p ? p : in->own;
    return TECS_OK;
}

/* Slot i's saved generation. */
static inline uint32_t gen_of(const reader *in, uint32_t i)
{
    return get32(in->gens + (size_t)i * 4);
}

/* Slot i's record is written (its bit in in->seen). */
static inline bool seen_get(const reader *in, uint32_t i)
{
    return (in->seen[i >> 6] >> (i & 63)) & 1;
}

static inline void seen_set(reader *in, uint32_t i)
{
    in->seen[i >> 6] |= (uint64_t)1 << (i & 63);
}

/* Mark slots [s, s + k) seen, a word at a time; true if one was before. */
static bool seen_run(reader *in, uint32_t s, uint32_t k)
{
    uint64_t again = 0;
    for (uint32_t end = s + k, n; s < end; s += n) {
        uint32_t lo = s & 63;
        n = end - s < 64 - lo ? end - s : 64 - lo;
        uint64_t bits = (n == 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1) << lo;
        again |= in->seen[s >> 6] & bits;
        in->seen[s >> 6] |= bits;
    }
    return again != 0;
}

/* Slots in loading: a slot's record is written once, when the slot is
** found free (ENTS) or alive (ARCH), and marked in in->seen; those left
** unseen at the end are retired (generation at its maximum), written by
** fill_records. Until then only seen records are read. */
static tecs_err_t load_ents(reader *in)
{
    tecs_world_t *w = in->w;
    tecs__ei_state *s = &w->ei;
    uint32_t tag, n, nfree;
    tecs_err_t err;
    if ((err = r_tag(in, &tag)) || (err = r_u32(in, &n)))
        return err;
    if (tag != TAG_ENTS)
        return bad(in, "snapshot: %s", "the entity slots are missing");
    if (n >= UINT32_MAX - 1 || n > (uint32_t)INT32_MAX)
        return bad(in, "snapshot: %s", "too many entity slots");
    s->nrecs = 0;
    s->free_head = s->free_tail = TECS__NO_SLOT;
    s->nfree = 0;
    if ((err = load_gens(in, n)))
        return err;
    if (((int32_t)n > s->cap_recs &&
         tecs__grow(w, (void **)&s->recs, &s->cap_recs, (int32_t)n, sizeof *s->recs)) ||
        (in->seen = tecs__alloc(w, ((size_t)n / 64 + 1) * 8)) == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory loading a snapshot");
    in->nseen = n / 64 + 1;
    memset(in->seen, 0, (size_t)in->nseen * 8);
    s->nrecs = (int32_t)n;
    if ((err = r_u32(in, &nfree)))
        return err;
    if (nfree > n)
        return bad(in, "snapshot: %s", "more free slots than slots");
    for (uint32_t i = 0; i < nfree; i++) {
        uint32_t slot;
        if ((err = r_u32(in, &slot)))
            return err;
        if (slot >= n || seen_get(in, slot) || gen_of(in, slot) == UINT32_MAX)
            return bad(in, "snapshot: %s", "the free list names a bad or repeated slot");
        seen_set(in, slot);
        s->recs[slot] = (tecs__record){ .gen = gen_of(in, slot) - 1 };
        tecs__ei_release(w, slot);          /* moves the generation on: to the saved one */
    }
    return r_end(in, TAG_ENTS);
}

/* Write the records of the slots not seen, retired; false if one of them
** has not its generation at the maximum (it is neither alive, free nor
** retired). */
static bool fill_records(reader *in)
{
    tecs__ei_state *s = &in->w->ei;
    bool ok = true;
    if (in->seen == NULL || s->nalive + s->nfree == s->nrecs)
        return true;                        /* (each seen slot is one of these) */
    for (uint32_t i = 0; i < (uint32_t)s->nrecs; i++)
        if (!seen_get(in, i)) {
            uint32_t gen = gen_of(in, i);
            s->recs[i] = (tecs__record){ .gen = gen, .arch = TECS__ARCH_RETIRED };
            seen_set(in, i);
            ok = ok && gen == UINT32_MAX;
        }
    return ok;
}

/* Destroy the values of a's hooked columns that the load built: the
** columns in done whole, column col (if not -1) up to row. */
static void undo_columns(tecs_world_t *w, tecs_archetype_t *a, uint32_t count, uint64_t done,
                         int32_t col, uint32_t row)
{
    for (int32_t c = 0; c < a->ncols; c++) {
        const tecs__comp *ci = tecs__col_info(w, a, c);
        uint32_t n = (done >> c) & 1 ? count : c == col ? row : 0;
        for (uint32_t r = 0; r < n && ci->dtor != NULL; r++)
            tecs__comp_dtor(w, ci, tecs__col_ptr(a, w, c, r), 1);
    }
}

/* Build one value at dst of the saved component lc (world's ci). */
/* Build a value of c at dst from the n bytes fields_put wrote (in the
** blob): a staging value read field by field, then constructed at dst
** through the component's hooks, whose copy duplicates the strings. */
static tecs_err_t fields_build(reader *in, tecs_comp_t c, void *dst, size_t n)
{
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, c);
    size_t need = (size_t)ci->size + n + 1;     /* staging, then its text (<= n) */
    if (need > in->stage_cap) {
        void *p = realloc_closed(w, in->stage, in->stage_cap, need);
        if (p == NULL)
            return TECS_ENOMEM;
        in->stage = p;
        in->stage_cap = need;
    }
    memset(in->stage, 0, ci->size);
    char *text = (char *)in->stage + ci->size;
    size_t pos = 0;
    if (!fields_get(w, c, in->stage, in->blob, n, &pos, &text) || pos != n)
        return TECS_EFORMAT;
    tecs__construct_one(w, ci, dst, in->stage);
    return TECS_OK;
}

static tecs_err_t load_value(reader *in, const lcomp *lc, void *dst)
{
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, lc->id);
    tecs_err_t err;
    if (!lc->serialized && !lc->convert) {
        if ((err = r_bytes(in, dst, ci->size)) == TECS_OK && lc->swap)
            tecs__meta_swap(w, lc->id, dst);
        return err;
    }
    uint32_t len = lc->size;
    if (lc->serialized) {
        if ((err = r_u32(in, &len)))
            return err;
        if (len > SNAP_MAX_BLOB)
            return bad(in, "snapshot: a value of component '%s' is too long", ci->name);
    }
    if ((err = blob_room(in, len ? len : 1)) || (err = r_bytes(in, in->blob, len)))
        return err;
    uint8_t was = cb_close(w);
    if (lc->fields)
        err = fields_build(in, lc->id, dst, len);
    else
        err = lc->serialized ? ci->deserialize(dst, in->blob, len, ci->serial_ctx)
                             : ci->convert(dst, in->blob, len, ci->serial_ctx);
    cb_open(w, was);
    if (err && lc->fields)
        return err == TECS_ENOMEM ? tecs__err(w, err, "out of memory loading a snapshot")
               : bad(in, "snapshot: a value of component '%s' does not fit its description",
                     ci->name);
    if (err)
        return tecs__err(w, err, "the %s hook of " TECS__COMP_FMT " failed (%s)",
                         lc->serialized ? "deserialize" : "convert", TECS__COMP(w, lc->id),
                         tecs_err_name(err));
    return TECS_OK;
}

/* The values of column col (component lc) for count rows of a. */
static tecs_err_t load_column(reader *in, tecs_archetype_t *a, int32_t col, const lcomp *lc,
                              uint32_t count, uint32_t *row)
{
    tecs_world_t *w = in->w;
    tecs_err_t err;
    if (!lc->serialized && !lc->convert) {
        for (*row = 0; *row < count; *row += w->arch.rows) {
            uint32_t k = count - *row < w->arch.rows ? count - *row : w->arch.rows;
            char *at = tecs__col_ptr(a, w, col, *row);
            if ((err = r_bytes(in, at, (size_t)k * a->col_size[col])))
                return err;
            for (uint32_t i = 0; lc->swap && i < k; i++)
                tecs__meta_swap(w, lc->id, at + (size_t)i * a->col_size[col]);
        }
        return TECS_OK;
    }
    for (*row = 0; *row < count; ++*row)
        if ((err = load_value(in, lc, tecs__col_ptr(a, w, col, *row))))
            return err;
    return TECS_OK;
}

/* The archetype of an ARCH section's component list. */
static tecs_err_t load_arch_comps(reader *in, tecs_archetype_t **out, uint32_t *places)
{
    tecs_world_t *w = in->w;
    uint32_t n;
    tecs_err_t err;
    tecs_comp_t ids[TECS_MAX_ARCH_COMPONENTS];
    if ((err = r_u32(in, &n)))
        return err;
    if (n > TECS_MAX_ARCH_COMPONENTS)
        return bad(in, "snapshot: %s", "an archetype has too many components");
    for (uint32_t i = 0; i < n; i++) {
        if ((err = r_u32(in, &places[i])))
            return err;
        if (places[i] >= in->ncomps || in->comps[places[i]].sparse)
            return bad(in, "snapshot: %s", "an archetype names a bad component");
        ids[i] = in->comps[places[i]].id;
    }
    for (uint32_t i = 1; i < n; i++)              /* insertion sort by id */
        for (uint32_t j = i; j > 0 && ids[j - 1] >= ids[j]; j--) {
            if (ids[j - 1] == ids[j])
                return bad(in, "snapshot: %s", "an archetype names a component twice");
            tecs_comp_t t = ids[j];
            ids[j] = ids[j - 1], ids[j - 1] = t;
        }
    *out = tecs__arch_get(w, (int32_t)n, ids);
    if (*out == NULL)
        return w->base.err ? w->base.err : TECS_ENOMEM;
    return TECS_OK;
}

/* The records and ids of k rows from row r of archetype id, whose slots
** are s0, s0 + 1, ... (a world saved in slot order, the common case): the
** generations and the records are read and written in order, four rows
** at a time with SSE2 (four records are three vectors). */
static void put_run(tecs__record *recs, tecs_entity_t *ents, const unsigned char *gens,
                    uint32_t s0, uint32_t k, uint32_t id, uint32_t r)
{
    uint32_t j = 0;
#if defined(__SSE2__) || defined(_M_X64)
    _Static_assert(sizeof(tecs__record) == 12 && offsetof(tecs__record, gen) == 0 &&
                       offsetof(tecs__record, arch) == 4 && offsetof(tecs__record, row) == 8,
                   "put_run writes a record as its three 32-bit words in order");
    const __m128i av = _mm_set1_epi32((int)id), four = _mm_set1_epi32(4);
    const __m128i step = _mm_setr_epi32(0, 1, 2, 3);
    __m128i rv = _mm_add_epi32(_mm_set1_epi32((int)r), step);
    __m128i sv = _mm_add_epi32(_mm_set1_epi32((int)s0), step);
    for (; j + 4 <= k; j += 4) {
        __m128i g = _mm_loadu_si128((const __m128i *)(const void *)(gens + (size_t)(s0 + j) * 4));
        __m128 t0 = _mm_castsi128_ps(_mm_unpacklo_epi32(g, av));   /* g0 id g1 id */
        __m128 t1 = _mm_castsi128_ps(_mm_unpacklo_epi32(rv, g));   /* r0 g0 r1 g1 */
        __m128 t2 = _mm_castsi128_ps(_mm_unpacklo_epi32(av, rv));  /* id r0 id r1 */
        __m128 t3 = _mm_castsi128_ps(_mm_unpackhi_epi32(g, av));   /* g2 id g3 id */
        __m128 t4 = _mm_castsi128_ps(_mm_unpackhi_epi32(rv, g));   /* r2 g2 r3 g3 */
        __m128 t5 = _mm_castsi128_ps(_mm_unpackhi_epi32(av, rv));  /* id r2 id r3 */
        __m128i *d = (__m128i *)(void *)(recs + s0 + j), *e = (__m128i *)(void *)(ents + j);
        /* (g0 id r0 g1) (id r1 g2 id) (r2 g3 id r3) */
        _mm_storeu_si128(d, _mm_castps_si128(_mm_shuffle_ps(t0, t1, _MM_SHUFFLE(3, 0, 1, 0))));
        _mm_storeu_si128(d + 1, _mm_castps_si128(_mm_shuffle_ps(t2, t3, _MM_SHUFFLE(1, 0, 3, 0))));
        _mm_storeu_si128(d + 2, _mm_castps_si128(_mm_shuffle_ps(t4, t5, _MM_SHUFFLE(3, 0, 3, 0))));
        _mm_storeu_si128(e, _mm_unpacklo_epi32(sv, g));            /* slot, gen: ids */
        _mm_storeu_si128(e + 1, _mm_unpackhi_epi32(sv, g));
        rv = _mm_add_epi32(rv, four);
        sv = _mm_add_epi32(sv, four);
    }
#endif
    for (; j < k; j++) {
        uint32_t gen = get32(gens + (size_t)(s0 + j) * 4);
        recs[s0 + j] = (tecs__record){ .gen = gen, .arch = id, .row = r + j };
        ents[j] = tecs__make_id(s0 + j, gen);
    }
}

/* The rows' slots: chunks grow as the slots arrive; each slot's record is
** written whole (the archetype's count is set once its values are in). A
** step stays within one chunk, so its rows' ids go to one array; when its
** slots follow each other, its records are one array too (put_run). A bad
** slot (out of range, free or repeated) is found once a step, after its
** records are written: the load fails and undo_load rewrites them all. */
static tecs_err_t load_rows(reader *in, tecs_archetype_t *a, uint32_t count)
{
    tecs_world_t *w = in->w;
    tecs__ei_state *s = &w->ei;
    unsigned char buf[SNAP_BATCH * 4];
    tecs_err_t err;
    if ((int64_t)count > (int64_t)s->max_entities - s->nalive)
        return tecs__err(w, TECS_ELIMIT, "snapshot: the world's entity limit (%d) is below "
                         "the snapshot's entities", s->max_entities);
    if (count > (uint32_t)(s->nrecs - s->nalive))
        return bad(in, "snapshot: %s", "more rows than slots");
    if (in->left && (uint64_t)count * 4 <= in->left(in->ctx) &&
        (err = tecs__arch_reserve_rows(w, a, (int32_t)count)))
        return err;
    const uint32_t nrecs = (uint32_t)s->nrecs, id = a->id;
    uint64_t *seen = in->seen;
    const unsigned char *gens = in->gens;
    for (uint32_t r = 0; r < count;) {
        uint32_t k = count - r, in_chunk = w->arch.rows - (r & w->arch.mask);
        const unsigned char *b;
        k = k < in_chunk ? k : in_chunk;
        k = k < SNAP_BATCH ? k : SNAP_BATCH;
        if ((err = r_view(in, buf, (size_t)k * 4, &b)) ||
            (err = tecs__arch_reserve_rows(w, a, (int32_t)(r + k))))
            return err;
        tecs_entity_t *ents = tecs__ent_ptr(a, w, r);
        tecs__record *recs = s->recs;
        const uint32_t s0 = get32(b);
        uint32_t apart = 0, outside = 0;    /* or'd and counted: the loops vectorize */
        for (uint32_t j = 0; j < k; j++)
            apart |= get32(b + 4 * j) ^ (s0 + j);
        if (apart == 0)
            outside = (uint64_t)s0 + k > nrecs;
        for (uint32_t j = 0; j < k && apart != 0; j++)
            outside += get32(b + 4 * j) >= nrecs;
        uint64_t again = outside;
        if (outside == 0 && apart == 0) {
            again = seen_run(in, s0, k);
            put_run(recs, ents, gens, s0, k, id, r);
        }
        for (uint32_t j = 0; j < k && outside == 0 && apart != 0; j++) {
            uint32_t slot = get32(b + 4 * j), gen = get32(gens + (size_t)slot * 4);
            uint64_t bit = (uint64_t)1 << (slot & 63);
            again |= seen[slot >> 6] & bit;
            seen[slot >> 6] |= bit;
            recs[slot] = (tecs__record){ .gen = gen, .arch = id, .row = r + j };
            ents[j] = tecs__make_id(slot, gen);
        }
        if (again)
            return bad(in, "snapshot: %s", "a row names a bad, free or repeated slot");
        r += k;
    }
    return TECS_OK;
}

/* The enableable bits of a's rows [start, start + n): a bit column per
** enableable component, in the saved list's order (places); set or
** cleared row by row. */
static tecs_err_t load_bits(reader *in, tecs_archetype_t *a, const uint32_t *places,
                            uint32_t start, uint32_t n)
{
    tecs_world_t *w = in->w;
    unsigned char b[256];
    tecs_err_t err;
    for (int32_t i = 0; i < a->ncomps; i++) {
        int32_t j = tecs__arch_tog(a, in->comps[places[i]].id);
        for (uint32_t r = 0; j >= 0 && r < n; r += 8 * sizeof b) {
            uint32_t nb = (n - r + 7) / 8 < sizeof b ? (n - r + 7) / 8 : sizeof b;
            if ((err = r_bytes(in, b, nb)))
                return err;
            for (uint32_t k = 0; k < nb * 8; k++) {
                bool on = (b[k / 8] >> (k & 7)) & 1;
                if (on && r + k >= n)
                    return bad(in, "snapshot: %s", "a bit is set past the rows");
                if (r + k < n)
                    tecs__arch_bit_put(w, a, j, start + r + k, on);
            }
        }
    }
    return TECS_OK;
}

/* ARCH: the rows' slots, then the columns in the saved order (the saved
** component list's, which the world's ids may sort otherwise), then the
** bits. On failure the values built so far are destroyed and the chunks
** freed; undo_load puts the records back. */
static tecs_err_t load_arch(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t places[TECS_MAX_ARCH_COMPONENTS], count = 0, row = 0;
    tecs_archetype_t *a = NULL;
    int32_t col = -1;
    uint64_t done = 0;
    tecs_err_t err = load_arch_comps(in, &a, places);
    if (err || (err = r_u32(in, &count)))
        return err;
    if (a->count > 0)                            /* rows are counted once loaded */
        return bad(in, "snapshot: %s", "an archetype is listed twice");
    if ((err = load_rows(in, a, count)))
        goto fail;
    for (int32_t i = 0; i < a->ncomps; i++) {
        const lcomp *lc = &in->comps[places[i]];
        col = tecs__arch_col(a, lc->id);
        if (col < 0)
            continue;
        if ((err = load_column(in, a, col, lc, count, &row)))
            goto fail;
        done |= (uint64_t)1 << col;
    }
    col = -1;
    if ((err = load_bits(in, a, places, 0, count)) || (err = r_end(in, TAG_ARCH)))
        goto fail;
    if (count > 0)
        tecs__arch_entered_n(&w->arch, a, 0, count);    /* born now, for change terms */
    a->count = (int32_t)count;
    w->ei.nalive += (int32_t)count;
    return TECS_OK;
fail:
    undo_columns(w, a, count, done, col, row);
    tecs__arch_clear(w, a);
    return err;
}

/* Take out, unbuilt, the members of c from place i on (the last first). */
static void unbuilt(tecs_world_t *w, tecs_comp_t c, int32_t i)
{
    for (int32_t j = tecs__sparse_count(w, c); j-- > i;)
        tecs__sparse_erase(w, c, TECS_ENTITY_INDEX(tecs__sparse_members(w, c)[j]));
}

/* The n members of lc's set (empty): they join in the saved order, then
** get their values. A member's record must be written and alive (in->seen
** is NULL in a delta, whose world's records are all written). A member's
** value is unbuilt until then: a failure takes the unbuilt ones out
** before undo_load destroys the rest. */
static tecs_err_t load_members(reader *in, const lcomp *lc, uint32_t n)
{
    tecs_world_t *w = in->w;
    tecs_comp_t c = lc->id;
    tecs_err_t err = TECS_OK;
    if (n > (uint32_t)w->ei.nalive)
        return bad(in, "snapshot: %s", "a sparse component has a bad member count");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot;
        if ((err = r_u32(in, &slot)))
            break;
        if (slot >= (uint32_t)w->ei.nrecs || (in->seen && !seen_get(in, slot)) ||
            w->ei.recs[slot].arch >= TECS__ARCH_RETIRED || tecs__sparse_get(w, c, slot) != NULL) {
            err = bad(in, "snapshot: %s", "a sparse member is not alive or repeated");
            break;
        }
        if ((err = tecs__sparse_reserve(w, c, slot)))
            break;
        tecs__sparse_insert(w, c, tecs__make_id(slot, w->ei.recs[slot].gen));
    }
    uint32_t built = 0;
    for (; err == TECS_OK && built < n && tecs__comp_get(w, c)->size > 0; built++) {
        uint32_t slot = TECS_ENTITY_INDEX(tecs__sparse_members(w, c)[built]);
        if ((err = load_value(in, lc, tecs__sparse_get(w, c, slot))))
            break;
    }
    if (err)
        unbuilt(w, c, (int32_t)built);
    return err;
}

/* A sparse section's component (*lc) and member count (*n). */
static tecs_err_t sparse_head(reader *in, const lcomp **lc, uint32_t *n)
{
    uint32_t place;
    tecs_err_t err;
    if ((err = r_u32(in, &place)) || (err = r_u32(in, n)))
        return err;
    if (place >= in->ncomps || !in->comps[place].sparse)
        return bad(in, "snapshot: %s", "a sparse section names a bad component");
    *lc = &in->comps[place];
    return TECS_OK;
}

/* SPRS: a sparse component's place and its members. */
static tecs_err_t load_sparse(reader *in)
{
    tecs_world_t *w = in->w;
    const lcomp *lc = NULL;
    uint32_t n;
    tecs_err_t err = sparse_head(in, &lc, &n);
    if (err)
        return err;
    if (tecs__sparse_count(w, lc->id) > 0)
        return bad(in, "snapshot: %s", "a sparse component is listed twice");
    if (n == 0)
        return bad(in, "snapshot: %s", "a sparse component has a bad member count");
    if ((err = load_members(in, lc, n)))
        return err;
    return r_end(in, TAG_SPRS);
}

/* RSRC: each value built aside, set, then destroyed here. */
static tecs_err_t load_resources(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t n;
    tecs_err_t err;
    if ((err = r_u32(in, &n)))
        return err;
    if (n > in->ncomps)
        return bad(in, "snapshot: %s", "too many resources");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t place;
        if ((err = r_u32(in, &place)))
            return err;
        if (place >= in->ncomps || tecs_resource_has(w, in->comps[place].id))
            return bad(in, "snapshot: %s", "a resource names a bad or repeated component");
        const lcomp *lc = &in->comps[place];
        const tecs__comp *ci = tecs__comp_get(w, lc->id);
        void *value = NULL;
        void *raw = NULL;
        if (ci->size > 0) {
            if ((value = tecs__alloc_aligned(w, ci->size, &raw)) == NULL)
                return tecs__err(w, TECS_ENOMEM, "out of memory loading a snapshot");
            if ((err = load_value(in, lc, value))) {
                tecs__free_aligned(w, raw, ci->size);
                return err;
            }
        }
        err = tecs_resource_set(w, lc->id, value);
        if (value && (lc->serialized || lc->convert))
            tecs__comp_dtor(w, ci, value, 1);
        if (raw)
            tecs__free_aligned(w, raw, ci->size);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* The world empty again after a failed load. */
static void undo_load(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->arch.narchs; i++)
        if (w->arch.archs[i]->count > 0)
            tecs__arch_clear(w, w->arch.archs[i]);
    tecs__sparse_clear(w);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++)
        if (tecs__comp_get(w, c) && tecs_resource_has(w, c))
            tecs_resource_remove(w, c);
    w->ei.nretired = 0;
    for (int32_t i = 0; i < w->ei.nrecs; i++) {
        tecs__record *r = &w->ei.recs[i];
        r->arch = r->gen == UINT32_MAX ? TECS__ARCH_RETIRED : TECS__ARCH_DEAD;
        w->ei.nretired += r->gen == UINT32_MAX;
    }
    w->ei.nalive = 0;
    tecs__ei_relink(w);
}

static tecs_err_t load_all(reader *in)
{
    uint32_t tag;
    tecs_err_t err;
    if ((err = load_header(in, magic)) || (err = load_comps(in)) || (err = load_ents(in)))
        return err;
    for (;;) {
        if ((err = r_tag(in, &tag)))
            return err;
        if (tag == TAG_ARCH)
            err = load_arch(in);
        else if (tag == TAG_SPRS)
            err = load_sparse(in);
        else
            break;
        if (err)
            return err;
    }
    if (tag != TAG_RSRC)
        return bad(in, "snapshot: %s", "a section is missing or unknown");
    if (!fill_records(in))
        return bad(in, "snapshot: %s", "a slot is neither alive, free nor retired");
    if ((err = load_resources(in)) || (err = r_end(in, TAG_RSRC)) || (err = r_tag(in, &tag)))
        return err;
    if (tag != TAG_END)
        return bad(in, "snapshot: %s", "the end is missing");
    return r_end(in, TAG_END);
}

/* The world may take a load: open, outside every callback, empty. */
static tecs_err_t may_load(tecs_world_t *w)
{
    tecs_err_t err = refuse_now(w, "tecs_snapshot_load");
    if (err)
        return err;
    if (w->ei.nalive > 0 || tecs_resource_count(w) > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_snapshot_load needs an empty world (%d "
                         "entities, %d resources)", w->ei.nalive, tecs_resource_count(w));
    return TECS_OK;
}

/* The loaded rows came without events: the world's indexes and caches are
** built from them; a unique index whose loaded keys repeat fails the load. */
static tecs_err_t load_indexes(tecs_world_t *w)
{
    tecs_err_t err = tecs__indexes_rebuild(w);
    if (err == TECS_EEXIST) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        tecs__err(w, err, "snapshot: the loaded entities break an index: %s", msg);
    }
    return err;
}

static tecs_err_t load_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left,
                            view_fn view)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (read == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL reader");
    if ((err = may_load(w)))
        return err;
    reader in = { .w = w, .fn = read, .ctx = ctx, .left = left, .view = view };
    err = load_all(&in);
    if (err == TECS_OK && left && left(ctx) > 0)
        err = tecs__err(w, TECS_EFORMAT, "snapshot: %zu bytes follow its end", left(ctx));
    fill_records(&in);                          /* (after a failure: for undo_load) */
    if (in.seen)
        tecs__free(w, in.seen, (size_t)in.nseen * 8);
    tecs__free(w, in.own, (size_t)in.own_cap * 4);
    tecs__free(w, in.comps, (size_t)in.ncomps * sizeof *in.comps + 1);
    tecs__free(w, in.blob, in.blob_cap);
    tecs__free(w, in.stage, in.stage_cap);
    bool built = err == TECS_OK;
    if (built)
        err = load_indexes(w);
    if (err) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        undo_load(w);
        if (built)                              /* emptied: with no row, it cannot fail */
            tecs__indexes_rebuild(w);
        w->base.err = err;                      /* the failure's own message */
        memcpy(w->base.errmsg, msg, sizeof msg);
        return err;
    }
    w->ei.nretired = w->ei.nrecs - w->ei.nalive - w->ei.nfree;
    w->base.err = TECS_OK;
    return TECS_OK;
}

tecs_err_t tecs_snapshot_load(tecs_world_t *w, tecs_read_fn read, void *ctx)
{
    return load_with(w, read, ctx, NULL, NULL);
}

/* ==================================================================== */
/* Serializers, and the helpers for stdio and memory                    */
/* ==================================================================== */

tecs_err_t tecs_component_serializer(tecs_world_t *w, tecs_comp_t c, const tecs_serializer_t *s)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
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

static tecs_err_t file_write(void *ctx, const void *data, size_t n)
{
    return fwrite(data, 1, n, ctx) == n ? TECS_OK : TECS_EINVAL;
}

static tecs_err_t file_read(void *ctx, void *data, size_t n)
{
    if (fread(data, 1, n, ctx) == n)
        return TECS_OK;
    return ferror((FILE *)ctx) ? TECS_EINVAL : TECS_EFORMAT;
}

tecs_err_t tecs_snapshot_save_file(tecs_world_t *w, FILE *f)
{
    if (w != NULL && f == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL file");
    errno = 0;
    tecs_err_t err = tecs_snapshot_save(w, file_write, f);
    if (err == TECS_OK && fflush(f) != 0)
        err = TECS_EINVAL;
    if (w != NULL && err == TECS_EINVAL && errno != 0)
        tecs__err(w, err, "writing the snapshot: %s", strerror(errno));
    return err;
}

tecs_err_t tecs_snapshot_load_file(tecs_world_t *w, FILE *f)
{
    if (w != NULL && f == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL file");
    return tecs_snapshot_load(w, file_read, f);
}

static tecs_err_t mem_write(void *ctx, const void *data, size_t n)
{
    tecs_snapshot_buf_t *b = ctx;
    tecs_err_t err = buf_reserve(b, n);
    if (err)
        return err;
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return TECS_OK;
}

tecs_err_t tecs_snapshot_save_mem(tecs_world_t *w, tecs_snapshot_buf_t *buf)
{
    if (w != NULL && buf == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL buffer");
    if (buf)
        buf->size = 0;
    tecs_err_t err = tecs_snapshot_save(w, mem_write, buf);
    if (err && buf)
        buf->size = 0;
    return err;
}

void tecs_snapshot_buf_free(tecs_snapshot_buf_t *buf)
{
    if (buf == NULL)
        return;
    free(buf->data);
    *buf = (tecs_snapshot_buf_t){ 0 };
}

typedef struct mem_in {
    const unsigned char *p;
    size_t left;
} mem_in;

static tecs_err_t mem_read(void *ctx, void *data, size_t n)
{
    mem_in *m = ctx;
    if (n > m->left)
        return TECS_EFORMAT;
    memcpy(data, m->p, n);
    m->p += n;
    m->left -= n;
    return TECS_OK;
}

static size_t mem_left(void *ctx)
{
    return ((mem_in *)ctx)->left;
}

static const unsigned char *mem_view(void *ctx, size_t n)
{
    mem_in *m = ctx;
    if (n > m->left)
        return NULL;
    m->p += n;
    m->left -= n;
    return m->p - n;
}

tecs_err_t tecs_snapshot_load_mem(tecs_world_t *w, const void *data, size_t size)
{
    if (w != NULL && data == NULL && size > 0)
        return tecs__err(w, TECS_EINVAL, "NULL data");
    mem_in m = { data, size };
    return load_with(w, mem_read, &m, mem_left, mem_view);
}

/* ==================================================================== */
/* Deltas                                                               */
/* ==================================================================== */

/*
** A delta is a header ("TECSDLTA", else as a snapshot's) and sections:
**
**     BASE     where the mirror must be: its slot, entity and free counts
**     COMP     the component table, as a snapshot's
**     DENT     the slots: their count now; the free list's change: how
**              many slots left its head, then the slots appended since
**              and still free, with their generations; the retired slots
**              (all of them, when any retired since the mark)
**     DROW     every archetype, in the world's order: its components, its
**              row count, and its runs of changed rows: a run that rows
**              entered (whole: its slots and generations), or one chunk
**              whose listed columns were written
**     DVAL     those runs' values in the same order: a whole run's columns
**              and bits, a written run's listed columns
**     DSPR     per sparse set that changed: all its members and values
**     RSRC     the resources, END.
**
** Why an untouched chunk may be skipped: a row enters a chunk (a birth, a
** move in, a swap-remove filling a hole, an enable or a disable) only
** with the chunk's entered tick stamped, and leaves it unstamped only from
** the end; so a chunk whose entered tick is not newer than the mark holds
** a prefix of the rows it held then, in the same order, and its columns
** whose tick is not newer hold the same values.
**
** Applying, the structure (DENT, DROW) is read whole first. Then the
** slots whose record the delta replaces (rows it rewrites or drops, free
** slots it takes, new slots) go into limbo (TECS__ARCH_PENDING), and each
** must leave it exactly once: named by a row, appended to the free list,
** or retired. A slot named that is not in limbo, or one left in limbo, is
** a delta that does not fit the world. The values follow. A failure from
** the first change on empties the world (undo_load).
*/

#define RUN_WHOLE   0xffffffffu
#define LIMBO       TECS__ARCH_PENDING

/* A run of rows a delta carries. */
typedef struct drun {
    uint32_t start, n;
    bool whole;                 /* rows entered: all of it                  */
    uint64_t cols;              /* else: the written columns of one chunk   */
} drun;

/* The next run of a's rows changed since tick since, from chunk *k on;
** false when none is left. Whole chunks in a row make one run. */
static bool next_run(const tecs_world_t *w, const tecs_archetype_t *a, uint64_t since,
                     uint32_t *k, drun *run)
{
    const uint32_t count = (uint32_t)a->count, rows = w->arch.rows;
    const uint32_t used = (count + w->arch.mask) >> w->arch.shift;
    for (; *k < used; ++*k) {
        uint32_t start = *k << w->arch.shift;
        uint32_t n = count - start < rows ? count - start : rows;
        if (a->chunks[*k].entered > since) {
            *run = (drun){ .start = start, .n = n, .whole = true };
            while (++*k < used && a->chunks[*k].entered > since) {
                start = *k << w->arch.shift;
                run->n += count - start < rows ? count - start : rows;
            }
            return true;
        }
        const uint64_t *t = tecs__chunk_ticks(a, *k);
        uint64_t cols = 0;
        for (int32_t c = 0; c < a->ncols; c++)
            cols |= (uint64_t)(t[c] > since) << c;
        if (cols) {
            *run = (drun){ .start = start, .n = n, .cols = cols };
            ++*k;
            return true;
        }
    }
    return false;
}

static void mark_now(tecs_world_t *w, tecs_mark_t *m)
{
    const tecs__ei_state *s = &w->ei;
    *m = (tecs_mark_t){ .world = w->base.ident, .tick = w->arch.tick, .pushes = s->pushes, .pops = s->pops,
                        .nslots = s->nrecs, .nalive = s->nalive, .nfree = s->nfree,
                        .nretired = s->nretired };
    tecs__arch_tick_next(&w->arch); /* what changes from now on is newer */
}

/* Slots taken from the free list's head since m (at most its length
** then), and slots appended since m that are still free (the list's tail). */
static uint32_t taken_since(const tecs_world_t *w, const tecs_mark_t *m)
{
    uint64_t pops = w->ei.pops - m->pops;
    return pops < (uint64_t)m->nfree ? (uint32_t)pops : (uint32_t)m->nfree;
}

static uint32_t added_since(const tecs_world_t *w, const tecs_mark_t *m)
{
    uint64_t pushes = w->ei.pushes - m->pushes;
    return pushes < (uint64_t)w->ei.nfree ? (uint32_t)pushes : (uint32_t)w->ei.nfree;
}

/* Is m a mark of w's past? */
static tecs_err_t mark_check(tecs_world_t *w, const tecs_mark_t *m)
{
    const tecs__ei_state *s = &w->ei;
    if (m->world != w->base.ident)
        return tecs__err(w, TECS_EINVAL, m->world == 0
                         ? "tecs_delta_save: a zeroed mark (tecs_world_mark writes marks)"
                         : "tecs_delta_save: the mark is of another world");
    if (m->tick >= w->arch.tick || m->pushes > s->pushes || m->pops > s->pops ||
        m->nslots < 0 || m->nslots > s->nrecs || m->nalive < 0 || m->nfree < 0 ||
        m->nretired < 0 || m->nretired > s->nretired ||
        (int64_t)m->nfree - taken_since(w, m) + added_since(w, m) != s->nfree)
        return tecs__err(w, TECS_EINVAL, "tecs_delta_save: the mark is not of this world's "
                         "past");
    return TECS_OK;
}

tecs_err_t tecs_world_mark(tecs_world_t *w, tecs_mark_t *mark)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (mark == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL mark");
    if ((err = refuse_now(w, "tecs_world_mark")))
        return err;
    mark_now(w, mark);
    return TECS_OK;
}

/* DENT: slots now, taken from the head, the tail appended (slot and
** generation), the retired slots. */
static void save_dent(writer *o, const tecs_mark_t *m)
{
    tecs_world_t *w = o->w;
    const tecs__ei_state *s = &w->ei;
    uint32_t t = added_since(w, m), i = s->free_head, b[2 * 512];
    w_begin(o, TAG_DENT);
    w_u32(o, (uint32_t)s->nrecs);
    w_u32(o, taken_since(w, m));
    w_u32(o, t);
    for (uint32_t skip = (uint32_t)s->nfree - t; skip > 0; skip--)
        i = s->recs[i].row;
    for (uint32_t k = 0; i != TECS__NO_SLOT; i = s->recs[i].row) {
        put32((unsigned char *)&b[k], i);
        put32((unsigned char *)&b[k + 1], s->recs[i].gen);
        if ((k += 2) == 2 * 512 || s->recs[i].row == TECS__NO_SLOT) {
            w_bytes(o, b, (size_t)k * 4);
            k = 0;
        }
    }
    uint32_t nret = s->nretired != m->nretired ? (uint32_t)s->nretired : 0;
    w_u32(o, nret);
    for (int32_t r = 0; nret > 0 && r < s->nrecs; r++)
        if (s->recs[r].arch == TECS__ARCH_RETIRED)
            w_u32(o, (uint32_t)r);
    w_end(o);
}

/* a's part of DROW: components, rows, runs (a whole run's slots and
** generations, a written run's columns). */
static void save_drow(writer *o, tecs_archetype_t *a, uint64_t since)
{
    tecs_world_t *w = o->w;
    uint32_t k = 0, nruns = 0, b[2 * 512];
    drun run;
    w_u32(o, (uint32_t)a->ncomps);
    for (int32_t i = 0; i < a->ncomps; i++)
        w_u32(o, o->index[a->comps[i]]);
    w_u32(o, (uint32_t)a->count);
    while (next_run(w, a, since, &k, &run))
        nruns++;
    w_u32(o, nruns);
    for (k = 0; next_run(w, a, since, &k, &run);) {
        w_u32(o, run.start);
        w_u32(o, run.n);
        if (!run.whole) {
            w_u32(o, (uint32_t)TECS__POP64(run.cols));
            for (int32_t c = 0; c < a->ncols; c++)
                if (run.cols >> c & 1)
                    w_u32(o, o->index[a->col_comp[c]]);
            continue;
        }
        w_u32(o, RUN_WHOLE);
        uint32_t j = 0;
        for (uint32_t r = run.start; r < run.start + run.n; r++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, r);
            put32((unsigned char *)&b[j], TECS_ENTITY_INDEX(e));
            put32((unsigned char *)&b[j + 1], TECS_ENTITY_GENERATION(e));
            if ((j += 2) == 2 * 512 || r + 1 == run.start + run.n) {
                w_bytes(o, b, (size_t)j * 4);
                j = 0;
            }
        }
    }
}

/* a's part of DVAL: per run, a whole run's columns then bits (as ARCH's),
** a written run's columns. */
static void save_dval(writer *o, tecs_archetype_t *a, uint64_t since)
{
    tecs_world_t *w = o->w;
    drun run;
    for (uint32_t k = 0; next_run(w, a, since, &k, &run) && !o->err;) {
        if (!run.whole) {
            for (int32_t c = 0; c < a->ncols; c++)
                if (run.cols >> c & 1)
                    save_rows(o, a, c, run.start, run.n);
            continue;
        }
        for (int32_t i = 0; i < a->ncomps; i++) {
            int32_t col = tecs__arch_col(a, a->comps[i]);
            if (col >= 0)
                save_rows(o, a, col, run.start, run.n);
        }
        for (int32_t j = 0; j < a->ntog; j++)
            save_bits(o, a, j, run.start, run.n);
    }
}

/* Has c's sparse set changed since tick since? */
static bool set_changed(const tecs_world_t *w, tecs_comp_t c, uint64_t since)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    return s && (s->added > since || s->changed > since || s->removed > since);
}

static void save_delta(writer *o, const tecs_mark_t *m)
{
    tecs_world_t *w = o->w;
    save_header(o, magic_delta);
    w_begin(o, TAG_BASE);
    w_u32(o, (uint32_t)m->nslots);
    w_u32(o, (uint32_t)m->nalive);
    w_u32(o, (uint32_t)m->nfree);
    w_end(o);
    if (save_comps(o))
        return;
    save_dent(o, m);
    w_begin(o, TAG_DROW);
    w_u32(o, (uint32_t)w->arch.narchs);
    for (int32_t i = 0; i < w->arch.narchs; i++)
        save_drow(o, w->arch.archs[i], m->tick);
    w_end(o);
    w_begin(o, TAG_DVAL);
    for (int32_t i = 0; i < w->arch.narchs && !o->err; i++)
        save_dval(o, w->arch.archs[i], m->tick);
    w_end(o);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps && !o->err; c++)
        if (tecs__comp_get(w, c) && tecs__comp_is_sparse(w, c) && set_changed(w, c, m->tick))
            save_sparse(o, c, TAG_DSPR);
    save_resources(o);
    w_begin(o, TAG_END);
    w_end(o);
    w_flush(o);
}

tecs_err_t tecs_delta_save(tecs_world_t *w, tecs_mark_t *mark, tecs_write_fn write, void *ctx)
{
    if (w != NULL && mark == NULL) {
        tecs_err_t err = tecs__enter(w);
        return err ? err : tecs__err(w, TECS_EINVAL, "NULL mark");
    }
    return save_with(w, write, ctx, mark, "tecs_delta_save");
}

tecs_err_t tecs_delta_save_mem(tecs_world_t *w, tecs_mark_t *mark, tecs_snapshot_buf_t *buf)
{
    if (w != NULL && buf == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL buffer");
    if (buf)
        buf->size = 0;
    tecs_err_t err = tecs_delta_save(w, mark, mem_write, buf);
    if (err && buf)
        buf->size = 0;
    return err;
}

/* ---- applying ------------------------------------------------------------ */

/* A run read from DROW. */
typedef struct drun_in {
    uint32_t start, n;
    uint32_t ncols;             /* RUN_WHOLE, or the written columns' count */
    int32_t at;                 /* whole: its first id in ids; else its
                                   first column's place in u32              */
} drun_in;

/* An archetype read from DROW. */
typedef struct darch {
    tecs_archetype_t *a;
    uint32_t count, old;        /* rows after, rows before                  */
    int32_t places, ncomps;     /* its saved component list, in u32         */
    int32_t runs, nruns;        /* in runs                                  */
} darch;

/* What a delta's structure holds, and the slots in limbo. Each array
** grows as the input that fills it arrives. */
typedef struct delta {
    uint32_t nslots, taken, nfree, nret;
    int32_t free_at, ret_at;    /* the appended free slots (ids), retired (u32) */
    darch *archs;
    int32_t narchs, cap_archs;
    drun_in *runs;
    int32_t nruns, cap_runs;
    uint32_t *u32;
    int32_t nu32, cap_u32;
    uint64_t *ids;              /* slot | generation << 32                  */
    int32_t nids, cap_ids;
    uint64_t *limbo;            /* slot | its generation << 32 if alive before */
    int32_t nlimbo, cap_limbo;
    unsigned char *seen;        /* per archetype of the world: listed       */
    int32_t cap_seen;
    bool changed;               /* the world is changed: undo on failure   */
} delta;

static tecs_err_t d_room(reader *in, void **p, int32_t *cap, int64_t need, size_t size)
{
    if (need <= *cap)
        return TECS_OK;
    if (need > INT32_MAX || tecs__grow(in->w, p, cap, (int32_t)need, size))
        return tecs__err(in->w, TECS_ENOMEM, "out of memory applying a delta");
    return TECS_OK;
}

static tecs_err_t d_u32(reader *in, delta *d, uint32_t v)
{
    tecs_err_t err = d_room(in, (void **)&d->u32, &d->cap_u32, (int64_t)d->nu32 + 1,
                            sizeof *d->u32);
    if (err == TECS_OK)
        d->u32[d->nu32++] = v;
    return err;
}

/* n (slot, generation) pairs into ids. */
static tecs_err_t d_ids(reader *in, delta *d, uint32_t n)
{
    unsigned char b[8 * 512];
    tecs_err_t err;
    for (uint32_t i = 0; i < n; i += 512) {
        uint32_t k = n - i < 512 ? n - i : 512;
        if ((err = r_bytes(in, b, (size_t)k * 8)) ||
            (err = d_room(in, (void **)&d->ids, &d->cap_ids, (int64_t)d->nids + k,
                          sizeof *d->ids)))
            return err;
        for (uint32_t j = 0; j < k; j++)
            d->ids[d->nids++] = get32(b + 8 * j) | (uint64_t)get32(b + 8 * j + 4) << 32;
    }
    return TECS_OK;
}

static tecs_err_t read_base(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t tag, v[3];
    tecs_err_t err;
    if ((err = r_tag(in, &tag)))
        return err;
    if (tag != TAG_BASE)
        return bad(in, "delta: %s", "its base is missing");
    for (int i = 0; i < 3; i++)
        if ((err = r_u32(in, &v[i])))
            return err;
    if ((err = r_end(in, TAG_BASE)))
        return err;
    if (v[0] != (uint32_t)w->ei.nrecs || v[1] != (uint32_t)w->ei.nalive ||
        v[2] != (uint32_t)w->ei.nfree)
        return tecs__err(w, TECS_EINVAL, "tecs_delta_apply: the world is not where the delta "
                         "starts (%d slots, %d entities, %d free; the delta's base: %u, %u, %u)",
                         w->ei.nrecs, w->ei.nalive, w->ei.nfree, v[0], v[1], v[2]);
    return TECS_OK;
}

static tecs_err_t read_dent(reader *in, delta *d)
{
    tecs_world_t *w = in->w;
    uint32_t tag;
    tecs_err_t err;
    if ((err = r_tag(in, &tag)) || (tag != TAG_DENT && (err = bad(in, "delta: %s", "its slots "
                                                                  "are missing"))) ||
        (err = r_u32(in, &d->nslots)) || (err = r_u32(in, &d->taken)) ||
        (err = r_u32(in, &d->nfree)))
        return err;
    if (d->nslots < (uint32_t)w->ei.nrecs || d->nslots > (uint32_t)INT32_MAX ||
        d->taken > (uint32_t)w->ei.nfree || d->nfree > d->nslots)
        return bad(in, "delta: %s", "bad slot counts");
    d->free_at = d->nids;
    if ((err = d_ids(in, d, d->nfree)) || (err = r_u32(in, &d->nret)))
        return err;
    if (d->nret > d->nslots)
        return bad(in, "delta: %s", "bad slot counts");
    d->ret_at = d->nu32;
    for (uint32_t i = 0; i < d->nret; i++) {
        uint32_t slot;
        if ((err = r_u32(in, &slot)) || (err = d_u32(in, d, slot)))
            return err;
    }
    return r_end(in, TAG_DENT);
}

/* One run of archetype x: checked against its rows before and after (a
** row past the old ones must be in a whole run; runs in order, apart). */
static tecs_err_t read_run(reader *in, delta *d, darch *x, uint32_t *next)
{
    drun_in run;
    uint32_t start, n, kind;
    tecs_err_t err;
    if ((err = r_u32(in, &start)) || (err = r_u32(in, &n)) || (err = r_u32(in, &kind)))
        return err;
    uint32_t before = x->old < x->count ? x->old : x->count;
    if (n == 0 || start < *next || n > x->count - start || start > x->count ||
        (start > before && *next < start) ||
        (kind != RUN_WHOLE && (start + n > before || kind == 0 || kind > (uint32_t)x->a->ncols)))
        return bad(in, "delta: %s", "a run of rows does not fit its archetype");
    *next = start + n;
    run = (drun_in){ .start = start, .n = n, .ncols = kind };
    if (kind == RUN_WHOLE) {
        run.at = d->nids;
        if ((err = d_ids(in, d, n)))
            return err;
    } else {
        run.at = d->nu32;
        uint64_t cols = 0;
        for (uint32_t i = 0; i < kind; i++) {
            uint32_t place;
            if ((err = r_u32(in, &place)))
                return err;
            int32_t col = place < in->ncomps ? tecs__arch_col(x->a, in->comps[place].id) : -1;
            if (col < 0 || (cols >> col & 1))
                return bad(in, "delta: %s", "a run names a column its archetype lacks");
            cols |= (uint64_t)1 << col;
            if ((err = d_u32(in, d, place)))
                return err;
        }
    }
    if ((err = d_room(in, (void **)&d->runs, &d->cap_runs, (int64_t)d->nruns + 1,
                      sizeof *d->runs)))
        return err;
    d->runs[d->nruns++] = run;
    x->nruns++;
    return TECS_OK;
}

static tecs_err_t read_drow(reader *in, delta *d)
{
    tecs_world_t *w = in->w;
    uint32_t tag, n, places[TECS_MAX_ARCH_COMPONENTS];
    tecs_err_t err;
    if ((err = r_tag(in, &tag)) || (tag != TAG_DROW && (err = bad(in, "delta: %s", "its rows "
                                                                  "are missing"))) ||
        (err = r_u32(in, &n)))
        return err;
    if (n > (uint32_t)w->arch.max_archetypes)
        return bad(in, "delta: %s", "too many archetypes");
    for (uint32_t i = 0; i < n; i++) {
        tecs_archetype_t *a;
        uint32_t nruns, next = 0;
        int32_t was = d->cap_seen;
        if ((err = load_arch_comps(in, &a, places)) ||
            (err = d_room(in, (void **)&d->seen, &d->cap_seen, w->arch.narchs, 1)) ||
            (err = d_room(in, (void **)&d->archs, &d->cap_archs, (int64_t)d->narchs + 1,
                          sizeof *d->archs)))
            return err;
        memset(d->seen + was, 0, (size_t)(d->cap_seen - was));
        if (d->seen[a->id] == 1)
            return bad(in, "delta: %s", "an archetype is listed twice");
        d->seen[a->id] = 1;
        darch *x = &d->archs[d->narchs++];
        *x = (darch){ .a = a, .old = (uint32_t)a->count, .places = d->nu32,
                      .ncomps = a->ncomps, .runs = d->nruns };
        for (int32_t j = 0; j < a->ncomps; j++)
            if ((err = d_u32(in, d, places[j])))
                return err;
        if ((err = r_u32(in, &x->count)) || (err = r_u32(in, &nruns)))
            return err;
        if (x->count > (uint32_t)w->ei.max_entities || nruns > x->count)
            return bad(in, "delta: %s", "an archetype has a bad row count");
        for (uint32_t j = 0; j < nruns; j++)
            if ((err = read_run(in, d, x, &next)))
                return err;
        if (x->count > x->old && next < x->count)
            return bad(in, "delta: %s", "new rows are not in a run");
    }
    for (int32_t i = 0; i < w->arch.narchs; i++)
        if (w->arch.archs[i]->count > 0 && (i >= d->cap_seen || d->seen[i] != 1))
            return bad(in, "delta: %s", "an archetype with rows is left out");
    return r_end(in, TAG_DROW);
}

/* Put the live entity e's slot in limbo (its row is rewritten or dropped). */
static void limbo_row(tecs_world_t *w, delta *d, tecs_entity_t e)
{
    tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(e)];
    r->arch = LIMBO;
    d->limbo[d->nlimbo++] = TECS_ENTITY_INDEX(e) | (uint64_t)r->gen << 32;
}

/* Take slot (id's low half) out of limbo for a row or the free list. */
static tecs_err_t from_limbo(reader *in, const delta *d, uint64_t id)
{
    uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
    if (slot >= d->nslots || in->w->ei.recs[slot].arch != LIMBO || gen == 0)
        return bad(in, "delta: %s", "a slot it names does not fit the world");
    return TECS_OK;
}

/* Room for everything the structure needs, before the first change. */
static tecs_err_t structure_room(reader *in, delta *d)
{
    tecs_world_t *w = in->w;
    tecs__ei_state *s = &w->ei;
    int64_t n = (int64_t)d->nslots - s->nrecs + d->taken, alive = 0;
    tecs_err_t err;
    if (d->nslots - (uint32_t)s->nrecs > (uint32_t)d->nids + d->nret)   /* each named */
        return bad(in, "delta: %s", "more new slots than it names");
    for (int32_t i = 0; i < d->narchs; i++)
        alive += d->archs[i].count;
    if (alive > s->max_entities)
        return tecs__err(w, TECS_ELIMIT, "delta: the world's entity limit (%d) is below the "
                         "delta's entities", s->max_entities);
    for (int32_t i = 0; i < d->narchs; i++) {
        const darch *x = &d->archs[i];
        for (int32_t j = x->runs; j < x->runs + x->nruns; j++) {
            const drun_in *run = &d->runs[j];
            if (run->ncols == RUN_WHOLE && run->start < x->old)
                n += (x->old - run->start < run->n ? x->old - run->start : run->n);
        }
        if (x->old > x->count)
            n += x->old - x->count;
        if (x->count > x->old &&
            (err = tecs__arch_reserve_rows(w, x->a, (int32_t)(x->count - x->old))))
            return err;
    }
    if ((err = d_room(in, (void **)&d->limbo, &d->cap_limbo, n, sizeof *d->limbo)))
        return err;
    if ((int32_t)d->nslots > s->cap_recs &&
        tecs__grow(w, (void **)&s->recs, &s->cap_recs, (int32_t)d->nslots, sizeof *s->recs))
        return tecs__err(w, TECS_ENOMEM, "out of memory applying a delta");
    return TECS_OK;
}

/* The slots and rows: limbo, then rows, the free list's tail, the retired. */
static tecs_err_t apply_structure(reader *in, delta *d)
{
    tecs_world_t *w = in->w;
    tecs__ei_state *s = &w->ei;
    tecs_err_t err = structure_room(in, d);
    if (err)
        return err;
    d->changed = true;
    for (uint32_t i = (uint32_t)s->nrecs; i < d->nslots; i++) {
        s->recs[i] = (tecs__record){ .gen = 1, .arch = LIMBO };
        d->limbo[d->nlimbo++] = i;
    }
    s->nrecs = (int32_t)d->nslots;
    for (uint32_t i = 0; i < d->taken; i++) {        /* the head of the free list */
        uint32_t slot = s->free_head;
        s->free_head = s->recs[slot].row;
        s->recs[slot].arch = LIMBO;
        d->limbo[d->nlimbo++] = slot;
    }
    if (s->free_head == TECS__NO_SLOT)
        s->free_tail = TECS__NO_SLOT;
    s->nfree -= (int32_t)d->taken;
    s->pops += d->taken;
    for (int32_t i = 0; i < d->narchs; i++) {       /* the rows rewritten or dropped */
        const darch *x = &d->archs[i];
        for (int32_t j = x->runs; j < x->runs + x->nruns; j++)
            for (uint32_t r = d->runs[j].start; d->runs[j].ncols == RUN_WHOLE &&
                                                r < d->runs[j].start + d->runs[j].n &&
                                                r < x->old; r++)
                limbo_row(w, d, *tecs__ent_ptr(x->a, w, r));
        for (uint32_t r = x->count; r < x->old; r++)
            limbo_row(w, d, *tecs__ent_ptr(x->a, w, r));
    }
    for (int32_t i = 0; i < d->narchs; i++) {       /* the rows' new slots */
        const darch *x = &d->archs[i];
        tecs_archetype_t *a = x->a;
        if (x->count > x->old) {
            for (int32_t c = 0; !a->plain && c < a->ncols; c++)
                for (uint32_t r = x->old; r < x->count;) {
                    uint32_t k = w->arch.rows - (r & w->arch.mask);
                    k = k < x->count - r ? k : x->count - r;
                    tecs__comp_ctor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, r),
                                    (int32_t)k);
                    r += k;
                }
            a->count = (int32_t)x->count;         /* the dropped rows stay until DVAL */
        }
        for (int32_t j = x->runs; j < x->runs + x->nruns; j++) {
            const drun_in *run = &d->runs[j];
            for (uint32_t r = 0; run->ncols == RUN_WHOLE && r < run->n; r++) {
                uint64_t id = d->ids[run->at + (int32_t)r];
                if ((err = from_limbo(in, d, id)))
                    return err;
                s->recs[(uint32_t)id] = (tecs__record){ .gen = (uint32_t)(id >> 32),
                                                        .arch = a->id, .row = run->start + r };
                *tecs__ent_ptr(a, w, run->start + r) = id;
            }
        }
    }
    for (uint32_t i = 0; i < d->nfree; i++) {       /* the free list's new tail */
        uint64_t id = d->ids[d->free_at + (int32_t)i];
        if ((err = from_limbo(in, d, id)))
            return err;
        s->recs[(uint32_t)id].gen = (uint32_t)(id >> 32) - 1;
        tecs__ei_release(w, (uint32_t)id);
    }
    for (uint32_t i = 0; i < d->nret; i++) {
        uint32_t slot = d->u32[d->ret_at + (int32_t)i];
        if (slot < d->nslots && s->recs[slot].arch == TECS__ARCH_RETIRED)
            continue;
        if ((err = from_limbo(in, d, slot | (uint64_t)1 << 32)))
            return err;
        s->recs[slot] = (tecs__record){ .gen = UINT32_MAX, .arch = TECS__ARCH_RETIRED };
        s->nretired++;
    }
    for (int32_t i = 0; i < d->nlimbo; i++)
        if (s->recs[(uint32_t)d->limbo[i]].arch == LIMBO)
            return bad(in, "delta: %s", "a slot it drops is neither alive, free nor retired");
    return TECS_OK;
}

/* Rows [start, start + n) of column col (component lc): plain values read
** in place; others replace the value there (destroyed, then built; a
** failed build leaves a constructed value behind for undo_load). */
static tecs_err_t put_rows(reader *in, tecs_archetype_t *a, int32_t col, const lcomp *lc,
                           uint32_t start, uint32_t n)
{
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, lc->id);
    tecs_err_t err;
    if (!lc->serialized && !lc->convert) {
        for (uint32_t r = start; r < start + n;) {
            uint32_t k = w->arch.rows - (r & w->arch.mask);
            k = k < start + n - r ? k : start + n - r;
            char *at = tecs__col_ptr(a, w, col, r);
            if ((err = r_bytes(in, at, (size_t)k * a->col_size[col])))
                return err;
            for (uint32_t i = 0; lc->swap && i < k; i++)
                tecs__meta_swap(w, lc->id, at + (size_t)i * a->col_size[col]);
            r += k;
        }
        return TECS_OK;
    }
    for (uint32_t r = start; r < start + n; r++) {
        void *at = tecs__col_ptr(a, w, col, r);
        tecs__comp_dtor(w, ci, at, 1);
        if ((err = load_value(in, lc, at))) {
            tecs__comp_ctor(w, ci, at, 1);
            return err;
        }
    }
    return TECS_OK;
}

/* x's part of DVAL, then its dropped rows go. */
static tecs_err_t apply_values(reader *in, const delta *d, const darch *x)
{
    tecs_world_t *w = in->w;
    tecs_archetype_t *a = x->a;
    tecs_err_t err;
    for (int32_t j = x->runs; j < x->runs + x->nruns; j++) {
        const drun_in *run = &d->runs[j];
        if (run->ncols != RUN_WHOLE) {
            for (uint32_t i = 0; i < run->ncols; i++) {
                const lcomp *lc = &in->comps[d->u32[run->at + (int32_t)i]];
                int32_t col = tecs__arch_col(a, lc->id);
                if ((err = put_rows(in, a, col, lc, run->start, run->n)))
                    return err;
                for (uint32_t r = run->start; r < run->start + run->n;) {   /* per chunk */
                    uint32_t k = w->arch.rows - (r & w->arch.mask);
                    k = k < run->start + run->n - r ? k : run->start + run->n - r;
                    tecs__arch_touch_rows(&w->arch, a, col, r, k);
                    r += k;
                }
            }
            continue;
        }
        for (int32_t i = 0; i < x->ncomps; i++) {
            const lcomp *lc = &in->comps[d->u32[x->places + i]];
            int32_t col = tecs__arch_col(a, lc->id);
            if (col >= 0 && (err = put_rows(in, a, col, lc, run->start, run->n)))
                return err;
        }
        if ((err = load_bits(in, a, d->u32 + x->places, run->start, run->n)))
            return err;
        tecs__arch_entered_n(&w->arch, a, run->start, run->n);
    }
    for (uint32_t r = x->count; r < x->old; r++) {   /* the rows dropped */
        for (int32_t c = 0; !a->plain && c < a->ncols; c++)
            tecs__comp_dtor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, r), 1);
        for (int32_t j = 0; j < a->ntog; j++)
            tecs__arch_bit_put(w, a, j, r, false);
    }
    if (x->old > x->count) {
        a->count = (int32_t)x->count;
        tecs__arch_trim(w, a);
    }
    return TECS_OK;
}

/* DSPR: the set emptied, then its members and values as SPRS's. */
static tecs_err_t apply_sparse(reader *in)
{
    tecs_world_t *w = in->w;
    const lcomp *lc = NULL;
    uint32_t n;
    tecs_err_t err = sparse_head(in, &lc, &n);
    if (err)
        return err;
    const tecs__comp *ci = tecs__comp_get(w, lc->id);
    for (int32_t i = tecs__sparse_count(w, lc->id); i-- > 0;) {
        uint32_t slot = TECS_ENTITY_INDEX(tecs__sparse_members(w, lc->id)[i]);
        if (ci->size > 0)
            tecs__comp_dtor(w, ci, tecs__sparse_get(w, lc->id, slot), 1);
        tecs__sparse_erase(w, lc->id, slot);
    }
    if ((err = load_members(in, lc, n)))
        return err;
    return r_end(in, TAG_DSPR);
}

/* No sparse set keeps an entity that the delta took away. */
static tecs_err_t stale_members(reader *in, const delta *d)
{
    tecs_world_t *w = in->w;
    for (int32_t i = 0; i < d->nlimbo; i++) {
        tecs_entity_t was = d->limbo[i];
        if (TECS_ENTITY_GENERATION(was) == 0 || tecs__ei_alive(w, was))
            continue;
        for (int32_t k = 0; k < w->sparse.nsets; k++)
            if (tecs__sparse_get_id(w, w->sparse.sets[k]->comp, was))
                return bad(in, "delta: %s", "a sparse set keeps an entity it takes away");
    }
    return TECS_OK;
}

static tecs_err_t apply_all(reader *in, delta *d)
{
    tecs_world_t *w = in->w;
    uint32_t tag;
    tecs_err_t err;
    if ((err = load_header(in, magic_delta)) || (err = read_base(in)) ||
        (err = load_comps(in)) || (err = read_dent(in, d)) || (err = read_drow(in, d)) ||
        (err = apply_structure(in, d)) || (err = r_tag(in, &tag)))
        return err;
    if (tag != TAG_DVAL)
        return bad(in, "delta: %s", "its values are missing");
    for (int32_t i = 0; i < d->narchs; i++)
        if ((err = apply_values(in, d, &d->archs[i])))
            return err;
    if ((err = r_end(in, TAG_DVAL)))
        return err;
    w->ei.nalive = 0;
    for (int32_t i = 0; i < w->arch.narchs; i++)
        w->ei.nalive += w->arch.archs[i]->count;
    for (;;) {
        if ((err = r_tag(in, &tag)))
            return err;
        if (tag != TAG_DSPR)
            break;
        if ((err = apply_sparse(in)))
            return err;
    }
    if (tag != TAG_RSRC)
        return bad(in, "delta: %s", "a section is missing or unknown");
    if ((err = stale_members(in, d)))
        return err;
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++)
        if (tecs__comp_get(w, c) && tecs_resource_has(w, c))
            tecs_resource_remove(w, c);
    if ((err = load_resources(in)) || (err = r_end(in, TAG_RSRC)) || (err = r_tag(in, &tag)))
        return err;
    if (tag != TAG_END)
        return bad(in, "delta: %s", "the end is missing");
    return r_end(in, TAG_END);
}

static void delta_free(tecs_world_t *w, delta *d)
{
    tecs__free(w, d->archs, (size_t)d->cap_archs * sizeof *d->archs);
    tecs__free(w, d->runs, (size_t)d->cap_runs * sizeof *d->runs);
    tecs__free(w, d->u32, (size_t)d->cap_u32 * sizeof *d->u32);
    tecs__free(w, d->ids, (size_t)d->cap_ids * sizeof *d->ids);
    tecs__free(w, d->limbo, (size_t)d->cap_limbo * sizeof *d->limbo);
    tecs__free(w, d->seen, (size_t)d->cap_seen);
}

static tecs_err_t apply_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (read == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL reader");
    if ((err = refuse_now(w, "tecs_delta_apply")))
        return err;
    reader in = { .w = w, .fn = read, .ctx = ctx, .left = left };
    delta d = { 0 };
    err = apply_all(&in, &d);
    if (err == TECS_OK && left && left(ctx) > 0)
        err = tecs__err(w, TECS_EFORMAT, "delta: %zu bytes follow its end", left(ctx));
    tecs__free(w, in.comps, (size_t)in.ncomps * sizeof *in.comps + 1);
    tecs__free(w, in.blob, in.blob_cap);
    tecs__free(w, in.stage, in.stage_cap);
    delta_free(w, &d);
    if (err == TECS_OK)
        err = load_indexes(w);          /* rows replaced without events */
    if (err && d.changed) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        undo_load(w);
        tecs__indexes_rebuild(w);       /* emptied: with no row, it cannot fail */
        w->base.err = err;                      /* the failure's own message */
        memcpy(w->base.errmsg, msg, sizeof msg);
    }
    if (err == TECS_OK)
        w->base.err = TECS_OK;
    return err;
}

tecs_err_t tecs_delta_apply(tecs_world_t *w, tecs_read_fn read, void *ctx)
{
    return apply_with(w, read, ctx, NULL);
}

tecs_err_t tecs_delta_apply_mem(tecs_world_t *w, const void *data, size_t size)
{
    if (w != NULL && data == NULL && size > 0)
        return tecs__err(w, TECS_EINVAL, "NULL data");
    mem_in m = { data, size };
    return apply_with(w, mem_read, &m, mem_left);
}
