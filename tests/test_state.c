/* Deferred sections, an entity's state, the query of every entity, and a
** world reset: each alone, from inside callbacks, and with bad input. */
#include "hooks.h"

/* ---- deferred sections ------------------------------------------------ */

TEST(defer_section_queues_until_the_end)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t old = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK(tecs_is_deferred(w));
    tecs_entity_t e = tecs_new(w);
    CHECK(e != 0 && !tecs_is_alive(w, e));
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_PENDING);
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 1, 2 }), TECS_OK);
    CHECK_ERR(tecs_add(w, old, pos), TECS_OK);
    CHECK(!tecs_has(w, old, pos));                  /* queued */
    CHECK_ERR(tecs_destroy(w, old), TECS_OK);
    CHECK(tecs_is_alive(w, old));
    CHECK_EQ(tecs_entity_state(w, old), TECS_ENTITY_DOOMED);
    /* Nested: the inner end applies nothing. */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_is_alive(w, e) && tecs_is_alive(w, old));
    TW_CHECK(w);                                    /* a section is no iteration */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_is_deferred(w));
    CHECK(tecs_is_alive(w, e) && !tecs_is_alive(w, old));
    CHECK_EQ(TECS_GET(w, e, pos, Position)->y, 2);
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_ALIVE);
    CHECK_EQ(tecs_entity_state(w, old), TECS_ENTITY_DEAD);
    TW_CHECK(w);
    tw_free(w);
}

TEST(defer_end_unbalanced_is_einval)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_defer_end(w), TECS_EINVAL);
    CHECK(strstr(tecs_last_error_msg(w), "no deferred section") != NULL);
    CHECK(!tecs_is_deferred(w) && tecs_is_alive(w, e));
    CHECK_ERR(tecs_defer_begin(NULL), TECS_EINVAL);
    CHECK_ERR(tecs_defer_end(NULL), TECS_EINVAL);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_EINVAL);    /* one end too many */
    CHECK(!tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

TEST(defer_section_refuses_progress_reset_and_applies)
{
    tecs_world_t *w = tw_new();
    tecs_entity_t e = tecs_new(w);
    CHECK(tecs_delayed_new(w, tecs_archetype_get(w, 0, NULL), 0, NULL) != 0);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_progress(w, 0.1), TECS_EBUSY);
    CHECK_ERR(tecs_world_reset(w), TECS_EBUSY);
    CHECK_ERR(tecs_delayed_apply(w), TECS_EBUSY);
    CHECK(strstr(tecs_last_error_msg(w), "deferred section") != NULL);
    CHECK(tecs_is_alive(w, e));
    CHECK_EQ(tecs_delayed_new_count(w), 1);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_ERR(tecs_delayed_apply(w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 2);
    tw_free(w);
}

TEST(defer_section_and_iterations_interleave)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    /* An iteration opened before the section ends inside it: nothing yet. */
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    tecs_iter_fini(&it);
    CHECK(!tecs_has(w, e, pos) && tecs_is_deferred(w));
    /* One opened inside the section outlives it: applied when it ends. */
    it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_has(w, e, pos) && tecs_is_deferred(w));
    while (tecs_iter_next(&it)) {
    }
    CHECK(tecs_has(w, e, pos) && !tecs_is_deferred(w));
    TW_CHECK(w);
    tw_free(w);
}

TEST(defer_end_reports_a_dropped_change)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);       /* queued: fails when applied */
    CHECK_ERR(tecs_defer_end(w), TECS_EEXIST);
    CHECK_EQ(tecs_dropped_changes(w), 1);
    CHECK(!tecs_is_deferred(w) && tecs_has(w, e, pos));
    TW_CHECK(w);
    tw_free(w);
}

TEST(defer_section_left_open_at_world_free)
{
    tecs_world_t *w = tw_new();
    int live = 0;
    tecs_comp_t name = text_component(w, &live);
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_set(w, e, name, &(Text){ "queued" }), TECS_OK);
    CHECK_ERR(tecs_set(w, tecs_new(w), name, &(Text){ "born" }), TECS_OK);
    CHECK_EQ(live, 2);                              /* the queued copies */
    tw_free(w);                                     /* drops them: no leak */
    CHECK_EQ(live, 0);
}

