/* The kernel's taskstats exit records: the whole CPU of every process
 * when it ends, however short its life.  Reading /proc once a sample
 * misses a process born and gone between two samples, and what one used
 * after its last reading; the kernel sends each ending thread's CPU over
 * the TASKSTATS generic-netlink family (Documentation/accounting/
 * taskstats.rst).
 *
 * The socket is non-blocking and drained from the main loop.  Any
 * process may send to it, so every datagram is checked (sender port 0 =
 * the kernel, every length, the family, the nested attributes, the
 * struct's version) before it is believed.  Where it cannot be opened
 * (not root, a kernel without CONFIG_TASKSTATS, a container) the caller
 * goes on without it: short-lived processes are then not counted.
 *
 * The kernel sends one record per thread, with that thread's own CPU;
 * the caller wants processes.  A thread group's records are summed in a
 * bounded table until its last thread's record (AGROUP), and one
 * struct ts_exit is handed over then.  What the sum cannot hold:
 *   - threads that ended before the listener subscribed, or whose record
 *     was lost (the kernel's buffer overflowed): the sum is short; a
 *     caller that subtracts what it already read of the process must
 *     clamp at 0;
 *   - a thread whose group finds no place in the table (it is full, or
 *     its uid holds TS_GROUPS_PER_UID groups already): handed over on its
 *     own at once, with `ungrouped` set, its CPU not in the group's
 *     record, so that one user's groups cannot make anyone's CPU vanish;
 *   - a thread whose record comes after its group's last one (threads
 *     ending at the same time on other CPUs): handed over on its own,
 *     with `late` set, its CPU not in the group's record;
 *   - before struct version 12 (Linux 5.19) a record does not say which
 *     process a thread belonged to: every record is handed over as it
 *     comes, with `per_thread` set; only a single-threaded process's is
 *     that process's whole CPU. */
#ifndef LOGINGUARD_TASKSTATS_H
#define LOGINGUARD_TASKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/environment.h"

/* One ended process. */
struct ts_exit {
    pid_t tgid, ppid;               /* in the host's pid namespace */
    uid_t uid;                      /* the host uid of its last thread */
    /* Its start, from the kernel's begin time, which comes in whole
     * seconds: within a second of the true start. */
    uint64_t start_realtime_usec;
    uint64_t elapsed_usec;          /* from its start to its end */
    /* User + system, its threads summed: the scheduler's run time (what
     * /proc/PID/schedstat says, and /proc/PID/stat's utime + stime to the
     * tick), or, where the kernel leaves that out (cpu_ticks), its tick
     * samples (ac_utime + ac_stime), some ticks off for each thread. */
    uint64_t cpu_usec;
    bool cpu_ticks;
    unsigned threads;               /* thread records summed */
    bool late;                      /* one thread, after its group's record */
    bool ungrouped;                 /* one thread, its group not in the table */
    bool per_thread;                /* a kernel before version 12: one thread */
    char comm[16];                  /* as the process set it: hostile */
};

/* The private table of thread groups with threads ended (taskstats_groups.c). */
struct ts_group;

/* Groups that ended with other threads still on their way out, so that
 * a record of one of those (a late one) is known for what it is. */
#define TS_FINISHED 64

struct ts_finished {
    pid_t tgid;
    int64_t start_usec;
};

struct taskstats_listener {
    int fd;                         /* -1 when closed */
    uint16_t family;                /* the generic-netlink id of TASKSTATS */
    unsigned version;               /* the struct version the kernel sends; 0 before one */
    struct ts_group *groups;        /* open addressing, slots a power of two */
    size_t group_count, group_slots;
    struct ts_uid_groups *by_uid;   /* groups in the table per uid, sorted */
    size_t by_uid_count, by_uid_capacity;
    struct ts_finished finished[TS_FINISHED];
    size_t finished_next;
    unsigned char *bufs;            /* the drain's receive buffers */
    const char *cpu_possible;       /* the environment's, to unsubscribe */
    /* Counters for status and metrics. */
    uint64_t records;               /* thread records accepted */
    uint64_t exits;                 /* struct ts_exit handed over */
    uint64_t rejected;              /* datagrams or messages that failed a check */
    uint64_t overruns;              /* times the kernel said records were lost */
    uint64_t dropped;               /* thread records handed over ungrouped */
    uint64_t stale;                 /* group sums thrown away (their end was lost) */
};

/* The most thread groups summed at once, and for one uid.  A group takes
 * a slot from its first ended thread to its last (a long-lived program
 * with worker threads coming and going holds one for its life); past
 * either bound a new group's threads are handed over ungrouped (counted
 * in dropped). */
#define TS_GROUPS_MAX 8192
#define TS_GROUPS_PER_UID 1024

struct ts_uid_groups {
    uid_t uid;
    uint32_t groups;
};

/* A listener without a socket, for a family id: what the tests and the
 * fuzzer feed with bytes. */
void taskstats_init(struct taskstats_listener *t, uint16_t family);

/* The pure step: one received datagram of len bytes from netlink port
 * sender.  Each process that ended in it goes to fn.  Returns 1 when the
 * kernel said records were lost (NLMSG_OVERRUN), else 0. */
int taskstats_feed(struct taskstats_listener *t, const void *buf, size_t len, uint32_t sender,
                   void (*fn)(const struct ts_exit *e, void *arg), void *arg);

/* Open, find the family, subscribe to the exits on every possible CPU
 * (as env->cpu_possible lists them: the listener keeps that path, which
 * must outlive it), and
 * check that the kernel's records reach this socket (a short-lived
 * child's exit must come back).  Returns 0, or -1 with err saying what
 * failed and why. */
int taskstats_open_env(struct taskstats_listener *t, const struct environment *env, char *err,
                       size_t err_len);

/* The same in the host's environment (environment_host). */
int taskstats_open(struct taskstats_listener *t, char *err, size_t err_len);

/* Read everything queued, handing each ended process to fn.  Returns 1
 * when records were lost (ENOBUFS, or the kernel's overrun message):
 * the caller may say so; the sums of groups in flight are then short. */
int taskstats_drain(struct taskstats_listener *t,
                    void (*fn)(const struct ts_exit *e, void *arg), void *arg);

/* Unsubscribe, close, free the table (also for a taskstats_init one). */
void taskstats_close(struct taskstats_listener *t);

#endif
