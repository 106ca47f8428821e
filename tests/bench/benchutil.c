/* Helpers shared by the benchmarks: time, whole-file I/O, machine load. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "procfs.h"

volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

int bench_start(const char *name, const char *needs)
{
    if (geteuid() != 0) {
        printf("%s: needs root (%s); skipped\n", name, needs);
        return SKIP;
    }
    /* First, while this process is small: the idle processes' parent. */
    if (nursery_start() < 0) {
        printf("%s: cannot fork: %s\n", name, strerror(errno));
        return SKIP;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    return 0;
}

double tv_us(struct timeval t)
{
    return (double)t.tv_sec * 1e6 + (double)t.tv_usec;
}

double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: callers check stopping */
}

ssize_t read_full(int fd, void *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

int write_full(int fd, const void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, (const char *)buf + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

char *read_text(const char *path, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *buf = malloc(max + 1);
    if (!buf) {
        close(fd);
        return NULL;
    }
    ssize_t n = read_full(fd, buf, max);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int rc = write_full(fd, text, strlen(text));
    if (close(fd) < 0)
        rc = -1;
    return rc;
}

/* Busy time of the whole machine, usec (from /proc/stat's first line). */
double machine_busy_us(void)
{
    char *t = read_text("/proc/stat", 4096);
    double busy = 0;
    unsigned long long v[8] = {0};
    if (t && sscanf(t, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                    &v[4], &v[5], &v[6], &v[7]) == 8)
        busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]); /* not idle, iowait */
    free(t);
    return busy * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

bool has_token(const char *list, const char *word)
{
    size_t w = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == w && memcmp(p, word, w) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* the nursery: forks, kills and reaps the idle processes               */

static struct {
    pid_t pid;
    int cmd_fd, reply_fd;
} nursery = {0, -1, -1};


static pid_t kids[MAX_CHILDREN];
static int kid_count;

static void nursery_kill_all(void)
{
    for (int i = 0; i < kid_count; i++)
        kill(kids[i], SIGKILL);
    for (int i = 0; i < kid_count; i++)
        while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    kid_count = 0;
}

static void idle_child(uid_t uid, const int ready[2], int cmd_fd, int reply_fd, pid_t parent)
{
    close(ready[0]);
    close(cmd_fd);
    close(reply_fd);
    if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
        _exit(1);
    /* After the uid change, which clears it: die with the nursery. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    char b = 'x';
    while (write(ready[1], &b, 1) < 0 && errno == EINTR)
        ;
    close(ready[1]);
    for (;;)
        pause();
}

static void nursery_spawn(const struct ncmd *c, int cmd_fd, int reply_fd)
{
    struct nreply r = {0, 0, 0};
    int ready[2];
    pid_t self = getpid();
    int want = c->count;
    if (want > MAX_CHILDREN - kid_count)
        want = MAX_CHILDREN - kid_count;
    if (pipe(ready) < 0) {
        r.err = errno;
        write_full(reply_fd, &r, sizeof(r));
        return;
    }
    int first = kid_count;
    for (int i = 0; i < want; i++) {
        uid_t uid = (uid_t)(c->base_uid + (unsigned)(i % c->users));
        pid_t p = fork();
        if (p == 0)
            idle_child(uid, ready, cmd_fd, reply_fd, self);
        if (p < 0) {
            r.err = errno;
            break;
        }
        kids[kid_count++] = p;
        r.made++;
    }
    close(ready[1]);
    char buf[4096];
    while (r.ready < r.made) {
        ssize_t n = read(ready[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        r.ready += (int)n;
    }
    close(ready[0]);
    write_full(reply_fd, &r, sizeof(r));
    write_full(reply_fd, kids + first, (size_t)r.made * sizeof(pid_t));
}

static void nursery_main(int cmd_fd, int reply_fd)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* Root is not held to RLIMIT_NPROC, the children after setuid are. */
    struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_NPROC, &inf);
    for (;;) {
        struct ncmd c;
        if (read_full(cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
            break; /* the benchmark went away */
        if (c.op == N_SPAWN) {
            nursery_spawn(&c, cmd_fd, reply_fd);
        } else if (c.op == N_KILL) {
            nursery_kill_all();
            int done = 0;
            write_full(reply_fd, &done, sizeof(done));
        } else {
            break;
        }
    }
    nursery_kill_all();
    _exit(0);
}


int nursery_start(void)
{
    int cmd[2], rep[2];
    if (pipe2(cmd, O_CLOEXEC) < 0)
        return -1;
    if (pipe2(rep, O_CLOEXEC) < 0) {
        close(cmd[0]);
        close(cmd[1]);
        return -1;
    }
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        close(cmd[1]);
        close(rep[0]);
        setpgid(0, 0); /* away from the terminal's ^C: the benchmark decides */
        nursery_main(cmd[0], rep[1]);
    }
    setpgid(p, p);
    close(cmd[0]);
    close(rep[1]);
    nursery.pid = p;
    nursery.cmd_fd = cmd[1];
    nursery.reply_fd = rep[0];
    return 0;
}

/* Start procs idle processes over users uids; returns their pids (malloc'd). */
pid_t *spawn_idle(int procs, int users, unsigned base_uid, struct nreply *r)
{
    struct ncmd c = {N_SPAWN, procs, users, base_uid};
    memset(r, 0, sizeof(*r));
    if (write_full(nursery.cmd_fd, &c, sizeof(c)) < 0 ||
        read_full(nursery.reply_fd, r, sizeof(*r)) != (ssize_t)sizeof(*r)) {
        r->err = EPIPE;
        return NULL;
    }
    pid_t *pids = calloc((size_t)r->made + 1, sizeof(pid_t));
    if (!pids)
        abort();
    if (read_full(nursery.reply_fd, pids, (size_t)r->made * sizeof(pid_t)) !=
        (ssize_t)((size_t)r->made * sizeof(pid_t)))
        r->err = EPIPE;
    return pids;
}

void kill_idle(void)
{
    if (nursery.pid <= 0)
        return;
    struct ncmd c = {N_KILL, 0, 0, 0};
    int done;
    if (write_full(nursery.cmd_fd, &c, sizeof(c)) == 0)
        read_full(nursery.reply_fd, &done, sizeof(done));
}

void nursery_stop(void)
{
    if (nursery.pid <= 0)
        return;
    struct ncmd c = {N_EXIT, 0, 0, 0};
    write_full(nursery.cmd_fd, &c, sizeof(c));
    close(nursery.cmd_fd);
    close(nursery.reply_fd);
    while (waitpid(nursery.pid, NULL, 0) < 0 && errno == EINTR)
        ;
    nursery.pid = 0;
}

bool bench_read_stat(pid_t pid, struct proc_stat *st, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = procfs_pread(fd, buf, len - 1);
    close(fd);
    if (n <= 0 || procfs_parse_stat(buf, (size_t)n, st) < 0)
        return false;
    buf[n] = '\0';
    return true;
}

/* A process as the benchmarks watch the daemon: alive, state, CPU. */
struct daemon_reading read_daemon(pid_t pid)
{
    struct daemon_reading d = {false, '?', 0, 0};
    char path[64], buf[1024];
    struct proc_stat st;
    if (!bench_read_stat(pid, &st, buf, sizeof(buf)))
        return d;
    d.alive = st.state != 'Z';
    d.state = st.state;
    d.ticks = st.utime + st.stime;
    snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
    char *t = read_text(path, 128);
    if (t)
        d.run_ns = strtoull(t, NULL, 10);
    free(t);
    return d;
}

double status_mib(pid_t pid, const char *key)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    char *t = read_text(path, 8192);
    double v = -1;
    if (t) {
        char *p = strstr(t, key);
        if (p)
            v = (double)strtol(p + strlen(key) + 1, NULL, 10) / 1024.0;
        free(t);
    }
    return v;
}
