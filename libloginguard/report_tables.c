#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_tables.h"
#include "units.h"
#include "util.h"

const char *const report_table_names[REPORT_TABLES] = {"users", "programs", "rules", "days",
                                                       "returns"};

static const struct report_column user_columns[] = {
    {"USER", "user", false},          {"UID", "uid", true},
    {"VIOLATIONS", "violations", true}, {"TIME LIMITED", "limited_s", true},
    {"WOULD LIMIT", "would_limit_s", true},
    {"TOP LEVEL", "top_level", true}, {"PROCESSES", "processes", true},
    {"NOTICES", "notices", true},     {"RETURNS", "returns", true},
};
static const struct report_column program_columns[] = {
    {"PROGRAM", "program", false}, {"STOPPED", "stopped", true},
    {"WOULD STOP", "would_stop", true}, {"BUSIEST", "busiest", true},
    {"USERS", "users", true},      {"RULE", "rule", false},      {"EXE", "exe", false},
};
static const struct report_column rule_columns[] = {
    {"RULE", "rule", false}, {"CLASS", "class", false}, {"HITS", "hits", true},
    {"USERS", "users", true},
};
static const struct report_column day_columns[] = {
    {"DAY", "day", false},           {"WARN", "warn", true},
    {"LIMIT", "limit", true},        {"STOP", "stop", true},
    {"RELEASE", "release", true},    {"LOWER", "lower", true},
    {"WOULD WARN", "would_warn", true}, {"WOULD LIMIT", "would_limit", true},
    {"WOULD STOP", "would_stop", true},
    {"SENT", "sent", true},          {"SKIPPED", "skipped", true},
    {"FAILED", "failed", true},      {"RATE LIMITED", "rate_limited", true},
};
static const struct report_column return_columns[] = {
    {"USER", "user", false}, {"UID", "uid", true}, {"RETURNS", "returns", true},
    {"LAST RETURN", "last_return", false},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int report_table_by_name(const char *name)
{
    for (int i = 0; i < REPORT_TABLES; i++)
        if (strcmp(report_table_names[i], name) == 0)
            return i;
    return -1;
}

void report_time(uint64_t usec, bool raw, char *buf, size_t len)
{
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    if (raw) {
        gmtime_r(&t, &tm);
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    } else {
        localtime_r(&t, &tm);
        strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
    }
}

static void start(struct report_table *t, enum report_table_id id, const char *title,
                  const struct report_column *columns, size_t cols, size_t rows)
{
    t->name = report_table_names[id];
    t->title = title;
    t->columns = columns;
    t->cols = cols;
    t->rows = rows;
    t->cells = xcalloc(rows * cols + 1, sizeof(*t->cells));
}

static char *number(uint64_t n)
{
    return xasprintf("%llu", (unsigned long long)n);
}

/* What is not known: "-" for people, empty for programs. */
static char *or_none(const char *s, bool raw)
{
    return xstrdup(s && *s ? s : raw ? "" : "-");
}

static char *duration(uint64_t usec, bool raw)
{
    if (raw)
        return number((usec + USEC_PER_SEC / 2) / USEC_PER_SEC);
    char buf[64];
    format_duration(usec, buf, sizeof(buf));
    return xstrdup(usec ? buf : "-");
}

static void users(const struct report *r, bool raw, struct report_table *t)
{
    start(t, REPORT_USERS, "Users by violations", user_columns, COUNT(user_columns),
          r->user_count);
    for (size_t i = 0; i < r->user_count; i++) {
        const struct report_user *u = &r->users[i];
        char **c = t->cells + i * t->cols;
        c[0] = report_user_label(u);
        c[1] = number(u->uid);
        c[2] = number(u->violations);
        c[3] = duration(u->limited_usec, raw);
        c[4] = duration(u->would_limit_usec, raw);
        c[5] = number((uint64_t)u->top_level);
        c[6] = number(u->processes);
        c[7] = number(u->notices);
        c[8] = number(u->returns);
    }
}

static void programs(const struct report *r, bool raw, struct report_table *t)
{
    start(t, REPORT_PROGRAMS, "Programs stopped most", program_columns,
          COUNT(program_columns), r->program_count);
    for (size_t i = 0; i < r->program_count; i++) {
        const struct report_program *p = &r->programs[i];
        char **c = t->cells + i * t->cols;
        c[0] = xstrdup(p->comm);
        c[1] = number(p->stopped);
        c[2] = number(p->would_stop);
        c[3] = number(p->busiest);
        c[4] = number(p->uid_count);
        c[5] = or_none(p->rule, raw);
        c[6] = or_none(p->exe, raw);
    }
}

static void rules(const struct report *r, struct report_table *t)
{
    start(t, REPORT_RULES, "Rule hits", rule_columns, COUNT(rule_columns), r->rule_count);
    for (size_t i = 0; i < r->rule_count; i++) {
        const struct report_rule *rule = &r->rules[i];
        char **c = t->cells + i * t->cols;
        c[0] = xstrdup(rule->name);
        c[1] = xstrdup(rule->class_name);
        c[2] = number(rule->hits);
        c[3] = number(rule->uid_count);
    }
}

static void days(const struct report *r, struct report_table *t)
{
    start(t, REPORT_DAYS, "Actions and notices a day", day_columns, COUNT(day_columns),
          r->day_count);
    for (size_t i = 0; i < r->day_count; i++) {
        const struct report_day *d = &r->days[i];
        char **c = t->cells + i * t->cols;
        c[0] = xstrdup(d->date);
        for (int a = 0; a < REPORT_ACTIONS; a++)
            c[1 + a] = number(d->actions[a]);
        for (int a = 0; a < REPORT_WOULD_ACTIONS; a++)
            c[1 + REPORT_ACTIONS + a] = number(d->would[a]);
        for (int o = 0; o < REPORT_OUTCOMES; o++)
            c[1 + REPORT_ACTIONS + REPORT_WOULD_ACTIONS + o] = number(d->notices[o]);
    }
}

static void returns(const struct report *r, bool raw, struct report_table *t)
{
    const struct report_user **back;
    size_t n = report_returning(r, &back);
    start(t, REPORT_RETURNS, "Users who came back after their level ended", return_columns,
          COUNT(return_columns), n);
    for (size_t i = 0; i < n; i++) {
        char **c = t->cells + i * t->cols;
        char when[64];
        report_time(back[i]->last_return, raw, when, sizeof(when));
        c[0] = report_user_label(back[i]);
        c[1] = number(back[i]->uid);
        c[2] = number(back[i]->returns);
        c[3] = xstrdup(when);
    }
    free(back);
}

void report_tables(const struct report *r, bool raw, struct report_table t[REPORT_TABLES])
{
    users(r, raw, &t[REPORT_USERS]);
    programs(r, raw, &t[REPORT_PROGRAMS]);
    rules(r, &t[REPORT_RULES]);
    days(r, &t[REPORT_DAYS]);
    returns(r, raw, &t[REPORT_RETURNS]);
}

void report_tables_free(struct report_table t[REPORT_TABLES])
{
    for (int i = 0; i < REPORT_TABLES; i++) {
        for (size_t c = 0; c < t[i].rows * t[i].cols; c++)
            free(t[i].cells[c]);
        free(t[i].cells);
        t[i].cells = NULL;
    }
}
