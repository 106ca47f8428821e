/* The small chart of one user's usage over time: CPU (cores, blue) and
 * memory (orange, its own scale on the right), with the spans their
 * level's limits held them shaded.  The same chart for each user of the
 * report's timeline (points: the usage the violations recorded) and in a
 * mailed notice (the last hour, a point a minute, drawn as lines). */
#ifndef LOGINGUARD_USAGE_CHART_H
#define LOGINGUARD_USAGE_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cairo_lib.h"
#include "report.h"
#include "strbuf.h"

#define USAGE_CHART_WIDTH 480
#define USAGE_CHART_HEIGHT 150

struct usage_chart {
    const char *title;            /* e.g. the user's name: drawn escaped */
    uint64_t from, until;         /* the time axis, realtime usec */
    const struct report_point *points;  /* oldest first */
    size_t point_count;
    const struct report_span *spans;
    size_t span_count;
    bool lines;                   /* a regular series: joined by lines; else marked */
    double cpu_threshold;         /* a line across, e.g. [violation] cpu; 0: none */
};

/* The chart as a PNG of USAGE_CHART_WIDTH x USAGE_CHART_HEIGHT appended
 * to png: 0, or -1 with why. */
int usage_chart_png(const struct cairo_lib *lib, const struct usage_chart *c,
                    struct strbuf *png, char *why, size_t why_len);

#endif
