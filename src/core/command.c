/*
** command.c — queued structural changes.
**
** Two queues, one format:
**
**     deferred   changes made while an iteration (or a callback) is open;
**                applied, in call order, when the outermost one ends.
**     delayed    delayed births and destroys (tinyecs's lifecycle); applied only
**                by tecs_delayed_apply_new / tecs_delayed_apply_destroy / tecs_delayed_apply.
**
** A queue is an array of commands plus an arena for what they carry (ids,
** value lists, copies of values). The arena is a list of blocks that never
** move, so a value with hooks is constructed in place and stays valid:
**
**     cmds:  [NEW e7 arch3 x*] [SET e2 Obj val*] [DESTROY e5] [NEW e9 arch0] ...
**     arena: | x: n nvals vals* init ctx | vals[] | Obj bytes | ids[] | ...
**                                              (blocks, 64-aligned)
**
** A command is 32 bytes: a head (op, flags, component), the entity, the
** archetype of a birth (a kill's ctx), and one pointer-sized slot. A small
** value without hooks (up to 8 bytes: a Position) is kept in the slot
** itself: [SET e2 Pos {1,2}], and so is a birth's only such value, or a
** kill's callback. A birth's other plain values are packed in the arena,
** a mask of the columns given, then each value at its alignment:
**
**     packed: | mask (8) | Pos (8) | Vel (16) |       no list, no pointers
**
** so that a queued birth costs about its command and its values: at most
** about twice the row and slot it will have. What needs more (values with
** hooks, constructed where they stay; an initializer; a bulk birth's ids)
** goes to the arena in an extra part x.
**
** Memory goes back: the command array grows by half, and once no queued
** command needs the arena (every birth applied) the arena keeps at most
** ARENA_SPARE bytes and the array SPARE_CMDS commands (or twice those still
** queued), whatever the peak was.
**
** A set or add queued right behind the birth of its entity joins that
** command, which becomes a NEW_SET: [NEW_SET e8 root +Pos {3,4}]. Nobody
** can see a pending entity, so nothing can come between the two. At the
** flush a NEW_SET is one birth straight into its final archetype when no
** listener watches those components (else the birth, then the change, with
** their events as before); a run of NEW_SETs alike (same archetype, same
** component) is placed in one go: rows reserved once, values copied from
** the commands. Later commands of the same entity (another set, a remove,
** a destroy) stay commands of their own and apply after it, in order.
**
** An entity created while deferred gets its id at once: its slot is taken
** and marked PENDING, so it is not alive until its NEW is applied. Every
** command names its entity by full id, so a command whose entity died (or
** whose slot was reused) in the meantime is stale and is skipped; that is
** how destroying a pending birth cancels it, and why a stale delayed kill
** never hits a new entity.
**
** Applying a command can run listeners and callbacks; what they change is
** appended to the deferred queue and applied in the same pass, in order.
** Queueing a value can run its copy hook, which may queue changes too: so a
** command is built in a local copy and pushed last, and nothing keeps a
** pointer into the command array across a hook.
** A command that fails for lack of memory stays queued with everything after
** it. A command whose entity died (or whose birth was cancelled) is stale
** and skipped. Any other that cannot apply (adding a component the entity
** got meanwhile, a unique key taken by then) is dropped, never silently:
** the apply or flush counts it (w->cmd.dropped, tecs_dropped_changes), and
** ends with the last error naming the count and the first cause; a
** tecs_delayed_apply* call returns that error.
**
** Commands apply through the engine (store.c), as the public calls perform
** them when the world is not deferred; the public front end (entity.c)
** queues here. A sparse component's change is never folded into a
** birth (its value is in no archetype). Calls: base.c, entity_index.c,
** component.c, archetype.c, sparse.c, store.c.
*/
#include "private.h"

#include <stddef.h>

#define ARENA_FIRST (4 * 1024)  /* the first block; each next one twice ...   */
#define ARENA_BLOCK (64 * 1024) /* ... up to this (a larger value: its size) */
#define ARENA_HEAD  64
#define ARENA_SPARE (2 * ARENA_BLOCK) /* arena bytes an emptied queue keeps */
#define SPARE_CMDS  1024        /* commands an emptied queue keeps room for */

/* ---- the arena ------------------------------------------------------- */

typedef struct arena_mark {
    tecs__ablock *cur;
    size_t used;
} arena_mark;

static arena_mark arena_save(const tecs__cmdbuf *b)
{
    return (arena_mark){ b->cur, b->cur ? b->cur->used : 0 };
}

static void arena_restore(tecs__cmdbuf *b, arena_mark m)
{
    b->cur = m.cur;
    if (m.cur)
        m.cur->used = m.used;
}

static char *block_data(tecs__ablock *k)
{
    return (char *)k + ARENA_HEAD;
}

/* size bytes aligned to 64 at most; NULL when out of memory. */
static void *arena_alloc(tecs_world_t *w, tecs__cmdbuf *b, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    tecs__ablock *k = b->cur;
    if (k && k->used + size <= k->cap) {
        void *p = block_data(k) + k->used;
        k->used += size;
        return p;
    }
    tecs__ablock *next = k ? k->next : b->head;
    if (next == NULL || next->cap < size) {
        size_t cap = k && k->cap < ARENA_BLOCK ? k->cap * 2 : k ? ARENA_BLOCK : ARENA_FIRST;
        cap = size > cap ? size : cap;
        void *raw;
        tecs__ablock *n = tecs__alloc_aligned(w, cap + ARENA_HEAD, &raw);
        if (n == NULL)
            return NULL;
        *n = (tecs__ablock){ .next = next, .cap = cap, .raw = raw };
        if (k)
            k->next = n;
        else
            b->head = n;
        next = n;
    }
    next->used = size;
    b->cur = next;
    return block_data(next);
}

/* arena_restore, unless commands were queued since the mark (by a hook
** that ran meanwhile): their values live after it. */
static void arena_undo(tecs__cmdbuf *b, arena_mark m, int32_t count)
{
    if (b->count == count)
        arena_restore(b, m);
}

static void arena_reset(tecs__cmdbuf *b)
{
    b->cur = NULL;
}

/* Free the blocks past the first ones that together hold at most
** ARENA_SPARE bytes, kept for the next changes; no command may use the
** arena. */
static void arena_trim(tecs_world_t *w, tecs__cmdbuf *b)
{
    size_t kept = 0;
    tecs__ablock **link = &b->head;
    while (*link && kept + (*link)->cap <= ARENA_SPARE) {
        kept += (*link)->cap;
        link = &(*link)->next;
    }
    for (tecs__ablock *k = *link, *next; k; k = next) {
        next = k->next;
        tecs__free_aligned(w, k->raw, k->cap + ARENA_HEAD);
    }
    *link = NULL;
    b->cur = NULL;
}

static void arena_fini(tecs_world_t *w, tecs__cmdbuf *b)
{
    for (tecs__ablock *k = b->head, *next; k; k = next) {
        next = k->next;
        tecs__free_aligned(w, k->raw, k->cap + ARENA_HEAD);
    }
    b->head = b->cur = NULL;
}

/* ---- building commands ----------------------------------------------- */

