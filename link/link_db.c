#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_codec.h"
#include "link_db.h"
#include "cluster_schema.h"
#include "util.h"

/* Sent with every connection: the admin's string (dbname, expanded last)
 * overrides any of them.  The server ends a statement or a lock wait that
 * takes too long, and a session left idle inside a transaction; TCP
 * keepalives and tcp_user_timeout find a peer gone quiet.  A commit waits
 * for its WAL to be flushed whatever the server's synchronous_commit: the
 * daemon forgets a record once told it is stored. */
/* The connection string (dbname, expanded) overrides the defaults before
 * it, and the password file after it overrides the one it names. */
static const char *const conn_keys[] = {
    "connect_timeout", "keepalives", "keepalives_idle", "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "application_name", "options", "dbname",
    "passfile", NULL,
};
#define CONN_OPTIONS                                                                       \
    "-c statement_timeout=10000 -c lock_timeout=5000 "                                      \
    "-c idle_in_transaction_session_timeout=60000 -c synchronous_commit=on"

#define STANDING_COLUMNS                                                                   \
    "uid, rev, level, since, until, quiet_since, last_violation, violations, exempt_until, " \
    "last_reason, last_cpu, last_memory, last_window, node, seq"

/* ------------------------------------------------------------ errors */

static void scrub(struct link_db *db, char *text)
{
    /* libpq's words on one line, and never the password, should a
     * message quote a piece of the connection string. */
    char *out = text;
    for (const char *p = text; *p; p++) {
        bool space = *p == '\n' || *p == '\r' || *p == '\t' || *p == ' ';
        if (!space)
            *out++ = *p;
        else if (out > text && out[-1] != ' ')
            *out++ = ' ';
    }
    *out = '\0';
    size_t len = strlen(text);
    while (len && text[len - 1] == ' ')
        text[--len] = '\0';
    if (db->password && *db->password)
        for (char *at; (at = strstr(text, db->password));)
            memset(at, '*', strlen(db->password));
}

static void where(const struct link_db *db, char *buf, size_t len)
{
    const char *host = PQhost(db->conn), *port = PQport(db->conn);
    const char *name = PQdb(db->conn), *user = PQuser(db->conn);
    snprintf(buf, len, "host=%s port=%s dbname=%s user=%s", host && *host ? host : "(default)",
             port && *port ? port : "(default)", name ? name : "?", user ? user : "?");
}

static enum link_db_result fail(struct link_db *db, const PGresult *res, const char *what)
{
    char at[256], msg[384];
    where(db, at, sizeof(at));
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    snprintf(msg, sizeof(msg), "%s", primary ? primary : PQerrorMessage(db->conn));
    snprintf(db->error, sizeof(db->error), "%.120s failed on the cluster's database (%.255s): %.383s", what,
             at, msg);
    scrub(db, db->error);
    return LINK_DB_DOWN;
}

/* ------------------------------------------------------------ statements */

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait until the socket is ready for events, or the deadline: false then. */
static bool wait_socket(PGconn *conn, short events, uint64_t deadline)
{
    for (;;) {
        uint64_t now = monotonic_ms();
        if (now >= deadline)
            return false;
        struct pollfd p = {.fd = PQsocket(conn), .events = events};
        int r = poll(&p, 1, (int)(deadline - now));
        if (r > 0)
            return true;
        if (r < 0 && errno != EINTR)
            return false;
    }
}

/* A row of single-row mode added to the result being built (*into, made
 * from the first row's shape). */
static bool add_row(PGresult **into, const PGresult *row)
{
    if (!*into && !(*into = PQcopyResult(row, PG_COPYRES_ATTRS)))
        return false;
    int t = PQntuples(*into);
    for (int f = 0; f < PQnfields(row); f++) {
        bool null = PQgetisnull(row, 0, f);
        if (!PQsetvalue(*into, t, f, null ? NULL : PQgetvalue(row, 0, f),
                        null ? -1 : PQgetlength(row, 0, f)))
            return false;
    }
    return true;
}

