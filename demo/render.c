/*
** render.c — the demo's pictures: a plain RGB canvas, a Bresenham line, a
** filled disc, heading to colour (HSV hue from the angle), and the PNG
** writer over libpng (compiled in when CMake found it: TECS_DEMO_PNG).
**
** A boid is a short stroke along its heading, its tail behind it; a
** predator a red disc with a white stroke; an obstacle a grey disc with a
** lighter rim. Shapes that cross an edge are clipped, not wrapped.
*/
#include "render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef TECS_DEMO_PNG
#include <png.h>
#endif

#define BACKGROUND 0x0b0f1au
#define STROKE     7.0f         /* a boid's length in pixels              */

bool canvas_init(canvas *c, int32_t w, int32_t h)
{
    c->w = w, c->h = h;
    c->rgb = calloc((size_t)w * (size_t)h, 3);
    return c->rgb != NULL;
}

void canvas_fini(canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
}

void canvas_plot(canvas *c, int32_t x, int32_t y, uint32_t rgb)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *px = c->rgb + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    px[0] = (uint8_t)(rgb >> 16), px[1] = (uint8_t)(rgb >> 8), px[2] = (uint8_t)rgb;
}

void canvas_clear(canvas *c, uint32_t rgb)
{
    for (int32_t y = 0; y < c->h; y++)
        for (int32_t x = 0; x < c->w; x++)
            canvas_plot(c, x, y, rgb);
}

void canvas_line(canvas *c, int32_t x0, int32_t y0, int32_t x1, int32_t y1, uint32_t rgb)
{
    int32_t dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int32_t sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, err = dx + dy;
    for (;;) {
        canvas_plot(c, x0, y0, rgb);
        if (x0 == x1 && y0 == y1)
            return;
        int32_t e2 = 2 * err;
        if (e2 >= dy)
            err += dy, x0 += sx;
        if (e2 <= dx)
            err += dx, y0 += sy;
    }
}

void canvas_disc(canvas *c, float cx, float cy, float r, uint32_t rgb)
{
    for (int32_t y = (int32_t)floorf(cy - r); y <= (int32_t)ceilf(cy + r); y++)
        for (int32_t x = (int32_t)floorf(cx - r); x <= (int32_t)ceilf(cx + r); x++) {
            float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
            if (dx * dx + dy * dy <= r * r)
                canvas_plot(c, x, y, rgb);
        }
}

uint32_t heading_colour(float vx, float vy)
{
    float h = atan2f(vy, vx) * (float)(3.0 / 3.14159265358979);  /* -3 .. 3 */
    if (h < 0.0f)
        h += 6.0f;
    int32_t sector = (int32_t)h % 6;
    float f = h - floorf(h);
    uint32_t up = (uint32_t)(255.0f * f + 0.5f), down = 255u - up;
    uint32_t r, g, b;
    switch (sector) {
    case 0:  r = 255, g = up, b = 0; break;
    case 1:  r = down, g = 255, b = 0; break;
    case 2:  r = 0, g = 255, b = up; break;
    case 3:  r = 0, g = down, b = 255; break;
    case 4:  r = up, g = 0, b = 255; break;
    default: r = 255, g = 0, b = down; break;
    }
    return r << 16 | g << 8 | b;
}

typedef struct draw_ctx {
    canvas *c;
    float scale;                /* pixels per world unit                  */
} draw_ctx;

/* Draw one agent (a boids_agent_fn). */
static void draw_agent(void *ctx, boids_kind kind, float x, float y, float vx, float vy,
                       float radius)
{
    draw_ctx *d = ctx;
    float px = x * d->scale, py = y * d->scale;
    float sp = sqrtf(vx * vx + vy * vy) + 1e-6f, ux = vx / sp, uy = vy / sp;
    if (kind == BOIDS_OBSTACLE) {
        canvas_disc(d->c, px, py, radius * d->scale, 0x8a93a6u);
        canvas_disc(d->c, px, py, radius * d->scale - 2.0f, 0x3a4152u);
    } else if (kind == BOIDS_PREDATOR) {
        canvas_disc(d->c, px, py, 6.0f, 0xff2030u);
        canvas_line(d->c, (int32_t)px, (int32_t)py, (int32_t)(px + ux * 14.0f),
                    (int32_t)(py + uy * 14.0f), 0xffffffu);
    } else {
        canvas_line(d->c, (int32_t)(px - ux * STROKE), (int32_t)(py - uy * STROKE),
                    (int32_t)px, (int32_t)py, heading_colour(vx, vy));
    }
}

void render_flock(canvas *c, boids_sim *sim)
{
    draw_ctx d = { c, (float)c->w / boids_size(sim) };
    canvas_clear(c, BACKGROUND);
    boids_each(sim, draw_agent, &d);
}

#ifdef TECS_DEMO_PNG
bool render_png_available(void)
{
    return true;
}

/* Write rows through libpng; errors come back through setjmp. */
static bool png_rows(FILE *f, const canvas *c, png_bytep *rows)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return false;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)c->w, (png_uint_32)c->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, 3);
    png_set_rows(png, info, rows);
    png_write_png(png, info, PNG_TRANSFORM_IDENTITY, NULL);
    png_destroy_write_struct(&png, &info);
    return true;
}

bool render_png_write(const canvas *c, const char *path)
{
    png_bytep *rows = malloc((size_t)c->h * sizeof *rows);
    FILE *f = rows ? fopen(path, "wb") : NULL;
    if (f == NULL) {
        fprintf(stderr, "boids: cannot write %s: %s\n", path, strerror(errno));
        free(rows);
        return false;
    }
    for (int32_t y = 0; y < c->h; y++)
        rows[y] = c->rgb + (size_t)y * (size_t)c->w * 3;
    bool ok = png_rows(f, c, rows);
    ok = (fclose(f) == 0) && ok;
    free(rows);
    if (!ok)
        fprintf(stderr, "boids: writing %s failed\n", path);
    return ok;
}
#else
bool render_png_available(void)
{
    return false;
}

bool render_png_write(const canvas *c, const char *path)
{
    (void)c, (void)path;
    return false;
}
#endif
