/*
** query.c — queries, their matched archetypes, and the chunk iterator.
**
** A query is a list of terms. It is matched once against every archetype
** that exists when it is created, and then against each new archetype as it
** appears (through the world's archetype listener), so iterating never
** matches anything. For each matched archetype it keeps one row of `cols`:
**
**     march[m] = archetype          mcols[m * nterms + t] = column of term t
**                                     >= 0        data column
**                                     COL_TAG     present, no data handed out
**                                     COL_ABSENT  absent (optional / any / none)
**
** A query of no terms matches every archetype, the empty one included:
** it is the query of every entity, and its iterations hand out no field.
**
** Matches are kept in archetype creation order, so iteration order is
** archetypes in creation order, chunks in order, rows in order (or all three
** reversed). The iterator hands out one chunk per step: a row count, the
** entity column, and one column pointer per term.
**
** Every open iteration defers the world: structural changes are queued and
** applied when the outermost iteration ends (tecs_iter_next returning false
** or tecs_iter_fini). So the chunks being walked never change under the
** iterator, and nothing is skipped or visited twice.
**
** An iterator is a value the caller may copy, so the world, not the
** iterator, knows which iterations are open: a table of serials, newest
** last. Starting an iteration appends its serial; ending it takes the
** serial out, and only the copy that finds it there undoes the world's
** side (defer depth, the query's count of open iterations, a filtered
** source's busy mark). A step first checks that its serial is still open
** (one compare with the newest, the common case), so a copy outliving the
** iteration touches nothing that may since have been freed.
**
** Writes through a write term are reported (a SET event per row) when the
** iterator leaves a chunk, if a listener (a field index) watches that
** component; nobody pays for it otherwise.
**
** tecs_query_each and tecs_query_collect at the end of this file use the
** public API only, and so do tecs_archetype_each and tecs_archetype_collect.
** An iteration of one archetype (tecs_archetype_iter) is a query iteration
** with one match, through a query the world keeps for it.
**
** Calls: alloc.c, component.c, event.c (it listens for new archetypes, and
** reports writes as SET events, after a veto), archetype.c (it checks the
** archetype handles users pass), command.c (an iteration defers the
** world).
*/
#include "private.h"

struct tecs_query_t {
    tecs_world_t *world;
    tecs_query_t *next;         /* the world's list of queries              */
    tecs_query_t *prev;
    int32_t nterms;
    tecs_term_t terms[TECS_MAX_TERMS];
    bool has_any;               /* some term is TECS_ANY                    */
    uint32_t write_mask;        /* terms whose data may be written          */
    int32_t nmatch;
    int32_t cap_match;
    tecs_archetype_t **march;
    int16_t *mcols;             /* nmatch rows of nterms columns            */
    int32_t cap_cols;
    int32_t users;              /* systems and caches that use it           */
    int32_t iters;              /* its open iterations                      */
};

/* ---- matching -------------------------------------------------------- */

/* Fill cols (nterms) for archetype a; false if a does not match. */
static bool match(const tecs_query_t *q, const tecs_archetype_t *a, int16_t *cols)
{
    bool any = false;
    for (int32_t t = 0; t < q->nterms; t++) {
        const tecs_term_t *term = &q->terms[t];
        int32_t col = tecs__arch_col(a, term->comp);
        bool present = col != TECS__COL_ABSENT;
        switch (term->oper) {
        case TECS_WITH:
            if (!present)
                return false;
            break;
        case TECS_ANY:
            any = any || present;
            break;
        case TECS_NONE:
            if (present)
                return false;
            break;
        case TECS_OPTIONAL:
            break;
        }
        if (term->oper == TECS_NONE)
            col = TECS__COL_ABSENT;
        else if (present && term->access == TECS_FILTER)
            col = TECS__COL_TAG;
        cols[t] = (int16_t)col;
    }
    return !q->has_any || any;
}

/* Make room for one more match. */
static tecs_err_t reserve_match(tecs_query_t *q)
{
    tecs_world_t *w = q->world;
    if (tecs__grow(w, (void **)&q->march, &q->cap_match, q->nmatch + 1, sizeof *q->march))
        return TECS_ENOMEM;
    /* (A query of no terms keeps a one-entry table all the same, so that
    ** its rows of columns are never at a NULL base.) */
    int32_t nterms = q->nterms > 0 ? q->nterms : 1;
    return tecs__grow(w, (void **)&q->mcols, &q->cap_cols, (q->nmatch + 1) * nterms,
                      sizeof *q->mcols);
}

/* Append a if it matches (room reserved only when it does: match into a
** scratch row first, so a query that does not match writes nothing). */
static void add_match(tecs_query_t *q, tecs_archetype_t *a)
{
    int16_t cols[TECS_MAX_TERMS];
    if (!match(q, a, cols))
        return;
    memcpy(q->mcols + (size_t)q->nmatch * q->nterms, cols, (size_t)q->nterms * sizeof *cols);
    q->march[q->nmatch++] = a;
}

