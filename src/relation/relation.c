/*
** relation.c — relationships and hierarchies: pairs (relation, target),
** the built-in ChildOf, and what a target's destroy does to its sources.
**
** Two stores, one per kind of relation:
**
**   ChildOf    a tag in the child's archetype (so queries and archetypes
**              see who has a parent) and, per entity slot, a link record
**              in pages of LINK_PAGE slots: { parent, next, prev }, the
**              siblings a ring. The parent's head, { first child, count },
**              is an entry of the head map. No value lives in a row, so
**              nothing a user writes through a pointer can break a link.
**   user       a pair is a node { src, tgt, next_src, next_tgt, prev_tgt }
**              in its relation's pool, its value beside it in `vals`; the
**              entity's pairs of the relation are a list from the head
**              entry (rel, source), the sources of a target a ring from the
**              entry (rel, target). No archetype sees them: adding or
**              removing a pair moves no row.
**
** The head map is keyed by (relation index + 1) << 32 | slot: open
** addressing, linear probing, deletion by backward shift. Slots name
** entities: no pair ever points at a dead entity (a destroy takes its
** pairs with it first), so a slot with a link or an entry is alive.
**
** Every change reserves what it needs first (map room, a link page, a
** node), then changes the core (the ChildOf tag's add or remove, which may
** fail and changes nothing then), then links, which cannot fail. The stamp
** counts changes, so a walk notices one and stops.
**
** A destroy (the bus's on_destroy, before the core touches the entity):
** an entity with no children and no sources loses its own pairs and goes.
** Otherwise the add-on gathers what dies with it (its ChildOf subtree, the
** sources of relations whose cleanup is DESTROY, transitively), refuses if
** one of those is the target of a REFUSE relation, then destroys them in
** reverse order of discovery (children before their parents), each losing
** its pairs as it goes, and returns so the core destroys the entity.
**
** The relation components and the depth tags are vetoed (the bus's
** rel_on_veto) for every change: the add-on moves its children's rows itself
** (tecs__move_tags), which asks no veto.
**
** Indexes read a value relation's pairs through the bus's tecs__values
** (below: "values lent to indexes"), never by name: before a value
** changes, the add-on asks the vetoes with bus.target the pair's target
** (a unique index refuses a key, every index reserves room), after its
** own reservations, so a refusal changes nothing.
**
** Calls: base.c, entity_index.c, component.c, event.c, archetype.c,
** store.c, command.c (settle, the queued calls).
*/
#include "../core/private.h"
#include "internal.h"

#include <stdlib.h>

#include <stdio.h>

#define NONE       0xffffffffu
#define TAG_FREE   0xfffffffeu      /* a base tag no base holds (tag_base) */
#define LINK_SHIFT 10
#define LINK_PAGE  (1u << LINK_SHIFT)

typedef struct rel_link {       /* a ChildOf child's, by its slot            */
    uint32_t parent;            /* the parent's slot, or NONE: no parent     */
    uint32_t next, prev;        /* the ring of its siblings                  */
    tecs_comp_t btag;           /* a base's tag (IsA), or 0                  */
} rel_link;

typedef struct rel_page rel_page;

typedef struct rel_node {       /* a user relation's pair                    */
    uint32_t src, tgt;          /* slots; src NONE: free (next_src: next free) */
    uint32_t next_src;          /* the source's next pair of the relation    */
    uint32_t next_tgt, prev_tgt; /* the ring of the target's sources         */
} rel_node;

typedef struct rel_head {
    uint64_t key;               /* (relation index + 1) << 32 | slot; 0: empty */
    uint32_t src;               /* user: the slot's first pair as a source   */
    uint32_t tgt;               /* user: the first pair targeting the slot;
                                   ChildOf: the slot's first child           */
    uint32_t nsrc, ntgt;        /* pairs of each kind (ChildOf: children)    */
} rel_head;

typedef struct rel_info {
    tecs_comp_t comp;
    uint32_t size;              /* value bytes; 0: a tag                     */
    bool exclusive;
    bool childof;
    bool no_clone;              /* a clone does not copy the source's pairs  */
    uint8_t cleanup;            /* tecs_cleanup_t                            */
    rel_node *nodes;            /* user: the pool, cap long                  */
    unsigned char *vals;        /* user: a value per node                    */
    uint32_t nnodes, cap;       /* nodes used at least once, allocated       */
    uint32_t free;              /* first free node, or NONE                  */
    int64_t npairs;
} rel_info;

/* The pair whose ADD or REMOVE event is being raised, as membership
** tests read it: a query reads a pair as gone while its REMOVE runs
** (unless it is a retarget's: the entity holds a target throughout); a
** membership test told to read the relation as on the other side of the
** event (tecs__view.flip) reads the world without the pair or, for a
** retarget's ADD, with the old target in place of the new. */
typedef struct rel_ann {
    tecs_entity_t e;            /* the source, or 0: none                    */
    tecs_comp_t rel;
    tecs_entity_t t;            /* the target                                */
    tecs_entity_t other;        /* a retarget's other target, else 0         */
    bool leaving;               /* its REMOVE                                */
} rel_ann;

struct tecs__rel_state {
    rel_info *rels;
    int32_t nrels, cap_rels;
    int32_t *rel_of;            /* component id -> relation index + 1 (0)    */
    int32_t cap_rel_of;
    int32_t childof;            /* ChildOf's index, or -1 until made         */
    rel_head *map;
    uint32_t map_cap, map_n;    /* cap a power of two (or 0)                 */
    rel_page **pages;           /* by slot >> LINK_SHIFT                     */
    int32_t npages;
    uint64_t stamp;             /* bumped at every change: walks stop        */
    bool cleaning;              /* a destroy's gathered entities die         */
    bool asking;                /* the add-on asks the vetoes about a value  */
    int32_t ndestroy;           /* user relations with cleanup DESTROY       */
    int32_t nrefuse;            /* relations with cleanup REFUSE             */
    tecs_entity_t *kill;        /* a destroy's gathered entities             */
    int32_t nkill, cap_kill;
    uint32_t *seen;             /* their slots, a set (when ndestroy > 0)    */
    uint32_t cap_seen;
    tecs_comp_t *depth;         /* the depth tags: depth[d], 1 <= d < ndepth */
    int32_t ndepth, cap_depth;
    rel_ann ann;                /* the pair whose ADD / REMOVE is raised     */
    tecs_entity_t gone;         /* the child being destroyed (its link gone
                                   before the core's events of its death) ... */
    uint32_t gone_parent;       /* ... and its parent's slot, as membership
                                   tests read it until then                 */
    int32_t wild;               /* caches and membership observers with a
                                   (*, t) term: every relation's events     */
    uint32_t *moves;            /* a change's slots that move ...            */
    tecs_archetype_t **mto;     /* ... and their targets                     */
    int32_t nmoves, cap_moves, cap_mto;
    int32_t isa;                /* IsA's index, or -1 until made             */
    uint32_t *tag_base;         /* component id -> the slot of the base whose
                                   tag it is, TAG_FREE for a base tag no
                                   base has now, NONE for no base tag (once
                                   IsA is made)                              */
    tecs_comp_t min_btag;       /* the lowest id a base's tag ever had       */
    tecs_comp_t *spare;         /* base tags given back, to take again       */
    int32_t nspare, cap_spare;
    int32_t ntags;              /* base tags registered                      */
};

typedef struct tecs__rel_state rel_state;

/* ---- the head map -------------------------------------------------------- */

static inline uint64_t key_of(int32_t rel, uint32_t slot)
{
    return ((uint64_t)(uint32_t)(rel + 1) << 32) | slot;
}

static inline uint32_t hash_of(uint64_t key, uint32_t cap)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static rel_head *map_find(const rel_state *s, int32_t rel, uint32_t slot)
{
    if (s->map_n == 0)
        return NULL;
    uint64_t key = key_of(rel, slot);
    for (uint32_t i = hash_of(key, s->map_cap);; i = (i + 1) & (s->map_cap - 1)) {
        if (s->map[i].key == key)
            return &s->map[i];
        if (s->map[i].key == 0)
            return NULL;
    }
}

static void map_place(rel_head *map, uint32_t cap, const rel_head *h)
{
    uint32_t i = hash_of(h->key, cap);
    while (map[i].key != 0)
        i = (i + 1) & (cap - 1);
    map[i] = *h;
}

/* Room for n more entries (load at most 3/4). */
static tecs_err_t map_reserve(tecs_world_t *w, rel_state *s, uint32_t n)
{
    if ((uint64_t)(s->map_n + n) * 4 <= (uint64_t)s->map_cap * 3)
        return TECS_OK;
    uint64_t cap = s->map_cap ? s->map_cap : 64;
    while ((uint64_t)(s->map_n + n) * 4 > cap * 3)
        cap *= 2;
    if (cap > (1ull << 31))
        return tecs__err(w, TECS_ELIMIT, "too many relationship entries");
    rel_head *map = tecs__alloc(w, tecs__bytes(cap, sizeof *map));
    if (map == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory growing the relationship map");
    memset(map, 0, (size_t)cap * sizeof *map);
    for (uint32_t i = 0; i < s->map_cap; i++)
        if (s->map[i].key != 0)
            map_place(map, (uint32_t)cap, &s->map[i]);
    tecs__free(w, s->map, (size_t)s->map_cap * sizeof *s->map);
    s->map = map;
    s->map_cap = (uint32_t)cap;
    return TECS_OK;
}

/* The entry of (rel, slot), made if absent (room reserved). */
static rel_head *map_put(rel_state *s, int32_t rel, uint32_t slot)
{
    rel_head *h = map_find(s, rel, slot);
    if (h)
        return h;
    rel_head n = { .key = key_of(rel, slot), .src = NONE, .tgt = NONE };
    map_place(s->map, s->map_cap, &n);
    s->map_n++;
    return map_find(s, rel, slot);
}

/* Drop the entry at h: the entries after it move back into the gap. */
static void map_del(rel_state *s, rel_head *h)
{
    uint32_t mask = s->map_cap - 1, i = (uint32_t)(h - s->map);
    for (uint32_t j = (i + 1) & mask; s->map[j].key != 0; j = (j + 1) & mask) {
        uint32_t home = hash_of(s->map[j].key, s->map_cap);
        /* j's entry may fill the gap at i if its home is not in (i, j]. */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            s->map[i] = s->map[j];
            i = j;
        }
    }
    s->map[i].key = 0;
    s->map_n--;
}

/* ---- ChildOf's links ----------------------------------------------------- */

/* A page of LINK_PAGE slots: their links, then a bit per slot for "has
** children" and one for "may hold or be the target of a user pair", so
** the common answer (no) costs no lookup in the head map. */
struct rel_page {
    rel_link links[LINK_PAGE];
    uint64_t parent[LINK_PAGE / 64];
    uint64_t paired[LINK_PAGE / 64];
};

static inline rel_page *page_of(const rel_state *s, uint32_t slot)
{
    uint32_t p = slot >> LINK_SHIFT;
    return p < (uint32_t)s->npages ? s->pages[p] : NULL;
}

static inline rel_link *link_at(const rel_state *s, uint32_t slot)
{
    rel_page *pg = page_of(s, slot);
    return pg ? &pg->links[slot & (LINK_PAGE - 1)] : NULL;
}

static inline bool bit_of(const uint64_t *bits, uint32_t slot)
{
    uint32_t i = slot & (LINK_PAGE - 1);
    return (bits[i >> 6] >> (i & 63)) & 1u;
}

static inline void bit_put(uint64_t *bits, uint32_t slot, bool on)
{
    uint32_t i = slot & (LINK_PAGE - 1);
    if (on)
        bits[i >> 6] |= (uint64_t)1 << (i & 63);
    else
        bits[i >> 6] &= ~((uint64_t)1 << (i & 63));
}

/* Has slot children (ChildOf)? */
static inline bool is_parent(const rel_state *s, uint32_t slot)
{
    const rel_page *pg = page_of(s, slot);
    return pg && bit_of(pg->parent, slot);
}

/* May slot hold or be the target of a user relation's pair? */
static inline bool is_paired(const rel_state *s, uint32_t slot)
{
    const rel_page *pg = page_of(s, slot);
    return pg && bit_of(pg->paired, slot);
}

static tecs_err_t link_reserve(tecs_world_t *w, rel_state *s, uint32_t slot)
{
    int32_t p = (int32_t)(slot >> LINK_SHIFT), old = s->npages;
    if (p >= old) {
        if (tecs__grow(w, (void **)&s->pages, &s->npages, p + 1, sizeof *s->pages))
            return TECS_ENOMEM;
        memset(s->pages + old, 0, (size_t)(s->npages - old) * sizeof *s->pages);
    }
    if (s->pages[p] == NULL) {
        rel_page *pg = tecs__alloc(w, sizeof *pg);
        if (pg == NULL)
            return tecs__err(w, TECS_ENOMEM, "out of memory linking a child");
        for (uint32_t i = 0; i < LINK_PAGE; i++)
            pg->links[i] = (rel_link){ NONE, NONE, NONE, 0 };
        memset(pg->parent, 0, sizeof pg->parent);
        memset(pg->paired, 0, sizeof pg->paired);
        s->pages[p] = pg;
    }
    return TECS_OK;
}

/* The parent slot of slot, or NONE. */
static inline uint32_t parent_slot(const rel_state *s, uint32_t slot)
{
    const rel_link *l = link_at(s, slot);
    return l ? l->parent : NONE;
}

/* The archetype of the entity in slot p, or NULL if none lives there (a
** world reset announces its deaths before it clears the links). */
static inline tecs_archetype_t *slot_arch(const tecs_world_t *w, uint32_t p)
{
    const tecs__record *r = &w->ei.recs[p];
    return r->arch < TECS__ARCH_RETIRED ? tecs__rec_arch(w, r) : NULL;
}

static inline tecs_entity_t id_of(const tecs_world_t *w, uint32_t slot)
{
    return tecs__make_id(slot, w->ei.recs[slot].gen);
}

/* Link child (its page made) under parent (map room reserved). */
static void ring_join(rel_state *s, uint32_t child, uint32_t parent)
{
    rel_head *h = map_put(s, s->childof, parent);
    rel_link *c = link_at(s, child);
    c->parent = parent;
    if (h->ntgt++ == 0) {
        h->tgt = child;
        c->next = c->prev = child;
        bit_put(page_of(s, parent)->parent, parent, true);
        return;
    }
    rel_link *first = link_at(s, h->tgt), *last = link_at(s, first->prev);
    c->next = h->tgt;
    c->prev = first->prev;
    last->next = child;
    first->prev = child;
}

static void ring_leave(rel_state *s, uint32_t child)
{
    rel_link *c = link_at(s, child);
    rel_head *h = map_find(s, s->childof, c->parent);
    if (--h->ntgt == 0) {
        map_del(s, h);
        bit_put(page_of(s, c->parent)->parent, c->parent, false);
    } else {
        link_at(s, c->prev)->next = c->next;
        link_at(s, c->next)->prev = c->prev;
        if (h->tgt == child)
            h->tgt = c->next;
    }
    *c = (rel_link){ NONE, NONE, NONE, c->btag };   /* (a base keeps its tag) */
}

/* ---- user relations' nodes ----------------------------------------------- */

static tecs_err_t node_reserve_n(tecs_world_t *w, rel_info *ri, uint32_t k);

static tecs_err_t node_reserve(tecs_world_t *w, rel_info *ri)
{
    if (ri->free != NONE || ri->nnodes < ri->cap)
        return TECS_OK;
    return node_reserve_n(w, ri, 1);
}

