/* Field indexes, where filters and cached result sets, checked against a
** brute-force scan of the same world. */
#include "test.h"

#include <math.h>

typedef struct Stats {
    int32_t a;
    uint16_t b;
    int8_t c;
    float f;
    double d;
    char name[8];
    const char *s;
    int64_t big;
} Stats;

static const char *const strs[] = { "ant", "bee", "cat", "dog", "eel", "fox", "", NULL };

/* ---- a value model for brute force ------------------------------------ */

enum { F_A, F_B, F_C, F_F, F_D, F_NAME, F_S, F_BIG, NFIELDS };

typedef struct fieldinfo {
    tecs_key_type_t type;
    size_t offset;
    size_t size;
    int cls;
} fieldinfo;

static const fieldinfo fields[NFIELDS] = {
    { TECS_KEY_I32, offsetof(Stats, a), 0, TECS_KEYC_INT },
    { TECS_KEY_U16, offsetof(Stats, b), 0, TECS_KEYC_UINT },
    { TECS_KEY_I8, offsetof(Stats, c), 0, TECS_KEYC_INT },
    { TECS_KEY_FLOAT, offsetof(Stats, f), 0, TECS_KEYC_REAL },
    { TECS_KEY_DOUBLE, offsetof(Stats, d), 0, TECS_KEYC_REAL },
    { TECS_KEY_CHARS, offsetof(Stats, name), 8, TECS_KEYC_STR },
    { TECS_KEY_STR, offsetof(Stats, s), 0, TECS_KEYC_STR },
    { TECS_KEY_I64, offsetof(Stats, big), 0, TECS_KEYC_INT },
};

static tecs_key_t field_key(const Stats *v, int field)
{
    switch (field) {
    case F_A: return tecs_key_int(v->a);
    case F_B: return tecs_key_uint(v->b);
    case F_C: return tecs_key_int(v->c);
    case F_F: return tecs_key_real(v->f);
    case F_D: return tecs_key_real(v->d);
    case F_NAME: return tecs_key_str(v->name);
    case F_S: return tecs_key_str(v->s);
    default: return tecs_key_int(v->big);
    }
}

/* -1, 0, 1, or 2 for unordered (NaN). */
static int key_cmp(tecs_key_t a, tecs_key_t b)
{
    switch (a.cls) {
    case TECS_KEYC_INT: return (a.v.i > b.v.i) - (a.v.i < b.v.i);
    case TECS_KEYC_UINT: return (a.v.u > b.v.u) - (a.v.u < b.v.u);
    case TECS_KEYC_REAL:
        if (a.v.d != a.v.d || b.v.d != b.v.d)
            return 2;
        return (a.v.d > b.v.d) - (a.v.d < b.v.d);
    default:
        if (a.v.s == NULL || b.v.s == NULL)
            return (a.v.s != NULL) - (b.v.s != NULL);
        {
            int c = strcmp(a.v.s, b.v.s);
            return (c > 0) - (c < 0);
        }
    }
}

static void random_stats(Stats *v, uint64_t *rng)
{
    memset(v, 0, sizeof *v);
    v->a = (int32_t)(tw_rand(rng) % 50) - 25;
    v->b = (uint16_t)(tw_rand(rng) % 40 * 1000);
    v->c = (int8_t)(tw_rand(rng) % 256);
    int r = (int)(tw_rand(rng) % 40);
    v->f = r == 0 ? NAN : r == 1 ? -0.0f : r == 2 ? INFINITY : (float)(r - 20) * 0.5f;
    v->d = r == 3 ? NAN : (double)(tw_rand(rng) % 30) - 15.0;
    snprintf(v->name, sizeof v->name, "%c%c", 'a' + (int)(tw_rand(rng) % 5),
             'a' + (int)(tw_rand(rng) % 3));
    if (tw_rand(rng) % 10 == 0)
        memcpy(v->name, "fullname", 8); /* no NUL: all 8 bytes are the key */
    v->s = strs[tw_rand(rng) % 8];
    v->big = ((int64_t)(tw_rand(rng) % 7) - 3) * (INT64_MAX / 4) + (int64_t)r;
}

/* ---- a world with Stats, Position, a tag, and every kind of index ------ */

typedef struct fx {
    tecs_world_t *w;
    tecs_comp_t stats, pos, tag;
    tecs_index_t *ord[NFIELDS];
    tecs_index_t *hash[NFIELDS];
    tecs_index_t *grid;
    tecs_query_t *q;            /* Stats, Position optional                */
    tecs_entity_t ents[600];
    int nents;
    uint64_t rng;
} fx;

static void fx_index(fx *t)
{
    for (int i = 0; i < NFIELDS; i++) {
        tecs_index_desc_t d = { .comp = t->stats, .type = fields[i].type,
                                .offset = fields[i].offset, .size = fields[i].size };
        d.kind = TECS_INDEX_ORDERED;
        t->ord[i] = tecs_index_new(t->w, &d);
        CHECK(t->ord[i] != NULL);
        d.kind = TECS_INDEX_HASH;
        t->hash[i] = tecs_index_new(t->w, &d);
        CHECK(t->hash[i] != NULL);
    }
    t->grid = tecs_index_new(t->w, &(tecs_index_desc_t){
        .comp = t->pos, .kind = TECS_INDEX_SPATIAL, .type = TECS_KEY_FLOAT,
        .offset = offsetof(Position, x), .offset_y = offsetof(Position, y), .cell_size = 4 });
    CHECK(t->grid != NULL);
}

static void random_pos(Position *p, uint64_t *rng)
{
    p->x = (float)(tw_rand(rng) % 2000) / 20.0f - 50.0f;
    p->y = (float)(tw_rand(rng) % 2000) / 20.0f - 50.0f;
    if (tw_rand(rng) % 50 == 0)
        p->x = NAN;
}

static void fx_populate(fx *t, int n)
{
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = tecs_new(t->w);
        Stats v;
        random_stats(&v, &t->rng);
        if (i % 5 != 4)
            CHECK_ERR(tecs_set(t->w, e, t->stats, &v), TECS_OK);
        if (i % 3 == 0) {
            Position p;
            random_pos(&p, &t->rng);
            CHECK_ERR(tecs_set(t->w, e, t->pos, &p), TECS_OK);
        }
        if (i % 7 == 0)
            CHECK_ERR(tecs_add(t->w, e, t->tag), TECS_OK);
        t->ents[t->nents++] = e;
    }
}

static void fx_init(fx *t, bool index_first)
{
    memset(t, 0, sizeof *t);
    t->rng = 0x9e3779b97f4a7c15ull;
    t->w = tw_new_ex(NULL, 64);
    CHECK(t->w != NULL);
    t->stats = TECS_COMPONENT(t->w, Stats);
    t->pos = TECS_COMPONENT(t->w, Position);
    t->tag = tecs_component_new(t->w, &(tecs_component_desc_t){ .name = "Tag" });
    if (index_first)
        fx_index(t);
    fx_populate(t, 400);
    if (!index_first)
        fx_index(t);
    t->q = TECS_QUERY(t->w, {.comp = t->stats}, {.comp = t->pos, .oper = TECS_OPTIONAL});
    CHECK(t->q != NULL);
    TW_CHECK(t->w);
}

/* ---- brute-force evaluation of a filter description -------------------- */

typedef struct cond {
    int op;                     /* 0..5 tecs_cmp_t, 6 between, 7 in, 8 radius, 9 box */
    int field;
    tecs_key_t k[4];
    int nk;
    float g[4];
} cond;

static bool cond_holds(const fx *t, const cond *c, tecs_entity_t e)
{
    if (c->op >= 8) {
        const Position *p = tecs_has(t->w, e, t->pos) ? TECS_GET(t->w, e, t->pos, Position) : 0;
        if (p == NULL)
            return false;
        if (c->op == 8) {
            double dx = (double)p->x - c->g[0], dy = (double)p->y - c->g[1];
            return dx * dx + dy * dy <= (double)c->g[2] * c->g[2];
        }
        return p->x >= c->g[0] && p->x <= c->g[2] && p->y >= c->g[1] && p->y <= c->g[3];
    }
    if (!tecs_has(t->w, e, t->stats))
        return false;
    Stats v = *TECS_GET(t->w, e, t->stats, Stats);
    char name[9] = { 0 };
    memcpy(name, v.name, 8);
    memcpy(v.name, name, sizeof v.name);
    tecs_key_t fk = field_key(&v, c->field);
    if (c->field == F_NAME)
        fk.v.s = name;
    int r = key_cmp(fk, c->k[0]);
    switch (c->op) {
    case TECS_EQ: return r == 0;
    case TECS_NE: return r != 0;
    case TECS_LT: return r == -1;
    case TECS_LE: return r == -1 || r == 0;
    case TECS_GT: return r == 1;
    case TECS_GE: return r == 1 || r == 0;
    case 6: return (r == 1 || r == 0) && (key_cmp(fk, c->k[1]) <= 0);
    default:
        for (int i = 0; i < c->nk; i++)
            if (key_cmp(fk, c->k[i]) == 0)
                return true;
        return false;
    }
}

