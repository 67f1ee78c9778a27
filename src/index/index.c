/*
** index/index.c — field indexes: storage, upkeep and the unique check.
**
** An index maps one field of one component to the entities that have it.
** Every kind keeps the same dense table of entries, one per entity, and a
** map from entity slot to entry, so "what is e's key" is two array loads:
**
**     pos[slot] = i + 1 ───> ents[i] = { key, aux, entity, h, next, prev }
**
** key is the field, encoded so that unsigned comparison is the field's
** order (signed: sign bit flipped; real: IEEE bits made monotonic, -0 made
** +0, every NaN made one value above +inf); strings are the index's own
** copy, key holding its pointer. aux keeps the raw field (a unique index
** puts it back when a raw write would duplicate a key), or x and y.
**
** On top of the table, per kind:
**
**     hash     buckets[h & mask] -> first entry; entries chained by
**              next / prev (doubly linked: unlinking is O(1));
**     unique   (hash) no chains: one open table of (key, entity) cells,
**              linear probing, at most 3/4 full, emptied cells shifting
**              back the run after them (no tombstones): a lookup reads
**              one or two neighbouring cells, not a bucket then an entry;
**     spatial  the same chains, the key being the grid cell (cx, cy);
**     ordered  a B+-tree of (key, entity) items: leaves of at most OB
**              items, linked in key order; inner nodes of at most OF
**              children, each with a copy of the largest item below it:
**
**                              [ k9 | k40 ]                 root
**                             /            \
**              leaf [k1 k1 k3 .. k9] <-> [k12 .. k40]       leaves
**
**              A search reads one small array per level; insert / erase
**              move at most OB items, a full node splits in two, an empty
**              one goes away: O(log n). A range finds its first item and
**              walks the leaves: O(log n + k). Ties are ordered by entity
**              slot. Splits take nodes from a small pool, filled before
**              anything changes, so an insert never fails half-way. A
**              node keeps keys and entities in two arrays (a search reads
**              keys); a leaf of 64 items and an inner node of 42 children
**              have about the same size, ~1 KB.
**
**              A leaf map beside pos names the leaf holding each entity's
**              item (lof[slot], kept by inserts and splits), so the old
**              leaf is one load from the slot, not two (pos, then the
**              entry). A re-key (tecs_set) is the hot path: the check
**              before the write starts fetching the old leaf, finds the
**              leaf the new key goes to (the hint) and fetches it; the
**              update then moves the item from leaf to leaf, or inside
**              its leaf when the new key stays there, touching nothing
**              above the leaves unless an item is its leaf's last or the
**              new leaf is full (then erase and insert from the root).
**
** Entities are stored by id, never by row, so archetype moves need nothing.
** The index listens to component events (entity.c): ADD inserts, SET
** re-keys, REMOVE erases. Before a change, the check hook reserves room and,
** for a unique index, refuses a key another entity holds, so the world is
** never changed by a refused call. Should an allocation still fail inside
** an event (a string copy), the index marks itself dirty and is rebuilt
** from the archetypes before its next use: never stale as seen from outside.
**
** Bursts of re-keys are deferred the same way. A re-key costs a few cache
** misses (an erase and an insert down the tree, or a chain unlink and
** link); a rebuild costs a fourteenth (ordered) to a fifth (hash) of that
** per entity. So once more than n/16 (ordered) or n/4 (hash, spatial)
** values of a non-unique index have been set since it was last
** used (a lookup, a count, a where), and no cached result set depends on
** it, the index marks itself dirty and stops listening to the component
** (sets of it cost what plain sets cost), and is rebuilt at its next use:
** the re-keys of a burst cost at most about what they would have cost one
** by one, and a mass update costs one rebuild.
** A unique index always follows at once: its check must see every key.
*/
#include "internal.h"

/* ---- keys ------------------------------------------------------------- */

static uint64_t enc_int(int64_t v)
{
    return (uint64_t)v ^ (1ull << 63);
}

static uint64_t enc_real(double d)
{
    if (d != d)
        return NAN_KEY;
    if (d == 0)
        d = 0.0;
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return (u >> 63) ? ~u : u | (1ull << 63);
}

/* A NaN key equals nothing, not even another NaN: a unique index never
** refuses it, and the unique table (probed only by lookups, which refuse
** NaN) does not hold it, so any number of NaN keys cost no probe run. */
static inline bool nan_key(const tecs_index_t *x, uint64_t k)
{
    return x->cls == TECS_KEYC_REAL && k == NAN_KEY;
}

static int32_t class_of(tecs_key_type_t t)
{
    if (t >= TECS_KEY_I8 && t <= TECS_KEY_I64)
        return TECS_KEYC_INT;
    if (t >= TECS_KEY_U8 && t <= TECS_KEY_U64)
        return TECS_KEYC_UINT;
    if (t == TECS_KEY_FLOAT || t == TECS_KEY_DOUBLE)
        return TECS_KEYC_REAL;
    if (t == TECS_KEY_STR || t == TECS_KEY_CHARS)
        return TECS_KEYC_STR;
    return 0;
}

/* Names for messages. */
static const char *const key_type_names[] = {
    "?", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float", "double", "string", "char[N]"
};
static const char *const key_class_names[] = { "?", "int", "uint", "real", "str" };

const char *tecs__index_kind_name(tecs_index_kind_t kind)
{
    return kind == TECS_INDEX_HASH ? "hash" : kind == TECS_INDEX_ORDERED ? "ordered" : "spatial";
}

static uint32_t field_size(const tecs_index_desc_t *d)
{
    static const uint8_t sz[] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, sizeof(char *), 0 };
    return d->type == TECS_KEY_CHARS ? (uint32_t)d->size : sz[d->type];
}

static int64_t read_signed(const void *p, uint32_t size)
{
    int8_t a; int16_t b; int32_t c; int64_t d;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}

static uint64_t read_unsigned(const void *p, uint32_t size)
{
    uint8_t a; uint16_t b; uint32_t c; uint64_t d;
    switch (size) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}

