/*
** index/internal.h — what the files of the index layer share: the index,
** filter and snapshot structures, and the small helpers all three use.
** Only the files of src/index include it.
**
**     index.c   keys, the entry table, hash chains, the ordered B+-tree, the
**               listener that keeps indexes true, the unique check;
**     filter.c  filters: building, testing, collecting, ordering, and the
**               filtered iteration;
**     cache.c   cached result sets and their enter / leave events.
*/
#ifndef TECS_INDEX_INTERNAL_H
#define TECS_INDEX_INTERNAL_H

#include "../private.h"

#define OB 64                   /* items in an ordered leaf                */
#define OF 42                   /* children of an ordered inner node       */
#define PREFETCH_AHEAD 16       /* steps of a filtered iteration fetched ahead */
#define NAN_KEY UINT64_MAX      /* every NaN, above +inf                    */
#define NOWHERE_CELL 0x8000000080000000ull /* spatial: NaN coordinates      */
#define CELL_LIMIT 1073741824.0 /* cells are clamped to +-2^30              */

struct onode;

typedef struct ient {
    uint64_t key;               /* encoded key, string copy, or cell        */
    uint64_t aux;               /* raw field bytes, user pointer, or x / y  */
    tecs_entity_t e;
    int32_t next, prev;         /* bucket chain (hash, spatial), -1 ends    */
    uint32_t h;                 /* hash of key (hash, spatial)              */
} ient;


typedef struct okey {
    uint64_t k;
    tecs_entity_t e;
} okey;

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

struct tecs_index_t {
    tecs_world_t *world;
    int32_t id;                 /* in the world's registry, never reused    */
    tecs_index_desc_t d;
    int32_t cls;                /* TECS_KEYC_* of its keys                  */
    uint32_t fsize;             /* bytes of the field                       */
    bool dirty;                 /* rebuild before the next use              */
    int32_t sets;               /* SET events since the last use            */
    bool asleep;                /* a burst: off its component's events
                                   (watch, check) until rebuilt             */
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
    onode *root;                /* ordered: the B+-tree, NULL when empty    */
    int32_t height;             /* inner levels above the leaves            */
    onode *pool;                /* spare nodes, linked by next              */
    int32_t npool;
    const onode *hint;          /* ordered: the leaf (hint_k, hint_slot) goes */
    uint64_t hint_k;            /* to, found by the check before a re-key;  */
    uint32_t hint_slot;         /* NULL once the tree changes               */
};

typedef struct tecs__indexes {
    tecs_index_t **by_id;
    int32_t nids, cap;
    struct tecs_filter_t *filters;
    struct tecs_cache_t *caches;
    bool cache_listening;
    int32_t dispatching;        /* cache events being delivered (nested)    */
    bool any_doomed;            /* a cache freed meanwhile waits for the end */
} tecs__indexes;

/* A key read from a value, not owned: k is the encoded key (for strings,
** the pointer of s), s a string or NULL. */
typedef struct probe {
    uint64_t k;
    uint64_t aux;
    char buf[TECS_MAX_KEY_CHARS + 1];
} probe;

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

static inline uint32_t khash(const tecs_index_t *x, uint64_t k)
{
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

/* floor(v / cell), clamped to +-2^30 (no libm needed). */
static inline int32_t cell_of(float v, float cell)
{
    double q = (double)v / cell;
    if (q < -CELL_LIMIT)
        return (int32_t)-CELL_LIMIT;
    if (q > CELL_LIMIT)
        return (int32_t)CELL_LIMIT;
    int32_t t = (int32_t)q;
    return t > q ? t - 1 : t;
}

static inline uint64_t cell_key(int32_t cx, int32_t cy)
{
    return (uint64_t)(uint32_t)cx << 32 | (uint32_t)cy;
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

static inline bool is_hashed(const tecs_index_t *x)
{
    return x->d.kind != TECS_INDEX_ORDERED;
}

/* A unique hash index keeps (key, entity) in one open table, no chains:
** a lookup is one probe. */
static inline bool is_table(const tecs_index_t *x)
{
    return x->d.kind == TECS_INDEX_HASH && x->d.unique;
}

/* The cell of key k in x's table, or -1. */
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

typedef int (*okey_cmp)(const tecs_index_t *x, const okey *a, const okey *b);

/* Sort v[0..n) by k, keys within [min, max], stably, with tmp of n items
** (a radix sort, 11 bits a pass, as many passes as max - min needs). */
void tecs__okey_radix(okey *v, okey *tmp, int32_t n, uint64_t min, uint64_t max);

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
    okey *v;                    /* e: the entity; k: a sort key             */
    int32_t n, cap;
    bool cursor_on;             /* steps use cur (a where's; a cache's not) */
    cursor cur;
    bool busy;                  /* an iteration reads it                    */
    struct tecs_filter_t *doomed; /* the filter owning it, freed while the
                                   iteration was open: freed when it ends   */
    tecs_archetype_t *la;       /* the last archetype looked up ...         */
    int32_t lm;                 /* ... and its match in the query           */
} snap;

struct tecs_filter_t {
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

/* ---- shared between the files ----------------------------------------- */

/* index.c */
tecs__indexes *tecs__index_registry(tecs_world_t *w);
/* Rebuild a dirty index. */
tecs_err_t tecs__index_refresh(tecs_index_t *x);
/* Encode a caller's key for x; false (TECS_EINVAL) if it does not fit. */
bool tecs__index_encode(tecs_index_t *x, tecs_key_t key, uint64_t *out);
/* The index for a message: "the ordered index on component 'Hp' (3)". */
#define TECS__INDEX_FMT "the %s index on " TECS__COMP_FMT
#define TECS__INDEX(x) tecs__index_kind_name((x)->d.kind), TECS__COMP((x)->world, (x)->d.comp)
const char *tecs__index_kind_name(tecs_index_kind_t kind);

/* filter.c */
void tecs__filter_release(tecs_filter_t *f);
/* A deep copy of f, linked in the world's filters. */
tecs_filter_t *tecs__filter_clone(const tecs_filter_t *src);
/* Every index the filter names is alive and fresh. */
tecs_err_t tecs__filter_ready(tecs_filter_t *f);
/* Some index of the filter waits for a rebuild. */
bool tecs__filter_dirty(const tecs_filter_t *f);
/* Does e satisfy condition c of f? */
bool tecs__filter_holds(const tecs_filter_t *f, int32_t c, tecs_entity_t e);
void tecs__snap_free(tecs_world_t *w, snap *s);
/* Start an iteration of q that hands out the rows of snapshot s. */
tecs_iter_t tecs__snap_iter(tecs_query_t *q, snap *s);
/* Is an iteration open over a filter that names index id? */
bool tecs__filters_iterate(const tecs__indexes *r, int32_t id);

/* cache.c */
void tecs__cache_release(struct tecs_cache_t *c);
/* Does some cache's filter name index id? */
bool tecs__caches_use(const tecs__indexes *r, int32_t id);
/* Verify every cache against its query and filter (tecs_world_check). */
tecs_err_t tecs__caches_verify(tecs_world_t *w);

#endif /* TECS_INDEX_INTERNAL_H */
