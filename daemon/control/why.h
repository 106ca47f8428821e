/* loginguardctl why PID on the daemon's side: the facts about one
 * process gathered from /proc and the daemon's tables, put into words
 * by why_explain (why_explain.h). */
#ifndef LOGINGUARD_WHY_H
#define LOGINGUARD_WHY_H

#include <stdbool.h>
#include <sys/types.h>

#include "control/control_server.h"
#include "control/control_view.h"

/* The reply to why pid for the peer of c; NULL (*refused) when the
 * process is another person's and the peer is no admin.  Only the pid
 * comes from the request: the process is identified by its pid and start
 * time, read here, and its owner is the owner of /proc/PID (the owner of
 * its subordinate uid range, for a rootless container's). */
json_t *why_reply(struct control_view *v, const struct control_conn *c, pid_t pid, bool *refused);

#endif
