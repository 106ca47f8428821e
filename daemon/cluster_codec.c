#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cluster_codec.h"
#include "state.h"

/* Times and counts as state.json writes them: integers, never negative. */
static json_t *json_u64(uint64_t v)
{
    return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *cluster_penalty_json(const struct penalty *p)
{
    const char *reason = violation_reason_name(p->last_reason);
    json_t *o = json_object();
    json_object_set_new(o, "level", json_integer(p->level));
    json_object_set_new(o, "since", json_u64(p->since));
    json_object_set_new(o, "until", json_u64(p->until));
    json_object_set_new(o, "quiet_since", json_u64(p->quiet_since));
    json_object_set_new(o, "last_violation", json_u64(p->last_violation));
    json_object_set_new(o, "violations", json_u64(p->violations));
    json_object_set_new(o, "last_reason", reason[0] ? json_string(reason) : json_null());
    json_object_set_new(o, "last_cpu", json_real(p->last_cpu));
    json_object_set_new(o, "last_memory", json_u64(p->last_memory));
    json_object_set_new(o, "last_window", json_u64(p->last_window));
    return o;
}

static int get_u64(const json_t *o, const char *key, uint64_t max, uint64_t *out, char *why,
                   size_t why_len)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0 ||
        (uint64_t)json_integer_value(v) > max) {
        snprintf(why, why_len, "\"%s\" is %s", key,
                 !v ? "missing" : json_is_integer(v) ? "out of range" : "not an integer");
        return -1;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_reason(const json_t *o, enum violation_reason *out, char *why, size_t why_len)
{
    const json_t *v = json_object_get(o, "last_reason");
    *out = VIOLATION_REASON_NONE;
    if (!v || json_is_null(v))
        return 0;
    const char *s = json_string_value(v);
    for (int r = VIOLATION_REASON_NONE; s && r < VIOLATION_REASON_COUNT; r++)
        if (strcmp(s, violation_reason_name((enum violation_reason)r)) == 0) {
            *out = (enum violation_reason)r;
            return 0;
        }
    snprintf(why, why_len, "\"last_reason\" is no reason (cpu, memory, memory_pressure or null)");
    return -1;
}

int cluster_penalty_parse(const json_t *o, struct penalty *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof(*p));
    if (!json_is_object(o)) {
        snprintf(why, why_len, "\"penalty\" is not an object");
        return -1;
    }
    uint64_t level, violations;
    const json_t *cpu = json_object_get(o, "last_cpu");
    if (get_u64(o, "level", STATE_MAX_LEVEL, &level, why, why_len) < 0 ||
        get_u64(o, "since", INT64_MAX, &p->since, why, why_len) < 0 ||
        get_u64(o, "until", INT64_MAX, &p->until, why, why_len) < 0 ||
        get_u64(o, "quiet_since", INT64_MAX, &p->quiet_since, why, why_len) < 0 ||
        get_u64(o, "last_violation", INT64_MAX, &p->last_violation, why, why_len) < 0 ||
        get_u64(o, "violations", UINT32_MAX, &violations, why, why_len) < 0 ||
        get_u64(o, "last_memory", INT64_MAX, &p->last_memory, why, why_len) < 0 ||
        get_u64(o, "last_window", INT64_MAX, &p->last_window, why, why_len) < 0 ||
        get_reason(o, &p->last_reason, why, why_len) < 0)
        return -1;
    if (cpu && !json_is_number(cpu)) {
        snprintf(why, why_len, "\"last_cpu\" is not a number");
        return -1;
    }
    p->level = (int)level;
    p->violations = (uint32_t)violations;
    p->last_cpu = cpu ? json_number_value(cpu) : 0;
    return 0;
}

int cluster_standing_parse(const json_t *msg, struct shared_standing *row, char *why,
                           size_t why_len)
{
    memset(row, 0, sizeof(*row));
    uint64_t uid;
    const char *node = json_string_value(json_object_get(msg, "node"));
    char inner[200] = "";
    if (get_u64(msg, "uid", (uid_t)-1 - 1, &uid, why, why_len) < 0 ||
        get_u64(msg, "rev", INT64_MAX, &row->rev, why, why_len) < 0 ||
        get_u64(msg, "seq", INT64_MAX, &row->seq, why, why_len) < 0 ||
        get_u64(msg, "exempt_until", INT64_MAX, &row->exempt_until, why, why_len) < 0)
        return -1;
    if (!node || strlen(node) >= sizeof(row->node)) {
        snprintf(why, why_len, "\"node\" is missing or longer than %zu bytes",
                 sizeof(row->node) - 1);
        return -1;
    }
    if (cluster_penalty_parse(json_object_get(msg, "penalty"), &row->penalty, inner,
                              sizeof(inner)) < 0) {
        snprintf(why, why_len, "penalty: %s", inner);
        return -1;
    }
    row->uid = (uid_t)uid;
    snprintf(row->node, sizeof(row->node), "%s", node);
    return 0;
}
