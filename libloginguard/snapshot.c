#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "util.h"

void snapshot_clear(struct snapshot *s)
{
    for (size_t i = 0; i < s->proc_count; i++) {
        free(s->procs[i].exe);
        free(s->procs[i].argv);
        free(s->procs[i].foreign_code);
    }
    s->proc_count = 0;
    s->user_count = 0;
}

void snapshot_free(struct snapshot *s)
{
    snapshot_clear(s);
    free(s->procs);
    free(s->users);
    memset(s, 0, sizeof(*s));
}

struct user_sample *snapshot_add_user(struct snapshot *s, uid_t uid)
{
    s->users = grow_array(s->users, s->user_count, &s->user_capacity, sizeof(*s->users));
    struct user_sample *u = &s->users[s->user_count++];
    memset(u, 0, sizeof(*u));
    u->uid = uid;
    return u;
}

struct proc_sample *snapshot_add_proc(struct snapshot *s)
{
    s->procs = grow_array(s->procs, s->proc_count, &s->proc_capacity, sizeof(*s->procs));
    struct proc_sample *p = &s->procs[s->proc_count++];
    memset(p, 0, sizeof(*p));
    return p;
}

struct user_sample *snapshot_find_user(const struct snapshot *s, uid_t uid)
{
    for (size_t i = 0; i < s->user_count; i++)
        if (s->users[i].uid == uid)
            return &s->users[i];
    return NULL;
}