/* What callbacks do with sections; ctx is a cb_log. */
typedef struct cb_log {
    tecs_world_t *w;
    tecs_comp_t pos;
    tecs_entity_t made, target;
    int begin, end, end2, calls;
    bool leave_open;
    tecs_entity_state_t state;
} cb_log;

/* A section of the callback's own, inside its deferral: it applies nothing
** itself; the end of an outer section is refused. */
static void section_in_callback(cb_log *l)
{
    l->calls++;
    l->end2 = tecs_defer_end(l->w);                 /* the outer one: not ours */
    l->begin = tecs_defer_begin(l->w);
    l->made = tecs_new(l->w);
    l->state = tecs_entity_state(l->w, l->made);
    if (!l->leave_open)
        l->end = tecs_defer_end(l->w);
}

static bool each_sections(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    section_in_callback(ctx);
    return true;
}

static void observer_sections(const tecs_event_t *ev)
{
    section_in_callback(ev->ctx);
}

static void system_sections(tecs_iter_t *it)
{
    section_in_callback(it->ctx);
}

static void hook_sections(void *dst, int32_t n, void *ctx)
{
    cb_log *l = ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (l->w)
        section_in_callback(l);
}

TEST(defer_sections_inside_callbacks)
{
    tecs_world_t *w = tw_new();
    cb_log l = { .w = w };
    l.pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    /* An each function, inside an outer section of the program's. */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_sections, &l), TECS_OK);
    CHECK_EQ(l.end2, TECS_EINVAL);
    CHECK_EQ(l.begin, TECS_OK);
    CHECK_EQ(l.end, TECS_OK);
    CHECK_EQ(l.state, TECS_ENTITY_PENDING);
    CHECK(!tecs_is_alive(w, l.made));               /* still the program's section */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(tecs_is_alive(w, l.made));
    /* An observer. */
    memset(&l, 0, sizeof l);
    l.w = w;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD,
          .comp = TECS_TAG(w, Marked), .callback = observer_sections, .ctx = &l }) != 0);
    CHECK_ERR(tecs_add(w, e, tecs_component_lookup(w, "Marked")), TECS_OK);
    CHECK_EQ(l.calls, 1);
    CHECK_EQ(l.end2, TECS_EINVAL);                  /* no section open at all */
    CHECK(l.begin == TECS_OK && l.end == TECS_OK && tecs_is_alive(w, l.made));
    /* A system. */
    memset(&l, 0, sizeof l);
    l.w = w;
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "s", .run = system_sections,
                                                    .ctx = &l }) != 0);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK(l.calls == 1 && l.begin == TECS_OK && l.end == TECS_OK);
    CHECK(tecs_is_alive(w, l.made) && !tecs_is_deferred(w));
    /* A lifecycle hook (rows in motion): still allowed. */
    static cb_log hl;
    memset(&hl, 0, sizeof hl);
    tecs_comp_t hooked = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Hooked", .size = sizeof(Position), .align = _Alignof(Position),
        .ctor = hook_sections, .hook_ctx = &hl });
    hl.w = w;
    CHECK_ERR(tecs_add(w, e, hooked), TECS_OK);
    CHECK(hl.calls >= 1 && hl.begin == TECS_OK && hl.end == TECS_OK);
    CHECK(tecs_is_alive(w, hl.made) && !tecs_is_deferred(w));
    hl.w = NULL;
    TW_CHECK(w);
    tw_free(w);
}

TEST(defer_section_left_open_by_a_callback)
{
    tecs_world_t *w = tw_new();
    cb_log l = { .w = w, .leave_open = true };
    tecs_new(w);
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_sections, &l), TECS_OK);
    /* Its section outlives it: the world stays deferred ... */
    CHECK(tecs_is_deferred(w) && !tecs_is_alive(w, l.made));
    /* ... until an end at an outer level closes it. */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK(!tecs_is_deferred(w) && tecs_is_alive(w, l.made));
    TW_CHECK(w);
    tw_free(w);
}

/* ---- an entity's state ------------------------------------------------- */

