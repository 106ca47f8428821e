/* The policy engine: policy + per-user state + snapshot in, decisions
 * out.  Pure: no I/O, no clock (time comes in the snapshot), so the
 * daemon, policy replay and the unit tests run the very same code. */
#ifndef LOGINGUARD_ENGINE_H
#define LOGINGUARD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "snapshot.h"
#include "user_state.h"

#define TOP_PROCS 5
/* At a level that stops, a violation's processes that use at least this
 * many cores are stopped (engine_offending). */
#define OFFENDING_CPU 0.1


/* A process of class compute being watched through its grace, or one
 * already reported (so it is reported once).  Kept sorted by (pid,
 * start_time). */
struct proc_watch {
    pid_t pid;
    uint64_t start_time;
    uint64_t over_since;
    bool reported;
};

struct engine_state {
    struct user_state *users;
    size_t user_count, user_capacity;
    struct proc_watch *procs;
    size_t proc_count, proc_capacity;
};

enum decision_kind {
    DECISION_VIOLATION,   /* sustained usage: the level goes up one rung */
    DECISION_EXPIRED,     /* the level's limits end; the level itself stays */
    DECISION_DECAYED,     /* a quiet period lowered the level by one */
    DECISION_FORBIDDEN,   /* a forbidden program is running: stop it */
    DECISION_COMPUTE,     /* a compute program ran above its threshold past its grace */
    DECISION_EXEMPT_ENDED, /* a temporary exemption (loginguardctl exempt) ran out */
    DECISION_MEMORY_OVER, /* above the level's memory for a window: the largest is stopped */
};

struct decision {
    enum decision_kind kind;
    uid_t uid;
    int level_before, level_after;
    uint64_t until;           /* for VIOLATION: when the new level's limits end */
    const char *reason;       /* "cpu", "memory", or the matching rule's name */
    double cpu;               /* cores, averaged over `window` */
    uint64_t memory;          /* bytes, now */
    uint64_t window;          /* usec the usage covers */
    /* Indices into the snapshot's procs, highest CPU first (most memory
     * first for a violation on memory). */
    size_t procs[TOP_PROCS];
    size_t proc_count;
};

struct decisions {
    struct decision *items;
    size_t count, capacity;
};

void engine_step(const struct policy *p, struct engine_state *st, const struct snapshot *snap,
                 struct decisions *out);

/* An admin's word (loginguardctl): forgive puts uid back at level none
 * with no limits and a fresh window, and returns the level it had (0 and
 * nothing done for a user with no state); exempt protects uid until
 * `until` (realtime usec, as the snapshot's time), 0 ends an exemption.
 * The engine ends an exemption itself at the first step at or past it. */
int engine_forgive(struct engine_state *st, uid_t uid, uint64_t now);
void engine_exempt(struct engine_state *st, uid_t uid, uint64_t until);

/* A run above a [violation] threshold as the engine watches it: since
 * when, how long it has lasted and the usage averaged over it, at the
 * last step (now is that step's time).  False when there is none.  For
 * loginguardctl why: read here, not worked out again. */
struct engine_run {
    uint64_t since, elapsed;
    double average;      /* cores, or bytes */
};
bool engine_cpu_run(const struct user_state *us, uint64_t now, struct engine_run *out);
bool engine_memory_run(const struct user_state *us, uint64_t now, struct engine_run *out);

/* The watch on a compute or forbidden process, or NULL. */
const struct proc_watch *engine_watch(const struct engine_state *st, pid_t pid,
                                      uint64_t start_time);
/* A compute rule's threshold (cores) and grace (usec), the [classes]
 * defaults where the rule (looked up by name; NULL: none) sets none. */
void engine_compute_limits(const struct policy *p, const char *rule, double *cpu,
                           uint64_t *grace);

/* uid's state, made (zeroed) with create.  The table is kept sorted by
 * uid, so making one may move the others: hold no pointer across it. */
struct user_state *engine_user(struct engine_state *st, uid_t uid, bool create);
void engine_state_free(struct engine_state *st);
void decisions_clear(struct decisions *d);
void decisions_free(struct decisions *d);
const char *decision_name(enum decision_kind k);
/* "cpu", "memory", "memory_pressure" (the decision's reason), or "". */
const char *violation_reason_name(enum violation_reason r);

/* Whether a violation's process is stopped at a level that stops (the
 * daemon's actions, and the replay). */
bool engine_offending(const struct decision *d, const struct proc_sample *ps);

#endif
