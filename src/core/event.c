/*
** event.c — the listener bus: how a lower layer tells higher ones what
** happened without knowing them by name.
**
** A higher layer (queries, indexes, caches, observers, systems) registers a
** tecs__listener once; the layers below emit on the bus: archetype.c when
** an archetype is made or undone, the engine (store.c) when a component is
** added, set or removed and when an entity changes archetype. A listener
** may also veto a change before it happens (a unique index refusing a key
** already taken). Every callback runs with the world deferred, so what a
** listener changes is queued and applied once the change it hears of is
** done.
**
** The bus owns the listener list and five flags, one per kind of event,
** that say whether anyone listens at all: the hot paths test a flag, not
** the list. Which components are watched or vetoed is counted per component
** in the registry (component.c), beside what the hot paths read of it.
** Add-ons plug in the same way: a listener also announces resource
** events, verifies its add-on, destroys what it holds at world free, and
** hears when rows were replaced without events or workers are to start;
** and it lends the values an add-on keeps outside rows (a relation's
** pairs) to the indexes (tecs__values_of).
** Calls: base.c only.
*/
#include "private.h"

tecs_err_t tecs__listen(tecs_world_t *w, const tecs__listener *l)
{
    if (tecs__grow(w, (void **)&w->bus.listeners, &w->bus.cap_listeners, w->bus.nlisteners + 1,
                   sizeof *w->bus.listeners))
        return TECS_ENOMEM;
    w->bus.listeners[w->bus.nlisteners++] = *l;
    if (l->on_move)
        w->bus.watch_moves = true;
    if (l->on_comp)
        w->bus.watch_comps = true;
    if (l->on_veto)
        w->bus.watch_vetoes = true;
    if (l->on_iters_done)
        w->bus.watch_iters = true;
    if (l->before_workers)
        w->bus.watch_workers = true;
    if (l->on_destroy)
        w->bus.watch_destroys = true;
    if (l->on_clone)
        w->bus.watch_clones = true;
    if (l->inherited)
        w->bus.inherits = w->bus.nlisteners;
    tecs__gate_put(&w->base, TECS__GATE_MOVES, w->bus.watch_moves);
    tecs__gate_put(&w->base, TECS__GATE_DESTROY, w->bus.watch_destroys);
    tecs__gate_put(&w->base, TECS__GATE_COMPS, w->bus.watch_comps);
    return TECS_OK;
}

void *tecs__plug(tecs_world_t *w, size_t size, const tecs__listener *l, const char *what)
{
    void *s = tecs__alloc(w, size);
    if (s == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating %s", what);
        return NULL;
    }
    memset(s, 0, size);
    tecs__listener own = *l;
    own.ctx = s;
    if (tecs__listen(w, &own)) {
        tecs__free(w, s, size);
        return NULL;
    }
    return s;
}

const void *tecs__inherited(const tecs_world_t *w, const tecs_archetype_t *a, tecs_comp_t c)
{
    if (w->bus.inherits == 0)
        return NULL;
    const tecs__listener *l = &w->bus.listeners[w->bus.inherits - 1];
    return l->inherited(w, l->ctx, a, c);
}

const tecs__values *tecs__values_of(const tecs_world_t *w, tecs_comp_t c, void **ctx)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++) {
        const tecs__listener *l = &w->bus.listeners[i];
        if (l->values && l->values->keeps(w, l->ctx, c)) {
            *ctx = l->ctx;
            return l->values;
        }
    }
    return NULL;
}

void tecs__emit_comp(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c, const void *ptr)
{
    w->base.defer_depth++;
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_comp)
            w->bus.listeners[i].on_comp(w, w->bus.listeners[i].ctx, ev, e, c, ptr);
    w->base.defer_depth--;
}

tecs_err_t tecs__veto(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c,
                      const void *vals, int32_t n)
{
    tecs_err_t err = TECS_OK;
    w->base.defer_depth++;
    for (int32_t i = 0; i < w->bus.nlisteners && !err; i++)
        if (w->bus.listeners[i].on_veto)
            err = w->bus.listeners[i].on_veto(w, w->bus.listeners[i].ctx, ev, e, c, vals, n);
    w->base.defer_depth--;
    return err;
}

void tecs__emit_move(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *from,
                     tecs_archetype_t *to)
{
    w->base.defer_depth++;
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_move)
            w->bus.listeners[i].on_move(w, w->bus.listeners[i].ctx, e, from, to);
    w->base.defer_depth--;
}


void tecs__emit_resource(tecs_world_t *w, int kind, tecs_comp_t c, void *ptr,
                         tecs__res_live_fn live, uint32_t gen)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_resource)
            w->bus.listeners[i].on_resource(w, w->bus.listeners[i].ctx, kind, c, ptr, live, gen);
}

tecs_err_t tecs__emit_rows_replaced(tecs_world_t *w)
{
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < w->bus.nlisteners && !err; i++)
        if (w->bus.listeners[i].on_rows_replaced)
            err = w->bus.listeners[i].on_rows_replaced(w, w->bus.listeners[i].ctx);
    return err;
}

tecs_err_t tecs__emit_destroying(tecs_world_t *w, tecs_entity_t e)
{
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < w->bus.nlisteners && !err; i++)
        if (w->bus.listeners[i].on_destroy)
            err = w->bus.listeners[i].on_destroy(w, w->bus.listeners[i].ctx, e);
    return err;
}

tecs_err_t tecs__emit_clone(tecs_world_t *w, int step, tecs_entity_t src, tecs_entity_t dst,
                            int32_t n)
{
    tecs_err_t err = TECS_OK;
    for (int32_t i = 0; i < w->bus.nlisteners && !err; i++)
        if (w->bus.listeners[i].on_clone)
            err = w->bus.listeners[i].on_clone(w, w->bus.listeners[i].ctx, step, src, dst, n);
    return err;
}

void tecs__emit_reset(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_reset)
            w->bus.listeners[i].on_reset(w, w->bus.listeners[i].ctx);
}

void tecs__emit_before_workers(tecs_world_t *w)
{
    if (!w->bus.watch_workers)
        return;
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].before_workers)
            w->bus.listeners[i].before_workers(w, w->bus.listeners[i].ctx);
}
