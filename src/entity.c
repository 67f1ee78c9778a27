/*
** entity.c — creating, destroying and changing entities.
**
** Every structural change is the same three steps:
**
**     1. check:    the arguments, then reserve everything that could fail
**                  (record slots, target archetype, rows in its chunks);
**     2. announce: REMOVE events, while the old value still exists;
**     3. commit:   move / construct / destroy values, fix the records,
**                  then ADD and SET events for what now exists.
**
** Step 3 cannot fail, so a failed call has changed nothing. Listeners (field
** indexes, observers) run with the world deferred: a structural change they
** make is queued, and applied once the outer call is done.
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
    if (w->nlisteners == 0)
        return;
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (!watched(w, c))
            continue;
        int32_t col = tecs__arch_col(a, c);
        tecs__emit_comp(w, ev, e, c, col >= 0 ? tecs__col_ptr(a, w, col, row) : NULL);
    }
}

/* After a public call: apply what listeners queued, unless still deferred. */
static inline void settle(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->deferred.count > 0) && w->defer_depth == 0 && !w->flushing)
        tecs__flush(w);
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
    return tecs__err(w, TECS_EDEAD, "entity %u:%u is not alive", TECS_ENTITY_INDEX(e),
                     TECS_ENTITY_GENERATION(e));
}

static tecs_err_t err_nocomp(tecs_world_t *w, tecs_comp_t c)
{
    return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", c);
}

