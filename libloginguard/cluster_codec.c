#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cluster_codec.h"

enum violation_reason violation_reason_parse(const char *name)
{
    for (int r = VIOLATION_REASON_NONE + 1; name && r < VIOLATION_REASON_COUNT; r++)
        if (strcmp(name, violation_reason_name(r)) == 0)
            return (enum violation_reason)r;
    return VIOLATION_REASON_NONE;
}

json_t *penalty_to_json(const struct penalty *p)
{
    return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:s, s:f, s:I, s:I}", "level", p->level,
                     "since", (json_int_t)p->since, "until", (json_int_t)p->until, "quiet_since",
                     (json_int_t)p->quiet_since, "last_violation", (json_int_t)p->last_violation,
                     "violations", (json_int_t)p->violations, "last_reason",
                     violation_reason_name(p->last_reason), "last_cpu",
                     isfinite(p->last_cpu) ? p->last_cpu : 0.0, "last_memory",
                     (json_int_t)p->last_memory, "last_window", (json_int_t)p->last_window);
}

/* A non-negative integer member no greater than max. */
static int get_uint(const json_t *o, const char *key, uint64_t max, uint64_t *out, char *why,
                    size_t why_len)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) > max) {
        snprintf(why, why_len, "\"%s\" must be an integer from 0 to %llu", key,
                 (unsigned long long)max);
        return -1;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

#define U64_FIELD(o, key, dst)                                                             \
    do {                                                                                   \
        uint64_t v_;                                                                       \
        if (get_uint(o, key, INT64_MAX, &v_, why, why_len) < 0)                            \
            return -1;                                                                     \
        (dst) = v_;                                                                        \
    } while (0)

int penalty_from_json(const json_t *o, struct penalty *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof(*p));
    if (!json_is_object(o)) {
        snprintf(why, why_len, "\"penalty\" must be an object");
        return -1;
    }
    uint64_t level, violations;
    if (get_uint(o, "level", 1000, &level, why, why_len) < 0 ||
        get_uint(o, "violations", UINT32_MAX, &violations, why, why_len) < 0)
        return -1;
    p->level = (int)level;
    p->violations = (uint32_t)violations;
    U64_FIELD(o, "since", p->since);
    U64_FIELD(o, "until", p->until);
    U64_FIELD(o, "quiet_since", p->quiet_since);
    U64_FIELD(o, "last_violation", p->last_violation);
    U64_FIELD(o, "last_memory", p->last_memory);
    U64_FIELD(o, "last_window", p->last_window);
    const json_t *reason = json_object_get(o, "last_reason");
    if (reason && !json_is_string(reason)) {
        snprintf(why, why_len, "\"last_reason\" must be a string");
        return -1;
    }
    p->last_reason = violation_reason_parse(json_string_value(reason));
    const json_t *cpu = json_object_get(o, "last_cpu");
    if (!json_is_number(cpu) || !(json_number_value(cpu) >= 0 && json_number_value(cpu) <= 1e6)) {
        snprintf(why, why_len, "\"last_cpu\" must be a number from 0 to 1e6");
        return -1;
    }
    p->last_cpu = json_number_value(cpu);
    return 0;
}

json_t *standing_to_json(const struct shared_standing *s)
{
    return json_pack("{s:s, s:I, s:I, s:s, s:I, s:o, s:I}", "t", "standing", "uid",
                     (json_int_t)s->uid, "rev", (json_int_t)s->rev, "node", s->node, "seq",
                     (json_int_t)s->seq, "penalty", penalty_to_json(&s->penalty), "exempt_until",
                     (json_int_t)s->exempt_until);
}

static int get_uid(const json_t *o, uid_t *uid, char *why, size_t why_len)
{
    uint64_t v;
    if (get_uint(o, "uid", UINT32_MAX - 1, &v, why, why_len) < 0)
        return -1;
    *uid = (uid_t)v;
    return 0;
}

int standing_from_json(const json_t *o, struct shared_standing *s, char *why, size_t why_len)
{
    memset(s, 0, sizeof(*s));
    const char *node = json_string_value(json_object_get(o, "node"));
    if (!node || strlen(node) >= sizeof(s->node)) {
        snprintf(why, why_len, "\"node\" must be a string of at most %d bytes",
                 CLUSTER_NODE_MAX - 1);
        return -1;
    }
    snprintf(s->node, sizeof(s->node), "%s", node);
    if (get_uid(o, &s->uid, why, why_len) < 0)
        return -1;
    U64_FIELD(o, "rev", s->rev);
    U64_FIELD(o, "seq", s->seq);
    U64_FIELD(o, "exempt_until", s->exempt_until);
    return penalty_from_json(json_object_get(o, "penalty"), &s->penalty, why, why_len);
}

json_t *change_to_json(const struct standing_change *c, uint64_t at, const char *by)
{
    return json_pack("{s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:I}", "t", "record", "seq",
                     (json_int_t)c->seq, "kind", standing_change_name(c->kind), "uid",
                     (json_int_t)c->uid, "base_rev", (json_int_t)c->base_rev, "after_seq",
                     (json_int_t)c->after_seq, "at", (json_int_t)at, "by",
                     by && *by ? json_string(by) : json_null(), "penalty",
                     penalty_to_json(&c->penalty), "exempt_until", (json_int_t)c->exempt_until);
}

int change_from_json(const json_t *o, struct standing_change *c, uint64_t *at, char *by,
                     size_t by_len, char *why, size_t why_len)
{
    memset(c, 0, sizeof(*c));
    by[0] = '\0';
    int kind = standing_change_kind_parse(json_string_value(json_object_get(o, "kind")));
    if (kind < 0) {
        snprintf(why, why_len, "\"kind\" must be raise, lower, forgive or exempt");
        return -1;
    }
    c->kind = (enum standing_change_kind)kind;
    if (get_uid(o, &c->uid, why, why_len) < 0)
        return -1;
    U64_FIELD(o, "seq", c->seq);
    U64_FIELD(o, "base_rev", c->base_rev);
    U64_FIELD(o, "after_seq", c->after_seq);
    U64_FIELD(o, "at", *at);
    U64_FIELD(o, "exempt_until", c->exempt_until);
    if (c->seq == 0) {
        snprintf(why, why_len, "\"seq\" starts from 1");
        return -1;
    }
    const json_t *b = json_object_get(o, "by");
    if (json_is_string(b) && strlen(json_string_value(b)) < by_len)
        snprintf(by, by_len, "%s", json_string_value(b));
    else if (b && !json_is_null(b)) {
        snprintf(why, why_len, "\"by\" must be null or a name of at most %zu bytes", by_len - 1);
        return -1;
    }
    if (c->kind == CHANGE_EXEMPT && !json_object_get(o, "penalty"))
        return 0; /* an exemption carries no penalty */
    return penalty_from_json(json_object_get(o, "penalty"), &c->penalty, why, why_len);
}
