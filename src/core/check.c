/*
** check.c — the structure checker behind tecs_world_check.
**
** It re-derives every invariant the other layers keep, from scratch:
**
**   records   each live slot points at a row whose entity column holds its
**             id; counts of live, pending and free slots add up; the free
**             list is FIFO-linked through dead slots only;
**   archetypes each is found in the hash table under its ids; cmap agrees
**             with the sorted component list; enough chunks for the rows;
**             each bit column's count of set bits, none past the rows;
**   edges     edge_add[c] / edge_rem[c] lead to the set with / without c;
**   lookups   each lookup table covers every archetype, each entry where
**             its component's column is in the chunk table now;
**   sparse    each sparse set's pages and member list agree, members live
**             (tecs__sparse_verify, sparse.c);
**   queries   each query's matches equal a fresh match, in creation order;
**   iterations none is open (TECS_EBUSY: a check where none should be finds
**             one left open), none was ended twice since the last check
**             (TECS_EINVAL, reported once).
**
** It is O(size of the world) and meant for tests and debug builds. The
** query layer verifies its own structure (tecs__queries_verify), and each
** add-on its own through its listener's verify (indexes, observers,
** resources, systems); this file verifies the layers below and calls
** those. It sits above every core layer it verifies, below world.c.
*/
#include "private.h"

static tecs_err_t check_bad(tecs_world_t *w, const char *what, uint32_t n)
{
    return tecs__err(w, TECS_ECORRUPT, "structure check: %s (%u)", what, n);
}

static tecs_err_t verify_records(tecs_world_t *w)
{
    int32_t alive = 0, pending = 0, dead = 0;
    for (int32_t i = 0; i < w->ei.nrecs; i++) {
        const tecs__record *r = &w->ei.recs[i];
        if (r->gen == 0)
            return check_bad(w, "generation 0", (uint32_t)i);
        if (r->arch == TECS__ARCH_PENDING) {
            pending++;
        } else if (r->arch == TECS__ARCH_DEAD) {
            dead++;
        } else if (r->arch != TECS__ARCH_RETIRED) {
            uint32_t ai = r->arch & TECS__ARCH_MASK;
            uint32_t flags = TECS__KILL_QUEUED |
                (w->cmd.deferred.count ? TECS__REMOVE_QUEUED | TECS__DESTROY_QUEUED : 0);
            if (ai >= (uint32_t)w->arch.narchs || (r->arch & ~(TECS__ARCH_MASK | flags)))
                return check_bad(w, "record names no archetype", (uint32_t)i);
            const tecs_archetype_t *a = w->arch.archs[ai];
            if (r->row >= (uint32_t)a->count ||
                *tecs__ent_ptr(a, w, r->row) != tecs__make_id((uint32_t)i, r->gen))
                return check_bad(w, "record and row disagree", (uint32_t)i);
            alive++;
        }
    }
    if (alive != w->ei.nalive || pending != w->ei.npending || dead != w->ei.nfree)
        return check_bad(w, "entity counts", (uint32_t)alive);
    int32_t n = 0;
    uint32_t last = TECS__NO_SLOT;
    for (uint32_t i = w->ei.free_head; i != TECS__NO_SLOT; i = w->ei.recs[i].row, n++) {
        if (i >= (uint32_t)w->ei.nrecs || w->ei.recs[i].arch != TECS__ARCH_DEAD || n > w->ei.nfree)
            return check_bad(w, "free list", i);
        last = i;
    }
    if (n != w->ei.nfree || last != w->ei.free_tail)
        return check_bad(w, "free list length", (uint32_t)n);
    return TECS_OK;
}

