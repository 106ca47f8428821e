/* The sampler's full sweep: every known process looked at again (uid
 * changes, execs, strays outside their cgroup, shared memory held), and a
 * person's processes as the sampler knows them, for the effectors. */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "observe/sampler.h"
#include "observe/sampler_parts.h"
#include "units.h"
#include "util.h"

/* Whether the process ran since the last sweep: only then can it have
 * executed another program.  Read now, not taken from the last sample:
 * with per-user counters a quiet user's processes are not read between
 * sweeps. */
static bool ran_since_sweep(const struct sampler *s, struct tracked_proc *t)
{
    uint64_t activity;
    if (t->held_fd >= 0 && t->held_is_sched) {
        if (read_proc_runtime(t, &activity) < 0)
            return false; /* gone: the next sample forgets it */
    } else {
        struct proc_stat st;
        if (!read_own_stat(s, t, &st))
            return false;
        activity = st.utime + st.stime;
    }
    bool ran = activity != t->swept_activity;
    t->swept_activity = activity;
    return ran;
}

/* Where every process is, from the user cgroups' own lists: cheaper than
 * reading each process's cgroup file, and it finds a process that left
 * while it slept (holding memory outside, say). */
static void find_strays(struct sampler *s, uint32_t sweep_generation)
{
    counters_discover(&s->counters);
    s->counters_stale = false; /* the next sample need not list them again */
    for (size_t i = 0; i < s->counters.count; i++) {
        pid_t *pids;
        size_t n = counters_pids(&s->counters.groups[i], &pids);
        for (size_t k = 0; k < n; k++) {
            struct tracked_proc *t = lookup_proc(s, pids[k]);
            if (t && t->owner == s->counters.groups[i].uid)
                t->swept_inside = sweep_generation;
        }
        free(pids);
    }
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b]; t; t = t->next) {
            if (t->ignored || t->slurm_job)
                continue;   /* a job's is where Slurm put it */
            bool left = t->swept_inside != sweep_generation && !t->outside;
            t->outside = t->swept_inside != sweep_generation;
            s->watch_dirty |= t->outside;
            if (left) {
                t->suspect = true;
                remember_new_proc(s, t); /* the backend puts it back */
            }
        }
    }
}

/* Slurm's processes, once a sweep: each job's process is read (its
 * owner's Slurm figures, and a parent of its that ended: sampler_jobs.c),
 * whether it still is one is asked again, and so is whether a process
 * whose parent was not known at its first sight is one; then each
 * person's jobs are counted.  Before find_strays: one that left its job
 * is a stray there. */
static void sweep_jobs(struct sampler *s, uint64_t now)
{
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b], *next; t; t = next) {
            next = t->next;
            if (t->ignored)
                continue;
            if (t->slurm_job && refresh_proc(s, t, now, s->scope.sample_interval) < 0) {
                forget_proc(s, t);
                continue;
            }
            recheck_job(s, t);
        }
    }
    settle_jobs(s);
    count_jobs(s);
}

/* An owner's command lines are asked for again once none of their
 * processes whose read stalled is left. */
static void rebuild_withheld(struct sampler *s)
{
    s->withheld_count = 0;
    for (size_t b = 0; b < s->known.bucket_count; b++)
        for (const struct tracked_proc *t = s->known.buckets[b]; t; t = t->next)
            if (t->argv_blocked)
                withhold_owner(s, t->owner);
}

/* Owners follow /etc/subuid: a changed file starts every process over. */
static void refresh_owners(struct sampler *s)
{
    if (subuid_refresh(&s->subuids, s->env->subuid) == 0)
        return;
    s->subuids_loaded = true;
    for (size_t b = 0; b < s->known.bucket_count; b++)
        for (struct tracked_proc *t = s->known.buckets[b], *next; t; t = next) {
            next = t->next;
            if (subuid_owner(&s->subuids, t->uid) != t->owner)
                forget_proc(s, t);
        }
}



/* This sweep's walks over descriptors (shm_fd_walk.h) through the
 * watched processes (not one whose reads stalled the reader: its owner
 * is withheld while it lives); their answers come in between samples. */
static void walk_descriptors(struct sampler *s)
{
    struct fd_walk_proc *procs = xreallocarray(NULL, s->known.count + 1, sizeof(*procs));
    size_t n = 0;
    for (size_t b = 0; b < s->known.bucket_count; b++)
        for (const struct tracked_proc *t = s->known.buckets[b]; t; t = t->next)
            if (!t->ignored && !t->zombie && !t->argv_blocked)
                procs[n++] = (struct fd_walk_proc){t->owner, t->pid, t->start_time};
    fd_walk_begin(&s->fd_walk, procs, n);
    free(procs);
    walk_descriptors_on(s);
}

