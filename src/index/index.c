/*
** index/index.c — the field index itself: its entry table, key encoding,
** upkeep from component events, the unique veto, new / free / count /
** lookup / near, verification; and the listeners through which the layers
** above (filters, caches) learn of indexes.
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
** puts it back when a raw write would duplicate a key), or x and y. On top
** of the table, a hash index chains the entries by key hash, a unique hash
** index keeps an open table (hash.c), an ordered index keeps a B+-tree
** (ordered.c), a spatial index keeps a copy of each point in its grid cell
** (grid.c; an entry's next names its point). This file calls those three;
** they call nothing here.
**
** An index over a relation's values (d.target: a pair's target, or
** TECS_WILDCARD for an exclusive relation's one pair) reads them through
** the values the relation add-on lends on the bus (tecs__values_of): its
** fill, its verification and its count of holders ask the add-on, and it
** hears only the relation's events and vetoes whose bus.target is its
** target (every one, for TECS_WILDCARD). A world reset empties it: the
** pairs go without events.
**
** Entities are stored by id, never by row, so archetype moves need nothing.
** The index listens to component events (entity.c): ADD inserts, SET
** re-keys, REMOVE erases. Before a change, the veto reserves room and, for
** a unique index, refuses a key another entity holds, so the world is
** never changed by a refused call. Should an allocation still fail inside
** an event (a string copy), the index marks itself dirty and is rebuilt
** from the archetypes before its next use: never stale as seen from outside.
**
** Bursts of re-keys are deferred the same way. Once more values of a
** non-unique index have been set since it was last used (a lookup, a
** count, a where) than a rebuild is worth (burst_limit), and no layer
** above needs it to follow every set (a cache does), the index marks
** itself dirty and stops listening to the component (sets of it cost what
** plain sets cost), and is rebuilt at its next use: the re-keys of a burst
** cost at most about what they would have cost one by one, and a mass
** update costs one rebuild. A unique index always follows at once: its
** veto must see every key.
**
** This file never calls the layers above (filter.c, cache.c) by name:
** each registers an index listener (tecs__index_listen), which is asked
** before an index is freed (a cache or an open iteration may still need
** it) and before an index sleeps through a burst, told when the world is
** freed (the layers above release first, the top one first), and asked to
** verify its own structures after the indexes are verified.
**
** Rows put in place without events (a snapshot load, a delta applied) are
** followed by tecs__indexes_rebuild: the layers above drop what they hold,
** every index is cleared and filled from the rows, then the layers above
** refill, the bottom one first, each reading the indexes below it.
*/
#include "internal.h"

/* ---- keys ------------------------------------------------------------- */

/* A key read from a value, not owned: k is the encoded key (for strings,
** the pointer of s), s a string or NULL. */
typedef struct probe {
    uint64_t k;
    uint64_t aux;
    char buf[TECS_MAX_KEY_CHARS + 1];
} probe;

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

/* The size bytes of the field at p, as they lie in memory, at the start of
** a zeroed word (a fixed-size copy per size: no library call). Only revert
** reads them, by copying them back: the word's value is never used, so the
** machine's byte order does not matter. */
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

/* ---- room ------------------------------------------------------------- */

/* Is there room for n more entries (and entities up to the world's slots
** + n)? The usual case, tested inline on every change. */
static inline bool has_room(const tecs_index_t *x, int32_t n)
{
    const tecs_world_t *w = x->world;
    int32_t need = x->n + n;
    return need <= x->cap && w->ei.nrecs + n <= x->npos &&
           (is_table(x)    ? (int64_t)need * 4 <= (int64_t)x->ntab * 3
            : is_hashed(x) ? (int64_t)need * 4 <= (int64_t)x->nbucket * 3
            : is_grid(x)   ? grid_has_room(x, n)
                           : x->npool >= pool_need(x) && w->ei.nrecs + n <= x->nlof);
}

/* Room for n more entries in the table and the entity map. */
static tecs_err_t ents_room(tecs_index_t *x, int32_t n)
{
    tecs_world_t *w = x->world;
    if (tecs__grow(w, (void **)&x->ents, &x->cap, x->n + n, sizeof *x->ents))
        return TECS_ENOMEM;
    int32_t slots = w->ei.nrecs + n, old = x->npos;
    if (slots > x->npos) {
        if (tecs__grow(w, (void **)&x->pos, &x->npos, slots, sizeof *x->pos))
            return TECS_ENOMEM;
        memset(x->pos + old, 0, (size_t)(x->npos - old) * sizeof *x->pos);
    }
    return TECS_OK;
}

/* Make room for n more entries (has_room was false). */
static TECS__NOINLINE tecs_err_t grow_room(tecs_index_t *x, int32_t n)
{
    if (ents_room(x, n))
        return TECS_ENOMEM;
    if (is_grid(x))
        return tecs__grid_grow(x, n);
    return is_hashed(x) ? tecs__hash_grow(x, x->n + n)
                        : tecs__ordered_grow(x, x->world->ei.nrecs + n);
}

/* Room for n more entries (and entities up to the world's slots + n), so
** that the next n inserts allocate nothing but string copies. */
static inline tecs_err_t reserve(tecs_index_t *x, int32_t n)
{
    return has_room(x, n) ? TECS_OK : grow_room(x, n);
}

