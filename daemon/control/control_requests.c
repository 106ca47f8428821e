/* What the daemon answers on its control socket (loginguard-control(7)).
 * Who may do what is decided from the peer's credentials alone: anyone
 * may ask about themselves; root and members of admin_group may ask
 * about anyone and change things.  A change is saved to state.json
 * before the reply, like every decision of the engine, and is an event
 * naming who made it and why. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_daemon.h"
#include "control/control_requests.h"
#include "control/login_requests.h"
#include "control/metrics_collect.h"
#include "control/user_report.h"
#include "control/why.h"
#include "record/persist.h"
#include "units.h"
#include "user_standing.h"
#include "util.h"

static json_t *time_or_null(uint64_t usec)
{
    return usec ? json_from_time(usec) : json_null();
}

/* Why a user is never judged, or NULL (a temporary exemption shows as
 * exempt_until). */
static const char *protection(struct control_view *v, uid_t uid, uint64_t now)
{
    static const char *const why[] = {
        [PROTECTION_ROOT] = "root",
        [PROTECTION_SYSTEM] = "system account (below min_uid)",
        [PROTECTION_EXEMPT_USER] = "[exempt] users",
        [PROTECTION_EXEMPT_GROUP] = "[exempt] groups",
        [PROTECTION_DIRECTORY] = "not judged until the user directory (NSS) says who this is",
        [PROTECTION_NONE] = NULL, [PROTECTION_TEMPORARY] = NULL,
    };
    struct user_sample u = directory_sample(v->directory, uid);
    return why[user_protection(v->policy, engine_user(v->engine, uid, false), &u, now)];
}

/* One user as status and user show them: usage at the last sample, level,
 * until when its limits last, exemption. */
static json_t *user_row(struct control_view *v, uid_t uid, uint64_t now)
{
    const struct user_sample *u = snapshot_find_user(v->snap, uid);
    const struct user_state *us = engine_user(v->engine, uid, false);
    const char *name = directory_name_of(v->directory, uid);
    json_t *o = json_object();
    json_object_set_new(o, "uid", json_integer((json_int_t)uid));
    json_object_set_new(o, "user", name[0] ? json_from_bytes(name, strlen(name)) : json_null());
    json_object_set_new(o, "cpu_cores", json_real(u ? (double)(long)(u->cpu * 1000) / 1000 : 0));
    json_object_set_new(o, "memory_bytes", json_integer(u ? (json_int_t)u->memory : 0));
    json_object_set_new(o, "processes", json_integer(u ? (json_int_t)u->tasks : 0));
    /* Slurm's, apart: in none of the figures above. */
    json_object_set_new(o, "slurm_jobs", json_integer(u ? (json_int_t)u->slurm_jobs : 0));
    json_object_set_new(o, "slurm_cpu_cores",
                        json_real(u ? (double)(long)(u->slurm_cpu * 1000) / 1000 : 0));
    int level = us ? us->level : 0;
    json_object_set_new(o, "level", json_integer(level));
    json_object_set_new(o, "level_name", level > 0 && (size_t)level <= v->policy->level_count
                                             ? json_string(v->policy->levels[level - 1].name)
                                             : json_null());
    json_object_set_new(o, "until", time_or_null(us && us->until > now ? us->until : 0));
    json_object_set_new(o, "violations", json_integer(us ? (json_int_t)us->violations : 0));
    json_object_set_new(o, "exempt_until",
                        time_or_null(us && us->exempt_until > now ? us->exempt_until : 0));
    const char *why = protection(v, uid, now);
    json_object_set_new(o, "protected", why ? json_string(why) : json_null());
    return o;
}

static bool idle(struct control_view *v, uid_t uid, uint64_t now)
{
    const struct user_sample *u = snapshot_find_user(v->snap, uid);
    /* Status does not look at memory.  A user busy only in a Slurm job
     * is listed, their row saying it is Slurm's. */
    return user_idle(engine_user(v->engine, uid, false), u ? u->cpu + u->slurm_cpu : 0, 0, 0,
                     now);
}

static int by_cpu(const void *a, const void *b)
{
    double x = json_real_value(json_object_get(*(json_t *const *)a, "cpu_cores"));
    double y = json_real_value(json_object_get(*(json_t *const *)b, "cpu_cores"));
    return x < y ? 1 : x > y ? -1 : 0;
}