/* Send a statement and everything of it to the server. */
static bool send_statement(struct link_db *db, const char *sql, int n, const char *const *params,
                           uint64_t deadline)
{
    /* Row by row, so that a server sending more rows than asked for is
     * stopped at max_rows, not buffered whole. */
    if (!PQsendQueryParams(db->conn, sql, n, NULL, params, NULL, NULL, 0) ||
        !PQsetSingleRowMode(db->conn))
        return false;
    for (int r; (r = PQflush(db->conn)) != 0;)
        if (r < 0 || !wait_socket(db->conn, POLLOUT | POLLIN, deadline) ||
            !PQconsumeInput(db->conn))
            return false;
    return true;
}

/* One statement with text parameters: its result (the first failed one,
 * if any) with at most max_rows rows, or NULL with db->error when the
 * connection failed, the server did not answer in time or sent more rows
 * (then the connection must be closed). */
static PGresult *run(struct link_db *db, const char *sql, int n, const char *const *params,
                     int max_rows)
{
    uint64_t deadline = monotonic_ms() + LINK_DB_WAIT_SEC * 1000;
    PGresult *kept = NULL, *rows = NULL;
    bool too_many = false;
    if (!send_statement(db, sql, n, params, deadline))
        goto broken;
    for (;;) {
        while (PQisBusy(db->conn))
            if (!wait_socket(db->conn, POLLIN, deadline) || !PQconsumeInput(db->conn))
                goto broken;
        PGresult *res = PQgetResult(db->conn);
        if (!res)
            break;
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE) {
            too_many = too_many || (rows ? PQntuples(rows) : 0) >= max_rows;
            if (!too_many && !add_row(&rows, res))
                too_many = true;
            PQclear(res);
            if (too_many)
                goto broken;
            continue;
        }
        bool failed = st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK;
        if (!kept || (failed && PQresultStatus(kept) != PGRES_FATAL_ERROR)) {
            PQclear(kept);
            kept = res;
        } else {
            PQclear(res);
        }
    }
    if (kept && PQresultStatus(kept) == PGRES_TUPLES_OK && rows) {
        PQclear(kept);
        return rows;
    }
    PQclear(rows);
    if (kept)
        return kept;
broken:
    PQclear(kept);
    PQclear(rows);
    if (too_many)
        snprintf(db->error, sizeof(db->error), "the cluster's database sent more than the %d "
                 "rows asked for", max_rows);
    else if (PQstatus(db->conn) == CONNECTION_OK && monotonic_ms() >= deadline)
        snprintf(db->error, sizeof(db->error),
                 "the cluster's database did not answer within %d s", LINK_DB_WAIT_SEC);
    else
        fail(db, NULL, "a statement");
    return NULL;
}

static bool ok(const PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

/* What a failed result means: a record the server will never take
 * (bad data, a constraint), or trouble with the server itself. */
static enum link_db_result judge(struct link_db *db, const PGresult *res, const char *what)
{
    fail(db, res, what);
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    if (PQstatus(db->conn) != CONNECTION_OK || !state)
        return LINK_DB_DOWN;
    /* 22: data exception, 23: integrity constraint violation. */
    if (strncmp(state, "22", 2) == 0 || strncmp(state, "23", 2) == 0)
        return LINK_DB_REFUSED;
    return LINK_DB_DOWN;
}

/* Run a statement that returns nothing wanted. */
static enum link_db_result exec(struct link_db *db, const char *what, const char *sql, int n,
                                const char *const *params)
{
    PGresult *res = run(db, sql, n, params, 1);
    if (!res)
        return LINK_DB_DOWN;
    enum link_db_result r = ok(res) ? LINK_DB_OK : judge(db, res, what);
    PQclear(res);
    return r;
}

/* Parameters as text. */
struct params {
    char text[24][40];
    const char *v[24];
    int n;
};

static void p_u64(struct params *p, uint64_t v)
{
    snprintf(p->text[p->n], sizeof(p->text[0]), "%" PRIu64, v);
    p->v[p->n] = p->text[p->n];
    p->n++;
}

static void p_str(struct params *p, const char *s)
{
    p->v[p->n++] = s;
}

static void p_double(struct params *p, double d)
{
    snprintf(p->text[p->n], sizeof(p->text[0]), "%.17g", isfinite(d) ? d : 0.0);
    p->v[p->n] = p->text[p->n];
    p->n++;
}

/* ------------------------------------------------------------ reading rows */

/* A column as an integer from 0 to max (NULL: 0); false when the server
 * sent anything else. */
static bool col_u64(const PGresult *res, int row, int col, uint64_t max, uint64_t *out)
{
    *out = 0;
    if (PQgetisnull(res, row, col))
        return true;
    const char *s = PQgetvalue(res, row, col);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max)
        return false;
    *out = v;
    return true;
}

