/*
** entity.c — the public entity functions: tecs_new, tecs_destroy,
** tecs_add, tecs_remove, tecs_set, tecs_get and their kin. A thin front end:
** each validates its arguments, then either performs the change now
** through the engine (store.c) or, while the world is deferred, hands it to
** the command buffer (command.c), and at the end applies what callbacks
** queued meanwhile (tecs__settle).
**
** The commonest calls keep a fast path here that calls nothing: tecs_new
** into the empty archetype is a slot taken and a row appended; tecs_destroy
** of an entity of a plain archetype nobody listens to drops its row through
** the engine's destroy hop. Anything else goes to the engine.
**
** Reads: tecs_get checks everything and records why it failed. A handle
** (tecs_handle_init) points at the id slots and at archetype.c's lookup
** table of its component (or its sparse set), which tecs_handle_get reads
** inline in the user's code with no call. tecs_get_many resolves a batch with the slots
** fetched ahead.
**
** Calls: base.c, entity_index.c, component.c, event.c, archetype.c,
** sparse.c, store.c, command.c.
*/
#include "private.h"

/* Create one entity now: reserve, take a slot, commit. */
static tecs_entity_t new_now(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                             const tecs_value_t *vals, tecs_init_fn fn, void *ctx)
{
    if (tecs__ei_reserve1(w) || tecs__arch_reserve_rows(w, a, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    w->ei.npending++;
    if (TECS__UNLIKELY(tecs__birth(w, e, a, nvals, vals, fn, ctx))) {
        if (tecs__ei_known(w, e)) {
            tecs__ei_release(w, TECS_ENTITY_INDEX(e));
            w->ei.npending--;
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
    tecs__arch_entered(w, root, row);
    *tecs__ent_ptr(root, w, row) = e;
    tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(e)];
    r->arch = root->id;
    r->row = row;
    w->ei.nalive++;
}

/* tecs_new when it must grow, fail or announce. */
static TECS__NOINLINE tecs_entity_t new_slow(tecs_world_t *w)
{
    tecs_archetype_t *root = w->arch.archs[0];
    if (tecs__ei_reserve1(w) || tecs__arch_reserve_rows(w, root, 1))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    root_append(w, root, e);
    if (TECS__UNLIKELY(w->bus.watch_moves)) {
        tecs__emit_move(w, e, NULL, root);
        tecs__settle(w);
    }
    return e;
}

tecs_entity_t tecs_new(tecs_world_t *w)
{
    if (w == NULL || tecs__enter(w))
        return 0;
    tecs_archetype_t *root = w->arch.archs[0];
    if (w->base.defer_depth > 0)
        return tecs__defer_new1(w, root);
    /* The common case calls nothing: a free or reserved slot, a free row. */
    if (TECS__LIKELY(!w->bus.watch_moves &&
                     w->ei.nalive + w->ei.npending < w->ei.max_entities &&
                     (w->ei.free_head != TECS__NO_SLOT || w->ei.nrecs < w->ei.cap_recs) &&
                     tecs__arch_has_rows(w, root, 1))) {
        tecs_entity_t e = tecs__ei_take(w);
        root_append(w, root, e);
        return e;
    }
    return new_slow(w);
}

tecs_entity_t tecs_new_in(tecs_world_t *w, tecs_archetype_t *a)
{
    if (w == NULL || tecs__enter(w) || tecs__arch_validate(w, a))
        return 0;
    if (w->base.defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, &(tecs__births){ .arch = a, .n = 1, .out = &e }) ? 0 : e;
    }
    return new_now(w, a, 0, NULL, NULL, NULL);
}

tecs_entity_t tecs_new_with(tecs_world_t *w, tecs_archetype_t *a, tecs_init_fn fn, void *ctx)
{
    if (w == NULL || tecs__enter(w) || tecs__arch_validate(w, a))
        return 0;
    if (fn == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_new_with: NULL initializer");
        return 0;
    }
    if (w->base.defer_depth > 0) {
        tecs_entity_t e = 0;
        return tecs__defer_new(w, &(tecs__births){ .arch = a, .n = 1, .out = &e,
                                                          .init = fn, .ctx = ctx }) ? 0 : e;
    }
    return new_now(w, a, 0, NULL, fn, ctx);
}

tecs_err_t tecs_new_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                         int32_t nvals, const tecs_value_t *vals)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err || (err = tecs__arch_validate(w, a)))
        return err;
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "tecs_new_bulk: negative count %d", n);
    if ((err = tecs__arch_validate_vals(w, a, nvals, vals)) != TECS_OK)
        return err;
    if (w->base.defer_depth > 0)
        return tecs__defer_new(w, &(tecs__births){ .arch = a, .n = n, .out = out, .nvals = nvals,
                                                   .vals = vals, .bulk = true });
    if ((err = tecs__birth_bulk(w, a, n, out, nvals, vals)))
        return err;
    tecs__settle(w);
    return TECS_OK;
}

/* ---- clones ----------------------------------------------------------- */

/* A queued clone applies: the pending e is born a clone of src as src is
** now; gone already (destroyed while pending): skipped; src dead: the
** birth is cancelled, e's id dies. */
static tecs_err_t clone_queued(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *data)
{
    (void)c;
    tecs_entity_t src;
    memcpy(&src, data, sizeof src);
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL || r->arch != TECS__ARCH_PENDING)
        return TECS_OK;
    if (tecs__ei_alive(w, src) == NULL) {
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->ei.npending--;
        return tecs__err_dead(w, src);
    }
    return tecs__clone_now(w, src, 1, NULL, e);
}

/* Queue n copies of src into out (n ids). */
static tecs_err_t copies_defer(tecs_world_t *w, tecs__call_fn fn, tecs_entity_t src, int32_t n,
                               tecs_entity_t *out, const char *what)
{
    tecs_err_t err = tecs__ei_reserve(w, n);
    for (int32_t k = 0; k < n && !err; k++) {
        tecs_entity_t e = tecs__ei_take(w);
        w->ei.npending++;
        if ((err = tecs__defer_call(w, fn, e, 0, &src, sizeof src))) {
            tecs__ei_release(w, TECS_ENTITY_INDEX(e));
            w->ei.npending--;
            while (k-- > 0) {       /* the calls queued already find no birth */
                tecs__ei_release(w, TECS_ENTITY_INDEX(out[k]));
                w->ei.npending--;
            }
            return tecs__err(w, err, "out of memory queueing %s of " TECS__ENT_FMT, what,
                             TECS__ENT(src));
        }
        out[k] = e;
    }
    return err;
}

