/*
** bench_systems.c — a frame of systems doing real work over wide rows,
** against the same loop bodies over plain arrays written by hand.
**
**   systems_wide      six systems a frame through tecs_progress over n
**                     entities of three kinds (6, 10 and 7 components of
**                     1 to 64 bytes), each entity made one at a time with
**                     tecs_new and a tecs_set per component, in turn by
**                     kind, as a game spawns them; ns per entity a frame
**   systems_wide_raw  the same six bodies over plain arrays, one per
**                     component and kind, allocated and filled in order
**
** systems_wide_hooked runs the ECS row's frame with a hook's work after
** each tecs_progress, inside the timed frame (frame_inspect, in
** bench_inspect.c, polls the inspector there).
**
** A body is a loop over n rows of its columns, taken as restrict
** pointers, doing 10-50 ns of work a row (square roots, sines, a branchy
** health update, a 4x4 transform); both rows call the same bodies (not
** inlined), so the code is the same and what differs is where the rows lie
** and what the frame costs around them. The ECS row is checked, value by
** value, against a raw run of as many frames.
**
**   kind     share  components
**   unit      5/10  Pos Vel Mat Sprite Timer Team
**   fighter   3/10  Pos Vel Mat Sprite Timer Team Hp Dmg Data Brain
**   prop      2/10  Pos Mat Sprite Timer Team Hp Data
**
**   system     terms (written first)          kinds
**   move       Pos | Vel                      unit, fighter
**   brain      Vel Brain Data | Pos           fighter
**   health     Hp | Dmg Team                  fighter
**   transform  Mat | Pos Timer                all
**   sprite     Sprite Timer                   all
**   render     | Mat Sprite Team (a checksum)  all
*/
#include "bench.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDE_FRAMES 5
#define WIDE_DT (1.0f / 60)

typedef struct { float x, y, z; } Pos3;                         /* 12 bytes */
typedef struct { float x, y, z; } Vel3;                         /* 12 */
typedef struct { float m[16]; } Mat4;                           /* 64 */
typedef struct { float hp, max; } Hp;                           /*  8 */
typedef struct { float amount; uint32_t from; } Dmg;            /*  8 */
typedef struct { uint8_t id; } Team;                            /*  1 */
typedef struct { uint16_t id; uint8_t frame, layer; } Sprite;   /*  4 */
typedef struct { float t; } Timer;                              /*  4 */
typedef struct { uint64_t rng; double acc; } Data;              /* 16 */
typedef struct { float tx, ty, tz, speed; uint32_t state, pad[3]; } Brain; /* 32 */

enum { C_POS, C_VEL, C_MAT, C_SPRITE, C_TIMER, C_TEAM, C_HP, C_DMG, C_DATA, C_BRAIN, NCOMP };

static const struct { const char *name; size_t size, align; } g_comps[NCOMP] = {
    { "Pos3", sizeof(Pos3), _Alignof(Pos3) },     { "Vel3", sizeof(Vel3), _Alignof(Vel3) },
    { "Mat4", sizeof(Mat4), _Alignof(Mat4) },     { "Sprite", sizeof(Sprite), _Alignof(Sprite) },
    { "Timer", sizeof(Timer), _Alignof(Timer) },  { "Team", sizeof(Team), _Alignof(Team) },
    { "Hp", sizeof(Hp), _Alignof(Hp) },           { "Dmg", sizeof(Dmg), _Alignof(Dmg) },
    { "Data", sizeof(Data), _Alignof(Data) },     { "Brain", sizeof(Brain), _Alignof(Brain) },
};

#define BIT(c) (1u << (c))
#define K_BASE (BIT(C_POS) | BIT(C_MAT) | BIT(C_SPRITE) | BIT(C_TIMER) | BIT(C_TEAM))
enum { NKINDS = 3 };
static const uint32_t g_kinds[NKINDS] = {
    K_BASE | BIT(C_VEL),                                                    /* unit */
    K_BASE | BIT(C_VEL) | BIT(C_HP) | BIT(C_DMG) | BIT(C_DATA) | BIT(C_BRAIN),  /* fighter */
    K_BASE | BIT(C_HP) | BIT(C_DATA),                                       /* prop */
};

