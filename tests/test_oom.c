/*
** Out of memory: a scripted workload that touches every kind of call, run
** once cleanly to record what the world looks like after each step, then
** again for k = 1, 2, ... with the k-th allocation failing. The step that
** meets the failure must report TECS_ENOMEM and leave the world as it was;
** once allocation works again the same step succeeds, every later step
** gives the same world as the clean run, and nothing leaks.
*/
#include "hooks.h"

enum { STEP_QUEUED = -1 };                      /* queued, its apply failed */

typedef struct wl {
    tecs_world_t *w;
    hook_counts h;
    tecs_comp_t pos, obj, tag, hp, vel;
    tecs_archetype_t *ap, *apo, *avo;
    tecs_query_t *q1, *q2;
    tecs_entity_t ids[512];
    int nids;
    tecs_entity_t fold;                         /* made by st_d_fold */
    bool ended;                 /* a failed call's section ended after it:
                                   the end set the last error (TECS_OK)     */
} wl;

/* The error of a call that returned 0 / NULL. */
static int failed(const wl *s)
{
    return tecs_last_error(s->w) ? (int)tecs_last_error(s->w) : TECS_EINVAL;
}

static int keep_id(wl *s, tecs_entity_t e)
{
    if (e == 0)
        return failed(s);
    s->ids[s->nids++] = e;
    return TECS_OK;
}

/* ---- the steps --------------------------------------------------------- */

static int st_components(wl *s)
{
    tecs_comp_t p = TECS_COMPONENT(s->w, Position);
    if (p == 0)
        return failed(s);
    s->pos = p;
    return TECS_OK;
}

static int st_obj(wl *s)
{
    tecs_comp_t o = obj_component(s->w, "Obj", &s->h);
    if (o == 0)
        return failed(s);
    s->obj = o;
    return TECS_OK;
}

static int st_tag(wl *s)
{
    tecs_comp_t t = TECS_TAG(s->w, Tag);
    if (t == 0)
        return failed(s);
    s->tag = t;
    return TECS_OK;
}

static int st_archetypes(wl *s)
{
    tecs_archetype_t *a = tecs_archetype_get(s->w, 1, &s->pos);
    if (a == NULL)
        return failed(s);
    s->ap = a;
    return TECS_OK;
}

static int st_archetype2(wl *s)
{
    tecs_archetype_t *a = tecs_archetype_get(s->w, 2, (tecs_comp_t[]){ s->obj, s->pos });
    if (a == NULL)
        return failed(s);
    s->apo = a;
    return TECS_OK;
}

static int st_query1(wl *s)
{
    tecs_query_t *q = tecs_query_all(s->w, 1, &s->pos);
    if (q == NULL)
        return failed(s);
    s->q1 = q;
    return TECS_OK;
}

static int st_query2(wl *s)
{
    tecs_query_t *q = TECS_QUERY(s->w, { .comp = s->obj, .oper = TECS_OPTIONAL },
                                 { .comp = s->tag, .oper = TECS_NONE },
                                 { .comp = s->pos, .access = TECS_READ });
    if (q == NULL)
        return failed(s);
    s->q2 = q;
    return TECS_OK;
}

static int st_new(wl *s) { return keep_id(s, tecs_new(s->w)); }
static int st_new_in(wl *s) { return keep_id(s, tecs_new_in(s->w, s->apo)); }

static void init_fn(tecs_init_t *init, void *ctx)
{
    wl *s = ctx;
    Obj *o = tecs_init_construct(init, s->obj);
    obj_ctor(o, 1, &s->h);                       /* constructs it, counted */
    o->value = 1234;
}

static int st_new_with(wl *s) { return keep_id(s, tecs_new_with(s->w, s->apo, init_fn, s)); }

static int bulk(wl *s, tecs_archetype_t *a, int32_t n)
{
    Position p[64];
    Obj o[64];
    for (int i = 0; i < n; i++) {
        p[i] = (Position){ (float)(s->nids + i), 1 };
        o[i] = obj(s->nids + i);
    }
    tecs_value_t vals[2] = { { s->pos, p }, { s->obj, o } };
    tecs_err_t err = tecs_new_bulk(s->w, a, n, s->ids + s->nids, a == s->apo ? 2 : 1, vals);
    if (err == TECS_OK)
        s->nids += n;
    return err;
}

