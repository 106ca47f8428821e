/* The systemd backend: where systemd is PID 1 with logind on cgroup v2,
 * every user already has a cgroup, user-UID.slice, that logind made and
 * systemd owns.  Writing its cgroup files behind systemd's back would be
 * undone at the next daemon-reload, so limits go through systemd itself:
 * SetUnitProperties on org.freedesktop.systemd1.Manager, as runtime
 * properties (kept in /run, gone at reboot, like loginguard's own state).
 *
 * One call always sets all four properties, CPUQuotaPerSecUSec,
 * MemoryHigh, MemoryMax and TasksMax: a call with the standing share, or
 * with no limits at all (every value "infinity"), undoes an earlier one.
 *
 * libsystemd is not linked: open loads it (systemd_library.h), so nodes
 * that use the cgroupfs backend never map it.
 *
 * Include config.h first: without HAVE_SYSTEMD (built without libsystemd's
 * headers) the same functions exist, systemd_backend_available() is false
 * and open/apply fail with "built without libsystemd". */
#ifndef LOGINGUARD_SYSTEMD_BACKEND_H
#define LOGINGUARD_SYSTEMD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef HAVE_SYSTEMD
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
#endif

#include "base/environment.h"
#include "cgroup_limits.h"
#include "enforce/systemd_library.h"

struct systemd_backend {
    struct libsystemd sd;   /* loaded while open */
    sd_bus *bus;            /* the system bus; NULL when closed */
};

/* The directory systemd makes early at boot, below /run: sd_booted(3)'s
 * test. */
#define SYSTEMD_RUNTIME_DIR "systemd/system/"

/* True when systemd runs this machine (systemd_booted on env->run) and
 * env->cgroup is cgroup v2 with user.slice in it: the only layout this
 * backend limits.  Needs no libsystemd. */
bool systemd_backend_available(const struct environment *env);

/* dir (env->run/SYSTEMD_RUNTIME_DIR) is a directory: what sd_booted()
 * checks, without loading libsystemd for it. */
bool systemd_booted(const char *dir);

/* The cgroup half of that test, on any root (for the tests): cgroup_root
 * has cgroup.controllers (the unified hierarchy) and a user.slice
 * directory. */
bool systemd_user_slice_unified(const char *cgroup_root);

/* Load libsystemd (LIBSYSTEMD_SONAME) and connect to the system bus
 * (sd_bus_open_system).  Returns 0, or -1 with err filled: a library that
 * cannot be loaded is named, with the package that has it.  sd-bus
 * connections do not survive fork(): open after daemonizing. */
int systemd_backend_open(struct systemd_backend *b, char *err, size_t err_len);

/* Flush and drop the connection, and unload libsystemd; safe on a closed
 * or failed backend. */
void systemd_backend_close(struct systemd_backend *b);

/* Put limits l on user-UID.slice (a zero field: no limit).  Blocks until
 * systemd answers or a timeout of a few seconds.  Returns 0, or -1 with
 * err filled, including the D-Bus error name and message systemd gave. */
int systemd_backend_apply(struct systemd_backend *b, uid_t uid, const struct limits *l,
                          char *err, size_t err_len);

/* Move pid, a process of uid that runs outside user-UID.slice (a cron or
 * at job in cron.service, a systemd-run unit), into a new scope in that
 * slice, loginguard-PID-START.scope (START: the process's start time, so
 * a reused pid gets a new name), through StartTransientUnit: systemd
 * stays the owner of its tree, and the process is limited with its
 * user.  systemd makes the slice if the user has no session.  Returns 0,
 * or -1 with err. */
int systemd_backend_adopt(struct systemd_backend *b, uid_t uid, pid_t pid, uint64_t start_time,
                          char *err, size_t err_len);

/* The StartTransientUnit call that systemd_backend_adopt sends, built but
 * not sent.  Returns 0 and a new message in *out, or a negative errno. */
int systemd_build_adopt_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid, pid_t pid,
                             uint64_t start_time, sd_bus_message **out);

/* The SetUnitProperties call that systemd_backend_apply sends, built on
 * bus through sd's functions but not sent: arguments "user-UID.slice", runtime = true, and the
 * properties for l.  Returns 0 and a new message in *out (unref it), or a
 * negative errno. */
int systemd_build_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid,
                       const struct limits *l, sd_bus_message **out);

/* Append the a(sv) property array for l to m.  Returns 0 or a negative
 * errno. */
int systemd_append_properties(const struct libsystemd *sd, sd_bus_message *m,
                              const struct limits *l);

/* "user-1234.slice" into buf (truncated to len, always NUL-terminated). */
void systemd_slice_name(uid_t uid, char *buf, size_t len);

#endif
