/* The taskstats listener's checks and sums, on crafted datagrams: only
 * the kernel's well-formed exit records count, each process is handed
 * over once with its threads' CPU summed, and the table of groups in
 * flight stays bounded. */
#include "config.h"

#include <linux/acct.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>

#include "observe/taskstats.h"
#include "testutil.h"

#define FAMILY 31
#define NOW 1790000000LL /* realtime seconds when the records were made */

struct dgram {
    unsigned char bytes[4096] __attribute__((aligned(8)));
    size_t len;
};

/* One thread's record as a kernel of version 16 fills it (the struct in
 * the header is version 13: the bytes of later fields follow it). */
struct thread {
    pid_t pid, tgid, ppid;
    uid_t uid;
    bool last;                /* AGROUP */
    uint64_t cpu_usec;        /* cpu_run_virtual_total / 1000 */
    uint64_t group_age_usec;  /* ac_tgetime */
    uint64_t age_usec;        /* ac_etime */
    const char *comm;
};

static struct taskstats stats_of(const struct thread *th)
{
    struct taskstats ts;
    memset(&ts, 0, sizeof(ts));
    ts.version = 16;
    ts.ac_flag = th->last ? AGROUP : 0;
    ts.cpu_run_virtual_total = th->cpu_usec * 1000 + 999;
    ts.ac_utime = th->cpu_usec / 2 + 4000; /* tick samples: not what is used */
    ts.ac_stime = th->cpu_usec / 2;
    strncpy(ts.ac_comm, th->comm ? th->comm : "prog", sizeof(ts.ac_comm));
    ts.ac_uid = th->uid;
    ts.ac_pid = (uint32_t)th->pid;
    ts.ac_tgid = (uint32_t)th->tgid;
    ts.ac_ppid = (uint32_t)th->ppid;
    ts.ac_etime = th->age_usec;
    ts.ac_tgetime = th->group_age_usec ? th->group_age_usec : th->age_usec;
    ts.ac_btime64 = (uint64_t)(NOW - (int64_t)(th->age_usec / 1000000));
    ts.ac_btime = (uint32_t)ts.ac_btime64;
    return ts;
}

static size_t put_attr(unsigned char *at, uint16_t type, const void *data, size_t len)
{
    struct nlattr na = {.nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type};
    memcpy(at, &na, sizeof(na));
    if (data)
        memcpy(at + NLA_HDRLEN, data, len);
    return NLA_HDRLEN + NLA_ALIGN(len);
}

/* A nest of an id and stats (stats_len bytes of ts, zeros past it). */
static size_t put_nest(unsigned char *at, uint16_t nest_type, uint16_t id_type, uint32_t id,
                       const struct taskstats *ts, size_t stats_len)
{
    unsigned char stats[1024] = {0};
    memcpy(stats, ts, stats_len < sizeof(*ts) ? stats_len : sizeof(*ts));
    size_t len = NLA_HDRLEN;
    len += put_attr(at + len, id_type, &id, sizeof(id));
    len += put_attr(at + len, TASKSTATS_TYPE_STATS, stats, stats_len);
    struct nlattr na = {.nla_len = (uint16_t)len, .nla_type = nest_type};
    memcpy(at, &na, sizeof(na));
    return len;
}

/* Append one message: the thread's record, with the group's nest when
 * with_group (the kernel adds one for the last thread of a group that
 * had others).  stats_len: the struct's size as the sender has it. */
static void add_message(struct dgram *d, uint16_t type, const struct taskstats *ts,
                        size_t stats_len, bool with_group)
{
    unsigned char *m = d->bytes + d->len;
    struct genlmsghdr gh = {.cmd = TASKSTATS_CMD_NEW, .version = TASKSTATS_GENL_VERSION};
    size_t len = NLMSG_HDRLEN;
    memcpy(m + len, &gh, sizeof(gh));
    len += GENL_HDRLEN;
    len += put_nest(m + len, TASKSTATS_TYPE_AGGR_PID, TASKSTATS_TYPE_PID, ts->ac_pid, ts,
                    stats_len);
    if (with_group) {
        struct taskstats group;
        memset(&group, 0, sizeof(group));
        group.version = ts->version;
        len += put_nest(m + len, TASKSTATS_TYPE_AGGR_TGID, TASKSTATS_TYPE_TGID,
                        ts->version >= 12 ? ts->ac_tgid : 4242, &group, stats_len);
    }
    struct nlmsghdr nh = {.nlmsg_len = (uint32_t)len, .nlmsg_type = type};
    memcpy(m, &nh, sizeof(nh));
    d->len += NLMSG_ALIGN(len);
    assert_true(d->len <= sizeof(d->bytes));
}

