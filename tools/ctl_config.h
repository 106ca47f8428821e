/* The configuration loginguardctl reads to find the daemon's paths (its
 * socket, its event log): the file --config names, or the daemon's
 * default, so that the tool works out of the box where the daemon does. */
#ifndef LOGINGUARD_CTL_CONFIG_H
#define LOGINGUARD_CTL_CONFIG_H

#include "policy.h"

#define CTL_DEFAULT_CONFIG SYSCONFDIR "/loginguard/loginguard.conf"

/* Load config (NULL: the default, which may be missing) into p.  On an
 * error, prints the config's errors and "cannot read WHAT from FILE"
 * (with hint after it, if any) on stderr and returns -1. */
int ctl_load_policy(const char *config, const char *what, const char *hint, struct policy *p);

#endif
