/* loginguardctl: ask the running loginguardd (loginguardctl(1)).  One
 * request a run over the control socket; the daemon decides what the
 * caller may see and do from the kernel's word on who is asking. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cluster_cmd.h"
#include "cluster_db.h"
#include "config_check.h"
#include "control_proto.h"
#include "ctl_config.h"
#include "events_cmd.h"
#include "report_cmd.h"
#include "simulate_cmd.h"
#include "units.h"
#include "user_view.h"
#include "utf8.h"
#include "util.h"

#define REPLY_TIMEOUT_MS 10000
/* The daemon's replies are bounded by it (4 MiB); this is the tool's own
 * bound, a little above. */
#define REPLY_MAX (5u << 20)

enum exit_code { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2, EXIT_UNREACHABLE = 3 };

struct args {
    const char *socket;
    const char *config;
    bool json, all, remove, dump;
    const char *reason;
    const char *duration;
    struct events_args events;
    struct report_args report;
    const char *current, *trace;   /* simulate */
    const char *grant;             /* cluster init */
    bool cluster;                  /* status, events, report: every node's, from the database */
};

static void usage(FILE *f)
{
    fputs("usage: loginguardctl [--socket PATH | --config FILE] [--json] COMMAND\n"
          "  status [--all]                      mode, policy, users by current usage\n"
          "  user NAME|UID                       one user's usage, last hour, processes, events\n"
          "  me                                  the same about yourself\n"
          "  why PID                             why the daemon acts, or not, on a process\n"
          "  forgive NAME [--reason TEXT]        level back to none (root, admin_group)\n"
          "  exempt NAME --for DURATION --reason TEXT   a temporary exemption\n"
          "  exempt NAME --remove                end one now\n"
          "  reload                              load the config again (root, admin_group)\n"
          "  check-config [FILE] [--dump]        check a config without the daemon\n"
          "  events [--user NAME|UID] [--since 1h|TIME] [--kind K,...] [--follow]\n"
          "                                      the event log (read from its file)\n"
          "  metrics                             Prometheus text format (root, admin_group)\n"
          "  report [--since 7d|TIME] [--until TIME] [--format text|json|csv|html]\n"
          "         [--table users|programs|rules|days|returns]\n"
          "                                      who and what the event log shows, counted\n"
          "  simulate --config CANDIDATE [--current FILE] [--since 7d|TIME] [--until TIME]\n"
          "           [--trace DIR] [--json]     the trace replayed under both policies\n"
          "  cluster init [--grant ROLE]         create or migrate the cluster's schema\n"
          "  status, events, report --cluster    every node's, from the cluster's database\n"
          "exit status: 0 done, 1 refused, an error from the daemon or a config with\n"
          "errors, 2 usage, 3 the daemon (or the cluster's database) cannot be reached,\n"
          "4 the event log (or the trace) cannot be read\n",
          f);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("loginguardctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n", stderr);
    va_end(ap);
    usage(stderr);
    return EXIT_USAGE;
}

/* Text the daemon sends comes from passwd and from admins: printed so
 * that it can only show. */
static void put_text(const char *s, int width)
{
    size_t len = strlen(s);
    char *out = xmalloc(4 * len + 1);
    size_t n = utf8_escape(s, len, out, 4 * len + 1);
    printf("%-*s", width, out);
    (void)n;
    free(out);
}

static const char *str(const json_t *o, const char *key, const char *none)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : none;
}

/* ------------------------------------------------------------------ */
/* Talking to the daemon */

static int socket_path(const struct args *a, char **path)
{
    if (a->socket) {
        *path = xstrdup(a->socket);
        return 0;
    }
    struct policy p;
    if (ctl_load_policy(a->config, "the socket's path", "; give --socket PATH", &p) < 0)
        return -1;
    *path = xstrdup(p.control_socket);
    policy_free(&p);
    return 0;
}