static int st_bulk(wl *s) { return bulk(s, s->apo, 40); }
static int st_bulk_plain(wl *s) { return bulk(s, s->ap, 20); }

static int st_set_adds(wl *s)
{
    return TECS_SET(s->w, s->ids[0], s->pos, Position, { 5, 5 });
}

static int st_set_obj_adds(wl *s)
{
    return tecs_set(s->w, s->ids[0], s->obj, &(Obj){ OBJ_LIVE, 55 });
}

static int st_set_existing(wl *s)
{
    return tecs_set(s->w, s->ids[5], s->obj, &(Obj){ OBJ_LIVE, 66 });
}

static int st_add_tag(wl *s) { return tecs_add(s->w, s->ids[6], s->tag); }
static int st_add_tag2(wl *s) { return tecs_add(s->w, s->ids[7], s->tag); }
static int st_remove(wl *s) { return tecs_remove(s->w, s->ids[8], s->pos); }
static int st_remove_obj(wl *s) { return tecs_remove(s->w, s->ids[6], s->obj); }
static int st_destroy(wl *s) { return tecs_destroy(s->w, s->ids[9]); }
static int st_reserve(wl *s) { return tecs_archetype_reserve(s->w, s->ap, 100); }

static int st_late_component(wl *s)
{
    tecs_comp_t c = TECS_COMPONENT(s->w, Health);
    if (c == 0)
        return failed(s);
    s->hp = c;
    return TECS_OK;
}

static int st_vel(wl *s)
{
    tecs_comp_t c = TECS_COMPONENT(s->w, Velocity);
    if (c == 0)
        return failed(s);
    s->vel = c;
    return TECS_OK;
}

static int st_archetype_vel(wl *s)
{
    tecs_archetype_t *a = tecs_archetype_get(s->w, 2, (tecs_comp_t[]){ s->vel, s->obj });
    if (a == NULL)
        return failed(s);
    s->avo = a;
    return TECS_OK;
}

static int st_add_late(wl *s) { return TECS_SET(s->w, s->ids[10], s->hp, Health, { 3 }); }

/* A call made while an iteration is open; the end of it applies the call. */
static int deferred(wl *s, int (*fn)(wl *))
{
    tecs_clear_error(s->w);
    tecs_iter_t it = TECS_ITER(tecs_query_world(s->q1), .query = s->q1);
    int err = fn(s);
    tecs_iter_fini(&it);
    if (err)
        return err;
    return tecs_last_error(s->w) == TECS_ENOMEM ? STEP_QUEUED : TECS_OK;
}

static int d_new(wl *s) { return keep_id(s, tecs_new(s->w)); }
static int d_set(wl *s) { return tecs_set(s->w, s->ids[1], s->obj, &(Obj){ OBJ_LIVE, 77 }); }
static int d_add(wl *s) { return tecs_add(s->w, s->ids[11], s->vel); }
static int d_remove(wl *s) { return tecs_remove(s->w, s->ids[10], s->pos); }
static int d_destroy(wl *s) { return tecs_destroy(s->w, s->ids[13]); }
static int d_bulk(wl *s) { return bulk(s, s->apo, 30); }
static int st_d_new(wl *s) { return deferred(s, d_new); }
static int st_d_set(wl *s) { return deferred(s, d_set); }
static int st_d_add(wl *s) { return deferred(s, d_add); }
static int st_d_remove(wl *s) { return deferred(s, d_remove); }
static int st_d_destroy(wl *s) { return deferred(s, d_destroy); }
static int st_d_bulk(wl *s) { return deferred(s, d_bulk); }

