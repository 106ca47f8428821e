#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster.h"
#include "cluster/cluster_daemon.h"
#include "cluster/cluster_link.h"
#include "cluster_codec.h"
#include "cluster_config.h"
#include "enforce/actions.h"
#include "record/persist.h"
#include "units.h"
#include "util.h"

/* A link that died is started again after this long: never a busy loop. */
#define RESTART_DELAY_USEC USEC_PER_SEC
/* Messages read at one wake-up: the rows of a large cluster at "up" are
 * taken a few hundred at a time, with samples in between. */
#define READ_BATCH 256
/* An event bigger than a packet (with room for the record around it) is
 * not queued: the link could never send it. */
#define EVENT_MAX (CLUSTER_PACKET_MAX - 1024)
/* At stop, the link is given this long to exit after its socket closes,
 * and as long again after a SIGTERM. */
#define STOP_WAIT_MS 1000

static void event(struct cluster_view *v, json_t *e)
{
    event_log_write(v->events, e);
}

static json_t *daemon_event(struct cluster_view *v, const char *name, const char *message)
{
    return event_daemon(name, message, v->policy, v->events->host, env_realtime(v->env));
}

/* The queue's file failing and working again, each said once. */
static void note_queue_write(struct cluster_view *v, bool ok, const char *err)
{
    struct cluster *c = v->cluster;
    uint64_t now = env_realtime(v->env);
    enum save_news news = save_status_note(&c->queue_status, ok, now);
    char msg[900];
    if (news == SAVE_STARTED_FAILING) {
        snprintf(msg, sizeof(msg), "%s; the cluster's records stay in memory and are written "
                 "again at every sample until that works (said once)", err);
        event(v, daemon_event(v, "state_error", msg));
    } else if (news == SAVE_WRITTEN_AGAIN) {
        snprintf(msg, sizeof(msg), "%s/%s is written again, after %llu failed writes",
                 c->queue.dir, CLUSTER_QUEUE_FILE, (unsigned long long)c->queue_status.failures);
        event(v, daemon_event(v, "state_written", msg));
    }
}

static void save_revs(struct cluster_view *v)
{
    struct cluster *c = v->cluster;
    if (!c->revs_dirty && !c->revs_status.pending)
        return;
    char err[700] = "", msg[900];
    int rc = cluster_save_revs(c, err, sizeof(err));
    enum save_news news = save_status_note(&c->revs_status, rc == 0, env_realtime(v->env));
    if (news == SAVE_STARTED_FAILING) {
        snprintf(msg, sizeof(msg), "%s; tried again after the next rows (said once)", err);
        event(v, daemon_event(v, "state_error", msg));
    } else if (news == SAVE_WRITTEN_AGAIN) {
        snprintf(msg, sizeof(msg), "%s/%s is written again", c->queue.dir, CLUSTER_REVS_FILE);
        event(v, daemon_event(v, "state_written", msg));
    }
}

static void sync_queue(struct cluster_view *v)
{
    char err[700] = "";
    int rc = cluster_queue_sync(&v->cluster->queue, err, sizeof(err));
    note_queue_write(v, rc == 0, err);
}

/* Every event the log is handed becomes a record (event_log's tap). */
static void tap(const json_t *e, void *arg)
{
    struct cluster_view *v = arg;
    struct cluster *c = v->cluster;
    const char *name = json_string_value(json_object_get(e, "event"));
    /* What each node takes from the database is no news to it. */
    if (name && strcmp(name, "standing_received") == 0)
        return;
    bool first = false;
    if (json_dumpb(e, NULL, 0, JSON_COMPACT) > EVENT_MAX) {
        c->queue.refused_total++;
        return;
    }
    if (cluster_add_event(c, e, &first) == 0 && first) {
        char msg[300];
        snprintf(msg, sizeof(msg), "the cluster's queue (%s/%s) holds %llu MiB unsent: events "
                 "are no longer queued for the database until it shrinks (changes of "
                 "standing still are)", c->queue.dir, CLUSTER_QUEUE_FILE,
                 (unsigned long long)(c->queue.limit >> 20));
        /* Past the limit this one is not queued either: no loop. */
        event(v, daemon_event(v, "cluster_queue_full", msg));
    }
}