static tecs_cond_t cond_build(fx *t, tecs_filter_t *f, const cond *c, bool hashed)
{
    tecs_index_t *x = hashed ? t->hash[c->field] : t->ord[c->field];
    switch (c->op) {
    case 6: return tecs_filter_between(f, x, c->k[0], c->k[1]);
    case 7: return tecs_filter_in(f, x, c->nk, c->k);
    case 8: return tecs_filter_radius(f, t->grid, c->g[0], c->g[1], c->g[2]);
    case 9: return tecs_filter_box(f, t->grid, c->g[0], c->g[1], c->g[2], c->g[3]);
    default: return tecs_filter_cmp(f, x, (tecs_cmp_t)c->op, c->k[0]);
    }
}

/* A key from the field's domain: an existing value or a random one. */
static tecs_key_t random_key(fx *t, int field)
{
    static char pool[64][9];
    static int next;
    Stats v;
    random_stats(&v, &t->rng);
    char *name = pool[next++ % 64];
    memcpy(name, v.name, 8);
    name[8] = 0;
    tecs_key_t k = field_key(&v, field);
    if (field == F_NAME)
        k.v.s = name;
    if (k.cls == TECS_KEYC_REAL && k.v.d != k.v.d)
        k.v.d = 1.5;
    return k;
}

static void random_cond(fx *t, cond *c, bool hashed)
{
    memset(c, 0, sizeof *c);
    c->field = (int)(tw_rand(&t->rng) % NFIELDS);
    int r = (int)(tw_rand(&t->rng) % 12);
    c->op = hashed ? (r % 2 ? TECS_EQ : 7) : r < 8 ? r : r < 10 ? 7 : r == 10 ? 8 : 9;
    c->nk = c->op == 7 ? (int)(tw_rand(&t->rng) % 4) : c->op == 6 ? 2 : 1;
    for (int i = 0; i < c->nk; i++)
        c->k[i] = random_key(t, c->field);
    for (int i = 0; i < 4; i++)
        c->g[i] = (float)(tw_rand(&t->rng) % 100) - 50.0f;
    if (c->op == 8)
        c->g[2] = (float)(tw_rand(&t->rng) % 30);
}

/* Expected: the query's order, filtered by pred. */
typedef bool (*pred_fn)(const fx *t, const void *ctx, tecs_entity_t e);

static int expected(fx *t, pred_fn pred, const void *ctx, tecs_entity_t *out)
{
    tecs_entity_t all[600];
    int n = tecs_query_collect(t->q, all, 600), m = 0;
    for (int i = 0; i < n; i++)
        if (pred(t, ctx, all[i]))
            out[m++] = all[i];
    return m;
}

static void same_ids(const tecs_entity_t *a, int na, const tecs_entity_t *b, int nb)
{
    CHECK_EQ(na, nb);
    for (int i = 0; i < na && i < nb; i++)
        CHECK_EQ(a[i], b[i]);
}

static bool pred_one(const fx *t, const void *ctx, tecs_entity_t e)
{
    return cond_holds(t, ctx, e);
}

typedef struct combo {
    cond a, b;
    int how;                    /* 0 and, 1 or, 2 not a, 3 a and not b */
} combo;

static bool pred_combo(const fx *t, const void *ctx, tecs_entity_t e)
{
    const combo *c = ctx;
    bool a = cond_holds(t, &c->a, e), b = cond_holds(t, &c->b, e);
    switch (c->how) {
    case 0: return a && b;
    case 1: return a || b;
    case 2: return !a;
    default: return a && !b;
    }
}

/* Every kind and operator, alone and combined, against brute force. */
static void check_random_filters(fx *t, int rounds)
{
    tecs_entity_t got[600], want[600];
    for (int round = 0; round < rounds; round++) {
        combo c;
        bool hashed = round % 3 == 0;
        random_cond(t, &c.a, hashed);
        random_cond(t, &c.b, !hashed && round % 2);
        c.how = round % 5 == 0 ? (int)(tw_rand(&t->rng) % 4) : -1;
        tecs_filter_t *f = tecs_filter_new(t->w);
        CHECK(f != NULL);
        tecs_cond_t a = cond_build(t, f, &c.a, hashed);
        CHECK(a >= 0);
        if (c.how >= 0) {
            tecs_cond_t b = cond_build(t, f, &c.b, !hashed && round % 2);
            CHECK(b >= 0);
            if (c.how == 0)
                tecs_filter_and(f, a, b);
            else if (c.how == 1)
                tecs_filter_or(f, a, b);
            else if (c.how == 2)
                tecs_filter_not(f, a);
            else
                tecs_filter_and(f, a, tecs_filter_not(f, b));
        }
        CHECK_ERR(tecs_filter_error(f), TECS_OK);
        int n = tecs_query_where_collect(t->q, f, got, 600);
        int m = c.how >= 0 ? expected(t, pred_combo, &c, want) : expected(t, pred_one, &c.a, want);
        if (n != m)
            fprintf(stderr, "  round %d: op %d field %d hashed %d how %d / op %d field %d\n",
                    round, c.a.op, c.a.field, hashed, c.how, c.b.op, c.b.field);
        same_ids(got, n, want, m);
        tecs_filter_free(f);
    }
}

TEST(index_every_operator_matches_brute_force)
{
    fx t;
    fx_init(&t, false);
    check_random_filters(&t, 600);
    tw_free(t.w);
}

TEST(index_created_first_matches_brute_force)
{
    fx t;
    fx_init(&t, true);
    check_random_filters(&t, 200);
    tw_free(t.w);
}

/* ---- maintenance under random changes ---------------------------------- */

static void random_change(fx *t)
{
    tecs_world_t *w = t->w;
    tecs_entity_t e = t->ents[tw_rand(&t->rng) % (uint64_t)t->nents];
    Stats v;
    random_stats(&v, &t->rng);
    Position p;
    random_pos(&p, &t->rng);
    switch (tw_rand(&t->rng) % 9) {
    case 0: case 1: tecs_set(w, e, t->stats, &v); break;
    case 2: tecs_set(w, e, t->pos, &p); break;
    case 3: tecs_remove(w, e, t->stats); break;
    case 4: tecs_remove(w, e, t->pos); break;
    case 5: tecs_add(w, e, t->tag); break;
    case 6:
        if (tecs_is_alive(w, e)) {
            tecs_destroy(w, e);
            t->ents[tw_rand(&t->rng) % (uint64_t)t->nents] = tecs_new(w);
        }
        break;
    case 7: {
        Stats *s = TECS_GET_MUT(w, e, t->stats, Stats);
        if (s) {
            *s = v;
            CHECK_ERR(tecs_modified(w, e, t->stats), TECS_OK);
        }
        break;
    }
    default: {
        /* Writes through a write term, with structural changes queued. */
        tecs_iter_t it = tecs_query_iter(t->q);
        int k = (int)(tw_rand(&t->rng) % 5);
        while (tecs_iter_next(&it)) {
            Stats *s = TECS_FIELD(&it, Stats, 0);
            Position *ps = TECS_FIELD(&it, Position, 1);
            for (int i = 0; i < it.count; i++) {
                if ((i + k) % 4 == 0)
                    s[i].a += 3, s[i].f *= -1, s[i].s = strs[(i + k) % 8];
                if (ps && (i + k) % 3 == 0)
                    ps[i].x += 7;
                if ((i + k) % 17 == 0)
                    tecs_remove(w, it.entities[i], t->stats);
            }
        }
    }
    }
}

TEST(index_stays_true_under_random_changes)
{
    fx t;
    fx_init(&t, false);
    for (int step = 0; step < 400; step++) {
        random_change(&t);
        if (step % 20 == 0) {
            TW_CHECK(t.w);
            check_random_filters(&t, 10);
        }
    }
    TW_CHECK(t.w);
    check_random_filters(&t, 100);
    /* Each maintained index equals one built from scratch now. */
    for (int fi = 0; fi < NFIELDS; fi++) {
        tecs_index_t *fresh = tecs_index_new(t.w, &(tecs_index_desc_t){
            .comp = t.stats, .kind = TECS_INDEX_ORDERED, .type = fields[fi].type,
            .offset = fields[fi].offset, .size = fields[fi].size });
        CHECK_EQ(tecs_index_count(fresh), tecs_index_count(t.ord[fi]));
        CHECK_EQ(tecs_index_count(fresh), tecs_index_count(t.hash[fi]));
        tecs_entity_t a[600], b[600], c[600];
        for (int desc = 0; desc < 2; desc++) {
            tecs_filter_t *f1 = tecs_filter_new(t.w), *f2 = tecs_filter_new(t.w);
            tecs_filter_not(f1, tecs_filter_in(f1, t.ord[fi], 0, NULL));
            tecs_filter_order(f1, t.ord[fi], desc);
            tecs_filter_not(f2, tecs_filter_in(f2, fresh, 0, NULL));
            tecs_filter_order(f2, fresh, desc);
            int na = tecs_query_where_collect(t.q, f1, a, 600);
            int nb = tecs_query_where_collect(t.q, f2, b, 600);
            same_ids(a, na, b, nb);
            tecs_filter_free(f1);
            tecs_filter_free(f2);
        }
        for (int r = 0; r < 20; r++) {
            tecs_key_t k = random_key(&t, fi);
            tecs_filter_t *f1 = tecs_filter_new(t.w), *f2 = tecs_filter_new(t.w);
            tecs_filter_t *f3 = tecs_filter_new(t.w);
            tecs_filter_cmp(f1, t.ord[fi], TECS_EQ, k);
            tecs_filter_cmp(f2, fresh, TECS_EQ, k);
            tecs_filter_cmp(f3, t.hash[fi], TECS_EQ, k);
            int na = tecs_query_where_collect(t.q, f1, a, 600);
            int nb = tecs_query_where_collect(t.q, f2, b, 600);
            int nc = tecs_query_where_collect(t.q, f3, c, 600);
            same_ids(a, na, b, nb);
            same_ids(c, nc, b, nb);
            tecs_filter_free(f1);
            tecs_filter_free(f2);
            tecs_filter_free(f3);
        }
        CHECK_ERR(tecs_index_free(fresh), TECS_OK);
    }
    tw_free(t.w);
}

