/*
** model_rel.c — relations in the model (tinyecs/relation.h): the pairs as
** one plain array, what a destroy takes with it, the pair operations and
** the comparison of every pair read with the model.
**
**     pair   src | tgt | rel (R_*) | val (R_VAL) | sseq | tseq
**
** One row per pair, ChildOf's included (src the child, tgt the parent).
** Order is kept as stamps, not positions: a source's targets come in sseq
** order (the order they were added), a target's sources (a parent's
** children) in tseq order (the order they were attached); a reparent or an
** exclusive relation's new target takes a new tseq, so it comes last among
** the new target's sources. The relations are registered in R_* order,
** ChildOf first, so a sources walk of every relation reads them in that
** order.
**
** A destroy gathers the entity, then, for each gathered one, its children
** and the sources of R_VAL when its cleanup is DESTROY; if one of them is
** the target of an R_REF pair nothing happens (TECS_EBUSY), else all die.
** Without the add-on (TECS_HAS_RELATION 0) there are no pairs: the ops are
** op_off and a destroy is a plain kill.
*/
#include "model_int.h"

#if TECS_HAS_RELATION
#include "tinyecs/relation.h"
#endif
#if TECS_HAS_OBSERVER
#include "tinyecs/observer.h"
#endif

#if TECS_HAS_RELATION

static const bool rexcl[NR] = { true, false, true, false, true };
static const char *const rname[NR] = { "ChildOf", "Likes", "Owes", "Pins", "IsA" };

/* R_VAL's cleanup: DESTROY when cfg bit 3 is set, else REMOVE. */
static bool val_destroys(const interp *I)
{
    return I->p->cfg & 8;
}

static void register_in(interp *I, tecs_world_t *w, tecs_comp_t *rid);

#if TECS_HAS_OBSERVER
/* Log a ChildOf ADD: the child and, linked by then, its parent. */
static void log_linked(const tecs_event_t *ev)
{
    interp *I = ev->ctx;
    if (I->nlinked + 2 > I->cap_linked) {
        I->cap_linked = I->cap_linked ? 2 * I->cap_linked : 64;
        I->linked = realloc(I->linked, (size_t)I->cap_linked * sizeof *I->linked);
        if (I->linked == NULL)
            abort();
    }
    I->linked[I->nlinked++] = ev->entity;
    I->linked[I->nlinked++] = tecs_pair_target(ev->world, ev->entity, I->rid[R_CHILD], 0);
}
#endif

void mr_setup(interp *I)
{
    register_in(I, I->w, I->rid);
#if TECS_HAS_OBSERVER
    while (tecs_observer_new(I->w, &(tecs_observer_desc_t){
               .event = TECS_ON_ADD, .comp = I->rid[R_CHILD], .callback = log_linked,
               .ctx = I }) == 0)
        EXPECT(I, tecs_last_error(I->w) == TECS_ENOMEM && I->alloc.failures > 0,
               "tecs_observer_new(ChildOf): %s", tecs_last_error_msg(I->w));
#endif
}

void mr_register(interp *I, tecs_world_t *w)
{
    tecs_comp_t rid[NR];
    register_in(I, w, rid);
    EXPECT(I, memcmp(rid, I->rid, sizeof rid) == 0, "the direct world's relation ids differ");
    /* The level tags the program's hierarchy made ("ChildOf.1", ...), as
    ** plain tags of the same ids, so that the direct world holds the same
    ** archetypes. */
    for (int32_t c = 1; c < I->w->comp.cap_comps; c++) {
        const char *name = tecs_component_name(I->w, (tecs_comp_t)c);
        if (name && (strncmp(name, "ChildOf.", 8) == 0 || strncmp(name, "IsA.", 4) == 0))
            EXPECT(I, tecs_component_new(w, &(tecs_component_desc_t){
                          .name = name, .id = (tecs_comp_t)c }) == (tecs_comp_t)c,
                   "the direct world's level and base tags differ");
    }
}

int32_t mr_unparented(const interp *I, const tecs_comp_t *ids, int32_t n, tecs_comp_t *out)
{
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        if (ids[i] != I->rid[R_CHILD])
            out[k++] = ids[i];
    return k;
}

static void register_in(interp *I, tecs_world_t *w, tecs_comp_t *rid)
{
    while ((rid[R_CHILD] = tecs_childof(w)) == 0)
        EXPECT(I, tecs_last_error(w) == TECS_ENOMEM && I->alloc.failures > 0,
               "tecs_childof: %s", tecs_last_error_msg(w));
    const tecs_relation_desc_t d[NR] = {
        [R_ISA] = { .exclusive = true, .cleanup = TECS_CLEANUP_REFUSE },
        [R_TAG] = { .component = { .name = rname[R_TAG] } },
        [R_VAL] = { .component = { .name = rname[R_VAL], .size = 4, .align = 4 },
                    .exclusive = true,
                    .cleanup = val_destroys(I) ? TECS_CLEANUP_DESTROY : TECS_CLEANUP_REMOVE },
        [R_REF] = { .component = { .name = rname[R_REF] }, .cleanup = TECS_CLEANUP_REFUSE,
                    .no_clone = true },
    };
    for (int r = R_TAG; r <= R_REF; r++)
        while ((rid[r] = tecs_relation_new(w, &d[r])) == 0)
            EXPECT(I, tecs_last_error(w) == TECS_ENOMEM && I->alloc.failures > 0,
                   "tecs_relation_new(%s): %s", rname[r], tecs_last_error_msg(w));
    while ((rid[R_ISA] = tecs_isa(w)) == 0)
        EXPECT(I, tecs_last_error(w) == TECS_ENOMEM && I->alloc.failures > 0,
               "tecs_isa: %s", tecs_last_error_msg(w));
    tecs_comp_t pf;
    while ((pf = tecs_prefab(w)) == 0)
        EXPECT(I, tecs_last_error(w) == TECS_ENOMEM && I->alloc.failures > 0,
               "tecs_prefab: %s", tecs_last_error_msg(w));
    if (w == I->w)
        I->prefab = pf;
    EXPECT(I, pf == I->prefab && tecs_component_hidden(w, pf), "the prefab tags differ");
    for (int r = 0; r < NR; r++)
        EXPECT(I, tecs_is_relation(w, rid[r]) &&
                  tecs_relation_cleanup(w, rid[r]) ==
                      (r == R_CHILD ? TECS_CLEANUP_DESTROY : d[r].cleanup),
               "relation %s is not as registered", rname[r]);
}

/* ---- the model's pairs ------------------------------------------------------ */