/* A birth and its sets in one iteration (applied as one birth). If a set
** fails to queue, the birth still happens at the end; the retry then only
** redoes the sets, which do the same to a live entity. */
static int d_fold(wl *s)
{
    if (s->fold == 0) {
        tecs_entity_t e = tecs_new(s->w);
        if (e == 0)
            return failed(s);
        s->fold = e;
        s->ids[s->nids++] = e;
    }
    tecs_err_t err = TECS_SET(s->w, s->fold, s->pos, Position, { 8, 9 });
    if (err == TECS_OK)
        err = tecs_set(s->w, s->fold, s->obj, &(Obj){ OBJ_LIVE, 99 });
    if (err == TECS_OK && !tecs_has(s->w, s->fold, s->vel))
        err = tecs_add(s->w, s->fold, s->vel);
    if (err == TECS_OK && !tecs_has(s->w, s->fold, s->tag))
        err = tecs_add(s->w, s->fold, s->tag);    /* a new archetype */
    return err;
}

static int st_d_fold(wl *s) { return deferred(s, d_fold); }

/* A call made inside a deferred section; its end applies the call. */
static int sectioned(wl *s, int (*fn)(wl *))
{
    tecs_clear_error(s->w);
    tecs_err_t err = tecs_defer_begin(s->w);
    if (err)
        return err;
    err = fn(s);
    tecs_err_t end = tecs_defer_end(s->w);
    s->ended = err != TECS_OK && end == TECS_OK;
    if (err)
        return err;
    return end == TECS_ENOMEM ? STEP_QUEUED : (int)end;
}

static int s_add(wl *s) { return tecs_add(s->w, s->ids[16], s->tag); }
static int st_s_add(wl *s) { return sectioned(s, s_add); }
static int st_s_new(wl *s) { return sectioned(s, d_new); }

/* Every entity dies, every queued change goes; nothing is allocated. The
** ids are forgotten: the generations new ones get depend on the slots
** failed births took and gave back, which the clean run did not. */
static int st_reset(wl *s)
{
    s->nids = 0;
    s->fold = 0;
    return tecs_world_reset(s->w);
}

static int s_new_anon(wl *s) { return tecs_new(s->w) ? TECS_OK : failed(s); }
static int st_s_new_anon(wl *s) { return sectioned(s, s_new_anon); }

static int st_refill(wl *s)
{
    Position p[40];
    Obj o[40];
    for (int i = 0; i < 40; i++) {
        p[i] = (Position){ (float)i, 2 };
        o[i] = obj(i);
    }
    tecs_value_t vals[2] = { { s->pos, p }, { s->obj, o } };
    return tecs_new_bulk(s->w, s->apo, 40, NULL, 2, vals);
}

static int delay_new(wl *s, tecs_archetype_t *a)
{
    Obj o = obj(88);
    return keep_id(s, tecs_delayed_new(s->w, a, 1, &(tecs_value_t){ s->obj, &o }));
}

static int st_delay_new(wl *s) { return delay_new(s, s->apo); }
static int st_delay_new_vel(wl *s) { return delay_new(s, s->avo); }

static int st_delay_kill(wl *s) { return tecs_delayed_destroy(s->w, s->ids[14], NULL, NULL); }
static int st_delay_kill2(wl *s) { return tecs_delayed_destroy(s->w, s->ids[15], NULL, NULL); }
static int st_apply_news(wl *s) { return tecs_delayed_apply_new(s->w); }
static int st_apply_kills(wl *s) { return tecs_delayed_apply_destroy(s->w); }

static int st_shrink(wl *s)
{
    for (int i = 20; i < 50; i++)
        if (tecs_is_alive(s->w, s->ids[i]))
            CHECK_ERR(tecs_destroy(s->w, s->ids[i]), TECS_OK);   /* frees, never allocates */
    return TECS_OK;
}

static int st_collect(wl *s)
{
    tecs_entity_t out[512];
    return tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(s->q2), .query = s->q2) }, out, 512) >= 0 ? TECS_OK : failed(s);
}

typedef struct step { const char *name; int (*fn)(wl *); bool batch; } step;

