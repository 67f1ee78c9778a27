/*
** Relationships in snapshots, deltas and their undo: a loaded world has
** the saved pairs, parents, children in order, sources in order and
** values; a snapshot without relations is the same bytes as before and a
** snapshot without the RELS section still loads; a bad, truncated or
** hostile RELS section, a pair naming a dead slot or no relation, a cycle
** of ChildOf, each fails the load and leaves the world empty; every failed
** allocation of a save and of a load too; a mirror kept by deltas has the
** source's pairs.
*/
#include "test.h"

typedef struct Debt { int32_t amount; float rate; } Debt;

typedef struct rw {
    tecs_world_t *w;
    tecs_comp_t childof, owes, likes, pos;
    tecs_entity_t e[12];
} rw;

/* The relations of rw, registered in w (a loading world may have them). */
static void rw_relations(rw *r)
{
    tecs_world_t *w = r->w;
    r->pos = TECS_COMPONENT(w, Position);
    r->childof = tecs_childof(w);
    r->owes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Owes", .size = sizeof(Debt), .align = _Alignof(Debt),
                       .fields = (const tecs_field_t[]){
                           TECS_MEMBER(Debt, amount, TECS_TYPE_I32),
                           TECS_MEMBER(Debt, rate, TECS_TYPE_F32) },
                       .nfields = 2 } });
    r->likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" }, .exclusive = true });
    CHECK(r->childof && r->owes && r->likes);
}

/* A forest and pairs whose orders differ from the ids' and the
** creation's: children reparented and removed, sources added out of
** order, a value per pair. */
static void rw_fill(rw *r)
{
    tecs_world_t *w = r->w;
    tecs_entity_t *e = r->e;
    for (int i = 0; i < 12; i++) {
        e[i] = tecs_new(w);
        TECS_SET(w, e[i], r->pos, Position, { (float)i, 0 });
    }
    tecs_destroy(w, e[11]);                         /* a free slot in between */
    e[11] = 0;
    /* e0 { e3, e1, e4 { e6, e5 } }, e2 { e7 }; e8 a root */
    CHECK_ERR(tecs_pair_add(w, e[3], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[1], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[9], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[4], r->childof, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[6], r->childof, e[4]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[5], r->childof, e[4]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[7], r->childof, e[2]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[9], r->childof, e[2]), TECS_OK);   /* reparented */
    CHECK_ERR(tecs_pair_remove(w, e[9], r->childof, e[2]), TECS_OK); /* a root again */
    /* Owes: e5 -> e2, e1 -> e2, e5 -> e0, e9 -> e2 (ring of e2: e5, e1, e9) */
    Debt d[4] = { { 10, 0.5f }, { 20, 1.5f }, { 30, 2.5f }, { 40, 3.5f } };
    CHECK_ERR(tecs_pair_set(w, e[5], r->owes, e[2], &d[0]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[1], r->owes, e[2], &d[1]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[5], r->owes, e[0], &d[2]), TECS_OK);
    CHECK_ERR(tecs_pair_set(w, e[9], r->owes, e[2], &d[3]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[1], r->owes, e[8]), TECS_OK);      /* zero-filled */
    /* Likes (exclusive): e7 -> e8, e3 -> e8, e0 -> e8 and e3 moved to e6 */
    CHECK_ERR(tecs_pair_add(w, e[7], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[0], r->likes, e[8]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], r->likes, e[6]), TECS_OK);
    TW_CHECK(w);
}

static int walk_all(tecs_walk_t it, tecs_entity_t *out, int cap)
{
    int n = 0;
    while (tecs_walk_next(&it))
        if (n < cap)
            out[n++] = it.entity;
    return n;
}

/* The relation named name in w. */
static tecs_comp_t rel_named(tecs_world_t *w, const char *name)
{
    tecs_comp_t c = tecs_component_lookup(w, name);
    CHECK(c != 0 && tecs_is_relation(w, c));
    return c;
}

