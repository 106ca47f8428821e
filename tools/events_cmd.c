#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster_db.h"
#include "ctl_config.h"
#include "event_files.h"
#include "event_filter.h"
#include "event_follow.h"
#include "event_row.h"
#include "events_cmd.h"
#include "units.h"
#include "utf8.h"
#include "util.h"


/* loginguardctl(1)'s exit statuses that events uses. */
enum { EV_OK = 0, EV_USAGE = 2, EV_UNREADABLE = 4 };

struct reader {
    const struct event_filter *filter;
    bool json;
    bool headed;         /* the table's heading is out */
    const char *node;    /* --cluster: the node that logged the line */
    uint64_t malformed;  /* not an event, or cut short */
    uint64_t reported;   /* malformed + oversized already said */
    struct strbuf out;
};

/* events --cluster: the node's name before each row, escaped as the
 * row's own text is. */
#define NODE_WIDTH 16

static void add_node(struct strbuf *out, const char *node)
{
    size_t len = strlen(node);
    char *shown = xmalloc(4 * len + 1);
    utf8_escape(node, len, shown, 4 * len + 1);
    strbuf_addf(out, "%-*s  ", NODE_WIDTH, shown);
    free(shown);
}

static void on_line(const char *line, size_t len, void *arg)
{
    struct reader *r = arg;
    if (strspn(line, " \t\r") >= len)
        return; /* the empty line the daemon leaves after a piece a full disk cut */
    uint64_t time;
    json_t *e = event_parse_line(line, len, &time);
    if (!e) {
        r->malformed++;
        return;
    }
    if (!event_filter_match(r->filter, e, time)) {
        json_decref(e);
        return;
    }
    if (r->json && r->node) {
        json_object_set_new(e, "node", json_string(r->node));
        char *text = json_dumps(e, JSON_COMPACT | JSON_ENSURE_ASCII);
        strbuf_adds(&r->out, text ? text : "{}");
        strbuf_addc(&r->out, '\n');
        free(text);
    } else if (r->json) {
        strbuf_add(&r->out, line, len); /* as the daemon wrote it */
        strbuf_addc(&r->out, '\n');
    } else {
        if (!r->headed && r->node)
            strbuf_addf(&r->out, "%-*s  ", NODE_WIDTH, "NODE");
        if (!r->headed)
            event_row_heading(&r->out);
        r->headed = true;
        if (r->node)
            add_node(&r->out, r->node);
        event_row(e, time, &r->out);
    }
    json_decref(e);
}

static void flush(struct reader *r)
{
    if (r->out.len)
        fwrite(r->out.s, 1, r->out.len, stdout);
    r->out.len = 0;
    fflush(stdout);
}

static void report_skipped(struct reader *r, const char *path, uint64_t oversized)
{
    if (r->malformed + oversized == r->reported)
        return;
    r->reported = r->malformed + oversized;
    fprintf(stderr, "loginguardctl: %s: skipped", path);
    if (r->malformed)
        fprintf(stderr, " %llu line(s) that are not events (malformed or cut short)%s",
                (unsigned long long)r->malformed, oversized ? " and" : "");
    if (oversized)
        fprintf(stderr, " %llu line(s) longer than %d KiB", (unsigned long long)oversized,
                EVENT_LINE_MAX / 1024);
    fputs("\n", stderr);
}

static int usage_error(const char *what)
{
    fprintf(stderr, "loginguardctl: %s\n", what);
    return EV_USAGE;
}

/* What it takes to read path, for the message when it cannot be read. */
static int cannot_read(const char *path, int error)
{
    fprintf(stderr, "loginguardctl: cannot read the event log %s: %s", path, strerror(error));
    struct stat st;
    if (error == EACCES && stat(path, &st) == 0) {
        struct passwd *pw = getpwuid(st.st_uid);
        struct group *gr = getgrgid(st.st_gid);
        char group[64];
        snprintf(group, sizeof(group), "%s", gr ? gr->gr_name : "?");
        fprintf(stderr, "; it is %s:%s mode %04o, so reading it needs root%s%s%s "
                "(`loginguardctl me` shows your own standing without it)",
                pw ? pw->pw_name : "?", group, (unsigned)(st.st_mode & 07777),
                st.st_mode & S_IRGRP ? " or membership of the group " : "",
                st.st_mode & S_IRGRP ? group : "", "");
    } else if (error == ENOENT) {
        fputs(" (has loginguardd run with this configuration? event_log in [daemon] says "
              "where it writes)", stderr);
    }
    fputs("\n", stderr);
    return EV_UNREADABLE;
}

static int log_path(const struct events_args *a, char **path)
{
    struct policy p;
    if (ctl_load_policy(a->config, "the event log's path", NULL, &p) < 0)
        return -1;
    *path = xstrdup(p.event_log);
    policy_free(&p);
    return 0;
}

/* The filter the options ask for: EV_OK, EV_USAGE after saying why, or
 * -1 when --kind help listed the kinds (nothing more to do). */
