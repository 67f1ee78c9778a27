/*
** bench_snap.c — snapshots: save and load of 1,000,000 entities with
** Position and Velocity to and from memory, beside memcpy of the same
** bytes (snap_memcpy), the limit they are measured against (each within
** 2x of it); and a delta of the same world after 1% of its Positions
** changed (delta_save, delta_apply), per changed entity.
*/
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include "tinyecs/snapshot.h"

/* A world of n entities with Position (i, i) and Velocity (1, 1). */
static tecs_world_t *snap_world(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    Position *p = xmalloc((size_t)n * sizeof *p);
    Velocity *v = xmalloc((size_t)n * sizeof *v);
    fill_values(p, v, n);
    tecs_err_t err = tecs_new_bulk(w, a, (int32_t)n, NULL, 2,
                                   (tecs_value_t[]){ { pos, p }, { vel, v } });
    CHECK(err == TECS_OK, "tecs_new_bulk: %s", tecs_strerror(err));
    free(p);
    free(v);
    return w;
}

/* save: tecs_snapshot_save_mem into a buffer already grown by an untimed
** save; ns per entity. */
double sc_save(int64_t n)
{
    tecs_world_t *w = snap_world(n);
    tecs_snapshot_buf_t buf = { 0 };
    tecs_err_t err = tecs_snapshot_save_mem(w, &buf);
    double t0 = now_ns();
    err |= tecs_snapshot_save_mem(w, &buf);
    double t = (now_ns() - t0) / (double)n;
    CHECK(err == TECS_OK, "save: %s", tecs_last_error_msg(w));
    CHECK(buf.size > (size_t)n * 20, "%zu bytes", buf.size);
    tecs_snapshot_buf_free(&buf);
    tecs_world_free(w);
    return t;
}

/* load: tecs_snapshot_load_mem into a fresh world; ns per entity. Under
** make bench (warm heap) its chunks and records reuse the freed world's
** pages, as snap_memcpy's buffer is touched before: neither takes a page
** fault in the timed part. */
double sc_load(int64_t n)
{
    tecs_world_t *w = snap_world(n);
    tecs_snapshot_buf_t buf = { 0 };
    tecs_err_t err = tecs_snapshot_save_mem(w, &buf);
    CHECK(err == TECS_OK, "save: %s", tecs_last_error_msg(w));
    tecs_world_free(w);
    w = tecs_world_new();
    double t0 = now_ns();
    err = tecs_snapshot_load_mem(w, buf.data, buf.size);
    double t = (now_ns() - t0) / (double)n;
    CHECK(err == TECS_OK, "load: %s", tecs_last_error_msg(w));
    CHECK(tecs_world_entity_count(w) == n, "%d loaded", tecs_world_entity_count(w));
    tecs_snapshot_buf_free(&buf);
    tecs_world_free(w);
    return t;
}

/* snap_memcpy: memcpy of a snapshot's bytes (n entities) into a buffer
** touched once before; ns per entity. */
double sc_snap_memcpy(int64_t n)
{
    tecs_world_t *w = snap_world(n);
    tecs_snapshot_buf_t buf = { 0 };
    tecs_err_t err = tecs_snapshot_save_mem(w, &buf);
    CHECK(err == TECS_OK, "save: %s", tecs_last_error_msg(w));
    tecs_world_free(w);
    unsigned char *dst = xmalloc(buf.size);
    memset(dst, 1, buf.size);
    double t0 = now_ns();
    memcpy(dst, buf.data, buf.size);
    double t = (now_ns() - t0) / (double)n;
    CHECK(memcmp(dst, buf.data, 64) == 0 && dst[buf.size - 1] == buf.data[buf.size - 1], "copy");
    free(dst);
    tecs_snapshot_buf_free(&buf);
    return t;
}

/* The same world with a mark and a mirror loaded from its base, then
** n / 100 Positions set (the same random entities each time); *out holds
** the delta since the mark. */
static tecs_world_t *delta_world(int64_t n, tecs_world_t **mirror, tecs_snapshot_buf_t *out)
{
    tecs_world_t *w = snap_world(n);
    tecs_snapshot_buf_t base = { 0 };
    tecs_mark_t m;
    tecs_err_t err = tecs_world_mark(w, &m);
    err |= tecs_snapshot_save_mem(w, &base);
    *mirror = tecs_world_new();
    err |= tecs_snapshot_load_mem(*mirror, base.data, base.size);
    CHECK(err == TECS_OK, "base: %s", tecs_last_error_msg(w));
    tecs_snapshot_buf_free(&base);
    tecs_comp_t pos = tecs_component_lookup(w, "Position");
    uint64_t seed = 42;
    for (int64_t i = 0; i < n / 100; i++) {
        tecs_entity_t e = ((uint64_t)1 << 32) | (uint32_t)(rng_next(&seed) % (uint64_t)n);
        tecs_set(w, e, pos, &(Position){ (float)i, 0 });
    }
    err = tecs_delta_save_mem(w, &m, out);
    CHECK(err == TECS_OK, "delta: %s", tecs_last_error_msg(w));
    return w;
}

/* delta_save: a delta of 1% changed Positions (from a world that saved
** one before, so its buffer is grown); ns per changed entity. */
double sc_delta_save(int64_t n)
{
    tecs_world_t *mirror;
    tecs_snapshot_buf_t buf = { 0 };
    tecs_world_t *w = delta_world(n, &mirror, &buf);
    tecs_mark_t m;
    tecs_world_mark(w, &m);
    tecs_comp_t pos = tecs_component_lookup(w, "Position");
    uint64_t seed = 42;
    for (int64_t i = 0; i < n / 100; i++) {
        tecs_entity_t e = ((uint64_t)1 << 32) | (uint32_t)(rng_next(&seed) % (uint64_t)n);
        tecs_set(w, e, pos, &(Position){ (float)-i, 0 });
    }
    double t0 = now_ns();
    tecs_err_t err = tecs_delta_save_mem(w, &m, &buf);
    double t = (now_ns() - t0) / (double)(n / 100);
    CHECK(err == TECS_OK, "delta: %s", tecs_last_error_msg(w));
    tecs_snapshot_buf_free(&buf);
    tecs_world_free(mirror);
    tecs_world_free(w);
    return t;
}

/* delta_apply: that delta applied to the mirror; ns per changed entity. */
double sc_delta_apply(int64_t n)
{
    tecs_world_t *mirror;
    tecs_snapshot_buf_t buf = { 0 };
    tecs_world_t *w = delta_world(n, &mirror, &buf);
    double t0 = now_ns();
    tecs_err_t err = tecs_delta_apply_mem(mirror, buf.data, buf.size);
    double t = (now_ns() - t0) / (double)(n / 100);
    CHECK(err == TECS_OK, "apply: %s", tecs_last_error_msg(mirror));
    CHECK(tecs_world_entity_count(mirror) == n, "%d entities", tecs_world_entity_count(mirror));
    tecs_snapshot_buf_free(&buf);
    tecs_world_free(mirror);
    tecs_world_free(w);
    return t;
}