static tecs_err_t oom(tecs_world_t *w)
{
    return tecs__err(w, TECS_ENOMEM, "out of memory queueing a change");
}

/* Copy a value list (each n long) into the arena, values constructed. */
static tecs_value_t *copy_vals(tecs_world_t *w, tecs__cmdbuf *b, int32_t n, int32_t nvals,
                               const tecs_value_t *vals)
{
    tecs_value_t *out = arena_alloc(w, b, (size_t)nvals * sizeof *out + 1);
    if (out == NULL)
        return NULL;
    for (int32_t i = 0; i < nvals; i++) {
        const tecs__comp *ci = tecs__comp_get(w, vals[i].comp);
        out[i] = (tecs_value_t){ vals[i].comp, NULL };
        if (ci->size == 0)
            continue;
        void *p = arena_alloc(w, b, (size_t)n * ci->size);
        if (p == NULL) {
            /* Undo the copies made so far. */
            for (int32_t j = 0; j < i; j++)
                if (out[j].ptr)
                    tecs__comp_dtor(w, tecs__comp_get(w, out[j].comp), (void *)out[j].ptr,
                                    n);
            return NULL;
        }
        if (ci->ctor == NULL && ci->copy == NULL) {
            memcpy(p, vals[i].ptr, (size_t)n * ci->size);
        } else {
            tecs__comp_ctor(w, ci, p, n);
            tecs__comp_copy(w, ci, p, vals[i].ptr, n);
        }
        out[i].ptr = p;
    }
    return out;
}

/* The arena part of c, for the ops that have one (else NULL). */
static inline const tecs__cmdx *cmd_x(const tecs__cmd *c)
{
    if (c->op == TECS__OP_NEW)
        return c->flags & (TECS__CMD_INLINE | TECS__CMD_PACKED) ? NULL : c->x;
    return c->op == TECS__OP_NEW_BULK ? c->x : NULL;
}

/* Does c keep something in the arena? */
static inline bool uses_arena(const tecs__cmd *c)
{
    return (c->flags & (TECS__CMD_VAL | TECS__CMD_PACKED | TECS__CMD_DATA)) || cmd_x(c);
}

/* Destroy the copies of values that c holds in the arena. */
static void drop_vals(tecs_world_t *w, const tecs__cmd *c)
{
    if (c->flags & TECS__CMD_VAL)
        tecs__comp_dtor(w, tecs__comp_get(w, c->val->comp), (void *)c->val->ptr, 1);
    const tecs__cmdx *x = cmd_x(c);
    for (int32_t i = 0; x && i < x->nvals; i++)
        if (x->vals[i].ptr)
            tecs__comp_dtor(w, tecs__comp_get(w, x->vals[i].comp), (void *)x->vals[i].ptr,
                            x->n);
}

/* Resize the command array to cap (at least count); false if out of
** memory, the array then as it was. */
static bool resize_cmds(tecs_world_t *w, tecs__cmdbuf *b, int32_t cap)
{
    tecs__cmd *p = tecs__realloc(w, b->cmds, (size_t)b->cap * sizeof *p,
                                 tecs__bytes((uint64_t)cap, sizeof *p));
    if (p == NULL && cap > 0)
        return false;
    b->cmds = p;
    b->cap = cap;
    return true;
}

/* room's slow path: grow by half (a queue's slack stays under half its
** commands, not a whole doubling). */
static TECS__NOINLINE tecs_err_t grow_cmds(tecs_world_t *w, tecs__cmdbuf *b)
{
    if (b->cap == INT32_MAX)
        return tecs__err(w, TECS_ELIMIT, "too many queued changes");
    int64_t cap = b->cap < 64 ? 64 : (int64_t)b->cap + b->cap / 2;
    if (!resize_cmds(w, b, cap > INT32_MAX ? INT32_MAX : (int32_t)cap))
        return oom(w);
    return TECS_OK;
}

/* Room for one more command. */
static inline tecs_err_t room(tecs_world_t *w, tecs__cmdbuf *b)
{
    if (TECS__LIKELY(b->count < b->cap))
        return TECS_OK;
    return grow_cmds(w, b);
}

/* Give memory back after an apply: the arena's blocks beyond ARENA_SPARE
** bytes once no queued command uses it, and the command array's room
** beyond SPARE_CMDS (or beyond the commands still queued, when it holds
** more than twice those). Shrinking is a hint: out of memory keeps all. */
static void queue_trim(tecs_world_t *w, tecs__cmdbuf *b)
{
    bool used = false;
    for (int32_t i = 0; i < b->count && !used; i++)
        used = uses_arena(&b->cmds[i]);
    if (!used)
        arena_trim(w, b);
    if (b->cap > SPARE_CMDS && b->cap / 2 > b->count)
        resize_cmds(w, b, b->count > SPARE_CMDS ? b->count : SPARE_CMDS);
}

static tecs_err_t push(tecs_world_t *w, tecs__cmdbuf *b, const tecs__cmd *c)
{
    if (room(w, b))
        return TECS_ENOMEM;
    b->cmds[b->count++] = *c;
    return TECS_OK;
}

/* The arena part of a birth command (see queue_new); NULL when out of
** memory, the arena then to be restored by the caller. */
static tecs__cmdx *new_extra(tecs_world_t *w, tecs__cmdbuf *b, int32_t n, int32_t nvals,
                             const tecs_value_t *vals, bool bulk, tecs_init_fn init, void *ctx)
{
    tecs__cmdx *x = arena_alloc(w, b, sizeof *x);
    if (x == NULL)
        return NULL;
    *x = (tecs__cmdx){ .n = n, .nvals = nvals, .init = init, .ctx = ctx };
    if (bulk && (x->ids = arena_alloc(w, b, (size_t)n * sizeof *x->ids + 1)) == NULL)
        return NULL;
    if (nvals && (x->vals = copy_vals(w, b, n, nvals, vals)) == NULL)
        return NULL;
    return x;
}

/* Round off up to a multiple of align (a power of two). */
static inline size_t align_up(size_t off, uint32_t align)
{
    return (off + align - 1) & ~(size_t)(align - 1);
}

/* The values of a birth into a, by column (NULL: not given); how many are
** given. false if one has hooks or an alignment the arena does not give
** (16), so that they cannot be packed. */
static bool by_column(const tecs_world_t *w, const tecs_archetype_t *a, int32_t nvals,
                      const tecs_value_t *vals, const void **src, int32_t *given)
{
    *given = 0;
    for (int32_t i = 0; i < nvals; i++) {
        int32_t col = tecs__arch_col(a, vals[i].comp);
        const tecs__comp *ci = &w->comp.comps[vals[i].comp];
        if (col < 0)
            continue;           /* a tag: the archetype gives it */
        if (ci->ctor || ci->copy || ci->move || ci->dtor || ci->align > 16)
            return false;
        src[col] = vals[i].ptr;
        ++*given;
    }
    return true;
}

