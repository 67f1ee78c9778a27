/*
** main.c — the boids demo: parse the flags, run the flock headless for a
** number of frames (a progress bar on a terminal), report per-system times,
** frames per second and entity counts, and draw the flock to a PNG. With
** --compare it runs the spatial-index search and the all-pairs one from the
** same seed and prints both frame times, then the neighbour search's time
** per frame against a hand-written uniform grid over plain arrays. --threads sets the world's workers
** (default: one per processor); the checksum is the same for any count.
** --inspect PORT serves the world to a browser while it runs (the
** inspector, tinyecs_inspect, when the build has it): frames then keep to
** real time, 1/60 s each, so the page can follow them.
**
** Exit status: 0 done, 1 a run failed (out of memory, a file not written),
** 2 bad arguments.
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A terminal test and a directory: POSIX's calls, or Windows's. */
#if defined(_WIN32)
#include <direct.h>
#include <io.h>
#define stderr_is_terminal() _isatty(_fileno(stderr))
#define make_dir(path) _mkdir(path)
#else
#include <sys/stat.h>
#include <unistd.h>
#define stderr_is_terminal() isatty(STDERR_FILENO)
#define make_dir(path) mkdir(path, 0777)
#endif

#ifdef TECS_DEMO_INSPECT
#include <time.h>
#include "tinyecs/inspect.h"
#endif

#include "boids.h"
#include "live.h"
#include "render.h"

/* Relative: the picture lands in the directory the demo runs in. */
#define DEFAULT_PNG    "boids.png"
#define DT             (1.0f / 60.0f)
#define DEFAULT_FRAMES 300
#define NAIVE_FRAMES   5        /* --compare: the all-pairs run's frames  */
#define IMAGE_SIZE     1024

typedef struct options {
    int32_t boids, frames, every, predators, obstacles, threads;
    int32_t inspect;            /* --inspect: the port (0: any), -1: off  */
    uint64_t seed;
    const char *png, *frames_dir;
    const char *save, *load;    /* --save / --load: snapshot files        */
    bool naive, compare, live, quiet;
} options;

/* One worker per processor, as many as a world takes. */
static int32_t default_threads(void)
{
    int32_t n = tecs_cpu_count();
    return n < TECS_MAX_THREADS ? n : TECS_MAX_THREADS;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: boids [options]\n"
        "  --boids N       boids in the flock, 1 to %d (default %d)\n"
        "  --frames N      frames to simulate, 1/60 s each (default %d)\n"
        "  --seed N        random seed; the same seed repeats the run (default 1)\n"
        "  --predators N   predators, 0 to %d (default %d)\n"
        "  --obstacles N   obstacles, 0 to %d (default %d)\n"
        "  --threads N     worker threads, 1 to %d (default: the processors, here %d)\n"
        "  --naive         all-pairs neighbour search, O(n^2), instead of the spatial index\n"
        "  --compare       run both searches and print their frame times and the speed-up\n"
        "                  (the all-pairs run does at most %d frames), and the neighbour\n"
        "                  search's time against a hand-written grid's\n"
        "  --png PATH      where to draw the last frame (default %s, in the\n"
        "                  current directory)\n"
        "  --frames-dir D  also draw a numbered PNG into D every K frames\n"
        "  --every K       the K of --frames-dir (default 10)\n"
        "  --save FILE     save the run to a snapshot FILE after the last frame\n"
        "  --load FILE     go on with the run FILE holds (its flock, seed and counts)\n"
        "  --live          animate in the terminal (ncurses); q quits\n"
        "  --quiet         no progress bar\n"
        "  --inspect PORT  serve the world to a browser at http://127.0.0.1:PORT/ while\n"
        "                  it runs, frames in real time (0: any free port)\n"
        "  --help          this text\n",
        BOIDS_MAX_BOIDS, BOIDS_DEFAULT_BOIDS, DEFAULT_FRAMES, BOIDS_MAX_HAZARDS,
        BOIDS_DEFAULT_PREDATORS, BOIDS_MAX_HAZARDS, BOIDS_DEFAULT_OBSTACLES,
        TECS_MAX_THREADS, default_threads(), NAIVE_FRAMES, DEFAULT_PNG);
}

