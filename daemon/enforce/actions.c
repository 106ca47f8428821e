/* Enforce mode: the daemon carries out the engine's decisions.  Each
 * step is an event; nothing here runs in observe mode. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enforce/actions.h"
#include "user_standing.h"
#include "util.h"

static json_t *action_event(const struct actions *a, const char *name, uid_t uid)
{
    return event_action(name, uid, directory_name_of(a->directory, uid),
                        mode_name(a->policy->mode), a->events->host, env_realtime(a->env));
}

static json_t *json_target(const struct stop_target *t)
{
    return json_pack("{s:i, s:o, s:o}", "pid", (int)t->pid, "comm",
                     json_from_bytes(t->comm, strlen(t->comm)), "exe",
                     json_from_bytes(t->exe, strlen(t->exe)));
}

/* SIGTERM one process and everything it started, each after its identity
 * is checked again. */
static void stop_tree(const struct actions *a, const struct proc_table *procs, pid_t pid,
                      uid_t uid, const char *reason)
{
    struct stop_target *tree;
    size_t n = proc_table_tree(procs, pid, &tree);
    for (size_t i = 0; i < n; i++) {
        enum stop_result r = stopper_terminate(&a->enforcer->stopper, a->env->proc, &tree[i],
                                               a->policy->stop_grace, env_boottime(a->env));
        int error = errno;
        metrics_count_action(a->metrics, r == STOP_SIGNALLED         ? ACTION_STOP_SIGNALLED
                                          : r == STOP_GONE             ? ACTION_STOP_GONE
                                          : r == STOP_IDENTITY_CHANGED ? ACTION_STOP_SKIPPED
                                                                       : ACTION_STOP_FAILED);
        if (r == STOP_GONE)
            continue;
        const char *name = r == STOP_SIGNALLED ? "process_stopping"
                           : r == STOP_IDENTITY_CHANGED ? "stop_skipped"
                                                        : "stop_error";
        json_t *e = action_event(a, name, uid);
        json_object_set_new(e, "process", json_target(&tree[i]));
        json_object_set_new(e, "reason", json_from_bytes(reason, strlen(reason)));
        if (r == STOP_SIGNALLED)
            json_object_set_new(e, "signal", json_string("SIGTERM"));
        if (r == STOP_FAILED)
            json_object_set_new(e, "message", json_string(strerror(error)));
        event_log_write(a->events, e);
    }
    free(tree);
}

void act_on_decision(const struct actions *a, const struct decision *x,
                     const struct snapshot *snap, const struct proc_table *procs)
{
    const struct proc_sample *ps = snap->procs;
    const struct level *level = x->level_after ? &a->policy->levels[x->level_after - 1] : NULL;
    switch (x->kind) {
    case DECISION_FORBIDDEN:
    case DECISION_COMPUTE:
        stop_tree(a, procs, ps[x->procs[0]].pid, x->uid, x->reason ? x->reason : "rule");
        break;
    case DECISION_MEMORY_OVER:
        stop_tree(a, procs, ps[x->procs[0]].pid, x->uid, level ? level->name : "memory");
        break;
    case DECISION_VIOLATION:
        if (!level || !level->stop)
            break;
        for (size_t i = 0; i < x->proc_count; i++)
            if (engine_offending(x, &ps[x->procs[i]]))
                stop_tree(a, procs, ps[x->procs[i]].pid, x->uid, level->name);
        break;
    default:
        break;
    }
}

static bool counted(const struct actions *a, uid_t uid)
{
    return !a->counters || counters_find(a->counters, uid);
}

/* uid's limits as they should be now, given why it is protected
 * (user_limits_wanted); true when its cgroup was made just now. */
static bool set_limits(const struct actions *a, uid_t uid, enum protection why, uint64_t now)
{
    const struct user_state *us = engine_user(a->engine, uid, false);
    struct limits l;
    if (!user_limits_wanted(a->policy, us, why, now, &l))
        return false;
    char err[512];
    int rc = enforcer_set_limits(a->enforcer, uid, &l, a->policy->scan_interval, err,
                                 sizeof(err));
    if (rc == 0)
        return false;
    json_t *e = action_event(a, rc > 0 ? "limits_set" : "limits_error", uid);
    json_object_set_new(e, "limits", json_from_limits(l.cpu, l.memory, l.tasks));
    /* A temporary exemption lifts the level: what is set is the share. */
    bool at_level = why == PROTECTION_NONE && us && us->level > 0 && us->until > now;
    metrics_count_action(a->metrics, at_level ? (rc > 0 ? ACTION_LIMITS_LEVEL_DONE
                                                         : ACTION_LIMITS_LEVEL_FAILED)
                                               : (rc > 0 ? ACTION_LIMITS_SHARE_DONE
                                                         : ACTION_LIMITS_SHARE_FAILED));
    json_object_set_new(e, "level", json_integer(at_level ? us->level : 0));
    if (rc < 0 || rc == 2)
        json_object_set_new(e, "message", json_from_bytes(err, strlen(err)));
    event_log_write(a->events, e);
    /* The first limits of a user make their cgroup (cgroupfs). */
    return rc > 0 && !counted(a, uid);
}