/* Entities with Health.hp in [0, range) under an ordered and a hash index,
** hp known to the test in want[]: count those with lo <= hp <= hi. */
static int count_between(const int *want, const tecs_entity_t *ids, int n,
                         tecs_world_t *w, int lo, int hi)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        if (tecs_is_alive(w, ids[i]) && want[i] >= lo && want[i] <= hi)
            c++;
    return c;
}

/* Enough keys for an ordered tree of several levels: it grows, is re-keyed
** at random, shrinks to nothing and grows again, checked all along. */
TEST(index_ordered_tree_grows_reorders_and_shrinks)
{
    enum { N = 40000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = hp } }, .term_count = 1 });
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *h = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    static tecs_entity_t ids[N];
    static int want[N];
    uint64_t rng = 77;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            ids[i] = tecs_new(w);
            want[i] = (int)(tw_rand(&rng) % 5000);  /* many ties */
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
        }
        TW_CHECK(w);
        for (int step = 0; step < 3 * N; step++) {
            int i = (int)(tw_rand(&rng) % N);
            want[i] = (int)(tw_rand(&rng) % 5000);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
            if (step % 20000 == 0)
                TW_CHECK(w);
        }
        TW_CHECK(w);
        for (int r = 0; r < 20; r++) {
            int lo = (int)(tw_rand(&rng) % 5000), hi = lo + (int)(tw_rand(&rng) % 300);
            tecs_filter_t *f = tecs_filter_new(w);
            tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
            CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0),
                     count_between(want, ids, N, w, lo, hi));
            tecs_filter_free(f);
            f = tecs_filter_new(w);
            tecs_filter_cmp(f, h, TECS_EQ, tecs_key_int(lo));
            CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0),
                     count_between(want, ids, N, w, lo, lo));
            tecs_filter_free(f);
        }
        /* Shrink: every other entity in a shuffled order, then the rest. */
        for (int i = N - 1; i > 0; i--) {
            int j = (int)(tw_rand(&rng) % (uint64_t)(i + 1));
            tecs_entity_t e = ids[i];
            int v = want[i];
            ids[i] = ids[j], want[i] = want[j];
            ids[j] = e, want[j] = v;
        }
        for (int i = 0; i < N; i++) {
            if (i % 2)
                CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
            else
                CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            if (i % 10000 == 0)
                TW_CHECK(w);
        }
        CHECK_EQ(tecs_index_count(x), 0);
        CHECK_EQ(tecs_index_count(h), 0);
        TW_CHECK(w);
    }
    tw_free(w);
}

/* Order of two (key, slot) numbers. */
static int by_key_then_slot(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

enum { RK_N = 3000 };

/* The filter (ordered by x) hands ids out in the order of want[] then
** slot (brute force), and the tree is sound. */
static void check_key_order(tecs_world_t *w, tecs_query_t *q, tecs_filter_t *f,
                            const tecs_entity_t *ids, const int *want)
{
    static tecs_entity_t got[RK_N];
    static long long sorted[RK_N];
    TW_CHECK(w);
    for (int j = 0; j < RK_N; j++)
        sorted[j] = ((long long)want[j] + 1000000) * 65536 + TECS_ENTITY_INDEX(ids[j]);
    qsort(sorted, RK_N, sizeof *sorted, by_key_then_slot);
    CHECK_EQ(tecs_query_where_collect(q, f, got, RK_N), RK_N);
    for (int j = 0; j < RK_N; j++)
        CHECK_EQ(TECS_ENTITY_INDEX(got[j]), sorted[j] % 65536);
}

/* An index made over existing entities is built at once (several levels
** high); then small re-keys (+-1..3, a neighbour's key, the smallest or
** largest key) keep items in their leaf, move them to a leaf's first or
** last place, or over a leaf's edge. The key order stays the brute-force
** order throughout. */
TEST(index_ordered_small_rekeys_keep_key_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){
        .terms = (tecs_term_t[]){ { .comp = hp } }, .term_count = 1 });
    static tecs_entity_t ids[RK_N];
    static int want[RK_N];
    for (int i = 0; i < RK_N; i++) {
        ids[i] = tecs_new(w);
        want[i] = 4 * (int)((i * 7919) % RK_N);
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    CHECK_EQ(tecs_index_count(x), RK_N);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK_ERR(tecs_filter_order(f, x, false), TECS_OK);
    check_key_order(w, q, f, ids, want);
    uint64_t rng = 4242;
    for (int step = 1; step <= 20000; step++) {
        int i = (int)(tw_rand(&rng) % RK_N), how = (int)(tw_rand(&rng) % 8);
        if (how < 5)
            want[i] += (int)(tw_rand(&rng) % 7) - 3;
        else if (how == 5)
            want[i] = want[(i + 1) % RK_N] + (int)(tw_rand(&rng) % 3) - 1;
        else if (how == 6)
            want[i] = -1 - step;            /* below every key */
        else
            want[i] = 4 * RK_N + step;      /* above every key */
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ want[i] }), TECS_OK);
        if (step % 50 == 0)
            check_key_order(w, q, f, ids, want);
    }
    tecs_filter_free(f);
    tw_free(w);
}

/* Entities of ids[0..n) alive with key in [lo, hi] (brute force), in id
** order; the where of the same range, sorted by id, must equal it. */
static void check_range(tecs_world_t *w, tecs_query_t *q, tecs_index_t *x, tecs_comp_t hp,
                        const tecs_entity_t *ids, int n, int lo, int hi)
{
    static tecs_entity_t want[1000], got[1000];
    int nw = 0;
    for (int i = 0; i < n; i++) {
        const Health *h = tecs_is_alive(w, ids[i]) ? TECS_GET(w, ids[i], hp, Health) : NULL;
        if (h && h->hp >= lo && h->hp <= hi)
            want[nw++] = ids[i];
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
    int ng = tecs_query_where_collect(q, f, got, 1000);
    tecs_filter_free(f);
    CHECK_EQ(ng, nw);
    for (int a = 1; a < ng; a++)            /* insertion sort by id */
        for (int b = a; b > 0 && got[b - 1] > got[b]; b--) {
            tecs_entity_t t = got[b];
            got[b] = got[b - 1];
            got[b - 1] = t;
        }
    for (int j = 0; j < ng && j < nw; j++)
        CHECK_EQ(got[j], want[j]);
}

/* Counts the SET events it sees (ctx: an int). */
static void count_sets(const tecs_event_t *ev)
{
    (*(int *)ev->ctx)++;
}

/* An index asleep after a burst leaves the component's other listeners as
** they were (an observer still sees every set), and freeing it then, or
** using it, puts the component's counts back (the world check verifies
** them); an index a cache depends on never sleeps. */
TEST(index_asleep_after_a_burst_keeps_other_listeners)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    int seen = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_SET, .comp = hp,
                                                    .callback = count_sets, .ctx = &seen }));
    enum { N = 400 };
    tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], hp, Health, { i });
    }
    tecs_index_t *a = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *b = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, b, TECS_LT, tecs_key_int(100));
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
    CHECK(c != NULL);
    seen = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)         /* a burst: every value moves */
            TECS_SET(w, ids[i], hp, Health, { (i * 7 + round) % N });
        TW_CHECK(w);
        int below = 0;
        for (int i = 0; i < N; i++)
            below += (i * 7 + round) % N < 100;
        CHECK_EQ(tecs_cache_count(c), below);   /* b followed at once */
        CHECK_EQ(tecs_index_count(a), N);       /* a rebuilt on use */
        TW_CHECK(w);
    }
    CHECK_EQ(seen, 3 * N);
    for (int i = 0; i < N; i++)
        TECS_SET(w, ids[i], hp, Health, { i });
    CHECK_ERR(tecs_index_free(a), TECS_OK);     /* freed while asleep */
    TW_CHECK(w);
    tecs_cache_free(c);
    tecs_filter_free(f);
    tw_free(w);
}

