/* TEMPORARY, until cluster_link.c and cluster_merge.c (written apart)
 * land: the few functions of their headers the daemon's side calls, so
 * that it builds and its tests run.  Remove this file (and its line in
 * Makefile.am) when they are merged: the real ones replace it.  With it,
 * the link never starts (ENOSYS: the daemon says so and keeps enforcing
 * on its own state). */
#include "config.h"

#include <errno.h>

#include "cluster_link.h"
#include "cluster_merge.h"

int cluster_link_start(const struct cluster_link_settings *s, pid_t *pid, int *fd)
{
    (void)s;
    *pid = 0;
    *fd = -1;
    errno = ENOSYS;
    return -1;
}

void penalty_from_user(struct penalty *p, const struct user_state *us)
{
    *p = (struct penalty){.level = us->level, .since = us->since, .until = us->until,
                          .quiet_since = us->quiet_since, .last_violation = us->last_violation,
                          .violations = us->violations, .last_reason = us->last_reason,
                          .last_cpu = us->last_cpu, .last_memory = us->last_memory,
                          .last_window = us->last_window};
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

const char *standing_change_name(enum standing_change_kind k)
{
    static const char *const names[] = {"raise", "lower", "forgive", "exempt"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "";
}
