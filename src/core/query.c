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
** A term whose rows differ within an archetype (an enableable component's
** term that reads its enabled bit, a sparse component's term, a change
** term) is decided row by row by a row filter (query_filter.h); the query keeps
** the list of its filters and this engine calls them through their kinds,
** never by name: see "row filters" below. A chunk where the filters decide
** every row alike is one step; another is handed out as runs of
** consecutive passing rows; a query with a with-filter of few listed
** entities (a sparse set's members) may walk those instead. A query with
** no filter walks chunk after chunk and calls no filter.
**
** Writes through a write term are reported (a SET event per row) when the
** iterator leaves a chunk, if a listener (a field index) watches that
** component; nobody pays for it otherwise.
**
** tecs_iter starts every form of iteration: a query's here, one
** archetype's as a query iteration with one match (through a query the
** world keeps for it); a where's and a cache's through the start function
** their objects begin with (tecs__iter_src, index/), a part's through the
** one the worker add-on registers (base.part_start). tecs_iter_each and
** tecs_iter_collect at the end of this file take any iterator and use the
** public API (and the callback depths).
**
** Calls: base.c, component.c, event.c (it listens for new archetypes, and
** reports writes as SET events, after a veto), archetype.c (it checks the
** archetype handles users pass), command.c (an iteration defers the
** world), the row filters' kinds (query_sparse.c, query_toggle.c,
** query_change.c: their tables).
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
    bool filtered;              /* it has row filters (else every row of a
                                   match passes) ...                        */
    int32_t nf;                 /* ... their number ...                     */
    tecs__filter f[TECS__MAX_FILTERS]; /* ... in term order (query_filter.h) */
    uint32_t decided;           /* terms a filter decides (TECS__FK_OPER)   */
    uint32_t varying;           /* terms whose field may come and go from
                                   row to row (an optional or any term a
                                   filter decides), or that hand out a
                                   filter's value (row_values)              */
    uint32_t row_values;        /* terms whose value a filter gives (no
                                   column holds it): a step with one present
                                   is one row                               */
    int8_t vf[TECS_MAX_TERMS];  /* of those, the filter that gives it       */
    uint32_t shared;            /* terms whose value is another entity's,
                                   one for a run of rows with one key
                                   (TECS__FK_SHARED; vf gives their filter) */
    bool walks;                 /* some with-filter lists its entities
                                   (kind->count): the walk of them may beat
                                   the walk of the rows                     */
    bool runs;                  /* some filter follows the query's runs     */
    int32_t *mindex;            /* when it walks: archetype id -> its match
                                   + 1, or 0 (member lookups)               */
    int32_t cap_mindex;
    int8_t *mtog;               /* nmatch rows of nf + 1: each filter's
                                   entry in the match; then 1 if the
                                   any-terms hold without the filters       */
    int32_t cap_tog;
    uint64_t last_run;          /* the tick the latest run started at       */
    bool rt_write;              /* a write term's component keeps ticks per
                                   row: each run handed out stores them     */
    uint32_t tsize[TECS_MAX_TERMS]; /* each term's value size, 0 for a tag */
    bool only_shared;           /* every filter is TECS__FK_SHARED, none an
                                   any-term: runs are found by their keys   */
    bool cascade;               /* matches by rank (w->query.rank) ...      */
    bool unsorted;              /* ... not yet: sorted at the next start    */
};

/* ---- matching -------------------------------------------------------- */

/* Fill cols (nterms) and ents (nf + 1: each filter's entry, then 1 if the
** any-terms hold without the filters) for archetype a; false if a does not
** match. A term a filter decides is tested by its filter's entry: with
** TECS__FILTER_OFF no row of a has it. */
/* Does q name every hidden tag of a (a term of it, not TECS_NONE)? Else
** it skips a's rows. */
static TECS__NOINLINE bool shows_hidden(const tecs_query_t *q, const tecs_archetype_t *a)
{
    for (int32_t i = 0; i < a->ncomps; i++) {
        if (!tecs__comp_get(q->world, a->comps[i])->hidden)
            continue;
        bool named = false;
        for (int32_t t = 0; t < q->nterms && !named; t++)
            named = q->terms[t].comp == a->comps[i] && q->terms[t].oper != TECS_NONE &&
                    q->terms[t].target == 0 && !q->terms[t].from_parent;
        if (!named)
            return false;
    }
    return true;
}

static bool match(const tecs_query_t *q, const tecs_archetype_t *a, int16_t *cols, int8_t *ents)
{
    if (TECS__UNLIKELY(a->hidden) && !shows_hidden(q, a))
        return false;
    bool any = false;           /* an any-term a filter decides may hold */
    bool any_plain = false;     /* an any-term no filter decides holds */
    for (int32_t t = 0; t < q->nterms; t++) {
        bool decided = (q->decided >> t) & 1u;
        const tecs_term_t *term = &q->terms[t];
        int32_t col = tecs__arch_col(a, term->comp);
        bool present = col != TECS__COL_ABSENT;
        switch (decided ? TECS_OPTIONAL : term->oper) {     /* (decided: below) */
        case TECS_WITH:
            if (!present)
                return false;
            break;
        case TECS_ANY:
            any_plain = any_plain || present;
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
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        int8_t e = f->kind->match(q->world, f, a);
        ents[i] = e;
        if (!(f->kind->traits & TECS__FK_OPER))
            continue;
        if (e == TECS__FILTER_OFF && f->term.oper == TECS_WITH)
            return false;
        any = any || (f->term.oper == TECS_ANY && e != TECS__FILTER_OFF);
        if (f->kind->traits & TECS__FK_NOCOL)
            cols[f->t] = (int16_t)TECS__COL_ABSENT;
    }
    ents[q->nf] = !q->has_any || any_plain;
    return !q->has_any || any || any_plain;
}

/* ---- row filters -----------------------------------------------------
**
** A query with row filters (query_filter.h) decides rows 64 a word: each filter's
** "has" bits, its operator applied, as the rows passing (with, none) and
** the rows where an any-term holds (any). A chunk where every filter is
** alike in all rows (uniform) is decided once for all its rows; otherwise
** it is handed out as runs of rows that pass and in which every optional or
** any term a filter decides is present or absent throughout (a field is
** one array: absent, it is NULL for the run), one row a run where a
** filter's value is handed out.
*/

/* Rows in use in chunk k of a. */
static uint32_t chunk_rows(const tecs_world_t *w, const tecs_archetype_t *a, int32_t k)
{
    int32_t left = a->count - k * (int32_t)w->arch.rows;
    return (uint32_t)(left < (int32_t)w->arch.rows ? left : (int32_t)w->arch.rows);
}

/* Match m's row of filter entries (see mtog). */
static inline const int8_t *match_ents(const tecs_query_t *q, int32_t m)
{
    return q->mtog + (size_t)m * (q->nf + 1);
}

/* Apply a filter's "has" bits to the rows passing (*pass) and to the rows
** where an any-term holds (*any). */
static inline void tog_apply(tecs_oper_t oper, uint64_t has, uint64_t *pass, uint64_t *any)
{
    if (oper == TECS_WITH)
        *pass &= has;
    else if (oper == TECS_NONE)
        *pass &= ~has;
    else if (oper == TECS_ANY)
        *any |= has;
}

/* Filter f's "has" bits of word wi of chunk k of a (k < 0: of every row,
** while uniform), its entry being e: a bit column's words in place. */
static inline uint64_t filter_word(const tecs_query_t *q, const tecs__filter *f,
                                   const tecs_archetype_t *a, int8_t e, char *const *cp,
                                   int32_t k, uint32_t wi)
{
    if ((f->kind->traits & TECS__FK_BITS) && cp != NULL)
        return e < 0 ? 0 : tecs__chunk_bits(a, cp, e)[wi] ^ f->inv;
    return f->kind->word(q->world, f, a, e, k, wi);
}

/* The rows of word wi of chunk k of match m (archetype a) that pass the
** filters; h[i] receives filter i's "has" bits. With k < 0, of any row of a
** while every filter is uniform. */
static uint64_t tog_word(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a, int32_t k,
                         uint32_t wi, uint64_t *h)
{
    const int8_t *js = match_ents(q, m);
    char *const *cp = k >= 0 ? tecs__kcols(a, (uint32_t)k) : NULL;
    uint64_t pass = ~(uint64_t)0, any = js[q->nf] ? ~(uint64_t)0 : 0;
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        h[i] = filter_word(q, f, a, js[i], cp, k, wi);
        tog_apply(f->term.oper, h[i], &pass, &any);
    }
    return pass & any;
}

/* Does filter i give its term a field that comes and goes with its "has"
** bits (an optional or any term, its component in the archetype: entry
** js[i])? */
static inline bool tog_varies(const tecs_query_t *q, const int8_t *js, int32_t i)
{
    tecs_oper_t op = q->f[i].term.oper;
    return js[i] != TECS__FILTER_OFF && (op == TECS_ANY || op == TECS_OPTIONAL) &&
           (q->f[i].kind->traits & TECS__FK_OPER);
}

/* The terms a run leaves without a field: its optional and any terms a
** filter decides whose "has" bit (h[i] at bit b) is clear. */
static uint32_t tog_absent(const tecs_query_t *q, const int8_t *js, const uint64_t *h, uint32_t b)
{
    uint32_t absent = 0;
    for (int32_t i = 0; i < q->nf; i++)
        if (tog_varies(q, js, i) && !((h[i] >> b) & 1u))
            absent |= 1u << q->f[i].t;
    return absent;
}

/* The rows of word wi that pass and give the fields a run with absent
** terms `absent` has. */
static uint64_t tog_same(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a, int32_t k,
                         uint32_t wi, uint32_t absent)
{
    const int8_t *js = match_ents(q, m);
    uint64_t h[TECS__MAX_FILTERS];
    uint64_t ok = tog_word(q, m, a, k, wi, h);
    for (int32_t i = 0; i < q->nf; i++)
        if (tog_varies(q, js, i))
            ok &= (absent >> q->f[i].t) & 1u ? ~h[i] : h[i];
    return ok;
}

enum { TOG_ALL, TOG_NONE, TOG_ROWS };

/* How the filters take the rows of match m (archetype a) now: all alike,
** passing (TOG_ALL, the terms without a field in *absent) or not
** (TOG_NONE), or row by row (TOG_ROWS). */
static int tog_mode(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a, uint32_t *absent)
{
    *absent = 0;
    if (!q->filtered)
        return TOG_ALL;
    const int8_t *js = match_ents(q, m);
    for (int32_t i = 0; i < q->nf; i++)
        if (!q->f[i].kind->uniform(q->world, &q->f[i], a, js[i]))
            return TOG_ROWS;
    uint64_t h[TECS__MAX_FILTERS];
    if (!(tog_word(q, m, a, -1, 0, h) & 1u))
        return TOG_NONE;
    *absent = tog_absent(q, js, h, 0);
    return TOG_ALL;
}

/* Bits [0, n) of a word set (n <= 64). */
static inline uint64_t low_bits(uint32_t n)
{
    return n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
}

/* The rows [lo, hi) of word wi of a chunk, as bits of the word. */
static inline uint64_t word_span(uint32_t wi, uint32_t lo, uint32_t hi)
{
    uint32_t base = wi << 6;
    uint64_t below = hi <= base ? 0 : low_bits(hi - base);
    uint64_t under = lo <= base ? 0 : low_bits(lo - base);
    return below & ~under;
}

/* End the run [*at, *at + *n) of chunk k of a, found from its row r (rev:
** its last), where the key of a shared term's value changes. */
static TECS__NOINLINE void cut_shared(const tecs_query_t *q, const tecs_archetype_t *a,
                                      int32_t k, uint32_t r, bool rev, uint32_t *at,
                                      uint32_t *n, uint32_t absent)
{
    const tecs_entity_t *ents = tecs__chunk_ents(tecs__kcols(a, (uint32_t)k));
    uint32_t len = *n;
    for (uint32_t t = q->shared & ~absent; t; t &= t - 1) {
        const tecs__filter *f = &q->f[q->vf[TECS__CTZ(t)]];
        len = f->kind->same(q->world, f, ents + r, len, rev ? -1 : 1, NULL);
    }
    if (rev)
        *at = r + 1 - len;
    *n = len;
}

