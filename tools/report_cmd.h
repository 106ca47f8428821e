/* loginguardctl report: the event log over a range (7 days unless
 * --since says), counted and shown as text, JSON, CSV or one HTML file
 * with charts (report.h says what is counted). */
#ifndef LOGINGUARDCTL_REPORT_CMD_H
#define LOGINGUARDCTL_REPORT_CMD_H

#include <stdbool.h>

struct report_args {
    const char *config;      /* NULL: the default configuration */
    const char *since;       /* NULL: 7 days back */
    const char *until;       /* NULL: now */
    const char *format;      /* NULL: text */
    const char *table;       /* CSV: which table; NULL: users */
    bool cluster;            /* every node's events, from the cluster's database */
};

/* argc, argv: what follows "report" (nothing is expected); returns the
 * exit status (loginguardctl(1)). */
int report_command(int argc, char **argv, const struct report_args *a);

#endif
