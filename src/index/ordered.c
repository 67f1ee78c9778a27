/*
** index/ordered.c — the ordered index: a B+-tree of (key, entity) items,
** its node pool, its builders and the radix sort they use.
**
** Leaves hold at most OB items, in order, linked to their neighbours;
** inner nodes hold at most OF children, each with a copy of the largest
** item below it:
**
**                          [ k9 | k40 ]                 root
**                         /            \
**          leaf [k1 k1 k3 .. k9] <-> [k12 .. k40]       leaves
**
** A search reads one small array per level; an insert or an erase moves at
** most OB items, a full node splits in two, an empty one goes away:
** O(log n). A range finds its first item and walks the leaves: O(log n +
** k). Ties are ordered by entity slot, so every item is distinct. A node
** keeps keys and entities in two arrays (a search reads keys only); a leaf
** of OB items and an inner node of OF children have about the same size,
** so both come from one pool of spare nodes.
**
** Invariants:
** - every leaf is non-empty and in the leaf list in key order; an inner
**   node's copy of a child's largest item equals that item;
** - lof[slot] names the leaf holding the item of the entity in that slot
**   (kept by inserts, moves and splits), so an entity's old leaf is one
**   load from its slot, not two (pos, then the entry);
** - before anything changes, the pool holds a node per level and one for a
**   new root (pool_need): an insert never fails half-way;
** - hint, when not NULL, is the leaf (hint_k, hint_slot) goes to in the
**   tree as it is: any change to the tree clears it.
**
** A re-key (tecs_set) is the hot path. The veto before the write starts
** fetching the old leaf, finds the leaf the new key goes to (the hint) and
** fetches it; the re-key then moves the item from leaf to leaf, or inside
** its leaf when the new key stays there, touching nothing above the
** leaves unless an item is its leaf's last or the new leaf is full (then
** an erase and an insert from the root).
**
** A rebuild sorts the items once (a radix sort when the keys are numbers)
** and lays them out in leaves about 3/4 full, then the levels above.
*/
#include "internal.h"

/* ---- the node pool ---------------------------------------------------- */

/* Nodes of the pool (taken by splits): at least need, allocating what is
** missing; false when out of memory (the pool keeps what it got). */
static bool pool_fill(tecs_index_t *x, int32_t need)
{
    while (x->npool < need) {
        onode *t = tecs__alloc(x->world, sizeof *t);
        if (t == NULL)
            return false;
        t->next = x->pool;
        x->pool = t;
        x->npool++;
    }
    return true;
}

static onode *pool_take(tecs_index_t *x)
{
    onode *t = x->pool;
    assert(t != NULL);
    x->pool = t->next;
    x->npool--;
    return t;
}

/* Give t back to the pool, or free it when the pool has enough. */
static void pool_put(tecs_index_t *x, onode *t)
{
    if (x->npool >= pool_need(x) + 2) {
        tecs__free(x->world, t, sizeof *t);
        return;
    }
    t->next = x->pool;
    x->pool = t;
    x->npool++;
}

/* ---- nodes and insert ------------------------------------------------- */

/* The largest item under t, a node at height h. */
static okey omax(onode *t, int32_t h)
{
    return (okey){ t->u.lf.k[t->n - 1], oents(t, h)[t->n - 1] };
}

/* Put (k, e) at place i of the n items of node t at height h (room for
** one more). */
static void oput(onode *t, int32_t h, int32_t i, uint64_t k, tecs_entity_t e)
{
    uint64_t *kv = t->u.lf.k;
    tecs_entity_t *ev = oents(t, h);
    memmove(kv + i + 1, kv + i, (size_t)(t->n - i) * sizeof *kv);
    memmove(ev + i + 1, ev + i, (size_t)(t->n - i) * sizeof *ev);
    kv[i] = k;
    ev[i] = e;
    t->n++;
}

/* Take item i out of node t at height h. */
static void otake(onode *t, int32_t h, int32_t i)
{
    uint64_t *kv = t->u.lf.k;
    tecs_entity_t *ev = oents(t, h);
    memmove(kv + i, kv + i + 1, (size_t)(t->n - i - 1) * sizeof *kv);
    memmove(ev + i, ev + i + 1, (size_t)(t->n - i - 1) * sizeof *ev);
    t->n--;
}

