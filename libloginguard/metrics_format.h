/* The daemon's metrics as Prometheus text exposition format 0.0.4: what
 * loginguardctl metrics prints and [daemon] metrics_file holds (for
 * node_exporter's textfile collector).  Pure: a view of the daemon goes
 * in (metrics_collect.c fills it), text comes out.
 *
 * Every family has HELP and TYPE, names start with loginguard_, values
 * are in base units (seconds, bytes), counters end in _total.  A label
 * value is any text: backslash, double quote and newline are escaped as
 * the format says; whatever else could act on a terminal or is not UTF-8
 * (other controls, C1, bidirectional controls, bytes that are not UTF-8)
 * becomes the text \xNN, as in notices and log summaries, so the output
 * is valid UTF-8 that only shows. */
#ifndef LOGINGUARD_METRICS_FORMAT_H
#define LOGINGUARD_METRICS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "metrics.h"

struct metrics_user {
    uid_t uid;
    const char *name;           /* "" when the uid has no passwd entry */
    double cpu_cores;           /* over the last sample interval */
    uint64_t memory_bytes;
    uint64_t tasks;
    int level;                  /* 0: none */
    bool exempt;                /* not judged now: a temporary exemption, or always */
};

struct metrics_view {
    const char *version;
    const char *mode;           /* the policy's: observe or enforce */
    bool enforcing;             /* enforce mode with its backend open */
    const struct metrics *counters;
    const char *const *level_names;   /* level 1 first */
    size_t level_count;
    const struct metrics_user *users; /* the users shown, in the order given */
    size_t user_count;
    size_t users_tracked;       /* users in the last sample and users with a level */
    size_t users_omitted;       /* not idle, but past the bound on users shown */
    uint64_t processes_tracked;
    bool connector_up;          /* the proc connector is listened to */
    uint64_t connector_events, connector_overruns;
    bool taskstats_up;
    uint64_t taskstats_exits, taskstats_overruns, taskstats_dropped;
    uint64_t events_suppressed, events_lost;
};

/* The text (to be freed), ending in a newline; *len its length. */
char *metrics_format(const struct metrics_view *v, size_t *len);

/* A label value as the format writes it between its quotes (appended to
 * the strbuf-owned text, exposed for the tests). */
struct strbuf;
void metrics_label_value(struct strbuf *b, const char *value);

#endif