static int connect_to(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* One line from fd, within the timeout; NULL with errno. */
static char *read_line(int fd, size_t *len)
{
    size_t cap = 65536, n = 0;
    char *buf = xmalloc(cap);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, REPLY_TIMEOUT_MS);
        if (r == 0)
            errno = ETIMEDOUT;
        ssize_t got = r > 0 ? read(fd, buf + n, cap - n) : -1;
        if (got == 0)
            errno = ECONNRESET;
        if (got <= 0) {
            free(buf);
            return NULL;
        }
        char *nl = memchr(buf + n, '\n', (size_t)got);
        n += (size_t)got;
        if (nl) {
            *len = (size_t)(nl - buf);
            return buf;
        }
        if (n == cap) {
            if (cap >= REPLY_MAX) {
                free(buf);
                errno = EMSGSIZE;
                return NULL;
            }
            cap *= 2;
            buf = xreallocarray(buf, cap, 1);
        }
    }
}

/* The reply to req, or NULL after saying why (*code set). */
static json_t *ask(const char *path, const struct control_request *req, int *code,
                   struct control_error *err)
{
    int fd = connect_to(path);
    if (fd < 0) {
        fprintf(stderr, "loginguardctl: cannot reach loginguardd at %s: %s%s\n", path,
                strerror(errno),
                errno == ENOENT || errno == ECONNREFUSED ? " (is it running?)" : "");
        *code = EXIT_UNREACHABLE;
        return NULL;
    }
    char *line = control_line(control_request_json(req));
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (w < 0)
            break;
        off += (size_t)w;
    }
    free(line);
    size_t rlen = 0;
    char *reply = off == len ? read_line(fd, &rlen) : NULL;
    int e = errno;
    close(fd);
    if (!reply) {
        fprintf(stderr, "loginguardctl: no reply from loginguardd at %s: %s\n", path,
                strerror(e));
        *code = EXIT_UNREACHABLE;
        return NULL;
    }
    json_t *r = control_parse_reply(reply, rlen, err);
    free(reply);
    if (!r) {
        fprintf(stderr, "loginguardctl: %s\n", err->message);
        *code = EXIT_REFUSED;
    }
    return r;
}

/* ------------------------------------------------------------------ */
/* Showing replies */

static void time_text(const json_t *t, char *buf, size_t len)
{
    const char *s = json_string_value(t);
    if (!s) {
        snprintf(buf, len, "-");
        return;
    }
    /* "2026-01-31T12:00:00.000Z" -> "2026-01-31 12:00:00Z" */
    snprintf(buf, len, "%.10s %.8sZ", s, strlen(s) > 11 ? s + 11 : "");
}

enum { COL_USER, COL_UID, COL_CORES, COL_MEMORY, COL_PROCS, COL_SLURM, COL_LEVEL, COL_UNTIL,
       COL_EXEMPT, COL_VIOLATIONS, COL_NODE, COLS };
static const char *const headings[COLS] = {"USER", "UID", "CORES", "MEMORY", "PROCS",
                                           "SLURM JOBS", "LEVEL", "UNTIL", "EXEMPT UNTIL",
                                           "VIOLATIONS", "NODE"};

/* The columns of status, and of status --cluster (the database holds each
 * user's standing, and which node changed it last, but no usage). */
static const int local_columns[] = {COL_USER, COL_UID, COL_CORES, COL_MEMORY, COL_PROCS,
                                    COL_SLURM, COL_LEVEL, COL_UNTIL, COL_EXEMPT};
