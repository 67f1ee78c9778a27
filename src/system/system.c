/*
** system.c — systems, phases and the frame (tecs_progress).
**
** A system is a query plus a callback, placed in a phase. The callback has
** one of three forms: run (once per chunk), each (once per row) or drive
** (once per run, with an iterator it advances itself). The world keeps its
** systems in one array, in the order they were added:
**
**     list: [ {id 1 "input"  ON_LOAD}  {id 2 "move" ON_UPDATE}
**             {id 3 "render" ON_STORE} {id 4 "ai"   ON_UPDATE} ... ]
**
** A frame walks the phases in order and, for each, the array in order, so
** within a phase systems run in the order added (above: input, move, ai,
** render). The array a frame walks is fixed when it starts:
**
**   - a system added during the frame is appended past `frame_n` and runs
**     from the next frame;
**   - a removed system is marked `removed` (its id is invalid at once) and is
**     dropped from the array when the frame ends (at once outside a frame);
**   - enable / disable and tecs_system_set take effect immediately (a
**     system set from inside its own callback keeps running the callback,
**     query and context it started with: sys_walk copies them first).
**
** A frame runs the systems whose group bits meet its mask; a drive callback
** that returns an error stops the frame there. tecs_system_run runs one
** entry outside a frame. While a frame or such a run is going (`running`),
** removals wait for the sys_sweep, so the entry being run stays in place.
**
** Entries are addressed by index, never by pointer, across a callback: an
** add inside a callback may move the array.
**
** Each run opens a deferral level around the callback, so structural changes
** are queued; closing it flushes them, so the next system sees them.
**
** Fixed interval: acc += dt each frame; when acc >= interval the system runs
** once, covering k = floor(acc / interval) whole intervals (delta_time is
** k * interval) and acc keeps the remainder. A long frame thus never makes a
** system run several times in a row. When k passes 2^53 (a tiny interval, or
** a huge frame) it cannot be counted exactly: the system then covers the
** whole accumulated time and acc restarts at 0, so delta_time is always
** finite and the system keeps running.
**
** Parallel and concurrent systems run through worker contexts (worker.c):
**
**   - a parallel system's rows are split into one part per worker (one part
**     when it matches fewer than its parallel_min rows); each part runs the
**     callback on its own iterator, then the parts' changes apply in order;
**   - consecutive concurrent systems of a phase form a wave, ended by a
**     system that is not concurrent or whose access conflicts with one in
**     the wave (one writes a component the other reads or writes); a
**     wave's systems run side by side, then their changes apply in the
**     order added.
**
** Waves depend on the systems and their access only, and a parallel
** system's results on the part order only, so a frame gives the same world
** for any number of threads. A system's access is kept as bits: what it
** may read (its terms' and desc.reads, desc.writes), then what it may
** write (its write terms' and desc.writes).
**
** Timing uses the platform layer's monotonic clock (tecs_time_now, os.c).
**
** Calls: os.c, base.c, event.c (it is a listener), command.c (a frame defers
** the world), query.c, worker.c.
*/
#include "internal.h"

/* The largest interval and delta time taken, in seconds: a sum of two stays
** finite. The cast rounds the constant to a double where the compiler
** evaluates constants in a wider type (x87: FLT_EVAL_METHOD 2), so that
** 1e300 itself passes there too. */
#define TIME_MAX ((double)1e300)

/* Words of one access bit set: a bit per component id. */
#define ACCESS_WORDS (TECS_MAX_COMPONENTS / 64)
/* The most systems in one wave. */
#define WAVE_MAX TECS__CONTEXTS_MAX

typedef struct sys_entry {
    tecs_system_t id;
    char *name;
    size_t name_len;
    tecs_phase_t phase;
    tecs_query_t *query;
    tecs_system_fn run;
    tecs_system_each_fn each;
    tecs_system_drive_fn drive;
    void *ctx;
    double interval;
    double acc;                 /* accumulated delta time (interval > 0)   */
    uint32_t groups;            /* group bits, never 0                     */
    bool enabled;
    bool removed;               /* removed during a frame                  */
    bool parallel;
    bool concurrent;
    int32_t parallel_min;       /* as given (0: TECS_PARALLEL_MIN)          */
    tecs_comp_t *extra;         /* parallel or concurrent: desc.reads, 0,
                                   desc.writes, 0 (as tecs_system_get gives
                                   them back); else NULL                   */
    int32_t nextra;             /* entries in extra, both zeros counted    */
    uint64_t *access;           /* parallel or concurrent: read bits, then
                                   write bits (ACCESS_WORDS each)          */
    tecs_system_stats_t stats;
} sys_entry;

