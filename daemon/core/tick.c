/* One tick of the daemon: a sample, the engine's step, and what follows
 * from its decisions, in that order (see daemon_tick). */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_daemon.h"
#include "control/metrics_collect.h"
#include "core/daemon.h"
#include "core/daemon_parts.h"
#include "core/observe.h"
#include "enforce/actions.h"
#include "notify/notify.h"
#include "util.h"

/* The sample into the trace, with the command lines of the processes it
 * writes for the first time in its segment (read now, up to a bound: one
 * not read in time is written without). */
#define TRACE_ARGV_WAIT_USEC (50 * 1000)

static void record_trace(struct daemon *d)
{
    if (!d->trace.enabled)
        return;
    size_t *idx = xmalloc((d->snap.proc_count + 1) * sizeof(*idx)), n = 0;
    for (size_t i = 0; i < d->snap.proc_count; i++) {
        const struct proc_sample *ps = &d->snap.procs[i];
        if (!ps->argv && trace_writer_wants_argv(&d->trace, ps->pid, ps->start_time))
            idx[n++] = i;
    }
    argv_describe(&d->describer, &d->snap, idx, n, TRACE_ARGV_WAIT_USEC);
    free(idx);
    char err[700];
    if (trace_writer_sample(&d->trace, &d->snap, d->events.host, mode_name(d->policy.mode),
                            d->policy.sample_interval, err, sizeof(err)) < 0)
        daemon_trace_failed(d, err);
    else
        d->trace.failing = false;
}

/* Processes read by path because a descriptor cap was reached (see
 * FD_RESERVE): said at most once a sweep, while it goes on. */
static void report_held_refused(struct daemon *d)
{
    const struct sampler_stats *st = &d->sampler.stats;
    if (st->held_refused == d->held_refused_said)
        return;
    char msg[256];
    snprintf(msg, sizeof(msg),
             "%llu times a process's descriptor was not held: %llu are held, of at most %llu "
             "(%d for one person); those processes are read by path, and still count",
             (unsigned long long)(st->held_refused - d->held_refused_said),
             (unsigned long long)st->held_fds, (unsigned long long)d->sampler.held_max,
             HELD_PER_OWNER);
    daemon_log_event(d, "descriptors_capped", msg);
    d->held_refused_said = st->held_refused;
}

/* Whose subordinate uids are whose: said at start and whenever
 * /etc/subuid changes, so an admin sees what the daemon believes. */
static void report_subuids(struct daemon *d)
{
    const struct subuid_map *m = &d->sampler.subuids;
    if (!d->sampler.subuids_loaded)
        return;
    d->sampler.subuids_loaded = false;
    char msg[200];
    int n = snprintf(msg, sizeof(msg), "%zu subordinate uid ranges from /etc/subuid", m->count);
    if (m->skipped)
        snprintf(msg + n, sizeof(msg) - (size_t)n,
                 "; %zu lines skipped (not understood, an unknown name, or overlapping an "
                 "earlier range)", m->skipped);
    daemon_log_event(d, "subuids_loaded", msg);
}

/* A process whose command line could not be read in time is judged
 * without it; the admin is told, since a memory that stalls its readers
 * is what an evasion looks like. */
static void report_blocked_argv(struct daemon *d, const struct blocked_argv *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_t *e = event_action("argv_unreadable", b[i].owner,
                                 directory_name_of(&d->directory, b[i].owner),
                                 mode_name(d->policy.mode), d->events.host, env_realtime(&d->env));
        json_object_set_new(e, "process", json_pack("{s:i, s:o}", "pid", (int)b[i].pid, "comm",
                                                    json_from_bytes(b[i].comm,
                                                                    strlen(b[i].comm))));
        event_log_write(&d->events, e);
    }
}

/* The command lines of the processes that decisions name, for their
 * events and notices; one whose read stalled is reported now and given
 * to the sampler at the next tick. */
#define DECISION_ARGV_WAIT_USEC (100 * 1000)

static void describe_decisions(struct daemon *d)
{
    size_t idx[64], n = 0;
    for (size_t i = 0; i < d->decisions.count; i++) {
        const struct decision *x = &d->decisions.items[i];
        for (size_t k = 0; k < x->proc_count; k++) {
            if (n == sizeof(idx) / sizeof(idx[0])) {
                argv_describe(&d->describer, &d->snap, idx, n, DECISION_ARGV_WAIT_USEC);
                n = 0;
            }
            idx[n++] = x->procs[k];
        }
    }
    argv_describe(&d->describer, &d->snap, idx, n, DECISION_ARGV_WAIT_USEC);
}

/* Stalls the describer met (the decisions' and the trace's reads). */
static void report_describer_stalls(struct daemon *d)
{
    const struct blocked_argv *b;
    size_t n = argv_describer_take_stalled(&d->describer, &b);
    report_blocked_argv(d, b, n);
    for (size_t i = 0; i < n; i++)
        observe_feedback_stalled(&d->feedback, &b[i]);
}

/* Whether p waits for the directory (its owner may be protected): kept
 * in d->later.  (At most one entry a process the sampler tracks, and
 * only until the directory answers or gives up, directory.h.) */
