#include "config.h"

#include <dlfcn.h>
#include <stdio.h>

#include "cairo_lib.h"

int cairo_lib_load(struct cairo_lib *lib, char *why, size_t why_len)
{
    /* Kept loaded: a chart is drawn by a short-lived process. */
    void *h = dlopen(CAIRO_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, why_len, "cannot load %s for the charts (install libcairo2): %s",
                 CAIRO_SONAME, dlerror());
        return -1;
    }
    static const char *const names[] = {
        "cairo_image_surface_create", "cairo_create", "cairo_destroy",
        "cairo_surface_destroy", "cairo_set_source_rgb", "cairo_set_source_rgba",
        "cairo_paint", "cairo_rectangle", "cairo_fill", "cairo_stroke", "cairo_move_to",
        "cairo_line_to", "cairo_arc", "cairo_new_path", "cairo_set_line_width",
        "cairo_select_font_face", "cairo_set_font_size", "cairo_show_text",
        "cairo_text_extents", "cairo_status", "cairo_surface_write_to_png_stream",
        "cairo_status_to_string",
    };
    void **slots[] = {
        (void **)&lib->image_surface_create, (void **)&lib->create, (void **)&lib->destroy,
        (void **)&lib->surface_destroy, (void **)&lib->set_source_rgb,
        (void **)&lib->set_source_rgba, (void **)&lib->paint, (void **)&lib->rectangle,
        (void **)&lib->fill, (void **)&lib->stroke, (void **)&lib->move_to,
        (void **)&lib->line_to, (void **)&lib->arc, (void **)&lib->new_path,
        (void **)&lib->set_line_width, (void **)&lib->select_font_face,
        (void **)&lib->set_font_size, (void **)&lib->show_text, (void **)&lib->text_extents,
        (void **)&lib->status, (void **)&lib->write_to_png_stream,
        (void **)&lib->status_to_string,
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(slots) / sizeof(slots[0]),
                   "a name for each slot");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = dlsym(h, names[i]);
        if (!*slots[i]) {
            snprintf(why, why_len, "%s has no %s (cairo 1.10 or later is needed)", CAIRO_SONAME,
                     names[i]);
            return -1;
        }
    }
    lib->reset_static_data = (void (*)(void))dlsym(h, "cairo_debug_reset_static_data");
    lib->fontconfig_fini = (void (*)(void))dlsym(h, "FcFini");
    return 0;
}

void cairo_lib_done(const struct cairo_lib *lib)
{
    if (lib->reset_static_data)
        lib->reset_static_data();
    if (lib->fontconfig_fini)
        lib->fontconfig_fini();
}