/* b's relationships are a's, entity by entity (the same ids): targets in
** order, values, sources in order, the depth-first trees. */
static void same_relations(tecs_world_t *a, tecs_world_t *b, const tecs_entity_t *ents, int n)
{
    const char *names[] = { "ChildOf", "Owes", "Likes" };
    CHECK_EQ(tecs_world_entity_count(b), tecs_world_entity_count(a));
    for (int k = 0; k < 3; k++) {
        tecs_comp_t ra = rel_named(a, names[k]), rb = rel_named(b, names[k]);
        for (int i = 0; i < n; i++) {
            tecs_entity_t e = ents[i];
            CHECK(tecs_is_alive(b, e));
            CHECK_EQ(tecs_pair_count(b, e, rb), tecs_pair_count(a, e, ra));
            for (int32_t j = 0; j <= tecs_pair_count(a, e, ra); j++) {
                tecs_entity_t t = tecs_pair_target(a, e, ra, j);
                CHECK_EQ(tecs_pair_target(b, e, rb, j), t);
                const void *va = t ? tecs_pair_get(a, e, ra, t) : NULL;
                const void *vb = t ? tecs_pair_get(b, e, rb, t) : NULL;
                CHECK((va == NULL) == (vb == NULL));
                if (va && vb)
                    CHECK(memcmp(va, vb, sizeof(Debt)) == 0);
            }
            tecs_entity_t sa[64], sb[64];
            int na = walk_all(tecs_sources(a, e, ra), sa, 64);
            CHECK_EQ(walk_all(tecs_sources(b, e, rb), sb, 64), na);
            CHECK(memcmp(sa, sb, (size_t)na * sizeof *sa) == 0);
            if (k == 0) {
                na = walk_all(tecs_tree(a, e, TECS_TREE_DEPTH_FIRST), sa, 64);
                CHECK_EQ(walk_all(tecs_tree(b, e, TECS_TREE_DEPTH_FIRST), sb, 64), na);
                CHECK(memcmp(sa, sb, (size_t)na * sizeof *sa) == 0);
                CHECK(tecs_has(b, e, rb) == tecs_has(a, e, ra));
            }
        }
    }
}

TEST(relsnap_round_trip_keeps_pairs_and_orders)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* Into a world that knows nothing: the relations come from the snapshot. */
    tecs_world_t *b = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    TW_CHECK(b);
    same_relations(a.w, b, a.e, 11);
    CHECK_EQ(tecs_childof(b), rel_named(b, "ChildOf"));
    CHECK_EQ(tecs_relation_cleanup(b, rel_named(b, "ChildOf")), TECS_CLEANUP_DESTROY);
    /* The loaded relations work: exclusive still, and the subtree dies with e0. */
    tecs_comp_t likes = rel_named(b, "Likes");
    CHECK_ERR(tecs_pair_add(b, a.e[3], likes, a.e[8]), TECS_OK);
    CHECK_EQ(tecs_pair_count(b, a.e[3], likes), 1);
    CHECK_ERR(tecs_destroy(b, a.e[0]), TECS_OK);
    CHECK(!tecs_is_alive(b, a.e[5]) && !tecs_is_alive(b, a.e[4]) && tecs_is_alive(b, a.e[2]));
    TW_CHECK(b);
    tw_free(b);
    /* Into a world that registered two of them first (in another order). */
    rw c = { .w = tw_new() };
    c.likes = tecs_relation_new(c.w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" }, .exclusive = true });
    c.childof = tecs_childof(c.w);
    CHECK(c.likes && c.childof);
    CHECK_ERR(tecs_snapshot_load_mem(c.w, buf.data, buf.size), TECS_OK);
    TW_CHECK(c.w);
    same_relations(a.w, c.w, a.e, 11);
    /* Saved again, the same bytes. */
    tecs_snapshot_buf_t again = { 0 };
    tecs_world_t *d = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(d, buf.data, buf.size), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(d, &again), TECS_OK);
    CHECK_EQ(again.size, buf.size);
    CHECK(memcmp(again.data, buf.data, buf.size) == 0);
    tecs_snapshot_buf_free(&again);
    tw_free(d);
    tw_free(c.w);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

