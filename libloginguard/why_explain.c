#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json_text.h"
#include "slurm_job.h"
#include "strbuf.h"
#include "units.h"
#include "user_standing.h"
#include "utf8.h"
#include "util.h"
#include "why_explain.h"

static const char *const verdict_names[] = {
    [WHY_NO_PROCESS] = "no_process",       [WHY_NOT_JUDGED] = "not_judged",
    [WHY_JOB] = "job",
    [WHY_PROTECTED] = "protected",         [WHY_FORBIDDEN] = "forbidden",
    [WHY_COMPUTE_ACTED] = "compute_acted", [WHY_COMPUTE_GRACE] = "compute_grace",
    [WHY_LIMITED] = "limited",             [WHY_WATCHED] = "watched",
    [WHY_BELOW] = "below",                 [WHY_NOT_SAMPLED] = "not_sampled",
};

const char *why_verdict_name(enum why_verdict v)
{
    return verdict_names[v];
}

static void say(struct why_answer *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct why_answer *a, const char *fmt, ...)
{
    if (a->line_count == WHY_LINES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->lines[a->line_count++], WHY_LINE_MAX, fmt, ap);
    va_end(ap);
}

/* Text a user chose, made harmless to show: at most 120 bytes of it. */
struct shown {
    char s[4 * 120 + 1];
};

static struct shown show(const char *text)
{
    struct shown out;
    size_t len = 0;
    while (text && len < 120 && text[len])
        len++;
    utf8_escape(text ? text : "", len, out.s, sizeof(out.s));
    return out;
}

struct number {
    char s[48];
};

/* "1.8", "2", "0.25" */
static struct number cores(double c)
{
    struct number n;
    snprintf(n.s, sizeof(n.s), "%.2f", c);
    char *end = n.s + strlen(n.s);
    while (end[-1] == '0')
        *--end = '\0';
    if (end[-1] == '.')
        end[-1] = '\0';
    return n;
}

/* "300 MiB", "8 GiB", "1.5 GiB" */
static struct number bytes(uint64_t b)
{
    struct number n;
    if (b >= (1ULL << 30))
        snprintf(n.s, sizeof(n.s), b % (1ULL << 30) ? "%.1f GiB" : "%.0f GiB",
                 (double)b / (double)(1ULL << 30));
    else
        snprintf(n.s, sizeof(n.s), "%llu MiB", (unsigned long long)(b >> 20));
    return n;
}

static struct number duration(uint64_t usec)
{
    struct number n;
    format_duration(usec, n.s, sizeof(n.s));
    return n;
}

/* A time of day, with the date when it is not today's (local time). */
static struct number clock_time(uint64_t usec, uint64_t now)
{
    struct number n;
    time_t t = (time_t)(usec / USEC_PER_SEC), today = (time_t)(now / USEC_PER_SEC);
    struct tm tm, tm_now;
    localtime_r(&t, &tm);
    localtime_r(&today, &tm_now);
    bool same_day = tm.tm_year == tm_now.tm_year && tm.tm_yday == tm_now.tm_yday;
    strftime(n.s, sizeof(n.s), same_day ? "%H:%M" : "%Y-%m-%d %H:%M", &tm);
    return n;
}

static struct shown who(const struct why_facts *f)
{
    if (f->user_name && f->user_name[0])
        return show(f->user_name);
    struct shown s;
    snprintf(s.s, sizeof(s.s), "uid %u", (unsigned)f->owner);
    return s;
}

/* Why the owner is never judged, as every part of the daemon answers it. */
static enum protection protection(const struct why_facts *f)
{
    struct user_sample u = {.uid = f->owner, .exempt_group = f->in_exempt_group,
                            .directory_pending = f->directory_pending};
    copy_string(u.name, sizeof(u.name), f->user_name ? f->user_name : "");
    return user_protection(f->policy, f->state, &u, f->now);
}

static void say_protected(const struct why_facts *f, enum protection why, struct why_answer *a)
{
    switch (why) {
    case PROTECTION_EXEMPT_USER:
        say(a, "protected: user %s is listed in [exempt] users", who(f).s);
        return;
    case PROTECTION_EXEMPT_GROUP:
        say(a, "protected: member of group %s ([exempt] groups)",
            f->exempt_group ? show(f->exempt_group).s : "(one of them)");
        return;
    case PROTECTION_DIRECTORY:
        say(a, "not judged yet: the user directory (NSS) has not said who uid %u is",
            (unsigned)f->owner);
        return;
    case PROTECTION_TEMPORARY:
        say(a, "temporarily exempt until %s (reason: %s)",
            clock_time(f->state->exempt_until, f->now).s,
            f->exempt_reason ? show(f->exempt_reason).s : "not known");
        return;
    case PROTECTION_NONE:
    case PROTECTION_ROOT:
    case PROTECTION_SYSTEM:
        return; /* not protected, or not judged at all (why_explain) */
    }
}