static int32_t find_pair(const interp *I, int rel, tecs_entity_t src, tecs_entity_t tgt)
{
    for (int32_t i = 0; i < I->npr; i++)
        if (I->pr[i].rel == rel && I->pr[i].src == src &&
            (tgt == (tecs_entity_t)TECS_WILDCARD || I->pr[i].tgt == tgt))
            return i;
    return -1;
}

static tecs_entity_t parent_of(const interp *I, tecs_entity_t e)
{
    int32_t i = find_pair(I, R_CHILD, e, (tecs_entity_t)TECS_WILDCARD);
    return i < 0 ? 0 : I->pr[i].tgt;
}

bool mr_has_parent(const interp *I, tecs_entity_t id)
{
    return parent_of(I, id) != 0;
}

tecs_entity_t mr_parent(const interp *I, tecs_entity_t id)
{
    return parent_of(I, id);
}

/* The base of id (0: none). */
static tecs_entity_t base_of(const interp *I, tecs_entity_t e)
{
    int32_t i = find_pair(I, R_ISA, e, (tecs_entity_t)TECS_WILDCARD);
    return i < 0 ? 0 : I->pr[i].tgt;
}

bool mr_has_base(const interp *I, tecs_entity_t id)
{
    return base_of(I, id) != 0;
}

const ment *mr_holder(const interp *I, const ment *m, int c)
{
    for (int32_t d = 0; m != NULL && d <= I->ne; d++) {
        if (m->mask >> c & 1)
            return m;
        tecs_entity_t b = base_of(I, m->id);
        m = b ? mi_find((interp *)I, b) : NULL;
    }
    return NULL;
}

bool mr_term_has(const interp *I, const tecs_term_t *t, int ci, tecs_entity_t id)
{
    if (ci >= CI_INHERIT)
        return mr_holder(I, mi_find((interp *)I, id), ci - CI_INHERIT) != NULL;
    if (ci >= CI_PARENT) {
        tecs_entity_t p = parent_of(I, id);
        const ment *pm = p ? mi_find((interp *)I, p) : NULL;
        return pm && pm->st == ST_ALIVE && (pm->mask >> (ci - CI_PARENT) & 1);
    }
    for (int r = 0; r < NR; r++)
        if ((t->comp == TECS_WILDCARD || t->comp == I->rid[r]) &&
            find_pair(I, r, id, t->target) >= 0)
            return true;
    return false;
}

void mr_pair_term(interp *I, mquery *q, int32_t t, uint32_t z)
{
    for (int32_t u = 0; u < q->nt; u++)
        if (q->ci[u] >= CI_PAIR)
            return;
    tecs_entity_t tgt = 0;
    for (int32_t k = 0; k < I->ne && tgt == 0; k++) {
        const ment *m = &I->e[(k + (int32_t)(z >> 12)) % I->ne];
        tgt = m->st == ST_ALIVE ? m->id : 0;
    }
    tecs_oper_t oper = q->t[t].oper;
    int kind = (int)(z & 3), r = (int)(z >> 2 & 3);
    if ((z >> 8 & 3) == 0) {            /* the prefab tag, named */
        q->ci[t] = CI_PREFAB;
        q->t[t] = (tecs_term_t){ .comp = I->prefab, .oper = oper, .access = TECS_FILTER };
    } else if ((z >> 10 & 3) == 0) {    /* a table component, owned or inherited */
        int c = (int)((z >> 4) % NC);
        while (TOG_MASK >> c & 1)
            c = (c + 1) % NC;
        q->ci[t] = CI_INHERIT + c;
        q->t[t] = (tecs_term_t){ .comp = I->cid[c], .oper = oper,
                                 .access = z >> 14 & 1 ? TECS_FILTER : TECS_READ,
                                 .inherited = true };
    } else if (kind == 3) {                    /* a table component read from the parent */
        int c = (int)((z >> 4) % NC);
        while (TOG_MASK >> c & 1)
            c = (c + 1) % NC;
        q->ci[t] = CI_PARENT + c;
        q->t[t] = (tecs_term_t){ .comp = I->cid[c], .oper = oper, .access = TECS_READ,
                                 .from_parent = true };
    } else if (tgt != 0 || kind == 1) {
        q->ci[t] = CI_PAIR;
        q->t[t] = (tecs_term_t){ .comp = kind == 2 ? TECS_WILDCARD : I->rid[r], .oper = oper,
                                 .access = TECS_FILTER,
                                 .target = kind == 1 ? (tecs_entity_t)TECS_WILDCARD : tgt };
    } else {
        return;
    }
    q->I = I;
}

static void drop_pair(interp *I, int32_t i)
{
    I->pr[i] = I->pr[--I->npr];
}

void mr_forget(interp *I, tecs_entity_t id)
{
    for (int32_t i = I->npr - 1; i >= 0; i--)
        if (I->pr[i].src == id || I->pr[i].tgt == id)
            drop_pair(I, i);
}

/* Is tgt the target of a pair of rel? */
static bool find_pair_tgt(const interp *I, int rel, tecs_entity_t tgt)
{
    for (int32_t i = 0; i < I->npr; i++)
        if (I->pr[i].rel == rel && I->pr[i].tgt == tgt)
            return true;
    return false;
}

/* Is anc the entity e or one of its ancestors? */
static bool within(const interp *I, tecs_entity_t e, tecs_entity_t anc)
{
    for (int32_t d = 0; e != 0 && d <= I->ne; e = parent_of(I, e), d++)
        if (e == anc)
            return true;
    return false;
}

/* (rel, tgt) added to src, as the library does; value v if set. */
/* Would src inheriting from tgt close a chain of bases? */
static bool isa_cycle(const interp *I, tecs_entity_t src, tecs_entity_t tgt)
{
    for (int32_t d = 0; tgt != 0 && d <= I->ne; tgt = base_of(I, tgt), d++)
        if (tgt == src)
            return true;
    return false;
}

static int m_pair_add(interp *I, int rel, tecs_entity_t src, tecs_entity_t tgt, bool set,
                      int32_t v)
{
    if ((rel == R_CHILD && within(I, tgt, src)) || (rel == R_ISA && isa_cycle(I, src, tgt)))
        return TECS_ECYCLE;
    int32_t i = find_pair(I, rel, src, tgt);
    if (i >= 0) {
        if (set)
            I->pr[i].val = v;
        return TECS_OK;
    }
    i = rexcl[rel] ? find_pair(I, rel, src, (tecs_entity_t)TECS_WILDCARD) : -1;
    if (i >= 0) {                       /* a new target: last of its sources */
        I->pr[i].tgt = tgt;
        I->pr[i].tseq = ++I->pseq;
        I->pr[i].val = set ? v : 0;
        return TECS_OK;
    }
    if (I->npr == I->cap_pr) {
        I->cap_pr = I->cap_pr ? 2 * I->cap_pr : 64;
        I->pr = realloc(I->pr, (size_t)I->cap_pr * sizeof *I->pr);
        if (I->pr == NULL)
            abort();
    }
    ++I->pseq;
    I->pr[I->npr++] = (mpair){ src, tgt, rel, set ? v : 0, I->pseq, I->pseq };
    return TECS_OK;
}