static bool would_match(const tecs_query_t *q, const tecs_archetype_t *a)
{
    int16_t cols[TECS_MAX_TERMS];
    return match(q, a, cols);
}

bool tecs__query_matches(const tecs_query_t *q, const tecs_archetype_t *a)
{
    return a != NULL && would_match(q, a);
}

static tecs_err_t on_archetype(tecs_world_t *w, void *ctx, tecs_archetype_t *a)
{
    (void)ctx;
    for (tecs_query_t *q = w->query.queries; q; q = q->next)
        if (would_match(q, a) && reserve_match(q))
            return TECS_ENOMEM;
    for (tecs_query_t *q = w->query.queries; q; q = q->next)
        add_match(q, a);
    return TECS_OK;
}

static void on_archetype_undo(tecs_world_t *w, void *ctx, tecs_archetype_t *a)
{
    (void)ctx;
    for (tecs_query_t *q = w->query.queries; q; q = q->next)
        if (q->nmatch > 0 && q->march[q->nmatch - 1] == a)
            q->nmatch--;
}

static void query_release(tecs_query_t *q)
{
    tecs_world_t *w = q->world;
    tecs__free(w, q->march, (size_t)q->cap_match * sizeof *q->march);
    tecs__free(w, q->mcols, (size_t)q->cap_cols * sizeof *q->mcols);
    tecs__free(w, q, sizeof *q);
}

static void on_fini(tecs_world_t *w, void *ctx)
{
    (void)ctx;
    while (w->query.queries) {
        tecs_query_t *q = w->query.queries;
        w->query.queries = q->next;
        query_release(q);
    }
    while (w->query.arch_queries) {
        tecs_query_t *q = w->query.arch_queries;
        w->query.arch_queries = q->next;
        query_release(q);
    }
    tecs__free(w, w->query.iters, (size_t)w->query.cap_iters * sizeof *w->query.iters);
    w->query.iters = NULL;
    w->query.niters = w->query.cap_iters = 0;
}

static tecs_err_t listen_once(tecs_world_t *w)
{
    if (w->query.query_listening)
        return TECS_OK;
    tecs__listener l = { .on_archetype = on_archetype, .on_archetype_undo = on_archetype_undo,
                         .on_fini = on_fini };
    if (tecs__listen(w, &l))
        return TECS_ENOMEM;
    w->query.query_listening = true;
    return TECS_OK;
}

/* ---- creation -------------------------------------------------------- */

/* Room in the table of open iterations made with the first query, so that
** opening an iteration allocates only past this many open at once. */
#define ITERS_RESERVED 16

static tecs_err_t validate_terms(tecs_world_t *w, const tecs_query_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_query_new: NULL description");
    if (d->term_count < 0)
        return tecs__err(w, TECS_EINVAL, "tecs_query_new: negative term count %d",
                         d->term_count);
    if (d->terms == NULL && d->term_count > 0)
        return tecs__err(w, TECS_EINVAL, "tecs_query_new: NULL terms for %d terms", d->term_count);
    if (d->term_count > TECS_MAX_TERMS)
        return tecs__err(w, TECS_ELIMIT, "a query has at most %d terms, not %d", TECS_MAX_TERMS,
                         d->term_count);
    for (int32_t t = 0; t < d->term_count; t++) {
        const tecs_term_t *term = &d->terms[t];
        if (tecs__comp_get(w, term->comp) == NULL)
            return tecs__err(w, TECS_ENOCOMP, "term %d: component %u is unknown", t, term->comp);
        if ((unsigned)term->oper > TECS_OPTIONAL)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown operator %d", t, (int)term->oper);
        if ((unsigned)term->access > TECS_FILTER)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown access %d", t, (int)term->access);
        for (int32_t u = 0; u < t; u++)
            if (d->terms[u].comp == term->comp)
                return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is in terms %d and %d: a "
                                 "component may have one term only", TECS__COMP(w, term->comp),
                                 u, t);
    }
    return TECS_OK;
}

tecs_query_t *tecs_query_new(tecs_world_t *w, const tecs_query_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || validate_terms(w, d) || listen_once(w))
        return NULL;
    tecs_query_t *q = tecs__grow(w, (void **)&w->query.iters, &w->query.cap_iters, ITERS_RESERVED,
                                 sizeof *w->query.iters) ? NULL : tecs__alloc(w, sizeof *q);
    if (q == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a query");
        return NULL;
    }
    memset(q, 0, sizeof *q);
    q->world = w;
    q->nterms = d->term_count;
    if (d->term_count > 0)
        memcpy(q->terms, d->terms, (size_t)d->term_count * sizeof *d->terms);
    for (int32_t t = 0; t < q->nterms; t++) {
        q->has_any = q->has_any || q->terms[t].oper == TECS_ANY;
        if (q->terms[t].access == TECS_WRITE && q->terms[t].oper != TECS_NONE &&
            tecs_component_size(w, q->terms[t].comp) > 0)
            q->write_mask |= 1u << t;
    }
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        if (!would_match(q, w->arch.archs[i]))
            continue;
        if (reserve_match(q)) {
            query_release(q);
            return NULL;
        }
        add_match(q, w->arch.archs[i]);
    }
    q->next = w->query.queries;
    if (w->query.queries)
        w->query.queries->prev = q;
    w->query.queries = q;
    return q;
}

