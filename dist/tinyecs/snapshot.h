/* tinyecs/snapshot.h: in ../tinyecs.h with the rest of the API. */
#include "../tinyecs.h"
