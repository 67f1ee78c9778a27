/*
** entity.c — creating, destroying and changing entities.
**
** Every structural change is the same three steps:
**
**     1. check:    the arguments, then reserve everything that could fail
**                  (record slots, target archetype, rows in its chunks),
**                  then ask checking listeners (a unique index may refuse
**                  a key; indexes reserve room) about the new values;
**     2. announce: REMOVE events, while the old value still exists;
**     3. commit:   move / construct / destroy values, fix the records,
**                  then ADD and SET events for what now exists.
**
** Step 3 cannot fail, so a failed call has changed nothing. A value written
** before anyone could ask (tecs_modified, a query's write term) is checked
** after the fact: a refusing listener restores its field (TECS__EV_WRITTEN). Listeners (field
** indexes, observers) and lifecycle hooks run with the world deferred: a
** structural change they make is queued, and applied once the outer call is
** done (tecs__settle). A queued birth may grow the records, so no record pointer
** is kept across a hook or an event: it is fetched again by index.
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
** component: an array load once the edge is known.
**
** While the world is deferred (an iteration is open), the public functions
** below hand the change to the command buffer instead (command.c).
*/
#include "private.h"

/* ---- listeners and events -------------------------------------------- */

tecs_err_t tecs__listen(tecs_world_t *w, const tecs__listener *l)
{
    if (tecs__grow(w, (void **)&w->listeners, &w->cap_listeners, w->nlisteners + 1,
                   sizeof *w->listeners))
        return TECS_ENOMEM;
    w->listeners[w->nlisteners++] = *l;
    if (l->on_move)
        w->watch_moves = true;
    if (l->on_comp)
        w->watch_comps = true;
    if (l->on_check)
        w->watch_checks = true;
    return TECS_OK;
}

void tecs__emit_comp(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c, const void *ptr)
{
    w->defer_depth++;
    for (int32_t i = 0; i < w->nlisteners; i++)
        if (w->listeners[i].on_comp)
            w->listeners[i].on_comp(w, w->listeners[i].ctx, ev, e, c, ptr);
    w->defer_depth--;
}

tecs_err_t tecs__check_comp(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c,
                            const void *vals, int32_t n)
{
    tecs_err_t err = TECS_OK;
    w->defer_depth++;
    for (int32_t i = 0; i < w->nlisteners && !err; i++)
        if (w->listeners[i].on_check)
            err = w->listeners[i].on_check(w, w->listeners[i].ctx, ev, e, c, vals, n);
    w->defer_depth--;
    return err;
}

/* Ask about n births into a, values from vals (NULL: default). */
static tecs_err_t check_births(tecs_world_t *w, tecs_archetype_t *a, int32_t n,
                               int32_t nvals, const tecs_value_t *vals)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (TECS__LIKELY(w->comps[c].check == 0))
            continue;
        const void *src = NULL;
        for (int32_t v = 0; v < nvals; v++)
            if (vals[v].comp == c)
                src = vals[v].ptr;
        tecs_err_t err = tecs__check_comp(w, TECS__EV_ADD, 0, c, src, n);
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Components of a that some listener checks. */
static inline bool any_checked(const tecs_world_t *w, const tecs_archetype_t *a)
{
    if (TECS__LIKELY(!w->watch_checks))
        return false;
    for (int32_t i = 0; i < a->ncomps; i++)
        if (w->comps[a->comps[i]].check)
            return true;
    return false;
}

static void emit_move(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *from,
                      tecs_archetype_t *to)
{
    w->defer_depth++;
    for (int32_t i = 0; i < w->nlisteners; i++)
        if (w->listeners[i].on_move)
            w->listeners[i].on_move(w, w->listeners[i].ctx, e, from, to);
    w->defer_depth--;
}

static inline bool watched(const tecs_world_t *w, tecs_comp_t c)
{
    return w->comps[c].watch != 0;
}

/* Events for every component of the entity at row (births, deaths). */
static void emit_all(tecs_world_t *w, int ev, tecs_archetype_t *a, uint32_t row, tecs_entity_t e)
{
    if (!w->watch_comps)
        return;
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (!watched(w, c))
            continue;
        int32_t col = tecs__arch_col(a, c);
        tecs__emit_comp(w, ev, e, c, col >= 0 ? tecs__col_ptr(a, w, col, row) : NULL);
    }
}

