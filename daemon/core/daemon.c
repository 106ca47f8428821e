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

#include "base/instance_lock.h"
#include "cluster/cluster_daemon.h"
#include "configfile.h"
#include "control/control_requests.h"
#include "control/metrics_collect.h"
#include "core/daemon.h"
#include "core/daemon_parts.h"
#include "core/observe.h"
#include "core/service_notify.h"
#include "enforce/actions.h"
#include "notify/notify.h"
#include "policy_diff.h"
#include "record/persist.h"
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

void daemon_say(struct daemon *d, int priority, const char *message)
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
        daemon_say(d, LOG_ERR, err);
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
        daemon_say(d, LOG_ERR, msg);
    }
    return rc;
}

void daemon_log_event(struct daemon *d, const char *name, const char *message)
{
    event_log_write(&d->events,
                    event_daemon(name, message, &d->policy, d->events.host, env_realtime(&d->env)));
}

void daemon_trace_failed(struct daemon *d, const char *why)
{
    if (d->trace.failing)
        return;
    d->trace.failing = true;
    daemon_say(d, LOG_ERR, why);
    daemon_log_event(d, "trace_error", why);
}

static void open_trace(struct daemon *d)
{
    char err[700];
    if (trace_writer_open(&d->trace, &d->policy, err, sizeof(err)) < 0)
        daemon_trace_failed(d, err);
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
        daemon_say(d, LOG_ERR, msg);
        daemon_log_event(d, "enforce_error", msg);
        return -1;
    }
    d->enforcing = true;
    const char *warning = d->enforcer.backend == BACKEND_CGROUPFS
                              ? cgroupfs_warning(&d->enforcer.cgroupfs)
                              : "";
    if (warning[0]) {
        daemon_say(d, LOG_WARNING, warning);
        daemon_log_event(d, "enforce_warning", warning);
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
        daemon_log_event(d, "state_error", err);
        break;
    default:
        break;
    }
    if (notice_rate_load(&d->notice_rate, d->policy.state_dir, err, sizeof(err)) < 0)
        daemon_log_event(d, "state_error", err);
}

/* loginguardctl's socket.  Without it the daemon still guards the node:
 * the reason is said and logged, and the daemon goes on. */
static void open_control(struct daemon *d)
{
    char err[600];
    if (control_server_open(&d->control, d->policy.control_socket, control_request,
                            &d->control_view, err, sizeof(err)) == 0)
        return;
    char msg[700];
    snprintf(msg, sizeof(msg), "control socket: %s; loginguardctl cannot reach this daemon", err);
    daemon_say(d, LOG_ERR, msg);
    daemon_log_event(d, "control_error", msg);
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
            daemon_say(d, LOG_WARNING, msg);
            daemon_log_event(d, "proc_connector_error", msg);
        }
    }
    bool live = d->connector.fd >= 0;
    if (d->sampler.events_live != live)
        sampler_events_live(&d->sampler, live);
}

/* The kernel's exit records (taskstats), so that a process that lives
 * less than a sample counts.  Where they cannot be had, that is said
 * once, and such processes count only as far as a sample reads them. */
static void open_exits(struct daemon *d)
{
    char err[300];
    if (taskstats_open_env(&d->exits, &d->env, err, sizeof(err)) == 0)
        return;
    char msg[500];
    snprintf(msg, sizeof(msg), "taskstats: %s; a process that lives less than a sample counts "
             "only as far as a sample reads it", err);
    daemon_say(d, LOG_WARNING, msg);
    daemon_log_event(d, "taskstats_error", msg);
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

/* The command-line reader for events and notices (argv_describe.h);
 * without it they show no command lines, and the daemon goes on. */
static void start_describer(struct daemon *d)
{
    char err[300];
    if (argv_describer_start(&d->describer, d->env.proc, err, sizeof(err)) < 0) {
        char msg[400];
        snprintf(msg, sizeof(msg), "command lines for events and notices: %s", err);
        daemon_say(d, LOG_ERR, msg);
    }
}

/* The user directory's helper; without one, uids have no names (it is
 * tried again, directory_deadline). */
static void start_directory(struct daemon *d)
{
    char err[256];
    if (directory_start(&d->directory, err, sizeof(err)) < 0)
        daemon_say(d, LOG_ERR, err);
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
        daemon_say(d, LOG_ERR, backend_ok ? d->sampler.error : "cannot start: see the error above");
        stop_enforcing(d);
        directory_stop(&d->directory);
        policy_free(&d->policy);
        event_log_close(&d->events);
        return -1;
    }
    start_describer(d);
    slurm_query_configure(&d->slurm, &d->policy, &d->env);
    restore_state(d);
    /* The queue loaded and the link started, before anything is decided. */
    cluster_daemon_start(&d->cluster_view);
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
             d->sampler.use_counters ? "per-user cgroup" : d->env.proc,
             d->sampler.events_live ? "from the proc connector" : "by listing /proc",
             d->enforcing ? ", backend " : "",
             d->enforcing ? backend_name(d->enforcer.backend) : "",
             no_templates ? "; no notice templates found, so no notices: set [notify] notices_dirs"
                          : "");
    daemon_log_event(d, "daemon_started", msg);
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
        slurm_query_configure(&d->slurm, &d->policy, &d->env); /* and asked again now */
        reload_event(d, "config_reloaded", out->summary, by, NULL);
        cluster_daemon_reloaded(&d->cluster_view, &old);
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
            observe_feedback_free(&d->feedback); /* about the old sampler's processes */
            if (start_sampler(d) < 0) {
                daemon_say(d, LOG_ERR, d->sampler.error);
                daemon_say(d, LOG_ERR, "cannot sample; stopping");
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
struct notifier daemon_notifier(struct daemon *d)
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
        .slurm = &d->slurm,
    };
}

struct persist_io daemon_persist_io(struct daemon *d)
{
    return (struct persist_io){&d->env, &d->policy, &d->events, &d->persist};
}

void daemon_save_state(struct daemon *d)
{
    struct persist_io io = daemon_persist_io(d);
    persist_save_state(&io, &d->engine);
}

void daemon_save_pending(struct daemon *d)
{
    struct persist_io io = daemon_persist_io(d);
    persist_save_pending(&io, &d->notice_rate);
}

void daemon_forget_notices(struct daemon *d, uid_t uid)
{
    struct persist_io io = daemon_persist_io(d);
    notice_rate_forget(&d->notice_rate, uid);
    persist_save_notice_rate(&io, &d->notice_rate);
}

int daemon_admin(struct daemon *d, uid_t uid)
{
    bool subordinate = subuid_owner(&d->sampler.subuids, uid) != uid;
    return directory_admin(&d->directory, uid, subordinate);
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
    struct notifier nt = daemon_notifier(d);
    notify_stop(&nt);
    event_log_tick(&d->events, true); /* what was held back so far */
    daemon_log_event(d, "daemon_stopped", NULL);
    daemon_save_state(d);
    daemon_save_pending(d);
    cluster_daemon_stop(&d->cluster_view);
    control_server_close(&d->control);
    directory_stop(&d->directory);
    slurm_query_stop(&d->slurm);
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
    observe_feedback_free(&d->feedback);
    argv_describer_stop(&d->describer);
    rules_judge_free(&d->judge);
    free(d->later);
    policy_free(&d->policy);
    if (d->state_lock >= 0)
        close(d->state_lock);
}
