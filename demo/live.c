/*
** live.c — the terminal animation. The world is scaled onto the screen
** (one character cell is about twice as tall as it is wide, so every cell
** covers a world rectangle of that shape); a boid is a character for its
** heading (- / | \) in one of six colours by heading, a predator a red @,
** an obstacle a grey #. The last row says which frame it is.
*/
#include "live.h"

#ifdef TECS_DEMO_CURSES
#include <curses.h>
#include <math.h>
#include <unistd.h>

bool live_available(void)
{
    return true;
}

bool live_begin(void)
{
    if (!isatty(STDOUT_FILENO) || initscr() == NULL)
        return false;
    cbreak();
    noecho();
    nodelay(stdscr, TRUE);
    curs_set(0);
    if (has_colors()) {
        static const short hues[6] = { COLOR_RED, COLOR_YELLOW, COLOR_GREEN, COLOR_CYAN,
                                       COLOR_BLUE, COLOR_MAGENTA };
        start_color();
        for (short i = 0; i < 6; i++)
            init_pair((short)(i + 1), hues[i], COLOR_BLACK);
        init_pair(7, COLOR_WHITE, COLOR_BLACK);
    }
    return true;
}

typedef struct screen_ctx {
    float sx, sy;               /* cells per world unit                   */
    int rows, cols;
} screen_ctx;

/* Put one agent on the screen (a boids_agent_fn). */
static void put_agent(void *ctx, boids_kind kind, float x, float y, float vx, float vy,
                      float radius)
{
    static const char dirs[4] = { '-', '\\', '|', '/' };
    screen_ctx *s = ctx;
    int r = (int)(y * s->sy), c = (int)(x * s->sx);
    if (r < 0 || c < 0 || r >= s->rows || c >= s->cols)
        return;
    if (kind == BOIDS_OBSTACLE) {
        int rr = (int)(radius * s->sy), rc = (int)(radius * s->sx);
        for (int i = -rr; i <= rr; i++)
            for (int j = -rc; j <= rc; j++)
                if ((float)(i * i) / (float)(rr * rr + 1) + (float)(j * j) / (float)(rc * rc + 1) <= 1.0f
                    && r + i >= 0 && r + i < s->rows && c + j >= 0 && c + j < s->cols)
                    mvaddch(r + i, c + j, '#' | COLOR_PAIR(7) | A_DIM);
        return;
    }
    if (kind == BOIDS_PREDATOR) {
        mvaddch(r, c, '@' | COLOR_PAIR(1) | A_BOLD);
        return;
    }
    float a = atan2f(vy, vx);                   /* -pi .. pi, y downwards */
    int oct = (int)lroundf(a / 0.7853982f) & 3; /* to one of 4 strokes    */
    int hue = (int)floorf((a + 3.1415927f) / 1.0471976f) % 6;
    mvaddch(r, c, (chtype)dirs[oct] | COLOR_PAIR(hue + 1));
}

bool live_draw(boids_sim *sim, int64_t frame, int64_t frames)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    screen_ctx s = { (float)cols / boids_size(sim), (float)(rows - 1) / boids_size(sim),
                     rows - 1, cols };
    erase();
    boids_each(sim, put_agent, &s);
    boids_counts n = boids_count(sim);
    mvprintw(rows - 1, 0, "frame %lld/%lld  boids %d  births %lld  deaths %lld  (q quits)",
             (long long)frame, (long long)frames, (int)n.boids, (long long)n.births,
             (long long)n.deaths);
    refresh();
    napms(10);
    return getch() != 'q';
}

void live_end(void)
{
    endwin();
}
#else
bool live_available(void)
{
    return false;
}

bool live_begin(void)
{
    return false;
}

bool live_draw(boids_sim *sim, int64_t frame, int64_t frames)
{
    (void)sim, (void)frame, (void)frames;
    return false;
}

void live_end(void)
{
}
#endif
