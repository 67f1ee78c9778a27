/*
** index_fixture.h — the ground shared by the index, filter and cache tests
** (test_index.c, test_filter.c, test_cache.c): a world with every kind of
** field index, and a brute-force model of filters to check them against.
**
** fx_init makes 400 entities, most with Stats (one field of every key
** type), some with Position and a tag, and an ordered and a hash index on
** every Stats field and a spatial one on Position. A cond describes one
** condition twice: cond_build adds it to a filter, and expected() evaluates
** it entity by entity over the query, in the query's order.
*/
#ifndef TECS_TEST_INDEX_FIXTURE_H
#define TECS_TEST_INDEX_FIXTURE_H

#include "test.h"

#include <math.h>

typedef struct Stats {
    int32_t a;
    uint16_t b;
    int8_t c;
    float f;
    double d;
    char name[8];
    const char *s;
    int64_t big;
} Stats;

/* The fields of Stats, in the order of fields[]. */
enum { F_A, F_B, F_C, F_F, F_D, F_NAME, F_S, F_BIG, NFIELDS };

typedef struct fieldinfo {
    tecs_key_type_t type;
    size_t offset;
    size_t size;
    int cls;
} fieldinfo;

extern const fieldinfo fields[NFIELDS];

/* Random values over small domains (so keys repeat), NaN and -0 included. */
void random_stats(Stats *v, uint64_t *rng);

/* A world with Stats, Position, a tag, and every kind of index. */
typedef struct fx {
    tecs_world_t *w;
    tecs_comp_t stats, pos, tag;
    tecs_index_t *ord[NFIELDS];
    tecs_index_t *hash[NFIELDS];
    tecs_index_t *grid;
    tecs_query_t *q;            /* Stats, Position optional                */
    tecs_entity_t ents[600];
    int nents;
    uint64_t rng;
} fx;

void fx_init(fx *t, bool index_first);

/* A condition, evaluated by brute force or built into a filter. */
typedef struct cond {
    int op;                     /* 0..5 tecs_cmp_t, 6 between, 7 in, 8 radius, 9 box */
    int field;
    tecs_key_t k[4];
    int nk;
    float g[4];
} cond;

tecs_cond_t cond_build(fx *t, tecs_filter_t *f, const cond *c, bool hashed);

/* A key from the field's domain: an existing value or a random one. */
tecs_key_t random_key(fx *t, int field);

/* Expected: the query's order, filtered by pred. */
typedef bool (*pred_fn)(const fx *t, const void *ctx, tecs_entity_t e);

int expected(fx *t, pred_fn pred, const void *ctx, tecs_entity_t *out);
void same_ids(const tecs_entity_t *a, int na, const tecs_entity_t *b, int nb);

/* Two conditions combined. */
typedef struct combo {
    cond a, b;
    int how;                    /* 0 and, 1 or, 2 not a, 3 a and not b */
} combo;

bool pred_combo(const fx *t, const void *ctx, tecs_entity_t e);
/* Combine conditions a and b of f as a combo's `how` says (the filter's
** root is the last condition made). */
void combo_build(tecs_filter_t *f, int how, tecs_cond_t a, tecs_cond_t b);

/* Every kind and operator, alone and combined, against brute force. */
void check_random_filters(fx *t, int rounds);

/* One random change: set, remove, add, destroy and new, a raw write with
** tecs_modified, or writes through a write term with structural changes
** queued. */
void random_change(fx *t);

/* A network id, for unique indexes. */
typedef struct NetId { uint32_t id; char tagname[4]; } NetId;

#endif
