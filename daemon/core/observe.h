/* One observation of the node, as the engine gets it: the sampler
 * measures, classification (classify.h, pure) decides who is worth a
 * closer look, the sampler reads those users' processes, and
 * classification works out what their exempt programs used.  Data flows
 * one way: the sampler applies no policy of its own to what it reports. */
#ifndef LOGINGUARD_OBSERVE_H
#define LOGINGUARD_OBSERVE_H

#include "policy.h"
#include "observe/sampler.h"
#include "snapshot.h"

/* What the sampler is to look at under policy p: whose processes, how
 * often; judge says what they run. */
struct sampler_scope observe_scope(const struct policy *p, struct judge *judge);

/* One sample into snap (cleared first). */
void observe(struct sampler *s, const struct policy *p, struct snapshot *snap);

#endif
