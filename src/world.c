/*
** world.c — the world's lifetime, its allocator, its error state.
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

static void *default_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
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
    uint8_t closed = w->closed;
    w->closed = TECS__IN_ALLOC;
    void *q = w->alloc(w->alloc_ud, p, osize, nsize);
    w->closed = closed;
    return q;
}

void *tecs__realloc(tecs_world_t *w, void *p, size_t osize, size_t nsize)
{
    if (nsize == 0) {
        tecs__free(w, p, osize);
        return NULL;
    }
    void *q = call_alloc(w, p, p ? osize : 0, nsize);
    if (q != NULL)
        w->mem += nsize - (p ? osize : 0);
    return q;
}

void tecs__free(tecs_world_t *w, void *p, size_t size)
{
    if (p == NULL)
        return;
    call_alloc(w, p, size, 0);
    w->mem -= size;
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
    void *p = tecs__realloc(w, *arr, (size_t)*cap * esize, (size_t)ncap * esize);
    if (p == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory growing an array to %d", need);
    *arr = p;
    *cap = (int32_t)ncap;
    return TECS_OK;
}

void *tecs__alloc_aligned(tecs_world_t *w, size_t size, void **raw)
{
    *raw = tecs__alloc(w, size + TECS_MAX_ALIGN - 1);
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
    w->err = err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
    return err;
}

void tecs__err_reset(tecs_world_t *w, tecs_err_t err)
{
    if (err == TECS_OK)
        w->err = TECS_OK;
    else
        tecs__err(w, err, "%s", tecs_strerror(err));
}

tecs_err_t tecs__refuse_closed(tecs_world_t *w)
{
    return tecs__err(w, TECS_EBUSY, w->closed == TECS__FREEING
                                        ? "the world is being freed"
                                        : "the world's allocator is running");
}

tecs_err_t tecs_last_error(const tecs_world_t *w)
{
    return w ? w->err : TECS_EINVAL;
}

const char *tecs_last_error_msg(const tecs_world_t *w)
{
    if (w == NULL)
        return "no world";
    return w->err == TECS_OK ? tecs_strerror(TECS_OK) : w->errmsg;
}

void tecs_clear_error(tecs_world_t *w)
{
    if (w == NULL)
        return;
    w->err = TECS_OK;
    w->errmsg[0] = '\0';
}

/* ---- lifetime -------------------------------------------------------- */

static bool valid_desc(const tecs_world_desc_t *d)
{
    int32_t r = d->rows_per_chunk;
    if (r != 0 && (r < 16 || r > 65536 || (r & (r - 1)) != 0))
        return false;
    return d->max_entities >= 0 && d->max_archetypes >= 0 &&
           d->max_archetypes <= TECS_MAX_ARCHETYPES;
}

tecs_world_t *tecs_world_new(void)
{
    return tecs_world_new_ex(NULL);
}

tecs_world_t *tecs_world_new_ex(const tecs_world_desc_t *desc)
{
    tecs_world_desc_t d = desc ? *desc : (tecs_world_desc_t){ 0 };
    if (!valid_desc(&d))
        return NULL;
    tecs_alloc_fn alloc = d.alloc ? d.alloc : default_alloc;
    tecs_world_t *w = alloc(d.alloc_ud, NULL, 0, sizeof *w);
    if (w == NULL)
        return NULL;
    memset(w, 0, sizeof *w);
    w->alloc = alloc;
    w->alloc_ud = d.alloc_ud;
    w->mem = sizeof *w;
    w->rows = d.rows_per_chunk ? (uint32_t)d.rows_per_chunk : 1024;
    while ((1u << w->shift) < w->rows)
        w->shift++;
    w->mask = w->rows - 1;
    w->max_entities = d.max_entities ? d.max_entities : TECS_MAX_ENTITIES;
    w->max_archetypes = d.max_archetypes ? d.max_archetypes : TECS_MAX_ARCHETYPES;
    w->free_head = w->free_tail = TECS__NO_SLOT;
    w->next_comp = 1;
    /* Archetype 0 is the empty one, where tecs_new puts entities. */
    if (tecs__arch_get(w, 0, NULL) == NULL) {
        tecs_world_free(w);
        return NULL;
    }
    return w;
}

/* Tear the world down. Closed first (TECS__FREEING): the callbacks this
** runs may read, every other call is refused. The last REMOVE / LEAVE
** events and every destructor (of live values and of queued ones) run
** while every layer is still intact; then the layers free their memory,
** which runs no more user code. */
tecs_err_t tecs_world_free(tecs_world_t *w)
{
    if (w == NULL)
        return TECS_OK;
    if (w->closed != TECS__OPEN)
        return tecs__refuse_closed(w);
    if (w->cb_depth > 0)
        return tecs__err(w, TECS_EBUSY, "the world cannot be freed inside a callback");
    w->closed = TECS__FREEING;
    w->defer_depth = 0;
    for (int32_t i = 0; i < w->nlisteners; i++)
        if (w->listeners[i].before_fini)
            w->listeners[i].before_fini(w, w->listeners[i].ctx);
    tecs__cmd_fini(w);
    tecs__arch_destroy_values(w);
    for (int32_t i = 0; i < w->nlisteners; i++)
        if (w->listeners[i].on_fini)
            w->listeners[i].on_fini(w, w->listeners[i].ctx);
    tecs__free(w, w->listeners, (size_t)w->cap_listeners * sizeof *w->listeners);
    tecs__arch_fini(w);
    tecs__ei_fini(w);
    tecs__comp_fini(w);
    assert(w->mem == sizeof *w);
    w->closed = TECS__IN_ALLOC;
    w->alloc(w->alloc_ud, w, sizeof *w, 0);
    return TECS_OK;
}

int32_t tecs_world_rows_per_chunk(const tecs_world_t *w)
{
    return w ? (int32_t)w->rows : 0;
}

int32_t tecs_world_entity_count(const tecs_world_t *w)
{
    return w ? w->nalive : 0;
}

int32_t tecs_world_component_count(const tecs_world_t *w)
{
    return w ? w->ncomps : 0;
}

int32_t tecs_world_archetype_count(const tecs_world_t *w)
{
    return w ? w->narchs : 0;
}

size_t tecs_world_memory(const tecs_world_t *w)
{
    return w ? w->mem : 0;
}

bool tecs_is_deferred(const tecs_world_t *w)
{
    return w != NULL && w->defer_depth > 0;
}
