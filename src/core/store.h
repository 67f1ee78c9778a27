/*
** store.h — the engine: a structural change performed now (store.c). Its
** types, its state and its interface; then, in private.h's second pass
** (TECS__WORLD_DONE, once tecs_world_t is complete), its inline functions.
** Included by private.h only.
*/
#ifndef TECS_STORE_H
#define TECS_STORE_H

/* A hop: the archetype pair the last plain add (or remove) of a component
** moved a row between, so that the next one from the same archetype skips
** the walk through the edges. */
typedef struct tecs__hop {
    uint32_t key;               /* archetype id of from + 1; 0: empty       */
    int32_t col;                /* the component's column in the larger one */
    tecs_archetype_t *from, *to;
} tecs__hop;

/* A component's two hops. */
typedef struct tecs__hops {
    tecs__hop add;              /* its last plain add                       */
    tecs__hop rem;              /* its last plain remove                    */
} tecs__hops;

/* Hop h starts at the archetype of record r. */
static inline bool tecs__hop_at(const tecs__hop *h, const tecs__record *r)
{
    return h->key == (r->arch & TECS__ARCH_MASK) + 1;
}

static inline void tecs__hop_set(tecs__hop *h, tecs_archetype_t *from, tecs_archetype_t *to,
                                 int32_t col)
{
    *h = (tecs__hop){ from->id + 1, col, from, to };
}

/* Add c (with value, or constructed) to the live entity e of record r, in
** archetype a. */
tecs_err_t tecs__add_to(tecs_world_t *w, tecs_entity_t e, tecs__record *r, tecs_archetype_t *a,
                        tecs_comp_t c, const void *value);
/* Create n entities in a (ids into out if given), values from vals: asks
** vetoing listeners, reserves, commits, announces. */
/* n clones of the live entity src, born now into its archetype (ids into
** out, if given); into, when n is 1, a pending id the clone is born as.
** A failure changes nothing. */
tecs_err_t tecs__clone_now(tecs_world_t *w, tecs_entity_t src, int32_t n, tecs_entity_t *out,
                           tecs_entity_t into);

/* One source of a clone plan and the archetype its copies are born into:
** to's data columns are some of src's archetype's (each copy takes src's
** value of each), its other components tags; NULL: src's archetype. */
typedef struct tecs__clone_src {
    tecs_entity_t src;          /* alive                                    */
    tecs_archetype_t *to;
} tecs__clone_src;

/* m sources copied n times each, in one step: everything reserved, then
** the births, source by source (source 0's n copies first), then each
** copy's sparse values and the listeners' pairs. Copy g of source i is
** out[i * n + g]; remap asks the listeners to point a copy's pairs whose
** target is source j at copy g of source j (so a group of sources, a
** subtree, is copied as a whole). */
typedef struct tecs__clone_plan {
    const tecs__clone_src *srcs;
    int32_t m, n;
    const tecs_entity_t *into;  /* n pending ids source 0's copies are born
                                   as, or NULL: the copies take new slots   */
    tecs_entity_t *out;         /* m * n ids (may be NULL when m is 1)      */
    bool remap;
} tecs__clone_plan;

/* Make the plan's copies now; a failure changes nothing. */
tecs_err_t tecs__clone_run(tecs_world_t *w, const tecs__clone_plan *p);
tecs_err_t tecs__birth_bulk(tecs_world_t *w, tecs_archetype_t *a, int32_t n, tecs_entity_t *out,
                            int32_t nvals, const tecs_value_t *vals);