static bool col_penalty(const PGresult *res, int row, int col, struct penalty *p)
{
    uint64_t level, violations;
    bool good = col_u64(res, row, col, 1000, &level) &&
                col_u64(res, row, col + 1, INT64_MAX, &p->since) &&
                col_u64(res, row, col + 2, INT64_MAX, &p->until) &&
                col_u64(res, row, col + 3, INT64_MAX, &p->quiet_since) &&
                col_u64(res, row, col + 4, INT64_MAX, &p->last_violation) &&
                col_u64(res, row, col + 5, UINT32_MAX, &violations);
    p->level = (int)level;
    p->violations = (uint32_t)violations;
    return good;
}

/* The reason, cpu, memory and window after the first columns. */
static bool col_last(const PGresult *res, int row, int col, struct penalty *p)
{
    p->last_reason = PQgetisnull(res, row, col)
                         ? VIOLATION_REASON_NONE
                         : violation_reason_parse(PQgetvalue(res, row, col));
    double cpu = PQgetisnull(res, row, col + 1) ? 0 : strtod(PQgetvalue(res, row, col + 1), NULL);
    p->last_cpu = cpu >= 0 && cpu <= 1e6 ? cpu : 0;
    return col_u64(res, row, col + 2, INT64_MAX, &p->last_memory) &&
           col_u64(res, row, col + 3, INT64_MAX, &p->last_window);
}

/* One row of STANDING_COLUMNS; false when the server sent nonsense. */
static bool read_standing(const PGresult *res, int row, struct shared_standing *s)
{
    memset(s, 0, sizeof(*s));
    uint64_t uid;
    if (PQnfields(res) != 15 || !col_u64(res, row, 0, UINT32_MAX - 1, &uid) ||
        !col_u64(res, row, 1, INT64_MAX, &s->rev))
        return false;
    s->uid = (uid_t)uid;
    /* level, since, until, quiet_since, last_violation, violations */
    struct penalty *p = &s->penalty;
    if (!col_penalty(res, row, 2, p) || !col_u64(res, row, 8, INT64_MAX, &s->exempt_until) ||
        !col_last(res, row, 9, p) || !col_u64(res, row, 14, INT64_MAX, &s->seq))
        return false;
    if (PQgetisnull(res, row, 13) || PQgetlength(res, row, 13) >= CLUSTER_NODE_MAX)
        return false;
    snprintf(s->node, sizeof(s->node), "%s", PQgetvalue(res, row, 13));
    return true;
}

/* The rows of a query on standing, at most max; a row that is not one is
 * left out (and said on stderr).  *last: the greatest rev the server sent,
 * of a row left out too, so that a paging reader goes past it. */
static enum link_db_result read_rows(struct link_db *db, PGresult *res, const char *what,
                                     struct shared_standing *rows, size_t max, size_t *count,
                                     uint64_t *last)
{
    *count = 0;
    if (!res)
        return LINK_DB_DOWN;
    if (!ok(res)) {
        fail(db, res, what);
        PQclear(res);
        return LINK_DB_DOWN;
    }
    int n = PQntuples(res);
    for (int i = 0; i < n && *count < max; i++) {
        uint64_t rev;
        if (last && col_u64(res, i, 1, INT64_MAX, &rev) && rev > *last)
            *last = rev;
        if (read_standing(res, i, &rows[*count]))
            (*count)++;
        else
            fprintf(stderr, "loginguard-link: a row of loginguard.standing that is "
                    "not one (out of range or malformed) left out\n");
    }
    PQclear(res);
    return LINK_DB_OK;
}

