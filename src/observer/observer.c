/*
** observer.c — component hooks, observers and query membership events.
**
** The engine (store.c) raises two kinds of low-level events on the bus:
** a component event (ADD / SET / REMOVE of component c on entity e, raised
** only while comps[c].watch > 0) and a move event (e went from archetype A
** to B; A is NULL at birth, B NULL at death; raised while watch_moves).
** This file is one listener that turns them into what users register:
**
**     per[c]          = { hooks { on_add, on_set, on_remove, ctx }, nobs, nres }
**     observers[]     = { id, kind, comp, query, fn, ctx, resource }   creation order
**
** ENABLE / DISABLE of an enableable component (tecs_enable) come as
** component events too: its ENABLE / DISABLE observers fire, and the
** membership observers whose toggle terms name it compare the entity's
** match with the bit as it was (tecs__query_entity_ok's flip) and as it is.
** Every match of an entity reads its enabled bits, so a move event's
** "was" and "is" do too.
**
** per[c].nobs counts the live observers of c, so an event of a component
** that only has hooks (or that only a field index watches) skips the scan.
**
**     component event (ev, e, c)          move event (e, A, B)
**       ADD / SET: hook, then observers     for each ENTER / LEAVE observer:
**       REMOVE:    observers, then hook       in  = matches(A), out = matches(B)
**       an observer fires if comp == c        !in &&  out  -> ENTER
**       and e's archetype now matches         in  && !out  -> LEAVE
**
** Resources (resource/) are announced here too, as the bus's resource
** events: the component's hooks and the observers made with .resource (counted in
** per[c].nres, never in the watch counts, so entity events do not pay for
** them) fire with entity 0; the delivery stops once the value it announces
** is gone (a callback removed the resource).
**
** An observer's terms live in a query of its own (created here, freed with
** the observer), so matching an archetype is the query layer's work.
**
** Watch counts: a component is watched once per observer of it and once if
** it has any hook; watch_noset counts those that want no SET events (ADD /
** REMOVE observers, hooks without on_set), so that writes through an
** iteration's write terms are reported only when someone listens. Move
** events are wanted while a membership observer lives (or another listener
** wants them). Nobody pays for events nobody watches.
**
** Callbacks run with the world deferred (the bus raises events that way):
** their structural changes go to the command buffer and are applied after
** the change being announced, in order, by the flush loop; chains of changes
** made by observers are a loop there, not a recursion here.
**
** An observer removed while events are being delivered is marked dead and
** skipped; dead entries are swept when no delivery is running, so the array
** never shifts under a loop. Observers created during a delivery do not see
** the event being delivered.
**
** At world free, before any layer tears down, every live entity is announced
** as destroyed (REMOVE events, then LEAVE), archetypes in creation order,
** rows in order; the world is closed meanwhile (TECS__FREEING), so those
** callbacks may read but every change they try is refused.
**
** Calls: base.c, entity_index.c, event.c (it is a listener), query.c.
*/
#include "../core/private.h"

typedef struct obs_entry {
    tecs_observer_t id;
    tecs_event_kind_t kind;
    tecs_comp_t comp;           /* ADD / SET / REMOVE                       */
    tecs_query_t *query;        /* the terms, or NULL                       */
    tecs_observer_fn fn;
    void *ctx;
    bool resource;              /* watches the world's resource of comp     */
    bool dead;                  /* removed during a delivery                */
} obs_entry;

typedef struct comp_slot {
    tecs_hooks_t hooks;
    int32_t nobs;               /* live ADD / SET / REMOVE observers of it  */
    int32_t nres;               /* live observers of its resource           */
} comp_slot;

struct tecs__obs_state {
    comp_slot *per;             /* by component id, cap_per long            */
    int32_t cap_per;
    obs_entry *list;            /* creation order                           */
    int32_t n;
    int32_t cap;
    int32_t nlive;              /* not dead                                 */
    int32_t nmember;            /* live ENTER / LEAVE observers             */
    int32_t delivering;         /* depth of deliveries under way            */
    tecs_entity_t target;       /* the component event being delivered: the
                                   pair's target (the bus's), for events of
                                   target_comp on target_of                 */
    tecs_entity_t target_of;
    tecs_comp_t target_comp;
    bool in_place;              /* it changes membership with no move       */
    int32_t ndeps;              /* live membership observers whose queries
                                   read other entities (tecs__query_has_deps) */
    bool any_dead;                 /* some entry is dead                       */
    bool tearing_down;          /* the world is being freed                 */
    tecs_observer_t next_id;
};