tecs_query_t *tecs_query_all(tecs_world_t *w, int32_t n, const tecs_comp_t *ids)
{
    if (w == NULL || tecs__enter_object(w))
        return NULL;
    if (n < 0 || n > TECS_MAX_TERMS || (ids == NULL && n > 0)) {
        tecs__err(w, n > TECS_MAX_TERMS ? TECS_ELIMIT : TECS_EINVAL,
                  n < 0 ? "tecs_query_all: negative count %d"
                  : n > TECS_MAX_TERMS ? "tecs_query_all: %d components, above TECS_MAX_TERMS"
                  : "tecs_query_all: NULL ids for %d components", n);
        return NULL;
    }
    tecs_term_t terms[TECS_MAX_TERMS];
    for (int32_t i = 0; i < n; i++)
        terms[i] = (tecs_term_t){ .comp = ids[i] };
    return tecs_query_new(w, &(tecs_query_desc_t){ .terms = terms, .term_count = n });
}

tecs_err_t tecs_query_free(tecs_query_t *q)
{
    if (q == NULL)
        return TECS_OK;
    tecs_world_t *w = q->world;
    tecs_err_t err = tecs__enter_object(w);
    if (err)
        return err;
    if (q->users > 0)
        return tecs__err(w, TECS_EBUSY, "%d system(s) or cache(s) use the query",
                         (int)q->users);
    if (q->iters > 0)
        return tecs__err(w, TECS_EBUSY, "%d iteration(s) of the query are open",
                         (int)q->iters);
    tecs__query_drop(q);
    return TECS_OK;
}

void tecs__query_drop(tecs_query_t *q)
{
    if (q == NULL)
        return;
    tecs_world_t *w = q->world;
    assert(q->users == 0 && q->iters == 0);
    if (q->prev)
        q->prev->next = q->next;
    else
        w->query.queries = q->next;
    if (q->next)
        q->next->prev = q->prev;
    query_release(q);
}

void tecs__query_use(tecs_query_t *q, int32_t delta)
{
    q->users += delta;
    assert(q->users >= 0);
}

tecs_world_t *tecs_query_world(const tecs_query_t *q)
{
    return q ? q->world : NULL;
}

int32_t tecs_query_terms(const tecs_query_t *q, const tecs_term_t **out)
{
    if (q == NULL)
        return 0;
    if (out)
        *out = q->terms;
    return q->nterms;
}

int32_t tecs_query_count(const tecs_query_t *q)
{
    return q ? (int32_t)tecs__query_rows(q) : 0;
}

int32_t tecs_query_archetype_count(const tecs_query_t *q)
{
    return q ? q->nmatch : 0;
}

tecs_err_t tecs__queries_verify(tecs_world_t *w)
{
    for (tecs_query_t *q = w->query.queries; q; q = q->next) {
        int32_t m = 0;
        for (int32_t i = 0; i < w->arch.narchs; i++) {
            int16_t cols[TECS_MAX_TERMS];
            if (!match(q, w->arch.archs[i], cols))
                continue;
            if (m >= q->nmatch || q->march[m] != w->arch.archs[i] ||
                memcmp(cols, q->mcols + (size_t)m * q->nterms, (size_t)q->nterms * 2) != 0)
                return tecs__err(w, TECS_ECORRUPT, "query misses archetype %d", i);
            m++;
        }
        if (m != q->nmatch)
            return tecs__err(w, TECS_ECORRUPT, "query holds an archetype it should not");
    }
    return TECS_OK;
}

/* ---- iteration ------------------------------------------------------- */

enum { ITER_FRESH, ITER_RUNNING, ITER_DONE };

/* priv_.flags of a part (tecs__iter_part): an iteration no table knows. */
#define ITER_PART (1 << 30)

static bool part_next(tecs_iter_t *it);

/* Note a new iteration open: its serial, or 0 (out of memory). */
static uint32_t iter_open(tecs_world_t *w)
{
    if (tecs__grow(w, (void **)&w->query.iters, &w->query.cap_iters, w->query.niters + 1,
                   sizeof *w->query.iters)) {
        tecs__err(w, TECS_ENOMEM, "out of memory opening an iteration");
        return 0;
    }
    if (++w->query.iter_serial == 0)
        w->query.iter_serial = 1;
    w->query.iters[w->query.niters++] = w->query.iter_serial;
    return w->query.iter_serial;
}

