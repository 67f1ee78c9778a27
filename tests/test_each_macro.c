/* TECS_EACH: the inlined per-entity loop against tecs_iter_each, over
** every term kind; early exits; what its body may call. */
#include "test.h"

/* The entities and field pointers a walk saw, in order. */
typedef struct seen {
    int n;
    tecs_entity_t e[4096];
    void *f[4096][3];
} seen;

static bool record(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w;
    seen *s = ctx;
    if (s->n < 4096) {
        s->e[s->n] = e;
        for (int t = 0; t < 3; t++)
            s->f[s->n][t] = fields[t];
    }
    s->n++;
    return false;
}

/* The same walk through TECS_EACH; size[t] picks the type TECS_ROW steps
** by (8: Position, 4: Health, 0: a tag, whose field is NULL). */
static void seen_each(tecs_query_t *q, int nterms, const size_t *size, seen *s)
{
    s->n = 0;
    TECS_EACH(q, it, i) {
        if (s->n < 4096) {
            s->e[s->n] = it.entities[i];
            for (int t = 0; t < 3; t++)
                s->f[s->n][t] = t >= nterms ? NULL
                                : size[t] == 8 ? (void *)TECS_ROW(it, Position, t, i)
                                : size[t] == 4 ? (void *)TECS_ROW(it, Health, t, i)
                                : (void *)TECS_ROW(it, char, t, i);
        }
        s->n++;
    }
}

TEST(each_macro_matches_each_fn_for_every_term_kind)
{
    tecs_world_t *w = tw_new_ex(NULL, 64);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t hp = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Health",
        .size = sizeof(Health), .align = 4, .enableable = true });
    tecs_comp_t sv = tecs_component_new(w, &(tecs_component_desc_t){ .name = "SVel",
        .size = sizeof(Velocity), .align = 4, .storage = TECS_STORAGE_SPARSE });
    tecs_comp_t st = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Stunned",
        .storage = TECS_STORAGE_SPARSE });
    tecs_comp_t tag = TECS_TAG(w, Tag);
    enum { N = 1500 };
    static tecs_entity_t e[N];
    uint64_t rng = 5;
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], pos, Position, { (float)i, 0 });
        if (tw_rand(&rng) % 3) TECS_SET(w, e[i], vel, Velocity, { 1, 1 });
        if (tw_rand(&rng) % 2) TECS_SET(w, e[i], hp, Health, { i });
        if (tw_rand(&rng) % 3 == 0) tecs_add(w, e[i], tag);
        if (tw_rand(&rng) % 5 == 0) TECS_SET(w, e[i], sv, Velocity, { 2, 2 });
        if (tw_rand(&rng) % 7 == 0) tecs_add(w, e[i], st);
        if (tw_rand(&rng) % 4 == 0) tecs_enable(w, e[i], hp, false);
    }
    for (int i = 0; i < N; i += 9)
        tecs_destroy(w, e[i]);
    uint64_t mark = tecs_world_tick(w);
    tecs_world_tick_advance(w);
    for (int i = 1; i < N; i += 97)
        TECS_SET(w, e[i], pos, Position, { -1, -1 });
    TECS_SET(w, tecs_new(w), pos, Position, { -2, -2 });    /* an ADDED row */
    const tecs_term_t sets[][3] = {
        { { .comp = pos }, { .comp = vel, .access = TECS_READ } },
        { { .comp = pos }, { .comp = vel, .oper = TECS_OPTIONAL } },
        { { .comp = pos }, { .comp = tag, .oper = TECS_NONE } },
        { { .comp = pos }, { .comp = hp } },
        { { .comp = pos }, { .comp = hp, .toggle = TECS_TOGGLE_DISABLED } },
        { { .comp = pos }, { .comp = hp, .oper = TECS_OPTIONAL, .toggle = TECS_TOGGLE_ANY } },
        { { .comp = hp, .oper = TECS_NONE }, { .comp = pos } },
        { { .comp = pos }, { .comp = sv } },
        { { .comp = st, .access = TECS_FILTER }, { .comp = pos } },
        { { .comp = pos }, { .comp = sv, .oper = TECS_ANY }, { .comp = tag, .oper = TECS_ANY } },
        { { .comp = pos }, { .comp = st, .oper = TECS_NONE }, { .comp = sv, .oper = TECS_OPTIONAL } },
        { { .comp = pos, .change = TECS_CHANGE_CHANGED }, { .comp = vel } },
        { { .comp = pos, .change = TECS_CHANGE_ADDED } },
    };
    const int nterms[] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 2, 1 };
    static seen a, b;
    for (size_t k = 0; k < sizeof nterms / sizeof nterms[0]; k++) {
        tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = sets[k], .term_count = nterms[k] });
        CHECK(q != NULL);
        CHECK_ERR(tecs_query_set_last_run(q, mark), TECS_OK);
        a.n = 0;
        CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, record, &a), TECS_OK);
        CHECK_ERR(tecs_query_set_last_run(q, mark), TECS_OK);
        size_t size[3];
        for (int t = 0; t < nterms[k]; t++)
            size[t] = tecs_component_size(w, sets[k][t].comp);
        seen_each(q, nterms[k], size, &b);
        CHECK(!tecs_is_deferred(w));
        CHECK_EQ(b.n, a.n);
        CHECK(a.n > 0);
        for (int r = 0; r < a.n && r < 4096; r++) {
            CHECK_EQ(b.e[r], a.e[r]);
            for (int t = 0; t < nterms[k]; t++)
                CHECK(b.f[r][t] == a.f[r][t]);
        }
        CHECK_ERR(tecs_query_free(q), TECS_OK);
    }
    TW_CHECK(w);
    tw_free(w);
}