/* A flag that takes a count: where it goes and the range it must be in. */
typedef struct count_flag {
    const char *name;
    int32_t *slot;
    int32_t min, max;
} count_flag;

static bool find_count_flag(options *o, const char *flag, count_flag *out)
{
    const count_flag flags[] = {
        { "--boids", &o->boids, 1, BOIDS_MAX_BOIDS },
        { "--frames", &o->frames, 1, INT32_MAX },
        { "--every", &o->every, 1, INT32_MAX },
        { "--predators", &o->predators, 0, BOIDS_MAX_HAZARDS },
        { "--obstacles", &o->obstacles, 0, BOIDS_MAX_HAZARDS },
        { "--threads", &o->threads, 1, TECS_MAX_THREADS },
        { "--inspect", &o->inspect, 0, 65535 },
    };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (strcmp(flag, flags[i].name) == 0) {
            *out = flags[i];
            return true;
        }
    return false;
}

/* A whole decimal number in the flag's range; false with a message on
 * stderr when s is not one. */
static bool parse_count(const count_flag *f, const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || (errno != 0 && errno != ERANGE)) {
        fprintf(stderr, "boids: %s wants a whole number, not '%s'\n", f->name, s);
        return false;
    }
    if (v > f->max || (errno == ERANGE && v > 0)) {
        fprintf(stderr, "boids: %s %s is too large (at most %d)\n", f->name, s, (int)f->max);
        return false;
    }
    if (v < f->min) {
        fprintf(stderr, "boids: %s %s is too small (at least %d)\n", f->name, s, (int)f->min);
        return false;
    }
    *f->slot = (int32_t)v;
    return true;
}

/* A whole unsigned decimal number; false with a message when s is not one. */
static bool parse_seed(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = 0;
    if (*s >= '0' && *s <= '9')
        v = strtoull(s, &end, 10);
    if (end == NULL || *end != '\0') {
        fprintf(stderr, "boids: --seed wants a whole number, not '%s'\n", s);
        return false;
    }
    if (errno == ERANGE) {
        fprintf(stderr, "boids: --seed %s is too large (at most %" PRIu64 ")\n", s, UINT64_MAX);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/* Read argv into *o. @return 0 to run, 1 after --help, 2 on a bad argument
 * (with a message on stderr). */
static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        count_flag cf = { NULL, NULL, 0, 0 };
        bool count = find_count_flag(o, a, &cf);
        bool takes_value = count || !strcmp(a, "--seed") || !strcmp(a, "--png") ||
                           !strcmp(a, "--frames-dir") || !strcmp(a, "--save") ||
                           !strcmp(a, "--load");
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (takes_value && val == NULL) {
            fprintf(stderr, "boids: %s needs a value\n", a);
            return 2;
        }
        if (count ? !parse_count(&cf, val) :
            !strcmp(a, "--seed") ? !parse_seed(val, &o->seed) : false)
            return 2;
        if (!strcmp(a, "--png"))
            o->png = val;
        else if (!strcmp(a, "--frames-dir"))
            o->frames_dir = val;
        else if (!strcmp(a, "--save"))
            o->save = val;
        else if (!strcmp(a, "--load"))
            o->load = val;
        else if (!strcmp(a, "--naive"))
            o->naive = true;
        else if (!strcmp(a, "--compare"))
            o->compare = true;
        else if (!strcmp(a, "--live"))
            o->live = true;
        else if (!strcmp(a, "--quiet"))
            o->quiet = true;
        else if (!takes_value) {
            fprintf(stderr, "boids: unknown option '%s'\n", a);
            return 2;
        }
        i += takes_value;
    }
    return 0;
}

