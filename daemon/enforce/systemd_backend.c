#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "enforce/systemd_backend.h"

void systemd_slice_name(uid_t uid, char *buf, size_t len)
{
    /* logind's name for the slice it makes at a user's first login. */
    snprintf(buf, len, "user-%lu.slice", (unsigned long)uid);
}

bool systemd_user_slice_unified(const char *cgroup_root)
{
    char path[4096];
    struct stat st;
    /* cgroup.controllers exists only at the root of the unified (v2)
     * hierarchy: on v1 and on the hybrid layout /sys/fs/cgroup is a tmpfs
     * of per-controller mounts, where systemd's MemoryHigh has no knob. */
    snprintf(path, sizeof(path), "%s/cgroup.controllers", cgroup_root);
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    snprintf(path, sizeof(path), "%s/user.slice", cgroup_root);
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool systemd_booted(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

#ifdef HAVE_SYSTEMD

#define SYSTEMD_SERVICE "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"

/* PID 1 answers SetUnitProperties in milliseconds; sd-bus's default of
 * 25 s would stall the daemon's sampling loop that long if it hangs. */
#define CALL_TIMEOUT_USEC (10ULL * 1000 * 1000)

/* systemd's "infinity" for every property sent here: no limit. */
#define SD_INFINITY UINT64_MAX

bool systemd_backend_available(const struct environment *env)
{
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/%s", env->run, SYSTEMD_RUNTIME_DIR);
    return systemd_booted(dir) && systemd_user_slice_unified(env->cgroup);
}

/* CPU time allowed per second of wall time: 1 core = 1 s = 1000000 us. */
static uint64_t cpu_quota_usec(double cores)
{
    /* Not above zero is no limit: 0 by definition, and NaN too rather
     * than an undefined conversion. */
    if (!(cores > 0))
        return SD_INFINITY;
    double usec = cores * 1e6 + 0.5;
    if (usec >= (double)UINT64_MAX)
        return SD_INFINITY;
    uint64_t v = (uint64_t)usec;
    /* systemd refuses 0 as "out of range"; a tiny share is still a limit. */
    return v > 0 ? v : 1;
}

/* MemoryHigh: 90 % of MemoryMax (see limits_memory_high). */
static uint64_t memory_high(uint64_t max)
{
    return max == 0 ? SD_INFINITY : limits_memory_high(max);
}

static int append_u64(const struct libsystemd *sd, sd_bus_message *m, const char *name,
                      uint64_t value)
{
    return sd->message_append(m, "(sv)", name, "t", value);
}

int systemd_append_properties(const struct libsystemd *sd, sd_bus_message *m,
                              const struct limits *l)
{
    int r = sd->message_open_container(m, 'a', "(sv)");
    if (r < 0)
        return r;
    /* All four every time: a property left out would keep the value of an
     * earlier, stricter level after that level was released. */
    if ((r = append_u64(sd, m, "CPUQuotaPerSecUSec", cpu_quota_usec(l->cpu))) < 0 ||
        (r = append_u64(sd, m, "MemoryHigh", memory_high(l->memory))) < 0 ||
        (r = append_u64(sd, m, "MemoryMax", l->memory > 0 ? l->memory : SD_INFINITY)) < 0 ||
        (r = append_u64(sd, m, "TasksMax", l->tasks > 0 ? l->tasks : SD_INFINITY)) < 0)
        return r;
    r = sd->message_close_container(m);
    return r < 0 ? r : 0;
}

int systemd_build_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid,
                       const struct limits *l, sd_bus_message **out)
{
    char slice[64];
    sd_bus_message *m = NULL;
    systemd_slice_name(uid, slice, sizeof(slice));
    *out = NULL;
    int r = sd->message_new_method_call(bus, &m, SYSTEMD_SERVICE, SYSTEMD_PATH,
                                        SYSTEMD_MANAGER, "SetUnitProperties");
    /* runtime = true: the change goes to /run, so a reboot starts every
     * user unlimited, as loginguard itself starts with no levels held. */
    if (r >= 0)
        r = sd->message_append(m, "sb", slice, 1);
    if (r >= 0)
        r = systemd_append_properties(sd, m, l);
    if (r < 0) {
        sd->message_unref(m);
        return r;
    }
    *out = m;
    return 0;
}

int systemd_build_adopt_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid, pid_t pid,
                             uint64_t start_time, sd_bus_message **out)
{
    char scope[96], slice[64], description[128];
    snprintf(scope, sizeof(scope), "loginguard-%d-%llu.scope", (int)pid,
             (unsigned long long)start_time);
    systemd_slice_name(uid, slice, sizeof(slice));
    snprintf(description, sizeof(description),
             "uid %lu's process %d, moved into its user's slice by loginguard", (unsigned long)uid,
             (int)pid);
    sd_bus_message *m = NULL;
    *out = NULL;
    int r = sd->message_new_method_call(bus, &m, SYSTEMD_SERVICE, SYSTEMD_PATH,
                                        SYSTEMD_MANAGER, "StartTransientUnit");
    if (r >= 0)
        r = sd->message_append(m, "ss", scope, "fail");
    if (r >= 0)
        r = sd->message_append(m, "a(sv)", 3, "PIDs", "au", 1, (uint32_t)pid, "Slice", "s",
                               slice, "Description", "s", description);
    if (r >= 0)
        r = sd->message_append(m, "a(sa(sv))", 0);
    if (r < 0) {
        sd->message_unref(m);
        return r;
    }
    *out = m;
    return 0;
}

