/*
** server.c — the inspector's HTTP side, on libmicrohttpd: the daemon and
** its thread, the queue of API requests, the token, the page's files.
**
** The one rule: the daemon's thread never touches the world. It answers
** the page's files (compiled in, read-only) and errors that need no world
** (a bad token, an oversized body, too many clients) itself; an API
** request is copied into a `pending` record, queued and its connection
** suspended. tecs_inspect_poll, on the world's thread, takes records from
** the queue, answers each through api.c, and resumes its connection; the
** daemon's thread then sends the answer. The lock guards the queue, the
** records' states and the connection count, nothing else.
*/
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "internal.h"
#include "inspect.h"

#define DEFAULT_BUDGET 0.002
#define DEFAULT_MAX_PAGE 200
#define DEFAULT_MAX_CLIENTS 32
#define TOKEN_MAX 256
/* How long tecs_inspect_stop waits for the 503 answers to go out. */
#define STOP_WAIT_NS 200000000L

typedef enum pend_state {
    PEND_READING = 0,           /* the body is arriving                       */
    PEND_QUEUED,                /* waiting for a poll; connection suspended   */
    PEND_DONE                   /* answered; connection resumed               */
} pend_state;

/* One request from its first call to its completion. */
typedef struct pending {
    struct pending *next;       /* in the queue, while PEND_QUEUED            */
    struct MHD_Connection *conn;
    pend_state state;
    bool too_large;
    char method[8];
    char *path;
    int32_t nargs;
    bool too_many_args;
    tecs__inspect_arg args[TECS__INSPECT_MAX_ARGS];
    char *body;
    size_t body_len;
    int status;                 /* PEND_DONE: the answer                      */
    char *text;
} pending;

struct tecs_inspector_t {
    tecs_world_t *world;
    struct MHD_Daemon *daemon;
    uint16_t port;
    tecs__inspect_cfg cfg;
    double budget;
    int32_t max_clients;
    char token[TOKEN_MAX + 1];
    size_t token_len;
    pthread_mutex_t lock;       /* guards the fields below                    */
    pending *head, *tail;
    int32_t clients;            /* open connections                           */
    int32_t inflight;           /* records not yet completed                  */
    bool stopping;
};

static const char internal_text[] =
    "{\"error\": \"internal\", \"message\": \"out of memory\"}";

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Send status with text (malloc'd, ours to free; NULL: the fixed text). */
static enum MHD_Result reply(struct MHD_Connection *c, int status, char *text)
{
    struct MHD_Response *r = text
        ? MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE)
        : MHD_create_response_from_buffer(sizeof internal_text - 1, (void *)internal_text,
                                          MHD_RESPMEM_PERSISTENT);
    if (r == NULL) {
        free(text);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, int status, const char *code,
                                   const char *message)
{
    return reply(c, status, tecs__inspect_error(code, message));
}

static const tecs__inspect_file *find_file(const char *url)
{
    if (strcmp(url, "/") == 0)
        url = "/index.html";
    for (int32_t i = 0; i < tecs__inspect_nfiles; i++)
        if (strcmp(tecs__inspect_files[i].name, url) == 0)
            return &tecs__inspect_files[i];
    return NULL;
}

static enum MHD_Result serve_file(struct MHD_Connection *c, const char *url)
{
    const tecs__inspect_file *f = find_file(url);
    if (f == NULL)
        return reply_error(c, MHD_HTTP_NOT_FOUND, "not_found", "no such file");
    struct MHD_Response *r = MHD_create_response_from_buffer(f->size, (void *)f->data,
                                                             MHD_RESPMEM_PERSISTENT);
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, f->type);
    enum MHD_Result ok = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
}

/* Compares in time independent of where the texts differ. */
static bool same_token(const tecs_inspector_t *ins, const char *given)
{
    if (given == NULL)
        return false;
    size_t n = strlen(given);
    unsigned char diff = (unsigned char)(n != ins->token_len);
    for (size_t i = 0; i < ins->token_len; i++)
        diff |= (unsigned char)(ins->token[i] ^ (i < n ? given[i] : 0));
    return diff == 0;
}

static bool token_ok(const tecs_inspector_t *ins, struct MHD_Connection *c)
{
    if (ins->token_len == 0)
        return true;
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                   MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth && strncmp(auth, "Bearer ", 7) == 0 && same_token(ins, auth + 7))
        return true;
    return same_token(ins, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token"));
}

/* Copies one URL argument into the record (the token stays behind). */
static enum MHD_Result take_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    pending *p = cls;
    if (strcmp(key, "token") == 0)
        return MHD_YES;
    if (p->nargs == TECS__INSPECT_MAX_ARGS) {
        p->too_many_args = true;
        return MHD_NO;
    }
    char *k = strdup(key);
    char *v = strdup(value ? value : "");
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return MHD_NO;
    }
    p->args[p->nargs].key = k;
    p->args[p->nargs].value = v;
    p->nargs++;
    return MHD_YES;
}

static void free_pending(pending *p)
{
    for (int32_t i = 0; i < p->nargs; i++) {
        free((char *)p->args[i].key);
        free((char *)p->args[i].value);
    }
    free(p->path);
    free(p->body);
    free(p->text);
    free(p);
}

