/*
** store.c — the engine: a structural change performed now (births, moves
** between archetypes, destroys), for the public front end (entity.c) and
** for the command buffer (command.c) when it applies.
**
** Every structural change is the same three steps:
**
**     1. validate: the arguments (the front end and archetype.c do the
**                  user's; the engine the entity and component), then
**                  reserve everything that could fail (record slots,
**                  target archetype, rows in its chunks), then ask the
**                  vetoing listeners (a unique index may refuse a key;
**                  indexes reserve room) about the new values;
**     2. announce: REMOVE events, while the old value still exists;
**     3. commit:   move / construct / destroy values, fix the records,
**                  then ADD and SET events for what now exists.
**
** Step 3 cannot fail, so a failed call has changed nothing. A value written
** before anyone could ask (tecs_modified, a query's write term) is vetoed
** after the fact: a refusing listener restores its field
** (TECS__EV_WRITTEN). Listeners (field indexes, observers) and lifecycle
** hooks run with the world deferred: a structural change they make is
** queued, and applied once the outer call is done (tecs__settle, in the
** front end). A queued birth may grow the records, so no record pointer is
** kept across a hook or an event: it is fetched again by index.
**
** Moving an entity from archetype A to B (add or remove one component):
**
**     A: [e0 e1 e2 e3]      e1 moves        B: [f0 f1]
**            ^  |                               |
**            +--+ last row fills the hole       +-> [f0 f1 e1]
**
** Values shared by A and B are moved (move hook or memcpy), a new component
** is constructed (or copied from the value tecs_set gave), a removed one was
** destroyed in step 2. The target is found through A's edge for that
** component (an array load once the edge is known), or through a hop (see
** below). The quiet moves through a hop and the row move itself are inline
** in store.h, so that the front end's tecs_add, tecs_remove and tecs_set
** run them without a call.
**
** The engine owns the hops and `leaving` (store state in store.h). It never
** queues: the front end decides between now and later.
**
** Calls: base.c, entity_index.c, component.c, event.c, archetype.c,
** sparse.c.
*/
#include "private.h"

/* Ask about n births into a, values from vals (NULL: default). */
static tecs_err_t veto_births(tecs_world_t *w, tecs_archetype_t *a, int32_t n,
                              int32_t nvals, const tecs_value_t *vals)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (TECS__LIKELY(w->comp.comps[c].veto == 0))
            continue;
        const void *src = NULL;
        for (int32_t v = 0; v < nvals; v++)
            if (vals[v].comp == c)
                src = vals[v].ptr;
        tecs_err_t err = tecs__veto(w, TECS__EV_ADD, 0, c, src, n);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Components of a whose changes some listener may veto. */
static inline bool any_vetoing(const tecs_world_t *w, const tecs_archetype_t *a)
{
    if (TECS__LIKELY(!w->bus.watch_vetoes))
        return false;
    for (int32_t i = 0; i < a->ncomps; i++)
        if (w->comp.comps[a->comps[i]].veto)
            return true;
    return false;
}

static inline bool watched(const tecs_world_t *w, tecs_comp_t c)
{
    return w->comp.comps[c].watch != 0;
}

/* Events for every component of the entity at row (births, deaths). */
static void emit_all(tecs_world_t *w, int ev, tecs_archetype_t *a, uint32_t row, tecs_entity_t e)
{
    if (!w->bus.watch_comps)
        return;
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (!watched(w, c))
            continue;
        int32_t col = tecs__arch_col(a, c);
        tecs__emit_comp(w, ev, e, c, col >= 0 ? tecs__col_ptr(a, w, col, row) : NULL);
    }
}

/* REMOVE events for every sparse component e has (a destroy), while the
** values exist. */
static void emit_sparse_removes(tecs_world_t *w, tecs_entity_t e)
{
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        const tecs__sparse *s = w->sparse.sets[i];
        if (s->count == 0 || !watched(w, s->comp))
            continue;
        void *p = tecs__sparse_get(w, s->comp, TECS_ENTITY_INDEX(e));
        if (p)
            tecs__emit_comp(w, TECS__EV_REMOVE, e, s->comp, s->size ? p : NULL);
    }
}

/* REMOVE events for e losing c (0: every component, a destroy), while its
** row still holds the values: w->store.leaving names it meanwhile, so that an
** index made or rebuilt by a callback of these events does not take what
** is leaving (the events it would need have gone by). */
static TECS__NOINLINE void emit_leaving(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                        tecs_archetype_t *a, uint32_t row, const void *p)
{
    tecs_entity_t was = w->store.leaving;
    tecs_comp_t was_comp = w->store.leaving_comp;
    w->store.leaving = e;
    w->store.leaving_comp = c;
    if (c) {
        tecs__emit_comp(w, TECS__EV_REMOVE, e, c, p);
    } else {
        emit_all(w, TECS__EV_REMOVE, a, row, e);
        if (w->sparse.nfilled)
            emit_sparse_removes(w, e);
    }
    w->store.leaving = was;
    w->store.leaving_comp = was_comp;
}

/* The events of e's death (REMOVE of each component, then the move out,
** LEAVE), while its row still holds it: w->store.leaving names it throughout, so
** that an index made by a callback of either does not take it. */
static TECS__NOINLINE void emit_dying(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                                      uint32_t row)
{
    tecs_entity_t was = w->store.leaving;
    tecs_comp_t was_comp = w->store.leaving_comp;
    w->store.leaving = e;
    w->store.leaving_comp = 0;
    if (w->bus.watch_comps)
        emit_leaving(w, e, 0, a, row, NULL);
    if (w->bus.watch_moves)
        tecs__emit_move(w, e, a, NULL);
    w->store.leaving = was;
    w->store.leaving_comp = was_comp;
}

/* ---- births ---------------------------------------------------------- */

struct tecs_init_t {
    tecs_world_t *world;
    tecs_entity_t entity;
    tecs_archetype_t *arch;
    uint32_t row;
    uint64_t done;              /* columns the initializer constructed      */
};

void *tecs_init_construct(tecs_init_t *init, tecs_comp_t c)
{
    if (init == NULL || tecs__enter(init->world))
        return NULL;
    int32_t col = tecs__arch_col(init->arch, c);
    if (col < 0) {
        tecs__err(init->world, col == TECS__COL_TAG ? TECS_EINVAL : TECS_ENOCOMP,
                  col == TECS__COL_TAG ? TECS__COMP_FMT " is a tag: it has no storage in "
                  TECS__ENT_FMT : TECS__COMP_FMT " is not in the archetype of " TECS__ENT_FMT,
                  TECS__COMP(init->world, c), TECS__ENT(init->entity));
        return NULL;
    }
    init->done |= (uint64_t)1 << col;
    return tecs__col_ptr(init->arch, init->world, col, init->row);
}

