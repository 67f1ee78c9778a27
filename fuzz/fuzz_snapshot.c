/*
** fuzz_snapshot — libFuzzer target: the input is a snapshot for
** tecs_snapshot_load_mem. Whatever it holds, the load either succeeds,
** and the world passes tecs_world_check and saves to a snapshot that
** loads again to the same bytes, or fails with a clear code, leaving the
** world with no entity and no resource. Nothing may leak: the world's
** allocator counts its blocks. A component with hooks and a serializer
** (Obj) is registered so that serialized values are read too; the others
** are registered by the load. Seeds: fuzz/corpus/snapshot/.
*/
#include "fuzz_hooks.h"
#include "tinyecs/resource.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tecs_world_t *world(void)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = count_alloc,
                                                              .max_entities = 1 << 20 });
    if (w == NULL)
        abort();
    tecs_comp_t o = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Obj", .size = sizeof(Obj), .align = _Alignof(Obj), .ctor = obj_ctor,
        .dtor = obj_dtor });
    tecs_component_serializer(w, o, &(tecs_serializer_t){ .serialize = obj_save,
                                                          .deserialize = obj_load });
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tecs_world_t *w = world();
    tecs_err_t err = tecs_snapshot_load_mem(w, data, size);
    if (tecs_world_check(w) != TECS_OK)
        abort();
    if (err != TECS_OK) {
        if (err != TECS_EFORMAT && err != TECS_ENOMEM && err != TECS_ELIMIT &&
            err != TECS_EINVAL)
            abort();
        if (tecs_world_entity_count(w) != 0 || tecs_resource_count(w) != 0)
            abort();
    } else {
        tecs_snapshot_buf_t a = { 0 }, b = { 0 };
        if (tecs_snapshot_save_mem(w, &a) != TECS_OK)
            abort();
        tecs_world_t *x = world();
        if (tecs_snapshot_load_mem(x, a.data, a.size) != TECS_OK ||
            tecs_snapshot_save_mem(x, &b) != TECS_OK || a.size != b.size ||
            memcmp(a.data, b.data, a.size) != 0)
            abort();
        tecs_world_free(x);
        tecs_snapshot_buf_free(&a);
        tecs_snapshot_buf_free(&b);
    }
    tecs_world_free(w);
    if (blocks != 0 || live_objs != 0)
        abort();
    return 0;
}
