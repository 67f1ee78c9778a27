/*
** inspect_serve.c — a world served by the inspector, for the HTTP and the
** browser tests and for trying the page by hand.
**
**   inspect_serve [--seconds N] [--writes] [--port P] [--check]
**
** It builds a world (a flock of moving entities with described Position
** and Velocity under a parent, an undescribed Blob, a tag, a resource, the
** systems "move" and "bounce"), starts the inspector on 127.0.0.1 (a free
** port unless --port), prints "port N" as its first line, then runs about
** 60 frames a second, polling the inspector after each, until N seconds
** (default 30) have passed.
**
** --check is the HTTP test: a second thread calls every endpoint with curl
** while the frames run, and the world's thread checks each answer against
** the world (the frames pause around a check, so the values compared are
** the ones the answer read). It exits 0 when every check passed.
*/
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tinyecs.h"
#include "tinyecs/inspect.h"
#include "tinyecs/meta.h"
#include "tinyecs/relation.h"
#include "tinyecs/resource.h"
#include "tinyecs/system.h"

typedef struct Position { float x, y; } Position;
typedef struct Velocity { float x, y; } Velocity;
typedef struct Blob { uint8_t bytes[16]; } Blob;
typedef struct Gravity { float g; } Gravity;

#define FLOCK 300

typedef struct scene {
    tecs_world_t *w;
    tecs_comp_t pos, vel, blob, bird, gravity;
    tecs_entity_t parent, first, loner;
    tecs_system_t move, bounce;
} scene;

static void move(tecs_iter_t *it)
{
    Position *p = tecs_field(it, 0);
    const Velocity *v = tecs_field(it, 1);
    for (int32_t i = 0; i < it->count; i++) {
        p[i].x += v[i].x;
        p[i].y += v[i].y;
    }
}

static void bounce(tecs_iter_t *it)
{
    Position *p = tecs_field(it, 0);
    Velocity *v = tecs_field(it, 1);
    for (int32_t i = 0; i < it->count; i++) {
        if (p[i].x < 0 || p[i].x > 1000)
            v[i].x = -v[i].x;
        if (p[i].y < 0 || p[i].y > 1000)
            v[i].y = -v[i].y;
    }
}

static void build(scene *s)
{
    tecs_world_t *w = s->w = tecs_world_new();
    s->pos = TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Position, y, TECS_TYPE_F32));
    s->vel = TECS_COMPONENT_FIELDS(w, Velocity, TECS_MEMBER(Velocity, x, TECS_TYPE_F32),
                                   TECS_MEMBER(Velocity, y, TECS_TYPE_F32));
    s->blob = TECS_COMPONENT(w, Blob);
    s->bird = tecs_component_new(w, &(tecs_component_desc_t){ .name = "Bird" });
    s->gravity = TECS_COMPONENT_FIELDS(w, Gravity, TECS_MEMBER(Gravity, g, TECS_TYPE_F32));
    TECS_RESOURCE_SET(w, s->gravity, Gravity, { 9.81f });
    tecs_comp_t childof = tecs_childof(w);
    s->parent = tecs_new(w);
    TECS_SET(w, s->parent, s->pos, Position, { 500, 500 });
    for (int i = 0; i < FLOCK; i++) {
        tecs_entity_t e = tecs_new(w);
        TECS_SET(w, e, s->pos, Position, { (float)(i * 3 % 1000), (float)(i * 7 % 1000) });
        TECS_SET(w, e, s->vel, Velocity, { (float)(i % 5) - 2.5f, (float)(i % 3) - 1.25f });
        tecs_add(w, e, s->bird);
        tecs_pair_add(w, e, childof, s->parent);
        if (i == 0)
            s->first = e;
    }
    s->loner = tecs_new(w);
    Blob b;
    for (int i = 0; i < 16; i++)
        b.bytes[i] = (uint8_t)(i * 17);
    tecs_set(w, s->loner, s->blob, &b);
    tecs_query_t *q = TECS_QUERY(w, { .comp = s->pos }, { .comp = s->vel, .access = TECS_READ });
    s->move = tecs_system_new(w, &(tecs_system_desc_t){ .name = "move", .query = q, .run = move });
    tecs_query_t *q2 = TECS_QUERY(w, { .comp = s->pos, .access = TECS_READ }, { .comp = s->vel });
    s->bounce = tecs_system_new(w, &(tecs_system_desc_t){ .name = "bounce", .query = q2,
                                                         .run = bounce });
}

