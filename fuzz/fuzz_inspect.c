/*
** fuzz_inspect — libFuzzer target for the inspector's API
** (src/inspect/api.c): the input is one request,
**
**     METHOD \n PATH \n ARGS \n BODY...
**
** ARGS being "k=v&k=v" (taken as decoded; more than the server keeps
** reach the API too), the body the rest of the input (none when the input
** has fewer lines). It is answered with writes on from the world of the
** API's tests (tests/inspect_fixture.h), built once; a write that
** succeeded makes the next input start from a fresh one, so that every
** input meets the same world.
**
** Checks beyond crashes and leaks: every answer is JSON text (an object
** with "error" for every status but 200), the status one of the
** contract's, and tecs_world_check stays TECS_OK.
*/
#include "inspect_fixture.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tw_alloc al;
static ifix fix;
static tecs_world_t *world;

/* The next line of *p (cut at '\n', which becomes NUL), or "" at the end. */
static char *line(char **p, char *end)
{
    char *s = *p;
    if (s >= end)
        return end;             /* (end points at the buffer's NUL) */
    char *nl = memchr(s, '\n', (size_t)(end - s));
    if (nl == NULL) {
        *p = end;
        return s;
    }
    *nl = '\0';
    *p = nl + 1;
    return s;
}

static bool known_status(int s)
{
    return s == 200 || s == 400 || s == 403 || s == 404 || s == 405 || s == 409 || s == 500;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (world == NULL)
        world = ifix_new(&al, &fix);
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *p = buf, *end = buf + size;
    const char *method = line(&p, end), *path = line(&p, end);
    char *args = line(&p, end);
    const char *body = p < end ? p : NULL;
    size_t body_len = body ? (size_t)(end - p) : 0;

    tecs__inspect_arg a[TECS__INSPECT_MAX_ARGS + 2];
    int32_t n = 0;
    for (char *s = args; *s && n < TECS__INSPECT_MAX_ARGS + 2;) {
        char *amp = strchr(s, '&'), *eq;
        if (amp)
            *amp = '\0';
        eq = strchr(s, '=');
        if (eq)
            *eq = '\0';
        a[n++] = (tecs__inspect_arg){ s, eq ? eq + 1 : "" };
        if (amp == NULL)
            break;
        s = amp + 1;
    }
    tecs__inspect_cfg cfg = { .writes = true, .max_page = 50 };
    tecs__inspect_req req = { method, path, n, a, body, body_len };
    char *out = NULL;
    int status = tecs__inspect_answer(world, &cfg, &req, &out);
    CHECK(known_status(status));
    CHECK(out != NULL);
    json_t *j = json_loads(out, 0, NULL);
    CHECK(json_is_object(j));
    CHECK((status == 200) == (json_object_get(j, "error") == NULL));
    json_decref(j);
    free(out);
    bool wrote = status == 200 && strcmp(method, "POST") == 0;
    free(buf);
    TW_CHECK(world);
    if (wrote) {
        ifix_free(world, &fix);
        CHECK_EQ(live_strings, 0);
        world = NULL;
    }
    return 0;
}