static json_t *policy_summary(const struct policy *p)
{
    json_t *levels = json_array();
    for (size_t i = 0; i < p->level_count; i++)
        json_array_append_new(levels, json_string(p->levels[i].name));
    return json_pack("{s:f, s:f, s:I, s:f, s:I, s:I, s:o}", "sample_interval_s",
                     (double)p->sample_interval / USEC_PER_SEC, "violation_cpu_cores",
                     p->violation_cpu, "violation_memory_bytes", (json_int_t)p->violation_memory,
                     "share_cpu_cores", p->share_cpu, "share_memory_bytes",
                     (json_int_t)p->share_memory, "window_s",
                     (json_int_t)(p->window / USEC_PER_SEC), "levels", levels);
}

/* Users the snapshot saw and users the engine remembers (a level, an
 * exemption), each once: a peer who is no admin sees only themselves. */
static json_t *status_users(struct control_view *v, const struct control_conn *c, bool all,
                            uint64_t now)
{
    size_t cap = v->snap->user_count + v->engine->user_count + 1, n = 0;
    json_t **rows = xmalloc(cap * sizeof(*rows));
    bool admin = c->peer.admin == 1;
    for (size_t i = 0; i < v->snap->user_count; i++) {
        uid_t uid = v->snap->users[i].uid;
        if ((admin || uid == c->peer.uid) && (all || !idle(v, uid, now)))
            rows[n++] = user_row(v, uid, now);
    }
    for (size_t i = 0; i < v->engine->user_count; i++) {
        uid_t uid = v->engine->users[i].uid;
        if ((admin || uid == c->peer.uid) && !snapshot_find_user(v->snap, uid) &&
            (all || !idle(v, uid, now)))
            rows[n++] = user_row(v, uid, now);
    }
    qsort(rows, n, sizeof(*rows), by_cpu);
    json_t *users = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(users, rows[i]);
    free(rows);
    return users;
}

static json_t *status(struct control_view *v, const struct control_conn *c, bool all, uint64_t now)
{
    json_t *r = control_reply_ok();
    json_object_set_new(r, "mode", json_string(mode_name(v->policy->mode)));
    json_object_set_new(r, "backend",
                        *v->enforcing ? json_string(backend_name(v->enforcer->backend))
                                     : json_null());
    json_object_set_new(r, "sampled", time_or_null(v->snap->now));
    json_object_set_new(r, "policy", policy_summary(v->policy));
    json_object_set_new(r, "users", status_users(v, c, all, now));
    json_t *cluster = v->cluster_status(v->core);
    if (cluster)
        json_object_set_new(r, "cluster", cluster);
    json_object_set_new(r, "slurm", slurm_query_status(v->slurm, v->env));
    return r;
}

/* The uid a request names: 0, -1 with err, or 1 when the directory has
 * not answered yet (the request waits). */
static int resolve(struct control_view *v, const struct control_request *req, uid_t asker, uid_t *uid,
                   struct control_error *err)
{
    if (!req->has_user || req->by_uid) {
        *uid = req->has_user ? req->uid : asker;
        return 0;
    }
    /* Those the daemon knows first; then the directory, for a name that
     * control_name_ok let through. */
    const struct directory *dir = v->directory;
    for (size_t i = 0; i < dir->count; i++) {
        if (strcmp(dir->users[i].name, req->name) == 0) {
            *uid = dir->users[i].uid;
            return 0;
        }
    }
    int found = directory_uid_of(v->directory, req->name, uid);
    if (found != 0)
        return found < 0 ? 1 : 0;
    err->code = CONTROL_NO_SUCH_USER;
    snprintf(err->message, sizeof(err->message), "no user is named %s", req->name);
    return -1;
}

static json_t *by_event(struct control_view *v, const char *name, uid_t uid, const struct control_conn *c,
                        const char *reason)
{
    json_t *e = event_action(name, uid, directory_name_of(v->directory, uid),
                             mode_name(v->policy->mode), v->events->host, env_realtime(v->env));
    const char *by = directory_name_of(v->directory, c->peer.uid);
    json_object_set_new(e, "by_uid", json_integer((json_int_t)c->peer.uid));
    json_object_set_new(e, "by", by[0] ? json_from_bytes(by, strlen(by)) : json_null());
    if (reason && reason[0])
        json_object_set_new(e, "reason", json_from_bytes(reason, strlen(reason)));
    return e;
}

static json_t *refuse(struct control_view *v, const struct control_conn *c, enum control_op op,
                      const char *what)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "%s needs root or membership of the group %s (admin_group); "
             "uid %u is neither", what, v->policy->admin_group, (unsigned)c->peer.uid);
    json_t *e = by_event(v, "control_refused", c->peer.uid, c, NULL);
    json_object_set_new(e, "request", json_string(control_op_name(op)));
    json_object_set_new(e, "message", json_string(msg));
    event_log_write(v->events, e);
    return control_reply_error(CONTROL_REFUSED, msg);
}

