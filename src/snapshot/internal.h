/*
** snapshot/internal.h — what the files of the snapshot layer share. Only
** the files of src/snapshot include it. One section per file, in layer
** order: each file calls only the files listed before it, and the core.
**
**     (shared)      the format's constants and section tags, numbers
**                   little-endian, the world around a snapshot (closed
**                   while the user's callbacks run, refused while busy);
**     format.c      the magic words, the checksum, the layout hash;
**     serializer.c  a value's encoding: bytes, the component's serializer
**                   hooks, or field by field from its description;
**     save.c        the writer and the snapshot's sections written;
**     load.c        the reader and the snapshot's sections read, the
**                   undo of a failed load;
**     delta.c       marks, deltas saved and applied;
**     io.c          the stdio and memory adapters (nothing shared).
*/
#ifndef TECS_SNAPSHOT_INTERNAL_H
#define TECS_SNAPSHOT_INTERNAL_H

#include "../core/private.h"
#include "../relation/internal.h"

/* ==================================================================== */
/* Shared: the format's constants, numbers, the world around a snapshot */
/* ==================================================================== */

#define SNAP_VERSION    1u
#define SNAP_FLAG_BE    1u           /* the writer's host is big-endian    */
#define SNAP_FLAG_RELS  2u           /* a RELS section comes before END.   */
#define SNAP_MAX_NAME   255u
#define SNAP_MAX_BLOB   (1u << 24)   /* bytes of one serialized value       */
#define SNAP_BATCH      4096u        /* slots read or written at a time    */

enum {                               /* section tags: four ASCII letters   */
    TAG_COMP = 0x504d4f43u,          /* "COMP" */
    TAG_ENTS = 0x53544e45u,          /* "ENTS" */
    TAG_ARCH = 0x48435241u,          /* "ARCH" */
    TAG_SPRS = 0x53525053u,          /* "SPRS" */
    TAG_RSRC = 0x43525352u,          /* "RSRC" */
    TAG_RELS = 0x534c4552u,          /* "RELS" */
    TAG_END  = 0x2e444e45u,          /* "END." */
    TAG_BASE = 0x45534142u,          /* "BASE": a delta's, and the rest */
    TAG_DENT = 0x544e4544u,          /* "DENT" */
    TAG_DROW = 0x574f5244u,          /* "DROW" */
    TAG_DVAL = 0x4c415644u,          /* "DVAL" */
    TAG_DSPR = 0x52505344u           /* "DSPR" */
};

/* ---- bytes ------------------------------------------------------------ */