TEST(entity_state_through_a_life)
{
    tecs_world_t *w = tw_new();
    tecs_archetype_t *root = tecs_archetype_get(w, 0, NULL);
    CHECK_EQ(tecs_entity_state(NULL, 1), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_entity_state(w, 0), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_entity_state(w, 12345), TECS_ENTITY_DEAD);      /* never handed out */
    CHECK_EQ(tecs_entity_state(w, ~(tecs_entity_t)0), TECS_ENTITY_DEAD);
    tecs_entity_t a = tecs_new(w);
    CHECK_EQ(tecs_entity_state(w, a), TECS_ENTITY_ALIVE);
    CHECK_ERR(tecs_destroy(w, a), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, a), TECS_ENTITY_DEAD);
    tecs_entity_t b = tecs_new(w);                  /* a's slot, recycled */
    CHECK_EQ(TECS_ENTITY_INDEX(b), TECS_ENTITY_INDEX(a));
    CHECK_EQ(tecs_entity_state(w, a), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_entity_state(w, b), TECS_ENTITY_ALIVE);
    CHECK_EQ(tecs_entity_state(w, b + ((tecs_entity_t)1 << 32)), TECS_ENTITY_DEAD);
    /* Delayed: a birth pending, a destroy pending, a cancelled birth. */
    tecs_entity_t d = tecs_delayed_new(w, root, 0, NULL);
    CHECK_EQ(tecs_entity_state(w, d), TECS_ENTITY_PENDING);
    tecs_entity_t c = tecs_delayed_new(w, root, 0, NULL);
    CHECK_ERR(tecs_destroy(w, c), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, c), TECS_ENTITY_DEAD);
    CHECK_ERR(tecs_delayed_destroy(w, b, NULL, NULL), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, b), TECS_ENTITY_DOOMED);
    CHECK(tecs_is_alive(w, b));
    CHECK_ERR(tecs_delayed_apply(w), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, d), TECS_ENTITY_ALIVE);
    CHECK_EQ(tecs_entity_state(w, b), TECS_ENTITY_DEAD);
    /* Deferred: a birth, a destroy, a birth with its destroy queued too. */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    tecs_entity_t p = tecs_new(w);
    CHECK_EQ(tecs_entity_state(w, p), TECS_ENTITY_PENDING);
    CHECK_ERR(tecs_destroy(w, p), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, p), TECS_ENTITY_PENDING);
    CHECK_ERR(tecs_destroy(w, d), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, d), TECS_ENTITY_DOOMED);
    TW_CHECK(w);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, p), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_entity_state(w, d), TECS_ENTITY_DEAD);
    /* A read: the last error stays as it was. */
    CHECK_ERR(tecs_destroy(w, d), TECS_EDEAD);
    CHECK_EQ(tecs_entity_state(w, d), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_last_error(w), TECS_EDEAD);
    TW_CHECK(w);
    tw_free(w);
}

TEST(entity_state_doomed_moves_with_the_entity)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);         /* queued by the iteration */
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_DOOMED);
    tecs_iter_fini(&it);
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_DEAD);
    /* Still doomed after other queued changes moved it. */
    e = tecs_new(w);
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_ERR(tecs_destroy(w, e), TECS_OK);
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    CHECK_EQ(tecs_entity_state(w, e), TECS_ENTITY_DEAD);
    TW_CHECK(w);
    tw_free(w);
}

static void kill_sees_doomed(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    *(tecs_entity_state_t *)ctx = tecs_entity_state(w, e);
}

static void remove_sees(const tecs_event_t *ev)
{
    *(tecs_entity_state_t *)ev->ctx = tecs_entity_state(ev->world, ev->entity);
}

TEST(entity_state_inside_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_state_t in_kill = TECS_ENTITY_DEAD, in_remove = TECS_ENTITY_DEAD;
    tecs_entity_t e = tecs_new(w);
    CHECK_ERR(tecs_delayed_destroy(w, e, kill_sees_doomed, &in_kill), TECS_OK);
    CHECK_ERR(tecs_delayed_apply_destroy(w), TECS_OK);
    CHECK_EQ(in_kill, TECS_ENTITY_DOOMED);          /* alive, its death under way */
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = pos,
                                                        .callback = remove_sees,
                                                        .ctx = &in_remove }) != 0);
    e = tecs_new(w);
    CHECK_ERR(TECS_SET(w, e, pos, Position, { 1, 1 }), TECS_OK);
    CHECK_ERR(tecs_remove(w, e, pos), TECS_OK);
    CHECK_EQ(in_remove, TECS_ENTITY_ALIVE);
    tw_free(w);
}

