#include "config.h"

#include <stdlib.h>

#include "classify.h"
#include "util.h"

/* Near a violation, or near a level's memory (whose line the engine
 * holds by stopping the largest process: it needs the processes). */
bool classify_worth_a_look(const struct policy *p, const struct user_sample *u)
{
    for (size_t i = 0; i < p->level_count; i++)
        if (p->levels[i].memory && u->memory >= p->levels[i].memory / 2)
            return true;
    return (p->violation_cpu > 0 && u->cpu >= p->violation_cpu / 2) ||
           (p->violation_memory > 0 && u->memory >= p->violation_memory / 2);
}

void classify_choose_detailed(const struct policy *p, struct snapshot *snap)
{
    for (size_t i = 0; i < snap->user_count; i++)
        snap->users[i].detailed = classify_worth_a_look(p, &snap->users[i]);
}

struct user_at {
    uid_t uid;
    size_t index;
};

static int by_uid(const void *a, const void *b)
{
    const struct user_at *x = a, *y = b;
    return x->uid < y->uid ? -1 : x->uid > y->uid;
}

void classify_exempt_usage(struct snapshot *snap)
{
    size_t exempt = 0;
    for (size_t i = 0; i < snap->user_count; i++)
        snap->users[i].exempt_cpu = 0, snap->users[i].exempt_memory = 0;
    for (size_t i = 0; i < snap->proc_count; i++)
        exempt += snap->procs[i].class == CLASS_EXEMPT;
    if (!exempt)
        return;
    /* Users by uid, so that each process finds its own in log time. */
    struct user_at *at = xmalloc((snap->user_count + 1) * sizeof(*at));
    for (size_t i = 0; i < snap->user_count; i++)
        at[i] = (struct user_at){snap->users[i].uid, i};
    qsort(at, snap->user_count, sizeof(*at), by_uid);
    for (size_t i = 0; i < snap->proc_count; i++) {
        const struct proc_sample *ps = &snap->procs[i];
        if (ps->class != CLASS_EXEMPT)
            continue;
        struct user_at key = {ps->uid, 0};
        const struct user_at *found = bsearch(&key, at, snap->user_count, sizeof(*at), by_uid);
        struct user_sample *u = found ? &snap->users[found->index] : NULL;
        if (!u || !u->detailed)
            continue;
        u->exempt_cpu += ps->cpu;
        u->exempt_memory += ps->rss;
    }
    free(at);
}