tecs_entity_t tecs_init_entity(const tecs_init_t *init)
{
    return init ? init->entity : 0;
}

/* Construct rows [row, row + n) of column col, copying from src if given. */
static void construct_run(tecs_world_t *w, tecs_archetype_t *a, int32_t col, uint32_t row,
                          int32_t n, const char *src)
{
    const tecs__comp *ci = tecs__col_info(w, a, col);
    while (n > 0) {
        int32_t room = (int32_t)(w->arch.rows - (row & w->arch.mask));
        int32_t k = n < room ? n : room;
        void *dst = tecs__col_ptr(a, w, col, row);
        if (src && a->plain && k == 1) {
            tecs__copy_value(dst, src, ci->size);
        } else if (src && a->plain) {
            memcpy(dst, src, (size_t)k * ci->size);
        } else {
            tecs__comp_ctor(w, ci, dst, k);
            if (src)
                tecs__comp_copy(w, ci, dst, src, k);
        }
        if (src)
            src += (size_t)k * ci->size;
        row += (uint32_t)k;
        n -= k;
    }
}

/* Per column, the caller's values for it (or NULL). */
static void vals_by_col(tecs_archetype_t *a, int32_t nvals, const tecs_value_t *vals,
                        const char **src)
{
    for (int32_t c = 0; c < a->ncols; c++)
        src[c] = NULL;
    for (int32_t i = 0; i < nvals; i++) {
        int32_t col = tecs__arch_col(a, vals[i].comp);
        if (col >= 0)
            src[col] = vals[i].ptr;
    }
}

/* Announce n births at rows [row, row + n), for emit_births. */
static TECS__NOINLINE void announce_births(tecs_world_t *w, tecs_archetype_t *a, uint32_t row,
                                           int32_t n, int32_t nvals, const tecs_value_t *vals)
{
    bool any = w->bus.watch_moves;
    for (int32_t i = 0; i < a->ncomps && !any; i++)
        any = watched(w, a->comps[i]);
    if (!any)
        return;
    for (int32_t k = 0; k < n; k++) {
        uint32_t r = row + (uint32_t)k;
        tecs_entity_t e = *tecs__ent_ptr(a, w, r);
        if (w->bus.watch_moves)
            tecs__emit_move(w, e, NULL, a);
        emit_all(w, TECS__EV_ADD, a, r, e);
        for (int32_t i = 0; i < nvals; i++) {
            int32_t col = tecs__arch_col(a, vals[i].comp);
            if (col >= 0 && watched(w, vals[i].comp))
                tecs__emit_comp(w, TECS__EV_SET, e, vals[i].comp, tecs__col_ptr(a, w, col, r));
        }
    }
}

/* Announce n births at rows [row, row + n), if anyone listens. */
static inline void emit_births(tecs_world_t *w, tecs_archetype_t *a, uint32_t row, int32_t n,
                               int32_t nvals, const tecs_value_t *vals)
{
    if (TECS__UNLIKELY(w->bus.watch_moves || w->bus.watch_comps))
        announce_births(w, a, row, n, nvals, vals);
}

/* Append n new entities to a (slots and rows reserved), chunk by chunk: take
** their slots, write their ids (into out too, if given) and records, then
** construct their values column by column; announce them. */
static void commit_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                        int32_t nvals, const tecs_value_t *vals)
{
    uint32_t row0 = (uint32_t)a->count;
    for (int32_t done = 0; done < n;) {
        uint32_t row = row0 + (uint32_t)done;
        int32_t room = (int32_t)(w->arch.rows - (row & w->arch.mask));
        int32_t k = n - done < room ? n - done : room;
        tecs_entity_t *ents = tecs__ent_ptr(a, w, row);
        for (int32_t i = 0; i < k; i++) {
            tecs_entity_t e = tecs__ei_take(w);
            tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(e)];
            r->arch = a->id;
            r->row = row + (uint32_t)i;
            ents[i] = e;
            if (out)
                out[done + i] = e;
        }
        done += k;
    }
    const char *src[TECS_MAX_ARCH_COMPONENTS];
    vals_by_col(a, nvals, vals, src);
    for (int32_t c = 0; c < a->ncols; c++)
        construct_run(w, a, c, row0, n, src[c]);
    if (n > 0)
        tecs__arch_entered_n(&w->arch, a, row0, (uint32_t)n);
    a->count += n;
    w->ei.nalive += n;
    emit_births(w, a, row0, n, nvals, vals);
}

/* commit_births for one entity, without the chunk-run bookkeeping. */
static void commit_birth(tecs_world_t *w, tecs_archetype_t *a, tecs_entity_t e, int32_t nvals,
                         const tecs_value_t *vals)
{
    uint32_t row = (uint32_t)a->count++;
    tecs__arch_entered(w, a, row);
    char *const *chunk = tecs__chunk_of(a, w, row);
    size_t i = row & w->arch.mask;
    tecs__chunk_ents(chunk)[i] = e;
    tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(e)];
    r->arch = a->id;
    r->row = row;
    for (int32_t c = 0; c < a->ncols; c++) {
        const void *src = NULL;
        for (int32_t v = 0; v < nvals; v++)
            if (vals[v].comp == a->col_comp[c])
                src = vals[v].ptr;
        tecs__construct_one(w, tecs__col_info(w, a, c),
                            tecs__chunk_col(chunk, c) + i * a->col_size[c], src);
    }
    w->ei.npending--;
    w->ei.nalive++;
    emit_births(w, a, row, 1, nvals, vals);
}

/* Give a pending entity its row; run the initializer, then construct what it
** left untouched. Rows must be reserved. */
/* Ask about the values an initializer built at row. */
static tecs_err_t veto_built(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        int32_t col = tecs__arch_col(a, c);
        if (w->comp.comps[c].veto == 0 || col < 0)
            continue;
        tecs_err_t err = tecs__veto(w, TECS__EV_ADD, 0, c, tecs__col_ptr(a, w, col, row), 1);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Before an initializer runs: let vetoing listeners reserve for one birth
** into a, so that asking about the values it builds cannot run out of
** memory (the initializer is not run twice for one birth). */
static tecs_err_t veto_reserve(tecs_world_t *w, const tecs_archetype_t *a)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (w->comp.comps[c].veto == 0 || tecs__arch_col(a, c) < 0)
            continue;
        tecs_err_t err = tecs__veto(w, TECS__EV_ADD | TECS__EV_RESERVE, 0, c, NULL, 1);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Take back a refused birth: destroy its values, drop its row (the last). */
static void unbuild(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    for (int32_t c = 0; c < a->ncols; c++)
        tecs__comp_dtor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, row), 1);
    a->count--;
}

