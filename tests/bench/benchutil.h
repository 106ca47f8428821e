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

/* Set by SIGINT, SIGTERM and SIGHUP: the benchmark cleans up and reports
 * what it has measured so far. */
extern volatile sig_atomic_t stopping;

/* What every benchmark does first: check it is root (needs says why), fork
 * the nursery while the process is still small, catch the stop signals,
 * ignore SIGPIPE, buffer output by line.  0, or SKIP after saying why. */
int bench_start(const char *name, const char *needs);

struct proc_stat;
/* /proc/PID/stat parsed into st; its text stays in buf (for fields the
 * parser leaves out).  false if the process is gone. */
bool bench_read_stat(pid_t pid, struct proc_stat *st, char *buf, size_t len);

double tv_us(struct timeval t);
double wall_us(void);
void nap_ms(long ms);
ssize_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
char *read_text(const char *path, size_t max);
int write_text(const char *path, const char *text);
double machine_busy_us(void);
bool has_token(const char *list, const char *word);

#define MAX_CHILDREN 30000

/* The nursery: a small process forked first, which starts idle processes
 * under given uids, and kills and reaps them on request or when the
 * benchmark dies. */
enum { N_SPAWN = 1, N_KILL, N_EXIT };

struct ncmd {
    int op, count, users;
    unsigned base_uid;
};

struct nreply {
    int made, ready, err;
};

int nursery_start(void);
/* procs idle processes over users uids from base_uid; their pids (malloc'd). */
pid_t *spawn_idle(int procs, int users, unsigned base_uid, struct nreply *r);
void kill_idle(void);
void nursery_stop(void);

struct daemon_reading {
    bool alive;
    char state;
    uint64_t ticks;
    uint64_t run_ns; /* schedstat, 0 if absent */
};
struct daemon_reading read_daemon(pid_t pid);
/* A "Key:" of /proc/PID/status in MiB (its kB / 1024), -1 if absent. */
double status_mib(pid_t pid, const char *key);

#endif