/* Where serial is in the table of open iterations, or -1 (ended). */
static TECS__NOINLINE int32_t iter_find(const tecs_world_t *w, uint32_t serial)
{
    for (int32_t i = w->query.niters - 1; i >= 0; i--)
        if (w->query.iters[i] == serial)
            return i;
    return -1;
}

/* Is the iteration of it still open? The newest one is the common case. */
static inline bool iter_live(const tecs_iter_t *it)
{
    const tecs_world_t *w = it->world;
    int32_t n = w->query.niters;
    return (n > 0 && w->query.iters[n - 1] == it->priv_.serial) ||
           iter_find(w, it->priv_.serial) >= 0;
}

/* Take the iteration out of the table; false if it was not there. */
static bool iter_close(tecs_world_t *w, uint32_t serial)
{
    int32_t i = iter_find(w, serial);
    if (i < 0)
        return false;
    memmove(w->query.iters + i, w->query.iters + i + 1,
            (size_t)(w->query.niters - 1 - i) * sizeof *w->query.iters);
    w->query.niters--;
    return true;
}

/* The last open iteration ended: tell the listeners (caches re-sort). */
static void iters_done(tecs_world_t *w)
{
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_iters_done)
            w->bus.listeners[i].on_iters_done(w, w->bus.listeners[i].ctx);
}

/* Open an iteration of q on it (ended, empty, if out of memory). */
static void iter_start(tecs_iter_t *it, tecs_query_t *q, int32_t flags)
{
    tecs_world_t *w = q->world;
    if ((it->priv_.serial = iter_open(w)) == 0)
        return;
    it->priv_.query = q;
    it->priv_.flags = flags;
    it->priv_.state = ITER_RUNNING;
    it->priv_.match = (flags & TECS_ITER_REVERSE) ? q->nmatch : -1;
    it->priv_.chunk = -1;
    q->iters++;
    tecs__defer_begin(w);
}

tecs_err_t tecs__iter_flags_check(tecs_world_t *w, int32_t flags, const char *fn)
{
    if (flags & ~(int32_t)TECS_ITER_REVERSE)
        return tecs__err(w, TECS_EINVAL, "%s: unknown iteration flags 0x%x (TECS_ITER_REVERSE "
                         "is the only one)", fn, (unsigned)flags);
    return TECS_OK;
}

tecs_iter_t tecs_query_iter_ex(tecs_query_t *q, int32_t flags)
{
    tecs_iter_t it;
    memset(&it, 0, sizeof it);
    it.priv_.state = ITER_DONE;
    if (q == NULL)
        return it;
    tecs_world_t *w = q->world;
    it.world = w;
    if (tecs__enter(w) || tecs__iter_flags_check(w, flags, "tecs_query_iter"))
        return it;
    iter_start(&it, q, flags);
    return it;
}

tecs_iter_t tecs_query_iter(tecs_query_t *q)
{
    return tecs_query_iter_ex(q, 0);
}

/* Report writes through write terms in the chunk being left. */
static void report_writes(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    tecs_world_t *w = q->world;
    for (uint32_t mask = q->write_mask; mask; mask &= mask - 1) {
        int32_t t = TECS__CTZ(mask);
        tecs_comp_t c = q->terms[t].comp;
        if (it->fields[t] == NULL || !tecs__wants_set(&w->comp.comps[c]))
            continue;
        size_t size = w->comp.comps[c].size;
        for (int32_t r = 0; r < it->count; r++) {
            char *p = (char *)it->fields[t] + (size_t)r * size;
            if (w->comp.comps[c].veto)
                tecs__veto(w, TECS__EV_SET | TECS__EV_WRITTEN, it->entities[r], c, p, 1);
            tecs__emit_comp(w, TECS__EV_SET, it->entities[r], c, p);
        }
    }
}


static int32_t used_chunks(const tecs_world_t *w, const tecs_archetype_t *a)
{
    return (int32_t)(((uint32_t)a->count + w->arch.mask) >> w->arch.shift);
}

/* Move to the next chunk (in the iteration's direction); false at the end. */
static bool advance(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    bool rev = it->priv_.flags & TECS_ITER_REVERSE;
    tecs_archetype_t *a = it->priv_.arch;
    if (a != NULL) {
        int32_t next = it->priv_.chunk + (rev ? -1 : 1);
        if (next >= 0 && next < used_chunks(w, a)) {
            it->priv_.chunk = next;
            return true;
        }
    }
    for (;;) {
        int32_t m = it->priv_.match + (rev ? -1 : 1);
        if (m < 0 || m >= q->nmatch)
            return false;
        it->priv_.match = m;
        a = q->march[m];
        if (a->count > 0) {
            it->priv_.arch = a;
            it->priv_.chunk = rev ? used_chunks(w, a) - 1 : 0;
            return true;
        }
    }
}

