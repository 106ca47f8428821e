/* The sampler: turns /proc and the per-user cgroups into snapshots.
 *
 * Level one, every sample_interval: per-user totals.  Where users have
 * cgroups they come from the cgroup counters (cost grows with users);
 * elsewhere from /proc, one pread per user process on a descriptor held
 * open since the process was first seen (a held descriptor also pins the
 * process's identity: once it exits, reads fail rather than reaching a
 * new process with the same pid).  For a single-threaded process that
 * descriptor is /proc/PID/schedstat, cheaper than stat: while its run time
 * stands still the process has not run, so its stat cannot have changed
 * and is not read.
 * Level two: processes, for users above half a violation threshold, and
 * every compute or forbidden process.
 * Every scan_interval a full sweep looks at every process again: uid
 * changes after setuid, new programs after exec (for those that ran).
 * New processes: where the proc connector reports forks, execs, uid
 * changes and exits (sampler_note_event), each sample looks at just those
 * pids; elsewhere each sample lists /proc for pids it does not know. */
#ifndef LOGINGUARD_SAMPLER_H
#define LOGINGUARD_SAMPLER_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgroup_counters.h"
#include "pidmarks.h"
#include "policy.h"
#include "proc_connector.h"
#include "procfs.h"
#include "snapshot.h"
#include "stopper.h"
#include "users.h"

struct tracked_proc {
    struct tracked_proc *next;  /* hash chain */
    pid_t pid;
    uint64_t start_time;        /* ticks after boot */
    uid_t uid;
    bool ignored;               /* below min_uid: never read again until the sweep */
    /* One descriptor held per process (see hold_descriptor): stat for a
     * multi-threaded process, schedstat for a single-threaded one. */
    int held_fd;                /* -1 when none is held */
    bool held_is_sched;
    uint64_t sched_runtime;     /* ns, from schedstat, when it is the held one */
    uint64_t swept_activity;    /* run time or ticks at the last sweep */
    uint64_t ticks;             /* utime + stime when last read */
    uint64_t read_at;           /* boottime usec of that reading */
    uint64_t rss_pages;
    uint64_t threads;
    pid_t ppid, session;
    char comm[COMM_LEN];
    char *exe;
    char *argv;                 /* NUL-separated, argv_len bytes */
    size_t argv_len;
    enum proc_class class;
    const char *rule;
    bool class_known;           /* classified since the last reload */
    double cpu;                 /* cores over the last interval */
    uint32_t generation;        /* last sample that saw it */
};

struct sampler_stats {
    uint64_t samples;
    uint64_t procs_read;        /* stat reads in the last sample */
    uint64_t users_read;        /* counter reads in the last sample */
    uint64_t held_fds;
};

struct sampler {
    char *proc_root;
    char *pressure_path;        /* PROC/pressure/memory */
    DIR *proc_dir;
    int proc_fd;
    struct tracked_proc **buckets;
    size_t bucket_count, proc_count;
    uint32_t generation;
    uint64_t last_sample;       /* boottime usec, 0 before the first */
    long hz, page_size;
    bool use_counters;
    struct user_counters counters;
    struct user_cache users;
    struct sampler_stats stats;
    /* New user processes not yet taken by sampler_take_new. */
    struct new_proc *new_procs;
    size_t new_count, new_capacity;
    /* The proc connector's news since the last sample. */
    struct pid_marks marks;
    bool events_live;   /* news come in: no /proc listing each sample */
    bool rescan;        /* news were lost: a full sweep at the next sample */
    /* List the per-user cgroups again at the next sample.  stale: they
     * may have changed (at start, at each sweep, when a group went);
     * changed: one was just made (by the daemon), so a group found then
     * is younger than an interval and all its counter says is new use. */
    bool counters_stale, counters_changed;
};

/* proc_root is "/proc" except in tests.  counter_version 0 means: use
 * the host's per-user cgroups if there are any, else /proc; -1 forces
 * /proc; 1 or 2 uses the given roots (benchmarks and tests). */
int sampler_init(struct sampler *s, const char *proc_root, int counter_version,
                 const char *cpu_root, const char *memory_root, const char *pids_root);
void sampler_free(struct sampler *s);

/* One sample into snap (cleared first). */
void sampler_sample(struct sampler *s, const struct policy *p, struct snapshot *snap);

/* The node's memory pressure from a PSI file: "some" avg10 in percent,
 * or -1 where the kernel has no PSI. */
double sampler_memory_pressure(const char *path);

/* The full sweep: re-read every known process's uid, comm, exe and argv. */
void sampler_sweep(struct sampler *s, const struct policy *p);

/* The process pid of user uid and its descendants of the same user, as
 * stop targets (never exempt-class processes: a session's sshd, say).
 * Returns how many; *out is malloc'd. */
size_t sampler_process_tree(const struct sampler *s, pid_t pid, uid_t uid,
                            struct stop_target **out);

/* Every known process of uid (for the terminals a notice goes to).
 * Returns how many; *out is malloc'd. */
size_t sampler_user_pids(const struct sampler *s, uid_t uid, pid_t **out);

/* User processes first seen since the last call (for the cgroupfs
 * backend, which moves them into their user's cgroup).  The array stays
 * the sampler's. */
struct new_proc {
    pid_t pid;
    uid_t uid;
    enum proc_class class;
};
size_t sampler_take_new(struct sampler *s, const struct new_proc **procs);

/* Whether the proc connector feeds sampler_note_event.  Turning it on
 * asks for a full sweep (at the next sample unless one comes first):
 * what ran before the subscription was never reported. */
void sampler_events_live(struct sampler *s, bool live);
/* One event from the proc connector, acted on at the next sample. */
void sampler_note_event(struct sampler *s, const struct pc_event *ev);
/* Events were lost (ENOBUFS): the next sample sweeps all of /proc. */
void sampler_note_lost(struct sampler *s);

/* A per-user cgroup was made (the cgroupfs backend): count it from the
 * next sample. */
void sampler_counters_changed(struct sampler *s);

/* After a reload: classes come from the new rules, names from NSS anew. */
void sampler_reclassify(struct sampler *s, const struct policy *p);

#endif
