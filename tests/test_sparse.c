/*
** Sparse components: values in a sparse set by entity slot, no moves.
** Adds, removes, reads and writes; address stability; errors; hooks,
** observers and indexes; deferred, delayed and worker paths; destroy,
** reset and world free; out of memory at every allocation.
*/
#include "hooks.h"

static tecs_comp_t sparse_comp(tecs_world_t *w, const char *name, size_t size, size_t align)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = size, .align = align, .storage = TECS_STORAGE_SPARSE });
}

static tecs_comp_t sparse_obj(tecs_world_t *w, const char *name, hook_counts *h)
{
    return tecs_component_new(w, &(tecs_component_desc_t){
        .name = name, .size = sizeof(Obj), .align = _Alignof(Obj),
        .ctor = obj_ctor, .dtor = obj_dtor, .copy = obj_copy, .hook_ctx = h,
        .storage = TECS_STORAGE_SPARSE });
}

TEST(sparse_register_and_storage)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Position), _Alignof(Position));
    CHECK(sp != 0);
    CHECK_EQ(tecs_component_storage(w, pos), TECS_STORAGE_TABLE);
    CHECK_EQ(tecs_component_storage(w, sp), TECS_STORAGE_SPARSE);
    CHECK_EQ(tecs_component_storage(w, 999), TECS_STORAGE_TABLE);
    CHECK_EQ(tecs_component_storage(NULL, sp), TECS_STORAGE_TABLE);
    CHECK(tecs_component_new(w, &(tecs_component_desc_t){ .name = "Bad", .size = 4,
                                                          .storage = (tecs_storage_t)7 }) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(tecs_component_lookup(w, "Bad") == 0);
    /* never in an archetype */
    CHECK(tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, sp }) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "Sp") != NULL);
    tecs_archetype_t *ap = tecs_archetype_get(w, 1, &pos);
    Position v[2] = { { 1, 2 }, { 3, 4 } };
    CHECK_ERR(tecs_new_bulk(w, ap, 2, NULL, 1, (tecs_value_t[]){ { sp, v } }), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "Sp") != NULL);
    CHECK(tecs_delayed_new(w, ap, 1, (tecs_value_t[]){ { sp, v } }) == 0);
    CHECK_ERR(tecs_last_error(w), TECS_EINVAL);
    CHECK_EQ(tecs_delayed_new_count(w), 0);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_add_remove_get_set_has)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Position), _Alignof(Position));
    tecs_comp_t tag = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "STag", .storage = TECS_STORAGE_SPARSE });
    tecs_entity_t e = tecs_new(w);
    tecs_archetype_t *a = tecs_entity_archetype(w, e);
    CHECK(!tecs_has(w, e, sp));
    CHECK(tecs_get(w, e, sp) == NULL && tecs_last_error(w) == TECS_ENOENT);
    CHECK_ERR(tecs_add(w, e, sp), TECS_OK);
    CHECK(tecs_entity_archetype(w, e) == a);            /* no move */
    CHECK(tecs_has(w, e, sp));
    const Position *p = tecs_get(w, e, sp);
    CHECK(p && p->x == 0 && p->y == 0);
    CHECK_ERR(tecs_add(w, e, sp), TECS_EEXIST);
    CHECK_ERR(tecs_set(w, e, sp, &(Position){ 5, 6 }), TECS_OK);
    CHECK(tecs_get(w, e, sp) == p && p->x == 5 && p->y == 6);
    Position *m = tecs_get_mut(w, e, sp);
    CHECK(m == p);
    m->x = 9;
    CHECK_ERR(tecs_modified(w, e, sp), TECS_OK);
    CHECK_ERR(tecs_set(w, e, sp, NULL), TECS_EINVAL);
    /* tags */
    CHECK_ERR(tecs_set(w, e, tag, NULL), TECS_OK);
    CHECK(tecs_has(w, e, tag));
    CHECK(tecs_get(w, e, tag) == NULL && tecs_last_error(w) == TECS_EINVAL);
    CHECK_ERR(tecs_set(w, e, tag, NULL), TECS_OK);
    CHECK_ERR(tecs_modified(w, e, tag), TECS_EINVAL);
    CHECK_ERR(tecs_remove(w, e, tag), TECS_OK);
    CHECK(!tecs_has(w, e, tag));
    CHECK_ERR(tecs_remove(w, e, tag), TECS_ENOENT);
    /* set adds */
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(tecs_set(w, f, sp, &(Position){ 7, 8 }), TECS_OK);
    CHECK(((const Position *)tecs_get(w, f, sp))->y == 8);
    TW_CHECK(w);
    CHECK_ERR(tecs_remove(w, e, sp), TECS_OK);
    CHECK(!tecs_has(w, e, sp));
    CHECK_ERR(tecs_remove(w, e, sp), TECS_ENOENT);
    CHECK_ERR(tecs_modified(w, e, sp), TECS_ENOENT);
    /* table components alongside */
    CHECK_ERR(tecs_set(w, f, pos, &(Position){ 1, 1 }), TECS_OK);
    CHECK(((const Position *)tecs_get(w, f, sp))->x == 7);
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_bad_input)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Position), _Alignof(Position));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(NULL, e, sp), TECS_EINVAL);
    CHECK_ERR(tecs_add(w, 0, sp), TECS_EDEAD);
    CHECK_ERR(tecs_add(w, e, 777), TECS_ENOCOMP);
    CHECK_ERR(tecs_add(w, e, sp), TECS_OK);
    tecs_entity_t dead = e;
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK_ERR(tecs_add(w, dead, sp), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, dead, sp), TECS_EDEAD);
    CHECK_ERR(tecs_set(w, dead, sp, &(Position){ 1, 1 }), TECS_EDEAD);
    CHECK(tecs_get(w, dead, sp) == NULL && tecs_last_error(w) == TECS_EDEAD);
    CHECK(!tecs_has(w, dead, sp));
    CHECK_ERR(tecs_modified(w, dead, sp), TECS_EDEAD);
    /* the slot comes back with a new generation: not a member */
    tecs_entity_t again = tecs_new(w);
    for (int i = 0; i < 2000 && TECS_ENTITY_INDEX(again) != TECS_ENTITY_INDEX(dead); i++)
        again = tecs_new(w);
    CHECK(again != dead);
    CHECK_EQ(TECS_ENTITY_INDEX(again), TECS_ENTITY_INDEX(dead));
    CHECK(!tecs_has(w, again, sp));
    CHECK(tecs_get(w, again, sp) == NULL);
    CHECK_ERR(tecs_last_error(w), TECS_ENOENT);
    CHECK_ERR(tecs_add(w, dead, sp), TECS_EDEAD);
    CHECK(!tecs_has(w, again, sp));
    CHECK(tecs_get(w, again, 777) == NULL && tecs_last_error(w) == TECS_ENOCOMP);
    /* made-up ids: generation 0 of a slot that is no member, a slot past
    ** every page */
    tecs_entity_t other = tecs_new(w);
    tecs_entity_t gen0 = (tecs_entity_t)TECS_ENTITY_INDEX(other);
    CHECK(!tecs_has(w, gen0, sp));
    CHECK(tecs_get(w, gen0, sp) == NULL && tecs_last_error(w) == TECS_EDEAD);
    CHECK_ERR(tecs_add(w, gen0, sp), TECS_EDEAD);
    tecs_entity_t far = ((tecs_entity_t)1 << 32) | 0x7fffffffu;
    CHECK(!tecs_has(w, far, sp));
    CHECK(tecs_get(w, far, sp) == NULL && tecs_last_error(w) == TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, far, sp), TECS_EDEAD);
    TW_CHECK(w);
    tw_free(w);
}

