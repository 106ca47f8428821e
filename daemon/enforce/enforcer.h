/* What enforce mode does with the engine's decisions: limits on users'
 * cgroups through a backend (systemd or cgroupfs), processes stopped
 * through the stopper, stray processes moved into their user's cgroup
 * (cgroupfs).  In observe mode none of this exists: nothing is opened,
 * written or signalled. */
#ifndef LOGINGUARD_ENFORCER_H
#define LOGINGUARD_ENFORCER_H

#include <stdbool.h>

#include "base/environment.h"
#include "cgroup_limits.h"
#include "enforce/cgroupfs.h"
#include "enforce/stopper.h"
#include "enforce/systemd_backend.h"
#include "engine.h"
#include "policy.h"

struct applied_limits {
    uid_t uid;
    struct limits limits;
    bool failed;              /* the backend refused `limits` */
    bool held_above;          /* memory held above `limits`' (cgroupfs_apply) */
    uint64_t retry_at;        /* boottime usec: not before then again */
};

struct enforcer {
    const struct environment *env;  /* the caller's: /proc, the cgroup root, the clock */
    enum backend backend;   /* SYSTEMD or CGROUPFS once open */
    int lock_fd;            /* the lock on the cgroups written: one daemon a node */
    struct cgroupfs cgroupfs;
    struct systemd_backend systemd;
    struct applied_limits *applied;
    size_t count, capacity;
    struct stopper stopper;
};

/* Open backend (BACKEND_AUTO: systemd where it can limit, else
 * cgroupfs, below cgroup_parent).  env must outlive the enforcer. */
int enforcer_open(struct enforcer *e, const struct environment *env, enum backend backend,
                  const char *cgroup_parent, char *err, size_t err_len);
/* With release, every user's limits are lifted first (--release-on-exit). */
void enforcer_close(struct enforcer *e, bool release);

/* Lift the limits of every user cgroup the backend finds, whoever set
 * them (a daemon that stopped without --release-on-exit, say).  With
 * cgroupfs, also move the processes left in them into the cgroup above
 * the parent, remove them, then the parent: nothing of loginguard's
 * stays.  For loginguardd --release, which package removal runs after
 * the daemon stopped.  Each cgroup that stays is named on stderr, with
 * why; returns how many stayed or kept their limits. */
int enforcer_release_all(struct enforcer *e);

/* Apply l to uid unless it already has it.  Returns 1 when something was
 * written, 0 when nothing had to be, -1 on error (err filled).  After an
 * error the same limits are tried again only after retry_usec.  2: all
 * but a memory limit below what the user holds and the kernel cannot
 * reclaim (v1), which is held where it stands (err says so): tried again
 * at every call, lowering the hold as usage falls, 1 once it is reached. */
int enforcer_set_limits(struct enforcer *e, uid_t uid, const struct limits *l,
                        uint64_t retry_usec, char *err, size_t err_len);

/* cgroupfs: remove the cgroups of users with no process left (called at
 * every sweep, so a cgroup lives at least a scan_interval after its last
 * process).  Their limits are set again if they come back.  Users for
 * whom busy says yes (their task counter is above 0)
 * are not looked at: opening each cgroup.procs costs. */
void enforcer_remove_empty(struct enforcer *e, bool (*busy)(uid_t uid, void *arg), void *arg);

/* Move a process into its owner's cgroup (which the owner's limits made):
 * user-UID with cgroupfs, a scope in user-UID.slice with systemd.  The
 * process is checked to be the one seen (pid and start time) just
 * before, and to be in no Slurm job's cgroup (Slurm's, never moved).
 * Returns 0 when moved, 1 when it is gone and 2 when it is a Slurm job's
 * (nothing done), -1 with err. */
int enforcer_adopt(struct enforcer *e, uid_t uid, pid_t pid, uint64_t start_time, char *err,
                   size_t err_len);

#endif
