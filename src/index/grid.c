/*
** index/grid.c — the spatial index's points, laid out by cell.
**
** A spatial index keeps, beside its entries (index.c), a copy of each
** point in a grid: the cell table maps a grid cell (cell_key) to the run of
** blocks that holds its points, and a block is GB points of 16 bytes (x, y
** and the entity), so a walk of a cell reads its points and nothing else:
**
**     ctab (open, by cell_hash)      pts (blocks of GB points)
**     [ key (3,7) head 12 count 6 ] ──> block 12 [ p p . . ] ──> block 13
**     [ empty: key NOWHERE_CELL   ]     block 13 [ p p p p ] ──> -1
**
** A cell's head block holds its remainder (1 to GB points), the blocks
** after it are full: a point joins at the head's first free place (a new
** head block when the head is full) and leaves by taking the cell's last
** point, at the end of the head block, into its place (the head block is
** freed when it empties, the cell when its last point leaves, so the table
** holds only cells with points however far points wander). Each entry
** names its point (its next field), so both are O(1), and cell_hash puts
** four cells next to each other along y in neighbouring slots of the table.
** Blocks come from the free list, else from above nblk; room for n puts
** (a cell and a block each) is reserved before anything changes, so a put
** cannot fail.
**
** tecs__grid_build lays the grid out at once, from the entries sorted by
** cell: each cell's blocks consecutive, cells in key order (x, then y),
** so that a walk of the cells of a circle reads runs of memory. Points
** that move one by one then take blocks wherever the free list has them;
** the next rebuild (after a burst, index.c) lays the grid out again.
**
** Invariants: every cell of the table has points and is found by a probe
** from its hash, and ncells counts them, at most half the table; a cell's
** run has ceil(count / GB) blocks, its head holding head_points(count)
** points; every entry with a cell key has exactly one point, in its cell,
** which names it, holds its aux and is named by its next field; an entry
** with NaN coordinates (NOWHERE_CELL) has none; every block below nblk is
** in one run or in the free list.
*/
#include "internal.h"

/* ---- the cell table --------------------------------------------------- */

/* An empty table of n slots. */
static void ctab_empty(gcell *t, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        t[i] = (gcell){ NOWHERE_CELL, -1, 0 };
}

/* The slot of cell k in table t of n slots: its own, or the empty one it
** would take. */
static gcell *ctab_slot(gcell *t, int32_t n, uint64_t k)
{
    uint32_t mask = (uint32_t)n - 1;
    for (uint32_t i = cell_hash(k) & mask;; i = (i + 1) & mask)
        if (t[i].key == k || t[i].key == NOWHERE_CELL)
            return &t[i];
}

/* Cell k, made empty if it is new (room reserved). */
static gcell *cell_get(tecs_index_t *x, uint64_t k)
{
    gcell *c = ctab_slot(x->ctab, x->nctab, k);
    if (c->key == NOWHERE_CELL) {
        *c = (gcell){ k, -1, 0 };
        x->ncells++;
    }
    return c;
}

/* Empty slot c of the table (its cell has no points left), shifting back
** the cells after it that would not be found past the hole (linear
** probing without tombstones): the table holds only cells with points. */
static void cell_drop(tecs_index_t *x, gcell *c)
{
    uint32_t mask = (uint32_t)x->nctab - 1, i = (uint32_t)(c - x->ctab);
    for (uint32_t j = (i + 1) & mask; x->ctab[j].key != NOWHERE_CELL; j = (j + 1) & mask) {
        uint32_t home = cell_hash(x->ctab[j].key) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {  /* home at or before i */
            x->ctab[i] = x->ctab[j];
            i = j;
        }
    }
    x->ctab[i] = (gcell){ NOWHERE_CELL, -1, 0 };
    x->ncells--;
}

/* A table of room for cells cells (at most half full), the cells moved
** into it; nothing changes when it cannot be allocated. */
static tecs_err_t ctab_room(tecs_index_t *x, int64_t cells)
{
    if (cells * 2 <= x->nctab)
        return TECS_OK;
    int64_t n = x->nctab ? x->nctab : 16;
    while (n < cells * 2)
        n *= 2;
    if (n > INT32_MAX / 2)
        return TECS_ENOMEM;
    gcell *t = tecs__alloc(x->world, tecs__bytes((uint64_t)n, sizeof *t));
    if (t == NULL)
        return TECS_ENOMEM;
    ctab_empty(t, (int32_t)n);
    for (int32_t i = 0; i < x->nctab; i++)
        if (x->ctab[i].key != NOWHERE_CELL)
            *ctab_slot(t, (int32_t)n, x->ctab[i].key) = x->ctab[i];
    tecs__free(x->world, x->ctab, (size_t)x->nctab * sizeof *x->ctab);
    x->ctab = t;
    x->nctab = (int32_t)n;
    return TECS_OK;
}

/* ---- blocks ----------------------------------------------------------- */

