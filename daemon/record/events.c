#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "record/events.h"
#include "units.h"
#include "utf8.h"
#include "util.h"

static json_t *json_text(const char *s)
{
    return s ? json_from_bytes(s, strlen(s)) : json_null();
}

/* Bytes the unit of hostile text at s takes in the log line (left > 0;
 * *unit gets its length): json_from_bytes writes a byte that is not UTF-8
 * (or a NUL) as \xNN, five bytes once JSON escapes the backslash; JSON
 * writes a control as \u00NN (at most six), a quote or backslash as two. */
static size_t written_cost(const unsigned char *s, size_t left, size_t *unit)
{
    size_t n = s[0] ? utf8_sequence(s, left) : 0;
    *unit = n ? n : 1;
    if (n == 0)
        return 5;
    if (n > 1)
        return n;
    if (s[0] < 0x20)
        return 6;
    return s[0] == '"' || s[0] == '\\' ? 2 : 1;
}

/* The longest start of s (len bytes) that takes at most budget bytes in
 * the log line, cut between units of text; *cut says whether it is less
 * than s, *cost (may be NULL) how many bytes it takes. */
static json_t *json_bounded(const char *s, size_t len, size_t budget, bool *cut, size_t *cost)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t used = 0, i = 0;
    while (i < len) {
        size_t unit, c = written_cost(u + i, len - i, &unit);
        if (used + c > budget)
            break;
        used += c;
        i += unit;
    }
    *cut = i < len;
    if (cost)
        *cost = used;
    return json_from_bytes(s, i);
}

/* The command line's first arguments, at most EVENT_ARGV_MAX bytes of the
 * line with their quotes and commas; an argument that does not fit is cut
 * and ends the list.  *whole: the list is the whole command line. */
static json_t *json_argv(const struct proc_sample *ps, bool *whole)
{
    json_t *a = json_array();
    size_t budget = EVENT_ARGV_MAX, i = 0;
    bool cut = false;
    while (ps->argv && i < ps->argv_len && !cut) {
        size_t n = strnlen(ps->argv + i, ps->argv_len - i);
        if (budget <= 3) {
            cut = true;
            break;
        }
        size_t cost;
        json_t *arg = json_bounded(ps->argv + i, n, budget - 3, &cut, &cost);
        if (cut && cost == 0 && n > 0) {
            json_decref(arg); /* not even a start of it fits */
            break;
        }
        json_array_append_new(a, arg);
        budget -= 3 + cost;
        i += n + 1;
    }
    *whole = ps->argv && !cut && i >= ps->argv_len && ps->argv_len == ps->argv_total;
    return a;
}

static json_t *json_proc(const struct proc_sample *ps)
{
    json_t *o = json_object();
    json_object_set_new(o, "pid", json_integer(ps->pid));
    json_object_set_new(o, "comm", json_text(ps->comm));
    bool cut = false;
    json_object_set_new(o, "exe", ps->exe ? json_bounded(ps->exe, strlen(ps->exe), EVENT_EXE_MAX,
                                                         &cut, NULL)
                                          : json_null());
    if (cut)
        json_object_set_new(o, "exe_truncated", json_true());
    bool whole;
    json_object_set_new(o, "argv", json_argv(ps, &whole));
    /* What the command line is known by, whatever was shown of it. */
    bool known = ps->argv_sha256[0] != '\0';
    json_object_set_new(o, "argv_bytes",
                        known ? json_integer((json_int_t)ps->argv_total) : json_null());
    json_object_set_new(o, "argv_sha256", known ? json_string(ps->argv_sha256) : json_null());
    json_object_set_new(o, "argv_truncated", json_boolean(known && !whole));
    json_object_set_new(o, "cpu_cores", json_real((double)(long)(ps->cpu * 1000) / 1000));
    json_object_set_new(o, "rss_bytes", json_integer((json_int_t)ps->rss));
    json_object_set_new(o, "class", json_string(class_name(ps->class)));
    if (ps->rule)
        json_object_set_new(o, "rule", json_text(ps->rule));
    return o;
}