TEST(relsnap_relation_kinds_must_agree)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    /* "Owes" a plain component here: refused, by name. */
    tecs_world_t *b = tw_new();
    tecs_component_new(b, &(tecs_component_desc_t){    /* the same layout */
        .name = "Owes", .size = sizeof(Debt), .align = _Alignof(Debt),
        .fields = (const tecs_field_t[]){ TECS_MEMBER(Debt, amount, TECS_TYPE_I32),
                                          TECS_MEMBER(Debt, rate, TECS_TYPE_F32) },
        .nfields = 2 });
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(b), "Owes") != NULL);
    CHECK(strstr(tecs_last_error_msg(b), "plain component") != NULL);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    TW_CHECK(b);
    tw_free(b);
    /* "Likes" not exclusive here: refused. */
    b = tw_new();
    tecs_relation_new(b, &(tecs_relation_desc_t){ .component = { .name = "Likes" } });
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_EFORMAT);
    CHECK(strstr(tecs_last_error_msg(b), "Likes") != NULL);
    CHECK_EQ(tecs_world_entity_count(b), 0);
    TW_CHECK(b);
    tw_free(b);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_le64(unsigned char *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

/* A snapshot's RELS section: its payload at *pay, len bytes (the last
** section before END., whose 20 bytes end the snapshot). */
static unsigned char *rels_at(unsigned char *b, size_t n, size_t *len)
{
    unsigned char *trailer = b + n - 20 - 16;
    *len = (size_t)le32(trailer);
    unsigned char *tag = trailer - *len - 4;
    CHECK(memcmp(tag, "RELS", 4) == 0);
    return tag + 4;
}

/* Give RELS (payload pay, len bytes) its sum again. */
static void rels_resum(unsigned char *pay, size_t len)
{
    put_le64(pay + len + 8, tw_doc_sum(pay, len));
}

static void check_empty(tecs_world_t *w)
{
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
}

/* A snapshot of a small forest: r { c1, c2 { g } }, and (Likes, r) on g. */
static void forest(tecs_snapshot_buf_t *buf, tecs_entity_t *e)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t co = tecs_childof(w);
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    for (int i = 0; i < 4; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, e[1], co, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[2], co, e[0]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], co, e[2]), TECS_OK);
    CHECK_ERR(tecs_pair_add(w, e[3], likes, e[0]), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(w, buf), TECS_OK);
    tw_free(w);
}

/* The load of b (n bytes) fails with err, naming what (or NULL), and
** leaves a fresh world empty and whole. */
static void load_fails(const unsigned char *b, size_t n, tecs_err_t err, const char *what)
{
    tecs_world_t *w = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(w, b, n), err);
    if (what && strstr(tecs_last_error_msg(w), what) == NULL) {
        fprintf(stderr, "  message: %s\n", tecs_last_error_msg(w));
        CHECK(!"the message names the failure");
    }
    check_empty(w);
    /* The world takes a good snapshot after it. */
    tecs_entity_t e[4];
    tecs_snapshot_buf_t good = { 0 };
    forest(&good, e);
    CHECK_ERR(tecs_snapshot_load_mem(w, good.data, good.size), TECS_OK);
    CHECK_EQ(tecs_pair_target(w, e[3], tecs_childof(w), 0), e[2]);
    TW_CHECK(w);
    tecs_snapshot_buf_free(&good);
    tw_free(w);
}

