/* The daemon's one context: everything loginguardd holds while it runs. */
#ifndef LOGINGUARD_DAEMON_H
#define LOGINGUARD_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/environment.h"
#include "cluster/cluster.h"
#include "cluster/cluster_daemon.h"
#include "control/control_server.h"
#include "control/control_view.h"
#include "control/metrics_collect.h"
#include "core/observe.h"
#include "enforce/enforcer.h"
#include "engine.h"
#include "history.h"
#include "metrics.h"
#include "notify/notice_jobs.h"
#include "observe/slurm_query.h"
#include "observe/argv_describe.h"
#include "observe/directory.h"
#include "observe/proc_connector.h"
#include "observe/sampler.h"
#include "observe/taskstats.h"
#include "policy.h"
#include "policy_diff.h"
#include "record/events.h"
#include "record/notice_rate.h"
#include "record/persist.h"
#include "record/trace.h"
#include "rules_judge.h"
#include "snapshot.h"

struct options {
    const char *config_path;
    bool config_given;     /* a missing file is an error only when named */
    bool foreground;       /* stay attached, print events to the terminal */
    bool force_observe;
    bool check_only;
    bool dump;             /* with check_only: print the policy in effect */
    bool release_on_exit;  /* lift every limit when stopping */
    bool release_only;     /* lift every limit found, then exit (--release) */
};

struct daemon {
    struct options opt;
    struct environment env; /* the host's roots and clocks (tests: elsewhere) */
    bool started;          /* past start-up: errors go to syslog only */
    bool daemonized;       /* forked away from the terminal that started it */
    int state_lock;        /* holds the lock on state_dir: one daemon a node */
    struct policy policy;
    struct engine_state engine;
    struct sampler sampler;
    struct rules_judge judge; /* what the sampler's processes run, by the rules */
    struct proc_connector connector; /* fd -1 when not listening */
    struct taskstats_listener exits; /* fd -1 when not listening */
    uint64_t next_drain;   /* boottime usec: the connector is read again from then */
    size_t drained;        /* events and exits the last read of them found */
    bool early_asked;      /* the next sample comes early for a forbidden exec */
    uint64_t early_due;    /* boottime usec: early samples' bucket (sample_early) */
    struct snapshot snap;
    struct observe_feedback feedback; /* what a tick did, for the next sample */
    struct argv_describer describer;  /* command lines for events and notices */
    struct decisions decisions;
    struct event_log events;
    struct enforcer enforcer;
    struct notice_rate notice_rate;
    struct notice_jobs notice_jobs;  /* desktop and mail children under way */
    struct persist persist;  /* the state files, and what waits to be written */
    struct control_server control; /* loginguardctl's socket; fd -1 when not listening */
    struct control_view control_view; /* what its answers are given of the daemon */
    struct directory directory;    /* who a uid is, from NSS, off the loop */
    struct slurm_query slurm;      /* the cluster's partitions, from its Slurm */
    struct history history;  /* each active user's last hour, for loginguardctl user */
    struct metrics metrics;  /* counts for loginguardctl metrics and metrics_file */
    struct metrics_inputs metrics_inputs; /* what the metrics are made from */
    struct trace_writer trace; /* what the engine saw, for loginguardctl simulate */
    struct cluster cluster;  /* the standing shared with other nodes ([cluster]) */
    struct cluster_view cluster_view; /* what its glue is given of the daemon */
    bool enforcing;        /* enforce mode with its backend open */
    uint64_t next_sample;  /* boottime usec */
    uint64_t next_sweep;
    uint64_t next_stop;    /* a SIGKILL deadline, 0 = none */
    uint64_t held_refused_said; /* the sampler's held_refused last reported */
    /* New processes outside their cgroup whose owner the directory has
     * not answered about yet (adopt_new_processes). */
    struct new_proc *later;
    size_t later_count, later_capacity;
};

/* Set by signal handlers, acted on by the main loop. */
extern volatile sig_atomic_t stop_requested;
extern volatile sig_atomic_t reload_requested;

int daemon_load_policy(struct daemon *d, struct policy *out, bool report, struct errors *keep);
/* Whether uid is root or in admin_group: 1, 0, or -1 when the directory
 * has not answered yet (directory.h). */
int daemon_admin(struct daemon *d, uid_t uid);
/* Lock the state directory (made if missing); -1 after saying why. */
int daemon_lock_state(struct daemon *d);
/* The views of the parts that live as long as the daemon (the cluster's
 * glue, the metrics, the control socket; views.c): before daemon_start. */
void daemon_build_views(struct daemon *d);
int daemon_start(struct daemon *d);
void daemon_run(struct daemon *d);

/* Load the config again and swap it in (SIGHUP, loginguardctl reload);
 * always reopen the event log.  by: fields naming who asked, added to the
 * config_reloaded or config_error event (NULL: a signal).  out (or NULL)
 * gets the outcome, freed with reload_outcome_free.  Returns 0, or -1
 * when the config has errors and the running policy stays. */
int daemon_reload(struct daemon *d, const json_t *by, struct reload_outcome *out);
void daemon_finish(struct daemon *d);
/* --release: lift every user's limits that the configured backend finds
 * and exit; 0, or 1 if some could not be lifted or the backend opened. */
int daemon_release(struct daemon *d);
void daemon_tick(struct daemon *d);

#endif
