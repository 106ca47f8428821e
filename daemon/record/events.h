/* Events: one JSON object a line in event_log, appended and flushed, and
 * a one-line summary to syslog.  Event names (documented in
 * loginguardd(8)):
 *   violation          sustained usage raised the user's level
 *   level_expired      the level's limits ended (the level stays, decaying)
 *   level_decayed      a quiet period lowered the level by one
 *   forbidden_process  a forbidden program was seen
 *   compute_process    a compute program ran above its threshold past its grace
 *   memory_over_level  above the level's memory for a window: the largest process stopped
 *   exempt_ended       a temporary exemption ran out
 *   user_forgiven, exempt_added, exempt_removed, control_refused
 *                      loginguardctl's changes and refusals (control_requests.c)
 *   control_error      the control socket could not be opened
 *   limits_set         a user's cgroup got new limits (enforce mode)
 *   limits_error       the backend refused them
 *   process_stopping   SIGTERM sent to a process (enforce mode)
 *   process_exited     it exited within its grace
 *   process_killed     SIGKILL after the grace
 *   stop_skipped       the pid no longer held the process judged: nothing sent
 *   stop_error         the kernel refused the signal
 *   notice             a notice to the user: kind, channel, outcome (notify.c)
 *   enforce_error      enforce mode could not open its backend
 *   state_error        the state file could not be read or written
 *   state_written      a state file is written again after failures
 *   events_suppressed  a user's events held back by the rate limit, by kind
 *   events_lost        events that could not be written (a full disk)
 *   metrics_error      metrics_file could not be written (said once until it can)
 *   trace_error        the usage trace could not be opened or written (said once
 *                      until a sample is written again)
 *   cluster_up, cluster_down, cluster_link_error, cluster_link_exited,
 *   cluster_queue_full, cluster_config_pending
 *                      the link to the cluster's database (cluster_daemon.c)
 *   standing_received  a user's row from the cluster changed their standing
 *   daemon_started, daemon_stopped, config_reloaded, config_error */
#ifndef LOGINGUARD_EVENTS_H
#define LOGINGUARD_EVENTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine.h"
#include "event_limit.h"
#include "json_text.h"
#include "policy.h"
#include "snapshot.h"

/* What an event shows of text a user chose, in bytes of the log line
 * (escapes count): the command line's arguments as a JSON list, and the
 * executable's path.  Past that the text is cut (argv_truncated,
 * exe_truncated); the command line is still known by its length and its
 * SHA-256.  An event lists at most TOP_PROCS processes (engine.h), so a
 * user's event is a few KiB whatever they run. */
#define EVENT_ARGV_MAX 1024
#define EVENT_EXE_MAX 1024

struct event_log {
    char *path;          /* "-" for standard output; NULL until opened */
    int fd;              /* opened O_APPEND; -1 when not open */
    bool own_fd;         /* false for standard output */
    bool echo;           /* also print each summary to stderr (foreground) */
    char host[256];
    /* Per-user events written per interval (event_limit.h). */
    struct event_limit limit;
    /* Writing failed (a full disk, a quota, an I/O error): since when
     * (realtime usec), how many events were not written since, and the
     * error.  Everything else goes on; the first write that works again
     * is an events_lost event with the count. */
    uint64_t lost;
    uint64_t lost_since;
    /* Ever, for the metrics: events held back by the limit, and lost. */
    uint64_t suppressed_total, lost_total;
    int lost_errno;
    /* A write cut short left a piece of a line that could not be taken
     * back: the next line starts on a line of its own. */
    bool mid_line;
    /* Handed every event that is written (or would be, if the file could
     * be): the cluster's queue.  NULL: none. */
    void (*tap)(const json_t *event, void *arg);
    void *tap_arg;
};

int event_log_open(struct event_log *log, const char *path, bool echo);
/* Reopen after logrotate moved the file (SIGHUP), or for a new path; the
 * rate limit and the count of lost events carry over. */
int event_log_reopen(struct event_log *log, const char *path);
void event_log_close(struct event_log *log);
/* [daemon] events_per_user and events_interval (0 per_user: no limit). */
void event_log_set_limit(struct event_log *log, uint64_t per_user, uint64_t interval);
/* At every sample: an events_suppressed event for each user whose interval
 * ended with events held back, and, after a failed write, another try to
 * say how many were lost.  With all (the daemon stops), every user with
 * events held back so far is reported. */
void event_log_tick(struct event_log *log, bool all);

/* The event for one engine decision; name_of gives user names. */
json_t *event_from_decision(const struct policy *p, const struct decision *d,
                            const struct snapshot *snap, const char *user_name,
                            const char *host, uint64_t now, bool applied);
/* An action taken for a user (limits set, a process stopped, ...): time,
 * host, event, user, uid, mode; the caller adds what is particular. */
json_t *event_action(const char *name, uid_t uid, const char *user_name, const char *mode,
                     const char *host, uint64_t now);
json_t *json_from_limits(double cpu, uint64_t memory, uint64_t tasks);

/* A daemon event (started, reloaded, ...) with an optional message. */
json_t *event_daemon(const char *name, const char *message, const struct policy *p,
                     const char *host, uint64_t now);

/* A user's event beyond the rate limit is held back (counted, not written
 * anywhere).  Any other is summarised to syslog (and stderr with echo) and
 * appended to the file as one line with one write(2).  A write that fails
 * is counted, said once, and takes nothing else down.  Takes the
 * reference. */
void event_log_write(struct event_log *log, json_t *event);

/* The one-line summary used for syslog and the terminal: whatever came
 * from users is escaped (utf8_escape), so it cannot move a terminal or
 * turn the line around. */
void event_summary(const json_t *event, char *buf, size_t len);

#endif
