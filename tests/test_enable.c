/* Enableable components: tecs_enable, toggle terms, their events. */
#include "test.h"
#include "query_oracle.h"

static tecs_comp_t enableable(tecs_world_t *w, const char *name, size_t size)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = size, .align = size ? 4 : 0, .enableable = true });
}

/* ---- the calls ---------------------------------------------------------- */

TEST(enable_flips_a_bit_and_moves_nothing)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    CHECK(tecs_component_enableable(w, hp));
    CHECK(!tecs_component_enableable(w, pos));
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 1, 2 });
    TECS_SET(w, e, hp, Health, { 7 });
    tecs_archetype_t *a = tecs_entity_archetype(w, e);
    const void *p = tecs_get(w, e, hp);
    CHECK(tecs_is_enabled(w, e, hp));
    CHECK(tecs_is_enabled(w, e, pos));          /* not enableable: always */
    CHECK_ERR(tecs_enable(w, e, hp, false), TECS_OK);
    CHECK(!tecs_is_enabled(w, e, hp));
    CHECK(tecs_has(w, e, hp));                  /* still the entity's */
    CHECK(tecs_entity_archetype(w, e) == a);
    CHECK(tecs_get(w, e, hp) == p);
    CHECK_EQ(TECS_GET(w, e, hp, Health)->hp, 7);
    CHECK_ERR(tecs_enable(w, e, hp, false), TECS_OK);   /* again: nothing */
    CHECK_ERR(tecs_enable(w, e, hp, true), TECS_OK);
    CHECK(tecs_is_enabled(w, e, hp));
    /* Removing forgets the bit: added again, it is enabled. */
    CHECK_ERR(tecs_enable(w, e, hp, false), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, hp), TECS_OK);
    CHECK(!tecs_is_enabled(w, e, hp));
    CHECK_ERR(tecs_add(w, e, hp), TECS_OK);
    CHECK(tecs_is_enabled(w, e, hp));
    TW_CHECK(w);
    tw_free(w);
}

TEST(enable_refuses_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 1, 2 });
    CHECK_ERR(tecs_enable(NULL, e, hp, false), TECS_EINVAL);
    CHECK_ERR(tecs_enable(w, e, pos, false), TECS_EINVAL);      /* not enableable */
    CHECK(strstr(tecs_last_error_msg(w), "enableable") != NULL);
    CHECK_ERR(tecs_enable(w, e, hp, false), TECS_ENOENT);       /* not the entity's */
    CHECK_ERR(tecs_enable(w, e, 999, false), TECS_ENOCOMP);
    CHECK_ERR(tecs_enable(w, e, 0, false), TECS_ENOCOMP);
    tecs_entity_t dead = tecs_new(w);
    tecs_destroy(w, dead);
    CHECK_ERR(tecs_enable(w, dead, hp, false), TECS_EDEAD);
    tecs_entity_t recycled = tecs_new(w);       /* the same slot, a new generation */
    CHECK(TECS_ENTITY_INDEX(recycled) == TECS_ENTITY_INDEX(dead));
    TECS_SET(w, recycled, hp, Health, { 1 });
    CHECK_ERR(tecs_enable(w, dead, hp, false), TECS_EDEAD);
    CHECK(tecs_is_enabled(w, recycled, hp));
    CHECK(!tecs_is_enabled(w, dead, hp));
    CHECK(!tecs_is_enabled(NULL, recycled, hp));
    CHECK(!tecs_is_enabled(w, recycled, 999));
    /* Terms: DISABLED needs an enableable component; unknown toggles. */
    CHECK(TECS_QUERY(w, { .comp = pos, .toggle = TECS_TOGGLE_DISABLED }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(TECS_QUERY(w, { .comp = hp, .toggle = (tecs_toggle_t)7 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* Observers: ENABLE / DISABLE of an enableable component only. */
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_DISABLE,
             .comp = pos, .callback = (tecs_observer_fn)(void (*)(void))abort }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_DISABLE,
             .comp = hp, .resource = true,
             .callback = (tecs_observer_fn)(void (*)(void))abort }), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    TW_CHECK(w);
    tw_free(w);
}

/* Bits travel with their rows: moves of the entity, hole fills by others. */
TEST(enable_bits_follow_their_rows)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_comp_t stun = enableable(w, "Stunned", 0);
    enum { N = 200 };
    tecs_entity_t e[N];
    bool off_hp[N], off_stun[N], alive[N];
    uint64_t rng = 42;
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        tecs_add(w, e[i], stun);
        off_hp[i] = tw_rand(&rng) & 1;
        off_stun[i] = tw_rand(&rng) & 1;
        alive[i] = true;
        tecs_enable(w, e[i], hp, !off_hp[i]);
        tecs_enable(w, e[i], stun, !off_stun[i]);
    }
    for (int round = 0; round < 2000; round++) {
        int i = (int)(tw_rand(&rng) % N);
        if (!alive[i])
            continue;
        switch (tw_rand(&rng) % 5) {
        case 0:
            if (tecs_has(w, e[i], pos)) tecs_remove(w, e[i], pos);
            else tecs_add(w, e[i], pos);
            break;
        case 1:
            if (tecs_has(w, e[i], vel)) tecs_remove(w, e[i], vel);
            else tecs_add(w, e[i], vel);
            break;
        case 2:
            off_hp[i] = !off_hp[i];
            CHECK_ERR(tecs_enable(w, e[i], hp, !off_hp[i]), TECS_OK);
            break;
        case 3:
            off_stun[i] = !off_stun[i];
            CHECK_ERR(tecs_enable(w, e[i], stun, !off_stun[i]), TECS_OK);
            break;
        case 4:
            if (round % 7 == 0) {
                tecs_destroy(w, e[i]);
                alive[i] = false;
            }
            break;
        }
    }
    for (int i = 0; i < N; i++) {
        if (!alive[i])
            continue;
        CHECK_EQ(tecs_is_enabled(w, e[i], hp), !off_hp[i]);
        CHECK_EQ(tecs_is_enabled(w, e[i], stun), !off_stun[i]);
        CHECK_EQ(TECS_GET(w, e[i], hp, Health)->hp, i);
    }
    TW_CHECK(w);
    tw_free(w);
}

