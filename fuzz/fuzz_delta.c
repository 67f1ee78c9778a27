/*
** fuzz_delta — libFuzzer target: the input is a delta for
** tecs_delta_apply_mem, applied to a mirror loaded from a fixed base (the
** world base_world builds, saved with a mark). Whatever the input holds,
** the apply either succeeds, and the mirror passes tecs_world_check and
** saves to a snapshot that loads again, or fails with a clear code,
** leaving the mirror as it was or empty, and passing the check; then
** the source refuses marks it did not take (marks). Nothing
** may leak: the world's allocator counts its blocks and Obj counts its
** values. Seeds: fuzz/corpus/delta/, deltas of this base, written by
**
**     cc -DFUZZ_DELTA_SEEDS -Iinclude fuzz/fuzz_delta.c build/libtinyecs.a \
**        -lpthread -lm -o /tmp/seeds && /tmp/seeds fuzz/corpus/delta
*/
#include "fuzz_hooks.h"

#include <stdio.h>
#include "tinyecs/resource.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Vec { float x, y; } Vec;

typedef struct comps { tecs_comp_t pos, vel, tag, vis, stun, obj, clock; } comps;

/* A world with the base's components (rows per chunk: small, so that
** runs of rows cross chunks). */
static tecs_world_t *world(comps *c, int32_t rows)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = count_alloc,
                                                              .max_entities = 1 << 16,
                                                              .rows_per_chunk = rows });
    if (w == NULL)
        abort();
    c->pos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Pos",
                                .size = sizeof(Vec), .align = _Alignof(Vec) });
    c->vel = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Vel",
                                .size = sizeof(Vec), .align = _Alignof(Vec) });
    c->tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Tag" });
    c->vis = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Vis",
                                .size = 4, .align = 4, .enableable = true });
    c->stun = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Stun",
                                 .size = 4, .align = 4, .storage = TECS_STORAGE_SPARSE });
    c->obj = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Obj",
                                .size = sizeof(Obj), .align = _Alignof(Obj), .ctor = obj_ctor,
                                .dtor = obj_dtor });
    tecs_component_serializer(w, c->obj, &(tecs_serializer_t){ .serialize = obj_save,
                                                               .deserialize = obj_load });
    c->clock = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Clock",
                                  .size = 4, .align = 4 });
    return w;
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* n changes of every kind, from seed. */
static void churn(tecs_world_t *w, const comps *c, uint64_t *seed, int n)
{
    tecs_entity_t e[256];
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    int ne = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, e, 256);
    tecs_query_free(q);
    for (int i = 0; i < n; i++) {
        tecs_entity_t x = ne ? e[rnd(seed) % (uint32_t)ne] : 0;
        bool alive = x && tecs_is_alive(w, x);
        Vec v = { (float)(rnd(seed) % 100), 1 };
        int32_t k = (int32_t)(rnd(seed) % 100);
        switch (rnd(seed) % 10) {
        case 0: case 1:
            if (ne < 256)
                e[ne++] = tecs_new(w);
            break;
        case 2:
            if (alive)
                tecs_destroy(w, x);
            break;
        case 3:
            if (alive)
                tecs_set(w, x, rnd(seed) % 2 ? c->pos : c->vel, &v);
            break;
        case 4:
            if (alive)
                tecs_remove(w, x, rnd(seed) % 2 ? c->pos : c->tag);
            break;
        case 5:
            if (alive)
                tecs_add(w, x, c->tag);
            break;
        case 6:
            if (alive && tecs_has(w, x, c->vis))
                tecs_enable(w, x, c->vis, rnd(seed) % 2);
            else if (alive)
                tecs_set(w, x, c->vis, &k);
            break;
        case 7:
            if (alive)
                rnd(seed) % 2 ? (void)tecs_set(w, x, c->stun, &k) : (void)tecs_remove(w, x, c->stun);
            break;
        case 8:
            if (alive)
                tecs_set(w, x, c->obj, &(Obj){ 0x11fe, k });
            break;
        default:
            tecs_resource_set(w, c->clock, &k);
            break;
        }
    }
}

/* The source world and its mark, after the base was saved. */
static tecs_world_t *source;
static comps src_c;
static tecs_mark_t mark;
static tecs_snapshot_buf_t base;

static void make_base(void)
{
    uint64_t seed = 5;
    source = world(&src_c, 16);
    churn(source, &src_c, &seed, 120);
    if (tecs_world_mark(source, &mark) != TECS_OK ||
        tecs_snapshot_save_mem(source, &base) != TECS_OK)
        abort();
}

