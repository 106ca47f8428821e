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
 * Level two: processes, for the users the caller marks worth a closer
 * look (classify.h decides), and every process of a class the scope
 * follows (compute, forbidden).
 * Every scan_interval a full sweep looks at every process again: uid
 * changes after setuid, new programs after exec (for those that ran).
 * New processes: where the proc connector reports forks, execs, uid
 * changes and exits (sampler_note_event), each sample looks at just those
 * pids; elsewhere each sample lists /proc for pids it does not know.
 *
 * The sampler applies no policy: what it looks at is its scope (whose
 * processes, how often), and what a process runs is judged by the scope's
 * judge (judge.h), once per program, from its real executable and the
 * first ARGV_KEEP bytes of its command line; the command line is read by
 * argv_reader (a read of another process's memory can stall) and not
 * kept.  A process counts for the person who
 * owns it: subordinate uids of a rootless container count for the owner
 * of their /etc/subuid range.  With counters, a process outside its
 * owner's cgroup (cron, at, systemd-run, a delegated subtree) is read
 * from /proc and added to its owner's totals.  A process of a Slurm job
 * (sampler_jobs.c) is Slurm's: it counts for no one, is reported as no
 * snapshot process and is never outside; it is read at each sweep, for
 * its user's Slurm figures (user_sample.slurm_*). */
#ifndef LOGINGUARD_SAMPLER_H
#define LOGINGUARD_SAMPLER_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/environment.h"
#include "judge.h"
#include "observe/argv_describe.h"
#include "observe/argv_reader.h"
#include "observe/cgroup_counters.h"
#include "observe/directory.h"
#include "observe/known_procs.h"
#include "observe/pidmarks.h"
#include "observe/proc_connector.h"
#include "observe/procfs.h"
#include "observe/shm_fd_walk.h"
#include "observe/shm_held.h"
#include "observe/subuid.h"
#include "observe/taskstats.h"
#include "snapshot.h"

/* Execs judged as they are reported, per drain of the connector (every
 * 100 ms at most): a user who execs faster costs no more, and their
 * later execs are judged at the sample, as every exec was before. */
#define EXEC_JUDGE_MAX 64

/* Descriptors held for processes (see hold_descriptor): never more than
 * the daemon's limit less FD_RESERVE, kept for everything else it opens
 * (sockets, state, the trace, control connections, notice children, a
 * stat opened by path), and at most HELD_PER_OWNER for one person.  Past
 * either, a process's stat is opened by path at each read: it still
 * counts, at a few more system calls.  A zombie holds none. */
#define FD_RESERVE 512
#define HELD_PER_OWNER 2048

/* At most this many of one person's exempt programs are checked for code
 * not their own in a sweep (each check may cost milliseconds: make
 * bench); the rest are not taken on trust until the next. */
#define CODE_CHECKS_PER_OWNER 32

/* A process moved into its owner's cgroup (by the daemon) with this much
 * resident memory or more: that memory stays charged where it was made,
 * so its resident size is read each sample (see arrived_memory). */
#define ARRIVED_MIN (16ULL << 20)


struct sampler_stats {
    uint64_t samples;
    uint64_t procs_read;        /* stat reads in the last sample */
    uint64_t users_read;        /* counter reads in the last sample */
    uint64_t held_fds;
    uint64_t held_refused;      /* holds refused at a cap, ever */
    uint64_t argv_reads;        /* command lines asked for, ever */
};

/* Descriptors held for one person's processes. */
struct owner_held {
    uid_t owner;
    uint32_t held;
};

/* Checks of one person's exempt programs asked in this sweep. */
struct owner_checks {
    uid_t owner;
    uint32_t checks;
};

/* CPU of processes that ended since the last sample and was not read
 * before they ended, for their owner. */
struct exit_credit {
    uid_t owner;
    uint64_t cpu_usec;
};

/* What one person runs in Slurm jobs on the node, as of the last sweep. */
struct slurm_job_usage {
    uid_t owner;
    uint32_t jobs;
    double cpu;                 /* cores */
    uint64_t memory;            /* resident bytes */
};

/* Index of each uid's user_sample in the snapshot, open addressing. */
struct uid_index {
    uid_t *uids;
    size_t *slots;
    size_t size;
};

/* What the sampler looks at and how often: not the policy.  The sampler
 * measures and reports; what a process runs is judged by scope.judge. */
struct sampler_scope {
    uid_t min_uid;              /* processes of uids below are never read */
    uint64_t sample_interval;   /* usec */
    uint64_t scan_interval;     /* usec: the full sweep */
    /* Bit 1 << class: processes of these classes are read and reported
     * at every sample, whoever runs them (compute and forbidden ones). */
    unsigned followed_classes;
    struct judge *judge;        /* the caller's, for as long as the sampler lives */
};

struct sampler {
    char error[300];            /* why sampler_init failed */
    struct sampler_scope scope;
    const struct environment *env;  /* the caller's, for as long as the sampler lives */
    char *pressure_path;        /* PROC/pressure/memory */
    DIR *proc_dir;
    int proc_fd;
    struct shm_held shm;        /* /proc path: shared memory no resident size shows */
    struct fd_walk fd_walk;     /* /proc path: the part held only through descriptors */
    size_t fd_out;              /* its requests out (FD_WALK_OUT at most)... */
    size_t fd_turn;             /* ...and whose walk asks next */
    struct known_procs known;   /* every process read, by pid */
    /* Counters: the processes read at every sample whatever their user's
     * counters say (strays, arrived ones, compute and forbidden programs),
     * by pid.  Listed again from every process only when one may have
     * joined them (watch_dirty): a sample of a quiet node with 10,000
     * processes does not walk them all. */
    pid_t *watch;
    size_t watch_count, watch_capacity;
    bool watch_dirty;
    uint32_t generation;
    uint32_t sweeps;            /* full sweeps so far */
    uint64_t last_sample;       /* boottime usec, 0 before the first */
    long hz, page_size;
    bool use_counters;
    struct user_counters counters;
    struct directory *directory; /* names and [exempt] groups (the daemon's; NULL: none) */
    struct argv_reader argv;
    struct subuid_map subuids;
    bool subuids_loaded;        /* /etc/subuid was read anew (for the daemon to say) */
    dev_t mnt_ns_dev;           /* the daemon's mount namespace: a process in */
    ino_t mnt_ns_ino;           /* another one may name paths as it likes */
    struct blocked_argv *blocked;
    size_t blocked_count, blocked_capacity;
    /* Owners with a process whose command line stalled its reader: their
     * command lines are not asked for until none of those is left (each
     * such read may hold a reader process for as long as its owner
     * likes).  Sorted; made anew at each sweep. */
    uid_t *withheld;
    size_t withheld_count, withheld_capacity;
    struct owner_held *held_by;     /* sorted by owner */
    size_t held_by_count, held_by_capacity;
    uint64_t held_max;              /* the limit less FD_RESERVE */
    struct owner_checks *checks_by; /* sorted by owner; emptied at each sweep */
    size_t checks_by_count, checks_by_capacity;
    struct exit_credit *credits;    /* sorted by owner */
    size_t credit_count, credit_capacity;
    struct slurm_job_usage *slurm;        /* sorted by owner; made anew at each sweep */
    size_t slurm_count, slurm_capacity;
    uint64_t boot_realtime_usec;    /* to compare taskstats' start times with stat's */
    struct sampler_stats stats;
    struct uid_index index;     /* of the snapshot last sampled, for sampler_look_closer */
    /* New user processes not yet taken by sampler_take_new. */
    struct new_proc *new_procs;
    size_t new_count, new_capacity;
    /* The proc connector's news since the last sample. */
    struct pid_marks marks;
    /* Execs reported since the loop last asked sampler_forbidden_exec:
     * at most EXEC_JUDGE_MAX, the rest wait for the sample. */
    pid_t execs[EXEC_JUDGE_MAX];
    size_t exec_count;
    /* The same for uid changes (cron, at, systemd-run taking a user's
     * uid): sampler_arrived_outside. */
    pid_t uid_changes[EXEC_JUDGE_MAX];
    size_t uid_change_count;
    bool events_live;   /* news come in: no /proc listing each sample */
    bool rescan;        /* news were lost: a full sweep at the next sample */
    /* List the per-user cgroups again at the next sample.  stale: they
     * may have changed (at start, at each sweep, when a group went);
     * changed: one was just made (by the daemon), so a group found then
     * is younger than an interval and all its counter says is new use. */
    bool counters_stale, counters_changed;
};

/* /proc and the clocks are env's (which must outlive the sampler).
 * roots NULL: the per-user cgroups below env->cgroup if there are any,
 * else /proc; roots->version 0: /proc only; else the given roots (the
 * cgroupfs backend's, benchmarks, tests).  -1 with s->error saying why. */
int sampler_init(struct sampler *s, const struct environment *env,
                 const struct counter_roots *roots, const struct sampler_scope *scope);
void sampler_free(struct sampler *s);

/* One sample into snap (cleared first): every user's totals, and the
 * compute and forbidden processes whoever runs them.  Then, once the
 * users worth a closer look are marked (classify_choose_detailed),
 * sampler_look_closer reads their processes and adds them to snap (all
 * of each such user's, with the class the rules gave each: see
 * observe.h for the whole step). */
void sampler_sample(struct sampler *s, struct snapshot *snap);
void sampler_look_closer(struct sampler *s, struct snapshot *snap);

/* The node's memory pressure from a PSI file: "some" avg10 in percent,
 * or -1 where the kernel has no PSI. */
double sampler_memory_pressure(const char *path);

/* The full sweep: re-read every known process's uid, comm, exe and argv. */
void sampler_sweep(struct sampler *s);


/* Command lines that came back between samples (the reader's descriptor,
 * argv_reader_fd(&s->argv), polled readable, or its deadline passed). */
void sampler_take_argv(struct sampler *s);

/* The backend moved pid into its owner's cgroup. */
void sampler_adopted(struct sampler *s, pid_t pid);
/* Another reader (argv_describe.h) stalled on this process's command
 * line: it is not asked about again, nor its owner's while it lives. */
void sampler_argv_stalled(struct sampler *s, pid_t pid, uint64_t start_time);

/* Processes whose command line could not be read in time since the last
 * call (struct blocked_argv, argv_describe.h); the array stays the
 * sampler's. */
size_t sampler_take_blocked(struct sampler *s, const struct blocked_argv **out);

/* User processes first seen since the last call (for the cgroupfs
 * backend, which moves them into their user's cgroup).  The array stays
 * the sampler's. */
size_t sampler_take_new(struct sampler *s, const struct new_proc **procs);

/* Whether the proc connector feeds sampler_note_event.  Turning it on
 * asks for a full sweep (at the next sample unless one comes first):
 * what ran before the subscription was never reported. */
void sampler_events_live(struct sampler *s, bool live);
/* One event from the proc connector, acted on at the next sample. */
void sampler_note_event(struct sampler *s, const struct pc_event *ev);
/* Whether an exec reported since the last call started a forbidden
 * program, by its executable and name (the rules' verdict is kept per
 * program, so this is a few reads a process): the daemon then samples
 * early, and stops it there.  A rule that needs the command line judges
 * at the sample, which reads it. */
bool sampler_forbidden_exec(struct sampler *s);
/* Whether a process that changed uid since the last call now runs as a
 * person outside their cgroup (with look; without, the news is only
 * dropped): a job cron, at or systemd-run has just started for them.
 * The daemon then samples early, and moves it there, before it has
 * made much memory that would stay charged where it is. */
bool sampler_arrived_outside(struct sampler *s, bool look);
/* Events were lost (ENOBUFS): the next sample sweeps all of /proc. */
void sampler_note_lost(struct sampler *s);
/* A process ended, with all the CPU it used (taskstats): what of it no
 * sample read counts at the next sample, for its owner. */
void sampler_note_exit(struct sampler *s, const struct ts_exit *e);

/* A per-user cgroup was made (the cgroupfs backend): count it from the
 * next sample. */
void sampler_counters_changed(struct sampler *s);

/* The process (pid, start_time) as a snapshot entry, as last read, if
 * it is tracked and judged (for loginguardctl why); its exe is a copy
 * the caller frees. */
bool sampler_proc(const struct sampler *s, pid_t pid, uint64_t start_time,
                  struct proc_sample *out);
/* The n tracked processes of person owner that used the most CPU when
 * last read (not a Slurm job's), highest first, as snapshot entries
 * (free each exe).
 * Returns how many (at most n, at most SAMPLER_TOP_MAX). */
#define SAMPLER_TOP_MAX 32
size_t sampler_user_top(const struct sampler *s, uid_t owner, struct proc_sample *out, size_t n);

/* After a reload: the new scope, and every program judged again (its
 * judge forgets all it judged: forget_all). */
void sampler_rescope(struct sampler *s, const struct sampler_scope *scope);

#endif
