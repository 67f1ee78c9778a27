/*
** resource.c — world resources: one value per component id held by the
** world itself, on no entity (the time, the input, the settings, the level).
**
** The world keeps a slot per component id, allocated on the first set:
**
**     slots[c] = { ptr, raw, gen, flags }       flags: PRESENT, IN_HOOK,
**     ptr  -> [ value of comp c ]                      REMOVING
**             (a block of its own, TECS_MAX_ALIGN-aligned; NULL for a tag)
**
** Nothing else in the world sees a resource: no archetype, no query, no
** entity count, no index. The component's lifecycle hooks build and destroy
** the value (ctor then copy for a set that adds, copy for a set over it,
** dtor at remove and at world free); its on_add / on_set / on_remove hooks
** and the observers made with .resource fire with entity 0 (the observer
** add-on, through the bus).
**
** A resource is in no row, so a set or a remove never waits for rows to
** stop moving: every call applies at once, from any callback, lifecycle
** hooks included; the callbacks it fires run inside it, with the world
** deferred as every callback, and what they queue applies when the
** outermost call returns (tecs__settle). Its own re-entry is guarded per
** slot:
**
**   IN_HOOK    the value's own ctor / copy / dtor runs: it is half built,
**              so a set, remove or modified of it is refused (TECS_EBUSY);
**   REMOVING   its REMOVE callbacks and its destructor run: a remove is
**              already under way (TECS_OK, nothing more), a set or a
**              modified is refused (TECS_EBUSY);
**   gen        bumped when the resource is added: a callback of an ADD or
**              SET delivery may remove it (at once) or remove and set it
**              again; the delivery stops as soon as the value it announces
**              is gone (live() below), so no callback sees a freed value.
**
** A set over a present value writes in place, so a pointer from get stays
** valid until the resource is removed or the world freed. Reads record no
** error and write nothing to the world.
**
** At world free (on_close, the listener's, after every entity was announced
** destroyed), each resource in id order is announced (REMOVE, entity 0)
** and destroyed while every layer is still intact.
**
** Calls: base.c, component.c, event.c (it listens, and raises resource
** events, which the observer add-on delivers), command.c (settle).
*/
#include "../core/private.h"

enum {
    RES_PRESENT = 1,            /* the resource exists                      */
    RES_IN_HOOK = 2,            /* its ctor / copy / dtor runs              */
    RES_REMOVING = 4            /* its REMOVE callbacks or dtor run         */
};

typedef struct res_slot {
    void *ptr;                  /* the value; NULL for a tag or when absent */
    void *raw;                  /* the block to free                        */
    uint32_t gen;               /* bumped each time it is added             */
    uint8_t flags;              /* RES_*                                    */
} res_slot;

struct tecs__res_state {
    res_slot *slots;            /* by component id, cap long                */
    int32_t cap;
    int32_t count;              /* present                                  */
};

/* The slot of c, or NULL if none was ever made. Slots move when another
** resource is added, so none is held across a callback. */
static res_slot *slot_of(const tecs_world_t *w, tecs_comp_t c)
{
    const struct tecs__res_state *s = w->res;
    return s && c < (tecs_comp_t)s->cap ? &s->slots[c] : NULL;
}

/* Is the resource c that was added as generation gen still there? */
static bool live(tecs_world_t *w, tecs_comp_t c, uint32_t gen)
{
    const res_slot *r = slot_of(w, c);
    return r && (r->flags & RES_PRESENT) && r->gen == gen;
}

static void flag(tecs_world_t *w, tecs_comp_t c, uint8_t f, bool on)
{
    res_slot *r = slot_of(w, c);
    r->flags = (uint8_t)(on ? r->flags | f : r->flags & ~f);
}

/* Fire kind for resource c (its value at p, added as generation gen) on
** the bus (the observer add-on delivers it); the delivery stops if a
** callback removes it. */
static void fire(tecs_world_t *w, tecs_event_kind_t kind, tecs_comp_t c, void *p, uint32_t gen)
{
    tecs__emit_resource(w, (int)kind, c, p, live, gen);
}

/* Refuse a change of c while its own hooks or removal run. */
static tecs_err_t busy(tecs_world_t *w, tecs_comp_t c, const res_slot *r)
{
    return tecs__err(w, TECS_EBUSY, "resource " TECS__COMP_FMT " %s", TECS__COMP(w, c),
                     r->flags & RES_REMOVING ? "is being removed"
                                             : "is being built or destroyed by its own hook");
}

static void on_close(tecs_world_t *w, void *ctx);
static tecs_err_t res_verify(tecs_world_t *w, void *ctx);

