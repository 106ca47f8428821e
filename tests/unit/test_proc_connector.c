/* The proc connector's message checks: only the kernel's well-formed
 * proc events become events; anything else on the socket (another
 * process's datagram, a truncated or foreign message) is rejected. */
#include "config.h"

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "observe/pidmarks.h"
#include "observe/proc_connector.h"
#include "testutil.h"

struct dgram {
    unsigned char bytes[1024] __attribute__((aligned(8)));
    size_t len;
};

/* Append one netlink message holding a cn_msg around ev (ev_len bytes). */
static void add_msg(struct dgram *d, uint16_t type, uint32_t idx, uint32_t val,
                    const struct proc_event *ev, size_t ev_len)
{
    struct nlmsghdr nh = {0};
    struct cn_msg cn = {0};
    size_t len = NLMSG_HDRLEN + sizeof(cn) + ev_len;
    nh.nlmsg_len = (uint32_t)len;
    nh.nlmsg_type = type;
    cn.id.idx = idx;
    cn.id.val = val;
    cn.len = (uint16_t)ev_len;
    assert_true(d->len + NLMSG_ALIGN(len) <= sizeof(d->bytes));
    memcpy(d->bytes + d->len, &nh, sizeof(nh));
    memcpy(d->bytes + d->len + NLMSG_HDRLEN, &cn, sizeof(cn));
    memcpy(d->bytes + d->len + NLMSG_HDRLEN + sizeof(cn), ev, ev_len);
    d->len += NLMSG_ALIGN(len);
}

static void add_event(struct dgram *d, const struct proc_event *ev)
{
    add_msg(d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, ev, sizeof(*ev));
}

static struct proc_event fork_event(pid_t child_pid, pid_t child_tgid)
{
    struct proc_event ev = {0};
    ev.what = PROC_EVENT_FORK;
    ev.event_data.fork.parent_pid = ev.event_data.fork.parent_tgid = 1;
    ev.event_data.fork.child_pid = child_pid;
    ev.event_data.fork.child_tgid = child_tgid;
    return ev;
}

static struct proc_event exec_event(pid_t pid)
{
    struct proc_event ev = {0};
    ev.what = PROC_EVENT_EXEC;
    ev.event_data.exec.process_pid = ev.event_data.exec.process_tgid = pid;
    return ev;
}

static struct proc_event exit_event(pid_t pid, pid_t tgid)
{
    struct proc_event ev = {0};
    ev.what = PROC_EVENT_EXIT;
    ev.event_data.exit.process_pid = pid;
    ev.event_data.exit.process_tgid = tgid;
    return ev;
}

static struct pc_parsed parse(const struct dgram *d, uint32_t sender)
{
    struct pc_parsed out;
    proc_connector_parse(d->bytes, d->len, sender, &out);
    return out;
}

static void test_each_kind(void **state)
{
    (void)state;
    struct dgram d = {0};
    struct proc_event uid = {0};
    uid.what = PROC_EVENT_UID;
    uid.event_data.id.process_pid = 4321; /* a thread of 4300 */
    uid.event_data.id.process_tgid = 4300;
    uid.event_data.id.r.ruid = uid.event_data.id.e.euid = 1000;
    struct proc_event fork = fork_event(4200, 4200), exec = exec_event(4200),
                      exit = exit_event(4100, 4100);
    add_event(&d, &fork);
    add_event(&d, &exec);
    add_event(&d, &uid);
    add_event(&d, &exit);
    struct pc_parsed p = parse(&d, 0);
    assert_int_equal(p.rejected, 0);
    assert_false(p.overrun);
    assert_int_equal(p.count, 4);
    assert_int_equal(p.events[0].kind, PC_FORK);
    assert_int_equal(p.events[0].pid, 4200);
    assert_int_equal(p.events[1].kind, PC_EXEC);
    assert_int_equal(p.events[1].pid, 4200);
    assert_int_equal(p.events[2].kind, PC_UID);
    assert_int_equal(p.events[2].pid, 4300);
    assert_int_equal(p.events[3].kind, PC_EXIT);
    assert_int_equal(p.events[3].pid, 4100);
}

/* A new or ending thread is not a new or ending process; other kinds
 * (sid, comm, the subscription's answer) are not needed.  None is an
 * error. */
static void test_threads_and_other_kinds_are_left_out(void **state)
{
    (void)state;
    struct dgram d = {0};
    struct proc_event thread_fork = fork_event(4201, 4200), thread_exit = exit_event(4201, 4200);
    struct proc_event comm = {0}, ack = {0};
    comm.what = PROC_EVENT_COMM;
    comm.event_data.comm.process_pid = comm.event_data.comm.process_tgid = 4200;
    memcpy(comm.event_data.comm.comm, "xmrig", 6);
    ack.what = PROC_EVENT_NONE;
    add_event(&d, &thread_fork);
    add_event(&d, &thread_exit);
    add_event(&d, &comm);
    add_event(&d, &ack);
    struct pc_parsed p = parse(&d, 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 0);
}

/* Any process may send to the daemon's netlink port: only the kernel's
 * (port 0) messages count. */
