/* loginguardctl why PID: in words, why the daemon acts or does not act
 * on one process.  Pure: everything it needs is gathered at the edge
 * (why.c reads /proc and the daemon's tables) and handed in, so the very
 * sentences a user reads are unit-tested on synthetic facts. */
#ifndef LOGINGUARD_WHY_EXPLAIN_H
#define LOGINGUARD_WHY_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "policy.h"
#include "rules.h"
#include "snapshot.h"

/* The first that applies, in this order, is the verdict. */
enum why_verdict {
    WHY_NO_PROCESS,     /* no process has that pid */
    WHY_NOT_JUDGED,     /* root's, or its owner is below min_uid */
    WHY_JOB,            /* part of a Slurm job: Slurm's (proc->slurm_job) */
    WHY_PROTECTED,      /* [exempt] users or groups, or a temporary exemption */
    WHY_FORBIDDEN,      /* class forbidden: stopped on sight */
    WHY_COMPUTE_ACTED,  /* class compute, above its threshold past its grace */
    WHY_COMPUTE_GRACE,  /* class compute, above its threshold, in its grace */
    WHY_LIMITED,        /* its owner's level has limits on now */
    WHY_WATCHED,        /* its owner is in a run above a threshold, not yet a window long */
    WHY_BELOW,          /* below every threshold */
    WHY_NOT_SAMPLED,    /* started after the last sample: judged at the next one */
};

/* What the edge knows about the process and its owner.  Every pointer
 * may be NULL where noted; strings are as the system gave them (hostile
 * bytes included: the sentences show them escaped). */
struct why_facts {
    const struct policy *policy;
    uint64_t now;                    /* the last sample's time, realtime usec */
    bool found;                      /* /proc/PID exists */
    pid_t pid;
    uint64_t start_time;             /* ticks after boot */
    uid_t uid;                       /* owner of /proc/PID */
    uid_t owner;                     /* whom it counts for (its subuid range's owner) */
    const char *user_name;           /* the owner's; "" or NULL when unknown */
    const char *comm;
    bool in_exempt_group;            /* the owner is in an [exempt] group, as the daemon knows */
    bool directory_pending;          /* the directory has not said who the owner is yet */
    const char *exempt_group;        /* which one, or NULL */
    const char *exempt_reason;       /* why a temporary exemption was given, or NULL */
    const struct proc_sample *proc;  /* as the sampler last saw it; NULL: not yet */
    const struct rule *rule;         /* the rule proc->rule names, or NULL */
    const struct user_sample *user;  /* the owner at the last sample, or NULL */
    const struct user_state *state;  /* the engine's word on the owner, or NULL */
    const struct proc_watch *watch;  /* the engine's watch on the process, or NULL */
};

#define WHY_LINES 4
#define WHY_LINE_MAX 600

struct why_answer {
    enum why_verdict verdict;
    /* The verdict's sentence first, then what else bears on the process
     * (its class, its owner's usage).  Text shown escaped (utf8.h). */
    char lines[WHY_LINES][WHY_LINE_MAX];
    size_t line_count;
};

void why_explain(const struct why_facts *f, struct why_answer *out);
const char *why_verdict_name(enum why_verdict v);

/* The answer and its facts as the reply's "why" object: the sentences,
 * and the structured fields (loginguard-control(7)). */
json_t *why_json(const struct why_facts *f, const struct why_answer *a);

#endif
