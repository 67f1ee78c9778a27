/*
** event.h — the listener bus (event.c). Its types, its state and its
** interface; then, in private.h's second pass (TECS__WORLD_DONE, once
** tecs_world_t is complete), its inline functions. Included by private.h
** only.
*/
#ifndef TECS_EVENT_H
#define TECS_EVENT_H

/* Archetype listeners: how higher layers learn of new archetypes. A
** listener either takes the archetype in whole or fails with no change. */
typedef tecs_err_t (*tecs__arch_listener_fn)(tecs_world_t *w, void *ctx, tecs_archetype_t *a);

enum {
    TECS__EV_ADD = 1,           /* after the component is constructed       */
    TECS__EV_SET = 2,           /* after its value was written              */
    TECS__EV_REMOVE = 4,        /* before it is destroyed                   */
    TECS__EV_WRITTEN = 8,       /* with SET in a veto: already written      */
    TECS__EV_RESERVE = 16,      /* with ADD in a veto: the values are not
                                   known yet; reserve, refuse no key        */
    TECS__EV_ENABLE = 32,       /* an enableable component was enabled ...  */
    TECS__EV_DISABLE = 64       /* ... or disabled (ptr: its value)         */
};

/* A component event: ptr is the value (NULL for a tag). */
typedef void (*tecs__comp_event_fn)(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e,
                                    tecs_comp_t c, const void *ptr);
/* An entity changed archetype: from NULL at birth, to NULL at death. */
typedef void (*tecs__move_event_fn)(tecs_world_t *w, void *ctx, tecs_entity_t e,
                                    tecs_archetype_t *from, tecs_archetype_t *to);

/* May this change happen? Asked before an add, a set, a birth or a remove
** (TECS__EV_REMOVE, vals the value or NULL) of table component c changes
** it, for components whose `veto` counter is not zero. vals holds
** n values (stride: the component's size), NULL for default-constructed
** ones; e is the entity, 0 for births. The listener refuses with an error
** (TECS_EEXIST: a unique key taken) and reserves what its update will need.
** With TECS__EV_SET | TECS__EV_WRITTEN the value is already in place (n 1):
** a refusing listener restores its own field before returning the error.
** With TECS__EV_ADD | TECS__EV_RESERVE (vals NULL) it only reserves: after
** that, the same veto with the values fails for no lack of memory. */
typedef tecs_err_t (*tecs__veto_fn)(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e,
                                    tecs_comp_t c, const void *vals, int32_t n);

/* Is the resource c, added as generation gen, still there? */
typedef bool (*tecs__res_live_fn)(tecs_world_t *w, tecs_comp_t c, uint32_t gen);
/* A resource event: kind (a tecs_event_kind_t) of the world's value of c
** at ptr, on entity 0; its delivery stops once live says it is gone. */
typedef void (*tecs__res_event_fn)(tecs_world_t *w, void *ctx, int kind,
                                   tecs_comp_t c, void *ptr, tecs__res_live_fn live,
                                   uint32_t gen);

/* Values of a component that an add-on keeps outside rows and sparse
** sets, one per (entity, target): a relation's pairs. An index over them
** names the target (TECS_WILDCARD: the one target of each entity, when
** there is at most one); the add-on raises the component's events with
** bus.target the pair's target, and asks the vetoes (ev, e, c, the value
** or NULL for zeroes, n 1) with bus.target set before a value changes.
** The index layer reads them through these calls only. */
typedef tecs_err_t (*tecs__value_fn)(void *ctx, tecs_entity_t e, const void *val);
typedef struct tecs__values {
    /* Does the add-on keep c's values? */
    bool (*keeps)(const tecs_world_t *w, void *ctx, tecs_comp_t c);
    /* May an index read the values of (c, t)? TECS_OK, or the error
    ** recorded (TECS_EINVAL, TECS_EDEAD) saying why not. */
    tecs_err_t (*indexable)(tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t);
    /* The entities holding a value of (c, t). */
    int32_t (*count)(const tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t);
    /* fn(fctx, e, value) for each of them; stops at fn's first error and
    ** returns it. */
    tecs_err_t (*each)(tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t t,
                       tecs__value_fn fn, void *fctx);
    /* e's value of (c, t), or NULL. */
    const void *(*value)(const tecs_world_t *w, void *ctx, tecs_comp_t c, tecs_entity_t e,
                         tecs_entity_t t);
} tecs__values;

