/*
** component.c — the component registry.
**
** A component is registered at run time: a name, a size, an alignment and
** optional lifecycle hooks. The registry is an array indexed by component id
** (ids are small: 1..TECS_MAX_COMPONENTS-1), so a lookup by id is one load:
**
**     comps[id] = { name, size, align, ctor, dtor, copy, move, ctx,
**                   enableable, watch, watch_noset, veto, sparse, set, meta }
**
** An entry whose name is NULL is a free id. A size of 0 makes a tag: it is
** part of an archetype's component set but has no column. An enableable
** component (a tag too) has a bit column in each archetype that holds it
** (archetype.c).
**
** Without hooks a component is plain data: constructed by zero-filling,
** copied and moved with memcpy, destroyed by doing nothing. The helpers below
** take that choice once, so the rest of the library calls one function per
** lifecycle step, always for a whole run of values.
**
** The three counters at the end of an entry belong to the listeners of the
** bus (event.c), which keep them: how many listeners want this component's
** events, how many of those want no SET events, how many may veto its
** changes. They live here, beside the size and hooks, because the engine's
** hot paths read them together with those, one cache line per component.
** So does a sparse component's set (`set`), which sparse.c makes when the
** component is first used and owns: a lookup reaches it in the same load.
**
** A component registered with a description (its fields) keeps meta.c's
** checked copy in `meta`, made before anything else is, so a refused
** description leaves the registry as it was.
**
** Calls: base.c, meta.c.
*/
#include "private.h"

static bool is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

/* A sparse set points at its component's listener counts, which handles
** read there: point them at the registry again after it may have moved. */
static void relisten(tecs_world_t *w, int32_t n)
{
    for (int32_t i = 1; i < n; i++)
        if (w->comp.comps[i].set != NULL)
            w->comp.comps[i].set->listen = &w->comp.comps[i].listen;
}

/* The id registered under name, or 0. */
static tecs_comp_t find_name(const tecs_world_t *w, const char *name)
{
    size_t len = strlen(name);
    for (int32_t i = 1; i < w->comp.cap_comps; i++) {
        const tecs__comp *ci = &w->comp.comps[i];
        if (ci->name && ci->name_len == len && memcmp(ci->name, name, len) == 0)
            return (tecs_comp_t)i;
    }
    return 0;
}