typedef struct tecs__obs_state obs_state;

static bool is_member_kind(tecs_event_kind_t k)
{
    return k == TECS_ON_ENTER || k == TECS_ON_LEAVE;
}

static bool is_toggle_kind(tecs_event_kind_t k)
{
    return k == TECS_ON_ENABLE || k == TECS_ON_DISABLE;
}

/* ---- delivery -------------------------------------------------------- */

static void call(tecs_observer_fn fn, tecs_world_t *w, tecs_event_kind_t kind,
                 tecs_entity_t e, tecs_comp_t c, const void *ptr, void *ctx)
{
    const obs_state *s = w->obs;
    tecs_event_t ev = { w, kind, e, c, (void *)(uintptr_t)ptr, ctx,
                        e == s->target_of && c == s->target_comp ? s->target : 0 };
    tecs_err_t outer_err = tecs__cb_begin(w);
    fn(&ev);
    tecs__cb_end(w, outer_err);
}

/* The archetype entity e is in now (NULL if not alive). */
static tecs_archetype_t *arch_of(const tecs_world_t *w, tecs_entity_t e)
{
    const tecs__record *r = tecs__ei_alive(w, e);
    return r ? tecs__rec_arch(w, r) : NULL;
}

/* Remove dead entries, once no delivery is running. */
static void sweep(tecs_world_t *w, obs_state *s)
{
    if (s->delivering > 0 || !s->any_dead)
        return;
    int32_t k = 0;
    for (int32_t i = 0; i < s->n; i++) {
        if (s->list[i].dead)
            tecs__query_drop(s->list[i].query);
        else
            s->list[k++] = s->list[i];
    }
    s->n = k;
    s->any_dead = false;
    (void)w;
}

static void fire_observers(tecs_world_t *w, obs_state *s, tecs_event_kind_t kind,
                           tecs_entity_t e, tecs_comp_t c, const void *ptr)
{
    if (c >= (tecs_comp_t)s->cap_per || s->per[c].nobs == 0)
        return;
    int32_t n = s->n;
    tecs_archetype_t *a = NULL;
    bool looked = false;
    for (int32_t i = 0; i < n; i++) {
        obs_entry o = s->list[i];   /* a copy: the array may grow meanwhile */
        if (o.dead || o.kind != kind || o.comp != c || o.resource)
            continue;
        if (o.query) {
            if (!looked)
                a = arch_of(w, e), looked = true;
            if (!tecs__query_entity_ok(o.query, a, e, NULL))
                continue;
        }
        call(o.fn, w, kind, e, c, ptr, o.ctx);
    }
}

static const tecs_hooks_t *hooks_of(const obs_state *s, tecs_comp_t c)
{
    return c < (tecs_comp_t)s->cap_per ? &s->per[c].hooks : NULL;
}

static void fire_hook(tecs_world_t *w, obs_state *s, tecs_event_kind_t kind, tecs_entity_t e,
                      tecs_comp_t c, const void *ptr)
{
    const tecs_hooks_t *h = hooks_of(s, c);
    if (h == NULL)
        return;
    tecs_observer_fn fn = kind == TECS_ON_ADD ? h->on_add
                          : kind == TECS_ON_SET ? h->on_set : h->on_remove;
    if (fn)
        call(fn, w, kind, e, c, ptr, h->ctx);
}

static tecs_event_kind_t kind_of(int ev)
{
    return ev == TECS__EV_ADD ? TECS_ON_ADD : ev == TECS__EV_SET ? TECS_ON_SET
           : ev == TECS__EV_ENABLE ? TECS_ON_ENABLE : ev == TECS__EV_DISABLE ? TECS_ON_DISABLE
           : TECS_ON_REMOVE;
}

