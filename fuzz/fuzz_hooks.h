/*
** fuzz_hooks.h — what the snapshot and delta targets share: an allocator
** that counts its live blocks, and Obj, a component with hooks whose
** values are counted and saved through a serializer (4 bytes, the host's
** order). Included by one target each: its functions are static.
*/
#ifndef TECS_FUZZ_HOOKS_H
#define TECS_FUZZ_HOOKS_H

#include "tinyecs.h"
#include "tinyecs/snapshot.h"

#include <stdlib.h>
#include <string.h>

typedef struct Obj { uint32_t magic; int32_t value; } Obj;

static long blocks;         /* the allocator's live blocks */

static void *count_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud, (void)osize;
    if (nsize == 0) {
        blocks -= ptr != NULL;
        free(ptr);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    blocks += p != NULL && ptr == NULL;
    return p;
}

static long live_objs;      /* Obj values built and not destroyed */

static void obj_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    for (int32_t i = 0; i < n; i++)
        ((Obj *)dst)[i] = (Obj){ 0x11fe, 0 };
    live_objs += n;
}

static void obj_dtor(void *p, int32_t n, void *ctx)
{
    (void)ctx;
    for (int32_t i = 0; i < n; i++)
        if (((Obj *)p)[i].magic != 0x11fe)
            abort();
    live_objs -= n;
}

static tecs_err_t obj_save(const void *value, tecs_snapshot_out_t *out, void *ctx)
{
    (void)ctx;
    return tecs_snapshot_put(out, &((const Obj *)value)->value, 4);
}

static tecs_err_t obj_load(void *dst, const void *data, size_t n, void *ctx)
{
    (void)ctx;
    if (n != 4)
        return TECS_EINVAL;
    Obj o = { 0x11fe, 0 };
    memcpy(&o.value, data, 4);
    memcpy(dst, &o, sizeof o);
    live_objs++;
    return TECS_OK;
}

#endif /* TECS_FUZZ_HOOKS_H */
