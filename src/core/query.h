/*
** query.h — queries and iterators (query.c). Its types, its state and its
** interface; then, in private.h's second pass (TECS__WORLD_DONE, once
** tecs_world_t is complete), its inline functions. Included by private.h
** only.
*/
#ifndef TECS_QUERY_H
#define TECS_QUERY_H

/* Verify every query's matches against a fresh match (for tecs_world_check). */
tecs_err_t tecs__queries_verify(tecs_world_t *w);
/* The position of archetype a in q's matches, or -1 if q does not match it. */
int32_t tecs__query_find(const tecs_query_t *q, const tecs_archetype_t *a);
/* Point an iterator of q at count rows of a from row (one chunk), a being
** q's match m: what a filtered iteration hands out per step. */
void tecs__iter_load_rows(tecs_iter_t *it, int32_t m, tecs_archetype_t *a, uint32_t row,
                          int32_t count);
/* The columns of q's match m in its archetype, one per term (< 0: the
** step has no field for it): what a filtered step reads a row's values
** from. */
const int16_t *tecs__query_cols(const tecs_query_t *q, int32_t m);
/* Does q write through none of its terms (no TECS_WRITE term with a
** value)? A filtered iteration may then hand out copies of the values. */
bool tecs__query_reads_only(const tecs_query_t *q);
/* Ask the cache for the fields of row of a (q's match m), soon needed. */
void tecs__iter_prefetch(const tecs_iter_t *it, int32_t m, const tecs_archetype_t *a,
                         uint32_t row);
/* The private fields of tecs_iter_t: query, the iterated query; arch, the
** current archetype; match, its index in the query's matches; chunk, the
** chunk in it; flags, TECS__ITER_REVERSE and the engine's ITER_ bits;
** state, fresh, running or done; serial, the iteration's serial in the
** world's table of open ones; src, what a filtered iteration's steps are
** read from (a chunk walked word by word: its bit column); step, a
** filtered iteration's next step; pos, the position in src (a failed
** start: its error); stepped, rows handed out so far; left, a part's rows
** still to hand out (a word walk: the chunk's rows); absent, the terms
** this step has no field of though its archetype has them; word and bits,
** run by run: the word of rows and its rows not passed yet. */
/* The priv_.flags bit of an iteration in reverse (tecs_iter_desc_t.reverse);
** the library's own, as every priv_ field is. */
#define TECS__ITER_REVERSE 1
/* An add-on's iteration source (a where filter, a cache) begins with this
** header: tecs_iter checks the world and the query, then hands the
** description to start, which checks its own object (its world, its
** state) and starts the iteration. */
typedef struct tecs__iter_src {
    tecs__iter_start_fn start;
} tecs__iter_src;
/* What a filtered iteration's priv_.src points to begins with this: how
** tecs_iter_collect takes the ids of one not stepped yet without stepping
** it, so that no row counts as written (NULL: it steps through). It ends
** the iteration and returns the count. */
typedef struct tecs__iter_rows {
    int32_t (*collect)(tecs_iter_t *it, tecs_entity_t *out, int32_t cap);
} tecs__iter_rows;
/* Start an iteration of q (world entered, q of it), the steps last first
** if reverse: what a source's start builds its iteration on. Empty on
** error (the world closed, out of memory: recorded). */
tecs_iter_t tecs__query_iter(tecs_query_t *q, bool reverse);
/* An ended, empty iteration of w (may be NULL) that carries err to
** tecs_iter_each and tecs_iter_collect: what a failed start returns. */
tecs_iter_t tecs__iter_failed(tecs_world_t *w, tecs_err_t err);
/* Does it run in reverse (tecs_iter_desc_t.reverse)? */
bool tecs__iter_reversed(const tecs_iter_t *it);
/* True if archetype a (may be NULL: false) matches the query's terms. */
bool tecs__query_matches(const tecs_query_t *q, const tecs_archetype_t *a);
/* A system or a cache starts (+1) or stops (-1) using q: tecs_query_free
** refuses while it is used. */
void tecs__query_use(tecs_query_t *q, int32_t delta);
/* End it if it is still open, as tecs_iter_fini; an iteration another copy
** ended is left alone (not counted as ended twice). */
void tecs__iter_end(tecs_iter_t *it);
/* Free a query the library owns (an observer's; NULL does nothing): never
** refused, and the world's last error is left as it is. */
void tecs__query_drop(tecs_query_t *q);

/* Does row of q's match m pass q's toggle terms (enableable components)? */
bool tecs__query_row_ok(const tecs_query_t *q, int32_t m, uint32_t row);
/* Does e match q, its components read from archetype a (NULL: false) and
** its enabled bits from its row (a component its archetype no longer has:
** the one the store is removing, w->store.gone), the rest read as v says
** (NULL: as it is)? For membership events: before and after a change. */
bool tecs__query_entity_ok(const tecs_query_t *q, const tecs_archetype_t *a, tecs_entity_t e,
                           const tecs__view *v);
