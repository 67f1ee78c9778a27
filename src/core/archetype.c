/*
** archetype.c — archetypes: the set of them, their chunks, their edges.
**
** An archetype is one set of components. Every entity with exactly that set
** lives in one of its rows. Rows are grouped in chunks of `rows` rows (a
** power of two); a chunk's data is column by column, each column 64-byte
** aligned (col_off, chunk_bytes: the layout of one chunk alone).
**
** Chunks are allocated in groups: each growth makes one block for its g
** chunks, laid out column by column across the group:
**
**     group of g chunks (64-byte aligned block)
**     +--------------------------------------+  0
**     | entity ids: chunk 0 | chunk 1 | ...  |  g * R ids
**     +--------------------------------------+  g * col_off[0]
**     | comp A:     chunk 0 | chunk 1 | ...  |  g * R values
**     +--------------------------------------+  g * col_off[1]
**     | comp B:     chunk 0 | chunk 1 | ...  |
**     +--------------------------------------+  g * chunk_bytes
**
** So a column of consecutive chunks is one run of memory, and a loop over
** the chunks in order streams through it the way it would through one array
** (the hardware prefetcher does not restart at each chunk). Rows arriving
** one at a time get the same: a growth at least doubles the archetype's
** chunks (g is at least the chunks it has; a bulk birth or a batch of
** delayed births that needs more gets exactly what it needs), so the rows
** of n chunks lie in about log2(n) runs, whichever way they came.
** The memory rule: as it grows, an archetype holds at most twice the chunks
** its rows use (tecs_archetype_reserve excepted: it holds what was asked
** for); as rows leave, the trim gives groups back once the rows and the
** spare need at most a quarter of the chunks, so it holds fewer than four
** times its used chunks and the spare, and one chunk once empty. Growth
** never moves a row (a value's pointer stays valid until an entity leaves
** the archetype); only the trim does, during a removal. Chunk k
** records its group's base, g, and its first row in the group; row r of the
** archetype lives in chunk r >> shift at index r & mask, and its value of
** column c is at base + g * col_off[c] + (first + (r & mask)) * col_size[c].
** That start of each column of each chunk is kept ready in a table of column
** pointers, stride = 1 + ncols + ntog a chunk, in the block after the chunk
** entries:
**
**     chunks: [chunk 0][chunk 1] ... [chunk cap-1]
**     cols:   [ids0 A0 B0][ids1 A1 B1] ... (cap * stride pointers)
**
** so a value is cols[k * stride + 1 + c] + (r & mask) * col_size[c]: the
** moves between archetypes, which touch every column of two rows, do one
** load and one multiply a column.
** An enableable component (component.c) also has a bit column: a bit a row,
** set while the component is disabled on that row's entity, laid out after
** the value columns (tog_off, tog_bytes a chunk) and reached through the same
** table, at cols[k * stride + 1 + ncols + j]. The bits travel with their
** row (a move, a hole fill); rows not in use have every bit clear; and
** ndisabled[j] counts the set bits of column j, so that iteration skips the
** bit test where nothing is disabled.
** Change detection keeps ticks (the world's tick, arch.tick, when it
** happened): in the chunk table, after the column pointers, one per column
** and chunk for the last write to it; in each chunk entry, the last row
** that entered the chunk (a birth, a move in, a hole fill, an enable or a
** disable). A component with row_ticks also has a tick column in the chunk
** layout, after the bit columns (rt_off): a changed and an added tick per
** row, reached at cols[k * stride + 1 + ncols + ntog + j], travelling with
** its row like the bits.
** A group counts as g chunks allocated one by one (g * (chunk_bytes + 63)
** bytes), so memory accounting does not depend on how chunks were grouped.
**
** Invariants:
**   - rows 0 .. count-1 are in use, with no hole: removing a row moves the
**     last row into it (swap-remove), so chunks stay dense;
**   - chunks are allocated on demand, a group at least as large as the
**     chunks already there; nchunks is always the end of a group;
**   - once the rows and the spare chunk (the one after the last used one)
**     need at most a quarter of the chunks, or no row is left, every group
**     wholly past the spare is freed, and a group that straddles the spare
**     is replaced by a smaller one holding its used chunks and the spare if
**     that frees at least three times as many chunks as it keeps, or the
**     group holds no row in use (its rows move then, during a removal from
**     the archetype, as the last row already does on every removal); so a
**     shrinking world gives memory back, rows coming and going across one
**     count neither allocate nor free, and an archetype holds fewer than
**     four times the chunks its rows need and the spare;
**   - cmap[c] is the column of component c, COL_TAG for a tag, COL_ABSENT
**     for any other id below cmap_len;
**   - each archetype is in the world's hash table under the hash of its
**     sorted ids, exactly once.
**
** Edges cache the archetype reached by adding or removing one component:
** edge_add[c] / edge_rem[c], indexed by component id and grown on demand. The
** first move of a kind hashes; every later one is an array load.
**
** Lookup tables (tecs__lut) serve tecs_handle_get, which reads them inline in
** the user's code: per looked-up component, by archetype id, the address of
** the component's column pointer of chunk 0 in the chunk table, its stride
** and value size. A table always covers every archetype (room is reserved
** with the archetype's, luts_put fills its entry once it is made,
** luts_forget drops it with it), and holds pointers into chunk tables, so
** every place that moves or frees a chunk table calls lut_sync: a table
** never points at freed memory and a handle never goes stale. A table's
** hot entry copies one archetype's entry and adds the run of its first
** chunk group (group 0's chunks hold their column as one run of memory), so
** that a lookup of it needs neither the entry nor the chunk table, and
** points at the archetype's row count and its first id, from which a
** lookup guesses an id's row before its slot arrives: lut_sync also runs
** when group 0 is set, and hands the hot place to an archetype whose chunk
** table outgrows the hot one's.
**
** Toggle handles' short paths (tecs__toghot) serve tecs_handle_enable, which
** writes through them inline: per handled enableable component, one chunk
** of one archetype and its bit words, opened by tecs__handle_enable
** (entity.c) on a chunk entered at the world's tick. A toggle through it
** neither stamps nor counts, so it is closed wherever that would matter or
** its bits could move: when the tick moves on (tecs__arch_tick_next),
** when a group of its archetype is set, freed or replaced (toghots_leave),
** and when something starts to listen to the component (observer.c, the
** index layer). A bit column it was open on stays loose (tog_loose): its
** count is the bits' (tecs__arch_ndisabled), not ndisabled, until the
** archetype is cleared.
**
** A new archetype is announced on the bus (on_archetype): queries, caches
** and indexes take it in whole or refuse it, and a refusal undoes it. This
** layer also validates what a user passes for an archetype: the handle
** (tecs__arch_validate) and a value list against it
** (tecs__arch_validate_vals).
**
** Calls: base.c, component.c (hooks of moved and destroyed values),
** event.c (the listener list).
*/
#include "private.h"

