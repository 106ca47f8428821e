/* Which events of the log a reader wants (loginguardctl events): by
 * user, by kind, from a time on.  Pure: the caller resolves user names
 * and gives the clock. */
#ifndef LOGINGUARD_EVENT_FILTER_H
#define LOGINGUARD_EVENT_FILTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Every event name the daemon writes (events.h lists what each means). */
extern const char *const event_kind_names[];
extern const size_t event_kind_count;

struct event_filter {
    /* --user: a name (matched against "user"), a uid (against "uid"), or
     * both when a name was resolved: either matches. */
    bool by_user;
    char *user_name;
    bool has_uid;
    uid_t uid;
    uint64_t since;   /* realtime usec; 0: from the start */
    char **kinds;     /* none: every kind */
    size_t kind_count;
};

void event_filter_user(struct event_filter *f, const char *name, bool has_uid, uid_t uid);
/* One --kind: a name or a comma-separated list of them.  An unknown name
 * is an error (why: what is wrong, with the known names). */
int event_filter_add_kinds(struct event_filter *f, const char *list, char *why, size_t why_len);
void event_filter_free(struct event_filter *f);

/* --since: a duration back from now ("90s", "1h", "2d"), "today",
 * "yesterday", a local date and time ("2026-11-25", "2026-11-25 10:00",
 * "2026-11-25T10:00:05"), the same in UTC with a final Z, or a time of
 * today ("10:00").  0, or -1 with why. */
int event_since_parse(const char *text, uint64_t now, uint64_t *usec, char *why, size_t why_len);

/* --since and --until of report and simulate: since (NULL: "7d") and
 * until (NULL: now) as event_since_parse reads them, until after since.
 * 0, or -1 with why. */
int event_range_parse(const char *since_text, const char *until_text, uint64_t now,
                      uint64_t *since, uint64_t *until, char *why, size_t why_len);

/* "2026-01-31T12:00:00.000Z", as the daemon writes times, to realtime
 * usec; -1 for anything else. */
int event_time_parse(const char *text, uint64_t *usec);

/* A line of the log as an event: a JSON object with an "event" name and
 * a "time" (into *time); NULL for anything else. */
json_t *event_parse_line(const char *line, size_t len, uint64_t *time);

bool event_filter_match(const struct event_filter *f, const json_t *event, uint64_t time);

#endif
