/*
** command.h — queued and delayed structural changes (command.c). Its
** types, its state and its interface; then, in private.h's second pass
** (TECS__WORLD_DONE, once tecs_world_t is complete), its inline functions.
** Included by private.h only.
*/
#ifndef TECS_COMMAND_H
#define TECS_COMMAND_H

typedef enum tecs__op {
    TECS__OP_NEW,               /* birth of a pending entity                */
    TECS__OP_NEW_BULK,          /* births of n pending entities             */
    TECS__OP_DESTROY,
    TECS__OP_ADD,
    TECS__OP_REMOVE,
    TECS__OP_SET,
    TECS__OP_KILL,              /* delayed destroy, with its callback       */
    TECS__OP_NEW_SET,           /* a NEW, then the ADD or SET (`then`) of
                                   comp that was queued right after it      */
    TECS__OP_MODIFIED,          /* tecs_modified from a lifecycle hook      */
    TECS__OP_ENABLE,            /* tecs_enable where it queues              */
    TECS__OP_DISABLE,
    TECS__OP_CALL               /* an add-on's change: `call` applies it    */
} tecs__op;

/* An add-on's queued change, applied in its place in the queue: entity e,
** component c and a copy of the data it was queued with (NULL when none).
** It changes nothing when it fails; TECS_ENOMEM keeps it queued, any
** other error drops it (counted as tecs_dropped_changes counts). */
typedef tecs_err_t (*tecs__call_fn)(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c,
                                    const void *data);

/* What a command carries besides its head, when that is more than one
** plain value (births with an initializer or values with hooks, bulk
** births); it lives in the arena. */
typedef struct tecs__cmdx {
    int32_t n;                  /* entities (births), values per list       */
    int32_t nvals;              /* entries in vals                          */
    tecs_value_t *vals;         /* values, each n long (in the arena)       */
    union {                     /* by op:                                   */
        tecs_entity_t *ids;     /* NEW_BULK: the ids (in the arena)         */
        tecs_init_fn init;      /* NEW: initializer of a queued new_with    */
    };
    void *ctx;
} tecs__cmdx;

#define TECS__CMD_INLINE 1u     /* flags: the value is in value[]           */
#define TECS__CMD_VAL    2u     /* flags: the value is at val (the arena)   */
#define TECS__CMD_PACKED 4u     /* flags: NEW: plain values at packed (the
                                   arena): a mask of the archetype's columns
                                   given, then each value, aligned          */
#define TECS__CMD_DATA   8u     /* flags: CALL: its data is at packed (the
                                   arena)                                   */
#define TECS__CMD_INLINE_MAX 8  /* the largest value kept in a command      */

/* One queued change: 32 bytes (on 64-bit targets), two to a cache line. */
typedef struct tecs__cmd {
    uint8_t op;
    uint8_t then;               /* NEW_SET: the folded op, ADD or SET       */
    uint8_t flags;              /* TECS__CMD_*                              */
    uint8_t spare;              /* zero: the head has no padding            */
    tecs_comp_t comp;           /* ADD, REMOVE, SET, NEW_SET                */
    tecs_entity_t entity;
    union {
        tecs_archetype_t *arch; /* births                                   */
        void *kill_ctx;         /* KILL: its callback's ctx                 */
        tecs__call_fn call;     /* CALL: its function                       */
    };
    union {
        tecs__cmdx *x;          /* NEW (NULL: no values, no initializer),
                                   NEW_BULK                                 */
        tecs_destroy_fn kill;      /* KILL: its callback, or NULL              */
        unsigned char *packed;  /* NEW with CMD_PACKED: its values; CALL
                                   with CMD_DATA: its data                  */
        tecs_value_t *val;      /* SET, NEW_SET with CMD_VAL: the value     */
        unsigned char value[TECS__CMD_INLINE_MAX];  /* with CMD_INLINE: a
                                   small value without hooks, in place (NEW:
                                   of comp, its birth's only value)         */
    };
} tecs__cmd;

/* The arena: blocks that never move, so hooked values stay put. */
typedef struct tecs__ablock {
    struct tecs__ablock *next;
    size_t cap;                 /* data bytes after the 64-byte header      */
    size_t used;
    void *raw;
} tecs__ablock;

typedef struct tecs__cmdbuf {
    tecs__cmd *cmds;
    int32_t count;
    int32_t cap;
    tecs__ablock *head;         /* first arena block                        */
    tecs__ablock *cur;          /* block being filled                       */
} tecs__cmdbuf;

/* Births to queue: n entities into arch. */
typedef struct tecs__births {
    tecs_archetype_t *arch;
    int32_t n;                  /* entities                                 */
    tecs_entity_t *out;         /* receives their ids, or NULL              */
    int32_t nvals;              /* entries in vals                          */
    const tecs_value_t *vals;   /* values, as the public call takes them    */
    bool bulk;                  /* tecs_new_bulk: each value is an array of
                                   n, one per entity                        */
    tecs_init_fn init;          /* tecs_new_with: the initializer, or NULL  */
    void *ctx;                  /* its context                              */
} tecs__births;

