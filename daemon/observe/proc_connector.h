/* The netlink proc connector: the kernel's fork, exec, uid and exit
 * events, so that the sampler learns of new and changed processes
 * without listing all of /proc every sample.
 *
 * The socket is non-blocking and drained from the main loop.  Anyone on
 * the node may send netlink datagrams to it, so every message is checked
 * (sender port 0 = the kernel, lengths, types, the connector's idx/val)
 * before it is believed.  Where the socket cannot be made or subscribed
 * (not root, a kernel without CONFIG_PROC_EVENTS, a container without the
 * init network namespace), the caller falls back to polling /proc. */
#ifndef LOGINGUARD_PROC_CONNECTOR_H
#define LOGINGUARD_PROC_CONNECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum pc_kind {
    PC_FORK,   /* a new process (thread-group leader): pid */
    PC_EXEC,   /* pid runs another program */
    PC_UID,    /* pid changed its real or effective uid */
    PC_EXIT,   /* the process pid ended (its leader exited) */
};

struct pc_event {
    enum pc_kind kind;
    pid_t pid;  /* the process (thread group) the event is about */
};

/* What one datagram held. */
struct pc_parsed {
    struct pc_event events[8];
    size_t count;
    uint64_t rejected;  /* messages that failed a check */
    bool overrun;       /* the kernel said it dropped some (NLMSG_OVERRUN) */
};

/* Parse one received datagram of len bytes from netlink port sender.
 * Events about threads (not processes) and of other kinds are left out
 * silently; malformed or foreign messages count in rejected. */
void proc_connector_parse(const void *buf, size_t len, uint32_t sender, struct pc_parsed *out);

struct proc_connector {
    int fd;             /* -1 when closed */
    bool filtered;      /* the kernel sends only the events wanted (Linux 6.6 and later) */
    uint64_t events, rejected, overruns;
};

/* Open and subscribe.  Returns 0, or -1 with err saying what failed and
 * why (the daemon then polls /proc; the message is logged once). */
int proc_connector_open(struct proc_connector *pc, char *err, size_t err_len);
void proc_connector_close(struct proc_connector *pc);

/* Read everything queued, handing each event to fn.  Returns 1 when
 * events were lost (ENOBUFS: the socket's buffer overflowed, or the
 * kernel's overrun message): the caller must rescan /proc; else 0. */
int proc_connector_drain(struct proc_connector *pc,
                         void (*fn)(const struct pc_event *ev, void *arg), void *arg);

#endif
