/* What the sampler saw at one moment: per-user totals, and processes for
 * the users worth a closer look.  The engine reads nothing else. */
#ifndef LOGINGUARD_SNAPSHOT_H
#define LOGINGUARD_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rules.h"

#define COMM_LEN 16 /* the kernel's TASK_COMM_LEN, including the NUL */

/* At most this much of a command line is kept for a process (what events,
 * notices and the suggested sbatch line show); the rest is known by its
 * length and digest.  A user chooses the argv: its cost must not be theirs
 * to set. */
#define ARGV_KEEP 4096

struct proc_sample {
    pid_t pid;
    uint64_t start_time;     /* ticks after boot: (pid, start_time) is the identity */
    uid_t uid;
    pid_t ppid;
    pid_t session;
    char comm[COMM_LEN];
    char *exe;               /* real path, or NULL if unreadable */
    bool exe_trusted;        /* exe means what it says (programs.h) */
    char *argv;              /* the first argv_len bytes (at most ARGV_KEEP) of the command
                                line, NUL-separated, hostile bytes kept; NULL when unread */
    size_t argv_len;
    size_t argv_total;       /* bytes in the whole command line (>= argv_len) */
    char argv_sha256[65];    /* hex SHA-256 of the whole command line; "" when unknown */
    bool argv_withheld;      /* not to be read: a read of it, or of its owner's, stalled */
    double cpu;              /* cores, over the last interval */
    uint64_t rss;            /* bytes */
    enum proc_class class;
    const char *rule;        /* the matching rule's name, or NULL */
    unsigned rule_parts;     /* RULE_PART_* (rules.h): which parts of it matched */
    /* A rule made it exempt, but it runs code not its own (code_check.h):
     * why, and it is class none; NULL otherwise. */
    char *foreign_code;
    /* The Slurm job it is part of (slurm_job.h; SLURM_JOB_UNKNOWN: one
     * whose id is not known), 0 for none.  Slurm's: never judged. */
    uint32_t slurm_job;
};

struct user_sample {
    uid_t uid;
    char name[64];           /* "" if the uid has no passwd entry */
    bool exempt_group;       /* member of an [exempt] group (resolved at the edge) */
    /* The user directory has not said who this is yet (name, groups): not
     * judged until it has (at most its stall deadline, directory.h). */
    bool directory_pending;
    double cpu;              /* cores, over the last interval: everything the user ran */
    uint64_t memory;         /* bytes, anon + mapped file */
    /* Counters only: the resident memory of processes moved into the
     * user's cgroup with memory charged where they were before (cgroup
     * v1 leaves it there): memory is at least this. */
    uint64_t arrived_memory;
    /* The part of cpu and memory that exempt-class programs used: known
     * where the user's processes were read (detailed, or /proc sampling),
     * else 0.  The engine forgives it up to [classes] exempt_cpu/memory. */
    double exempt_cpu;
    uint64_t exempt_memory;
    uint64_t tasks;
    bool detailed;           /* procs below hold all of this user's processes */
    /* What the user runs in Slurm jobs on this node, apart: Slurm limits
     * it, so it is none of cpu, memory and procs.  How many jobs, and
     * their cores and resident memory as of the last sweep. */
    uint32_t slurm_jobs;
    double slurm_cpu;
    uint64_t slurm_memory;
};

struct snapshot {
    uint64_t now;            /* realtime usec */
    uint64_t interval;       /* usec the rates cover */
    double memory_pressure;  /* PSI memory "some" avg10, percent; < 0 unknown */
    struct user_sample *users;
    size_t user_count, user_capacity;
    /* Processes of detailed users, plus every process of class compute or
     * forbidden whatever its user; never a Slurm job's. */
    struct proc_sample *procs;
    size_t proc_count, proc_capacity;
};

void snapshot_clear(struct snapshot *s);
void snapshot_free(struct snapshot *s);
struct user_sample *snapshot_add_user(struct snapshot *s, uid_t uid);
struct proc_sample *snapshot_add_proc(struct snapshot *s);
struct user_sample *snapshot_find_user(const struct snapshot *s, uid_t uid);

#endif