/* ---- insert, erase, re-key -------------------------------------------- */

/* Add e with the key in p (room reserved), into the tree or the grid
** unless !tree (fill builds them after); false when out of memory. */
static bool ent_insert(tecs_index_t *x, tecs_entity_t e, const probe *p, bool tree)
{
    uint64_t k;
    if (!own_key(x, p->k, &k))
        return false;
    if (is_ordered(x) && tree && !tecs__ordered_insert(x, k, e)) {
        free_key(x, k);
        return false;
    }
    int32_t i = x->n++;
    x->ents[i] = (ient){ .key = k, .aux = p->aux, .e = e, .next = -1, .prev = -1 };
    x->pos[TECS_ENTITY_INDEX(e)] = i + 1;
    if (is_hashed(x)) {
        x->ents[i].h = khash(x, k);
        chain_link(x, i);
    } else if (is_grid(x) && tree) {
        tecs__grid_put(x, i);
    }
    return true;
}

static void ent_erase(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (is_hashed(x))
        chain_unlink(x, i);
    else if (is_grid(x))
        tecs__grid_del(x, i);
    else
        tecs__ordered_erase(x, t);
    free_key(x, t->key);
    x->pos[TECS_ENTITY_INDEX(t->e)] = 0;
    int32_t last = --x->n;
    if (i == last)
        return;
    x->ents[i] = x->ents[last];
    x->pos[TECS_ENTITY_INDEX(x->ents[i].e)] = i + 1;
    if (is_hashed(x))
        tecs__hash_moved(x, i);
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
    if (is_grid(x) && !grid_has_room(x, 1) && tecs__grid_grow(x, 1))
        return false;
    if (!own_key(x, p->k, &k))
        return false;
    if (is_hashed(x)) {
        chain_unlink(x, i);
    } else if (is_grid(x)) {
        tecs__grid_del(x, i);
    } else if (!tecs__ordered_rekey(x, t, k)) {
        free_key(x, k);
        return false;
    }
    free_key(x, t->key);
    t->key = k;
    t->aux = p->aux;
    if (is_hashed(x)) {
        t->h = khash(x, k);
        chain_link(x, i);
    } else if (is_grid(x)) {
        tecs__grid_put(x, i);
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
        if (is_grid(x) && x->ents[i].next >= 0) {     /* moved within its cell */
            gpoint *g = &x->pts[x->ents[i].next];
            memcpy(&g->x, &p.aux, sizeof g->x);
            memcpy(&g->y, (const char *)&p.aux + 4, sizeof g->y);
        }
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
    return is_hashed(x) ? tecs__hash_find_other(x, k, e) : tecs__ordered_find_other(x, k, e);
}

/* ---- building --------------------------------------------------------- */

static void clear(tecs_index_t *x)
{
    for (int32_t i = 0; i < x->n; i++)
        free_key(x, x->ents[i].key);
    tecs__ordered_clear(x);
    if (x->npos)
        memset(x->pos, 0, (size_t)x->npos * sizeof *x->pos);
    tecs__hash_clear(x);
    tecs__grid_clear(x);
    x->n = 0;
}

/* Is e, at this moment, losing x's component (w->store.leaving, entity.c)? Its
** REMOVE events are being raised and the one x needed has gone by. */
static bool leaving(const tecs_index_t *x, tecs_entity_t e)
{
    const tecs_world_t *w = x->world;
    return e == w->store.leaving &&
           (w->store.leaving_comp == 0 || w->store.leaving_comp == x->d.comp);
}

/* Add the entry of e, whose value is v, unless it is leaving x's
** component; into the tree too when tree. */
static tecs_err_t fill_one(tecs_index_t *x, bool tree, tecs_entity_t e, const void *v)
{
    tecs_world_t *w = x->world;
    probe p;
    read_probe(x, v, &p);
    if (TECS__UNLIKELY(w->store.leaving != 0) && leaving(x, e))
        return TECS_OK;
    if (tree && x->d.unique && !nan_key(x, p.k) && find_other(x, p.k, e))
        return tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": "
                         TECS__ENT_FMT " and " TECS__ENT_FMT " share a key",
                         TECS__COMP(w, x->d.comp), TECS__ENT(find_other(x, p.k, e)),
                         TECS__ENT(e));
    return ent_insert(x, e, &p, tree) ? TECS_OK : TECS_ENOMEM;
}

/* Room for n more entries of a fill; only in the table when the grid is
** laid out after (!tree). */
static tecs_err_t fill_room(tecs_index_t *x, int32_t n, bool tree)
{
    return is_grid(x) && !tree ? ents_room(x, n) : reserve(x, n);
}

/* fill_entries for values an add-on keeps outside rows (a relation's
** pairs): each entity's value of (comp, target), one by one. */
typedef struct kept_fill {
    tecs_index_t *x;
    bool tree;
} kept_fill;

static tecs_err_t fill_kept_one(void *ctx, tecs_entity_t e, const void *val)
{
    const kept_fill *f = ctx;
    return fill_one(f->x, f->tree, e, val);
}

