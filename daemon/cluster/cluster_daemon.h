/* The daemon's side of the cluster's link (cluster_link.h): the link
 * process started, watched and started again, the records sent to it,
 * its words acted on.  Nothing here waits: the socket is non-blocking,
 * what cannot be sent now is sent when poll says it can, a link that
 * died is started again a second later, and a database down leaves the
 * daemon enforcing on its own state. */
#ifndef LOGINGUARD_CLUSTER_DAEMON_H
#define LOGINGUARD_CLUSTER_DAEMON_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "cluster_merge.h"

struct daemon;
struct policy;

/* At start, after the state is loaded: with [cluster] database set, open
 * the queue and start the link (errors are events; the daemon goes on). */
void cluster_daemon_start(struct daemon *d);
/* At stop: the link is ended (closing its socket ends it). */
void cluster_daemon_stop(struct daemon *d);
/* After a reload: [cluster] changes take effect at the next start; an
 * event says so. */
void cluster_daemon_reloaded(struct daemon *d, const struct policy *old);

/* The link's socket for poll: POLLIN, and POLLOUT while records wait. */
void cluster_daemon_pollfd(struct daemon *d, struct pollfd *p);
/* After poll: read what the link said, send what waits, reap and start
 * the link again when due.  p: the entry cluster_daemon_pollfd filled. */
void cluster_daemon_handle(struct daemon *d, const struct pollfd *p);
/* Boottime usec when the link is to be started again; 0: none. */
uint64_t cluster_daemon_deadline(const struct daemon *d);

/* Changes of standing, queued and on disk before they are acted on. */
void cluster_daemon_decisions(struct daemon *d);
void cluster_daemon_change(struct daemon *d, enum standing_change_kind kind, uid_t uid,
                           const char *by);

/* {"node":..,"link":"up"|"down"|"off","queued":N}, or NULL when the node
 * is in no cluster. */
json_t *cluster_daemon_status(struct daemon *d);

#endif
