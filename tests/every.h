/*
** every.h — the described components the descriptions and JSON tests share:
** Vec2 and Every, a field of each type (an array, a nested component and an
** array of them included), and their registration.
*/
#ifndef TECS_TEST_EVERY_H
#define TECS_TEST_EVERY_H

#include "test.h"

typedef struct Vec2 { float x, y; } Vec2;

typedef struct Every {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    tecs_entity_t ent;
    int32_t arr[3];
    Vec2 at;
    Vec2 path[2];
} Every;

static inline tecs_comp_t register_vec2(tecs_world_t *w)
{
    return TECS_COMPONENT_FIELDS(w, Vec2, TECS_MEMBER(Vec2, x, TECS_TYPE_F32),
                                 TECS_MEMBER(Vec2, y, TECS_TYPE_F32));
}

static inline tecs_comp_t register_every(tecs_world_t *w, tecs_comp_t vec2)
{
    return TECS_COMPONENT_FIELDS(w, Every,
        TECS_MEMBER(Every, b, TECS_TYPE_BOOL), TECS_MEMBER(Every, i8, TECS_TYPE_I8),
        TECS_MEMBER(Every, i16, TECS_TYPE_I16), TECS_MEMBER(Every, i32, TECS_TYPE_I32),
        TECS_MEMBER(Every, i64, TECS_TYPE_I64), TECS_MEMBER(Every, u8, TECS_TYPE_U8),
        TECS_MEMBER(Every, u16, TECS_TYPE_U16), TECS_MEMBER(Every, u32, TECS_TYPE_U32),
        TECS_MEMBER(Every, u64, TECS_TYPE_U64), TECS_MEMBER(Every, f32, TECS_TYPE_F32),
        TECS_MEMBER(Every, f64, TECS_TYPE_F64), TECS_MEMBER(Every, ent, TECS_TYPE_ENTITY),
        TECS_MEMBER_ARRAY(Every, arr, TECS_TYPE_I32), TECS_MEMBER_STRUCT(Every, at, vec2),
        TECS_MEMBER_STRUCT_ARRAY(Every, path, vec2));
}

#endif /* TECS_TEST_EVERY_H */