static void lut_sync(tecs_world_t *w, const tecs_archetype_t *a);
static tecs_err_t luts_reserve(tecs_world_t *w, int32_t n);
static void luts_put(tecs_world_t *w, const tecs_archetype_t *a);
static void luts_forget(tecs_world_t *w, uint32_t id);
static void toghots_leave(tecs_world_t *w, const tecs_archetype_t *a);

static uint32_t hash_ids(int32_t n, const tecs_comp_t *ids)
{
    uint32_t h = 2166136261u;
    for (int32_t i = 0; i < n; i++) {
        h ^= ids[i];
        h *= 16777619u;
    }
    h ^= h >> 15;
    return h * 0x2c1b3c6du;
}

static bool same_ids(const tecs_archetype_t *a, int32_t n, const tecs_comp_t *ids)
{
    return a->ncomps == n && (n == 0 || memcmp(a->comps, ids, (size_t)n * sizeof *ids) == 0);
}

static tecs_archetype_t *table_find(const tecs_world_t *w, uint32_t h, int32_t n,
                                    const tecs_comp_t *ids)
{
    if (w->arch.arch_table_cap == 0)
        return NULL;
    uint32_t m = w->arch.arch_table_cap - 1;
    for (uint32_t i = h & m;; i = (i + 1) & m) {
        uint32_t slot = w->arch.arch_table[i];
        if (slot == 0)
            return NULL;
        tecs_archetype_t *a = w->arch.archs[slot - 1];
        if (a->hash == h && same_ids(a, n, ids))
            return a;
    }
}

static void table_put(tecs_world_t *w, const tecs_archetype_t *a)
{
    uint32_t m = w->arch.arch_table_cap - 1;
    uint32_t i = a->hash & m;
    while (w->arch.arch_table[i] != 0)
        i = (i + 1) & m;
    w->arch.arch_table[i] = a->id + 1;
}

/* Keep the table at most half full for one more archetype. */
static tecs_err_t table_grow(tecs_world_t *w)
{
    if ((uint32_t)(w->arch.narchs + 1) * 2 <= w->arch.arch_table_cap)
        return TECS_OK;
    uint32_t ncap = w->arch.arch_table_cap ? w->arch.arch_table_cap * 2 : 64;
    uint32_t *t = tecs__alloc(w, ncap * sizeof *t);
    if (t == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory growing the archetype table");
    memset(t, 0, ncap * sizeof *t);
    tecs__free(w, w->arch.arch_table, w->arch.arch_table_cap * sizeof *t);
    w->arch.arch_table = t;
    w->arch.arch_table_cap = ncap;
    for (int32_t i = 0; i < w->arch.narchs; i++)
        table_put(w, w->arch.archs[i]);
    return TECS_OK;
}

/* ---- creation -------------------------------------------------------- */

static size_t round8(size_t x)
{
    return (x + 7) & ~(size_t)7;
}

/* Bytes of the block holding the archetype and its fixed arrays. */
static size_t arch_block_size(int32_t n, int32_t cmap_len, int32_t ncols, int32_t ntog,
                              int32_t nrt)
{
    return round8(sizeof(tecs_archetype_t)) + round8((size_t)n * sizeof(tecs_comp_t)) +
           round8((size_t)cmap_len * sizeof(int16_t)) +
           round8((size_t)ncols * sizeof(tecs_comp_t)) +
           2 * round8((size_t)ncols * sizeof(uint32_t)) +
           round8((size_t)ntog * sizeof(tecs_comp_t)) + round8((size_t)ntog * sizeof(int32_t)) +
           round8((size_t)nrt * sizeof(tecs_comp_t));
}

static size_t arch_size(const tecs_archetype_t *a)
{
    return arch_block_size(a->ncomps, a->cmap_len, a->ncols, a->ntog, a->nrt);
}

/* Carve the fixed arrays out of the block after the struct. */
static void arch_carve(tecs_archetype_t *a)
{
    char *p = (char *)a + round8(sizeof *a);
    a->comps = (tecs_comp_t *)(void *)p;
    p += round8((size_t)a->ncomps * sizeof(tecs_comp_t));
    a->cmap = (int16_t *)(void *)p;
    p += round8((size_t)a->cmap_len * sizeof(int16_t));
    a->col_comp = (tecs_comp_t *)(void *)p;
    p += round8((size_t)a->ncols * sizeof(tecs_comp_t));
    a->col_size = (uint32_t *)(void *)p;
    p += round8((size_t)a->ncols * sizeof(uint32_t));
    a->col_off = (uint32_t *)(void *)p;
    p += round8((size_t)a->ncols * sizeof(uint32_t));
    a->tog_comp = (tecs_comp_t *)(void *)p;
    p += round8((size_t)a->ntog * sizeof(tecs_comp_t));
    a->ndisabled = (int32_t *)(void *)p;
    p += round8((size_t)a->ntog * sizeof(int32_t));
    a->rt_comp = (tecs_comp_t *)(void *)p;
}

/* Refuse an archetype whose chunk would pass the byte budget, naming its
** largest component. */
static void refuse_fat(tecs_world_t *w, const tecs_archetype_t *a)
{
    uint64_t row = sizeof(tecs_entity_t);
    tecs_comp_t big = 0;
    for (int32_t i = 0; i < a->ncomps; i++) {
        const tecs__comp *ci = tecs__comp_get(w, a->comps[i]);
        row += ci->size;
        if (big == 0 || ci->size > w->comp.comps[big].size)
            big = a->comps[i];
    }
    tecs__err(w, TECS_ELIMIT, "a row of %llu bytes ('%s' has %u) times %u rows per chunk "
              "passes the chunk budget of %d MiB", (unsigned long long)row,
              w->comp.comps[big].name, w->comp.comps[big].size, w->arch.rows,
              TECS_MAX_CHUNK_BYTES >> 20);
}

/* Lay the columns out in a chunk; false if a chunk would pass the budget,
** TECS_MAX_CHUNK_BYTES (the rows of a chunk are the world's, so fat rows are
** refused rather than given fewer rows: row -> chunk arithmetic stays one
** shift everywhere). */
static bool arch_layout(tecs_world_t *w, tecs_archetype_t *a)
{
    uint64_t off = (uint64_t)w->arch.rows * sizeof(tecs_entity_t);
    int32_t col = 0, tog = 0, rt = 0;
    bool plain = true;
    for (int32_t i = 0; i < a->ncomps; i++) {
        const tecs__comp *ci = tecs__comp_get(w, a->comps[i]);
        if (ci->enableable)
            a->tog_comp[tog++] = a->comps[i];
        if (ci->row_ticks)
            a->rt_comp[rt++] = a->comps[i];
        a->hidden = a->hidden || ci->hidden;
        if (ci->size == 0) {
            a->cmap[a->comps[i]] = TECS__COL_TAG;
            continue;
        }
        off = (off + TECS_MAX_ALIGN - 1) & ~(uint64_t)(TECS_MAX_ALIGN - 1);
        a->cmap[a->comps[i]] = (int16_t)col;
        a->col_comp[col] = a->comps[i];
        a->col_size[col] = ci->size;
        a->col_off[col] = (uint32_t)off;
        plain = plain && !ci->ctor && !ci->dtor && !ci->copy && !ci->move;
        off += (uint64_t)w->arch.rows * ci->size;
        if (off > TECS_MAX_CHUNK_BYTES)
            return false;
        col++;
    }
    off = (off + TECS_MAX_ALIGN - 1) & ~(uint64_t)(TECS_MAX_ALIGN - 1);
    /* The bit columns: a bit a row, whole 64-bit words. */
    a->tog_off = (uint32_t)off;
    a->tog_bytes = ((w->arch.rows + 63) / 64) * 8;
    off += (uint64_t)a->ntog * a->tog_bytes;
    off = (off + TECS_MAX_ALIGN - 1) & ~(uint64_t)(TECS_MAX_ALIGN - 1);
    /* The tick columns: two ticks a row. */
    a->rt_off = (uint32_t)off;
    off += (uint64_t)a->nrt * 2 * w->arch.rows * sizeof(uint64_t);
    if (off > TECS_MAX_CHUNK_BYTES)
        return false;
    a->chunk_bytes = (uint32_t)off;
    a->plain = plain;
    a->bare = plain && a->ntog == 0 && a->nrt == 0;
    return true;
}

static void arch_destroy(tecs_world_t *w, tecs_archetype_t *a);

/* Tell the listeners; undo for those told already if one fails. */
static tecs_err_t arch_announce(tecs_world_t *w, tecs_archetype_t *a)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++) {
        const tecs__listener *l = &w->bus.listeners[i];
        if (l->on_archetype == NULL || l->on_archetype(w, l->ctx, a) == TECS_OK)
            continue;
        for (int32_t j = 0; j < i; j++)
            if (w->bus.listeners[j].on_archetype_undo)
                w->bus.listeners[j].on_archetype_undo(w, w->bus.listeners[j].ctx, a);
        return w->base.err;
    }
    return TECS_OK;
}

