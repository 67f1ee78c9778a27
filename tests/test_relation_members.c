/*
** Relationships and membership: caches and ENTER / LEAVE observers of
** queries with pair terms ((R, t), (R, *), (*, t), (ChildOf, p),
** (ChildOf, *)) and terms read from the parent, through every change that
** moves an entity in or out: pairs added, removed and retargeted,
** reparents within and across levels, a parent gaining or losing the
** component its children read, targets and parents destroyed, changes
** queued while deferred and made from the callbacks.
**
** After each change, each query's members as an iteration lists them are
** the truth: the cache holds exactly those, and the ENTER / LEAVE calls
** have added and taken exactly those (never an ENTER of a member, never a
** LEAVE of a stranger).
*/
#include "test.h"

#include <tinyecs/index.h>

#define MAXM 64

typedef struct members {
    tecs_entity_t in[MAXM];
    int n;
    int bad;                    /* ENTER of a member, LEAVE of a stranger */
    int calls;
    tecs_comp_t poke_rel;       /* an ENTER adds (poke_rel, poke_tgt) */
    tecs_entity_t poke_tgt;
} members;

static int find(const members *m, tecs_entity_t e)
{
    for (int i = 0; i < m->n; i++)
        if (m->in[i] == e)
            return i;
    return -1;
}

static void on_enter(const tecs_event_t *ev)
{
    members *m = ev->ctx;
    m->calls++;
    if (find(m, ev->entity) >= 0 || m->n == MAXM)
        m->bad++;
    else
        m->in[m->n++] = ev->entity;
    if (m->poke_rel && ev->entity != m->poke_tgt)   /* queued: applied after */
        CHECK_ERR(tecs_pair_add(ev->world, ev->entity, m->poke_rel, m->poke_tgt), TECS_OK);
}

static void on_leave(const tecs_event_t *ev)
{
    members *m = ev->ctx;
    m->calls++;
    int i = find(m, ev->entity);
    if (i < 0)
        m->bad++;
    else
        m->in[i] = m->in[--m->n];
}

static int cmp_ent(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return x < y ? -1 : x > y;
}

/* The entities of an iteration, sorted; their number. */
static int listed(tecs_world_t *w, tecs_iter_desc_t d, tecs_entity_t *out)
{
    tecs_iter_t it = tecs_iter(w, &d);
    int n = tecs_iter_collect(&it, out, MAXM);
    CHECK(n >= 0);
    qsort(out, (size_t)(n < 0 ? 0 : n), sizeof *out, cmp_ent);
    return n;
}

typedef struct watched {
    tecs_query_t *q;
    tecs_cache_t *c;
    members m;
    const char *name;
} watched;

static void watch(tecs_world_t *w, watched *x, const char *name, const tecs_term_t *terms,
                  int32_t n)
{
    x->name = name;
    x->q = tecs_query_new(w, &(tecs_query_desc_t){ .terms = terms, .term_count = n });
    CHECK(x->q != NULL);
    x->c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = x->q });
    CHECK(x->c != NULL);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ENTER, .query = x->q,
                                                     .callback = on_enter, .ctx = &x->m }));
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE, .query = x->q,
                                                     .callback = on_leave, .ctx = &x->m }));
    /* Those present when the observer came: as if they had entered. */
    x->m.n = listed(w, (tecs_iter_desc_t){ .query = x->q }, x->m.in);
}

/* The cache and the observers agree with the query. */
static void agree(tecs_world_t *w, watched *x, int nx, const char *step)
{
    for (int i = 0; i < nx; i++) {
        tecs_entity_t truth[MAXM], cached[MAXM], seen[MAXM];
        int n = listed(w, (tecs_iter_desc_t){ .query = x[i].q }, truth);
        int nc = listed(w, (tecs_iter_desc_t){ .cache = x[i].c }, cached);
        memcpy(seen, x[i].m.in, sizeof seen);
        qsort(seen, (size_t)x[i].m.n, sizeof *seen, cmp_ent);
        bool ok = nc == n && x[i].m.n == n && x[i].m.bad == 0 &&
                  memcmp(truth, cached, (size_t)n * sizeof *truth) == 0 &&
                  memcmp(truth, seen, (size_t)n * sizeof *truth) == 0;
        if (!ok)
            fprintf(stderr, "  after %s: %s: query %d, cache %d, observed %d (bad %d)\n", step,
                    x[i].name, n, nc, x[i].m.n, x[i].m.bad);
        CHECK(ok);
    }
    TW_CHECK(w);
}