/* Room for k nodes more past the used ones (the free list not counted). */
static tecs_err_t node_reserve_n(tecs_world_t *w, rel_info *ri, uint32_t k)
{
    if ((uint64_t)ri->nnodes + k <= ri->cap)
        return TECS_OK;
    uint64_t cap = ri->cap ? (uint64_t)ri->cap * 2 : 16;
    while (cap < (uint64_t)ri->nnodes + k)
        cap *= 2;
    if (cap >= NONE)
        return tecs__err(w, TECS_ELIMIT, "too many pairs of one relation");
    rel_node *n = tecs__realloc(w, ri->nodes, (size_t)ri->cap * sizeof *n,
                                tecs__bytes(cap, sizeof *n));
    if (n == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory adding a pair");
    ri->nodes = n;
    if (ri->size) {
        unsigned char *v = tecs__realloc(w, ri->vals, (size_t)ri->cap * ri->size,
                                         tecs__bytes(cap, ri->size));
        if (v == NULL) {
            /* The nodes' block grew alone: its size is the new one now. */
            rel_node *back = tecs__realloc(w, ri->nodes, tecs__bytes(cap, sizeof *n),
                                           (size_t)ri->cap * sizeof *n);
            if (back != NULL || ri->cap == 0)
                ri->nodes = back;
            else
                ri->cap = (uint32_t)cap;        /* cannot shrink: keep it whole */
            return tecs__err(w, TECS_ENOMEM, "out of memory adding a pair");
        }
        ri->vals = v;
    }
    ri->cap = (uint32_t)cap;
    return TECS_OK;
}

static uint32_t node_take(rel_info *ri)
{
    uint32_t n = ri->free;
    if (n != NONE)
        ri->free = ri->nodes[n].next_src;
    else
        n = ri->nnodes++;
    ri->npairs++;
    return n;
}

static void node_free(rel_info *ri, uint32_t n)
{
    ri->nodes[n] = (rel_node){ .src = NONE, .tgt = NONE, .next_src = ri->free };
    ri->free = n;
    ri->npairs--;
}

static inline void *node_val(const rel_info *ri, uint32_t n)
{
    return ri->vals + (size_t)n * ri->size;
}

/* Does anyone watch the events of relation rel (its own watchers, or a
** (*, t) term's)? */
static inline bool rel_watched(const tecs_world_t *w, tecs_comp_t rel)
{
    return w->comp.comps[rel].watch > 0 || w->rel->wild > 0;
}

/* Raise the component event ev of relation rel for the pair (rel, t) of
** e, ptr its value (NULL: a tag), if anyone watches rel; other is a
** retarget's other target (its REMOVE: the new one, its ADD: the old),
** else 0. ADD and REMOVE change what e holds with no move (the bus's
** in_place), and announce the pair to the membership tests (s->ann). */
static void pair_event(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t rel,
                       tecs_entity_t t, tecs_entity_t other, const void *ptr)
{
    rel_state *s = w->rel;
    if (!rel_watched(w, rel))
        return;
    tecs_entity_t was = w->bus.target;
    bool was_in_place = w->bus.in_place;
    rel_ann ann = s->ann;
    w->bus.target = t;
    w->bus.in_place = ev != TECS__EV_SET;
    if (ev != TECS__EV_SET)
        s->ann = (rel_ann){ e, rel, t, other, ev == TECS__EV_REMOVE };
    tecs__emit_comp(w, ev, e, rel, ptr);
    s->ann = ann;
    w->bus.target = was;
    w->bus.in_place = was_in_place;
}

/* May e's pair (rel, t) take value (NULL: zeroes)? Asked of the vetoing
** listeners other than the add-on (indexes over rel's values) before the
** value changes, the last step that may fail. */
static tecs_err_t pair_veto(tecs_world_t *w, rel_state *s, const rel_info *ri, int ev,
                            tecs_entity_t e, tecs_entity_t t, const void *value)
{
    if (ri->size == 0 || w->comp.comps[ri->comp].veto <= 1)
        return TECS_OK;         /* the add-on's own veto alone */
    tecs_entity_t was = w->bus.target;
    w->bus.target = t;
    s->asking = true;
    tecs_err_t err = tecs__veto(w, ev, e, ri->comp, value, 1);
    s->asking = false;
    w->bus.target = was;
    return err;
}

/* The node of (src, tgt) in ri, or NONE; *prev its predecessor in src's
** list (NONE: the head). */
static uint32_t node_find(const rel_state *s, const rel_info *ri, int32_t rel, uint32_t src,
                          uint32_t tgt, uint32_t *prev)
{
    const rel_head *h = map_find(s, rel, src);
    uint32_t p = NONE;
    for (uint32_t n = h ? h->src : NONE; n != NONE; p = n, n = ri->nodes[n].next_src)
        if (ri->nodes[n].tgt == tgt) {
            if (prev)
                *prev = p;
            return n;
        }
    return NONE;
}

static void tgt_join(rel_state *s, rel_info *ri, int32_t rel, uint32_t n, uint32_t tgt)
{
    rel_head *h = map_put(s, rel, tgt);
    rel_node *x = &ri->nodes[n];
    x->tgt = tgt;
    if (h->ntgt++ == 0) {
        h->tgt = n;
        x->next_tgt = x->prev_tgt = n;
        return;
    }
    rel_node *first = &ri->nodes[h->tgt];
    x->next_tgt = h->tgt;
    x->prev_tgt = first->prev_tgt;
    ri->nodes[first->prev_tgt].next_tgt = n;
    first->prev_tgt = n;
}

static void tgt_leave(rel_state *s, rel_info *ri, int32_t rel, uint32_t n)
{
    rel_node *x = &ri->nodes[n];
    rel_head *h = map_find(s, rel, x->tgt);
    if (--h->ntgt == 0) {
        h->tgt = NONE;
        if (h->nsrc == 0)
            map_del(s, h);
        return;
    }
    ri->nodes[x->prev_tgt].next_tgt = x->next_tgt;
    ri->nodes[x->next_tgt].prev_tgt = x->prev_tgt;
    if (h->tgt == n)
        h->tgt = x->next_tgt;
}

static uint32_t src_prev(const rel_state *s, const rel_info *ri, int32_t rel, uint32_t n);

/* Unlink node n (predecessor prev in its source's list) and free it,
** after its REMOVE events. */
static void pair_drop(tecs_world_t *w, rel_state *s, rel_info *ri, int32_t rel, uint32_t n,
                      uint32_t prev)
{
    if (rel_watched(w, ri->comp)) {
        pair_event(w, TECS__EV_REMOVE, id_of(w, ri->nodes[n].src), ri->comp,
                   id_of(w, ri->nodes[n].tgt), 0, ri->size ? node_val(ri, n) : NULL);
        /* The callbacks queue their changes: the lists are as they were,
        ** but a value write may not reach them; prev is found again. */
        prev = src_prev(s, ri, rel, n);
    }
    rel_node *x = &ri->nodes[n];
    rel_head *h = map_find(s, rel, x->src);
    if (prev == NONE)
        h->src = x->next_src;
    else
        ri->nodes[prev].next_src = x->next_src;
    bool empty = --h->nsrc == 0 && h->ntgt == 0;
    if (empty)
        map_del(s, h);
    tgt_leave(s, ri, rel, n);
    node_free(ri, n);
}

/* The predecessor of node n in its source's list (NONE: the head). */
static uint32_t src_prev(const rel_state *s, const rel_info *ri, int32_t rel, uint32_t n)
{
    const rel_head *h = map_find(s, rel, ri->nodes[n].src);
    uint32_t p = NONE;
    for (uint32_t k = h->src; k != n; k = ri->nodes[k].next_src)
        p = k;
    return p;
}

/* ---- rel_state_of --------------------------------------------------------------- */

static tecs_err_t rel_on_veto(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                          const void *vals, int32_t n);
static tecs_err_t on_destroy(tecs_world_t *w, void *ctx, tecs_entity_t e);
static tecs_err_t on_clone(tecs_world_t *w, void *ctx, int step, tecs_entity_t src,
                           tecs_entity_t dst, int32_t n);
static void rel_on_reset(tecs_world_t *w, void *ctx);
static void rel_on_fini(tecs_world_t *w, void *ctx);
static tecs_err_t rel_verify(tecs_world_t *w, void *ctx);
static const tecs__values lent;

static const tecs__filter_kind user_kind, childof_kind, parent_kind, inherit_kind;
static const void *on_inherited(const tecs_world_t *w, void *ctx, const tecs_archetype_t *a,
                                tecs_comp_t c);
static int32_t rank_of(const tecs_world_t *w, const tecs_archetype_t *a);

/* The add-on's rel_state_of, made at its first use with its listener and its
** kinds of query terms (the query engine's room for them is checked
** first, so a failure leaves nothing behind). */
static rel_state *rel_state_of(tecs_world_t *w)
{
    if (w->rel == NULL) {
        if (w->query.nkinds + 4 > TECS__MAX_KINDS) {
            tecs__err(w, TECS_ELIMIT, "no room for the relation add-on's query terms");
            return NULL;
        }
        tecs__listener l = { .on_veto = rel_on_veto, .on_destroy = on_destroy,
                             .on_clone = on_clone, .inherited = on_inherited,
                             .on_reset = rel_on_reset, .on_fini = rel_on_fini, .verify = rel_verify,
                             .values = &lent };
        w->rel = tecs__plug(w, sizeof *w->rel, &l, "the relation table");
        if (w->rel == NULL)
            return NULL;
        w->rel->childof = -1;
        w->rel->isa = -1;
        tecs__query_add_kind(w, &user_kind);
        tecs__query_add_kind(w, &childof_kind);
        tecs__query_add_kind(w, &parent_kind);
        tecs__query_add_kind(w, &inherit_kind);
        w->query.rank = rank_of;
    }
    return w->rel;
}

/* The index of relation c, or -1. */
static inline int32_t rel_index(const tecs_world_t *w, tecs_comp_t c)
{
    const rel_state *s = w->rel;
    return s && c < (tecs_comp_t)s->cap_rel_of ? s->rel_of[c] - 1 : -1;
}

/* Why the id is not a relation: TECS_EINVAL or TECS_ENOCOMP. */
static tecs_err_t not_relation(tecs_world_t *w, tecs_comp_t c)
{
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is not a relation", TECS__COMP(w, c));
}

static tecs_comp_t add_relation(tecs_world_t *w, const tecs_component_desc_t *cd,
                                bool exclusive, tecs_cleanup_t cleanup, bool childof)
{
    rel_state *s = rel_state_of(w);
    if (s == NULL)
        return 0;
    int32_t old = s->cap_rel_of;        /* the ids past it are no relation */
    if (tecs__grow(w, (void **)&s->rels, &s->cap_rels, s->nrels + 1, sizeof *s->rels) ||
        tecs__grow(w, (void **)&s->rel_of, &s->cap_rel_of, TECS_MAX_COMPONENTS,
                   sizeof *s->rel_of))
        return 0;
    memset(s->rel_of + old, 0, (size_t)(s->cap_rel_of - old) * sizeof *s->rel_of);
    tecs_comp_t c = tecs_component_new(w, cd);
    if (c == 0)
        return 0;
    int32_t i = s->nrels++;
    s->rels[i] = (rel_info){ .comp = c, .size = (uint32_t)cd->size, .exclusive = exclusive,
                             .childof = childof, .cleanup = (uint8_t)cleanup, .free = NONE };
    s->rel_of[c] = i + 1;
    w->comp.comps[c].veto++;
    if (childof)
        s->childof = i;
    s->ndestroy += !childof && cleanup == TECS_CLEANUP_DESTROY;
    s->nrefuse += cleanup == TECS_CLEANUP_REFUSE;
    return c;
}

tecs_comp_t tecs_relation_new(tecs_world_t *w, const tecs_relation_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w))
        return 0;
    if (d == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_relation_new: NULL desc");
        return 0;
    }
    const tecs_component_desc_t *cd = &d->component;
    if (cd->ctor || cd->dtor || cd->copy || cd->move || cd->storage != TECS_STORAGE_TABLE ||
        cd->enableable || cd->row_ticks) {
        tecs__err(w, TECS_EINVAL, "relation '%s': a relation's value is plain data in table "
                  "storage (no hooks, not enableable, no row ticks)",
                  cd->name ? cd->name : "(null)");
        return 0;
    }
    if ((unsigned)d->cleanup > TECS_CLEANUP_REFUSE) {
        tecs__err(w, TECS_EINVAL, "relation '%s': unknown cleanup %d",
                  cd->name ? cd->name : "(null)", (int)d->cleanup);
        return 0;
    }
    if (tecs__in_worker(w)) {
        tecs__err(w, TECS_EBUSY, "relations cannot be made in a worker");
        return 0;
    }
    tecs_comp_t c = add_relation(w, cd, d->exclusive, d->cleanup, false);
    if (c)
        w->rel->rels[w->rel->rel_of[c] - 1].no_clone = d->no_clone;
    return c;
}

tecs_comp_t tecs_childof(tecs_world_t *w)
{
    if (w == NULL || tecs__enter_read(w))
        return 0;
    if (w->rel && w->rel->childof >= 0)
        return w->rel->rels[w->rel->childof].comp;
    if (tecs__enter_object(w))
        return 0;
    if (tecs__in_worker(w)) {
        tecs__err(w, TECS_EBUSY, "ChildOf is made at its first use outside workers");
        return 0;
    }
    tecs_component_desc_t cd = { .name = "ChildOf" };
    return add_relation(w, &cd, true, TECS_CLEANUP_DESTROY, true);
}

tecs_comp_t tecs_prefab(tecs_world_t *w)
{
    if (w == NULL || tecs__enter_read(w))
        return 0;
    tecs_err_t outer = w->base.err;
    tecs_comp_t c = tecs_component_lookup(w, "Prefab");
    tecs__err_restore(w, outer);        /* (not found is no error here) */
    if (c != 0) {
        const tecs__comp *ci = tecs__comp_get(w, c);
        if (ci->hidden)
            return c;
        tecs__err(w, TECS_EEXIST, "a component named 'Prefab' is registered already (id %u) "
                  "and is no hidden tag", c);
        return 0;
    }
    if (tecs__enter_object(w))
        return 0;
    if (tecs__in_worker(w)) {
        tecs__err(w, TECS_EBUSY, "the prefab tag is made at its first use outside workers");
        return 0;
    }
    return tecs_component_new(w, &(tecs_component_desc_t){ .name = "Prefab", .hidden = true });
}

bool tecs_is_relation(const tecs_world_t *w, tecs_comp_t c)
{
    return w != NULL && rel_index(w, c) >= 0;
}

int32_t tecs_relation_level(const tecs_world_t *w, tecs_comp_t c)
{
    const rel_state *s = w ? w->rel : NULL;
    return s && c < (tecs_comp_t)s->cap_rel_of && s->rel_of[c] < 0 ? -s->rel_of[c] : 0;
}

tecs_entity_t tecs_relation_base(const tecs_world_t *w, tecs_comp_t c)
{
    const rel_state *s = w ? w->rel : NULL;
    if (s == NULL || s->tag_base == NULL || c >= TECS_MAX_COMPONENTS ||
        s->tag_base[c] >= TAG_FREE)
        return 0;
    return id_of(w, s->tag_base[c]);
}

tecs_cleanup_t tecs_relation_cleanup(const tecs_world_t *w, tecs_comp_t c)
{
    int32_t i = w ? rel_index(w, c) : -1;
    return i < 0 ? TECS_CLEANUP_REMOVE : (tecs_cleanup_t)w->rel->rels[i].cleanup;
}

/* ---- changes, applied now ------------------------------------------------ */

/* ---- inheritance (IsA) ---------------------------------------------------
**
** IsA is an exclusive tag relation of the user store: its pairs, walks,
** snapshots, queued changes and cleanup are those of any relation, and its
** cleanup is REFUSE, so a base with instances is not destroyed. What it
** adds: each base with instances has a tag of its own, "IsA.<n>"
** (registered at its first instance, given back when the base dies, kept
** in the base's link), in the archetype of every entity that inherits
** from it. So the rows of an archetype share one base, found from the
** archetype alone: an inherited term's field is one value for the whole
** chunk. Every IsA pair added or removed moves its source to the
** archetype with the new tag (tecs__move_tags, as ChildOf's tag), after
** the same reservations as any pair change, so a failure changes nothing.
**
** An entity reads through its base every table component it has none of
** (tecs_get, inherited terms), down the chain of bases (a variant's own
** base next); a pair that would close a chain into a cycle is refused.
*/

/* The base tag in archetype a, or 0. */
static tecs_comp_t arch_btag(const rel_state *s, const tecs_archetype_t *a)
{
    if (s->tag_base == NULL)
        return 0;
    for (int32_t i = a->ncomps - 1; i >= 0 && a->comps[i] >= s->min_btag; i--)
        if (s->tag_base[a->comps[i]] < TAG_FREE)
            return a->comps[i];
    return 0;
}

/* The slot of the base the entities of a inherit from, or NONE. */
static uint32_t arch_base(const rel_state *s, const tecs_archetype_t *a)
{
    tecs_comp_t t = arch_btag(s, a);
    return t ? s->tag_base[t] : NONE;
}

/* The archetype the base in slot b reads from, as v says: a base that
** moves reads from where it was. */
static const tecs_archetype_t *base_arch(const tecs_world_t *w, uint32_t b, const tecs__view *v)
{
    return v && v->moved && TECS_ENTITY_INDEX(v->moved) == b ? v->from : slot_arch(w, b);
}

/* The value of c an entity of archetype a without its own inherits: the
** first base down the chain holding it (a tag's: the base's archetype,
** for "has"), or NULL. */
static void *chain_value(const tecs_world_t *w, const rel_state *s, const tecs_archetype_t *a,
                         tecs_comp_t c, const tecs__view *v)
{
    for (int32_t hop = 0; hop <= s->ntags; hop++) {
        uint32_t b = arch_base(s, a);
        const tecs_archetype_t *ba = b == NONE ? NULL : base_arch(w, b, v);
        if (ba == NULL)
            return NULL;
        int32_t col = tecs__arch_col(ba, c);
        if (col == TECS__COL_TAG)
            return (void *)(uintptr_t)ba;
        if (col >= 0)
            return tecs__col_ptr(ba, w, col, w->ei.recs[b].row);
        a = ba;
    }
    return NULL;                /* (no chain is longer than the tags) */
}

static const void *on_inherited(const tecs_world_t *w, void *ctx, const tecs_archetype_t *a,
                                tecs_comp_t c)
{
    const rel_state *s = ctx;
    if (s->isa < 0 || tecs_component_size(w, c) == 0)
        return NULL;
    return chain_value(w, s, a, c, NULL);
}

/* The tag of the base in slot b (its link reserved), registered or taken
** back from the spare ones if it has none yet; 0 on error. */
static tecs_comp_t base_tag(tecs_world_t *w, rel_state *s, uint32_t b)
{
    rel_link *l = link_at(s, b);
    if (l->btag)
        return l->btag;
    tecs_comp_t c;
    if (s->nspare > 0) {
        c = s->spare[--s->nspare];
    } else {
        if (tecs__grow(w, (void **)&s->spare, &s->cap_spare, s->ntags + 1, sizeof *s->spare)) {
            tecs__err(w, TECS_ENOMEM, "out of memory making a base's tag");
            return 0;
        }
        char name[32];
        snprintf(name, sizeof name, "IsA.%d", (int)s->ntags + 1);
        if ((c = tecs_component_new(w, &(tecs_component_desc_t){ .name = name })) == 0)
            return 0;
        s->ntags++;
        w->comp.comps[c].veto++;
        if (s->min_btag == 0 || c < s->min_btag)
            s->min_btag = c;
    }
    s->tag_base[c] = b;
    l->btag = c;
    return c;
}

/* The base in slot b dies, or the world's entities do: its tag goes back. */
static void base_gone(rel_state *s, uint32_t b)
{
    rel_link *l = link_at(s, b);
    if (l == NULL || l->btag == 0)
        return;
    s->tag_base[l->btag] = TAG_FREE;
    s->spare[s->nspare++] = l->btag;    /* (room: one per tag made) */
    l->btag = 0;
}

/* Would e inheriting from the entity in slot t close a chain of bases? */
static bool isa_cycle(const tecs_world_t *w, const rel_state *s, uint32_t es, uint32_t t)
{
    for (int32_t hop = 0; t != NONE && hop <= s->ntags + 1; hop++) {
        if (t == es)
            return true;
        const tecs_archetype_t *a = slot_arch(w, t);
        t = a ? arch_base(s, a) : NONE;
    }
    return false;
}

/* Where e goes when its base tag `gone` (0: none) leaves and `came`
** (0: none) comes, room for its row reserved; NULL on error. */
static tecs_archetype_t *isa_target(tecs_world_t *w, tecs_entity_t e, tecs_comp_t gone,
                                    tecs_comp_t came)
{
    tecs_archetype_t *b = tecs__rec_arch(w, tecs__ei_alive(w, e));
    if (b && gone)
        b = tecs__arch_without(w, b, gone);
    if (b && came)
        b = tecs__arch_with(w, b, came);
    if (b && tecs__arch_reserve_rows(w, b, 1)) {
        tecs__err(w, TECS_ENOMEM, "out of memory moving " TECS__ENT_FMT " to its base",
                  TECS__ENT(e));
        return NULL;
    }
    if (b == NULL && !w->base.err)
        tecs__err(w, TECS_ENOMEM, "out of memory moving " TECS__ENT_FMT " to its base",
                  TECS__ENT(e));
    return b;
}

/* e (slot es) is to inherit from t (slot ts, its link reserved),
** replacing its base if it has one: the cycle refused, the tag and the
** target archetype made (*to), nothing linked yet. */
static tecs_err_t isa_prepare(tecs_world_t *w, rel_state *s, tecs_entity_t e, tecs_entity_t t,
                              tecs_archetype_t **to)
{
    uint32_t es = TECS_ENTITY_INDEX(e), ts = TECS_ENTITY_INDEX(t);
    if (isa_cycle(w, s, es, ts))
        return tecs__err(w, TECS_ECYCLE, "(IsA, " TECS__ENT_FMT ") would make " TECS__ENT_FMT
                         " its own base", TECS__ENT(t), TECS__ENT(e));
    tecs_comp_t came = base_tag(w, s, ts);
    if (came == 0)
        return w->base.err ? w->base.err : TECS_ENOMEM;
    tecs_comp_t gone = arch_btag(s, tecs__rec_arch(w, tecs__ei_alive(w, e)));
    *to = isa_target(w, e, gone, came);
    return *to ? TECS_OK : w->base.err;
}

