/*
** boids.c — the flock: components, the spatial index and the systems.
**
** Entities and what they carry:
**
**     boid      Position Velocity Flock Life  [Boid]
**     predator  Position Velocity Hazard      [Predator]
**     obstacle  Hazard                        [Obstacle]
**
** Each kind is made from a prefab (tecs_instantiate), which holds what
** its instances start with but their place: the searches ask the spatial
** indexes directly, and an index holds every entity's values, a
** prefab's too, so no prefab holds Position or Hazard.
**
** Two spatial indexes: Position (cell = the view radius) finds a boid's
** flockmates, Hazard (bigger cells, few entries) finds what it must avoid.
** The world wraps around, so a search near an edge also looks at the
** images of its circle on the far side (an `or` of radius conditions) and
** every offset is taken the short way round.
**
** One frame, phase by phase:
**
**     PRE_UPDATE   neighbours  sums over flockmates and hazards -> Flock
**     ON_UPDATE    steer       Flock -> Velocity (the rules, speed limits)
**                  hunt        predators chase the nearest boid
**                  move        Position += Velocity * dt
**     POST_UPDATE  wrap        Position back into [0, size)
**                  hazards     predators' Hazard follows their Position
**     PRE_STORE    life        age; the old and the caught are delay-destroyed
**                  spawn       delay-new boids to keep the population
**     ON_STORE     stats       mean speed and polarisation
**
** Delayed births and deaths are applied after the frame (boids_step).
**
** The neighbour search and steering are parallel systems: their rows are
** split across the world's workers (--threads). A worker may not open an
** iteration or make a filter, so the search asks the index directly, one
** call per image of the circle on the torus, into the worker's own scratch
** (it->worker picks it): tecs_index_near_xy for flockmates, which hands
** out their positions with their ids, and tecs_index_near for hazards; it
** reads the velocities and hazards it found with tecs_get through
** it->world. A predator's hunt runs on the calling thread and iterates a
** where over one filter, reset for each search.
**
** Naive and spatial searches keep the flockmates (and hazards) that pass
** the same exact distance test (the index is asked a slightly larger
** circle) and sum them in the same order, by entity slot (the index hands
** them out in grid order, the scan in query order), so the sums, and hence
** the whole run, are bit for bit the same in both modes and for any number
** of threads.
*/
#include "boids.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs/index.h"
#include "tinyecs/meta.h"
#include "tinyecs/relation.h"
#include "tinyecs/resource.h"
#include "tinyecs/snapshot.h"
#include <stdio.h>

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Flock {          /* what the neighbour search found          */
    float cx, cy;               /* sum of offsets to flockmates (cohesion)  */
    float ax, ay;               /* sum of their velocities (alignment)      */
    float sx, sy;               /* push away from close ones (separation)   */
    float hx, hy;               /* push away from hazards (avoidance)       */
    int32_t n;                  /* flockmates seen                          */
    int32_t caught;             /* a predator is within reach               */
} Flock;
typedef struct Life { float age, span; } Life;
typedef struct Hazard { float x, y, r; int32_t predator; } Hazard;
/* The sim's own state, saved in a snapshot as a world resource: what a
** loaded run needs to go on as the saved one would have. */
typedef struct BoidsState {
    uint64_t rng, seed;
    int64_t births, deaths;
    int32_t boids, predators, obstacles;
    float size;
} BoidsState;

#define VIEW_R      16.0f       /* a boid sees flockmates this far          */
#define SEP_R       6.0f        /* and keeps this much room                 */
#define FLEE_R      56.0f       /* it flees predators this close            */
#define MARGIN      20.0f       /* it steers clear of obstacles by this     */
#define CATCH_R     3.5f        /* a predator this close eats it            */
#define HUNT_R      90.0f       /* a predator sees boids this far           */
#define OBST_MIN    14.0f       /* obstacle radii                           */
#define OBST_MAX    40.0f
#define HAZARD_R    (OBST_MAX + FLEE_R)
#define MIN_SPEED   25.0f
#define MAX_SPEED   70.0f
#define CRUISE      50.0f       /* the speed a boid settles at              */
#define W_CRUISE    2.0f
#define PRED_SPEED  78.0f
#define W_SEP       120.0f
#define W_ALI       4.0f
#define W_COH       1.2f
#define W_AVOID     700.0f
#define LIFE_MIN    20.0f       /* seconds a boid lives                     */
#define LIFE_MAX    60.0f

/* What a search found: a flockmate (a, b: its velocity) or a hazard (a: its
** radius, predator set for a predator), at offset (dx, dy) the short way. */
typedef struct seen {
    tecs_entity_t e;
    float dx, dy, a, b;
    int32_t predator;
} seen;

/* One worker's room for its searches, kept from frame to frame; grown by
** the worker that owns it when a search finds more than it holds. */
typedef struct scratch {
    tecs_entity_t *ids;         /* what the index handed out                */
    int32_t cap_ids;
    float *xy;                  /* ... and their points (2 * cap_ids)       */
    int32_t cap_xy;
    seen *seen;                 /* what passed the exact test               */
    int32_t cap_seen;
    seen *seen_tmp;             /* room to sort seen                        */
    int32_t cap_seen_tmp;
    bool failed;                /* out of memory, or the index refused      */
} scratch;

#define SCRATCH_START 256       /* entries each array starts with           */

struct boids_sim {
    tecs_world_t *w;
    scratch *scr;               /* one per worker (tecs_world_threads)      */
    int32_t nscr;
    boids_config cfg;
    tecs_comp_t pos, vel, flock, life, hazard, boid, predator, obstacle, state;
    tecs_entity_t boid_kind, predator_kind, obstacle_kind;     /* the prefabs */
    tecs_index_t *by_pos, *by_hazard;
    tecs_filter_t *hunt;        /* the hunt's filter, reset for each search */
    tecs_query_t *q_mates;      /* Position, Velocity of boids (read)       */
    tecs_query_t *q_hazards;    /* Hazard (read)                            */
    tecs_query_t *q_preds;      /* Position, Velocity of predators (read)   */
    tecs_system_t sys[BOIDS_MAX_SYSTEMS];
    tecs_phase_t phase[BOIDS_MAX_SYSTEMS];
    int32_t nsys;
    uint64_t rng;
    int64_t births, deaths;
    int32_t dying;              /* delay-destroyed this frame               */
    int64_t stats_frame;        /* frame the sums below belong to           */
    double speed_sum, hx_sum, hy_sum;
    int32_t stats_n;
};