/* What loginguard does (or, observing, would do) for a decision. */
static const char *action_of(const struct policy *p, const struct decision *d)
{
    switch (d->kind) {
    case DECISION_VIOLATION: {
        const struct level *l = &p->levels[d->level_after - 1];
        if (l->stop)
            return "stop";
        return l->cpu > 0 || l->memory > 0 ? "limit" : "warn";
    }
    case DECISION_EXPIRED:
        return "release";
    case DECISION_DECAYED:
        return "lower";
    case DECISION_FORBIDDEN:
    case DECISION_COMPUTE:
    case DECISION_MEMORY_OVER:
        return "stop";
    case DECISION_EXEMPT_ENDED:
        return "none";
    }
    return "none";
}

static json_t *json_level(const struct policy *p, int level)
{
    if (level <= 0 || (size_t)level > p->level_count)
        return json_null();
    const struct level *l = &p->levels[level - 1];
    return json_pack("{s:i, s:s, s:f, s:I, s:b, s:I}", "number", level, "name", l->name,
                     "cpu_cores", l->cpu, "memory_bytes", (json_int_t)l->memory, "stop", l->stop,
                     "duration_s", (json_int_t)(l->duration / USEC_PER_SEC));
}

json_t *event_from_decision(const struct policy *p, const struct decision *d,
                            const struct snapshot *snap, const char *user_name,
                            const char *host, uint64_t now, bool applied)
{
    json_t *e = json_object();
    json_object_set_new(e, "time", json_from_time(now));
    json_object_set_new(e, "host", json_text(host));
    json_object_set_new(e, "event", json_string(decision_name(d->kind)));
    json_object_set_new(e, "user", user_name && *user_name ? json_text(user_name) : json_null());
    json_object_set_new(e, "uid", json_integer(d->uid));
    json_object_set_new(e, "level_before", json_integer(d->level_before));
    json_object_set_new(e, "level_after", json_integer(d->level_after));
    json_object_set_new(e, "level", json_level(p, d->level_after));
    if (d->reason)
        json_object_set_new(e, "reason", json_text(d->reason));
    if (d->kind != DECISION_EXPIRED && d->kind != DECISION_DECAYED &&
        d->kind != DECISION_EXEMPT_ENDED) {
        json_object_set_new(e, "usage",
                            json_pack("{s:f, s:I, s:f}", "cpu_cores",
                                      (double)(long)(d->cpu * 1000) / 1000, "memory_bytes",
                                      (json_int_t)d->memory, "window_s",
                                      (double)(d->window / 1000) / 1e3));
        json_t *procs = json_array();
        for (size_t i = 0; i < d->proc_count; i++)
            json_array_append_new(procs, json_proc(&snap->procs[d->procs[i]]));
        json_object_set_new(e, "processes", procs);
    }
    if (d->until)
        json_object_set_new(e, "until", json_from_time(d->until));
    json_object_set_new(e, "action", json_string(action_of(p, d)));
    /* Whether the action is carried out (enforce) or only shown (observe). */
    json_object_set_new(e, "applied", json_boolean(applied));
    json_object_set_new(e, "mode", json_string(mode_name(p->mode)));
    return e;
}

json_t *event_action(const char *name, uid_t uid, const char *user_name, const char *mode,
                     const char *host, uint64_t now)
{
    json_t *e = json_object();
    json_object_set_new(e, "time", json_from_time(now));
    json_object_set_new(e, "host", json_text(host));
    json_object_set_new(e, "event", json_string(name));
    json_object_set_new(e, "user", user_name && *user_name ? json_text(user_name) : json_null());
    json_object_set_new(e, "uid", json_integer(uid));
    json_object_set_new(e, "mode", json_string(mode));
    return e;
}

json_t *json_from_limits(double cpu, uint64_t memory, uint64_t tasks)
{
    return json_pack("{s:f, s:I, s:I}", "cpu_cores", cpu, "memory_bytes", (json_int_t)memory,
                     "tasks", (json_int_t)tasks);
}

json_t *event_daemon(const char *name, const char *message, const struct policy *p,
                     const char *host, uint64_t now)
{
    json_t *e = json_object();
    json_object_set_new(e, "time", json_from_time(now));
    json_object_set_new(e, "host", json_text(host));
    json_object_set_new(e, "event", json_string(name));
    if (message)
        json_object_set_new(e, "message", json_text(message));
    if (p)
        json_object_set_new(e, "mode", json_string(mode_name(p->mode)));
    return e;
}

