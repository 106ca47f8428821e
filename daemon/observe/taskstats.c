#include "config.h"

#include <errno.h>
#include <linux/acct.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/netlink.h"
#include "observe/taskstats.h"
#include "util.h"

/* A burst of exits between two drains of the main loop (a record takes
 * about 1 KiB of buffer): past it the kernel drops records (ENOBUFS). */
#define RCVBUF_BYTES (8 << 20)
#define BATCH 16
/* A record is about 450 bytes, twice that with the group's part; the
 * struct grows with new kernels. */
#define DGRAM_MAX 4096

/* The struct versions that brought the fields used here. */
#define V_BASIC 2    /* ac_comm, ac_uid, ac_pid, ac_ppid, ac_btime, ac_etime, ac_utime, ac_stime */
#define V_BTIME64 10 /* ac_btime64 */
#define V_TGID 12    /* ac_tgid, ac_tgetime, AGROUP in ac_flag */

/* Two records of one thread group give starts less than this apart (each
 * is within a second of the truth, see record_start). */
#define SAME_GROUP_USEC 2000000

#define USEC_PER_SEC 1000000LL

struct ts_group {
    pid_t tgid;           /* 0: a free slot */
    uid_t uid;            /* of its first ended thread */
    unsigned threads;     /* records summed */
    uint64_t cpu_usec;
    int64_t start_usec;   /* the group's start, as record_start gives it */
    char comm[16];        /* the leader's, once its record came */
};