/* REMOVE events for e losing c (0: every component, a destroy), while its
** row still holds the values: w->leaving names it meanwhile, so that an
** index made or rebuilt by a callback of these events does not take what
** is leaving (the events it would need have gone by). */
static TECS__NOINLINE void emit_leaving(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                        tecs_archetype_t *a, uint32_t row, const void *p)
{
    tecs_entity_t was = w->leaving;
    tecs_comp_t was_comp = w->leaving_comp;
    w->leaving = e;
    w->leaving_comp = c;
    if (c)
        tecs__emit_comp(w, TECS__EV_REMOVE, e, c, p);
    else
        emit_all(w, TECS__EV_REMOVE, a, row, e);
    w->leaving = was;
    w->leaving_comp = was_comp;
}

/* The events of e's death (REMOVE of each component, then the move out,
** LEAVE), while its row still holds it: w->leaving names it throughout, so
** that an index made by a callback of either does not take it. */
static TECS__NOINLINE void emit_dying(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                                      uint32_t row)
{
    tecs_entity_t was = w->leaving;
    tecs_comp_t was_comp = w->leaving_comp;
    w->leaving = e;
    w->leaving_comp = 0;
    if (w->watch_comps)
        emit_leaving(w, e, 0, a, row, NULL);
    if (w->watch_moves)
        emit_move(w, e, a, NULL);
    w->leaving = was;
    w->leaving_comp = was_comp;
}

/* ---- checks ---------------------------------------------------------- */