/* Entity i's kind: 5 units, 3 fighters, 2 props in every 10. */
static int kind_of(int64_t i)
{
    int r = (int)(i % 10);
    return r < 5 ? 0 : r < 8 ? 1 : 2;
}

/* Entity i's starting value of component c. */
static void start_value(int c, int64_t i, void *out)
{
    float f = (float)(i % 1000), g = (float)(i / 1000 % 1000);
    switch (c) {
    case C_POS: *(Pos3 *)out = (Pos3){ f, g, 0 }; break;
    case C_VEL:
        *(Vel3 *)out = (Vel3){ (float)(i * 7 % 13 - 6) * 0.25f, (float)(i * 5 % 11 - 5) * 0.25f,
                               0.1f };
        break;
    case C_MAT:
        *(Mat4 *)out = (Mat4){ { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 } };
        break;
    case C_SPRITE: *(Sprite *)out = (Sprite){ (uint16_t)(i % 50), 0, (uint8_t)(i % 3) }; break;
    case C_TIMER: *(Timer *)out = (Timer){ (float)(i % 100) * 0.01f }; break;
    case C_TEAM: *(Team *)out = (Team){ (uint8_t)(i % 4) }; break;
    case C_HP: *(Hp *)out = (Hp){ 100, 100 }; break;
    case C_DMG: *(Dmg *)out = (Dmg){ (float)(i % 7) * 0.5f, (uint32_t)i }; break;
    case C_DATA: *(Data *)out = (Data){ ((uint64_t)i + 1) * 0x9E3779B97F4A7C15ULL | 1, 0 }; break;
    case C_BRAIN:
        *(Brain *)out = (Brain){ (float)(i % 500), (float)(i % 300), 0, 2, 0, { 0, 0, 0 } };
        break;
    }
}

/* ---- the bodies: one loop over n rows of their columns each ----------- */

/* A bounded wobble of x: WIDE_CHAIN sines, each waiting for the last, the
** work that makes a body cost what a game's does. */
#define WIDE_CHAIN 3
static inline float wobble(float x)
{
    float w = x;
    for (int k = 0; k < WIDE_CHAIN; k++)
        w = sinf(w * 2.0f + x);
    return w;
}

/* Damped motion: speed capped at 4, z bobbing. */
static BENCH_NOINLINE void body_move(Pos3 *restrict p, const Vel3 *restrict v, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float s = sqrtf(v[i].x * v[i].x + v[i].y * v[i].y + v[i].z * v[i].z + 1e-6f);
        float k = (s > 4 ? 4 / s : 1) * WIDE_DT;
        p[i].x += v[i].x * k;
        p[i].y += v[i].y * k;
        p[i].z = 0.5f * p[i].z + 0.1f * wobble(p[i].x * 0.01f + p[i].y * 0.02f);
    }
}

/* Steering towards a target, a new one now and then from the entity's own
** random sequence. */
static BENCH_NOINLINE void body_brain(Vel3 *restrict v, Brain *restrict b, Data *restrict d,
                                      const Pos3 *restrict p, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float dx = b[i].tx - p[i].x, dy = b[i].ty - p[i].y, dz = b[i].tz - p[i].z;
        float dist = sqrtf(dx * dx + dy * dy + dz * dz + 1);
        float k = b[i].speed * (1 + 0.1f * wobble(dist * 0.01f)) / dist;
        v[i].x += (dx * k - v[i].x) * 0.1f;
        v[i].y += (dy * k - v[i].y) * 0.1f;
        v[i].z += (dz * k - v[i].z) * 0.1f;
        uint64_t r = d[i].rng;
        r ^= r >> 12;
        r ^= r << 25;
        r ^= r >> 27;
        d[i].rng = r;
        if ((r & 63) == 0) {
            b[i].tx = (float)((r >> 8) & 1023);
            b[i].ty = (float)((r >> 20) & 1023);
            b[i].state++;
        }
        d[i].acc += logf(dist);
    }
}

