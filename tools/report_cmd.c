#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_db.h"
#include "ctl_config.h"
#include "day_chart.h"
#include "event_files.h"
#include "event_filter.h"
#include "events_cmd.h"
#include "report.h"
#include "report_cmd.h"
#include "report_format.h"
#include "units.h"
#include "usage_chart.h"
#include "util.h"

/* loginguardctl(1)'s exit statuses that report uses. */
enum { RP_OK = 0, RP_FAILED = 1, RP_USAGE = 2 };

/* Users with a chart of their own in the HTML: the first of the table. */
#define CHART_USERS 8

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_HTML };

struct reading {
    struct report *report;
    uint64_t malformed;
};

static void on_line(const char *line, size_t len, void *arg)
{
    struct reading *rd = arg;
    if (strspn(line, " \t\r") >= len)
        return; /* the empty line the daemon leaves after a piece a full disk cut */
    uint64_t time;
    json_t *e = event_parse_line(line, len, &time);
    if (!e) {
        rd->malformed++;
        return;
    }
    report_add(rd->report, e, time);
    json_decref(e);
}

static int usage_error(const char *what)
{
    fprintf(stderr, "loginguardctl: %s\n", what);
    return RP_USAGE;
}

/* Every copy of the log that may hold events of the range, or limits
 * still in force when it begins (a level lasts at most `lookback`),
 * oldest first, into r. */
static int read_log(const char *path, uint64_t lookback, struct report *r)
{
    struct event_files files;
    event_files_list(path, r->since > lookback ? r->since - lookback : 0, &files);
    int code = RP_OK;
    struct reading rd = {.report = r};
    for (size_t i = 0; i < files.count && code == RP_OK; i++) {
        struct event_lines lines = {0};
        bool is_log = i + 1 == files.count;
        if (event_file_read(files.paths[i], &lines, on_line, &rd) < 0) {
            if (errno == EIO)
                fprintf(stderr, "loginguardctl: %s is cut short or damaged; the events "
                        "before the damage are counted\n", files.paths[i]);
            else if (!(errno == ENOENT && !is_log))
                code = events_cannot_read(files.paths[i], errno);
        }
        rd.malformed += event_lines_drop(&lines);
        if (rd.malformed || lines.oversized)
            fprintf(stderr, "loginguardctl: %s: skipped %llu line(s) that are not events and "
                    "%llu longer than %d KiB\n", files.paths[i],
                    (unsigned long long)rd.malformed, (unsigned long long)lines.oversized,
                    EVENT_LINE_MAX / 1024);
        rd.malformed = 0;
        event_lines_free(&lines);
    }
    event_files_free(&files);
    return code;
}

static void on_cluster_event(const char *node, const char *line, size_t len, void *arg)
{
    (void)node;
    on_line(line, len, arg);
}

/* --cluster: every node's events from the database, oldest first, into r,
 * from as far back as read_log reads. */
static int read_cluster(PGconn *conn, uint64_t lookback, struct report *r)
{
    struct reading rd = {.report = r};
    int code = cluster_each_event(conn, r->since > lookback ? r->since - lookback : 0,
                                  on_cluster_event, &rd);
    if (rd.malformed)
        fprintf(stderr, "loginguardctl: skipped %llu event(s) of loginguard.events that are "
                "not events (no \"event\" or \"time\")\n", (unsigned long long)rd.malformed);
    return code;
}

static void free_charts(struct report_charts *c)
{
    free((void *)c->days.png);
    for (size_t i = 0; i < c->user_count; i++) {
        free((void *)c->users[i].png);
        free((void *)c->users[i].alt);
    }
    free(c->users);
}

static void keep_png(struct report_image *img, struct strbuf *png, int width, int height)
{
    img->len = png->len;
    img->png = (const unsigned char *)strbuf_take(png);
    img->width = width;
    img->height = height;
}

static int draw_with(const struct cairo_lib *lib, const struct report *r, double threshold,
                     struct report_charts *c, char *why, size_t why_len);

/* The HTML's charts, drawn with cairo: 0, or -1 with why. */
static int draw_charts(const struct report *r, double threshold, struct report_charts *c,
                       char *why, size_t why_len)
{
    struct cairo_lib lib;
    if (cairo_lib_load(&lib, why, why_len) < 0)
        return -1;
    int rc = draw_with(&lib, r, threshold, c, why, why_len);
    cairo_lib_done(&lib);
    return rc;
}