/* A listener is also how an add-on plugs into the core: it installs one
** the first time it is used, with its state as ctx, and the core reaches
** it only through these callbacks, never by name. */
typedef struct tecs__listener {
    tecs__arch_listener_fn on_archetype;
    void (*on_archetype_undo)(tecs_world_t *w, void *ctx, tecs_archetype_t *a);
    tecs__comp_event_fn on_comp;
    tecs__move_event_fn on_move;
    tecs__veto_fn on_veto;
    void (*on_fini)(tecs_world_t *w, void *ctx);
    void *ctx;
    /* Runs at world free before any on_fini, while every entity, query and
    ** listener is still intact (observers announce the last removals). */
    void (*before_fini)(tecs_world_t *w, void *ctx);
    /* The last open iteration ended: every write through a write term has
    ** been reported (ordered caches re-sort). */
    void (*on_iters_done)(tecs_world_t *w, void *ctx);
    tecs__res_event_fn on_resource;
    /* Runs at world free after every before_fini, before the queues and
    ** the rows' values are destroyed: values held outside rows (resources)
    ** are announced and destroyed while every layer is intact. */
    void (*on_close)(tecs_world_t *w, void *ctx);
    /* tecs_world_check: verify what the listener holds (error recorded). */
    tecs_err_t (*verify)(tecs_world_t *w, void *ctx);
    /* Rows were put in place without events (a snapshot loaded, a delta
    ** applied): drop what is derived from them and build it again. */
    tecs_err_t (*on_rows_replaced)(tecs_world_t *w, void *ctx);
    /* Workers are about to read the world from other threads, the world
    ** closed meanwhile: bring up to date what they read (stale indexes). */
    void (*before_workers)(tecs_world_t *w, void *ctx);
    /* The live entity e is about to be destroyed, nothing of it changed
    ** yet, the world open: refuse with an error (nothing changes), or
    ** clean up first through the engine (destroy other entities; their
    ** own destroys call this again). Not called while the world is reset
    ** or freed. */
    tecs_err_t (*on_destroy)(tecs_world_t *w, void *ctx, tecs_entity_t e);
    /* tecs_world_reset: every entity died, maybe without events. */
    void (*on_reset)(tecs_world_t *w, void *ctx);
    /* The values the add-on keeps outside rows (above), or NULL. */
    const tecs__values *values;
    /* Clones (tecs_clone, the relation add-on's instances) of the plan
    ** w->store.plan (store.h), in steps (TECS__CLONE_*): RESERVE what
    ** copying its sources' state needs (src, dst and n unused), for copies
    ** that take the plan's pending ids or else the slots of the next
    ** tecs__ei_take calls, in the plan's order, an error changing nothing;
    ** then, once per copy dst of src (n: its rank g among src's copies,
    ** w->store.plan_at src's index), LINK what its row's tags depend on,
    ** before the core's events of its birth, and PAIRS the rest after all
    ** the plan's births, with their own events; neither can fail. Those
    ** steps come only if a RESERVE set w->store.plan_copies. */
    tecs_err_t (*on_clone)(tecs_world_t *w, void *ctx, int step, tecs_entity_t src,
                           tecs_entity_t dst, int32_t n);
    /* The value of the table component c that an entity of archetype a,
    ** which has no c of its own, reads from elsewhere (its base: the
    ** relation add-on's IsA), or NULL; calls nothing. One listener at
    ** most has it. */
    const void *(*inherited)(const tecs_world_t *w, void *ctx, const tecs_archetype_t *a,
                             tecs_comp_t c);
} tecs__listener;

