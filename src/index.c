/*
** index.c — field indexes, `where` filters and cached result sets.
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
**     spatial  the same chains, the key being the grid cell (cx, cy);
**     ordered  sorted blocks of (key, entity), at most OB each, found by
**              binary search over the blocks' last items, then inside one:
**
**              blk[0] [k1 k1 k3 ..]  blk[1] [k7 k9 ..]  blk[2] [..]
**
**              insert / erase move at most OB items (a full block splits in
**              two, an empty one goes away), a range walks blocks in order:
**              O(log n + k). Ties are ordered by entity slot.
**
** Entities are stored by id, never by row, so archetype moves need nothing.
** The index listens to component events (entity.c): ADD inserts, SET
** re-keys, REMOVE erases. Before a change, the check hook reserves room and,
** for a unique index, refuses a key another entity holds, so the world is
** never changed by a refused call. Should an allocation still fail inside
** an event (a string copy), the index marks itself dirty and is rebuilt
** from the archetypes before its next use: never stale as seen from outside.
**
** A filter is a small tree of conditions (leaves on indexes, and / or /
** not) stored in arrays owned by the filter; keys of `in` and strings are
** copied in. Iterating a query through a filter first collects the matches
** into the filter's scratch array ("drive"): a leaf walks its index; `and`
** drives its cheaper side and tests the other; `or` drives both sides, the
** second skipping what the first matched. A tree no index can drive is
** tested row by row over the query. The scratch is then sorted into the
** promised order and handed out in runs of consecutive rows.
**
** A cache is a filter's result kept as a set of entity ids, updated one
** entity at a time on moves and on events of indexed components.
*/
#include "private.h"

#define OB 64                   /* items in an ordered block               */
#define NAN_KEY UINT64_MAX      /* every NaN, above +inf                    */
#define NOWHERE_CELL 0x8000000080000000ull /* spatial: NaN coordinates      */
#define CELL_LIMIT 1073741824.0 /* cells are clamped to +-2^30              */

typedef struct ient {
    uint64_t key;               /* encoded key, string copy, or cell        */
    uint64_t aux;               /* raw field bytes, user pointer, or x / y  */
    tecs_entity_t e;
    uint32_t h;                 /* hash of key (hash, spatial)              */
    int32_t next, prev;         /* bucket chain (hash, spatial), -1 ends    */
} ient;

typedef struct okey {
    uint64_t k;
    tecs_entity_t e;
} okey;

typedef struct oblk {
    int32_t n;
    okey v[OB];
} oblk;

struct tecs_index_t {
    tecs_world_t *world;
    int32_t id;                 /* in the world's registry, never reused    */
    tecs_index_desc_t d;
    int32_t cls;                /* TECS_KEYC_* of its keys                  */
    uint32_t fsize;             /* bytes of the field                       */
    bool dirty;                 /* rebuild before the next use              */
    int32_t n, cap;
    ient *ents;
    int32_t *pos;               /* entity slot -> entry + 1                 */
    int32_t npos;
    int32_t *bucket;            /* hash, spatial: power of two, -1 empty    */
    int32_t nbucket;
    oblk **blk;                 /* ordered                                  */
    int32_t nblk, capblk;
    oblk *spare;                /* a block reserved for the next split      */
};

typedef struct tecs__indexes {
    tecs_index_t **by_id;
    int32_t nids, cap;
    struct tecs_filter_t *filters;
    struct tecs_cache_t *caches;
    bool cache_listening;
} tecs__indexes;

/* A key read from a value, not owned: k is the encoded key (for strings,
** the pointer of s), s a string or NULL. */
typedef struct probe {
    uint64_t k;
    uint64_t aux;
    char buf[TECS_MAX_KEY_CHARS + 1];
} probe;

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

static uint32_t field_size(const tecs_index_desc_t *d)
{
    static const uint8_t sz[] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, sizeof(char *), 0 };
    return d->type == TECS_KEY_CHARS ? (uint32_t)d->size : sz[d->type];
}

static int scmp(const char *a, const char *b)
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

static uint32_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(k ^ (k >> 33));
}

static uint32_t khash(const tecs_index_t *x, uint64_t k)
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

static float read_float(const void *p)
{
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}

/* floor(v / cell), clamped to +-2^30 (no libm needed). */
static int32_t cell_of(float v, float cell)
{
    double q = (double)v / cell;
    if (q < -CELL_LIMIT)
        return (int32_t)-CELL_LIMIT;
    if (q > CELL_LIMIT)
        return (int32_t)CELL_LIMIT;
    int32_t t = (int32_t)q;
    return t > q ? t - 1 : t;
}

static uint64_t cell_key(int32_t cx, int32_t cy)
{
    return (uint64_t)(uint32_t)cx << 32 | (uint32_t)cy;
}