/* Room for blocks blocks in use (pts and bnext both). */
static tecs_err_t blocks_room(tecs_index_t *x, int64_t blocks)
{
    if (blocks > INT32_MAX / GB)
        return TECS_ENOMEM;
    tecs_world_t *w = x->world;
    tecs_err_t outer = w->base.err;
    if (tecs__grow(w, (void **)&x->pts, &x->cappts, (int32_t)blocks, GB * sizeof *x->pts) ||
        tecs__grow(w, (void **)&x->bnext, &x->capnext, (int32_t)blocks, sizeof *x->bnext)) {
        tecs__err_restore(w, outer);    /* the caller says what failed */
        return TECS_ENOMEM;
    }
    return TECS_OK;
}

static int32_t block_new(tecs_index_t *x)
{
    int32_t b = x->bfree;
    if (b < 0)
        return x->nblk++;
    x->bfree = x->bnext[b];
    x->nfree--;
    return b;
}

static void block_free(tecs_index_t *x, int32_t b)
{
    x->bnext[b] = x->bfree;
    x->bfree = b;
    x->nfree++;
}

tecs_err_t tecs__grid_grow(tecs_index_t *x, int32_t n)
{
    if (ctab_room(x, (int64_t)x->ncells + n))
        return TECS_ENOMEM;
    return blocks_room(x, (int64_t)x->nblk - x->nfree + n);
}

/* ---- points ----------------------------------------------------------- */

void tecs__grid_put(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (t->key == NOWHERE_CELL) {
        t->next = -1;
        return;
    }
    gcell *c = cell_get(x, t->key);
    int32_t at = c->count & (GB - 1);
    if (at == 0) {
        int32_t b = block_new(x);
        x->bnext[b] = c->head;
        c->head = b;
    }
    int32_t p = c->head * GB + at;
    c->count++;
    gpoint *g = &x->pts[p];
    memcpy(&g->x, &t->aux, sizeof g->x);
    memcpy(&g->y, (const char *)&t->aux + 4, sizeof g->y);
    g->e = t->e;
    t->next = p;
}

void tecs__grid_del(tecs_index_t *x, int32_t i)
{
    ient *t = &x->ents[i];
    if (t->next < 0)
        return;
    gcell *c = ctab_slot(x->ctab, x->nctab, t->key);
    assert(c->key == t->key && c->count > 0);
    int32_t last = c->head * GB + head_points(c->count) - 1;
    if (t->next != last) {
        gpoint *g = &x->pts[t->next];
        *g = x->pts[last];
        x->ents[x->pos[TECS_ENTITY_INDEX(g->e)] - 1].next = t->next;
    }
    if ((--c->count & (GB - 1)) == 0) {
        int32_t b = c->head;
        c->head = x->bnext[b];
        block_free(x, b);
    }
    if (c->count == 0)
        cell_drop(x, c);
    t->next = -1;
}

/* ---- building --------------------------------------------------------- */

/* Lay out the run v[0..n) of one cell (entries sorted by cell) in
** consecutive blocks from nblk. */
static void lay_cell(tecs_index_t *x, const okey *v, int32_t n)
{
    gcell *c = cell_get(x, x->ents[v[0].e].key);
    int32_t blocks = (n + GB - 1) / GB, b0 = x->nblk, rem = head_points(n);
    x->nblk += blocks;
    for (int32_t q = 0; q < blocks; q++)
        x->bnext[b0 + q] = q + 1 < blocks ? b0 + q + 1 : -1;
    c->head = b0;
    c->count = n;
    for (int32_t r = 0; r < n; r++) {
        int32_t p = r < rem ? b0 * GB + r : (b0 + 1) * GB + (r - rem);
        ient *t = &x->ents[v[r].e];
        gpoint *g = &x->pts[p];
        memcpy(&g->x, &t->aux, sizeof g->x);
        memcpy(&g->y, (const char *)&t->aux + 4, sizeof g->y);
        g->e = t->e;
        t->next = p;
    }
}

/* Sort the m entries that have a cell by cell, x then y, into v (2 * m
** items, e: the entry). The sort key is the cell's place in the
** rectangle of cells in use, so the radix sort covers its bits only. */
static void sort_by_cell(const tecs_index_t *x, okey *v, int32_t m)
{
    int64_t x0 = INT64_MAX, y0 = INT64_MAX, y1 = INT64_MIN;
    for (int32_t i = 0; i < x->n; i++) {
        uint64_t k = x->ents[i].key;
        int64_t cx = (int32_t)(uint32_t)(k >> 32), cy = (int32_t)(uint32_t)k;
        if (k == NOWHERE_CELL)
            continue;
        x0 = cx < x0 ? cx : x0;
        y0 = cy < y0 ? cy : y0;
        y1 = cy > y1 ? cy : y1;
    }
    uint64_t rows = (uint64_t)(y1 - y0 + 1), max = 0;
    int32_t j = 0;
    for (int32_t i = 0; i < x->n; i++) {
        uint64_t k = x->ents[i].key;
        if (k == NOWHERE_CELL)
            continue;
        uint64_t cx = (uint64_t)((int32_t)(uint32_t)(k >> 32) - x0);
        uint64_t cy = (uint64_t)((int32_t)(uint32_t)k - y0);
        uint64_t at = cx * rows + cy;  /* < 2^62: cells are clamped to +-2^30 */
        max = at > max ? at : max;
        v[j++] = (okey){ at, (tecs_entity_t)i };
    }
    assert(j == m);
    tecs__okey_radix(v, v + m, m, 0, max);
}

