#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "notice_build.h"
#include "rules_judge.h"
#include "simulate.h"
#include "util.h"

void simulation_init(struct simulation *s, const struct policy *current,
                     const struct policy *candidate)
{
    memset(s, 0, sizeof(*s));
    s->policies[0] = current;
    s->policies[1] = candidate;
}

static struct sim_user *sim_user(struct simulation *s, uid_t uid)
{
    size_t at = uid_position(s->users, s->user_count, sizeof(*s->users),
                             offsetof(struct sim_user, uid), uid);
    if (at < s->user_count && s->users[at].uid == uid)
        return &s->users[at];
    s->users = insert_at(s->users, &s->user_count, &s->user_capacity, sizeof(*s->users), at);
    memset(&s->users[at], 0, sizeof(s->users[at]));
    s->users[at].uid = uid;
    return &s->users[at];
}

/* The verdict of policy k on each process, judged once per process. */
static void classify_all(struct simulation *s, int k, struct trace_decoder *d,
                         struct snapshot *snap)
{
    const struct rule_set *rules = &s->policies[k]->rules;
    for (size_t i = 0; i < snap->proc_count; i++) {
        struct trace_proc *tp = d->snap_procs[i];
        struct proc_sample *ps = &snap->procs[i];
        if (!tp->judged[k]) {
            struct program_facts f = {
                .exe = tp->ps.exe, .exe_trusted = tp->ps.exe_trusted,
                .argv = tp->ps.argv, .argv_len = tp->ps.argv_len,
                .argv_total = tp->ps.argv_total, .argv_sha256 = tp->ps.argv_sha256,
            };
            const struct program *prog = programs_get(&s->programs[k], rules, &f);
            struct verdict v = classify_process(rules, prog, tp->ps.comm);
            programs_put(&s->programs[k], prog);
            tp->judged[k] = true;
            tp->class[k] = v.class;
            tp->rule[k] = v.rule;
            tp->parts[k] = v.parts;
        }
        ps->class = tp->class[k];
        ps->rule = tp->rule[k] ? tp->rule[k]->name : NULL;
        ps->rule_parts = tp->parts[k];
    }
    classify_exempt_usage(snap);
}

/* A process stopped once: the replayed trace goes on showing it (the
 * daemon that recorded it did not stop it), and each later sample would
 * decide so again. */
static void add_stop(struct sim_outcome *o, const struct proc_sample *ps, uint64_t now,
                     const char *why, enum decision_kind kind)
{
    if (sim_outcome_stops(o, ps->pid, ps->start_time))
        return;
    o->stopped++;
    if (o->stop_count >= SIM_STOPS_KEPT)
        return;
    o->stops = xreallocarray(o->stops, o->stop_count + 1, sizeof(*o->stops));
    struct sim_stop *x = &o->stops[o->stop_count++];
    x->time = now;
    x->pid = ps->pid;
    x->start_time = ps->start_time;
    memcpy(x->comm, ps->comm, sizeof(x->comm));
    x->exe = ps->exe ? xstrdup(ps->exe) : NULL;
    x->why = xstrdup(why ? why : "");
    x->kind = kind;
}

/* What the daemon would do about x (actions.c, notify.c), counted. */
static void account(struct simulation *s, int k, const struct decision *x,
                    const struct snapshot *snap)
{
    const struct policy *p = s->policies[k];
    struct sim_user *u = sim_user(s, x->uid);
    const struct user_sample *us = snapshot_find_user(snap, x->uid);
    if (us && us->name[0] && !u->name[0])
        copy_string(u->name, sizeof(u->name), us->name);
    struct sim_outcome *o = &u->o[k];
    const struct level *level = x->level_after ? &p->levels[x->level_after - 1] : NULL;
    switch (x->kind) {
    case DECISION_VIOLATION:
        o->violations++;
        if (o->seen_count < SIM_STOPS_KEPT) {
            o->seen = xreallocarray(o->seen, o->seen_count + 1, sizeof(*o->seen));
            o->seen[o->seen_count++] = (struct sim_violation){snap->now, x->level_after,
                                                              x->reason};
        }
        if (x->level_after > o->highest)
            o->highest = x->level_after;
        for (size_t i = 0; level && level->stop && i < x->proc_count; i++) {
            const struct proc_sample *ps = &snap->procs[x->procs[i]];
            if (engine_offending(x, ps))
                add_stop(o, ps, snap->now, level->name, x->kind);
        }
        break;
    case DECISION_FORBIDDEN:
    case DECISION_COMPUTE:
    case DECISION_MEMORY_OVER:
        add_stop(o, &snap->procs[x->procs[0]], snap->now, x->reason, x->kind);
        break;
    default:
        break;
    }
    enum notice_kind kind;
    if (p->channels.count && notice_kind_for(p, x, &kind)) {
        uint64_t last = o->notice_at[kind];
        if (!last || last > snap->now || snap->now - last >= p->rate_limit) {
            o->notices++;
            o->notice_at[kind] = snap->now;
        }
    }
}

/* Time at a level whose limits apply, up to this sample. */
static void count_limited(struct simulation *s, int k, const struct snapshot *snap)
{
    const struct policy *p = s->policies[k];
    const struct engine_state *st = &s->state[k];
    for (size_t i = 0; i < st->user_count; i++) {
        const struct user_state *us = &st->users[i];
        if (!us->level || !us->until || (size_t)us->level > p->level_count)
            continue;
        const struct level *l = &p->levels[us->level - 1];
        struct sim_outcome *o = &sim_user(s, us->uid)->o[k];
        if (l->stop)
            o->restricted += snap->interval;
        else if (l->cpu > 0 || l->memory > 0)
            o->throttled += snap->interval;
    }
}

void simulation_step(struct simulation *s, struct trace_decoder *d, struct snapshot *snap)
{
    s->samples++;
    for (int k = 0; k < SIM_POLICIES; k++) {
        classify_all(s, k, d, snap);
        decisions_clear(&s->decisions);
        engine_step(s->policies[k], &s->state[k], snap, &s->decisions);
        for (size_t i = 0; i < s->decisions.count; i++)
            account(s, k, &s->decisions.items[i], snap);
        count_limited(s, k, snap);
    }
}

bool sim_outcome_stops(const struct sim_outcome *o, pid_t pid, uint64_t start_time)
{
    for (size_t i = 0; i < o->stop_count; i++)
        if (o->stops[i].pid == pid && o->stops[i].start_time == start_time)
            return true;
    return false;
}

void simulation_free(struct simulation *s)
{
    for (size_t i = 0; i < s->user_count; i++)
        for (int k = 0; k < SIM_POLICIES; k++) {
            struct sim_outcome *o = &s->users[i].o[k];
            for (size_t j = 0; j < o->stop_count; j++) {
                free(o->stops[j].exe);
                free(o->stops[j].why);
            }
            free(o->stops);
            free(o->seen);
        }
    free(s->users);
    for (int k = 0; k < SIM_POLICIES; k++) {
        engine_state_free(&s->state[k]);
        programs_free(&s->programs[k]);
    }
    decisions_free(&s->decisions);
    memset(s, 0, sizeof(*s));
}