static const int cluster_columns[] = {COL_USER, COL_UID, COL_LEVEL, COL_UNTIL,
                                      COL_VIOLATIONS, COL_EXEMPT, COL_NODE};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void row_cells(const json_t *u, char cells[COLS][80])
{
    const char *name = str(u, "user", "");
    size_t len = strlen(name);
    char *shown = xmalloc(4 * len + 1);
    utf8_escape(name, len, shown, 4 * len + 1);
    snprintf(cells[COL_USER], 80, "%s", name[0] ? shown : "-");
    free(shown);
    snprintf(cells[COL_UID], 80, "%lld", (long long)json_integer_value(json_object_get(u, "uid")));
    snprintf(cells[COL_CORES], 80, "%.2f", json_real_value(json_object_get(u, "cpu_cores")));
    format_size((uint64_t)json_integer_value(json_object_get(u, "memory_bytes")),
                cells[COL_MEMORY], 80);
    snprintf(cells[COL_PROCS], 80, "%lld",
             (long long)json_integer_value(json_object_get(u, "processes")));
    /* Slurm's, apart from the cores and memory before it: "-" or "1 (0.98 cores)". */
    json_int_t jobs = json_integer_value(json_object_get(u, "slurm_jobs"));
    if (jobs > 0)
        snprintf(cells[COL_SLURM], 80, "%lld (%.2f cores)", (long long)jobs,
                 json_number_value(json_object_get(u, "slurm_cpu_cores")));
    else
        snprintf(cells[COL_SLURM], 80, "-");
    json_int_t level = json_integer_value(json_object_get(u, "level"));
    if (level > 0)
        snprintf(cells[COL_LEVEL], 80, "%lld %s", (long long)level, str(u, "level_name", ""));
    else
        snprintf(cells[COL_LEVEL], 80, "%s", "none");
    time_text(json_object_get(u, "until"), cells[COL_UNTIL], 80);
    if (json_is_string(json_object_get(u, "protected")))
        snprintf(cells[COL_EXEMPT], 80, "always (%s)", str(u, "protected", ""));
    else
        time_text(json_object_get(u, "exempt_until"), cells[COL_EXEMPT], 80);
    snprintf(cells[COL_VIOLATIONS], 80, "%lld",
             (long long)json_integer_value(json_object_get(u, "violations")));
    const char *node = str(u, "node", "-");
    len = strlen(node);
    shown = xmalloc(4 * len + 1);
    utf8_escape(node, len, shown, 4 * len + 1);
    snprintf(cells[COL_NODE], 80, "%s", shown);
    free(shown);
}

/* The columns cols of users: every column as wide as its widest cell;
 * numbers to the right. */
static void print_table(const json_t *users, const int *cols, size_t ncols)
{
    size_t n = json_array_size(users);
    char (*cells)[COLS][80] = xcalloc(n + 1, sizeof(*cells));
    int width[COLS];
    for (int c = 0; c < COLS; c++) {
        snprintf(cells[0][c], 80, "%s", headings[c]);
        width[c] = (int)strlen(headings[c]);
    }
    for (size_t i = 0; i < n; i++) {
        row_cells(json_array_get(users, i), cells[i + 1]);
        for (int c = 0; c < COLS; c++)
            if ((int)strlen(cells[i + 1][c]) > width[c])
                width[c] = (int)strlen(cells[i + 1][c]);
    }
    for (size_t i = 0; i <= n; i++) {
        for (size_t k = 0; k < ncols; k++) {
            int c = cols[k];
            bool number = c == COL_UID || c == COL_CORES || c == COL_MEMORY ||
                          c == COL_PROCS || c == COL_VIOLATIONS;
            const char *sep = k + 1 < ncols ? "  " : "\n";
            if (k + 1 == ncols)
                printf("%s%s", cells[i][c], sep);
            else
                printf(number ? "%*s%s" : "%-*s%s", width[c], cells[i][c], sep);
        }
    }
    free(cells);
}

/* The partitions notices are sized to, and how old that word is. */
static void print_slurm(const json_t *s)
{
    if (!json_is_true(json_object_get(s, "enabled"))) {
        printf("slurm: off (");
        put_text(str(s, "off", "?"), 0);
        printf(")\n");
        return;
    }
    const json_t *parts = json_object_get(s, "partitions");
    if (!json_is_array(parts)) {
        printf("slurm: no answer yet\n");
    } else {
        printf("slurm: %zu partitions, read %llds ago in %lld ms:", json_array_size(parts),
               (long long)json_integer_value(json_object_get(s, "age_seconds")),
               (long long)json_integer_value(json_object_get(s, "query_ms")));
        for (size_t i = 0; i < json_array_size(parts); i++) {
            const json_t *p = json_array_get(parts, i);
            printf(" ");
            put_text(str(p, "name", "?"), 0);
            printf(" (%s%s, max %s)", json_is_true(json_object_get(p, "up")) ? "up" : "down",
                   json_is_true(json_object_get(p, "default")) ? ", default" : "",
                   str(p, "max_time", "?"));
        }
        printf("\n");
    }
    if (json_is_string(json_object_get(s, "error"))) {
        printf("slurm: the last query failed %llds ago: ",
               (long long)json_integer_value(json_object_get(s, "error_age_seconds")));
        put_text(str(s, "error", "?"), 0);
        printf("\n");
    }
}

