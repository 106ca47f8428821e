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

#include "base/environment.h"
#include "cluster/cluster.h"
#include "cluster_merge.h"
#include "enforce/actions.h"
#include "engine.h"
#include "observe/directory.h"
#include "policy.h"
#include "record/events.h"
#include "snapshot.h"

/* What the cluster's glue is given of the daemon: the parts it reads or
 * changes, and what only the core can do, as functions (core: its
 * context).  Built by the core; nothing here includes its context. */
struct cluster_view {
    struct cluster *cluster;
    const struct environment *env;
    const struct policy *policy;
    struct event_log *events;
    struct engine_state *engine;
    const struct snapshot *snap;
    const struct decisions *decisions;
    struct directory *directory;
    const bool *enforcing;
    void *core;
    struct actions (*actions)(void *core);
    void (*counters_changed)(void *core);   /* a cgroup was made: count it */
    void (*save_state)(void *core);         /* state.json now */
};

/* At start, after the state is loaded: with [cluster] database set, open
 * the queue and start the link (errors are events; the daemon goes on). */
void cluster_daemon_start(struct cluster_view *v);
/* At stop: the link is ended (closing its socket ends it). */
void cluster_daemon_stop(struct cluster_view *v);
/* After a reload: [cluster] changes take effect at the next start; an
 * event says so. */
void cluster_daemon_reloaded(struct cluster_view *v, const struct policy *old);

/* The link's socket for poll: POLLIN, and POLLOUT while records wait. */
void cluster_daemon_pollfd(struct cluster_view *v, struct pollfd *p);
/* After poll: read what the link said, send what waits, reap and start
 * the link again when due.  p: the entry cluster_daemon_pollfd filled. */
void cluster_daemon_handle(struct cluster_view *v, const struct pollfd *p);
/* Boottime usec when the link is to be started again; 0: none. */
uint64_t cluster_daemon_deadline(const struct cluster_view *v);

/* Changes of standing, queued and on disk before they are acted on. */
void cluster_daemon_decisions(struct cluster_view *v);
void cluster_daemon_change(struct cluster_view *v, enum standing_change_kind kind, uid_t uid,
                           const char *by);

/* {"node":..,"link":"up"|"down"|"off","queued":N}, or NULL when the node
 * is in no cluster. */
json_t *cluster_daemon_status(struct cluster_view *v);

#endif