/* Pack the plain values src (by column) of a birth into a in the arena:
** the mask of the columns given, then each value at its alignment. */
static unsigned char *pack(tecs_world_t *w, tecs__cmdbuf *b, const tecs_archetype_t *a,
                           const void *const *src)
{
    uint64_t mask = 0;
    size_t size = sizeof mask;
    for (int32_t col = 0; col < a->ncols; col++) {
        if (src[col] == NULL)
            continue;
        mask |= 1ull << col;
        size = align_up(size, w->comp.comps[a->col_comp[col]].align) + a->col_size[col];
    }
    unsigned char *p = arena_alloc(w, b, size);
    if (p == NULL)
        return NULL;
    memcpy(p, &mask, sizeof mask);
    size = sizeof mask;
    for (int32_t col = 0; col < a->ncols; col++) {
        if (src[col] == NULL)
            continue;
        size = align_up(size, w->comp.comps[a->col_comp[col]].align);
        memcpy(p + size, src[col], a->col_size[col]);
        size += a->col_size[col];
    }
    return p;
}

/* Give a single birth its plain values in the command: none, one small
** value in place, or packed in the arena. @return 1 when done, 0 if they
** are not plain, -1 when out of memory (nothing changed). */
static int put_birth_vals(tecs_world_t *w, tecs__cmdbuf *b, tecs__cmd *c, int32_t nvals,
                          const tecs_value_t *vals)
{
    const void *src[TECS_MAX_ARCH_COMPONENTS] = { 0 };
    int32_t given;
    const tecs_archetype_t *a = c->arch;
    if (!by_column(w, a, nvals, vals, src, &given))
        return 0;
    for (int32_t col = 0; given == 1 && col < a->ncols; col++) {
        if (src[col] && a->col_size[col] <= TECS__CMD_INLINE_MAX) {
            c->flags = TECS__CMD_INLINE;
            c->comp = a->col_comp[col];
            memcpy(c->value, src[col], a->col_size[col]);
            return 1;
        }
    }
    if (given == 0)
        return 1;
    if ((c->packed = pack(w, b, a, src)) == NULL)
        return -1;
    c->flags = TECS__CMD_PACKED;
    return 1;
}

/* The values a NEW carries, into vals (room for TECS_MAX_ARCH_COMPONENTS).
** @return their number. */
static int32_t birth_vals(const tecs_world_t *w, const tecs__cmd *c, tecs_value_t *vals)
{
    if (c->flags & TECS__CMD_INLINE) {
        vals[0] = (tecs_value_t){ c->comp, c->value };
        return 1;
    }
    if (c->flags & TECS__CMD_PACKED) {
        const tecs_archetype_t *a = c->arch;
        uint64_t mask;
        memcpy(&mask, c->packed, sizeof mask);
        size_t off = sizeof mask;
        int32_t n = 0;
        for (int32_t col = 0; col < a->ncols; col++) {
            if (!(mask >> col & 1))
                continue;
            off = align_up(off, w->comp.comps[a->col_comp[col]].align);
            vals[n++] = (tecs_value_t){ a->col_comp[col], c->packed + off };
            off += a->col_size[col];
        }
        return n;
    }
    const tecs__cmdx *x = cmd_x(c);
    for (int32_t i = 0; x && i < x->nvals; i++)
        vals[i] = x->vals[i];
    return x ? x->nvals : 0;
}

/* The initializer of a birth command, or NULL. */
static inline const tecs__cmdx *birth_init(const tecs__cmd *c)
{
    const tecs__cmdx *x = cmd_x(c);
    return x && x->init ? x : NULL;
}

/* Queue births of n new ids into buf: copy the values (their hooks may
** queue changes of their own), reserve the command and the slots, then
** commit. A single birth with plain values keeps them in the command or
** packed. */
static tecs_err_t queue_new(tecs_world_t *w, tecs__cmdbuf *b, const tecs__births *req)
{
    tecs_archetype_t *a = req->arch;
    int32_t n = req->n, nvals = req->nvals;
    tecs_entity_t *out = req->out;
    const tecs_value_t *vals = req->vals;
    bool bulk = req->bulk;
    tecs_init_fn init = req->init;
    void *ctx = req->ctx;
    arena_mark m = arena_save(b);
    bulk = bulk && n != 1;
    int32_t count = b->count;
    tecs__cmd c = { .op = bulk ? TECS__OP_NEW_BULK : TECS__OP_NEW, .arch = a };
    bool extra = bulk || nvals || init;
    int put = extra && !bulk && !init ? put_birth_vals(w, b, &c, nvals, vals) : 0;
    if (put < 0)
        return oom(w);
    extra = extra && put == 0;
    if (extra && (c.x = new_extra(w, b, n, nvals, vals, bulk, init, ctx)) == NULL) {
        arena_undo(b, m, count);
        return oom(w);
    }
    tecs_err_t err = room(w, b);
    if (err == TECS_OK)
        err = n == 1 ? tecs__ei_reserve1(w) : tecs__ei_reserve(w, n);
    if (err) {
        drop_vals(w, &c);
        arena_undo(b, m, count);
        return err;
    }
    for (int32_t k = 0; k < n; k++) {
        tecs_entity_t e = tecs__ei_take(w);
        if (b == &w->cmd.delayed)
            w->ei.recs[TECS_ENTITY_INDEX(e)].row = TECS__ROW_DELAYED;
        if (bulk)
            c.x->ids[k] = e;
        if (out)
            out[k] = e;
        c.entity = e;
    }
    w->ei.npending += n;
    push(w, b, &c);
    return TECS_OK;
}

tecs_err_t tecs__defer_new(tecs_world_t *w, const tecs__births *req)
{
    return queue_new(w, &w->cmd.deferred, req);
}

tecs_entity_t tecs__defer_new1(tecs_world_t *w, tecs_archetype_t *a)
{
    tecs__cmdbuf *b = &w->cmd.deferred;
    if (room(w, b) || tecs__ei_reserve1(w))
        return 0;
    tecs_entity_t e = tecs__ei_take(w);
    w->ei.npending++;
    b->cmds[b->count++] = (tecs__cmd){ .op = TECS__OP_NEW, .arch = a, .entity = e };
    return e;
}

/* The value a SET, ADD or NEW_SET carries: inline, in the arena, or none. */
static inline const void *cmd_value(const tecs__cmd *c)
{
    if (c->flags & TECS__CMD_INLINE)
        return c->value;
    return c->flags & TECS__CMD_VAL ? c->val->ptr : NULL;
}

/* A value of ci may live in the command itself: small, and no hooks. */
static inline bool inline_ok(const tecs__comp *ci)
{
    return ci->size <= TECS__CMD_INLINE_MAX && !ci->ctor && !ci->copy && !ci->move && !ci->dtor;
}

/* A one-entry value list and a constructed copy of value, in one block. */
static tecs_value_t *arena_value(tecs_world_t *w, tecs__cmdbuf *b, tecs_comp_t c,
                                 const tecs__comp *ci, const void *value)
{
    size_t head = (sizeof(tecs_value_t) + 15) & ~(size_t)15;
    tecs_value_t *v = arena_alloc(w, b, head + ci->size);
    if (v == NULL)
        return NULL;
    v->comp = c;
    v->ptr = (char *)v + head;
    if (ci->ctor == NULL && ci->copy == NULL) {
        tecs__copy_value((void *)v->ptr, value, ci->size);
    } else {
        tecs__comp_ctor(w, ci, (void *)v->ptr, 1);
        tecs__comp_copy(w, ci, (void *)v->ptr, value, 1);
    }
    return v;
}