static void print_status(const json_t *r)
{
    const json_t *p = json_object_get(r, "policy");
    char mem[32], share_mem[32], window[32], sampled[64];
    format_size((uint64_t)json_integer_value(json_object_get(p, "violation_memory_bytes")), mem,
                sizeof(mem));
    format_size((uint64_t)json_integer_value(json_object_get(p, "share_memory_bytes")),
                share_mem, sizeof(share_mem));
    format_duration((uint64_t)json_integer_value(json_object_get(p, "window_s")) * USEC_PER_SEC,
                    window, sizeof(window));
    time_text(json_object_get(r, "sampled"), sampled, sizeof(sampled));
    printf("mode: %s%s%s\n", str(r, "mode", "?"), json_is_string(json_object_get(r, "backend"))
                                                      ? ", backend " : "",
           str(r, "backend", ""));
    printf("policy: a violation is above %.2f cores or %s for %s; share %.2f cores, %s; "
           "levels:", json_real_value(json_object_get(p, "violation_cpu_cores")), mem, window,
           json_real_value(json_object_get(p, "share_cpu_cores")), share_mem);
    const json_t *levels = json_object_get(p, "levels");
    for (size_t i = 0; i < json_array_size(levels); i++) {
        printf(" %zu ", i + 1);
        put_text(json_string_value(json_array_get(levels, i)) ? json_string_value(
                                                                  json_array_get(levels, i))
                                                            : "?",
                 0);
    }
    printf("\nsampled: %s\n", sampled);
    /* A node of a cluster: its name, its link to the database, and the
     * records its queue holds for it. */
    const json_t *cl = json_object_get(r, "cluster");
    if (json_is_object(cl)) {
        printf("cluster: node ");
        put_text(str(cl, "node", "?"), 0);
        printf(", link %s, %lld records queued\n", str(cl, "link", "?"),
               (long long)json_integer_value(json_object_get(cl, "queued")));
    }
    if (json_is_object(json_object_get(r, "slurm")))
        print_slurm(json_object_get(r, "slurm"));
    printf("\n");
    print_table(json_object_get(r, "users"), local_columns, COUNT(local_columns));
}

static void print_user(const json_t *u)
{
    char cells[COLS][80];
    row_cells(u, cells);
    for (size_t k = 0; k < COUNT(local_columns); k++) {
        int c = local_columns[k];
        if (c != COL_UID)
            printf("%-13s %s\n", c == COL_USER ? "user" : c == COL_CORES   ? "cores"
                                                      : c == COL_MEMORY  ? "memory"
                                                      : c == COL_PROCS   ? "processes"
                                                      : c == COL_SLURM   ? "slurm jobs"
                                                      : c == COL_LEVEL   ? "level"
                                                      : c == COL_UNTIL   ? "limits until"
                                                                         : "exempt until",
                   cells[c]);
    }
    printf("%-13s %s\n", "uid", cells[COL_UID]);
}

/* ------------------------------------------------------------------ */
/* Commands */