/* ---- iteration ------------------------------------------------------------ */

static void queries_skip_disabled_rows(int32_t rows_per_chunk, int n);

TEST(enable_queries_skip_disabled_rows)
{
    queries_skip_disabled_rows(64, 1500);
    queries_skip_disabled_rows(1024, 5000);    /* runs across 64-row words */
}

static void queries_skip_disabled_rows(int32_t rows_per_chunk, int n)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, rows_per_chunk);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_comp_t stun = enableable(w, "Stunned", 0);
    tecs_comp_t vel = enableable(w, "Velocity", sizeof(Velocity));
    const int N = n;
    tecs_entity_t *e = malloc((size_t)N * sizeof *e);
    uint64_t rng = 7;
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        if (tw_rand(&rng) % 4) TECS_SET(w, e[i], hp, Health, { i });
        if (tw_rand(&rng) % 3) tecs_add(w, e[i], stun);
        if (tw_rand(&rng) % 2) TECS_SET(w, e[i], vel, Velocity, { 1, 1 });
    }
    const tecs_term_t sets[][4] = {
        { { .comp = pos }, { .comp = hp } },
        { { .comp = pos }, { .comp = hp, .toggle = TECS_TOGGLE_ANY } },
        { { .comp = pos }, { .comp = hp, .toggle = TECS_TOGGLE_DISABLED } },
        { { .comp = pos }, { .comp = stun, .oper = TECS_NONE } },
        { { .comp = pos }, { .comp = stun, .oper = TECS_NONE, .toggle = TECS_TOGGLE_ANY } },
        { { .comp = pos }, { .comp = stun, .oper = TECS_NONE, .toggle = TECS_TOGGLE_DISABLED } },
        { { .comp = hp }, { .comp = vel, .oper = TECS_OPTIONAL } },
        { { .comp = pos }, { .comp = hp, .oper = TECS_ANY }, { .comp = vel, .oper = TECS_ANY } },
        { { .comp = pos }, { .comp = hp, .oper = TECS_ANY, .toggle = TECS_TOGGLE_DISABLED },
          { .comp = stun, .oper = TECS_ANY } },
        { { .comp = hp, .access = TECS_READ }, { .comp = stun, .access = TECS_FILTER },
          { .comp = vel, .oper = TECS_OPTIONAL, .toggle = TECS_TOGGLE_DISABLED } },
    };
    const int nterms[] = { 2, 2, 2, 2, 2, 2, 2, 3, 3, 3 };
    enum { NQ = sizeof nterms / sizeof nterms[0] };
    tecs_query_t *q[NQ];
    for (int k = 0; k < NQ; k++) {
        q[k] = tecs_query_new(w, &(tecs_query_desc_t){ .terms = sets[k], .term_count = nterms[k] });
        CHECK(q[k] != NULL);
    }
    /* Patterns: nothing disabled, random bits, runs of 8, all disabled,
    ** runs of 100 (across the 64-row words of the bits). */
    for (int pattern = 0; pattern < 5; pattern++) {
        for (int i = 0; i < N; i++) {
            bool off = pattern == 1 ? tw_rand(&rng) & 1 : pattern == 2 ? (i / 8) & 1
                     : pattern == 4 ? (i / 100) & 1 : pattern == 3;
            tecs_enable(w, e[i], hp, !off);
            tecs_enable(w, e[i], stun, pattern == 1 ? tw_rand(&rng) & 1 : !off);
            tecs_enable(w, e[i], vel, pattern == 1 ? tw_rand(&rng) & 1 : off);
        }
        for (int k = 0; k < NQ; k++) {
            int32_t fwd = oracle_walk(w, q[k], sets[k], nterms[k], e, N, 0);
            int32_t rev = oracle_walk(w, q[k], sets[k], nterms[k], e, N, true);
            CHECK_EQ(fwd, rev);
            CHECK_EQ(tecs_query_count(q[k]), fwd);
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q[k]) }, NULL, 0), fwd);
            tecs_entity_t *out = malloc((size_t)(fwd + 1) * sizeof *out);
            CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q[k]) }, out, fwd + 1), fwd);
            free(out);
        }
    }
    for (int k = 0; k < NQ; k++)
        tecs_query_free(q[k]);
    free(e);
    TW_CHECK(w);
    tw_free(w);
}