/* The size of a version-16 struct: the header's and 4 more u64 pairs. */
#define V16_LEN (sizeof(struct taskstats) + 64)

static void add_thread(struct dgram *d, const struct thread *th, bool with_group)
{
    struct taskstats ts = stats_of(th);
    add_message(d, FAMILY, &ts, V16_LEN, with_group);
}

/* What the listener handed over. */
struct seen {
    struct ts_exit exits[64];
    size_t count;
};

static void collect(const struct ts_exit *e, void *arg)
{
    struct seen *s = arg;
    if (s->count < 64)
        s->exits[s->count++] = *e;
}

static int feed(struct taskstats_listener *t, const struct dgram *d, uint32_t sender,
                struct seen *s)
{
    return taskstats_feed(t, d->bytes, d->len, sender, collect, s);
}

/* One thread's record in a datagram of its own, from the kernel. */
static int feed_thread(struct taskstats_listener *t, const struct thread *th, bool with_group,
                       struct seen *s)
{
    struct dgram d = {0};
    add_thread(&d, th, with_group);
    return feed(t, &d, 0, s);
}

/* The first n bytes of d from a buffer of just that size: a read past
 * them is one ASan sees. */
static void feed_exactly(struct taskstats_listener *t, const struct dgram *d, size_t n,
                         struct seen *s)
{
    unsigned char *copy = malloc(n ? n : 1);
    memcpy(copy, d->bytes, n);
    taskstats_feed(t, copy, n, 0, collect, s);
    free(copy);
}

/* A message that is only a netlink header (NLMSG_NOOP, NLMSG_OVERRUN). */
static void add_bare(struct dgram *d, uint16_t type)
{
    struct nlmsghdr nh = {.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = type};
    memcpy(d->bytes + d->len, &nh, sizeof(nh));
    d->len += NLMSG_HDRLEN;
}

/* A single-threaded process: one record, handed over as it is. */
static void test_one_process(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5000, .tgid = 5000, .ppid = 4000, .uid = 1234, .last = true,
                        .cpu_usec = 300000, .age_usec = 2500000, .comm = "make"};
    struct seen s = {0};
    assert_int_equal(feed_thread(&t, &th, false, &s), 0);
    assert_int_equal(s.count, 1);
    const struct ts_exit *e = &s.exits[0];
    assert_int_equal(e->tgid, 5000);
    assert_int_equal(e->ppid, 4000);
    assert_int_equal(e->uid, 1234);
    assert_int_equal(e->cpu_usec, 300000);
    assert_false(e->cpu_ticks);
    assert_int_equal(e->elapsed_usec, 2500000);
    assert_int_equal(e->start_realtime_usec, (NOW - 2) * 1000000);
    assert_int_equal(e->threads, 1);
    assert_false(e->late);
    assert_false(e->per_thread);
    assert_string_equal(e->comm, "make");
    assert_int_equal(t.records, 1);
    assert_int_equal(t.exits, 1);
    assert_int_equal(t.rejected, 0);
    assert_int_equal(t.version, 16);
    assert_int_equal(t.group_count, 0);
    taskstats_close(&t);
}

/* Without the scheduler's run time (a kernel without delay accounting)
 * the tick samples are what there is. */
static void test_tick_samples_without_run_time(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1234, .last = true, .cpu_usec = 300000};
    struct taskstats ts = stats_of(&th);
    ts.cpu_run_virtual_total = 0;
    struct dgram d = {0};
    add_message(&d, FAMILY, &ts, V16_LEN, false);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 1);
    assert_true(s.exits[0].cpu_ticks);
    assert_int_equal(s.exits[0].cpu_usec, 304000);
    taskstats_close(&t);
}