/* Membership after c of e was enabled or disabled, or after sparse c or
** a pair of relation c was added (before: true when it is being
** removed): ENTER / LEAVE of the observers whose row filters hear c, the
** state on the other side read with c turned back (enabled bit, sparse
** membership, the pair). */
static void toggle_members(tecs_world_t *w, obs_state *s, tecs_entity_t e, tecs_comp_t c,
                           bool before)
{
    int32_t n = s->n;
    tecs_archetype_t *a = arch_of(w, e);    /* callbacks' moves are queued */
    const tecs__view back = { .flip = c };
    for (int32_t i = 0; i < n; i++) {
        obs_entry o = s->list[i];
        if (o.dead || !is_member_kind(o.kind) || !tecs__query_toggles(o.query, c))
            continue;
        bool was = tecs__query_entity_ok(o.query, a, e, before ? NULL : &back);
        bool is = tecs__query_entity_ok(o.query, a, e, before ? &back : NULL);
        if (was != is && is == (o.kind == TECS_ON_ENTER))
            call(o.fn, w, o.kind, e, 0, NULL, o.ctx);
    }
}

/* Enabling: ENTER / LEAVE first, then ENABLE observers (as an add);
** disabling: DISABLE observers first (as a remove). */
static void on_toggle(tecs_world_t *w, obs_state *s, tecs_event_kind_t kind, tecs_entity_t e,
                      tecs_comp_t c, const void *ptr)
{
    if (kind == TECS_ON_ENABLE && s->nmember > 0)
        toggle_members(w, s, e, c, false);
    fire_observers(w, s, kind, e, c, ptr);
    if (kind == TECS_ON_DISABLE && s->nmember > 0)
        toggle_members(w, s, e, c, false);
}

static void deliver(tecs_world_t *w, obs_state *s, tecs_event_kind_t kind, tecs_entity_t e,
                    tecs_comp_t c, const void *ptr);

static void obs_on_comp(tecs_world_t *w, void *ctx, int ev, tecs_entity_t e, tecs_comp_t c,
                    const void *ptr)
{
    obs_state *s = ctx;
    tecs_event_kind_t kind = kind_of(ev);
    tecs_entity_t was = s->target, was_of = s->target_of;
    tecs_comp_t was_comp = s->target_comp;
    bool was_in_place = s->in_place;
    s->target = w->bus.target;          /* this event's pair target ...     */
    s->target_of = e;
    s->target_comp = c;
    s->in_place = w->bus.in_place;
    w->bus.target = 0;                  /* ... not the callbacks' events'   */
    w->bus.in_place = false;
    s->delivering++;
    if (kind == TECS_ON_ENABLE || kind == TECS_ON_DISABLE) {
        on_toggle(w, s, kind, e, c, ptr);
    } else {
        deliver(w, s, kind, e, c, ptr);
    }
    w->bus.target = s->target;
    w->bus.in_place = s->in_place;
    s->target = was;
    s->target_of = was_of;
    s->target_comp = was_comp;
    s->in_place = was_in_place;
    s->delivering--;
    sweep(w, s);
}

/* obs_on_comp's ADD / SET / REMOVE. */
static void deliver(tecs_world_t *w, obs_state *s, tecs_event_kind_t kind, tecs_entity_t e,
                    tecs_comp_t c, const void *ptr)
{
    /* A sparse component and a pair move no row: their membership events
    ** come from their ADD (ENTER first, as a move's) and REMOVE (LEAVE
    ** last); a destroy's (leaving_comp 0) and the world free's come from
    ** the move out. */
    bool members = s->nmember > 0 && kind != TECS_ON_SET &&
                   (s->in_place || tecs__comp_is_sparse(w, c)) &&
                   !(e == w->store.leaving && w->store.leaving_comp == 0) && !s->tearing_down;
    if (members && kind == TECS_ON_ADD)
        toggle_members(w, s, e, c, false);
    if (kind != TECS_ON_REMOVE)
        fire_hook(w, s, kind, e, c, ptr);
    fire_observers(w, s, kind, e, c, ptr);
    if (kind == TECS_ON_REMOVE)
        fire_hook(w, s, kind, e, c, ptr);
    if (members && kind == TECS_ON_REMOVE)
        toggle_members(w, s, e, c, true);
}

/* A move of e re-decides, for each observer whose query reads other
** entities, the entities that read e (its children, for a term read from
** the parent): before, e read from its archetype `from`; now, from its
** own. */
typedef struct dep_move {
    obs_entry o;
    tecs__view before;
} dep_move;

