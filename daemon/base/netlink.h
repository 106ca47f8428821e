/* Walking the messages of one netlink datagram, as the proc connector
 * and taskstats receive them, and waiting for an answer (netlink.c).  The datagram is the kernel's,
 * but a short or inconsistent one must not be read past its end. */
#ifndef LOGINGUARD_NETLINK_H
#define LOGINGUARD_NETLINK_H

#include <linux/netlink.h>
#include <stddef.h>
#include <stdint.h>

struct netlink_walk {
    const unsigned char *at; /* the next message */
    size_t len;              /* bytes left from at */
};

/* The next message: 1 with its header in *nh and its payload (nh->nlmsg_len
 * - NLMSG_HDRLEN bytes) at *payload; 0 at the end of the datagram; -1 when
 * what is left is not a whole message (a header that does not fit, a length
 * shorter than the header or past the datagram), which ends the walk. */
int netlink_next(struct netlink_walk *w, struct nlmsghdr *nh, const unsigned char **payload);

/* Waiting for the kernel's answer to a request on a netlink socket (the
 * proc connector's subscription, taskstats' family and subscription):
 * poll fd in short steps for up to timeout_ms, and hand every datagram
 * read, with its length and sender's port, to judge.  judge returns -1
 * for one that is not the answer (events that came first are dropped),
 * or the answer: 0 or an errno, which netlink_wait returns.  Otherwise
 * the errno of a failed poll, or ETIMEDOUT. */
#define NETLINK_WAIT_DGRAM 4096

int netlink_wait(int fd, int timeout_ms,
                 int (*judge)(const unsigned char *buf, size_t len, uint32_t sender, void *arg),
                 void *arg);

/* Every datagram waiting on fd, read `batch` at a time (at most 64) into
 * bufs (batch datagrams of dgram bytes each): each whole one from the
 * kernel goes to feed, with its length and sender's port (feed returns 1
 * when it says events were lost); any other adds to *rejected; a socket
 * that overran (ENOBUFS) calls overrun.  1 when something was lost,
 * else 0. */
#define NETLINK_BATCH_MAX 64

int netlink_drain(int fd, unsigned char *bufs, int batch, size_t dgram,
                  int (*feed)(const unsigned char *buf, size_t len, uint32_t sender, void *arg),
                  void (*overrun)(void *arg), uint64_t *rejected, void *arg);

#endif