/* put_value for a value that needs the arena. */
static TECS__NOINLINE tecs_err_t put_arena_value(tecs_world_t *w, tecs__cmdbuf *b,
                                                 tecs__cmd *cmd, tecs_comp_t c,
                                                 const void *value)
{
    tecs_value_t *v = arena_value(w, b, c, &w->comp.comps[c], value);
    if (v == NULL)
        return oom(w);
    cmd->val = v;
    cmd->flags |= TECS__CMD_VAL;
    return TECS_OK;
}

/* Give cmd a copy of value (of component c): inline when small and plain,
** else in the arena. Changes nothing when out of memory. */
static TECS__INLINE tecs_err_t put_value(tecs_world_t *w, tecs__cmdbuf *b, tecs__cmd *cmd,
                                         tecs_comp_t c, const void *value)
{
    const tecs__comp *ci = &w->comp.comps[c];
    if (value == NULL || ci->size == 0)
        return TECS_OK;
    if (inline_ok(ci)) {
        if (ci->size == 8)      /* the common case: one move */
            memcpy(cmd->value, value, 8);
        else
            memcpy(cmd->value, value, ci->size);
        cmd->flags |= TECS__CMD_INLINE;
        return TECS_OK;
    }
    return put_arena_value(w, b, cmd, c, value);
}

/* May an ADD or SET of c (value, or NULL) join `last`, the birth queued
** just before it? Only a plain birth (no values, no initializer), never an
** ADD the flush would refuse or a SET of a tag it already has, and never a
** value whose copy runs hooks: they may queue changes of their own, which
** come first and may join that same birth. */
static inline bool foldable(const tecs_world_t *w, const tecs__cmd *last, tecs__op op,
                            tecs_comp_t c, const void *value)
{
    if (last->op != TECS__OP_NEW || last->flags || last->x || tecs__comp_is_sparse(w, c))
        return false;
    if (value && (w->comp.comps[c].ctor || w->comp.comps[c].copy))
        return false;
    int32_t col = tecs__arch_col(last->arch, c);
    return op == TECS__OP_ADD ? col == TECS__COL_ABSENT
                              : op == TECS__OP_SET && col != TECS__COL_TAG;
}

/* Join an ADD or SET of c to the birth queued at `at`, in place (foldable:
** copying the value runs no hook, so nothing is queued meanwhile and the
** queue stays where it is). */
static inline tecs_err_t fold_into(tecs_world_t *w, int32_t at, tecs__op op, tecs_comp_t c,
                                   const void *value)
{
    tecs__cmd *birth = &w->cmd.deferred.cmds[at];
    if (put_value(w, &w->cmd.deferred, birth, c, value))
        return TECS_ENOMEM;
    birth->op = TECS__OP_NEW_SET;
    birth->then = (uint8_t)op;
    birth->comp = c;
    return TECS_OK;
}

/* Queue a change as a command of its own. */
static TECS__NOINLINE tecs_err_t queue_op(tecs_world_t *w, tecs__op op, tecs_entity_t e,
                                          tecs_comp_t c, const void *value)
{
    tecs__cmdbuf *b = &w->cmd.deferred;
    tecs__cmd cmd = { .op = (uint8_t)op, .entity = e, .comp = c };
    if (put_value(w, b, &cmd, c, value))
        return TECS_ENOMEM;
    if (room(w, b)) {                   /* after the copy: its hook may queue */
        drop_vals(w, &cmd);
        return TECS_ENOMEM;
    }
    b->cmds[b->count++] = cmd;
    return TECS_OK;
}

tecs_err_t tecs__defer_op(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                          const void *value)
{
    /* A change of the birth queued last joins it: nobody else can see the
    ** entity yet. Not while flushing, when that birth may be applied. */
    tecs__cmdbuf *b = &w->cmd.deferred;
    if (b->count > 0 && !w->cmd.flushing) {
        tecs__cmd *last = &b->cmds[b->count - 1];
        if (last->entity == e && foldable(w, last, op, c, value))
            return fold_into(w, b->count - 1, op, c, value);
    }
    return queue_op(w, op, e, c, value);
}

tecs_err_t tecs__defer_call(tecs_world_t *w, tecs__call_fn fn, tecs_entity_t e, tecs_comp_t c,
                            const void *data, size_t size)
{
    tecs__cmdbuf *b = &w->cmd.deferred;
    tecs__cmd cmd = { .op = TECS__OP_CALL, .entity = e, .comp = c, .call = fn };
    if (size > 0) {
        if ((cmd.packed = arena_alloc(w, b, size)) == NULL)
            return oom(w);
        memcpy(cmd.packed, data, size);
        cmd.flags = TECS__CMD_DATA;
    }
    if (room(w, b))
        return TECS_ENOMEM;
    b->cmds[b->count++] = cmd;
    return TECS_OK;
}

/* ---- applying commands ----------------------------------------------- */

/* A command could not apply (err): stale if its entity is gone, else
** dropped, counted, the first cause kept for the report. */
static void note_failure(tecs_world_t *w, tecs_err_t err)
{
    if (err == TECS_OK || err == TECS_ENOMEM || err == TECS_EDEAD)
        return;
    if (w->cmd.dropped++ == 0) {
        w->cmd.drop_err = err;
        memcpy(w->cmd.drop_msg, w->base.errmsg, sizeof w->cmd.drop_msg);
    }
}

/* The last error after an apply or flush that dropped changes. */
static tecs_err_t report_drops(tecs_world_t *w, const char *what)
{
    return tecs__err(w, w->cmd.drop_err, "%s dropped %d queued change%s; the first: %s", what,
                     w->cmd.dropped, w->cmd.dropped == 1 ? "" : "s", w->cmd.drop_msg);
}

static tecs_err_t apply_bulk(tecs_world_t *w, const tecs__cmd *c)
{
    tecs_value_t one[TECS_MAX_ARCH_COMPONENTS];
    const tecs__cmdx *x = c->x;
    for (int32_t k = 0; k < x->n; k++) {
        for (int32_t i = 0; i < x->nvals; i++) {
            size_t size = tecs_component_size(w, x->vals[i].comp);
            one[i] = (tecs_value_t){ x->vals[i].comp,
                                     (const char *)x->vals[i].ptr + (size_t)k * size };
        }
        tecs_err_t err = tecs__birth(w, x->ids[k], c->arch, x->nvals, one, NULL, NULL);
        if (err == TECS_ENOMEM)
            return err;
        note_failure(w, err);
    }
    return TECS_OK;
}

/* A delayed kill: its callback once, then the destroy. A destroy a listener
** refuses (a relation's cleanup) is dropped: the entity lives on, its
** KILL_QUEUED mark goes. Out of memory keeps the kill queued, its callback
** done. */
static tecs_err_t run_kill(tecs_world_t *w, tecs__cmd *c)
{
    tecs__record *r = tecs__ei_alive(w, c->entity);
    if (r == NULL || !(r->arch & TECS__KILL_QUEUED))
        return TECS_OK;
    if (c->kill) {
        tecs_err_t outer_err = tecs__cb_begin(w);
        c->kill(w, c->entity, c->kill_ctx);
        tecs__cb_end(w, outer_err);
        c->kill = NULL;
    }
    if (tecs__ei_alive(w, c->entity) == NULL)
        return TECS_OK;
    tecs_err_t err = tecs__destroy_now(w, c->entity);
    r = err && err != TECS_ENOMEM ? tecs__ei_alive(w, c->entity) : NULL;
    if (r)
        r->arch &= ~TECS__KILL_QUEUED;
    return err;
}

