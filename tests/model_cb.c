/*
** model_cb.c — the interpreter's checks of what issue #17 found: callbacks
** that call back into the world, ordered caches, copied iterators, frees
** while busy, the memory bound (see model.c for the model itself).
*/
#include "model_int.h"

#if TECS_HAS_INDEX
/* Is cache mc iterated: 0 no, 1 yes, 2 maybe (mi_it_open). */
static int cache_iterated(const interp *I, const mcache *mc);
#endif

static const char *const cb_name[NCB] = { "a lifecycle hook", "a component hook",
                                          "an observer", "a cache member callback" };
static const uint32_t cb_feature[NCB] = { MF_LIFE, MF_HOOKS, MF_OBS, MF_CACHECB };

/* ---- callbacks that call back ------------------------------------------------------ */

/*
** Every callback the library runs for the program (the lifecycle hooks of
** H, the component hooks an op installs, the observers, a cache's on_enter
** and on_leave) first checks that the world is deferred, then, while its
** kind has budget left in this step, runs the body the program chose for
** that kind (op_body). A body makes structural changes (queued: not visible
** inside, pushed on the model's deferred queue in call order, so the model
** applies them where the library does), creates and frees indexes, queries,
** caches and filters (refused in lifecycle hooks), or calls what is refused
** in every callback. A failed check inside a callback is recorded (failf
** does not jump out of the library there) and reported after the step.
*/

/* The result of a call inside a callback: want, ENOMEM when an allocation
** was made to fail, or with `loose` TECS_OK or TECS_EDEAD (the model learns
** who died in a flush only after it). @return true if it succeeded. */
static bool cb_result(interp *I, int got, int want, bool loose, const char *what, int kind)
{
    I->cb_errs += got != TECS_OK && I->in_body > 0;
    if (got == want || (loose && (got == TECS_OK || got == TECS_EDEAD))) {
        if (got == TECS_OK && on(I, MF_LASTERR) && tecs_last_error(I->w) != TECS_OK &&
            !mi_drop_report(I))
            mi_failf(I, "%s in %s succeeded but the last error is %s", what, cb_name[kind],
                  tecs_err_name(tecs_last_error(I->w)));
        return got == TECS_OK;
    }
    if (got == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;
        return false;
    }
    mi_failf(I, "%s in %s: got %s, model says %s (%s)", what, cb_name[kind],
          tecs_err_name((tecs_err_t)got), tecs_err_name((tecs_err_t)want),
          tecs_last_error_msg(I->w));
    return false;
}

static void body_new(interp *I, int kind)
{
    if (I->ne >= MAXE)
        return;
    tecs_entity_t id = tecs_new(I->w);
    if (!cb_result(I, mi_got_err(I, id != 0), TECS_OK, false, "tecs_new", kind))
        return;
    EXPECT(I, !tecs_is_alive(I->w, id), "an entity made in %s is alive at once", cb_name[kind]);
    m_add_ent(I, id, ST_PEND, 0);
    mi_push_dq(I, &(mcmd){ .op = Q_NEW, .id = id });
}

static void body_destroy(interp *I, int kind, uint32_t z)
{
    tecs_entity_t id = mi_pick_id(I, z);
    bool alive = tecs_is_alive(I->w, id);
    if (!cb_result(I, tecs_destroy(I->w, id), TECS_OK, true, "tecs_destroy", kind))
        return;
    EXPECT(I, tecs_is_alive(I->w, id) == alive, "tecs_destroy in %s acts at once",
           cb_name[kind]);
    mi_push_dq(I, &(mcmd){ .op = Q_DESTROY, .id = id });
}

/* tecs_add or tecs_remove of a component of some entity. */
/* tecs_enable from a lifecycle hook, where it always queues (rows are in
** motion), on an entity alive with no change queued, and not while a queue
** applies. Elsewhere a callback's tecs_enable applies at once to the
** entity as the library has it then, which the model learns only after the
** call that ran the callback: op_enable checks the calls made outside. */
static void body_enable(interp *I, int kind, uint32_t z)
{
    int c = z >> 12 & 7 ? (z >> 11 & 1 ? C_T2 : C_V) : (int)((z >> 8) % NC);
    tecs_entity_t id = mi_pick_id(I, z);
    ment *m = mi_find(I, id);
    if (kind != CB_LIFE || I->w->cmd.flushing || m == NULL || m->st != ST_ALIVE ||
        !tecs_is_alive(I->w, id))       /* (a destroy's cleanup may have taken it) */
        return;
    for (int32_t i = 0; i < I->ndq; i++)
        if (I->dq[i].id == id)
            return;
    bool on = z >> 16 & 1, tog = TOG_MASK >> c & 1;
    if (!cb_result(I, tecs_enable(I->w, id, I->cid[c], on), tog ? TECS_OK : TECS_EINVAL, false,
                   "tecs_enable", kind) || !tog)
        return;
    mi_push_dq(I, &(mcmd){ .op = on ? Q_ENABLE : Q_DISABLE, .id = id, .comp = c });
}

static void body_change(interp *I, int kind, uint32_t z, bool rm)
{
    if (!rm && kind == CB_LIFE && (z >> 20 & 3) == 0) {
        body_enable(I, kind, z);
        return;
    }
    int c = (int)((z >> 8) % NC);
    tecs_entity_t id = mi_pick_id(I, z);
    bool has = tecs_has(I->w, id, I->cid[c]);
    int err = rm ? tecs_remove(I->w, id, I->cid[c]) : tecs_add(I->w, id, I->cid[c]);
    if (!cb_result(I, err, TECS_OK, true, rm ? "tecs_remove" : "tecs_add", kind))
        return;
    EXPECT(I, tecs_has(I->w, id, I->cid[c]) == has, "%s of %s in %s acts at once",
           rm ? "tecs_remove" : "tecs_add", cname[c], cb_name[kind]);
    mi_push_dq(I, &(mcmd){ .op = rm ? Q_REMOVE : Q_ADD, .id = id, .comp = c });
    ment *m = mi_find(I, id);
    if (rm && m && m->st == ST_ALIVE)
        m->rmq = true;
}


/* Create or free an index, a query, a cache, a filter: allowed in
** component hooks and observers, refused (TECS_EBUSY) in lifecycle hooks.
** Without the index add-on only queries. */
static void body_resource(interp *I, int kind, uint32_t z)
{
    bool life = kind == CB_LIFE;
    uint32_t r = z >> 8;
    switch (z % 8) {
    case 2:
        if (I->nq < MAXQ)
            mi_query_new(I, 1 + (int32_t)(r % 4), r, life);
        break;
    case 3:
        if (I->nq)
            mi_query_free(I, (int32_t)(r % (uint32_t)I->nq), life);
        break;
#if TECS_HAS_INDEX
    case 0:
    case 7:
        if (I->nix < MAXIX &&
            (r >> 3 & 1 ? mi_index_new_by_name : mi_index_new)(I, (int)(r % 3), r >> 2 & 1,
                                                               life ? TECS_EBUSY : TECS_OK) &&
            z % 8 == 7)
            mi_index_free(I, I->nix - 1, false);
        break;
    case 1:
        if (I->nix)
            mi_index_free(I, (int32_t)(r % (uint32_t)I->nix), life);
        break;
    case 4:
        if (I->nq && I->ncs < MAXC && on(I, MF_CACHE))
            mi_cache_new(I, (int32_t)(r % (uint32_t)I->nq), r >> 4, life);
        break;
    case 5:
        if (I->ncs)
            mi_cache_free(I, (int32_t)(r % (uint32_t)I->ncs), life);
        break;
    default: {
        tecs_filter_t *fl = tecs_filter_new(I->w);
        if (mi_result_is(I, mi_got_err(I, fl != NULL), life ? TECS_EBUSY : TECS_OK, "tecs_filter_new") ||
            fl == NULL)
            return;
        if (I->nix) {
            int f = I->ixs[0].field;
            tecs_cond_t c = tecs_filter_cmp(fl, I->ixs[0].ix, TECS_EQ,
                                            mi_key_of(f, mi_pick_key(I, f, r)));
            mi_result_is(I, mi_got_err(I, c >= 0), TECS_OK, "tecs_filter_cmp");
        }
        tecs_filter_free(fl);
    }
#endif
    }
}

