/*
** tinyecs/index.h — field indexes, where filters and caches (the index
** add-on; docs/indexes.md). Conventions as tinyecs.h's.
*/
#ifndef TINYECS_INDEX_H
#define TINYECS_INDEX_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================== */
/* Field indexes and where                                              */
/* ==================================================================== */

/*
** A field index maps the value of one field of one component to the
** entities that have it, for every entity with the component whatever its
** archetype. It is kept true by tecs_add / tecs_remove / tecs_set /
** tecs_destroy / tecs_modified, births, and by writes through a write term
** of a query iteration (re-keyed when the iterator leaves the rows). A
** write through a raw pointer (tecs_get_mut, a pointer kept past its
** iteration) must be followed by tecs_modified. An index keeps the values
** of disabled components (enableable ones): a where iteration skips them
** through its query's toggle terms, as every iteration does, and the
** lookups and counts of the index see them.
**
** An index over a value relation's pairs (tinyecs/relation.h) names the
** pairs' target in desc.target: it holds each entity's value of its
** (comp, target) pair, or with TECS_WILDCARD, for an exclusive relation,
** of its one pair. It follows the pair calls, a target's cleanup,
** snapshot loads and deltas; while its target is dead it is empty and
** stays valid (docs/relationships.md, "Indexes over a relation's value").
**
** Float keys (float and double fields) are compared as doubles; -0 equals
** +0. A NaN key is stored and is matched only by `!=` and by `not`: NaN is
** neither equal to, below, above nor between anything, as in IEEE
** comparisons; so a unique index holds any number of NaN keys (two NaN
** never collide). NaN as a filter or lookup key is refused (TECS_EINVAL).
*/

typedef struct tecs_index_t tecs_index_t;

/** Index kinds. */
typedef enum tecs_index_kind_t {
    TECS_INDEX_HASH = 0,        /* == != in                                   */
    TECS_INDEX_ORDERED,         /* == != < <= > >= between in; key order     */
    TECS_INDEX_SPATIAL          /* radius and box over two float fields      */
} tecs_index_kind_t;

/** The C type of an indexed field. An enum is indexed as its integer type. */
typedef enum tecs_key_type_t {
    TECS_KEY_I8 = 1, TECS_KEY_I16, TECS_KEY_I32, TECS_KEY_I64,
    TECS_KEY_U8, TECS_KEY_U16, TECS_KEY_U32, TECS_KEY_U64,
    TECS_KEY_FLOAT, TECS_KEY_DOUBLE,
    TECS_KEY_STR,               /* const char *: the index copies the string; */
                                /* NULL is a key, below every string          */
    TECS_KEY_CHARS              /* char[N] (N = size, <= TECS_MAX_KEY_CHARS): */
                                /* up to the first NUL or N bytes             */
} tecs_key_type_t;

#define TECS_MAX_KEY_CHARS 1024

/** An index description; zero means default where a default exists. */
typedef struct tecs_index_desc_t {
    tecs_comp_t comp;           /* the component                              */
    tecs_index_kind_t kind;
    tecs_key_type_t type;       /* spatial: TECS_KEY_FLOAT                    */
    size_t offset;              /* the field (spatial: x)                     */
    size_t offset_y;            /* spatial: the y field                       */
    size_t size;                /* TECS_KEY_CHARS: N                          */
    float cell_size;            /* spatial: grid cell side, > 0               */
    bool unique;                /* at most one entity per key (not spatial)   */
    const char *field;          /* instead of type and offset: the field by
                                   name (a dotted path for nested ones) in
                                   the component's description               */
    const char *field_y;        /* spatial, with field: the y field by name   */
    tecs_entity_t target;       /* 0 for a component; for a relation, whose
                                   value it indexes, the pairs' target: a
                                   live entity t (each entity's value of
                                   (comp, t)) or TECS_WILDCARD (an exclusive
                                   relation's one pair, whatever its target) */
} tecs_index_desc_t;

/** A key for lookups and filters; make one with tecs_key_int / _uint /
 *  _real / _str. Its class must fit the index: int for signed fields,
 *  uint for unsigned ones, real for float and double, str for strings. */
typedef struct tecs_key_t {
    int32_t cls;                /* TECS_KEYC_*                                */
    union {
        int64_t i;
        uint64_t u;
        double d;
        const char *s;
    } v;
} tecs_key_t;