/* Redraw the bar when its width changes. */
static void progress(int64_t done, int64_t total, int *shown)
{
    enum { WIDTH = 40 };
    int fill = (int)(done * WIDTH / total);
    if (fill == *shown && done != total)
        return;
    *shown = fill;
    char bar[WIDTH + 1];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, '.', (size_t)(WIDTH - fill));
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %" PRId64 "/%" PRId64 " frames", bar, done, total);
    if (done == total)
        fputc('\n', stderr);
}

/* Draw the flock into path. */
static bool save_png(boids_sim *sim, canvas *c, const char *path)
{
    render_flock(c, sim);
    return render_png_write(c, path);
}

/* Draw the frame into the frames directory when its turn has come. */
static bool save_frame(boids_sim *sim, canvas *c, const options *o, int64_t frame)
{
    if (o->frames_dir == NULL || !render_png_available() || frame % o->every != 0)
        return true;
    char path[4096];
    snprintf(path, sizeof path, "%s/frame_%05" PRId64 ".png", o->frames_dir, frame);
    return save_png(sim, c, path);
}

/* ---- the inspector (--inspect) ---- */

#ifdef TECS_DEMO_INSPECT
#define INSPECT_AVAILABLE true

/* Serve sim's world on 127.0.0.1:port and print the page's address; NULL
 * with a message on stderr when it cannot start. */
static tecs_inspector_t *inspect_start(boids_sim *sim, int32_t port)
{
    tecs_inspect_error_t err;
    tecs_inspector_t *in = tecs_inspect_start(boids_world(sim), &(tecs_inspect_opts_t){
        .port = (uint16_t)port }, &err);
    if (in == NULL) {
        fprintf(stderr, "boids: cannot start the inspector on port %d: %s\n", (int)port,
                err.text);
        return NULL;
    }
    printf("inspect: http://127.0.0.1:%u/\n", (unsigned)tecs_inspect_port(in));
    fflush(stdout);
    return in;
}

/* Answer the page's requests, then wait out the rest of the frame's DT
 * since start, so that the page sees the flock move in real time. */
static void inspect_frame(tecs_inspector_t *in, double start)
{
    tecs_inspect_poll(in);
    double left = DT - (tecs_time_now() - start);
    if (left > 0.0) {
        struct timespec ts = { 0, (long)(left * 1e9) };
        nanosleep(&ts, NULL);
    }
}

static void inspect_stop(tecs_inspector_t *in)
{
    tecs_inspect_stop(in);
}
#else
#define INSPECT_AVAILABLE false
typedef struct tecs_inspector_t tecs_inspector_t;
#define inspect_start(sim, port) ((void)(sim), (void)(port), (tecs_inspector_t *)NULL)
#define inspect_frame(in, start) ((void)(in), (void)(start))
#define inspect_stop(in) ((void)(in))
#endif

typedef struct run_result {
    bool ok;
    int32_t frames;             /* frames actually run                    */
    double seconds;             /* in boids_step                          */
    double seconds_head;        /* of that, in the first `head` frames    */
} run_result;

/* Run frames frames; draw into the frames directory and the terminal. */
static run_result run(boids_sim *sim, const options *o, int32_t frames, int32_t head,
                      canvas *c, tecs_inspector_t *in)
{
    run_result r = { true, 0, 0.0, 0.0 };
    bool bar = !o->quiet && !o->live && stderr_is_terminal();
    bool live = o->live && live_begin();
    int shown = -1;
    while (r.ok && r.frames < frames) {
        double t0 = tecs_time_now();
        r.ok = boids_step(sim, DT) == TECS_OK;
        r.seconds += tecs_time_now() - t0;
        r.frames++;
        if (r.frames == head)
            r.seconds_head = r.seconds;
        r.ok = r.ok && save_frame(sim, c, o, r.frames);
        if (bar)
            progress(r.frames, frames, &shown);
        if (live && !live_draw(sim, r.frames, frames))
            break;
        if (in != NULL)
            inspect_frame(in, t0);
    }
    if (live)
        live_end();
    return r;
}