int systemd_backend_open(struct systemd_backend *b, char *err, size_t err_len)
{
    b->bus = NULL;
    if (systemd_library_open(&b->sd, LIBSYSTEMD_SONAME, err, err_len) < 0)
        return -1;
    int r = b->sd.bus_open_system(&b->bus);
    if (r < 0) {
        b->bus = NULL;
        systemd_library_close(&b->sd);
        snprintf(err, err_len,
                 "cannot connect to the system D-Bus: %s; the systemd backend needs "
                 "dbus-daemon or dbus-broker running (or set [daemon] backend = cgroupfs)",
                 strerror(-r));
        return -1;
    }
    return 0;
}

void systemd_backend_close(struct systemd_backend *b)
{
    if (b->bus)
        b->sd.bus_flush_close_unref(b->bus);
    b->bus = NULL;
    systemd_library_close(&b->sd);
}

/* What went wrong with the call, and where a common cause is known, what
 * to do about it. */
static void describe_failure(const struct libsystemd *sd, char *err, size_t err_len,
                             const char *method, const char *slice, int r, const sd_bus_error *e)
{
    const char *hint = "";
    if (sd->error_has_name(e, "org.freedesktop.systemd1.NoSuchUnit"))
        hint = " (logind makes the slice at the user's first login and removes it "
               "after the last logout)";
    else if (sd->error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED) || r == -EPERM ||
             r == -EACCES)
        hint = " (changing units needs root: run loginguardd as root)";
    else if (r == -ETIMEDOUT)
        hint = " (systemd did not answer in time; is PID 1 busy or hung?)";
    else if (r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE)
        hint = " (the system bus connection is gone; the backend must be reopened)";
    if (sd->error_is_set(e))
        snprintf(err, err_len, "%s on %s failed: %s: %s%s", method, slice, e->name,
                 e->message ? e->message : strerror(-r), hint);
    else
        snprintf(err, err_len, "%s on %s failed: %s%s", method, slice, strerror(-r), hint);
}

/* Send a built call and wait for the answer (bounded). */
static int send_call(struct systemd_backend *b, sd_bus_message *call, const char *method,
                     const char *unit, char *err, size_t err_len)
{
    sd_bus_message *reply = NULL;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = b->sd.bus_call(b->bus, call, CALL_TIMEOUT_USEC, &error, &reply);
    if (r < 0)
        describe_failure(&b->sd, err, err_len, method, unit, r, &error);
    b->sd.error_free(&error);
    b->sd.message_unref(reply);
    b->sd.message_unref(call);
    return r < 0 ? -1 : 0;
}

