#include "config.h"

#include <stddef.h>
#include <utmpx.h>

#include "base/environment.h"
#include "util.h"

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
        .proc = "/proc",
        .cgroup = "/sys/fs/cgroup",
        .run = "/run",
        .dev = "/dev",
        .utmp = _PATH_UTMPX,
        .realtime = host_realtime,
        .boottime = host_boottime,
    };
}