/* What every callback refuses: tecs_world_free, tecs_progress,
** tecs_delayed_apply_new; TECS_EBUSY and nothing changed. */
static void body_refused(interp *I, int kind, uint32_t z)
{
    int which = (int)(z % 3);
    if (which == 0 && !on(I, MF_WFREE))
        which = 1;
    if (which > 0 && !on(I, MF_REFUSE))
        return;
    int32_t n0 = tecs_world_entity_count(I->w), p0 = tecs_delayed_new_count(I->w);
    static const char *const what[3] = { "tecs_world_free", "tecs_progress",
                                        "tecs_delayed_apply_new" };
    int err;
    if (which == 0) {
        err = (int)tecs_world_free(I->w);
        EXPECT(I, (int)tecs_last_error(I->w) == err, "tecs_world_free in %s returned %s, last error %s",
               cb_name[kind], tecs_err_name((tecs_err_t)err), tecs_err_name(tecs_last_error(I->w)));
    } else if (which == 1) {
#if TECS_HAS_SYSTEM
        err = tecs_progress(I->w, 0.0);
#else
        return;                 /* no systems: no frame to refuse */
#endif
    } else {
        err = tecs_delayed_apply_new(I->w);
    }
    cb_result(I, err, TECS_EBUSY, false, what[which], kind);
    EXPECT(I, tecs_world_entity_count(I->w) == n0 && tecs_delayed_new_count(I->w) == p0,
           "a refused %s in %s changed the world", what[which], cb_name[kind]);
}

/* A cache's own on_enter / on_leave frees it: TECS_OK, in effect once the
** callback returns. */
static void body_free_own(interp *I, mcache *own)
{
#if TECS_HAS_INDEX
    for (int32_t k = 0; k < I->ncs; k++)
        if (I->cs[k] == own)
            mi_cache_free(I, k, false);
#else
    (void)I, (void)own;         /* no caches: never called */
#endif
}

static void do_body(interp *I, int kind, mcache *own)
{
    uint32_t z = (uint32_t)mi_mix(I->body[kind].z + I->bodyn++);
    int act = I->body[kind].act % 8;
    bool structural = act != 5 && act != 6 && !(act == 7 && own);
    if (structural && (I->in_apply || !on(I, MF_STRUCT)))
        return;
    switch (act) {
    case 1: body_new(I, kind); break;
    case 2: body_destroy(I, kind, z); break;
    case 3: body_change(I, kind, z, false); break;
    case 4: body_change(I, kind, z, true); break;
    case 5: if (on(I, MF_RES)) body_resource(I, kind, z); break;
    case 6: body_refused(I, kind, z); break;
    case 7:
        if (own)
            body_free_own(I, own);
        else
            body_change(I, kind, z, false);
        break;
    default: break;
    }
}

/* While tecs_world_free runs every call that can fail is refused. */
static void freeing_body(interp *I, int kind, uint32_t z)
{
    static const char *const what[5] = { "tecs_new", "tecs_filter_new", "tecs_index_new",
                                         "tecs_progress", "tecs_query_all" };
    int k = (int)(z % 5);
    bool made;
    switch (k) {
    case 0: made = tecs_new(I->w) != 0; break;
#if TECS_HAS_INDEX
    case 1: made = tecs_filter_new(I->w) != NULL; break;
    case 2: made = tecs_index_new(I->w, &(tecs_index_desc_t){ .comp = I->cid[C_A],
                                  .type = TECS_KEY_I32 }) != NULL; break;
#endif
#if TECS_HAS_SYSTEM
    case 3: made = tecs_progress(I->w, 0.0) == TECS_OK; break;
#endif
    case 4: made = tecs_query_all(I->w, 1, &I->cid[C_A]) != NULL; break;
    default: return;            /* the call of an add-on that is not built */
    }
    I->cb_errs++;
    EXPECT(I, !made && tecs_last_error(I->w) == TECS_EBUSY,
           "%s in %s while the world is freed: %s, last error %s", what[k], cb_name[kind],
           made ? "done" : "refused", tecs_err_name(tecs_last_error(I->w)));
}

#if TECS_HAS_RESOURCE
static void resource_body(interp *I, int kind, uint32_t z);
static void freeing_resource_body(interp *I, int kind);
#endif

void mi_run_body(interp *I, int kind, mcache *own)
{
    if ((I->off & cb_feature[kind]) || I->in_body || I->w == NULL)
        return;
    I->in_body++;
    bool go = I->body[kind].act != 0 && I->budget[kind] > 0 && !I->checking;
    if (go)
        I->budget[kind]--;
    if (I->freeing) {
        if (go && on(I, MF_FREEING))
            freeing_body(I, kind, (uint32_t)mi_mix(I->body[kind].z + I->bodyn++));
#if TECS_HAS_RESOURCE
        if (go && I->rbody[kind])
            freeing_resource_body(I, kind);
#endif
    } else {
        EXPECT(I, tecs_is_deferred(I->w) || !on(I, MF_DEFCHK),
               "tecs_is_deferred is false inside %s", cb_name[kind]);
        if (go) {
            I->cur_kind = kind;
            do_body(I, kind, own);
#if TECS_HAS_RESOURCE
            if (I->rbody[kind])
                resource_body(I, kind, (uint32_t)mi_mix(I->body[kind].z + I->bodyn++));
#endif
            if (I->pbody[kind])
                mr_body(I, kind, (uint32_t)mi_mix(I->body[kind].z + I->bodyn++));
        }
    }
    I->in_body--;
}

/* H's lifecycle hooks: the counting hooks of hooks.h, then the body. */
/* The body of a lifecycle hook of H handling the values at p. */
static void life_body(interp *I, void *p)
{
    void *outer = I->life_ptr;
    I->life_ptr = p;
    mi_run_body(I, CB_LIFE, NULL);
    I->life_ptr = outer;
}

void h_ctor(void *dst, int32_t n, void *ctx)
{
    interp *I = ctx;
    obj_ctor(dst, n, &I->hc);
    life_body(I, dst);
}

void h_dtor(void *ptr, int32_t n, void *ctx)
{
    interp *I = ctx;
    obj_dtor(ptr, n, &I->hc);
    life_body(I, ptr);
}

void h_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    interp *I = ctx;
    obj_copy(dst, src, n, &I->hc);
    life_body(I, dst);
}

void h_move(void *dst, void *src, int32_t n, void *ctx)
{
    interp *I = ctx;
    obj_move(dst, src, n, &I->hc);
    life_body(I, dst);
}

#if TECS_HAS_OBSERVER
static void hook_fn(const tecs_event_t *ev)
{
    mi_run_body(ev->ctx, CB_HOOK, NULL);
}

/* Give one of A, T1, B, H on_add / on_set / on_remove hooks, or take them. */
void op_hooks(interp *I, const m_op *op)
{
    static const int hc[4] = { C_A, C_T1, C_B, C_H };
    if (!on(I, MF_HOOKS))
        return;
    int c = hc[op->x % 4];
    tecs_hooks_t h = { .on_add = hook_fn, .on_set = csize[c] ? hook_fn : NULL,
                       .on_remove = hook_fn, .ctx = I };
    mi_result_is(I, tecs_component_hooks(I->w, I->cid[c], op->y % 4 == 0 ? NULL : &h), TECS_OK,
              "tecs_component_hooks");
}
#endif /* TECS_HAS_OBSERVER */