int systemd_backend_apply(struct systemd_backend *b, uid_t uid, const struct limits *l,
                          char *err, size_t err_len)
{
    char slice[64];
    systemd_slice_name(uid, slice, sizeof(slice));
    if (!b->bus) {
        snprintf(err, err_len, "cannot limit %s: the systemd backend is not connected "
                               "(systemd_backend_open failed or was not called)", slice);
        return -1;
    }
    sd_bus_message *call = NULL;
    int r = systemd_build_call(&b->sd, b->bus, uid, l, &call);
    if (r < 0) {
        snprintf(err, err_len, "cannot build the SetUnitProperties call for %s: %s", slice,
                 strerror(-r));
        return -1;
    }
    return send_call(b, call, "SetUnitProperties", slice, err, err_len);
}

int systemd_backend_adopt(struct systemd_backend *b, uid_t uid, pid_t pid, uint64_t start_time,
                          char *err, size_t err_len)
{
    char slice[64];
    systemd_slice_name(uid, slice, sizeof(slice));
    if (!b->bus) {
        snprintf(err, err_len, "cannot move process %d into %s: the systemd backend is not "
                 "connected", (int)pid, slice);
        return -1;
    }
    sd_bus_message *call = NULL;
    int r = systemd_build_adopt_call(&b->sd, b->bus, uid, pid, start_time, &call);
    if (r < 0) {
        snprintf(err, err_len, "cannot build the StartTransientUnit call for process %d: %s",
                 (int)pid, strerror(-r));
        return -1;
    }
    return send_call(b, call, "StartTransientUnit", slice, err, err_len);
}

#else /* !HAVE_SYSTEMD */

#define NO_SYSTEMD "built without libsystemd's headers: the systemd backend is not "  \
                   "available (rebuild with libsystemd-dev installed, or set [daemon] "  \
                   "backend = cgroupfs)"

bool systemd_backend_available(const struct environment *env)
{
    (void)env;
    return false;
}

int systemd_append_properties(const struct libsystemd *sd, sd_bus_message *m,
                              const struct limits *l)
{
    (void)sd;
    (void)m;
    (void)l;
    return -ENOSYS;
}

int systemd_build_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid,
                       const struct limits *l, sd_bus_message **out)
{
    (void)sd;
    (void)bus;
    (void)uid;
    (void)l;
    *out = NULL;
    return -ENOSYS;
}

int systemd_backend_open(struct systemd_backend *b, char *err, size_t err_len)
{
    b->bus = NULL;
    b->sd.handle = NULL;
    snprintf(err, err_len, "%s", NO_SYSTEMD);
    return -1;
}

void systemd_backend_close(struct systemd_backend *b)
{
    b->bus = NULL;
}

int systemd_backend_apply(struct systemd_backend *b, uid_t uid, const struct limits *l,
                          char *err, size_t err_len)
{
    (void)b;
    (void)uid;
    (void)l;
    snprintf(err, err_len, "%s", NO_SYSTEMD);
    return -1;
}

int systemd_build_adopt_call(const struct libsystemd *sd, sd_bus *bus, uid_t uid, pid_t pid,
                             uint64_t start_time, sd_bus_message **out)
{
    (void)sd;
    (void)bus;
    (void)uid;
    (void)pid;
    (void)start_time;
    *out = NULL;
    return -ENOSYS;
}

int systemd_backend_adopt(struct systemd_backend *b, uid_t uid, pid_t pid, uint64_t start_time,
                          char *err, size_t err_len)
{
    (void)b;
    (void)uid;
    (void)pid;
    (void)start_time;
    snprintf(err, err_len, "%s", NO_SYSTEMD);
    return -1;
}

#endif
