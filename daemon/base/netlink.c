#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "base/netlink.h"

int netlink_next(struct netlink_walk *w, struct nlmsghdr *nh, const unsigned char **payload)
{
    if (w->len == 0)
        return 0;
    if (w->len < sizeof(*nh)) {
        w->len = 0;
        return -1;
    }
    memcpy(nh, w->at, sizeof(*nh)); /* the buffer need not be aligned */
    if (nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > w->len) {
        w->len = 0;
        return -1;
    }
    *payload = w->at + NLMSG_HDRLEN;
    size_t step = NLMSG_ALIGN(nh->nlmsg_len);
    if (step >= w->len) {
        w->len = 0;
    } else {
        w->at += step;
        w->len -= step;
    }
    return 1;
}

int netlink_wait(int fd, int timeout_ms,
                 int (*judge)(const unsigned char *buf, size_t len, uint32_t sender, void *arg),
                 void *arg)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    for (int waited = 0; waited < timeout_ms; waited += 50) {
        if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
            return errno;
        unsigned char buf[NETLINK_WAIT_DGRAM] __attribute__((aligned(8)));
        struct sockaddr_nl from;
        socklen_t from_len = sizeof(from);
        ssize_t n;
        while ((n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
                             &from_len)) >= 0 ||
               errno == ENOBUFS || errno == EINTR) {
            /* ENOBUFS: events were lost meanwhile, not the answer yet. */
            bool whole = n > 0 && from_len >= sizeof(from);
            from_len = sizeof(from);
            if (!whole)
                continue;
            int answer = judge(buf, (size_t)n, from.nl_pid, arg);
            if (answer >= 0)
                return answer;
        }
    }
    return ETIMEDOUT;
}

int netlink_drain(int fd, unsigned char *bufs, int batch, size_t dgram,
                  int (*feed)(const unsigned char *buf, size_t len, uint32_t sender, void *arg),
                  void (*overrun)(void *arg), uint64_t *rejected, void *arg)
{
    struct sockaddr_nl from[NETLINK_BATCH_MAX];
    struct iovec iov[NETLINK_BATCH_MAX];
    struct mmsghdr msgs[NETLINK_BATCH_MAX];
    int lost = 0;
    for (;;) {
        for (int i = 0; i < batch; i++) {
            iov[i] = (struct iovec){bufs + (size_t)i * dgram, dgram};
            msgs[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                              .msg_namelen = sizeof(from[i]),
                                              .msg_iov = &iov[i],
                                              .msg_iovlen = 1};
        }
        int n = recvmmsg(fd, msgs, (unsigned)batch, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == ENOBUFS) {
                overrun(arg);
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
            if (!from_netlink || (msgs[i].msg_hdr.msg_flags & MSG_TRUNC))
                (*rejected)++;
            else if (feed(iov[i].iov_base, msgs[i].msg_len, from[i].nl_pid, arg))
                lost = 1;
        }
        if (n < batch)
            break;
    }
    return lost;
}