/* ---- the check: curl in a second thread, the world read in the first --- */

/* What the checker thread asks of the world's thread. */
typedef struct mailbox {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool paused;                /* no frames while set                         */
    bool hold_polls;            /* no polls while set                          */
    void (*check)(scene *, json_t *, void *); /* run by the world's thread */
    json_t *doc;
    void *arg;
    bool done;                  /* the checker has finished                    */
    int failures;
} mailbox;

static mailbox box = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0, 0,
                       0 };
static uint16_t ports[4];       /* plain, token, writes, crowd */
static char stop_file[64];

static void failf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "inspect_serve: check failed: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    box.failures++;
}
#define CHECK(c, ...) ((c) ? (void)0 : failf(__VA_ARGS__))

/* One HTTP call through curl: the status, and the body parsed as JSON
** into *doc (NULL when it is not JSON). extra: curl's options. */
static int http(const char *extra, const char *url, json_t **doc, char **raw)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "curl -s --path-as-is --max-time 20 -w '\\n%%{http_code}' %s '%s'",
             extra, url);
    FILE *f = popen(cmd, "r");
    if (f == NULL)
        return -1;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap)
            buf = realloc(buf, cap *= 2);
    }
    pclose(f);
    buf[len] = 0;
    char *nl = strrchr(buf, '\n');
    int status = nl ? atoi(nl + 1) : -1;
    if (nl)
        *nl = 0;
    if (doc)
        *doc = json_loads(buf, 0, NULL);
    if (raw)
        *raw = buf;
    else
        free(buf);
    return status;
}

/* Run fn(scene, doc, arg) on the world's thread and wait for it. */
static void on_world(void (*fn)(scene *, json_t *, void *), json_t *doc, void *arg)
{
    pthread_mutex_lock(&box.lock);
    box.check = fn;
    box.doc = doc;
    box.arg = arg;
    while (box.check)
        pthread_cond_wait(&box.cond, &box.lock);
    pthread_mutex_unlock(&box.lock);
}

static void set_flag(bool *flag, bool v)
{
    pthread_mutex_lock(&box.lock);
    *flag = v;
    pthread_mutex_unlock(&box.lock);
    /* The world's thread sees it at its next turn: a frame is 16 ms. */
    nanosleep(&(struct timespec){ 0, 60000000L }, NULL);
}

static char *url(int which, const char *fmt, ...)
{
    static char buf[2048];
    int n = snprintf(buf, sizeof buf, "http://127.0.0.1:%u", ports[which]);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

static bool same_id(json_t *j, tecs_entity_t e)
{
    return json_is_array(j) && json_array_size(j) == 2 &&
           json_integer_value(json_array_get(j, 0)) == TECS_ENTITY_INDEX(e) &&
           json_integer_value(json_array_get(j, 1)) == TECS_ENTITY_GENERATION(e);
}

static void check_world(scene *s, json_t *d, void *arg)
{
    (void)arg;
    CHECK(json_integer_value(json_object_get(d, "entities")) == tecs_world_entity_count(s->w),
          "/api/world entities");
    CHECK(json_integer_value(json_object_get(d, "components")) ==
              tecs_world_component_count(s->w), "/api/world components");
    CHECK(json_integer_value(json_object_get(d, "archetypes")) ==
              tecs_world_archetype_count(s->w), "/api/world archetypes");
    CHECK(json_integer_value(json_object_get(d, "memory")) > 0, "/api/world memory");
    CHECK(json_integer_value(json_object_get(d, "frame")) == tecs_world_frame_count(s->w),
          "/api/world frame");
    CHECK(json_is_false(json_object_get(d, "writes")), "/api/world writes");
}

static void check_components(scene *s, json_t *d, void *arg)
{
    (void)arg;
    json_t *cs = json_object_get(d, "components");
    CHECK(json_array_size(cs) == (size_t)tecs_world_component_count(s->w), "component count");
    size_t i;
    json_t *c;
    bool seen_pos = false;
    json_array_foreach(cs, i, c) {
        tecs_comp_t id = (tecs_comp_t)json_integer_value(json_object_get(c, "id"));
        CHECK(strcmp(json_string_value(json_object_get(c, "name")),
                     tecs_component_name(s->w, id)) == 0, "component %u name", id);
        CHECK(json_integer_value(json_object_get(c, "size")) ==
                  (json_int_t)tecs_component_size(s->w, id), "component %u size", id);
        if (id == s->pos) {
            json_t *f = json_object_get(c, "fields");
            seen_pos = json_array_size(f) == 2 &&
                       strcmp(json_string_value(json_object_get(json_array_get(f, 1), "name")),
                              "y") == 0;
        }
    }
    CHECK(seen_pos, "Position's fields");
}

static void check_archetypes(scene *s, json_t *d, void *arg)
{
    (void)arg;
    CHECK(json_integer_value(json_object_get(d, "total")) == tecs_world_archetype_count(s->w),
          "archetype total");
    json_int_t sum = 0;
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(d, "archetypes"), i, a)
        sum += json_integer_value(json_object_get(a, "entities"));
    CHECK(sum == tecs_world_entity_count(s->w), "archetypes' entities add up: %lld",
          (long long)sum);
}

