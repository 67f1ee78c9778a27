/*
** model.c — the reference model and the interpreter (see model.h).
**
** The model is as plain as it can be: an array of entities, each with its
** id, its state, a bit mask of its components and one 64-bit value per
** component; two arrays of queued commands (the deferred queue of an open
** iteration, the delayed queue of delayed births and destroys); the list of
** queries as their terms. No archetypes, no chunks: a query's result is a
** filter over the entity array.
**
**     entity   id | state (alive, pending birth, delayed birth) | kill? |
**              mask of the 8 components | val[8]
**
** Component values are bytes derived from a 64-bit number (fill_val), so a
** value is compared byte for byte. H is a hooked component (tests/hooks.h):
** its hooks count live values and flag misuse, so a leak or a double destroy
** shows as a mismatch of the live count.
**
** Operations read their arguments against the current state: an entity
** argument picks a model entity, a dead id, or a made-up id; a component
** argument picks one of the 8 components or an unknown id. So any byte
** string is a program, and a program with operations cut out still runs.
**
** Callbacks call back (see "callbacks that call back" below): what a body
** queues is pushed on the model's deferred queue when the call is made, so
** the model applies it where the library does, in call order. Caches are
** kept as their query and key: the model sorts its members by the key's
** bytes, then id, and the cache must hold exactly that after every write.
** Each newer check is a feature that TECS_MODEL_OFF switches off (model.h).
**
** Relations (model_rel.c) keep their pairs in an array of their own; a
** destroy goes through m_destroy, which takes what dies with the entity
** (its subtree, the sources of a DESTROY relation) or refuses (a REFUSE
** relation's target), and every kill drops the pairs naming the dead.
**
** Ops for later layers go in the op table with a model function each; the
** comparison in check_all is the place for their results.
*/
#define _DEFAULT_SOURCE
#include "model_int.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>

const uint32_t csize[NC] = { 4, 8, 0, 0, 12, sizeof(Obj), 1, 64 };
const uint32_t ssize[NS] = { 8, 0 };
const char *const sname[NS] = { "SV", "ST" };
const uint32_t calign[NC] = { 4, 8, 0, 0, 4, _Alignof(Obj), 1, 64 };
const char *const cname[NC] = { "A", "B", "T1", "T2", "V", "H", "C", "G" };
static const tecs_field_t fields_a[] = { { "k", TECS_TYPE_I32, 0, 1, 0 } };
static const tecs_field_t fields_b[] = { { "k", TECS_TYPE_U64, 0, 1, 0 } };
static const tecs_field_t fields_v[] = { { "a", TECS_TYPE_U32, 0, 1, 0 },
                                         { "k", TECS_TYPE_U32, 4, 1, 0 },
                                         { "c", TECS_TYPE_F32, 8, 1, 0 } };
static const tecs_field_t fields_h[] = { { "magic", TECS_TYPE_U32, 0, 1, 0 },
                                         { "value", TECS_TYPE_I32, 4, 1, 0 } };
static const tecs_field_t fields_g[] = { { "bytes", TECS_TYPE_U8, 0, 64, 0 } };
const tecs_field_t *const cfields[NC] = { fields_a, fields_b, NULL, NULL, fields_v, fields_h,
                                          NULL, fields_g };
const int32_t cnfields[NC] = { 1, 1, 0, 0, 3, 2, 0, 1 };
static const char *const mf_name[MF_COUNT] = { "life", "hooks", "obs", "res", "refuse",
    "wfree", "freeing", "cache", "cachecb", "itcopy", "busy", "mem", "lasterr", "ffree",
    "defchk", "struct", "citer", "cberr" };

/* ---- small tools --------------------------------------------------------- */

void mi_failf(interp *I, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (I->in_body > 0) {       /* no longjmp out of the library: report later */
        if (!I->cbfail)
            vsnprintf(I->cbmsg, sizeof I->cbmsg, fmt, ap);
        I->cbfail = true;
        va_end(ap);
        return;
    }
    int k = snprintf(I->res->msg, sizeof I->res->msg, "step %d: ", I->step);
    vsnprintf(I->res->msg + k, sizeof I->res->msg - (size_t)k, fmt, ap);
    va_end(ap);
    I->res->failed = true;
    I->res->at = I->step;
    longjmp(I->fail, 1);
}

void mi_cut(interp *I, const char *why)
{
    snprintf(I->res->msg, sizeof I->res->msg, "step %d: cut: %s", I->step, why);
    I->res->cut = true;
    I->res->at = I->step;
    longjmp(I->fail, 1);
}

uint64_t mi_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int64_t mkval(uint32_t a, uint32_t b)
{
    return (int64_t)(mi_mix(((uint64_t)a << 32) | b) | 1);
}

int64_t mi_mkval(uint32_t a, uint32_t b)
{
    return mkval(a, b);
}

static int64_t default_val(int c)
{
    return c == C_H ? OBJ_DEFAULT : 0;
}

/* The bytes of value v of component c. */
void mi_fill_val(int c, void *dst, int64_t v)
{
    if (c == C_H) {
        *(Obj *)dst = obj((int32_t)v);
        return;
    }
    unsigned char *d = dst;
    for (uint32_t i = 0; i < csize[c]; i++)
        d[i] = (unsigned char)((uint64_t)v >> (8 * (i % 8)));
}

static bool same_val(int c, const void *p, int64_t v)
{
    if (c == C_H)
        return ((const Obj *)p)->magic == OBJ_LIVE && ((const Obj *)p)->value == (int32_t)v;
    unsigned char buf[64];
    mi_fill_val(c, buf, v);
    return memcmp(p, buf, csize[c]) == 0;
}

bool mi_same_val(int c, const void *p, int64_t v)
{
    return same_val(c, p, v);
}

static void *grow(void *p, int32_t *cap, int32_t need, size_t esize)
{
    if (need <= *cap)
        return p;
    int32_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    p = realloc(p, (size_t)n * esize);
    if (p == NULL)
        abort();
    *cap = n;
    return p;
}

/* Was an allocation made to fail during this op? */
bool mi_injected(const interp *I)
{
    return I->alloc.failures > I->inj0;
}

bool mi_deferred(const interp *I)
{
    return I->nits > 0 || I->nsect > 0;
}

/* ---- the model ------------------------------------------------------------ */

ment *mi_find(interp *I, tecs_entity_t id)
{
    if (id == 0)
        return NULL;
    for (int32_t i = 0; i < I->ne; i++)
        if (I->e[i].id == id)
            return &I->e[i];
    return NULL;
}

/* A new id from the library: never 0, never seen before. */
static void check_fresh(interp *I, tecs_entity_t id)
{
    uint32_t index = TECS_ENTITY_INDEX(id), gen = TECS_ENTITY_GENERATION(id);
    EXPECT(I, id != 0, "a new entity has id 0");
    if ((int32_t)index >= I->cap_gen) {
        int32_t old = I->cap_gen;
        int32_t cap = old;
        I->maxgen = grow(I->maxgen, &I->cap_gen, (int32_t)index + 1, sizeof *I->maxgen);
        I->mark = grow(I->mark, &cap, (int32_t)index + 1, sizeof *I->mark);
        memset(I->maxgen + old, 0, (size_t)(I->cap_gen - old) * sizeof *I->maxgen);
        memset(I->mark + old, 0, (size_t)(I->cap_gen - old) * sizeof *I->mark);
    }
    EXPECT(I, gen + 1 > I->maxgen[index], "id %u:%u handed out again", index, gen);
    I->maxgen[index] = gen + 1;
    I->last = id;
}

ment *m_add_ent(interp *I, tecs_entity_t id, uint8_t st, uint32_t mask)
{
    check_fresh(I, id);
    I->e = grow(I->e, &I->cap_e, I->ne + 1, sizeof *I->e);
    ment *m = &I->e[I->ne++];
    *m = (ment){ .id = id, .st = st, .mask = mask };
    for (int c = 0; c < NC; c++)
        m->val[c] = default_val(c);
    return m;
}

void m_kill(interp *I, ment *m)
{
    mr_forget(I, m->id);
    I->dead[I->ndead++ % NDEAD] = m->id;
    *m = I->e[--I->ne];
}

/* Birth of a pending entity into mask, with values for vmask. */
static void m_birth(ment *m, uint32_t mask, uint32_t vmask, const int64_t *val)
{
    m->st = ST_ALIVE;
    m->mask = mask;
    m->off = 0;
    for (int c = 0; c < NC; c++)
        m->val[c] = (vmask >> c & 1) ? val[c] : default_val(c);
}

static void m_setval(ment *m, int c, int64_t v)
{
    if (!(m->mask >> c & 1)) {
        m->mask |= 1u << c;
        m->off &= ~(1u << c);           /* added enabled */
        m->val[c] = default_val(c);
    }
    if (csize[c])
        m->val[c] = v;
}

void mi_push_cmd(mcmd **q, int32_t *n, int32_t *cap, const mcmd *c)
{
    *q = grow(*q, cap, *n + 1, sizeof **q);
    (*q)[(*n)++] = *c;
}

void mi_push_dq(interp *I, const mcmd *c)
{
    mcmd t = *c;
    t.applying = I->w && I->w->cmd.applying;
    mi_push_cmd(&I->dq, &I->ndq, &I->cap_dq, &t);
}

/* An initializer ran once, on its entity, which nobody saw alive, and its
** own (queued) change was accepted. */
static void check_init(interp *I, const init_rec *r, tecs_entity_t id)
{
    EXPECT(I, r->ran && r->seen == id && !r->saw_alive, "the initializer ran wrong");
    EXPECT(I, r->add_err == TECS_OK || (r->add_err == TECS_ENOMEM && I->alloc.failures),
           "tecs_add inside an initializer: %s", tecs_err_name((tecs_err_t)r->add_err));
}

/* m_apply for a sparse component (comp NC + k, value in val[0]). */
static int m_apply_sparse(ment *m, bool alive, const mcmd *c)
{
    int k = c->comp - NC;
    bool has = alive && (m->smask >> k & 1);
    if (!alive)
        return TECS_OK;
    switch (c->op) {
    case Q_ADD:
        if (has)
            return TECS_EEXIST;
        m->smask |= (uint8_t)(1u << k);
        m->sval[k] = 0;
        return TECS_OK;
    case Q_REMOVE:
        if (!has)
            return TECS_ENOENT;
        m->smask &= (uint8_t)~(1u << k);
        return TECS_OK;
    default:
        m->smask |= (uint8_t)(1u << k);
        m->sval[k] = ssize[k] ? c->val[0] : 0;
        return TECS_OK;
    }
}

/* dst (pending, or just taken) is born a clone of the live src. */
static void m_clone(interp *I, tecs_entity_t src, tecs_entity_t dst)
{
    const ment *s = mi_find(I, src);
    ment *d = mi_find(I, dst);
    d->st = ST_ALIVE;
    d->mask = s->mask;
    d->off = s->off;
    memcpy(d->val, s->val, sizeof d->val);
    d->smask = s->smask;
    memcpy(d->sval, s->sval, sizeof d->sval);
    d->prefab = s->prefab;      /* the same archetype: a prefab's clone is one */
    mr_clone(I, src, dst);
}

/* Apply one deferred command to the model, as the flush does. A command
** whose entity is gone is skipped; one that cannot apply otherwise (an add
** of a component the entity has by then, a remove of one it lacks) is
** dropped. @return TECS_OK, or the error of a drop. */
static int m_apply(interp *I, const mcmd *c)
{
    ment *m = mi_find(I, c->id);
    bool alive = m && m->st == ST_ALIVE;
    switch (c->op) {
    case Q_NEW:
        if (m == NULL || m->st != ST_PEND)
            return TECS_OK;
        if (c->init) {
            check_init(I, c->init, c->id);
            m_birth(m, c->mask, c->init->vmask, c->init->val);
        } else {
            m_birth(m, c->mask, c->vmask, c->val);
        }
        return TECS_OK;
    case Q_DESTROY:
        return m ? m_destroy(I, m) : TECS_OK;
    case Q_PAIR:
        return mr_apply(I, c);
    case Q_CLONE: {
        if (m == NULL || m->st != ST_PEND)
            return TECS_OK;
        const ment *src = mi_find(I, c->tgt);
        if (src == NULL || src->st != ST_ALIVE)
            m_kill(I, m);               /* its source died: the birth is cancelled */
        else
            m_clone(I, c->tgt, c->id);
        return TECS_OK;
    }
    case Q_INST: {
        if (m == NULL || m->st != ST_PEND)
            return TECS_OK;
        const ment *src = mi_find(I, c->tgt);
        if (src == NULL || src->st != ST_ALIVE) {
            m_kill(I, m);               /* its prefab died: the birth is cancelled */
            return TECS_OK;
        }
        if (!src->prefab) {
            m_kill(I, m);               /* no prefab any more: dropped */
            return TECS_EINVAL;
        }
        mr_instantiate(I, c->tgt, &c->id, 1, true);
        return TECS_OK;
    }
    case Q_ADD:
    case Q_REMOVE:
    case Q_SET:
        if (c->comp >= NC)
            return m_apply_sparse(m, alive, c);
        break;
    }
    switch (c->op) {
    case Q_ADD:
        if (alive && (m->mask >> c->comp & 1))
            return TECS_EEXIST;
        if (alive)
            m_setval(m, c->comp, default_val(c->comp));
        return TECS_OK;
    case Q_REMOVE:
        if (alive && !(m->mask >> c->comp & 1))
            return TECS_ENOENT;
        if (alive)
            m->mask &= ~(1u << c->comp);
        return TECS_OK;
    case Q_SET:
        if (alive)
            m_setval(m, c->comp, c->val[c->comp]);
        return TECS_OK;
    case Q_ENABLE:
    case Q_DISABLE:
        if (!alive)
            return TECS_OK;
        if (!(m->mask >> c->comp & 1))
            return TECS_ENOENT;
        m->off = c->op == Q_DISABLE ? m->off | 1u << c->comp : m->off & ~(1u << c->comp);
        return TECS_OK;
    }
    return TECS_OK;
}

void m_flush(interp *I)
{
    if (I->ndq == 0)
        return;                 /* nothing queued: no remove flag is set */
    for (int32_t i = 0; i < I->ne; i++)
        I->e[i].rmq = false;
    for (int32_t i = 0; i < I->ndq; i++) {
        mcmd c = I->dq[i];
        int err = m_apply(I, &c);
        if (err != TECS_OK && I->mdrops++ == 0)
            I->mdrop_err = err;
    }
    I->ndq = 0;
}

/* The last error is the report of a flush or apply that dropped queued
** changes (what a successful call leaves then); noted for mi_check_drops. */
bool mi_drop_report(interp *I)
{
    const char *msg = tecs_last_error_msg(I->w);
    if (tecs_dropped_changes(I->w) <= 0 || (strncmp(msg, "the flush dropped ", 18) != 0 &&
                                           strncmp(msg, "the apply dropped ", 18) != 0 &&
                                           strncmp(msg, "the run dropped ", 16) != 0))
        return false;
    I->ldrops = tecs_dropped_changes(I->w);
    I->ldrop_err = (int)tecs_last_error(I->w);
    return true;
}

/* After a step: the drops the model made equal those the library reported
** (through a last error, else through tecs_dropped_changes). A flush that
** ran out of memory is finished by later ones, each counting its own. */
void mi_check_drops(interp *I)
{
    if ((I->mdrops > 0 || I->ldrops >= 0) && !mi_injected(I)) {
        int32_t lib = I->ldrops >= 0 ? I->ldrops : tecs_dropped_changes(I->w);
        EXPECT(I, lib == I->mdrops && (I->ldrops < 0 || I->ldrop_err == I->mdrop_err),
               "the library dropped %d queued change(s) (%s), the model %d (%s)", (int)lib,
               I->ldrops >= 0 ? tecs_err_name((tecs_err_t)I->ldrop_err) : "-", (int)I->mdrops,
               tecs_err_name((tecs_err_t)I->mdrop_err));
    }
    I->mdrops = 0;
    I->mdrop_err = TECS_OK;
    I->ldrops = -1;
}

/* ---- the world side --------------------------------------------------------- */

/* After an op at depth 0: nothing may stay queued, unless an injected
** failure stopped a flush; then apply the rest now, as the next call would. */
void mi_settle(interp *I)
{
    if (mi_deferred(I))
        return;
    for (int tries = 0; I->w->cmd.deferred.count > 0; tries++) {
        EXPECT(I, mi_injected(I) && tries < 4, "%d queued changes left behind",
               (int)I->w->cmd.deferred.count);
        tecs__flush(I->w);
    }
}

/* The flush at the end of the call ran out of memory (an injected failure):
** what it could not apply stays queued, and the last error says so. */
static bool flush_stopped(interp *I)
{
    return mi_injected(I) && tecs_last_error(I->w) == TECS_ENOMEM && I->w->cmd.deferred.count > 0 &&
           !mi_deferred(I);
}

/* The result of a call the model predicts is `want`: equal, or TECS_ENOMEM
** when an allocation was made to fail. @return true if it is an ENOMEM. */
bool mi_result_is(interp *I, int got, int want, const char *what)
{
    I->cb_errs += got != TECS_OK && I->in_body > 0;
    if (got == want) {
        if (got == TECS_OK && !(I->off & MF_LASTERR) && tecs_last_error(I->w) != TECS_OK &&
            !(I->cb_errs && (I->off & MF_CBERR)) && !mi_drop_report(I) && !flush_stopped(I))
            mi_failf(I, "%s succeeded but the last error is %s (%s)", what,
                  tecs_err_name(tecs_last_error(I->w)), tecs_last_error_msg(I->w));
        return false;
    }
    if (got == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;
        return true;
    }
    mi_failf(I, "%s: got %s, model says %s (%s)", what, tecs_err_name((tecs_err_t)got),
          tecs_err_name((tecs_err_t)want), tecs_last_error_msg(I->w));
    return false;
}

/* For calls returning an id or pointer: 0 means an error, in last_error. */
int mi_got_err(interp *I, bool ok)
{
    return ok ? TECS_OK : (int)tecs_last_error(I->w);
}

static tecs_comp_t pick_comp(interp *I, uint8_t x, int *ci)
{
    *ci = x % NC;
    if (x % 32 == 31) {
        *ci = -1;
        return x & 64 ? 0 : UNKNOWN_COMP;
    }
    return I->cid[*ci];
}

tecs_comp_t mi_pick_comp(interp *I, uint8_t x, int *ci)
{
    return pick_comp(I, x, ci);
}

tecs_entity_t mi_pick_id(interp *I, uint32_t z)
{
    switch (z & 15) {
    case 0:
        return I->ndead ? I->dead[(z >> 4) % (I->ndead < NDEAD ? I->ndead : NDEAD)] : 0;
    case 1:
        return tecs__make_id((z >> 8) & 0x3ff, (z >> 4) & 7);
    case 2:
        return (z >> 4) & 1 ? 0 : ~(tecs_entity_t)0;
    case 3:
    case 4:
    case 5:                     /* the newest: "new, then set" is the usual run */
        return I->last;
    default:
        return I->ne ? I->e[(z >> 4) % (uint32_t)I->ne].id : 0;
    }
}

/* The archetype of mask, asking with the ids in an order chosen by seed. */
tecs_archetype_t *mi_get_arch(interp *I, uint32_t mask, uint32_t seed)
{
    tecs_comp_t ids[NC];
    int32_t n = 0;
    for (int c = 0; c < NC; c++)
        if (mask >> c & 1)
            ids[n++] = I->cid[c];
    for (int32_t i = n - 1; i > 0; i--) {
        seed = (uint32_t)mi_mix(seed);
        int32_t j = (int32_t)(seed % (uint32_t)(i + 1));
        tecs_comp_t t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    tecs_archetype_t *a = tecs_archetype_get(I->w, n, ids);
    if (a == NULL)
        mi_result_is(I, mi_got_err(I, false), TECS_OK, "tecs_archetype_get");
    return a;
}

/* ---- checks ----------------------------------------------------------------- */

bool m_term_has(const mquery *q, int32_t t, const ment *m)
{
    int c = q->ci[t];
    if (c == CI_PREFAB)
        return m->prefab;
    if (c >= CI_INHERIT)
        return mr_holder(q->I, m, c - CI_INHERIT) != NULL;
    if (c >= CI_PAIR)
        return mr_term_has(q->I, &q->t[t], c, m->id);
    if (c >= NC)
        return m->smask >> (c - NC) & 1;
    if (!(m->mask >> c & 1))
        return false;
    if (!(TOG_MASK >> c & 1) || q->t[t].toggle == TECS_TOGGLE_ANY)
        return true;
    return (m->off >> c & 1) == (q->t[t].toggle == TECS_TOGGLE_DISABLED);
}

bool m_match(const mquery *q, const ment *m)
{
    bool any = false, has_any = false, shown = !m->prefab;
    for (int32_t t = 0; t < q->nt && !shown; t++)
        shown = q->ci[t] == CI_PREFAB && q->t[t].oper != TECS_NONE;
    if (!shown)
        return false;   /* a prefab: only for a query that names the tag */
    for (int32_t t = 0; t < q->nt; t++) {
        bool present = m_term_has(q, t, m);
        switch (q->t[t].oper) {
        case TECS_WITH:
            if (!present)
                return false;
            break;
        case TECS_ANY:
            has_any = true;
            any = any || present;
            break;
        case TECS_NONE:
            if (present)
                return false;
            break;
        default:
            break;
        }
    }
    return !has_any || any;
}

/* One chunk of an iteration: every row a matching live entity, every field
** what the model says. */
void mi_check_chunk(interp *I, const tecs_iter_t *it, const mquery *q)
{
    for (int32_t r = 0; r < it->count; r++) {
        ment *m = mi_find(I, it->entities[r]);
        EXPECT(I, m && m->st == ST_ALIVE && m_match(q, m),
               "iteration hands out entity %llx that does not match",
               (unsigned long long)it->entities[r]);
        for (int32_t t = 0; t < q->nt; t++) {
            int c = q->ci[t];
            bool present = q->t[t].oper != TECS_NONE && m_term_has(q, t, m);
            if (c >= CI_INHERIT) {      /* its own value (a column) or its base's */
                int cc = c - CI_INHERIT;
                const ment *h = present ? mr_holder(I, m, cc) : NULL;
                const char *f = tecs_field(it, t);
                bool self = tecs_field_is_self(it, t);
                EXPECT(I, tecs_field_is_set(it, t) == present, "field_is_set of term %d", t);
                bool data = h && csize[cc] && q->t[t].access != TECS_FILTER;
                EXPECT(I, !data || self == (h == m), "field_is_self of term %d is %d", t, self);
                EXPECT(I, !h || !csize[cc] || q->t[t].access == TECS_FILTER ||
                              (f && same_val(cc, f + (self ? (size_t)r * csize[cc] : 0),
                                             h->val[cc])),
                       "term %d (%s, inherited) value differs in iteration", t, cname[cc]);
                continue;
            }
            if (c >= CI_PAIR) {         /* a pair's (no data) or the parent's */
                const void *pf = tecs_field(it, t);
                const ment *pm = present && c >= CI_PARENT && c < CI_PREFAB
                                     ? mi_find(I, mr_parent(I, m->id)) : NULL;
                EXPECT(I, tecs_field_is_set(it, t) == present, "field_is_set of term %d", t);
                EXPECT(I, !pm || !csize[c - CI_PARENT] ||
                              (pf && same_val(c - CI_PARENT, pf, pm->val[c - CI_PARENT])),
                       "term %d (%s of the parent) value differs in iteration", t,
                       cname[c - CI_PARENT]);
                continue;
            }
            uint32_t size = c >= NC ? ssize[c - NC] : csize[c];
            bool data = present && size && q->t[t].access != TECS_FILTER;
            void *f = tecs_field(it, t);
            EXPECT(I, tecs_field_is_set(it, t) == present, "field_is_set of term %d", t);
            EXPECT(I, (f != NULL) == data, "field of term %d is %s", t, f ? "set" : "NULL");
            if (data && c >= NC) {
                int64_t v;
                memcpy(&v, f, sizeof v);
                EXPECT(I, it->count == 1 && v == m->sval[c - NC],
                       "term %d (%s) value differs in iteration", t, sname[c - NC]);
            } else if (data) {
                EXPECT(I, same_val(c, (char *)f + (size_t)r * csize[c], m->val[c]),
                       "term %d (%s) value differs in iteration", t, cname[c]);
            }
        }
    }
}

/* Walk a whole query (a nested iteration if one is open) and collect it.
** The result is compared as a set through a per-slot mark. */
static void check_query(interp *I, const mquery *q, bool walk, int32_t flags)
{
    I->checking++;              /* the walk reports writes: hooks run */
    tecs_entity_t *got = malloc(((size_t)I->ne + 17) * sizeof *got);
    if (got == NULL)
        abort();
    int32_t nw = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        if (I->e[i].st == ST_ALIVE && m_match(q, &I->e[i])) {
            I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = I->e[i].id;
            nw++;
        }
    }
    int32_t ng = 0;
    if (walk) {
        tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q, .reverse = flags);
        while (tecs_iter_next(&it)) {
            mi_check_chunk(I, &it, q);
            for (int32_t r = 0; r < it.count && ng < I->ne + 16; r++)
                got[ng++] = it.entities[r];
        }
    } else {
        ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .reverse = flags) }, got, I->ne + 16);
    }
    bool same = ng == nw;
    for (int32_t i = 0; i < ng && same; i++) {
        uint32_t index = TECS_ENTITY_INDEX(got[i]);
        same = (int32_t)index < I->cap_gen && I->mark[index] == got[i];
        if (same)
            I->mark[index] = 0;               /* a second visit fails */
    }
    for (int32_t i = 0; i < I->ne; i++)
        I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = 0;
    free(got);
    I->checking--;
    EXPECT(I, tecs_query_count(q->q) == nw, "query count %d, model %d",
           (int)tecs_query_count(q->q), (int)nw);
    EXPECT(I, ng == nw, "query gives %d entities, model %d", (int)ng, (int)nw);
    EXPECT(I, same, "query result differs from the model");
}