static int m_pair_remove(interp *I, int rel, tecs_entity_t src, tecs_entity_t tgt)
{
    int32_t i = find_pair(I, rel, src, tgt);
    if (i < 0)
        return TECS_ENOENT;
    for (; i >= 0; i = find_pair(I, rel, src, tgt))
        drop_pair(I, i);
    return TECS_OK;
}

/* The sources of tgt by relation rel (-1: every relation, in R_* order),
** in order: into out (sorted by tseq within a relation), their relations
** into rels unless NULL. out holds I->npr at least. */
static int32_t sources_of(const interp *I, tecs_entity_t tgt, int rel, tecs_entity_t *out,
                          int *rels)
{
    int32_t n = 0;
    for (int r = 0; r < NR; r++) {
        if (rel >= 0 && r != rel)
            continue;
        int32_t from = n;
        for (int32_t i = 0; i < I->npr; i++)
            if (I->pr[i].rel == r && I->pr[i].tgt == tgt) {
                int32_t j = n++;
                for (; j > from && I->pr[find_pair(I, r, out[j - 1], tgt)].tseq > I->pr[i].tseq;
                     j--)
                    out[j] = out[j - 1];
                out[j] = I->pr[i].src;
            }
        for (int32_t k = from; rels && k < n; k++)
            rels[k] = r;
    }
    return n;
}

/* The targets of src by rel, in the order they were added. */
static int32_t targets_of(const interp *I, tecs_entity_t src, int rel, int32_t *idx)
{
    int32_t n = 0;
    for (int32_t i = 0; i < I->npr; i++)
        if (I->pr[i].rel == rel && I->pr[i].src == src) {
            int32_t j = n++;
            for (; j > 0 && I->pr[idx[j - 1]].sseq > I->pr[i].sseq; j--)
                idx[j] = idx[j - 1];
            idx[j] = i;
        }
    return n;
}

/* ---- destroys -------------------------------------------------------------- */

/* What dies with e, in the order found (e first): *n of them. @return
** false if one is the target of a REFUSE pair. */
static bool gather(const interp *I, tecs_entity_t e, tecs_entity_t *out, int32_t *n)
{
    int32_t k = 0, cap = I->npr + 1;
    tecs_entity_t *buf = malloc((size_t)(I->npr + 1) * sizeof *buf);
    if (buf == NULL)
        abort();
    out[k++] = e;
    for (int32_t at = 0; at < k; at++) {
        if (find_pair_tgt(I, R_REF, out[at]) || find_pair_tgt(I, R_ISA, out[at])) {
            free(buf);
            *n = k;
            return false;
        }
        for (int r = 0; r < NR; r++) {
            if (r != R_CHILD && !(r == R_VAL && val_destroys(I)))
                continue;
            int32_t ns = sources_of(I, out[at], r, buf, NULL);
            for (int32_t s = 0; s < ns; s++) {
                bool seen = false;
                for (int32_t j = 0; j < k && !seen; j++)
                    seen = out[j] == buf[s];
                if (!seen && k < cap)
                    out[k++] = buf[s];
            }
        }
    }
    free(buf);
    *n = k;
    return true;
}

bool mr_refused(interp *I, const ment *m)
{
    tecs_entity_t *out = malloc((size_t)(I->npr + 1) * sizeof *out);
    int32_t n;
    if (out == NULL)
        abort();
    bool ok = gather(I, m->id, out, &n);
    free(out);
    return !ok;
}

int m_destroy(interp *I, ment *m)
{
    tecs_entity_t *out = malloc((size_t)(I->npr + 1) * sizeof *out);
    int32_t n;
    if (out == NULL)
        abort();
    if (!gather(I, m->id, out, &n)) {
        free(out);
        return TECS_EBUSY;
    }
    for (int32_t k = n - 1; k >= 0; k--) {       /* last found first, as the library */
        ment *x = mi_find(I, out[k]);
        if (x)
            m_kill(I, x);
    }
    free(out);
    return TECS_OK;
}

/* Link pages, the head map, the pools: what the relations hold beyond
** what a world built without them does. */
size_t mr_memory_allow(const interp *I)
{
    return 64 * 1024 + 16 * 1024 * (size_t)(I->cap_gen / 1024 + 1) + 96 * (size_t)I->cap_pr +
           TECS_MAX_COMPONENTS * sizeof(uint32_t);     /* IsA's base tags */
}

/* ---- queued changes -------------------------------------------------------- */

/* A queued pair change at the flush: a stale one (its entity or its target
** not alive) is skipped; one that no longer fits (a cycle made by an
** earlier change, a pair no longer there) is dropped. */
int mr_apply(interp *I, const mcmd *c)
{
    ment *m = mi_find(I, c->id);
    if (m == NULL || m->st != ST_ALIVE)
        return TECS_OK;
    if (c->mode == PAIR_REMOVE)
        return m_pair_remove(I, c->comp, c->id, c->tgt);
    ment *t = mi_find(I, c->tgt);
    if (t == NULL || t->st != ST_ALIVE)
        return TECS_OK;
    return m_pair_add(I, c->comp, c->id, c->tgt, c->mode == PAIR_SET, (int32_t)c->val[0]);
}

/* src's pairs of every relation but R_REF (.no_clone), in src's order;
** each the last among its target's sources. */
void mr_clone(interp *I, tecs_entity_t src, tecs_entity_t dst)
{
    int32_t idx[MAXE + 8];
    for (int rel = 0; rel < NR; rel++) {
        if (rel == R_REF)
            continue;
        int32_t n = targets_of(I, src, rel, idx);
        for (int32_t k = 0; k < n; k++) {
            mpair p = I->pr[idx[k]];
            m_pair_add(I, rel, dst, p.tgt, true, p.val);
        }
    }
}

static void dfs(const interp *I, tecs_entity_t e, int32_t d, tecs_entity_t *out, int32_t *dep,
                int32_t *n);

int32_t mr_subtree_size(const interp *I, tecs_entity_t src)
{
    int32_t n = 1;
    for (int32_t i = 0; i < I->npr; i++)
        if (I->pr[i].rel == R_CHILD && I->pr[i].tgt == src)
            n += mr_subtree_size(I, I->pr[i].src);
    return n;
}