static tecs_archetype_t *arch_create(tecs_world_t *w, uint32_t h, int32_t n,
                                     const tecs_comp_t *ids)
{
    if (w->arch.narchs >= w->arch.max_archetypes) {
        tecs__err(w, TECS_ELIMIT, "archetype limit (%d) reached", w->arch.max_archetypes);
        return NULL;
    }
    int32_t ncols = 0, ntog = 0, nrt = 0;
    for (int32_t i = 0; i < n; i++) {
        ncols += tecs__comp_get(w, ids[i])->size > 0;
        ntog += tecs__comp_get(w, ids[i])->enableable;
        nrt += tecs__comp_get(w, ids[i])->row_ticks;
    }
    int32_t cmap_len = n ? (int32_t)ids[n - 1] + 1 : 0;
    if (tecs__grow(w, (void **)&w->arch.archs, &w->arch.cap_archs, w->arch.narchs + 1,
                   sizeof *w->arch.archs) ||
        table_grow(w) || luts_reserve(w, w->arch.narchs + 1))
        return NULL;
    size_t bytes = arch_block_size(n, cmap_len, ncols, ntog, nrt);
    tecs_archetype_t *a = tecs__alloc(w, bytes);
    if (a == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating an archetype");
        return NULL;
    }
    memset(a, 0, bytes);
    *a = (tecs_archetype_t){ .world = w, .id = (uint32_t)w->arch.narchs, .hash = h,
                             .ncomps = n, .cmap_len = cmap_len, .ncols = ncols,
                             .ntog = ntog, .nrt = nrt, .stride = 1 + ncols + ntog + nrt };
    arch_carve(a);
    if (n)
        memcpy(a->comps, ids, (size_t)n * sizeof *ids);
    for (int32_t i = 0; i < cmap_len; i++)
        a->cmap[i] = TECS__COL_ABSENT;
    if (!arch_layout(w, a)) {
        refuse_fat(w, a);
        tecs__free(w, a, bytes);
        return NULL;
    }
    w->arch.archs[w->arch.narchs++] = a;
    if (arch_announce(w, a) != TECS_OK) {
        w->arch.narchs--;
        arch_destroy(w, a);
        return NULL;
    }
    table_put(w, a);
    luts_put(w, a);
    return a;
}

tecs_archetype_t *tecs__arch_get(tecs_world_t *w, int32_t n, const tecs_comp_t *sorted)
{
    uint32_t h = hash_ids(n, sorted);
    tecs_archetype_t *a = table_find(w, h, n, sorted);
    return a ? a : arch_create(w, h, n, sorted);
}

/* Insertion sort: archetypes hold at most 64 ids. */
static void sort_ids(tecs_comp_t *ids, int32_t n)
{
    for (int32_t i = 1; i < n; i++) {
        tecs_comp_t x = ids[i];
        int32_t j = i;
        for (; j > 0 && ids[j - 1] > x; j--)
            ids[j] = ids[j - 1];
        ids[j] = x;
    }
}

tecs_archetype_t *tecs_archetype_get(tecs_world_t *w, int32_t n, const tecs_comp_t *ids)
{
    if (w == NULL || tecs__enter(w))
        return NULL;
    if (n < 0 || (n > 0 && ids == NULL)) {
        tecs__err(w, TECS_EINVAL, n < 0 ? "tecs_archetype_get: negative count %d"
                                        : "tecs_archetype_get: NULL ids for %d components", n);
        return NULL;
    }
    if (n > TECS_MAX_ARCH_COMPONENTS) {
        tecs__err(w, TECS_ELIMIT, "an archetype holds at most %d components, not %d",
                  TECS_MAX_ARCH_COMPONENTS, n);
        return NULL;
    }
    tecs_comp_t sorted[TECS_MAX_ARCH_COMPONENTS];
    for (int32_t i = 0; i < n; i++) {
        if (tecs__comp_get(w, ids[i]) == NULL) {
            tecs__err(w, TECS_ENOCOMP, "component %u is unknown", ids[i]);
            return NULL;
        }
        if (w->comp.comps[ids[i]].sparse) {
            tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is sparse: it is in no archetype",
                      TECS__COMP(w, ids[i]));
            return NULL;
        }
        sorted[i] = ids[i];
    }
    sort_ids(sorted, n);
    for (int32_t i = 1; i < n; i++) {
        if (sorted[i] == sorted[i - 1]) {
            tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is repeated", TECS__COMP(w, sorted[i]));
            return NULL;
        }
    }
    return tecs__arch_get(w, n, sorted);
}