tecs_err_t tecs__check_arch(tecs_world_t *w, const tecs_archetype_t *a)
{
    if (a == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL archetype");
    if (a->world != w)
        return tecs__err(w, TECS_EWORLD, "archetype of another world");
    return TECS_OK;
}

static tecs_err_t err_dead(tecs_world_t *w, tecs_entity_t e)
{
    return tecs__err(w, TECS_EDEAD, TECS__ENT_FMT " is not alive", TECS__ENT(e));
}

static tecs_err_t err_nocomp(tecs_world_t *w, tecs_comp_t c)
{
    return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", c);
}

tecs_err_t tecs__check_vals(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                            const tecs_value_t *vals)
{
    if (nvals < 0)
        return tecs__err(w, TECS_EINVAL, "value list: negative count %d", nvals);
    if (nvals > 0 && vals == NULL)
        return tecs__err(w, TECS_EINVAL, "value list: NULL for %d values", nvals);
    for (int32_t i = 0; i < nvals; i++) {
        tecs_comp_t c = vals[i].comp;
        if (tecs__comp_get(w, c) == NULL)
            return err_nocomp(w, c);
        int32_t col = tecs__arch_col(a, c);
        if (col == TECS__COL_ABSENT)
            return tecs__err(w, TECS_ENOCOMP, TECS__COMP_FMT " is not in the archetype",
                             TECS__COMP(w, c));
        if (col >= 0 && vals[i].ptr == NULL)
            return tecs__err(w, TECS_EINVAL, "NULL value for " TECS__COMP_FMT,
                             TECS__COMP(w, c));
        for (int32_t j = 0; j < i; j++)
            if (vals[j].comp == c)
                return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is given twice",
                                 TECS__COMP(w, c));
    }
    return TECS_OK;
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

/* Construct one value at to, copied from value if given. */
static inline void construct_one(tecs_world_t *w, const tecs__comp *ci, void *to,
                                 const void *value)
{
    if (value == NULL) {
        if (ci->ctor)
            tecs__comp_ctor(w, ci, to, 1);
        else
            memset(to, 0, ci->size);
    } else if (!ci->ctor && !ci->copy) {
        tecs__copy_value(to, value, ci->size);
    } else {
        tecs__comp_ctor(w, ci, to, 1);
        tecs__comp_copy(w, ci, to, value, 1);
    }
}

/* Construct rows [row, row + n) of column col, copying from src if given. */
static void construct_run(tecs_world_t *w, tecs_archetype_t *a, int32_t col, uint32_t row,
                          int32_t n, const char *src)
{
    const tecs__comp *ci = tecs__col_info(w, a, col);
    while (n > 0) {
        int32_t room = (int32_t)(w->rows - (row & w->mask));
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
    bool any = w->watch_moves;
    for (int32_t i = 0; i < a->ncomps && !any; i++)
        any = watched(w, a->comps[i]);
    if (!any)
        return;
    for (int32_t k = 0; k < n; k++) {
        uint32_t r = row + (uint32_t)k;
        tecs_entity_t e = *tecs__ent_ptr(a, w, r);
        if (w->watch_moves)
            emit_move(w, e, NULL, a);
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
    if (TECS__UNLIKELY(w->watch_moves || w->watch_comps))
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
        int32_t room = (int32_t)(w->rows - (row & w->mask));
        int32_t k = n - done < room ? n - done : room;
        tecs_entity_t *ents = tecs__ent_ptr(a, w, row);
        for (int32_t i = 0; i < k; i++) {
            tecs_entity_t e = tecs__ei_take(w);
            tecs__record *r = &w->recs[TECS_ENTITY_INDEX(e)];
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
    a->count += n;
    w->nalive += n;
    emit_births(w, a, row0, n, nvals, vals);
}

/* commit_births for one entity, without the chunk-run bookkeeping. */
static void commit_birth(tecs_world_t *w, tecs_archetype_t *a, tecs_entity_t e, int32_t nvals,
                         const tecs_value_t *vals)
{
    uint32_t row = (uint32_t)a->count++;
    char *const *chunk = tecs__chunk_of(a, w, row);
    size_t i = row & w->mask;
    tecs__chunk_ents(chunk)[i] = e;
    tecs__record *r = &w->recs[TECS_ENTITY_INDEX(e)];
    r->arch = a->id;
    r->row = row;
    for (int32_t c = 0; c < a->ncols; c++) {
        const void *src = NULL;
        for (int32_t v = 0; v < nvals; v++)
            if (vals[v].comp == a->col_comp[c])
                src = vals[v].ptr;
        construct_one(w, tecs__col_info(w, a, c), tecs__chunk_col(chunk, c) + i * a->col_size[c],
                      src);
    }
    w->npending--;
    w->nalive++;
    emit_births(w, a, row, 1, nvals, vals);
}

/* Give a pending entity its row; run the initializer, then construct what it
** left untouched. Rows must be reserved. */
/* Ask about the values an initializer built at row. */
static tecs_err_t check_built(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        int32_t col = tecs__arch_col(a, c);
        if (w->comps[c].check == 0 || col < 0)
            continue;
        tecs_err_t err = tecs__check_comp(w, TECS__EV_ADD, 0, c, tecs__col_ptr(a, w, col, row), 1);
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
    a->count++;
    for (int32_t c = 0; c < a->ncols; c++)
        if (!(init.done >> c & 1) && tecs__col_info(w, a, c)->ctor)
            tecs__comp_ctor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, init.row), 1);
    if (TECS__UNLIKELY(any_checked(w, a))) {
        tecs_err_t err = check_built(w, a, init.row);
        if (err) {
            unbuild(w, a, init.row);
            return err;
        }
    }
    w->recs[TECS_ENTITY_INDEX(e)].row = init.row;
    w->recs[TECS_ENTITY_INDEX(e)].arch = a->id;
    w->npending--;
    w->nalive++;
    emit_births(w, a, init.row, 1, 0, NULL);
    return TECS_OK;
}

tecs_err_t tecs__birth(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                       int32_t nvals, const tecs_value_t *vals, tecs_init_fn fn, void *ctx)
{
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL || r->arch != TECS__ARCH_PENDING)
        return err_dead(w, e);
    tecs_err_t err = tecs__arch_reserve_rows(w, a, 1);
    if (err)
        return err;
    if (fn)
        err = commit_birth_with(w, a, e, fn, ctx);
    else if (TECS__UNLIKELY(any_checked(w, a)) && (err = check_births(w, a, 1, nvals, vals)))
        ;
    else
        commit_birth(w, a, e, nvals, vals);
    if (err && err != TECS_ENOMEM) {
        /* Refused for good (a unique key taken): the birth is cancelled. */
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->npending--;
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
    const size_t i0 = row & w->mask, room = w->rows - i0;
    tecs_entity_t *const ents = tecs__chunk_ents(chunk) + i0;
    char *const dst = col >= 0 ? tecs__chunk_col(chunk, col) + i0 * vsize : NULL;
    const uint32_t id = a->id;
    tecs__record *const recs = w->recs;   /* locals: the stores below may alias */
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
    a->count += placed;
    w->npending -= placed;
    w->nalive += placed;
}

/* Create one entity now: reserve, take a slot, commit. */
static tecs_entity_t new_now(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                             const tecs_value_t *vals, tecs_init_fn fn, void *ctx)
{
    if (tecs__ei_reserve1(w) || tecs__arch_reserve_rows(w, a, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    w->npending++;
    if (TECS__UNLIKELY(tecs__birth(w, e, a, nvals, vals, fn, ctx))) {
        if (tecs__ei_known(w, e)) {
            tecs__ei_release(w, TECS_ENTITY_INDEX(e));
            w->npending--;
        }
        return 0;
    }
    tecs__settle(w);
    return e;
}

/* Append e (a slot just taken) to the empty archetype root, rows reserved:
** it has no columns, so a birth there is a row append. */
static TECS__INLINE void root_append(tecs_world_t *w, tecs_archetype_t *root, tecs_entity_t e)
{
    uint32_t row = (uint32_t)root->count++;
    *tecs__ent_ptr(root, w, row) = e;
    tecs__record *r = &w->recs[TECS_ENTITY_INDEX(e)];
    r->arch = root->id;
    r->row = row;
    w->nalive++;
}

/* tecs_new when it must grow, fail or announce. */
static TECS__NOINLINE tecs_entity_t new_slow(tecs_world_t *w)
{
    tecs_archetype_t *root = w->archs[0];
    if (tecs__ei_reserve1(w) || tecs__arch_reserve_rows(w, root, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    root_append(w, root, e);
    if (TECS__UNLIKELY(w->watch_moves)) {
        emit_move(w, e, NULL, root);
        tecs__settle(w);
    }
    return e;
}

tecs_entity_t tecs_new(tecs_world_t *w)
{
    if (w == NULL || tecs__enter(w))
        return 0;
    tecs_archetype_t *root = w->archs[0];
    if (w->defer_depth > 0)
        return tecs__defer_new1(w, root);
    /* The common case calls nothing: a free or reserved slot, a free row. */
    if (TECS__LIKELY(!w->watch_moves &&
                     w->nalive + w->npending < w->max_entities &&
                     (w->free_head != TECS__NO_SLOT || w->nrecs < w->cap_recs) &&
                     tecs__arch_has_rows(w, root, 1))) {
        tecs_entity_t e = tecs__ei_take(w);
        root_append(w, root, e);
        return e;
    }
    return new_slow(w);
}

tecs_entity_t tecs_new_in(tecs_world_t *w, tecs_archetype_t *a)
{
    if (w == NULL || tecs__enter(w) || tecs__check_arch(w, a))
        return 0;
    if (w->defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, a, 1, &e, 0, NULL, false, NULL, NULL) ? 0 : e;
    }
    return new_now(w, a, 0, NULL, NULL, NULL);
}

tecs_entity_t tecs_new_with(tecs_world_t *w, tecs_archetype_t *a, tecs_init_fn fn, void *ctx)
{
    if (w == NULL || tecs__enter(w) || tecs__check_arch(w, a))
        return 0;
    if (fn == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_new_with: NULL initializer");
        return 0;
    }
    if (w->defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, a, 1, &e, 0, NULL, false, fn, ctx) ? 0 : e;
    }
    return new_now(w, a, 0, NULL, fn, ctx);
}

tecs_err_t tecs_new_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                         int32_t nvals, const tecs_value_t *vals)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err || (err = tecs__check_arch(w, a)))
        return err;
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "tecs_new_bulk: negative count %d", n);
    if ((err = tecs__check_vals(w, a, nvals, vals)) != TECS_OK)
        return err;
    if (w->defer_depth > 0)
        return tecs__defer_new(w, a, n, out, nvals, vals, true, NULL, NULL);
    if (TECS__UNLIKELY(any_checked(w, a)) && (err = check_births(w, a, n, nvals, vals)))
        return err;
    if ((err = tecs__ei_reserve(w, n)) || (err = tecs__arch_reserve_rows(w, a, n)))
        return err;
    commit_bulk(w, a, n, out, nvals, vals);
    tecs__settle(w);
    return TECS_OK;
}

