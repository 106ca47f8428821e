#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart_canvas.h"
#include "utf8.h"
#include "util.h"

void canvas_open(struct canvas *cv, const struct cairo_lib *lib, int width, int height)
{
    cv->lib = lib;
    cv->width = width;
    cv->height = height;
    cv->surface = lib->image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    cv->cr = lib->create(cv->surface);
    lib->set_source_rgb(cv->cr, 1, 1, 1);
    lib->paint(cv->cr);
    lib->select_font_face(cv->cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                          CAIRO_FONT_WEIGHT_NORMAL);
}

void canvas_colour(struct canvas *cv, uint32_t rgb)
{
    cv->lib->set_source_rgb(cv->cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                            (rgb & 0xff) / 255.0);
}

void canvas_text(struct canvas *cv, double x, double y, double size, enum canvas_align align,
                 const char *text)
{
    /* Valid UTF-8 without controls: cairo refuses the rest (and the
     * whole picture with it). */
    size_t len = strlen(text);
    char *shown = xmalloc(4 * len + 1);
    utf8_escape(text, len, shown, 4 * len + 1);
    cv->lib->set_font_size(cv->cr, size);
    cairo_text_extents_t ext;
    cv->lib->text_extents(cv->cr, shown, &ext);
    double at = align == CANVAS_LEFT ? x : align == CANVAS_CENTRE ? x - ext.x_advance / 2
                                                                  : x - ext.x_advance;
    cv->lib->move_to(cv->cr, at, y);
    cv->lib->show_text(cv->cr, shown);
    cv->lib->new_path(cv->cr);
    free(shown);
}

void canvas_box(struct canvas *cv, double x, double y, double w, double h)
{
    cv->lib->rectangle(cv->cr, x, y, w, h);
    cv->lib->fill(cv->cr);
}

void canvas_line(struct canvas *cv, double x0, double y0, double x1, double y1, double width)
{
    cv->lib->set_line_width(cv->cr, width);
    cv->lib->move_to(cv->cr, x0, y0);
    cv->lib->line_to(cv->cr, x1, y1);
    cv->lib->stroke(cv->cr);
}

static cairo_status_t append(void *closure, const unsigned char *data, unsigned int length)
{
    strbuf_add(closure, (const char *)data, length);
    return CAIRO_STATUS_SUCCESS;
}

int canvas_png(struct canvas *cv, struct strbuf *png, char *why, size_t why_len)
{
    cairo_status_t st = cv->lib->status(cv->cr);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cv->lib->write_to_png_stream(cv->surface, append, png);
    if (st != CAIRO_STATUS_SUCCESS)
        snprintf(why, why_len, "cairo could not draw the chart: %s",
                 cv->lib->status_to_string(st));
    canvas_close(cv);
    return st == CAIRO_STATUS_SUCCESS ? 0 : -1;
}

void canvas_close(struct canvas *cv)
{
    if (cv->cr)
        cv->lib->destroy(cv->cr);
    if (cv->surface)
        cv->lib->surface_destroy(cv->surface);
    cv->cr = NULL;
    cv->surface = NULL;
}