/* Forget every edge that leads to archetype id. */
static void edges_forget(tecs_world_t *w, uint32_t id)
{
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        tecs_archetype_t *a = w->arch.archs[i];
        for (int32_t c = 0; c < a->nedges; c++) {
            if (a->edge_add[c] == id)
                a->edge_add[c] = TECS__NO_EDGE;
            if (a->edge_rem[c] == id)
                a->edge_rem[c] = TECS__NO_EDGE;
        }
    }
}

void tecs__arch_drop_last(tecs_world_t *w)
{
    tecs_archetype_t *a = w->arch.archs[w->arch.narchs - 1];
    assert(a->count == 0 && a->id > 0);
    for (int32_t i = w->bus.nlisteners; i-- > 0;)
        if (w->bus.listeners[i].on_archetype_undo)
            w->bus.listeners[i].on_archetype_undo(w, w->bus.listeners[i].ctx, a);
    w->arch.narchs--;
    edges_forget(w, a->id);
    luts_forget(w, a->id);
    toghots_leave(w, a);
    memset(w->arch.arch_table, 0, w->arch.arch_table_cap * sizeof *w->arch.arch_table);
    for (int32_t i = 0; i < w->arch.narchs; i++)
        table_put(w, w->arch.archs[i]);
    arch_destroy(w, a);
}

/* ---- edges ----------------------------------------------------------- */

/* Make the edge arrays of a cover component c; false if out of memory. */
static bool edges_cover(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c)
{
    if ((int32_t)c < a->nedges)
        return true;
    int32_t n = a->nedges ? a->nedges : 16;
    while (n <= (int32_t)c)
        n *= 2;
    uint32_t *add = tecs__alloc(w, (size_t)n * 2 * sizeof *add);
    if (add == NULL)
        return false;
    memset(add, 0xff, (size_t)n * 2 * sizeof *add);
    uint32_t *rem = add + n;
    if (a->nedges) {
        memcpy(add, a->edge_add, (size_t)a->nedges * sizeof *add);
        memcpy(rem, a->edge_rem, (size_t)a->nedges * sizeof *rem);
        tecs__free(w, a->edge_add, (size_t)a->nedges * 2 * sizeof *add);
    }
    a->edge_add = add;
    a->edge_rem = rem;
    a->nedges = n;
    return true;
}

/* Remember a --c--> b both ways; a cache, so out of memory is no error. */
static void edge_link(tecs_world_t *w, tecs_archetype_t *a, tecs_archetype_t *b, tecs_comp_t c)
{
    if (edges_cover(w, a, c) && edges_cover(w, b, c)) {
        a->edge_add[c] = b->id;
        b->edge_rem[c] = a->id;
    }
}

tecs_archetype_t *tecs__arch_with(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c)
{
    tecs_archetype_t *cached = tecs__edge_add(w, a, c);
    if (cached)
        return cached;
    if (a->ncomps >= TECS_MAX_ARCH_COMPONENTS) {
        tecs__err(w, TECS_ELIMIT, "an archetype holds at most %d components: no room "
                  "for " TECS__COMP_FMT, TECS_MAX_ARCH_COMPONENTS, TECS__COMP(w, c));
        return NULL;
    }
    tecs_comp_t ids[TECS_MAX_ARCH_COMPONENTS];
    int32_t n = 0, i = 0;
    while (i < a->ncomps && a->comps[i] < c)
        ids[n++] = a->comps[i++];
    ids[n++] = c;
    while (i < a->ncomps)
        ids[n++] = a->comps[i++];
    tecs_archetype_t *b = tecs__arch_get(w, n, ids);
    if (b)
        edge_link(w, a, b, c);
    return b;
}

tecs_archetype_t *tecs__arch_without(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c)
{
    tecs_archetype_t *cached = tecs__edge_rem(w, a, c);
    if (cached)
        return cached;
    tecs_comp_t ids[TECS_MAX_ARCH_COMPONENTS];
    int32_t n = 0;
    for (int32_t i = 0; i < a->ncomps; i++)
        if (a->comps[i] != c)
            ids[n++] = a->comps[i];
    tecs_archetype_t *b = tecs__arch_get(w, n, ids);
    if (b)
        edge_link(w, b, a, c);
    return b;
}

/* ---- chunks and rows ------------------------------------------------- */

/* The size to ask tecs__alloc_aligned for, for a group of g chunks: what g
** chunks allocated one by one would take, so memory counts per chunk. */
static size_t group_size(const tecs_archetype_t *a, uint32_t g)
{
    size_t b = tecs__bytes(g, (size_t)a->chunk_bytes + TECS_MAX_ALIGN - 1);
    return b == SIZE_MAX ? b : b - (TECS_MAX_ALIGN - 1);
}

/* Where tick column t of chunk j of a group of g chunks starts in it. */
static size_t rt_at(const tecs_world_t *w, const tecs_archetype_t *a, uint32_t g, int32_t t,
                    uint32_t j)
{
    size_t bytes = (size_t)2 * w->arch.rows * sizeof(uint64_t);
    return (size_t)g * (a->rt_off + (size_t)t * bytes) + (size_t)j * bytes;
}

/* Point chunks [s, s + g) at the group at base, and their column pointers
** at their columns in it. */
static void group_set(tecs_world_t *w, tecs_archetype_t *a, int32_t s, uint32_t g, char *base,
                      void *raw)
{
    for (uint32_t j = 0; j < g; j++) {
        uint32_t first = j << w->arch.shift;
        struct tecs__chunk *ck = &a->chunks[s + (int32_t)j];
        *ck = (struct tecs__chunk){ base, raw, g, first, ck->entered };
        char **cp = a->cols + (size_t)(s + (int32_t)j) * (uint32_t)a->stride;
        cp[0] = base + (size_t)first * sizeof(tecs_entity_t);
        for (int32_t c = 0; c < a->ncols; c++)
            cp[1 + c] = base + (size_t)g * a->col_off[c] + (size_t)first * a->col_size[c];
        for (int32_t t = 0; t < a->ntog; t++)
            cp[1 + a->ncols + t] = base + (size_t)g * (a->tog_off + (size_t)t * a->tog_bytes) +
                                   (size_t)j * a->tog_bytes;
        for (int32_t t = 0; t < a->nrt; t++)
            cp[1 + a->ncols + a->ntog + t] = base + rt_at(w, a, g, t, j);
    }
    if (s == 0)                 /* the run of the lookup tables' hot entries */
        lut_sync(w, a);
    toghots_leave(w, a);        /* a group set anew may replace the open chunk */
}

