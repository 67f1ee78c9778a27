/*
** tecs_dump.c — `tecs-dump FILE`: what a snapshot holds, without loading
** it into a world (so components with serializers need no code here).
**
** It reads the format of docs/SNAPSHOT.md into a `dump` (the components,
** archetypes with their row counts, slots, free slots, sparse members,
** resources, relationships' pairs), then prints its summary. It checks
** the structure and every bound as it reads; the sections' checksums are
** tecs_snapshot_load's to verify.
**
** With --json it prints the contents instead: the snapshot is loaded into
** a fresh world (which registers every component from the file, with its
** description) and written by the JSON module (include/tinyecs/json.h):
** each entity with its values by field name. That needs the module, which
** is built where jansson is installed (TECS_DUMP_JSON), and components
** without serializers (one with a serializer is code the file lacks).
**
** Exit codes: 0 printed (or --help), 1 the file cannot be read (the
** system's reason is printed) or is not a snapshot (or cannot be loaded,
** for --json), 2 bad usage or no JSON module.
*/
#include <stdint.h>
#include <stdio.h>
#ifdef TECS_DUMP_JSON
#include "tinyecs.h"
#include "tinyecs/snapshot.h"
#include "tinyecs/json.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMPS 4096
#define MAX_ARCHS 4096

typedef struct dcomp {
    char name[256];
    uint32_t id, size, align;
    int sparse, enableable, serialized, described;
    uint32_t members;           /* sparse: members                          */
    int resource;               /* the snapshot holds its resource          */
} dcomp;

typedef struct darch {
    uint32_t ncomps;
    uint32_t comps[64];         /* places in the component table            */
    uint32_t rows;
} darch;

typedef struct dump {
    uint32_t version, flags;
    uint32_t ncomps;
    dcomp *comps;
    uint32_t slots, nfree, alive;
    uint32_t narchs;
    darch *archs;
    uint32_t nresources;
    uint64_t npairs;            /* RELS: the relationships' pairs           */
} dump;

/* A cursor over the file's bytes; a read past the end sets bad. */
typedef struct cur {
    const unsigned char *p;
    size_t left;
    int bad;
} cur;