/* The index of e among the m members, or -1. */
static int32_t member_of(const tecs_entity_t *mem, int32_t m, tecs_entity_t e)
{
    for (int32_t i = 0; i < m; i++)
        if (mem[i] == e)
            return i;
    return -1;
}

/* Copy i of the prefab's members (in mem) at rank g: its id in ids. The
** members' copies are born source by source (each's n copies in rank
** order), their parents linked at birth, then their other pairs, a pair
** into the subtree pointed at the copy of its target. */
void mr_instantiate(interp *I, tecs_entity_t src, const tecs_entity_t *roots, int32_t n,
                    bool queued)
{
    size_t cap = (size_t)I->npr + 2;
    tecs_entity_t *mem = malloc(cap * sizeof *mem);
    int32_t *dep = malloc(cap * sizeof *dep), *idx = malloc(cap * sizeof *idx);
    int32_t k0 = 0;
    if (mem == NULL || dep == NULL || idx == NULL)
        abort();
    mem[0] = src;
    dfs(I, src, 0, mem + 1, dep + 1, &k0);
    int32_t m = 1 + k0;
    tecs_entity_t *ids = malloc((size_t)m * (size_t)n * sizeof *ids);
    if (ids == NULL)
        abort();
    for (int32_t g = 0; g < n; g++) {
        ids[g] = roots[g];
        int32_t k = 1;
        if (queued && TECS_HAS_OBSERVER) {
            /* its members came in depth-first order, each after its parent */
            for (int32_t x = 0; k < m && x + 1 < I->nlinked; x += 2) {
                int32_t p = member_of(mem, m, parent_of(I, mem[k]));
                if (I->linked[x + 1] == ids[(int64_t)p * n + g] && mi_find(I, I->linked[x]) == NULL)
                    ids[(int64_t)k++ * n + g] = I->linked[x];
            }
        } else {
            for (tecs_walk_t it = tecs_tree(I->w, roots[g], TECS_TREE_DEPTH_FIRST);
                 k < m && tecs_walk_next(&it);)
                ids[(int64_t)k++ * n + g] = it.entity;
        }
        EXPECT(I, k == m, "the instance %llx of %llx has %d members, the model %d",
               (unsigned long long)roots[g], (unsigned long long)src, (int)k, (int)m);
    }
    for (int32_t i = 0; i < m; i++)
        for (int32_t g = 0; g < n; g++) {
            tecs_entity_t id = ids[(int64_t)i * n + g];
            ment *d = i == 0 ? mi_find(I, id) : m_add_ent(I, id, ST_ALIVE, 0);
            const ment *s = mi_find(I, mem[i]);
            /* A member that has a base or an inherited component is
            ** inherited from: its copy shares what it has of those. */
            bool base = base_of(I, mem[i]) != 0 || (s->mask & INHERIT_MASK);
            d->st = ST_ALIVE;
            d->mask = base ? s->mask & ~INHERIT_MASK : s->mask;
            d->off = s->off;
            memcpy(d->val, s->val, sizeof d->val);
            d->smask = s->smask;
            memcpy(d->sval, s->sval, sizeof d->sval);
            d->prefab = false;
            if (i > 0) {
                int32_t p = member_of(mem, m, parent_of(I, mem[i]));
                m_pair_add(I, R_CHILD, id, ids[(int64_t)p * n + g], false, 0);
            }
            if (base)
                m_pair_add(I, R_ISA, id, mem[i], false, 0);
        }
    for (int32_t i = 0; i < m; i++)
        for (int32_t g = 0; g < n; g++)
            for (int rel = 0; rel < NR; rel++) {
                if (rel == R_CHILD || rel == R_REF || rel == R_ISA)
                    continue;       /* (IsA: the copy's base is its source) */
                int32_t k = targets_of(I, mem[i], rel, idx);
                for (int32_t x = 0; x < k; x++) {
                    mpair pr = I->pr[idx[x]];
                    int32_t j = member_of(mem, m, pr.tgt);
                    m_pair_add(I, rel, ids[(int64_t)i * n + g],
                               j < 0 ? pr.tgt : ids[(int64_t)j * n + g], true, pr.val);
                }
            }
    free(ids);
    free(idx);
    free(dep);
    free(mem);
}

/* ---- checks ------------------------------------------------------------------ */

static bool live(const interp *I, tecs_entity_t id)
{
    const ment *m = mi_find((interp *)I, id);
    return m && m->st == ST_ALIVE;
}

static int32_t depth_of(const interp *I, tecs_entity_t e)
{
    int32_t d = 0;
    for (e = parent_of(I, e); e != 0 && d <= I->ne; e = parent_of(I, e))
        d++;
    return d;
}

/* The depth-first order of e's descendants (each with its depth), the
** children in the order they were attached. */
static void dfs(const interp *I, tecs_entity_t e, int32_t d, tecs_entity_t *out, int32_t *dep,
                int32_t *n)
{
    tecs_entity_t *kids = malloc((size_t)(I->npr + 1) * sizeof *kids);
    if (kids == NULL)
        abort();
    int32_t nk = sources_of(I, e, R_CHILD, kids, NULL);
    for (int32_t k = 0; k < nk && *n < I->npr; k++) {
        out[*n] = kids[k];
        dep[(*n)++] = d + 1;
        dfs(I, kids[k], d + 1, out, dep, n);
    }
    free(kids);
}

/* A walk against the model's ids (and depths or relations, if given). */
static void check_walk(interp *I, tecs_walk_t it, const tecs_entity_t *want, const int32_t *dep,
                       const int *rels, int32_t n, const char *what, tecs_entity_t e)
{
    int32_t k = 0;
    while (tecs_walk_next(&it)) {
        EXPECT(I, k < n && it.entity == want[k], "%s of %llx: step %d is %llx, the model %llx",
               what, (unsigned long long)e, (int)k, (unsigned long long)it.entity,
               (unsigned long long)(k < n ? want[k] : 0));
        EXPECT(I, dep == NULL || it.depth == dep[k], "%s of %llx: step %d at depth %d, not %d",
               what, (unsigned long long)e, (int)k, (int)it.depth, (int)dep[k]);
        EXPECT(I, rels == NULL || it.rel == I->rid[rels[k]], "%s of %llx: step %d names the "
               "wrong relation", what, (unsigned long long)e, (int)k);
        k++;
    }
    EXPECT(I, k == n && !it.stale, "%s of %llx: %d steps (stale %d), the model %d", what,
           (unsigned long long)e, (int)k, it.stale, (int)n);
}