/* Damage taken by team (odd teams take half), regeneration towards the
** maximum, a respawn at zero: branchy. */
static BENCH_NOINLINE void body_health(Hp *restrict h, const Dmg *restrict d,
                                       const Team *restrict t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float hit = (t[i].id & 1) ? 0.5f * d[i].amount : d[i].amount;
        float hp = h[i].hp - hit * (1 + 0.1f * wobble(h[i].hp * 0.01f));
        if (hp <= 0)
            hp = h[i].max;
        else if (hp < h[i].max)
            hp += (h[i].max - hp) * 0.05f * expf(-hp / h[i].max);
        h[i].hp = hp;
    }
}

/* The model matrix: a turn about y by the timer, then the position. */
static BENCH_NOINLINE void body_transform(Mat4 *restrict m, const Pos3 *restrict p,
                                          const Timer *restrict t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        float a = t[i].t * 0.5f, k = 1 + 0.05f * wobble(a);
        float c = cosf(a) * k, s = sinf(a) * k;
        m[i] = (Mat4){ { c, 0, -s, 0, 0, k, 0, 0, s, 0, c, 0, p[i].x, p[i].y, p[i].z, 1 } };
    }
}

/* The animation: the timer runs, the frame is its twelfth of a second,
** eight frames a loop. */
static BENCH_NOINLINE void body_sprite(Sprite *restrict s, Timer *restrict t, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        t[i].t += WIDE_DT;
        float jitter = 0.25f * wobble(t[i].t + (float)s[i].id);
        s[i].frame = (uint8_t)(int)fmodf(t[i].t * 12.0f + jitter + 1, 8.0f);
    }
}

/* The draw: a corner of the sprite through the matrix, projected, summed
** into a checksum (integers, so the order of the rows does not matter). */
static BENCH_NOINLINE void body_render(const Mat4 *restrict m, const Sprite *restrict s,
                                       const Team *restrict t, uint64_t *sum, int32_t n)
{
    uint64_t acc = 0;
    for (int32_t i = 0; i < n; i++) {
        const float *a = m[i].m;
        float x = (float)s[i].frame, y = (float)s[i].layer;
        float X = a[0] * x + a[4] * y + a[12], Y = a[1] * x + a[5] * y + a[13];
        float W = a[3] * x + a[7] * y + a[15] + 0.001f * (float)t[i].id;
        float sx = X / W, sy = Y / W, glow = wobble(sx * 0.01f + sy * 0.02f);
        acc += (uint64_t)(uint32_t)(int32_t)((sqrtf(sx * sx + sy * sy) + glow) * 16) + s[i].id;
    }
    *sum += acc;
}

/* ---- the systems, the same for both rows ------------------------------ */

typedef struct wide_sys {
    const char *name;
    int nterms;
    int comp[4];                /* terms in order                           */
    int nwrite;                 /* the first nwrite are written             */
    void (*run)(void *const *cols, int32_t n, uint64_t *sum);
} wide_sys;

static void run_move(void *const *f, int32_t n, uint64_t *sum)
{
    (void)sum;
    body_move(f[0], f[1], n);
}

static void run_brain(void *const *f, int32_t n, uint64_t *sum)
{
    (void)sum;
    body_brain(f[0], f[1], f[2], f[3], n);
}

static void run_health(void *const *f, int32_t n, uint64_t *sum)
{
    (void)sum;
    body_health(f[0], f[1], f[2], n);
}

static void run_transform(void *const *f, int32_t n, uint64_t *sum)
{
    (void)sum;
    body_transform(f[0], f[1], f[2], n);
}

