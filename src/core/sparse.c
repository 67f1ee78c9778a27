/*
** sparse.c — the sparse sets: where a sparse component's values live,
** outside every archetype, keyed by the entity's slot.
**
** One set per sparse component, made when the component is first used
** (the registry's entry points at it). Slots are grouped in pages of
** 1 << shift slots (fewer for large values, so that a page's entries stay
** within 64 KiB); a page is allocated when a slot of it first joins and
** freed when its last member leaves (one emptied page per set is kept as a
** spare, so that an add and remove of the only member of a page do not
** allocate each time):
**
**     pages:  [ p0 | NULL | p2 ]           slot s is in pages[s >> shift]
**               |            |
**               v            v
**     page:   pos[]  = { 1, ABSENT, 0, ... }   per slot: its place in dense
**             ents[] = { g0 v0 | 0 - | g2 v2 | ... }
**                      per slot: the member's generation (0: none), its value
**     dense:  [ e2, e0 ]                       the members' ids
**
** A lookup by entity id reads one entry: the generation there says whether
** the entity is a member (no id has generation 0, and a member is alive: a
** destroy takes it out of every set), and the value sits beside it, in the
** same cache line.
**
** A member's value stays at its slot's place in its page from its add to
** its remove: nothing moves it, so an address handed out stays valid and
** no move hook is ever run. Removing a member swaps the last member of
** dense into its place and fixes that one's pos.
**
** Every change is two steps: reserve (the set, the page, room in dense:
** may fail for memory and then has changed no member and no value), then
** insert or erase, which cannot fail. The engine (store.c) decides when,
** and runs the lifecycle hooks and events; this file keeps the sets only.
**
** Invariants (tecs__sparse_verify): dense[pos[s]] has slot s for every
** present slot s, and every member's pos names its place in dense; a
** page's count is its present slots, and a page in `pages` is not empty;
** every member is alive; nfilled is the number of sets with members.
**
** Calls: base.c, entity_index.c, component.c, archetype.h (its value
** copies).
*/
#include "private.h"

/* Bytes of a page's header and pos array, rounded to the entries' alignment. */
static size_t page_head(const tecs__sparse *s)
{
    size_t head = offsetof(tecs__spage, pos) + ((size_t)s->mask + 1) * sizeof(uint32_t);
    return (head + TECS_MAX_ALIGN - 1) & ~(size_t)(TECS_MAX_ALIGN - 1);
}

static size_t page_bytes(const tecs__sparse *s)
{
    return page_head(s) + ((size_t)s->mask + 1) * s->stride;
}

/* A new page: no member, every entry's generation 0. */
static tecs__spage *page_new(tecs_world_t *w, const tecs__sparse *s)
{
    void *raw;
    tecs__spage *pg = tecs__alloc_aligned(w, page_bytes(s), &raw);
    if (pg == NULL)
        return NULL;
    pg->raw = raw;
    pg->ents = (char *)pg + page_head(s);
    pg->count = 0;
    memset(pg->pos, 0xff, ((size_t)s->mask + 1) * sizeof(uint32_t));
    memset(pg->ents, 0, ((size_t)s->mask + 1) * s->stride);    /* every generation 0 */
    return pg;
}

static void page_free(tecs_world_t *w, const tecs__sparse *s, tecs__spage *pg)
{
    if (pg)
        tecs__free_aligned(w, pg->raw, page_bytes(s));
}

/* Make c's set (empty); NULL without the memory. */
static tecs__sparse *set_new(tecs_world_t *w, tecs_comp_t c)
{
    tecs__sparse_state *st = &w->sparse;
    if (tecs__grow(w, (void **)&st->sets, &st->cap_sets, st->nsets + 1, sizeof *st->sets))
        return NULL;
    tecs__sparse *s = tecs__alloc(w, sizeof *s);
    if (s == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory making the set of " TECS__COMP_FMT,
                  TECS__COMP(w, c));
        return NULL;
    }
    /* An entry: the generation, then the value at its alignment, the
    ** whole a multiple of both alignments. */
    uint32_t size = w->comp.comps[c].size, align = w->comp.comps[c].align, shift = 12;
    uint32_t a = align > sizeof(uint32_t) ? align : (uint32_t)sizeof(uint32_t);
    uint32_t voff = ((uint32_t)sizeof(uint32_t) + align - 1) & ~(align - 1);
    uint32_t stride = (voff + size + a - 1) & ~(a - 1);
    while (shift > 0 && ((size_t)stride << shift) > 64 * 1024)
        shift--;
    *s = (tecs__sparse){ .size = size, .stride = stride, .voff = voff, .shift = shift,
                         .mask = (1u << shift) - 1, .comp = c,
                         .listen = &w->comp.comps[c].listen };
    s->head = (uint32_t)page_head(s);
    st->sets[st->nsets++] = s;
    w->comp.comps[c].set = s;
    return s;
}