/* Choose what the callbacks of one kind do from now on. */
void op_body(interp *I, const m_op *op)
{
    int kind = op->x % NCB;
    I->body[kind].act = (uint8_t)(op->y % 8);
    I->body[kind].z = op->z;
}

/* ---- caches ------------------------------------------------------------------------ */

#if TECS_HAS_INDEX

/* Order by the key component's bytes, ties by id; the model sorts alike. */
static int cache_order(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    const mcache *mc = ctx;
    const void *pa = tecs_get(w, a, mc->I->cid[mc->key]);
    const void *pb = tecs_get(w, b, mc->I->cid[mc->key]);
    int r = pa && pb ? memcmp(pa, pb, csize[mc->key]) : (pa != NULL) - (pb != NULL);
    return r ? r : (a > b) - (a < b);
}

static void cache_member(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    mcache *mc = ctx;
    (void)w, (void)e;
    mi_run_body(mc->I, CB_CACHE, mc);
}

typedef struct mkey {
    unsigned char k[64];
    tecs_entity_t id;
} mkey;

static int mkey_cmp(const void *a, const void *b)
{
    const mkey *x = a, *y = b;
    int r = memcmp(x->k, y->k, sizeof x->k);
    return r ? r : (x->id > y->id) - (x->id < y->id);
}

static int cmp_id(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

static const mquery *query_of(interp *I, const tecs_query_t *q)
{
    for (int32_t k = 0; k < I->nq; k++)
        if (I->qs[k].q == q)
            return &I->qs[k];
    mi_failf(I, "a cache's query is gone");
    return NULL;
}

/* The model's members of mc into out, sorted for an ordered cache. */
static int32_t cache_model(interp *I, const mcache *mc, tecs_entity_t *out)
{
    const mquery *q = query_of(I, mc->q);
    mkey *v = malloc(((size_t)I->ne + 1) * sizeof *v);
    if (v == NULL)
        abort();
    int32_t n = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        if (m->st != ST_ALIVE || !m_match(q, m))
            continue;
        memset(v[n].k, 0, sizeof v[n].k);
        if (mc->key >= 0)
            mi_fill_val(mc->key, v[n].k, m->val[mc->key]);
        v[n++].id = m->id;
    }
    if (mc->key >= 0)
        qsort(v, (size_t)n, sizeof *v, mkey_cmp);
    for (int32_t i = 0; i < n; i++)
        out[i] = v[i].id;
    free(v);
    return n;
}

int32_t mi_cache_model(interp *I, const mcache *mc, tecs_entity_t *out)
{
    return cache_model(I, mc, out);
}

const mquery *mi_cache_query(interp *I, const mcache *mc)
{
    return query_of(I, mc->q);
}

/* Every cache holds what the model says, in its order. @return false if
** not checked now (rows written in an open iteration are not reported). */
bool mi_check_caches(interp *I)
{
    if (I->ncs == 0)
        return true;
    for (int32_t k = 0; k < I->nits; k++)
        if (I->its[k].wrote)
            return false;
    size_t cap = (size_t)I->ne + 17;
    tecs_entity_t *want = malloc(cap * sizeof *want), *got = malloc(cap * sizeof *got);
    if (want == NULL || got == NULL)
        abort();
    for (int32_t k = 0; k < I->ncs; k++) {
        const mcache *mc = I->cs[k];
        int32_t nw = cache_model(I, mc, want);
        int32_t count = tecs_cache_count(mc->c);
        int32_t ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c) }, got, (int32_t)cap);
        if (ng < 0 && ((tecs_last_error(I->w) == TECS_EBUSY && cache_iterated(I, mc)) ||
                       (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)))) {
            tecs_clear_error(I->w);     /* collecting is iterating: not while it is,
                                           and it opens an iteration */
            continue;
        }
        int32_t bad = -1;
        if (mc->key < 0) {
            qsort(want, (size_t)nw, sizeof *want, cmp_id);
            if (ng == nw)
                qsort(got, (size_t)ng, sizeof *got, cmp_id);
        }
        for (int32_t i = 0; ng == nw && i < nw && bad < 0; i++)
            if (got[i] != want[i])
                bad = i;
        if (count != nw || ng != nw || bad >= 0) {
            free(want), free(got);
            bool sorted = I->nits > 0 || tecs_world_check(I->w) == TECS_OK;
            mi_failf(I, "cache %d (%s%s): count %d, collect %d, model %d; first difference at %d%s",
                  (int)k, mc->key >= 0 ? "ordered by " : "arrival order",
                  mc->key >= 0 ? cname[mc->key] : "", (int)count, (int)ng, (int)nw, (int)bad,
                  sorted ? "" : "; the world check finds it out of order too");
        }
    }
    free(want), free(got);
    return true;
}

static int cache_iterated(const interp *I, const mcache *mc)
{
    int busy = 0;
    for (int32_t i = 0; i < I->nits; i++)
        if (I->its[i].kind == IT_CACHE && I->its[i].c == mc && (busy == 0 || mi_it_open(I, i) == 1))
            busy = mi_it_open(I, i);
    return busy;
}

/* A cache over query qi: ordered by its first with-term with data (y & 1),
** with member callbacks (y & 2). */
mcache *mi_cache_new(interp *I, int32_t qi, uint32_t y, bool refuse_all)
{
    const mquery *q = &I->qs[qi];
    mcache *mc = calloc(1, sizeof *mc);
    if (mc == NULL)
        abort();
    *mc = (mcache){ .all = I->all_cs, .I = I, .q = q->q, .key = -1 };
    I->all_cs = mc;
    for (int32_t t = 0; (y & 1) && t < q->nt && mc->key < 0; t++)
        if (q->t[t].oper == TECS_WITH && q->ci[t] < NC && csize[q->ci[t]] && q->ci[t] != C_H)
            mc->key = q->ci[t];
    tecs_cache_desc_t d = { .query = q->q, .ctx = mc };
    if (mc->key >= 0)
        d.order = cache_order;
    if ((y & 2) && on(I, MF_CACHECB))
        d.on_enter = d.on_leave = cache_member;
    mc->c = tecs_cache_new(I->w, &d);
    if (mi_result_is(I, mi_got_err(I, mc->c != NULL), refuse_all ? TECS_EBUSY : TECS_OK,
                  "tecs_cache_new") || mc->c == NULL)
        return NULL;
    I->cs[I->ncs++] = mc;
    return mc;
}

/* Free cache k: TECS_EBUSY while it is iterated (or where refuse_all). */
void mi_cache_free(interp *I, int32_t k, bool refuse_all)
{
    mcache *mc = I->cs[k];
    int busy = cache_iterated(I, mc);
    if (busy && (I->off & MF_BUSY) && !refuse_all)
        return;
    tecs_clear_error(I->w);
    int ret = (int)tecs_cache_free(mc->c), want;
    mi_free_result(busy, refuse_all, ret, &want);
    int got = (int)tecs_last_error(I->w);
    I->cb_errs += got != TECS_OK && I->in_body > 0;
    if (got != want || ret != want)
        mi_failf(I, "tecs_cache_free%s: returned %s, last error %s, model says %s",
                 busy ? " of an iterated cache" : "", tecs_err_name((tecs_err_t)ret),
                 tecs_err_name((tecs_err_t)got), tecs_err_name((tecs_err_t)want));
    if (want != TECS_OK)
        return;
    if (I->in_body > 0 && I->cur_kind == CB_CACHE && I->ndoomed < 16)
        I->doomed_q[I->ndoomed++] = mc->q;      /* its query is used until then */
    I->cs[k] = I->cs[--I->ncs];
}

