/*
** tinyecs/snapshot.h — snapshots, marks and deltas (the snapshot add-on;
** docs/snapshots.md, the format in docs/SNAPSHOT.md).
*/
#ifndef TINYECS_SNAPSHOT_H
#define TINYECS_SNAPSHOT_H

#include "../tinyecs.h"
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Snapshots                                                            */
/* ==================================================================== */

/*
** A snapshot is a whole world in bytes: its components (by name, with
** size, alignment, storage, enableable, a hash of the layout and the
** description), its
** entity slots with their generations and the free list in order, its
** archetypes with their rows, the values column by column, the enableable
** bits, the sparse components' members and values, and the resources.
** docs/SNAPSHOT.md describes the format. A loaded world holds the same
** entity ids (so ids stored in components stay valid), the same rows in
** the same order, and the next tecs_new gives the id the source world's
** would have given.
**
** Values of a component without hooks are copied as bytes, in the byte
** order of the host that saved them. A host of the other byte order turns
** them field by field when the component is registered there with a
** description (its fields: see tecs_field_t) of the saved layout and no
** string field; otherwise it refuses them (TECS_EFORMAT naming the
** component). The layout hash a load compares covers the description. A component with hooks owns memory, so its
** values are saved through its serializer (tecs_component_serializer),
** or, with a description and no serializer, field by field (strings as
** their text; a load builds each value through the hooks, whose copy
** duplicates the strings): the save refuses (TECS_EINVAL naming it) a
** component that has hooks, neither and a value to save. A serializer writes what it wants
** (little-endian, say), so serialized values are portable.
**
** From callbacks: the writer, reader, serialize, deserialize and convert
** callbacks must not call the world: every call they make is refused
** (TECS_EBUSY, "a snapshot is being saved or loaded"). A save or a load
** is refused (TECS_EBUSY) inside any callback, an iteration, a deferred
** section or a frame, and while a worker runs.
*/

/** Write n bytes somewhere. @return TECS_OK, or an error, which the save
 *  returns (the world's last error says which call failed). */
typedef tecs_err_t (*tecs_write_fn)(void *ctx, const void *data, size_t n);

/** Read exactly n bytes into data. @return TECS_OK, or an error (at the end
 *  of the input: TECS_EFORMAT), which the load returns. */
typedef tecs_err_t (*tecs_read_fn)(void *ctx, void *data, size_t n);

/** Where a serializer writes one value (tecs_snapshot_put). */
typedef struct tecs_snapshot_out_t tecs_snapshot_out_t;

/** Write *value's bytes with tecs_snapshot_put. @return TECS_OK, or an
 *  error, which stops the save. */
typedef tecs_err_t (*tecs_serialize_fn)(const void *value, tecs_snapshot_out_t *out,
                                        void *ctx);
/** Build a value at dst (raw memory) from the n bytes serialize wrote.
 *  @return TECS_OK (dst built), or an error (dst left unbuilt), which stops
 *  the load. */
typedef tecs_err_t (*tecs_deserialize_fn)(void *dst, const void *data, size_t n, void *ctx);
/** Build a value at dst (raw memory) from a value old of the component as
 *  the snapshot has it (old_size bytes, its layout differing from the
 *  registered one). @return TECS_OK, or an error, which stops the load. */
typedef tecs_err_t (*tecs_convert_fn)(void *dst, const void *old, size_t old_size, void *ctx);

/** A component's snapshot hooks (tecs_component_serializer). */
typedef struct tecs_serializer_t {
    tecs_serialize_fn serialize;     /* both or neither of these two          */
    tecs_deserialize_fn deserialize;
    tecs_convert_fn convert;    /* optional: loads values of another size,
                                   alignment or layout                        */
    void *ctx;                  /* passed to each                             */
} tecs_serializer_t;

/**
 * Give comp snapshot hooks (replacing earlier ones; NULL removes them).
 * With serialize / deserialize, each value is saved as the bytes serialize
 * writes (portable between byte orders); convert lets a load accept a
 * snapshot whose component of this name has another size, alignment or
 * layout. Not allowed from callbacks (TECS_EBUSY).
 * @return TECS_OK, TECS_EINVAL (NULL world, only one of serialize and
 * deserialize), TECS_ENOCOMP, TECS_EBUSY.
 */