/* ---- small helpers ---------------------------------------------------- */

/* splitmix64: the run's only source of randomness. */
static uint64_t rng_next(boids_sim *s)
{
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A float in [lo, hi). */
static float rng_range(boids_sim *s, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rng_next(s) >> 11) * 0x1.0p-53);
}

/* The offset d taken the short way round a wrapped side of length size. */
static inline float wrap_delta(float d, float size)
{
    if (d > 0.5f * size)
        return d - size;
    if (d < -0.5f * size)
        return d + size;
    return d;
}

/* A point moved back into [0, size). */
static inline float wrap_coord(float v, float size)
{
    if (v < 0.0f)
        v += size;
    else if (v >= size)
        v -= size;
    return v < 0.0f || v >= size ? 0.0f : v;
}

/* ---- neighbour search -------------------------------------------------- */

/* One image of the search circle for every side it crosses. */
static tecs_cond_t wrapped_radius(tecs_filter_t *f, tecs_index_t *x, float size, float px,
                                  float py, float r)
{
    float ox = px < r ? size : px > size - r ? -size : 0.0f;
    float oy = py < r ? size : py > size - r ? -size : 0.0f;
    tecs_cond_t c = tecs_filter_radius(f, x, px, py, r);
    if (ox != 0.0f)
        c = tecs_filter_or(f, c, tecs_filter_radius(f, x, px + ox, py, r));
    if (oy != 0.0f)
        c = tecs_filter_or(f, c, tecs_filter_radius(f, x, px, py + oy, r));
    if (ox != 0.0f && oy != 0.0f)
        c = tecs_filter_or(f, c, tecs_filter_radius(f, x, px + ox, py + oy, r));
    return c;
}

/* Start iterating the rows of q near (px, py): through the index, over the
 * sim's one filter, reset for this search (so a search allocates nothing),
 * or every row when naive. */
static tecs_iter_t near_iter(boids_sim *s, tecs_query_t *q, tecs_index_t *x, float px,
                             float py, float r, bool naive)
{
    if (naive)
        return TECS_ITER(tecs_query_world(q), .query = q);
    tecs_filter_reset(s->hunt);   /* a little wider than the exact test callers apply */
    wrapped_radius(s->hunt, x, s->cfg.size, px, py, r * 1.001f + 0.01f);
    return TECS_ITER(tecs_query_world(q), .query = q, .where = s->hunt);
}

/* Room for need items in *p (of size bytes each, *cap now). */
static bool grow(void **p, int32_t *cap, int32_t need, size_t size)
{
    if (need <= *cap)
        return true;
    int32_t n = *cap > 0 ? *cap : SCRATCH_START;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t)n * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = n;
    return true;
}

/* The slot of entity e: the sort key of everything a search finds. Live
 * entities have distinct slots, and their records lie in slot order, so
 * reads in that order walk memory forwards. */
static inline uint32_t slot_of(tecs_entity_t e)
{
    return TECS_ENTITY_INDEX(e);
}

/* The ids the index holds within r of (px, py) or of one of its images on
 * the torus, into sc->ids (in grid order), and with points their points
 * into sc->xy. @return how many, or -1. */
static int32_t near_ids(boids_sim *s, scratch *sc, tecs_index_t *x, float px, float py,
                        float r, bool points)
{
    const float size = s->cfg.size;
    float ox = px < r ? size : px > size - r ? -size : 0.0f;
    float oy = py < r ? size : py > size - r ? -size : 0.0f;
    const float cx[4] = { px, px + ox, px, px + ox }, cy[4] = { py, py, py + oy, py + oy };
    const bool on[4] = { true, ox != 0.0f, oy != 0.0f, ox != 0.0f && oy != 0.0f };
    int32_t n = 0;
    for (int i = 0; i < 4; i++) {
        if (!on[i])
            continue;
        float *xy = points ? sc->xy + 2 * n : NULL;
        int32_t k = tecs_index_near_xy(x, cx[i], cy[i], r, sc->ids + n, xy, sc->cap_ids - n);
        if (k > sc->cap_ids - n) {      /* more than fits: grow and ask again */
            if (!grow((void **)&sc->ids, &sc->cap_ids, n + k, sizeof *sc->ids) ||
                !grow((void **)&sc->xy, &sc->cap_xy, 2 * sc->cap_ids, sizeof *sc->xy))
                return -1;
            xy = points ? sc->xy + 2 * n : NULL;
            k = tecs_index_near_xy(x, cx[i], cy[i], r, sc->ids + n, xy, sc->cap_ids - n);
        }
        if (k < 0)
            return -1;
        n += k;
    }
    return n;
}

/* Keep v as the n-th thing seen. @return n + 1, or -1 out of memory. */
static int32_t keep(scratch *sc, int32_t n, seen v)
{
    if (!grow((void **)&sc->seen, &sc->cap_seen, n + 1, sizeof *sc->seen))
        return -1;
    sc->seen[n] = v;
    return n + 1;
}

/* Sort v[0..n) by slot, with room for n in tmp: a merge sort, runs of 8
 * sorted by insertion first. It is stable, and live entities' slots differ,
 * so what is found sorts to one order whatever order the search gave. */
static void sort_seen(seen *v, seen *tmp, int32_t n)
{
    for (int32_t lo = 0; lo < n; lo += 8)
        for (int32_t i = lo + 1; i < n && i < lo + 8; i++) {
            seen t = v[i];
            int32_t j = i;
            for (; j > lo && slot_of(v[j - 1].e) > slot_of(t.e); j--)
                v[j] = v[j - 1];
            v[j] = t;
        }
    for (int32_t width = 8; width < n; width *= 2) {
        for (int32_t lo = 0; lo < n; lo += 2 * width) {
            int32_t mid = lo + width < n ? lo + width : n;
            int32_t hi = mid + width < n ? mid + width : n;
            int32_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = slot_of(v[j].e) < slot_of(v[i].e) ? v[j++] : v[i++];
            while (i < mid)
                tmp[k++] = v[i++];
            while (j < hi)
                tmp[k++] = v[j++];
        }
        memcpy(v, tmp, (size_t)n * sizeof *v);
    }
}

/* Sort the n things sc->seen holds by slot. @return false out of memory. */
static bool sort_scratch(scratch *sc, int32_t n)
{
    if (!grow((void **)&sc->seen_tmp, &sc->cap_seen_tmp, n, sizeof *sc->seen_tmp))
        return false;
    sort_seen(sc->seen, sc->seen_tmp, n);
    return true;
}