/* Nobody watches (or vetoes changes of) the components of a birth and its follow-ups.
** The birth's own archetype counts too: an observer narrowed by terms would
** see the folded birth already holding the later components. */
static bool unobserved(const tecs_world_t *w, const tecs__cmd *c, int32_t n)
{
    if (w->bus.watch_moves)
        return false;
    for (int32_t i = 0; i < n; i++) {
        if (c[i].comp && w->comp.comps[c[i].comp].watch)
            return false;
        bool birth = c[i].op == TECS__OP_NEW || c[i].op == TECS__OP_NEW_SET;
        for (int32_t k = 0; birth && k < c[i].arch->ncomps; k++)
            if (w->comp.comps[c[i].arch->comps[k]].watch)
                return false;
    }
    return true;
}

/* a with c, through the cached edge if there is one; NULL if it cannot be
** had (the world's error says why). */
static tecs_archetype_t *fold_target(tecs_world_t *w, tecs_archetype_t *a, tecs_comp_t c)
{
    if (tecs__arch_col(a, c) != TECS__COL_ABSENT)
        return a;
    tecs_archetype_t *to = tecs__edge_add(w, a, c);
    return to ? to : tecs__arch_with(w, a, c);
}

/* Fold one ADD or SET of c (value, or NULL) into a birth heading for *a
** with the nvals values vals; false if it cannot join. */
static bool fold_step(tecs_world_t *w, tecs_archetype_t **a, tecs_value_t *vals, int32_t *nvals,
                      uint8_t op, tecs_comp_t c, const void *value)
{
    if ((op != TECS__OP_ADD && op != TECS__OP_SET) || tecs__comp_is_sparse(w, c))
        return false;
    int32_t at = *nvals;
    for (int32_t i = 0; i < *nvals; i++)
        if (vals[i].comp == c)
            at = i;
    bool has = tecs__arch_col(*a, c) != TECS__COL_ABSENT;
    if ((op == TECS__OP_ADD && (has || at < *nvals)) || *nvals == TECS_MAX_ARCH_COMPONENTS)
        return false;
    tecs_archetype_t *to = fold_target(w, *a, c);
    if (to == NULL)
        return false;
    *a = to;
    if (value || at == *nvals)
        vals[at] = (tecs_value_t){ c, value };
    *nvals += at == *nvals;
    return true;
}

/* Values kept inline in the commands [lo, hi) move to copies: a hook run
** by the birth may queue changes, and the queue move. */
static void keep_inline(tecs_value_t *vals, int32_t n, const char *lo, const char *hi,
                        unsigned char (*copies)[TECS__CMD_INLINE_MAX])
{
    for (int32_t i = 0; i < n; i++) {
        uintptr_t p = (uintptr_t)vals[i].ptr;
        if (p >= (uintptr_t)lo && p < (uintptr_t)hi) {
            memcpy(copies[i], vals[i].ptr, TECS__CMD_INLINE_MAX);
            vals[i].ptr = copies[i];
        }
    }
}

/* A queued birth followed by adds and sets of the same entity (the usual
** "new, then set" inside an iteration) is applied as one birth straight into
** the final archetype, when no listener could tell the difference.
** @return how many commands after c were folded in, or -1 if not possible. */
static int32_t fold_birth(tecs_world_t *w, const tecs__cmd *c, const tecs__cmd *next,
                          int32_t avail)
{
    bool folded = c->op == TECS__OP_NEW_SET;
    if (!folded && (c->op != TECS__OP_NEW || birth_init(c)))
        return -1;
    if (avail == 0 || next[0].entity != c->entity)
        return -1;
    tecs__cmd self = *c;        /* its in-place value stays put if the queue moves */
    tecs_value_t vals[TECS_MAX_ARCH_COMPONENTS];
    int32_t nvals = folded ? 0 : birth_vals(w, &self, vals), n = 0;
    tecs_archetype_t *a = c->arch;
    if (folded && !fold_step(w, &a, vals, &nvals, c->then, c->comp, cmd_value(&self)))
        return -1;
    for (; n < avail && next[n].entity == c->entity; n++)
        if (!fold_step(w, &a, vals, &nvals, next[n].op, next[n].comp, cmd_value(&next[n])))
            break;
    if (n == 0 || !unobserved(w, c, 1) || !unobserved(w, next, n))
        return -1;
    int32_t m = 0;
    for (int32_t i = 0; i < nvals; i++)
        if (vals[i].ptr)
            vals[m++] = vals[i];
    unsigned char copies[TECS_MAX_ARCH_COMPONENTS][TECS__CMD_INLINE_MAX];
    if (!a->plain)
        keep_inline(vals, m, (const char *)c, (const char *)(next + n), copies);
    tecs_err_t err = tecs__birth(w, c->entity, a, m, vals, NULL, NULL);
    return err == TECS_ENOMEM ? -1 : n;
}

/* A queued remove; the entity's REMOVE_QUEUED mark goes once it applied. */
static tecs_err_t remove_queued(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs_err_t err = tecs__remove_now(w, e, c);
    tecs__record *r = tecs__ei_alive(w, e);
    if (err != TECS_ENOMEM && r)
        r->arch &= ~TECS__REMOVE_QUEUED;
    return err;
}

/* A queued destroy a listener refused (a relation's cleanup): the entity
** lives on, its DESTROY_QUEUED mark goes. */
static tecs_err_t destroy_queued(tecs_world_t *w, tecs_entity_t e)
{
    tecs_err_t err = tecs__destroy_now(w, e);
    tecs__record *r = err && err != TECS_ENOMEM ? tecs__ei_alive(w, e) : NULL;
    if (r)
        r->arch &= ~TECS__DESTROY_QUEUED;
    return err;
}

/* The column of c in the archetype of the live entity e, or COL_ABSENT; for
** a sparse c that e has, 0, or COL_TAG for a tag. */
static int32_t col_of(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    const tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        return TECS__COL_ABSENT;
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)))
        return tecs__sparse_get(w, c, TECS_ENTITY_INDEX(e)) == NULL ? TECS__COL_ABSENT
               : w->comp.comps[c].size ? 0 : TECS__COL_TAG;
    return tecs__arch_col(tecs__rec_arch(w, r), c);
}

/* The value of c of the live entity e, which has it (a table or a sparse
** component, not a tag). */
static void *value_of(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    if (TECS__UNLIKELY(tecs__comp_is_sparse(w, c)))
        return tecs__sparse_get(w, c, TECS_ENTITY_INDEX(e));
    const tecs__record *r = tecs__ei_alive(w, e);
    tecs_archetype_t *a = tecs__rec_arch(w, r);
    return tecs__col_ptr(a, w, tecs__arch_col(a, c), r->row);
}