static void check_entity(interp *I, const ment *m)
{
    bool alive = m->st == ST_ALIVE;
    EXPECT(I, tecs_is_alive(I->w, m->id) == alive, "is_alive(%llx) should be %d",
           (unsigned long long)m->id, alive);
    for (int c = 0; c < NC; c++) {
        bool has = alive && (m->mask >> c & 1);
        EXPECT(I, tecs_has(I->w, m->id, I->cid[c]) == has, "has(%s) should be %d", cname[c],
               has);
        EXPECT(I, tecs_is_enabled(I->w, m->id, I->cid[c]) == (has && !(m->off >> c & 1)),
               "is_enabled(%s) should be %d", cname[c], has && !(m->off >> c & 1));
        const ment *h = alive ? mr_holder(I, m, c) : NULL;     /* its own or its base's */
        if (!csize[c] || !h)
            continue;                   /* failing gets are op_get's part */
        const void *p = tecs_get(I->w, m->id, I->cid[c]);
        EXPECT(I, p != NULL, "get(%s) fails", cname[c]);
        EXPECT(I, p && same_val(c, p, h->val[c]), "value of %s differs%s", cname[c],
               h == m ? "" : " (inherited)");
    }
    for (int k = 0; k < NS; k++) {
        bool has = alive && (m->smask >> k & 1);
        EXPECT(I, tecs_has(I->w, m->id, I->sid[k]) == has, "has(%s) should be %d", sname[k],
               has);
        if (!ssize[k] || !has)
            continue;
        const int64_t *p = tecs_get(I->w, m->id, I->sid[k]);
        EXPECT(I, p != NULL && *p == m->sval[k], "value of %s differs", sname[k]);
    }
}

/* Live hooked values the model accounts for. */
static long live_objs(const interp *I)
{
    long n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        n += I->e[i].st == ST_ALIVE && (I->e[i].mask >> C_H & 1);
    for (int32_t i = 0; i < I->nlq; i++)
        n += I->lq[i].op == Q_NEW && (I->lq[i].vmask >> C_H & 1);
    return n + (I->rmask >> C_H & 1);
}

#if TECS_HAS_INDEX
static void check_indexes(interp *I);
#endif
#if TECS_HAS_OBSERVER
static void check_observers(interp *I);
#endif
static void check_all_now(interp *I);

/* The structure checker (R3): TECS_EBUSY while iterations are open (an
** ordered cache may wait for the keys written in one); else TECS_EINVAL
** once for iterations ended twice by copies since the last check; else
** TECS_OK. */
void mi_world_check(interp *I, const char *what)
{
    int err = (int)tecs_world_check(I->w);
    if (I->nits > 0) {
        EXPECT(I, err == TECS_EBUSY, "%s with %d iterations open: %s, not TECS_EBUSY (%s)", what,
               (int)I->nits, tecs_err_name((tecs_err_t)err), tecs_last_error_msg(I->w));
        return;
    }
    if (I->twice > 0) {
        EXPECT(I, err == TECS_EINVAL, "%s after %d iteration(s) ended twice: %s (%s)", what,
               (int)I->twice, tecs_err_name((tecs_err_t)err), tecs_last_error_msg(I->w));
        I->twice = 0;
        return;
    }
    if (err != TECS_OK)
        mi_failf(I, "%s: %s", what, tecs_last_error_msg(I->w));
}

void mi_check_all(interp *I)
{
    I->checking++;
    check_all_now(I);
    I->checking--;
}

static void check_all_now(interp *I)
{
    mi_world_check(I, "world check");
    int32_t alive = 0, delayed = 0, kills = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        check_entity(I, &I->e[i]);
        alive += I->e[i].st == ST_ALIVE;
        delayed += I->e[i].st == ST_DELAY;
        kills += I->e[i].st == ST_ALIVE && I->e[i].kill;
    }
    for (int32_t i = 0; i < I->ndead && i < NDEAD; i++)
        EXPECT(I, !tecs_is_alive(I->w, I->dead[i]), "a dead id is alive");
    EXPECT(I, tecs_world_entity_count(I->w) == alive, "entity count %d, model %d",
           (int)tecs_world_entity_count(I->w), (int)alive);
    EXPECT(I, tecs_delayed_new_count(I->w) == delayed, "pending news %d, model %d",
           (int)tecs_delayed_new_count(I->w), (int)delayed);
    EXPECT(I, tecs_delayed_destroy_count(I->w) == kills, "pending kills %d, model %d",
           (int)tecs_delayed_destroy_count(I->w), (int)kills);
    for (int32_t q = 0; q < I->nq; q++)
        check_query(I, &I->qs[q], false, q & 1 ? true : 0);
#if TECS_HAS_INDEX
    check_indexes(I);
#endif
#if TECS_HAS_OBSERVER
    check_observers(I);
#endif
#if TECS_HAS_RESOURCE
    mi_check_resources(I);
#endif
    mr_check(I);
    if (I->ncs)
        mi_check_caches(I);
    EXPECT(I, I->hc.bad == 0 && I->cb_bad == 0, "hook misuse (%ld) or callback saw a dead entity",
           I->hc.bad);
    if (!mi_deferred(I))
        EXPECT(I, hooks_live(&I->hc) == live_objs(I), "%ld live hooked values, model %ld",
               hooks_live(&I->hc), live_objs(I));
}

/* ---- callbacks ---------------------------------------------------------------- */

static void init_fn(tecs_init_t *init, void *ctx)
{
    init_rec *r = ctx;
    interp *I = r->I;
    r->ran = true;
    r->seen = tecs_init_entity(init);
    r->saw_alive = tecs_is_alive(I->w, r->seen);
    for (int c = 0; c < NC; c++) {
        if (!(r->vmask >> c & 1))
            continue;
        void *p = tecs_init_construct(init, I->cid[c]);
        if (p == NULL) {
            r->saw_alive = true;        /* flagged: storage should exist */
            continue;
        }
        if (c == C_H)
            obj_ctor(p, 1, &I->hc);
        mi_fill_val(c, p, r->val[c]);
    }
    if (r->add_tag) {           /* queued: applied after the birth, in call order */
        r->add_err = tecs_add(I->w, r->seen, I->cid[C_T2]);
        r->add_ok = r->add_err == TECS_OK;
        I->cb_errs += !r->add_ok;
        if (r->add_ok)
            mi_push_dq(I, &(mcmd){ .op = Q_ADD, .id = r->seen, .comp = C_T2 });
    }
}

static void kill_fn(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    kill_ctx *k = ctx;
    interp *I = k->I;
    I->cb_bad += !tecs_is_alive(w, e);
    if (k->mode == 2 && I->nborn < 256) {
        I->born[I->nborn] = tecs_new(w);
        I->cb_errs += I->born[I->nborn++] == 0;
    }
    if (k->mode == 3)
        I->cb_errs += tecs_destroy(w, e) != TECS_OK;
}

/* ---- operations ---------------------------------------------------------------- */

/* A new id from a creating call, pending if deferred. */
static ment *took(interp *I, tecs_entity_t id, uint32_t mask)
{
    return m_add_ent(I, id, mi_deferred(I) ? ST_PEND : ST_ALIVE, mask);
}

static void op_new(interp *I, const m_op *op)
{
    (void)op;
    if (I->ne >= MAXE)
        return;
    tecs_entity_t id = tecs_new(I->w);
    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_new"))
        return;
    took(I, id, 0);
    if (mi_deferred(I))
        mi_push_dq(I, &(mcmd){ .op = Q_NEW, .id = id });
}

static void op_new_in(interp *I, const m_op *op)
{
    if (I->ne >= MAXE)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a == NULL)
        return;
    tecs_entity_t id = tecs_new_in(I->w, a);
    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_new_in"))
        return;
    took(I, id, mi_deferred(I) ? 0 : op->x);
    if (mi_deferred(I))
        mi_push_dq(I, &(mcmd){ .op = Q_NEW, .id = id, .mask = op->x });
}

static void op_new_with(interp *I, const m_op *op)
{
    if (I->ne >= MAXE)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a == NULL)
        return;
    init_rec *r = calloc(1, sizeof *r);
    if (r == NULL)
        abort();
    *r = (init_rec){ .next = I->inits, .I = I, .vmask = op->y & op->x & DATA_MASK,
                     .add_tag = op->y >> 8 & 1 };
    I->inits = r;
    for (int c = 0; c < NC; c++)
        r->val[c] = mkval(op->z, (uint32_t)c);
    tecs_entity_t id = tecs_new_with(I->w, a, init_fn, r);
    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_new_with"))
        return;
    if (mi_deferred(I)) {
        took(I, id, 0);
        mi_push_dq(I, &(mcmd){ .op = Q_NEW, .id = id, .mask = op->x, .init = r });
        return;
    }
    check_init(I, r, id);
    ment *m = took(I, id, 0);
    m_birth(m, op->x, r->vmask, r->val);
}

static void op_new_bulk(interp *I, const m_op *op)
{
    int32_t n = op->y % 64 == 63 ? 300 : op->y % 20;
    if (I->ne + n > MAXE)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a == NULL)
        return;
    uint32_t vmask = op->z & op->x & DATA_MASK;
    bool bad = (op->z >> 28) == 15 && op->x != 0xff;
    tecs_value_t vals[NC + 1];
    unsigned char *buf[NC] = { 0 };
    int32_t nv = 0;
    for (int c = 0; c < NC; c++) {
        if (!(vmask >> c & 1))
            continue;
        buf[c] = malloc((size_t)n * csize[c] + 1);
        for (int32_t k = 0; k < n; k++)
            mi_fill_val(c, buf[c] + (size_t)k * csize[c], mkval(op->z + (uint32_t)k, (uint32_t)c));
        vals[nv++] = (tecs_value_t){ I->cid[c], buf[c] };
    }
    if (bad) {
        int c = 0;
        while (op->x >> c & 1)
            c++;
        vals[nv++] = (tecs_value_t){ I->cid[c], &I->hc };
    }
    tecs_entity_t *out = malloc(((size_t)n + 1) * sizeof *out);
    int err = tecs_new_bulk(I->w, a, n, out, nv, vals);
    for (int c = 0; c < NC; c++)
        free(buf[c]);
    if (!mi_result_is(I, err, bad ? TECS_ENOCOMP : TECS_OK, "tecs_new_bulk") && !bad) {
        for (int32_t k = 0; k < n; k++) {
            mcmd c = { .op = Q_NEW, .id = out[k], .mask = op->x, .vmask = vmask };
            for (int ci = 0; ci < NC; ci++)
                c.val[ci] = mkval(op->z + (uint32_t)k, (uint32_t)ci);
            ment *m = took(I, out[k], 0);
            if (mi_deferred(I))
                mi_push_dq(I, &c);
            else
                m_birth(m, c.mask, c.vmask, c.val);
        }
    }
    free(out);
}

/* tecs_clone of a random entity, or (y % 4 == 3) tecs_clone_bulk of up to
** 19, directly or queued: queued, the clone copies src as it is when the
** queue applies. */
static void op_clone(interp *I, const m_op *op)
{
    bool bulk = op->y % 4 == 3;
    int32_t n = bulk ? (int32_t)(op->y >> 2) % 20 : 1;
    if (I->ne + n > MAXE)
        return;
    tecs_entity_t src = mi_pick_id(I, op->z), out[20];
    const ment *m = mi_find(I, src);
    bool ok = m && (m->st == ST_ALIVE || (m->st == ST_PEND && mi_deferred(I)));
    int err;
    if (bulk) {
        err = tecs_clone_bulk(I->w, src, n, out);
    } else {
        out[0] = tecs_clone(I->w, src);
        err = mi_got_err(I, out[0] != 0);
    }
    if (mi_result_is(I, err, ok ? TECS_OK : TECS_EDEAD, bulk ? "tecs_clone_bulk" : "tecs_clone") ||
        !ok)
        return;
    for (int32_t k = 0; k < n; k++) {
        took(I, out[k], 0);
        if (mi_deferred(I))
            mi_push_dq(I, &(mcmd){ .op = Q_CLONE, .id = out[k], .tgt = src });
        else
            m_clone(I, src, out[k]);
    }
}

#if TECS_HAS_RELATION
/* tecs_instantiate of a random entity, or (y % 4 == 3) tecs_instantiate_bulk
** of up to 7, directly or queued: queued, the instance copies the prefab
** and its subtree as they are when the queue applies. */
static void op_instantiate(interp *I, const m_op *op)
{
    bool bulk = op->y % 4 == 3;
    int32_t n = bulk ? (int32_t)(op->y >> 2) % 8 : 1;
    tecs_entity_t src = mi_pick_id(I, op->z), out[8];
    for (int32_t k = 0; (op->x & 1) && k < I->ne; k++) {    /* a prefab, if any */
        const ment *p = &I->e[(op->z + (uint32_t)k) % (uint32_t)I->ne];
        if (p->st == ST_ALIVE && p->prefab) {
            src = p->id;
            break;
        }
    }
    const ment *m = mi_find(I, src);
    if (m && m->st == ST_ALIVE && I->ne + n * mr_subtree_size(I, src) > MAXE)
        return;
    if (I->ne + n > MAXE)
        return;
    bool pend = m && m->st == ST_PEND && mi_deferred(I);
    int want = m && m->st == ST_ALIVE ? (m->prefab ? TECS_OK : TECS_EINVAL)
             : pend ? TECS_OK : TECS_EDEAD;
    int err;
    if (bulk) {
        err = tecs_instantiate_bulk(I->w, src, n, out);
    } else {
        out[0] = tecs_instantiate(I->w, src);
        err = mi_got_err(I, out[0] != 0);
    }
    if (mi_result_is(I, err, want, bulk ? "tecs_instantiate_bulk" : "tecs_instantiate") ||
        want != TECS_OK)
        return;
    for (int32_t k = 0; k < n; k++) {
        took(I, out[k], 0);
        if (mi_deferred(I))
            mi_push_dq(I, &(mcmd){ .op = Q_INST, .id = out[k], .tgt = src });
    }
    if (!mi_deferred(I) && n > 0)
        mr_instantiate(I, src, out, n, false);
}
#endif

static void op_destroy(interp *I, const m_op *op)
{
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want = !m ? TECS_EDEAD : !mi_deferred(I) && mr_refused(I, m) ? TECS_EBUSY : TECS_OK;
    if (mi_result_is(I, tecs_destroy(I->w, id), want, "tecs_destroy") || want != TECS_OK)
        return;
    if (mi_deferred(I))
        mi_push_dq(I, &(mcmd){ .op = Q_DESTROY, .id = id });
    else
        m_destroy(I, m);
}

/* The prediction for add / remove while deferred. */
static int defer_want(int ci, const ment *m)
{
    if (ci < 0)
        return TECS_ENOCOMP;
    return m && m->st != ST_DELAY ? TECS_OK : TECS_EDEAD;
}

static void op_add(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want;
    if (mi_deferred(I))
        want = defer_want(ci, m);
    else if (!m || m->st != ST_ALIVE)
        want = TECS_EDEAD;
    else
        want = ci < 0 ? TECS_ENOCOMP : (m->mask >> ci & 1) ? TECS_EEXIST : TECS_OK;
    if (mi_result_is(I, tecs_add(I->w, id, c), want, "tecs_add") || want != TECS_OK)
        return;
    if (mi_deferred(I))
        mi_push_dq(I, &(mcmd){ .op = Q_ADD, .id = id, .comp = ci });
    else
        m_setval(m, ci, default_val(ci));
}

static void op_remove(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want;
    if (mi_deferred(I))
        want = defer_want(ci, m);
    else if (!m || m->st != ST_ALIVE)
        want = TECS_EDEAD;
    else
        want = ci < 0 ? TECS_ENOCOMP : (m->mask >> ci & 1) ? TECS_OK : TECS_ENOENT;
    if (mi_result_is(I, tecs_remove(I->w, id, c), want, "tecs_remove") || want != TECS_OK)
        return;
    if (mi_deferred(I)) {
        mi_push_dq(I, &(mcmd){ .op = Q_REMOVE, .id = id, .comp = ci });
        m->rmq = m->st == ST_ALIVE;   /* a later set queues behind it */
    } else
        m->mask &= ~(1u << ci);
}

/* tecs_enable: at once if the entity has the component and no remove of
** it waits; while deferred otherwise, queued behind the queued changes. */
static void op_enable(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    bool on = op->y & 1, alive = m && m->st == ST_ALIVE;
    bool tog = ci >= 0 && (TOG_MASK >> ci & 1);
    bool now = !mi_deferred(I) || (alive && !m->rmq && tog && (m->mask >> ci & 1));
    int want;
    if (now)
        want = !alive ? TECS_EDEAD : ci < 0 ? TECS_ENOCOMP : !tog ? TECS_EINVAL
             : !(m->mask >> ci & 1) ? TECS_ENOENT : TECS_OK;
    else
        want = ci < 0 ? TECS_ENOCOMP : !tog ? TECS_EINVAL : defer_want(ci, m);
    if (mi_result_is(I, tecs_enable(I->w, id, c, on), want, "tecs_enable") || want != TECS_OK)
        return;
    if (now)
        m->off = on ? m->off & ~(1u << ci) : m->off | 1u << ci;
    else
        mi_push_dq(I, &(mcmd){ .op = on ? Q_ENABLE : Q_DISABLE, .id = id, .comp = ci });
}

static bool writes_pending(const interp *I);

static void op_set(interp *I, const m_op *op)
{
    if (writes_pending(I))
        return;
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int64_t v = mkval(op->z, op->y);
    unsigned char buf[64];
    bool null = op->y % 32 == 0;
    if (ci >= 0)
        mi_fill_val(ci, buf, v);
    bool has = ci >= 0 && m && m->st == ST_ALIVE && (m->mask >> ci & 1) &&
               !(m->rmq && mi_deferred(I));
    int want;
    if (has)
        want = csize[ci] && null ? TECS_EINVAL : TECS_OK;
    else if (ci < 0)
        want = TECS_ENOCOMP;
    else if (null && csize[ci])
        want = TECS_EINVAL;
    else if (mi_deferred(I))
        want = m && m->st != ST_DELAY ? TECS_OK : TECS_EDEAD;
    else
        want = m && m->st == ST_ALIVE ? TECS_OK : TECS_EDEAD;
    if (mi_result_is(I, tecs_set(I->w, id, c, null ? NULL : buf), want, "tecs_set") ||
        want != TECS_OK)
        return;
    if (mi_deferred(I) && !has) {
        mcmd q = { .op = Q_SET, .id = id, .comp = ci };
        q.val[ci] = v;
        mi_push_dq(I, &q);
    } else {
        m_setval(m, ci, v);
    }
    I->keys_written = true;
}

static void op_get(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    bool alive = m && m->st == ST_ALIVE;
    int want = !alive ? TECS_EDEAD : ci < 0 ? TECS_ENOCOMP
             : !(m->mask >> ci & 1) ? TECS_ENOENT : csize[ci] ? TECS_OK : TECS_EINVAL;
    void *p = tecs_get_mut(I->w, id, c);
    EXPECT(I, mi_got_err(I, p != NULL) == want, "tecs_get: got %s, model says %s",
           tecs_err_name((tecs_err_t)mi_got_err(I, p != NULL)), tecs_err_name((tecs_err_t)want));
    EXPECT(I, tecs_has(I->w, id, c) == (alive && ci >= 0 && (m->mask >> ci & 1)), "tecs_has");
    EXPECT(I, tecs_is_alive(I->w, id) == alive, "tecs_is_alive");
    if (want == TECS_ENOENT && csize[ci]) {     /* a read may find its base's */
        const ment *h = mr_holder(I, m, ci);
        const void *g = tecs_get(I->w, id, c);
        EXPECT(I, (g != NULL) == (h != NULL) && (!g || same_val(ci, g, h->val[ci])),
               "tecs_get of %s not its own: %s, the model %s", cname[ci], g ? "a value" : "NULL",
               h ? "its base's" : "none");
    }
    if (p == NULL)
        return;
    EXPECT(I, (I->off & MF_LASTERR) || tecs_last_error(I->w) == TECS_OK || mi_drop_report(I),
           "tecs_get_mut succeeded but the last error is %s", tecs_err_name(tecs_last_error(I->w)));
    EXPECT(I, same_val(ci, p, m->val[ci]), "tecs_get: value of %s differs", cname[ci]);
    if ((op->y & 1) && !writes_pending(I)) {    /* write through the pointer */
        int64_t v = mkval(op->z, op->y);
        if (ci == C_H)
            ((Obj *)p)->value = (int32_t)v;
        else
            mi_fill_val(ci, p, v);
        m->val[ci] = v;
        mi_result_is(I, tecs_modified(I->w, id, c), TECS_OK, "tecs_modified");
        I->keys_written = true;
    }
}

/* Create a query of nt terms drawn from z; with refuse_all (a lifecycle
** hook) only a valid one, which must be refused. */
void mi_query_new(interp *I, int32_t nt, uint32_t z, bool refuse_all)
{
    mquery q = { .nt = nt };
    int want = TECS_OK;
    for (int32_t t = 0; t < q.nt; t++, z = (uint32_t)mi_mix(z)) {
        q.ci[t] = (int)(z % NC);
        q.t[t] = (tecs_term_t){ .comp = I->cid[q.ci[t]], .oper = (tecs_oper_t)(z >> 4 & 3),
                                .access = (tecs_access_t)((z >> 6) % 3) };
        /* Toggle terms of the enableable components: mostly the default;
        ** rarely DISABLED of another one, refused. */
        uint32_t tg = z >> 9 & 7;
        if (t > 0 && (z >> 24 & 3) == 0)
            mr_pair_term(I, &q, t, (uint32_t)mi_mix(z));
        if (q.ci[t] >= CI_PAIR) {
            /* a pair term, or one read from the parent */
        } else if ((z >> 18 & 7) == 0) {        /* a sparse component's term */
            q.ci[t] = NC + (int)(z >> 21 & 1);
            q.t[t].comp = I->sid[q.ci[t] - NC];
        } else if (TOG_MASK >> q.ci[t] & 1) {
            q.t[t].toggle = tg < 5 ? TECS_TOGGLE_ENABLED : tg == 5 ? TECS_TOGGLE_ANY
                                                                  : TECS_TOGGLE_DISABLED;
        } else if ((z >> 12 & 63) == 0) {
            q.t[t].toggle = TECS_TOGGLE_DISABLED;
            want = TECS_EINVAL;
        }
        for (int32_t u = 0; u < t && want == TECS_OK; u++)
            if (q.ci[u] == q.ci[t] || q.ci[u] == q.ci[t] - CI_INHERIT ||
                q.ci[t] == q.ci[u] - CI_INHERIT)    /* own and inherited: one component */
                want = TECS_EINVAL;
    }
    if (refuse_all && want != TECS_OK)
        return;
    q.q = tecs_query_new(I->w, &(tecs_query_desc_t){ .terms = q.t, .term_count = q.nt });
    if (mi_result_is(I, mi_got_err(I, q.q != NULL), refuse_all ? TECS_EBUSY : want,
                     "tecs_query_new") ||
        q.q == NULL)
        return;
    I->qs[I->nq++] = q;
}

