/* low.c — the bottom layer, which must not use high.h: the names in this
** comment (tecs_high_twice) and in strings do not count, the code does. */
#include "high.h"
int tecs_low(void);
int tecs_low(void)
{
    const char *s = "tecs_high_twice";
    (void)s;
    return tecs_high_twice(TECS_HIGH_ONE);
}
