/* A bound on the events a user's processes can put in the log: a user who
 * starts thousands of forbidden programs, or processes that each cost a
 * stop, would otherwise fill the disk the log is on, one event per
 * process.  Each user may have [daemon] events_per_user events written
 * per events_interval; beyond that their events are held back (counted by
 * kind, never written), and when the interval ends the caller writes one
 * events_suppressed event with the counts.  Only the log lines are held
 * back: whatever the events report is done all the same.
 *
 * Held back can be only what a user can multiply by starting processes:
 * the kinds below.  Level changes (violation, level_expired,
 * level_decayed: the engine makes at most one a window per user),
 * limits_set, limits_error and the daemon's own events are always written
 * and do not count.
 *
 * Pure: no I/O, and time comes from the caller (a clock that does not
 * jump: usec since boot). */
#ifndef LOGINGUARD_EVENT_LIMIT_H
#define LOGINGUARD_EVENT_LIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum event_limit_kind {
    HELD_FORBIDDEN_PROCESS,
    HELD_COMPUTE_PROCESS,
    HELD_PROCESS_STOPPING,
    HELD_PROCESS_EXITED,
    HELD_PROCESS_KILLED,
    HELD_STOP_SKIPPED,
    HELD_STOP_ERROR,
    HELD_NOTICE,
    HELD_ARGV_UNREADABLE,
    HELD_KIND_COUNT
};

/* The event name of a kind ("forbidden_process", ...). */
const char *event_limit_kind_name(enum event_limit_kind k);
/* The kind of an event name, or -1 for events that are never held back. */
int event_limit_kind(const char *event_name);

/* What was held back of one user in one interval. */
struct event_limit_report {
    uid_t uid;
    char user[64];           /* the user's name as their events gave it; "" none */
    char mode[16];           /* the mode their events gave */
    uint64_t since;          /* when the interval began (the caller's clock) */
    uint64_t held[HELD_KIND_COUNT];
    uint64_t total;          /* the sum of held */
};

struct event_limit_user {
    struct event_limit_report r;  /* r.uid is the sort key */
    uint64_t written;             /* events written in this interval */
};

struct event_limit {
    uint64_t per_user;       /* events written per user per interval; 0: no limit */
    uint64_t interval;       /* usec */
    struct event_limit_user *users;  /* sorted by uid: users with an interval open */
    size_t count, capacity;
};

/* A new bound (at start and at each reload); intervals under way keep
 * their start, and what they wrote counts against the new bound. */
void event_limit_set(struct event_limit *l, uint64_t per_user, uint64_t interval);

enum event_limit_verdict { EVENT_WRITE, EVENT_HOLD };

/* May an event of kind for uid be written now?  An interval begins with a
 * user's first event and ends interval usec later.  If uid's interval had
 * ended with events held back, *ended gets its report (ended->total > 0)
 * and the caller writes that first; else ended->total is 0.  user and mode
 * (may be NULL) are remembered for the report. */
enum event_limit_verdict event_limit_admit(struct event_limit *l, uid_t uid,
                                           enum event_limit_kind kind, const char *user,
                                           const char *mode, uint64_t now,
                                           struct event_limit_report *ended);

/* Hand fn the report of every interval that has ended by now with events
 * held back (or, with all, of every interval with events held back), and
 * forget those intervals.  Call it at every sample. */
void event_limit_expire(struct event_limit *l, uint64_t now, bool all,
                        void (*fn)(const struct event_limit_report *r, void *arg), void *arg);

void event_limit_free(struct event_limit *l);

#endif
