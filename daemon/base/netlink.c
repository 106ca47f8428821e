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