static tecs_err_t fill_kept(tecs_index_t *x, bool tree, const tecs__values *v, void *ctx)
{
    tecs_world_t *w = x->world;
    int32_t n = v->count(w, ctx, x->d.comp, x->d.target);
    if (n == 0)
        return TECS_OK;
    if (fill_room(x, n, tree))
        return TECS_ENOMEM;
    return v->each(w, ctx, x->d.comp, x->d.target, fill_kept_one, &(kept_fill){ x, tree });
}

/* fill_entries for a sparse component: its set's members. */
static tecs_err_t fill_sparse(tecs_index_t *x, bool tree)
{
    tecs_world_t *w = x->world;
    tecs_comp_t c = x->d.comp;
    int32_t n = tecs__sparse_count(w, c);
    if (n == 0)
        return TECS_OK;
    if (fill_room(x, n, tree))
        return TECS_ENOMEM;
    const tecs_entity_t *ents = tecs__sparse_members(w, c);
    for (int32_t i = 0; i < n; i++) {
        tecs_err_t err = fill_one(x, tree, ents[i],
                                  tecs__sparse_get(w, c, TECS_ENTITY_INDEX(ents[i])));
        if (err)
            return err;
    }
    return TECS_OK;
}

/* Add an entry for every entity with x's component, but one that is
** leaving it; into the tree too when tree, else (ordered) the tree is built
** after. */
static tecs_err_t fill_entries(tecs_index_t *x, bool tree)
{
    tecs_world_t *w = x->world;
    void *ctx;
    const tecs__values *kept = x->d.target ? tecs__values_of(w, x->d.comp, &ctx) : NULL;
    if (kept)
        return fill_kept(x, tree, kept, ctx);
    if (tecs__comp_is_sparse(w, x->d.comp))
        return fill_sparse(x, tree);
    for (int32_t ai = 0; ai < w->arch.narchs; ai++) {
        tecs_archetype_t *a = w->arch.archs[ai];
        int32_t col = tecs__arch_col(a, x->d.comp);
        if (col < 0 || a->count == 0)
            continue;
        if (fill_room(x, a->count, tree))
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


/* Fill x from every archetype with its component (x is empty). */
static tecs_err_t fill(tecs_index_t *x)
{
    if (is_hashed(x))
        return fill_entries(x, true);
    tecs_err_t err = fill_entries(x, false);
    if (err)
        return err;
    return is_grid(x) ? tecs__grid_build(x) : tecs__ordered_build(x);
}

/* Count x in (by 1) or out of (by -1) the listeners of its component's
** events and vetoes, which calls on that component consult first. */
static void subscribe(tecs_index_t *x, int by)
{
    tecs__comp *ci = &x->world->comp.comps[x->d.comp];
    ci->watch = (uint32_t)((int64_t)ci->watch + by);
    ci->veto = (uint32_t)((int64_t)ci->veto + by);
    tecs__toghots_close(&x->world->arch);   /* toggles of it have events now */
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
    tecs__hash_compact(x);
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
    tecs__ordered_release(x);
    tecs__hash_release(x);
    tecs__grid_release(x);
    tecs__free(w, x->ents, (size_t)x->cap * sizeof *x->ents);
    tecs__free(w, x->pos, (size_t)x->npos * sizeof *x->pos);
    tecs__free(w, x, sizeof *x);
}

/* Is the event or veto on x's component about x's values? An index over
** a relation's values follows the pairs of its target (the bus names the
** pair's target), or of any target (TECS_WILDCARD); a component's, all. */
static inline bool about(const tecs_index_t *x, tecs_entity_t target)
{
    return x->d.target == 0 || x->d.target == (tecs_entity_t)TECS_WILDCARD ||
           x->d.target == target;
}

/* ---- the unique veto -------------------------------------------------- */

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
static tecs_err_t veto_one(tecs_index_t *x, int ev, tecs_entity_t e, const void *val)
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
static tecs_err_t veto_batch(tecs_index_t *x, const void *vals, int32_t n)
{
    tecs_world_t *w = x->world;
    if (vals == NULL)
        return n > 1 ? tecs__err(w, TECS_EEXIST, "unique index on " TECS__COMP_FMT ": %d "
                                 "births would share the default key",
                                 TECS__COMP(w, x->d.comp), n)
                     : veto_one(x, TECS__EV_ADD, 0, NULL);
    size_t size = w->comp.comps[x->d.comp].size;
    okey *v = tecs__alloc(w, tecs__bytes((uint64_t)n * 2, sizeof *v));
    if (v == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory checking unique keys");
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < n && !err; i++) {
        const char *val = (const char *)vals + (size_t)i * size;
        err = veto_one(x, TECS__EV_ADD, 0, val);
        probe p;
        read_probe(x, val, &p);
        v[i].k = x->d.type == TECS_KEY_CHARS ? (uint64_t)(uintptr_t)(val + x->d.offset) : p.k;
    }
    if (!err)                   /* a refused value leaves the rest unread */
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
        if (is_ordered(x))      /* the leaf the old key leaves */
            ofetch_all(x->lof[slot]);
        else if (is_grid(x) && t->next >= 0)    /* the point it holds */
            TECS__PREFETCH(&x->pts[t->next]);
    }
    if (vals == NULL || x->cls == TECS_KEYC_STR || is_grid(x))
        return;                 /* a point mostly stays in its cell */
    probe p;
    read_probe(x, vals, &p);
    if (is_table(x) && x->ntab > 0) {
        TECS__PREFETCH(&x->tab[khash(x, p.k) & (uint32_t)(x->ntab - 1)]);
    } else if (is_hashed(x) && x->nbucket > 0) {
        TECS__PREFETCH(&x->bucket[khash(x, p.k) & (uint32_t)(x->nbucket - 1)]);
    } else if (is_ordered(x)) {     /* the leaf the new key goes to */
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
    if (ev & TECS__EV_REMOVE)
        return TECS_OK;         /* a remove takes no key */
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c || (x->dirty && !x->d.unique) ||
            !about(x, w->bus.target))
            continue;           /* rebuilt at its next use: nothing to veto   */
        tecs_err_t err = x->dirty ? tecs__index_refresh(x) : TECS_OK;
        if (!err && reserve(x, n))
            err = tecs__err(w, TECS_ENOMEM, "out of memory growing " TECS__INDEX_FMT,
                            TECS__INDEX(x));
        if (err && (ev & TECS__EV_WRITTEN)) {
            x->dirty = true;    /* the write stands; rebuilt before next use */
            tecs__err_restore(w, outer);
            continue;
        }
        if (!err && (ev & TECS__EV_RESERVE))
            continue;           /* the keys are asked about later */
        if (!err && x->d.unique)
            err = n == 1 ? veto_one(x, ev, e, vals) : veto_batch(x, vals, n);
        if (err)
            return err;
        if (n == 1 && e != 0)
            warm(x, e, vals);
    }
    return TECS_OK;
}