tecs_err_t tecs__copies_defer(tecs_world_t *w, tecs__call_fn fn, tecs_entity_t src, int32_t n,
                              tecs_entity_t *out, const char *what)
{
    if (out)
        return copies_defer(w, fn, src, n, out, what);
    tecs_entity_t *ids = tecs__alloc(w, tecs__bytes((size_t)n, sizeof *ids));
    if (ids == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory queueing %d of %s", n, what);
    tecs_err_t err = copies_defer(w, fn, src, n, ids, what);
    tecs__free(w, ids, tecs__bytes((size_t)n, sizeof *ids));
    return err;
}

/* The checks tecs_clone and tecs_clone_bulk share; src may be pending
** while the world is deferred (it must be alive when the clone applies). */
static tecs_err_t clone_enter(tecs_world_t *w, tecs_entity_t src, int32_t n, const char *fn)
{
    tecs_err_t err = w == NULL ? TECS_EINVAL : tecs__enter(w);
    if (err)
        return err;
    tecs__record *r = tecs__ei_known(w, src);
    if (r == NULL || (r->arch == TECS__ARCH_PENDING && w->base.defer_depth == 0) ||
        (r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED))
        return tecs__err_dead(w, src);
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "%s: negative count %d", fn, n);
    return TECS_OK;
}

tecs_entity_t tecs_clone(tecs_world_t *w, tecs_entity_t src)
{
    tecs_entity_t e = 0;
    if (tecs_clone_bulk(w, src, 1, &e))
        return 0;
    return e;
}

tecs_err_t tecs_clone_bulk(tecs_world_t *w, tecs_entity_t src, int32_t n, tecs_entity_t *out)
{
    tecs_err_t err = clone_enter(w, src, n, "tecs_clone_bulk");
    if (err || n == 0)
        return err;
    if (w->base.defer_depth > 0)
        return tecs__copies_defer(w, clone_queued, src, n, out, "a clone");
    if ((err = tecs__clone_now(w, src, n, out, 0)))
        return err;
    tecs__settle(w);
    return TECS_OK;
}

/* ---- public structural calls ----------------------------------------- */

/* tecs_destroy when it must queue, tell listeners, run hooks or fail. */
static TECS__NOINLINE tecs_err_t destroy_slow(tecs_world_t *w, tecs_entity_t e)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    tecs__record *r = tecs__ei_alive(w, e);
    if (TECS__UNLIKELY(r == NULL))
        r = tecs__ei_known(w, e);               /* a pending birth, or dead */
    if (r == NULL)
        return tecs__err_dead(w, e);
    /* While deferred a pending birth is queued too: it may be the entity an
    ** initializer is building right now, whose row already exists. */
    if (w->base.defer_depth > 0) {
        err = tecs__defer_op(w, TECS__OP_DESTROY, e, 0, NULL);
        /* tecs_entity_state tells a live entity whose destroy waits (the
        ** mark goes with its slot when it dies). A worker leaves the
        ** records alone: other workers read them. */
        if (err == TECS_OK && r->arch < TECS__ARCH_RETIRED && !tecs__in_worker(w))
            r->arch |= TECS__DESTROY_QUEUED;
        return err;
    }
    err = tecs__destroy_now(w, e);
    tecs__settle(w);
    return err;
}

/* tecs_destroy's short path when a row fills the hole: apart, so that the
** short path stays free of the copies' code. */
static TECS__NOINLINE tecs_err_t destroy_row(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    tecs__arch_remove_row(w, a, row);
    return TECS_OK;
}

tecs_err_t tecs_destroy(tecs_world_t *w, tecs_entity_t e)
{
    /* The common case: a live entity of a plain archetype, nobody to tell,
    ** not deferred, no sparse set with members, the world open (not a
    ** worker: destroy_slow queues for it), all of which the gate word says
    ** at once. Its row is dropped and its slot freed. */
    tecs__record *r;
    if (TECS__LIKELY(w != NULL && tecs__gate_open(w, TECS__GATE_ALL) &&
                     (r = tecs__ei_alive(w, e)) != NULL)) {
        w->base.err = TECS_OK;
        tecs_archetype_t *a = w->store.kill.from;
        if (TECS__UNLIKELY(!tecs__hop_at(&w->store.kill, r))) {
            a = tecs__rec_arch(w, r);
            if (!a->plain)
                return destroy_slow(w, e);
            tecs__hop_set(&w->store.kill, a, NULL, 0);
        }
        uint32_t row = r->row;
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->ei.nalive--;
        if (TECS__LIKELY(a->bare) && row == (uint32_t)a->count - 1) {
            a->count = (int32_t)row;            /* the last row: no hole to fill */
            if (TECS__UNLIKELY((row & w->arch.mask) == 0))
                tecs__arch_remove_trim(w, a);
            return TECS_OK;
        }
        return destroy_row(w, a, row);
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
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL || (r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED))
        return tecs__err_dead(w, e);
    tecs_err_t err = tecs__defer_op(w, op, e, c, value);
    /* A later tecs_set of c must queue too, not write a value that the
    ** queued remove would then drop. (A worker's sets always queue.) */
    if (err == TECS_OK && op == TECS__OP_REMOVE && r->arch < TECS__ARCH_RETIRED &&
        !tecs__in_worker(w))
        r->arch |= TECS__REMOVE_QUEUED;
    return err;
}

/* defer_known for a component not validated yet. */
static tecs_err_t defer_change(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                               const void *value)
{
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    return defer_known(w, op, e, c, value);
}

/* tecs_add and tecs_remove, not deferred, of a table component: the quiet
** hop inline, else the engine; of a sparse one: the quiet insert or erase,
** else the engine. Apart, so that the public entries are a few tests and a
** jump, and neither path carries the other's code. */
static TECS__NOINLINE tecs_err_t add_table_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    tecs_err_t err = TECS_OK;
    if (TECS__UNLIKELY(r == NULL) || TECS__UNLIKELY(!tecs__add_quick(w, r, c, NULL)))
        err = tecs__add_now(w, e, c, NULL);
    tecs__settle(w);
    return err;
}