void op_cache_new(interp *I, const m_op *op)
{
    if (!on(I, MF_CACHE) || I->nq == 0 || I->ncs == MAXC)
        return;
    if (mi_cache_new(I, (int32_t)(op->z % (uint32_t)I->nq), op->y, false))
        I->keys_written = true;         /* check it at the end of the step */
}

void op_cache_free(interp *I, const m_op *op)
{
    if (on(I, MF_CACHE) && I->ncs)
        mi_cache_free(I, (int32_t)(op->z % (uint32_t)I->ncs), false);
}

/* Iterate a cache, writing its key through the iterator (a tracked path);
** x & 1: to the end at once, else left open for later steps. An iterated
** cache refuses a second iteration (TECS_EBUSY). */
void op_cache_iter(interp *I, const m_op *op)
{
    if (!on(I, MF_CACHE) || !on(I, MF_CITER) || I->ncs == 0 || I->nits == MAXIT)
        return;
    mcache *mc = I->cs[op->z % (uint32_t)I->ncs];
    int32_t qi = mi_qindex(I, mc->q);
    if (qi < 0)
        return;
    if (cache_iterated(I, mc)) {
        tecs_iter_t it = TECS_ITER(I->w, .cache = mc->c);
        EXPECT(I, tecs_last_error(I->w) == TECS_EBUSY && !tecs_iter_next(&it),
               "a second iteration of a cache: %s", tecs_err_name(tecs_last_error(I->w)));
        return;
    }
    if (!mi_check_caches(I))
        return;                         /* its order is not settled */
    int32_t cap = tecs_cache_count(mc->c) + 1;
    tecs_entity_t *order = malloc((size_t)cap * sizeof *order);
    if (order == NULL)
        abort();
    int32_t k = mi_its_push(I, qi, IT_CACHE);
    I->its[k].c = mc;
    I->its[k].order = order;
    I->its[k].norder = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c) }, order, cap);
    I->its[k].it = TECS_ITER(I->w, .cache = mc->c);
    if (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;               /* refused: no iteration was opened */
        EXPECT(I, !tecs_iter_next(&I->its[k].it), "a refused cache iteration hands out rows");
        free(order);
        I->its[k].order = NULL;
        I->nits--;
        return;
    } else {
        mi_result_is(I, tecs_last_error(I->w), TECS_OK, "tecs_iter of a cache");
    }
    EXPECT(I, tecs_is_deferred(I->w), "an open cache iteration does not defer");
    uint32_t y = op->y & ~3u;           /* write every step */
    do
        mi_iter_step(I, y++ * 4);
    while ((op->x & 1) && I->nits > k);
}

#else
/* Without the index add-on there is no cache. */
bool mi_check_caches(interp *I)
{
    (void)I;
    return true;
}
#endif /* TECS_HAS_INDEX */

/* ---- iterations: copies, frees while busy --------------------------------------------- */

/* Copy the innermost iteration and end both copies (x % 3: the copy
** first; the copy stepped to its end first; the original first). Ending is
** idempotent: the world stays deferred exactly while the model's
** iterations are open, and the next iteration defers. */
void op_iter_copy(interp *I, const m_op *op)
{
    if (!on(I, MF_ITCOPY) || I->nits == 0)
        return;
    int32_t k = I->nits - 1;
    tecs_iter_t copy = I->its[k].it;
    I->its[k].ending = true;
    switch (op->x % 3) {
    case 0:
        tecs_iter_fini(&copy);
        tecs_iter_fini(&I->its[k].it);
        break;
    case 1:
        while (tecs_iter_next(&copy))
            mi_check_chunk(I, &copy, &I->qs[I->its[k].qi]);
        tecs_iter_fini(&I->its[k].it);
        break;
    default:
        tecs_iter_fini(&I->its[k].it);
        tecs_iter_fini(&copy);
        break;
    }
    I->its[k].wrote = false;
    I->twice++;                         /* the second end of either order */
    mi_iter_closed(I);
    EXPECT(I, tecs_is_deferred(I->w) == mi_deferred(I),
           "after both copies of an iteration end, deferred is %d with %d iterations open",
           tecs_is_deferred(I->w), (int)I->nits);
    mi_world_check(I, "after both copies of an iteration end");
    if (I->nq == 0)
        return;
    tecs_iter_t it = TECS_ITER(tecs_query_world(I->qs[0].q), .query = I->qs[0].q);
    EXPECT(I, tecs_is_deferred(I->w), "the next iteration is not deferred");
    tecs_iter_fini(&it);
    EXPECT(I, tecs_is_deferred(I->w) == mi_deferred(I), "ending the next iteration");
}

#if TECS_HAS_INDEX
/* Open an iteration over a query and a filter, left open for later steps. */
void op_where_open(interp *I, const m_op *op)
{
    if (!on(I, MF_FFREE) || I->nix == 0 || I->nq == 0 || I->nits == MAXIT)
        return;
    for (int32_t k = 0; k < I->nits; k++)
        if (I->its[k].wrote)
            return;
    int32_t qi = (int32_t)(op->y % (uint32_t)I->nq);
    tecs_filter_t *fl = tecs_filter_new(I->w);
    if (mi_result_is(I, mi_got_err(I, fl != NULL), TECS_OK, "tecs_filter_new") || fl == NULL)
        return;
    mcond cs[MAXCOND];
    int32_t n = mi_build_filter(I, fl, cs, op->z, 1 + op->x % 4);
    if (n <= 0) {
        tecs_filter_free(fl);
        return;
    }
    int32_t k = mi_its_push(I, qi, IT_WHERE);
    I->its[k].fl = fl;
    for (int32_t i = 0; i < n; i++)
        if (cs[i].kind < 3)
            I->its[k].uses[i] = I->ixs[cs[i].ix].ix;
    I->its[k].it = TECS_ITER(tecs_query_world(I->qs[qi].q), .query = I->qs[qi].q, .where = fl, .reverse = op->x & 32 ? true : 0);
    if (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;               /* refused: no iteration was opened */
        EXPECT(I, !tecs_iter_next(&I->its[k].it), "a refused where iteration hands out rows");
        memset(&I->its[k], 0, sizeof I->its[k]);
        I->nits--;
        tecs_filter_free(fl);
        return;
    }
    EXPECT(I, tecs_is_deferred(I->w), "an open where iteration does not defer");
    mi_iter_step(I, op->y);
}

/* Free the filter of an open where iteration: it works on to the end. */
void op_filter_free_open(interp *I, const m_op *op)
{
    (void)op;
    for (int32_t k = I->nits - 1; k >= 0; k--) {
        if (I->its[k].fl) {
            tecs_filter_free(I->its[k].fl);
            I->its[k].fl = NULL;
            return;
        }
    }
}

/* Three times: a filter, its iteration, the filter freed while the
** iteration is open, the iteration run to its end. The filter goes when its
** iteration ends, so the third round holds no more memory than the second
** (the first may grow scratch space kept for reuse, or see a queue give
** memory back). */
void op_filter_cycle(interp *I, const m_op *op)
{
    if (!on(I, MF_FFREE) || I->nix == 0 || I->nq == 0 || mi_deferred(I))
        return;
    size_t mem[3];
    const mquery *q = &I->qs[op->y % (uint32_t)I->nq];
    for (int round = 0; round < 3; round++) {
        tecs_filter_t *fl = tecs_filter_new(I->w);
        if (mi_result_is(I, mi_got_err(I, fl != NULL), TECS_OK, "tecs_filter_new") || fl == NULL)
            return;
        mcond cs[MAXCOND];
        if (mi_build_filter(I, fl, cs, op->z, 1 + op->x % 4) <= 0) {
            tecs_filter_free(fl);
            return;
        }
        I->checking++;
        tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl);
        bool more = tecs_iter_next(&it);
        if (more)
            mi_check_chunk(I, &it, q);
        tecs_filter_free(fl);
        while (more && tecs_iter_next(&it))
            mi_check_chunk(I, &it, q);
        I->checking--;
        mi_sync(I);
        mem[round] = tecs_world_memory(I->w);
    }
    if (!mi_injected(I))
        EXPECT(I, mem[2] <= mem[1], "a filter freed during its iteration is kept after it "
               "ends (%zu bytes more after a third round)", mem[2] - mem[1]);
}