static void obs_dep_moved(tecs_world_t *w, tecs_entity_t dep, void *ctx)
{
    const dep_move *m = ctx;
    tecs_archetype_t *a = arch_of(w, dep);
    bool was = tecs__query_entity_ok(m->o.query, a, dep, &m->before);
    bool is = tecs__query_entity_ok(m->o.query, a, dep, NULL);
    if (was != is && is == (m->o.kind == TECS_ON_ENTER))
        call(m->o.fn, w, m->o.kind, dep, 0, NULL, m->o.ctx);
}

static void move_deps(const obs_state *s, tecs_entity_t e, const tecs_archetype_t *from,
                      int32_t n)
{
    dep_move m = { .before = { .moved = e, .from = from } };
    for (int32_t i = 0; i < n; i++) {
        m.o = s->list[i];
        if (!m.o.dead && is_member_kind(m.o.kind))
            tecs__query_each_dep(m.o.query, e, obs_dep_moved, &m);
    }
}

static void on_move(tecs_world_t *w, void *ctx, tecs_entity_t e, tecs_archetype_t *from,
                    tecs_archetype_t *to)
{
    obs_state *s = ctx;
    if (s->nmember == 0)
        return;
    s->delivering++;
    int32_t n = s->n;
    for (int32_t i = 0; i < n; i++) {
        obs_entry o = s->list[i];
        if (o.dead || (o.kind != TECS_ON_ENTER && o.kind != TECS_ON_LEAVE))
            continue;
        bool was = tecs__query_entity_ok(o.query, from, e, NULL);
        bool is = tecs__query_entity_ok(o.query, to, e, NULL);
        if (was != is && is == (o.kind == TECS_ON_ENTER))
            call(o.fn, w, o.kind, e, 0, NULL, o.ctx);
    }
    if (s->ndeps > 0 && from != NULL && to != NULL)
        move_deps(s, e, from, n);
    s->delivering--;
    sweep(w, s);
}

/* ---- teardown -------------------------------------------------------- */

/* Announce entity e at row of a as destroyed: REMOVE events (its table
** components, then its sparse ones), then LEAVE. */
static void announce_death(tecs_world_t *w, obs_state *s, tecs_archetype_t *a, uint32_t row)
{
    tecs_entity_t e = *tecs__ent_ptr(a, w, row);
    for (int32_t i = 0; i < a->ncomps; i++) {
        tecs_comp_t c = a->comps[i];
        if (w->comp.comps[c].watch == 0)
            continue;
        int32_t col = tecs__arch_col(a, c);
        obs_on_comp(w, s, TECS__EV_REMOVE, e, c, col >= 0 ? tecs__col_ptr(a, w, col, row) : NULL);
    }
    for (int32_t i = 0; i < w->sparse.nsets; i++) {
        const tecs__sparse *set = w->sparse.sets[i];
        if (set->count == 0 || w->comp.comps[set->comp].watch == 0)
            continue;
        void *p = tecs__sparse_get(w, set->comp, TECS_ENTITY_INDEX(e));
        if (p)
            obs_on_comp(w, s, TECS__EV_REMOVE, e, set->comp, set->size ? p : NULL);
    }
    on_move(w, s, e, a, NULL);
}

static void before_fini(tecs_world_t *w, void *ctx)
{
    obs_state *s = ctx;
    s->tearing_down = true;
    w->base.defer_depth++;   /* as for any event; changes are refused anyway */
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        tecs_archetype_t *a = w->arch.archs[i];
        for (int32_t r = 0; r < a->count; r++)
            announce_death(w, s, a, (uint32_t)r);
    }
    w->base.defer_depth--;
}

static void obs_on_fini(tecs_world_t *w, void *ctx)
{
    obs_state *s = ctx;
    /* Queries were freed by the query layer's own obs_on_fini, or will be. */
    tecs__free(w, s->per, (size_t)s->cap_per * sizeof *s->per);
    tecs__free(w, s->list, (size_t)s->cap * sizeof *s->list);
    tecs__free(w, s, sizeof *s);
    w->obs = NULL;
}

/* ---- state ----------------------------------------------------------- */