static const char *get_str(const json_t *e, const char *key)
{
    const char *s = json_string_value(json_object_get(e, key));
    return s ? s : "";
}

/* "limits cpu 0.50 cores, memory 4.0G, tasks 1024" or "pid 123 sim
 * SIGTERM" or a message: what an action event did. */
static void action_summary(const json_t *e, char *buf, size_t len)
{
    json_t *limits = json_object_get(e, "limits");
    json_t *proc = json_object_get(e, "process");
    buf[0] = '\0';
    if (limits) {
        char mem[32];
        format_size((uint64_t)json_integer_value(json_object_get(limits, "memory_bytes")), mem,
                    sizeof(mem));
        snprintf(buf, len, ": limits cpu %.2f cores, memory %s, tasks %lld (level %lld)",
                 json_real_value(json_object_get(limits, "cpu_cores")), mem,
                 (long long)json_integer_value(json_object_get(limits, "tasks")),
                 (long long)json_integer_value(json_object_get(e, "level")));
    } else if (proc) {
        snprintf(buf, len, ": pid %lld %s (%s)%s%s",
                 (long long)json_integer_value(json_object_get(proc, "pid")),
                 get_str(proc, "comm"), get_str(proc, "exe"),
                 json_object_get(e, "signal") ? " " : "", get_str(e, "signal"));
    }
    json_t *held = json_object_get(e, "held");
    if (held) {
        /* ": 812 held back since 02:14:09Z (forbidden_process 800, notice 12)" */
        const char *since = get_str(e, "since");
        size_t used = (size_t)snprintf(buf, len, ": %lld held back since %s (",
                                       (long long)json_integer_value(json_object_get(e, "total")),
                                       strlen(since) > 11 ? since + 11 : since);
        const char *kind;
        json_t *count;
        const char *sep = "";
        json_object_foreach(held, kind, count) {
            if (used < len)
                used += (size_t)snprintf(buf + used, len - used, "%s%s %lld", sep, kind,
                                         (long long)json_integer_value(count));
            sep = ", ";
        }
        if (used < len)
            snprintf(buf + used, len - used, ")");
    }
    size_t used = strlen(buf);
    if (json_object_get(e, "message") && used < len)
        snprintf(buf + used, len - used, ": %s", get_str(e, "message"));
}

/* The summary as it comes, before escaping. */
static void raw_summary(const json_t *e, char *buf, size_t len)
{
    const char *name = get_str(e, "event");
    json_t *usage = json_object_get(e, "usage");
    json_t *procs = json_object_get(e, "processes");
    json_t *top = json_array_get(procs, 0);
    char extra[768] = "";
    if (usage) {
        char mem[32];
        format_size((uint64_t)json_integer_value(json_object_get(usage, "memory_bytes")), mem,
                    sizeof(mem));
        size_t n = (size_t)snprintf(extra, sizeof(extra), " cpu %.2f cores, memory %s over %.0fs",
                                    json_real_value(json_object_get(usage, "cpu_cores")), mem,
                                    json_real_value(json_object_get(usage, "window_s")));
        if (top && n < sizeof(extra))
            snprintf(extra + n, sizeof(extra) - n, "; top: pid %lld %s (%.2f cores)",
                     (long long)json_integer_value(json_object_get(top, "pid")),
                     get_str(top, "comm"), json_real_value(json_object_get(top, "cpu_cores")));
    }
    if (json_object_get(e, "level_before"))
        snprintf(buf, len, "%s: user %s uid %lld level %lld -> %lld%s%s; action %s (%s)", name,
                 get_str(e, "user"), (long long)json_integer_value(json_object_get(e, "uid")),
                 (long long)json_integer_value(json_object_get(e, "level_before")),
                 (long long)json_integer_value(json_object_get(e, "level_after")),
                 json_object_get(e, "reason") ? ", reason " : "", get_str(e, "reason"),
                 get_str(e, "action"), get_str(e, "mode"));
    else if (json_object_get(e, "uid")) {
        action_summary(e, extra, sizeof(extra));
        snprintf(buf, len, "%s: user %s uid %lld", name, get_str(e, "user"),
                 (long long)json_integer_value(json_object_get(e, "uid")));
    } else
        snprintf(buf, len, "%s%s%s", name, json_object_get(e, "message") ? ": " : "",
                 get_str(e, "message"));
    size_t used = strlen(buf);
    if (used < len)
        snprintf(buf + used, len - used, "%s", extra);
}