/* tog_run for a query whose every filter shares its value along a run of
** one key (q->only_shared: terms read from the parent): the rows of a run
** share their "has" too, so a run is found by its keys alone and decided
** by its first row. vals[t] gets the field of each term t in q->shared,
** its value or NULL: the run found's, when there is one. */
static TECS__INLINE bool shared_run(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a,
                                    int32_t k, uint32_t lo, uint32_t hi, bool rev, uint32_t *at,
                                    uint32_t *n, uint32_t *absent, void **vals)
{
    const tecs_world_t *w = q->world;
    const tecs_entity_t *ents = tecs__chunk_ents(tecs__kcols(a, (uint32_t)k));
    const int8_t *js = match_ents(q, m);
    for (uint32_t i = rev ? hi : lo; rev ? i > lo : i < hi;) {
        uint32_t r = rev ? i - 1 : i, len = rev ? r + 1 - lo : hi - r;
        uint32_t ab = 0;
        bool pass = true;
        for (int32_t x = 0; x < q->nf; x++) {
            const tecs__filter *f = &q->f[x];
            void *v;
            len = f->kind->same(w, f, ents + r, len, rev ? -1 : 1, &v);
            bool has = js[x] != TECS__FILTER_OFF && v != NULL;
            if ((q->shared >> f->t) & 1u)
                vals[f->t] = has ? v : NULL;
            if (f->term.oper == TECS_OPTIONAL)
                ab |= (uint32_t)!has << f->t;
            else if (has != (f->term.oper != TECS_NONE))
                pass = false;
        }
        if (pass) {
            *at = rev ? r + 1 - len : r;
            *n = len;
            *absent = ab;
            return true;
        }
        i = rev ? r + 1 - len : r + len;
    }
    return false;
}

/* shared_run for tog_run, its values left out (drop_fields asks for them
** again), apart so that tog_run carries none of it. */
static TECS__NOINLINE bool shared_run_novals(const tecs_query_t *q, int32_t m,
                                             const tecs_archetype_t *a, int32_t k, uint32_t lo,
                                             uint32_t hi, bool rev, uint32_t *at, uint32_t *n,
                                             uint32_t *absent)
{
    void *vals[TECS_MAX_TERMS];
    return shared_run(q, m, a, k, lo, hi, rev, at, n, absent, vals);
}

/* The first run (rev: the last) of rows of chunk k of match m within the
** chunk's rows [lo, hi) that pass, with the same fields throughout: its
** first row *at, its length *n and its terms without a field; false if
** none. */
static bool tog_run(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a, int32_t k,
                    uint32_t lo, uint32_t hi, bool rev, uint32_t *at, uint32_t *n,
                    uint32_t *absent)
{
    if (TECS__UNLIKELY(q->only_shared))
        return shared_run_novals(q, m, a, k, lo, hi, rev, at, n, absent);
    const int8_t *js = match_ents(q, m);
    uint64_t h[TECS__MAX_FILTERS];
    uint32_t r;                 /* the run's first row found (rev: its last) */
    for (uint32_t i = rev ? hi : lo;;) {
        if (rev ? i <= lo : i >= hi)
            return false;
        uint32_t wi = (rev ? i - 1 : i) >> 6;
        uint64_t pass = tog_word(q, m, a, k, wi, h) & word_span(wi, lo, hi) &
                        (rev ? low_bits(i - (wi << 6)) : ~low_bits(i - (wi << 6)));
        if (pass) {
            r = (wi << 6) + (uint32_t)(rev ? 63 - TECS__CLZ64(pass) : TECS__CTZ64(pass));
            *absent = tog_absent(q, js, h, r & 63);
            break;
        }
        i = rev ? wi << 6 : (wi + 1) << 6;
    }
    if (q->row_values & ~*absent) {     /* a filter's value: a row a step */
        *at = r;
        *n = 1;
        return true;
    }
    /* Extend the run word by word while the rows pass with its fields. */
    uint32_t end = r;           /* rev: the run's first row so far; else its end */
    if (!rev)
        for (;;) {
            uint32_t wi = end >> 6, b = end & 63;
            uint64_t ok = tog_same(q, m, a, k, wi, *absent) & word_span(wi, lo, hi);
            uint64_t y = ~(ok >> b);
            uint32_t len = y ? (uint32_t)TECS__CTZ64(y) : 64;
            end += len;
            if (b + len < 64 || end >= hi)
                break;
        }
    else
        for (end = r + 1;;) {
            uint32_t wi = (end - 1) >> 6, b = (end - 1) & 63;
            uint64_t ok = tog_same(q, m, a, k, wi, *absent) & word_span(wi, lo, hi);
            uint64_t y = ~(ok << (63 - b));
            uint32_t len = y ? (uint32_t)TECS__CLZ64(y) : 64;
            end -= len;
            if (len < b + 1 || end <= lo)
                break;
        }
    *at = rev ? end : r;
    *n = rev ? r + 1 - end : end - r;
    if (TECS__UNLIKELY(q->shared & ~*absent) && *n > 1)
        cut_shared(q, a, k, r, rev, at, n, *absent);
    return true;
}

/* The rows of match m that pass its toggle terms. */
static int64_t tog_count(const tecs_query_t *q, int32_t m)
{
    const tecs_world_t *w = q->world;
    const tecs_archetype_t *a = q->march[m];
    uint32_t absent;
    int mode = tog_mode(q, m, a, &absent);
    if (mode != TOG_ROWS)
        return mode == TOG_ALL ? a->count : 0;
    int64_t n = 0;
    uint64_t h[TECS__MAX_FILTERS];
    for (int32_t k = 0; (int64_t)k * w->arch.rows < a->count; k++) {
        uint32_t rows = chunk_rows(w, a, k);
        for (uint32_t wi = 0; wi << 6 < rows; wi++)
            n += TECS__POP64(tog_word(q, m, a, k, wi, h) & word_span(wi, 0, rows));
    }
    return n;
}

/* Make room for one more match. */
static tecs_err_t reserve_match(tecs_query_t *q)
{
    tecs_world_t *w = q->world;
    if (tecs__grow(w, (void **)&q->march, &q->cap_match, q->nmatch + 1, sizeof *q->march))
        return TECS_ENOMEM;
    if (q->filtered && tecs__grow(w, (void **)&q->mtog, &q->cap_tog,
                                (q->nmatch + 1) * (q->nf + 1), sizeof *q->mtog))
        return TECS_ENOMEM;
    if (q->walks && q->cap_mindex <= w->arch.narchs) {
        int32_t old = q->cap_mindex;
        if (tecs__grow(w, (void **)&q->mindex, &q->cap_mindex, w->arch.narchs + 1,
                       sizeof *q->mindex))
            return TECS_ENOMEM;
        memset(q->mindex + old, 0, (size_t)(q->cap_mindex - old) * sizeof *q->mindex);
    }
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
    int8_t ents[TECS__MAX_FILTERS + 1];
    if (!match(q, a, cols, ents))
        return;
    memcpy(q->mcols + (size_t)q->nmatch * q->nterms, cols, (size_t)q->nterms * sizeof *cols);
    if (q->filtered)
        memcpy(q->mtog + (size_t)q->nmatch * (q->nf + 1), ents, (size_t)q->nf + 1);
    if (q->walks)
        q->mindex[a->id] = q->nmatch + 1;
    q->march[q->nmatch++] = a;
    if (q->cascade && q->nmatch > 1 &&
        q->world->query.rank(q->world, a) < q->world->query.rank(q->world, q->march[q->nmatch - 2]))
        q->unsorted = true;
}

/* Exchange matches i and i + 1 (every per-match row with them). */
static void swap_matches(tecs_query_t *q, int32_t i)
{
    tecs_archetype_t *a = q->march[i];
    q->march[i] = q->march[i + 1];
    q->march[i + 1] = a;
    for (int32_t t = 0; t < q->nterms; t++) {
        int16_t *c = q->mcols + (size_t)i * q->nterms + t, x = c[0];
        c[0] = c[q->nterms];
        c[q->nterms] = x;
    }
    int32_t stride = q->nf + 1;
    for (int32_t k = 0; q->filtered && k < stride; k++) {
        int8_t *e = q->mtog + (size_t)i * stride + k, x = e[0];
        e[0] = e[stride];
        e[stride] = x;
    }
    if (q->walks) {
        q->mindex[q->march[i]->id] = i + 1;
        q->mindex[q->march[i + 1]->id] = i + 2;
    }
}

/* A cascade query's matches by rank, ties in creation order (an insertion
** sort: matches come in mostly in order). */
static TECS__NOINLINE void sort_matches(tecs_query_t *q)
{
    tecs_world_t *w = q->world;
    for (int32_t i = 1; i < q->nmatch; i++)
        for (int32_t j = i; j > 0 && w->query.rank(w, q->march[j]) <
                                     w->query.rank(w, q->march[j - 1]); j--)
            swap_matches(q, j - 1);
    q->unsorted = false;
}

static bool would_match(const tecs_query_t *q, const tecs_archetype_t *a)
{
    int16_t cols[TECS_MAX_TERMS];
    int8_t ents[TECS__MAX_FILTERS + 1];
    return match(q, a, cols, ents);
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
        if (q->nmatch > 0 && q->march[q->nmatch - 1] == a) {
            q->nmatch--;
            if (q->walks)
                q->mindex[a->id] = 0;
        }
}

