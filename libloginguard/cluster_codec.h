/* The JSON forms of a cluster's standings and changes, as the daemon and
 * its link program exchange them (cluster_link_packets.h says the
 * packets).  Whatever is read is checked: a field of the wrong type or out
 * of range refuses the whole object, with why. */
#ifndef LOGINGUARD_CLUSTER_CODEC_H
#define LOGINGUARD_CLUSTER_CODEC_H

#include <jansson.h>
#include <stddef.h>

#include "cluster_merge.h"

#define CLUSTER_BY_MAX 256 /* bytes of an admin's name, with its NUL */

json_t *penalty_to_json(const struct penalty *p);
int penalty_from_json(const json_t *o, struct penalty *p, char *why, size_t why_len);

/* {"t":"standing","uid":..,"rev":..,"node":..,"seq":..,"penalty":{..},"exempt_until":..} */
json_t *standing_to_json(const struct shared_standing *s);
int standing_from_json(const json_t *o, struct shared_standing *s, char *why, size_t why_len);

/* {"t":"record","seq":..,"kind":..,"uid":..,"base_rev":..,"after_seq":..,
 *  "at":usec,"by":..|null,"penalty":{..},"exempt_until":..}; c->node is
 * not in it (the link knows its node).  by: NULL or "" for none. */
json_t *change_to_json(const struct standing_change *c, uint64_t at, const char *by);
int change_from_json(const json_t *o, struct standing_change *c, uint64_t *at, char *by,
                     size_t by_len, char *why, size_t why_len);

/* "cpu", "memory", "memory_pressure" back to the reason; NONE for
 * anything else. */
enum violation_reason violation_reason_parse(const char *name);

#endif
