/* A person's processes as the sampler last read them: what the effectors
 * are given (the tree of a process to stop, the terminals to write a
 * notice to), filled from the table the tick hands forward
 * (observe/known_procs.h), so that they never reach into the sampler. */
#ifndef LOGINGUARD_PROC_TABLE_H
#define LOGINGUARD_PROC_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "enforce/stopper.h"
#include "observe/known_procs.h"
#include "rules.h"
#include "snapshot.h"

struct table_proc {
    pid_t pid, ppid;
    uint64_t start_time;        /* ticks after boot */
    uid_t uid;                  /* owner of /proc/PID: checked again before a signal */
    enum proc_class class;
    uint32_t slurm_job;         /* the Slurm job it is part of, 0: none */
    char comm[COMM_LEN];
    char exe[256];              /* for events; may be cut short; "" unknown */
};

struct proc_table {
    struct table_proc *procs;
    size_t count, capacity;
};

struct table_proc *proc_table_add(struct proc_table *t);
/* Every known process of person owner into out (emptied first). */
void proc_table_fill(struct proc_table *out, const struct known_procs *k, uid_t owner);
void proc_table_free(struct proc_table *t);

/* The process pid and its descendants in t, as stop targets: never
 * exempt-class processes (a session's sshd, say), nor a Slurm job's
 * (Slurm's, not judged here).  Returns how many; *out is malloc'd. */
size_t proc_table_tree(const struct proc_table *t, pid_t pid, struct stop_target **out);

/* Every pid in t; *out is malloc'd. */
size_t proc_table_pids(const struct proc_table *t, pid_t **out);

#endif
