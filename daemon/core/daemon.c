#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "enforce/actions.h"
#include "cluster/cluster_daemon.h"
#include "configfile.h"
#include "control/control_requests.h"
#include "core/daemon.h"
#include "core/instance_lock.h"
#include "control/metrics_collect.h"
#include "notify/notify.h"
#include "core/observe.h"
#include "record/persist.h"
#include "policy_diff.h"
#include "core/service_notify.h"
#include "record/state.h"
#include "util.h"

volatile sig_atomic_t stop_requested;
volatile sig_atomic_t reload_requested;

/* Load the policy named on the command line; with report, print every
 * error (file:line: what) to the log.  With keep, the errors are also
 * handed over (a reload asked for on the control socket replies with
 * them). */
int daemon_load_policy(struct daemon *d, struct policy *out, bool report, struct errors *keep)
{
    struct errors errs = {0};
    int rc = config_load(d->opt.config_path, d->opt.config_given, out, &errs);
    for (size_t i = 0; report && i < errs.count; i++) {
        if (!d->opt.check_only)
            syslog(LOG_ERR, "%s", errs.messages[i]);
        if (d->opt.foreground || d->opt.check_only || !d->started)
            fprintf(stderr, "%s\n", errs.messages[i]);
    }
    if (rc == 0 && d->opt.force_observe)
        out->mode = MODE_OBSERVE;
    if (keep) {
        errors_free(keep);
        *keep = errs;
    } else {
        errors_free(&errs);
    }
    return rc;
}

static void say(struct daemon *d, int priority, const char *message)
{
    syslog(priority, "%s", message);
    if (d->opt.foreground || !d->started)
        fprintf(stderr, "loginguardd: %s\n", message);
}

int daemon_lock_state(struct daemon *d)
{
    char err[600];
    /* /var/lib/loginguard after an install that did not make it. */
    mkdir(d->policy.state_dir, 0700);
    d->state_lock =
        instance_lock(d->env.proc, d->policy.state_dir, "state directory", err, sizeof(err));
    if (d->state_lock < 0)
        say(d, LOG_ERR, err);
    return d->state_lock < 0 ? -1 : 0;
}

/* The event log's directory is made if missing: /var/log/loginguard
 * after a package install that did not create it. */
static int open_event_log(struct daemon *d, const char *path)
{
    if (strcmp(path, "-") != 0) {
        char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            mkdir(dir, 0750);
        }
        free(dir);
    }
    int rc = d->events.path ? event_log_reopen(&d->events, path)
                            : event_log_open(&d->events, path, d->opt.foreground);
    event_log_set_limit(&d->events, d->policy.events_per_user, d->policy.events_interval);
    if (rc < 0) {
        char msg[600];
        snprintf(msg, sizeof(msg), "cannot open the event log %s (%s); events go to syslog only",
                 path, strerror(errno));
        say(d, LOG_ERR, msg);
    }
    return rc;
}

static void log_event(struct daemon *d, const char *name, const char *message)
{
    event_log_write(&d->events,
                    event_daemon(name, message, &d->policy, d->events.host, env_realtime(&d->env)));
}

static void trace_failed(struct daemon *d, const char *why)
{
    if (d->trace.failing)
        return;
    d->trace.failing = true;
    say(d, LOG_ERR, why);
    log_event(d, "trace_error", why);
}

static void open_trace(struct daemon *d)
{
    char err[700];
    if (trace_writer_open(&d->trace, &d->policy, err, sizeof(err)) < 0)
        trace_failed(d, err);
}

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
    if (n)
        sampler_fill_argv(&d->sampler, &d->snap, idx, n, TRACE_ARGV_WAIT_USEC);
    free(idx);
    char err[700];
    if (trace_writer_sample(&d->trace, &d->snap, d->events.host, mode_name(d->policy.mode),
                            d->policy.sample_interval, err, sizeof(err)) < 0)
        trace_failed(d, err);
    else
        d->trace.failing = false;
}

/* Enforce mode needs its backend; without it the daemon does not start
 * (and a reload to enforce keeps observing), saying why. */
