/* The daemon's metrics from its context (metrics_collect.c): for the
 * control request and for [daemon] metrics_file. */
#ifndef LOGINGUARD_METRICS_COLLECT_H
#define LOGINGUARD_METRICS_COLLECT_H

#include <jansson.h>

#include "core/daemon.h"

/* At most this many users are shown (loginguard_user_* series), so that
 * the text, and what a Prometheus server keeps, is bounded whatever
 * happens on the node: users with a level or a temporary exemption
 * first, then by CPU.  Idle users are never shown. */
#define METRICS_USERS_MAX 1000
/* A user is idle below this CPU (cores, as loginguardctl status) and
 * below half of [violation] memory, with no level and no exemption. */
#define METRICS_IDLE_CPU 0.05

/* The Prometheus text (to be freed), *len its length. */
char *metrics_text(struct daemon *d, size_t *len);

/* The reply to a metrics request: the text as "metrics". */
json_t *metrics_reply(struct daemon *d);

/* After each sample (which began at boottime usec `began`): its duration
 * counted, and metrics_file written when it is set. */
void metrics_sampled(struct daemon *d, uint64_t began);

#endif