/* Two processes of four threads each, their records interleaved: each
 * is handed over once, at its last thread, with all four summed and the
 * leader's name (threads may name themselves). */
static void test_threads_are_summed_into_their_process(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    for (int i = 0; i < 4; i++) {
        struct dgram d = {0};
        for (pid_t group = 7000; group <= 8000; group += 1000) {
            struct thread th = {.pid = group + (i == 0 ? 0 : 3 - i + 1), .tgid = group,
                                .ppid = 1, .uid = (uid_t)group, .last = i == 3,
                                .cpu_usec = 100000 * (uint64_t)(i + 1),
                                .group_age_usec = 5000000 + (uint64_t)i * 1000,
                                .age_usec = i == 0 ? 5000000 : 4000000,
                                .comm = i == 0 ? "solver" : "worker"};
            add_thread(&d, &th, i == 3);
        }
        feed(&t, &d, 0, &s);
        assert_int_equal(s.count, i == 3 ? 2 : 0);
        assert_int_equal(t.group_count, i == 3 ? 0 : 2);
    }
    for (size_t k = 0; k < 2; k++) {
        const struct ts_exit *e = &s.exits[k];
        assert_int_equal(e->tgid, k == 0 ? 7000 : 8000);
        assert_int_equal(e->uid, k == 0 ? 7000 : 8000);
        assert_int_equal(e->cpu_usec, 1000000);
        assert_int_equal(e->threads, 4);
        assert_int_equal(e->elapsed_usec, 5003000);
        assert_string_equal(e->comm, "solver");
        assert_false(e->late);
    }
    assert_int_equal(t.records, 8);
    assert_int_equal(t.exits, 2);
    taskstats_close(&t);
}

/* A thread that ends after its group's last record (threads dying at
 * once on several CPUs): its CPU comes on its own, marked late.  A new
 * process with the same pid much later is not taken for one. */
static void test_a_late_thread_comes_on_its_own(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    struct dgram d = {0};
    struct thread last = {.pid = 7002, .tgid = 7000, .uid = 1000, .last = true,
                          .cpu_usec = 200000, .group_age_usec = 9000000, .age_usec = 8000000};
    struct thread late = last;
    late.pid = 7001;
    late.last = false;
    late.cpu_usec = 50000;
    add_thread(&d, &last, true);
    add_thread(&d, &late, false);
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 2);
    assert_false(s.exits[0].late);
    assert_int_equal(s.exits[0].cpu_usec, 200000);
    assert_true(s.exits[1].late);
    assert_int_equal(s.exits[1].tgid, 7000);
    assert_int_equal(s.exits[1].cpu_usec, 50000);
    assert_int_equal(s.exits[1].threads, 1);
    assert_int_equal(t.group_count, 0);

    /* Pid 7000 again, for a process begun 9 s after the first ended. */
    struct dgram e = {0};
    struct thread again = late;
    again.group_age_usec = 1000;
    again.age_usec = 1000;
    struct taskstats ts = stats_of(&again);
    ts.ac_btime64 = NOW + 9;
    add_message(&e, FAMILY, &ts, V16_LEN, false);
    feed(&t, &e, 0, &s);
    assert_int_equal(s.count, 2);
    assert_int_equal(t.group_count, 1);
    taskstats_close(&t);
}

/* A group whose last record was lost stays in the table; a new process
 * with its pid, begun seconds later, starts a sum of its own. */
static void test_pid_reuse_starts_a_new_sum(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    struct thread old = {.pid = 7001, .tgid = 7000, .uid = 1000, .cpu_usec = 900000,
                         .group_age_usec = 60000000, .age_usec = 60000000};
    feed_thread(&t, &old, false, &s);
    assert_int_equal(t.group_count, 1);

    struct thread fresh = {.pid = 7000, .tgid = 7000, .uid = 2000, .last = true,
                           .cpu_usec = 1000, .age_usec = 3000};
    feed_thread(&t, &fresh, false, &s);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.exits[0].cpu_usec, 1000);
    assert_int_equal(s.exits[0].threads, 1);
    assert_int_equal(s.exits[0].uid, 2000);
    assert_int_equal(t.stale, 1);
    assert_int_equal(t.group_count, 0);
    taskstats_close(&t);
}