static tecs_err_t commit_birth_with(tecs_world_t *w, tecs_archetype_t *a, tecs_entity_t e,
                                    tecs_init_fn fn, void *ctx)
{
    if (TECS__UNLIKELY(any_vetoing(w, a))) {
        tecs_err_t err = veto_reserve(w, a);
        if (err)
            return err;
    }
    tecs_init_t init = { w, e, a, (uint32_t)a->count, 0 };
    *tecs__ent_ptr(a, w, init.row) = e;
    for (int32_t c = 0; c < a->ncols; c++)
        if (tecs__col_info(w, a, c)->ctor == NULL)
            memset(tecs__col_ptr(a, w, c, init.row), 0, a->col_size[c]);
    /* The row is counted only once fn returns, so that a query run inside
    ** fn does not see the entity half built (the world is deferred: no
    ** other row can be appended meanwhile). The record keeps its pending
    ** row until then too: row 1 of a pending slot means a delayed birth. */
    tecs_err_t outer_err = tecs__cb_begin(w);
    fn(&init, ctx);
    tecs__cb_end(w, outer_err);
    tecs__arch_entered(w, a, (uint32_t)a->count);
    a->count++;
    for (int32_t c = 0; c < a->ncols; c++)
        if (!(init.done >> c & 1) && tecs__col_info(w, a, c)->ctor)
            tecs__comp_ctor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, init.row), 1);
    if (TECS__UNLIKELY(any_vetoing(w, a))) {
        tecs_err_t err = veto_built(w, a, init.row);
        if (err) {
            unbuild(w, a, init.row);
            if (err == TECS_ENOMEM) {
                /* Only when fn made or emptied an index: the initializer
                ** has run, so the birth is not tried again but cancelled. */
                tecs__ei_release(w, TECS_ENTITY_INDEX(e));
                w->ei.npending--;
            }
            return err;
        }
    }
    w->ei.recs[TECS_ENTITY_INDEX(e)].row = init.row;
    w->ei.recs[TECS_ENTITY_INDEX(e)].arch = a->id;
    w->ei.npending--;
    w->ei.nalive++;
    emit_births(w, a, init.row, 1, 0, NULL);
    return TECS_OK;
}

tecs_err_t tecs__birth(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                       int32_t nvals, const tecs_value_t *vals, tecs_init_fn fn, void *ctx)
{
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL || r->arch != TECS__ARCH_PENDING)
        return tecs__err_dead(w, e);
    tecs_err_t err = tecs__arch_reserve_rows(w, a, 1);
    if (err)
        return err;
    if (fn)
        err = commit_birth_with(w, a, e, fn, ctx);
    else if (TECS__UNLIKELY(any_vetoing(w, a)) && (err = veto_births(w, a, 1, nvals, vals)))
        ;
    else
        commit_birth(w, a, e, nvals, vals);
    if (err && err != TECS_ENOMEM) {
        /* Refused for good (a unique key taken): the birth is cancelled. */
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->ei.npending--;
    }
    return err;
}

/* tecs__birth_run within one chunk, from row: place pending births from
** ids (k at most, as many as the chunk holds) until the chunk is full; the
** value column's size is vsize. @return the births placed; *used says how
** many commands were read. */
static TECS__INLINE uint32_t run_chunk_sized(tecs_world_t *w, tecs_archetype_t *a, uint32_t row,
                                             int32_t k, const char *ids, int32_t col,
                                             const char *vals, size_t stride, int32_t *used,
                                             uint32_t vsize)
{
    char *const *chunk = tecs__chunk_of(a, w, row);
    const size_t i0 = row & w->arch.mask, room = w->arch.rows - i0;
    tecs_entity_t *const ents = tecs__chunk_ents(chunk) + i0;
    char *const dst = col >= 0 ? tecs__chunk_col(chunk, col) + i0 * vsize : NULL;
    const uint32_t id = a->id;
    tecs__record *const recs = w->ei.recs;   /* locals: the stores below may alias */
    size_t placed = 0;
    int32_t j = 0;
    for (; j < k && placed < room; j++, ids += stride, vals += stride) {
        tecs_entity_t e;
        memcpy(&e, ids, sizeof e);
        tecs__record *r = &recs[TECS_ENTITY_INDEX(e)];
        if (TECS__UNLIKELY(r->gen != TECS_ENTITY_GENERATION(e) ||
                           r->arch != TECS__ARCH_PENDING))
            continue;                       /* no longer pending: skipped */
        ents[placed] = e;
        if (dst)
            tecs__copy_value(dst + placed * vsize, vals, vsize);
        *r = (tecs__record){ r->gen, id, row + (uint32_t)placed++ };
    }
    for (int32_t c = 0; c < a->ncols; c++)    /* the other columns: zeros */
        if (c != col)
            memset(tecs__chunk_col(chunk, c) + i0 * a->col_size[c], 0,
                   placed * a->col_size[c]);
    *used = j;
    return (uint32_t)placed;
}

/* run_chunk_sized; the usual value (two floats) gets a constant size. */
static uint32_t run_chunk(tecs_world_t *w, tecs_archetype_t *a, uint32_t row, int32_t k,
                          const char *ids, int32_t col, const char *vals, size_t stride,
                          int32_t *used)
{
    uint32_t vsize = col >= 0 ? a->col_size[col] : 0;
    if (vsize == 8)
        return run_chunk_sized(w, a, row, k, ids, col, vals, stride, used, 8);
    return run_chunk_sized(w, a, row, k, ids, col, vals, stride, used, vsize);
}

void tecs__birth_run(tecs_world_t *w, tecs_archetype_t *a, int32_t n, const char *ids,
                     int32_t col, const char *vals, size_t stride)
{
    assert(a->plain && tecs__arch_has_rows(w, a, n));
    uint32_t row = (uint32_t)a->count;
    while (n > 0) {
        int32_t used;
        row += run_chunk(w, a, row, n, ids, col, vals, stride, &used);
        ids += (size_t)used * stride;
        vals += (size_t)used * stride;
        n -= used;
    }
    int32_t placed = (int32_t)row - a->count;
    if (placed > 0)
        tecs__arch_entered_n(&w->arch, a, (uint32_t)a->count, (uint32_t)placed);
    a->count += placed;
    w->ei.npending -= placed;
    w->ei.nalive += placed;
}