static void op_query_new(interp *I, const m_op *op)
{
    if (I->nq < MAXQ)
        mi_query_new(I, 1 + op->x % 5, op->z, false);
}

/* Is iteration i open for a callback running now: 1 yes, 2 maybe. The
** call that ends the only open iteration reports its last writes while it
** is open, then closes it and applies what was queued; a callback then
** may run in either part. */
int mi_it_open(const interp *I, int32_t i)
{
    return I->its[i].ending && I->nits == 1 ? 2 : 1;
}

/* Is query qi iterated: 0 no, 1 yes, 2 maybe (mi_it_open). */
int mi_iterated(const interp *I, int32_t qi)
{
    int busy = 0;
    for (int32_t i = 0; i < I->nits; i++)
        if (I->its[i].qi == qi && (busy == 0 || mi_it_open(I, i) == 1))
            busy = mi_it_open(I, i);
    return busy;
}

/* The result a free must have: TECS_EBUSY when busy (1) or refused
** everywhere here, TECS_OK when not busy (0), either when maybe (2).
** @return true if freed. */
bool mi_free_result(int busy, bool refuse_all, int got, int *want)
{
    *want = busy == 1 || refuse_all ? TECS_EBUSY : TECS_OK;
    if (busy == 2 && !refuse_all && got == TECS_EBUSY)
        *want = TECS_EBUSY;
    return *want == TECS_OK;
}

/* Does a cache use q: 0 no, 1 yes, 2 maybe. A cache freed in a cache
** callback is freed when the delivery of cache events ends: until then it
** uses its query, and a later cache callback may run in the same delivery
** or in another. */
static int cache_uses(const interp *I, const tecs_query_t *q)
{
    for (int32_t k = 0; k < I->ncs; k++)
        if (I->cs[k]->q == q)
            return 1;
    for (int32_t k = 0; k < I->ndoomed; k++)
        if (I->doomed_q[k] == q && I->in_body > 0 && I->cur_kind == CB_CACHE)
            return 2;
    return 0;
}

/* Free query qi, or be refused (TECS_EBUSY) while it is iterated or a cache
** uses it. Frees are checked through the last error (R4). Without the
** "busy" feature a busy query is left alone. @return false if skipped. */
bool mi_query_free(interp *I, int32_t qi, bool refuse_all)
{
    int used = cache_uses(I, I->qs[qi].q), iterated = mi_iterated(I, qi);
    if (I->sys_q == I->qs[qi].q)
        used = 1;
    for (int32_t k = 0; k < I->npar_q; k++)
        used = I->par_q[k] == I->qs[qi].q ? 1 : used;
    if (I->split_q == I->qs[qi].q && !I->w->cmd.applying && used == 0)
        used = 2;
    int busy = used == 1 || iterated == 1 ? 1 : used > iterated ? used : iterated;
    if (busy && (I->off & MF_BUSY) && !refuse_all)
        return false;
    tecs_clear_error(I->w);
    int ret = (int)tecs_query_free(I->qs[qi].q), want;
    mi_free_result(busy, refuse_all, ret, &want);
    int got = (int)tecs_last_error(I->w);
    I->cb_errs += got != TECS_OK && I->in_body > 0;
    if (got != want || ret != want)
        mi_failf(I, "tecs_query_free%s: returned %s, last error %s, model says %s",
                 busy ? " of a busy query" : "", tecs_err_name((tecs_err_t)ret),
                 tecs_err_name((tecs_err_t)got), tecs_err_name((tecs_err_t)want));
    if (want != TECS_OK)
        return true;
    I->qs[qi] = I->qs[--I->nq];
    for (int32_t i = 0; i < I->nits; i++)
        if (I->its[i].qi == I->nq)
            I->its[i].qi = qi;
    return true;
}

static void op_query_free(interp *I, const m_op *op)
{
    if (I->nq == 0)
        return;
    mi_query_free(I, (int32_t)(op->z % (uint32_t)I->nq), false);
}

static void op_query_check(interp *I, const m_op *op)
{
    if (I->nq)
        check_query(I, &I->qs[op->z % (uint32_t)I->nq], true, op->x & 1);
}

/* Rows written in an open iteration are not reported yet: while an
** ordered cache exists, no other value is written meanwhile (the cache
** places a changed entity among values it has not been told of). */
static bool writes_pending(const interp *I)
{
    for (int32_t k = 0; I->ncs > 0 && k < I->nits; k++)
        if (I->its[k].wrote)
            return true;
    return false;
}

/* An iteration ended: what it owns goes; after the outermost, the library
** flushed, so does the model. */
void mi_iter_closed(interp *I)
{
    I->nits--;
    free(I->its[I->nits].order);
    I->its[I->nits].order = NULL;
    mi_filter_free(I->its[I->nits].fl);
    I->its[I->nits].fl = NULL;
    if (mi_deferred(I))
        return;
    mi_settle(I);
    m_flush(I);
}

/* Write new values through a write term with data in this chunk (a
** cache's key term first, else the first), as a system would; indexes,
** hooks and caches learn of it when the iterator leaves the rows. */
static void write_chunk(interp *I, int32_t k, uint32_t seed)
{
    if (writes_pending(I))
        return;
    tecs_iter_t *it = &I->its[k].it;
    const mquery *q = &I->qs[I->its[k].qi];
    int prefer = I->its[k].kind == IT_CACHE ? I->its[k].c->key : -1;
    for (int pass = prefer >= 0 ? 0 : 1; pass < 2; pass++) {
        for (int32_t t = 0; t < q->nt; t++) {
            int c = q->ci[t];
            char *f = tecs_field(it, t);
            if (f == NULL || q->t[t].access != TECS_WRITE || c == C_H || c >= NC ||
                (!pass && c != prefer))
                continue;
            for (int32_t r = 0; r < it->count; r++) {
                ment *m = mi_find(I, it->entities[r]);
                m->val[c] = mkval(seed, (uint32_t)r);
                mi_fill_val(c, f + (size_t)r * csize[c], m->val[c]);
            }
            I->its[k].wrote = true;
            I->keys_written = true;
            return;
        }
    }
}

/* A cache iteration hands out its members in the cache's order at start,
** but for those a toggle term no longer takes (enabling and disabling
** apply at once): the members at the iteration's place that it skips. */
static void skip_untaken(interp *I, int32_t k)
{
    const mquery *q = &I->qs[I->its[k].qi];
    while (I->its[k].pos < I->its[k].norder) {
        const ment *m = mi_find(I, I->its[k].order[I->its[k].pos]);
        if (m && m->st == ST_ALIVE && !m_match(q, m))
            I->its[k].pos++;
        else
            break;
    }
}

/* The rows of the step just taken, against the cache's order. */
static void check_cache_rows(interp *I, int32_t k)
{
    for (int32_t r = 0; r < I->its[k].it.count; r++) {
        skip_untaken(I, k);
        int32_t p = I->its[k].pos++;
        EXPECT(I, p < I->its[k].norder && I->its[k].order[p] == I->its[k].it.entities[r],
               "cache iteration hands out %llx at %d, not the cache's order",
               (unsigned long long)I->its[k].it.entities[r], (int)p);
    }
}

void mi_iter_step(interp *I, uint32_t write)
{
    int32_t k = I->nits - 1;
    tecs_iter_t *it = &I->its[k].it;
    I->its[k].wrote = false;
    I->its[k].ending = true;
    bool more = tecs_iter_next(it);
    I->its[k].ending = false;
    if (more) {
        mi_check_chunk(I, it, &I->qs[I->its[k].qi]);
        if (I->its[k].order)
            check_cache_rows(I, k);
        if (write % 4 == 0)
            write_chunk(I, k, write);
    } else {
        if (I->its[k].order)
            skip_untaken(I, k);         /* members disabled after the last step */
        EXPECT(I, I->its[k].order == NULL || I->its[k].pos == I->its[k].norder,
               "cache iteration ends after %d of %d members", (int)I->its[k].pos,
               (int)I->its[k].norder);
        mi_iter_closed(I);
    }
}

/* Push an iteration opened by the caller; *it is already started. */
int32_t mi_its_push(interp *I, int32_t qi, uint8_t kind)
{
    int32_t k = I->nits++;
    memset(&I->its[k], 0, sizeof I->its[k]);
    I->its[k].qi = qi;
    I->its[k].kind = kind;
    return k;
}

static void op_iter_open(interp *I, const m_op *op)
{
    if (I->nq == 0 || I->nits == MAXIT)
        return;
    int32_t qi = (int32_t)(op->z % (uint32_t)I->nq);
    int32_t k = mi_its_push(I, qi, IT_QUERY);
    I->its[k].it = TECS_ITER(tecs_query_world(I->qs[qi].q), .query = I->qs[qi].q, .reverse = op->x & 1);
    EXPECT(I, tecs_is_deferred(I->w), "an open iteration does not defer");
    mi_iter_step(I, op->y);
}

static void op_iter_step(interp *I, const m_op *op)
{
    if (I->nits)
        mi_iter_step(I, op->y);
}

static void op_iter_close(interp *I, const m_op *op)
{
    (void)op;
    if (I->nits == 0)
        return;
    I->its[I->nits - 1].ending = true;
    tecs_iter_fini(&I->its[I->nits - 1].it);
    mi_iter_closed(I);
}

/* ---- iterating one archetype ------------------------------------------------ */

/* The archetype to iterate: a live entity's (z picks it) when y says so
** and there is one, else mask x; NULL if tecs_archetype_get failed. */
static tecs_archetype_t *arch_pick(interp *I, const m_op *op, uint32_t *mask)
{
    *mask = op->x;
    for (int32_t i = 0, n = I->ne; (op->y & 1) && i < n; i++) {
        const ment *m = &I->e[(op->z + (uint32_t)i) % (uint32_t)n];
        if (m->st == ST_ALIVE) {
            *mask = m->mask;
            break;
        }
    }
    return mi_get_arch(I, *mask, op->z >> 8);
}

/* The terms an archetype iteration has: the archetype's components by id. */
static void arch_terms(interp *I, tecs_archetype_t *a, mquery *q)
{
    const tecs_comp_t *comps;
    q->nt = tecs_archetype_components(a, &comps);
    for (int32_t t = 0; t < q->nt; t++) {
        q->t[t] = (tecs_term_t){ .comp = comps[t], .toggle = TECS_TOGGLE_ANY };
        for (int c = 0; c < NC; c++)
            if (I->cid[c] == comps[t])
                q->ci[t] = c;
    }
}

/* The model's members of the archetype of mask, in the order a forward
** walk visits them: by row, from the records. @return their number. */
static int32_t arch_members(interp *I, uint32_t mask, tecs_entity_t *out)
{
    int32_t n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        if (I->e[i].st == ST_ALIVE && I->e[i].mask == mask && !mr_has_parent(I, I->e[i].id) &&
            !mr_has_base(I, I->e[i].id) && !I->e[i].prefab)
            out[n++] = I->e[i].id;
    for (int32_t i = 1; i < n; i++) {             /* insertion sort by row */
        tecs_entity_t e = out[i];
        uint32_t row = I->w->ei.recs[TECS_ENTITY_INDEX(e)].row;
        int32_t j = i;
        for (; j > 0 && I->w->ei.recs[TECS_ENTITY_INDEX(out[j - 1])].row > row; j--)
            out[j] = out[j - 1];
        out[j] = e;
    }
    return n;
}

/* The order a walk visits the row-ordered members in: forward; the chunk
** iterator in reverse: chunks last to first, rows in memory
** order in each (chunk_rev); each and collect reversed: rows last to first. */
static void arch_order(const interp *I, const tecs_entity_t *want, int32_t n, int32_t flags,
                       bool chunk_rev, tecs_entity_t *out)
{
    int32_t rows = (int32_t)I->w->arch.rows;
    for (int32_t i = 0; i < n; i++) {
        int32_t k = i / rows, later = n - (k + 1) * rows;   /* rows of later chunks */
        int32_t p = !flags ? i : !chunk_rev ? n - 1 - i : (later > 0 ? later : 0) + i % rows;
        out[p] = want[i];
    }
}

typedef struct arch_visit {
    tecs_entity_t *got;
    int32_t n, cap, stop;
} arch_visit;

static bool arch_visit_fn(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)fields;
    arch_visit *v = ctx;
    if (v->n < v->cap)
        v->got[v->n] = e;
    return ++v->n == v->stop;
}

/* Walk one archetype (chunk iterator, each with an early stop, or
** collect; forward or reverse) and compare the entities, their order and
** the fields with the model's. */
static void op_arch_iter(interp *I, const m_op *op)
{
    uint32_t mask;
    tecs_archetype_t *a = arch_pick(I, op, &mask);
    if (a == NULL)
        return;
    tecs_entity_t *want = malloc(((size_t)I->ne + 1) * 2 * sizeof *want);
    tecs_entity_t *got = malloc(((size_t)I->ne + 17) * sizeof *got);
    if (want == NULL || got == NULL)
        abort();
    int32_t n = arch_members(I, mask, want), ng = 0, expect = n;
    int32_t flags = op->y >> 1 & 1 ? true : 0, form = op->y >> 2 & 3;
    bool chunk_rev = false;
    mquery q;
    arch_terms(I, a, &q);
    I->checking++;              /* the walk reports writes: hooks run */
    if (form <= 1) {
        tecs_iter_t it = TECS_ITER(I->w, .archetype = a, .reverse = flags);
        if (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
            I->res->enomem++;
            EXPECT(I, !tecs_iter_next(&it), "a refused archetype iteration hands out rows");
            expect = -1;
        } else {
            mi_result_is(I, tecs_last_error(I->w), TECS_OK, "tecs_iter of an archetype");
            EXPECT(I, tecs_is_deferred(I->w), "an open archetype iteration does not defer");
            while (tecs_iter_next(&it)) {
                mi_check_chunk(I, &it, &q);
                for (int32_t r = 0; r < it.count && ng < I->ne + 16; r++)
                    got[ng++] = it.entities[r];
            }
            chunk_rev = true;
        }
    } else if (form == 2) {
        arch_visit v = { got, 0, I->ne + 16, (int32_t)(op->y >> 4 & 15) };
        int err = (int)tecs_iter_each((tecs_iter_t[]){ TECS_ITER(I->w, .archetype = a, .reverse = flags) }, arch_visit_fn, &v);
        if (err == TECS_ENOMEM && mi_injected(I)) {
            I->res->enomem++;
            expect = -1;
        } else {
            mi_result_is(I, err, TECS_OK, "tecs_iter_each of an archetype");
            ng = v.n;
            if (v.stop > 0 && v.stop < n)
                expect = v.stop;
        }
    } else {
        ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .archetype = a, .reverse = flags) }, got, I->ne + 16);
        if (ng < 0 && tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
            I->res->enomem++;
            expect = -1;
        } else {
            mi_result_is(I, mi_got_err(I, ng >= 0), TECS_OK, "tecs_iter_collect of an archetype");
        }
    }
    I->checking--;
    if (expect >= 0) {
        EXPECT(I, ng == expect, "archetype iteration visits %d entities, model %d", (int)ng,
               (int)expect);
        tecs_entity_t *order = want + n;
        arch_order(I, want, n, flags, chunk_rev, order);
        for (int32_t i = 0; i < ng && ng == expect; i++)
            EXPECT(I, got[i] == order[i], "archetype iteration: entity %d is %llx, model %llx",
                   (int)i, (unsigned long long)got[i], (unsigned long long)order[i]);
    }
    EXPECT(I, tecs_is_deferred(I->w) == mi_deferred(I), "after an archetype iteration");
    free(want);
    free(got);
}

/* Open an iteration of one archetype, make structural changes to its
** entities in the middle of it (queued: the walk still sees every member
** as it was), and end it at the end or early; the model applies them
** when the outermost iteration has ended. */
static void op_arch_iter_change(interp *I, const m_op *op)
{
    if (I->nits == MAXIT)
        return;
    uint32_t mask;
    tecs_archetype_t *a = arch_pick(I, op, &mask);
    if (a == NULL)
        return;
    tecs_entity_t *want = malloc(((size_t)I->ne + 1) * 2 * sizeof *want);
    if (want == NULL)
        abort();
    int32_t n = arch_members(I, mask, want), seen = 0, stop = op->y >> 4 & 31;
    int32_t flags = op->y >> 1 & 1 ? true : 0;
    tecs_entity_t *order = want + n;
    arch_order(I, want, n, flags, true, order);
    mquery q;
    arch_terms(I, a, &q);
    int32_t k = mi_its_push(I, -1, IT_QUERY);   /* no query of the model's */
    I->its[k].it = TECS_ITER(I->w, .archetype = a, .reverse = flags);
    if (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;
        EXPECT(I, !tecs_iter_next(&I->its[k].it), "a refused archetype iteration hands out rows");
        I->nits--;
        free(want);
        return;
    }
    uint32_t z = op->z;
    for (;;) {
        I->checking++;
        I->its[k].ending = true;
        bool more = tecs_iter_next(&I->its[k].it);
        I->its[k].ending = false;
        I->checking--;
        if (!more)
            break;
        const tecs_iter_t *it = &I->its[k].it;
        mi_check_chunk(I, it, &q);
        for (int32_t r = 0; r < it->count; r++, seen++, z = (uint32_t)mi_mix(z)) {
            EXPECT(I, seen < n && it->entities[r] == order[seen],
                   "archetype iteration with changes: row %d differs", (int)seen);
            ment *m = mi_find(I, it->entities[r]);
            int ci = (int)((z >> 3) % NC);
            switch (z % 8) {
            case 0:
                if (mi_result_is(I, tecs_destroy(I->w, m->id), TECS_OK, "tecs_destroy"))
                    break;
                mi_push_dq(I, &(mcmd){ .op = Q_DESTROY, .id = m->id });
                break;
            case 1:
                if (mi_result_is(I, tecs_add(I->w, m->id, I->cid[ci]), TECS_OK, "tecs_add"))
                    break;
                mi_push_dq(I, &(mcmd){ .op = Q_ADD, .id = m->id, .comp = ci });
                break;
            case 2:
                if (mi_result_is(I, tecs_remove(I->w, m->id, I->cid[ci]), TECS_OK,
                                 "tecs_remove"))
                    break;
                mi_push_dq(I, &(mcmd){ .op = Q_REMOVE, .id = m->id, .comp = ci });
                m->rmq = true;
                break;
            case 3:
                if (I->ne < MAXE) {
                    tecs_entity_t id = tecs_new_in(I->w, a);
                    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_new_in"))
                        break;
                    m_add_ent(I, id, ST_PEND, 0);
                    mi_push_dq(I, &(mcmd){ .op = Q_NEW, .id = id, .mask = mask });
                }
                break;
            default:
                break;
            }
            EXPECT(I, tecs_is_alive(I->w, it->entities[r]), "a change was not queued");
        }
        if (stop > 0 && seen >= stop) {
            I->its[k].ending = true;
            tecs_iter_fini(&I->its[k].it);
            break;
        }
    }
    EXPECT(I, seen == n || (stop > 0 && seen >= stop && seen < n),
           "archetype iteration with changes visits %d of %d", (int)seen, (int)n);
    mi_iter_closed(I);
    EXPECT(I, tecs_is_deferred(I->w) == mi_deferred(I), "after an archetype iteration");
    free(want);
}

/* Queue a delayed birth into a (mask), values for y & mask drawn from z.
** @return true if it was queued. */
bool mi_delay_new(interp *I, tecs_archetype_t *a, uint32_t mask, uint32_t y, uint32_t z)
{
    mcmd c = { .op = Q_NEW, .mask = mask, .vmask = y & mask & DATA_MASK };
    unsigned char buf[NC][64];
    tecs_value_t vals[NC];
    int32_t nv = 0;
    for (int ci = 0; ci < NC; ci++) {
        c.val[ci] = mkval(z, (uint32_t)ci + 100);
        if (c.vmask >> ci & 1) {
            mi_fill_val(ci, buf[ci], c.val[ci]);
            vals[nv++] = (tecs_value_t){ I->cid[ci], buf[ci] };
        }
    }
    tecs_entity_t id = tecs_delayed_new(I->w, a, nv, vals);
    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_delayed_new"))
        return false;
    c.id = id;
    m_add_ent(I, id, ST_DELAY, 0);
    mi_push_cmd(&I->lq, &I->nlq, &I->cap_lq, &c);
    return true;
}

static void op_delay_new(interp *I, const m_op *op)
{
    if (I->ne >= MAXE)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a)
        mi_delay_new(I, a, op->x, op->y, op->z);
}

static void op_delay_destroy(interp *I, const m_op *op)
{
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    bool alive = m && m->st == ST_ALIVE;
    int mode = op->x % 4;
    int err = tecs_delayed_destroy(I->w, id, mode ? kill_fn : NULL, mode ? &I->kctx[mode] : NULL);
    if (mi_result_is(I, err, alive ? TECS_OK : TECS_EDEAD, "tecs_delayed_destroy") || !alive ||
        m->kill)
        return;
    m->kill = true;
    mi_push_cmd(&I->lq, &I->nlq, &I->cap_lq, &(mcmd){ .op = Q_KILL, .id = id, .mode = (uint8_t)mode });
}

/* A delayed birth's initializer (tecs_delayed_new_with): the values of an
** initializer, then, by mode, one change of its own entity, queued (1: add
** T2, or remove it if the archetype has it; 2: destroy it; 3: set B),
** which the model applies right after the birth, as the library does. */
typedef struct dinit {
    init_rec r;                 /* first: freed with the initializers       */
    uint32_t mask;              /* the archetype                            */
    uint8_t mode;
    int64_t setv;               /* mode 3: the value of B                   */
    int change_err;             /* what the change's call returned          */
    bool queued;                /* the change was queued: q applies         */
    mcmd q;
} dinit;

static void dinit_fn(tecs_init_t *init, void *ctx)
{
    dinit *d = ctx;
    interp *I = d->r.I;
    init_fn(init, &d->r);
    tecs_entity_t self = d->r.seen;
    int err = TECS_OK;
    mcmd q = { .id = self };
    if (d->mode == 1 && (d->mask >> C_T2 & 1)) {
        err = tecs_remove(I->w, self, I->cid[C_T2]);
        q.op = Q_REMOVE, q.comp = C_T2;
    } else if (d->mode == 1) {
        err = tecs_add(I->w, self, I->cid[C_T2]);
        q.op = Q_ADD, q.comp = C_T2;
    } else if (d->mode == 2) {
        err = tecs_destroy(I->w, self);
        q.op = Q_DESTROY;
    } else if (d->mode == 3) {
        unsigned char buf[64];
        mi_fill_val(C_B, buf, d->setv);
        err = tecs_set(I->w, self, I->cid[C_B], buf);
        q.op = Q_SET, q.comp = C_B, q.val[C_B] = d->setv;
    }
    d->change_err = err;
    d->queued = d->mode != 0 && err == TECS_OK;
    d->q = q;
    I->cb_errs += err != TECS_OK;
}