/* Queue p and suspend its connection: the world's thread answers it. */
static enum MHD_Result enqueue(tecs_inspector_t *ins, struct MHD_Connection *c, pending *p,
                               const char *url, const char *method)
{
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, take_arg, p);
    if (p->too_many_args)
        return reply_error(c, MHD_HTTP_BAD_REQUEST, "bad_argument", "too many arguments");
    p->path = strdup(url);
    if (p->path == NULL)
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL);
    strcpy(p->method, method);
    pthread_mutex_lock(&ins->lock);
    if (ins->stopping) {
        pthread_mutex_unlock(&ins->lock);
        return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "stopping", "the inspector stops");
    }
    p->state = PEND_QUEUED;
    if (ins->tail)
        ins->tail->next = p;
    else
        ins->head = p;
    ins->tail = p;
    MHD_suspend_connection(c);
    pthread_mutex_unlock(&ins->lock);
    return MHD_YES;
}

/* A connection is admitted when it opens: the first max_clients open at
** once are served, one beyond them is marked (its socket context) and
** each of its requests told 429. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)c;
    tecs_inspector_t *ins = cls;
    static char over;
    pthread_mutex_lock(&ins->lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *socket_ctx = ins->clients >= ins->max_clients ? &over : NULL;
        ins->clients++;
    } else {
        ins->clients--;
    }
    pthread_mutex_unlock(&ins->lock);
}

static bool crowded(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info && info->socket_context != NULL;
}

/* The request handler, called by the daemon's thread: first with no
** record (one is made), then once per piece of the body, then with none
** left (the request is complete), and once more after a poll answered it
** and resumed the connection. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    tecs_inspector_t *ins = cls;
    pending *p = *con_cls;
    if (p == NULL) {
        p = calloc(1, sizeof *p);
        if (p == NULL)
            return MHD_NO;
        p->conn = c;
        pthread_mutex_lock(&ins->lock);
        ins->inflight++;
        pthread_mutex_unlock(&ins->lock);
        *con_cls = p;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (p->too_large || p->body_len + n > TECS__INSPECT_MAX_BODY) {
            p->too_large = true;
            return MHD_YES;
        }
        char *b = realloc(p->body, p->body_len + n);
        if (b == NULL) {
            p->too_large = true;
            return MHD_YES;
        }
        memcpy(b + p->body_len, upload, n);
        p->body = b;
        p->body_len += n;
        return MHD_YES;
    }
    pthread_mutex_lock(&ins->lock);
    pend_state state = p->state;
    pthread_mutex_unlock(&ins->lock);
    if (state == PEND_DONE) {
        char *text = p->text;
        p->text = NULL;
        return reply(c, p->status, text);
    }
    if (state != PEND_READING)
        return MHD_NO;
    if (!token_ok(ins, c))
        return reply_error(c, MHD_HTTP_UNAUTHORIZED, "token", "a missing or wrong token");
    if (p->too_large)
        return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "too_large", "the body is too large");
    if (crowded(c))
        return reply_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "busy", "too many clients at once");
    bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0;
    bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    bool post = strcmp(method, MHD_HTTP_METHOD_POST) == 0;
    if (strncmp(url, "/api/", 5) == 0 || strcmp(url, "/api") == 0) {
        if (!get && !post)
            return reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method",
                               "the API takes GET and POST only");
        return enqueue(ins, c, p, url, method);
    }
    if (!get && !head)
        return reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "method", "the page takes GET only");
    return serve_file(c, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why)
{
    (void)c;
    (void)why;
    tecs_inspector_t *ins = cls;
    pending *p = *con_cls;
    if (p == NULL)
        return;
    *con_cls = NULL;
    pthread_mutex_lock(&ins->lock);
    if (p->state == PEND_QUEUED) {
        pending **at = &ins->head;
        while (*at && *at != p)
            at = &(*at)->next;
        if (*at) {
            *at = p->next;
            if (ins->tail == p) {
                ins->tail = NULL;
                for (pending *q = ins->head; q; q = q->next)
                    ins->tail = q;
            }
        }
    }
    ins->inflight--;
    pthread_mutex_unlock(&ins->lock);
    free_pending(p);
}

/* Errors of the daemon go nowhere: the inspector reports through its
** answers and the world's last error. */
static void quiet_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    (void)fmt;
    (void)ap;
}

static tecs_inspector_t *refuse(tecs_inspect_error_t *err, tecs_inspector_t *ins,
                                tecs_err_t code, const char *why, int sys)
{
    if (ins) {
        pthread_mutex_destroy(&ins->lock);
        free(ins);
    }
    if (err) {
        err->code = code;
        if (sys)
            snprintf(err->text, sizeof err->text, "%s: %s", why, strerror(sys));
        else
            snprintf(err->text, sizeof err->text, "%s", why);
    }
    return NULL;
}

