#include "config.h"

#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>

#include "base/netlink.h"
#include "observe/taskstats_parts.h"
#include "util.h"

/* Two records of one thread group give starts less than this apart (each
 * is within a second of the truth, see record_start in
 * taskstats_record.c). */
#define SAME_GROUP_USEC 2000000

struct ts_group {
    pid_t tgid;           /* 0: a free slot */
    uid_t uid;            /* of its first ended thread */
    unsigned threads;     /* records summed */
    uint64_t cpu_usec;
    int64_t start_usec;   /* the group's start, as record_start gives it */
    char comm[16];        /* the leader's, once its record came */
};

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
void ts_forget_groups(struct taskstats_listener *t)
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
static bool is_late(const struct taskstats_listener *t, const struct ts_record *r)
{
    for (size_t i = 0; i < TS_FINISHED; i++)
        if (t->finished[i].tgid == r->tgid && same_group(t->finished[i].start_usec, r->start_usec))
            return true;
    return false;
}

enum alone { GROUPED, LATE, UNGROUPED };

static void hand_over(struct taskstats_listener *t, const struct ts_record *r, const struct ts_group *g,
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
static void account(struct taskstats_listener *t, const struct ts_record *r,
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
        struct ts_record r;
        if (nh.nlmsg_type == NLMSG_OVERRUN) {
            t->overruns++;
            ts_forget_groups(t);
            lost = 1;
        } else if (nh.nlmsg_type == t->family && t->family >= NLMSG_MIN_TYPE) {
            if (ts_parse_record(payload, nh.nlmsg_len - NLMSG_HDRLEN, &r) == 0)
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
