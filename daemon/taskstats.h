/* (interim header: the taskstats listener's record of a process exit) */
#ifndef LOGINGUARD_TASKSTATS_H
#define LOGINGUARD_TASKSTATS_H

#include <stdint.h>
#include <sys/types.h>

struct ts_exit {
    pid_t tgid, ppid;
    uid_t uid;
    uint64_t start_realtime_usec, elapsed_usec, cpu_usec;
    char comm[16];
};

#endif