/* The birth of a delayed entity the model holds (c, of the delayed queue). */
static void m_delayed_birth(interp *I, ment *m, const mcmd *c)
{
    if (c->init == NULL) {
        m_birth(m, c->mask, c->vmask, c->val);
        return;
    }
    dinit *d = (dinit *)(void *)c->init;
    check_init(I, &d->r, c->id);
    EXPECT(I, d->change_err == TECS_OK || (d->change_err == TECS_ENOMEM && I->alloc.failures),
           "a change inside a delayed birth's initializer: %s",
           tecs_err_name((tecs_err_t)d->change_err));
    m_birth(m, c->mask, d->r.vmask, d->r.val);
    if (!d->queued)
        return;
    int err = m_apply(I, &d->q);
    if (err != TECS_OK && I->mdrops++ == 0)
        I->mdrop_err = err;
}

static void op_delay_new_with(interp *I, const m_op *op)
{
    if (I->ne >= MAXE)
        return;
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a == NULL)
        return;
    bool none = (op->y >> 10 & 3) == 3;           /* fn NULL */
    dinit *d = calloc(1, sizeof *d);
    if (d == NULL)
        abort();
    d->r = (init_rec){ .next = I->inits, .I = I, .vmask = op->y & op->x & DATA_MASK };
    d->mask = op->x;
    d->mode = (uint8_t)(op->y >> 8 & 3);
    d->setv = mkval(op->z, 300);
    I->inits = &d->r;
    for (int c = 0; c < NC; c++)
        d->r.val[c] = mkval(op->z, (uint32_t)c + 200);
    tecs_entity_t id = tecs_delayed_new_with(I->w, a, none ? NULL : dinit_fn, d);
    if (mi_result_is(I, mi_got_err(I, id != 0), TECS_OK, "tecs_delayed_new_with"))
        return;
    m_add_ent(I, id, ST_DELAY, 0);
    mi_push_cmd(&I->lq, &I->nlq, &I->cap_lq,
                &(mcmd){ .op = Q_NEW, .id = id, .mask = op->x, .init = none ? NULL : &d->r });
}

static void apply_run(interp *I, tecs_err_t (*fn)(tecs_world_t *), int pick, const char *what);

/* Apply the delayed commands of kind pick (-1 both) to the model. */
static void m_apply_delayed(interp *I, int pick)
{
    int32_t keep = 0;
    for (int32_t i = 0; i < I->nlq; i++) {
        mcmd c = I->lq[i];
        if (pick >= 0 && c.op != pick) {
            I->lq[keep++] = c;
            continue;
        }
        ment *m = mi_find(I, c.id);
        if (c.op == Q_NEW && m && m->st == ST_DELAY)
            m_delayed_birth(I, m, &c);
        else if (c.op == Q_NEW && c.init)
            EXPECT(I, !c.init->ran, "the initializer of a cancelled birth ran");
        if (c.op != Q_KILL || !m || m->st != ST_ALIVE || !m->kill)
            continue;
        tecs_entity_t id = m->id;
        if (c.mode == 2) {      /* the callback runs before the destroy */
            EXPECT(I, I->born_pos < I->nborn, "a kill callback did not run");
            tecs_entity_t b = I->born[I->born_pos++];
            if (b)
                m_add_ent(I, b, ST_ALIVE, 0);
        }
        m = mi_find(I, id);
        if (m_destroy(I, m) == TECS_OK)
            continue;
        m->kill = false;        /* refused: it lives on, the kill dropped */
        if (I->mdrops++ == 0)
            I->mdrop_err = TECS_EBUSY;
        if (c.mode == 3)        /* its callback's own destroy, queued, too */
            I->mdrops++;
    }
    I->nlq = keep;
    EXPECT(I, I->born_pos == I->nborn, "a kill callback ran that should not have");
    I->nborn = I->born_pos = 0;
}

static void apply_op(interp *I, tecs_err_t (*fn)(tecs_world_t *), int pick, const char *what)
{
    I->in_apply = true;
    apply_run(I, fn, pick, what);
    I->in_apply = false;
}

static void apply_run(interp *I, tecs_err_t (*fn)(tecs_world_t *), int pick, const char *what)
{
    if (mi_deferred(I)) {
        mi_result_is(I, fn(I->w), TECS_EBUSY, what);
        return;
    }
    mi_sync(I);                 /* what calls before it queued (a composite op's) */
    mi_check_drops(I);          /* the apply counts its own drops from zero */
    int err, tries = 0;
    while ((err = fn(I->w)) == TECS_ENOMEM && mi_injected(I) && tries++ < 4)
        continue;
    EXPECT(I, err != TECS_ENOMEM, "%s keeps failing", what);
    mi_settle(I);
    int32_t drops = I->mdrops;
    m_apply_delayed(I, pick);   /* a refused kill is dropped: the apply says so */
    int want = I->mdrops > drops ? I->mdrop_err : TECS_OK;
    if (tries > 0 && err == TECS_OK)
        want = TECS_OK;         /* the drops were the call's that ran out of memory */
    mi_result_is(I, err, want, what);
    if (err != TECS_OK)
        mi_drop_report(I);
}

void op_apply_news(interp *I, const m_op *op)
{
    (void)op;
    apply_op(I, tecs_delayed_apply_new, Q_NEW, "tecs_delayed_apply_new");
}

void op_apply_kills(interp *I, const m_op *op)
{
    (void)op;
    apply_op(I, tecs_delayed_apply_destroy, Q_KILL, "tecs_delayed_apply_destroy");
}

void op_apply_delayed(interp *I, const m_op *op)
{
    (void)op;
    apply_op(I, tecs_delayed_apply, -1, "tecs_delayed_apply");
}

static void op_reserve(interp *I, const m_op *op)
{
    tecs_archetype_t *a = mi_get_arch(I, op->x, op->z);
    if (a)
        mi_result_is(I, tecs_archetype_reserve(I->w, a, op->y % 300), TECS_OK, "reserve");
}

static void op_check(interp *I, const m_op *op)
{
    (void)op;
    mi_check_all(I);
}

#if TECS_HAS_INDEX
/* ---- field indexes and where ------------------------------------------------------ */

/* Indexed fields: A as int32, B as uint64, V's second word as uint32. */
static const struct {
    int comp;
    tecs_key_type_t type;
    size_t offset;
} ifield[3] = { { C_A, TECS_KEY_I32, 0 }, { C_B, TECS_KEY_U64, 0 }, { C_V, TECS_KEY_U32, 4 } };

/* The field's value in a model value, widened to a comparable int64 /
** uint64 pair: signed fields compare as int64, unsigned as uint64. The
** field is read from the component's bytes (mi_fill_val) in the machine's
** byte order, as the library reads it. */
static int64_t field_of(int f, int64_t v)
{
    unsigned char b[64];
    mi_fill_val(ifield[f].comp, b, v);
    const unsigned char *p = b + ifield[f].offset;
    int32_t i32;
    uint32_t u32;
    uint64_t u64;
    switch (f) {
    case 0:
        memcpy(&i32, p, sizeof i32);
        return i32;
    case 1:
        memcpy(&u64, p, sizeof u64);
        return (int64_t)u64;
    default:
        memcpy(&u32, p, sizeof u32);
        return (int64_t)u32;
    }
}

tecs_key_t mi_key_of(int f, int64_t k)
{
    return f == 0 ? tecs_key_int(k) : tecs_key_uint((uint64_t)k);
}

static int cmp_field(int f, int64_t a, int64_t b)
{
    if (f == 0 || f == 2)
        return a < b ? -1 : a > b;
    return (uint64_t)a < (uint64_t)b ? -1 : (uint64_t)a > (uint64_t)b;
}

/* Create an index on field f; want is TECS_OK, or TECS_EBUSY where
** creating is refused. @return it, or NULL. */
static tecs_index_t *index_new(interp *I, int f, bool ordered, bool by_name, int want)
{
    tecs_index_desc_t d = {
        .comp = I->cid[ifield[f].comp], .kind = ordered ? TECS_INDEX_ORDERED : TECS_INDEX_HASH,
        .type = ifield[f].type, .offset = ifield[f].offset };
    if (by_name)                /* the description maps "k" to the same type and offset */
        d = (tecs_index_desc_t){ .comp = d.comp, .kind = d.kind, .field = "k" };
    tecs_index_t *ix = tecs_index_new(I->w, &d);
    if (mi_result_is(I, mi_got_err(I, ix != NULL), want, "tecs_index_new") || ix == NULL)
        return NULL;
    I->ixs[I->nix].ix = ix;
    I->ixs[I->nix].field = f;
    I->ixs[I->nix].ordered = ordered;
    I->nix++;
    return ix;
}

tecs_index_t *mi_index_new(interp *I, int f, bool ordered, int want)
{
    return index_new(I, f, ordered, false, want);
}

tecs_index_t *mi_index_new_by_name(interp *I, int f, bool ordered, int want)
{
    return index_new(I, f, ordered, true, want);
}

static void index_new_op(interp *I, const m_op *op, bool by_name)
{
    if (I->nix == MAXIX || mi_deferred(I))
        return;
    int f = op->x % 3;
    tecs_index_t *ix = index_new(I, f, op->x >> 2 & 1, by_name, TECS_OK);
    if (ix == NULL)
        return;
    int32_t n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        n += I->e[i].st == ST_ALIVE && (I->e[i].mask >> ifield[f].comp & 1);
    EXPECT(I, tecs_index_count(ix) == n, "index count %d, model %d", (int)tecs_index_count(ix),
           (int)n);
}

static void op_index_new(interp *I, const m_op *op)
{
    index_new_op(I, op, false);
}

/* An index made with its field named through the component's description:
** the same index as by type and offset. */
static void op_index_new_by_name(interp *I, const m_op *op)
{
    index_new_op(I, op, true);
}

/* An open iteration over a filter names index k: 0 no, 1 yes, 2 maybe. */
static int index_busy(const interp *I, int32_t k)
{
    int busy = 0;
    for (int32_t i = 0; i < I->nits; i++)
        for (int32_t j = 0; I->its[i].kind == IT_WHERE && j < MAXCOND; j++)
            if (I->its[i].uses[j] == I->ixs[k].ix && (busy == 0 || mi_it_open(I, i) == 1))
                busy = mi_it_open(I, i);
    return busy;
}

/* Free index k: TECS_EBUSY while an iteration over a filter naming it is
** open (or where refuse_all), else TECS_OK. */
void mi_index_free(interp *I, int32_t k, bool refuse_all)
{
    int busy = index_busy(I, k);
    if (busy && (I->off & MF_BUSY) && !refuse_all)
        return;
    int got = (int)tecs_index_free(I->ixs[k].ix), want;
    mi_free_result(busy, refuse_all, got, &want);
    if (mi_result_is(I, got, want, "tecs_index_free") || want)
        return;
    I->ixs[k] = I->ixs[--I->nix];
}

static void op_index_free(interp *I, const m_op *op)
{
    if (I->nix == 0 || (mi_deferred(I) && (I->off & MF_BUSY)))
        return;
    mi_index_free(I, (int32_t)(op->z % (uint32_t)I->nix), false);
}


static bool m_cond(const interp *I, const mcond *cs, int32_t c, const ment *m)
{
    const mcond *d = &cs[c];
    if (d->kind >= 3) {
        bool a = m_cond(I, cs, d->a, m);
        return d->kind == 5 ? !a : d->kind == 3 ? a && m_cond(I, cs, d->b, m)
                                                : a || m_cond(I, cs, d->b, m);
    }
    int f = I->ixs[d->ix].field;
    if (!(m->mask >> ifield[f].comp & 1))
        return false;
    int64_t v = field_of(f, m->val[ifield[f].comp]);
    if (d->kind == 1)
        return cmp_field(f, d->k[0], v) <= 0 && cmp_field(f, v, d->k[1]) <= 0;
    if (d->kind == 2)
        return v == d->k[0] || v == d->k[1] || v == d->k[2];
    int r = cmp_field(f, v, d->k[0]);
    static const int want[6][3] = { { 0, 1, 0 }, { 1, 0, 1 }, { 1, 0, 0 },
                                    { 1, 1, 0 }, { 0, 0, 1 }, { 0, 1, 1 } };
    return want[d->cmp][r + 1];
}

/* A key: mostly a value some entity has, so equality finds something. */
int64_t mi_pick_key(interp *I, int f, uint32_t z)
{
    const ment *m = I->ne ? &I->e[(z >> 3) % (uint32_t)I->ne] : NULL;
    int c = ifield[f].comp;
    int64_t v = m && (z & 7) ? m->val[c] : mkval(z, 7);
    return field_of(f, v);
}

/* Build a random filter on the indexes into both the library and the model. */
int32_t mi_build_filter(interp *I, tecs_filter_t *fl, mcond *cs, uint32_t z, int32_t n)
{
    int32_t made = 0;
    for (int32_t i = 0; i < n; i++, z = (uint32_t)mi_mix(z)) {
        mcond d = { .kind = (int)(z % 6), .ix = (int)((z >> 3) % (uint32_t)I->nix) };
        if (made < 1 && d.kind >= 3)
            d.kind = 0;
        if (made < 2 && (d.kind == 3 || d.kind == 4))
            d.kind = 5;
        bool ordered = I->ixs[d.ix].ordered;
        int f = I->ixs[d.ix].field;
        tecs_index_t *ix = I->ixs[d.ix].ix;
        if (!ordered && d.kind == 1)
            d.kind = 2;
        d.cmp = ordered ? (int)((z >> 6) % 6) : (z >> 6 & 1) ? TECS_NE : TECS_EQ;
        for (int k = 0; k < 3; k++)
            d.k[k] = mi_pick_key(I, f, (uint32_t)mi_mix(z + (uint32_t)k));
        if (d.kind == 1 && cmp_field(f, d.k[0], d.k[1]) > 0 && (z >> 9 & 1)) {
            int64_t t = d.k[0];
            d.k[0] = d.k[1], d.k[1] = t;
        }
        d.a = (int32_t)((z >> 12) % (uint32_t)(made ? made : 1));
        d.b = (int32_t)((z >> 16) % (uint32_t)(made ? made : 1));
        tecs_key_t keys[3] = { mi_key_of(f, d.k[0]), mi_key_of(f, d.k[1]), mi_key_of(f, d.k[2]) };
        tecs_cond_t c;
        switch (d.kind) {
        case 0: c = tecs_filter_cmp(fl, ix, (tecs_cmp_t)d.cmp, keys[0]); break;
        case 1: c = tecs_filter_between(fl, ix, keys[0], keys[1]); break;
        case 2: c = tecs_filter_in(fl, ix, 3, keys); break;
        case 3: c = tecs_filter_and(fl, d.a, d.b); break;
        case 4: c = tecs_filter_or(fl, d.a, d.b); break;
        default: c = tecs_filter_not(fl, d.a); break;
        }
        if (mi_result_is(I, mi_got_err(I, c >= 0), TECS_OK, "tecs_filter_cmp"))
            return -1;
        EXPECT(I, c == made, "condition handle %d, expected %d", (int)c, (int)made);
        cs[made++] = d;
    }
    return made;
}

/* The start of a where op: op's query and a random filter of op's choosing,
** its conditions into cs. @return the filter (NULL: no where now: no index
** or query, a filter refused, or rows written through an open iteration
** not re-keyed yet), *n its conditions (0 or less: it could not be built). */
static tecs_filter_t *where_setup(interp *I, const m_op *op, const mquery **q, mcond *cs,
                                  int32_t *n)
{
    if (I->nix == 0 || I->nq == 0)
        return NULL;
    for (int32_t k = 0; k < I->nits; k++)
        if (I->its[k].wrote)
            return NULL;
    *q = &I->qs[op->y % (uint32_t)I->nq];
    tecs_filter_t *fl = tecs_filter_new(I->w);
    if (mi_result_is(I, mi_got_err(I, fl != NULL), TECS_OK, "tecs_filter_new") || fl == NULL)
        return NULL;
    *n = mi_build_filter(I, fl, cs, op->z, 1 + op->x % 4);
    return fl;
}

/* Are got[0..ng) the nw entities marked in I->mark, each once, in any
** order? Clears the marks. */
static bool marked_are(interp *I, const tecs_entity_t *got, int32_t ng, int32_t nw)
{
    bool same = ng == nw;
    for (int32_t i = 0; i < ng && same; i++) {
        uint32_t index = TECS_ENTITY_INDEX(got[i]);
        same = (int32_t)index < I->cap_gen && I->mark[index] == got[i];
        if (same)
            I->mark[index] = 0;
    }
    for (int32_t i = 0; i < I->ne; i++)
        I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = 0;
    return same;
}

/* Are got[0..ng) the entities the model says match q and condition n - 1
** of cs, in any order? *nw: how many it says. */
static bool where_is_model(interp *I, const mquery *q, const mcond *cs, int32_t n,
                           const tecs_entity_t *got, int32_t ng, int32_t *nw)
{
    *nw = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        if (m->st == ST_ALIVE && m_match(q, m) && (n <= 0 || m_cond(I, cs, n - 1, m))) {
            I->mark[TECS_ENTITY_INDEX(m->id)] = m->id;
            ++*nw;
        }
    }
    return marked_are(I, got, ng, *nw);
}

static void op_where(interp *I, const m_op *op)
{
    const mquery *q;
    mcond cs[MAXCOND];
    int32_t n;
    tecs_filter_t *fl = where_setup(I, op, &q, cs, &n);
    if (fl == NULL)
        return;
    if (n > 0) {
        tecs_entity_t *got = malloc(((size_t)I->ne + 1) * sizeof *got);
        I->checking++;
        int32_t ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, got, I->ne + 1);
        I->checking--;
        if (ng < 0 && mi_result_is(I, mi_got_err(I, false), TECS_OK, "tecs_iter_collect of a where")) {
            free(got);
            tecs_filter_free(fl);
            return;
        }
        int32_t nw;
        bool same = where_is_model(I, q, cs, n, got, ng, &nw);
        free(got);
        const ment *m = I->ne ? &I->e[op->y % (uint32_t)I->ne] : NULL;
        bool t = m && tecs_filter_test(fl, m->id);
        bool tw = m && m->st == ST_ALIVE && m_cond(I, cs, n - 1, m);
        if (m && !t && tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I))
            tw = false;         /* an index rebuild failed: false, and the error says so */
        tecs_filter_free(fl);
        if (!same && getenv("MODEL_DEBUG"))
            for (int32_t i = 0; i < n; i++)
                fprintf(stderr, "  cond %d: kind %d ix %d (field %d, %s) cmp %d keys %lld %lld %lld a %d b %d\n",
                        (int)i, cs[i].kind, cs[i].ix, I->ixs[cs[i].ix].field,
                        I->ixs[cs[i].ix].ordered ? "ordered" : "hash", cs[i].cmp,
                        (long long)cs[i].k[0], (long long)cs[i].k[1], (long long)cs[i].k[2],
                        (int)cs[i].a, (int)cs[i].b);
        EXPECT(I, same, "where gives %d entities, model %d (%d conditions)", (int)ng, (int)nw,
               (int)n);
        EXPECT(I, t == tw, "tecs_filter_test says %d, model %d", t, tw);
        return;
    }
    tecs_filter_free(fl);
}

/* A where walked step by step: its ids are the model's matches, and each
** field holds the value tecs_get reads for that entity, whether the step's
** values are copies (a read-only query's gathered steps) or rows in place. */
static void op_where_values(interp *I, const m_op *op)
{
    const mquery *q;
    mcond cs[MAXCOND];
    int32_t n;
    tecs_filter_t *fl = where_setup(I, op, &q, cs, &n);
    if (fl == NULL)
        return;
    if (n <= 0) {
        tecs_filter_free(fl);
        return;
    }
    tecs_entity_t *got = malloc(((size_t)I->ne + 1) * sizeof *got);
    if (got == NULL)
        abort();
    int32_t ng = 0, bad = 0;
    I->checking++;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl);
    tecs_err_t err = tecs_last_error(I->w);
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++, ng++) {
            tecs_entity_t e = it.entities[i];
            if (ng <= I->ne)
                got[ng] = e;
            for (int32_t t = 0; t < q->nt; t++) {
                size_t size = tecs_component_size(I->w, q->t[t].comp);
                if (it.fields[t] == NULL || size == 0)
                    continue;
                /* A term read from the parent: the parent's value, one for
                ** the step unless the step says otherwise. */
                bool up = q->ci[t] >= CI_PARENT && q->ci[t] < CI_PREFAB;
                const void *v = tecs_get(I->w, up ? mr_parent(I, e) : e, q->t[t].comp);
                size_t at = tecs_field_is_self(&it, t) ? (size_t)i * size : 0;
                bad += v == NULL || memcmp((const char *)it.fields[t] + at, v, size) != 0;
            }
        }
    I->checking--;
    if (err != TECS_OK) {
        mi_result_is(I, err, TECS_OK, "tecs_iter of a where");
    } else {
        int32_t nw;
        bool same = ng <= I->ne && where_is_model(I, q, cs, n, got, ng, &nw);
        EXPECT(I, same, "a where walked by steps gives %d entities (%d conditions)", (int)ng,
               (int)n);
        EXPECT(I, bad == 0, "a where's fields differ from tecs_get in %d values", (int)bad);
    }
    free(got);
    tecs_filter_free(fl);
}

/* ---- spatial searches ---------------------------------------------------------------- */

/* A spatial index on V made for one op: x and y are V's first two words
** as floats, so the model's values (random bits) give points of every
** magnitude, infinite and NaN ones among them, and V's default value
** puts many at (0, 0). The circles are drawn sometimes from a hostile set
** (non-finite, huge, tiny), sometimes about an entity's point. */
static const float near_cells[4] = { 1.0f, 1e-3f, 1e20f, 1e37f };
static const float near_hostile[14] = { 0, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 1, -1, 1e30f,
                                        -1e30f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN,
                                        FLT_MIN };
static const float near_radii[8] = { 0, FLT_TRUE_MIN, 1, 1e3f, 1e20f, 1e30f, FLT_MAX, INFINITY };

/* m's point in the index on V; false if it has no V. */
static bool near_point(const ment *m, float *px, float *py)
{
    if (m->st != ST_ALIVE || !(m->mask >> C_V & 1))
        return false;
    unsigned char b[12];
    mi_fill_val(C_V, b, m->val[C_V]);
    memcpy(px, b, 4);
    memcpy(py, b + 4, 4);
    return true;
}

/* The header's rule for a circle: refused unless the centre is finite and
** the radius neither NaN nor negative; else the points with no NaN
** coordinate whose squared distance, in doubles, is at most r * r. */
static bool near_refused(float x, float y, float r)
{
    return !(x >= -FLT_MAX && x <= FLT_MAX) || !(y >= -FLT_MAX && y <= FLT_MAX) || !(r >= 0);
}

static bool near_holds(const ment *m, float x, float y, float r)
{
    float px, py;
    if (!near_point(m, &px, &py) || px != px || py != py)
        return false;
    double dx = (double)px - x, dy = (double)py - y;
    return dx * dx + dy * dy <= (double)r * r;
}

/* A circle's centre from z: hostile coordinates, an entity's point, or
** random bits. */
static void near_centre(interp *I, uint32_t z, float *x, float *y)
{
    const ment *m = I->ne ? &I->e[(z >> 2) % (uint32_t)I->ne] : NULL;
    uint64_t bits = mi_mix(z);
    switch (z % 4) {
    case 0:
    case 1:
        *x = near_hostile[(z >> 2) % 14], *y = near_hostile[(z >> 6) % 14];
        return;
    case 2:
        if (m == NULL || !near_point(m, x, y))
            *x = (float)(z >> 8 & 255) - 128, *y = (float)(z >> 16 & 255) - 128;
        return;
    default:
        memcpy(x, &bits, 4);
        memcpy(y, (const char *)&bits + 4, 4);
        return;
    }
}

/* The larger of |a - b| and, when wide, |a - b| + |c - d|, as a float (an
** overflow is infinity). */
static float near_span(float a, float b, float c, float d, bool wide)
{
    double u = (double)a - b, v = (double)c - d;
    u = u < 0 ? -u : u, v = v < 0 ? -v : v;
    double s = wide ? u + v : u > v ? u : v;
    return s > FLT_MAX ? INFINITY : (float)s;
}

