/* The harness: counting allocator, worlds with leak checks, failure report. */
#include "test.h"

void test_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    exit(1);
}

/* Safe on several threads at once: each counter moves by one atomic step,
** and the number of a call is the one its own increment gave. */
void *tw_alloc_fn(void *ud, void *ptr, size_t osize, size_t nsize)
{
    tw_alloc *a = ud;
    if (nsize == 0) {
        if (ptr) {
            atomic_fetch_sub(&a->blocks, 1);
            atomic_fetch_sub(&a->bytes, osize);
            free(ptr);
        }
        return NULL;
    }
    long n = atomic_fetch_add(&a->calls, 1) + 1;
    long at = atomic_load(&a->fail_at);
    if (at > 0 && (n == at || (atomic_load(&a->fail_after) && n > at))) {
        atomic_fetch_add(&a->failures, 1);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p == NULL)
        return NULL;
    if (ptr == NULL)
        atomic_fetch_add(&a->blocks, 1);
    if (ptr == NULL || nsize >= osize)
        atomic_fetch_add(&a->bytes, nsize - (ptr ? osize : 0));
    else
        atomic_fetch_sub(&a->bytes, osize - nsize);
    return p;
}

/* World -> its allocator, for tw_free (tests make few worlds at once). */
static struct { tecs_world_t *w; tw_alloc *a; bool owned; } worlds[64];

tecs_world_t *tw_new_ex(tw_alloc *a, int32_t rows)
{
    bool owned = a == NULL;
    if (owned) {
        a = calloc(1, sizeof *a);
        if (a == NULL)
            test_fail(__FILE__, __LINE__, "calloc");
    }
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){
        .alloc = tw_alloc_fn, .alloc_ud = a, .rows_per_chunk = rows });
    if (w == NULL) {
        if (owned)
            free(a);
        return NULL;
    }
    for (int i = 0; i < 64; i++) {
        if (worlds[i].w == NULL) {
            worlds[i].w = w;
            worlds[i].a = a;
            worlds[i].owned = owned;
            return w;
        }
    }
    test_fail(__FILE__, __LINE__, "too many test worlds");
    return NULL;
}

tecs_world_t *tw_new(void)
{
    tecs_world_t *w = tw_new_ex(NULL, 0);
    if (w == NULL)
        test_fail(__FILE__, __LINE__, "tw_new");
    return w;
}

void tw_free(tecs_world_t *w)
{
    for (int i = 0; i < 64; i++) {
        if (worlds[i].w != w)
            continue;
        tw_alloc *a = worlds[i].a;
        tecs_world_free(w);
        worlds[i].w = NULL;
        if (a->blocks != 0 || a->bytes != 0) {
            fprintf(stderr, "  leak: %ld blocks, %zu bytes\n", (long)a->blocks, (size_t)a->bytes);
            test_fail(__FILE__, __LINE__, "no leak");
        }
        if (worlds[i].owned)
            free(a);
        return;
    }
    test_fail(__FILE__, __LINE__, "tw_free of an unknown world");
}

/* The checksum as docs/SNAPSHOT.md states it (section "Checksum"). */
uint64_t tw_doc_sum(const unsigned char *p, size_t n)
{
    uint64_t a[4], b[4];
    for (int k = 0; k < 4; k++)
        a[k] = b[k] = (uint64_t)k + 1;
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w = 0;
            for (int j = 7; j >= 0; j--)
                w = w << 8 | p[i + 8 * (size_t)k + (size_t)j];
            a[k] += w;
            b[k] += a[k];
        }
    for (; i < n; i++) {
        a[0] += p[i] + 1u;
        b[0] += a[0];
    }
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    const uint64_t v[8] = { a[0], b[0], a[1], b[1], a[2], b[2], a[3], b[3] };
    for (int k = 0; k < 8; k++) {
        h = (h ^ v[k]) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

void *tw_dirty_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    unsigned char *p = realloc(ptr, nsize);
    if (p && nsize > osize)
        memset(p + (ptr ? osize : 0), 0x5a, nsize - (ptr ? osize : 0));
    return p;
}