static tecs_err_t validate_desc(tecs_world_t *w, const tecs_component_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_component_new: NULL description");
    if (d->name == NULL || d->name[0] == '\0')
        return tecs__err(w, TECS_EINVAL, "a component needs a name");
    if (d->size > TECS_MAX_COMPONENT_SIZE)
        return tecs__err(w, TECS_EINVAL, "component '%s' is %zu bytes, above "
                         "TECS_MAX_COMPONENT_SIZE (%d)", d->name, d->size,
                         TECS_MAX_COMPONENT_SIZE);
    size_t align = d->align ? d->align : 1;
    if (!is_pow2(align) || align > TECS_MAX_ALIGN)
        return tecs__err(w, TECS_EINVAL, "component '%s': alignment %zu is not a power of two "
                         "up to TECS_MAX_ALIGN (%d)", d->name, align, TECS_MAX_ALIGN);
    /* Values sit side by side in a column, handed out as a C array. */
    if (d->size % align)
        return tecs__err(w, TECS_EINVAL, "component '%s': size %zu is not a multiple of its "
                         "alignment %zu (as C's sizeof always is)", d->name, d->size, align);
    if (d->size == 0 && (d->ctor || d->dtor || d->copy || d->move))
        return tecs__err(w, TECS_EINVAL, "tag '%s' (size 0) cannot have lifecycle hooks",
                         d->name);
    if (d->storage != TECS_STORAGE_TABLE && d->storage != TECS_STORAGE_SPARSE)
        return tecs__err(w, TECS_EINVAL, "component '%s': storage %d is not a tecs_storage_t",
                         d->name, (int)d->storage);
    if (d->row_ticks && d->storage == TECS_STORAGE_SPARSE)
        return tecs__err(w, TECS_EINVAL, "component '%s': a sparse component's ticks are its "
                         "set's; row_ticks is for the table store", d->name);
    if (d->enableable && d->storage == TECS_STORAGE_SPARSE)
        return tecs__err(w, TECS_EINVAL, "component '%s': a sparse component is added and "
                         "removed without a move, so it is not enableable", d->name);
    if (d->hidden && (d->size != 0 || d->storage != TECS_STORAGE_TABLE || d->enableable ||
                      d->row_ticks))
        return tecs__err(w, TECS_EINVAL, "component '%s': only a tag of the table store "
                         "(not enableable, no row ticks) may be hidden", d->name);
    if (d->inherit && (d->size == 0 || d->storage != TECS_STORAGE_TABLE))
        return tecs__err(w, TECS_EINVAL, "component '%s': only a component with a value in "
                         "the table store is inherited", d->name);
    if (d->id >= TECS_MAX_COMPONENTS)
        return tecs__err(w, TECS_EINVAL, "component '%s': id %u is out of range (1..%d)",
                         d->name, d->id, TECS_MAX_COMPONENTS - 1);
    if (find_name(w, d->name) != 0)
        return tecs__err(w, TECS_EEXIST, "a component named '%s' is registered already "
                         "(id %u)", d->name, find_name(w, d->name));
    if (d->id != 0 && tecs__comp_get(w, d->id) != NULL)
        return tecs__err(w, TECS_EEXIST, "component '%s': id %u is taken by "
                         TECS__COMP_FMT, d->name, d->id, TECS__COMP(w, d->id));
    return TECS_OK;
}

/* The id a registration gets: the wanted one, or the next free one. */
static tecs_comp_t pick_id(tecs_world_t *w, const tecs_component_desc_t *d)
{
    if (d->id != 0)
        return d->id;
    while (w->comp.next_comp < TECS_MAX_COMPONENTS && tecs__comp_get(w, w->comp.next_comp) != NULL)
        w->comp.next_comp++;
    return w->comp.next_comp < TECS_MAX_COMPONENTS ? w->comp.next_comp : 0;
}

tecs_comp_t tecs_component_new(tecs_world_t *w, const tecs_component_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w))
        return 0;
    tecs__meta *meta;
    if (validate_desc(w, d) != TECS_OK || tecs__meta_new(w, d, &meta) != TECS_OK)
        return 0;
    tecs_comp_t id = pick_id(w, d);
    if (id == 0) {
        tecs__err(w, TECS_ELIMIT, "component '%s': the world has %d components, the "
                  "limit", d->name, TECS_MAX_COMPONENTS - 1);
        tecs__meta_free(w, meta);
        return 0;
    }
    size_t len = strlen(d->name);
    char *name = tecs__alloc(w, len + 1);
    if (name == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory registering component '%s'", d->name);
        tecs__meta_free(w, meta);
        return 0;
    }
    int32_t old_cap = w->comp.cap_comps;
    if (tecs__grow(w, (void **)&w->comp.comps, &w->comp.cap_comps, (int32_t)id + 1,
                   sizeof *w->comp.comps)) {
        tecs__free(w, name, len + 1);
        tecs__meta_free(w, meta);
        return 0;
    }
    relisten(w, old_cap);
    memset(w->comp.comps + old_cap, 0,
           (size_t)(w->comp.cap_comps - old_cap) * sizeof *w->comp.comps);
    memcpy(name, d->name, len + 1);
    w->comp.comps[id] = (tecs__comp){
        .name = name, .name_len = len, .size = (uint32_t)d->size,
        .align = d->align ? (uint32_t)d->align : 1,
        .ctor = d->ctor, .dtor = d->dtor, .copy = d->copy, .move = d->move,
        .ctx = d->hook_ctx, .enableable = d->enableable,
        .row_ticks = d->row_ticks, .hidden = d->hidden, .inherit = d->inherit,
        .sparse = d->storage == TECS_STORAGE_SPARSE, .meta = meta,
    };
    w->comp.ncomps++;
    w->comp.nsparse += d->storage == TECS_STORAGE_SPARSE;
    return id;
}

