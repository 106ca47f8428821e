/* Helpers shared by the benchmarks: time, whole-file I/O, machine load. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
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
#include "observe/procfs.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

volatile sig_atomic_t stopping;

static const char *bench_name = "bench";

static void on_signal(int sig)
{
    stopping = sig;
}

int bench_start(const char *name, const char *needs)
{
    bench_name = name;
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

long env_long(const char *name, long def, long min, long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < min || x > max) {
        fprintf(stderr, "%s: ignoring %s=%s (want %ld..%ld)\n", bench_name, name, v, min, max);
        return def;
    }
    return x;
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

static double clock_us(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) < 0)
        return -1;
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

double cpu_self_us(void)
{
    return clock_us(CLOCK_PROCESS_CPUTIME_ID);
}

double real_us(void)
{
    return clock_us(CLOCK_REALTIME);
}

double rusage_us(int who)
{
    struct rusage r;
    getrusage(who, &r);
    return tv_us(r.ru_utime) + tv_us(r.ru_stime);
}

double cpu_self_children_us(void)
{
    return cpu_self_us() + rusage_us(RUSAGE_CHILDREN);
}

double cpu_of_us(pid_t pid)
{
    clockid_t id;
    if (clock_getcpuclockid(pid, &id) != 0)
        return -1;
    return clock_us(id);
}

double cpu_with_reaped_us(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    char *t = read_text(path, 1024);
    char *p = t ? strrchr(t, ')') : NULL;
    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    if (p)
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &st,
               &cut, &cst);
    free(t);
    return (double)(ut + st + cut + cst) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

double cpu_of_list_us(const pid_t *pids, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double us = pids[i] > 0 ? cpu_of_us(pids[i]) : -1;
        sum += us > 0 ? us : 0;
    }
    return sum;
}

void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL); /* a signal cuts it short: callers check stopping */
}

void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

void kill_reap(pid_t *pid, int sig)
{
    if (*pid <= 0)
        return;
    kill(*pid, sig);
    reap(*pid);
    *pid = 0;
}

pid_t fork_daemon(const char *daemon, const char *conf, const char *output, bool own_group)
{
    pid_t bench = getpid();
    pid_t p = fork();
    if (p != 0)
        return p;
    if (own_group)
        setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != bench)
        _exit(0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(output, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in < 0 || out < 0)
        _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    char *argv[] = {(char *)"loginguardd", (char *)"--foreground", (char *)"--config",
                    (char *)conf, NULL};
    execv(daemon, argv);
    _exit(127);
}

void print_daemon_output(const char *output)
{
    char *t = read_text(output, 4000);
    if (t && *t)
        printf("  daemon output:\n%s\n", t);
    free(t);
}

void find_paths(struct paths *P)
{
    const char *src = getenv("LG_TOP_SRCDIR"), *build = getenv("LG_TOP_BUILDDIR");
    char exe_top[1024] = "";
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        /* TOP/tests/bench/bench_NAME */
        exe[n] = '\0';
        for (int up = 0; up < 3; up++) {
            char *slash = strrchr(exe, '/');
            if (slash)
                *slash = '\0';
        }
        snprintf(exe_top, sizeof(exe_top), "%s", exe);
    }
    snprintf(P->srcdir, sizeof(P->srcdir), "%s", src && *src ? src : TOP_SRCDIR);
    snprintf(P->builddir, sizeof(P->builddir), "%s",
             build && *build ? build
             : exe_top[0]    ? exe_top
                             : P->srcdir);
    snprintf(P->daemon, sizeof(P->daemon), "%s/daemon/loginguardd", P->builddir);
    snprintf(P->main_conf, sizeof(P->main_conf), "%s/rules/loginguard.conf", P->srcdir);
    snprintf(P->rules_dir, sizeof(P->rules_dir), "%s/rules/rules.d", P->srcdir);
    snprintf(P->spin, sizeof(P->spin), "%s/tests/helpers/spin", P->builddir);
    snprintf(P->renamer, sizeof(P->renamer), "%s/tests/helpers/renamer", P->builddir);
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