static inline bool host_big(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Numbers little-endian, whatever the host: on a little-endian one a
** plain copy, which keeps the hot loops plain copies too. */
static inline void put32(unsigned char *p, uint32_t v)
{
    if (!host_big()) {
        memcpy(p, &v, 4);
        return;
    }
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void put64(unsigned char *p, uint64_t v)
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

static inline uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* ---- around the user's callbacks ---------------------------------------- */

/* Close the world for the length of a callback: its calls are refused. */
static inline uint8_t cb_close(tecs_world_t *w)
{
    uint8_t was = w->base.closed;
    tecs__set_closed(w, TECS__SNAPSHOT);
    return was;
}

static inline void cb_open(tecs_world_t *w, uint8_t was)
{
    tecs__set_closed(w, was);
}

/* Why a save or a load cannot run now, or TECS_OK. */
static inline tecs_err_t refuse_now(tecs_world_t *w, const char *what)
{
    if (w->base.cb_depth > 0 || tecs__cmd_nested(w))
        return tecs__err(w, TECS_EBUSY, "%s cannot run inside a callback, an iteration, a "
                         "deferred section or a frame", what);
    if (w->ei.npending > 0 || w->cmd.delayed.count > 0 || w->cmd.deferred.count > 0)
        return tecs__err(w, TECS_EBUSY, "%s: changes wait in the delayed queues (apply them "
                         "first)", what);
    return TECS_OK;
}

/* The functions and data the files lend each other are the layer's own,
** hidden from the shared library's exports: so that a call inside the
** file that defines one may be inlined, and is known to touch only what
** the function touches (an exported function could be replaced at load
** time by another of the same name, and the compiler must assume so). */
#if defined(__GNUC__) && !defined(_WIN32) && !defined(__CYGWIN__)
#pragma GCC visibility push(hidden)
#define TECS__SNAP_HIDDEN 1
#endif

/* ==================================================================== */
/* format.c: the magic words, the checksum, the layout hash             */
/* ==================================================================== */

extern const unsigned char tecs__snap_magic[8];         /* "TECSSNAP" */
extern const unsigned char tecs__snap_magic_delta[8];   /* "TECSDLTA" */

/* sum64: the checksum of a section's payload (format.c says how), taken
** in pieces of any size. */
typedef struct sum64 {
    uint64_t a[4], b[4];
    uint64_t total;             /* bytes so far                             */
    unsigned char buf[32];      /* a partial step                           */
    uint32_t nbuf;
} sum64;

void tecs__sum_init(sum64 *s);
void tecs__sum_add(sum64 *s, const void *data, size_t n);
/* memcpy(dst, data, n) and tecs__sum_add(s, data, n) in one pass. */
void tecs__sum_copy(sum64 *s, void *dst, const void *data, size_t n);
uint64_t tecs__sum_end(const sum64 *s);

/* The hash of a component's layout: what the loader compares. */
uint64_t tecs__snap_layout_hash(const tecs__comp *ci);

/* ==================================================================== */
/* serializer.c: a value's encoding                                     */
/* ==================================================================== */

struct tecs_snapshot_out_t {
    tecs_world_t *w;
    unsigned char *data;        /* one serialized value                     */
    size_t size, cap;
    tecs_err_t err;
};

static inline bool has_hooks(const tecs__comp *ci)
{
    return ci->ctor || ci->dtor || ci->copy || ci->move;
}

/* How the values of ci are written: as bytes, through its serializer
** (ENC_USER), or, a component with hooks and a description but no
** serializer, field by field from the description (ENC_FIELDS). */
enum { ENC_BYTES, ENC_USER, ENC_FIELDS };

static inline int encoding(const tecs__comp *ci)
{
    if (ci->size == 0)
        return ENC_BYTES;
    if (ci->serialize != NULL)
        return ENC_USER;
    return has_hooks(ci) && ci->meta ? ENC_FIELDS : ENC_BYTES;
}

/* Values of ci go through a serializer (its own or its description). */
static inline bool serialized(const tecs__comp *ci)
{
    return encoding(ci) != ENC_BYTES;
}


/* A value of c at v, field by field from its description, into out. */
tecs_err_t tecs__snap_fields_put(const tecs_world_t *w, tecs_comp_t c, const unsigned char *v,
                                 tecs_snapshot_out_t *out);
/* Read a value of c written by tecs__snap_fields_put from in[*pos, n)
** into v (zeroed, the staging value): strings are copied, ended by a
** zero, to *text, which has room for n more bytes. */
bool tecs__snap_fields_get(const tecs_world_t *w, tecs_comp_t c, unsigned char *v,
                           const unsigned char *in, size_t n, size_t *pos, char **text);
/* tecs__realloc from inside a user callback of a save or a load, while
** the world is closed to the callback: the allocator would refuse. */
void *tecs__snap_realloc_closed(tecs_world_t *w, void *p, size_t old, size_t n);

/* ==================================================================== */
/* save.c: the writer, the snapshot's sections                          */
/* ==================================================================== */

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

/* A COMP entry's "no nested component" (a field's place in the table). */
#define NO_PLACE 0xffffffffu

/* The memory helper's writer: a save given it writes into its
** tecs_snapshot_buf_t (ctx) in place. */
tecs_err_t tecs__save_mem_write(void *ctx, const void *data, size_t n);
/* Why w cannot be saved to write now (what names the call), or TECS_OK. */
tecs_err_t tecs__save_may(tecs_world_t *w, tecs_write_fn write, const char *what);
/* A writer of w to write (ctx) at *o. */
tecs_err_t tecs__save_open(tecs_world_t *w, tecs_write_fn write, void *ctx, writer **o);
/* Free o: its first failure, or TECS_OK. */
tecs_err_t tecs__save_close(writer *o);

void tecs__w_flush(writer *o);
void tecs__w_bytes(writer *o, const void *data, size_t n);
void tecs__w_u32(writer *o, uint32_t v);
void tecs__w_begin(writer *o, uint32_t tag);
void tecs__w_end(writer *o);
void tecs__save_header(writer *o, const unsigned char *kind);
tecs_err_t tecs__save_comps(writer *o);
void tecs__save_rows(writer *o, tecs_archetype_t *a, int32_t col, uint32_t start, uint32_t n);
void tecs__save_bits(writer *o, tecs_archetype_t *a, int32_t j, uint32_t start, uint32_t n);
void tecs__save_sparse(writer *o, tecs_comp_t c, uint32_t tag);
void tecs__save_resources(writer *o);
/* RELS, when the header's flag says so: every relation and its pairs. */
void tecs__save_rels(writer *o);

/* ==================================================================== */
/* load.c: the reader, the snapshot's sections, undo                    */
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
    bool rels;                  /* the header's SNAP_FLAG_RELS              */
    tecs__rel_pair *pairs;      /* RELS's pairs, restored once the rows are
                                   in (their values in vals, by offset until
                                   the section ends)                         */
    int32_t npairs, cap_pairs;
    unsigned char *vals;
    size_t nvals, cap_vals;
} reader;

/* A format error: fmt names what. */
static inline tecs_err_t bad(reader *in, const char *fmt, const char *what)
{
    return tecs__err(in->w, TECS_EFORMAT, fmt, what);
}

tecs_err_t tecs__r_bytes(reader *in, void *data, size_t n);
tecs_err_t tecs__r_u32(reader *in, uint32_t *v);
/* The next section's tag (not summed), and a fresh sum. */
tecs_err_t tecs__r_tag(reader *in, uint32_t *tag);
/* The trailer of section tag: its length and sum checked. */
tecs_err_t tecs__r_end(reader *in, uint32_t tag);
tecs_err_t tecs__load_header(reader *in, const unsigned char *kind);
tecs_err_t tecs__load_comps(reader *in);
/* The archetype of an ARCH section's component list. */
tecs_err_t tecs__load_arch_comps(reader *in, tecs_archetype_t **out, uint32_t *places);
/* The enableable bits of a's rows [start, start + n). */
tecs_err_t tecs__load_bits(reader *in, tecs_archetype_t *a, const uint32_t *places,
                           uint32_t start, uint32_t n);
/* One value of the saved component lc at dst. */
tecs_err_t tecs__load_value(reader *in, const lcomp *lc, void *dst);
/* Ready lc's set for the n members of a sparse section. */
typedef tecs_err_t (*tecs__sparse_prepare_fn)(reader *in, const lcomp *lc, uint32_t n);
/* A sparse section (tag SPRS or DSPR): its component's set readied by
** prepare, then its members and their values. */
tecs_err_t tecs__load_sparse(reader *in, uint32_t tag, tecs__sparse_prepare_fn prepare);
tecs_err_t tecs__load_resources(reader *in);
/* The tag after RSRC's end: RELS read first when the header said so. */
tecs_err_t tecs__load_rels(reader *in, uint32_t *tag);
/* The pairs read restored into the world, whose rows were replaced (the
** ChildOf tags checked when there are none); the reader's pairs freed. */
tecs_err_t tecs__load_rels_restore(reader *in);
void tecs__load_rels_free(reader *in);
/* The world empty again after a failed load or apply. */
void tecs__load_undo(tecs_world_t *w);
/* The world's indexes and caches built from rows loaded without events. */
tecs_err_t tecs__load_indexes(tecs_world_t *w);
/* tecs_snapshot_load through read, left and view (either may be NULL). */
tecs_err_t tecs__load_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left,
                           view_fn view);

/* ==================================================================== */
/* delta.c: marks, deltas                                               */
/* ==================================================================== */

/* tecs_delta_apply through read and left (NULL: unknown). */
tecs_err_t tecs__delta_apply_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left);

#ifdef TECS__SNAP_HIDDEN
#pragma GCC visibility pop
#undef TECS__SNAP_HIDDEN
#endif

#endif /* TECS_SNAPSHOT_INTERNAL_H */