/* Every read of e's pairs and hierarchy against the model. */
static void check_reads(interp *I, tecs_entity_t e)
{
    size_t cap = (size_t)I->npr + 1;
    tecs_entity_t *ids = malloc(cap * sizeof *ids), *bfs = malloc(cap * sizeof *bfs);
    int32_t *dep = malloc(cap * sizeof *dep), *idx = malloc(cap * sizeof *idx);
    int32_t *bdep = malloc(cap * sizeof *bdep);
    int *rels = malloc(cap * sizeof *rels);
    if (!ids || !bfs || !dep || !idx || !bdep || !rels)
        abort();
    int32_t total = 0;
    for (int r = 0; r < NR; r++) {
        int32_t n = targets_of(I, e, r, idx);
        total += n;
        EXPECT(I, tecs_pair_count(I->w, e, I->rid[r]) == n, "pair_count(%llx, %s) is %d, the "
               "model %d", (unsigned long long)e, rname[r],
               (int)tecs_pair_count(I->w, e, I->rid[r]), (int)n);
        EXPECT(I, tecs_pair_has(I->w, e, I->rid[r], (tecs_entity_t)TECS_WILDCARD) == (n > 0),
               "pair_has(%llx, %s, *) should be %d", (unsigned long long)e, rname[r], n > 0);
        for (int32_t k = 0; k <= n; k++) {
            tecs_entity_t t = k < n ? I->pr[idx[k]].tgt : 0;
            EXPECT(I, tecs_pair_target(I->w, e, I->rid[r], k) == t, "pair_target(%llx, %s, %d)"
                   " is %llx, the model %llx", (unsigned long long)e, rname[r], (int)k,
                   (unsigned long long)tecs_pair_target(I->w, e, I->rid[r], k),
                   (unsigned long long)t);
            if (k == n)
                break;
            EXPECT(I, tecs_pair_has(I->w, e, I->rid[r], t) &&
                      tecs_pair_has(I->w, e, (tecs_comp_t)TECS_WILDCARD, t),
                   "pair_has(%llx, %s, %llx) is false", (unsigned long long)e, rname[r],
                   (unsigned long long)t);
            const int32_t *v = tecs_pair_get(I->w, e, I->rid[r], t);
            EXPECT(I, r == R_VAL ? v && *v == I->pr[idx[k]].val : v == NULL,
                   "pair_get(%llx, %s, %llx) is %s", (unsigned long long)e, rname[r],
                   (unsigned long long)t, v ? "a wrong value" : "NULL");
        }
        int32_t ns = sources_of(I, e, r, ids, rels);
        check_walk(I, tecs_sources(I->w, e, I->rid[r]), ids, NULL, rels, ns, "sources", e);
    }
    EXPECT(I, tecs_pair_count(I->w, e, (tecs_comp_t)TECS_WILDCARD) == total,
           "pair_count(%llx, *) is %d, the model %d", (unsigned long long)e,
           (int)tecs_pair_count(I->w, e, (tecs_comp_t)TECS_WILDCARD), (int)total);
    EXPECT(I, tecs_pair_has(I->w, e, (tecs_comp_t)TECS_WILDCARD,
                            (tecs_entity_t)TECS_WILDCARD) == (total > 0),
           "pair_has(%llx, *, *) should be %d", (unsigned long long)e, total > 0);
    int32_t ns = sources_of(I, e, -1, ids, rels);
    check_walk(I, tecs_sources(I->w, e, (tecs_comp_t)TECS_WILDCARD), ids, NULL, rels, ns,
               "sources of every relation", e);
    int32_t n = 0;
    dfs(I, e, 0, ids, dep, &n);
    check_walk(I, tecs_tree(I->w, e, TECS_TREE_DEPTH_FIRST), ids, dep, NULL, n, "depth first",
               e);
    int32_t nb = 0;
    for (int32_t d = 1; nb < n; d++)
        for (int32_t k = 0; k < n; k++)
            if (dep[k] == d) {
                bfs[nb] = ids[k];
                bdep[nb++] = d;
            }
    check_walk(I, tecs_tree(I->w, e, TECS_TREE_BREADTH_FIRST), bfs, bdep, NULL, nb,
               "breadth first", e);
    n = 0;
    for (tecs_entity_t p = parent_of(I, e); p != 0 && n < I->npr; p = parent_of(I, p)) {
        ids[n] = p;
        dep[n] = n + 1;
        n++;
    }
    check_walk(I, tecs_tree(I->w, e, TECS_TREE_ANCESTORS), ids, dep, NULL, n, "ancestors", e);
    free(ids), free(bfs), free(dep), free(idx), free(bdep), free(rels);
}

/* After each op: every live entity's parent (and the ChildOf tag), pair
** count and depth; every pair between live entities; the full reads of a
** few entities, a different few each step. */
void mr_check(interp *I)
{
    int32_t pairs = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        if (m->st != ST_ALIVE) {
            EXPECT(I, tecs_pair_count(I->w, m->id, (tecs_comp_t)TECS_WILDCARD) == 0 &&
                      tecs_depth(I->w, m->id) == -1,
                   "an entity not alive has pairs or a depth");
            continue;
        }
        tecs_entity_t p = parent_of(I, m->id);
        EXPECT(I, tecs_has(I->w, m->id, I->rid[R_CHILD]) == (p != 0),
               "has(%llx, ChildOf) should be %d", (unsigned long long)m->id, p != 0);
        EXPECT(I, tecs_pair_target(I->w, m->id, I->rid[R_CHILD], 0) == p,
               "the parent of %llx is %llx, the model %llx", (unsigned long long)m->id,
               (unsigned long long)tecs_pair_target(I->w, m->id, I->rid[R_CHILD], 0),
               (unsigned long long)p);
        EXPECT(I, tecs_depth(I->w, m->id) == depth_of(I, m->id), "depth of %llx is %d, the "
               "model %d", (unsigned long long)m->id, (int)tecs_depth(I->w, m->id),
               (int)depth_of(I, m->id));
        pairs += tecs_pair_count(I->w, m->id, (tecs_comp_t)TECS_WILDCARD);
        if ((uint32_t)i % 16 == (uint32_t)I->step % 16)
            check_reads(I, m->id);
    }
    for (int32_t i = 0; i < I->npr; i++)
        EXPECT(I, live(I, I->pr[i].src) && live(I, I->pr[i].tgt),
               "the model holds a pair of an entity not alive");
    EXPECT(I, pairs == I->npr, "the world holds %d pairs, the model %d", (int)pairs,
           (int)I->npr);
}

/* ---- operations ---------------------------------------------------------------- */

