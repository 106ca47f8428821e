/* The daemon's metrics from what it holds (metrics_collect.c): for the
 * control request and for [daemon] metrics_file. */
#ifndef LOGINGUARD_METRICS_COLLECT_H
#define LOGINGUARD_METRICS_COLLECT_H

#include <jansson.h>

#include <stdbool.h>

#include "base/environment.h"
#include "engine.h"
#include "metrics.h"
#include "observe/directory.h"
#include "observe/proc_connector.h"
#include "observe/sampler.h"
#include "observe/taskstats.h"
#include "policy.h"
#include "record/events.h"
#include "snapshot.h"

/* What the metrics are made from: the daemon's parts, built by the core. */
struct metrics_inputs {
    const struct environment *env;
    const struct policy *policy;
    const struct snapshot *snap;
    struct engine_state *engine;       /* read only (engine_user looks up) */
    struct directory *directory;
    struct metrics *metrics;           /* its counts; metrics_sampled adds to them */
    struct event_log *events;
    const bool *enforcing;
    const struct sampler *sampler;
    const struct proc_connector *connector;
    const struct taskstats_listener *exits;
};

/* At most this many users are shown (loginguard_user_* series), so that
 * the text, and what a Prometheus server keeps, is bounded whatever
 * happens on the node: users with a level or a temporary exemption
 * first, then by CPU.  Idle users are never shown. */
#define METRICS_USERS_MAX 1000
/* Idle (user_idle, user_standing.h): below USER_IDLE_CPU and half of
 * [violation] memory, with no level and no exemption. */

/* The Prometheus text (to be freed), *len its length. */
char *metrics_text(struct metrics_inputs *in, size_t *len);

/* The reply to a metrics request: the text as "metrics". */
json_t *metrics_reply(struct metrics_inputs *in);

/* After each sample (which began at boottime usec `began`): its duration
 * counted, and metrics_file written when it is set. */
void metrics_sampled(struct metrics_inputs *in, uint64_t began);

#endif