/* The flockmates of boid self at p (not self, within VIEW_R the short way
 * round) into sc->seen, by the index through w. @return how many, or -1. */
static int32_t find_mates(boids_sim *s, tecs_world_t *w, scratch *sc, tecs_entity_t self,
                          Position p)
{
    const float size = s->cfg.size;
    int32_t n = near_ids(s, sc, s->by_pos, p.x, p.y, VIEW_R * 1.001f + 0.01f, true), k = 0;
    for (int32_t i = 0; i < n && k >= 0; i++) {
        tecs_entity_t e = sc->ids[i];
        if (e == self)
            continue;
        float dx = wrap_delta(sc->xy[2 * i] - p.x, size);
        float dy = wrap_delta(sc->xy[2 * i + 1] - p.y, size);
        if (dx * dx + dy * dy > VIEW_R * VIEW_R || !tecs_has(w, e, s->boid))
            continue;
        const Velocity *mv = TECS_GET(w, e, s->vel, Velocity);
        if (mv != NULL)
            k = keep(sc, k, (seen){ e, dx, dy, mv->x, mv->y, 0 });
    }
    return n < 0 ? -1 : k;
}

/* The same by a scan of every boid (the calling thread only: it iterates). */
static int32_t scan_mates(boids_sim *s, scratch *sc, tecs_entity_t self, Position p)
{
    const float size = s->cfg.size;
    int32_t k = 0;
    tecs_iter_t it = TECS_ITER(tecs_query_world(s->q_mates), .query = s->q_mates);
    while (tecs_iter_next(&it)) {
        const Position *mp = TECS_FIELD(&it, Position, 0);
        const Velocity *mv = TECS_FIELD(&it, Velocity, 1);
        for (int32_t j = 0; j < it.count && k >= 0; j++) {
            float dx = wrap_delta(mp[j].x - p.x, size), dy = wrap_delta(mp[j].y - p.y, size);
            if (dx * dx + dy * dy > VIEW_R * VIEW_R || it.entities[j] == self)
                continue;
            k = keep(sc, k, (seen){ it.entities[j], dx, dy, mv[j].x, mv[j].y, 0 });
        }
    }
    return k;
}

/* Sum the flockmates of boid self at p into *fl, through w (a worker's
 * world when called from one), in scratch sc; their ids go to ids (up to
 * cap) when ids is not NULL. @return how many there are, or -1 with
 * sc->failed set. */
static int32_t gather_mates(boids_sim *s, tecs_world_t *w, scratch *sc, tecs_entity_t self,
                            Position p, bool naive, Flock *fl, tecs_entity_t *ids, int32_t cap)
{
    int32_t n = naive ? scan_mates(s, sc, self, p) : find_mates(s, w, sc, self, p);
    if (n < 0 || !sort_scratch(sc, n)) {
        sc->failed = true;
        return -1;
    }
    for (int32_t i = 0; i < n; i++) {
        const seen *m = &sc->seen[i];
        float d2 = m->dx * m->dx + m->dy * m->dy;
        if (ids != NULL && fl->n < cap)
            ids[fl->n] = m->e;
        fl->n++;
        fl->cx += m->dx, fl->cy += m->dy;
        fl->ax += m->a, fl->ay += m->b;
        if (d2 < SEP_R * SEP_R) {
            float k = 1.0f / (d2 + 0.05f);
            fl->sx -= m->dx * k, fl->sy -= m->dy * k;
        }
    }
    return fl->n;
}

/* The hazard h at offset (dx, dy): kept if p is within its reach. */
static int32_t keep_hazard(scratch *sc, int32_t k, tecs_entity_t e, const Hazard *h, float dx,
                           float dy)
{
    float d = sqrtf(dx * dx + dy * dy) + 1e-3f;
    float reach = h->predator ? FLEE_R : h->r + MARGIN;
    return d >= reach ? k : keep(sc, k, (seen){ e, dx, dy, h->r, 0.0f, h->predator });
}

/* Add the push away from the hazards near p to *fl (through w, in sc, by
 * the index or by a scan). */
static void gather_hazards(boids_sim *s, tecs_world_t *w, scratch *sc, Position p, bool naive,
                           Flock *fl)
{
    const float size = s->cfg.size;
    int32_t k = 0;
    if (naive) {
        tecs_iter_t it = TECS_ITER(w, .query = s->q_hazards);
        while (tecs_iter_next(&it)) {
            const Hazard *h = TECS_FIELD(&it, Hazard, 0);
            for (int32_t j = 0; j < it.count && k >= 0; j++)
                k = keep_hazard(sc, k, it.entities[j], &h[j], wrap_delta(h[j].x - p.x, size),
                                wrap_delta(h[j].y - p.y, size));
        }
    } else {
        int32_t n = near_ids(s, sc, s->by_hazard, p.x, p.y, HAZARD_R * 1.001f + 0.01f,
                             false);
        k = n < 0 ? -1 : 0;
        for (int32_t i = 0; i < n && k >= 0; i++) {
            const Hazard *h = TECS_GET(w, sc->ids[i], s->hazard, Hazard);
            if (h != NULL)
                k = keep_hazard(sc, k, sc->ids[i], h, wrap_delta(h->x - p.x, size),
                                wrap_delta(h->y - p.y, size));
        }
    }
    if (k < 0 || !sort_scratch(sc, k)) {
        sc->failed = true;
        return;
    }
    for (int32_t i = 0; i < k; i++) {
        const seen *h = &sc->seen[i];
        float d = sqrtf(h->dx * h->dx + h->dy * h->dy) + 1e-3f;
        float reach = h->predator ? FLEE_R : h->a + MARGIN;
        if (h->predator && d < CATCH_R)
            fl->caught = 1;
        float near = h->predator ? 1.0f - d / reach : 1.0f - (d - h->a) / MARGIN;
        float f = (near > 1.0f ? 1.0f : near) / d;
        fl->hx -= h->dx * f, fl->hy -= h->dy * f;
    }
}

/* ---- systems ------------------------------------------------------------ */

/* PRE_UPDATE: Position (read), Flock (write), [Boid]; reads Position,
 * Velocity and Hazard of others. Parallel (one thread when naive: a scan
 * iterates, which a worker may not). */
