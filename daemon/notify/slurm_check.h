/* A notice's Slurm lines, checked by Slurm before the notice goes out.
 *
 * A child becomes the user (their groups, from NSS: a slow directory
 * holds up this child only), passes over the candidate partitions whose
 * AllowGroups leave the user out, and runs `sbatch --test-only` with
 * each remaining batch line in turn: the first one Slurm accepts is the
 * one the notice offers.  Slurm says what no config could: the user's
 * accounts, a partition renamed or gone, a request the nodes cannot
 * meet.  One that Slurm refuses is never offered as the thing to run:
 * the notice says what Slurm said instead.  The child has a deadline
 * (SLURM_CHECK_TIMEOUT_USEC; slurmctld slow); past it the line is
 * offered unchecked, and the notice event says so.  While Slurm does not
 * answer at all (the last query failed), the child only passes over the
 * partitions the user's groups may not use: sbatch would only wait.
 *
 * The child writes one line per candidate on its stdout:
 *   "ok I", "refused I TEXT", "group I", "allowed I", "interactive J"
 * (I, J: the candidate's index; TEXT: Slurm's words, one line). */
#ifndef LOGINGUARD_SLURM_CHECK_H
#define LOGINGUARD_SLURM_CHECK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/child.h"
#include "enforce/proc_table.h"
#include "notice_build.h"
#include "notices.h"
#include "slurm_advice.h"
#include "units.h"

#define SLURM_CHECK_TIMEOUT_USEC (10 * USEC_PER_SEC)
#define SLURM_CHECK_OUTPUT_MAX 8192

/* A line offered, and its argv for the check. */
struct slurm_line {
    char *text;       /* as the notice shows it */
    char *partition;  /* "" none */
    char **argv;      /* sbatch --test-only ...; NULL for srun lines */
    char **groups;    /* AllowGroups, NULL-ended; NULL: anyone */
};

struct slurm_check {
    struct child child;
    uint64_t started;                 /* boottime usec */
    uid_t uid;
    enum notice_kind kind;
    char *user;
    struct notice_values values;      /* the notice's, its lines set at the end */
    struct proc_table procs;          /* the user's, for the tty channel */
    struct slurm_line batch[SLURM_CANDIDATES_MAX], interactive[SLURM_CANDIDATES_MAX];
    size_t batch_count, interactive_count;
    char *groups_only;                /* why sbatch is not asked (malloc'd), or NULL */
};

/* What the check found: the lines to offer, and the notice event's
 * "slurm_check" object. */
struct slurm_verdict {
    const char *sbatch, *srun;  /* into the check; NULL: refused */
    char *said;                 /* Slurm's words for a refusal (malloc'd) */
    json_t *event;
};

/* Start the child; sbatch is the binary's path.  0, or -1 with errno. */
int slurm_check_start(struct slurm_check *c, const char *sbatch, uint64_t now);
/* The reaped child's answer (result, status as child_check gives them). */
void slurm_check_verdict(const struct slurm_check *c, enum child_result result, int status,
                         uint64_t now, struct slurm_verdict *v);
void slurm_check_free(struct slurm_check *c);

/* A line's fields from a notice's suggestion and a target. */
void slurm_line_make(struct slurm_line *l, const struct suggest_input *in,
                     const struct slurm_target *t, bool batch);

#endif