static int start_enforcing(struct daemon *d)
{
    if (d->enforcing || d->policy.mode != MODE_ENFORCE)
        return 0;
    char err[512];
    if (enforcer_open(&d->enforcer, &d->env, d->policy.backend, d->policy.cgroup_parent, err,
                      sizeof(err)) < 0) {
        char msg[700];
        snprintf(msg, sizeof(msg), "enforce mode: %s", err);
        say(d, LOG_ERR, msg);
        log_event(d, "enforce_error", msg);
        return -1;
    }
    d->enforcing = true;
    const char *warning = d->enforcer.backend == BACKEND_CGROUPFS
                              ? cgroupfs_warning(&d->enforcer.cgroupfs)
                              : "";
    if (warning[0]) {
        say(d, LOG_WARNING, warning);
        log_event(d, "enforce_warning", warning);
    }
    return 0;
}

static void stop_enforcing(struct daemon *d)
{
    if (d->enforcing)
        enforcer_close(&d->enforcer, d->opt.release_on_exit);
    d->enforcing = false;
}

static void restore_state(struct daemon *d)
{
    char moved[512] = "", err[1024] = "";
    switch (state_load(d->policy.state_dir, &d->engine, env_realtime(&d->env), moved, sizeof(moved),
                       err, sizeof(err))) {
    case STATE_MOVED_ASIDE: /* err names the file, the reason and where it went */
    case STATE_ERROR:
        log_event(d, "state_error", err);
        break;
    default:
        break;
    }
    if (notice_rate_load(&d->notice_rate, d->policy.state_dir, err, sizeof(err)) < 0)
        log_event(d, "state_error", err);
}

/* loginguardctl's socket.  Without it the daemon still guards the node:
 * the reason is said and logged, and the daemon goes on. */
static void open_control(struct daemon *d)
{
    char err[600];
    if (control_server_open(&d->control, d->policy.control_socket, control_request, d, err,
                            sizeof(err)) == 0)
        return;
    char msg[700];
    snprintf(msg, sizeof(msg), "control socket: %s; loginguardctl cannot reach this daemon", err);
    say(d, LOG_ERR, msg);
    log_event(d, "control_error", msg);
}

/* The proc connector when the policy asks for it.  Where the kernel
 * refuses (not root, no CONFIG_PROC_EVENTS, a container) the sampler lists
 * /proc every sample instead, as it does with proc_connector = no; the
 * reason is said once, as an event. */
static void sync_connector(struct daemon *d)
{
    if (!d->policy.proc_connector && d->connector.fd >= 0)
        proc_connector_close(&d->connector);
    if (d->policy.proc_connector && d->connector.fd < 0) {
        char err[300];
        if (proc_connector_open(&d->connector, err, sizeof(err)) < 0) {
            char msg[400];
            snprintf(msg, sizeof(msg), "proc connector: %s; new processes are found by listing"
                     " /proc at every sample", err);
            say(d, LOG_WARNING, msg);
            log_event(d, "proc_connector_error", msg);
        }
    }
    bool live = d->connector.fd >= 0;
    if (d->sampler.events_live != live)
        sampler_events_live(&d->sampler, live);
}

static void note_event(const struct pc_event *ev, void *arg)
{
    struct daemon *d = arg;
    d->drained++;
    sampler_note_event(&d->sampler, ev);
}

/* The kernel's exit records (taskstats), so that a process that lives
 * less than a sample counts.  Where they cannot be had, that is said
 * once, and such processes count only as far as a sample reads them. */
static void open_exits(struct daemon *d)
{
    char err[300];
    if (taskstats_open(&d->exits, err, sizeof(err)) == 0)
        return;
    char msg[500];
    snprintf(msg, sizeof(msg), "taskstats: %s; a process that lives less than a sample counts "
             "only as far as a sample reads it", err);
    say(d, LOG_WARNING, msg);
    log_event(d, "taskstats_error", msg);
}

static void note_exit(const struct ts_exit *e, void *arg)
{
    struct daemon *d = arg;
    d->drained++;
    sampler_note_exit(&d->sampler, e);
}

/* Between samples the kernel's news (the connector's events, taskstats'
 * exits) is read as it comes while it comes a little at a time, so that
 * an exec is judged within milliseconds, yet at most every DRAIN_GAP.
 * A read that found a busy node's worth (DRAIN_BUSY or more) is followed
 * by a pause of DRAIN_PERIOD: a node that forks thousands of times a
 * second wakes the daemon ten times a second, and the sockets' buffers
 * hold the rest. */
