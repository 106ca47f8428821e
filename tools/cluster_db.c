#include "config.h"

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_db.h"
#include "ctl_config.h"
#include "units.h"
#include "util.h"

/* A connection attempt that hangs (a host that drops packets) ends; the
 * string's own connect_timeout wins over this. */
#define CONNECT_TIMEOUT "10"

void cluster_where(PGconn *conn, char *buf, size_t len)
{
    const char *host = PQhost(conn), *port = PQport(conn), *db = PQdb(conn);
    const char *user = PQuser(conn);
    snprintf(buf, len, "host=%s port=%s dbname=%s user=%s", host && *host ? host : "(default)",
             port && *port ? port : "(default)", db ? db : "?", user ? user : "?");
}

/* The server's message on one line: libpq ends it with a newline and may
 * put the details on lines of their own. */
static void put_message(const char *msg)
{
    size_t len = strlen(msg);
    while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
        len--;
    for (size_t i = 0; i < len; i++) {
        bool space = msg[i] == '\n' || msg[i] == '\t';
        if (!space)
            fputc(msg[i], stderr);
        else if (i > 0 && msg[i - 1] != ' ' && msg[i - 1] != '\n' && msg[i - 1] != '\t')
            fputc(' ', stderr);
    }
}

/* A failed statement's words: severity, message, and detail and hint
 * when the server gives them (not the statement quoted back). */
static void put_result_error(const PGresult *res)
{
    const char *sev = PQresultErrorField(res, PG_DIAG_SEVERITY);
    const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
    const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
    if (!primary) {
        put_message(PQresultErrorMessage(res));
        return;
    }
    fprintf(stderr, "%s: ", sev ? sev : "ERROR");
    put_message(primary);
    if (detail) {
        fputs(" (", stderr);
        put_message(detail);
        fputs(")", stderr);
    }
    if (hint) {
        fputs("; hint: ", stderr);
        put_message(hint);
    }
}

int cluster_fail(PGconn *conn, const PGresult *res, const char *what)
{
    char where[512];
    cluster_where(conn, where, sizeof(where));
    fprintf(stderr, "loginguardctl: %s failed on the cluster's database (%s): ", what, where);
    if (res && *PQresultErrorMessage(res))
        put_result_error(res);
    else
        put_message(PQerrorMessage(conn));
    fputs("\n", stderr);
    return CLUSTER_FAILED;
}

/* The string is parsed first, so that a mistyped one is reported without
 * libpq's message, which may quote a piece of it (the password, say). */
static int connect_to(const char *database, const char *path, PGconn **conn)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(database, &err);
    if (!opts) {
        PQfreemem(err);
        fprintf(stderr, "loginguardctl: database in [cluster] of %s is not a libpq connection "
                "string (keyword = value pairs, or a postgresql:// URI)\n", path);
        return CLUSTER_USAGE;
    }
    PQconninfoFree(opts);
    /* Later keywords win: the admin's string overrides these defaults. */
    const char *const keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *const values[] = {CONNECT_TIMEOUT, "loginguardctl", database, NULL};
    *conn = PQconnectdbParams(keys, values, 1);
    if (!*conn) {
        fprintf(stderr, "loginguardctl: out of memory connecting to the cluster's database\n");
        return CLUSTER_FAILED;
    }
    if (PQstatus(*conn) != CONNECTION_OK) {
        char where[512];
        cluster_where(*conn, where, sizeof(where));
        fprintf(stderr, "loginguardctl: cannot connect to the cluster's database (%s, from "
                "[cluster] database of %s): ", where, path);
        put_message(PQerrorMessage(*conn));
        fputs("\n", stderr);
        PQfinish(*conn);
        *conn = NULL;
        return CLUSTER_UNREACHABLE;
    }
    return CLUSTER_OK;
}

int cluster_open(const char *config, struct policy *p, PGconn **conn)
{
    *conn = NULL;
    const char *path = config ? config : CTL_DEFAULT_CONFIG;
    if (ctl_load_policy(config, "the cluster's database", NULL, p) < 0)
        return CLUSTER_USAGE;
    if (!p->cluster_database || !*p->cluster_database) {
        fprintf(stderr, "loginguardctl: %s sets no database in [cluster], so this node shares "
                "nothing; set it to the cluster's libpq connection string (loginguard.conf(5))\n",
                path);
        policy_free(p);
        return CLUSTER_USAGE;
    }
    int code = connect_to(p->cluster_database, path, conn);
    if (code != CLUSTER_OK)
        policy_free(p);
    return code;
}