struct tecs__sys_state {
    sys_entry *list;            /* in add order                            */
    int32_t n;
    int32_t cap;
    int32_t nlive;              /* not removed                             */
    int32_t frame_n;            /* entries the running frame walks         */
    bool running;               /* a frame or tecs_system_run is going     */
    bool any_removed;           /* some entry is marked removed            */
    int64_t frame;              /* frames run                              */
    tecs_system_t next_id;
};

typedef struct tecs__sys_state sys_state;

/* ---- sys_of ----------------------------------------------------------- */

/* What a system holds for its threads: access bits and its extra lists. */
typedef struct sys_access {
    tecs_comp_t *extra;
    int32_t nextra;
    uint64_t *access;
} sys_access;

static void free_access(tecs_world_t *w, sys_access a)
{
    tecs__free(w, a.extra, (size_t)a.nextra * sizeof *a.extra);
    tecs__free(w, a.access, 2 * ACCESS_WORDS * sizeof *a.access);
}

static void free_entry(tecs_world_t *w, sys_entry *e)
{
    tecs__free(w, e->name, e->name_len + 1);
    free_access(w, (sys_access){ e->extra, e->nextra, e->access });
}

/* The length of a 0-ended list of component ids (NULL: 0), or -1 when it
** names an unknown component or has no end within TECS_MAX_COMPONENTS. */
static int32_t list_len(const tecs_world_t *w, const tecs_comp_t *list)
{
    int32_t n = 0;
    for (; list && list[n] != 0; n++)
        if (n >= TECS_MAX_COMPONENTS || tecs__comp_get(w, list[n]) == NULL)
            return -1;
    return n;
}

/* Build the access of a system of description d (parallel or concurrent;
** d validated): TECS_OK, or TECS_ENOMEM with nothing held. */
static tecs_err_t make_access(tecs_world_t *w, const tecs_system_desc_t *d, sys_access *out)
{
    int32_t nr = list_len(w, d->reads), nw = list_len(w, d->writes);
    sys_access a = { .nextra = nr + nw + 2 };
    a.extra = tecs__alloc(w, (size_t)a.nextra * sizeof *a.extra);
    a.access = tecs__alloc(w, 2 * ACCESS_WORDS * sizeof *a.access);
    if (a.extra == NULL || a.access == NULL) {
        free_access(w, a);
        return tecs__err(w, TECS_ENOMEM, "out of memory adding system '%s'", d->name);
    }
    memset(a.access, 0, 2 * ACCESS_WORDS * sizeof *a.access);
    uint64_t *rd = a.access, *wr = a.access + ACCESS_WORDS;
    if (d->query)
        tecs__query_access(d->query, rd, wr);
    for (int32_t i = 0; i < nr; i++)
        tecs__bit_set(rd, a.extra[i] = d->reads[i]);
    a.extra[nr] = 0;
    for (int32_t i = 0; i < nw; i++) {
        tecs__bit_set(rd, d->writes[i]);
        tecs__bit_set(wr, a.extra[nr + 1 + i] = d->writes[i]);
    }
    a.extra[nr + 1 + nw] = 0;
    *out = a;
    return TECS_OK;
}

/* Do two systems' accesses conflict: one writes what the other reads (a
** write is a read too)? */
static bool conflict(const uint64_t *a, const uint64_t *b)
{
    for (int32_t i = 0; i < ACCESS_WORDS; i++)
        if ((a[ACCESS_WORDS + i] & b[i]) | (b[ACCESS_WORDS + i] & a[i]))
            return true;
    return false;
}

static void sys_on_fini(tecs_world_t *w, void *ctx)
{
    sys_state *s = ctx;
    for (int32_t i = 0; i < s->n; i++)
        free_entry(w, &s->list[i]);
    tecs__free(w, s->list, (size_t)s->cap * sizeof *s->list);
    tecs__free(w, s, sizeof *s);
    w->sys = NULL;
}

/* Verify the systems' list (tecs_world_check). */
static tecs_err_t sys_verify(tecs_world_t *w, void *ctx)
{
    const sys_state *s = ctx;
    int32_t live = 0;
    for (int32_t i = 0; i < s->n; i++) {
        const sys_entry *e = &s->list[i];
        int forms = (e->run != NULL) + (e->each != NULL) + (e->drive != NULL);
        if (e->phase < TECS_ON_LOAD || e->phase > TECS_ON_STORE || forms != 1 ||
            (e->each && e->query == NULL) || e->groups == 0)
            return tecs__err(w, TECS_ECORRUPT, "system '%s' is malformed", e->name);
        if (e->query && tecs_query_world(e->query) != w)
            return tecs__err(w, TECS_ECORRUPT, "system '%s': query of another world", e->name);
        live += !e->removed;
        for (int32_t j = 0; j < i && !e->removed; j++)
            if (!s->list[j].removed && strcmp(s->list[j].name, e->name) == 0)
                return tecs__err(w, TECS_ECORRUPT, "two systems named '%s'", e->name);
    }
    if (live != s->nlive || (!s->running && s->any_removed))
        return tecs__err(w, TECS_ECORRUPT, "system counts are off");
    return TECS_OK;
}

