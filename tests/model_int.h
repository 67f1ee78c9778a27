/*
** model_int.h — what the parts of the model interpreter share:
** model.c (the model, its checks, the base operations, running programs),
** model_cb.c (callbacks that call back, caches, copied iterators, frees
** while busy, the memory bound), model_par.c (parallel systems) and
** model_rel.c (relations). Not a public header: tests/model.h is.
*/
#ifndef TECS_MODEL_INT_H
#define TECS_MODEL_INT_H

#include "model.h"
#include "hooks.h"
#include "private.h"

#include <setjmp.h>

enum { NC = 8, MAXQ = 6, MAXIT = 3, MAXE = 256, NDEAD = 64, MAXIX = 4, MAXCOND = 8,
       MAXOB = 4, MAXC = 3 };
enum { C_A, C_B, C_T1, C_T2, C_V, C_H, C_C, C_G };
extern const uint32_t csize[NC];         /* bytes of each component       */
extern const uint32_t calign[NC];
extern const char *const cname[NC];
/* The descriptions the components are registered with (NULL, 0: none). */
extern const tecs_field_t *const cfields[NC];
extern const int32_t cnfields[NC];
#define DATA_MASK 0xf3u          /* components with a value (not T1, T2)  */
/* Sparse components (storage TECS_STORAGE_SPARSE): kept apart from the 8,
** in ment.smask / sval; a queued command names one as comp NC + k, its
** value in val[0]. */
enum { NS = 2 };
enum { S_V, S_T };                       /* an 8-byte value, a tag        */
extern const uint32_t ssize[NS];
extern const char *const sname[NS];
#define TOG_MASK 0x18u           /* enableable components: T2, V          */
#define ROWTICK_MASK 0x12u       /* ticks per row (change detection): B, V */
#define INHERIT_MASK 0x80u       /* instances share it (.inherit): G        */
#define UNKNOWN_COMP 999u

enum { ST_ALIVE, ST_PEND, ST_DELAY };    /* alive, birth queued, delayed birth */
enum { Q_NEW, Q_DESTROY, Q_ADD, Q_REMOVE, Q_SET, Q_KILL, Q_ENABLE, Q_DISABLE, Q_PAIR,
       Q_CLONE, Q_INST };                /* Q_CLONE: id a clone of tgt,
                                            Q_INST: an instance of tgt     */

/* Relations (model_rel.c): ChildOf, a tag (cleanup REMOVE), an exclusive
** int32 value (DESTROY or REMOVE, by cfg), a tag whose cleanup refuses,
** IsA (exclusive, refuses: its sources read its components they lack). */
enum { NR = 5 };
enum { R_CHILD, R_TAG, R_VAL, R_REF, R_ISA };
enum { PAIR_ADD, PAIR_SET, PAIR_REMOVE };   /* a Q_PAIR command's mode    */

/* A pair (rel, tgt) of src; the order of src's targets is sseq's, the
** order of tgt's sources (ChildOf: children) tseq's. */
typedef struct mpair {
    tecs_entity_t src, tgt;
    int rel;
    int32_t val;
    uint64_t sseq, tseq;
} mpair;

typedef struct ment {
    tecs_entity_t id;
    uint8_t st;
    bool kill;                  /* a delayed kill is queued                 */
    bool rmq;                   /* a remove is queued (iteration open)      */
    uint32_t mask;
    uint32_t off;               /* enableable components disabled (in mask) */
    int64_t val[NC];
    uint8_t smask;              /* sparse components it has                 */
    int64_t sval[NS];
    bool prefab;                /* it has the prefab tag (model_rel.c)      */
    int32_t prefab_at;          /* the step it last gained or lost it + 1   */
} ment;

struct init_rec;

typedef struct mcmd {
    uint8_t op;
    uint8_t mode;               /* kill callback mode                       */
    int comp;                   /* model index                              */
    tecs_entity_t id;
    tecs_entity_t tgt;          /* Q_PAIR: the target (mode PAIR_*, rel in
                                   comp, value in val[0])                   */
    uint32_t mask;              /* births: the archetype                    */
    uint32_t vmask;             /* births: components given values          */
    int64_t val[NC];
    struct init_rec *init;
    bool applying;              /* pushed while the library applied queues
                                   (tecs_delayed_apply*, a workers' merge)  */
} mcmd;

