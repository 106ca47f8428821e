/* What the control socket's answers are given of the daemon: the parts
 * they read or change, and what only the core can do, as functions the
 * core hands over.  The core builds it (core/daemon.c), so nothing in
 * control/ includes the daemon's context. */
#ifndef LOGINGUARD_CONTROL_VIEW_H
#define LOGINGUARD_CONTROL_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

#include "base/environment.h"
#include "cluster_merge.h"
#include "enforce/actions.h"
#include "enforce/enforcer.h"
#include "engine.h"
#include "history.h"
#include "observe/directory.h"
#include "observe/sampler.h"
#include "observe/slurm_query.h"
#include "policy.h"
#include "policy_diff.h"
#include "record/events.h"
#include "record/persist.h"
#include "snapshot.h"

struct observe_feedback;

struct control_view {
    const struct environment *env;
    const struct policy *policy;       /* the daemon's: a reload replaces it in place */
    const char *config_path;
    struct engine_state *engine;
    const struct snapshot *snap;       /* the last sample */
    const struct sampler *sampler;     /* what it knows of processes (why, a user's top) */
    struct directory *directory;
    struct event_log *events;
    const struct history *history;
    const struct persist *persist;     /* whether a write waits */
    const bool *enforcing;
    const struct enforcer *enforcer;
    const struct slurm_query *slurm;
    /* What only the core can do; core is its context. */
    void *core;
    /* Whether uid is root or an admin: 1, 0, or -1 while the directory
     * has not answered. */
    int (*admin)(void *core, uid_t uid);
    /* The same reload as SIGHUP's (daemon_reload). */
    int (*reload)(void *core, const json_t *by, struct reload_outcome *out);
    /* The effectors' view, as it is now. */
    struct actions (*actions)(void *core);
    /* The engine's state on disk now; the notices waiting to be written. */
    void (*save)(void *core);
    void (*save_pending)(void *core);
    /* Forgiven, uid is told of what comes next: the notices sent to them
     * no longer count against the rate limit (and that is written). */
    void (*forget_notices)(void *core, uid_t uid);
    /* A session's process was moved: the next sample counts it. */
    void (*counters_changed)(void *core);
    /* loginguardctl metrics' reply. */
    json_t *(*metrics)(void *core);
    /* The cluster's part of status (NULL: no cluster), and a change an
     * admin made, for the other nodes. */
    json_t *(*cluster_status)(void *core);
    void (*cluster_change)(void *core, enum standing_change_kind kind, uid_t uid,
                           const char *by);
};

#endif
