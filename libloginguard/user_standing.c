#include "config.h"

#include "user_standing.h"

enum protection user_protection(const struct policy *p, const struct user_state *st,
                                const struct user_sample *u, uint64_t now)
{
    if (u->uid == 0)
        return PROTECTION_ROOT;
    if (u->uid < p->min_uid)
        return PROTECTION_SYSTEM;
    if (u->name[0] && name_list_contains(&p->exempt_users, u->name))
        return PROTECTION_EXEMPT_USER;
    if (u->exempt_group)
        return PROTECTION_EXEMPT_GROUP;
    if (u->directory_pending)
        return PROTECTION_DIRECTORY;
    return st && st->exempt_until > now ? PROTECTION_TEMPORARY : PROTECTION_NONE;
}

bool user_protected(const struct policy *p, const struct user_state *st,
                    const struct user_sample *u, uint64_t now)
{
    return user_protection(p, st, u, now) != PROTECTION_NONE;
}

const struct level *user_level_on(const struct policy *p, const struct user_state *us,
                                  uint64_t now)
{
    if (us && us->level > 0 && us->until > now && (size_t)us->level <= p->level_count)
        return &p->levels[us->level - 1];
    return NULL;
}

/* The stricter of two limits, 0 being none. */
static double tighter_cpu(double a, double b)
{
    return a <= 0 ? b : b <= 0 ? a : (a < b ? a : b);
}

static uint64_t tighter(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : (a < b ? a : b);
}

struct limits user_limits(const struct policy *p, const struct user_state *us, uint64_t now)
{
    struct limits l = {p->share_cpu, p->share_memory, p->share_tasks};
    const struct level *lv = user_level_on(p, us, now);
    if (lv) {
        l.cpu = tighter_cpu(l.cpu, lv->cpu);
        l.memory = tighter(l.memory, lv->memory);
    }
    return l;
}

bool user_limits_wanted(const struct policy *p, const struct user_state *us,
                        enum protection why, uint64_t now, struct limits *out)
{
    if (why == PROTECTION_NONE)
        *out = user_limits(p, us, now);
    else if (why == PROTECTION_TEMPORARY)
        *out = user_limits(p, NULL, now);
    else
        return false;
    return true;
}

bool user_marked(const struct user_state *us, uint64_t now)
{
    return us && (us->level > 0 || us->exempt_until > now);
}

bool user_idle(const struct user_state *us, double cpu, uint64_t memory, uint64_t memory_floor,
               uint64_t now)
{
    return !user_marked(us, now) && cpu < USER_IDLE_CPU && (!memory_floor || memory < memory_floor);
}