static void run_sprite(void *const *f, int32_t n, uint64_t *sum)
{
    (void)sum;
    body_sprite(f[0], f[1], n);
}

static void run_render(void *const *f, int32_t n, uint64_t *sum)
{
    body_render(f[0], f[1], f[2], sum, n);
}

enum { NSYS = 6 };
static const wide_sys g_systems[NSYS] = {
    { "move", 2, { C_POS, C_VEL }, 1, run_move },
    { "brain", 4, { C_VEL, C_BRAIN, C_DATA, C_POS }, 3, run_brain },
    { "health", 3, { C_HP, C_DMG, C_TEAM }, 1, run_health },
    { "transform", 3, { C_MAT, C_POS, C_TIMER }, 1, run_transform },
    { "sprite", 2, { C_SPRITE, C_TIMER }, 2, run_sprite },
    { "render", 3, { C_MAT, C_SPRITE, C_TEAM }, 0, run_render },
};

static bool sys_matches(const wide_sys *s, uint32_t kind)
{
    for (int t = 0; t < s->nterms; t++)
        if (!(kind & BIT(s->comp[t])))
            return false;
    return true;
}

/* ---- plain arrays ------------------------------------------------------ */

/* Every kind's columns, one array per component it has, rows in order. */
typedef struct raw_world {
    int64_t count[NKINDS];
    char *col[NKINDS][NCOMP];
    uint64_t sum;
} raw_world;

static raw_world raw_build(int64_t n)
{
    raw_world r = { { 0 }, { { 0 } }, 0 };
    for (int64_t i = 0; i < n; i++)
        r.count[kind_of(i)]++;
    for (int k = 0; k < NKINDS; k++)
        for (int c = 0; c < NCOMP; c++)
            if (g_kinds[k] & BIT(c))
                r.col[k][c] = xmalloc((size_t)r.count[k] * g_comps[c].size);
    int64_t at[NKINDS] = { 0 };
    for (int64_t i = 0; i < n; i++) {
        int k = kind_of(i);
        for (int c = 0; c < NCOMP; c++)
            if (g_kinds[k] & BIT(c))
                start_value(c, i, r.col[k][c] + (size_t)at[k] * g_comps[c].size);
        at[k]++;
    }
    return r;
}

static void raw_frame(raw_world *r)
{
    for (int s = 0; s < NSYS; s++) {
        const wide_sys *sys = &g_systems[s];
        for (int k = 0; k < NKINDS; k++) {
            if (!sys_matches(sys, g_kinds[k]))
                continue;
            void *cols[4];
            for (int t = 0; t < sys->nterms; t++)
                cols[t] = r->col[k][sys->comp[t]];
            sys->run(cols, (int32_t)r->count[k], &r->sum);
        }
    }
}