static void test_a_user_process_is_not_the_kernel(void **state)
{
    (void)state;
    struct dgram d = {0};
    struct proc_event exit = exit_event(4100, 4100);
    add_event(&d, &exit);
    struct pc_parsed p = parse(&d, 31337);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 1);
}

static void test_foreign_or_malformed_messages_are_rejected(void **state)
{
    (void)state;
    struct proc_event fork = fork_event(4200, 4200);
    struct dgram d = {0};
    add_msg(&d, NLMSG_DONE, CN_IDX_PROC + 1, CN_VAL_PROC, &fork, sizeof(fork)); /* idx */
    add_msg(&d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC + 1, &fork, sizeof(fork)); /* val */
    add_msg(&d, NLMSG_ERROR, CN_IDX_PROC, CN_VAL_PROC, &fork, sizeof(fork));     /* type */
    /* a fork event cut before its child's pids */
    add_msg(&d, NLMSG_DONE, CN_IDX_PROC, CN_VAL_PROC, &fork,
            offsetof(struct proc_event, event_data) + 8);
    struct proc_event nobody = fork_event(0, 0);
    add_event(&d, &nobody);                                                      /* pid 0 */
    struct pc_parsed p = parse(&d, 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 5);
}

/* cn_msg.len claiming more than the message holds, and a netlink length
 * past the datagram: nothing is read beyond what was received. */
static void test_lengths_are_checked(void **state)
{
    (void)state;
    struct proc_event fork = fork_event(4200, 4200);
    struct dgram d = {0};
    add_event(&d, &fork);
    struct cn_msg cn;
    memcpy(&cn, d.bytes + NLMSG_HDRLEN, sizeof(cn));
    cn.len = 900;
    memcpy(d.bytes + NLMSG_HDRLEN, &cn, sizeof(cn));
    struct pc_parsed p = parse(&d, 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 1);

    struct dgram e = {0};
    add_event(&e, &fork);
    struct nlmsghdr nh;
    memcpy(&nh, e.bytes, sizeof(nh));
    nh.nlmsg_len = (uint32_t)e.len + 4;
    memcpy(e.bytes, &nh, sizeof(nh));
    p = parse(&e, 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 1);

    nh.nlmsg_len = 3; /* shorter than its own header */
    memcpy(e.bytes, &nh, sizeof(nh));
    p = parse(&e, 0);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.rejected, 1);
}

/* Every prefix of a valid datagram: an event only once it is whole, and
 * nothing read past the prefix (ASan checks the reads: the prefix is
 * copied to a buffer of exactly its size). */
static void test_every_truncation(void **state)
{
    (void)state;
    struct proc_event exec = exec_event(777);
    struct dgram d = {0};
    add_event(&d, &exec);
    size_t whole = NLMSG_HDRLEN + sizeof(struct cn_msg) + offsetof(struct proc_event, event_data) +
                   sizeof(exec.event_data.exec);
    for (size_t n = 0; n <= d.len; n++) {
        unsigned char *copy = malloc(n ? n : 1);
        memcpy(copy, d.bytes, n);
        struct pc_parsed p;
        proc_connector_parse(copy, n, 0, &p);
        free(copy);
        /* The netlink length says the full message: any shorter prefix is cut. */
        assert_int_equal(p.count, n == d.len ? 1 : 0);
        assert_int_equal(p.rejected, n == 0 || n == d.len ? 0 : 1);
    }
    assert_true(whole <= d.len);
}

static void test_overrun_is_reported(void **state)
{
    (void)state;
    struct dgram d = {0};
    struct nlmsghdr nh = {.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_OVERRUN};
    memcpy(d.bytes, &nh, sizeof(nh));
    d.len = NLMSG_HDRLEN;
    struct pc_parsed p = parse(&d, 0);
    assert_true(p.overrun);
    assert_int_equal(p.count, 0);
}

/* The sampler's per-pid flags: one entry a pid, in arrival order,
 * through the growth of the index. */
static void test_pid_marks(void **state)
{
    (void)state;
    struct pid_marks m = {0};
    for (pid_t pid = 1; pid <= 5000; pid++)
        *pid_marks_get(&m, pid * 7) |= 1;
    for (pid_t pid = 1; pid <= 5000; pid++)
        *pid_marks_get(&m, pid * 7) |= 2;
    assert_int_equal(m.count, 5000);
    for (size_t i = 0; i < m.count; i++) {
        assert_int_equal(m.marks[i].pid, (pid_t)(i + 1) * 7);
        assert_int_equal(m.marks[i].flags, 3);
    }
    pid_marks_clear(&m);
    assert_int_equal(m.count, 0);
    assert_int_equal(*pid_marks_get(&m, 14), 0);
    assert_int_equal(m.count, 1);
    pid_marks_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind),
        cmocka_unit_test(test_threads_and_other_kinds_are_left_out),
        cmocka_unit_test(test_a_user_process_is_not_the_kernel),
        cmocka_unit_test(test_foreign_or_malformed_messages_are_rejected),
        cmocka_unit_test(test_lengths_are_checked),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_overrun_is_reported),
        cmocka_unit_test(test_pid_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