/* The size bytes of the field at p, as they lie in memory, in the low
** bytes of a zeroed word (a fixed-size copy per size: no library call). */
static uint64_t read_raw(const void *p, uint32_t size)
{
    uint64_t u = 0;
    switch (size) {
    case 1: memcpy(&u, p, 1); break;
    case 2: memcpy(&u, p, 2); break;
    case 4: memcpy(&u, p, 4); break;
    default: memcpy(&u, p, 8); break;
    }
    return u;
}

static float read_float(const void *p)
{
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}

/* The key of the component value at val. */
static void read_probe(const tecs_index_t *x, const void *val, probe *p)
{
    const char *f = (const char *)val + x->d.offset;
    p->aux = 0;
    switch (x->cls) {
    case TECS_KEYC_INT:
        p->k = enc_int(read_signed(f, x->fsize));
        p->aux = read_raw(f, x->fsize);
        return;
    case TECS_KEYC_UINT:
        p->k = read_unsigned(f, x->fsize);
        p->aux = read_raw(f, x->fsize);
        return;
    case TECS_KEYC_REAL:
        if (x->d.kind == TECS_INDEX_SPATIAL) {
            float fx = read_float(f), fy = read_float((const char *)val + x->d.offset_y);
            p->k = (fx == fx && fy == fy) ? cell_key(cell_of(fx, x->d.cell_size),
                                                     cell_of(fy, x->d.cell_size))
                                          : NOWHERE_CELL;
            memcpy(&p->aux, &fx, 4);
            memcpy((char *)&p->aux + 4, &fy, 4);
            return;
        }
        double d;
        if (x->fsize == 4)
            d = read_float(f);
        else
            memcpy(&d, f, sizeof d);
        p->k = enc_real(d);
        p->aux = read_raw(f, x->fsize);
        return;
    default:
        if (x->d.type == TECS_KEY_STR) {
            const char *s;
            memcpy(&s, f, sizeof s);
            p->k = (uint64_t)(uintptr_t)s;
            p->aux = (uint64_t)(uintptr_t)s;
            return;
        }
        const char *end = memchr(f, 0, x->fsize);
        size_t len = end ? (size_t)(end - f) : x->fsize;
        memcpy(p->buf, f, len);
        p->buf[len] = 0;
        p->k = (uint64_t)(uintptr_t)p->buf;
    }
}

/* An owned copy of probe key k (strings); false when out of memory. */
static bool own_key(tecs_index_t *x, uint64_t k, uint64_t *out)
{
    const char *s = (const char *)(uintptr_t)k;
    if (x->cls != TECS_KEYC_STR || s == NULL) {
        *out = k;
        return true;
    }
    size_t len = strlen(s) + 1;
    char *c = tecs__alloc(x->world, len);
    if (c == NULL)
        return false;
    memcpy(c, s, len);
    *out = (uint64_t)(uintptr_t)c;
    return true;
}

static void free_key(tecs_index_t *x, uint64_t k)
{
    char *s = (char *)(uintptr_t)k;
    if (x->cls == TECS_KEYC_STR && s)
        tecs__free(x->world, s, strlen(s) + 1);
}

/* ---- the ordered B+-tree ---------------------------------------------- */

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