tecs_err_t tecs_component_serializer(tecs_world_t *world, tecs_comp_t comp,
                                     const tecs_serializer_t *serializer);

/** From a serialize callback: append n bytes to the value being saved.
 *  @return TECS_OK, TECS_EINVAL (NULL out, or data NULL with n > 0),
 *  TECS_ENOMEM. */
tecs_err_t tecs_snapshot_put(tecs_snapshot_out_t *out, const void *data, size_t n);

/**
 * Save the world to write, in pieces.
 * @return TECS_OK; TECS_EINVAL (NULL world or write; a component with hooks
 * and values but no serializer, named in the message); TECS_EBUSY (inside a
 * callback, an iteration, a deferred section or a frame, or while changes
 * wait in the delayed queues: apply them first); TECS_ENOMEM; or the error
 * write or serialize returned. The world is unchanged either way; what was
 * written before a failure is not a snapshot.
 */
tecs_err_t tecs_snapshot_save(tecs_world_t *world, tecs_write_fn write, void *ctx);

/**
 * Load a snapshot from read into an empty world: no entity, no queued or
 * delayed change, no resource. Indexes and caches the world has are built
 * from the loaded entities at the end of the load, as if made after it
 * (each index filled once, each cache filled once; no on_enter / on_leave
 * runs); a cache's order function runs then, as in tecs_cache_new (with
 * the world open for reads only; what it queues is applied before the
 * load returns). Components the world has
 * are matched by name; the others are registered (with their saved id if it
 * is free, and their saved description unless it has a string field), as
 * plain data: a component with hooks must be registered,
 * with its hooks and serializer, before the load. Queries match the loaded
 * archetypes. Observers and hooks do not fire for the loaded entities (an
 * ADD and a SET for every value of the world would rarely be wanted);
 * resources are set with tecs_resource_set, so theirs do. Slots and ids are
 * the snapshot's: a stale id of the world from before the load may name a
 * loaded entity.
 * @return TECS_OK; TECS_EINVAL (NULL, a world that is not empty);
 * TECS_EBUSY (as for tecs_snapshot_save); TECS_EEXIST (a unique index of
 * the world finds a key twice among the loaded entities: the message
 * names the component and both entities);
 * TECS_EFORMAT (bad magic, version, checksum, truncated input, counts out
 * of range or inconsistent, values in another byte order without a
 * serializer or description; a component whose size, alignment, layout, storage or
 * enableable differs from the registered one and has no convert hook:
 * the message names it); TECS_ELIMIT (the world's entity limit);
 * TECS_ENOMEM; or the error a callback returned. On failure the world is
 * empty again (no entity, no resource), so are its indexes and caches, and
 * nothing leaks; components and archetypes the load made stay.
 */
tecs_err_t tecs_snapshot_load(tecs_world_t *world, tecs_read_fn read, void *ctx);

/** tecs_snapshot_save to a stdio stream (TECS_EINVAL: NULL file; a write
 *  error is TECS_EINVAL with errno's text). */
tecs_err_t tecs_snapshot_save_file(tecs_world_t *world, FILE *file);

/** tecs_snapshot_load from a stdio stream, from its current position. */
tecs_err_t tecs_snapshot_load_file(tecs_world_t *world, FILE *file);

/** A growable buffer the caller owns: zero it before the first use, free
 *  it with tecs_snapshot_buf_free. Its memory comes from malloc. */
typedef struct tecs_snapshot_buf_t {
    unsigned char *data;
    size_t size;                /* bytes in data                              */
    size_t cap;
} tecs_snapshot_buf_t;

/** tecs_snapshot_save into buf, replacing what it held (on failure buf is
 *  empty). @return as tecs_snapshot_save, TECS_EINVAL for NULL buf. */
tecs_err_t tecs_snapshot_save_mem(tecs_world_t *world, tecs_snapshot_buf_t *buf);

/** Free buf's memory and empty it; NULL does nothing. */
void tecs_snapshot_buf_free(tecs_snapshot_buf_t *buf);

