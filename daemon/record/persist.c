#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/login_notices.h"
#include "record/persist.h"
#include "record/state.h"
#include "units.h"
#include "util.h"

/* What happened to a write, said only when it is news. */
static void report(const struct persist_io *io, const struct save_status *s,
                   enum save_news news, const char *what, const char *err)
{
    char msg[900];
    const char *name;
    if (news == SAVE_STARTED_FAILING) {
        name = "state_error";
        snprintf(msg, sizeof(msg), "%s; %s stays in memory and is written again at every "
                 "sample until that works (said once)", err, what);
    } else if (news == SAVE_WRITTEN_AGAIN) {
        name = "state_written";
        char since[32];
        time_t t = (time_t)(s->failing_since / USEC_PER_SEC);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(msg, sizeof(msg), "%s is written again, after %llu failed writes since %s",
                 what, (unsigned long long)s->failures, since);
    } else {
        return;
    }
    event_log_write(io->events, event_daemon(name, msg, io->policy, io->events->host,
                                             env_realtime(io->env)));
}

void persist_save_state(const struct persist_io *io, const struct engine_state *engine)
{
    char err[512] = "", what[600];
    uint64_t now = env_realtime(io->env);
    int rc = state_save(io->policy->state_dir, engine, now, err, sizeof(err));
    snprintf(what, sizeof(what), "the state (%s/%s)", io->policy->state_dir, STATE_FILE);
    report(io, &io->persist->state, save_status_note(&io->persist->state, rc == 0, now), what,
           err);
}

void persist_save_notice_rate(const struct persist_io *io, const struct notice_rate *rate)
{
    char err[512] = "", what[600];
    uint64_t now = env_realtime(io->env);
    const char *dir = io->policy->state_dir;
    int rc = notice_rate_save(rate, dir, err, sizeof(err));
    snprintf(what, sizeof(what), "the notice rate limit (%s/notified.json)", dir);
    report(io, &io->persist->rate, save_status_note(&io->persist->rate, rc == 0, now), what,
           err);
}

static void pending_free(struct pending_notice *p)
{
    free(p->subject);
    free(p->body);
}

/* Write the kept notices, oldest first; those that fail stay. */
static int write_pending(const struct persist_io *io, char *err, size_t len)
{
    struct persist *p = io->persist;
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < p->notice_count; i++) {
        struct pending_notice *n = &p->notices[i];
        if (login_notice_add(io->policy->state_dir, n->uid, n->time, notice_kind_name(n->kind),
                             n->subject, n->body, err, len) == 0) {
            pending_free(n);
        } else {
            rc = -1;
            p->notices[kept++] = *n;
        }
    }
    p->notice_count = kept;
    return rc;
}

static void write_login_notices(const struct persist_io *io, char *err, size_t len)
{
    char what[600];
    err[0] = '\0';
    int rc = write_pending(io, err, len);
    snprintf(what, sizeof(what), "the notices for the next login (%s/login-notices)",
             io->policy->state_dir);
    report(io, &io->persist->login,
           save_status_note(&io->persist->login, rc == 0, env_realtime(io->env)), what, err);
}

/* A newer notice of the same kind replaces one still waiting: the user
 * needs the latest, once. */
static void drop_pending(struct persist *p, uid_t uid, enum notice_kind kind)
{
    size_t kept = 0;
    for (size_t i = 0; i < p->notice_count; i++) {
        if (p->notices[i].uid == uid && p->notices[i].kind == kind)
            pending_free(&p->notices[i]);
        else
            p->notices[kept++] = p->notices[i];
    }
    p->notice_count = kept;
}

enum notify_outcome persist_keep_login_notice(const struct persist_io *io, uid_t uid,
                                              enum notice_kind kind, const struct notice *n,
                                              char *msg, size_t len)
{
    struct persist *p = io->persist;
    drop_pending(p, uid, kind);
    if (p->notice_count == PENDING_NOTICES_MAX) {
        pending_free(&p->notices[0]);
        memmove(p->notices, p->notices + 1, --p->notice_count * sizeof(*p->notices));
    }
    p->notices = grow_array(p->notices, p->notice_count, &p->notice_capacity,
                            sizeof(*p->notices));
    p->notices[p->notice_count++] = (struct pending_notice){
        .uid = uid, .time = env_realtime(io->env), .kind = kind,
        .subject = xstrdup(n->subject), .body = xstrdup(n->body)};
    /* Earlier ones first, so the user reads them in order. */
    char err[512];
    write_login_notices(io, err, sizeof(err));
    for (size_t i = 0; i < p->notice_count; i++)
        if (p->notices[i].uid == uid && p->notices[i].kind == kind) {
            snprintf(msg, len, "%s; kept in memory and written at a later sample", err);
            return NOTIFY_FAILED;
        }
    return NOTIFY_SENT;
}

void persist_save_pending(const struct persist_io *io, const struct notice_rate *rate)
{
    if (io->persist->rate.pending)
        persist_save_notice_rate(io, rate);
    if (io->persist->login.pending) {
        char err[512];
        write_login_notices(io, err, sizeof(err));
    }
}

void persist_free(struct persist *p)
{
    for (size_t i = 0; i < p->notice_count; i++)
        pending_free(&p->notices[i]);
    free(p->notices);
    memset(p, 0, sizeof(*p));
}
