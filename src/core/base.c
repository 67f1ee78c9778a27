/*
** base.c — the world's allocator and its error state: the bottom layer
** of the world's state (os.c, below it, holds none), which every other
** layer calls and which calls none.
**
** Every block tinyecs holds comes from the world's allocator, a function in
** the form of Lua's lua_Alloc:
**
**     alloc(ud, ptr, osize, nsize)
**         nsize == 0   free ptr (osize bytes), return NULL
**         otherwise    (re)allocate to nsize bytes, NULL on failure
**
** The world counts the bytes it holds (`mem`), so a leak shows as a non-zero
** count when the last block should have gone, and a benchmark can read the
** memory per entity. Chunks want 64-byte alignment, which the hook does not
** promise: tecs__alloc_aligned over-allocates and rounds up.
**
** Errors: every public call that can fail starts with tecs__enter, which
** refuses the call on a closed world and otherwise sets the last error to
** TECS_OK; a failing call then records its code and a message on the world
** (tecs__err) and returns the code. So the last error always describes the
** latest such call, and "nothing found" reads apart from "failed".
**
** While the allocator runs, the world is closed (TECS__IN_ALLOC): a call
** from inside it is refused, since the structure asking for memory is half
** changed.
*/
#include "private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void *tecs__default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

void *tecs__alloc(tecs_world_t *w, size_t size)
{
    return tecs__realloc(w, NULL, 0, size);
}

/* Call the user's allocator. While it runs the world is closed, so a call
** from inside it is refused (tecs__enter); the previous state comes back
** after, so a nested allocation inside a refused call cannot reopen it. */
static void *call_alloc(tecs_world_t *w, void *p, size_t osize, size_t nsize)
{
    uint8_t closed = w->base.closed;
    tecs__set_closed(w, TECS__IN_ALLOC);
    void *q = w->base.alloc(w->base.alloc_ud, p, osize, nsize);
    tecs__set_closed(w, closed);
    return q;
}

void *tecs__realloc(tecs_world_t *w, void *p, size_t osize, size_t nsize)
{
    if (nsize == 0) {
        tecs__free(w, p, osize);
        return NULL;
    }
    if (nsize > PTRDIFF_MAX)    /* no object is larger; SIZE_MAX from tecs__bytes */
        return NULL;
    void *q = call_alloc(w, p, p ? osize : 0, nsize);
    if (q != NULL)
        w->base.mem += nsize - (p ? osize : 0);
    return q;
}

void tecs__free(tecs_world_t *w, void *p, size_t size)
{
    if (p == NULL)
        return;
    call_alloc(w, p, size, 0);
    w->base.mem -= size;
}

tecs_err_t tecs__grow(tecs_world_t *w, void **arr, int32_t *cap, int32_t need, size_t esize)
{
    if (need <= *cap)
        return TECS_OK;
    int64_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap *= 2;
    if (ncap > INT32_MAX)
        ncap = INT32_MAX;
    void *p = tecs__realloc(w, *arr, (size_t)*cap * esize, tecs__bytes((uint64_t)ncap, esize));
    if (p == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory growing an array to %d", need);
    *arr = p;
    *cap = (int32_t)ncap;
    return TECS_OK;
}

void *tecs__alloc_aligned(tecs_world_t *w, size_t size, void **raw)
{
    *raw = size > PTRDIFF_MAX ? NULL : tecs__alloc(w, size + TECS_MAX_ALIGN - 1);
    if (*raw == NULL)
        return NULL;
    uintptr_t p = ((uintptr_t)*raw + TECS_MAX_ALIGN - 1) & ~(uintptr_t)(TECS_MAX_ALIGN - 1);
    return (void *)p;
}

void tecs__free_aligned(tecs_world_t *w, void *raw, size_t size)
{
    tecs__free(w, raw, size + TECS_MAX_ALIGN - 1);
}

/* ---- errors ---------------------------------------------------------- */

static const char *const err_msgs[] = {
#define TECS__ERR_MSG(name, msg) msg,
    TECS_ERRNO_MAP(TECS__ERR_MSG)
#undef TECS__ERR_MSG
};

static const char *const err_names[] = {
#define TECS__ERR_NAME(name, msg) "TECS_" #name,
    TECS_ERRNO_MAP(TECS__ERR_NAME)
#undef TECS__ERR_NAME
};

const char *tecs_strerror(tecs_err_t err)
{
    if ((unsigned)err >= TECS_ERR_COUNT)
        return "unknown error";
    return err_msgs[err];
}

const char *tecs_err_name(tecs_err_t err)
{
    if ((unsigned)err >= TECS_ERR_COUNT)
        return "TECS_UNKNOWN";
    return err_names[err];
}

tecs_err_t tecs__err(tecs_world_t *w, tecs_err_t err, const char *fmt, ...)
{
    w->base.err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->base.errmsg, sizeof w->base.errmsg, fmt, ap);
    va_end(ap);
    return err;
}

void tecs__err_reset(tecs_world_t *w, tecs_err_t err)
{
    if (err == TECS_OK)
        w->base.err = TECS_OK;
    else
        tecs__err(w, err, "%s", tecs_strerror(err));
}

tecs_err_t tecs__refuse_closed(tecs_world_t *w)
{
    switch (w->base.closed) {
    case TECS__PARALLEL:
        return TECS_EBUSY;          /* the workers read w: nothing is written */
    case TECS__WORKER:
        return tecs__err(w, TECS_EBUSY, "not allowed from a worker: a worker reads, writes "
                         "its own rows and queues add / remove / set / destroy / modified");
    case TECS__RETIRED:
        return tecs__err(w, TECS_EBUSY, "a worker context is used after its run (it->world "
                         "of a worker is valid in its callback only)");
    case TECS__FREEING:
        return tecs__err(w, TECS_EBUSY, "the world is being freed");
    case TECS__RESETTING:
        return tecs__err(w, TECS_EBUSY, "the world is being reset");
    case TECS__SNAPSHOT:
        return tecs__err(w, TECS_EBUSY, "a snapshot is being saved or loaded: its callbacks "
                         "may not call the world");
    default:
        return tecs__err(w, TECS_EBUSY, "the world's allocator is running");
    }
}

bool tecs__refuse_read(tecs_world_t *w)
{
    uint8_t closed = w->base.closed;
    if (closed == TECS__IN_ALLOC || closed == TECS__PARALLEL || closed == TECS__RETIRED ||
        closed == TECS__SNAPSHOT) {
        tecs__refuse_closed(w);
        return true;
    }
    return false;
}

tecs_err_t tecs_last_error(const tecs_world_t *w)
{
    return w ? w->base.err : TECS_EINVAL;
}

const char *tecs_last_error_msg(const tecs_world_t *w)
{
    if (w == NULL)
        return "no world";
    return w->base.err == TECS_OK ? tecs_strerror(TECS_OK) : w->base.errmsg;
}

void tecs_clear_error(tecs_world_t *w)
{
    if (w == NULL)
        return;
    w->base.err = TECS_OK;
    w->base.errmsg[0] = '\0';
}
