/* The processes the sampler knows, keyed by pid, as it last read them.
 * The sampler fills the table; the tick hands it forward, read-only, to
 * what comes after the engine (struct observation): a person's processes
 * for the effectors are read from it (proc_table_fill), without asking
 * the sampler anything. */
#ifndef LOGINGUARD_KNOWN_PROCS_H
#define LOGINGUARD_KNOWN_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "observe/procfs.h"
#include "programs.h"
#include "snapshot.h"

struct tracked_proc {
    struct tracked_proc *next;  /* hash chain */
    uint64_t start_time;        /* ticks after boot */
    uint64_t sched_runtime;     /* ns, from schedstat, when it is the held one */
    uint64_t swept_activity;    /* run time or ticks at the last sweep */
    uint64_t ticks;             /* utime + stime when last read */
    uint64_t read_at;           /* boottime usec of that reading */
    uint64_t rss_pages;
    double cpu;                 /* cores over the last interval */
    char *foreign_code;         /* it does not run only its own code: why, and it is class none */
    const struct program *prog; /* what it runs (shared); NULL when unreadable */
    const char *rule;
    pid_t pid;
    uid_t uid;                  /* owner of /proc/PID: checked again before a signal */
    uid_t owner;                /* whom it counts for: uid, or its subuid range's owner */
    int held_fd;                /* -1 when none is held */
    uint32_t code_sweep;        /* the sweep it was last checked in */
    uint32_t threads;
    pid_t ppid, session;
    uint32_t generation;        /* last sample that saw it */
    uint32_t swept_inside;      /* last sweep that found it in its owner's cgroup */
    char comm[COMM_LEN];
    /* Small fields last, packed: a node's every process has one of these
     * (152 bytes, a 160-byte allocation). */
    enum proc_class class : 8;
    unsigned rule_parts : 8;    /* RULE_PART_*: what of the rule matched */
    bool ignored : 1;           /* owner below min_uid: never read again until the sweep */
    /* One descriptor held per process (see hold_descriptor): stat for a
     * multi-threaded process, schedstat for a single-threaded one. */
    bool held_is_sched : 1;
    bool argv_pending : 1;      /* its command line is asked for */
    bool argv_blocked : 1;      /* reading it stalled: judged without it, not asked again */
    bool outside : 1;           /* counters: not in its owner's cgroup, read from /proc */
    bool suspect : 1;           /* left its owner's cgroup once: its place is read every sample */
    bool stat_due : 1;          /* read stat at the next sample even if it has not run */
    bool zombie : 1;            /* ended, not yet reaped: never runs again */
    bool arrived : 1;           /* moved into its owner's cgroup holding ARRIVED_MIN or more */
    /* An exempt program's check that it runs only its own code
     * (code_check.h): asked when it uses CPU, once a sweep. */
    bool code_pending : 1;
    bool code_known : 1;
    bool job_by_tree : 1;       /* slurm_job from its parent's, not from its cgroup */
    /* The Slurm job it is part of (observe/sampler_jobs.c), 0: none. */
    uint32_t slurm_job;
};
_Static_assert(sizeof(struct tracked_proc) <= 152, "tracked_proc grew past a 160-byte chunk");

/* A user process first seen (by a sample): for the cgroupfs backend,
 * which moves it into its user's cgroup. */
struct new_proc {
    pid_t pid;
    uint64_t start_time;
    uid_t owner;        /* the person whose cgroup it belongs in */
    enum proc_class class;
    bool outside;       /* counters: it is not in its owner's cgroup */
};

struct known_procs {
    struct tracked_proc **buckets;
    size_t bucket_count, count;
};

/* The entry for pid, or NULL. */
struct tracked_proc *known_lookup(const struct known_procs *k, pid_t pid);
/* t (not in the table) into it. */
void known_insert(struct known_procs *k, struct tracked_proc *t);
/* t out of the table (the caller frees it). */
void known_remove(struct known_procs *k, struct tracked_proc *t);
void known_free(struct known_procs *k);

/* Every entry t of the table (the body may not remove t). */
#define KNOWN_FOR_EACH(k, t) \
    for (size_t known_b_ = 0; known_b_ < (k)->bucket_count; known_b_++) \
        for (struct tracked_proc *t = (k)->buckets[known_b_]; t; t = t->next)

#endif