/* The rows a pattern disables: word edges (rows 0 and 63 of a word, runs
** that end at a word's last row or go on into the next word), chunk edges
** (runs across a chunk's end, a partial last chunk), all on, all off, runs
** of 8, single rows, random bits. */
static bool edge_off(int pattern, int i, int rows, uint64_t *rng)
{
    switch (pattern) {
    case 0: return false;
    case 1: return true;
    case 2: return (i / 8) & 1;
    case 3: return i % 64 == 0 || i % 64 == 63;
    case 4: return !(i % 64 >= 56 || i % 64 < 8);           /* runs across words */
    case 5: return !(i % rows >= rows - 3 || i % rows < 3); /* runs across chunks */
    case 6: return i % 64 != 63 && i % 64 != 0;             /* single rows at edges */
    case 7: return (i / 64) & 1;                            /* whole words */
    default: return tw_rand(rng) & 1;
    }
}

static void word_walk_edges(int32_t rows_per_chunk, int n);

/* A query of one toggle term walks a chunk's bit column word by word:
** every pattern of edges, forward and reverse, as the oracle says. */
TEST(enable_word_walk_edges)
{
    word_walk_edges(64, 64 * 5 + 37);
    word_walk_edges(128, 128 * 3 + 64);
    word_walk_edges(1024, 1024 * 2 + 130);
}