static int build_request(int argc, char **argv, const struct args *a, struct control_request *req)
{
    memset(req, 0, sizeof(*req));
    if (argc < 1)
        return usage_error("no command given");
    const char *cmd = argv[0];
    int want_args = 1;
    if (strcmp(cmd, "status") == 0) {
        req->op = CONTROL_STATUS;
        req->all = a->all;
        want_args = 0;
    } else if (strcmp(cmd, "me") == 0) {
        req->op = CONTROL_USER;
        want_args = 0;
    } else if (strcmp(cmd, "user") == 0) {
        req->op = CONTROL_USER;
    } else if (strcmp(cmd, "forgive") == 0) {
        req->op = CONTROL_FORGIVE;
    } else if (strcmp(cmd, "exempt") == 0) {
        req->op = CONTROL_EXEMPT;
    } else if (strcmp(cmd, "reload") == 0) {
        req->op = CONTROL_RELOAD;
        want_args = 0;
    } else if (strcmp(cmd, "why") == 0) {
        req->op = CONTROL_WHY;
    } else if (strcmp(cmd, "metrics") == 0) {
        req->op = CONTROL_METRICS;
        want_args = 0;
    } else {
        return usage_error("unknown command \"%s\"", cmd);
    }
    if (argc - 1 != want_args)
        return usage_error("%s takes %s", cmd, req->op == CONTROL_WHY ? "one process id"
                                               : want_args ? "one user (a name or a uid)"
                                                           : "no arguments");
    if (a->all && req->op != CONTROL_STATUS)
        return usage_error("--all is for status");
    if (a->dump)
        return usage_error("--dump is for check-config");
    if (a->reason && req->op != CONTROL_FORGIVE && req->op != CONTROL_EXEMPT)
        return usage_error("--reason is for forgive and exempt");
    if ((a->duration || a->remove) && req->op != CONTROL_EXEMPT)
        return usage_error("--for and --remove are for exempt");
    if (a->events.user || a->events.since || a->events.kind_count || a->events.follow)
        return usage_error("--user, --since, --kind and --follow are for events");
    if (a->report.until || a->report.format || a->report.table)
        return usage_error("--until, --format and --table are for report");
    if (req->op == CONTROL_WHY) {
        char *end;
        errno = 0;
        long pid = strtol(argv[1], &end, 10);
        if (argv[1][0] < '0' || argv[1][0] > '9' || *end || errno || pid < 1 ||
            pid > CONTROL_PID_MAX)
            return usage_error("why takes a process id (1 to %d)", CONTROL_PID_MAX);
        req->pid = (pid_t)pid;
    } else if (want_args) {
        const char *who = argv[1];
        char *end;
        errno = 0;
        unsigned long uid = strtoul(who, &end, 10);
        req->has_user = true;
        if (who[0] >= '0' && who[0] <= '9' && !*end && !errno && uid < (uid_t)-1) {
            req->by_uid = true;
            req->uid = (uid_t)uid;
        } else if (strlen(who) <= CONTROL_NAME_MAX) {
            copy_string(req->name, sizeof(req->name), who);
        } else {
            return usage_error("no user name is that long");
        }
    }
    if (a->reason) {
        if (strlen(a->reason) > CONTROL_REASON_MAX)
            return usage_error("a reason is at most %d bytes", CONTROL_REASON_MAX);
        copy_string(req->reason, sizeof(req->reason), a->reason);
    }
    if (req->op == CONTROL_EXEMPT) {
        if (!!a->duration == a->remove)
            return usage_error("exempt takes --for DURATION or --remove");
        req->remove = a->remove;
        if (a->duration) {
            uint64_t usec;
            char why[200];
            if (parse_duration(a->duration, a->duration, &usec, why, sizeof(why)) < 0)
                return usage_error("--for: %s", why);
            req->duration = (usec + USEC_PER_SEC - 1) / USEC_PER_SEC;
            if (!a->reason)
                return usage_error("exempt --for needs --reason TEXT");
        }
    }
    return EXIT_OK;
}

/* The daemon's sentences, then the process they are about. */
static void print_why(const json_t *w)
{
    const json_t *p = json_object_get(w, "process");
    printf("process %lld", (long long)json_integer_value(json_object_get(w, "pid")));
    if (json_is_object(p)) {
        printf(" (");
        put_text(str(p, "comm", "?"), 0);
        printf(", uid %lld", (long long)json_integer_value(json_object_get(p, "uid")));
        if (json_integer_value(json_object_get(p, "owner_uid")) !=
            json_integer_value(json_object_get(p, "uid")))
            printf(", counted for uid %lld",
                   (long long)json_integer_value(json_object_get(p, "owner_uid")));
        printf(")");
    }
    printf(":\n");
    size_t i;
    const json_t *line;
    json_array_foreach(json_object_get(w, "text"), i, line) {
        printf("  ");
        put_text(json_string_value(line) ? json_string_value(line) : "", 0);
        printf("\n");
    }
}

/* Block characters in the charts only where the terminal's locale is
 * UTF-8. */
static bool utf8_locale(void)
{
    setlocale(LC_CTYPE, "");
    return strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
}

