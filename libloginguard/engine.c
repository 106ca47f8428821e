#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "user_standing.h"
#include "util.h"

#define WINDOW_SLACK 50000 /* usec */

static const char *const decision_names[] = {
    [DECISION_VIOLATION] = "violation", [DECISION_EXPIRED] = "level_expired",
    [DECISION_DECAYED] = "level_decayed", [DECISION_FORBIDDEN] = "forbidden_process",
    [DECISION_COMPUTE] = "compute_process", [DECISION_EXEMPT_ENDED] = "exempt_ended",
    [DECISION_MEMORY_OVER] = "memory_over_level",
};

const char *decision_name(enum decision_kind k)
{
    return decision_names[k];
}

const char *violation_reason_name(enum violation_reason r)
{
    static const char *const names[VIOLATION_REASON_COUNT] = {"", "cpu", "memory",
                                                              "memory_pressure"};
    return (unsigned)r < VIOLATION_REASON_COUNT ? names[r] : "";
}

struct user_state *engine_user(struct engine_state *st, uid_t uid, bool create)
{
    size_t at = uid_position(st->users, st->user_count, sizeof(*st->users),
                             offsetof(struct user_state, uid), uid);
    if (at < st->user_count && st->users[at].uid == uid)
        return &st->users[at];
    if (!create)
        return NULL;
    st->users = insert_at(st->users, &st->user_count, &st->user_capacity, sizeof(*st->users), at);
    st->users[at].uid = uid;
    return &st->users[at];
}

int engine_forgive(struct engine_state *st, uid_t uid, uint64_t now)
{
    struct user_state *us = engine_user(st, uid, false);
    if (!us)
        return 0;
    int before = us->level;
    us->level = 0;
    us->until = 0;
    us->quiet_since = now;
    /* The run being watched is forgiven too, or the next sample would
     * count the very usage just forgiven towards a new violation. */
    us->cpu_over_since = us->mem_over_since = 0;
    return before;
}

void engine_exempt(struct engine_state *st, uid_t uid, uint64_t until)
{
    struct user_state *us = engine_user(st, uid, until != 0);
    if (us)
        us->exempt_until = until;
}

void engine_state_free(struct engine_state *st)
{
    free(st->users);
    free(st->procs);
    memset(st, 0, sizeof(*st));
}

static struct decision *add_decision(struct decisions *d, enum decision_kind kind, uid_t uid)
{
    d->items = grow_array(d->items, d->count, &d->capacity, sizeof(*d->items));
    struct decision *x = &d->items[d->count++];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->uid = uid;
    return x;
}

void decisions_clear(struct decisions *d)
{
    d->count = 0;
}

void decisions_free(struct decisions *d)
{
    free(d->items);
    memset(d, 0, sizeof(*d));
}

/* Which of two processes comes first in a decision's list. */
static bool before(const struct proc_sample *a, const struct proc_sample *b, bool by_memory)
{
    return by_memory ? a->rss > b->rss : a->cpu > b->cpu;
}

/* The user's processes, highest CPU first (most memory first for a
 * violation on memory: that is the process the user must hear of), into
 * d->procs.  Exempt ones are listed too: beyond the allowance they are
 * what counted (an exempt program with foreign code in it); the stopper
 * never stops them. */
static void pick_top_procs(const struct snapshot *snap, uid_t uid, struct decision *d,
                           bool by_memory)
{
    d->proc_count = 0;
    for (size_t i = 0; i < snap->proc_count; i++) {
        const struct proc_sample *ps = &snap->procs[i];
        if (ps->uid != uid)
            continue;
        /* Insertion into a short sorted list. */
        size_t at = d->proc_count;
        while (at > 0 && before(ps, &snap->procs[d->procs[at - 1]], by_memory))
            at--;
        if (at >= TOP_PROCS)
            continue;
        size_t last = d->proc_count < TOP_PROCS ? d->proc_count : TOP_PROCS - 1;
        memmove(&d->procs[at + 1], &d->procs[at], (last - at) * sizeof(d->procs[0]));
        d->procs[at] = i;
        if (d->proc_count < TOP_PROCS)
            d->proc_count++;
    }
}