static tecs_err_t verify_rows(tecs_world_t *w, const tecs_archetype_t *a)
{
    int32_t used = (int32_t)(((uint32_t)a->count + w->arch.mask) >> w->arch.shift);
    if (a->nchunks < used)
        return check_bad(w, "too few chunks", a->id);
    for (int32_t r = 0; r < a->count; r++) {
        tecs_entity_t e = *tecs__ent_ptr(a, w, (uint32_t)r);
        const tecs__record *rec = tecs__ei_alive(w, e);
        if (rec == NULL || (rec->arch & TECS__ARCH_MASK) != a->id || rec->row != (uint32_t)r)
            return check_bad(w, "row holds a stale entity", a->id);
    }
    /* Bit columns: ndisabled counts the set bits (a loose column counts
    ** them itself); rows not in use have none. */
    if (a->ntog < 64 && (a->tog_loose >> a->ntog) != 0)
        return check_bad(w, "a loose bit past the bit columns", a->id);
    for (int32_t j = 0; j < a->ntog; j++) {
        int64_t set = 0;
        for (int32_t k = 0; k < a->nchunks; k++) {
            const uint64_t *bits = tecs__chunk_bits(a, tecs__kcols(a, (uint32_t)k), j);
            for (uint32_t i = 0; i < a->tog_bytes / 8; i++) {
                int64_t row = ((int64_t)k << w->arch.shift) + (int64_t)i * 64;
                int64_t n = a->count - row;         /* rows of this word in use */
                if (n > (int64_t)w->arch.rows - (int64_t)i * 64)
                    n = (int64_t)w->arch.rows - (int64_t)i * 64;
                uint64_t live = n <= 0 ? 0 : n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
                if (bits[i] & ~live)
                    return check_bad(w, "a bit set past the rows in use", a->id);
                set += TECS__POP64(bits[i]);
            }
        }
        if (set != tecs__arch_ndisabled(w, a, j))
            return check_bad(w, "disabled count and bits disagree", a->id);
    }
    return TECS_OK;
}

static tecs_err_t verify_maps(tecs_world_t *w, const tecs_archetype_t *a)
{
    int32_t cols = 0;
    for (int32_t i = 0; i < a->ncomps; i++) {
        if (i > 0 && a->comps[i] <= a->comps[i - 1])
            return check_bad(w, "components not sorted", a->id);
        int32_t col = tecs__arch_col(a, a->comps[i]);
        bool tag = w->comp.comps[a->comps[i]].size == 0;
        if (tag ? col != TECS__COL_TAG : (col < 0 || a->col_comp[col] != a->comps[i]))
            return check_bad(w, "column map", a->id);
        cols += !tag;
    }
    if (cols != a->ncols)
        return check_bad(w, "column count", a->id);
    tecs_archetype_t *found = tecs__arch_get(w, a->ncomps, a->comps);
    if (found != a)
        return check_bad(w, "hash table", a->id);
    return TECS_OK;
}

/* b is a plus c (adding) or a minus c. */
static bool edge_ok(const tecs_archetype_t *a, const tecs_archetype_t *b, tecs_comp_t c, bool add)
{
    if (b->ncomps != a->ncomps + (add ? 1 : -1))
        return false;
    const tecs_archetype_t *big = add ? b : a, *small = add ? a : b;
    if (tecs__arch_col(big, c) == TECS__COL_ABSENT || tecs__arch_col(small, c) != TECS__COL_ABSENT)
        return false;
    for (int32_t i = 0; i < small->ncomps; i++)
        if (tecs__arch_col(big, small->comps[i]) == TECS__COL_ABSENT)
            return false;
    return true;
}

static tecs_err_t verify_edges(tecs_world_t *w, const tecs_archetype_t *a)
{
    for (int32_t c = 0; c < a->nedges; c++) {
        if (a->edge_add[c] != TECS__NO_EDGE &&
            (a->edge_add[c] >= (uint32_t)w->arch.narchs ||
             !edge_ok(a, w->arch.archs[a->edge_add[c]], (tecs_comp_t)c, true)))
            return check_bad(w, "add edge", a->id);
        if (a->edge_rem[c] != TECS__NO_EDGE &&
            (a->edge_rem[c] >= (uint32_t)w->arch.narchs ||
             !edge_ok(a, w->arch.archs[a->edge_rem[c]], (tecs_comp_t)c, false)))
            return check_bad(w, "remove edge", a->id);
    }
    return TECS_OK;
}

