#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "notice_build.h"
#include "shellquote.h"
#include "suggest.h"
#include "units.h"
#include "util.h"

/* The command line shown for reading: enough to recognise it. */
#define COMMAND_SHOWN 160

bool notice_kind_for(const struct policy *p, const struct decision *x, enum notice_kind *kind)
{
    switch (x->kind) {
    case DECISION_VIOLATION: {
        const struct level *l = &p->levels[x->level_after - 1];
        *kind = l->stop ? NOTICE_STOPPED
                : l->cpu > 0 || l->memory > 0 ? NOTICE_THROTTLED
                                              : NOTICE_WARNED;
        return true;
    }
    case DECISION_FORBIDDEN:
        *kind = NOTICE_FORBIDDEN;
        return true;
    case DECISION_COMPUTE:
    case DECISION_MEMORY_OVER:
        *kind = NOTICE_STOPPED;
        return true;
    case DECISION_EXPIRED:
        *kind = NOTICE_RELEASED;
        return true;
    default:
        return false;
    }
}

struct decision notice_standing_decision(const struct user_state *us)
{
    return (struct decision){
        .kind = DECISION_VIOLATION,
        .uid = us->uid,
        .level_before = us->level > 0 ? us->level - 1 : 0,
        .level_after = us->level,
        .until = us->until,
        .reason = violation_reason_name(us->last_reason),
        .cpu = us->last_cpu,
        .memory = us->last_memory,
        .window = us->last_window,
    };
}

const struct proc_sample *notice_process_for(const struct decision *x, const struct snapshot *snap,
                                             enum notice_kind kind)
{
    if (!x->proc_count)
        return NULL;
    if (kind == NOTICE_WARNED || kind == NOTICE_THROTTLED) {
        for (size_t i = 0; i < x->proc_count; i++) {
            const struct proc_sample *ps = &snap->procs[x->procs[i]];
            if (ps->argv_len)
                return ps;
        }
    }
    return &snap->procs[x->procs[0]];
}

static void add(struct notice_values *v, const char *name, bool safe, char *value)
{
    if (v->count == NOTICE_FIELD_MAX) {
        free(value);
        return;
    }
    v->fields[v->count++] = (struct notice_field){name, value, safe};
}

static __attribute__((format(printf, 3, 4))) void addf(struct notice_values *v, const char *name,
                                                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *value;
    if (vasprintf(&value, fmt, ap) < 0)
        value = xstrdup("");
    va_end(ap);
    add(v, name, false, value);
}

static char *cores_text(double cores)
{
    return cores == 1 ? xstrdup("1 core") : xasprintf("%.3g cores", cores);
}

static char *size_text(uint64_t bytes)
{
    char buf[32];
    format_size(bytes, buf, sizeof(buf));
    return xstrdup(buf);
}

/* HH:MM on the node's clock, in its time zone: what the user's prompt shows. */
static char *clock_text(uint64_t usec)
{
    if (!usec)
        return xstrdup("");
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    char buf[16];
    localtime_r(&t, &tm);
    strftime(buf, sizeof(buf), "%H:%M", &tm);
    return xstrdup(buf);
}

/* What was done, as the shipped templates use it in a sentence: "your
 * processes have been {action} until ...", "What was done: {action}." */
static char *action_text(const struct notice_facts *f, const struct level *l)
{
    char grace[32];
    format_duration(f->policy->stop_grace, grace, sizeof(grace));
    switch (f->kind) {
    case NOTICE_WARNED:
        return xstrdup("warned");
    case NOTICE_THROTTLED:
        return xstrdup("throttled");
    case NOTICE_STOPPED:
        if (f->decision->kind == DECISION_MEMORY_OVER && l) {
            char held[32], allowed[32], window[32];
            format_size(f->decision->memory, held, sizeof(held));
            format_size(l->memory, allowed, sizeof(allowed));
            format_duration(f->decision->window, window, sizeof(window));
            return xasprintf("stopped with SIGTERM, then SIGKILL if still running after %s, "
                             "as the largest of your processes: together they held %s of "
                             "memory for %s, more than the %s your level %s allows", grace, held,
                             window, allowed, l->name);
        }
        return xasprintf("stopped with SIGTERM, then SIGKILL if still running after %s", grace);
    case NOTICE_FORBIDDEN:
        return xasprintf("stopped at once with SIGTERM, then SIGKILL if still running after %s",
                         grace);
    case NOTICE_RELEASED:
        return l ? xasprintf("they came with level %s", l->name) : xstrdup("");
    case NOTICE_STANDING:
    case NOTICE_LOGIN_REFUSED:
        return xstrdup(l && (l->cpu > 0 || l->memory > 0) ? "throttled" : "watched");
    default:
        return xstrdup("");
    }
}

/* The sampler keeps a command line without the kernel's final NUL, so
 * that "prog\0" is prog with an empty last argument; the quoting takes a
 * final NUL as the end of the last word, as the kernel writes it.  A
 * command line kept whole is given back its NUL (the byte after it). */