/* A stale id whose slot's new entity is a member: tecs_remove refuses it
** (the member's generation is not the id's) and the member keeps its
** value; the same through a table component's quick move. */
TEST(sparse_remove_stale_id_leaves_new_member)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Position), _Alignof(Position));
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t dead = tecs_new(w);
    CHECK_ERR(tecs_set(w, dead, sp, &(Position){ 1, 2 }), TECS_OK);
    CHECK_ERR(tecs_add(w, dead, pos), TECS_OK);
    CHECK_ERR(tecs_remove(w, dead, pos), TECS_OK);      /* the remove hop is made */
    CHECK_ERR(tecs_destroy(w, dead), TECS_OK);
    tecs_entity_t again = tecs_new(w);
    for (int i = 0; i < 2000 && TECS_ENTITY_INDEX(again) != TECS_ENTITY_INDEX(dead); i++)
        again = tecs_new(w);
    CHECK_EQ(TECS_ENTITY_INDEX(again), TECS_ENTITY_INDEX(dead));
    CHECK_ERR(tecs_set(w, again, sp, &(Position){ 3, 4 }), TECS_OK);
    CHECK_ERR(tecs_add(w, again, pos), TECS_OK);
    CHECK_ERR(tecs_remove(w, dead, sp), TECS_EDEAD);
    CHECK_ERR(tecs_remove(w, dead, pos), TECS_EDEAD);
    CHECK_ERR(tecs_add(w, dead, sp), TECS_EDEAD);
    CHECK(tecs_has(w, again, sp) && tecs_has(w, again, pos));
    const Position *p = TECS_GET(w, again, sp, Position);
    CHECK(p != NULL && p->x == 3 && p->y == 4);
    CHECK_ERR(tecs_remove(w, again, sp), TECS_OK);
    CHECK_ERR(tecs_remove(w, again, sp), TECS_ENOENT);
    CHECK_ERR(tecs_remove(w, again, pos), TECS_OK);
    CHECK_ERR(tecs_remove(w, again, pos), TECS_ENOENT);
    TW_CHECK(w);
    tw_free(w);
}