/* A term's model component (mquery.ci): a table one (< NC), a sparse one
** (NC + k), a pair term (CI_PAIR: its relation and target in the term),
** component c read from the parent (CI_PARENT + c), the prefab tag
** (CI_PREFAB), or table component c owned or inherited (CI_INHERIT + c). */
enum { CI_PAIR = NC + NS, CI_PARENT = NC + NS + 1, CI_PREFAB = CI_PARENT + NC,
       CI_INHERIT = CI_PREFAB + 1 };

typedef struct mquery {
    tecs_query_t *q;
    int32_t nt;
    int ci[8];                  /* model component per term                 */
    tecs_term_t t[8];
    const struct interp *I;     /* with a pair or parent term: its pairs    */
} mquery;

typedef struct interp interp;

/* A pair of observers (ENTER and LEAVE of terms, or ADD and REMOVE of a
** component) and the set their events build, by slot: it must always equal
** what the model says matches, and be empty once the world is freed. */
typedef struct mobs {
    interp *I;
    bool comp_kind;             /* ADD / REMOVE of comp, else ENTER / LEAVE  */
    int comp;
    mquery q;                   /* the terms (q.q unused)                    */
    tecs_observer_t ids[2];
    tecs_entity_t *in;          /* by slot: the member's id, or 0            */
    int32_t cap;
    long bad;                   /* events that contradict the set            */
} mobs;

/* What an initializer (tecs_new_with) was asked to do and what it saw. */
typedef struct init_rec {
    struct init_rec *next;
    interp *I;
    uint32_t vmask;
    int64_t val[NC];
    bool add_tag;
    bool ran, saw_alive, add_ok;
    int add_err;                /* what tecs_add inside it returned         */
    tecs_entity_t seen;
} init_rec;

/* Feature switches (model.h). */
enum { MF_LIFE = 1 << 0, MF_HOOKS = 1 << 1, MF_OBS = 1 << 2, MF_RES = 1 << 3,
       MF_REFUSE = 1 << 4, MF_WFREE = 1 << 5, MF_FREEING = 1 << 6, MF_CACHE = 1 << 7,
       MF_CACHECB = 1 << 8, MF_ITCOPY = 1 << 9, MF_BUSY = 1 << 10, MF_MEM = 1 << 11,
       MF_LASTERR = 1 << 12, MF_FFREE = 1 << 13, MF_DEFCHK = 1 << 14, MF_STRUCT = 1 << 15,
       MF_CITER = 1 << 16, MF_CBERR = 1 << 17, MF_COUNT = 18 };

/* The kinds of callback that run a body the program chose. */
enum { CB_LIFE, CB_HOOK, CB_OBS, CB_CACHE, NCB };

/* A cache: its query, the component it is ordered by (-1: arrival order). */
typedef struct mcache {
    struct mcache *all;         /* every cache made, freed at the end       */
    interp *I;
    tecs_cache_t *c;
    tecs_query_t *q;
    int key;
} mcache;

/* Iteration kinds: over a query, a cache, a query and a filter. */
enum { IT_QUERY, IT_CACHE, IT_WHERE };

typedef struct kill_ctx {
    interp *I;
    int mode;                   /* 1 check only, 2 make an entity, 3 destroy self */
} kill_ctx;

