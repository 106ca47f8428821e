/* What a decision tells the user: which notice, and the values of its
 * placeholders.  Pure (the caller gives the clock's readings), so the
 * unit tests check the words users read. */
#ifndef LOGINGUARD_NOTICE_BUILD_H
#define LOGINGUARD_NOTICE_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"
#include "notices.h"
#include "policy.h"
#include "slurm_advice.h"
#include "snapshot.h"
#include "suggest.h"

#define NOTICE_FIELD_MAX 20

/* Which notice a decision calls for; false for none (a decay). */
bool notice_kind_for(const struct policy *p, const struct decision *x, enum notice_kind *kind);

/* The decision a user's standing amounts to, for the standing and
 * login_refused notices: their level as its last violation entered it. */
struct decision notice_standing_decision(const struct user_state *us);

/* The process the notice is about, of x's top processes in snap, or NULL
 * if it names none: for a warning or a throttle, the busiest whose
 * command line is known, so that the sbatch line it suggests runs the job
 * (the busiest of all may be a child that had just started, seen before
 * its command line was read); for a stop, the one stopped. */
const struct proc_sample *notice_process_for(const struct decision *x, const struct snapshot *snap,
                                             enum notice_kind kind);

/* What the builder knows beyond the decision. */
struct notice_facts {
    const struct policy *policy;
    const struct decision *decision;
    enum notice_kind kind;
    const struct proc_sample *proc;  /* the program concerned, or NULL */
    const char *user, *host;
    uint64_t runtime_usec;           /* how long proc has run */
    const char *cwd;                 /* proc's working directory, or NULL */
    /* The partitions the lines name and keep within (slurm_advice.h);
     * NULL: the policy's batch_partition and interactive_partition. */
    const struct slurm_target *batch, *interactive;
};

struct notice_values {
    struct notice_field fields[NOTICE_FIELD_MAX];
    size_t count;
};

void notice_values_build(struct notice_values *v, const struct notice_facts *f);
/* The sbatch and srun lines' input, for target (NULL: the policy's
 * partitions); false when the notice offers no lines. */
bool notice_suggest_input(const struct notice_facts *f, const struct slurm_target *target,
                          struct suggest_input *in);
/* Replace the value of field name (taking value; safe: see struct
 * notice_field). */
void notice_values_set(struct notice_values *v, const char *name, char *value, bool safe);
void notice_values_free(struct notice_values *v);

#endif