/* Addresses stay put while the entity moves between archetypes and other
** members leave (the last member fills a hole in the list, not in the
** values). */
TEST(sparse_addresses_are_stable)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    enum { N = 10000 };
    static tecs_entity_t ids[N];
    static const Health *at[N];
    for (int i = 0; i < N; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(tecs_set(w, ids[i], sp, &(Health){ i }), TECS_OK);
        at[i] = tecs_get(w, ids[i], sp);
    }
    for (int i = 0; i < N; i++) {
        CHECK_ERR(tecs_add(w, ids[i], i % 2 ? pos : vel), TECS_OK);
        if (i % 3 == 0)
            CHECK_ERR(tecs_remove(w, ids[i], sp), TECS_OK);
    }
    for (int i = 0; i < N; i += 7)
        if (i % 3)
            CHECK_ERR(tecs_destroy(w, ids[i]), TECS_OK);
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0 || i % 7 == 0)
            continue;
        const Health *h = tecs_get(w, ids[i], sp);
        CHECK(h == at[i]);
        CHECK_EQ(h->hp, i);
    }
    TW_CHECK(w);
    tw_free(w);
}

/* ---- hooks and observers ---------------------------------------------- */

typedef struct log_t {
    char buf[512];
    tecs_comp_t sp;
    tecs_entity_t other;
    int writes;
} log_t;

static void log_ev(const tecs_event_t *ev)
{
    log_t *l = ev->ctx;
    const char *k = ev->kind == TECS_ON_ADD ? "A" : ev->kind == TECS_ON_SET ? "S" : "R";
    size_t n = strlen(l->buf);
    snprintf(l->buf + n, sizeof l->buf - n, "%s%d,", k,
             ev->value ? ((const Obj *)ev->value)->value : -1);
}