/* Where e goes when it stops inheriting, room reserved; NULL on error. */
static tecs_archetype_t *isa_leave(tecs_world_t *w, rel_state *s, tecs_entity_t e)
{
    return isa_target(w, e, arch_btag(s, tecs__rec_arch(w, tecs__ei_alive(w, e))), 0);
}

/* The base tags' table, made once. */
static tecs_err_t isa_room(tecs_world_t *w, rel_state *s)
{
    if (s->tag_base != NULL)
        return TECS_OK;
    uint32_t *tb = tecs__alloc(w, TECS_MAX_COMPONENTS * sizeof *tb);
    if (tb == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory making IsA");
    for (int32_t k = 0; k < TECS_MAX_COMPONENTS; k++)
        tb[k] = NONE;
    s->tag_base = tb;
    return TECS_OK;
}

/* Is c named as a base tag ("IsA.<n>", a tag)? */
static bool btag_named(const tecs_world_t *w, tecs_comp_t c)
{
    const char *name = tecs_component_name(w, c), *d = name ? name + 4 : NULL;
    if (name == NULL || strncmp(name, "IsA.", 4) != 0 || w->comp.comps[c].size != 0 ||
        *d < '1' || *d > '9')
        return false;
    while (*d >= '0' && *d <= '9')
        d++;
    return *d == '\0';
}

static tecs_err_t isa_agree(tecs_world_t *w, const rel_state *s, tecs_err_t code);

/* A load's (TECS_EFORMAT) or a check's (TECS_ECORRUPT) finding. */
static tecs_err_t bind_bad(tecs_world_t *w, tecs_err_t code, const char *what, uint32_t slot)
{
    return tecs__err(w, code, "%sIsA: %s (slot %u)", code == TECS_EFORMAT ? "snapshot: " : "",
                     what, slot);
}

/* The one known base tag (bound or free) in a, or 0; *two if a has more. */
static tecs_comp_t btag_known(const rel_state *s, const tecs_archetype_t *a, bool *two)
{
    tecs_comp_t t = 0;
    *two = false;
    for (int32_t i = a->ncomps - 1; i >= 0 && a->comps[i] >= s->min_btag; i--)
        if (s->tag_base[a->comps[i]] != NONE) {
            *two = *two || t != 0;
            t = a->comps[i];
        }
    return t;
}

/* Rows were put in place (a load, a delta) with their pairs: the base
** tags the world names ("IsA.<n>") are known again, each bound to the
** base its instances' pairs name. Each IsA pair's source holds one base
** tag, its target's; each row holding one is the source of such a pair
** (else TECS_EFORMAT). */
static tecs_err_t isa_bind(tecs_world_t *w, rel_state *s)
{
    for (tecs_comp_t c = 1; c < (tecs_comp_t)w->comp.cap_comps; c++) {
        if (s->tag_base[c] != NONE || !btag_named(w, c))
            continue;
        if (tecs__grow(w, (void **)&s->spare, &s->cap_spare, s->ntags + 1, sizeof *s->spare))
            return tecs__err(w, TECS_ENOMEM, "out of memory adopting a base's tag");
        s->spare[s->nspare++] = c;
        s->tag_base[c] = TAG_FREE;
        s->ntags++;
        w->comp.comps[c].veto++;
        if (s->min_btag == 0 || c < s->min_btag)
            s->min_btag = c;
    }
    const rel_info *ri = &s->rels[s->isa];
    for (uint32_t n = 0; n < ri->nnodes; n++) {
        uint32_t x = ri->nodes[n].src, b = ri->nodes[n].tgt;
        if (x == NONE)
            continue;
        bool two;
        tecs_comp_t t = btag_known(s, tecs__rec_arch(w, &w->ei.recs[x]), &two);
        if (t == 0 || two)
            return bind_bad(w, TECS_EFORMAT, "an instance holds no base tag, or two", x);
        if (s->tag_base[t] == TAG_FREE) {
            if (link_reserve(w, s, b))
                return TECS_ENOMEM;
            int32_t k = 0;
            while (s->spare[k] != t)
                k++;
            s->spare[k] = s->spare[--s->nspare];
            s->tag_base[t] = b;
            link_at(s, b)->btag = t;
        } else if (s->tag_base[t] != b || link_at(s, b)->btag != t) {
            return bind_bad(w, TECS_EFORMAT, "two bases share a tag", x);
        }
    }
    return isa_agree(w, s, TECS_EFORMAT);
}

/* Every row with a base tag inherits from the tag's base; every IsA
** pair's source holds its target's tag. */
static tecs_err_t isa_agree(tecs_world_t *w, const rel_state *s, tecs_err_t code)
{
    const rel_info *ri = &s->rels[s->isa];
    for (uint32_t n = 0; n < ri->nnodes; n++) {
        uint32_t x = ri->nodes[n].src, b = ri->nodes[n].tgt;
        if (x == NONE)
            continue;
        tecs_comp_t t = arch_btag(s, tecs__rec_arch(w, &w->ei.recs[x]));
        const rel_link *l = link_at(s, b);
        if (t == 0 || s->tag_base[t] != b || l == NULL || l->btag != t)
            return bind_bad(w, code, "an instance's archetype lacks its base's tag", x);
    }
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        const tecs_archetype_t *a = w->arch.archs[i];
        bool two;
        tecs_comp_t t = a->count ? btag_known(s, a, &two) : 0;
        for (int32_t r = 0; t && r < a->count; r++) {
            uint32_t x = TECS_ENTITY_INDEX(*tecs__ent_ptr(a, w, (uint32_t)r));
            const rel_head *h = map_find(s, s->isa, x);
            if (two || s->tag_base[t] >= TAG_FREE || h == NULL || h->nsrc != 1 ||
                s->rels[s->isa].nodes[h->src].tgt != s->tag_base[t])
                return bind_bad(w, code, "a row's base tag names no base of it", x);
        }
    }
    return TECS_OK;
}

tecs_archetype_t *tecs__rel_instance_arch(tecs_world_t *w, tecs_entity_t src,
                                          tecs_archetype_t *b)
{
    const tecs_archetype_t *a = tecs__rec_arch(w, tecs__ei_alive(w, src));
    rel_state *s = w->rel;
    tecs_comp_t gone = s && s->isa >= 0 ? arch_btag(s, a) : 0;
    bool shares = gone != 0;
    for (int32_t i = 0; i < a->ncomps && !shares; i++)
        shares = w->comp.comps[a->comps[i]].inherit;
    if (!shares)
        return b;
    uint32_t ss = TECS_ENTITY_INDEX(src);
    tecs_comp_t came;
    if (tecs_isa(w) == 0 || link_reserve(w, s = w->rel, ss) || (came = base_tag(w, s, ss)) == 0)
        return NULL;
    if (gone && tecs__arch_col(b, gone) != TECS__COL_ABSENT)
        b = tecs__arch_without(w, b, gone);
    for (int32_t i = 0; b && i < a->ncomps; i++)
        if (w->comp.comps[a->comps[i]].inherit && tecs__arch_col(b, a->comps[i]) >= 0)
            b = tecs__arch_without(w, b, a->comps[i]);
    return b ? tecs__arch_with(w, b, came) : NULL;
}

tecs_comp_t tecs_isa(tecs_world_t *w)
{
    if (w == NULL || tecs__enter_read(w))
        return 0;
    if (w->rel && w->rel->isa >= 0)
        return w->rel->rels[w->rel->isa].comp;
    if (tecs__enter_object(w))
        return 0;
    if (tecs__in_worker(w)) {
        tecs__err(w, TECS_EBUSY, "IsA is made at its first use outside workers");
        return 0;
    }
    rel_state *s = rel_state_of(w);
    if (s == NULL)
        return 0;
    /* A load's "IsA" (a user relation of the same shape) is adopted. */
    tecs_err_t outer = w->base.err;
    tecs_comp_t c = tecs_component_lookup(w, "IsA");
    tecs__err_restore(w, outer);
    int32_t i = c ? rel_index(w, c) : -1;
    if (c && (i < 0 || !s->rels[i].exclusive || s->rels[i].size != 0 ||
              s->rels[i].cleanup != TECS_CLEANUP_REFUSE)) {
        tecs__err(w, TECS_EEXIST, "a component named 'IsA' is registered already (id %u) and "
                  "is no exclusive tag relation with cleanup REFUSE", c);
        return 0;
    }
    if (isa_room(w, s))
        return 0;
    if (c == 0) {
        tecs_component_desc_t cd = { .name = "IsA" };
        if ((c = add_relation(w, &cd, true, TECS_CLEANUP_REFUSE, false)) == 0)
            return 0;
        i = rel_index(w, c);
    }
    s->isa = i;
    if (isa_bind(w, s)) {               /* a load's instances, if any */
        s->isa = -1;
        return 0;
    }
    return c;
}

/* Is slot a, or an ancestor of it, the slot anc? */
static bool within(const rel_state *s, uint32_t a, uint32_t anc)
{
    for (uint32_t p = a; p != NONE; p = parent_slot(s, p))
        if (p == anc)
            return true;
    return false;
}

static inline uint32_t first_child(const rel_state *s, uint32_t p);

/* ---- ChildOf: depth tags and moves -----------------------------------------
**
** A child's archetype holds the ChildOf tag and the tag of its depth,
** "ChildOf.d" (d >= 1, registered as first needed), so the archetypes of a
** hierarchy are apart by level: a cascade query walks them in depth order
** (rank), parents before children, each step an array of rows of one
** level. A change of parent that changes an entity's depth moves it and
** each of its descendants to the archetype of its new level.
**
** A change reserves first: the link page, map room, the list of entities
** that move and their targets (made, with the depth tags), room in each
** target for every row coming to it; archetypes give no chunk back while
** the moves run (hold_trim), so the reserved room stays. Then it links and
** moves, which cannot fail.
*/

/* The depth tag of level d >= 1, registered as needed; 0 on error. */
static tecs_comp_t depth_tag(tecs_world_t *w, rel_state *s, int32_t d)
{
    while (s->ndepth <= d) {
        if (s->ndepth == 0)
            s->ndepth = 1;                      /* depth[0] is no tag */
        if (tecs__grow(w, (void **)&s->depth, &s->cap_depth, s->ndepth + 1, sizeof *s->depth))
            return 0;
        char name[32];
        snprintf(name, sizeof name, "ChildOf.%d", (int)s->ndepth);
        tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){ .name = name });
        if (c == 0)
            return 0;
        s->rel_of[c] = -s->ndepth;
        w->comp.comps[c].veto++;
        s->depth[s->ndepth++] = c;
    }
    return s->depth[d];
}

tecs_comp_t tecs__rel_depth_tag(tecs_world_t *w, int32_t d)
{
    rel_state *s = w->rel;
    return s && d > 0 ? depth_tag(w, s, d) : 0;
}

/* The level of archetype a: its depth tag's, 0 for none. */
static int32_t arch_depth(const rel_state *s, const tecs_archetype_t *a)
{
    for (int32_t i = a->ncomps - 1; i >= 0 && s->ndepth > 1; i--) {
        tecs_comp_t c = a->comps[i];
        if (c < (tecs_comp_t)s->cap_rel_of && s->rel_of[c] < 0)
            return -s->rel_of[c];
    }
    return 0;
}

static int32_t slot_depth(const tecs_world_t *w, const rel_state *s, uint32_t slot)
{
    return arch_depth(s, tecs__rec_arch(w, &w->ei.recs[slot]));
}

/* The cascade rank of an archetype: its level. */
static int32_t rank_of(const tecs_world_t *w, const tecs_archetype_t *a)
{
    return w->rel ? arch_depth(w->rel, a) : 0;
}

/* Add slot x to the entities that move (ENOMEM). */
static tecs_err_t move_push(tecs_world_t *w, rel_state *s, uint32_t x)
{
    if (tecs__grow(w, (void **)&s->moves, &s->cap_moves, s->nmoves + 1, sizeof *s->moves) ||
        tecs__grow(w, (void **)&s->mto, &s->cap_mto, s->nmoves + 1, sizeof *s->mto))
        return TECS_ENOMEM;
    s->moves[s->nmoves++] = x;
    return TECS_OK;
}

/* The target archetype of slot x when its level goes from d to nd (the
** ChildOf tag added with add, removed with rem); NULL on error. */
static tecs_archetype_t *target_of(tecs_world_t *w, rel_state *s, uint32_t x, int32_t d,
                                   int32_t nd, bool add, bool rem)
{
    tecs_archetype_t *b = tecs__rec_arch(w, &w->ei.recs[x]);
    tecs_comp_t co = s->rels[s->childof].comp;
    if (b && d > 0)
        b = tecs__arch_without(w, b, s->depth[d]);
    if (b && nd > 0)
        b = depth_tag(w, s, nd) ? tecs__arch_with(w, b, s->depth[nd]) : NULL;
    if (b && add)
        b = tecs__arch_with(w, b, co);
    if (b && rem)
        b = tecs__arch_without(w, b, co);
    return b;
}

/* Room in each target for the rows coming to it. */
static tecs_err_t reserve_targets(tecs_world_t *w, rel_state *s)
{
    if (s->nmoves == 1)                 /* one entity: no counting */
        return tecs__arch_reserve_rows(w, s->mto[0], 1);
    int32_t n = w->arch.narchs;
    int32_t *count = tecs__alloc(w, (size_t)n * sizeof *count);
    if (count == NULL)
        return TECS_ENOMEM;
    memset(count, 0, (size_t)n * sizeof *count);
    for (int32_t i = 0; i < s->nmoves; i++)
        count[s->mto[i]->id]++;
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < s->nmoves && !err; i++) {
        tecs_archetype_t *b = s->mto[i];
        if (count[b->id] > 0)
            err = tecs__arch_reserve_rows(w, b, count[b->id]);
        count[b->id] = 0;
    }
    tecs__free(w, count, (size_t)n * sizeof *count);
    return err;
}

/* Give e (slot es) the parent slot np (NONE: none): links, tags, levels. */
static tecs_err_t hier_move(tecs_world_t *w, rel_state *s, tecs_entity_t e, uint32_t np)
{
    uint32_t es = TECS_ENTITY_INDEX(e), op = parent_slot(s, es);
    if (op == np)
        return TECS_OK;
    if (np != NONE && within(s, np, es))
        return tecs__err(w, TECS_ECYCLE, "(ChildOf, " TECS__ENT_FMT ") would make "
                         TECS__ENT_FMT " its own ancestor", TECS__ENT(id_of(w, np)),
                         TECS__ENT(e));
    int32_t d = slot_depth(w, s, es), nd = np == NONE ? 0 : slot_depth(w, s, np) + 1;
    bool add = op == NONE, rem = np == NONE;
    tecs_err_t err = map_reserve(w, s, 1);
    if (err || (err = link_reserve(w, s, es)) || (np != NONE && (err = link_reserve(w, s, np))))
        return err;
    /* Who moves: e if its tags change; its subtree if its level does. */
    s->nmoves = 0;
    if ((nd != d || add || rem) && (err = move_push(w, s, es)))
        goto oom;
    for (int32_t i = 0; nd != d && i < s->nmoves && !err; i++) {
        uint32_t first = first_child(s, s->moves[i]), c = first;
        while (c != NONE && !err) {
            err = move_push(w, s, c);
            if ((c = link_at(s, c)->next) == first)
                c = NONE;
        }
    }
    if (err)
        goto oom;
    for (int32_t i = 0; i < s->nmoves; i++) {
        uint32_t x = s->moves[i];
        int32_t dx = i == 0 ? d : slot_depth(w, s, x);
        s->mto[i] = target_of(w, s, x, dx, dx + nd - d, i == 0 && add, i == 0 && rem);
        if (s->mto[i] == NULL)
            return w->base.err ? w->base.err : TECS_ENOMEM;
    }
    if (reserve_targets(w, s))
        goto oom;
    /* Nothing fails from here. Events: REMOVE of (ChildOf, old) while it
    ** holds, ADD of (ChildOf, new) once it does. */
    tecs_comp_t co = s->rels[s->childof].comp;
    tecs_entity_t was = w->bus.target;
    if (!add && !rem) {
        pair_event(w, TECS__EV_REMOVE, e, co, id_of(w, op), id_of(w, np), NULL);
        ring_leave(s, es);
        ring_join(s, es, np);
    } else if (add) {
        ring_join(s, es, np);
    }
    w->arch.hold_trim++;
    for (int32_t i = 0; i < s->nmoves; i++) {
        w->bus.target = i == 0 ? id_of(w, add ? np : op) : 0;
        tecs__move_tags(w, id_of(w, s->moves[i]), s->mto[i], i == 0 && rem ? co : 0,
                        i == 0 && add ? co : 0);
    }
    w->bus.target = was;
    w->arch.hold_trim--;
    if (rem)
        ring_leave(s, es);
    if (!add && !rem)
        pair_event(w, TECS__EV_ADD, e, co, id_of(w, np), id_of(w, op), NULL);
    s->nmoves = 0;
    s->stamp++;
    return TECS_OK;
oom:
    return tecs__err(w, TECS_ENOMEM, "out of memory moving " TECS__ENT_FMT " in its hierarchy",
                     TECS__ENT(e));
}

static tecs_err_t childof_add(tecs_world_t *w, rel_state *s, tecs_entity_t e, tecs_entity_t p)
{
    return hier_move(w, s, e, TECS_ENTITY_INDEX(p));
}

static tecs_err_t childof_remove(tecs_world_t *w, rel_state *s, tecs_entity_t e,
                                 tecs_entity_t p)
{
    uint32_t es = TECS_ENTITY_INDEX(e), old = parent_slot(s, es);
    if (old == NONE || (p != (tecs_entity_t)TECS_WILDCARD && old != TECS_ENTITY_INDEX(p)))
        return tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " is not a child of that entity",
                         TECS__ENT(e));
    return hier_move(w, s, e, NONE);
}