static int draw_with(const struct cairo_lib *lib, const struct report *r, double threshold,
                     struct report_charts *c, char *why, size_t why_len)
{
    struct strbuf png = {0};
    if (day_chart_png(lib, r->days, r->day_count, &png, why, why_len) < 0)
        return -1;
    keep_png(&c->days, &png, DAY_CHART_WIDTH, DAY_CHART_HEIGHT);
    c->days.alt = "actions a day, stacked bars";
    c->users = xcalloc(CHART_USERS, sizeof(*c->users));
    for (size_t i = 0; i < r->user_count && c->user_count < CHART_USERS; i++) {
        const struct report_user *u = &r->users[i];
        if (!u->violations && !u->limited_usec)
            continue;
        char *label = report_user_label(u);
        struct usage_chart chart = {
            .title = label, .from = r->since ? r->since : r->first, .until = r->until,
            .points = u->points, .point_count = u->point_count, .spans = u->spans,
            .span_count = u->span_count, .cpu_threshold = threshold,
        };
        int rc = usage_chart_png(lib, &chart, &png, why, why_len);
        struct report_image *img = &c->users[c->user_count++];
        img->alt = xasprintf("%s: CPU and memory at violations, time limited shaded", label);
        free(label);
        if (rc < 0) {
            strbuf_free(&png);
            return -1;
        }
        keep_png(img, &png, USAGE_CHART_WIDTH, USAGE_CHART_HEIGHT);
    }
    return 0;
}

static int parse_format(const char *name, enum format *f)
{
    static const char *const names[] = {"text", "json", "csv", "html"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *f = (enum format)i;
            return 0;
        }
    return -1;
}

static int write_out(const struct report *r, enum format f, int table, double threshold)
{
    struct strbuf out = {0};
    struct report_charts charts = {0};
    char why[512];
    switch (f) {
    case FORMAT_TEXT: report_text(r, &out); break;
    case FORMAT_JSON: report_json(r, &out); break;
    case FORMAT_CSV: report_csv(r, (enum report_table_id)table, &out); break;
    case FORMAT_HTML:
        if (draw_charts(r, threshold, &charts, why, sizeof(why)) < 0) {
            fprintf(stderr, "loginguardctl: %s\n", why);
            free_charts(&charts);
            return RP_FAILED;
        }
        report_html(r, &charts, &out);
        free_charts(&charts);
        break;
    }
    int code = RP_OK;
    if (out.len && fwrite(out.s, 1, out.len, stdout) != out.len)
        code = RP_FAILED;
    if (fflush(stdout) != 0 || code != RP_OK) {
        fprintf(stderr, "loginguardctl: cannot write the report: %s\n", strerror(errno));
        code = RP_FAILED;
    }
    strbuf_free(&out);
    return code;
}

int report_command(int argc, char **argv, const struct report_args *a)
{
    (void)argv;
    if (argc > 0)
        return usage_error("report takes no arguments (--since picks the range)");
    enum format f = FORMAT_TEXT;
    if (a->format && parse_format(a->format, &f) < 0)
        return usage_error("--format is text, json, csv or html");
    int table = REPORT_USERS;
    if (a->table && f != FORMAT_CSV)
        return usage_error("--table is for --format csv (the other formats show every table)");
    if (a->table && (table = report_table_by_name(a->table)) < 0)
        return usage_error("--table is users, programs, rules, days or returns");
    char why[2048];
    uint64_t since, until;
    if (event_range_parse(a->since, a->until, now_realtime_usec(), &since, &until, why,
                          sizeof(why)) < 0)
        return usage_error(why);
    struct policy p;
    PGconn *conn = NULL;
    if (a->cluster) {
        int code = cluster_open(a->config, &p, &conn);
        if (code != CLUSTER_OK)
            return code;
    } else if (ctl_load_policy(a->config, "the event log's path", NULL, &p) < 0) {
        return RP_USAGE;
    }
    struct report r;
    report_init(&r, since, until);
    uint64_t lookback = 0;
    for (size_t i = 0; i < p.level_count; i++)
        if (p.levels[i].duration > lookback)
            lookback = p.levels[i].duration;
    int code = conn ? read_cluster(conn, lookback, &r) : read_log(p.event_log, lookback, &r);
    PQfinish(conn);
    if (code == RP_OK) {
        report_finish(&r);
        code = write_out(&r, f, table, p.violation_cpu);
    }
    report_free(&r);
    policy_free(&p);
    return code;
}