/* A relation by x: mostly one of the four, sometimes a component that is
** not one (TECS_EINVAL) or an unknown id (TECS_ENOCOMP). @return R_* or -1,
** -2 for those. */
static int pick_rel(interp *I, uint8_t x, tecs_comp_t *c)
{
    if (x % 16 == 15) {
        *c = x & 16 ? I->cid[C_A] : UNKNOWN_COMP;
        return x & 16 ? -1 : -2;
    }
    int r = x % NR;
    *c = I->rid[r];
    return r;
}

/* A target by z: often a live entity, an existing target of src, src
** itself; else any id mi_pick_id gives. */
static tecs_entity_t pick_tgt(interp *I, tecs_entity_t src, int rel, uint32_t z)
{
    switch (z % 8) {
    case 0:
    case 1:
        if (rel >= 0) {
            int32_t i = find_pair(I, rel, src, (tecs_entity_t)TECS_WILDCARD);
            if (i >= 0)
                return I->pr[i].tgt;
        }
        break;
    case 2:
        if (I->npr > 0)
            return I->pr[(z >> 3) % (uint32_t)I->npr].src;
        break;
    case 3:
        return src;
    }
    return mi_pick_id(I, (uint32_t)mi_mix(z));
}

/* What a pair change is to return, by the checks of its call. */
static int pair_want(interp *I, int rel, tecs_entity_t src, tecs_entity_t tgt, int mode,
                     bool null, bool deferred)
{
    if (mode == PAIR_SET && null)
        return TECS_EINVAL;
    if (rel == -2)
        return TECS_ENOCOMP;
    if (rel == -1)
        return TECS_EINVAL;
    if (mode != PAIR_REMOVE && tgt == (tecs_entity_t)TECS_WILDCARD)
        return TECS_EINVAL;
    if (mode == PAIR_SET && rel != R_VAL)
        return TECS_EINVAL;
    ment *m = mi_find(I, src), *t = mi_find(I, tgt);
    if (deferred)               /* alive or a queued birth; no delayed birth */
        return !m || m->st == ST_DELAY ? TECS_EDEAD
               : mode != PAIR_REMOVE && (!t || t->st == ST_DELAY) ? TECS_EDEAD : TECS_OK;
    if (!m || m->st != ST_ALIVE)
        return TECS_EDEAD;
    if (mode == PAIR_REMOVE)
        return find_pair(I, rel, src, tgt) >= 0 ? TECS_OK : TECS_ENOENT;
    if (!t || t->st != ST_ALIVE)
        return TECS_EDEAD;
    return (rel == R_CHILD && within(I, tgt, src)) || (rel == R_ISA && isa_cycle(I, src, tgt))
               ? TECS_ECYCLE : TECS_OK;
}

/* One pair change, called, predicted and applied to the model (or
** queued to it while deferred). */
static void pair_change(interp *I, int rel, tecs_comp_t c, tecs_entity_t src,
                        tecs_entity_t tgt, int mode, bool null, int32_t v)
{
    static const char *const what[3] = { "tecs_pair_add", "tecs_pair_set", "tecs_pair_remove" };
    int want = pair_want(I, rel, src, tgt, mode, null, mi_deferred(I));
    int got = mode == PAIR_ADD   ? (int)tecs_pair_add(I->w, src, c, tgt)
            : mode == PAIR_SET   ? (int)tecs_pair_set(I->w, src, c, tgt, null ? NULL : &v)
                                 : (int)tecs_pair_remove(I->w, src, c, tgt);
    if (mi_result_is(I, got, want, what[mode]) || want != TECS_OK)
        return;
    if (mi_deferred(I)) {
        mcmd q = { .op = Q_PAIR, .mode = (uint8_t)mode, .comp = rel, .id = src, .tgt = tgt };
        q.val[0] = v;
        mi_push_dq(I, &q);
    } else if (mode == PAIR_REMOVE) {
        m_pair_remove(I, rel, src, tgt);
    } else {
        m_pair_add(I, rel, src, tgt, mode == PAIR_SET, v);
    }
}

/* tecs_pair_add or (y & 1, for a value relation) tecs_pair_set. */
void op_pair_add(interp *I, const m_op *op)
{
    tecs_comp_t c;
    int rel = pick_rel(I, op->x, &c);
    tecs_entity_t src = mi_pick_id(I, op->z);
    tecs_entity_t tgt = op->y % 64 == 63 ? (tecs_entity_t)TECS_WILDCARD
                                         : pick_tgt(I, src, rel, (uint32_t)op->y << 8 | op->x);
    int mode = (op->y & 1) && (rel == R_VAL || op->y % 16 == 1) ? PAIR_SET : PAIR_ADD;
    pair_change(I, rel, c, src, tgt, mode, op->y % 32 == 17,
                (int32_t)mi_mkval(op->z, op->y));
}

/* tecs_pair_remove of one target or (y & 1) of every target. */
void op_pair_remove(interp *I, const m_op *op)
{
    tecs_comp_t c;
    int rel = pick_rel(I, op->x, &c);
    tecs_entity_t src = mi_pick_id(I, op->z);
    tecs_entity_t tgt = op->y & 1 ? (tecs_entity_t)TECS_WILDCARD
                                  : pick_tgt(I, src, rel, (uint32_t)op->y >> 1);
    pair_change(I, rel, c, src, tgt, PAIR_REMOVE, false, 0);
}

/* Set a parent: a root gets one, a child moves (last of its new parent's
** children). */
void op_child_set(interp *I, const m_op *op)
{
    tecs_entity_t src = mi_pick_id(I, op->z);
    tecs_entity_t tgt = pick_tgt(I, src, R_CHILD, (uint32_t)op->y * 2654435761u + 2u);
    pair_change(I, R_CHILD, I->rid[R_CHILD], src, tgt, PAIR_ADD, false, 0);
}

/* Remove the parent: by wildcard, by the parent, or by another entity. */
void op_child_remove(interp *I, const m_op *op)
{
    tecs_entity_t src = mi_pick_id(I, op->z);
    tecs_entity_t tgt = op->y % 3 == 0 ? (tecs_entity_t)TECS_WILDCARD
                      : op->y % 3 == 1 ? parent_of(I, src) : mi_pick_id(I, op->y);
    pair_change(I, R_CHILD, I->rid[R_CHILD], src, tgt, PAIR_REMOVE, false, 0);
}