/* Insert o into leaf t, the leaf map told where it went; the new right
** half when t split (the leaf map told of its items), else NULL. */
static onode *leaf_insert(tecs_index_t *x, onode *t, okey o)
{
    int32_t i = ofind(x, t->u.lf.k, t->u.lf.e, t->n, o.k, TECS_ENTITY_INDEX(o.e));
    onode *r = NULL;
    if (t->n == OB) {
        r = pool_take(x);
        r->n = OB / 2;
        memcpy(r->u.lf.k, t->u.lf.k + OB / 2, (OB / 2) * sizeof *r->u.lf.k);
        memcpy(r->u.lf.e, t->u.lf.e + OB / 2, (OB / 2) * sizeof *r->u.lf.e);
        for (int32_t j = 0; j < OB / 2; j++)
            x->lof[TECS_ENTITY_INDEX(r->u.lf.e[j])] = r;
        t->n = OB / 2;
        r->prev = t;
        r->next = t->next;
        if (t->next)
            t->next->prev = r;
        t->next = r;
        if (i > OB / 2) {
            t = r;
            i -= OB / 2;
        }
    }
    oput(t, 0, i, o.k, o.e);
    x->lof[TECS_ENTITY_INDEX(o.e)] = t;
    return r;
}

/* Insert o under t, a node at height h; the new right sibling of t when
** it split, else NULL. */
static onode *node_insert(tecs_index_t *x, onode *t, int32_t h, okey o)
{
    ofetch(t, h);
    if (h == 0)
        return leaf_insert(x, t, o);
    int32_t c = ofind(x, t->u.in.k, t->u.in.e, t->n, o.k, TECS_ENTITY_INDEX(o.e));
    if (c == t->n)
        c--;
    onode *kid = t->u.in.kid[c];
    onode *r = node_insert(x, kid, h - 1, o);
    okey m = omax(kid, h - 1);
    t->u.in.k[c] = m.k;
    t->u.in.e[c] = m.e;
    if (r == NULL)
        return NULL;
    onode *s = NULL;
    c++;
    if (t->n == OF) {
        s = pool_take(x);
        s->n = OF - OF / 2;
        memcpy(s->u.in.k, t->u.in.k + OF / 2, (size_t)s->n * sizeof *s->u.in.k);
        memcpy(s->u.in.e, t->u.in.e + OF / 2, (size_t)s->n * sizeof *s->u.in.e);
        memcpy(s->u.in.kid, t->u.in.kid + OF / 2, (size_t)s->n * sizeof *s->u.in.kid);
        t->n = OF / 2;
        if (c > OF / 2) {
            t = s;
            c -= OF / 2;
        }
    }
    memmove(t->u.in.kid + c + 1, t->u.in.kid + c, (size_t)(t->n - c) * sizeof *t->u.in.kid);
    t->u.in.kid[c] = r;
    m = omax(r, h - 1);
    oput(t, h, c, m.k, m.e);
    return s;
}

/* Make t, a node with children a and b at height h - 1 (h >= 1), the root. */
static void oroot(tecs_index_t *x, onode *t, onode *a, onode *b, int32_t h)
{
    t->n = 0;
    t->u.in.kid[0] = a;
    t->u.in.kid[1] = b;
    okey m = omax(a, h - 1);
    oput(t, h, 0, m.k, m.e);
    m = omax(b, h - 1);
    oput(t, h, 1, m.k, m.e);
    x->root = t;
    x->height = h;
}

bool tecs__ordered_insert(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    if (!pool_fill(x, pool_need(x)))
        return false;
    x->hint = NULL;
    okey o = { k, e };
    if (x->root == NULL) {
        onode *t = pool_take(x);
        t->n = 0;
        t->next = t->prev = NULL;
        oput(t, 0, 0, k, e);
        x->lof[TECS_ENTITY_INDEX(e)] = t;
        x->root = t;
        x->height = 0;
        return true;
    }
    onode *r = node_insert(x, x->root, x->height, o);
    if (r)
        oroot(x, pool_take(x), x->root, r, x->height + 1);
    return true;
}

/* ---- erase and re-key ------------------------------------------------- */

/* Take leaf t out of the leaf list. */
static void leaf_unlink(onode *t)
{
    if (t->prev)
        t->prev->next = t->next;
    if (t->next)
        t->next->prev = t->prev;
}