static void report(boids_sim *sim, const run_result *r)
{
    boids_timing t[BOIDS_MAX_SYSTEMS];
    int32_t n = boids_timings(sim, t, BOIDS_MAX_SYSTEMS);
    printf("%d frames in %.2f s: %.3f ms/frame, %.1f frames/s\n", (int)r->frames, r->seconds,
           1e3 * r->seconds / r->frames, r->frames / r->seconds);
    printf("  %-11s %-12s %10s %14s\n", "system", "phase", "ms/frame", "entities/frame");
    for (int32_t i = 0; i < n; i++)
        printf("  %-11s %-12s %10.3f %14.0f\n", t[i].name, t[i].phase, t[i].ms_per_run,
               t[i].entities_per_run);
    boids_counts k = boids_count(sim);
    printf("entities %d: %d boids, %d predators, %d obstacles, %d prefabs\n",
           (int)k.entities, (int)k.boids, (int)k.predators, (int)k.obstacles, (int)k.prefabs);
    printf("births %" PRId64 ", deaths %" PRId64 "; mean speed %.1f, polarisation %.2f\n",
           k.births, k.deaths, k.mean_speed, k.polarisation);
    printf("checksum %016" PRIx64 "\n", boids_checksum(sim));
}

#define GRID_REPS 5             /* --compare: runs of the grid baseline   */

/* The neighbours system's ms per frame in sim's timings (0: none). */
static double neighbours_ms(boids_sim *sim)
{
    boids_timing t[BOIDS_MAX_SYSTEMS];
    int32_t n = boids_timings(sim, t, BOIDS_MAX_SYSTEMS);
    for (int32_t i = 0; i < n; i++)
        if (strcmp(t[i].name, "neighbours") == 0)
            return t[i].ms_per_run;
    return 0.0;
}

/* One full run of one search; ms[0] gets its ms per frame, ms[1] that of
 * its first `head` frames; with grid, grid[0] gets the neighbours system's
 * ms per frame and grid[1] the hand-written grid's, on the last frame. */
static bool simulate(const options *o, bool naive, int32_t frames, int32_t head, double *ms,
                     double *grid, canvas *c, bool draw)
{
    boids_config cfg = { .boids = o->boids, .predators = o->predators,
                         .obstacles = o->obstacles, .seed = o->seed, .naive = naive,
                         .threads = o->threads };
    boids_sim *sim;
    if (o->load && draw) {
        tecs_err_t err;
        const char *msg;
        sim = boids_load(&cfg, o->load, &err, &msg);
        if (sim == NULL) {
            fprintf(stderr, "boids: cannot load %s: %s (%s)\n", o->load, msg,
                    tecs_err_name(err));
            return false;
        }
    } else if ((sim = boids_new(&cfg)) == NULL) {
        fprintf(stderr, "boids: out of memory building the world\n");
        return false;
    }
    boids_counts k = boids_count(sim);
    printf("tinyecs boids: %d boids, %d predators, %d obstacles, world %.0f x %.0f, "
           "seed %" PRIu64 ", %s neighbour search, %d thread%s\n", (int)k.boids,
           (int)k.predators, (int)k.obstacles, boids_size(sim), boids_size(sim), boids_seed(sim),
           naive ? "all-pairs" : "spatial-index", (int)boids_threads(sim),
           boids_threads(sim) == 1 ? "" : "s");
    fflush(stdout);
    tecs_inspector_t *in = NULL;
    if (INSPECT_AVAILABLE && o->inspect >= 0 && draw &&
        (in = inspect_start(sim, o->inspect)) == NULL) {
        boids_free(sim);
        return false;
    }
    run_result r = run(sim, o, frames, head, c, in);
    inspect_stop(in);
    if (r.ok)
        report(sim, &r);
    if (r.ok && o->save && draw) {
        tecs_err_t err = boids_save(sim, o->save);
        if (err != TECS_OK)
            fprintf(stderr, "boids: cannot save %s: %s\n", o->save,
                    err == TECS_EINVAL ? "cannot write the file" : tecs_strerror(err));
        else
            printf("saved: %s\n", o->save);
        r.ok = err == TECS_OK;
    }
    if (r.ok && grid != NULL) {
        grid[0] = neighbours_ms(sim);
        grid[1] = boids_grid_ms(sim, GRID_REPS);
        r.ok = grid[1] >= 0.0;
    }
    ms[0] = r.frames > 0 ? 1e3 * r.seconds / r.frames : 0.0;
    ms[1] = r.frames >= head ? 1e3 * r.seconds_head / head : ms[0];
    if (r.ok && draw && render_png_available()) {
        r.ok = save_png(sim, c, o->png);
        if (r.ok)
            printf("png: %s (%d x %d)\n", o->png, (int)c->w, (int)c->h);
    }
    boids_free(sim);
    return r.ok;
}