enum link_db_result link_db_rows_after(struct link_db *db, uint64_t after,
                                       struct shared_standing *rows, size_t *count, uint64_t *last)
{
    *last = after;
    struct params p = {.n = 0};
    p_u64(&p, after);
    p_u64(&p, LINK_DB_BATCH);
    PGresult *res = run(db, "SELECT " STANDING_COLUMNS " FROM loginguard.standing "
                        "WHERE rev > $1 ORDER BY rev LIMIT $2", p.n, p.v, LINK_DB_BATCH);
    return read_rows(db, res, "reading standings", rows, LINK_DB_BATCH, count, last);
}

enum link_db_result link_db_rows_at(struct link_db *db, const uint64_t *revs, size_t n,
                                    struct shared_standing *rows, size_t *count)
{
    char list[LINK_DB_BATCH * 21 + 3];
    size_t at = 0;
    list[at++] = '{';
    for (size_t i = 0; i < n && i < LINK_DB_BATCH; i++)
        at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%" PRIu64, i ? "," : "", revs[i]);
    snprintf(list + at, sizeof(list) - at, "}");
    const char *params[] = {list};
    PGresult *res = run(db, "SELECT " STANDING_COLUMNS " FROM loginguard.standing "
                        "WHERE rev = ANY ($1::bigint[]) ORDER BY rev", 1, params,
                        LINK_DB_BATCH);
    return read_rows(db, res, "reading standings", rows, LINK_DB_BATCH, count, NULL);
}

/* ------------------------------------------------------------ connecting */

static enum link_db_result check_schema(struct link_db *db)
{
    PGresult *res = run(db, "SELECT value FROM loginguard.meta WHERE key = 'schema_version'", 0,
                        NULL, 1);
    if (!res)
        return LINK_DB_DOWN;
    enum link_db_result r = LINK_DB_OK;
    char at[256];
    where(db, at, sizeof(at));
    if (!ok(res) || PQntuples(res) != 1) {
        const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
        if (!ok(res) && state && strcmp(state, "42501") == 0)
            fail(db, res, "reading loginguard.meta (run `loginguardctl cluster init --grant "
                          "ROLE` for this node's role)");
        else
            snprintf(db->error, sizeof(db->error),
                     "the cluster's database (%s) has no loginguard schema: run `loginguardctl "
                     "cluster init` once, as the role that is to own it", at);
        r = LINK_DB_DOWN;
    } else if (strcmp(PQgetvalue(res, 0, 0), "1") != 0) {
        char version[16];
        snprintf(version, sizeof(version), "%.15s", PQgetvalue(res, 0, 0));
        snprintf(db->error, sizeof(db->error),
                 "the cluster's database (%s) has the loginguard schema version %s, this "
                 "loginguardd uses version %d: run `loginguardctl cluster init` with the "
                 "loginguardctl of the newest loginguard in the cluster, and upgrade the nodes",
                 at, version, CLUSTER_SCHEMA_VERSION);
        r = LINK_DB_DOWN;
    }
    PQclear(res);
    scrub(db, db->error);
    return r;
}

static enum link_db_result enter_node(struct link_db *db)
{
    const char *params[] = {db->node};
    PGresult *res = run(db, "INSERT INTO loginguard.nodes (node) VALUES ($1) "
                        "ON CONFLICT (node) DO UPDATE SET last_seen = now() "
                        "RETURNING stored_seq", 1, params, 1);
    if (!res)
        return LINK_DB_DOWN;
    enum link_db_result r = LINK_DB_OK;
    if (!ok(res))
        r = fail(db, res, "entering this node in loginguard.nodes");
    else if (PQntuples(res) != 1 || PQnfields(res) != 1 ||
             !col_u64(res, 0, 0, INT64_MAX, &db->stored_seq)) {
        snprintf(db->error, sizeof(db->error), "loginguard.nodes gave no stored_seq");
        r = LINK_DB_DOWN;
    }
    PQclear(res);
    if (r == LINK_DB_OK)
        r = exec(db, "LISTEN", "LISTEN " CLUSTER_NOTIFY_CHANNEL, 0, NULL);
    return r;
}