static const unsigned char *take(cur *c, size_t n)
{
    if (c->bad || n > c->left) {
        c->bad = 1;
        return NULL;
    }
    const unsigned char *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

static uint32_t u32(cur *c)
{
    const unsigned char *p = take(c, 4);
    return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24
             : 0;
}

static uint32_t tag(cur *c, const char *want)
{
    const unsigned char *p = take(c, 4);
    if (p && memcmp(p, want, 4) != 0)
        return 0;
    return p != NULL;
}

/* Skip the values of component k for n entities. */
static void skip_values(cur *c, const dcomp *k, uint32_t n)
{
    for (uint32_t i = 0; i < n && !c->bad && k->size > 0; i++) {
        if (k->serialized)
            take(c, u32(c));
        else
            take(c, k->size);
    }
}

static const char *fail(cur *c, const char *why)
{
    c->bad = 1;
    return why;
}

static const char *read_comps(cur *c, dump *d)
{
    if (!tag(c, "COMP"))
        return fail(c, "no component table");
    d->ncomps = u32(c);
    if (d->ncomps >= MAX_COMPS)
        return fail(c, "too many components");
    d->comps = calloc(d->ncomps + 1, sizeof *d->comps);
    for (uint32_t i = 0; i < d->ncomps && !c->bad; i++) {
        dcomp *k = &d->comps[i];
        k->id = u32(c);
        uint32_t len = u32(c);
        const unsigned char *name = take(c, len < sizeof k->name ? len : (size_t)-1);
        if (name)
            memcpy(k->name, name, len);
        k->size = u32(c);
        k->align = u32(c);
        const unsigned char *f = take(c, 4 + 8);
        if (f)
            k->sparse = f[0], k->enableable = f[1], k->serialized = f[2];
        uint32_t nfields = u32(c);          /* its description: skipped here */
        if (nfields > 256)
            return fail(c, "a component has too many fields");
        for (uint32_t j = 0; j < nfields && !c->bad; j++)
            take(c, (size_t)u32(c) + 16);
        k->described = nfields > 0;
    }
    take(c, 16);
    return c->bad ? "the component table is cut short" : NULL;
}

static const char *read_ents(cur *c, dump *d)
{
    if (!tag(c, "ENTS"))
        return fail(c, "no entity slots");
    d->slots = u32(c);
    take(c, (size_t)d->slots * 4);
    d->nfree = u32(c);
    if (d->nfree > d->slots)
        return fail(c, "more free slots than slots");
    take(c, (size_t)d->nfree * 4);
    take(c, 16);
    return c->bad ? "the entity slots are cut short" : NULL;
}

static const char *read_arch(cur *c, dump *d)
{
    if (d->narchs == MAX_ARCHS)
        return fail(c, "too many archetypes for this tool");
    darch *a = &d->archs[d->narchs++];
    a->ncomps = u32(c);
    if (a->ncomps > 64)
        return fail(c, "an archetype has too many components");
    for (uint32_t i = 0; i < a->ncomps; i++)
        if ((a->comps[i] = u32(c)) >= d->ncomps)
            return fail(c, "an archetype names a bad component");
    a->rows = u32(c);
    if (a->rows > d->slots - d->alive)
        return fail(c, "more rows than slots");
    d->alive += a->rows;
    take(c, (size_t)a->rows * 4);
    for (uint32_t i = 0; i < a->ncomps && !c->bad; i++)
        if (!d->comps[a->comps[i]].sparse)
            skip_values(c, &d->comps[a->comps[i]], a->rows);
    for (uint32_t i = 0; i < a->ncomps && !c->bad; i++)
        if (d->comps[a->comps[i]].enableable)
            take(c, (a->rows + 7) / 8);
    take(c, 16);
    return c->bad ? "an archetype is cut short" : NULL;
}

static const char *read_sparse(cur *c, dump *d)
{
    uint32_t k = u32(c), n = u32(c);
    if (k >= d->ncomps || n > d->alive)
        return fail(c, "a sparse section is bad");
    d->comps[k].members = n;
    take(c, (size_t)n * 4);
    skip_values(c, &d->comps[k], n);
    take(c, 16);
    return c->bad ? "a sparse section is cut short" : NULL;
}

static const char *read_resources(cur *c, dump *d)
{
    d->nresources = u32(c);
    if (d->nresources > d->ncomps)
        return fail(c, "too many resources");
    for (uint32_t i = 0; i < d->nresources && !c->bad; i++) {
        uint32_t k = u32(c);
        if (k >= d->ncomps)
            return fail(c, "a resource names a bad component");
        d->comps[k].resource = 1;
        skip_values(c, &d->comps[k], 1);
    }
    take(c, 16);
    return c->bad ? "the resources are cut short" : NULL;
}

/* RELS: the relations and their pairs, counted. */
static const char *read_rels(cur *c, dump *d)
{
    uint32_t n = u32(c);
    if (n > d->ncomps)
        return fail(c, "too many relations");
    for (uint32_t i = 0; i < n && !c->bad; i++) {
        uint32_t k = u32(c);
        take(c, 4);
        uint32_t np = u32(c);
        if (k >= d->ncomps)
            return fail(c, "a relation names a bad component");
        d->npairs += np;
        for (uint32_t j = 0; j < np && !c->bad; j++) {
            take(c, 12);
            skip_values(c, &d->comps[k], 1);
        }
    }
    take(c, 16);
    return c->bad ? "the relations are cut short" : NULL;
}

/* The whole file into d; NULL, or why it is not a snapshot. */
static const char *read_dump(const unsigned char *data, size_t size, dump *d)
{
    cur c = { data, size, 0 };
    const unsigned char *h = take(&c, 24);
    if (h == NULL || memcmp(h, "TECSSNAP", 8) != 0)
        return "not a tinyecs snapshot (bad magic)";
    d->version = (uint32_t)h[8] | (uint32_t)h[9] << 8;
    d->flags = h[12];
    if (d->version != 1)
        return "an unknown snapshot version";
    const char *why;
    if ((why = read_comps(&c, d)) || (why = read_ents(&c, d)))
        return why;
    d->archs = calloc(MAX_ARCHS, sizeof *d->archs);
    for (;;) {
        const unsigned char *t = take(&c, 4);
        if (t == NULL)
            return "cut short";
        if (memcmp(t, "ARCH", 4) == 0)
            why = read_arch(&c, d);
        else if (memcmp(t, "SPRS", 4) == 0)
            why = read_sparse(&c, d);
        else if (memcmp(t, "RSRC", 4) == 0)
            break;
        else
            return "an unknown section";
        if (why)
            return why;
    }
    if ((why = read_resources(&c, d)))
        return why;
    if ((d->flags & 2) && (!tag(&c, "RELS") || (why = read_rels(&c, d))))
        return why ? why : "the relations are missing";
    if (!tag(&c, "END.") || take(&c, 16) == NULL)
        return "no end";
    return NULL;
}

/* ---- output ------------------------------------------------------------- */

static void print_summary(const dump *d, const char *path)
{
    printf("snapshot %s: version %u, saved on a %s-endian host\n", path, d->version,
           d->flags & 1 ? "big" : "little");
    printf("entities: %u alive, %u slots, %u free\n", d->alive, d->slots, d->nfree);
    printf("components: %u\n", d->ncomps);
    printf("  %-4s %-24s %8s %5s %-6s %s\n", "id", "name", "size", "align", "store", "flags");
    for (uint32_t i = 0; i < d->ncomps; i++) {
        const dcomp *k = &d->comps[i];
        printf("  %-4u %-24s %8u %5u %-6s%s%s%s%s", k->id, k->name, k->size, k->align,
               k->sparse ? "sparse" : "table", k->enableable ? " enableable" : "",
               k->serialized ? " serialized" : "", k->described ? " described" : "",
               k->resource ? " resource" : "");
        if (k->sparse)
            printf(" (%u members)", k->members);
        printf("\n");
    }
    printf("archetypes: %u\n", d->narchs);
    for (uint32_t i = 0; i < d->narchs; i++) {
        const darch *a = &d->archs[i];
        printf("  %8u entities:", a->rows);
        if (a->ncomps == 0)
            printf(" (no components)");
        for (uint32_t j = 0; j < a->ncomps; j++)
            printf(" %s", d->comps[a->comps[j]].name);
        printf("\n");
    }
    printf("resources: %u\n", d->nresources);
    if (d->flags & 2)
        printf("pairs: %llu\n", (unsigned long long)d->npairs);
}

/* The file's bytes, or NULL: *why is NULL when it cannot be opened (errno
** says why), else what went wrong reading it. */
static unsigned char *read_file(const char *path, size_t *size, const char **why)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *p = malloc(cap);
    for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            unsigned char *q = realloc(p, cap *= 2);
            if (q == NULL)
                free(p);
            p = q;
        }
    }
    if (p == NULL)
        *why = "out of memory";
    else if (ferror(f)) {
        *why = strerror(errno);
        free(p);
        p = NULL;
    }
    fclose(f);
    *size = n;
    return p;
}

