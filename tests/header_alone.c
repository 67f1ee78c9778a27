/* Compiled on its own by a test: the public header needs nothing else. */
#include "tinyecs.h"

int main(void)
{
    return 0;
}
