/* Notices: each decision that concerns a user is explained to them on
 * the channels [notify] names (tty, desktop, email, login), at most once
 * per kind per rate_limit.  Every notice sent, skipped, failed or held
 * back is a "notice" event with its channel and outcome. */
#ifndef LOGINGUARD_NOTIFY_H
#define LOGINGUARD_NOTIFY_H

#include <poll.h>

#include "daemon.h"
#include "proc_table.h"

/* The notice for decision x, if one is due.  procs are the decided
 * user's processes (the tty channel writes to their terminals). */
void notify_decision(struct daemon *d, const struct decision *x, const struct proc_table *procs);

/* The desktop and mail children under way (notice_jobs.h), for the main
 * loop: what to poll (at most 2 entries a job), the earliest deadline
 * (0: none), and, when something happened or a deadline passed, finish
 * those that have ended (each one's notice event, and the rate limit when
 * it got through). */
size_t notify_pollfds(struct daemon *d, struct pollfd *out);
uint64_t notify_deadline(struct daemon *d);
void notify_check(struct daemon *d);
/* At exit: kill the children still under way and say so. */
void notify_stop(struct daemon *d);

#endif