/* The string is parsed first, so that a mistyped one is reported without
 * libpq's message, which may quote a piece of it (the password). */
static enum link_db_result open_conn(struct link_db *db, const char *database,
                                     const char *passfile)
{
    char *err = NULL;
    PQconninfoOption *opts = PQconninfoParse(database, &err);
    if (!opts) {
        PQfreemem(err);
        snprintf(db->error, sizeof(db->error), "database in [cluster] is not a libpq connection "
                 "string (keyword = value pairs, or a postgresql:// URI)");
        return LINK_DB_DOWN;
    }
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && !db->password)
            db->password = xstrdup(o->val);
    PQconninfoFree(opts);
    const char *const values[] = {"10", "1", "30", "10", "3", "30000", "loginguardd",
                                  CONN_OPTIONS, database, passfile, NULL};
    db->conn = PQconnectdbParams(conn_keys, values, 1);
    if (!db->conn) {
        snprintf(db->error, sizeof(db->error), "out of memory connecting to the cluster's database");
        return LINK_DB_DOWN;
    }
    if (PQstatus(db->conn) != CONNECTION_OK) {
        char at[256], msg[384];
        where(db, at, sizeof(at));
        snprintf(msg, sizeof(msg), "%s", PQerrorMessage(db->conn));
        snprintf(db->error, sizeof(db->error), "cannot connect to the cluster's database (%.255s): %.383s",
                 at, msg);
        scrub(db, db->error);
        return LINK_DB_DOWN;
    }
    if (PQsetnonblocking(db->conn, 1) != 0)
        return fail(db, NULL, "PQsetnonblocking");
    return LINK_DB_OK;
}

enum link_db_result link_db_connect(struct link_db *db, const char *database,
                                    const char *passfile, const char *node)
{
    link_db_close(db);
    db->node = node;
    db->error[0] = '\0';
    enum link_db_result r = open_conn(db, database, passfile);
    if (r == LINK_DB_OK)
        r = check_schema(db);
    if (r == LINK_DB_OK)
        r = enter_node(db);
    if (r != LINK_DB_OK)
        link_db_close(db);
    return r;
}

void link_db_close(struct link_db *db)
{
    if (db->conn)
        PQfinish(db->conn);
    db->conn = NULL;
}

enum link_db_result link_db_consume(struct link_db *db)
{
    if (!PQconsumeInput(db->conn) || PQstatus(db->conn) != CONNECTION_OK)
        return fail(db, NULL, "listening");
    return LINK_DB_OK;
}

bool link_db_next_notify(struct link_db *db, uint64_t *rev, bool *bad_payload)
{
    PGnotify *n;
    while ((n = PQnotifies(db->conn))) {
        bool own = n->be_pid == PQbackendPID(db->conn);
        char *end;
        errno = 0;
        unsigned long long v = strtoull(n->extra, &end, 10);
        *bad_payload = errno || end == n->extra || *end;
        *rev = v;
        PQfreemem(n);
        if (!own)
            return true;
    }
    return false;
}

/* ------------------------------------------------------------ storing */

/* In the record's transaction: lock this node's row; *stored_already
 * when seq is at or below what it says is stored. */
static enum link_db_result lock_node(struct link_db *db, uint64_t seq, bool *stored_already)
{
    const char *params[] = {db->node};
    PGresult *res = run(db, "SELECT stored_seq FROM loginguard.nodes WHERE node = $1 FOR UPDATE",
                        1, params, 1);
    if (!res)
        return LINK_DB_DOWN;
    enum link_db_result r = LINK_DB_OK;
    if (!ok(res))
        r = judge(db, res, "locking this node's row of loginguard.nodes");
    else if (PQntuples(res) != 1 || !col_u64(res, 0, 0, INT64_MAX, &db->stored_seq)) {
        snprintf(db->error, sizeof(db->error), "this node's row of loginguard.nodes is gone");
        r = LINK_DB_DOWN;
    } else {
        *stored_already = seq <= db->stored_seq;
    }
    PQclear(res);
    return r;
}

