/* Judging what a process runs: all the sampler asks of the rules.  The
 * sampler says what a process runs (program_facts) and under which name
 * (comm); a judge gives the shared entry for the program and the verdict
 * on it.  The daemon's judge is a rule set's (struct rules_judge,
 * rules_judge.h); a test hands the sampler one of its own, so the sampler
 * links no rules code and applies no policy. */
#ifndef LOGINGUARD_JUDGE_H
#define LOGINGUARD_JUDGE_H

#include "programs.h"
#include "snapshot.h"

/* The verdict on one process: its class, the rule that gave it (NULL:
 * none), and which of that rule's parts matched (RULE_PART_*: every part
 * the rule has, since a rule matches only when all of them do; exe by the
 * file's identity where the path could not be believed). */
struct verdict {
    enum proc_class class;
    const struct rule *rule;
    unsigned parts;
};

struct judge {
    /* The entry for what f describes: a reference, given back with put. */
    const struct program *(*program)(struct judge *j, const struct program_facts *f);
    void (*put)(struct judge *j, const struct program *prog);
    /* The verdict on prog run under the name comm; foreign_code: it
     * does not run only its own code (code_check.h). */
    struct verdict (*verdict)(const struct judge *j, const struct program *prog,
                              const char *comm, bool foreign_code);
    /* Every entry was given back: judge anew from now on (new rules). */
    void (*forget_all)(struct judge *j);
};

#endif