/* A run starts with the first interval above a threshold and lasts while
 * the usage averaged over the run stays above it: a short dip (another
 * user's compile taking the cores for a moment) does not reset it, an
 * idle spell long enough to pull the average down does.  A run that
 * lasts a whole window is a violation. */
static void track_run(double threshold, double usage, const struct snapshot *snap,
                      uint64_t *since, double *sum)
{
    if (threshold <= 0 || (!*since && usage <= threshold)) {
        *since = 0;
        return;
    }
    if (!*since) {
        *since = snap->now - snap->interval;
        *sum = 0;
    }
    *sum += usage * (double)snap->interval;
    if (*sum / (double)(snap->now - *since) <= threshold)
        *since = 0;
}

/* What counts against the user: all they ran, less what their exempt
 * programs used up to the allowance. */
static struct user_sample counted_usage(const struct policy *p, const struct user_sample *u)
{
    struct user_sample c = *u;
    c.cpu -= u->exempt_cpu < p->exempt_cpu ? u->exempt_cpu : p->exempt_cpu;
    if (c.cpu < 0)
        c.cpu = 0;
    uint64_t forgiven = u->exempt_memory < p->exempt_memory ? u->exempt_memory : p->exempt_memory;
    c.memory -= forgiven < c.memory ? forgiven : c.memory;
    return c;
}

static void track_window(const struct policy *p, struct user_state *us,
                         const struct user_sample *u, const struct snapshot *snap)
{
    /* The interval after a violation began before the new level's limits
     * were in force (a backend can take seconds to set them, and the
     * next sample waits for it): the next rung's window starts after it,
     * so one burst never climbs two levels. */
    if (us->limits_pending) {
        us->limits_pending = false;
        us->cpu_over_since = us->mem_over_since = 0;
        return;
    }
    track_run(p->violation_cpu, u->cpu, snap, &us->cpu_over_since, &us->cpu_over_sum);
    track_run((double)p->violation_memory, (double)u->memory, snap, &us->mem_over_since,
              &us->mem_over_sum);
}

/* Samples fall on a grid of intervals, so a run that has lasted the
 * window ends a hair before or after the sample that should close it:
 * 50 ms of slack keeps wake-up jitter from costing a whole interval. */
static uint64_t window_slack(const struct snapshot *snap)
{
    return snap->interval / 2 < WINDOW_SLACK ? snap->interval / 2 : WINDOW_SLACK;
}

static void raise_level(const struct policy *p, struct user_state *us,
                        const struct user_sample *u, const struct snapshot *snap,
                        struct decisions *out)
{
    uint64_t now = snap->now;
    /* A whole window, and still above now: nobody is flagged for a job
     * that has just ended. */
    uint64_t slack = window_slack(snap);
    bool by_cpu = us->cpu_over_since && now + slack - us->cpu_over_since >= p->window &&
                  u->cpu > p->violation_cpu;
    bool by_mem = us->mem_over_since && now + slack - us->mem_over_since >= p->window &&
                  u->memory > p->violation_memory;
    /* When the node itself runs short of memory, nobody waits a window;
     * but a user still goes up at most one level per window. */
    bool pressed = p->memory_pressure > 0 && p->violation_memory > 0 &&
                   (!us->last_violation || now - us->last_violation >= p->window) &&
                   snap->memory_pressure >= (double)p->memory_pressure &&
                   u->memory > p->violation_memory;
    if (!by_cpu && !by_mem && !pressed)
        return;

    struct decision *d = add_decision(out, DECISION_VIOLATION, us->uid);
    us->last_reason = by_cpu   ? VIOLATION_REASON_CPU
                      : by_mem ? VIOLATION_REASON_MEMORY
                               : VIOLATION_REASON_PRESSURE;
    d->reason = violation_reason_name(us->last_reason);
    uint64_t run_start = by_cpu ? us->cpu_over_since : by_mem ? us->mem_over_since : 0;
    d->window = run_start ? now - run_start : snap->interval;
    d->cpu = us->cpu_over_since ? us->cpu_over_sum / (double)(now - us->cpu_over_since) : u->cpu;
    d->memory = u->memory;
    us->last_cpu = d->cpu;
    us->last_memory = d->memory;
    us->last_window = d->window;
    d->level_before = us->level;
    if ((size_t)us->level < p->level_count)
        us->level++;
    d->level_after = us->level;
    us->since = now;
    us->until = now + p->levels[us->level - 1].duration;
    d->until = us->until;
    us->last_violation = now;
    us->limits_pending = true;
    us->quiet_since = now;
    us->violations++;
    /* The next rung needs a whole new window. */
    us->cpu_over_since = 0;
    us->mem_over_since = 0;
    pick_top_procs(snap, us->uid, d, !by_cpu);
}