static enum link_db_result mark_stored(struct link_db *db, uint64_t seq)
{
    struct params p = {.n = 0};
    p_str(&p, db->node);
    p_u64(&p, seq);
    return exec(db, "moving stored_seq",
                "UPDATE loginguard.nodes SET stored_seq = $2, last_seen = now() "
                "WHERE node = $1 AND stored_seq < $2", p.n, p.v);
}

static enum link_db_result lock_standing(struct link_db *db, uid_t uid, struct shared_standing *row)
{
    struct params p = {.n = 0};
    p_u64(&p, uid);
    enum link_db_result r = exec(db, "making the user's row",
                                 "INSERT INTO loginguard.standing (uid, rev, level, violations, "
                                 "node, seq) VALUES ($1, 0, 0, 0, '', 0) ON CONFLICT (uid) DO NOTHING",
                                 p.n, p.v);
    if (r != LINK_DB_OK)
        return r;
    PGresult *res = run(db, "SELECT " STANDING_COLUMNS " FROM loginguard.standing WHERE uid = $1 "
                        "FOR UPDATE", p.n, p.v, 1);
    if (!res)
        return LINK_DB_DOWN;
    if (!ok(res))
        r = judge(db, res, "locking the user's row");
    else if (PQntuples(res) != 1 || !read_standing(res, 0, row)) {
        snprintf(db->error, sizeof(db->error), "the row of uid %u in loginguard.standing is not "
                 "one (out of range or malformed)", (unsigned)uid);
        r = LINK_DB_REFUSED;
    }
    PQclear(res);
    return r;
}

/* The raises a forgive folds back in, the strongest first, those its own
 * node sent before it already left out. */
static enum link_db_result later_raises(struct link_db *db, const struct standing_change *c,
                                        struct standing_change *later, size_t *count)
{
    *count = 0;
    struct params p = {.n = 0};
    p_u64(&p, c->uid);
    p_u64(&p, c->base_rev);
    p_str(&p, db->node);
    p_u64(&p, c->seq);
    p_u64(&p, LINK_DB_LATER_MAX);
    PGresult *res = run(db, "SELECT seq, level, since, until, quiet_since, last_violation, "
                        "violations, last_reason, last_cpu, last_memory, last_window, node "
                        "FROM loginguard.changes WHERE uid = $1 AND rev > $2 AND kind = 'raise' "
                        "AND NOT (node = $3 AND seq < $4) "
                        "ORDER BY level DESC, until DESC, rev LIMIT $5", p.n, p.v,
                        LINK_DB_LATER_MAX);
    if (!res)
        return LINK_DB_DOWN;
    if (!ok(res)) {
        enum link_db_result r = judge(db, res, "reading the raises after a forgive's base");
        PQclear(res);
        return r;
    }
    for (int i = 0; i < PQntuples(res) && *count < LINK_DB_LATER_MAX && PQnfields(res) == 12; i++) {
        struct standing_change *l = &later[*count];
        memset(l, 0, sizeof(*l));
        l->kind = CHANGE_RAISE;
        l->uid = c->uid;
        if (!col_u64(res, i, 0, INT64_MAX, &l->seq) || !col_penalty(res, i, 1, &l->penalty) ||
            !col_last(res, i, 7, &l->penalty) || PQgetisnull(res, i, 11) ||
            PQgetlength(res, i, 11) >= CLUSTER_NODE_MAX)
            continue;
        snprintf(l->node, sizeof(l->node), "%s", PQgetvalue(res, i, 11));
        (*count)++;
    }
    PQclear(res);
    return LINK_DB_OK;
}

static void p_penalty(struct params *p, const struct penalty *pen)
{
    p_u64(p, (uint64_t)pen->level);
    p_u64(p, pen->since);
    p_u64(p, pen->until);
    p_u64(p, pen->quiet_since);
    p_u64(p, pen->last_violation);
    p_u64(p, pen->violations);
    p_str(p, pen->last_reason == VIOLATION_REASON_NONE ? NULL
                                                       : violation_reason_name(pen->last_reason));
    p_double(p, pen->last_cpu);
    p_u64(p, pen->last_memory);
    p_u64(p, pen->last_window);
}