/* Bytes of the block holding cap chunk entries, their column pointers and
** their ticks. (The ticks start 8-byte aligned: cap is a power of two of
** at least 4, and an entry is a multiple of 4 bytes.) */
static size_t chunk_table_size(const tecs_archetype_t *a, int32_t cap)
{
    return tecs__bytes((uint64_t)cap, sizeof(struct tecs__chunk) +
                                      (size_t)a->stride * sizeof(char *) +
                                      (size_t)a->ncols * sizeof(uint64_t));
}


/* Make the chunk table hold want chunks: the entries first, then the
** column pointers, then the ticks, in one block; false if out of memory. */
static bool chunk_table_grow(tecs_world_t *w, tecs_archetype_t *a, int32_t want)
{
    if (want <= a->cap_chunks)
        return true;
    int64_t cap = a->cap_chunks ? a->cap_chunks : 4;
    while (cap < want)
        cap *= 2;
    if (cap > INT32_MAX)
        cap = INT32_MAX;
    struct tecs__chunk *t = tecs__realloc(w, a->chunks, chunk_table_size(a, a->cap_chunks),
                                          chunk_table_size(a, (int32_t)cap));
    if (t == NULL)
        return false;
    /* The column pointers and the ticks kept their bytes, now after the
    ** old entries: the ticks move first, as they move the farthest. */
    size_t ncols_old = (size_t)a->cap_chunks * (uint32_t)a->stride;
    char **cols = (char **)(void *)(t + cap);
    uint64_t *ticks = (uint64_t *)(void *)(cols + (size_t)cap * (uint32_t)a->stride);
    memmove(ticks, (char **)(void *)(t + a->cap_chunks) + ncols_old,
            (size_t)a->cap_chunks * (uint32_t)a->ncols * sizeof *ticks);
    memmove(cols, t + a->cap_chunks, ncols_old * sizeof(char *));
    a->chunks = t;
    a->cols = cols;
    a->ticks = ticks;
    a->cap_chunks = (int32_t)cap;
    lut_sync(w, a);
    return true;
}

/* Free the group starting at chunk s, the last one. */
static void group_free(tecs_world_t *w, tecs_archetype_t *a, int32_t s)
{
    uint32_t g = a->chunks[s].g;
    toghots_leave(w, a);
    tecs__free_aligned(w, a->chunks[s].raw, group_size(a, g));
    memset(&a->chunks[s], 0, g * sizeof *a->chunks);
    a->nchunks = s;
}

/* Make the group of chunks [nchunks, want) and the table's room for it;
** false, keeping no memory, if either cannot be had. The group comes first,
** the table after: a table that cannot grow gives the group back. */
static bool group_add(tecs_world_t *w, tecs_archetype_t *a, int32_t want)
{
    uint32_t g = (uint32_t)(want - a->nchunks);
    void *raw;
    char *base = tecs__alloc_aligned(w, group_size(a, g), &raw);
    if (base == NULL)
        return false;
    if (!chunk_table_grow(w, a, want)) {
        tecs__free_aligned(w, raw, group_size(a, g));
        return false;
    }
    /* Rows past the last in use have every bit clear; a new chunk has no
    ** write yet. */
    memset(base + (size_t)g * a->tog_off, 0, (size_t)g * (uint32_t)a->ntog * a->tog_bytes);
    memset(tecs__chunk_ticks(a, (uint32_t)a->nchunks), 0,
           (size_t)g * (uint32_t)a->ncols * sizeof *a->ticks);
    for (uint32_t j = 0; j < g; j++)
        a->chunks[a->nchunks + (int32_t)j].entered = 0;
    int32_t first = a->nchunks;
    a->nchunks = want;
    group_set(w, a, first, g, base, raw);
    return true;
}

/* Allocate chunks until there are `want`, as one group, or if that cannot
** be had, until there are `least` (at most want): a failed call keeps no
** memory. */
static tecs_err_t chunks_alloc(tecs_world_t *w, tecs_archetype_t *a, int32_t want,
                               int32_t least)
{
    if (least <= a->nchunks || group_add(w, a, want) ||
        (least < want && group_add(w, a, least)))
        return TECS_OK;
    return tecs__err(w, TECS_ENOMEM, "out of memory allocating %d chunks of %u bytes",
                     least - a->nchunks, a->chunk_bytes);
}

/* The chunks that hold rows rows. */
static int32_t chunks_for(const tecs_world_t *w, int64_t rows)
{
    return (int32_t)((rows + w->arch.mask) >> w->arch.shift);
}

tecs_err_t tecs__arch_grow_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n)
{
    int64_t need = (int64_t)a->count + n;
    if (need > INT32_MAX)
        return tecs__err(w, TECS_ELIMIT, "too many rows in one archetype");
    int32_t want = chunks_for(w, need), most = chunks_for(w, INT32_MAX);
    int32_t twice = a->nchunks > most / 2 ? most : 2 * a->nchunks;
    return chunks_alloc(w, a, want < twice ? twice : want, want);
}

tecs_err_t tecs_archetype_reserve(tecs_world_t *w, tecs_archetype_t *a, int32_t n)
{
    tecs_err_t err = tecs__enter_world_object(w);
    if (err || (err = tecs__arch_validate(w, a)))
        return err;
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "tecs_archetype_reserve: negative count %d", n);
    int32_t want = chunks_for(w, n);
    return n > a->count ? chunks_alloc(w, a, want, want) : TECS_OK;
}

void tecs__arch_fill_hole(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    if (a->plain) {
        tecs__fill_hole_plain(w, a, row);
        return;
    }
    uint32_t last = (uint32_t)a->count - 1;
    char *const *hc = tecs__chunk_of(a, w, row), *const *lc = tecs__chunk_of(a, w, last);
    const size_t hi = row & w->arch.mask, li = last & w->arch.mask;
    for (int32_t c = 0; c < a->ncols; c++)
        tecs__comp_move(w, tecs__col_info(w, a, c), tecs__chunk_col(hc, c) + hi * a->col_size[c],
                        tecs__chunk_col(lc, c) + li * a->col_size[c], 1);
    tecs_entity_t moved = tecs__chunk_ents(lc)[li];
    tecs__chunk_ents(hc)[hi] = moved;
    w->ei.recs[TECS_ENTITY_INDEX(moved)].row = row;
}

/* ---- bit columns ------------------------------------------------------ */

void tecs__arch_bits_move(tecs_world_t *w, const tecs_archetype_t *a, uint32_t src,
                          tecs_archetype_t *b, uint32_t dst)
{
    for (int32_t j = 0, i = 0; j < b->ntog; j++) {
        while (i < a->ntog && a->tog_comp[i] < b->tog_comp[j])
            i++;
        if (i < a->ntog && a->tog_comp[i] == b->tog_comp[j] && tecs__arch_some_off(a, i) &&
            tecs__arch_bit(a, w, i, src))
            tecs__arch_bit_put(w, b, j, dst, true);
    }
}