/* A radius for the centre (x, y) from z: a hostile one, a usual one, one
** that reaches the origin along an axis (where V's default value puts
** points), or one that reaches an entity's point: circles whose edge
** runs through points, where the rounding of the test shows. */
static float near_radius(interp *I, uint32_t z, float x, float y)
{
    const ment *m = I->ne ? &I->e[(z >> 2) % (uint32_t)I->ne] : NULL;
    float px, py;
    switch (z % 4) {
    case 0:
        return near_hostile[(z >> 2) % 14];
    case 1:
        return near_radii[(z >> 2) % 8];
    case 2:
        return z >> 2 & 1 ? near_span(x, 0, 0, 0, false) : near_span(y, 0, 0, 0, false);
    default:
        if (m == NULL || !near_point(m, &px, &py))
            return 1;
        return near_span(px, x, py, y, z >> 12 & 1);
    }
}

/* Are got[0..ng) the entities in the circle (q's alone when q is not
** NULL), each once? *nw: how many the model says. */
static bool near_is_model(interp *I, const mquery *q, float x, float y, float r,
                          const tecs_entity_t *got, int32_t ng, int32_t *nw)
{
    *nw = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        if (near_holds(m, x, y, r) && (q == NULL || m_match(q, m))) {
            I->mark[TECS_ENTITY_INDEX(m->id)] = m->id;
            ++*nw;
        }
    }
    return marked_are(I, got, ng, *nw);
}

/* One circle searched by tecs_index_near_xy and by a where of
** tecs_filter_radius through q: both refuse what the rule refuses, else
** near gives the model's set with each entity's point, the where the
** model's set within q, which is near's set within q, and
** tecs_filter_test agrees for one entity. */
static void near_circle(interp *I, tecs_index_t *ix, const mquery *q, float x, float y, float r,
                        uint32_t z)
{
    bool refused = near_refused(x, y, r);
    int32_t cap = I->ne + 1, nw;
    tecs_entity_t *got = malloc((size_t)cap * sizeof *got);
    tecs_entity_t *wh = malloc((size_t)cap * sizeof *wh);
    float *xy = malloc(2 * (size_t)cap * sizeof *xy);
    if (got == NULL || wh == NULL || xy == NULL)
        abort();
    int32_t ng = tecs_index_near_xy(ix, x, y, r, got, xy, cap);
    if (refused) {
        EXPECT(I, ng == -1 && tecs_last_error(I->w) == TECS_EINVAL,
               "tecs_index_near(%g, %g, %g): %d (%s), the rule refuses it", (double)x,
               (double)y, (double)r, (int)ng, tecs_err_name(tecs_last_error(I->w)));
    } else if (ng >= 0 || !mi_result_is(I, mi_got_err(I, false), TECS_OK, "tecs_index_near")) {
        EXPECT(I, ng >= 0 && near_is_model(I, NULL, x, y, r, got, ng, &nw),
               "tecs_index_near(%g, %g, %g) finds %d entities, model %d", (double)x, (double)y,
               (double)r, (int)ng, (int)nw);
        for (int32_t i = 0; i < ng; i++) {
            float px, py;
            ment *m = mi_find(I, got[i]);
            EXPECT(I, m && near_point(m, &px, &py) && memcmp(&xy[2 * i], &px, 4) == 0 &&
                          memcmp(&xy[2 * i + 1], &py, 4) == 0,
                   "tecs_index_near_xy hands out a point the entity does not have");
        }
    }
    tecs_filter_t *fl = tecs_filter_new(I->w);
    if (mi_result_is(I, mi_got_err(I, fl != NULL), TECS_OK, "tecs_filter_new") || fl == NULL) {
        free(got), free(wh), free(xy);
        return;
    }
    tecs_cond_t c = tecs_filter_radius(fl, ix, x, y, r);
    int err = mi_got_err(I, c >= 0);
    if (!mi_result_is(I, err, refused ? TECS_EINVAL : TECS_OK, "tecs_filter_radius") &&
        !refused) {
        I->checking++;
        int32_t nwh = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, wh, cap);
        I->checking--;
        if (nwh >= 0 || !mi_result_is(I, mi_got_err(I, false), TECS_OK, "where of a radius")) {
            EXPECT(I, nwh >= 0 && near_is_model(I, q, x, y, r, wh, nwh, &nw),
                   "a where of tecs_filter_radius(%g, %g, %g) finds %d entities, model %d",
                   (double)x, (double)y, (double)r, (int)nwh, (int)nw);
            int32_t inq = 0;        /* near's set within q is the where's */
            for (int32_t i = 0; ng >= 0 && i < ng; i++) {
                const ment *m = mi_find(I, got[i]);
                inq += m && m_match(q, m);
            }
            EXPECT(I, ng < 0 || inq == nwh, "tecs_index_near has %d entities of the query, "
                   "the radius filter's where %d", (int)inq, (int)nwh);
            const ment *m = I->ne ? &I->e[z % (uint32_t)I->ne] : NULL;
            bool t = m && tecs_filter_test(fl, m->id);
            EXPECT(I, !m || t == near_holds(m, x, y, r) ||
                          (tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)),
                   "tecs_filter_test of a radius says %d", t);
        }
    } else if (refused) {
        EXPECT(I, c == -1 && tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, wh, cap) == -1,
               "a refused radius filter is used");
    }
    tecs_filter_free(fl);
    free(got), free(wh), free(xy);
}

/* A spatial index on V, three circles searched both ways, the index freed.
** The where runs through one of the program's queries, or (y odd, or no
** query) one of V alone, enabled or not: every entity near finds. */
static void op_near(interp *I, const m_op *op)
{
    if (mi_deferred(I))
        return;
    mquery own = { .nt = 1, .ci = { C_V } };
    own.t[0] = (tecs_term_t){ .comp = I->cid[C_V], .access = TECS_READ,
                              .toggle = TECS_TOGGLE_ANY };
    const mquery *q = &own;
    if (I->nq > 0 && !(op->y & 1)) {
        q = &I->qs[op->y / 2 % (uint32_t)I->nq];
    } else {
        own.q = tecs_query_new(I->w, &(tecs_query_desc_t){ .terms = own.t, .term_count = 1 });
        if (mi_result_is(I, mi_got_err(I, own.q != NULL), TECS_OK, "tecs_query_new") ||
            own.q == NULL)
            return;
    }
    tecs_index_t *ix = tecs_index_new(I->w, &(tecs_index_desc_t){
        .comp = I->cid[C_V], .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = 0, .offset_y = 4, .cell_size = near_cells[op->x & 3] });
    if (!mi_result_is(I, mi_got_err(I, ix != NULL), TECS_OK, "tecs_index_new") && ix) {
        uint32_t z = op->z;
        for (int k = 0; k < 3; k++, z = (uint32_t)mi_mix(z)) {
            float x, y;
            near_centre(I, z, &x, &y);
            near_circle(I, ix, q, x, y, near_radius(I, z >> 16, x, y), z);
        }
        mi_result_is(I, tecs_index_free(ix), TECS_OK, "tecs_index_free");
    }
    if (own.q != NULL)
        mi_result_is(I, tecs_query_free(own.q), TECS_OK, "tecs_query_free");
}

/* One filter for three searches, reset and built again before each, its
** results checked against the model's (condition handles count from 0
** again after a reset); a reset while an iteration over it is open is
** refused and leaves it as it was. */
static void op_filter_reuse(interp *I, const m_op *op)
{
    if (I->nix == 0 || I->nq == 0)
        return;
    for (int32_t k = 0; k < I->nits; k++)
        if (I->its[k].wrote)
            return;
    const mquery *q = &I->qs[op->y % (uint32_t)I->nq];
    tecs_filter_t *fl = tecs_filter_new(I->w);
    if (mi_result_is(I, mi_got_err(I, fl != NULL), TECS_OK, "tecs_filter_new") || fl == NULL)
        return;
    tecs_entity_t *got = malloc(((size_t)I->ne + 1) * sizeof *got);
    if (got == NULL)
        abort();
    uint32_t z = op->z;
    for (int round = 0; round < 3; round++, z = (uint32_t)mi_mix(z)) {
        if (round > 0 && mi_result_is(I, tecs_filter_reset(fl), TECS_OK, "tecs_filter_reset"))
            break;
        mcond cs[MAXCOND];
        int32_t n = mi_build_filter(I, fl, cs, z, 1 + (int32_t)((op->x + (uint32_t)round) % 4));
        if (n <= 0)
            continue;           /* (a condition ran out of memory: reset next round) */
        I->checking++;
        int32_t ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, got, I->ne + 1);
        I->checking--;
        if (ng < 0) {
            if (mi_result_is(I, mi_got_err(I, false), TECS_OK, "tecs_iter_collect of a where"))
                continue;
            break;
        }
        int32_t nw;
        bool same = where_is_model(I, q, cs, n, got, ng, &nw);
        EXPECT(I, same, "a reset filter's where gives %d entities, model %d (round %d)",
               (int)ng, (int)nw, round);
        if (round == 2) {       /* refused while its iteration is open */
            tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl);
            if (tecs_last_error(I->w) == TECS_OK) {
                mi_result_is(I, tecs_filter_reset(fl), TECS_EBUSY, "tecs_filter_reset (busy)");
                tecs_iter_fini(&it);
                I->checking++;
                EXPECT(I, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, NULL, 0) == ng,
                       "a refused reset changed the filter");
                I->checking--;
            }
            mi_sync(I);
        }
    }
    free(got);
    tecs_filter_free(fl);
}

/* ---- reverse where and caches ---------------------------------------------------- */

bool mi_rev_record(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)fields;
    mi_rev_walk *r = ctx;
    if (r->n < r->cap)
        r->got[r->n] = e;
    return ++r->n == r->stop_at;
}

int32_t mi_rev_steps(tecs_iter_t it, tecs_entity_t *out, int32_t cap)
{
    int32_t n = 0;
    while (tecs_iter_next(&it))
        for (int32_t i = it.count - 1; i >= 0; i--, n++)
            if (n < cap)
                out[n] = it.entities[i];
    return n;
}

bool mi_reversed(const tecs_entity_t *fwd, int32_t nf, const tecs_entity_t *rev, int32_t n)
{
    if (n > nf)
        return false;
    for (int32_t i = 0; i < n; i++)
        if (rev[i] != fwd[nf - 1 - i])
            return false;
    return true;
}

/* A failed call: the injected out of memory is fine, anything else not.
** @return true (it is accounted for). */
static bool rev_failed(interp *I, const char *what)
{
    mi_result_is(I, (int)tecs_last_error(I->w), TECS_OK, what);
    return true;
}

/* A random filter (hash indexes take == and !=), in key order of an
** ordered index or not: the forward where against the model, and every
** reverse form against the forward order read from its end; an early stop
** from the end; unknown flag bits refused. */
static void op_where_rev(interp *I, const m_op *op)
{
    const mquery *q;
    mcond cs[MAXCOND];
    int32_t n;
    tecs_filter_t *fl = where_setup(I, op, &q, cs, &n);
    if (fl == NULL)
        return;
    for (int32_t k = 0; n > 0 && (op->x & 8) && k < I->nix; k++)
        if (I->ixs[k].ordered) {
            tecs_err_t err = tecs_filter_order(fl, I->ixs[k].ix, op->x & 16);
            EXPECT(I, err == TECS_OK, "tecs_filter_order: %s", tecs_err_name(err));
            break;
        }
    int32_t cap = I->ne + 1, rv = true;
    tecs_entity_t *fwd = malloc((size_t)cap * sizeof *fwd), *rev = malloc((size_t)cap * sizeof *rev);
    if (fwd == NULL || rev == NULL)
        abort();
    I->checking++;
    int32_t nf = n > 0 ? tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl) }, fwd, cap) : -1;
    if (n > 0 && (nf >= 0 || !rev_failed(I, "tecs_iter_collect of a where"))) {
        int32_t nw = 0;
        for (int32_t i = 0; i < I->ne; i++)
            nw += I->e[i].st == ST_ALIVE && m_match(q, &I->e[i]) &&
                  m_cond(I, cs, n - 1, &I->e[i]);
        EXPECT(I, nf == nw, "where gives %d entities, model %d", (int)nf, (int)nw);
        int32_t nr = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl, .reverse = rv) }, rev, cap);
        EXPECT(I, nr < 0 ? rev_failed(I, "tecs_iter_collect of a reverse where")
                         : nr == nf && mi_reversed(fwd, nf, rev, nr),
               "reverse where collect: %d entities, not the %d forward reversed", (int)nr,
               (int)nf);
        tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl, .reverse = rv);
        if (tecs_last_error(I->w) != TECS_OK) {
            EXPECT(I, !tecs_iter_next(&it) && rev_failed(I, "tecs_iter of a reverse where"),
                   "a failed reverse where hands out rows");
        } else {
            nr = mi_rev_steps(it, rev, cap);
            EXPECT(I, nr == nf && mi_reversed(fwd, nf, rev, nr),
                   "reverse where steps read backwards: %d entities, not the %d forward "
                   "reversed", (int)nr, (int)nf);
        }
        mi_rev_walk r = { rev, 0, cap, (int32_t)(op->z >> 20) % (nf + 2) };
        tecs_err_t err = tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q->q), .query = q->q, .where = fl, .reverse = rv) }, mi_rev_record, &r);
        int32_t want = r.stop_at > 0 && r.stop_at < nf ? r.stop_at : nf;
        EXPECT(I, err ? rev_failed(I, "tecs_iter_each of a reverse where")
                      : r.n == want && mi_reversed(fwd, nf, rev, r.n),
               "reverse where each (stop at %d): %d calls, not the %d forward reversed",
               (int)r.stop_at, (int)r.n, (int)want);
        EXPECT(I, tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(I->w, .where = fl, .reverse = rv) }, rev, cap) == -1 &&
                  tecs_last_error(I->w) == TECS_EINVAL, "a where with no query: %s",
               tecs_err_name(tecs_last_error(I->w)));
        tecs_clear_error(I->w);
    }
    I->checking--;
    free(fwd);
    free(rev);
    tecs_filter_free(fl);
}

/* Every index holds the entities with its component. */
static void check_indexes(interp *I)
{
    for (int32_t k = 0; k < I->nix; k++) {
        int32_t n = 0;
        for (int32_t i = 0; i < I->ne; i++)
            n += I->e[i].st == ST_ALIVE && (I->e[i].mask >> ifield[I->ixs[k].field].comp & 1);
        long f0 = I->alloc.failures;
        int32_t got = tecs_index_count(I->ixs[k].ix);
        if (got < 0 && I->alloc.failures > f0 && tecs_last_error(I->w) == TECS_ENOMEM)
            got = tecs_index_count(I->ixs[k].ix);  /* its rebuild met the failure */
        EXPECT(I, got == n, "index %d holds %d, model %d", (int)k, (int)got, (int)n);
    }
}

#endif /* TECS_HAS_INDEX */

#if TECS_HAS_OBSERVER
/* ---- observers ------------------------------------------------------------------- */

static tecs_entity_t *obs_slot(mobs *o, tecs_entity_t e)
{
    int32_t index = (int32_t)TECS_ENTITY_INDEX(e);
    if (index >= o->cap) {
        int32_t old = o->cap;
        o->in = grow(o->in, &o->cap, index + 1, sizeof *o->in);
        memset(o->in + old, 0, (size_t)(o->cap - old) * sizeof *o->in);
    }
    return &o->in[index];
}


/* ENTER / ADD put the entity in the set, LEAVE / REMOVE take it out; an
** event that finds the set otherwise is counted as bad. Then the body. */
static void obs_fn(const tecs_event_t *ev)
{
    mobs *o = ev->ctx;
    tecs_entity_t *slot = obs_slot(o, ev->entity);
    bool in = ev->kind == TECS_ON_ENTER || ev->kind == TECS_ON_ADD;
    if (in) {
        o->bad += *slot != 0;
        *slot = ev->entity;
    } else {
        o->bad += *slot != ev->entity;
        *slot = 0;
    }
    if (o->comp_kind)
        o->bad += ev->comp != o->I->cid[o->comp];
    mi_run_body(o->I, CB_OBS, NULL);
}

static bool obs_wants(const mobs *o, const ment *m)
{
    if (m->st != ST_ALIVE)
        return false;
    return o->comp_kind ? (m->mask >> o->comp & 1) : m_match(&o->q, m);
}

static void op_observer_new(interp *I, const m_op *op)
{
    if (I->nobs == MAXOB || I->ngone == 64 || mi_deferred(I))
        return;
    mobs *o = calloc(1, sizeof *o);
    if (o == NULL)
        abort();
    o->I = I;
    o->comp_kind = op->x & 1;
    o->comp = (int)((op->x >> 1) % NC);
    o->q.nt = 1 + (op->x >> 4) % 4;
    uint32_t z = op->z;
    for (int32_t t = 0; t < o->q.nt; t++, z = (uint32_t)mi_mix(z)) {
        o->q.ci[t] = (int)((z + (uint32_t)t * 3) % NC);
        for (int32_t u = 0; u < t; u++)     /* (an inherited term's component too) */
            if (o->q.ci[u] == o->q.ci[t] || o->q.ci[u] == o->q.ci[t] + CI_INHERIT)
                o->q.ci[t] = (o->q.ci[t] + 1) % NC, u = -1;
        o->q.t[t] = (tecs_term_t){ .comp = I->cid[o->q.ci[t]], .oper = (tecs_oper_t)(z >> 4 & 3),
                                   .access = TECS_READ };
        uint32_t tg = z >> 9 & 7;
        if (TOG_MASK >> o->q.ci[t] & 1)
            o->q.t[t].toggle = tg < 5 ? TECS_TOGGLE_ENABLED : tg == 5 ? TECS_TOGGLE_ANY
                                                                    : TECS_TOGGLE_DISABLED;
        bool taken = false;                     /* or a sparse component's term */
        for (int32_t u = 0; u < t; u++)
            taken = taken || o->q.ci[u] == NC + (int)(z >> 21 & 1);
        if ((z >> 18 & 3) == 0 && !taken) {
            o->q.ci[t] = NC + (int)(z >> 21 & 1);
            o->q.t[t].comp = I->sid[o->q.ci[t] - NC];
            o->q.t[t].toggle = TECS_TOGGLE_ENABLED;
        } else if (t > 0 && (z >> 24 & 3) == 0) {
            int ci = o->q.ci[t];
            tecs_term_t was = o->q.t[t];
            mr_pair_term(I, &o->q, t, (uint32_t)mi_mix(z));
            for (int32_t u = 0; u < t; u++)
                if (o->q.ci[t] >= CI_INHERIT && o->q.ci[u] == o->q.ci[t] - CI_INHERIT)
                    o->q.ci[t] = ci, o->q.t[t] = was;   /* one term a component */
        }
    }
    tecs_observer_desc_t d = { .callback = obs_fn, .ctx = o };
    if (o->comp_kind)
        d.comp = I->cid[o->comp];
    else
        d.terms = o->q.t, d.term_count = o->q.nt;
    for (int k = 0; k < 2; k++) {
        d.event = o->comp_kind ? (k ? TECS_ON_REMOVE : TECS_ON_ADD)
                               : (k ? TECS_ON_LEAVE : TECS_ON_ENTER);
        o->ids[k] = tecs_observer_new(I->w, &d);
        if (mi_result_is(I, mi_got_err(I, o->ids[k] != 0), TECS_OK, "tecs_observer_new")) {
            if (k)
                tecs_observer_free(I->w, o->ids[0]);
            free(o);
            return;
        }
    }
    for (int32_t i = 0; i < I->ne; i++)         /* what matches already */
        if (obs_wants(o, &I->e[i]))
            *obs_slot(o, I->e[i].id) = I->e[i].id;
    I->obs[I->nobs++] = o;
}

static void op_observer_remove(interp *I, const m_op *op)
{
    if (I->nobs == 0 || mi_deferred(I))
        return;
    int32_t k = (int32_t)(op->z % (uint32_t)I->nobs);
    mobs *o = I->obs[k];
    for (int j = 0; j < 2; j++)
        mi_result_is(I, tecs_observer_free(I->w, o->ids[j]), TECS_OK, "tecs_observer_free");
    EXPECT(I, tecs_observer_free(I->w, o->ids[0]) == TECS_ENOENT, "observer removed twice");
    I->obs[k] = I->obs[--I->nobs];
    I->obs_gone[I->ngone++] = o;
}

/* Each observer's set equals the model's (when no change is queued). */
static void check_observers(interp *I)
{
    for (int32_t k = 0; k < I->nobs; k++) {
        mobs *o = I->obs[k];
        EXPECT(I, o->bad == 0, "observer %d saw %ld contradicting events", (int)k, o->bad);
        if (mi_deferred(I))
            continue;
        int32_t n = 0, members = 0;
        for (int32_t i = 0; i < I->ne; i++) {
            const ment *m = &I->e[i];
            bool want = obs_wants(o, m);
            n += want;
            EXPECT(I, (*obs_slot(o, m->id) == m->id) == want,
                   "observer %d (%s) %s entity %llx", (int)k,
                   o->comp_kind ? cname[o->comp] : "terms", want ? "missed" : "kept",
                   (unsigned long long)m->id);
        }
        for (int32_t s = 0; s < o->cap; s++)
            members += o->in[s] != 0;
        EXPECT(I, members == n, "observer %d holds %d entities, model %d", (int)k,
               (int)members, (int)n);
    }
}

#endif /* TECS_HAS_OBSERVER */

/* ---- deferred sections, entity states, every entity, reset ------------------------ */

enum { MAXSECT = 3 };

/* Open a deferred section: while one is open the model queues as it does
** inside an iteration. */
static void op_defer_begin(interp *I, const m_op *op)
{
    (void)op;
    if (I->nsect == MAXSECT)
        return;
    if (mi_result_is(I, tecs_defer_begin(I->w), TECS_OK, "tecs_defer_begin"))
        return;                         /* out of memory: nothing opened */
    I->nsect++;
    EXPECT(I, tecs_is_deferred(I->w), "an open deferred section does not defer");
}

/* End the innermost section (none open: TECS_EINVAL, nothing changed). The
** last deferral to end applies the queue: the end returns what the flush
** met, the first drop's error. */
static void op_defer_end(interp *I, const m_op *op)
{
    (void)op;
    if (I->nsect == 0) {
        bool was = tecs_is_deferred(I->w);
        mi_result_is(I, tecs_defer_end(I->w), TECS_EINVAL, "tecs_defer_end with none open");
        EXPECT(I, tecs_is_deferred(I->w) == was, "a refused tecs_defer_end changed the world");
        tecs_clear_error(I->w);
        return;
    }
    I->nsect--;
    int err = (int)tecs_defer_end(I->w);
    if (mi_deferred(I)) {
        mi_result_is(I, err, TECS_OK, "tecs_defer_end of an inner deferral");
        return;
    }
    bool oom = err == TECS_ENOMEM && mi_injected(I);
    if (oom) {
        I->res->enomem++;
        mi_settle(I);                   /* what did not apply: the next flush */
    }
    m_flush(I);
    if (oom)
        return;
    int want = I->mdrops > 0 ? I->mdrop_err : TECS_OK;
    EXPECT(I, err == want, "tecs_defer_end: got %s, the model's flush says %s (%s)",
           tecs_err_name((tecs_err_t)err), tecs_err_name((tecs_err_t)want),
           tecs_last_error_msg(I->w));
    if (err != TECS_OK)
        mi_drop_report(I);
}

/* The model's state of an id: dead, pending (deferred or delayed birth),
** doomed (alive, a delayed kill or a deferred destroy queued), alive. */
static tecs_entity_state_t m_state(const interp *I, tecs_entity_t id)
{
    const ment *m = NULL;
    for (int32_t i = 0; id && i < I->ne && m == NULL; i++)
        if (I->e[i].id == id)
            m = &I->e[i];
    if (m == NULL)
        return TECS_ENTITY_DEAD;
    if (m->st != ST_ALIVE)
        return TECS_ENTITY_PENDING;
    bool doomed = m->kill;
    for (int32_t i = 0; i < I->ndq && !doomed; i++)
        doomed = I->dq[i].op == Q_DESTROY && I->dq[i].id == id;
    return doomed ? TECS_ENTITY_DOOMED : TECS_ENTITY_ALIVE;
}