/* Make pages cover page index p. */
static tecs_err_t pages_cover(tecs_world_t *w, tecs__sparse *s, uint32_t p)
{
    if (p < (uint32_t)s->npages)
        return TECS_OK;
    int32_t old = s->npages;
    if (tecs__grow(w, (void **)&s->pages, &s->npages, (int32_t)p + 1, sizeof *s->pages))
        return TECS_ENOMEM;
    memset(s->pages + old, 0, (size_t)(s->npages - old) * sizeof *s->pages);
    return TECS_OK;
}

tecs_err_t tecs__sparse_reserve_slow(tecs_world_t *w, tecs_comp_t c, uint32_t slot)
{
    return tecs__sparse_reserve_n(w, c, slot, 1);
}

tecs_err_t tecs__sparse_reserve_n(tecs_world_t *w, tecs_comp_t c, uint32_t slot, int32_t n)
{
    tecs__sparse *s = w->comp.comps[c].set;
    if (s == NULL && (s = set_new(w, c)) == NULL)
        return TECS_ENOMEM;
    uint32_t p = slot >> s->shift;
    if (pages_cover(w, s, p) ||
        tecs__grow(w, (void **)&s->dense, &s->cap, s->count + n, sizeof *s->dense))
        return TECS_ENOMEM;
    if (s->pages[p] == NULL) {
        tecs__spage *pg = s->spare ? s->spare : page_new(w, s);
        if (pg == NULL)
            return tecs__err(w, TECS_ENOMEM, "out of memory adding a page to the set of "
                             TECS__COMP_FMT, TECS__COMP(w, c));
        s->spare = NULL;
        s->pages[p] = pg;
    }
    return TECS_OK;
}

tecs_err_t tecs__sparse_emptied(tecs_world_t *w, tecs__sparse *s, uint32_t slot)
{
    tecs__spage *pg = s->pages[slot >> s->shift];
    if (pg->count == 0) {
        s->pages[slot >> s->shift] = NULL;
        if (s->spare == NULL)
            s->spare = pg;
        else
            page_free(w, s, pg);
    }
    if (s->count == 0 && --w->sparse.nfilled == 0)
        tecs__gate_put(&w->base, TECS__GATE_SPARSE, false);
    return TECS_OK;
}

tecs_err_t tecs__sparse_mark(const tecs__sparse *s, char *at, uint32_t gen)
{
    memcpy(at, &gen, sizeof gen);
    if (s->size)
        tecs__zero_value(at + s->voff, s->size);
    return TECS_OK;
}

/* Run the destructor of every value in s. */
static void destroy_values(tecs_world_t *w, const tecs__sparse *s)
{
    const tecs__comp *ci = &w->comp.comps[s->comp];
    if (ci->dtor == NULL)
        return;
    for (int32_t k = 0; k < s->count; k++) {
        char *at = tecs__sparse_entry(s, TECS_ENTITY_INDEX(s->dense[k]));
        tecs__comp_dtor(w, ci, at + s->voff, 1);
    }
}

void tecs__sparse_destroy_values(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->sparse.nsets; i++)
        destroy_values(w, w->sparse.sets[i]);
}

/* Free s's pages and member list; s is left empty. */
static void set_empty(tecs_world_t *w, tecs__sparse *s)
{
    for (int32_t p = 0; p < s->npages; p++)
        page_free(w, s, s->pages[p]);
    page_free(w, s, s->spare);
    tecs__free(w, s->pages, (size_t)s->npages * sizeof *s->pages);
    tecs__free(w, s->dense, (size_t)s->cap * sizeof *s->dense);
    s->pages = NULL;
    s->dense = NULL;
    s->spare = NULL;
    s->npages = s->cap = s->count = 0;
}

void tecs__sparse_clear(tecs_world_t *w)
{
    tecs__sparse_destroy_values(w);
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        if (w->sparse.sets[i]->count > 0)
            w->sparse.sets[i]->removed = w->arch.tick;
        set_empty(w, w->sparse.sets[i]);
    }
    w->sparse.nfilled = 0;
    tecs__gate_put(&w->base, TECS__GATE_SPARSE, false);
}

void tecs__sparse_fini(tecs_world_t *w)
{
    tecs__sparse_state *st = &w->sparse;
    for (int32_t i = 0; i < st->nsets; i++) {
        set_empty(w, st->sets[i]);
        w->comp.comps[st->sets[i]->comp].set = NULL;
        tecs__free(w, st->sets[i], sizeof *st->sets[i]);
    }
    tecs__free(w, st->sets, (size_t)st->cap_sets * sizeof *st->sets);
    *st = (tecs__sparse_state){ 0 };
}

/* ---- handles --------------------------------------------------------- */

/* A handle reads a set's first fields as tecs_handle_set_t (tinyecs.h), a
** page's member count two pointers into the page and its slots' places
** right after that count, an entry's generation as its first uint32_t. */
#define SAME_AT(a, b) (offsetof(tecs__sparse, a) == offsetof(tecs_handle_set_t, b))
_Static_assert(SAME_AT(pages, pages_) && SAME_AT(dense, dense_) && SAME_AT(count, count_) &&
               SAME_AT(cap, cap_) && SAME_AT(npages, npages_) && SAME_AT(shift, shift_) &&
               SAME_AT(mask, mask_) && SAME_AT(stride, stride_) && SAME_AT(head, head_) &&
               SAME_AT(added, added_) && SAME_AT(removed, removed_) &&
               SAME_AT(listen, listen_), "a handle's view of a set");