static enum link_db_result write_row(struct link_db *db, const struct shared_standing *row)
{
    struct params p = {.n = 0};
    p_u64(&p, row->uid);
    p_u64(&p, row->rev);
    p_penalty(&p, &row->penalty); /* $3 .. $12 */
    p_u64(&p, row->exempt_until);
    p_str(&p, row->node);
    p_u64(&p, row->seq);
    return exec(db, "writing the user's row",
                "UPDATE loginguard.standing SET rev = $2, level = $3, since = $4, until = $5, "
                "quiet_since = $6, last_violation = $7, violations = $8, last_reason = $9, "
                "last_cpu = $10, last_memory = $11, last_window = $12, exempt_until = $13, "
                "node = $14, seq = $15 WHERE uid = $1", p.n, p.v);
}

static enum link_db_result write_change(struct link_db *db, const struct standing_change *c,
                                        uint64_t rev, bool applied, uint64_t at, const char *by)
{
    struct params p = {.n = 0};
    p_u64(&p, rev);
    p_str(&p, db->node);
    p_u64(&p, c->seq);
    p_u64(&p, c->uid);
    p_str(&p, standing_change_name(c->kind));
    p_u64(&p, c->base_rev);
    p_u64(&p, c->after_seq);
    p_str(&p, applied ? "true" : "false");
    p_u64(&p, at);
    p_str(&p, by && *by ? by : NULL);
    p_penalty(&p, &c->penalty); /* $11 .. $20 */
    p_u64(&p, c->exempt_until);
    return exec(db, "storing the change",
                "INSERT INTO loginguard.changes (rev, node, seq, uid, kind, base_rev, after_seq, "
                "applied, at, by_name, level, since, until, quiet_since, last_violation, "
                "violations, last_reason, last_cpu, last_memory, last_window, exempt_until) "
                "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9::bigint / 1e6), $10, "
                "$11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)", p.n, p.v);
}

static enum link_db_result next_rev(struct link_db *db, uint64_t *rev)
{
    PGresult *res = run(db, "SELECT nextval('loginguard.rev')", 0, NULL, 1);
    if (!res)
        return LINK_DB_DOWN;
    enum link_db_result r = LINK_DB_OK;
    if (!ok(res))
        r = judge(db, res, "nextval of loginguard.rev");
    else if (PQntuples(res) != 1 || !col_u64(res, 0, 0, INT64_MAX, rev) || *rev == 0) {
        snprintf(db->error, sizeof(db->error), "loginguard.rev gave no revision");
        r = LINK_DB_DOWN;
    }
    PQclear(res);
    return r;
}

/* The change's transaction, between BEGIN and COMMIT. */
static enum link_db_result change_body(struct link_db *db, const struct standing_change *c,
                                       uint64_t at, const char *by, struct shared_standing *row,
                                       bool *have_row, bool *notify)
{
    struct standing_change *later = NULL;
    size_t later_count = 0;
    enum link_db_result r = lock_standing(db, c->uid, row);
    if (r == LINK_DB_OK && c->kind == CHANGE_FORGIVE) {
        later = xcalloc(LINK_DB_LATER_MAX, sizeof(*later));
        r = later_raises(db, c, later, &later_count);
    }
    uint64_t rev = 0;
    if (r == LINK_DB_OK)
        r = next_rev(db, &rev);
    if (r != LINK_DB_OK) {
        free(later);
        return r;
    }
    bool created = row->rev == 0;
    bool changed = standing_merge(row, c, later, later_count);
    free(later);
    if (changed) {
        row->rev = rev;
        row->seq = c->seq;
        snprintf(row->node, sizeof(row->node), "%s", db->node);
        r = write_row(db, row);
    } else if (created) {
        struct params p = {.n = 0};
        p_u64(&p, c->uid);
        r = exec(db, "removing an unused row",
                 "DELETE FROM loginguard.standing WHERE uid = $1 AND rev = 0", p.n, p.v);
    }
    *have_row = !created || changed;
    *notify = changed;
    if (r == LINK_DB_OK)
        r = write_change(db, c, rev, changed, at, by);
    if (r == LINK_DB_OK && changed) {
        struct params p = {.n = 0};
        p_u64(&p, rev);
        r = exec(db, "NOTIFY", "SELECT pg_notify('" CLUSTER_NOTIFY_CHANNEL "', $1)", p.n, p.v);
    }
    return r;
}