/* Erase (k, e) under t, a node at height h; true when t is left empty
** (unlinked, its parent drops it). */
static bool node_erase(tecs_index_t *x, onode *t, int32_t h, uint64_t k, uint32_t slot)
{
    ofetch(t, h);
    int32_t c = ofind(x, t->u.lf.k, oents(t, h), t->n, k, slot);
    assert(c < t->n);
    if (h == 0) {
        assert(t->u.lf.k[c] == k);
        otake(t, 0, c);
        if (t->n > 0)
            return false;
        leaf_unlink(t);
        return true;
    }
    onode *kid = t->u.in.kid[c];
    if (!node_erase(x, kid, h - 1, k, slot)) {
        okey m = omax(kid, h - 1);
        t->u.in.k[c] = m.k;
        t->u.in.e[c] = m.e;
        return false;
    }
    pool_put(x, kid);
    memmove(t->u.in.kid + c, t->u.in.kid + c + 1, (size_t)(t->n - c - 1) * sizeof *t->u.in.kid);
    otake(t, h, c);
    return t->n == 0;
}

static void oerase(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    x->hint = NULL;
    if (node_erase(x, x->root, x->height, k, TECS_ENTITY_INDEX(e))) {
        pool_put(x, x->root);
        x->root = NULL;
        x->height = 0;
        return;
    }
    while (x->height > 0 && x->root->n == 1) {  /* a root with one child goes */
        onode *t = x->root;
        x->root = t->u.in.kid[0];
        x->height--;
        pool_put(x, t);
    }
}

/* The leaf holding entry t's item, from the leaf map. */
static inline onode *leaf_of(const tecs_index_t *x, const ient *t)
{
    return x->lof[TECS_ENTITY_INDEX(t->e)];
}

/* The place of entry t's item in its leaf. */
static int32_t oplace(const tecs_index_t *x, const ient *t)
{
    const onode *l = leaf_of(x, t);
    int32_t i = ofind(x, l->u.lf.k, l->u.lf.e, l->n, t->key, TECS_ENTITY_INDEX(t->e));
    assert(i < l->n && l->u.lf.e[i] == t->e);
    return i;
}

/* Starting from the leaf the map names: when the item is not the leaf's
** last, nothing above the leaf changes and no search from the root is
** needed. */
void tecs__ordered_erase(tecs_index_t *x, const ient *t)
{
    onode *l = leaf_of(x, t);
    x->hint = NULL;
    ofetch(l, 0);
    int32_t i = oplace(x, t);
    if (i >= l->n - 1)
        oerase(x, t->key, t->e);
    else
        otake(l, 0, i);
}

/* Move item i of leaf l to key k, in place: k falls inside l before its
** last item, which item i is not, so nothing above the leaf changes. j is
** k's place among l's items. */
static void oshift(onode *l, int32_t i, int32_t j, uint64_t k)
{
    tecs_entity_t e = l->u.lf.e[i];
    uint64_t *kv = l->u.lf.k;
    tecs_entity_t *ev = l->u.lf.e;
    if (j > i) {
        j--;
        memmove(kv + i, kv + i + 1, (size_t)(j - i) * sizeof *kv);
        memmove(ev + i, ev + i + 1, (size_t)(j - i) * sizeof *ev);
    } else {
        memmove(kv + j + 1, kv + j, (size_t)(i - j) * sizeof *kv);
        memmove(ev + j + 1, ev + j, (size_t)(i - j) * sizeof *ev);
    }
    kv[j] = k;
    ev[j] = e;
}

/* Give entry t's item the key k (the pool filled for an insert). The
** veto started fetching the old leaf; the new one is searched for (or
** taken from the hint the veto left, when the tree has not changed
** since); when neither item is its leaf's last and the new leaf has
** room, only the two leaves change (or one, when k stays in the old
** leaf); else erase and insert from the root. */
static void orekey(tecs_index_t *x, ient *t, uint64_t k)
{
    onode *l = leaf_of(x, t);
    uint32_t slot = TECS_ENTITY_INDEX(t->e);
    onode *d = (onode *)x->hint;
    if (d == NULL || x->hint_k != k || x->hint_slot != slot)
        d = (onode *)oleaf(x, k, slot);
    x->hint = NULL;
    int32_t j = d ? ofind(x, d->u.lf.k, d->u.lf.e, d->n, k, slot) : 0;
    if (d && j == d->n)
        d = NULL;
    int32_t i = oplace(x, t);
    if (d != NULL && i < l->n - 1 && (d == l || d->n < OB)) {
        if (d == l) {
            oshift(l, i, j, k);
        } else {
            otake(l, 0, i);
            oput(d, 0, j, k, t->e);
            x->lof[slot] = d;
        }
        return;
    }
    tecs__ordered_erase(x, t);
    tecs__ordered_insert(x, k, t->e);
}

