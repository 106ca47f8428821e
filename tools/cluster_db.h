/* loginguardctl's side of the cluster's database ([cluster] database of
 * the configuration, cluster_schema.h): connecting, saying what failed
 * without the password, and the cluster-wide reads that status, events
 * and report --cluster feed to their usual printing. */
#ifndef LOGINGUARDCTL_CLUSTER_DB_H
#define LOGINGUARDCTL_CLUSTER_DB_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdint.h>

#include "policy.h"

/* loginguardctl(1)'s exit statuses for the database. */
enum { CLUSTER_OK = 0, CLUSTER_FAILED = 1, CLUSTER_USAGE = 2, CLUSTER_UNREACHABLE = 3 };

/* The config (NULL: the default) into p, and a connection to its
 * [cluster] database into *conn.  On failure says why on stderr (the
 * config file when database is unset; the server's words and where,
 * never the password) and returns the exit status for it. */
int cluster_open(const char *config, struct policy *p, PGconn **conn);

/* "host=H port=P dbname=D user=U" of conn: where, without the password. */
void cluster_where(PGconn *conn, char *buf, size_t len);

/* Says on stderr that what failed on conn, with the server's message (or
 * res's); returns CLUSTER_FAILED. */
int cluster_fail(PGconn *conn, const PGresult *res, const char *what);

/* Each event of loginguard.events at or after since (realtime usec),
 * oldest first, as the node logged it (JSON text) with its node's name. */
typedef void cluster_event_fn(const char *node, const char *line, size_t len, void *arg);
int cluster_each_event(PGconn *conn, uint64_t since, cluster_event_fn *fn, void *arg);

/* Users limited or exempt on any node, as the daemon's status reply holds
 * users ({"users": [...]}, with their standing's "node" and no usage):
 * NULL after saying why. */
json_t *cluster_standing(PGconn *conn, const struct policy *p);

#endif
