/* The packets between the daemon and its link to the cluster's database
 * (link/: the program loginguard-link, which alone speaks to PostgreSQL).
 * The two talk over a SOCK_SEQPACKET socketpair: one JSON object per
 * packet, at most CLUSTER_PACKET_MAX bytes.
 *
 * Daemon -> link, first and once:
 *   {"t":"settings","database":"conninfo","node":"name"}
 *       [cluster] database and this node's name.  The password file the
 *       connection string names is not read by the link (it is root's):
 *       the daemon opens it and the link inherits it as descriptor 4.
 *
 * Daemon -> link, then:
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
#ifndef LOGINGUARD_CLUSTER_LINK_PACKETS_H
#define LOGINGUARD_CLUSTER_LINK_PACKETS_H

#define CLUSTER_PACKET_MAX 65536
#define CLUSTER_LINK_FD 3       /* the link's end of the socketpair, in the link */
#define CLUSTER_LINK_PASSFILE_FD 4 /* the password file, when there is one */

#endif