/* Move events are wanted while a membership observer lives or another
** listener has asked for them. */
static void update_watch_moves(tecs_world_t *w)
{
    bool want = w->obs && w->obs->nmember > 0;
    for (int32_t i = 0; i < w->bus.nlisteners && !want; i++)
        want = w->bus.listeners[i].on_move && w->bus.listeners[i].on_move != on_move;
    w->bus.watch_moves = want;
    tecs__gate_put(&w->base, TECS__GATE_MOVES, want);
}

static void on_resource(tecs_world_t *w, void *ctx, int kind_, tecs_comp_t c, void *ptr,
                        tecs__res_live_fn live, uint32_t gen);
static tecs_err_t obs_verify(tecs_world_t *w, void *ctx);

static obs_state *state(tecs_world_t *w)
{
    if (w->obs)
        return w->obs;
    tecs__listener l = { .on_comp = obs_on_comp, .on_move = on_move, .on_fini = obs_on_fini,
                         .before_fini = before_fini, .on_resource = on_resource,
                         .verify = obs_verify };
    obs_state *s = tecs__plug(w, sizeof *s, &l, "observer state");
    if (s == NULL)
        return NULL;
    s->next_id = 1;
    w->obs = s;
    update_watch_moves(w);
    return s;
}

/* Make per[c] exist (zeroed when new). */
static tecs_err_t grow_per(tecs_world_t *w, obs_state *s, tecs_comp_t c)
{
    int32_t old = s->cap_per;
    if (tecs__grow(w, (void **)&s->per, &s->cap_per, (int32_t)c + 1, sizeof *s->per))
        return TECS_ENOMEM;
    memset(s->per + old, 0, (size_t)(s->cap_per - old) * sizeof *s->per);
    return TECS_OK;
}

/* ---- hooks ----------------------------------------------------------- */

static bool any_hook(const tecs_hooks_t *h)
{
    return h && (h->on_add || h->on_set || h->on_remove);
}

/* A component with hooks is watched once; without on_set it wants no SET
** events (so writes through iterations are not reported for it). */
static void watch_hooks(tecs_world_t *w, tecs_comp_t c, const tecs_hooks_t *h)
{
    w->comp.comps[c].watch += any_hook(h);
    w->comp.comps[c].watch_noset += any_hook(h) && !h->on_set;
    tecs__toghots_close(&w->arch);      /* toggles of c have events now */
}

static void unwatch_hooks(tecs_world_t *w, tecs_comp_t c, const tecs_hooks_t *h)
{
    w->comp.comps[c].watch -= any_hook(h);
    w->comp.comps[c].watch_noset -= any_hook(h) && !h->on_set;
}

tecs_err_t tecs_component_hooks(tecs_world_t *w, tecs_comp_t c, const tecs_hooks_t *hooks)
{
    if (w == NULL)
        return TECS_EINVAL;
    if (tecs__enter(w))
        return w->base.err;
    const tecs__comp *ci = tecs__comp_get(w, c);
    if (ci == NULL)
        return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", c);
    if (hooks && hooks->on_set && ci->size == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag: it has no value for "
                         "an on_set hook", TECS__COMP(w, c));
    if (!any_hook(hooks) && (w->obs == NULL || !any_hook(hooks_of(w->obs, c))))
        return TECS_OK;
    obs_state *s = state(w);
    if (s == NULL)
        return w->base.err;
    if (grow_per(w, s, c))
        return TECS_ENOMEM;
    unwatch_hooks(w, c, &s->per[c].hooks);
    s->per[c].hooks = any_hook(hooks) ? *hooks : (tecs_hooks_t){ 0 };
    watch_hooks(w, c, &s->per[c].hooks);
    return TECS_OK;
}

/* ---- resources ------------------------------------------------------- */