/* The /proc path's shared memory (shm_held.h): the walk goes on, and
 * what each holder's processes map is read again (before the walks over
 * descriptors go on: see ask_fds). */
static void read_shm_held(struct sampler *s)
{
    shm_held_sweep(&s->shm);
    for (size_t b = 0; b < s->known.bucket_count; b++)
        for (const struct tracked_proc *t = s->known.buckets[b]; t; t = t->next)
            if (!t->ignored && !t->zombie && shm_held_worth_reading(&s->shm, t->owner))
                shm_held_read_mapped(&s->shm, t->pid, t->owner);
}

/* One pass over /proc.  The uid is the owner of /proc/PID (one fstatat,
 * where libproc2's reap parses /proc/PID/status for the same number).
 * While the proc connector reports every exec, the sweep need not look
 * for them; after lost events it does. */
/* With counters and the proc connector live and nothing lost, every
 * process that started, changed user or ended has been reported: the
 * listing of /proc (a fifth of the daemon's CPU at 10,000 processes) is
 * an audit, at the first sweep and every PROC_AUDIT_SWEEPS-th after.
 * Events lost (ENOBUFS) make the next sample sweep with a listing. */
#define PROC_AUDIT_SWEEPS 10

static bool lists_proc(const struct sampler *s, bool look_for_execs)
{
    return !s->use_counters || !s->events_live || look_for_execs ||
           s->sweeps % PROC_AUDIT_SWEEPS == 1;
}

/* Between audits: every process's stat is read again when it is next
 * visited (a sleeping process's memory, as a listing would). */
static void mark_stat_due(struct sampler *s)
{
    for (size_t b = 0; b < s->known.bucket_count; b++)
        for (struct tracked_proc *t = s->known.buckets[b]; t; t = t->next)
            t->stat_due = true;
}

void sampler_sweep(struct sampler *s)
{
    uint64_t now = env_boottime(s->env);
    s->counters_stale = true;
    refresh_owners(s);
    bool look_for_execs = !s->events_live || s->rescan;
    s->rescan = false;
    uint32_t sweep_generation = ++s->generation;
    s->sweeps++;
    s->checks_by_count = 0;
    bool listing = lists_proc(s, look_for_execs);
    if (!listing)
        mark_stat_due(s);
    for (pid_t pid = listing ? first_proc_pid(s) : 0; pid; pid = next_proc_pid(s)) {
        struct tracked_proc *t = lookup_proc(s, pid);
        /* A root process that became a user's (a late setuid) starts over.
         * A user's process keeps its user: leaving it takes a setuid
         * program, whose children are new processes anyway. */
        if (t && t->ignored && !same_proc_owner(s, t)) {
            forget_proc(s, t);
            t = NULL;
        }
        if (!t) {
            t = discover_proc(s, pid, now, s->scope.sample_interval);
            if (t)
                t->swept_inside = t->outside ? 0 : sweep_generation;
            continue;
        }
        /* Usage is left to the samples, which time their own readings. */
        t->generation = sweep_generation;
        t->stat_due = true;
        if (!t->ignored && look_for_execs && ran_since_sweep(s, t) &&
            reread_program(s, t) < 0)
            t->generation = 0; /* gone: pruned below */
    }
    if (listing)
        prune_procs(s, sweep_generation);
    sweep_jobs(s, now);
    if (s->use_counters)
        find_strays(s, sweep_generation);
    else
        read_shm_held(s);
    rebuild_withheld(s);
    if (!s->use_counters)
        walk_descriptors(s);
}

size_t sampler_take_new(struct sampler *s, const struct new_proc **procs)
{
    size_t n = s->new_count;
    *procs = s->new_procs;
    s->new_count = 0;
    return n;
}

/* A new scope (a reload): every program is judged again, by its
 * executable and name now and by its command line when that is read
 * again. */
void sampler_rescope(struct sampler *s, const struct sampler_scope *scope)
{
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b]; t; t = t->next) {
            s->scope.judge->put(s->scope.judge, t->prog);
            t->prog = NULL;
            t->class = CLASS_NONE;
            t->rule = NULL;
        }
    }
    s->scope = *scope;
    s->scope.judge->forget_all(s->scope.judge);
    for (size_t b = 0; b < s->known.bucket_count; b++) {
        for (struct tracked_proc *t = s->known.buckets[b], *next; t; t = next) {
            next = t->next;
            if (!t->ignored && reread_program(s, t) < 0)
                forget_proc(s, t);
        }
    }
}
