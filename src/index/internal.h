/*
** index/internal.h — what the files of the index layer share. Only the
** files of src/index include it. One section per file, in layer order:
** each file calls only the files listed before it, and the core.
**
**     (shared)   the index's entries and keys, which every file reads;
**     hash.c     bucket chains, the unique open table;
**     ordered.c  the B+-tree, its node pool, its builders, the radix sort;
**     grid.c     the spatial index's points, laid out by cell;
**     index.c    the index itself: entry table, key encoding, upkeep from
**                component events, the unique veto, new / free / count /
**                lookup / near, verification, and the listeners of the
**                layers above;
**     filter.c   filters: building, testing, collecting, ordering, and the
**                filtered iteration;
**     cache.c    cached result sets and their enter / leave events.
*/
#ifndef TECS_INDEX_INTERNAL_H
#define TECS_INDEX_INTERNAL_H

#include "../core/private.h"

#include <float.h>

/* ==================================================================== */
/* Shared: the index's entries and keys (index.c's, read by every file) */
/* ==================================================================== */

#define NAN_KEY UINT64_MAX      /* every NaN, above +inf                    */

struct onode;

/* One entity's entry in the index's dense table. */
typedef struct ient {
    uint64_t key;               /* encoded key, string copy, or cell        */
    uint64_t aux;               /* raw field bytes, user pointer, or x / y  */
    tecs_entity_t e;
    int32_t next, prev;         /* bucket chain (hash), -1 ends; spatial:
                                   next is its point (block * GB + place),
                                   -1 when it has none (NaN)                */
    uint32_t h;                 /* hash of key (hash)                       */
} ient;

/* A (key, entity) pair: a tree item, a table cell, an item being sorted. */
typedef struct okey {
    uint64_t k;
    tecs_entity_t e;
} okey;

struct tecs_index_t {
    tecs_world_t *world;
    int32_t id;                 /* in the world's registry, never reused    */
    tecs_index_desc_t d;
    int32_t cls;                /* TECS_KEYC_* of its keys                  */
    bool int_table;             /* a unique hash index of integer keys      */
    uint32_t fsize;             /* bytes of the field                       */
    bool dirty;                 /* rebuild before the next use              */
    int32_t sets;               /* SET events since the last use            */
    bool asleep;                /* a burst: off its component's events
                                   (watch, veto) until rebuilt              */
    int32_t n, cap;
    ient *ents;
    int32_t *pos;               /* entity slot -> entry + 1                 */
    int32_t npos;
    struct onode **lof;         /* ordered: entity slot -> leaf of its item */
    int32_t nlof;
    int32_t *bucket;            /* hash, spatial: power of two, -1 empty    */
    int32_t nbucket;
    okey *tab;                  /* unique hash: (key, entity) cells, linear */
    int32_t ntab;               /* probing, power of two, e == 0 empty      */
    struct onode *root;                /* ordered: the B+-tree, NULL when empty    */
    int32_t height;             /* inner levels above the leaves            */
    struct onode *pool;                /* spare nodes, linked by next              */
    int32_t npool;
    const struct onode *hint;   /* ordered: the leaf (hint_k, hint_slot) goes */
    uint64_t hint_k;            /* to, found by the veto before a re-key;   */
    uint32_t hint_slot;         /* NULL once the tree changes               */
    struct gcell *ctab;         /* spatial: the cell table, open, power of  */
    int32_t nctab, ncells;      /* two, at most half full; cells in use     */
    struct gpoint *pts;         /* spatial: blocks of GB points             */
    int32_t *bnext;             /* ... each block's next in its cell's run, */
    int32_t cappts, capnext;    /* or in the free list; -1 ends (in blocks) */
    int32_t nblk;               /* blocks ever handed out (above: untouched) */
    int32_t bfree, nfree;       /* the free list of blocks, its length      */
};

static inline int scmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

/* Compare two keys of x's class. */
static inline int kcmp(const tecs_index_t *x, uint64_t a, uint64_t b)
{
    if (x->cls != TECS_KEYC_STR)
        return (a > b) - (a < b);
    return scmp((const char *)(uintptr_t)a, (const char *)(uintptr_t)b);
}

static inline uint32_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(k ^ (k >> 33));
}

/* The hash of grid cell key k (cx, cy) of a spatial index: four cells
** next to each other along y (cy / 4 the same) take four neighbouring slots
** of the cell table, so a walk of a column of cells reads few lines; the
** groups are spread by the high half of a multiplication, so a dense
** square of cells fills the table evenly. (Cells laid along y in runs as
** long as a column pile up: with linear probing, their runs overlap into
** clusters hundreds of slots long once the square passes ~200 cells a side.) */
static inline uint32_t cell_hash(uint64_t k)
{
    uint64_t g = (k >> 2) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(g >> 32) << 2 | ((uint32_t)k & 3u);
}

