#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "event_limit.h"
#include "util.h"

static const char *const kind_names[HELD_KIND_COUNT] = {
    [HELD_FORBIDDEN_PROCESS] = "forbidden_process",
    [HELD_COMPUTE_PROCESS] = "compute_process",
    [HELD_PROCESS_STOPPING] = "process_stopping",
    [HELD_PROCESS_EXITED] = "process_exited",
    [HELD_PROCESS_KILLED] = "process_killed",
    [HELD_STOP_SKIPPED] = "stop_skipped",
    [HELD_STOP_ERROR] = "stop_error",
    [HELD_NOTICE] = "notice",
    [HELD_ARGV_UNREADABLE] = "argv_unreadable",
};

const char *event_limit_kind_name(enum event_limit_kind k)
{
    return k < HELD_KIND_COUNT ? kind_names[k] : "?";
}

int event_limit_kind(const char *event_name)
{
    for (int k = 0; event_name && k < HELD_KIND_COUNT; k++)
        if (strcmp(event_name, kind_names[k]) == 0)
            return k;
    return -1;
}

void event_limit_set(struct event_limit *l, uint64_t per_user, uint64_t interval)
{
    l->per_user = per_user;
    l->interval = interval;
}

static bool ended_by(const struct event_limit *l, const struct event_limit_user *u, uint64_t now)
{
    return now < u->r.since || now - u->r.since >= l->interval;
}

enum event_limit_verdict event_limit_admit(struct event_limit *l, uid_t uid,
                                           enum event_limit_kind kind, const char *user,
                                           const char *mode, uint64_t now,
                                           struct event_limit_report *ended)
{
    memset(ended, 0, sizeof(*ended));
    size_t at = uid_position(l->users, l->count, sizeof(*l->users),
                             offsetof(struct event_limit_user, r.uid), uid);
    struct event_limit_user *u = at < l->count && l->users[at].r.uid == uid ? &l->users[at]
                                                                           : NULL;
    if (u && ended_by(l, u, now)) {
        if (u->r.total)
            *ended = u->r;
        memset(u, 0, sizeof(*u));
        u->r.uid = uid;
        u->r.since = now;
    }
    if (l->per_user == 0)
        return EVENT_WRITE;
    if (!u) {
        l->users = insert_at(l->users, &l->count, &l->capacity, sizeof(*l->users), at);
        u = &l->users[at];
        u->r.uid = uid;
        u->r.since = now;
    }
    if (user)
        copy_string(u->r.user, sizeof(u->r.user), user);
    if (mode)
        copy_string(u->r.mode, sizeof(u->r.mode), mode);
    if (u->written < l->per_user) {
        u->written++;
        return EVENT_WRITE;
    }
    u->r.held[kind]++;
    u->r.total++;
    return EVENT_HOLD;
}

void event_limit_expire(struct event_limit *l, uint64_t now, bool all,
                        void (*fn)(const struct event_limit_report *r, void *arg), void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->count; i++) {
        struct event_limit_user *u = &l->users[i];
        bool ended = ended_by(l, u, now);
        if ((ended || all) && u->r.total) {
            struct event_limit_report r = u->r;
            fn(&r, arg);
            /* Still open (all): it goes on, with nothing held back yet. */
            memset(u->r.held, 0, sizeof(u->r.held));
            u->r.total = 0;
        }
        if (!ended)
            l->users[kept++] = *u;
    }
    l->count = kept;
}

void event_limit_free(struct event_limit *l)
{
    free(l->users);
    memset(l, 0, sizeof(*l));
}