/* ---- the query of every entity ----------------------------------------- */

static bool count_each(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)w, (void)e, (void)fields;
    ++*(int *)ctx;
    return false;
}

TEST(query_zero_terms_is_every_entity)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t tag = TECS_TAG(w, Tag);
    tecs_query_t *q = tecs_query_new(w, &(tecs_query_desc_t){ 0 });
    tecs_query_t *q2 = tecs_query_all(w, 0, NULL);
    CHECK(q != NULL && q2 != NULL);
    CHECK_EQ(tecs_query_terms(q, NULL), 0);
    CHECK_EQ(tecs_query_archetype_count(q), 1);     /* the empty archetype */
    tecs_entity_t ids[40];
    for (int i = 0; i < 40; i++) {
        ids[i] = tecs_new(w);
        if (i % 3 == 1)
            TECS_SET(w, ids[i], pos, Position, { (float)i, 0 });
        if (i % 3 == 2)
            tecs_add(w, ids[i], tag);
    }
    tecs_add(w, ids[0], pos);
    tecs_add(w, ids[0], tag);                       /* an archetype made later */
    CHECK_EQ(tecs_query_archetype_count(q), tecs_world_archetype_count(w));
    CHECK_EQ(tecs_query_count(q), 40);
    tecs_entity_t out[64];
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q2) }, out, 64), 40);
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, NULL, 0), 40);
    int seen = 0, steps = 0;
    tecs_iter_t it = TECS_ITER(w, .query = q);
    while (tecs_iter_next(&it)) {
        steps++;
        seen += it.count;
        CHECK(tecs_field(&it, 0) == NULL && !tecs_field_is_set(&it, 0));
    }
    CHECK(seen == 40 && steps >= 4);
    seen = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .reverse = true) }, count_each, &seen), TECS_OK);
    CHECK_EQ(seen, 40);
    tecs_destroy(w, ids[5]);
    CHECK_EQ(tecs_query_count(q), 39);
    TW_CHECK(w);
    CHECK_ERR(tecs_query_free(q), TECS_OK);
    tw_free(w);
}

static void system_count_rows(tecs_iter_t *it, int32_t row)
{
    (void)row;
    CHECK(tecs_field(it, 0) == NULL);
    ++*(int *)it->ctx;
}

static void member_count(const tecs_event_t *ev)
{
    *(int *)ev->ctx += ev->kind == TECS_ON_ENTER ? 1 : -1;
}

TEST(query_zero_terms_where_cache_system_observer)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT });
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    int entered = 0, rows = 0;
    CHECK(x && c);
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "all", .query = q,
                                                    .each = system_count_rows,
                                                    .ctx = &rows }) != 0);
    for (int k = 0; k < 2; k++)
        CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){
            .event = k ? TECS_ON_LEAVE : TECS_ON_ENTER, .query = q,
            .callback = member_count, .ctx = &entered }) != 0);
    for (int i = 0; i < 10; i++) {
        tecs_entity_t e = tecs_new(w);
        if (i % 2)
            TECS_SET(w, e, pos, Position, { (float)i, 0 });
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_GT, tecs_key_real(4));     /* 5, 7, 9 */
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), 3);
    int seen = 0;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, count_each, &seen), TECS_OK);
    CHECK_EQ(seen, 3);
    CHECK_EQ(tecs_cache_count(c), 10);
    CHECK_EQ(entered, 10);                          /* births enter, moves do not */
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(rows, 10);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(entered, 0);                           /* every death leaves */
    CHECK_EQ(tecs_cache_count(c), 0);
    TW_CHECK(w);
    tecs_filter_free(f);
    tw_free(w);
}

/* ---- reset -------------------------------------------------------------- */