struct interp {
    const m_prog *p;
    m_opts o;
    m_result *res;
    jmp_buf fail;
    tw_alloc alloc;
    tecs_world_t *w;
    hook_counts hc;
    tecs_comp_t cid[NC];
    tecs_comp_t sid[NS];        /* the sparse components                    */
    ment *e;
    int32_t ne, cap_e;
    mcmd *dq, *lq;              /* deferred, delayed                        */
    int32_t ndq, cap_dq, nlq, cap_lq;
    tecs_entity_t dead[NDEAD];
    int32_t ndead;
    tecs_entity_t last;         /* the id handed out last                   */
    mquery qs[MAXQ];
    int32_t nq;
    struct { tecs_index_t *ix; int field; bool ordered; } ixs[MAXIX];
    int32_t nix;
    tecs_index_t *rix;          /* an index over Owes's values, or NULL ... */
    tecs_entity_t rix_t;        /* ... of this target (TECS_WILDCARD: any)  */
    bool rix_ordered;
    struct {
        tecs_iter_t it;
        int32_t qi;
        bool wrote;             /* rows written, not yet reported           */
        bool ending;            /* the call that may end it runs            */
        uint8_t kind;           /* IT_*                                     */
        mcache *c;              /* IT_CACHE: the cache                      */
        tecs_entity_t *order;   /* IT_CACHE: the order it must hand out     */
        int32_t norder, pos;
        tecs_filter_t *fl;      /* IT_WHERE: the filter, NULL once freed    */
        tecs_index_t *uses[MAXCOND]; /* IT_WHERE: the indexes it names      */
    } its[MAXIT];
    int32_t nits;
    int32_t twice;              /* iterations ended twice, not yet checked  */
    uint32_t off;               /* features switched off                    */
    struct { uint8_t act; uint32_t z; } body[NCB]; /* what callbacks do     */
    int32_t budget[NCB];        /* bodies left in this step, per kind       */
    int32_t in_body;
    int cur_kind;               /* the kind of the body running (CB_*)      */
    tecs_query_t *doomed_q[16]; /* queries of caches freed in cache callbacks,
                                   this step (freed when the delivery ends) */
    int32_t ndoomed;
    uint32_t bodyn;             /* bodies run: varies their targets         */
    bool freeing;               /* tecs_world_free is running               */
    bool cbfail;                /* a check inside a callback failed         */
    char cbmsg[200];
    bool keys_written;          /* a cache key may have changed this step   */
    int32_t checking;           /* inside a comparison: bodies do not run   */
    int32_t cb_errs;            /* calls in callbacks that failed, this step */
    bool in_apply;              /* applying delayed changes: the library
                                   applies what callbacks queue after each
                                   one, so bodies make no structural change */
    mcache *cs[MAXC];
    int32_t ncs;
    mcache *all_cs;
    uint32_t *maxgen;           /* per slot: 1 + highest generation seen    */
    tecs_entity_t *mark;        /* per slot: scratch for set comparison     */
    int32_t cap_gen;
    init_rec *inits;
    mobs *obs[MAXOB];
    int32_t nobs;
    mobs *obs_gone[64];         /* removed ones, kept until the end          */
    int32_t ngone;
    tecs_entity_t born[256];    /* made by kill callbacks, in order         */
    int32_t nborn, born_pos;
    long cb_bad;
    kill_ctx kctx[4];
    int32_t step;
    long inj0;                  /* injected failures before this op         */
    int32_t mdrops;             /* queued changes the model dropped, this step */
    int mdrop_err;              /* ... the first one's error                */
    int32_t ldrops;             /* drops a last error reported, this step (-1) */
    int ldrop_err;              /* ... the reported error                   */
    uint32_t rmask;             /* the world's resources, by model component */
    int64_t rval[NC];           /* ... and their values                     */
    uint32_t rremoving;         /* resources whose removal runs             */
    uint8_t rbody[NCB];         /* bodies of each kind also set or remove a
                                   resource (op resource_body)              */
    void *life_ptr;             /* the values H's running lifecycle hook has */
    int32_t nsect;              /* deferred sections the program has open   */
    struct {                    /* change watchers (op change_watch): a    */
        mquery q;               /* query of one change term, ...           */
        tecs_entity_t *id;      /* per slot: the member at its last run    */
        int64_t *val;           /* ... and its value then                  */
        int32_t cap;
        int32_t ran;            /* the step of its last run                */
    } cw[2];
    int32_t ncw;
    struct {                    /* op delta: a mirror of the world, loaded
                                   from a base, then given each delta      */
        tecs_world_t *w;
        tw_alloc al;
        hook_counts hc;
        tecs_mark_t mark;
    } mirror;
    tecs_query_t *sys_q;        /* the query a system uses (sys_drive_run)  */
    tecs_query_t *par_q[4];     /* queries of parallel / concurrent systems
                                   (model_par.c): busy while they live      */
    int32_t npar_q;
    tecs_query_t *split_q;      /* the query a split ends (model_par.c): its
                                   report iterates it, the merge does not   */
    struct {                    /* OOM runs: jobs run at wait, last first   */
        tecs_job_fn job[TECS_MAX_THREADS];
        void *arg[TECS_MAX_THREADS];
        int32_t n;
    } lazy;
    tecs_handle_t lk[NC];       /* op lookup: handles kept from op to op,   */
    uint32_t lk_made;           /* ... by model component (bits)            */
    tecs_handle_t tg[NC];       /* op toggle: handles kept from op to op,   */
    uint32_t tg_made;           /* ... by model component (bits)            */
    tecs_handle_t slk[NS];      /* op lookup_sparse: the same, by sparse    */
    uint32_t slk_made;          /* ... component (bits)                     */
    tecs_handle_t sh[NS];       /* op sparse_handle: handles kept from op   */
    uint32_t sh_made;           /* ... to op, by sparse component (bits)    */
    tecs_comp_t rid[NR];        /* the relations (model_rel.c)              */
    tecs_comp_t prefab;         /* the prefab tag (model_rel.c)             */
    mpair *pr;                  /* the pairs, in no order                   */
    int32_t npr, cap_pr;
    tecs_entity_t *linked;        /* this step's ChildOf ADD events: (child,
                                   parent) twice an event, as they came
                                   (model_rel.c: instances' members)       */
    int32_t nlinked, cap_linked;
    uint64_t pseq;              /* the last order stamp given               */
    uint8_t pbody[NCB];         /* bodies of each kind also make a pair
                                   change (op pair_body)                    */
};