/* What one insert may take: a node per level and a new root. */
static int32_t pool_need(const tecs_index_t *x)
{
    return x->height + 2;
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

/* Insert (k, e), the leaf map told of its leaf; false (nothing changed)
** when a node is needed and none can be had. */
static bool oinsert(tecs_index_t *x, uint64_t k, tecs_entity_t e)
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

/* Erase entry t's item, starting from the leaf the map names: when the
** item is not the leaf's last, nothing above the leaf changes and no
** search from the root is needed. */
static void oerase_ent(tecs_index_t *x, const ient *t)
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
** check started fetching the old leaf; the new one is searched for (or
** taken from the hint the check left, when the tree has not changed
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
    oerase_ent(x, t);
    oinsert(x, k, t->e);
}

/* Free t, a node at height h, and everything under it. */
static void ofree(tecs_index_t *x, onode *t, int32_t h)
{
    for (int32_t c = 0; h > 0 && c < t->n; c++)
        ofree(x, t->u.in.kid[c], h - 1);
    tecs__free(x->world, t, sizeof *t);
}

/* ---- the unique table ------------------------------------------------- */

/* Put (k, e) in a free cell of the table (room there is). */
static void tab_put(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    uint32_t mask = (uint32_t)x->ntab - 1, i = khash(x, k) & mask;
    while (x->tab[i].e != 0)
        i = (i + 1) & mask;
    x->tab[i] = (okey){ k, e };
}

/* Empty cell i, shifting back the cells after it that would not be found
** past the hole (linear probing without tombstones). */
static void tab_del(tecs_index_t *x, uint32_t i)
{
    uint32_t mask = (uint32_t)x->ntab - 1;
    for (uint32_t j = (i + 1) & mask; x->tab[j].e != 0; j = (j + 1) & mask) {
        uint32_t home = khash(x, x->tab[j].k) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {  /* home at or before i */
            x->tab[i] = x->tab[j];
            i = j;
        }
    }
    x->tab[i].e = 0;
}

/* A table of room for need entries (at most 3/4 full), entries rehashed. */
static tecs_err_t tab_grow(tecs_index_t *x, int32_t need)
{
    if ((int64_t)need * 4 <= (int64_t)x->ntab * 3)
        return TECS_OK;
    int32_t nt = x->ntab ? x->ntab : 16;
    while ((int64_t)need * 4 > (int64_t)nt * 3)
        nt *= 2;
    okey *t = tecs__alloc(x->world, (size_t)nt * sizeof *t);
    if (t == NULL)
        return TECS_ENOMEM;
    tecs__free(x->world, x->tab, (size_t)x->ntab * sizeof *x->tab);
    x->tab = t;
    x->ntab = nt;
    memset(t, 0, (size_t)nt * sizeof *t);
    for (int32_t i = 0; i < x->n; i++)
        if (!nan_key(x, x->ents[i].key))
            tab_put(x, x->ents[i].key, x->ents[i].e);
    return TECS_OK;
}

/* Is there room for n more entries (and entities up to the world's slots
** + n)? The usual case, tested inline on every change. */
static inline bool has_room(const tecs_index_t *x, int32_t n)
{
    const tecs_world_t *w = x->world;
    int32_t need = x->n + n;
    return need <= x->cap && w->ei.nrecs + n <= x->npos &&
           (is_table(x)    ? (int64_t)need * 4 <= (int64_t)x->ntab * 3
            : is_hashed(x) ? (int64_t)need * 4 <= (int64_t)x->nbucket * 3
                           : x->npool >= pool_need(x) && w->ei.nrecs + n <= x->nlof);
}

/* Make room for n more entries (has_room was false). */
static TECS__NOINLINE tecs_err_t grow_room(tecs_index_t *x, int32_t n)
{
    tecs_world_t *w = x->world;
    int32_t need = x->n + n;
    if (tecs__grow(w, (void **)&x->ents, &x->cap, need, sizeof *x->ents))
        return TECS_ENOMEM;
    int32_t slots = w->ei.nrecs + n, old = x->npos;
    if (slots > x->npos) {
        if (tecs__grow(w, (void **)&x->pos, &x->npos, slots, sizeof *x->pos))
            return TECS_ENOMEM;
        memset(x->pos + old, 0, (size_t)(x->npos - old) * sizeof *x->pos);
    }
    old = x->nlof;
    if (!is_hashed(x) && slots > x->nlof) {
        if (tecs__grow(w, (void **)&x->lof, &x->nlof, slots, sizeof *x->lof))
            return TECS_ENOMEM;
        memset(x->lof + old, 0, (size_t)(x->nlof - old) * sizeof *x->lof);
    }
    if (is_table(x))
        return tab_grow(x, need);
    if (is_hashed(x) && (int64_t)need * 4 > (int64_t)x->nbucket * 3) {
        int32_t nb = x->nbucket ? x->nbucket : 16;
        while ((int64_t)need * 4 > (int64_t)nb * 3)
            nb *= 2;
        int32_t *b = tecs__alloc(w, (size_t)nb * sizeof *b);
        if (b == NULL)
            return TECS_ENOMEM;
        tecs__free(w, x->bucket, (size_t)x->nbucket * sizeof *x->bucket);
        x->bucket = b;
        x->nbucket = nb;
        memset(b, 0xff, (size_t)nb * sizeof *b);
        for (int32_t i = 0; i < x->n; i++) {
            ient *t = &x->ents[i];
            int32_t *head = &b[t->h & (uint32_t)(nb - 1)];
            t->prev = -1;
            t->next = *head;
            if (*head >= 0)
                x->ents[*head].prev = i;
            *head = i;
        }
    }
    if (!is_hashed(x) && !pool_fill(x, pool_need(x)))
        return TECS_ENOMEM;
    return TECS_OK;
}

/* Room for n more entries (and entities up to the world's slots + n), so
** that the next n inserts allocate nothing but string copies. */
static inline tecs_err_t reserve(tecs_index_t *x, int32_t n)
{
    return has_room(x, n) ? TECS_OK : grow_room(x, n);
}

/* ---- hash chains ------------------------------------------------------ */

/* Entry i into the unique table. */
static TECS__NOINLINE void tab_link(tecs_index_t *x, int32_t i)
{
    if (!nan_key(x, x->ents[i].key))
        tab_put(x, x->ents[i].key, x->ents[i].e);
}

/* Entry i out of the unique table. */
static TECS__NOINLINE void tab_unlink(tecs_index_t *x, int32_t i)
{
    if (nan_key(x, x->ents[i].key))
        return;
    int32_t c = tab_find(x, x->ents[i].key);
    assert(c >= 0 && x->tab[c].e == x->ents[i].e);
    tab_del(x, (uint32_t)c);
}

static inline void chain_link(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (is_table(x)) {
        tab_link(x, i);
        return;
    }
    int32_t *head = &x->bucket[t->h & (uint32_t)(x->nbucket - 1)];
    t->prev = -1;
    t->next = *head;
    if (*head >= 0)
        x->ents[*head].prev = i;
    *head = i;
}

static inline void chain_unlink(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (is_table(x)) {
        tab_unlink(x, i);
        return;
    }
    if (t->prev >= 0)
        x->ents[t->prev].next = t->next;
    else
        x->bucket[t->h & (uint32_t)(x->nbucket - 1)] = t->next;
    if (t->next >= 0)
        x->ents[t->next].prev = t->prev;
}

/* Entry i moved to j: fix whoever points at it. */
static void chain_moved(tecs_index_t *x, int32_t i, int32_t j)
{
    ient *t = &x->ents[j];
    if (is_table(x))
        return;                 /* the table names entities, not entries */
    if (t->prev >= 0)
        x->ents[t->prev].next = j;
    else
        x->bucket[t->h & (uint32_t)(x->nbucket - 1)] = j;
    if (t->next >= 0)
        x->ents[t->next].prev = j;
    (void)i;
}

/* ---- insert, erase, re-key --------------------------------------------- */

/* Add e with the key in p (room reserved), into the tree unless !tree
** (fill builds it after); false when out of memory. */
static bool ent_insert(tecs_index_t *x, tecs_entity_t e, const probe *p, bool tree)
{
    uint64_t k;
    if (!own_key(x, p->k, &k))
        return false;
    if (!is_hashed(x) && tree && !oinsert(x, k, e)) {
        free_key(x, k);
        return false;
    }
    int32_t i = x->n++;
    x->ents[i] = (ient){ .key = k, .aux = p->aux, .e = e, .next = -1, .prev = -1 };
    x->pos[TECS_ENTITY_INDEX(e)] = i + 1;
    if (is_hashed(x)) {
        x->ents[i].h = khash(x, k);
        chain_link(x, i);
    }
    return true;
}

static void ent_erase(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (is_hashed(x))
        chain_unlink(x, i);
    else
        oerase_ent(x, t);
    free_key(x, t->key);
    x->pos[TECS_ENTITY_INDEX(t->e)] = 0;
    int32_t last = --x->n;
    if (i == last)
        return;
    x->ents[i] = x->ents[last];
    x->pos[TECS_ENTITY_INDEX(x->ents[i].e)] = i + 1;
    if (is_hashed(x))
        chain_moved(x, last, i);
}

static bool same_key(const tecs_index_t *x, const ient *t, const probe *p)
{
    return kcmp(x, t->key, p->k) == 0;
}

/* Give entry i the key in p, in place (the entry does not move); false
** when out of memory, the entry then keeps its old key. */
static bool ent_rekey(tecs_index_t *x, int32_t i, const probe *p)
{
    ient *t = &x->ents[i];
    uint64_t k;
    if (!own_key(x, p->k, &k))
        return false;
    if (!is_hashed(x) && !pool_fill(x, pool_need(x))) {
        free_key(x, k);
        return false;
    }
    if (is_hashed(x)) {
        chain_unlink(x, i);
    } else {                    /* the erase leaves the pool full enough */
        orekey(x, t, k);
    }
    free_key(x, t->key);
    t->key = k;
    t->aux = p->aux;
    if (is_hashed(x)) {
        t->h = khash(x, k);
        chain_link(x, i);
    }
    return true;
}

/* e's value is now val: insert or re-key; false when out of memory. */
static bool ent_update(tecs_index_t *x, tecs_entity_t e, const void *val)
{
    probe p;
    read_probe(x, val, &p);
    int32_t i = ent_find(x, e);
    if (i >= 0 && same_key(x, &x->ents[i], &p)) {
        x->ents[i].aux = p.aux;
        return true;
    }
    if (i >= 0)
        return ent_rekey(x, i, &p);
    return reserve(x, 1) == TECS_OK && ent_insert(x, e, &p, true);
}

/* Another entity than e with key k, or 0. */
static tecs_entity_t find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    if (is_table(x)) {
        int32_t c = tab_find(x, k);
        return c >= 0 && x->tab[c].e != e ? x->tab[c].e : 0;
    }
    if (is_hashed(x)) {
        if (x->nbucket == 0)
            return 0;
        for (int32_t i = x->bucket[khash(x, k) & (uint32_t)(x->nbucket - 1)]; i >= 0;
             i = x->ents[i].next)
            if (x->ents[i].e != e && kcmp(x, x->ents[i].key, k) == 0)
                return x->ents[i].e;
        return 0;
    }
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

/* ---- building --------------------------------------------------------- */

static void clear(tecs_index_t *x)
{
    x->hint = NULL;
    for (int32_t i = 0; i < x->n; i++)
        free_key(x, x->ents[i].key);
    if (x->root)
        ofree(x, x->root, x->height);
    x->root = NULL;
    x->height = 0;
    if (x->npos)
        memset(x->pos, 0, (size_t)x->npos * sizeof *x->pos);
    if (x->nbucket)
        memset(x->bucket, 0xff, (size_t)x->nbucket * sizeof *x->bucket);
    if (x->ntab)
        memset(x->tab, 0, (size_t)x->ntab * sizeof *x->tab);
    x->n = 0;
}

/* Is e, at this moment, losing x's component (w->store.leaving, entity.c)? Its
** REMOVE events are being raised and the one x needed has gone by. */
static bool leaving(const tecs_index_t *x, tecs_entity_t e)
{
    const tecs_world_t *w = x->world;
    return e == w->store.leaving && (w->store.leaving_comp == 0 || w->store.leaving_comp == x->d.comp);
}

/* Add an entry for every entity with x's component, but one that is
** leaving it; into the tree too when tree, else (ordered) the tree is built
** after. */
static tecs_err_t fill_entries(tecs_index_t *x, bool tree)
{
    tecs_world_t *w = x->world;
    for (int32_t ai = 0; ai < w->narchs; ai++) {
        tecs_archetype_t *a = w->archs[ai];
        int32_t col = tecs__arch_col(a, x->d.comp);
        if (col < 0 || a->count == 0)
            continue;
        if (reserve(x, a->count))
            return TECS_ENOMEM;
        for (uint32_t row = 0; row < (uint32_t)a->count; row++) {
            probe p;
            read_probe(x, tecs__col_ptr(a, w, col, row), &p);
            tecs_entity_t e = *tecs__ent_ptr(a, w, row);
            if (TECS__UNLIKELY(w->store.leaving != 0) && leaving(x, e))
                continue;
            if (tree && x->d.unique && !nan_key(x, p.k) && find_other(x, p.k, e))
                return tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": "
                                 TECS__ENT_FMT " and " TECS__ENT_FMT " share a key",
                                 TECS__COMP(w, x->d.comp), TECS__ENT(find_other(x, p.k, e)),
                                 TECS__ENT(e));
            if (!ent_insert(x, e, &p, tree))
                return TECS_ENOMEM;
        }
    }
    return TECS_OK;
}