static sys_state *sys_of(tecs_world_t *w)
{
    if (w->sys)
        return w->sys;
    tecs__listener l = { .on_fini = sys_on_fini, .verify = sys_verify };
    sys_state *s = tecs__plug(w, sizeof *s, &l, "system sys_of");
    if (s == NULL)
        return NULL;
    s->next_id = 1;
    w->sys = s;
    return s;
}

/* Drop entries marked removed (outside a frame only). */
static void sys_sweep(tecs_world_t *w, sys_state *s)
{
    if (s->running || !s->any_removed)
        return;
    int32_t k = 0;
    for (int32_t i = 0; i < s->n; i++) {
        if (s->list[i].removed) {
            if (s->list[i].query)
                tecs__query_use(s->list[i].query, -1);
            free_entry(w, &s->list[i]);
        }
        else
            s->list[k++] = s->list[i];
    }
    s->n = k;
    s->any_removed = false;
}

static sys_entry *sys_find(const tecs_world_t *w, tecs_system_t id)
{
    const sys_state *s = w ? w->sys : NULL;
    for (int32_t i = 0; s && id && i < s->n; i++)
        if (s->list[i].id == id && !s->list[i].removed)
            return &s->list[i];
    return NULL;
}

static sys_entry *sys_find_name(const tecs_world_t *w, const char *name)
{
    const sys_state *s = w->sys;
    size_t len = strlen(name);
    for (int32_t i = 0; s && i < s->n; i++) {
        sys_entry *e = &s->list[i];
        if (!e->removed && e->name_len == len && memcmp(e->name, name, len) == 0)
            return e;
    }
    return NULL;
}

static tecs_err_t err_noent(tecs_world_t *w, tecs_system_t id)
{
    return w ? tecs__err(w, TECS_ENOENT, "system %u does not exist", id) : TECS_EINVAL;
}

/* The start of the calls that change a system (object: entered as a sys_call
** that frees or replaces an object): the system, or NULL, the error in
** w->base.err. */
static sys_entry *change_entry(tecs_world_t *w, tecs_system_t id, bool object)
{
    if (object ? tecs__enter_object(w) : tecs__enter(w))
        return NULL;
    sys_entry *e = sys_find(w, id);
    if (e == NULL)
        err_noent(w, id);
    return e;
}

/* ---- adding and removing --------------------------------------------- */

/* What tecs_system_new and tecs_system_set both check: one callback, the
** query, the interval. name is the system's, for the messages. */
static tecs_err_t validate_body(tecs_world_t *w, const tecs_system_desc_t *d, const char *name)
{
    int forms = (d->run != NULL) + (d->each != NULL) + (d->drive != NULL);
    if (forms == 0)
        return tecs__err(w, TECS_EINVAL, "system '%s' needs a callback: run, each or drive",
                         name);
    if (forms > 1)
        return tecs__err(w, TECS_EINVAL, "system '%s' has %d callbacks: give one of run, "
                         "each, drive", name, forms);
    if (d->each && d->query == NULL)
        return tecs__err(w, TECS_EINVAL, "system '%s': each needs a query", name);
    if (d->query && tecs_query_world(d->query) != w)
        return tecs__err(w, TECS_EWORLD, "system '%s': query of another world", name);
    if (!(d->interval >= 0 && d->interval <= TIME_MAX))
        return tecs__err(w, TECS_EINVAL, "system '%s': bad interval %g (seconds, 0 or more)",
                         name, d->interval);
    if (d->parallel && d->concurrent)
        return tecs__err(w, TECS_EINVAL, "system '%s': parallel or concurrent, not both "
                         "(a parallel system takes every worker)", name);
    if (d->parallel_min < 0)
        return tecs__err(w, TECS_EINVAL, "system '%s': parallel_min %d is negative", name,
                         (int)d->parallel_min);
    if ((d->reads || d->writes) && !d->parallel && !d->concurrent)
        return tecs__err(w, TECS_EINVAL, "system '%s': reads / writes are for parallel or "
                         "concurrent systems", name);
    if (list_len(w, d->reads) < 0 || list_len(w, d->writes) < 0)
        return tecs__err(w, TECS_ENOCOMP, "system '%s': reads / writes name an unknown "
                         "component (or has no 0 at its end)", name);
    return TECS_OK;
}

