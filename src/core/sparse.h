/*
** sparse.h — the sparse sets of sparse components (sparse.c). Its types,
** its state and its interface; then, in private.h's second pass
** (TECS__WORLD_DONE, once tecs_world_t is complete), its inline functions:
** the lookups the engine, the front end and the query code call. Included
** by private.h only.
*/
#ifndef TECS_SPARSE_H
#define TECS_SPARSE_H

#define TECS__SPARSE_ABSENT 0xffffffffu    /* a page's pos of a slot not in the set */

/* One page of a set: 1 << shift consecutive entity slots. Slot offset i
** has an entry at ents + i * stride: the member's generation (a uint32_t;
** 0, which no id has, when the slot is not a member), then its value at
** voff, so that a lookup by id reads one cache line. */
typedef struct tecs__spage {
    void *raw;                  /* the block to free                        */
    char *ents;                 /* the entries                              */
    int32_t count;              /* members in this page                     */
    uint32_t pos[];             /* per slot offset: its place in dense, or
                                   TECS__SPARSE_ABSENT                      */
} tecs__spage;

/* The set of one sparse component. Its first fields are the ones a sparse
** handle reads and writes inline, as tecs_handle_set_t (tinyecs.h) lays
** them out (sparse.c asserts it). */
typedef struct tecs__sparse {
    tecs__spage **pages;        /* by slot >> shift; NULL: no page there    */
    tecs_entity_t *dense;       /* the members' ids, in no order            */
    int32_t count;              /* members                                  */
    int32_t cap;                /* room in dense                            */
    int32_t npages;             /* length of pages                          */
    uint32_t shift;             /* a page holds 1 << shift slots            */
    uint32_t mask;              /* (1 << shift) - 1                         */
    uint32_t stride;            /* bytes of an entry                        */
    uint32_t head;              /* a page's first entry's offset in it      */
    uint64_t added;             /* tick of the last member that joined      */
    uint64_t removed;           /* tick of the last member that left        */
    const tecs_handle_listen_t *listen; /* its component's listener counts
                                   in the registry (component.c keeps it)   */
    uint32_t size;              /* value bytes; 0: a tag                    */
    uint32_t voff;              /* offset of the value in an entry          */
    tecs__spage *spare;         /* an emptied page kept for the next one    */
    uint64_t changed;           /* tick of the last write to a value        */
    tecs_comp_t comp;
} tecs__sparse;

typedef struct tecs__sparse_state {
    tecs__sparse **sets;        /* every set made, in the order made        */
    int32_t nsets;
    int32_t cap_sets;
    int32_t nfilled;            /* sets with at least one member            */
} tecs__sparse_state;

/* Make sure that slot can join c's set (c sparse): the set, its page and
** room in its member list. TECS_OK, or TECS_ENOMEM recorded; either way
** no member and no value changed. */
static inline tecs_err_t tecs__sparse_reserve(tecs_world_t *w, tecs_comp_t c, uint32_t slot);
tecs_err_t tecs__sparse_reserve_slow(tecs_world_t *w, tecs_comp_t c, uint32_t slot);
/* tecs__sparse_reserve with room for n members more in the list. */
tecs_err_t tecs__sparse_reserve_n(tecs_world_t *w, tecs_comp_t c, uint32_t slot, int32_t n);
/* Make e a member of c's set (reserved, not a member): @return where its
** value goes, raw memory for the caller to construct (a tag: a marker). */
static inline void *tecs__sparse_insert(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e);
/* Drop the member at slot from c's set; its value is destroyed already. */
static inline void tecs__sparse_erase(tecs_world_t *w, tecs_comp_t c, uint32_t slot);
/* tecs__sparse_erase emptied slot's page, or the set: free the page (or
** keep it as the spare), count the set out of nfilled. @return TECS_OK
** (so that a short path ends in it as a tail call). */
tecs_err_t tecs__sparse_emptied(tecs_world_t *w, tecs__sparse *s, uint32_t slot);
/* Write the entry at `at` of a joining member: its generation, its value
** zeroed (tecs__sparse_join's entries of other than 8 bytes): TECS_OK. */
tecs_err_t tecs__sparse_mark(const tecs__sparse *s, char *at, uint32_t gen);
/* Run the destructor of every sparse value (world free, before any layer
** tears down); tecs__sparse_fini then frees the memory. */
void tecs__sparse_destroy_values(tecs_world_t *w);
/* Destroy every sparse value and empty every set (tecs_world_reset); the
** entities are the caller's. */
void tecs__sparse_clear(tecs_world_t *w);
void tecs__sparse_fini(tecs_world_t *w);
/* Fill the sparse fields of a handle of c (sparse) from its set, made if c
** has none: TECS_OK, or TECS_ENOMEM recorded. */
tecs_err_t tecs__sparse_handle(tecs_world_t *w, tecs_comp_t c, tecs_handle_t *out);
/* Verify every set: members alive, pages and member list agreeing, the
** counts (tecs_world_check). */
tecs_err_t tecs__sparse_verify(tecs_world_t *w);