/* Point the public fields at the current chunk. */
static void load_chunk(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    tecs_archetype_t *a = it->priv_.arch;
    int32_t k = it->priv_.chunk;
    char *const *ch = tecs__kcols(a, (uint32_t)k);
    int32_t left = a->count - k * (int32_t)w->arch.rows;
    it->count = left < (int32_t)w->arch.rows ? left : (int32_t)w->arch.rows;
    it->entities = tecs__chunk_ents(ch);
    const int16_t *cols = q->mcols + (size_t)it->priv_.match * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++)
        it->fields[t] = cols[t] >= 0 ? tecs__chunk_col(ch, cols[t]) : NULL;
}

bool tecs_iter_next(tecs_iter_t *it)
{
    if (it != NULL && TECS__UNLIKELY(it->priv_.flags & ITER_PART))
        return part_next(it);
    if (it == NULL || it->priv_.state != ITER_RUNNING || tecs__enter(it->world))
        return false;
    if (TECS__UNLIKELY(!iter_live(it))) {   /* another copy ended it */
        it->priv_.state = ITER_DONE;
        it->count = 0;
        return false;
    }
    if (it->count > 0 && it->priv_.query->write_mask)
        report_writes(it);
    if (it->priv_.step) {
        if (it->priv_.step(it, false)) {
            it->priv_.stepped += it->count;
            return true;
        }
        it->count = 0;
        tecs_iter_fini(it);
        return false;
    }
    if (!advance(it)) {
        it->count = 0;
        tecs_iter_fini(it);
        return false;
    }
    load_chunk(it);
    it->priv_.stepped += it->count;
    return true;
}

void tecs__iter_end(tecs_iter_t *it)
{
    if (it->priv_.state != ITER_RUNNING)
        return;
    if (!(it->priv_.flags & ITER_PART) && iter_live(it))
        tecs_iter_fini(it);
    it->priv_.state = ITER_DONE;
    it->count = 0;
}

/* Ending an iteration: the last rows' writes are reported, the world's
** side is undone once (whichever copy comes first), and only then does
** the world leave deferred mode. A copy that comes later changes nothing
** but the count of iterations ended twice. */
void tecs_iter_fini(tecs_iter_t *it)
{
    if (it == NULL || it->priv_.state != ITER_RUNNING)
        return;
    tecs_world_t *w = it->world;
    it->priv_.state = ITER_DONE;
    if (it->priv_.flags & ITER_PART) {
        it->count = 0;
        return;
    }
    if (!iter_live(it)) {
        it->count = 0;
        w->query.iters_twice++;
        return;
    }
    if (it->count > 0 && it->priv_.query->write_mask)
        report_writes(it);
    it->count = 0;
    if (!iter_close(w, it->priv_.serial))
        return;                 /* a callback of the report ended it */
    it->priv_.query->iters--;
    if (it->priv_.step)
        it->priv_.step(it, true);
    if (w->query.niters == 0)
        iters_done(w);
    tecs__defer_end(w);
}

void *tecs_field(const tecs_iter_t *it, int32_t term)
{
    if (it == NULL || term < 0 || term >= TECS_MAX_TERMS)
        return NULL;
    return it->fields[term];
}

bool tecs_field_is_set(const tecs_iter_t *it, int32_t term)
{
    /* An ended iteration's query may be freed: only an open one is read. */
    if (it == NULL || it->priv_.state != ITER_RUNNING ||
        !((it->priv_.flags & ITER_PART) || iter_live(it)) ||
        it->priv_.arch == NULL || term < 0 || term >= it->priv_.query->nterms)
        return false;
    const tecs_query_t *q = it->priv_.query;
    return q->mcols[(size_t)it->priv_.match * q->nterms + term] != TECS__COL_ABSENT;
}

/* ---- one archetype ---------------------------------------------------- */

/*
** Iterating one archetype is a query iteration with one match: a query
** whose terms are the archetype's first TECS_MAX_TERMS components (with,
** write) and whose only match is the archetype. Such queries are the
** world's own, kept on a list of their own (never matched against new
** archetypes, never verified), and one whose iterations have all ended is
** used again for the next one, so the list is as long as the deepest
** nesting of archetype iterations. Stepping is then the query iterator's.
*/

/* Aim the one-archetype query q at a. */
static void arch_query_aim(tecs_query_t *q, tecs_archetype_t *a)
{
    const tecs_world_t *w = q->world;
    q->nterms = a->ncomps < TECS_MAX_TERMS ? a->ncomps : TECS_MAX_TERMS;
    q->write_mask = 0;
    for (int32_t t = 0; t < q->nterms; t++) {
        q->terms[t] = (tecs_term_t){ .comp = a->comps[t] };
        q->mcols[t] = (int16_t)tecs__arch_col(a, a->comps[t]);
        if (q->mcols[t] >= 0 && tecs__comp_get(w, a->comps[t])->size > 0)
            q->write_mask |= 1u << t;
    }
    q->march[0] = a;
    q->nmatch = 1;
}