/* "rule xmrig, exe /usr/bin/xmrig, comm xmrig": the parts of the rule
 * that matched (a rule matches when every part it has does), each with
 * what the process showed it. */
static void rule_parts(const struct why_facts *f, char *buf, size_t len)
{
    const struct proc_sample *ps = f->proc;
    const struct rule *r = f->rule;
    struct strbuf b = {0};
    strbuf_addf(&b, "rule %s", show(ps->rule).s);
    if (r && r->exe)
        strbuf_addf(&b, ", exe %s", show(ps->exe ? ps->exe : "?").s);
    if (r && r->comm)
        strbuf_addf(&b, ", comm %s", show(ps->comm).s);
    if (r && r->argv_text)
        strbuf_addf(&b, ", argv matching %s", show(r->argv_text).s);
    copy_string(buf, len, b.s);
    strbuf_free(&b);
}

/* The process's class, as a sentence; the verdict when it decides. */
static void say_class(const struct why_facts *f, struct why_answer *a, bool verdict)
{
    const struct proc_sample *ps = f->proc;
    const struct policy *p = f->policy;
    char parts[WHY_LINE_MAX / 2];
    rule_parts(f, parts, sizeof(parts));
    bool observe = p->mode == MODE_OBSERVE;
    switch (ps->class) {
    case CLASS_FORBIDDEN:
        if (verdict)
            a->verdict = WHY_FORBIDDEN;
        say(a, "class forbidden (%s): %s", parts,
            observe ? "would be stopped on sight (observe mode stops nothing)"
                    : "stopped on sight");
        return;
    case CLASS_COMPUTE: {
        double threshold;
        uint64_t grace;
        engine_compute_limits(p, ps->rule, &threshold, &grace);
        const struct proc_watch *w = f->watch;
        if (w && w->reported) {
            if (verdict)
                a->verdict = WHY_COMPUTE_ACTED;
            say(a, "class compute (%s), grace %s: above %s cores past its grace, %s", parts,
                duration(grace).s, cores(threshold).s,
                observe ? "would be stopped (observe mode stops nothing)" : "stopped");
        } else if (w && w->over_since && ps->cpu > threshold) {
            uint64_t used = f->now > w->over_since ? f->now - w->over_since : 0;
            if (verdict)
                a->verdict = WHY_COMPUTE_GRACE;
            say(a, "class compute (%s), grace %s, %s left: %s cores, above %s", parts,
                duration(grace).s, duration(used < grace ? grace - used : 0).s,
                cores(ps->cpu).s, cores(threshold).s);
        } else {
            say(a, "class compute (%s): %s cores, not above its %s; its grace of %s starts "
                   "when it is", parts, cores(ps->cpu).s, cores(threshold).s,
                duration(grace).s);
        }
        return;
    }
    case CLASS_EXEMPT:
        say(a, "class exempt (%s): never stopped; it counts against its user only beyond "
               "%s cores and %s", parts, cores(p->exempt_cpu).s, bytes(p->exempt_memory).s);
        return;
    case CLASS_NONE:
        if (ps->foreign_code)
            say(a, "class none, not exempt (%s): it does not run only its own code (%s), so it "
                   "counts like any other program", parts, show(ps->foreign_code).s);
        return;
    }
}

/* The owner's standing and usage, as a sentence; the verdict when no
 * class decided it. */
static void say_usage(const struct why_facts *f, struct why_answer *a, bool verdict)
{
    const struct policy *p = f->policy;
    const struct user_state *us = f->state;
    const struct level *l = user_level_on(p, us, f->now);
    if (l) {
        if (verdict)
            a->verdict = WHY_LIMITED;
        char limits[200] = "";
        if (l->cpu > 0 || l->memory > 0)
            snprintf(limits, sizeof(limits), ": limits %s%s%s%s", l->cpu > 0 ? cores(l->cpu).s : "",
                     l->cpu > 0 ? " cores" : "", l->cpu > 0 && l->memory ? ", " : "",
                     l->memory ? bytes(l->memory).s : "");
        say(a, "user %s at level %d (%s) until %s after %u violation%s%s%s", who(f).s, us->level,
            l->name, clock_time(us->until, f->now).s, (unsigned)us->violations,
            us->violations == 1 ? "" : "s", limits,
            l->stop ? "; offending processes are stopped" : "");
    }
    struct engine_run run;
    char window[48];
    format_duration(p->window, window, sizeof(window));
    bool watched = false;
    if (engine_cpu_run(us, f->now, &run)) {
        say(a, "user %s: %s cores of %s for %s of a %s window", who(f).s, cores(run.average).s,
            cores(p->violation_cpu).s, duration(run.elapsed).s, window);
        watched = true;
    }
    if (engine_memory_run(us, f->now, &run)) {
        say(a, "user %s: %s of %s for %s of a %s window", who(f).s,
            bytes((uint64_t)run.average).s, bytes(p->violation_memory).s,
            duration(run.elapsed).s, window);
        watched = true;
    }
    if (watched) {
        if (verdict && a->verdict != WHY_LIMITED)
            a->verdict = WHY_WATCHED;
        return;
    }
    const struct user_sample *u = f->user;
    say(a, "below every threshold: %s cores of %s, %s of %s", cores(u ? u->cpu : 0).s,
        cores(p->violation_cpu).s, bytes(u ? u->memory : 0).s, bytes(p->violation_memory).s);
    if (verdict && a->verdict != WHY_LIMITED)
        a->verdict = WHY_BELOW;
}

