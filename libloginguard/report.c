#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_filter.h"
#include "report.h"
#include "units.h"
#include "util.h"

const char *const report_action_names[REPORT_ACTIONS] = {"warn", "limit", "stop", "release",
                                                         "lower"};
const char *const report_outcome_names[REPORT_OUTCOMES] = {"sent", "skipped", "failed",
                                                           "rate_limited"};

void report_init(struct report *r, uint64_t since, uint64_t until)
{
    memset(r, 0, sizeof(*r));
    r->since = since;
    r->until = until;
}

static const char *text(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static int name_index(const char *const *names, size_t count, const char *name)
{
    for (size_t i = 0; name && i < count; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

static bool in_range(const struct report *r, uint64_t time)
{
    return time >= r->since && time < r->until;
}

static struct report_user *user_of(struct report *r, const json_t *e)
{
    const json_t *uid_j = json_object_get(e, "uid");
    if (!json_is_integer(uid_j) || json_integer_value(uid_j) < 0 ||
        json_integer_value(uid_j) >= (json_int_t)(uid_t)-1)
        return NULL;
    uid_t uid = (uid_t)json_integer_value(uid_j);
    size_t at = uid_position(r->users, r->user_count, sizeof(*r->users),
                             offsetof(struct report_user, uid), uid);
    if (at == r->user_count || r->users[at].uid != uid) {
        r->users = insert_at(r->users, &r->user_count, &r->user_cap, sizeof(*r->users), at);
        r->users[at].uid = uid;
    }
    struct report_user *u = &r->users[at];
    if (text(e, "user"))
        set_string(&u->name, text(e, "user"));
    return u;
}

static void add_uid(uid_t **uids, size_t *count, uid_t uid)
{
    for (size_t i = 0; i < *count; i++)
        if ((*uids)[i] == uid)
            return;
    *uids = xreallocarray(*uids, *count + 1, sizeof(**uids));
    (*uids)[(*count)++] = uid;
}

/* ------------------------------------------------------------------ */
/* Time limited */

/* The span [from, end) of a level's limits, as much of it as falls in
 * the range. */
static void add_span(struct report *r, struct report_user *u, uint64_t from, uint64_t end,
                     int level)
{
    if (from < r->since)
        from = r->since;
    if (end > r->until)
        end = r->until;
    if (end <= from)
        return;
    u->spans = grow_array(u->spans, u->span_count, &u->span_cap, sizeof(*u->spans));
    u->spans[u->span_count++] = (struct report_span){.from = from, .until = end, .level = level};
    u->limited_usec += end - from;
}

/* Whether an event's action was carried out: observe mode's decisions
 * (applied false) are only what would have been done.  A log from
 * before the field says so by its mode. */
static bool applied(const json_t *e)
{
    const json_t *a = json_object_get(e, "applied");
    if (json_is_boolean(a))
        return json_is_true(a);
    const char *mode = text(e, "mode");
    return !mode || strcmp(mode, "observe") != 0;
}

/* The limits in force end at time (or at their own end, if sooner).
 * Observed limits held nobody: they count as time they would have held. */
static void close_limits(struct report *r, struct report_user *u, uint64_t time)
{
    if (!u->limit_from)
        return;
    uint64_t end = u->limit_until && u->limit_until < time ? u->limit_until : time;
    if (u->limit_applied) {
        add_span(r, u, u->limit_from, end, u->limit_level);
    } else {
        uint64_t from = u->limit_from > r->since ? u->limit_from : r->since;
        end = end < r->until ? end : r->until;
        u->would_limit_usec += end > from ? end - from : 0;
    }
    u->limit_from = u->limit_until = 0;
}

/* The limits end for good: expired, decayed, forgiven. */
static void end_limits(struct report *r, struct report_user *u, uint64_t time)
{
    close_limits(r, u, time);
    u->paused_until = 0;
}

/* The daemon stopped, or lifted the level's limits for an exemption:
 * they end now, and come back with a limits_set at their level before
 * their end. */
static void pause_limits(struct report *r, struct report_user *u, uint64_t time)
{
    if (!u->limit_from)
        return;
    if (u->limit_applied && u->limit_until > time) {
        u->paused_until = u->limit_until;
        u->paused_level = u->limit_level;
    }
    close_limits(r, u, time);
}

/* limits_set: the level's limits put back (a restart, an exemption's
 * end), or the share alone (the level's limits lifted). */
static void limits_set(struct report *r, struct report_user *u, const json_t *e, uint64_t time)
{
    int level = (int)json_integer_value(json_object_get(e, "level"));
    if (level == 0 && u->limit_from && u->limit_applied) {
        pause_limits(r, u, time);
    } else if (level > 0 && !u->limit_from && u->paused_until > time &&
               level == u->paused_level) {
        u->limit_from = time;
        u->limit_until = u->paused_until;
        u->limit_level = level;
        u->limit_applied = true;
        u->paused_until = 0;
    }
}

static bool level_limits(const json_t *level)
{
    return json_number_value(json_object_get(level, "cpu_cores")) > 0 ||
           json_integer_value(json_object_get(level, "memory_bytes")) > 0;
}

/* A violation: the new level's limits (if it has any) hold from now to
 * its "until"; a renewal at the top level moves that end. */
static void violation_limits(struct report *r, struct report_user *u, const json_t *e,
                             uint64_t time)
{
    int level = (int)json_integer_value(json_object_get(e, "level_after"));
    if (!level_limits(json_object_get(e, "level"))) {
        end_limits(r, u, time);
        return;
    }
    uint64_t until = 0;
    if (!text(e, "until") || event_time_parse(text(e, "until"), &until) < 0 || until < time)
        until = time; /* no end given: nothing to count */
    bool done = applied(e);
    if (u->limit_from && (u->limit_level != level || u->limit_applied != done)) {
        close_limits(r, u, time); /* a new level: a new span */
    }
    if (!u->limit_from)
        u->limit_from = time;
    u->limit_until = until;
    u->limit_level = level;
    u->limit_applied = done;
    u->paused_until = 0;
}

/* ------------------------------------------------------------------ */
/* Programs, rules, days */

static struct report_program *program_of(struct report *r, const char *comm)
{
    for (size_t i = 0; i < r->program_count; i++)
        if (strcmp(r->programs[i].comm, comm) == 0)
            return &r->programs[i];
    r->programs = grow_array(r->programs, r->program_count, &r->program_cap,
                             sizeof(*r->programs));
    struct report_program *p = &r->programs[r->program_count++];
    memset(p, 0, sizeof(*p));
    p->comm = xstrdup(comm);
    return p;
}

/* The event's first process, as a program: NULL when it names none. */
static struct report_program *first_program(struct report *r, const json_t *e, uid_t uid)
{
    const json_t *proc = json_array_get(json_object_get(e, "processes"), 0);
    const char *comm = text(proc, "comm");
    if (!comm)
        return NULL;
    struct report_program *p = program_of(r, comm);
    if (text(proc, "exe"))
        set_string(&p->exe, text(proc, "exe"));
    if (text(proc, "rule"))
        set_string(&p->rule, text(proc, "rule"));
    add_uid(&p->uids, &p->uid_count, uid);
    return p;
}

static void rule_hit(struct report *r, const char *name, const char *class_name, uid_t uid)
{
    struct report_rule *rule = NULL;
    for (size_t i = 0; i < r->rule_count && !rule; i++)
        if (strcmp(r->rules[i].name, name) == 0 && strcmp(r->rules[i].class_name, class_name) == 0)
            rule = &r->rules[i];
    if (!rule) {
        r->rules = grow_array(r->rules, r->rule_count, &r->rule_cap, sizeof(*r->rules));
        rule = &r->rules[r->rule_count++];
        memset(rule, 0, sizeof(*rule));
        rule->name = xstrdup(name);
        rule->class_name = class_name;
    }
    rule->hits++;
    add_uid(&rule->uids, &rule->uid_count, uid);
}

static void local_date(uint64_t usec, char date[11])
{
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    localtime_r(&t, &tm);
    char buf[64];
    snprintf(buf, sizeof(buf), "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    copy_string(date, 11, buf);
}

static struct report_day *day_of(struct report *r, uint64_t time)
{
    char date[11];
    local_date(time, date);
    for (size_t i = r->day_count; i > 0; i--)
        if (strcmp(r->days[i - 1].date, date) == 0)
            return &r->days[i - 1];
    r->days = grow_array(r->days, r->day_count, &r->day_cap, sizeof(*r->days));
    struct report_day *d = &r->days[r->day_count++];
    memset(d, 0, sizeof(*d));
    memcpy(d->date, date, sizeof(d->date));
    return d;
}

static void count_action(struct report *r, const json_t *e, uint64_t time)
{
    int a = name_index(report_action_names, REPORT_ACTIONS, text(e, "action"));
    if (a < 0)
        return;
    if (applied(e))
        day_of(r, time)->actions[a]++;
    else if (a < REPORT_WOULD_ACTIONS)
        day_of(r, time)->would[a]++;
}

/* ------------------------------------------------------------------ */
/* Events */

static void add_point(struct report_user *u, const struct report_point *p)
{
    u->points = grow_array(u->points, u->point_count, &u->point_cap, sizeof(*u->points));
    size_t at = u->point_count++;
    while (at > 0 && u->points[at - 1].time > p->time) {
        u->points[at] = u->points[at - 1];
        at--;
    }
    u->points[at] = *p;
}

static void violation(struct report *r, struct report_user *u, const json_t *e, uint64_t time)
{
    if (in_range(r, time)) {
        u->violations++;
        int level = (int)json_integer_value(json_object_get(e, "level_after"));
        if (level > u->top_level)
            u->top_level = level;
        /* Came back: the user's previous level had ended (expired or
         * forgiven) before this violation. */
        if (u->released) {
            u->returns++;
            u->last_return = time;
        }
        count_action(r, e, time);
        struct report_program *p = first_program(r, e, u->uid);
        if (p)
            p->busiest++;
        const json_t *usage = json_object_get(e, "usage");
        struct report_point pt = {
            .time = time,
            .cpu_cores = json_number_value(json_object_get(usage, "cpu_cores")),
            .memory_bytes = (uint64_t)json_integer_value(json_object_get(usage, "memory_bytes")),
        };
        add_point(u, &pt);
    }
    u->released = false;
    violation_limits(r, u, e, time);
}

static void process_event(struct report *r, struct report_user *u, const json_t *e,
                          uint64_t time, const char *class_name)
{
    if (!in_range(r, time))
        return;
    u->processes++;
    count_action(r, e, time);
    struct report_program *p = first_program(r, e, u->uid);
    if (p && applied(e))
        p->stopped++;
    else if (p)
        p->would_stop++;
    if (class_name && text(e, "reason")) /* a rule's name */
        rule_hit(r, text(e, "reason"), class_name, u->uid);
}

static void notice(struct report *r, struct report_user *u, const json_t *e, uint64_t time)
{
    if (!in_range(r, time))
        return;
    int o = name_index(report_outcome_names, REPORT_OUTCOMES, text(e, "outcome"));
    if (o >= 0)
        day_of(r, time)->notices[o]++;
    if (o == REPORT_SENT)
        u->notices++;
}

void report_add(struct report *r, const json_t *e, uint64_t time)
{
    if (time >= r->until)
        return;
    if (in_range(r, time)) {
        r->events++;
        if (!r->first)
            r->first = time;
        r->last = time;
    }
    const char *name = text(e, "event");
    if (name && strcmp(name, "daemon_stopped") == 0) {
        for (size_t i = 0; i < r->user_count; i++)
            pause_limits(r, &r->users[i], time);
        return;
    }
    static const char *const kinds[] = {"violation",       "level_expired", "level_decayed",
                                        "user_forgiven",   "forbidden_process",
                                        "compute_process", "notice",        "limits_set",
                                        "memory_over_level"};
    int kind = name_index(kinds, sizeof(kinds) / sizeof(kinds[0]), name);
    struct report_user *u = kind >= 0 ? user_of(r, e) : NULL;
    if (!u)
        return;
    switch (kind) {
    case 0:
        violation(r, u, e, time);
        break;
    case 1: /* level_expired: the limits end; the level stays, decaying */
    case 2: /* level_decayed */
        if (in_range(r, time))
            count_action(r, e, time);
        end_limits(r, u, time);
        u->released = true;
        break;
    case 3: /* user_forgiven */
        end_limits(r, u, time);
        if (json_integer_value(json_object_get(e, "level_before")) > 0)
            u->released = true;
        break;
    case 4:
        process_event(r, u, e, time, "forbidden");
        break;
    case 5:
        process_event(r, u, e, time, "compute");
        break;
    case 6:
        notice(r, u, e, time);
        break;
    case 7:
        limits_set(r, u, e, time);
        break;
    default: /* memory_over_level: its largest process stopped, by no rule */
        process_event(r, u, e, time, NULL);
        break;
    }
}

void report_add_point(struct report *r, uid_t uid, const struct report_point *p)
{
    if (!in_range(r, p->time))
        return;
    size_t at = uid_position(r->users, r->user_count, sizeof(*r->users),
                             offsetof(struct report_user, uid), uid);
    if (at < r->user_count && r->users[at].uid == uid)
        add_point(&r->users[at], p);
}

/* ------------------------------------------------------------------ */
/* The end */

static bool user_shown(const struct report_user *u)
{
    return u->violations || u->limited_usec || u->would_limit_usec || u->processes ||
           u->notices;
}

static void user_free(struct report_user *u)
{
    free(u->name);
    free(u->spans);
    free(u->points);
}

static int by_violations(const void *a, const void *b)
{
    const struct report_user *x = a, *y = b;
    if (x->violations != y->violations)
        return x->violations < y->violations ? 1 : -1;
    if (x->limited_usec != y->limited_usec)
        return x->limited_usec < y->limited_usec ? 1 : -1;
    if (x->processes != y->processes)
        return x->processes < y->processes ? 1 : -1;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static int by_stopped(const void *a, const void *b)
{
    const struct report_program *x = a, *y = b;
    if (x->stopped != y->stopped)
        return x->stopped < y->stopped ? 1 : -1;
    if (x->would_stop != y->would_stop)
        return x->would_stop < y->would_stop ? 1 : -1;
    if (x->busiest != y->busiest)
        return x->busiest < y->busiest ? 1 : -1;
    return strcmp(x->comm, y->comm);
}

static int by_hits(const void *a, const void *b)
{
    const struct report_rule *x = a, *y = b;
    if (x->hits != y->hits)
        return x->hits < y->hits ? 1 : -1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->class_name, y->class_name);
}

static int by_date(const void *a, const void *b)
{
    return strcmp(((const struct report_day *)a)->date, ((const struct report_day *)b)->date);
}

/* Every day of the range, those without events too (at most the last
 * REPORT_DAYS_MAX). */
static void fill_days(struct report *r)
{
    uint64_t from = r->since ? r->since : r->first;
    if (!from || r->until <= from)
        return;
    if (r->until - from > (uint64_t)REPORT_DAYS_MAX * 86400 * USEC_PER_SEC)
        from = r->until - (uint64_t)(REPORT_DAYS_MAX - 1) * 86400 * USEC_PER_SEC;
    /* Step through local days at noon, which a change of summer time
     * never moves to another date. */
    time_t t = (time_t)(from / USEC_PER_SEC);
    struct tm tm;
    localtime_r(&t, &tm);
    tm.tm_hour = 12;
    tm.tm_min = tm.tm_sec = 0;
    tm.tm_isdst = -1;
    char last[11];
    local_date(r->until - 1, last);
    for (int i = 0; i < REPORT_DAYS_MAX; i++) {
        time_t day = mktime(&tm);
        if (day == (time_t)-1)
            break;
        struct report_day *d = day_of(r, (uint64_t)day * USEC_PER_SEC);
        if (strcmp(d->date, last) >= 0)
            break;
        tm.tm_mday++;
        tm.tm_isdst = -1;
    }
}

void report_finish(struct report *r)
{
    size_t kept = 0;
    for (size_t i = 0; i < r->user_count; i++) {
        struct report_user *u = &r->users[i];
        close_limits(r, u, r->until);
        if (user_shown(u))
            r->users[kept++] = *u;
        else
            user_free(u);
    }
    r->user_count = kept;
    fill_days(r);
    if (r->user_count)
        qsort(r->users, r->user_count, sizeof(*r->users), by_violations);
    if (r->program_count)
        qsort(r->programs, r->program_count, sizeof(*r->programs), by_stopped);
    if (r->rule_count)
        qsort(r->rules, r->rule_count, sizeof(*r->rules), by_hits);
    if (r->day_count)
        qsort(r->days, r->day_count, sizeof(*r->days), by_date);
    if (r->day_count > REPORT_DAYS_MAX) {
        memmove(r->days, r->days + r->day_count - REPORT_DAYS_MAX,
                REPORT_DAYS_MAX * sizeof(*r->days));
        r->day_count = REPORT_DAYS_MAX;
    }
}

static int by_returns(const void *a, const void *b)
{
    const struct report_user *x = *(const struct report_user *const *)a;
    const struct report_user *y = *(const struct report_user *const *)b;
    if (x->returns != y->returns)
        return x->returns < y->returns ? 1 : -1;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

size_t report_returning(const struct report *r, const struct report_user ***out)
{
    size_t n = 0;
    *out = xcalloc(r->user_count + 1, sizeof(**out));
    for (size_t i = 0; i < r->user_count; i++)
        if (r->users[i].returns)
            (*out)[n++] = &r->users[i];
    if (n)
        qsort(*out, n, sizeof(**out), by_returns);
    return n;
}

char *report_user_label(const struct report_user *u)
{
    if (u->name && *u->name)
        return xstrdup(u->name);
    return xasprintf("uid %u", (unsigned)u->uid);
}

void report_free(struct report *r)
{
    for (size_t i = 0; i < r->user_count; i++)
        user_free(&r->users[i]);
    for (size_t i = 0; i < r->program_count; i++) {
        free(r->programs[i].comm);
        free(r->programs[i].exe);
        free(r->programs[i].rule);
        free(r->programs[i].uids);
    }
    for (size_t i = 0; i < r->rule_count; i++) {
        free(r->rules[i].name);
        free(r->rules[i].uids);
    }
    free(r->users);
    free(r->programs);
    free(r->rules);
    free(r->days);
    memset(r, 0, sizeof(*r));
}
