/* A picture drawn with cairo (cairo_lib.h) and kept as a PNG: the
 * pieces the report's charts and the mailed notice's chart share. */
#ifndef LOGINGUARD_CHART_CANVAS_H
#define LOGINGUARD_CHART_CANVAS_H

#include <stdint.h>

#include "cairo_lib.h"
#include "strbuf.h"

struct canvas {
    const struct cairo_lib *lib;
    cairo_surface_t *surface;
    cairo_t *cr;
    int width, height;
};

enum canvas_align { CANVAS_LEFT, CANVAS_CENTRE, CANVAS_RIGHT };

/* A white canvas of width x height pixels. */
void canvas_open(struct canvas *cv, const struct cairo_lib *lib, int width, int height);
/* text (anything: it is drawn escaped, as the terminal shows it) with
 * its baseline at y. */
void canvas_text(struct canvas *cv, double x, double y, double size, enum canvas_align align,
                 const char *text);
void canvas_colour(struct canvas *cv, uint32_t rgb);
void canvas_box(struct canvas *cv, double x, double y, double w, double h);
void canvas_line(struct canvas *cv, double x0, double y0, double x1, double y1, double width);
/* The picture as a PNG appended to png: 0, or -1 with why.  Closes. */
int canvas_png(struct canvas *cv, struct strbuf *png, char *why, size_t why_len);
void canvas_close(struct canvas *cv);

#endif