/* A condition of the model's filter. */
typedef struct mcond {
    int kind;                   /* 0 cmp, 1 between, 2 in, 3 and, 4 or, 5 not */
    int ix, cmp;
    int64_t k[3];
    int32_t a, b;
} mcond;

#define EXPECT(I, cond, ...)                                                \
    do {                                                                    \
        if (!(cond))                                                        \
            mi_failf((I), __VA_ARGS__);                                     \
    } while (0)

/* Is feature f on (not switched off)? */
static inline bool on(const interp *I, uint32_t f)
{
    return !(I->off & f);
}

/*
** The add-ons the library was built with (TECS_HAS_INDEX ... =1 or 0, from
** CMake). The op table keeps a row for every operation, so a program means
** the same in every build; an operation of an add-on that is not built is
** op_off, which changes nothing: ADDON_OP(TECS_HAS_INDEX, op_where) is
** op_where or op_off. The code of an add-on's operations, the state checks
** that read it and the callback bodies that call it are built only with it.
*/
#if !defined(TECS_HAS_INDEX) || !defined(TECS_HAS_OBSERVER) || !defined(TECS_HAS_SYSTEM) || \
    !defined(TECS_HAS_SNAPSHOT) || !defined(TECS_HAS_RESOURCE) || !defined(TECS_HAS_RELATION)
#error "the model needs TECS_HAS_INDEX ... TECS_HAS_RELATION (tests/CMakeLists.txt)"
#endif
#define ADDON_OP(has, fn) ADDON_OP_(has, fn)
#define ADDON_OP_(has, fn) ADDON_OP_##has(fn)
#define ADDON_OP_1(fn) fn
#define ADDON_OP_0(fn) op_off
void op_off(interp *I, const m_op *op);
/* Free a filter (NULL: none); without the index add-on there is none. */
void mi_filter_free(tecs_filter_t *fl);