static TECS__NOINLINE tecs_err_t remove_table_now(tecs_world_t *w, tecs_entity_t e,
                                                  tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    tecs_err_t err = TECS_OK;
    if (TECS__UNLIKELY(r == NULL) || TECS__UNLIKELY(!tecs__remove_quick(w, r, c)))
        err = tecs__remove_now(w, e, c);
    tecs__settle(w);
    return err;
}

/* The sparse paths when the quiet insert or erase cannot do it: the
** engine, then what callbacks queued. Apart, so that the quiet paths stay
** leaves; they find c from its entry ci, so that the quiet paths need not
** keep it. */
static TECS__NOINLINE tecs_err_t add_sparse_slow(tecs_world_t *w, tecs_entity_t e,
                                                 const tecs__comp *ci)
{
    tecs_err_t err = tecs__add_now(w, e, (tecs_comp_t)(ci - w->comp.comps), NULL);
    tecs__settle(w);
    return err;
}

static TECS__NOINLINE tecs_err_t remove_sparse_slow(tecs_world_t *w, tecs_entity_t e,
                                                    const tecs__comp *ci)
{
    tecs_err_t err = tecs__remove_now(w, e, (tecs_comp_t)(ci - w->comp.comps));
    tecs__settle(w);
    return err;
}

/* The short paths of a sparse component (ci its entry): the common case
** decided by the component's words (nobody to ask or tell, no constructor
** on an add, no destructor on a remove) and its set's (made, room in the
** member list, the slot's page there), done here with no call; anything
** else goes to the engine. */
static TECS__NOINLINE tecs_err_t add_sparse_now(tecs_world_t *w, tecs_entity_t e,
                                                const tecs__comp *ci)
{
    tecs__sparse *s = ci->set;
    uint32_t slot = TECS_ENTITY_INDEX(e), p;
    tecs__spage *pg;
    if (TECS__LIKELY(tecs__ei_alive(w, e) != NULL) &&
        TECS__LIKELY((ci->veto | ci->watch) == 0) && TECS__LIKELY(ci->ctor == NULL) &&
        TECS__LIKELY(s != NULL) && TECS__LIKELY(s->count < s->cap) &&
        TECS__LIKELY((p = slot >> s->shift) < (uint32_t)s->npages) &&
        TECS__LIKELY((pg = s->pages[p]) != NULL)) {
        uint32_t i = slot & s->mask, gen;
        char *at = pg->ents + (size_t)i * s->stride;
        if (TECS__LIKELY((memcpy(&gen, at, sizeof gen), gen == 0)))
            return tecs__sparse_join(w, s, pg, i, at, e);
    }
    return add_sparse_slow(w, e, ci);
}

static TECS__NOINLINE tecs_err_t remove_sparse_now(tecs_world_t *w, tecs_entity_t e,
                                                   const tecs__comp *ci)
{
    tecs__sparse *s = ci->set;
    uint32_t slot = TECS_ENTITY_INDEX(e), p;
    tecs__spage *pg;
    /* (A member is alive: its entry's generation is the whole check.) */
    if (TECS__LIKELY(ci->watch == 0) && TECS__LIKELY(ci->dtor == NULL) &&
        TECS__LIKELY(s != NULL) && TECS__LIKELY((p = slot >> s->shift) < (uint32_t)s->npages) &&
        TECS__LIKELY((pg = s->pages[p]) != NULL)) {
        uint32_t i = slot & s->mask;
        char *at = pg->ents + (size_t)i * s->stride;
        if (TECS__LIKELY(tecs__sparse_is(at, e))) {
            if (TECS__LIKELY(tecs__sparse_leave(w, s, pg, i, at)))
                return TECS_OK;
            return tecs__sparse_emptied(w, s, slot);      /* (a tail call) */
        }
    }
    return remove_sparse_slow(w, e, ci);
}

/* tecs_add and tecs_remove: one front end. Each entry passes add as a
** constant, so each keeps only its own paths. */
static TECS__INLINE tecs_err_t add_or_remove(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                             bool add)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    if (w->base.defer_depth > 0)
        return defer_change(w, add ? TECS__OP_ADD : TECS__OP_REMOVE, e, c, NULL);
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c))) {
        const tecs__comp *ci = &w->comp.comps[c];
        return add ? add_sparse_now(w, e, ci) : remove_sparse_now(w, e, ci);
    }
    return add ? add_table_now(w, e, c) : remove_table_now(w, e, c);
}

tecs_err_t tecs_add(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return add_or_remove(w, e, c, true);
}

tecs_err_t tecs_remove(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return add_or_remove(w, e, c, false);
}