static tecs_err_t sys_validate_desc(tecs_world_t *w, const tecs_system_desc_t *d)
{
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_system_new: NULL description");
    if (d->name == NULL || d->name[0] == '\0')
        return tecs__err(w, TECS_EINVAL, "a system needs a name");
    if ((int)d->phase < 0 || (int)d->phase > TECS_PHASE_COUNT)
        return tecs__err(w, TECS_EINVAL, "system '%s': unknown phase %d", d->name,
                         (int)d->phase);
    tecs_err_t err = validate_body(w, d, d->name);
    if (err)
        return err;
    if (sys_find_name(w, d->name))
        return tecs__err(w, TECS_EEXIST, "a system named '%s' exists", d->name);
    return TECS_OK;
}

tecs_system_t tecs_system_new(tecs_world_t *w, const tecs_system_desc_t *d)
{
    if (w == NULL || tecs__enter_object(w) || sys_validate_desc(w, d))
        return 0;
    sys_state *s = sys_of(w);
    if (s == NULL)
        return 0;
    if (s->next_id == 0) {
        tecs__err(w, TECS_ELIMIT, "system ids exhausted");
        return 0;
    }
    size_t len = strlen(d->name);
    sys_access acc = { 0 };
    if ((d->parallel || d->concurrent) && make_access(w, d, &acc))
        return 0;
    char *name = tecs__alloc(w, len + 1);
    if (name == NULL || tecs__grow(w, (void **)&s->list, &s->cap, s->n + 1, sizeof *s->list)) {
        tecs__free(w, name, len + 1);
        free_access(w, acc);
        tecs__err(w, TECS_ENOMEM, "out of memory adding system '%s'", d->name);
        return 0;
    }
    memcpy(name, d->name, len + 1);
    s->list[s->n++] = (sys_entry){
        .id = s->next_id++, .name = name, .name_len = len,
        .phase = d->phase ? d->phase : TECS_ON_UPDATE, .query = d->query,
        .run = d->run, .each = d->each, .drive = d->drive, .ctx = d->ctx,
        .interval = d->interval, .groups = d->groups ? d->groups : 1u,
        .enabled = !d->disabled, .parallel = d->parallel, .concurrent = d->concurrent,
        .parallel_min = d->parallel_min, .extra = acc.extra, .nextra = acc.nextra,
        .access = acc.access,
    };
    s->nlive++;
    if (d->query)
        tecs__query_use(d->query, +1);   /* tecs_query_free refuses until removed */
    return s->list[s->n - 1].id;
}

tecs_err_t tecs_system_free(tecs_world_t *w, tecs_system_t id)
{
    if (w == NULL)
        return TECS_EINVAL;
    sys_entry *e = change_entry(w, id, true);
    if (e == NULL)
        return w->base.err;
    e->removed = true;
    w->sys->any_removed = true;
    w->sys->nlive--;
    sys_sweep(w, w->sys);
    return TECS_OK;
}

tecs_err_t tecs_system_enable(tecs_world_t *w, tecs_system_t id, bool enabled)
{
    if (w == NULL)
        return TECS_EINVAL;
    sys_entry *e = change_entry(w, id, false);
    if (e == NULL)
        return w->base.err;
    e->enabled = enabled;
    return TECS_OK;
}

bool tecs_system_enabled(const tecs_world_t *w, tecs_system_t id)
{
    const sys_entry *e = sys_find(w, id);
    return e && e->enabled;
}

tecs_system_t tecs_system_lookup(tecs_world_t *w, const char *name)
{
    if (w == NULL || tecs__enter_read(w))
        return 0;
    if (name == NULL) {
        tecs__err(w, TECS_EINVAL, "tecs_system_lookup: NULL name");
        return 0;
    }
    const sys_entry *e = sys_find_name(w, name);
    if (e == NULL)
        tecs__err(w, TECS_ENOENT, "no system named '%s'", name);
    return e ? e->id : 0;
}

const char *tecs_system_name(const tecs_world_t *w, tecs_system_t id)
{
    const sys_entry *e = sys_find(w, id);
    return e ? e->name : NULL;
}

int32_t tecs_system_count(const tecs_world_t *w)
{
    return w && w->sys ? w->sys->nlive : 0;
}

tecs_system_t tecs_system_at(const tecs_world_t *w, int32_t i)
{
    const sys_state *s = w ? w->sys : NULL;
    for (int32_t k = 0; s && i >= 0 && k < s->n; k++)
        if (!s->list[k].removed && i-- == 0)
            return s->list[k].id;
    return 0;
}

/* The start of the calls that read a system into *out (fn names the sys_call):
** the system, or NULL with the error recorded. */
static const sys_entry *read_entry(tecs_world_t *w, tecs_system_t id, const void *out,
                                   const char *fn)
{
    if (tecs__enter_read(w))
        return NULL;
    if (out == NULL) {
        tecs__err(w, TECS_EINVAL, "%s: NULL output", fn);
        return NULL;
    }
    const sys_entry *e = sys_find(w, id);
    if (e == NULL)
        err_noent(w, id);
    return e;
}