/* The engine's state on disk before the reply: NULL when written, else
 * the error reply (the change stays in memory and is written again at
 * every sample, as after any failed write). */
static json_t *save_now(struct control_view *v)
{
    v->save(v->core);
    if (!v->persist->state.pending)
        return NULL;
    char msg[256];
    snprintf(msg, sizeof(msg), "done, but %s/state.json could not be written (see the "
             "state_error event); it is tried again at every sample", v->policy->state_dir);
    return control_reply_error(CONTROL_FAILED, msg);
}

static json_t *reply_with_user(struct control_view *v, uid_t uid, uint64_t now)
{
    json_t *r = control_reply_ok();
    json_object_set_new(r, "user", user_row(v, uid, now));
    return r;
}

static json_t *forgive(struct control_view *v, const struct control_conn *c, uid_t uid,
                       const struct control_request *req, uint64_t now)
{
    int before = engine_forgive(v->engine, uid, now);
    v->forget_notices(v->core, uid);
    v->cluster_change(v->core, CHANGE_FORGIVE, uid, directory_name_of(v->directory, c->peer.uid));
    json_t *failed = save_now(v);
    json_t *e = by_event(v, "user_forgiven", uid, c, req->reason);
    json_object_set_new(e, "level_before", json_integer(before));
    event_log_write(v->events, e);
    return failed ? failed : reply_with_user(v, uid, now);
}

static json_t *exempt(struct control_view *v, const struct control_conn *c, uid_t uid,
                      const struct control_request *req, uint64_t now)
{
    const struct user_state *us = engine_user(v->engine, uid, false);
    if (req->remove && (!us || us->exempt_until <= now)) {
        char msg[200];
        snprintf(msg, sizeof(msg), "uid %u has no exemption to remove", (unsigned)uid);
        return control_reply_error(CONTROL_FAILED, msg);
    }
    uint64_t until = req->remove ? 0 : now + req->duration * USEC_PER_SEC;
    engine_exempt(v->engine, uid, until);
    v->cluster_change(v->core, CHANGE_EXEMPT, uid, directory_name_of(v->directory, c->peer.uid));
    json_t *failed = save_now(v);
    json_t *e = by_event(v, req->remove ? "exempt_removed" : "exempt_added", uid, c, req->reason);
    if (until)
        json_object_set_new(e, "until", json_from_time(until));
    event_log_write(v->events, e);
    return failed ? failed : reply_with_user(v, uid, now);
}

/* At most this many of a broken config's errors go in a reply (each is
 * at most about 1 KiB, replies at most CONTROL_OUT_MAX); the rest are
 * counted, and check-config lists them all. */
#define RELOAD_REPLY_ERRORS 1000

static json_t *string_list(char *const *items, size_t count)
{
    json_t *a = json_array();
    for (size_t i = 0; i < count; i++)
        json_array_append_new(a, json_from_bytes(items[i], strlen(items[i])));
    return a;
}

/* The same reload as SIGHUP's, with its outcome for the asker: what
 * changed, or every error (and the running policy stays). */
static json_t *reload(struct control_view *v, const struct control_conn *c)
{
    const char *name = directory_name_of(v->directory, c->peer.uid);
    json_t *by = json_pack("{s:I, s:o, s:s}", "by_uid", (json_int_t)c->peer.uid, "by",
                           name[0] ? json_from_bytes(name, strlen(name)) : json_null(),
                           "request", control_op_name(CONTROL_RELOAD));
    struct reload_outcome o;
    int rc = v->reload(v->core, by, &o);
    json_decref(by);
    json_t *r;
    if (rc < 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "%s has errors; the running policy stays",
                 v->config_path);
        r = control_reply_error(CONTROL_INVALID_CONFIG, msg);
        size_t n = o.errors.count < RELOAD_REPLY_ERRORS ? o.errors.count : RELOAD_REPLY_ERRORS;
        json_object_set_new(r, "errors", string_list(o.errors.messages, n));
        json_object_set_new(r, "error_count", json_integer((json_int_t)o.errors.count));
    } else {
        r = control_reply_ok();
        json_object_set_new(r, "summary", json_from_bytes(o.summary, strlen(o.summary)));
        json_object_set_new(r, "mode", json_string(mode_name(v->policy->mode)));
        json_object_set_new(r, "rules", json_integer((json_int_t)v->policy->rules.count));
        json_object_set_new(r, "levels", json_integer((json_int_t)v->policy->level_count));
        json_object_set_new(r, "changed",
                            string_list(o.changes.settings, o.changes.setting_count));
        json_object_set_new(r, "rule_files_changed",
                            string_list(o.changes.rule_files, o.changes.rule_file_count));
    }
    reload_outcome_free(&o);
    return r;
}

