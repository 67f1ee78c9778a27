/*
** test_pool.c — the world's thread pool (src/os.c), tested through its
** internal interface (os.h): start and stop, jobs and the memory they
** share, out of memory and threads that fail to start. Its own program,
** pool_tests (CTest label `threads`): where the linker wraps symbols
** (GNU ld, lld), it links with --wrap=pthread_create,--wrap=pthread_join
** (TECS_TEST_WRAP), so that a case can make the k-th thread fail to start
** and count the threads joined. Elsewhere those cases say they are skipped.
*/
#if defined(TECS_TEST_WRAP) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include "test.h"
#include "private.h"   /* tecs__pool_*: the pool's interface (os.h) */

#if defined(TECS_TEST_WRAP)
#include <errno.h>
#include <pthread.h>

int __real_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __real_pthread_join(pthread_t t, void **ret);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_join(pthread_t t, void **ret);

/* Only the test's thread starts and joins threads, so plain counters do. */
static struct {
    int calls;                  /* pthread_create calls                     */
    int fail_at;                /* the call (1-based) that fails, 0: none   */
    int created, joined;
} wrap;

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (++wrap.calls == wrap.fail_at)
        return EAGAIN;
    int err = __real_pthread_create(t, attr, fn, arg);
    if (err == 0)
        wrap.created++;
    return err;
}

int __wrap_pthread_join(pthread_t t, void **ret)
{
    int err = __real_pthread_join(t, ret);
    if (err == 0)
        wrap.joined++;
    return err;
}
#endif

/* A job that writes its own slot: the value the submitter gave it. */
typedef struct slot {
    int value;                  /* written before submit                    */
    int seen;                   /* the job copies value here                */
} slot;

static void write_slot(void *arg)
{
    slot *s = arg;
    s->seen = s->value;
}

/* Submit n jobs of one batch, wait, and check each wrote its slot. */
static void run_batch(tecs__pool *p, slot *slots, int n, int batch)
{
    for (int i = 0; i < n; i++) {
        slots[i].value = batch * TECS__POOL_JOBS + i + 1;
        slots[i].seen = 0;
        tecs__pool_submit(p, write_slot, &slots[i]);
    }
    tecs__pool_wait(p);
    for (int i = 0; i < n; i++)
        CHECK_EQ(slots[i].seen, slots[i].value);
}

TEST(pool_start_stop_many)
{
    tecs_world_t *w = tw_new();
    size_t mem = tecs_world_memory(w);
    for (int32_t n = 1; n <= 7; n++) {
        for (int i = 0; i < 200; i++) {
            tecs__pool *p = NULL;
            CHECK_ERR(tecs__pool_start(w, n, &p), TECS_OK);
            CHECK(p != NULL);
            CHECK_EQ(tecs__pool_threads(p), n);
            CHECK(tecs_world_memory(w) > mem);
            if (i % 8 == 0) {
                slot s[TECS__POOL_JOBS];
                run_batch(p, s, (int)n + 1, i);
            }
            tecs__pool_stop(w, p);
            CHECK_EQ(tecs_world_memory(w), mem);
        }
    }
    tecs__pool_stop(w, NULL);
    CHECK_EQ(tecs__pool_threads(NULL), 0);
    tw_free(w);
}

TEST(pool_stop_right_after_start)
{
    tecs_world_t *w = tw_new();
    for (int i = 0; i < 300; i++) {
        int32_t n = i % 25 == 0 ? TECS_MAX_THREADS - 1 : 1 + i % 7;
        tecs__pool *p = NULL;
        CHECK_ERR(tecs__pool_start(w, n, &p), TECS_OK);
        tecs__pool_stop(w, p);
    }
    tw_free(w);
}

TEST(pool_jobs_write_their_slots)
{
    tecs_world_t *w = tw_new();
    uint64_t rng = 0x9e3779b97f4a7c15u;
    slot slots[TECS__POOL_JOBS];
    int batch = 0;
    for (int32_t n = 1; n <= 7; n++) {
        tecs__pool *p = NULL;
        CHECK_ERR(tecs__pool_start(w, n, &p), TECS_OK);
        for (int b = 0; b < 10000 / 7 + 1; b++) {
            int size = (int)(tw_rand(&rng) % TECS__POOL_JOBS) + 1;
            if (b % 100 == 0)
                size = b % 200 == 0 ? TECS__POOL_JOBS : 1;
            run_batch(p, slots, size, batch++);
        }
        /* An empty batch: wait returns at once. */
        tecs__pool_wait(p);
        tecs__pool_stop(w, p);
    }
    CHECK(batch >= 10000);
    tw_free(w);
}

/* A job that checks a buffer written before submit and fills its own
** part of another; the test reads that part after wait. */
enum { PART = 4096, PARTS = 8 };
typedef struct shared {
    int32_t in[PART];           /* written by the submitter                 */
    int32_t out[PARTS][PART];   /* part k written by job k                  */
    int bad[PARTS];             /* job k saw an `in` unlike the submitter's */
    int k;
} shared;

typedef struct part { shared *s; int k; } part;

static void fill_part(void *arg)
{
    part *pt = arg;
    shared *s = pt->s;
    for (int i = 0; i < PART; i++) {
        if (s->in[i] != s->k * PART + i)
            s->bad[pt->k]++;
        s->out[pt->k][i] = s->in[i] * 2 + pt->k;
    }
}

