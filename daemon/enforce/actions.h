/* Enforce mode: carrying out the engine's decisions (see actions.c).
 * What the actions are given of the daemon: its environment, the policy,
 * the enforcer, the event log, the engine's state (who is protected), the
 * user names, the per-user counters the sampler measured (NULL where
 * it reads /proc), and the metrics that count what the actions did. */
#ifndef LOGINGUARD_ACTIONS_H
#define LOGINGUARD_ACTIONS_H

#include "base/environment.h"
#include "enforce/enforcer.h"
#include "enforce/proc_table.h"
#include "engine.h"
#include "metrics.h"
#include "observe/cgroup_counters.h"
#include "observe/directory.h"
#include "observe/known_procs.h"
#include "policy.h"
#include "record/events.h"
#include "snapshot.h"

struct actions {
    const struct environment *env;
    const struct policy *policy;
    struct enforcer *enforcer;
    struct event_log *events;
    struct engine_state *engine;
    struct directory *directory;
    struct user_counters *counters;
    struct metrics *metrics;
};

/* Stop what a decision says to stop (forbidden, compute, a stop level):
 * the processes it names (in snap) and their descendants in procs, the
 * decided user's processes. */
void act_on_decision(const struct actions *a, const struct decision *x,
                     const struct snapshot *snap, const struct proc_table *procs);
/* Every user of snap gets the limits they should have now; changes are
 * events.  Returns true when a user's cgroup was made (the first limits
 * of a user the counters do not know yet): the sampler counts it from
 * the next sample. */
bool sync_limits(const struct actions *a, const struct snapshot *snap);
/* The same for uid alone (its standing changed elsewhere: a cluster's
 * row), if snap saw it. */
bool sync_user_limits(const struct actions *a, const struct snapshot *snap, uid_t uid);
/* cgroupfs: move a newly seen user process into its user's cgroup
 * (made with their limits when new: *made says so).  True when it was
 * moved. */
bool adopt_process(const struct actions *a, const struct new_proc *p, bool *made);
/* cgroupfs: a new session's process (pam_loginguard's caller, root's),
 * pid started at start_time, into the cgroup of uid, who logs in (made
 * with their limits when new), so that the shell it starts is born there.
 * False when not moved: another backend (systemd places sessions
 * itself), a protected user, or the move failed (an event). */
bool place_session(const struct actions *a, uid_t uid, pid_t pid, uint64_t start_time,
                   bool *made);
/* cgroupfs: remove the cgroups of users with no process left; only those
 * whose task counter reads 0 now (or who have none) are looked at. */
void remove_empty_cgroups(const struct actions *a);
/* SIGKILL what outlived its grace; returns the next deadline or 0. */
uint64_t reap_stops(const struct actions *a);

#endif
