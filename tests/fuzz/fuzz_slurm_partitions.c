/* What scontrol says of the partitions: the daemon runs it as root and
 * reads what it prints (a broken or hostile Slurm, a wrapper script). */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "slurm_partitions.h"

/* A time read is one Slurm's form writes back, and reads again as itself. */
static bool round_trips(uint64_t seconds)
{
    char text[32];
    uint64_t back;
    slurm_time_format(seconds, text, sizeof(text));
    return slurm_time_parse(text, &back) == 0 && back == seconds;
}

/* A list is ALL (no names) or up to SLURM_NAMES_MAX names, none empty. */
static bool names_ok(const struct slurm_names *n)
{
    if (n->all && n->count)
        return false;
    for (size_t i = 0; i < n->count; i++)
        if (!n->names[i][0])
            return false;
    return n->count <= SLURM_NAMES_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct slurm_partitions ps;
    char err[200];
    if (slurm_partitions_parse((const char *)data, size, &ps, err, sizeof(err)) < 0) {
        FUZZ_CHECK(ps.count == 0 && ps.items == NULL && err[0]);
        return 0;
    }
    FUZZ_CHECK(ps.count <= SLURM_PARTITIONS_MAX);
    for (size_t i = 0; i < ps.count; i++) {
        const struct slurm_partition *p = &ps.items[i];
        FUZZ_CHECK(p->name && p->name[0]);
        FUZZ_CHECK(names_ok(&p->allow_groups) && names_ok(&p->allow_accounts) &&
                   names_ok(&p->deny_accounts));
        FUZZ_CHECK(p->max_time <= 365 * 86400 && p->default_time <= 365 * 86400);
        FUZZ_CHECK(slurm_partition_find(&ps, p->name) != NULL);
        FUZZ_CHECK(round_trips(p->max_time) && round_trips(p->default_time));
    }
    slurm_partitions_free(&ps);
    return 0;
}