/* LSD radix sort of v[0..n) by k, 11 bits a pass, through tmp. Digits
** are taken from k minus the smallest k, min, so that places of one
** archetype need two passes, not four. */
void tecs__okey_radix(okey *v, okey *tmp, int32_t n, uint64_t min, uint64_t max)
{
    okey *src = v, *dst = tmp;
    for (int shift = 0; shift < 64 && ((max - min) >> shift) != 0; shift += 11) {
        int32_t count[2049] = { 0 };
        for (int32_t i = 0; i < n; i++)
            count[(((src[i].k - min) >> shift) & 2047) + 1]++;
        for (int32_t d = 0; d < 2048; d++)
            count[d + 1] += count[d];
        for (int32_t i = 0; i < n; i++)
            dst[count[((src[i].k - min) >> shift) & 2047]++] = src[i];
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

/* Build x's tree from its entries at once: sort the items (key, then
** slot), cut them into leaves about 3/4 full, then the levels above,
** every node taken from the pool filled first. On error nothing is built. */
static tecs_err_t obuild(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    int32_t n = x->n, per = OB * 3 / 4, per_in = OF * 3 / 4;
    if (n == 0)
        return TECS_OK;
    int32_t nl = (n + per - 1) / per, total = nl;
    for (int32_t c = nl; c > 1; c = (c + per_in - 1) / per_in)
        total += (c + per_in - 1) / per_in;
    okey *v = tecs__alloc(w, (size_t)n * 2 * sizeof *v);
    onode **lv = v ? tecs__alloc(w, (size_t)nl * sizeof *lv) : NULL;
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

/* Fill x from every archetype with its component (x is empty). */
static tecs_err_t fill(tecs_index_t *x)
{
    if (is_hashed(x))
        return fill_entries(x, true);
    tecs_err_t err = fill_entries(x, false);
    return err ? err : obuild(x);
}

/* Lay a freshly filled hash or spatial index out chain by chain, so that
** the entries of one bucket (one key, one grid cell) are neighbours in
** memory. Only a layout: skipped when the copy cannot be allocated. */
static void compact(tecs_index_t *x)
{
    if (!is_hashed(x) || is_table(x) || x->n < 2)
        return;
    ient *v = tecs__alloc(x->world, (size_t)x->cap * sizeof *v);
    if (v == NULL)
        return;
    int32_t j = 0;
    for (int32_t b = 0; b < x->nbucket; b++)
        for (int32_t i = x->bucket[b]; i >= 0; i = x->ents[i].next)
            v[j++] = x->ents[i];
    assert(j == x->n);
    tecs__free(x->world, x->ents, (size_t)x->cap * sizeof *x->ents);
    x->ents = v;
    memset(x->bucket, 0xff, (size_t)x->nbucket * sizeof *x->bucket);
    for (int32_t i = x->n - 1; i >= 0; i--) {
        x->pos[TECS_ENTITY_INDEX(x->ents[i].e)] = i + 1;
        chain_link(x, i);
    }
}

/* Count x in (by 1) or out of (by -1) the listeners of its component's
** events and checks, which calls on that component consult first. */
static void subscribe(tecs_index_t *x, int by)
{
    tecs__comp *ci = &x->world->comp.comps[x->d.comp];
    ci->watch = (uint32_t)((int64_t)ci->watch + by);
    ci->veto = (uint32_t)((int64_t)ci->veto + by);
}

/* Rebuild a dirty index. */
tecs_err_t tecs__index_refresh(tecs_index_t *x)
{
    x->sets = 0;                /* called at every use: a burst ends here */
    if (!x->dirty)
        return TECS_OK;
    clear(x);
    tecs_err_t err = fill(x);
    if (err) {
        clear(x);
        return err != TECS_ENOMEM ? err : tecs__err(x->world, err, "out of memory "
                                                    "rebuilding " TECS__INDEX_FMT, TECS__INDEX(x));
    }
    compact(x);
    x->dirty = false;
    if (x->asleep) {
        x->asleep = false;      /* follows its component's events again */
        subscribe(x, 1);
    }
    return TECS_OK;
}

static void index_release(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    clear(x);
    while (x->pool)
        tecs__free(w, pool_take(x), sizeof(onode));
    tecs__free(w, x->ents, (size_t)x->cap * sizeof *x->ents);
    tecs__free(w, x->pos, (size_t)x->npos * sizeof *x->pos);
    tecs__free(w, x->lof, (size_t)x->nlof * sizeof *x->lof);
    tecs__free(w, x->bucket, (size_t)x->nbucket * sizeof *x->bucket);
    tecs__free(w, x->tab, (size_t)x->ntab * sizeof *x->tab);
    tecs__free(w, x, sizeof *x);
}

/* ---- the unique check ------------------------------------------------- */

/* A default-constructed value of x's component, in a fresh block. */
static void *default_value(tecs_index_t *x, size_t *size)
{
    const tecs__comp *ci = &x->world->comp.comps[x->d.comp];
    *size = ci->size;
    void *v = tecs__alloc(x->world, ci->size);
    if (v == NULL)
        return NULL;
    memset(v, 0, ci->size);
    if (ci->ctor)
        tecs__comp_ctor(x->world, ci, v, 1);
    return v;
}

static void drop_default(tecs_index_t *x, void *v, size_t size)
{
    const tecs__comp *ci = &x->world->comp.comps[x->d.comp];
    tecs__comp_dtor(x->world, ci, v, 1);
    tecs__free(x->world, v, size);
}

/* Put e's indexed field back to the key the index holds for it. */
static void revert(const tecs_index_t *x, tecs_entity_t e, void *val)
{
    int32_t i = ent_find(x, e);
    if (i < 0)
        return;
    char *f = (char *)val + x->d.offset;
    const ient *t = &x->ents[i];
    if (x->d.type == TECS_KEY_CHARS) {
        const char *s = (const char *)(uintptr_t)t->key;
        size_t len = s ? strlen(s) : 0;
        memset(f, 0, x->fsize);
        memcpy(f, s ? s : "", len);
    } else {
        memcpy(f, &t->aux, x->fsize);
    }
}

/* One value: refuse a key another entity holds. */
static tecs_err_t check_one(tecs_index_t *x, int ev, tecs_entity_t e, const void *val)
{
    size_t size = 0;
    void *def = NULL;
    if (val == NULL && (val = def = default_value(x, &size)) == NULL)
        return tecs__err(x->world, TECS_ENOMEM, "out of memory checking a unique key");
    probe p;
    read_probe(x, val, &p);
    tecs_entity_t other = nan_key(x, p.k) ? 0 : find_other(x, p.k, e);
    if (other && (ev & TECS__EV_WRITTEN))
        revert(x, e, (void *)(uintptr_t)val);
    if (def)
        drop_default(x, def, size);
    if (other)
        return tecs__err(x->world, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": "
                         TECS__ENT_FMT " holds that key already",
                         TECS__COMP(x->world, x->d.comp), TECS__ENT(other));
    return TECS_OK;
}

/* Order of two batch keys read from values (strings not owned). */
static int batch_cmp(const tecs_index_t *x, const okey *a, const okey *b)
{
    if (x->d.type == TECS_KEY_CHARS)
        return strncmp((const char *)(uintptr_t)a->k, (const char *)(uintptr_t)b->k, x->fsize);
    return kcmp(x, a->k, b->k);
}

/* n births with values at vals: none may take a held key, nor repeat one. */
static tecs_err_t check_batch(tecs_index_t *x, const void *vals, int32_t n)
{
    tecs_world_t *w = x->world;
    if (vals == NULL)
        return n > 1 ? tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": %d "
                                 "births would share the default key",
                                 TECS__COMP(w, x->d.comp), n)
                     : check_one(x, TECS__EV_ADD, 0, NULL);
    size_t size = w->comp.comps[x->d.comp].size;
    okey *v = tecs__alloc(w, (size_t)n * 2 * sizeof *v);
    if (v == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory checking unique keys");
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < n && !err; i++) {
        const char *val = (const char *)vals + (size_t)i * size;
        err = check_one(x, TECS__EV_ADD, 0, val);
        probe p;
        read_probe(x, val, &p);
        v[i].k = x->d.type == TECS_KEY_CHARS ? (uint64_t)(uintptr_t)(val + x->d.offset) : p.k;
    }
    tecs__okey_sort(v, v + n, n, batch_cmp, x);
    for (int32_t i = 1; i < n && !err; i++)
        if (batch_cmp(x, &v[i - 1], &v[i]) == 0 && !nan_key(x, v[i].k))
            err = tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": a key "
                            "repeats among the %d values of one call",
                            TECS__COMP(w, x->d.comp), n);
    tecs__free(w, v, (size_t)n * 2 * sizeof *v);
    return err;
}

/* The update of e to vals follows: start fetching what it will touch. */
static void warm(tecs_index_t *x, tecs_entity_t e, const void *vals)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot < (uint32_t)x->npos && x->pos[slot] > 0) {
        const ient *t = &x->ents[x->pos[slot] - 1];
        TECS__PREFETCH(t);      /* both ends: an entry may cross two lines */
        TECS__PREFETCH((const char *)(t + 1) - 1);
        if (!is_hashed(x))      /* the leaf the old key leaves */
            ofetch_all(x->lof[slot]);
    }
    if (vals == NULL || x->cls == TECS_KEYC_STR)
        return;
    probe p;
    read_probe(x, vals, &p);
    if (is_table(x) && x->ntab > 0) {
        TECS__PREFETCH(&x->tab[khash(x, p.k) & (uint32_t)(x->ntab - 1)]);
    } else if (is_hashed(x) && x->nbucket > 0) {
        TECS__PREFETCH(&x->bucket[khash(x, p.k) & (uint32_t)(x->nbucket - 1)]);
    } else if (!is_hashed(x)) {     /* the leaf the new key goes to */
        x->hint = oleaf(x, p.k, slot);    /* its keys fetched by the descent */
        x->hint_k = p.k;
        x->hint_slot = slot;
        if (x->hint)
            ofetch_ents(x->hint);
    }
}

