/*
** tinyecs/observer.h — observers of component and query events (the
** observer add-on; docs/observers.md). Lifecycle hooks are in tinyecs.h.
*/
#ifndef TINYECS_OBSERVER_H
#define TINYECS_OBSERVER_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An observer id; 0 is never an observer. Ids are not reused. */
typedef uint32_t tecs_observer_t;

/** An observer description. */
typedef struct tecs_observer_desc_t {
    tecs_event_kind_t event;    /* required                                   */
    tecs_comp_t comp;           /* ADD / SET / REMOVE: the component; else 0  */
    const tecs_term_t *terms;   /* narrowing terms (ADD / SET / REMOVE, may be
                                   none) or the watched terms (ENTER / LEAVE) */
    int32_t term_count;
    tecs_query_t *query;        /* or take the terms of this query (copied)   */
    tecs_observer_fn callback;  /* required                                   */
    void *ctx;
    bool resource;              /* watch the world's resource of comp instead
                                   of entities: fires with entity 0; ADD / SET
                                   / REMOVE only, no terms                    */
} tecs_observer_desc_t;

/**
 * Create an observer. For ADD / SET / REMOVE of comp, it fires when the
 * entity, at that moment, matches the terms (for REMOVE: while it still has
 * the component). ENABLE / DISABLE of an enableable comp fire when
 * tecs_enable changes its state (the terms narrow as for ADD). For ENTER /
 * LEAVE it fires when an entity starts / stops matching the terms: by birth,
 * destruction, add or remove, and by tecs_enable of a toggle term's
 * component (ENTER before ENABLE, DISABLE before LEAVE). Observers fire in
 * creation order; every event fires when its change is applied (at once, or
 * at the flush for queued changes, in the order the changes were made).
 * Move-related order: ENTER / LEAVE fire when the entity changes archetype,
 * after the values of an add are constructed and before its ADD events, and
 * after the REMOVE events of a remove or destroy.
 * When the world is freed, every live entity is announced as destroyed
 * (REMOVE, then LEAVE), archetype by archetype in creation order, rows in
 * order; changes queued then are dropped.
 * With .resource it fires for the world's resource of comp only (entity 0),
 * when tecs_resource_set / _remove / _modified change it, and never for
 * entities; an observer without it never fires for the resource.
 * @return its id, or 0 on error: TECS_EINVAL (bad event, missing callback,
 * ENABLE / DISABLE of a component that is not enableable or with .resource,
 * comp given for ENTER / LEAVE or missing for the others, no terms for ENTER /
 * LEAVE, terms and query both given, SET of a tag, bad terms as tecs_query_new,
 * .resource with ENTER / LEAVE or with terms),
 * TECS_ENOCOMP, TECS_EWORLD (query of another world), TECS_EBUSY (while the
 * world is being freed), TECS_ENOMEM.
 */
tecs_observer_t tecs_observer_new(tecs_world_t *world, const tecs_observer_desc_t *desc);

/**
 * Remove an observer; it fires no more, even for the event being delivered.
 * @return TECS_OK, or TECS_ENOENT (unknown or removed already).
 */
tecs_err_t tecs_observer_free(tecs_world_t *world, tecs_observer_t observer);

/** Live observers of the world. */
int32_t tecs_observer_count(const tecs_world_t *world);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_OBSERVER_H */