TEST(sparse_hooks_and_observers_in_order)
{
    tecs_world_t *w = tw_new();
    hook_counts h = { 0 };
    tecs_comp_t so = sparse_obj(w, "SObj", &h);
    log_t l = { .sp = so };
    CHECK_ERR(tecs_component_hooks(w, so, &(tecs_hooks_t){ .on_add = log_ev, .on_set = log_ev,
                                                          .on_remove = log_ev, .ctx = &l }),
              TECS_OK);
    for (int k = TECS_ON_ADD; k <= TECS_ON_REMOVE; k++)
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
            .event = (tecs_event_kind_t)k, .comp = so, .callback = log_ev, .ctx = &l }) != 0);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, so), TECS_OK);                 /* A7 A7 */
    CHECK_ERR(tecs_set(w, e, so, &(Obj){ OBJ_LIVE, 3 }), TECS_OK);   /* S3 S3 */
    CHECK_ERR(tecs_remove(w, e, so), TECS_OK);              /* R3 R3 */
    CHECK_ERR(tecs_set(w, e, so, &(Obj){ OBJ_LIVE, 4 }), TECS_OK);   /* A4 A4 S4 S4 */
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);                 /* R4 R4 */
    CHECK(strcmp(l.buf, "A7,A7,S3,S3,R3,R3,A4,A4,S4,S4,R4,R4,") == 0);
    CHECK_EQ(h.bad, 0);
    CHECK_EQ(hooks_live(&h), 0);
    /* world free announces the sparse values still there */
    tecs_entity_t f = tecs_new(w);
    CHECK_ERR(tecs_set(w, f, so, &(Obj){ OBJ_LIVE, 5 }), TECS_OK);
    l.buf[0] = 0;
    TW_CHECK(w);
    tw_free(w);
    CHECK(strcmp(l.buf, "R5,R5,") == 0);
    CHECK_EQ(h.bad, 0);
    CHECK_EQ(hooks_live(&h), 0);
}

/* Inside an observer: an add or remove of a sparse component queues; a
** write to a value present lands at once. */
static void on_add_changes(const tecs_event_t *ev)
{
    log_t *l = ev->ctx;
    tecs_world_t *w = ev->world;
    CHECK(tecs_is_deferred(w));
    CHECK_ERR(tecs_add(w, l->other, l->sp), TECS_OK);
    CHECK(!tecs_has(w, l->other, l->sp));                  /* queued */
    CHECK_ERR(tecs_set(w, ev->entity, l->sp, &(Health){ 42 }), TECS_OK);
    CHECK_EQ(((const Health *)tecs_get(w, ev->entity, l->sp))->hp, 42);   /* at once */
    CHECK_ERR(tecs_remove(w, ev->entity, l->sp), TECS_OK);
    CHECK(tecs_has(w, ev->entity, l->sp));                 /* queued */
    l->writes++;
}

TEST(sparse_calls_from_observers)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_comp_t tag = TECS_TAG(w, T);
    log_t l = { .sp = sp };
    l.other = tecs_new(w);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_ADD, .comp = tag, .callback = on_add_changes, .ctx = &l }) != 0);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, sp, &(Health){ 1 }), TECS_OK);
    CHECK_ERR(tecs_add(w, e, tag), TECS_OK);
    CHECK_EQ(l.writes, 1);
    CHECK(tecs_has(w, l.other, sp));
    CHECK(!tecs_has(w, e, sp));
    TW_CHECK(w);
    tw_free(w);
}

/* Inside lifecycle hooks a write queues too (rows in motion). */
static tecs_comp_t hook_sp;
static tecs_entity_t hook_target;
static void ctor_writes(void *dst, int32_t n, void *ctx)
{
    tecs_world_t *w = ctx;
    memset(dst, 0, (size_t)n * sizeof(Health));
    CHECK_ERR(tecs_set(w, hook_target, hook_sp, &(Health){ 11 }), TECS_OK);
    CHECK_ERR(tecs_add(w, hook_target, hook_sp), TECS_OK);   /* queued: EEXIST later */
}

TEST(sparse_calls_from_hooks)
{
    tecs_world_t *w = tw_new();
    hook_sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_comp_t hooked = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Hooked", .size = sizeof(Health), .align = _Alignof(Health),
        .ctor = ctor_writes, .hook_ctx = w, .storage = TECS_STORAGE_SPARSE });
    hook_target = tecs_new(w);
    CHECK_ERR(tecs_set(w, hook_target, hook_sp, &(Health){ 1 }), TECS_OK);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_add(w, e, hooked), TECS_OK);
    CHECK_EQ(((const Health *)tecs_get(w, hook_target, hook_sp))->hp, 11);
    CHECK_EQ(tecs_dropped_changes(w), 1);                   /* the add: EEXIST */
    TW_CHECK(w);
    tw_free(w);
}

