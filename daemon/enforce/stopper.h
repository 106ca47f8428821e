/* Stopping processes safely: SIGTERM, a grace period, SIGKILL, through a
 * pidfd.  The pidfd is opened first and the process's identity (uid and
 * start time, as the sampler saw them) is checked after: from then on the
 * pidfd can only ever reach that process, so a pid recycled between the
 * decision and the signal is never hit. */
#ifndef LOGINGUARD_STOPPER_H
#define LOGINGUARD_STOPPER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe/procfs.h"

struct stop_target {
    pid_t pid;
    uint64_t start_time;   /* ticks after boot, from /proc/PID/stat */
    uid_t uid;
    char comm[COMM_LEN];
    char exe[256];         /* for the events; may be cut short */
};

/* A process that got SIGTERM and has its grace period to go. */
struct pending_stop {
    struct stop_target target;
    int pidfd;
    uint64_t deadline;     /* boottime usec */
};

struct stopper {
    struct pending_stop *pending;
    size_t count, capacity;
};

enum stop_result {
    STOP_SIGNALLED,        /* SIGTERM sent, SIGKILL follows after the grace */
    STOP_GONE,             /* it had already exited */
    STOP_IDENTITY_CHANGED, /* the pid is someone else's now: nothing sent */
    STOP_FAILED,           /* the kernel refused; errno kept */
};

/* Whether /proc/PID is still the process that started at start_time
 * (ticks after boot). */
bool process_is(const char *proc_root, pid_t pid, uint64_t start_time);

/* proc_root is "/proc" except in tests. */
enum stop_result stopper_terminate(struct stopper *s, const char *proc_root,
                                   const struct stop_target *t, uint64_t grace_usec,
                                   uint64_t now);

/* What happened to one pending stop at a tick. */
enum stop_outcome { STOP_EXITED, STOP_KILLED };
typedef void stop_report_fn(const struct stop_target *t, enum stop_outcome outcome, void *arg);

/* Reap the pending stops: report those that exited, SIGKILL and report
 * those past their deadline.  Returns the earliest deadline still
 * pending (boottime usec), or 0 when none is. */
uint64_t stopper_tick(struct stopper *s, uint64_t now, stop_report_fn *report, void *arg);

void stopper_free(struct stopper *s);

#endif