/* Say which features this build lacks, and make the frames directory. */
static bool prepare(const options *o)
{
    if (!render_png_available())
        printf("png: unavailable (built without libpng); no pictures are written\n");
    if (o->live && !live_available())
        printf("live: unavailable (built without ncurses); running headless\n");
    if (o->inspect >= 0 && !INSPECT_AVAILABLE)
        printf("inspect: unavailable (built without the inspector, tinyecs_inspect: "
               "apt-get install libmicrohttpd-dev libjansson-dev, then rerun make); "
               "running without it\n");
    if (o->frames_dir != NULL && render_png_available() && make_dir(o->frames_dir) != 0 &&
        errno != EEXIST) {
        fprintf(stderr, "boids: cannot create %s: %s\n", o->frames_dir, strerror(errno));
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    options o = { .boids = BOIDS_DEFAULT_BOIDS, .predators = BOIDS_DEFAULT_PREDATORS,
                  .obstacles = BOIDS_DEFAULT_OBSTACLES, .frames = DEFAULT_FRAMES, .every = 10,
                  .threads = default_threads(), .seed = 1, .png = DEFAULT_PNG,
                  .inspect = -1 };
    int rc = parse_args(argc, argv, &o);
    if (rc != 0) {
        usage(rc == 1 ? stdout : stderr);
        return rc == 1 ? 0 : 2;
    }
    canvas c;
    if (!canvas_init(&c, IMAGE_SIZE, IMAGE_SIZE)) {
        fprintf(stderr, "boids: out of memory\n");
        return 1;
    }
    int32_t head = o.frames < NAIVE_FRAMES ? o.frames : NAIVE_FRAMES;
    double ms[2] = { 0.0, 0.0 }, ms_naive[2] = { 0.0, 0.0 };
    double grid[2] = { 0.0, 0.0 };
    bool ok = prepare(&o) && simulate(&o, o.naive && !o.compare, o.frames, head, ms,
                                      o.compare ? grid : NULL, &c, true);
    if (ok && o.compare) {
        o.frames_dir = NULL;
        o.live = false;
        ok = simulate(&o, true, head, head, ms_naive, NULL, &c, false);
        if (ok) {
            printf("compare, %d boids: spatial index %.3f ms/frame (%.3f over all %d frames),"
                   " all-pairs %.3f ms/frame, both over the first %d frames: speed-up %.1fx\n",
                   (int)o.boids, ms[1], ms[0], (int)o.frames, ms_naive[0], (int)head,
                   ms[1] > 0.0 ? ms_naive[0] / ms[1] : 0.0);
            printf("compare, neighbour search: spatial index %.3f ms/frame (the neighbours "
                   "system: flockmates and hazards, %d thread%s), hand-written grid %.3f "
                   "ms/frame (flockmates, one thread, plain arrays, rebuilt each frame)\n",
                   grid[0], (int)o.threads, o.threads == 1 ? "" : "s", grid[1]);
        }
    }
    canvas_fini(&c);
    return ok ? 0 : 1;
}