/* The key of the component value at val. */
static void read_probe(const tecs_index_t *x, const void *val, probe *p)
{
    const char *f = (const char *)val + x->d.offset;
    p->aux = 0;
    switch (x->cls) {
    case TECS_KEYC_INT:
        p->k = enc_int(read_signed(f, x->fsize));
        memcpy(&p->aux, f, x->fsize);
        return;
    case TECS_KEYC_UINT:
        p->k = read_unsigned(f, x->fsize);
        memcpy(&p->aux, f, x->fsize);
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
        memcpy(&p->aux, f, x->fsize);
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

/* ---- the entry table and the entity map ------------------------------- */

/* e's entry, or -1. */
static inline int32_t ent_find(const tecs_index_t *x, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot >= (uint32_t)x->npos || x->pos[slot] == 0)
        return -1;
    int32_t i = x->pos[slot] - 1;
    return x->ents[i].e == e ? i : -1;
}

static bool is_hashed(const tecs_index_t *x)
{
    return x->d.kind != TECS_INDEX_ORDERED;
}

/* Room for n more entries (and entities up to the world's slots + n), so
** that the next n inserts allocate nothing but string copies. */
static tecs_err_t reserve(tecs_index_t *x, int32_t n)
{
    tecs_world_t *w = x->world;
    int32_t need = x->n + n;
    if (tecs__grow(w, (void **)&x->ents, &x->cap, need, sizeof *x->ents))
        return TECS_ENOMEM;
    int32_t slots = w->nrecs + n, old = x->npos;
    if (slots > x->npos) {
        if (tecs__grow(w, (void **)&x->pos, &x->npos, slots, sizeof *x->pos))
            return TECS_ENOMEM;
        memset(x->pos + old, 0, (size_t)(x->npos - old) * sizeof *x->pos);
    }
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
    if (!is_hashed(x)) {
        /* n inserts split at most min(n, blocks + 1) + 2n / OB blocks. */
        int64_t splits = (n < x->nblk + 1 ? n : x->nblk + 1) + 2 * (int64_t)n / OB + 1;
        if (tecs__grow(w, (void **)&x->blk, &x->capblk, x->nblk + (int32_t)splits,
                       sizeof *x->blk))
            return TECS_ENOMEM;
        if (x->spare == NULL && (x->spare = tecs__alloc(w, sizeof *x->spare)) == NULL)
            return TECS_ENOMEM;
    }
    return TECS_OK;
}

/* ---- hash chains ------------------------------------------------------ */

static void chain_link(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    int32_t *head = &x->bucket[t->h & (uint32_t)(x->nbucket - 1)];
    t->prev = -1;
    t->next = *head;
    if (*head >= 0)
        x->ents[*head].prev = i;
    *head = i;
}

static void chain_unlink(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
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
    if (t->prev >= 0)
        x->ents[t->prev].next = j;
    else
        x->bucket[t->h & (uint32_t)(x->nbucket - 1)] = j;
    if (t->next >= 0)
        x->ents[t->next].prev = j;
    (void)i;
}

/* ---- ordered blocks --------------------------------------------------- */

/* (k, e) against item o: key, then entity slot. */
static inline int ocmp(const tecs_index_t *x, uint64_t k, uint32_t slot, const okey *o)
{
    int c = kcmp(x, k, o->k);
    if (c)
        return c;
    uint32_t s = TECS_ENTITY_INDEX(o->e);
    return (slot > s) - (slot < s);
}

/* The first block whose last item is >= (k, slot); nblk if none. */
static int32_t oblock(const tecs_index_t *x, uint64_t k, uint32_t slot)
{
    int32_t lo = 0, hi = x->nblk;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        const oblk *b = x->blk[mid];
        if (ocmp(x, k, slot, &b->v[b->n - 1]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first item of b that is >= (k, slot). */
static int32_t oslot(const tecs_index_t *x, const oblk *b, uint64_t k, uint32_t slot)
{
    int32_t lo = 0, hi = b->n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (ocmp(x, k, slot, &b->v[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Split full block bi in two (room reserved). */
static void osplit(tecs_index_t *x, int32_t bi)
{
    oblk *b = x->blk[bi], *c = x->spare;
    x->spare = NULL;
    c->n = OB / 2;
    memcpy(c->v, b->v + OB / 2, (OB / 2) * sizeof *c->v);
    b->n = OB / 2;
    memmove(x->blk + bi + 2, x->blk + bi + 1, (size_t)(x->nblk - bi - 1) * sizeof *x->blk);
    x->blk[bi + 1] = c;
    x->nblk++;
}

/* Insert (k, e); false if a block was needed and none is reserved. */
static bool oinsert(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (x->nblk == 0) {
        if (x->spare == NULL || x->capblk < 1)
            return false;
        x->blk[0] = x->spare;
        x->spare = NULL;
        x->blk[0]->n = 1;
        x->blk[0]->v[0] = (okey){ k, e };
        x->nblk = 1;
        return true;
    }
    int32_t bi = oblock(x, k, slot);
    if (bi == x->nblk)
        bi--;
    if (x->blk[bi]->n == OB) {
        if (x->spare == NULL || x->nblk >= x->capblk) {
            x->spare = x->spare ? x->spare : tecs__alloc(x->world, sizeof *x->spare);
            if (x->spare == NULL || tecs__grow(x->world, (void **)&x->blk, &x->capblk,
                                               x->nblk + 1, sizeof *x->blk))
                return false;
        }
        osplit(x, bi);
        if (ocmp(x, k, slot, &x->blk[bi]->v[OB / 2 - 1]) > 0)
            bi++;
    }
    oblk *b = x->blk[bi];
    int32_t i = oslot(x, b, k, slot);
    memmove(b->v + i + 1, b->v + i, (size_t)(b->n - i) * sizeof *b->v);
    b->v[i] = (okey){ k, e };
    b->n++;
    return true;
}

static void oerase(tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    int32_t bi = oblock(x, k, slot);
    assert(bi < x->nblk);
    oblk *b = x->blk[bi];
    int32_t i = oslot(x, b, k, slot);
    assert(i < b->n && b->v[i].e == e);
    memmove(b->v + i, b->v + i + 1, (size_t)(b->n - i - 1) * sizeof *b->v);
    if (--b->n > 0)
        return;
    if (x->spare == NULL)
        x->spare = b;
    else
        tecs__free(x->world, b, sizeof *b);
    memmove(x->blk + bi, x->blk + bi + 1, (size_t)(x->nblk - bi - 1) * sizeof *x->blk);
    x->nblk--;
}

/* ---- insert, erase, re-key --------------------------------------------- */

/* Add e with the key in p (room reserved); false when out of memory. */
static bool ent_insert(tecs_index_t *x, tecs_entity_t e, const probe *p)
{
    uint64_t k;
    if (!own_key(x, p->k, &k))
        return false;
    if (!is_hashed(x) && !oinsert(x, k, e)) {
        free_key(x, k);
        return false;
    }
    int32_t i = x->n++;
    x->ents[i] = (ient){ k, p->aux, e, 0, -1, -1 };
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
        oerase(x, t->key, t->e);
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
        ent_erase(x, i);
    return reserve(x, 1) == TECS_OK && ent_insert(x, e, &p);
}

/* Another entity than e with key k, or 0. */
static tecs_entity_t find_other(const tecs_index_t *x, uint64_t k, tecs_entity_t e)
{
    if (is_hashed(x)) {
        if (x->nbucket == 0)
            return 0;
        for (int32_t i = x->bucket[khash(x, k) & (uint32_t)(x->nbucket - 1)]; i >= 0;
             i = x->ents[i].next)
            if (x->ents[i].e != e && kcmp(x, x->ents[i].key, k) == 0)
                return x->ents[i].e;
        return 0;
    }
    for (int32_t bi = oblock(x, k, 0); bi < x->nblk; bi++) {
        const oblk *b = x->blk[bi];
        for (int32_t i = oslot(x, b, k, 0); i < b->n; i++) {
            if (kcmp(x, b->v[i].k, k) != 0)
                return 0;
            if (b->v[i].e != e)
                return b->v[i].e;
        }
    }
    return 0;
}

/* ---- building --------------------------------------------------------- */

static void clear(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    for (int32_t i = 0; i < x->n; i++)
        free_key(x, x->ents[i].key);
    for (int32_t i = 0; i < x->nblk; i++)
        tecs__free(w, x->blk[i], sizeof *x->blk[i]);
    if (x->npos)
        memset(x->pos, 0, (size_t)x->npos * sizeof *x->pos);
    if (x->nbucket)
        memset(x->bucket, 0xff, (size_t)x->nbucket * sizeof *x->bucket);
    x->n = 0;
    x->nblk = 0;
}

/* Fill x from every archetype with its component. */
static tecs_err_t fill(tecs_index_t *x)
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
            if (x->d.unique && find_other(x, p.k, e))
                return tecs__err(w, TECS_EEXIST, "unique index: two entities share a key");
            if (!ent_insert(x, e, &p))
                return TECS_ENOMEM;
        }
    }
    return TECS_OK;
}

/* Rebuild a dirty index. */
static tecs_err_t refresh(tecs_index_t *x)
{
    if (!x->dirty)
        return TECS_OK;
    clear(x);
    tecs_err_t err = fill(x);
    if (err) {
        clear(x);
        return tecs__err(x->world, err, "out of memory rebuilding an index");
    }
    x->dirty = false;
    return TECS_OK;
}

static void index_release(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    clear(x);
    tecs__free(w, x->spare, sizeof *x->spare);
    tecs__free(w, x->ents, (size_t)x->cap * sizeof *x->ents);
    tecs__free(w, x->pos, (size_t)x->npos * sizeof *x->pos);
    tecs__free(w, x->bucket, (size_t)x->nbucket * sizeof *x->bucket);
    tecs__free(w, x->blk, (size_t)x->capblk * sizeof *x->blk);
    tecs__free(w, x, sizeof *x);
}

/* ---- the unique check ------------------------------------------------- */

/* A default-constructed value of x's component, in a fresh block. */
static void *default_value(tecs_index_t *x, size_t *size)
{
    const tecs__comp *ci = &x->world->comps[x->d.comp];
    *size = ci->size;
    void *v = tecs__alloc(x->world, ci->size);
    if (v == NULL)
        return NULL;
    memset(v, 0, ci->size);
    if (ci->ctor)
        ci->ctor(v, 1, ci->ctx);
    return v;
}

static void drop_default(tecs_index_t *x, void *v, size_t size)
{
    const tecs__comp *ci = &x->world->comps[x->d.comp];
    if (ci->dtor)
        ci->dtor(v, 1, ci->ctx);
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
    tecs_entity_t other = find_other(x, p.k, e);
    if (other && (ev & TECS__EV_WRITTEN))
        revert(x, e, (void *)(uintptr_t)val);
    if (def)
        drop_default(x, def, size);
    if (other)
        return tecs__err(x->world, TECS_EEXIST, "unique index: key held by entity %u:%u",
                         TECS_ENTITY_INDEX(other), TECS_ENTITY_GENERATION(other));
    return TECS_OK;
}

/* Order of two batch keys read from values (strings not owned). */
static int batch_cmp(const tecs_index_t *x, const okey *a, const okey *b)
{
    if (x->d.type == TECS_KEY_CHARS)
        return strncmp((const char *)(uintptr_t)a->k, (const char *)(uintptr_t)b->k, x->fsize);
    return kcmp(x, a->k, b->k);
}

typedef int (*okey_cmp)(const tecs_index_t *x, const okey *a, const okey *b);

/* Stable merge sort of v[0..n) with tmp of n items. */
static void msort(okey *v, okey *tmp, int32_t n, okey_cmp cmp, const tecs_index_t *x)
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

/* n births with values at vals: none may take a held key, nor repeat one. */
static tecs_err_t check_batch(tecs_index_t *x, const void *vals, int32_t n)
{
    tecs_world_t *w = x->world;
    if (vals == NULL)
        return n > 1 ? tecs__err(w, TECS_EEXIST, "unique index: default keys repeat")
                     : check_one(x, TECS__EV_ADD, 0, NULL);
    size_t size = w->comps[x->d.comp].size;
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
    msort(v, v + n, n, batch_cmp, x);
    for (int32_t i = 1; i < n && !err; i++)
        if (batch_cmp(x, &v[i - 1], &v[i]) == 0)
            err = tecs__err(w, TECS_EEXIST, "unique index: a key repeats in one call");
    tecs__free(w, v, (size_t)n * 2 * sizeof *v);
    return err;
}

/* ---- the registry and the listener ------------------------------------- */

static tecs__indexes *registry(const tecs_world_t *w)
{
    return w->indexes;
}

/* The live index with this id, or NULL. */
static tecs_index_t *index_by_id(const tecs_world_t *w, int32_t id)
{
    tecs__indexes *r = registry(w);
    return r && id >= 0 && id < r->nids ? r->by_id[id] : NULL;
}

static tecs_err_t on_check(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                           const void *vals, int32_t n)
{
    tecs__indexes *r = ctx;
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c)
            continue;
        tecs_err_t err = refresh(x);
        if (!err && reserve(x, n))
            err = tecs__err(w, TECS_ENOMEM, "out of memory growing an index");
        if (err && (ev & TECS__EV_WRITTEN)) {
            x->dirty = true;    /* the write stands; rebuilt before next use */
            continue;
        }
        if (!err && x->d.unique)
            err = n == 1 ? check_one(x, ev, e, vals) : check_batch(x, vals, n);
        if (err)
            return err;
    }
    return TECS_OK;
}

static void on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                    const void *ptr)
{
    tecs__indexes *r = ctx;
    (void)w;
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c || x->dirty)
            continue;
        if (ev == TECS__EV_REMOVE) {
            int32_t i = ent_find(x, e);
            if (i >= 0)
                ent_erase(x, i);
        } else if (!ent_update(x, e, ptr)) {
            x->dirty = true;
        }
    }
}

