/* Compiled on its own by a test: the JSON module's header needs nothing
** but tinyecs.h (jansson stays inside the module). */
#include "tinyecs_json.h"

int main(void)
{
    return 0;
}