/* ---- upkeep from component events ------------------------------------- */

/* SET events after which a burst of re-keys is left to a rebuild: about
** where a rebuild of the n entries costs what the re-keys had cost, so a
** burst never costs more than about twice the better of the two. A re-key
** costs a few cache misses (an erase and an insert down the tree, a
** chain unlink and link, or a point taken from one cell and put in
** another); a rebuild costs a fraction of that per entry, a smaller one
** for the ordered index, whose re-key walks a tree (n/16), than for a
** chained one or the grid (n/4). */
static inline int32_t burst_limit(const tecs_index_t *x)
{
    int32_t limit = is_ordered(x) ? x->n / 16 : x->n / 4;
    return limit > 64 ? limit : 64;
}

/* Does a layer above need index id to follow every set? */
static bool followed(const tecs__indexes *r, int32_t id)
{
    for (int32_t i = r->nlisteners - 1; i >= 0; i--)
        if (r->listeners[i]->follows && r->listeners[i]->follows(r, id))
            return true;
    return false;
}

static void on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                    const void *ptr)
{
    tecs__indexes *r = ctx;
    tecs_err_t outer = w->base.err;
    if (ev & (TECS__EV_ENABLE | TECS__EV_DISABLE))
        return;                 /* an index keeps disabled values too */
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->d.comp != c || x->dirty || !about(x, w->bus.target))
            continue;
        if (ev == TECS__EV_SET && !x->d.unique &&
            TECS__UNLIKELY(++x->sets > burst_limit(x))) {
            if (!followed(r, id)) {
                x->dirty = true;    /* a burst: rebuilt at the next use; */
                x->asleep = true;   /* until then its component's calls skip it */
                subscribe(x, -1);
                continue;
            }
            x->sets = 0;            /* a layer above needs every set: count anew */
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

/* ---- the registry and its listeners ----------------------------------- */

static void index_on_fini(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    for (int32_t i = r->nlisteners - 1; i >= 0; i--)
        if (r->listeners[i]->on_fini)
            r->listeners[i]->on_fini(r);
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id])
            index_release(r->by_id[id]);
    tecs__free(w, r->by_id, (size_t)r->cap * sizeof *r->by_id);
    tecs__free(w, r, sizeof *r);
    w->indexes = NULL;
}

static void refresh(tecs_world_t *w, void *ctx);
static tecs_err_t rows_replaced(tecs_world_t *w, void *ctx);
static tecs_err_t verify(tecs_world_t *w, void *ctx);

/* tecs_world_reset: the entities died with the events of their rows'
** components, while the values kept outside rows (a relation's pairs)
** went without any. The indexes over those are emptied, to be rebuilt
** (empty) at their next use. */
static void on_reset(tecs_world_t *w, void *ctx)
{
    (void)w;
    tecs__indexes *r = ctx;
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id] && r->by_id[id]->d.target) {
            clear(r->by_id[id]);
            r->by_id[id]->dirty = true;
        }
}

/* The registry, made and listened for on first use. */
tecs__indexes *tecs__index_registry(tecs_world_t *w)
{
    if (w->indexes)
        return w->indexes;
    tecs__listener l = { .on_comp = on_comp, .on_veto = on_veto, .on_fini = index_on_fini,
                         .before_workers = refresh, .on_rows_replaced = rows_replaced,
                         .verify = verify, .on_reset = on_reset };
    tecs__indexes *r = tecs__plug(w, sizeof *r, &l, "the index registry");
    if (r == NULL)
        return NULL;
    w->indexes = r;
    return r;
}

