/* loginguardctl simulate: the usage trace replayed under a candidate
 * configuration and under the one in force (simulate.h), offline, and
 * what each would have done to each user, side by side. */
#ifndef LOGINGUARDCTL_SIMULATE_CMD_H
#define LOGINGUARDCTL_SIMULATE_CMD_H

#include <stdbool.h>

struct simulate_args {
    const char *candidate;   /* --config: required */
    const char *current;     /* --current: NULL, the default configuration */
    const char *trace;       /* --trace DIR: NULL, state_dir/trace of the current one */
    const char *since;       /* NULL: 7 days back */
    const char *until;       /* NULL: now */
    bool json;
};

/* argc, argv: what follows "simulate" (nothing is expected); returns the
 * exit status (loginguardctl(1)). */
int simulate_command(int argc, char **argv, const struct simulate_args *a);

#endif