static void start_link(struct cluster_view *v)
{
    struct cluster *c = v->cluster;
    c->restart_at = 0;
    if (cluster_link_start(&c->link, &c->pid, &c->fd) == 0) {
        c->sent = 0;
        return;
    }
    c->pid = 0;
    c->fd = -1;
    c->restart_at = env_boottime(v->env) + RESTART_DELAY_USEC;
    if (c->exit_said)
        return;
    c->exit_said = true;
    char msg[600];
    snprintf(msg, sizeof(msg), "cannot start the link to the cluster's database (%s%s%s): %s; "
             "tried again every second (said once), enforcing on this node's own state "
             "meanwhile", c->link.program, c->passfile ? ", " : "", c->passfile ? c->passfile : "",
             strerror(errno));
    event(v, daemon_event(v, "cluster_link_error", msg));
}

void cluster_daemon_start(struct cluster_view *v)
{
    struct cluster *c = v->cluster;
    c->fd = -1;
    if (!v->policy->cluster_database || !v->policy->cluster_database[0])
        return;
    char node[CLUSTER_NODE_MAX], why[700];
    if (cluster_node_name(v->policy, node, sizeof(node), why, sizeof(why)) < 0) {
        event(v, daemon_event(v, "cluster_link_error", why)); /* the config check said so too */
        return;
    }
    size_t skipped = 0;
    int rc = cluster_open(c, node, v->policy->state_dir, 0, &skipped, why, sizeof(why));
    c->database = xstrdup(v->policy->cluster_database);
    if (rc < 0)
        event(v, daemon_event(v, "state_error", why));
    char passfile[4096];
    if (cluster_conninfo_value(c->database, "passfile", passfile, sizeof(passfile)))
        c->passfile = xstrdup(passfile);
    /* The environment names another program for the tests, which run
     * the one just built. */
    c->link = (struct cluster_link_settings){
        .program = getenv("LOGINGUARD_LINK_PROGRAM") ?: PKGLIBEXECDIR "/loginguard-link",
        .database = c->database, .passfile = c->passfile, .node = c->node};
    const char *user = v->policy->cluster_link_user ?: CLUSTER_LINK_USER;
    if (skipped) {
        char msg[600];
        snprintf(msg, sizeof(msg), "%s/%s: %zu lines were no records and are left out",
                 c->queue.dir, CLUSTER_QUEUE_FILE, skipped);
        event(v, daemon_event(v, "state_error", msg));
        sync_queue(v);
    }
    v->events->tap = tap;
    v->events->tap_arg = v;
    /* Without its user there is no link: the node queues its changes
     * and enforces on its own state, as with a database down. */
    if (access(c->link.program, X_OK) != 0) {
        snprintf(why, sizeof(why), "the cluster link's program %s cannot be run: %s (it comes "
                 "with loginguard: reinstall it)", c->link.program, strerror(errno));
        event(v, daemon_event(v, "cluster_link_error", why));
    } else if (cluster_link_user(&c->link, user, why, sizeof(why)) < 0) {
        event(v, daemon_event(v, "cluster_link_error", why));
    } else {
        start_link(v);
    }
}

/* The link's socket closed (it exited, or said nothing we could read). */
static void link_lost(struct cluster_view *v, const char *why)
{
    struct cluster *c = v->cluster;
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->up = false;
    c->restart_at = env_boottime(v->env) + RESTART_DELAY_USEC;
    if (c->exit_said)
        return;
    c->exit_said = true;
    char msg[400];
    snprintf(msg, sizeof(msg), "the link to the cluster's database stopped (%s); started again "
             "in a second (said once until it is up), enforcing on this node's own state "
             "meanwhile", why);
    event(v, daemon_event(v, "cluster_link_exited", msg));
}

static void reap(struct cluster *c)
{
    int st;
    if (c->pid > 0 && waitpid(c->pid, &st, WNOHANG) == c->pid)
        c->pid = 0;
}