void tecs__index_listen(tecs__indexes *r, const tecs__index_listener *l)
{
    for (int32_t i = 0; i < r->nlisteners; i++)
        if (r->listeners[i] == l)
            return;
    assert(r->nlisteners < TECS__INDEX_LISTENERS);
    r->listeners[r->nlisteners++] = l;
}

/* ---- indexes: public -------------------------------------------------- */

/* The target: none for a component; for values an add-on keeps outside
** rows (a relation's pairs), one the add-on accepts. */
static tecs_err_t validate_target(tecs_world_t *w, const tecs_index_desc_t *d)
{
    void *ctx;
    const tecs__values *v = tecs__values_of(w, d->comp, &ctx);
    if (v == NULL && d->target != 0)
        return tecs__err(w, TECS_EINVAL, "an index on " TECS__COMP_FMT " has no target: only "
                         "an index over a relation's values names one", TECS__COMP(w, d->comp));
    if (v == NULL)
        return TECS_OK;
    if (d->target == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a relation: an index over its "
                         "values names the pairs' target (TECS_WILDCARD: an exclusive "
                         "relation's one pair)", TECS__COMP(w, d->comp));
    return v->indexable(w, ctx, d->comp, d->target);
}

static tecs_err_t index_validate_desc(tecs_world_t *w, const tecs_index_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL index description");
    const tecs__comp *ci = tecs__comp_get(w, d->comp);
    if (ci == NULL)
        return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", d->comp);
    if (validate_target(w, d))
        return w->base.err;
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

/* The key type of a field of type t (0: none can be a key). */
static const tecs_key_type_t key_of_type[] = {
    [TECS_TYPE_BOOL] = TECS_KEY_U8, [TECS_TYPE_I8] = TECS_KEY_I8,
    [TECS_TYPE_I16] = TECS_KEY_I16, [TECS_TYPE_I32] = TECS_KEY_I32,
    [TECS_TYPE_I64] = TECS_KEY_I64, [TECS_TYPE_U8] = TECS_KEY_U8,
    [TECS_TYPE_U16] = TECS_KEY_U16, [TECS_TYPE_U32] = TECS_KEY_U32,
    [TECS_TYPE_U64] = TECS_KEY_U64, [TECS_TYPE_F32] = TECS_KEY_FLOAT,
    [TECS_TYPE_F64] = TECS_KEY_DOUBLE, [TECS_TYPE_ENTITY] = TECS_KEY_U64,
    [TECS_TYPE_STRING] = TECS_KEY_STR, [TECS_TYPE_STRUCT] = 0,
};

/* The key type and offset of the field at path of d's component. */
static tecs_err_t key_of_field(tecs_world_t *w, const tecs_index_desc_t *d, const char *path,
                               tecs_key_type_t *type, size_t *offset)
{
    const tecs_field_t *f = tecs_component_field(w, d->comp, path, offset);
    if (f == NULL)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " has no field '%s' in its "
                         "description", TECS__COMP(w, d->comp), path);
    if (f->count != 1 || key_of_type[f->type] == 0)
        return tecs__err(w, TECS_EINVAL, "field '%s' of " TECS__COMP_FMT " is %s%s: it cannot "
                         "be a key", path, TECS__COMP(w, d->comp), f->count != 1 ? "an array of " : "",
                         tecs_type_name(f->type));
    *type = key_of_type[f->type];
    return TECS_OK;
}

/* *r: d with the fields it names (field, field_y) resolved through the
** component's description into type and offsets; the names are not kept. */
static tecs_err_t resolve_fields(tecs_world_t *w, const tecs_index_desc_t *d,
                                 tecs_index_desc_t *r)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL index description");
    *r = *d;
    r->field = r->field_y = NULL;
    if (d->field == NULL && d->field_y == NULL)
        return TECS_OK;
    if (d->field == NULL)
        return tecs__err(w, TECS_EINVAL, "field_y '%s' without field", d->field_y);
    if (d->type || d->offset || d->offset_y || d->size)
        return tecs__err(w, TECS_EINVAL, "field '%s': give a field by name, or type and "
                         "offset, not both", d->field);
    if (tecs__comp_get(w, d->comp) == NULL)
        return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", d->comp);
    if (tecs__comp_meta(w, d->comp) == NULL)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " has no description: field '%s' "
                         "cannot be found by name", TECS__COMP(w, d->comp), d->field);
    if (key_of_field(w, d, d->field, &r->type, &r->offset))
        return w->base.err;
    if (d->kind != TECS_INDEX_SPATIAL) {
        if (d->field_y)
            return tecs__err(w, TECS_EINVAL, "field_y '%s' is for a spatial index", d->field_y);
        return TECS_OK;
    }
    tecs_key_type_t ty;
    if (d->field_y == NULL)
        return tecs__err(w, TECS_EINVAL, "a spatial index by name needs field_y too");
    if (key_of_field(w, d, d->field_y, &ty, &r->offset_y))
        return w->base.err;
    if (ty != TECS_KEY_FLOAT)
        return tecs__err(w, TECS_EINVAL, "a spatial index takes float fields: field_y '%s' "
                         "is not one", d->field_y);
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