/* model.c */
int32_t mi_build_filter(interp *I, tecs_filter_t *fl, mcond *cs, uint32_t z, int32_t n);
void mi_check_all(interp *I);
void mi_check_chunk(interp *I, const tecs_iter_t *it, const mquery *q);
bool mi_deferred(const interp *I);
bool mi_delay_new(interp *I, tecs_archetype_t *a, uint32_t mask, uint32_t y, uint32_t z);
void mi_failf(interp *I, const char *fmt, ...) TECS__PRINTF(2, 3);
/* Stop the program without failing it (m_result.cut): what follows a known
** limit of the library cannot be predicted. */
void mi_cut(interp *I, const char *why);
void mi_fill_val(int c, void *dst, int64_t v);
ment *mi_find(interp *I, tecs_entity_t id);
tecs_archetype_t *mi_get_arch(interp *I, uint32_t mask, uint32_t seed);
int mi_got_err(interp *I, bool ok);
void mi_index_free(interp *I, int32_t k, bool refuse_all);
tecs_index_t *mi_index_new(interp *I, int f, bool ordered, int want);
/* The same with the field given by name, through the description. */
tecs_index_t *mi_index_new_by_name(interp *I, int f, bool ordered, int want);
bool mi_injected(const interp *I);
void mi_iter_closed(interp *I);
void mi_iter_step(interp *I, uint32_t write);
int mi_iterated(const interp *I, int32_t qi);
int mi_it_open(const interp *I, int32_t i);
bool mi_free_result(int busy, bool refuse_all, int got, int *want);
int32_t mi_its_push(interp *I, int32_t qi, uint8_t kind);
tecs_key_t mi_key_of(int f, int64_t k);
uint64_t mi_mix(uint64_t x);
tecs_entity_t mi_pick_id(interp *I, uint32_t z);
int64_t mi_pick_key(interp *I, int f, uint32_t z);
void mi_push_cmd(mcmd **q, int32_t *n, int32_t *cap, const mcmd *c);
void mi_push_dq(interp *I, const mcmd *c);
bool mi_query_free(interp *I, int32_t qi, bool refuse_all);
void mi_query_new(interp *I, int32_t nt, uint32_t z, bool refuse_all);
void mi_report_callbacks(interp *I);
bool mi_result_is(interp *I, int got, int want, const char *what);
bool mi_drop_report(interp *I);
void mi_check_drops(interp *I);
void mi_settle(interp *I);
void mi_world_check(interp *I, const char *what);
void mi_sync(interp *I);
ment *m_add_ent(interp *I, tecs_entity_t id, uint8_t st, uint32_t mask);
void m_flush(interp *I);
void m_kill(interp *I, ment *m);
/* Does m match q: its components, and its enabled bits as the toggle
** terms read them? */
bool m_match(const mquery *q, const ment *m);
/* Has m the component of q's term t, as the term's toggle reads it? */
bool m_term_has(const mquery *q, int32_t t, const ment *m);
/* Has q a term of a sparse component (model component NC + k)? */
static inline bool mq_sparse(const mquery *q)
{
    for (int32_t t = 0; t < q->nt; t++)
        if (q->ci[t] >= NC)
            return true;
    return false;
}
/* The program's number of query q, -1 if it is not one of the program's. */
static inline int32_t mi_qindex(const interp *I, const tecs_query_t *q)
{
    for (int32_t k = 0; k < I->nq; k++)
        if (I->qs[k].q == q)
            return k;
    return -1;
}
void op_apply_delayed(interp *I, const m_op *op);
void op_apply_kills(interp *I, const m_op *op);
void op_apply_news(interp *I, const m_op *op);

/* model_cb.c */
void mi_cache_free(interp *I, int32_t k, bool refuse_all);
mcache *mi_cache_new(interp *I, int32_t qi, uint32_t y, bool refuse_all);
bool mi_check_caches(interp *I);
/* The model's members of mc into out (in its order if it has one), and its
** query: for a copy of mc in another world. */
int32_t mi_cache_model(interp *I, const mcache *mc, tecs_entity_t *out);
const mquery *mi_cache_query(interp *I, const mcache *mc);
void mi_check_memory(interp *I);
void mi_run_body(interp *I, int kind, mcache *own);
void h_copy(void *dst, const void *src, int32_t n, void *ctx);
void h_ctor(void *dst, int32_t n, void *ctx);
void h_dtor(void *ptr, int32_t n, void *ctx);
void h_move(void *dst, void *src, int32_t n, void *ctx);
void op_body(interp *I, const m_op *op);
void op_cache_free(interp *I, const m_op *op);
void op_cache_iter(interp *I, const m_op *op);
void op_cache_new(interp *I, const m_op *op);
void op_delay_burst(interp *I, const m_op *op);
void op_filter_cycle(interp *I, const m_op *op);
void op_filter_free_open(interp *I, const m_op *op);
void op_hooks(interp *I, const m_op *op);
void op_iter_copy(interp *I, const m_op *op);
void op_where_open(interp *I, const m_op *op);
/* Reverse where and cache forms (.reverse) against the forward
** order and the model: the helpers model.c and model_cb.c share. */
typedef struct mi_rev_walk {
    tecs_entity_t *got;         /* what the each-function saw, up to cap    */
    int32_t n, cap, stop_at;    /* it returns true at the stop_at-th call   */
} mi_rev_walk;
bool mi_rev_record(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx);
/* The ids of an iteration read each step from its last row. */
int32_t mi_rev_steps(tecs_iter_t it, tecs_entity_t *out, int32_t cap);
/* rev[0..n) is fwd[0..nf) read from its end. */
bool mi_reversed(const tecs_entity_t *fwd, int32_t nf, const tecs_entity_t *rev, int32_t n);
void op_cache_rev(interp *I, const m_op *op);
/* Resources (model_cb.c): the ops, a body's call, the state check. */
void op_resource_set(interp *I, const m_op *op);
void op_resource_remove(interp *I, const m_op *op);
void op_resource_get(interp *I, const m_op *op);
void op_resource_body(interp *I, const m_op *op);
void mi_check_resources(interp *I);
tecs_comp_t mi_pick_comp(interp *I, uint8_t x, int *ci);
int64_t mi_mkval(uint32_t a, uint32_t b);
bool mi_same_val(int c, const void *p, int64_t v);
void op_sys_drive_run(interp *I, const m_op *op);