void event_summary(const json_t *e, char *buf, size_t len)
{
    char raw[1024];
    raw_summary(e, raw, sizeof(raw));
    utf8_escape(raw, strlen(raw), buf, len);
}

int event_log_open(struct event_log *log, const char *path, bool echo)
{
    memset(log, 0, sizeof(*log));
    log->fd = -1;
    log->echo = echo;
    if (gethostname(log->host, sizeof(log->host) - 1) < 0)
        copy_string(log->host, sizeof(log->host), "unknown");
    return event_log_reopen(log, path);
}

int event_log_reopen(struct event_log *log, const char *path)
{
    int fd = STDOUT_FILENO;
    bool own = strcmp(path, "-") != 0;
    if (own) {
        /* Read too: its last byte says whether it ends a line. */
        fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0640);
        if (fd < 0)
            return -1;
    }
    if (log->own_fd && log->fd >= 0)
        close(log->fd);
    log->fd = fd;
    log->own_fd = own;
    /* A file that ends inside a line (a piece that a full disk left and
     * that could not be taken back) gets the next line on a line of its
     * own. */
    struct stat st;
    char last = '\n';
    log->mid_line = own && fstat(fd, &st) == 0 && st.st_size > 0 &&
                    pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
    set_string(&log->path, path);
    return 0;
}

void event_log_close(struct event_log *log)
{
    if (log->own_fd && log->fd >= 0)
        close(log->fd);
    free(log->path);
    event_limit_free(&log->limit);
    memset(log, 0, sizeof(*log));
    log->fd = -1;
}

void event_log_set_limit(struct event_log *log, uint64_t per_user, uint64_t interval)
{
    event_limit_set(&log->limit, per_user, interval);
}

static void say(const struct event_log *log, int priority, const char *message)
{
    syslog(priority, "%s", message);
    if (log->echo)
        fprintf(stderr, "loginguardd: %s\n", message);
}

static void summarise(const struct event_log *log, const json_t *event)
{
    char summary[1024];
    event_summary(event, summary, sizeof(summary));
    say(log, LOG_NOTICE, summary);
}

/* One line with one write(2), so that a line is never mixed with another
 * and is in the file whole or not at all: what a write cut short (the
 * disk filled up during it) did write is cut off again.  0, or -1 with
 * errno. */
static int append_line(struct event_log *log, const char *line)
{
    size_t len = strlen(line);
    size_t lead = log->mid_line ? 1 : 0, total = lead + len + 1;
    char *buf = xmalloc(total);
    buf[0] = '\n';
    memcpy(buf + lead, line, len);
    buf[total - 1] = '\n';
    size_t done = 0;
    int error = 0;
    while (done < total) {
        ssize_t n = write(log->fd, buf + done, total - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            error = n < 0 ? errno : EIO;
            break;
        }
        done += (size_t)n;
    }
    free(buf);
    if (done == total) {
        log->mid_line = false;
        return 0;
    }
    if (done > 0) {
        off_t end = lseek(log->fd, 0, SEEK_END);
        if (end < (off_t)done || ftruncate(log->fd, end - (off_t)done) < 0)
            log->mid_line = true;
    }
    errno = error;
    return -1;
}

static int append_event(struct event_log *log, const json_t *event)
{
    char *line = json_dumps(event, JSON_COMPACT | JSON_REAL_PRECISION(6));
    if (!line) {
        errno = ENOMEM;
        return -1;
    }
    int rc = append_line(log, line);
    free(line);
    return rc;
}

static void note_lost(struct event_log *log, int error)
{
    log->lost_total++;
    if (log->lost++ > 0)
        return;
    log->lost_since = now_realtime_usec();
    log->lost_errno = error;
    char msg[600];
    snprintf(msg, sizeof(msg),
             "cannot write the event log %s: %s; sampling and enforcement go on, events go to "
             "syslog only and are counted until the log can be written again",
             log->path ? log->path : "-", strerror(error));
    say(log, LOG_ERR, msg);
}