/* A queued tecs_modified (or the write of a queued set) of c of e, which
** has it: as the public call, when the rows are in place. */
static tecs_err_t apply_modified(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    tecs_err_t err = tecs__enter(w);
    if (err)
        return err;
    if (col_of(w, e, c) < 0)
        return tecs__err(w, TECS_EINVAL, TECS__COMP_FMT " is a tag and has no value",
                         TECS__COMP(w, c));
    if (TECS__UNLIKELY(w->base.hook_depth > 0))      /* rows in motion: reported later */
        return tecs__defer_op(w, TECS__OP_MODIFIED, e, c, NULL);
    err = tecs__written(w, e, c, value_of(w, e, c));
    if (tecs__wants_set(&w->comp.comps[c]))
        tecs__settle(w);
    return err;
}

/* A queued set: a write if e has c by now (none for a tag, as tecs_set),
** else an add with the value. */
static tecs_err_t apply_set(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, const void *value)
{
    int32_t col = col_of(w, e, c);
    if (col != TECS__COL_ABSENT) {
        if (w->comp.comps[c].size == 0)
            return TECS_OK;
        if (value)
            tecs__comp_copy(w, &w->comp.comps[c], value_of(w, e, c), value, 1);
        return apply_modified(w, e, c);     /* refused: the write is undone */
    }
    return tecs__add_now(w, e, c, value);
}

/* A NEW_SET: one birth into the final archetype when nobody watches, else
** the birth, then the change; if only the change runs out of memory, c
** becomes that change, still queued. */
static tecs_err_t apply_new_set(tecs_world_t *w, tecs__cmd *c)
{
    const void *value = cmd_value(c);
    tecs_archetype_t *a = unobserved(w, c, 1) ? fold_target(w, c->arch, c->comp) : NULL;
    if (a) {
        tecs_value_t v = { c->comp, value };
        return tecs__birth(w, c->entity, a, value != NULL, &v, NULL, NULL);
    }
    tecs_err_t err = tecs__birth(w, c->entity, c->arch, 0, NULL, NULL, NULL);
    if (err == TECS_ENOMEM)
        return err;
    err = c->then == TECS__OP_ADD ? tecs__add_now(w, c->entity, c->comp, NULL)
                                  : apply_set(w, c->entity, c->comp, value);
    if (err == TECS_ENOMEM)
        c->op = c->then;
    return err;
}

/* A birth with an initializer: while it runs, its entity is no longer a
** delayed birth but one the flush after it applies, so that the changes
** it makes to its own entity queue there (and apply right after the
** birth) instead of being refused as changes of a birth not yet due. If
** the birth runs out of memory before the initializer, the mark is back. */
static TECS__NOINLINE tecs_err_t apply_new_init(tecs_world_t *w, const tecs__cmd *c,
                                                const tecs__cmdx *x, int32_t n,
                                                const tecs_value_t *vals)
{
    tecs__record *r = tecs__ei_known(w, c->entity);
    bool delayed = r && r->arch == TECS__ARCH_PENDING && r->row == TECS__ROW_DELAYED;
    if (delayed)
        r->row = 0;
    tecs_err_t err = tecs__birth(w, c->entity, c->arch, n, vals, x->init, x->ctx);
    if (delayed && err == TECS_ENOMEM && (r = tecs__ei_known(w, c->entity)) != NULL &&
        r->arch == TECS__ARCH_PENDING)
        r->row = TECS__ROW_DELAYED;
    return err;
}

static tecs_err_t apply_new(tecs_world_t *w, const tecs__cmd *c)
{
    tecs_value_t vals[TECS_MAX_ARCH_COMPONENTS];
    int32_t n = birth_vals(w, c, vals);
    const tecs__cmdx *x = birth_init(c);
    if (x)
        return apply_new_init(w, c, x, n, vals);
    return tecs__birth(w, c->entity, c->arch, n, vals, NULL, NULL);
}

/* Apply one command. Only TECS_ENOMEM keeps it queued (c may change then). */
static tecs_err_t apply(tecs_world_t *w, tecs__cmd *c)
{
    switch ((tecs__op)c->op) {
    case TECS__OP_NEW:
        return apply_new(w, c);
    case TECS__OP_NEW_SET:
        return apply_new_set(w, c);
    case TECS__OP_NEW_BULK:
        return apply_bulk(w, c);
    case TECS__OP_DESTROY:
        return destroy_queued(w, c->entity);
    case TECS__OP_ADD:
        return tecs__add_now(w, c->entity, c->comp, NULL);
    case TECS__OP_REMOVE:
        return remove_queued(w, c->entity, c->comp);
    case TECS__OP_SET:
        return apply_set(w, c->entity, c->comp, cmd_value(c));
    case TECS__OP_KILL:
        return run_kill(w, c);
    case TECS__OP_MODIFIED:
        if (col_of(w, c->entity, c->comp) != TECS__COL_ABSENT)
            apply_modified(w, c->entity, c->comp);
        return TECS_OK;
    case TECS__OP_ENABLE:
    case TECS__OP_DISABLE:
        return tecs__enable_now(w, c->entity, c->comp, c->op == TECS__OP_ENABLE);
    case TECS__OP_CALL:
        return c->call(w, c->entity, c->comp, c->flags & TECS__CMD_DATA ? c->packed : NULL);
    }
    return TECS_OK;
}

/* Make room for n rows of a, as a hint: out of memory leaves the world's
** last error as it was. */
static bool try_reserve(tecs_world_t *w, tecs_archetype_t *a, int32_t n)
{
    if (tecs__arch_has_rows(w, a, n))
        return true;
    tecs_err_t err = w->base.err;
    char msg[sizeof w->base.errmsg];
    memcpy(msg, w->base.errmsg, sizeof msg);
    if (tecs__arch_grow_rows(w, a, n) == TECS_OK)
        return true;
    w->base.err = err;
    memcpy(w->base.errmsg, msg, sizeof msg);
    return false;
}

/* Before the delayed births apply, reserve the rows of each archetype in
** one go: its chunks then come as one group, a column of them one run of
** memory (archetype.c). Only a hint: out of memory here is no error, the
** births ask again one by one. */
static void reserve_births(tecs_world_t *w, const tecs__cmdbuf *b,
                           bool (*pick)(const tecs__cmd *))
{
    if (b->count < 2)
        return;
    size_t size = (size_t)w->arch.narchs * sizeof(int32_t);
    int32_t *births = tecs__alloc(w, size);     /* per archetype id */
    if (births == NULL)
        return;
    memset(births, 0, size);
    for (int32_t i = 0; i < b->count; i++)
        if (b->cmds[i].op == TECS__OP_NEW && pick(&b->cmds[i]))
            births[b->cmds[i].arch->id]++;
    for (int32_t i = 0; i < b->count; i++) {
        tecs_archetype_t *a = b->cmds[i].arch;
        if (b->cmds[i].op != TECS__OP_NEW || births[a->id] == 0)
            continue;
        if (births[a->id] > 1)
            try_reserve(w, a, births[a->id]);
        births[a->id] = 0;
    }
    tecs__free(w, births, size);
}

