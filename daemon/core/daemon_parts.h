/* What the core's files share (daemon.h is the context others see):
 * daemon.c sets the daemon up and builds what its effectors are given,
 * views.c the views of the parts that live as long as it does, tick.c
 * runs one tick, news.c reads the kernel's news, loop.c waits between
 * ticks. */
#ifndef LOGINGUARD_DAEMON_PARTS_H
#define LOGINGUARD_DAEMON_PARTS_H

#include "core/daemon.h"
#include "notify/notify.h"

/* An exec of a forbidden program brings the next sample forward: at once
 * for up to EARLY_SAMPLE_BURST of them in a row, and on average no more
 * than one every EARLY_SAMPLE_GAP, so a user's execs cannot drive the
 * sample rate beyond four a second (a token bucket, kept as the time it
 * is next empty: early_due). */
#define EARLY_SAMPLE_GAP (250 * 1000)
#define EARLY_SAMPLE_BURST 4

/* To syslog, and to stderr in the foreground or before start-up. */
void daemon_say(struct daemon *d, int priority, const char *message);
/* A daemon event (no user) in the event log. */
void daemon_log_event(struct daemon *d, const char *name, const char *message);
/* The trace could not be written: said once until it works again. */
void daemon_trace_failed(struct daemon *d, const char *why);
/* What the effectors are given of the daemon (enforce/actions.h). */
struct actions daemon_actions(struct daemon *d);
/* What the notices are given of the daemon. */
struct notifier daemon_notifier(struct daemon *d);
/* The state files' view of the daemon (record/persist.h), and the
 * writes the core asks for: state.json now; what failed before, again;
 * the notices sent to a forgiven user forgotten (notified.json). */
struct persist_io daemon_persist_io(struct daemon *d);
void daemon_save_state(struct daemon *d);
void daemon_save_pending(struct daemon *d);
void daemon_forget_notices(struct daemon *d, uid_t uid);
/* The kernel's news (the connector's events, taskstats' exits) so far,
 * and whether the daemon listens for any (news.c). */
void daemon_drain_news(struct daemon *d);
bool daemon_listening(const struct daemon *d);

#endif