/* Any process may send to the listener's port: only the kernel's (port
 * 0) records count. */
static void test_a_user_process_is_not_the_kernel(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct dgram d = {0};
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 0, .last = true, .cpu_usec = 1};
    add_thread(&d, &th, false);
    struct seen s = {0};
    feed(&t, &d, 31337, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(t.rejected, 1);
    assert_int_equal(t.records, 0);
    taskstats_close(&t);
}

/* Another family's message, a command that is not an exit record, a
 * netlink error, and a struct of version 1 (no CPU times): rejected;
 * a no-op message is passed over. */
static void test_foreign_messages_are_rejected(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    struct taskstats ts = stats_of(&th);
    struct dgram d = {0};
    add_message(&d, FAMILY + 1, &ts, V16_LEN, false);
    add_message(&d, NLMSG_ERROR, &ts, V16_LEN, false);
    struct taskstats v1 = ts;
    v1.version = 1;
    add_message(&d, FAMILY, &v1, V16_LEN, false);
    size_t at = d.len;
    add_message(&d, FAMILY, &ts, V16_LEN, false);
    struct genlmsghdr gh = {.cmd = TASKSTATS_CMD_GET};
    memcpy(d.bytes + at + NLMSG_HDRLEN, &gh, sizeof(gh));
    add_bare(&d, NLMSG_NOOP);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(t.rejected, 4);

    /* Without a family (not opened), nothing is a record. */
    struct taskstats_listener closed;
    taskstats_init(&closed, 0);
    struct dgram z = {0};
    add_message(&z, 0, &ts, V16_LEN, false);
    feed(&closed, &z, 0, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(closed.rejected, 1);
    taskstats_close(&t);
    taskstats_close(&closed);
}

/* Overwrite the 16 bits at offset off of d (a length or a type). */
static void poke16(struct dgram *d, size_t off, uint16_t v)
{
    memcpy(d->bytes + off, &v, sizeof(v));
}

static void poke32(struct dgram *d, size_t off, uint32_t v)
{
    memcpy(d->bytes + off, &v, sizeof(v));
}

/* Offsets in a one-record datagram made by add_thread. */
#define OFF_NEST (NLMSG_HDRLEN + GENL_HDRLEN)
#define OFF_PID_ATTR (OFF_NEST + NLA_HDRLEN)
#define OFF_STATS_ATTR (OFF_PID_ATTR + NLA_HDRLEN + 4)

static size_t rejected_by(void (*spoil)(struct dgram *d))
{
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct dgram d = {0};
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    add_thread(&d, &th, false);
    spoil(&d);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    size_t rejected = t.rejected;
    if (s.count != 0)
        rejected = 0; /* it passed */
    taskstats_close(&t);
    return rejected;
}

static void nest_longer_than_message(struct dgram *d) { poke16(d, OFF_NEST, (uint16_t)d->len); }
static void nest_shorter_than_header(struct dgram *d) { poke16(d, OFF_NEST, 2); }
static void nest_cuts_the_stats(struct dgram *d) { poke16(d, OFF_NEST, OFF_STATS_ATTR + 40 - OFF_NEST); }
static void stats_longer_than_nest(struct dgram *d) { poke16(d, OFF_STATS_ATTR, 2000); }
static void pid_of_two_bytes(struct dgram *d) { poke16(d, OFF_PID_ATTR, NLA_HDRLEN + 2); }
static void pid_not_the_records(struct dgram *d) { poke32(d, OFF_PID_ATTR + NLA_HDRLEN, 5001); }
static void no_pid_attribute(struct dgram *d) { poke16(d, OFF_PID_ATTR + 2, TASKSTATS_TYPE_NULL); }
static void no_stats_attribute(struct dgram *d) { poke16(d, OFF_STATS_ATTR + 2, 99); }
static void no_pid_nest(struct dgram *d) { poke16(d, OFF_NEST + 2, TASKSTATS_TYPE_NULL); }
static void message_longer_than_datagram(struct dgram *d) { poke32(d, 0, (uint32_t)d->len + 8); }

/* Each length and type that lies, one at a time: the record is
 * rejected, nothing is read past what was received (ASan), and the same
 * datagram unspoilt passes. */
static void test_lying_lengths_are_rejected(void **state)
{
    (void)state;
    static void (*const spoilers[])(struct dgram *) = {
        nest_longer_than_message, nest_shorter_than_header, nest_cuts_the_stats,
        stats_longer_than_nest,   pid_of_two_bytes,         pid_not_the_records,
        no_pid_attribute,         no_stats_attribute,       no_pid_nest,
        message_longer_than_datagram,
    };
    for (size_t i = 0; i < sizeof(spoilers) / sizeof(spoilers[0]); i++) {
        if (rejected_by(spoilers[i]) != 1)
            fail_msg("spoiler %zu passed", i);
    }
}

static void no_spoil(struct dgram *d) { (void)d; }

static void test_the_unspoilt_datagram_passes(void **state)
{
    (void)state;
    assert_int_equal(rejected_by(no_spoil), 0);
}

/* Two records of the same kind in one message, or a group nest that
 * names another process: rejected. */
static void test_doubled_or_contradicting_nests_are_rejected(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5001, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    struct taskstats ts = stats_of(&th);
    struct dgram d = {0};
    add_message(&d, FAMILY, &ts, V16_LEN, true);
    /* The group nest (the second) made a second AGGR_PID. */
    size_t second = OFF_NEST + NLA_HDRLEN + (NLA_HDRLEN + 4) + NLA_HDRLEN + NLA_ALIGN(V16_LEN);
    poke16(&d, second + 2, TASKSTATS_TYPE_AGGR_PID);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(t.rejected, 1);

    struct dgram e = {0};
    add_message(&e, FAMILY, &ts, V16_LEN, true);
    poke32(&e, second + NLA_HDRLEN + NLA_HDRLEN, 6000); /* the group's tgid */
    feed(&t, &e, 0, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(t.rejected, 2);

    /* A group nest on a record that is not its group's last. */
    struct thread not_last = th;
    not_last.last = false;
    struct dgram f = {0};
    add_thread(&f, &not_last, true);
    feed(&t, &f, 0, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(t.rejected, 3);
    taskstats_close(&t);
}

/* Every prefix of a valid datagram: a record only once it is whole. */
static void test_every_truncation(void **state)
{
    (void)state;
    struct dgram d = {0};
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    add_thread(&d, &th, true);
    for (size_t n = 0; n <= d.len; n++) {
        struct taskstats_listener t;
        taskstats_init(&t, FAMILY);
        struct seen s = {0};
        feed_exactly(&t, &d, n, &s);
        assert_int_equal(s.count, n == d.len ? 1 : 0);
        assert_int_equal(t.rejected, n == 0 || n == d.len ? 0 : 1);
        taskstats_close(&t);
    }
}

/* The struct cut to every length, with every enclosing length made to
 * agree: accepted exactly when it holds the fields its version has that
 * are used (version 16 and 12: up to ac_tgetime; 10: ac_btime64; 8:
 * ac_stime). */
static void test_every_struct_length(void **state)
{
    (void)state;
    static const struct {
        uint16_t version;
        size_t need;
    } cases[] = {
        {16, offsetof(struct taskstats, ac_tgetime) + 8},
        {12, offsetof(struct taskstats, ac_tgetime) + 8},
        {10, offsetof(struct taskstats, ac_btime64) + 8},
        {8, offsetof(struct taskstats, ac_stime) + 8},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        for (size_t len = 0; len <= V16_LEN; len++) {
            struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true,
                                .cpu_usec = 5};
            struct taskstats ts = stats_of(&th);
            ts.version = cases[c].version;
            struct dgram d = {0};
            add_message(&d, FAMILY, &ts, len, false);
            struct taskstats_listener t;
            taskstats_init(&t, FAMILY);
            struct seen s = {0};
            feed_exactly(&t, &d, d.len, &s);
            if (s.count != (len >= cases[c].need ? 1u : 0u))
                fail_msg("version %u, %zu bytes: %zu exits", cases[c].version, len, s.count);
            taskstats_close(&t);
        }
    }
}

/* Before version 12 a record does not name its process: each is handed
 * over as it comes, marked per_thread, its tid as the process's pid;
 * the last thread of a group with others carries the group's nest,
 * which names the process.  The begin time is the 32-bit one before
 * version 10. */
static void test_an_old_struct_version(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    size_t v11_len = offsetof(struct taskstats, ac_tgid);
    struct thread worker = {.pid = 5001, .tgid = 5000, .uid = 1000, .cpu_usec = 100000,
                            .age_usec = 3000000};
    struct thread last = worker;
    last.pid = 5000;
    last.last = true;
    struct taskstats a = stats_of(&worker), b = stats_of(&last);
    a.version = b.version = 11;
    a.ac_flag = b.ac_flag = 0; /* no AGROUP before 12 */
    struct dgram d = {0};
    add_message(&d, FAMILY, &a, v11_len, false);
    add_message(&d, FAMILY, &b, v11_len, true); /* the group nest names 4242 */
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 2);
    assert_true(s.exits[0].per_thread);
    assert_int_equal(s.exits[0].tgid, 5001);
    assert_int_equal(s.exits[0].cpu_usec, 100000);
    assert_int_equal(s.exits[0].elapsed_usec, 3000000);
    assert_int_equal(s.exits[1].tgid, 4242);
    assert_true(s.exits[1].per_thread);
    assert_int_equal(t.version, 11);
    assert_int_equal(t.group_count, 0);

    struct taskstats v9 = stats_of(&last);
    v9.version = 9;
    v9.ac_btime64 = 0;
    v9.ac_btime = (uint32_t)NOW;
    struct dgram e = {0};
    add_message(&e, FAMILY, &v9, offsetof(struct taskstats, ac_btime64), false);
    feed(&t, &e, 0, &s);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.exits[2].start_realtime_usec, NOW * 1000000);
    assert_int_equal(t.rejected, 0);
    taskstats_close(&t);
}