static inline uint32_t khash(const tecs_index_t *x, uint64_t k)
{
    if (x->d.kind == TECS_INDEX_SPATIAL)
        return cell_hash(k);
    if (x->cls != TECS_KEYC_STR)
        return mix(k);
    const unsigned char *s = (const unsigned char *)(uintptr_t)k;
    uint32_t h = 2166136261u;
    if (s == NULL)
        return 0x5bd1e995u;
    while (*s)
        h = (h ^ *s++) * 16777619u;
    return h;
}

/* A NaN key equals nothing, not even another NaN: a unique index never
** refuses it, and the unique table does not hold it. */
static inline bool nan_key(const tecs_index_t *x, uint64_t k)
{
    return x->cls == TECS_KEYC_REAL && k == NAN_KEY;
}

/* e's entry, or -1. */
static inline int32_t ent_find(const tecs_index_t *x, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot >= (uint32_t)x->npos || x->pos[slot] == 0)
        return -1;
    int32_t i = x->pos[slot] - 1;
    return x->ents[i].e == e ? i : -1;
}

/* A hash index keeps bucket chains or the unique table (hash.c); a
** spatial one the grid (grid.c), an ordered one the tree (ordered.c). */
static inline bool is_hashed(const tecs_index_t *x)
{
    return x->d.kind == TECS_INDEX_HASH;
}

static inline bool is_ordered(const tecs_index_t *x)
{
    return x->d.kind == TECS_INDEX_ORDERED;
}

/* A unique hash index keeps (key, entity) in one open table, no chains:
** a lookup is one probe. */
static inline bool is_table(const tecs_index_t *x)
{
    return x->d.kind == TECS_INDEX_HASH && x->d.unique;
}

typedef int (*okey_cmp)(const tecs_index_t *x, const okey *a, const okey *b);

