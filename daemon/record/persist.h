/* The daemon's files in state_dir: state.json (levels and expiry times),
 * notified.json (the notice rate limit) and the notices kept for users'
 * next login.  A write that fails (a full disk, a quota, an I/O error)
 * loses nothing and stops nothing: what it held stays in memory, the
 * failure is said once (a state_error event, which also goes to syslog),
 * the write is tried again at every sample, and the first that works is
 * a state_written event. */
#ifndef LOGINGUARD_PERSIST_H
#define LOGINGUARD_PERSIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/environment.h"
#include "engine.h"
#include "notices.h"
#include "policy.h"
#include "record/events.h"
#include "record/notice_rate.h"
#include "record/notify_outcome.h"
#include "record/save_status.h"

/* Notices for the next login not written yet, oldest first; at most
 * PENDING_NOTICES_MAX (the oldest go first). */
#define PENDING_NOTICES_MAX 1000

struct pending_notice {
    uid_t uid;
    uint64_t time;           /* realtime usec it was made */
    enum notice_kind kind;
    char *subject, *body;
};

struct persist {
    struct save_status state, rate, login;
    struct pending_notice *notices;
    size_t notice_count, notice_capacity;
};

/* What the writes need of the daemon: where the files go (the policy's
 * state_dir), the clock, the event log that hears of failures, and what
 * is kept while they fail. */
struct persist_io {
    const struct environment *env;
    const struct policy *policy;
    struct event_log *events;
    struct persist *persist;
};

/* Write the notice rate limit now. */
void persist_save_notice_rate(const struct persist_io *io, const struct notice_rate *rate);
/* Keep a notice for uid's next login; if it cannot be written now it is
 * kept in memory and written at a later sample.  msg says what happened. */
enum notify_outcome persist_keep_login_notice(const struct persist_io *io, uid_t uid,
                                              enum notice_kind kind, const struct notice *n,
                                              char *msg, size_t len);

/* Write the engine's state now. */
void persist_save_state(const struct persist_io *io, const struct engine_state *engine);
/* At every sample: write notified.json and the login notices again if
 * that failed before (the daemon does the same for state.json). */
void persist_save_pending(const struct persist_io *io, const struct notice_rate *rate);
void persist_free(struct persist *p);

#endif
