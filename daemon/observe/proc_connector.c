#include "config.h"

#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/netlink.h"
#include "observe/proc_connector.h"

/* Enough for a burst between two drains of the main loop (~1 KiB of
 * buffer per event): past it the kernel drops events, says ENOBUFS, and
 * the sampler rescans /proc. */
#define RCVBUF_BYTES (8 << 20)
#define BATCH 32
#define DGRAM_MAX 1024

static const size_t event_head = offsetof(struct proc_event, event_data);

static void add(struct pc_parsed *out, enum pc_kind kind, pid_t pid)
{
    if (pid <= 0) {
        out->rejected++;
        return;
    }
    if (out->count < sizeof(out->events) / sizeof(out->events[0]))
        out->events[out->count++] = (struct pc_event){kind, pid};
    else
        out->overrun = true; /* more than one datagram should hold: rescan */
}

/* One struct proc_event of len bytes; the union member it names must fit. */
static void parse_event(const unsigned char *data, size_t len, struct pc_parsed *out)
{
    struct proc_event ev;
    memset(&ev, 0, sizeof(ev));
    if (len < event_head) {
        out->rejected++;
        return;
    }
    memcpy(&ev, data, len < sizeof(ev) ? len : sizeof(ev));
    size_t need;
    switch (ev.what) {
    case PROC_EVENT_FORK:
        need = sizeof(ev.event_data.fork);
        break;
    case PROC_EVENT_EXEC:
        need = sizeof(ev.event_data.exec);
        break;
    case PROC_EVENT_UID:
        need = sizeof(ev.event_data.id);
        break;
    case PROC_EVENT_EXIT:
        /* Kernels before 4.x had no parent fields: the pids come first. */
        need = offsetof(struct exit_proc_event, exit_code);
        break;
    default:
        return; /* sid, ptrace, comm, coredump, the acks: not needed */
    }
    if (len - event_head < need) {
        out->rejected++;
        return;
    }
    const typeof(ev.event_data) *d = &ev.event_data;
    switch (ev.what) {
    case PROC_EVENT_FORK:
        /* A new thread is not a new process. */
        if (d->fork.child_pid == d->fork.child_tgid)
            add(out, PC_FORK, d->fork.child_tgid);
        break;
    case PROC_EVENT_EXEC:
        add(out, PC_EXEC, d->exec.process_tgid);
        break;
    case PROC_EVENT_UID:
        add(out, PC_UID, d->id.process_tgid);
        break;
    case PROC_EVENT_EXIT:
        if (d->exit.process_pid == d->exit.process_tgid)
            add(out, PC_EXIT, d->exit.process_tgid);
        break;
    default:
        break;
    }
}

/* One netlink message's payload: a cn_msg from the proc connector. */
static void parse_cn(const unsigned char *payload, size_t len, struct pc_parsed *out)
{
    struct cn_msg cn;
    if (len < sizeof(cn)) {
        out->rejected++;
        return;
    }
    memcpy(&cn, payload, sizeof(cn));
    if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC || cn.len > len - sizeof(cn)) {
        out->rejected++;
        return;
    }
    parse_event(payload + sizeof(cn), cn.len, out);
}

void proc_connector_parse(const void *buf, size_t len, uint32_t sender, struct pc_parsed *out)
{
    memset(out, 0, sizeof(*out));
    if (sender != 0) { /* only the kernel speaks for the connector */
        out->rejected++;
        return;
    }
    struct netlink_walk w = {buf, len};
    struct nlmsghdr nh;
    const unsigned char *payload;
    int more;
    while ((more = netlink_next(&w, &nh, &payload)) > 0) {
        if (nh.nlmsg_type == NLMSG_OVERRUN)
            out->overrun = true;
        else if (nh.nlmsg_type == NLMSG_DONE)
            parse_cn(payload, nh.nlmsg_len - NLMSG_HDRLEN, out);
        else if (nh.nlmsg_type != NLMSG_NOOP)
            out->rejected++;
    }
    if (more < 0)
        out->rejected++;
}

/* ---- the socket ---- */

/* The error of the kernel's answer to our subscription in this datagram,
 * or -1 when it is something else. */