typedef struct { float x, y; } pos;

TEST(relation_members_follow_pairs)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t Pos = TECS_COMPONENT(w, pos);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_comp_t owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = 4, .align = 4 }, .exclusive = true });
    tecs_comp_t co = tecs_childof(w);
    tecs_entity_t bob = tecs_new(w), ann = tecs_new(w);
    tecs_entity_t a = tecs_new(w), b = tecs_new(w), c = tecs_new(w);
    tecs_entity_t p1 = tecs_new(w), p2 = tecs_new(w);
    TECS_SET(w, a, Pos, pos, { 1, 1 });
    TECS_SET(w, b, Pos, pos, { 2, 2 });
    TECS_SET(w, c, Pos, pos, { 3, 3 });
    TECS_SET(w, p1, Pos, pos, { 4, 4 });

    watched x[7];
    memset(x, 0, sizeof x);
    watch(w, &x[0], "(Pos, (Likes, bob))", (tecs_term_t[]){
        { .comp = Pos }, { .comp = likes, .target = bob, .access = TECS_FILTER } }, 2);
    watch(w, &x[1], "(Likes, *)", (tecs_term_t[]){
        { .comp = likes, .target = TECS_WILDCARD, .access = TECS_READ } }, 1);
    watch(w, &x[2], "(*, bob)", (tecs_term_t[]){
        { .comp = TECS_WILDCARD, .target = bob, .access = TECS_FILTER } }, 1);
    watch(w, &x[3], "(ChildOf, p1)", (tecs_term_t[]){
        { .comp = co, .target = p1, .access = TECS_FILTER } }, 1);
    watch(w, &x[4], "(ChildOf, *)", (tecs_term_t[]){
        { .comp = co, .target = TECS_WILDCARD, .access = TECS_READ } }, 1);
    watch(w, &x[5], "Pos, parent's Pos", (tecs_term_t[]){
        { .comp = Pos }, { .comp = Pos, .from_parent = true, .access = TECS_READ } }, 2);
    watch(w, &x[6], "(Owes, *), !(Owes, bob)", (tecs_term_t[]){
        { .comp = owes, .target = TECS_WILDCARD, .access = TECS_READ },
        { .comp = owes, .target = bob, .oper = TECS_NONE, .access = TECS_FILTER } }, 2);
    agree(w, x, 7, "creation");

    CHECK_ERR(tecs_pair_add(w, a, likes, bob), TECS_OK);
    agree(w, x, 7, "(a Likes bob)");
    CHECK_ERR(tecs_pair_add(w, a, likes, ann), TECS_OK);
    agree(w, x, 7, "(a Likes ann)");
    CHECK_ERR(tecs_pair_remove(w, a, likes, bob), TECS_OK);
    agree(w, x, 7, "a Likes bob no more");
    CHECK_ERR(tecs_pair_add(w, b, likes, bob), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, c, likes, bob), TECS_OK);
    agree(w, x, 7, "b, c Like bob");

    /* An exclusive relation retargets: out of (Owes, bob), in (Owes, *). */
    CHECK_ERR(TECS_PAIR_SET(w, b, owes, bob, int32_t, 5), TECS_OK);
    agree(w, x, 7, "(b Owes bob)");
    int calls = x[6].m.calls;
    CHECK_ERR(tecs_pair_add(w, b, owes, ann), TECS_OK);
    agree(w, x, 7, "b Owes ann instead");
    CHECK_EQ(x[6].m.calls, calls + 1);          /* one ENTER, no LEAVE first */
    CHECK_ERR(tecs_pair_add(w, b, owes, bob), TECS_OK);
    agree(w, x, 7, "b Owes bob again");

    /* Hierarchy: a child comes (a move), moves parent (same level: no
    ** move), drops it, and a subtree changes level. */
    CHECK_ERR(tecs_pair_add(w, c, co, p1), TECS_OK);
    agree(w, x, 7, "c under p1");
    calls = x[4].m.calls;
    CHECK_ERR(tecs_pair_add(w, c, co, p2), TECS_OK);
    agree(w, x, 7, "c under p2");
    CHECK_EQ(x[4].m.calls, calls);              /* (ChildOf, *): no change */
    CHECK_ERR(tecs_pair_add(w, c, co, p1), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, a, co, c), TECS_OK);
    agree(w, x, 7, "a under c");
    CHECK_ERR(tecs_pair_add(w, p1, co, p2), TECS_OK);
    agree(w, x, 7, "p1 under p2: a and c a level down");
    CHECK_ERR(tecs_pair_remove(w, p1, co, p2), TECS_OK);
    agree(w, x, 7, "p1 a root again");

    /* The component a child reads from its parent comes and goes. */
    CHECK_ERR(tecs_remove(w, c, Pos), TECS_OK);
    agree(w, x, 7, "c without Pos: a leaves");
    TECS_SET(w, c, Pos, pos, { 5, 5 });
    agree(w, x, 7, "c with Pos again");
    CHECK_ERR(tecs_remove(w, p1, Pos), TECS_OK);
    agree(w, x, 7, "p1 without Pos");

    /* Queued while deferred, applied in order at the end. */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, b, co, p1), TECS_OK);
    CHECK_ERR(tecs_pair_remove(w, c, likes, bob), TECS_OK);
    TECS_SET(w, p1, Pos, pos, { 6, 6 });
    CHECK_ERR(tecs_pair_add(w, a, likes, bob), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    agree(w, x, 7, "a deferred section");

    /* An ENTER callback adds a pair: queued, its own events after. */
    x[1].m.poke_rel = owes;
    x[1].m.poke_tgt = ann;
    CHECK_ERR(tecs_pair_add(w, p2, likes, a), TECS_OK);
    x[1].m.poke_rel = 0;
    CHECK(tecs_pair_has(w, p2, owes, ann));
    agree(w, x, 7, "a pair added from ENTER");

    /* A target dies: its pairs go (REMOVE cleanup), announced. */
    CHECK_ERR(tecs_destroy(w, bob), TECS_OK);
    agree(w, x, 7, "bob destroyed");
    /* A parent dies with its subtree. */
    CHECK_ERR(tecs_destroy(w, p1), TECS_OK);
    agree(w, x, 7, "p1 destroyed with its subtree");
    CHECK(!tecs_is_alive(w, b) && !tecs_is_alive(w, c) && !tecs_is_alive(w, a));
    tw_free(w);
}