static tecs_err_t user_add(tecs_world_t *w, rel_state *s, int32_t rel, tecs_entity_t e,
                           tecs_entity_t t, const void *value)
{
    rel_info *ri = &s->rels[rel];
    uint32_t es = TECS_ENTITY_INDEX(e), ts = TECS_ENTITY_INDEX(t);
    uint32_t n = node_find(s, ri, rel, es, ts, NULL);
    tecs_err_t err;
    if (n != NONE) {
        if (value) {
            if ((err = pair_veto(w, s, ri, TECS__EV_SET, e, t, value)))
                return err;
            memcpy(node_val(ri, n), value, ri->size);
            pair_event(w, TECS__EV_SET, e, ri->comp, t, 0, node_val(ri, n));
        }
        return TECS_OK;
    }
    const rel_head *h = map_find(s, rel, es);
    bool replace = ri->exclusive && h && h->nsrc > 0;  /* replace the one target */
    tecs_archetype_t *to = NULL;    /* IsA: where e moves */
    err = map_reserve(w, s, 2);     /* (moves the entries: h is void from here) */
    if (err || (err = link_reserve(w, s, es)) || (err = link_reserve(w, s, ts)) ||
        (!replace && (err = node_reserve(w, ri))) ||
        (rel == s->isa && (err = isa_prepare(w, s, e, t, &to))) ||
        (err = pair_veto(w, s, ri, TECS__EV_ADD, e, t, value)))
        return err;
    bit_put(page_of(s, es)->paired, es, true);
    bit_put(page_of(s, ts)->paired, ts, true);
    tecs_entity_t old = 0;
    if (replace) {
        n = map_find(s, rel, es)->src;
        old = id_of(w, ri->nodes[n].tgt);
        pair_event(w, TECS__EV_REMOVE, e, ri->comp, old, t, ri->size ? node_val(ri, n) : NULL);
        tgt_leave(s, ri, rel, n);
        tgt_join(s, ri, rel, n, ts);
    } else {
        n = node_take(ri);
        rel_head *sh = map_put(s, rel, es);
        ri->nodes[n] = (rel_node){ .src = es, .tgt = NONE, .next_src = NONE };
        if (sh->nsrc++ == 0) {
            sh->src = n;
        } else {
            uint32_t k = sh->src;
            while (ri->nodes[k].next_src != NONE)
                k = ri->nodes[k].next_src;
            ri->nodes[k].next_src = n;
        }
        tgt_join(s, ri, rel, n, ts);
    }
    if (ri->size) {
        if (value)
            memcpy(node_val(ri, n), value, ri->size);
        else
            memset(node_val(ri, n), 0, ri->size);
    }
    s->stamp++;
    if (to)
        tecs__move_tags(w, e, to, 0, 0);
    void *p = ri->size ? node_val(ri, n) : NULL;
    pair_event(w, TECS__EV_ADD, e, ri->comp, t, old, p);
    if (value)
        pair_event(w, TECS__EV_SET, e, ri->comp, t, 0, p);
    return TECS_OK;
}

static tecs_err_t user_remove(tecs_world_t *w, rel_state *s, int32_t rel, tecs_entity_t e,
                              tecs_entity_t t)
{
    rel_info *ri = &s->rels[rel];
    uint32_t es = TECS_ENTITY_INDEX(e);
    tecs_archetype_t *to = NULL;    /* IsA: where e moves, its base tag gone */
    if (t == (tecs_entity_t)TECS_WILDCARD) {
        rel_head *h = map_find(s, rel, es);
        if (h == NULL || h->nsrc == 0)
            return tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " has no pair of "
                             TECS__COMP_FMT, TECS__ENT(e), TECS__COMP(w, ri->comp));
        if (rel == s->isa && (to = isa_leave(w, s, e)) == NULL)
            return w->base.err;
        while ((h = map_find(s, rel, es)) != NULL && h->nsrc > 0)
            pair_drop(w, s, ri, rel, h->src, NONE);
        if (to)
            tecs__move_tags(w, e, to, 0, 0);
        s->stamp++;
        return TECS_OK;
    }
    uint32_t prev, n = node_find(s, ri, rel, es, TECS_ENTITY_INDEX(t), &prev);
    if (n == NONE)
        return tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " has no pair (" TECS__COMP_FMT ", "
                         TECS__ENT_FMT ")", TECS__ENT(e), TECS__COMP(w, ri->comp),
                         TECS__ENT(t));
    if (rel == s->isa && (to = isa_leave(w, s, e)) == NULL)
        return w->base.err;
    pair_drop(w, s, ri, rel, n, prev);
    if (to)
        tecs__move_tags(w, e, to, 0, 0);
    s->stamp++;
    return TECS_OK;
}

/* A pair change as it applies (now, or from the queue). */
typedef struct pair_op {
    tecs_entity_t target;
    uint8_t remove;
    uint8_t has_value;
    unsigned char value[];      /* has_value: the relation's size            */
} pair_op;

static tecs_err_t apply_op(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *data)
{
    const pair_op *op = data;
    rel_state *s = w->rel;
    int32_t rel = rel_index(w, c);
    if (s == NULL || rel < 0)
        return not_relation(w, c);
    if (tecs__ei_alive(w, e) == NULL)
        return tecs__err_dead(w, e);
    /* Pairs name live entities only: a dead target's slot may be another's. */
    if (op->remove && op->target != (tecs_entity_t)TECS_WILDCARD &&
        tecs__ei_alive(w, op->target) == NULL)
        return tecs__err(w, TECS_ENOENT, TECS__ENT_FMT " has no pair with " TECS__ENT_FMT
                         ", which is not alive", TECS__ENT(e), TECS__ENT(op->target));
    if (op->remove)
        return s->rels[rel].childof ? childof_remove(w, s, e, op->target)
                                    : user_remove(w, s, rel, e, op->target);
    if (tecs__ei_alive(w, op->target) == NULL)
        return tecs__err(w, TECS_EDEAD, "the target " TECS__ENT_FMT " is not alive",
                         TECS__ENT(op->target));
    if (s->rels[rel].childof)
        return childof_add(w, s, e, op->target);
    return user_add(w, s, rel, e, op->target, op->has_value ? op->value : NULL);
}

/* May a pair change name e now: alive, or, while deferred, also a birth
** the flush applies first (not a delayed birth, which waits for
** tecs_delayed_apply_new and would find the change gone)? */
static bool due(const tecs_world_t *w, tecs_entity_t e, bool deferred)
{
    const tecs__record *r = deferred ? tecs__ei_known(w, e) : tecs__ei_alive(w, e);
    return r != NULL && !(r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED);
}

