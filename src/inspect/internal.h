/*
** inspect/internal.h — the inspector's parts: the server (server.c: the
** HTTP daemon, the request queue, the token, the page's files), the API
** (api.c: one request answered from the world, as JSON) and the page's
** files compiled in (web.c, generated from src/inspect/web/ by
** cmake/embed.cmake). api.c knows no HTTP library, so the fuzzer drives it
** directly.
*/
#ifndef TECS_INSPECT_INTERNAL_H
#define TECS_INSPECT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "tinyecs.h"

/* The most arguments a request keeps; further ones are a 400. */
#define TECS__INSPECT_MAX_ARGS 16

/* The largest body a request may carry; a longer one is a 413. */
#define TECS__INSPECT_MAX_BODY 65536

typedef struct tecs__inspect_arg {
    const char *key;            /* decoded, NUL-terminated                    */
    const char *value;          /* decoded, NUL-terminated; "" when absent    */
} tecs__inspect_arg;

/* One API request: everything api.c reads of it. */
typedef struct tecs__inspect_req {
    const char *method;         /* "GET", "POST", ...                         */
    const char *path;           /* the URL's path, "/api/...", decoded        */
    int32_t nargs;
    const tecs__inspect_arg *args;
    const char *body;           /* len bytes, not NUL-terminated; may be NULL */
    size_t body_len;
} tecs__inspect_req;

/* What api.c may do. */
typedef struct tecs__inspect_cfg {
    bool writes;
    int32_t max_page;
} tecs__inspect_cfg;

/* Answer req from the world. Returns the HTTP status and sets *out to the
** JSON text of the answer (malloc'd, NUL-terminated; the caller frees it),
** or NULL when even an error's text could not be made (then the status is
** 500 and the server sends a fixed text). Called only at a safe point. */
int tecs__inspect_answer(tecs_world_t *world, const tecs__inspect_cfg *cfg,
                         const tecs__inspect_req *req, char **out);

/* The text of an error answer {"error": code, "message": message}
** (malloc'd; NULL when out of memory). */
char *tecs__inspect_error(const char *code, const char *message);

/* One of the page's files. */
typedef struct tecs__inspect_file {
    const char *name;           /* "/index.html", ...                         */
    const char *type;           /* its Content-Type                           */
    const unsigned char *data;
    size_t size;
} tecs__inspect_file;

/* The page's files (web.c), and their count. */
extern const tecs__inspect_file tecs__inspect_files[];
extern const int32_t tecs__inspect_nfiles;

#endif /* TECS_INSPECT_INTERNAL_H */