static void query_release(tecs_query_t *q)
{
    tecs_world_t *w = q->world;
    tecs__free(w, q->march, (size_t)q->cap_match * sizeof *q->march);
    tecs__free(w, q->mcols, (size_t)q->cap_cols * sizeof *q->mcols);
    tecs__free(w, q->mtog, (size_t)q->cap_tog * sizeof *q->mtog);
    tecs__free(w, q->mindex, (size_t)q->cap_mindex * sizeof *q->mindex);
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

/* The kinds of row filters, in the order they claim a term. */
static const tecs__filter_kind *const filter_kinds[] = {
    &tecs__filter_sparse, &tecs__filter_toggle, &tecs__filter_change,
};

#define NKINDS (int32_t)(sizeof filter_kinds / sizeof *filter_kinds)

tecs_err_t tecs__query_add_kind(tecs_world_t *w, const tecs__filter_kind *kind)
{
    if (w->query.nkinds == TECS__MAX_KINDS)
        return tecs__err(w, TECS_ELIMIT, "too many kinds of row filters");
    w->query.kinds[w->query.nkinds++] = kind;
    return TECS_OK;
}

/* Give term t of q the filters whose kinds claim it: the core's, then the
** add-ons'. */
static tecs_err_t add_filters(tecs_query_t *q, int32_t t)
{
    const tecs_term_t *term = &q->terms[t];
    bool decided = false;
    for (int32_t k = 0; k < NKINDS + q->world->query.nkinds; k++) {
        const tecs__filter_kind *kind = k < NKINDS ? filter_kinds[k]
                                                   : q->world->query.kinds[k - NKINDS];
        tecs__filter *f = &q->f[q->nf];
        if (decided && (kind->traits & TECS__FK_OPER))
            continue;           /* one filter decides a term */
        *f = (tecs__filter){ .kind = kind, .term = *term, .t = (uint8_t)t };
        if (!kind->claim(q->world, f))
            continue;
        tecs_err_t err = kind->refuse ? kind->refuse(q->world, f) : TECS_OK;
        if (err)
            return err;
        if (kind->size && (kind->traits & TECS__FK_OPER))
            q->tsize[t] = kind->size(q->world, f);
        q->nf++;
        q->filtered = true;
        q->walks = q->walks || (kind->count != NULL && f->term.oper == TECS_WITH);
        q->runs = q->runs || kind->run != NULL;
        if (!(kind->traits & TECS__FK_OPER))
            continue;
        decided = true;
        q->decided |= 1u << t;
        if (term->oper == TECS_ANY || term->oper == TECS_OPTIONAL)
            q->varying |= 1u << t;
        if (kind->value != NULL && term->oper != TECS_NONE && term->access != TECS_FILTER &&
            q->tsize[t] > 0) {
            if (kind->traits & TECS__FK_SHARED)
                q->shared |= 1u << t;
            else
                q->row_values |= 1u << t;
            q->varying |= 1u << t;
            q->vf[t] = (int8_t)(q->nf - 1);
        } else if (kind->traits & TECS__FK_SHARED) {
            q->varying |= 1u << t;      /* its rows pass by runs of a key */
        }
    }
    return TECS_OK;
}

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
        bool any_rel = term->comp == TECS_WILDCARD && term->target != 0;
        if (!any_rel && tecs__comp_get(w, term->comp) == NULL)
            return tecs__err(w, TECS_ENOCOMP, "term %d: component %u is unknown", t, term->comp);
        if ((term->from_parent || term->inherited) &&
            ((term->access == TECS_WRITE && term->oper != TECS_NONE) || term->change != TECS_CHANGE_ANY ||
             term->toggle != TECS_TOGGLE_ENABLED))
            return tecs__err(w, TECS_EINVAL, "term %d: a term read from the %s is TECS_READ or "
                             "TECS_FILTER, with no toggle and no change", t,
                             term->from_parent ? "parent" : "base");
        if (term->inherited && term->oper != TECS_NONE && tecs_component_enableable(w, term->comp))
            return tecs__err(w, TECS_EINVAL, "term %d: " TECS__COMP_FMT " is enableable: its "
                             "enabled state is an entity's own, so no term inherits it", t,
                             TECS__COMP(w, term->comp));
        if (term->from_parent && term->inherited)
            return tecs__err(w, TECS_EINVAL, "term %d: a term reads from the parent or from "
                             "the base, not both", t);
        if (any_rel && (term->access != TECS_FILTER || term->change != TECS_CHANGE_ANY ||
                        term->toggle != TECS_TOGGLE_ENABLED))
            return tecs__err(w, TECS_EINVAL, "term %d: a term of any relation hands out no "
                             "value: TECS_FILTER access, no toggle, no change", t);
        if ((unsigned)term->oper > TECS_OPTIONAL)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown operator %d", t, (int)term->oper);
        if ((unsigned)term->access > TECS_FILTER)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown access %d", t, (int)term->access);
        if ((unsigned)term->toggle > TECS_TOGGLE_DISABLED)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown toggle %d", t, (int)term->toggle);
        if ((unsigned)term->change > TECS_CHANGE_ADDED)
            return tecs__err(w, TECS_EINVAL, "term %d: unknown change %d", t, (int)term->change);
        if (term->change != TECS_CHANGE_ANY && term->oper != TECS_WITH)
            return tecs__err(w, TECS_EINVAL, "term %d: a change term must be a with-term", t);
        if (term->change == TECS_CHANGE_CHANGED && tecs_component_size(w, term->comp) == 0)
            return tecs__err(w, TECS_EINVAL, "term %d: " TECS__COMP_FMT " is a tag: it has no "
                             "value to change (TECS_CHANGE_ADDED asks for new ones)", t,
                             TECS__COMP(w, term->comp));
        if (term->toggle == TECS_TOGGLE_DISABLED && !tecs_component_enableable(w, term->comp))
            return tecs__err(w, TECS_EINVAL, "term %d: TECS_TOGGLE_DISABLED of " TECS__COMP_FMT
                             ", which is not enableable", t, TECS__COMP(w, term->comp));
        for (int32_t u = 0; u < t; u++)
            if (d->terms[u].comp == term->comp && d->terms[u].target == term->target &&
                d->terms[u].from_parent == term->from_parent)
                return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is in terms %d and %d: a "
                                 "component (a pair) may have one term only",
                                 TECS__COMP(w, term->comp), u, t);
    }
    return TECS_OK;
}

tecs_query_t *tecs_query_new(tecs_world_t *w, const tecs_query_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || validate_terms(w, d) || listen_once(w))
        return NULL;
    if (d->cascade && w->query.rank == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_query_new: cascade needs the relation add-on "
                  "started (tecs_childof)");
        return NULL;
    }
    tecs_query_t *q = tecs__grow(w, (void **)&w->query.iters, &w->query.cap_iters, ITERS_RESERVED,
                                 sizeof *w->query.iters) ? NULL : tecs__alloc(w, sizeof *q);
    if (q == NULL) {
        tecs__err(w, TECS_ENOMEM, "out of memory creating a query");
        return NULL;
    }
    memset(q, 0, sizeof *q);
    q->world = w;
    q->nterms = d->term_count;
    q->cascade = d->cascade;
    if (d->term_count > 0)
        memcpy(q->terms, d->terms, (size_t)d->term_count * sizeof *d->terms);
    for (int32_t t = 0; t < q->nterms; t++) {
        q->tsize[t] = (uint32_t)tecs_component_size(w, q->terms[t].comp);
        q->has_any = q->has_any || q->terms[t].oper == TECS_ANY;
        if (q->terms[t].access == TECS_WRITE && q->terms[t].oper != TECS_NONE &&
            tecs_component_size(w, q->terms[t].comp) > 0)
            q->write_mask |= 1u << t;
        q->rt_write = q->rt_write || (((q->write_mask >> t) & 1u) &&
                                      w->comp.comps[q->terms[t].comp].row_ticks);
        if (add_filters(q, t)) {
            query_release(q);
            return NULL;
        }
        if ((q->terms[t].target != 0 || q->terms[t].comp == TECS_WILDCARD ||
             q->terms[t].from_parent || q->terms[t].inherited) && !((q->decided >> t) & 1u)) {
            tecs__err(w, TECS_EINVAL, q->terms[t].from_parent
                      ? "term %d: a term read from the parent is of a table component, and "
                        "needs the relation add-on started (tecs_childof)"
                      : q->terms[t].inherited
                      ? "term %d: an inherited term is of a table component that is no "
                        "relation, and needs the relation add-on started (tecs_isa)"
                      : "term %d: a target is for a relation's term (tinyecs/relation.h)",
                      (int)t);
            query_release(q);
            return NULL;
        }
    }
    q->only_shared = q->nf > 0;
    for (int32_t i = 0; i < q->nf; i++)
        q->only_shared = q->only_shared && (q->f[i].kind->traits & TECS__FK_SHARED) &&
                         q->f[i].term.oper != TECS_ANY;
    for (int32_t i = 0; i < w->arch.narchs; i++) {
        if (!would_match(q, w->arch.archs[i]))
            continue;
        if (reserve_match(q)) {
            query_release(q);
            return NULL;
        }
        add_match(q, w->arch.archs[i]);
    }
    if (q->unsorted)
        sort_matches(q);
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

/* Does row of q's match m pass its filters, filter `skip` (-1: none)
** aside? If so, *absent gets the terms it has no field of. One row: one
** call per filter. */
static bool row_eval(const tecs_query_t *q, int32_t m, uint32_t row, int32_t skip,
                     uint32_t *absent)
{
    const tecs_world_t *w = q->world;
    const tecs_archetype_t *a = q->march[m];
    const int8_t *js = match_ents(q, m);
    uint64_t pass = 1, any = js[q->nf], h[TECS__MAX_FILTERS];
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        h[i] = i == skip || f->kind->row(w, f, a, js[i], row);
        tog_apply(f->term.oper, h[i], &pass, &any);
    }
    *absent = tog_absent(q, js, h, 0);
    return pass & any & 1u;
}

/* ---- walking a filter's entities ---------------------------------------
**
** A query with a with-filter whose entities are listed (a sparse set's
** members) and few next to the rows of its archetypes walks those entities
** instead of the rows: each one's record gives its archetype and row,
** mindex its match, row_eval the rest of the filters. A step is one row
** then, in the order of the filter's list.
*/

/* Walk the entities when they are fewer than 1 / DENSE_SHARE of the rows. */
#define DENSE_SHARE 4

/* The with-filter of q with the fewest listed entities, when walking them
** beats walking q's rows: its index, or -1. */
static int32_t dense_term(const tecs_query_t *q)
{
    int32_t best = -1, fewest = INT32_MAX;
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        if (f->kind->count == NULL || f->term.oper != TECS_WITH)
            continue;
        int32_t n = f->kind->count(q->world, f);
        if (n < fewest)
            best = i, fewest = n;
    }
    if (best < 0)
        return -1;
    int64_t rows = 0;
    for (int32_t m = 0; m < q->nmatch; m++)
        rows += q->march[m]->count;
    return (int64_t)fewest * DENSE_SHARE < rows ? best : -1;
}

/* The match and row of entity k of filter i, if it passes q: true, with
** its match, its row and the terms it has no field of. */
static bool dense_member(const tecs_query_t *q, int32_t i, int32_t k, int32_t *m, uint32_t *row,
                         uint32_t *absent)
{
    const tecs_world_t *w = q->world;
    tecs_entity_t e = q->f[i].kind->member(w, &q->f[i], k);
    const tecs__record *r = e ? tecs__ei_alive(w, e) : NULL;
    const tecs_archetype_t *a = r ? tecs__rec_arch(w, r) : NULL;
    *m = a && (int32_t)a->id < q->cap_mindex ? q->mindex[a->id] - 1 : -1;
    *row = r ? r->row : 0;
    return *m >= 0 && row_eval(q, *m, *row, i, absent);
}

static int64_t dense_count(const tecs_query_t *q, int32_t i)
{
    int64_t n = 0;
    int32_t m;
    uint32_t row, absent;
    for (int32_t k = 0, count = q->f[i].kind->count(q->world, &q->f[i]); k < count; k++)
        n += dense_member(q, i, k, &m, &row, &absent);
    return n;
}

bool tecs__query_row_ok(const tecs_query_t *q, int32_t m, uint32_t row)
{
    uint32_t absent;
    return !q->filtered || row_eval(q, m, row, -1, &absent);
}

bool tecs__query_entity_ok(const tecs_query_t *q, const tecs_archetype_t *a, tecs_entity_t e,
                           const tecs__view *v)
{
    int16_t cols[TECS_MAX_TERMS];
    int8_t js[TECS__MAX_FILTERS + 1];
    if (a == NULL || !match(q, a, cols, js))
        return false;
    uint64_t pass = 1, any = js[q->nf];
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        if (f->kind->entity != NULL)
            tog_apply(f->term.oper, f->kind->entity(q->world, f, a, js[i], e, v), &pass,
                      &any);
    }
    return pass & any & 1u;
}

bool tecs__query_rowwise(const tecs_query_t *q)
{
    return q->filtered;
}

int32_t tecs__query_clip(const tecs_query_t *q, int32_t m, uint32_t row, int32_t n, bool from_end,
                         int32_t *skip, uint32_t *absent)
{
    const tecs_world_t *w = q->world;
    const tecs_archetype_t *a = q->march[m];
    const int8_t *js = match_ents(q, m);
    int32_t k = (int32_t)(row >> w->arch.shift);
    uint32_t lo = row & w->arch.mask;
    uint64_t h[TECS__MAX_FILTERS];
    int32_t len = 0;
    *skip = 0;
    *absent = 0;
    for (int32_t i = 0; i < n; i++) {
        uint32_t x = from_end ? lo + (uint32_t)(n - 1 - i) : lo + (uint32_t)i;
        bool pass = (tog_word(q, m, a, k, x >> 6, h) >> (x & 63)) & 1u;
        uint32_t ab = pass ? tog_absent(q, js, h, x & 63) : 0;
        if (len == 0 && !pass) {
            ++*skip;
            continue;
        }
        if (!pass || (len > 0 && ab != *absent))
            break;
        *absent = ab;
        len++;
        if ((q->row_values | q->shared) & ~ab)
            break;              /* a filter's value: a row a step */
    }
    return len;
}