typedef struct reset_log {
    tecs_world_t *w;
    int removes, leaves, kills, refused, reads;
} reset_log;

static void on_remove_try(const tecs_event_t *ev)
{
    reset_log *l = ev->ctx;
    l->removes++;
    l->reads += tecs_is_alive(ev->world, ev->entity) && tecs_get(ev->world, ev->entity,
                                                                 ev->comp) != NULL;
    l->refused += tecs_new(ev->world) == 0 && tecs_last_error(ev->world) == TECS_EBUSY;
    l->refused += tecs_destroy(ev->world, ev->entity) == TECS_EBUSY;
    l->refused += tecs_defer_begin(ev->world) == TECS_EBUSY;
    l->refused += tecs_world_reset(ev->world) == TECS_EBUSY;
    l->refused += tecs_resource_set(ev->world, ev->comp, &(Position){ 0, 0 }) == TECS_EBUSY;
}

static void on_leave_count(const tecs_event_t *ev)
{
    ((reset_log *)ev->ctx)->leaves++;
}

static void kill_count(tecs_world_t *w, tecs_entity_t e, void *ctx)
{
    (void)w, (void)e;
    ((reset_log *)ctx)->kills++;
}

TEST(world_reset_kills_every_entity_and_keeps_the_rest)
{
    tecs_world_t *w = tw_new_ex(NULL, 16);
    hook_counts h = { 0 };
    reset_log l = { .w = w };
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t ob = obj_component(w, "Obj", &h);
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_ORDERED, .type = TECS_KEY_FLOAT });
    tecs_query_t *q = tecs_query_all(w, 1, &pos), *all = tecs_query_all(w, 0, NULL);
    tecs_cache_t *c = tecs_cache_new(w, &(tecs_cache_desc_t){ .query = q });
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = pos,
                                                        .callback = on_remove_try,
                                                        .ctx = &l }) != 0);
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_LEAVE,
          .terms = (tecs_term_t[]){ { .comp = ob } }, .term_count = 1,
          .callback = on_leave_count, .ctx = &l }) != 0);
    tecs_entity_t ids[100];
    for (int i = 0; i < 100; i++) {
        ids[i] = tecs_new(w);
        if (i % 2)
            TECS_SET(w, ids[i], pos, Position, { (float)i, 0 });
        if (i % 5 == 0)
            tecs_set(w, ids[i], ob, &(Obj){ OBJ_LIVE, i });
    }
    tecs_archetype_t *ap = tecs_archetype_get(w, 1, &pos);
    tecs_entity_t later = tecs_delayed_new(w, ap, 1, &(tecs_value_t){ ob, &(Obj){ OBJ_LIVE, 1 } });
    CHECK(later == 0);                              /* Obj is not in ap */
    tecs_archetype_t *apo = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, ob });
    later = tecs_delayed_new(w, apo, 1, &(tecs_value_t){ ob, &(Obj){ OBJ_LIVE, 1 } });
    CHECK_ERR(tecs_delayed_destroy(w, ids[3], kill_count, &l), TECS_OK);
    CHECK_ERR(tecs_resource_set(w, pos, &(Position){ 5, 6 }), TECS_OK);
    int32_t narch = tecs_world_archetype_count(w);
    CHECK_EQ(hooks_live(&h), 21);                   /* 20 entities, 1 queued */

    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(tecs_last_error(w), TECS_OK);
    CHECK_EQ(tecs_world_entity_count(w), 0);
    CHECK_EQ(tecs_delayed_new_count(w) + tecs_delayed_destroy_count(w), 0);
    CHECK_EQ(hooks_live(&h), 0);
    CHECK_EQ(h.bad, 0);
    CHECK_EQ(l.removes, 50);
    CHECK_EQ(l.reads, 50);                          /* reads work, changes do not */
    CHECK_EQ(l.refused, 5 * 50);
    CHECK_EQ(((const Position *)tecs_resource_get(w, pos))->y, 6);     /* kept */
    CHECK_EQ(l.leaves, 20);
    CHECK_EQ(l.kills, 0);                           /* delayed destroys are dropped */
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(tecs_entity_state(w, ids[i]), TECS_ENTITY_DEAD);
        CHECK_ERR(tecs_add(w, ids[i], pos), TECS_EDEAD);
    }
    CHECK_EQ(tecs_entity_state(w, later), TECS_ENTITY_DEAD);
    CHECK_EQ(tecs_world_archetype_count(w), narch);
    CHECK_EQ(tecs_archetype_chunk_count(ap), 0);
    CHECK_EQ(tecs_query_count(q), 0);
    CHECK_EQ(tecs_query_count(all), 0);
    CHECK_EQ(tecs_cache_count(c), 0);
    CHECK_EQ(tecs_index_count(x), 0);
    TW_CHECK(w);
    /* Everything kept still works; old ids stay dead. */
    for (int i = 0; i < 10; i++) {
        tecs_entity_t e = tecs_new(w);
        CHECK(e != ids[0] && e != later);
        TECS_SET(w, e, pos, Position, { (float)i, 0 });
    }
    tecs_filter_t *f = tecs_filter_new(w);
    tecs_filter_cmp(f, x, TECS_LT, tecs_key_real(3));
    CHECK_EQ(tecs_iter_collect((tecs_iter_t[]){ TECS_ITER(w, .query = q, .where = f) }, NULL, 0), 3);
    CHECK_EQ(tecs_cache_count(c), 10);
    CHECK_EQ(tecs_query_count(all), 10);
    tecs_filter_free(f);
    TW_CHECK(w);
    tw_free(w);
    CHECK_EQ(hooks_live(&h), 0);
}