static void word_walk_edges(int32_t rows_per_chunk, int n)
{
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, rows_per_chunk);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_comp_t stun = enableable(w, "Stunned", 0);
    tecs_entity_t *e = malloc((size_t)n * sizeof *e);
    for (int i = 0; i < n; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        TECS_SET(w, e[i], hp, Health, { i });
        tecs_add(w, e[i], stun);
    }
    const tecs_term_t sets[][2] = {
        { { .comp = pos }, { .comp = hp } },
        { { .comp = pos, .access = TECS_READ }, { .comp = hp, .toggle = TECS_TOGGLE_DISABLED } },
        { { .comp = pos }, { .comp = stun, .oper = TECS_NONE } },
        { { .comp = pos }, { .comp = stun, .oper = TECS_NONE, .toggle = TECS_TOGGLE_DISABLED } },
        { { .comp = hp } },
    };
    const int nterms[] = { 2, 2, 2, 2, 1 };
    enum { NQ = sizeof nterms / sizeof nterms[0] };
    uint64_t rng = 11;
    for (int pattern = 0; pattern < 9; pattern++) {
        for (int i = 0; i < n; i++) {
            bool off = edge_off(pattern, i, rows_per_chunk, &rng);
            CHECK_ERR(tecs_enable(w, e[i], hp, !off), TECS_OK);
            CHECK_ERR(tecs_enable(w, e[i], stun, off), TECS_OK);
        }
        for (int k = 0; k < NQ; k++) {
            tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = sets[k], .term_count = nterms[k] });
            CHECK(q != NULL);
            int32_t fwd = oracle_walk(w, q, sets[k], nterms[k], e, n, 0);
            CHECK_EQ(oracle_walk(w, q, sets[k], nterms[k], e, n, true), fwd);
            CHECK_EQ(tecs_query_count(q), fwd);
            int32_t each = 0;
            TECS_EACH(q, it, i) {
                CHECK(oracle_matches(w, it.entities[i], sets[k], nterms[k]));
                int32_t x = nterms[k] == 1 ? ((Health *)it.fields[0])[i].hp
                                           : (int32_t)((Position *)it.fields[0])[i].x;
                CHECK(x >= 0 && x < n && e[x] == it.entities[i]);
                each++;
            }
            CHECK_EQ(each, fwd);
            CHECK_ERR(tecs_query_free(q), TECS_OK);
        }
    }
    free(e);
    TW_CHECK(w);
    tw_free(w);
}

/* A row of the word being walked, enabled or disabled during the walk, is
** seen as it is when the walk reaches it, as tecs_enable promises. */
TEST(enable_in_the_word_being_walked)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_entity_t e[200];
    for (int i = 0; i < 200; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        if ((i / 4) & 1)
            CHECK_ERR(tecs_enable(w, e[i], hp, false), TECS_OK);   /* runs of 4 */
    }
    /* Flip rows ahead in the same word (20, 21: off; 28: on), at the end
    ** of a word (63: on; 60: off) and in the next word (70: off). */
    const int flip[] = { 20, 21, 28, 60, 63, 70 };
    for (int pass = 0; pass < 2; pass++) {
        tecs_query_t *q = tecs_query_all(w, 1, &hp);
        bool seen[200] = { false };
        int32_t rows = 0;
        TECS_EACH(q, it, i) {
            int32_t idx = ((Health *)it.fields[0])[i].hp;
            CHECK(tecs_is_enabled(w, it.entities[i], hp));
            CHECK(!seen[idx]);
            seen[idx] = true;
            rows++;
            if (idx == 1)
                for (size_t f = 0; f < sizeof flip / sizeof flip[0]; f++)
                    CHECK_ERR(tecs_enable(w, e[flip[f]], hp,
                                          !tecs_is_enabled(w, e[flip[f]], hp)), TECS_OK);
        }
        for (int i = 0; i < 200; i++)
            CHECK_EQ(seen[i], tecs_is_enabled(w, e[i], hp));
        CHECK_EQ(rows, tecs_query_count(q));
        CHECK_ERR(tecs_query_free(q), TECS_OK);
    }
    TW_CHECK(w);
    tw_free(w);
}

static bool count_each(tecs_world_t *w, tecs_entity_t e, void *const *f, void *ctx)
{
    (void)f;
    CHECK(tecs_is_enabled(w, e, *(tecs_comp_t *)ctx));
    ((int *)ctx)[1]++;
    return false;
}

typedef struct ahead_ctx {
    tecs_comp_t hp;
    tecs_entity_t later;
    int seen_later;
} ahead_ctx;

