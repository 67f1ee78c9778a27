/*
** world.c — the world's lifetime: the top layer. tecs_world_new_ex sets up
** the layers' state (each layer starts from zeroes but for the few fields
** set here) and makes the empty archetype; tecs_world_free closes the
** world, lets the listeners of every layer announce the last events and
** run the last destructors while everything is intact, then has each layer
** free its memory, from the top down. It may call every layer.
*/
#include "private.h"

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
    tecs_alloc_fn alloc = d.alloc ? d.alloc : tecs__default_alloc;
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
