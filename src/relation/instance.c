/*
** instance.c — instances of prefabs: tecs_instantiate and
** tecs_instantiate_bulk (the relation add-on; docs/prefabs.md).
**
** An instance is a clone of a prefab and of its ChildOf subtree made in
** one step by the core's clone plan (store.h): the prefab and each of its
** descendants is a source, in depth-first order (a parent before its
** children, siblings in their order), and each source's copies are born
** into its own archetype without the Prefab tag, at the instance's level:
**
**   prefab P (level d0)         srcs  [ P  | A  | A1 | B  ]
**     A (d0 + 1)                  to  [ P - Prefab - ChildOf - level d0,
**       A1 (d0 + 2)                     A - Prefab + level 1 - level d0+1,
**     B (d0 + 1)                        ... ]
**
** The root of an instance is a root (no parent: it is no sibling of the
** prefab), so its subtree is one level higher by d0. The plan's remap
** points the copies' pairs whose target is a member of the subtree (the
** prefab included) at the member's copy of the same instance; the
** relation add-on's on_clone does it (relation.c), and links each copy
** to its parent's copy, whose birth came first. Everything is reserved
** before anything is written, so a failure has changed nothing.
**
** Calls: base.c, entity_index.c, component.c, archetype.c, store.c,
** command.c, relation.c (the level tags, the public walks).
*/
#include "../core/private.h"
#include "internal.h"

#include "tinyecs/relation.h"

/* The world's prefab tag if it has one (no registration), else 0. */
static tecs_comp_t prefab_tag(tecs_world_t *w)
{
    tecs_err_t outer = w->base.err;
    tecs_comp_t c = tecs_component_lookup(w, "Prefab");
    tecs__err_restore(w, outer);        /* (not found is no error here) */
    const tecs__comp *ci = c ? tecs__comp_get(w, c) : NULL;
    return ci && ci->hidden ? c : 0;
}

/* Is the live entity e a prefab? */
static bool is_prefab(tecs_world_t *w, tecs_entity_t e)
{
    tecs_comp_t pf = prefab_tag(w);
    const tecs__record *r = tecs__ei_alive(w, e);
    return pf && r && tecs__arch_col(tecs__rec_arch(w, r), pf) != TECS__COL_ABSENT;
}

/* a without c if it has it; NULL with the error recorded. */
static tecs_archetype_t *inst_drop(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c)
{
    return a && c && tecs__arch_col(a, c) != TECS__COL_ABSENT ? tecs__arch_without(w, a, c) : a;
}

/* b, the archetype of a copy of an entity of level d of a subtree at
** level d0, at its level in the instance (d, 0: a root, no parent); NULL
** with the error recorded. */
static tecs_archetype_t *level_arch(tecs_world_t *w, tecs_archetype_t *b, int32_t d, int32_t d0)
{
    if (d0 == 0)
        return b;
    tecs_comp_t old = tecs__rel_depth_tag(w, d + d0);
    tecs_comp_t now = d > 0 ? tecs__rel_depth_tag(w, d) : 0;
    if (old == 0 || (d > 0 && now == 0))
        return NULL;
    b = inst_drop(w, b, old);
    if (b && d == 0)
        b = inst_drop(w, b, tecs_childof(w));
    return b && now ? tecs__arch_with(w, b, now) : b;
}

/* The archetype of the copy of e, d0 levels higher (its own level d, 0:
** the instance's root: no parent), inheriting from e if e has a base or
** an inherited component; NULL with the error recorded. */
static tecs_archetype_t *copy_arch(tecs_world_t *w, tecs_entity_t e, int32_t d, int32_t d0,
                                   tecs_comp_t pf)
{
    tecs_archetype_t *b = inst_drop(w, tecs__rec_arch(w, tecs__ei_alive(w, e)), pf);
    b = b ? level_arch(w, b, d, d0) : NULL;
    return b ? tecs__rel_instance_arch(w, e, b) : NULL;
}

/* The members of prefab's subtree, but the prefab: a walk's length. */
static int32_t descendants(tecs_world_t *w, tecs_entity_t prefab)
{
    int32_t k = 0;
    for (tecs_walk_t it = tecs_tree(w, prefab, TECS_TREE_DEPTH_FIRST); tecs_walk_next(&it);)
        k++;
    return k;
}

/* The plan's sources: the prefab, then its descendants depth first. */
static tecs_err_t inst_gather(tecs_world_t *w, tecs_entity_t prefab, tecs__clone_src *srcs)
{
    tecs_comp_t pf = prefab_tag(w);
    int32_t d0 = tecs_depth(w, prefab), k = 0;
    if ((srcs[k++].to = copy_arch(w, prefab, 0, d0, pf)) == NULL)
        return w->base.err ? w->base.err : TECS_ENOMEM;
    srcs[0].src = prefab;
    for (tecs_walk_t it = tecs_tree(w, prefab, TECS_TREE_DEPTH_FIRST); tecs_walk_next(&it);) {
        srcs[k].src = it.entity;
        if ((srcs[k++].to = copy_arch(w, it.entity, it.depth, d0, pf)) == NULL)
            return w->base.err ? w->base.err : TECS_ENOMEM;
    }
    return TECS_OK;
}