/* A Slurm job's process: Slurm limits it, whoever its owner is. */
static void say_job(const struct why_facts *f, struct why_answer *a)
{
    a->verdict = WHY_JOB;
    char job[48] = "a Slurm job (its id not known)";
    if (f->proc->slurm_job != SLURM_JOB_UNKNOWN)
        snprintf(job, sizeof(job), "Slurm job %u", (unsigned)f->proc->slurm_job);
    say(a, "part of %s: Slurm limits it; it is not judged here and does not count toward "
           "%s's usage", job, who(f).s);
}

void why_explain(const struct why_facts *f, struct why_answer *a)
{
    memset(a, 0, sizeof(*a));
    if (!f->found) {
        a->verdict = WHY_NO_PROCESS;
        say(a, "no such process");
        return;
    }
    enum protection why = protection(f);
    if (why == PROTECTION_ROOT || why == PROTECTION_SYSTEM) {
        a->verdict = WHY_NOT_JUDGED;
        if (why == PROTECTION_ROOT)
            say(a, "not a process the daemon judges (root's)");
        else
            say(a, "not a process the daemon judges (uid %u is below min_uid %u)",
                (unsigned)f->owner, (unsigned)f->policy->min_uid);
        return;
    }
    if (f->proc && f->proc->slurm_job) {
        say_job(f, a);
        return;
    }
    if (why != PROTECTION_NONE) {
        a->verdict = WHY_PROTECTED;
        say_protected(f, why, a);
        return;
    }
    if (!f->proc) {
        a->verdict = WHY_NOT_SAMPLED;
        say(a, "not sampled yet (it started after the last sample): judged at the next one");
        say_usage(f, a, false);
        return;
    }
    bool decisive = f->proc->class == CLASS_FORBIDDEN ||
                    (f->proc->class == CLASS_COMPUTE && f->watch &&
                     (f->watch->reported || f->watch->over_since));
    say_class(f, a, decisive);
    say_usage(f, a, !decisive);
    /* The verdict's sentence first. */
    if (!decisive && a->line_count > 1 && f->proc->class != CLASS_NONE) {
        char first[WHY_LINE_MAX];
        memcpy(first, a->lines[0], sizeof(first));
        memmove(a->lines[0], a->lines[1], (a->line_count - 1) * sizeof(a->lines[0]));
        memcpy(a->lines[a->line_count - 1], first, sizeof(first));
    }
}

static json_t *text_or_null(const char *s)
{
    return s && s[0] ? json_from_bytes(s, strlen(s)) : json_null();
}

static json_t *rule_json(const struct why_facts *f)
{
    const struct rule *r = f->rule;
    const struct proc_sample *ps = f->proc;
    if (!ps || !ps->rule)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "name", text_or_null(ps->rule));
    json_object_set_new(o, "origin", r ? text_or_null(r->origin) : json_null());
    json_t *matched = json_array();
    if (r && r->exe)
        json_array_append_new(matched, json_pack("{s:s, s:o, s:o}", "field", "exe", "pattern",
                                                 text_or_null(r->exe), "value",
                                                 text_or_null(ps->exe)));
    if (r && r->comm)
        json_array_append_new(matched, json_pack("{s:s, s:o, s:o}", "field", "comm", "pattern",
                                                 text_or_null(r->comm), "value",
                                                 text_or_null(ps->comm)));
    if (r && r->argv_text)
        json_array_append_new(matched, json_pack("{s:s, s:o}", "field", "argv", "pattern",
                                                 text_or_null(r->argv_text)));
    json_object_set_new(o, "matched", matched);
    return o;
}

static json_t *run_json(bool on, const struct engine_run *run, bool is_cpu)
{
    if (!on)
        return json_null();
    return json_pack("{s:o, s:f, s:o}", "since", json_from_time(run->since), "elapsed_s",
                     (double)run->elapsed / USEC_PER_SEC, is_cpu ? "average_cores" : "average_bytes",
                     is_cpu ? json_real(run->average) : json_integer((json_int_t)run->average));
}

