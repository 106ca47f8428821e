/* cairo, loaded when a chart is drawn (loginguardctl report --format
 * html, a mailed notice with its chart) and never before: the daemon
 * draws only in the child that sends the mail, so cairo and the dozen
 * libraries it pulls in (pixman, freetype, fontconfig, libpng, ...)
 * never take room in the daemon itself. */
#ifndef LOGINGUARD_CAIRO_LIB_H
#define LOGINGUARD_CAIRO_LIB_H

#include <cairo/cairo.h>
#include <stdbool.h>
#include <stddef.h>

#define CAIRO_SONAME "libcairo.so.2"

struct cairo_lib {
    cairo_surface_t *(*image_surface_create)(cairo_format_t format, int width, int height);
    cairo_t *(*create)(cairo_surface_t *target);
    void (*destroy)(cairo_t *cr);
    void (*surface_destroy)(cairo_surface_t *surface);
    void (*set_source_rgb)(cairo_t *cr, double red, double green, double blue);
    void (*set_source_rgba)(cairo_t *cr, double red, double green, double blue, double alpha);
    void (*paint)(cairo_t *cr);
    void (*rectangle)(cairo_t *cr, double x, double y, double width, double height);
    void (*fill)(cairo_t *cr);
    void (*stroke)(cairo_t *cr);
    void (*move_to)(cairo_t *cr, double x, double y);
    void (*line_to)(cairo_t *cr, double x, double y);
    void (*arc)(cairo_t *cr, double xc, double yc, double radius, double angle1, double angle2);
    void (*new_path)(cairo_t *cr);
    void (*set_line_width)(cairo_t *cr, double width);
    void (*select_font_face)(cairo_t *cr, const char *family, cairo_font_slant_t slant,
                             cairo_font_weight_t weight);
    void (*set_font_size)(cairo_t *cr, double size);
    void (*show_text)(cairo_t *cr, const char *utf8);
    void (*text_extents)(cairo_t *cr, const char *utf8, cairo_text_extents_t *extents);
    cairo_status_t (*status)(cairo_t *cr);
    cairo_status_t (*write_to_png_stream)(cairo_surface_t *surface,
                                          cairo_write_func_t write_func, void *closure);
    const char *(*status_to_string)(cairo_status_t status);
    /* Optional (NULL when missing): the caches of cairo and fontconfig,
     * which last until the process ends, freed, so that a leak checker
     * sees only what is ours. */
    void (*reset_static_data)(void);
    void (*fontconfig_fini)(void);
};

/* Load cairo into lib: 0, or -1 with why (the library and its Debian
 * package named). */
int cairo_lib_load(struct cairo_lib *lib, char *why, size_t why_len);
/* Done drawing: cairo's and fontconfig's caches freed. */
void cairo_lib_done(const struct cairo_lib *lib);

#endif