TEST(relsnap_truncated_or_corrupt_fails_whole)
{
    tecs_entity_t e[4];
    tecs_snapshot_buf_t buf = { 0 };
    forest(&buf, e);
    /* Every cut: an error, the world empty. */
    for (size_t n = 0; n < buf.size; n++) {
        tecs_world_t *w = tw_new();
        tecs_err_t err = tecs_snapshot_load_mem(w, buf.data, n);
        CHECK(err == TECS_EFORMAT);
        check_empty(w);
        tw_free(w);
    }
    size_t len;
    unsigned char *b = malloc(buf.size), *pay;
    /* Each byte of RELS flipped: refused (by the structure, else the sum). */
    for (size_t i = 0; (memcpy(b, buf.data, buf.size), pay = rels_at(b, buf.size, &len), i < len);
         i++) {
        pay[i] ^= 0x40;
        load_fails(b, buf.size, TECS_EFORMAT, NULL);
    }
    /* RELS: u32 2; ChildOf: place, 4 bytes, u32 3, then (child, parent,
    ** rank) x 3, each parent's children together; then Likes. */
    memcpy(b, buf.data, buf.size);
    pay = rels_at(b, buf.size, &len);
    CHECK_EQ(le32(pay), 2);
    CHECK_EQ(le32(pay + 12), 3);
    CHECK_EQ(pay[8 + 2], 1);                                /* the ChildOf flag */
    size_t second = 0, g = 0;               /* c2's pair (rank 1), g's pair */
    for (size_t k = 0; k < 3; k++) {
        unsigned char *q = pay + 16 + 12 * k;
        if (le32(q + 8) == 1)
            second = 16 + 12 * k;
        if (le32(q) == TECS_ENTITY_INDEX(e[3]))
            g = 16 + 12 * k;
    }
    CHECK(second && g);
    struct { size_t at; uint32_t v; const char *what; } bad[] = {
        { 0, 5, "relation count" },                         /* more relations than listed */
        { 4, 0xffff, "bad component" },                     /* no such place */
        { 16 + 4, 999, "past the slots" },                  /* a parent past every slot */
        { 16 + 8, 7, "rank" },                              /* a rank out of order */
        { second + 8, 0, "rank" },                          /* two siblings first */
        { g + 4, TECS_ENTITY_INDEX(e[3]), "cycle" },        /* g its own parent */
        { second + 4, TECS_ENTITY_INDEX(e[3]), "cycle" },   /* c2 under g, g under c2 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memcpy(b, buf.data, buf.size);
        pay = rels_at(b, buf.size, &len);
        put_le32(pay + bad[i].at, bad[i].v);
        if (i == 6)
            put_le32(pay + second + 8, 0);                  /* g's only child */
        rels_resum(pay, len);
        load_fails(b, buf.size, TECS_EFORMAT, bad[i].what);
    }
    /* A pair naming a dead entity: a free slot. */
    tecs_world_t *w = tw_new();
    tecs_entity_t x = tecs_new(w), y = tecs_new(w), z = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, y, tecs_childof(w), x), TECS_OK);
    tecs_destroy(w, z);
    tecs_snapshot_buf_t dead = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &dead), TECS_OK);
    tw_free(w);
    pay = rels_at(dead.data, dead.size, &len);
    put_le32(pay + 16 + 4, TECS_ENTITY_INDEX(z));
    rels_resum(pay, len);
    load_fails(dead.data, dead.size, TECS_EFORMAT, "dead");
    /* A child its own parent. */
    pay = rels_at(dead.data, dead.size, &len);
    put_le32(pay + 16 + 4, TECS_ENTITY_INDEX(y));
    rels_resum(pay, len);
    load_fails(dead.data, dead.size, TECS_EFORMAT, "cycle");
    tecs_snapshot_buf_free(&dead);
    free(b);
    tecs_snapshot_buf_free(&buf);
}

/* buf as the format before RELS: no flag, no section (its size at *n). */
static unsigned char *without_rels(const tecs_snapshot_buf_t *buf, size_t *n)
{
    unsigned char *b = malloc(buf->size);
    memcpy(b, buf->data, buf->size);
    size_t len;
    unsigned char *pay = rels_at(b, buf->size, &len);
    size_t at = (size_t)(pay - 4 - b);
    memmove(b + at, b + buf->size - 20, 20);                /* END. follows RSRC */
    *n = at + 20;
    CHECK_EQ(le32(b + 12) & ~1u, 2);        /* SNAP_FLAG_RELS (bit 0: a big-endian host) */
    put_le32(b + 12, le32(b + 12) & 1u);
    put_le64(b + 16, tw_doc_sum(b, 16));
    return b;
}

TEST(relsnap_old_snapshots_load)
{
    /* A world without relations: no flag, no section, the bytes as before. */
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    TECS_SET(w, tecs_new(w), pos, Position, { 1, 2 });
    tecs_snapshot_buf_t plain = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &plain), TECS_OK);
    CHECK_EQ(le32(plain.data + 12) & ~1u, 0);   /* no RELS flag (bit 0: byte order) */
    CHECK(memcmp(plain.data + plain.size - 20 - 16 - 4 - 4, "RSRC", 4) == 0);
    tw_free(w);
    tecs_snapshot_buf_free(&plain);
    /* Pairs of a user relation, the section taken out: the entities load,
    ** with no pairs. */
    w = tw_new();
    tecs_comp_t likes = tecs_relation_new(w, &(tecs_relation_desc_t){
        .component = { .name = "Likes" } });
    tecs_entity_t a = tecs_new(w), b = tecs_new(w);
    CHECK_ERR(tecs_pair_add(w, a, likes, b), TECS_OK);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(w, &buf), TECS_OK);
    tw_free(w);
    size_t n;
    unsigned char *old = without_rels(&buf, &n);
    w = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(w, old, n), TECS_OK);
    CHECK(tecs_is_alive(w, a) && tecs_is_alive(w, b));
    CHECK_EQ(tecs_pair_count(w, a, TECS_WILDCARD), 0);
    TW_CHECK(w);
    tw_free(w);
    free(old);
    tecs_snapshot_buf_free(&buf);
    /* Children without the section: their parents are lost, so refused. */
    tecs_entity_t e[4];
    forest(&buf, e);
    old = without_rels(&buf, &n);
    load_fails(old, n, TECS_EFORMAT, "ChildOf");
    free(old);
    tecs_snapshot_buf_free(&buf);
}

