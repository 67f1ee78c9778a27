/* The index tests' shared world and brute-force model (index_fixture.h). */
#include "index_fixture.h"

static const char *const strs[] = { "ant", "bee", "cat", "dog", "eel", "fox", "", NULL };

/* ---- a value model for brute force ------------------------------------ */

const fieldinfo fields[NFIELDS] = {
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

void random_stats(Stats *v, uint64_t *rng)
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

void fx_init(fx *t, bool index_first)
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

tecs_cond_t cond_build(fx *t, tecs_filter_t *f, const cond *c, bool hashed)
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
tecs_key_t random_key(fx *t, int field)
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

int expected(fx *t, pred_fn pred, const void *ctx, tecs_entity_t *out)
{
    tecs_entity_t all[600];
    int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t->q), .query = t->q) }, all, 600), m = 0;
    for (int i = 0; i < n; i++)
        if (pred(t, ctx, all[i]))
            out[m++] = all[i];
    return m;
}

void same_ids(const tecs_entity_t *a, int na, const tecs_entity_t *b, int nb)
{
    CHECK_EQ(na, nb);
    for (int i = 0; i < na && i < nb; i++)
        CHECK_EQ(a[i], b[i]);
}

static bool pred_one(const fx *t, const void *ctx, tecs_entity_t e)
{
    return cond_holds(t, ctx, e);
}

void combo_build(tecs_filter_t *f, int how, tecs_cond_t a, tecs_cond_t b)
{
    if (how == 0)
        tecs_filter_and(f, a, b);
    else if (how == 1)
        tecs_filter_or(f, a, b);
    else if (how == 2)
        tecs_filter_not(f, a);
    else
        tecs_filter_and(f, a, tecs_filter_not(f, b));
}

bool pred_combo(const fx *t, const void *ctx, tecs_entity_t e)
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
void check_random_filters(fx *t, int rounds)
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
            combo_build(f, c.how, a, b);
        }
        CHECK_ERR(tecs_filter_error(f), TECS_OK);
        int n = tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(tecs_query_world(t->q), .query = t->q, .where = f) }, got, 600);
        int m = c.how >= 0 ? expected(t, pred_combo, &c, want) : expected(t, pred_one, &c.a, want);
        if (n != m)
            fprintf(stderr, "  round %d: op %d field %d hashed %d how %d / op %d field %d\n",
                    round, c.a.op, c.a.field, hashed, c.how, c.b.op, c.b.field);
        same_ids(got, n, want, m);
        tecs_filter_free(f);
    }
}

/* ---- maintenance under random changes ---------------------------------- */

void random_change(fx *t)
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
        tecs_iter_t it = TECS_ITER(w, .query = t->q);
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