/* The table holds TS_GROUPS_MAX groups in flight (TS_GROUPS_PER_UID of one
 * uid); a thread of a group past it is handed over on its own at once
 * (counted), so its CPU is never lost, its group's end comes with its last
 * thread's CPU alone, and every group in the table still comes out whole. */
static void test_the_table_is_bounded(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    for (pid_t g = 0; g <= TS_GROUPS_MAX; g++) {
        struct thread th = {.pid = 100000 + g * 2 + 1, .tgid = 100000 + g * 2,
                            .uid = 1000 + (uid_t)(g / TS_GROUPS_PER_UID), .cpu_usec = 10,
                            .age_usec = 1000000};
        feed_thread(&t, &th, false, &s);
    }
    assert_int_equal(t.group_count, TS_GROUPS_MAX);
    assert_int_equal(t.dropped, 1);
    assert_int_equal(s.count, 1);
    assert_true(s.exits[0].ungrouped);
    assert_int_equal(s.exits[0].tgid, 100000 + TS_GROUPS_MAX * 2);
    assert_int_equal(s.exits[0].cpu_usec, 10);
    size_t whole = 0;
    for (pid_t g = TS_GROUPS_MAX; g >= 0; g--) {
        struct thread th = {.pid = 100000 + g * 2, .tgid = 100000 + g * 2, .uid = 1000,
                            .last = true, .cpu_usec = 1, .age_usec = 1000000};
        s.count = 0;
        feed_thread(&t, &th, true, &s);
        assert_int_equal(s.count, 1);
        assert_int_equal(s.exits[0].cpu_usec, g == TS_GROUPS_MAX ? 1 : 11);
        whole += s.exits[0].threads == 2;
    }
    assert_int_equal(whole, TS_GROUPS_MAX);
    assert_int_equal(t.group_count, 0);
    assert_int_equal(t.exits, TS_GROUPS_MAX + 2);
    taskstats_close(&t);
}