static enum protection protection(const struct actions *a, uid_t uid, uint64_t now)
{
    struct user_sample u = directory_sample(a->directory, uid);
    return user_protection(a->policy, engine_user(a->engine, uid, false), &u, now);
}

/* uid's limits as they should be now; true when its cgroup was made. */
static bool sync_one(const struct actions *a, uid_t uid, uint64_t now)
{
    return set_limits(a, uid, protection(a, uid, now), now);
}

bool sync_limits(const struct actions *a, const struct snapshot *snap)
{
    bool made = false;
    for (size_t i = 0; i < snap->user_count; i++)
        made |= sync_one(a, snap->users[i].uid, snap->now);
    /* A user with no process now gets theirs when one shows up: no cgroup
     * is kept or made for nobody (and systemd has no slice for them). */
    return made;
}

bool sync_user_limits(const struct actions *a, const struct snapshot *snap, uid_t uid)
{
    /* The time of the snapshot, as sync_limits: its limits are judged
     * by the same clock as at the last sample. */
    return snapshot_find_user(snap, uid) ? sync_one(a, uid, snap->now) : false;
}

/* pid (started at start_time) into owner's cgroup, made with their
 * limits when new (*made says so).  enforcer_adopt's return. */
static int move_to_user(const struct actions *a, uid_t owner, pid_t pid, uint64_t start_time,
                        uint64_t now, bool *made)
{
    *made |= set_limits(a, owner, PROTECTION_NONE, now);
    char err[512];
    int rc = enforcer_adopt(a->enforcer, owner, pid, start_time, err, sizeof(err));
    if (rc != 2) /* a Slurm job's stays where Slurm put it: no move was tried */
        metrics_count_action(a->metrics, rc == 0  ? ACTION_MOVE_DONE
                                         : rc > 0 ? ACTION_MOVE_GONE
                                                  : ACTION_MOVE_FAILED);
    if (rc < 0) {
        json_t *e = action_event(a, "limits_error", owner);
        json_object_set_new(e, "message", json_from_bytes(err, strlen(err)));
        event_log_write(a->events, e);
    }
    return rc;
}

bool adopt_process(const struct actions *a, const struct new_proc *p, bool *made)
{
    uint64_t now = env_realtime(a->env);
    /* Exempt programs too: exemption spares a process from being stopped,
     * not from its user's share.  A process born inside its owner's
     * cgroup (a child of one already there) needs no move. */
    if (!p->outside || protection(a, p->owner, now) != PROTECTION_NONE)
        return false;
    return move_to_user(a, p->owner, p->pid, p->start_time, now, made) == 0;
}

bool place_session(const struct actions *a, uid_t uid, pid_t pid, uint64_t start_time,
                   bool *made)
{
    uint64_t now = env_realtime(a->env);
    if (a->enforcer->backend != BACKEND_CGROUPFS || protection(a, uid, now) != PROTECTION_NONE)
        return false;
    return move_to_user(a, uid, pid, start_time, now, made) == 0;
}

/* A user's cgroup stays while it has processes (one pread of
 * pids.current, not a read of cgroup.procs), or memory charged to it:
 * files in /dev/shm or another tmpfs outlive the session that wrote them,
 * and a removed cgroup's charges would go to its parent, out of the
 * user's share and out of sight. */
static bool user_busy(uid_t uid, void *arg)
{
    const struct actions *a = arg;
    const struct user_cgroup *g =
        a->counters ? counters_find(a->counters, uid) : NULL;
    return g && (counters_tasks_now(g) > 0 || counters_memory_now(a->counters, g) > 0);
}

void remove_empty_cgroups(const struct actions *a)
{
    enforcer_remove_empty(a->enforcer, user_busy, (void *)a);
}

static void report_stop(const struct stop_target *t, enum stop_outcome outcome, void *arg)
{
    const struct actions *a = arg;
    metrics_count_action(a->metrics,
                         outcome == STOP_KILLED ? ACTION_STOP_END_KILLED : ACTION_STOP_END_EXITED);
    json_t *e = action_event(a, outcome == STOP_KILLED ? "process_killed" : "process_exited",
                             t->uid);
    json_object_set_new(e, "process", json_target(t));
    if (outcome == STOP_KILLED)
        json_object_set_new(e, "signal", json_string("SIGKILL"));
    event_log_write(a->events, e);
}

uint64_t reap_stops(const struct actions *a)
{
    return stopper_tick(&a->enforcer->stopper, env_boottime(a->env), report_stop, (void *)a);
}
