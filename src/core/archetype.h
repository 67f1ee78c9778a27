/*
** archetype.h — archetypes, chunks, edges, rows (archetype.c). Its types,
** its state and its interface; then, in private.h's second pass
** (TECS__WORLD_DONE, once tecs_world_t is complete), its inline functions.
** Included by private.h only.
*/
#ifndef TECS_ARCHETYPE_H
#define TECS_ARCHETYPE_H

#define TECS__COL_ABSENT (-1)
#define TECS__COL_TAG    (-2)

struct tecs_archetype_t {
    tecs_world_t *world;
    uint32_t id;                /* index in world->arch.archs, creation order    */
    uint32_t hash;              /* of the sorted component ids              */
    int32_t ncomps;
    tecs_comp_t *comps;         /* sorted ids, tags included                */
    int32_t cmap_len;           /* max component id + 1                     */
    int16_t *cmap;              /* comp id -> column, or COL_ABSENT/COL_TAG */
    int32_t ncols;              /* data columns (tags have none)            */
    tecs_comp_t *col_comp;      /* per column: its component                */
    uint32_t *col_size;         /* per column: value size                   */
    uint32_t *col_off;          /* per column: byte offset in a chunk       */
    uint32_t chunk_bytes;       /* size of one chunk                        */
    int32_t count;              /* rows in use, in every chunk together     */
    int32_t nchunks;            /* chunks allocated                         */
    int32_t cap_chunks;
    struct tecs__chunk *chunks; /* allocated chunks, in row order           */
    int32_t stride;             /* column pointers per chunk: 1 + ncols +
                                   ntog + nrt                               */
    char **cols;                /* chunk k's at k * stride: [0] its entity
                                   ids, [1 + c] its column c, [1 + ncols + j]
                                   its bit column j (after chunks, in the
                                   same block)                              */
    uint64_t *ticks;            /* chunk k's at k * ncols: [c] the tick of
                                   the last write to column c (the last row
                                   that entered: chunks[k].entered); after
                                   cols, in the same block                  */
    int32_t nrt;                /* components with ticks per row (row_ticks) */
    tecs_comp_t *rt_comp;       /* per tick column: its component (id order) */
    uint32_t rt_off;            /* byte offset of tick column 0 in a chunk: a
                                   column is rows changed ticks, then rows
                                   added ticks, reached through cols at
                                   [1 + ncols + ntog + j]                   */
    int32_t ntog;               /* enableable components: bit columns       */
    tecs_comp_t *tog_comp;      /* per bit column: its component (id order) */
    int32_t *ndisabled;         /* per bit column: rows whose bit is set,
                                   while the column is not loose            */
    uint64_t tog_loose;         /* bit j: column j is toggled inline, so its
                                   count is the bits' (tecs__arch_ndisabled) */
    uint32_t tog_off;           /* byte offset of bit column 0 in a chunk   */
    uint32_t tog_bytes;         /* bytes of one chunk's bit column: a bit a
                                   row (set: disabled), in 64-bit words     */
    int32_t nedges;             /* edge arrays' length (component ids)      */
    uint32_t *edge_add;         /* comp -> archetype with it, or NO_EDGE    */
    uint32_t *edge_rem;         /* comp -> archetype without it, or NO_EDGE */
    bool plain;                 /* no column has hooks                      */
    bool hidden;                /* it holds a hidden tag (queries skip it
                                   unless they name every such tag)         */
    bool bare;                  /* plain, with no bit or tick columns: a row
                                   is its id and its values, nothing more   */
};

#define TECS__NO_EDGE 0xffffffffu

/* Chunks are allocated in groups: one block for the g chunks of one growth
** (at least the chunks already there), laid out column by column across
** the group, so that a column of consecutive chunks is one run of memory
** (archetype.c). */
struct tecs__chunk {
    char *base;                 /* the group's 64-byte aligned base         */
    void *raw;                  /* the group's block, to free               */
    uint32_t g;                 /* chunks in the group                      */
    uint32_t first;             /* this chunk's first row in the group      */
    uint64_t entered;           /* tick of the last row that entered it     */
};