uint64_t tecs_query_last_run(const tecs_query_t *q)
{
    return q ? q->last_run : 0;
}

tecs_err_t tecs_query_set_last_run(tecs_query_t *q, uint64_t tick)
{
    if (q == NULL)
        return TECS_EINVAL;
    tecs_world_t *w = q->world;
    tecs_err_t err = tecs__enter_object(w);
    if (err)
        return err;
    if (tick > w->arch.tick)
        return tecs__err(w, TECS_EINVAL, "tecs_query_set_last_run: tick %llu is ahead of the "
                         "world's (%llu)", (unsigned long long)tick,
                         (unsigned long long)w->arch.tick);
    if (q->iters > 0)
        return tecs__err(w, TECS_EBUSY, "tecs_query_set_last_run: an iteration of the query "
                         "is open");
    q->last_run = tick;
    return TECS_OK;
}

bool tecs__query_has_changes(const tecs_query_t *q)
{
    for (int32_t i = 0; i < q->nf; i++)
        if (q->f[i].kind->entity == NULL)
            return true;
    return false;
}

bool tecs__query_toggles(const tecs_query_t *q, tecs_comp_t c)
{
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        if (f->kind->entity != NULL &&
            (f->kind->hears ? f->kind->hears(q->world, f, c) : f->term.comp == c))
            return true;
    }
    return false;
}

void tecs__query_watch_comp(tecs_world_t *w, tecs_comp_t c, int32_t d)
{
    w->comp.comps[c].watch += (uint32_t)d;
    w->comp.comps[c].watch_noset += (uint32_t)d;
}

void tecs__query_watch(tecs_query_t *q, int32_t d)
{
    tecs_world_t *w = q->world;
    for (int32_t i = 0; i < q->nf; i++) {
        const tecs__filter *f = &q->f[i];
        if (f->kind->entity == NULL)
            continue;
        if (f->kind->watch)
            f->kind->watch(w, f, d);
        else
            tecs__query_watch_comp(w, f->term.comp, d);
    }
    if (d > 0)
        tecs__toghots_close(&w->arch);  /* toggles may have events now */
}

/* Is filter i the first of its kind in q (filters of one kind name the
** same dependents)? */
static bool first_of_kind(const tecs_query_t *q, int32_t i)
{
    for (int32_t j = 0; j < i; j++)
        if (q->f[j].kind == q->f[i].kind)
            return false;
    return true;
}

bool tecs__query_each_dep(const tecs_query_t *q, tecs_entity_t e,
                          void (*fn)(tecs_world_t *w, tecs_entity_t dep, void *ctx), void *ctx)
{
    bool any = false;
    for (int32_t i = 0; i < q->nf; i++)
        if (q->f[i].kind->each_dep && first_of_kind(q, i)) {
            q->f[i].kind->each_dep(q->world, &q->f[i], e, fn, ctx);
            any = true;
        }
    return any;
}

bool tecs__query_has_deps(const tecs_query_t *q)
{
    for (int32_t i = 0; i < q->nf; i++)
        if (q->f[i].kind->each_dep)
            return true;
    return false;
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
            int8_t js[TECS__MAX_FILTERS + 1];
            if (!match(q, w->arch.archs[i], cols, js))
                continue;
            int32_t at = q->cascade ? tecs__query_find(q, w->arch.archs[i]) : m;
            if (at < 0 || at >= q->nmatch || q->march[at] != w->arch.archs[i] ||
                memcmp(cols, q->mcols + (size_t)at * q->nterms, (size_t)q->nterms * 2) != 0 ||
                (q->filtered && memcmp(js, match_ents(q, at), (size_t)q->nf + 1) != 0))
                return tecs__err(w, TECS_ECORRUPT, "query misses archetype %d", i);
            m++;
        }
        if (m != q->nmatch)
            return tecs__err(w, TECS_ECORRUPT, "query holds an archetype it should not");
        for (int32_t k = 1; q->cascade && !q->unsorted && k < q->nmatch; k++)
            if (w->query.rank(w, q->march[k]) < w->query.rank(w, q->march[k - 1]))
                return tecs__err(w, TECS_ECORRUPT, "a cascade query's order is off");
    }
    return TECS_OK;
}

/* ---- iteration ------------------------------------------------------- */

enum { ITER_FRESH, ITER_RUNNING, ITER_DONE };

/* priv_.flags of a part (tecs__iter_part): an iteration no table knows. */
#define ITER_PART (1 << 30)
/* priv_.flags while the chunk being walked is handed out run by run (its
** toggle terms differ from row to row); priv_.pos is then the next row of
** the chunk to look at (reverse: the row after the last one). */
#define ITER_ROWS (1 << 29)
/* priv_.flags while the iteration walks the entities of filter priv_.word
** (priv_.pos: the next one; reverse: the one after it). */
#define ITER_DENSE (1 << 28)
/* priv_.flags while a chunk of a query whose one filter is a bit column's
** (words_begin) is walked run by run, forward: its passing rows are the
** words of the bit column (priv_.src),
** ~word if ITER_FLIP, among the chunk's priv_.left rows; priv_.word and
** priv_.bits as in next_run_plain, priv_.pos the current run's first row. */
#define ITER_WORDS (1 << 27)
#define ITER_FLIP (1 << 26)
/* priv_.flags of an iteration whose query decides rows one by one (row
** filters), that walks a filter's entities, or that runs in
** reverse: set at its start, so that the plain walk's test of a step is
** one test of flags. */
#define ITER_SHAPED (1 << 25)
/* priv_.flags, with ITER_ROWS, while the chunk being walked is handed out
** by runs of a key (q->only_shared): shared_step takes each next run on
** the fast path, next_shared otherwise. */
#define ITER_SHARED (1 << 24)
/* A step of an iteration with none of these flags and no filter
** (priv_.step) is a plain walk: chunk after chunk, forward, each one
** step. */
#define ITER_NOT_PLAIN (ITER_PART | ITER_ROWS | ITER_DENSE | ITER_WORDS | ITER_SHAPED | \
                        ITER_SHARED)

static bool part_next(tecs_iter_t *it);

/* Note a new iteration open: its serial, or 0 (out of memory). */
static uint32_t iter_open(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->query.niters >= w->query.cap_iters) &&
        tecs__grow(w, (void **)&w->query.iters, &w->query.cap_iters, w->query.niters + 1,
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
    int32_t n = w->query.niters;
    if (TECS__LIKELY(n > 0 && w->query.iters[n - 1] == serial)) {
        w->query.niters = n - 1;
        return true;
    }
    int32_t i = iter_find(w, serial);
    if (i < 0)
        return false;
    memmove(w->query.iters + i, w->query.iters + i + 1,
            (size_t)(w->query.niters - 1 - i) * sizeof *w->query.iters);
    w->query.niters--;
    return true;
}

/* The last open iteration ended: tell the listeners (caches re-sort).
** Apart, so that an iteration's end carries none of it into the loop. */
static TECS__NOINLINE void iters_done(tecs_world_t *w)
{
    if (!w->bus.watch_iters)
        return;
    for (int32_t i = 0; i < w->bus.nlisteners; i++)
        if (w->bus.listeners[i].on_iters_done)
            w->bus.listeners[i].on_iters_done(w, w->bus.listeners[i].ctx);
}

/* Chunks of a holding rows. */
static int32_t used_chunks(const tecs_world_t *w, const tecs_archetype_t *a)
{
    return (int32_t)(((uint32_t)a->count + w->arch.mask) >> w->arch.shift);
}

/* touch_rows for an archetype with tick columns (ticks per row). */
static TECS__NOINLINE void touch_rows_rt(const tecs_query_t *q, int32_t m, tecs_archetype_t *a,
                                         uint32_t row, uint32_t n)
{
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    for (uint32_t t = q->write_mask; t; t &= t - 1) {
        int32_t col = cols[TECS__CTZ(t)];
        if (col >= 0)
            tecs__arch_touch_rows(&q->world->arch, a, col, row, n);
    }
}

/* Record the writes the write terms of q may make to rows [row, row + n)
** of one chunk of its match m (archetype a): a field handed out counts as
** written. Inline: every step of a query with write terms does it. */
static TECS__INLINE void touch_rows(const tecs_query_t *q, int32_t m, tecs_archetype_t *a,
                                    uint32_t row, uint32_t n)
{
    if (TECS__UNLIKELY(a->nrt)) {
        touch_rows_rt(q, m, a, row, n);
        return;
    }
    const tecs__arch_state *s = &q->world->arch;    /* ticks by chunk only */
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    uint64_t *ticks = tecs__chunk_ticks(a, row >> s->shift), tick = s->tick;
    for (uint32_t t = q->write_mask; t; t &= t - 1) {
        int32_t col = cols[TECS__CTZ(t)];
        if (col >= 0)
            ticks[col] = tick;
    }
}

void tecs__query_run(tecs_query_t *q, bool parts)
{
    tecs_world_t *w = q->world;
    if (q->runs) {
        uint64_t since = q->last_run;
        q->last_run = tecs__arch_tick_next(&w->arch) - 1;
        for (int32_t i = 0; i < q->nf; i++)
            if (q->f[i].kind->run)
                q->f[i].kind->run(&q->f[i], since);
    }
    if (parts && q->write_mask)
        for (int32_t m = 0; m < q->nmatch; m++)
            for (int32_t k = 0; k < used_chunks(w, q->march[m]); k++)
                touch_rows(q, m, q->march[m], (uint32_t)k << w->arch.shift,
                           chunk_rows(w, q->march[m], k));
}

/* Open an iteration of q: note it open, defer the world, begin a run of
** its change terms. @return its serial, or 0 (out of memory: nothing
** done); *flags gets the iteration's own bits, *word and *pos the sparse
** term it walks. */
static TECS__INLINE uint32_t iter_begin(tecs_query_t *q, int32_t *flags, int32_t *word,
                                        int32_t *pos)
{
    tecs_world_t *w = q->world;
    uint32_t serial = iter_open(w);
    if (TECS__UNLIKELY(serial == 0))
        return 0;
    if (TECS__UNLIKELY(q->unsorted) && q->iters == 0)
        sort_matches(q);
    q->iters++;
    tecs__defer_begin(w);
    if (TECS__UNLIKELY(q->runs))
        tecs__query_run(q, false);
    if (q->filtered || (*flags & TECS__ITER_REVERSE))
        *flags |= ITER_SHAPED;
    int32_t i = TECS__UNLIKELY(q->walks) ? dense_term(q) : -1;
    if (TECS__UNLIKELY(i >= 0)) {
        *flags |= ITER_DENSE | ITER_SHAPED;
        *word = i;
        if (*flags & TECS__ITER_REVERSE)
            *pos = q->f[i].kind->count(w, &q->f[i]);
    }
    return serial;
}