TEST(world_reset_memory_falls_back)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_comp_t vel = TECS_COMPONENT(w, Velocity);
    tecs_query_t *q = tecs_query_all(w, 1, &pos);
    tecs_archetype_t *pv = tecs_archetype_get(w, 2, (tecs_comp_t[]){ pos, vel });
    size_t fresh = tecs_world_memory(w);
    enum { N = 20000 };
    CHECK_ERR(tecs_new_bulk(w, pv, N, NULL, 0, NULL), TECS_OK);
    for (int i = 0; i < 1000; i++)
        tecs_delayed_new(w, pv, 0, NULL);
    CHECK(tecs_world_memory(w) > fresh + (size_t)N * 24);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    /* Back to the fresh world's, plus the id slots (12 bytes each, an
    ** array that grew by doubling to hold every slot used). */
    CHECK(tecs_world_memory(w) <= fresh + 2 * (size_t)(N + 1000) * 12 + 4096);
    CHECK_EQ(tecs_query_count(q), 0);
    TW_CHECK(w);
    /* Without watchers or with: the same end. */
    tecs_index_t *x = tecs_index_new(w, &(tecs_index_desc_t){
        .comp = pos, .kind = TECS_INDEX_HASH, .type = TECS_KEY_FLOAT });
    CHECK(x != NULL);
    CHECK_ERR(tecs_new_bulk(w, pv, N, NULL, 0, NULL), TECS_OK);
    CHECK_ERR(tecs_world_reset(w), TECS_OK);
    CHECK_EQ(tecs_index_count(x), 0);
    TW_CHECK(w);
    tw_free(w);
}

static bool each_reset(tecs_world_t *w, tecs_entity_t e, void *const *fields, void *ctx)
{
    (void)e, (void)fields;
    *(int *)ctx = tecs_world_reset(w);
    return true;
}

static void system_reset(tecs_iter_t *it)
{
    *(int *)it->ctx = tecs_world_reset(it->world);
}

static void observer_reset(const tecs_event_t *ev)
{
    *(int *)ev->ctx = tecs_world_reset(ev->world);
}