/* Twelve entities over two archetypes, four rows a chunk. */
static tecs_query_t *small_world(tecs_world_t *w, tecs_comp_t *pos, tecs_entity_t *ids)
{
    *pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = TECS_TAG(w, Tag);
    for (int i = 0; i < 12; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], *pos, Position, { (float)i, 0 });
        if (i >= 6)
            tecs_add(w, ids[i], tag);
    }
    return tecs_query_all(w, 1, pos);
}

TEST(each_macro_break_continue_and_nesting)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos;
    tecs_entity_t ids[12];
    tecs_query_t *q = small_world(w, &pos, ids);
    /* break ends the whole iteration, in the first chunk and in a later one */
    for (int stop = 0; stop < 12; stop++) {
        int n = 0;
        TECS_EACH(q, it, i) {
            if (n == stop)
                break;
            n++;
        }
        CHECK_EQ(n, stop);
        CHECK(!tecs_is_deferred(w));
        TW_CHECK(w);                    /* no iteration left open */
    }
    /* continue goes to the next entity */
    int odd = 0, all = 0;
    TECS_EACH(q, it, i) {
        all++;
        if (TECS_ENTITY_INDEX(it.entities[i]) % 2 == 0)
            continue;
        odd++;
    }
    CHECK_EQ(all, 12);
    CHECK_EQ(odd, 6);
    /* nested loops: a break in the inner one ends only the inner one */
    int pairs = 0;
    TECS_EACH(q, a, i) {
        int inner = 0;
        TECS_EACH(q, b, j) {
            if (inner == 3)
                break;
            inner++;
            pairs++;
            CHECK(tecs_is_deferred(w));
        }
        (void)a.entities[i];
    }
    CHECK_EQ(pairs, 36);
    CHECK(!tecs_is_deferred(w));
    /* tecs_iter_fini in the body stops after that entity */
    int seen_rows = 0;
    TECS_EACH(q, it, i) {
        seen_rows++;
        if (seen_rows == 5)
            tecs_iter_fini(&it);
    }
    CHECK_EQ(seen_rows, 5);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

TEST(each_macro_body_changes_are_queued)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos;
    tecs_entity_t ids[12];
    tecs_query_t *q = small_world(w, &pos, ids);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *qv = tecs_query_all(w, 1, &vel);
    int n = 0;
    tecs_entity_t born = 0;
    TECS_EACH(q, it, i) {
        tecs_entity_t e = it.entities[i];
        /* structural changes: queued until the iteration ends */
        if (n == 0) {
            CHECK_ERR(tecs_destroy(w, ids[11]), TECS_OK);
            born = tecs_new(w);
            CHECK(born != 0 && !tecs_is_alive(w, born));
        }
        CHECK_ERR(TECS_SET(w, e, vel, Velocity, { 1, 2 }), TECS_OK);
        CHECK(!tecs_has(w, e, vel));
        /* a value write applies at once */
        CHECK_ERR(TECS_SET(w, e, pos, Position, { 100, (float)n }), TECS_OK);
        CHECK_EQ(TECS_ROW(it, Position, 0, i)->x, 100);
        /* refused inside an iteration */
        CHECK_ERR(tecs_query_free(q), TECS_EBUSY);
        CHECK_ERR(tecs_delayed_apply(w), TECS_EBUSY);
        CHECK_ERR(tecs_progress(w, 0.1), TECS_EBUSY);
        CHECK_ERR(tecs_world_reset(w), TECS_EBUSY);
        /* allowed: reads, objects other than the query iterated */
        CHECK(tecs_is_alive(w, e));
        tecs_query_t *other = tecs_query_all(w, 1, &vel);
        CHECK(other != NULL);
        CHECK_ERR(tecs_query_free(other), TECS_OK);
        n++;
    }
    CHECK_EQ(n, 12);                    /* ids[11] is destroyed after the loop */
    CHECK(!tecs_is_alive(w, ids[11]));
    CHECK(tecs_is_alive(w, born));
    CHECK_EQ(tecs_query_count(qv), 11);
    CHECK_EQ(TECS_GET(w, ids[3], pos, Position)->y, 3);
    TW_CHECK(w);
    tw_free(w);
}

