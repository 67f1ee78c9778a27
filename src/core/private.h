/*
** private.h — the one header the library's .c files include: what the
** layers share. Each core layer has its own header (base.h, ...,
** query.h) with its types, its state struct, its interface and its inline
** functions; this file includes them bottom to top, so that a layer's
** declarations see only the layers below it. tecs_world_t, at the end, is
** a composition of the layers' states, as Lua's lstate.h composes
** global_State; the layers' inline bodies follow it, in the same order,
** in a second pass over the same headers (TECS__WORLD_DONE).
**
** Inline functions that need one layer's state only are written against
** that state and sit in the first pass, where the compiler holds them to
** it: the allocator's (the base state is the world's first member,
** tecs__base_of), the entity index's, the registry's and the archetype
** accessors' (a macro of the function's name passes &w->ei, &w->comp or
** &w->arch, so call sites read as before). The second pass holds those
** that span layers: the hole fill, the edges, the engine's quiet moves,
** tecs__settle.
**
** The core's layers, bottom to top (each .c calls only files above it
** in this list; src/LAYERS has every file, the add-ons' too):
**
**     base.c           allocator, error state, callback depths
**     os.c             the platform: a monotonic clock, the thread pool
**     entity_index.c   id slots, generations, FIFO free list
**     meta.c           component descriptions: checked fields, layout hash
**     component.c      the component registry
**     event.c          the listener bus: listen, emit, veto; add-ons plug in
**     archetype.c      archetypes, chunks, edges, rows
**     sparse.c         sparse components' sets, by entity slot
**     store.c          the engine: a structural change performed now
**     command.c        queued and delayed changes, applied via the engine
**     entity.c         the public entity functions: now or queued
**     query.c          queries, iterators
**     check.c          tecs_world_check: verifies every layer
**     world.c          world lifetime: sets up and tears down every layer
** The add-ons (index/, observer/, resource/, system/, snapshot/) sit
** between query.c and check.c, known only by their listeners (event.h).
*/
#ifndef TECS_PRIVATE_H
#define TECS_PRIVATE_H

/* mingw-w64's stdio follows C99 (%zu, %lld) only when asked to, before
** any system header; MSVC's and glibc's always do. */
#if defined(__MINGW32__) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1
#endif

#include "tinyecs.h"
#include "tinyecs/change.h"
/* The add-ons' public types: the registry keeps a component's serializer
** hooks (snapshot.h) and the platform layer runs jobs (system.h). */
#include "tinyecs/handle.h"
#include "tinyecs/index.h"
#include "tinyecs/meta.h"
#include "tinyecs/observer.h"
#include "tinyecs/relation.h"
#include "tinyecs/resource.h"
#include "tinyecs/snapshot.h"
#include "tinyecs/system.h"

#include <assert.h>
#include <string.h>

#if defined(__GNUC__)
#define TECS__LIKELY(x)   __builtin_expect(!!(x), 1)
#define TECS__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TECS__NOINLINE    __attribute__((noinline))
#define TECS__INLINE      inline __attribute__((always_inline))
#if defined(__MINGW32__)
#define TECS__PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#else
#define TECS__PRINTF(a, b) __attribute__((format(printf, a, b)))
#endif
#define TECS__PREFETCH(p) __builtin_prefetch(p)
#define TECS__CTZ(x)      __builtin_ctz(x)
#define TECS__CTZ64(x)    __builtin_ctzll(x)
#define TECS__CLZ64(x)    __builtin_clzll(x)
#define TECS__POP64(x)    tecs__pop64(x)  /* the builtin may be a libgcc call */
#if defined(__clang__) || __GNUC__ >= 8
/* The next loop fully unrolled: n stores become wide stores, where GCC
** would make the loop a block clear (rep stos), slow for a few hundred
** bytes. */
#define TECS__UNROLL(n)   TECS__PRAGMA(GCC unroll n)
#define TECS__PRAGMA(x)   _Pragma(#x)
#else
#define TECS__UNROLL(n)
#endif
#else
#define TECS__UNROLL(n)
#define TECS__CTZ(x)      tecs__ctz(x)
#define TECS__CTZ64(x)    tecs__ctz64(x)
#define TECS__CLZ64(x)    tecs__clz64(x)
#define TECS__POP64(x)    tecs__pop64(x)
#define TECS__PREFETCH(p) ((void)(p))
#define TECS__LIKELY(x)   (x)
#define TECS__UNLIKELY(x) (x)
#define TECS__NOINLINE
#define TECS__INLINE      inline
#define TECS__PRINTF(a, b)
#endif

/* The number of trailing zero bits of x, not 0 (TECS__CTZ without the
** compiler's builtin). */
static inline int tecs__ctz(uint32_t x)
{
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
}

/* The same for 64 bits (x not 0 for the first two): trailing zeros,
** leading zeros, bits set (the last always by hand: without a popcount
** instruction the compiler's builtin calls libgcc, which a Windows DLL
** would then need beside it). */
static inline int tecs__ctz64(uint64_t x)
{
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
}

static inline int tecs__clz64(uint64_t x)
{
    int n = 0;
    while (!(x >> 63)) {
        x <<= 1;
        n++;
    }
    return n;
}

static inline int tecs__pop64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (int)((x * 0x0101010101010101u) >> 56);
}

/* The layers, bottom to top: types, state, interface. */
#include "base.h"
#include "os.h"
#include "entity_index.h"
#include "meta.h"
#include "component.h"
#include "event.h"
#include "archetype.h"
#include "sparse.h"
#include "store.h"
#include "command.h"
#include "query_filter.h"
#include "query.h"

/* The add-ons' states, opaque here: each made when first used. */
struct tecs__indexes;           /* index/                                   */
struct tecs__obs_state;         /* observer/                                */
struct tecs__worker_state;      /* system/worker.c                          */
struct tecs__sys_state;         /* system/system.c                          */
struct tecs__res_state;         /* resource/                                */

/* ==================================================================== */
/* The world: one state per layer, in layer order                       */
/* ==================================================================== */

struct tecs_world_t {
    tecs__base base;            /* base.c                                   */
    tecs__ei_state ei;          /* entity_index.c                           */
    tecs__comp_state comp;      /* component.c                              */
    tecs__bus bus;              /* event.c                                  */
    tecs__arch_state arch;      /* archetype.c                              */
    tecs__sparse_state sparse;  /* sparse.c                                 */
    tecs__store_state store;    /* store.c                                  */
    tecs__cmd_state cmd;        /* command.c                                */
    tecs__query_state query;    /* query.c                                  */
    struct tecs__indexes *indexes;      /* index/: NULL until first used     */
    struct tecs__obs_state *obs;        /* observer/: NULL until first used  */
    struct tecs__worker_state *workers; /* system/worker.c: likewise         */
    struct tecs__sys_state *sys;        /* system/system.c: likewise         */
    struct tecs__res_state *res;        /* resource/: likewise               */
    struct tecs__rel_state *rel;        /* relation/: likewise               */
};

_Static_assert(offsetof(tecs_world_t, base) == 0, "tecs__base_of: the base state comes first");

/* The layers' inline functions, in the same order, now that the world is
** complete. */
#define TECS__WORLD_DONE
#include "base.h"
#include "os.h"
#include "entity_index.h"
#include "meta.h"
#include "component.h"
#include "event.h"
#include "archetype.h"
#include "sparse.h"
#include "store.h"
#include "command.h"
#include "query.h"

#endif /* TECS_PRIVATE_H */