/* The iterator of an iteration of q that iter_begin opened, before its
** first step; with serial 0, an ended, empty iteration of world w (q is
** then not read). An
** iteration of a small world pays its start on every pass, and the
** iterator is large (its fields): it is stored member by member, no block
** clear, and in the caller's return slot (a caller returns this value,
** whose address is never taken, and no other). */
static TECS__INLINE tecs_iter_t iter_value(tecs_world_t *w, tecs_query_t *q, uint32_t serial,
                                           int32_t flags, int32_t word, int32_t pos)
{
    tecs_iter_t it;
    bool opened = serial != 0;
    it.world = w;
    it.count = 0;
    it.entities = NULL;
    TECS__UNROLL(32)
    for (int32_t t = 0; t < TECS_MAX_TERMS; t++)
        it.fields[t] = NULL;
    it.delta_time = 0;
    it.frame = 0;
    it.ctx = NULL;
    it.worker = 0;
    it.workers = 1;             /* one part: the whole query */
    it.sizes = opened ? q->tsize : NULL;
    it.priv_.query = opened ? q : NULL;
    it.priv_.arch = NULL;
    it.priv_.match = !opened ? 0 : (flags & TECS__ITER_REVERSE) ? q->nmatch : -1;
    it.priv_.chunk = opened ? -1 : 0;
    it.priv_.flags = opened ? flags : 0;
    it.priv_.state = opened ? ITER_RUNNING : ITER_DONE;
    it.priv_.serial = serial;
    it.priv_.src = NULL;
    it.priv_.step = NULL;
    it.priv_.pos = opened ? pos : 0;
    it.priv_.stepped = it.priv_.left = 0;
    it.priv_.absent = 0;
    it.priv_.word = opened ? word : 0;
    it.priv_.bits = 0;
    return it;
}

/* A query iteration, inlined into tecs_iter and tecs__query_iter. */
static TECS__INLINE tecs_iter_t query_iter(tecs_query_t *q, int32_t flags)
{
    tecs_world_t *w = q->world;
    uint32_t serial = 0;
    int32_t word = 0, pos = 0;
    tecs_err_t err = tecs__enter(w);
    if (TECS__LIKELY(!err))
        serial = iter_begin(q, &flags, &word, &pos);
    if (TECS__UNLIKELY(serial == 0))
        return tecs__iter_failed(w, err ? err : TECS_ENOMEM);
    return iter_value(w, q, serial, flags, word, pos);
}

tecs_iter_t tecs__query_iter(tecs_query_t *q, bool reverse)
{
    return reverse ? query_iter(q, TECS__ITER_REVERSE) : query_iter(q, 0);
}

tecs_iter_t tecs__iter_failed(tecs_world_t *w, tecs_err_t err)
{
    tecs_iter_t it = iter_value(w, NULL, 0, 0, 0, 0);
    it.priv_.pos = (int32_t)err;
    return it;
}

bool tecs__iter_reversed(const tecs_iter_t *it)
{
    return (it->priv_.flags & TECS__ITER_REVERSE) != 0;
}

static tecs_iter_t arch_iter(tecs_world_t *w, tecs_archetype_t *a, bool reverse);

/* A bad description: recorded on w, carried by the empty iteration. */
static TECS__NOINLINE tecs_iter_t desc_refused(tecs_world_t *w, const char *why)
{
    return tecs__iter_failed(w, tecs__err(w, TECS_EINVAL, "tecs_iter: %s", why));
}

/* tecs_iter's part form: checked without writing to the world, which its
** workers may be reading; started by the worker add-on. */
static TECS__NOINLINE tecs_iter_t part_iter(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    if (d->query->world != w || d->where || d->cache || d->archetype || d->reverse ||
        w->base.part_start == NULL)
        return tecs__iter_failed(w, TECS_EINVAL);
    return w->base.part_start(w, d);
}

/* Is d the description of a query of w with none of cache, archetype,
** parts and (unless with_where) where? */
static TECS__INLINE bool desc_plain(const tecs_world_t *w, const tecs_iter_desc_t *d,
                                    bool with_where)
{
    return d != NULL && d->query != NULL && d->query->world == w &&
           ((with_where ? 0 : (uintptr_t)d->where) | (uintptr_t)d->cache |
            (uintptr_t)d->archetype | (uint32_t)(d->parts | d->part)) == 0;
}

/* The forms of tecs_iter other than a plain query's: a where first (a
** search per entity starts one), then the checks and the source's start. */
static TECS__NOINLINE tecs_iter_t iter_other(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    if (desc_plain(w, d, true) && d->where != NULL) {
        tecs_err_t err = tecs__enter(w);
        if (err)
            return tecs__iter_failed(w, err);
        return ((const tecs__iter_src *)(const void *)d->where)->start(w, d);
    }
    if (w == NULL)
        return tecs__iter_failed(NULL, TECS_EINVAL);
    if (d != NULL && d->query && (d->parts || d->part) && !d->cache && !d->archetype)
        return part_iter(w, d);
    tecs_err_t err = tecs__enter(w);
    if (err)
        return tecs__iter_failed(w, err);
    if (d == NULL)
        return desc_refused(w, "NULL description");
    if ((d->query != NULL) + (d->cache != NULL) + (d->archetype != NULL) != 1)
        return desc_refused(w, "not exactly one of query, cache and archetype");
    if (d->where && !d->query)
        return desc_refused(w, "a where needs a query");
    if (d->parts || d->part)
        return desc_refused(w, "parts need a query");
    if (d->archetype)
        return arch_iter(w, d->archetype, d->reverse);
    if (d->query && d->query->world != w)
        return tecs__iter_failed(w, tecs__err(w, TECS_EWORLD, "tecs_iter: a query of "
                                              "another world"));
    if (d->query && !d->where)
        return query_iter(d->query, d->reverse ? TECS__ITER_REVERSE : 0);
    const tecs__iter_src *src = d->where ? (const tecs__iter_src *)(const void *)d->where
                                         : (const tecs__iter_src *)(const void *)d->cache;
    return src->start(w, d);
}

/* A query's start forwards and in reverse, each a function of its own, so
** that tecs_iter's other forms pay none of a query start's set-up. */
static TECS__NOINLINE tecs_iter_t query_forward(tecs_query_t *q)
{
    return query_iter(q, 0);
}

static TECS__NOINLINE tecs_iter_t query_reverse(tecs_query_t *q)
{
    return query_iter(q, TECS__ITER_REVERSE);
}

/* A plain query's start (the common case: every pass over a small world
** pays it) is one test of the description; the rest is iter_other's. */
tecs_iter_t tecs_iter(tecs_world_t *w, const tecs_iter_desc_t *d)
{
    if (TECS__LIKELY(desc_plain(w, d, false)))
        return d->reverse ? query_reverse(d->query) : query_forward(d->query);
    return iter_other(w, d);
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



/* Move to the next chunk (in the iteration's direction); false at the end. */
static TECS__INLINE bool advance(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    bool rev = it->priv_.flags & TECS__ITER_REVERSE;
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

/* Point the fields of the terms `values` at their filters' values of the
** step's one row. Apart, so that drop_fields calls nothing. */
static TECS__NOINLINE void load_values(tecs_iter_t *it, uint32_t values)
{
    const tecs_query_t *q = it->priv_.query;
    for (uint32_t t = values; t; t &= t - 1) {
        const tecs__filter *f = &q->f[q->vf[TECS__CTZ(t)]];
        it->fields[f->t] = f->kind->value(q->world, f, it->entities[0]);
    }
}

/* Leave the terms of absent without a field in this step. */
static void drop_fields(tecs_iter_t *it, uint32_t absent)
{
    const tecs_query_t *q = it->priv_.query;
    it->priv_.absent = absent;
    for (uint32_t t = absent; t; t &= t - 1)
        it->fields[TECS__CTZ(t)] = NULL;
    /* A filter's value a step holds is its one row's, or its rows' one. */
    uint32_t values = (q->row_values | q->shared) & ~absent;
    if (TECS__UNLIKELY(values != 0) && it->count > 0)
        load_values(it, values);
}

void tecs__iter_drop_fields(tecs_iter_t *it, uint32_t absent)
{
    drop_fields(it, absent);
}

/* Point the public fields at the current chunk. */
static TECS__INLINE void load_chunk(tecs_iter_t *it)
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
    it->priv_.absent = 0;
    if (q->write_mask)          /* (an iteration's, never a worker's) */
        touch_rows(q, it->priv_.match, a, (uint32_t)k << w->arch.shift, (uint32_t)it->count);
}

/* The rows of word wi of chunk k of match m that pass the filters. */
static inline uint64_t pass_word(const tecs_query_t *q, int32_t m, const tecs_archetype_t *a,
                                 int32_t k, uint32_t wi, uint32_t rows)
{
    uint64_t h[TECS__MAX_FILTERS];
    return tog_word(q, m, a, k, wi, h) & word_span(wi, 0, rows);
}

/* next_run for a query whose filters leave every field in place: a
** run is a run of set bits of the words of passing rows. priv_.bits keeps
** the rows of word priv_.word not passed yet (none past the chunk's last
** row: forward, the word's rows after the run); the word's passing rows are
** read afresh at each step, so a row enabled or disabled during the walk
** is seen as it is when the walk reaches it. */
static bool next_run_plain(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    tecs_archetype_t *a = it->priv_.arch;
    int32_t m = it->priv_.match, k = it->priv_.chunk;
    uint32_t rows = chunk_rows(w, a, k), wi = (uint32_t)it->priv_.word, at, n;
    uint64_t left = it->priv_.bits, y;
    uint64_t bits = left ? pass_word(q, m, a, k, wi, rows) & left : 0;
    if (!(it->priv_.flags & TECS__ITER_REVERSE)) {
        while (bits == 0) {
            if ((++wi) << 6 >= rows)
                return false;
            bits = pass_word(q, m, a, k, wi, rows);
        }
        uint32_t s = (uint32_t)TECS__CTZ64(bits);
        y = ~(bits >> s);
        uint32_t len = y ? (uint32_t)TECS__CTZ64(y) : 64;
        at = (wi << 6) + s;
        uint32_t end = at + len;                        /* the run's end so far */
        left = s + len >= 64 ? 0 : ~low_bits(s + len) & word_span(wi, 0, rows);
        while ((end & 63) == 0 && end < rows) {         /* on into the next word */
            y = ~pass_word(q, m, a, k, ++wi, rows);
            len = y ? (uint32_t)TECS__CTZ64(y) : 64;
            left = len >= 64 ? 0 : ~low_bits(len) & word_span(wi, 0, rows);
            end += len;
            if (len < 64)
                break;
        }
        n = end - at;
    } else {
        while (bits == 0) {
            if (wi == 0)
                return false;
            bits = pass_word(q, m, a, k, --wi, rows);
        }
        uint32_t e = 63 - (uint32_t)TECS__CLZ64(bits);  /* the run's last row */
        y = ~(bits << (63 - e));
        uint32_t len = y ? (uint32_t)TECS__CLZ64(y) : 64;
        uint32_t end = (wi << 6) + e + 1;
        at = end - len;                                 /* the run's first row so far */
        left = low_bits(at & 63);
        while ((at & 63) == 0 && wi > 0 && len > 0) {   /* on into the word below */
            y = ~pass_word(q, m, a, k, --wi, rows);
            len = y ? (uint32_t)TECS__CLZ64(y) : 64;
            at -= len;
            left = low_bits(64 - len);
            if (len < 64)
                break;
        }
        n = end - at;
    }
    it->priv_.word = (int32_t)wi;
    it->priv_.bits = left;
    it->priv_.pos = (int32_t)at;
    tecs__iter_load_rows(it, m, a, ((uint32_t)k << w->arch.shift) + at, (int32_t)n);
    return true;
}

/* How far ahead of a run its columns are fetched, in bytes: short runs
** with gaps between them keep few loads in flight, so the fetch runs far
** enough ahead (dozens of runs) to hide a miss to memory. */
#define RUN_AHEAD 4096

/* The next run of a chunk handed out run by run (next_run_plain), when it
** ends inside the word being read, forward: no chunk lookup, the fields
** move on by the rows skipped. False: next_run_plain's turn. */
static TECS__INLINE bool run_in_word(tecs_iter_t *it)
{
    uint64_t left = it->priv_.bits;
    if (left == 0 || (it->priv_.flags & TECS__ITER_REVERSE))
        return false;
    const tecs_query_t *q = it->priv_.query;
    tecs_archetype_t *a = it->priv_.arch;
    int32_t k = it->priv_.chunk;
    uint64_t bits = pass_word(q, it->priv_.match, a, k, (uint32_t)it->priv_.word,
                              chunk_rows(q->world, a, k)) & left;
    if (bits == 0)
        return false;
    uint32_t s = (uint32_t)TECS__CTZ64(bits);
    uint64_t y = ~(bits >> s);
    uint32_t len = (uint32_t)TECS__CTZ64(y | (uint64_t)1 << 63);
    if (y == 0 || s + len >= 64)
        return false;           /* it may go on into the next word */
    int32_t at = (it->priv_.word << 6) + (int32_t)s, d = at - it->priv_.pos;
    const int16_t *cols = q->mcols + (size_t)it->priv_.match * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++)
        if (cols[t] >= 0) {
            char *f = (char *)it->fields[t] + (ptrdiff_t)d * a->col_size[cols[t]];
            it->fields[t] = f;
            TECS__PREFETCH(f + RUN_AHEAD);  /* short runs: keep the loads coming */
        }
    it->entities += d;
    it->count = (int32_t)len;
    it->priv_.pos = at;
    it->priv_.bits = left & ~low_bits(s + len);
    if (TECS__UNLIKELY(q->rt_write))
        touch_rows(q, it->priv_.match, a, ((uint32_t)k << q->world->arch.shift) + (uint32_t)at,
                   len);
    return true;
}

