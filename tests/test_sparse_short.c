/*
** The short paths of tecs_add and tecs_remove of a sparse component (no
** hook, observer or index, room in the set, the slot's page there): values
** zeroed on every add whatever the entry's size, the member list and pages
** kept as the engine keeps them (the structure check after each step),
** stale and recycled ids, pages freed and made again, and out of memory at
** every allocation the paths around them make.
*/
#include "test.h"

static tecs_comp_t sp_comp(tecs_world_t *w, const char *name, size_t size, size_t align)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = size, .align = align, .storage = TECS_STORAGE_SPARSE });
}

/* Every byte of the value of c on e is zero. */
static bool all_zero(tecs_world_t *w, tecs_entity_t e, tecs_comp_t c, size_t size)
{
    const unsigned char *p = tecs_get(w, e, c);
    if (p == NULL)
        return false;
    for (size_t k = 0; k < size; k++)
        if (p[k] != 0)
            return false;
    return true;
}

/* Values of 1 to 64 bytes (entries of 8, 16 and more bytes, of alignments
** 1 to 8): a value written, removed and added again reads zero, and the
** neighbours' values are untouched. */
TEST(sparse_short_add_zeroes_every_size)
{
    static const struct { size_t size, align; } kinds[] = {
        { 1, 1 }, { 2, 2 }, { 4, 4 }, { 3, 1 }, { 8, 4 }, { 8, 8 }, { 12, 4 },
        { 16, 8 }, { 24, 8 }, { 64, 8 },
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        tecs_world_t *w = tw_new();
        char name[16];
        snprintf(name, sizeof name, "V%zu", k);
        tecs_comp_t c = sp_comp(w, name, kinds[k].size, kinds[k].align);
        CHECK(c != 0);
        tecs_entity_t e[3];
        unsigned char ff[64];
        memset(ff, 0xff, sizeof ff);
        for (int i = 0; i < 3; i++) {
            e[i] = tecs_new(w);
            CHECK_ERR(tecs_add(w, e[i], c), TECS_OK);
            CHECK(all_zero(w, e[i], c, kinds[k].size));
            CHECK_ERR(tecs_set(w, e[i], c, ff), TECS_OK);
        }
        for (int round = 0; round < 3; round++) {
            CHECK_ERR(tecs_remove(w, e[1], c), TECS_OK);
            CHECK(!tecs_has(w, e[1], c));
            TW_CHECK(w);
            CHECK_ERR(tecs_add(w, e[1], c), TECS_OK);
            CHECK(all_zero(w, e[1], c, kinds[k].size));
            CHECK(memcmp(tecs_get(w, e[0], c), ff, kinds[k].size) == 0);
            CHECK(memcmp(tecs_get(w, e[2], c), ff, kinds[k].size) == 0);
            CHECK_ERR(tecs_set(w, e[1], c, ff), TECS_OK);
            TW_CHECK(w);
        }
        tw_free(w);
    }
}

/* A tag of alignment 8 (an entry of 8 bytes with no value) and one of
** alignment 1: added, removed, added again. */
TEST(sparse_short_tags)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t t1 = sp_comp(w, "T1", 0, 1);
    tecs_comp_t t8 = sp_comp(w, "T8", 0, 8);
    CHECK(t1 != 0 && t8 != 0);
    tecs_entity_t e[5];
    for (int i = 0; i < 5; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_add(w, e[i], t1), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], t8), TECS_OK);
        CHECK_ERR(tecs_add(w, e[i], t8), TECS_EEXIST);
    }
    TW_CHECK(w);
    for (int i = 0; i < 5; i += 2) {
        CHECK_ERR(tecs_remove(w, e[i], t8), TECS_OK);
        CHECK_ERR(tecs_remove(w, e[i], t8), TECS_ENOENT);
    }
    for (int i = 0; i < 5; i++) {
        CHECK(tecs_has(w, e[i], t1));
        CHECK(tecs_has(w, e[i], t8) == (i % 2 == 1));
    }
    TW_CHECK(w);
    tw_free(w);
}