/* Make room for slot c; the state is made, and its listener installed,
** on first use. */
static tecs_err_t res_reserve(tecs_world_t *w, tecs_comp_t c)
{
    if (w->res == NULL) {
        tecs__listener l = { .on_close = on_close, .verify = res_verify };
        w->res = tecs__plug(w, sizeof *w->res, &l, "the resource table");
        if (w->res == NULL)
            return tecs__err(w, TECS_ENOMEM, "out of memory making the resource table");
    }
    struct tecs__res_state *s = w->res;
    int32_t old = s->cap;
    if (c < (tecs_comp_t)old)
        return TECS_OK;
    if (tecs__grow(w, (void **)&s->slots, &s->cap, (int32_t)c + 1, sizeof *s->slots))
        return tecs__err(w, TECS_ENOMEM, "out of memory adding resource " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    memset(s->slots + old, 0, (size_t)(s->cap - old) * sizeof *s->slots);
    return TECS_OK;
}

/* Add resource c with value (NULL for a tag): build it, then ADD and SET. */
static tecs_err_t add(tecs_world_t *w, tecs_comp_t c, const tecs__comp *ci, const void *value)
{
    void *raw = NULL, *p = NULL;
    if (res_reserve(w, c))
        return w->base.err;
    if (ci->size > 0 && (p = tecs__alloc_aligned(w, ci->size, &raw)) == NULL)
        return tecs__err(w, TECS_ENOMEM, "out of memory adding resource " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    res_slot *r = slot_of(w, c);
    r->ptr = p;
    r->raw = raw;
    uint32_t gen = ++r->gen;
    r->flags = RES_PRESENT | RES_IN_HOOK;
    w->res->count++;
    if (ci->size > 0) {
        tecs__comp_ctor(w, ci, p, 1);
        tecs__comp_copy(w, ci, p, value, 1);
    }
    flag(w, c, RES_IN_HOOK, false);
    fire(w, TECS_ON_ADD, c, p, gen);
    if (ci->size > 0 && live(w, c, gen))
        fire(w, TECS_ON_SET, c, p, gen);
    return TECS_OK;
}

tecs_err_t tecs_resource_set(tecs_world_t *w, tecs_comp_t c, const void *value)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    const tecs__comp *ci = tecs__comp_get(w, c);
    if (ci == NULL)
        return tecs__err_nocomp(w, c);
    if (value == NULL && ci->size > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_resource_set: NULL value for " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    res_slot *r = slot_of(w, c);
    if (r == NULL || !(r->flags & RES_PRESENT)) {
        err = add(w, c, ci, value);
    } else if (r->flags & (RES_IN_HOOK | RES_REMOVING)) {
        return busy(w, c, r);
    } else if (ci->size > 0) {
        void *p = r->ptr;
        uint32_t gen = r->gen;
        r->flags |= RES_IN_HOOK;
        tecs__comp_copy(w, ci, p, value, 1);
        flag(w, c, RES_IN_HOOK, false);
        fire(w, TECS_ON_SET, c, p, gen);
    }
    tecs__settle(w);
    return err;
}

/* The present resource c for a read, or NULL (absent, unknown, inside the
** allocator). Writes nothing to the world. */
static const res_slot *read_slot(const tecs_world_t *w, tecs_comp_t c)
{
    if (w == NULL || w->base.closed == TECS__IN_ALLOC)
        return NULL;
    const res_slot *r = slot_of(w, c);
    return r && (r->flags & RES_PRESENT) ? r : NULL;
}

/* The value of c, or NULL (as read_slot, or a tag). */
static void *res_value_of(const tecs_world_t *w, tecs_comp_t c)
{
    const res_slot *r = read_slot(w, c);
    return r ? r->ptr : NULL;
}

const void *tecs_resource_get(const tecs_world_t *w, tecs_comp_t c)
{
    return res_value_of(w, c);
}

void *tecs_resource_get_mut(tecs_world_t *w, tecs_comp_t c)
{
    /* Workers share the resources: none of them may write one. */
    return w && tecs__in_worker(w) ? NULL : res_value_of(w, c);
}

tecs_err_t tecs__resource_set_sized(tecs_world_t *w, tecs_comp_t c, const void *value,
                                    size_t size)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (tecs__size_wrong(w, c, size))
        return tecs__err_size(w, c, size, "TECS_RESOURCE_SET");
    return tecs_resource_set(w, c, value);
}

void *tecs__resource_get_sized(const tecs_world_t *w, tecs_comp_t c, size_t size, bool write)
{
    /* A read records nothing: the value found (which read_slot refuses
    ** inside the allocator), then its size. */
    void *p = w == NULL || (write && tecs__in_worker(w)) ? NULL : res_value_of(w, c);
    return p && tecs_component_size(w, c) == size ? p : NULL;
}

bool tecs_resource_has(const tecs_world_t *w, tecs_comp_t c)
{
    return read_slot(w, c) != NULL;
}

/* The start of the calls that change the present resource c: *r is its
** slot when the call may go on. */
static tecs_err_t enter_present(tecs_world_t *w, tecs_comp_t c, res_slot **r)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (tecs__comp_get(w, c) == NULL)
        return tecs__err_nocomp(w, c);
    *r = slot_of(w, c);
    if (*r == NULL || !((*r)->flags & RES_PRESENT))
        return tecs__err(w, TECS_ENOENT, "the world has no resource " TECS__COMP_FMT,
                         TECS__COMP(w, c));
    return TECS_OK;
}

