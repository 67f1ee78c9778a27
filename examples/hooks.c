/*
** hooks.c — a component that owns a heap string: lifecycle hooks (ctor, dtor,
** copy, move) handle a column of values at a time; component hooks (on_add,
** on_set, on_remove) report what happened to one entity's value. */
#define _POSIX_C_SOURCE 200809L                     /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tinyecs.h"

/* Stop with a message when a result is not the one this program shows. */
static void fail(int line, const char *what)
{
    fprintf(stderr, "line %d: expected %s\n", line, what);
    exit(1);
}
#define EXPECT(c) ((c) ? (void)0 : fail(__LINE__, #c))

typedef struct Name { char *s; } Name;              /* a heap string or NULL */
static int live;                                    /* strings not yet freed */

static void name_ctor(void *dst, int32_t n, void *ctx)
{
    (void)ctx;
    memset(dst, 0, (size_t)n * sizeof(Name));       /* raw memory -> no name */
}

static void name_dtor(void *ptr, int32_t n, void *ctx)
{
    Name *v = ptr;
    (void)ctx;
    for (int32_t i = 0; i < n; i++) {
        live -= v[i].s != NULL;
        free(v[i].s);
    }
}

static void name_copy(void *dst, const void *src, int32_t n, void *ctx)
{
    Name *d = dst;
    const Name *s = src;
    name_dtor(d, n, ctx);                           /* dst holds live values */
    for (int32_t i = 0; i < n; i++) {
        d[i].s = s[i].s ? strdup(s[i].s) : NULL;
        live += d[i].s != NULL;
    }
}

static void name_move(void *dst, void *src, int32_t n, void *ctx)
{
    (void)ctx;
    memcpy(dst, src, (size_t)n * sizeof(Name));    /* src is raw memory now */
}

static void on_event(const tecs_event_t *ev)
{
    const Name *v = ev->value;
    printf("  %-9s %s\n", ev->kind == TECS_ON_ADD ? "on_add" : ev->kind == TECS_ON_SET
           ? "on_set" : "on_remove", v->s ? v->s : "(no name yet)");
    ((int *)ev->ctx)[ev->kind]++;
}

int main(void)
{
    tecs_world_t *w = tecs_world_new();
    int seen[4] = { 0 };
    tecs_comp_t name = tecs_component_new(w, &(tecs_component_desc_t){
        .name = "Name", .size = sizeof(Name), .align = _Alignof(Name), .ctor = name_ctor,
        .dtor = name_dtor, .copy = name_copy, .move = name_move });
    EXPECT(tecs_component_hooks(w, name, &(tecs_hooks_t){ .on_add = on_event,
        .on_set = on_event, .on_remove = on_event, .ctx = seen }) == TECS_OK);
    tecs_entity_t e = tecs_new(w);
    EXPECT(tecs_set(w, e, name, &(Name){ "ada" }) == TECS_OK); /* ctor, copy: a strdup */
    EXPECT(tecs_add(w, e, TECS_TAG(w, Player)) == TECS_OK); /* a move to {Name, Player} */
    EXPECT(strcmp(TECS_GET(w, e, name, Name)->s, "ada") == 0 && live == 1);
    EXPECT(tecs_remove(w, e, name) == TECS_OK && live == 0);    /* on_remove, dtor */
    EXPECT(tecs_set(w, e, name, &(Name){ "bob" }) == TECS_OK);
    tecs_world_free(w);                             /* on_remove, dtor of the rest */
    printf("%d strings left after the world is freed\n", live);
    EXPECT(seen[TECS_ON_ADD] + seen[TECS_ON_SET] + seen[TECS_ON_REMOVE] == 6 && live == 0);
    return 0;
}