static void sys_neighbours(tecs_iter_t *it)
{
    boids_sim *s = it->ctx;
    scratch *sc = &s->scr[it->worker < s->nscr ? it->worker : 0];
    const Position *p = TECS_FIELD(it, Position, 0);
    Flock *fl = TECS_FIELD(it, Flock, 1);
    for (int32_t i = 0; i < it->count; i++) {
        memset(&fl[i], 0, sizeof fl[i]);
        gather_mates(s, it->world, sc, it->entities[i], p[i], s->cfg.naive, &fl[i], NULL, 0);
        gather_hazards(s, it->world, sc, p[i], s->cfg.naive, &fl[i]);
    }
}

/* Scale v so that lo <= |v| <= hi. */
static void clamp_speed(Velocity *v, float lo, float hi)
{
    float sp = sqrtf(v->x * v->x + v->y * v->y);
    if (sp < 1e-6f) {
        v->x = lo;
        return;
    }
    float k = sp > hi ? hi / sp : sp < lo ? lo / sp : 1.0f;
    v->x *= k, v->y *= k;
}

/* ON_UPDATE: Velocity (write), Flock (read), [Boid]. */
static void sys_steer(tecs_iter_t *it)
{
    float dt = (float)it->delta_time;
    Velocity *v = TECS_FIELD(it, Velocity, 0);
    const Flock *fl = TECS_FIELD(it, Flock, 1);
    for (int32_t i = 0; i < it->count; i++) {
        float ax = W_SEP * fl[i].sx + W_AVOID * fl[i].hx;
        float ay = W_SEP * fl[i].sy + W_AVOID * fl[i].hy;
        if (fl[i].n > 0) {
            float inv = 1.0f / (float)fl[i].n;
            ax += W_ALI * (fl[i].ax * inv - v[i].x) + W_COH * fl[i].cx * inv;
            ay += W_ALI * (fl[i].ay * inv - v[i].y) + W_COH * fl[i].cy * inv;
        }
        float sp = sqrtf(v[i].x * v[i].x + v[i].y * v[i].y) + 1e-6f;
        float k = W_CRUISE * (CRUISE - sp) / sp;
        v[i].x += (ax + k * v[i].x) * dt, v[i].y += (ay + k * v[i].y) * dt;
        clamp_speed(&v[i], MIN_SPEED, MAX_SPEED);
    }
}

/* The nearest boid within HUNT_R of p: its offset in *dx, *dy.
 * @return false if there is none. */
static bool nearest_boid(boids_sim *s, Position p, float *dx, float *dy)
{
    const float size = s->cfg.size;
    float best = HUNT_R * HUNT_R;
    bool found = false;
    tecs_iter_t it = near_iter(s, s->q_mates, s->by_pos, p.x, p.y, HUNT_R, s->cfg.naive);
    while (tecs_iter_next(&it)) {
        const Position *bp = TECS_FIELD(&it, Position, 0);
        for (int32_t j = 0; j < it.count; j++) {
            float ox = wrap_delta(bp[j].x - p.x, size), oy = wrap_delta(bp[j].y - p.y, size);
            float d2 = ox * ox + oy * oy;
            if (d2 < best) {
                best = d2, *dx = ox, *dy = oy;
                found = true;
            }
        }
    }
    return found;
}

/* ON_UPDATE: Position (read), Velocity (write), [Predator]. */
static void sys_hunt(tecs_iter_t *it)
{
    boids_sim *s = it->ctx;
    float dt = (float)it->delta_time;
    const Position *p = TECS_FIELD(it, Position, 0);
    Velocity *v = TECS_FIELD(it, Velocity, 1);
    for (int32_t i = 0; i < it->count; i++) {
        float dx, dy;
        if (nearest_boid(s, p[i], &dx, &dy)) {
            float k = PRED_SPEED / (sqrtf(dx * dx + dy * dy) + 1e-3f);
            v[i].x += (dx * k - v[i].x) * 2.0f * dt;
            v[i].y += (dy * k - v[i].y) * 2.0f * dt;
        }
        clamp_speed(&v[i], 0.6f * PRED_SPEED, PRED_SPEED);
    }
}

/* ON_UPDATE: Position (write), Velocity (read). */
static void sys_move(tecs_iter_t *it)
{
    float dt = (float)it->delta_time;
    Position *p = TECS_FIELD(it, Position, 0);
    const Velocity *v = TECS_FIELD(it, Velocity, 1);
    for (int32_t i = 0; i < it->count; i++)
        p[i].x += v[i].x * dt, p[i].y += v[i].y * dt;
}

/* POST_UPDATE: Position (write). */
static void sys_wrap(tecs_iter_t *it)
{
    const float size = ((boids_sim *)it->ctx)->cfg.size;
    Position *p = TECS_FIELD(it, Position, 0);
    for (int32_t i = 0; i < it->count; i++) {
        p[i].x = wrap_coord(p[i].x, size);
        p[i].y = wrap_coord(p[i].y, size);
    }
}

/* POST_UPDATE: Position (read), Hazard (write), [Predator]. */
static void sys_hazards(tecs_iter_t *it)
{
    const Position *p = TECS_FIELD(it, Position, 0);
    Hazard *h = TECS_FIELD(it, Hazard, 1);
    for (int32_t i = 0; i < it->count; i++)
        h[i].x = p[i].x, h[i].y = p[i].y;
}

/* Runs as a delayed kill lands. */
static void on_kill(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((boids_sim *)ctx)->deaths++;
}

/* PRE_STORE: Life (write), Flock (read), [Boid]. */
static void sys_life(tecs_iter_t *it)
{
    boids_sim *s = it->ctx;
    Life *l = TECS_FIELD(it, Life, 0);
    const Flock *fl = TECS_FIELD(it, Flock, 1);
    for (int32_t i = 0; i < it->count; i++) {
        l[i].age += (float)it->delta_time;
        if ((fl[i].caught || l[i].age >= l[i].span) &&
            tecs_delayed_destroy(it->world, it->entities[i], on_kill, s) == TECS_OK)
            s->dying++;
    }
}

/* A boid at a random place, heading and age (age 0 when newborn). */
static void random_boid(boids_sim *s, bool newborn, Position *p, Velocity *v, Life *l)
{
    float a = rng_range(s, 0.0f, 6.2831853f), sp = rng_range(s, MIN_SPEED, MAX_SPEED);
    p->x = rng_range(s, 0.0f, s->cfg.size);
    p->y = rng_range(s, 0.0f, s->cfg.size);
    v->x = cosf(a) * sp, v->y = sinf(a) * sp;
    l->span = rng_range(s, LIFE_MIN, LIFE_MAX);
    l->age = newborn ? 0.0f : rng_range(s, 0.0f, l->span);
}

