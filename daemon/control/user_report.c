#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "control/user_report.h"
#include "history.h"
#include "record/event_tail.h"
#include "record/events.h"
#include "units.h"

static json_t *history_json(const struct history *h, uid_t uid, uint64_t now)
{
    const struct user_history *u = history_find(h, uid);
    if (!u)
        return json_null();
    double cpu[HISTORY_POINTS];
    uint64_t memory[HISTORY_POINTS];
    history_points(u, now, cpu, memory);
    json_t *c = json_array(), *m = json_array();
    for (size_t i = 0; i < HISTORY_POINTS; i++) {
        json_array_append_new(c, json_real(cpu[i]));
        json_array_append_new(m, json_integer((json_int_t)memory[i]));
    }
    return json_pack("{s:I, s:o, s:o, s:o}", "step_s",
                     (json_int_t)(HISTORY_STEP_USEC / USEC_PER_SEC), "end", json_from_time(now),
                     "cpu_cores", c, "memory_bytes", m);
}

static json_t *text_or_null(const char *s)
{
    return s ? json_from_bytes(s, strlen(s)) : json_null();
}

/* The busiest processes as the sampler last read them. */
static json_t *processes_json(const struct control_view *v, uid_t uid)
{
    struct proc_sample top[USER_REPORT_PROCS];
    size_t n = sampler_user_top(v->sampler, uid, top, USER_REPORT_PROCS);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct proc_sample *ps = &top[i];
        json_t *o = json_pack("{s:i, s:s, s:o, s:f, s:I}", "pid", (int)ps->pid, "class",
                              class_name(ps->class), "rule", text_or_null(ps->rule),
                              "cpu_cores", (double)(long)(ps->cpu * 1000) / 1000,
                              "memory_bytes", (json_int_t)ps->rss);
        json_object_set_new(o, "comm", text_or_null(ps->comm));
        json_object_set_new(o, "exe", text_or_null(ps->exe));
        json_array_append_new(a, o);
        free(ps->exe);
    }
    return a;
}

/* The latest events about the user, their plain fields only (the
 * processes and command lines stay in the log): a reply of a few KiB. */
static json_t *events_json(const struct control_view *v, uid_t uid)
{
    json_t *found = event_tail(v->events->path, uid, NULL, USER_REPORT_EVENTS);
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(found, i, e) {
        json_t *o = json_object();
        const char *key;
        json_t *value;
        json_object_foreach(e, key, value) {
            if (!json_is_object(value) && !json_is_array(value) && strcmp(key, "host") != 0)
                json_object_set(o, key, value);
        }
        json_array_append_new(out, o);
    }
    json_decref(found);
    return out;
}

void user_report_add(struct control_view *v, json_t *reply, uid_t uid, uint64_t now)
{
    json_object_set_new(reply, "history", history_json(v->history, uid, now));
    json_object_set_new(reply, "processes", processes_json(v, uid));
    json_object_set_new(reply, "events", events_json(v, uid));
}
