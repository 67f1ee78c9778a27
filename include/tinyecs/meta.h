/*
** tinyecs/meta.h — component descriptions (reflection): the name, type
** and offset of each field of a component, given at registration
** (tecs_component_desc_t.fields) and read by JSON, field indexes, snapshots
** and tools. docs/components.md.
*/
#ifndef TINYECS_META_H
#define TINYECS_META_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Component descriptions (reflection): name, type and offset of each field,
 * given at registration and fixed from then on, so that JSON, field indexes
 * and tools read values by name. TECS_TYPE_STRING is a `char *` the value
 * owns (NUL-terminated, or NULL): its component needs copy and dtor hooks,
 * which own the strings. See docs/components.md.
 */
typedef enum tecs_type_t {
    TECS_TYPE_BOOL = 1,         /* bool                                       */
    TECS_TYPE_I8, TECS_TYPE_I16, TECS_TYPE_I32, TECS_TYPE_I64,
    TECS_TYPE_U8, TECS_TYPE_U16, TECS_TYPE_U32, TECS_TYPE_U64,
    TECS_TYPE_F32,              /* float                                      */
    TECS_TYPE_F64,              /* double                                     */
    TECS_TYPE_ENTITY,           /* tecs_entity_t                              */
    TECS_TYPE_STRING,           /* char *, owned by the value (see above)     */
    TECS_TYPE_STRUCT            /* a nested described component (.comp)      */
} tecs_type_t;

/** One field of a component description. */
struct tecs_field_t {
    const char *name;           /* unique in the component, not empty; copied */
    tecs_type_t type;
    size_t offset;              /* bytes from the start of the value          */
    int32_t count;              /* a fixed-size array of count elements;
                                   0 means 1                                  */
    tecs_comp_t comp;           /* TECS_TYPE_STRUCT: the nested component,
                                   registered and described                   */
};

/** The most fields one description may hold. */
#define TECS_MAX_FIELDS 256

/** A field for the member of struct T: TECS_MEMBER(Position, x, TECS_TYPE_F32). */
#define TECS_MEMBER(T, member, type_)                                       \
    { #member, (type_), offsetof(T, member), 1, 0 }

/** An array member of T, its count from sizeof: float v[4] gives 4. */
#define TECS_MEMBER_ARRAY(T, member, type_)                                 \
    { #member, (type_), offsetof(T, member),                                \
      (int32_t)(sizeof(((T *)0)->member) / sizeof(((T *)0)->member[0])), 0 }

/** A member of T that is a nested described component comp_. */
#define TECS_MEMBER_STRUCT(T, member, comp_)                                \
    { #member, TECS_TYPE_STRUCT, offsetof(T, member), 1, (comp_) }

/** An array member of T whose elements are the described component comp_. */
#define TECS_MEMBER_STRUCT_ARRAY(T, member, comp_)                          \
    { #member, TECS_TYPE_STRUCT, offsetof(T, member),                       \
      (int32_t)(sizeof(((T *)0)->member) / sizeof(((T *)0)->member[0])), (comp_) }

/** Register the C type T under its own name with the fields that follow:
 *  TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
 *  TECS_MEMBER(Position, y, TECS_TYPE_F32)). */
#define TECS_COMPONENT_FIELDS(world, T, ...)                                \
    tecs_component_new((world), &(tecs_component_desc_t){                   \
        .name = #T, .size = sizeof(T), .align = _Alignof(T),                \
        .fields = (const tecs_field_t[]){ __VA_ARGS__ },                    \
        .nfields = (int32_t)(sizeof((const tecs_field_t[]){ __VA_ARGS__ })  \
                             / sizeof(tecs_field_t)) })

/** A component's fields in registration order, owned by the world, and
 *  *count (may be NULL); NULL with *count 0 if unknown or undescribed.
 *  Records no error, calls nothing: allowed in every callback. */
const tecs_field_t *tecs_component_fields(const tecs_world_t *world, tecs_comp_t comp,
                                          int32_t *count);

/** A field by name; a dotted path ("pos.x") goes into nested components,
 *  *offset (may be NULL) gets its offset in the outer value. NULL if not
 *  found. Records no error, calls nothing. */
const tecs_field_t *tecs_component_field(const tecs_world_t *world, tecs_comp_t comp,
                                         const char *path, size_t *offset);

/** The name of a field type as text ("f32", "entity", "struct", ...), or
 *  "?" for a value that is not a tecs_type_t. */
const char *tecs_type_name(tecs_type_t type);

/** The size of one element of a field type; 0 for TECS_TYPE_STRUCT (its
 *  size is the nested component's) and for a value that is not a type. */
size_t tecs_type_size(tecs_type_t type);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_META_H */