tecs_inspector_t *tecs_inspect_start(tecs_world_t *w, const tecs_inspect_opts_t *opts,
                                     tecs_inspect_error_t *err)
{
    if (w == NULL)
        return refuse(err, NULL, TECS_EINVAL, "tecs_inspect_start: NULL world", 0);
    tecs_inspect_opts_t o = opts ? *opts : (tecs_inspect_opts_t){ 0 };
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(o.port) };
    const char *address = o.address ? o.address : "127.0.0.1";
    if (inet_pton(AF_INET, address, &addr.sin_addr) != 1)
        return refuse(err, NULL, TECS_EINVAL, "the address is not an IPv4 address", 0);
    bool loopback = (ntohl(addr.sin_addr.s_addr) >> 24) == 127;
    size_t token_len = o.token ? strlen(o.token) : 0;
    if ((!loopback && token_len == 0) || token_len > TOKEN_MAX || o.budget < 0 ||
        o.max_page < 0 || o.max_clients < 0)
        return refuse(err, NULL, TECS_EINVAL,
                      !loopback && token_len == 0
                          ? "an address other than loopback needs a token"
                          : "a token above 256 bytes, or a negative budget, max_page or max_clients",
                      0);
    tecs_inspector_t *ins = calloc(1, sizeof *ins);
    if (ins == NULL)
        return refuse(err, NULL, TECS_ENOMEM, "out of memory", 0);
    pthread_mutex_init(&ins->lock, NULL);
    ins->world = w;
    ins->cfg.writes = o.writes;
    ins->cfg.max_page = o.max_page ? o.max_page : DEFAULT_MAX_PAGE;
    ins->budget = o.budget > 0 ? o.budget : DEFAULT_BUDGET;
    ins->max_clients = o.max_clients ? o.max_clients : DEFAULT_MAX_CLIENTS;
    if (token_len)
        memcpy(ins->token, o.token, token_len);
    ins->token_len = token_len;
    /* The daemon's own limit lies above ours, so that a crowd is told
    ** 429 rather than dropped. */
    unsigned limit = (unsigned)ins->max_clients * 2 + 8;
    errno = 0;
    ins->daemon = MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, o.port, NULL, NULL,
        on_request, ins,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_CONNECTION_LIMIT, limit,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, ins,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, ins,
        MHD_OPTION_EXTERNAL_LOGGER, quiet_log, NULL,
        MHD_OPTION_END);
    if (ins->daemon == NULL)
        return refuse(err, ins, TECS_EBUSY, "the server did not start", errno ? errno : EADDRINUSE);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(ins->daemon,
                                                           MHD_DAEMON_INFO_BIND_PORT);
    ins->port = info ? info->port : o.port;
    return ins;
}

uint16_t tecs_inspect_port(const tecs_inspector_t *ins)
{
    return ins ? ins->port : 0;
}

/* The next queued record, or NULL. */
static pending *take(tecs_inspector_t *ins)
{
    pthread_mutex_lock(&ins->lock);
    pending *p = ins->head;
    if (p) {
        ins->head = p->next;
        if (ins->head == NULL)
            ins->tail = NULL;
        p->next = NULL;
    }
    pthread_mutex_unlock(&ins->lock);
    return p;
}

/* Hand p's answer to the daemon's thread. */
static void answer(tecs_inspector_t *ins, pending *p, int status, char *text)
{
    pthread_mutex_lock(&ins->lock);
    p->status = status;
    p->text = text;
    p->state = PEND_DONE;
    pthread_mutex_unlock(&ins->lock);
    MHD_resume_connection(p->conn);
}

int32_t tecs_inspect_poll(tecs_inspector_t *ins)
{
    if (ins == NULL || tecs_is_deferred(ins->world))
        return 0;
    double end = now_seconds() + ins->budget;
    int32_t n = 0;
    pending *p;
    while ((n == 0 || now_seconds() < end) && (p = take(ins)) != NULL) {
        tecs__inspect_req req = {
            .method = p->method, .path = p->path, .nargs = p->nargs, .args = p->args,
            .body = p->body, .body_len = p->body_len,
        };
        char *text = NULL;
        int status = tecs__inspect_answer(ins->world, &ins->cfg, &req, &text);
        answer(ins, p, text ? status : MHD_HTTP_INTERNAL_SERVER_ERROR, text);
        n++;
    }
    return n;
}

void tecs_inspect_stop(tecs_inspector_t *ins)
{
    if (ins == NULL)
        return;
    pthread_mutex_lock(&ins->lock);
    ins->stopping = true;
    pthread_mutex_unlock(&ins->lock);
    pending *p;
    while ((p = take(ins)) != NULL)
        answer(ins, p, MHD_HTTP_SERVICE_UNAVAILABLE,
               tecs__inspect_error("stopping", "the inspector stops"));
    /* Give the daemon's thread a moment to send those answers. */
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(&ins->lock);
        bool busy = ins->inflight > 0;
        pthread_mutex_unlock(&ins->lock);
        if (!busy)
            break;
        nanosleep(&(struct timespec){ 0, STOP_WAIT_NS / 20 }, NULL);
    }
    MHD_stop_daemon(ins->daemon);
    pthread_mutex_destroy(&ins->lock);
    free(ins);
}