/* A burst of sets (more than n/16 between two uses) is left to a rebuild
** at the next use: what a where, a count or a lookup sees is the same as
** when every set re-keys at once, through sets, removals and destroys in
** the burst; short runs of sets keep re-keying at once. */
TEST(index_burst_of_sets_is_rebuilt_before_use)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_query_t *q = TECS_QUERY(w, { .comp = hp });
    enum { N = 1000 };
    static tecs_entity_t ids[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        TECS_SET(w, ids[i], hp, Health, { i });
    }
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *u = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    uint64_t rng = 77;
    for (int round = 0; round < 6; round++) {
        int sets = round % 2 ? 20 : 700;    /* under and over the burst limit */
        for (int s = 0; s < sets; s++) {
            int i = (int)(tw_rand(&rng) % N);
            if (!tecs_is_alive(w, ids[i]))
                continue;
            if (s % 97 == 5)
                CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            else if (s % 89 == 7 && tecs_has(w, ids[i], hp))
                CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
            else
                TECS_SET(w, ids[i], hp, Health, { (int)(tw_rand(&rng) % 400) });
        }
        int with = 0;                       /* entities with the component */
        for (int i = 0; i < N; i++)
            with += tecs_is_alive(w, ids[i]) && tecs_has(w, ids[i], hp);
        CHECK_EQ(tecs_index_count(x), with);
        CHECK_EQ(tecs_index_count(u), with);
        TW_CHECK(w);
        check_range(w, q, x, hp, ids, N, 100, 180);
        check_range(w, q, x, hp, ids, N, 0, 399);
        int k = (int)(tw_rand(&rng) % 400), nk = 0;
        for (int i = 0; i < N; i++) {
            const Health *h = tecs_is_alive(w, ids[i]) ? TECS_GET(w, ids[i], hp, Health) : NULL;
            nk += h && h->hp == k;
        }
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, u, TECS_EQ, tecs_key_int(k));
        CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0), nk);
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Each entity's item is found through a map from entity slot to leaf:
** slots freed by destroy and taken again by new entities, the component
** removed and added back, re-keys to the same key and to a neighbour's key,
** leaves split and emptied, with one index kept from the start and one
** built at once over existing entities. The structure check compares the
** map with the leaves after every phase. */
TEST(index_ordered_leaf_map_follows_reused_slots)
{
    enum { LM_N = 3000 };
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *y = NULL;
    static tecs_entity_t ids[LM_N];
    uint64_t rng = 31337;
    for (int i = 0; i < 2; i++) {   /* one item, the root leaf: emptied, refilled */
        ids[0] = tecs_new(w);
        CHECK_ERR(tecs_set(w, ids[0], hp, &(Health){ 7 }), TECS_OK);
        TW_CHECK(w);
        CHECK_ERR(tecs_set(w, ids[0], hp, &(Health){ 8 }), TECS_OK);
        TW_CHECK(w);
        CHECK_ERR(tecs_destroy(w, ids[0]), TECS_OK);
        TW_CHECK(w);
    }
    for (int i = 0; i < LM_N; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
    }
    TW_CHECK(w);
    for (int round = 0; round < 4; round++) {
        if (round == 1)         /* built at once: leaves 3/4 full */
            y = tecs_index_new(w, &(tecs_index_desc_t){
                .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        for (int i = round % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
        for (int i = (round + 1) % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_remove(w, ids[i], hp), TECS_OK);
        TW_CHECK(w);
        for (int i = round % 3; i < LM_N; i += 3) {     /* slots taken again */
            ids[i] = tecs_new(w);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
        }
        for (int i = (round + 1) % 3; i < LM_N; i += 3)
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ (int)(tw_rand(&rng) % 400) }), TECS_OK);
        TW_CHECK(w);
        for (int step = 0; step < 4 * LM_N; step++) {
            int i = (int)(tw_rand(&rng) % LM_N), how = (int)(tw_rand(&rng) % 4);
            const Health *old = tecs_get(w, ids[i], hp);
            int k = how == 0 ? old->hp                                  /* same key */
                  : how == 1 ? ((const Health *)tecs_get(w, ids[(i + 1) % LM_N], hp))->hp
                  : how == 2 ? old->hp + (int)(tw_rand(&rng) % 5) - 2
                             : (int)(tw_rand(&rng) % 400);
            CHECK_ERR(tecs_set(w, ids[i], hp, &(Health){ k }), TECS_OK);
            if (step % 1500 == 0)
                TW_CHECK(w);
        }
        TW_CHECK(w);
        CHECK_EQ(tecs_index_count(x), LM_N);
        if (y)
            CHECK_EQ(tecs_index_count(y), LM_N);
    }
    tw_free(w);
}

/* ---- order ------------------------------------------------------------ */

TEST(index_key_order_ascending_and_descending)
{
    fx t;
    fx_init(&t, false);
    for (int desc = 0; desc < 2; desc++) {
        tecs_filter_t *f = tecs_filter_new(t.w);
        tecs_filter_cmp(f, t.ord[F_A], TECS_GE, tecs_key_int(-10));
        CHECK_ERR(tecs_filter_order(f, t.ord[F_A], desc), TECS_OK);
        tecs_entity_t got[600];
        int n = tecs_query_where_collect(t.q, f, got, 600);
        CHECK(n > 10);
        for (int i = 1; i < n; i++) {
            int a0 = TECS_GET(t.w, got[i - 1], t.stats, Stats)->a;
            int a1 = TECS_GET(t.w, got[i], t.stats, Stats)->a;
            CHECK(desc ? a0 >= a1 : a0 <= a1);
            if (a0 == a1)
                CHECK(desc ? TECS_ENTITY_INDEX(got[i - 1]) > TECS_ENTITY_INDEX(got[i])
                           : TECS_ENTITY_INDEX(got[i - 1]) < TECS_ENTITY_INDEX(got[i]));
        }
        /* Ordered by another index than the one that drives. */
        CHECK_ERR(tecs_filter_order(f, t.ord[F_D], false), TECS_OK);
        n = tecs_query_where_collect(t.q, f, got, 600);
        for (int i = 1; i < n; i++) {
            double d0 = TECS_GET(t.w, got[i - 1], t.stats, Stats)->d;
            double d1 = TECS_GET(t.w, got[i], t.stats, Stats)->d;
            CHECK(d0 <= d1 || d1 != d1);
        }
        CHECK_ERR(tecs_filter_order(f, t.hash[F_A], false), TECS_EINVAL);
        tecs_filter_free(f);
    }
    tw_free(t.w);
}

static bool each_hp(tecs_world_t *w, tecs_entity_t e, void *const *fv, void *ctx)
{
    int *calls = ctx;
    const Position *p = fv[0];
    const Health *h = fv[1];
    CHECK(tecs_is_alive(w, e));
    CHECK_EQ(h->hp, 10 + *calls);
    CHECK_EQ(p->x, h->hp);
    return ++*calls == 5;
}

TEST(index_where_iterator_hands_out_runs_with_fields)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ hp, pos });
    Health h[100];
    Position p[100];
    for (int i = 0; i < 100; i++)
        h[i].hp = i, p[i] = (Position){ (float)i, 0 };
    CHECK_ERR(tecs_new_bulk(w, a, 100, NULL, 2,
                            (tecs_value_t[]){ { hp, h }, { pos, p } }), TECS_OK);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos}, {.comp = hp, .access = TECS_READ});
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_between(f, x, tecs_key_int(10), tecs_key_int(39));
    tecs_iter_t it = tecs_query_where(q, f);
    int steps = 0, total = 0;
    while (tecs_iter_next(&it)) {
        Position *ps = TECS_FIELD(&it, Position, 0);
        Health *hs = TECS_FIELD(&it, Health, 1);
        for (int i = 0; i < it.count; i++) {
            CHECK_EQ(hs[i].hp, 10 + total);
            CHECK_EQ(ps[i].x, 10 + total);
            total++;
        }
        steps++;
    }
    CHECK_EQ(total, 30);
    CHECK_EQ(steps, 1);         /* consecutive rows come as one run */
    /* The per-entity form, stopped early by its callback. */
    int calls = 0;
    CHECK_ERR(tecs_query_where_each(q, f, each_hp, &calls), TECS_OK);
    CHECK_EQ(calls, 5);
    CHECK_ERR(tecs_query_where_each(q, f, NULL, NULL), TECS_EINVAL);
    /* between lo > hi: empty, not a hang. */
    tecs_filter_t *g = tecs_filter_new(w);
    tecs_filter_between(g, x, tecs_key_int(50), tecs_key_int(40));
    CHECK_EQ(tecs_query_where_collect(q, g, NULL, 0), 0);
    tw_free(w);
}

/* ---- unique ----------------------------------------------------------- */

typedef struct NetId { uint32_t id; char tagname[4]; } NetId;

static int32_t net_of(tecs_world_t *w, tecs_comp_t c, tecs_entity_t e)
{
    const NetId *n = tecs_get(w, e, c);
    return n ? (int32_t)n->id : -1;
}

