/* What the cluster link asks of PostgreSQL (cluster_schema.h's tables):
 * connecting with timeouts, storing a node's records each in one
 * transaction, reading standings.  Every call returns within about
 * LINK_DB_WAIT_SEC whatever the server does (libpq's asynchronous calls
 * under poll), and reads nothing of unbounded size from it. */
#ifndef LOGINGUARD_LINK_DB_H
#define LOGINGUARD_LINK_DB_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_merge.h"

#define LINK_DB_WAIT_SEC 15      /* a statement's answer; the server gives up at 10 s */
#define LINK_DB_BATCH 256        /* standing rows a query */
#define LINK_DB_LATER_MAX 1000   /* raises a forgive folds back in */

struct link_db {
    PGconn *conn;
    const char *node;
    char *password;              /* from the connection string: kept out of errors */
    uint64_t stored_seq;         /* nodes.stored_seq as last read or written */
    char error[1024];             /* why the last call failed */
};

enum link_db_result {
    LINK_DB_OK,
    LINK_DB_DOWN,     /* the connection failed or timed out: reconnect */
    LINK_DB_REFUSED,  /* the server refused the record itself: it was skipped */
};

/* Connect, check the schema's version, enter the node in nodes (reading
 * its stored_seq) and LISTEN.  LINK_DB_OK or LINK_DB_DOWN (db->error). */
enum link_db_result link_db_connect(struct link_db *db, const char *database,
                                    const char *passfile, const char *node);
void link_db_close(struct link_db *db);

/* Store one change (c->node is db's node), and *row the user's row after
 * it (*have_row false when the user has none).  A record at or below
 * stored_seq is not stored again. */
enum link_db_result link_db_store_change(struct link_db *db, const struct standing_change *c,
                                         uint64_t at, const char *by,
                                         struct shared_standing *row, bool *have_row);
/* Store one event (its JSON text, its name, its time as logged, its uid
 * or -1). */
enum link_db_result link_db_store_event(struct link_db *db, uint64_t seq, const char *event,
                                        const char *name, const char *time, int64_t uid);
/* Store nothing for record seq but that it is done with: a record the
 * daemon sent that is not one must not hold up the ones after it. */
enum link_db_result link_db_skip(struct link_db *db, uint64_t seq);
/* Up to LINK_DB_BATCH rows with rev > after, in rev order; *last the
 * greatest rev read (after, when none). */
enum link_db_result link_db_rows_after(struct link_db *db, uint64_t after,
                                       struct shared_standing *rows, size_t *count, uint64_t *last);
/* The rows whose rev is one of revs (at most LINK_DB_BATCH of them). */
enum link_db_result link_db_rows_at(struct link_db *db, const uint64_t *revs, size_t n,
                                    struct shared_standing *rows, size_t *count);
/* Read what the server sent (notifications): LINK_DB_DOWN when the
 * connection is gone. */
enum link_db_result link_db_consume(struct link_db *db);
/* The next notification of another session: its rev; false when none is
 * waiting. */
bool link_db_next_notify(struct link_db *db, uint64_t *rev, bool *bad_payload);

#endif
