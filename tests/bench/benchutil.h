/* Helpers shared by the benchmarks (benchutil.c). */
#ifndef LOGINGUARD_BENCHUTIL_H
#define LOGINGUARD_BENCHUTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#define SKIP 77 /* automake's "skipped" */

/* Set (to the signal's number) by SIGINT, SIGTERM and SIGHUP: the
 * benchmark cleans up and reports what it has measured so far. */
extern volatile sig_atomic_t stopping;

/* What every benchmark does first: check it is root (needs says why), fork
 * the nursery while the process is still small, catch the stop signals,
 * ignore SIGPIPE, buffer output by line.  0, or SKIP after saying why. */
int bench_start(const char *name, const char *needs);

/* The number in environment variable name, or def when it is unset or
 * empty; a value that is not a number in min..max is ignored, with a
 * word on stderr under bench_start's name. */
long env_long(const char *name, long def, long min, long max);

struct proc_stat;
/* /proc/PID/stat parsed into st; its text stays in buf (for fields the
 * parser leaves out).  false if the process is gone. */
bool bench_read_stat(pid_t pid, struct proc_stat *st, char *buf, size_t len);

double tv_us(struct timeval t);
double wall_us(void);
/* The time of day, usec since the epoch (to compare with events' times). */
double real_us(void);
/* User + system time of RUSAGE_SELF or RUSAGE_CHILDREN (those reaped), usec. */
double rusage_us(int who);
/* CPU time (user + system, every thread) of this process, usec. */
double cpu_self_us(void);
/* ... of this process and its reaped children. */
double cpu_self_children_us(void);
/* ... of another process, from its CPU clock (ns resolution, where
 * /proc/PID/stat counts ticks of 10 ms); -1 when it is gone. */
double cpu_of_us(pid_t pid);
/* ... of a process and its reaped children (/proc/PID/stat, ticks). */
double cpu_with_reaped_us(pid_t pid);
/* The sum for a list of processes (those gone count 0). */
double cpu_of_list_us(const pid_t *pids, int n);
void nap_ms(long ms);
/* Wait for a child to end (through EINTR). */
void reap(pid_t pid);
/* Send sig to *pid, reap it, and set *pid to 0; nothing when *pid <= 0. */
void kill_reap(pid_t *pid, int sig);
/* Fork loginguardd (the program daemon) on conf, its stdout and stderr
 * appended to output, stdin /dev/null; it gets SIGTERM when this process
 * dies.  own_group: in a process group of its own.  The child's pid, or
 * -1 (fork's errno). */
pid_t fork_daemon(const char *daemon, const char *conf, const char *output, bool own_group);
/* "  daemon output:" and the start of the file it wrote, if any. */
void print_daemon_output(const char *output);

/* The source and build trees (LG_TOP_SRCDIR, LG_TOP_BUILDDIR; else the
 * configured source tree and the tree this program was built in) and
 * what the benchmarks take from them. */
struct paths {
    char srcdir[1024], builddir[1024];
    char daemon[1100], main_conf[1100], rules_dir[1100], spin[1100], renamer[1100];
};
void find_paths(struct paths *P);
ssize_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
char *read_text(const char *path, size_t max);
int write_text(const char *path, const char *text);
double machine_busy_us(void);
bool has_token(const char *list, const char *word);

/* A cgroup v1 controller: where it is mounted and this process's cgroup
 * in it (/proc/self/mounts, /proc/self/cgroup). */
struct controller {
    char mount[256];
    char own[512]; /* "" for the root */
    bool found;
};
void find_controller(const char *name, struct controller *c);

/* Repeated measurements of one figure: the minimum is what the code
 * costs with the least interference, the median what it typically costs
 * on this machine as it is. */
#define MAX_RUNS 64
struct runs {
    int n;
    double v[MAX_RUNS];
};
void runs_add(struct runs *r, double v);
double runs_min(const struct runs *r);
double runs_median(const struct runs *r);
double runs_max(const struct runs *r);
/* For qsort: doubles, ascending. */
int cmp_double(const void *a, const void *b);
/* min, median and max of n values (1 <= n <= MAX_RUNS), for a caller
 * that keeps its values in an array of its own. */
void min_med_max(const double *v, int n, double out[3]);

/* The rest of the machine while a figure is measured: its busy time less
 * the benchmark's own (the caller says how much CPU everything of its own
 * used: itself, the daemon, its processes), the forks of the whole node,
 * and the load average. */
struct load_mark {
    double wall_us, busy_us, mine_us;
    unsigned long long forks;
};
struct other_load {
    double cores;         /* others' CPU, in cores */
    double forks_per_s;   /* new processes on the whole node */
    double loadavg;       /* the 1-minute load average at the end */
};
struct load_mark load_mark_now(double mine_us);
struct other_load other_load_between(struct load_mark a, struct load_mark b);
/* "others 0.93 cores, 41 forks/s, loadavg 2.10" */
void other_load_text(struct other_load l, char *buf, size_t len);
/* Several windows' other loads: min and median of the cores, and so on. */
struct load_runs {
    struct runs cores, forks, loadavg;
};
void load_runs_add(struct load_runs *r, struct other_load l);
void load_runs_text(const struct load_runs *r, char *buf, size_t len);

#define MAX_CHILDREN 30000

/* The nursery: a small process forked first, which starts idle processes
 * under given uids, and kills and reaps them on request or when the
 * benchmark dies. */
enum { N_SPAWN = 1, N_KILL, N_EXIT, N_HOSTILE, N_CHURN };

struct ncmd {
    int op, count, users;
    unsigned base_uid;
    int rename_ms; /* N_SPAWN: 0 idle (pause), else exec the renamer */
};

struct nreply {
    int made, ready, err;
};

int nursery_start(void);
/* procs idle processes over users uids from base_uid; their pids (malloc'd). */
pid_t *spawn_idle(int procs, int users, unsigned base_uid, struct nreply *r);
/* What a hostile process runs: `renamer MS python3 python3x ARG`, ARG
 * argv_bytes long, crafted against a shipped argv pattern ("_train"
 * repeated: a near miss of python-training-script at every position);
 * renamer must be a copy the test uids may run.  It lives `seconds`. */
int nursery_hostile(const char *renamer, int argv_bytes, int seconds);
/* procs processes holding that command line, renaming themselves every
 * rename_ms milliseconds. */
pid_t *spawn_hostile(int procs, int users, unsigned base_uid, int rename_ms, struct nreply *r);
/* Churn: `exits` processes (at random) killed and as many of the same
 * kind and uid started, each ended one replaced, and `flashes` processes
 * started that exit at once (fork, exit).  Replies with how many new
 * ones run (made) and the count alive (ready). */
int nursery_churn(int exits, int flashes, struct nreply *r);
void kill_idle(void);
void nursery_stop(void);
pid_t nursery_pid(void);

struct daemon_reading {
    bool alive;
    char state;
    uint64_t ticks;
    uint64_t run_ns; /* schedstat, 0 if absent */
};
struct daemon_reading read_daemon(pid_t pid);
/* A "Key:" of /proc/PID/status in MiB (its kB / 1024), -1 if absent. */
double status_mib(pid_t pid, const char *key);
/* Resident memory as smaps_rollup counts it, MiB. */
struct memory_reading {
    double rss, anon, file, pss, hwm;
};
struct memory_reading read_memory(pid_t pid);

/* Remove a benchmark's temporary directory and all below it; only one
 * of its own (/tmp/lgbench...), and without following links. */
void remove_bench_tree(const char *dir);

#endif