/* PRE_STORE, no query: as many new boids as are dying. */
static void sys_spawn(tecs_iter_t *it)
{
    boids_sim *s = it->ctx;
    for (; s->dying > 0; s->dying--) {
        Position p;
        Velocity v;
        Life l;
        random_boid(s, true, &p, &v, &l);
        /* (Queued: the system's world is deferred; made at its end.) */
        tecs_entity_t e = tecs_instantiate(it->world, s->boid_kind);
        if (e != 0 && TECS_SET(it->world, e, s->pos, Position, p) == TECS_OK &&
            TECS_SET(it->world, e, s->vel, Velocity, v) == TECS_OK &&
            TECS_SET(it->world, e, s->life, Life, l) == TECS_OK)
            s->births++;
    }
}

/* ON_STORE: Velocity (read), [Boid]. */
static void sys_stats(tecs_iter_t *it)
{
    boids_sim *s = it->ctx;
    const Velocity *v = TECS_FIELD(it, Velocity, 0);
    if (it->frame != s->stats_frame) {
        s->stats_frame = it->frame;
        s->speed_sum = s->hx_sum = s->hy_sum = 0.0;
        s->stats_n = 0;
    }
    for (int32_t i = 0; i < it->count; i++) {
        double sp = sqrt((double)v[i].x * v[i].x + (double)v[i].y * v[i].y);
        s->speed_sum += sp;
        if (sp > 0.0)
            s->hx_sum += v[i].x / sp, s->hy_sum += v[i].y / sp;
    }
    s->stats_n += it->count;
}

/* ---- setup -------------------------------------------------------------- */

/* Register the components. @return false on error. */
static bool register_components(boids_sim *s)
{
    tecs_world_t *w = s->w;
    /* Described, so that the inspector (main.c's --inspect) shows and edits
     * their fields by name. */
    s->pos = TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Position, y, TECS_TYPE_F32));
    s->vel = TECS_COMPONENT_FIELDS(w, Velocity, TECS_MEMBER(Velocity, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Velocity, y, TECS_TYPE_F32));
    s->flock = TECS_COMPONENT(w, Flock);
    s->life = TECS_COMPONENT_FIELDS(w, Life, TECS_MEMBER(Life, age, TECS_TYPE_F32),
                                    TECS_MEMBER(Life, span, TECS_TYPE_F32));
    s->hazard = TECS_COMPONENT_FIELDS(w, Hazard, TECS_MEMBER(Hazard, x, TECS_TYPE_F32),
                                      TECS_MEMBER(Hazard, y, TECS_TYPE_F32),
                                      TECS_MEMBER(Hazard, r, TECS_TYPE_F32),
                                      TECS_MEMBER(Hazard, predator, TECS_TYPE_I32));
    s->boid = TECS_TAG(w, Boid);
    s->predator = TECS_TAG(w, Predator);
    s->obstacle = TECS_TAG(w, Obstacle);
    s->state = TECS_COMPONENT(w, BoidsState);
    return s->pos && s->vel && s->flock && s->life && s->hazard && s->boid &&
           s->predator && s->obstacle && s->state;
}

/* The two spatial indexes and the queries the searches walk. */
static bool make_indexes(boids_sim *s)
{
    s->by_pos = tecs_index_new(s->w, &(tecs_index_desc_t){
        .comp = s->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y),
        .cell_size = VIEW_R });
    s->by_hazard = tecs_index_new(s->w, &(tecs_index_desc_t){
        .comp = s->hazard, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Hazard, x), .offset_y = offsetof(Hazard, y),
        .cell_size = 2.0f * HAZARD_R });
    s->q_mates = TECS_QUERY(s->w, { .comp = s->pos, .access = TECS_READ },
                            { .comp = s->vel, .access = TECS_READ },
                            { .comp = s->boid, .access = TECS_FILTER });
    s->q_hazards = TECS_QUERY(s->w, { .comp = s->hazard, .access = TECS_READ });
    s->q_preds = TECS_QUERY(s->w, { .comp = s->pos, .access = TECS_READ },
                            { .comp = s->vel, .access = TECS_READ },
                            { .comp = s->predator, .access = TECS_FILTER });
    s->hunt = tecs_filter_new(s->w);
    return s->by_pos && s->by_hazard && s->q_mates && s->q_hazards && s->q_preds && s->hunt;
}

/* How a system runs on the workers (zero: on the calling thread). */
typedef struct threading {
    bool parallel;
    int32_t parallel_min;
    const tecs_comp_t *reads;   /* read on other entities; 0 ends it        */
} threading;

/* Add one system over the given terms (n 0: no query). */
static bool add_system(boids_sim *s, const char *name, tecs_phase_t phase, tecs_system_fn fn,
                       threading th, int32_t n, const tecs_term_t *terms)
{
    tecs_query_t *q = NULL;
    if (n > 0 && (q = tecs_query_new(s->w, &(tecs_query_desc_t){ .terms = terms, .term_count = n })) == NULL)
        return false;
    tecs_system_t id = tecs_system_new(s->w, &(tecs_system_desc_t){
        .name = name, .phase = phase, .query = q, .run = fn, .ctx = s,
        .parallel = th.parallel, .parallel_min = th.parallel_min, .reads = th.reads });
    if (id == 0 || s->nsys == BOIDS_MAX_SYSTEMS)
        return false;
    s->phase[s->nsys] = phase;
    s->sys[s->nsys++] = id;
    return true;
}

#define R(c) { .comp = (c), .access = TECS_READ }
#define W(c) { .comp = (c), .access = TECS_WRITE }
#define F(c) { .comp = (c), .access = TECS_FILTER }
#define SYSTEM(s, name, phase, fn, th, ...)                                     \
    add_system((s), (name), (phase), (fn), (th),                                \
               (int32_t)(sizeof((tecs_term_t[]){ __VA_ARGS__ }) / sizeof(tecs_term_t)), \
               (tecs_term_t[]){ __VA_ARGS__ })

/* Rows below which the search runs on one thread: it costs about a
 * microsecond a boid, so a few hundred boids are worth splitting. Steering
 * costs about ten nanoseconds a boid: it keeps the library's threshold
 * (TECS_PARALLEL_MIN), below which waking a worker costs more than it saves
 * (the default 10,000 boids steer on one thread). */
#define SEARCH_SPLIT_MIN 256

