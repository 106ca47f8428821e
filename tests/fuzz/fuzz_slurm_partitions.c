/* What scontrol says of the partitions: the daemon runs it as root and
 * reads what it prints (a broken or hostile Slurm, a wrapper script). */
#include "config.h"

#include <string.h>

#include "fuzz.h"
#include "slurm_partitions.h"

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
        FUZZ_CHECK(p->allow_groups.count <= SLURM_NAMES_MAX);
        FUZZ_CHECK(p->max_time <= 366 * 86400 && p->default_time <= 366 * 86400);
        FUZZ_CHECK(slurm_partition_find(&ps, p->name) != NULL);
        char t[32];
        slurm_time_format(p->max_time, t, sizeof(t));
        uint64_t back;
        FUZZ_CHECK(slurm_time_parse(t, &back) == 0 && back == p->max_time);
    }
    slurm_partitions_free(&ps);
    return 0;
}