TEST(index_unique_refuses_duplicates_and_leaves_world_unchanged)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32, .unique = true });
    CHECK(x != NULL);
    tecs_entity_t e1 = tecs_new(w), e2 = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {7, "a"}), TECS_OK);
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {8, "b"}), TECS_OK);
    int32_t archs = tecs_world_archetype_count(w);
    /* set on an existing component */
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {7, "c"}), TECS_EEXIST);
    CHECK_EQ(net_of(w, net, e2), 8);
    CHECK_EQ(strcmp(TECS_GET(w, e2, net, NetId)->tagname, "b"), 0);
    /* set that adds */
    tecs_entity_t e3 = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e3, net, NetId, {8, "d"}), TECS_EEXIST);
    CHECK(!tecs_has(w, e3, net));
    /* add without value: the default key 0, then a second one */
    CHECK_ERR(tecs_add(w, e3, net), TECS_OK);
    tecs_entity_t e4 = tecs_new(w);
    CHECK_ERR(tecs_add(w, e4, net), TECS_EEXIST);
    CHECK(!tecs_has(w, e4, net));
    /* births with values */
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &net);
    int32_t alive = tecs_world_entity_count(w);
    NetId batch[3] = { {20, ""}, {21, ""}, {20, ""} };
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_EEXIST);
    batch[2].id = 7;
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), alive);
    batch[2].id = 22;
    CHECK_ERR(tecs_new_bulk(w, a, 3, NULL, 1, (tecs_value_t[]){ { net, batch } }), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), alive + 3);
    /* a delayed birth with a taken key is cancelled when applied */
    tecs_entity_t d = tecs_delayed_new(w, a, 1, (tecs_value_t[]){ { net, &batch[0] } });
    CHECK(d != 0);
    tecs_delayed_apply(w);
    CHECK(!tecs_is_alive(w, d));
    /* a raw write then tecs_modified: undone, reported */
    NetId *p = TECS_GET_MUT(w, e2, net, NetId);
    p->id = 7;
    CHECK_ERR(tecs_modified(w, e2, net), TECS_EEXIST);
    CHECK_EQ(net_of(w, net, e2), 8);
    /* a write through a query iteration */
    tecs_query_t *q = tecs_query_all(w, 1, &net);
    tecs_iter_t it = tecs_query_iter(q);
    while (tecs_iter_next(&it)) {
        NetId *n = TECS_FIELD(&it, NetId, 0);
        for (int i = 0; i < it.count; i++)
            if (it.entities[i] == e2)
                n[i].id = 21;
    }
    CHECK_EQ(net_of(w, net, e2), 8);
    CHECK_EQ(tecs_world_archetype_count(w), archs + 0 * archs);
    /* lookups */
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), e1);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(8)), e2);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(999)), 0);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_int(7)), 0);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    /* moving a key away frees it */
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {70, ""}), TECS_OK);
    CHECK_ERR(TECS_SET(w, e2, net, NetId, {7, ""}), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), e2);
    CHECK_ERR(tecs_destroy(w, e2), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_uint(7)), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* A unique hash index under churn: keys from a small range (so probes
** run into each other and erasures shift cells back), duplicates refused,
** components removed and added, entities destroyed; every key looked up
** against a model after each step. */
TEST(index_unique_table_follows_random_churn)
{
    enum { N = 400, KEYS = 600 };
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_HASH, .type = TECS_KEY_U32, .unique = true });
    static tecs_entity_t ids[N], owner[KEYS];
    static int key_of[N];       /* -1: no NetId */
    uint64_t rng = 99;
    for (int i = 0; i < N; i++)
        ids[i] = tecs_new(w), key_of[i] = -1;
    for (int step = 0; step < 20000; step++) {
        int i = (int)(tw_rand(&rng) % N), k = (int)(tw_rand(&rng) % KEYS);
        int how = (int)(tw_rand(&rng) % 10);
        if (how < 7) {
            bool held = owner[k] != 0 && owner[k] != ids[i];
            CHECK_ERR(TECS_SET(w, ids[i], net, NetId, {(uint32_t)k, "x"}),
                      held ? TECS_EEXIST : TECS_OK);
            if (!held) {
                if (key_of[i] >= 0)
                    owner[key_of[i]] = 0;
                owner[k] = ids[i], key_of[i] = k;
            }
        } else if (how < 9) {
            if (key_of[i] >= 0) {
                CHECK_ERR(tecs_remove(w, ids[i], net), TECS_OK);
                owner[key_of[i]] = 0, key_of[i] = -1;
            }
        } else {
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
            if (key_of[i] >= 0)
                owner[key_of[i]] = 0, key_of[i] = -1;
            ids[i] = tecs_new(w);
        }
        for (int j = 0; j < 8; j++) {
            int q = (int)(tw_rand(&rng) % KEYS);
            CHECK_EQ(tecs_index_lookup(x, tecs_key_uint((uint64_t)q)), owner[q]);
        }
        if (step % 500 == 0)
            TW_CHECK(w);
    }
    int32_t n = 0;
    for (int k = 0; k < KEYS; k++) {
        CHECK_EQ(tecs_index_lookup(x, tecs_key_uint((uint64_t)k)), owner[k]);
        n += owner[k] != 0;
    }
    CHECK_EQ(tecs_index_count(x), n);
    TW_CHECK(w);
    tw_free(w);
}

TEST(index_unique_string_keys_and_creation_over_duplicates)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_entity_t e1 = tecs_new(w), e2 = tecs_new(w);
    TECS_SET(w, e1, net, NetId, {1, "abc"});
    TECS_SET(w, e2, net, NetId, {2, "abc"});
    tecs_index_desc_t d = { .comp = net, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_CHARS,
                            .offset = offsetof(NetId, tagname), .size = 4, .unique = true };
    tecs_filter_free(tecs_filter_new(w)); /* the world's index registry, kept */
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_index_new(w, &d) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(tecs_world_memory(w), mem);
    TECS_SET(w, e2, net, NetId, {2, "abd"});
    tecs_index_t *x = tecs_index_new(w, &d);
    CHECK(x != NULL);
    CHECK_ERR(TECS_SET(w, e1, net, NetId, {1, "abd"}), TECS_EEXIST);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_str("abd")), e2);
    /* a full char[4] with no NUL is a 4-byte key */
    CHECK_ERR(tecs_set(w, e1, net, &(NetId){ 1, { 'w', 'x', 'y', 'z' } }), TECS_OK);
    CHECK_EQ(tecs_index_lookup(x, tecs_key_str("wxyz")), e1);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- bad input -------------------------------------------------------- */

TEST(index_bad_input_is_refused)
{
    tecs_world_t *w = tw_new(), *w2 = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){ .name = "T" });
    tecs_comp_t hp2 = TECS_COMPONENT(w2, Health);
    size_t mem = tecs_world_memory(w);
    CHECK(tecs_index_new(w, NULL) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = 99, .type = TECS_KEY_I32 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_ENOCOMP);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I64 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32,
                                                   .offset = 1 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = tag, .type = TECS_KEY_I8 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = 99 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32,
                                                   .kind = 7 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = pos, .kind = TECS_INDEX_SPATIAL,
                                                   .type = TECS_KEY_FLOAT, .offset_y = 4,
                                                   .cell_size = 0 }) == NULL);
    CHECK(tecs_index_new(w, &(tecs_index_desc_t){ .comp = pos, .kind = TECS_INDEX_SPATIAL,
                                                   .type = TECS_KEY_FLOAT, .offset_y = 6,
                                                   .cell_size = 1 }) == NULL);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_world_memory(w), mem);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){ .comp = hp, .type = TECS_KEY_I32 });
    tecs_index_t *o = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *x2 = tecs_index_new(w2, &(tecs_index_desc_t){ .comp = hp2, .type = TECS_KEY_I32 });
    CHECK(x && o && x2);
    tecs_filter_t *f = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(1)), -1);       /* hash: no < */
    CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
    tecs_filter_t *g = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(g, x2, TECS_EQ, tecs_key_int(1)), -1);      /* other world */
    CHECK_EQ(tecs_filter_error(g), TECS_EWORLD);
    tecs_filter_t *h = tecs_filter_new(w);
    CHECK_EQ(tecs_filter_cmp(h, o, TECS_EQ, tecs_key_real(1)), -1);      /* wrong class */
    CHECK_EQ(tecs_filter_and(h, 0, 5), -1);
    CHECK_EQ(tecs_filter_radius(h, o, 0, 0, 1), -1);                 /* not spatial */
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    CHECK_EQ(tecs_query_where_collect(q, h, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EINVAL);
    tecs_filter_t *k = tecs_filter_new(w);
    tecs_filter_cmp(k, o, TECS_EQ, tecs_key_int(3));
    CHECK_ERR(tecs_index_free(o), TECS_OK);
    CHECK_EQ(tecs_query_where_collect(q, k, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_ENOENT);
    tecs_filter_t *m = tecs_filter_new(w2);
    tecs_query_t *q2 = tecs_query_all(w2, 1, &hp2);
    (void)q2;
    CHECK_EQ(tecs_query_where_collect(q, m, NULL, 0), -1);
    CHECK_EQ(tecs_last_error(w), TECS_EWORLD);
    CHECK(tecs_index_free(NULL) == TECS_OK);
    tecs_filter_free(NULL);
    tecs_cache_free(NULL);
    tw_free(w);
    tw_free(w2);
}

TEST(index_nan_keys_follow_ieee_comparisons)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT });
    tecs_entity_t en = tecs_new(w), e1 = tecs_new(w), ez = tecs_new(w);
    TECS_SET(w, en, pos, Position, {NAN, 0});
    TECS_SET(w, e1, pos, Position, {1, 0});
    TECS_SET(w, ez, pos, Position, {-0.0f, 0});
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_entity_t out[4];
    static const struct { tecs_cmp_t op; int n; } cases[] = {
        { TECS_EQ, 1 }, { TECS_NE, 2 }, { TECS_LT, 1 }, { TECS_LE, 2 },
        { TECS_GT, 0 }, { TECS_GE, 1 } };
    for (int i = 0; i < 6; i++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, cases[i].op, tecs_key_real(1.0));
        CHECK_EQ(tecs_query_where_collect(q, f, out, 4), cases[i].n);
        tecs_filter_free(f);
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GE, tecs_key_real(-INFINITY));
    CHECK_EQ(tecs_query_where_collect(q, f, out, 4), 2);      /* not the NaN */
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(0.0));              /* -0 == +0 */
    CHECK_EQ(tecs_query_where_collect(q, f, out, 4), 1);
    CHECK_EQ(out[0], ez);
    tecs_filter_not(f, tecs_filter_cmp(f, x, TECS_LE, tecs_key_real(INFINITY)));
    CHECK_EQ(tecs_query_where_collect(q, f, out, 4), 1);
    CHECK_EQ(out[0], en);
    CHECK_EQ(tecs_filter_cmp(f, x, TECS_EQ, tecs_key_real(NAN)), -1);
    CHECK_EQ(tecs_filter_error(f), TECS_EINVAL);
    tw_free(w);
}