tecs_err_t tecs_system_stats(tecs_world_t *w, tecs_system_t id, tecs_system_stats_t *out)
{
    const sys_entry *e = w ? read_entry(w, id, out, "tecs_system_stats") : NULL;
    if (e == NULL)
        return w ? w->base.err : TECS_EINVAL;
    *out = e->stats;
    return TECS_OK;
}

tecs_err_t tecs_system_get(tecs_world_t *w, tecs_system_t id, tecs_system_desc_t *out)
{
    const sys_entry *e = w ? read_entry(w, id, out, "tecs_system_get") : NULL;
    if (e == NULL)
        return w ? w->base.err : TECS_EINVAL;
    *out = (tecs_system_desc_t){
        .name = e->name, .phase = e->phase, .query = e->query, .run = e->run,
        .each = e->each, .drive = e->drive, .ctx = e->ctx, .interval = e->interval,
        .groups = e->groups, .disabled = !e->enabled, .parallel = e->parallel,
        .parallel_min = e->parallel_min, .concurrent = e->concurrent,
    };
    if (e->extra) {                 /* reads, 0, writes, 0 */
        const tecs_comp_t *wr = e->extra;
        while (*wr)
            wr++;
        out->reads = e->extra[0] ? e->extra : NULL;
        out->writes = wr[1] ? wr + 1 : NULL;
    }
    return TECS_OK;
}

tecs_err_t tecs_system_set(tecs_world_t *w, tecs_system_t id, const tecs_system_desc_t *d)
{
    if (w == NULL)
        return TECS_EINVAL;
    sys_entry *e = change_entry(w, id, true);
    if (e == NULL)
        return w->base.err;
    if (d == NULL)
        return tecs__err(w, TECS_EINVAL, "tecs_system_set: NULL description");
    if (d->name && strcmp(d->name, e->name) != 0)
        return tecs__err(w, TECS_EINVAL, "system '%s' cannot be renamed (to '%s')", e->name,
                         d->name);
    if ((d->phase ? d->phase : TECS_ON_UPDATE) != e->phase)  /* it would move */
        return tecs__err(w, TECS_EINVAL, "system '%s' cannot change phase (%d to %d)",
                         e->name, (int)e->phase, (int)d->phase);
    tecs_err_t err = validate_body(w, d, e->name);
    if (err)
        return err;
    sys_access acc = { 0 };
    if ((d->parallel || d->concurrent) && make_access(w, d, &acc))
        return w->base.err;
    free_access(w, (sys_access){ e->extra, e->nextra, e->access });
    e->extra = acc.extra;
    e->nextra = acc.nextra;
    e->access = acc.access;
    e->parallel = d->parallel;
    e->concurrent = d->concurrent;
    e->parallel_min = d->parallel_min;
    if (e->query)
        tecs__query_use(e->query, -1);
    if (d->query)
        tecs__query_use(d->query, +1);
    e->query = d->query;
    e->run = d->run;
    e->each = d->each;
    e->drive = d->drive;
    e->ctx = d->ctx;
    e->interval = d->interval;
    e->groups = d->groups ? d->groups : 1u;
    e->enabled = !d->disabled;
    return TECS_OK;
}

int64_t tecs_world_frame_count(const tecs_world_t *w)
{
    return w && w->sys ? w->sys->frame : 0;
}

/* ---- running --------------------------------------------------------- */

/* The delta time this frame gives system e, or a negative value when an
** interval system is not sys_due. */
static double sys_due(sys_entry *e, double dt)
{
    if (e->interval <= 0)
        return dt;
    e->acc += dt;
    if (e->acc < e->interval)
        return -1;
    double q = e->acc / e->interval;
    if (!(q < 9e15)) {          /* too many intervals to count exactly (an inf
                                   from a tiny interval included): take it all */
        double all = e->acc;
        e->acc = 0;
        return all;
    }
    double k = (double)(int64_t)q;      /* floor, without libm */
    e->acc -= k * e->interval;
    if (e->acc < 0)             /* k * interval rounded above acc */
        e->acc = 0;
    return k * e->interval;
}

