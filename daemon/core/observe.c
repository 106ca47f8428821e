#include "config.h"

#include "classify.h"
#include "core/observe.h"

void observe(struct sampler *s, const struct policy *p, struct snapshot *snap)
{
    sampler_sample(s, p, snap);
    classify_choose_detailed(p, snap);
    sampler_look_closer(s, p, snap);
    classify_exempt_usage(snap);
}
