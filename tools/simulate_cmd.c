#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "configfile.h"
#include "ctl_config.h"
#include "errors.h"
#include "event_filter.h"
#include "simulate.h"
#include "simulate_cmd.h"
#include "strbuf.h"
#include "trace_files.h"
#include "units.h"
#include "utf8.h"
#include "util.h"

/* loginguardctl(1)'s exit statuses that simulate uses. */
enum { SIM_OK = 0, SIM_BAD_CONFIG = 1, SIM_USAGE = 2, SIM_UNREADABLE = 4 };

static int usage_error(const char *what)
{
    fprintf(stderr, "loginguardctl: %s\n", what);
    return SIM_USAGE;
}

/* A configuration and its rules and notices, loaded as the daemon would;
 * its errors (file:line: what) on stderr. */
static int load(const char *path, bool named, const char *role, struct policy *p)
{
    struct errors errs = {0};
    int rc = config_load(path, named, p, &errs);
    if (rc < 0) {
        for (size_t i = 0; i < errs.count; i++)
            fprintf(stderr, "%s\n", errs.messages[i]);
        fprintf(stderr, "loginguardctl: the %s configuration %s has %zu error(s); nothing was "
                "replayed\n", role, path, errs.count);
    }
    errors_free(&errs);
    return rc < 0 ? -1 : 0;
}

static void on_sample(struct trace_decoder *d, struct snapshot *snap, void *arg)
{
    simulation_step(arg, d, snap);
}

/* ------------------------------------------------------------------ */
/* What is shown */

static bool worth_showing(const struct sim_user *u)
{
    for (int k = 0; k < SIM_POLICIES; k++)
        if (u->o[k].violations || u->o[k].stopped || u->o[k].notices)
            return true;
    return false;
}