/* Whether the user a request names is the asker: by uid, or by the name
 * of the asker's own uid (-1: not known yet). */
static int names_self(struct control_view *v, const struct control_request *req, uid_t asker)
{
    if (req->by_uid)
        return req->uid == asker;
    const struct user_info *me = directory_user(v->directory, asker);
    return me->answered ? strcmp(req->name, me->name) == 0 : -1;
}

/* What a request about someone else asks, for its refusal. */
static const char *about_another(enum control_op op)
{
    switch (op) {
    case CONTROL_FORGIVE:
        return "forgive";
    case CONTROL_EXEMPT:
        return "exempt";
    case CONTROL_SESSION:
        return "a session for another user";
    case CONTROL_ACCOUNT:
        return "asking about another user's login";
    default:
        return "asking about another user";
    }
}

json_t *control_request(struct control_conn *c, const char *line, size_t len, void *arg)
{
    struct control_view *v = arg;
    struct control_request req;
    struct control_error err;
    if (control_parse_request(line, len, &req, &err) < 0)
        return control_reply_error(err.code, err.message);
    /* A change is an event naming who made it, a refusal one naming whom
     * it refused: root's other requests need no name, anyone else's wait
     * for theirs (and for whether they are an admin). */
    bool named = c->peer.uid != 0 || req.op == CONTROL_FORGIVE || req.op == CONTROL_EXEMPT ||
                 req.op == CONTROL_RELOAD;
    if (named && !directory_user(v->directory, c->peer.uid)->answered)
        return NULL; /* asked of the directory: this request waits */
    if (c->peer.admin < 0 && (c->peer.admin = v->admin(v->core, c->peer.uid)) < 0)
        return NULL;
    uint64_t now = env_realtime(v->env);
    bool admin = c->peer.admin == 1;
    if (req.op == CONTROL_STATUS)
        return status(v, c, req.all, now);
    if (req.op == CONTROL_RELOAD)
        return admin ? reload(v, c) : refuse(v, c, req.op, "reload");
    if (req.op == CONTROL_WHY) {
        bool refused;
        json_t *r = why_reply(v, c, req.pid, &refused);
        return refused ? refuse(v, c, req.op, "asking about another user's process") : r;
    }
    /* Every user's usage and level: for those who may see everyone. */
    if (req.op == CONTROL_METRICS)
        return c->peer.admin == 1 ? v->metrics(v->core) : refuse(v, c, req.op, "metrics");
    /* Permission first: one who is no admin may name only themselves, so
     * no directory is asked about a name they send. */
    int self = admin || !req.has_user ? 1 : names_self(v, &req, c->peer.uid);
    if (self < 0)
        return NULL;
    if (!self)
        return refuse(v, c, req.op, about_another(req.op));
    uid_t uid;
    int resolved = resolve(v, &req, c->peer.uid, &uid, &err);
    if (resolved != 0)
        return resolved > 0 ? NULL : control_reply_error(err.code, err.message);
    switch (req.op) {
    case CONTROL_USER: {
        if (!admin && uid != c->peer.uid)
            return refuse(v, c, req.op, "asking about another user");
        json_t *r = reply_with_user(v, uid, now);
        user_report_add(v, r, uid, now);
        return r;
    }
    case CONTROL_FORGIVE:
        return admin ? forgive(v, c, uid, &req, now) : refuse(v, c, req.op, "forgive");
    case CONTROL_EXEMPT:
        return admin ? exempt(v, c, uid, &req, now) : refuse(v, c, req.op, "exempt");
    /* pam_loginguard runs as root; anyone else asks about themselves. */
    case CONTROL_SESSION:
        return c->peer.uid == 0 || uid == c->peer.uid
                   ? login_session_reply(v, c, uid, req.notices)
                   : refuse(v, c, req.op, "a session for another user");
    case CONTROL_ACCOUNT:
        return c->peer.uid == 0 || uid == c->peer.uid
                   ? login_account_reply(v, uid, req.deny_level)
                   : refuse(v, c, req.op, "asking about another user's login");
    default:
        return control_reply_error(CONTROL_BAD_REQUEST, "unknown request");
    }
}
