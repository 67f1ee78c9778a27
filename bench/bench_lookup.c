/*
** bench_lookup.c — the lookup rows: one component of entities met in a
** random order, by id. All three read the same world (random_get_world:
** 1,000,000 entities made in bulk, ids shuffled) and sum Position.x:
**
**     random_get       a lookup handle, tecs_handle_get inlined in the loop
**     random_get_many  tecs_get_many on batches of BATCH ids, then the sum
**     random_get_call  tecs_get, the checked call
*/
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

/* Ids per tecs_get_many call: their values still in cache when read. */
#define BATCH 256

/* The sum of x over every Position looked up must be that of 0 .. n-1. */
static void check_sum(double s, int64_t miss, int64_t n)
{
    CHECK(miss == 0, "%lld lookups failed", (long long)miss);
    CHECK(s == (double)n * (double)(n - 1) / 2, "sum of x %.0f", s);
}

double sc_random_get(int64_t n)
{
    tecs_comp_t pos;
    tecs_entity_t *ids;
    tecs_world_t *w = random_get_world(n, &pos, &ids);
    tecs_handle_t h;
    tecs_err_t err = tecs_handle_init(w, pos, &h);
    CHECK(err == TECS_OK, "tecs_handle_init: %s", tecs_strerror(err));
    double s = 0;
    int64_t miss = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_HANDLE_GET(&h, ids[i], Position);
        if (p)
            s += p->x;
        else
            miss++;
    }
    double t = (now_ns() - t0) / (double)n;
    check_sum(s, miss, n);
    tecs_world_free(w);
    free(ids);
    return t;
}

double sc_random_get_many(int64_t n)
{
    tecs_comp_t pos;
    tecs_entity_t *ids;
    tecs_world_t *w = random_get_world(n, &pos, &ids);
    const void *out[BATCH];
    double s = 0;
    int64_t miss = 0, errs = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i += BATCH) {
        int32_t k = n - i < BATCH ? (int32_t)(n - i) : BATCH;
        errs += tecs_get_many(w, pos, ids + i, k, out) != TECS_OK;
        for (int32_t j = 0; j < k; j++) {
            const Position *p = out[j];
            if (p)
                s += p->x;
            else
                miss++;
        }
    }
    double t = (now_ns() - t0) / (double)n;
    CHECK(errs == 0, "%lld failed calls", (long long)errs);
    check_sum(s, miss, n);
    tecs_world_free(w);
    free(ids);
    return t;
}

double sc_random_get_call(int64_t n)
{
    tecs_comp_t pos;
    tecs_entity_t *ids;
    tecs_world_t *w = random_get_world(n, &pos, &ids);
    double s = 0;
    int64_t miss = 0;
    double t0 = now_ns();
    for (int64_t i = 0; i < n; i++) {
        const Position *p = TECS_GET(w, ids[i], pos, Position);
        if (p)
            s += p->x;
        else
            miss++;
    }
    double t = (now_ns() - t0) / (double)n;
    check_sum(s, miss, n);
    tecs_world_free(w);
    free(ids);
    return t;
}