static void op_entity_state(interp *I, const m_op *op)
{
    static const char *const st[4] = { "DEAD", "ALIVE", "PENDING", "DOOMED" };
    for (int k = 0; k < 1 + op->x % 4; k++) {
        tecs_entity_t id = mi_pick_id(I, op->z + (uint32_t)k * 0x9e37u);
        tecs_err_t before = tecs_last_error(I->w);
        tecs_entity_state_t got = tecs_entity_state(I->w, id), want = m_state(I, id);
        EXPECT(I, got == want, "tecs_entity_state(%llx) is %s, the model says %s",
               (unsigned long long)id, st[got & 3], st[want & 3]);
        EXPECT(I, tecs_last_error(I->w) == before, "tecs_entity_state set the last error");
        EXPECT(I, tecs_is_alive(I->w, id) == (got == TECS_ENTITY_ALIVE ||
                                             got == TECS_ENTITY_DOOMED),
               "tecs_entity_state and tecs_is_alive disagree");
    }
}

static bool count_one(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    ++*(int32_t *)ctx;
    return false;
}

/* A query of no terms: every live entity but the prefabs, empty archetype
** included. It joins the program's queries, so later ops iterate it,
** filter it, cache it like any other. */
static void op_query_all_zero_terms(interp *I, const m_op *op)
{
    if (I->nq == MAXQ)
        return;
    mquery q = { .nt = 0 };
    q.q = op->x & 1 ? tecs_query_all(I->w, 0, NULL)
                    : tecs_query_new(I->w, &(tecs_query_desc_t){ .term_count = 0 });
    if (mi_result_is(I, mi_got_err(I, q.q != NULL), TECS_OK, "a query of no terms") ||
        q.q == NULL)
        return;
    I->qs[I->nq++] = q;
    check_query(I, &I->qs[I->nq - 1], true, op->x & 2 ? true : 0);
    int32_t alive = 0, n = 0;
    for (int32_t i = 0; i < I->ne; i++)
        alive += I->e[i].st == ST_ALIVE && !I->e[i].prefab;
    int32_t shown = 0;
    for (int32_t i = 0; i < I->w->arch.narchs; i++)
        shown += !I->w->arch.archs[i]->hidden;
    I->checking++;
    mi_result_is(I, tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q.q), .query = q.q, .reverse = op->x & 4 ? true : 0) }, count_one, &n),
                 TECS_OK, "tecs_iter_each of no terms");
    I->checking--;
    EXPECT(I, n == alive, "each of the query of no terms: %d entities, model %d", (int)n,
           (int)alive);
    EXPECT(I, tecs_query_archetype_count(q.q) == shown,
           "the query of no terms misses archetypes");
}

/* Reset: every entity dies (observers, hooks, caches, indexes told), every
** queued and delayed change is dropped; callbacks run meanwhile are refused
** every change, as while the world is freed. Refused while deferred. */
static void op_world_reset(interp *I, const m_op *op)
{
    (void)op;
    if (mi_deferred(I)) {
        mi_result_is(I, tecs_world_reset(I->w), TECS_EBUSY, "tecs_world_reset while deferred");
        return;
    }
    mi_sync(I);
    I->freeing = true;
    int err = (int)tecs_world_reset(I->w);
    I->freeing = false;
    mi_result_is(I, err, TECS_OK, "tecs_world_reset");
    while (I->ne > 0)
        m_kill(I, &I->e[I->ne - 1]);
    I->ndq = I->nlq = 0;
    I->nborn = I->born_pos = 0;
    EXPECT(I, tecs_world_entity_count(I->w) == 0 && tecs_delayed_new_count(I->w) == 0,
           "entities or births left after a reset");
}

/* ---- sparse components --------------------------------------------------------------- */

/* The sparse component x picks (k), or an unknown id (k -1). */
static tecs_comp_t pick_sparse(interp *I, uint8_t x, int *k)
{
    *k = x % NS;
    if (x % 32 == 31) {
        *k = -1;
        return UNKNOWN_COMP;
    }
    return I->sid[*k];
}

static void op_sparse_add(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want;
    if (mi_deferred(I))
        want = defer_want(k, m);
    else if (!m || m->st != ST_ALIVE)
        want = TECS_EDEAD;
    else
        want = k < 0 ? TECS_ENOCOMP : (m->smask >> k & 1) ? TECS_EEXIST : TECS_OK;
    if (mi_result_is(I, tecs_add(I->w, id, c), want, "tecs_add (sparse)") || want != TECS_OK)
        return;
    if (mi_deferred(I)) {
        mi_push_dq(I, &(mcmd){ .op = Q_ADD, .id = id, .comp = NC + k });
    } else {
        m->smask |= (uint8_t)(1u << k);
        m->sval[k] = 0;
    }
}

static void op_sparse_remove(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want;
    if (mi_deferred(I))
        want = defer_want(k, m);
    else if (!m || m->st != ST_ALIVE)
        want = TECS_EDEAD;
    else
        want = k < 0 ? TECS_ENOCOMP : (m->smask >> k & 1) ? TECS_OK : TECS_ENOENT;
    if (mi_result_is(I, tecs_remove(I->w, id, c), want, "tecs_remove (sparse)") ||
        want != TECS_OK)
        return;
    if (mi_deferred(I)) {
        mi_push_dq(I, &(mcmd){ .op = Q_REMOVE, .id = id, .comp = NC + k });
        m->rmq = m->st == ST_ALIVE;
    } else {
        m->smask &= (uint8_t)~(1u << k);
    }
}

static void op_sparse_set(interp *I, const m_op *op)
{
    if (writes_pending(I))
        return;
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int64_t v = mkval(op->z, op->y);
    bool null = op->y % 32 == 0;
    bool has = k >= 0 && m && m->st == ST_ALIVE && (m->smask >> k & 1) &&
               !(m->rmq && mi_deferred(I));
    int want;
    if (has)
        want = ssize[k] && null ? TECS_EINVAL : TECS_OK;
    else if (k < 0)
        want = TECS_ENOCOMP;
    else if (null && ssize[k])
        want = TECS_EINVAL;
    else if (mi_deferred(I))
        want = m && m->st != ST_DELAY ? TECS_OK : TECS_EDEAD;
    else
        want = m && m->st == ST_ALIVE ? TECS_OK : TECS_EDEAD;
    if (mi_result_is(I, tecs_set(I->w, id, c, null ? NULL : &v), want, "tecs_set (sparse)") ||
        want != TECS_OK)
        return;
    if (mi_deferred(I) && !has) {
        mcmd q = { .op = Q_SET, .id = id, .comp = NC + k };
        q.val[0] = v;
        mi_push_dq(I, &q);
    } else {
        m->smask |= (uint8_t)(1u << k);
        m->sval[k] = ssize[k] ? v : 0;
    }
}

/* tecs_get, tecs_has of a sparse component; a write through the pointer,
** reported with tecs_modified. Its address must not change while the
** entity keeps it (checked against the last address seen). */
static void op_sparse_get(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    bool alive = m && m->st == ST_ALIVE;
    bool has = alive && k >= 0 && (m->smask >> k & 1);
    int want = !alive ? TECS_EDEAD : k < 0 ? TECS_ENOCOMP
             : !has ? TECS_ENOENT : ssize[k] ? TECS_OK : TECS_EINVAL;
    int64_t *p = tecs_get_mut(I->w, id, c);
    EXPECT(I, mi_got_err(I, p != NULL) == want, "tecs_get (sparse): got %s, model says %s",
           tecs_err_name((tecs_err_t)mi_got_err(I, p != NULL)), tecs_err_name((tecs_err_t)want));
    EXPECT(I, tecs_has(I->w, id, c) == has, "tecs_has (sparse)");
    if (p == NULL)
        return;
    EXPECT(I, *p == m->sval[k], "tecs_get: value of %s differs", sname[k]);
    if ((op->y & 1) && !writes_pending(I)) {
        int64_t v = mkval(op->z, op->y);
        *p = v;
        m->sval[k] = v;
        mi_result_is(I, tecs_modified(I->w, id, c), TECS_OK, "tecs_modified (sparse)");
    }
}

/* A change watcher: a query of one term of component c (model index; a
** sparse one from NC) asking TECS_CHANGE_CHANGED or _ADDED. Each run must
** hand out, among the rows it matches, every one whose value differs from
** the last run's, or that did not match then (it entered, or got c): the
** chunks the library hands out may hold more, never fewer. */
static void watch_new(interp *I, uint32_t z, bool added)
{
    int c = (int)(z % (NC + NS));
    bool tag = c < NC ? csize[c] == 0 : ssize[c - NC] == 0;
    mquery q = { .nt = 1 };
    q.ci[0] = c;
    q.t[0] = (tecs_term_t){ .comp = c < NC ? I->cid[c] : I->sid[c - NC],
                            .access = TECS_READ,
                            .change = added || tag ? TECS_CHANGE_ADDED : TECS_CHANGE_CHANGED };
    q.q = tecs_query_new(I->w, &(tecs_query_desc_t){ .terms = q.t, .term_count = 1 });
    if (mi_result_is(I, mi_got_err(I, q.q != NULL), TECS_OK, "tecs_query_new (change)") ||
        q.q == NULL)
        return;
    I->cw[I->ncw].q = q;
    I->cw[I->ncw].id = NULL;            /* never ran: every row passes */
    I->ncw++;
}

/* The model's value of the watched component of m. */
static int64_t watch_val(const mquery *q, const ment *m)
{
    return q->ci[0] < NC ? m->val[q->ci[0]] : m->sval[q->ci[0] - NC];
}

static void watch_run(interp *I, int32_t k)
{
    const mquery *q = &I->cw[k].q;
    bool added = q->t[0].change == TECS_CHANGE_ADDED;
    I->checking++;
    for (int32_t i = 0; i < I->ne; i++)
        I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(q->q), .query = q->q);
    while (tecs_iter_next(&it)) {
        mi_check_chunk(I, &it, q);
        for (int32_t r = 0; r < it.count; r++) {
            uint32_t index = TECS_ENTITY_INDEX(it.entities[r]);
            EXPECT(I, (int32_t)index < I->cap_gen && I->mark[index] != it.entities[r],
                   "a change run hands out an entity twice");
            I->mark[index] = it.entities[r];
        }
    }
    I->checking--;
    /* What the run owed, then what the next one compares with. */
    bool first = I->cw[k].id == NULL;
    int32_t cap = I->cap_gen > 0 ? I->cap_gen : 1;  /* (a first run holds 1 slot) */
    if (first || I->cw[k].cap < cap) {
        tecs_entity_t *id = realloc(I->cw[k].id, (size_t)cap * sizeof *id);
        int64_t *val = realloc(I->cw[k].val, (size_t)cap * sizeof *val);
        if (id == NULL || val == NULL)
            abort();
        memset(id + I->cw[k].cap, 0, (size_t)(cap - I->cw[k].cap) * sizeof *id);
        I->cw[k].id = id;
        I->cw[k].val = val;
        I->cw[k].cap = cap;
    }
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        uint32_t index = TECS_ENTITY_INDEX(m->id);
        bool in = m->st == ST_ALIVE && m_match(q, m);
        /* An entity shown or hidden since the last run (the prefab tag)
        ** kept its ticks across the move: the model, which knows no ticks,
        ** cannot say what the run owes it. */
        bool owed = in && (first || I->cw[k].id[index] != m->id ||
                           (!added && I->cw[k].val[index] != watch_val(q, m))) &&
                    (first || m->prefab_at <= I->cw[k].ran);
        EXPECT(I, !owed || I->mark[index] == m->id,
               "a change run of %s (%s) misses entity %llx", q->ci[0] < NC ? cname[q->ci[0]]
               : sname[q->ci[0] - NC], added ? "added" : "changed", (unsigned long long)m->id);
        I->mark[index] = 0;
    }
    I->cw[k].ran = I->step + 1;
    memset(I->cw[k].id, 0, (size_t)I->cw[k].cap * sizeof *I->cw[k].id);
    for (int32_t i = 0; i < I->ne; i++) {
        const ment *m = &I->e[i];
        if (m->st == ST_ALIVE && m_match(q, m)) {
            I->cw[k].id[TECS_ENTITY_INDEX(m->id)] = m->id;
            I->cw[k].val[TECS_ENTITY_INDEX(m->id)] = watch_val(q, m);
        }
    }
}

static void op_change_watch(interp *I, const m_op *op)
{
    if (I->ncw < 2 && (I->ncw == 0 || op->x % 4 == 0))
        watch_new(I, op->z, op->y & 1);
    else if (I->ncw > 0)
        watch_run(I, (int32_t)(op->z % (uint32_t)I->ncw));
}

/* Lookups in the caller's loop: a handle of the component kept from op to
** op (so every change the world went through since it was made lies
** between), a fresh one, and tecs_get_many, on 1-8 ids, against the model
** and tecs_get. */
/* tecs_handle_enable through a handle kept from op to op (or a fresh one): the
** result and the change of tecs_enable (op_enable), for a component that is
** not enableable too. */
static void op_toggle(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    bool tog = ci >= 0 && (TOG_MASK >> ci & 1);
    tecs_handle_t fresh;
    tecs_err_t want_init = ci < 0 ? TECS_ENOCOMP : TECS_OK;
    tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
    EXPECT(I, err == want_init || (err == TECS_ENOMEM && mi_injected(I)),
           "tecs_handle_init: got %s, model says %s", tecs_err_name(err),
           tecs_err_name(want_init));
    if (err != TECS_OK)
        return;
    if (!(I->tg_made >> ci & 1) || (op->y & 0x38) == 0x38) {  /* kept long, renewed now and then */
        I->tg[ci] = fresh;
        I->tg_made |= 1u << ci;
    }
    tecs_handle_t *h = op->y & 4 ? &fresh : &I->tg[ci];
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    bool on = op->y & 1, alive = m && m->st == ST_ALIVE;
    bool now = !mi_deferred(I) || (alive && !m->rmq && tog && (m->mask >> ci & 1));
    int want = now ? (!alive ? TECS_EDEAD : !tog ? TECS_EINVAL
                      : !(m->mask >> ci & 1) ? TECS_ENOENT : TECS_OK)
                   : !tog ? TECS_EINVAL : defer_want(ci, m);
    if (mi_result_is(I, tecs_handle_enable(h, id, on), want, "tecs_handle_enable") ||
        want != TECS_OK)
        return;
    if (now)
        m->off = on ? m->off & ~(1u << ci) : m->off | 1u << ci;
    else
        mi_push_dq(I, &(mcmd){ .op = on ? Q_ENABLE : Q_DISABLE, .id = id, .comp = ci });
}

/* tecs_handle_enable_many on 1-6 ids through a kept handle: each id's result as
** op_toggle predicts it, in order, the batch stopping at the first id
** refused (the ids before it changed or queued, *done their number). The
** events it fires reach observers and caches, but no callback body runs
** in this op: a body's changes land between the ids of the batch, which
** the prediction, made for the whole batch, cannot follow (op_toggle
** drives bodies through the same toggles one id at a time; test_handle_enable_many
** a body destroying an id of the batch). */
static void op_toggle_many(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    if (ci < 0 || !(TOG_MASK >> ci & 1))
        return;
    if (!(I->tg_made >> ci & 1)) {
        tecs_handle_t fresh;
        tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
        EXPECT(I, err == TECS_OK || (err == TECS_ENOMEM && mi_injected(I)),
               "tecs_handle_init: got %s", tecs_err_name(err));
        if (err != TECS_OK)
            return;
        I->tg[ci] = fresh;
        I->tg_made |= 1u << ci;
    }
    tecs_entity_t ids[6];
    int32_t n = 1 + (int32_t)(op->y >> 1) % 6;
    for (int32_t j = 0; j < n; j++)
        ids[j] = mi_pick_id(I, op->z ^ (uint32_t)j * 0x9e3779b9u);
    bool on = op->y & 1;
    int32_t done = -1;
    int32_t budget[NCB];
    memcpy(budget, I->budget, sizeof budget);
    memset(I->budget, 0, sizeof I->budget);
    tecs_err_t got = tecs_handle_enable_many(&I->tg[ci], ids, n, on, &done);
    memcpy(I->budget, budget, sizeof budget);
    for (int32_t j = 0; j < n; j++) {
        ment *m = mi_find(I, ids[j]);
        bool alive = m && m->st == ST_ALIVE;
        bool now = !mi_deferred(I) || (alive && !m->rmq && (m->mask >> ci & 1));
        int want = now ? (!alive ? TECS_EDEAD : !(m->mask >> ci & 1) ? TECS_ENOENT : TECS_OK)
                       : defer_want(ci, m);
        if (want != TECS_OK || (got == TECS_ENOMEM && mi_injected(I) && j == done)) {
            if (!mi_result_is(I, got, want, "tecs_handle_enable_many"))
                EXPECT(I, done == j, "tecs_handle_enable_many: done %d, model says %d", done, j);
            return;
        }
        if (now)
            m->off = on ? m->off & ~(1u << ci) : m->off | 1u << ci;
        else
            mi_push_dq(I, &(mcmd){ .op = on ? Q_ENABLE : Q_DISABLE, .id = ids[j], .comp = ci });
    }
    if (!mi_result_is(I, got, TECS_OK, "tecs_handle_enable_many"))
        EXPECT(I, done == n, "tecs_handle_enable_many: done %d of %d", done, n);
}

static void op_lookup(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_err_t want = ci < 0 ? TECS_ENOCOMP : csize[ci] ? TECS_OK : TECS_EINVAL;
    tecs_err_t want_init = ci < 0 ? TECS_ENOCOMP : TECS_OK;     /* a tag's reads NULL */
    tecs_handle_t fresh;
    tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
    EXPECT(I, err == want_init || (err == TECS_ENOMEM && mi_injected(I)),
           "tecs_handle_init: got %s, model says %s", tecs_err_name(err),
           tecs_err_name(want_init));
    if (err == TECS_OK && (!(I->lk_made >> ci & 1) || (op->y & 8))) {
        I->lk[ci] = fresh;
        I->lk_made |= 1u << ci;
    }
    tecs_entity_t ids[8];
    const void *out[8];
    int n = 1 + op->y % 8;
    uint32_t z = op->z;
    for (int k = 0; k < n; k++, z = (uint32_t)mi_mix(z))
        ids[k] = mi_pick_id(I, z);
    tecs_err_t gm = tecs_get_many(I->w, c, ids, n, out);
    EXPECT(I, gm == want, "tecs_get_many: got %s, model says %s", tecs_err_name(gm),
           tecs_err_name(want));
    for (int k = 0; k < n; k++) {
        ment *m = mi_find(I, ids[k]);
        /* Its own value, or its base's (not through a handle). */
        const ment *h = want == TECS_OK && m && m->st == ST_ALIVE ? mr_holder(I, m, ci) : NULL;
        const void *g = tecs_get(I->w, ids[k], c), *own = h == m ? g : NULL;
        EXPECT(I, (g != NULL) == (h != NULL), "lookup: tecs_get %s, the model says %s",
               g ? "found" : "NULL", h ? "it has one" : "none");
        if (h)
            EXPECT(I, same_val(ci, g, h->val[ci]), "lookup: value of %s differs", cname[ci]);
        if (gm == TECS_OK)
            EXPECT(I, out[k] == g, "tecs_get_many and tecs_get differ");
        if (err == TECS_OK)
            EXPECT(I, tecs_handle_get(&fresh, ids[k]) == own,
                   "a fresh handle and tecs_get differ");
        if (ci >= 0 && (I->lk_made >> ci & 1))
            EXPECT(I, tecs_handle_get(&I->lk[ci], ids[k]) == own,
                   "a kept handle of %s and tecs_get differ", cname[ci]);
    }
}

/* Lookups of a sparse component: as op lookup, a handle kept from op to
** op, a fresh one and tecs_get_many, on 1-8 ids, against the model and
** tecs_get (a sparse tag's handle reads NULL; it has no batch). */
static void op_lookup_sparse(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_err_t want = k < 0 ? TECS_ENOCOMP : ssize[k] ? TECS_OK : TECS_EINVAL;
    tecs_err_t want_init = k < 0 ? TECS_ENOCOMP : TECS_OK;
    tecs_handle_t fresh;
    tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
    EXPECT(I, err == want_init || (err == TECS_ENOMEM && mi_injected(I)),
           "tecs_handle_init (sparse): got %s, model says %s", tecs_err_name(err),
           tecs_err_name(want_init));
    if (err == TECS_OK && (!(I->slk_made >> k & 1) || (op->y & 8))) {
        I->slk[k] = fresh;
        I->slk_made |= 1u << k;
    }
    tecs_entity_t ids[8];
    const void *out[8];
    int n = 1 + op->y % 8;
    uint32_t z = op->z;
    for (int j = 0; j < n; j++, z = (uint32_t)mi_mix(z))
        ids[j] = mi_pick_id(I, z);
    tecs_err_t gm = tecs_get_many(I->w, c, ids, n, out);
    EXPECT(I, gm == want, "tecs_get_many (sparse): got %s, model says %s", tecs_err_name(gm),
           tecs_err_name(want));
    for (int j = 0; j < n; j++) {
        ment *m = mi_find(I, ids[j]);
        bool has = want == TECS_OK && m && m->st == ST_ALIVE && (m->smask >> k & 1);
        const int64_t *g = tecs_get(I->w, ids[j], c);
        EXPECT(I, (g != NULL) == has, "lookup (sparse): tecs_get %s, the model says %s",
               g ? "found" : "NULL", has ? "it has one" : "none");
        if (has)
            EXPECT(I, *g == m->sval[k], "lookup: value of %s differs", sname[k]);
        if (gm == TECS_OK)
            EXPECT(I, out[j] == g, "tecs_get_many and tecs_get differ (sparse)");
        if (err == TECS_OK)
            EXPECT(I, tecs_handle_get(&fresh, ids[j]) == g, "a fresh sparse handle and tecs_get differ");
        if (k >= 0 && (I->slk_made >> k & 1))
            EXPECT(I, tecs_handle_get(&I->slk[k], ids[j]) == g,
                   "a kept handle of %s and tecs_get differ", sname[k]);
    }
}

/* What tecs_add (add) or tecs_remove of sparse component k on the entity
** m of the model gives now. */
static int sparse_want(const interp *I, int k, const ment *m, bool add)
{
    if (mi_deferred(I))
        return defer_want(k, m);
    if (!m || m->st != ST_ALIVE)
        return TECS_EDEAD;
    bool has = m->smask >> k & 1;
    return add ? (has ? TECS_EEXIST : TECS_OK) : (has ? TECS_OK : TECS_ENOENT);
}

/* The model's side of a tecs_add (add) or tecs_remove of sparse
** component k on id (m) that succeeded: applied, or queued. */
static void sparse_apply(interp *I, int k, tecs_entity_t id, ment *m, bool add)
{
    if (mi_deferred(I)) {
        mi_push_dq(I, &(mcmd){ .op = add ? Q_ADD : Q_REMOVE, .id = id, .comp = NC + k });
        if (!add)
            m->rmq = m->st == ST_ALIVE;
    } else if (add) {
        m->smask |= (uint8_t)(1u << k);
        m->sval[k] = 0;
    } else {
        m->smask &= (uint8_t)~(1u << k);
    }
}

