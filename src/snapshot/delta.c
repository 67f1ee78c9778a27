/*
** snapshot/delta.c — deltas: what changed in a world since a mark
** (tecs_world_mark), saved (tecs_delta_save) and applied to a mirror that
** is where the world was at the mark (tecs_delta_apply).
**
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
** the first change on empties the world (tecs__load_undo). No event is
** raised for an applied entity; the indexes and caches are rebuilt after.
**
** A delta is written with save.c's writer and sections, and read with
** load.c's reader and sections.
**
** Calls: save, load, format; resource, sparse, archetype, component, meta,
** entity_index, alloc; event (rows replaced).
*/
#include "internal.h"

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
static bool delta_next_run(const tecs_world_t *w, const tecs_archetype_t *a, uint64_t since,
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
    tecs_err_t err = tecs__enter_world(w);
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
    tecs__w_begin(o, TAG_DENT);
    tecs__w_u32(o, (uint32_t)s->nrecs);
    tecs__w_u32(o, taken_since(w, m));
    tecs__w_u32(o, t);
    for (uint32_t skip = (uint32_t)s->nfree - t; skip > 0; skip--)
        i = s->recs[i].row;
    for (uint32_t k = 0; i != TECS__NO_SLOT; i = s->recs[i].row) {
        put32((unsigned char *)&b[k], i);
        put32((unsigned char *)&b[k + 1], s->recs[i].gen);
        if ((k += 2) == 2 * 512 || s->recs[i].row == TECS__NO_SLOT) {
            tecs__w_bytes(o, b, (size_t)k * 4);
            k = 0;
        }
    }
    uint32_t nret = s->nretired != m->nretired ? (uint32_t)s->nretired : 0;
    tecs__w_u32(o, nret);
    for (int32_t r = 0; nret > 0 && r < s->nrecs; r++)
        if (s->recs[r].arch == TECS__ARCH_RETIRED)
            tecs__w_u32(o, (uint32_t)r);
    tecs__w_end(o);
}