/* ---- find, room, lifetime --------------------------------------------- */

bool tecs__ordered_rekey(tecs_index_t *x, ient *t, uint64_t k)
{
    if (!pool_fill(x, pool_need(x)))
        return false;
    orekey(x, t, k);            /* the erase leaves the pool full enough */
    return true;
}

tecs_entity_t tecs__ordered_find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    int32_t i;
    for (const onode *t = olower(x, k, 0, &i); t; t = t->next, i = 0)
        for (; i < t->n; i++) {
            if (kcmp(x, t->u.lf.k[i], k) != 0)
                return 0;
            if (t->u.lf.e[i] != e)
                return t->u.lf.e[i];
        }
    return 0;
}

tecs_err_t tecs__ordered_grow(tecs_index_t *x, int32_t slots)
{
    int32_t old = x->nlof;
    if (slots > x->nlof) {
        if (tecs__grow(x->world, (void **)&x->lof, &x->nlof, slots, sizeof *x->lof))
            return TECS_ENOMEM;
        memset(x->lof + old, 0, (size_t)(x->nlof - old) * sizeof *x->lof);
    }
    return pool_fill(x, pool_need(x)) ? TECS_OK : TECS_ENOMEM;
}

/* Free t, a node at height h, and everything under it. */
static void ofree(tecs_index_t *x, onode *t, int32_t h)
{
    for (int32_t c = 0; h > 0 && c < t->n; c++)
        ofree(x, t->u.in.kid[c], h - 1);
    tecs__free(x->world, t, sizeof *t);
}
void tecs__ordered_clear(tecs_index_t *x)
{
    x->hint = NULL;
    if (x->root)
        ofree(x, x->root, x->height);
    x->root = NULL;
    x->height = 0;
}

void tecs__ordered_release(tecs_index_t *x)
{
    while (x->pool)
        tecs__free(x->world, pool_take(x), sizeof(onode));
    tecs__free(x->world, x->lof, (size_t)x->nlof * sizeof *x->lof);
}

/* ---- building --------------------------------------------------------- */

/* LSD radix sort of v[0..n) by k, 11 bits a pass, through tmp. Digits
** are taken from k minus the smallest k, min, so that places of one
** archetype need two passes, not four. */
/* The digit width of a radix sort of n items over `bits` bits: of the
** widths up to 11, the one whose passes cost least, a pass costing its
** table (cleared, summed: about 3 steps a digit value) and two visits of
** each item. Few items take narrow digits and more passes, so that the
** tables do not outweigh the items. */
static int radix_digit(int32_t n, int bits)
{
    int best = 11;
    int64_t best_cost = INT64_MAX;
    for (int d = 11; d >= 4; d--) {
        int passes = (bits + d - 1) / d;
        int64_t cost = (int64_t)passes * (3 * ((int64_t)1 << d) + 16 * (int64_t)n);
        if (cost < best_cost)
            best = d, best_cost = cost;
    }
    return best;
}

/* tecs__okey_radix in two passes of d-bit digits: both digits counted in
** one read of the items, the second pass writing back into v. */
static TECS__NOINLINE void radix2(okey *v, okey *tmp, int32_t n, uint64_t min, int d)
{
    uint32_t mask = (1u << d) - 1;
    int32_t lo[2049], hi[2049];
    memset(lo, 0, (mask + 2) * sizeof *lo);
    memset(hi, 0, (mask + 2) * sizeof *hi);
    for (int32_t i = 0; i < n; i++) {
        uint64_t k = v[i].k - min;
        lo[(k & mask) + 1]++;
        hi[((k >> d) & mask) + 1]++;
    }
    for (uint32_t j = 0; j < mask; j++) {
        lo[j + 1] += lo[j];
        hi[j + 1] += hi[j];
    }
    for (int32_t i = 0; i < n; i++)
        tmp[lo[(v[i].k - min) & mask]++] = v[i];
    for (int32_t i = 0; i < n; i++)
        v[hi[((tmp[i].k - min) >> d) & mask]++] = tmp[i];
}