void tecs__arch_bits_remove(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    uint32_t last = (uint32_t)a->count - 1;
    for (int32_t j = 0; j < a->ntog; j++) {
        if (!tecs__arch_some_off(a, j))
            continue;
        tecs__arch_bit_put(w, a, j, row, false);
        if (row != last && tecs__arch_bit(a, w, j, last)) {
            tecs__arch_bit_put(w, a, j, last, false);
            tecs__arch_bit_put(w, a, j, row, true);
        }
    }
}

int32_t tecs__arch_ndisabled(const tecs_world_t *w, const tecs_archetype_t *a, int32_t j)
{
    if (!tecs__arch_loose(a, j))
        return a->ndisabled[j];
    int64_t set = 0;            /* (rows not in use have no bit set) */
    for (int32_t k = 0; (int64_t)k << w->arch.shift < a->count; k++) {
        const uint64_t *bits = tecs__chunk_bits(a, tecs__kcols(a, (uint32_t)k), j);
        for (uint32_t i = 0; i < a->tog_bytes / 8; i++)
            set += TECS__POP64(bits[i]);
    }
    return (int32_t)set;
}

/* ---- toggle handles' short paths ------------------------------------- */

tecs_handle_bits_t *tecs__toghot_make(tecs_world_t *w, tecs_comp_t c)
{
    tecs_handle_bits_t *hot = tecs__toghot_find(&w->arch, c);
    if (hot)
        return hot;
    if (tecs__grow(w, (void **)&w->arch.toghots, &w->arch.cap_toghots, w->arch.ntoghots + 1,
                   sizeof *w->arch.toghots))
        return NULL;
    tecs__toghot *t = tecs__alloc(w, sizeof *t);
    if (t == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory making a toggle handle's short path");
        return NULL;
    }
    t->comp = c;
    tecs__toghot_close(&t->hot);
    w->arch.toghots[w->arch.ntoghots++] = t;
    return &t->hot;
}

void tecs__toghot_open(tecs_world_t *w, tecs_handle_bits_t *hot, tecs_archetype_t *a,
                       int32_t j, uint32_t row)
{
    uint32_t k = row >> w->arch.shift;
    a->tog_loose |= (uint64_t)1 << j;
    *hot = (tecs_handle_bits_t){ a->id, k << w->arch.shift, w->arch.rows,
                                 tecs__chunk_bits(a, tecs__kcols(a, k), j) };
}

/* Close the short paths open on a: its chunk groups are changing. */
static void toghots_leave(tecs_world_t *w, const tecs_archetype_t *a)
{
    for (int32_t i = 0; i < w->arch.ntoghots; i++)
        if (w->arch.toghots[i]->hot.arch_ == a->id)
            tecs__toghot_close(&w->arch.toghots[i]->hot);
}

static void toghots_free(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->arch.ntoghots; i++)
        tecs__free(w, w->arch.toghots[i], sizeof *w->arch.toghots[i]);
    tecs__free(w, w->arch.toghots, (size_t)w->arch.cap_toghots * sizeof *w->arch.toghots);
    w->arch.toghots = NULL;
    w->arch.ntoghots = w->arch.cap_toghots = 0;
}

/* ---- tick columns ----------------------------------------------------- */

void tecs__arch_rt_enter(const tecs__arch_state *s, tecs_archetype_t *a, int32_t j,
                         uint32_t row, uint32_t n)
{
    char *const *cp = tecs__kcols(a, row >> s->shift);
    uint32_t i = row & s->mask;
    for (int32_t t = j < 0 ? 0 : j; t < (j < 0 ? a->nrt : j + 1); t++) {
        uint64_t *ch = tecs__chunk_rt(a, cp, t);
        for (uint32_t r = i; r < i + n; r++)
            ch[r] = ch[s->rows + r] = s->tick;
    }
}

void tecs__arch_touch_rows(const tecs__arch_state *s, tecs_archetype_t *a, int32_t col,
                           uint32_t row, uint32_t n)
{
    tecs__chunk_ticks(a, row >> s->shift)[col] = s->tick;
    int32_t j = a->nrt ? tecs__arch_rt(a, a->col_comp[col]) : -1;
    if (j >= 0) {
        uint64_t *ch = tecs__chunk_rt(a, tecs__kcols(a, row >> s->shift), j);
        for (uint32_t r = row & s->mask; r < (row & s->mask) + n; r++)
            ch[r] = s->tick;
    }
}

void tecs__arch_rt_move(tecs_world_t *w, const tecs_archetype_t *a, uint32_t src,
                        tecs_archetype_t *b, uint32_t dst)
{
    const uint32_t rows = w->arch.rows, si = src & w->arch.mask, di = dst & w->arch.mask;
    for (int32_t j = 0, i = 0; j < b->nrt; j++) {
        while (i < a->nrt && a->rt_comp[i] < b->rt_comp[j])
            i++;
        if (i < a->nrt && a->rt_comp[i] == b->rt_comp[j]) {
            const uint64_t *from = tecs__chunk_rt(a, tecs__chunk_of(a, w, src), i);
            uint64_t *to = tecs__chunk_rt(b, tecs__chunk_of(b, w, dst), j);
            to[di] = from[si];
            to[rows + di] = from[rows + si];
        }
    }
}

void tecs__arch_rt_remove(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    uint32_t last = (uint32_t)a->count - 1;
    if (row == last)
        return;
    const uint32_t rows = w->arch.rows, hi = row & w->arch.mask, li = last & w->arch.mask;
    for (int32_t j = 0; j < a->nrt; j++) {
        uint64_t *to = tecs__chunk_rt(a, tecs__chunk_of(a, w, row), j);
        const uint64_t *from = tecs__chunk_rt(a, tecs__chunk_of(a, w, last), j);
        to[hi] = from[li];
        to[rows + hi] = from[rows + li];
    }
}

uint64_t tecs__arch_row_tick(const tecs_world_t *w, const tecs_archetype_t *a, tecs_comp_t c,
                             uint32_t row, bool added)
{
    int32_t j = tecs__arch_rt(a, c);
    if (j >= 0)
        return tecs__chunk_rt(a, tecs__chunk_of(a, w, row), j)[(added ? w->arch.rows : 0) +
                                                             (row & w->arch.mask)];
    return tecs__arch_changed_at(w, a, added ? -1 : tecs__arch_col(a, c), row);
}

