/* The daemon's metrics: its context as a metrics_view for the pure
 * formatter, the reply to loginguardctl metrics, and metrics_file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control/metrics_collect.h"
#include "control_proto.h"
#include "metrics_format.h"
#include "safefile.h"
#include "user_standing.h"
#include "util.h"

struct candidate {
    struct metrics_user user;
    bool first;    /* a level or a temporary exemption: shown before the rest */
    bool idle;     /* never shown (user_standing.h) */
};

static struct candidate candidate(struct metrics_inputs *in, uid_t uid, uint64_t now)
{
    const struct user_sample *u = snapshot_find_user(in->snap, uid);
    const struct user_state *us = engine_user(in->engine, uid, false);
    const struct user_info *info = directory_user(in->directory, uid);
    struct user_sample who = directory_sample(in->directory, uid);
    struct candidate c = {
        .user = {.uid = uid, .name = info->name, .cpu_cores = u ? u->cpu : 0,
                 .memory_bytes = u ? u->memory : 0, .tasks = u ? u->tasks : 0,
                 .level = us ? us->level : 0,
                 .exempt = user_protected(in->policy, us, &who, now)},
        .first = user_marked(us, now),
        .idle = user_idle(us, u ? u->cpu : 0, u ? u->memory : 0,
                          in->policy->violation_memory / 2, now),
    };
    return c;
}

static int by_rank(const void *a, const void *b)
{
    const struct candidate *x = a, *y = b;
    if (x->first != y->first)
        return x->first ? -1 : 1;
    return x->user.cpu_cores > y->user.cpu_cores ? -1 : x->user.cpu_cores < y->user.cpu_cores;
}

static int by_uid(const void *a, const void *b)
{
    const struct metrics_user *x = a, *y = b;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* The users shown (sorted by uid, to be freed), as status picks them
 * without --all: those the snapshot saw and those the engine keeps a
 * level or an exemption for, idle ones left out, at most
 * METRICS_USERS_MAX. */
static struct metrics_user *pick_users(struct metrics_inputs *in, struct metrics_view *v)
{
    uint64_t now = env_realtime(in->env);
    size_t cap = in->snap->user_count + in->engine->user_count + 1, n = 0;
    struct candidate *all = xmalloc(cap * sizeof(*all));
    v->users_tracked = in->snap->user_count;
    for (size_t i = 0; i < in->snap->user_count; i++)
        all[n++] = candidate(in, in->snap->users[i].uid, now);
    for (size_t i = 0; i < in->engine->user_count; i++) {
        uid_t uid = in->engine->users[i].uid;
        if (snapshot_find_user(in->snap, uid))
            continue;
        all[n] = candidate(in, uid, now);
        v->users_tracked += all[n].first;
        n++;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (!all[i].idle)
            all[kept++] = all[i];
    qsort(all, kept, sizeof(*all), by_rank);
    v->user_count = kept < METRICS_USERS_MAX ? kept : METRICS_USERS_MAX;
    v->users_omitted = kept - v->user_count;
    struct metrics_user *users = xmalloc((v->user_count + 1) * sizeof(*users));
    for (size_t i = 0; i < v->user_count; i++)
        users[i] = all[i].user;
    free(all);
    qsort(users, v->user_count, sizeof(*users), by_uid);
    return users;
}

char *metrics_text(struct metrics_inputs *in, size_t *len)
{
    const char *levels[MAX_LEVELS];
    for (size_t i = 0; i < in->policy->level_count; i++)
        levels[i] = in->policy->levels[i].name;
    struct metrics_view v = {
        .version = PACKAGE_VERSION,
        .mode = mode_name(in->policy->mode),
        .enforcing = *in->enforcing,
        .counters = in->metrics,
        .level_names = levels,
        .level_count = in->policy->level_count,
        .processes_tracked = in->sampler->known.count,
        .connector_up = in->connector->fd >= 0,
        .connector_events = in->connector->events,
        .connector_overruns = in->connector->overruns,
        .taskstats_up = in->exits->fd >= 0,
        .taskstats_exits = in->exits->exits,
        .taskstats_overruns = in->exits->overruns,
        .taskstats_dropped = in->exits->dropped,
        .events_suppressed = in->events->suppressed_total,
        .events_lost = in->events->lost_total,
    };
    struct metrics_user *users = pick_users(in, &v);
    v.users = users;
    char *text = metrics_format(&v, len);
    free(users);
    return text;
}

json_t *metrics_reply(struct metrics_inputs *in)
{
    size_t len;
    char *text = metrics_text(in, &len);
    json_t *r = control_reply_ok();
    /* The label values are UTF-8 (metrics_format escapes the rest). */
    json_object_set_new(r, "metrics", json_stringn(text, len));
    json_object_set_new(r, "format", json_string("text/plain; version=0.0.4"));
    free(text);
    return r;
}

/* metrics_file, replaced whole: a reader (node_exporter) sees the last
 * sample's text or the one before, never a part. */
static int write_file(struct metrics_inputs *in, const char *path, char *err, size_t err_len)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = -1;
    if (dirfd < 0) {
        snprintf(err, err_len, "%s: cannot open the directory of metrics_file: %s; make it, or"
                 " set [daemon] metrics_file to a path in one that exists", dir, strerror(errno));
    } else {
        size_t len;
        char *text = metrics_text(in, &len);
        rc = safe_publish_file(dirfd, dir, slash + 1, text, len, err, err_len);
        free(text);
        close(dirfd);
    }
    free(dir);
    return rc;
}

void metrics_sampled(struct metrics_inputs *in, uint64_t began)
{
    uint64_t now = env_boottime(in->env);
    metrics_count_sample(in->metrics, now > began ? now - began : 0);
    const char *path = in->policy->metrics_file;
    if (!path)
        return;
    char err[700];
    if (write_file(in, path, err, sizeof(err)) == 0) {
        in->metrics->file_failing = false;
    } else if (!in->metrics->file_failing) {
        /* Once until it works again, not at every sample. */
        in->metrics->file_failing = true;
        event_log_write(in->events, event_daemon("metrics_error", err, in->policy,
                                                 in->events->host, env_realtime(in->env)));
    }
}
