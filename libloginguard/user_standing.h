/* What the policy says about one user now, the one answer every caller
 * reads (the engine, the enforcer, status, metrics, why, the PAM
 * module's requests): whether the user is protected and why, which limits
 * their cgroup should hold, and whether they are idle.  Pure: the user's
 * facts, the engine's word on them and the time come in. */
#ifndef LOGINGUARD_USER_STANDING_H
#define LOGINGUARD_USER_STANDING_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup_limits.h"
#include "policy.h"
#include "snapshot.h"
#include "user_state.h"

/* Why a user is never judged, the first that applies in this order (the
 * order status and loginguardctl why give the reason in). */
enum protection {
    PROTECTION_NONE,
    PROTECTION_ROOT,
    PROTECTION_SYSTEM,         /* a uid below min_uid */
    PROTECTION_EXEMPT_USER,    /* listed in [exempt] users */
    PROTECTION_EXEMPT_GROUP,   /* member of an [exempt] group */
    PROTECTION_DIRECTORY,      /* the directory has not said who this is yet */
    PROTECTION_TEMPORARY,      /* loginguardctl exempt, until st->exempt_until */
};

/* u gives the uid, name, [exempt] group and whether the directory has
 * answered; st (may be NULL) the temporary exemption. */
enum protection user_protection(const struct policy *p, const struct user_state *st,
                                const struct user_sample *u, uint64_t now);
bool user_protected(const struct policy *p, const struct user_state *st,
                    const struct user_sample *u, uint64_t now);

/* The level whose limits hold the user now (a level above, until its
 * limits end), or NULL. */
const struct level *user_level_on(const struct policy *p, const struct user_state *us,
                                  uint64_t now);

/* The share, tightened by the user's level while its limits last (us may
 * be NULL: the share alone). */
struct limits user_limits(const struct policy *p, const struct user_state *us, uint64_t now);

/* The limits the user's cgroup should hold now, given why they are
 * protected: an unprotected user's (user_limits); a temporary exemption
 * lifts the level's limits, not the share.  False for a user protected
 * for good: nothing is set for them. */
bool user_limits_wanted(const struct policy *p, const struct user_state *us,
                        enum protection why, uint64_t now, struct limits *out);

/* Below this many cores a user is idle. */
#define USER_IDLE_CPU 0.05

/* A level or a temporary exemption: never idle, and listed first. */
bool user_marked(const struct user_state *us, uint64_t now);

/* Idle, left out of status and metrics (without --all): not marked, under
 * USER_IDLE_CPU cores, and, when memory_floor is not 0, under that many
 * bytes (metrics look at memory, status does not: both as documented). */
bool user_idle(const struct user_state *us, double cpu, uint64_t memory, uint64_t memory_floor,
               uint64_t now);

#endif