/* A chunk walked by runs of a key (ITER_SHARED), a query whose filters
** are all shared (q->only_shared), keeps in its iterator:
**
**     priv_.pos    the current run's first row (reverse: where the search
**                  for the next one ends; the chunk's rows before a run)
**     priv_.left   the current run's end (forward: where the search for
**                  the next one begins; 0 before a run)
**     priv_.word   the chunk's rows
**     priv_.bits   the terms whose field is a column of the chunk: a next
**                  run moves them by the rows between the two runs
**
** A shared filter's term has no column: its field is its run's value, or
** NULL where the run has it not (absent). */

/* The next run of one key that passes, in direction rev, after the
** current run; false if none is left in the chunk. */
static TECS__INLINE bool shared_next_run(const tecs_iter_t *it, bool rev, uint32_t *at,
                                         uint32_t *n, uint32_t *absent, void **vals)
{
    uint32_t lo = rev ? 0 : (uint32_t)it->priv_.left;
    uint32_t hi = rev ? (uint32_t)it->priv_.pos : (uint32_t)it->priv_.word;
    return shared_run(it->priv_.query, it->priv_.match, it->priv_.arch, it->priv_.chunk, lo, hi,
                      rev, at, n, absent, vals);
}

/* shared_next_run into the iterator's fields, apart: the search past runs
** that fail, and the queries of several filters. */
static TECS__NOINLINE bool shared_search(tecs_iter_t *it, bool rev, uint32_t *at, uint32_t *n,
                                         uint32_t *absent)
{
    return shared_next_run(it, rev, at, n, absent, it->fields);
}

/* shared_next_run for a query of one filter: the filter's run after the
** current one, its shared term's field set, when it passes (the rest:
** shared_search). The entities at it->entities are the current run's. */
static TECS__INLINE bool shared_one(tecs_iter_t *it, bool rev, uint32_t *at, uint32_t *n,
                                    uint32_t *absent)
{
    const tecs_query_t *q = it->priv_.query;
    const tecs__filter *f = &q->f[0];
    uint32_t lo = rev ? 0 : (uint32_t)it->priv_.left;
    uint32_t hi = rev ? (uint32_t)it->priv_.pos : (uint32_t)it->priv_.word;
    if (lo >= hi)
        return false;
    uint32_t r = rev ? hi - 1 : lo;
    void *v;
    uint32_t len = f->kind->same(q->world, f, it->entities + ((int32_t)r - it->priv_.pos), hi - lo,
                                 rev ? -1 : 1, &v);
    bool has = v != NULL && match_ents(q, it->priv_.match)[0] != TECS__FILTER_OFF;
    *absent = 0;
    if (f->term.oper == TECS_OPTIONAL)
        *absent = (uint32_t)!has << f->t;
    else if (has != (f->term.oper != TECS_NONE))
        return shared_search(it, rev, at, n, absent);
    if ((q->shared >> f->t) & 1u)
        it->fields[f->t] = has ? v : NULL;
    *at = rev ? r + 1 - len : r;
    *n = len;
    return true;
}

/* Make [at, at + n) the current run, without a field for absent. */
static TECS__INLINE void shared_enter(tecs_iter_t *it, uint32_t at, uint32_t n, uint32_t absent)
{
    it->count = (int32_t)n;
    it->priv_.pos = (int32_t)at;
    it->priv_.left = at + n;
    it->priv_.absent = absent;
}

/* next_run for a chunk walked by runs of a key: the fields and the rows'
** writes set afresh from the chunk; false at the chunk's end. Apart, so
** that the slow path of other walks carries none of it. */
static TECS__NOINLINE bool next_shared(tecs_iter_t *it)
{
    bool rev = it->priv_.flags & TECS__ITER_REVERSE;
    uint32_t at, n, absent;
    void *vals[TECS_MAX_TERMS];
    if (!shared_next_run(it, rev, &at, &n, &absent, vals))
        return false;
    const tecs_query_t *q = it->priv_.query;
    uint32_t row = ((uint32_t)it->priv_.chunk << q->world->arch.shift) + at;
    tecs__iter_load_rows(it, it->priv_.match, it->priv_.arch, row, (int32_t)n);
    const int16_t *cols = q->mcols + (size_t)it->priv_.match * q->nterms;
    uint32_t moved = 0;
    for (int32_t t = 0; t < q->nterms; t++)
        moved |= (uint32_t)(cols[t] >= 0) << t;
    it->priv_.bits = moved;
    for (uint32_t t = q->shared; t; t &= t - 1)
        it->fields[TECS__CTZ(t)] = vals[TECS__CTZ(t)];
    shared_enter(it, at, n, absent);
    return true;
}

/* The next run of a chunk walked by runs of a key, in direction rev, on
** the fast path: the column fields and the entities move by the rows
** from the current run to it, and only rows with ticks of their own are
** touched (the run that entered the chunk touched its ticks); false:
** next_shared's turn (the shared terms' fields may have changed). */
static TECS__INLINE bool shared_step(tecs_iter_t *it, bool rev)
{
    const tecs_query_t *q = it->priv_.query;
    uint32_t at, n, absent;
    if (!(q->nf == 1 ? shared_one(it, rev, &at, &n, &absent)
                     : shared_search(it, rev, &at, &n, &absent)))
        return false;
    ptrdiff_t d = (ptrdiff_t)at - it->priv_.pos;
    for (uint32_t t = (uint32_t)it->priv_.bits; t; t &= t - 1) {
        int32_t i = TECS__CTZ(t);
        it->fields[i] = (char *)it->fields[i] + d * q->tsize[i];
    }
    it->entities += d;
    shared_enter(it, at, n, absent);
    if (TECS__UNLIKELY(q->rt_write))
        touch_rows(q, it->priv_.match, it->priv_.arch,
                   ((uint32_t)it->priv_.chunk << q->world->arch.shift) + at, n);
    return true;
}

/* The next run of the chunk being walked run by run; false at its end. */
static bool next_run(tecs_iter_t *it)
{
    if (!it->priv_.query->varying)
        return next_run_plain(it);
    if (it->priv_.flags & ITER_SHARED)
        return next_shared(it);
    tecs_query_t *q = it->priv_.query;
    const tecs_world_t *w = q->world;
    tecs_archetype_t *a = it->priv_.arch;
    int32_t k = it->priv_.chunk;
    bool rev = it->priv_.flags & TECS__ITER_REVERSE;
    uint32_t pos = (uint32_t)it->priv_.pos, at, n, absent;
    if (!tog_run(q, it->priv_.match, a, k, rev ? 0 : pos, rev ? pos : chunk_rows(w, a, k), rev,
                 &at, &n, &absent))
        return false;
    it->priv_.pos = (int32_t)(rev ? at : at + n);
    tecs__iter_load_rows(it, it->priv_.match, a, ((uint32_t)k << w->arch.shift) + at, (int32_t)n);
    drop_fields(it, absent);
    return true;
}

/* The next entity of a walk of a filter's entities that passes (a step of
** one row); false at the end. */
static bool dense_next(tecs_iter_t *it)
{
    const tecs_query_t *q = it->priv_.query;
    int32_t t = it->priv_.word, n = q->f[t].kind->count(q->world, &q->f[t]), m;
    bool rev = it->priv_.flags & TECS__ITER_REVERSE;
    uint32_t row, absent;
    while (rev ? it->priv_.pos > 0 : it->priv_.pos < n) {
        int32_t k = rev ? --it->priv_.pos : it->priv_.pos++;
        if (!dense_member(q, t, k, &m, &row, &absent))
            continue;
        tecs__iter_load_rows(it, m, q->march[m], row, 1);
        drop_fields(it, absent);
        return true;
    }
    return false;
}

/* Walk the chunk being entered (of `rows` rows) by runs of a key. */
static void shared_begin(tecs_iter_t *it, uint32_t rows)
{
    it->priv_.flags |= ITER_SHARED;
    it->priv_.left = 0;
    it->priv_.word = (int32_t)rows;
}

/* Walk the chunk being entered (of `rows` rows) word by word, if its
** query's one filter, a with- or none-filter, passes rows by a bit column
** alone (TECS__FK_BITS), and no row ticks are written (ITER_WORDS). */
static void words_begin(tecs_iter_t *it, uint32_t rows)
{
    const tecs_query_t *q = it->priv_.query;
    const tecs__filter *f = &q->f[0];
    if (q->nf != 1 || !(f->kind->traits & TECS__FK_BITS) || q->rt_write ||
        (f->term.oper != TECS_WITH && f->term.oper != TECS_NONE))
        return;
    const int8_t *js = match_ents(q, it->priv_.match);
    if (js[0] < 0 || !js[1])
        return;                 /* no bit column, or an any-term fails */
    tecs_archetype_t *a = it->priv_.arch;
    it->priv_.src = tecs__chunk_bits(a, tecs__kcols(a, (uint32_t)it->priv_.chunk), js[0]);
    it->priv_.left = rows;
    /* A row passes if its bit, xor inv, is what the operator asks for. */
    bool flip = (f->inv != 0) == (f->term.oper == TECS_WITH);
    it->priv_.flags |= ITER_WORDS | (flip ? ITER_FLIP : 0);
}

/* The next run of a chunk walked word by word (ITER_WORDS), when it ends
** inside a word: no call and no chunk lookup, the fields move on by the
** rows skipped, and a word with no passing row left gives way to the next
** one with a passing row, read from the bit column. False: next_run_plain's
** turn (the chunk's end, or a run that may go on into the next word), with
** the iterator unchanged. */
static TECS__INLINE bool run_in_words(tecs_iter_t *it)
{
    const uint64_t *col = it->priv_.src;
    uint64_t flip = it->priv_.flags & ITER_FLIP ? ~(uint64_t)0 : 0;
    int32_t wi = it->priv_.word;
    uint64_t bits = (col[wi < 0 ? 0 : wi] ^ flip) & it->priv_.bits;   /* (no row past the end) */
    uint64_t span = it->priv_.bits;
    while (bits == 0) {
        int64_t rest = it->priv_.left - ((int64_t)(++wi) << 6);    /* rows from the word's first */
        if (rest <= 0)
            return false;
        span = rest < 64 ? low_bits((uint32_t)rest) : ~(uint64_t)0;
        bits = (col[wi] ^ flip) & span;
    }
    uint32_t s = (uint32_t)TECS__CTZ64(bits | (uint64_t)1 << 63);
    uint64_t y = ~(bits >> s);
    uint32_t end = s + (uint32_t)TECS__CTZ64(y | (uint64_t)1 << 63);
    if (bits == 0 || y == 0 || end >= 64)
        return false;           /* no row, or it may go on into the next word */
    const tecs_query_t *q = it->priv_.query;
    int32_t at = (wi << 6) + (int32_t)s, d = at - it->priv_.pos;
    for (int32_t t = 0; t < q->nterms; t++)   /* (a field is set where a column is) */
        if (it->fields[t] != NULL) {
            char *f = (char *)it->fields[t] + (ptrdiff_t)d * q->tsize[t];
            it->fields[t] = f;
            TECS__PREFETCH(f + RUN_AHEAD);  /* short runs: keep the loads coming */
        }
    it->entities += d;
    it->count = (int32_t)(end - s);
    it->priv_.pos = at;
    it->priv_.word = wi;
    it->priv_.bits = span & ~low_bits(end);
    return true;
}

