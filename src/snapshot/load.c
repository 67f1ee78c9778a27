/*
** snapshot/load.c — a snapshot loaded into an empty world: the reader,
** the sections read (format.c draws them), and the undo of a failed load.
**
** Loading is one pass over the input: every count is checked against the
** limits and the counts before it, and memory grows only as the input
** that justifies it arrives (the slots a chunk at a time), so a hostile
** count costs the bytes that back it, never an allocation of its own
** size. Rows are written straight into fresh chunks, and each slot's
** record once, whole, when its row (or its place in the free list) is
** read: the generations wait where they lie in the input (the memory
** helper's, read in place) or in a copy, and a bit a slot marks the
** records written (in->seen); the slots never named are retired at the
** end (fill_records). Rows whose slots follow each other (a world saved
** in slot order) are written as runs: generations, records and ids in
** order, a vector at a time (put_run). a->count and the entity count are
** set as each archetype completes. The memory helper's input is summed
** as it is copied into the chunks, in one pass (tecs__sum_copy). Any
** failure undoes the lot (tecs__load_undo): values destroyed, chunks and
** sparse pages freed, every slot dead, resources removed: the world is
** empty again. No event is raised for a loaded entity (observers and
** hooks do not fire); the world's indexes and caches, which follow
** events, are rebuilt from the loaded rows at the end (the bus's
** tecs__emit_rows_replaced, which the index add-on hears), once the
** relation add-on has restored the pairs (tecs__rel_restore), which the
** indexes over a relation's values read; a unique index whose keys repeat
** fails the load.
**
** The user's callbacks (reader, deserializer, convert hook) run with the
** world closed as TECS__SNAPSHOT: whatever they call is refused.
**
** delta.c reads a delta with the same reader and the same sections'
** readers (tecs__load_comps, _arch_comps, _bits, _value, _members,
** _resources) and undoes a failed apply with tecs__load_undo.
**
** Calls: format, serializer; resource, sparse, archetype, component,
** entity_index, meta, alloc; event (rows replaced).
*/
#include "internal.h"

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#endif

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

tecs_err_t tecs__r_bytes(reader *in, void *data, size_t n)
{
    if (in->view) {
        const unsigned char *p = in->view(in->ctx, n);
        if (p == NULL)
            return ends_early(in);
        tecs__sum_copy(&in->sum, data, p, n);
        return TECS_OK;
    }
    tecs_err_t err = r_raw(in, data, n);
    if (err == TECS_OK)
        tecs__sum_add(&in->sum, data, n);
    return err;
}

/* The next n bytes, summed, at *p: in place with a view, else read into
** buf (room for n). */
static tecs_err_t r_view(reader *in, unsigned char *buf, size_t n, const unsigned char **p)
{
    if (in->view == NULL) {
        *p = buf;
        return tecs__r_bytes(in, buf, n);
    }
    if ((*p = in->view(in->ctx, n)) == NULL)
        return ends_early(in);
    tecs__sum_add(&in->sum, *p, n);
    return TECS_OK;
}

tecs_err_t tecs__r_u32(reader *in, uint32_t *v)
{
    unsigned char b[4] = { 0 };
    tecs_err_t err = tecs__r_bytes(in, b, 4);
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
    case TAG_RELS: return "RELS";
    default: return "END.";
    }
}

tecs_err_t tecs__r_tag(reader *in, uint32_t *tag)
{
    unsigned char b[4] = { 0 };
    tecs_err_t err = r_raw(in, b, 4);
    *tag = get32(b);
    tecs__sum_init(&in->sum);
    return err;
}