static bool disable_ahead(tecs_world_t *w, tecs_entity_t e, void *const *f, void *ctx)
{
    (void)f;
    ahead_ctx *c = ctx;
    c->seen_later += e == c->later;
    CHECK_ERR(tecs_enable(w, c->later, c->hp, false), TECS_OK);    /* applies at once */
    CHECK(!tecs_is_enabled(w, c->later, c->hp));
    return false;
}

/* Enabling during an iteration applies at once: rows not reached see it. */
TEST(enable_during_iteration_applies_at_once)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_entity_t e[100];
    for (int i = 0; i < 100; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        if (i % 3 == 0)
            tecs_enable(w, e[i], hp, false);
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    int ctx[2] = { (int)hp, 0 };
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, count_each, ctx), TECS_OK);
    CHECK_EQ(ctx[1], 66);
    CHECK_EQ(tecs_query_count(q), 66);
    ahead_ctx a = { hp, e[99], 0 };
    CHECK(tecs_is_enabled(w, e[98], hp));
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, disable_ahead, &a), TECS_OK);
    CHECK_EQ(a.seen_later, 0);                  /* disabled before it was reached */
    CHECK(!tecs_is_deferred(w));
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* Deferred: a component not there yet, or leaving, queues the change. */
TEST(enable_queues_behind_queued_changes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_entity_t e = tecs_new(w), f = tecs_new(w);
    TECS_SET(w, f, hp, Health, { 1 });
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, hp), TECS_OK);             /* queued */
    CHECK_ERR(tecs_enable(w, e, hp, false), TECS_OK);   /* queued behind it */
    CHECK(!tecs_has(w, e, hp));
    CHECK_ERR(tecs_enable(w, f, hp, false), TECS_OK);   /* f has it: at once */
    CHECK(!tecs_is_enabled(w, f, hp));
    tecs_entity_t g = tecs_new(w);                      /* pending birth */
    CHECK_ERR(tecs_set(w, g, hp, &(Health){ 3 }), TECS_OK);
    CHECK_ERR(tecs_enable(w, g, hp, false), TECS_OK);
    CHECK_ERR(tecs_remove(w, f, hp), TECS_OK);
    CHECK_ERR(tecs_enable(w, f, hp, true), TECS_OK);    /* after the remove: dropped */
    CHECK(!tecs_is_enabled(w, f, hp));
    CHECK_ERR(tecs_defer_end(w), TECS_ENOENT);          /* the drop is reported */
    CHECK_EQ(tecs_dropped_changes(w), 1);
    CHECK(tecs_has(w, e, hp));
    CHECK(!tecs_is_enabled(w, e, hp));
    CHECK(!tecs_is_enabled(w, g, hp) && tecs_has(w, g, hp));
    CHECK(!tecs_has(w, f, hp));
    TW_CHECK(w);
    tw_free(w);
}

/* ---- events --------------------------------------------------------------- */

typedef struct tog_log {
    int n;
    tecs_event_kind_t kind[32];
    tecs_entity_t e[32];
} tog_log;

static void tog_record(const tecs_event_t *ev)
{
    tog_log *l = ev->ctx;
    CHECK(l->n < 32);
    l->kind[l->n] = ev->kind;
    l->e[l->n++] = ev->entity;
}

