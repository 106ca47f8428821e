#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "enforce/systemd_library.h"

#define INSTALL_HINT "the systemd backend needs it: install the " LIBSYSTEMD_PACKAGE \
                     " package, or set [daemon] backend = cgroupfs"

#ifdef HAVE_SYSTEMD

int systemd_library_open(struct libsystemd *sd, const char *soname, char *err, size_t err_len)
{
    memset(sd, 0, sizeof(*sd));
    sd->handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!sd->handle) {
        snprintf(err, err_len, "cannot load %s (%s); %s", soname, dlerror(), INSTALL_HINT);
        return -1;
    }
    static const char *const names[] = {
        "sd_bus_open_system", "sd_bus_flush_close_unref", "sd_bus_call",
        "sd_bus_message_new_method_call", "sd_bus_message_append",
        "sd_bus_message_open_container", "sd_bus_message_close_container",
        "sd_bus_message_unref", "sd_bus_error_has_name", "sd_bus_error_is_set",
        "sd_bus_error_free",
    };
    void **slots[] = {
        (void **)&sd->bus_open_system, (void **)&sd->bus_flush_close_unref,
        (void **)&sd->bus_call, (void **)&sd->message_new_method_call,
        (void **)&sd->message_append, (void **)&sd->message_open_container,
        (void **)&sd->message_close_container, (void **)&sd->message_unref,
        (void **)&sd->error_has_name, (void **)&sd->error_is_set, (void **)&sd->error_free,
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(slots) / sizeof(slots[0]),
                   "one name for each function");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        *slots[i] = dlsym(sd->handle, names[i]);
        if (!*slots[i]) {
            /* Each of these has been in libsystemd since 221. */
            snprintf(err, err_len, "%s has no %s: too old a libsystemd; %s", soname, names[i],
                     INSTALL_HINT);
            systemd_library_close(sd);
            return -1;
        }
    }
    return 0;
}

#else /* !HAVE_SYSTEMD */

int systemd_library_open(struct libsystemd *sd, const char *soname, char *err, size_t err_len)
{
    sd->handle = NULL;
    snprintf(err, err_len, "cannot use %s: built without libsystemd's headers "
             "(rebuild with libsystemd-dev, or set [daemon] backend = cgroupfs)", soname);
    return -1;
}

#endif

void systemd_library_close(struct libsystemd *sd)
{
    if (sd->handle)
        dlclose(sd->handle);
    memset(sd, 0, sizeof(*sd));
}
