/* Where a user stands with the engine (engine.h): the one record the
 * engine keeps per user, which the policy's answers about a user
 * (user_standing.h) read as well. */
#ifndef LOGINGUARD_USER_STATE_H
#define LOGINGUARD_USER_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What the last violation was about, as a user is told at login. */
enum violation_reason {
    VIOLATION_REASON_NONE,
    VIOLATION_REASON_CPU,
    VIOLATION_REASON_MEMORY,
    VIOLATION_REASON_PRESSURE,  /* the node short of memory */
    VIOLATION_REASON_COUNT
};

/* Where a user stands.  level, since, until, quiet_since, last_violation,
 * violations, exempt_until and the last_* of the violation are what a
 * restart must keep (state.c); the rest is the window being watched now. */
struct user_state {
    uid_t uid;
    int level;                /* rung of the ladder, 0 = none */
    uint64_t since;           /* when the level was entered */
    uint64_t until;           /* the level's limits apply until then; 0 = not applied */
    uint64_t quiet_since;     /* last violation, expiry or decay: decay counts from here */
    uint64_t last_violation;
    uint32_t violations;      /* ever, on this node */
    uint64_t exempt_until;    /* temporary exemption, 0 = none */
    /* The last violation's usage: why the user is at their level. */
    enum violation_reason last_reason;
    double last_cpu;          /* cores, averaged over last_window */
    uint64_t last_memory;     /* bytes */
    uint64_t last_window;     /* usec */

    uint64_t cpu_over_since;  /* start of the current run above [violation] cpu, 0 = none */
    double cpu_over_sum;      /* core-usec used during that run */
    uint64_t mem_over_since;  /* the same for [violation] memory */
    double mem_over_sum;      /* byte-usec */
    /* Since when the user holds more than their level's memory, every
     * sample (the limit did not take: see engine_step); 0 = not. */
    uint64_t over_level_since;
    bool limits_pending;      /* a violation at the last sample: its limits were being set */
    bool in_snapshot;         /* during engine_step: the user is in this sample */
};

#endif