/* Replace the last group, which starts at chunk s, by a group of its first
** k chunks, moving the live rows over; false if out of memory. */
static bool group_shrink(tecs_world_t *w, tecs_archetype_t *a, int32_t s, uint32_t k)
{
    const struct tecs__chunk old = a->chunks[s];
    void *raw;
    char *base = tecs__alloc_aligned(w, group_size(a, k), &raw);
    if (base == NULL)
        return false;
    int32_t live = a->count - (s << w->arch.shift);
    memcpy(base, old.base, (size_t)live * sizeof(tecs_entity_t));
    for (int32_t c = 0; c < a->ncols && live > 0; c++) {
        char *to = base + (size_t)k * a->col_off[c];
        char *from = old.base + (size_t)old.g * a->col_off[c];
        tecs__comp_move(w, tecs__col_info(w, a, c), to, from, live);
    }
    for (int32_t t = 0; t < a->ntog; t++)
        memcpy(base + (size_t)k * (a->tog_off + (size_t)t * a->tog_bytes),
               old.base + (size_t)old.g * (a->tog_off + (size_t)t * a->tog_bytes),
               (size_t)k * a->tog_bytes);
    for (int32_t t = 0; t < a->nrt; t++)
        memcpy(base + rt_at(w, a, k, t, 0), old.base + rt_at(w, a, old.g, t, 0),
               (size_t)k * 2 * w->arch.rows * sizeof(uint64_t));
    tecs__free_aligned(w, old.raw, group_size(a, old.g));
    memset(&a->chunks[s + (int32_t)k], 0, (old.g - k) * sizeof *a->chunks);
    a->nchunks = s + (int32_t)k;
    group_set(w, a, s, k, base, raw);       /* (the kept chunks keep their ticks) */
    return true;
}

/* Give chunks back once the rows and the spare (the chunk after the last
** used one) need at most a quarter of them, or no row is left: free the
** groups wholly past the
** spare, and move a group that straddles it into a smaller one holding its
** used chunks and the spare when that frees at least three times as many
** chunks as it keeps, or when none of its rows is in use (nothing to move).
** The quarter is the hysteresis of geometric growth: a group allocated as
** the archetype doubles is given back only once the rows have halved again,
** so rows coming and going at one count never allocate and free in turn
** (an emptied archetype keeps one chunk, and grows again a chunk at a time).
** The rows a trim moves are at most a third of the rows it frees room for,
** so a long run of removals (a world emptied in creation order) moves at
** most a third of a row per row removed. */
void tecs__arch_trim(tecs_world_t *w, tecs_archetype_t *a)
{
    int32_t keep = (a->count >> w->arch.shift) + 1;
    if ((a->count > 0 && keep > a->nchunks / 4) || w->arch.hold_trim > 0)
        return;
    while (a->nchunks > keep) {
        const struct tecs__chunk *last = &a->chunks[a->nchunks - 1];
        int32_t s = a->nchunks - 1 - (int32_t)(last->first >> w->arch.shift);
        if (s >= keep) {
            group_free(w, a, s);
            continue;
        }
        uint32_t k = (uint32_t)(keep - s);
        if (k <= last->g / 4 || a->count <= (s << w->arch.shift))
            group_shrink(w, a, s, k);
        return;
    }
}

int32_t tecs_archetype_entity_count(const tecs_archetype_t *a)
{
    return a ? a->count : 0;
}

int32_t tecs_archetype_chunk_count(const tecs_archetype_t *a)
{
    return a ? a->nchunks : 0;
}

int32_t tecs_archetype_components(const tecs_archetype_t *a, const tecs_comp_t **out)
{
    if (a == NULL)
        return 0;
    if (out)
        *out = a->comps;
    return a->ncomps;
}

/* ---- lookup tables ---------------------------------------------------- */

/* The chunk table of an archetype without the value, as tecs_handle_get reads
** it: every row's value at NULL (read-only, shared by every world). */
static char *const no_column[1] = { NULL };

/* The entry of a in the lookup table of c. */
static tecs_handle_col_t lut_slot(const tecs_archetype_t *a, tecs_comp_t c)
{
    int32_t col = tecs__arch_col(a, c);
    if (col < 0 || a->cols == NULL)
        return (tecs_handle_col_t){ no_column, 0, 0 };
    return (tecs_handle_col_t){ a->cols + 1 + col, (uint32_t)a->stride, a->col_size[col] };
}

/* Make a (which has t's column) t's hot archetype, or refresh it. */
static void hot_set(const tecs_world_t *w, tecs__lut *t, const tecs_archetype_t *a)
{
    tecs_handle_col_t s = lut_slot(a, t->comp);
    uint32_t run = a->nchunks > 0 ? a->chunks[0].g << w->arch.shift : 0;
    t->hot = (tecs_handle_run_t){ a->id, run, run ? (uintptr_t)s.cols_[0] : 0, &a->count,
                                  run ? (const uint64_t *)(void *)a->cols[0] : NULL, s };
}

/* No archetype on t's short path: its count reads zero, so tecs_handle_get
** makes no guess. */
static void hot_clear(tecs__lut *t)
{
    static const int32_t no_rows = 0;
    t->hot = (tecs_handle_run_t){ .arch_ = TECS__NO_HOT, .count_ = &no_rows };
}

/* The hot archetype of t, or NULL. */
static const tecs_archetype_t *hot_arch(const tecs_world_t *w, const tecs__lut *t)
{
    return t->hot.arch_ == TECS__NO_HOT ? NULL : w->arch.archs[t->hot.arch_];
}

/* a's chunk table moved or went, or its group 0 changed: the tables of its
** columns follow; a takes the hot place of a table whose hot archetype has
** a smaller chunk table. */
static void lut_sync(tecs_world_t *w, const tecs_archetype_t *a)
{
    if (w->arch.cap_luts == 0)
        return;
    for (int32_t c = 0; c < a->ncols; c++) {
        tecs__lut *t = tecs__lut_find(&w->arch, a->col_comp[c]);
        if (t == NULL || (uint32_t)t->len <= a->id)
            continue;
        t->slots[a->id] = lut_slot(a, t->comp);
        const tecs_archetype_t *h = hot_arch(w, t);
        if (h == a || h == NULL || a->cap_chunks > h->cap_chunks)
            hot_set(w, t, a);
    }
}

/* Room in every table for n archetypes, before one is made (so that
** luts_put cannot fail): TECS_OK, or TECS_ENOMEM recorded. */
static tecs_err_t luts_reserve(tecs_world_t *w, int32_t n)
{
    for (int32_t c = 0; c < w->arch.cap_luts; c++) {
        tecs__lut *t = w->arch.luts[c];
        if (t && tecs__grow(w, (void **)&t->slots, &t->cap, n, sizeof *t->slots))
            return TECS_ENOMEM;
    }
    return TECS_OK;
}

/* a is made (the newest, room reserved): every table covers it. */
static void luts_put(tecs_world_t *w, const tecs_archetype_t *a)
{
    for (int32_t c = 0; c < w->arch.cap_luts; c++) {
        tecs__lut *t = w->arch.luts[c];
        if (t) {
            assert((uint32_t)t->len == a->id && t->cap > t->len);
            t->slots[t->len++] = lut_slot(a, t->comp);
        }
    }
}