/* ---- deferred, delayed, iteration, systems ----------------------------- */

TEST(sparse_deferred_changes_apply_in_order)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_set(w, e, pos, &(Position){ 1, 1 }), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, sp), TECS_OK);
    CHECK(!tecs_has(w, e, sp));
    CHECK_ERR(tecs_set(w, e, sp, &(Health){ 3 }), TECS_OK);   /* queued: after the add */
    tecs_entity_t b = tecs_new(w);                            /* a queued birth ... */
    CHECK_ERR(tecs_set(w, b, sp, &(Health){ 9 }), TECS_OK);   /* ... is not folded */
    CHECK_ERR(tecs_add(w, b, pos), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(((const Health *)tecs_get(w, e, sp))->hp, 3);
    CHECK_EQ(((const Health *)tecs_get(w, b, sp))->hp, 9);
    CHECK(tecs_has(w, b, pos));
    /* a remove queued, then a set: the set queues behind it and adds again */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, sp), TECS_OK);
    CHECK_ERR(tecs_set(w, e, sp, &(Health){ 4 }), TECS_OK);
    CHECK_EQ(((const Health *)tecs_get(w, e, sp))->hp, 3);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(((const Health *)tecs_get(w, e, sp))->hp, 4);
    /* a queued modified */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_modified(w, e, sp), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK(tecs_has(w, e, sp));
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_is_alive(w, e));
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_changes_inside_iteration)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    for (int i = 0; i < 100; i++) {
        tecs_entity_t e = tecs_new(w);
        tecs_set(w, e, pos, &(Position){ (float)i, 0 });
        if (i % 2)
            tecs_set(w, e, sp, &(Health){ i });
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_iter_t it = TECS_ITER(w, .query = q);
    int rows = 0;
    while (tecs_iter_next(&it)) {
        for (int32_t i = 0; i < it.count; i++, rows++) {
            tecs_entity_t e = it.entities[i];
            if (tecs_has(w, e, sp)) {
                CHECK_ERR(tecs_set(w, e, sp, &(Health){ -1 }), TECS_OK);  /* at once */
                CHECK_EQ(((const Health *)tecs_get(w, e, sp))->hp, -1);
                CHECK_ERR(tecs_remove(w, e, sp), TECS_OK);              /* queued */
                CHECK(tecs_has(w, e, sp));
            } else {
                CHECK_ERR(tecs_add(w, e, sp), TECS_OK);
                CHECK(!tecs_has(w, e, sp));
            }
        }
    }
    CHECK_EQ(rows, 100);
    int n = 0;
    it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++)
            n += tecs_has(w, it.entities[i], sp);
    CHECK_EQ(n, 50);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

static void sys_toggle(tecs_iter_t *it)
{
    tecs_comp_t sp = *(tecs_comp_t *)it->ctx;
    for (int32_t i = 0; i < it->count; i++) {
        tecs_entity_t e = it->entities[i];
        if (tecs_has(it->world, e, sp))
            CHECK_ERR(tecs_remove(it->world, e, sp), TECS_OK);
        else
            CHECK_ERR(tecs_set(it->world, e, sp, &(Health){ 5 }), TECS_OK);
    }
}

TEST(sparse_changes_from_systems)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    for (int i = 0; i < 10; i++)
        tecs_set(w, tecs_new(w), pos, &(Position){ 0, 0 });
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "t", .query = q,
                                                    .run = sys_toggle, .ctx = &sp }) != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    int n = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++)
            n += tecs_has(w, it.entities[i], sp) &&
                 ((const Health *)tecs_get(w, it.entities[i], sp))->hp == 5;
    CHECK_EQ(n, 10);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 10);
    TW_CHECK(w);
    tw_free(w);
}