/* Write value over the existing value at p. */
static tecs_err_t overwrite(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, void *p,
                            const void *value, tecs_archetype_t *a, int32_t col, uint32_t row)
{
    const tecs__comp *ci = &w->comp.comps[c];
    if (TECS__UNLIKELY(value == NULL))
        return tecs__err(w, TECS_EINVAL, "tecs_set: NULL value for " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    if (TECS__UNLIKELY(ci->veto)) {
        tecs_err_t err = tecs__veto(w, TECS__EV_SET, e, c, value, 1);
        if (err)
            return err;
    }
    if (a)                      /* the write's tick: its chunk's (row's), or its set's */
        tecs__arch_touch(w, a, col, row);
    else
        ci->set->changed = w->arch.tick;
    if (ci->copy)
        tecs__comp_copy(w, ci, p, value, 1);
    else
        tecs__copy_value(p, value, ci->size);
    if (TECS__UNLIKELY(ci->watch) && tecs__wants_set(ci))
        tecs__emit_comp(w, TECS__EV_SET, e, c, p);
    tecs__settle(w);
    return TECS_OK;
}

/* tecs_set, and TECS_SET's call with the C type's size (TECS__ANY_SIZE:
** unchecked): one body, the check a compare of the registry's size. */
static TECS__INLINE tecs_err_t set_sized(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                         const void *value, size_t size)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    if (TECS__UNLIKELY(tecs__size_wrong(w, c, size)))
        return tecs__err_size(w, c, size, "TECS_SET");
    tecs__record *r = tecs__ei_alive(w, e);
    /* A write queues while rows are in motion (a lifecycle hook runs, or
    ** in a worker, whose hook depth is 1), or while a queued remove of e
    ** would drop it. */
    if (TECS__LIKELY(r != NULL) && TECS__LIKELY(w->base.hook_depth == 0) &&
        !(TECS__UNLIKELY(r->arch & TECS__REMOVE_QUEUED) && w->base.defer_depth > 0)) {
        tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t col = tecs__arch_col(a, c);
        if (col >= 0)
            return overwrite(w, e, c, tecs__col_ptr(a, w, col, r->row), value, a, col, r->row);
        if (col == TECS__COL_TAG)
            return TECS_OK;
        void *p;
        if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)) &&
            (p = tecs__sparse_get(w, c, TECS_ENTITY_INDEX(e))) != NULL)
            return w->comp.comps[c].size ? overwrite(w, e, c, p, value, NULL, 0, 0) : TECS_OK;
        /* A registered c is added with its value now. */
        if (TECS__LIKELY(w->base.defer_depth == 0 && value != NULL &&
                         tecs__comp_get(w, c) != NULL)) {
            err = TECS__LIKELY(tecs__add_quick(w, r, c, value)) ? TECS_OK
                                                               : tecs__add_to(w, e, r, a, c, value);
            tecs__settle(w);
            return err;
        }
    }
    const tecs__comp *ci = tecs__comp_get(w, c);
    if (ci == NULL)
        return tecs__err_nocomp(w, c);
    if (value == NULL && ci->size > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_set: NULL value for " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    if (w->base.defer_depth > 0)
        return defer_known(w, TECS__OP_SET, e, c, value);
    err = tecs__add_now(w, e, c, value);
    tecs__settle(w);
    return err;
}

tecs_err_t tecs_set(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    return set_sized(w, e, c, value, TECS__ANY_SIZE);
}

tecs_err_t tecs__set_sized(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value,
                           size_t size)
{
    return set_sized(w, e, c, value, size);
}

/* ---- reads ----------------------------------------------------------- */

static TECS__NOINLINE void *get_failed(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        tecs__err_dead(w, e);
    else if (tecs__comp_get(w, c) == NULL)
        tecs__err_nocomp(w, c);
    else if (tecs__arch_col(tecs__rec_arch(w, r), c) == TECS__COL_TAG ||
             (tecs__comp_is_sparse(w, c) && tecs__sparse_get(w, c, TECS_ENTITY_INDEX(e))))
        tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag and has no value",
                  TECS__COMP(w, c));
    else
        tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " does not have " TECS__COMP_FMT,
                  TECS__ENT(e), TECS__COMP(w, c));
    return NULL;
}

/* A worker asked for c outside its system's access. */
static TECS__NOINLINE void *get_refused(tecs_world_t *w, tecs_comp_t c, bool write)
{
    tecs__err(w, TECS_EACCESS, "this worker's system did not declare %s " TECS__COMP_FMT
              " (its query's terms, desc.reads, desc.writes)", write ? "writing" : "reading",
              TECS__COMP(w, c));
    return NULL;
}

/* TECS_GET's or TECS_GET_MUT's refusal of a C type of the wrong size. */
static TECS__NOINLINE void *get_sized_refused(tecs_world_t *w, tecs_comp_t c, size_t size,
                                              bool write)
{
    tecs__err_size(w, c, size, write ? "TECS_GET_MUT" : "TECS_GET");
    return NULL;
}

/* A read of c that e (in a) has not: its base's value, if it inherits
** one (the writes go to its own: tecs_get_mut does not read through). */
static TECS__NOINLINE void *get_inherited(tecs_world_t *w, tecs_entity_t e,
                                          const tecs_archetype_t *a, tecs_comp_t c, size_t size)
{
    if (TECS__UNLIKELY(tecs__size_wrong(w, c, size)))
        return get_sized_refused(w, c, size, false);
    const void *p = tecs__comp_get(w, c) ? tecs__inherited(w, a, c) : NULL;
    return p ? (void *)(uintptr_t)p : get_failed(w, e, c);
}

/* The value of c of e (to write, if write), or NULL with the error set;
** size: TECS_GET's C type's (TECS__ANY_SIZE: unchecked). */
static TECS__INLINE void *get_ptr(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, bool write,
                                  size_t size)
{
    if (TECS__UNLIKELY(w == NULL) || tecs__enter_read(w))
        return NULL;
    if (TECS__UNLIKELY(tecs__in_worker(w)) &&
        !tecs__worker_may(w, write ? w->base.may_write : w->base.may_read, c))
        return get_refused(w, c, write);
    /* A sparse value: one entry of its set, which holds the id as well. */
    /* (A write through the pointer counts as made now; a worker's is
    ** counted when its system ends: see tecs__system_touch.) */
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c))) {
        if (TECS__UNLIKELY(tecs__size_wrong(w, c, size)))
            return get_sized_refused(w, c, size, write);
        void *p = tecs__sparse_get_id(w, c, e);
        if (p && write && !tecs__in_worker(w))
            w->comp.comps[c].set->changed = w->arch.tick;
        return p && w->comp.comps[c].size ? p : get_failed(w, e, c);
    }
    const tecs__record *r = tecs__ei_alive(w, e);
    if (TECS__LIKELY(r != NULL)) {
        tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t col = tecs__arch_col(a, c);
        if (TECS__LIKELY(col >= 0)) {
            /* (The check reads the column's size: the registry's, held
            ** by the archetype beside the column.) */
            if (TECS__UNLIKELY(size != TECS__ANY_SIZE && a->col_size[col] != size))
                return get_sized_refused(w, c, size, write);
            if (write && TECS__LIKELY(!tecs__in_worker(w)))
                tecs__arch_touch(w, a, col, r->row);
            return tecs__col_ptr(a, w, col, r->row);
        }
        if (TECS__UNLIKELY(w->bus.inherits) && !write && col == TECS__COL_ABSENT)
            return get_inherited(w, e, a, c, size);
    }
    if (TECS__UNLIKELY(tecs__size_wrong(w, c, size)))
        return get_sized_refused(w, c, size, write);
    return get_failed(w, e, c);
}