/* The user's largest process that is not exempt, or SIZE_MAX. */
static size_t largest_process(const struct snapshot *snap, uid_t uid)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < snap->proc_count; i++) {
        const struct proc_sample *ps = &snap->procs[i];
        if (ps->uid == uid && ps->class != CLASS_EXEMPT &&
            (best == SIZE_MAX || ps->rss > snap->procs[best].rss))
            best = i;
    }
    return best;
}

/* A level's memory is a line the user must not stay over.  The kernel
 * holds most users to it, but not always: cgroup v1 refuses a limit below
 * what a cgroup holds and cannot take back (the limit is then held where
 * usage stands), and memory charged before a process was moved into the
 * user's cgroup stays charged where it was made.  So a user above their
 * level's memory at every sample for a whole window has their largest
 * process stopped, and the next one after another window. */
static void hold_level_memory(const struct policy *p, struct user_state *us,
                              const struct user_sample *u, const struct snapshot *snap,
                              struct decisions *out)
{
    const struct level *l = us->level > 0 && us->until > snap->now
                                ? &p->levels[us->level - 1] : NULL;
    if (!l || !l->memory || u->memory <= l->memory) {
        us->over_level_since = 0;
        return;
    }
    if (!us->over_level_since) {
        us->over_level_since = snap->now - snap->interval;
        return;
    }
    if (snap->now + window_slack(snap) - us->over_level_since < p->window)
        return;
    size_t largest = largest_process(snap, us->uid);
    if (largest == SIZE_MAX)
        return;
    struct decision *d = add_decision(out, DECISION_MEMORY_OVER, us->uid);
    d->level_before = d->level_after = us->level;
    d->reason = "memory";
    d->memory = u->memory;
    d->window = snap->now - us->over_level_since;
    d->procs[0] = largest;
    d->proc_count = 1;
    us->over_level_since = 0;
}

/* Limits end at `until`; each further quiet `decay` lowers the level. */
static void expire_and_decay(const struct policy *p, struct user_state *us, uint64_t now,
                             struct decisions *out)
{
    if (us->until && now >= us->until) {
        struct decision *d = add_decision(out, DECISION_EXPIRED, us->uid);
        d->level_before = d->level_after = us->level;
        us->until = 0;
        us->quiet_since = now;
        return;
    }
    if (us->level > 0 && !us->until && now - us->quiet_since >= p->decay) {
        struct decision *d = add_decision(out, DECISION_DECAYED, us->uid);
        d->level_before = us->level;
        d->level_after = --us->level;
        us->quiet_since = now;
    }
}

static const struct rule *find_rule_by_name(const struct policy *p, const char *name)
{
    /* A process's rule names it by the rule's own string (the sampler's
     * and the replay's classification): found by address, every compute
     * process at every sample, before any string is compared. */
    for (size_t i = 0; name && i < p->rules.count; i++)
        if (p->rules.rules[i].name == name)
            return &p->rules.rules[i];
    for (size_t i = 0; name && i < p->rules.count; i++)
        if (strcmp(p->rules.rules[i].name, name) == 0)
            return &p->rules.rules[i];
    return NULL;
}

static void end_exemption(struct user_state *us, uint64_t now, struct decisions *out)
{
    if (!us->exempt_until || now < us->exempt_until)
        return;
    struct decision *d = add_decision(out, DECISION_EXEMPT_ENDED, us->uid);
    d->level_before = d->level_after = us->level;
    us->exempt_until = 0;
}

void engine_compute_limits(const struct policy *p, const char *rule, double *cpu,
                           uint64_t *grace)
{
    const struct rule *r = find_rule_by_name(p, rule);
    *cpu = r && r->cpu >= 0 ? r->cpu : p->compute_cpu;
    *grace = r && r->grace >= 0 ? (uint64_t)r->grace : p->compute_grace;
}