TEST(world_reset_refused_inside_iterations_and_callbacks)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    tecs_entity_t e = tecs_new(w);
    tecs_query_t *q = tecs_query_all(w, 0, NULL);
    CHECK_ERR(tecs_world_reset(NULL), TECS_EINVAL);
    tecs_iter_t it = TECS_ITER(w, .query = q);
    CHECK_ERR(tecs_world_reset(w), TECS_EBUSY);
    tecs_iter_fini(&it);
    int got = -1;
    CHECK_ERR(tecs_iter_each((tecs_iter_t[]){ TECS_ITER(w, .query = q) }, each_reset, &got), TECS_OK);
    CHECK_EQ(got, TECS_EBUSY);
    got = -1;
    CHECK(tecs_system_new(w, &(tecs_system_desc_t){ .name = "r", .run = system_reset,
                                                    .ctx = &got }) != 0);
    CHECK_ERR(tecs_progress(w, 0.0), TECS_OK);
    CHECK_EQ(got, TECS_EBUSY);
    got = -1;
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_ADD, .comp = pos,
                                                        .callback = observer_reset,
                                                        .ctx = &got }) != 0);
    CHECK_ERR(tecs_add(w, e, pos), TECS_OK);
    CHECK_EQ(got, TECS_EBUSY);
    CHECK(tecs_is_alive(w, e) && tecs_has(w, e, pos));
    TW_CHECK(w);
    tw_free(w);
}

/* ---- out of memory, a closed world, lifecycle hooks ----------------------- */

TEST(defer_begin_out_of_memory_changes_nothing)
{
    tw_alloc a = { 0 };
    tecs_world_t *w = tw_new_ex(&a, 0);
    a.fail_at = a.calls + 1;                        /* the section stack's room */
    CHECK_ERR(tecs_defer_begin(w), TECS_ENOMEM);
    CHECK(!tecs_is_deferred(w));
    CHECK_ERR(tecs_defer_end(w), TECS_EINVAL);      /* nothing was opened */
    CHECK_ERR(tecs_defer_begin(w), TECS_OK);        /* memory again */
    CHECK_ERR(tecs_defer_end(w), TECS_OK);
    TW_CHECK(w);
    tw_free(w);
}

typedef struct closed_log {
    int begin, end, reset;
    tecs_entity_state_t state;
    int calls;
} closed_log;

static void remove_while_closed(const tecs_event_t *ev)
{
    closed_log *l = ev->ctx;
    l->calls++;
    l->begin = tecs_defer_begin(ev->world);
    l->end = tecs_defer_end(ev->world);
    l->reset = tecs_world_reset(ev->world);
    l->state = tecs_entity_state(ev->world, ev->entity);
}

TEST(defer_and_reset_refused_while_the_world_is_closed)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t pos = TECS_COMPONENT(w, Position);
    closed_log l = { 0 };
    CHECK(tecs_observer_new(w, &(tecs_observer_desc_t){ .event = TECS_ON_REMOVE, .comp = pos,
                                                        .callback = remove_while_closed,
                                                        .ctx = &l }) != 0);
    TECS_SET(w, tecs_new(w), pos, Position, { 1, 1 });
    CHECK_ERR(tecs_world_reset(w), TECS_OK);        /* closed while it runs */
    CHECK_EQ(l.calls, 1);
    CHECK(l.begin == TECS_EBUSY && l.end == TECS_EBUSY && l.reset == TECS_EBUSY);
    CHECK_EQ(l.state, TECS_ENTITY_ALIVE);           /* it dies right after */
    CHECK(!tecs_is_deferred(w));
    TECS_SET(w, tecs_new(w), pos, Position, { 1, 1 });
    memset(&l, 0, sizeof l);
    tw_free(w);                                     /* closed while it runs */
    CHECK_EQ(l.calls, 1);
    CHECK(l.begin == TECS_EBUSY && l.end == TECS_EBUSY && l.reset == TECS_EBUSY);
}

static tecs_world_t *hook_world;
static int hook_reset = -1;

static void ctor_resets(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Position));
    if (hook_world)
        hook_reset = tecs_world_reset(hook_world);
}

TEST(world_reset_refused_inside_a_lifecycle_hook)
{
    tecs_world_t *w = tw_new();
    tecs_comp_t c = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Hooked", .size = sizeof(Position), .align = _Alignof(Position),
        .ctor = ctor_resets });
    tecs_entity_t e = tecs_new(w);
    hook_world = w;
    CHECK_ERR(tecs_add(w, e, c), TECS_OK);
    hook_world = NULL;
    CHECK_EQ(hook_reset, TECS_EBUSY);
    CHECK(tecs_is_alive(w, e) && tecs_has(w, e, c));
    TW_CHECK(w);
    tw_free(w);
}
