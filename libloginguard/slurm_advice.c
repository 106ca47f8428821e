#include "config.h"

#include <string.h>

#include "slurm_advice.h"

static struct slurm_target target_of(const char *name, const struct slurm_partition *sp)
{
    struct slurm_target t = {.partition = name};
    if (sp) {
        t.max_time = sp->max_time;
        t.max_cpus = sp->max_cpus_per_node;
        t.max_memory = sp->max_mem_per_node;
        t.groups = sp->allow_groups.all ? NULL : &sp->allow_groups;
    }
    return t;
}

static bool usable(const struct slurm_partition *sp)
{
    return sp->up && !sp->hidden && !sp->root_only;
}

static bool interactive(const struct slurm_partition *sp)
{
    return strcasestr(sp->name, "interactive") || (sp->qos && strcasestr(sp->qos, "interactive"));
}

/* The usable partitions for which want(sp) is wanted, Slurm's default
 * first; how many. */
static size_t candidates(const struct slurm_partitions *ps, bool want_interactive,
                         struct slurm_target *out)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < ps->count && n < SLURM_CANDIDATES_MAX; i++) {
            const struct slurm_partition *sp = &ps->items[i];
            if (usable(sp) && interactive(sp) == want_interactive &&
                sp->is_default == (pass == 0))
                out[n++] = target_of(sp->name, sp);
        }
    return n;
}

/* The admin's partition, with Slurm's limits for it when Slurm knows it. */
static size_t named(const char *name, const struct slurm_partitions *ps, struct slurm_target *out)
{
    out[0] = target_of(name, ps ? slurm_partition_find(ps, name) : NULL);
    return 1;
}

void slurm_advice_make(const struct policy *p, const struct slurm_partitions *ps,
                       struct slurm_advice *out)
{
    memset(out, 0, sizeof(*out));
    const char *batch = p->batch_partition ? p->batch_partition : "";
    const char *inter = p->interactive_partition ? p->interactive_partition : "";
    if (*batch || !ps)
        out->batch_count = named(batch, ps, out->batch);
    else if ((out->batch_count = candidates(ps, false, out->batch)) == 0)
        out->batch_count = named("", ps, out->batch);
    if (*inter || !ps) {
        out->interactive_count = named(inter, ps, out->interactive);
    } else if ((out->interactive_count = candidates(ps, true, out->interactive)) == 0) {
        memcpy(out->interactive, out->batch, sizeof(out->batch));
        out->interactive_count = out->batch_count;
    }
}
