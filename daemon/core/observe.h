/* One observation of the node, as the engine gets it: the sampler
 * measures, classification (classify.h, pure) decides who is worth a
 * closer look, the sampler reads those users' processes, and
 * classification works out what their exempt programs used.  Data flows
 * one way: the sampler applies no policy of its own to what it reports. */
#ifndef LOGINGUARD_OBSERVE_H
#define LOGINGUARD_OBSERVE_H

#include "observe/sampler.h"
#include "policy.h"
#include "snapshot.h"

/* What the sampler is to look at under policy p: whose processes, how
 * often; judge says what they run. */
struct sampler_scope observe_scope(const struct policy *p, struct judge *judge);

/* What a sample hands forward through the tick.  The engine gets snap;
 * what comes after the engine gets the rest, so that nothing after it
 * asks the sampler again.  Valid until the next sample. */
struct observation {
    struct snapshot *snap;
    const struct known_procs *known;     /* every process, for user tables */
    const struct new_proc *fresh;        /* user processes first seen */
    size_t fresh_count;
    const struct blocked_argv *blocked;  /* command lines that stalled their reader */
    size_t blocked_count;
};

/* What the tick did that the sampler must know before it samples again:
 * handed to it at the start of the next tick (observe_hear). */
struct observe_feedback {
    pid_t *adopted;                  /* moved into their owner's cgroup */
    size_t adopted_count, adopted_capacity;
    struct blocked_argv *stalled;    /* their command line stalled the describer */
    size_t stalled_count, stalled_capacity;
    bool counters_changed;           /* a per-user cgroup was made */
};

void observe_feedback_adopted(struct observe_feedback *fb, pid_t pid);
void observe_feedback_stalled(struct observe_feedback *fb, const struct blocked_argv *b);
void observe_feedback_free(struct observe_feedback *fb);

/* The last tick's feedback to the sampler (fb emptied). */
void observe_hear(struct sampler *s, struct observe_feedback *fb);

/* One sample into snap (cleared first), and what it hands forward (out
 * NULL: nothing; a benchmark's). */
void observe(struct sampler *s, const struct policy *p, struct snapshot *snap,
             struct observation *out);

#endif