/* a's part of DROW: components, rows, runs (a whole run's slots and
** generations, a written run's columns). */
static void save_drow(writer *o, tecs_archetype_t *a, uint64_t since)
{
    tecs_world_t *w = o->w;
    uint32_t k = 0, nruns = 0, b[2 * 512];
    drun run;
    tecs__w_u32(o, (uint32_t)a->ncomps);
    for (int32_t i = 0; i < a->ncomps; i++)
        tecs__w_u32(o, o->index[a->comps[i]]);
    tecs__w_u32(o, (uint32_t)a->count);
    while (delta_next_run(w, a, since, &k, &run))
        nruns++;
    tecs__w_u32(o, nruns);
    for (k = 0; delta_next_run(w, a, since, &k, &run);) {
        tecs__w_u32(o, run.start);
        tecs__w_u32(o, run.n);
        if (!run.whole) {
            tecs__w_u32(o, (uint32_t)TECS__POP64(run.cols));
            for (int32_t c = 0; c < a->ncols; c++)
                if (run.cols >> c & 1)
                    tecs__w_u32(o, o->index[a->col_comp[c]]);
            continue;
        }
        tecs__w_u32(o, RUN_WHOLE);
        uint32_t j = 0;
        for (uint32_t r = run.start; r < run.start + run.n; r++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, r);
            put32((unsigned char *)&b[j], TECS_ENTITY_INDEX(e));
            put32((unsigned char *)&b[j + 1], TECS_ENTITY_GENERATION(e));
            if ((j += 2) == 2 * 512 || r + 1 == run.start + run.n) {
                tecs__w_bytes(o, b, (size_t)j * 4);
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
    for (uint32_t k = 0; delta_next_run(w, a, since, &k, &run) && !o->err;) {
        if (!run.whole) {
            for (int32_t c = 0; c < a->ncols; c++)
                if (run.cols >> c & 1)
                    tecs__save_rows(o, a, c, run.start, run.n);
            continue;
        }
        for (int32_t i = 0; i < a->ncomps; i++) {
            int32_t col = tecs__arch_col(a, a->comps[i]);
            if (col >= 0)
                tecs__save_rows(o, a, col, run.start, run.n);
        }
        for (int32_t j = 0; j < a->ntog; j++)
            tecs__save_bits(o, a, j, run.start, run.n);
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
    tecs__save_header(o, tecs__snap_magic_delta);
    tecs__w_begin(o, TAG_BASE);
    tecs__w_u32(o, (uint32_t)m->nslots);
    tecs__w_u32(o, (uint32_t)m->nalive);
    tecs__w_u32(o, (uint32_t)m->nfree);
    tecs__w_end(o);
    if (tecs__save_comps(o))
        return;
    save_dent(o, m);
    tecs__w_begin(o, TAG_DROW);
    tecs__w_u32(o, (uint32_t)w->arch.narchs);
    for (int32_t i = 0; i < w->arch.narchs; i++)
        save_drow(o, w->arch.archs[i], m->tick);
    tecs__w_end(o);
    tecs__w_begin(o, TAG_DVAL);
    for (int32_t i = 0; i < w->arch.narchs && !o->err; i++)
        save_dval(o, w->arch.archs[i], m->tick);
    tecs__w_end(o);
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps && !o->err; c++)
        if (tecs__comp_get(w, c) && tecs__comp_is_sparse(w, c) && set_changed(w, c, m->tick))
            tecs__save_sparse(o, c, TAG_DSPR);
    tecs__save_resources(o);
    tecs__save_rels(o);
    tecs__w_begin(o, TAG_END);
    tecs__w_end(o);
    tecs__w_flush(o);
}

tecs_err_t tecs_delta_save(tecs_world_t *w, tecs_mark_t *mark, tecs_write_fn write, void *ctx)
{
    if (w != NULL && mark == NULL) {
        tecs_err_t err = tecs__enter(w);
        return err ? err : tecs__err(w, TECS_EINVAL, "NULL mark");
    }
    writer *o;
    tecs_err_t err = tecs__save_may(w, write, "tecs_delta_save");
    if (err || (err = mark_check(w, mark)) || (err = tecs__save_open(w, write, ctx, &o)))
        return err;
    save_delta(o, mark);
    if ((err = tecs__save_close(o)) == TECS_OK) {
        mark_now(w, mark);              /* the mark moves to now */
        w->base.err = TECS_OK;
    }
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
        if ((err = tecs__r_bytes(in, b, (size_t)k * 8)) ||
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
    if ((err = tecs__r_tag(in, &tag)))
        return err;
    if (tag != TAG_BASE)
        return bad(in, "delta: %s", "its base is missing");
    for (int i = 0; i < 3; i++)
        if ((err = tecs__r_u32(in, &v[i])))
            return err;
    if ((err = tecs__r_end(in, TAG_BASE)))
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
    if ((err = tecs__r_tag(in, &tag)) ||
        (tag != TAG_DENT && (err = bad(in, "delta: %s", "its slots are missing"))) ||
        (err = tecs__r_u32(in, &d->nslots)) || (err = tecs__r_u32(in, &d->taken)) ||
        (err = tecs__r_u32(in, &d->nfree)))
        return err;
    if (d->nslots < (uint32_t)w->ei.nrecs || d->nslots > (uint32_t)INT32_MAX ||
        d->taken > (uint32_t)w->ei.nfree || d->nfree > d->nslots)
        return bad(in, "delta: %s", "bad slot counts");
    d->free_at = d->nids;
    if ((err = d_ids(in, d, d->nfree)) || (err = tecs__r_u32(in, &d->nret)))
        return err;
    if (d->nret > d->nslots)
        return bad(in, "delta: %s", "bad slot counts");
    d->ret_at = d->nu32;
    for (uint32_t i = 0; i < d->nret; i++) {
        uint32_t slot;
        if ((err = tecs__r_u32(in, &slot)) || (err = d_u32(in, d, slot)))
            return err;
    }
    return tecs__r_end(in, TAG_DENT);
}

/* One run of archetype x: checked against its rows before and after (a
** row past the old ones must be in a whole run; runs in order, apart). */
static tecs_err_t read_run(reader *in, delta *d, darch *x, uint32_t *next)
{
    drun_in run;
    uint32_t start, n, kind;
    tecs_err_t err;
    if ((err = tecs__r_u32(in, &start)) || (err = tecs__r_u32(in, &n)) ||
        (err = tecs__r_u32(in, &kind)))
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
            if ((err = tecs__r_u32(in, &place)))
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
    if ((err = tecs__r_tag(in, &tag)) ||
        (tag != TAG_DROW && (err = bad(in, "delta: %s", "its rows are missing"))) ||
        (err = tecs__r_u32(in, &n)))
        return err;
    if (n > (uint32_t)w->arch.max_archetypes)
        return bad(in, "delta: %s", "too many archetypes");
    for (uint32_t i = 0; i < n; i++) {
        tecs_archetype_t *a;
        uint32_t nruns, next = 0;
        int32_t was = d->cap_seen;
        if ((err = tecs__load_arch_comps(in, &a, places)) ||
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
        if ((err = tecs__r_u32(in, &x->count)) || (err = tecs__r_u32(in, &nruns)))
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
    return tecs__r_end(in, TAG_DROW);
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
        uint32_t slot = tecs__ei_pop_free(w);
        s->recs[slot].arch = LIMBO;
        d->limbo[d->nlimbo++] = slot;
    }
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
** failed build leaves a constructed value behind for tecs__load_undo). */
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
            if ((err = tecs__r_bytes(in, at, (size_t)k * a->col_size[col])))
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
        if ((err = tecs__load_value(in, lc, at))) {
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
        /* (An archetype of no components may have no places at all.) */
        const uint32_t *places = d->u32 ? d->u32 + x->places : NULL;
        if ((err = tecs__load_bits(in, a, places, run->start, run->n)))
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
static tecs_err_t sparse_emptied(reader *in, const lcomp *lc, uint32_t n)
{
    (void)n;
    tecs_world_t *w = in->w;
    const tecs__comp *ci = tecs__comp_get(w, lc->id);
    for (int32_t i = tecs__sparse_count(w, lc->id); i-- > 0;) {
        uint32_t slot = TECS_ENTITY_INDEX(tecs__sparse_members(w, lc->id)[i]);
        if (ci->size > 0)
            tecs__comp_dtor(w, ci, tecs__sparse_get(w, lc->id, slot), 1);
        tecs__sparse_erase(w, lc->id, slot);
    }
    return TECS_OK;
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
    if ((err = tecs__load_header(in, tecs__snap_magic_delta)) || (err = read_base(in)) ||
        (err = tecs__load_comps(in)) || (err = read_dent(in, d)) || (err = read_drow(in, d)) ||
        (err = apply_structure(in, d)) || (err = tecs__r_tag(in, &tag)))
        return err;
    if (tag != TAG_DVAL)
        return bad(in, "delta: %s", "its values are missing");
    for (int32_t i = 0; i < d->narchs; i++)
        if ((err = apply_values(in, d, &d->archs[i])))
            return err;
    if ((err = tecs__r_end(in, TAG_DVAL)))
        return err;
    w->ei.nalive = 0;
    for (int32_t i = 0; i < w->arch.narchs; i++)
        w->ei.nalive += w->arch.archs[i]->count;
    for (;;) {
        if ((err = tecs__r_tag(in, &tag)))
            return err;
        if (tag != TAG_DSPR)
            break;
        if ((err = tecs__load_sparse(in, TAG_DSPR, sparse_emptied)))
            return err;
    }
    if (tag != TAG_RSRC)
        return bad(in, "delta: %s", "a section is missing or unknown");
    if ((err = stale_members(in, d)))
        return err;
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++)
        if (tecs__comp_get(w, c) && tecs_resource_has(w, c))
            tecs_resource_remove(w, c);
    if ((err = tecs__load_resources(in)) || (err = tecs__r_end(in, TAG_RSRC)) ||
        (err = tecs__load_rels(in, &tag)))
        return err;
    if (tag != TAG_END)
        return bad(in, "delta: %s", "the end is missing");
    return tecs__r_end(in, TAG_END);
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

tecs_err_t tecs__delta_apply_with(tecs_world_t *w, tecs_read_fn read, void *ctx, left_fn left)
{
    tecs_err_t err = tecs__enter_world(w);
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
    bool replaced = err == TECS_OK;
    if (replaced)
        err = tecs__load_rels_restore(&in);   /* every pair, as the source's now */
    if (replaced && err == TECS_OK)
        err = tecs__load_indexes(w);          /* rows replaced without events */
    tecs__load_rels_free(&in);
    if (err && (d.changed || replaced)) {
        char msg[sizeof w->base.errmsg];
        memcpy(msg, w->base.errmsg, sizeof msg);
        tecs__load_undo(w);
        tecs__emit_rows_replaced(w);    /* emptied: with no row, it cannot fail */
        w->base.err = err;                      /* the failure's own message */
        memcpy(w->base.errmsg, msg, sizeof msg);
    }
    if (err == TECS_OK)
        w->base.err = TECS_OK;
    return err;
}

tecs_err_t tecs_delta_apply(tecs_world_t *w, tecs_read_fn read, void *ctx)
{
    return tecs__delta_apply_with(w, read, ctx, NULL);
}
