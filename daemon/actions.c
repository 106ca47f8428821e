/* Enforce mode: the daemon carries out the engine's decisions.  Each
 * step is an event; nothing here runs in observe mode. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "util.h"

/* A process of a stop level is "offending" above this CPU (cores): an
 * idle shell or editor of the same user is left alone. */
#define OFFENDING_CPU 0.1

static const char *user_name(struct daemon *d, uid_t uid)
{
    return users_lookup(&d->sampler.users, &d->policy, uid)->name;
}

static json_t *action_event(struct daemon *d, const char *name, uid_t uid)
{
    return event_action(name, uid, user_name(d, uid), mode_name(d->policy.mode), d->events.host,
                        env_realtime(&d->env));
}

static json_t *json_target(const struct stop_target *t)
{
    return json_pack("{s:i, s:o, s:o}", "pid", (int)t->pid, "comm",
                     json_from_bytes(t->comm, strlen(t->comm)), "exe",
                     json_from_bytes(t->exe, strlen(t->exe)));
}

/* SIGTERM one process and everything it started, each after its identity
 * is checked again. */
static void stop_tree(struct daemon *d, pid_t pid, uid_t uid, const char *reason)
{
    struct stop_target *tree;
    size_t n = sampler_process_tree(&d->sampler, pid, uid, &tree);
    for (size_t i = 0; i < n; i++) {
        enum stop_result r = stopper_terminate(&d->enforcer.stopper, d->env.proc, &tree[i],
                                               d->policy.stop_grace, env_boottime(&d->env));
        int error = errno;
        if (r == STOP_GONE)
            continue;
        const char *name = r == STOP_SIGNALLED ? "process_stopping"
                           : r == STOP_IDENTITY_CHANGED ? "stop_skipped"
                                                        : "stop_error";
        json_t *e = action_event(d, name, uid);
        json_object_set_new(e, "process", json_target(&tree[i]));
        json_object_set_new(e, "reason", json_from_bytes(reason, strlen(reason)));
        if (r == STOP_SIGNALLED)
            json_object_set_new(e, "signal", json_string("SIGTERM"));
        if (r == STOP_FAILED)
            json_object_set_new(e, "message", json_string(strerror(error)));
        event_log_write(&d->events, e);
    }
    free(tree);
}

void act_on_decision(struct daemon *d, const struct decision *x)
{
    const struct proc_sample *procs = d->snap.procs;
    switch (x->kind) {
    case DECISION_FORBIDDEN:
    case DECISION_COMPUTE:
        stop_tree(d, procs[x->procs[0]].pid, x->uid, x->reason ? x->reason : "rule");
        break;
    case DECISION_VIOLATION:
        if (!d->policy.levels[x->level_after - 1].stop)
            break;
        for (size_t i = 0; i < x->proc_count; i++)
            if (procs[x->procs[i]].cpu >= OFFENDING_CPU)
                stop_tree(d, procs[x->procs[i]].pid, x->uid, d->policy.levels[x->level_after - 1].name);
        break;
    default:
        break;
    }
}

static bool counted(struct daemon *d, uid_t uid)
{
    return !d->sampler.use_counters || counters_find(&d->sampler.counters, uid);
}

static void set_limits(struct daemon *d, uid_t uid, const struct user_state *us, uint64_t now)
{
    struct limits l = enforcer_wanted(&d->policy, us, now);
    char err[512];
    int rc = enforcer_set_limits(&d->enforcer, uid, &l, d->policy.scan_interval, err, sizeof(err));
    if (rc == 0)
        return;
    /* The first limits of a user make their cgroup (cgroupfs). */
    if (rc > 0 && !counted(d, uid))
        sampler_counters_changed(&d->sampler);
    json_t *e = action_event(d, rc > 0 ? "limits_set" : "limits_error", uid);
    json_object_set_new(e, "limits", json_from_limits(l.cpu, l.memory, l.tasks));
    bool at_level = us && us->level > 0 && us->until > now;
    json_object_set_new(e, "level", json_integer(at_level ? us->level : 0));
    if (rc < 0)
        json_object_set_new(e, "message", json_from_bytes(err, strlen(err)));
    event_log_write(&d->events, e);
}