tecs_index_t *tecs_index_new(tecs_world_t *w, const tecs_index_desc_t *desc)
{
    tecs_index_desc_t rd;
    const tecs_index_desc_t *d = &rd;
    if (w == NULL || tecs__enter_object(w) || resolve_fields(w, desc, &rd) ||
        index_validate_desc(w, d))
        return NULL;
    tecs_index_t *x = tecs__index_registry(w) ? tecs__alloc(w, sizeof *x) : NULL;
    if (x == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating an index");
        return NULL;
    }
    memset(x, 0, sizeof *x);
    x->bfree = -1;
    x->world = w;
    x->d = *d;
    x->cls = class_of(d->type);
    x->int_table = x->cls == TECS_KEYC_INT && is_table(x);
    x->fsize = field_size(d);
    tecs_err_t err = fill(x);
    if (!err)
        tecs__hash_compact(x);
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
    for (int32_t i = r->nlisteners - 1; i >= 0; i--)
        if (r->listeners[i]->on_free && r->listeners[i]->on_free(r, x))
            return w->base.err;
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

/* tecs_index_lookup past its entry: the checks, the key's encoding, a
** rebuild the index waits for, the probe, the error of no match. */
static TECS__NOINLINE tecs_entity_t lookup_slow(tecs_index_t *x, tecs_key_t key)
{
    uint64_t k;
    if (!x->d.unique) {
        tecs__err(x->world, TECS_EINVAL, "tecs_index_lookup needs a unique index, not "
                  TECS__INDEX_FMT, TECS__INDEX(x));
        return 0;
    }
    if (key.cls == TECS_KEYC_INT && x->cls == TECS_KEYC_INT)
        k = enc_int(key.v.i);
    else if (!tecs__index_encode(x, key, &k))
        return 0;
    x->sets = 0;
    if (x->dirty && tecs__index_refresh(x))
        return 0;
    tecs_entity_t e = find_other(x, k, 0);
    if (e == 0)
        tecs__err(x->world, TECS_ENOENT, "no entity has this key in " TECS__INDEX_FMT,
                  TECS__INDEX(x));
    return e;
}

/* The common case, an integer key of a unique table with nothing to
** rebuild, found by the probe, is a leaf that calls nothing, so that the
** fetches of the cells of lookups made one after another overlap. */
tecs_entity_t tecs_index_lookup(tecs_index_t *x, tecs_key_t key)
{
    if (x == NULL || tecs__enter(x->world))
        return 0;
    if (TECS__LIKELY(key.cls == TECS_KEYC_INT && x->int_table && !x->dirty && x->ntab > 0)) {
        uint64_t k = enc_int(key.v.i);
        uint32_t mask = (uint32_t)x->ntab - 1;
        for (uint32_t i = mix(k) & mask; x->tab[i].e != 0; i = (i + 1) & mask)
            if (x->tab[i].k == k) {
                x->sets = 0;
                return x->tab[i].e;
            }
    }
    return lookup_slow(x, key);
}

/* ---- near: the points in a circle, read only -------------------------- */

/* Why tecs_index_near refuses its arguments, or NULL. */
static const char *near_refusal(const tecs_index_t *x, float px, float py, float r,
                                const tecs_entity_t *out, int32_t cap)
{
    if (x->d.kind != TECS_INDEX_SPATIAL)
        return "not a spatial index";
    const char *why = circle_refusal(px, py, r);
    if (why != NULL)
        return why;
    if (cap < 0 || (out == NULL && cap > 0))
        return cap < 0 ? "negative cap" : "out is NULL with cap > 0";
    return NULL;
}

/* Entity e at (px, py) into out (its point into xy, when not NULL) if it
** is in the circle g (x, y, r); n counts them all. */
static inline int32_t near_take(tecs_entity_t e, float px, float py, const float g[3],
                                tecs_entity_t *out, float *xy, int32_t cap, int32_t n)
{
    if (!in_circle_xy(px, py, g[0], g[1], g[2]))
        return n;
    if (n < cap) {
        out[n] = e;
        if (xy) {
            xy[2 * (size_t)n] = px;
            xy[2 * (size_t)n + 1] = py;
        }
    }
    return n + 1;
}

/* The points of cell c within the circle (cx, cy, r2: the squared
** radius) into out and, with_xy, xy, which have room for them all: each
** is written and kept by counting it or not, without a branch (its being
** in the circle is as good as random); their count. Inlined twice, with
** and without xy, so that neither loop tests xy. */
static TECS__INLINE int32_t near_cell(const tecs_index_t *x, const gcell *c, double cx,
                                      double cy, double r2, tecs_entity_t *out, float *xy,
                                      bool with_xy)
{
    const gpoint *pts = x->pts;
    const int32_t *bnext = x->bnext;
    size_t n = 0;                       /* an index: no widening per point */
    for (int32_t left = c->count, b = c->head, m = head_points(left); left > 0;
         left -= m, b = bnext[b], m = GB) {
        const gpoint *p = &pts[(size_t)b * GB];
        for (int32_t j = 0; j < m; j++) {
            float px = p[j].x, py = p[j].y;     /* read before out and xy are written */
            tecs_entity_t e = p[j].e;
            out[n] = e;
            if (with_xy) {
                xy[2 * n] = px;
                xy[2 * n + 1] = py;
            }
            n += circle_holds(px, py, cx, cy, r2);
        }
    }
    return (int32_t)n;
}

#define NEAR_ROWS 8              /* rows of cells whose distances are kept  */

/* The points of x in the circle g, in grid order: cells by x, then y, each
** cell's points in the order of its run; or, when the circle covers more
** cells than x has points, in entry order. It writes nothing but out and
** xy. */
static int32_t near_collect(const tecs_index_t *x, const float g[3], tecs_entity_t *out,
                            float *xy, int32_t cap)
{
    float cs = x->d.cell_size;
    int32_t span[4], n = 0;
    if (x->n == 0 || !circle_cells(cs, g[0], g[1], g[2], span))
        return 0;
    int32_t x0 = span[0], y0 = span[1], x1 = span[2], y1 = span[3];
    if (cell_count(span) > (int64_t)x->n) {
        for (int32_t i = 0; i < x->n; i++) {
            const ient *t = &x->ents[i];
            float px, py;
            memcpy(&px, &t->aux, 4);
            memcpy(&py, (const char *)&t->aux + 4, 4);
            if (t->key != NOWHERE_CELL)
                n = near_take(t->e, px, py, g, out, xy, cap, n);
        }
        return n;
    }
    double r2 = circle_r2(g[2]), dy2[NEAR_ROWS];
    bool rows = (int64_t)y1 - y0 < NEAR_ROWS;      /* their distances found once */
    for (int32_t cy = y0; rows && cy <= y1; cy++) {
        double dy = cell_gap(cy, cs, g[1]);
        dy2[cy - y0] = dy * dy;
    }
    for (int32_t cx = x0; cx <= x1; cx++) {
        double dx = cell_gap(cx, cs, g[0]), dx2 = dx * dx;
        for (int32_t cy = y0; cy <= y1; cy++) {
            double dy = rows ? 0 : cell_gap(cy, cs, g[1]);
            double d2 = dx2 + (rows ? dy2[cy - y0] : dy * dy);
            const gcell *c = d2 <= r2 ? grid_cell(x, cell_key(cx, cy)) : NULL;
            if (c == NULL)
                continue;
            if (c->count <= cap - n) {
                n += xy ? near_cell(x, c, g[0], g[1], r2, out + n, xy + 2 * (size_t)n, true)
                        : near_cell(x, c, g[0], g[1], r2, out + n, NULL, false);
                continue;
            }
            GRID_EACH_POINT(x, c, p)
                n = near_take(p->e, p->x, p->y, g, out, xy, cap, n);
        }
    }
    return n;
}

int32_t tecs_index_near_xy(tecs_index_t *x, float px, float py, float r, tecs_entity_t *out,
                           float *xy, int32_t cap)
{
    if (x == NULL)
        return -1;
    /* While workers run, the world is theirs to read: a worker (or a split
    ** part) records no error, and cannot rebuild a stale index. */
    bool worker = x->world->base.closed == TECS__PARALLEL;
    if (!worker && tecs__enter(x->world))
        return -1;
    const char *why = near_refusal(x, px, py, r, out, cap);
    if (why != NULL) {
        if (!worker)
            tecs__err(x->world, TECS_EINVAL, "tecs_index_near: %s (" TECS__INDEX_FMT ")", why,
                      TECS__INDEX(x));
        return -1;
    }
    if (worker ? x->dirty : tecs__index_refresh(x) != TECS_OK)
        return -1;
    return near_collect(x, (const float[3]){ px, py, r }, out, xy, cap);
}

int32_t tecs_index_near(tecs_index_t *x, float px, float py, float r, tecs_entity_t *out,
                        int32_t cap)
{
    return tecs_index_near_xy(x, px, py, r, out, NULL, cap);
}

/* Rebuild every index a burst (or a failed update) left stale: run before
** workers start, which read indexes and cannot rebuild them; an index
** that cannot be rebuilt (out of memory) stays stale, the last error as
** it was. */
static void refresh(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    tecs_err_t outer = w->base.err;
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id] && r->by_id[id]->dirty)
            tecs__index_refresh(r->by_id[id]);
    tecs__err_restore(w, outer);
}