static void check_entity(scene *s, json_t *d, void *arg)
{
    (void)arg;
    const Position *p = TECS_GET(s->w, s->first, s->pos, Position);
    json_t *jp = json_object_get(json_object_get(d, "components"), "Position");
    CHECK(same_id(json_object_get(d, "id"), s->first), "entity id");
    CHECK(p && (float)json_number_value(json_object_get(jp, "x")) == p->x &&
              (float)json_number_value(json_object_get(jp, "y")) == p->y,
          "entity Position is the world's");
    CHECK(json_is_true(json_object_get(json_object_get(d, "components"), "Bird")), "tag");
    CHECK(same_id(json_object_get(d, "parent"), s->parent), "entity parent");
}

static void check_loner(scene *s, json_t *d, void *arg)
{
    (void)arg;
    json_t *b = json_object_get(json_object_get(d, "components"), "Blob");
    const Blob *v = TECS_GET(s->w, s->loner, s->blob, Blob);
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", v->bytes[i]);
    CHECK(json_integer_value(json_object_get(b, "size")) == 16 &&
              strcmp(json_string_value(json_object_get(b, "bytes")), hex) == 0,
          "an undescribed value is its size and bytes");
}

static void check_tree(scene *s, json_t *d, void *arg)
{
    json_int_t want = 0;
    if (arg) {
        want = FLOCK;
    } else {
        tecs_comp_t childof = tecs_childof(s->w);
        tecs_query_t *q = TECS_QUERY(s->w, { .comp = childof, .oper = TECS_NONE });
        want = tecs_query_count(q);
        tecs_query_free(q);
    }
    CHECK(json_integer_value(json_object_get(d, "total")) == want, "tree total %lld",
          (long long)want);
}

static void check_query(scene *s, json_t *d, void *arg)
{
    (void)arg;
    tecs_query_t *q = TECS_QUERY(s->w, { .comp = s->pos, .access = TECS_READ },
                                 { .comp = s->vel, .oper = TECS_NONE });
    CHECK(json_integer_value(json_object_get(d, "total")) == tecs_query_count(q),
          "query total");
    tecs_query_free(q);
}

static void check_paged(scene *s, json_t *d, void *arg)
{
    (void)s;
    (void)arg;
    CHECK(json_array_size(json_object_get(d, "entities")) == 10 &&
              json_integer_value(json_object_get(d, "offset")) == 5 &&
              json_integer_value(json_object_get(d, "total")) == FLOCK,
          "a page of 10 from 5");
}

static void check_systems(scene *s, json_t *d, void *arg)
{
    (void)arg;
    size_t i;
    json_t *j;
    int seen = 0;
    json_array_foreach(json_object_get(d, "systems"), i, j) {
        tecs_system_t id = (tecs_system_t)json_integer_value(json_object_get(j, "id"));
        tecs_system_stats_t st;
        tecs_system_stats(s->w, id, &st);
        CHECK(strcmp(json_string_value(json_object_get(j, "name")),
                     tecs_system_name(s->w, id)) == 0, "system name");
        CHECK(json_integer_value(json_object_get(j, "runs")) == st.runs && st.runs > 0,
              "system runs");
        CHECK(json_is_boolean(json_object_get(j, "enabled")) &&
                  json_is_true(json_object_get(j, "enabled")) == tecs_system_enabled(s->w, id),
              "system enabled");
        seen += id == s->move || id == s->bounce;
    }
    CHECK(seen == 2, "both systems listed");
}