static tecs_err_t on_veto(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                           const void *vals, int32_t n)
{
    tecs__indexes *r = ctx;
    tecs_err_t outer = w->base.err;
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c || (x->dirty && !x->d.unique))
            continue;           /* rebuilt at its next use: nothing to check */
        tecs_err_t err = x->dirty ? tecs__index_refresh(x) : TECS_OK;
        if (!err && reserve(x, n))
            err = tecs__err(w, TECS_ENOMEM, "out of memory growing " TECS__INDEX_FMT,
                            TECS__INDEX(x));
        if (err && (ev & TECS__EV_WRITTEN)) {
            x->dirty = true;    /* the write stands; rebuilt before next use */
            tecs__err_restore(w, outer);
            continue;
        }
        if (!err && x->d.unique)
            err = n == 1 ? check_one(x, ev, e, vals) : check_batch(x, vals, n);
        if (err)
            return err;
        if (n == 1 && e != 0)
            warm(x, e, vals);
    }
    return TECS_OK;
}

/* SET events after which a burst of re-keys is left to a rebuild: about
** where a rebuild of the n entries costs what the re-keys had cost, so a
** burst never costs more than about twice the better of the two. Measured
** at 1M: an ordered rebuild about 45 ns an entry (sort included) against
** 650 ns a re-key over a plain set, so n/16; a hash rebuild about 80 ns
** against 380 ns, so n/4. */
static inline int32_t burst_limit(const tecs_index_t *x)
{
    int32_t limit = is_hashed(x) ? x->n / 4 : x->n / 16;
    return limit > 64 ? limit : 64;
}

