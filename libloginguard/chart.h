/* A small chart of a series for a terminal (loginguardctl user and me):
 * a few rows high, one column a point, the scale's top and the time axis
 * labelled.  Unicode block characters where the terminal's locale is
 * UTF-8, plain ASCII elsewhere.  Pure: text in, text out. */
#ifndef LOGINGUARD_CHART_H
#define LOGINGUARD_CHART_H

#include <stdbool.h>
#include <stddef.h>

#define CHART_ROWS_MAX 16

struct chart {
    const double *values;    /* oldest first; one column each; < 0 is taken as 0 */
    size_t count;
    double max;              /* the top of the scale (> 0); higher values are cut */
    const char *title;       /* the line above, e.g. "CPU (cores)" */
    const char *top_label;   /* the scale's top, e.g. "2" */
    const char *bottom_label;/* the scale's bottom, e.g. "0" */
    const char *axis_left, *axis_middle, *axis_right; /* under the first, middle, last column */
    int rows;                /* 1 .. CHART_ROWS_MAX */
    bool utf8;
};

/* The chart as lines of text, each ending in '\n' (to be freed). */
char *chart_render(const struct chart *c);

/* A round top for a scale holding every value: 1, 2 or 5 times a power
 * of ten, at least floor (> 0). */
double chart_scale(const double *values, size_t count, double floor);

#endif