/* Call system e's callback over its query; the world is deferred. Sets
** *visited to the rows handed out. @return the drive callback's code
** (TECS_OK for the other forms), or the error that kept a drive system's
** iteration from opening: its callback is not called on a false "nothing
** matches", and *visited is -1 (it did not run). */
static tecs_err_t sys_walk(tecs_world_t *w, const sys_entry *e, double dt, int64_t frame,
                       int64_t *visited)
{
    tecs_system_fn run = e->run;   /* copied: e may move if the callback adds a */
    tecs_system_each_fn each = e->each;      /* system, or change if it sets one */
    tecs_system_drive_fn drive = e->drive;
    tecs_query_t *q = e->query;
    tecs_iter_t it;
    if (q == NULL) {
        memset(&it, 0, sizeof it);
        it.world = w;
    } else {
        it = tecs__query_iter(q, false);
        if (it.priv_.query == NULL && drive) {  /* the iteration did not open */
            *visited = -1;
            return w->base.err ? w->base.err : TECS_ENOMEM;
        }
    }
    it.delta_time = dt;
    it.frame = frame;
    it.ctx = e->ctx;
    if (drive) {
        tecs_err_t rc = drive(&it);
        *visited = it.priv_.stepped;
        tecs__iter_end(&it);        /* one the callback left open */
        return rc;
    }
    if (q == NULL) {
        run(&it);
        return TECS_OK;
    }
    while (tecs_iter_next(&it)) {
        if (run) {
            run(&it);
            continue;
        }
        for (int32_t r = 0; r < it.count; r++)
            each(&it, r);
    }
    *visited = it.priv_.stepped;
    return TECS_OK;
}

/* Run system i with delta time dt, the world deferred around it, and
** update its statistics. @return as sys_walk. */
static tecs_err_t sys_call(tecs_world_t *w, sys_state *s, int32_t i, double dt)
{
    double t0 = tecs_time_now();
    tecs__defer_begin(w);
    w->base.cb_depth++;              /* a callback runs (R1): see tecs__cb_begin */
    tecs_err_t outer_err = w->base.err;
    int64_t visited = 0;
    tecs_err_t rc = sys_walk(w, &s->list[i], dt, s->frame, &visited);
    tecs__err_restore(w, outer_err);
    w->base.cb_depth--;
    tecs__defer_end(w);
    if (visited < 0)
        return rc;
    double t = tecs_time_now() - t0;
    sys_entry *e = &w->sys->list[i];
    e->stats.runs++;
    e->stats.time_last = t;
    e->stats.time_total += t;
    e->stats.entities_last = visited;
    e->stats.entities_total += visited;
    return rc;
}

/* Does system e run in phase p of a frame of mask? */
static bool in_frame(const sys_entry *e, tecs_phase_t p, uint32_t mask)
{
    return e->phase == p && e->enabled && (e->groups & mask);
}

/* Does f's access conflict with one of the n systems of a wave? */
static bool wave_conflict(const sys_state *s, const int32_t *wave, int32_t n, const sys_entry *f)
{
    for (int32_t k = 0; k < n; k++)
        if (conflict(s->list[wave[k]].access, f->access))
            return true;
    return false;
}

/* ---- running on workers ---------------------------------------------- */

/* One task of a run on workers: a part of a parallel system, or a system
** of a wave. */
typedef struct part_slot {
    tecs_iter_t it;
    tecs_system_fn run;         /* the system's callback, copied            */
    tecs_system_each_fn each;
    tecs_system_drive_fn drive;
    int32_t sys;                /* its index in the list                    */
    int64_t first;              /* its rows' first in the query's           */
    tecs_err_t rc;              /* what the drive callback returned         */
    double time;                /* seconds the callback ran                 */
} part_slot;

/* Run slot i's callback over its iterator, on a worker. */
static void run_slot(void *arg, int32_t i)
{
    part_slot *t = &((part_slot *)arg)[i];
    double t0 = tecs_time_now();
    if (t->drive) {
        t->rc = t->drive(&t->it);
    } else if (t->it.priv_.query == NULL) {
        t->run(&t->it);
    } else {
        while (tecs_iter_next(&t->it)) {
            if (t->run) {
                t->run(&t->it);
                continue;
            }
            for (int32_t r = 0; r < t->it.count; r++)
                t->each(&t->it, r);
        }
    }
    t->time = tecs_time_now() - t0;
}

/* Aim slot t at rows [first, first + count) of system i's query through
** worker context k; worker / workers as the callback sees them. */
static void slot_ready(tecs_world_t *w, part_slot *t, int32_t i, int32_t k, int64_t first,
                       int64_t count, double dt, int32_t worker, int32_t workers)
{
    const sys_entry *e = &w->sys->list[i];
    tecs_world_t *v = tecs__worker_ready(w, k, e->access, e->access + ACCESS_WORDS);
    if (e->query) {
        tecs__iter_part(&t->it, e->query, v, first, count);
    } else {
        memset(&t->it, 0, sizeof t->it);
        t->it.world = v;
    }
    t->it.delta_time = dt;
    t->it.frame = w->sys->frame;
    t->it.ctx = e->ctx;
    t->it.worker = worker;
    t->it.workers = workers;
    t->run = e->run;
    t->each = e->each;
    t->drive = e->drive;
    t->sys = i;
    t->first = first;
    t->rc = TECS_OK;
}

