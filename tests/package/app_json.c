/*
** app_json.c — the JSON module from outside (packaging test): the installed
** tinyecs/json.h, linked through pkg-config tinyecs_json; a world written
** and read back into another, one line printed.
*/
#include <stdio.h>
#include <string.h>
#include "tinyecs/json.h"

typedef struct Position { float x, y; } Position;

static tecs_comp_t describe(tecs_world_t *w)
{
    return TECS_COMPONENT_FIELDS(w, Position, TECS_MEMBER(Position, x, TECS_TYPE_F32),
                                 TECS_MEMBER(Position, y, TECS_TYPE_F32));
}

int main(void)
{
    tecs_world_t *a = tecs_world_new(), *b = tecs_world_new();
    if (a == NULL || b == NULL)
        return 1;
    tecs_comp_t pa = describe(a), pb = describe(b);
    for (int i = 0; i < 3; i++)
        TECS_SET(a, tecs_new(a), pa, Position, {(float)i, 0.5f});
    tecs_json_error_t err;
    char *text = tecs_json_export(a, &err);
    if (text == NULL || tecs_json_import(b, text, strlen(text), &err) != TECS_OK) {
        printf("%s\n", err.text);
        return 1;
    }
    tecs_json_free(text);
    printf("tinyecs_json: %d entities, pb %d\n", (int)tecs_world_entity_count(b), pb != 0);
    tecs_world_free(a);
    tecs_world_free(b);
    return 0;
}