#endif /* TECS_SPARSE_H */

#if defined(TECS__WORLD_DONE) && !defined(TECS_SPARSE_INLINES)
#define TECS_SPARSE_INLINES

/* The entry of slot in s, or NULL if its page is not there. */
static inline char *tecs__sparse_entry(const tecs__sparse *s, uint32_t slot)
{
    uint32_t p = slot >> s->shift;
    tecs__spage *pg = p < (uint32_t)s->npages ? s->pages[p] : NULL;
    return pg ? pg->ents + (size_t)(slot & s->mask) * s->stride : NULL;
}

/* The value of the sparse component c at entity slot, or NULL if that slot
** is not a member (for a tag, a marker pointer, never to be read). The slot
** is the caller's to have checked alive. */
static inline void *tecs__sparse_get(const tecs_world_t *w, tecs_comp_t c, uint32_t slot)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    char *at = s ? tecs__sparse_entry(s, slot) : NULL;
    uint32_t gen;
    if (at == NULL || (memcpy(&gen, at, sizeof gen), gen == 0))
        return NULL;
    return at + s->voff;
}

/* Is the entry at `at` e's (e a member)? (No id has generation 0, the
** mark of an entry with no member.) */
static TECS__INLINE bool tecs__sparse_is(const char *at, tecs_entity_t e)
{
    uint32_t gen;
    memcpy(&gen, at, sizeof gen);
    return (gen == TECS_ENTITY_GENERATION(e)) & (gen != 0);
}

/* The value of the sparse component c of entity e, or NULL if e is not a
** member (dead, or alive without c); a tag's as tecs__sparse_get. A member
** is alive, so this needs no record. */
static inline void *tecs__sparse_get_id(const tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    char *at = s ? tecs__sparse_entry(s, TECS_ENTITY_INDEX(e)) : NULL;
    if (at == NULL || !tecs__sparse_is(at, e))
        return NULL;
    return at + s->voff;
}

/* The members of sparse component c. */
static inline int32_t tecs__sparse_count(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    return s ? s->count : 0;
}

/* The members' ids (tecs__sparse_count of them), in no order; valid until
** the set next changes. */
static inline const tecs_entity_t *tecs__sparse_members(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    return s ? s->dense : NULL;
}

static inline tecs_err_t tecs__sparse_reserve(tecs_world_t *w, tecs_comp_t c, uint32_t slot)
{
    const tecs__sparse *s = w->comp.comps[c].set;
    uint32_t p;
    if (TECS__LIKELY(s != NULL && s->count < s->cap &&
                     (p = slot >> s->shift) < (uint32_t)s->npages && s->pages[p] != NULL))
        return TECS_OK;
    return tecs__sparse_reserve_slow(w, c, slot);
}

/* The member list's side of making e a member of s at slot offset i of
** page pg (reserved, free): its place, the counts, the added tick. */
static TECS__INLINE void tecs__sparse_enlist(tecs_world_t *w, tecs__sparse *s, tecs__spage *pg,
                                             uint32_t i, tecs_entity_t e)
{
    int32_t n = s->count;
    pg->pos[i] = (uint32_t)n;
    pg->count++;
    s->dense[n] = e;
    s->count = n + 1;
    s->added = w->arch.tick;
    if (TECS__UNLIKELY(n == 0)) {
        w->sparse.nfilled++;
        tecs__gate_put(&w->base, TECS__GATE_SPARSE, true);
    }
}