/* The value p of c of e was written in place: ask vetoing listeners after
** the fact (TECS__EV_WRITTEN), then raise SET. */
tecs_err_t tecs__written(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *p);
/* Add (value, or constructed) or remove the sparse component c of the live
** entity e now: no move; hooks, vetoes and events as for a table one. */
tecs_err_t tecs__add_sparse(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value);
tecs_err_t tecs__remove_sparse(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c);
/* TECS_OK if c is a registered enableable component, else the error
** (TECS_ENOCOMP, TECS_EINVAL) recorded. */
tecs_err_t tecs__enableable(tecs_world_t *w, tecs_comp_t c);
/* Enable (on) or disable enableable c of the live entity e now: its bit,
** then TECS__EV_ENABLE / _DISABLE if c is watched and the state changed. */
tecs_err_t tecs__enable_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, bool on);
/* Immediate forms, used by the front end and by the command buffer. */
tecs_err_t tecs__destroy_now(tecs_world_t *w, tecs_entity_t e);
tecs_err_t tecs__add_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value);
/* Record a write to c in every chunk holding it (or in its sparse set). */
void tecs__touch_all(tecs_world_t *w, tecs_comp_t c);
tecs_err_t tecs__remove_now(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c);
/* Move the live entity e to b, whose data columns are those of its own
** archetype (the two differ in tags an add-on keeps): room in b reserved,
** so it cannot fail. Move listeners hear of it; of the tags, gone's REMOVE
** events come before the move and came's ADD events after it (0: none). */
void tecs__move_tags(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *b, tecs_comp_t gone,
                     tecs_comp_t came);
/* Place a pending entity into arch, values from vals (one per comp). */
tecs_err_t tecs__birth(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *a,
                       int32_t nvals, const tecs_value_t *vals,
                       tecs_init_fn fn, void *ctx);
/* Place n pending entities into a plain archetype, rows reserved, when no
** listener watches or vetoes changes of its components: the k-th id is at
** ids + k * stride, its value of column col (if col >= 0) at
** vals + k * stride, the other columns are zeroed. An id no longer pending
** is skipped. */
void tecs__birth_run(tecs_world_t *w, tecs_archetype_t *a, int32_t n, const char *ids,
                     int32_t col, const char *vals, size_t stride);
void tecs__store_fini(tecs_world_t *w);

typedef struct tecs__store_state {
    tecs__hop kill;             /* the plain archetype tecs_destroy last
                                   freed a row of (from; to unused)         */
    tecs_entity_t leaving;      /* the entity whose REMOVE events are being
                                   raised, still in its row (0: none); an
                                   index filled meanwhile skips it          */
    tecs_comp_t leaving_comp;   /* the component it loses; 0: all (destroy) */
    tecs_entity_t cloning;      /* while the vetoes are asked about clones:
                                   their source (its archetype's tags are
                                   copied, whoever owns them); else 0      */
    const tecs__clone_plan *plan; /* the clone plan being made, or NULL   */
    int32_t plan_at;            /* its source whose copies are being born   */
    bool plan_copies;           /* a listener's RESERVE asked for its LINK
                                   and PAIRS steps, once a copy            */
    tecs_entity_t gone;         /* the entity whose move event follows the
                                   removal of gone_comp, disabled or not
                                   (gone_disabled), while it is raised      */
    tecs_comp_t gone_comp;
    bool gone_disabled;
    tecs__hops *hops;           /* by component id, below nhops             */
    int32_t nhops;
} tecs__store_state;

#endif /* TECS_STORE_H */

#if defined(TECS__WORLD_DONE) && !defined(TECS_STORE_INLINES)
#define TECS_STORE_INLINES

/* The slot copy g of plan source i takes, the copies walked in the plan's
** order (source by source, each copy in rank order) with wk, which starts
** as tecs__ei_ahead(w) and moves on at each copy that takes a new slot. */
static inline uint32_t tecs__clone_slot(tecs_world_t *w, const tecs__clone_plan *p, int32_t i,
                                        int32_t g, tecs__ei_walk *wk)
{
    if (i == 0 && p->into)
        return TECS_ENTITY_INDEX(p->into[g]);
    return tecs__ei_ahead_next(w, wk);
}

