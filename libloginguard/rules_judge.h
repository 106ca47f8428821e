/* Judging what processes run by a rule set: the verdict on one process,
 * and the daemon's judge (judge.h), which keeps each program it judged. */
#ifndef LOGINGUARD_RULES_JUDGE_H
#define LOGINGUARD_RULES_JUDGE_H

#include "judge.h"
#include "programs.h"
#include "rules.h"

/* The most severe rule matching prog run under the name comm.  rules must
 * be the set prog was judged against. */
struct verdict classify_process(const struct rule_set *rules, const struct program *prog,
                                const char *comm);

/* The judge of one rule set (judge.h): each program is matched against
 * the rules once, when first seen, and kept in a table of its own. */
struct rules_judge {
    struct judge judge;
    const struct rule_set *rules;
    struct program_table programs;
};
/* rules: what the judge reads (the daemon's policy.rules, whose contents
 * a reload replaces before the sampler is given its new scope). */
void rules_judge_init(struct rules_judge *j, const struct rule_set *rules);
void rules_judge_free(struct rules_judge *j);

#endif