static void check_resources(scene *s, json_t *d, void *arg)
{
    (void)s;
    (void)arg;
    json_t *r = json_array_get(json_object_get(d, "resources"), 0);
    CHECK(r && strcmp(json_string_value(json_object_get(r, "name")), "Gravity") == 0 &&
              (float)json_number_value(json_object_get(json_object_get(r, "value"), "g")) ==
                  9.81f, "the resource Gravity");
}

/* After a refused or bad request: the world is as it was. */
static void check_unchanged(scene *s, json_t *d, void *arg)
{
    (void)d;
    (void)arg;
    CHECK(tecs_world_entity_count(s->w) == FLOCK + 2, "no entity lost");
    CHECK(tecs_is_alive(s->w, s->first), "the first bird lives");
    CHECK(tecs_system_enabled(s->w, s->move), "move still enabled");
    CHECK(tecs_world_check(s->w) == TECS_OK, "tecs_world_check");
}

static void check_written(scene *s, json_t *d, void *arg)
{
    (void)d;
    (void)arg;
    const Position *p = TECS_GET(s->w, s->loner, s->pos, Position);
    CHECK(p == NULL, "the loner has no Position");
    const Position *q = TECS_GET(s->w, s->parent, s->pos, Position);
    CHECK(q && q->x == 42.5f && q->y == 500, "POST /api/set wrote x");
    CHECK(!tecs_system_enabled(s->w, s->bounce), "POST /api/system disabled bounce");
    CHECK(!tecs_is_alive(s->w, s->loner), "POST /api/destroy destroyed the loner");
}

static void expect_error(int which, const char *extra, const char *path, int want)
{
    json_t *doc = NULL;
    int got = http(extra, url(which, "%s", path), &doc, NULL);
    CHECK(got == want, "%s %s: status %d, not %d", extra, path, got, want);
    CHECK(json_is_string(json_object_get(doc, "error")), "%s: a JSON error", path);
    json_decref(doc);
}

static void get_check(int which, const char *path, void (*fn)(scene *, json_t *, void *),
                      void *arg)
{
    json_t *doc = NULL;
    int got = http("", url(which, "%s", path), &doc, NULL);
    CHECK(got == 200 && doc, "GET %s: status %d", path, got);
    if (got == 200 && doc)
        on_world(fn, doc, arg);
    json_decref(doc);
}

