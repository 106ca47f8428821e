/* The cluster's partitions, asked of its Slurm: `scontrol show partition
 * --oneliner` run by a child with a deadline, at start, at a reload and
 * every [notify] slurm_refresh.  slurmctld down or slow never delays a
 * sample: the child is watched by the main loop like a notice's, killed
 * at its deadline, and the last good answer is kept (with when it came)
 * until a new one parses.
 *
 * With [notify] slurm = auto (the default) the daemon uses Slurm when
 * scontrol is on its PATH; yes says an absent scontrol is an error to
 * show in status; no never asks.  A binary that root does not own, or
 * that others may write, is never run (it would run as root). */
#ifndef LOGINGUARD_SLURM_QUERY_H
#define LOGINGUARD_SLURM_QUERY_H

#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/child.h"
#include "base/environment.h"
#include "policy.h"
#include "slurm_partitions.h"
#include "units.h"

#define SLURM_QUERY_TIMEOUT_USEC (10 * USEC_PER_SEC)
/* A refresh more often than this is taken as this. */
#define SLURM_REFRESH_MIN_USEC (10 * USEC_PER_SEC)

struct slurm_query {
    bool enabled;                     /* scontrol found (or slurm = yes) */
    char scontrol[PATH_MAX], sbatch[PATH_MAX]; /* "" when not found */
    char why_off[256];                /* why not enabled, or what is missing */
    struct slurm_partitions partitions; /* the last good answer */
    uint64_t answered_at;             /* realtime usec of it; 0: none yet */
    char error[512];                  /* the last query's failure; "" after a good one */
    uint64_t error_at;                /* realtime usec */
    struct child child;
    bool running;
    uint64_t started_at, next_at;     /* boottime usec */
    uint64_t last_usec;               /* how long the last good answer took */
    uint64_t queries, failures;
};

/* At start and at each reload: find the binaries the policy asks for,
 * and ask at once.  A query under way goes on. */
void slurm_query_configure(struct slurm_query *q, const struct policy *p,
                           const struct environment *env);
/* Start a query when one is due.  now: boottime usec. */
void slurm_query_tick(struct slurm_query *q, const struct policy *p, uint64_t now);
size_t slurm_query_pollfds(const struct slurm_query *q, struct pollfd *out);
/* When to call slurm_query_tick or _check at the latest (0: no need). */
uint64_t slurm_query_deadline(const struct slurm_query *q);
/* Take a finished query's answer.  True when the partitions changed. */
bool slurm_query_check(struct slurm_query *q, const struct environment *env);
/* The partitions to use: NULL when Slurm is off (or q NULL) or has never
 * answered. */
const struct slurm_partitions *slurm_query_partitions(const struct slurm_query *q);
/* status' "slurm" part. */
json_t *slurm_query_status(const struct slurm_query *q, const struct environment *env);
void slurm_query_stop(struct slurm_query *q);

#endif
