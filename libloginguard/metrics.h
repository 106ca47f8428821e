/* The daemon's own counters for its Prometheus metrics (loginguardctl
 * metrics, [daemon] metrics_file): what it did and how long its samples
 * took, counted where each thing happens, for the life of the process
 * (a reload keeps them).  Incrementing is all that happens here: the
 * text is made by metrics_format.c, from the daemon by metrics_collect.c. */
#ifndef LOGINGUARD_METRICS_H
#define LOGINGUARD_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "notices.h"

/* Enforce mode's actions, each with its outcome: the label pairs of
 * loginguard_actions_total, in this order. */
enum metrics_action {
    ACTION_LIMITS_LEVEL_DONE,   /* a level's limits set on a user's cgroup */
    ACTION_LIMITS_LEVEL_FAILED,
    ACTION_LIMITS_SHARE_DONE,   /* the share alone: a new cgroup, or a level's limits lifted */
    ACTION_LIMITS_SHARE_FAILED,
    ACTION_STOP_SIGNALLED,      /* SIGTERM sent */
    ACTION_STOP_SKIPPED,        /* the pid was no longer the process judged */
    ACTION_STOP_FAILED,         /* the kernel refused the signal */
    ACTION_STOP_GONE,           /* it had exited already */
    ACTION_STOP_END_EXITED,     /* a stopped process exited within its grace */
    ACTION_STOP_END_KILLED,     /* SIGKILL after the grace */
    ACTION_MOVE_DONE,           /* a process moved into its user's cgroup */
    ACTION_MOVE_GONE,
    ACTION_MOVE_FAILED,
    ACTION_COUNT
};

/* The "action" and "outcome" label values of a. */
const char *metrics_action_name(enum metrics_action a);
const char *metrics_action_outcome(enum metrics_action a);

/* Notices: the channels of the notice event ("all": before any channel,
 * a notice held back by the rate limit or without a template) and their
 * outcomes. */
enum metrics_channel { CHANNEL_TTY, CHANNEL_DESKTOP, CHANNEL_EMAIL, CHANNEL_LOGIN, CHANNEL_ALL,
                       CHANNEL_COUNT };
enum metrics_notice_outcome { NOTICE_OUT_SENT, NOTICE_OUT_SKIPPED, NOTICE_OUT_FAILED,
                              NOTICE_OUT_RATE_LIMITED, NOTICE_OUT_COUNT };

const char *metrics_channel_name(enum metrics_channel c);
const char *metrics_notice_outcome_name(enum metrics_notice_outcome o);
/* Whether a channel can have that outcome (the series always shown). */
bool metrics_notice_possible(enum metrics_channel c, enum metrics_notice_outcome o);

/* Upper bounds (seconds) of the sample duration histogram's buckets;
 * +Inf is the count. */
#define METRICS_SAMPLE_BUCKETS 12
extern const double metrics_sample_bounds[METRICS_SAMPLE_BUCKETS];

struct metrics {
    uint64_t start_time;        /* realtime usec the daemon started */
    uint64_t actions[ACTION_COUNT];
    uint64_t notices[NOTICE_KIND_COUNT][CHANNEL_COUNT][NOTICE_OUT_COUNT];
    /* Samples: wall time from the first read to the last notice sent. */
    uint64_t samples;
    uint64_t sample_buckets[METRICS_SAMPLE_BUCKETS]; /* not cumulative */
    double sample_seconds_sum;
    double last_sample_seconds;
    /* metrics_file could not be written: said once until it works again. */
    bool file_failing;
};

void metrics_count_action(struct metrics *m, enum metrics_action a);
/* By the notice event's own words; names it does not know are ignored. */
void metrics_count_notice(struct metrics *m, enum notice_kind kind, const char *channel,
                          const char *outcome);
void metrics_count_sample(struct metrics *m, uint64_t usec);

#endif
