/* Notices: each decision that concerns a user is explained to them on
 * the channels [notify] names (tty, desktop, email, login), at most once
 * per kind per rate_limit.  Every notice sent, skipped, failed or held
 * back is a "notice" event with its channel and outcome. */
#ifndef LOGINGUARD_NOTIFY_H
#define LOGINGUARD_NOTIFY_H

#include "daemon.h"

void notify_decision(struct daemon *d, const struct decision *x);

#endif
