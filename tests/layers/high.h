/* high.h — the upper layer's header: an inline function and a macro. */
static inline int tecs_high_twice(int x)
{
    return 2 * x;
}
#define TECS_HIGH_ONE 1
