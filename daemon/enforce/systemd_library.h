/* libsystemd, loaded with dlopen by the systemd backend when it opens,
 * and the sd-bus functions the backend calls through.  Linked into the
 * daemon, libsystemd and the libraries it pulls in (libgcrypt, liblzma,
 * libzstd, liblz4, libcap) cost over a MiB of resident memory even on
 * nodes that use the cgroupfs backend and never touch D-Bus.
 *
 * Include config.h first: without HAVE_SYSTEMD (no libsystemd headers at
 * build time) there is nothing to load and systemd_library_open fails. */
#ifndef LOGINGUARD_SYSTEMD_LIBRARY_H
#define LOGINGUARD_SYSTEMD_LIBRARY_H

#include <stddef.h>
#include <stdint.h>

#ifdef HAVE_SYSTEMD
#include <systemd/sd-bus.h>
#endif

/* The soname, and the Debian package that ships it. */
#define LIBSYSTEMD_SONAME "libsystemd.so.0"
#define LIBSYSTEMD_PACKAGE "libsystemd0"

struct libsystemd {
    void *handle;   /* from dlopen; NULL when not loaded */
#ifdef HAVE_SYSTEMD
    int (*bus_open_system)(sd_bus **bus);
    sd_bus *(*bus_flush_close_unref)(sd_bus *bus);
    int (*bus_call)(sd_bus *bus, sd_bus_message *m, uint64_t usec, sd_bus_error *ret_error,
                    sd_bus_message **reply);
    int (*message_new_method_call)(sd_bus *bus, sd_bus_message **m, const char *destination,
                                   const char *path, const char *interface,
                                   const char *member);
    int (*message_append)(sd_bus_message *m, const char *types, ...);
    int (*message_open_container)(sd_bus_message *m, char type, const char *contents);
    int (*message_close_container)(sd_bus_message *m);
    sd_bus_message *(*message_unref)(sd_bus_message *m);
    int (*error_has_name)(const sd_bus_error *e, const char *name);
    int (*error_is_set)(const sd_bus_error *e);
    void (*error_free)(sd_bus_error *e);
#endif
};

/* Load soname (LIBSYSTEMD_SONAME but for the tests) and find every
 * function.  Returns 0, or -1 with err naming the library, what dlopen
 * or dlsym said and the package to install; sd is then unloaded. */
int systemd_library_open(struct libsystemd *sd, const char *soname, char *err, size_t err_len);

/* Drop the library; safe when not loaded. */
void systemd_library_close(struct libsystemd *sd);

#endif
