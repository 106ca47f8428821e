/* The JSON of the link protocol (cluster_link.h) on the daemon's side:
 * a penalty as the "penalty" object, and a "standing" message read into
 * a struct shared_standing. */
#ifndef LOGINGUARD_CLUSTER_CODEC_H
#define LOGINGUARD_CLUSTER_CODEC_H

#include <jansson.h>
#include <stddef.h>

#include "cluster_merge.h"

/* {"level":..,"since":..,"until":..,"quiet_since":..,"last_violation":..,
 *  "violations":..,"last_reason":"cpu"|"memory"|"memory_pressure"|null,
 *  "last_cpu":..,"last_memory":..,"last_window":..} */
json_t *cluster_penalty_json(const struct penalty *p);
/* 0, or -1 with why (a missing or mistyped field, a level outside
 * 0..64, a negative time). */
int cluster_penalty_parse(const json_t *o, struct penalty *p, char *why, size_t why_len);

/* {"t":"standing","uid":U,"rev":R,"node":"..","seq":S,"penalty":{..},
 *  "exempt_until":usec} into row; 0, or -1 with why. */
int cluster_standing_parse(const json_t *msg, struct shared_standing *row, char *why,
                           size_t why_len);

#endif