static void print_reply(const struct control_request *req, const json_t *r)
{
    const json_t *u = json_object_get(r, "user");
    switch (req->op) {
    case CONTROL_STATUS:
        print_status(r);
        break;
    case CONTROL_USER:
        print_user(u);
        user_view_print(stdout, r, utf8_locale());
        break;
    case CONTROL_WHY:
        print_why(json_object_get(r, "why"));
        break;
    case CONTROL_FORGIVE:
        put_text(str(u, "user", "?"), 0);
        printf(": forgiven; level none, limits back to the share\n");
        break;
    case CONTROL_RELOAD:
        printf("reloaded: ");
        put_text(str(r, "summary", ""), 0);
        printf("\n");
        break;
    case CONTROL_EXEMPT: {
        char until[64];
        time_text(json_object_get(u, "exempt_until"), until, sizeof(until));
        put_text(str(u, "user", "?"), 0);
        if (req->remove)
            printf(": exemption removed\n");
        else
            printf(": exempt until %s\n", until);
        break;
    }
    case CONTROL_METRICS: {
        /* As the daemon made it: its label values are escaped there, so
         * the text holds no control but its newlines. */
        const json_t *m = json_object_get(r, "metrics");
        fwrite(json_string_value(m) ? json_string_value(m) : "", 1, json_string_length(m),
               stdout);
        break;
    }
    case CONTROL_SESSION: /* pam_loginguard's requests: the tool sends none */
    case CONTROL_ACCOUNT:
        break;
    }
}

/* A reload refused for the config's errors: each of them, as check-config
 * prints them (and, with --json, the reply). */
