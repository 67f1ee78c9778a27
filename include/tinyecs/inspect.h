/*
** tinyecs/inspect.h — the live inspector (library tinyecs_inspect, built
** when libmicrohttpd and jansson are installed; pkg-config
** tinyecs_inspect). It serves a world over HTTP while the program runs: a
** JSON API (docs/inspector.md lists it) and a web page compiled into the
** library, so a browser pointed at http://127.0.0.1:PORT/ shows the
** entities, a selected entity's values, the archetypes, the systems' times
** and a query box, updating live. It is built on the public API only.
**
** One writer: the server's threads answer the page's files and queue every
** API request; the world is read and written only inside
** tecs_inspect_poll, which the application calls from the world's thread
** between frames (after tecs_progress, say). A poll answers the queued
** requests until opts.budget is spent and leaves the rest for the next
** poll; each answer is bounded by its page (opts.max_page entities or
** archetypes), so one poll holds the frame for about the budget. A program
** that stops polling leaves its requests waiting: they time out at the
** client.
**
** Safety: it listens on 127.0.0.1 unless opts.address says otherwise, and
** any other address needs opts.token, which every request must then carry
** (the header "Authorization: Bearer TOKEN" or the argument token=TOKEN;
** the page passes on the token of its own address). Writes (a described
** field set, a system enabled or disabled, an entity destroyed) are
** refused (403) unless opts.writes is true. A bad request gets a 4xx
** answer with a JSON body {"error": CODE, "message": TEXT} and changes
** nothing.
*/
#ifndef TINYECS_INSPECT_H
#define TINYECS_INSPECT_H

#include "../tinyecs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A running inspector: opaque. */
typedef struct tecs_inspector_t tecs_inspector_t;

/** How tecs_inspect_start serves. Zero is the default of every field. */
typedef struct tecs_inspect_opts_t {
    const char *address;        /* an IPv4 address to listen on; NULL:
                                   "127.0.0.1" (loopback only)               */
    uint16_t port;              /* 0: a free port (tecs_inspect_port)         */
    const char *token;          /* NULL, or the token every request must
                                   carry; required when address is not a
                                   loopback address. Copied                  */
    bool writes;                /* the page may set described fields, enable
                                   and disable systems, destroy entities    */
    double budget;              /* seconds one poll may spend answering;
                                   0: 0.002 (2 ms)                            */
    int32_t max_page;           /* most entities or archetypes one answer
                                   holds; 0: 200                              */
    int32_t max_clients;        /* connections at once, further ones get 429;
                                   0: 32                                      */
} tecs_inspect_opts_t;

/** Why tecs_inspect_start failed: the code and a message. */
typedef struct tecs_inspect_error_t {
    tecs_err_t code;
    char text[128];
} tecs_inspect_error_t;

/**
 * Start serving world on opts (NULL: the defaults). The server's threads
 * never touch the world: requests wait for tecs_inspect_poll.
 * @return the inspector, or NULL with *err (may be NULL) filled:
 * TECS_EINVAL (NULL world, an address that is not IPv4, a non-loopback
 * address without a token, a token above 256 bytes, a negative budget,
 * max_page or max_clients), TECS_EBUSY (the server could not start: the
 * port is taken, say; the message has the system's reason), TECS_ENOMEM.
 * The world's own last error is left as it was.
 */
tecs_inspector_t *tecs_inspect_start(tecs_world_t *world, const tecs_inspect_opts_t *opts,
                                     tecs_inspect_error_t *err);

/** The port the inspector listens on (the one it picked for port 0); 0 for
 *  NULL. */
uint16_t tecs_inspect_port(const tecs_inspector_t *inspector);

/**
 * Answer the queued requests, oldest first, until the budget is spent.
 * Call it from the world's thread at a point where the world may be read
 * and written: not inside a callback, an iteration or tecs_progress.
 * @return the number of requests answered (0 for NULL).
 */
int32_t tecs_inspect_poll(tecs_inspector_t *inspector);

/** Stop serving: requests still queued get 503, the connections close and
 *  everything is freed. Call it before tecs_world_free. NULL does nothing. */
void tecs_inspect_stop(tecs_inspector_t *inspector);

#ifdef __cplusplus
}
#endif

#endif /* TINYECS_INSPECT_H */