/* Make e a member of s at entry `at` of slot offset i of page pg (found,
** reserved, free). @return where its value goes. */
static TECS__INLINE void *tecs__sparse_put(tecs_world_t *w, tecs__sparse *s, tecs__spage *pg,
                                           uint32_t i, char *at, tecs_entity_t e)
{
    uint32_t gen = TECS_ENTITY_GENERATION(e);
    memcpy(at, &gen, sizeof gen);
    tecs__sparse_enlist(w, s, pg, i, e);
    return at + s->voff;
}

static inline void *tecs__sparse_insert(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    tecs__sparse *s = w->comp.comps[c].set;
    uint32_t slot = TECS_ENTITY_INDEX(e), i = slot & s->mask;
    tecs__spage *pg = s->pages[slot >> s->shift];
    return tecs__sparse_put(w, s, pg, i, pg->ents + (size_t)i * s->stride, e);
}

/* Make e a member of s at the free entry `at` (slot offset i of page pg,
** reserved), its value zeroed. The bookkeeping comes first, so that an
** entry of 8 bytes (a value of up to 4 bytes) is the last store, whole:
** the generation, then zeros; other entries are tecs__sparse_mark's (a
** tail call). @return TECS_OK. */
static TECS__INLINE tecs_err_t tecs__sparse_join(tecs_world_t *w, tecs__sparse *s,
                                                 tecs__spage *pg, uint32_t i, char *at,
                                                 tecs_entity_t e)
{
    tecs__sparse_enlist(w, s, pg, i, e);
    if (TECS__LIKELY(s->stride == 8)) {
        uint32_t whole[2] = { TECS_ENTITY_GENERATION(e), 0 };
        memcpy(at, whole, sizeof whole);
        return TECS_OK;
    }
    return tecs__sparse_mark(s, at, TECS_ENTITY_GENERATION(e));
}

/* Drop the member at entry `at` (slot offset i of page pg) from s; its
** value is destroyed already. The last member of dense fills its place
** (written even when it is the member itself, whose place then is past
** the list's end and whose pos is then marked absent: no branch). The
** stores whose operands are done with come first, so that tecs_remove's
** short path stays a leaf. @return false if that emptied the page or the set, which
** tecs__sparse_emptied then settles. */
static TECS__INLINE bool tecs__sparse_leave(tecs_world_t *w, tecs__sparse *s, tecs__spage *pg,
                                            uint32_t i, char *at)
{
    uint32_t place = pg->pos[i], none = 0;
    int32_t n = s->count - 1;
    s->removed = w->arch.tick;
    s->count = n;
    memcpy(at, &none, sizeof none);
    tecs_entity_t last = s->dense[n];
    uint32_t ls = TECS_ENTITY_INDEX(last);
    s->dense[place] = last;
    s->pages[ls >> s->shift]->pos[ls & s->mask] = place;
    pg->pos[i] = TECS__SPARSE_ABSENT;
    return (--pg->count != 0) & (n != 0);
}

/* Drop the member at entry `at` (slot offset i of page pg, slot slot) from
** s; its value is destroyed already. */
static TECS__INLINE void tecs__sparse_cut(tecs_world_t *w, tecs__sparse *s, tecs__spage *pg,
                                          uint32_t i, char *at, uint32_t slot)
{
    if (TECS__UNLIKELY(!tecs__sparse_leave(w, s, pg, i, at)))
        tecs__sparse_emptied(w, s, slot);
}

static inline void tecs__sparse_erase(tecs_world_t *w, tecs_comp_t c, uint32_t slot)
{
    tecs__sparse *s = w->comp.comps[c].set;
    tecs__spage *pg = s->pages[slot >> s->shift];
    uint32_t i = slot & s->mask;
    tecs__sparse_cut(w, s, pg, i, pg->ents + (size_t)i * s->stride, slot);
}

#endif /* TECS_SPARSE_INLINES */