static int ack_error(const unsigned char *buf, size_t len, uint32_t sender, uint32_t ack)
{
    struct nlmsghdr nh;
    struct cn_msg cn;
    struct proc_event ev;
    if (sender != 0 || len < NLMSG_HDRLEN + sizeof(cn) + event_head + sizeof(ev.event_data.ack))
        return -1;
    memcpy(&nh, buf, sizeof(nh));
    memcpy(&cn, buf + NLMSG_HDRLEN, sizeof(cn));
    memset(&ev, 0, sizeof(ev));
    size_t body = len - NLMSG_HDRLEN - sizeof(cn);
    memcpy(&ev, buf + NLMSG_HDRLEN + sizeof(cn), body < sizeof(ev) ? body : sizeof(ev));
    if (nh.nlmsg_type != NLMSG_DONE || cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC ||
        cn.ack != ack || ev.what != PROC_EVENT_NONE)
        return -1;
    return (int)ev.event_data.ack.err;
}

/* Linux 6.6 lets a listener name the events it wants: the op followed by
 * a mask (the kernel's struct proc_input; older headers lack it).  Older
 * kernels take only the bare op and ignore a longer message. */
struct listen_filter {
    uint32_t op;
    uint32_t events;
};

/* Forks, execs, uid changes and exits: not renames (PROC_EVENT_COMM),
 * which any user can make by the hundred thousand a second, each one a
 * message the daemon would wake for and read; nor sid, gid, ptrace or
 * coredump events.  (Only EXIT, not NONZERO_EXIT: every exit.) */
#define WANTED_EVENTS                                                                              \
    ((uint32_t)PROC_EVENT_FORK | (uint32_t)PROC_EVENT_EXEC | (uint32_t)PROC_EVENT_UID |            \
     (uint32_t)PROC_EVENT_EXIT)

static int send_op(int fd, enum proc_cn_mcast_op op, bool filtered, uint32_t seq, uint32_t ack)
{
    struct {
        struct nlmsghdr nh;
        struct cn_msg cn;
        struct listen_filter in;
    } __attribute__((packed)) msg;
    size_t data_len = filtered ? sizeof(msg.in) : sizeof(msg.in.op);
    size_t len = sizeof(msg) - sizeof(msg.in) + data_len;
    memset(&msg, 0, sizeof(msg));
    msg.nh.nlmsg_len = (uint32_t)len;
    msg.nh.nlmsg_type = NLMSG_DONE;
    msg.nh.nlmsg_pid = (uint32_t)getpid();
    msg.cn.id.idx = CN_IDX_PROC;
    msg.cn.id.val = CN_VAL_PROC;
    msg.cn.seq = seq;
    msg.cn.ack = ack;
    msg.cn.len = (uint16_t)data_len;
    msg.in.op = (uint32_t)op;
    msg.in.events = WANTED_EVENTS;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    return sendto(fd, &msg, len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) == (ssize_t)len
               ? 0
               : -1;
}

/* The kernel answers a subscription with an event of kind NONE carrying
 * the error, multicast to every listener: ours is the one whose ack is
 * our random ack + 1 (the kernel numbers seq itself), so a failed
 * subscription of another program cannot pass for ours.  No answer at all means the kernel sent
 * none: there was no listener, so ours failed.  Events before the answer
 * are dropped: the sweep that follows the start reads all of /proc. */
static int judge_ack(const unsigned char *buf, size_t len, uint32_t sender, void *arg)
{
    return ack_error(buf, len, sender, *(const uint32_t *)arg);
}

static int wait_ack(int fd, uint32_t ack, int timeout_ms)
{
    return netlink_wait(fd, timeout_ms, judge_ack, &ack);
}

/* Whether a datagram holds our own rename. */
static bool own_rename(const unsigned char *buf, size_t len, pid_t self)
{
    struct nlmsghdr nh;
    struct cn_msg cn;
    struct proc_event ev;
    if (len < NLMSG_HDRLEN + sizeof(cn) + event_head)
        return false;
    memcpy(&nh, buf, sizeof(nh));
    memcpy(&cn, buf + NLMSG_HDRLEN, sizeof(cn));
    memset(&ev, 0, sizeof(ev));
    size_t body = len - NLMSG_HDRLEN - sizeof(cn);
    memcpy(&ev, buf + NLMSG_HDRLEN + sizeof(cn), body < sizeof(ev) ? body : sizeof(ev));
    return cn.id.idx == CN_IDX_PROC && cn.id.val == CN_VAL_PROC && ev.what == PROC_EVENT_COMM &&
           body >= event_head + sizeof(ev.event_data.comm) &&
           ev.event_data.comm.process_pid == self;
}

