/* Between the files of the taskstats listener (taskstats.h): the
 * checking of one exit record (taskstats_record.c), the table that sums
 * a thread group's records (taskstats_groups.c), the socket
 * (taskstats.c).  Not for other parts of the daemon. */
#ifndef LOGINGUARD_TASKSTATS_PARTS_H
#define LOGINGUARD_TASKSTATS_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe/taskstats.h"

/* The struct versions that brought the fields used here. */
#define V_BASIC 2    /* ac_comm, ac_uid, ac_pid, ac_ppid, ac_btime, ac_etime, ac_utime, ac_stime */
#define V_BTIME64 10 /* ac_btime64 */
#define V_TGID 12    /* ac_tgid, ac_tgetime, AGROUP in ac_flag */

/* One thread's record, checked. */
struct ts_record {
    unsigned version;
    pid_t pid, tgid;      /* tgid 0: not known (before version 12) */
    pid_t ppid;
    uid_t uid;
    bool group_dead;      /* the group's last thread */
    bool others_exiting;  /* it came with the group's part, which the kernel adds
                           * when the group had other threads: one of those may
                           * still be on its way out (a late record) */
    int64_t start_usec;   /* the group's start, realtime */
    uint64_t elapsed_usec;
    uint64_t cpu_usec;
    bool cpu_ticks;       /* cpu_usec from tick samples */
    char comm[16];
};

struct ts_attr {
    uint16_t type;
    const unsigned char *data;
    size_t len;
};

/* The next netlink attribute of the *left bytes at *at: 1, or 0 at the
 * end, or -1 when a length lies. */
int ts_next_attr(const unsigned char **at, size_t *left, struct ts_attr *a);

/* One generic-netlink message of the family: an exit record.  0 with r
 * filled, or -1 when a check fails. */
int ts_parse_record(const unsigned char *p, size_t len, struct ts_record *r);

/* Records were lost: forget the sums in flight (taskstats_groups.c). */
void ts_forget_groups(struct taskstats_listener *t);

#endif