void *tecs_get_mut(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return get_ptr(w, e, c, true, TECS__ANY_SIZE);
}

const void *tecs_get(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return get_ptr(w, e, c, false, TECS__ANY_SIZE);
}

const void *tecs__get_sized(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, size_t size)
{
    return get_ptr(w, e, c, false, size);
}

void *tecs__get_mut_sized(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, size_t size)
{
    return get_ptr(w, e, c, true, size);
}

bool tecs_has(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (w == NULL)
        return false;
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)))
        return tecs__sparse_get_id(w, c, e) != NULL;
    const tecs__record *r = tecs__ei_alive(w, e);
    return r && tecs__arch_col(tecs__rec_arch(w, r), c) != TECS__COL_ABSENT;
}

tecs_err_t tecs_modified(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    void *p = tecs_get_mut(w, e, c);
    if (p == NULL)
        return w->base.err;
    if (TECS__UNLIKELY(w->base.hook_depth > 0))      /* rows in motion: reported later */
        return tecs__defer_op(w, TECS__OP_MODIFIED, e, c, NULL);
    err = tecs__written(w, e, c, p);
    if (tecs__wants_set(&w->comp.comps[c]))
        tecs__settle(w);
    return err;
}

/* ---- lookups in the caller's loop ------------------------------------- */

/* Why comp has no lookup (a tag), or TECS_OK. */
static tecs_err_t lookup_refused(tecs_world_t *w, const char *fn, tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    if (ci->size == 0)
        return tecs__err(w, TECS_EINVAL, "%s: " TECS__COMP_FMT " is a tag and has no value", fn,
                         TECS__COMP(w, c));
    return TECS_OK;
}

/* The checks of tecs_get_many: an open world (or a
** worker context), a known component this worker may read. */
static tecs_err_t lookup_enter(tecs_world_t *w, const char *fn, tecs_comp_t c)
{
    if (tecs__enter_read(w))
        return TECS_EBUSY;
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    if (TECS__UNLIKELY(tecs__in_worker(w)) && !tecs__worker_may(w, w->base.may_read, c))
        return tecs__err(w, TECS_EACCESS, "%s: this worker's system did not declare reading "
                         TECS__COMP_FMT " (its query's terms, desc.reads, desc.writes)", fn,
                         TECS__COMP(w, c));
    return TECS_OK;
}

/* How far ahead of its use a slot is fetched: enough misses in flight to
** cover a trip to memory, not so many that they wait for each other. */
#ifndef TECS__LOOKUP_AHEAD
#define TECS__LOOKUP_AHEAD 48
#endif
#define LOOKUP_AHEAD TECS__LOOKUP_AHEAD

/* Fetch the slot of id e, if it has one, ahead of its use: both its ends,
** as a 12-byte slot crosses a cache line one time in eight, and a slot read
** with only its first line in would wait a whole trip to memory for the
** second (its row, or its archetype) in the middle of the batch. */
static TECS__INLINE void slot_ahead(const tecs__record *recs, uint32_t nrecs, tecs_entity_t e)
{
    uint32_t x = TECS_ENTITY_INDEX(e);
    if (x < nrecs) {
        const char *at = (const char *)&recs[x];
        TECS__PREFETCH(at);
        TECS__PREFETCH(at + sizeof *recs - 1);
    }
}

/* Where tecs_get_many finds a table component in the archetype it met last:
** its chunk table, and the run of its first chunk group. */
typedef struct {
    uint32_t arch;              /* archetype index, or TECS__NO_SLOT        */
    uint32_t run;               /* rows [0, run) at base + row * size       */
    const char *base;
    char *const *cols;          /* column pointers of chunk 0, or NULL      */
    uint32_t stride, size;
} many_at;

static TECS__NOINLINE void many_at_set(const tecs_world_t *w, tecs_comp_t c, uint32_t ai,
                                       many_at *m)
{
    const tecs_archetype_t *a = w->arch.archs[ai];
    int32_t col = tecs__arch_col(a, c);
    *m = (many_at){ .arch = ai };
    if (col == TECS__COL_ABSENT && w->bus.inherits) {
        /* Every row of a inherits one value (or none): no stride. */
        m->base = tecs__inherited(w, a, c);
        m->run = m->base ? UINT32_MAX : 0;
        return;
    }
    if (col < 0 || a->cols == NULL)
        return;
    m->cols = a->cols + 1 + col;
    m->stride = (uint32_t)a->stride;
    m->size = a->col_size[col];
    m->run = a->nchunks > 0 ? a->chunks[0].g << w->arch.shift : 0;
    m->base = m->cols[0];
}

/* tecs_get_many of a table component, checked. Slots are fetched
** LOOKUP_AHEAD ids ahead (slot_ahead); a value is fetched as soon as its
** slot is read, so it is on its way while the rest of the batch is
** resolved. */
static void get_many_table(const tecs_world_t *w, tecs_comp_t c, const tecs_entity_t *ids,
                           int32_t n, const void **out)
{
    const tecs__record *recs = w->ei.recs;
    const uint32_t nrecs = (uint32_t)w->ei.nrecs, shift = w->arch.shift, mask = w->arch.mask;
    many_at m = { .arch = TECS__NO_SLOT };
    for (int32_t i = 0; i < n && i < LOOKUP_AHEAD; i++)
        slot_ahead(recs, nrecs, ids[i]);
    for (int32_t i = 0; i < n; i++) {
        if (i + LOOKUP_AHEAD < n)
            slot_ahead(recs, nrecs, ids[i + LOOKUP_AHEAD]);
        const tecs__record *r = tecs__ei_alive(w, ids[i]);
        const char *p = NULL;
        if (r) {
            uint32_t ai = r->arch & TECS__ARCH_MASK, row = r->row;
            if (TECS__UNLIKELY(ai != m.arch))
                many_at_set(w, c, ai, &m);
            if (row < m.run)
                p = m.base + (size_t)row * m.size;
            else if (m.cols)
                p = m.cols[(size_t)(row >> shift) * m.stride] + (size_t)(row & mask) * m.size;
            if (p)
                TECS__PREFETCH(p);
        }
        out[i] = p;
    }
}