tecs_err_t tecs__check_vals(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                            const tecs_value_t *vals)
{
    if (nvals < 0 || (nvals > 0 && vals == NULL))
        return tecs__err(w, TECS_EINVAL, "bad value list");
    for (int32_t i = 0; i < nvals; i++) {
        tecs_comp_t c = vals[i].comp;
        if (tecs__comp_get(w, c) == NULL)
            return err_nocomp(w, c);
        int32_t col = tecs__arch_col(a, c);
        if (col == TECS__COL_ABSENT)
            return tecs__err(w, TECS_ENOCOMP, "component %u is not in the archetype", c);
        if (col >= 0 && vals[i].ptr == NULL)
            return tecs__err(w, TECS_EINVAL, "NULL value for component %u", c);
        for (int32_t j = 0; j < i; j++)
            if (vals[j].comp == c)
                return tecs__err(w, TECS_EINVAL, "component %u given twice", c);
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
    if (init == NULL)
        return NULL;
    int32_t col = tecs__arch_col(init->arch, c);
    if (col < 0) {
        tecs__err(init->world, col == TECS__COL_TAG ? TECS_EINVAL : TECS_ENOCOMP,
                  "component %u has no storage in this archetype", c);
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
    const tecs__comp *ci = a->col_info[col];
    while (n > 0) {
        int32_t room = (int32_t)(w->rows - (row & w->mask));
        int32_t k = n < room ? n : room;
        void *dst = tecs__col_ptr(a, w, col, row);
        if (src && a->plain) {
            memcpy(dst, src, (size_t)k * ci->size);
        } else {
            tecs__comp_ctor(ci, dst, k);
            if (src)
                tecs__comp_copy(ci, dst, src, k);
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

/* Announce n births at rows [row, row + n). */
static void emit_births(tecs_world_t *w, tecs_archetype_t *a, uint32_t row, int32_t n,
                        int32_t nvals, const tecs_value_t *vals)
{
    bool any = w->watch_moves;
    for (int32_t i = 0; i < a->ncomps && !any && w->nlisteners > 0; i++)
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

/* One birth into a plain archetype: each column copied from its value or
** zero-filled. */
static void birth_plain(tecs_world_t *w, tecs_archetype_t *a, uint32_t row, int32_t nvals,
                        const tecs_value_t *vals)
{
    char *chunk = tecs__chunk_of(a, w, row);
    uint32_t r = row & w->mask;
    for (int32_t c = 0; c < a->ncols; c++) {
        uint32_t size = a->col_size[c];
        char *dst = chunk + a->col_off[c] + (size_t)r * size;
        const void *src = NULL;
        for (int32_t i = 0; i < nvals && src == NULL; i++)
            if (vals[i].comp == a->col_comp[c])
                src = vals[i].ptr;
        if (src)
            tecs__copy_value(dst, src, size);
        else
            memset(dst, 0, size);
    }
}

/* Append n rows for ids (pending, or taken now when ids[k] == 0) to a,
** rows reserved; construct their values; make them alive. */
static void commit_births(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *ids,
                          int32_t nvals, const tecs_value_t *vals)
{
    uint32_t row0 = (uint32_t)a->count;
    for (int32_t k = 0; k < n; k++) {
        tecs_entity_t e = ids[k] ? ids[k] : (ids[k] = tecs__ei_take(w), w->npending++, ids[k]);
        uint32_t row = row0 + (uint32_t)k;
        *tecs__ent_ptr(a, w, row) = e;
        tecs__record *r = &w->recs[TECS_ENTITY_INDEX(e)];
        r->arch = a->id;
        r->row = row;
    }
    if (n == 1 && a->plain) {
        birth_plain(w, a, row0, nvals, vals);
    } else {
        const char *src[TECS_MAX_ARCH_COMPONENTS];
        vals_by_col(a, nvals, vals, src);
        for (int32_t c = 0; c < a->ncols; c++)
            construct_run(w, a, c, row0, n, src[c]);
    }
    a->count += n;
    w->npending -= n;
    w->nalive += n;
    emit_births(w, a, row0, n, nvals, vals);
}

/* Give a pending entity its row; run the initializer, then construct what it
** left untouched. Rows must be reserved. */
static void commit_birth_with(tecs_world_t *w, tecs_archetype_t *a, tecs_entity_t e,
                              tecs_init_fn fn, void *ctx)
{
    tecs_init_t init = { w, e, a, (uint32_t)a->count, 0 };
    *tecs__ent_ptr(a, w, init.row) = e;
    w->recs[TECS_ENTITY_INDEX(e)].row = init.row;
    a->count++;
    for (int32_t c = 0; c < a->ncols; c++)
        if (a->col_info[c]->ctor == NULL)
            memset(tecs__col_ptr(a, w, c, init.row), 0, a->col_size[c]);
    w->defer_depth++;
    fn(&init, ctx);
    w->defer_depth--;
    for (int32_t c = 0; c < a->ncols; c++)
        if (!(init.done >> c & 1) && a->col_info[c]->ctor)
            tecs__comp_ctor(a->col_info[c], tecs__col_ptr(a, w, c, init.row), 1);
    w->recs[TECS_ENTITY_INDEX(e)].arch = a->id;
    w->npending--;
    w->nalive++;
    emit_births(w, a, init.row, 1, 0, NULL);
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
        commit_birth_with(w, a, e, fn, ctx);
    else
        commit_births(w, a, 1, &e, nvals, vals);
    return TECS_OK;
}

/* Create one entity now: reserve, take a slot, commit. */
static tecs_entity_t new_now(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                             const tecs_value_t *vals, tecs_init_fn fn, void *ctx)
{
    if (tecs__ei_reserve(w, 1) || tecs__arch_reserve_rows(w, a, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    w->npending++;
    tecs__birth(w, e, a, nvals, vals, fn, ctx);
    settle(w);
    return e;
}

/* tecs_new now: a row in the empty archetype; nothing to construct, no
** component event, only a move event if someone listens. */
static tecs_entity_t new_empty(tecs_world_t *w, tecs_archetype_t *root)
{
    if (tecs__ei_reserve(w, 1) || tecs__arch_reserve_rows(w, root, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    uint32_t row = (uint32_t)root->count++;
    *tecs__ent_ptr(root, w, row) = e;
    tecs__record *r = &w->recs[TECS_ENTITY_INDEX(e)];
    r->arch = root->id;
    r->row = row;
    w->nalive++;
    if (TECS__UNLIKELY(w->watch_moves)) {
        emit_move(w, e, NULL, root);
        settle(w);
    }
    return e;
}

tecs_entity_t tecs_new(tecs_world_t *w)
{
    if (w == NULL)
        return 0;
    tecs_archetype_t *root = w->archs[0];
    if (w->defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, root, 1, &e, 0, NULL, false, NULL, NULL) ? 0 : e;
    }
    return new_empty(w, root);
}

tecs_entity_t tecs_new_in(tecs_world_t *w, tecs_archetype_t *a)
{
    if (w == NULL || tecs__check_arch(w, a))
        return 0;
    if (w->defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, a, 1, &e, 0, NULL, false, NULL, NULL) ? 0 : e;
    }
    return new_now(w, a, 0, NULL, NULL, NULL);
}

tecs_entity_t tecs_new_with(tecs_world_t *w, tecs_archetype_t *a, tecs_init_fn fn, void *ctx)
{
    if (w == NULL || tecs__check_arch(w, a))
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
    tecs_err_t err = tecs__check_arch(w, a);
    if (err)
        return err;
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "tecs_new_bulk: negative count");
    if ((err = tecs__check_vals(w, a, nvals, vals)) != TECS_OK)
        return err;
    if (w->defer_depth > 0)
        return tecs__defer_new(w, a, n, out, nvals, vals, true, NULL, NULL);
    if ((err = tecs__ei_reserve(w, n)) || (err = tecs__arch_reserve_rows(w, a, n)))
        return err;
    /* Ids are taken and written chunk by chunk, into out if given. */
    tecs_entity_t buf[256];
    int32_t done = 0;
    while (done < n) {
        int32_t k = n - done < 256 ? n - done : 256;
        tecs_entity_t *ids = out ? out + done : buf;
        tecs__ei_take_n(w, k, ids);
        w->npending += k;
        tecs_value_t part[TECS_MAX_ARCH_COMPONENTS];
        int32_t np = 0;
        for (int32_t i = 0; i < nvals; i++) {
            size_t size = tecs_component_size(w, vals[i].comp);
            if (size)
                part[np++] = (tecs_value_t){ vals[i].comp,
                                             (const char *)vals[i].ptr + (size_t)done * size };
        }
        commit_births(w, a, k, ids, np, part);
        done += k;
    }
    settle(w);
    return TECS_OK;
}

/* ---- moves ----------------------------------------------------------- */

/* Fill b's columns at dst for plain archetypes: shared values copied from a
** at src, the added one from value, any other zero-filled. */
static void move_plain(tecs_world_t *w, tecs_archetype_t *a, uint32_t src, tecs_archetype_t *b,
                       uint32_t dst, tecs_comp_t added, const void *value)
{
    const char *from = tecs__chunk_of(a, w, src);
    char *to = tecs__chunk_of(b, w, dst);
    uint32_t fr = src & w->mask, tr = dst & w->mask;
    /* Locals: the stores below may alias anything, the loads must not. */
    const uint32_t *boff = b->col_off, *bsize = b->col_size, *aoff = a->col_off;
    const tecs_comp_t *bcomp = b->col_comp;
    const int16_t *cmap = a->cmap;
    tecs_comp_t clen = (tecs_comp_t)a->cmap_len;
    int32_t ncols = b->ncols;
    for (int32_t c = 0; c < ncols; c++) {
        uint32_t size = bsize[c];
        char *p = to + boff[c] + (size_t)tr * size;
        tecs_comp_t comp = bcomp[c];
        int32_t ac = comp < clen ? cmap[comp] : TECS__COL_ABSENT;
        if (ac >= 0)
            tecs__copy_value(p, from + aoff[ac] + (size_t)fr * size, size);
        else if (comp == added && value != NULL)
            tecs__copy_value(p, value, size);
        else
            memset(p, 0, size);
    }
}

/* The same with hooks: move, construct, copy. */
static void move_hooked(tecs_world_t *w, tecs_archetype_t *a, uint32_t src, tecs_archetype_t *b,
                        uint32_t dst, tecs_comp_t added, const void *value)
{
    for (int32_t c = 0; c < b->ncols; c++) {
        void *to = tecs__col_ptr(b, w, c, dst);
        int32_t ac = tecs__arch_col(a, b->col_comp[c]);
        const tecs__comp *ci = b->col_info[c];
        if (ac >= 0) {
            tecs__comp_move(ci, to, tecs__col_ptr(a, w, ac, src), 1);
        } else if (value != NULL && b->col_comp[c] == added && !ci->ctor && !ci->copy) {
            memcpy(to, value, ci->size);
        } else {
            tecs__comp_ctor(ci, to, 1);
            if (value != NULL && b->col_comp[c] == added)
                tecs__comp_copy(ci, to, value, 1);
        }
    }
}

/* Move the entity of record r from a to b (rows reserved in b). Columns of b
** missing from a are constructed (from value if it is comp `added`);
** columns of a missing from b must be destroyed already. */
static void move_entity(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                        tecs_archetype_t *b, tecs_comp_t added, const void *value)
{
    uint32_t src = r->row;
    uint32_t dst = (uint32_t)b->count++;
    tecs_entity_t e = *tecs__ent_ptr(a, w, src);
    *tecs__ent_ptr(b, w, dst) = e;
    if (b->plain)
        move_plain(w, a, src, b, dst, added, value);
    else
        move_hooked(w, a, src, b, dst, added, value);
    tecs__arch_remove_row(w, a, src);
    r->arch = b->id | (r->arch & ~TECS__ARCH_MASK);
    r->row = dst;
}

/* Add c (from value, if given) to the live entity e of record r, in a,
** which lacks c. */
static tecs_err_t add_at(tecs_world_t *w, tecs_entity_t e, tecs__record *r, tecs_archetype_t *a,
                         tecs_comp_t c, const void *value)
{
    tecs_archetype_t *b = tecs__arch_with(w, a, c);
    if (b == NULL)
        return w->err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (err)
        return err;
    move_entity(w, r, a, b, c, value);
    if (w->watch_moves)
        emit_move(w, e, a, b);
    if (watched(w, c)) {
        int32_t col = tecs__arch_col(b, c);
        const void *p = col >= 0 ? tecs__col_ptr(b, w, col, r->row) : NULL;
        tecs__emit_comp(w, TECS__EV_ADD, e, c, p);
        if (value && col >= 0)
            tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    }
    return TECS_OK;
}

tecs_err_t tecs__add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        return err_dead(w, e);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    if (tecs__arch_col(a, c) != TECS__COL_ABSENT)
        return tecs__err(w, TECS_EEXIST, "entity already has component %u", c);
    return add_at(w, e, r, a, c, value);
}

/* Remove c from the live entity e of record r. */
static tecs_err_t remove_at(tecs_world_t *w, tecs_entity_t e, tecs__record *r, tecs_comp_t c)
{
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t col = tecs__arch_col(a, c);
    if (col == TECS__COL_ABSENT)
        return tecs__err(w, TECS_ENOENT, "entity does not have component %u", c);
    tecs_archetype_t *b = tecs__arch_without(w, a, c);
    if (b == NULL)
        return w->err;
    tecs_err_t err = tecs__arch_reserve_rows(w, b, 1);
    if (err)
        return err;
    void *p = col >= 0 ? tecs__col_ptr(a, w, col, r->row) : NULL;
    if (watched(w, c))
        tecs__emit_comp(w, TECS__EV_REMOVE, e, c, p);
    if (p && a->col_info[col]->dtor)
        tecs__comp_dtor(a->col_info[col], p, 1);
    move_entity(w, r, a, b, 0, NULL);
    if (w->watch_moves)
        emit_move(w, e, a, b);
    return TECS_OK;
}

tecs_err_t tecs__remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    return r ? remove_at(w, e, r, c) : err_dead(w, e);
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
    emit_all(w, TECS__EV_REMOVE, a, row, e);
    if (w->watch_moves)
        emit_move(w, e, a, NULL);
    if (!a->plain)
        for (int32_t c = 0; c < a->ncols; c++)
            tecs__comp_dtor(a->col_info[c], tecs__col_ptr(a, w, c, row), 1);
    tecs__arch_remove_row(w, a, row);
    tecs__ei_release(w, index);
    w->nalive--;
    return TECS_OK;
}

/* ---- public structural calls ----------------------------------------- */

tecs_err_t tecs_destroy(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL)
        return err_dead(w, e);
    if (w->defer_depth > 0 && r->arch != TECS__ARCH_PENDING)
        return tecs__defer_op(w, TECS__OP_DESTROY, e, 0, NULL);
    tecs_err_t err = tecs__destroy_now(w, e);
    settle(w);
    return err;
}

/* Checks shared by add, remove and set: a known component, an entity that
** is alive (or pending, while deferred). */
static tecs_err_t check_target(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                               tecs__record **rp)
{
    if (tecs__comp_get(w, c) == NULL)
        return err_nocomp(w, c);
    tecs__record *r = w->defer_depth > 0 ? tecs__ei_known(w, e) : tecs__ei_alive(w, e);
    if (r == NULL)
        return err_dead(w, e);
    *rp = r;
    return TECS_OK;
}

tecs_err_t tecs_add(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs__record *r = NULL;
    tecs_err_t err = check_target(w, e, c, &r);
    if (err)
        return err;
    if (w->defer_depth > 0)
        return tecs__defer_op(w, TECS__OP_ADD, e, c, NULL);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    if (tecs__arch_col(a, c) != TECS__COL_ABSENT)
        return tecs__err(w, TECS_EEXIST, "entity already has component %u", c);
    err = add_at(w, e, r, a, c, NULL);
    settle(w);
    return err;
}

tecs_err_t tecs_remove(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs__record *r = NULL;
    tecs_err_t err = check_target(w, e, c, &r);
    if (err)
        return err;
    if (w->defer_depth > 0)
        return tecs__defer_op(w, TECS__OP_REMOVE, e, c, NULL);
    err = remove_at(w, e, r, c);
    settle(w);
    return err;
}

tecs_err_t tecs_set(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs__record *r = NULL;
    tecs_err_t err = check_target(w, e, c, &r);
    if (err)
        return err;
    const tecs__comp *ci = &w->comps[c];
    if (value == NULL && ci->size > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_set: NULL value");
    if (r->arch < TECS__ARCH_RETIRED) {
        tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t col = tecs__arch_col(a, c);
        if (col >= 0) {
            void *p = tecs__col_ptr(a, w, col, r->row);
            tecs__comp_copy(ci, p, value, 1);
            if (ci->watch) {
                tecs__emit_comp(w, TECS__EV_SET, e, c, p);
                settle(w);
            }
            return TECS_OK;
        }
        if (col == TECS__COL_TAG)
            return TECS_OK;
    }
    if (w->defer_depth > 0)
        return tecs__defer_op(w, TECS__OP_SET, e, c, value);
    err = add_at(w, e, r, tecs__rec_arch(w, r), c, value);
    settle(w);
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
        tecs__err(w, TECS_EINVAL, "component %u is a tag and has no value", c);
    else
        tecs__err(w, TECS_ENOENT, "entity does not have component %u", c);
    return NULL;
}

void *tecs_get_mut(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    uint32_t index = TECS_ENTITY_INDEX(e);
    if (TECS__UNLIKELY(w == NULL))
        return NULL;
    if (TECS__LIKELY(index < (uint32_t)w->nrecs)) {
        const tecs__record *r = &w->recs[index];
        if (TECS__LIKELY(r->gen == TECS_ENTITY_GENERATION(e) && r->arch < TECS__ARCH_RETIRED)) {
            const tecs_archetype_t *a = tecs__rec_arch(w, r);
            int32_t col = tecs__arch_col(a, c);
            if (TECS__LIKELY(col >= 0))
                return tecs__col_ptr(a, w, col, r->row);
        }
    }
    return get_failed(w, e, c);
}

const void *tecs_get(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return tecs_get_mut(w, e, c);
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
    void *p = tecs_get_mut(w, e, c);
    if (p == NULL)
        return w->err;
    if (watched(w, c)) {
        tecs__emit_comp(w, TECS__EV_SET, e, c, p);
        settle(w);
    }
    return TECS_OK;
}

tecs_archetype_t *tecs_entity_archetype(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL)
        return NULL;
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL) {
        err_dead(w, e);
        return NULL;
    }
    return tecs__rec_arch(w, r);
}
