#include "config.h"

#include "classify.h"
#include "core/observe.h"

struct sampler_scope observe_scope(const struct policy *p, struct judge *judge)
{
    return (struct sampler_scope){
        .min_uid = p->min_uid,
        .sample_interval = p->sample_interval,
        .scan_interval = p->scan_interval,
        .judge = judge,
    };
}

void observe(struct sampler *s, const struct policy *p, struct snapshot *snap)
{
    sampler_sample(s, snap);
    classify_choose_detailed(p, snap);
    sampler_look_closer(s, snap);
    classify_exempt_usage(snap);
}
