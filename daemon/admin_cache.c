#include "config.h"

#include "admin_cache.h"
#include "control_server.h"

/* uid's answer, or NULL. */
static struct admin_answer *find(struct admin_cache *c, uid_t uid)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->answers[i].uid == uid)
            return &c->answers[i];
    return NULL;
}

/* A free slot, else the oldest answer's. */
static struct admin_answer *free_slot(struct admin_cache *c)
{
    if (c->count < ADMIN_CACHE_MAX)
        return &c->answers[c->count++];
    struct admin_answer *oldest = &c->answers[0];
    for (size_t i = 1; i < c->count; i++)
        if (c->answers[i].at < oldest->at)
            oldest = &c->answers[i];
    return oldest;
}

bool admin_cache_check(struct admin_cache *c, uid_t uid, bool subordinate, const char *group,
                       uint64_t now)
{
    if (uid == 0)
        return true;
    if (subordinate || !group || !group[0])
        return false;
    struct admin_answer *a = find(c, uid);
    if (a && now - a->at < ADMIN_CACHE_AGE)
        return a->admin;
    if (!a)
        a = free_slot(c);
    *a = (struct admin_answer){.uid = uid, .at = now};
    a->admin = (c->lookup ? c->lookup : control_uid_admin)(uid, group);
    c->lookups++;
    return a->admin;
}

void admin_cache_forget(struct admin_cache *c)
{
    c->count = 0;
}