/* Rebuild every index from the rows, then refill the layers above (see
** internal.h). Everything is dropped first, so that an error part way
** leaves nothing stale: what was not rebuilt is empty and dirty (stale). */
tecs_err_t tecs__indexes_rebuild(tecs_world_t *w)
{
    tecs__indexes *r = registry(w);
    if (r == NULL)
        return TECS_OK;
    for (int32_t i = 0; i < r->nlisteners; i++)
        if (r->listeners[i]->drop)
            r->listeners[i]->drop(r);
    for (int32_t id = 0; id < r->nids; id++)
        if (r->by_id[id]) {
            clear(r->by_id[id]);
            r->by_id[id]->dirty = true;
        }
    for (int32_t id = 0; id < r->nids; id++) {
        tecs_err_t err = r->by_id[id] ? tecs__index_refresh(r->by_id[id]) : TECS_OK;
        if (err)
            return err;
    }
    for (int32_t i = 0; i < r->nlisteners; i++) {
        tecs_err_t err = r->listeners[i]->refill ? r->listeners[i]->refill(r, w) : TECS_OK;
        if (err)
            return err;
    }
    return TECS_OK;
}

/* The bus's news that rows were replaced without events (a snapshot). */
static tecs_err_t rows_replaced(tecs_world_t *w, void *ctx)
{
    (void)ctx;
    return tecs__indexes_rebuild(w);
}