static const step steps[] = {
    { "component", st_components, false }, { "obj", st_obj, false },
    { "tag", st_tag, false }, { "archetype", st_archetypes, false },
    { "query1", st_query1, false }, { "archetype2", st_archetype2, false },
    { "query2", st_query2, false }, { "new", st_new, false },
    { "new", st_new, false }, { "new_in", st_new_in, false },
    { "new_with", st_new_with, false }, { "bulk", st_bulk, false },
    { "bulk_plain", st_bulk_plain, false }, { "set_adds", st_set_adds, false },
    { "set_obj_adds", st_set_obj_adds, false }, { "set_existing", st_set_existing, false },
    { "add_tag", st_add_tag, false }, { "add_tag2", st_add_tag2, false },
    { "remove", st_remove, false }, { "remove_obj", st_remove_obj, false },
    { "destroy", st_destroy, false }, { "reserve", st_reserve, false },
    { "late_component", st_late_component, false }, { "add_late", st_add_late, false },
    { "vel", st_vel, false }, { "archetype_vel", st_archetype_vel, false },
    { "d_new", st_d_new, false }, { "d_set", st_d_set, false },
    { "d_add", st_d_add, false }, { "d_remove", st_d_remove, false },
    { "d_destroy", st_d_destroy, false }, { "d_bulk", st_d_bulk, true },
    { "d_fold", st_d_fold, true },
    { "delay_new", st_delay_new, false }, { "delay_new_vel", st_delay_new_vel, false },
    { "delay_new", st_delay_new, false },
    { "delay_kill", st_delay_kill, false }, { "delay_kill2", st_delay_kill2, false },
    { "apply_news", st_apply_news, true }, { "apply_kills", st_apply_kills, true },
    { "collect", st_collect, false }, { "shrink", st_shrink, false },
    { "bulk_again", st_bulk, false },
    { "s_add", st_s_add, false }, { "s_new", st_s_new, false },
    { "delay_new", st_delay_new, false }, { "reset", st_reset, false },
    { "refill", st_refill, false }, { "s_new_anon", st_s_new_anon, false },
};
enum { NSTEPS = sizeof steps / sizeof steps[0] };

/* ---- what a user can see ------------------------------------------------ */

typedef struct digest {
    int32_t entities, pending_news, pending_kills, archetypes, components;
    long live_objs;
    uint64_t values;
} digest;

static uint64_t mix(uint64_t h, uint64_t x)
{
    return (h ^ x) * 0x100000001b3ull;
}

static uint64_t hash_comp(const wl *s, tecs_entity_t e, tecs_comp_t c, uint64_t h)
{
    if (c == 0)
        return h;
    bool has = tecs_has(s->w, e, c);
    h = mix(h, has);
    size_t size = tecs_component_size(s->w, c);
    const unsigned char *p = has && size ? tecs_get(s->w, e, c) : NULL;
    for (size_t i = 0; p && i < size; i++)
        h = mix(h, p[i]);
    return h;
}

static digest look(wl *s)
{
    digest d = { tecs_world_entity_count(s->w), tecs_delayed_new_count(s->w),
                 tecs_delayed_destroy_count(s->w), tecs_world_archetype_count(s->w),
                 tecs_world_component_count(s->w), hooks_live(&s->h), 14695981039346656037ull };
    for (int i = 0; i < s->nids; i++) {
        tecs_entity_t e = s->ids[i];
        d.values = mix(d.values, e);
        d.values = mix(d.values, tecs_is_alive(s->w, e));
        d.values = hash_comp(s, e, s->pos, d.values);
        d.values = hash_comp(s, e, s->obj, d.values);
        d.values = hash_comp(s, e, s->tag, d.values);
        d.values = hash_comp(s, e, s->hp, d.values);
        d.values = hash_comp(s, e, s->vel, d.values);
    }
    d.values = mix(d.values, (uint64_t)tecs_query_count(s->q1));
    d.values = mix(d.values, (uint64_t)tecs_query_count(s->q2));
    return d;
}

static bool same(digest a, digest b)
{
    return a.entities == b.entities && a.pending_news == b.pending_news &&
           a.pending_kills == b.pending_kills && a.archetypes == b.archetypes &&
           a.components == b.components && a.live_objs == b.live_objs && a.values == b.values;
}