/* One uid's groups take at most TS_GROUPS_PER_UID places: another uid's
 * threads are still summed, and the first uid's past its share are
 * handed over alone, never lost. */
static void test_one_uid_cannot_fill_the_table(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    for (pid_t g = 0; g < 2 * TS_GROUPS_PER_UID; g++) {
        struct thread th = {.pid = 100000 + g * 2 + 1, .tgid = 100000 + g * 2, .uid = 1000,
                            .cpu_usec = 10, .age_usec = 1000000};
        s.count = 0;
        feed_thread(&t, &th, false, &s);
        if (g < TS_GROUPS_PER_UID) {
            assert_int_equal(s.count, 0);   /* in the table */
        } else {
            assert_int_equal(s.count, 1);   /* past its share: alone, at once */
            assert_true(s.exits[0].ungrouped);
            assert_int_equal(s.exits[0].cpu_usec, 10);
        }
    }
    assert_int_equal(t.group_count, TS_GROUPS_PER_UID);
    assert_int_equal(t.dropped, TS_GROUPS_PER_UID);
    /* Another user's process with two threads: summed whole. */
    s.count = 0;
    struct thread worker = {.pid = 50001, .tgid = 50000, .uid = 2000, .cpu_usec = 300000,
                            .age_usec = 1000000};
    feed_thread(&t, &worker, false, &s);
    struct thread leader = {.pid = 50000, .tgid = 50000, .uid = 2000, .last = true,
                            .cpu_usec = 200000, .age_usec = 1000000};
    feed_thread(&t, &leader, true, &s);
    assert_int_equal(s.count, 1);
    assert_false(s.exits[0].ungrouped);
    assert_int_equal(s.exits[0].cpu_usec, 500000);
    taskstats_close(&t);
}