/* ---- moves ----------------------------------------------------------- */

/* Move the entity of record r from a to b, which is a plus (adding) or minus
** one component whose column in the larger archetype is k (COL_TAG for a
** tag). Columns follow component-id order, so column j of b is column j of a
** before k and j -/+ 1 after it: no lookup per column. The added column is
** constructed (from value if given); a removed one must be destroyed
** already. Rows must be reserved in b. With hooks, each value moves through
** its hook; plain values are copied. */
static TECS__INLINE void move_row_with(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                                       tecs_archetype_t *b, int32_t k, bool adding,
                                       const void *value, bool plain)
{
    uint32_t src = r->row, dst = (uint32_t)b->count++;
    /* The two chunks' column pointers ([0] the ids, [1 + j] column j). */
    char *const *sc = tecs__chunk_of(a, w, src), *const *dc = tecs__chunk_of(b, w, dst);
    const size_t si = src & w->mask, di = dst & w->mask;
    tecs__chunk_ents(dc)[di] = tecs__chunk_ents(sc)[si];
    const uint32_t *size = b->col_size;
    const int32_t n = b->ncols, same = k < 0 ? n : k;   /* columns below k line up */
    const int32_t shift = adding ? -1 : 1;              /* column j of b is j + shift of a */
#define TO(j)   (dc[1 + (j)] + di * size[j])
#define FROM(j, sj) (sc[1 + (sj)] + si * size[j])
    if (plain) {
        for (int32_t j = 0; j < same; j++)
            tecs__copy_value(TO(j), FROM(j, j), size[j]);
        if (k >= 0 && adding) {
            if (value)
                tecs__copy_value(TO(k), value, size[k]);
            else
                tecs__zero_value(TO(k), size[k]);
        }
        for (int32_t j = same + adding; j < n; j++)
            tecs__copy_value(TO(j), FROM(j, j + shift), size[j]);
    } else {
        for (int32_t j = 0; j < same; j++)
            tecs__comp_move(w, tecs__col_info(w, b, j), TO(j), FROM(j, j), 1);
        if (k >= 0 && adding)
            construct_one(w, tecs__col_info(w, b, k), TO(k), value);
        for (int32_t j = same + adding; j < n; j++)
            tecs__comp_move(w, tecs__col_info(w, b, j), TO(j), FROM(j, j + shift), 1);
    }
#undef TO
#undef FROM
    if (!plain)                 /* a hook's queued birth may move the records */
        r = &w->recs[TECS_ENTITY_INDEX(tecs__chunk_ents(dc)[di])];
    r->arch = b->id | (r->arch & ~TECS__ARCH_MASK);
    r->row = dst;
    /* Last: the hole fill may run move hooks of a, and r is done with. */
    tecs__arch_remove_row(w, a, src);
}