/* Fire c's hook and its resource observers for kind, with entity 0 and
** the value at ptr; stops once live says the value is gone (a resource
** event of the bus). */
static void on_resource(tecs_world_t *w, void *ctx, int kind_, tecs_comp_t c, void *ptr,
                        tecs__res_live_fn live, uint32_t gen)
{
    obs_state *s = ctx;
    tecs_event_kind_t kind = (tecs_event_kind_t)kind_;
    if (s == NULL || c >= (tecs_comp_t)s->cap_per ||
        (s->per[c].nres == 0 && !any_hook(&s->per[c].hooks)))
        return;
    s->delivering++;
    if (kind != TECS_ON_REMOVE)
        fire_hook(w, s, kind, 0, c, ptr);
    int32_t n = s->n;
    for (int32_t i = 0; i < n && live(w, c, gen); i++) {
        obs_entry o = s->list[i];
        if (!o.dead && o.resource && o.kind == kind && o.comp == c)
            call(o.fn, w, kind, 0, c, ptr, o.ctx);
    }
    if (kind == TECS_ON_REMOVE)
        fire_hook(w, s, kind, 0, c, ptr);
    s->delivering--;
    sweep(w, s);
}

/* ---- observers ------------------------------------------------------- */

static tecs_err_t obs_validate_desc(tecs_world_t *w, const tecs_observer_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_observer_new: NULL description");
    if (d->callback == NULL)
        return tecs__err(w, TECS_EINVAL, "an observer needs a callback");
    if (d->event < TECS_ON_ADD || d->event > TECS_ON_DISABLE)
        return tecs__err(w, TECS_EINVAL, "unknown event %d", (int)d->event);
    if (d->query && (d->terms || d->term_count))
        return tecs__err(w, TECS_EINVAL, "an observer takes terms or a query, not both");
    if (d->query && tecs_query_world(d->query) != w)
        return tecs__err(w, TECS_EWORLD, "tecs_observer_new: query of another world");
    if (d->resource && (is_member_kind(d->event) || is_toggle_kind(d->event) || d->query ||
                        d->terms || d->term_count))
        return tecs__err(w, TECS_EINVAL, "a resource observer watches ADD / SET / REMOVE "
                                         "of a component, with no terms");
    if (is_member_kind(d->event)) {
        if (d->comp != 0)
            return tecs__err(w, TECS_EINVAL, "ENTER / LEAVE observers take no component");
        if (d->query == NULL && d->term_count == 0)
            return tecs__err(w, TECS_EINVAL, "ENTER / LEAVE observers need terms");
        return TECS_OK;
    }
    if (d->comp == 0)
        return tecs__err(w, TECS_EINVAL, "ADD / SET / REMOVE observers need a component");
    const tecs__comp *ci = tecs__comp_get(w, d->comp);
    if (ci == NULL)
        return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", d->comp);
    if (d->event == TECS_ON_SET && ci->size == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag: it has no SET events",
                         TECS__COMP(w, d->comp));
    if (is_toggle_kind(d->event) && !ci->enableable)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is not enableable: it has no "
                         "ENABLE / DISABLE events", TECS__COMP(w, d->comp));
    return TECS_OK;
}

/* A membership observer watches (d 1, or stops watching: -1) the events
** that change its row filters with no move (no SET events). */
static void watch_toggles(tecs_world_t *w, tecs_query_t *q, int32_t d)
{
    tecs__query_watch(q, d);
    w->obs->ndeps += tecs__query_has_deps(q) ? d : 0;
}

/* The observer's own query, from its terms or a copy of the user's query. */
static tecs_err_t make_query(tecs_world_t *w, const tecs_observer_desc_t *d, tecs_query_t **out)
{
    *out = NULL;
    tecs_query_desc_t qd = { .terms = d->terms, .term_count = d->term_count };
    if (d->query)
        qd.term_count = tecs_query_terms(d->query, &qd.terms);
    else if (d->term_count == 0 && d->terms == NULL)
        return TECS_OK;
    *out = tecs_query_new(w, &qd);
    if (*out && tecs__query_has_changes(*out)) {
        tecs__query_drop(*out);
        *out = NULL;
        return tecs__err(w, TECS_EINVAL, "an observer's terms take no change (events say "
                         "what changes)");
    }
    return *out ? TECS_OK : w->base.err;
}