/* May a step of it take a fast path: the world open, the iteration the
** newest open one, and no SET events to raise for the rows left? */
static TECS__INLINE bool step_fast_ok(const tecs_iter_t *it)
{
    const tecs_world_t *w = it->world;
    int32_t n = w->query.niters;
    return w->base.closed == TECS__OPEN && n > 0 && w->query.iters[n - 1] == it->priv_.serial &&
           !w->bus.watch_comps;
}

/* The next step of a query iteration: the next chunk, or with toggle terms
** decided row by row, the next run of rows, or the next member of a sparse
** term walked; false at the end. */
static bool step(tecs_iter_t *it)
{
    tecs_query_t *q = it->priv_.query;
    if (TECS__UNLIKELY(it->priv_.flags & ITER_DENSE))
        return dense_next(it);
    for (;;) {
        if (TECS__UNLIKELY(it->priv_.flags & ITER_ROWS)) {
            if (next_run(it))
                return true;
            it->priv_.flags &= ~(ITER_ROWS | ITER_WORDS | ITER_FLIP | ITER_SHARED);
        }
        if (!advance(it))
            return false;
        if (TECS__LIKELY(!q->filtered)) {
            load_chunk(it);
            return true;
        }
        uint32_t absent;
        tecs_archetype_t *a = it->priv_.arch;
        switch (tog_mode(q, it->priv_.match, a, &absent)) {
        case TOG_ALL:
            load_chunk(it);
            drop_fields(it, absent);
            return true;
        case TOG_NONE:          /* no row of a passes: on to the next match */
            it->priv_.chunk = it->priv_.flags & TECS__ITER_REVERSE ? 0
                              : used_chunks(q->world, a) - 1;
            break;
        default: {
            uint32_t rows = chunk_rows(q->world, a, it->priv_.chunk);
            bool rev = it->priv_.flags & TECS__ITER_REVERSE;
            it->priv_.flags |= ITER_ROWS;
            it->priv_.pos = rev ? (int32_t)rows : 0;
            it->priv_.word = rev ? (int32_t)((rows + 63) >> 6) : -1;
            it->priv_.bits = 0;
            if (q->only_shared)
                shared_begin(it, rows);
            else if (!rev)
                words_begin(it, rows);
            break;
        }
        }
    }
}

static TECS__NOINLINE bool iter_next_slow(tecs_iter_t *it);

/* The next step of a filtered iteration: with the world open, the
** iteration the newest one and no SET events to raise, the step's own
** function is called without the slow path's checks; otherwise the slow
** path. A function of its own, reached by a tail call, so that
** tecs_iter_next stays a leaf for the plain walk. */
static TECS__NOINLINE bool iter_next_filtered(tecs_iter_t *it)
{
    /* an ended iteration's world may be freed: the state is read first */
    if (TECS__UNLIKELY(it->priv_.state != ITER_RUNNING || (it->priv_.flags & ITER_PART)))
        return iter_next_slow(it);
    tecs_world_t *w = it->world;
    int32_t n = w->query.niters;
    if (TECS__UNLIKELY(w->base.closed != TECS__OPEN || n == 0 ||
                       w->query.iters[n - 1] != it->priv_.serial ||
                       (it->priv_.query->write_mask && w->bus.watch_comps)))
        return iter_next_slow(it);
    w->base.err = TECS_OK;
    if (TECS__LIKELY(it->priv_.step(it, false))) {
        it->priv_.stepped += it->count;
        return true;
    }
    it->count = 0;
    tecs_iter_fini(it);
    return false;
}

/* The world's side of an iteration taken out of the table of open ones:
** its query no longer busy, the filter's end, the world's deferral. */
static TECS__INLINE void iter_ended(tecs_world_t *w, tecs_iter_t *it)
{
    it->priv_.query->iters--;
    if (it->priv_.step)
        it->priv_.step(it, true);
    if (w->query.niters == 0)
        iters_done(w);
    tecs__defer_end(w);
}

static TECS__NOINLINE bool iter_next_chunk(tecs_iter_t *it);

/* The next run of a chunk walked by runs of a key (ITER_SHARED) on the
** fast path (iter_next_chunk's): shared_step in the iteration's
** direction; false: the slow path's turn. Apart, so that the other paths
** of iter_next_chunk carry none of it. */
static TECS__NOINLINE bool shared_next(tecs_iter_t *it)
{
    return it->priv_.flags & TECS__ITER_REVERSE ? shared_step(it, true) : shared_step(it, false);
}

/* The end of a plain walk in its step: tecs_iter_fini's work, with no
** writes to report. Apart, so that a step carries none of it. */
static TECS__NOINLINE bool plain_end(tecs_iter_t *it, tecs_world_t *w)
{
    int32_t n = w->query.niters;
    it->count = 0;
    it->priv_.state = ITER_DONE;
    w->query.niters = n - 1;
    it->priv_.query->iters--;
    if (n == 1 && w->bus.watch_iters)
        iters_done(w);
    tecs__defer_end(w);
    return false;
}

/* plain_step's end for an archetype with tick columns: the writes of the
** chunk's rows, row by row. @return true (the step goes on). */
static TECS__NOINLINE bool plain_touch_rt(const tecs_iter_t *it)
{
    const tecs_world_t *w = it->world;
    touch_rows_rt(it->priv_.query, it->priv_.match, it->priv_.arch,
                  (uint32_t)it->priv_.chunk << w->arch.shift, (uint32_t)it->count);
    return true;
}

/* Point a plain walk at its next chunk and its public fields there, and
** count the chunk written through the write terms; false at the end. */
static TECS__INLINE bool plain_step(tecs_iter_t *it, const tecs_world_t *w, const tecs_query_t *q)
{
    tecs_archetype_t *a = it->priv_.arch;
    int32_t k = it->priv_.chunk, m = it->priv_.match;
    if (a == NULL || ++k >= used_chunks(w, a)) {
        do {
            if (++m >= q->nmatch)
                return false;
            a = q->march[m];
        } while (a->count == 0);
        it->priv_.match = m;
        it->priv_.arch = a;
        k = 0;
    }
    it->priv_.chunk = k;
    char *const *ch = tecs__kcols(a, (uint32_t)k);
    int32_t rows = (int32_t)w->arch.rows, left = a->count - k * rows;
    int32_t count = left < rows ? left : rows;
    it->count = count;
    it->entities = tecs__chunk_ents(ch);
    it->priv_.stepped += count;
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++) {
        int32_t col = cols[t];
        it->fields[t] = col >= 0 ? tecs__chunk_col(ch, col) : NULL;
    }
    uint32_t writes = q->write_mask;
    if (writes == 0)
        return true;
    if (TECS__UNLIKELY(a->nrt))
        return plain_touch_rt(it);
    uint64_t *ticks = tecs__chunk_ticks(a, (uint32_t)k), tick = w->arch.tick;
    for (; writes; writes &= writes - 1) {
        int32_t col = cols[TECS__CTZ(writes)];
        if (col >= 0)
            ticks[col] = tick;
    }
    return true;
}

/* The next step of a plain walk (no term decided row by row, no sparse
** term walked, no filter, not a part): the next chunk, or the end. With
** the world closed or a hook running, the iteration not the newest open
** one, or SET events to raise for the rows left, the slow path does it. */
static TECS__NOINLINE bool iter_next_plain(tecs_iter_t *it)
{
    /* an ended iteration's world may be freed: the state is read first */
    if (TECS__UNLIKELY(it->priv_.state != ITER_RUNNING))
        return false;
    tecs_world_t *w = it->world;
    const tecs_query_t *q = it->priv_.query;
    int32_t n = w->query.niters;
    uint32_t gate = w->base.gate & (TECS__GATE_STOP | TECS__GATE_COMPS);
    if (TECS__UNLIKELY(gate != 0) && (gate != TECS__GATE_COMPS || q->write_mask))
        return iter_next_slow(it);
    if (TECS__UNLIKELY(n <= 0 || w->query.iters[n - 1] != it->priv_.serial))
        return iter_next_slow(it);
    w->base.err = TECS_OK;
    if (TECS__LIKELY(plain_step(it, w, q)))
        return true;
    return plain_end(it, w);
}

/* The next step. A filtered iteration's step and a plain walk's (the
** common case: every pass over a small world pays it) go to functions of
** their own by a tail call, before any other work. Here, the next run
** of a chunk walked word by word (ITER_WORDS), whose cost does not grow
** with the run's length, calls nothing that is not inlined;
** iter_next_chunk takes the next run of a word of rows of another chunk
** walked run by run, of a chunk walked by runs of a key (ITER_SHARED),
** and the next chunk of a plain walk in reverse. All
** need the world open, the iteration the newest one, and no SET events to
** raise for the rows left. */
bool tecs_iter_next(tecs_iter_t *it)
{
    if (TECS__UNLIKELY(it == NULL))
        return false;
    if (it->priv_.step != NULL)
        return iter_next_filtered(it);
    if (TECS__LIKELY(!(it->priv_.flags & ITER_NOT_PLAIN)))
        return iter_next_plain(it);
    if ((it->priv_.flags & ITER_WORDS) && TECS__LIKELY(it->priv_.state == ITER_RUNNING) &&
        step_fast_ok(it) && run_in_words(it)) {
        it->world->base.err = TECS_OK;
        it->priv_.stepped += it->count;
        return true;
    }
    return iter_next_chunk(it);
}

/* tecs_iter_next's next run of a word of rows or of a key, or next chunk
** of a plain walk in reverse: apart, so that the common paths carry none
** of it. */
static TECS__NOINLINE bool iter_next_chunk(tecs_iter_t *it)
{
    if (!(it->priv_.flags & ITER_PART) && TECS__LIKELY(it->priv_.state == ITER_RUNNING)) {
        tecs_world_t *w = it->world;
        tecs_query_t *q = it->priv_.query;
        int32_t n = w->query.niters;
        int32_t flags = it->priv_.flags;
        if (TECS__LIKELY(w->base.closed == TECS__OPEN && n > 0 &&
                         w->query.iters[n - 1] == it->priv_.serial &&
                         !(q->write_mask && w->bus.watch_comps))) {
            if (!(flags & (ITER_ROWS | ITER_DENSE)) && !q->filtered && !it->priv_.step) {
                w->base.err = TECS_OK;          /* a plain walk in reverse */
                if (TECS__LIKELY(advance(it))) {
                    load_chunk(it);
                    it->priv_.stepped += it->count;
                    return true;
                }
                return plain_end(it, w);
            }
            if ((flags & ITER_ROWS) &&
                (!q->varying ? run_in_word(it) : (flags & ITER_SHARED) && shared_next(it))) {
                w->base.err = TECS_OK;
                it->priv_.stepped += it->count;
                return true;
            }
        }
    }
    return iter_next_slow(it);
}

static TECS__NOINLINE bool iter_next_slow(tecs_iter_t *it)
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
    if (it->count > 0 && it->priv_.query->write_mask && it->world->bus.watch_comps)
        report_writes(it);      /* (only a component listener wants SET events) */
    if (it->priv_.step) {
        if (it->priv_.step(it, false)) {
            it->priv_.stepped += it->count;
            return true;
        }
        it->count = 0;
        tecs_iter_fini(it);
        return false;
    }
    if (!step(it)) {
        it->count = 0;
        tecs_iter_fini(it);
        return false;
    }
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
    if (it->count > 0 && it->priv_.query->write_mask && w->bus.watch_comps)
        report_writes(it);
    it->count = 0;
    if (!iter_close(w, it->priv_.serial))
        return;                 /* a callback of the report ended it */
    iter_ended(w, it);
}

