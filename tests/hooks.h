/*
** hooks.h — a component with lifecycle hooks that count and verify.
**
** An Obj carries a magic word: LIVE once constructed, DEAD once destroyed or
** moved from. Every hook checks the state it is handed and counts a misuse in
** `bad` (destroying raw memory, copying from a dead value, ...). The number
** of live values is ctor + copy-constructions - dtor, so a test can compare
** it with the entities that should hold one.
*/
#ifndef TECS_TEST_HOOKS_H
#define TECS_TEST_HOOKS_H

#include "test.h"

#define OBJ_LIVE 0x11feu
#define OBJ_DEAD 0xdeadu
#define OBJ_DEFAULT 7       /* the value a constructor gives */

typedef struct Obj { uint32_t magic; int32_t value; } Obj;

typedef struct hook_counts {
    long ctor, dtor, copy, move;  /* values handled by each hook       */
    long calls;                   /* hook calls of any kind            */
    long bad;                     /* misuses seen                      */
} hook_counts;

static inline long hooks_live(const hook_counts *h)
{
    return h->ctor - h->dtor;
}

static inline void obj_ctor(void *dst, int32_t n, void *ctx)
{
    hook_counts *h = ctx;
    Obj *o = dst;
    for (int32_t i = 0; i < n; i++)
        o[i] = (Obj){ OBJ_LIVE, OBJ_DEFAULT };
    h->ctor += n;
    h->calls++;
}

static inline void obj_dtor(void *ptr, int32_t n, void *ctx)
{
    hook_counts *h = ctx;
    Obj *o = ptr;
    for (int32_t i = 0; i < n; i++) {
        h->bad += o[i].magic != OBJ_LIVE;
        o[i].magic = OBJ_DEAD;
    }
    h->dtor += n;
    h->calls++;
}

static inline void obj_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    hook_counts *h = ctx;
    Obj *d = dst;
    const Obj *s = src;
    for (int32_t i = 0; i < n; i++) {
        h->bad += d[i].magic != OBJ_LIVE || s[i].magic != OBJ_LIVE;
        d[i].value = s[i].value;
    }
    h->copy += n;
    h->calls++;
}

static inline void obj_move(void *dst, void *src, int32_t n, void *ctx)
{
    hook_counts *h = ctx;
    Obj *d = dst, *s = src;
    for (int32_t i = 0; i < n; i++) {
        h->bad += s[i].magic != OBJ_LIVE;
        d[i] = s[i];
        s[i].magic = OBJ_DEAD;
    }
    h->move += n;
    h->calls++;
}

/* Register Obj under name with the counting hooks. */
static inline tecs_comp_t obj_component(tecs_world_t *w, const char *name, hook_counts *h)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = sizeof(Obj), .align = _Alignof(Obj),
        .ctor = obj_ctor, .dtor = obj_dtor, .copy = obj_copy, .move = obj_move,
        .hook_ctx = h });
}

static inline Obj obj(int32_t value)
{
    return (Obj){ OBJ_LIVE, value };
}

#endif