static bool each_runs_macro(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)e, (void)fields;
    tecs_query_t *q = ctx;
    int n = 0;
    TECS_EACH(q, it, i) {
        n++;
        (void)it.entities[i];
    }
    CHECK_EQ(n, 12);
    CHECK(tecs_is_deferred(w));         /* still inside the callback */
    return true;
}

TEST(each_macro_bad_input_and_callbacks)
{
    /* a NULL query: the body never runs */
    int n = 0;
    TECS_EACH((tecs_query_t *)NULL, it, i) {
        n++;
        (void)it.entities[i];
    }
    CHECK_EQ(n, 0);
    tw_alloc al = { 0 };
    tecs_world_t *w = tw_new_ex(&al, 16);
    tecs_comp_t pos;
    tecs_entity_t ids[12];
    tecs_query_t *q = small_world(w, &pos, ids);
    /* out of memory opening the iteration (its first one allocates the
       table of open iterations): the body never runs, the error says why,
       and the world is not left deferred */
    tw_alloc al2 = { 0 };
    tecs_world_t *w2 = tw_new_ex(&al2, 16);
    tecs_comp_t p2;
    tecs_entity_t i2[12];
    tecs_query_t *q2 = small_world(w2, &p2, i2);
    tecs_iter_t held[64];
    int nheld = 0;
    for (; nheld < 64; nheld++) {       /* until the table must grow */
        al2.fail_at = al2.calls + 1;
        n = 0;
        TECS_EACH(q2, it, i) {
            n++;
            (void)it.entities[i];
        }
        al2.fail_at = 0;
        if (n == 0)
            break;
        CHECK_EQ(n, 12);
        held[nheld] = TECS_ITER(tecs_query_world(q2), .query = q2);
    }
    while (nheld > 0 && nheld < 64)
        tecs_iter_fini(&held[--nheld]);
    CHECK_EQ(n, 0);
    CHECK_ERR(tecs_last_error(w2), TECS_ENOMEM);
    CHECK(!tecs_is_deferred(w2));
    n = 0;
    TECS_EACH(q2, it, i) {              /* and works once memory is back */
        n++;
        (void)it.entities[i];
    }
    CHECK_EQ(n, 12);
    TW_CHECK(w2);
    tw_free(w2);
    /* from a callback: the loop runs, its iteration nests in the callback's */
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(tecs_query_world(q), .query = q) }, each_runs_macro, q), TECS_OK);
    CHECK(!tecs_is_deferred(w));
    /* a reset, a frame and the applies are refused in the body; the loop
       goes on */
    n = 0;
    TECS_EACH(q, it, i) {
        CHECK_ERR(tecs_world_reset(w), TECS_EBUSY);
        CHECK_ERR(tecs_progress(w, 0.016), TECS_EBUSY);
        CHECK_ERR(tecs_delayed_apply(w), TECS_EBUSY);
        n++;
    }
    CHECK_EQ(n, 12);
    CHECK_EQ(tecs_world_entity_count(w), 12);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

TEST(each_macro_over_other_iterators)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos;
    tecs_entity_t ids[12];
    tecs_query_t *q = small_world(w, &pos, ids);
    /* reverse: steps last first, rows of a step in memory order */
    tecs_entity_t order[12];
    int n = 0;
    TECS_EACH_ITER(TECS_ITER(w, .query = q, .reverse = true), it, i) {
        order[n++] = it.entities[i];
    }
    CHECK_EQ(n, 12);
    CHECK_EQ(order[0], ids[6]);         /* {Position, Tag} first */
    CHECK_EQ(order[5], ids[11]);
    CHECK_EQ(order[6], ids[0]);         /* then {Position} */
    CHECK_EQ(order[11], ids[5]);
    /* one archetype */
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &pos);
    n = 0;
    TECS_EACH_ITER(TECS_ITER(w, .archetype = a), it, i) {
        CHECK_EQ(it.entities[i], ids[n]);
        CHECK_EQ(TECS_ROW(it, Position, 0, i)->x, n);
        n++;
    }
    CHECK_EQ(n, 6);
    n = 0;
    TECS_EACH_ITER(TECS_ITER(w, .archetype = NULL), it, i) {
        n++;
        (void)it.entities[i];
    }
    CHECK_EQ(n, 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}
