#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "core/observe.h"
#include "util.h"

struct sampler_scope observe_scope(const struct policy *p, struct judge *judge)
{
    return (struct sampler_scope){
        .min_uid = p->min_uid,
        .sample_interval = p->sample_interval,
        .scan_interval = p->scan_interval,
        /* What the engine judges one by one: a compute program's grace,
         * a forbidden one stopped on sight. */
        .followed_classes = 1u << CLASS_COMPUTE | 1u << CLASS_FORBIDDEN,
        .judge = judge,
    };
}

void observe_feedback_adopted(struct observe_feedback *fb, pid_t pid)
{
    fb->adopted = grow_array(fb->adopted, fb->adopted_count, &fb->adopted_capacity,
                             sizeof(*fb->adopted));
    fb->adopted[fb->adopted_count++] = pid;
}

void observe_feedback_stalled(struct observe_feedback *fb, const struct blocked_argv *b)
{
    fb->stalled = grow_array(fb->stalled, fb->stalled_count, &fb->stalled_capacity,
                             sizeof(*fb->stalled));
    fb->stalled[fb->stalled_count++] = *b;
}

void observe_feedback_free(struct observe_feedback *fb)
{
    free(fb->adopted);
    free(fb->stalled);
    memset(fb, 0, sizeof(*fb));
}

void observe_hear(struct sampler *s, struct observe_feedback *fb)
{
    for (size_t i = 0; i < fb->adopted_count; i++)
        sampler_adopted(s, fb->adopted[i]);
    for (size_t i = 0; i < fb->stalled_count; i++)
        sampler_argv_stalled(s, fb->stalled[i].pid, fb->stalled[i].start_time);
    if (fb->counters_changed)
        sampler_counters_changed(s);
    fb->adopted_count = fb->stalled_count = 0;
    fb->counters_changed = false;
}

void observe(struct sampler *s, const struct policy *p, struct snapshot *snap,
             struct observation *out)
{
    sampler_sample(s, snap);
    classify_choose_detailed(p, snap);
    sampler_look_closer(s, snap);
    classify_exempt_usage(snap);
    struct observation none;
    if (!out)
        out = &none;
    *out = (struct observation){.snap = snap, .known = &s->known};
    out->fresh_count = sampler_take_new(s, &out->fresh);
    out->blocked_count = sampler_take_blocked(s, &out->blocked);
}