/* A save and a load of rw's world with the k-th allocation failed, for
** every k: TECS_ENOMEM, the world as it was (the save's) or empty (the
** load's), nothing leaked; then the same world loads. */
TEST(relsnap_oom_at_every_allocation)
{
    bool done = false;
    for (long k = 1; !done && k < 100000; k++) {
        tw_alloc al = { 0 };
        rw a = { .w = tw_new_ex(&al, 0) };
        rw_relations(&a);
        rw_fill(&a);
        tecs_snapshot_buf_t out = { 0 };
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_snapshot_save_mem(a.w, &out);
        al.fail_at = 0;
        done = err == TECS_OK;
        if (!done)
            CHECK_ERR(err, TECS_ENOMEM);
        CHECK_EQ(tecs_pair_count(a.w, a.e[5], a.owes), 2);
        TW_CHECK(a.w);
        tecs_snapshot_buf_free(&out);
        tw_free(a.w);
    }
    CHECK(done);
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    done = false;
    for (long k = 1; !done && k < 100000; k++) {
        tw_alloc al = { 0 };
        tecs_world_t *b = tw_new_ex(&al, 0);
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_snapshot_load_mem(b, buf.data, buf.size);
        al.fail_at = 0;
        if (err == TECS_OK) {
            done = true;
        } else {
            CHECK_ERR(err, TECS_ENOMEM);
            check_empty(b);
            CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
        }
        TW_CHECK(b);
        same_relations(a.w, b, a.e, 11);
        tw_free(b);
    }
    CHECK(done);
    tecs_snapshot_buf_free(&buf);
    tw_free(a.w);
}

static uint32_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

/* n random changes to r's world: births, deaths (subtrees with them),
** pairs added, set, removed, children moved. */
static void churn(rw *r, uint64_t *seed, int n, tecs_entity_t *all, int *ne)
{
    tecs_world_t *w = r->w;
    for (int i = 0; i < n; i++) {
        tecs_entity_t e = all[rnd(seed) % (uint32_t)*ne], t = all[rnd(seed) % (uint32_t)*ne];
        bool ok = tecs_is_alive(w, e) && tecs_is_alive(w, t);
        Debt d = { (int32_t)rnd(seed), (float)(rnd(seed) % 100) };
        switch (rnd(seed) % 8) {
        case 0:
            if (*ne < 64)
                all[(*ne)++] = tecs_new(w);
            break;
        case 1:
            if (rnd(seed) % 3 == 0 && tecs_is_alive(w, e))
                tecs_destroy(w, e);
            break;
        case 2: case 3:
            if (ok)
                (void)tecs_pair_add(w, e, r->childof, t);           /* may be a cycle */
            break;
        case 4:
            if (ok)
                (void)tecs_pair_remove(w, e, r->childof, TECS_WILDCARD);
            break;
        case 5:
            if (ok)
                (void)tecs_pair_set(w, e, r->owes, t, &d);
            break;
        case 6:
            if (ok)
                (void)(rnd(seed) % 2 ? tecs_pair_add(w, e, r->likes, t)
                                     : tecs_pair_remove(w, e, r->owes, t));
            break;
        default:
            if (tecs_is_alive(w, e))
                TECS_SET(w, e, r->pos, Position, { d.rate, 1 });
            break;
        }
    }
}

TEST(relsnap_delta_keeps_mirror_pairs)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_entity_t all[64];
    int ne = 0;
    for (int i = 0; i < 11; i++)
        all[ne++] = a.e[i];
    tecs_mark_t m;
    tecs_snapshot_buf_t buf = { 0 };
    CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &buf), TECS_OK);
    tecs_world_t *b = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(b, buf.data, buf.size), TECS_OK);
    tecs_snapshot_buf_free(&buf);
    uint64_t seed = 11;
    for (int round = 0; round < 40; round++) {
        churn(&a, &seed, 12, all, &ne);
        TW_CHECK(a.w);
        CHECK_ERR(tecs_delta_save_mem(a.w, &m, &buf), TECS_OK);
        CHECK_ERR(tecs_delta_apply_mem(b, buf.data, buf.size), TECS_OK);
        tecs_snapshot_buf_free(&buf);
        TW_CHECK(b);
        tecs_entity_t live[64];
        int nl = 0;
        for (int i = 0; i < ne; i++)
            if (tecs_is_alive(a.w, all[i]))
                live[nl++] = all[i];
        same_relations(a.w, b, live, nl);
        /* The mirror's snapshot is the source's, byte for byte. */
        tecs_snapshot_buf_t sa = { 0 }, sb = { 0 };
        CHECK_ERR(tecs_snapshot_save_mem(a.w, &sa), TECS_OK);
        CHECK_ERR(tecs_snapshot_save_mem(b, &sb), TECS_OK);
        CHECK(sa.size == sb.size && memcmp(sa.data, sb.data, sa.size) == 0);
        tecs_snapshot_buf_free(&sa);
        tecs_snapshot_buf_free(&sb);
    }
    tw_free(b);
    tw_free(a.w);
}

