#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "chart.h"
#include "chart_canvas.h"
#include "day_chart.h"
#include "util.h"

#define LEFT 44.0
#define RIGHT 12.0
#define TOP 34.0
#define BOTTOM 26.0

static const uint32_t colours[REPORT_ACTIONS] = {
    [REPORT_WARN] = 0xe8c12c, [REPORT_LIMIT] = 0xe07b00, [REPORT_STOP] = 0xc62828,
    [REPORT_RELEASE] = 0x43a047, [REPORT_LOWER] = 0x7986cb,
};

static uint64_t total(const struct report_day *d)
{
    uint64_t n = 0;
    for (int a = 0; a < REPORT_ACTIONS; a++)
        n += d->actions[a];
    return n;
}

static void legend(struct canvas *cv)
{
    double x = LEFT;
    for (int a = 0; a < REPORT_ACTIONS; a++) {
        canvas_colour(cv, colours[a]);
        canvas_box(cv, x, 10, 12, 12);
        canvas_colour(cv, 0x222222);
        canvas_text(cv, x + 16, 21, 12, CANVAS_LEFT, report_action_names[a]);
        x += 90;
    }
}

int day_chart_png(const struct cairo_lib *lib, const struct report_day *days, size_t count,
                  struct strbuf *png, char *why, size_t why_len)
{
    struct canvas cv;
    canvas_open(&cv, lib, DAY_CHART_WIDTH, DAY_CHART_HEIGHT);
    double x0 = LEFT, y0 = TOP, w = DAY_CHART_WIDTH - LEFT - RIGHT,
           h = DAY_CHART_HEIGHT - TOP - BOTTOM;
    double *totals = xcalloc(count + 1, sizeof(double));
    for (size_t i = 0; i < count; i++)
        totals[i] = (double)total(&days[i]);
    double max = chart_scale(totals, count, 1);
    free(totals);
    legend(&cv);
    double slot = count ? w / (double)count : w;
    double bar = slot * 0.7 > 1 ? slot * 0.7 : 1;
    /* Labels under at most about 16 bars. */
    size_t every = count / 16 + 1;
    for (size_t i = 0; i < count; i++) {
        double x = x0 + slot * (double)i + (slot - bar) / 2, y = y0 + h;
        for (int a = 0; a < REPORT_ACTIONS; a++) {
            double part = h * (double)days[i].actions[a] / max;
            if (part <= 0)
                continue;
            canvas_colour(&cv, colours[a]);
            canvas_box(&cv, x, y - part, bar, part);
            y -= part;
        }
        if (i % every == 0) {
            canvas_colour(&cv, 0x555555);
            canvas_text(&cv, x + bar / 2, DAY_CHART_HEIGHT - 8, 10, CANVAS_CENTRE,
                        days[i].date + 5); /* "11-25" */
        }
    }
    canvas_colour(&cv, 0x555555);
    canvas_line(&cv, x0, y0, x0, y0 + h, 1);
    canvas_line(&cv, x0, y0 + h, x0 + w, y0 + h, 1);
    char label[32];
    snprintf(label, sizeof(label), "%g", max);
    canvas_text(&cv, x0 - 4, y0 + 9, 10, CANVAS_RIGHT, label);
    canvas_text(&cv, x0 - 4, y0 + h, 10, CANVAS_RIGHT, "0");
    return canvas_png(&cv, png, why, why_len);
}