tecs__lut *tecs__lut_make(tecs_world_t *w, tecs_comp_t c)
{
    tecs__lut *t = tecs__lut_find(&w->arch, c);
    if (t)
        return t;
    int32_t old = w->arch.cap_luts;
    if (tecs__grow(w, (void **)&w->arch.luts, &w->arch.cap_luts, (int32_t)c + 1,
                   sizeof *w->arch.luts))
        return NULL;
    for (int32_t k = old; k < w->arch.cap_luts; k++)
        w->arch.luts[k] = NULL;
    t = tecs__alloc(w, sizeof *t);
    if (t == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory making a lookup table");
        return NULL;
    }
    *t = (tecs__lut){ .comp = c };
    if (tecs__grow(w, (void **)&t->slots, &t->cap, w->arch.narchs, sizeof *t->slots)) {
        tecs__free(w, t, sizeof *t);
        return NULL;
    }
    hot_clear(t);
    const tecs_archetype_t *best = NULL;
    for (; t->len < w->arch.narchs; t->len++) {
        const tecs_archetype_t *a = w->arch.archs[t->len];
        t->slots[t->len] = lut_slot(a, c);
        if (tecs__arch_col(a, c) >= 0 && (best == NULL || a->count > best->count))
            best = a;
    }
    if (best)
        hot_set(w, t, best);
    w->arch.luts[c] = t;
    return t;
}

/* The archetype of id is gone: no table covers it any more. */
static void luts_forget(tecs_world_t *w, uint32_t id)
{
    for (int32_t c = 0; c < w->arch.cap_luts; c++) {
        tecs__lut *t = w->arch.luts[c];
        if (t && (uint32_t)t->len > id)
            t->len = (int32_t)id;
        if (t && t->hot.arch_ == id)
            hot_clear(t);
    }
}

static void luts_free(tecs_world_t *w)
{
    for (int32_t c = 0; c < w->arch.cap_luts; c++) {
        tecs__lut *t = w->arch.luts[c];
        if (t) {
            tecs__free(w, t->slots, (size_t)t->cap * sizeof *t->slots);
            tecs__free(w, t, sizeof *t);
        }
    }
    tecs__free(w, w->arch.luts, (size_t)w->arch.cap_luts * sizeof *w->arch.luts);
    w->arch.luts = NULL;
    w->arch.cap_luts = 0;
}

/* ---- teardown -------------------------------------------------------- */

/* Destroy every live value of the archetype, chunk column by column. */
static void arch_destroy_values(tecs_world_t *w, tecs_archetype_t *a)
{
    if (a->plain)
        return;
    for (int32_t k = 0; (int64_t)k * w->arch.rows < a->count; k++) {
        int32_t n = a->count - k * (int32_t)w->arch.rows;
        if (n > (int32_t)w->arch.rows)
            n = (int32_t)w->arch.rows;
        for (int32_t c = 0; c < a->ncols; c++)
            tecs__comp_dtor(w, tecs__col_info(w, a, c),
                            tecs__chunk_col(tecs__kcols(a, (uint32_t)k), c), n);
    }
}

/* Free every chunk and the chunk table. */
static void arch_free_chunks(tecs_world_t *w, tecs_archetype_t *a)
{
    while (a->nchunks > 0) {
        const struct tecs__chunk *last = &a->chunks[a->nchunks - 1];
        group_free(w, a, a->nchunks - 1 - (int32_t)(last->first >> w->arch.shift));
    }
    tecs__free(w, a->chunks, chunk_table_size(a, a->cap_chunks));
    a->chunks = NULL;
    a->cols = NULL;
    a->ticks = NULL;
    a->cap_chunks = 0;
    lut_sync(w, a);
}

static void arch_destroy(tecs_world_t *w, tecs_archetype_t *a)
{
    arch_free_chunks(w, a);
    tecs__free(w, a->edge_add, (size_t)a->nedges * 2 * sizeof *a->edge_add);
    tecs__free(w, a, arch_size(a));
}

void tecs__arch_clear(tecs_world_t *w, tecs_archetype_t *a)
{
    arch_destroy_values(w, a);
    a->count = 0;
    for (int32_t t = 0; t < a->ntog; t++)
        a->ndisabled[t] = 0;
    a->tog_loose = 0;           /* no bit is set: the counts hold again */
    arch_free_chunks(w, a);
}

void tecs__arch_destroy_values(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->arch.narchs; i++)
        arch_destroy_values(w, w->arch.archs[i]);
}

void tecs__arch_fini(tecs_world_t *w)
{
    luts_free(w);               /* first: no table follows the archetypes out */
    toghots_free(w);
    for (int32_t i = 0; i < w->arch.narchs; i++)
        arch_destroy(w, w->arch.archs[i]);
    tecs__free(w, w->arch.archs, (size_t)w->arch.cap_archs * sizeof *w->arch.archs);
    tecs__free(w, w->arch.arch_table, w->arch.arch_table_cap * sizeof *w->arch.arch_table);
    w->arch.archs = NULL;
    w->arch.narchs = w->arch.cap_archs = 0;
}

/* ---- validation of what a user passes --------------------------------- */

tecs_err_t tecs__arch_validate(tecs_world_t *w, const tecs_archetype_t *a)
{
    if (a == NULL)
        return tecs__err(w, TECS_EINVAL, "NULL archetype");
    if (a->world != w)
        return tecs__err(w, TECS_EWORLD, "archetype of another world");
    return TECS_OK;
}

tecs_err_t tecs__arch_validate_vals(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                                    const tecs_value_t *vals)
{
    if (nvals < 0)
        return tecs__err(w, TECS_EINVAL, "value list: negative count %d", nvals);
    if (nvals > 0 && vals == NULL)
        return tecs__err(w, TECS_EINVAL, "value list: NULL for %d values", nvals);
    for (int32_t i = 0; i < nvals; i++) {
        tecs_comp_t c = vals[i].comp;
        if (tecs__comp_get(w, c) == NULL)
            return tecs__err_nocomp(w, c);
        if (w->comp.comps[c].sparse)
            return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is sparse: its value is in no "
                             "archetype; tecs_set it after the birth", TECS__COMP(w, c));
        int32_t col = tecs__arch_col(a, c);
        if (col == TECS__COL_ABSENT)
            return tecs__err(w, TECS_ENOCOMP, TECS__COMP_FMT " is not in the archetype",
                             TECS__COMP(w, c));
        if (col >= 0 && vals[i].ptr == NULL)
            return tecs__err(w, TECS_EINVAL, "NULL value for " TECS__COMP_FMT,
                             TECS__COMP(w, c));
        for (int32_t j = 0; j < i; j++)
            if (vals[j].comp == c)
                return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is given twice",
                                 TECS__COMP(w, c));
    }
    return TECS_OK;
}