#undef SAME_AT
_Static_assert(offsetof(tecs__spage, count) == 2 * sizeof(void *) &&
               offsetof(tecs__spage, pos) == offsetof(tecs__spage, count) + sizeof(int32_t),
               "a handle's view of a page");

tecs_err_t tecs__sparse_handle(tecs_world_t *w, tecs_comp_t c, tecs_handle_t *out)
{
    tecs__sparse *s = w->comp.comps[c].set;
    if (s == NULL && (s = set_new(w, c)) == NULL)
        return TECS_ENOMEM;
    out->set_ = (tecs_handle_set_t *)(void *)s;
    if (s->size > 0)
        out->npages_ = &s->npages;
    out->head_ = s->head;
    out->stride_ = s->stride;
    out->value_ = s->head + s->voff;
    out->shift_ = s->shift;
    out->mask_ = s->mask;
    return TECS_OK;
}

/* ---- verification ---------------------------------------------------- */

static tecs_err_t sparse_bad(tecs_world_t *w, const char *what, const tecs__sparse *s)
{
    return tecs__err(w, TECS_ECORRUPT, "structure check: sparse set of " TECS__COMP_FMT
                     ": %s", TECS__COMP(w, s->comp), what);
}

static tecs_err_t verify_set(tecs_world_t *w, const tecs__sparse *s)
{
    if (w->comp.comps[s->comp].set != s || !w->comp.comps[s->comp].sparse)
        return sparse_bad(w, "not its component's", s);
    if (s->listen != &w->comp.comps[s->comp].listen)
        return sparse_bad(w, "listener counts not its component's", s);
    if (s->count < 0 || s->count > s->cap)
        return sparse_bad(w, "member count", s);
    for (int32_t k = 0; k < s->count; k++) {
        tecs_entity_t e = s->dense[k];
        uint32_t slot = TECS_ENTITY_INDEX(e), p = slot >> s->shift;
        if (tecs__ei_alive(w, e) == NULL)
            return sparse_bad(w, "a member is not alive", s);
        if (p >= (uint32_t)s->npages || s->pages[p] == NULL ||
            s->pages[p]->pos[slot & s->mask] != (uint32_t)k)
            return sparse_bad(w, "a member's page does not name its place", s);
        if (tecs__sparse_get_id(w, s->comp, e) == NULL)
            return sparse_bad(w, "a member's entry does not hold its generation", s);
    }
    int32_t present = 0;
    for (int32_t p = 0; p < s->npages; p++) {
        const tecs__spage *pg = s->pages[p];
        if (pg == NULL)
            continue;
        /* (as lookup and sparse handles read it) */
        if (pg->ents != (const char *)pg + page_head(s) || s->head != page_head(s))
            return sparse_bad(w, "a page's entries are not after its head", s);
        int32_t n = 0;
        for (uint32_t i = 0; i <= s->mask; i++) {
            uint32_t gen;
            memcpy(&gen, pg->ents + (size_t)i * s->stride, sizeof gen);
            if ((pg->pos[i] == TECS__SPARSE_ABSENT) != (gen == 0))
                return sparse_bad(w, "an entry's generation and its place disagree", s);
            if (pg->pos[i] == TECS__SPARSE_ABSENT)
                continue;
            if (pg->pos[i] >= (uint32_t)s->count ||
                TECS_ENTITY_INDEX(s->dense[pg->pos[i]]) != ((uint32_t)p << s->shift | i))
                return sparse_bad(w, "a page names a place that is not its slot's", s);
            n++;
        }
        if (n == 0 || n != pg->count)
            return sparse_bad(w, "a page's count", s);
        present += n;
    }
    if (present != s->count)
        return sparse_bad(w, "pages and members disagree", s);
    if (s->spare && s->spare->count != 0)
        return sparse_bad(w, "the spare page is not empty", s);
    return TECS_OK;
}

tecs_err_t tecs__sparse_verify(tecs_world_t *w)
{
    int32_t filled = 0;
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        tecs_err_t err = verify_set(w, w->sparse.sets[i]);
        if (err)
            return err;
        filled += w->sparse.sets[i]->count > 0;
    }
    if (filled != w->sparse.nfilled)
        return tecs__err(w, TECS_ECORRUPT, "structure check: %d sparse sets have members, "
                         "not %d", filled, w->sparse.nfilled);
    int32_t n = 0;
    for (int32_t c = 1; c < w->comp.cap_comps; c++)
        n += w->comp.comps[c].name != NULL && w->comp.comps[c].sparse;
    if (n != w->comp.nsparse)
        return tecs__err(w, TECS_ECORRUPT, "structure check: %d sparse components, not %d",
                         n, w->comp.nsparse);
    return TECS_OK;
}