/* The public changes: check, then apply now or queue. */
static tecs_err_t change(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, tecs_entity_t t,
                         const void *value, bool remove, const char *what)
{
    tecs_err_t err = tecs__enter_world_change(w);
    if (err)
        return err;
    int32_t rel = rel_index(w, c);
    if (rel < 0)
        return not_relation(w, c);
    const rel_info *ri = &w->rel->rels[rel];
    if (!remove && t == (tecs_entity_t)TECS_WILDCARD)
        return tecs__err(w, TECS_EINVAL, "%s: the target cannot be the wildcard", what);
    if (value && ri->size == 0)
        return tecs__err(w, TECS_EINVAL, "%s: " TECS__COMP_FMT " is a tag relation",
                         what, TECS__COMP(w, c));
    bool deferred = w->base.defer_depth > 0;
    if (!due(w, e, deferred))
        return tecs__err_dead(w, e);
    if (!remove && !due(w, t, deferred))
        return tecs__err(w, TECS_EDEAD, "%s: the target " TECS__ENT_FMT " is not alive",
                         what, TECS__ENT(t));
    unsigned char buf[sizeof(pair_op) + 64];
    size_t size = sizeof(pair_op) + (value ? ri->size : 0);
    pair_op *op = size <= sizeof buf ? (pair_op *)(void *)buf : tecs__alloc(w, size);
    if (op == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory queueing a pair change");
    op->target = t;
    op->remove = remove;
    op->has_value = value != NULL;
    if (value)
        memcpy(op->value, value, ri->size);
    if (deferred) {
        err = tecs__defer_call(w, apply_op, e, c, op, size);
    } else {
        err = apply_op(w, e, c, op);
        if (err == TECS_OK)
            tecs__settle(w);
    }
    if ((unsigned char *)op != buf)
        tecs__free(w, op, size);
    return err;
}

tecs_err_t tecs_pair_add(tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel, tecs_entity_t t)
{
    return change(w, e, rel, t, NULL, false, "tecs_pair_add");
}

tecs_err_t tecs_pair_set(tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel, tecs_entity_t t,
                         const void *value)
{
    if (w != NULL && value == NULL) {
        if (tecs__enter_change(w))
            return TECS_EBUSY;
        return tecs__err(w, TECS_EINVAL, "tecs_pair_set: NULL value");
    }
    return change(w, e, rel, t, value, false, "tecs_pair_set");
}

tecs_err_t tecs__pair_set_sized(tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel,
                                tecs_entity_t t, const void *value, size_t size)
{
    int32_t i = w ? rel_index(w, rel) : -1;
    if (i >= 0 && w->rel->rels[i].size != size) {
        if (tecs__enter_change(w))
            return TECS_EBUSY;
        return tecs__err(w, TECS_EINVAL, "TECS_PAIR_SET: " TECS__COMP_FMT " holds %u bytes, "
                         "not %zu", TECS__COMP(w, rel), w->rel->rels[i].size, size);
    }
    return tecs_pair_set(w, e, rel, t, value);
}

tecs_err_t tecs_pair_remove(tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel, tecs_entity_t t)
{
    return change(w, e, rel, t, NULL, true, "tecs_pair_remove");
}

/* ---- reads --------------------------------------------------------------- */

/* May a read look at w? (Not inside its allocator, nor through the world
** while its workers run.) */
static bool readable(const tecs_world_t *w)
{
    if (w == NULL || w->rel == NULL)
        return false;
    uint8_t closed = w->base.closed;
    return closed == TECS__OPEN || closed == TECS__WORKER || closed == TECS__FREEING ||
           closed == TECS__RESETTING;
}

static bool holds(const tecs_world_t *w, int32_t rel, uint32_t es, tecs_entity_t t)
{
    const rel_state *s = w->rel;
    const rel_info *ri = &s->rels[rel];
    if (ri->childof) {
        uint32_t p = parent_slot(s, es);
        return p != NONE && (t == (tecs_entity_t)TECS_WILDCARD || id_of(w, p) == t);
    }
    if (!is_paired(s, es))
        return false;
    if (t == (tecs_entity_t)TECS_WILDCARD) {
        const rel_head *h = map_find(s, rel, es);
        return h && h->nsrc > 0;
    }
    return tecs__ei_alive(w, t) && node_find(s, ri, rel, es, TECS_ENTITY_INDEX(t), NULL) != NONE;
}

bool tecs_pair_has(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel, tecs_entity_t t)
{
    if (!readable(w) || tecs__ei_alive(w, e) == NULL)
        return false;
    uint32_t es = TECS_ENTITY_INDEX(e);
    if (rel != TECS_WILDCARD) {
        int32_t i = rel_index(w, rel);
        return i >= 0 && holds(w, i, es, t);
    }
    for (int32_t i = 0; i < w->rel->nrels; i++)
        if (holds(w, i, es, t))
            return true;
    return false;
}

const void *tecs_pair_get(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel,
                          tecs_entity_t t)
{
    int32_t i = readable(w) ? rel_index(w, rel) : -1;
    if (i < 0 || w->rel->rels[i].size == 0 || tecs__ei_alive(w, e) == NULL ||
        tecs__ei_alive(w, t) == NULL)
        return NULL;
    const rel_info *ri = &w->rel->rels[i];
    uint32_t n = node_find(w->rel, ri, i, TECS_ENTITY_INDEX(e), TECS_ENTITY_INDEX(t), NULL);
    return n == NONE ? NULL : node_val(ri, n);
}

tecs_entity_t tecs_pair_target(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel,
                               int32_t k)
{
    int32_t i = readable(w) ? rel_index(w, rel) : -1;
    if (i < 0 || k < 0 || tecs__ei_alive(w, e) == NULL)
        return 0;
    const rel_state *s = w->rel;
    const rel_info *ri = &s->rels[i];
    uint32_t es = TECS_ENTITY_INDEX(e);
    if (ri->childof) {
        uint32_t p = parent_slot(s, es);
        return k == 0 && p != NONE ? id_of(w, p) : 0;
    }
    const rel_head *h = map_find(s, i, es);
    for (uint32_t n = h ? h->src : NONE; n != NONE; n = ri->nodes[n].next_src)
        if (k-- == 0)
            return id_of(w, ri->nodes[n].tgt);
    return 0;
}

static int32_t count_of(const tecs_world_t *w, int32_t rel, uint32_t es)
{
    const rel_state *s = w->rel;
    if (s->rels[rel].childof)
        return parent_slot(s, es) != NONE;
    const rel_head *h = map_find(s, rel, es);
    return h ? (int32_t)h->nsrc : 0;
}

int32_t tecs_pair_count(const tecs_world_t *w, tecs_entity_t e, tecs_comp_t rel)
{
    if (!readable(w) || tecs__ei_alive(w, e) == NULL)
        return 0;
    uint32_t es = TECS_ENTITY_INDEX(e);
    if (rel != TECS_WILDCARD) {
        int32_t i = rel_index(w, rel);
        return i < 0 ? 0 : count_of(w, i, es);
    }
    int32_t n = 0;
    for (int32_t i = 0; i < w->rel->nrels; i++)
        n += count_of(w, i, es);
    return n;
}

int32_t tecs_depth(const tecs_world_t *w, tecs_entity_t e)
{
    if (w == NULL || tecs__ei_alive(w, e) == NULL)
        return -1;
    if (!readable(w) || w->rel->childof < 0)
        return 0;
    int32_t d = 0;
    for (uint32_t p = parent_slot(w->rel, TECS_ENTITY_INDEX(e)); p != NONE;
         p = parent_slot(w->rel, p))
        d++;
    return d;
}

/* ---- walks ----------------------------------------------------------------
**
** A walk keeps the slot it is at (at_) and what comes next (next_):
**   sources  want_ the relation or TECS_WILDCARD, limit_ the relation index
**            being walked; at_ the node (user) or child slot (ChildOf) to
**            hand out next, next_ the ring's first, where the ring ends.
**   tree     at_ the slot last handed out; the depth-first order follows
**            the links (first child, else next sibling, else up); the
**            breadth-first order is depth-first walks limited to a level
**            (limit_), one per level.
*/

enum { WALK_DONE, WALK_SOURCES, WALK_DFS, WALK_BFS, WALK_UP };

static tecs_walk_t walk_none(const tecs_world_t *w)
{
    return (tecs_walk_t){ .world_ = w, .kind_ = WALK_DONE };
}

/* The first entry of the sources walk from relation index i on. */
static bool sources_from(tecs_walk_t *it, int32_t i)
{
    const tecs_world_t *w = it->world_;
    const rel_state *s = w->rel;
    uint32_t ts = TECS_ENTITY_INDEX(it->start_);
    for (; i < s->nrels; i++) {
        if (it->want_ != TECS_WILDCARD && s->rels[i].comp != it->want_)
            continue;
        const rel_head *h = map_find(s, i, ts);
        if (h && h->ntgt > 0) {
            it->limit_ = i;
            it->at_ = h->tgt;
            it->next_ = h->tgt;
            return true;
        }
    }
    it->kind_ = WALK_DONE;
    return false;
}

tecs_walk_t tecs_sources(const tecs_world_t *w, tecs_entity_t t, tecs_comp_t rel)
{
    if (!readable(w) || tecs__ei_alive(w, t) == NULL ||
        (rel != TECS_WILDCARD && rel_index(w, rel) < 0))
        return walk_none(w);
    tecs_walk_t it = { .world_ = w, .start_ = t, .stamp_ = w->rel->stamp,
                       .kind_ = WALK_SOURCES, .want_ = rel };
    sources_from(&it, 0);
    return it;
}

tecs_walk_t tecs_tree(const tecs_world_t *w, tecs_entity_t e, tecs_tree_order_t order)
{
    if (!readable(w) || tecs__ei_alive(w, e) == NULL || w->rel->childof < 0 ||
        (unsigned)order > TECS_TREE_ANCESTORS)
        return walk_none(w);
    int32_t kind = order == TECS_TREE_DEPTH_FIRST ? WALK_DFS
                 : order == TECS_TREE_BREADTH_FIRST ? WALK_BFS : WALK_UP;
    return (tecs_walk_t){ .world_ = w, .start_ = e, .stamp_ = w->rel->stamp, .kind_ = kind,
                          .at_ = TECS_ENTITY_INDEX(e), .limit_ = 1 };
}

static bool step_sources(tecs_walk_t *it)
{
    const tecs_world_t *w = it->world_;
    const rel_state *s = w->rel;
    const rel_info *ri = &s->rels[it->limit_];
    uint32_t at = it->at_, src, next;
    if (ri->childof) {
        src = at;
        next = link_at(s, at)->next;
    } else {
        src = ri->nodes[at].src;
        next = ri->nodes[at].next_tgt;
    }
    it->entity = id_of(w, src);
    it->rel = ri->comp;
    if (next == it->next_)
        sources_from(it, it->limit_ + 1);       /* the ring is done */
    else
        it->at_ = next;
    return true;
}

/* The first child of slot p, or NONE. */
static inline uint32_t first_child(const rel_state *s, uint32_t p)
{
    if (!is_parent(s, p))
        return NONE;
    const rel_head *h = map_find(s, s->childof, p);
    return h ? h->tgt : NONE;
}

/* The depth-first successor of slot at (depth *d below root, limit: go no
** deeper than that), or NONE at the end. */
static uint32_t dfs_next(const rel_state *s, uint32_t root, uint32_t at, int32_t *d,
                         int32_t limit)
{
    uint32_t c = *d < limit ? first_child(s, at) : NONE;
    if (c != NONE) {
        ++*d;
        return c;
    }
    while (at != root) {
        const rel_link *l = link_at(s, at);
        uint32_t p = l->parent;
        if (l->next != first_child(s, p))
            return l->next;
        at = p;
        --*d;
    }
    return NONE;
}

static bool step_tree(tecs_walk_t *it)
{
    const tecs_world_t *w = it->world_;
    const rel_state *s = w->rel;
    uint32_t root = TECS_ENTITY_INDEX(it->start_);
    if (it->kind_ == WALK_UP) {
        uint32_t p = parent_slot(s, it->at_);
        if (p == NONE)
            return false;
        it->at_ = p;
        it->entity = id_of(w, p);
        it->depth = ++it->limit_ - 1;
        return true;
    }
    int32_t d = it->depth;
    for (;;) {
        int32_t limit = it->kind_ == WALK_DFS ? INT32_MAX : it->limit_;
        uint32_t n = dfs_next(s, root, it->at_, &d, limit);
        if (n == NONE) {
            /* breadth first: the next level, if the last one had any */
            if (it->kind_ != WALK_BFS || it->next_ == 0)
                return false;
            it->limit_++;
            it->next_ = 0;
            it->at_ = root;
            d = 0;
            continue;
        }
        it->at_ = n;
        if (it->kind_ == WALK_BFS && d != it->limit_)
            continue;
        it->depth = d;
        it->next_ = 1;          /* breadth first: this level had one */
        it->entity = id_of(w, n);
        return true;
    }
}

bool tecs_walk_next(tecs_walk_t *it)
{
    if (it == NULL || it->kind_ == WALK_DONE)
        return false;
    const tecs_world_t *w = it->world_;
    if (!readable(w) || w->rel->stamp != it->stamp_ || tecs__ei_alive(w, it->start_) == NULL) {
        it->kind_ = WALK_DONE;
        it->stale = true;
        return false;
    }
    bool more = it->kind_ == WALK_SOURCES ? step_sources(it) : step_tree(it);
    if (!more)
        it->kind_ = WALK_DONE;
    return more;
}

/* ---- destroys -------------------------------------------------------------- */

/* e (slot es) dies: it leaves its parent's children and loses every pair
** it holds or is the target of. Its own children, if any, die in the same
** cleanup and leave the ring themselves. */
static void forget(tecs_world_t *w, rel_state *s, uint32_t es)
{
    bool any = false;
    if (s->childof >= 0 && parent_slot(s, es) != NONE) {
        s->gone = id_of(w, es);
        s->gone_parent = parent_slot(s, es);
        ring_leave(s, es);
        any = true;
    }
    for (int32_t i = 0; i < s->nrels && is_paired(s, es); i++) {
        rel_info *ri = &s->rels[i];
        rel_head *h;
        if (ri->childof || (h = map_find(s, i, es)) == NULL)
            continue;
        any = true;
        while ((h = map_find(s, i, es)) != NULL && h->nsrc > 0)
            pair_drop(w, s, ri, i, h->src, NONE);
        while ((h = map_find(s, i, es)) != NULL && h->ntgt > 0) {
            uint32_t n = h->tgt;
            pair_drop(w, s, ri, i, n, src_prev(s, ri, i, n));
        }
    }
    if (is_paired(s, es))
        bit_put(page_of(s, es)->paired, es, false);     /* its slot is free */
    base_gone(s, es);
    if (any)
        s->stamp++;
}

/* Add slot x to the set of slots gathered: false if it was there. */
static bool seen_add(rel_state *s, uint32_t x)
{
    uint32_t mask = s->cap_seen - 1;
    for (uint32_t i = hash_of(x, s->cap_seen);; i = (i + 1) & mask) {
        if (s->seen[i] == x)
            return false;
        if (s->seen[i] == NONE) {
            s->seen[i] = x;
            return true;
        }
    }
}

/* Room in the set for the gathered list grown to n. */
static tecs_err_t seen_reserve(tecs_world_t *w, rel_state *s, int32_t n)
{
    if ((uint64_t)n * 2 <= s->cap_seen)
        return TECS_OK;
    uint64_t cap = s->cap_seen ? s->cap_seen : 64;
    while ((uint64_t)n * 2 > cap)
        cap *= 2;
    uint32_t *set = tecs__alloc(w, tecs__bytes(cap, sizeof *set));
    if (set == NULL)
        return TECS_ENOMEM;
    memset(set, 0xff, (size_t)cap * sizeof *set);
    uint32_t *old = s->seen, ocap = s->cap_seen;
    s->seen = set;
    s->cap_seen = (uint32_t)cap;
    for (uint32_t i = 0; i < ocap; i++)
        if (old[i] != NONE)
            seen_add(s, old[i]);
    tecs__free(w, old, (size_t)ocap * sizeof *old);
    return TECS_OK;
}

/* Add slot x to what dies, unless it is there. */
static tecs_err_t rel_gather(tecs_world_t *w, rel_state *s, uint32_t x)
{
    if (s->ndestroy > 0) {
        if (seen_reserve(w, s, s->nkill + 1))
            return TECS_ENOMEM;
        if (!seen_add(s, x))
            return TECS_OK;
    }
    if (tecs__grow(w, (void **)&s->kill, &s->cap_kill, s->nkill + 1, sizeof *s->kill))
        return TECS_ENOMEM;
    s->kill[s->nkill++] = id_of(w, x);
    return TECS_OK;
}

/* Why slot x may not die: it is the target of a REFUSE relation. */
static tecs_err_t refused(tecs_world_t *w, const rel_state *s, tecs_entity_t e, uint32_t x)
{
    for (int32_t i = 0; i < s->nrels; i++) {
        const rel_info *ri = &s->rels[i];
        const rel_head *h;
        if (ri->cleanup != TECS_CLEANUP_REFUSE || (h = map_find(s, i, x)) == NULL ||
            h->ntgt == 0)
            continue;
        tecs_entity_t src = id_of(w, ri->nodes[h->tgt].src), t = id_of(w, x);
        if (t == e)
            return tecs__err(w, TECS_EBUSY, "cannot destroy " TECS__ENT_FMT ": "
                             TECS__ENT_FMT " holds (" TECS__COMP_FMT ", it), whose "
                             "cleanup refuses", TECS__ENT(e), TECS__ENT(src),
                             TECS__COMP(w, ri->comp));
        return tecs__err(w, TECS_EBUSY, "cannot destroy " TECS__ENT_FMT ": it would destroy "
                         TECS__ENT_FMT ", and " TECS__ENT_FMT " holds (" TECS__COMP_FMT
                         ", that one), whose cleanup refuses", TECS__ENT(e), TECS__ENT(t),
                         TECS__ENT(src), TECS__COMP(w, ri->comp));
    }
    return TECS_OK;
}

/* Gather what dies with e and check that it may: nothing changes. */
static tecs_err_t gather_all(tecs_world_t *w, rel_state *s, tecs_entity_t e)
{
    s->nkill = 0;
    if (s->cap_seen)
        memset(s->seen, 0xff, (size_t)s->cap_seen * sizeof *s->seen);
    if (rel_gather(w, s, TECS_ENTITY_INDEX(e)))
        return tecs__err(w, TECS_ENOMEM, "out of memory gathering what dies with "
                         TECS__ENT_FMT, TECS__ENT(e));
    for (int32_t k = 0; k < s->nkill; k++) {
        uint32_t x = TECS_ENTITY_INDEX(s->kill[k]);
        tecs_err_t err = s->nrefuse ? refused(w, s, e, x) : TECS_OK;
        if (err)
            return err;
        const rel_head *h;
        uint32_t first = first_child(s, x), c = first;
        while (c != NONE && !err) {
            err = rel_gather(w, s, c);
            c = link_at(s, c)->next;
            if (c == first)
                c = NONE;
        }
        for (int32_t i = 0; i < s->nrels && s->ndestroy && !err && is_paired(s, x); i++) {
            const rel_info *ri = &s->rels[i];
            if (ri->childof || ri->cleanup != TECS_CLEANUP_DESTROY ||
                (h = map_find(s, i, x)) == NULL || h->ntgt == 0)
                continue;
            uint32_t n = h->tgt;
            do {
                err = rel_gather(w, s, ri->nodes[n].src);
                n = ri->nodes[n].next_tgt;
            } while (n != h->tgt && !err);
        }
        if (err)
            return tecs__err(w, TECS_ENOMEM, "out of memory gathering what dies with "
                             TECS__ENT_FMT, TECS__ENT(e));
    }
    return TECS_OK;
}

/* Does slot x have children or sources whose relation destroys or refuses? */
static bool takes_others(const rel_state *s, uint32_t x)
{
    if (is_parent(s, x))
        return true;
    for (int32_t i = 0; i < s->nrels && (s->ndestroy || s->nrefuse) && is_paired(s, x); i++) {
        const rel_head *h;
        if (!s->rels[i].childof && s->rels[i].cleanup != TECS_CLEANUP_REMOVE &&
            (h = map_find(s, i, x)) != NULL && h->ntgt > 0)
            return true;
    }
    return false;
}

static tecs_err_t on_destroy(tecs_world_t *w, void *ctx, tecs_entity_t e)
{
    rel_state *s = ctx;
    uint32_t es = TECS_ENTITY_INDEX(e);
    if (w->base.closed == TECS__RESETTING) {
        /* Every entity dies and none may refuse: the subtree goes first,
        ** a leaf at a time (no memory asked for), each with its pairs, so
        ** that no pair outlives an entity it names. */
        while (is_parent(s, es)) {
            uint32_t x = first_child(s, es);
            while (is_parent(s, x))
                x = first_child(s, x);
            tecs__destroy_now(w, id_of(w, x));
        }
        forget(w, s, es);
        return TECS_OK;
    }
    if (s->cleaning || !takes_others(s, es)) {
        forget(w, s, es);
        return TECS_OK;
    }
    tecs_err_t err = gather_all(w, s, e);
    if (err)
        return err;
    /* Last gathered first: each entity after everything gathered through
    ** it (its children after their own children). */
    s->cleaning = true;
    for (int32_t k = s->nkill - 1; k >= 1; k--)
        if (tecs__ei_alive(w, s->kill[k]))
            tecs__destroy_now(w, s->kill[k]);
    s->cleaning = false;
    forget(w, s, es);
    if (s->cap_kill > 4096) {           /* a large cleanup gives its room back */
        tecs__free(w, s->kill, (size_t)s->cap_kill * sizeof *s->kill);
        tecs__free(w, s->seen, (size_t)s->cap_seen * sizeof *s->seen);
        s->kill = NULL;
        s->seen = NULL;
        s->cap_kill = 0;
        s->cap_seen = 0;
    }
    s->nkill = 0;
    return TECS_OK;
}

/* ---- the bus's other callbacks -------------------------------------------- */

/* ---- clones ---------------------------------------------------------------
**
** A clone plan's copies (the bus's on_clone; store.h) take their sources'
** pairs: the parent, if the copy's archetype has the ChildOf tag (a clone
** is a sibling of its source, at the same level; an instance's root has
** none), and the pairs of every user relation not made .no_clone, values
** copied. With the plan's remap, a pair whose target is one of the plan's
** sources (a parent in an instanced subtree included) points at that
** source's copy of the same rank instead. Pairs that target a source stay
** its own. Reserve first for all the plan's copies (map entries, link
** pages at the copies' slots, nodes), then link, which cannot fail: the
** parent before the core announces the birth (the row's tags say it has
** one), the pairs after all the plan's births, each with its events, as
** tecs_pair_add would add them.
*/

/* Do plan source i's copies (slot es) inherit from it: is its own base
** tag in their archetype? */
static bool inherits_src(const rel_state *s, const tecs__clone_plan *p, int32_t i, uint32_t es)
{
    const rel_link *l = link_at(s, es);
    const tecs_archetype_t *to = p->srcs[i].to;
    return l && l->btag && to && tecs__arch_col(to, l->btag) != TECS__COL_ABSENT;
}

/* The pairs of plan source i (slot es) in relation rel that its copies
** take. */
static uint32_t clone_count(const tecs_world_t *w, const rel_state *s, int32_t rel,
                            const tecs__clone_plan *p, int32_t i, uint32_t es)
{
    const rel_info *ri = &s->rels[rel];
    if (ri->childof) {
        const tecs_archetype_t *to = p->srcs[i].to;
        return parent_slot(s, es) != NONE &&
               (to == NULL || tecs__arch_col(to, ri->comp) != TECS__COL_ABSENT);
    }
    if (rel == s->isa && p->remap)      /* an instance: its source is its base */
        return inherits_src(s, p, i, es);
    (void)w;
    const rel_head *h = ri->no_clone ? NULL : map_find(s, rel, es);
    return h ? h->nsrc : 0;
}

/* The index of the plan source in slot t, or -1 (always without remap). */
static int32_t plan_index(const tecs__clone_plan *p, uint32_t t)
{
    for (int32_t i = 0; p->remap && i < p->m; i++)
        if (TECS_ENTITY_INDEX(p->srcs[i].src) == t)
            return i;
    return -1;
}

/* The slot a copy of rank g points at for the target slot t. */
static uint32_t mapped(const tecs_world_t *w, const tecs__clone_plan *p, uint32_t t, int32_t g,
                       tecs_entity_t dst)
{
    int32_t i = plan_index(p, t);
    (void)w;
    if (i < 0)
        return t;
    if (i == w->store.plan_at)
        return TECS_ENTITY_INDEX(dst);
    return TECS_ENTITY_INDEX(p->out[(int64_t)i * p->n + g]);
}

static tecs_err_t clone_reserve(tecs_world_t *w, rel_state *s, const tecs__clone_plan *p)
{
    uint32_t entries = 0, pairs = 0;
    tecs_err_t err;
    for (int32_t r = 0; r < s->nrels; r++) {
        rel_info *ri = &s->rels[r];
        uint64_t nodes = 0;
        for (int32_t i = 0; i < p->m; i++) {
            uint32_t es = TECS_ENTITY_INDEX(p->srcs[i].src);
            uint32_t k = clone_count(w, s, r, p, i, es);
            pairs += k;
            nodes += ri->childof ? 0 : k;
            if (ri->childof) {
                entries += k && plan_index(p, parent_slot(s, es)) >= 0;   /* a new parent */
                continue;
            }
            entries += k > 0;
            if (r == s->isa && p->remap) {
                entries += k;                           /* the source as a target */
                continue;
            }
            const rel_head *h = k ? map_find(s, r, es) : NULL;
            for (uint32_t x = h ? h->src : NONE; x != NONE; x = ri->nodes[x].next_src)
                entries += plan_index(p, ri->nodes[x].tgt) >= 0;        /* a new target */
        }
        if (nodes * (uint64_t)p->n >= NONE)
            return tecs__err(w, TECS_ELIMIT, "too many pairs of one relation");
        if (nodes && (err = node_reserve_n(w, ri, (uint32_t)(nodes * (uint64_t)p->n))))
            return err;
    }
    if (pairs == 0)
        return TECS_OK;
    w->store.plan_copies = true;
    if ((uint64_t)entries * (uint64_t)p->n >= NONE)
        return tecs__err(w, TECS_ELIMIT, "too many relationship entries");
    if ((err = map_reserve(w, s, entries * (uint32_t)p->n)))
        return err;
    tecs__ei_walk wk = tecs__ei_ahead(w);
    for (int32_t i = 0; i < p->m; i++)
        for (int32_t g = 0; g < p->n; g++)
            if ((err = link_reserve(w, s, tecs__clone_slot(w, p, i, g, &wk))))
                return err;
    for (int32_t r = 0; r < s->nrels; r++) {
        rel_info *ri = &s->rels[r];
        for (int32_t i = 0; !ri->childof && ri->size && i < p->m; i++) {
            uint32_t es = TECS_ENTITY_INDEX(p->srcs[i].src);
            const rel_head *h = clone_count(w, s, r, p, i, es) ? map_find(s, r, es) : NULL;
            for (uint32_t x = h ? h->src : NONE; x != NONE; x = ri->nodes[x].next_src) {
                /* A target in the plan is a copy: no id yet (0). */
                uint32_t t = ri->nodes[x].tgt;
                tecs_entity_t te = plan_index(p, t) >= 0 ? 0 : id_of(w, t);
                for (int32_t k = 0; k < p->n; k++)
                    if ((err = pair_veto(w, s, ri, TECS__EV_ADD, 0, te,
                                         ri->size ? node_val(ri, x) : NULL)))
                        return err;
            }
        }
    }
    return TECS_OK;
}

/* dst (rank g) takes src's pairs of user relation rel, in src's order,
** each announced once linked (as tecs_pair_add would: a membership test
** reads the world without it, with those before it). */
static void clone_pairs(tecs_world_t *w, rel_state *s, int32_t rel, uint32_t es,
                        tecs_entity_t dst, int32_t g)
{
    rel_info *ri = &s->rels[rel];
    const tecs__clone_plan *p = w->store.plan;
    uint32_t ds = TECS_ENTITY_INDEX(dst), last = NONE;
    bit_put(page_of(s, ds)->paired, ds, true);
    for (uint32_t x = map_find(s, rel, es)->src; x != NONE; x = ri->nodes[x].next_src) {
        uint32_t n = node_take(ri), ts = mapped(w, p, ri->nodes[x].tgt, g, dst);
        ri->nodes[n] = (rel_node){ .src = ds, .tgt = NONE, .next_src = NONE };
        rel_head *dh = map_put(s, rel, ds);
        dh->nsrc++;
        if (last == NONE)
            dh->src = n;
        else
            ri->nodes[last].next_src = n;
        last = n;
        bit_put(page_of(s, ts)->paired, ts, true);
        tgt_join(s, ri, rel, n, ts);
        void *v = ri->size ? node_val(ri, n) : NULL;
        if (v)
            memcpy(v, node_val(ri, x), ri->size);
        s->stamp++;
        tecs_entity_t t = id_of(w, ts);
        pair_event(w, TECS__EV_ADD, dst, ri->comp, t, 0, v);    /* callbacks queue */
        if (v)
            pair_event(w, TECS__EV_SET, dst, ri->comp, t, 0, v);
    }
}

/* The instance dst inherits from its source (slot es): (IsA, source),
** its archetype holding the source's tag already. */
static void clone_isa(tecs_world_t *w, rel_state *s, uint32_t es, tecs_entity_t dst)
{
    rel_info *ri = &s->rels[s->isa];
    uint32_t ds = TECS_ENTITY_INDEX(dst), n = node_take(ri);
    bit_put(page_of(s, ds)->paired, ds, true);
    bit_put(page_of(s, es)->paired, es, true);
    ri->nodes[n] = (rel_node){ .src = ds, .tgt = NONE, .next_src = NONE };
    rel_head *dh = map_put(s, s->isa, ds);
    dh->nsrc = 1;
    dh->src = n;
    tgt_join(s, ri, s->isa, n, es);
    s->stamp++;
    pair_event(w, TECS__EV_ADD, dst, ri->comp, id_of(w, es), 0, NULL);  /* callbacks queue */
}

static tecs_err_t on_clone(tecs_world_t *w, void *ctx, int step, tecs_entity_t src,
                           tecs_entity_t dst, int32_t g)
{
    rel_state *s = ctx;
    const tecs__clone_plan *p = w->store.plan;
    if (step == TECS__CLONE_RESERVE)
        return clone_reserve(w, s, p);
    uint32_t es = TECS_ENTITY_INDEX(src);
    for (int32_t i = 0; i < s->nrels; i++) {
        if (clone_count(w, s, i, p, w->store.plan_at, es) == 0 ||
            s->rels[i].childof != (step == TECS__CLONE_LINK))
            continue;
        if (s->rels[i].childof)
            ring_join(s, TECS_ENTITY_INDEX(dst), mapped(w, p, parent_slot(s, es), g, dst));
        else if (i == s->isa && p->remap)
            clone_isa(w, s, es, dst);
        else
            clone_pairs(w, s, i, es, dst, g);
        s->stamp++;
    }
    return TECS_OK;
}

static tecs_err_t rel_on_veto(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                          const void *vals, int32_t n)
{
    (void)vals;
    (void)n;
    rel_state *s = ctx;
    if (s->asking)
        return TECS_OK;         /* its own question about a pair's value */
    if (w->store.cloning && ev == TECS__EV_ADD && e == 0)
        return TECS_OK;         /* a clone's tags: on_clone links it */
    if (c < (tecs_comp_t)s->cap_rel_of && s->rel_of[c] < 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is the relation add-on's: it "
                         "follows tecs_pair_add and tecs_pair_remove of ChildOf",
                         TECS__COMP(w, c));
    if (s->tag_base && s->tag_base[c] != NONE)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is the relation add-on's: it "
                         "follows tecs_pair_add and tecs_pair_remove of IsA",
                         TECS__COMP(w, c));
    int32_t i = rel_index(w, c);
    if (i < 0)
        return TECS_OK;
    return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a relation: change its pairs with "
                     "tecs_pair_add, tecs_pair_set and tecs_pair_remove", TECS__COMP(w, c));
}

