/*
** The model-based tests (tests/model.c): random programs checked against
** the reference model, every allocation of a fixed program made to fail,
** and the committed fuzz findings replayed. Every feature of the
** interpreter is on; TECS_MODEL_OFF=name,... switches some off (model.h),
** e.g. to see which defect one check finds.
*/
#include "model.h"



/* Run one program; on a mismatch print the seed and the shrunk program. */
static void run_or_explain(m_prog *p, const m_opts *o, uint64_t seed)
{
    m_result r = m_run(p, o);
    if (!r.failed)
        return;
    fprintf(stderr, "seed %llu (model_run --seed %llu --ops %d):\n", (unsigned long long)seed,
            (unsigned long long)seed, (int)p->n);
    m_explain(stderr, p, o, &r);
    test_fail(__FILE__, __LINE__, "the world equals the model");
}

/* Operations for the long random test: 1,000,000, or TECS_MODEL_OPS (the
** sanitizer and valgrind runs ask for fewer). */
static long model_ops(void)
{
    const char *s = getenv("TECS_MODEL_OPS");
    return s && atol(s) > 0 ? atol(s) : 1000000;
}

TEST(model_random_programs)
{
    /* Many seeds of 2,000 operations, compared every 8 steps. */
    long total = 0, want = model_ops();
    uint64_t seed = 1;
    for (; total < want; seed++) {
        m_prog p;
        m_prog_random(&p, seed, 2000);
        run_or_explain(&p, &(m_opts){ .check_every = 8 }, seed);
        total += p.n;
        m_prog_free(&p);
    }
    printf("model: %ld operations, %llu seeds\n", total, (unsigned long long)seed - 1);
}

TEST(model_random_short_programs_checked_every_step)
{
    for (uint64_t seed = 1000001; seed < 1000401; seed++) {
        m_prog p;
        m_prog_random(&p, seed, 200);
        run_or_explain(&p, &(m_opts){ .check_every = 1 }, seed);
        m_prog_free(&p);
    }
}

/* A fixed program that goes through the op table in turn (every kind of
** call), with random arguments. */
static void every_kind(m_prog *p, int32_t rounds)
{
    m_prog r;
    m_prog_random(&r, 77, rounds * m_op_count());
    for (int32_t i = 0; i < r.n; i++) {
        r.ops[i].op = (uint8_t)(i % m_op_count());
        if (strcmp(m_op_name(r.ops[i].op), "delay_burst") == 0)
            r.ops[i].z -= r.ops[i].z % 449;     /* its smallest burst: 64 births */
    }
    r.cfg = 0;                                  /* 16 rows per chunk */
    *p = r;
}

TEST(model_out_of_memory_at_every_allocation)
{
    m_prog p;
    every_kind(&p, 20);
    CHECK(!m_run(&p, &(m_opts){ .check_every = 1 }).failed);
    /* The runs below check every 16 steps, and checks may allocate: the
    ** allocations to fail in turn are those of a clean run that does the
    ** same. */
    m_result clean = m_run(&p, &(m_opts){ .check_every = 16 });
    CHECK(!clean.failed);
    CHECK(clean.allocs > 50);
    long hit = 0, reported = 0;
    for (long k = 1; k <= clean.allocs; k++) {
        m_opts o = { .fail_at = k, .check_every = 16 };
        m_result r = m_run(&p, &o);
        if (r.failed) {
            fprintf(stderr, "allocation %ld of %ld failing:\n", k, clean.allocs);
            m_explain(stderr, &p, &o, &r);
            test_fail(__FILE__, __LINE__, "the world equals the model after out of memory");
        }
        hit += r.injected;
        reported += r.enomem;
    }
    CHECK_EQ(hit, clean.allocs);            /* every allocation was tried */
    CHECK(reported > clean.allocs / 2);     /* most failures reach the caller */
    printf("model oom: %ld allocations, each made to fail in turn; %ld calls reported "
           "TECS_ENOMEM\n", clean.allocs, reported);
    m_prog_free(&p);
}

TEST(model_fuzz_findings_replay)
{
    long files = 0;
    CHECK_EQ(m_replay_dir(TECS_SOURCE_DIR "/fuzz/regress", 100000, &files), 0);
    long seeds = 0;
    CHECK_EQ(m_replay_dir(TECS_SOURCE_DIR "/fuzz/corpus/model", 100000, &seeds), 0);
    printf("replayed %ld findings and %ld corpus seeds\n", files, seeds);
}