TEST(enable_fires_events_and_membership)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tog_log log = { 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENABLE, .comp = hp,
          .callback = tog_record, .ctx = &log }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_DISABLE, .comp = hp,
          .callback = tog_record, .ctx = &log }) != 0);
    const tecs_term_t terms[] = { { .comp = pos }, { .comp = hp } };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER,
          .terms = terms, .term_count = 2, .callback = tog_record, .ctx = &log }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
          .terms = terms, .term_count = 2, .callback = tog_record, .ctx = &log }) != 0);
    tecs_entity_t e = tecs_new(w);
    TECS_SET(w, e, pos, Position, { 0, 0 });
    TECS_SET(w, e, hp, Health, { 1 });
    CHECK_EQ(log.n, 1);
    CHECK_EQ(log.kind[0], TECS_ON_ENTER);
    tecs_enable(w, e, hp, false);           /* DISABLE, then LEAVE */
    CHECK_EQ(log.n, 3);
    CHECK_EQ(log.kind[1], TECS_ON_DISABLE);
    CHECK_EQ(log.kind[2], TECS_ON_LEAVE);
    tecs_enable(w, e, hp, false);           /* no change, no event */
    CHECK_EQ(log.n, 3);
    tecs_remove(w, e, pos);                 /* not a member: no LEAVE */
    CHECK_EQ(log.n, 3);
    tecs_add(w, e, pos);                    /* hp disabled: no ENTER */
    CHECK_EQ(log.n, 3);
    tecs_enable(w, e, hp, true);            /* ENTER, then ENABLE */
    CHECK_EQ(log.n, 5);
    CHECK_EQ(log.kind[3], TECS_ON_ENTER);
    CHECK_EQ(log.kind[4], TECS_ON_ENABLE);
    tecs_enable(w, e, hp, false);           /* DISABLE, LEAVE */
    CHECK_EQ(log.n, 7);
    tecs_remove(w, e, hp);                  /* was disabled: no LEAVE */
    CHECK_EQ(log.n, 7);
    TECS_SET(w, e, hp, Health, { 2 });      /* added enabled: ENTER */
    CHECK_EQ(log.n, 8);
    CHECK_EQ(log.kind[7], TECS_ON_ENTER);
    tecs_destroy(w, e);                     /* LEAVE */
    CHECK_EQ(log.n, 9);
    CHECK_EQ(log.kind[8], TECS_ON_LEAVE);
    tecs_entity_t f = tecs_new(w);
    TECS_SET(w, f, pos, Position, { 0, 0 });
    TECS_SET(w, f, hp, Health, { 1 });
    tecs_enable(w, f, hp, false);
    int before = log.n;
    tecs_destroy(w, f);                     /* not a member: no LEAVE */
    CHECK_EQ(log.n, before);
    TW_CHECK(w);
    tw_free(w);
}

static void cache_count(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ++*(int *)ctx;
}

TEST(enable_caches_and_where_follow_the_bits)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    int enter = 0;          /* enters and leaves */
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q,
        .on_enter = cache_count, .on_leave = cache_count, .ctx = &enter });
    CHECK(c != NULL);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp,
        .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    CHECK(x != NULL);
    tecs_entity_t e[10];
    for (int i = 0; i < 10; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
    }
    CHECK_EQ(tecs_cache_count(c), 10);
    CHECK_EQ(enter, 10);
    tecs_enable(w, e[3], hp, false);
    tecs_enable(w, e[4], hp, false);
    CHECK_EQ(enter, 12);                    /* two leaves */
    CHECK_EQ(tecs_cache_count(c), 8);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .cache = c) }, NULL, 0), 8);
    /* The index keeps disabled values; a where through q skips them. */
    CHECK_EQ(tecs_index_count(x), 10);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK(tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(6)) >= 0);
    tecs_entity_t out[10];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 10), 4);   /* 0 1 2 5 */
    tecs_query_t *any = TECS_QUERY(w, { .comp = hp, .toggle = TECS_TOGGLE_ANY });
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = any, .where = f) }, out, 10), 6);
    tecs_enable(w, e[3], hp, true);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, out, 10), 5);
    CHECK_EQ(tecs_cache_count(c), 9);
    tecs_filter_free(f);
    tecs_cache_free(c);
    tecs_query_free(any);
    tecs_query_free(q);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- workers, hooks, out of memory ---------------------------------------- */

typedef struct par_ctx {
    tecs_comp_t hp;
    int32_t rows[TECS_MAX_THREADS];
    tecs_err_t err[TECS_MAX_THREADS];
    bool saw_disabled[TECS_MAX_THREADS];     /* per worker: no shared write */
} par_ctx;

static void disable_own(tecs_iter_t *it)
{
    par_ctx *c = it->ctx;
    for (int32_t r = 0; r < it->count; r++) {
        bool *saw = &c->saw_disabled[it->worker];
        *saw |= !tecs_is_enabled(it->world, it->entities[r], c->hp);
        tecs_err_t err = tecs_enable(it->world, it->entities[r], c->hp, false);   /* queued */
        if (err)
            c->err[it->worker] = err;
        *saw |= !tecs_is_enabled(it->world, it->entities[r], c->hp);
    }
    c->rows[it->worker] += it->count;
}