/* Are q's rows decided one by one, by toggle or change terms
** (tecs__query_clip then cuts the runs of a snapshot)? */
bool tecs__query_rowwise(const tecs_query_t *q);
/* Of the n rows of q's match m from row (one chunk), read from the first
** (from_end: from the last): *skip rows that no longer pass q's toggle
** terms, then the rows that pass with the same optional and any toggle
** terms present: their number (0: none passes), and the terms absent
** there. */
int32_t tecs__query_clip(const tecs_query_t *q, int32_t m, uint32_t row, int32_t n, bool from_end,
                         int32_t *skip, uint32_t *absent);
/* Leave the terms of absent without a field in it's step. */
void tecs__iter_drop_fields(tecs_iter_t *it, uint32_t absent);
/* A run of q begins (an iteration, a system's run, a split): its change
** terms now pass what was written since its previous run began, and the
** world's tick moves on past this run's start. With parts (the run's rows
** go to workers), every chunk its write terms reach counts as written now,
** on this thread. */
void tecs__query_run(tecs_query_t *q, bool parts);
/* Has q change terms (TECS_CHANGE_CHANGED, _ADDED)? Caches and membership
** observers refuse such a query: what it matches moves with the ticks, no
** event tells when. */
bool tecs__query_has_changes(const tecs_query_t *q);
/* Does an ADD / REMOVE event of c (or an ENABLE / DISABLE) change what
** one of q's row filters says of the entity, with no move (a toggle term
** of c, a sparse c, a pair term of relation c)? */
bool tecs__query_toggles(const tecs_query_t *q, tecs_comp_t c);
/* A cache or membership observer of q starts (d 1) or stops (-1) wanting
** the events tecs__query_toggles names. */
void tecs__query_watch(tecs_query_t *q, int32_t d);
/* Count (d 1) or uncount (-1) a listener of c's events that wants no SET
** events (a row filter's watch). */
void tecs__query_watch_comp(tecs_world_t *w, tecs_comp_t c, int32_t d);
/* Call fn for the entities whose match of q reads e's archetype besides
** their own (children, for a term read from the parent), once each;
** false (and no call) if q has none such terms. */
bool tecs__query_each_dep(const tecs_query_t *q, tecs_entity_t e,
                          void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx);
/* Has q a term of that kind (a move of one entity re-decides others)? */
bool tecs__query_has_deps(const tecs_query_t *q);
/* Rows q matches now, whatever its toggle terms say. */
int64_t tecs__query_rows(const tecs_query_t *q);
/* Point it at count rows of q from row first (in iteration order) for a
** worker whose context is view: a part, registered nowhere (query.c). */
void tecs__iter_part(tecs_iter_t *it, tecs_query_t *q, tecs_world_t *view, int64_t first,
                     int64_t count);
/* Does someone watch the writes through q's write terms (SET events)? */
bool tecs__query_writes_watched(const tecs_query_t *q);
/* After a run on workers, as if one iteration had handed out the rows
** they wrote: tecs__query_reports_begin opens an iteration (room for it
** reserved before the run: tecs__query_reports_reserve, TECS_ENOMEM), so
** that ordered caches wait for the last report before they re-sort, and
** defers the world; then tecs__query_report_writes for each run of rows
** in row order (the writes through q's write terms to rows [first, first
** + count) of q, as an iteration reports them when it leaves a chunk);
** then tecs__query_reports_end closes it: the caches re-sort if no other
** iteration is open, and what the reports' callbacks queued applies
** (unless the world is deferred). Rows do not move before the end, so
** every run is reported where it was written. */
tecs_err_t tecs__query_reports_reserve(tecs_world_t *w);
uint32_t tecs__query_reports_begin(tecs_world_t *w);
void tecs__query_report_writes(tecs_query_t *q, int64_t first, int64_t count);
void tecs__query_reports_end(tecs_world_t *w, uint32_t serial);
/* Or into read / write (TECS_MAX_COMPONENTS bits each) the components q's
** terms read and write: a term that hands out no value touches none. */
void tecs__query_access(const tecs_query_t *q, uint64_t *read, uint64_t *write);

/* An add-on's kind of row filter, claiming terms after the core's kinds
** (the relation add-on's pair terms): for the queries made from now on.
** TECS_ENOMEM, or TECS_ELIMIT past TECS__MAX_KINDS. */
tecs_err_t tecs__query_add_kind(tecs_world_t *w, const tecs__filter_kind *kind);
#define TECS__MAX_KINDS 4
/* The rank of an archetype in a cascade query's order (the relation
** add-on's levels): matches of lower rank come first. */
typedef int32_t (*tecs__rank_fn)(const tecs_world_t *w, const tecs_archetype_t *a);

typedef struct tecs__query_state {
    struct tecs_query_t *queries; /* list of live queries                   */
    const tecs__filter_kind *kinds[TECS__MAX_KINDS]; /* add-ons' kinds      */
    int32_t nkinds;
    tecs__rank_fn rank;         /* cascade queries' order, or NULL          */
    struct tecs_query_t *arch_queries; /* one-archetype queries (tecs_iter of one),
                                   those with no open iteration free to use */
    bool query_listening;
    uint32_t *iters;            /* serials of the open iterations, in the
                                   order they were opened                   */
    int32_t niters;
    int32_t cap_iters;
    uint32_t iter_serial;       /* the last serial handed out (0: none)     */
    int32_t iters_twice;        /* ends of iterations no longer open, not
                                   reported by tecs_world_check yet         */
} tecs__query_state;

#endif /* TECS_QUERY_H */