/* Drop every pair and link, keeping the relations. */
static void rel_clear(tecs_world_t *w, rel_state *s)
{
    (void)w;
    if (s->map)
        memset(s->map, 0, (size_t)s->map_cap * sizeof *s->map);
    s->map_n = 0;
    for (int32_t p = 0; p < s->npages; p++) {
        rel_page *pg = s->pages[p];
        for (uint32_t i = 0; pg && i < LINK_PAGE; i++)
            pg->links[i] = (rel_link){ NONE, NONE, NONE, 0 };
        if (pg) {
            memset(pg->parent, 0, sizeof pg->parent);
            memset(pg->paired, 0, sizeof pg->paired);
        }
    }
    for (int32_t i = 0; i < s->nrels; i++) {
        rel_info *ri = &s->rels[i];
        ri->nnodes = 0;
        ri->free = NONE;
        ri->npairs = 0;
    }
    for (tecs_comp_t c = s->min_btag; s->tag_base && c && c < TECS_MAX_COMPONENTS; c++)
        if (s->tag_base[c] < TAG_FREE) {    /* every base died */
            s->tag_base[c] = TAG_FREE;
            s->spare[s->nspare++] = c;
        }
    s->stamp++;
}

static void rel_on_reset(tecs_world_t *w, void *ctx)
{
    rel_clear(w, ctx);
}

static void rel_on_fini(tecs_world_t *w, void *ctx)
{
    rel_state *s = ctx;
    for (int32_t i = 0; i < s->nrels; i++) {
        rel_info *ri = &s->rels[i];
        tecs__free(w, ri->nodes, (size_t)ri->cap * sizeof *ri->nodes);
        tecs__free(w, ri->vals, (size_t)ri->cap * ri->size);
    }
    for (int32_t p = 0; p < s->npages; p++)
        tecs__free(w, s->pages[p], s->pages[p] ? sizeof **s->pages : 0);
    tecs__free(w, s->pages, (size_t)s->npages * sizeof *s->pages);
    tecs__free(w, s->map, (size_t)s->map_cap * sizeof *s->map);
    tecs__free(w, s->rels, (size_t)s->cap_rels * sizeof *s->rels);
    tecs__free(w, s->rel_of, (size_t)s->cap_rel_of * sizeof *s->rel_of);
    tecs__free(w, s->kill, (size_t)s->cap_kill * sizeof *s->kill);
    tecs__free(w, s->seen, (size_t)s->cap_seen * sizeof *s->seen);
    tecs__free(w, s->depth, (size_t)s->cap_depth * sizeof *s->depth);
    tecs__free(w, s->moves, (size_t)s->cap_moves * sizeof *s->moves);
    tecs__free(w, s->mto, (size_t)s->cap_mto * sizeof *s->mto);
    tecs__free(w, s->tag_base, s->tag_base ? TECS_MAX_COMPONENTS * sizeof *s->tag_base : 0);
    tecs__free(w, s->spare, (size_t)s->cap_spare * sizeof *s->spare);
    tecs__free(w, s, sizeof *s);
    w->rel = NULL;
}

/* ---- values lent to indexes ------------------------------------------------
**
** An index over a value relation's pairs (the bus's tecs__values) reads
** those of one target t, the sources of t's ring, or of any target
** (TECS_WILDCARD, an exclusive relation: one pair per source), every node
** in use of the pool. ChildOf and tag relations have no value to index.
*/

static bool lent_keeps(const tecs_world_t *w, void *ctx, tecs_comp_t c)
{
    (void)ctx;
    return rel_index(w, c) >= 0;
}

static tecs_err_t lent_indexable(tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t)
{
    const rel_info *ri = &((rel_state *)ctx)->rels[rel_index(w, c)];
    if (ri->childof)
        return tecs__err(w, TECS_EINVAL, "ChildOf has no value to index (an index over a "
                         "relation reads a value relation's pairs)");
    if (ri->size == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag relation: its pairs have "
                         "no value to index", TECS__COMP(w, c));
    if (t == (tecs_entity_t)TECS_WILDCARD && !ri->exclusive)
        return tecs__err(w, TECS_EINVAL, "an index on (" TECS__COMP_FMT ", *) needs an "
                         "exclusive relation, one value per entity: index its pairs of one "
                         "target instead", TECS__COMP(w, c));
    if (t != (tecs_entity_t)TECS_WILDCARD && tecs__ei_alive(w, t) == NULL)
        return tecs__err(w, TECS_EDEAD, "an index on (" TECS__COMP_FMT ", " TECS__ENT_FMT
                         "): the target is not alive", TECS__COMP(w, c), TECS__ENT(t));
    return TECS_OK;
}

static int32_t lent_count(const tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t)
{
    const rel_state *s = ctx;
    int32_t i = rel_index(w, c);
    if (t == (tecs_entity_t)TECS_WILDCARD)
        return (int32_t)s->rels[i].npairs;
    const rel_head *h = tecs__ei_alive(w, t) ? map_find(s, i, TECS_ENTITY_INDEX(t)) : NULL;
    return h ? (int32_t)h->ntgt : 0;
}

static tecs_err_t lent_each(tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t,
                            tecs__value_fn fn, void *fctx)
{
    const rel_state *s = ctx;
    int32_t i = rel_index(w, c);
    const rel_info *ri = &s->rels[i];
    tecs_err_t err = TECS_OK;
    if (t == (tecs_entity_t)TECS_WILDCARD) {
        for (uint32_t n = 0; n < ri->nnodes && !err; n++)
            if (ri->nodes[n].src != NONE)
                err = fn(fctx, id_of(w, ri->nodes[n].src), node_val(ri, n));
        return err;
    }
    const rel_head *h = tecs__ei_alive(w, t) ? map_find(s, i, TECS_ENTITY_INDEX(t)) : NULL;
    if (h == NULL || h->ntgt == 0)
        return TECS_OK;
    uint32_t n = h->tgt;
    do {
        err = fn(fctx, id_of(w, ri->nodes[n].src), node_val(ri, n));
        n = ri->nodes[n].next_tgt;
    } while (n != h->tgt && !err);
    return err;
}

static const void *lent_value(const tecs_world_t *w, void *ctx, tecs_comp_t c,
                              tecs_entity_t e, tecs_entity_t t)
{
    const rel_state *s = ctx;
    int32_t i = rel_index(w, c);
    if (t != (tecs_entity_t)TECS_WILDCARD)
        return tecs_pair_get(w, e, c, t);
    const rel_head *h = map_find(s, i, TECS_ENTITY_INDEX(e));
    return h && h->nsrc > 0 ? node_val(&s->rels[i], h->src) : NULL;
}

static const tecs__values lent = {
    .keeps = lent_keeps,
    .indexable = lent_indexable,
    .count = lent_count,
    .each = lent_each,
    .value = lent_value,
};

/* ---- the structure check ------------------------------------------------------ */

static tecs_err_t rel_bad(tecs_world_t *w, const char *what, uint32_t slot)
{
    return tecs__err(w, TECS_ECORRUPT, "relations: %s (slot %u)", what, slot);
}

static tecs_err_t verify_childof(tecs_world_t *w, const rel_state *s, uint32_t *nchildren)
{
    tecs_comp_t co = s->rels[s->childof].comp;
    uint32_t n = 0;
    for (int32_t i = 0; i < w->ei.nrecs; i++) {
        uint32_t x = (uint32_t)i;
        const rel_link *l = link_at(s, x);
        const tecs__record *r = &w->ei.recs[i];
        bool alive = tecs__ei_alive(w, id_of(w, x)) != NULL;
        bool tagged = alive && tecs__arch_col(tecs__rec_arch(w, r), co) != TECS__COL_ABSENT;
        if (is_parent(s, x) != (map_find(s, s->childof, x) != NULL))
            return rel_bad(w, "a parent's bit disagrees with its entry", x);
        if (l == NULL || l->parent == NONE) {
            if (tagged || (alive && slot_depth(w, s, x) != 0))
                return rel_bad(w, "a child without a parent", x);
            if (s->map_n && map_find(s, s->childof, x) && !alive)
                return rel_bad(w, "a dead entity has children", x);
            continue;
        }
        if (!alive)
            return rel_bad(w, "a dead entity has a parent", x);
        if (!tagged)
            return rel_bad(w, "a parent's child lacks the ChildOf tag", x);
        if (l->parent >= (uint32_t)w->ei.nrecs || !tecs__ei_alive(w, id_of(w, l->parent)))
            return rel_bad(w, "a child's parent is dead", x);
        const rel_link *nx = link_at(s, l->next), *pv = link_at(s, l->prev);
        if (nx == NULL || pv == NULL || nx->prev != x || pv->next != x ||
            nx->parent != l->parent)
            return rel_bad(w, "a broken ring of siblings", x);
        if (map_find(s, s->childof, l->parent) == NULL)
            return rel_bad(w, "a child whose parent has no entry", x);
        uint32_t up = l->parent;
        int32_t d = 0;
        for (; up != NONE; up = parent_slot(s, up))
            if (up == x || ++d > w->ei.nrecs)
                return rel_bad(w, "a cycle of parents", x);
        if (slot_depth(w, s, x) != d)
            return rel_bad(w, "a child's depth tag is not its level", x);
        n++;
    }
    *nchildren = n;
    return TECS_OK;
}

static tecs_err_t verify_nodes(tecs_world_t *w, const rel_state *s, int32_t i)
{
    const rel_info *ri = &s->rels[i];
    int64_t used = 0;
    for (uint32_t n = 0; n < ri->nnodes; n++) {
        const rel_node *x = &ri->nodes[n];
        if (x->src == NONE)
            continue;
        used++;
        if (x->src >= (uint32_t)w->ei.nrecs || x->tgt >= (uint32_t)w->ei.nrecs ||
            !tecs__ei_alive(w, id_of(w, x->src)) || !tecs__ei_alive(w, id_of(w, x->tgt)))
            return rel_bad(w, "a pair names a dead entity", n);
        if (ri->nodes[x->next_tgt].prev_tgt != n || ri->nodes[x->prev_tgt].next_tgt != n ||
            ri->nodes[x->next_tgt].tgt != x->tgt)
            return rel_bad(w, "a broken ring of sources", n);
        if (map_find(s, i, x->src) == NULL || map_find(s, i, x->tgt) == NULL)
            return rel_bad(w, "a pair without its entries", n);
        if (!is_paired(s, x->src) || !is_paired(s, x->tgt))
            return rel_bad(w, "a pair's entity lacks its bit", n);
    }
    if (used != ri->npairs)
        return rel_bad(w, "the pair count is off", (uint32_t)used);
    return TECS_OK;
}

static tecs_err_t rel_verify(tecs_world_t *w, void *ctx)
{
    const rel_state *s = ctx;
    uint32_t children = 0, entries = 0, kids = 0;
    tecs_err_t err = s->childof >= 0 ? verify_childof(w, s, &children) : TECS_OK;
    for (int32_t i = 0; i < s->nrels && !err; i++) {
        if (w->comp.comps[s->rels[i].comp].veto == 0)
            return rel_bad(w, "a relation is not vetoed", s->rels[i].comp);
        if (!s->rels[i].childof)
            err = verify_nodes(w, s, i);
    }
    if (err)
        return err;
    /* Every entry's counts are its lists' lengths. */
    for (uint32_t k = 0; k < s->map_cap; k++) {
        const rel_head *h = &s->map[k];
        if (h->key == 0)
            continue;
        entries++;
        int32_t i = (int32_t)(h->key >> 32) - 1;
        uint32_t x = (uint32_t)h->key;
        if (i < 0 || i >= s->nrels || map_find(s, i, x) != h)
            return rel_bad(w, "a misplaced entry", x);
        const rel_info *ri = &s->rels[i];
        uint32_t m = 0;
        if (ri->childof) {
            if (h->ntgt == 0)
                return rel_bad(w, "an empty entry", x);
            uint32_t c = h->tgt;
            do {
                const rel_link *l = link_at(s, c);
                if (l == NULL || l->parent != x || ++m > h->ntgt)
                    return rel_bad(w, "children and their count disagree", x);
                c = l->next;
            } while (c != h->tgt);
            kids += m;
        } else {
            if (h->nsrc == 0 && h->ntgt == 0)
                return rel_bad(w, "an empty entry", x);
            for (uint32_t n = h->src; n != NONE; n = ri->nodes[n].next_src)
                if (ri->nodes[n].src != x || ++m > h->nsrc)
                    return rel_bad(w, "pairs and their count disagree", x);
            uint32_t t = 0, n = h->tgt;
            for (uint32_t left = h->ntgt; left > 0; left--, n = ri->nodes[n].next_tgt)
                if (n == NONE || ri->nodes[n].tgt != x || (left < h->ntgt && n == h->tgt))
                    return rel_bad(w, "sources and their count disagree", x);
                else
                    t++;
            if (h->ntgt && n != h->tgt)
                return rel_bad(w, "sources and their count disagree", x);
        }
        if (m != (ri->childof ? h->ntgt : h->nsrc))
            return rel_bad(w, "a count is off", x);
    }
    if (entries != s->map_n || kids != children)
        return rel_bad(w, "the map's counts are off", entries);
    return s->isa >= 0 ? isa_agree(w, s, TECS_ECORRUPT) : TECS_OK;
}

/* ---- query terms ------------------------------------------------------------
**
** Two kinds of row filters (core/query_filter.h), registered with the query
** engine when the add-on starts:
**
**   user relations   a term (R, t), (R, *) (target TECS_WILDCARD or 0) or
**                    (*, t) (comp TECS_WILDCARD): no archetype holds R, so
**                    every archetype may have rows that pass, decided by a
**                    lookup of the row's entity; a value relation's (R, t)
**                    hands out the pair's value, (R, *) the first pair's.
**   ChildOf          a term (ChildOf, p): the archetypes with the ChildOf
**                    tag, their rows whose parent is p; (ChildOf, *) is
**                    every row of them.
**
** Caches and membership observers follow pairs through the pair events:
** each kind hears its relation's ADD and REMOVE (a (*, t) term every
** relation's; a term read from the parent ChildOf's), which come with no
** move (the bus's in_place), and reads the pair they announce as s->ann
** says; a move of a parent re-decides its children's terms read from it
** (each_dep).
*/

enum { SEEN_AS_IS, SEEN_WITHOUT, SEEN_SWAPPED };

/* How a test of e's pairs of relation rel reads the announced pair (v
** NULL: a query's read; else a membership test's view). */
static int seen(const rel_state *s, tecs_entity_t e, tecs_comp_t rel, const tecs__view *v)
{
    const rel_ann *n = &s->ann;
    if (n->e != e || n->rel != rel)
        return SEEN_AS_IS;
    if (v == NULL)
        return n->leaving && n->other == 0 ? SEEN_WITHOUT : SEEN_AS_IS;
    if (v->flip != rel)
        return SEEN_AS_IS;
    return n->other == 0 ? SEEN_WITHOUT : n->leaving ? SEEN_AS_IS : SEEN_SWAPPED;
}

/* Does e hold (relation i, t) (TECS_WILDCARD: any target), read as v says
** (NULL: as a query reads it), its ChildOf tag from archetype a (NULL:
** its own)? */
static bool holds_seen(const tecs_world_t *w, int32_t i, tecs_entity_t e, tecs_entity_t t,
                       const tecs__view *v, const tecs_archetype_t *a)
{
    const rel_state *s = w->rel;
    const rel_ann *n = &s->ann;
    uint32_t es = TECS_ENTITY_INDEX(e);
    bool any = t == (tecs_entity_t)TECS_WILDCARD;
    if (s->rels[i].childof && a && tecs__arch_col(a, s->rels[i].comp) == TECS__COL_ABSENT)
        return false;           /* a move's other side: no parent there */
    if (v && e == s->gone && s->rels[i].childof)    /* dying: its link went first */
        return any || TECS_ENTITY_INDEX(t) == s->gone_parent;
    int how = seen(s, e, s->rels[i].comp, v);
    if (how == SEEN_WITHOUT)
        return any ? count_of(w, i, es) > 1 : t != n->t && holds(w, i, es, t);
    if (how == SEEN_SWAPPED && !any)
        return t == n->t ? false : t == n->other ? true : holds(w, i, es, t);
    return holds(w, i, es, t);
}

/* Does e hold the pair of term (comp, target), read as v says, its
** components from archetype a (NULL: its own)? */
static bool term_seen(const tecs_world_t *w, const tecs_term_t *t, tecs_entity_t e,
                      const tecs__view *v, const tecs_archetype_t *a)
{
    const rel_state *s = w->rel;
    tecs_entity_t tgt = t->target ? t->target : (tecs_entity_t)TECS_WILDCARD;
    if (tgt != (tecs_entity_t)TECS_WILDCARD && tecs__ei_alive(w, tgt) == NULL)
        return false;
    if (t->comp != TECS_WILDCARD) {
        int32_t i = rel_index(w, t->comp);
        return i >= 0 && holds_seen(w, i, e, tgt, v, a);
    }
    for (int32_t i = 0; i < s->nrels; i++)
        if (holds_seen(w, i, e, tgt, v, a))
            return true;
    return false;
}

/* Does e, a row of a, hold the pair of term (comp, target), as a query
** reads it? (While a move is announced, the link may not yet agree with
** the row's archetype: the archetype's ChildOf tag decides.) */
static bool term_has(const tecs_world_t *w, const tecs_term_t *t, tecs_entity_t e,
                     const tecs_archetype_t *a)
{
    return term_seen(w, t, e, NULL, a);
}

/* The membership test of a pair term (the archetype's part is match's). */
static bool pair_entity(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                        int8_t entry, tecs_entity_t e, const tecs__view *v)
{
    (void)entry;
    static const tecs__view as_is = { 0 };
    return term_seen(w, &f->term, e, v ? v : &as_is, a);
}

/* (*, t) hears every relation; (R, t) and (R, *) their own. */
static bool user_hears(const tecs_world_t *w, const tecs__filter *f, tecs_comp_t c)
{
    return f->term.comp == TECS_WILDCARD ? rel_index(w, c) >= 0 : f->term.comp == c;
}

static void user_watch(tecs_world_t *w, const tecs__filter *f, int32_t d)
{
    if (f->term.comp == TECS_WILDCARD) {
        w->rel->wild += d;
        return;
    }
    tecs__query_watch_comp(w, f->term.comp, d);
}

/* The rows [64 wi, 64 wi + 64) of chunk k of a that hold the pair. */
static uint64_t term_word(const tecs_world_t *w, const tecs__filter *f,
                          const tecs_archetype_t *a, int32_t k, uint32_t wi)
{
    const tecs_entity_t *ents = tecs__chunk_ents(tecs__kcols(a, (uint32_t)k));
    int32_t left = a->count - k * (int32_t)w->arch.rows;
    uint32_t rows = left < (int32_t)w->arch.rows ? (uint32_t)left : w->arch.rows;
    uint32_t lo = wi << 6, hi = rows < lo + 64 ? rows : lo + 64;
    uint64_t bits = 0;
    for (uint32_t r = lo; r < hi; r++)
        bits |= (uint64_t)term_has(w, &f->term, ents[r], a) << (r - lo);
    return bits;
}

static bool user_claim(const tecs_world_t *w, tecs__filter *f)
{
    const tecs_term_t *t = &f->term;
    if (t->comp == TECS_WILDCARD)
        return t->target != 0 && t->target != (tecs_entity_t)TECS_WILDCARD;
    int32_t i = rel_index(w, t->comp);
    return i >= 0 && !w->rel->rels[i].childof && !t->from_parent;
}