static json_t *grace_json(const struct why_facts *f)
{
    const struct proc_sample *ps = f->proc;
    if (!ps || ps->class != CLASS_COMPUTE)
        return json_null();
    double threshold;
    uint64_t grace;
    engine_compute_limits(f->policy, ps->rule, &threshold, &grace);
    const struct proc_watch *w = f->watch;
    uint64_t used = w && w->over_since && f->now > w->over_since ? f->now - w->over_since : 0;
    return json_pack("{s:f, s:f, s:o, s:o, s:b}", "threshold_cores", threshold, "grace_s",
                     (double)grace / USEC_PER_SEC, "over_since",
                     w && w->over_since ? json_from_time(w->over_since) : json_null(), "left_s",
                     w && w->over_since && !w->reported
                         ? json_real((double)(used < grace ? grace - used : 0) / USEC_PER_SEC)
                         : json_null(),
                     "acted", w && w->reported);
}

static json_t *process_json(const struct why_facts *f)
{
    const struct proc_sample *ps = f->proc;
    json_t *o = json_pack("{s:i, s:I, s:I, s:I}", "pid", (int)f->pid, "start_time",
                          (json_int_t)f->start_time, "uid", (json_int_t)f->uid, "owner_uid",
                          (json_int_t)f->owner);
    json_object_set_new(o, "comm", text_or_null(ps ? ps->comm : f->comm));
    json_object_set_new(o, "exe", text_or_null(ps ? ps->exe : NULL));
    json_object_set_new(o, "class", ps ? json_string(class_name(ps->class)) : json_null());
    json_object_set_new(o, "foreign_code", text_or_null(ps ? ps->foreign_code : NULL));
    json_object_set_new(o, "cpu_cores", ps ? json_real(ps->cpu) : json_null());
    json_object_set_new(o, "memory_bytes", ps ? json_integer((json_int_t)ps->rss) : json_null());
    json_object_set_new(o, "slurm_job", ps && ps->slurm_job && ps->slurm_job != SLURM_JOB_UNKNOWN
                                            ? json_integer((json_int_t)ps->slurm_job)
                                            : json_null());
    return o;
}

static json_t *user_json(const struct why_facts *f)
{
    const struct user_state *us = f->state;
    const struct user_sample *u = f->user;
    struct engine_run cpu_run, mem_run;
    bool cpu_on = engine_cpu_run(us, f->now, &cpu_run);
    bool mem_on = engine_memory_run(us, f->now, &mem_run);
    json_t *o = json_pack("{s:I, s:o, s:f, s:I, s:i, s:o, s:I, s:o}", "uid",
                          (json_int_t)f->owner, "user", text_or_null(f->user_name), "cpu_cores",
                          u ? u->cpu : 0.0, "memory_bytes", (json_int_t)(u ? u->memory : 0),
                          "level", us ? us->level : 0, "until",
                          us && us->until > f->now ? json_from_time(us->until) : json_null(),
                          "violations", (json_int_t)(us ? us->violations : 0), "exempt_until",
                          us && us->exempt_until > f->now ? json_from_time(us->exempt_until)
                                                          : json_null());
    json_object_set_new(o, "exempt_group", text_or_null(f->exempt_group));
    json_object_set_new(o, "exempt_reason", text_or_null(f->exempt_reason));
    json_object_set_new(o, "cpu_run", run_json(cpu_on, &cpu_run, true));
    json_object_set_new(o, "memory_run", run_json(mem_on, &mem_run, false));
    return o;
}

json_t *why_json(const struct why_facts *f, const struct why_answer *a)
{
    json_t *lines = json_array();
    for (size_t i = 0; i < a->line_count; i++)
        json_array_append_new(lines, json_from_bytes(a->lines[i], strlen(a->lines[i])));
    json_t *o = json_pack("{s:s, s:o, s:I}", "verdict", why_verdict_name(a->verdict), "text",
                          lines, "pid", (json_int_t)f->pid);
    if (!f->found)
        return o;
    json_object_set_new(o, "process", process_json(f));
    if (a->verdict == WHY_NOT_JUDGED)
        return o;
    json_object_set_new(o, "rule", rule_json(f));
    json_object_set_new(o, "grace", grace_json(f));
    json_object_set_new(o, "user", user_json(f));
    json_object_set_new(o, "window_s", json_real((double)f->policy->window / USEC_PER_SEC));
    json_object_set_new(o, "violation_cpu_cores", json_real(f->policy->violation_cpu));
    json_object_set_new(o, "violation_memory_bytes",
                        json_integer((json_int_t)f->policy->violation_memory));
    return o;
}