static void on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                    const void *ptr)
{
    tecs__indexes *r = ctx;
    tecs_err_t outer = w->base.err;
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c || x->dirty)
            continue;
        if (ev == TECS__EV_SET && !x->d.unique &&
            TECS__UNLIKELY(++x->sets > burst_limit(x))) {
            if (!tecs__caches_use(r, id)) {
                x->dirty = true;    /* a burst: rebuilt at the next use; */
                x->asleep = true;   /* until then its component's calls skip it */
                subscribe(x, -1);
                continue;
            }
            x->sets = 0;            /* a cache needs every set: count anew */
        }
        if (ev == TECS__EV_REMOVE) {
            int32_t i = ent_find(x, e);
            if (i >= 0)
                ent_erase(x, i);
        } else if (!ent_update(x, e, ptr)) {
            x->dirty = true;    /* rebuilt at its next use: the change stands */
            tecs__err_restore(w, outer);
        }
    }
}

static void on_fini(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    while (r->caches)
        tecs__cache_release(r->caches);
    while (r->filters)
        tecs__filter_release(r->filters);
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id])
            index_release(r->by_id[id]);
    tecs__free(w, r->by_id, (size_t)r->cap * sizeof *r->by_id);
    tecs__free(w, r, sizeof *r);
    w->indexes = NULL;
}

/* The registry, made and listened for on first use. */
tecs__indexes *tecs__index_registry(tecs_world_t *w)
{
    if (w->indexes)
        return w->indexes;
    tecs__indexes *r = tecs__alloc(w, sizeof *r);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    tecs__listener l = { .on_comp = on_comp, .on_veto = on_veto, .on_fini = on_fini,
                         .ctx = r };
    if (tecs__listen(w, &l)) {
        tecs__free(w, r, sizeof *r);
        return NULL;
    }
    w->indexes = r;
    return r;
}

/* ---- indexes: public -------------------------------------------------- */