static int make_filter(const struct events_args *a, struct event_filter *f)
{
    char why[2048];
    for (size_t i = 0; i < a->kind_count; i++) {
        if (strcmp(a->kinds[i], "help") == 0) {
            for (size_t k = 0; k < event_kind_count; k++)
                puts(event_kind_names[k]);
            return -1;
        }
        if (event_filter_add_kinds(f, a->kinds[i], why, sizeof(why)) < 0)
            return usage_error(why);
    }
    if (a->since && event_since_parse(a->since, now_realtime_usec(), &f->since, why,
                                      sizeof(why)) < 0)
        return usage_error(why);
    if (a->user) {
        char *end;
        errno = 0;
        unsigned long uid = strtoul(a->user, &end, 10);
        struct passwd *pw = getpwnam(a->user);
        if (a->user[0] >= '0' && a->user[0] <= '9' && !*end && !errno && uid < (uid_t)-1)
            event_filter_user(f, NULL, true, (uid_t)uid);
        else if (pw)
            event_filter_user(f, a->user, true, pw->pw_uid);
        else
            event_filter_user(f, a->user, false, 0); /* a user since removed */
    }
    return EV_OK;
}

/* The rotated copies (--since) and, without --follow, the log itself. */
static int read_history(const char *path, bool current, struct reader *r)
{
    struct event_files files;
    event_files_list(path, r->filter->since ? r->filter->since : UINT64_MAX, &files);
    int code = EV_OK;
    size_t last = current ? files.count : files.count - 1;
    for (size_t i = 0; i < last && code == EV_OK; i++) {
        struct event_lines lines = {0};
        bool is_log = i + 1 == files.count;
        if (event_file_read(files.paths[i], &lines, on_line, r) < 0) {
            if (errno == EIO)
                fprintf(stderr, "loginguardctl: %s is cut short or damaged; the events "
                        "before the damage are shown\n", files.paths[i]);
            else if (!(errno == ENOENT && !is_log)) /* a copy rotated away meanwhile */
                code = cannot_read(files.paths[i], errno);
        }
        /* A rotated copy's last line is never ended; the log's may be
         * being written. */
        if (!is_log)
            r->malformed += event_lines_drop(&lines);
        flush(r);
        report_skipped(r, files.paths[i], lines.oversized);
        r->reported = 0;
        r->malformed = 0;
        event_lines_free(&lines);
    }
    event_files_free(&files);
    return code;
}

static int follow(const char *path, struct reader *r)
{
    struct event_follow f;
    int code = EV_OK;
    bool from_start = r->filter->since != 0;
    /* The host's /proc, for this process's own descriptors. */
    if (event_follow_open(&f, "/proc", path, from_start, on_line, r) < 0) {
        code = cannot_read(path, errno);
    } else {
        flush(r);
        while (event_follow_step(&f, -1) >= 0) {
            r->malformed += f.dropped;
            f.dropped = 0;
            flush(r);
            report_skipped(r, path, event_follow_oversized(&f));
        }
        code = cannot_read(f.path, errno);
    }
    event_follow_close(&f);
    return code;
}

static void on_cluster_event(const char *node, const char *line, size_t len, void *arg)
{
    struct reader *r = arg;
    r->node = node;
    on_line(line, len, r);
    r->node = NULL;
    if (r->out.len >= 65536)
        flush(r);
}

/* --cluster: the events of every node, from the cluster's database,
 * through the same filter and rows as the log's. */
static int read_cluster(const struct events_args *a, const struct event_filter *filter)
{
    struct policy p;
    PGconn *conn;
    int code = cluster_open(a->config, &p, &conn);
    if (code != CLUSTER_OK)
        return code;
    struct reader r = {.filter = filter, .json = a->json};
    code = cluster_each_event(conn, filter->since, on_cluster_event, &r);
    flush(&r);
    if (r.malformed)
        fprintf(stderr, "loginguardctl: skipped %llu event(s) of loginguard.events that are "
                "not events (no \"event\" or \"time\")\n", (unsigned long long)r.malformed);
    strbuf_free(&r.out);
    PQfinish(conn);
    policy_free(&p);
    return code;
}

int events_command(int argc, char **argv, const struct events_args *a)
{
    (void)argv;
    if (argc > 0)
        return usage_error("events takes no arguments (--user NAME picks a user)");
    if (a->cluster && a->follow)
        return usage_error("events --cluster shows what the cluster's database holds: "
                           "--follow is for this node's log");
    struct event_filter filter = {0};
    int code = make_filter(a, &filter);
    if (code < 0) {
        event_filter_free(&filter);
        return EV_OK;
    }
    char *path = NULL;
    if (code == EV_OK && !a->cluster && log_path(a, &path) < 0)
        code = EV_USAGE;
    if (code == EV_OK && a->cluster) {
        code = read_cluster(a, &filter);
    } else if (code == EV_OK) {
        struct reader r = {.filter = &filter, .json = a->json};
        if (a->since || !a->follow)
            code = read_history(path, !a->follow, &r);
        if (code == EV_OK && a->follow)
            code = follow(path, &r);
        flush(&r);
        strbuf_free(&r.out);
    }
    free(path);
    event_filter_free(&filter);
    return code;
}

int events_cannot_read(const char *path, int error)
{
    return cannot_read(path, error);
}