tecs_err_t tecs__grid_build(tecs_index_t *x)
{
    int32_t m = 0;
    for (int32_t i = 0; i < x->n; i++) {
        m += x->ents[i].key != NOWHERE_CELL;
        x->ents[i].next = -1;
    }
    if (m == 0)
        return TECS_OK;
    okey *v = tecs__alloc(x->world, tecs__bytes((uint64_t)m * 2, sizeof *v));
    if (v == NULL)
        return TECS_ENOMEM;
    sort_by_cell(x, v, m);
    int64_t cells = 0, blocks = 0;
    for (int32_t j = 0, e; j < m; j = e) {
        for (e = j + 1; e < m && v[e].k == v[j].k; e++)
            ;
        cells++;
        blocks += (e - j + GB - 1) / GB;
    }
    tecs_err_t err = ctab_room(x, cells + cells / 8 + 8);
    if (!err)
        err = blocks_room(x, blocks + blocks / 8 + 8);
    for (int32_t j = 0, e; j < m && !err; j = e) {
        for (e = j + 1; e < m && v[e].k == v[j].k; e++)
            ;
        lay_cell(x, v + j, e - j);
    }
    tecs__free(x->world, v, (size_t)m * 2 * sizeof *v);
    return err;
}

/* ---- lifetime --------------------------------------------------------- */

void tecs__grid_clear(tecs_index_t *x)
{
    ctab_empty(x->ctab, x->nctab);
    x->ncells = 0;
    x->nblk = 0;
    x->bfree = -1;
    x->nfree = 0;
}

void tecs__grid_release(tecs_index_t *x)
{
    tecs_world_t *w = x->world;
    tecs__free(w, x->ctab, (size_t)x->nctab * sizeof *x->ctab);
    tecs__free(w, x->pts, (size_t)x->cappts * GB * sizeof *x->pts);
    tecs__free(w, x->bnext, (size_t)x->capnext * sizeof *x->bnext);
}

/* ---- verification ----------------------------------------------------- */

/* The points of cell c against the entries; its blocks counted in *used. */
static tecs_err_t verify_cell(tecs_index_t *x, const gcell *c, int64_t *used)
{
    int32_t left = c->count, b = c->head, m = left > 0 ? head_points(left) : 0;
    if (grid_cell(x, c->key) != c || left <= 0)
        return corrupt(x->world, "grid cell misplaced, or empty", x->id);
    for (; left > 0; left -= m, m = GB, b = x->bnext[b]) {
        if (b < 0 || b >= x->nblk)
            return corrupt(x->world, "grid cell's run too short", x->id);
        ++*used;
        for (int32_t p = b * GB; p < b * GB + m; p++) {
            const gpoint *g = &x->pts[p];
            int32_t i = ent_find(x, g->e);
            float px, py;
            memcpy(&px, &x->ents[i < 0 ? 0 : i].aux, 4);
            memcpy(&py, (const char *)&x->ents[i < 0 ? 0 : i].aux + 4, 4);
            if (i < 0 || x->ents[i].next != p || x->ents[i].key != c->key ||
                memcmp(&px, &g->x, 4) || memcmp(&py, &g->y, 4))
                return corrupt(x->world, "grid point disagrees with its entry", x->id);
        }
    }
    return b == -1 ? TECS_OK : corrupt(x->world, "grid cell's run too long", x->id);
}

tecs_err_t tecs__grid_verify(tecs_index_t *x)
{
    int64_t cells = 0, points = 0, used = 0, placed = 0;
    for (int32_t s = 0; s < x->nctab; s++) {
        const gcell *c = &x->ctab[s];
        if (c->key == NOWHERE_CELL)
            continue;
        tecs_err_t err = verify_cell(x, c, &used);
        if (err)
            return err;
        cells++;
        points += c->count;
    }
    if (cells != x->ncells || cells * 2 > x->nctab)
        return corrupt(x->world, "grid cell count off", x->id);
    int32_t b = x->bfree;
    for (int32_t k = 0; k < x->nfree; k++, b = x->bnext[b])
        if (b < 0 || b >= x->nblk)
            return corrupt(x->world, "grid free list too short", x->id);
    if (b != -1 || used + x->nfree != x->nblk)
        return corrupt(x->world, "grid blocks lost or shared", x->id);
    for (int32_t i = 0; i < x->n; i++) {
        bool nowhere = x->ents[i].key == NOWHERE_CELL;
        if (nowhere != (x->ents[i].next < 0))
            return corrupt(x->world, "entry without its grid point", x->id);
        placed += !nowhere;
    }
    return placed == points ? TECS_OK : corrupt(x->world, "grid points != entries", x->id);
}