enum { TECS_KEYC_INT = 1, TECS_KEYC_UINT, TECS_KEYC_REAL, TECS_KEYC_STR };

/** A key for a signed integer (or enum) index. */
static inline tecs_key_t tecs_key_int(int64_t i)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_INT;
    k.v.i = i;
    return k;
}

/** A key for an unsigned integer index. */
static inline tecs_key_t tecs_key_uint(uint64_t u)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_UINT;
    k.v.u = u;
    return k;
}

/** A key for a float or double index. */
static inline tecs_key_t tecs_key_real(double d)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_REAL;
    k.v.d = d;
    return k;
}

/** A key for a string index (NULL is the NULL key). */
static inline tecs_key_t tecs_key_str(const char *s)
{
    tecs_key_t k;
    k.cls = TECS_KEYC_STR;
    k.v.s = s;
    return k;
}

/**
 * Create an index and fill it with every entity that has the component now.
 * It follows every change from then on. A burst of sets of a non-unique
 * index's field (over n/16 entries of an ordered index, n/4 of a hash or
 * spatial one, since its last use, no cache depending on it) is left to one
 * rebuild at its next use, which then costs O(n) and may fail with
 * TECS_ENOMEM; see docs/indexes.md.
 * @return the index, owned by the world (freed with it or by
 * tecs_index_free); NULL on error: TECS_EINVAL (NULL desc, bad kind or type,
 * a field that does not fit inside the component, a tag, cell_size <= 0,
 * unique spatial; a target for a component that is not a relation, none
 * for a relation, a tag relation or ChildOf, TECS_WILDCARD for a relation
 * that is not exclusive), TECS_EDEAD (the target is not alive),
 * TECS_ENOCOMP, TECS_EEXIST (unique, and two entities already share a
 * key), TECS_ENOMEM. A unique index over a relation's value makes
 * tecs_pair_set and tecs_pair_add refuse a taken key (TECS_EEXIST,
 * nothing changed).
 * A field given by name (desc.field, and desc.field_y for a spatial index)
 * takes its offset and key type from the description: i8..u64 give the
 * integer key of their type, bool u8, entity u64, f32 float, f64 double,
 * string TECS_KEY_STR. TECS_EINVAL when the component has no description,
 * no field has the name, the field is an array or a nested component, or
 * type, offset, offset_y or size are given beside the name. The index does
 * not keep the name pointers.
 */
tecs_index_t *tecs_index_new(tecs_world_t *world, const tecs_index_desc_t *desc);

/**
 * Free an index. NULL does nothing. Filters that name it fail from then on
 * (TECS_ENOENT). @return TECS_OK, or TECS_EBUSY with nothing freed while a
 * cache uses it (free the cache first) or while an iteration over a filter
 * naming it is open.
 */
tecs_err_t tecs_index_free(tecs_index_t *index);

/** @return the entities in the index (every entity with the component),
 *  or -1 on error: NULL, TECS_ENOMEM while rebuilding after a failed
 *  update, TECS_EBUSY (see the conventions). */
int32_t tecs_index_count(tecs_index_t *index);

/**
 * The entity with this key in a unique index.
 * @return it, or 0: TECS_ENOENT (no such key), TECS_EINVAL (not a unique
 * index, wrong key class, NaN), TECS_ENOMEM.
 */
tecs_entity_t tecs_index_lookup(tecs_index_t *index, tecs_key_t key);

/** Comparisons for tecs_filter_cmp. */
typedef enum tecs_cmp_t {
    TECS_EQ = 0, TECS_NE, TECS_LT, TECS_LE, TECS_GT, TECS_GE
} tecs_cmp_t;

/** A condition in a filter: its handle, or -1 after an error. */
typedef int32_t tecs_cond_t;

/**
 * Create an empty filter (it matches every entity until a condition is
 * added). Conditions are added with tecs_filter_cmp / _between / _in /
 * _radius / _box and combined with tecs_filter_and / _or / _not; the last
 * condition made is the filter's root unless tecs_filter_root says
 * otherwise. The first error while building is
 * kept (tecs_filter_error) and makes every use of the filter fail with it.
 * Building allocates per condition, never per entity.
 * @return the filter, owned by the caller (tecs_filter_free; the world frees
 * what is left); NULL when out of memory. The first index or filter of a
 * world also sets up the world's small index registry, kept until it is freed.
 */
