/*
** bench_inspect.c — what the live inspector costs (built with
** tinyecs_inspect only).
**
**   frame_inspect   systems_wide's frame (bench_systems.c) with the
**                   inspector started on the world and tecs_inspect_poll
**                   called after each tecs_progress, no client connected:
**                   ns per entity a frame, and its ratio to systems_wide,
**                   the same frame without the inspector
**   inspect_entity  n requests GET /api/entity?id=S.G, one after another
**                   on one keep-alive connection over loopback from a
**                   client thread, while the world's thread polls in a
**                   loop: microseconds from sending a request to the end
**                   of its answer, the mean over the n
**
** The client is a plain socket: it writes the request, reads the headers
** up to the blank line and then Content-Length bytes of body. An answer
** without Content-Length is read to the end of the connection, which is
** then opened again; one that is not a 200 with the entity's Position
** fails the row's check.
*/
#define _POSIX_C_SOURCE 200809L
#include "bench.h"
#include "tinyecs/inspect.h"
#include "tinyecs/meta.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- frame_inspect ------------------------------------------------------ */

static void *inspect_hook_start(tecs_world_t *w)
{
    tecs_inspect_error_t err;
    tecs_inspector_t *in = tecs_inspect_start(w, NULL, &err);
    CHECK(in != NULL, "tecs_inspect_start: %s", err.text);
    return in;
}

static void inspect_hook_frame(void *in)
{
    tecs_inspect_poll(in);
}

static void inspect_hook_stop(void *in)
{
    tecs_inspect_stop(in);
}

double sc_frame_inspect(int64_t n)
{
    static const wide_hook hook = { inspect_hook_start, inspect_hook_frame, inspect_hook_stop };
    return systems_wide_hooked(n, &hook);
}

/* ---- inspect_entity ----------------------------------------------------- */

enum { ENTITIES = 1000, ANSWER_MAX = 1 << 16 };

typedef struct client {
    uint16_t port;
    const tecs_entity_t *ids;
    int64_t requests;
    double ns;                  /* out: the time of all requests           */
    int64_t bad;                /* out: answers that were not the entity's */
    atomic_bool done;           /* set when the client has finished        */
} client;

/* A TCP connection to 127.0.0.1:port, or -1. */
static int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The value of header name in head (NUL-terminated), or -1. */
static long header_long(const char *head, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p != NULL; p = strstr(p + 2, "\r\n"))
        if (strncasecmp(p + 2, name, len) == 0 && p[2 + len] == ':')
            return strtol(p + 3 + len, NULL, 10);
    return -1;
}

/* Send one request on *fd (connecting when it is -1) and read its answer
 * into buf. @return the answer's length, or -1 when the connection failed;
 * *fd is -1 afterwards when the server closes it. */
static long request(int *fd, uint16_t port, const char *req, char *buf)
{
    if (*fd < 0 && (*fd = dial(port)) < 0)
        return -1;
    size_t len = strlen(req);
    if (write(*fd, req, len) != (ssize_t)len)
        return -1;
    long got = 0, body = -1, want = -1;
    for (;;) {
        ssize_t r = read(*fd, buf + got, (size_t)(ANSWER_MAX - 1 - got));
        if (r <= 0)
            break;
        got += r;
        buf[got] = '\0';
        char *end = body < 0 ? strstr(buf, "\r\n\r\n") : NULL;
        if (end != NULL) {
            body = end + 4 - buf;
            long cl = header_long(buf, "Content-Length");
            want = cl >= 0 ? body + cl : -1;
        }
        if (want >= 0 && got >= want)
            return got;
        if (got == ANSWER_MAX - 1)
            return -1;
    }
    close(*fd);                 /* read to the end: the server closed it   */
    *fd = -1;
    return got > 0 ? got : -1;
}

static void *client_run(void *arg)
{
    client *c = arg;
    char *buf = xmalloc(ANSWER_MAX), req[256];
    int fd = -1;
    double t0 = now_ns();
    for (int64_t i = 0; buf && i < c->requests; i++) {
        tecs_entity_t e = c->ids[i % ENTITIES];
        snprintf(req, sizeof req, "GET /api/entity?id=%u.%u HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                 (unsigned)(e & 0xffffffffu), (unsigned)(e >> 32));
        long len = request(&fd, c->port, req, buf);
        c->bad += len < 0 || strncmp(buf, "HTTP/1.1 200", 12) != 0 ||
                  strstr(buf, "\"Position\"") == NULL;
    }
    c->ns = now_ns() - t0;
    if (fd >= 0)
        close(fd);
    free(buf);
    atomic_store(&c->done, true);
    return NULL;
}

double sc_inspect_entity(int64_t n)
{
    tecs_world_t *w = tecs_world_new();
    CHECK(w != NULL, "world");
    if (w == NULL)
        exit(2);
    tecs_comp_t pos = TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                            TECS_MEMBER(Position, y, TECS_TYPE_F32));
    tecs_comp_t vel = TECS_COMPONENT_FIELDS(w, Velocity, TECS_MEMBER(Velocity, x, TECS_TYPE_F32),
                                            TECS_MEMBER(Velocity, y, TECS_TYPE_F32));
    static tecs_entity_t ids[ENTITIES];
    for (int i = 0; i < ENTITIES; i++) {
        ids[i] = tecs_new(w);
        tecs_set(w, ids[i], pos, &(Position){ (float)i, (float)-i });
        tecs_set(w, ids[i], vel, &(Velocity){ 1, 1 });
    }
    tecs_inspect_error_t err;
    tecs_inspector_t *in = tecs_inspect_start(w, NULL, &err);
    CHECK(in != NULL, "tecs_inspect_start: %s", err.text);
    if (in == NULL)
        exit(2);
    client c = { .port = tecs_inspect_port(in), .ids = ids, .requests = n };
    atomic_init(&c.done, false);
    pthread_t t;
    bool started = pthread_create(&t, NULL, client_run, &c) == 0;
    CHECK(started, "the client thread did not start");
    while (started && !atomic_load(&c.done))
        tecs_inspect_poll(in);  /* the world's thread: answers at once     */
    if (started)
        pthread_join(t, NULL);
    CHECK(c.bad == 0, "%lld of %lld answers were not the entity's", (long long)c.bad,
          (long long)n);
    tecs_inspect_stop(in);
    tecs_world_free(w);
    return c.ns / 1e3 / (double)n;
}
