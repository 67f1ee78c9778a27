/*
** query_oracle.c — a query's iteration checked against what each entity
** has (tecs_has, tecs_is_enabled): the oracle of the enableable and sparse
** query tests.
*/
#include "test.h"
#include "query_oracle.h"

/* What the oracle says of e for a term: has comp as the toggle reads it. */
bool oracle_term_has(tecs_world_t *w, tecs_entity_t e, const tecs_term_t *t)
{
    if (!tecs_has(w, e, t->comp))
        return false;
    if (!tecs_component_enableable(w, t->comp) || t->toggle == TECS_TOGGLE_ANY)
        return true;
    return tecs_is_enabled(w, e, t->comp) == (t->toggle == TECS_TOGGLE_ENABLED);
}

bool oracle_matches(tecs_world_t *w, tecs_entity_t e, const tecs_term_t *terms, int n)
{
    bool any = false, has_any = false;
    for (int t = 0; t < n; t++) {
        bool h = oracle_term_has(w, e, &terms[t]);
        if (terms[t].oper == TECS_WITH && !h)
            return false;
        if (terms[t].oper == TECS_NONE && h)
            return false;
        if (terms[t].oper == TECS_ANY) {
            has_any = true;
            any = any || h;
        }
    }
    return !has_any || any;
}

/* Walk q (forward or reverse) and check every step against the oracle:
** each row matches, its fields are its values or NULL as the term reads,
** every matching entity comes once. @return the rows seen. */
int32_t oracle_walk(tecs_world_t *w, tecs_query_t *q, const tecs_term_t *terms, int n,
                          const tecs_entity_t *all, int nall, int32_t flags)
{
    int32_t seen = 0;
    char *mark = calloc((size_t)nall, 1);
    tecs_iter_t it = TECS_ITER(w, .query = q, .reverse = flags);
    while (tecs_iter_next(&it)) {
        CHECK(it.count > 0);
        for (int32_t r = 0; r < it.count; r++) {
            tecs_entity_t e = it.entities[r];
            CHECK(oracle_matches(w, e, terms, n));
            for (int t = 0; t < n; t++) {
                bool h = oracle_term_has(w, e, &terms[t]);
                bool data = tecs_component_size(w, terms[t].comp) > 0 &&
                            terms[t].oper != TECS_NONE && terms[t].access != TECS_FILTER;
                if (data && h)
                    CHECK((char *)it.fields[t] + (size_t)r * tecs_component_size(w, terms[t].comp)
                          == (const char *)tecs_get(w, e, terms[t].comp));
                if (terms[t].oper == TECS_WITH)
                    CHECK(tecs_field_is_set(&it, t));
                if (terms[t].oper == TECS_OPTIONAL || terms[t].oper == TECS_ANY) {
                    CHECK_EQ(tecs_field_is_set(&it, t), h);
                    if (data && !h)
                        CHECK(it.fields[t] == NULL);
                }
            }
            uint32_t slot = TECS_ENTITY_INDEX(e);   /* the slots are 0..nall-1 */
            CHECK(slot < (uint32_t)nall && all[slot] == e && !mark[slot]);
            if (slot < (uint32_t)nall)
                mark[slot] = 1;
            seen++;
        }
    }
    int32_t want = 0;
    for (int i = 0; i < nall; i++)
        if (tecs_is_alive(w, all[i]) && oracle_matches(w, all[i], terms, n)) {
            want++;
            CHECK(mark[TECS_ENTITY_INDEX(all[i])]);
        }
    CHECK_EQ(seen, want);
    free(mark);
    return seen;
}