/* A pair term reads (TECS_READ or TECS_FILTER) and names its target. */
static tecs_err_t pair_refuse(tecs_world_t *w, const tecs__filter *f)
{
    const tecs_term_t *t = &f->term;
    if (t->target == 0)
        return tecs__err(w, TECS_EINVAL, "term %d: a term of relation " TECS__COMP_FMT
                         " names the pair's target (TECS_WILDCARD: any)", (int)f->t,
                         TECS__COMP(w, t->comp));
    if (t->access == TECS_WRITE || t->change != TECS_CHANGE_ANY)
        return tecs__err(w, TECS_EINVAL, "term %d: a pair term is TECS_READ or TECS_FILTER, "
                         "with no change", (int)f->t);
    return TECS_OK;
}

/* (R, t) hands out the pair's value; (R, *) and ChildOf's terms the
** target, a tecs_entity_t. */
static uint32_t pair_size(const tecs_world_t *w, const tecs__filter *f)
{
    const tecs_term_t *t = &f->term;
    int32_t i = rel_index(w, t->comp);
    if (i < 0)
        return 0;
    if (w->rel->rels[i].childof || t->target == (tecs_entity_t)TECS_WILDCARD)
        return sizeof(tecs_entity_t);
    return w->rel->rels[i].size;
}

/* The id of slot x where it lies, in its row: valid while its row does
** not move (an iteration defers every move). */
static void *id_in_row(const tecs_world_t *w, uint32_t x)
{
    const tecs__record *r = &w->ei.recs[x];
    return tecs__ent_ptr(tecs__rec_arch(w, r), w, r->row);
}

static int8_t user_match(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a)
{
    (void)w, (void)f, (void)a;
    return 0;
}

/* Alike in every row while nobody holds such a pair (none has it). */
static bool user_uniform(const tecs_world_t *w, const tecs__filter *f,
                         const tecs_archetype_t *a, int8_t entry)
{
    (void)a, (void)entry;
    const rel_state *s = w->rel;
    const tecs_term_t *t = &f->term;
    if (t->comp == TECS_WILDCARD) {
        for (int32_t i = 0; i < s->nrels; i++)
            if (s->rels[i].childof ? map_find(s, i, TECS_ENTITY_INDEX(t->target)) != NULL
                                   : s->rels[i].npairs > 0)
                return false;
        return true;
    }
    return s->rels[rel_index(w, t->comp)].npairs == 0;
}

static uint64_t user_word(const tecs_world_t *w, const tecs__filter *f,
                          const tecs_archetype_t *a, int8_t entry, int32_t k, uint32_t wi)
{
    (void)entry;
    return k < 0 ? 0 : term_word(w, f, a, k, wi);
}

/* Does row of a hold the term's pair (either kind of pair term)? */
static bool pair_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                     int8_t entry, uint32_t row)
{
    (void)entry;
    return term_has(w, &f->term, *tecs__ent_ptr(a, w, row), a);
}

/* The value a one-row step hands out: the pair's (the first pair's for
** (R, *)). */
static void *user_value(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e)
{
    const tecs_term_t *t = &f->term;
    int32_t i = rel_index(w, t->comp);
    if (i < 0)
        return NULL;
    const rel_info *ri = &w->rel->rels[i];
    if (t->target != (tecs_entity_t)TECS_WILDCARD)
        return (void *)(uintptr_t)tecs_pair_get(w, e, t->comp, t->target);
    const rel_head *h = map_find(w->rel, i, TECS_ENTITY_INDEX(e));
    return h && h->nsrc > 0 ? id_in_row(w, ri->nodes[h->src].tgt) : NULL;
}

static const tecs__filter_kind user_kind = {
    .traits = TECS__FK_OPER | TECS__FK_NOCOL,
    .claim = user_claim,
    .match = user_match,
    .uniform = user_uniform,
    .word = user_word,
    .row = pair_row,
    .entity = pair_entity,
    .hears = user_hears,
    .watch = user_watch,
    .value = user_value,
    .refuse = pair_refuse,
    .size = pair_size,
};

static bool childof_claim(const tecs_world_t *w, tecs__filter *f)
{
    int32_t i = rel_index(w, f->term.comp);
    return i >= 0 && w->rel->rels[i].childof && f->term.target != 0;
}

static int8_t childof_match(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_archetype_t *a)
{
    (void)w;
    return tecs__arch_col(a, f->term.comp) == TECS__COL_ABSENT ? TECS__FILTER_OFF : 0;
}

/* (ChildOf, *): every row has a parent; (ChildOf, p): alike while p has
** no child. */
static bool childof_uniform(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_archetype_t *a, int8_t entry)
{
    (void)a, (void)entry;
    tecs_entity_t p = f->term.target;
    if (tecs__ei_alive(w, p) == NULL && p != (tecs_entity_t)TECS_WILDCARD)
        return true;                    /* no row has it */
    if (f->term.access != TECS_FILTER && f->term.oper != TECS_NONE)
        return false;                   /* its value comes run by run */
    return p == (tecs_entity_t)TECS_WILDCARD || !is_parent(w->rel, TECS_ENTITY_INDEX(p));
}

static uint64_t childof_word(const tecs_world_t *w, const tecs__filter *f,
                             const tecs_archetype_t *a, int8_t entry, int32_t k, uint32_t wi)
{
    if (k < 0)          /* (ChildOf, *): every row of an archetype with the tag */
        return f->term.target == (tecs_entity_t)TECS_WILDCARD && entry != TECS__FILTER_OFF
                   ? ~(uint64_t)0 : 0;
    return term_word(w, f, a, k, wi);
}

/* A ChildOf term's value is the row's parent id, shared by a run of
** siblings. */
static void *childof_value(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e)
{
    (void)f;
    uint32_t p = parent_slot(w->rel, TECS_ENTITY_INDEX(e));
    return p == NONE || slot_arch(w, p) == NULL ? NULL : id_in_row(w, p);
}

/* How many of the n entities at ents, ents + step, ... (n >= 1) have the
** first's parent, p (its slot, or NONE). Siblings made together have
** neighbouring slots: a page's links serve the rows while their slots stay
** in it, two rows a turn. */
static TECS__INLINE uint32_t siblings(const rel_state *s, const tecs_entity_t *ents, uint32_t n,
                                      int32_t step, uint32_t p)
{
    uint32_t x = TECS_ENTITY_INDEX(ents[0]), k = 1;
    if (p == NONE) {            /* rows without a parent */
        while (k < n && parent_slot(s, TECS_ENTITY_INDEX(ents[(ptrdiff_t)k * step])) == NONE)
            k++;
        return k;
    }
    const rel_link *l = page_of(s, x)->links;           /* p's children have pages */
    uint32_t base = x & ~(LINK_PAGE - 1);               /* l's first slot */
    for (; k + 1 < n; k += 2) {
        uint32_t x0 = TECS_ENTITY_INDEX(ents[(ptrdiff_t)k * step]) - base;
        uint32_t x1 = TECS_ENTITY_INDEX(ents[(ptrdiff_t)(k + 1) * step]) - base;
        if ((x0 | x1) >= LINK_PAGE)
            break;              /* one of them in another page: row by row */
        if (l[x0].parent != p)
            return k;
        if (l[x1].parent != p)
            return k + 1;
    }
    for (; k < n; k++) {
        x = TECS_ENTITY_INDEX(ents[(ptrdiff_t)k * step]);
        if (x - base >= LINK_PAGE) {
            const rel_page *pg = page_of(s, x);
            if (pg == NULL)
                break;          /* a page of no links: no parent */
            l = pg->links;
            base = x & ~(LINK_PAGE - 1);
        }
        if (l[x - base].parent != p)
            break;
    }
    return k;
}

/* A ChildOf term's run: rows of one parent; its value the parent's id
** where the rows hold the term's pair. */
static uint32_t childof_same(const tecs_world_t *w, const tecs__filter *f,
                             const tecs_entity_t *ents, uint32_t n, int32_t step, void **value)
{
    uint32_t p = parent_slot(w->rel, TECS_ENTITY_INDEX(ents[0]));
    if (value != NULL)
        *value = p != NONE && slot_arch(w, p) && term_has(w, &f->term, ents[0], NULL)
                     ? id_in_row(w, p) : NULL;
    return siblings(w->rel, ents, n, step, p);
}

/* (ChildOf, *) is the tag (match's test); (ChildOf, p) the parent. */
static bool childof_entity(const tecs_world_t *w, const tecs__filter *f,
                           const tecs_archetype_t *a, int8_t entry, tecs_entity_t e,
                           const tecs__view *v)
{
    if (entry == TECS__FILTER_OFF)
        return false;
    if (f->term.target == (tecs_entity_t)TECS_WILDCARD)
        return true;
    return pair_entity(w, f, a, entry, e, v);
}

static const tecs__filter_kind childof_kind = {
    .traits = TECS__FK_OPER | TECS__FK_SHARED,
    .claim = childof_claim,
    .match = childof_match,
    .uniform = childof_uniform,
    .word = childof_word,
    .row = pair_row,
    .entity = childof_entity,
    .value = childof_value,
    .same = childof_same,
    .refuse = pair_refuse,
    .size = pair_size,
};

/* A term read from the parent, { .comp = C, .from_parent = true }: the
** archetypes with the ChildOf tag, their rows whose parent has C; the
** value is the parent's, one for each run of rows with the same parent
** (TECS__FK_SHARED, the key the parent's slot). */

/* The value of the term's component in the entity of slot p (NONE: none),
** or NULL if it has none. */
static void *value_in(const tecs_world_t *w, const tecs__filter *f, uint32_t p)
{
    tecs_archetype_t *a = p == NONE ? NULL : slot_arch(w, p);
    if (a == NULL)
        return NULL;
    const tecs__record *r = &w->ei.recs[p];
    int32_t col = tecs__arch_col(a, f->term.comp);
    if (col == TECS__COL_ABSENT)
        return NULL;
    return col < 0 ? (void *)(uintptr_t)a : tecs__col_ptr(a, w, col, r->row);
}

/* The parent of e holds the term's component: its value, or NULL. */
static void *parent_value(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e)
{
    return value_in(w, f, parent_slot(w->rel, TECS_ENTITY_INDEX(e)));
}

static bool parent_claim(const tecs_world_t *w, tecs__filter *f)
{
    const tecs_term_t *t = &f->term;
    return t->from_parent && tecs__comp_get(w, t->comp) != NULL &&
           !tecs__comp_is_sparse(w, t->comp) && rel_index(w, t->comp) < 0;
}

static int8_t parent_match(const tecs_world_t *w, const tecs__filter *f,
                           const tecs_archetype_t *a)
{
    (void)f;
    const rel_state *s = w->rel;
    return s->childof < 0 || tecs__arch_col(a, s->rels[s->childof].comp) == TECS__COL_ABSENT
               ? TECS__FILTER_OFF : 0;
}

static bool parent_uniform(const tecs_world_t *w, const tecs__filter *f,
                           const tecs_archetype_t *a, int8_t entry)
{
    (void)w, (void)f, (void)a, (void)entry;
    return false;
}

/* The rows whose parent holds the component; consecutive rows of one
** parent ask once. */
static uint64_t parent_word(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_archetype_t *a, int8_t entry, int32_t k, uint32_t wi)
{
    if (k < 0 || entry == TECS__FILTER_OFF)
        return 0;               /* (no parent in an archetype without the tag) */
    const rel_state *s = w->rel;
    const tecs_entity_t *ents = tecs__chunk_ents(tecs__kcols(a, (uint32_t)k));
    int32_t left = a->count - k * (int32_t)w->arch.rows;
    uint32_t rows = left < (int32_t)w->arch.rows ? (uint32_t)left : w->arch.rows;
    uint32_t lo = wi << 6, hi = rows < lo + 64 ? rows : lo + 64, last = NONE;
    uint64_t bits = 0, has = 0;
    for (uint32_t r = lo; r < hi; r++) {
        uint32_t p = parent_slot(s, TECS_ENTITY_INDEX(ents[r]));
        if (p != last) {
            last = p;
            const tecs_archetype_t *pa = p == NONE ? NULL : slot_arch(w, p);
            has = pa && tecs__arch_col(pa, f->term.comp) != TECS__COL_ABSENT;
        }
        bits |= has << (r - lo);
    }
    return bits;
}

static bool parent_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                       int8_t entry, uint32_t row)
{
    return entry != TECS__FILTER_OFF && parent_value(w, f, *tecs__ent_ptr(a, w, row)) != NULL;
}

/* A run of siblings, its value their parent's: looked up first, so that
** its loads are under way while the run is read. */
static uint32_t parent_same(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_entity_t *ents, uint32_t n, int32_t step, void **value)
{
    uint32_t p = parent_slot(w->rel, TECS_ENTITY_INDEX(ents[0]));
    if (value != NULL)
        *value = value_in(w, f, p);
    return siblings(w->rel, ents, n, step, p);
}

/* Has e's parent the component, read as v says: a reparent's ADD read
** before it names the old parent, a parent that moves reads from where
** it was? */
static bool parent_entity(const tecs_world_t *w, const tecs__filter *f,
                          const tecs_archetype_t *a, int8_t entry, tecs_entity_t e,
                          const tecs__view *v)
{
    (void)a;
    if (entry == TECS__FILTER_OFF)
        return false;           /* no parent, as the archetype a says */
    const rel_state *s = w->rel;
    uint32_t p = parent_slot(s, TECS_ENTITY_INDEX(e));
    if (v && seen(s, e, s->rels[s->childof].comp, v) == SEEN_SWAPPED)
        p = TECS_ENTITY_INDEX(s->ann.other);
    else if (p == NONE && e == s->gone)
        p = s->gone_parent;             /* dying: its link went first */
    if (p == NONE)
        return false;
    const tecs_archetype_t *pa = v && v->moved && TECS_ENTITY_INDEX(v->moved) == p
                                     ? v->from : slot_arch(w, p);
    return pa && tecs__arch_col(pa, f->term.comp) != TECS__COL_ABSENT;
}

static bool parent_hears(const tecs_world_t *w, const tecs__filter *f, tecs_comp_t c)
{
    (void)f;
    return c == w->rel->rels[w->rel->childof].comp;
}

static void parent_watch(tecs_world_t *w, const tecs__filter *f, int32_t d)
{
    (void)f;
    tecs__query_watch_comp(w, w->rel->rels[w->rel->childof].comp, d);
}

/* The children of e read e's archetype. */
static void parent_each_dep(tecs_world_t *w, const tecs__filter *f, tecs_entity_t e,
                            void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx)
{
    (void)f;
    const rel_state *s = w->rel;
    uint32_t es = TECS_ENTITY_INDEX(e);
    if (!is_parent(s, es))
        return;
    for (uint32_t first = first_child(s, es), c = first; c != NONE;) {
        uint32_t next = link_at(s, c)->next;
        fn(w, id_of(w, c), ctx);
        c = next == first ? NONE : next;
    }
}

static const tecs__filter_kind parent_kind = {
    .traits = TECS__FK_OPER | TECS__FK_NOCOL | TECS__FK_SHARED,
    .claim = parent_claim,
    .match = parent_match,
    .uniform = parent_uniform,
    .word = parent_word,
    .row = parent_row,
    .entity = parent_entity,
    .hears = parent_hears,
    .watch = parent_watch,
    .each_dep = parent_each_dep,
    .value = parent_value,
    .same = parent_same,
};

/* An inherited term, { .comp = C, .inherited = true }: the archetypes
** holding C (entry 1: the rows' own, the field the column) and those with
** a base tag (entry 0: the rows read their base's value, one for the
** chunk; TECS__FK_SHARED, the whole chunk one run). A chunk's rows are
** alike for it, so most steps are whole chunks (tog_mode's uniform). */
enum { INHERITS = 0, OWNS = 1 };

static bool inherit_claim(const tecs_world_t *w, tecs__filter *f)
{
    const tecs_term_t *t = &f->term;
    return t->inherited && t->target == 0 && tecs__comp_get(w, t->comp) != NULL &&
           !tecs__comp_is_sparse(w, t->comp) && rel_index(w, t->comp) < 0;
}

static int8_t inherit_match(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_archetype_t *a)
{
    if (tecs__arch_col(a, f->term.comp) != TECS__COL_ABSENT)
        return OWNS;
    /* A base tag by its name: what an archetype matches stays as it was
    ** made, whether a base holds the tag now or a load has yet to bind it. */
    for (int32_t i = a->ncomps - 1; i >= 0; i--)
        if (btag_named(w, a->comps[i]))
            return INHERITS;
    return TECS__FILTER_OFF;
}

static bool inherit_uniform(const tecs_world_t *w, const tecs__filter *f,
                            const tecs_archetype_t *a, int8_t entry)
{
    (void)w, (void)f, (void)a, (void)entry;
    return true;
}

static bool inherit_has(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                        int8_t entry, const tecs__view *v)
{
    return entry == OWNS ||
           (entry == INHERITS && chain_value(w, w->rel, a, f->term.comp, v) != NULL);
}

static uint64_t inherit_word(const tecs_world_t *w, const tecs__filter *f,
                             const tecs_archetype_t *a, int8_t entry, int32_t k, uint32_t wi)
{
    (void)k, (void)wi;
    return inherit_has(w, f, a, entry, NULL) ? ~(uint64_t)0 : 0;
}

static bool inherit_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                        int8_t entry, uint32_t row)
{
    (void)row;
    return inherit_has(w, f, a, entry, NULL);
}

static bool inherit_entity(const tecs_world_t *w, const tecs__filter *f,
                           const tecs_archetype_t *a, int8_t entry, tecs_entity_t e,
                           const tecs__view *v)
{
    (void)e;
    return inherit_has(w, f, a, entry, v);
}

/* The entity's own value, else its base's (a tag's: non-NULL), or NULL. */
static void *inherit_value(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e)
{
    const tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(e)];
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    int32_t col = tecs__arch_col(a, f->term.comp);
    if (col >= 0)
        return tecs__col_ptr(a, w, col, r->row);
    if (col == TECS__COL_TAG)
        return a;
    return chain_value(w, w->rel, a, f->term.comp, NULL);
}

/* A chunk's rows share their base: one run, its value the base's. Own
** values are a column: a run's field is its first row's, so a run walked
** backwards (its first row found last) is one row long. */
static uint32_t inherit_same(const tecs_world_t *w, const tecs__filter *f,
                             const tecs_entity_t *ents, uint32_t n, int32_t step, void **value)
{
    void *v = inherit_value(w, f, ents[0]);
    if (value != NULL)
        *value = v;
    const tecs__record *r = &w->ei.recs[TECS_ENTITY_INDEX(ents[0])];
    bool own = tecs__arch_col(tecs__rec_arch(w, r), f->term.comp) >= 0;
    return own && step < 0 ? 1 : n;
}