/* ---- moves ----------------------------------------------------------- */

/* move_row for archetypes with hooks, out of the plain path's way. */
static TECS__NOINLINE void move_row_hooked(tecs_world_t *w, tecs__record *r,
                                           tecs_archetype_t *a, tecs_archetype_t *b,
                                           int32_t k, bool adding, const void *value)
{
    tecs__move_row_with(w, r, a, b, k, adding, value, false);
}

static TECS__INLINE void move_row(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                                  tecs_archetype_t *b, int32_t k, bool adding,
                                  const void *value)
{
    if (TECS__LIKELY(b->plain))
        tecs__move_row_with(w, r, a, b, k, adding, value, true);
    else
        move_row_hooked(w, r, a, b, k, adding, value);
}

/* ---- hops -------------------------------------------------------------
**
** Finding where a move goes is a walk: record -> archetype -> its edge for
** c -> the target -> the target's chunk. Each step is a load that waits for
** the one before, so in a burst of creations or moves the waits for
** memory set the pace. So the engine remembers, per component, its
** last plain add and remove (from, to, the column of c), in a table it
** grows when a component first takes a hop (a hop is a shortcut: without
** the memory for it, the walk is the way): when the record names that
** from, both archetypes come from the hop, loads that need nothing but c,
** and only the record's row is waited for.
** One more hop serves tecs_destroy: the plain archetype it last freed a row
** of. When a hop does not match, the walk is the way. Archetypes live until
** the world ends, but for one the engine made and drops again while still
** empty (undo_target), whose hops it forgets. Lookups (tecs_get) take no
** hop: a random lookup waits on memory, and the extra test only costs.
*/

/* Forget every hop that leads from or to archetype a (it is being freed). */
static void forget_hops(tecs_world_t *w, const tecs_archetype_t *a)
{
    static const tecs__hop empty;
    if (w->store.kill.from == a)
        w->store.kill = empty;
    for (int32_t i = 0; i < w->store.nhops; i++) {
        tecs__hops *h = &w->store.hops[i];
        if (h->add.from == a || h->add.to == a)
            h->add = empty;
        if (h->rem.from == a || h->rem.to == a)
            h->rem = empty;
    }
}

/* The hops of c, beyond the table: grow it; NULL without the memory. */
static TECS__NOINLINE tecs__hops *hops_grow(tecs_world_t *w, tecs_comp_t c)
{
    tecs__store_state *s = &w->store;
    size_t n = s->nhops ? (size_t)s->nhops : 16;
    while (n <= c)
        n *= 2;
    tecs__hops *t = tecs__realloc(w, s->hops, (size_t)s->nhops * sizeof *t, n * sizeof *t);
    if (t == NULL)
        return NULL;
    memset(t + s->nhops, 0, (n - (size_t)s->nhops) * sizeof *t);
    s->hops = t;
    s->nhops = (int32_t)n;
    return &s->hops[c];
}

/* Remember the plain add (add true) or remove of c from a to b. */
static inline void hop_remember(tecs_world_t *w, tecs_comp_t c, bool add, tecs_archetype_t *a,
                                tecs_archetype_t *b, int32_t k)
{
    tecs__hops *h = TECS__LIKELY(c < (tecs_comp_t)w->store.nhops) ? &w->store.hops[c]
                                                                 : hops_grow(w, c);
    if (h != NULL)
        tecs__hop_set(add ? &h->add : &h->rem, a, b, k);
}

void tecs__store_fini(tecs_world_t *w)
{
    tecs__free(w, w->store.hops, (size_t)w->store.nhops * sizeof *w->store.hops);
}

/* Events after c was added to e (now in b). */
static TECS__NOINLINE void after_add(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                                     tecs_archetype_t *b, tecs_comp_t c, const void *value)
{
    if (w->bus.watch_moves)
        tecs__emit_move(w, e, a, b);
    if (watched(w, c)) {
        int32_t col = tecs__arch_col(b, c);
        uint32_t row = w->ei.recs[TECS_ENTITY_INDEX(e)].row;  /* records may have moved */
        const void *p = col >= 0 ? tecs__col_ptr(b, w, col, row) : NULL;
        tecs__emit_comp(w, TECS__EV_ADD, e, c, p);
        if (value && col >= 0)
            tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    }
}

void tecs__move_tags(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *b, tecs_comp_t gone,
                     tecs_comp_t came)
{
    tecs__record *r = tecs__ei_alive(w, e);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    if (a == b)
        return;
    if (gone && watched(w, gone)) {
        emit_leaving(w, e, gone, a, r->row, NULL);
        r = &w->ei.recs[TECS_ENTITY_INDEX(e)];  /* callbacks may have moved them */
    }
    move_row(w, r, a, b, TECS__COL_TAG, true, NULL);
    if (w->bus.watch_moves)
        tecs__emit_move(w, e, a, b);
    if (came && watched(w, came))
        tecs__emit_comp(w, TECS__EV_ADD, e, came, NULL);
}

/* The target of adding c to a, creating it if needed (slow path). */
static tecs_archetype_t *target_with(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c,
                                     tecs_entity_t e)
{
    if (tecs__comp_get(w, c) == NULL) {
        tecs__err_nocomp(w, c);
        return NULL;
    }
    if (tecs__arch_col(a, c) != TECS__COL_ABSENT) {
        tecs__err(w, TECS_EEXIST, TECS__ENT_FMT " already has " TECS__COMP_FMT,
                  TECS__ENT(e), TECS__COMP(w, c));
        return NULL;
    }
    return tecs__arch_with(w, a, c);
}

/* A move failed for lack of room in its target: if the target was created
** by this call (the world had narchs archetypes), undo it too. */
static TECS__NOINLINE tecs_err_t undo_target(tecs_world_t *w, int32_t narchs, tecs_err_t err)
{
    if (w->arch.narchs > narchs) {
        forget_hops(w, w->arch.archs[w->arch.narchs - 1]);
        tecs__arch_drop_last(w);
    }
    return err;
}