/* Out of memory at every allocation of a cache of pair terms: the call
** fails cleanly or the cache follows every change after it. */
TEST(relation_members_cache_out_of_memory)
{
    for (long k = 1; k < 200; k++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 0);
        tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
            .component = { .name = "Likes" } });
        tecs_entity_t bob = tecs_new(w), e = tecs_new(w), f = tecs_new(w);
        CHECK_ERR(tecs_pair_add(w, f, likes, bob), TECS_OK);
        tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
            .terms = (tecs_term_t[]){ { .comp = likes, .target = bob, .access = TECS_FILTER } },
            .term_count = 1 });
        CHECK(q != NULL);
        a.fail_at = a.calls + k;
        tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
        bool failed = a.failures > 0;
        a.fail_at = 0;
        if (c == NULL) {
            CHECK(failed);
            CHECK_ERR(tecs_last_error(w), TECS_ENOMEM);
            TW_CHECK(w);
            CHECK_ERR(tecs_query_free(q), TECS_OK);
            tw_free(w);
            continue;
        }
        TW_CHECK(w);
        tecs_entity_t got[3];
        CHECK_ERR(tecs_pair_add(w, e, likes, bob), TECS_OK);
        tecs_iter_t it = tecs_iter(w, &(tecs_iter_desc_t){ .cache = c });
        CHECK_EQ(tecs_iter_collect(&it, got, 3), 2);
        CHECK_ERR(tecs_pair_remove(w, f, likes, bob), TECS_OK);
        it = tecs_iter(w, &(tecs_iter_desc_t){ .cache = c });
        CHECK_EQ(tecs_iter_collect(&it, got, 3), 1);
        CHECK(got[0] == e);
        TW_CHECK(w);
        tw_free(w);
        if (!failed)
            break;
    }
}