/* A table's hot entry: an archetype with the column, its entry as in the
** table, and a run within its first chunk group starting at row 0's value.
** True if it is wrong. */
static bool verify_hot(const tecs_world_t *w, const tecs__lut *t)
{
    const tecs_handle_run_t *h = &t->hot;
    if (h->arch_ >= (uint32_t)t->len || tecs__arch_col(w->arch.archs[h->arch_], t->comp) < 0)
        return true;
    const tecs_archetype_t *a = w->arch.archs[h->arch_];
    const tecs_handle_col_t *s = &t->slots[h->arch_];
    if (h->col_.cols_ != s->cols_ || h->col_.stride_ != s->stride_ ||
        h->col_.size_ != s->size_)
        return true;
    if (h->count_ != &a->count)
        return true;
    if (h->run_ == 0)
        return false;
    return a->nchunks == 0 || h->run_ != a->chunks[0].g << w->arch.shift ||
           h->base_ != (uintptr_t)s->cols_[0] || (const void *)h->ids_ != a->cols[0];
}

/* Lookup tables (tecs_handle_get reads them inline): one entry per archetype,
** each as lut_slot would make it now; the hot entry. */
static tecs_err_t verify_luts(tecs_world_t *w)
{
    for (int32_t c = 0; c < w->arch.cap_luts; c++) {
        const tecs__lut *t = w->arch.luts[c];
        if (t == NULL)
            continue;
        if (t->comp != (tecs_comp_t)c || t->len != w->arch.narchs || t->cap < t->len)
            return check_bad(w, "lookup table length", (uint32_t)c);
        for (int32_t i = 0; i < t->len; i++) {
            const tecs_archetype_t *a = w->arch.archs[i];
            const tecs_handle_col_t *s = &t->slots[i];
            int32_t col = tecs__arch_col(a, t->comp);
            if (col >= 0 && a->cols != NULL
                    ? s->cols_ != a->cols + 1 + col || s->stride_ != (uint32_t)a->stride ||
                      s->size_ != a->col_size[col]
                    : s->cols_[0] != NULL || s->stride_ != 0 || s->size_ != 0)
                return check_bad(w, "lookup table entry", (uint32_t)i);
        }
        if (t->hot.arch_ != TECS__NO_HOT && verify_hot(w, t))
            return check_bad(w, "lookup table hot entry", (uint32_t)c);
    }
    return TECS_OK;
}

/* The gate word (the short structural paths read it): each bit as the
** state it mirrors says. */
static tecs_err_t verify_gate(tecs_world_t *w)
{
    tecs__base b = w->base;
    tecs__stop_sync(&b);
    tecs__gate_put(&b, TECS__GATE_MOVES, w->bus.watch_moves);
    tecs__gate_put(&b, TECS__GATE_COMPS, w->bus.watch_comps);
    tecs__gate_put(&b, TECS__GATE_SPARSE, w->sparse.nfilled > 0);
    tecs__gate_put(&b, TECS__GATE_DESTROY, w->bus.watch_destroys);
    if (b.gate != w->base.gate)
        return check_bad(w, "the gate word disagrees with the states it mirrors", w->base.gate);
    return TECS_OK;
}