TEST(sparse_delayed_destroy_and_reset)
{
    tecs_world_t *w = tw_new();
    hook_counts h = { 0 };
    tecs_comp_t so = sparse_obj(w, "SObj", &h);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_entity_t ids[50];
    for (int i = 0; i < 50; i++) {
        ids[i] = tecs_new(w);
        CHECK_ERR(tecs_add(w, ids[i], so), TECS_OK);
        if (i % 2)
            CHECK_ERR(tecs_add(w, ids[i], sp), TECS_OK);
    }
    CHECK_EQ(hooks_live(&h), 50);
    for (int i = 0; i < 10; i++)
        CHECK_ERR(tecs_delayed_destroy(w, ids[i], NULL, NULL), TECS_OK);
    CHECK(tecs_has(w, ids[0], so));
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_OK);
    CHECK_EQ(hooks_live(&h), 40);
    CHECK(!tecs_has(w, ids[0], so));
    TW_CHECK(w);
    size_t mem = tecs_world_memory(w);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK(tecs_world_memory(w) < mem);
    TW_CHECK(w);
    tecs_entity_t e = tecs_new(w);
    CHECK(!tecs_has(w, e, so));
    CHECK_ERR(tecs_add(w, e, so), TECS_OK);
    CHECK_EQ(hooks_live(&h), 1);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
}

static void count_removes(const tecs_event_t *ev)
{
    (*(int *)ev->ctx)++;
}

TEST(sparse_reset_with_observers_announces)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    int removes = 0;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
        .event = TECS_ON_REMOVE, .comp = sp, .callback = count_removes, .ctx = &removes }));
    for (int i = 0; i < 20; i++)
        tecs_set(w, tecs_new(w), sp, &(Health){ i });
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(removes, 20);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- indexes ------------------------------------------------------------ */

TEST(sparse_field_indexes)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_entity_t e[20];
    for (int i = 0; i < 20; i++) {
        e[i] = tecs_new(w);
        if (i < 10)
            tecs_set(w, e[i], sp, &(Health){ i });
    }
    /* made over existing members: hash, ordered, unique */
    tecs_index_t *hx = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sp, .type = TECS_KEY_I32, .offset = offsetof(Health, hp) });
    tecs_index_t *ox = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_index_t *ux = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sp, .type = TECS_KEY_I32, .unique = true });
    CHECK(hx && ox && ux);
    CHECK_EQ(tecs_index_count(hx), 10);
    CHECK_EQ(tecs_index_count(ox), 10);
    CHECK(tecs_index_lookup(ux, tecs_key_int(4)) == e[4]);
    TW_CHECK(w);
    /* the unique index refuses a taken key, before anything changes */
    CHECK_ERR(tecs_set(w, e[12], sp, &(Health){ 4 }), TECS_EEXIST);
    CHECK(!tecs_has(w, e[12], sp));
    CHECK_ERR(tecs_set(w, e[5], sp, &(Health){ 4 }), TECS_EEXIST);
    CHECK_EQ(((const Health *)tecs_get(w, e[5], sp))->hp, 5);
    CHECK_ERR(tecs_add(w, e[12], sp), TECS_EEXIST);           /* key 0 is e[0]'s */
    CHECK(!tecs_has(w, e[12], sp));
    /* upkeep: add, set, modified, remove, destroy */
    CHECK_ERR(tecs_set(w, e[12], sp, &(Health){ 100 }), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(100)) == e[12]);
    CHECK_ERR(tecs_set(w, e[12], sp, &(Health){ 101 }), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(101)) == e[12]);
    ((Health *)tecs_get_mut(w, e[12], sp))->hp = 102;
    CHECK_ERR(tecs_modified(w, e[12], sp), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(102)) == e[12]);
    CHECK_ERR(tecs_remove(w, e[1], sp), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(1)) == 0);
    CHECK_ERR(tecs_destroy(w, e[2]), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(2)) == 0);
    CHECK_EQ(tecs_index_count(hx), 9);
    CHECK_EQ(tecs_index_count(ox), 9);
    TW_CHECK(w);
    /* the key of a removed member is free again */
    CHECK_ERR(tecs_set(w, e[13], sp, &(Health){ 1 }), TECS_OK);
    CHECK(tecs_index_lookup(ux, tecs_key_int(1)) == e[13]);
    CHECK_ERR(tecs_index_free(ux), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* A where over a table query, filtered by an index on a sparse field: the
** filter reads the index by entity id, so the sets need no query support. */
TEST(sparse_index_in_a_where)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    tecs_index_t *ox = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = sp, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_I32 });
    tecs_entity_t e[30];
    for (int i = 0; i < 30; i++) {
        e[i] = tecs_new(w);
        tecs_set(w, e[i], pos, &(Position){ (float)i, 0 });
        if (i % 3 == 0)
            tecs_set(w, e[i], sp, &(Health){ i });
    }
    tecs_query_t *q = TECS_QUERY(w, { .comp = pos });
    tecs_filter_t *fl = tecs_filter_new(w);
    CHECK(tecs_filter_between(fl, ox, tecs_key_int(6), tecs_key_int(15)) >= 0);
    tecs_entity_t out[30];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = fl) }, out, 30), 4);       /* 6 9 12 15 */
    CHECK(tecs_filter_test(fl, e[9]) && !tecs_filter_test(fl, e[10]));
    CHECK_ERR(tecs_remove(w, e[9], sp), TECS_OK);
    CHECK_ERR(tecs_set(w, e[20], sp, &(Health){ 7 }), TECS_OK);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = fl) }, out, 30), 4);       /* 6 7 12 15 */
    CHECK(!tecs_filter_test(fl, e[9]) && tecs_filter_test(fl, e[20]));
    tecs_filter_free(fl);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- workers ------------------------------------------------------------ */