static bool adopt_later(struct daemon *d, const struct new_proc *p)
{
    if (!p->outside || directory_user(&d->directory, p->owner)->answered)
        return false;
    d->later = grow_array(d->later, d->later_count, &d->later_capacity, sizeof(*d->later));
    d->later[d->later_count++] = *p;
    return true;
}

/* cgroupfs: newly seen user processes go into their user's cgroup, and
 * those that waited for the directory once it has answered. */
static void adopt_new_processes(struct daemon *d, const struct actions *a,
                                const struct observation *obs)
{
    const struct new_proc *fresh = obs->fresh;
    size_t n = obs->fresh_count;
    struct new_proc *waited = d->later;
    size_t waited_count = d->later_count;
    d->later = NULL;
    d->later_count = d->later_capacity = 0;
    bool made = false;
    for (size_t i = 0; i < waited_count + n; i++) {
        const struct new_proc *p = i < waited_count ? &waited[i] : &fresh[i - waited_count];
        if (!adopt_later(d, p) && adopt_process(a, p, &made))
            observe_feedback_adopted(&d->feedback, p->pid);
    }
    free(waited);
    d->feedback.counters_changed |= made;
}

/* The full sweep, every scan_interval, and what it finds to say. */
static void sweep(struct daemon *d, const struct actions *a, uint64_t now)
{
    sampler_sweep(&d->sampler);
    directory_refresh(&d->directory);
    report_subuids(d);
    report_held_refused(d);
    if (d->enforcing)
        remove_empty_cgroups(a);
    /* Free pages inside the heap go back too (what a burst of new
     * processes left), so the resident size follows what is held. */
    malloc_trim(0);
    d->next_sweep = now + d->policy.scan_interval;
}

/* The engine's step on the sample, and the record of what it decided. */
static void decide(struct daemon *d)
{
    decisions_clear(&d->decisions);
    engine_step(&d->policy, &d->engine, &d->snap, &d->decisions);
    history_update(&d->history, &d->snap);
    /* On disk before anything is done about it: a crash (kill -9) right
     * after a limit is set must not lose the level that set it.  A write
     * that failed before (a full disk) is tried again. */
    if (d->decisions.count > 0 || d->persist.state.pending)
        daemon_save_state(d);
    daemon_save_pending(d);  /* notified.json and login notices, the same way */
    cluster_daemon_decisions(&d->cluster_view); /* and the cluster's records of them */
    event_log_tick(&d->events, false);
}

/* Enforce mode, after the decisions: new processes moved into their
 * users' cgroups, every user's limits as they should be. */
static void act_after(struct daemon *d, const struct actions *a, const struct observation *obs)
{
    adopt_new_processes(d, a, obs);
    d->feedback.counters_changed |= sync_limits(a, &d->snap);
    d->next_stop = reap_stops(a);
}

/* One tick, one way: what the last tick did is told to the sampler; a
 * sample (observe); the engine's step; the command lines the decisions
 * name; events; in enforce mode the decisions carried out; notices last.
 * Nothing after the engine asks the sampler: what comes after it reads
 * the observation. */
void daemon_tick(struct daemon *d)
{
    uint64_t now = env_boottime(&d->env);
    struct actions a = daemon_actions(d);
    observe_hear(&d->sampler, &d->feedback);
    if (d->next_stop && now >= d->next_stop)
        d->next_stop = reap_stops(&a);
    if (now >= d->next_sweep)
        sweep(d, &a, now);
    if (now < d->next_sample)
        return;
    if (d->early_asked) { /* this sample takes a token */
        d->early_due = (d->early_due > now ? d->early_due : now) + EARLY_SAMPLE_GAP;
        d->early_asked = false;
    }
    daemon_drain_news(d); /* everything up to now, for this sample */
    struct observation obs;
    observe(&d->sampler, &d->policy, &d->snap, &obs);
    decide(d);
    describe_decisions(d);
    record_trace(d);
    report_blocked_argv(d, obs.blocked, obs.blocked_count);
    report_describer_stalls(d);
    /* Each decided user's processes, for what is done and said about it. */
    struct proc_table *procs = xcalloc(d->decisions.count + 1, sizeof(*procs));
    for (size_t i = 0; i < d->decisions.count; i++) {
        const struct decision *x = &d->decisions.items[i];
        const char *name = directory_name_of(&d->directory, x->uid);
        event_log_write(&d->events, event_from_decision(&d->policy, x, &d->snap, name,
                                                        d->events.host, d->snap.now,
                                                        d->enforcing));
        proc_table_fill(&procs[i], obs.known, x->uid);
        if (d->enforcing)
            act_on_decision(&a, x, &d->snap, &procs[i]);
    }
    if (d->enforcing)
        act_after(d, &a, &obs);
    /* Last: a notice says what has been done (the limits are in place),
     * and a slow desktop or mail child delays no one else's limits. */
    struct notifier nt = daemon_notifier(d);
    for (size_t i = 0; i < d->decisions.count; i++) {
        notify_decision(&nt, &d->decisions.items[i], &d->snap, &procs[i]);
        proc_table_free(&procs[i]);
    }
    free(procs);
    /* Keep the rhythm, but never try to catch up on missed samples. */
    d->next_sample += d->policy.sample_interval;
    if (d->next_sample <= now)
        d->next_sample = now + d->policy.sample_interval;
    metrics_sampled(&d->metrics_inputs, now);
}