static tecs_err_t check_desc(tecs_world_t *w, const tecs_index_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL index description");
    const tecs__comp *ci = tecs__comp_get(w, d->comp);
    if (ci == NULL)
        return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", d->comp);
    if ((unsigned)d->kind > TECS_INDEX_SPATIAL)
        return tecs__err(w, TECS_EINVAL, "unknown index kind %d", (int)d->kind);
    if (class_of(d->type) == 0)
        return tecs__err(w, TECS_EINVAL, "unknown key type %d", (int)d->type);
    if (d->type == TECS_KEY_CHARS && (d->size < 1 || d->size > TECS_MAX_KEY_CHARS))
        return tecs__err(w, TECS_EINVAL, "char[N] key: N must be 1..%d, not %zu",
                         TECS_MAX_KEY_CHARS, d->size);
    if (ci->size == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag: it has no fields to index",
                         TECS__COMP(w, d->comp));
    uint32_t fs = field_size(d);
    if (d->offset > ci->size || fs > ci->size - d->offset)
        return tecs__err(w, TECS_EINVAL, "a %s field (%u bytes) at offset %zu does not fit "
                         "inside " TECS__COMP_FMT " of %u bytes", key_type_names[d->type], fs,
                         d->offset, TECS__COMP(w, d->comp), ci->size);
    if (d->kind != TECS_INDEX_SPATIAL)
        return TECS_OK;
    if (d->type != TECS_KEY_FLOAT)
        return tecs__err(w, TECS_EINVAL, "a spatial index takes float fields, not %s",
                         key_type_names[d->type]);
    if (d->unique)
        return tecs__err(w, TECS_EINVAL, "a spatial index cannot be unique");
    if (!(d->cell_size > 0) || d->cell_size > 3.0e38f)
        return tecs__err(w, TECS_EINVAL, "a spatial index needs a finite cell size > 0, not %g",
                         (double)d->cell_size);
    if (d->offset_y > ci->size || 4 > ci->size - d->offset_y)
        return tecs__err(w, TECS_EINVAL, "the y field (float) at offset %zu does not fit "
                         "inside " TECS__COMP_FMT " of %u bytes", d->offset_y,
                         TECS__COMP(w, d->comp), ci->size);
    return TECS_OK;
}

/* Give x an id in the registry. */
static tecs_err_t enroll(tecs_world_t *w, tecs_index_t *x)
{
    tecs__indexes *r = tecs__index_registry(w);
    if (r == NULL || tecs__grow(w, (void **)&r->by_id, &r->cap, r->nids + 1, sizeof *r->by_id))
        return tecs__err(w, TECS_ENOMEM, "out of memory creating an index");
    x->id = r->nids;
    r->by_id[r->nids++] = x;
    return TECS_OK;
}

tecs_index_t *tecs_index_new(tecs_world_t *w, const tecs_index_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || check_desc(w, d))
        return NULL;
    tecs_index_t *x = tecs__index_registry(w) ? tecs__alloc(w, sizeof *x) : NULL;
    if (x == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating an index");
        return NULL;
    }
    memset(x, 0, sizeof *x);
    x->world = w;
    x->d = *d;
    x->cls = class_of(d->type);
    x->fsize = field_size(d);
    tecs_err_t err = fill(x);
    if (!err)
        compact(x);
    if (err) {
        if (err == TECS_ENOMEM)
            tecs__err(w, err, "out of memory creating an index");
        index_release(x);
        return NULL;
    }
    if (enroll(w, x)) {
        index_release(x);
        return NULL;
    }
    subscribe(x, 1);
    return x;
}

tecs_err_t tecs_index_free(tecs_index_t *x)
{
    if (x == NULL)
        return TECS_OK;
    tecs_world_t *w = x->world;
    if (tecs__enter_object(w))
        return w->base.err;
    tecs__indexes *r = registry(w);
    if (tecs__caches_use(r, x->id))
        return tecs__err(w, TECS_EBUSY, "a cache uses " TECS__INDEX_FMT ": free the cache "
                         "first", TECS__INDEX(x));
    if (tecs__filters_iterate(r, x->id))
        return tecs__err(w, TECS_EBUSY, "an iteration over a filter naming " TECS__INDEX_FMT
                         " is open: end it first", TECS__INDEX(x));
    r->by_id[x->id] = NULL;
    if (!x->asleep)
        subscribe(x, -1);
    index_release(x);
    return TECS_OK;
}

int32_t tecs_index_count(tecs_index_t *x)
{
    if (x == NULL || tecs__enter(x->world) || tecs__index_refresh(x))
        return -1;
    return x->n;
}

/* Encode a caller's key for x; false (TECS_EINVAL) if it does not fit. */
bool tecs__index_encode(tecs_index_t *x, tecs_key_t key, uint64_t *out)
{
    if (key.cls != x->cls) {
        tecs__err(x->world, TECS_EINVAL, "key class %s for %s keys of " TECS__INDEX_FMT,
                  key.cls >= TECS_KEYC_INT && key.cls <= TECS_KEYC_STR
                      ? key_class_names[key.cls] : "? (not made by tecs_key_*)",
                  key_type_names[x->d.type], TECS__INDEX(x));
        return false;
    }
    if (key.cls == TECS_KEYC_REAL && key.v.d != key.v.d) {
        tecs__err(x->world, TECS_EINVAL, "the key is NaN, which equals nothing (NaN keys are "
                  "found with != and not)");
        return false;
    }
    switch (key.cls) {
    case TECS_KEYC_INT: *out = enc_int(key.v.i); break;
    case TECS_KEYC_UINT: *out = key.v.u; break;
    case TECS_KEYC_REAL: *out = enc_real(key.v.d); break;
    default: *out = (uint64_t)(uintptr_t)key.v.s; break;
    }
    return true;
}