/* A delta whose RELS is bad, and every failed allocation of an apply:
** the error, the mirror empty and whole (load the base again), nothing
** leaked; the apply that succeeds gives the source's pairs. */
TEST(relsnap_delta_bad_or_out_of_memory_empties_mirror)
{
    rw a = { .w = tw_new() };
    rw_relations(&a);
    rw_fill(&a);
    tecs_mark_t m;
    tecs_snapshot_buf_t base = { 0 }, delta = { 0 };
    CHECK_ERR(tecs_world_mark(a.w, &m), TECS_OK);
    CHECK_ERR(tecs_snapshot_save_mem(a.w, &base), TECS_OK);
    tecs_world_t *at_base = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(at_base, base.data, base.size), TECS_OK);
    tecs_entity_t all[64];
    int ne = 0;
    for (int i = 0; i < 11; i++)
        all[ne++] = a.e[i];
    uint64_t seed = 5;
    churn(&a, &seed, 30, all, &ne);
    CHECK_ERR(tecs_delta_save_mem(a.w, &m, &delta), TECS_OK);
    /* A rank out of order in the delta's RELS. */
    unsigned char *b = malloc(delta.size);
    memcpy(b, delta.data, delta.size);
    size_t len;
    unsigned char *pay = rels_at(b, delta.size, &len);
    put_le32(pay + 16 + 8, 9);
    rels_resum(pay, len);
    tecs_world_t *mirror = tw_new();
    CHECK_ERR(tecs_snapshot_load_mem(mirror, base.data, base.size), TECS_OK);
    CHECK_ERR(tecs_delta_apply_mem(mirror, b, delta.size), TECS_EFORMAT);
    check_empty(mirror);
    tw_free(mirror);
    free(b);
    tecs_entity_t live[64];
    int nl = 0;
    for (int i = 0; i < ne; i++)
        if (tecs_is_alive(a.w, all[i]))
            live[nl++] = all[i];
    bool done = false;
    for (long k = 1; !done && k < 100000; k++) {
        tw_alloc al = { 0 };
        mirror = tw_new_ex(&al, 0);
        CHECK_ERR(tecs_snapshot_load_mem(mirror, base.data, base.size), TECS_OK);
        al.fail_at = al.calls + k;
        tecs_err_t err = tecs_delta_apply_mem(mirror, delta.data, delta.size);
        al.fail_at = 0;
        if (err == TECS_OK) {
            done = true;
            same_relations(a.w, mirror, live, nl);
        } else {
            CHECK_ERR(err, TECS_ENOMEM);
            if (tecs_world_entity_count(mirror) > 0)    /* before the first change */
                same_relations(at_base, mirror, a.e, 11);
        }
        TW_CHECK(mirror);
        tw_free(mirror);
    }
    CHECK(done);
    tw_free(at_base);
    tecs_snapshot_buf_free(&base);
    tecs_snapshot_buf_free(&delta);
    tw_free(a.w);
}

/* Memory the allocator hands out dirty makes no plain component a
** relation: a load's adoption and the checks ask tecs_is_relation of
** every component the snapshot names. */
TEST(relsnap_plain_components_stay_plain_on_dirty_memory)
{
    tecs_world_t *w = tecs_world_new_ex(&(tecs_world_desc_t){ .alloc = tw_dirty_alloc });
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    CHECK(tecs_childof(w) != 0);
    tecs_comp_t later = TECS_COMPONENT(w, Velocity);
    CHECK(!tecs_is_relation(w, pos));
    CHECK(!tecs_is_relation(w, later));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, later, Velocity, { 1, 2 }), TECS_OK);
    TW_CHECK(w);
    tecs_world_free(w);
}
