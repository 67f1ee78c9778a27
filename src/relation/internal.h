/*
** relation/internal.h — what relation.c lends the snapshot layer: its
** relations and pairs enumerated for a save, a made component turned into
** a relation for a load, and the pairs dropped and restored after rows
** were replaced without events; and ChildOf's level tags to instance.c.
** Only src/snapshot and instance.c include it. Without the relation
** add-on (TECS__RELATION undefined) the same calls are inline: the world
** has no relation, and a restore of any pair is refused.
*/
#ifndef TECS_RELATION_INTERNAL_H
#define TECS_RELATION_INTERNAL_H

#include "../core/private.h"

/* A relation as a save describes it. */
typedef struct tecs__rel_desc {
    tecs_comp_t comp;           /* its component                             */
    uint32_t size;              /* value bytes; 0: a tag                     */
    bool exclusive;
    bool childof;               /* the world's ChildOf                       */
    uint8_t cleanup;            /* tecs_cleanup_t                            */
    int64_t npairs;             /* its pairs (ChildOf: children)             */
} tecs__rel_desc;

/* One pair to restore, or one enumerated. */
typedef struct tecs__rel_pair {
    tecs_comp_t rel;            /* the relation's component                  */
    uint32_t src, tgt;          /* slots (ChildOf: child, parent)            */
    uint32_t rank;              /* its place among the target's sources
                                   (ChildOf: among the parent's children),
                                   0 first                                   */
    const void *value;          /* the relation's size bytes; NULL: a tag    */
} tecs__rel_pair;

/* Called once a pair by tecs__rel_pairs. */
typedef void (*tecs__rel_pair_fn)(void *ctx, const tecs__rel_pair *p);

#ifdef TECS__RELATION

/* The world's relations: 0 when none was made. */
int32_t tecs__rel_count(const tecs_world_t *w);
/* Is c a relation of the world? */
bool tecs__rel_is(const tecs_world_t *w, tecs_comp_t c);
/* The i-th relation (0 <= i < tecs__rel_count). */
tecs__rel_desc tecs__rel_get(const tecs_world_t *w, int32_t i);
/* Call fn for each pair of the i-th relation, in slot order (of the
** parents for ChildOf, of the sources for the others), each source's pairs
** together in its order of targets. TECS_ENOMEM (recorded) or TECS_OK. */
tecs_err_t tecs__rel_pairs(tecs_world_t *w, int32_t i, tecs__rel_pair_fn fn, void *ctx);
/* The world's ChildOf at *c, made if absent (as tecs_childof); its error. */
tecs_err_t tecs__rel_childof(tecs_world_t *w, tecs_comp_t *c);
/* Make ready to turn up to n components into relations: afterwards
** tecs__rel_adopt fails for no lack of memory. */
tecs_err_t tecs__rel_reserve(tecs_world_t *w, int32_t n);
/* Make the component c, no relation yet, a relation (childof: the world's
** ChildOf, which it must not have yet). No archetype may hold a user
** relation's component (TECS_EFORMAT). */
tecs_err_t tecs__rel_adopt(tecs_world_t *w, tecs_comp_t c, bool exclusive,
                           tecs_cleanup_t cleanup, bool childof);
/* After rows were replaced: every pair dropped, then the n pairs
** restored, all or nothing (before the indexes are rebuilt, which read
** the pairs). TECS_EFORMAT when a pair names a dead slot or no relation,
** repeats, breaks exclusivity or the ranks, makes a ChildOf cycle, or when
** the ChildOf tags of the rows and the children disagree; TECS_ENOMEM.
** On failure every pair is cleared again. */
tecs_err_t tecs__rel_restore(tecs_world_t *w, const tecs__rel_pair *pairs, uint32_t n);
/* Drop every pair and link (the rows' entities died): cannot fail. */
void tecs__rel_clear(tecs_world_t *w);
/* ChildOf's tag of level d >= 1 (instance.c), registered if absent; 0 with
** the error recorded. */
tecs_comp_t tecs__rel_depth_tag(tecs_world_t *w, int32_t d);
/* The archetype b of a copy of src (instance.c) made to inherit from src
** if src has a base or owns an inherited component: src's base tag and
** those components left out, src's own base tag (made) in; else b. NULL
** with the error recorded. */
tecs_archetype_t *tecs__rel_instance_arch(tecs_world_t *w, tecs_entity_t src,
                                          tecs_archetype_t *b);

#else

static inline int32_t tecs__rel_count(const tecs_world_t *w)
{
    (void)w;
    return 0;
}

static inline bool tecs__rel_is(const tecs_world_t *w, tecs_comp_t c)
{
    (void)w;
    (void)c;
    return false;
}

static inline tecs__rel_desc tecs__rel_get(const tecs_world_t *w, int32_t i)
{
    (void)w;
    (void)i;
    return (tecs__rel_desc){ 0 };
}

static inline tecs_err_t tecs__rel_pairs(tecs_world_t *w, int32_t i, tecs__rel_pair_fn fn,
                                         void *ctx)
{
    (void)w;
    (void)i;
    (void)fn;
    (void)ctx;
    return TECS_OK;
}

static inline tecs_err_t tecs__rel_childof(tecs_world_t *w, tecs_comp_t *c)
{
    (void)w;
    *c = 0;                     /* none: the load registers a plain tag */
    return TECS_OK;
}

static inline tecs_err_t tecs__rel_reserve(tecs_world_t *w, int32_t n)
{
    (void)w;
    (void)n;
    return TECS_OK;
}

static inline tecs_err_t tecs__rel_adopt(tecs_world_t *w, tecs_comp_t c, bool exclusive,
                                         tecs_cleanup_t cleanup, bool childof)
{
    (void)exclusive;
    (void)cleanup;
    (void)childof;
    return tecs__err(w, TECS_EFORMAT, "snapshot: " TECS__COMP_FMT " is a relation, and this "
                     "library is built without the relation add-on", TECS__COMP(w, c));
}

static inline void tecs__rel_clear(tecs_world_t *w)
{
    (void)w;
}

static inline tecs_err_t tecs__rel_restore(tecs_world_t *w, const tecs__rel_pair *pairs,
                                           uint32_t n)
{
    (void)pairs;
    if (n == 0)
        return TECS_OK;
    return tecs__err(w, TECS_EFORMAT, "snapshot: it holds pairs, and this library is built "
                     "without the relation add-on");
}

#endif

#endif /* TECS_RELATION_INTERNAL_H */