/* Call fn for every entity inheriting through slot b, down the chains. */
static void instances_each(tecs_world_t *w, const rel_state *s, uint32_t b, int32_t depth,
                           void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx)
{
    const rel_head *h = is_paired(s, b) ? map_find(s, s->isa, b) : NULL;
    if (h == NULL || h->ntgt == 0 || depth > s->ntags)
        return;
    const rel_info *ri = &s->rels[s->isa];
    for (uint32_t first = h->tgt, n = first;;) {
        uint32_t src = ri->nodes[n].src, next = ri->nodes[n].next_tgt;
        fn(w, id_of(w, src), ctx);
        instances_each(w, s, src, depth + 1, fn, ctx);
        if ((n = next) == first)
            break;
    }
}

/* The instances of e read e's archetype, and theirs. */
static void inherit_each_dep(tecs_world_t *w, const tecs__filter *f, tecs_entity_t e,
                             void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx)
{
    (void)f;
    const rel_state *s = w->rel;
    if (s->isa >= 0)
        instances_each(w, s, TECS_ENTITY_INDEX(e), 0, fn, ctx);
}

static const tecs__filter_kind inherit_kind = {
    .traits = TECS__FK_OPER | TECS__FK_SHARED,
    .claim = inherit_claim,
    .match = inherit_match,
    .uniform = inherit_uniform,
    .word = inherit_word,
    .row = inherit_row,
    .entity = inherit_entity,
    .each_dep = inherit_each_dep,
    .value = inherit_value,
    .same = inherit_same,
};

/* ---- snapshots ------------------------------------------------------------
**
** The snapshot layer saves each relation's pairs (tecs__rel_pairs) and,
** once a load or a delta has replaced the rows, gives them back to
** tecs__rel_restore, which drops the old pairs first; the indexes are
** rebuilt after it, so that those over a relation's values see the pairs
** restored. A pair carries its
** rank, its place in its target's ring (ChildOf: among the parent's
** children), so both orders come back: each source's targets in the
** order the list gives them, each target's sources by rank. The restore
** checks everything first (slots alive, relations known, no pair twice,
** one target of an exclusive relation, ranks 0..k-1 per target, children
** exactly the rows with the ChildOf tag, no cycle), then reserves, then
** links, which cannot fail; only the add-on's own side rel_state_of (links, head
** map, nodes) is built, the rows are the load's.
*/

int32_t tecs__rel_count(const tecs_world_t *w)
{
    return w->rel ? w->rel->nrels : 0;
}

bool tecs__rel_is(const tecs_world_t *w, tecs_comp_t c)
{
    return rel_index(w, c) >= 0;
}

tecs__rel_desc tecs__rel_get(const tecs_world_t *w, int32_t i)
{
    const rel_info *ri = &w->rel->rels[i];
    int64_t n = ri->npairs;
    if (ri->childof) {
        n = 0;
        for (uint32_t k = 0; k < w->rel->map_cap; k++)
            if (w->rel->map[k].key != 0 && (int32_t)(w->rel->map[k].key >> 32) - 1 == i)
                n += w->rel->map[k].ntgt;
    }
    return (tecs__rel_desc){ .comp = ri->comp, .size = ri->size, .exclusive = ri->exclusive,
                             .childof = ri->childof, .cleanup = ri->cleanup, .npairs = n };
}

tecs_err_t tecs__rel_pairs(tecs_world_t *w, int32_t i, tecs__rel_pair_fn fn, void *ctx)
{
    const rel_state *s = w->rel;
    const rel_info *ri = &s->rels[i];
    const rel_head *h;
    if (ri->childof) {                  /* each parent's ring, in slot order */
        for (uint32_t x = 0; x < (uint32_t)w->ei.nrecs; x++) {
            if ((h = map_find(s, i, x)) == NULL)
                continue;
            uint32_t c = h->tgt, rank = 0;
            do {
                fn(ctx, &(tecs__rel_pair){ .rel = ri->comp, .src = c, .tgt = x,
                                           .rank = rank++ });
                c = link_at(s, c)->next;
            } while (c != h->tgt);
        }
        return TECS_OK;
    }
    /* Each node's rank in its target's ring first, then each source's
    ** list, in slot order. */
    size_t bytes = (size_t)ri->nnodes * sizeof(uint32_t) + 1;
    uint32_t *rank = tecs__alloc(w, bytes);
    if (rank == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory saving the pairs");
    for (uint32_t x = 0; x < (uint32_t)w->ei.nrecs; x++) {
        if ((h = map_find(s, i, x)) == NULL || h->ntgt == 0)
            continue;
        uint32_t n = h->tgt, r = 0;
        do {
            rank[n] = r++;
            n = ri->nodes[n].next_tgt;
        } while (n != h->tgt);
    }
    for (uint32_t x = 0; x < (uint32_t)w->ei.nrecs; x++)
        for (uint32_t n = (h = map_find(s, i, x)) ? h->src : NONE; n != NONE;
             n = ri->nodes[n].next_src)
            fn(ctx, &(tecs__rel_pair){ .rel = ri->comp, .src = x, .tgt = ri->nodes[n].tgt,
                                       .rank = rank[n],
                                       .value = ri->size ? node_val(ri, n) : NULL });
    tecs__free(w, rank, bytes);
    return TECS_OK;
}

tecs_err_t tecs__rel_childof(tecs_world_t *w, tecs_comp_t *c)
{
    *c = tecs_childof(w);
    return *c ? TECS_OK : w->base.err;
}

tecs_err_t tecs__rel_reserve(tecs_world_t *w, int32_t n)
{
    rel_state *s = rel_state_of(w);
    if (s == NULL)
        return TECS_ENOMEM;
    int32_t old = s->cap_rel_of;
    if (tecs__grow(w, (void **)&s->rels, &s->cap_rels, s->nrels + n, sizeof *s->rels) ||
        tecs__grow(w, (void **)&s->rel_of, &s->cap_rel_of, TECS_MAX_COMPONENTS,
                   sizeof *s->rel_of))
        return TECS_ENOMEM;
    if (s->cap_rel_of > old)
        memset(s->rel_of + old, 0, (size_t)(s->cap_rel_of - old) * sizeof *s->rel_of);
    return TECS_OK;
}

tecs_err_t tecs__rel_adopt(tecs_world_t *w, tecs_comp_t c, bool exclusive,
                           tecs_cleanup_t cleanup, bool childof)
{
    if (tecs__rel_reserve(w, 1))
        return TECS_ENOMEM;
    rel_state *s = w->rel;
    if (childof && s->childof >= 0)
        return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " is ChildOf in the "
                         "snapshot, and the world has its own", TECS__COMP(w, c));
    for (int32_t a = 0; !childof && a < w->arch.narchs; a++)
        if (tecs__arch_col(w->arch.archs[a], c) != TECS__COL_ABSENT)
            return tecs__err(w, TECS_EFORMAT, "snapshot: the relation " TECS__COMP_FMT
                             " is in an archetype", TECS__COMP(w, c));
    const tecs__comp *ci = tecs__comp_get(w, c);
    int32_t i = s->nrels++;
    s->rels[i] = (rel_info){ .comp = c, .size = ci->size, .exclusive = exclusive || childof,
                             .childof = childof,
                             .cleanup = (uint8_t)(childof ? TECS_CLEANUP_DESTROY : cleanup),
                             .free = NONE };
    s->rel_of[c] = i + 1;
    w->comp.comps[c].veto++;
    if (childof)
        s->childof = i;
    s->ndestroy += !childof && cleanup == TECS_CLEANUP_DESTROY;
    s->nrefuse += !childof && cleanup == TECS_CLEANUP_REFUSE;
    /* A saved IsA is the world's IsA (its pairs bind the base tags). */
    if (s->isa < 0 && !childof && exclusive && ci->size == 0 &&
        cleanup == TECS_CLEANUP_REFUSE && strcmp(ci->name, "IsA") == 0) {
        if (isa_room(w, s))
            return TECS_ENOMEM;
        s->isa = i;
    }
    return TECS_OK;
}

/* A restore's sort key: (relation index, target slot, rank), the pair. */
typedef struct rest_key {
    uint64_t key;               /* relation index << 32 | target slot        */
    uint32_t rank, at;          /* the pair's rank, its place in the list    */
} rest_key;

static int rest_cmp(const void *a, const void *b)
{
    const rest_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static tecs_err_t rest_bad(tecs_world_t *w, const char *what, uint32_t slot)
{
    return tecs__err(w, TECS_EFORMAT, "snapshot: a pair %s (slot %u)", what, slot);
}

static bool slot_alive(const tecs_world_t *w, uint32_t slot)
{
    return slot < (uint32_t)w->ei.nrecs && tecs__ei_alive(w, id_of(w, slot)) != NULL;
}

static bool has_tag(const tecs_world_t *w, uint32_t slot, tecs_comp_t co)
{
    const tecs__record *r = &w->ei.recs[slot];
    return tecs__arch_col(tecs__rec_arch(w, r), co) != TECS__COL_ABSENT;
}

/* The checks that need no rel_state_of: the slots, the relations, the ranks
** (keys sorted), the ChildOf tags. */
static tecs_err_t rest_check(tecs_world_t *w, const tecs__rel_pair *p, uint32_t n,
                             rest_key *keys)
{
    rel_state *s = w->rel;
    uint32_t children = 0;
    for (uint32_t k = 0; k < n; k++) {
        int32_t i = rel_index(w, p[k].rel);
        if (i < 0)
            return tecs__err(w, TECS_EFORMAT, "snapshot: a pair names " TECS__COMP_FMT
                             ", which is no relation here", TECS__COMP(w, p[k].rel));
        if (!slot_alive(w, p[k].src) || !slot_alive(w, p[k].tgt))
            return rest_bad(w, "names a dead entity", p[k].src);
        if (s->rels[i].childof) {
            if (!has_tag(w, p[k].src, p[k].rel))
                return rest_bad(w, "names a child without the ChildOf tag", p[k].src);
            children++;
        }
        keys[k] = (rest_key){ ((uint64_t)(uint32_t)i << 32) | p[k].tgt, p[k].rank, k };
    }
    qsort(keys, n, sizeof *keys, rest_cmp);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t want = k > 0 && keys[k - 1].key == keys[k].key ? keys[k - 1].rank + 1 : 0;
        if (keys[k].rank != want)
            return rest_bad(w, "has a rel_bad rank among its target's sources", p[keys[k].at].src);
    }
    if (s->childof < 0)
        return TECS_OK;
    tecs_comp_t co = s->rels[s->childof].comp;
    uint32_t tagged = 0;
    for (int32_t a = 0; a < w->arch.narchs; a++)
        if (tecs__arch_col(w->arch.archs[a], co) != TECS__COL_ABSENT)
            tagged += (uint32_t)w->arch.archs[a]->count;
    if (tagged != children)
        return tecs__err(w, TECS_EFORMAT, "snapshot: %u rows hold ChildOf and %u children "
                         "have a parent", tagged, children);
    return TECS_OK;
}

/* Room for every pair: map entries, link pages, nodes. */
static tecs_err_t rest_room(tecs_world_t *w, const tecs__rel_pair *p, uint32_t n)
{
    rel_state *s = w->rel;
    tecs_err_t err = map_reserve(w, s, n > UINT32_MAX / 2 ? UINT32_MAX : 2 * n);
    for (uint32_t k = 0; k < n && !err; k++) {
        int32_t i = rel_index(w, p[k].rel);
        rel_info *ri = &s->rels[i];
        err = link_reserve(w, s, p[k].src);
        if (err == TECS_OK)
            err = link_reserve(w, s, p[k].tgt);
        if (err || ri->childof) {
            continue;
        } else if (ri->nnodes >= ri->cap) {
            err = node_reserve(w, ri);
            ri->nnodes += err == TECS_OK;
        } else {
            ri->nnodes++;
        }
    }
    /* nnodes counted the nodes reserved, so that node_reserve grew each
    ** pool to hold them all; the pools are empty again (cleared). */
    for (int32_t i = 0; i < s->nrels; i++)
        s->rels[i].nnodes = 0;
    return err;
}

/* Link the pairs, reserved and checked: the sources' lists in the list's
** order, the targets' rings in rank order. Fails on a repeated pair, a
** second parent or a second target of an exclusive relation, with some
** pairs linked (the caller clears them). */
static tecs_err_t rest_link(tecs_world_t *w, const tecs__rel_pair *p, uint32_t n,
                            const rest_key *keys, uint32_t *node)
{
    rel_state *s = w->rel;
    for (uint32_t k = 0; k < n; k++) {
        int32_t i = rel_index(w, p[k].rel);
        rel_info *ri = &s->rels[i];
        uint32_t es = p[k].src;
        if (ri->childof) {
            if (parent_slot(s, es) != NONE)
                return rest_bad(w, "gives a child a second parent", es);
            link_at(s, es)->parent = p[k].tgt;  /* joined in rank order below */
            continue;
        }
        rel_head *sh = map_find(s, i, es);
        if (sh && sh->nsrc > 0 && ri->exclusive)
            return rest_bad(w, "gives an exclusive relation a second target", es);
        if (node_find(s, ri, i, es, p[k].tgt, NULL) != NONE)
            return rest_bad(w, "is there twice", es);
        uint32_t x = node_take(ri);
        sh = map_put(s, i, es);
        ri->nodes[x] = (rel_node){ .src = es, .tgt = p[k].tgt, .next_src = NONE,
                                   .next_tgt = NONE, .prev_tgt = NONE };
        if (sh->nsrc++ == 0) {
            sh->src = x;
        } else {
            uint32_t q = sh->src;
            while (ri->nodes[q].next_src != NONE)
                q = ri->nodes[q].next_src;
            ri->nodes[q].next_src = x;
        }
        if (ri->size)
            memcpy(node_val(ri, x), p[k].value, ri->size);
        bit_put(page_of(s, es)->paired, es, true);
        bit_put(page_of(s, p[k].tgt)->paired, p[k].tgt, true);
        node[k] = x;
    }
    for (uint32_t k = 0; k < n; k++) {
        const tecs__rel_pair *q = &p[keys[k].at];
        int32_t i = rel_index(w, q->rel);
        if (s->rels[i].childof) {
            link_at(s, q->src)->parent = NONE;
            ring_join(s, q->src, q->tgt);
        } else {
            tgt_join(s, &s->rels[i], i, node[keys[k].at], q->tgt);
        }
    }
    return TECS_OK;
}

/* Is there a cycle of parents? Each walk up from a child marks the slots
** it passes with its own number and stops at a marked one: a walk that
** meets its own mark went round. mark holds a word a slot, zeroed. */
static bool rest_cycle(const tecs_world_t *w, const tecs__rel_pair *p, uint32_t n,
                       uint32_t *mark)
{
    const rel_state *s = w->rel;
    for (uint32_t k = 0; k < n; k++) {
        if (rel_index(w, p[k].rel) != s->childof)
            continue;
        uint32_t x = p[k].src;
        for (; x != NONE && mark[x] == 0; x = parent_slot(s, x))
            mark[x] = k + 1;
        if (x != NONE && mark[x] == k + 1)
            return true;
    }
    return false;
}

/* The loaded rows' level tags ("ChildOf.d", registered by the load as
** plain tags when the world had none of that name) become the add-on's. */
static tecs_err_t rest_levels(tecs_world_t *w, rel_state *s)
{
    for (int32_t c = 1; c < w->comp.cap_comps; c++) {
        const char *name = tecs_component_name(w, (tecs_comp_t)c);
        char *end;
        if (name == NULL || strncmp(name, "ChildOf.", 8) != 0 || s->rel_of[c] != 0)
            continue;
        long d = strtol(name + 8, &end, 10);
        if (*end != '\0' || d < 1 || d > INT32_MAX / 2 || w->comp.comps[c].size != 0)
            continue;
        while (s->ndepth <= d) {
            if (s->ndepth == 0)
                s->ndepth = 1;
            if (tecs__grow(w, (void **)&s->depth, &s->cap_depth, s->ndepth + 1,
                           sizeof *s->depth))
                return TECS_ENOMEM;
            s->depth[s->ndepth++] = 0;          /* a level not seen yet */
        }
        if (s->depth[d] != 0)
            continue;
        s->depth[d] = (tecs_comp_t)c;
        s->rel_of[c] = (int32_t)-d;
        w->comp.comps[c].veto++;
    }
    return TECS_OK;
}

/* Every loaded child's level tag is its level; a root has none. */
static tecs_err_t rest_levels_agree(tecs_world_t *w, const rel_state *s)
{
    for (int32_t i = 0; i < w->ei.nrecs; i++) {
        uint32_t x = (uint32_t)i;
        if (!slot_alive(w, x))
            continue;
        int32_t d = 0;
        for (uint32_t up = parent_slot(s, x); up != NONE && d <= w->ei.nrecs;
             up = parent_slot(s, up))
            d++;
        if (slot_depth(w, s, x) != d)
            return rest_bad(w, "leaves a child at a level its tag does not name", x);
    }
    return TECS_OK;
}

void tecs__rel_clear(tecs_world_t *w)
{
    if (w->rel)
        rel_clear(w, w->rel);
}

tecs_err_t tecs__rel_restore(tecs_world_t *w, const tecs__rel_pair *p, uint32_t n)
{
    tecs__rel_clear(w);                 /* the old pairs named the old rows */
    if (n == 0 && (w->rel == NULL || w->rel->childof < 0))
        return TECS_OK;
    if (n > 0 && w->rel == NULL)
        return tecs__err(w, TECS_EFORMAT, "snapshot: a pair names " TECS__COMP_FMT
                         ", which is no relation here", TECS__COMP(w, p[0].rel));
    rel_state *s = w->rel;
    size_t kb = (size_t)n * sizeof(rest_key) + 1, nb = (size_t)n * sizeof(uint32_t) + 1;
    size_t mb = (size_t)w->ei.nrecs * sizeof(uint32_t) + 1;
    rest_key *keys = tecs__alloc(w, kb);
    uint32_t *node = tecs__alloc(w, nb), *mark = tecs__alloc(w, mb);
    tecs_err_t err = keys && node && mark ? TECS_OK
                     : tecs__err(w, TECS_ENOMEM, "out of memory restoring the pairs");
    if (err == TECS_OK && rest_levels(w, s))
        err = tecs__err(w, TECS_ENOMEM, "out of memory restoring the levels");
    if (err == TECS_OK)
        err = rest_check(w, p, n, keys);
    if (err == TECS_OK)
        err = rest_room(w, p, n);
    if (err == TECS_OK)
        err = rest_link(w, p, n, keys, node);
    if (err == TECS_OK) {
        memset(mark, 0, mb);
        if (s->childof >= 0 && rest_cycle(w, p, n, mark))
            err = tecs__err(w, TECS_EFORMAT, "snapshot: the ChildOf pairs make a cycle");
        else if (s->childof >= 0)
            err = rest_levels_agree(w, s);
        if (err == TECS_OK && s->isa >= 0)
            err = isa_bind(w, s);
    }
    tecs__free(w, keys, keys ? kb : 0);
    tecs__free(w, node, node ? nb : 0);
    tecs__free(w, mark, mark ? mb : 0);
    if (err)
        rel_clear(w, s);
    s->stamp++;
    return err;
}