/* A live entity gains or loses the prefab tag: every query, cache and
** membership observer that does not name the tag leaves it out from then
** on (never while changes queue: the model follows it at once). */
void op_prefab(interp *I, const m_op *op)
{
    ment *m = mi_find(I, mi_pick_id(I, op->z));
    if (mi_deferred(I) || m == NULL || m->st != ST_ALIVE)
        return;
    int got = m->prefab ? tecs_remove(I->w, m->id, I->prefab)
                        : tecs_add(I->w, m->id, I->prefab);
    if (mi_result_is(I, got, TECS_OK, m->prefab ? "tecs_remove(Prefab)" : "tecs_add(Prefab)"))
        return;
    if (got == TECS_OK) {
        m->prefab = !m->prefab;
        m->prefab_at = I->step + 1;
    }
}

/* An entity made the child of itself or of one of its descendants: refused
** (TECS_ECYCLE, nothing changed), or while deferred queued and dropped at
** the flush if the cycle is still there. */
void op_child_cycle(interp *I, const m_op *op)
{
    tecs_entity_t src = mi_pick_id(I, op->z);
    tecs_entity_t *kids = malloc(((size_t)I->npr + 1) * sizeof *kids);
    int32_t *dep = malloc(((size_t)I->npr + 1) * sizeof *dep), n = 0;
    if (kids == NULL || dep == NULL)
        abort();
    dfs(I, src, 0, kids, dep, &n);
    tecs_entity_t tgt = n > 0 && op->y % 4 ? kids[op->y % (uint32_t)n] : src;
    free(kids);
    free(dep);
    pair_change(I, R_CHILD, I->rid[R_CHILD], src, tgt, PAIR_ADD, false, 0);
}

/* Destroy a target (a parent, a source's target): what dies with it per
** each relation's cleanup, or TECS_EBUSY when a REFUSE pair names one. */
void op_pair_destroy(interp *I, const m_op *op)
{
    if (I->npr == 0)
        return;
    const mpair *p = &I->pr[op->z % (uint32_t)I->npr];
    tecs_entity_t id = op->y & 1 ? p->tgt : p->src;
    ment *m = mi_find(I, id);
    bool now = !mi_deferred(I);
    int want = now && mr_refused(I, m) ? TECS_EBUSY : TECS_OK;
    int got = (int)tecs_destroy(I->w, id);
    if (mi_result_is(I, got, want, "tecs_destroy of a target") || want != TECS_OK)
        return;
    if (now)
        m_destroy(I, m);
    else
        mi_push_dq(I, &(mcmd){ .op = Q_DESTROY, .id = id });
}

#if TECS_HAS_INDEX
/* Does the model's src hold an Owes pair of target t (TECS_WILDCARD: any)
** whose value compares with key as cmp? */
static bool owes_match(const interp *I, tecs_entity_t src, tecs_entity_t t, int cmp,
                       int32_t key, bool *holds)
{
    int32_t i = find_pair(I, R_VAL, src, t);
    *holds = i >= 0;
    if (i < 0)
        return false;
    int32_t v = I->pr[i].val;
    return cmp == TECS_EQ ? v == key : cmp == TECS_NE ? v != key : cmp == TECS_LT ? v < key
         : cmp == TECS_LE ? v <= key : cmp == TECS_GT ? v > key : v >= key;
}

/* The index over Owes's values the program keeps (one target's, or any
** target's: Owes is exclusive): made when there is none, then its count
** and a comparison's test of every entity checked against the model's
** pairs, and (z % 4 == 0) freed. Outside every deferral only, where the
** model's pairs are the world's. */
void op_pair_index(interp *I, const m_op *op)
{
    if (mi_deferred(I) || I->ndq > 0)
        return;
    if (I->rix == NULL) {
        tecs_entity_t t = op->x % 2 ? (tecs_entity_t)TECS_WILDCARD : mi_pick_id(I, op->z);
        if (t != (tecs_entity_t)TECS_WILDCARD && !live(I, t))
            return;
        bool ordered = op->y % 2;
        tecs_index_t *ix = tecs_index_new(I->w, &(tecs_index_desc_t){
            .comp = I->rid[R_VAL], .target = t, .type = TECS_KEY_I32,
            .kind = ordered ? TECS_INDEX_ORDERED : TECS_INDEX_HASH });
        EXPECT(I, ix || (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)),
               "tecs_index_new over (Owes, t): %s", tecs_last_error_msg(I->w));
        tecs_clear_error(I->w);
        if (ix == NULL)
            return;
        I->rix = ix;
        I->rix_t = t;
        I->rix_ordered = ordered;
    }
    int cmp = I->rix_ordered ? (int)(op->y % 6) : (int)(op->y % 2);
    int32_t key = I->npr > 0 ? I->pr[op->z % (uint32_t)I->npr].val : 0;
    tecs_filter_t *f = tecs_filter_new(I->w);
    if (f && tecs_filter_cmp(f, I->rix, (tecs_cmp_t)cmp, tecs_key_int(key)) >= 0) {
        int32_t holders = 0;
        for (int32_t i = 0; i < I->ne; i++) {
            if (I->e[i].st != ST_ALIVE)
                continue;
            bool holds, want = owes_match(I, I->e[i].id, I->rix_t, cmp, key, &holds);
            holders += holds;
            bool got = tecs_filter_test(f, I->e[i].id);
            if (got != want && tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I))
                break;          /* the index's rebuild met the failure */
            EXPECT(I, got == want, "the index over (Owes, %llx) tests %llx as %d, not %d",
                   (unsigned long long)I->rix_t, (unsigned long long)I->e[i].id, got, want);
        }
        int32_t n = tecs_index_count(I->rix);
        EXPECT(I, n == holders || (n < 0 && mi_injected(I)),
               "the index over (Owes, %llx) counts %d, the model %d",
               (unsigned long long)I->rix_t, n, holders);
    } else {
        EXPECT(I, mi_injected(I), "a filter over (Owes, t): %s", tecs_last_error_msg(I->w));
    }
    tecs_filter_free(f);
    tecs_clear_error(I->w);
    if (op->z % 4 == 0) {
        EXPECT(I, tecs_index_free(I->rix) == TECS_OK, "tecs_index_free over (Owes, t): %s",
               tecs_last_error_msg(I->w));
        I->rix = NULL;
    }
}
#endif

/* Bodies of kind x also make a pair change (y % 2: on or off). */
void op_pair_body(interp *I, const m_op *op)
{
    I->pbody[op->x % NCB] = (uint8_t)(op->y % 2);
}