/* Stable merge sort of v[0..n) with tmp of n items. */
static inline void tecs__okey_sort(okey *v, okey *tmp, int32_t n, okey_cmp cmp,
                                   const tecs_index_t *x)
{
    for (int32_t width = 1; width < n; width *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * width) {
            int32_t mid = lo + width < n ? lo + width : n;
            int32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp(x, &v[j], &v[i]) < 0 ? v[j++] : v[i++];
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

/* A broken invariant of index id, for the structure verification. */
static inline tecs_err_t corrupt(tecs_world_t *w, const char *what, int32_t id)
{
    return tecs__err(w, TECS_ECORRUPT, "index %d: %s", id, what);
}

/* ==================================================================== */
/* hash.c: bucket chains, the unique open table; grid cells            */
/* ==================================================================== */

/* The grid cells of a spatial index: index.c reads a point's cell from
** its fields, filter.c walks the cells a circle or a box covers. */

#define NOWHERE_CELL 0x8000000080000000ull /* spatial: NaN coordinates      */
#define CELL_LIMIT 1073741824.0 /* cells are clamped to +-2^30              */

/* floor(v / cell), clamped to +-2^30 (no libm needed), so that no value
** converts to an integer out of range. NaN, which no caller passes (a
** point with a NaN coordinate is in no cell, a search with one is
** refused), is the lowest cell. */
static inline int32_t cell_of(double v, double cell)
{
    double q = v / cell;
    if (!(q >= -CELL_LIMIT))
        return (int32_t)-CELL_LIMIT;
    if (q > CELL_LIMIT)
        return (int32_t)CELL_LIMIT;
    int32_t t = (int32_t)q;
    return t > q ? t - 1 : t;
}

/* The cells c (x0, y0, x1, y1) that the box [x0, x1] x [y0, y1] touches,
** clamped; false when it is empty (x0 > x1, y0 > y1, or a NaN bound). */
static inline bool box_cells(double cs, double x0, double y0, double x1, double y1,
                             int32_t c[4])
{
    if (!(x0 <= x1) || !(y0 <= y1))
        return false;
    c[0] = cell_of(x0, cs), c[1] = cell_of(y0, cs);
    c[2] = cell_of(x1, cs), c[3] = cell_of(y1, cs);
    return true;
}

/* The cells that the circle (x, y, r) touches: those of its bounding box,
** in doubles, widened by (|x| + r) / 2^49 on every side. circle_holds
** rounds, and so takes points up to a few r / 2^53 beyond the circle (a
** point at distance 1e30 + 3 from the centre is within 1e30); the sides
** themselves round by (|x| + r) / 2^53 at most: every point the test takes
** is inside the box. Every search of a circle takes its cells from here. */
static inline bool circle_cells(double cs, double x, double y, double r, int32_t c[4])
{
    double wx = r + ((x < 0 ? -x : x) + r) * 0x1p-49;
    double wy = r + ((y < 0 ? -y : y) + r) * 0x1p-49;
    return box_cells(cs, x - wx, y - wy, x + wx, y + wy, c);
}

/* The number of cells in span c (from box_cells: ordered, clamped), in 64
** bits: at most (2^31 + 1)^2, so it never wraps. */
static inline int64_t cell_count(const int32_t c[4])
{
    return ((int64_t)c[2] - c[0] + 1) * ((int64_t)c[3] - c[1] + 1);
}

/* Why every spatial search refuses the circle (x, y, r), or NULL: the
** centre must be finite and the radius neither NaN nor negative; an
** infinite radius takes every point. A centre at infinity is refused as a
** NaN one is: its distance to a point at that infinity is inf - inf.
** tecs_index_near and the radius filter share the rule, so they give one
** answer for every input. */
static inline const char *circle_refusal(float x, float y, float r)
{
    if (!(r >= 0))
        return "the radius is negative or NaN";
    if (x != x || y != y)
        return "the centre is NaN";
    if (!(x >= -FLT_MAX && x <= FLT_MAX && y >= -FLT_MAX && y <= FLT_MAX))
        return "the centre is not finite";
    return NULL;
}

/* The squared radius that circle_holds tests against, in doubles. */
static inline double circle_r2(float r)
{
    return (double)r * r;
}

/* Is the point (px, py) within the circle of centre (cx, cy) and squared
** radius r2 (circle_r2), inclusive? The one test of a point against a
** circle: every walk of tecs_index_near and of the radius filter, and the
** filter's test of one entity, call it, so all draw the same line. In
** doubles: with a finite centre, no square or sum of finite floats
** overflows (each is below 2^259), so the test is the exact one up to
** rounding; a point at infinity is within an infinite radius only, and a
** NaN coordinate is in no circle. */
static inline bool circle_holds(float px, float py, double cx, double cy, double r2)
{
    double dx = (double)px - cx, dy = (double)py - cy;
    return dx * dx + dy * dy <= r2;
}

/* circle_holds for a radius r; a negative or NaN r holds nothing. */
static inline bool in_circle_xy(float px, float py, float cx, float cy, float r)
{
    return r >= 0 && circle_holds(px, py, cx, cy, circle_r2(r));
}

/* in_circle_xy for the point aux holds (x, y: two floats). */
static inline bool in_circle(uint64_t aux, float cx, float cy, float r)
{
    float px, py;
    memcpy(&px, &aux, 4);
    memcpy(&py, (const char *)&aux + 4, 4);
    return in_circle_xy(px, py, cx, cy, r);
}

/* The key of grid cell (cx, cy) in a spatial index. */
static inline uint64_t cell_key(int32_t cx, int32_t cy)
{
    return (uint64_t)(uint32_t)cx << 32 | (uint32_t)cy;
}

/* The cell of key k in x's unique table, or -1. */
static inline int32_t tab_find(const tecs_index_t *x, uint64_t k)
{
    if (x->ntab == 0)
        return -1;
    uint32_t mask = (uint32_t)x->ntab - 1;
    for (uint32_t i = khash(x, k) & mask;; i = (i + 1) & mask) {
        if (x->tab[i].e == 0)
            return -1;
        if (x->tab[i].k == k || (x->cls == TECS_KEYC_STR && kcmp(x, x->tab[i].k, k) == 0))
            return (int32_t)i;
    }
}

/* Entry i into / out of the unique table (kept out of line: the chains
** are the common case). */
void tecs__tab_link(tecs_index_t *x, int32_t i);
void tecs__tab_unlink(tecs_index_t *x, int32_t i);

/* Entry i at the head of its bucket's chain (x keeps chains). */
static inline void chain_push(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    int32_t *head = &x->bucket[t->h & (uint32_t)(x->nbucket - 1)];
    t->prev = -1;
    t->next = *head;
    if (*head >= 0)
        x->ents[*head].prev = i;
    *head = i;
}

/* Entry i into its bucket's chain (or the unique table). */
static inline void chain_link(tecs_index_t *x, int32_t i)
{
    if (is_table(x))
        tecs__tab_link(x, i);
    else
        chain_push(x, i);
}

/* Entry i out of its bucket's chain (or the unique table). */
static inline void chain_unlink(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (is_table(x)) {
        tecs__tab_unlink(x, i);
        return;
    }
    if (t->prev >= 0)
        x->ents[t->prev].next = t->next;
    else
        x->bucket[t->h & (uint32_t)(x->nbucket - 1)] = t->next;
    if (t->next >= 0)
        x->ents[t->next].prev = t->prev;
}

/* An entry moved to place j of the table: fix whoever points at it. */
void tecs__hash_moved(tecs_index_t *x, int32_t j);
/* Room for need entries: buckets at most 3/4 used, or the table at most
** 3/4 full. */
tecs_err_t tecs__hash_grow(tecs_index_t *x, int32_t need);
/* Another entity than e with key k, or 0. */
tecs_entity_t tecs__hash_find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e);
/* Lay a freshly filled chained index out chain by chain, so that the
** entries of one bucket (one key, one grid cell) are neighbours in memory.
** Only a layout: skipped when the copy cannot be allocated. */
void tecs__hash_compact(tecs_index_t *x);
/* Empty the buckets and the table (the entries are being cleared). */
void tecs__hash_clear(tecs_index_t *x);
void tecs__hash_release(tecs_index_t *x);
/* The table holds exactly the entries, each where a probe finds it. */
tecs_err_t tecs__hash_verify(tecs_index_t *x);

/* ==================================================================== */
/* ordered.c: the B+-tree, its node pool, its builders                  */
/* ==================================================================== */

#define OB 64                   /* items in an ordered leaf                */
#define OF 42                   /* children of an ordered inner node       */

/* A node of the ordered B+-tree. A leaf holds up to OB items in order and
** is linked to its neighbours; an inner node holds up to OF children, each
** with a copy of the last (largest) item below it, so a search reads one
** small array per level. Keys and entities are kept in separate arrays: a
** search reads the keys only (an entity breaks a tie). Both kinds share
** one size (64 * 16 ~ 42 * 24 bytes) and one spare pool; the key arrays of
** both start at the same place. */
typedef struct onode {
    int32_t n;                  /* items (leaf) or children (inner)         */
    struct onode *next, *prev;  /* leaf: neighbours in key order; pool link */
    union {
        struct {
            uint64_t k[OB];     /* leaf items: keys ...                     */
            tecs_entity_t e[OB];/* ... and entities                         */
        } lf;
        struct {
            uint64_t k[OF];     /* the largest item under each child: key   */
            tecs_entity_t e[OF];/* ... and entity                           */
            struct onode *kid[OF];
        } in;
    } u;
} onode;

/* The entities of node t at height h (its keys are t->u.lf.k either way). */
static inline tecs_entity_t *oents(onode *t, int32_t h)
{
    return h ? t->u.in.e : t->u.lf.e;
}

/* (k, e) against item (ok, oe): key, then entity slot. */
static inline int ocmp(const tecs_index_t *x, uint64_t k, uint32_t slot, uint64_t ok,
                       tecs_entity_t oe)
{
    int c = kcmp(x, k, ok);
    if (c)
        return c;
    uint32_t s = TECS_ENTITY_INDEX(oe);
    return (slot > s) - (slot < s);
}

/* The first of the n items (kv[i], ev[i]) that is >= (k, slot); n if none.
** Keys that are numbers take a search on the keys alone, without branches
** (one miss-predicted branch per step would cost more than the compare),
** then step over the items of key k with a smaller slot (ties are few). */
static inline int32_t ofind(const tecs_index_t *x, const uint64_t *kv, const tecs_entity_t *ev,
                            int32_t n, uint64_t k, uint32_t slot)
{
    if (x->cls != TECS_KEYC_STR) {
        if (n == 0)
            return 0;
        const uint64_t *b = kv;
        for (size_t len = (size_t)n; len > 1;) {    /* unsigned: halving is a shift */
            size_t half = len / 2;
            b = b[half] < k ? b + half : b;
            len -= half;
        }
        int32_t i = (int32_t)(b - kv) + (*b < k);
        while (i < n && kv[i] == k && TECS_ENTITY_INDEX(ev[i]) < slot)
            i++;
        return i;
    }
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (ocmp(x, k, slot, kv[mid], ev[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Start fetching the count and keys of node t (at height h), before
** reading its count: a search then waits for one miss, not one per probe. */
static inline void ofetch(const onode *t, int32_t h)
{
    const char *p = (const char *)t;
    if (h) {
        for (size_t off = 0; off < offsetof(onode, u.in.e); off += 64)
            TECS__PREFETCH(p + off);
    } else {
        for (size_t off = 0; off < offsetof(onode, u.lf.e); off += 64)
            TECS__PREFETCH(p + off);
    }
}

/* Start fetching the whole of leaf t (about to change). */
static inline void ofetch_all(const onode *t)
{
    for (size_t off = 0; off < sizeof *t; off += 64)
        TECS__PREFETCH((const char *)t + off);
}

/* Start fetching the entities of leaf t (its keys are being fetched). */
static inline void ofetch_ents(const onode *t)
{
    for (size_t off = offsetof(onode, u.lf.e); off < sizeof *t; off += 64)
        TECS__PREFETCH((const char *)t + off);
}

/* The leaf where (k, slot) is or would go, its keys being fetched; NULL
** if it is above every item (or the tree is empty). */
static inline const onode *oleaf(const tecs_index_t *x, uint64_t k, uint32_t slot)
{
    const onode *t = x->root;
    if (t == NULL)
        return NULL;
    for (int32_t h = x->height; h > 0; h--) {
        int32_t c = ofind(x, t->u.in.k, t->u.in.e, t->n, k, slot);
        if (c == t->n)
            return NULL;
        t = t->u.in.kid[c];
        ofetch(t, h - 1);
    }
    return t;
}

/* The leaf and place of the first item >= (k, slot); NULL if none. */
static inline const onode *olower(const tecs_index_t *x, uint64_t k, uint32_t slot,
                                  int32_t *at)
{
    const onode *t = oleaf(x, k, slot);
    if (t == NULL)
        return NULL;
    *at = ofind(x, t->u.lf.k, t->u.lf.e, t->n, k, slot);
    return *at < t->n ? t : NULL;
}

/* The leftmost leaf, or NULL. */
static inline const onode *ofirst(const tecs_index_t *x)
{
    const onode *t = x->root;
    for (int32_t h = x->height; t && h > 0; h--)
        t = t->u.in.kid[0];
    return t;
}

/* What one insert may take from the pool: a node per level and a new root. */
static inline int32_t pool_need(const tecs_index_t *x)
{
    return x->height + 2;
}

/* Insert (k, e), the leaf map told of its leaf; false (nothing changed)
** when a node is needed and none can be had. */
bool tecs__ordered_insert(tecs_index_t *x, uint64_t k, tecs_entity_t e);
/* Erase entry t's item. */
void tecs__ordered_erase(tecs_index_t *x, const ient *t);
/* Give entry t's item the key k (t->key is still the old one); false
** (nothing changed) when a node is needed and none can be had. */
bool tecs__ordered_rekey(tecs_index_t *x, ient *t, uint64_t k);
/* Another entity than e with key k, or 0. */
tecs_entity_t tecs__ordered_find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e);
/* A leaf map for slots entity slots and a pool for one insert. */
tecs_err_t tecs__ordered_grow(tecs_index_t *x, int32_t slots);
/* Build the tree from the entries at once (no tree yet); on error
** (TECS_ENOMEM, or TECS_EEXIST for a unique index) nothing is built. */
tecs_err_t tecs__ordered_build(tecs_index_t *x);
/* Free the tree (the entries are being cleared); the pool stays. */
void tecs__ordered_clear(tecs_index_t *x);
void tecs__ordered_release(tecs_index_t *x);
/* Tree shape, order, leaf map and items against the entries. */
tecs_err_t tecs__ordered_verify(tecs_index_t *x);
/* Sort v[0..n) by k, keys within [min, max], stably, with tmp of n items
** (a radix sort over the bits of max - min, in digits of 4 to 11 bits:
** narrower for fewer items). */
void tecs__okey_radix(okey *v, okey *tmp, int32_t n, uint64_t min, uint64_t max);

/* ==================================================================== */
/* grid.c: the spatial index's points, laid out by cell                 */
/* ==================================================================== */

#define GB 4                    /* points in a block (a 64-byte line)      */

/* A point of a spatial index: its coordinates and its entity, a copy of
** its entry's aux and e, so that a walk of a cell reads nothing else. */
typedef struct gpoint {
    float x, y;
    tecs_entity_t e;
} gpoint;

/* A cell of the grid: its points are count points (at least one) in a
** run of blocks from head (which holds the remainder, 1 to GB points), the
** others full. An empty slot of the table has key NOWHERE_CELL. */
typedef struct gcell {
    uint64_t key;
    int32_t head;
    int32_t count;
} gcell;

static inline bool is_grid(const tecs_index_t *x)
{
    return x->d.kind == TECS_INDEX_SPATIAL;
}

/* The table slot where the search for cell k starts (the grid has a
** table: nctab > 0). */
static inline uint32_t grid_slot(const tecs_index_t *x, uint64_t k)
{
    return cell_hash(k) & (uint32_t)(x->nctab - 1);
}

/* The cell of key k, searched from slot i (grid_slot), or NULL. */
static inline const gcell *grid_cell_from(const tecs_index_t *x, uint64_t k, uint32_t i)
{
    uint32_t mask = (uint32_t)x->nctab - 1;
    for (;; i = (i + 1) & mask) {
        const gcell *c = &x->ctab[i];
        if (c->key == k)
            return c;
        if (c->key == NOWHERE_CELL)
            return NULL;
    }
}

/* The cell of key k, or NULL (also when the grid has no table yet):
** grid_cell_from from k's slot, in a loop of its own (tecs_index_near's
** cell walk compiles tighter so). */
static inline const gcell *grid_cell(const tecs_index_t *x, uint64_t k)
{
    if (x->nctab == 0)
        return NULL;
    uint32_t mask = (uint32_t)x->nctab - 1;
    for (uint32_t i = cell_hash(k) & mask;; i = (i + 1) & mask) {
        const gcell *c = &x->ctab[i];
        if (c->key == k)
            return c;
        if (c->key == NOWHERE_CELL)
            return NULL;
    }
}

/* Start fetching the table slot of cell k. */
static inline void grid_fetch(const tecs_index_t *x, uint64_t k)
{
    if (x->nctab > 0)
        TECS__PREFETCH(&x->ctab[cell_hash(k) & (uint32_t)(x->nctab - 1)]);
}

/* Points in the head block of a cell of count points (count > 0). */
static inline int32_t head_points(int32_t count)
{
    return ((count - 1) & (GB - 1)) + 1;
}

/* for each point p (const gpoint *) of cell c of grid x: the run's blocks
** from the head, which holds head_points(count) points, the others GB.
** The hot walks (circle_cell, tecs_index_near's) keep their own loops,
** tuned for the compiler. */
#define GRID_EACH_POINT(x, c, p)                                                       \
    for (int32_t left_ = (c)->count, b_ = (c)->head, m_ = head_points(left_); left_ > 0; \
         left_ -= m_, b_ = (x)->bnext[b_], m_ = GB)                                    \
        for (const gpoint *p = &(x)->pts[(size_t)b_ * GB], *end_ = p + m_; p < end_; p++)

/* Is there room for n more points (and cells), so that n puts allocate
** nothing? */
static inline bool grid_has_room(const tecs_index_t *x, int32_t n)
{
    int32_t blocks = (x->cappts < x->capnext ? x->cappts : x->capnext) - x->nblk + x->nfree;
    return ((int64_t)x->ncells + n) * 2 <= (int64_t)x->nctab && blocks >= n;
}

/* The distance from c to the span of cells g along one axis (cell size
** cs), in doubles, less a cell size in a million so that rounding never
** drops a cell a point of the circle is in; the clamped outer cells reach
** to infinity. A cell can hold a point within r of the centre when the
** sum of the squares of its two distances is at most r * r. */
static inline double cell_gap(int32_t g, double cs, double c)
{
    double lo = g * cs, hi = lo + cs;
    double d = c < lo && g > -CELL_LIMIT ? lo - c : c > hi && g < CELL_LIMIT ? c - hi : 0;
    return d > cs * 1e-6 ? d - cs * 1e-6 : 0;
}

/* Make room for n more points (grid_has_room was false). */
tecs_err_t tecs__grid_grow(tecs_index_t *x, int32_t n);
/* Entry i's point into its cell (room reserved); a point with NaN
** coordinates is in no cell. */
void tecs__grid_put(tecs_index_t *x, int32_t i);
/* Entry i's point out of its cell. */
void tecs__grid_del(tecs_index_t *x, int32_t i);
/* Lay the grid out from the entries at once (the grid is empty), each
** cell's points in a run of consecutive blocks, cells in key order; on
** TECS_ENOMEM nothing is built. */
tecs_err_t tecs__grid_build(tecs_index_t *x);
/* Empty the grid (the entries are being cleared); the memory stays. */
void tecs__grid_clear(tecs_index_t *x);
void tecs__grid_release(tecs_index_t *x);
/* Cells, blocks and points against the entries. */
tecs_err_t tecs__grid_verify(tecs_index_t *x);

/* ==================================================================== */
/* index.c: the registry, and how the layers above learn of indexes     */
/* ==================================================================== */

typedef struct tecs__indexes tecs__indexes;

/* How a layer above the index (filter.c, cache.c) learns of what happens
** to indexes: it registers one of these, and the index layer calls it,
** never the layer by name. Listeners are called in reverse order of
** registration, the top layer first: filter.c registers before cache.c.
** Any function may be NULL. */
typedef struct tecs__index_listener {
    /* Index x is about to be freed: an error (set on the world) if this
    ** layer still needs it; the index then stays. */
    tecs_err_t (*on_free)(tecs__indexes *r, const tecs_index_t *x);
    /* Index id has seen a burst of sets: must it still follow every one
    ** (rather than sleep until its next use, then be rebuilt)? */
    bool (*follows)(const tecs__indexes *r, int32_t id);
    /* The world is freed: release everything this layer holds, before
    ** the indexes go. */
    void (*on_fini)(tecs__indexes *r);
    /* tecs_world_check, after the indexes are verified: verify this
    ** layer's structures. */
    tecs_err_t (*verify)(tecs__indexes *r, tecs_world_t *w);
    /* tecs__indexes_rebuild, first: the rows are being replaced without
    ** events; empty this layer's structures and mark them to be refilled
    ** before their next use. Cannot fail. */
    void (*drop)(tecs__indexes *r);
    /* tecs__indexes_rebuild, then, bottom layer first, every index rebuilt:
    ** refill this layer's structures from the rows; on an error (set on
    ** the world) the structures not refilled stay dropped. */
    tecs_err_t (*refill)(tecs__indexes *r, tecs_world_t *w);
} tecs__index_listener;

#define TECS__INDEX_LISTENERS 4 /* room for the layers above                */

/* The world's indexes (w->indexes), made on first use. The fields after
** the listeners belong to the layers above: the index layer keeps them,
** it never reads them. */
struct tecs__indexes {
    tecs_index_t **by_id;       /* by id, NULL once freed                   */
    int32_t nids, cap;
    const tecs__index_listener *listeners[TECS__INDEX_LISTENERS];
    int32_t nlisteners;
    struct tecs_filter_t *filters; /* filter.c: every filter                */
    struct tecs_cache_t *caches;   /* cache.c: every cache                  */
    bool cache_listening;       /* cache.c: on the event bus                */
    int32_t dispatching;        /* cache events being delivered (nested)    */
    bool any_doomed;            /* a cache freed meanwhile waits for the end */
};

static inline tecs__indexes *registry(const tecs_world_t *w)
{
    return w->indexes;
}

/* The live index with this id, or NULL. */
static inline tecs_index_t *index_by_id(const tecs_world_t *w, int32_t id)
{
    tecs__indexes *r = registry(w);
    return r && id >= 0 && id < r->nids ? r->by_id[id] : NULL;
}

/* The registry, made and put on the event bus on first use; NULL when
** out of memory. */
tecs__indexes *tecs__index_registry(tecs_world_t *w);
/* Register l (a static object) with r; registering it again does nothing. */
void tecs__index_listen(tecs__indexes *r, const tecs__index_listener *l);
/* Rebuild a dirty index. */
tecs_err_t tecs__index_refresh(tecs_index_t *x);
/* Rebuild every index of w from its rows, then have the layers above refill
** theirs (every cache), for a caller that put rows in place without events:
** a snapshot load, a delta applied. It does not assume the indexes empty:
** every index is cleared and filled again, every cache emptied and filled
** again, without enter / leave callbacks (the rows came without events);
** a cache's order function runs, and what it queues is applied before the
** return. It costs one index build per index (a fill, plus the tree's bulk
** build for an ordered one) and a fill per cache (O(n log n) calls of its
** order function for an ordered one), as if each were made anew. On an
** error (TECS_EEXIST: a unique index's rows share a key, the message naming
** both; TECS_ENOMEM) the indexes and caches not rebuilt are left empty and
** marked to be rebuilt before their next use, so none is ever stale; a
** caller that then empties the world calls it again. With no rows in the
** world it allocates nothing and calls nothing, and cannot fail. Call it
** with nothing deferred and no iteration open, as a load is. */
tecs_err_t tecs__indexes_rebuild(tecs_world_t *w);
/* Encode a caller's key for x; false (TECS_EINVAL) if it does not fit. */
bool tecs__index_encode(tecs_index_t *x, tecs_key_t key, uint64_t *out);
/* The index for a message: "the ordered index on component 'Hp' (3)". */
#define TECS__INDEX_FMT "the %s index on " TECS__COMP_FMT
#define TECS__INDEX(x) tecs__index_kind_name((x)->d.kind), TECS__COMP((x)->world, (x)->d.comp)
const char *tecs__index_kind_name(tecs_index_kind_t kind);

/* ==================================================================== */
/* filter.c: filters and the filtered iteration                         */
/* ==================================================================== */

#define PREFETCH_AHEAD 16       /* steps of a filtered iteration fetched ahead */

enum { F_EQ, F_NE, F_LT, F_LE, F_GT, F_GE, F_BETWEEN, F_IN, F_RADIUS, F_BOX,
       F_AND, F_OR, F_NOT };

/* A condition. Leaves: index id, keys [a, a + b) of the key pool (sorted
** for `in`), g the circle or box. and / or: children a, b; not: a. */
typedef struct fnode {
    int32_t op;
    int32_t index;
    int32_t a, b;
    float g[4];
} fnode;

/* What a filtered iteration keeps beside the iterator: the place of the
** step's first row, the group of chunks it is in (one block laid out
** column by column, so that a field moves by rows times its size across
** the whole group), and the terms with a field there. A step in the group
** of the step before moves its fields instead of loading them through the
** query. It trusts the iterator's fields between steps, as the report of
** writes does, but only for the iterator it last served (a copy stepped on
** its own loads). */
typedef struct cursor {
    const tecs_entity_t *ents;  /* the entities handed out by that step     */
    uint64_t at;                /* place of the step's first row            */
    uint64_t group;             /* place of the first row of its group      */
    uint64_t span;              /* rows in the group; 0: none loaded yet    */
    int32_t nlive;              /* terms with a field in this archetype     */
    uint8_t live[TECS_MAX_TERMS]; /* ... their indexes                      */
    uint32_t size[TECS_MAX_TERMS]; /* size of each term's values            */
} cursor;

/* The rows a filtered iteration hands out, taken when it starts. */
typedef struct snap {
    tecs__iter_rows rows;       /* first: a cache's collect reads v's ids   */
    okey *v;                    /* e: the entity; k: a sort key             */
    int32_t n, cap;
    bool cursor_on;             /* steps use cur (a where's; a cache's not) */
    cursor cur;
    bool busy;                  /* an iteration reads it                    */
    bool rowwise;               /* ... of a query with toggle or change
                                   terms (its runs are read again)          */
    bool plain;                 /* ... forward, with the cursor, not
                                   row-wise: snap_step's fast case          */
    struct tecs_filter_t *doomed; /* the filter owning it, freed while the
                                   iteration was open: freed when it ends   */
    tecs_archetype_t *la;       /* the last archetype looked up ...         */
    int32_t lm;                 /* ... and its match in the query           */
    int32_t batch;              /* rows of a gathered step; 0: steps are
                                   runs of rows in place (snap_step_copy)   */
    char *copy;                 /* a gathered step: its ids, then a column
                                   of values per term, at off[t]            */
    void *copy_raw;             /* ... as allocated, copy_bytes long        */
    size_t copy_bytes;
    uint32_t off[TECS_MAX_TERMS];
} snap;

struct tecs_filter_t {
    tecs__iter_src src;         /* first: tecs_iter starts a where through it */
    tecs_world_t *world;
    tecs_filter_t *next, *prev; /* the world's filters                      */
    fnode *nodes;
    int32_t n, cap;
    uint64_t *keys;             /* encoded keys; strings: offset + 1 in str */
    int32_t nkeys, capkeys;
    char *str;
    int32_t nstr, capstr;
    int32_t root;               /* -1: no condition, all match              */
    tecs_err_t err;             /* first building error                     */
    char why[160];              /* ... and its message                      */
    int32_t order;              /* ordered index id for key order, or -1    */
    bool desc;
    snap scr;
};

/* Key i of the pool, usable with kcmp on x. */
static inline uint64_t fkey(const tecs_filter_t *f, const tecs_index_t *x, int32_t i)
{
    uint64_t k = f->keys[i];
    if (x->cls != TECS_KEYC_STR || k == 0)
        return k;
    return (uint64_t)(uintptr_t)(f->str + k - 1);
}

/* The match of a in the query, remembering the last archetype. */
static inline int32_t snap_match(snap *s, tecs_query_t *q, tecs_archetype_t *a)
{
    if (a != s->la) {
        s->la = a;
        s->lm = tecs__query_find(q, a);
    }
    return s->lm;
}

/* Where a record's row is, as one sortable number: archetype, row. */
static inline uint64_t place_of(const tecs__record *r)
{
    return (uint64_t)(r->arch & TECS__ARCH_MASK) << 32 | r->row;
}

/* Put the filter layer's index listener on r (before any other layer's). */
void tecs__filters_listen(tecs__indexes *r);
void tecs__filter_release(tecs_filter_t *f);
/* A deep copy of f, linked in the world's filters. */
tecs_filter_t *tecs__filter_clone(const tecs_filter_t *src);
/* Does f name index id (in a condition or as its order)? */
bool tecs__filter_names(const tecs_filter_t *f, int32_t id);
/* Every index the filter names is alive and fresh. */
tecs_err_t tecs__filter_ready(tecs_filter_t *f);
/* Some index of the filter waits for a rebuild. */
bool tecs__filter_dirty(const tecs_filter_t *f);
/* Does e satisfy condition c of f? */
bool tecs__filter_holds(const tecs_filter_t *f, int32_t c, tecs_entity_t e);
void tecs__snap_free(tecs_world_t *w, snap *s);
/* Start an iteration of q that hands out the rows of snapshot s, from
** its end if reverse (the steps last first, each step's rows in memory
** order). */
tecs_iter_t tecs__snap_iter(tecs_query_t *q, snap *s, bool reverse);

/* ==================================================================== */
/* cache.c: cached result sets                                          */
/* ==================================================================== */

/* Nothing shared: struct tecs_cache_t and everything about caches are
** cache.c's own; the index layer learns of caches through the listener
** cache.c registers (tecs__index_listen). */

#endif /* TECS_INDEX_INTERNAL_H */