static bool run_at(uint64_t since, double sum, uint64_t now, struct engine_run *out)
{
    memset(out, 0, sizeof(*out));
    if (!since || now <= since)
        return false;
    out->since = since;
    out->elapsed = now - since;
    out->average = sum / (double)out->elapsed;
    return true;
}

bool engine_cpu_run(const struct user_state *us, uint64_t now, struct engine_run *out)
{
    return run_at(us ? us->cpu_over_since : 0, us ? us->cpu_over_sum : 0, now, out);
}

bool engine_memory_run(const struct user_state *us, uint64_t now, struct engine_run *out)
{
    return run_at(us ? us->mem_over_since : 0, us ? us->mem_over_sum : 0, now, out);
}

/* Forbidden programs are reported on sight; compute programs once they
 * have stayed above their threshold for their grace. */
static void judge_process(const struct policy *p, struct engine_state *st,
                          struct proc_watch *w, const struct snapshot *snap, size_t index,
                          struct decisions *out)
{
    const struct proc_sample *ps = &snap->procs[index];
    if (w->reported)
        return;
    enum decision_kind kind = DECISION_FORBIDDEN;
    if (ps->class == CLASS_COMPUTE) {
        double threshold;
        uint64_t grace;
        engine_compute_limits(p, ps->rule, &threshold, &grace);
        if (ps->cpu <= threshold) {
            w->over_since = 0;
            return;
        }
        if (!w->over_since)
            w->over_since = snap->now - snap->interval;
        if (snap->now - w->over_since < grace)
            return;
        kind = DECISION_COMPUTE;
    }
    struct decision *d = add_decision(out, kind, ps->uid);
    const struct user_state *us = engine_user(st, ps->uid, false);
    d->level_before = d->level_after = us ? us->level : 0;
    d->reason = ps->rule;
    d->cpu = ps->cpu;
    d->memory = ps->rss;
    d->window = w->over_since ? snap->now - w->over_since : snap->interval;
    d->procs[0] = index;
    d->proc_count = 1;
    w->reported = true;
}

static int compare_identity(pid_t pid_a, uint64_t start_a, pid_t pid_b, uint64_t start_b)
{
    if (pid_a != pid_b)
        return pid_a < pid_b ? -1 : 1;
    return start_a < start_b ? -1 : start_a > start_b;
}

