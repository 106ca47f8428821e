/* Enforce mode: carrying out the engine's decisions (see actions.c). */
#ifndef LOGINGUARD_ACTIONS_H
#define LOGINGUARD_ACTIONS_H

#include "daemon.h"

/* Stop what a decision says to stop (forbidden, compute, a stop level). */
void act_on_decision(struct daemon *d, const struct decision *x);
/* Every user gets the limits they should have now; changes are events. */
void sync_limits(struct daemon *d);
/* cgroupfs: move newly seen user processes into their user's cgroup. */
void adopt_new_processes(struct daemon *d);
/* cgroupfs: remove the cgroups of users with no process left; only those
 * whose task counter reads 0 now (or who have none) are looked at. */
void remove_empty_cgroups(struct daemon *d);
/* SIGKILL what outlived its grace; returns the next deadline or 0. */
uint64_t reap_stops(struct daemon *d);

#endif