/* The edges the model's random programs found: a term read from the
** parent or a ChildOf term is absent, not unknown, in an archetype without
** the ChildOf tag (at a birth, at the move of an unparent or a first
** parent); a world reset announces each hierarchy children first. */
TEST(relation_members_edges)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t Pos = TECS_COMPONENT(w, pos);
    tecs_comp_t co = tecs_childof(w);
    tecs_entity_t p = tecs_new(w), c = tecs_new(w), bob = tecs_new(w);
    TECS_SET(w, p, Pos, pos, { 1, 1 });
    TECS_SET(w, c, Pos, pos, { 2, 2 });
    watched x[3];
    memset(x, 0, sizeof x);
    watch(w, &x[0], "Pos, !(ChildOf, *)", (tecs_term_t[]){
        { .comp = Pos }, { .comp = co, .target = TECS_WILDCARD, .oper = TECS_NONE,
                           .access = TECS_FILTER } }, 2);
    watch(w, &x[1], "Pos, !parent's Pos", (tecs_term_t[]){
        { .comp = Pos }, { .comp = Pos, .from_parent = true, .oper = TECS_NONE,
                           .access = TECS_READ } }, 2);
    watch(w, &x[2], "Pos, !(*, p)", (tecs_term_t[]){
        { .comp = Pos }, { .comp = TECS_WILDCARD, .target = p, .oper = TECS_NONE,
                           .access = TECS_FILTER } }, 2);
    agree(w, x, 3, "creation");
    CHECK_EQ(tecs_query_count(x[0].q), 2);
    tecs_entity_t born = tecs_new(w);
    TECS_SET(w, born, Pos, pos, { 3, 3 });
    agree(w, x, 3, "a birth");
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    agree(w, x, 3, "c's first parent");
    CHECK_ERR(tecs_pair_remove(w, c, co, p), TECS_OK);
    agree(w, x, 3, "c unparented");

    /* An optional term read from the parent: no field without a parent. */
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = Pos },
                                  { .comp = Pos, .from_parent = true, .oper = TECS_OPTIONAL,
                                    .access = TECS_READ } },
        .term_count = 2 });
    CHECK(q != NULL);
    CHECK_ERR(tecs_pair_add(w, c, co, p), TECS_OK);
    int with = 0, without = 0;
    tecs_iter_t it = tecs_iter(w, &(tecs_iter_desc_t){ .query = q });
    while (tecs_iter_next(&it)) {
        bool has_parent = tecs_pair_has(w, it.entities[0], co, TECS_WILDCARD);
        CHECK(tecs_field_is_set(&it, 1) == has_parent);
        CHECK((tecs_field(&it, 1) != NULL) == has_parent);
        with += has_parent ? it.count : 0;
        without += has_parent ? 0 : it.count;
    }
    CHECK_EQ(with, 1);
    CHECK_EQ(without, 2);

    /* A reset: every member leaves, a subtree children first. */
    tecs_entity_t g = tecs_new(w);
    TECS_SET(w, g, Pos, pos, { 4, 4 });
    CHECK_ERR(tecs_pair_add(w, g, co, c), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, bob, co, g), TECS_OK);
    agree(w, x, 3, "a deeper tree");
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(x[i].m.bad, 0);
        CHECK_EQ(x[i].m.n, 0);
    }
    agree(w, x, 3, "a reset");
    tw_free(w);
}