/* tecs_get_many of a sparse component: entries fetched LOOKUP_AHEAD ids
** ahead (a member is alive: its entry's generation is the whole check). */
static void get_many_sparse(const tecs_world_t *w, tecs_comp_t c, const tecs_entity_t *ids,
                            int32_t n, const void **out)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    if (s == NULL) {
        for (int32_t i = 0; i < n; i++)
            out[i] = NULL;
        return;
    }
    for (int32_t i = 0; i < n && i < LOOKUP_AHEAD; i++) {
        const char *at = tecs__sparse_entry(s, TECS_ENTITY_INDEX(ids[i]));
        if (at)
            TECS__PREFETCH(at);
    }
    for (int32_t i = 0; i < n; i++) {
        if (i + LOOKUP_AHEAD < n) {
            const char *at = tecs__sparse_entry(s, TECS_ENTITY_INDEX(ids[i + LOOKUP_AHEAD]));
            if (at)
                TECS__PREFETCH(at);
        }
        out[i] = tecs__sparse_get_id(w, c, ids[i]);
    }
}

tecs_err_t tecs_get_many(tecs_world_t *w, tecs_comp_t c, const tecs_entity_t *ids, int32_t n,
                         const void **out)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = lookup_enter(w, "tecs_get_many", c);
    if (err)
        return err;
    if (n < 0 || (n > 0 && (ids == NULL || out == NULL)))
        return tecs__err(w, TECS_EINVAL, "tecs_get_many: %d ids at %p into %p", n,
                         (const void *)ids, (void *)out);
    if ((err = lookup_refused(w, "tecs_get_many", c)))
        return err;
    if (tecs__comp_is_sparse(w, c))
        get_many_sparse(w, c, ids, n, out);
    else
        get_many_table(w, c, ids, n, out);
    return TECS_OK;
}

/* ---- enabling -------------------------------------------------------- */

static TECS__NOINLINE tecs_err_t enable_slow(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                             bool enable);

tecs_err_t tecs_enable(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, bool enable)
{
    /* The common case calls nothing: a live entity that has c, nobody
    ** watching c, rows not in motion (no hook, no worker). */
    tecs__record *r;
    if (TECS__LIKELY(w != NULL && w->base.stop == 0 &&      /* open, no hook */
                     (r = tecs__ei_alive(w, e)) != NULL &&
                     !(w->base.defer_depth > 0 && (r->arch & TECS__REMOVE_QUEUED)))) {
        tecs_archetype_t *a = tecs__rec_arch(w, r);
        int32_t j = tecs__arch_tog(a, c);
        if (TECS__LIKELY(j >= 0 && w->comp.comps[c].watch == 0)) {
            w->base.err = TECS_OK;
            tecs__arch_bit_put(w, a, j, r->row, !enable);
            return TECS_OK;
        }
    }
    return enable_slow(w, e, c, enable);
}

static TECS__NOINLINE tecs_err_t enable_slow(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                             bool enable)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    if (w->base.defer_depth == 0) {
        err = tecs__enable_now(w, e, c, enable);
        tecs__settle(w);
        return err;
    }
    /* Deferred: no row moves, so it applies at once, unless rows are in
    ** motion (a lifecycle hook; a worker, whose hook depth is 1) or the
    ** entity gets c, or loses it, only when the queue applies. */
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r != NULL && w->base.hook_depth == 0 && !(r->arch & TECS__REMOVE_QUEUED) &&
        tecs__arch_tog(tecs__rec_arch(w, r), c) >= 0)
        return tecs__enable_now(w, e, c, enable);
    if ((err = tecs__enableable(w, c)) != TECS_OK)
        return err;
    return defer_known(w, enable ? TECS__OP_ENABLE : TECS__OP_DISABLE, e, c, NULL);
}

bool tecs_is_enabled(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    const tecs__record *r = w ? tecs__ei_alive(w, e) : NULL;
    if (r == NULL)
        return false;
    const tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t j = tecs__arch_tog(a, c);
    if (j >= 0)
        return !tecs__arch_bit(a, w, j, r->row);
    return tecs__arch_col(a, c) != TECS__COL_ABSENT;
}

/* ---- handles ---------------------------------------------------------- */

/* What a handle reads where its component's kind needs nothing: a count
** of none (slots for get: a table component's path is closed; pages: a
** sparse one's), an archetype no slot has, a chunk of no rows, a set with
** no pages and no listeners. */
static const int32_t no_slots = 0;
static const tecs_handle_run_t no_hot = { TECS__NO_HOT, 0, 0, &no_slots, NULL, { NULL, 0, 0 } };
static const tecs_handle_bits_t no_toghot = { TECS__TOGHOT_NONE, 0, 0, NULL };
static const tecs_handle_listen_t no_listen = { 0, 0, 0 };
static const tecs_handle_set_t no_set = { .listen_ = &no_listen };

/* May the first handle of c be made here (what it makes is made on an
** open world outside workers; a set or a toggled chunk not in a hook)? A
** worker's handle needs no toggled chunk (its changes queue). */
static tecs_err_t handle_may_make(tecs_world_t *w, const tecs_world_t *o, tecs_comp_t c)
{
    const tecs__comp *ci = &o->comp.comps[c];
    bool worker = tecs__in_worker(w);
    bool lut = !ci->sparse && ci->size > 0 && tecs__lut_find(&o->arch, c) == NULL;
    bool set = ci->sparse && ci->set == NULL;
    bool tog = ci->enableable && !worker && tecs__toghot_find(&o->arch, c) == NULL;
    if ((lut || set) && o->base.closed != TECS__OPEN)
        return tecs__err(w, TECS_EBUSY, "tecs_handle_init: the first handle of "
                         TECS__COMP_FMT " is made outside workers, on an open world",
                         TECS__COMP(w, c));
    if ((set || tog) && o->base.hook_depth > 0)
        return tecs__err(w, TECS_EBUSY, "tecs_handle_init: the first handle of "
                         TECS__COMP_FMT " cannot be made in a lifecycle hook",
                         TECS__COMP(w, c));
    return TECS_OK;
}