#endif /* TECS_HAS_INDEX */

/* ---- memory ---------------------------------------------------------------------------- */

/* A burst of delayed births (64 to 512, past the model's usual cap),
** applied, then destroyed at once or by delayed destroys (x & 1): after the
** applies the queues must give their memory back (the bound at the end). */
void op_delay_burst(interp *I, const m_op *op)
{
    if (!on(I, MF_MEM) || mi_deferred(I) || op->y % 4 != 0)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a == NULL)
        return;
    int32_t n = 64 + (int32_t)(op->z % 449);
    tecs_entity_t *ids = malloc((size_t)n * sizeof *ids);
    if (ids == NULL)
        abort();
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        if (mi_delay_new(I, a, op->x, op->y, op->z + (uint32_t)i))
            ids[k++] = I->last;
    op_apply_news(I, op);
    mi_sync(I);
    for (int32_t i = k - 1; i >= 0; i--) {     /* newest first: the model's last entity */
        ment *m = I->ne && I->e[I->ne - 1].id == ids[i] ? &I->e[I->ne - 1] : mi_find(I, ids[i]);
        bool alive = m && m->st == ST_ALIVE;
        if (op->x & 1) {
            int err = tecs_delayed_destroy(I->w, ids[i], NULL, NULL);
            if (!mi_result_is(I, err, alive ? TECS_OK : TECS_EDEAD, "tecs_delayed_destroy") &&
                alive && !m->kill) {
                m->kill = true;
                mi_push_cmd(&I->lq, &I->nlq, &I->cap_lq, &(mcmd){ .op = Q_KILL, .id = ids[i] });
            }
        } else {
            int want = !alive ? TECS_EDEAD : mr_refused(I, m) ? TECS_EBUSY : TECS_OK;
            if (!mi_result_is(I, tecs_destroy(I->w, ids[i]), want, "tecs_destroy") &&
                want == TECS_OK)
                m_destroy(I, m);
        }
        mi_sync(I);
    }
    if (op->x & 1)
        op_apply_kills(I, op);
    free(ids);
}

/* The world built directly: the same components, archetypes (each with as
** many chunks) and live entities, nothing queued. @return its memory. */
static size_t direct_memory(interp *I)
{
    tw_alloc a = { 0 };
    hook_counts hc = { 0 };
    tecs_world_t *d = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = tw_alloc_fn, .alloc_ud = &a, .rows_per_chunk = tecs_world_rows_per_chunk(I->w) });
    if (d == NULL)
        abort();
    for (int k = 0; k < NC; k++) {
        int c = I->p->cfg & 4 ? NC - 1 - k : k;
        tecs_component_desc_t cd = { .name = cname[c], .size = csize[c], .align = calign[c],
                                     .id = c == C_G ? 100 : 0,
                                     .enableable = TOG_MASK >> c & 1,
                                     .row_ticks = ROWTICK_MASK >> c & 1, .fields = cfields[c],
                                     .nfields = cnfields[c], .inherit = INHERIT_MASK >> c & 1 };
        if (c == C_H)
            cd.ctor = obj_ctor, cd.dtor = obj_dtor, cd.copy = obj_copy, cd.move = obj_move,
            cd.hook_ctx = &hc;
        EXPECT(I, tecs_component_new(d, &cd) == I->cid[c], "the direct world's ids differ");
    }
    for (int k = 0; k < NS; k++) {
        tecs_component_desc_t cd = { .name = sname[k], .size = ssize[k], .align = ssize[k],
                                     .storage = TECS_STORAGE_SPARSE };
        EXPECT(I, tecs_component_new(d, &cd) == I->sid[k], "the direct world's ids differ");
    }
    mr_register(I, d);
    int32_t rows = tecs_world_rows_per_chunk(d);
    for (int32_t i = 0; i < I->w->arch.narchs; i++) {
        const tecs_comp_t *ids;
        int32_t n = tecs_archetype_components(I->w->arch.archs[i], &ids);
        tecs_archetype_t *da = tecs_archetype_get(d, n, ids);
        int32_t chunks = tecs_archetype_chunk_count(I->w->arch.archs[i]);
        EXPECT(I, da && (chunks == 0 || tecs_archetype_reserve(d, da, chunks * rows) == TECS_OK),
               "building the direct world");
    }
    /* Every edge between two of these archetypes, as the program may have used. */
    int32_t na = d->arch.narchs;
    uint32_t *masks = calloc((size_t)na + 1, sizeof *masks);
    for (int32_t i = 0; i < na; i++)
        for (int c = 0; c < NC; c++)
            masks[i] |= (uint32_t)(tecs__arch_col(d->arch.archs[i], I->cid[c]) != TECS__COL_ABSENT) << c;
    for (int32_t i = 0; i < na; i++)
        for (int32_t j = 0; j < na; j++) {
            uint32_t diff = masks[i] ^ masks[j];
            if (diff == 0 || (diff & (diff - 1)))
                continue;
            int c = TECS__CTZ(diff);
            if (masks[j] & diff)
                tecs__arch_with(d, d->arch.archs[i], I->cid[c]);
            else
                tecs__arch_without(d, d->arch.archs[i], I->cid[c]);
        }
    free(masks);
    for (int32_t i = 0; i < I->ne; i++) {
        const tecs_comp_t *ids;
        tecs_comp_t own[TECS_MAX_ARCH_COMPONENTS];
        int32_t n = tecs_archetype_components(tecs_entity_archetype(I->w, I->e[i].id), &ids);
        n = mr_unparented(I, ids, n, own);      /* no birth as a child */
        tecs_entity_t de = tecs_new_in(d, tecs_archetype_get(d, n, own));
        EXPECT(I, de != 0, "building the direct world");
        for (int k = 0; k < NS; k++)
            EXPECT(I, !(I->e[i].smask >> k & 1) ||
                      tecs_set(d, de, I->sid[k], &I->e[i].sval[k]) == TECS_OK,
                   "building the direct world's sparse values");
    }
#if TECS_HAS_RESOURCE
    for (int c = 0; c < NC; c++) {
        unsigned char buf[64];
        mi_fill_val(c, buf, I->rval[c]);
        EXPECT(I, !(I->rmask >> c & 1) || tecs_resource_set(d, I->cid[c], buf) == TECS_OK,
               "building the direct world's resources");
    }
#endif
    size_t mem = tecs_world_memory(d);
    tecs_world_free(d);
    return mem;
}

/* R5: after the program, its queues applied and its caches, indexes and
** queries freed, the world holds at most the direct world's memory (same
** components, archetypes, chunks, edges, live entities) plus MEM_ALLOW
** bytes (the index registry, observers, the deferred queue's small spare),
** plus QUEUE_SPARE (the spare an applied queue keeps, about 160 KiB in the
** header's doc of tecs_delayed_new), plus 16 bytes per entity slot the
** program used (records of dead entities). A queue that keeps its peak
** after a burst of delayed births (op delay_burst: up to 512) breaks it. */
enum { MEM_ALLOW = 32 * 1024, QUEUE_SPARE = 160 * 1024 };

/* A sparse set holds pages for the slots its members have, and keeps one
** emptied page as a spare: the direct world's entities have other slots,
** so each set may hold two pages (a full one each) more. */
static size_t sparse_allow(const interp *I)
{
    size_t n = 0;
    for (int k = 0; k < NS; k++)
        n += 2 * (4096 * (sizeof(uint32_t) + ssize[k]) + 256);
    (void)I;
    return n;
}

