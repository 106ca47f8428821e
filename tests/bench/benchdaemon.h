/* loginguardd in enforce mode with the cgroupfs backend, as the enforce
 * benchmark and the soak run it (benchdaemon.c). */
#ifndef LOGINGUARD_BENCHDAEMON_H
#define LOGINGUARD_BENCHDAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "benchutil.h"
#include "policy.h"

#define LOAD_BASE_UID 61000u /* the load's users; also the daemons' min_uid */
#define MAX_PARENTS 8

/* What is to be cleaned up: the daemon, the temporary directory, the
 * cgroup parents given to daemons (their user-* below them). */
struct bench_state {
    pid_t daemon;
    char tag[16];    /* "enforce", "soak": in the names of what is made */
    char tmpdir[64];
    char parents[MAX_PARENTS][64];
    int parent_count;
};
extern struct bench_state BD;

#define NO_VALUE (-999999999L) /* a file that could not be read */
long read_long_file(const char *path);

/* The v1 controllers the backend uses. */
enum { C_CPU, C_CPUACCT, C_MEMORY, C_PIDS, C_COUNT };
extern const char *const ctl_names[C_COUNT];
extern struct controller ctl[C_COUNT];
/* Where a daemon started here puts a relative cgroup_parent, and a user's
 * cgroup below it. */
void parent_dir(int c, const char *parent, char *buf, size_t len);
void user_dir(int c, const char *parent, uid_t uid, char *buf, size_t len);
void remember_parent(const char *parent);
/* Its user-* directories, then itself, in every controller: only once
 * their processes are gone.  0 or -1. */
int remove_parent(const char *parent);
/* The CPU of everything in the user cgroups below parent (cpuacct.usage),
 * usec; 0 when unreadable. */
double parent_cpu_us(const char *parent);
/* Processes in the cpuacct user-* directories below parent. */
long count_adopted(const char *parent, int *groups);

int copy_file(const char *from, const char *to, mode_t mode);

/* /tmp/lgbench-TAG.XXXXXX; 0 or -1. */
int bench_tmpdir(const char *tag);
void remove_tmpdir(void);

/* A daemon's config: the shipped loginguard.conf with conf.d/bench.conf
 * (enforce, cgroupfs, cgroup_parent lgbench-TAG-PID-NAME, min_uid
 * LOAD_BASE_UID, its paths in TMP/NAME) and `extra` appended. */
struct run_conf {
    char dir[128], conf[160], event_log[160], daemon_log[160];
    char parent[64];
};
int make_run_conf(const struct paths *P, const char *name, const char *extra, struct run_conf *R);
int load_policy(const char *conf, struct policy *pol);

/* Start loginguardd on R's config and wait for daemon_started: 0 or -1. */
int daemon_start(const struct paths *P, const struct run_conf *R);
bool daemon_exited(void);
void daemon_stop(void);
void print_daemon_log(const struct run_conf *R);
/* Every parent remembered (their processes must be gone). */
void remove_parents(void);
/* Another loginguardd on the node (it would move the benchmark's
 * processes into its own cgroups), or 0. */
pid_t other_daemon(void);
/* No other loginguardd (waited for up to seconds; -1 if it stays). */
int wait_quiet(int seconds);
int wait_adopted(const struct run_conf *R, long procs, int timeout_s, long *adopted, int *groups,
                 char *why, size_t why_len);
void wait_settled(pid_t pid);

/* Kernel threads, whose CPU is other load no process of ours accounts
 * for (on some VMs a kdamond scans memory harder the more processes
 * there are).  Found once, before a window: that listing is not cheap. */
#define MAX_KTHREADS 512
struct kthreads {
    int count;
    pid_t pid[MAX_KTHREADS];
    char comm[MAX_KTHREADS][16];
    uint64_t ticks[MAX_KTHREADS];
};
void kthreads_find(struct kthreads *k);
void kthreads_mark(struct kthreads *k);
/* Their cores since kthreads_mark; the busiest as "name 0.77" text. */
double kthreads_busiest(const struct kthreads *k, double seconds, char *out, size_t len);

#endif