/* ---- out of memory ---------------------------------------------------- */

TEST(index_out_of_memory_on_creation_and_maintenance)
{
    for (long k = 1; k < 400; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        tecs_comp_t st = TECS_COMPONENT(w, Stats);
        uint64_t rng = 42;
        tecs_entity_t ents[80];
        for (int i = 0; i < 80; i++) {
            Stats v;
            random_stats(&v, &rng);
            ents[i] = tecs_new(w);
            tecs_set(w, ents[i], st, &v);
        }
        tecs_index_t *y = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = st, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I64, .unique = true,
            .offset = offsetof(Stats, big) });
        CHECK(y == NULL);       /* random bigs repeat */
        al.fail_at = al.calls + k;
        tecs_index_desc_t d = { .comp = st, .kind = (tecs_index_kind_t)(k % 2),
                                .type = TECS_KEY_STR, .offset = offsetof(Stats, s) };
        size_t mem = tecs_world_memory(w);
        tecs_index_t *x = tecs_index_new(w, &d);
        if (x == NULL) {
            CHECK_EQ(tecs_last_error(w), TECS_ENOMEM);
            CHECK_EQ(tecs_world_memory(w), mem);
            tw_free(w);
            continue;
        }
        al.fail_at = 0;
        for (int i = 0; i < 80; i++)
            if (tecs_has(w, ents[i], st))
                TECS_GET_MUT(w, ents[i], st, Stats)->a = 1000 + i;
        y = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = st, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32, .unique = true });
        CHECK(y != NULL);
        al.fail_at = al.calls + k % 50 + 1;
        al.fail_after = false;
        /* Maintenance with failures: a failed call changes nothing; the
        ** index is never seen stale. */
        for (int i = 0; i < 200; i++) {
            tecs_entity_t e = ents[tw_rand(&rng) % 80];
            Stats v;
            random_stats(&v, &rng);
            v.a = (int32_t)(tw_rand(&rng) % 1000);
            Stats before = tecs_has(w, e, st) ? *TECS_GET(w, e, st, Stats) : v;
            tecs_err_t err = tecs_set(w, e, st, &v);
            if (err != TECS_OK && tecs_has(w, e, st))
                CHECK_EQ(TECS_GET(w, e, st, Stats)->a, before.a);
            if (i % 7 == 0)
                tecs_remove(w, e, st);
        }
        al.fail_at = 0;
        TW_CHECK(w);
        tecs_query_t *q = tecs_query_all(w, 1, &st);
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_EQ, tecs_key_str("cat"));
        int n = tecs_query_where_collect(q, f, NULL, 0), m = 0;
        tecs_entity_t all[80];
        int na = tecs_query_collect(q, all, 80);
        for (int i = 0; i < na; i++) {
            const char *s = TECS_GET(w, all[i], st, Stats)->s;
            m += s && strcmp(s, "cat") == 0;
        }
        CHECK_EQ(n, m);
        (void)y;
        tw_free(w);
    }
}

/* ---- cached result sets ------------------------------------------------ */

typedef struct members {
    tecs_entity_t in[1024];
    int n;
    int enters, leaves;
} members;

static void on_enter(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    members *m = ctx;
    (void)w;
    for (int i = 0; i < m->n; i++)
        CHECK(m->in[i] != e);
    m->in[m->n++] = e;
    m->enters++;
}

static void on_leave(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    members *m = ctx;
    (void)w;
    for (int i = 0; i < m->n; i++) {
        if (m->in[i] == e) {
            m->in[i] = m->in[--m->n];
            m->leaves++;
            return;
        }
    }
    CHECK(!"leave of a non-member");
}

typedef struct order_ctx {
    members *m;
    tecs_comp_t stats;
} order_ctx;

static int by_d_then_id(tecs_world_t *w, tecs_entity_t a, tecs_entity_t b, void *ctx)
{
    const order_ctx *o = ctx;
    double da = TECS_GET(w, a, o->stats, Stats)->d, db = TECS_GET(w, b, o->stats, Stats)->d;
    if (da != db && da == da && db == db)
        return da < db ? -1 : 1;
    if ((da != da) != (db != db))
        return da != da ? 1 : -1;
    return (a > b) - (a < b);
}

static void ordered_enter(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    on_enter(w, e, ((order_ctx *)ctx)->m);
}

static void ordered_leave(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    on_leave(w, e, ((order_ctx *)ctx)->m);
}

static int cmp_ids(const void *a, const void *b)
{
    tecs_entity_t x = *(const tecs_entity_t *)a, y = *(const tecs_entity_t *)b;
    return (x > y) - (x < y);
}

static void check_cache(fx *t, tecs_cache_t *c, const combo *cb, const members *m)
{
    tecs_entity_t got[600], want[600], it_ids[600], order[600];
    int n = tecs_cache_collect(c, got, 600);
    memcpy(order, got, sizeof order);
    int k = expected(t, pred_combo, cb, want);
    CHECK_EQ(n, k);
    CHECK_EQ(n, m->n);
    qsort(got, (size_t)n, sizeof *got, cmp_ids);
    qsort(want, (size_t)k, sizeof *want, cmp_ids);
    same_ids(got, n, want, k);
    tecs_entity_t mine[1024];
    memcpy(mine, m->in, (size_t)m->n * sizeof *mine);
    qsort(mine, (size_t)m->n, sizeof *mine, cmp_ids);
    same_ids(got, n, mine, m->n);
    /* Iteration hands out the same set, with fields. */
    int ni = 0;
    tecs_iter_t it = tecs_cache_iter(c);
    while (tecs_iter_next(&it)) {
        CHECK(TECS_FIELD(&it, Stats, 0) != NULL);
        for (int i = 0; i < it.count; i++)
            it_ids[ni++] = it.entities[i];
    }
    same_ids(it_ids, ni, order, n);
}

TEST(index_cache_follows_random_changes_with_events)
{
    fx t;
    fx_init(&t, false);
    combo cb = { .how = 3 };
    cb.a = (cond){ .op = TECS_LE, .field = F_A, .k = { tecs_key_int(5) } };
    cb.b = (cond){ .op = 7, .field = F_S, .k = { tecs_key_str("cat"), tecs_key_str(NULL) },
                   .nk = 2 };
    tecs_filter_t *f = tecs_filter_new(t.w);
    tecs_cond_t a = cond_build(&t, f, &cb.a, false);
    tecs_filter_and(f, a, tecs_filter_not(f, cond_build(&t, f, &cb.b, true)));
    members m = { .n = 0 }, mo = { .n = 0 };
    tecs_cache_t *c = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f, .on_enter = on_enter, .on_leave = on_leave, .ctx = &m });
    CHECK(c != NULL);
    order_ctx oc = { &mo, t.stats };
    tecs_cache_t *co = tecs_cache_new(t.w, &(tecs_cache_desc_t){
        .query = t.q, .filter = f, .order = by_d_then_id, .on_enter = ordered_enter,
        .on_leave = ordered_leave, .ctx = &oc });
    CHECK(co != NULL);
    tecs_filter_free(f);        /* the caches keep their own copies */
    CHECK_ERR(tecs_index_free(t.ord[F_A]), TECS_EBUSY);
    /* Members present at creation came without events. */
    tecs_entity_t init[600];
    m.n = tecs_cache_collect(c, init, 600);
    memcpy(m.in, init, (size_t)m.n * sizeof *init);
    mo.n = tecs_cache_collect(co, init, 600);
    memcpy(mo.in, init, (size_t)mo.n * sizeof *init);
    CHECK(m.n > 20);
    for (int step = 0; step < 500; step++) {
        random_change(&t);
        if (step % 10 == 0) {
            check_cache(&t, c, &cb, &m);
            check_cache(&t, co, &cb, &mo);
            TW_CHECK(t.w);
        }
    }
    CHECK(m.enters > 10 && m.leaves > 10);
    CHECK_EQ(tecs_cache_count(c), m.n);
    tecs_cache_free(c);
    tecs_cache_free(co);
    CHECK_ERR(tecs_index_free(t.ord[F_A]), TECS_OK);
    tw_free(t.w);
}