/* tecs_handle_add / tecs_handle_remove (op->y & 1) through a handle kept
** from op to op (or a fresh one): the result and the change of tecs_add /
** tecs_remove (op_sparse_add, op_sparse_remove). */
static void op_sparse_handle(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    tecs_handle_t fresh;
    tecs_err_t want_init = k < 0 ? TECS_ENOCOMP : TECS_OK;
    tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
    EXPECT(I, err == want_init || (err == TECS_ENOMEM && mi_injected(I)),
           "tecs_handle_init: got %s, model says %s", tecs_err_name(err),
           tecs_err_name(want_init));
    if (err != TECS_OK)
        return;
    if (!(I->sh_made >> k & 1) || (op->y & 0x38) == 0x38) {  /* kept long, renewed now and then */
        I->sh[k] = fresh;
        I->sh_made |= 1u << k;
    }
    const tecs_handle_t *h = op->y & 4 ? &fresh : &I->sh[k];
    bool add = op->y & 1;
    tecs_entity_t id = mi_pick_id(I, op->z);
    ment *m = mi_find(I, id);
    int want = sparse_want(I, k, m, add);
    err = add ? tecs_handle_add(h, id) : tecs_handle_remove(h, id);
    if (!mi_result_is(I, err, want, add ? "tecs_handle_add" : "tecs_handle_remove") &&
        want == TECS_OK)
        sparse_apply(I, k, id, m, add);
}

/* tecs_handle_add_many / _remove_many (op->y & 1) on 1-6 ids through the
** kept handle: each id's result as op_sparse_handle predicts it, in order,
** the batch stopping at the first id refused (the ids before it changed
** or queued, *done their number). As in op_toggle_many, no callback body
** runs in this op (its changes would land between the ids of the batch). */
static void op_sparse_many(interp *I, const m_op *op)
{
    int k;
    tecs_comp_t c = pick_sparse(I, op->x, &k);
    if (k < 0)
        return;
    if (!(I->sh_made >> k & 1)) {
        tecs_handle_t fresh;
        tecs_err_t err = tecs_handle_init(I->w, c, &fresh);
        EXPECT(I, err == TECS_OK || (err == TECS_ENOMEM && mi_injected(I)),
               "tecs_handle_init: got %s", tecs_err_name(err));
        if (err != TECS_OK)
            return;
        I->sh[k] = fresh;
        I->sh_made |= 1u << k;
    }
    tecs_entity_t ids[6];
    int32_t n = 1 + (int32_t)(op->y >> 1) % 6;
    for (int32_t j = 0; j < n; j++)
        ids[j] = mi_pick_id(I, op->z ^ (uint32_t)j * 0x9e3779b9u);
    bool add = op->y & 1;
    const char *what = add ? "tecs_handle_add_many" : "tecs_handle_remove_many";
    int32_t done = -1;
    int32_t budget[NCB];
    memcpy(budget, I->budget, sizeof budget);
    memset(I->budget, 0, sizeof I->budget);
    tecs_err_t got = add ? tecs_handle_add_many(&I->sh[k], ids, n, &done)
                         : tecs_handle_remove_many(&I->sh[k], ids, n, &done);
    memcpy(I->budget, budget, sizeof budget);
    for (int32_t j = 0; j < n; j++) {
        ment *m = mi_find(I, ids[j]);
        int want = sparse_want(I, k, m, add);
        if (want != TECS_OK || (got == TECS_ENOMEM && mi_injected(I) && j == done)) {
            if (!mi_result_is(I, got, want, what))
                EXPECT(I, done == j, "%s: done %d, model says %d", what, done, j);
            return;
        }
        sparse_apply(I, k, ids[j], m, add);
    }
    if (!mi_result_is(I, got, TECS_OK, what))
        EXPECT(I, done == n, "%s: done %d of %d", what, done, n);
}

#if TECS_HAS_SNAPSHOT
/* ---- snapshots -------------------------------------------------------------------- */

/* H (an Obj) through a serializer: its 8 bytes as they are (the loaded
** world is on the same host). The load counts a construction. */
static tecs_err_t m_obj_save(const void *value, tecs_snapshot_out_t *out, void *ctx)
{
    (void)ctx;
    return tecs_snapshot_put(out, value, sizeof(Obj));
}

static tecs_err_t m_obj_load(void *dst, const void *data, size_t n, void *ctx)
{
    if (n != sizeof(Obj))
        return TECS_EINVAL;
    memcpy(dst, data, sizeof(Obj));
    ((hook_counts *)ctx)->ctor++;
    return TECS_OK;
}

/* A world to load the model's snapshots into: another chunk size, and H
** registered (hooks, serializer) as in the model's world. */
static tecs_world_t *load_world(interp *I, tw_alloc *al, hook_counts *hc)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = tw_alloc_fn,
        .alloc_ud = al, .rows_per_chunk = tecs_world_rows_per_chunk(I->w) == 1024 ? 64 : 1024 });
    if (w == NULL) {
        mi_failf(I, "tecs_world_new_ex failed");
        return NULL;
    }
    tecs_component_new(w, &(tecs_component_desc_t){
        .name = cname[C_H], .size = sizeof(Obj), .align = _Alignof(Obj), .id = I->cid[C_H],
        .ctor = obj_ctor, .dtor = obj_dtor, .copy = obj_copy, .move = obj_move,
        .hook_ctx = hc, .fields = cfields[C_H], .nfields = cnfields[C_H] });
    tecs_component_serializer(w, I->cid[C_H], &(tecs_serializer_t){
        .serialize = m_obj_save, .deserialize = m_obj_load, .ctx = hc });
    return w;
}

/* The model's indexes and caches, made again in a fresh world before a
** load into it, and a filtered cache there too: what they hold after the
** load is compared with the model. */
typedef struct copies {
    tecs_index_t *ix[MAXIX];
    tecs_cache_t *cs[MAXC];
    tecs_query_t *qs[MAXC];     /* their queries                            */
    mquery q;                   /* a model query, made in the fresh world   */
    tecs_filter_t *fl;          /* its filter on the copied indexes          */
    tecs_cache_t *fc;           /* a cache of both                          */
    mcond cond[MAXCOND];
    int32_t ncond;
} copies;

/* Register the model's components in w with their ids (H is there). */
static void copies_components(interp *I, tecs_world_t *w)
{
    for (int c = 0; c < NC; c++)
        if (c != C_H)
            tecs_component_new(w, &(tecs_component_desc_t){
                .name = cname[c], .size = csize[c], .align = calign[c], .id = I->cid[c],
                .enableable = TOG_MASK >> c & 1, .row_ticks = ROWTICK_MASK >> c & 1,
                .fields = cfields[c], .nfields = cnfields[c],
                .inherit = INHERIT_MASK >> c & 1 });
    for (int k = 0; k < NS; k++)
        tecs_component_new(w, &(tecs_component_desc_t){
            .name = sname[k], .size = ssize[k], .align = ssize[k], .id = I->sid[k],
            .storage = TECS_STORAGE_SPARSE });
    if (tecs_component_lookup(w, "Likes") == 0)
        mr_register(I, w);      /* the relations, for the copied queries */
}

#if TECS_HAS_INDEX
/* An ordered cache's order (model_cb.c's): key bytes, then id. */
static int copies_order(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    const mcache *mc = ctx;
    const void *pa = tecs_get(w, a, mc->I->cid[mc->key]);
    const void *pb = tecs_get(w, b, mc->I->cid[mc->key]);
    int r = pa && pb ? memcmp(pa, pb, csize[mc->key]) : (pa != NULL) - (pb != NULL);
    return r ? r : (a > b) - (a < b);
}

static tecs_query_t *copies_query(interp *I, tecs_world_t *w, const tecs_query_t *q)
{
    for (int32_t k = 0; k < I->nq; k++)
        if (I->qs[k].q == q)
            return tecs_query_new(w, &(tecs_query_desc_t){ .terms = I->qs[k].t,
                                                           .term_count = I->qs[k].nt });
    return NULL;
}

/* Make the model's indexes and caches in w, and a filtered cache over
** query y. */
static void copies_indexes(interp *I, tecs_world_t *w, copies *mr, uint32_t y, uint32_t z)
{
    for (int32_t k = 0; k < I->nix; k++) {
        int f = I->ixs[k].field;
        mr->ix[k] = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = I->cid[ifield[f].comp], .type = ifield[f].type, .offset = ifield[f].offset,
            .kind = I->ixs[k].ordered ? TECS_INDEX_ORDERED : TECS_INDEX_HASH });
        EXPECT(I, mr->ix[k] != NULL, "a copied index: %s", tecs_last_error_msg(w));
    }
    for (int32_t k = 0; k < I->ncs; k++) {
        const mcache *mc = I->cs[k];
        tecs_cache_desc_t d = { .query = mr->qs[k] = copies_query(I, w, mc->q),
                                .ctx = (void *)mc };
        d.order = mc->key >= 0 ? copies_order : NULL;
        mr->cs[k] = d.query ? tecs_cache_new(w, &d) : NULL;
        EXPECT(I, mr->cs[k] != NULL, "a copied cache: %s", tecs_last_error_msg(w));
    }
    if (I->nq == 0)
        return;
    mr->q = I->qs[y % (uint32_t)I->nq];
    mr->q.q = copies_query(I, w, I->qs[y % (uint32_t)I->nq].q);
    EXPECT(I, mr->q.q != NULL, "a copied query: %s", tecs_last_error_msg(w));
    mr->fl = tecs_filter_new(w);
    mr->ncond = 0;              /* no condition: every row of the query */
    if (I->nix > 0) {           /* built on the copies: the model's keys */
        tecs_index_t *own[MAXIX];
        for (int32_t k = 0; k < I->nix; k++)
            own[k] = I->ixs[k].ix, I->ixs[k].ix = mr->ix[k];
        mr->ncond = mi_build_filter(I, mr->fl, mr->cond, z, 1 + (int32_t)(z >> 24) % 4);
        for (int32_t k = 0; k < I->nix; k++)
            I->ixs[k].ix = own[k];
    }
    mr->fc = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = mr->q.q, .filter = mr->fl });
    EXPECT(I, mr->fc != NULL, "a copied filtered cache: %s", tecs_last_error_msg(w));
}

/* After the load: the copies hold what the model says. */
static void copies_compare(interp *I, copies *mr)
{
    tecs_entity_t *got = malloc(((size_t)I->ne + 1) * sizeof *got);
    tecs_entity_t *want = malloc(((size_t)I->ne + 1) * sizeof *want);
    if (got == NULL || want == NULL)
        abort();
    for (int32_t k = 0; k < I->nix; k++) {
        int32_t n = 0;
        for (int32_t i = 0; i < I->ne; i++)
            n += I->e[i].st == ST_ALIVE && (I->e[i].mask >> ifield[I->ixs[k].field].comp & 1);
        EXPECT(I, tecs_index_count(mr->ix[k]) == n, "loaded: index %d counts %d, model %d",
               (int)k, (int)tecs_index_count(mr->ix[k]), (int)n);
    }
    for (int32_t k = 0; k < I->ncs; k++) {
        int32_t ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(mr->q.q), .cache = mr->cs[k]) }, got, I->ne + 1);
        int32_t nw = mi_cache_model(I, I->cs[k], want);
        bool same = ng == nw;
        for (int32_t i = 0; i < nw && same; i++)
            same = I->cs[k]->key < 0 || got[i] == want[i];
        if (same && I->cs[k]->key < 0)
            same = where_is_model(I, mi_cache_query(I, I->cs[k]), NULL, 0, got, ng, &nw);
        EXPECT(I, same, "loaded: cache %d holds %d entities, model %d", (int)k, (int)ng,
               (int)nw);
    }
    if (mr->q.q != NULL && mr->ncond >= 0) {
        int32_t nw, ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(mr->q.q), .query = mr->q.q, .where = mr->fl) }, got, I->ne + 1);
        EXPECT(I, where_is_model(I, &mr->q, mr->cond, mr->ncond, got, ng, &nw),
               "loaded: where gives %d entities, model %d", (int)ng, (int)nw);
        ng = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(mr->q.q), .cache = mr->fc) }, got, I->ne + 1);
        EXPECT(I, where_is_model(I, &mr->q, mr->cond, mr->ncond, got, ng, &nw),
               "loaded: a filtered cache holds %d entities, model %d", (int)ng, (int)nw);
    }
    tecs_filter_free(mr->fl);
    free(got);
    free(want);
}

/* Free what copies_make made (its filter is copies_compare's). */
static void copies_free(copies *mr)
{
    tecs_cache_free(mr->fc);
    for (int32_t k = 0; k < MAXC; k++)
        tecs_cache_free(mr->cs[k]);
    for (int32_t k = 0; k < MAXIX; k++)
        tecs_index_free(mr->ix[k]);
    for (int32_t k = 0; k < MAXC; k++)
        tecs_query_free(mr->qs[k]);
    tecs_query_free(mr->q.q);
}
#else
/* Without the index add-on a copy has no index, cache or filter. */
static void copies_indexes(interp *I, tecs_world_t *w, copies *mr, uint32_t y, uint32_t z)
{
    (void)I, (void)w, (void)mr, (void)y, (void)z;
}

static void copies_compare(interp *I, copies *mr)
{
    (void)I, (void)mr;
}

static void copies_free(copies *mr)
{
    (void)mr;
}
#endif /* TECS_HAS_INDEX */

/* The model's components in w, then its indexes, caches and a filtered
** cache over query y. */
static void copies_make(interp *I, tecs_world_t *w, copies *mr, uint32_t y, uint32_t z)
{
    copies_components(I, w);
    copies_indexes(I, w, mr, y, z);
}

/* Save the world to memory and load it into a fresh world: refused while
** anything is deferred or queued; else the loaded world passes the check,
** holds every model entity with its components, values and bits, and
** saves to the same bytes (so the slots, generations, free list, sparse
** sets and resources are the same). The copy is then discarded. With
** x % 4 != 0 the copy has the model's indexes and caches, and a filtered cache,
** made before the load: they are compared with the model after it. */
static void op_snapshot(interp *I, const m_op *op)
{
    tecs_snapshot_buf_t buf = { 0 }, again = { 0 };
    bool busy = mi_deferred(I) || I->ndq > 0 || I->nlq > 0;
    long inj = I->alloc.failures;
    int err = (int)tecs_snapshot_save_mem(I->w, &buf);
    if (I->alloc.failures > inj && err == TECS_ENOMEM) {
        tecs_snapshot_buf_free(&buf);
        return;
    }
    mi_result_is(I, err, busy ? TECS_EBUSY : TECS_OK, "tecs_snapshot_save_mem");
    if (err != TECS_OK) {
        tecs_snapshot_buf_free(&buf);
        return;
    }
    tw_alloc al = { 0 };
    hook_counts hc = { 0 };
    tecs_world_t *w = load_world(I, &al, &hc);
    if (w == NULL) {
        tecs_snapshot_buf_free(&buf);
        return;
    }
    copies mr = { .ncond = -1 };
    if (op->x % 4 != 0)         /* indexes and caches made before the load */
        copies_make(I, w, &mr, op->y, op->z);
    err = (int)tecs_snapshot_load_mem(w, buf.data, buf.size);
    EXPECT(I, err == TECS_OK, "tecs_snapshot_load_mem: %s", tecs_last_error_msg(w));
    if (err == TECS_OK && op->x % 4 != 0)
        copies_compare(I, &mr);
    if (err == TECS_OK) {
        EXPECT(I, tecs_world_check(w) == TECS_OK, "the loaded world: %s",
               tecs_last_error_msg(w));
        EXPECT(I, tecs_world_entity_count(w) == tecs_world_entity_count(I->w),
               "the loaded world has %d entities, the saved %d", tecs_world_entity_count(w),
               tecs_world_entity_count(I->w));
        for (int32_t i = 0; i < I->ne; i++) {
            const ment *m = &I->e[i];
            if (m->st != ST_ALIVE)
                continue;
            EXPECT(I, tecs_is_alive(w, m->id), "entity %u:%u is not loaded",
                   TECS_ENTITY_INDEX(m->id), TECS_ENTITY_GENERATION(m->id));
            for (int c = 0; c < NC; c++) {
                bool has = m->mask >> c & 1;
                EXPECT(I, tecs_has(w, m->id, I->cid[c]) == has, "loaded: has(%s) should be %d",
                       cname[c], has);
                if (has && (TOG_MASK >> c & 1))
                    EXPECT(I, tecs_is_enabled(w, m->id, I->cid[c]) == !(m->off >> c & 1),
                           "loaded: is_enabled(%s) differs", cname[c]);
                if (has && csize[c]) {
                    const void *p = tecs_get(w, m->id, I->cid[c]);
                    EXPECT(I, p && same_val(c, p, m->val[c]), "loaded: value of %s differs",
                           cname[c]);
                }
            }
            for (int k = 0; k < NS; k++)
                EXPECT(I, tecs_has(w, m->id, I->sid[k]) == (bool)(m->smask >> k & 1),
                       "loaded: has(%s) differs", sname[k]);
        }
        err = (int)tecs_snapshot_save_mem(w, &again);
        EXPECT(I, err == TECS_OK && again.size == buf.size &&
                  memcmp(again.data, buf.data, buf.size) == 0,
               "the loaded world saves to other bytes (%zu, %zu)", again.size, buf.size);
    }
    tecs_world_free(w);
    EXPECT(I, al.blocks == 0 && hooks_live(&hc) == 0 && hc.bad == 0,
           "the loaded world leaks %ld blocks, %ld H values, %ld bad hooks", (long)al.blocks,
           hooks_live(&hc), hc.bad);
    tecs_snapshot_buf_free(&again);
    tecs_snapshot_buf_free(&buf);
}

/* Free the mirror: nothing of it may leak. */
static void mirror_drop(interp *I)
{
    if (I->mirror.w == NULL)
        return;
    tecs_world_free(I->mirror.w);
    I->mirror.w = NULL;
    EXPECT(I, I->mirror.al.blocks == 0 && hooks_live(&I->mirror.hc) == 0 &&
              I->mirror.hc.bad == 0, "the mirror leaks %ld blocks, %ld H values, %ld bad hooks",
           (long)I->mirror.al.blocks, hooks_live(&I->mirror.hc), I->mirror.hc.bad);
}

/* The mirror is the world: it passes the check and saves to the world's
** bytes (slots, generations, free list, archetypes in order, rows in
** order, values, bits, sparse sets, resources). */
static void mirror_compare(interp *I)
{
    tecs_snapshot_buf_t a = { 0 }, b = { 0 };
    long inj = I->alloc.failures;
    int err = (int)tecs_snapshot_save_mem(I->w, &a);
    if (!(I->alloc.failures > inj && err == TECS_ENOMEM)) {
        EXPECT(I, err == TECS_OK, "tecs_snapshot_save_mem: %s", tecs_last_error_msg(I->w));
        EXPECT(I, tecs_world_check(I->mirror.w) == TECS_OK, "the mirror: %s",
               tecs_last_error_msg(I->mirror.w));
        err = (int)tecs_snapshot_save_mem(I->mirror.w, &b);
        EXPECT(I, err == TECS_OK && a.size == b.size && memcmp(a.data, b.data, a.size) == 0,
               "the mirror saves to other bytes than the world (%zu, %zu)", b.size, a.size);
    }
    tecs_snapshot_buf_free(&a);
    tecs_snapshot_buf_free(&b);
}

/* A mirror of the world (op delta): now and then a new one, loaded from a
** base snapshot taken with a mark; else the delta since the mark, applied
** to the mirror, which must then be the world. Refused while anything is
** deferred or queued; a failed allocation of the save leaves the mark
** (the next delta holds its changes too). */
static void op_delta(interp *I, const m_op *op)
{
    bool busy = mi_deferred(I) || I->ndq > 0 || I->nlq > 0;
    tecs_snapshot_buf_t buf = { 0 };
    long inj = I->alloc.failures;
    int err;
    if (I->mirror.w == NULL || op->x % 16 == 0) {
        mirror_drop(I);
        tecs_mark_t mark;
        err = (int)tecs_world_mark(I->w, &mark);
        mi_result_is(I, err, busy ? TECS_EBUSY : TECS_OK, "tecs_world_mark");
        if (err != TECS_OK)
            return;
        err = (int)tecs_snapshot_save_mem(I->w, &buf);
        if (err == TECS_OK) {
            memset(&I->mirror, 0, sizeof I->mirror);
            I->mirror.mark = mark;
            I->mirror.w = load_world(I, &I->mirror.al, &I->mirror.hc);
            err = I->mirror.w ? (int)tecs_snapshot_load_mem(I->mirror.w, buf.data, buf.size)
                              : TECS_OK;
            EXPECT(I, err == TECS_OK, "loading the mirror's base: %s", tecs_err_name(err));
        } else {
            EXPECT(I, I->alloc.failures > inj && err == TECS_ENOMEM,
                   "tecs_snapshot_save_mem: %s", tecs_err_name(err));
        }
    } else {
        tecs_mark_t was = I->mirror.mark;
        copies mr = { .ncond = -1 };
        bool with = op->y % 3 == 0;     /* indexes and caches in the mirror */
        if (with)
            copies_make(I, I->mirror.w, &mr, op->y, op->z);
        err = (int)tecs_delta_save_mem(I->w, &I->mirror.mark, &buf);
        if (I->alloc.failures > inj && err == TECS_ENOMEM) {
            EXPECT(I, memcmp(&was, &I->mirror.mark, sizeof was) == 0,
                   "a failed tecs_delta_save moved its mark");
        } else {
            mi_result_is(I, err, busy ? TECS_EBUSY : TECS_OK, "tecs_delta_save_mem");
        }
        if (err == TECS_OK) {
            err = (int)tecs_delta_apply_mem(I->mirror.w, buf.data, buf.size);
            EXPECT(I, err == TECS_OK, "tecs_delta_apply_mem: %s",
                   tecs_last_error_msg(I->mirror.w));
        }
        if (with && err == TECS_OK)
            copies_compare(I, &mr);
        else if (with)
            mi_filter_free(mr.fl);
        copies_free(&mr);
    }
    tecs_snapshot_buf_free(&buf);
    if (I->mirror.w && err == TECS_OK)
        mirror_compare(I);
}

#endif /* TECS_HAS_SNAPSHOT */

/* The typed macros given a C type whose size is not the component's:
** refused before anything is read (TECS_EINVAL, or NULL), the world and
** its resources as they were (the model changes nothing, and its checks
** compare); an unknown component is the call's error, as untyped. */
typedef struct { unsigned char b[12]; } m_bytes12;
typedef struct { unsigned char b[64]; } m_bytes64;

#define TYPED_TRY(I, c, id, known, T)                                        \
    do {                                                                     \
        T v_;                                                                \
        memset(&v_, 0x5a, sizeof v_);                                        \
        int want_ = (known) ? TECS_EINVAL : TECS_ENOCOMP;                    \
        mi_result_is(I, TECS_SET((I)->w, id, c, T, v_), want_, "TECS_SET");  \
        EXPECT(I, TECS_GET((I)->w, id, c, T) == NULL &&                      \
               (!(known) || tecs_last_error((I)->w) == TECS_EINVAL),         \
               "TECS_GET of a %zu-byte type", sizeof(T));                    \
        EXPECT(I, TECS_GET_MUT((I)->w, id, c, T) == NULL, "TECS_GET_MUT");   \
        TYPED_TRY_RESOURCE(I, c, known, T, v_);                              \
    } while (0)
/* The typed resource calls (the resource add-on's) the same way. */
#if TECS_HAS_RESOURCE
#define TYPED_TRY_RESOURCE(I, c, known, T, v)                                \
    do {                                                                     \
        if (known)                                                           \
            mi_result_is(I, TECS_RESOURCE_SET((I)->w, c, T, v), TECS_EINVAL,  \
                         "TECS_RESOURCE_SET");                               \
        EXPECT(I, TECS_RESOURCE_GET((I)->w, c, T) == NULL &&                 \
               TECS_RESOURCE_GET_MUT((I)->w, c, T) == NULL, "TECS_RESOURCE_GET"); \
    } while (0)
#else
#define TYPED_TRY_RESOURCE(I, c, known, T, v) ((void)(known), (void)(v))
#endif

static void op_typed(interp *I, const m_op *op)
{
    int ci;
    tecs_comp_t c = pick_comp(I, op->x, &ci);
    tecs_entity_t id = mi_pick_id(I, op->z);
    static const uint32_t sizes[6] = { 1, 2, 4, 8, 12, 64 };
    uint32_t k = op->y % 6;
    if (ci >= 0 && sizes[k] == csize[ci])
        k = (k + 1) % 6;                /* a size that is not the component's */
    bool known = ci >= 0;
    switch (k) {
    case 0: TYPED_TRY(I, c, id, known, char); break;
    case 1: TYPED_TRY(I, c, id, known, int16_t); break;
    case 2: TYPED_TRY(I, c, id, known, int32_t); break;
    case 3: TYPED_TRY(I, c, id, known, int64_t); break;
    case 4: TYPED_TRY(I, c, id, known, m_bytes12); break;
    default: TYPED_TRY(I, c, id, known, m_bytes64); break;
    }
}