tecs_err_t tecs__r_end(reader *in, uint32_t tag)
{
    unsigned char b[16];
    tecs_err_t err = r_raw(in, b, 16);
    if (err)
        return err;
    bool sum_ok = get64(b + 8) == tecs__sum_end(&in->sum);
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

tecs_err_t tecs__load_header(reader *in, const unsigned char *kind)
{
    unsigned char b[24];
    tecs_err_t err = r_raw(in, b, 24);
    if (err)
        return err;
    if (memcmp(b, kind, 8) != 0)
        return bad(in, "snapshot: %s", kind == tecs__snap_magic
                                       ? "bad magic (not a tinyecs snapshot)"
                                       : "bad magic (not a tinyecs delta)");
    tecs__sum_init(&in->sum);
    tecs__sum_add(&in->sum, b, 16);
    bool sum_ok = get64(b + 16) == tecs__sum_end(&in->sum);
#ifdef TECS_FUZZING_SKIP_SUMS
    sum_ok = true;
#endif
    if (!sum_ok)
        return bad(in, "snapshot: %s", "the header is corrupt");
    if (get32(b + 8) != SNAP_VERSION)
        return tecs__err(in->w, TECS_EFORMAT, "snapshot: version %u, this library reads "
                         "version %u", get32(b + 8), SNAP_VERSION);
    uint32_t flags = get32(b + 12);
    if (flags & ~(SNAP_FLAG_BE | SNAP_FLAG_RELS))
        return bad(in, "snapshot: %s", "unknown flags");
    in->foreign = ((flags & SNAP_FLAG_BE) != 0) != host_big();
    in->rels = (flags & SNAP_FLAG_RELS) != 0;
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
        /* The saved world's ChildOf is this world's, made now (also from
        ** a snapshot without RELS: its children are refused then). */
        tecs_err_t err = TECS_OK;
        if (strcmp(name, "ChildOf") == 0 && saved->size == 0 && !saved->sparse &&
            !saved->enableable && (err = tecs__rel_childof(w, &c)))
            return err;
        if (c == 0)
            c = tecs_component_new(w, &(tecs_component_desc_t){
            .name = name, .size = saved->size, .align = saved->align, .id = want,
            .storage = saved->sparse ? TECS_STORAGE_SPARSE : TECS_STORAGE_TABLE,
            .enableable = saved->enableable, .fields = strings ? NULL : in->fields,
            .nfields = strings ? 0 : in->nfields, .hidden = saved->hidden,
            .inherit = saved->inherit });
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
    if (ci->sparse != saved->sparse || ci->enableable != saved->enableable ||
        ci->hidden != saved->hidden || ci->inherit != saved->inherit)
        return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " differs in %s from "
                         "the saved one", TECS__COMP(w, c),
                         ci->sparse != saved->sparse ? "storage"
                         : ci->enableable != saved->enableable ? "enableable"
                         : ci->hidden != saved->hidden ? "hidden" : "inherit");
    if (saved->size > 0 && lc->serialized && (lc->fields != (encoding(ci) == ENC_FIELDS) ||
                                              (lc->fields && tecs__snap_layout_hash(ci) != hash)))
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
    if (!lc->serialized && !lc->made && tecs__snap_layout_hash(ci) != hash) {
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
    tecs_err_t err = tecs__r_u32(in, &n);
    if (err)
        return err;
    if (n > TECS_MAX_FIELDS)
        return bad(in, "snapshot: component '%s' has too many fields", name);
    in->nfields = (int32_t)n;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t len;
        unsigned char b[16];
        if ((err = tecs__r_u32(in, &len)))
            return err;
        if (len == 0 || len > SNAP_MAX_NAME)
            return bad(in, "snapshot: a field name of component '%s' is empty or too long",
                       name);
        if ((err = blob_room(in, used + len + 1)) ||
            (err = tecs__r_bytes(in, in->blob + used, len)) || (err = tecs__r_bytes(in, b, 16)))
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

tecs_err_t tecs__load_comps(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t tag, n;
    tecs_err_t err;
    if ((err = tecs__r_tag(in, &tag)) || (err = tecs__r_u32(in, &n)))
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
        if ((err = tecs__r_u32(in, &id)) || (err = tecs__r_u32(in, &len)))
            return err;
        if (len == 0 || len > SNAP_MAX_NAME)
            return bad(in, "snapshot: %s", "a component name is empty or too long");
        if ((err = tecs__r_bytes(in, name, len)) || (err = tecs__r_bytes(in, b, 20)))
            return err;
        name[len] = 0;
        if (strlen(name) != len)
            return bad(in, "snapshot: %s", "a component name holds a zero byte");
        tecs__comp saved = { .size = get32(b), .align = get32(b + 4), .sparse = b[8] != 0,
                             .enableable = b[9] != 0, .hidden = b[11] & 1,
                             .inherit = (b[11] >> 1) & 1 };
        if (b[8] > 1 || b[9] > 1 || b[10] > ENC_FIELDS || b[11] > 3 ||
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
    return tecs__r_end(in, TAG_COMP);
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
            tecs__sum_add(&in->sum, b, (size_t)k * 4);
        } else {
            if (tecs__grow(in->w, (void **)&in->own, &in->own_cap, (int32_t)(i + k), 4))
                return tecs__err(in->w, TECS_ENOMEM, "out of memory loading a snapshot");
            b = in->own + (size_t)i * 4;
            if ((err = tecs__r_bytes(in, in->own + (size_t)i * 4, (size_t)k * 4)))
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
    if ((err = tecs__r_tag(in, &tag)) || (err = tecs__r_u32(in, &n)))
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
    if ((err = tecs__r_u32(in, &nfree)))
        return err;
    if (nfree > n)
        return bad(in, "snapshot: %s", "more free slots than slots");
    for (uint32_t i = 0; i < nfree; i++) {
        uint32_t slot;
        if ((err = tecs__r_u32(in, &slot)))
            return err;
        if (slot >= n || seen_get(in, slot) || gen_of(in, slot) == UINT32_MAX)
            return bad(in, "snapshot: %s", "the free list names a bad or repeated slot");
        seen_set(in, slot);
        s->recs[slot] = (tecs__record){ .gen = gen_of(in, slot) - 1 };
        tecs__ei_release(w, slot);          /* moves the generation on: to the saved one */
    }
    return tecs__r_end(in, TAG_ENTS);
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
/* Build a value of c at dst from the n bytes tecs__snap_fields_put wrote (in the
** blob): a staging value read field by field, then constructed at dst
** through the component's hooks, whose copy duplicates the strings. */
static tecs_err_t fields_build(reader *in, tecs_comp_t c, void *dst, size_t n)
{
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, c);
    size_t need = (size_t)ci->size + n + 1;     /* staging, then its text (<= n) */
    if (need > in->stage_cap) {
        void *p = tecs__snap_realloc_closed(w, in->stage, in->stage_cap, need);
        if (p == NULL)
            return TECS_ENOMEM;
        in->stage = p;
        in->stage_cap = need;
    }
    memset(in->stage, 0, ci->size);
    char *text = (char *)in->stage + ci->size;
    size_t pos = 0;
    if (!tecs__snap_fields_get(w, c, in->stage, in->blob, n, &pos, &text) || pos != n)
        return TECS_EFORMAT;
    tecs__construct_one(w, ci, dst, in->stage);
    return TECS_OK;
}

tecs_err_t tecs__load_value(reader *in, const lcomp *lc, void *dst)
{
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, lc->id);
    tecs_err_t err;
    if (!lc->serialized && !lc->convert) {
        if ((err = tecs__r_bytes(in, dst, ci->size)) == TECS_OK && lc->swap)
            tecs__meta_swap(w, lc->id, dst);
        return err;
    }
    uint32_t len = lc->size;
    if (lc->serialized) {
        if ((err = tecs__r_u32(in, &len)))
            return err;
        if (len > SNAP_MAX_BLOB)
            return bad(in, "snapshot: a value of component '%s' is too long", ci->name);
    }
    if ((err = blob_room(in, len ? len : 1)) || (err = tecs__r_bytes(in, in->blob, len)))
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
            if ((err = tecs__r_bytes(in, at, (size_t)k * a->col_size[col])))
                return err;
            for (uint32_t i = 0; lc->swap && i < k; i++)
                tecs__meta_swap(w, lc->id, at + (size_t)i * a->col_size[col]);
        }
        return TECS_OK;
    }
    for (*row = 0; *row < count; ++*row)
        if ((err = tecs__load_value(in, lc, tecs__col_ptr(a, w, col, *row))))
            return err;
    return TECS_OK;
}