#define DRAIN_GAP (5 * 1000)
#define DRAIN_PERIOD (100 * 1000)
#define DRAIN_BUSY 64

/* An exec of a forbidden program brings the next sample forward: at once
 * for up to EARLY_SAMPLE_BURST of them in a row, and on average no more
 * than one every EARLY_SAMPLE_GAP, so a user's execs cannot drive the
 * sample rate beyond four a second (a token bucket, kept as the time it
 * is next empty: early_due). */
#define EARLY_SAMPLE_GAP (250 * 1000)
#define EARLY_SAMPLE_BURST 4

static bool listening(const struct daemon *d)
{
    return d->connector.fd >= 0 || d->exits.fd >= 0;
}

static void drain_news(struct daemon *d)
{
    d->drained = 0;
    if (d->exits.fd >= 0)
        taskstats_drain(&d->exits, note_exit, d);
    if (d->connector.fd >= 0 && proc_connector_drain(&d->connector, note_event, d) > 0)
        sampler_note_lost(&d->sampler); /* a full sweep at the next sample */
    d->next_drain = env_boottime(&d->env) + (d->drained >= DRAIN_BUSY ? DRAIN_PERIOD : DRAIN_GAP);
}

/* Per-user counters: the cgroupfs backend's own cgroups when it enforces,
 * else whatever per-user cgroups the host has, else /proc. */
static int start_sampler(struct daemon *d)
{
    struct counter_roots roots;
    bool counters = d->enforcing && d->enforcer.backend == BACKEND_CGROUPFS;
    if (counters)
        cgroupfs_counter_roots(&d->enforcer.cgroupfs, &roots);
    struct sampler_scope scope = observe_scope(&d->policy, &d->judge.judge);
    int rc = sampler_init(&d->sampler, &d->env, counters ? &roots : NULL, &scope);
    d->sampler.directory = &d->directory;
    return rc;
}

/* The user directory's helper; without one, uids have no names (it is
 * tried again, directory_deadline). */
static void start_directory(struct daemon *d)
{
    char err[256];
    if (directory_start(&d->directory, err, sizeof(err)) < 0)
        say(d, LOG_ERR, err);
    directory_set_policy(&d->directory, &d->policy);
}

/* The policy is loaded (before detaching, so that errors reach the
 * terminal and the exit status); set up everything else. */
int daemon_start(struct daemon *d)
{
    d->started = true;
    d->metrics.start_time = env_realtime(&d->env);
    rules_judge_init(&d->judge, &d->policy.rules);
    d->connector.fd = -1;
    d->exits.fd = -1;
    /* The lock taken before the fork names the parent, which is gone:
     * the daemon takes it again as itself. */
    if (d->daemonized) {
        close(d->state_lock);
        if (daemon_lock_state(d) < 0) {
            policy_free(&d->policy);
            return -1;
        }
    }
    if (!d->events.host[0])
        gethostname(d->events.host, sizeof(d->events.host) - 1);
    open_event_log(d, d->policy.event_log);
    start_directory(d);
    bool backend_ok = start_enforcing(d) == 0;
    if (!backend_ok || start_sampler(d) < 0) {
        say(d, LOG_ERR, backend_ok ? d->sampler.error : "cannot start: see the error above");
        stop_enforcing(d);
        directory_stop(&d->directory);
        policy_free(&d->policy);
        event_log_close(&d->events);
        return -1;
    }
    restore_state(d);
    /* The queue loaded and the link started, before anything is decided. */
    cluster_daemon_start(d);
    trace_writer_init(&d->trace);
    open_trace(d);
    open_control(d);
    /* Listening before the first sweep: nothing starts unseen between them. */
    sync_connector(d);
    open_exits(d);
    char msg[512];
    bool no_templates = d->policy.channels.count && !d->policy.notices.kinds[0].path;
    snprintf(msg, sizeof(msg),
             "%s mode, %zu rules, %zu levels, %s sampling, new processes %s%s%s%s",
             mode_name(d->policy.mode), d->policy.rules.count, d->policy.level_count,
             d->sampler.use_counters ? "per-user cgroup" : "/proc",
             d->sampler.events_live ? "from the proc connector" : "by listing /proc",
             d->enforcing ? ", backend " : "",
             d->enforcing ? backend_name(d->enforcer.backend) : "",
             no_templates ? "; no notice templates found, so no notices: set [notify] notices_dirs"
                          : "");
    log_event(d, "daemon_started", msg);
    d->next_sample = d->next_sweep = env_boottime(&d->env);
    service_notify("READY=1");
    return 0;
}

