#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "chart.h"
#include "chart_canvas.h"
#include "units.h"
#include "usage_chart.h"
#include "util.h"

#define GIB (1024.0 * 1024 * 1024)
#define LEFT 56.0
#define RIGHT 60.0
#define TOP 24.0
#define BOTTOM 22.0

#define CPU_COLOUR 0x1f5fbf
#define MEMORY_COLOUR 0xe07b00
#define LIMITED_COLOUR 0xf6d2d2
#define AXIS_COLOUR 0x555555
#define THRESHOLD_COLOUR 0xaa3333

struct frame {
    double x, y, w, h;
    uint64_t from, until;
};

static double x_of(const struct frame *f, uint64_t t)
{
    if (t <= f->from)
        return f->x;
    if (t >= f->until)
        return f->x + f->w;
    return f->x + f->w * (double)(t - f->from) / (double)(f->until - f->from);
}

static double y_of(const struct frame *f, double v, double max)
{
    if (v > max)
        v = max;
    return f->y + f->h - f->h * (v > 0 ? v : 0) / max;
}

/* The time at an end of the axis: the time of day for a range within a
 * day, else the date. */
static void axis_time(uint64_t usec, uint64_t range, char *buf, size_t len)
{
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, range <= 86400 * USEC_PER_SEC ? "%H:%M" : "%m-%d %H:%M", &tm);
}

static void series(struct canvas *cv, const struct frame *f, const struct usage_chart *c,
                   bool memory, double max, uint32_t colour)
{
    canvas_colour(cv, colour);
    for (size_t i = 0; i < c->point_count; i++) {
        const struct report_point *p = &c->points[i];
        double v = memory ? (double)p->memory_bytes : p->cpu_cores;
        double x = x_of(f, p->time), y = y_of(f, v, max);
        if (c->lines && i > 0) {
            const struct report_point *q = &c->points[i - 1];
            double qv = memory ? (double)q->memory_bytes : q->cpu_cores;
            canvas_line(cv, x_of(f, q->time), y_of(f, qv, max), x, y, 2);
        } else if (!c->lines) {
            /* A stem and a dot: one moment's usage. */
            canvas_line(cv, x, f->y + f->h, x, y, memory ? 1 : 2);
            cv->lib->arc(cv->cr, x, y, memory ? 2.5 : 3.5, 0, 2 * M_PI);
            cv->lib->fill(cv->cr);
        }
    }
}

int usage_chart_png(const struct cairo_lib *lib, const struct usage_chart *c,
                    struct strbuf *png, char *why, size_t why_len)
{
    struct canvas cv;
    canvas_open(&cv, lib, USAGE_CHART_WIDTH, USAGE_CHART_HEIGHT);
    struct frame f = {LEFT, TOP, USAGE_CHART_WIDTH - LEFT - RIGHT,
                      USAGE_CHART_HEIGHT - TOP - BOTTOM, c->from,
                      c->until > c->from ? c->until : c->from + 1};
    double *cpu = xcalloc(c->point_count + 1, sizeof(double));
    double *mem = xcalloc(c->point_count + 1, sizeof(double));
    for (size_t i = 0; i < c->point_count; i++) {
        cpu[i] = c->points[i].cpu_cores;
        mem[i] = (double)c->points[i].memory_bytes / GIB;
    }
    double cpu_max = chart_scale(cpu, c->point_count, c->cpu_threshold > 0 ? c->cpu_threshold
                                                                          : 1.0);
    /* In GiB, so that the top is a round size: 1G, 2G, 5G, 10G ... */
    double mem_max = chart_scale(mem, c->point_count, 1) * GIB;
    free(cpu);
    free(mem);
    canvas_colour(&cv, LIMITED_COLOUR);
    for (size_t i = 0; i < c->span_count; i++) {
        double x0 = x_of(&f, c->spans[i].from), x1 = x_of(&f, c->spans[i].until);
        canvas_box(&cv, x0, f.y, x1 - x0 > 1 ? x1 - x0 : 1, f.h);
    }
    if (c->cpu_threshold > 0) {
        canvas_colour(&cv, THRESHOLD_COLOUR);
        double y = y_of(&f, c->cpu_threshold, cpu_max);
        canvas_line(&cv, f.x, y, f.x + f.w, y, 0.8);
    }
    series(&cv, &f, c, true, mem_max, MEMORY_COLOUR);
    series(&cv, &f, c, false, cpu_max, CPU_COLOUR);
    canvas_colour(&cv, AXIS_COLOUR);
    canvas_line(&cv, f.x, f.y, f.x, f.y + f.h, 1);
    canvas_line(&cv, f.x, f.y + f.h, f.x + f.w, f.y + f.h, 1);
    canvas_line(&cv, f.x + f.w, f.y, f.x + f.w, f.y + f.h, 1);
    char label[64];
    canvas_colour(&cv, 0x222222);
    canvas_text(&cv, 6, 16, 13, CANVAS_LEFT, c->title ? c->title : "");
    canvas_colour(&cv, CPU_COLOUR);
    snprintf(label, sizeof(label), "%g cores", cpu_max);
    canvas_text(&cv, f.x - 4, f.y + 9, 10, CANVAS_RIGHT, label);
    canvas_text(&cv, f.x - 4, f.y + f.h, 10, CANVAS_RIGHT, "0");
    canvas_colour(&cv, MEMORY_COLOUR);
    format_size((uint64_t)mem_max, label, sizeof(label));
    canvas_text(&cv, f.x + f.w + 4, f.y + 9, 10, CANVAS_LEFT, label);
    canvas_text(&cv, f.x + f.w + 4, f.y + f.h, 10, CANVAS_LEFT, "0");
    canvas_colour(&cv, AXIS_COLOUR);
    axis_time(f.from, f.until - f.from, label, sizeof(label));
    canvas_text(&cv, f.x, USAGE_CHART_HEIGHT - 6, 10, CANVAS_LEFT, label);
    axis_time(f.until, f.until - f.from, label, sizeof(label));
    canvas_text(&cv, f.x + f.w, USAGE_CHART_HEIGHT - 6, 10, CANVAS_RIGHT, label);
    canvas_colour(&cv, 0x666666);
    canvas_text(&cv, USAGE_CHART_WIDTH - 6, 16, 10, CANVAS_RIGHT,
                c->span_count ? "CPU, memory; shaded: limited" : "CPU, memory");
    return canvas_png(&cv, png, why, why_len);
}