/* The pipeline of the header comment. */
static bool make_systems(boids_sim *s)
{
    const threading one = { 0 };
    const tecs_comp_t others[] = { s->pos, s->vel, s->hazard, 0 };
    const threading search = s->cfg.naive ? one : (threading){ true, SEARCH_SPLIT_MIN, others };
    const threading steer = { true, 0, NULL };
    return SYSTEM(s, "neighbours", TECS_PRE_UPDATE, sys_neighbours, search, R(s->pos),
                  W(s->flock), F(s->boid)) &&
           SYSTEM(s, "steer", TECS_ON_UPDATE, sys_steer, steer, W(s->vel), R(s->flock),
                  F(s->boid)) &&
           SYSTEM(s, "hunt", TECS_ON_UPDATE, sys_hunt, one, R(s->pos), W(s->vel),
                  F(s->predator)) &&
           SYSTEM(s, "move", TECS_ON_UPDATE, sys_move, one, W(s->pos), R(s->vel)) &&
           SYSTEM(s, "wrap", TECS_POST_UPDATE, sys_wrap, one, W(s->pos)) &&
           SYSTEM(s, "hazards", TECS_POST_UPDATE, sys_hazards, one, R(s->pos), W(s->hazard),
                  F(s->predator)) &&
           SYSTEM(s, "life", TECS_PRE_STORE, sys_life, one, W(s->life), R(s->flock),
                  F(s->boid)) &&
           add_system(s, "spawn", TECS_PRE_STORE, sys_spawn, one, 0, NULL) &&
           SYSTEM(s, "stats", TECS_ON_STORE, sys_stats, one, R(s->vel), F(s->boid));
}

/* The world's workers (config.threads; one if they cannot start) and a
 * scratch for each. */
static bool make_workers(boids_sim *s)
{
    if (s->cfg.threads > 1)
        tecs_world_set_threads(s->w, s->cfg.threads);  /* on failure: one thread */
    s->nscr = tecs_world_threads(s->w);
    s->scr = calloc((size_t)s->nscr, sizeof *s->scr);
    for (int32_t k = 0; s->scr && k < s->nscr; k++)
        if (!grow((void **)&s->scr[k].ids, &s->scr[k].cap_ids, SCRATCH_START,
                  sizeof *s->scr[k].ids) ||
            !grow((void **)&s->scr[k].xy, &s->scr[k].cap_xy, 2 * SCRATCH_START,
                  sizeof *s->scr[k].xy) ||
            !grow((void **)&s->scr[k].seen, &s->scr[k].cap_seen, SCRATCH_START,
                  sizeof *s->scr[k].seen))
            return false;
    return s->scr != NULL;
}

/* The first boids: instances of the boid prefab, made in one call, then
** placed. */
static bool make_boids(boids_sim *s)
{
    int32_t n = s->cfg.boids;
    tecs_entity_t *ids = malloc((size_t)n * sizeof *ids);
    bool ok = ids && tecs_instantiate_bulk(s->w, s->boid_kind, n, ids) == TECS_OK;
    for (int32_t i = 0; ok && i < n; i++) {
        Position p;
        Velocity v;
        Life l;
        random_boid(s, false, &p, &v, &l);
        ok = TECS_SET(s->w, ids[i], s->pos, Position, p) == TECS_OK &&
             TECS_SET(s->w, ids[i], s->vel, Velocity, v) == TECS_OK &&
             TECS_SET(s->w, ids[i], s->life, Life, l) == TECS_OK;
    }
    free(ids);
    return ok;
}

/* Obstacles (still discs) and predators, at random places. */
static bool make_hazards(boids_sim *s)
{
    const float size = s->cfg.size;
    for (int32_t i = 0; i < s->cfg.obstacles; i++) {
        Hazard h = { rng_range(s, 0, size), rng_range(s, 0, size),
                     rng_range(s, OBST_MIN, OBST_MAX), 0 };
        tecs_entity_t e = tecs_instantiate(s->w, s->obstacle_kind);
        if (e == 0 || TECS_SET(s->w, e, s->hazard, Hazard, h) != TECS_OK)
            return false;
    }
    for (int32_t i = 0; i < s->cfg.predators; i++) {
        float a = rng_range(s, 0.0f, 6.2831853f);
        Position p = { rng_range(s, 0, size), rng_range(s, 0, size) };
        Velocity v = { cosf(a) * PRED_SPEED, sinf(a) * PRED_SPEED };
        Hazard h = { p.x, p.y, 0.0f, 1 };
        tecs_entity_t e = tecs_instantiate(s->w, s->predator_kind);
        if (e == 0 || TECS_SET(s->w, e, s->pos, Position, p) != TECS_OK ||
            TECS_SET(s->w, e, s->vel, Velocity, v) != TECS_OK ||
            TECS_SET(s->w, e, s->hazard, Hazard, h) != TECS_OK)
            return false;
    }
    return true;
}

/* A sim of cfg with an empty world and its components, or NULL. */
static boids_sim *sim_alloc(const boids_config *cfg)
{
    if (cfg->boids < 1 || cfg->boids > BOIDS_MAX_BOIDS || cfg->predators < 0 ||
        cfg->predators > BOIDS_MAX_HAZARDS || cfg->obstacles < 0 ||
        cfg->obstacles > BOIDS_MAX_HAZARDS)
        return NULL;
    boids_sim *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cfg = *cfg;
    s->cfg.size = cfg->size <= 0.0f ? 1024.0f : cfg->size < 200.0f ? 200.0f : cfg->size;
    s->rng = cfg->seed;
    s->stats_frame = -1;
    s->w = tecs_world_new();
    if (s->w == NULL || !register_components(s)) {
        boids_free(s);
        return NULL;
    }
    return s;
}

/* The prefab of the kind tagged `kind`: a loaded world's, else made (a
** boid's: Velocity, Flock and Life to start with; a predator's: Velocity).
** 0 on error. */
static tecs_entity_t prefab_of(boids_sim *s, tecs_comp_t kind)
{
    tecs_comp_t pf = tecs_prefab(s->w);
    tecs_query_t *q = pf ? TECS_QUERY(s->w, { .comp = kind, .access = TECS_FILTER },
                                      { .comp = pf, .access = TECS_FILTER }) : NULL;
    tecs_entity_t e = 0;
    tecs_iter_t it = TECS_ITER(s->w, .query = q);
    if (q && tecs_iter_collect(&it, &e, 1) == 1) {
        tecs_query_free(q);
        return e;
    }
    tecs_query_free(q);
    e = pf ? tecs_new(s->w) : 0;
    bool ok = e != 0 && tecs_add(s->w, e, kind) == TECS_OK;
    if (ok && kind != s->obstacle)
        ok = TECS_SET(s->w, e, s->vel, Velocity, { 0, 0 }) == TECS_OK;
    if (ok && kind == s->boid)
        ok = TECS_SET(s->w, e, s->flock, Flock, { 0 }) == TECS_OK &&
             TECS_SET(s->w, e, s->life, Life, { 0 }) == TECS_OK;
    return ok && tecs_add(s->w, e, pf) == TECS_OK ? e : 0;
}

