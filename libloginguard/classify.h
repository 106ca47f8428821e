/* Classification: what the rules and the policy make of what the sampler
 * measured.  Pure (no I/O, no clock), beside the engine: the daemon calls
 * it between the sampler and the engine, so a replay of snapshots under
 * other rules or thresholds gives what the daemon would have decided.
 *
 * The cost of judging a program is paid once per program (programs.h):
 * the rules' exe and argv parts are matched when the sampler first sees a
 * program and kept with it; what is left per process is the comm part. */
#ifndef LOGINGUARD_CLASSIFY_H
#define LOGINGUARD_CLASSIFY_H

#include <stdbool.h>

#include "policy.h"
#include "programs.h"
#include "rules.h"
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

/* The most severe rule matching prog run under the name comm.  rules must
 * be the set prog was judged against. */
struct verdict classify_process(const struct rule_set *rules, const struct program *prog,
                                const char *comm);

/* Whether a user's processes are worth reading one by one: their usage is
 * above half a violation threshold. */
bool classify_worth_a_look(const struct policy *p, const struct user_sample *u);

/* Mark the users of snap worth a look (user_sample.detailed): what the
 * sampler is handed to read their processes. */
void classify_choose_detailed(const struct policy *p, struct snapshot *snap);

/* What the exempt-class programs of each detailed user used, from snap's
 * processes (all of such a user's are there), into their exempt_cpu and
 * exempt_memory; the engine forgives it up to [classes] exempt_cpu and
 * exempt_memory.  Users not looked at are below half every threshold, so
 * what they would be forgiven could not change a decision. */
void classify_exempt_usage(struct snapshot *snap);

#endif
