#include "config.h"

#include <string.h>

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
