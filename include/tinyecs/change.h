/*
** tinyecs/change.h — change detection: the world's ticks, the tick of an
** entity's last write, and a query's last run (the core keeps them; a
** term's .change, in tinyecs.h, asks for what changed).
*/
#ifndef TINYECS_CHANGE_H
#define TINYECS_CHANGE_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
** The world counts ticks, from 1. A write records its tick per chunk and
** component: tecs_set, tecs_get_mut, tecs_modified, a write term handed
** out, a row entering a chunk (birth, add, move; tecs_enable too). A term
** with .change passes the chunks written since the query's previous run
** began (every row on its first run); each run starts at the current tick
** and moves it on, so no write is missed or seen twice. docs/change-detection.md.
*/

/** The world's tick now (0 for NULL). */
uint64_t tecs_world_tick(const tecs_world_t *world);

/** Move the world's tick on by one (tecs_progress does, at each frame's
 *  start): writes made from now on are newer than any made before.
 *  @return the new tick, or 0 (NULL; TECS_EBUSY from a worker or while
 *  the world is being freed). */
uint64_t tecs_world_tick_advance(tecs_world_t *world);

/** The tick of the last write to the value of comp of entity as the world
 *  keeps it: that of the entity's chunk (or sparse set); 0 if the entity
 *  is not alive or has no comp. Calls nothing: may be called from any
 *  callback. */
uint64_t tecs_changed_tick(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/** The tick at which comp may have been added to entity, as kept: the last
 *  row entering the entity's chunk (or member joining the sparse set); 0
 *  as tecs_changed_tick. */
uint64_t tecs_added_tick(const tecs_world_t *world, tecs_entity_t entity, tecs_comp_t comp);

/** The tick at which the latest run of query began (0: it never ran with
 *  change terms; a query without change terms keeps 0). */
uint64_t tecs_query_last_run(const tecs_query_t *query);

/** Set the tick the next run of query compares with (its change terms pass
 *  what is newer): 0 makes the next run pass every row. @return TECS_OK,
 *  TECS_EINVAL (NULL, a tick above tecs_world_tick), TECS_EBUSY (an
 *  iteration of the query is open). */
tecs_err_t tecs_query_set_last_run(tecs_query_t *query, uint64_t tick);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_CHANGE_H */