/* The member list after removes in every order: the first, the last (the
** member that fills its own place), one between; then every member gone,
** the set empty (a destroy takes the plain path again). */
TEST(sparse_short_remove_orders)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c = sp_comp(w, "Hp", sizeof(int), _Alignof(int));
    enum { N = 40 };
    tecs_entity_t e[N];
    for (int i = 0; i < N; i++) {
        e[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, e[i], c, &i), TECS_OK);
    }
    int order[N], n = 0;
    for (int lo = 0, hi = N - 1; lo <= hi; lo++, hi--) {
        order[n++] = hi;
        if (lo != hi)
            order[n++] = lo;
    }
    for (int k = 0; k < N; k++) {
        CHECK_ERR(tecs_remove(w, e[order[k]], c), TECS_OK);
        TW_CHECK(w);
        for (int j = k + 1; j < N; j++) {
            const int *v = tecs_get(w, e[order[j]], c);
            CHECK(v != NULL && *v == order[j]);
        }
    }
    CHECK_EQ(tecs_world_entity_count(w), N);
    for (int i = 0; i < N; i++)
        CHECK_ERR(tecs_destroy(w, e[i]), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* Stale and recycled ids never reach a member through the short paths: an
** add of a dead id fails, a remove of a stale id of a slot whose new
** entity is a member leaves it, and ids of generation 0 or past every
** page are refused. */
TEST(sparse_short_stale_and_recycled_ids)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c = sp_comp(w, "Hp", sizeof(int), _Alignof(int));
    tecs_entity_t keep = tecs_new(w);       /* the set made, a page there */
    CHECK_ERR(tecs_add(w, keep, c), TECS_OK);
    tecs_entity_t dead = tecs_new(w);
    CHECK_ERR(tecs_add(w, dead, c), TECS_OK);
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);
    CHECK_ERR(tecs_add(w, dead, c), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, dead, c), TECS_EDEAD);
    tecs_entity_t again = tecs_new(w);
    for (int i = 0; i < 2000 && TECS_ENTITY_INDEX(again) != TECS_ENTITY_INDEX(dead); i++)
        again = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(again), TECS_ENTITY_INDEX(dead));
    CHECK_ERR(tecs_add(w, dead, c), TECS_EDEAD);
    CHECK(!tecs_has(w, again, c));
    CHECK_ERR(tecs_set(w, again, c, &(int){ 7 }), TECS_OK);
    CHECK_ERR(tecs_remove(w, dead, c), TECS_EDEAD);
    CHECK(*(const int *)tecs_get(w, again, c) == 7);
    tecs_entity_t gen0 = (tecs_entity_t)TECS_ENTITY_INDEX(keep);
    CHECK_ERR(tecs_add(w, gen0, c), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, gen0, c), TECS_EDEAD);
    tecs_entity_t far = ((tecs_entity_t)1 << 32) | 0x7fffffffu;
    CHECK_ERR(tecs_add(w, far, c), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, far, c), TECS_EDEAD);
    CHECK(tecs_has(w, keep, c) && tecs_has(w, again, c));
    TW_CHECK(w);
    tw_free(w);
}

/* Members spread over several pages: a page whose last member leaves is
** freed (or kept as the spare) and made again by the next add there; the
** world's memory comes back to what it was once every page is empty. */
TEST(sparse_short_pages_freed_and_made_again)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c = sp_comp(w, "Hp", sizeof(int), _Alignof(int));
    enum { N = 20000 };             /* several pages of 4,096 slots */
    tecs_entity_t *e = malloc(N * sizeof *e);
    CHECK(e != NULL);
    for (int i = 0; i < N; i++)
        e[i] = tecs_new(w);
    CHECK_ERR(tecs_add(w, e[0], c), TECS_OK);
    CHECK_ERR(tecs_remove(w, e[0], c), TECS_OK);
    size_t base = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i += 97)
            CHECK_ERR(tecs_set(w, e[i], c, &i), TECS_OK);
        TW_CHECK(w);
        for (int i = 0; i < N; i += 97) {
            const int *v = tecs_get(w, e[i], c);
            CHECK(v != NULL && *v == i);
            CHECK_ERR(tecs_remove(w, e[i], c), TECS_OK);
        }
        TW_CHECK(w);
        if (round == 0)
            base = tecs_world_memory(w);
        else
            CHECK_EQ(tecs_world_memory(w), base);
    }
    free(e);
    tw_free(w);
}

/* An add under a failing allocator: TECS_ENOMEM changes nothing, and the
** same add then succeeds; either way the value reads zero. */
static void add_or_retry(tw_alloc *a, tecs_world_t *w, tecs_entity_t e, tecs_comp_t c)
{
    long before = a->failures;
    tecs_err_t err = tecs_add(w, e, c);
    if (a->failures != before) {
        CHECK_ERR(err, TECS_ENOMEM);
        CHECK(!tecs_has(w, e, c));
        TW_CHECK(w);
        err = tecs_add(w, e, c);
    }
    CHECK_ERR(err, TECS_OK);
    CHECK(all_zero(w, e, c, sizeof(int)));
}

/* Out of memory at each allocation an add may make (the set, its page
** table, its member list, a page): the add fails with TECS_ENOMEM and
** changes nothing, the next one succeeds, and the short paths then run
** on what was made. */
TEST(sparse_short_oom_at_every_allocation)
{
    long fail = 1;
    for (;; fail++) {
        tw_alloc a = { 0 };
        tecs_world_t *w = tw_new_ex(&a, 16);
        tecs_comp_t c = sp_comp(w, "Hp", sizeof(int), _Alignof(int));
        tecs_entity_t e[64];
        for (int i = 0; i < 64; i++)
            e[i] = tecs_new(w);
        tecs_entity_t far = 0;
        for (int i = 0; i < 5000; i++)      /* a slot in the second page */
            far = tecs_new(w);
        a.fail_at = a.calls + fail;
        long failures = a.failures;
        add_or_retry(&a, w, e[0], c);
        add_or_retry(&a, w, far, c);
        for (int i = 1; i < 64; i++)
            add_or_retry(&a, w, e[i], c);
        for (int i = 0; i < 64; i += 2)
            CHECK_ERR(tecs_remove(w, e[i], c), TECS_OK);
        CHECK_ERR(tecs_remove(w, far, c), TECS_OK);
        add_or_retry(&a, w, far, c);        /* its page made again */
        TW_CHECK(w);
        tw_free(w);
        if (a.failures == failures)
            break;
        CHECK(fail < 100);
    }
    CHECK(fail > 3);            /* the set, its tables and a page were failed */
}