TEST(index_cache_without_filter_tracks_query_membership)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position), vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q = tecs_query_all(w, 2, (tecs_comp_t[]){ pos, vel });
    members m = { .n = 0 };
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){
        .query = q, .on_enter = on_enter, .on_leave = on_leave, .ctx = &m });
    tecs_entity_t e = tecs_new(w);
    tecs_add(w, e, pos);
    CHECK_EQ(m.enters, 0);
    tecs_add(w, e, vel);
    CHECK_EQ(m.enters, 1);
    CHECK_EQ(tecs_cache_count(c), 1);
    tecs_remove(w, e, pos);
    CHECK_EQ(m.leaves, 1);
    tecs_add(w, e, pos);
    tecs_destroy(w, e);
    CHECK_EQ(m.enters, 2);
    CHECK_EQ(m.leaves, 2);
    CHECK_EQ(tecs_cache_count(c), 0);
    tw_free(w);
}

/* ---- spatial ---------------------------------------------------------- */

TEST(index_spatial_radius_and_box_with_huge_and_bad_regions)
{
    fx t;
    fx_init(&t, false);
    tecs_entity_t got[600];
    tecs_filter_t *f = tecs_filter_new(t.w);
    tecs_filter_radius(f, t.grid, 0, 0, 1e30f);                /* every finite point */
    int n = tecs_query_where_collect(t.q, f, got, 600), m = 0;
    for (int i = 0; i < t.nents; i++) {
        const Position *p = tecs_has(t.w, t.ents[i], t.pos) && tecs_has(t.w, t.ents[i], t.stats)
                                ? TECS_GET(t.w, t.ents[i], t.pos, Position) : NULL;
        m += p && p->x == p->x;
    }
    CHECK_EQ(n, m);
    tecs_filter_radius(f, t.grid, 0, 0, -1);
    CHECK_EQ(tecs_query_where_collect(t.q, f, got, 600), 0);
    tecs_filter_radius(f, t.grid, NAN, 0, 5);
    CHECK_EQ(tecs_query_where_collect(t.q, f, got, 600), 0);
    tecs_filter_box(f, t.grid, 10, 10, -10, -10);
    CHECK_EQ(tecs_query_where_collect(t.q, f, got, 600), 0);
    tw_free(t.w);
}

/* Results of every size, on both sides of the small-sort cut-off, come in
** the query's order (archetype, chunk, row), whatever order the index
** walks them in. */
TEST(index_where_results_of_every_size_in_query_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    uint64_t rng = 7;
    for (int i = 0; i < 300; i++) {         /* hp a permutation-ish of 0..299 */
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {(int)((i * 7919) % 300)});
        if (tw_rand(&rng) % 3 == 0)
            TECS_SET(w, e, pos, Position, {0, 0});
        if (tw_rand(&rng) % 3 == 0)
            TECS_SET(w, e, vel, Velocity, {0, 0});
    }
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp, .access = TECS_READ});
    tecs_entity_t all[300], got[300];
    CHECK_EQ(tecs_query_collect(q, all, 300), 300);
    for (int lim = 0; lim <= 120; lim++) {
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(lim));
        CHECK_EQ(tecs_query_where_collect(q, f, got, 300), lim);
        for (int i = 0, m = 0; i < 300; i++)
            if (TECS_GET(w, all[i], hp, Health)->hp < lim)
                CHECK_EQ(got[m++], all[i]);
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Scattered results, in chunks of one bulk group, of many small groups and
** of several archetypes (Velocity optional), in query order and in key
** order both ways, and through a cache: every step's fields hold its
** entities' values, and the results are the brute-force ones in the promised
** order (order: 0 the query's, 1 / -1 ascending / descending keys, 2 any). */
static void check_scattered(tecs_world_t *w, tecs_query_t *q, tecs_iter_t it, int lo, int hi,
                            int order, const tecs_entity_t *all, int nall)
{
    const tecs_term_t *terms;
    tecs_query_terms(q, &terms);
    tecs_comp_t pos = terms[0].comp, hp = terms[1].comp, vel = terms[2].comp;
    int n = 0, want = 0, m = 0, last = order > 0 ? INT32_MIN : INT32_MAX;
    for (int i = 0; i < nall; i++) {
        int k = TECS_GET(w, all[i], hp, Health)->hp;
        want += k >= lo && k <= hi;
    }
    while (tecs_iter_next(&it)) {
        const Position *ps = tecs_field(&it, 0);
        const Health *hs = tecs_field(&it, 1);
        const Velocity *vs = tecs_field(&it, 2);
        CHECK(it.count >= 1);
        CHECK_EQ(vs != NULL, tecs_has(w, it.entities[0], vel));
        for (int i = 0; i < it.count; i++, n++) {
            tecs_entity_t e = it.entities[i];
            CHECK_EQ(hs[i].hp, TECS_GET(w, e, hp, Health)->hp);
            CHECK_EQ(ps[i].x, TECS_GET(w, e, pos, Position)->x);
            if (vs)
                CHECK_EQ(vs[i].y, TECS_GET(w, e, vel, Velocity)->y);
            CHECK(hs[i].hp >= lo && hs[i].hp <= hi);
            if (order == 0) {           /* query order: the next match of all */
                while (m < nall && all[m] != e)
                    m++;
                CHECK(m < nall);
            } else if (order != 2) {
                CHECK(order > 0 ? hs[i].hp >= last : hs[i].hp <= last);
                last = hs[i].hp;
            }
        }
    }
    CHECK_EQ(n, want);
}

TEST(index_where_fields_follow_scattered_rows_in_every_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    enum { NB = 400, NS = 300, N = 2 * NB + NS };
    static Health h[NB];
    static Position p[NB];
    static Velocity v[NB];
    int key = 0;
    tecs_archetype_t *a = tecs_archetype_get(w, 2, (tecs_comp_t[]){ hp, pos });
    tecs_archetype_t *b = tecs_archetype_get(w, 3, (tecs_comp_t[]){ hp, pos, vel });
    for (int i = 0; i < NB; i++, key++) {
        h[i].hp = (key * 7919) % N;
        p[i] = (Position){ (float)h[i].hp, (float)i };
        v[i] = (Velocity){ 0, (float)-h[i].hp };
    }
    CHECK_ERR(tecs_new_bulk(w, a, NB, NULL, 2, (tecs_value_t[]){ { hp, h }, { pos, p } }),
              TECS_OK);
    uint64_t rng = 99;
    for (int i = 0; i < NS; i++, key++) {   /* one by one: many small groups */
        tecs_entity_t e = tecs_new(w);
        int k = (key * 7919) % N;
        TECS_SET(w, e, hp, Health, {k});
        TECS_SET(w, e, pos, Position, {(float)k, (float)i});
        if (tw_rand(&rng) % 2)
            TECS_SET(w, e, vel, Velocity, {0, (float)-k});
    }
    for (int i = 0; i < NB; i++, key++) {
        h[i].hp = (key * 7919) % N;
        p[i] = (Position){ (float)h[i].hp, (float)i };
        v[i] = (Velocity){ 0, (float)-h[i].hp };
    }
    CHECK_ERR(tecs_new_bulk(w, b, NB, NULL, 3,
                            (tecs_value_t[]){ { hp, h }, { pos, p }, { vel, v } }), TECS_OK);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_query_t *q = TECS_QUERY(w, {.comp = pos, .access = TECS_READ},
                                 {.comp = hp, .access = TECS_READ},
                                 {.comp = vel, .oper = TECS_OPTIONAL, .access = TECS_READ});
    static tecs_entity_t all[N];
    CHECK_EQ(tecs_query_collect(q, all, N), N);
    for (int round = 0; round < 60; round++) {
        int lo = (int)(tw_rand(&rng) % N), hi = lo + (int)(tw_rand(&rng) % (N / 3));
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_between(f, x, tecs_key_int(lo), tecs_key_int(hi));
        int order = round % 3 - 1;          /* descending, query, ascending */
        if (order)
            CHECK_ERR(tecs_filter_order(f, x, order < 0), TECS_OK);
        check_scattered(w, q, tecs_query_where(q, f), lo, hi, order, all, N);
        if (round % 10 == 0) {
            tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
            check_scattered(w, q, tecs_cache_iter(c), lo, hi, 2, all, N);
            tecs_cache_free(c);
        }
        tecs_filter_free(f);
    }
    tw_free(w);
}

/* Keys rising, falling or shuffled with the rows: the walk of the index
** meets the rows in order, reversed or scattered; results come in query
** order all the same. */
TEST(index_where_rows_met_in_any_order_come_in_query_order)
{
    tecs_world_t *w = tw_new_ex(NULL, 64);
    tecs_comp_t hp = TECS_COMPONENT(w, Health);
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &hp);
    enum { N = 1000 };
    static Health h[N];
    static tecs_entity_t ids[N], got[N];
    tecs_query_t *q = TECS_QUERY(w, {.comp = hp, .access = TECS_READ});
    for (int how = 0; how < 3; how++) {
        for (int i = 0; i < N; i++)
            h[i].hp = how == 0 ? i : how == 1 ? N - 1 - i : (i * 7919) % N;
        CHECK_ERR(tecs_new_bulk(w, a, N, ids, 1, (tecs_value_t[]){ { hp, h } }), TECS_OK);
        tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_between(f, x, tecs_key_int(100), tecs_key_int(899));
        CHECK_EQ(tecs_query_where_collect(q, f, got, N), 800);
        for (int i = 0, m = 0; i < N; i++)
            if (h[i].hp >= 100 && h[i].hp <= 899)
                CHECK_EQ(got[m++], ids[i]);
        tecs_filter_free(f);
        tecs_index_free(x);
        for (int i = 0; i < N; i++)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    }
    tw_free(w);
}