/* The indexes, workers and systems of a world that holds its entities or
** is about to (made after a load: a load wants a world without indexes). */
static bool sim_ready(boids_sim *s)
{
    return make_indexes(s) && (s->boid_kind = prefab_of(s, s->boid)) != 0 &&
           (s->predator_kind = prefab_of(s, s->predator)) != 0 &&
           (s->obstacle_kind = prefab_of(s, s->obstacle)) != 0 && make_workers(s) &&
           make_systems(s);
}

boids_sim *boids_new(const boids_config *cfg)
{
    boids_sim *s = sim_alloc(cfg);
    if (s != NULL && !(sim_ready(s) && make_hazards(s) && make_boids(s))) {
        boids_free(s);
        return NULL;
    }
    return s;
}

tecs_err_t boids_save(boids_sim *s, const char *path)
{
    BoidsState st = { s->rng, s->cfg.seed, s->births, s->deaths, s->cfg.boids,
                      s->cfg.predators, s->cfg.obstacles, s->cfg.size };
    tecs_err_t err = tecs_resource_set(s->w, s->state, &st);
    FILE *f = err ? NULL : fopen(path, "wb");
    if (err == TECS_OK && f == NULL)
        return TECS_EINVAL;
    if (err == TECS_OK)
        err = tecs_snapshot_save_file(s->w, f);
    if (f != NULL && fclose(f) != 0 && err == TECS_OK)
        err = TECS_EINVAL;
    return err;
}

boids_sim *boids_load(const boids_config *cfg, const char *path, tecs_err_t *err,
                      const char **msg)
{
    boids_sim *s = sim_alloc(cfg);
    FILE *f = s ? fopen(path, "rb") : NULL;
    *err = s == NULL ? TECS_ENOMEM : f == NULL ? TECS_EINVAL : TECS_OK;
    *msg = s == NULL ? "out of memory" : f == NULL ? "cannot open the file" : "";
    static char why[160];                       /* outlives the world freed below */
    if (f != NULL) {
        *err = tecs_snapshot_load_file(s->w, f);
        snprintf(why, sizeof why, "%s", tecs_last_error_msg(s->w));
        *msg = why;
        fclose(f);
    }
    const BoidsState *st = *err ? NULL : TECS_RESOURCE_GET(s->w, s->state, BoidsState);
    if (*err == TECS_OK && st == NULL)
        *err = TECS_EINVAL, *msg = "the snapshot holds no BoidsState: not a boids run";
    if (*err) {
        boids_free(s);
        return NULL;
    }
    s->rng = st->rng, s->births = st->births, s->deaths = st->deaths;
    s->cfg.seed = st->seed, s->cfg.boids = st->boids, s->cfg.predators = st->predators;
    s->cfg.obstacles = st->obstacles, s->cfg.size = st->size;
    if (!sim_ready(s)) {
        *err = TECS_ENOMEM, *msg = "out of memory";
        boids_free(s);
        return NULL;
    }
    return s;
}

void boids_free(boids_sim *s)
{
    if (s == NULL)
        return;
    tecs_world_free(s->w);      /* frees the indexes, queries and systems */
    for (int32_t k = 0; s->scr && k < s->nscr; k++) {
        free(s->scr[k].ids);
        free(s->scr[k].xy);
        free(s->scr[k].seen);
        free(s->scr[k].seen_tmp);
    }
    free(s->scr);
    free(s);
}

tecs_err_t boids_step(boids_sim *s, float dt)
{
    tecs_err_t err = tecs_progress(s->w, dt);
    if (err == TECS_OK)
        err = tecs_delayed_apply(s->w);
    for (int32_t k = 0; k < s->nscr; k++)      /* a search that could not finish */
        if (s->scr[k].failed && err == TECS_OK)
            err = TECS_ENOMEM;
    return err;
}

int32_t boids_threads(const boids_sim *s)
{
    return s->nscr;
}

uint64_t boids_seed(const boids_sim *s)
{
    return s->cfg.seed;
}

float boids_size(const boids_sim *s)
{
    return s->cfg.size;
}

tecs_world_t *boids_world(boids_sim *s)
{
    return s->w;
}

/* ---- reading the flock --------------------------------------------------- */

void boids_each(boids_sim *s, boids_agent_fn fn, void *ctx)
{
    tecs_iter_t it = TECS_ITER(tecs_query_world(s->q_hazards), .query = s->q_hazards);
    while (tecs_iter_next(&it)) {
        const Hazard *h = TECS_FIELD(&it, Hazard, 0);
        for (int32_t i = 0; i < it.count; i++)
            if (!h[i].predator)
                fn(ctx, BOIDS_OBSTACLE, h[i].x, h[i].y, 0.0f, 0.0f, h[i].r);
    }
    tecs_query_t *movers[2] = { s->q_mates, s->q_preds };
    for (int k = 0; k < 2; k++) {
        it = TECS_ITER(tecs_query_world(movers[k]), .query = movers[k]);
        while (tecs_iter_next(&it)) {
            const Position *p = TECS_FIELD(&it, Position, 0);
            const Velocity *v = TECS_FIELD(&it, Velocity, 1);
            for (int32_t i = 0; i < it.count; i++)
                fn(ctx, k ? BOIDS_PREDATOR : BOIDS_BOID, p[i].x, p[i].y, v[i].x, v[i].y, 0.0f);
        }
    }
}

boids_counts boids_count(boids_sim *s)
{
    boids_counts c = { 0 };
    c.boids = tecs_query_count(s->q_mates);
    c.predators = tecs_query_count(s->q_preds);
    c.obstacles = tecs_query_count(s->q_hazards) - c.predators;
    c.prefabs = 3;              /* a boid's, a predator's, an obstacle's */
    c.entities = tecs_world_entity_count(s->w);
    c.births = s->births;
    c.deaths = s->deaths;
    if (s->stats_n > 0) {
        c.mean_speed = s->speed_sum / s->stats_n;
        c.polarisation = sqrt(s->hx_sum * s->hx_sum + s->hy_sum * s->hy_sum) / s->stats_n;
    }
    return c;
}

