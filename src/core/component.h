/*
** component.h — the component registry (component.c). Its types, its state
** and its interface; then, in private.h's second pass (TECS__WORLD_DONE,
** once tecs_world_t is complete), its inline functions. Included by
** private.h only.
*/
#ifndef TECS_COMPONENT_H
#define TECS_COMPONENT_H

typedef struct tecs__comp {
    char *name;                 /* NULL: id not registered                  */
    size_t name_len;
    uint32_t size;
    uint32_t align;
    tecs_ctor_fn ctor;
    tecs_dtor_fn dtor;
    tecs_copy_fn copy;
    tecs_move_fn move;
    void *ctx;
    bool enableable;            /* a bit per row says enabled (tecs_enable) */
    bool row_ticks;             /* ticks per row, not per chunk             */
    bool hidden;                /* queries skip its entities unless a term
                                   names it                                 */
    bool inherit;               /* instances share their prefab's value     */
    union {                     /* a sparse set's listen points at listen   */
        tecs_handle_listen_t listen;
        struct {
            uint32_t watch;     /* listeners that want this one's events    */
            uint32_t watch_noset; /* of those, ones that want no SET events */
            uint32_t veto;      /* listeners that must approve its changes  */
        };
    };
    bool sparse;                /* storage TECS_STORAGE_SPARSE              */
    struct tecs__sparse *set;   /* sparse.c's set of its values; NULL until
                                   first used                               */
    tecs__meta *meta;           /* its description (meta.c); NULL: none     */
    uint64_t saved_hash;        /* registered by a snapshot load: the layout
                                   hash it was saved with (snapshot/)       */
    tecs_serialize_fn serialize;     /* snapshot/'s hooks (all optional)    */
    tecs_deserialize_fn deserialize;
    tecs_convert_fn convert;
    void *serial_ctx;
} tecs__comp;

/* A typed macro's check is tecs__size_wrong (below): is c a registered
** component whose values are not size bytes (an unknown c is left to the
** call, which reports it)? TECS__ANY_SIZE: no check (the untyped calls,
** which share the typed ones' bodies). tecs__err_size records the
** refusal of such a c: TECS_EINVAL, naming both sizes. */
#define TECS__ANY_SIZE ((size_t)-1)
tecs_err_t tecs__err_size(tecs_world_t *w, tecs_comp_t c, size_t size, const char *macro);

/* Record TECS_ENOCOMP: c is not a registered component. */
tecs_err_t tecs__err_nocomp(tecs_world_t *w, tecs_comp_t c);

/* Messages name a component as "component 'Position' (7)"; an id that is
** not registered reads "component '?' (7)":
** tecs__err(w, code, TECS__COMP_FMT " is a tag", TECS__COMP(w, c)). */
#define TECS__COMP_FMT "component '%s' (%u)"
#define TECS__COMP(w, c) tecs__comp_name((w), (c)), (unsigned)(c)
/* Some listener wants SET events of ci: a write (per row, for a write term
** of an iteration) is not reported for a component watched only for ADD /
** REMOVE. */
static inline bool tecs__wants_set(const tecs__comp *ci)
{
    return ci->watch > ci->watch_noset;
}
void tecs__comp_fini(tecs_world_t *w);

/* Lifecycle helpers: hooks when present, plain bytes otherwise. A hook
** runs between tecs__hook_begin and tecs__hook_end (R1): what it changes
** is queued. Nothing may hold a record pointer across these calls (a
** queued birth may grow the records); archetype rows and the registry
** stay put. */
void tecs__comp_ctor(tecs_world_t *w, const tecs__comp *ci, void *dst, int32_t n);
void tecs__comp_dtor(tecs_world_t *w, const tecs__comp *ci, void *p, int32_t n);
void tecs__comp_copy(tecs_world_t *w, const tecs__comp *ci, void *dst, const void *src,
                     int32_t n);
void tecs__comp_move(tecs_world_t *w, const tecs__comp *ci, void *dst, void *src, int32_t n);

typedef struct tecs__comp_state {
    tecs__comp *comps;          /* indexed by id                            */
    int32_t cap_comps;
    int32_t ncomps;             /* registered                               */
    int32_t nsparse;            /* of those, sparse ones                    */
    tecs_comp_t next_comp;      /* next automatic id                        */
} tecs__comp_state;

/* The registered component c, or NULL. The registry's inline functions
** take its state, not the world (the macros pass &w->comp). */
#define tecs__comp_get(w, c)  tecs__comp_get_in(&(w)->comp, (c))
static inline const tecs__comp *tecs__comp_get_in(const tecs__comp_state *s, tecs_comp_t c)
{
    if (c == 0 || c >= (tecs_comp_t)s->cap_comps || s->comps[c].name == NULL)
        return NULL;
    return &s->comps[c];
}

/* Is c a registered component whose values are not size bytes? */
#define tecs__size_wrong(w, c, size) tecs__size_wrong_in(&(w)->comp, (c), (size))
static inline bool tecs__size_wrong_in(const tecs__comp_state *s, tecs_comp_t c, size_t size)
{
    const tecs__comp *ci = size != TECS__ANY_SIZE ? tecs__comp_get_in(s, c) : NULL;
    return ci != NULL && ci->size != size;
}

/* The description of c, or NULL (unknown, or registered without one). */
#define tecs__comp_meta(w, c) tecs__comp_meta_in(&(w)->comp, (c))
static inline const tecs__meta *tecs__comp_meta_in(const tecs__comp_state *s, tecs_comp_t c)
{
    const tecs__comp *ci = tecs__comp_get_in(s, c);
    return ci ? ci->meta : NULL;
}

/* Is c a registered sparse component? */
#define tecs__comp_is_sparse(w, c) tecs__comp_is_sparse_in(&(w)->comp, (c))
static inline bool tecs__comp_is_sparse_in(const tecs__comp_state *s, tecs_comp_t c)
{
    return c < (tecs_comp_t)s->cap_comps && s->comps[c].sparse;
}

/* The name of c, or "?" (for TECS__COMP). */
#define tecs__comp_name(w, c) tecs__comp_name_in(&(w)->comp, (c))
static inline const char *tecs__comp_name_in(const tecs__comp_state *s, tecs_comp_t c)
{
    const tecs__comp *ci = tecs__comp_get_in(s, c);
    return ci ? ci->name : "?";
}

#endif /* TECS_COMPONENT_H */