static void report(const char *what, long k, int i, digest a, digest b)
{
    fprintf(stderr, "  k=%ld step %d (%s): %s\n", k, i, steps[i].name, what);
    fprintf(stderr, "  entities %d/%d news %d/%d kills %d/%d archs %d/%d comps %d/%d "
            "objs %ld/%ld values %s\n", a.entities, b.entities, a.pending_news,
            b.pending_news, a.pending_kills, b.pending_kills, a.archetypes, b.archetypes,
            a.components, b.components, a.live_objs, b.live_objs,
            a.values == b.values ? "same" : "differ");
}

#define CHECK_SAME(k, i, a, b, what)                                        \
    do {                                                                    \
        if (!same((a), (b))) {                                              \
            report(what, k, i, a, b);                                       \
            test_fail(__FILE__, __LINE__, what);                            \
        }                                                                   \
    } while (0)

/* ---- the runs ----------------------------------------------------------- */

static digest ref[NSTEPS];
static int hits[NSTEPS];                        /* failures met by each step */
static int queued_hits;                         /* ... of them in a flush  */

/* Flush what a failed apply left queued, by opening and ending an iteration. */
static void flush(wl *s)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(s->q1), .query = s->q1);
    tecs_iter_fini(&it);
}

/* Run the workload with the k-th allocation failing (0: none). Returns
** whether a failure happened. */
static bool run(long k)
{
    tw_alloc a = { 0 };
    wl *s = calloc(1, sizeof *s);
    s->w = tw_new_ex(&a, 16);
    CHECK(s->w != NULL);
    long base = a.calls;
    a.fail_at = k ? base + k : 0;
    bool hit = false;
    for (int i = 0; i < NSTEPS; i++) {
        digest before = look(s);
        long fails = a.failures;
        int err = steps[i].fn(s);
        if (a.failures == fails) {
            CHECK_EQ(err, TECS_OK);
        } else {
            hit = true;
            hits[i]++;
            a.fail_at = 0;                         /* allocation works again */
            if (err != TECS_OK) {
                CHECK(err == TECS_ENOMEM || err == STEP_QUEUED);
                CHECK(tecs_last_error(s->w) == TECS_ENOMEM || s->ended);
                s->ended = false;
                TW_CHECK(s->w);
                if (!steps[i].batch)
                    CHECK_SAME(k, i, look(s), before, "world changed by a failed call");
                if (err == STEP_QUEUED) {
                    queued_hits++;
                    flush(s);
                }
                else
                    CHECK_EQ(steps[i].fn(s), TECS_OK);
            }
        }
        TW_CHECK(s->w);
        if (k == 0)
            ref[i] = look(s);
        else
            CHECK_SAME(k, i, look(s), ref[i], "world differs from the clean run");
    }
    CHECK_EQ(s->h.bad, 0);
    tw_free(s->w);
    CHECK_EQ(hooks_live(&s->h), 0);
    CHECK_EQ(s->h.bad, 0);
    free(s);
    return hit;
}

TEST(oom_every_allocation_of_a_workload)
{
    CHECK(!run(0));
    long k = 1;
    while (run(k))
        k++;
    CHECK(k > 50);                                 /* the workload does allocate */
    /* The failure met queueing calls, flushes and delayed applies too. */
    for (int i = 0; i < NSTEPS; i++)
        if (strcmp(steps[i].name, "d_add") == 0 || strcmp(steps[i].name, "d_remove") == 0 ||
            strcmp(steps[i].name, "d_bulk") == 0 || strcmp(steps[i].name, "apply_news") == 0 ||
            strcmp(steps[i].name, "d_fold") == 0)
            CHECK(hits[i] > 0);
    CHECK(queued_hits > 0);
    int section_hits = 0;                          /* deferred sections too */
    for (int i = 0; i < NSTEPS; i++)
        if (strncmp(steps[i].name, "s_", 2) == 0)
            section_hits += hits[i];
    CHECK(section_hits > 0);
}
