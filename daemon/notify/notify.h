/* Notices: each decision that concerns a user is explained to them on
 * the channels [notify] names (tty, desktop, email, login), at most once
 * per kind per rate_limit.  Every notice sent, skipped, failed or held
 * back is a "notice" event with its channel and outcome. */
#ifndef LOGINGUARD_NOTIFY_H
#define LOGINGUARD_NOTIFY_H

#include <poll.h>

#include "base/environment.h"
#include "enforce/proc_table.h"
#include "history.h"
#include "metrics.h"
#include "notify/notice_jobs.h"
#include "observe/directory.h"
#include "observe/slurm_query.h"
#include "policy.h"
#include "record/events.h"
#include "record/notice_rate.h"
#include "record/persist.h"
#include "snapshot.h"

/* What the notices are given of the daemon: its environment (the
 * terminals, /run/user), the policy (channels, templates, rate limit),
 * the event log, the children under way, the rate limit, the user
 * names, whether it enforces, and the files where login notices and the
 * rate limit are kept. */
struct notifier {
    const struct environment *env;
    const struct policy *policy;
    struct event_log *events;
    struct notice_jobs *jobs;
    struct notice_rate *rate;
    struct directory *directory;
    struct metrics *metrics;
    bool enforcing;
    struct persist_io io;
    const struct history *history;  /* the users' last hour, for mails' charts */
    const struct slurm_query *slurm; /* the partitions, and sbatch to check lines with */
};

/* The notice for decision x, if one is due.  procs are the decided
 * user's processes (the tty channel writes to their terminals). */
void notify_decision(const struct notifier *nt, const struct decision *x,
                     const struct snapshot *snap, const struct proc_table *procs);

/* The children under way (notice_jobs.h), for the main loop: what to
 * poll (at most CHILD_POLLFDS entries a child), the earliest deadline
 * (0: none), and, when something happened or a deadline passed, finish
 * those that have ended (each one's notice event, and the rate limit when
 * it got through). */
size_t notify_pollfds(const struct notice_jobs *jobs, struct pollfd *out);
uint64_t notify_deadline(const struct notice_jobs *jobs);
void notify_check(const struct notifier *nt);
/* At exit: kill the children still under way and say so. */
void notify_stop(const struct notifier *nt);

#endif
