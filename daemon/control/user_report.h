/* What loginguardctl user and me show beyond the user's row: their last
 * hour (history.h), their busiest processes and their latest events. */
#ifndef LOGINGUARD_USER_REPORT_H
#define LOGINGUARD_USER_REPORT_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "control/control_view.h"

#define USER_REPORT_PROCS 5
#define USER_REPORT_EVENTS 5

/* Adds "history", "processes" and "events" to reply (now: realtime usec). */
void user_report_add(struct control_view *v, json_t *reply, uid_t uid, uint64_t now);

#endif
