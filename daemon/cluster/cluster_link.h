/* Starting the link to the cluster's database: the program
 * loginguard-link (link/), which alone speaks to PostgreSQL, so that a
 * database down, slow or unreachable never holds up the daemon's loop,
 * and so that the root daemon loads no database client (libpq and the
 * TLS, Kerberos and LDAP libraries behind it).  It runs as a user of its
 * own, with nothing of the daemon's but its end of the socketpair and
 * the password file (cluster_link_packets.h says what they exchange). */
#ifndef LOGINGUARD_CLUSTER_LINK_H
#define LOGINGUARD_CLUSTER_LINK_H

#include <sys/types.h>

#include "cluster_link_packets.h"

#define CLUSTER_LINK_USER "loginguard" /* [cluster] link_user's default */

struct cluster_link_settings {
    const char *program;    /* the link program's path */
    const char *database;   /* the libpq connection string */
    const char *passfile;   /* the password file it names, or NULL */
    const char *node;       /* this node's name */
    uid_t uid;              /* the link's user, never root */
    gid_t gid;
};

/* The link's user by name into s->uid and s->gid: 0, or -1 with why
 * (no such user, or root). */
int cluster_link_user(struct cluster_link_settings *s, const char *name, char *why, size_t len);

/* Fork and exec the link program as s->uid: *pid its pid, *fd the
 * daemon's end (non-blocking, close-on-exec), its settings already sent.
 * 0, or -1 with errno. */
int cluster_link_start(const struct cluster_link_settings *s, pid_t *pid, int *fd);

#endif