/* ---- iteration, deferral, initializers --------------------------------- */

static void init_dup(tecs_init_t *init, void *ctx)
{
    NetId *n = tecs_init_construct(init, *(tecs_comp_t *)ctx);
    n->id = 5;
}

TEST(index_where_defers_changes_and_refuses_nested_use_of_one_filter)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t hp = TECS_COMPONENT(w, Health), pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = hp, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32 });
    for (int i = 0; i < 50; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, hp, Health, {i % 5});
    }
    tecs_query_t *q = tecs_query_all(w, 1, &hp);
    tecs_filter_t *f = tecs_filter_new(w), *g = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_EQ, tecs_key_int(3));
    tecs_filter_cmp(g, x, TECS_EQ, tecs_key_int(4));
    CHECK_EQ(tecs_query_where_collect(q, NULL, NULL, 0), -1);
    tecs_iter_t it = tecs_query_where(q, f);
    int seen = 0;
    while (tecs_iter_next(&it)) {
        tecs_iter_t inner = tecs_query_where(q, f);     /* same filter: busy */
        CHECK(!tecs_iter_next(&inner));
        CHECK_EQ(tecs_last_error(w), TECS_EBUSY);
        CHECK_EQ(tecs_query_where_collect(q, g, NULL, 0), 10);
        Health *h = TECS_FIELD(&it, Health, 0);
        for (int i = 0; i < it.count; i++, seen++) {
            CHECK_EQ(h[i].hp, 3);
            tecs_destroy(w, it.entities[i]);            /* queued */
            tecs_set(w, tecs_new(w), pos, &(Position){ 1, 1 });
        }
    }
    CHECK_EQ(seen, 10);
    CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0), 0);
    CHECK_EQ(tecs_index_count(x), 40);
    /* An empty filter matches the whole query; tecs_filter_test. */
    tecs_filter_t *all = tecs_filter_new(w);
    CHECK_EQ(tecs_query_where_collect(q, all, NULL, 0), 40);
    tecs_entity_t some[40];
    tecs_query_where_collect(q, g, some, 40);
    CHECK(tecs_filter_test(g, some[0]));
    CHECK(!tecs_filter_test(f, some[0]));
    CHECK(!tecs_filter_test(g, 0));
    /* A unique key built by an initializer: the birth is refused. */
    tecs_comp_t net = TECS_COMPONENT(w, NetId);
    tecs_index_new(w, &(tecs_index_desc_t){
        .comp = net, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_U32, .unique = true });
    tecs_archetype_t *a = tecs_archetype_get(w, 1, &net);
    int32_t alive = tecs_world_entity_count(w);
    CHECK(tecs_new_with(w, a, init_dup, &net) != 0);
    CHECK(tecs_new_with(w, a, init_dup, &net) == 0);
    CHECK_EQ(tecs_last_error(w), TECS_EEXIST);
    CHECK_EQ(tecs_world_entity_count(w), alive + 1);
    CHECK_EQ(tecs_archetype_entity_count(a), 1);
    TW_CHECK(w);
    tw_free(w);
}

TEST(index_cache_survives_out_of_memory_in_events)
{
    for (long k = 1; k < 60; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *w = tw_new_ex(&al, 16);
        tecs_comp_t hp = TECS_COMPONENT(w, Health);
        tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
            .comp = hp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
        tecs_query_t *q = tecs_query_all(w, 1, &hp);
        tecs_filter_t *f = tecs_filter_new(w);
        tecs_filter_cmp(f, x, TECS_LT, tecs_key_int(50));
        tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q, .filter = f });
        CHECK(c != NULL);
        al.fail_at = al.calls + k;
        al.fail_after = k % 2;
        uint64_t rng = (uint64_t)k;
        tecs_entity_t ents[100];
        int n = 0;
        for (int i = 0; i < 300; i++) {
            if (n < 100 && tw_rand(&rng) % 3 == 0) {
                tecs_entity_t e = tecs_new(w);
                if (e)
                    ents[n++] = e;
            } else if (n > 0) {
                tecs_set(w, ents[tw_rand(&rng) % (uint64_t)n], hp,
                         &(Health){ (int)(tw_rand(&rng) % 100) });
            }
        }
        al.fail_at = 0;
        int32_t got = tecs_cache_count(c), want = 0;
        for (int i = 0; i < n; i++) {
            const Health *h = tecs_has(w, ents[i], hp) ? TECS_GET(w, ents[i], hp, Health) : 0;
            want += h && h->hp < 50;
        }
        CHECK_EQ(got, want);
        CHECK_EQ(tecs_query_where_collect(q, f, NULL, 0), want);
        TW_CHECK(w);
        tw_free(w);
    }
}

/* ---- components with hooks -------------------------------------------- */

typedef struct Named { char *name; int id; } Named;

static void named_ctor(void *dst, int32_t n, void *ctx)
{
    int *next = ctx;
    Named *v = dst;
    for (int32_t i = 0; i < n; i++)
        v[i] = (Named){ NULL, ++*next };
}

static void named_dtor(void *p, int32_t n, void *ctx)
{
    Named *v = p;
    (void)ctx;
    for (int32_t i = 0; i < n; i++)
        free(v[i].name);
}

static void named_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    Named *d = dst;
    const Named *s = src;
    (void)ctx;
    for (int32_t i = 0; i < n; i++) {
        free(d[i].name);
        d[i].name = s[i].name ? strcpy(malloc(strlen(s[i].name) + 1), s[i].name) : NULL;
        d[i].id = s[i].id;
    }
}

static void named_move(void *dst, void *src, int32_t n, void *ctx)
{
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Named));
}

TEST(index_string_keys_of_hooked_components_are_copied)
{
    tecs_world_t *w = tw_new();
    int next = 0;
    tecs_comp_t nm = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Named", .size = sizeof(Named), .align = _Alignof(Named), .ctor = named_ctor,
        .dtor = named_dtor, .copy = named_copy, .move = named_move, .hook_ctx = &next });
    tecs_index_t *by_name = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = nm, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_STR,
        .offset = offsetof(Named, name) });
    tecs_index_t *by_id = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = nm, .kind = TECS_INDEX_HASH, .type = TECS_KEY_I32,
        .offset = offsetof(Named, id), .unique = true });
    /* Defaults come from the constructor: distinct ids, so adds succeed. */
    tecs_entity_t e[3];
    for (int i = 0; i < 3; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_add(w, e[i], nm), TECS_OK);
    }
    char buf[16];
    strcpy(buf, "zed");
    CHECK_ERR(tecs_set(w, e[0], nm, &(Named){ buf, 100 }), TECS_OK);
    strcpy(buf, "amy");                 /* the caller's buffer changes ... */
    CHECK_ERR(tecs_set(w, e[1], nm, &(Named){ buf, 101 }), TECS_OK);
    CHECK_ERR(tecs_set(w, e[2], nm, &(Named){ buf, 100 }), TECS_EEXIST);
    tecs_query_t *q = tecs_query_all(w, 1, &nm);
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, by_name, TECS_GE, tecs_key_str("b"));
    tecs_entity_t out[3];
    CHECK_EQ(tecs_query_where_collect(q, f, out, 3), 1);   /* ... the keys do not */
    CHECK_EQ(out[0], e[0]);
    tecs_filter_order(f, by_name, false);
    tecs_filter_not(f, tecs_filter_in(f, by_name, 0, NULL));
    CHECK_EQ(tecs_query_where_collect(q, f, out, 3), 3);
    CHECK_EQ(out[0], e[2]);                                /* NULL first */
    CHECK_EQ(out[1], e[1]);
    CHECK_EQ(tecs_index_lookup(by_id, tecs_key_int(101)), e[1]);
    TW_CHECK(w);
    tw_free(w);
}