/* Find or create the archetype of sorted, distinct, registered ids. */
tecs_archetype_t *tecs__arch_get(tecs_world_t *w, int32_t n, const tecs_comp_t *sorted);
/* The archetype reached by adding (or removing) c, through the cached edge. */
tecs_archetype_t *tecs__arch_with(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c);
tecs_archetype_t *tecs__arch_without(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c);
/* Make room for n more rows, as one new group of chunks that at least
** doubles the archetype's (archetype.c: the memory rule); after success
** appends cannot fail. */
tecs_err_t tecs__arch_grow_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n);
static inline tecs_err_t tecs__arch_reserve_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n);
/* Fill the hole at row with the last row (values already moved out or
** destroyed) and shrink; gives chunks back as the trim's rule says. */
static inline void tecs__arch_remove_row(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
void tecs__arch_fill_hole(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
/* Give chunks back once the rows and the spare need at most a quarter of
** them, or no row is left. */
void tecs__arch_trim(tecs_world_t *w, tecs_archetype_t *a);
/* Undo the creation of the newest archetype, still empty, when the call
** that created it fails later on (listeners, edges, hash table). */
void tecs__arch_drop_last(tecs_world_t *w);
/* Run the destructor of every live value (at world free, before any layer
** tears down); tecs__arch_fini then frees the memory. */
void tecs__arch_destroy_values(tecs_world_t *w);
void tecs__arch_fini(tecs_world_t *w);
/* Drop every row of a (tecs_world_reset): destroy its values, free its
** chunks and its chunk table; the records of its entities are the
** caller's. The archetype itself, its edges and its handle stay. */
void tecs__arch_clear(tecs_world_t *w, tecs_archetype_t *a);
/* The bit column of enableable component c in a, or -1. */
static inline int32_t tecs__arch_tog(const tecs_archetype_t *a, tecs_comp_t c)
{
    for (int32_t j = 0; j < a->ntog; j++)
        if (a->tog_comp[j] == c)
            return j;
    return -1;
}

/* Is a's bit column j loose (its count the bits', not ndisabled)? */
_Static_assert(TECS_MAX_ARCH_COMPONENTS <= 64, "tog_loose has a bit per bit column");
static inline bool tecs__arch_loose(const tecs_archetype_t *a, int32_t j)
{
    return (a->tog_loose >> j) & 1u;
}
/* May some row of a have bit column j set? (ndisabled, or loose.) */
static inline bool tecs__arch_some_off(const tecs_archetype_t *a, int32_t j)
{
    return a->ndisabled[j] != 0 || tecs__arch_loose(a, j);
}
/* Rows of a whose bit of column j is set: ndisabled, or, while the column
** is loose, its bits counted. */
int32_t tecs__arch_ndisabled(const tecs_world_t *w, const tecs_archetype_t *a, int32_t j);

/* Keep the bit columns when a row moves from a (row src) to b (row dst):
** a bit of a component both have goes along; b's other bits stay clear. */
void tecs__arch_bits_move(tecs_world_t *w, const tecs_archetype_t *a, uint32_t src,
                          tecs_archetype_t *b, uint32_t dst);
/* Before row leaves a (its hole filled by the last row): forget its bits,
** move the last row's bits into it, clear the last row's. */
void tecs__arch_bits_remove(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
/* The tick columns, as the bit columns: a row's ticks of a component both
** a and b have go along (b's others were set as entered). */
void tecs__arch_rt_move(tecs_world_t *w, const tecs_archetype_t *a, uint32_t src,
                        tecs_archetype_t *b, uint32_t dst);
/* Before row leaves a: the last row's ticks move into it. */
void tecs__arch_rt_remove(tecs_world_t *w, tecs_archetype_t *a, uint32_t row);
/* The tick of component c of the row (kept by row, or its chunk's). */
uint64_t tecs__arch_row_tick(const tecs_world_t *w, const tecs_archetype_t *a, tecs_comp_t c,
                             uint32_t row, bool added);
/* Column of c in a, or COL_ABSENT / COL_TAG. */
static inline int32_t tecs__arch_col(const tecs_archetype_t *a, tecs_comp_t c)
{
    return c < (tecs_comp_t)a->cmap_len ? a->cmap[c] : TECS__COL_ABSENT;
}

/* Validate an archetype handle passed by the user. */
tecs_err_t tecs__arch_validate(tecs_world_t *w, const tecs_archetype_t *a);
/* Validate a value list against an archetype. */
tecs_err_t tecs__arch_validate_vals(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                                    const tecs_value_t *vals);


/* A lookup table (tecs_handle_get reads it inline): per archetype id,
** comp's column in the archetype's chunk table, or NULL where comp has no
** value there or the archetype no chunk table. Made by the first
** tecs_handle_init of comp; from then on it covers every archetype (len is
** narchs) and follows the chunk tables as they move (archetype.c). hot is
** one archetype with the column (the one with the largest chunk table when
** it last grew), its entry, and the run of its first chunk group. */
typedef struct tecs__lut {
    tecs_handle_col_t *slots;   /* by archetype id                          */
    int32_t len;                /* archetypes covered: ids 0 .. len - 1     */
    int32_t cap;
    tecs_comp_t comp;
    tecs_handle_run_t hot;      /* the short path; arch_ TECS__NO_HOT: none */
} tecs__lut;

#define TECS__NO_HOT 0xffffffffu

typedef struct tecs__arch_state {
    tecs_archetype_t **archs;   /* by id, creation order                    */
    int32_t narchs;
    int32_t cap_archs;
    uint32_t *arch_table;       /* open addressing: hash -> id + 1          */
    uint32_t arch_table_cap;    /* power of two                             */
    uint32_t rows;              /* rows per chunk, a power of two           */
    uint32_t shift;             /* log2(rows)                               */
    uint32_t mask;              /* rows - 1                                 */
    int32_t max_archetypes;
    uint64_t tick;              /* the world's tick: what a write records   */
    int32_t hold_trim;          /* while not 0, no archetype gives chunks
                                   back: a batch of moves, its room reserved
                                   beforehand, is under way                 */
    tecs__lut **luts;           /* by component id: its lookup table, or NULL */
    int32_t cap_luts;
    struct tecs__toghot **toghots; /* the short paths of toggle handles     */
    int32_t ntoghots;
    int32_t cap_toghots;
} tecs__arch_state;

/* The short path of the toggle handles of one enableable component
** (tecs_handle_enable reads hot inline): one chunk of one archetype, open while
** the chunk is marked as entered at the world's tick and its bits stay
** where they are. Made by the first tecs_handle_init of comp, at a fixed
** address from then on; opened by tecs__toghot_open, closed (n_ 0) when
** the tick moves on (tecs__arch_tick_next) and wherever a chunk group of
** its archetype is set, freed or replaced. An archetype it was opened on
** keeps that column loose (tog_loose): inline toggles do not count. */
typedef struct tecs__toghot {
    tecs_comp_t comp;
    tecs_handle_bits_t hot;
} tecs__toghot;

#define TECS__TOGHOT_NONE 0xffffffffu

/* The short path of c, or NULL if none is made. */
static inline tecs_handle_bits_t *tecs__toghot_find(const tecs__arch_state *s, tecs_comp_t c)
{
    for (int32_t i = 0; i < s->ntoghots; i++)
        if (s->toghots[i]->comp == c)
            return &s->toghots[i]->hot;
    return NULL;
}
/* The short path of c, made if there is none; NULL with TECS_ENOMEM
** recorded. */
tecs_handle_bits_t *tecs__toghot_make(tecs_world_t *w, tecs_comp_t c);
/* Open c's short path (made) on the chunk of row of a, whose bit column
** j is c's: the caller has checked that the chunk is entered at the tick
** and that the inline form may toggle c there. */
void tecs__toghot_open(tecs_world_t *w, tecs_handle_bits_t *hot, tecs_archetype_t *a,
                       int32_t j, uint32_t row);
/* Close a short path: no archetype, no rows, no bits (as the checker
** expects a closed one). */
static inline void tecs__toghot_close(tecs_handle_bits_t *hot)
{
    *hot = (tecs_handle_bits_t){ TECS__TOGHOT_NONE, 0, 0, NULL };
}
/* Close every short path (the tick moves on, an archetype's chunks move). */
static inline void tecs__toghots_close(tecs__arch_state *s)
{
    for (int32_t i = 0; i < s->ntoghots; i++)
        tecs__toghot_close(&s->toghots[i]->hot);
}
/* Move the world's tick on by one: the new tick. Every change of the tick
** goes through here, as the short paths of toggle handles rely on it. */
static inline uint64_t tecs__arch_tick_next(tecs__arch_state *s)
{
    if (s->ntoghots)
        tecs__toghots_close(s);
    return ++s->tick;
}

/* The lookup table of c, or NULL if none is made. */
static inline tecs__lut *tecs__lut_find(const tecs__arch_state *s, tecs_comp_t c)
{
    return (int32_t)c < s->cap_luts ? s->luts[c] : NULL;
}
/* The lookup table of c, made if there is none; NULL with TECS_ENOMEM
** recorded. */
tecs__lut *tecs__lut_make(tecs_world_t *w, tecs_comp_t c);

/* The layer's accessors take the objects and the layer's state, not the
** world: the macros of the same name pass &w->arch (&w->comp for
** tecs__col_info), so they read as before at the call sites. */

/* The column pointers of chunk k (see tecs_archetype_t.cols). */
static inline char *const *tecs__kcols(const tecs_archetype_t *a, uint32_t k)
{
    return a->cols + (size_t)k * (uint32_t)a->stride;
}

/* The column pointers of the chunk holding row. */
#define tecs__chunk_of(a, w, row) tecs__chunk_of_in((a), &(w)->arch, (row))
static inline char *const *tecs__chunk_of_in(const tecs_archetype_t *a,
                                             const tecs__arch_state *s, uint32_t row)
{
    return tecs__kcols(a, row >> s->shift);
}

/* The ticks of chunk k (see tecs_archetype_t.ticks). */
static inline uint64_t *tecs__chunk_ticks(const tecs_archetype_t *a, uint32_t k)
{
    return a->ticks + (size_t)k * (uint32_t)a->ncols;
}

/* Tick column j of a chunk (its column pointers cp): rows changed ticks,
** then rows added ticks. */
static inline uint64_t *tecs__chunk_rt(const tecs_archetype_t *a, char *const *cp, int32_t j)
{
    return (uint64_t *)(void *)cp[1 + a->ncols + a->ntog + j];
}

/* The tick column of component c in a, or -1. */
static inline int32_t tecs__arch_rt(const tecs_archetype_t *a, tecs_comp_t c)
{
    for (int32_t j = 0; j < a->nrt; j++)
        if (a->rt_comp[j] == c)
            return j;
    return -1;
}

/* Record a write to column col at row (and the row's tick, if its
** component keeps ticks per row). */
#define tecs__arch_touch(w, a, col, row) tecs__arch_touch_in(&(w)->arch, (a), (col), (row))
static inline void tecs__arch_touch_in(const tecs__arch_state *s, tecs_archetype_t *a,
                                       int32_t col, uint32_t row)
{
    tecs__chunk_ticks(a, row >> s->shift)[col] = s->tick;
    if (TECS__UNLIKELY(a->nrt)) {
        int32_t j = tecs__arch_rt(a, a->col_comp[col]);
        if (j >= 0)
            tecs__chunk_rt(a, tecs__kcols(a, row >> s->shift), j)[row & s->mask] = s->tick;
    }
}

/* Record writes to column col at rows [row, row + n) of one chunk. */
void tecs__arch_touch_rows(const tecs__arch_state *s, tecs_archetype_t *a, int32_t col,
                           uint32_t row, uint32_t n);

/* The rows [row, row + n) of one chunk got their tick columns' components
** now (each only: j, or all: -1): changed and added ticks. */
void tecs__arch_rt_enter(const tecs__arch_state *s, tecs_archetype_t *a, int32_t j,
                         uint32_t row, uint32_t n);

/* Record a row entering the chunk holding row. */
#define tecs__arch_entered(w, a, row) tecs__arch_entered_in(&(w)->arch, (a), (row))
static inline void tecs__arch_entered_in(const tecs__arch_state *s, tecs_archetype_t *a,
                                         uint32_t row)
{
    a->chunks[row >> s->shift].entered = s->tick;
    if (TECS__UNLIKELY(a->nrt))
        tecs__arch_rt_enter(s, a, -1, row, 1);
}

/* Record rows [row, row + n) entering (n > 0). */
static inline void tecs__arch_entered_n(const tecs__arch_state *s, tecs_archetype_t *a,
                                        uint32_t row, uint32_t n)
{
    for (uint32_t k = row >> s->shift; k <= (row + n - 1) >> s->shift; k++)
        a->chunks[k].entered = s->tick;
    if (TECS__UNLIKELY(a->nrt))
        for (uint32_t r = row; r < row + n;) {
            uint32_t m = s->rows - (r & s->mask);
            m = m < row + n - r ? m : row + n - r;
            tecs__arch_rt_enter(s, a, -1, r, m);
            r += m;
        }
}

/* The tick of the last write to column col (or, col -1, the last row
** entering) of the chunk holding row: a row that enters counts as written
** in every column. (A component with ticks per row: tecs__arch_row_tick.) */
#define tecs__arch_changed_at(w, a, col, row) \
    tecs__chunk_changed_at((a), (row) >> (w)->arch.shift, (col))
static inline uint64_t tecs__chunk_changed_at(const tecs_archetype_t *a, uint32_t k, int32_t col)
{
    const uint64_t *t = tecs__chunk_ticks(a, k);
    uint64_t in = a->chunks[k].entered;
    return col >= 0 && t[col] > in ? t[col] : in;
}

/* Column col of a chunk (its column pointers cp): its first value. */
static inline char *tecs__chunk_col(char *const *cp, int32_t col)
{
    return cp[1 + col];
}

/* Bit column j of a chunk (its column pointers cp), as 64-bit words. */
static inline uint64_t *tecs__chunk_bits(const tecs_archetype_t *a, char *const *cp, int32_t j)
{
    return (uint64_t *)(void *)cp[1 + a->ncols + j];
}

/* Is bit column j's bit set (the component disabled) at row? */
#define tecs__arch_bit(a, w, j, row) tecs__arch_bit_in((a), &(w)->arch, (j), (row))
static inline bool tecs__arch_bit_in(const tecs_archetype_t *a, const tecs__arch_state *s,
                                     int32_t j, uint32_t row)
{
    uint32_t i = row & s->mask;
    return (tecs__chunk_bits(a, tecs__chunk_of_in(a, s, row), j)[i >> 6] >> (i & 63)) & 1u;
}

/* Set (on) or clear the bit of column j at row, counting it in
** ndisabled, and record the row as entered now (a query that skips
** disabled rows sees it come or go); false if it was so already. */
#define tecs__arch_bit_put(w, a, j, row, on) \
    tecs__arch_bit_put_in(&(w)->arch, (a), (j), (row), (on))
static inline bool tecs__arch_bit_put_in(const tecs__arch_state *s, tecs_archetype_t *a,
                                         int32_t j, uint32_t row, bool on)
{
    uint32_t i = row & s->mask;
    uint64_t *word = &tecs__chunk_bits(a, tecs__chunk_of_in(a, s, row), j)[i >> 6];
    uint64_t bit = (uint64_t)1 << (i & 63);
    if (((*word & bit) != 0) == on)
        return false;
    *word ^= bit;
    if (TECS__LIKELY(!tecs__arch_loose(a, j)))
        a->ndisabled[j] += on ? 1 : -1;
    a->chunks[row >> s->shift].entered = s->tick;   /* as if it entered */
    if (TECS__UNLIKELY(a->nrt)) {
        int32_t t = tecs__arch_rt(a, a->tog_comp[j]);
        if (t >= 0)
            tecs__arch_rt_enter(s, a, t, row, 1);
    }
    return true;
}

/* The entity column of a chunk (its column pointers cp). */
static inline tecs_entity_t *tecs__chunk_ents(char *const *cp)
{
    return (tecs_entity_t *)(void *)cp[0];
}

/* Column col's value at row. */
#define tecs__col_ptr(a, w, col, row) tecs__col_ptr_in((a), &(w)->arch, (col), (row))
static inline void *tecs__col_ptr_in(const tecs_archetype_t *a, const tecs__arch_state *s,
                                     int32_t col, uint32_t row)
{
    return tecs__chunk_col(tecs__chunk_of_in(a, s, row), col) +
           (size_t)(row & s->mask) * a->col_size[col];
}

/* The entity column's slot at row. */
#define tecs__ent_ptr(a, w, row) tecs__ent_ptr_in((a), &(w)->arch, (row))
static inline tecs_entity_t *tecs__ent_ptr_in(const tecs_archetype_t *a,
                                              const tecs__arch_state *s, uint32_t row)
{
    return tecs__chunk_ents(tecs__chunk_of_in(a, s, row)) + (row & s->mask);
}

/* The allocated chunks have room for n more rows. */
#define tecs__arch_has_rows(w, a, n) tecs__arch_has_rows_in(&(w)->arch, (a), (n))
static inline bool tecs__arch_has_rows_in(const tecs__arch_state *s, const tecs_archetype_t *a,
                                          int32_t n)
{
    return (int64_t)a->count + n <= ((int64_t)a->nchunks << s->shift);
}

/* The registry entry of column col (entries move when the registry grows,
** so archetypes keep ids, not pointers). */
#define tecs__col_info(w, a, col) tecs__col_info_in(&(w)->comp, (a), (col))
static inline const tecs__comp *tecs__col_info_in(const tecs__comp_state *s,
                                                  const tecs_archetype_t *a, int32_t col)
{
    return &s->comps[a->col_comp[col]];
}

#endif /* TECS_ARCHETYPE_H */

#if defined(TECS__WORLD_DONE) && !defined(TECS_ARCHETYPE_INLINES)
#define TECS_ARCHETYPE_INLINES

/* After a row left a, its count a multiple of the chunk rows: give chunks
** back once the rows and the spare need at most a quarter of them, or no
** row is left. */
static inline void tecs__arch_remove_trim(tecs_world_t *w, tecs_archetype_t *a)
{
    uint32_t n = (uint32_t)a->nchunks;
    if (TECS__UNLIKELY(n > 1) && (a->count == 0 || (uint32_t)a->count >> w->arch.shift < n >> 2))
        tecs__arch_trim(w, a);
}

static inline tecs_err_t tecs__arch_reserve_rows(tecs_world_t *w, tecs_archetype_t *a, int32_t n)
{
    if (TECS__LIKELY(tecs__arch_has_rows(w, a, n)))
        return TECS_OK;
    return tecs__arch_grow_rows(w, a, n);
}

/* Copy one plain value; small sizes become single moves. */
static inline void tecs__copy_value(void *dst, const void *src, uint32_t size)
{
    if (TECS__LIKELY(size == 8)) {       /* two floats, an id: the common case */
        memcpy(dst, src, 8);
        return;
    }
    if (size == 4) {                     /* a float, an int */
        memcpy(dst, src, 4);
        return;
    }
    switch (size) {
    case 12: memcpy(dst, src, 12); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, size); break;
    }
}

/* Zero one plain value. */
static inline void tecs__zero_value(void *dst, uint32_t size)
{
    static const char zero[16];
    if (size <= 16)
        tecs__copy_value(dst, zero, size);
    else
        memset(dst, 0, size);
}

/* tecs__arch_fill_hole for an archetype without hooks: plain copies. */
static inline void tecs__fill_hole_plain(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    uint32_t last = (uint32_t)a->count - 1;
    char *const *hc = tecs__chunk_of(a, w, row), *const *lc = tecs__chunk_of(a, w, last);
    const size_t hi = row & w->arch.mask, li = last & w->arch.mask;
    const uint32_t *size = a->col_size;
    for (int32_t c = 0, n = a->ncols; c < n; c++)
        tecs__copy_value(hc[1 + c] + hi * size[c], lc[1 + c] + li * size[c], size[c]);
    tecs_entity_t moved = tecs__chunk_ents(lc)[li];
    tecs__chunk_ents(hc)[hi] = moved;
    w->ei.recs[TECS_ENTITY_INDEX(moved)].row = row;
}

/* tecs__arch_remove_row, for a caller that has read a->bare already (bare
** true: no bit or tick column to mind, no hook to run). */
static TECS__INLINE void tecs__arch_remove_row_as(tecs_world_t *w, tecs_archetype_t *a,
                                                  uint32_t row, bool bare)
{
    if (TECS__UNLIKELY(!bare) && (a->ntog | a->nrt)) {
        if (a->ntog)
            tecs__arch_bits_remove(w, a, row);
        if (a->nrt)
            tecs__arch_rt_remove(w, a, row);
    }
    if (row != (uint32_t)a->count - 1) {
        /* The last row enters the hole's place (its ticks by row, if any,
        ** go with it): the chunk's rows changed. */
        a->chunks[row >> w->arch.shift].entered = w->arch.tick;
        if (bare || a->plain)
            tecs__fill_hole_plain(w, a, row);
        else
            tecs__arch_fill_hole(w, a, row);
    }
    --a->count;
    if ((a->count & (int32_t)w->arch.mask) == 0)
        tecs__arch_remove_trim(w, a);
}

static inline void tecs__arch_remove_row(tecs_world_t *w, tecs_archetype_t *a, uint32_t row)
{
    tecs__arch_remove_row_as(w, a, row, a->bare);
}

static inline tecs_archetype_t *tecs__rec_arch(const tecs_world_t *w, const tecs__record *r)
{
    return w->arch.archs[r->arch & TECS__ARCH_MASK];
}

/* The archetype a leads to by adding (removing) c, if that edge is cached;
** else NULL (tecs__arch_with / tecs__arch_without find or make it). */
static inline tecs_archetype_t *tecs__edge_add(const tecs_world_t *w, const tecs_archetype_t *a,
                                               tecs_comp_t c)
{
    return c < (tecs_comp_t)a->nedges && a->edge_add[c] != TECS__NO_EDGE
               ? w->arch.archs[a->edge_add[c]] : NULL;
}

static inline tecs_archetype_t *tecs__edge_rem(const tecs_world_t *w, const tecs_archetype_t *a,
                                               tecs_comp_t c)
{
    return c < (tecs_comp_t)a->nedges && a->edge_rem[c] != TECS__NO_EDGE
               ? w->arch.archs[a->edge_rem[c]] : NULL;
}

#endif /* TECS_ARCHETYPE_INLINES */