void mi_check_memory(interp *I)
{
    op_apply_delayed(I, NULL);
    mi_sync(I);
    mi_report_callbacks(I);
    mi_check_all(I);
#if TECS_HAS_INDEX
    for (int32_t k = I->ncs - 1; k >= 0; k--)
        mi_cache_free(I, k, false);
    for (int32_t k = I->nix - 1; k >= 0; k--)
        mi_index_free(I, k, false);
    if (I->rix && tecs_index_free(I->rix) == TECS_OK)
        I->rix = NULL;
#endif
    for (int32_t k = I->nq - 1; k >= 0; k--)
        mi_query_free(I, k, false);
    size_t used = tecs_world_memory(I->w), direct = direct_memory(I);
    size_t bound = direct + MEM_ALLOW + QUEUE_SPARE + 16 * (size_t)I->cap_gen +
                   sparse_allow(I) + mr_memory_allow(I);
    EXPECT(I, used <= bound, "the world holds %zu bytes, one built directly %zu (bound %zu)",
           used, direct, bound);
}

#if TECS_HAS_INDEX
/* A cache's reverse forms against its forward order read from its end, and
** an ordered cache's against the model's order reversed: collect, the
** chunk iterator read backwards, each with an early stop from the end
** (refused, TECS_EBUSY, while the cache is iterated, as is collect); a
** refused description. */
void op_cache_rev(interp *I, const m_op *op)
{
    if (!on(I, MF_CACHE) || I->ncs == 0 || !mi_check_caches(I))
        return;                         /* (not checked: its order is not settled) */
    mcache *mc = I->cs[op->z % (uint32_t)I->ncs];
    int32_t cap = I->ne + 1, rv = true;
    tecs_entity_t *fwd = malloc((size_t)cap * sizeof *fwd), *rev = malloc((size_t)cap * sizeof *rev);
    tecs_entity_t *want = malloc((size_t)cap * sizeof *want);
    if (fwd == NULL || rev == NULL || want == NULL)
        abort();
    I->checking++;
    int32_t nw = cache_model(I, mc, want);
    int busy = cache_iterated(I, mc);
    int32_t nf = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c) }, fwd, cap);
    if (nf < 0) {                       /* collecting is iterating: refused while it is */
        EXPECT(I, (busy != 0 && tecs_last_error(I->w) == TECS_EBUSY) ||
                  (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)),
               "a cache collect refused: %s", tecs_err_name(tecs_last_error(I->w)));
        EXPECT(I, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c, .reverse = rv) }, rev, cap) == -1,
               "a reverse cache collect inside its iteration is not refused");
        tecs_clear_error(I->w);
        I->checking--;
        free(fwd), free(rev), free(want);
        return;
    }
    EXPECT(I, busy != 1, "a cache collect inside its iteration is not refused");
    int32_t nr = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c, .reverse = rv) }, rev, cap);
    EXPECT(I, nf == nw && nr == nf && mi_reversed(fwd, nf, rev, nr),
           "reverse cache collect: %d entities, forward %d, model %d", (int)nr, (int)nf,
           (int)nw);
    EXPECT(I, mc->key < 0 || mi_reversed(want, nw, rev, nr),
           "reverse cache collect is not the model's order reversed");
    tecs_iter_t it = TECS_ITER(I->w, .cache = mc->c, .reverse = rv);
    if (tecs_last_error(I->w) != TECS_OK) {
        EXPECT(I, !tecs_iter_next(&it), "a refused reverse cache iteration hands out rows");
        if (busy == 0 || tecs_last_error(I->w) != TECS_EBUSY)
            mi_result_is(I, (int)tecs_last_error(I->w), TECS_OK, "tecs_iter of a reverse cache");
    } else {
        EXPECT(I, busy != 1, "a second iteration of a cache is not refused");
        nr = mi_rev_steps(it, rev, cap);
        EXPECT(I, nr == nf && mi_reversed(fwd, nf, rev, nr),
               "reverse cache steps read backwards: %d entities, not the %d forward reversed",
               (int)nr, (int)nf);
    }
    mi_rev_walk r = { rev, 0, cap, (int32_t)(op->z >> 20) % (nf + 2) };
    tecs_err_t err = tecs_iter_each((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c, .reverse = rv) }, mi_rev_record, &r);
    int32_t stop = r.stop_at > 0 && r.stop_at < nf ? r.stop_at : nf;
    if (err != TECS_OK) {
        EXPECT(I, r.n == 0, "a refused cache each calls back");
        if (busy == 0 || err != TECS_EBUSY)
            mi_result_is(I, (int)err, TECS_OK, "tecs_iter_each of a reverse cache");
    } else {
        EXPECT(I, busy != 1, "a cache each inside its iteration is not refused");
        EXPECT(I, r.n == stop && mi_reversed(fwd, nf, rev, r.n),
               "reverse cache each (stop at %d): %d calls, not the %d forward reversed",
               (int)r.stop_at, (int)r.n, (int)stop);
    }
    EXPECT(I, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .cache = mc->c, .query = mc->q, .reverse = rv) }, NULL, 0) == -1 &&
              tecs_last_error(I->w) == TECS_EINVAL, "a cache with a query: %s",
           tecs_err_name(tecs_last_error(I->w)));
    tecs_clear_error(I->w);
    I->checking--;
    free(fwd), free(rev), free(want);
}

#endif /* TECS_HAS_INDEX */

/* ---- resources ---------------------------------------------------------------------- */

#if TECS_HAS_RESOURCE

/*
** The model keeps the world's resources in rmask / rval, updated where the
** library changes them: at once, also from callbacks. A set is entered in
** the model before the call (its own callbacks may change it again, at
** once) and taken back if the call fails. Inside a resource's own
** lifecycle hook (H's, handling the resource's value) a set or remove of
** it is refused; inside its removal a remove of it is TECS_OK and changes
** nothing more, a set is refused.
*/

/* A removal of ci that the model started is over once the resource is gone:
** the library finishes it before it applies what the removal's callbacks
** queued, and the callbacks of that apply run inside the same call. */
static void res_settled(interp *I, int ci)
{
    if (ci >= 0 && (I->rremoving >> ci & 1) && !tecs_resource_has(I->w, I->cid[ci])) {
        I->rremoving &= ~(1u << ci);
        I->rmask &= ~(1u << ci);
    }
}

/* Set resource ci (model component; -1 for a bad id c) to v: the call, its
** expected result, the model. kind is the callback making it, or -1. */
static void res_set(interp *I, int ci, tecs_comp_t c, int64_t v, bool null, int kind)
{
    res_settled(I, ci);
    unsigned char buf[64];
    if (ci >= 0)
        mi_fill_val(ci, buf, v);
    bool own = kind == CB_LIFE && ci == C_H && I->life_ptr != NULL &&
               I->life_ptr == tecs_resource_get(I->w, c);
    int want = ci < 0 ? TECS_ENOCOMP : null && csize[ci] ? TECS_EINVAL
             : (I->rremoving >> ci & 1) || own ? TECS_EBUSY : TECS_OK;
    bool had = ci >= 0 && (I->rmask >> ci & 1);
    int64_t old = ci >= 0 ? I->rval[ci] : 0;
    if (want == TECS_OK) {
        I->rmask |= 1u << ci;
        I->rval[ci] = csize[ci] ? v : 0;
    }
    int got = tecs_resource_set(I->w, c, null ? NULL : buf);
    if (kind < 0)
        mi_result_is(I, got, want, "tecs_resource_set");
    else if (got != want && !(got == TECS_ENOMEM && mi_injected(I)))
        mi_failf(I, "tecs_resource_set of %s in a callback: got %s, model says %s",
                 cname[ci < 0 ? 0 : ci], tecs_err_name((tecs_err_t)got),
                 tecs_err_name((tecs_err_t)want));
    I->cb_errs += kind >= 0 && got != TECS_OK;
    if (got != TECS_OK && want == TECS_OK) {       /* out of memory: nothing changed */
        I->rmask = had ? I->rmask : I->rmask & ~(1u << ci);
        I->rval[ci] = old;
    }
}