/* A one-archetype query with no open iteration, aimed at a; NULL if out of
** memory. */
static tecs_query_t *arch_query(tecs_world_t *w, tecs_archetype_t *a)
{
    tecs_query_t *q = w->query.arch_queries;
    while (q && q->iters > 0)
        q = q->next;
    if (q == NULL) {
        if (listen_once(w) || (q = tecs__alloc(w, sizeof *q)) == NULL) {
            tecs__err(w, TECS_ENOMEM, "out of memory opening an archetype iteration");
            return NULL;
        }
        memset(q, 0, sizeof *q);
        q->world = w;
        if (reserve_match(q) ||
            tecs__grow(w, (void **)&q->mcols, &q->cap_cols, TECS_MAX_TERMS, sizeof *q->mcols)) {
            query_release(q);
            tecs__err(w, TECS_ENOMEM, "out of memory opening an archetype iteration");
            return NULL;
        }
        q->next = w->query.arch_queries;
        w->query.arch_queries = q;
    }
    arch_query_aim(q, a);
    return q;
}

/* Check the arguments of an archetype iteration (the world is entered). */
static tecs_err_t arch_iter_check(tecs_world_t *w, const tecs_archetype_t *a, int32_t flags,
                                  const char *fn)
{
    tecs_err_t err = tecs__arch_validate(w, a);
    if (err)
        return err;
    return tecs__iter_flags_check(w, flags, fn);
}

tecs_iter_t tecs_archetype_iter(tecs_world_t *w, tecs_archetype_t *a, int32_t flags)
{
    tecs_iter_t it;
    memset(&it, 0, sizeof it);
    it.priv_.state = ITER_DONE;
    if (w == NULL)
        return it;
    it.world = w;
    if (tecs__enter(w) || arch_iter_check(w, a, flags, "tecs_archetype_iter"))
        return it;
    tecs_query_t *q = arch_query(w, a);
    if (q != NULL)
        iter_start(&it, q, flags);
    return it;
}

/* ---- parts (worker.c) -------------------------------------------------- */

/*
** A part is `left` consecutive rows of a query's matches, from row `pos` of
** match `match`, handed out at most a chunk per step. It is registered
** nowhere and defers nothing: parts run on workers, which read the world
** while nothing changes it, and whose changes queue in their own contexts.
** So a step reads the query and the archetypes and writes only the
** iterator. Writes through write terms are reported by the caller once
** every part is done (tecs__query_report_writes). A part steps only while
** its run goes on: its context a worker's, of the run that made the part
** (serial holds the context's run count).
*/

int64_t tecs__query_rows(const tecs_query_t *q)
{
    int64_t n = 0;
    for (int32_t m = 0; m < q->nmatch; m++)
        n += q->march[m]->count;
    return n;
}

/* Load into it the next run of rows of q from row *pos of match *m, at
** most a chunk and at most *left rows, and move past it; false at the
** end. */
static bool rows_step(tecs_iter_t *it, const tecs_query_t *q, int32_t *m, int32_t *pos,
                      int64_t *left)
{
    const tecs_world_t *w = q->world;
    while (*left > 0 && *m < q->nmatch) {
        tecs_archetype_t *a = q->march[*m];
        int32_t row = *pos;
        if (row >= a->count) {
            ++*m;
            *pos = 0;
            continue;
        }
        int64_t n = (int64_t)w->arch.rows - (row & (int32_t)w->arch.mask);
        if (n > a->count - row)
            n = a->count - row;
        if (n > *left)
            n = *left;
        tecs__iter_load_rows(it, *m, a, (uint32_t)row, (int32_t)n);
        *pos = row + (int32_t)n;
        *left -= n;
        return true;
    }
    return false;
}

/* Where row `first` of q's rows is: its match and its row there. */
static void rows_seek(const tecs_query_t *q, int64_t first, int32_t *m, int32_t *pos)
{
    *m = 0;
    while (*m < q->nmatch && first >= q->march[*m]->count)
        first -= q->march[(*m)++]->count;
    *pos = (int32_t)first;
}

void tecs__iter_part(tecs_iter_t *it, tecs_query_t *q, tecs_world_t *view, int64_t first,
                     int64_t count)
{
    memset(it, 0, sizeof *it);
    it->world = view;
    it->priv_.query = q;
    it->priv_.flags = ITER_PART;
    it->priv_.state = ITER_RUNNING;
    it->priv_.left = count;
    it->priv_.serial = view->base.run;
    rows_seek(q, first, &it->priv_.match, &it->priv_.pos);
}