/* Count a run of system i in its statistics. */
static void count_run(sys_entry *e, double t, int64_t visited)
{
    e->stats.runs++;
    e->stats.time_last = t;
    e->stats.time_total += t;
    e->stats.entities_last = visited;
    e->stats.entities_total += visited;
}

/* After n slots ran: report their write terms' writes to the rows they
** handed out (in slot order), apply their contexts' changes, count each
** system's run (a system's parts add up) and return the first code a
** drive callback returned, *stop receiving its system. */
static tecs_err_t finish(tecs_world_t *w, part_slot *t, int32_t n, double wall, int32_t *stop)
{
    uint32_t serial = tecs__query_reports_begin(w);
    for (int32_t k = 0; k < n; k++) {
        tecs_query_t *q = w->sys->list[t[k].sys].query;
        if (q && tecs__query_writes_watched(q))
            tecs__query_report_writes(q, t[k].first, t[k].it.priv_.stepped);
    }
    tecs__query_reports_end(w, serial);
    /* What the workers wrote through tecs_get_mut to components declared
    ** in desc.writes counts as written now, in every chunk holding them. */
    for (int32_t k = 0; k < n; k++) {
        const sys_entry *e = &w->sys->list[t[k].sys];
        if (e->extra && (k == 0 || t[k - 1].sys != t[k].sys)) {
            const tecs_comp_t *wr = e->extra;
            while (*wr)
                wr++;
            for (wr++; *wr; wr++)
                tecs__touch_all(w, *wr);
        }
    }
    tecs__workers_merge(w);
    tecs_err_t rc = TECS_OK;
    for (int32_t k = 0; k < n;) {
        int32_t i = t[k].sys;
        int64_t visited = 0;
        double time = 0;
        for (; k < n && t[k].sys == i; k++) {
            visited += t[k].it.priv_.stepped;
            time = t[k].time > time ? t[k].time : time;
            if (rc == TECS_OK && t[k].rc != TECS_OK) {
                rc = t[k].rc;
                *stop = i;
            }
        }
        /* A parallel system's time is the whole run's; a wave's systems
        ** each count their own callback's. */
        count_run(&w->sys->list[i], t[0].sys == t[n - 1].sys ? wall : time, visited);
    }
    return rc;
}

/* Run parallel system i: its rows in one part per worker (one part below
** its parallel_min). Contexts are reserved. */
static tecs_err_t call_parallel(tecs_world_t *w, int32_t i, double dt, int32_t *stop)
{
    part_slot t[TECS_MAX_THREADS];
    const sys_entry *e = &w->sys->list[i];
    if (e->query)
        tecs__query_run(e->query, true);
    int64_t rows = e->query ? tecs__query_rows(e->query) : 0;
    int32_t parts = tecs_world_threads(w);
    if (rows < (e->parallel_min ? e->parallel_min : TECS_PARALLEL_MIN) || rows < parts)
        parts = 1;
    if (tecs__workers_reserve(w, parts) || tecs__query_reports_reserve(w)) {
        *stop = i;
        return w->base.err;
    }
    double t0 = tecs_time_now();
    for (int32_t k = 0; k < parts; k++) {
        int64_t first = rows * k / parts, end = rows * (k + 1) / parts;
        slot_ready(w, &t[k], i, k, first, end - first, dt, k, parts);
    }
    tecs__workers_run(w, parts, run_slot, t);
    return finish(w, t, parts, tecs_time_now() - t0, stop);
}

/* Run the wave of n concurrent systems wave[0..n) (with their delta
** times), side by side. Contexts are reserved. */
static tecs_err_t call_wave(tecs_world_t *w, const int32_t *wave, const double *dts, int32_t n,
                            int32_t *stop)
{
    part_slot t[WAVE_MAX];
    if (tecs__workers_reserve(w, n) || tecs__query_reports_reserve(w)) {
        *stop = wave[0];
        return w->base.err;
    }
    double t0 = tecs_time_now();
    for (int32_t k = 0; k < n; k++) {
        tecs_query_t *q = w->sys->list[wave[k]].query;
        if (q)
            tecs__query_run(q, true);
        slot_ready(w, &t[k], wave[k], k, 0, q ? tecs__query_rows(q) : 0, dts[k], 0, 1);
    }
    tecs__workers_run(w, n, run_slot, t);
    return finish(w, t, n, tecs_time_now() - t0, stop);
}

/* The worker contexts a frame of s needs: a parallel system's parts, the
** largest wave. Its waves end at *wave_cap systems (fixed by the systems,
** not the threads, so the frame's result is not either). */
static int32_t contexts_needed(tecs_world_t *w, const sys_state *s, int32_t *wave_cap)
{
    int32_t need = 0, nconc = 0;
    for (int32_t i = 0; i < s->n; i++) {
        if (s->list[i].parallel && need < tecs_world_threads(w))
            need = tecs_world_threads(w);
        nconc += s->list[i].concurrent;
    }
    *wave_cap = nconc < WAVE_MAX ? nconc : WAVE_MAX;
    return need > *wave_cap ? need : *wave_cap;
}