/* The archetype of an ARCH section's component list. */
tecs_err_t tecs__load_arch_comps(reader *in, tecs_archetype_t **out, uint32_t *places)
{
    tecs_world_t *w = in->w;
    uint32_t n;
    tecs_err_t err;
    tecs_comp_t ids[TECS_MAX_ARCH_COMPONENTS];
    if ((err = tecs__r_u32(in, &n)))
        return err;
    if (n > TECS_MAX_ARCH_COMPONENTS)
        return bad(in, "snapshot: %s", "an archetype has too many components");
    for (uint32_t i = 0; i < n; i++) {
        if ((err = tecs__r_u32(in, &places[i])))
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
** records are written: the load fails and tecs__load_undo rewrites them all. */
static tecs_err_t snapshot_load_rows(reader *in, tecs_archetype_t *a, uint32_t count)
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
tecs_err_t tecs__load_bits(reader *in, tecs_archetype_t *a, const uint32_t *places,
                           uint32_t start, uint32_t n)
{
    tecs_world_t *w = in->w;
    unsigned char b[256];
    tecs_err_t err;
    for (int32_t i = 0; i < a->ncomps; i++) {
        int32_t j = tecs__arch_tog(a, in->comps[places[i]].id);
        for (uint32_t r = 0; j >= 0 && r < n; r += 8 * sizeof b) {
            uint32_t nb = (n - r + 7) / 8 < sizeof b ? (n - r + 7) / 8 : sizeof b;
            if ((err = tecs__r_bytes(in, b, nb)))
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
** freed; tecs__load_undo puts the records back. */
static tecs_err_t load_arch(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t places[TECS_MAX_ARCH_COMPONENTS], count = 0, row = 0;
    tecs_archetype_t *a = NULL;
    int32_t col = -1;
    uint64_t done = 0;
    tecs_err_t err = tecs__load_arch_comps(in, &a, places);
    if (err || (err = tecs__r_u32(in, &count)))
        return err;
    if (a->count > 0)                            /* rows are counted once loaded */
        return bad(in, "snapshot: %s", "an archetype is listed twice");
    if ((err = snapshot_load_rows(in, a, count)))
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
    if ((err = tecs__load_bits(in, a, places, 0, count)) || (err = tecs__r_end(in, TAG_ARCH)))
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
** before tecs__load_undo destroys the rest. */
static tecs_err_t load_members(reader *in, const lcomp *lc, uint32_t n)
{
    tecs_world_t *w = in->w;
    tecs_comp_t c = lc->id;
    tecs_err_t err = TECS_OK;
    if (n > (uint32_t)w->ei.nalive)
        return bad(in, "snapshot: %s", "a sparse component has a bad member count");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot;
        if ((err = tecs__r_u32(in, &slot)))
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
        if ((err = tecs__load_value(in, lc, tecs__sparse_get(w, c, slot))))
            break;
    }
    if (err)
        unbuilt(w, c, (int32_t)built);
    return err;
}

/* A sparse section: its component and member count, then prepare readies
** the component's set for them, then the members and the trailer of tag. */
tecs_err_t tecs__load_sparse(reader *in, uint32_t tag, tecs__sparse_prepare_fn prepare)
{
    uint32_t place, n;
    tecs_err_t err;
    if ((err = tecs__r_u32(in, &place)) || (err = tecs__r_u32(in, &n)))
        return err;
    if (place >= in->ncomps || !in->comps[place].sparse)
        return bad(in, "snapshot: %s", "a sparse section names a bad component");
    const lcomp *lc = &in->comps[place];
    if ((err = prepare(in, lc, n)) || (err = load_members(in, lc, n)))
        return err;
    return tecs__r_end(in, tag);
}

/* SPRS: a sparse component listed once, with members. */
static tecs_err_t sparse_first(reader *in, const lcomp *lc, uint32_t n)
{
    if (tecs__sparse_count(in->w, lc->id) > 0)
        return bad(in, "snapshot: %s", "a sparse component is listed twice");
    if (n == 0)
        return bad(in, "snapshot: %s", "a sparse component has a bad member count");
    return TECS_OK;
}

/* RSRC: each value built aside, set, then destroyed here. */
tecs_err_t tecs__load_resources(reader *in)
{
    tecs_world_t *w = in->w;
    uint32_t n;
    tecs_err_t err;
    if ((err = tecs__r_u32(in, &n)))
        return err;
    if (n > in->ncomps)
        return bad(in, "snapshot: %s", "too many resources");
    for (uint32_t i = 0; i < n; i++) {
        uint32_t place;
        if ((err = tecs__r_u32(in, &place)))
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
            if ((err = tecs__load_value(in, lc, value))) {
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

/* The world's description of its relation c. */
static tecs__rel_desc rel_of(const tecs_world_t *w, tecs_comp_t c)
{
    for (int32_t i = 0; i < tecs__rel_count(w); i++)
        if (tecs__rel_get(w, i).comp == c)
            return tecs__rel_get(w, i);
    return (tecs__rel_desc){ 0 };
}

/* A saved relation matched with the world's: a relation of the same kind
** there, or a component this load made, which becomes one. */
static tecs_err_t match_rel(reader *in, const lcomp *lc, const unsigned char *b)
{
    tecs_world_t *w = in->w;
    tecs_comp_t c = lc->id;
    bool exclusive = b[0] != 0, childof = b[2] != 0;
    if (b[0] > 1 || b[1] > TECS_CLEANUP_REFUSE || b[2] > 1 || b[3] != 0 || lc->sparse ||
        lc->enableable ||
        (childof && (!exclusive || lc->size != 0 || strcmp(tecs__comp_name(w, c), "ChildOf"))))
        return tecs__err(w, TECS_EFORMAT, "snapshot: the relation " TECS__COMP_FMT " is "
                         "malformed", TECS__COMP(w, c));
    if (!tecs__rel_is(w, c)) {
        /* (made by this load, or by an earlier one that failed) */
        if (!lc->made && tecs__comp_get(w, c)->saved_hash == 0)
            return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " is a relation in "
                             "the snapshot and a plain component here: register it with %s "
                             "before the load", TECS__COMP(w, c),
                             childof ? "tecs_childof" : "tecs_relation_new");
        return tecs__rel_adopt(w, c, exclusive, (tecs_cleanup_t)b[1], childof);
    }
    tecs__rel_desc d = rel_of(w, c);
    bool is_childof = d.childof;
    if (is_childof != childof || (!childof && exclusive != d.exclusive))
        return tecs__err(w, TECS_EFORMAT, "snapshot: the relation " TECS__COMP_FMT " is %s "
                         "here than in the snapshot", TECS__COMP(w, c),
                         is_childof != childof ? "another kind (ChildOf or not)"
                                               : "exclusive otherwise");
    return TECS_OK;
}

/* One pair of relation lc: slots, rank, value (into in->vals, by offset). */
static tecs_err_t load_pair(reader *in, const lcomp *lc)
{
    tecs_world_t *w = in->w;
    unsigned char b[12];
    tecs_err_t err = tecs__r_bytes(in, b, 12);
    if (err)
        return err;
    if (get32(b) >= (uint32_t)w->ei.nrecs || get32(b + 4) >= (uint32_t)w->ei.nrecs)
        return bad(in, "snapshot: %s", "a pair names a slot past the slots");
    if (tecs__grow(w, (void **)&in->pairs, &in->cap_pairs, in->npairs + 1, sizeof *in->pairs))
        return TECS_ENOMEM;
    uint32_t size = tecs__comp_get(w, lc->id)->size;
    tecs__rel_pair *p = &in->pairs[in->npairs];
    *p = (tecs__rel_pair){ .rel = lc->id, .src = get32(b), .tgt = get32(b + 4),
                           .rank = get32(b + 8),
                           .value = size ? (const void *)(uintptr_t)(in->nvals + 1) : NULL };
    if (size > 0) {
        if (in->nvals + size > in->cap_vals) {
            size_t cap = in->cap_vals ? in->cap_vals : 256;
            while (cap < in->nvals + size)
                cap *= 2;
            void *v = tecs__realloc(w, in->vals, in->cap_vals, cap);
            if (v == NULL)
                return tecs__err(w, TECS_ENOMEM, "out of memory loading a snapshot");
            in->vals = v;
            in->cap_vals = cap;
        }
        memset(in->vals + in->nvals, 0, size);
        if ((err = tecs__load_value(in, lc, in->vals + in->nvals)))
            return err;
        in->nvals += size;
    }
    in->npairs++;
    return TECS_OK;
}

tecs_err_t tecs__load_rels(reader *in, uint32_t *tag)
{
    uint32_t n;
    tecs_err_t err;
    if (!in->rels)
        return tecs__r_tag(in, tag);
    if ((err = tecs__r_tag(in, tag)))
        return err;
    if (*tag != TAG_RELS)
        return bad(in, "snapshot: %s", "the relations (RELS) are missing");
    if ((err = tecs__r_u32(in, &n)))
        return err;
    if (n == 0 || n > in->ncomps)
        return bad(in, "snapshot: %s", "a bad relation count");
    if ((err = tecs__rel_reserve(in->w, (int32_t)n)))
        return err;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t place, np;
        unsigned char b[4];
        if ((err = tecs__r_u32(in, &place)) || (err = tecs__r_bytes(in, b, 4)) ||
            (err = tecs__r_u32(in, &np)))
            return err;
        if (place >= in->ncomps)
            return bad(in, "snapshot: %s", "a relation names a bad component");
        const lcomp *lc = &in->comps[place];
        if ((err = match_rel(in, lc, b)))
            return err;
        for (uint32_t k = 0; k < np; k++)
            if ((err = load_pair(in, lc)))
                return err;
    }
    for (int32_t k = 0; k < in->npairs; k++)    /* the values stay put now */
        if (in->pairs[k].value)
            in->pairs[k].value = in->vals + ((uintptr_t)in->pairs[k].value - 1);
    if ((err = tecs__r_end(in, TAG_RELS)))
        return err;
    return tecs__r_tag(in, tag);
}

tecs_err_t tecs__load_rels_restore(reader *in)
{
    tecs_err_t err = tecs__rel_restore(in->w, in->pairs, (uint32_t)in->npairs);
    tecs__load_rels_free(in);
    return err;
}

void tecs__load_rels_free(reader *in)
{
    tecs__free(in->w, in->pairs, (size_t)in->cap_pairs * sizeof *in->pairs);
    tecs__free(in->w, in->vals, in->cap_vals);
    in->pairs = NULL;
    in->vals = NULL;
    in->npairs = in->cap_pairs = 0;
    in->nvals = in->cap_vals = 0;
}

/* The world empty again after a failed load. */
void tecs__load_undo(tecs_world_t *w)
{
    tecs__rel_clear(w);
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
    if ((err = tecs__load_header(in, tecs__snap_magic)) || (err = tecs__load_comps(in)) ||
        (err = load_ents(in)))
        return err;
    for (;;) {
        if ((err = tecs__r_tag(in, &tag)))
            return err;
        if (tag == TAG_ARCH)
            err = load_arch(in);
        else if (tag == TAG_SPRS)
            err = tecs__load_sparse(in, TAG_SPRS, sparse_first);
        else
            break;
        if (err)
            return err;
    }
    if (tag != TAG_RSRC)
        return bad(in, "snapshot: %s", "a section is missing or unknown");
    if (!fill_records(in))
        return bad(in, "snapshot: %s", "a slot is neither alive, free nor retired");
    if ((err = tecs__load_resources(in)) || (err = tecs__r_end(in, TAG_RSRC)) ||
        (err = tecs__load_rels(in, &tag)))
        return err;
    if (tag != TAG_END)
        return bad(in, "snapshot: %s", "the end is missing");
    return tecs__r_end(in, TAG_END);
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
tecs_err_t tecs__load_indexes(tecs_world_t *w)
{
    tecs_err_t err = tecs__emit_rows_replaced(w);
    if (err == TECS_EEXIST) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        tecs__err(w, err, "snapshot: the loaded entities break an index: %s", msg);
    }
    return err;
}

tecs_err_t tecs__load_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left,
                           view_fn view)
{
    tecs_err_t err = tecs__enter_world(w);
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
    fill_records(&in);                          /* (after a failure: for tecs__load_undo) */
    if (in.seen)
        tecs__free(w, in.seen, (size_t)in.nseen * 8);
    tecs__free(w, in.own, (size_t)in.own_cap * 4);
    tecs__free(w, in.comps, (size_t)in.ncomps * sizeof *in.comps + 1);
    tecs__free(w, in.blob, in.blob_cap);
    tecs__free(w, in.stage, in.stage_cap);
    bool built = err == TECS_OK;
    if (built)                                  /* the pairs first: indexes read them */
        err = tecs__load_rels_restore(&in);
    if (built && err == TECS_OK)
        err = tecs__load_indexes(w);
    tecs__load_rels_free(&in);
    if (err) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        tecs__load_undo(w);
        if (built)                              /* emptied: with no row, it cannot fail */
            tecs__emit_rows_replaced(w);
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
    return tecs__load_with(w, read, ctx, NULL, NULL);
}