TEST(pool_writes_visible_after_wait)
{
    tecs_world_t *w = tw_new();
    shared *s = calloc(1, sizeof *s);
    CHECK(s != NULL);
    part parts[PARTS];
    tecs__pool *p = NULL;
    CHECK_ERR(tecs__pool_start(w, 3, &p), TECS_OK);
    for (int round = 0; round < 50; round++) {
        s->k = round;
        for (int i = 0; i < PART; i++)
            s->in[i] = round * PART + i;
        for (int k = 0; k < PARTS; k++) {
            parts[k] = (part){ s, k };
            tecs__pool_submit(p, fill_part, &parts[k]);
        }
        tecs__pool_wait(p);
        for (int k = 0; k < PARTS; k++) {
            CHECK_EQ(s->bad[k], 0);
            for (int i = 0; i < PART; i++)
                if (s->out[k][i] != s->in[i] * 2 + k)
                    CHECK_EQ(s->out[k][i], s->in[i] * 2 + k);
        }
    }
    tecs__pool_stop(w, p);
    free(s);
    tw_free(w);
}

/* More jobs than the ring holds between two waits: those past it run on
** the submitting thread, and every one runs once. */
static void count_job(void *arg)
{
    slot *s = arg;
    s->seen++;
}

TEST(pool_submit_past_the_ring)
{
    tecs_world_t *w = tw_new();
    slot slots[3 * TECS__POOL_JOBS] = { { 0, 0 } };
    tecs__pool *p = NULL;
    CHECK_ERR(tecs__pool_start(w, 2, &p), TECS_OK);
    for (int i = 0; i < 3 * TECS__POOL_JOBS; i++)
        tecs__pool_submit(p, count_job, &slots[i]);
    tecs__pool_wait(p);
    for (int i = 0; i < 3 * TECS__POOL_JOBS; i++)
        CHECK_EQ(slots[i].seen, 1);
    tecs__pool_stop(w, p);
    tw_free(w);
}

TEST(pool_start_out_of_memory)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    CHECK(w != NULL);
    size_t mem = tecs_world_memory(w);
    long blocks = a.blocks;
    int failed = 0;
    for (int32_t n = 1; n <= 7; n += 3) {
        for (long k = 1;; k++) {
            tecs__pool *p = (tecs__pool *)&a;    /* set to NULL on failure */
            a.fail_at = a.calls + k;
            tecs_err_t err = tecs__pool_start(w, n, &p);
            a.fail_at = 0;
            if (err == TECS_OK) {
                tecs__pool_stop(w, p);
                break;
            }
            failed++;
            CHECK_ERR(err, TECS_ENOMEM);
            CHECK_ERR(tecs_last_error(w), TECS_ENOMEM);
            CHECK(p == NULL);
            CHECK_EQ(tecs_world_memory(w), mem);
            CHECK_EQ(a.blocks, blocks);
        }
    }
    CHECK(failed > 0);
    CHECK_EQ(tecs_world_memory(w), mem);
    tw_free(w);
}

TEST(pool_thread_start_fails)
{
#if defined(TECS_TEST_WRAP)
    tecs_world_t *w = tw_new();
    size_t mem = tecs_world_memory(w);
    slot slots[TECS__POOL_JOBS];
    for (int32_t n = 1; n <= 7; n++) {
        for (int k = 1; k <= n; k++) {
            wrap.calls = wrap.created = wrap.joined = 0;
            wrap.fail_at = k;
            tecs__pool *p = (tecs__pool *)&wrap;    /* set to NULL on failure */
            CHECK_ERR(tecs__pool_start(w, n, &p), TECS_ETHREAD);
            wrap.fail_at = 0;
            CHECK(p == NULL);
            CHECK_ERR(tecs_last_error(w), TECS_ETHREAD);
            char want[64];
            snprintf(want, sizeof want, "thread %d of %d could not be started", k, (int)n);
            if (strstr(tecs_last_error_msg(w), want) == NULL) {
                fprintf(stderr, "  message: %s\n", tecs_last_error_msg(w));
                CHECK(!"the message names the thread");
            }
            snprintf(want, sizeof want, "(error %d)", EAGAIN);
            CHECK(strstr(tecs_last_error_msg(w), want) != NULL);
            /* The threads started before it were joined, and nothing is held. */
            CHECK_EQ(wrap.calls, k);
            CHECK_EQ(wrap.created, k - 1);
            CHECK_EQ(wrap.joined, k - 1);
            CHECK_EQ(tecs_world_memory(w), mem);

            /* The world starts a pool again, and its jobs all run. */
            CHECK_ERR(tecs__pool_start(w, n, &p), TECS_OK);
            CHECK_EQ(wrap.created, k - 1 + n);
            run_batch(p, slots, 3 * (int)n < TECS__POOL_JOBS ? 3 * (int)n : TECS__POOL_JOBS, k);
            tecs__pool_stop(w, p);
            CHECK_EQ(wrap.joined, wrap.created);
            CHECK_EQ(tecs_world_memory(w), mem);
        }
    }
    tw_free(w);
#else
    printf("skipped: this linker does not wrap pthread_create\n");
#endif
}

TEST(pool_cpu_count)
{
    int32_t n = tecs_cpu_count();
    CHECK(n >= 1);
    CHECK_EQ(tecs_cpu_count(), n);
}
