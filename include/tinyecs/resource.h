/*
** tinyecs/resource.h — world resources: one value per component held by
** the world on no entity (the resource add-on; docs/resources.md).
*/
#ifndef TINYECS_RESOURCE_H
#define TINYECS_RESOURCE_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Resources                                                            */
/* ==================================================================== */

/*
** A resource is a world's one value of a component, held by the world on
** no entity: the time, the input, the settings, the level. Queries, entity
** counts and the iteration of every entity do not see it. Its value is
** aligned to the component's alignment, allocated through the world's
** allocator and built and destroyed by the component's lifecycle hooks (ctor
** then copy when a set adds it, copy when a set writes over it, dtor at
** remove and at world free). The component's on_add / on_set / on_remove
** hooks and the observers made with .resource fire for it with entity 0
** (0 means the world): ADD then SET when a set adds it, SET when a set
** writes over it or tecs_resource_modified reports a write, REMOVE before
** it is destroyed. A tag (size 0) can be a resource too: it has no value.
**
** From callbacks: a resource is in no row, so tecs_resource_set, _remove
** and _modified apply at once from every callback, lifecycle hooks
** included; the hooks and observers they fire run inside the call, with
** the world deferred as in any callback. They are refused (TECS_EBUSY)
** while the world is being freed, inside its allocator, and for the
** resource whose own ctor / copy / dtor is running. Inside the resource's
** own REMOVE callbacks a remove of it returns TECS_OK (the removal is under
** way) and a set or modified of it is refused (TECS_EBUSY). A callback of
** an ADD or SET of it may remove it: the delivery stops there, and no later
** callback is handed the freed value. A set inside its own on_set runs
** on_set again, at once: guard against endless recursion as with tecs_set.
** The reads (get, get_mut, has, count) are allowed everywhere but inside the
** world's allocator, and record no error and write nothing to the world:
** several threads may read resources at once while no thread changes the
** world. When the world is freed, every entity is announced destroyed
** first, then each resource (in component id order: REMOVE, then its
** destructor), so entities' on_remove hooks can still read resources.
** Snapshots save and load resources with the world's entities.
*/

/**
 * Set the world's resource of comp to a copy of *value (its copy hook, or
 * memcpy), adding it first if absent. value may be NULL only for a tag.
 * Applies at once, also from callbacks (see above).
 * @return TECS_OK, TECS_EINVAL (NULL world, NULL value of a component with a
 * size), TECS_ENOCOMP, TECS_EBUSY (the world is being freed; the resource's
 * own lifecycle hook or removal runs), TECS_ENOMEM (nothing changed).
 */
tecs_err_t tecs_resource_set(tecs_world_t *world, tecs_comp_t comp, const void *value);

/**
 * Read the world's resource of comp. @return a pointer to its value, valid
 * until the resource is removed or the world freed (a set writes in place);
 * NULL if it is absent, comp unknown or a tag (tecs_resource_has tells a
 * tag apart), the world NULL, or inside the world's allocator. Records no
 * error and writes nothing to the world.
 */
const void *tecs_resource_get(const tecs_world_t *world, tecs_comp_t comp);

/**
 * Like tecs_resource_get, for writing. A write through the pointer is not
 * reported: call tecs_resource_modified for on_set hooks and SET observers
 * to see it (as with tecs_get_mut and tecs_modified). NULL in a worker
 * (W4 in "Threads": the workers share the resources).
 */
void *tecs_resource_get_mut(tecs_world_t *world, tecs_comp_t comp);

/** True if the world has a resource of comp (tags included). Records no
 *  error and writes nothing to the world. */
bool tecs_resource_has(const tecs_world_t *world, tecs_comp_t comp);

/**
 * Remove the world's resource of comp: its REMOVE hook and observers fire,
 * then its destructor runs and its memory is freed. Applies at once, also
 * from callbacks (see above).
 * @return TECS_OK (also from inside its own REMOVE callbacks, where the
 * removal is under way), TECS_EINVAL (NULL world), TECS_ENOCOMP, TECS_ENOENT
 * (absent), TECS_EBUSY (the world is being freed; the resource's own
 * lifecycle hook runs).
 */
tecs_err_t tecs_resource_remove(tecs_world_t *world, tecs_comp_t comp);

/**
 * Report that the resource's value was written through tecs_resource_get_mut:
 * its on_set hook and SET observers fire, at once.
 * @return TECS_OK, TECS_EINVAL (NULL world, a tag), TECS_ENOCOMP,
 * TECS_ENOENT (absent), TECS_EBUSY (the world is being freed; the
 * resource's own lifecycle hook or removal runs).
 */
tecs_err_t tecs_resource_modified(tecs_world_t *world, tecs_comp_t comp);

/** Resources the world has (0 for NULL). */
int32_t tecs_resource_count(const tecs_world_t *world);

/** Private: TECS_RESOURCE_SET's call (see TECS_SET). */
tecs_err_t tecs__resource_set_sized(tecs_world_t *world, tecs_comp_t comp, const void *value,
                                    size_t size);

/** Private: TECS_RESOURCE_GET's and TECS_RESOURCE_GET_MUT's call. */
void *tecs__resource_get_sized(const tecs_world_t *world, tecs_comp_t comp, size_t size,
                               bool write);

/** tecs_resource_set of a value of type T (a brace list or an expression,
 *  as TECS_SET): TECS_RESOURCE_SET(w, time, Time, { .delta = 0.016 }).
 *  @return as tecs_resource_set; TECS_EINVAL when sizeof(T) is not comp's
 *  size. */
#define TECS_RESOURCE_SET(world, comp, T, ...)                              \
    tecs__resource_set_sized((world), (comp), (T[1]){ __VA_ARGS__ }, sizeof(T))

/** The resource of comp as a const T pointer: NULL if absent, and when
 *  sizeof(T) is not comp's size (as tecs_resource_get, it records no
 *  error: tecs_resource_has tells the two apart). */
#define TECS_RESOURCE_GET(world, comp, T)                                   \
    ((const T *)tecs__resource_get_sized((world), (comp), sizeof(T), false))

/** The resource of comp as a T pointer, for writing (NULL as
 *  TECS_RESOURCE_GET's, and in a worker). */
#define TECS_RESOURCE_GET_MUT(world, comp, T)                               \
    ((T *)tecs__resource_get_sized((world), (comp), sizeof(T), true))


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_RESOURCE_H */