/* Add c to the live entity e of record r, in archetype a. */
static TECS__INLINE tecs_err_t add_to(tecs_world_t *w, tecs_entity_t e, tecs__record *r,
                                      tecs_archetype_t *a, tecs_comp_t c, const void *value)
{
    if (TECS__LIKELY(tecs__add_quick(w, r, c, value)))
        return TECS_OK;
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)))
        return tecs__add_sparse(w, e, c, value);
    int32_t narchs = w->arch.narchs;
    tecs_archetype_t *b = tecs__edge_add(w, a, c);
    if (TECS__LIKELY(b != NULL && tecs__quiet_add(w, b, c))) {
        int32_t k = tecs__arch_col(b, c);
        hop_remember(w, c, true, a, b, k);
        tecs__move_row_with(w, r, a, b, k, true, value, true);
        return TECS_OK;
    }
    if (TECS__UNLIKELY(b == NULL) && (b = target_with(w, a, c, e)) == NULL)
        return w->base.err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (TECS__UNLIKELY(err))
        return undo_target(w, narchs, err);
    if (TECS__UNLIKELY(w->comp.comps[c].veto) &&
        (err = tecs__veto(w, TECS__EV_ADD, e, c, value, 1)))
        return undo_target(w, narchs, err);
    r = &w->ei.recs[TECS_ENTITY_INDEX(e)];     /* the veto may have moved them */
    move_row(w, r, a, b, tecs__arch_col(b, c), true, value);
    if (TECS__UNLIKELY(w->bus.watch_moves || w->comp.comps[c].watch))
        after_add(w, e, a, b, c, value);
    return TECS_OK;
}

tecs_err_t tecs__add_to(tecs_world_t *w, tecs_entity_t e, tecs__record *r, tecs_archetype_t *a,
                        tecs_comp_t c, const void *value)
{
    return add_to(w, e, r, a, c, value);
}

tecs_err_t tecs__add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (TECS__UNLIKELY(r == NULL))
        return tecs__err_dead(w, e);
    return add_to(w, e, r, tecs__rec_arch(w, r), c, value);
}

tecs_err_t tecs__remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (TECS__UNLIKELY(r == NULL))
        return tecs__err_dead(w, e);
    if (TECS__LIKELY(tecs__remove_quick(w, r, c)))
        return TECS_OK;
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)))
        return tecs__remove_sparse(w, e, c);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t k = tecs__arch_col(a, c);
    if (TECS__UNLIKELY(k == TECS__COL_ABSENT))
        return tecs__comp_get(w, c) ? tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not "
                                                "have " TECS__COMP_FMT, TECS__ENT(e),
                                                TECS__COMP(w, c))
                                    : tecs__err_nocomp(w, c);
    int32_t narchs = w->arch.narchs;
    tecs_archetype_t *b = tecs__edge_rem(w, a, c);
    if (TECS__UNLIKELY(b == NULL) && (b = tecs__arch_without(w, a, c)) == NULL)
        return w->base.err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (TECS__UNLIKELY(err))
        return undo_target(w, narchs, err);
    if (TECS__UNLIKELY(w->comp.comps[c].veto)) {
        const void *p = k >= 0 ? tecs__col_ptr(a, w, k, r->row) : NULL;
        if ((err = tecs__veto(w, TECS__EV_REMOVE, e, c, p, 1)))
            return undo_target(w, narchs, err);
        r = &w->ei.recs[TECS_ENTITY_INDEX(e)];  /* the veto may have moved them */
    }
    if (TECS__LIKELY(a->plain && tecs__quiet_remove(w, b, c)))
        hop_remember(w, c, false, a, b, k);
    if (TECS__UNLIKELY(w->comp.comps[c].watch || !a->plain)) {
        void *p = k >= 0 ? tecs__col_ptr(a, w, k, r->row) : NULL;
        if (w->comp.comps[c].watch)
            emit_leaving(w, e, c, a, r->row, p);
        if (p && tecs__col_info(w, a, k)->dtor)
            tecs__comp_dtor(w, tecs__col_info(w, a, k), p, 1);
        r = &w->ei.recs[TECS_ENTITY_INDEX(e)];  /* callbacks may have moved them */
    }
    int32_t j = TECS__UNLIKELY(a->ntog) ? tecs__arch_tog(a, c) : -1;
    bool off = j >= 0 && tecs__arch_bit(a, w, j, r->row);
    move_row(w, r, a, b, k, false, NULL);
    if (TECS__UNLIKELY(w->bus.watch_moves)) {
        /* Membership before the move reads c's bit, gone with the row. */
        tecs_entity_t was = w->store.gone;
        tecs_comp_t was_comp = w->store.gone_comp;
        bool was_off = w->store.gone_disabled;
        w->store.gone = e;
        w->store.gone_comp = j >= 0 ? c : 0;
        w->store.gone_disabled = off;
        tecs__emit_move(w, e, a, b);
        w->store.gone = was;
        w->store.gone_comp = was_comp;
        w->store.gone_disabled = was_off;
    }
    return TECS_OK;
}

/* ---- sparse components ------------------------------------------------
**
** A sparse component's value lives in its set (sparse.c), not in a row:
** adding or removing one moves nothing. The steps are the same as a
** move's: ask the vetoing listeners, reserve the set's room (a failure
** has changed nothing), then insert and construct, then ADD and SET; a
** remove announces REMOVE while the value exists, destroys it, erases.
** A sparse component never takes a hop, so the quiet hops of the table
** path fail at once for it and lead here.
*/

tecs_err_t tecs__add_sparse(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(tecs__sparse_get(w, c, slot) != NULL))
        return tecs__err(w, TECS_EEXIST, TECS__ENT_FMT " already has " TECS__COMP_FMT,
                         TECS__ENT(e), TECS__COMP(w, c));
    const tecs__comp *ci = &w->comp.comps[c];
    tecs_err_t err;
    if (TECS__UNLIKELY(ci->veto) && (err = tecs__veto(w, TECS__EV_ADD, e, c, value, 1)))
        return err;
    if (TECS__UNLIKELY(err = tecs__sparse_reserve(w, c, slot)))
        return err;
    ci = &w->comp.comps[c];     /* a vetoing listener may have grown the registry */
    void *p = tecs__sparse_insert(w, c, e);
    if (ci->size == 0)
        p = NULL;
    else if (TECS__LIKELY(value == NULL && ci->ctor == NULL))
        tecs__zero_value(p, ci->size);
    else
        tecs__construct_one(w, ci, p, value);
    if (TECS__UNLIKELY(w->comp.comps[c].watch)) {
        tecs__emit_comp(w, TECS__EV_ADD, e, c, p);
        if (value && p && watched(w, c))
            tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    }
    return TECS_OK;
}