static void raw_free(raw_world *r)
{
    for (int k = 0; k < NKINDS; k++)
        for (int c = 0; c < NCOMP; c++)
            free(r->col[k][c]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of the timed frames, per entity. */
static double frame_median(double *ns, int frames, int64_t n)
{
    qsort(ns, (size_t)frames, sizeof *ns, cmp_double);
    return ns[frames / 2] / (double)n;
}

double sc_systems_wide_raw(int64_t n)
{
    raw_world r = raw_build(n);
    double ns[WIDE_FRAMES];
    raw_frame(&r);
    for (int f = 0; f < WIDE_FRAMES; f++) {
        double t0 = now_ns();
        raw_frame(&r);
        ns[f] = now_ns() - t0;
    }
    CHECK(r.sum != 0, "render saw nothing");
    raw_free(&r);
    return frame_median(ns, WIDE_FRAMES, n);
}

/* ---- the ECS world ------------------------------------------------------ */

typedef struct wide_ctx {
    const wide_sys *sys;
    uint64_t *sum;
} wide_ctx;

static void sys_call(tecs_iter_t *it)
{
    const wide_ctx *c = it->ctx;
    c->sys->run(it->fields, it->count, c->sum);
}

/* Every entity's values equal the raw world's after as many frames. */
static void check_against_raw(tecs_world_t *w, const tecs_comp_t *ids, const tecs_entity_t *ents,
                              int64_t n, int frames, uint64_t sum)
{
    raw_world r = raw_build(n);
    for (int f = 0; f < frames; f++)
        raw_frame(&r);
    CHECK(sum == r.sum, "render checksum %llu, raw %llu", (unsigned long long)sum,
          (unsigned long long)r.sum);
    int64_t at[NKINDS] = { 0 }, bad = 0;
    for (int64_t i = 0; i < n; i++) {
        int k = kind_of(i);
        for (int c = 0; c < NCOMP; c++) {
            if (!(g_kinds[k] & BIT(c)))
                continue;
            const void *v = tecs_get(w, ents[i], ids[c]);
            bad += v == NULL ||
                   memcmp(v, r.col[k][c] + (size_t)at[k] * g_comps[c].size, g_comps[c].size);
        }
        at[k]++;
    }
    CHECK(bad == 0, "%lld values differ from the raw world's", (long long)bad);
    raw_free(&r);
}

double sc_systems_wide(int64_t n)
{
    return systems_wide_hooked(n, NULL);
}

double systems_wide_hooked(int64_t n, const wide_hook *hook)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    tecs_comp_t ids[NCOMP];
    for (int c = 0; c < NCOMP; c++)
        ids[c] = tecs_component_new(w, &(tecs_component_desc_t){
            .name = g_comps[c].name, .size = g_comps[c].size, .align = g_comps[c].align });
    tecs_entity_t *ents = xmalloc((size_t)n * sizeof *ents);
    for (int64_t i = 0; i < n; i++) {          /* one at a time, as a game spawns */
        tecs_entity_t e = tecs_new(w);
        uint32_t kind = g_kinds[kind_of(i)];
        for (int c = 0; c < NCOMP; c++) {
            if (!(kind & BIT(c)))
                continue;
            _Alignas(16) char v[64];
            start_value(c, i, v);
            tecs_set(w, e, ids[c], v);
        }
        ents[i] = e;
    }
    uint64_t sum = 0;
    wide_ctx ctx[NSYS];
    for (int s = 0; s < NSYS; s++) {
        const wide_sys *sys = &g_systems[s];
        tecs_term_t terms[4];
        for (int t = 0; t < sys->nterms; t++)
            terms[t] = (tecs_term_t){ .comp = ids[sys->comp[t]],
                                      .access = t < sys->nwrite ? TECS_WRITE : TECS_READ };
        tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = terms, .term_count = sys->nterms });
        ctx[s] = (wide_ctx){ sys, &sum };
        tecs_system_t id = tecs_system_new(w, &(tecs_system_desc_t){ .name = sys->name,
            .query = q, .run = sys_call, .ctx = &ctx[s] });
        CHECK(q && id, "system %s: %s", sys->name, tecs_last_error_msg(w));
    }
    void *ud = hook ? hook->start(w) : NULL;
    double ns[WIDE_FRAMES];
    tecs_err_t err = tecs_progress(w, WIDE_DT);
    for (int f = 0; f < WIDE_FRAMES; f++) {
        double t0 = now_ns();
        err = err ? err : tecs_progress(w, WIDE_DT);
        if (hook)
            hook->frame(ud);
        ns[f] = now_ns() - t0;
    }
    if (hook)
        hook->stop(ud);
    CHECK(err == TECS_OK, "tecs_progress: %s", tecs_strerror(err));
    check_against_raw(w, ids, ents, n, WIDE_FRAMES + 1, sum);
    free(ents);
    tecs_world_free(w);
    return frame_median(ns, WIDE_FRAMES, n);
}
