#include "config.h"

#include <stddef.h>
#include <string.h>
#include <utmpx.h>

#include "base/environment.h"
#include "util.h"

const char environment_host_proc[] = "/proc";

static uint64_t host_realtime(void *clock)
{
    (void)clock;
    return now_realtime_usec();
}

static uint64_t host_boottime(void *clock)
{
    (void)clock;
    return now_boottime_usec();
}

void environment_host(struct environment *env)
{
    *env = (struct environment){
        .proc = environment_host_proc,
        .cgroup = "/sys/fs/cgroup",
        .run = "/run",
        .dev = "/dev",
        .utmp = _PATH_UTMPX,
        .subuid = "/etc/subuid",
        .cpu_possible = "/sys/devices/system/cpu/possible",
        .realtime = host_realtime,
        .boottime = host_boottime,
    };
}

bool environment_kernel_mount(const char *point)
{
    return strncmp(point, "/sys/", 5) == 0 || strncmp(point, "/proc/", 6) == 0;
}