tecs_err_t tecs__remove_sparse(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    void *p = tecs__sparse_get(w, c, slot);
    if (TECS__UNLIKELY(p == NULL))
        return tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not have " TECS__COMP_FMT,
                         TECS__ENT(e), TECS__COMP(w, c));
    if (TECS__UNLIKELY(w->comp.comps[c].watch))
        emit_leaving(w, e, c, NULL, 0, w->comp.comps[c].size ? p : NULL);
    if (TECS__UNLIKELY(w->comp.comps[c].dtor != NULL))
        tecs__comp_dtor(w, &w->comp.comps[c], p, 1);
    tecs__sparse_erase(w, c, slot);
    return TECS_OK;
}

/* Destroy e's sparse values and take it out of every set (a destroy; its
** REMOVE events have been raised). */
static TECS__NOINLINE void drop_sparse(tecs_world_t *w, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        const tecs__sparse *s = w->sparse.sets[i];
        void *p = s->count ? tecs__sparse_get(w, s->comp, slot) : NULL;
        if (p == NULL)
            continue;
        if (w->comp.comps[s->comp].dtor)
            tecs__comp_dtor(w, &w->comp.comps[s->comp], p, 1);
        tecs__sparse_erase(w, s->comp, slot);
    }
}

tecs_err_t tecs__destroy_now(tecs_world_t *w, tecs_entity_t e)
{
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL)
        return tecs__err_dead(w, e);
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (r->arch == TECS__ARCH_PENDING) {
        tecs__ei_release(w, index);
        w->ei.npending--;
        return TECS_OK;
    }
    if (TECS__UNLIKELY(w->bus.watch_destroys) &&
        (w->base.closed == TECS__OPEN || w->base.closed == TECS__RESETTING)) {
        tecs_err_t err = tecs__emit_destroying(w, e);
        if (err)
            return err;
        if ((r = tecs__ei_alive(w, e)) == NULL)
            return TECS_OK;     /* the listener's cleanup took it with it */
    }
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    uint32_t row = r->row;
    if (w->bus.watch_comps || w->bus.watch_moves)
        emit_dying(w, e, a, row);
    if (!a->plain)
        for (int32_t c = 0; c < a->ncols; c++)
            tecs__comp_dtor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, row), 1);
    if (w->sparse.nfilled)
        drop_sparse(w, e);
    tecs__arch_remove_row(w, a, row);
    tecs__ei_release(w, index);
    w->ei.nalive--;
    return TECS_OK;
}

/* ---- enabling -------------------------------------------------------- */

tecs_err_t tecs__enableable(tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = tecs__comp_get(w, c);
    if (ci == NULL)
        return tecs__err_nocomp(w, c);
    if (!ci->enableable)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is not enableable (register it "
                         "with .enableable = true)", TECS__COMP(w, c));
    return TECS_OK;
}

/* Why c of the live entity e cannot be enabled or disabled. */
static TECS__NOINLINE tecs_err_t enable_refused(tecs_world_t *w, tecs_entity_t e,
                                                tecs_comp_t c)
{
    tecs_err_t err = tecs__enableable(w, c);
    return err ? err : tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not have "
                                 TECS__COMP_FMT, TECS__ENT(e), TECS__COMP(w, c));
}

tecs_err_t tecs__enable_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, bool on)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (TECS__UNLIKELY(r == NULL))
        return tecs__err_dead(w, e);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t j = tecs__arch_tog(a, c);
    if (TECS__UNLIKELY(j < 0))
        return enable_refused(w, e, c);
    uint32_t row = r->row;
    if (!tecs__arch_bit_put(w, a, j, row, !on) || TECS__LIKELY(w->comp.comps[c].watch == 0))
        return TECS_OK;
    int32_t col = tecs__arch_col(a, c);
    tecs__emit_comp(w, on ? TECS__EV_ENABLE : TECS__EV_DISABLE, e, c,
                    col >= 0 ? tecs__col_ptr(a, w, col, row) : NULL);
    return TECS_OK;
}

/* ---- births in bulk, writes ------------------------------------------ */

tecs_err_t tecs__birth_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                            int32_t nvals, const tecs_value_t *vals)
{
    tecs_err_t err;
    if (TECS__UNLIKELY(any_vetoing(w, a)) && (err = veto_births(w, a, n, nvals, vals)))
        return err;
    if ((err = tecs__ei_reserve(w, n)) || (err = tecs__arch_reserve_rows(w, a, n)))
        return err;
    commit_bulk(w, a, n, out, nvals, vals);
    return TECS_OK;
}

void tecs__touch_all(tecs_world_t *w, tecs_comp_t c)
{
    if (tecs__comp_is_sparse(w, c)) {
        if (w->comp.comps[c].set)
            w->comp.comps[c].set->changed = w->arch.tick;
        return;
    }
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        tecs_archetype_t *a = w->arch.archs[i];
        int32_t col = tecs__arch_col(a, c);
        for (uint32_t row = 0; col >= 0 && row < (uint32_t)a->count; row += w->arch.rows) {
            uint32_t n = (uint32_t)a->count - row;
            tecs__arch_touch_rows(&w->arch, a, col, row, n < w->arch.rows ? n : w->arch.rows);
        }
    }
}

tecs_err_t tecs__written(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *p)
{
    tecs_err_t err = TECS_OK;
    if (!tecs__in_worker(w))
        tecs__touch(w, e, c);
    if (w->comp.comps[c].veto)
        err = tecs__veto(w, TECS__EV_SET | TECS__EV_WRITTEN, e, c, p, 1);
    if (tecs__wants_set(&w->comp.comps[c]))
        tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    return err;
}

/* ---- clones -----------------------------------------------------------
**
** A clone plan (store.h) copies m sources n times each: each copy is a
** birth into its source's plan archetype `to`, each of to's columns
** copied from the source's row (copy hook, else memcpy), its disabled
** bits set as the source's, its sparse values copied too; the listeners
** that keep state of their own beside the entity (the relation add-on's
** pairs) copy it through the bus's on_clone. to may be the source's own
** archetype (tecs_clone) or one with fewer columns and other tags (an
** instance: no Prefab tag, its own level), so columns are matched by
** component. Everything is reserved first, for all m * n copies at once:
** the record slots, the rows of each archetype, the sparse sets' room for
** the slots the copies will take, the vetoes (asked about n copies of
** each source's values) and the listeners' room. Then the commit, which
** cannot fail: the births source by source with their events, then each
** copy's sparse values and pairs, so a pair between two copies finds both
** born.
**
**   out  [ src 0: copy 0 .. n-1 | src 1: copy 0 .. n-1 | ... ]
*/

