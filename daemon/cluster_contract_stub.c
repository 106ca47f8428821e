/* TEMPORARY, until cluster_link.c, cluster_merge.c and cluster_codec.c
 * (written apart) land: the few functions of their headers the daemon's
 * side calls, so that it builds and its tests run.  Remove this file (and
 * its line in Makefile.am) when they are merged: the real ones replace
 * it.  With it, the link never starts (ENOSYS: the daemon says so and
 * keeps enforcing on its own state). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster_codec.h"
#include "cluster_link.h"
#include "cluster_merge.h"

int cluster_link_start(const struct cluster_link_settings *s, pid_t *pid, int *fd)
{
    (void)s;
    *pid = 0;
    *fd = -1;
    errno = ENOSYS;
    return -1;
}

void penalty_from_user(struct penalty *p, const struct user_state *us)
{
    *p = (struct penalty){.level = us->level, .since = us->since, .until = us->until,
                          .quiet_since = us->quiet_since, .last_violation = us->last_violation,
                          .violations = us->violations, .last_reason = us->last_reason,
                          .last_cpu = us->last_cpu, .last_memory = us->last_memory,
                          .last_window = us->last_window};
}

void penalty_to_user(struct user_state *us, const struct penalty *p)
{
    us->level = p->level;
    us->since = p->since;
    us->until = p->until;
    us->quiet_since = p->quiet_since;
    us->last_violation = p->last_violation;
    us->violations = p->violations;
    us->last_reason = p->last_reason;
    us->last_cpu = p->last_cpu;
    us->last_memory = p->last_memory;
    us->last_window = p->last_window;
}

const char *standing_change_name(enum standing_change_kind k)
{
    static const char *const names[] = {"raise", "lower", "forgive", "exempt"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "";
}

json_t *penalty_to_json(const struct penalty *p)
{
    return json_pack("{s:i, s:I, s:I, s:I, s:I, s:I, s:s, s:f, s:I, s:I}", "level", p->level,
                     "since", (json_int_t)p->since, "until", (json_int_t)p->until, "quiet_since",
                     (json_int_t)p->quiet_since, "last_violation", (json_int_t)p->last_violation,
                     "violations", (json_int_t)p->violations, "last_reason",
                     violation_reason_name(p->last_reason), "last_cpu", p->last_cpu,
                     "last_memory", (json_int_t)p->last_memory, "last_window",
                     (json_int_t)p->last_window);
}

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

int penalty_from_json(const json_t *o, struct penalty *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof(*p));
    uint64_t level, violations;
    const json_t *cpu = json_object_get(o, "last_cpu");
    const char *reason = json_string_value(json_object_get(o, "last_reason"));
    if (!json_is_object(o) || !json_is_number(cpu)) {
        snprintf(why, why_len, "\"penalty\" must be an object with \"last_cpu\"");
        return -1;
    }
    if (get_uint(o, "level", 1000, &level, why, why_len) < 0 ||
        get_uint(o, "violations", UINT32_MAX, &violations, why, why_len) < 0 ||
        get_uint(o, "since", INT64_MAX, &p->since, why, why_len) < 0 ||
        get_uint(o, "until", INT64_MAX, &p->until, why, why_len) < 0 ||
        get_uint(o, "quiet_since", INT64_MAX, &p->quiet_since, why, why_len) < 0 ||
        get_uint(o, "last_violation", INT64_MAX, &p->last_violation, why, why_len) < 0 ||
        get_uint(o, "last_memory", INT64_MAX, &p->last_memory, why, why_len) < 0 ||
        get_uint(o, "last_window", INT64_MAX, &p->last_window, why, why_len) < 0)
        return -1;
    p->level = (int)level;
    p->violations = (uint32_t)violations;
    for (int r = VIOLATION_REASON_NONE + 1; reason && r < VIOLATION_REASON_COUNT; r++)
        if (strcmp(reason, violation_reason_name(r)) == 0)
            p->last_reason = (enum violation_reason)r;
    p->last_cpu = json_number_value(cpu);
    return 0;
}

int standing_from_json(const json_t *o, struct shared_standing *s, char *why, size_t why_len)
{
    memset(s, 0, sizeof(*s));
    const char *node = json_string_value(json_object_get(o, "node"));
    uint64_t uid;
    if (!node || strlen(node) >= sizeof(s->node)) {
        snprintf(why, why_len, "\"node\" must be a string of at most %d bytes",
                 CLUSTER_NODE_MAX - 1);
        return -1;
    }
    snprintf(s->node, sizeof(s->node), "%s", node);
    if (get_uint(o, "uid", UINT32_MAX - 1, &uid, why, why_len) < 0 ||
        get_uint(o, "rev", INT64_MAX, &s->rev, why, why_len) < 0 ||
        get_uint(o, "seq", INT64_MAX, &s->seq, why, why_len) < 0 ||
        get_uint(o, "exempt_until", INT64_MAX, &s->exempt_until, why, why_len) < 0)
        return -1;
    s->uid = (uid_t)uid;
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
