/*
** tinyecs/relation.h — relationships and hierarchies: pairs of a relation
** and a target entity, the built-in ChildOf, cleanup when a target dies
** (the relation add-on; docs/relationships.md).
*/
#ifndef TINYECS_RELATION_H
#define TINYECS_RELATION_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
** A relationship pairs a relation with a target entity: (ChildOf, parent),
** (Likes, bob), (Owes, bob) = 10. A relation is a component id registered
** with tecs_relation_new (a tag, or with a plain value: memcpy'd, no
** hooks); an entity may hold several targets of one relation unless the
** relation is exclusive. ChildOf (tecs_childof) is built in: an
** exclusive tag relation, a tag in the child's archetype (queries see who
** has a parent) with the links beside the rows, so a child's parent is
** read in O(1); destroying a parent destroys its subtree. User relations keep their pairs outside every archetype:
** adding and removing one moves no row. docs/relationships.md has the
** storage and its costs.
**
** A relation's id is refused by tecs_add, tecs_set, tecs_remove and births
** (TECS_EINVAL: use the pair calls); tecs_has and a query's term of
** ChildOf tell whether an entity has a parent.
**
** Deferral: while the world is deferred (an iteration, a system, a
** callback) the changes queue and apply in order with every other queued
** change; a change that can no longer apply then is dropped: counted
** (tecs_dropped_changes) when it no longer fits (a cycle made by an
** earlier queued change), silently when its entity or target died
** meanwhile (a stale change, as any queued change of a dead entity). A
** delayed birth (tecs_delayed_new) is no entity for a pair change until
** tecs_delayed_apply_new makes it (TECS_EDEAD). The reads (has, get, target, the walks) are
** allowed everywhere but inside the world's allocator; they see the world
** as it is, queued changes not applied. From lifecycle hooks the changes
** queue as every structural change does.
**
** A field index (tinyecs/index.h) indexes a value relation's pairs of one
** target (tecs_index_desc_t.target; TECS_WILDCARD for an exclusive
** relation's one pair): a unique one makes tecs_pair_set and
** tecs_pair_add refuse a taken key with TECS_EEXIST.
*/

/* TECS_WILDCARD (tinyecs.h) in a pair call: any target (and, in
** tecs_pair_has and tecs_sources, any relation). */

/** What happens to the sources of a pair when its target is destroyed. */
typedef enum tecs_cleanup_t {
    TECS_CLEANUP_REMOVE = 0,    /* the pair goes (the default)                */
    TECS_CLEANUP_DESTROY,       /* the source is destroyed too (ChildOf's)    */
    TECS_CLEANUP_REFUSE         /* the target's destroy fails (TECS_EBUSY)    */
} tecs_cleanup_t;

/** A relation description. */
typedef struct tecs_relation_desc_t {
    tecs_component_desc_t component; /* name (required), size (0: a tag),
                                   align, id, fields as any component's; no
                                   hooks, table storage, not enableable, no
                                   row ticks                                  */
    bool exclusive;             /* one target at most: a new one replaces it  */
    tecs_cleanup_t cleanup;     /* when a target is destroyed                 */
    bool no_clone;              /* tecs_clone leaves a source's pairs of this
                                   relation out (false: the clone has them)   */
} tecs_relation_desc_t;

/**
 * Register a relation. @return its id (a component id), or 0:
 * TECS_EINVAL (a bad desc: hooks, sparse storage, enableable, row ticks),
 * then as tecs_component_new.
 */
tecs_comp_t tecs_relation_new(tecs_world_t *world, const tecs_relation_desc_t *desc);

/**
 * The built-in ChildOf relation of the world, registered (as the tag
 * component "ChildOf") at the first call: exclusive, cleanup
 * TECS_CLEANUP_DESTROY (destroying a parent destroys its subtree, children
 * first). A change that would make an entity its own ancestor is refused
 * (TECS_ECYCLE).
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "ChildOf" that is not it), TECS_ENOMEM.
 */
tecs_comp_t tecs_childof(tecs_world_t *world);

/**
 * The world's prefab tag, registered (as the hidden tag "Prefab",
 * tecs_component_desc_t.hidden) at the first call, or adopted when a
 * snapshot load registered it. An entity with it is a prefab: every
 * query, cache, system, where and observer skips it unless a term names
 * the tag (TECS_WITH: only prefabs; TECS_OPTIONAL: prefabs too). Its
 * lifecycle hooks still run. docs/prefabs.md.
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "Prefab" that is not a hidden tag), TECS_EBUSY (in a worker, before
 * it exists), TECS_ENOMEM.
 */
tecs_comp_t tecs_prefab(tecs_world_t *world);

/**
 * The world's IsA relation, registered (as the tag relation "IsA") at the
 * first call, or adopted when a snapshot load registered it: exclusive, a
 * tag, cleanup TECS_CLEANUP_REFUSE (a base with instances is not
 * destroyed: TECS_EBUSY). tecs_pair_add(w, e, tecs_isa(w), base) makes e
 * inherit from base: tecs_get and the terms marked .inherited read base's
 * value of every table component e has none of (down the chain of bases,
 * a variant's own base next), until e sets its own (an override);
 * tecs_has, tecs_get_mut and plain terms see e's own only. Each base with
 * instances takes a tag id ("IsA.<n>", kept in its instances' archetype;
 * given back when it dies). A pair that would make e its own base, through
 * any chain, is refused (TECS_ECYCLE). docs/prefabs.md.
 * @return its id, or 0: TECS_EINVAL (NULL world), TECS_EEXIST (a component
 * named "IsA" that is not it), TECS_EBUSY (in a worker, before it exists),
 * TECS_ENOMEM.
 */
tecs_comp_t tecs_isa(tecs_world_t *world);

/**
 * Make an instance of prefab (an entity with the tecs_prefab tag): a clone
 * of it (tecs_clone: table, sparse and enableable components with their
 * states, values through copy hooks, its pairs but those of .no_clone
 * relations) born in one step into its archetype without the Prefab tag,
 * so queries see it; and a copy of each of its ChildOf descendants (their
 * Prefab tags left out too), parented to the copy of its parent in the
 * same sibling order. A copy's pair whose target is in the prefab's
 * subtree (the prefab included) points at the target's copy; other
 * targets stay. The instance is a root: it takes no parent the prefab has.
 * Events as births: each copy's ADD and SET events, then its sparse
 * components' and pairs'. Queued while deferred (the id handed out at once
 * as TECS_ENTITY_PENDING; made from the prefab as it is when the queue
 * applies, cancelled if it is gone or no prefab then). Callbacks that run
 * meanwhile (hooks, observers) may call what they may call during
 * tecs_clone (docs/errors.md). docs/prefabs.md.
 * @return the instance's root, or 0: TECS_EINVAL (NULL world, prefab not a
 * prefab), TECS_EDEAD (prefab dead, stale, 0, a delayed birth; pending
 * while the world is not deferred), TECS_EEXIST (a unique index holds a
 * copied key), TECS_ENOMEM and TECS_ELIMIT (nothing changed).
 */
tecs_entity_t tecs_instantiate(tecs_world_t *world, tecs_entity_t prefab);

/**
 * n instances of prefab at once, each with its own copy of the subtree
 * (as tecs_instantiate); their roots into out if not NULL (n ids). n 0
 * makes nothing. A prefab with no children is one reserve and its rows
 * filled at once, as tecs_clone_bulk.
 * @return TECS_OK, TECS_EINVAL (also n < 0), then as tecs_instantiate;
 * a failure makes none.
 */
tecs_err_t tecs_instantiate_bulk(tecs_world_t *world, tecs_entity_t prefab, int32_t n,
                                 tecs_entity_t *out);

/** True if comp is a relation of the world (ChildOf included, once made). */
bool tecs_is_relation(const tecs_world_t *world, tecs_comp_t comp);

/** The level a component stands for if it is one of ChildOf's level tags
 *  ("ChildOf.1", "ChildOf.2", ...: the tags the add-on puts in a child's
 *  archetype so that a cascade query walks them by level), else 0. A
 *  world's archetypes list them; they follow the hierarchy and take no
 *  direct change. */
int32_t tecs_relation_level(const tecs_world_t *world, tecs_comp_t comp);

/** The base whose tag comp is, if it is one of IsA's base tags ("IsA.1",
 *  "IsA.2", ...: the add-on puts a base's tag in the archetype of every
 *  entity that inherits from it), else 0. Like the level tags they follow
 *  the pairs and take no direct change. */
tecs_entity_t tecs_relation_base(const tecs_world_t *world, tecs_comp_t comp);

/** A relation's cleanup policy (TECS_CLEANUP_REMOVE for an unknown id). */
tecs_cleanup_t tecs_relation_cleanup(const tecs_world_t *world, tecs_comp_t rel);

/**
 * Add the pair (rel, target) to entity. An exclusive relation's pair
 * replaces the entity's current one (ChildOf: reparenting). A value
 * relation's new value is zero-filled; one already there keeps its value.
 * Queued while deferred.
 * @return TECS_OK (also when the pair is there), TECS_EINVAL (NULL world,
 * rel not a relation, target TECS_WILDCARD), TECS_EDEAD (entity or target
 * not alive), TECS_ECYCLE (ChildOf: target is entity or one of its
 * descendants; nothing changed), TECS_EEXIST (a unique index over rel's
 * values holds the new value's key for another entity; nothing changed),
 * TECS_ENOMEM (nothing changed), TECS_EBUSY (the world is being freed).
 */
tecs_err_t tecs_pair_add(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                         tecs_entity_t target);

/**
 * Set the value of the pair (rel, target) of entity to a copy of *value,
 * adding the pair first if absent (as tecs_pair_add). Queued while
 * deferred (the value is copied).
 * @return as tecs_pair_add; TECS_EINVAL also for a tag relation, for
 * ChildOf, and for a NULL value.
 */
tecs_err_t tecs_pair_set(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                         tecs_entity_t target, const void *value);

/**
 * Remove the pair (rel, target) from entity; target TECS_WILDCARD removes
 * every target of rel (ChildOf: the entity becomes a root). Queued while
 * deferred.
 * @return TECS_OK, TECS_EINVAL (NULL world, rel not a relation), TECS_EDEAD,
 * TECS_ENOENT (no such pair), TECS_EBUSY (the world is being freed).
 */
tecs_err_t tecs_pair_remove(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                            tecs_entity_t target);

/** True if entity holds (rel, target). rel or target may be TECS_WILDCARD
 *  (any relation, any target). False for dead ids and unknown relations. */
bool tecs_pair_has(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                   tecs_entity_t target);

/**
 * The value of entity's pair (rel, target): valid until the next change of
 * a pair of rel (or, for ChildOf, of the entity's archetype). NULL if the
 * pair is absent, rel is a tag, or an argument is bad (no error is
 * recorded).
 */
const void *tecs_pair_get(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                          tecs_entity_t target);

/**
 * The i-th target of rel held by entity (0 first; the order in which the
 * pairs were added), or 0 past the last. tecs_pair_target(w, e,
 * tecs_childof(w), 0) is e's parent (0 for a root), in O(1).
 */
tecs_entity_t tecs_pair_target(const tecs_world_t *world, tecs_entity_t entity,
                               tecs_comp_t rel, int32_t i);

/** Pairs of rel that entity holds (rel TECS_WILDCARD: of every relation);
 *  0 for dead ids. */
int32_t tecs_pair_count(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel);

/**
 * A walk over the world's pairs or its hierarchy. It allocates nothing and
 * holds nothing: drop it at any time. A change of the relations (a pair
 * added or removed, an entity destroyed that held or was the target of
 * one) or the start's death ends the walk: tecs_walk_next returns false
 * and sets stale. The fields below are the current step's; the rest is
 * private.
 */
typedef struct tecs_walk_t {
    tecs_entity_t entity;       /* the entity reached                         */
    tecs_comp_t rel;            /* sources: the pair's relation               */
    int32_t depth;              /* tree walks: levels below the start (the
                                   start's children 1; ancestors: the parent
                                   1)                                         */
    bool stale;                 /* the walk ended because the relations
                                   changed                                    */
    const tecs_world_t *world_;
    tecs_entity_t start_;
    uint64_t stamp_;
    uint32_t at_, next_;
    int32_t kind_, limit_;
    tecs_comp_t want_;
} tecs_walk_t;

/** How tecs_tree walks. */
typedef enum tecs_tree_order_t {
    TECS_TREE_DEPTH_FIRST = 0,  /* descendants, each before its children and
                                   its children's subtrees before its next
                                   sibling                                    */
    TECS_TREE_BREADTH_FIRST,    /* descendants, level by level (each level
                                   costs a walk over the levels above it:
                                   O(subtree size x depth))                   */
    TECS_TREE_ANCESTORS         /* the parent, its parent, ... to the root    */
} tecs_tree_order_t;

/**
 * The sources of target: the entities holding a pair (rel, target), rel
 * TECS_WILDCARD for every relation. tecs_sources(w, p, tecs_childof(w)) is
 * p's children, in O(children). Each step sets entity and rel.
 */
tecs_walk_t tecs_sources(const tecs_world_t *world, tecs_entity_t target, tecs_comp_t rel);

/** A walk of entity's hierarchy (ChildOf) in the given order; entity
 *  itself is not visited. Each step sets entity and depth. */
tecs_walk_t tecs_tree(const tecs_world_t *world, tecs_entity_t entity,
                      tecs_tree_order_t order);

/** The next step of a walk: false when done, or when the relations changed
 *  since the walk began (stale is set then). Records no error. */
bool tecs_walk_next(tecs_walk_t *walk);

/** Levels above entity in its hierarchy: 0 for a root, -1 for a dead id. */
int32_t tecs_depth(const tecs_world_t *world, tecs_entity_t entity);

/** Private: TECS_PAIR_SET's call. */
tecs_err_t tecs__pair_set_sized(tecs_world_t *world, tecs_entity_t entity, tecs_comp_t rel,
                                tecs_entity_t target, const void *value, size_t size);

/** tecs_pair_set of a value of type T (a brace list or an expression, as
 *  TECS_SET): TECS_PAIR_SET(w, e, owes, bob, int32_t, 10). @return as
 *  tecs_pair_set; TECS_EINVAL when sizeof(T) is not the relation's size. */
#define TECS_PAIR_SET(world, entity, rel, target, T, ...)                   \
    tecs__pair_set_sized((world), (entity), (rel), (target), (T[1]){ __VA_ARGS__ }, sizeof(T))

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_RELATION_H */
