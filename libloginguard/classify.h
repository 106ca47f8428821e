/* Classification: what the policy makes of what the sampler measured:
 * whose processes are worth a closer look, and what exempt programs used.
 * Pure (no I/O, no clock), beside the engine: the daemon calls it between
 * the sampler and the engine, so a replay of snapshots under other
 * thresholds gives what the daemon would have decided.  What a process
 * runs is judged by the rules through rules_judge.h, once per program. */
#ifndef LOGINGUARD_CLASSIFY_H
#define LOGINGUARD_CLASSIFY_H

#include <stdbool.h>

#include "policy.h"
#include "snapshot.h"

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