/* The head of a command: op, then, flags, spare and comp, 8 bytes with no
** padding, so that two heads compare as one block. */
#define CMD_HEAD offsetof(tecs__cmd, entity)
_Static_assert(offsetof(tecs__cmd, entity) == 8 && offsetof(tecs__cmd, comp) == 4,
               "a command's head is 8 bytes without padding");

/* From c, how many NEW_SETs alike (same head, same archetype) could go in
** one run: the last stops short if a command of its entity follows, for
** fold_birth to take. */
static int32_t run_length(const tecs__cmd *c, int32_t avail)
{
    int32_t n = 1;
    while (n < avail && memcmp(&c[n], c, CMD_HEAD) == 0 && c[n].arch == c->arch)
        n++;
    return n < avail && c[n].entity == c[n - 1].entity ? n - 1 : n;
}

/* Births queued as a run of NEW_SETs alike go to their archetype in one
** reservation, values copied straight from the commands, when nobody
** watches and the archetype is plain. @return commands applied, or 0. */
static int32_t apply_run(tecs_world_t *w, const tecs__cmd *c, int32_t avail)
{
    if (c->op != TECS__OP_NEW_SET || (c->flags & TECS__CMD_VAL))
        return 0;
    int32_t n = run_length(c, avail);
    if (n == 0 || !unobserved(w, c, 1))
        return 0;
    tecs_archetype_t *a = fold_target(w, c->arch, c->comp);
    if (a == NULL || !a->plain || !try_reserve(w, a, n))
        return 0;
    int32_t col = c->flags & TECS__CMD_INLINE ? tecs__arch_col(a, c->comp) : -1;
    const char *base = (const char *)c;     /* the fields of every command in the run */
    tecs__birth_run(w, a, n, base + offsetof(tecs__cmd, entity), col,
                    base + offsetof(tecs__cmd, value), sizeof *c);
    return n;
}

/* The deferred queue's shortcuts at cmds[i]: a run of births, or a birth
** with its follow-ups folded in. @return commands applied, or 0. */
static int32_t apply_fast(tecs_world_t *w, tecs__cmdbuf *b, int32_t i)
{
    tecs__cmd *c = &b->cmds[i];
    int32_t n = apply_run(w, c, b->count - i);
    if (n > 0)
        return n;
    n = fold_birth(w, c, c + 1, b->count - i - 1);
    if (n < 0)
        return 0;
    c = &b->cmds[i];                    /* hooks may have moved the queue */
    for (int32_t j = 0; j <= n; j++)
        drop_vals(w, &c[j]);
    return n + 1;
}

/* Apply the commands of b that `pick` selects, in order, including those
** appended meanwhile; keep the rest. Stops at the first out-of-memory. */
static tecs_err_t run_queue(tecs_world_t *w, tecs__cmdbuf *b, bool (*pick)(const tecs__cmd *))
{
    int32_t keep = 0, i = 0;
    tecs_err_t result = TECS_OK;
    if (b == &w->cmd.delayed)
        reserve_births(w, b, pick);
    for (; i < b->count; i++) {
        if (!pick(&b->cmds[i])) {
            b->cmds[keep++] = b->cmds[i];
            continue;
        }
        int32_t done = b == &w->cmd.deferred ? apply_fast(w, b, i) : 0;
        if (done > 0) {
            i += done - 1;
            continue;
        }
        tecs__cmd c = b->cmds[i];
        tecs_err_t err = apply(w, &c);
        if (err == TECS_ENOMEM) {
            b->cmds[i] = c;
            result = TECS_ENOMEM;
            break;
        }
        note_failure(w, err);
        drop_vals(w, &c);
        if (b != &w->cmd.deferred && w->cmd.deferred.count && !w->cmd.flushing)
            tecs__flush(w);
    }
    if (i < b->count)           /* (an empty queue has no array: no NULL + 0) */
        memmove(b->cmds + keep, b->cmds + i, (size_t)(b->count - i) * sizeof *b->cmds);
    b->count = keep + (b->count - i);
    if (b->count == 0)
        arena_reset(b);
    queue_trim(w, b);
    return result;
}

static bool pick_all(const tecs__cmd *c)
{
    (void)c;
    return true;
}

static bool pick_news(const tecs__cmd *c)
{
    return c->op == TECS__OP_NEW;
}

static bool pick_kills(const tecs__cmd *c)
{
    return c->op == TECS__OP_KILL;
}

tecs_err_t tecs__flush(tecs_world_t *w)
{
    if (w->cmd.flushing || w->base.defer_depth > 0)
        return TECS_OK;
    bool own = !w->cmd.applying;    /* else its drops count into the apply's */
    if (own)
        w->cmd.dropped = 0;
    tecs_err_t outer = w->base.err;
    w->cmd.flushing = true;
    tecs_err_t err = run_queue(w, &w->cmd.deferred, pick_all);
    w->cmd.flushing = false;
    if (own && w->cmd.dropped > 0 && err == TECS_OK)
        err = report_drops(w, "the flush");
    else if (err == TECS_OK && own)
        tecs__err_restore(w, outer);    /* skipped changes leave no error */
    return err;
}

/* ---- deferred sections ----------------------------------------------- */

/*
** tecs_defer_begin / tecs_defer_end hold the world deferred by hand: one
** more level of defer_depth per open section, so changes queue exactly as
** inside an iteration and the flush comes when the last level of any kind
** ends. Each section remembers the callback depth it was begun at:
**
**     sections: [0 0 2]     two begun by the program, one inside a
**                           callback two levels down (innermost last)
**
** An end closes the innermost section, refused if that one was begun
** outside the callback running now (its level is lower): a callback never
** ends a deferral it did not begin. A section left open by a callback that
** has returned has a higher level, and the next end at an outer level
** closes it, as one of its own.
*/

tecs_err_t tecs_defer_begin(tecs_world_t *w)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    tecs__cmd_state *s = &w->cmd;
    if (s->nsections == INT32_MAX)
        return tecs__err(w, TECS_ELIMIT, "too many deferred sections open");
    if (tecs__grow(w, (void **)&s->sections, &s->cap_sections, s->nsections + 1,
                   sizeof *s->sections))
        return TECS_ENOMEM;
    s->sections[s->nsections++] = w->base.cb_depth;
    tecs__defer_begin(w);
    return TECS_OK;
}

tecs_err_t tecs_defer_end(tecs_world_t *w)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    tecs__cmd_state *s = &w->cmd;
    if (s->nsections == 0)
        return tecs__err(w, TECS_EINVAL, "tecs_defer_end: no deferred section is open");
    if (s->sections[s->nsections - 1] < w->base.cb_depth)
        return tecs__err(w, TECS_EINVAL, "tecs_defer_end: the open deferred section was "
                         "begun outside the running callback");
    s->nsections--;
    if (--w->base.defer_depth > 0 || w->cmd.deferred.count == 0)
        return TECS_OK;
    return tecs__flush(w);
}

/* ---- the delayed API ------------------------------------------------- */