/* Ask for the wanted events only.  The kernel sends no answer to a
 * filtered listener (its filter drops the answer too), so whether the
 * filter took is found out: a rename of our own (to the same name) is
 * reported at once, within the prctl, unless the kernel filters.
 * Whatever else arrives meanwhile is dropped, as before the answer. */
static void ask_filter(struct proc_connector *pc)
{
    char name[17] = "";
    if (send_op(pc->fd, PROC_CN_MCAST_LISTEN, true, 0, 0) < 0 ||
        prctl(PR_GET_NAME, name, 0, 0, 0) < 0)
        return;
    unsigned char buf[DGRAM_MAX] __attribute__((aligned(8)));
    while (recv(pc->fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno == ENOBUFS)
        ;
    if (prctl(PR_SET_NAME, name, 0, 0, 0) < 0)
        return;
    bool seen = false;
    ssize_t n;
    while ((n = recv(pc->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0 || errno == ENOBUFS)
        seen = seen || (n > 0 && own_rename(buf, (size_t)n, getpid()));
    pc->filtered = !seen;
}

int proc_connector_open(struct proc_connector *pc, char *err, size_t err_len)
{
    memset(pc, 0, sizeof(*pc));
    pc->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_CONNECTOR);
    if (pc->fd < 0) {
        snprintf(err, err_len, "cannot open a netlink connector socket (%s): a kernel without"
                 " CONFIG_PROC_EVENTS, or a container", strerror(errno));
        return -1;
    }
    int size = RCVBUF_BYTES;
    if (setsockopt(pc->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
        setsockopt(pc->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    struct sockaddr_nl me = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
    const char *what = "bind to the proc connector's group";
    if (bind(pc->fd, (struct sockaddr *)&me, sizeof(me)) == 0) {
        what = "subscribe to process events";
        uint32_t cookie[2] = {0, 0};
        if (getrandom(cookie, sizeof(cookie), GRND_NONBLOCK) < 0)
            cookie[1] = (uint32_t)getpid() ^ (uint32_t)time(NULL);
        if (send_op(pc->fd, PROC_CN_MCAST_LISTEN, false, cookie[0], cookie[1]) == 0) {
            int answer = wait_ack(pc->fd, cookie[1] + 1, 1000);
            if (answer == 0) {
                ask_filter(pc);
                return 0;
            }
            errno = answer;
        }
    }
    snprintf(err, err_len, "cannot %s (%s)%s", what, strerror(errno),
             errno == EPERM ? ": it needs root with CAP_NET_ADMIN" : "");
    close(pc->fd);
    pc->fd = -1;
    return -1;
}

void proc_connector_close(struct proc_connector *pc)
{
    if (pc->fd >= 0) {
        send_op(pc->fd, PROC_CN_MCAST_IGNORE, false, 0, 0);
        close(pc->fd);
    }
    pc->fd = -1;
}

struct drain {
    struct proc_connector *pc;
    void (*fn)(const struct pc_event *ev, void *arg);
    void *arg;
};

static int feed_events(const unsigned char *buf, size_t len, uint32_t sender, void *arg)
{
    struct drain *d = arg;
    struct pc_parsed parsed;
    proc_connector_parse(buf, len, sender, &parsed);
    d->pc->rejected += parsed.rejected;
    if (parsed.overrun)
        d->pc->overruns++;
    for (size_t k = 0; k < parsed.count; k++) {
        d->pc->events++;
        d->fn(&parsed.events[k], d->arg);
    }
    return parsed.overrun;
}

static void socket_overrun(void *arg)
{
    ((struct drain *)arg)->pc->overruns++;
}

int proc_connector_drain(struct proc_connector *pc,
                         void (*fn)(const struct pc_event *ev, void *arg), void *arg)
{
    static __thread unsigned char bufs[BATCH][DGRAM_MAX] __attribute__((aligned(8)));
    if (pc->fd < 0)
        return 0;
    struct drain d = {pc, fn, arg};
    return netlink_drain(pc->fd, &bufs[0][0], BATCH, DGRAM_MAX, feed_events, socket_overrun,
                         &pc->rejected, &d);
}