/* model_par.c: parallel and concurrent systems, splits */
void op_par_run(interp *I, const m_op *op);
void op_conc_run(interp *I, const m_op *op);
void op_split_run(interp *I, const m_op *op);

/* model_rel.c: relations. Without the add-on there are no pairs: m_destroy
** is m_kill, the rest does nothing. */
void mr_setup(interp *I);
/* Destroy m as the library does: what dies with it (its subtree, DESTROY
** sources, transitively) dies too; TECS_EBUSY and no change if one of
** those is a REFUSE target. */
int m_destroy(interp *I, ment *m);
/* Would destroying m be refused? */
bool mr_refused(interp *I, const ment *m);
/* m dies: the pairs it holds and those naming it go. */
void mr_forget(interp *I, tecs_entity_t id);
/* A queued pair change applies (Q_PAIR): the drop's error or TECS_OK. */
int mr_apply(interp *I, const mcmd *c);
/* dst (just born) takes src's pairs, as tecs_clone copies them. */
void mr_clone(interp *I, tecs_entity_t src, tecs_entity_t dst);
/* The n roots (pending, or just taken) are born instances of the live
** prefab src, each with its copy of src's subtree, as tecs_instantiate
** makes them: the copies' ids are read from the world (the walks of the
** roots' subtrees; queued, the step's ChildOf events, since later queued
** changes may have destroyed some), which the checks compare with the
** model after. */
void mr_instantiate(interp *I, tecs_entity_t src, const tecs_entity_t *roots, int32_t n,
                    bool queued);
/* The entities tecs_instantiate of src would make: its subtree's size. */
int32_t mr_subtree_size(const interp *I, tecs_entity_t src);
void mr_check(interp *I);
bool mr_has_parent(const interp *I, tecs_entity_t id);
/* Has id a base (IsA: its archetype holds the base's tag)? */
bool mr_has_base(const interp *I, tecs_entity_t id);
/* Does entity id hold term t of model component ci (>= CI_PAIR)? */
bool mr_term_has(const interp *I, const tecs_term_t *t, int ci, tecs_entity_t id);
/* The parent of id (0: none). */
tecs_entity_t mr_parent(const interp *I, tecs_entity_t id);
/* The entity whose value of table component c the live m reads: m if it
** has c, else the first base down its IsA chain that has it; NULL. */
const ment *mr_holder(const interp *I, const ment *m, int c);
/* Turn term t of q (not its first) into a pair term or a term read from
** the parent (z's bits choose), if the add-on is built and q has none. */
void mr_pair_term(interp *I, mquery *q, int32_t t, uint32_t z);
/* Op prefab: a live entity gains or loses the prefab tag. */
void op_prefab(interp *I, const m_op *op);
size_t mr_memory_allow(const interp *I);
/* Register the relations in w (a world built directly), with I's ids. */
void mr_register(interp *I, tecs_world_t *w);
/* ids[0..n) without ChildOf, into out: @return their count. */
int32_t mr_unparented(const interp *I, const tecs_comp_t *ids, int32_t n, tecs_comp_t *out);
void op_pair_add(interp *I, const m_op *op);
void op_pair_remove(interp *I, const m_op *op);
void op_child_set(interp *I, const m_op *op);
void op_child_remove(interp *I, const m_op *op);
void op_child_cycle(interp *I, const m_op *op);
void op_pair_destroy(interp *I, const m_op *op);
void op_pair_read(interp *I, const m_op *op);
void op_pair_body(interp *I, const m_op *op);
void op_pair_index(interp *I, const m_op *op);
/* A body's pair change (queued: a callback is deferred). */
void mr_body(interp *I, int kind, uint32_t z);

#endif