tecs_filter_t *tecs_filter_new(tecs_world_t *world);

/** Free a filter; NULL does nothing. Never refused: it is freed at once or,
 *  while an iteration over it is open, when that iteration ends (it must
 *  not be used again either way). */
void tecs_filter_free(tecs_filter_t *filter);

/**
 * Empty a filter for another query: its conditions, keys, order and
 * building error go, as if it were new; its memory stays. A filter reset
 * and built again for every search (one query per entity) allocates
 * nothing once it has held the largest of them. Handles of the conditions
 * made before are void (the next condition is 0 again).
 * @return TECS_OK; TECS_EINVAL (NULL); TECS_EBUSY while an iteration over
 * the filter is open (nothing changed), or where building a filter is
 * refused (the world closed: freed, reset, in its allocator, a worker).
 * Callbacks: allowed wherever its conditions may be built, every callback
 * included (an each-function of an iteration over this very filter gets
 * TECS_EBUSY).
 */
tecs_err_t tecs_filter_reset(tecs_filter_t *filter);

/** The first error met while building the filter (TECS_OK if none). */
tecs_err_t tecs_filter_error(const tecs_filter_t *filter);

/**
 * Compare the index's key with key. Ordered indexes take every comparison;
 * hash indexes take TECS_EQ and TECS_NE (TECS_LT, _LE, _GT, _GE and
 * tecs_filter_between on a hash index are TECS_EINVAL). TECS_NE means the
 * same on both: the entities that have the component and whose key differs
 * from key (a NaN key differs from every key); unlike tecs_filter_not of
 * TECS_EQ, an entity without the component does not match. A hash index
 * drives TECS_NE by reading all its entries: O(n), as an ordered index does.
 * @return the condition, or -1 (TECS_EINVAL: wrong kind, class or NaN;
 * TECS_EWORLD: index of another world; TECS_ENOMEM).
 */
tecs_cond_t tecs_filter_cmp(tecs_filter_t *filter, tecs_index_t *index, tecs_cmp_t cmp,
                            tecs_key_t key);

/** lo <= key <= hi on an ordered index; lo > hi matches nothing.
 *  @return as tecs_filter_cmp. */
tecs_cond_t tecs_filter_between(tecs_filter_t *filter, tecs_index_t *index, tecs_key_t lo,
                                tecs_key_t hi);

/** key is one of n keys (copied; repeats are harmless), hash or ordered;
 *  n = 0 matches nothing. A hash index drives it by one probe per key.
 *  @return as tecs_filter_cmp. */
tecs_cond_t tecs_filter_in(tecs_filter_t *filter, tecs_index_t *index, int32_t n,
                           const tecs_key_t *keys);

/** Spatial: the point is within distance r of (x, y) (inclusive): the
 *  circle and the test of tecs_index_near, which refuses the same circles.
 *  @return as tecs_filter_cmp; TECS_EINVAL also for x or y NaN or
 *  infinite, r negative or NaN. */
tecs_cond_t tecs_filter_radius(tecs_filter_t *filter, tecs_index_t *index, float x, float y,
                               float r);

/** Spatial: x0 <= x <= x1 and y0 <= y <= y1; an infinite bound leaves its
 *  side open, and x0 > x1 or y0 > y1 matches nothing. A point with a NaN
 *  coordinate is in no box. @return as tecs_filter_cmp; TECS_EINVAL also
 *  for a NaN bound. */
tecs_cond_t tecs_filter_box(tecs_filter_t *filter, tecs_index_t *index, float x0, float y0,
                            float x1, float y1);