/* Announce, destroy and free the present resource c. */
static void drop(tecs_world_t *w, tecs_comp_t c)
{
    const tecs__comp *ci = &w->comp.comps[c];
    res_slot *r = slot_of(w, c);
    r->flags |= RES_REMOVING;
    fire(w, TECS_ON_REMOVE, c, r->ptr, r->gen);
    r = slot_of(w, c);          /* the callbacks may have moved the slots */
    if (ci->size > 0) {
        r->flags |= RES_IN_HOOK;
        tecs__comp_dtor(w, ci, r->ptr, 1);
        r = slot_of(w, c);
        tecs__free_aligned(w, r->raw, ci->size);
    }
    r->ptr = r->raw = NULL;
    r->flags = 0;
    w->res->count--;
}

tecs_err_t tecs_resource_remove(tecs_world_t *w, tecs_comp_t c)
{
    res_slot *r = NULL;
    tecs_err_t err = enter_present(w, c, &r);
    if (err)
        return err;
    if (r->flags & RES_REMOVING)
        return TECS_OK;
    if (r->flags & RES_IN_HOOK)
        return busy(w, c, r);
    drop(w, c);
    tecs__settle(w);
    return TECS_OK;
}

tecs_err_t tecs_resource_modified(tecs_world_t *w, tecs_comp_t c)
{
    res_slot *r = NULL;
    tecs_err_t err = enter_present(w, c, &r);
    if (err)
        return err;
    if (r->flags & (RES_IN_HOOK | RES_REMOVING))
        return busy(w, c, r);
    if (w->comp.comps[c].size == 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag and has no value",
                         TECS__COMP(w, c));
    fire(w, TECS_ON_SET, c, r->ptr, r->gen);
    tecs__settle(w);
    return TECS_OK;
}

int32_t tecs_resource_count(const tecs_world_t *w)
{
    return w && w->res ? w->res->count : 0;
}

/* ---- world free and verification ------------------------------------- */

/* Announce and destroy every resource, free the table (world free, after
** every entity was announced destroyed). */
static void on_close(tecs_world_t *w, void *ctx)
{
    struct tecs__res_state *s = ctx;
    for (int32_t c = 0; c < s->cap; c++)
        if (s->slots[c].flags & RES_PRESENT)
            drop(w, (tecs_comp_t)c);
    tecs__free(w, s->slots, (size_t)s->cap * sizeof *s->slots);
    tecs__free(w, s, sizeof *s);
    w->res = NULL;
}

/* Verify the resource table (tecs_world_check). */
static tecs_err_t res_verify(tecs_world_t *w, void *ctx)
{
    const struct tecs__res_state *s = ctx;
    int32_t n = 0;
    for (int32_t c = 0; c < s->cap; c++) {
        const res_slot *r = &s->slots[c];
        const tecs__comp *ci = tecs__comp_get(w, (tecs_comp_t)c);
        if (!(r->flags & RES_PRESENT)) {
            if (r->flags || r->ptr || r->raw)
                return tecs__err(w, TECS_ECORRUPT, "resource slot %d is absent but set", c);
            continue;
        }
        n++;
        if (ci == NULL)
            return tecs__err(w, TECS_ECORRUPT, "resource of unknown component %d", c);
        if ((ci->size > 0) != (r->ptr != NULL) ||
            (r->ptr && ((uintptr_t)r->ptr % ci->align || (char *)r->ptr < (char *)r->raw)))
            return tecs__err(w, TECS_ECORRUPT, "resource " TECS__COMP_FMT ": bad value block",
                             TECS__COMP(w, (tecs_comp_t)c));
    }
    if (n != s->count)
        return tecs__err(w, TECS_ECORRUPT, "resource count %d, %d present", s->count, n);
    return TECS_OK;
}