tecs_entity_t tecs_index_lookup(tecs_index_t *x, tecs_key_t key)
{
    if (x == NULL || tecs__enter(x->world))
        return 0;
    uint64_t k;
    if (!x->d.unique) {
        tecs__err(x->world, TECS_EINVAL, "tecs_index_lookup needs a unique index, not "
                  TECS__INDEX_FMT, TECS__INDEX(x));
        return 0;
    }
    if (!tecs__index_encode(x, key, &k) || tecs__index_refresh(x))
        return 0;
    int32_t c;
    tecs_entity_t e = !is_table(x) ? find_other(x, k, 0)
                      : (c = tab_find(x, k)) >= 0 ? x->tab[c].e : 0;
    if (e == 0)
        tecs__err(x->world, TECS_ENOENT, "no entity has this key in " TECS__INDEX_FMT,
                  TECS__INDEX(x));
    return e;
}

/* ---- the structure check ---------------------------------------------- */

static tecs_err_t bad(tecs_world_t *w, const char *what, int32_t id)
{
    return tecs__err(w, TECS_ECORRUPT, "index %d: %s", id, what);
}

/* Every entry names a live entity holding the component with that key. */
static tecs_err_t check_entries(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    for (int32_t i = 0; i < x->n; i++) {
        const ient *t = &x->ents[i];
        if (ent_find(x, t->e) != i)
            return bad(w, "entity map disagrees", x->id);
        const tecs__record *r = tecs__ei_alive(w, t->e);
        int32_t col = r ? tecs__arch_col(tecs__rec_arch(w, r), x->d.comp) : -1;
        if (col < 0)
            return bad(w, "entry for an entity without the component", x->id);
        /* Inside an iteration, rows written through a write term are
        ** re-keyed when the iterator leaves them: not stale yet. */
        probe p;
        read_probe(x, tecs__col_ptr(tecs__rec_arch(w, r), w, col, r->row), &p);
        if (w->base.defer_depth == 0 && kcmp(x, t->key, p.k) != 0)
            return bad(w, "stale key", x->id);
        bool tabled = !(is_table(x) && nan_key(x, t->key));
        if (is_hashed(x) && tabled && find_other(x, t->key, 0) == 0)
            return bad(w, "entry not in its bucket", x->id);
    }
    return TECS_OK;
}

/* Check the subtree t at height h: sizes, the copies of the last items,
** and that its leaves come next in the leaf list (*leaf is the last one
** seen); counts its items into *total. */
static bool check_node(tecs_index_t *x, const onode *t, int32_t h, const onode **leaf,
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
        if (!check_node(x, t->u.in.kid[c], h - 1, leaf, total) || m.e != t->u.in.e[c] ||
            m.k != t->u.in.k[c])
            return false;
    }
    return true;
}

static tecs_err_t check_tree(tecs_index_t *x)
{
    int32_t total = 0;
    const onode *leaf = NULL;
    if (x->root && (!check_node(x, x->root, x->height, &leaf, &total) || leaf->next))
        return bad(x->world, "tree shape", x->id);
    const onode *pt = NULL;
    int32_t pi = 0;
    for (const onode *t = ofirst(x); t; t = t->next)
        for (int32_t i = 0; i < t->n; i++) {
            int32_t j = ent_find(x, t->u.lf.e[i]);
            if (j < 0 || x->ents[j].key != t->u.lf.k[i])
                return bad(x->world, "tree item without its entry", x->id);
            if (x->lof[TECS_ENTITY_INDEX(t->u.lf.e[i])] != t)
                return bad(x->world, "leaf map names another leaf", x->id);
            if (pt && ocmp(x, t->u.lf.k[i], TECS_ENTITY_INDEX(t->u.lf.e[i]), pt->u.lf.k[pi],
                           pt->u.lf.e[pi]) <= 0)
                return bad(x->world, "tree out of order", x->id);
            pt = t;
            pi = i;
        }
    return total == x->n ? TECS_OK : bad(x->world, "tree items != entries", x->id);
}

/* Count the entities that have x's component. */
static int32_t holders(const tecs_index_t *x)
{
    const tecs_world_t *w = x->world;
    int32_t n = 0;
    for (int32_t ai = 0; ai < w->narchs; ai++)
        if (tecs__arch_col(w->archs[ai], x->d.comp) >= 0)
            n += w->archs[ai]->count;
    return n;
}

/* The table holds exactly the entries, each where a probe finds it. */
static tecs_err_t check_table(tecs_index_t *x)
{
    int32_t used = 0, nans = 0;
    for (int32_t i = 0; i < x->n; i++)
        nans += nan_key(x, x->ents[i].key);
    for (int32_t c = 0; c < x->ntab; c++) {
        if (x->tab[c].e == 0)
            continue;
        used++;
        int32_t i = ent_find(x, x->tab[c].e);
        if (i < 0 || x->ents[i].key != x->tab[c].k || tab_find(x, x->tab[c].k) != c)
            return bad(x->world, "table cell without its entry", x->id);
    }
    return used == x->n - nans ? TECS_OK : bad(x->world, "table cells != entries", x->id);
}

/* Each component's check count is its indexes that are awake (nothing
** else checks changes); an index asleep is dirty and not unique. */
static tecs_err_t check_subscriptions(tecs_world_t *w, const tecs__indexes *r)
{
    for (int32_t c = 1; c < w->comp.cap_comps; c++) {
        uint32_t awake = 0;
        for (int32_t id = 0; r && id < r->nids; id++) {
            const tecs_index_t *x = r->by_id[id];
            if (x && x->d.comp == (tecs_comp_t)c) {
                if (x->asleep && (!x->dirty || x->d.unique))
                    return bad(w, "asleep but clean or unique", id);
                awake += !x->asleep;
            }
        }
        if (w->comp.comps[c].veto != awake)
            return tecs__err(w, TECS_ECORRUPT, "component %d: check count off", c);
    }
    return TECS_OK;
}

tecs_err_t tecs__indexes_verify(tecs_world_t *w)
{
    tecs__indexes *r = registry(w);
    tecs_err_t err0 = check_subscriptions(w, r);
    if (err0)
        return err0;
    for (int32_t id = 0; r && id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->dirty)
            continue;
        tecs_err_t err = check_entries(x);
        if (!err && !is_hashed(x))
            err = check_tree(x);
        if (!err && is_table(x))
            err = check_table(x);
        if (err)
            return err;
        if (holders(x) != x->n)
            return bad(w, "misses entities", id);
    }
    return tecs__caches_verify(w);
}