/* n instances of the live prefab, made now (their roots into out if
** given); into, if given, the n pending ids the roots are born as. */
static tecs_err_t instantiate_now(tecs_world_t *w, tecs_entity_t prefab, int32_t n,
                                  tecs_entity_t *out, const tecs_entity_t *into)
{
    int32_t m = 1 + descendants(w, prefab);
    if ((int64_t)m * n > INT32_MAX)
        return tecs__err(w, TECS_ELIMIT, "too many entities in %d instances of "
                         TECS__ENT_FMT, n, TECS__ENT(prefab));
    tecs__clone_src one, *srcs = &one;
    tecs_entity_t *ids = out, *made = NULL;
    size_t sbytes = tecs__bytes((size_t)m, sizeof *srcs);
    size_t ibytes = tecs__bytes((size_t)m * (size_t)n, sizeof *ids);
    tecs__clone_src *list = m > 1 ? tecs__alloc(w, sbytes) : NULL;
    if (m > 1 && list)
        ids = made = tecs__alloc(w, ibytes);
    tecs_err_t err = TECS_OK;
    if (m > 1 && made == NULL)
        err = tecs__err(w, TECS_ENOMEM, "out of memory instancing " TECS__ENT_FMT,
                        TECS__ENT(prefab));
    else if (list)
        srcs = list;
    if (!err && !(err = inst_gather(w, prefab, srcs)))
        err = tecs__clone_run(w, &(tecs__clone_plan){ .srcs = srcs, .m = m, .n = n,
                                                      .into = into, .out = ids,
                                                      .remap = true });
    if (!err && made && out)
        memcpy(out, made, (size_t)n * sizeof *out);
    if (list)
        tecs__free(w, list, sbytes);
    if (made)
        tecs__free(w, made, ibytes);
    return err;
}

/* A queued instance applies: the pending e is born an instance of the
** prefab as it is now; gone already (destroyed while pending): skipped;
** the prefab dead or no prefab any more: the birth is cancelled, e's id
** dies. */
static tecs_err_t instance_queued(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                  const void *data)
{
    (void)c;
    tecs_entity_t prefab;
    memcpy(&prefab, data, sizeof prefab);
    tecs__record *r = tecs__ei_known(w, e);
    if (r == NULL || r->arch != TECS__ARCH_PENDING)
        return TECS_OK;
    if (!is_prefab(w, prefab)) {
        tecs__ei_release(w, TECS_ENTITY_INDEX(e));
        w->ei.npending--;
        if (tecs__ei_alive(w, prefab) == NULL)
            return tecs__err_dead(w, prefab);
        return tecs__err(w, TECS_EINVAL, TECS__ENT_FMT " is no prefab any more",
                         TECS__ENT(prefab));
    }
    return instantiate_now(w, prefab, 1, NULL, &e);
}

/* The checks both calls share: prefab alive and a prefab, or pending while
** the world is deferred (it must be a prefab when the instance applies). */
static tecs_err_t instance_enter(tecs_world_t *w, tecs_entity_t prefab, int32_t n,
                                 const char *fn)
{
    tecs_err_t err = w == NULL ? TECS_EINVAL : tecs__enter(w);
    if (err)
        return err;
    tecs__record *r = tecs__ei_known(w, prefab);
    if (r == NULL || (r->arch == TECS__ARCH_PENDING && w->base.defer_depth == 0) ||
        (r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED))
        return tecs__err_dead(w, prefab);
    if (n < 0)
        return tecs__err(w, TECS_EINVAL, "%s: negative count %d", fn, n);
    if (r->arch != TECS__ARCH_PENDING && !is_prefab(w, prefab))
        return tecs__err(w, TECS_EINVAL, "%s: " TECS__ENT_FMT " is no prefab (it has no "
                         "Prefab tag; tecs_clone copies any entity)", fn, TECS__ENT(prefab));
    return TECS_OK;
}

tecs_entity_t tecs_instantiate(tecs_world_t *w, tecs_entity_t prefab)
{
    tecs_entity_t e = 0;
    if (tecs_instantiate_bulk(w, prefab, 1, &e))
        return 0;
    return e;
}

tecs_err_t tecs_instantiate_bulk(tecs_world_t *w, tecs_entity_t prefab, int32_t n,
                                 tecs_entity_t *out)
{
    tecs_err_t err = instance_enter(w, prefab, n, "tecs_instantiate_bulk");
    if (err || n == 0)
        return err;
    if (w->base.defer_depth > 0)
        return tecs__copies_defer(w, instance_queued, prefab, n, out, "an instance");
    if ((err = instantiate_now(w, prefab, n, out, NULL)))
        return err;
    tecs__settle(w);
    return TECS_OK;
}