/* move_row for archetypes with hooks, out of the plain path's way. */
static TECS__NOINLINE void move_row_hooked(tecs_world_t *w, tecs__record *r,
                                           tecs_archetype_t *a, tecs_archetype_t *b,
                                           int32_t k, bool adding, const void *value)
{
    move_row_with(w, r, a, b, k, adding, value, false);
}

static TECS__INLINE void move_row(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                                  tecs_archetype_t *b, int32_t k, bool adding,
                                  const void *value)
{
    if (TECS__LIKELY(b->plain))
        move_row_with(w, r, a, b, k, adding, value, true);
    else
        move_row_hooked(w, r, a, b, k, adding, value);
}

/* ---- hops -------------------------------------------------------------
**
** Finding where a move goes is a walk: record -> archetype -> its edge for
** c -> the target -> the target's chunk. Each step is a load that waits for
** the one before, and in a burst of creations or moves those waits, not the
** instructions, were most of the time. So each component remembers its last
** plain add and remove (from, to, the column of c): when the record names
** that from, both archetypes come from the component, loads that need
** nothing but c, and only the record's row is waited for. The world keeps
** one more, for tecs_destroy: the plain archetype it last freed a row of.
** When a hop does not match, the walk is the way. Archetypes live until the
** world ends, but for one dropped while still empty, whose hops are
** forgotten (tecs__comp_forget_arch). Lookups (tecs_get) gain nothing from
** a hop: a random lookup waits on memory, and the extra check only costs.
*/

/* h starts at the archetype of record r. */
static inline bool hop_at(const struct tecs__hop *h, const tecs__record *r)
{
    return h->key == (r->arch & TECS__ARCH_MASK) + 1;
}

static inline void hop_set(struct tecs__hop *h, tecs_archetype_t *from, tecs_archetype_t *to,
                           int32_t col)
{
    *h = (struct tecs__hop){ from->id + 1, col, from, to };
}

/* Adding c with b as the target is a plain row move that cannot fail:
** nobody to ask or tell, no hook to run, a row free in b. */
static inline bool quiet_add(const tecs_world_t *w, const tecs_archetype_t *b, tecs_comp_t c)
{
    const tecs__comp *ci = &w->comps[c];
    return b->plain && !w->watch_moves && (ci->check | ci->watch) == 0 &&
           tecs__arch_has_rows(w, b, 1);
}

/* Removing c from a plain archetype with b as the target is a plain row
** move that cannot fail: nobody to tell, a row free in b. */
static inline bool quiet_remove(const tecs_world_t *w, const tecs_archetype_t *b, tecs_comp_t c)
{
    return !w->watch_moves && w->comps[c].watch == 0 && tecs__arch_has_rows(w, b, 1);
}