void tecs__okey_radix(okey *v, okey *tmp, int32_t n, uint64_t min, uint64_t max)
{
    int bits = 0;
    while (bits < 64 && ((max - min) >> bits) != 0)
        bits++;
    int d = radix_digit(n, bits);
    if (bits > d && bits <= 2 * d) {
        radix2(v, tmp, n, min, d);
        return;
    }
    uint32_t mask = (1u << d) - 1;
    okey *src = v, *dst = tmp;
    for (int shift = 0; shift < bits; shift += d) {
        int32_t count[2049];
        memset(count, 0, (mask + 2) * sizeof *count);
        for (int32_t i = 0; i < n; i++)
            count[(((src[i].k - min) >> shift) & mask) + 1]++;
        for (uint32_t j = 0; j < mask; j++)
            count[j + 1] += count[j];
        for (int32_t i = 0; i < n; i++)
            dst[count[((src[i].k - min) >> shift) & mask]++] = src[i];
        okey *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, (size_t)n * sizeof *v);
}

/* Order of two build items: key, then slot (high half of e). */
static int build_cmp(const tecs_index_t *x, const okey *a, const okey *b)
{
    int c = kcmp(x, a->k, b->k);
    return c ? c : (a->e > b->e) - (a->e < b->e);
}

/* Sort build items (key, slot << 32 | generation) by key, then slot, with a
** radix sort when the keys are numbers whose span and the slots fit in 64
** bits together: key - min above the slot in one number, so the passes
** cover only the bits in use. false otherwise (then the caller sorts by
** comparison). tmp holds n items. */
static bool build_radix(const tecs_index_t *x, okey *v, okey *tmp, int32_t n)
{
    if (x->cls == TECS_KEYC_STR)
        return false;
    uint64_t lo = v[0].k, hi = v[0].k;
    for (int32_t i = 1; i < n; i++) {
        lo = v[i].k < lo ? v[i].k : lo;
        hi = v[i].k > hi ? v[i].k : hi;
    }
    int sbits = 1;                      /* bits of the largest slot */
    while (sbits < 32 && ((uint64_t)x->world->ei.nrecs >> sbits) != 0)
        sbits++;
    if (sbits < 64 && ((hi - lo) >> (64 - sbits)) != 0)
        return false;
    for (int32_t i = 0; i < n; i++)
        v[i].k = (v[i].k - lo) << sbits | v[i].e >> 32;
    tecs__okey_radix(v, tmp, n, 0, (hi - lo) << sbits | (((uint64_t)1 << sbits) - 1));
    for (int32_t i = 0; i < n; i++)
        v[i].k = (v[i].k >> sbits) + lo;
    return true;
}

/* Lay the sorted items v[0..n) out in nl leaves from the pool, into
** lv[0..nl), in about equal shares, and tell each entry its leaf. */
static void build_leaves(tecs_index_t *x, const okey *v, int32_t n, onode **lv, int32_t nl)
{
    onode *prev = NULL;
    for (int32_t j = 0; j < nl; j++) {
        int32_t lo = (int32_t)((int64_t)j * n / nl), hi = (int32_t)((int64_t)(j + 1) * n / nl);
        onode *t = pool_take(x);
        t->n = hi - lo;
        for (int32_t i = lo; i < hi; i++) {
            uint32_t slot = (uint32_t)(v[i].e >> 32);
            t->u.lf.k[i - lo] = v[i].k;
            t->u.lf.e[i - lo] = tecs__make_id(slot, (uint32_t)v[i].e);
            x->lof[slot] = t;
        }
        t->prev = prev;
        t->next = NULL;
        if (prev)
            prev->next = t;
        prev = t;
        lv[j] = t;
    }
}

/* Put the c nodes lv[0..c) at height h under new parents, into lv[0..m). */
static int32_t build_level(tecs_index_t *x, onode **lv, int32_t c, int32_t h, int32_t m)
{
    for (int32_t j = 0; j < m; j++) {
        int32_t lo = (int32_t)((int64_t)j * c / m), hi = (int32_t)((int64_t)(j + 1) * c / m);
        onode *t = pool_take(x);
        t->n = hi - lo;
        for (int32_t i = lo; i < hi; i++) {
            okey o = omax(lv[i], h);
            t->u.in.kid[i - lo] = lv[i];
            t->u.in.k[i - lo] = o.k;
            t->u.in.e[i - lo] = o.e;
        }
        lv[j] = t;
    }
    return m;
}