static void filter_release(tecs_filter_t *f);
static void cache_release(struct tecs_cache_t *c);

static void on_fini(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    while (r->caches)
        cache_release(r->caches);
    while (r->filters)
        filter_release(r->filters);
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id])
            index_release(r->by_id[id]);
    tecs__free(w, r->by_id, (size_t)r->cap * sizeof *r->by_id);
    tecs__free(w, r, sizeof *r);
    w->indexes = NULL;
}

/* The registry, made and listened for on first use. */
static tecs__indexes *registry_get(tecs_world_t *w)
{
    if (w->indexes)
        return w->indexes;
    tecs__indexes *r = tecs__alloc(w, sizeof *r);
    if (r == NULL)
        return NULL;
    memset(r, 0, sizeof *r);
    tecs__listener l = { .on_comp = on_comp, .on_check = on_check, .on_fini = on_fini,
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
    if ((unsigned)d->kind > TECS_INDEX_SPATIAL || class_of(d->type) == 0)
        return tecs__err(w, TECS_EINVAL, "bad index kind or key type");
    if (d->type == TECS_KEY_CHARS && (d->size < 1 || d->size > TECS_MAX_KEY_CHARS))
        return tecs__err(w, TECS_EINVAL, "char[N] key: N must be 1..%d", TECS_MAX_KEY_CHARS);
    uint32_t fs = field_size(d);
    if (d->offset > ci->size || fs > ci->size - d->offset)
        return tecs__err(w, TECS_EINVAL, "the field does not fit inside component %u", d->comp);
    if (d->kind != TECS_INDEX_SPATIAL)
        return TECS_OK;
    if (d->type != TECS_KEY_FLOAT || d->unique || !(d->cell_size > 0) ||
        d->cell_size > 3.0e38f)
        return tecs__err(w, TECS_EINVAL, "spatial index: float fields, a cell size > 0, "
                                         "not unique");
    if (d->offset_y > ci->size || 4 > ci->size - d->offset_y)
        return tecs__err(w, TECS_EINVAL, "the y field does not fit inside component %u",
                         d->comp);
    return TECS_OK;
}

/* Give x an id in the registry. */
static tecs_err_t enroll(tecs_world_t *w, tecs_index_t *x)
{
    tecs__indexes *r = registry_get(w);
    if (r == NULL || tecs__grow(w, (void **)&r->by_id, &r->cap, r->nids + 1, sizeof *r->by_id))
        return tecs__err(w, TECS_ENOMEM, "out of memory creating an index");
    x->id = r->nids;
    r->by_id[r->nids++] = x;
    return TECS_OK;
}

tecs_index_t *tecs_index_new(tecs_world_t *w, const tecs_index_desc_t *d)
{
    if (w == NULL || check_desc(w, d))
        return NULL;
    tecs_index_t *x = registry_get(w) ? tecs__alloc(w, sizeof *x) : NULL;
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
    w->comps[d->comp].watch++;
    w->comps[d->comp].check++;
    return x;
}

static bool caches_use(const tecs__indexes *r, int32_t id);

tecs_err_t tecs_index_free(tecs_index_t *x)
{
    if (x == NULL)
        return TECS_OK;
    tecs_world_t *w = x->world;
    tecs__indexes *r = registry(w);
    if (caches_use(r, x->id))
        return tecs__err(w, TECS_EBUSY, "a cache uses this index");
    r->by_id[x->id] = NULL;
    w->comps[x->d.comp].watch--;
    w->comps[x->d.comp].check--;
    index_release(x);
    return TECS_OK;
}

int32_t tecs_index_count(tecs_index_t *x)
{
    if (x == NULL || refresh(x))
        return 0;
    return x->n;
}

/* Encode a caller's key for x; false (TECS_EINVAL) if it does not fit. */
static bool encode(tecs_index_t *x, tecs_key_t key, uint64_t *out)
{
    if (key.cls != x->cls || (key.cls == TECS_KEYC_REAL && key.v.d != key.v.d)) {
        tecs__err(x->world, TECS_EINVAL, "key of the wrong class for this index, or NaN");
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
    if (x == NULL)
        return 0;
    uint64_t k;
    if (!x->d.unique) {
        tecs__err(x->world, TECS_EINVAL, "tecs_index_lookup needs a unique index");
        return 0;
    }
    if (!encode(x, key, &k) || refresh(x))
        return 0;
    tecs_entity_t e = find_other(x, k, 0);
    if (e == 0)
        tecs__err(x->world, TECS_ENOENT, "no entity has this key");
    return e;
}

/* ---- filters: building ------------------------------------------------ */

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

/* The rows a filtered iteration hands out, taken when it starts. */
typedef struct snap {
    okey *v;                    /* e: the entity; k: a sort key             */
    int32_t n, cap;
    bool busy;                  /* an iteration reads it                    */
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
    int32_t order;              /* ordered index id for key order, or -1    */
    bool desc;
    snap scr;
};

static void snap_free(tecs_world_t *w, snap *s)
{
    tecs__free(w, s->v, (size_t)s->cap * sizeof *s->v);
    s->v = NULL;
    s->cap = s->n = 0;
}

static void filter_release(tecs_filter_t *f)
{
    tecs_world_t *w = f->world;
    tecs__indexes *r = registry(w);
    if (f->prev)
        f->prev->next = f->next;
    else
        r->filters = f->next;
    if (f->next)
        f->next->prev = f->prev;
    tecs__free(w, f->nodes, (size_t)f->cap * sizeof *f->nodes);
    tecs__free(w, f->keys, (size_t)f->capkeys * sizeof *f->keys);
    tecs__free(w, f->str, (size_t)f->capstr);
    snap_free(w, &f->scr);
    tecs__free(w, f, sizeof *f);
}

static void filter_link(tecs__indexes *r, tecs_filter_t *f)
{
    f->prev = NULL;
    f->next = r->filters;
    if (r->filters)
        r->filters->prev = f;
    r->filters = f;
}

tecs_filter_t *tecs_filter_new(tecs_world_t *w)
{
    if (w == NULL)
        return NULL;
    tecs__indexes *r = registry_get(w);
    tecs_filter_t *f = r ? tecs__alloc(w, sizeof *f) : NULL;
    if (f == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a filter");
        return NULL;
    }
    memset(f, 0, sizeof *f);
    f->world = w;
    f->root = -1;
    f->order = -1;
    filter_link(r, f);
    return f;
}

void tecs_filter_free(tecs_filter_t *f)
{
    if (f != NULL && !f->scr.busy)
        filter_release(f);
}

tecs_err_t tecs_filter_error(const tecs_filter_t *f)
{
    return f ? f->err : TECS_EINVAL;
}

/* Keep the first building error; return -1. */
static tecs_cond_t fail(tecs_filter_t *f, tecs_err_t err, const char *msg)
{
    if (f->err == TECS_OK)
        f->err = err;
    tecs__err(f->world, err, "filter: %s", msg);
    return -1;
}

static tecs_cond_t add_node(tecs_filter_t *f, fnode nd)
{
    if (tecs__grow(f->world, (void **)&f->nodes, &f->cap, f->n + 1, sizeof *f->nodes))
        return fail(f, TECS_ENOMEM, "out of memory");
    f->nodes[f->n] = nd;
    f->root = f->n;
    return f->n++;
}

/* Check that index x may be used in f with operator op. */
static bool leaf_ok(tecs_filter_t *f, tecs_index_t *x, int32_t op)
{
    if (x == NULL || index_by_id(f->world, x->id) != x)
        return fail(f, x ? TECS_EWORLD : TECS_EINVAL, "NULL index or index of another world"),
               false;
    bool spatial_op = op == F_RADIUS || op == F_BOX;
    if ((x->d.kind == TECS_INDEX_SPATIAL) != spatial_op ||
        (x->d.kind == TECS_INDEX_HASH && op != F_EQ && op != F_IN))
        return fail(f, TECS_EINVAL, "operator not supported by this kind of index"), false;
    return true;
}

/* Append a caller's key to the pool (strings copied). */
static bool push_key(tecs_filter_t *f, tecs_index_t *x, tecs_key_t key)
{
    uint64_t k;
    if (!encode(x, key, &k))
        return fail(f, TECS_EINVAL, "key of the wrong class, or NaN"), false;
    if (tecs__grow(f->world, (void **)&f->keys, &f->capkeys, f->nkeys + 1, sizeof *f->keys))
        return fail(f, TECS_ENOMEM, "out of memory"), false;
    if (key.cls == TECS_KEYC_STR && key.v.s) {
        int32_t len = (int32_t)strlen(key.v.s) + 1;
        if (tecs__grow(f->world, (void **)&f->str, &f->capstr, f->nstr + len, 1))
            return fail(f, TECS_ENOMEM, "out of memory"), false;
        memcpy(f->str + f->nstr, key.v.s, (size_t)len);
        k = (uint64_t)f->nstr + 1;
        f->nstr += len;
    }
    f->keys[f->nkeys++] = k;
    return true;
}

/* Key i of the pool, usable with kcmp on x. */
static inline uint64_t fkey(const tecs_filter_t *f, const tecs_index_t *x, int32_t i)
{
    uint64_t k = f->keys[i];
    if (x->cls != TECS_KEYC_STR || k == 0)
        return k;
    return (uint64_t)(uintptr_t)(f->str + k - 1);
}

static tecs_cond_t leaf(tecs_filter_t *f, tecs_index_t *x, int32_t op, int32_t n,
                        const tecs_key_t *keys)
{
    if (f == NULL)
        return -1;
    if (!leaf_ok(f, x, op))
        return -1;
    int32_t first = f->nkeys;
    for (int32_t i = 0; i < n; i++)
        if (!push_key(f, x, keys[i])) {
            f->nkeys = first;
            return -1;
        }
    return add_node(f, (fnode){ op, x->id, first, n, { 0, 0, 0, 0 } });
}

tecs_cond_t tecs_where(tecs_filter_t *f, tecs_index_t *x, tecs_cmp_t cmp, tecs_key_t key)
{
    if (f && (unsigned)cmp > TECS_GE)
        return fail(f, TECS_EINVAL, "bad comparison");
    return leaf(f, x, (int32_t)cmp, 1, &key);
}

tecs_cond_t tecs_where_between(tecs_filter_t *f, tecs_index_t *x, tecs_key_t lo, tecs_key_t hi)
{
    tecs_key_t k[2] = { lo, hi };
    return leaf(f, x, F_BETWEEN, 2, k);
}

/* Order of resolved keys, for sorting `in` lists. */
static int key_order(const tecs_index_t *x, const okey *a, const okey *b)
{
    return kcmp(x, a->k, b->k);
}

/* Sort and deduplicate the keys of an `in` leaf. */
static tecs_cond_t sort_in(tecs_filter_t *f, tecs_index_t *x, tecs_cond_t c)
{
    fnode *nd = &f->nodes[c];
    int32_t n = nd->b;
    okey *v = tecs__alloc(f->world, (size_t)n * 2 * sizeof *v + 1);
    if (v == NULL) {
        f->n--;
        return fail(f, TECS_ENOMEM, "out of memory");
    }
    for (int32_t i = 0; i < n; i++)
        v[i] = (okey){ fkey(f, x, nd->a + i), f->keys[nd->a + i] };
    msort(v, v + n, n, key_order, x);
    int32_t m = 0;
    for (int32_t i = 0; i < n; i++)
        if (m == 0 || kcmp(x, v[m - 1].k, v[i].k) != 0)
            v[m++] = v[i];
    for (int32_t i = 0; i < m; i++)
        f->keys[nd->a + i] = v[i].e;
    nd->b = m;
    tecs__free(f->world, v, (size_t)n * 2 * sizeof *v + 1);
    return c;
}

tecs_cond_t tecs_where_in(tecs_filter_t *f, tecs_index_t *x, int32_t n, const tecs_key_t *keys)
{
    if (f && (n < 0 || (n > 0 && keys == NULL)))
        return fail(f, TECS_EINVAL, "bad key list");
    tecs_cond_t c = leaf(f, x, F_IN, n, keys);
    return c < 0 ? c : sort_in(f, x, c);
}

tecs_cond_t tecs_where_radius(tecs_filter_t *f, tecs_index_t *x, float px, float py, float r)
{
    tecs_cond_t c = leaf(f, x, F_RADIUS, 0, NULL);
    if (c >= 0)
        memcpy(f->nodes[c].g, (float[4]){ px, py, r, 0 }, sizeof f->nodes[c].g);
    return c;
}

tecs_cond_t tecs_where_box(tecs_filter_t *f, tecs_index_t *x, float x0, float y0, float x1,
                           float y1)
{
    tecs_cond_t c = leaf(f, x, F_BOX, 0, NULL);
    if (c >= 0)
        memcpy(f->nodes[c].g, (float[4]){ x0, y0, x1, y1 }, sizeof f->nodes[c].g);
    return c;
}

static tecs_cond_t combine(tecs_filter_t *f, int32_t op, tecs_cond_t a, tecs_cond_t b)
{
    if (f == NULL)
        return -1;
    if (a < 0 || a >= f->n || b < 0 || b >= f->n)
        return fail(f, TECS_EINVAL, "bad condition handle");
    return add_node(f, (fnode){ op, -1, a, b, { 0, 0, 0, 0 } });
}

tecs_cond_t tecs_where_and(tecs_filter_t *f, tecs_cond_t a, tecs_cond_t b)
{
    return combine(f, F_AND, a, b);
}

tecs_cond_t tecs_where_or(tecs_filter_t *f, tecs_cond_t a, tecs_cond_t b)
{
    return combine(f, F_OR, a, b);
}

tecs_cond_t tecs_where_not(tecs_filter_t *f, tecs_cond_t a)
{
    return combine(f, F_NOT, a, a);
}

tecs_err_t tecs_filter_root(tecs_filter_t *f, tecs_cond_t c)
{
    if (f == NULL)
        return TECS_EINVAL;
    if (c < 0 || c >= f->n)
        return tecs__err(f->world, TECS_EINVAL, "bad condition handle");
    f->root = c;
    return TECS_OK;
}

tecs_err_t tecs_filter_order(tecs_filter_t *f, tecs_index_t *x, bool desc)
{
    if (f == NULL)
        return TECS_EINVAL;
    if (x == NULL) {
        f->order = -1;
        return TECS_OK;
    }
    if (index_by_id(f->world, x->id) != x)
        return tecs__err(f->world, TECS_EWORLD, "index of another world");
    if (x->d.kind != TECS_INDEX_ORDERED)
        return tecs__err(f->world, TECS_EINVAL, "key order needs an ordered index");
    f->order = x->id;
    f->desc = desc;
    return TECS_OK;
}

/* ---- filters: testing one entity -------------------------------------- */

static bool in_circle(const fnode *nd, uint64_t aux)
{
    float px, py;
    memcpy(&px, &aux, 4);
    memcpy(&py, (const char *)&aux + 4, 4);
    double dx = (double)px - nd->g[0], dy = (double)py - nd->g[1];
    return dx * dx + dy * dy <= (double)nd->g[2] * nd->g[2] && nd->g[2] >= 0;
}

static bool in_box(const fnode *nd, uint64_t aux)
{
    float px, py;
    memcpy(&px, &aux, 4);
    memcpy(&py, (const char *)&aux + 4, 4);
    return px >= nd->g[0] && px <= nd->g[2] && py >= nd->g[1] && py <= nd->g[3];
}

/* Is k one of the sorted keys of nd? */
static bool in_list(const tecs_filter_t *f, const tecs_index_t *x, const fnode *nd, uint64_t k)
{
    int32_t lo = 0, hi = nd->b;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        int c = kcmp(x, fkey(f, x, nd->a + mid), k);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* Does key k (with aux) satisfy leaf nd? */
static bool leaf_holds(const tecs_filter_t *f, const tecs_index_t *x, const fnode *nd,
                       uint64_t k, uint64_t aux)
{
    bool nan = x->cls == TECS_KEYC_REAL && k == NAN_KEY;
    int c = nd->b > 0 && nd->op <= F_BETWEEN ? kcmp(x, k, fkey(f, x, nd->a)) : 0;
    switch (nd->op) {
    case F_EQ: return c == 0;
    case F_NE: return c != 0;
    case F_LT: return c < 0;
    case F_LE: return c <= 0;
    case F_GT: return c > 0 && !nan;
    case F_GE: return c >= 0 && !nan;
    case F_BETWEEN: return c >= 0 && kcmp(x, k, fkey(f, x, nd->a + 1)) <= 0 && !nan;
    case F_IN: return in_list(f, x, nd, k);
    case F_RADIUS: return k != NOWHERE_CELL && in_circle(nd, aux);
    default: return k != NOWHERE_CELL && in_box(nd, aux);
    }
}

static bool test(const tecs_filter_t *f, int32_t c, tecs_entity_t e)
{
    const fnode *nd = &f->nodes[c];
    switch (nd->op) {
    case F_AND: return test(f, nd->a, e) && test(f, nd->b, e);
    case F_OR: return test(f, nd->a, e) || test(f, nd->b, e);
    case F_NOT: return !test(f, nd->a, e);
    default: break;
    }
    const tecs_index_t *x = registry(f->world)->by_id[nd->index];
    int32_t i = ent_find(x, e);
    return i >= 0 && leaf_holds(f, x, nd, x->ents[i].key, x->ents[i].aux);
}

/* Every index the filter names is alive and fresh. */
static tecs_err_t filter_ready(tecs_filter_t *f)
{
    if (f->err)
        return tecs__err(f->world, f->err, "the filter failed while being built");
    for (int32_t c = 0; c < f->n; c++) {
        if (f->nodes[c].op >= F_AND)
            continue;
        tecs_index_t *x = index_by_id(f->world, f->nodes[c].index);
        if (x == NULL)
            return tecs__err(f->world, TECS_ENOENT, "the filter names a freed index");
        if (refresh(x))
            return f->world->err;
    }
    if (f->order >= 0 && index_by_id(f->world, f->order) == NULL)
        return tecs__err(f->world, TECS_ENOENT, "the filter's order index was freed");
    return TECS_OK;
}

bool tecs_filter_test(tecs_filter_t *f, tecs_entity_t e)
{
    if (f == NULL || filter_ready(f) || tecs__ei_alive(f->world, e) == NULL)
        return false;
    return f->root < 0 || test(f, f->root, e);
}

/* ---- filters: collecting the matches ---------------------------------- */

/* An `or` guard: skip an entity that the left side `node` already took. */
/* Under an OR, a candidate of the left branch must pass it (`need`): a
** driver yields a superset of its node, and what the left branch skips the
** right one collects; a candidate of the right branch must fail the left
** one (!need), which had its turn. */
typedef struct guard {
    const struct guard *up;
    int32_t node;
    bool need;
} guard;

typedef struct walk {
    tecs_filter_t *f;
    tecs_query_t *q;
    snap *s;
    bool exact;                 /* the driver is the root: no re-test       */
    int32_t sorted_by;          /* index id whose key order the walk kept   */
    tecs_err_t err;
} walk;

/* The match of a in the query, remembering the last archetype. */
static int32_t snap_match(snap *s, tecs_query_t *q, tecs_archetype_t *a)
{
    if (a != s->la) {
        s->la = a;
        s->lm = tecs__query_find(q, a);
    }
    return s->lm;
}

static bool snap_push(walk *wk, uint64_t k, tecs_entity_t e)
{
    snap *s = wk->s;
    if (s->n + 1 > s->cap / 2 &&
        tecs__grow(wk->f->world, (void **)&s->v, &s->cap, 2 * (s->n + 1), sizeof *s->v)) {
        wk->err = TECS_ENOMEM;
        return false;
    }
    s->v[s->n++] = (okey){ k, e };
    return true;
}

/* A candidate from a driver: keep it if it passes guards, root, query. */
static void collect(walk *wk, const guard *g, tecs_entity_t e)
{
    if (wk->err)
        return;
    for (; g; g = g->up)
        if (test(wk->f, g->node, e) != g->need)
            return;
    if (!wk->exact && !test(wk->f, wk->f->root, e))
        return;
    tecs_world_t *w = wk->f->world;
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL || snap_match(wk->s, wk->q, tecs__rec_arch(w, r)) < 0)
        return;
    snap_push(wk, 0, e);
}

/* A key range of an ordered index. */
typedef struct range {
    bool has_lo, lo_excl, has_hi, hi_excl, stop_nan;
    uint64_t lo, hi;
} range;

static void walk_range(walk *wk, const guard *g, const tecs_index_t *x, range rg)
{
    int32_t bi = 0, i = 0;
    if (rg.has_lo) {
        uint32_t slot = rg.lo_excl ? UINT32_MAX : 0;
        bi = oblock(x, rg.lo, slot);
        i = bi < x->nblk ? oslot(x, x->blk[bi], rg.lo, slot) : 0;
    }
    for (; bi < x->nblk; bi++, i = 0) {
        const oblk *b = x->blk[bi];
        for (; i < b->n; i++) {
            uint64_t k = b->v[i].k;
            if (rg.has_hi) {
                int c = kcmp(x, k, rg.hi);
                if (c > 0 || (c == 0 && rg.hi_excl))
                    return;
            }
            if (rg.stop_nan && k == NAN_KEY)
                return;
            collect(wk, g, b->v[i].e);
        }
    }
}

static void drive_ordered(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd)
{
    const tecs_filter_t *f = wk->f;
    uint64_t k = nd->b > 0 ? fkey(f, x, nd->a) : 0;
    bool real = x->cls == TECS_KEYC_REAL;
    switch (nd->op) {
    case F_EQ: walk_range(wk, g, x, (range){ true, false, true, false, false, k, k }); return;
    case F_NE:
        walk_range(wk, g, x, (range){ false, false, true, true, false, 0, k });
        walk_range(wk, g, x, (range){ true, true, false, false, false, k, 0 });
        return;
    case F_LT: walk_range(wk, g, x, (range){ false, false, true, true, false, 0, k }); return;
    case F_LE: walk_range(wk, g, x, (range){ false, false, true, false, false, 0, k }); return;
    case F_GT: walk_range(wk, g, x, (range){ true, true, false, false, real, k, 0 }); return;
    case F_GE: walk_range(wk, g, x, (range){ true, false, false, false, real, k, 0 }); return;
    case F_BETWEEN: {
        uint64_t hi = fkey(f, x, nd->a + 1);
        if (kcmp(x, k, hi) <= 0)
            walk_range(wk, g, x, (range){ true, false, true, false, real, k, hi });
        return;
    }
    default:
        for (int32_t j = 0; j < nd->b; j++) {
            uint64_t kj = fkey(f, x, nd->a + j);
            walk_range(wk, g, x, (range){ true, false, true, false, false, kj, kj });
        }
    }
}

/* Walk one bucket chain for entries with key k that satisfy nd. */
static void walk_chain(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd,
                       uint64_t k)
{
    if (x->nbucket == 0)
        return;
    for (int32_t i = x->bucket[khash(x, k) & (uint32_t)(x->nbucket - 1)]; i >= 0;
         i = x->ents[i].next) {
        const ient *t = &x->ents[i];
        if (kcmp(x, t->key, k) == 0 && leaf_holds(wk->f, x, nd, t->key, t->aux))
            collect(wk, g, t->e);
    }
}

/* The cells a spatial leaf touches; false if it is empty. */
static bool leaf_cells(const tecs_index_t *x, const fnode *nd, int32_t c[4])
{
    float x0 = nd->g[0], y0 = nd->g[1], x1 = nd->g[2], y1 = nd->g[3];
    if (nd->op == F_RADIUS) {
        if (!(nd->g[2] >= 0) || nd->g[0] != nd->g[0] || nd->g[1] != nd->g[1])
            return false;
        x0 = nd->g[0] - nd->g[2], x1 = nd->g[0] + nd->g[2];
        y0 = nd->g[1] - nd->g[2], y1 = nd->g[1] + nd->g[2];
    }
    if (!(x0 <= x1) || !(y0 <= y1))
        return false;
    c[0] = cell_of(x0, x->d.cell_size), c[1] = cell_of(y0, x->d.cell_size);
    c[2] = cell_of(x1, x->d.cell_size), c[3] = cell_of(y1, x->d.cell_size);
    return true;
}

static void drive_spatial(walk *wk, const guard *g, const tecs_index_t *x, const fnode *nd)
{
    int32_t c[4];
    if (!leaf_cells(x, nd, c))
        return;
    int64_t cells = ((int64_t)c[2] - c[0] + 1) * ((int64_t)c[3] - c[1] + 1);
    if (cells > (int64_t)x->n) {
        for (int32_t i = 0; i < x->n && !wk->err; i++)
            if (leaf_holds(wk->f, x, nd, x->ents[i].key, x->ents[i].aux))
                collect(wk, g, x->ents[i].e);
        return;
    }
    for (int32_t cx = c[0]; cx <= c[2]; cx++)
        for (int32_t cy = c[1]; cy <= c[3]; cy++)
            walk_chain(wk, g, x, nd, cell_key(cx, cy));
}

static void drive_leaf(walk *wk, const guard *g, const fnode *nd)
{
    const tecs_index_t *x = registry(wk->f->world)->by_id[nd->index];
    if (x->d.kind == TECS_INDEX_ORDERED)
        drive_ordered(wk, g, x, nd);
    else if (x->d.kind == TECS_INDEX_SPATIAL)
        drive_spatial(wk, g, x, nd);
    else
        for (int32_t j = 0; j < nd->b; j++)
            walk_chain(wk, g, x, nd, fkey(wk->f, x, nd->a + j));
}

#define NO_DRIVE INT64_MAX

/* About how many candidates driving node c yields; NO_DRIVE if it cannot. */
static int64_t estimate(const tecs_filter_t *f, int32_t c)
{
    const fnode *nd = &f->nodes[c];
    if (nd->op == F_NOT)
        return NO_DRIVE;
    if (nd->op == F_AND || nd->op == F_OR) {
        int64_t a = estimate(f, nd->a), b = estimate(f, nd->b);
        if (nd->op == F_AND)
            return a < b ? a : b;
        return a == NO_DRIVE || b == NO_DRIVE ? NO_DRIVE : a + b;
    }
    const tecs_index_t *x = registry(f->world)->by_id[nd->index];
    if (x->d.kind == TECS_INDEX_HASH)
        return nd->b;
    if (x->d.kind == TECS_INDEX_SPATIAL) {
        int32_t cl[4];
        if (!leaf_cells(x, nd, cl))
            return 0;
        int64_t cells = ((int64_t)cl[2] - cl[0] + 1) * ((int64_t)cl[3] - cl[1] + 1);
        return cells < x->n ? cells : x->n;
    }
    if (nd->op == F_EQ || nd->op == F_IN)
        return nd->b;
    if (nd->op == F_NE)
        return x->n;
    return x->n / 2;            /* an open or closed range: half, by guess */
}

static void drive(walk *wk, const guard *g, int32_t c)
{
    const fnode *nd = &wk->f->nodes[c];
    if (nd->op == F_AND) {
        drive(wk, g, estimate(wk->f, nd->a) <= estimate(wk->f, nd->b) ? nd->a : nd->b);
    } else if (nd->op == F_OR) {
        drive(wk, &(guard){ g, nd->a, true }, nd->a);
        drive(wk, &(guard){ g, nd->a, false }, nd->b);
    } else {
        drive_leaf(wk, g, nd);
    }
}

/* The driving leaf when the walk keeps one index's key order, else -1. */
static int32_t single_driver(const tecs_filter_t *f, int32_t c)
{
    const fnode *nd = &f->nodes[c];
    if (nd->op == F_AND)
        return single_driver(f, estimate(f, nd->a) <= estimate(f, nd->b) ? nd->a : nd->b);
    if (nd->op == F_OR || nd->op == F_NOT)
        return -1;
    return nd->index;
}

/* No index can drive: test every row of the query, in its order. */
static void scan(walk *wk)
{
    tecs_world_t *w = wk->f->world;
    for (int32_t ai = 0; ai < w->narchs && !wk->err; ai++) {
        tecs_archetype_t *a = w->archs[ai];
        if (a->count == 0 || tecs__query_find(wk->q, a) < 0)
            continue;
        for (uint32_t row = 0; row < (uint32_t)a->count && !wk->err; row++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, row);
            if (wk->f->root < 0 || test(wk->f, wk->f->root, e))
                snap_push(wk, 0, e);
        }
    }
}

/* ---- filters: ordering the matches ------------------------------------ */

/* LSD radix sort of v[0..n) by k, 11 bits a pass, through tmp. */
static void radix_sort(okey *v, okey *tmp, int32_t n)
{
    uint64_t max = 0;
    for (int32_t i = 0; i < n; i++)
        max |= v[i].k;
    for (int shift = 0; shift < 64 && (max >> shift) != 0; shift += 11) {
        int32_t count[2049] = { 0 };
        for (int32_t i = 0; i < n; i++)
            count[((v[i].k >> shift) & 2047) + 1]++;
        for (int32_t d = 0; d < 2048; d++)
            count[d + 1] += count[d];
        for (int32_t i = 0; i < n; i++)
            tmp[count[(v[i].k >> shift) & 2047]++] = v[i];
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

/* Key order of index x: entities without a key last, ties by slot. */
static int by_key(const tecs_index_t *x, const okey *a, const okey *b)
{
    int32_t i = ent_find(x, a->e), j = ent_find(x, b->e);
    int c = (i < 0) - (j < 0);
    if (c == 0 && i >= 0)
        c = kcmp(x, x->ents[i].key, x->ents[j].key);
    if (c)
        return c;
    uint32_t sa = TECS_ENTITY_INDEX(a->e), sb = TECS_ENTITY_INDEX(b->e);
    return (sa > sb) - (sa < sb);
}

/* Archetype, chunk, row order. */
static void sort_rows(tecs_world_t *w, snap *s)
{
    for (int32_t i = 0; i < s->n; i++) {
        const tecs__record *r = tecs__ei_alive(w, s->v[i].e);
        s->v[i].k = (uint64_t)(r->arch & TECS__ARCH_MASK) << 32 | r->row;
    }
    if (s->n > 1)               /* (no array yet when empty: no NULL + 0) */
        radix_sort(s->v, s->v + s->n, s->n);
}

static void reverse(snap *s)
{
    for (int32_t i = 0, j = s->n - 1; i < j; i++, j--) {
        okey t = s->v[i];
        s->v[i] = s->v[j];
        s->v[j] = t;
    }
}

/* Collect the filter's matches among the query's entities, in order. */
static tecs_err_t gather(tecs_filter_t *f, tecs_query_t *q)
{
    walk wk = { f, q, &f->scr, false, -1, TECS_OK };
    f->scr.n = 0;
    f->scr.la = NULL;
    bool scanned = f->root < 0 || estimate(f, f->root) == NO_DRIVE;
    if (scanned) {
        scan(&wk);
    } else {
        wk.exact = f->nodes[f->root].op < F_AND;
        drive(&wk, NULL, f->root);
        wk.sorted_by = single_driver(f, f->root);
    }
    if (wk.err)
        return tecs__err(f->world, wk.err, "out of memory collecting matches");
    if (f->order >= 0) {
        if (scanned || wk.sorted_by != f->order)
            msort(f->scr.v, f->scr.v + f->scr.n, f->scr.n, by_key,
                  registry(f->world)->by_id[f->order]);
        if (f->desc)
            reverse(&f->scr);
    } else if (!scanned) {
        sort_rows(f->world, &f->scr);
    }
    return TECS_OK;
}

/* ---- filtered iteration ----------------------------------------------- */

/* The next run of consecutive rows (one chunk) of the snapshot. */
static bool snap_step(tecs_iter_t *it, bool fini)
{
    snap *s = it->priv_.src;
    if (fini) {
        s->busy = false;
        return false;
    }
    tecs_world_t *w = it->world;
    int32_t p = it->priv_.pos;
    const tecs__record *r = NULL;
    while (p < s->n && (r = tecs__ei_alive(w, s->v[p].e)) == NULL)
        p++;
    if (p >= s->n)
        return false;
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    uint32_t row = r->row;
    int32_t m = snap_match(s, it->priv_.query, a);
    int32_t n = 1;
    while (p + n < s->n && ((row + (uint32_t)n) & w->mask) != 0) {
        const tecs__record *rn = tecs__ei_alive(w, s->v[p + n].e);
        if (rn == NULL || rn->row != row + (uint32_t)n || tecs__rec_arch(w, rn) != a)
            break;
        n++;
    }
    it->priv_.pos = p + n;
    if (m < 0)
        return snap_step(it, false);
    tecs__iter_load_rows(it, m, a, row, n);
    return true;
}

/* Start an iteration of q that hands out the rows of snapshot s. */
static tecs_iter_t snap_iter(tecs_query_t *q, snap *s)
{
    tecs_iter_t it = tecs_query_iter(q);
    s->busy = true;
    s->la = NULL;
    it.priv_.src = s;
    it.priv_.step = snap_step;
    it.priv_.pos = 0;
    return it;
}

static tecs_err_t where_start(tecs_query_t *q, tecs_filter_t *f, tecs_iter_t *it)
{
    *it = tecs_query_iter(NULL);
    if (q == NULL)
        return TECS_EINVAL;
    tecs_world_t *w = tecs_query_world(q);
    if (f == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL filter");
    if (f->world != w)
        return tecs__err(w, TECS_EWORLD, "filter of another world");
    if (f->scr.busy)
        return tecs__err(w, TECS_EBUSY, "the filter is being iterated");
    tecs_err_t err = filter_ready(f);
    if (err || (err = gather(f, q)) != TECS_OK)
        return err;
    *it = snap_iter(q, &f->scr);
    return TECS_OK;
}

tecs_iter_t tecs_query_where(tecs_query_t *q, tecs_filter_t *f)
{
    tecs_iter_t it;
    where_start(q, f, &it);
    return it;
}

/* Per-entity calls over a started iteration (public API only). */
static void each_of(tecs_iter_t *it, tecs_query_t *q, tecs_each_fn fn, void *ctx)
{
    const tecs_term_t *terms;
    int32_t nterms = tecs_query_terms(q, &terms);
    size_t size[TECS_MAX_TERMS];
    for (int32_t t = 0; t < nterms; t++)
        size[t] = tecs_component_size(it->world, terms[t].comp);
    while (tecs_iter_next(it)) {
        for (int32_t i = 0; i < it->count; i++) {
            void *fields[TECS_MAX_TERMS];
            for (int32_t t = 0; t < nterms; t++)
                fields[t] = it->fields[t] ? (char *)it->fields[t] + (size_t)i * size[t] : NULL;
            if (fn(it->world, it->entities[i], fields, ctx)) {
                tecs_iter_fini(it);
                return;
            }
        }
    }
}

tecs_err_t tecs_query_where_each(tecs_query_t *q, tecs_filter_t *f, tecs_each_fn fn, void *ctx)
{
    if (q == NULL)
        return TECS_EINVAL;
    if (fn == NULL)
        return tecs__err(tecs_query_world(q), TECS_EINVAL, "NULL callback");
    tecs_iter_t it;
    tecs_err_t err = where_start(q, f, &it);
    if (err == TECS_OK)
        each_of(&it, q, fn, ctx);
    return err;
}

static int32_t collect_ids(tecs_iter_t *it, tecs_entity_t *out, int32_t cap)
{
    int32_t n = 0;
    while (tecs_iter_next(it))
        for (int32_t i = 0; i < it->count; i++, n++)
            if (n < cap)
                out[n] = it->entities[i];
    return n;
}

int32_t tecs_query_where_collect(tecs_query_t *q, tecs_filter_t *f, tecs_entity_t *out,
                                 int32_t cap)
{
    if (q == NULL)
        return -1;
    if (cap < 0 || (cap > 0 && out == NULL)) {
        tecs__err(tecs_query_world(q), TECS_EINVAL, "bad output array");
        return -1;
    }
    tecs_iter_t it;
    if (where_start(q, f, &it))
        return -1;
    return collect_ids(&it, out, cap);
}

/* ---- cached result sets ----------------------------------------------- */

struct tecs_cache_t {
    tecs_world_t *world;
    struct tecs_cache_t *next, *prev; /* the world's caches                 */
    tecs_query_t *q;
    tecs_filter_t *f;           /* own copy, or NULL                        */
    tecs_order_fn order;
    tecs_member_fn on_enter, on_leave;
    void *ctx;
    tecs_entity_t *ents;        /* the members, in the cache's order        */
    int32_t n, cap;
    int32_t *pos;               /* entity slot -> member + 1                */
    int32_t npos;
    bool stale;                 /* an allocation failed: rebuild on use     */
    snap scr;
    tecs_comp_t watched[TECS_MAX_TERMS]; /* components watched for order    */
    int32_t nwatched;
};

static bool caches_use(const tecs__indexes *r, int32_t id)
{
    for (const tecs_cache_t *c = r->caches; c; c = c->next) {
        const tecs_filter_t *f = c->f;
        for (int32_t i = 0; f && i < f->n; i++)
            if (f->nodes[i].op < F_AND && f->nodes[i].index == id)
                return true;
        if (f && f->order == id)
            return true;
    }
    return false;
}

static int32_t member(const tecs_cache_t *c, tecs_entity_t e)
{
    uint32_t slot = TECS_ENTITY_INDEX(e);
    if (slot >= (uint32_t)c->npos || c->pos[slot] == 0 || c->ents[c->pos[slot] - 1] != e)
        return -1;
    return c->pos[slot] - 1;
}

/* Does e belong in c now? */
static bool wants(const tecs_cache_t *c, tecs_entity_t e)
{
    tecs_world_t *w = c->world;
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL || tecs__query_find(c->q, tecs__rec_arch(w, r)) < 0)
        return false;
    return c->f == NULL || c->f->root < 0 || test(c->f, c->f->root, e);
}

static void renumber(tecs_cache_t *c, int32_t from, int32_t to)
{
    for (int32_t i = from; i < to; i++)
        c->pos[TECS_ENTITY_INDEX(c->ents[i])] = i + 1;
}

/* Where e goes in an ordered cache (binary search). */
static int32_t place(const tecs_cache_t *c, tecs_entity_t e)
{
    int32_t lo = 0, hi = c->n;
    while (lo < hi) {
        int32_t mid = (lo + hi) / 2;
        if (c->order(c->world, c->ents[mid], e, c->ctx) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Add e (room reserved). */
static void put(tecs_cache_t *c, tecs_entity_t e)
{
    int32_t i = c->order ? place(c, e) : c->n;
    memmove(c->ents + i + 1, c->ents + i, (size_t)(c->n - i) * sizeof *c->ents);
    c->ents[i] = e;
    c->n++;
    renumber(c, i, c->order ? c->n : i + 1);
}

static void take(tecs_cache_t *c, int32_t i)
{
    c->pos[TECS_ENTITY_INDEX(c->ents[i])] = 0;
    c->n--;
    if (c->order) {
        memmove(c->ents + i, c->ents + i + 1, (size_t)(c->n - i) * sizeof *c->ents);
        renumber(c, i, c->n);
    } else if (i < c->n) {
        c->ents[i] = c->ents[c->n];
        renumber(c, i, i + 1);
    }
}

static tecs_err_t cache_reserve(tecs_cache_t *c, int32_t n)
{
    tecs_world_t *w = c->world;
    if (tecs__grow(w, (void **)&c->ents, &c->cap, c->n + n, sizeof *c->ents))
        return TECS_ENOMEM;
    int32_t old = c->npos;
    if (w->nrecs > c->npos) {
        if (tecs__grow(w, (void **)&c->pos, &c->npos, w->nrecs, sizeof *c->pos))
            return TECS_ENOMEM;
        memset(c->pos + old, 0, (size_t)(c->npos - old) * sizeof *c->pos);
    }
    return TECS_OK;
}

/* Fill c from scratch, without callbacks. */
static tecs_err_t cache_fill(tecs_cache_t *c)
{
    tecs_world_t *w = c->world;
    c->n = 0;
    if (c->npos)
        memset(c->pos, 0, (size_t)c->npos * sizeof *c->pos);
    for (int32_t ai = 0; ai < w->narchs; ai++) {
        tecs_archetype_t *a = w->archs[ai];
        if (a->count == 0 || tecs__query_find(c->q, a) < 0)
            continue;
        if (cache_reserve(c, a->count))
            return TECS_ENOMEM;
        for (uint32_t row = 0; row < (uint32_t)a->count; row++) {
            tecs_entity_t e = *tecs__ent_ptr(a, w, row);
            if (wants(c, e))
                put(c, e);
        }
    }
    return TECS_OK;
}

/* Bring a stale cache back. */
static tecs_err_t cache_ready(tecs_cache_t *c)
{
    if (c->f && filter_ready(c->f))
        return c->world->err;
    if (!c->stale)
        return TECS_OK;
    if (cache_fill(c))
        return tecs__err(c->world, TECS_ENOMEM, "out of memory rebuilding a cache");
    c->stale = false;
    return TECS_OK;
}

/* Some index of the filter waits for a rebuild. */
static bool filter_dirty(const tecs_filter_t *f)
{
    for (int32_t i = 0; f && i < f->n; i++)
        if (f->nodes[i].op < F_AND && registry(f->world)->by_id[f->nodes[i].index]->dirty)
            return true;
    return false;
}

/* Re-decide e's membership (it is dying if `dying`); resort it if `moved`
** (an ordered value changed). */
static void cache_update(tecs_cache_t *c, tecs_entity_t e, bool moved, bool dying)
{
    if (c->stale || filter_dirty(c->f)) {
        c->stale = true;
        return;
    }
    bool want = !dying && wants(c, e);
    int32_t i = member(c, e);
    if (want && i >= 0 && moved && c->order) {
        take(c, i);
        put(c, e);
    } else if (want && i < 0) {
        if (cache_reserve(c, 1)) {
            c->stale = true;
            return;
        }
        put(c, e);
        if (c->on_enter)
            c->on_enter(c->world, e, c->ctx);
    } else if (!want && i >= 0) {
        take(c, i);
        if (c->on_leave)
            c->on_leave(c->world, e, c->ctx);
    }
}

/* Does an event on comp matter to c? */
static bool cache_cares(const tecs_cache_t *c, tecs_comp_t comp, bool *moved)
{
    *moved = false;
    for (int32_t i = 0; i < c->nwatched; i++)
        if (c->watched[i] == comp)
            *moved = true;
    if (*moved)
        return true;
    const tecs_filter_t *f = c->f;
    for (int32_t i = 0; f && i < f->n; i++)
        if (f->nodes[i].op < F_AND &&
            registry(f->world)->by_id[f->nodes[i].index]->d.comp == comp)
            return true;
    return false;
}

static void cache_on_move(tecs_world_t *w, void *ctx, tecs_entity_t e, tecs_archetype_t *from,
                          tecs_archetype_t *to)
{
    tecs__indexes *r = ctx;
    (void)w, (void)from;
    for (tecs_cache_t *c = r->caches; c; c = c->next)
        cache_update(c, e, false, to == NULL);
}

static void cache_on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t comp,
                          const void *ptr)
{
    tecs__indexes *r = ctx;
    (void)w, (void)ptr;
    for (tecs_cache_t *c = r->caches; c; c = c->next) {
        bool moved;
        if (cache_cares(c, comp, &moved))
            cache_update(c, e, moved && ev == TECS__EV_SET, false);
    }
}

static void cache_release(tecs_cache_t *c)
{
    tecs_world_t *w = c->world;
    tecs__indexes *r = registry(w);
    if (c->prev)
        c->prev->next = c->next;
    else if (r->caches == c)
        r->caches = c->next;
    if (c->next)
        c->next->prev = c->prev;
    for (int32_t i = 0; i < c->nwatched; i++)
        w->comps[c->watched[i]].watch--;
    if (c->f)
        filter_release(c->f);
    tecs__free(w, c->ents, (size_t)c->cap * sizeof *c->ents);
    tecs__free(w, c->pos, (size_t)c->npos * sizeof *c->pos);
    snap_free(w, &c->scr);
    tecs__free(w, c, sizeof *c);
}

/* A deep copy of f, linked in the world's filters. */
static tecs_filter_t *filter_clone(const tecs_filter_t *src)
{
    tecs_world_t *w = src->world;
    tecs_filter_t *f = tecs_filter_new(w);
    if (f == NULL)
        return NULL;
    if (tecs__grow(w, (void **)&f->nodes, &f->cap, src->n, sizeof *f->nodes) ||
        tecs__grow(w, (void **)&f->keys, &f->capkeys, src->nkeys, sizeof *f->keys) ||
        tecs__grow(w, (void **)&f->str, &f->capstr, src->nstr, 1)) {
        filter_release(f);
        tecs__err(w, TECS_ENOMEM, "out of memory copying a filter");
        return NULL;
    }
    if (src->n)
        memcpy(f->nodes, src->nodes, (size_t)src->n * sizeof *f->nodes);
    if (src->nkeys)
        memcpy(f->keys, src->keys, (size_t)src->nkeys * sizeof *f->keys);
    if (src->nstr)
        memcpy(f->str, src->str, (size_t)src->nstr);
    f->n = src->n, f->nkeys = src->nkeys, f->nstr = src->nstr;
    f->root = src->root, f->order = src->order, f->desc = src->desc;
    return f;
}

/* Watch the with-terms' components, so value changes reorder the cache. */
static void watch_terms(tecs_cache_t *c)
{
    const tecs_term_t *terms;
    int32_t n = tecs_query_terms(c->q, &terms);
    for (int32_t t = 0; t < n; t++) {
        if (terms[t].oper == TECS_NONE || tecs_component_size(c->world, terms[t].comp) == 0)
            continue;
        c->watched[c->nwatched++] = terms[t].comp;
        c->world->comps[terms[t].comp].watch++;
    }
}

static tecs_err_t cache_listen(tecs_world_t *w, tecs__indexes *r)
{
    if (r->cache_listening)
        return TECS_OK;
    tecs__listener l = { .on_move = cache_on_move, .on_comp = cache_on_comp, .ctx = r };
    if (tecs__listen(w, &l))
        return TECS_ENOMEM;
    r->cache_listening = true;
    return TECS_OK;
}

static tecs_err_t check_cache_desc(tecs_world_t *w, const tecs_cache_desc_t *d)
{
    if (d == NULL || d->query == NULL)
        return tecs__err(w, TECS_EINVAL, "a cache needs a query");
    if (tecs_query_world(d->query) != w || (d->filter && d->filter->world != w))
        return tecs__err(w, TECS_EWORLD, "query or filter of another world");
    if (d->filter && d->filter->err)
        return tecs__err(w, d->filter->err, "the filter failed while being built");
    return TECS_OK;
}

tecs_cache_t *tecs_cache_new(tecs_world_t *w, const tecs_cache_desc_t *d)
{
    if (w == NULL || check_cache_desc(w, d))
        return NULL;
    tecs__indexes *r = registry_get(w);
    tecs_cache_t *c = r && !cache_listen(w, r) ? tecs__alloc(w, sizeof *c) : NULL;
    if (c == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a cache");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    *c = (tecs_cache_t){ .world = w, .q = d->query, .order = d->order,
                         .on_enter = d->on_enter, .on_leave = d->on_leave, .ctx = d->ctx };
    c->next = r->caches;
    if (r->caches)
        r->caches->prev = c;
    r->caches = c;
    if ((d->filter && (c->f = filter_clone(d->filter)) == NULL) ||
        (c->f && filter_ready(c->f)) || cache_fill(c)) {
        if (w->err != TECS_ENOENT)
            tecs__err(w, TECS_ENOMEM, "out of memory creating a cache");
        cache_release(c);
        return NULL;
    }
    if (c->order)
        watch_terms(c);
    return c;
}

void tecs_cache_free(tecs_cache_t *c)
{
    if (c != NULL && !c->scr.busy)
        cache_release(c);
}

int32_t tecs_cache_count(tecs_cache_t *c)
{
    if (c == NULL || cache_ready(c))
        return 0;
    return c->n;
}

tecs_iter_t tecs_cache_iter(tecs_cache_t *c)
{
    if (c == NULL)
        return tecs_query_iter(NULL);
    tecs_world_t *w = c->world;
    if (c->scr.busy) {
        tecs__err(w, TECS_EBUSY, "the cache is being iterated");
        return tecs_query_iter(NULL);
    }
    if (cache_ready(c))
        return tecs_query_iter(NULL);
    if (c->scr.cap < c->n &&
        tecs__grow(w, (void **)&c->scr.v, &c->scr.cap, c->n, sizeof *c->scr.v)) {
        tecs__err(w, TECS_ENOMEM, "out of memory iterating a cache");
        return tecs_query_iter(NULL);
    }
    for (int32_t i = 0; i < c->n; i++)
        c->scr.v[i] = (okey){ 0, c->ents[i] };
    c->scr.n = c->n;
    return snap_iter(c->q, &c->scr);
}

int32_t tecs_cache_collect(tecs_cache_t *c, tecs_entity_t *out, int32_t cap)
{
    if (c == NULL)
        return -1;
    if (cap < 0 || (cap > 0 && out == NULL)) {
        tecs__err(c->world, TECS_EINVAL, "bad output array");
        return -1;
    }
    if (cache_ready(c))
        return -1;
    int32_t n = c->n < cap ? c->n : cap;
    if (n > 0)
        memcpy(out, c->ents, (size_t)n * sizeof *out);
    return c->n;
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
        if (w->defer_depth == 0 && kcmp(x, t->key, p.k) != 0)
            return bad(w, "stale key", x->id);
        if (is_hashed(x) && find_other(x, t->key, 0) == 0)
            return bad(w, "entry not in its bucket", x->id);
    }
    return TECS_OK;
}

static tecs_err_t check_blocks(tecs_index_t *x)
{
    int32_t total = 0;
    const okey *prev = NULL;
    for (int32_t bi = 0; bi < x->nblk; bi++) {
        const oblk *b = x->blk[bi];
        if (b->n < 1 || b->n > OB)
            return bad(x->world, "block size", x->id);
        for (int32_t i = 0; i < b->n; i++) {
            int32_t j = ent_find(x, b->v[i].e);
            if (j < 0 || x->ents[j].key != b->v[i].k)
                return bad(x->world, "block item without its entry", x->id);
            if (prev && ocmp(x, b->v[i].k, TECS_ENTITY_INDEX(b->v[i].e), prev) <= 0)
                return bad(x->world, "blocks out of order", x->id);
            prev = &b->v[i];
        }
        total += b->n;
    }
    return total == x->n ? TECS_OK : bad(x->world, "block items != entries", x->id);
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

tecs_err_t tecs__indexes_check(tecs_world_t *w)
{
    tecs__indexes *r = registry(w);
    for (int32_t id = 0; r && id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->dirty)
            continue;
        tecs_err_t err = check_entries(x);
        if (!err && !is_hashed(x))
            err = check_blocks(x);
        if (err)
            return err;
        if (holders(x) != x->n)
            return bad(w, "misses entities", id);
    }
    for (const tecs_cache_t *c = r ? r->caches : NULL; c; c = c->next) {
        if (c->stale || filter_dirty(c->f))
            continue;
        for (int32_t i = 0; i < c->n; i++)
            if (member(c, c->ents[i]) != i || !wants(c, c->ents[i]))
                return tecs__err(w, TECS_ECORRUPT, "cache holds a non-member");
        for (int32_t i = 1; c->order && i < c->n; i++)
            if (c->order(w, c->ents[i - 1], c->ents[i], c->ctx) > 0)
                return tecs__err(w, TECS_ECORRUPT, "cache out of order");
    }
    return TECS_OK;
}