/* BEGIN, body, stored_seq, COMMIT; a record the server refuses is
 * skipped (stored_seq still moves, in a transaction of its own), so that
 * one bad record never holds up the ones after it. */
static enum link_db_result in_transaction(struct link_db *db, uint64_t seq,
                                          enum link_db_result (*body)(struct link_db *, void *),
                                          void *arg)
{
    enum link_db_result r = exec(db, "BEGIN", "BEGIN", 0, NULL);
    bool already = false;
    if (r == LINK_DB_OK)
        r = lock_node(db, seq, &already);
    if (r == LINK_DB_OK && !already)
        r = body(db, arg);
    if (r == LINK_DB_OK && !already)
        r = mark_stored(db, seq);
    if (r == LINK_DB_OK)
        r = exec(db, "COMMIT", "COMMIT", 0, NULL);
    if (r == LINK_DB_OK) {
        if (seq > db->stored_seq)
            db->stored_seq = seq;
        return LINK_DB_OK;
    }
    if (r == LINK_DB_DOWN || PQstatus(db->conn) != CONNECTION_OK)
        return LINK_DB_DOWN;
    char why[sizeof(db->error)];
    snprintf(why, sizeof(why), "%s", db->error);
    if (exec(db, "ROLLBACK", "ROLLBACK", 0, NULL) != LINK_DB_OK ||
        mark_stored(db, seq) != LINK_DB_OK)
        return LINK_DB_DOWN;
    fprintf(stderr, "loginguard-link: record %" PRIu64 " dropped: %s\n", seq, why);
    snprintf(db->error, sizeof(db->error), "%s", why);
    db->stored_seq = seq;
    return LINK_DB_REFUSED;
}

static enum link_db_result no_body(struct link_db *db, void *arg)
{
    (void)db;
    (void)arg;
    return LINK_DB_OK;
}

enum link_db_result link_db_skip(struct link_db *db, uint64_t seq)
{
    return in_transaction(db, seq, no_body, NULL);
}

struct change_arg {
    const struct standing_change *c;
    uint64_t at;
    const char *by;
    struct shared_standing *row;
    bool *have_row, notify;
};

static enum link_db_result change_tx(struct link_db *db, void *arg)
{
    struct change_arg *a = arg;
    return change_body(db, a->c, a->at, a->by, a->row, a->have_row, &a->notify);
}

enum link_db_result link_db_store_change(struct link_db *db, const struct standing_change *c,
                                         uint64_t at, const char *by,
                                         struct shared_standing *row, bool *have_row)
{
    *have_row = false;
    struct change_arg a = {.c = c, .at = at, .by = by, .row = row, .have_row = have_row};
    return in_transaction(db, c->seq, change_tx, &a);
}

struct event_arg {
    uint64_t seq;
    const char *event, *name, *time;
    int64_t uid;
};

static enum link_db_result event_tx(struct link_db *db, void *arg)
{
    struct event_arg *a = arg;
    struct params p = {.n = 0};
    p_str(&p, db->node);
    p_u64(&p, a->seq);
    p_str(&p, a->time);
    p_str(&p, a->name);
    if (a->uid >= 0)
        p_u64(&p, (uint64_t)a->uid);
    else
        p_str(&p, NULL);
    p_str(&p, a->event);
    return exec(db, "storing the event",
                "INSERT INTO loginguard.events (node, seq, at, name, uid, event) "
                "VALUES ($1, $2, coalesce($3::timestamptz, now()), $4, $5, $6::jsonb)", p.n, p.v);
}

enum link_db_result link_db_store_event(struct link_db *db, uint64_t seq, const char *event,
                                        const char *name, const char *time, int64_t uid)
{
    struct event_arg a = {.seq = seq, .event = event, .name = name, .time = time, .uid = uid};
    return in_transaction(db, seq, event_tx, &a);
}
