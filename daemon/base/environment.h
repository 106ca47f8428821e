/* Everything outside the daemon that its edges touch, named in one
 * place: the roots of /proc, the cgroup filesystem, /run and /dev, the
 * utmp file, /etc/subuid, the kernel's list of possible CPUs, and the
 * clocks.  Filled once at start with the host's
 * (environment_host); a test or a benchmark points any of them elsewhere
 * (a fake /proc in a temporary directory, a clock it moves by hand) and
 * hands the struct to the edges it exercises. */
#ifndef LOGINGUARD_ENVIRONMENT_H
#define LOGINGUARD_ENVIRONMENT_H

#include <stdbool.h>
#include <stdint.h>

struct environment {
    const char *proc;       /* "/proc" */
    const char *cgroup;     /* "/sys/fs/cgroup" */
    const char *run;        /* "/run": /run/user/UID, systemd's runtime directory */
    const char *dev;        /* "/dev": the terminals notices are written to */
    const char *utmp;       /* _PATH_UTMPX; NULL: no logins are looked up */
    const char *subuid;     /* "/etc/subuid": subordinate uid ranges (subuid.h) */
    const char *cpu_possible; /* "/sys/devices/system/cpu/possible": taskstats' CPUs */
    /* Microseconds since the epoch, and since boot (suspend included). */
    uint64_t (*realtime)(void *clock);
    uint64_t (*boottime)(void *clock);
    void *clock;            /* what the two are given: NULL for the host's */
};

/* The host's roots and clocks. */
void environment_host(struct environment *env);

/* The host's /proc, whatever env->proc says: for what the daemon reads
 * of itself and of its own children (its fds, its helper's state),
 * which a fake /proc in a test does not have. */
extern const char environment_host_proc[];

/* Whether a mount point is in the kernel's own file systems (under /sys
 * or /proc), where no user keeps files. */
bool environment_kernel_mount(const char *point);

static inline uint64_t env_realtime(const struct environment *env)
{
    return env->realtime(env->clock);
}

static inline uint64_t env_boottime(const struct environment *env)
{
    return env->boottime(env->clock);
}

#endif
