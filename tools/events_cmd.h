/* loginguardctl events: the daemon's event log, read from the file
 * itself (event_log of the configuration), so it works with the daemon
 * stopped. */
#ifndef LOGINGUARDCTL_EVENTS_CMD_H
#define LOGINGUARDCTL_EVENTS_CMD_H

#include <stdbool.h>
#include <stddef.h>

struct events_args {
    const char *config;      /* NULL: the default configuration */
    const char *user;
    const char *since;
    const char **kinds;      /* each --kind as given */
    size_t kind_count;
    bool follow, json;
    bool cluster;            /* every node's, from the cluster's database */
};

/* argc, argv: what follows "events" (nothing is expected); returns the
 * exit status (loginguardctl(1)). */
int events_command(int argc, char **argv, const struct events_args *a);

/* Says why path cannot be read and what it takes (stderr); returns the
 * exit status for it (4). */
int events_cannot_read(const char *path, int error);

#endif
