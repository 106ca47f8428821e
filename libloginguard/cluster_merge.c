/* The merge rule of a cluster's shared standings (cluster_merge.h says
 * the rule; this is it, word for word). */
#include "config.h"

#include <string.h>

#include "cluster_merge.h"

static const char *const kind_names[] = {
    [CHANGE_RAISE] = "raise",
    [CHANGE_LOWER] = "lower",
    [CHANGE_FORGIVE] = "forgive",
    [CHANGE_EXEMPT] = "exempt",
};

const char *standing_change_name(enum standing_change_kind k)
{
    if ((size_t)k < sizeof(kind_names) / sizeof(kind_names[0]))
        return kind_names[k];
    return "";
}

int standing_change_kind_parse(const char *name)
{
    for (size_t i = 0; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
        if (strcmp(name, kind_names[i]) == 0)
            return (int)i;
    return -1;
}

#define CMP(x, y)                                                                          \
    do {                                                                                   \
        if ((x) != (y))                                                                    \
            return (x) < (y) ? -1 : 1;                                                     \
    } while (0)

/* Level, then the later end of limits; the rest only so that two
 * different penalties are never equal (every node must pick the same). */
int penalty_compare(const struct penalty *a, const struct penalty *b)
{
    CMP(a->level, b->level);
    CMP(a->until, b->until);
    CMP(a->since, b->since);
    CMP(a->quiet_since, b->quiet_since);
    CMP(a->last_violation, b->last_violation);
    CMP(a->violations, b->violations);
    CMP((int)a->last_reason, (int)b->last_reason);
    CMP(a->last_cpu, b->last_cpu);
    CMP(a->last_memory, b->last_memory);
    CMP(a->last_window, b->last_window);
    return 0;
}

bool standing_change_current(const struct shared_standing *row, const struct standing_change *c)
{
    return row->rev == c->base_rev;
}

static void take_stronger(struct penalty *into, const struct penalty *p)
{
    if (penalty_compare(p, into) > 0)
        *into = *p;
}

/* A raise of the forgiving node sent before the forgive was seen by
 * the admin's node: the forgive cancels it. */
static bool cancelled_by(const struct standing_change *forgive, const struct standing_change *r)
{
    return strcmp(r->node, forgive->node) == 0 && r->seq < forgive->seq;
}

static void forgive(struct penalty *p, const struct standing_change *c,
                    const struct standing_change *later, size_t later_count)
{
    *p = c->penalty;
    for (size_t i = 0; i < later_count; i++)
        if (later[i].kind == CHANGE_RAISE && later[i].uid == c->uid &&
            !cancelled_by(c, &later[i]))
            take_stronger(p, &later[i].penalty);
}

bool standing_merge(struct shared_standing *row, const struct standing_change *c,
                    const struct standing_change *later, size_t later_count)
{
    struct penalty p = row->penalty;
    uint64_t exempt_until = row->exempt_until;
    bool current = standing_change_current(row, c);

    switch (c->kind) {
    case CHANGE_RAISE:
        if (current)
            p = c->penalty;
        else
            take_stronger(&p, &c->penalty);
        break;
    case CHANGE_LOWER:
        if (!current)
            return false;
        p = c->penalty;
        break;
    case CHANGE_FORGIVE:
        forgive(&p, c, later, later_count);
        break;
    case CHANGE_EXEMPT:
        exempt_until = c->exempt_until;
        break;
    default:
        return false;
    }
    if (penalty_compare(&p, &row->penalty) == 0 && exempt_until == row->exempt_until)
        return false;
    row->penalty = p;
    row->exempt_until = exempt_until;
    return true;
}

void penalty_from_user(struct penalty *p, const struct user_state *us)
{
    *p = (struct penalty){
        .level = us->level,
        .since = us->since,
        .until = us->until,
        .quiet_since = us->quiet_since,
        .last_violation = us->last_violation,
        .violations = us->violations,
        .last_reason = us->last_reason,
        .last_cpu = us->last_cpu,
        .last_memory = us->last_memory,
        .last_window = us->last_window,
    };
}

void penalty_to_user(struct user_state *us, const struct penalty *p)
{
    us->level = p->level;
    us->since = p->since;
    us->until = p->until;
    us->quiet_since = p->quiet_since;
    us->last_violation = p->last_violation;
    us->violations = p->violations;
    us->last_reason = p->last_reason;
    us->last_cpu = p->last_cpu;
    us->last_memory = p->last_memory;
    us->last_window = p->last_window;
}

static bool same_penalty(const struct penalty *a, const struct penalty *b)
{
    return a->level == b->level && a->since == b->since && a->until == b->until &&
           a->quiet_since == b->quiet_since && a->last_violation == b->last_violation &&
           a->violations == b->violations && a->last_reason == b->last_reason &&
           a->last_cpu == b->last_cpu && a->last_memory == b->last_memory &&
           a->last_window == b->last_window;
}

bool engine_take_standing(struct engine_state *st, uid_t uid, const struct penalty *p,
                          uint64_t exempt_until)
{
    struct user_state *us = engine_user(st, uid, false);
    struct penalty before = {0};
    if (us)
        penalty_from_user(&before, us);
    if (same_penalty(&before, p) && (us ? us->exempt_until : 0) == exempt_until)
        return false;
    us = engine_user(st, uid, true);
    penalty_to_user(us, p);
    us->exempt_until = exempt_until;
    return true;
}