/* Groups that end in an order unlike the one they began in, their
 * slots crowded: each still finds its sum (a removal must not cut the
 * probe chain of the groups placed after it).  Four uids: one holds at
 * most TS_GROUPS_PER_UID. */
static void test_sums_survive_any_order_of_ends(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    enum { GROUPS = 2000 };
    for (int g = 0; g < GROUPS; g++) {
        struct thread th = {.pid = 300001 + g * 64, .tgid = 300000 + g * 64,
                            .uid = 1000 + (uid_t)(g % 4), .cpu_usec = 10,
                            .age_usec = 1000000};
        feed_thread(&t, &th, false, &s);
    }
    assert_int_equal(t.group_count, GROUPS);
    for (int k = 0; k < GROUPS; k++) {
        int g = (k * 7919) % GROUPS; /* every group once, scattered */
        struct thread th = {.pid = 300000 + g * 64, .tgid = 300000 + g * 64,
                            .uid = 1000 + (uid_t)(g % 4), .last = true, .cpu_usec = 1,
                            .age_usec = 1000000};
        s.count = 0;
        feed_thread(&t, &th, true, &s);
        assert_int_equal(s.count, 1);
        if (s.exits[0].threads != 2)
            fail_msg("group %d ended without its sum", g);
    }
    assert_int_equal(t.group_count, 0);
    taskstats_close(&t);

    /* Churn in a small table (64 slots, about 30 groups in flight, pids
     * from a pseudo-random sequence): crowds that wrap around its end. */
    taskstats_init(&t, FAMILY);
    pid_t live_groups[30] = {0};
    uint32_t x = 12345;
    for (int k = 0; k < 20000; k++) {
        int slot = k % 30;
        if (live_groups[slot]) {
            struct thread th = {.pid = live_groups[slot], .tgid = live_groups[slot], .uid = 1000,
                                .last = true, .cpu_usec = 1, .age_usec = 1000000};
            s.count = 0;
            feed_thread(&t, &th, true, &s);
            assert_int_equal(s.count, 1);
            if (s.exits[0].threads != 2)
                fail_msg("step %d: group %d ended without its sum", k, (int)live_groups[slot]);
        }
        x = x * 1103515245u + 12345u;
        live_groups[slot] = (pid_t)(1000 + (x >> 9) % 4000000) & ~1;
        struct thread th = {.pid = live_groups[slot] + 1, .tgid = live_groups[slot], .uid = 1000,
                            .cpu_usec = 10, .age_usec = 1000000};
        feed_thread(&t, &th, false, &s);
    }
    assert_int_equal(t.group_slots, 64);
    taskstats_close(&t);
}

