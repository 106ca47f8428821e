/* Whether a process is part of a Slurm job: its /proc/PID/cgroup text
 * (whose paths a user partly names) and slurmstepd's title. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "slurm_job.h"

/* text holds needle (a string) somewhere in its len bytes. */
static int holds(const char *text, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(text + i, needle, n) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char name[32];
    int64_t job = slurm_job_of_cgroup(text, size);
    FUZZ_CHECK(job == -1 || (job > 0 && job < SLURM_JOB_UNKNOWN));
    if (job > 0) {
        /* Only where Slurm makes its cgroups, and the job it names. */
        FUZZ_CHECK(holds(text, size, ":/slurm/uid_") ||
                   (holds(text, size, "0::/system.slice/") &&
                    holds(text, size, "slurmstepd.scope/job_")));
        snprintf(name, sizeof(name), "/job_%lld", (long long)job);
        FUZZ_CHECK(holds(text, size, name));
    }
    int64_t t = slurm_job_of_title(text, size);
    FUZZ_CHECK(t == -1 || (t > 0 && t < SLURM_JOB_UNKNOWN));
    FUZZ_CHECK(t == -1 || (size > 13 && memcmp(text, "slurmstepd: [", 13) == 0));
    return 0;
}