/* Remove resource ci. */
static void res_remove(interp *I, int ci, tecs_comp_t c, int kind)
{
    res_settled(I, ci);
    bool own = kind == CB_LIFE && ci == C_H && I->life_ptr != NULL &&
               I->life_ptr == tecs_resource_get(I->w, c);
    bool removing = ci >= 0 && (I->rremoving >> ci & 1);
    int want = ci < 0 ? TECS_ENOCOMP : !(I->rmask >> ci & 1) ? TECS_ENOENT
             : removing ? TECS_OK : own ? TECS_EBUSY : TECS_OK;
    if (want == TECS_OK && !removing)
        I->rremoving |= 1u << ci;
    int got = tecs_resource_remove(I->w, c);
    bool settled = want == TECS_OK && !removing && !(I->rremoving >> ci & 1);
    if (want == TECS_OK && !removing)
        I->rremoving &= ~(1u << ci);
    if (kind < 0)
        mi_result_is(I, got, want, "tecs_resource_remove");
    else if (got != want)
        mi_failf(I, "tecs_resource_remove of %s in a callback: got %s, model says %s",
                 cname[ci < 0 ? 0 : ci], tecs_err_name((tecs_err_t)got),
                 tecs_err_name((tecs_err_t)want));
    I->cb_errs += kind >= 0 && got != TECS_OK;
    if (got == TECS_OK && !removing && !settled)   /* (settled: a callback saw it gone) */
        I->rmask &= ~(1u << ci);
}

void op_resource_set(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = mi_pick_comp(I, op->x, &ci);
    res_set(I, ci, c, mi_mkval(op->z, op->y), op->y % 32 == 0, -1);
}

void op_resource_remove(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = mi_pick_comp(I, op->x, &ci);
    res_remove(I, ci, c, -1);
}

/* Read a resource against the model; maybe write it through get_mut and
** report the write, or report one without writing. */
void op_resource_get(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = mi_pick_comp(I, op->x, &ci);
    bool has = ci >= 0 && (I->rmask >> ci & 1);
    tecs_err_t before = tecs_last_error(I->w);
    void *p = tecs_resource_get_mut(I->w, c);
    EXPECT(I, tecs_resource_has(I->w, c) == has, "tecs_resource_has(%s): %d, model %d",
           ci < 0 ? "?" : cname[ci], !has, has);
    EXPECT(I, (p != NULL) == (has && csize[ci]), "tecs_resource_get(%s) %s",
           ci < 0 ? "?" : cname[ci], p ? "gives a value" : "gives none");
    EXPECT(I, tecs_resource_get(I->w, c) == p, "tecs_resource_get and _get_mut differ");
    EXPECT(I, tecs_last_error(I->w) == before, "a resource read changed the last error");
    if (p != NULL) {
        EXPECT(I, mi_same_val(ci, p, I->rval[ci]), "resource %s: value differs", cname[ci]);
        if (op->y & 1) {
            int64_t v = mi_mkval(op->z, op->y);
            if (ci == C_H)
                ((Obj *)p)->value = (int32_t)v;
            else
                mi_fill_val(ci, p, v);
            I->rval[ci] = v;
        }
    }
    if (op->y & 3) {
        int want = ci < 0 ? TECS_ENOCOMP : !has ? TECS_ENOENT : !csize[ci] ? TECS_EINVAL
                                                                            : TECS_OK;
        mi_result_is(I, tecs_resource_modified(I->w, c), want, "tecs_resource_modified");
    }
}

/* Bodies of callbacks of one kind also set or remove a resource, or stop. */
void op_resource_body(interp *I, const m_op *op)
{
    I->rbody[op->x % NCB] = (uint8_t)(op->y % 3);
}

static void resource_body(interp *I, int kind, uint32_t z)
{
    int ci = (int)(z % NC);
    if (z >> 8 & 1)
        res_remove(I, ci, I->cid[ci], kind);
    else
        res_set(I, ci, I->cid[ci], mi_mkval(z, (uint32_t)kind), false, kind);
}

/* While the world is freed a resource cannot change. */
static void freeing_resource_body(interp *I, int kind)
{
    int ci = (int)(I->bodyn++ % NC);
    unsigned char buf[64] = { 0 };
    mi_fill_val(ci, buf, 1);
    tecs_err_t set = tecs_resource_set(I->w, I->cid[ci], buf);
    tecs_err_t rm = tecs_resource_remove(I->w, I->cid[ci]);
    I->cb_errs++;
    EXPECT(I, set == TECS_EBUSY && rm == TECS_EBUSY,
           "resource set / remove of %s in %s while the world is freed: %s, %s", cname[ci],
           cb_name[kind], tecs_err_name(set), tecs_err_name(rm));
}

void mi_check_resources(interp *I)
{
    int32_t n = 0;
    for (int c = 0; c < NC; c++) {
        bool has = I->rmask >> c & 1;
        n += has;
        EXPECT(I, tecs_resource_has(I->w, I->cid[c]) == has, "resource %s: has %d, model %d",
               cname[c], !has, has);
        const void *p = tecs_resource_get(I->w, I->cid[c]);
        EXPECT(I, (p != NULL) == (has && csize[c]), "resource %s: get %s", cname[c],
               p ? "gives a value" : "gives none");
        if (p != NULL)
            EXPECT(I, mi_same_val(c, p, I->rval[c]), "resource %s: value differs", cname[c]);
    }
    EXPECT(I, tecs_resource_count(I->w) == n, "%d resources, model %d",
           (int)tecs_resource_count(I->w), (int)n);
}

#endif /* TECS_HAS_RESOURCE */

/* ---- a drive system run on demand or in a frame ------------------------------------ */

#if TECS_HAS_SYSTEM

/* What a drive system over a model query is asked to do and what it saw. */
typedef struct mdrive {
    interp *I;
    tecs_system_t s;
    int32_t qi;                 /* the model's query                        */
    int32_t steps;              /* tecs_iter_next calls at most             */
    bool fini;                  /* end the iteration itself (tecs_iter_fini) */
    tecs_err_t rc;              /* what the callback returns                */
    double dt;
    int64_t frame;              /* it->frame it must see                    */
    int calls;
    int64_t rows;               /* rows it stepped over                     */
} mdrive;

/*
** The callback: it runs the observer body (a system's callback may do what
** an observer may: queued structural changes, objects, refused calls), then,
** its checks reported after the step, steps the iteration, every chunk
** against the model. The iteration is on the model's list while it runs, so
** a body that frees the query expects TECS_EBUSY. tecs_system_run from
** inside is refused.
*/
static tecs_err_t mdrive_fn(tecs_iter_t *it)
{
    mdrive *d = it->ctx;
    interp *I = d->I;
    d->calls++;
    int32_t k = mi_its_push(I, d->qi, IT_QUERY);
    I->its[k].it = *it;         /* for the model's bookkeeping; not stepped */
    mi_run_body(I, CB_OBS, NULL);
    I->in_body++;
    EXPECT(I, tecs_is_deferred(I->w), "tecs_is_deferred is false inside a drive system");
    EXPECT(I, it->delta_time == d->dt && it->frame == d->frame,
           "a drive system sees delta time %g frame %lld, not %g %lld", it->delta_time,
           (long long)it->frame, d->dt, (long long)d->frame);
    int32_t n0 = tecs_world_entity_count(I->w);
    int err = (int)tecs_system_run(I->w, d->s, 0);
    EXPECT(I, err == TECS_EBUSY && tecs_world_entity_count(I->w) == n0,
           "tecs_system_run inside a system: %s", tecs_err_name((tecs_err_t)err));
    for (int32_t n = 0; n < d->steps && tecs_iter_next(it); n++) {
        mi_check_chunk(I, it, &I->qs[I->its[k].qi]);
        d->rows += it->count;
    }
    if (d->fini)
        tecs_iter_fini(it);
    I->in_body--;
    I->nits--;
    return d->rc;
}

