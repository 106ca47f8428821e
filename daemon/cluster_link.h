/* The link to the cluster's database: a child process of the daemon that
 * alone speaks to PostgreSQL (libpq, blocking calls with timeouts), so
 * that a database down, slow or unreachable never holds up the daemon's
 * loop.  The two talk over a SOCK_SEQPACKET socketpair: one JSON object
 * per packet, at most CLUSTER_PACKET_MAX bytes.
 *
 * Daemon -> link:
 *   {"t":"record","seq":N,"kind":"raise"|"lower"|"forgive"|"exempt",
 *    "uid":U,"base_rev":R,"after_seq":S,"at":usec,"by":"admin"|null,
 *    "penalty":{"level":..,"since":..,"until":..,"quiet_since":..,
 *               "last_violation":..,"violations":..,"last_reason":"cpu"|..,
 *               "last_cpu":..,"last_memory":..,"last_window":..},
 *    "exempt_until":usec}
 *   {"t":"record","seq":N,"kind":"event","event":{...the event...}}
 *       Records come in seq order, each once per connection (after an
 *       "up", the daemon sends again from that "up"'s stored + 1).
 *
 * Link -> daemon:
 *   {"t":"up","stored":N}    connected (or connected again); the
 *                            database holds this node's records up to N
 *   {"t":"stored","seq":N}   records up to N are stored (each committed;
 *                            one the database refuses, or that is no
 *                            record, is skipped and said on stderr)
 *   {"t":"standing","uid":U,"rev":R,"node":"..","seq":S,
 *    "penalty":{...},"exempt_until":usec}
 *                            a user's row as it now is: after one of the
 *                            node's own changes, on NOTIFY, and for every
 *                            row at each "up" (rows newer than the last
 *                            one sent, in rev order)
 *   {"t":"down","error":"..."} the database cannot be reached or failed;
 *                            the link retries (1 s doubling to 30 s) and
 *                            says "up" again when it is back
 *
 * The link exits when the daemon's end of the socket closes.  The daemon
 * starts it again (after a second) if it dies. */
#ifndef LOGINGUARD_CLUSTER_LINK_H
#define LOGINGUARD_CLUSTER_LINK_H

#include <sys/types.h>

#define CLUSTER_PACKET_MAX 65536

struct cluster_link_settings {
    const char *database;   /* the libpq connection string */
    const char *node;       /* this node's name */
};

/* Fork the link process: *pid its pid, *fd the daemon's end (non-blocking,
 * close-on-exec).  The child closes every other descriptor it inherited.
 * 0, or -1 with errno. */
int cluster_link_start(const struct cluster_link_settings *s, pid_t *pid, int *fd);

/* The link process's main loop, on its end of the socketpair; returns its
 * exit status.  Exposed for the tests. */
int cluster_link_main(const struct cluster_link_settings *s, int fd);

#endif
