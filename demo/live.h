/*
** live.h — the flock animated in the terminal with ncurses (when CMake
** found it: TECS_DEMO_CURSES).
*/
#ifndef LIVE_H
#define LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include "boids.h"

/** True if this build has the terminal animation. */
bool live_available(void);

/** Take over the terminal. @return false if it cannot (no curses, no tty). */
bool live_begin(void);

/** Draw one frame with a status line. @return false once the user asked to
 *  quit ('q'). */
bool live_draw(boids_sim *sim, int64_t frame, int64_t frames);

/** Give the terminal back. */
void live_end(void);

#endif /* LIVE_H */
