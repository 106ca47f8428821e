/* Which partitions a notice's sbatch and srun lines name, and the limits
 * the lines must keep within.  The admin's [notify] batch_partition and
 * interactive_partition win when set; else the cluster's Slurm says
 * (slurm_partitions.h): for batch work, the partitions that are up,
 * shown and not root's only, Slurm's default first; for interactive
 * work, those whose name or QoS says "interactive", else the batch ones.
 * Which of them the user may use is for Slurm itself to say (sbatch
 * --test-only as the user): the candidates are tried in this order. */
#ifndef LOGINGUARD_SLURM_ADVICE_H
#define LOGINGUARD_SLURM_ADVICE_H

#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "slurm_partitions.h"

#define SLURM_CANDIDATES_MAX 4

struct slurm_target {
    const char *partition;           /* "" leaves -p out (Slurm's default) */
    uint64_t max_time;               /* seconds; 0: no limit known */
    unsigned max_cpus;               /* per node; 0: no limit known */
    uint64_t max_memory;             /* bytes per node; 0: no limit known */
    const struct slurm_names *groups; /* AllowGroups; NULL: anyone */
};

struct slurm_advice {
    struct slurm_target batch[SLURM_CANDIDATES_MAX], interactive[SLURM_CANDIDATES_MAX];
    size_t batch_count, interactive_count; /* at least 1 each */
};

/* ps NULL: no word from Slurm.  out points into p and ps. */
void slurm_advice_make(const struct policy *p, const struct slurm_partitions *ps,
                       struct slurm_advice *out);

#endif