/* tecs_progress and tecs_system_run: checked in the same order. */
static tecs_err_t run_check(tecs_world_t *w, double dt, const char *fn)
{
    if (!(dt >= 0 && dt <= TIME_MAX))
        return tecs__err(w, TECS_EINVAL, "%s: bad delta time %g", fn, dt);
    if (tecs__cmd_nested(w) || (w->sys && w->sys->running))
        return tecs__err(w, TECS_EBUSY, "%s cannot run inside an iteration, a callback, "
                         "a deferred section or a frame", fn);
    return TECS_OK;
}

/* The code a drive callback returned, reported with the system's name. */
static tecs_err_t report_stop(tecs_world_t *w, const sys_entry *e, tecs_err_t rc,
                              const char *what)
{
    return tecs__err(w, rc, "system '%s' returned %s (%s)%s", e->name, tecs_err_name(rc),
                     tecs_strerror(rc), what);
}

tecs_err_t tecs_progress_groups(tecs_world_t *w, double dt, uint32_t mask)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err || (err = run_check(w, dt, "tecs_progress")))
        return err;
    sys_state *s = sys_of(w);
    if (s == NULL)
        return w->base.err;
    int32_t wave_cap;
    int32_t need = contexts_needed(w, s, &wave_cap);
    if (need > 0 && (err = tecs__workers_reserve(w, need)) != TECS_OK)
        return err;
    s->running = true;
    tecs__arch_tick_next(&w->arch); /* each frame starts a tick */
    s->frame_n = s->n;
    for (int32_t i = 0; i < s->frame_n; i++) {
        s->list[i].stats.time_last = 0;
        s->list[i].stats.entities_last = 0;
    }
    tecs_err_t rc = TECS_OK;
    int32_t stop = -1;
    for (int p = TECS_ON_LOAD; p <= TECS_ON_STORE && rc == TECS_OK; p++)
        for (int32_t i = 0; i < s->frame_n && rc == TECS_OK;) {
            sys_entry *e = &s->list[i];
            if (!in_frame(e, (tecs_phase_t)p, mask)) {
                i++;                /* skipped: no interval time either */
                continue;
            }
            double sdt = sys_due(e, dt);
            if (sdt < 0) {
                i++;
                continue;
            }
            if (!e->concurrent) {
                if ((rc = e->parallel ? call_parallel(w, i, sdt, &stop)
                                      : sys_call(w, s, i, sdt)) != TECS_OK && stop < 0)
                    stop = i;
                i++;
                continue;
            }
            /* A wave: this system and the concurrent ones after it in the
            ** phase, up to one that is not or that conflicts. */
            int32_t wave[WAVE_MAX], n = 0;
            double dts[WAVE_MAX];
            wave[n] = i, dts[n++] = sdt;
            for (i++; i < s->frame_n && n < wave_cap; i++) {
                sys_entry *f = &s->list[i];
                if (!in_frame(f, (tecs_phase_t)p, mask))
                    continue;
                if (!f->concurrent || wave_conflict(s, wave, n, f))
                    break;
                double fdt = sys_due(f, dt);
                if (fdt >= 0)
                    wave[n] = i, dts[n++] = fdt;
            }
            rc = call_wave(w, wave, dts, n, &stop);
        }
    s->running = false;
    s->frame++;
    if (rc)                         /* before the sys_sweep: the entry may go */
        report_stop(w, &s->list[stop], rc, ": the frame stopped");
    sys_sweep(w, s);
    return rc;
}

tecs_err_t tecs_progress(tecs_world_t *w, double dt)
{
    return tecs_progress_groups(w, dt, UINT32_MAX);
}

tecs_err_t tecs_system_run(tecs_world_t *w, tecs_system_t id, double dt)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err || (err = run_check(w, dt, "tecs_system_run")))
        return err;
    sys_entry *e = sys_find(w, id);
    if (e == NULL)
        return err_noent(w, id);
    sys_state *s = w->sys;
    int32_t i = (int32_t)(e - s->list);
    if ((e->parallel || e->concurrent) &&
        (err = tecs__workers_reserve(w, e->parallel ? tecs_world_threads(w) : 1)) != TECS_OK)
        return err;
    s->running = true;
    int32_t stop = -1;
    tecs_err_t rc = e->parallel ? call_parallel(w, i, dt, &stop)
                  : e->concurrent ? call_wave(w, &i, &dt, 1, &stop)
                  : sys_call(w, s, i, dt);
    s->running = false;
    if (rc)
        report_stop(w, &s->list[i], rc, "");
    sys_sweep(w, s);
    return rc;
}