int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void min_med_max(const double *v, int n, double out[3])
{
    double s[MAX_RUNS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    out[0] = s[0];
    out[1] = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    out[2] = s[n - 1];
}

void runs_add(struct runs *r, double v)
{
    if (r->n < MAX_RUNS)
        r->v[r->n++] = v;
}

static double runs_at(const struct runs *r, int which)
{
    if (r->n == 0)
        return 0;
    double s[MAX_RUNS];
    memcpy(s, r->v, (size_t)r->n * sizeof(double));
    qsort(s, (size_t)r->n, sizeof(double), cmp_double);
    if (which < 0)
        return s[0];
    if (which > 0)
        return s[r->n - 1];
    return r->n % 2 ? s[r->n / 2] : (s[r->n / 2 - 1] + s[r->n / 2]) / 2;
}

double runs_min(const struct runs *r)
{
    return runs_at(r, -1);
}

double runs_median(const struct runs *r)
{
    return runs_at(r, 0);
}

double runs_max(const struct runs *r)
{
    return runs_at(r, 1);
}

/* Processes forked on the whole node since boot (/proc/stat). */
static unsigned long long node_forks(void)
{
    char *t = read_text("/proc/stat", 1 << 16);
    unsigned long long v = 0;
    char *p = t ? strstr(t, "\nprocesses ") : NULL;
    if (p)
        v = strtoull(p + 11, NULL, 10);
    free(t);
    return v;
}

struct load_mark load_mark_now(double mine_us)
{
    struct load_mark m = {wall_us(), machine_busy_us(), mine_us, node_forks()};
    return m;
}

struct other_load other_load_between(struct load_mark a, struct load_mark b)
{
    struct other_load l = {0, 0, 0};
    double wall = b.wall_us - a.wall_us;
    double others = (b.busy_us - a.busy_us) - (b.mine_us - a.mine_us);
    if (wall > 0) {
        l.cores = others > 0 ? others / wall : 0;
        l.forks_per_s = (double)(b.forks - a.forks) / (wall / 1e6);
    }
    char *t = read_text("/proc/loadavg", 128);
    if (t)
        l.loadavg = strtod(t, NULL);
    free(t);
    return l;
}

void other_load_text(struct other_load l, char *buf, size_t len)
{
    snprintf(buf, len, "others %.2f cores of %ld, %.0f forks/s on the node, loadavg %.2f",
             l.cores, sysconf(_SC_NPROCESSORS_ONLN), l.forks_per_s, l.loadavg);
}

void load_runs_add(struct load_runs *r, struct other_load l)
{
    runs_add(&r->cores, l.cores);
    runs_add(&r->forks, l.forks_per_s);
    runs_add(&r->loadavg, l.loadavg);
}

void load_runs_text(const struct load_runs *r, char *buf, size_t len)
{
    snprintf(buf, len,
             "others %.2f / %.2f cores of %ld (min / median), %.0f / %.0f forks/s on the node, "
             "loadavg %.2f / %.2f",
             runs_min(&r->cores), runs_median(&r->cores), sysconf(_SC_NPROCESSORS_ONLN),
             runs_min(&r->forks), runs_median(&r->forks), runs_min(&r->loadavg),
             runs_median(&r->loadavg));
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

void find_controller(const char *name, struct controller *c)
{
    c->found = false;
    FILE *f = fopen("/proc/self/mounts", "re");
    char line[1024];
    while (f && fgets(line, sizeof(line), f)) {
        char dev[256], dir[256], type[64], opts[512];
        if (sscanf(line, "%255s %255s %63s %511s", dev, dir, type, opts) == 4 &&
            strcmp(type, "cgroup") == 0 && has_token(opts, name)) {
            snprintf(c->mount, sizeof(c->mount), "%s", dir);
            c->found = true;
            break;
        }
    }
    if (f)
        fclose(f);
    if (!c->found)
        return;
    c->found = false;
    f = fopen("/proc/self/cgroup", "re");
    while (f && fgets(line, sizeof(line), f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        b[1 + strcspn(b + 1, "\n")] = '\0';
        if (has_token(a + 1, name)) {
            snprintf(c->own, sizeof(c->own), "%s", strcmp(b + 1, "/") == 0 ? "" : b + 1);
            c->found = true;
            break;
        }
    }
    if (f)
        fclose(f);
}

/* ------------------------------------------------------------------ */
/* the nursery: forks, kills and reaps the idle processes               */

static struct {
    pid_t pid;
    int cmd_fd, reply_fd;
} nursery = {0, -1, -1};


/* A slot per process; pid 0 when it ended and is to be replaced. */
struct kid {
    pid_t pid;
    uid_t uid;
    int rename_ms;
};
static struct kid kids[MAX_CHILDREN];
static int kid_count;

/* The hostile processes' program and command line (N_HOSTILE). */
static struct {
    char renamer[512];
    char *crafted;
    char lifetime[32];
} hostile;

static void nursery_kill_all(void)
{
    for (int i = 0; i < kid_count; i++)
        if (kids[i].pid > 0)
            kill(kids[i].pid, SIGKILL);
    for (int i = 0; i < kid_count; i++)
        while (kids[i].pid > 0 && waitpid(kids[i].pid, NULL, 0) < 0 && errno == EINTR)
            ;
    kid_count = 0;
}

static void become(uid_t uid, pid_t parent)
{
    if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
        _exit(1);
    /* After the uid change, which clears it: die with the nursery. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
}

static void child_main(const struct kid *k, const int ready[2], int cmd_fd, int reply_fd,
                       pid_t parent)
{
    close(ready[0]);
    close(cmd_fd);
    close(reply_fd);
    become(k->uid, parent);
    char b = 'x';
    while (write(ready[1], &b, 1) < 0 && errno == EINTR)
        ;
    close(ready[1]);
    if (k->rename_ms > 0 && hostile.crafted) {
        char ms[24];
        snprintf(ms, sizeof(ms), "%d", k->rename_ms);
        char *argv[] = {hostile.renamer, ms, (char *)"python3", (char *)"python3x",
                        hostile.crafted, NULL};
        char *envp[] = {hostile.lifetime, NULL};
        execve(hostile.renamer, argv, envp);
        _exit(127);
    }
    for (;;)
        pause();
}

/* Fork the process of slot i; false when fork failed. */
static bool start_kid(int i, const int ready[2], int cmd_fd, int reply_fd, pid_t self)
{
    pid_t p = fork();
    if (p == 0)
        child_main(&kids[i], ready, cmd_fd, reply_fd, self);
    kids[i].pid = p > 0 ? p : 0;
    return p > 0;
}

/* Read `made` ready bytes from the pipe (each child writes one). */
static int wait_ready(int fd, int made)
{
    char buf[4096];
    int ready = 0;
    while (ready < made) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        ready += (int)n;
    }
    return ready;
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
    pid_t *made = calloc((size_t)want + 1, sizeof(pid_t));
    for (int i = 0; i < want && made; i++) {
        int slot = kid_count;
        kids[slot] = (struct kid){0, (uid_t)(c->base_uid + (unsigned)(i % c->users)), c->rename_ms};
        if (!start_kid(slot, ready, cmd_fd, reply_fd, self)) {
            r.err = errno;
            break;
        }
        made[r.made++] = kids[slot].pid;
        kid_count++;
    }
    close(ready[1]);
    r.ready = wait_ready(ready[0], r.made);
    close(ready[0]);
    write_full(reply_fd, &r, sizeof(r));
    write_full(reply_fd, made, (size_t)r.made * sizeof(pid_t));
    free(made);
}

static int slot_of(pid_t pid)
{
    for (int i = 0; i < kid_count; i++)
        if (kids[i].pid == pid)
            return i;
    return -1;
}

static void nursery_churn_once(const struct ncmd *c, int cmd_fd, int reply_fd)
{
    struct nreply r = {0, 0, 0};
    pid_t self = getpid(), w;
    /* Those that ended by themselves (a renamer's lifetime). */
    while ((w = waitpid(-1, NULL, WNOHANG)) > 0) {
        int i = slot_of(w);
        if (i >= 0)
            kids[i].pid = 0;
    }
    for (int k = 0; k < c->count && kid_count > 0; k++) {
        int i = (int)(random() % kid_count);
        if (kids[i].pid <= 0)
            continue;
        kill(kids[i].pid, SIGKILL);
        reap(kids[i].pid);
        kids[i].pid = 0;
    }
    int ready[2];
    if (pipe(ready) < 0) {
        r.err = errno;
        write_full(reply_fd, &r, sizeof(r));
        return;
    }
    for (int i = 0; i < kid_count; i++)
        if (kids[i].pid == 0 && start_kid(i, ready, cmd_fd, reply_fd, self))
            r.made++;
    /* Processes that live a moment: fork, become a user, exit. */
    for (int k = 0; k < c->users && kid_count > 0; k++) {
        uid_t uid = kids[random() % kid_count].uid;
        pid_t p = fork();
        if (p == 0) {
            close(ready[0]);
            close(ready[1]);
            become(uid, self);
            _exit(0);
        }
        if (p > 0)
            reap(p);
    }
    close(ready[1]);
    wait_ready(ready[0], r.made);
    close(ready[0]);
    for (int i = 0; i < kid_count; i++)
        r.ready += kids[i].pid > 0;
    write_full(reply_fd, &r, sizeof(r));
}

static void nursery_set_hostile(const struct ncmd *c, int cmd_fd, int reply_fd)
{
    int rc = 0;
    if (read_full(cmd_fd, hostile.renamer, sizeof(hostile.renamer)) !=
        (ssize_t)sizeof(hostile.renamer))
        rc = -1;
    hostile.renamer[sizeof(hostile.renamer) - 1] = '\0';
    free(hostile.crafted);
    size_t len = c->count > 16 ? (size_t)c->count : 16;
    hostile.crafted = malloc(len + 1);
    if (!hostile.crafted) {
        rc = -1;
    } else {
        /* "_train" at every position: each one a near miss of the shipped
         * python-training-script pattern (never followed by ".py"). */
        for (size_t i = 0; i < len; i++)
            hostile.crafted[i] = "_train"[i % 6];
        hostile.crafted[len] = '\0';
    }
    snprintf(hostile.lifetime, sizeof(hostile.lifetime), "LG_RENAMER_SECONDS=%d", c->users);
    write_full(reply_fd, &rc, sizeof(rc));
}

static void nursery_main(int cmd_fd, int reply_fd)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    srandom((unsigned)getpid());
    /* Root is not held to RLIMIT_NPROC, the children after setuid are. */
    struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_NPROC, &inf);
    for (;;) {
        struct ncmd c;
        if (read_full(cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
            break; /* the benchmark went away */
        if (c.op == N_SPAWN) {
            nursery_spawn(&c, cmd_fd, reply_fd);
        } else if (c.op == N_HOSTILE) {
            nursery_set_hostile(&c, cmd_fd, reply_fd);
        } else if (c.op == N_CHURN) {
            nursery_churn_once(&c, cmd_fd, reply_fd);
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

static pid_t *spawn(int procs, int users, unsigned base_uid, int rename_ms, struct nreply *r)
{
    struct ncmd c = {N_SPAWN, procs, users, base_uid, rename_ms};
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

/* Start procs idle processes over users uids; returns their pids (malloc'd). */
pid_t *spawn_idle(int procs, int users, unsigned base_uid, struct nreply *r)
{
    return spawn(procs, users, base_uid, 0, r);
}

pid_t *spawn_hostile(int procs, int users, unsigned base_uid, int rename_ms, struct nreply *r)
{
    return spawn(procs, users, base_uid, rename_ms > 0 ? rename_ms : 1, r);
}

int nursery_hostile(const char *renamer, int argv_bytes, int seconds)
{
    struct ncmd c = {N_HOSTILE, argv_bytes, seconds, 0, 0};
    char path[512];
    memset(path, 0, sizeof(path));
    snprintf(path, sizeof(path), "%s", renamer);
    int rc = -1;
    if (write_full(nursery.cmd_fd, &c, sizeof(c)) < 0 ||
        write_full(nursery.cmd_fd, path, sizeof(path)) < 0 ||
        read_full(nursery.reply_fd, &rc, sizeof(rc)) != (ssize_t)sizeof(rc))
        return -1;
    return rc;
}

int nursery_churn(int exits, int flashes, struct nreply *r)
{
    struct ncmd c = {N_CHURN, exits, flashes, 0, 0};
    memset(r, 0, sizeof(*r));
    if (write_full(nursery.cmd_fd, &c, sizeof(c)) < 0 ||
        read_full(nursery.reply_fd, r, sizeof(*r)) != (ssize_t)sizeof(*r))
        return -1;
    return 0;
}

void kill_idle(void)
{
    if (nursery.pid <= 0)
        return;
    struct ncmd c = {N_KILL, 0, 0, 0, 0};
    int done;
    if (write_full(nursery.cmd_fd, &c, sizeof(c)) == 0)
        read_full(nursery.reply_fd, &done, sizeof(done));
}

pid_t nursery_pid(void)
{
    return nursery.pid;
}

void nursery_stop(void)
{
    if (nursery.pid <= 0)
        return;
    struct ncmd c = {N_EXIT, 0, 0, 0, 0};
    write_full(nursery.cmd_fd, &c, sizeof(c));
    close(nursery.cmd_fd);
    close(nursery.reply_fd);
    reap(nursery.pid);
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

static double rollup_mib(const char *text, const char *key)
{
    const char *p = text ? strstr(text, key) : NULL;
    return p ? (double)strtol(p + strlen(key), NULL, 10) / 1024.0 : -1;
}

struct memory_reading read_memory(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
    char *t = read_text(path, 8192);
    struct memory_reading m = {rollup_mib(t, "\nRss:"), rollup_mib(t, "\nAnonymous:"), 0,
                               rollup_mib(t, "\nPss:"), status_mib(pid, "VmHWM:")};
    m.file = m.rss >= 0 && m.anon >= 0 ? m.rss - m.anon : -1;
    free(t);
    return m;
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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void remove_bench_tree(const char *dir)
{
    if (dir[0] && strncmp(dir, "/tmp/lgbench", 12) == 0)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