typedef struct wctx {
    tecs_comp_t pos, sp, other_sp;
    _Atomic int bad;
} wctx;

static void worker_run(tecs_iter_t *it)
{
    wctx *c = it->ctx;
    tecs_world_t *v = it->world;
    for (int32_t i = 0; i < it->count; i++) {
        tecs_entity_t e = it->entities[i];
        if (tecs_has(v, e, c->sp)) {
            const Health *h = tecs_get(v, e, c->sp);
            if (h == NULL)
                atomic_fetch_add(&c->bad, 1);
            if (tecs_remove(v, e, c->sp) != TECS_OK)          /* queued */
                atomic_fetch_add(&c->bad, 1);
            if (!tecs_has(v, e, c->sp))
                atomic_fetch_add(&c->bad, 1);
        } else if (tecs_set(v, e, c->sp, &(Health){ 8 }) != TECS_OK) {
            atomic_fetch_add(&c->bad, 1);
        }
        /* not declared: refused */
        if (tecs_get(v, e, c->other_sp) != NULL || tecs_last_error(v) != TECS_EACCESS)
            atomic_fetch_add(&c->bad, 1);
    }
}

TEST(sparse_worker_access)
{
    tecs_world_t *w = tw_new();
    wctx c = { .pos = TECS_COMPONENT(w, Position) };
    c.sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
    c.other_sp = sparse_comp(w, "Other", sizeof(Health), _Alignof(Health));
    atomic_init(&c.bad, 0);
    for (int i = 0; i < 400; i++) {
        tecs_entity_t e = tecs_new(w);
        tecs_set(w, e, c.pos, &(Position){ 0, 0 });
        tecs_set(w, e, c.other_sp, &(Health){ i });
        if (i % 2)
            tecs_set(w, e, c.sp, &(Health){ i });
    }
    CHECK_ERR(tecs_world_set_threads(w, 2), TECS_OK);
    tecs_query_t *q = TECS_QUERY(w, { .comp = c.pos });
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){
        .name = "w", .query = q, .run = worker_run, .ctx = &c, .parallel = true,
        .parallel_min = 1, .reads = (tecs_comp_t[]){ c.sp, 0 },
        .writes = (tecs_comp_t[]){ c.sp, 0 } }) != 0);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_OK);
    CHECK_EQ(atomic_load(&c.bad), 0);
    int n = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it))
        for (int32_t i = 0; i < it.count; i++)
            n += tecs_has(w, it.entities[i], c.sp);
    CHECK_EQ(n, 200);
    TW_CHECK(w);
    tw_free(w);
}

/* ---- out of memory -------------------------------------------------------- */