/* The kernel's overrun message: records were lost, so the sums in
 * flight are forgotten (a group whose end was lost must not be summed
 * into a later process); the caller is told. */
static void test_an_overrun_forgets_the_sums(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct seen s = {0};
    struct dgram d = {0};
    struct thread worker = {.pid = 7001, .tgid = 7000, .uid = 1000, .cpu_usec = 500000,
                            .age_usec = 1000000};
    add_thread(&d, &worker, false);
    add_bare(&d, NLMSG_OVERRUN);
    assert_int_equal(feed(&t, &d, 0, &s), 1);
    assert_int_equal(t.overruns, 1);
    assert_int_equal(t.stale, 1);
    assert_int_equal(t.group_count, 0);
    struct thread last = {.pid = 7000, .tgid = 7000, .uid = 1000, .last = true, .cpu_usec = 1000,
                          .age_usec = 1000000};
    assert_int_equal(feed_thread(&t, &last, true, &s), 0);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.exits[0].cpu_usec, 1000);
    assert_int_equal(s.exits[0].threads, 1);
    taskstats_close(&t);
}

/* A name of 15 bytes and more is cut to the kernel's 15; bytes that are
 * not text are passed on as they are (the caller escapes them). */
static void test_names_are_bounded(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    struct taskstats ts = stats_of(&th);
    memset(ts.ac_comm, 'x', sizeof(ts.ac_comm)); /* no NUL at all */
    ts.ac_comm[0] = '\033';
    struct dgram d = {0};
    add_message(&d, FAMILY, &ts, V16_LEN, false);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 1);
    assert_int_equal(strlen(s.exits[0].comm), 15);
    assert_int_equal(s.exits[0].comm[0], '\033');
    taskstats_close(&t);
}

/* Times no kernel sends (a begin time past year 292,000, a group older
 * than the epoch) give an unknown start, 0, and no overflow. */
static void test_impossible_times_start_at_zero(void **state)
{
    (void)state;
    struct taskstats_listener t;
    taskstats_init(&t, FAMILY);
    struct thread th = {.pid = 5000, .tgid = 5000, .uid = 1000, .last = true, .cpu_usec = 5};
    struct taskstats far = stats_of(&th), old = stats_of(&th);
    far.ac_btime64 = (1ULL << 62) + 1;
    far.ac_tgetime = far.ac_etime;
    old.ac_etime = 0;
    old.ac_tgetime = (1ULL << 63) + 5;
    struct dgram d = {0};
    add_message(&d, FAMILY, &far, V16_LEN, false);
    add_message(&d, FAMILY, &old, V16_LEN, false);
    struct seen s = {0};
    feed(&t, &d, 0, &s);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.exits[0].start_realtime_usec, 0);
    assert_int_equal(s.exits[1].start_realtime_usec, 0);
    taskstats_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_process),
        cmocka_unit_test(test_tick_samples_without_run_time),
        cmocka_unit_test(test_threads_are_summed_into_their_process),
        cmocka_unit_test(test_a_late_thread_comes_on_its_own),
        cmocka_unit_test(test_pid_reuse_starts_a_new_sum),
        cmocka_unit_test(test_a_user_process_is_not_the_kernel),
        cmocka_unit_test(test_foreign_messages_are_rejected),
        cmocka_unit_test(test_lying_lengths_are_rejected),
        cmocka_unit_test(test_the_unspoilt_datagram_passes),
        cmocka_unit_test(test_doubled_or_contradicting_nests_are_rejected),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_every_struct_length),
        cmocka_unit_test(test_an_old_struct_version),
        cmocka_unit_test(test_the_table_is_bounded),
        cmocka_unit_test(test_one_uid_cannot_fill_the_table),
        cmocka_unit_test(test_sums_survive_any_order_of_ends),
        cmocka_unit_test(test_an_overrun_forgets_the_sums),
        cmocka_unit_test(test_names_are_bounded),
        cmocka_unit_test(test_impossible_times_start_at_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