/* The value of c an entity of a without its own inherits, or NULL. */
const void *tecs__inherited(const tecs_world_t *w, const tecs_archetype_t *a, tecs_comp_t c);
/* Register a listener; its on_fini runs when the world is freed. */
tecs_err_t tecs__listen(tecs_world_t *w, const tecs__listener *l);
/* An add-on's state: size bytes, zeroed, installed as the ctx of a copy
** of l. NULL with the error recorded when out of memory (what names the
** state in the message); nothing is left behind. */
void *tecs__plug(tecs_world_t *w, size_t size, const tecs__listener *l, const char *what);
/* Ask every vetoing listener whether a change to c may happen. */
tecs_err_t tecs__veto(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c,
                      const void *vals, int32_t n);
/* The values of c an add-on keeps outside rows, *ctx its state; NULL
** when c's values are in rows or sparse sets. */
const tecs__values *tecs__values_of(const tecs_world_t *w, tecs_comp_t c, void **ctx);
/* Raise a component event to every listener (only if c is watched). */
void tecs__emit_comp(tecs_world_t *w, int ev, tecs_entity_t e, tecs_comp_t c, const void *ptr);
/* Tell every listener that e moved from one archetype to another. */
void tecs__emit_move(tecs_world_t *w, tecs_entity_t e, tecs_archetype_t *from,
                     tecs_archetype_t *to);

/* Raise a resource event to every listener of resource events. */
void tecs__emit_resource(tecs_world_t *w, int kind, tecs_comp_t c, void *ptr,
                         tecs__res_live_fn live, uint32_t gen);
/* Tell every listener that rows were replaced without events; the first
** error stops it and is returned. */
tecs_err_t tecs__emit_rows_replaced(tecs_world_t *w);
/* Ask every listener of destroys whether the live entity e may die now
** (see on_destroy); the first error stops it and is returned. */
tecs_err_t tecs__emit_destroying(tecs_world_t *w, tecs_entity_t e);
enum { TECS__CLONE_RESERVE, TECS__CLONE_LINK, TECS__CLONE_PAIRS };
/* on_clone of every listener that has one; the first error stops it and
** is returned (only a RESERVE may fail). */
tecs_err_t tecs__emit_clone(tecs_world_t *w, int step, tecs_entity_t src, tecs_entity_t dst,
                            int32_t n);
/* Tell every listener that the world was reset. */
void tecs__emit_reset(tecs_world_t *w);
/* Tell every listener that workers are about to start (once a frame part:
** a test of watch_workers when none listens). */
void tecs__emit_before_workers(tecs_world_t *w);

typedef struct tecs__bus {
    tecs__listener *listeners;
    int32_t nlisteners;
    int32_t cap_listeners;
    bool watch_moves;           /* some listener wants move events          */
    bool watch_comps;           /* some listener wants component events     */
    bool watch_vetoes;          /* some listener may veto changes           */
    bool watch_iters;           /* some listener wants the end of the last
                                   open iteration                           */
    bool watch_workers;         /* some listener wants workers' start       */
    bool watch_destroys;        /* some listener wants each destroy first   */
    bool watch_clones;          /* some listener copies state of clones     */
    int32_t inherits;           /* the listener with `inherited`, + 1 (0)   */
    tecs_entity_t target;       /* while a relation's component event is
                                   raised: the pair's target (its listeners
                                   take it, then clear it for the events
                                   their callbacks raise); else 0           */
    bool in_place;              /* the component event being raised changes
                                   what its entity holds with no move (a
                                   pair's, raised by the relation add-on):
                                   membership follows the event itself
                                   (taken and cleared as target is)         */
} tecs__bus;

#endif /* TECS_EVENT_H */
