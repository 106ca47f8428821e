/* Helpers shared by the benchmarks (benchutil.c). */
#ifndef LOGINGUARD_BENCHUTIL_H
#define LOGINGUARD_BENCHUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

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