/* TECS_EACH over one of the program's queries: every step's rows match
** with the model's values, each matching entity comes once; with a break
** after some rows, no iteration is left open. */
static void op_each_macro(interp *I, const m_op *op)
{
    if (I->nq == 0)
        return;
    const mquery *q = &I->qs[op->z % (uint32_t)I->nq];
    bool was = tecs_is_deferred(I->w), same = true;
    int32_t stop = op->x & 1 ? (int32_t)(op->y % 64) : -1, nw = 0, ng = 0;
    for (int32_t i = 0; i < I->ne; i++) {
        if (I->e[i].st == ST_ALIVE && m_match(q, &I->e[i])) {
            I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = I->e[i].id;
            nw++;
        }
    }
    I->checking++;              /* the walk reports writes: hooks run */
    TECS_EACH(q->q, it, i) {
        if (ng == stop)
            break;
        if (i == 0) {
            mi_check_chunk(I, &it, q);
            /* A type of another size gets no field, in the loop or out. */
            bool one = it.sizes[0] == 1;
            EXPECT(I, it.fields[0] == NULL ||
                      (one ? TECS_ROW(it, int16_t, 0, i) == NULL &&
                             TECS_FIELD(&it, int16_t, 0) == NULL
                           : TECS_ROW(it, char, 0, i) == NULL &&
                             TECS_FIELD(&it, char, 0) == NULL),
                   "TECS_ROW / TECS_FIELD of a type of the wrong size");
        }
        uint32_t index = TECS_ENTITY_INDEX(it.entities[i]);
        if ((int32_t)index < I->cap_gen && I->mark[index] == it.entities[i])
            I->mark[index] = 0;               /* a second visit fails */
        else
            same = false;
        ng++;
    }
    I->checking--;
    for (int32_t i = 0; i < I->ne; i++)
        I->mark[TECS_ENTITY_INDEX(I->e[i].id)] = 0;
    if (ng == 0 && tecs_last_error(I->w) == TECS_ENOMEM && mi_injected(I)) {
        I->res->enomem++;
        return;
    }
    EXPECT(I, tecs_is_deferred(I->w) == was, "TECS_EACH left the world %sdeferred",
           was ? "not " : "");
    EXPECT(I, same, "TECS_EACH hands out an entity twice or one the model does not match");
    int32_t want = stop >= 0 && stop < nw ? stop : nw;
    EXPECT(I, ng == want, "TECS_EACH visits %d entities, model %d", (int)ng, (int)want);
}

/* The operation of an add-on that is not built (ADDON_OP). */
void op_off(interp *I, const m_op *op)
{
    (void)I, (void)op;
}

void mi_filter_free(tecs_filter_t *fl)
{
#if TECS_HAS_INDEX
    tecs_filter_free(fl);
#else
    (void)fl;
#endif
}

/* The op table: name, weight in random programs, function. */
/* The index over a relation's values needs both add-ons. */
#if TECS_HAS_RELATION && TECS_HAS_INDEX
#define OP_PAIR_INDEX op_pair_index
#else
#define OP_PAIR_INDEX op_off
#endif

static const struct {
    const char *name;
    int weight;
    void (*fn)(interp *, const m_op *);
} ops[] = {
    { "new", 6, op_new },
    { "new_in", 8, op_new_in },
    { "new_with", 3, op_new_with },
    { "new_bulk", 2, op_new_bulk },
    { "destroy", 8, op_destroy },
    { "add", 10, op_add },
    { "remove", 8, op_remove },
    { "set", 12, op_set },
    { "get", 6, op_get },
    { "query_new", 2, op_query_new },
    { "query_free", 1, op_query_free },
    { "query_check", 2, op_query_check },
    { "iter_open", 3, op_iter_open },
    { "iter_step", 3, op_iter_step },
    { "iter_close", 2, op_iter_close },
    { "delay_new", 3, op_delay_new },
    { "delay_destroy", 3, op_delay_destroy },
    { "apply_news", 1, op_apply_news },
    { "apply_kills", 1, op_apply_kills },
    { "apply_delayed", 1, op_apply_delayed },
    { "reserve", 1, op_reserve },
    { "check", 1, op_check },
    { "index_new", 1, ADDON_OP(TECS_HAS_INDEX, op_index_new) },
    { "index_free", 1, ADDON_OP(TECS_HAS_INDEX, op_index_free) },
    { "where", 4, ADDON_OP(TECS_HAS_INDEX, op_where) },
    { "observer_new", 1, ADDON_OP(TECS_HAS_OBSERVER, op_observer_new) },
    { "observer_remove", 1, ADDON_OP(TECS_HAS_OBSERVER, op_observer_remove) },
    { "body", 2, op_body },
    { "hooks", 1, ADDON_OP(TECS_HAS_OBSERVER, op_hooks) },
    { "cache_new", 1, ADDON_OP(TECS_HAS_INDEX, op_cache_new) },
    { "cache_free", 1, ADDON_OP(TECS_HAS_INDEX, op_cache_free) },
    { "cache_iter", 2, ADDON_OP(TECS_HAS_INDEX, op_cache_iter) },
    { "iter_copy", 1, op_iter_copy },
    { "where_open", 1, ADDON_OP(TECS_HAS_INDEX, op_where_open) },
    { "filter_free_open", 1, ADDON_OP(TECS_HAS_INDEX, op_filter_free_open) },
    { "filter_cycle", 1, ADDON_OP(TECS_HAS_INDEX, op_filter_cycle) },
    { "delay_burst", 1, op_delay_burst },
    { "arch_iter", 2, op_arch_iter },
    { "arch_iter_change", 2, op_arch_iter_change },
    { "where_rev", 2, ADDON_OP(TECS_HAS_INDEX, op_where_rev) },
    { "cache_rev", 1, ADDON_OP(TECS_HAS_INDEX, op_cache_rev) },
    { "delay_new_with", 3, op_delay_new_with },
    { "resource_set", 3, ADDON_OP(TECS_HAS_RESOURCE, op_resource_set) },
    { "resource_remove", 2, ADDON_OP(TECS_HAS_RESOURCE, op_resource_remove) },
    { "resource_get", 2, ADDON_OP(TECS_HAS_RESOURCE, op_resource_get) },
    { "resource_body", 1, ADDON_OP(TECS_HAS_RESOURCE, op_resource_body) },
    { "defer_begin", 2, op_defer_begin },
    { "defer_end", 2, op_defer_end },
    { "entity_state", 3, op_entity_state },
    { "query_all_zero_terms", 1, op_query_all_zero_terms },
    { "world_reset", 1, op_world_reset },
    { "sys_drive_run", 2, ADDON_OP(TECS_HAS_SYSTEM, op_sys_drive_run) },
    { "par_run", 3, ADDON_OP(TECS_HAS_SYSTEM, op_par_run) },
    { "conc_run", 2, ADDON_OP(TECS_HAS_SYSTEM, op_conc_run) },
    { "split_run", 2, ADDON_OP(TECS_HAS_SYSTEM, op_split_run) },
    { "sparse_add", 6, op_sparse_add },
    { "sparse_remove", 5, op_sparse_remove },
    { "sparse_set", 6, op_sparse_set },
    { "sparse_get", 4, op_sparse_get },
    { "enable", 8, op_enable },
    { "change_watch", 4, op_change_watch },
    { "index_new_by_name", 1, ADDON_OP(TECS_HAS_INDEX, op_index_new_by_name) },
    { "snapshot", 1, ADDON_OP(TECS_HAS_SNAPSHOT, op_snapshot) },
    { "delta", 2, ADDON_OP(TECS_HAS_SNAPSHOT, op_delta) },
    { "filter_reuse", 2, ADDON_OP(TECS_HAS_INDEX, op_filter_reuse) },
    { "lookup", 4, op_lookup },
    { "each_macro", 2, op_each_macro },
    { "toggle", 6, op_toggle },
    { "lookup_sparse", 3, op_lookup_sparse },
    { "toggle_many", 4, op_toggle_many },
    { "where_values", 3, ADDON_OP(TECS_HAS_INDEX, op_where_values) },
    { "sparse_handle", 6, op_sparse_handle },
    { "sparse_many", 4, op_sparse_many },
    { "typed", 2, op_typed },
    { "near", 3, ADDON_OP(TECS_HAS_INDEX, op_near) },
    { "pair_add", 8, ADDON_OP(TECS_HAS_RELATION, op_pair_add) },
    { "pair_remove", 4, ADDON_OP(TECS_HAS_RELATION, op_pair_remove) },
    { "child_set", 8, ADDON_OP(TECS_HAS_RELATION, op_child_set) },
    { "child_remove", 3, ADDON_OP(TECS_HAS_RELATION, op_child_remove) },
    { "child_cycle", 2, ADDON_OP(TECS_HAS_RELATION, op_child_cycle) },
    { "pair_destroy", 4, ADDON_OP(TECS_HAS_RELATION, op_pair_destroy) },
    { "pair_read", 3, ADDON_OP(TECS_HAS_RELATION, op_pair_read) },
    { "pair_body", 1, ADDON_OP(TECS_HAS_RELATION, op_pair_body) },
    { "pair_index", 2, OP_PAIR_INDEX },
    { "prefab", 3, ADDON_OP(TECS_HAS_RELATION, op_prefab) },
    { "clone", 4, op_clone },
    { "instantiate", 4, ADDON_OP(TECS_HAS_RELATION, op_instantiate) },
};
enum { NOPS = sizeof ops / sizeof ops[0] };

int m_op_count(void)
{
    return NOPS;
}

const char *m_op_name(int op)
{
    return op >= 0 && op < NOPS ? ops[op].name : "?";
}

/* Apply at once what a call at depth 0 queued: the library did, after it. */
void mi_sync(interp *I)
{
    mi_settle(I);
    if (!mi_deferred(I))
        m_flush(I);
}

/* ---- running a program ----------------------------------------------------------- */

static void setup(interp *I)
{
    static const int32_t rows[4] = { 16, 16, 64, 1024 };
    for (;;) {
        I->w = tecs_world_new_ex(&(tecs_world_desc_t){
            .alloc = tw_alloc_fn, .alloc_ud = &I->alloc, .rows_per_chunk = rows[I->p->cfg & 3] });
        if (I->w)
            break;
        EXPECT(I, I->alloc.failures > 0, "tecs_world_new_ex failed");
    }
    for (int k = 0; k < NC; k++) {
        int c = I->p->cfg & 4 ? NC - 1 - k : k;
        tecs_component_desc_t d = { .name = cname[c], .size = csize[c], .align = calign[c],
                                    .enableable = TOG_MASK >> c & 1,
                                    .row_ticks = ROWTICK_MASK >> c & 1, .fields = cfields[c],
                                    .nfields = cnfields[c], .inherit = INHERIT_MASK >> c & 1 };
        if (c == C_G)
            d.id = 100;
        if (c == C_H) {
            d.ctor = h_ctor, d.dtor = h_dtor, d.copy = h_copy, d.move = h_move;
            d.hook_ctx = I;
        }
        while ((I->cid[c] = tecs_component_new(I->w, &d)) == 0)
            EXPECT(I, tecs_last_error(I->w) == TECS_ENOMEM && I->alloc.failures > 0,
                   "registering %s: %s", cname[c], tecs_last_error_msg(I->w));
    }
#if TECS_HAS_SNAPSHOT
    tecs_component_serializer(I->w, I->cid[C_H], &(tecs_serializer_t){
        .serialize = m_obj_save, .deserialize = m_obj_load });
#endif
    for (int k = 0; k < NS; k++) {
        tecs_component_desc_t d = { .name = sname[k], .size = ssize[k], .align = ssize[k],
                                    .storage = TECS_STORAGE_SPARSE };
        while ((I->sid[k] = tecs_component_new(I->w, &d)) == 0)
            EXPECT(I, tecs_last_error(I->w) == TECS_ENOMEM && I->alloc.failures > 0,
                   "registering %s: %s", sname[k], tecs_last_error_msg(I->w));
    }
    mr_setup(I);
    for (int m = 0; m < 4; m++)
        I->kctx[m] = (kill_ctx){ I, m };
    I->e = grow(I->e, &I->cap_e, MAXE + 64, sizeof *I->e);   /* callbacks add, ops hold pointers */
}

/* What a check inside a callback found, reported outside it. */
void mi_report_callbacks(interp *I)
{
    if (I->cbfail) {
        I->cbfail = false;
        mi_failf(I, "in a callback: %s", I->cbmsg);
    }
}

static void reset_budgets(interp *I)
{
    for (int k = 0; k < NCB; k++)
        I->budget[k] = 2;
}

static void teardown(interp *I, bool check)
{
    while (I->nits > 0 && check)
        op_iter_close(I, NULL);
    while (I->nsect > 0 && check)
        op_defer_end(I, NULL);
    if (check) {
        I->step = I->p->n;
        mi_sync(I);
        mi_check_drops(I);
        mi_report_callbacks(I);
        mi_check_all(I);
        if (on(I, MF_MEM) && I->alloc.failures == 0)
            mi_check_memory(I);
    }
    reset_budgets(I);
#if TECS_HAS_SNAPSHOT
    mirror_drop(I);
#endif
    I->freeing = true;
    tecs_err_t freed = tecs_world_free(I->w);
    I->w = NULL;
    if (check) {
        EXPECT(I, freed == TECS_OK, "tecs_world_free: %s", tecs_err_name(freed));
        mi_report_callbacks(I);
        EXPECT(I, I->alloc.blocks == 0 && I->alloc.bytes == 0, "leak: %ld blocks, %zu bytes",
               I->alloc.blocks, I->alloc.bytes);
        EXPECT(I, hooks_live(&I->hc) == 0 && I->hc.bad == 0,
               "after the world is freed: %ld hooked values live, %ld misuses",
               hooks_live(&I->hc), I->hc.bad);
        for (int32_t k = 0; k < I->nobs; k++) {
            int32_t members = 0;
            for (int32_t s = 0; s < I->obs[k]->cap; s++)
                members += I->obs[k]->in[s] != 0;
            EXPECT(I, members == 0 && I->obs[k]->bad == 0,
                   "observer %d: %d entities not announced at world free, %ld bad events",
                   (int)k, (int)members, I->obs[k]->bad);
        }
    }
}

static void release(interp *I)
{
    for (int32_t k = 0; k < I->nobs; k++) {
        free(I->obs[k]->in);
        free(I->obs[k]);
    }
    for (int32_t k = 0; k < I->ngone; k++) {
        free(I->obs_gone[k]->in);
        free(I->obs_gone[k]);
    }
    while (I->all_cs) {
        mcache *mc = I->all_cs;
        I->all_cs = mc->all;
        free(mc);
    }
    for (int32_t k = 0; k < MAXIT; k++)
        free(I->its[k].order);
    while (I->inits) {
        init_rec *r = I->inits;
        I->inits = r->next;
        free(r);
    }
    free(I->e);
    free(I->pr);
    free(I->linked);
    free(I->dq);
    free(I->lq);
    free(I->maxgen);
    free(I->mark);
    for (int32_t k = 0; k < I->ncw; k++) {
        free(I->cw[k].id);
        free(I->cw[k].val);
    }
}

m_result m_run(const m_prog *p, const m_opts *o)
{
    m_result res = { 0 };
    interp *I = calloc(1, sizeof *I);
    if (I == NULL)
        abort();
    I->p = p;
    I->o = *o;
    I->res = &res;
    I->alloc.fail_at = o->fail_at;
    I->off = o->off | m_feature_bits(getenv("TECS_MODEL_OFF"));
    I->ldrops = -1;
    int32_t every = o->check_every > 0 ? o->check_every : 1;
    if (setjmp(I->fail) == 0) {
        setup(I);
        for (I->step = 0; I->step < p->n; I->step++) {
            const m_op *op = &p->ops[I->step];
            I->inj0 = I->alloc.failures;
            tecs_clear_error(I->w);
            reset_budgets(I);
            I->cb_errs = 0;
            I->ndoomed = 0;
            I->nlinked = 0;
            ops[op->op % NOPS].fn(I, op);
            mi_sync(I);
            mi_check_drops(I);
            mi_report_callbacks(I);
            if (I->keys_written && mi_check_caches(I))
                I->keys_written = false;
            res.ops_run++;
            if (I->step % every == every - 1 || mi_injected(I))
                mi_check_all(I);
        }
        teardown(I, true);
    } else if (I->w && I->nits == 0 && (tecs_world_check(I->w) == TECS_OK ||
                                         (I->twice > 0 && tecs_world_check(I->w) == TECS_OK))) {
        teardown(I, false);             /* a corrupt world, or one with iterations
                                           open (their objects may be gone), is
                                           left to leak */
    }
    res.allocs = I->alloc.calls;
    res.injected = I->alloc.failures;
    release(I);
    free(I);
    return res;
}

uint32_t m_feature_bits(const char *list)
{
    uint32_t bits = 0;
    while (list && *list) {
        size_t n = strcspn(list, ",");
        for (int k = 0; k < MF_COUNT; k++)
            if (strlen(mf_name[k]) == n && strncmp(list, mf_name[k], n) == 0)
                bits |= 1u << k;
        if (n == 3 && strncmp(list, "all", 3) == 0)
            bits = (1u << MF_COUNT) - 1;
        list += n + (list[n] == ',');
    }
    return bits;
}

/* ---- programs ------------------------------------------------------------------------ */

void m_prog_random(m_prog *p, uint64_t seed, int32_t n)
{
    uint64_t s = mi_mix(seed) | 1;
    int total = 0;
    for (int i = 0; i < NOPS; i++)
        total += ops[i].weight;
    p->cfg = (uint8_t)tw_rand(&s);
    p->n = n;
    p->ops = malloc(((size_t)n + 1) * sizeof *p->ops);
    if (p->ops == NULL)
        abort();
    for (int32_t i = 0; i < n; i++) {
        int r = (int)(tw_rand(&s) % (uint64_t)total), k = 0;
        while (r >= ops[k].weight)
            r -= ops[k++].weight;
        uint64_t a = tw_rand(&s);
        p->ops[i] = (m_op){ (uint8_t)k, (uint8_t)a, (uint16_t)(a >> 8), (uint32_t)(a >> 32) };
    }
}

void m_prog_from_bytes(m_prog *p, const uint8_t *data, size_t size, int32_t max_ops)
{
    p->cfg = size ? data[0] : 0;
    size_t n = size > 1 ? (size - 1) / 8 : 0;
    if (n > (size_t)max_ops)
        n = (size_t)max_ops;
    p->n = (int32_t)n;
    p->ops = malloc((n + 1) * sizeof *p->ops);
    if (p->ops == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        const uint8_t *b = data + 1 + i * 8;
        p->ops[i] = (m_op){ (uint8_t)(b[0] % NOPS), b[1], (uint16_t)(b[2] | b[3] << 8),
                            (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
                                (uint32_t)b[7] << 24 };
    }
}

uint8_t *m_prog_to_bytes(const m_prog *p, size_t *size)
{
    *size = 1 + (size_t)p->n * 8;
    uint8_t *b = malloc(*size);
    if (b == NULL)
        abort();
    b[0] = p->cfg;
    for (int32_t i = 0; i < p->n; i++) {
        const m_op *o = &p->ops[i];
        uint8_t *d = b + 1 + (size_t)i * 8;
        d[0] = o->op, d[1] = o->x, d[2] = (uint8_t)o->y, d[3] = (uint8_t)(o->y >> 8);
        for (int k = 0; k < 4; k++)
            d[4 + k] = (uint8_t)(o->z >> (8 * k));
    }
    return b;
}

void m_prog_free(m_prog *p)
{
    free(p->ops);
    p->ops = NULL;
    p->n = 0;
}

void m_prog_print(FILE *f, const m_prog *p)
{
    fprintf(f, "program: cfg %u, %d ops\n", p->cfg, (int)p->n);
    for (int32_t i = 0; i < p->n; i++)
        fprintf(f, "  %3d  %-14s x=%-3u y=%-5u z=%u\n", (int)i, m_op_name(p->ops[i].op % NOPS),
                p->ops[i].x, p->ops[i].y, p->ops[i].z);
}

/* Does p without ops [from, from + len) still fail? If so, keep the cut. */
static bool try_cut(m_prog *p, int32_t from, int32_t len, const m_opts *o)
{
    m_prog q = { p->cfg, p->n - len, malloc(((size_t)p->n + 1) * sizeof *p->ops) };
    if (q.ops == NULL)
        abort();
    memcpy(q.ops, p->ops, (size_t)from * sizeof *p->ops);
    memcpy(q.ops + from, p->ops + from + len, (size_t)(p->n - from - len) * sizeof *p->ops);
    if (m_run(&q, o).failed) {
        free(p->ops);
        *p = q;
        return true;
    }
    free(q.ops);
    return false;
}

void m_shrink(m_prog *p, const m_opts *o, long max_runs)
{
    m_result r = m_run(p, o);
    if (!r.failed)
        return;
    p->n = r.at < p->n ? r.at + 1 : p->n;     /* nothing after the failure matters */
    long runs = 0;
    int32_t chunk = p->n / 2 > 0 ? p->n / 2 : 1;
    while (runs < max_runs) {
        bool cut = false;
        for (int32_t from = 0; from + chunk <= p->n && runs < max_runs; runs++) {
            if (try_cut(p, from, chunk, o))
                cut = true;
            else
                from += chunk;
        }
        if (!cut && chunk == 1)
            break;
        if (!cut)
            chunk /= 2;
        else if (chunk > p->n / 2 && p->n > 1)
            chunk = p->n / 2;
    }
}

void m_parse_input(const uint8_t *data, size_t size, int32_t max_ops, m_prog *p, m_opts *o)
{
    *o = (m_opts){ .check_every = 1 };
    if (size >= 4 && data[0] == 'O' && data[1] == 'M') {
        o->fail_at = 1 + (data[2] | data[3] << 8);
        o->oom = true;
        data += 4, size -= 4;
    }
    m_prog_from_bytes(p, data, size, max_ops);
}

void m_explain(FILE *f, m_prog *p, const m_opts *o, const m_result *r)
{
    fprintf(f, "model mismatch: %s\n", r->msg);
    if (o->fail_at)
        fprintf(f, "  (allocation %ld made to fail)\n", o->fail_at);
    int32_t before = p->n;
    m_shrink(p, o, 20000);
    m_result s = m_run(p, o);
    fprintf(f, "shrunk from %d to %d ops; it fails with: %s\n", (int)before, (int)p->n, s.msg);
    m_prog_print(f, p);
    size_t size;
    uint8_t *b = m_prog_to_bytes(p, &size);
    fprintf(f, "bytes (printf '...' > fuzz/regress/NAME):\n  ");
    if (o->fail_at)
        fprintf(f, "OM\\x%02x\\x%02x", (unsigned)((o->fail_at - 1) & 0xff),
                (unsigned)((o->fail_at - 1) >> 8 & 0xff));
    for (size_t i = 0; i < size; i++)
        fprintf(f, "\\x%02x", b[i]);
    fprintf(f, "\n");
    free(b);
}

int m_replay_dir(const char *dir, int32_t max_ops, long *files)
{
    DIR *d = opendir(dir);
    int failures = 0;
    *files = 0;
    if (d == NULL)
        return 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        FILE *fp = fopen(path, "rb");
        if (fp == NULL)
            continue;
        uint8_t buf[1 << 16];
        size_t size = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        m_prog p;
        m_opts o;
        m_parse_input(buf, size, max_ops, &p, &o);
        m_result r = m_run(&p, &o);
        (*files)++;
        if (r.failed) {
            fprintf(stderr, "%s:\n", path);
            m_explain(stderr, &p, &o, &r);
            failures++;
        }
        m_prog_free(&p);
    }
    closedir(d);
    return failures;
}