void cluster_daemon_stop(struct cluster_view *v)
{
    struct cluster *c = v->cluster;
    if (!c->enabled)
        return;
    v->events->tap = NULL;
    sync_queue(v);
    save_revs(v);
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    /* Its socket closed, the link exits.  One stuck in a call to the
     * database is ended (a transaction cut short is rolled back, and its
     * record is sent again at the next start). */
    for (int i = 0; c->pid > 0 && i < 2 * STOP_WAIT_MS / 10; i++) {
        if (i == STOP_WAIT_MS / 10)
            kill(c->pid, SIGTERM);
        reap(c);
        if (c->pid > 0)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    if (c->pid > 0) {
        kill(c->pid, SIGKILL);
        while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    c->pid = 0;
    cluster_close(c);
}

static bool same_text(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

void cluster_daemon_reloaded(struct cluster_view *v, const struct policy *old)
{
    const struct policy *p = v->policy;
    if (!same_text(old->cluster_database, p->cluster_database) ||
        !same_text(old->cluster_node, p->cluster_node) ||
        !same_text(old->cluster_link_user, p->cluster_link_user))
        event(v, daemon_event(v, "cluster_config_pending",
                              "[cluster] changed: it takes effect when loginguardd is restarted; "
                              "until then the node keeps its link as it was started"));
}

void cluster_daemon_pollfd(struct cluster_view *v, struct pollfd *p)
{
    const struct cluster *c = v->cluster;
    /* Not while the queue cannot be written: nothing is sent before it is
     * on disk, and a socket ready to write would wake the loop at once,
     * again and again (the queue is tried again at every sample). */
    bool waiting = c->up && !c->queue.broken && cluster_queue_after(&c->queue, c->sent);
    *p = (struct pollfd){.fd = c->fd, .events = (short)(POLLIN | (waiting ? POLLOUT : 0))};
}

uint64_t cluster_daemon_deadline(const struct cluster_view *v)
{
    return v->cluster->enabled ? v->cluster->restart_at : 0;
}

static void read_messages(struct cluster_view *v);

/* Send what waits, in seq order, until the socket is full. */
static void send_waiting(struct cluster_view *v)
{
    struct cluster *c = v->cluster;
    if (!c->up || c->fd < 0 || !cluster_queue_after(&c->queue, c->sent))
        return;
    /* Nothing leaves this node before it is on its disk: a seq the
     * database stored must never be given again after a crash. */
    if (c->queue.dirty || c->queue.broken)
        sync_queue(v);
    if (c->queue.dirty || c->queue.broken)
        return;
    const struct cluster_record *r;
    while ((r = cluster_queue_after(&c->queue, c->sent))) {
        if (send(c->fd, r->text, r->len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
                /* What it said before it went is still to be read. */
                int e = errno;
                read_messages(v);
                if (c->fd >= 0)
                    link_lost(v, strerror(e));
            }
            return;
        }
        c->sent = r->seq;
    }
}

static void on_down(struct cluster_view *v, const json_t *m)
{
    struct cluster *c = v->cluster;
    c->up = false;
    if (c->down_said)
        return;
    c->down_said = true;
    const char *error = json_string_value(json_object_get(m, "error"));
    char msg[700];
    snprintf(msg, sizeof(msg), "the cluster's database cannot be reached: %s; enforcing on this "
             "node's own state, records queued in %s/%s (said once until it is back)",
             error ? error : "no reason given", c->queue.dir, CLUSTER_QUEUE_FILE);
    event(v, daemon_event(v, "cluster_down", msg));
}

static void standing_event(struct cluster_view *v, const struct shared_standing *row, int before)
{
    const char *name = directory_name_of(v->directory, row->uid);
    json_t *e = event_action("standing_received", row->uid, name, mode_name(v->policy->mode),
                             v->events->host, env_realtime(v->env));
    json_object_set_new(e, "from_node", json_string(row->node));
    json_object_set_new(e, "rev", json_integer((json_int_t)row->rev));
    json_object_set_new(e, "level_before", json_integer(before));
    json_object_set_new(e, "level", json_integer(row->penalty.level));
    json_object_set_new(e, "until", row->penalty.until ? json_from_time(row->penalty.until)
                                                       : json_null());
    json_object_set_new(e, "exempt_until", row->exempt_until
                                               ? json_from_time(row->exempt_until)
                                               : json_null());
    event(v, e);
}

/* A row taken: its limits applied at once.  True when the user's
 * standing changed. */
static bool take_row(struct cluster_view *v, const struct shared_standing *row)
{
    const struct user_state *us = engine_user(v->engine, row->uid, false);
    int before = us ? us->level : 0;
    if (cluster_apply_standing(v->cluster, v->engine, row) != STANDING_APPLIED)
        return false;
    v->cluster->rows_applied++;
    if (*v->enforcing) {
        struct actions a = v->actions(v->core);
        if (sync_user_limits(&a, v->snap, row->uid))
            v->counters_changed(v->core);
    }
    standing_event(v, row, before);
    return true;
}

static bool on_standing(struct cluster_view *v, const json_t *m)
{
    struct shared_standing row;
    char why[300];
    if (standing_from_json(m, &row, why, sizeof(why)) < 0) {
        syslog(LOG_WARNING, "cluster link: a standing message ignored: %s", why);
        return false;
    }
    return take_row(v, &row);
}

/* Records up to seq are stored: rows held back for them are taken. */
static bool on_stored(struct cluster_view *v, uint64_t seq)
{
    char err[700] = "";
    if (cluster_queue_stored(&v->cluster->queue, seq, err, sizeof(err)) < 0)
        note_queue_write(v, false, err);
    bool changed = false;
    struct shared_standing row;
    while (cluster_take_held(v->cluster, &row))
        changed |= take_row(v, &row);
    return changed;
}

static bool on_up(struct cluster_view *v, const json_t *m)
{
    struct cluster *c = v->cluster;
    json_int_t stored = json_integer_value(json_object_get(m, "stored"));
    bool changed = on_stored(v, stored > 0 ? (uint64_t)stored : 0);
    c->up = true;
    c->down_said = c->exit_said = false;
    c->sent = stored > 0 ? (uint64_t)stored : 0;
    json_t *e = daemon_event(v, "cluster_up", "connected to the cluster's database");
    json_object_set_new(e, "node", json_string(c->node));
    json_object_set_new(e, "stored", json_integer(stored));
    if (!c->ever_up)
        json_object_set_new(e, "queued", json_integer((json_int_t)c->queue.count));
    c->ever_up = true;
    event(v, e);
    return changed;
}

/* One message of the link; true when the engine's state changed. */
static bool on_message(struct cluster_view *v, const char *buf, size_t len)
{
    json_t *m = json_loadb(buf, len, 0, NULL);
    const char *t = json_string_value(json_object_get(m, "t"));
    bool changed = false;
    if (!t) {
        syslog(LOG_WARNING, "cluster link: a message that is not understood, ignored");
    } else if (strcmp(t, "up") == 0) {
        changed = on_up(v, m);
    } else if (strcmp(t, "stored") == 0) {
        json_int_t seq = json_integer_value(json_object_get(m, "seq"));
        if (seq > 0)
            changed = on_stored(v, (uint64_t)seq);
    } else if (strcmp(t, "standing") == 0) {
        changed = on_standing(v, m);
    } else if (strcmp(t, "down") == 0) {
        on_down(v, m);
    }
    json_decref(m);
    return changed;
}

static void read_messages(struct cluster_view *v)
{
    static char buf[CLUSTER_PACKET_MAX + 1];
    bool changed = false;
    for (int i = 0; i < READ_BATCH && v->cluster->fd >= 0; i++) {
        ssize_t n = recv(v->cluster->fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n <= 0) {
            link_lost(v, n == 0 ? "it exited" : strerror(errno));
            break;
        }
        changed |= on_message(v, buf, (size_t)n);
    }
    /* Rows taken are on disk like any change (one write a batch), and
     * then the revisions they came with. */
    if (changed)
        v->save_state(v->core);
    save_revs(v);
}

void cluster_daemon_handle(struct cluster_view *v, const struct pollfd *p)
{
    struct cluster *c = v->cluster;
    if (!c->enabled)
        return;
    if (c->fd >= 0 && p->fd == c->fd && (p->revents & (POLLIN | POLLHUP | POLLERR)))
        read_messages(v);
    send_waiting(v);
    if (c->fd < 0)
        reap(c);
    uint64_t now = env_boottime(v->env);
    if (c->fd < 0 && c->restart_at && now >= c->restart_at) {
        if (c->pid > 0) {
            /* Its socket is closed but it lives on: ended, reaped next time. */
            kill(c->pid, SIGKILL);
            c->restart_at = now + RESTART_DELAY_USEC;
        } else {
            start_link(v);
        }
    }
}

void cluster_daemon_decisions(struct cluster_view *v)
{
    if (!v->cluster->enabled)
        return;
    if (v->decisions->count)
        cluster_add_decisions(v->cluster, v->engine, v->decisions, v->snap->now);
    /* After a failed write, the whole queue again at every sample. */
    if (v->decisions->count || v->cluster->queue.broken)
        sync_queue(v);
}

void cluster_daemon_change(struct cluster_view *v, enum standing_change_kind kind, uid_t uid,
                           const char *by)
{
    if (!v->cluster->enabled)
        return;
    cluster_add_change(v->cluster, kind, v->engine, uid, by, env_realtime(v->env));
    sync_queue(v);
    send_waiting(v);
}

json_t *cluster_daemon_status(struct cluster_view *v)
{
    const struct cluster *c = v->cluster;
    if (!c->enabled)
        return NULL;
    /* down: the link runs but cannot reach the database; off: no link
     * runs (it could not be started, or is being started again). */
    return json_pack("{s:s, s:s, s:I}", "node", c->node, "link",
                     c->up ? "up" : c->fd >= 0 ? "down" : "off", "queued",
                     (json_int_t)c->queue.count);
}