static void *checker(void *arg)
{
    scene *s = arg;
    char id[64], parent[64], loner[64];
    snprintf(id, sizeof id, "%u.%u", TECS_ENTITY_INDEX(s->first),
             TECS_ENTITY_GENERATION(s->first));
    snprintf(parent, sizeof parent, "%u.%u", TECS_ENTITY_INDEX(s->parent),
             TECS_ENTITY_GENERATION(s->parent));
    snprintf(loner, sizeof loner, "%u.%u", TECS_ENTITY_INDEX(s->loner),
             TECS_ENTITY_GENERATION(s->loner));
    char path[256];

    /* The page and its files. */
    char *raw = NULL;
    CHECK(http("", url(0, "/"), NULL, &raw) == 200 && strstr(raw, "<") != NULL, "GET /");
    free(raw);
    expect_error(0, "", "/nope.js", 404);
    expect_error(0, "", "/../../etc/passwd", 404);
    expect_error(0, "", "/%2e%2e/etc/passwd", 404);
    expect_error(0, "-X DELETE", "/index.html", 405);

    /* Every endpoint, read while the frames pause. */
    set_flag(&box.paused, true);
    get_check(0, "/api/world", check_world, NULL);
    get_check(0, "/api/components", check_components, NULL);
    get_check(0, "/api/archetypes", check_archetypes, NULL);
    snprintf(path, sizeof path, "/api/entity?id=%s", id);
    get_check(0, path, check_entity, NULL);
    snprintf(path, sizeof path, "/api/entity?id=%s", loner);
    get_check(0, path, check_loner, NULL);
    get_check(0, "/api/tree", check_tree, NULL);
    snprintf(path, sizeof path, "/api/tree?parent=%s", parent);
    get_check(0, path, check_tree, s);
    get_check(0, "/api/query?q=Position,%20!Velocity", check_query, NULL);
    get_check(0, "/api/query?q=Position%20Velocity%20?Blob&offset=5&limit=10", check_paged,
              NULL);
    get_check(0, "/api/systems", check_systems, NULL);
    get_check(0, "/api/resources", check_resources, NULL);
    set_flag(&box.paused, false);

    /* Bad requests: a 4xx with a JSON error, and nothing changes. */
    expect_error(0, "", "/api/entity?id=abc", 400);
    expect_error(0, "", "/api/entity?id=999999.1", 404);
    snprintf(path, sizeof path, "/api/entity?id=%u.%u", TECS_ENTITY_INDEX(s->first),
             TECS_ENTITY_GENERATION(s->first) + 1);
    expect_error(0, "", path, 404);
    expect_error(0, "", "/api/archetypes?limit=-1", 400);
    expect_error(0, "", "/api/archetypes?offset=99999999999999999999", 400);
    expect_error(0, "", "/api/query?q=Nope", 400);
    expect_error(0, "", "/api/query?q=!!", 400);
    expect_error(0, "", "/api/nope", 404);
    expect_error(0, "-X PUT", "/api/world", 405);
    snprintf(path, sizeof path, "-X POST -H 'Content-Type: application/json' -d "
                                "'{\"id\": \"%s\"}'", id);
    expect_error(0, path, "/api/destroy", 403);
    char big[] = "/tmp/inspect_body_XXXXXX";
    int fd = mkstemp(big);
    if (fd >= 0) {
        static char zeros[70000];
        memset(zeros, 'a', sizeof zeros);
        CHECK(write(fd, zeros, sizeof zeros) == (ssize_t)sizeof zeros, "write %s", big);
        close(fd);
        snprintf(path, sizeof path, "-X POST --data-binary @%s", big);
        expect_error(0, path, "/api/destroy", 413);
        unlink(big);
    }
    on_world(check_unchanged, NULL, NULL);

    /* The token: refused without it, taken from the header or the URL. */
    expect_error(1, "", "/api/world", 401);
    expect_error(1, "-H 'Authorization: Bearer wrong'", "/api/world", 401);
    CHECK(http("-H 'Authorization: Bearer s3cret'", url(1, "/api/world"), NULL, NULL) == 200,
          "the token in the header");
    CHECK(http("", url(1, "/api/world?token=s3cret"), NULL, NULL) == 200,
          "the token in the URL");

    /* Writes, where the application turned them on. */
    snprintf(path, sizeof path, "-X POST -d '{\"id\": \"%s\", \"component\": \"Position\", "
                                "\"field\": \"x\", \"value\": 42.5}'", parent);
    CHECK(http(path, url(2, "/api/set"), NULL, NULL) == 200, "POST /api/set");
    CHECK(http("-X POST -d '{\"name\": \"bounce\", \"enabled\": false}'", url(2, "/api/system"),
               NULL, NULL) == 200, "POST /api/system");
    snprintf(path, sizeof path, "-X POST -d '{\"id\": \"%s\"}'", loner);
    CHECK(http(path, url(2, "/api/destroy"), NULL, NULL) == 200, "POST /api/destroy");
    expect_error(2, "-X POST -d 'not json'", "/api/destroy", 400);
    set_flag(&box.paused, true);
    on_world(check_written, NULL, NULL);
    set_flag(&box.paused, false);

    /* A crowd: with polls held, 8 clients at once on an inspector that
    ** takes 2; those beyond get 429 at once, the others their answer when
    ** the polls resume (after a second, while curl waits). */
    set_flag(&box.hold_polls, true);
    char cmd[2048] = "curl -s -Z --parallel-max 8 --max-time 20 -w '%{http_code} '";
    char *end = cmd + strlen(cmd);
    for (int i = 0; i < 8; i++)
        end += sprintf(end, " -o /dev/null '%s'", url(3, "/api/world"));
    strcpy(end, " 2>/dev/null");
    FILE *f = popen(cmd, "r");
    char codes[256] = "";
    if (f) {
        size_t n = fread(codes, 1, sizeof codes - 1, f);
        codes[n] = 0;
        pclose(f);
    }
    int ok = 0, busy = 0;
    for (char *c = strtok(codes, " "); c; c = strtok(NULL, " ")) {
        ok += strcmp(c, "200") == 0;
        busy += strcmp(c, "429") == 0;
    }
    CHECK(busy >= 1 && ok >= 2, "a crowd: %d answered, %d told 429", ok, busy);
    set_flag(&box.hold_polls, false);

    /* A request still queued when the inspector stops gets 503: one is
    ** left waiting (polls held) as the checks end; main reads its status
    ** after tecs_inspect_stop. */
    set_flag(&box.hold_polls, true);
    snprintf(cmd, sizeof cmd, "curl -s -o /dev/null --max-time 10 -w '%%{http_code}' '%s' "
                              "> %s 2>/dev/null &", url(0, "/api/world"), stop_file);
    CHECK(system(cmd) == 0, "%s", cmd);
    nanosleep(&(struct timespec){ 0, 300000000L }, NULL);
    pthread_mutex_lock(&box.lock);
    box.done = true;
    pthread_mutex_unlock(&box.lock);
    return NULL;
}