/* The reload's event: who asked (by: fields to add, NULL for SIGHUP)
 * and, after errors, the first of them. */
#define RELOAD_EVENT_ERRORS 10

static void reload_event(struct daemon *d, const char *name, const char *message,
                         const json_t *by, const struct errors *errs)
{
    json_t *e = event_daemon(name, message, &d->policy, d->events.host, env_realtime(&d->env));
    if (by)
        json_object_update(e, (json_t *)by);
    if (errs && errs->count) {
        json_t *list = json_array();
        for (size_t i = 0; i < errs->count && i < RELOAD_EVENT_ERRORS; i++)
            json_array_append_new(list, json_from_bytes(errs->messages[i],
                                                        strlen(errs->messages[i])));
        json_object_set_new(e, "error_count", json_integer((json_int_t)errs->count));
        json_object_set_new(e, "errors", list);
    }
    event_log_write(&d->events, e);
}

int daemon_reload(struct daemon *d, const json_t *by, struct reload_outcome *out)
{
    struct reload_outcome none;
    if (!out)
        out = &none;
    memset(out, 0, sizeof(*out));
    service_notify("RELOADING=1");
    struct policy fresh;
    int rc = daemon_load_policy(d, &fresh, true, &out->errors);
    if (rc < 0) {
        reload_event(d, "config_error", "reload failed; the running policy stays (errors in syslog)",
                     by, &out->errors);
    } else {
        policy_diff(&d->policy, &fresh, &out->changes);
        out->summary = policy_changes_text(&d->policy, &fresh, &out->changes);
        struct policy old = d->policy;
        d->policy = fresh; /* the judge reads d->policy.rules */
        struct sampler_scope scope = observe_scope(&d->policy, &d->judge.judge);
        sampler_rescope(&d->sampler, &scope);
        directory_set_policy(&d->directory, &d->policy); /* [exempt] groups, admin_group */
        reload_event(d, "config_reloaded", out->summary, by, NULL);
        cluster_daemon_reloaded(d, &old);
        policy_free(&old);
        /* A change of mode takes effect now; a failure to enforce keeps
         * observing (the error is an event). */
        bool was = d->enforcing;
        if (d->policy.mode == MODE_ENFORCE)
            start_enforcing(d);
        else
            stop_enforcing(d);
        /* Where counters come from follows the mode: start sampling
         * afresh (every running process is then new, and moved in). */
        if (was != d->enforcing) {
            sampler_free(&d->sampler);
            if (start_sampler(d) < 0) {
                say(d, LOG_ERR, d->sampler.error);
                say(d, LOG_ERR, "cannot sample; stopping");
                stop_requested = 1;
            }
        }
        if (!stop_requested)
            sync_connector(d);
    }
    /* SIGHUP is also logrotate's signal: always reopen the event log,
     * and begin a new trace segment (under the bounds now in force). */
    open_event_log(d, d->policy.event_log);
    open_trace(d);
    service_notify("READY=1");
    if (out == &none)
        reload_outcome_free(out);
    return rc;
}

void reload_outcome_free(struct reload_outcome *o)
{
    errors_free(&o->errors);
    policy_changes_free(&o->changes);
    free(o->summary);
    o->summary = NULL;
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
    log_event(d, "descriptors_capped", msg);
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
    log_event(d, "subuids_loaded", msg);
}

/* A process whose command line could not be read in time is judged
 * without it; the admin is told, since a memory that stalls its readers
 * is what an evasion looks like. */