tecs_comp_t tecs_component_lookup(tecs_world_t *w, const char *name)
{
    if (w == NULL || tecs__enter_read(w))
        return 0;
    if (name == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_component_lookup: NULL name");
        return 0;
    }
    tecs_comp_t id = find_name(w, name);
    if (id == 0)
        tecs__err(w, TECS_ENOENT, "no component named '%s'", name);
    return id;
}

const char *tecs_component_name(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci ? ci->name : NULL;
}

size_t tecs_component_size(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci ? ci->size : 0;
}

tecs_storage_t tecs_component_storage(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci && ci->sparse ? TECS_STORAGE_SPARSE : TECS_STORAGE_TABLE;
}

bool tecs_component_enableable(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci && ci->enableable;
}

bool tecs_component_hidden(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci && ci->hidden;
}

bool tecs_component_inherit(const tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = w ? tecs__comp_get(w, c) : NULL;
    return ci && ci->inherit;
}

void tecs__comp_fini(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->comp.cap_comps; i++)
        if (w->comp.comps[i].name) {
            tecs__free(w, w->comp.comps[i].name, w->comp.comps[i].name_len + 1);
            tecs__meta_free(w, w->comp.comps[i].meta);
        }
    tecs__free(w, w->comp.comps, (size_t)w->comp.cap_comps * sizeof *w->comp.comps);
    w->comp.comps = NULL;
    w->comp.cap_comps = 0;
}

/* ---- lifecycle ------------------------------------------------------- */

void tecs__comp_ctor(tecs_world_t *w, const tecs__comp *ci, void *dst, int32_t n)
{
    if (ci->ctor == NULL) {
        memset(dst, 0, (size_t)n * ci->size);
        return;
    }
    tecs_err_t outer_err = tecs__hook_begin(w);
    ci->ctor(dst, n, ci->ctx);
    tecs__hook_end(w, outer_err);
}

void tecs__comp_dtor(tecs_world_t *w, const tecs__comp *ci, void *p, int32_t n)
{
    if (ci->dtor == NULL)
        return;
    tecs_err_t outer_err = tecs__hook_begin(w);
    ci->dtor(p, n, ci->ctx);
    tecs__hook_end(w, outer_err);
}

void tecs__comp_copy(tecs_world_t *w, const tecs__comp *ci, void *dst, const void *src,
                     int32_t n)
{
    if (ci->copy == NULL) {
        memcpy(dst, src, (size_t)n * ci->size);
        return;
    }
    tecs_err_t outer_err = tecs__hook_begin(w);
    ci->copy(dst, src, n, ci->ctx);
    tecs__hook_end(w, outer_err);
}

void tecs__comp_move(tecs_world_t *w, const tecs__comp *ci, void *dst, void *src, int32_t n)
{
    if (ci->move == NULL) {
        memcpy(dst, src, (size_t)n * ci->size);
        return;
    }
    tecs_err_t outer_err = tecs__hook_begin(w);
    ci->move(dst, src, n, ci->ctx);
    tecs__hook_end(w, outer_err);
}

tecs_err_t tecs__err_size(tecs_world_t *w, tecs_comp_t c, size_t size, const char *macro)
{
    return tecs__err(w, TECS_EINVAL, "%s: " TECS__COMP_FMT " is %zu bytes, the type given is %zu",
                     macro, TECS__COMP(w, c), (size_t)tecs__comp_get(w, c)->size, size);
}

/* Record TECS_ENOCOMP for c. */
tecs_err_t tecs__err_nocomp(tecs_world_t *w, tecs_comp_t c)
{
    return tecs__err(w, TECS_ENOCOMP, "component %u is unknown", c);
}
