/*
** query_filter.h — the interface between the query engine (query.c) and
** the kinds of row filters (query_sparse.c, query_toggle.c,
** query_change.c): types only, no inline function. The kinds sit below the
** engine in src/LAYERS and read nothing of it but this; the engine names
** nothing of theirs but their tables. Included by private.h only, before
** query.h.
*/
#ifndef TECS_QUERY_FILTER_H
#define TECS_QUERY_FILTER_H

/* ---- row filters ------------------------------------------------------
**
** A term whose rows are not all alike in an archetype is decided row by
** row by a row filter: an enableable component's enabled bit
** (query_toggle.c), a sparse component's membership (query_sparse.c), the
** ticks of a change term (query_change.c). A query keeps the list of its
** filters, in term order, and its engine (query.c) knows them only through
** their kind, a const table of the calls below; a new kind of term is a
** new table. The engine combines the filters 64 rows a word: each one's
** "has" bits, taken by its operator (with: a passing row has it; none: it
** has not; any: one of the any-terms holds; optional: its field comes and
** goes with it).
**
** A filter's entry in a match is one byte of its kind's (a bit column,
** say): what match returns for the archetype, and what the other calls
** read there. TECS__FILTER_OFF: no row of the archetype has it.
**
**     kind->match(a)                 once per matched archetype
**     kind->uniform, kind->word      a step's rows: all alike, or 64 a word
**     kind->row, kind->entity        one row (where, caches), one entity
**                                    (membership events: kind->hears names
**                                    the events that change it, kind->watch
**                                    asks for them, kind->each_dep the
**                                    entities a move re-decides)
**     kind->count, kind->member      the entities that have it, walked
**                                    when they are few next to the rows
*/
#define TECS__FILTER_OFF (-1)
/* A term has at most two filters: one that decides it, one change. */
#define TECS__MAX_FILTERS (2 * TECS_MAX_TERMS)

typedef struct tecs__filter tecs__filter;

/* How a membership test reads the world: as it is, except that flip's
** state of the entity tested (its enabled bit, its sparse membership, the
** pair a relation's event announces) reads as on the other side of the
** event, and that entity `moved` reads from archetype `from` (where it was
** before the move being announced: a parent, for its children's terms
** read from the parent). */
typedef struct tecs__view {
    tecs_comp_t flip;           /* 0: none                                  */
    tecs_entity_t moved;        /* 0: none                                  */
    const tecs_archetype_t *from;
} tecs__view;

/* What a kind's filters are (tecs__filter_kind.traits). */
enum {
    TECS__FK_OPER = 1,          /* it decides its term: its "has" bits take
                                   the term's operator, and the archetype
                                   test of the term is its match (else it is
                                   one more with-condition on its term)     */
    TECS__FK_BITS = 2,          /* its "has" bits of a chunk are the words
                                   of the chunk's bit column `entry`, xor
                                   inv: the engine reads them in place      */
    TECS__FK_NOCOL = 4,         /* its term's component lies in no
                                   archetype: the term has no column        */
    TECS__FK_SHARED = 8         /* its value is another entity's, one for a
                                   run of rows with the same key: a step
                                   ends where the key changes, and its
                                   field is the value of its first row      */
};

typedef struct tecs__filter_kind {
    uint32_t traits;            /* TECS__FK_*                               */
    /* Does the kind decide (part of) f's term (f->term, f->t set)? Then
    ** the term gets f, which claim completes (oper, inv, since). */
    bool (*claim)(const tecs_world_t *w, tecs__filter *f);
    /* Its entry for archetype a (TECS__FILTER_OFF: no row has it). */
    int8_t (*match)(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a);
    /* Are the rows of a alike for it now (all have it, or none)? */
    bool (*uniform)(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                    int8_t entry);
    /* Its "has" bits of rows [64 wi, 64 wi + 64) of chunk k of a (bits
    ** past the chunk's rows are clear or ignored); k < 0, while uniform:
    ** every row's (all set or all clear). */
    uint64_t (*word)(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                     int8_t entry, int32_t k, uint32_t wi);
    /* Has row of a it? */
    bool (*row)(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                int8_t entry, uint32_t row);
    /* Has e it, its components read from a (which e may be entering or
    ** leaving), the world read as v says (NULL: as it is)? NULL: no event
    ** tells when it changes (caches and membership observers refuse). */
    bool (*entity)(const tecs_world_t *w, const tecs__filter *f, const tecs_archetype_t *a,
                   int8_t entry, tecs_entity_t e, const tecs__view *v);
    /* NULL, or does an ADD / REMOVE event of c on an entity change its
    ** state for that entity (NULL: c is the term's component)? */
    bool (*hears)(const tecs_world_t *w, const tecs__filter *f, tecs_comp_t c);
    /* NULL, or count (d 1) or uncount (-1) a cache or membership observer
    ** that wants the events `hears` names (NULL: the watch counts of the
    ** term's component, without SET events). */
    void (*watch)(tecs_world_t *w, const tecs__filter *f, int32_t d);
    /* NULL, or call fn for each entity whose state of it reads e's
    ** archetype (a term read from the parent: e's children), so that a
    ** move of e re-decides them; fn may not change the world. */
    void (*each_dep)(tecs_world_t *w, const tecs__filter *f, tecs_entity_t e,
                     void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx);
    /* A run of its query begins (tecs__query_run); since is the tick of
    ** the previous run's start. NULL: runs do not matter to it. */
    void (*run)(tecs__filter *f, uint64_t since);
    /* NULL, or the number of entities that have it ... */
    int32_t (*count)(const tecs_world_t *w, const tecs__filter *f);
    /* ... and the kth of them (0: it has it not, as a query reads it). */
    tecs_entity_t (*member)(const tecs_world_t *w, const tecs__filter *f, int32_t k);
    /* NULL, or the value a one-row step of e hands out for its term
    ** (TECS__FK_NOCOL: its field is no column of the chunk). */
    void *(*value)(const tecs_world_t *w, const tecs__filter *f, tecs_entity_t e);
    /* TECS__FK_SHARED: how many of the n entities at ents, ents + step,
    ** ents + 2 step, ... (step 1 or -1) share the key of the first's value
    ** (n >= 1): rows of one key share it. Unless value is NULL, *value
    ** gets it, the run's value for the term: NULL where its rows have it
    ** not (so a run's "has" is value != NULL). */
    uint32_t (*same)(const tecs_world_t *w, const tecs__filter *f, const tecs_entity_t *ents,
                     uint32_t n, int32_t step, void **value);
    /* NULL, or why the kind refuses the term it claimed (an error it
    ** records), TECS_OK if it takes it. */
    tecs_err_t (*refuse)(tecs_world_t *w, const tecs__filter *f);
    /* NULL, or the bytes of the value the term hands out (else its
    ** component's size). */
    uint32_t (*size)(const tecs_world_t *w, const tecs__filter *f);
} tecs__filter_kind;

struct tecs__filter {
    const tecs__filter_kind *kind;
    tecs_term_t term;           /* its term, oper the one its bits take     */
    uint8_t t;                  /* the term's index                         */
    uint64_t inv;               /* TECS__FK_BITS: has = word ^ inv          */
    uint64_t since;             /* the kind's tick (change: rows written
                                   after it pass; 0: every row)             */
};

/* The kinds, in the order they claim a term's filters. */
extern const tecs__filter_kind tecs__filter_sparse;
extern const tecs__filter_kind tecs__filter_toggle;
extern const tecs__filter_kind tecs__filter_change;

#endif /* TECS_QUERY_FILTER_H */