/* After a full disk, writing starts again only once there is room for
 * more than a few lines: a short line fitting in the end of a block that
 * a longer one did not fit in is no sign of room, and would only make the
 * log stop and start, saying so each time. */
#define EVENT_LOG_ROOM (64 * 1024)

static bool room_again(const struct event_log *log)
{
    struct statvfs st;
    if (log->lost_errno != ENOSPC || fstatvfs(log->fd, &st) < 0)
        return true; /* a quota or an I/O error: only trying tells */
    /* root may write the blocks kept for root. */
    uint64_t blocks = geteuid() == 0 ? st.f_bfree : st.f_bavail;
    return blocks * st.f_frsize >= EVENT_LOG_ROOM;
}

/* After failed writes: one event that says how many were lost and since
 * when, if it can be written now. */
static bool recovered(struct event_log *log)
{
    if (!room_again(log))
        return false;
    char since[64], msg[700];
    json_t *t = json_from_time(log->lost_since);
    copy_string(since, sizeof(since), json_string_value(t));
    json_decref(t);
    snprintf(msg, sizeof(msg), "%llu events could not be written to %s since %s (%s)",
             (unsigned long long)log->lost, log->path ? log->path : "-", since,
             strerror(log->lost_errno));
    json_t *e = event_daemon("events_lost", msg, NULL, log->host, now_realtime_usec());
    json_object_set_new(e, "lost", json_integer((json_int_t)log->lost));
    json_object_set_new(e, "since", json_string(since));
    bool ok = append_event(log, e) == 0;
    if (ok) {
        summarise(log, e);
        log->lost = 0;
    }
    json_decref(e);
    return ok;
}

static void write_out(struct event_log *log, json_t *event)
{
    summarise(log, event);
    if (log->tap)
        log->tap(event, log->tap_arg);
    if (log->fd < 0)
        return;
    if (log->lost && !recovered(log)) {
        log->lost++;
        log->lost_total++;
    } else if (append_event(log, event) < 0)
        note_lost(log, errno);
}

/* The events_suppressed event of what was held back of one user. */
static void report_held(const struct event_limit_report *r, void *arg)
{
    struct event_log *log = arg;
    uint64_t real = now_realtime_usec(), boot = now_boottime_usec();
    uint64_t ago = boot > r->since ? boot - r->since : 0;
    json_t *e = event_action("events_suppressed", r->uid, r->user, r->mode, log->host, real);
    json_object_set_new(e, "since", json_from_time(real > ago ? real - ago : 0));
    json_object_set_new(e, "interval_s",
                        json_integer((json_int_t)(log->limit.interval / USEC_PER_SEC)));
    json_t *held = json_object();
    for (int k = 0; k < HELD_KIND_COUNT; k++)
        if (r->held[k])
            json_object_set_new(held, event_limit_kind_name((enum event_limit_kind)k),
                                json_integer((json_int_t)r->held[k]));
    json_object_set_new(e, "held", held);
    json_object_set_new(e, "total", json_integer((json_int_t)r->total));
    write_out(log, e);
    json_decref(e);
}

/* A user's event beyond their share of the log is held back. */
static bool held_back(struct event_log *log, const json_t *event)
{
    int kind = event_limit_kind(json_string_value(json_object_get(event, "event")));
    json_t *uid = json_object_get(event, "uid");
    if (kind < 0 || !json_is_integer(uid))
        return false;
    struct event_limit_report ended;
    enum event_limit_verdict v = event_limit_admit(
        &log->limit, (uid_t)json_integer_value(uid), (enum event_limit_kind)kind,
        json_string_value(json_object_get(event, "user")),
        json_string_value(json_object_get(event, "mode")), now_boottime_usec(), &ended);
    if (ended.total)
        report_held(&ended, log);
    log->suppressed_total += v == EVENT_HOLD;
    return v == EVENT_HOLD;
}

void event_log_write(struct event_log *log, json_t *event)
{
    if (!held_back(log, event))
        write_out(log, event);
    json_decref(event);
}

void event_log_tick(struct event_log *log, bool all)
{
    event_limit_expire(&log->limit, now_boottime_usec(), all, report_held, log);
    if (log->lost && log->fd >= 0)
        recovered(log);
}