const struct proc_watch *engine_watch(const struct engine_state *st, pid_t pid,
                                      uint64_t start_time)
{
    size_t lo = 0, hi = st->proc_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct proc_watch *w = &st->procs[mid];
        int c = compare_identity(w->pid, w->start_time, pid, start_time);
        if (c == 0)
            return w;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int by_identity(const void *a, const void *b, void *arg)
{
    const struct snapshot *snap = arg;
    const struct proc_sample *x = &snap->procs[*(const size_t *)a];
    const struct proc_sample *y = &snap->procs[*(const size_t *)b];
    return compare_identity(x->pid, x->start_time, y->pid, y->start_time);
}

static int by_uid(const void *a, const void *b)
{
    uid_t x = (*(const struct user_sample *const *)a)->uid;
    uid_t y = (*(const struct user_sample *const *)b)->uid;
    return x < y ? -1 : x > y;
}

/* The snapshot's users sorted by uid, to find each process's user. */
static const struct user_sample **users_by_uid(const struct snapshot *snap)
{
    const struct user_sample **u = xmalloc((snap->user_count + 1) * sizeof(*u));
    for (size_t i = 0; i < snap->user_count; i++)
        u[i] = &snap->users[i];
    qsort(u, snap->user_count, sizeof(*u), by_uid);
    return u;
}

static const struct user_sample *find_sorted(const struct user_sample **u, size_t n, uid_t uid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u[mid]->uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && u[lo]->uid == uid ? u[lo] : NULL;
}

/* The compute and forbidden processes of this sample whose user is not
 * protected, sorted by identity, each matched with its watch (kept
 * sorted the same way): a merge, so thousands of them cost n log n, and
 * watches of processes gone are dropped. */
static void judge_processes(const struct policy *p, struct engine_state *st,
                            const struct snapshot *snap, struct decisions *out)
{
    size_t *idx = xmalloc((snap->proc_count ? snap->proc_count : 1) * sizeof(*idx));
    const struct user_sample **users = users_by_uid(snap);
    size_t n = 0;
    for (size_t i = 0; i < snap->proc_count; i++) {
        const struct proc_sample *ps = &snap->procs[i];
        if (ps->class != CLASS_COMPUTE && ps->class != CLASS_FORBIDDEN)
            continue;
        const struct user_sample *u = find_sorted(users, snap->user_count, ps->uid);
        struct user_sample fallback = {.uid = ps->uid};
        if (!user_protected(p, engine_user(st, ps->uid, false), u ? u : &fallback, snap->now))
            idx[n++] = i;
    }
    free(users);
    qsort_r(idx, n, sizeof(*idx), by_identity, (void *)snap);
    struct proc_watch *watches = xmalloc((n ? n : 1) * sizeof(*watches));
    size_t old = 0;
    for (size_t k = 0; k < n; k++) {
        const struct proc_sample *ps = &snap->procs[idx[k]];
        while (old < st->proc_count && compare_identity(st->procs[old].pid,
                                                        st->procs[old].start_time, ps->pid,
                                                        ps->start_time) < 0)
            old++;
        struct proc_watch *w = &watches[k];
        if (old < st->proc_count && st->procs[old].pid == ps->pid &&
            st->procs[old].start_time == ps->start_time)
            *w = st->procs[old];
        else
            *w = (struct proc_watch){.pid = ps->pid, .start_time = ps->start_time};
        judge_process(p, st, w, snap, idx[k], out);
    }
    free(st->procs);
    st->procs = watches;
    st->proc_count = st->proc_capacity = n;
    free(idx);
}

/* A user with nothing to remember is dropped, keeping the table small. */
static void forget_idle_users(struct engine_state *st)
{
    size_t kept = 0;
    for (size_t i = 0; i < st->user_count; i++) {
        const struct user_state *u = &st->users[i];
        if (u->level || u->until || u->exempt_until || u->violations || u->cpu_over_since ||
            u->mem_over_since)
            st->users[kept++] = *u;
    }
    st->user_count = kept;
}

void engine_step(const struct policy *p, struct engine_state *st, const struct snapshot *snap,
                 struct decisions *out)
{
    /* A reload may have shortened the ladder. */
    for (size_t i = 0; i < st->user_count; i++)
        if ((size_t)st->users[i].level > p->level_count)
            st->users[i].level = (int)p->level_count;
    for (size_t i = 0; i < st->user_count; i++)
        st->users[i].in_snapshot = false;
    for (size_t i = 0; i < snap->user_count; i++) {
        const struct user_sample *u = &snap->users[i];
        struct user_state *us = engine_user(st, u->uid, false);
        if (user_protected(p, us, u, snap->now)) {
            if (us) {
                us->cpu_over_since = us->mem_over_since = us->over_level_since = 0;
                us->in_snapshot = true;
            }
            continue;
        }
        if (!us)
            us = engine_user(st, u->uid, true);
        us->in_snapshot = true;
        struct user_sample counted = counted_usage(p, u);
        track_window(p, us, &counted, snap);
        hold_level_memory(p, us, &counted, snap, out);
        raise_level(p, us, &counted, snap, out);
    }
    for (size_t i = 0; i < st->user_count; i++) {
        struct user_state *us = &st->users[i];
        if (!us->in_snapshot)
            us->cpu_over_since = us->mem_over_since = us->over_level_since = 0;
        expire_and_decay(p, us, snap->now, out);
        end_exemption(us, snap->now, out);
    }
    judge_processes(p, st, snap, out);
    forget_idle_users(st);
}

/* A process that used OFFENDING_CPU at the last sample, or a tenth of
 * what its user used over the window: under a level's throttle a job's
 * processes share little each (four ranks held to 0.2 cores between
 * them), and one that waited on a child at that sample is as much the
 * job.  Never an exempt one, nor one next to idle (a shell, an editor). */
bool engine_offending(const struct decision *d, const struct proc_sample *ps)
{
    double floor = d->cpu / 10 < OFFENDING_CPU ? d->cpu / 10 : OFFENDING_CPU;
    if (floor < OFFENDING_CPU / 4)
        floor = OFFENDING_CPU / 4;
    return ps->class != CLASS_EXEMPT && ps->cpu >= floor;
}