/* Ask the vetoes about n copies of c's value at p (NULL: a tag). */
static tecs_err_t veto_copies(tecs_world_t *w, tecs_comp_t c, const void *p, int32_t n)
{
    size_t size = w->comp.comps[c].size;
    if (p == NULL || n == 1 || size == 0)
        return tecs__veto(w, TECS__EV_ADD, 0, c, p, n);
    size_t bytes = tecs__bytes((size_t)n, size);
    char *buf = tecs__alloc(w, bytes);
    if (buf == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory cloning " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    for (int32_t k = 0; k < n; k++)
        memcpy(buf + (size_t)k * size, p, size);
    tecs_err_t err = tecs__veto(w, TECS__EV_ADD, 0, c, buf, n);
    tecs__free(w, buf, bytes);
    return err;
}

/* The archetype and row of plan source i. */
static tecs_archetype_t *plan_from(tecs_world_t *w, const tecs__clone_plan *p, int32_t i,
                                   uint32_t *row)
{
    const tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(p->srcs[i].src)];
    *row = r->row;
    return tecs__rec_arch(w, r);
}

/* The archetype copies of plan source i are born into. */
static tecs_archetype_t *plan_to(tecs_world_t *w, const tecs__clone_plan *p, int32_t i)
{
    uint32_t row;
    return p->srcs[i].to ? p->srcs[i].to : plan_from(w, p, i, &row);
}

