/* Whether a process is part of a Slurm job, from what Slurm leaves where
 * only root can write: the job's cgroup in /proc/PID/cgroup, and the
 * process title of slurmstepd (the parent of a job's tasks).  Pure: the
 * sampler reads the texts (observe/sampler_jobs.c), this says what they
 * mean.  A user chooses many names (of their programs, of the cgroups in
 * the subtree systemd delegates to them): none of those may make their
 * processes look like a job's, or their usage would hide there. */
#ifndef LOGINGUARD_SLURM_JOB_H
#define LOGINGUARD_SLURM_JOB_H

#include <stddef.h>
#include <stdint.h>

/* Slurm's job ids are 32-bit and never 0; this one is none of them and
 * stands for a job whose id could not be read. */
#define SLURM_JOB_UNKNOWN UINT32_MAX

/* The comm of Slurm's step daemon, whose children are a job's tasks. */
#define SLURM_STEPD_COMM "slurmstepd"

/* The id of the job whose cgroup the process is in, from the text of its
 * /proc/PID/cgroup (len bytes), or -1:
 *  - cgroup v1: a hierarchy line whose path starts at the hierarchy's
 *    root with /slurm/uid_U/job_N (Slurm's cgroup/v1 plugin makes them
 *    there, below the mount of each controller);
 *  - cgroup v2: the one line 0::/system.slice/slurmstepd.scope/job_N, or
 *    .../NODE_slurmstepd.scope/job_N (Slurm's cgroup/v2 plugin, on a
 *    host with the v2 hierarchy alone).
 * Text that is not laid out as the kernel writes it is no job's. */
int64_t slurm_job_of_cgroup(const char *text, size_t len);

/* The job id in slurmstepd's title, its /proc/PID/cmdline
 * ("slurmstepd: [1234.0]", "[1234.extern]", "[1234.batch]"), or -1. */
int64_t slurm_job_of_title(const char *text, size_t len);

#endif