/* Events after c was added to e (now in b). */
static TECS__NOINLINE void after_add(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                                     tecs_archetype_t *b, tecs_comp_t c, const void *value)
{
    if (w->watch_moves)
        emit_move(w, e, a, b);
    if (watched(w, c)) {
        int32_t col = tecs__arch_col(b, c);
        uint32_t row = w->recs[TECS_ENTITY_INDEX(e)].row;  /* records may have moved */
        const void *p = col >= 0 ? tecs__col_ptr(b, w, col, row) : NULL;
        tecs__emit_comp(w, TECS__EV_ADD, e, c, p);
        if (value && col >= 0)
            tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    }
}

/* The target of adding c to a, creating it if needed (slow path). */
static tecs_archetype_t *target_with(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c,
                                     tecs_entity_t e)
{
    if (tecs__comp_get(w, c) == NULL) {
        err_nocomp(w, c);
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
    if (w->narchs > narchs)
        tecs__arch_drop_last(w);
    return err;
}

/* Add c to the live entity e of record r, in archetype a. */
static TECS__INLINE tecs_err_t add_to(tecs_world_t *w, tecs_entity_t e, tecs__record *r,
                                      tecs_archetype_t *a, tecs_comp_t c, const void *value)
{
    if (TECS__LIKELY(c < (tecs_comp_t)w->cap_comps)) {
        const struct tecs__hop *h = &w->comps[c].add;
        if (TECS__LIKELY(hop_at(h, r)) && quiet_add(w, h->to, c)) {
            move_row_with(w, r, h->from, h->to, h->col, true, value, true);
            return TECS_OK;
        }
    }
    int32_t narchs = w->narchs;
    tecs_archetype_t *b = tecs__edge_add(w, a, c);
    if (TECS__LIKELY(b != NULL && quiet_add(w, b, c))) {
        int32_t k = tecs__arch_col(b, c);
        hop_set(&w->comps[c].add, a, b, k);
        move_row_with(w, r, a, b, k, true, value, true);
        return TECS_OK;
    }
    if (TECS__UNLIKELY(b == NULL) && (b = target_with(w, a, c, e)) == NULL)
        return w->err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (TECS__UNLIKELY(err))
        return undo_target(w, narchs, err);
    if (TECS__UNLIKELY(w->comps[c].check) &&
        (err = tecs__check_comp(w, TECS__EV_ADD, e, c, value, 1)))
        return undo_target(w, narchs, err);
    r = &w->recs[TECS_ENTITY_INDEX(e)];     /* the check may have moved them */
    move_row(w, r, a, b, tecs__arch_col(b, c), true, value);
    if (TECS__UNLIKELY(w->watch_moves || w->comps[c].watch))
        after_add(w, e, a, b, c, value);
    return TECS_OK;
}

/* tecs__add_now, inline for tecs_add. */
static TECS__INLINE tecs_err_t add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                       const void *value)
{
    tecs__record *r = tecs__alive_rec(w, e);
    if (TECS__UNLIKELY(r == NULL))
        return err_dead(w, e);
    return add_to(w, e, r, tecs__rec_arch(w, r), c, value);
}

tecs_err_t tecs__add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    return add_now(w, e, c, value);
}

/* tecs__remove_now, inline for tecs_remove. */
static TECS__INLINE tecs_err_t remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__alive_rec(w, e);
    if (TECS__UNLIKELY(r == NULL))
        return err_dead(w, e);
    if (TECS__LIKELY(c < (tecs_comp_t)w->cap_comps)) {
        const struct tecs__hop *h = &w->comps[c].rem;
        if (TECS__LIKELY(hop_at(h, r)) && quiet_remove(w, h->to, c)) {
            move_row_with(w, r, h->from, h->to, h->col, false, NULL, true);
            return TECS_OK;
        }
    }
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t k = tecs__arch_col(a, c);
    if (TECS__UNLIKELY(k == TECS__COL_ABSENT))
        return tecs__comp_get(w, c) ? tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not "
                                                "have " TECS__COMP_FMT, TECS__ENT(e),
                                                TECS__COMP(w, c))
                                    : err_nocomp(w, c);
    int32_t narchs = w->narchs;
    tecs_archetype_t *b = tecs__edge_rem(w, a, c);
    if (TECS__UNLIKELY(b == NULL) && (b = tecs__arch_without(w, a, c)) == NULL)
        return w->err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (TECS__UNLIKELY(err))
        return undo_target(w, narchs, err);
    if (TECS__LIKELY(a->plain && quiet_remove(w, b, c)))
        hop_set(&w->comps[c].rem, a, b, k);
    if (TECS__UNLIKELY(w->comps[c].watch || !a->plain)) {
        void *p = k >= 0 ? tecs__col_ptr(a, w, k, r->row) : NULL;
        if (w->comps[c].watch)
            emit_leaving(w, e, c, a, r->row, p);
        if (p && tecs__col_info(w, a, k)->dtor)
            tecs__comp_dtor(w, tecs__col_info(w, a, k), p, 1);
        r = &w->recs[TECS_ENTITY_INDEX(e)];  /* callbacks may have moved them */
    }
    move_row(w, r, a, b, k, false, NULL);
    if (TECS__UNLIKELY(w->watch_moves))
        emit_move(w, e, a, b);
    return TECS_OK;
}