/* Construct one value at to, copied from value if given. */
static inline void tecs__construct_one(tecs_world_t *w, const tecs__comp *ci, void *to,
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

/* Move the entity of record r from a to b, which is a plus (adding) or minus
** one component whose column in the larger archetype is k (COL_TAG for a
** tag). Columns follow component-id order, so column j of b is column j of a
** before k and j -/+ 1 after it: no lookup per column. The added column is
** constructed (from value if given); a removed one must be destroyed
** already. Rows must be reserved in b. With hooks, each value moves through
** its hook; plain values are copied. */
static TECS__INLINE void tecs__move_row_with(tecs_world_t *w, tecs__record *r, tecs_archetype_t *a,
                                             tecs_archetype_t *b, int32_t k, bool adding,
                                             const void *value, bool plain)
{
    /* The larger archetype bare: both are (the smaller has a subset of its
    ** columns), so neither has bit or tick columns to carry. */
    const bool bare = plain && (adding ? b : a)->bare;
    uint32_t src = r->row, dst = (uint32_t)b->count++;
    b->chunks[dst >> w->arch.shift].entered = w->arch.tick;    /* (by row: below) */
    /* The two chunks' column pointers ([0] the ids, [1 + j] column j). */
    char *const *sc = tecs__chunk_of(a, w, src), *const *dc = tecs__chunk_of(b, w, dst);
    const size_t si = src & w->arch.mask, di = dst & w->arch.mask;
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
            tecs__construct_one(w, tecs__col_info(w, b, k), TO(k), value);
        for (int32_t j = same + adding; j < n; j++)
            tecs__comp_move(w, tecs__col_info(w, b, j), TO(j), FROM(j, j + shift), 1);
    }
#undef TO
#undef FROM
    if (TECS__UNLIKELY(!bare) && (b->ntog | b->nrt)) {
        if (b->ntog)
            tecs__arch_bits_move(w, a, src, b, dst);
        if (b->nrt) {
            tecs__arch_rt_enter(&w->arch, b, -1, dst, 1);
            tecs__arch_rt_move(w, a, src, b, dst);
        }
    }
    if (!plain)                 /* a hook's queued birth may move the records */
        r = &w->ei.recs[TECS_ENTITY_INDEX(tecs__chunk_ents(dc)[di])];
    r->arch = b->id | (r->arch & ~TECS__ARCH_MASK);
    r->row = dst;
    /* Last: the hole fill may run move hooks of a, and r is done with. */
    tecs__arch_remove_row_as(w, a, src, bare);
}

/* Adding c with b as the target is a plain row move that cannot fail:
** nobody to ask or tell, no hook to run, a row free in b. */
static inline bool tecs__quiet_add(const tecs_world_t *w, const tecs_archetype_t *b,
                                   tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    return b->plain && !w->bus.watch_moves && (ci->veto | ci->watch) == 0 &&
           tecs__arch_has_rows(w, b, 1);
}

/* Removing c from a plain archetype with b as the target is a plain row
** move that cannot fail: nobody to ask or tell, a row free in b. */
static inline bool tecs__quiet_remove(const tecs_world_t *w, const tecs_archetype_t *b,
                                      tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    return !w->bus.watch_moves && (ci->veto | ci->watch) == 0 && tecs__arch_has_rows(w, b, 1);
}

/* The quiet add of c to the entity of record r through its hop, if the hop
** starts at r's archetype: true if done. */
static TECS__INLINE bool tecs__add_quick(tecs_world_t *w, tecs__record *r, tecs_comp_t c,
                                         const void *value)
{
    if (TECS__UNLIKELY(c >= (tecs_comp_t)w->store.nhops))
        return false;
    const tecs__hop *h = &w->store.hops[c].add;
    if (TECS__LIKELY(tecs__hop_at(h, r)) && tecs__quiet_add(w, h->to, c)) {
        tecs__move_row_with(w, r, h->from, h->to, h->col, true, value, true);
        return true;
    }
    return false;
}

/* The quiet remove of c, as tecs__add_quick. */
static TECS__INLINE bool tecs__remove_quick(tecs_world_t *w, tecs__record *r, tecs_comp_t c)
{
    if (TECS__UNLIKELY(c >= (tecs_comp_t)w->store.nhops))
        return false;
    const tecs__hop *h = &w->store.hops[c].rem;
    if (TECS__LIKELY(tecs__hop_at(h, r)) && tecs__quiet_remove(w, h->to, c)) {
        tecs__move_row_with(w, r, h->from, h->to, h->col, false, NULL, true);
        return true;
    }
    return false;
}

/* Record a write to the value of c of e (alive, with c) at the world's
** tick: in its chunk's ticks, or its sparse set's. */
static inline void tecs__touch(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c))) {
        tecs__sparse *s = w->comp.comps[c].set;
        if (s)
            s->changed = w->arch.tick;
        return;
    }
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        return;
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t col = tecs__arch_col(a, c);
    if (col >= 0)
        tecs__arch_touch(w, a, col, r->row);
}

#endif /* TECS_STORE_INLINES */