static size_t argv_bytes(const struct proc_sample *ps)
{
    return ps->argv_len + (ps->argv_total <= ps->argv_len);
}

static void add_program(struct notice_values *v, const struct notice_facts *f)
{
    const struct proc_sample *ps = f->proc;
    if (!ps) {
        add(v, "program", false, xstrdup(""));
        add(v, "command", false, xstrdup(""));
        add(v, "pid", false, xstrdup(""));
        return;
    }
    add(v, "program", false, xstrdup(ps->comm));
    bool elided;
    char *shown = ps->argv_len
                      ? shell_quote_argv(ps->argv, argv_bytes(ps), COMMAND_SHOWN, &elided)
                      : xstrdup(ps->comm);
    add(v, "command", false, shown);
    addf(v, "pid", "%d", (int)ps->pid);
}

bool notice_suggest_input(const struct notice_facts *f, const struct slurm_target *target,
                          struct suggest_input *in)
{
    const struct policy *p = f->policy;
    const struct decision *x = f->decision;
    const struct proc_sample *ps = f->proc;
    if (!ps || !ps->argv_len || f->kind == NOTICE_RELEASED)
        return false;
    *in = (struct suggest_input){
        .cmdline = ps->argv,
        .cmdline_len = argv_bytes(ps),
        .cores = x->cpu > ps->cpu ? x->cpu : ps->cpu,
        .memory = x->memory > ps->rss ? x->memory : ps->rss,
        .runtime_usec = f->runtime_usec,
        .cwd = f->cwd,
        .batch_partition = p->batch_partition ? p->batch_partition : "",
        .interactive_partition = p->interactive_partition ? p->interactive_partition : "",
    };
    if (target) {
        in->batch_partition = in->interactive_partition = target->partition;
        in->max_time = target->max_time;
        in->max_cpus = target->max_cpus;
        in->max_memory = target->max_memory;
    }
    return true;
}

static void add_suggestions(struct notice_values *v, const struct notice_facts *f)
{
    struct suggest_input batch, interactive;
    if (!notice_suggest_input(f, f->batch, &batch) ||
        !notice_suggest_input(f, f->interactive ? f->interactive : f->batch, &interactive)) {
        add(v, "sbatch", true, xstrdup(""));
        add(v, "salloc", true, xstrdup(""));
        return;
    }
    add(v, "sbatch", true, suggest_sbatch(&batch));
    add(v, "salloc", true, suggest_salloc(&interactive));
}

void notice_values_build(struct notice_values *v, const struct notice_facts *f)
{
    const struct policy *p = f->policy;
    const struct decision *x = f->decision;
    memset(v, 0, sizeof(*v));
    int level = x->level_after > 0 ? x->level_after : x->level_before;
    const struct level *l = level > 0 && (size_t)level <= p->level_count ? &p->levels[level - 1] : NULL;
    /* Limits and their end only where a level was just entered: a
     * program stopped by a rule changes no limit, and the lines that
     * speak of them are then left out of the notice. */
    const struct level *entered = x->kind == DECISION_VIOLATION ? l : NULL;
    char *limit_cpu = !entered ? xstrdup("")
                      : entered->cpu > 0 ? cores_text(entered->cpu)
                                         : xstrdup("no CPU limit");
    char *limit_memory = !entered ? xstrdup("")
                         : entered->memory ? size_text(entered->memory)
                                           : xstrdup("no limit");
    char *until = clock_text(entered ? x->until : 0);
    char duration[32];
    format_duration(x->window, duration, sizeof(duration));

    add(v, "user", false, xstrdup(f->user));
    add(v, "host", false, xstrdup(f->host));
    add_program(v, f);
    add(v, "cores", false, xasprintf("%.1f", x->cpu > 0 || !f->proc ? x->cpu : f->proc->cpu));
    /* The program's own memory where the decision's is the user's. */
    bool own = f->proc && (!x->memory || x->kind == DECISION_MEMORY_OVER);
    add(v, "memory", false, size_text(own ? f->proc->rss : x->memory));
    add(v, "duration", false, xstrdup(duration));
    add(v, "action", false, action_text(f, l));
    add(v, "level", false, xstrdup(l ? l->name : ""));
    add(v, "until", false, until);
    add(v, "limit_cpu", false, limit_cpu);
    add(v, "limit_memory", false, limit_memory);
    add_suggestions(v, f);
    add(v, "docs_url", false, xstrdup(p->docs_url ? p->docs_url : ""));
    add(v, "rule", false, xstrdup(x->kind == DECISION_FORBIDDEN || x->kind == DECISION_COMPUTE
                                       ? (x->reason ? x->reason : "")
                                       : ""));
}

void notice_values_set(struct notice_values *v, const char *name, char *value, bool safe)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->fields[i].name, name) == 0) {
            free((char *)v->fields[i].value);
            v->fields[i] = (struct notice_field){v->fields[i].name, value, safe};
            return;
        }
    add(v, name, safe, value);
}

void notice_values_free(struct notice_values *v)
{
    for (size_t i = 0; i < v->count; i++)
        free((char *)v->fields[i].value);
    v->count = 0;
}