static void report_blocked_argv(struct daemon *d)
{
    const struct blocked_argv *b;
    size_t n = sampler_take_blocked(&d->sampler, &b);
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
 * events and notices. */
#define DECISION_ARGV_WAIT_USEC (100 * 1000)

static void fill_decision_argv(struct daemon *d)
{
    size_t idx[64], n = 0;
    for (size_t i = 0; i < d->decisions.count; i++) {
        const struct decision *x = &d->decisions.items[i];
        for (size_t k = 0; k < x->proc_count; k++) {
            if (n == sizeof(idx) / sizeof(idx[0])) {
                sampler_fill_argv(&d->sampler, &d->snap, idx, n, DECISION_ARGV_WAIT_USEC);
                n = 0;
            }
            idx[n++] = x->procs[k];
        }
    }
    if (n)
        sampler_fill_argv(&d->sampler, &d->snap, idx, n, DECISION_ARGV_WAIT_USEC);
}

struct actions daemon_actions(struct daemon *d)
{
    return (struct actions){
        .env = &d->env,
        .policy = &d->policy,
        .enforcer = &d->enforcer,
        .events = &d->events,
        .engine = &d->engine,
        .directory = &d->directory,
        .counters = d->sampler.use_counters ? &d->sampler.counters : NULL,
        .metrics = &d->metrics,
    };
}

/* What the notices are given of the daemon. */
static struct notifier notifier_of(struct daemon *d)
{
    return (struct notifier){
        .env = &d->env,
        .policy = &d->policy,
        .events = &d->events,
        .jobs = &d->notice_jobs,
        .rate = &d->notice_rate,
        .directory = &d->directory,
        .metrics = &d->metrics,
        .enforcing = d->enforcing,
        .io = daemon_persist_io(d),
        .history = &d->history,
    };
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
static void adopt_new_processes(struct daemon *d, const struct actions *a)
{
    const struct new_proc *fresh;
    size_t n = sampler_take_new(&d->sampler, &fresh);
    struct new_proc *waited = d->later;
    size_t waited_count = d->later_count;
    d->later = NULL;
    d->later_count = d->later_capacity = 0;
    bool made = false;
    for (size_t i = 0; i < waited_count + n; i++) {
        const struct new_proc *p = i < waited_count ? &waited[i] : &fresh[i - waited_count];
        if (!adopt_later(d, p) && adopt_process(a, p, &made))
            sampler_adopted(&d->sampler, p->pid);
    }
    free(waited);
    if (made)
        sampler_counters_changed(&d->sampler);
}

/* One sample, one engine step, an event for every decision; in enforce
 * mode the decisions are carried out. */
void daemon_tick(struct daemon *d)
{
    uint64_t now = env_boottime(&d->env);
    struct actions a = daemon_actions(d);
    if (d->next_stop && now >= d->next_stop)
        d->next_stop = reap_stops(&a);
    if (now >= d->next_sweep) {
        sampler_sweep(&d->sampler);
        directory_refresh(&d->directory);
        report_subuids(d);
        report_held_refused(d);
        if (d->enforcing)
            remove_empty_cgroups(&a);
        /* Free pages inside the heap go back too (what a burst of new
         * processes left), so the resident size follows what is held. */
        malloc_trim(0);
        d->next_sweep = now + d->policy.scan_interval;
    }
    if (now < d->next_sample)
        return;
    if (d->early_asked) { /* this sample takes a token */
        d->early_due = (d->early_due > now ? d->early_due : now) + EARLY_SAMPLE_GAP;
        d->early_asked = false;
    }
    drain_news(d); /* everything up to now, for this sample */
    observe(&d->sampler, &d->policy, &d->snap);
    decisions_clear(&d->decisions);
    engine_step(&d->policy, &d->engine, &d->snap, &d->decisions);
    history_update(&d->history, &d->snap);
    /* On disk before anything is done about it: a crash (kill -9) right
     * after a limit is set must not lose the level that set it.  A write
     * that failed before (a full disk) is tried again. */
    if (d->decisions.count > 0 || d->persist.state.pending)
        save_state(d);
    save_pending(d);  /* notified.json and login notices, the same way */
    cluster_daemon_decisions(d); /* and the cluster's records of them */
    event_log_tick(&d->events, false);
    fill_decision_argv(d);
    record_trace(d);
    report_blocked_argv(d);
    /* Each decided user's processes, for what is done and said about it. */
    struct proc_table *procs = xcalloc(d->decisions.count + 1, sizeof(*procs));
    for (size_t i = 0; i < d->decisions.count; i++) {
        const struct decision *x = &d->decisions.items[i];
        const char *name = directory_name_of(&d->directory, x->uid);
        event_log_write(&d->events, event_from_decision(&d->policy, x, &d->snap, name,
                                                        d->events.host, d->snap.now,
                                                        d->enforcing));
        sampler_user_table(&d->sampler, x->uid, &procs[i]);
        if (d->enforcing)
            act_on_decision(&a, x, &d->snap, &procs[i]);
    }
    if (d->enforcing) {
        adopt_new_processes(d, &a);
        if (sync_limits(&a, &d->snap))
            sampler_counters_changed(&d->sampler);
        d->next_stop = reap_stops(&a);
    } else {
        const struct new_proc *unused;
        sampler_take_new(&d->sampler, &unused);
    }
    /* Last: a notice says what has been done (the limits are in place),
     * and a slow desktop or mail child delays no one else's limits. */
    struct notifier nt = notifier_of(d);
    for (size_t i = 0; i < d->decisions.count; i++) {
        notify_decision(&nt, &d->decisions.items[i], &d->snap, &procs[i]);
        proc_table_free(&procs[i]);
    }
    free(procs);
    /* Keep the rhythm, but never try to catch up on missed samples. */
    d->next_sample += d->policy.sample_interval;
    if (d->next_sample <= now)
        d->next_sample = now + d->policy.sample_interval;
    metrics_sampled(d, now);
}

/* A forbidden program was exec'd: it is judged (and, enforcing,
 * stopped) in a sample now, not up to an interval later.  Or a job
 * started outside its user's cgroup (cron): moved there now. */
static void sample_early(struct daemon *d)
{
    uint64_t now = env_boottime(&d->env);
    uint64_t room = (EARLY_SAMPLE_BURST - 1) * (uint64_t)EARLY_SAMPLE_GAP;
    uint64_t soonest = d->early_due > now + room ? d->early_due - room : now;
    if (soonest < d->next_sample)
        d->next_sample = soonest;
    d->early_asked = true;
}

int daemon_admin(struct daemon *d, uid_t uid)
{
    bool subordinate = subuid_owner(&d->sampler.subuids, uid) != uid;
    return directory_admin(&d->directory, uid, subordinate);
}

static void earliest(uint64_t *next, uint64_t t)
{
    if (t && t < *next)
        *next = t;
}

static int wait_timeout_ms(struct daemon *d, bool drain_waits)
{
    uint64_t now = env_boottime(&d->env);
    uint64_t next = d->next_sample < d->next_sweep ? d->next_sample : d->next_sweep;
    earliest(&next, d->next_stop);
    /* A command line reader that stalls is replaced at its deadline, and
     * a notice child that hangs is killed at its own. */
    earliest(&next, argv_reader_deadline(&d->sampler.argv));
    earliest(&next, directory_deadline(&d->directory));
    earliest(&next, notify_deadline(&d->notice_jobs));
    earliest(&next, control_server_deadline(&d->control));
    earliest(&next, cluster_daemon_deadline(d));
    if (drain_waits)
        earliest(&next, d->next_drain);
    return next > now ? (int)((next - now + 999) / 1000) : 0;
}

/* Every descriptor the loop waits on: the kernel's sockets (while
 * watched), the command line reader, the user directory, the cluster's
 * link, the control socket and its connections, the notice children. */
enum {
    PFD_CONNECTOR, PFD_EXITS, PFD_ARGV, PFD_DIRECTORY, PFD_CLUSTER, PFD_CONTROL,
    PFD_JOBS = PFD_CONTROL + CONTROL_POLLFDS,
    PFD_MAX = PFD_JOBS + 2 * NOTICE_JOBS_MAX
};

static size_t fill_pollfds(struct daemon *d, bool watch, struct pollfd *pfd)
{
    pfd[PFD_CONNECTOR] = (struct pollfd){.fd = watch ? d->connector.fd : -1, .events = POLLIN};
    pfd[PFD_EXITS] = (struct pollfd){.fd = watch ? d->exits.fd : -1, .events = POLLIN};
    pfd[PFD_ARGV] = (struct pollfd){.fd = argv_reader_fd(&d->sampler.argv), .events = POLLIN};
    pfd[PFD_DIRECTORY] = (struct pollfd){.fd = directory_fd(&d->directory), .events = POLLIN};
    cluster_daemon_pollfd(d, &pfd[PFD_CLUSTER]);
    control_server_pollfds(&d->control, pfd + PFD_CONTROL);
    return PFD_JOBS + notify_pollfds(&d->notice_jobs, pfd + PFD_JOBS);
}

void daemon_run(struct daemon *d)
{
    sigset_t blocked, waiting;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    sigaddset(&blocked, SIGHUP);
    sigprocmask(SIG_BLOCK, &blocked, &waiting);
    sigdelset(&waiting, SIGTERM);
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGHUP);

    while (!stop_requested) {
        if (reload_requested) {
            reload_requested = 0;
            daemon_reload(d, NULL, NULL);
        }
        daemon_tick(d);
        /* The kernel's sockets are watched only once DRAIN_PERIOD has
         * passed since they were last read: until then, a timeout does. */
        bool watch = listening(d) && env_boottime(&d->env) >= d->next_drain;
        bool drain_waits = listening(d) && !watch;
        int ms = wait_timeout_ms(d, drain_waits);
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        struct pollfd pfd[PFD_MAX];
        size_t n = fill_pollfds(d, watch, pfd);
        /* Signals are delivered only inside ppoll: no lost wake-up. */
        /* POLLERR too: an overflow (ENOBUFS) is reported that way. */
        int ready = ppoll(pfd, n, &ts, &waiting);
        if (ready > 0 && (pfd[PFD_CONNECTOR].revents || pfd[PFD_EXITS].revents)) {
            drain_news(d);
            /* Both asked: each empties its list. */
            bool forbidden = sampler_forbidden_exec(&d->sampler);
            if (sampler_arrived_outside(&d->sampler, d->enforcing) || forbidden)
                sample_early(d);
        } else if (drain_waits && env_boottime(&d->env) >= d->next_drain)
            d->next_drain = 0; /* watch the sockets again */
        uint64_t now = env_boottime(&d->env), reader = argv_reader_deadline(&d->sampler.argv);
        if ((ready > 0 && pfd[PFD_ARGV].revents) || (reader && now >= reader))
            sampler_take_argv(&d->sampler);
        uint64_t asked = directory_deadline(&d->directory);
        if (((ready > 0 && pfd[PFD_DIRECTORY].revents) || (asked && now >= asked)) &&
            directory_poll(&d->directory)) {
            control_server_retry(&d->control); /* requests that waited for it */
            /* Users it named for the first time are judged, and their
             * processes moved, now rather than at the next sample. */
            if (directory_news(&d->directory))
                sample_early(d);
        }
        if (ready > 0)
            control_server_handle(&d->control, pfd + PFD_CONTROL, now);
        control_server_expire(&d->control, now);
        /* What the link said, what waits for it, and the link itself. */
        cluster_daemon_handle(d, &pfd[PFD_CLUSTER]);
        /* Cheap (a waitpid a child): whenever the loop wakes. */
        struct notifier nt = notifier_of(d);
        notify_check(&nt);
    }
    sigprocmask(SIG_UNBLOCK, &blocked, NULL);
}

int daemon_release(struct daemon *d)
{
    char err[512];
    struct enforcer e;
    if (enforcer_open(&e, &d->env, d->policy.backend, d->policy.cgroup_parent, err,
                      sizeof(err)) < 0) {
        fprintf(stderr, "loginguardd: --release: %s\n", err);
        return 1;
    }
    int failed = enforcer_release_all(&e);
    enforcer_close(&e, false);
    return failed ? 1 : 0;
}

void daemon_finish(struct daemon *d)
{
    service_notify("STOPPING=1");
    struct notifier nt = notifier_of(d);
    notify_stop(&nt);
    event_log_tick(&d->events, true); /* what was held back so far */
    log_event(d, "daemon_stopped", NULL);
    save_state(d);
    save_pending(d);
    cluster_daemon_stop(d);
    control_server_close(&d->control);
    directory_stop(&d->directory);
    stop_enforcing(d);
    proc_connector_close(&d->connector);
    taskstats_close(&d->exits);
    event_log_close(&d->events);
    trace_writer_close(&d->trace);
    decisions_free(&d->decisions);
    snapshot_free(&d->snap);
    engine_state_free(&d->engine);
    history_free(&d->history);
    notice_rate_free(&d->notice_rate);
    persist_free(&d->persist);
    sampler_free(&d->sampler);
    rules_judge_free(&d->judge);
    free(d->later);
    policy_free(&d->policy);
    if (d->state_lock >= 0)
        close(d->state_lock);
}