/** tecs_snapshot_load from size bytes at data; bytes after the snapshot
 *  are TECS_EFORMAT. */
tecs_err_t tecs_snapshot_load_mem(tecs_world_t *world, const void *data, size_t size);

/*
** Deltas: what changed since a mark, for a world that mirrors another
** (a server's clients, a replay). The source takes a mark
** (tecs_world_mark) when it saves the base snapshot; each
** tecs_delta_save then writes what changed since its mark and moves the
** mark to now. Applied in the same order to a world loaded from the base,
** the deltas give the source's world: the same slots, generations and free
** list, the same archetypes in the same order, the same rows in the same
** order, values, bits, sparse sets and resources. A delta holds the chunks
** that rows entered (births, moves, swap-removes, enables), the columns
** written in the others (chunk ticks: see Change detection), the sparse
** sets that changed, the free list's change, and every resource; its size
** follows what changed, not the world.
**
** The mirror takes no other changes: a delta checks that the world is
** where its mark was (its slot and entity counts) and refuses a world
** that is not (TECS_EINVAL, unchanged). From callbacks: as snapshots (the
** writer, reader and serializer callbacks are refused every call; a mark,
** a save or an apply is refused inside any callback, iteration, deferred
** section or frame).
*/

/** A point in a world's history (tecs_world_mark). Its fields are private:
 *  a mark names its world, and only that world's delta calls take it. */
typedef struct tecs_mark_t {
    uint64_t world, tick, pushes, pops;
    int32_t nslots, nalive, nfree, nretired;
} tecs_mark_t;

/** Mark the world's state now: the next tecs_delta_save with the mark
 *  holds what changes after this call. Moves the world's tick on.
 *  @return TECS_OK, TECS_EINVAL (NULL), TECS_EBUSY (as tecs_snapshot_save). */
tecs_err_t tecs_world_mark(tecs_world_t *world, tecs_mark_t *mark);

/**
 * Write what changed since mark (of this world) to write, then move mark to
 * now. A mark taken before a tecs_world_reset of this world is of its past:
 * the delta holds the reset (every entity destroyed) and what came after.
 * @return as tecs_snapshot_save; TECS_EINVAL also for a NULL mark, a
 * zeroed one (a mark is what tecs_world_mark wrote), a mark another world
 * took and a mark not of this world's past. On failure the mark stays.
 */
tecs_err_t tecs_delta_save(tecs_world_t *world, tecs_mark_t *mark, tecs_write_fn write,
                           void *ctx);

/**
 * Apply a delta from read to a world that is where the delta's mark was
 * (loaded from the base snapshot, then given the deltas before this one).
 * Components are matched (and registered) as by tecs_snapshot_load.
 * Observers and hooks of entities do not fire; the values replaced are
 * destroyed and the new ones built through the serializers, as a load
 * does; resources are removed and set again; the world's indexes and
 * caches are rebuilt from its rows, as after a load. Rows the delta brings
 * count as entered, and columns it writes as written, for change terms.
 * @return TECS_OK; TECS_EINVAL (NULL; the world is not where the delta
 * starts: unchanged); TECS_EBUSY (as tecs_snapshot_load); TECS_EEXIST (as
 * tecs_snapshot_load); TECS_EFORMAT (as tecs_snapshot_load, and a delta
 * that does not fit the world); TECS_ENOMEM; or a callback's error. A
 * delta refused before its first change (a world not where it starts; a
 * malformed header, component table, slot or row section; out of memory
 * reserving room for it) leaves the world unchanged, but for components
 * the delta registered; a failure after that leaves the world empty, as a
 * failed load leaves it: load the base again.
 */
tecs_err_t tecs_delta_apply(tecs_world_t *world, tecs_read_fn read, void *ctx);

/** tecs_delta_save into buf, replacing what it held. */
tecs_err_t tecs_delta_save_mem(tecs_world_t *world, tecs_mark_t *mark,
                               tecs_snapshot_buf_t *buf);

/** tecs_delta_apply from size bytes at data. */
tecs_err_t tecs_delta_apply_mem(tecs_world_t *world, const void *data, size_t size);


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_SNAPSHOT_H */