/* One thread's record, checked. */
struct record {
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

/* ---- checking one datagram ---- */

struct attr {
    uint16_t type;
    const unsigned char *data;
    size_t len;
};

/* The next netlink attribute of the *left bytes at *at: 1, or 0 at the
 * end, or -1 when a length lies. */
static int next_attr(const unsigned char **at, size_t *left, struct attr *a)
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
static int parse_nest(const struct attr *nest, uint16_t id_type, uint32_t *id,
                      struct attr *stats)
{
    const unsigned char *at = nest->data;
    size_t left = nest->len;
    bool have_id = false, have_stats = false;
    struct attr a;
    int rc;
    while ((rc = next_attr(&at, &left, &a)) > 0) {
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
static int decode_stats(const struct attr *a, struct record *r)
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

/* One generic-netlink message of the family: an exit record.  0 with r
 * filled, or -1 when a check fails. */
static int parse_record(const unsigned char *p, size_t len, struct record *r)
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
    struct attr a, pid_nest = {0}, tgid_nest = {0};
    int rc;
    while ((rc = next_attr(&at, &left, &a)) > 0) {
        struct attr *slot = a.type == TASKSTATS_TYPE_AGGR_PID    ? &pid_nest
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
    struct attr stats, group_stats;
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

/* ---- the table of thread groups in flight ---- */

/* Fibonacci hashing: the top bits of the product, so that pids with
 * equal low bits (multiples of 4096, say) still spread. */
static size_t home_of(const struct taskstats_listener *t, pid_t tgid)
{
    unsigned bits = (unsigned)__builtin_ctzl(t->group_slots);
    return (size_t)(((uint64_t)(uint32_t)tgid * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static struct ts_group *find_group(struct taskstats_listener *t, pid_t tgid)
{
    if (t->group_count == 0)
        return NULL;
    for (size_t h = home_of(t, tgid);; h = (h + 1) & (t->group_slots - 1)) {
        if (t->groups[h].tgid == tgid)
            return &t->groups[h];
        if (t->groups[h].tgid == 0)
            return NULL;
    }
}

static struct ts_group *place(struct taskstats_listener *t, pid_t tgid)
{
    size_t h = home_of(t, tgid);
    while (t->groups[h].tgid != 0)
        h = (h + 1) & (t->group_slots - 1);
    t->groups[h].tgid = tgid;
    t->group_count++;
    return &t->groups[h];
}

static void resize(struct taskstats_listener *t, size_t slots)
{
    struct ts_group *old = t->groups;
    size_t old_slots = t->group_slots;
    t->groups = xcalloc(slots, sizeof(*t->groups));
    t->group_slots = slots;
    t->group_count = 0;
    for (size_t i = 0; i < old_slots; i++)
        if (old[i].tgid != 0)
            *place(t, old[i].tgid) = old[i];
    free(old);
}

/* How many groups of uid the table holds. */
static uint32_t *groups_of(struct taskstats_listener *t, uid_t uid)
{
    size_t at;
    t->by_uid = uid_entry(t->by_uid, &t->by_uid_count, &t->by_uid_capacity, sizeof(*t->by_uid),
                          offsetof(struct ts_uid_groups, uid), uid, &at);
    return &t->by_uid[at].groups;
}

/* A new, empty group of uid; NULL when the table, or uid's share of it,
 * is at its bound. */
static struct ts_group *add_group(struct taskstats_listener *t, pid_t tgid, uid_t uid)
{
    if (t->group_count >= TS_GROUPS_MAX)
        return NULL;
    uint32_t *held = groups_of(t, uid);
    if (*held >= TS_GROUPS_PER_UID)
        return NULL;
    if ((t->group_count + 1) * 2 > t->group_slots)
        resize(t, t->group_slots ? t->group_slots * 2 : 64);
    (*held)++;
    struct ts_group *g = place(t, tgid);
    g->uid = uid;
    return g;
}

/* Linear probing: the entries after the hole that could not sit in
 * their home slot while it was taken move back into it. */
static void remove_group(struct taskstats_listener *t, struct ts_group *g)
{
    /* A uid without groups leaves the list: it holds only those with. */
    size_t at = uid_position(t->by_uid, t->by_uid_count, sizeof(*t->by_uid),
                             offsetof(struct ts_uid_groups, uid), g->uid);
    if (at < t->by_uid_count && t->by_uid[at].uid == g->uid && --t->by_uid[at].groups == 0)
        memmove(&t->by_uid[at], &t->by_uid[at + 1],
                (--t->by_uid_count - at) * sizeof(*t->by_uid));
    size_t mask = t->group_slots - 1, hole = (size_t)(g - t->groups);
    for (size_t i = (hole + 1) & mask; t->groups[i].tgid != 0; i = (i + 1) & mask) {
        size_t home = home_of(t, t->groups[i].tgid);
        bool between = hole <= i ? hole < home && home <= i : hole < home || home <= i;
        if (!between) {
            t->groups[hole] = t->groups[i];
            hole = i;
        }
    }
    memset(&t->groups[hole], 0, sizeof(t->groups[hole]));
    t->group_count--;
}

/* Records were lost: any sum in flight may miss a thread, and a group
 * whose last record was lost would stay and be summed into a later
 * process with its pid.  Forget them all (their groups' exits then come
 * short, which the caller clamps). */
static void forget_groups(struct taskstats_listener *t)
{
    t->stale += t->group_count;
    if (t->groups)
        memset(t->groups, 0, t->group_slots * sizeof(*t->groups));
    t->group_count = 0;
    t->by_uid_count = 0;
    memset(t->finished, 0, sizeof(t->finished));
}

static bool same_group(int64_t a, int64_t b)
{
    return (a > b ? a - b : b - a) < SAME_GROUP_USEC;
}

/* A record of a thread whose group was already handed over. */
static bool is_late(const struct taskstats_listener *t, const struct record *r)
{
    for (size_t i = 0; i < TS_FINISHED; i++)
        if (t->finished[i].tgid == r->tgid && same_group(t->finished[i].start_usec, r->start_usec))
            return true;
    return false;
}

enum alone { GROUPED, LATE, UNGROUPED };

static void hand_over(struct taskstats_listener *t, const struct record *r, const struct ts_group *g,
                      enum alone alone, void (*fn)(const struct ts_exit *e, void *arg), void *arg)
{
    struct ts_exit e;
    memset(&e, 0, sizeof(e));
    e.tgid = r->tgid ? r->tgid : r->pid;
    e.ppid = r->ppid;
    e.uid = r->uid;
    e.start_realtime_usec = (uint64_t)r->start_usec;
    e.elapsed_usec = r->elapsed_usec;
    e.cpu_usec = r->cpu_usec + (g ? g->cpu_usec : 0);
    e.threads = 1 + (g ? g->threads : 0);
    e.cpu_ticks = r->cpu_ticks;
    e.late = alone == LATE;
    e.ungrouped = alone == UNGROUPED;
    e.per_thread = r->version < V_TGID;
    copy_string(e.comm, sizeof(e.comm), g && g->comm[0] && r->pid != r->tgid ? g->comm : r->comm);
    t->exits++;
    fn(&e, arg);
}

/* One accepted record: summed into its group, or its group handed over. */
static void account(struct taskstats_listener *t, const struct record *r,
                    void (*fn)(const struct ts_exit *e, void *arg), void *arg)
{
    t->records++;
    t->version = r->version;
    if (r->version < V_TGID) {
        hand_over(t, r, NULL, GROUPED, fn, arg); /* which process a thread was of is not said */
        return;
    }
    struct ts_group *g = find_group(t, r->tgid);
    if (g && !same_group(g->start_usec, r->start_usec)) {
        remove_group(t, g); /* an earlier process with this pid, whose end was lost */
        t->stale++;
        g = NULL;
    }
    if (r->group_dead) {
        struct ts_group sum;
        if (g) {
            sum = *g;
            remove_group(t, g);
        }
        if (r->others_exiting) {
            t->finished[t->finished_next] = (struct ts_finished){r->tgid, r->start_usec};
            t->finished_next = (t->finished_next + 1) % TS_FINISHED;
        }
        hand_over(t, r, g ? &sum : NULL, GROUPED, fn, arg);
        return;
    }
    if (!g && is_late(t, r)) {
        hand_over(t, r, NULL, LATE, fn, arg);
        return;
    }
    if (!g) {
        g = add_group(t, r->tgid, r->uid);
        if (!g) {
            /* Counted on its own now rather than lost. */
            t->dropped++;
            hand_over(t, r, NULL, UNGROUPED, fn, arg);
            return;
        }
        g->start_usec = r->start_usec;
    }
    g->cpu_usec += r->cpu_usec;
    g->threads++;
    if (r->pid == r->tgid)
        memcpy(g->comm, r->comm, sizeof(g->comm));
}

void taskstats_init(struct taskstats_listener *t, uint16_t family)
{
    memset(t, 0, sizeof(*t));
    t->fd = -1;
    t->family = family;
}

int taskstats_feed(struct taskstats_listener *t, const void *buf, size_t len, uint32_t sender,
                   void (*fn)(const struct ts_exit *e, void *arg), void *arg)
{
    if (sender != 0) { /* only the kernel speaks for taskstats */
        t->rejected++;
        return 0;
    }
    int lost = 0;
    struct netlink_walk w = {buf, len};
    struct nlmsghdr nh;
    const unsigned char *payload;
    int more;
    while ((more = netlink_next(&w, &nh, &payload)) > 0) {
        struct record r;
        if (nh.nlmsg_type == NLMSG_OVERRUN) {
            t->overruns++;
            forget_groups(t);
            lost = 1;
        } else if (nh.nlmsg_type == t->family && t->family >= NLMSG_MIN_TYPE) {
            if (parse_record(payload, nh.nlmsg_len - NLMSG_HDRLEN, &r) == 0)
                account(t, &r, fn, arg);
            else
                t->rejected++;
        } else if (nh.nlmsg_type != NLMSG_NOOP) {
            t->rejected++;
        }
    }
    if (more < 0)
        t->rejected++;
    return lost;
}

/* ---- the socket ---- */

/* A request to the kernel: a netlink header, a generic-netlink header
 * and attributes. */
struct request {
    unsigned char bytes[4096] __attribute__((aligned(8)));
    size_t len;
};

static void request_start(struct request *q, uint16_t type, uint16_t flags, uint32_t seq,
                          uint8_t cmd, uint8_t version)
{
    struct nlmsghdr nh = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq};
    struct genlmsghdr gh = {.cmd = cmd, .version = version};
    memset(q, 0, sizeof(*q));
    memcpy(q->bytes, &nh, sizeof(nh));
    memcpy(q->bytes + NLMSG_HDRLEN, &gh, sizeof(gh));
    q->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* A string attribute; false when it does not fit. */
static bool request_string(struct request *q, uint16_t type, const char *text)
{
    size_t len = strlen(text) + 1;
    if (q->len + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(q->bytes) || NLA_HDRLEN + len > UINT16_MAX)
        return false;
    struct nlattr na = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};
    memcpy(q->bytes + q->len, &na, sizeof(na));
    memcpy(q->bytes + q->len + NLA_HDRLEN, text, len);
    q->len += NLA_HDRLEN + NLA_ALIGN(len);
    return true;
}

static int request_send(int fd, struct request *q)
{
    struct nlmsghdr nh;
    memcpy(&nh, q->bytes, sizeof(nh));
    nh.nlmsg_len = (uint32_t)q->len;
    memcpy(q->bytes, &nh, sizeof(nh));
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    return sendto(fd, q->bytes, q->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) ==
                   (ssize_t)q->len
               ? 0
               : -1;
}

struct answer {
    uint32_t seq;
    uint16_t want;
    unsigned char *ans;
    size_t cap, *ans_len;
};

static int judge_answer(const unsigned char *buf, size_t n, uint32_t sender, void *arg)
{
    struct answer *w = arg;
    struct nlmsghdr nh;
    if (n < sizeof(nh) || sender != 0)
        return -1;
    memcpy(&nh, buf, sizeof(nh));
    if (nh.nlmsg_seq != w->seq || nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > n)
        return -1;
    size_t body = nh.nlmsg_len - NLMSG_HDRLEN;
    if (nh.nlmsg_type == NLMSG_ERROR) {
        struct nlmsgerr e;
        if (body < sizeof(e.error))
            return -1;
        memcpy(&e.error, buf + NLMSG_HDRLEN, sizeof(e.error));
        if (e.error != 0 || w->want == NLMSG_ERROR)
            return -e.error;
    } else if (nh.nlmsg_type == w->want) {
        *w->ans_len = body < w->cap ? body : w->cap;
        memcpy(w->ans, buf + NLMSG_HDRLEN, *w->ans_len);
        return 0;
    }
    return -1;
}

/* The kernel's answer to request seq: a message of type want (its
 * payload copied to ans, *ans_len bytes), or its error.  Returns 0, the
 * kernel's error (an errno), or ETIMEDOUT.  Other datagrams (exit
 * records that come before the answer) are dropped: the daemon's first
 * sample reads every process there is. */
static int wait_answer(int fd, uint32_t seq, uint16_t want, unsigned char *ans, size_t cap,
                       size_t *ans_len)
{
    struct answer w = {seq, want, ans, cap, ans_len};
    return netlink_wait(fd, 2000, judge_answer, &w);
}

/* The generic-netlink id of the TASKSTATS family, from the controller's
 * answer (which must name the family asked for); 0 if it has none. */
static uint16_t family_from(const unsigned char *ans, size_t len)
{
    struct genlmsghdr gh;
    if (len < GENL_HDRLEN)
        return 0;
    memcpy(&gh, ans, sizeof(gh));
    if (gh.cmd != CTRL_CMD_NEWFAMILY)
        return 0;
    const unsigned char *at = ans + GENL_HDRLEN;
    size_t left = len - GENL_HDRLEN;
    struct attr a;
    uint16_t id = 0;
    bool named = false;
    while (next_attr(&at, &left, &a) > 0) {
        if (a.type == CTRL_ATTR_FAMILY_ID && a.len == sizeof(id))
            memcpy(&id, a.data, sizeof(id));
        else if (a.type == CTRL_ATTR_FAMILY_NAME)
            named = a.len == sizeof(TASKSTATS_GENL_NAME) &&
                    memcmp(a.data, TASKSTATS_GENL_NAME, a.len) == 0;
    }
    return named && id >= NLMSG_MIN_TYPE ? id : 0;
}

/* "0-63" or "0-3,8-11": the CPUs the kernel may ever run tasks on. */
static void possible_cpus(char *buf, size_t len)
{
    FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
    if (f) {
        bool ok = fgets(buf, (int)len, f) != NULL;
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
        if (ok && buf[0])
            return;
    }
    long n = sysconf(_SC_NPROCESSORS_CONF);
    snprintf(buf, len, "0-%ld", n > 1 ? n - 1 : 0);
}

struct probe {
    pid_t child;
    bool seen;
};

static void note_probe(const struct ts_exit *e, void *arg)
{
    struct probe *p = arg;
    if (e->tgid == p->child)
        p->seen = true;
}

/* Subscribed is not enough: the kernel sends the records to the host's
 * network namespace only, and a listener elsewhere (a container) gets
 * nothing.  A child that ends at once must be reported within a moment. */
static int probe_exit(struct taskstats_listener *t)
{
    struct probe p = {fork(), false};
    if (p.child < 0)
        return errno;
    if (p.child == 0)
        _exit(0);
    struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
    for (int waited = 0; !p.seen && waited < 2000; waited += 50) {
        poll(&pfd, 1, 50);
        taskstats_drain(t, note_probe, &p);
    }
    while (waitpid(p.child, NULL, 0) < 0 && errno == EINTR)
        ;
    return p.seen ? 0 : ETIMEDOUT;
}

static const char *consequence = "the CPU of processes that end between two samples is not counted";

int taskstats_open(struct taskstats_listener *t, char *err, size_t err_len)
{
    taskstats_init(t, 0);
    t->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (t->fd < 0) {
        snprintf(err, err_len, "cannot open a generic netlink socket (%s); %s", strerror(errno),
                 consequence);
        return -1;
    }
    int size = RCVBUF_BYTES;
    if (setsockopt(t->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
        setsockopt(t->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    struct sockaddr_nl me = {.nl_family = AF_NETLINK};
    uint32_t seq = 0;
    if (getrandom(&seq, sizeof(seq), GRND_NONBLOCK) < 0)
        seq = (uint32_t)getpid() ^ (uint32_t)time(NULL);
    unsigned char ans[1024];
    size_t ans_len = 0;
    struct request q;
    int rc;
    if (bind(t->fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
        snprintf(err, err_len, "cannot bind a generic netlink socket (%s); %s", strerror(errno),
                 consequence);
        goto fail;
    }

    request_start(&q, GENL_ID_CTRL, NLM_F_REQUEST, ++seq, CTRL_CMD_GETFAMILY, 1);
    request_string(&q, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
    rc = request_send(t->fd, &q) < 0 ? errno
                                      : wait_answer(t->fd, seq, GENL_ID_CTRL, ans, sizeof(ans),
                                                    &ans_len);
    if (rc == 0 && (t->family = family_from(ans, ans_len)) == 0)
        rc = EPROTO;
    if (rc != 0) {
        snprintf(err, err_len, "cannot find the kernel's TASKSTATS netlink family (%s)%s; %s",
                 strerror(rc), rc == ENOENT ? ": a kernel built without CONFIG_TASKSTATS" : "",
                 consequence);
        goto fail;
    }

    char cpus[2048];
    possible_cpus(cpus, sizeof(cpus));
    request_start(&q, t->family, NLM_F_REQUEST | NLM_F_ACK, ++seq, TASKSTATS_CMD_GET,
                  TASKSTATS_GENL_VERSION);
    rc = !request_string(&q, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpus) ? E2BIG
         : request_send(t->fd, &q) < 0 ? errno
                                         : wait_answer(t->fd, seq, NLMSG_ERROR, ans, sizeof(ans),
                                                       &ans_len);
    if (rc != 0) {
        const char *why = rc == EPERM    ? ": it needs root with CAP_NET_ADMIN"
                          : rc == EINVAL ? ": outside the host's user and pid namespaces (a"
                                           " container), or a CPU list the kernel refused"
                                         : "";
        snprintf(err, err_len, "cannot subscribe to the kernel's exit records for CPUs %s (%s)%s; %s",
                 cpus, strerror(rc), why, consequence);
        goto fail;
    }

    t->bufs = xmalloc((size_t)BATCH * DGRAM_MAX);
    rc = probe_exit(t);
    if (rc != 0) {
        snprintf(err, err_len, "subscribed to the kernel's exit records, but %s (%s)%s; %s",
                 rc == ETIMEDOUT ? "a test process's record did not come within 2 s"
                                 : "cannot start a test process",
                 strerror(rc),
                 rc == ETIMEDOUT ? ": the kernel sends them to the host's network namespace"
                                   " only (a container?)"
                                 : "",
                 consequence);
        goto fail;
    }
    /* The counters start here: what came during the probe was not handed on. */
    t->records = t->exits = t->rejected = t->overruns = t->dropped = t->stale = 0;
    return 0;
fail:
    taskstats_close(t);
    return -1;
}

void taskstats_close(struct taskstats_listener *t)
{
    if (t->fd >= 0 && t->family != 0) {
        char cpus[2048];
        struct request q;
        possible_cpus(cpus, sizeof(cpus));
        request_start(&q, t->family, NLM_F_REQUEST, 0, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION);
        if (request_string(&q, TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK, cpus))
            request_send(t->fd, &q);
    }
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
    free(t->groups);
    t->groups = NULL;
    t->group_count = t->group_slots = 0;
    free(t->by_uid);
    t->by_uid = NULL;
    t->by_uid_count = t->by_uid_capacity = 0;
    free(t->bufs);
    t->bufs = NULL;
}

int taskstats_drain(struct taskstats_listener *t,
                    void (*fn)(const struct ts_exit *e, void *arg), void *arg)
{
    struct sockaddr_nl from[BATCH];
    struct iovec iov[BATCH];
    struct mmsghdr msgs[BATCH];
    int lost = 0;
    while (t->fd >= 0) {
        for (int i = 0; i < BATCH; i++) {
            iov[i] = (struct iovec){t->bufs + (size_t)i * DGRAM_MAX, DGRAM_MAX};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                              .msg_namelen = sizeof(from[i]),
                                              .msg_iov = &iov[i],
                                              .msg_iovlen = 1};
        }
        int n = recvmmsg(t->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == ENOBUFS) {
                t->overruns++;
                forget_groups(t);
                lost = 1;
                continue;
            }
            if (errno == EINTR)
                continue;
            break; /* EAGAIN: all read */
        }
        for (int i = 0; i < n; i++) {
            bool from_netlink = msgs[i].msg_hdr.msg_namelen >= sizeof(struct sockaddr_nl) &&
                                from[i].nl_family == AF_NETLINK;
            if (!from_netlink || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)) {
                t->rejected++;
                continue;
            }
            if (taskstats_feed(t, iov[i].iov_base, msgs[i].msg_len, from[i].nl_pid, fn, arg))
                lost = 1;
        }
        if (n < BATCH)
            break;
    }
    return lost;
}