static bool protected_user(struct daemon *d, uid_t uid, uint64_t now)
{
    const struct user_info *info = users_lookup(&d->sampler.users, &d->policy, uid);
    struct user_sample u = {.uid = uid, .exempt_group = info->exempt_group};
    copy_string(u.name, sizeof(u.name), info->name);
    return engine_user_protected(&d->policy, engine_user(&d->engine, uid, false), &u, now);
}

/* A user exempted for a while (loginguardctl exempt) and not otherwise
 * protected: their level's limits are lifted while it lasts, not the
 * share. */
static bool exempted_for_now(struct daemon *d, uid_t uid, uint64_t now)
{
    const struct user_state *us = engine_user(&d->engine, uid, false);
    if (!us || us->exempt_until <= now)
        return false;
    struct user_state without = *us;
    without.exempt_until = 0;
    const struct user_info *info = users_lookup(&d->sampler.users, &d->policy, uid);
    struct user_sample u = {.uid = uid, .exempt_group = info->exempt_group};
    copy_string(u.name, sizeof(u.name), info->name);
    return !engine_user_protected(&d->policy, &without, &u, now);
}

void sync_limits(struct daemon *d)
{
    uint64_t now = d->snap.now;
    for (size_t i = 0; i < d->snap.user_count; i++) {
        uid_t uid = d->snap.users[i].uid;
        if (!protected_user(d, uid, now))
            set_limits(d, uid, engine_user(&d->engine, uid, false), now);
        else if (exempted_for_now(d, uid, now))
            set_limits(d, uid, NULL, now);
    }
    /* A user with no process now gets theirs when one shows up: no cgroup
     * is kept or made for nobody (and systemd has no slice for them). */
}

void adopt_new_processes(struct daemon *d)
{
    const struct new_proc *procs;
    size_t n = sampler_take_new(&d->sampler, &procs);
    uint64_t now = env_realtime(&d->env);
    for (size_t i = 0; i < n; i++) {
        /* Exempt programs too: exemption spares a process from being
         * stopped, not from its user's share.  A process born inside
         * its owner's cgroup (a child of one already there) needs no move. */
        uid_t owner = procs[i].owner;
        if (!procs[i].outside || protected_user(d, owner, now))
            continue;
        /* The user's cgroup is made with their limits (an event when new). */
        set_limits(d, owner, engine_user(&d->engine, owner, false), now);
        char err[512];
        int rc = enforcer_adopt(&d->enforcer, owner, procs[i].pid, procs[i].start_time, err,
                                sizeof(err));
        if (rc == 0)
            sampler_adopted(&d->sampler, procs[i].pid);
        else if (rc < 0) {
            json_t *e = action_event(d, "limits_error", owner);
            json_object_set_new(e, "message", json_from_bytes(err, strlen(err)));
            event_log_write(&d->events, e);
        }
    }
}

/* One pread of pids.current a user instead of reading cgroup.procs. */
static bool user_busy(uid_t uid, void *arg)
{
    struct daemon *d = arg;
    const struct user_cgroup *g =
        d->sampler.use_counters ? counters_find(&d->sampler.counters, uid) : NULL;
    return g && counters_tasks_now(g) > 0;
}

void remove_empty_cgroups(struct daemon *d)
{
    enforcer_remove_empty(&d->enforcer, user_busy, d);
}

static void report_stop(const struct stop_target *t, enum stop_outcome outcome, void *arg)
{
    struct daemon *d = arg;
    json_t *e = action_event(d, outcome == STOP_KILLED ? "process_killed" : "process_exited", t->uid);
    json_object_set_new(e, "process", json_target(t));
    if (outcome == STOP_KILLED)
        json_object_set_new(e, "signal", json_string("SIGKILL"));
    event_log_write(&d->events, e);
}

uint64_t reap_stops(struct daemon *d)
{
    return stopper_tick(&d->enforcer.stopper, env_boottime(&d->env), report_stop, d);
}