int cluster_each_event(PGconn *conn, uint64_t since, cluster_event_fn *fn, void *arg)
{
    char since_text[32];
    snprintf(since_text, sizeof(since_text), "%llu", (unsigned long long)since);
    const char *params[] = {since_text};
    /* Row by row: a cluster's week of events need not fit in memory. */
    if (!PQsendQueryParams(conn,
                           "SELECT node, event::text FROM loginguard.events "
                           "WHERE at >= to_timestamp($1::double precision / 1e6) "
                           "ORDER BY at, node, seq",
                           1, NULL, params, NULL, NULL, 0) ||
        !PQsetSingleRowMode(conn))
        return cluster_fail(conn, NULL, "reading loginguard.events");
    int code = CLUSTER_OK;
    PGresult *res;
    while ((res = PQgetResult(conn)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE)
            fn(PQgetvalue(res, 0, 0), PQgetvalue(res, 0, 1), (size_t)PQgetlength(res, 0, 1), arg);
        else if (st != PGRES_TUPLES_OK && code == CLUSTER_OK)
            code = cluster_fail(conn, res, "reading loginguard.events");
        PQclear(res);
    }
    return code;
}

/* As the daemon writes times: "2026-01-31T12:00:00.000Z"; null for none. */
static json_t *time_json(uint64_t usec)
{
    if (!usec)
        return json_null();
    time_t secs = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    char buf[64];
    gmtime_r(&secs, &tm);
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%03lluZ",
             (unsigned long long)(usec % USEC_PER_SEC / 1000));
    return json_string(buf);
}

static uint64_t field_u64(const PGresult *res, int row, int col)
{
    return PQgetisnull(res, row, col) ? 0 : strtoull(PQgetvalue(res, row, col), NULL, 10);
}

static json_t *standing_row(const PGresult *res, int i, const struct policy *p, uint64_t now)
{
    uid_t uid = (uid_t)field_u64(res, i, 0);
    int level = atoi(PQgetvalue(res, i, 1));
    uint64_t until = field_u64(res, i, 2), exempt = field_u64(res, i, 4);
    struct passwd *pw = getpwuid(uid);
    json_t *o = json_object();
    json_object_set_new(o, "uid", json_integer((json_int_t)uid));
    json_object_set_new(o, "user", pw ? json_string(pw->pw_name) : json_null());
    json_object_set_new(o, "level", json_integer(level));
    json_object_set_new(o, "level_name", level > 0 && (size_t)level <= p->level_count
                                             ? json_string(p->levels[level - 1].name)
                                             : json_null());
    json_object_set_new(o, "until", time_json(until > now ? until : 0));
    json_object_set_new(o, "violations", json_integer((json_int_t)field_u64(res, i, 3)));
    json_object_set_new(o, "exempt_until", time_json(exempt > now ? exempt : 0));
    json_object_set_new(o, "node", json_string(PQgetvalue(res, i, 5)));
    return o;
}

json_t *cluster_standing(PGconn *conn, const struct policy *p)
{
    uint64_t now = now_realtime_usec();
    char now_text[32];
    snprintf(now_text, sizeof(now_text), "%llu", (unsigned long long)now);
    const char *params[] = {now_text};
    PGresult *res = PQexecParams(conn,
                                 "SELECT uid, level, until, violations, exempt_until, node "
                                 "FROM loginguard.standing "
                                 "WHERE level > 0 OR exempt_until > $1::bigint ORDER BY uid",
                                 1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        cluster_fail(conn, res, "reading loginguard.standing");
        PQclear(res);
        return NULL;
    }
    json_t *users = json_array();
    for (int i = 0; i < PQntuples(res); i++)
        json_array_append_new(users, standing_row(res, i, p, now));
    PQclear(res);
    json_t *r = json_object();
    json_object_set_new(r, "users", users);
    return r;
}
