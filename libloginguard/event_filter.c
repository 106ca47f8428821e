#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_filter.h"
#include "strbuf.h"
#include "units.h"
#include "util.h"

const char *const event_kind_names[] = {
    "violation", "level_expired", "level_decayed", "forbidden_process", "compute_process",
    "memory_over_level", "exempt_ended", "user_forgiven", "exempt_added", "exempt_removed", "control_refused",
    "control_error", "limits_set", "limits_error", "process_stopping", "process_exited",
    "process_killed", "stop_skipped", "stop_error", "argv_unreadable", "notice",
    "enforce_error", "enforce_warning", "state_error", "state_written", "events_suppressed",
    "events_lost", "proc_connector_error", "taskstats_error", "subuids_loaded",
    "descriptors_capped",
    "daemon_started", "daemon_stopped", "config_reloaded", "config_error",
};
const size_t event_kind_count = sizeof(event_kind_names) / sizeof(event_kind_names[0]);

static bool known_kind(const char *name, size_t len)
{
    for (size_t i = 0; i < event_kind_count; i++)
        if (strlen(event_kind_names[i]) == len && memcmp(event_kind_names[i], name, len) == 0)
            return true;
    return false;
}

void event_filter_user(struct event_filter *f, const char *name, bool has_uid, uid_t uid)
{
    f->by_user = true;
    set_string(&f->user_name, name);
    f->has_uid = has_uid;
    f->uid = uid;
}

int event_filter_add_kinds(struct event_filter *f, const char *list, char *why, size_t why_len)
{
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len > 0 && !known_kind(p, len)) {
            struct strbuf b = {0};
            strbuf_addf(&b, "no event is called \"%.*s\"; events are:", (int)(len > 64 ? 64 : len), p);
            for (size_t i = 0; i < event_kind_count; i++)
                strbuf_addf(&b, "%s %s", i ? "," : "", event_kind_names[i]);
            copy_string(why, why_len, b.s);
            strbuf_free(&b);
            return -1;
        }
        if (len > 0) {
            f->kinds = xreallocarray(f->kinds, f->kind_count + 1, sizeof(*f->kinds));
            f->kinds[f->kind_count++] = xstrndup(p, len);
        }
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

void event_filter_free(struct event_filter *f)
{
    free(f->user_name);
    for (size_t i = 0; i < f->kind_count; i++)
        free(f->kinds[i]);
    free(f->kinds);
    memset(f, 0, sizeof(*f));
}

/* Midnight (local) of the day that t (seconds) is in, days later. */
static uint64_t local_midnight(time_t t, int days)
{
    struct tm tm;
    localtime_r(&t, &tm);
    tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
    tm.tm_mday += days;
    tm.tm_isdst = -1;
    return (uint64_t)mktime(&tm) * USEC_PER_SEC;
}

/* The rest of text after a strptime format, or NULL. */
static const char *try_format(const char *text, const char *format, struct tm *tm)
{
    memset(tm, 0, sizeof(*tm));
    return strptime(text, format, tm);
}

static int date_time(const char *text, uint64_t now, uint64_t *usec)
{
    static const char *const dated[] = {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S",
                                        "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%d"};
    static const char *const timed[] = {"%H:%M:%S", "%H:%M"};
    struct tm tm;
    const char *rest = NULL;
    for (size_t i = 0; i < sizeof(dated) / sizeof(*dated) && !rest; i++)
        rest = try_format(text, dated[i], &tm);
    if (!rest) {
        for (size_t i = 0; i < sizeof(timed) / sizeof(*timed) && !rest; i++)
            rest = try_format(text, timed[i], &tm);
        if (!rest)
            return -1;
        time_t t = (time_t)(now / USEC_PER_SEC);
        struct tm today;
        localtime_r(&t, &today);
        tm.tm_year = today.tm_year;
        tm.tm_mon = today.tm_mon;
        tm.tm_mday = today.tm_mday;
    }
    time_t t;
    if (strcmp(rest, "Z") == 0) {
        t = timegm(&tm);
    } else if (*rest == '\0') {
        tm.tm_isdst = -1;
        t = mktime(&tm);
    } else {
        return -1;
    }
    if (t < 0)
        return -1;
    *usec = (uint64_t)t * USEC_PER_SEC;
    return 0;
}

int event_since_parse(const char *text, uint64_t now, uint64_t *usec, char *why, size_t why_len)
{
    char ignored[200];
    uint64_t back;
    if (strcmp(text, "today") == 0 || strcmp(text, "yesterday") == 0) {
        *usec = local_midnight((time_t)(now / USEC_PER_SEC), text[0] == 'y' ? -1 : 0);
        return 0;
    }
    if (date_time(text, now, usec) == 0)
        return 0;
    if (text[0] >= '0' && text[0] <= '9' &&
        parse_duration(text, text, &back, ignored, sizeof(ignored)) == 0) {
        *usec = back < now ? now - back : 1;
        return 0;
    }
    snprintf(why, why_len, "--since \"%.64s\" is neither a time back from now (30m, 2h, 7d) nor "
             "a time (2026-11-25 10:00, 10:00, today, yesterday; a final Z for UTC)", text);
    return -1;
}

int event_time_parse(const char *text, uint64_t *usec)
{
    struct tm tm = {0};
    const char *rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
    unsigned ms = 0;
    int used = 0;
    if (!rest || strlen(rest) != 5 || sscanf(rest, ".%3u%n", &ms, &used) != 1 || used != 4 ||
        rest[4] != 'Z')
        return -1;
    time_t t = timegm(&tm);
    if (t < 0)
        return -1;
    *usec = (uint64_t)t * USEC_PER_SEC + ms * 1000ULL;
    return 0;
}

json_t *event_parse_line(const char *line, size_t len, uint64_t *time)
{
    json_error_t err;
    json_t *e = json_loadb(line, len, JSON_REJECT_DUPLICATES, &err);
    if (e && json_is_object(e) && json_is_string(json_object_get(e, "event")) &&
        json_is_string(json_object_get(e, "time")) &&
        event_time_parse(json_string_value(json_object_get(e, "time")), time) == 0)
        return e;
    json_decref(e);
    return NULL;
}

static bool user_matches(const struct event_filter *f, const json_t *e)
{
    const json_t *uid = json_object_get(e, "uid");
    if (f->has_uid && json_is_integer(uid) && json_integer_value(uid) == (json_int_t)f->uid)
        return true;
    const char *name = json_string_value(json_object_get(e, "user"));
    return f->user_name && name && strcmp(name, f->user_name) == 0;
}

bool event_filter_match(const struct event_filter *f, const json_t *event, uint64_t time)
{
    if (time < f->since)
        return false;
    if (f->by_user && !user_matches(f, event))
        return false;
    if (f->kind_count == 0)
        return true;
    const char *kind = json_string_value(json_object_get(event, "event"));
    for (size_t i = 0; i < f->kind_count; i++)
        if (kind && strcmp(kind, f->kinds[i]) == 0)
            return true;
    return false;
}

int event_range_parse(const char *since_text, const char *until_text, uint64_t now,
                      uint64_t *since, uint64_t *until, char *why, size_t why_len)
{
    *until = now;
    if (event_since_parse(since_text ? since_text : "7d", now, since, why, why_len) < 0 ||
        (until_text && event_since_parse(until_text, now, until, why, why_len) < 0))
        return -1;
    if (*until <= *since) {
        snprintf(why, why_len, "--until must be later than --since");
        return -1;
    }
    return 0;
}