/**
 * The entities of a spatial index whose point is within distance r of
 * (x, y), inclusive: the test of tecs_filter_radius, without a filter, a
 * query or an iteration. It allocates nothing and writes nothing but out,
 * so a parallel system's worker may call it (and a split's part).
 * The circle: x and y finite, r >= 0, r infinite included. A point is in
 * it when (px - x)^2 + (py - y)^2 <= r^2, in doubles (no finite input
 * overflows there): an infinite r takes every point, infinite ones too;
 * a point with a NaN coordinate is in no circle.
 * The first min(n, cap) go to out[0..), in the index's grid order: cells
 * by increasing x, then y, each cell's points in the index's own order
 * (which follows the history of changes: the same changes give the same
 * order); when the circle covers more grid cells than the index has
 * points, in the index's entry order. Places of out (and of xy) from n
 * up to cap may be written too, never at or past cap. Cost: O(cells +
 * points in them), the cells never more than the index's points.
 * @return n, the number of such entities (call again with cap >= n for
 * all of them), or -1 on error: TECS_EINVAL (not a spatial index, r
 * negative or NaN, x or y NaN or infinite, cap negative, out NULL with
 * cap > 0), TECS_ENOMEM (rebuilding the index after a burst of changes),
 * TECS_EBUSY (the world is closed: freed, reset, in its allocator). NULL
 * index: -1.
 * Callbacks: allowed from every callback (observers, hooks, systems,
 * iterations). From a worker (while a parallel system, a concurrent wave
 * or a split runs) it records no error (the world is the workers' to
 * read): it returns -1 alone; an index left stale by a burst is rebuilt
 * before the workers start, and stays stale (-1) only if that rebuild ran
 * out of memory.
 */
int32_t tecs_index_near(tecs_index_t *index, float x, float y, float r, tecs_entity_t *out,
                        int32_t cap);

/**
 * tecs_index_near that also hands out each entity's point: xy[2 * i] and
 * xy[2 * i + 1] are the x and y the index holds for out[i] (the fields'
 * values when the index last followed a change, so the component's own
 * values while every write goes through a tracked path), so a search that
 * needs only the neighbours' positions reads nothing else. xy may be NULL
 * (then it is tecs_index_near); otherwise it has room for 2 * cap floats.
 * Cost: O(cells + points in them), no allocation, no lookup of a row.
 * @return as tecs_index_near, whose errors and callback rules it shares.
 */
int32_t tecs_index_near_xy(tecs_index_t *index, float x, float y, float r,
                           tecs_entity_t *out, float *xy, int32_t cap);

/** Both conditions. @return the new condition, or -1 (TECS_EINVAL for a
 *  bad handle). */
tecs_cond_t tecs_filter_and(tecs_filter_t *filter, tecs_cond_t a, tecs_cond_t b);

/** Either condition. @return as tecs_filter_and. */
tecs_cond_t tecs_filter_or(tecs_filter_t *filter, tecs_cond_t a, tecs_cond_t b);

/** Not the condition (an entity without the indexed component matches
 *  `not`: it matches no comparison). @return as tecs_filter_and. */
tecs_cond_t tecs_filter_not(tecs_filter_t *filter, tecs_cond_t a);

/** Make cond the root of the filter. @return TECS_OK or TECS_EINVAL. */
tecs_err_t tecs_filter_root(tecs_filter_t *filter, tecs_cond_t cond);

/**
 * Hand results out in the key order of an ordered index (desc: descending),
 * ties by entity slot. Without it the order is the query's: archetype
 * creation order, then chunk, then row. index NULL goes back to that.
 * @return TECS_OK, TECS_EINVAL (not an ordered index), TECS_EWORLD.
 */
tecs_err_t tecs_filter_order(tecs_filter_t *filter, tecs_index_t *index, bool desc);

/** @return true if the entity is alive and matches the filter (the query
 *  is not consulted); false otherwise and on error (the filter's error,
 *  TECS_ENOENT for a freed index): the last error tells the two apart. */
bool tecs_filter_test(tecs_filter_t *filter, tecs_entity_t entity);

/**
 * A where: tecs_iter with .query and .where (tecs_iter_desc_t) iterates the
 * entities that match the query and the filter. Each tecs_iter_next step
 * hands out a run of rows of one chunk (often a single row), with the
 * query's fields, exactly like a query's iteration. The result set is
 * taken when the iteration starts; writes through write terms are
 * reported (and re-key indexes) step by step.
 * Read-only queries: when no term of the query is TECS_WRITE (every term
 * TECS_READ or without a value), it has no toggle or change terms and the
 * iteration runs forward, a step instead hands out up to 64 results of
 * one archetype (fewer for large components) as gathered copies:
 * it.entities and each field point to copies in the filter's own memory,
 * made at the step, in the same order as otherwise. They are valid until
 * the next step or the end of the iteration, show the values as they were
 * at the step (a later tecs_set of a result is not seen in them), and must
 * not be written through (nor kept: they are not the entity's storage;
 * tecs_get gives that). tecs_field_is_set answers as for the archetype.
 * Costs: hash equality
 * O(1 + k), an ordered range O(log n + k), spatial O(cells + k), plus
 * O(k log k) to put results in archetype order (none in key order from the
 * index that drives it); a filter no index can drive (a lone `not`) scans
 * the query. On error (bad filter: its error; a filter of another world:
 * TECS_EWORLD; one being iterated: TECS_EBUSY; out of memory) the
 * iteration is empty and the world's last error says why; it is TECS_OK
 * when the iteration starts, empty or not.
 * Ownership: the filter is busy until the iteration ends (tecs_filter_free
 * meanwhile frees it when the iteration ends); so is every index it names
 * (tecs_index_free refuses), and the query (tecs_query_free refuses).
 */