static bool part_next(tecs_iter_t *it)
{
    /* Its run must be going (the context a worker's, of the same run). */
    const tecs__base *b = &it->world->base;
    if (it->priv_.state == ITER_RUNNING && b->closed == TECS__WORKER &&
        b->run == it->priv_.serial &&
        rows_step(it, it->priv_.query, &it->priv_.match, &it->priv_.pos, &it->priv_.left)) {
        it->priv_.stepped += it->count;
        return true;
    }
    it->priv_.state = ITER_DONE;
    it->count = 0;
    return false;
}

bool tecs__query_writes_watched(const tecs_query_t *q)
{
    const tecs_world_t *w = q->world;
    for (uint32_t mask = q->write_mask; mask; mask &= mask - 1)
        if (tecs__wants_set(&w->comp.comps[q->terms[TECS__CTZ(mask)].comp]))
            return true;
    return false;
}

void tecs__query_report_writes(tecs_query_t *q, int64_t first, int64_t count)
{
    tecs_iter_t it;
    memset(&it, 0, sizeof it);
    it.world = q->world;
    it.priv_.query = q;
    int32_t m, pos;
    rows_seek(q, first, &m, &pos);
    q->iters++;                 /* a callback of the reports cannot free q */
    while (rows_step(&it, q, &m, &pos, &count))
        report_writes(&it);
    q->iters--;
}

tecs_err_t tecs__query_reports_reserve(tecs_world_t *w)
{
    if (tecs__grow(w, (void **)&w->query.iters, &w->query.cap_iters, w->query.niters + 1,
                   sizeof *w->query.iters))
        return tecs__err(w, TECS_ENOMEM, "out of memory opening an iteration");
    return TECS_OK;
}

uint32_t tecs__query_reports_begin(tecs_world_t *w)
{
    uint32_t serial = iter_open(w);     /* room reserved: it cannot fail */
    tecs__defer_begin(w);
    return serial;
}

void tecs__query_reports_end(tecs_world_t *w, uint32_t serial)
{
    iter_close(w, serial);
    if (w->query.niters == 0)
        iters_done(w);
    tecs__defer_end(w);
}

void tecs__query_access(const tecs_query_t *q, uint64_t *read, uint64_t *write)
{
    for (int32_t t = 0; t < q->nterms; t++) {
        tecs_comp_t c = q->terms[t].comp;
        if (q->terms[t].oper == TECS_NONE || q->terms[t].access == TECS_FILTER)
            continue;           /* membership only: no value is touched */
        tecs__bit_set(read, c);
        if (q->terms[t].access == TECS_WRITE)
            tecs__bit_set(write, c);
    }
}

/* ---- support for filtered iteration (index.c) ------------------------- */

int32_t tecs__query_find(const tecs_query_t *q, const tecs_archetype_t *a)
{
    for (int32_t m = 0; m < q->nmatch; m++)
        if (q->march[m] == a)
            return m;
    return -1;
}

void tecs__iter_load_rows(tecs_iter_t *it, int32_t m, tecs_archetype_t *a, uint32_t row,
                          int32_t count)
{
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    char *const *ch = tecs__chunk_of(a, w, row);
    uint32_t i = row & w->arch.mask;
    it->priv_.arch = a;
    it->priv_.match = m;
    it->count = count;
    it->entities = tecs__chunk_ents(ch) + i;
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++)
        it->fields[t] = cols[t] >= 0 ? tecs__chunk_col(ch, cols[t]) + i * a->col_size[cols[t]]
                                     : NULL;
}

void tecs__iter_prefetch(const tecs_iter_t *it, int32_t m, const tecs_archetype_t *a,
                         uint32_t row)
{
#if defined(__GNUC__)
    const tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    char *const *ch = tecs__chunk_of(a, w, row);
    uint32_t i = row & w->arch.mask;
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++)
        if (cols[t] >= 0)
            TECS__PREFETCH(tecs__chunk_col(ch, cols[t]) + i * a->col_size[cols[t]]);
#else
    (void)it, (void)m, (void)a, (void)row;
#endif
}

/* ---- conveniences, on the public API only ----------------------------- */

/* Call fn on every row of an open iteration, each step's rows last to
** first with TECS_ITER_REVERSE, until it returns true. */
static void each_rows(tecs_iter_t *it, int32_t nterms, const size_t *size, int32_t flags,
                      tecs_each_fn fn, void *ctx)
{
    tecs_world_t *w = it->world;
    bool rev = flags & TECS_ITER_REVERSE;
    while (tecs_iter_next(it)) {
        for (int32_t i = 0; i < it->count; i++) {
            int32_t r = rev ? it->count - 1 - i : i;
            void *fields[TECS_MAX_TERMS];
            for (int32_t t = 0; t < nterms; t++)
                fields[t] = it->fields[t] ? (char *)it->fields[t] + (size_t)r * size[t] : NULL;
            tecs_err_t outer_err = tecs__cb_begin(w);
            bool stop = fn(w, it->entities[r], fields, ctx);
            tecs__cb_end(w, outer_err);
            if (stop) {
                tecs_iter_fini(it);
                return;
            }
        }
    }
}