/* After a call that failed: what its hooks queued before the failure still
** applies, and the last error stays the call's own (a drop by that flush
** is counted in tecs_dropped_changes, not reported over it). */
static void settle_failed(tecs_world_t *w)
{
    tecs_err_t err = w->base.err;
    char msg[sizeof w->base.errmsg];
    memcpy(msg, w->base.errmsg, sizeof msg);
    tecs__settle(w);
    w->base.err = err;
    memcpy(w->base.errmsg, msg, sizeof msg);
}

tecs_entity_t tecs_delayed_new(tecs_world_t *w, tecs_archetype_t *a, int32_t nvals,
                               const tecs_value_t *vals)
{
    if (w == NULL || tecs__enter(w) || tecs__arch_validate(w, a) ||
        tecs__arch_validate_vals(w, a, nvals, vals))
        return 0;
    tecs_entity_t e = 0;
    tecs_err_t err = queue_new(w, &w->cmd.delayed, &(tecs__births){ .arch = a, .n = 1, .out = &e,
                                                                .nvals = nvals, .vals = vals });
    if (err)
        settle_failed(w);
    else
        tecs__settle(w);        /* what the values' copy hooks queued */
    return err ? 0 : e;
}

tecs_entity_t tecs_delayed_new_with(tecs_world_t *w, tecs_archetype_t *a, tecs_init_fn fn,
                                    void *ctx)
{
    if (w == NULL || tecs__enter(w) || tecs__arch_validate(w, a))
        return 0;
    tecs_entity_t e = 0;
    tecs_err_t err = queue_new(w, &w->cmd.delayed, &(tecs__births){ .arch = a, .n = 1, .out = &e,
                                                                .init = fn, .ctx = ctx });
    return err ? 0 : e;
}

tecs_err_t tecs_delayed_destroy(tecs_world_t *w, tecs_entity_t e, tecs_destroy_fn fn, void *ctx)
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    tecs__record *r = tecs__ei_alive(w, e);
    if (r == NULL)
        return tecs__err(w, TECS_EDEAD, TECS__ENT_FMT " is not alive", TECS__ENT(e));
    if (r->arch & TECS__KILL_QUEUED)
        return TECS_OK;
    tecs__cmd c = { .op = TECS__OP_KILL, .entity = e, .kill_ctx = ctx };
    c.kill = fn;
    if (push(w, &w->cmd.delayed, &c))
        return TECS_ENOMEM;
    r->arch |= TECS__KILL_QUEUED;
    return TECS_OK;
}

static tecs_err_t apply_delayed(tecs_world_t *w, bool (*pick)(const tecs__cmd *))
{
    tecs_err_t err = tecs__enter_world(w);
    if (err)
        return err;
    if (tecs__cmd_nested(w))
        return tecs__err(w, TECS_EBUSY,
                         "delayed changes cannot apply inside an iteration, a callback "
                         "or a deferred section");
    w->cmd.dropped = 0;
    w->cmd.applying = true;
    err = run_queue(w, &w->cmd.delayed, pick);
    w->cmd.applying = false;
    if (w->cmd.dropped > 0 && err == TECS_OK)
        err = report_drops(w, "the apply");
    else if (err == TECS_OK)
        w->base.err = TECS_OK;       /* skipped changes leave no error */
    return err;
}

int32_t tecs_dropped_changes(const tecs_world_t *w)
{
    return w ? w->cmd.dropped : 0;
}

tecs_err_t tecs_delayed_apply_new(tecs_world_t *w)
{
    return apply_delayed(w, pick_news);
}

tecs_err_t tecs_delayed_apply_destroy(tecs_world_t *w)
{
    return apply_delayed(w, pick_kills);
}

tecs_err_t tecs_delayed_apply(tecs_world_t *w)
{
    return apply_delayed(w, pick_all);
}

int32_t tecs_delayed_new_count(const tecs_world_t *w)
{
    int32_t n = 0;
    for (int32_t i = 0; w && i < w->cmd.delayed.count; i++) {
        const tecs__cmd *c = &w->cmd.delayed.cmds[i];
        const tecs__record *r = tecs__ei_known(w, c->entity);
        n += c->op == TECS__OP_NEW && r && r->arch == TECS__ARCH_PENDING;
    }
    return n;
}

int32_t tecs_delayed_destroy_count(const tecs_world_t *w)
{
    int32_t n = 0;
    for (int32_t i = 0; w && i < w->cmd.delayed.count; i++) {
        const tecs__cmd *c = &w->cmd.delayed.cmds[i];
        const tecs__record *r = tecs__ei_alive(w, c->entity);
        n += c->op == TECS__OP_KILL && r && (r->arch & TECS__KILL_QUEUED);
    }
    return n;
}

/* ---- teardown -------------------------------------------------------- */

static void buf_fini(tecs_world_t *w, tecs__cmdbuf *b)
{
    for (int32_t i = 0; i < b->count; i++)
        drop_vals(w, &b->cmds[i]);
    tecs__free(w, b->cmds, (size_t)b->cap * sizeof *b->cmds);
    arena_fini(w, b);
    *b = (tecs__cmdbuf){ 0 };
}

void tecs__cmd_buf_fini(tecs_world_t *w, tecs__cmdbuf *b)
{
    buf_fini(w, b);
}

tecs_err_t tecs__cmd_merge(tecs_world_t *w, tecs__cmdbuf *const *queues, int32_t n)
{
    tecs_err_t outer = w->base.err, err = TECS_OK;
    w->cmd.dropped = 0;
    w->cmd.applying = true;
    w->cmd.flushing = true;         /* what callbacks change waits its turn */
    for (int32_t k = 0; k < n && err == TECS_OK; k++)
        if (queues[k]->count > 0)
            err = run_queue(w, queues[k], pick_all);
    w->cmd.flushing = false;
    tecs_err_t ferr = tecs__flush(w);
    w->cmd.applying = false;
    /* What ran out of memory waits in the world's queue, as a flush's rest
    ** does, for the next call that flushes; if that queue holds changes
    ** already, in its own queue for the next merge. */
    for (int32_t k = 0; k < n; k++) {
        if (queues[k]->count > 0 && w->cmd.deferred.count == 0) {
            tecs__cmdbuf mine = w->cmd.deferred;
            w->cmd.deferred = *queues[k];
            *queues[k] = mine;
        }
    }
    err = err ? err : ferr;
    if (w->cmd.dropped > 0 && err == TECS_OK)
        err = report_drops(w, "the run");
    else if (err == TECS_OK)
        tecs__err_restore(w, outer);
    return err;
}

void tecs__cmd_fini(tecs_world_t *w)
{
    buf_fini(w, &w->cmd.deferred);
    buf_fini(w, &w->cmd.delayed);
    tecs__free(w, w->cmd.sections, (size_t)w->cmd.cap_sections * sizeof *w->cmd.sections);
    w->cmd.sections = NULL;
    w->cmd.nsections = w->cmd.cap_sections = 0;
}

void tecs__cmd_drop_all(tecs_world_t *w)
{
    buf_fini(w, &w->cmd.deferred);
    buf_fini(w, &w->cmd.delayed);
    for (int32_t i = 0; i < w->ei.nrecs && w->ei.npending > 0; i++) {
        if (w->ei.recs[i].arch == TECS__ARCH_PENDING) {
            tecs__ei_release(w, (uint32_t)i);
            w->ei.npending--;
        }
    }
}