/* The lookup fields of a handle of c, a table component with a value. */
static tecs_err_t handle_table(tecs_world_t *o, tecs_comp_t c, tecs_handle_t *h)
{
    tecs__lut *t = tecs__lut_find(&o->arch, c);
    if (t == NULL && (t = tecs__lut_make(o, c)) == NULL)
        return TECS_ENOMEM;
    h->nget_ = &o->ei.nrecs;
    h->cols_ = (const tecs_handle_col_t *const *)&t->slots;
    h->ncols_ = &t->len;
    h->run_ = &t->hot;
    h->shift_ = o->arch.shift;
    h->mask_ = o->arch.mask;
    return TECS_OK;
}

tecs_err_t tecs_handle_init(tecs_world_t *w, tecs_comp_t c, tecs_handle_t *out)
{
    if (w == NULL)
        return TECS_EINVAL;
    if (tecs__enter_read(w))
        return TECS_EBUSY;
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    if (out == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_handle_init: NULL handle");
    /* A worker context's handle reads its world's tables, never the
    ** context's copy, and changes through the context (its gate is closed). */
    tecs_world_t *o = tecs__in_worker(w) ? w->base.owner : w;
    tecs_err_t err = handle_may_make(w, o, c);
    if (err)
        return err;
    const tecs__comp *ci = &o->comp.comps[c];
    tecs_handle_t h = {
        .slots_ = (const tecs_slot_t *const *)&o->ei.recs, .nslots_ = &o->ei.nrecs,
        .nget_ = &no_slots, .ncols_ = &no_slots, .run_ = &no_hot, .npages_ = &no_slots,
        .size_ = ci->size, .bits_ = &no_toghot, .gate_ = &w->base.hgate,
        .set_ = (tecs_handle_set_t *)(uintptr_t)&no_set,    /* never written */
        .tick_ = &o->arch.tick, .hooks_ = 3, .comp_ = c, .world_ = w };
    if (ci->sparse) {
        if (tecs__sparse_handle(o, c, &h))
            return TECS_ENOMEM;
        h.hooks_ = (ci->ctor != NULL) | (uint32_t)(ci->dtor != NULL) << 1;
    } else if (ci->size > 0 && (err = handle_table(o, c, &h))) {
        return err;
    }
    if (tecs__in_worker(w) && !tecs__worker_may(w, w->base.may_read, c))
        h.nget_ = h.npages_ = &no_slots;    /* the system does not read c */
    if (ci->enableable && !tecs__in_worker(w)) {
        tecs_handle_bits_t *made = tecs__toghot_find(&o->arch, c);
        if (made == NULL && (made = tecs__toghot_make(o, c)) == NULL)
            return TECS_ENOMEM;
        h.bits_ = made;
    }
    *out = h;
    return TECS_OK;
}

/* Open c's toggled chunk (if c has one) on e's chunk when the inline form
** can toggle c there: the world open and no hook running, nobody
** listening to c's events (a new listener closes it), e alive with
** nothing queued, c with a bit column and no tick column there, the
** chunk entered at the tick (the enable stamped it, or something did
** earlier in this tick), so that an inline toggle needs no stamp. */
static TECS__NOINLINE void toggle_learn(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    tecs_handle_bits_t *hot = tecs__toghot_find(&w->arch, c);
    const tecs__record *r = tecs__ei_alive(w, e);
    if (hot == NULL || w->base.stop != 0 || w->comp.comps[c].watch != 0 || r == NULL ||
        r->arch > TECS__ARCH_MASK)
        return;
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t j = tecs__arch_tog(a, c);
    if (j < 0 || tecs__arch_rt(a, c) >= 0 ||
        a->chunks[r->row >> w->arch.shift].entered != w->arch.tick)
        return;
    tecs__toghot_open(w, hot, a, j, r->row);
}

tecs_err_t tecs__handle_enable(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e, bool enable)
{
    tecs_err_t err = tecs_enable(w, e, c, enable);
    if (err == TECS_OK)
        toggle_learn(w, c, e);
    return err;
}

/* The ids from i on that the toggled chunk can take, toggled as
** tecs_handle_enable toggles them, with the world's tables read once for
** the stretch (no call in the loop, so nothing it reads changes): the
** index of the first id it cannot take, or n. The bits of one word are
** gathered and written when the ids move to another word, so that ids in
** row order do not wait on the store of the id before them. */
static int32_t toggle_stretch(const tecs_handle_t *h, const tecs_entity_t *ids, int32_t i,
                              int32_t n, bool enable)
{
    if (h->gate_->stop != 0)
        return i;
    const tecs__record *recs = *h->slots_;
    uint32_t nrecs = (uint32_t)*h->nslots_;
    const tecs_handle_bits_t hot = *h->bits_;
    uint64_t *at = hot.bits_, flip = 0;     /* the word gathered, its bits */
    for (; i < n; i++) {
        uint32_t s = (uint32_t)TECS_ENTITY_INDEX(ids[i]);
        if (s >= nrecs)
            break;
        const tecs__record *r = &recs[s];
        uint32_t b = r->row - hot.lo_;
        if (r->gen != TECS_ENTITY_GENERATION(ids[i]) || r->arch != hot.arch_ || b >= hot.n_)
            break;
        uint64_t *word = hot.bits_ + (b >> 6);
        if (word != at) {
            if (flip)
                *at = enable ? *at & ~flip : *at | flip;    /* set: disabled */
            at = word;
            flip = 0;
        }
        flip |= (uint64_t)1 << (b & 63);
    }
    if (flip)
        *at = enable ? *at & ~flip : *at | flip;
    return i;
}

/* The ids from i on that a handle's inline add takes (a live id, not a
** member, its page made, the member list neither empty nor full), joined
** with no call in the loop, so nothing changes under it but what
** tecs__sparse_join writes: the index of the first id left to tecs_add,
** or n. The gate is read once for the stretch. */
static int32_t sparse_add_stretch(const tecs_handle_t *h, const tecs_entity_t *ids,
                                  int32_t i, int32_t n)
{
    if (!tecs__handle_quiet(h) || (h->hooks_ & 1))
        return i;
    tecs_world_t *w = h->world_;
    tecs__sparse *s = (tecs__sparse *)(void *)h->set_;
    for (; i < n && s->count > 0 && s->count < s->cap; i++) {
        uint32_t slot = TECS_ENTITY_INDEX(ids[i]), p = slot >> s->shift, k = slot & s->mask;
        tecs__spage *pg;
        if (tecs__ei_alive(w, ids[i]) == NULL || p >= (uint32_t)s->npages ||
            (pg = s->pages[p]) == NULL)
            break;
        char *at = pg->ents + (size_t)k * s->stride;
        uint32_t gen;
        if ((memcpy(&gen, at, sizeof gen), gen != 0))          /* a member already */
            break;
        tecs__sparse_join(w, s, pg, k, at, ids[i]);
    }
    return i;
}

/* The ids from i on that a handle's inline remove takes (a member not the
** last of its page), left as sparse_add_stretch joins them: the index of
** the first id left to tecs_remove, or n. */
static int32_t sparse_remove_stretch(const tecs_handle_t *h, const tecs_entity_t *ids,
                                     int32_t i, int32_t n)
{
    if (!tecs__handle_quiet(h) || (h->hooks_ & 2))
        return i;
    tecs_world_t *w = h->world_;
    tecs__sparse *s = (tecs__sparse *)(void *)h->set_;
    for (; i < n; i++) {
        uint32_t slot = TECS_ENTITY_INDEX(ids[i]), p = slot >> s->shift, k = slot & s->mask;
        tecs__spage *pg;
        if (p >= (uint32_t)s->npages || (pg = s->pages[p]) == NULL || pg->count <= 1)
            break;
        char *at = pg->ents + (size_t)k * s->stride;
        if (!tecs__sparse_is(at, ids[i]))
            break;
        tecs__sparse_leave(w, s, pg, k, at);
    }
    return i;
}

/* tecs_handle_add_many and _remove_many: stretches of the inline form,
** each id between them through the call (add true: tecs_add). */
static tecs_err_t sparse_many(const tecs_handle_t *h, const tecs_entity_t *ids, int32_t n,
                              bool add, int32_t *done)
{
    if (done)
        *done = 0;
    if (h == NULL || h->world_ == NULL)
        return TECS_EINVAL;
    if (n < 0 || (n > 0 && ids == NULL))
        return tecs__err(h->world_, TECS_EINVAL, "%s: %d ids at %p",
                         add ? "tecs_handle_add_many" : "tecs_handle_remove_many", n,
                         (const void *)ids);
    for (int32_t i = 0;; i++) {
        i = add ? sparse_add_stretch(h, ids, i, n) : sparse_remove_stretch(h, ids, i, n);
        if (i == n)
            break;
        tecs_err_t err = add ? tecs_add(h->world_, ids[i], h->comp_)
                             : tecs_remove(h->world_, ids[i], h->comp_);
        if (err != TECS_OK) {
            if (done)
                *done = i;
            return err;
        }
    }
    if (done)
        *done = n;
    h->world_->base.err = TECS_OK;
    return TECS_OK;
}

tecs_err_t tecs_handle_add_many(const tecs_handle_t *h, const tecs_entity_t *ids, int32_t n,
                                int32_t *done)
{
    return sparse_many(h, ids, n, true, done);
}

tecs_err_t tecs_handle_remove_many(const tecs_handle_t *h, const tecs_entity_t *ids,
                                   int32_t n, int32_t *done)
{
    return sparse_many(h, ids, n, false, done);
}

tecs_err_t tecs_handle_enable_many(const tecs_handle_t *h, const tecs_entity_t *ids,
                                   int32_t n, bool enable, int32_t *done)
{
    if (done)
        *done = 0;
    if (h == NULL || h->world_ == NULL)
        return TECS_EINVAL;
    if (n < 0 || (n > 0 && ids == NULL))
        return tecs__err(h->world_, TECS_EINVAL, "tecs_handle_enable_many: %d ids at %p", n,
                         (const void *)ids);
    for (int32_t i = 0; (i = toggle_stretch(h, ids, i, n, enable)) < n; i++) {
        tecs_err_t err = tecs__handle_enable(h->world_, h->comp_, ids[i], enable);
        if (err != TECS_OK) {
            if (done)
                *done = i;
            return err;
        }
    }
    if (done)
        *done = n;
    h->world_->base.err = TECS_OK;
    return TECS_OK;
}

/* ---- ticks ------------------------------------------------------------ */

/* The tick kept for e's c: of the last write (added: of the last row or
** member that came), or 0. */
static uint64_t tick_of(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, bool added)
{
    const tecs__record *r = w ? tecs__ei_alive(w, e) : NULL;
    if (r == NULL)
        return 0;
    if (tecs__comp_is_sparse(w, c)) {
        const tecs__sparse *s = w->comp.comps[c].set;
        if (tecs__sparse_get_id(w, c, e) == NULL)
            return 0;
        return added || s->added > s->changed ? s->added : s->changed;
    }
    const tecs_archetype_t *a = tecs__rec_arch(w, r);
    if (tecs__arch_col(a, c) == TECS__COL_ABSENT)
        return 0;
    return tecs__arch_row_tick(w, a, c, r->row, added);
}

uint64_t tecs_changed_tick(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return tick_of(w, e, c, false);
}

uint64_t tecs_added_tick(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    return tick_of(w, e, c, true);
}

uint64_t tecs_world_tick(const tecs_world_t *w)
{
    return w ? w->arch.tick : 0;
}

uint64_t tecs_world_tick_advance(tecs_world_t *w)
{
    if (w == NULL)
        return 0;
    if (tecs__in_worker(w) || w->base.closed == TECS__FREEING) {
        tecs__err(w, TECS_EBUSY, "tecs_world_tick_advance: not from a worker or while the "
                  "world is freed");
        return 0;
    }
    return tecs__arch_tick_next(&w->arch);
}

tecs_entity_state_t tecs_entity_state(const tecs_world_t *w, tecs_entity_t e)
{
    const tecs__record *r = w ? tecs__ei_known(w, e) : NULL;
    if (r == NULL)
        return TECS_ENTITY_DEAD;
    if (r->arch == TECS__ARCH_PENDING)
        return TECS_ENTITY_PENDING;
    return r->arch & (TECS__KILL_QUEUED | TECS__DESTROY_QUEUED) ? TECS_ENTITY_DOOMED
                                                                 : TECS_ENTITY_ALIVE;
}

tecs_archetype_t *tecs_entity_archetype(tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL || tecs__enter_read(w))
        return NULL;
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL) {
        tecs__err_dead(w, e);
        return NULL;
    }
    return tecs__rec_arch(w, r);
}