tecs_err_t tecs__remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return remove_now(w, e, c);
}

tecs_err_t tecs__destroy_now(tecs_world_t *w, tecs_entity_t e)
{
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL)
        return err_dead(w, e);
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (r->arch == TECS__ARCH_PENDING) {
        tecs__ei_release(w, index);
        w->npending--;
        return TECS_OK;
    }
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    uint32_t row = r->row;
    if (w->watch_comps || w->watch_moves)
        emit_dying(w, e, a, row);
    if (!a->plain)
        for (int32_t c = 0; c < a->ncols; c++)
            tecs__comp_dtor(w, tecs__col_info(w, a, c), tecs__col_ptr(a, w, c, row), 1);
    tecs__arch_remove_row(w, a, row);
    tecs__ei_release(w, index);
    w->nalive--;
    return TECS_OK;
}

/* ---- public structural calls ----------------------------------------- */

/* tecs_destroy when it must queue, tell listeners, run hooks or fail. */
static TECS__NOINLINE tecs_err_t destroy_slow(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    tecs__record *r = tecs__alive_rec(w, e);
    if (TECS__UNLIKELY(r == NULL))
        r = tecs__ei_known(w, e);               /* a pending birth, or dead */
    if (r == NULL)
        return err_dead(w, e);
    /* While deferred a pending birth is queued too: it may be the entity an
    ** initializer is building right now, whose row already exists. */
    if (w->defer_depth > 0)
        return tecs__defer_op(w, TECS__OP_DESTROY, e, 0, NULL);
    err = tecs__destroy_now(w, e);
    tecs__settle(w);
    return err;
}

tecs_err_t tecs_destroy(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL)
        return TECS_EINVAL;
    if (tecs__enter(w))
        return w->err;
    /* The common case: a live entity of a plain archetype, nobody to tell,
    ** not deferred. Its row is dropped and its slot freed. */
    tecs__record *r;
    if (TECS__LIKELY(w != NULL && (r = tecs__alive_rec(w, e)) != NULL &&
                     w->defer_depth == 0 && w->closed == TECS__OPEN &&
                     !w->watch_comps && !w->watch_moves)) {
        w->err = TECS_OK;
        tecs_archetype_t *a = w->kill.from;
        if (TECS__UNLIKELY(!hop_at(&w->kill, r))) {
            a = tecs__rec_arch(w, r);
            if (!a->plain)
                return destroy_slow(w, e);
            hop_set(&w->kill, a, NULL, 0);
        }
        uint32_t row = r->row;
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->nalive--;
        tecs__arch_remove_row(w, a, row);
        return TECS_OK;
    }
    return destroy_slow(w, e);
}

/* Queue a change while deferred: a known component, an entity alive or
** pending a birth the flush will apply (a delayed birth waits for
** tecs_delayed_apply_new, so a change queued now would be dropped at the flush);
** conflicts found when it applies are dropped (command.c). c is registered. */
static tecs_err_t defer_known(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                              const void *value)
{
    tecs__record *r = tecs__known_rec(w, e);
    if (r == NULL || (r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED))
        return err_dead(w, e);
    tecs_err_t err = tecs__defer_op(w, op, e, c, value);
    /* A later tecs_set of c must queue too, not write a value that the
    ** queued remove would then drop. */
    if (err == TECS_OK && op == TECS__OP_REMOVE && r->arch < TECS__ARCH_RETIRED)
        r->arch |= TECS__REMOVE_QUEUED;
    return err;
}

/* defer_known for a component not checked yet. */
static tecs_err_t defer_change(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                               const void *value)
{
    if (tecs__comp_get(w, c) == NULL)
        return err_nocomp(w, c);
    return defer_known(w, op, e, c, value);
}

tecs_err_t tecs_add(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (w->defer_depth > 0)
        return defer_change(w, TECS__OP_ADD, e, c, NULL);
    err = add_now(w, e, c, NULL);
    tecs__settle(w);
    return err;
}

