#include "config.h"

#include <linux/acct.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stddef.h>
#include <string.h>

#include "observe/taskstats_parts.h"

#define USEC_PER_SEC 1000000LL

/* ---- checking one datagram ---- */

int ts_next_attr(const unsigned char **at, size_t *left, struct ts_attr *a)
{
    struct nlattr na;
    if (*left == 0)
        return 0;
    if (*left < NLA_HDRLEN)
        return -1;
    memcpy(&na, *at, sizeof(na));
    if (na.nla_len < NLA_HDRLEN || na.nla_len > *left)
        return -1;
    a->type = na.nla_type & NLA_TYPE_MASK;
    a->data = *at + NLA_HDRLEN;
    a->len = na.nla_len - NLA_HDRLEN;
    size_t step = NLA_ALIGN(na.nla_len);
    if (step > *left)
        step = *left; /* the last one needs no padding */
    *at += step;
    *left -= step;
    return 1;
}

/* A nest as the kernel builds it: an id (id_type: a u32 pid or tgid)
 * and the stats; padding (TYPE_NULL) and types of later kernels are
 * passed over.  0, or -1 when something is missing, doubled or cut. */
static int parse_nest(const struct ts_attr *nest, uint16_t id_type, uint32_t *id,
                      struct ts_attr *stats)
{
    const unsigned char *at = nest->data;
    size_t left = nest->len;
    bool have_id = false, have_stats = false;
    struct ts_attr a;
    int rc;
    while ((rc = ts_next_attr(&at, &left, &a)) > 0) {
        if (a.type == id_type) {
            if (have_id || a.len != sizeof(*id))
                return -1;
            memcpy(id, a.data, sizeof(*id));
            have_id = true;
        } else if (a.type == TASKSTATS_TYPE_STATS) {
            if (have_stats)
                return -1;
            *stats = a;
            have_stats = true;
        }
    }
    return rc == 0 && have_id && have_stats ? 0 : -1;
}

/* The group's start in realtime usec.  The kernel gives a thread's begin
 * time as whole seconds (now, rounded down, less its elapsed seconds,
 * rounded down), so the thread's true start is within a second of it;
 * from version 12 the group's elapsed time (the leader's) moves that to
 * the group's start. */
static int64_t record_start(const struct taskstats *ts)
{
    uint64_t btime = ts->version >= V_BTIME64 ? ts->ac_btime64 : ts->ac_btime;
    if (btime > (uint64_t)(INT64_MAX / USEC_PER_SEC))
        return 0; /* no time of this world: unknown, as a start before 1970 is */
    int64_t start = (int64_t)btime * USEC_PER_SEC;
    if (ts->version >= V_TGID) {
        uint64_t earlier = ts->ac_tgetime - ts->ac_etime; /* the caller checked the order */
        start = earlier < (uint64_t)start ? start - (int64_t)earlier : 0;
    }
    return start;
}

/* The struct taskstats in a (its size is the sender's: a newer kernel's
 * is longer, an older one's shorter).  Only fields its version has are
 * used, and they must all be there. */
static int decode_stats(const struct ts_attr *a, struct ts_record *r)
{
    struct taskstats ts;
    memset(&ts, 0, sizeof(ts));
    if (a->len < sizeof(ts.version))
        return -1;
    memcpy(&ts, a->data, a->len < sizeof(ts) ? a->len : sizeof(ts));
    size_t need;
    if (ts.version >= V_TGID)
        need = offsetof(struct taskstats, ac_tgetime) + sizeof(ts.ac_tgetime);
    else if (ts.version >= V_BTIME64)
        need = offsetof(struct taskstats, ac_btime64) + sizeof(ts.ac_btime64);
    else if (ts.version >= V_BASIC)
        need = offsetof(struct taskstats, ac_stime) + sizeof(ts.ac_stime);
    else
        return -1; /* version 1 had no CPU times (and another layout) */
    if (a->len < need || ts.ac_pid == 0 || ts.ac_pid > INT32_MAX)
        return -1;
    r->version = ts.version;
    r->pid = (pid_t)ts.ac_pid;
    r->ppid = ts.ac_ppid <= INT32_MAX ? (pid_t)ts.ac_ppid : 0;
    r->uid = ts.ac_uid;
    if (ts.version >= V_TGID) {
        if (ts.ac_tgid == 0 || ts.ac_tgid > INT32_MAX || ts.ac_tgetime < ts.ac_etime)
            return -1; /* the group began no later than its thread */
        r->tgid = (pid_t)ts.ac_tgid;
        r->group_dead = ts.ac_flag & AGROUP;
        r->elapsed_usec = ts.ac_tgetime;
    } else {
        r->elapsed_usec = ts.ac_etime;
    }
    r->start_usec = record_start(&ts);
    /* The scheduler's run time where the kernel fills it (with
     * CONFIG_TASK_DELAY_ACCT; /proc's utime + stime add up to the same
     * sum), else the tick samples, off by some ticks a thread. */
    if (ts.cpu_run_virtual_total > 0) {
        r->cpu_usec = ts.cpu_run_virtual_total / 1000;
    } else {
        r->cpu_usec = ts.ac_utime + ts.ac_stime;
        r->cpu_ticks = true;
    }
    /* TS_COMM_LEN is 32, the kernel's names 16 with their NUL. */
    size_t n = strnlen(ts.ac_comm, sizeof(r->comm) - 1);
    memcpy(r->comm, ts.ac_comm, n);
    r->comm[n] = '\0';
    return 0;
}

int ts_parse_record(const unsigned char *p, size_t len, struct ts_record *r)
{
    struct genlmsghdr gh;
    memset(r, 0, sizeof(*r));
    if (len < GENL_HDRLEN)
        return -1;
    memcpy(&gh, p, sizeof(gh));
    if (gh.cmd != TASKSTATS_CMD_NEW)
        return -1;
    const unsigned char *at = p + GENL_HDRLEN;
    size_t left = len - GENL_HDRLEN;
    struct ts_attr a, pid_nest = {0}, tgid_nest = {0};
    int rc;
    while ((rc = ts_next_attr(&at, &left, &a)) > 0) {
        struct ts_attr *slot = a.type == TASKSTATS_TYPE_AGGR_PID    ? &pid_nest
                            : a.type == TASKSTATS_TYPE_AGGR_TGID ? &tgid_nest
                                                                 : NULL;
        if (!slot)
            continue; /* padding, or something of a later kernel */
        if (slot->data)
            return -1; /* one of each */
        *slot = a;
    }
    if (rc < 0 || !pid_nest.data)
        return -1;
    uint32_t pid, tgid;
    struct ts_attr stats, group_stats;
    if (parse_nest(&pid_nest, TASKSTATS_TYPE_PID, &pid, &stats) < 0 || decode_stats(&stats, r) < 0 ||
        pid != (uint32_t)r->pid)
        return -1;
    if (tgid_nest.data) {
        /* Sent with the last thread of a group that had more than one;
         * its stats hold only delay accounting, not CPU times. */
        if (parse_nest(&tgid_nest, TASKSTATS_TYPE_TGID, &tgid, &group_stats) < 0 || tgid == 0 ||
            tgid > INT32_MAX)
            return -1;
        if (r->version >= V_TGID && ((pid_t)tgid != r->tgid || !r->group_dead))
            return -1;
        r->tgid = (pid_t)tgid;
        r->group_dead = true;
        r->others_exiting = true;
    }
    return 0;
}
