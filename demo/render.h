/*
** render.h — a small RGB canvas for the demo: lines, discs, colours by
** heading, the flock drawn onto it, and PNG output when libpng is present.
*/
#ifndef RENDER_H
#define RENDER_H

#include <stdbool.h>
#include <stdint.h>
#include "boids.h"

typedef struct canvas {
    int32_t w, h;
    uint8_t *rgb;               /* w * h * 3 bytes, row by row             */
} canvas;

/** Allocate a w x h canvas. @return false when out of memory. */
bool canvas_init(canvas *c, int32_t w, int32_t h);

/** Free the pixels; the canvas may be initialised again. */
void canvas_fini(canvas *c);

/** Paint every pixel one colour. */
void canvas_clear(canvas *c, uint32_t rgb);

/** One pixel; outside the canvas does nothing. */
void canvas_plot(canvas *c, int32_t x, int32_t y, uint32_t rgb);

/** A one-pixel line from (x0, y0) to (x1, y1), both ends included. */
void canvas_line(canvas *c, int32_t x0, int32_t y0, int32_t x1, int32_t y1, uint32_t rgb);

/** A filled disc. */
void canvas_disc(canvas *c, float cx, float cy, float r, uint32_t rgb);

/** The colour of a heading: hue from the angle of (vx, vy), full value. */
uint32_t heading_colour(float vx, float vy);

/** Draw the flock, the world scaled to the canvas. */
void render_flock(canvas *c, boids_sim *sim);

/** True if this build can write PNG files. */
bool render_png_available(void);

/** Write the canvas as an 8-bit RGB PNG. @return false on error (errno or
 *  libpng's message on stderr), always false without libpng. */
bool render_png_write(const canvas *c, const char *path);

#endif /* RENDER_H */