tecs_observer_t tecs_observer_new(tecs_world_t *w, const tecs_observer_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || obs_validate_desc(w, d))
        return 0;
    if (w->obs && w->obs->tearing_down) {
        tecs__err(w, TECS_EBUSY, "no observer can be created while the world is freed");
        return 0;
    }
    tecs_query_t *q;
    if (make_query(w, d, &q))
        return 0;
    obs_state *s = state(w);
    if (s == NULL || (!is_member_kind(d->event) && grow_per(w, s, d->comp)) ||
        tecs__grow(w, (void **)&s->list, &s->cap, s->n + 1, sizeof *s->list)) {
        tecs__query_drop(q);
        return 0;
    }
    if (s->next_id == 0) {
        tecs__query_drop(q);
        tecs__err(w, TECS_ELIMIT, "observer ids exhausted");
        return 0;
    }
    obs_entry *o = &s->list[s->n++];
    *o = (obs_entry){ .id = s->next_id++, .kind = d->event, .comp = d->comp, .query = q,
                      .fn = d->callback, .ctx = d->ctx, .resource = d->resource };
    s->nlive++;
    if (is_member_kind(d->event)) {
        s->nmember++;
        watch_toggles(w, q, 1);
        update_watch_moves(w);
    } else if (d->resource) {
        s->per[d->comp].nres++;
    } else {
        w->comp.comps[d->comp].watch++;
        w->comp.comps[d->comp].watch_noset += d->event != TECS_ON_SET;
        tecs__toghots_close(&w->arch);  /* toggles of it have events now */
        s->per[d->comp].nobs++;
    }
    return o->id;
}

static obs_entry *find(const tecs_world_t *w, tecs_observer_t id)
{
    obs_state *s = w->obs;
    for (int32_t i = 0; s && id && i < s->n; i++)
        if (s->list[i].id == id && !s->list[i].dead)
            return &s->list[i];
    return NULL;
}

tecs_err_t tecs_observer_free(tecs_world_t *w, tecs_observer_t id)
{
    tecs_err_t err = tecs__enter_world_object(w);
    if (err)
        return err;
    obs_entry *o = find(w, id);
    if (o == NULL)
        return tecs__err(w, TECS_ENOENT, "observer %u does not exist", id);
    obs_state *s = w->obs;
    o->dead = true;
    s->any_dead = true;
    s->nlive--;
    if (is_member_kind(o->kind)) {
        s->nmember--;
        watch_toggles(w, o->query, -1);
        update_watch_moves(w);
    } else if (o->resource) {
        s->per[o->comp].nres--;
    } else {
        w->comp.comps[o->comp].watch--;
        w->comp.comps[o->comp].watch_noset -= o->kind != TECS_ON_SET;
        s->per[o->comp].nobs--;
    }
    sweep(w, s);
    return TECS_OK;
}

int32_t tecs_observer_count(const tecs_world_t *w)
{
    return w && w->obs ? w->obs->nlive : 0;
}

/* ---- structure verification ------------------------------------------ */

/* Verify the observers' counts and watches (tecs_world_check). */
static tecs_err_t obs_verify(tecs_world_t *w, void *ctx)
{
    const obs_state *s = ctx;
    int32_t live = 0, member = 0;
    for (int32_t i = 0; i < s->n; i++) {
        const obs_entry *o = &s->list[i];
        if (o->dead)
            continue;
        live++;
        member += is_member_kind(o->kind);
        if (!is_member_kind(o->kind) && tecs__comp_get(w, o->comp) == NULL)
            return tecs__err(w, TECS_ECORRUPT, "observer %u of an unknown component", o->id);
    }
    if (live != s->nlive || member != s->nmember)
        return tecs__err(w, TECS_ECORRUPT, "observer counts are off");
    if (member > 0 && !w->bus.watch_moves)
        return tecs__err(w, TECS_ECORRUPT, "membership observers without move events");
    for (int32_t c = 0; c < s->cap_per; c++) {
        int32_t n = 0, nres = 0;
        for (int32_t i = 0; i < s->n; i++) {
            const obs_entry *o = &s->list[i];
            bool of_c = !o->dead && !is_member_kind(o->kind) && o->comp == (tecs_comp_t)c;
            n += of_c && !o->resource;
            nres += of_c && o->resource;
        }
        uint32_t need = (uint32_t)n + any_hook(&s->per[c].hooks);
        if (n != s->per[c].nobs || nres != s->per[c].nres ||
            (need > 0 && w->comp.comps[c].watch < need) ||
            w->comp.comps[c].watch_noset > w->comp.comps[c].watch)
            return tecs__err(w, TECS_ECORRUPT, "component %d: observer count or watch off", c);
    }
    return TECS_OK;
}