tecs_err_t tecs_query_each_ex(tecs_query_t *q, int32_t flags, tecs_each_fn fn, void *ctx)
{
    if (q == NULL)
        return TECS_EINVAL;
    tecs_world_t *w = tecs_query_world(q);
    if (tecs__enter(w))
        return w->base.err;
    if (fn == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_query_each: NULL callback");
    if (tecs__iter_flags_check(w, flags, "tecs_query_each"))
        return TECS_EINVAL;
    const tecs_term_t *terms;
    int32_t nterms = tecs_query_terms(q, &terms);
    size_t size[TECS_MAX_TERMS];
    for (int32_t t = 0; t < nterms; t++)
        size[t] = tecs_component_size(w, terms[t].comp);
    tecs_iter_t it = tecs_query_iter_ex(q, flags);
    if (w->base.err)
        return w->base.err;     /* the iteration could not open */
    each_rows(&it, nterms, size, flags, fn, ctx);
    return TECS_OK;
}

tecs_err_t tecs_query_each(tecs_query_t *q, tecs_each_fn fn, void *ctx)
{
    return tecs_query_each_ex(q, 0, fn, ctx);
}

int32_t tecs_query_collect_ex(tecs_query_t *q, int32_t flags, tecs_entity_t *out, int32_t cap)
{
    if (q == NULL || tecs__enter(tecs_query_world(q)))
        return -1;
    if (cap < 0 || (cap > 0 && out == NULL)) {
        tecs__err(tecs_query_world(q), TECS_EINVAL, cap < 0
                  ? "tecs_query_collect: negative cap %d"
                  : "tecs_query_collect: NULL output for cap %d", cap);
        return -1;
    }
    if (tecs__iter_flags_check(tecs_query_world(q), flags, "tecs_query_collect"))
        return -1;
    if (out == NULL)
        return tecs_query_count(q);
    bool rev = flags & TECS_ITER_REVERSE;
    int32_t n = 0;
    tecs_iter_t it = tecs_query_iter_ex(q, flags);
    while (tecs_iter_next(&it)) {
        for (int32_t i = 0; i < it.count; i++, n++)
            if (n < cap)
                out[n] = it.entities[rev ? it.count - 1 - i : i];
    }
    return n;
}

int32_t tecs_query_collect(tecs_query_t *q, tecs_entity_t *out, int32_t cap)
{
    return tecs_query_collect_ex(q, 0, out, cap);
}

/* The archetype's component sizes, as its iteration hands out fields.
** @return the number of fields. */
static int32_t arch_field_sizes(const tecs_world_t *w, const tecs_archetype_t *a, size_t *size)
{
    const tecs_comp_t *comps;
    int32_t n = tecs_archetype_components(a, &comps);
    if (n > TECS_MAX_TERMS)
        n = TECS_MAX_TERMS;
    for (int32_t t = 0; t < n; t++)
        size[t] = tecs_component_size(w, comps[t]);
    return n;
}

tecs_err_t tecs_archetype_each(tecs_world_t *w, tecs_archetype_t *a, int32_t flags,
                               tecs_each_fn fn, void *ctx)
{
    if (w == NULL)
        return TECS_EINVAL;
    tecs_err_t err = tecs__enter(w);
    if (err || (err = arch_iter_check(w, a, flags, "tecs_archetype_each")))
        return err;
    if (fn == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_archetype_each: NULL callback");
    size_t size[TECS_MAX_TERMS];
    int32_t nterms = arch_field_sizes(w, a, size);
    tecs_iter_t it = tecs_archetype_iter(w, a, flags);
    if ((err = tecs_last_error(w)) != TECS_OK)
        return err;
    each_rows(&it, nterms, size, flags, fn, ctx);
    return TECS_OK;
}

int32_t tecs_archetype_collect(tecs_world_t *w, tecs_archetype_t *a, int32_t flags,
                               tecs_entity_t *out, int32_t cap)
{
    if (w == NULL || tecs__enter(w) || arch_iter_check(w, a, flags, "tecs_archetype_collect"))
        return -1;
    if (cap < 0 || (cap > 0 && out == NULL)) {
        tecs__err(w, TECS_EINVAL, cap < 0 ? "tecs_archetype_collect: negative cap %d"
                                          : "tecs_archetype_collect: NULL output for cap %d",
                  cap);
        return -1;
    }
    if (out == NULL)
        return tecs_archetype_entity_count(a);
    bool rev = flags & TECS_ITER_REVERSE;
    int32_t n = 0;
    tecs_iter_t it = tecs_archetype_iter(w, a, flags);
    if (tecs_last_error(w) != TECS_OK)
        return -1;
    while (tecs_iter_next(&it)) {
        for (int32_t i = 0; i < it.count; i++, n++)
            if (n < cap)
                out[n] = it.entities[rev ? it.count - 1 - i : i];
    }
    return n;
}
