/*
** test.h — the tiny test harness. A case is `TEST(suite_case) { ... }` in a
** tests/test_*.c file; CMake finds it and registers it with CTest, so each
** case can run alone: `tinyecs_tests suite_case`.
**
** Each case makes its worlds with tw_new(), which counts every block through
** the allocator hooks and can make the k-th allocation fail; tw_free() frees
** the world and fails the case if any block is left.
*/
#ifndef TECS_TEST_H
#define TECS_TEST_H

#include "tinyecs.h"
#include "tinyecs/change.h"
#include "tinyecs/handle.h"
#include "tinyecs/index.h"
#include "tinyecs/meta.h"
#include "tinyecs/observer.h"
#include "tinyecs/relation.h"
#include "tinyecs/resource.h"
#include "tinyecs/snapshot.h"
#include "tinyecs/system.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST(name) void test_##name(void)

void test_fail(const char *file, int line, const char *expr);

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond))                                                        \
            test_fail(__FILE__, __LINE__, #cond);                           \
    } while (0)

#define CHECK_EQ(a, b)                                                      \
    do {                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                 \
        if (a_ != b_) {                                                     \
            fprintf(stderr, "  %s = %lld, %s = %lld\n", #a, a_, #b, b_);    \
            test_fail(__FILE__, __LINE__, #a " == " #b);                    \
        }                                                                   \
    } while (0)

#define CHECK_ERR(call, code) CHECK_EQ((call), (code))

/* The counting allocator. A world's workers call it from several threads
** at once, so its fields are atomic: tests read and set them as plain
** fields (each access is one atomic load or store), while no worker runs. */
typedef struct tw_alloc {
    _Atomic long blocks;        /* live blocks                              */
    _Atomic size_t bytes;       /* live bytes                               */
    _Atomic long calls;         /* allocations and reallocations so far     */
    _Atomic long fail_at;       /* fail the call with this number (1-based) */
    _Atomic long failures;      /* how many were failed                     */
    _Atomic bool fail_after;    /* fail every call from fail_at on          */
} tw_alloc;

void *tw_alloc_fn(void *ud, void *ptr, size_t osize, size_t nsize);

/* A world on a counting allocator (rows per chunk 0 = default). */
tecs_world_t *tw_new_ex(tw_alloc *a, int32_t rows);
tecs_world_t *tw_new(void);
/* Free a world made by tw_new and check that nothing leaked. */
void tw_free(tecs_world_t *w);
/* An allocator hook whose new bytes are never zero: what a world reads
** before it writes shows (no counting, no failures). */
void *tw_dirty_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* A snapshot's checksum of n bytes at p, computed as docs/SNAPSHOT.md
** states it (section "Checksum"), apart from the library's code. */
uint64_t tw_doc_sum(const unsigned char *p, size_t n);
/* Structure check, failing the case on corruption. */
#define TW_CHECK(w)                                                         \
    do {                                                                    \
        if (tecs_world_check(w) != TECS_OK) {                               \
            fprintf(stderr, "  %s\n", tecs_last_error_msg(w));              \
            test_fail(__FILE__, __LINE__, "tecs_world_check");              \
        }                                                                   \
    } while (0)

/* A copy of s (NULL for NULL) counted in *live; tw_str_free gives it
** back. For the hooks of test components that own strings. */
static inline char *tw_str_dup(const char *s, long *live)
{
    if (s == NULL)
        return NULL;
    char *d = malloc(strlen(s) + 1);
    if (d == NULL)
        abort();
    strcpy(d, s);
    ++*live;
    return d;
}

static inline void tw_str_free(char *s, long *live)
{
    *live -= s != NULL;
    free(s);
}

/* A small deterministic random generator for tests. */
static inline uint64_t tw_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A float in [lo, hi) from tw_rand, in steps of (hi - lo) / 100000. */
static inline float tw_frand(uint64_t *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)(tw_rand(s) % 100000) / 100000.0f;
}

/* a[0..n) the numbers 0..n-1 in an order shuffled by tw_rand. */
static inline void tw_permutation(int *a, int n, uint64_t *s)
{
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tw_rand(s) % (uint64_t)(i + 1)), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Health { int hp; } Health;

/* A heap-owning component: each value holds its own copy of a string, so a
** lost or doubled move or copy shows up as a leak or a double free under the
** sanitizers. Its hooks count the live strings in the int that hook_ctx
** points to. */
typedef struct Text { char *s; } Text;

static inline void text_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Text));
}

static inline void text_dtor(void *p, int32_t n, void *ctx)
{
    int *live = ctx;
    Text *v = p;
    for (int32_t i = 0; i < n; i++)
        if (v[i].s) {
            free(v[i].s);
            --*live;
        }
}

static inline void text_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    text_dtor(dst, n, ctx);
    Text *d = dst;
    const Text *s = src;
    for (int32_t i = 0; i < n; i++) {
        d[i].s = s[i].s ? malloc(strlen(s[i].s) + 1) : NULL;
        if (d[i].s) {
            strcpy(d[i].s, s[i].s);
            ++*(int *)ctx;
        }
    }
}

/* Register Text ("Name") with its hooks; *live counts its strings. */
static inline tecs_comp_t text_component(tecs_world_t *w, int *live)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Name", .size = sizeof(Text), .align = _Alignof(Text),
        .ctor = text_ctor, .dtor = text_dtor, .copy = text_copy, .hook_ctx = live });
}

#endif
