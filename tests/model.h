/*
** model.h — a reference model of tinyecs and an interpreter that drives the
** library and the model side by side.
**
** A program is a config byte and a list of 8-byte operations. Each operation
** names what to do (a row of the op table in model.c) and three raw
** arguments; the interpreter turns them into an entity, a component, a value
** against the state it has at that step, so any list of operations is a valid
** program: random ones (m_prog_random), fuzz input (m_prog_from_bytes), or a
** list with operations cut out (m_shrink).
**
** m_run applies each operation to a fresh world and to the model, checks the
** call's result against the model's prediction, and compares the whole state
** (live entities, every value, every query's result, every cache in its
** order, pending delayed changes, live hooked values, every pair and the
** hierarchy) every `check_every`
** steps and at the end, and the world's memory against a world built
** directly. Callbacks (lifecycle hooks, component hooks, observers, cache
** member callbacks) run bodies the program chose, calling back into the
** world. With fail_at set, that allocation fails: the call that meets it
** must report TECS_ENOMEM and change nothing, and the run goes on.
*/
#ifndef TECS_MODEL_H
#define TECS_MODEL_H

#include "test.h"

/* One operation: op selects a row of the op table, x y z are arguments. */
typedef struct m_op {
    uint8_t op;
    uint8_t x;
    uint16_t y;
    uint32_t z;
} m_op;

typedef struct m_prog {
    uint8_t cfg;                /* rows per chunk, registration order       */
    int32_t n;
    m_op *ops;
} m_prog;

typedef struct m_opts {
    long fail_at;               /* fail this allocation (1-based); 0 never  */
    int32_t check_every;        /* full comparison period; 0 means 1        */
    uint32_t off;               /* features switched off (m_feature_bits)   */
    bool oom;                   /* a run of a series that makes allocations
                                   fail: workers run as an executor on the
                                   calling thread, so the allocations come
                                   in the same order in every run            */
} m_opts;

typedef struct m_result {
    bool failed;
    int32_t at;                 /* the step where the mismatch showed       */
    char msg[256];
    long allocs;                /* allocations the run made                 */
    long injected;              /* allocations made to fail                 */
    long ops_run;
    long enomem;                /* calls that reported out of memory        */
    bool cut;                   /* stopped early, not failed: the program met
                                   a known limit of the library (msg says
                                   which); the rest of it is not checked    */
} m_result;

/* Features of the interpreter that can be switched off, one bit each, by
** name: "life" (lifecycle hooks run bodies), "hooks" (on_add / on_set /
** on_remove hooks), "obs" (observers), "res" (bodies create and free
** indexes, filters, caches, queries), "refuse" (bodies call tecs_progress
** and tecs_delayed_apply_new), "wfree" (bodies call tecs_world_free), "freeing"
** (bodies run while the world is freed), "cache" (ordered caches),
** "cachecb" (cache on_enter / on_leave bodies, a cache freeing itself),
** "itcopy" (copied iterators), "busy" (query, cache and index frees while
** busy), "ffree" (iterations over a filter, the filter freed while its
** iteration is open), "mem" (the memory bound), "lasterr" (R4: success
** leaves TECS_OK), "defchk" (every callback sees tecs_is_deferred true),
** "struct" (bodies make structural changes), "citer" (cache iterations,
** writing the key through the cache's iterator), "cberr" (the last-error
** rule also when a call inside a callback failed during the call). Every feature is on unless named in m_opts.off or in
** the environment variable TECS_MODEL_OFF (a comma list, or "all"). */
uint32_t m_feature_bits(const char *list);

/* The op table. */
int m_op_count(void);
const char *m_op_name(int op);

void m_prog_random(m_prog *p, uint64_t seed, int32_t n);
/* Parse fuzz bytes: byte 0 is cfg, then 8 bytes per op (a short tail is
** dropped). At most max_ops operations. */
void m_prog_from_bytes(m_prog *p, const uint8_t *data, size_t size, int32_t max_ops);
/* The byte form m_prog_from_bytes reads; caller frees. */
uint8_t *m_prog_to_bytes(const m_prog *p, size_t *size);
void m_prog_free(m_prog *p);
void m_prog_print(FILE *f, const m_prog *p);

m_result m_run(const m_prog *p, const m_opts *o);

/* Delta debugging: cut operations out of a failing program as long as it
** still fails, until no single operation can go. At most max_runs runs. */
void m_shrink(m_prog *p, const m_opts *o, long max_runs);

/* A fuzz or regression input: "OM" k0 k1 first means allocation
** 1 + k0 + 256 k1 fails; the rest is a program (m_prog_from_bytes). */
void m_parse_input(const uint8_t *data, size_t size, int32_t max_ops, m_prog *p, m_opts *o);

/* Report a failing program: the failure, then the program shrunk, as a
** listing and as bytes m_prog_from_bytes reads (save it under fuzz/regress/
** to keep it as a regression test). p is shrunk in place. */
void m_explain(FILE *f, m_prog *p, const m_opts *o, const m_result *r);

/* Run programs from a directory of files (fuzz/regress): @return failures. */
int m_replay_dir(const char *dir, int32_t max_ops, long *files);

#endif