/* A pair change from inside a callback: queued, pushed on the model's
** queue in call order. The model learns who died in the call that runs
** the callback (a flush, a destroy's hooks) only after it, so TECS_EDEAD
** is allowed as well as TECS_OK; what the queued change does is compared
** once it applies. */
void mr_body(interp *I, int kind, uint32_t z)
{
    static const char *const what[3] = { "tecs_pair_add", "tecs_pair_set", "tecs_pair_remove" };
    if (I->in_apply || !on(I, MF_STRUCT))
        return;
    int rel = (int)(z % NR);
    tecs_entity_t src = mi_pick_id(I, z >> 3);
    tecs_entity_t tgt = pick_tgt(I, src, rel, z >> 13);
    int mode = (z >> 24) % 4 == 0 ? PAIR_REMOVE : rel == R_VAL && (z >> 26 & 1) ? PAIR_SET
                                                                               : PAIR_ADD;
    int32_t v = (int32_t)mi_mkval(z, (uint32_t)kind);
    int want = pair_want(I, rel, src, tgt, mode, false, true);
    int got = mode == PAIR_ADD ? (int)tecs_pair_add(I->w, src, I->rid[rel], tgt)
            : mode == PAIR_SET ? (int)tecs_pair_set(I->w, src, I->rid[rel], tgt, &v)
                               : (int)tecs_pair_remove(I->w, src, I->rid[rel], tgt);
    I->cb_errs += got != TECS_OK;
    if (got == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;
        return;
    }
    EXPECT(I, got == want || got == TECS_OK || got == TECS_EDEAD,
           "%s in a callback (kind %d): got %s, model says %s", what[mode], kind,
           tecs_err_name((tecs_err_t)got), tecs_err_name((tecs_err_t)want));
    if (got != TECS_OK)
        return;
    mcmd q = { .op = Q_PAIR, .mode = (uint8_t)mode, .comp = rel, .id = src, .tgt = tgt };
    q.val[0] = v;
    mi_push_dq(I, &q);
}

/* The full reads of an entity; reads of ids that are not alive and of ids
** that are not relations; the relation components refused by tecs_add,
** tecs_set and tecs_remove (TECS_EINVAL), but for the calls that change
** nothing: an add of the ChildOf tag a child has (TECS_EEXIST), a set of
** it (TECS_OK), a remove of a tag the archetype lacks (TECS_ENOENT). */
void op_pair_read(interp *I, const m_op *op)
{
    tecs_entity_t id = mi_pick_id(I, op->z);
    I->checking++;
    if (live(I, id))
        check_reads(I, id);
    else
        EXPECT(I, !tecs_pair_has(I->w, id, (tecs_comp_t)TECS_WILDCARD,
                                 (tecs_entity_t)TECS_WILDCARD) &&
                  tecs_pair_count(I->w, id, (tecs_comp_t)TECS_WILDCARD) == 0 &&
                  tecs_depth(I->w, id) == -1 && tecs_pair_target(I->w, id, I->rid[R_CHILD], 0) == 0,
               "reads of an id not alive (%llx) find pairs", (unsigned long long)id);
    EXPECT(I, tecs_pair_count(I->w, id, I->cid[C_A]) == 0 &&
              !tecs_pair_has(I->w, id, UNKNOWN_COMP, (tecs_entity_t)TECS_WILDCARD) &&
              tecs_pair_target(I->w, id, I->cid[C_A], 0) == 0 && !tecs_is_relation(I->w, I->cid[C_A]),
           "a component that is not a relation reads as one");
    I->checking--;
    if (mi_deferred(I) || !live(I, id))
        return;
    int r = op->x % NR;
    int32_t v = 5;
    int err = op->y % 3 == 0 ? (int)tecs_add(I->w, id, I->rid[r])
            : op->y % 3 == 1 ? (int)tecs_remove(I->w, id, I->rid[r])
                             : (int)tecs_set(I->w, id, I->rid[r], &v);
    bool has = r == R_CHILD && mr_has_parent(I, id);
    int want = op->y % 3 == 0 ? (has ? TECS_EEXIST : TECS_EINVAL)
             : op->y % 3 == 1 ? (has ? TECS_EINVAL : TECS_ENOENT)
                              : (has ? TECS_OK : TECS_EINVAL);
    EXPECT(I, err == want || (err == TECS_ENOMEM && mi_injected(I)),
           "tecs_add, tecs_remove or tecs_set of relation %s: %s, not %s", rname[r],
           tecs_err_name((tecs_err_t)err), tecs_err_name((tecs_err_t)want));
    tecs_clear_error(I->w);
}

#else

void mr_setup(interp *I)
{
    (void)I;
}

int m_destroy(interp *I, ment *m)
{
    m_kill(I, m);
    return TECS_OK;
}

bool mr_refused(interp *I, const ment *m)
{
    (void)I, (void)m;
    return false;
}

void mr_forget(interp *I, tecs_entity_t id)
{
    (void)I, (void)id;
}

int mr_apply(interp *I, const mcmd *c)
{
    (void)I, (void)c;
    return TECS_OK;
}

void mr_clone(interp *I, tecs_entity_t src, tecs_entity_t dst)
{
    (void)I, (void)src, (void)dst;
}

void mr_instantiate(interp *I, tecs_entity_t src, const tecs_entity_t *roots, int32_t n,
                    bool queued)
{
    (void)I, (void)src, (void)roots, (void)n, (void)queued;
}

int32_t mr_subtree_size(const interp *I, tecs_entity_t src)
{
    (void)I, (void)src;
    return 1;
}

void mr_check(interp *I)
{
    (void)I;
}

bool mr_has_parent(const interp *I, tecs_entity_t id)
{
    (void)I, (void)id;
    return false;
}

tecs_entity_t mr_parent(const interp *I, tecs_entity_t id)
{
    (void)I, (void)id;
    return 0;
}

bool mr_has_base(const interp *I, tecs_entity_t id)
{
    (void)I, (void)id;
    return false;
}

const ment *mr_holder(const interp *I, const ment *m, int c)
{
    (void)I;
    return m && (m->mask >> c & 1) ? m : NULL;
}

bool mr_term_has(const interp *I, const tecs_term_t *t, int ci, tecs_entity_t id)
{
    (void)I, (void)t, (void)ci, (void)id;
    return false;
}

void mr_pair_term(interp *I, mquery *q, int32_t t, uint32_t z)
{
    (void)I, (void)q, (void)t, (void)z;
}

void op_prefab(interp *I, const m_op *op)
{
    (void)I, (void)op;
}

size_t mr_memory_allow(const interp *I)
{
    (void)I;
    return 0;
}

void mr_register(interp *I, tecs_world_t *w)
{
    (void)I, (void)w;
}

void mr_body(interp *I, int kind, uint32_t z)
{
    (void)I, (void)kind, (void)z;
}

int32_t mr_unparented(const interp *I, const tecs_comp_t *ids, int32_t n, tecs_comp_t *out)
{
    (void)I;
    memcpy(out, ids, (size_t)n * sizeof *out);
    return n;
}

#endif
