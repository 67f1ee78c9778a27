/*
** query_oracle.h — a query's iteration checked against what each entity has
** (query_oracle.c).
*/
#ifndef TECS_QUERY_ORACLE_H
#define TECS_QUERY_ORACLE_H

#include "tinyecs.h"

/* Has e the component of term t, as the term's toggle reads it? */
bool oracle_term_has(tecs_world_t *w, tecs_entity_t e, const tecs_term_t *t);
/* Does e match the n terms? */
bool oracle_matches(tecs_world_t *w, tecs_entity_t e, const tecs_term_t *terms, int n);
/* Walk q (flags: true for reverse, or 0) and check each step against the
** oracle: every row matches, its fields are its values (NULL when a term
** does not hand one out), each matching entity of all[0..nall) comes once
** (their slots must be 0..nall-1). @return the rows seen. */
int32_t oracle_walk(tecs_world_t *w, tecs_query_t *q, const tecs_term_t *terms, int n,
                    const tecs_entity_t *all, int nall, int32_t flags);

#endif