tecs_err_t tecs_remove(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (w->defer_depth > 0)
        return defer_change(w, TECS__OP_REMOVE, e, c, NULL);
    err = remove_now(w, e, c);
    tecs__settle(w);
    return err;
}

/* Write value over the existing value at p. */
static tecs_err_t overwrite(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, void *p,
                            const void *value)
{
    const tecs__comp *ci = &w->comps[c];
    if (TECS__UNLIKELY(value == NULL))
        return tecs__err(w, TECS_EINVAL, "tecs_set: NULL value for " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    if (TECS__UNLIKELY(ci->check)) {
        tecs_err_t err = tecs__check_comp(w, TECS__EV_SET, e, c, value, 1);
        if (err)
            return err;
    }
    if (ci->copy)
        tecs__comp_copy(w, ci, p, value, 1);
    else
        tecs__copy_value(p, value, ci->size);
    if (TECS__UNLIKELY(ci->watch) && tecs__wants_set(ci))
        tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    tecs__settle(w);
    return TECS_OK;
}

tecs_err_t tecs_set(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    tecs__record *r = tecs__alive_rec(w, e);
    /* A write queues while rows are in motion (a lifecycle hook runs), or
    ** while a queued remove of e would drop it. */
    if (TECS__LIKELY(r != NULL) && TECS__LIKELY(w->hook_depth == 0) &&
        !(TECS__UNLIKELY(r->arch & TECS__REMOVE_QUEUED) && w->defer_depth > 0)) {
        tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t col = tecs__arch_col(a, c);
        if (col >= 0)
            return overwrite(w, e, c, tecs__col_ptr(a, w, col, r->row), value);
        if (col == TECS__COL_TAG)
            return TECS_OK;
        /* A registered c is added with its value now. */
        if (TECS__LIKELY(w->defer_depth == 0 && value != NULL && tecs__comp_get(w, c) != NULL)) {
            err = add_to(w, e, r, a, c, value);
            tecs__settle(w);
            return err;
        }
    }
    const tecs__comp *ci = tecs__comp_get(w, c);
    if (ci == NULL)
        return err_nocomp(w, c);
    if (value == NULL && ci->size > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_set: NULL value for " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    if (w->defer_depth > 0)
        return defer_known(w, TECS__OP_SET, e, c, value);
    err = tecs__add_now(w, e, c, value);
    tecs__settle(w);
    return err;
}

/* ---- reads ----------------------------------------------------------- */

static TECS__NOINLINE void *get_failed(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        err_dead(w, e);
    else if (tecs__comp_get(w, c) == NULL)
        err_nocomp(w, c);
    else if (tecs__arch_col(tecs__rec_arch(w, r), c) == TECS__COL_TAG)
        tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag and has no value",
                  TECS__COMP(w, c));
    else
        tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not have " TECS__COMP_FMT,
                  TECS__ENT(e), TECS__COMP(w, c));
    return NULL;
}

/* The value of c of e, or NULL with the error set. */
static TECS__INLINE void *get_ptr(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (TECS__UNLIKELY(w == NULL) || tecs__enter_read(w))
        return NULL;
    const tecs__record *r = tecs__alive_rec(w, e);
    if (TECS__LIKELY(r != NULL)) {
        const tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t col = tecs__arch_col(a, c);
        if (TECS__LIKELY(col >= 0))
            return tecs__col_ptr(a, w, col, r->row);
    }
    return get_failed(w, e, c);
}

void *tecs_get_mut(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return get_ptr(w, e, c);
}

const void *tecs_get(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return get_ptr(w, e, c);
}

bool tecs_has(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return false;
    const tecs__record *r = tecs__ei_alive(w, e);
    return r && tecs__arch_col(tecs__rec_arch(w, r), c) != TECS__COL_ABSENT;
}

tecs_err_t tecs_modified(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    void *p = tecs_get_mut(w, e, c);
    if (p == NULL)
        return w->err;
    if (TECS__UNLIKELY(w->hook_depth > 0))      /* rows in motion: reported later */
        return tecs__defer_op(w, TECS__OP_MODIFIED, e, c, NULL);
    if (w->comps[c].check)
        err = tecs__check_comp(w, TECS__EV_SET | TECS__EV_WRITTEN, e, c, p, 1);
    if (tecs__wants_set(&w->comps[c])) {
        tecs__emit_comp(w, TECS__EV_SET, e, c, p);
        tecs__settle(w);
    }
    return err;
}

tecs_archetype_t *tecs_entity_archetype(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL || tecs__enter_read(w))
        return NULL;
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL) {
        err_dead(w, e);
        return NULL;
    }
    return tecs__rec_arch(w, r);
}
