#include "config.h"

#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <poll.h>
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
#include "observe/taskstats_parts.h"
#include "util.h"

/* A burst of exits between two drains of the main loop (a record takes
 * about 1 KiB of buffer): past it the kernel drops records (ENOBUFS). */
#define RCVBUF_BYTES (8 << 20)
#define BATCH 16
/* A record is about 450 bytes, twice that with the group's part; the
 * struct grows with new kernels. */
#define DGRAM_MAX 4096

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
    struct ts_attr a;
    uint16_t id = 0;
    bool named = false;
    while (ts_next_attr(&at, &left, &a) > 0) {
        if (a.type == CTRL_ATTR_FAMILY_ID && a.len == sizeof(id))
            memcpy(&id, a.data, sizeof(id));
        else if (a.type == CTRL_ATTR_FAMILY_NAME)
            named = a.len == sizeof(TASKSTATS_GENL_NAME) &&
                    memcmp(a.data, TASKSTATS_GENL_NAME, a.len) == 0;
    }
    return named && id >= NLMSG_MIN_TYPE ? id : 0;
}

/* "0-63" or "0-3,8-11": the CPUs the kernel may ever run tasks on, from
 * path (the environment's cpu_possible). */
static void possible_cpus(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
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
    struct environment host; /* its strings are static: the listener may keep one */
    environment_host(&host);
    return taskstats_open_env(t, &host, err, err_len);
}

int taskstats_open_env(struct taskstats_listener *t, const struct environment *env, char *err,
                       size_t err_len)
{
    taskstats_init(t, 0);
    t->cpu_possible = env->cpu_possible;
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
    possible_cpus(t->cpu_possible, cpus, sizeof(cpus));
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
        possible_cpus(t->cpu_possible, cpus, sizeof(cpus));
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

struct drain {
    struct taskstats_listener *t;
    void (*fn)(const struct ts_exit *e, void *arg);
    void *arg;
};

static int feed_exits(const unsigned char *buf, size_t len, uint32_t sender, void *arg)
{
    struct drain *d = arg;
    return taskstats_feed(d->t, buf, len, sender, d->fn, d->arg);
}

/* Records were lost: the sums in flight are forgotten. */
static void socket_overrun(void *arg)
{
    struct taskstats_listener *t = ((struct drain *)arg)->t;
    t->overruns++;
    ts_forget_groups(t);
}

int taskstats_drain(struct taskstats_listener *t,
                    void (*fn)(const struct ts_exit *e, void *arg), void *arg)
{
    if (t->fd < 0)
        return 0;
    struct drain d = {t, fn, arg};
    return netlink_drain(t->fd, t->bufs, BATCH, DGRAM_MAX, feed_exits, socket_overrun,
                         &t->rejected, &d);
}