void *tecs_field(const tecs_iter_t *it, int32_t term)
{
    if (it == NULL || term < 0 || term >= TECS_MAX_TERMS)
        return NULL;
    return it->fields[term];
}

void *tecs__field_refused(const tecs_iter_t *it, int32_t term, size_t size)
{
    /* A field is handed out in an open step, so its query is alive. */
    const tecs_query_t *q = it->priv_.query;
    tecs_comp_t c = q ? q->terms[term].comp : 0;
    tecs__err(it->world, TECS_EINVAL, "TECS_FIELD: term %d's " TECS__COMP_FMT
              " is %u bytes, the type given is %zu", (int)term, TECS__COMP(it->world, c),
              (unsigned)it->sizes[term], size);
    return NULL;
}

bool tecs_field_is_self(const tecs_iter_t *it, int32_t term)
{
    if (it == NULL || it->priv_.query == NULL || it->priv_.state != ITER_RUNNING ||
        !((it->priv_.flags & ITER_PART) || iter_live(it)) || term < 0 ||
        term >= it->priv_.query->nterms)
        return true;
    const tecs_query_t *q = it->priv_.query;
    /* (A shared term's field is a column where the step's archetype has
    ** one: an inherited term's rows that hold their own.) */
    return !q->terms[term].from_parent &&
           (!((q->shared >> term) & 1u) ||
            q->mcols[(size_t)it->priv_.match * q->nterms + term] >= 0);
}

bool tecs_field_is_set(const tecs_iter_t *it, int32_t term)
{
    /* An ended iteration's query may be freed: only an open one is read. */
    if (it == NULL || it->priv_.state != ITER_RUNNING ||
        !((it->priv_.flags & ITER_PART) || iter_live(it)) ||
        it->priv_.arch == NULL || term < 0 || term >= it->priv_.query->nterms)
        return false;
    const tecs_query_t *q = it->priv_.query;
    for (int32_t i = 0; i < q->nf; i++)     /* in every row of the step */
        if (q->f[i].t == term && (q->f[i].kind->traits & (TECS__FK_NOCOL | TECS__FK_SHARED)))
            return q->terms[term].oper != TECS_NONE && !((it->priv_.absent >> term) & 1u) &&
                   match_ents(q, it->priv_.match)[i] != TECS__FILTER_OFF;
    return q->mcols[(size_t)it->priv_.match * q->nterms + term] != TECS__COL_ABSENT &&
           !((it->priv_.absent >> term) & 1u);
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
        q->terms[t] = (tecs_term_t){ .comp = a->comps[t], .toggle = TECS_TOGGLE_ANY };
        q->mcols[t] = (int16_t)tecs__arch_col(a, a->comps[t]);
        q->tsize[t] = (uint32_t)tecs__comp_get(w, a->comps[t])->size;
        if (q->mcols[t] >= 0 && q->tsize[t] > 0)
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

/* tecs_iter of exactly archetype a (the world is entered). */
static tecs_iter_t arch_iter(tecs_world_t *w, tecs_archetype_t *a, bool reverse)
{
    tecs_query_t *q;
    int32_t flags = reverse ? TECS__ITER_REVERSE : 0, word = 0, pos = 0;
    uint32_t serial = 0;
    tecs_err_t err = tecs__arch_validate(w, a);
    if (err || (q = arch_query(w, a)) == NULL ||
        (serial = iter_begin(q, &flags, &word, &pos)) == 0)
        return tecs__iter_failed(w, err ? err : TECS_ENOMEM);
    return iter_value(w, q, serial, flags, word, pos);
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
    int32_t t = dense_term(q);
    if (t >= 0)
        return dense_count(q, t);
    int64_t n = 0;
    for (int32_t m = 0; m < q->nmatch; m++)
        n += q->filtered ? tog_count(q, m) : q->march[m]->count;
    return n;
}

/* Load into it the next run of rows of q from row *pos of match *m, at
** most a chunk and at most *left rows, and move past it; false at the
** end. Rows are those that pass q's toggle terms: a part's count and its
** first row (rows_seek) are in them. */
static bool rows_step(tecs_iter_t *it, const tecs_query_t *q, int32_t *m, int32_t *pos,
                      int64_t *left)
{
    const tecs_world_t *w = q->world;
    while (*left > 0 && *m < q->nmatch) {
        tecs_archetype_t *a = q->march[*m];
        int32_t row = *pos;
        uint32_t absent = 0;
        int mode = row < a->count ? tog_mode(q, *m, a, &absent) : TOG_NONE;
        if (mode == TOG_NONE) {
            ++*m;
            *pos = 0;
            continue;
        }
        int64_t n = (int64_t)w->arch.rows - (row & (int32_t)w->arch.mask);
        if (n > a->count - row)
            n = a->count - row;
        uint32_t lo = (uint32_t)row & w->arch.mask, at = lo, len = (uint32_t)n;
        if (mode == TOG_ROWS &&
            !tog_run(q, *m, a, row >> w->arch.shift, lo, lo + (uint32_t)n, false, &at, &len,
                     &absent)) {
            *pos = row + (int32_t)n;    /* no row of the chunk passes: on */
            continue;
        }
        if (len > *left)
            len = (uint32_t)*left;
        tecs__iter_load_rows(it, *m, a, (uint32_t)row - lo + at, (int32_t)len);
        drop_fields(it, absent);
        *pos = row + (int32_t)(at + len - lo);
        *left -= len;
        return true;
    }
    return false;
}

/* The row of match m where its nth row passing the toggle terms is. */
static int32_t tog_nth(const tecs_query_t *q, int32_t m, int64_t nth)
{
    const tecs_world_t *w = q->world;
    const tecs_archetype_t *a = q->march[m];
    uint32_t absent;
    if (tog_mode(q, m, a, &absent) == TOG_ALL)
        return (int32_t)nth;
    uint64_t h[TECS__MAX_FILTERS];
    for (int32_t k = 0;; k++) {
        uint32_t rows = chunk_rows(w, a, k);
        for (uint32_t wi = 0; wi << 6 < rows; wi++) {
            uint64_t pass = tog_word(q, m, a, k, wi, h) & word_span(wi, 0, rows);
            int c = TECS__POP64(pass);
            if (nth < c) {
                for (; nth > 0; nth--)
                    pass &= pass - 1;
                return (k << w->arch.shift) + (int32_t)(wi << 6) + TECS__CTZ64(pass);
            }
            nth -= c;
        }
    }
}

/* Where row `first` of q's rows (those passing its toggle terms) is: its
** match and its row there. */
static void rows_seek(const tecs_query_t *q, int64_t first, int32_t *m, int32_t *pos)
{
    for (*m = 0; *m < q->nmatch; ++*m) {
        int64_t n = q->filtered ? tog_count(q, *m) : q->march[*m]->count;
        if (first < n)
            break;
        first -= n;
    }
    *pos = *m < q->nmatch && q->filtered ? tog_nth(q, *m, first) : (int32_t)first;
}

void tecs__iter_part(tecs_iter_t *it, tecs_query_t *q, tecs_world_t *view, int64_t first,
                     int64_t count)
{
    memset(it, 0, sizeof *it);
    it->world = view;
    it->sizes = q->tsize;
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
        if (q->terms[t].oper == TECS_NONE || q->terms[t].access == TECS_FILTER ||
            c == TECS_WILDCARD)
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
    it->priv_.absent = 0;
    it->count = count;
    it->entities = tecs__chunk_ents(ch) + i;
    const int16_t *cols = q->mcols + (size_t)m * q->nterms;
    for (int32_t t = 0; t < q->nterms; t++)
        it->fields[t] = cols[t] >= 0 ? tecs__chunk_col(ch, cols[t]) + i * a->col_size[cols[t]]
                                     : NULL;
    /* A worker's part was touched when its run began (tecs__query_run). */
    if (q->write_mask && !tecs__in_worker(it->world))
        touch_rows(q, m, a, row, (uint32_t)count);
}

const int16_t *tecs__query_cols(const tecs_query_t *q, int32_t m)
{
    return q->mcols + (size_t)m * q->nterms;
}

bool tecs__query_reads_only(const tecs_query_t *q)
{
    return q->write_mask == 0;
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

/* The error a failed start left in its iterator (see tecs__iter_failed);
** TECS_OK for any other. */
static tecs_err_t iter_error(const tecs_iter_t *it)
{
    return it->priv_.query == NULL && it->priv_.state != ITER_RUNNING
               ? (tecs_err_t)it->priv_.pos : TECS_OK;
}

/* Refuse the arguments of a helper over it: end it, record err. */
static tecs_err_t helper_refused(tecs_iter_t *it, const char *fn, const char *why)
{
    tecs_iter_fini(it);
    return it->world ? tecs__err(it->world, TECS_EINVAL, "%s: %s", fn, why) : TECS_EINVAL;
}

tecs_err_t tecs_iter_each(tecs_iter_t *it, tecs_each_fn fn, void *ctx)
{
    tecs_err_t err = it == NULL ? TECS_EINVAL : iter_error(it);
    if (err || fn == NULL)
        return err ? err : helper_refused(it, "tecs_iter_each", "NULL callback");
    bool rev = tecs__iter_reversed(it);
    while (tecs_iter_next(it)) {
        tecs_world_t *w = it->world;
        int32_t nterms = tecs_query_terms(it->priv_.query, NULL);
        for (int32_t j = 0; j < it->count; j++) {
            int32_t r = rev ? it->count - 1 - j : j;
            void *fields[TECS_MAX_TERMS];
            for (int32_t t = 0; t < nterms; t++)
                fields[t] = it->fields[t] ? (char *)it->fields[t] + (size_t)r * it->sizes[t]
                                          : NULL;
            tecs_err_t outer_err = tecs__cb_begin(w);
            bool stop = fn(w, it->entities[r], fields, ctx);
            tecs__cb_end(w, outer_err);
            if (stop) {
                tecs_iter_fini(it);
                return TECS_OK;
            }
        }
    }
    return TECS_OK;
}

int32_t tecs_iter_collect(tecs_iter_t *it, tecs_entity_t *out, int32_t cap)
{
    if (it == NULL || iter_error(it))
        return -1;
    if (cap < 0 || (cap > 0 && out == NULL)) {
        helper_refused(it, "tecs_iter_collect", cap < 0 ? "negative cap" : "NULL output");
        return -1;
    }
    const tecs__iter_rows *rows = it->priv_.step ? it->priv_.src : NULL;
    bool fresh = it->priv_.state == ITER_RUNNING && it->priv_.stepped == 0 && it->count == 0;
    if (rows && rows->collect && fresh)
        return rows->collect(it, out, cap);
    /* Counting a fresh iteration of a query without row filters needs no
    ** walk: the query counts its matches. */
    tecs_query_t *q = it->priv_.query;
    if (cap == 0 && fresh && q != NULL && q->nf == 0 && rows == NULL &&
        !(it->priv_.flags & ITER_PART)) {
        int32_t n = tecs_query_count(q);
        tecs_iter_fini(it);
        return n;
    }
    bool rev = tecs__iter_reversed(it);
    int32_t n = 0;
    while (tecs_iter_next(it)) {
        int32_t c = it->count, take = c < cap - n ? c : cap - n;
        if (take > 0 && !rev)
            memcpy(out + n, it->entities, (size_t)take * sizeof *out);
        else
            for (int32_t i = 0; i < take; i++)
                out[n + i] = it->entities[c - 1 - i];
        n += c;
    }
    return n;
}