/* Rows for every copy, each archetype's counted over the plan. */
static tecs_err_t plan_rows(tecs_world_t *w, const tecs__clone_plan *p)
{
    for (int32_t i = 0; i < p->m; i++) {
        tecs_archetype_t *b = plan_to(w, p, i);
        int64_t k = 0;
        for (int32_t j = 0; j < p->m && k >= 0; j++)
            if (plan_to(w, p, j) == b)
                k = j < i ? -1 : k + p->n;      /* counted at its first source */
        if (k > INT32_MAX)
            return tecs__err(w, TECS_ELIMIT, "too many rows in one clone");
        tecs_err_t err = k > 0 ? tecs__arch_reserve_rows(w, b, (int32_t)k) : TECS_OK;
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Ask the vetoes about the n copies of plan source i's values. */
static tecs_err_t plan_vetoes(tecs_world_t *w, const tecs__clone_plan *p, int32_t i)
{
    tecs_archetype_t *b = plan_to(w, p, i);
    tecs_err_t err = TECS_OK;
    w->store.cloning = p->srcs[i].src;
    for (int32_t k = 0; any_vetoing(w, b) && k < b->ncomps && !err; k++) {
        tecs_comp_t c = b->comps[k];
        uint32_t srow;
        tecs_archetype_t *a = plan_from(w, p, i, &srow);
        int32_t col = tecs__arch_col(a, c);
        if (w->comp.comps[c].veto)
            err = veto_copies(w, c, col >= 0 ? tecs__col_ptr(a, w, col, srow) : NULL, p->n);
    }
    w->store.cloning = 0;
    return err;
}

/* The sparse sets' room for every copy: each set grows by all the copies
** of the sources that have it, and has pages at their slots. */
static tecs_err_t plan_sparse(tecs_world_t *w, const tecs__clone_plan *p)
{
    for (int32_t si = 0; si < w->sparse.nsets; si++) {
        tecs__sparse *s = w->sparse.sets[si];
        tecs_comp_t c = s->comp;
        int32_t total = 0;
        tecs_err_t err = TECS_OK;
        for (int32_t i = 0; s->count && i < p->m && !err; i++) {
            const void *v = tecs__sparse_get(w, c, TECS_ENTITY_INDEX(p->srcs[i].src));
            if (v == NULL)
                continue;
            if (total > INT32_MAX - p->n)
                return tecs__err(w, TECS_ELIMIT, "too many values in one clone");
            total += p->n;
            if (w->comp.comps[c].veto)
                err = veto_copies(w, c, s->size ? v : NULL, p->n);
        }
        tecs__ei_walk wk = tecs__ei_ahead(w);
        for (int32_t i = 0; total && i < p->m && !err; i++) {
            bool has = tecs__sparse_get(w, c, TECS_ENTITY_INDEX(p->srcs[i].src)) != NULL;
            for (int32_t g = 0; g < p->n && !err; g++) {
                uint32_t slot = tecs__clone_slot(w, p, i, g, &wk);
                if (has)
                    err = tecs__sparse_reserve_n(w, c, slot, total);
            }
        }
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Everything the plan's copies need, reserved. */
static tecs_err_t plan_reserve(tecs_world_t *w, const tecs__clone_plan *p)
{
    int64_t fresh = (int64_t)p->m * p->n - (p->into ? p->n : 0);
    if (fresh > INT32_MAX)
        return tecs__err(w, TECS_ELIMIT, "too many entities in one clone");
    tecs_err_t err;
    if ((fresh > 0 && (err = tecs__ei_reserve(w, (int32_t)fresh))) || (err = plan_rows(w, p)))
        return err;
    for (int32_t i = 0; i < p->m; i++)
        if ((err = plan_vetoes(w, p, i)))
            return err;
    if (w->sparse.nfilled && (err = plan_sparse(w, p)))
        return err;
    w->store.plan_copies = false;
    if (w->bus.watch_clones && (err = tecs__emit_clone(w, TECS__CLONE_RESERVE, 0, 0, 0)))
        return err;
    return TECS_OK;
}

/* The clone e takes src's sparse values (at slot), each with its events. */
static void clone_sparse(tecs_world_t *w, uint32_t slot, tecs_entity_t e)
{
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        tecs__sparse *s = w->sparse.sets[i];
        tecs_comp_t c = s->comp;
        const void *p = s->count ? tecs__sparse_get(w, c, slot) : NULL;
        if (p == NULL)
            continue;
        void *q = tecs__sparse_insert(w, c, e);
        if (s->size)
            tecs__construct_one(w, &w->comp.comps[c], q, p);
        if (watched(w, c)) {
            tecs__emit_comp(w, TECS__EV_ADD, e, c, s->size ? q : NULL);
            if (s->size)
                tecs__emit_comp(w, TECS__EV_SET, e, c, q);
        }
    }
}

/* The id copy g of plan source i is born as: a pending id of the plan, one
** taken before the births (m > 1), or a slot taken now. */
static tecs_entity_t plan_id(tecs_world_t *w, const tecs__clone_plan *p, int32_t i, int32_t g)
{
    if (i == 0 && p->into) {
        w->ei.npending--;
        return p->into[g];
    }
    if (p->m > 1) {
        w->ei.npending--;
        return p->out[(int64_t)i * p->n + g];
    }
    return tecs__ei_take(w);
}

/* Construct n values of column col of b from rows row on, each a copy of
** the value at src: a plain value written once a chunk run and doubled
** by memcpy, a hooked one through its hooks. */
static void fill_run(tecs_world_t *w, tecs_archetype_t *b, int32_t col, uint32_t row, int32_t n,
                     const char *src)
{
    const tecs__comp *ci = tecs__col_info(w, b, col);
    size_t size = ci->size;
    while (n > 0) {
        int32_t room = (int32_t)(w->arch.rows - (row & w->arch.mask));
        int32_t k = n < room ? n : room;
        char *dst = tecs__col_ptr(b, w, col, row);
        if (ci->ctor || ci->copy) {
            for (int32_t j = 0; j < k; j++)
                tecs__construct_one(w, ci, dst + (size_t)j * size, src);
        } else {
            size_t done = size, all = (size_t)k * size;
            memcpy(dst, src, size);
            for (; done < all; done *= 2)
                memcpy(dst + done, dst, done * 2 <= all ? done : all - done);
        }
        row += (uint32_t)k;
        n -= k;
    }
}

/* The births of plan source i's n copies, everything reserved: rows,
** values, bits, the listeners' links, the events. @return the first row. */
static uint32_t plan_births(tecs_world_t *w, const tecs__clone_plan *p, int32_t i)
{
    int32_t n = p->n;
    tecs_entity_t src = p->srcs[i].src;
    tecs_archetype_t *b = plan_to(w, p, i);
    uint32_t row0 = (uint32_t)b->count, srow;
    for (int32_t g = 0; g < n;) {
        uint32_t row = row0 + (uint32_t)g;
        int32_t room = (int32_t)(w->arch.rows - (row & w->arch.mask));
        int32_t k = n - g < room ? n - g : room;
        tecs_entity_t *ents = tecs__ent_ptr(b, w, row);
        for (int32_t j = 0; j < k; j++, g++) {
            tecs_entity_t e = plan_id(w, p, i, g);
            w->ei.recs[TECS_ENTITY_INDEX(e)].arch = b->id;
            w->ei.recs[TECS_ENTITY_INDEX(e)].row = row + (uint32_t)j;
            ents[j] = e;
            if (p->out)
                p->out[(int64_t)i * n + g] = e;
        }
    }
    /* Then the values: a copy hook may take slots (its births queue), so
    ** the copies' own are taken first. src's row stays where it is: hooks
    ** queue their changes. */
    tecs_archetype_t *a = plan_from(w, p, i, &srow);
    for (int32_t c = 0; c < b->ncols; c++)
        fill_run(w, b, c, row0, n,
                 tecs__col_ptr(a, w, a == b ? c : tecs__arch_col(a, b->col_comp[c]), srow));
    tecs__arch_entered_n(&w->arch, b, row0, (uint32_t)n);
    b->count += n;
    w->ei.nalive += n;
    for (int32_t j = 0; j < b->ntog; j++) {
        int32_t ja = tecs__arch_tog(a, b->tog_comp[j]);
        if (ja >= 0 && tecs__arch_bit(a, w, ja, srow))
            for (int32_t g = 0; g < n; g++)
                tecs__arch_bit_put(w, b, j, row0 + (uint32_t)g, true);
    }
    w->store.plan_at = i;
    for (int32_t g = 0; g < n && w->store.plan_copies; g++)
        tecs__emit_clone(w, TECS__CLONE_LINK, src, *tecs__ent_ptr(b, w, row0 + (uint32_t)g), g);
    if (w->bus.watch_moves || w->bus.watch_comps) {
        tecs_value_t vals[TECS_MAX_ARCH_COMPONENTS];
        for (int32_t c = 0; c < b->ncols; c++)
            vals[c] = (tecs_value_t){ .comp = b->col_comp[c] };
        announce_births(w, b, row0, n, b->ncols, vals);
    }
    return row0;
}

/* What a birth cannot carry, as adds after it, for plan source i's copies
** (at row0 of its archetype when the plan has one source, else in out):
** sparse values and the listeners' pairs. No hook or callback could
** remove a row meanwhile (their changes queue), so the rows are where
** they were. */
static void plan_after(tecs_world_t *w, const tecs__clone_plan *p, int32_t i, uint32_t row0)
{
    tecs_archetype_t *b = plan_to(w, p, i);
    uint32_t slot = TECS_ENTITY_INDEX(p->srcs[i].src);
    w->store.plan_at = i;
    for (int32_t g = 0; g < p->n && (w->sparse.nfilled || w->store.plan_copies); g++) {
        tecs_entity_t e = p->m > 1 ? p->out[(int64_t)i * p->n + g]
                                   : *tecs__ent_ptr(b, w, row0 + (uint32_t)g);
        if (w->sparse.nfilled)
            clone_sparse(w, slot, e);
        if (w->store.plan_copies)
            tecs__emit_clone(w, TECS__CLONE_PAIRS, p->srcs[i].src, e, g);
    }
}

tecs_err_t tecs__clone_run(tecs_world_t *w, const tecs__clone_plan *p)
{
    for (int32_t i = 0; i < p->m; i++)
        if (tecs__ei_alive(w, p->srcs[i].src) == NULL)
            return tecs__err_dead(w, p->srcs[i].src);
    const tecs__clone_plan *was = w->store.plan;
    int32_t was_at = w->store.plan_at;
    bool was_copies = w->store.plan_copies;
    w->store.plan = p;
    tecs_err_t err = plan_reserve(w, p);
    if (err == TECS_OK) {
        /* The copies' ids first, pending, so that callbacks take others. */
        for (int32_t i = p->into ? 1 : 0; p->m > 1 && i < p->m; i++)
            for (int32_t g = 0; g < p->n; g++) {
                p->out[(int64_t)i * p->n + g] = tecs__ei_take(w);
                w->ei.npending++;
            }
        uint32_t row0 = 0;
        for (int32_t i = 0; i < p->m; i++)
            row0 = plan_births(w, p, i);
        for (int32_t i = 0; i < p->m; i++)
            plan_after(w, p, i, row0);
    }
    w->store.plan = was;
    w->store.plan_at = was_at;
    w->store.plan_copies = was_copies;
    return err;
}

tecs_err_t tecs__clone_now(tecs_world_t *w, tecs_entity_t src, int32_t n, tecs_entity_t *out,
                           tecs_entity_t into)
{
    tecs__clone_src one = { src, NULL };
    return tecs__clone_run(w, &(tecs__clone_plan){ .srcs = &one, .m = 1, .n = n,
                                                   .into = into ? &into : NULL, .out = out });
}