/* Rows of model query qi: the live entities that match. */
static int64_t mdrive_rows(interp *I, int32_t qi)
{
    int64_t n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        n += I->e[i].st == ST_ALIVE && m_match(&I->qs[qi], &I->e[i]);
    return n;
}

/* Change the system in place (tecs_system_get, then _set): another phase
** is refused and changes nothing; then it walks model query qj to the end,
** run on demand, and its statistics go on counting. */
static void mdrive_set(interp *I, mdrive *d, int32_t qj)
{
    tecs_system_desc_t sd, again;
    tecs_system_stats_t st;
    mi_result_is(I, tecs_system_get(I->w, d->s, &sd), TECS_OK, "tecs_system_get");
    mi_result_is(I, tecs_system_stats(I->w, d->s, &st), TECS_OK, "tecs_system_stats");
    EXPECT(I, sd.drive == mdrive_fn && sd.ctx == d && sd.run == NULL && sd.each == NULL &&
           mi_qindex(I, sd.query) >= 0 && strcmp(sd.name, "model_drive") == 0,
           "tecs_system_get does not give the system's description");
    sd.phase = TECS_ON_STORE;
    mi_result_is(I, tecs_system_set(I->w, d->s, &sd), TECS_EINVAL, "tecs_system_set (phase)");
    mi_result_is(I, tecs_system_get(I->w, d->s, &again), TECS_OK, "tecs_system_get");
    EXPECT(I, again.phase == TECS_ON_UPDATE, "a refused tecs_system_set changed the phase");
    sd.phase = TECS_ON_UPDATE;
    sd.query = I->qs[qj].q;
    sd.disabled = false;
    if (!mi_result_is(I, tecs_system_set(I->w, d->s, &sd), TECS_OK, "tecs_system_set"))
        I->sys_q = sd.query;
    *d = (mdrive){ .I = I, .s = d->s, .qi = qj, .steps = INT32_MAX, .rc = TECS_OK,
                   .dt = d->dt, .frame = tecs_world_frame_count(I->w) };
    int64_t all = mdrive_rows(I, qj);
    bool enomem = mi_result_is(I, tecs_system_run(I->w, d->s, d->dt), TECS_OK,
                               "tecs_system_run after tecs_system_set");
    mi_settle(I);
    m_flush(I);
    EXPECT(I, d->calls == 1 || enomem, "a set drive system ran %d times", d->calls);
    tecs_system_stats_t st2;
    mi_result_is(I, tecs_system_stats(I->w, d->s, &st2), TECS_OK, "tecs_system_stats");
    if (d->calls == 1)
        EXPECT(I, d->rows == all && st2.runs == st.runs + 1 && st2.entities_last == all,
               "after tecs_system_set the system stepped over %lld rows, the model has "
               "%lld; runs %lld then %lld", (long long)d->rows, (long long)all,
               (long long)st.runs, (long long)st2.runs);
}

/*
** Make a drive system over a model query (x & 4: disabled, in group 2) and
** run it: x & 8 by a frame of the groups in y >> 8 & 3 (it runs when
** enabled and in them), else by tecs_system_run (it always runs). Its
** callback steps y & 3 chunks (3: to the end), x & 1 ends the iteration
** itself, x & 2 returns TECS_ELIMIT; x & 16 then changes it in place to walk
** another query (mdrive_set); then the system is removed. Inside an open
** iteration both calls are refused and nothing runs. The changes the body
** queued apply when the run ends; the frame count moves with a frame only;
** a full walk steps over every row the model has.
*/
void op_sys_drive_run(interp *I, const m_op *op)
{
    if (I->nq == 0)
        return;
    bool frame = op->x & 8, off = op->x & 4;
    uint32_t mask = op->y >> 8 & 3;
    mdrive d = { .I = I, .qi = (int32_t)(op->z % (uint32_t)I->nq),
                 .steps = (op->y & 3) == 3 ? INT32_MAX : (int32_t)(op->y & 3),
                 .fini = op->x & 1, .rc = (op->x & 2) ? TECS_ELIMIT : TECS_OK,
                 .dt = (double)(op->y >> 4 & 15) * 0.125,
                 .frame = tecs_world_frame_count(I->w) };
    d.s = tecs_system_new(I->w, &(tecs_system_desc_t){ .name = "model_drive",
        .query = I->qs[d.qi].q, .drive = mdrive_fn, .ctx = &d, .disabled = off,
        .groups = off ? 2u : 0u });
    if (mi_result_is(I, mi_got_err(I, d.s != 0), TECS_OK, "tecs_system_new") || d.s == 0)
        return;
    I->sys_q = I->qs[d.qi].q;           /* busy while the system lives */
    bool busy = mi_deferred(I);
    bool runs = !busy && (!frame || (!off && (mask & 1)));
    int64_t all = mdrive_rows(I, d.qi);
    int err = frame ? (int)tecs_progress_groups(I->w, d.dt, mask)
                    : (int)tecs_system_run(I->w, d.s, d.dt);
    int want = busy ? TECS_EBUSY : runs ? (int)d.rc : TECS_OK;
    bool enomem = mi_result_is(I, err, want, frame ? "tecs_progress_groups" : "tecs_system_run");
    /* The last error as the call left it (mi_settle may apply what an
    ** allocation failure left queued, and its callbacks' calls then). */
    bool named = tecs_last_error(I->w) == (tecs_err_t)err &&
                 strstr(tecs_last_error_msg(I->w), "model_drive") != NULL;
    char msg[200];
    snprintf(msg, sizeof msg, "%s", tecs_last_error_msg(I->w));
    if (!busy) {
        mi_settle(I);
        m_flush(I);
    }
    EXPECT(I, d.calls == (runs && !enomem ? 1 : 0) || (enomem && d.calls <= 1),
           "the drive system ran %d times, the model says %d", d.calls, runs);
    EXPECT(I, tecs_world_frame_count(I->w) == d.frame + (frame && !busy),
           "the frame count is %lld after %s", (long long)tecs_world_frame_count(I->w),
           frame ? "a frame" : "tecs_system_run");
    if (err != TECS_OK && err != TECS_ENOMEM && !busy)
        EXPECT(I, named, "a stopped run's last error: %s", msg);
    tecs_system_stats_t st;
    mi_result_is(I, tecs_system_stats(I->w, d.s, &st), TECS_OK, "tecs_system_stats");
    if (d.calls == 1)
        EXPECT(I, st.runs == 1 && st.entities_last == d.rows &&
               (d.steps < INT32_MAX || d.rows == all),
               "the drive system stepped over %lld rows (stats %lld), the model has %lld",
               (long long)d.rows, (long long)st.entities_last, (long long)all);
    if ((op->x & 16) && !busy && I->nq > 0) {
        mi_check_drops(I);              /* each run's flush reports its own */
        mdrive_set(I, &d, (int32_t)((op->z >> 8) % (uint32_t)I->nq));
    }
    mi_result_is(I, tecs_system_free(I->w, d.s), TECS_OK, "tecs_system_free");
    I->sys_q = NULL;
}
#endif /* TECS_HAS_SYSTEM */
