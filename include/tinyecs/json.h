/*
** tinyecs/json.h — the optional JSON module (library tinyecs_json, built
** when jansson is installed; pkg-config tinyecs_json). It writes a world,
** or one entity, as JSON text that follows the component descriptions
** (field names, not offsets) and reads it back. It is built on the public
** API of tinyecs.h only. docs/json.md shows the format.
**
** Values: a described component is an object of its fields; a tag is
** true; a component without a description is null (its bytes are neither
** portable across platforms nor readable, so describe a component to keep
** its value; an import adds it with its default value). Floats read back
** bit for bit: f32 are written with 9 significant digits, f64 with 17;
** NaN and the infinities, which JSON has not, are the strings "NaN",
** "Infinity" and "-Infinity" (a NaN's sign and payload are not kept). u64
** values above INT64_MAX are decimal strings. Entity ids are [slot,
** generation]; 0 is null.
**
** Ids: the text keeps each entity's id. An import makes new entities
** (tecs_new) and rewrites entity fields through the map from the text's
** ids to the new ones, so they name the same entities as before; an
** imported field naming an id not in the text is 0 for a whole world, and
** for one entity kept if it is alive in the target world, else 0. Into a
** fresh world a text of ids 1..n of generation 0 keeps every id.
*/
#ifndef TINYECS_JSON_H
#define TINYECS_JSON_H

#include "../tinyecs.h"
#include "meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Why an import or export failed: the code (also returned), the place in
 *  the text (line and column, 0 when not a parse error) and a message. */
typedef struct tecs_json_error_t {
    tecs_err_t code;
    int line;
    int column;
    char text[256];
} tecs_json_error_t;

/**
 * Write every entity of the world, in slot order, as JSON text.
 * @return the text (NUL-terminated, free it with tecs_json_free), or NULL
 * with *err (may be NULL) filled: TECS_EINVAL (NULL world, a string field
 * that is not UTF-8), TECS_ENOMEM, or the error of the query it makes
 * (TECS_EBUSY inside a lifecycle hook, where objects cannot be made).
 * Callbacks: it reads only, and makes one query (see the table at the top
 * of tinyecs.h: refused in lifecycle hooks).
 */
char *tecs_json_export(tecs_world_t *world, tecs_json_error_t *err);

/**
 * Write one entity as JSON text (an element of the whole world's
 * "entities"). @return as tecs_json_export; TECS_EDEAD for an entity that
 * is not alive. Callbacks: reads only, allowed from every callback.
 */
char *tecs_json_export_entity(tecs_world_t *world, tecs_entity_t entity,
                              tecs_json_error_t *err);

/**
 * Read a whole world (tecs_json_export's text, len bytes) into a world
 * that has no entities; components are matched by name and must be
 * registered, with the same descriptions, before.
 * @return TECS_OK, or an error with *err filled and the world left without
 * entities: TECS_EINVAL (NULL world or text, a world that has entities),
 * TECS_EFORMAT (as a snapshot's loader: malformed or truncated text, wrong
 * format or version, a value of the wrong type or out of range, an array
 * of the wrong length, an unknown field, a bad or repeated id; an id is
 * [slot, generation] with a generation of at least 1, as no entity has
 * generation 0), TECS_ENOCOMP (a component name the world does not know),
 * TECS_EBUSY (the world is deferred: inside a callback, an iteration or a
 * deferred section, where its changes would be queued), TECS_ENOMEM, or
 * the error of a tecs_set a hook or observer refused. The whole text is
 * checked before the world is changed; hooks and observers then see the
 * births and sets, and the destroys of an import that fails after that.
 */
tecs_err_t tecs_json_import(tecs_world_t *world, const char *text, size_t len,
                            tecs_json_error_t *err);

/**
 * Read one entity (tecs_json_export_entity's text) into a world as a new
 * entity. @return its id, or 0 with *err filled and the world without it:
 * the errors of tecs_json_import but for the world having entities.
 */
tecs_entity_t tecs_json_import_entity(tecs_world_t *world, const char *text, size_t len,
                                      tecs_json_error_t *err);

/**
 * Write one value of component comp (at value) as the JSON text it has
 * inside an entity's "components": an object of its fields for a described
 * component, true for a tag, null for a component without a description
 * (value may be NULL for the last two).
 * @return the text (NUL-terminated, free it with tecs_json_free), or NULL
 * with *err (may be NULL) filled: TECS_EINVAL (NULL world, a NULL value of
 * a described component, a string field that is not UTF-8), TECS_ENOCOMP
 * (comp unknown), TECS_ENOMEM. Reads value only: allowed from every
 * callback.
 */
char *tecs_json_export_value(tecs_world_t *world, tecs_comp_t comp, const void *value,
                             tecs_json_error_t *err);

/**
 * Read one value of component comp (tecs_json_export_value's text, len
 * bytes) into *value, size bytes of the caller's that the call fills as an
 * import stages a value: each field from the text, a field the text leaves
 * out zero, a string field a malloc'd copy of the text's string (or NULL),
 * an entity field kept when it names a live entity, else 0. *value is then
 * a stage for tecs_set (whose copy hook copies the strings), not a value
 * the world owns: free its strings with tecs_json_free_value after. A tag
 * (text true) and a component without a description (text null) have no
 * value to write: value may be NULL and is left alone.
 * @return TECS_OK, or an error with *err filled and *value unchanged:
 * TECS_EINVAL (NULL world or text, a NULL value of a described component),
 * TECS_ENOCOMP (comp unknown), TECS_EFORMAT (malformed text, a value of the
 * wrong type or out of range, an array of the wrong length, an unknown
 * field: the checks of tecs_json_import), TECS_ENOMEM. It changes nothing
 * in the world: allowed from every callback.
 */
tecs_err_t tecs_json_import_value(tecs_world_t *world, tecs_comp_t comp, const char *text,
                                  size_t len, void *value, tecs_json_error_t *err);

/** Free the string fields of a value tecs_json_import_value filled (each
 *  set to NULL; nested components' too); the other fields stay. NULL world
 *  or value, or a component without string fields, does nothing. */
void tecs_json_free_value(tecs_world_t *world, tecs_comp_t comp, void *value);

/** Free a text made by tecs_json_export or _export_entity. NULL does
 *  nothing. */
void tecs_json_free(char *text);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_JSON_H */