/* A workload of sparse changes; each step either succeeds or fails with
** TECS_ENOMEM and leaves the digest as it was, and then succeeds when
** tried again. */
typedef struct oom_s {
    tecs_world_t *w;
    tecs_comp_t sp, so, tag;
    tecs_index_t *ux;
    tecs_entity_t e[64];
    hook_counts h;
} oom_s;

static uint64_t digest(oom_s *s)
{
    uint64_t d = (uint64_t)tecs_world_entity_count(s->w);
    for (int i = 0; i < 64; i++) {
        tecs_entity_t e = s->e[i];
        if (e == 0 || !tecs_is_alive(s->w, e))
            continue;
        const Health *hp = tecs_has(s->w, e, s->sp) ? tecs_get(s->w, e, s->sp) : NULL;
        const Obj *o = tecs_has(s->w, e, s->so) ? tecs_get(s->w, e, s->so) : NULL;
        d = d * 1000003u + (uint64_t)(hp ? hp->hp + 1 : 0);
        d = d * 1000003u + (uint64_t)(o ? o->value + 1 : 0);
        d = d * 1000003u + tecs_has(s->w, e, s->tag);
    }
    return d;
}

static int oom_step(oom_s *s, int k)
{
    tecs_world_t *w = s->w;
    int i = k % 64;
    switch (k % 9) {
    case 0: return tecs_set(w, s->e[i], s->sp, &(Health){ k + 1000 });
    case 1: return tecs_add(w, s->e[i], s->so);
    case 2: return tecs_add(w, s->e[i], s->tag);
    case 3: return tecs_remove(w, s->e[(i + 5) % 64], s->sp);
    case 4: return tecs_set(w, s->e[i], s->so, &(Obj){ OBJ_LIVE, k });
    case 5: {
        tecs_err_t err = tecs_defer_begin(w);
        if (err)
            return err;
        tecs_add(w, s->e[(i + 9) % 64], s->sp);
        tecs_remove(w, s->e[(i + 3) % 64], s->tag);
        return tecs_defer_end(w);
    }
    case 6: return tecs_remove(w, s->e[(i + 7) % 64], s->so);
    case 7: return tecs_remove(w, s->e[(i + 11) % 64], s->tag);
    default: return tecs_set(w, s->e[(i + 1) % 64], s->sp, &(Health){ -k });
    }
}

TEST(sparse_oom_at_every_allocation)
{
    long fail = 1;
    for (;; fail++) {
        tw_alloc a = { 0 };
        oom_s s = { .w = tw_new_ex(&a, 16) };
        tecs_world_t *w = s.w;
        s.sp = sparse_comp(w, "Sp", sizeof(Health), _Alignof(Health));
        s.so = sparse_obj(w, "SObj", &s.h);
        s.tag = tecs_component_new(w, &(tecs_component_desc_t){
            .name = "STag", .storage = TECS_STORAGE_SPARSE });
        for (int i = 0; i < 64; i++)
            s.e[i] = tecs_new(w);
        s.ux = tecs_index_new(w, &(tecs_index_desc_t){ .comp = s.sp, .type = TECS_KEY_I32,
                                                       .unique = true });
        CHECK(s.ux != NULL);
        a.fail_at = a.calls + fail;
        bool hit = false;
        for (int k = 0; k < 300; k++) {
            uint64_t before = digest(&s);
            long failures = a.failures;
            int err = oom_step(&s, k);
            if (a.failures != failures) {
                hit = true;
                if (err == TECS_ENOMEM || (k % 9 == 5 && err == TECS_OK)) {
                    if (err == TECS_ENOMEM)
                        CHECK(digest(&s) == before);
                } else {
                    CHECK(err == TECS_OK || err == TECS_EEXIST || err == TECS_ENOENT);
                }
                if (err == TECS_ENOMEM)
                    oom_step(&s, k);
            }
            TW_CHECK(w);
        }
        tw_free(w);
        CHECK_EQ(hooks_live(&s.h), 0);
        CHECK_EQ(s.h.bad, 0);
        if (!hit)
            break;
    }
    CHECK(fail > 10);           /* the workload allocates, and each was failed */
}
