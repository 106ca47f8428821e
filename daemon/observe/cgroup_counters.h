/* Per-user cgroup counters: the cheap first level of sampling.  Where
 * every user has a cgroup (systemd's user-UID.slice, or the cgroupfs
 * backend's user-UID), one sample reads three small files per user
 * instead of one per process.  Descriptors stay open between samples. */
#ifndef LOGINGUARD_CGROUP_COUNTERS_H
#define LOGINGUARD_CGROUP_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct user_usage {
    uint64_t cpu_usec;   /* cumulative */
    uint64_t memory;     /* anon + mapped file, bytes */
    uint64_t tasks;
};

struct user_cgroup {
    uid_t uid;
    int cpu_fd;       /* v2 cpu.stat, v1 cpuacct.usage */
    int memory_fd;    /* memory.stat, or -1 */
    int pids_fd;      /* pids.current, or -1 */
    int procs_dirfd;  /* the cpu (v1) or only (v2) directory, for cgroup.procs */
    uint64_t last_cpu_usec;   /* for the sampler's rate */
    bool have_last;
    struct user_usage usage;  /* the last reading of memory and tasks, with the CPU then */
    bool have_usage;
    unsigned usage_kept;      /* samples since, with a little CPU used (counters_read) */
    bool seen;
    /* counters_sample's: when the counter was last read (boottime usec),
     * whether it stood still then, and whether the last sample passed it over. */
    uint64_t last_read_at;
    bool stood_still, passed_over;
};

/* Where the per-user cgroups are. */
struct counter_roots {
    int version;              /* 1 or 2 */
    const char *cpu;          /* directories holding user-UID[.slice]: v1 cpuacct (or the */
    const char *memory;       /* one v2 tree), memory and pids (v1 only; NULL if absent) */
    const char *pids;
    const char *cgroup_path;  /* cpu's path in its hierarchy, as /proc/PID/cgroup shows it;
                                 NULL: unknown (no process is then said to be outside) */
};

struct user_counters {
    int version;      /* 1 or 2 */
    char *cgroup_path;
    int cpu_root;     /* directory fds holding the user-UID[.slice] directories */
    int memory_root;  /* v1 only; -1 otherwise or when absent */
    int pids_root;    /* v1 only; -1 otherwise or when absent */
    struct user_cgroup *groups;
    size_t count, capacity;
};

/* version 2: roots->cpu is the directory with the user cgroups (e.g.
 * /sys/fs/cgroup/user.slice), memory and pids NULL.  version 1: one root
 * per controller (cpuacct, memory, pids), each may be NULL except cpu.
 * Returns 0, or -1 if the cpu root cannot be opened. */
int counters_open(struct user_counters *c, const struct counter_roots *roots);

/* Whether a process whose /proc/PID/cgroup reads text (len bytes) is in
 * uid's cgroup or below it (cpuacct's line on v1, the 0:: line on v2).
 * true when the counters' own path is unknown. */
bool counters_holds(const struct user_counters *c, const char *text, size_t len, uid_t uid);
void counters_close(struct user_counters *c);

/* Find user cgroups that appeared, forget those that went: a listing of
 * the parent directory, so the sampler does it only when something may
 * have changed.  groups stay sorted by uid. */
void counters_discover(struct user_counters *c);
struct user_cgroup *counters_find(struct user_counters *c, uid_t uid);

/* Read one group's counters.  Returns 0 or -1 (the group is gone). */
int counters_read(const struct user_counters *c, struct user_cgroup *g, struct user_usage *out);
/* One sample of g at now (boottime usec; interval: the sampler's, for a
 * group never read): its usage, and *cpu in cores since its last reading.
 * A group whose counter stood still at its last reading is passed over
 * every other sample (0: *out is that reading, *cpu 0): the counter is
 * cumulative, so what it used meanwhile counts in full at the next
 * reading, at most one sample late, and one that used any CPU is read at
 * every sample.  On a node of mostly idle users that halves the reads (a
 * pread of a kernfs file each, most of a sample's cost at 500 users).
 * 1 when read, -1 when the group is gone. */
int counters_sample(const struct user_counters *c, struct user_cgroup *g, uint64_t now,
                    uint64_t interval, struct user_usage *out, double *cpu);

/* The group's task count read now (pids.current; counters_read keeps the
 * last one while the CPU counter stands still, and a process can end
 * without using CPU), or -1 where the pids controller is absent. */
int64_t counters_tasks_now(const struct user_cgroup *g);

/* The group's memory read now (see memory_of), 0 where unreadable. */
uint64_t counters_memory_now(const struct user_counters *c, const struct user_cgroup *g);

/* The pids in the group and every group below it; *pids is malloc'd. */
size_t counters_pids(const struct user_cgroup *g, pid_t **pids);

/* Parse "user-1234.slice" or "user-1234"; returns 0 and the uid, or -1. */
int counters_parse_name(const char *name, uid_t *uid);

/* Values from the text of cpu.stat / memory.stat: the number after "key ". */
int counters_stat_value(const char *text, size_t len, const char *key, uint64_t *value);

/* counters_open on the per-user cgroups this host keeps below
 * cgroup_root ("/sys/fs/cgroup"), v2's user.slice or v1's per-controller
 * ones.  -1 when there are none. */
int counters_open_host(struct user_counters *c, const char *cgroup_root);

#endif
