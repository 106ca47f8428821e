/* The report's chart of actions a day: a bar a day, its parts the
 * actions (warn, limit, stop, release, lower), stacked. */
#ifndef LOGINGUARD_DAY_CHART_H
#define LOGINGUARD_DAY_CHART_H

#include <stddef.h>

#include "cairo_lib.h"
#include "report.h"
#include "strbuf.h"

#define DAY_CHART_WIDTH 720
#define DAY_CHART_HEIGHT 240

/* The chart as a PNG of DAY_CHART_WIDTH x DAY_CHART_HEIGHT appended to
 * png: 0, or -1 with why. */
int day_chart_png(const struct cairo_lib *lib, const struct report_day *days, size_t count,
                  struct strbuf *png, char *why, size_t why_len);

#endif