/* Queue, for while the world is deferred. */
tecs_err_t tecs__defer_new(tecs_world_t *w, const tecs__births *req);
/* tecs__defer_new of one entity with no values and no initializer: its id,
** or 0 with the world's error set. */
tecs_entity_t tecs__defer_new1(tecs_world_t *w, tecs_archetype_t *a);
tecs_err_t tecs__defer_op(tecs_world_t *w, tecs__op op, tecs_entity_t e, tecs_comp_t c,
                          const void *value);
/* Queue an add-on's change: fn applies it with a copy of the size bytes
** at data (plain bytes; none when size is 0). TECS_ENOMEM changes
** nothing. */
tecs_err_t tecs__defer_call(tecs_world_t *w, tecs__call_fn fn, tecs_entity_t e, tecs_comp_t c,
                            const void *data, size_t size);
/* (entity.c) Queue n copies of src (clones, instances: what names them in an
** error): each a pending id, into out if given, born when its queued
** call fn(w, id, 0, &src) applies; a failure leaves no pending id. */
tecs_err_t tecs__copies_defer(tecs_world_t *w, tecs__call_fn fn, tecs_entity_t src, int32_t n,
                              tecs_entity_t *out, const char *what);
/* Enter / leave deferred mode; leaving the outermost level flushes.
** Inline: every iteration begins and ends with them. */
static inline void tecs__defer_begin(tecs_world_t *w);
static inline void tecs__defer_end(tecs_world_t *w);
/* Apply every queued change (the world must not be deferred). */
tecs_err_t tecs__flush(tecs_world_t *w);
/* The end of a public call that may have run callbacks: apply what they
** queued, unless the world is still deferred (see tecs__flush). */
static inline void tecs__settle(tecs_world_t *w);
void tecs__cmd_fini(tecs_world_t *w);
/* Free a queue that is not the world's own (a worker's): its values are
** destroyed, unapplied. */
void tecs__cmd_buf_fini(tecs_world_t *w, tecs__cmdbuf *b);
/* Apply the workers' queues in order, as one queue: the changes callbacks
** queue meanwhile wait in the world's deferred queue, flushed after the
** last (so the result is the same however the changes were split among
** the queues). The world must be open and not deferred. What runs out of
** memory, with what follows it, moves to the world's deferred queue when
** that is empty (the next flush applies it), else stays in its queue for
** the next merge. @return TECS_OK, TECS_ENOMEM, or the error naming the
** changes dropped (as a flush). */
tecs_err_t tecs__cmd_merge(tecs_world_t *w, tecs__cmdbuf *const *queues, int32_t n);
/* Drop every queued and delayed change, unapplied (tecs_world_reset): the
** queued values are destroyed, every pending id dies, the queues give
** their memory back. */
void tecs__cmd_drop_all(tecs_world_t *w);

typedef struct tecs__cmd_state {
    tecs__cmdbuf deferred;      /* changes made while deferred              */
    tecs__cmdbuf delayed;       /* delayed births and destroys              */
    bool flushing;
    bool applying;              /* a tecs_delayed_apply* runs: the flushes it
                                   makes count their drops into it          */
    int32_t dropped;            /* changes the latest apply or flush dropped */
    tecs_err_t drop_err;        /* the first one's error ...                */
    char drop_msg[160];         /* ... and its message                      */
    int32_t *sections;          /* the open tecs_defer_begin sections, the
                                   innermost last: the callback depth each
                                   was begun at                             */
    int32_t nsections;
    int32_t cap_sections;
} tecs__cmd_state;

#endif /* TECS_COMMAND_H */

#if defined(TECS__WORLD_DONE) && !defined(TECS_COMMAND_INLINES)
#define TECS_COMMAND_INLINES

/* The world is deferred or applying its queue: a change queues, and the
** calls that apply changes themselves (a frame, a delayed apply, a reset)
** cannot start. */
static inline bool tecs__cmd_nested(const tecs_world_t *w)
{
    return w->base.defer_depth > 0 || w->cmd.flushing;
}

static inline void tecs__defer_begin(tecs_world_t *w)
{
    w->base.defer_depth++;
}

static inline void tecs__defer_end(tecs_world_t *w)
{
    assert(w->base.defer_depth > 0);
    if (--w->base.defer_depth == 0 && TECS__UNLIKELY(w->cmd.deferred.count > 0))
        tecs__flush(w);
}

static inline void tecs__settle(tecs_world_t *w)
{
    if (TECS__UNLIKELY(w->cmd.deferred.count > 0) && !tecs__cmd_nested(w))
        tecs__flush(w);
}

#endif /* TECS_COMMAND_INLINES */