/* A parallel system's parts split the rows that pass; a worker's
** tecs_enable queues and applies when the run is merged. */
TEST(parallel_enable_from_workers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_entity_t e[3000];
    for (int i = 0; i < 3000; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], hp, Health, { i });
        if (i % 3 == 0)
            tecs_enable(w, e[i], hp, false);
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    par_ctx c = { .hp = hp };
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "off", .query = q,
          .run = disable_own, .ctx = &c, .parallel = true, .parallel_min = 1 }) != 0);
    CHECK_ERR(tecs_progress(w, 0), TECS_OK);
    CHECK(!c.saw_disabled[0] && !c.saw_disabled[1]);  /* disabled rows are not handed out, */
    CHECK_EQ(c.rows[0] + c.rows[1], 2000);      /* and queued ones not seen yet      */
    CHECK(c.rows[0] > 0 && c.rows[1] > 0);
    CHECK_EQ(c.err[0], TECS_OK);
    CHECK_EQ(c.err[1], TECS_OK);
    CHECK_EQ(tecs_query_count(q), 0);           /* applied after the run */
    for (int i = 0; i < 3000; i += 97)
        CHECK(!tecs_is_enabled(w, e[i], hp));
    TW_CHECK(w);
    tw_free(w);
}

typedef struct hook_ctx {
    tecs_world_t *w;
    tecs_entity_t other;
    tecs_comp_t hp;
    tecs_err_t err;
    bool applied_inside;
} hook_ctx;

static hook_ctx *g_hook;

static void ctor_disables(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (g_hook && g_hook->other) {
        g_hook->err = tecs_enable(g_hook->w, g_hook->other, g_hook->hp, false);
        g_hook->applied_inside = !tecs_is_enabled(g_hook->w, g_hook->other, g_hook->hp);
    }
}

/* Rows are in motion in a lifecycle hook: its tecs_enable queues. */
TEST(enable_in_a_lifecycle_hook_queues)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
    tecs_comp_t pos = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Position",
        .size = sizeof(Position), .align = _Alignof(Position), .ctor = ctor_disables });
    tecs_entity_t other = tecs_new(w);
    TECS_SET(w, other, hp, Health, { 1 });
    hook_ctx h = { w, other, hp, TECS_EINVAL, true };
    g_hook = &h;
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    g_hook = NULL;
    CHECK_EQ(h.err, TECS_OK);
    CHECK(!h.applied_inside);
    CHECK(!tecs_is_enabled(w, other, hp));      /* applied after the add */
    TW_CHECK(w);
    tw_free(w);
}

/* Out of memory queueing it: TECS_ENOMEM, nothing changed, nothing leaked.
** The queue is full (its first growth holds 64 changes), so queueing one
** more must grow it. */
TEST(enable_queued_out_of_memory)
{
    int enomem = 0;
    for (long k = 1; k < 40; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 0);
        tecs_comp_t hp = enableable(w, "Health", sizeof(Health));
        tecs_comp_t tag = TECS_TAG(w, Marked);
        tecs_entity_t e = tecs_new(w), more[63];
        for (int i = 0; i < 63; i++)
            more[i] = tecs_new(w);
        CHECK_ERR(tecs_defer_begin(w), TECS_OK);
        CHECK_ERR(tecs_add(w, e, hp), TECS_OK);
        for (int i = 0; i < 63; i++)          /* 64 queued: the queue is full */
            CHECK_ERR(tecs_add(w, more[i], tag), TECS_OK);
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_enable(w, e, hp, false);
        al.fail_at = 0;
        CHECK(err == TECS_OK || err == TECS_ENOMEM);
        enomem += err == TECS_ENOMEM;
        tecs_defer_end(w);
        CHECK(tecs_has(w, e, hp));
        CHECK_EQ(tecs_is_enabled(w, e, hp), err != TECS_OK);
        TW_CHECK(w);
        tw_free(w);
        if (err == TECS_OK)
            break;
    }
    CHECK(enomem > 0);
}