/* Sort the items (key, then slot), cut them into leaves about 3/4 full,
** then the levels above, every node taken from the pool filled first. */
tecs_err_t tecs__ordered_build(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    int32_t n = x->n, per = OB * 3 / 4, per_in = OF * 3 / 4;
    if (n == 0)
        return TECS_OK;
    int32_t nl = (n + per - 1) / per, total = nl;
    for (int32_t c = nl; c > 1; c = (c + per_in - 1) / per_in)
        total += (c + per_in - 1) / per_in;
    okey *v = tecs__alloc(w, tecs__bytes((uint64_t)n * 2, sizeof *v));
    onode **lv = v ? tecs__alloc(w, tecs__bytes((uint64_t)nl, sizeof *lv)) : NULL;
    tecs_err_t err = lv && pool_fill(x, x->npool + total) ? TECS_OK : TECS_ENOMEM;
    for (int32_t i = 0; i < n && !err; i++)
        v[i] = (okey){ x->ents[i].key, (uint64_t)TECS_ENTITY_INDEX(x->ents[i].e) << 32 |
                                           TECS_ENTITY_GENERATION(x->ents[i].e) };
    if (!err && !build_radix(x, v, v + n, n))
        tecs__okey_sort(v, v + n, n, build_cmp, x);
    for (int32_t i = 1; i < n && !err && x->d.unique; i++)
        if (kcmp(x, v[i - 1].k, v[i].k) == 0 && !nan_key(x, v[i].k))
            err = tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": "
                            TECS__ENT_FMT " and " TECS__ENT_FMT " share a key",
                            TECS__COMP(w, x->d.comp), (unsigned)(v[i - 1].e >> 32),
                            (unsigned)v[i - 1].e, (unsigned)(v[i].e >> 32), (unsigned)v[i].e);
    if (!err) {
        build_leaves(x, v, n, lv, nl);
        int32_t h = 0;
        for (int32_t c = nl; c > 1; h++)
            c = build_level(x, lv, c, h, (c + per_in - 1) / per_in);
        x->root = lv[0];
        x->height = h;
    }
    if (lv)
        tecs__free(w, lv, (size_t)nl * sizeof *lv);
    if (v)
        tecs__free(w, v, (size_t)n * 2 * sizeof *v);
    return err;
}

/* ---- verification ----------------------------------------------------- */

/* Verify the subtree t at height h: sizes, the copies of the last items,
** and that its leaves come next in the leaf list (*leaf is the last one
** seen); counts its items into *total. */
static bool verify_node(tecs_index_t *x, const onode *t, int32_t h, const onode **leaf,
                       int32_t *total)
{
    if (t->n < 1 || t->n > (h ? OF : OB))
        return false;
    if (h == 0) {
        if (t->prev != *leaf || (*leaf && (*leaf)->next != t))
            return false;
        *leaf = t;
        *total += t->n;
        return true;
    }
    for (int32_t c = 0; c < t->n; c++) {
        okey m = omax(t->u.in.kid[c], h - 1);
        if (!verify_node(x, t->u.in.kid[c], h - 1, leaf, total) || m.e != t->u.in.e[c] ||
            m.k != t->u.in.k[c])
            return false;
    }
    return true;
}

tecs_err_t tecs__ordered_verify(tecs_index_t *x)
{
    int32_t total = 0;
    const onode *leaf = NULL;
    if (x->root && (!verify_node(x, x->root, x->height, &leaf, &total) || leaf->next))
        return corrupt(x->world, "tree shape", x->id);
    const onode *pt = NULL;
    int32_t pi = 0;
    for (const onode *t = ofirst(x); t; t = t->next)
        for (int32_t i = 0; i < t->n; i++) {
            int32_t j = ent_find(x, t->u.lf.e[i]);
            if (j < 0 || x->ents[j].key != t->u.lf.k[i])
                return corrupt(x->world, "tree item without its entry", x->id);
            if (x->lof[TECS_ENTITY_INDEX(t->u.lf.e[i])] != t)
                return corrupt(x->world, "leaf map names another leaf", x->id);
            if (pt && ocmp(x, t->u.lf.k[i], TECS_ENTITY_INDEX(t->u.lf.e[i]), pt->u.lf.k[pi],
                           pt->u.lf.e[pi]) <= 0)
                return corrupt(x->world, "tree out of order", x->id);
            pt = t;
            pi = i;
        }
    return total == x->n ? TECS_OK : corrupt(x->world, "tree items != entries", x->id);
}
