/*
** query_toggle.c — the row filter of an enableable component's term that
** reads its enabled bit (TECS_TOGGLE_ENABLED or _DISABLED).
**
** A chunk of an archetype with the component keeps a bit column for it
** (archetype.c): a bit per row, set while the component is disabled, 64
** rows a word. The filter's entry in a match is that column (or
** TECS__FILTER_OFF where the archetype lacks the component), and its "has"
** bits are the column's words as they are (_DISABLED) or flipped
** (_ENABLED):
**
**     bits[wi]:  0 0 1 0 1 1 0 ...   (set: disabled)
**     has = bits[wi] ^ inv           inv = ~0 for _ENABLED, 0 for _DISABLED
**
** so the engine reads a chunk's words in place (TECS__FK_BITS). The rows of
** an archetype are alike while its column's set bits number 0 or all.
**
** Calls: archetype.c (bit columns and their counts); reads store.c's
** `gone` for the entity test.
*/
#include "private.h"

/* The term of an enableable table component that reads its bit: "has" is
** the bit clear (_ENABLED, inv all ones) or set (_DISABLED). */
static bool toggle_claim(const tecs_world_t *w, tecs__filter *f)
{
    if (f->term.toggle == TECS_TOGGLE_ANY || tecs__comp_is_sparse(w, f->term.comp) ||
        !tecs_component_enableable(w, f->term.comp))
        return false;
    f->inv = f->term.toggle == TECS_TOGGLE_DISABLED ? 0 : ~(uint64_t)0;
    return true;
}

/* Its bit column in a. */
static int8_t toggle_match(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a)
{
    (void)w;
    int32_t j = tecs__arch_tog(a, f->term.comp);
    return j < 0 ? (int8_t)TECS__FILTER_OFF : (int8_t)j;
}

static bool toggle_uniform(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                           int8_t entry)
{
    (void)f;
    int32_t off = entry >= 0 ? tecs__arch_ndisabled(w, a, entry) : 0;
    return off == 0 || off == a->count;
}

static uint64_t toggle_word(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                            int8_t entry, int32_t k, uint32_t wi)
{
    if (entry < 0)
        return 0;
    uint64_t d = k >= 0 ? tecs__chunk_bits(a, tecs__kcols(a, (uint32_t)k), entry)[wi]
                        : tecs__arch_ndisabled(w, a, entry) ? ~(uint64_t)0 : 0;
    return d ^ f->inv;
}

static bool toggle_row(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                       int8_t entry, uint32_t row)
{
    return entry >= 0 &&
           tecs__arch_bit(a, w, entry, row) == (f->term.toggle == TECS_TOGGLE_DISABLED);
}

/* Is the component disabled on e: by its row's bit, or, while the store
** removes it from e (its move event raised), by the bit it had (`gone`);
** v's flip read inverted. */
static bool toggle_entity(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                          int8_t entry, tecs_entity_t e, const tecs__view *v)
{
    (void)a;
    if (entry < 0)
        return false;
    tecs_comp_t c = f->term.comp;
    bool off = false;
    const tecs__record *r = tecs__ei_alive(w, e);
    const tecs_archetype_t *cur = r ? tecs__rec_arch(w, r) : NULL;
    int32_t j = cur ? tecs__arch_tog(cur, c) : -1;
    if (j >= 0)
        off = tecs__arch_bit(cur, w, j, r->row);
    else if (e == w->store.gone && c == w->store.gone_comp)
        off = w->store.gone_disabled;
    return (off != (v && c == v->flip)) == (f->term.toggle == TECS_TOGGLE_DISABLED);
}

const tecs__filter_kind tecs__filter_toggle = {
    .traits = TECS__FK_OPER | TECS__FK_BITS,
    .claim = toggle_claim,
    .match = toggle_match,
    .uniform = toggle_uniform,
    .word = toggle_word,
    .row = toggle_row,
    .entity = toggle_entity,
};
