/* The narrow views the core hands its parts (core/daemon_parts.h): each
 * part is given what it reads or changes of the daemon, and, as
 * functions, what only the core can do; none is given struct daemon. */
#include "config.h"

#include "cluster/cluster_daemon.h"
#include "control/metrics_collect.h"
#include "core/daemon.h"
#include "core/daemon_parts.h"

/* What the control socket's answers may do that only the core can. */
static int view_admin(void *core, uid_t uid)
{
    return daemon_admin(core, uid);
}

static int view_reload(void *core, const json_t *by, struct reload_outcome *out)
{
    return daemon_reload(core, by, out);
}

static struct actions view_actions(void *core)
{
    return daemon_actions(core);
}

static void view_save(void *core)
{
    daemon_save_state(core);
}

static void view_save_pending(void *core)
{
    daemon_save_pending(core);
}

static void view_forget_notices(void *core, uid_t uid)
{
    daemon_forget_notices(core, uid);
}

static void view_counters_changed(void *core)
{
    ((struct daemon *)core)->feedback.counters_changed = true;
}

static json_t *view_metrics(void *core)
{
    return metrics_reply(&((struct daemon *)core)->metrics_inputs);
}

static json_t *view_cluster_status(void *core)
{
    return cluster_daemon_status(&((struct daemon *)core)->cluster_view);
}

static void view_cluster_change(void *core, enum standing_change_kind kind, uid_t uid,
                                const char *by)
{
    cluster_daemon_change(&((struct daemon *)core)->cluster_view, kind, uid, by);
}

/* The cluster glue's view of the daemon (cluster/cluster_daemon.h). */
static void build_cluster_view(struct daemon *d)
{
    d->cluster_view = (struct cluster_view){
        .cluster = &d->cluster,
        .env = &d->env,
        .policy = &d->policy,
        .events = &d->events,
        .engine = &d->engine,
        .snap = &d->snap,
        .decisions = &d->decisions,
        .directory = &d->directory,
        .enforcing = &d->enforcing,
        .core = d,
        .actions = view_actions,
        .counters_changed = view_counters_changed,
        .save_state = view_save,
    };
}

/* What the metrics are made from (control/metrics_collect.h). */
static void build_metrics_inputs(struct daemon *d)
{
    d->metrics_inputs = (struct metrics_inputs){
        .env = &d->env,
        .policy = &d->policy,
        .snap = &d->snap,
        .engine = &d->engine,
        .directory = &d->directory,
        .metrics = &d->metrics,
        .events = &d->events,
        .enforcing = &d->enforcing,
        .sampler = &d->sampler,
        .connector = &d->connector,
        .exits = &d->exits,
    };
}

/* The control socket's view of the daemon (control/control_view.h). */
static void build_control_view(struct daemon *d)
{
    d->control_view = (struct control_view){
        .env = &d->env,
        .policy = &d->policy,
        .config_path = d->opt.config_path,
        .engine = &d->engine,
        .snap = &d->snap,
        .sampler = &d->sampler,
        .directory = &d->directory,
        .events = &d->events,
        .history = &d->history,
        .persist = &d->persist,
        .enforcing = &d->enforcing,
        .enforcer = &d->enforcer,
        .slurm = &d->slurm,
        .core = d,
        .admin = view_admin,
        .reload = view_reload,
        .actions = view_actions,
        .save = view_save,
        .save_pending = view_save_pending,
        .forget_notices = view_forget_notices,
        .counters_changed = view_counters_changed,
        .metrics = view_metrics,
        .cluster_status = view_cluster_status,
        .cluster_change = view_cluster_change,
    };
}

void daemon_build_views(struct daemon *d)
{
    build_cluster_view(d);
    build_metrics_inputs(d);
    build_control_view(d);
}
