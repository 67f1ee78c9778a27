/*
** world.c — the world's lifetime: the top layer. tecs_world_new_ex sets up
** the layers' state (each layer starts from zeroes but for the few fields
** set here) and makes the empty archetype; tecs_world_free closes the
** world, lets the listeners of every layer announce the last events and
** run the last destructors while everything is intact, then has each layer
** free its memory, from the top down. tecs_world_reset kills every entity
** and drops every queued change but keeps every other object. It may call
** every layer.
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

/* A world's identity: its address and the clock mixed (two live worlds
** differ in address, a world born where a freed one was differs in time). */
static uint64_t world_ident(const tecs_world_t *w)
{
    double t = tecs_time_now();
    uint64_t x = (uint64_t)(uintptr_t)w, bits;
    memcpy(&bits, &t, sizeof bits);
    x ^= bits * 0x9e3779b97f4a7c15u;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9u;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebu;
    x ^= x >> 31;
    return x ? x : 1;
}

int tecs_version(void)
{
    return TECS_VERSION;
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
    w->base.alloc = alloc;
    w->base.alloc_ud = d.alloc_ud;
    w->base.mem = sizeof *w;
    w->base.ident = world_ident(w);
    w->arch.rows = d.rows_per_chunk ? (uint32_t)d.rows_per_chunk : 1024;
    while ((1u << w->arch.shift) < w->arch.rows)
        w->arch.shift++;
    w->arch.mask = w->arch.rows - 1;
    w->arch.tick = 1;
    w->ei.max_entities = d.max_entities ? d.max_entities : TECS_MAX_ENTITIES;
    w->arch.max_archetypes = d.max_archetypes ? d.max_archetypes : TECS_MAX_ARCHETYPES;
    w->ei.free_head = w->ei.free_tail = TECS__NO_SLOT;
    w->comp.next_comp = 1;
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
    if (w->base.closed != TECS__OPEN)
        return tecs__refuse_closed(w);
    if (w->base.cb_depth > 0)
        return tecs__err(w, TECS_EBUSY, "the world cannot be freed inside a callback");
    tecs__set_closed(w, TECS__FREEING);
    w->base.defer_depth = 0;
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].before_fini)
            w->bus.listeners[i].before_fini(w, w->bus.listeners[i].ctx);
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_close)
            w->bus.listeners[i].on_close(w, w->bus.listeners[i].ctx);
    tecs__cmd_fini(w);
    tecs__arch_destroy_values(w);
    tecs__sparse_destroy_values(w);
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_fini)
            w->bus.listeners[i].on_fini(w, w->bus.listeners[i].ctx);
    tecs__free(w, w->bus.listeners, (size_t)w->bus.cap_listeners * sizeof *w->bus.listeners);
    tecs__store_fini(w);
    tecs__sparse_fini(w);
    tecs__arch_fini(w);
    tecs__ei_fini(w);
    tecs__comp_fini(w);
    assert(w->base.mem == sizeof *w);
    tecs__set_closed(w, TECS__IN_ALLOC);
    w->base.alloc(w->base.alloc_ud, w, sizeof *w, 0);
    return TECS_OK;
}

/* ---- reset ------------------------------------------------------------ */

/* Every entity of a dies: one by one through the engine when someone
** listens (each death announced as tecs_destroy announces it), from the
** last row so that no hole is filled; else the slots are freed and the
** values destroyed column by column. Then its chunks go. */
static void reset_archetype(tecs_world_t *w, tecs_archetype_t *a)
{
    if (w->bus.watch_comps || w->bus.watch_moves) {
        while (a->count > 0)
            tecs__destroy_now(w, *tecs__ent_ptr(a, w, (uint32_t)a->count - 1));
    } else {
        for (int32_t r = 0; r < a->count; r++) {
            tecs__ei_release(w, TECS_ENTITY_INDEX(*tecs__ent_ptr(a, w, (uint32_t)r)));
            w->ei.nalive--;
        }
    }
    tecs__arch_clear(w, a);
}

/* Closed meanwhile (TECS__RESETTING), as tecs_world_free closes the world:
** the callbacks the deaths run may read, every change they try is
** refused, so nothing is left queued and no entity is born. */
tecs_err_t tecs_world_reset(tecs_world_t *w)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (tecs__cmd_nested(w))
        return tecs__err(w, TECS_EBUSY, "tecs_world_reset cannot run inside an iteration, a "
                         "callback, a deferred section or a frame");
    tecs__set_closed(w, TECS__RESETTING);
    tecs__cmd_drop_all(w);
    for (int32_t i = 0; i < w->arch.narchs; i++)
        reset_archetype(w, w->arch.archs[i]);
    tecs__sparse_clear(w);
    tecs__ei_relink(w);
    tecs__emit_reset(w);
    tecs__set_closed(w, TECS__OPEN);
    assert(w->ei.nalive == 0 && w->ei.npending == 0 && w->cmd.deferred.count == 0);
    w->cmd.dropped = 0;
    w->base.err = TECS_OK;
    return TECS_OK;
}

int32_t tecs_world_rows_per_chunk(const tecs_world_t *w)
{
    return w ? (int32_t)w->arch.rows : 0;
}

int32_t tecs_world_entity_count(const tecs_world_t *w)
{
    return w ? w->ei.nalive : 0;
}

int32_t tecs_world_component_count(const tecs_world_t *w)
{
    return w ? w->comp.ncomps : 0;
}

int32_t tecs_world_archetype_count(const tecs_world_t *w)
{
    return w ? w->arch.narchs : 0;
}

tecs_archetype_t *tecs_world_archetype(const tecs_world_t *w, int32_t i)
{
    return w && i >= 0 && i < w->arch.narchs ? w->arch.archs[i] : NULL;
}

size_t tecs_world_memory(const tecs_world_t *w)
{
    return w ? w->base.mem : 0;
}

bool tecs_is_deferred(const tecs_world_t *w)
{
    return w != NULL && w->base.defer_depth > 0;
}