static const char *const phase_names[] = {
    "", "on_load", "post_load", "pre_update", "on_update", "on_validate",
    "post_update", "pre_store", "on_store" };

int32_t boids_timings(boids_sim *s, boids_timing *out, int32_t cap)
{
    int32_t n = 0;
    for (int32_t i = 0; i < s->nsys && n < cap; i++) {
        tecs_system_stats_t st;
        if (tecs_system_stats(s->w, s->sys[i], &st) != TECS_OK)
            continue;
        double runs = st.runs > 0 ? (double)st.runs : 1.0;
        out[n++] = (boids_timing){ tecs_system_name(s->w, s->sys[i]),
                                   phase_names[s->phase[i]], st.runs,
                                   1e3 * st.time_total / runs,
                                   (double)st.entities_total / runs };
    }
    return n;
}

int32_t boids_neighbours(boids_sim *s, tecs_entity_t e, bool naive, tecs_entity_t *out,
                         int32_t cap)
{
    const Position *p = TECS_GET(s->w, e, s->pos, Position);
    if (p == NULL || !tecs_has(s->w, e, s->boid))
        return -1;
    Flock fl = { 0 };
    return gather_mates(s, s->w, &s->scr[0], e, *p, naive, &fl, out, cap);
}

int32_t boids_ids(boids_sim *s, tecs_entity_t *out, int32_t cap)
{
    tecs_iter_t it = TECS_ITER(s->w, .query = s->q_mates);
    return tecs_iter_collect(&it, out, cap);
}

/* FNV-1a over n bytes. */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3u;
    return h;
}

uint64_t boids_checksum(boids_sim *s)
{
    uint64_t h = fnv(0xcbf29ce484222325u, &s->rng, sizeof s->rng);
    tecs_query_t *movers[2] = { s->q_mates, s->q_preds };
    for (int k = 0; k < 2; k++) {
        tecs_iter_t it = TECS_ITER(tecs_query_world(movers[k]), .query = movers[k]);
        while (tecs_iter_next(&it)) {
            h = fnv(h, it.entities, (size_t)it.count * sizeof *it.entities);
            h = fnv(h, tecs_field(&it, 0), (size_t)it.count * sizeof(Position));
            h = fnv(h, tecs_field(&it, 1), (size_t)it.count * sizeof(Velocity));
            for (int32_t i = 0; k == 0 && i < it.count; i++)
                h = fnv(h, TECS_GET(s->w, it.entities[i], s->life, Life), sizeof(Life));
        }
    }
    return h;
}

/* ---- the baseline: a hand-written grid --------------------------------- */

/* The flockmates of boid i among the n boids at p (velocities v), by a
** uniform grid of g x g cells (cell = size / g >= VIEW_R) whose cell c
** holds the boids start[c] .. start[c + 1] - 1 of order: their sums,
** into *fl. */
static void grid_mates(const Position *p, const Velocity *v, const int32_t *start,
                       const int32_t *order, int32_t g, float size, int32_t i, Flock *fl)
{
    float cell = size / (float)g;
    int32_t cx = (int32_t)(p[i].x / cell), cy = (int32_t)(p[i].y / cell);
    cx = cx < g ? cx : g - 1, cy = cy < g ? cy : g - 1;
    for (int32_t dy = -1; dy <= 1; dy++)
        for (int32_t dx = -1; dx <= 1; dx++) {
            int32_t c = (cy + dy + g) % g * g + (cx + dx + g) % g;
            for (int32_t k = start[c]; k < start[c + 1]; k++) {
                int32_t j = order[k];
                float ox = wrap_delta(p[j].x - p[i].x, size);
                float oy = wrap_delta(p[j].y - p[i].y, size), d2 = ox * ox + oy * oy;
                if (j == i || d2 > VIEW_R * VIEW_R)
                    continue;
                fl->n++;
                fl->cx += ox, fl->cy += oy;
                fl->ax += v[j].x, fl->ay += v[j].y;
                if (d2 < SEP_R * SEP_R) {
                    float w = 1.0f / (d2 + 0.05f);
                    fl->sx -= ox * w, fl->sy -= oy * w;
                }
            }
        }
}

double boids_grid_ms(boids_sim *s, int32_t reps)
{
    int32_t n = tecs_query_count(s->q_mates), g = (int32_t)(s->cfg.size / VIEW_R);
    g = g < 3 ? 3 : g;          /* (3 cells a side: a 3 x 3 walk sees each once) */
    Position *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    Velocity *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int32_t *cellof = malloc((size_t)(n > 0 ? n : 1) * sizeof *cellof);
    int32_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    int32_t *start = malloc(((size_t)g * g + 1) * sizeof *start);
    double ms = -1.0, sum = 0.0;
    if (p && v && cellof && order && start && reps > 0) {
        double t0 = tecs_time_now();
        for (int32_t r = 0; r < reps; r++) {
            int32_t i = 0;      /* the flock into plain arrays, then the grid */
            tecs_iter_t it = TECS_ITER(tecs_query_world(s->q_mates), .query = s->q_mates);
            while (tecs_iter_next(&it)) {
                memcpy(p + i, it.fields[0], (size_t)it.count * sizeof *p);
                memcpy(v + i, it.fields[1], (size_t)it.count * sizeof *v);
                i += it.count;
            }
            memset(start, 0, ((size_t)g * g + 1) * sizeof *start);
            float cell = s->cfg.size / (float)g;
            for (i = 0; i < n; i++) {
                int32_t cx = (int32_t)(p[i].x / cell), cy = (int32_t)(p[i].y / cell);
                cellof[i] = (cy < g ? cy : g - 1) * g + (cx < g ? cx : g - 1);
                start[cellof[i] + 1]++;
            }
            for (int32_t c = 0; c < g * g; c++)
                start[c + 1] += start[c];
            for (i = 0; i < n; i++)
                order[start[cellof[i]]++] = i;
            for (int32_t c = g * g; c > 0; c--)     /* back to each cell's start */
                start[c] = start[c - 1];
            start[0] = 0;
            for (i = 0; i < n; i++) {
                Flock fl = { 0 };
                grid_mates(p, v, start, order, g, s->cfg.size, i, &fl);
                sum += fl.cx + fl.ay + fl.sx + fl.n;
            }
        }
        ms = 1e3 * (tecs_time_now() - t0) / reps;
    }
    free(p), free(v), free(cellof), free(order), free(start);
    return sum == sum ? ms : -1.0;      /* (the sums are used: not optimised away) */
}