/* --json: the snapshot loaded into a fresh world, written as JSON. */
static int print_json(const unsigned char *data, size_t size, const char *path)
{
#ifdef TECS_DUMP_JSON
    tecs_world_t *w = tecs_world_new();
    if (w == NULL) {
        fprintf(stderr, "tecs-dump: out of memory\n");
        return 1;
    }
    tecs_json_error_t e;
    char *text = NULL;
    if (tecs_snapshot_load_mem(w, data, size) != TECS_OK)
        fprintf(stderr, "tecs-dump: %s: %s\n", path, tecs_last_error_msg(w));
    else if ((text = tecs_json_export(w, &e)) == NULL)
        fprintf(stderr, "tecs-dump: %s: %s\n", path, e.text);
    else
        printf("%s\n", text);
    tecs_json_free(text);
    tecs_world_free(w);
    return text ? 0 : 1;
#else
    (void)data, (void)size, (void)path;
    fprintf(stderr, "tecs-dump: built without the JSON module: install jansson "
                    "(apt-get install libjansson-dev), then rerun make\n");
    return 2;
#endif
}

static void usage(FILE *to)
{
    fprintf(to, "usage: tecs-dump [--json] FILE\n"
                "  prints a tinyecs snapshot's summary: its components, archetypes,\n"
                "  entity counts and free slots; with --json, its contents as JSON\n"
                "  (each entity with its values, by field name where described)\n");
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    bool json = argc == 3 && strcmp(argv[1], "--json") == 0;
    if ((argc != 2 && !json) || argv[argc - 1][0] == '-') {
        usage(stderr);
        return 2;
    }
    size_t size = 0;
    const char *io = NULL;
    unsigned char *data = read_file(argv[argc - 1], &size, &io);
    if (data == NULL) {
        fprintf(stderr, "tecs-dump: cannot %s %s: %s\n", io ? "read" : "open",
                argv[argc - 1], io ? io : strerror(errno));
        return 1;
    }
    if (json) {
        int rc = print_json(data, size, argv[2]);
        free(data);
        return rc;
    }
    dump d = { 0 };
    const char *why = read_dump(data, size, &d);
    if (why == NULL)
        print_summary(&d, argv[1]);
    else
        fprintf(stderr, "tecs-dump: %s: %s\n", argv[1], why);
    free(d.comps);
    free(d.archs);
    free(data);
    return why ? 1 : 0;
}