static int by_weight(const void *a, const void *b)
{
    const struct sim_user *x = *(const struct sim_user *const *)a;
    const struct sim_user *y = *(const struct sim_user *const *)b;
    uint32_t wx = x->o[0].violations + x->o[1].violations + x->o[0].stopped + x->o[1].stopped;
    uint32_t wy = y->o[0].violations + y->o[1].violations + y->o[0].stopped + y->o[1].stopped;
    if (wx != wy)
        return wx > wy ? -1 : 1;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static const char *level_name(const struct policy *p, int level)
{
    return level > 0 && (size_t)level <= p->level_count ? p->levels[level - 1].name : "none";
}

static void add_totals(struct sim_outcome *t, const struct sim_outcome *o)
{
    t->violations += o->violations;
    t->throttled += o->throttled;
    t->restricted += o->restricted;
    t->stopped += o->stopped;
    t->notices += o->notices;
}

/* Text a user chose, made safe to print. */
static char *shown(const char *s, size_t len)
{
    char *out = xmalloc(4 * len + 1);
    utf8_escape(s, len, out, 4 * len + 1);
    return out;
}

static void time_text(uint64_t usec, char *buf, size_t len)
{
    time_t t = (time_t)(usec / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void user_label(const struct sim_user *u, char *buf, size_t len)
{
    if (u->name[0]) {
        char *n = shown(u->name, strnlen(u->name, sizeof(u->name)));
        snprintf(buf, len, "%s", n);
        free(n);
    } else {
        snprintf(buf, len, "uid %u", (unsigned)u->uid);
    }
}

static void pair_count(struct strbuf *b, uint32_t cur, uint32_t cand, int width)
{
    char cell[48];
    if (cur == cand)
        snprintf(cell, sizeof(cell), "%u", cur);
    else
        snprintf(cell, sizeof(cell), "%u -> %u", cur, cand);
    strbuf_addf(b, "  %-*s", width, cell);
}

static void pair_time(struct strbuf *b, uint64_t cur, uint64_t cand)
{
    char x[32], y[32], cell[80];
    format_duration(cur, x, sizeof(x));
    format_duration(cand, y, sizeof(y));
    if (cur == cand)
        snprintf(cell, sizeof(cell), "%s", x);
    else
        snprintf(cell, sizeof(cell), "%s -> %s", x, y);
    strbuf_addf(b, "  %-18s", cell);
}

static void row(struct strbuf *b, const char *label, const struct sim_outcome o[2],
                const char *highest)
{
    strbuf_addf(b, "%-16s", label);
    pair_count(b, o[0].violations, o[1].violations, 12);
    strbuf_addf(b, "  %-24s", highest);
    pair_time(b, o[0].throttled, o[1].throttled);
    pair_time(b, o[0].restricted, o[1].restricted);
    pair_count(b, o[0].stopped, o[1].stopped, 12);
    pair_count(b, o[0].notices, o[1].notices, 0);
    strbuf_adds(b, "\n");
}

/* The processes policy k would stop; only those the other would not
 * when only_k, else all, marking those the other stops too. */
static void stop_lines(struct strbuf *b, const struct sim_user *u, int k, bool only_k,
                       const char *title, bool *titled)
{
    char label[128];
    user_label(u, label, sizeof(label));
    for (size_t i = 0; i < u->o[k].stop_count; i++) {
        const struct sim_stop *x = &u->o[k].stops[i];
        bool both = sim_outcome_stops(&u->o[1 - k], x->pid, x->start_time);
        if (only_k && both)
            continue;
        if (!*titled) {
            strbuf_addf(b, "\n%s\n", title);
            *titled = true;
        }
        char when[40];
        time_text(x->time, when, sizeof(when));
        char *comm = shown(x->comm, strnlen(x->comm, sizeof(x->comm)));
        char *exe = x->exe ? shown(x->exe, strlen(x->exe)) : xstrdup("?");
        char *why = shown(x->why, strlen(x->why));
        strbuf_addf(b, "  %-16s %s  pid %d  %s (%s)  %s %s%s\n", label, when, (int)x->pid,
                    comm, exe, x->kind == DECISION_VIOLATION ? "level" : "rule", why,
                    !only_k && both ? "  (the current policy too)" : "");
        free(comm);
        free(exe);
        free(why);
    }
}

static void text_out(const struct simulation *s, struct sim_user **list, size_t n,
                     const struct trace_read_stats *st, const char *dir, const char *current,
                     const char *candidate, struct strbuf *b)
{
    char from[40] = "-", to[40] = "-";
    if (st->samples) {
        time_text(st->first, from, sizeof(from));
        time_text(st->last, to, sizeof(to));
    }
    strbuf_addf(b, "Replayed %llu samples, %s to %s, from %s (%llu files)\n",
                (unsigned long long)st->samples, from, to, dir, (unsigned long long)st->files);
    if (st->skipped || st->cut || st->oversized)
        strbuf_addf(b, "Skipped %llu lines not understood, %llu cut short by a crash, %llu too "
                    "long\n", (unsigned long long)st->skipped, (unsigned long long)st->cut,
                    (unsigned long long)st->oversized);
    strbuf_addf(b, "current:   %s (%s mode)\ncandidate: %s (%s mode)\n", current,
                mode_name(s->policies[0]->mode), candidate, mode_name(s->policies[1]->mode));
    strbuf_adds(b, "Counted as enforce mode would act; a cell \"A -> B\" is current -> candidate.\n\n");
    strbuf_addf(b, "%-16s  %-12s  %-24s  %-18s  %-18s  %-12s  %s\n", "USER", "VIOLATIONS",
                "HIGHEST LEVEL", "THROTTLED", "RESTRICTED", "STOPPED", "NOTICES");
    struct sim_outcome total[2] = {{0}};
    for (size_t i = 0; i < n; i++) {
        const struct sim_user *u = list[i];
        char label[128], highest[80];
        user_label(u, label, sizeof(label));
        const char *h0 = level_name(s->policies[0], u->o[0].highest);
        const char *h1 = level_name(s->policies[1], u->o[1].highest);
        if (strcmp(h0, h1) == 0)
            snprintf(highest, sizeof(highest), "%s", h0);
        else
            snprintf(highest, sizeof(highest), "%s -> %s", h0, h1);
        row(b, label, u->o, highest);
        add_totals(&total[0], &u->o[0]);
        add_totals(&total[1], &u->o[1]);
    }
    if (!n)
        strbuf_adds(b, "(no user would be acted on under either policy)\n");
    row(b, "TOTAL", total, "");
    bool titled = false;
    for (size_t i = 0; i < n; i++)
        stop_lines(b, list[i], 1, false, "Processes the candidate would stop:", &titled);
    titled = false;
    for (size_t i = 0; i < n; i++)
        stop_lines(b, list[i], 0, true, "Processes only the current policy would stop:",
                   &titled);
}

static json_t *json_bytes(const char *s, size_t len)
{
    char *t = shown(s, len);
    json_t *j = json_string(t);
    free(t);
    return j ? j : json_string("");
}

static json_t *outcome_json(const struct policy *p, const struct sim_outcome *o)
{
    json_t *stops = json_array();
    for (size_t i = 0; i < o->stop_count; i++) {
        const struct sim_stop *x = &o->stops[i];
        json_array_append_new(stops, json_pack("{s:I, s:i, s:I, s:o, s:o, s:s, s:o}",
            "time", (json_int_t)x->time, "pid", (int)x->pid, "start_time",
            (json_int_t)x->start_time, "comm", json_bytes(x->comm, strnlen(x->comm, COMM_LEN)),
            "exe", x->exe ? json_bytes(x->exe, strlen(x->exe)) : json_null(),
            "by", x->kind == DECISION_VIOLATION ? "level" : decision_name(x->kind),
            "why", json_bytes(x->why, strlen(x->why))));
    }
    json_t *seen = json_array();
    for (size_t i = 0; i < o->seen_count; i++)
        json_array_append_new(seen, json_pack("{s:I, s:i, s:s, s:s}", "time",
                                              (json_int_t)o->seen[i].time, "level",
                                              o->seen[i].level, "level_name",
                                              level_name(p, o->seen[i].level), "reason",
                                              o->seen[i].reason ? o->seen[i].reason : ""));
    return json_pack("{s:i, s:o, s:i, s:s, s:f, s:f, s:i, s:i, s:o}", "violations",
                     (int)o->violations, "violation_list", seen,
                     "highest_level", o->highest, "highest_level_name",
                     level_name(p, o->highest), "throttled_seconds", (double)o->throttled / 1e6,
                     "restricted_seconds", (double)o->restricted / 1e6, "stopped",
                     (int)o->stopped, "notices", (int)o->notices, "stopped_processes", stops);
}

static json_t *difference_json(const struct sim_outcome o[2])
{
    return json_pack("{s:i, s:i, s:f, s:f, s:i, s:i}", "violations",
                     (int)o[1].violations - (int)o[0].violations, "highest_level",
                     o[1].highest - o[0].highest, "throttled_seconds",
                     ((double)o[1].throttled - (double)o[0].throttled) / 1e6,
                     "restricted_seconds",
                     ((double)o[1].restricted - (double)o[0].restricted) / 1e6, "stopped",
                     (int)o[1].stopped - (int)o[0].stopped, "notices",
                     (int)o[1].notices - (int)o[0].notices);
}

static void json_out(const struct simulation *s, struct sim_user **list, size_t n,
                     const struct trace_read_stats *st, const char *dir, const char *current,
                     const char *candidate, struct strbuf *b)
{
    json_t *users = json_array();
    struct sim_outcome total[2] = {{0}};
    for (size_t i = 0; i < n; i++) {
        const struct sim_user *u = list[i];
        json_array_append_new(users, json_pack("{s:o, s:i, s:o, s:o, s:o}", "user",
            u->name[0] ? json_bytes(u->name, strnlen(u->name, sizeof(u->name))) : json_null(),
            "uid", (int)u->uid, "current", outcome_json(s->policies[0], &u->o[0]), "candidate",
            outcome_json(s->policies[1], &u->o[1]), "difference", difference_json(u->o)));
        add_totals(&total[0], &u->o[0]);
        add_totals(&total[1], &u->o[1]);
    }
    total[0].highest = total[1].highest = 0;
    json_t *totals = json_pack("{s:o, s:o, s:o}", "current", outcome_json(s->policies[0], &total[0]),
                               "candidate", outcome_json(s->policies[1], &total[1]),
                               "difference", difference_json(total));
    json_t *trace = json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I}", "dir", json_bytes(dir, strlen(dir)), "files",
                              (json_int_t)st->files, "samples", (json_int_t)st->samples,
                              "first", (json_int_t)st->first, "last", (json_int_t)st->last,
                              "skipped_lines", (json_int_t)st->skipped, "cut_lines",
                              (json_int_t)st->cut);
    json_t *top = json_pack("{s:o, s:{s:o, s:s}, s:{s:o, s:s}, s:o, s:o}", "trace", trace,
                            "current_config", "file", json_bytes(current, strlen(current)),
                            "mode", mode_name(s->policies[0]->mode), "candidate_config", "file",
                            json_bytes(candidate, strlen(candidate)), "mode", mode_name(s->policies[1]->mode), "users", users,
                            "totals", totals);
    char *text = json_dumps(top, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    if (text) {
        strbuf_adds(b, text);
        strbuf_adds(b, "\n");
    }
    free(text);
    json_decref(top);
}

/* ------------------------------------------------------------------ */

int simulate_command(int argc, char **argv, const struct simulate_args *a)
{
    (void)argv;
    if (argc > 0)
        return usage_error("simulate takes no arguments (--config names the candidate)");
    if (!a->candidate)
        return usage_error("simulate needs the candidate: --config FILE");
    char why[256];
    uint64_t since, until;
    if (event_range_parse(a->since, a->until, now_realtime_usec(), &since, &until, why,
                          sizeof(why)) < 0)
        return usage_error(why);

    /* The candidate first: its errors are what the admin came for. */
    struct policy candidate, current;
    if (load(a->candidate, true, "candidate", &candidate) < 0)
        return SIM_BAD_CONFIG;
    const char *current_path = a->current ? a->current : CTL_DEFAULT_CONFIG;
    if (load(current_path, a->current != NULL, "current", &current) < 0) {
        policy_free(&candidate);
        return SIM_BAD_CONFIG;
    }
    char *dir = a->trace ? xstrdup(a->trace) : xasprintf("%s/trace", current.state_dir);

    struct simulation sim;
    simulation_init(&sim, &current, &candidate);
    struct trace_read_stats st;
    char err[1024];
    int code = SIM_OK;
    if (trace_read_dir(dir, since, until, on_sample, &sim, &st, err, sizeof(err)) < 0) {
        fprintf(stderr, "loginguardctl: %s\n", err);
        code = SIM_UNREADABLE;
    } else {
        struct sim_user **list = xmalloc((sim.user_count + 1) * sizeof(*list));
        size_t n = 0;
        for (size_t i = 0; i < sim.user_count; i++)
            if (worth_showing(&sim.users[i]))
                list[n++] = &sim.users[i];
        qsort(list, n, sizeof(*list), by_weight);
        struct strbuf out = {0};
        if (a->json)
            json_out(&sim, list, n, &st, dir, current_path, a->candidate, &out);
        else
            text_out(&sim, list, n, &st, dir, current_path, a->candidate, &out);
        if ((out.len && fwrite(out.s, 1, out.len, stdout) != out.len) || fflush(stdout) != 0) {
            fprintf(stderr, "loginguardctl: cannot write the comparison: %s\n", strerror(errno));
            code = SIM_BAD_CONFIG;
        }
        strbuf_free(&out);
        free(list);
    }
    simulation_free(&sim);
    free(dir);
    policy_free(&candidate);
    policy_free(&current);
    return code;
}