static void print_config_errors(const json_t *r, const struct args *a)
{
    const json_t *errors = json_object_get(r, "errors");
    if (!json_is_array(errors))
        return;
    for (size_t i = 0; i < json_array_size(errors); i++) {
        const char *e = json_string_value(json_array_get(errors, i));
        size_t len = e ? strlen(e) : 0;
        char *shown = xmalloc(4 * len + 1);
        utf8_escape(e ? e : "", len, shown, 4 * len + 1);
        fprintf(stderr, "%s\n", shown);
        free(shown);
    }
    json_int_t count = json_integer_value(json_object_get(r, "error_count"));
    if (count > (json_int_t)json_array_size(errors))
        fprintf(stderr, "... and %lld more (loginguardctl check-config lists them all)\n",
                (long long)(count - (json_int_t)json_array_size(errors)));
    if (a->json) {
        char *text = json_dumps(r, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        if (text)
            puts(text);
        free(text);
    }
}

/* check-config [FILE]: the daemon's own check of the config it would
 * load, without the daemon. */
static int check_config(int argc, char **argv, const struct args *a)
{
    if (argc > 2)
        return usage_error("check-config takes at most one file");
    if (argc == 2 && a->config)
        return usage_error("check-config: give the file or --config, not both");
    if (a->socket || a->all || a->reason || a->duration || a->remove)
        return usage_error("check-config takes only --config FILE, --dump and --json");
    if (a->json && a->dump)
        return usage_error("--dump is a config file, not JSON: give one of them");
    const char *file = argc == 2 ? argv[1] : a->config;
    struct config_check_args check = {.path = file ? file : CTL_DEFAULT_CONFIG,
                                      .must_exist = file != NULL, .dump = a->dump};
    if (!a->json)
        return config_check(&check, stdout, stderr);
    json_t *r = config_check_json(&check);
    char *text = json_dumps(r, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    if (text)
        puts(text);
    free(text);
    int code = json_is_true(json_object_get(r, "ok")) ? EXIT_OK : EXIT_REFUSED;
    json_decref(r);
    return code;
}

static int parse_options(int argc, char **argv, struct args *a)
{
    static const struct option longopts[] = {
        {"socket", required_argument, NULL, 's'}, {"config", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},         {"all", no_argument, NULL, 'a'},
        {"reason", required_argument, NULL, 'r'}, {"for", required_argument, NULL, 'f'},
        {"remove", no_argument, NULL, 'R'},       {"help", no_argument, NULL, 'h'},
        {"dump", no_argument, NULL, 'D'},
        {"user", required_argument, NULL, 'u'},   {"since", required_argument, NULL, 'S'},
        {"kind", required_argument, NULL, 'k'},   {"follow", no_argument, NULL, 'F'},
        {"until", required_argument, NULL, 'U'},  {"format", required_argument, NULL, 'O'},
        {"table", required_argument, NULL, 'T'},
        {"current", required_argument, NULL, 'C'}, {"trace", required_argument, NULL, 'X'},
        {"grant", required_argument, NULL, 'G'},  {"cluster", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 's': a->socket = optarg; break;
        case 'c': a->config = optarg; break;
        case 'j': a->json = true; break;
        case 'a': a->all = true; break;
        case 'r': a->reason = optarg; break;
        case 'f': a->duration = optarg; break;
        case 'R': a->remove = true; break;
        case 'D': a->dump = true; break;
        case 'u': a->events.user = optarg; break;
        case 'S': a->events.since = optarg; break;
        case 'k':
            a->events.kinds = xreallocarray(a->events.kinds, a->events.kind_count + 1,
                                            sizeof(*a->events.kinds));
            a->events.kinds[a->events.kind_count++] = optarg;
            break;
        case 'F': a->events.follow = true; break;
        case 'U': a->report.until = optarg; break;
        case 'O': a->report.format = optarg; break;
        case 'T': a->report.table = optarg; break;
        case 'C': a->current = optarg; break;
        case 'X': a->trace = optarg; break;
        case 'G': a->grant = optarg; break;
        case 'L': a->cluster = true; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        default: usage(stderr); return -1;
        }
    }
    if (a->socket && a->config)
        return usage_error("--socket and --config: give one"), -1;
    return 0;
}

/* Not a request: the event log is read from its file. */
static int events_main(int argc, char **argv, struct args *a)
{
    int code;
    if (a->all || a->reason || a->duration || a->remove || a->grant) {
        code = usage_error("--all, --reason, --for, --remove and --grant are not for events");
    } else if (a->report.until || a->report.format || a->report.table) {
        code = usage_error("--until, --format and --table are for report");
    } else if (a->socket) {
        code = usage_error("events reads the event log, not the socket: give --config FILE");
    } else {
        a->events.config = a->config;
        a->events.json = a->json;
        a->events.cluster = a->cluster;
        code = events_command(argc, argv, &a->events);
    }
    free(a->events.kinds);
    return code;
}

/* Not a request either: the report is made from the event log's file. */
static int report_main(int argc, char **argv, struct args *a)
{
    int code;
    if (a->json && a->report.format && strcmp(a->report.format, "json") != 0)
        return free(a->events.kinds), usage_error("--json and --format %s: give one",
                                                  a->report.format);
    if (a->json)
        a->report.format = "json";
    if (a->all || a->reason || a->duration || a->remove || a->dump ||
        a->events.user || a->events.kind_count || a->events.follow || a->grant)
        code = usage_error("report takes --since, --until, --format, --table, --cluster and "
                           "--config");
    else if (a->socket)
        code = usage_error("report reads the event log, not the socket: give --config FILE");
    else {
        a->report.config = a->config;
        a->report.since = a->events.since;
        a->report.cluster = a->cluster;
        code = report_command(argc, argv, &a->report);
    }
    free(a->events.kinds);
    return code;
}

/* status --cluster: the standing of every node's users, from the
 * cluster's database, in status's table (or its JSON). */
static int status_cluster(int argc, struct args *a)
{
    free(a->events.kinds);
    a->events.kinds = NULL;
    if (argc > 1)
        return usage_error("status takes no arguments");
    if (a->all || a->reason || a->duration || a->remove || a->dump || a->events.user ||
        a->events.since || a->events.kind_count || a->events.follow || a->report.until ||
        a->report.format || a->report.table || a->current || a->trace || a->grant)
        return usage_error("status --cluster takes --config and --json");
    if (a->socket)
        return usage_error("status --cluster reads the cluster's database: give --config FILE, "
                           "not --socket");
    struct policy p;
    PGconn *conn;
    int code = cluster_open(a->config, &p, &conn);
    if (code != CLUSTER_OK)
        return code;
    json_t *r = cluster_standing(conn, &p);
    if (!r) {
        code = CLUSTER_FAILED;
    } else if (a->json) {
        char *text = json_dumps(r, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        if (text)
            puts(text);
        free(text);
    } else {
        char where[512];
        cluster_where(conn, where, sizeof(where));
        printf("cluster: users limited or exempt on any node, from %s\n\n", where);
        const json_t *users = json_object_get(r, "users");
        print_table(users, cluster_columns, COUNT(cluster_columns));
    }
    json_decref(r);
    PQfinish(conn);
    policy_free(&p);
    return code;
}

/* Nor is cluster: it speaks to the cluster's database itself. */
static int cluster_main(int argc, char **argv, struct args *a)
{
    int code;
    if (a->all || a->reason || a->duration || a->remove || a->dump || a->events.user ||
        a->events.since || a->events.kind_count || a->events.follow || a->report.until ||
        a->report.format || a->report.table || a->current || a->trace || a->json || a->cluster)
        code = usage_error("cluster init takes --config and --grant");
    else if (a->socket)
        code = usage_error("cluster init reads [cluster] database of the config: give --config "
                           "FILE, not --socket");
    else {
        struct cluster_args c = {.config = a->config, .grant = a->grant};
        code = cluster_command(argc, argv, &c);
    }
    free(a->events.kinds);
    return code;
}

/* Nor is simulate: the trace is replayed here, offline. */
static int simulate_main(int argc, char **argv, struct args *a)
{
    int code;
    if (a->all || a->reason || a->duration || a->remove || a->dump || a->events.user ||
        a->events.kind_count || a->events.follow || a->report.format || a->report.table ||
        a->grant || a->cluster)
        code = usage_error("simulate takes --config, --current, --trace, --since, --until and "
                           "--json");
    else if (a->socket)
        code = usage_error("simulate replays the trace without the daemon: no --socket");
    else {
        struct simulate_args s = {
            .candidate = a->config, .current = a->current, .trace = a->trace,
            .since = a->events.since, .until = a->report.until, .json = a->json,
        };
        code = simulate_command(argc, argv, &s);
    }
    free(a->events.kinds);
    return code;
}

int main(int argc, char **argv)
{
    struct args a = {0};
    if (parse_options(argc, argv, &a) < 0) {
        free(a.events.kinds);
        return EXIT_USAGE;
    }
    if (optind < argc && strcmp(argv[optind], "check-config") == 0) {
        free(a.events.kinds);
        return check_config(argc - optind, argv + optind, &a);
    }
    if (optind < argc && strcmp(argv[optind], "events") == 0)
        return events_main(argc - optind - 1, argv + optind + 1, &a);
    if (optind < argc && strcmp(argv[optind], "report") == 0)
        return report_main(argc - optind - 1, argv + optind + 1, &a);
    if (optind < argc && strcmp(argv[optind], "simulate") == 0)
        return simulate_main(argc - optind - 1, argv + optind + 1, &a);
    if (optind < argc && strcmp(argv[optind], "cluster") == 0)
        return cluster_main(argc - optind - 1, argv + optind + 1, &a);
    if (optind < argc && strcmp(argv[optind], "status") == 0 && a.cluster)
        return status_cluster(argc - optind, &a);
    if (a.cluster) {
        free(a.events.kinds);
        return usage_error("--cluster is for status, events and report");
    }
    if (a.grant) {
        free(a.events.kinds);
        return usage_error("--grant is for cluster init");
    }
    if (a.current || a.trace) {
        free(a.events.kinds);
        return usage_error("--current and --trace are for simulate");
    }
    struct control_request req;
    int built = build_request(argc - optind, argv + optind, &a, &req);
    free(a.events.kinds);
    if (built != EXIT_OK)
        return EXIT_USAGE;
    char *path;
    if (socket_path(&a, &path) < 0)
        return EXIT_USAGE;
    int code = EXIT_OK;
    struct control_error err;
    json_t *r = ask(path, &req, &code, &err);
    free(path);
    if (!r)
        return code;
    if (json_is_false(json_object_get(r, "ok"))) {
        print_config_errors(r, &a);
        char shown[4 * sizeof(err.message)];
        utf8_escape(err.message, strlen(err.message), shown, sizeof(shown));
        fprintf(stderr, "loginguardctl: %s: %s\n", control_code_name(err.code), shown);
        code = EXIT_REFUSED;
    } else if (a.json) {
        char *text = json_dumps(r, JSON_INDENT(2) | JSON_ENSURE_ASCII);
        if (text)
            puts(text);
        free(text);
    } else {
        print_reply(&req, r);
    }
    json_decref(r);
    return code;
}
