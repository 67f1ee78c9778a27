/* high.c — the upper layer: it may use low.c. */
#include "high.h"
int tecs_high(int x);
int tecs_high(int x)
{
    return tecs_high_twice(x);
}