/** Orders a cache: < 0 if a comes first. Reads components with tecs_get. */
typedef int (*tecs_order_fn)(tecs_world_t *world, tecs_entity_t a, tecs_entity_t b,
                             void *ctx);

/** An entity entered or left a cache. Runs with the world deferred. */
typedef void (*tecs_member_fn)(tecs_world_t *world, tecs_entity_t entity, void *ctx);

/** A cached result set. */
typedef struct tecs_cache_desc_t {
    tecs_query_t *query;        /* required; busy until the cache is freed    */
    const tecs_filter_t *filter;/* optional; copied                           */
    tecs_order_fn order;        /* optional; ties should fall back to the id  */
    tecs_member_fn on_enter;    /* optional                                   */
    tecs_member_fn on_leave;    /* optional                                   */
    void *ctx;                  /* passed to the three callbacks              */
} tecs_cache_desc_t;

/**
 * Create a cached result set: the entities matching the query and the
 * filter, kept up to date as entities are born, die, gain or lose
 * components and as indexed fields change, one entity at a time, never by
 * re-running the query. With `order` it stays sorted, also when a value of
 * a with-term component changes through a tracked path (tecs_set,
 * tecs_modified, a write term of any iteration, the cache's own included):
 * a change while an iteration is open re-sorts the cache when the last open
 * iteration ends, or before the cache is next read, whichever comes first.
 * Without `order` the order is arrival order, a leaving entity's place taken
 * by the last one. The query is busy (tecs_query_free refuses) until the
 * cache is freed.
 * on_enter / on_leave run when an entity enters or leaves (not for the
 * entities present at creation).
 * @return the cache, owned by the world until tecs_cache_free; NULL on error
 * (TECS_EINVAL, TECS_EWORLD, the filter's error, TECS_ENOMEM).
 */
tecs_cache_t *tecs_cache_new(tecs_world_t *world, const tecs_cache_desc_t *desc);

/** Free a cache (and its copy of the filter). @return TECS_OK (NULL does
 *  nothing), or TECS_EBUSY with nothing freed while it is being iterated
 *  or from its own order function.
 *  From a cache's on_enter / on_leave (its own or another's) it returns
 *  TECS_OK and the free takes effect once the callback returns; the cache
 *  gets no more events meanwhile. Either way the handle is dead after
 *  TECS_OK. */
tecs_err_t tecs_cache_free(tecs_cache_t *cache);

/** @return the entities in the cache, O(1); -1 on error: NULL, TECS_ENOMEM
 *  (a cache whose update failed for lack of memory is rebuilt on use), the
 *  filter's error (a freed index: TECS_ENOENT), TECS_EBUSY. */
int32_t tecs_cache_count(tecs_cache_t *cache);

/**
 * A cache's iteration: tecs_iter with .cache (tecs_iter_desc_t) hands out
 * the cache in its order, with the query's fields; O(results). The set is
 * taken when the iteration starts, the world is deferred meanwhile, and
 * the cache is busy (a nested iteration of it, or its free, is
 * TECS_EBUSY). On error (TECS_EBUSY while it is already iterated,
 * TECS_EWORLD for a cache of another world, TECS_ENOMEM, the filter's
 * error) the iteration is empty and the world's last error says why; it is
 * TECS_OK when the iteration starts. tecs_iter_each and tecs_iter_collect
 * take the cache's order, or in reverse read it from its end.
 */


#ifdef __cplusplus
}
#endif

#endif /* TINYECS_INDEX_H */