/* ---- verification ----------------------------------------------------- */

/* The value of x's component of e, or NULL if e is dead or lacks it. */
static const void *index_value_of(const tecs_index_t *x, tecs_entity_t e)
{
    tecs_world_t *w = x->world;
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        return NULL;
    void *ctx;
    const tecs__values *kept = x->d.target ? tecs__values_of(w, x->d.comp, &ctx) : NULL;
    if (kept)
        return kept->value(w, ctx, x->d.comp, e, x->d.target);
    if (tecs__comp_is_sparse(w, x->d.comp))
        return tecs__sparse_get(w, x->d.comp, TECS_ENTITY_INDEX(e));
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t col = tecs__arch_col(a, x->d.comp);
    return col >= 0 ? tecs__col_ptr(a, w, col, r->row) : NULL;
}

/* Every entry names a live entity holding the component with that key. */
static tecs_err_t verify_entries(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    for (int32_t i = 0; i < x->n; i++) {
        const ient *t = &x->ents[i];
        if (ent_find(x, t->e) != i)
            return corrupt(w, "entity map disagrees", x->id);
        const void *v = index_value_of(x, t->e);
        if (v == NULL)
            return corrupt(w, "entry for an entity without the component", x->id);
        /* Inside an iteration, rows written through a write term are
        ** re-keyed when the iterator leaves them: not stale yet. */
        probe p;
        read_probe(x, v, &p);
        if (w->base.defer_depth == 0 && kcmp(x, t->key, p.k) != 0)
            return corrupt(w, "stale key", x->id);
        bool tabled = !(is_table(x) && nan_key(x, t->key));
        if (is_hashed(x) && tabled && find_other(x, t->key, 0) == 0)
            return corrupt(w, "entry not in its bucket", x->id);
    }
    return TECS_OK;
}

/* Count the entities that have x's component. */
static int32_t holders(const tecs_index_t *x)
{
    const tecs_world_t *w = x->world;
    void *ctx;
    const tecs__values *kept = x->d.target ? tecs__values_of(w, x->d.comp, &ctx) : NULL;
    if (kept)
        return kept->count(w, ctx, x->d.comp, x->d.target);
    int32_t n = tecs__comp_is_sparse(w, x->d.comp) ? tecs__sparse_count(w, x->d.comp) : 0;
    for (int32_t ai = 0; ai < w->arch.narchs; ai++)
        if (tecs__arch_col(w->arch.archs[ai], x->d.comp) >= 0)
            n += w->arch.archs[ai]->count;
    return n;
}

/* Each component's veto count holds its indexes that are awake (the
** relation add-on counts its relations there too); an index asleep is
** dirty and not unique. */
static tecs_err_t verify_subscriptions(tecs_world_t *w, const tecs__indexes *r)
{
    for (int32_t c = 1; c < w->comp.cap_comps; c++) {
        uint32_t awake = 0;
        for (int32_t id = 0; r && id < r->nids; id++) {
            const tecs_index_t *x = r->by_id[id];
            if (x && x->d.comp == (tecs_comp_t)c) {
                if (x->asleep && (!x->dirty || x->d.unique))
                    return corrupt(w, "asleep but clean or unique", id);
                awake += !x->asleep;
            }
        }
        if (w->comp.comps[c].veto < awake)
            return tecs__err(w, TECS_ECORRUPT, "component %d: veto count off", c);
    }
    return TECS_OK;
}

/* Verify every index against one rebuilt from scratch (tecs_world_check). */
static tecs_err_t verify(tecs_world_t *w, void *ctx)
{
    tecs__indexes *r = ctx;
    tecs_err_t err0 = verify_subscriptions(w, r);
    if (err0)
        return err0;
    for (int32_t id = 0; r && id < r->nids; id++) {
        tecs_index_t *x = r->by_id[id];
        if (x == NULL || x->dirty)
            continue;
        tecs_err_t err = verify_entries(x);
        if (!err)
            err = is_grid(x)     ? tecs__grid_verify(x)
                  : is_hashed(x) ? tecs__hash_verify(x) : tecs__ordered_verify(x);
        if (err)
            return err;
        if (holders(x) != x->n)
            return corrupt(w, "misses entities", id);
    }
    for (int32_t i = 0; r && i < r->nlisteners; i++) {
        err0 = r->listeners[i]->verify ? r->listeners[i]->verify(r, w) : TECS_OK;
        if (err0)
            return err0;
    }
    return TECS_OK;
}