/* Do two worlds save the same snapshot? */
static bool same_snapshot(tecs_world_t *a, tecs_world_t *b)
{
    tecs_snapshot_buf_t x = { 0 }, y = { 0 };
    bool same = tecs_snapshot_save_mem(a, &x) == TECS_OK &&
                tecs_snapshot_save_mem(b, &y) == TECS_OK && x.size == y.size &&
                memcmp(x.data, y.data, x.size) == 0;
    tecs_snapshot_buf_free(&x);
    tecs_snapshot_buf_free(&y);
    return same;
}

/* Marks the source did not take, one kind an input (by its size): the
** mirror's, a zeroed one, the input's bytes as a forged mark; each is
** refused (TECS_EINVAL) and leaves the source's mark as it was. Or a mark
** of w taken before a reset of w: its delta, applied to w's state at the
** mark, gives w. */
static void marks(tecs_world_t *w, const comps *c, const uint8_t *data, size_t size)
{
    tecs_mark_t m, keep = mark;
    tecs_snapshot_buf_t d = { 0 };
    memset(&m, 0, sizeof m);
    switch (size % 5) {
    case 1:
        if (tecs_world_mark(w, &m) != TECS_OK)
            abort();
        break;
    case 2:
        break;
    case 3:
        memcpy(&m, data, size < sizeof m ? size : sizeof m);
        break;
    case 4: {
        uint64_t seed = size;
        tecs_snapshot_buf_t at = { 0 };
        if (tecs_world_mark(w, &m) != TECS_OK || tecs_snapshot_save_mem(w, &at) != TECS_OK)
            abort();
        churn(w, c, &seed, 20);
        if (tecs_world_reset(w) != TECS_OK)
            abort();
        churn(w, c, &seed, 30);
        comps xc;
        tecs_world_t *x = world(&xc, 16);
        if (tecs_delta_save_mem(w, &m, &d) != TECS_OK ||
            tecs_snapshot_load_mem(x, at.data, at.size) != TECS_OK ||
            tecs_delta_apply_mem(x, d.data, d.size) != TECS_OK || !same_snapshot(w, x))
            abort();
        tecs_world_free(x);
        tecs_snapshot_buf_free(&at);
        tecs_snapshot_buf_free(&d);
        return;
    }
    default:
        return;
    }
    if (tecs_delta_save_mem(source, &m, &d) != TECS_EINVAL || d.size != 0 ||
        memcmp(&keep, &mark, sizeof mark) != 0)
        abort();
    tecs_snapshot_buf_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (source == NULL)
        make_base();
    long blocks_before = blocks, objs_before = live_objs;
    comps c;
    tecs_world_t *w = world(&c, 64);
    if (tecs_snapshot_load_mem(w, base.data, base.size) != TECS_OK)
        abort();
    int32_t n = tecs_world_entity_count(w);
    tecs_err_t err = tecs_delta_apply_mem(w, data, size);
    if (tecs_world_check(w) != TECS_OK)
        abort();
    if (err != TECS_OK) {
        if (err != TECS_EFORMAT && err != TECS_ENOMEM && err != TECS_ELIMIT &&
            err != TECS_EINVAL)
            abort();
        if (tecs_world_entity_count(w) != n &&
            (tecs_world_entity_count(w) != 0 || tecs_resource_count(w) != 0))
            abort();
    } else {
        tecs_snapshot_buf_t a = { 0 };
        comps xc;
        tecs_world_t *x = world(&xc, 16);
        if (tecs_snapshot_save_mem(w, &a) != TECS_OK ||
            tecs_snapshot_load_mem(x, a.data, a.size) != TECS_OK)
            abort();
        tecs_world_free(x);
        tecs_snapshot_buf_free(&a);
    }
    marks(w, &c, data, size);
    tecs_world_free(w);
    if (blocks != blocks_before || live_objs != objs_before)
        abort();
    return 0;
}

#ifdef FUZZ_DELTA_SEEDS
/* Write deltas of the base to DIR: each after another churn, the first
** with no change at all. */
int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    make_base();
    uint64_t seed = 9;
    for (int i = 0; i < 6; i++) {
        tecs_mark_t m = mark;
        tecs_snapshot_buf_t d = { 0 };
        churn(source, &src_c, &seed, i * 40);
        if (i == 5)
            tecs_world_reset(source);
        if (tecs_delta_save_mem(source, &m, &d) != TECS_OK)
            return 1;
        if (LLVMFuzzerTestOneInput(d.data, d.size) != 0)
            return 1;
        char path[512];
        snprintf(path, sizeof path, "%s/delta-%d", argv[1], i);
        FILE *f = fopen(path, "wb");
        if (f == NULL || fwrite(d.data, 1, d.size, f) != d.size || fclose(f) != 0)
            return 1;
        tecs_snapshot_buf_free(&d);
    }
    return 0;
}
#endif