/* The short paths of toggle handles (tecs_handle_enable writes through them
** inline): one per component, of an enableable one; an open one is a
** chunk of an archetype with the component's bit column, loose, and
** without a tick column of it, at that chunk's bits,
** the chunk entered at the tick (so a toggle there needs no stamp), and
** nobody listens to the component's events. */
static tecs_err_t verify_toghots(tecs_world_t *w)
{
    tecs__base b = w->base;
    tecs__stop_sync(&b);
    if (b.stop != w->base.stop)
        return check_bad(w, "the stop word disagrees with closed and the hook depth", 0);
    for (int32_t i = 0; i < w->arch.ntoghots; i++) {
        const tecs__toghot *t = w->arch.toghots[i];
        const tecs_handle_bits_t *h = &t->hot;
        const tecs__comp *ci = tecs__comp_get(w, t->comp);
        if (ci == NULL || !ci->enableable || tecs__toghot_find(&w->arch, t->comp) != h)
            return check_bad(w, "toggle short path of no enableable component", (uint32_t)i);
        if (h->n_ == 0) {
            if (h->arch_ != TECS__TOGHOT_NONE || h->bits_ != NULL)
                return check_bad(w, "closed toggle short path", (uint32_t)i);
            continue;
        }
        const tecs_archetype_t *a = h->arch_ < (uint32_t)w->arch.narchs
                                    ? w->arch.archs[h->arch_] : NULL;
        int32_t j = a ? tecs__arch_tog(a, t->comp) : -1;
        uint32_t k = h->lo_ >> w->arch.shift;
        if (j < 0 || !tecs__arch_loose(a, j) || tecs__arch_rt(a, t->comp) >= 0 || ci->watch ||
            h->n_ != w->arch.rows || h->lo_ != k << w->arch.shift ||
            k >= (uint32_t)a->nchunks ||
            h->bits_ != tecs__chunk_bits(a, tecs__kcols(a, k), j) ||
            a->chunks[k].entered != w->arch.tick)
            return check_bad(w, "open toggle short path", (uint32_t)i);
    }
    return TECS_OK;
}

/* A component's veto count is kept by the listeners that veto changes;
** while none does, every count is 0. */
static tecs_err_t verify_vetoes(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_veto)
            return TECS_OK;
    for (int32_t c = 1; c < w->comp.cap_comps; c++)
        if (w->comp.comps[c].veto != 0)
            return tecs__err(w, TECS_ECORRUPT, "component %d: veto count off", c);
    return TECS_OK;
}

/* Iterations: none left open, none ended twice (reported once). */
static tecs_err_t verify_iters(tecs_world_t *w)
{
    if (w->query.niters > 0)
        return tecs__err(w, TECS_EBUSY, "%d iteration(s) are open", (int)w->query.niters);
    if (w->query.iters_twice > 0) {
        int32_t n = w->query.iters_twice;
        w->query.iters_twice = 0;
        return tecs__err(w, TECS_EINVAL, "%d iteration(s) were ended twice, by copies of "
                         "an iterator", (int)n);
    }
    return TECS_OK;
}

tecs_err_t tecs_world_check(tecs_world_t *w)
{
    if (w == NULL)
        return TECS_EINVAL;
    if (tecs__enter(w))
        return w->base.err;
    tecs_err_t err = verify_records(w);
    for (int32_t i = 0; i < w->arch.narchs && !err; i++) {
        const tecs_archetype_t *a = w->arch.archs[i];
        if (a->id != (uint32_t)i || a->world != w)
            return check_bad(w, "archetype id", (uint32_t)i);
        if ((err = verify_rows(w, a)) || (err = verify_maps(w, a)) || (err = verify_edges(w, a)))
            return err;
    }
    if (!err)
        err = verify_luts(w);
    if (!err)
        err = verify_gate(w);
    if (!err)
        err = verify_toghots(w);
    if (!err)
        err = tecs__sparse_verify(w);
    if (!err)
        err = tecs__queries_verify(w);
    if (!err)
        err = verify_vetoes(w);
    for (int32_t i = 0; i < w->bus.nlisteners && !err; i++)
        if (w->bus.listeners[i].verify)
            err = w->bus.listeners[i].verify(w, w->bus.listeners[i].ctx);
    return err ? err : verify_iters(w);
}
