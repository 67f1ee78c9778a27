#define _POSIX_C_SOURCE 200809L
/*
** model_run — random programs against the model for as long as asked.
**
**   model_run [--seconds N] [--seed S] [--ops N] [--check-every N] [--save F]
**   model_run --seed S --ops N --emit F     (write the program, run nothing)
**   model_run --oom 1 --ops 150 ...          (also fail each allocation in turn)
**   model_run --replay F                     (run one saved input, e.g. a fuzz seed)
**   model_run --off LIST ...                 (switch features off, see model.h)
**
** Seeds S, S+1, ... each give a program of N ops (default 2000); the run
** stops after N seconds (default 10), or after the one seed if --seed is
** given without --seconds. A failure prints its seed and the shrunk program
** (and with --save writes it, for fuzz/regress/) and exits 1.
*/
#include "model.h"

static void save_prog(const char *path, const m_prog *p)
{
    size_t size;
    uint8_t *b = m_prog_to_bytes(p, &size);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(b, 1, size, f);
        fclose(f);
    }
    free(b);
}

/* Run one input as the fuzzer would read it; explain a failure. */
static int replay_file(const char *path, uint32_t off, int32_t every)
{
    static uint8_t buf[1 << 16];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return 2;
    }
    size_t size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    m_prog p;
    m_opts o;
    m_parse_input(buf, size, 100000, &p, &o);
    o.off = off;
    if (every > 0)
        o.check_every = every;
    m_result r = m_run(&p, &o);
    if (r.failed)
        m_explain(stderr, &p, &o, &r);
    else if (r.cut)
        printf("%s: %d ops, no mismatch; %s\n", path, (int)p.n, r.msg);
    else
        printf("%s: %d ops, no mismatch\n", path, (int)p.n);
    m_prog_free(&p);
    return r.failed;
}

int main(int argc, char **argv)
{
    double seconds = -1;
    uint64_t seed = 1;
    bool one = false;
    int32_t nops = 2000, every = 8;
    const char *save = NULL, *emit = NULL, *replay = NULL;
    uint32_t off = 0;
    bool every_set = false;
    bool oom = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 0), one = true;
        else if (strcmp(argv[i], "--ops") == 0)
            nops = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--check-every") == 0)
            every = atoi(argv[i + 1]), every_set = true;
        else if (strcmp(argv[i], "--save") == 0)
            save = argv[i + 1];
        else if (strcmp(argv[i], "--oom") == 0)
            oom = atoi(argv[i + 1]) != 0;
        else if (strcmp(argv[i], "--emit") == 0)
            emit = argv[i + 1];
        else if (strcmp(argv[i], "--replay") == 0)
            replay = argv[i + 1];
        else if (strcmp(argv[i], "--off") == 0)
            off = m_feature_bits(argv[i + 1]);
        else {
            fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--ops N] "
                            "[--check-every N] [--save FILE] [--emit FILE] [--oom 1] "
                            "[--replay FILE] [--off LIST]\n", argv[0]);
            return 2;
        }
    }
    if (emit) {                         /* write the seed's program, e.g. a fuzz seed */
        m_prog p;
        m_prog_random(&p, seed, nops);
        save_prog(emit, &p);
        m_prog_free(&p);
        return 0;
    }
    if (replay)
        return replay_file(replay, off, every_set ? every : 0);
    if (seconds < 0)
        seconds = one ? 0 : 10;
    double start = tecs_time_now();
    long total = 0, runs = 0, cuts = 0;
    do {
        m_prog p;
        m_prog_random(&p, seed, nops);
        m_opts o = { .check_every = every, .off = off, .oom = oom };
        m_result r = m_run(&p, &o);
        total += r.ops_run;
        runs++;
        cuts += r.cut;
        for (long k = 1; oom && !r.failed && k <= r.allocs; k++) {
            o.fail_at = k;              /* every allocation of this program fails once */
            m_result f = m_run(&p, &o);
            total += f.ops_run;
            runs++;
            cuts += f.cut;
            if (f.failed)
                r = f;
        }
        if (r.failed) {
            fprintf(stderr, "seed %llu fails:\n", (unsigned long long)seed);
            m_explain(stderr, &p, &o, &r);
            if (save)
                save_prog(save, &p);
            m_prog_free(&p);
            return 1;
        }
        m_prog_free(&p);
        seed++;
    } while (tecs_time_now() - start < seconds);
    printf("%ld programs, %ld operations, %.1f s, no mismatch (last seed %llu)\n", runs, total,
           tecs_time_now() - start, (unsigned long long)seed - 1);
    if (cuts)
        printf("%ld program(s) cut short at a known limit of the library (m_result.cut)\n",
               cuts);
    return 0;
}