/* The status the request left waiting at the stop got. */
static void check_stop_answer(void)
{
    char got[16] = "";
    for (int i = 0; i < 50 && strcmp(got, "503") != 0; i++) {
        nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
        FILE *f = fopen(stop_file, "r");
        if (f) {
            size_t n = fread(got, 1, sizeof got - 1, f);
            got[n] = 0;
            fclose(f);
        }
    }
    CHECK(strcmp(got, "503") == 0, "a request queued at the stop got '%s', not 503", got);
    unlink(stop_file);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static tecs_inspector_t *start(scene *s, tecs_inspect_opts_t o)
{
    tecs_inspect_error_t err;
    tecs_inspector_t *ins = tecs_inspect_start(s->w, &o, &err);
    if (ins == NULL) {
        fprintf(stderr, "inspect_serve: %s\n", err.text);
        exit(1);
    }
    return ins;
}

int main(int argc, char **argv)
{
    double seconds = 30;
    bool writes = false, check = false;
    uint16_t port = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = (uint16_t)atoi(argv[++i]);
        else if (strcmp(argv[i], "--writes") == 0)
            writes = true;
        else if (strcmp(argv[i], "--check") == 0)
            check = true;
        else {
            fprintf(stderr, "usage: inspect_serve [--seconds N] [--writes] [--port P] "
                            "[--check]\n");
            return 2;
        }
    }
    scene s;
    build(&s);
    tecs_inspector_t *ins[4] = { start(&s, (tecs_inspect_opts_t){ .port = port,
                                                                  .writes = writes }) };
    int nins = 1;
    if (check) {
        ins[1] = start(&s, (tecs_inspect_opts_t){ .token = "s3cret" });
        ins[2] = start(&s, (tecs_inspect_opts_t){ .writes = true });
        ins[3] = start(&s, (tecs_inspect_opts_t){ .max_clients = 2 });
        nins = 4;
    }
    for (int i = 0; i < nins; i++)
        ports[i] = tecs_inspect_port(ins[i]);
    printf("port %u\n", ports[0]);
    fflush(stdout);
    pthread_t t;
    snprintf(stop_file, sizeof stop_file, "/tmp/inspect_stop_%ld", (long)getpid());
    if (check)
        pthread_create(&t, NULL, checker, &s);
    double end = now_seconds() + seconds, held_since = 0;
    bool stop = false;
    while (!stop && now_seconds() < end) {
        pthread_mutex_lock(&box.lock);
        bool paused = box.paused, hold = box.hold_polls;
        if (box.check) {
            box.check(&s, box.doc, box.arg);
            box.check = NULL;
            pthread_cond_broadcast(&box.cond);
        }
        stop = box.done;
        pthread_mutex_unlock(&box.lock);
        if (!paused)
            tecs_progress(s.w, 1.0f / 60);
        /* Held polls resume by themselves after a second. */
        if (hold && held_since == 0)
            held_since = now_seconds();
        if (!hold)
            held_since = 0;
        if (!hold || now_seconds() - held_since > 1.0)
            for (int i = 0; i < nins; i++)
                tecs_inspect_poll(ins[i]);
        nanosleep(&(struct timespec){ 0, check ? 4000000L : 16000000L }, NULL);
    }
    if (check) {
        if (!stop)
            failf("the checks did not finish in %g seconds", seconds);
        else
            pthread_join(t, NULL);
    }
    for (int i = 0; i < nins; i++)
        tecs_inspect_stop(ins[i]);
    if (check && stop)
        check_stop_answer();
    tecs_world_free(s.w);
    if (check)
        printf("%s: %d failures\n", box.failures ? "FAILED" : "passed", box.failures);
    return box.failures ? 1 : 0;
}
