/* Walking the messages of one netlink datagram, as the proc connector
 * and taskstats receive them (netlink.c).  The datagram is the kernel's,
 * but a short or inconsistent one must not be read past its end. */
#ifndef LOGINGUARD_NETLINK_H
#define LOGINGUARD_NETLINK_H

#include <linux/netlink.h>
#include <stddef.h>

struct netlink_walk {
    const unsigned char *at; /* the next message */
    size_t len;              /* bytes left from at */
};

/* The next message: 1 with its header in *nh and its payload (nh->nlmsg_len
 * - NLMSG_HDRLEN bytes) at *payload; 0 at the end of the datagram; -1 when
 * what is left is not a whole message (a header that does not fit, a length
 * shorter than the header or past the datagram), which ends the walk. */
int netlink_next(struct netlink_walk *w, struct nlmsghdr *nh, const unsigned char **payload);

#endif
