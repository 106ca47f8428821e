#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_cmd.h"
#include "cluster_db.h"
#include "cluster_schema.h"
#include "strbuf.h"

/* Held for the whole of an init: two admins running it at once (or a
 * configuration tool on every node) migrate once, one after the other. */
#define INIT_LOCK "SELECT pg_advisory_lock(hashtext('loginguard cluster init'))"

static int usage_error(const char *what)
{
    fprintf(stderr, "loginguardctl: %s\n", what);
    return CLUSTER_USAGE;
}

/* sql run on its own; CLUSTER_OK or CLUSTER_FAILED after saying what. */
static int run(PGconn *conn, const char *sql, const char *what)
{
    PGresult *res = PQexec(conn, sql);
    ExecStatusType st = PQresultStatus(res);
    int code = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? CLUSTER_OK
                                                               : cluster_fail(conn, res, what);
    PQclear(res);
    return code;
}

/* sql in a transaction of its own: all of it, or nothing. */
static int run_in_transaction(PGconn *conn, const char *sql, const char *what)
{
    if (run(conn, "BEGIN", what) != CLUSTER_OK)
        return CLUSTER_FAILED;
    if (run(conn, sql, what) != CLUSTER_OK || run(conn, "COMMIT", what) != CLUSTER_OK) {
        PQclear(PQexec(conn, "ROLLBACK"));
        return CLUSTER_FAILED;
    }
    return CLUSTER_OK;
}

/* The version the database's schema is at: 0 when there is none. */
static int schema_version(PGconn *conn, int *version)
{
    /* meta looked for first: a query naming a missing table fails. */
    PGresult *res = PQexec(conn, "SELECT to_regclass('loginguard.meta') IS NOT NULL");
    int code = CLUSTER_OK;
    *version = 0;
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
        code = cluster_fail(conn, res, "looking for loginguard.meta");
    } else if (strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
        PQclear(res);
        res = PQexec(conn, "SELECT value FROM loginguard.meta WHERE key = 'schema_version'");
        if (PQresultStatus(res) != PGRES_TUPLES_OK)
            code = cluster_fail(conn, res, "reading the schema's version");
        else if (PQntuples(res) == 1) /* else an init cut short before setting it */
            *version = atoi(PQgetvalue(res, 0, 0));
    }
    PQclear(res);
    return code;
}

/* cluster_grant_format with each %s the quoted role. */
static int grant(PGconn *conn, const char *role)
{
    char *quoted = PQescapeIdentifier(conn, role, strlen(role));
    if (!quoted)
        return cluster_fail(conn, NULL, "quoting the role's name");
    struct strbuf sql = {0};
    for (const char *s = cluster_grant_format; *s;) {
        const char *mark = strstr(s, "%s");
        size_t n = mark ? (size_t)(mark - s) : strlen(s);
        strbuf_add(&sql, s, n);
        s += n;
        if (mark) {
            strbuf_adds(&sql, quoted);
            s += 2;
        }
    }
    PQfreemem(quoted);
    int code = run_in_transaction(conn, sql.s, "granting a node's rights");
    strbuf_free(&sql);
    if (code == CLUSTER_OK)
        printf("granted %s a node's rights\n", role);
    return code;
}

static int migrate(PGconn *conn)
{
    int was = 0;
    if (run(conn, "SET client_min_messages = warning", "setting up the session") != CLUSTER_OK ||
        run(conn, INIT_LOCK, "waiting for another cluster init") != CLUSTER_OK ||
        schema_version(conn, &was) != CLUSTER_OK)
        return CLUSTER_FAILED;
    if (was > CLUSTER_SCHEMA_VERSION || was < 0) {
        fprintf(stderr, "loginguardctl: the cluster's schema is at version %d, which this "
                "loginguardctl does not know (it knows up to %d): run a newer one\n", was,
                CLUSTER_SCHEMA_VERSION);
        return CLUSTER_FAILED;
    }
    for (int v = was; v < CLUSTER_SCHEMA_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof(what), "migrating the schema to version %d", v + 1);
        if (run_in_transaction(conn, cluster_migrations[v], what) != CLUSTER_OK)
            return CLUSTER_FAILED;
    }
    printf("schema at version %d, was %d%s\n", CLUSTER_SCHEMA_VERSION, was,
           was == CLUSTER_SCHEMA_VERSION ? ": nothing to do" : "");
    return CLUSTER_OK;
}

int cluster_command(int argc, char **argv, const struct cluster_args *a)
{
    if (argc < 1 || strcmp(argv[0], "init") != 0)
        return usage_error("cluster takes a subcommand: init [--grant ROLE]");
    if (argc > 1)
        return usage_error("cluster init takes no arguments (--grant ROLE names a node's role)");
    if (a->grant && !*a->grant)
        return usage_error("--grant takes a role's name");
    struct policy p;
    PGconn *conn;
    int code = cluster_open(a->config, &p, &conn);
    if (code != CLUSTER_OK)
        return code;
    code = migrate(conn);
    if (code == CLUSTER_OK && a->grant)
        code = grant(conn, a->grant);
    PQfinish(conn);
    policy_free(&p);
    return code;
}
