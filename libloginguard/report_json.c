#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "report_format.h"
#include "units.h"
#include "util.h"

static json_t *time_or_null(uint64_t usec)
{
    if (!usec)
        return json_null();
    char buf[64];
    report_time(usec, true, buf, sizeof(buf));
    return json_string(buf);
}

static json_t *string_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *user_json(const struct report_user *u)
{
    json_t *spans = json_array();
    for (size_t i = 0; i < u->span_count; i++)
        json_array_append_new(spans, json_pack("{s:o, s:o, s:i}", "from",
                                               time_or_null(u->spans[i].from), "until",
                                               time_or_null(u->spans[i].until), "level",
                                               u->spans[i].level));
    return json_pack("{s:o, s:I, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:o, s:o}", "user",
                     string_or_null(u->name), "uid", (json_int_t)u->uid, "violations",
                     (json_int_t)u->violations, "limited_s",
                     (json_int_t)((u->limited_usec + USEC_PER_SEC / 2) / USEC_PER_SEC),
                     "would_limit_s",
                     (json_int_t)((u->would_limit_usec + USEC_PER_SEC / 2) / USEC_PER_SEC),
                     "top_level", u->top_level, "processes", (json_int_t)u->processes,
                     "notices", (json_int_t)u->notices, "returns", (json_int_t)u->returns,
                     "last_return", time_or_null(u->last_return), "limited", spans);
}

static json_t *program_json(const struct report_program *p)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:o}", "program", p->comm, "stopped",
                     (json_int_t)p->stopped, "would_stop", (json_int_t)p->would_stop, "busiest", (json_int_t)p->busiest, "users",
                     (json_int_t)p->uid_count, "rule", string_or_null(p->rule), "exe",
                     string_or_null(p->exe));
}

static json_t *rule_json(const struct report_rule *r)
{
    return json_pack("{s:s, s:s, s:I, s:I}", "rule", r->name, "class", r->class_name, "hits",
                     (json_int_t)r->hits, "users", (json_int_t)r->uid_count);
}

static json_t *day_json(const struct report_day *d)
{
    json_t *o = json_pack("{s:s}", "day", d->date);
    for (int a = 0; a < REPORT_ACTIONS; a++)
        json_object_set_new(o, report_action_names[a], json_integer((json_int_t)d->actions[a]));
    for (int a = 0; a < REPORT_WOULD_ACTIONS; a++) {
        char key[32];
        snprintf(key, sizeof(key), "would_%s", report_action_names[a]);
        json_object_set_new(o, key, json_integer((json_int_t)d->would[a]));
    }
    for (int n = 0; n < REPORT_OUTCOMES; n++)
        json_object_set_new(o, report_outcome_names[n],
                            json_integer((json_int_t)d->notices[n]));
    return o;
}

void report_json(const struct report *r, struct strbuf *out)
{
    json_t *users = json_array(), *programs = json_array(), *rules = json_array(),
           *days = json_array(), *returns = json_array();
    for (size_t i = 0; i < r->user_count; i++)
        json_array_append_new(users, user_json(&r->users[i]));
    for (size_t i = 0; i < r->program_count; i++)
        json_array_append_new(programs, program_json(&r->programs[i]));
    for (size_t i = 0; i < r->rule_count; i++)
        json_array_append_new(rules, rule_json(&r->rules[i]));
    for (size_t i = 0; i < r->day_count; i++)
        json_array_append_new(days, day_json(&r->days[i]));
    const struct report_user **back;
    size_t n = report_returning(r, &back);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(returns, json_pack("{s:o, s:I, s:I, s:o}", "user",
                                                 string_or_null(back[i]->name), "uid",
                                                 (json_int_t)back[i]->uid, "returns",
                                                 (json_int_t)back[i]->returns, "last_return",
                                                 time_or_null(back[i]->last_return)));
    free(back);
    json_t *o = json_pack("{s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "since",
                          time_or_null(r->since ? r->since : r->first), "until",
                          time_or_null(r->until), "events", (json_int_t)r->events, "users",
                          users, "programs", programs, "rules", rules, "days", days, "returns",
                          returns);
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
    strbuf_adds(out, text ? text : "{}");
    strbuf_addc(out, '\n');
    free(text);
    json_decref(o);
}
