/* bench_enforce: loginguardd in enforce mode with the cgroupfs backend on
 * this machine's cgroup v1 controllers.
 *
 *   1. Detection-to-action latency.  A CPU hog (tests/helpers/spin, all
 *      cores) starts under a fresh uid with no passwd entry; the time from
 *      its start to the daemon's "violation" event and to the first
 *      "limits_set" event with a level >= 1 for that uid, read from the
 *      JSON-lines event log.  When an event is seen the user's
 *      cpu.cfs_quota_us is read and compared with the quota the level
 *      should give.  Window 10 s by default; the shipped 5 min window with
 *      LG_BENCH_DEFAULT_WINDOW=1 (it takes about 10 min a repetition).
 *   2. The daemon's own CPU share and peak RSS with 10,000 idle processes
 *      of 500 users, every one moved by the daemon into its user's cgroup,
 *      at the default intervals; then, in this process against the same
 *      cgroups, where one counter-path sample (sampler_sample) spends its
 *      time: the /proc listing that finds new processes versus the
 *      per-user counter reads.
 * It prints figures, and the targets beside them, never pass/fail.
 * Exit status: 0, or 77 when it cannot run at all (not root, ...).
 *
 * Environment:
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR  the trees (default: the configured ones)
 *   LG_BENCH_LATENCY         0 skips part 1 (default 1)
 *   LG_BENCH_LATENCY_REPS    hogs per window (3)
 *   LG_BENCH_DEFAULT_WINDOW  1 also runs part 1 with the shipped window (0)
 *   LG_BENCH_DAEMON_SECONDS  part 2's measuring window (60; 0 skips part 2)
 *   LG_BENCH_PROCS, LG_BENCH_USERS  part 2's load (10000, 500)
 *   LG_BENCH_SAMPLES         in-process samples averaged (20)
 *   LG_BENCH_ADOPT_TIMEOUT   seconds to wait for every process to be moved (300)
 *   LG_BENCH_WAIT_OTHERS     seconds to wait for another loginguardd to end (600)
 *   LG_BENCH_KEEP            1 keeps the temporary directory (configs, event logs)
 *
 * Everything made here is removed again: the processes (killed by pid and
 * reaped), the daemons (SIGTERM), the cgroups (only below the parents
 * named lgbench-enforce-PID-*, which the daemons started here made; the
 * user-* directories first, after their processes are gone), the
 * temporary directory. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "cgroup_counters.h"
#include "configfile.h"
#include "errors.h"
#include "policy.h"
#include "procfs.h"
#include "sampler.h"
#include "snapshot.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define LOAD_BASE_UID 61000u /* part 2's users; also the daemons' min_uid */
#define HOG_BASE_UID 62000u  /* part 1's, a fresh one per hog */
#define MAX_REPS 20
#define CFS_PERIOD_US 100000
#define NO_VALUE (-999999999L) /* a file that could not be read */

#define TARGET_DAEMON_CPU_PCT 0.2

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

static double real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_self_us(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return tv_us(r.ru_utime) + tv_us(r.ru_stime);
}

static long read_long_file(const char *path)
{
    char *t = read_text(path, 64);
    long v = t && *t ? strtol(t, NULL, 10) : NO_VALUE;
    free(t);
    return v;
}

static long env_long(const char *name, long def, long min, long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < min || x > max) {
        fprintf(stderr, "bench_enforce: ignoring %s=%s (want %ld..%ld)\n", name, v, min, max);
        return def;
    }
    return x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "min / median / max" of the n values (n >= 1). */
static void min_med_max(const double *v, int n, double out[3])
{
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    out[0] = s[0];
    out[1] = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    out[2] = s[n - 1];
}

/* "2026-11-22T01:46:17.275Z" -> usec since the epoch, or -1. */
static double iso_us(const char *text)
{
    struct tm tm;
    int ms = 0;
    memset(&tm, 0, sizeof(tm));
    if (!text || sscanf(text, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                        &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) * 1e6 + ms * 1e3;
}

/* ------------------------------------------------------------------ */
/* state to clean up                                                    */

#define MAX_PARENTS 4

static struct {
    pid_t daemon;
    pid_t hog;
    char tmpdir[64];
    char parents[MAX_PARENTS][64]; /* cgroup_parent names given to daemons */
    int parent_count;
} G = {0, 0, "", {{0}}, 0};


/* ------------------------------------------------------------------ */
/* cgroups: the v1 controllers the backend uses                         */

enum { C_CPU, C_CPUACCT, C_MEMORY, C_PIDS, C_COUNT };
static const char *const ctl_names[C_COUNT] = {"cpu", "cpuacct", "memory", "pids"};

struct controller {
    char mount[256];
    char own[512]; /* "" for the root */
    bool found;
};
static struct controller ctl[C_COUNT];

static void find_controller(const char *name, struct controller *c)
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

/* Where a daemon started by this process puts a relative cgroup_parent:
 * below this process's own cgroup, as cgroupfs_open does for its own. */
static void parent_dir(int c, const char *parent, char *buf, size_t len)
{
    snprintf(buf, len, "%.255s%.511s/%.63s", ctl[c].mount, ctl[c].own, parent);
}

static void user_dir(int c, const char *parent, uid_t uid, char *buf, size_t len)
{
    snprintf(buf, len, "%.255s%.511s/%.63s/user-%u", ctl[c].mount, ctl[c].own, parent,
             (unsigned)uid);
}

static void remember_parent(const char *parent)
{
    for (int i = 0; i < G.parent_count; i++)
        if (strcmp(G.parents[i], parent) == 0)
            return;
    if (G.parent_count < MAX_PARENTS)
        snprintf(G.parents[G.parent_count++], sizeof(G.parents[0]), "%s", parent);
}

static int rmdir_patiently(const char *path)
{
    for (int tries = 0; rmdir(path) < 0; tries++) {
        if (errno == ENOENT)
            return 0;
        if (errno != EBUSY || tries >= 100)
            return -1;
        nap_ms(20);
    }
    return 0;
}

/* The user-* directories below one of our parents, then the parent, in
 * every controller.  Only once their processes are gone. */
static int remove_parent(const char *parent)
{
    int failed = 0;
    for (int c = 0; c < C_COUNT; c++) {
        if (!ctl[c].found)
            continue;
        char dir[1024], sub[1400];
        parent_dir(c, parent, dir, sizeof(dir));
        DIR *d = opendir(dir);
        if (!d)
            continue; /* never made, or made on a controller we do not see */
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_type != DT_DIR || strncmp(de->d_name, "user-", 5) != 0)
                continue;
            snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
            if (rmdir_patiently(sub) < 0) {
                fprintf(stderr, "bench_enforce: cannot remove cgroup %s: %s\n", sub,
                        strerror(errno));
                failed++;
            }
        }
        closedir(d);
        if (rmdir_patiently(dir) < 0) {
            fprintf(stderr, "bench_enforce: cannot remove cgroup %s: %s\n", dir, strerror(errno));
            failed++;
        }
    }
    return failed ? -1 : 0;
}

/* Processes in the cpuacct user-* directories below parent (the daemon
 * moves each process in every controller, cpuacct last but one). */
static long count_adopted(const char *parent, int *groups)
{
    char dir[1024], path[1400];
    parent_dir(C_CPUACCT, parent, dir, sizeof(dir));
    DIR *d = opendir(dir);
    long n = 0;
    *groups = 0;
    if (!d)
        return 0;
    struct dirent *de;
    char buf[65536];
    while ((de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || strncmp(de->d_name, "user-", 5) != 0)
            continue;
        (*groups)++;
        snprintf(path, sizeof(path), "%s/%s/cgroup.procs", dir, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got;
        while ((got = read(fd, buf, sizeof(buf))) > 0)
            for (ssize_t i = 0; i < got; i++)
                n += buf[i] == '\n';
        close(fd);
    }
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------ */
/* paths, configs                                                       */

struct paths {
    char srcdir[1024], builddir[1024];
    char daemon[1100], main_conf[1100], rules_dir[1100], spin[1100];
};

struct run_conf {
    char dir[128], conf[160], event_log[160], daemon_log[160];
    char parent[64];
};

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void remove_tmpdir(void)
{
    const char *keep = getenv("LG_BENCH_KEEP");
    if (keep && strcmp(keep, "1") == 0 && G.tmpdir[0]) {
        printf("bench_enforce: kept %s (LG_BENCH_KEEP=1)\n", G.tmpdir);
        G.tmpdir[0] = '\0';
    }
    if (G.tmpdir[0] && strncmp(G.tmpdir, "/tmp/lgbench-enforce.", 21) == 0)
        nftw(G.tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    G.tmpdir[0] = '\0';
}

static void find_paths(struct paths *P)
{
    const char *src = getenv("LG_TOP_SRCDIR"), *build = getenv("LG_TOP_BUILDDIR");
    char exe_top[1024] = "";
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        /* TOP/tests/bench/bench_enforce */
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
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write_full(out, buf, (size_t)n) < 0)
            rc = -1;
    close(in);
    if (close(out) < 0 || n < 0)
        rc = -1;
    fchmodat(AT_FDCWD, to, mode, 0);
    return rc;
}

/* TMP/NAME/: the shipped loginguard.conf, conf.d/bench.conf with the
 * bench's [daemon] paths and `extra`, a state directory.  The daemon's
 * cgroup_parent is lgbench-enforce-PID-NAME (relative). */
static int make_run_conf(const struct paths *P, const char *name, const char *extra,
                         struct run_conf *R)
{
    snprintf(R->dir, sizeof(R->dir), "%s/%s", G.tmpdir, name);
    snprintf(R->conf, sizeof(R->conf), "%s/loginguard.conf", R->dir);
    snprintf(R->event_log, sizeof(R->event_log), "%s/events.jsonl", R->dir);
    snprintf(R->daemon_log, sizeof(R->daemon_log), "%s/daemon.log", R->dir);
    snprintf(R->parent, sizeof(R->parent), "lgbench-enforce-%d-%s", (int)getpid(), name);
    char path[256];
    if (mkdir(R->dir, 0755) < 0 || copy_file(P->main_conf, R->conf, 0644) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/conf.d", R->dir);
    if (mkdir(path, 0755) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/state", R->dir);
    if (mkdir(path, 0700) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/conf.d/bench.conf", R->dir);
    char *text = NULL;
    if (asprintf(&text,
                 "# written by bench_enforce\n"
                 "[daemon]\n"
                 "mode = enforce\n"
                 "backend = cgroupfs\n"
                 "cgroup_parent = %s\n"
                 "# only this benchmark's uids: another run's test users stay untouched\n"
                 "min_uid = %u\n"
                 "event_log = %s\n"
                 "rules_dirs = %s\n"
                 "state_dir = %s/state\n"
                 "control_socket = %s/control.sock\n"
                 "%s",
                 R->parent, LOAD_BASE_UID, R->event_log, P->rules_dir, R->dir, R->dir,
                 extra ? extra : "") < 0)
        return -1;
    int rc = write_text(path, text);
    free(text);
    return rc;
}

static int load_policy(const char *conf, struct policy *pol)
{
    struct errors errs = {0};
    int rc = config_load(conf, true, pol, &errs);
    if (rc < 0) {
        printf("  the config %s does not load:\n", conf);
        for (size_t i = 0; i < errs.count; i++)
            printf("    %s\n", errs.messages[i]);
    }
    errors_free(&errs);
    return rc;
}

/* ------------------------------------------------------------------ */
/* the daemon                                                           */

static bool daemon_exited(void)
{
    int st;
    if (G.daemon > 0 && waitpid(G.daemon, &st, WNOHANG) == G.daemon) {
        G.daemon = 0;
        return true;
    }
    return G.daemon <= 0;
}

static void daemon_stop(void)
{
    if (G.daemon <= 0)
        return;
    kill(G.daemon, SIGTERM);
    for (int i = 0; i < 200 && G.daemon > 0; i++) {
        if (daemon_exited())
            return;
        nap_ms(50);
    }
    if (G.daemon > 0) {
        fprintf(stderr, "bench_enforce: the daemon ignored SIGTERM for 10 s; SIGKILL\n");
        kill(G.daemon, SIGKILL);
        while (waitpid(G.daemon, NULL, 0) < 0 && errno == EINTR)
            ;
        G.daemon = 0;
    }
}

static void print_daemon_log(const struct run_conf *R)
{
    char *t = read_text(R->daemon_log, 4000);
    if (t && *t)
        printf("  daemon output:\n%s\n", t);
    free(t);
}

/* Start loginguardd on R's config; wait for its daemon_started event. */
static int daemon_start(const struct paths *P, const struct run_conf *R)
{
    remember_parent(R->parent);
    pid_t bench = getpid();
    pid_t p = fork();
    if (p < 0)
        return -1;
    if (p == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != bench)
            _exit(0);
        int in = open("/dev/null", O_RDONLY);
        int out = open(R->daemon_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (in < 0 || out < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        char *argv[] = {(char *)"loginguardd", (char *)"--foreground", (char *)"--config",
                        (char *)R->conf, NULL};
        execv(P->daemon, argv);
        _exit(127);
    }
    G.daemon = p;
    setpgid(p, p);
    double start = wall_us();
    while (!stopping && wall_us() - start < 20e6) {
        char *ev = read_text(R->event_log, 1 << 16);
        bool started = ev && strstr(ev, "\"daemon_started\"");
        bool refused = ev && strstr(ev, "\"enforce_error\"");
        free(ev);
        if (started)
            return 0;
        if (refused || daemon_exited())
            break;
        nap_ms(20);
    }
    printf("  the daemon did not start in enforce mode\n");
    print_daemon_log(R);
    daemon_stop();
    return -1;
}

/* Other daemons would move this benchmark's processes into their own
 * cgroups (and this one's load would upset their tests). */
static pid_t other_daemon(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *de;
    pid_t found = 0;
    while (!found && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
        char *t = read_text(path, 64);
        pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
        if (t && strcmp(t, "loginguardd\n") == 0 && pid != G.daemon)
            found = pid;
        free(t);
    }
    closedir(d);
    return found;
}

/* Cores' worth of work by others over ms milliseconds: the machine's busy
 * time less this process's and its reaped children's, and less `mine`
 * (unreaped processes of this benchmark, ticks read by the caller). */
static double own_cpu_all_us(void)
{
    struct rusage r, c;
    getrusage(RUSAGE_SELF, &r);
    getrusage(RUSAGE_CHILDREN, &c);
    return tv_us(r.ru_utime) + tv_us(r.ru_stime) + tv_us(c.ru_utime) + tv_us(c.ru_stime);
}

static double other_load_probe(long ms)
{
    double b0 = machine_busy_us(), o0 = own_cpu_all_us(), w0 = wall_us();
    nap_ms(ms);
    double others = (machine_busy_us() - b0) - (own_cpu_all_us() - o0);
    return others > 0 ? others / (wall_us() - w0) : 0;
}

/* Before a phase: no other loginguardd (it would move this benchmark's
 * processes into its own cgroups; this one's load would upset its tests)
 * and little other load.  -1 if another daemon is still there after
 * `seconds`; a busy machine is only noted. */
static int wait_quiet(int seconds)
{
    double start = wall_us();
    bool said = false;
    pid_t other = 0;
    double load = 0;
    while (!stopping) {
        other = other_daemon();
        if (!other) {
            load = other_load_probe(2000);
            if (load < 0.25)
                break;
        }
        if (wall_us() - start > seconds * 1e6)
            break;
        if (!said) {
            if (other) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)other);
                char *cmd = read_text(path, 512);
                for (size_t i = 0; cmd && i < 511 && (cmd[i] || cmd[i + 1]); i++)
                    if (!cmd[i])
                        cmd[i] = ' ';
                printf("  another loginguardd runs (pid %d: %s); waiting up to %d s for a quiet"
                       " machine\n",
                       (int)other, cmd ? cmd : "?", seconds);
                free(cmd);
            } else {
                printf("  other load %.2f cores; waiting up to %d s for a quiet machine\n", load,
                       seconds);
            }
            said = true;
        }
        nap_ms(2000);
    }
    if (stopping || other)
        return -1;
    if (said)
        printf("  quiet after %.0f s (other load %.2f cores)\n", (wall_us() - start) / 1e6, load);
    return 0;
}

/* ------------------------------------------------------------------ */
/* the event log                                                        */

struct evlog {
    const char *path;
    off_t offset;
};

/* Each complete new line as JSON, to fn, until fn returns true. */
static void evlog_poll(struct evlog *ev, bool (*fn)(json_t *, void *), void *arg)
{
    int fd = open(ev->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    static char buf[1 << 20];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, ev->offset);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    char *line = buf;
    for (char *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        ev->offset += nl + 1 - line;
        json_t *e = json_loads(line, 0, NULL);
        if (!e)
            continue;
        bool done = fn(e, arg);
        json_decref(e);
        if (done)
            return;
    }
}

/* ------------------------------------------------------------------ */
/* 1. detection-to-action latency                                       */

struct hog_run {
    bool ok;
    char why[160];
    uid_t uid;
    pid_t pid;
    double t0;                    /* realtime usec, just before the fork */
    double adopted_s;             /* seen in its user's cpuacct cgroup.procs */
    double violation_s, action_s; /* from the events' own times */
    int violation_level, action_level;
    double run_s;       /* the violation's usage.window_s: the run it judged */
    double other_cores; /* others' load on the machine meanwhile */
    pid_t disturbed_by; /* another loginguardd that ran meanwhile */
    double action_cpu;  /* the event's limits.cpu_cores */
    long quota_at_violation, quota_at_action;
    long want_violation, want_action; /* what the level should give */
};

struct hog_watch {
    struct hog_run *r;
    const struct policy *pol;
    const char *parent;
    bool saw_violation, saw_action;
};

static double wanted_cpu(const struct policy *pol, int level)
{
    double cpu = pol->share_cpu;
    if (level > 0 && (size_t)level <= pol->level_count) {
        double l = pol->levels[level - 1].cpu;
        if (l > 0 && (cpu <= 0 || l < cpu))
            cpu = l;
    }
    return cpu;
}

static uint64_t wanted_memory(const struct policy *pol, int level)
{
    uint64_t m = pol->share_memory;
    if (level > 0 && (size_t)level <= pol->level_count) {
        uint64_t l = pol->levels[level - 1].memory;
        if (l > 0 && (m == 0 || l < m))
            m = l;
    }
    return m;
}

static long quota_of(double cpu)
{
    return cpu > 0 ? (long)(cpu * CFS_PERIOD_US) : -1;
}

/* The first level whose limits differ from the standing share: the
 * first at which the daemon writes anything (limits_set). */
static int first_acting_level(const struct policy *pol)
{
    for (size_t l = 1; l <= pol->level_count; l++)
        if (wanted_cpu(pol, (int)l) != pol->share_cpu ||
            wanted_memory(pol, (int)l) != pol->share_memory)
            return (int)l;
    return 0;
}

static long read_quota(const char *parent, uid_t uid)
{
    char path[1200];
    user_dir(C_CPU, parent, uid, path, sizeof(path));
    strncat(path, "/cpu.cfs_quota_us", sizeof(path) - strlen(path) - 1);
    return read_long_file(path);
}

static int event_level(json_t *e)
{
    json_t *l = json_object_get(e, "level");
    if (json_is_integer(l))
        return (int)json_integer_value(l);
    if (json_is_object(l))
        return (int)json_integer_value(json_object_get(l, "number"));
    return (int)json_integer_value(json_object_get(e, "level_after"));
}

static bool on_hog_event(json_t *e, void *arg)
{
    struct hog_watch *w = arg;
    struct hog_run *r = w->r;
    json_t *uid = json_object_get(e, "uid");
    const char *name = json_string_value(json_object_get(e, "event"));
    if (!name || !json_is_integer(uid) || (uid_t)json_integer_value(uid) != r->uid)
        return false;
    double t = iso_us(json_string_value(json_object_get(e, "time")));
    if (!w->saw_violation && strcmp(name, "violation") == 0) {
        w->saw_violation = true;
        r->quota_at_violation = read_quota(w->parent, r->uid);
        r->violation_s = (t - r->t0) / 1e6;
        r->violation_level = event_level(e);
        r->run_s = json_number_value(json_object_get(json_object_get(e, "usage"), "window_s"));
        r->want_violation = quota_of(wanted_cpu(w->pol, r->violation_level));
    } else if (!w->saw_action && strcmp(name, "limits_set") == 0 && event_level(e) >= 1) {
        w->saw_action = true;
        r->quota_at_action = read_quota(w->parent, r->uid);
        r->action_s = (t - r->t0) / 1e6;
        r->action_level = event_level(e);
        r->action_cpu = json_real_value(json_object_get(json_object_get(e, "limits"), "cpu_cores"));
        r->want_action = quota_of(wanted_cpu(w->pol, r->action_level));
    }
    return w->saw_action;
}

static bool pid_in_procs(const char *parent, uid_t uid, pid_t pid)
{
    char path[1200];
    user_dir(C_CPUACCT, parent, uid, path, sizeof(path));
    strncat(path, "/cgroup.procs", sizeof(path) - strlen(path) - 1);
    char *t = read_text(path, 1 << 16);
    bool found = false;
    for (char *p = t; p && *p && !found;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        found = v == pid;
        p = end;
    }
    free(t);
    return found;
}

static pid_t start_hog(const char *spin, uid_t uid, int threads, int lifetime)
{
    pid_t bench = getpid();
    pid_t p = fork();
    if (p != 0)
        return p;
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
        setresuid(uid, uid, uid) < 0)
        _exit(126);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != bench)
        _exit(0);
    dup2(null, 0);
    dup2(null, 1);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    char t[16], life[16];
    snprintf(t, sizeof(t), "%d", threads);
    snprintf(life, sizeof(life), "%d", lifetime);
    execl(spin, "spin", t, "1", life, (char *)NULL);
    _exit(127);
}

static void stop_hog(void)
{
    if (G.hog <= 0)
        return;
    kill(G.hog, SIGKILL);
    while (waitpid(G.hog, NULL, 0) < 0 && errno == EINTR)
        ;
    G.hog = 0;
}

struct latency_result {
    bool ran;
    char label[32];
    char why[200];
    double window_s, interval_s, threshold;
    int acting_level, reps_ok, threads;
    struct hog_run runs[MAX_REPS];
    int run_count;
};

static void latency_phase(const struct paths *P, const char *spin_copy, const char *name,
                          uint64_t window_s, int reps, int uid_block, int wait_others,
                          struct latency_result *L)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(L->label, sizeof(L->label), "window %llus", (unsigned long long)window_s);
    printf("\n# 1. detection to action, %s\n", L->label);
    /* The shipped threshold must be reachable: usage has to stay above it
     * (strictly), and a hog can use at most every core of the machine. */
    struct policy shipped;
    if (load_policy(P->main_conf, &shipped) < 0) {
        snprintf(L->why, sizeof(L->why), "the shipped config does not load");
        return;
    }
    double threshold = shipped.violation_cpu, shipped_cpu = shipped.violation_cpu;
    policy_free(&shipped);
    L->threads = (int)ncpu;
    char extra[512];
    int len = snprintf(extra, sizeof(extra), "[violation]\nwindow = %llus\n",
                       (unsigned long long)window_s);
    if (threshold > (double)ncpu - 0.5) {
        threshold = (double)ncpu / 2;
        snprintf(extra + len, sizeof(extra) - (size_t)len,
                 "# the shipped %g cores cannot be exceeded on %ld cores\ncpu = %g cores\n",
                 shipped_cpu, ncpu, threshold);
    }
    L->threshold = threshold;
    struct run_conf R;
    struct policy pol;
    if (make_run_conf(P, name, extra, &R) < 0 || load_policy(R.conf, &pol) < 0) {
        snprintf(L->why, sizeof(L->why), "cannot write or load the config in %s", R.dir);
        return;
    }
    L->window_s = (double)pol.window / 1e6;
    L->interval_s = (double)pol.sample_interval / 1e6;
    L->acting_level = first_acting_level(&pol);
    printf("  config: shipped, with [daemon] mode = enforce, backend = cgroupfs, cgroup_parent = "
           "%s, min_uid = %u;\n          [violation] window = %.0fs, cpu = %g cores\n",
           R.parent, LOAD_BASE_UID, L->window_s, pol.violation_cpu);
    if (pol.violation_cpu != shipped_cpu)
        printf("          (the shipped cpu = %g cores is out of reach on %ld cores: a hog of %ld "
               "threads stays at or below it, and only usage above it counts)\n",
               shipped_cpu, ncpu, ncpu);
    printf("  sample_interval %.0fs, scan_interval %.0fs; hog: spin %d (%d busy threads), a fresh"
           " uid >= %u each time\n",
           L->interval_s, (double)pol.scan_interval / 1e6, L->threads, L->threads, HOG_BASE_UID);
    for (size_t l = 1; l <= pol.level_count; l++)
        printf("  level %zu %-10s: cpu %g cores -> wanted cpu %g cores (quota %ld), memory %llu"
               " MiB%s\n",
               l, pol.levels[l - 1].name, pol.levels[l - 1].cpu, wanted_cpu(&pol, (int)l),
               quota_of(wanted_cpu(&pol, (int)l)),
               (unsigned long long)(wanted_memory(&pol, (int)l) >> 20),
               (int)l == L->acting_level ? "  <- first level that changes a limit" : "");
    printf("  standing share: cpu %g cores (quota %ld), memory %llu MiB, tasks %llu\n",
           pol.share_cpu, quota_of(pol.share_cpu), (unsigned long long)(pol.share_memory >> 20),
           (unsigned long long)pol.share_tasks);
    if (L->acting_level == 0) {
        snprintf(L->why, sizeof(L->why), "no level changes a limit: no limits_set to wait for");
        policy_free(&pol);
        return;
    }
    if (daemon_start(P, &R) < 0) {
        snprintf(L->why, sizeof(L->why), "the daemon did not start");
        policy_free(&pol);
        return;
    }
    L->ran = true;
    struct evlog ev = {R.event_log, 0};
    double I = L->interval_s, W = L->window_s;
    double timeout_s = L->acting_level * (W + 3 * I) + 4 * I + 15;
    int redone = 0;
    for (int k = 0; k < reps && !stopping; k++) {
        struct hog_run *r = &L->runs[L->run_count++];
        memset(r, 0, sizeof(*r));
        r->uid = HOG_BASE_UID + (uid_t)(uid_block * 200 + k + 20 * redone);
        r->adopted_s = r->violation_s = r->action_s = -1;
        /* Start at a random point of the sampling rhythm. */
        nap_ms(200 + random() % (long)(I * 1000));
        struct stat est;
        if (stat(R.event_log, &est) == 0)
            ev.offset = est.st_size; /* earlier hogs' events are done with */
        double busy0 = machine_busy_us(), own0 = own_cpu_all_us();
        uint64_t dticks0 = read_daemon(G.daemon).ticks;
        r->t0 = real_us();
        double m0 = wall_us(), checked = m0;
        r->pid = G.hog = start_hog(spin_copy, r->uid, L->threads, (int)timeout_s + 30);
        if (r->pid < 0) {
            G.hog = 0;
            snprintf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
            continue;
        }
        struct hog_watch w = {r, &pol, R.parent, false, false};
        while (!stopping && !w.saw_action && (wall_us() - m0) / 1e6 < timeout_s) {
            nap_ms(20);
            if (r->adopted_s < 0 && pid_in_procs(R.parent, r->uid, r->pid))
                r->adopted_s = (wall_us() - m0) / 1e6;
            evlog_poll(&ev, on_hog_event, &w);
            int st;
            if (waitpid(r->pid, &st, WNOHANG) == r->pid) {
                G.hog = 0;
                snprintf(r->why, sizeof(r->why), "the hog ended (status %#x)", st);
                break;
            }
            if (daemon_exited()) {
                snprintf(r->why, sizeof(r->why), "the daemon exited");
                print_daemon_log(&R);
                break;
            }
            if (wall_us() - checked > 1e6) {
                checked = wall_us();
                if ((r->disturbed_by = other_daemon()) != 0)
                    break;
            }
        }
        /* Others' load meanwhile: the machine's, less the hog, the daemon, us. */
        uint64_t hog_ticks = G.hog > 0 ? read_daemon(G.hog).ticks : 0;
        uint64_t dticks1 = G.daemon > 0 ? read_daemon(G.daemon).ticks : dticks0;
        double ticks_us = 1e6 / (double)sysconf(_SC_CLK_TCK);
        double others = (machine_busy_us() - busy0) - (own_cpu_all_us() - own0) -
                        (double)(hog_ticks + dticks1 - dticks0) * ticks_us;
        r->other_cores = others > 0 ? others / (wall_us() - m0) : 0;
        stop_hog();
        if (r->disturbed_by && !stopping) {
            printf(
                "  uid %u: another loginguardd (pid %d) started meanwhile (it would move the hog);"
                " this run does not count%s\n",
                (unsigned)r->uid, (int)r->disturbed_by, redone < 5 ? ", repeating it" : "");
            L->run_count--;
            if (redone++ < 5) {
                k--;
                if (wait_quiet(wait_others) < 0)
                    break;
            }
            continue;
        }
        if (!w.saw_action && !r->why[0])
            snprintf(r->why, sizeof(r->why), "%s within %.0f s",
                     w.saw_violation ? "no limits_set with level >= 1" : "no violation", timeout_s);
        r->ok = w.saw_violation && w.saw_action;
        L->reps_ok += r->ok;
        printf(
            "  uid %u: moved into user-%u after %.2f s; violation (level %d, a run of %.2f s) after"
            " %.2f s, quota then %ld (level %d wants %ld); limits_set level %d (cpu %g) after"
            " %.2f s, quota then %ld (wants %ld); others' load %.2f cores%s%s\n",
            (unsigned)r->uid, (unsigned)r->uid, r->adopted_s, r->violation_level, r->run_s,
            r->violation_s, r->quota_at_violation, r->violation_level, r->want_violation,
            r->action_level, r->action_cpu, r->action_s, r->quota_at_action, r->want_action,
            r->other_cores, r->why[0] ? "  -- " : "", r->why);
        if (G.daemon <= 0)
            break;
    }
    daemon_stop();
    if (remove_parent(R.parent) < 0)
        printf("  warning: some cgroups below %s could not be removed (listed above)\n", R.parent);
    policy_free(&pol);
}

static void print_latency(const struct latency_result *L)
{
    printf("\n== 1. detection to action, %s\n", L->label[0] ? L->label : "(not started)");
    if (!L->ran) {
        printf("  not run: %s\n", L->why[0] ? L->why : "interrupted");
        return;
    }
    double I = L->interval_s, W = L->window_s;
    int A = L->acting_level;
    double adopted[MAX_REPS], viol[MAX_REPS], act[MAX_REPS], gap[MAX_REPS];
    int n = 0, quota_ok = 0;
    for (int i = 0; i < L->run_count; i++) {
        const struct hog_run *r = &L->runs[i];
        if (!r->ok)
            continue;
        adopted[n] = r->adopted_s;
        viol[n] = r->violation_s;
        act[n] = r->action_s;
        gap[n] = r->action_s - r->violation_s;
        quota_ok +=
            r->quota_at_action == r->want_action && r->quota_at_violation == r->want_violation;
        n++;
    }
    printf("  %d of %d runs complete; hog: %d busy threads; threshold %g cores; window %.0f s;"
           " sample_interval %.0f s\n",
           n, L->run_count, L->threads, L->threshold, W, I);
    if (n == 0)
        return;
    double a[3], v[3], x[3], g[3];
    min_med_max(gap, n, g);
    min_med_max(adopted, n, a);
    min_med_max(viol, n, v);
    min_med_max(act, n, x);
    printf("                                         min   median      max   expected\n");
    printf("  hog start -> in its user's cgroup  %8.2f %8.2f %8.2f   (0, %.0f] s: the proc connector"
           " reports it\n",
           a[0], a[1], a[2], I);
    printf("  hog start -> violation (level 1)   %8.2f %8.2f %8.2f   (%.0f, %.0f] s = window +"
           " 0..1 interval\n",
           v[0], v[1], v[2], W, W + I);
    printf("  hog start -> limits_set level %d    %8.2f %8.2f %8.2f   (%.0f, %.0f] s = %d windows"
           " + 0..1 interval\n",
           A, x[0], x[1], x[2], A * W, A * W + I, A);
    printf("  violation -> limits_set            %8.2f %8.2f %8.2f   %.0f s = %d window%s\n",
           g[0], g[1], g[2], (A - 1) * W, A - 1, A > 2 ? "s" : "");
    printf("  cpu.cfs_quota_us when each event was seen held what the level wants: %d of %d runs\n",
           quota_ok, n);
    printf("  expected: a violation needs the usage above the threshold for a whole window,"
           " counted from the first\n"
           "  interval the user's cgroup counter covers.  The proc connector reports the hog as it"
           " starts and it is\n"
           "  moved into user-UID at once; the next sample (0..%.0f s) counts the new cgroup's"
           " whole first interval,\n"
           "  so violation = window + 0..1 interval.  Samples fall on a grid with wake-up jitter;"
           " 50 ms of slack at\n"
           "  the window's end keeps a hair-short window from waiting one more interval.  Level 1"
           " of the shipped\n"
           "  ladder (\"warned\") limits nothing beyond the share, so it writes nothing (no"
           " limits_set); the first\n"
           "  limits_set is at level %d, one more whole window later.\n",
           I, A);
}

/* ------------------------------------------------------------------ */
/* 2. the daemon's own cost with 10,000 processes in per-user cgroups   */

#define TIMED_PASS(acc, body)                                                                      \
    do {                                                                                           \
        nap_ms(20);                                                                                \
        double a_ = cpu_self_us();                                                                 \
        body;                                                                                      \
        (acc) += cpu_self_us() - a_;                                                               \
    } while (0)

struct load_result {
    bool ran, adopted, measured, inproc;
    char why[240];
    int procs, users;
    double spawn_s;
    double adopt_s; /* daemon start -> every process in its user's cgroup */
    long adopted_procs;
    int adopted_groups;
    double startup_cpu_ms, startup_hwm_mib;
    double window_s, cpu_pct, cpu_pct_ns, hwm_mib, rss_mib, anon_mib, file_mib, life_hwm_mib;
    bool hwm_reset;
    double other_cores;
    pid_t disturbed_by;   /* another loginguardd seen at the end of the window */
    double kthread_cores; /* of the other load: kernel threads */
    char kthread_top[160];
    long kept_procs; /* processes still in the user cgroups at its end */
    long events_in_window;
    char event_kinds[200];
    /* in-process */
    int samples;
    long proc_entries;
    size_t groups, tracked, users_seen;
    uint64_t tasks_seen;
    double first_ms, steady_us, steady_wall_us, steady_min_us, steady_max_us;
    double t_readdir, t_discover, t_read, t_sweep, t_empty;
    bool connector; /* the in-process sampler had the proc connector, as the daemon */
    uint64_t connector_events;
};

static void count_event_kinds(const char *path, off_t from, struct load_result *r)
{
    char *t = read_text(path, 1 << 20);
    r->events_in_window = 0;
    r->event_kinds[0] = '\0';
    if (!t)
        return;
    if ((size_t)from <= strlen(t)) {
        for (char *line = t + from, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
            *nl = '\0';
            json_t *e = json_loads(line, 0, NULL);
            const char *name = e ? json_string_value(json_object_get(e, "event")) : NULL;
            if (name) {
                r->events_in_window++;
                if (!strstr(r->event_kinds, name) &&
                    strlen(r->event_kinds) + strlen(name) + 3 < sizeof(r->event_kinds)) {
                    if (r->event_kinds[0])
                        strcat(r->event_kinds, ", ");
                    strcat(r->event_kinds, name);
                }
            }
            json_decref(e);
        }
    }
    free(t);
}

static void note_event(const struct pc_event *ev, void *arg)
{
    sampler_note_event(arg, ev);
}

/* Where a counter-path sample goes, measured in this process on the
 * cgroups the daemon made (it is stopped by then; they stay).  Like the
 * daemon, it takes new processes from the proc connector where it can
 * (reading the events of the whole node counts in the sample). */
static void load_inprocess(struct load_result *r, const struct policy *pol, const char *parent,
                           int samples)
{
    char cpu[1024], mem[1024], pids[1024];
    parent_dir(C_CPUACCT, parent, cpu, sizeof(cpu));
    parent_dir(C_MEMORY, parent, mem, sizeof(mem));
    parent_dir(C_PIDS, parent, pids, sizeof(pids));
    struct sampler s;
    struct snapshot snap = {0};
    struct counter_roots roots = {.version = 1, .cpu = cpu,
                                  .memory = ctl[C_MEMORY].found ? mem : NULL,
                                  .pids = ctl[C_PIDS].found ? pids : NULL};
    if (sampler_init(&s, "/proc", &roots) < 0 ||
        !s.use_counters) {
        snprintf(r->why, sizeof(r->why), "sampler_init on %.150s failed", cpu);
        return;
    }
    struct proc_connector pc;
    char pc_err[300];
    r->connector = pol->proc_connector && proc_connector_open(&pc, pc_err, sizeof(pc_err)) == 0;
    sampler_events_live(&s, r->connector);
    /* As the daemon starts: a sweep finds every process, then samples. */
    double a = cpu_self_us();
    sampler_sweep(&s, pol);
    sampler_sample(&s, pol, &snap);
    r->first_ms = (cpu_self_us() - a) / 1e3;
    double total = 0, wall = 0, lo = 1e18, hi = 0;
    for (int k = 0; k < samples && !stopping; k++) {
        nap_ms(20);
        double c0 = cpu_self_us(), w0 = wall_us();
        if (r->connector && proc_connector_drain(&pc, note_event, &s) > 0)
            sampler_note_lost(&s);
        sampler_sample(&s, pol, &snap);
        double t = cpu_self_us() - c0;
        wall += wall_us() - w0;
        total += t;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    r->samples = samples;
    r->steady_us = total / samples;
    r->steady_wall_us = wall / samples;
    r->steady_min_us = lo;
    r->steady_max_us = hi;
    r->groups = s.counters.count;
    r->tracked = s.proc_count;
    for (size_t i = 0; i < snap.user_count; i++) {
        r->users_seen++;
        r->tasks_seen += snap.users[i].tasks;
    }

    int reps = samples > 5 ? samples / 2 : 3;
    /* a. the /proc listing, as find_new_processes does it (its hash
     *    lookups of known pids aside, a few ns each) */
    DIR *d = opendir("/proc");
    long entries = 0, sink = 0;
    for (int k = 0; d && k < reps && !stopping; k++) {
        TIMED_PASS(r->t_readdir, {
            rewinddir(d);
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                    continue;
                sink += strtol(de->d_name, NULL, 10);
                entries++;
            }
        });
    }
    if (d)
        closedir(d);
    r->proc_entries = entries / reps;
    r->t_readdir /= reps;
    /* b. counters_discover: readdir of the parent, a binary search per entry */
    for (int k = 0; k < reps && !stopping; k++)
        TIMED_PASS(r->t_discover, counters_discover(&s.counters));
    r->t_discover /= reps;
    /* c. the counter reads, every group */
    struct user_usage use;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_PASS(r->t_read, {
            for (size_t i = 0; i < s.counters.count; i++)
                sink += counters_read(&s.counters, &s.counters.groups[i], &use);
        });
    }
    r->t_read /= reps;
    /* d. the sweep (every scan_interval) and the backend's empty-cgroup
     *    check (enforcer_remove_empty: cgroup.procs of each user, after it) */
    sampler_sweep(&s, pol);
    TIMED_PASS(r->t_sweep, sampler_sweep(&s, pol));
    TIMED_PASS(r->t_empty, {
        for (size_t i = 0; i < s.counters.count; i++) {
            char path[1400];
            snprintf(path, sizeof(path), "%s/user-%u/cgroup.procs", cpu,
                     (unsigned)s.counters.groups[i].uid);
            FILE *f = fopen(path, "re");
            if (f) {
                sink += fgetc(f);
                fclose(f);
            }
        }
    });
    if (sink == 42)
        fputc(' ', stderr);
    if (r->connector) {
        r->connector_events = pc.events;
        proc_connector_close(&pc);
    }
    sampler_free(&s);
    snapshot_free(&snap);
    r->inproc = !stopping;
}

/* Kernel threads, whose CPU is "other load" no process of ours accounts
 * for (on some VMs a kdamond scans memory harder the more processes
 * there are).  Found once, before a window: that listing is not cheap. */
#define MAX_KTHREADS 512
struct kthreads {
    int count;
    pid_t pid[MAX_KTHREADS];
    char comm[MAX_KTHREADS][COMM_LEN];
    uint64_t ticks[MAX_KTHREADS];
};

static bool read_stat_of(pid_t pid, struct proc_stat *st, unsigned long *flags)
{
    char buf[1024];
    if (!bench_read_stat(pid, st, buf, sizeof(buf)))
        return false;
    /* flags: the 9th field, the 6th after the comm's closing ')' */
    char *p = strrchr(buf, ')');
    *flags = 0;
    if (p)
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", flags);
    return true;
}

static void kthreads_find(struct kthreads *k)
{
    k->count = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL && k->count < MAX_KTHREADS) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        struct proc_stat st;
        unsigned long flags;
        pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);
        if (read_stat_of(pid, &st, &flags) && (flags & 0x00200000)) { /* PF_KTHREAD */
            k->pid[k->count] = pid;
            memcpy(k->comm[k->count], st.comm, COMM_LEN);
            k->ticks[k->count++] = st.utime + st.stime;
        }
    }
    if (d)
        closedir(d);
}

static void kthreads_mark(struct kthreads *k)
{
    for (int i = 0; i < k->count; i++) {
        struct proc_stat st;
        unsigned long flags;
        k->ticks[i] = read_stat_of(k->pid[i], &st, &flags) ? st.utime + st.stime : 0;
    }
}

/* The busiest kernel threads since kthreads_mark, as "name 0.77" text. */
static double kthreads_busiest(const struct kthreads *k, double seconds, char *out, size_t len)
{
    double total = 0, hz = (double)sysconf(_SC_CLK_TCK);
    double best[3] = {0, 0, 0};
    int who[3] = {-1, -1, -1};
    for (int i = 0; i < k->count; i++) {
        struct proc_stat st;
        unsigned long flags;
        if (!read_stat_of(k->pid[i], &st, &flags) || st.utime + st.stime < k->ticks[i])
            continue;
        double cores = (double)(st.utime + st.stime - k->ticks[i]) / hz / seconds;
        total += cores;
        for (int j = 0; j < 3; j++) {
            if (cores > best[j]) {
                for (int m = 2; m > j; m--) {
                    best[m] = best[m - 1];
                    who[m] = who[m - 1];
                }
                best[j] = cores;
                who[j] = i;
                break;
            }
        }
    }
    out[0] = '\0';
    for (int j = 0; j < 3 && who[j] >= 0 && best[j] >= 0.01; j++) {
        size_t used = strlen(out);
        snprintf(out + used, len - used, "%s%s %.2f", j ? ", " : "", k->comm[who[j]], best[j]);
    }
    return total;
}

static void load_phase(const struct paths *P, int procs, int users, int seconds, int samples,
                       int adopt_timeout, struct load_result *r)
{
    r->procs = procs;
    r->users = users;
    printf("\n# 2. the daemon's own cost: %d processes of %d users in per-user cgroups\n", procs,
           users);
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    if ((rlim_t)procs + 4 * (rlim_t)users + 64 > nofile.rlim_max) {
        snprintf(r->why, sizeof(r->why),
                 "RLIMIT_NOFILE hard limit %llu is too low for %d held"
                 " descriptors",
                 (unsigned long long)nofile.rlim_max, procs + 4 * users);
        printf("  skipped: %s\n", r->why);
        return;
    }
    struct run_conf R;
    struct policy pol;
    if (make_run_conf(P, "load", NULL, &R) < 0 || load_policy(R.conf, &pol) < 0) {
        snprintf(r->why, sizeof(r->why), "cannot write or load the config");
        printf("  skipped: %s\n", r->why);
        return;
    }
    printf(
        "  config: shipped, with [daemon] mode = enforce, backend = cgroupfs, cgroup_parent = %s,"
        " min_uid = %u\n  (sample_interval %.0fs, scan_interval %.0fs)\n",
        R.parent, LOAD_BASE_UID, (double)pol.sample_interval / 1e6,
        (double)pol.scan_interval / 1e6);
    double t0 = wall_us();
    struct nreply nr;
    free(spawn_idle(procs, users, LOAD_BASE_UID, &nr));
    r->spawn_s = (wall_us() - t0) / 1e6;
    if (nr.made != procs || nr.ready != procs) {
        snprintf(r->why, sizeof(r->why), "started %d of %d processes (%d ready): %s", nr.made,
                 procs, nr.ready, nr.err ? strerror(nr.err) : "?");
        printf("  skipped: %s\n", r->why);
        kill_idle();
        policy_free(&pol);
        return;
    }
    printf("  %d idle processes (uids %u..%u) started in %.2f s; starting the daemon\n", procs,
           LOAD_BASE_UID, LOAD_BASE_UID + (unsigned)users - 1, r->spawn_s);
    t0 = wall_us();
    if (daemon_start(P, &R) < 0) {
        snprintf(r->why, sizeof(r->why), "the daemon did not start");
        kill_idle();
        remove_parent(R.parent);
        policy_free(&pol);
        return;
    }
    r->ran = true;
    pid_t dpid = G.daemon;
    /* Every process in its user's cgroup (bounded). */
    double last_print = wall_us();
    while (!stopping) {
        r->adopted_procs = count_adopted(R.parent, &r->adopted_groups);
        if (r->adopted_procs >= procs) {
            r->adopted = true;
            break;
        }
        if (daemon_exited()) {
            snprintf(r->why, sizeof(r->why), "the daemon exited while moving the processes");
            print_daemon_log(&R);
            break;
        }
        if (wall_us() - t0 > adopt_timeout * 1e6) {
            snprintf(r->why, sizeof(r->why),
                     "after %d s only %ld of %d processes were in %d user"
                     " cgroups",
                     adopt_timeout, r->adopted_procs, procs, r->adopted_groups);
            break;
        }
        if (wall_us() - last_print > 10e6) {
            printf("  ... %ld of %d moved, %d user cgroups\n", r->adopted_procs, procs,
                   r->adopted_groups);
            last_print = wall_us();
        }
        nap_ms(200);
    }
    r->adopt_s = (wall_us() - t0) / 1e6;
    if (!r->adopted) {
        printf("  %s\n", r->why[0] ? r->why : "interrupted");
    } else {
        printf("  all %ld processes in %d user cgroups %.2f s after the daemon started\n",
               r->adopted_procs, r->adopted_groups, r->adopt_s);
        /* Settled: asleep between samples, nothing left from the start. */
        struct daemon_reading d = read_daemon(dpid);
        uint64_t last = d.ticks;
        int quiet = 0;
        double s0 = wall_us();
        while (!stopping && quiet < 4 && wall_us() - s0 < 20e6) {
            nap_ms(50);
            d = read_daemon(dpid);
            quiet = d.state == 'S' && d.ticks == last ? quiet + 1 : 0;
            last = d.ticks;
        }
        struct daemon_reading d0 = read_daemon(dpid);
        r->startup_cpu_ms = (double)d0.ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
        r->life_hwm_mib = r->startup_hwm_mib = status_mib(dpid, "VmHWM:");
        /* The peak from here on: "5" resets VmHWM (proc(5), clear_refs). */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)dpid);
        r->hwm_reset = write_text(path, "5") == 0;
        struct stat st;
        off_t ev_from = stat(R.event_log, &st) == 0 ? st.st_size : 0;
        static struct kthreads kt;
        kthreads_find(&kt);
        kthreads_mark(&kt);
        double busy0 = machine_busy_us(), own0 = cpu_self_us();
        double w0 = wall_us();
        printf("  measuring the daemon for %d s...\n", seconds);
        while (!stopping && wall_us() - w0 < seconds * 1e6) {
            double left_ms = (seconds * 1e6 - (wall_us() - w0)) / 1e3;
            nap_ms(left_ms > 200 ? 200 : (long)left_ms + 1);
            if (daemon_exited())
                break;
        }
        struct daemon_reading d1 = read_daemon(dpid);
        double w1 = wall_us();
        double busy1 = machine_busy_us(), own1 = cpu_self_us();
        if (!stopping && d1.alive) {
            r->hwm_mib = status_mib(dpid, "VmHWM:");
            r->rss_mib = status_mib(dpid, "VmRSS:");
            r->anon_mib = status_mib(dpid, "RssAnon:");
            r->file_mib = status_mib(dpid, "RssFile:");
            if (!r->hwm_reset && r->hwm_mib > r->life_hwm_mib)
                r->life_hwm_mib = r->hwm_mib;
            r->window_s = (w1 - w0) / 1e6;
            double dcpu = (double)(d1.ticks - d0.ticks) / (double)sysconf(_SC_CLK_TCK);
            r->cpu_pct = dcpu / r->window_s * 100.0;
            r->cpu_pct_ns = d0.run_ns && d1.run_ns
                                ? (double)(d1.run_ns - d0.run_ns) / 1e9 / r->window_s * 100.0
                                : -1;
            double others = (busy1 - busy0) - (own1 - own0) - dcpu * 1e6;
            r->other_cores = others > 0 ? others / (w1 - w0) : 0;
            r->kthread_cores =
                kthreads_busiest(&kt, r->window_s, r->kthread_top, sizeof(r->kthread_top));
            count_event_kinds(R.event_log, ev_from, r);
            int groups;
            r->kept_procs = count_adopted(R.parent, &groups);
            r->disturbed_by = other_daemon();
            r->measured = true;
        } else if (!stopping) {
            snprintf(r->why, sizeof(r->why), "the daemon exited during the window");
            print_daemon_log(&R);
        }
    }
    daemon_stop();
    if (r->adopted && !stopping) {
        printf("  in-process samples on the same cgroups...\n");
        load_inprocess(r, &pol, R.parent, samples);
    }
    kill_idle(); /* first: the cgroups must be empty to go */
    if (remove_parent(R.parent) < 0)
        printf("  warning: some cgroups below %s could not be removed (listed above)\n", R.parent);
    policy_free(&pol);
}

static void print_load(const struct load_result *r, int seconds)
{
    printf(
        "\n== 2. the daemon with %d processes of %d users in per-user cgroups (enforce, cgroupfs,"
        " sample_interval 2s)\n",
        r->procs, r->users);
    if (!r->ran) {
        printf("  not run: %s\n", r->why[0] ? r->why : "interrupted");
        return;
    }
    printf(
        "  start-up: every process moved into its user's cgroup %.2f s after the start"
        " (%ld processes, %d user cgroups);\n  %.0f ms CPU until settled, VmHWM %.2f MiB by then\n",
        r->adopt_s, r->adopted_procs, r->adopted_groups, r->startup_cpu_ms, r->startup_hwm_mib);
    if (r->measured) {
        printf("  window %.1f s (LG_BENCH_DAEMON_SECONDS=%d):\n", r->window_s, seconds);
        printf("    CPU: %.3f %% of one core from utime+stime", r->cpu_pct);
        if (r->cpu_pct_ns >= 0)
            printf(" (%.3f %% from schedstat)", r->cpu_pct_ns);
        printf("    target: under %.1f %%\n", TARGET_DAEMON_CPU_PCT);
        printf("    peak RSS in the window (VmHWM after a reset at its start) %.2f MiB%s; VmRSS at"
               " the end %.2f MiB (anon %.2f, file %.2f)\n",
               r->hwm_mib, r->hwm_reset ? "" : " (no reset: the life peak)", r->rss_mib,
               r->anon_mib, r->file_mib);
        if (r->disturbed_by || r->kept_procs < r->adopted_procs)
            printf("    DISTURBED: %ld of %ld processes left in the user cgroups at the end%s; "
                   "the figures are not the daemon's alone\n",
                   r->kept_procs, r->adopted_procs,
                   r->disturbed_by ? ", another loginguardd runs" : "");
        printf("    events in the window: %ld%s%s%s\n", r->events_in_window,
               r->event_kinds[0] ? " (" : "", r->event_kinds, r->event_kinds[0] ? ")" : "");
        printf("    other load on the machine meanwhile: %.2f cores, of which kernel threads %.2f"
               "%s%s%s\n",
               r->other_cores, r->kthread_cores, r->kthread_top[0] ? " (" : "", r->kthread_top,
               r->kthread_top[0] ? ")" : "");
        if (r->other_cores > 0.2)
            printf("    (not the daemon's: its figure is its own utime+stime; but it shares the"
                   " cores and caches)\n");
    } else if (r->why[0]) {
        printf("  not measured: %s\n", r->why);
    }
    if (r->inproc) {
        double s = r->steady_us;
        /* With the connector the sample lists no /proc. */
        double listing = r->connector ? 0 : r->t_readdir;
        double rest = s - listing - r->t_discover - r->t_read;
        printf("  one counter-path sample in this process (sampler_sample, same cgroups, same"
               " policy):\n");
        printf("    %.2f ms CPU (%.2f ms wall), mean of %d [min %.2f, max %.2f]; first sample"
               " after the start-up sweep %.0f ms\n",
               s / 1e3, r->steady_wall_us / 1e3, r->samples, r->steady_min_us / 1e3,
               r->steady_max_us / 1e3, r->first_ms);
        printf("    users in the snapshot %zu (tasks %llu), user cgroups %zu, tracked processes"
               " %zu\n",
               r->users_seen, (unsigned long long)r->tasks_seen, r->groups, r->tracked);
        printf("    where it goes (measured apart, ms CPU, share of the sample):\n");
        if (r->connector)
            printf("      new processes from the proc connector (%llu events read during the"
                   " samples; a /proc listing, not done, would cost %.3f ms: %ld entries)\n",
                   (unsigned long long)r->connector_events, r->t_readdir / 1e3, r->proc_entries);
        else
            printf("      /proc listing for new processes (%ld entries)  %7.3f  %5.1f %%  %.3f"
                   " us/entry\n",
                   r->proc_entries, r->t_readdir / 1e3, 100 * r->t_readdir / s,
                   r->proc_entries ? r->t_readdir / (double)r->proc_entries : 0);
        printf("      per-user counters: counters_discover        %7.3f  %5.1f %%  %.2f us/user\n",
               r->t_discover / 1e3, 100 * r->t_discover / s,
               r->groups ? r->t_discover / (double)r->groups : 0);
        printf("      per-user counters: counters_read            %7.3f  %5.1f %%  %.2f us/user\n",
               r->t_read / 1e3, 100 * r->t_read / s, r->groups ? r->t_read / (double)r->groups : 0);
        printf("      the rest, by difference (events, snapshot, walks over %zu tracked, names) %7.3f  "
               "%5.1f %%\n",
               r->tracked, rest / 1e3, 100 * rest / s);
        printf("    every scan_interval: sweep %.2f ms; the backend's empty-cgroup check, were every"
               " user looked at, %.2f ms (the daemon looks only at users whose task counter read"
               " 0)\n",
               r->t_sweep / 1e3, r->t_empty / 1e3);
        double per_min = 30 * s + 2 * r->t_sweep;
        printf(
            "    predicted from these: (30 samples + 2 sweeps) / 60 s = %.3f %% of one"
            " core (the sample alone: %.3f %%)\n",
            per_min / 60e6 * 100, 30 * s / 60e6 * 100);
        printf("    the sample's budget at the target: %.2f ms per %s\n",
               TARGET_DAEMON_CPU_PCT / 100 * 2e3, "2 s interval");
    }
}

/* ------------------------------------------------------------------ */

static void cleanup(void)
{
    stop_hog();
    daemon_stop();
    kill_idle();
    nursery_stop();
    for (int i = 0; i < G.parent_count; i++)
        remove_parent(G.parents[i]);
    G.parent_count = 0;
    remove_tmpdir();
}

int main(void)
{
    int rc = bench_start("bench_enforce", "it starts processes under other uids, runs the "
                                          "daemon in enforce mode and makes cgroups");
    if (rc != 0)
        return rc;
    double run_start = wall_us();
    srandom((unsigned)getpid() ^ (unsigned)time(NULL));

    bool do_latency = env_long("LG_BENCH_LATENCY", 1, 0, 1);
    int reps = (int)env_long("LG_BENCH_LATENCY_REPS", 3, 1, MAX_REPS);
    bool default_window = env_long("LG_BENCH_DEFAULT_WINDOW", 0, 0, 1);
    int seconds = (int)env_long("LG_BENCH_DAEMON_SECONDS", 60, 0, 86400);
    int procs = (int)env_long("LG_BENCH_PROCS", 10000, 1, MAX_CHILDREN - 1);
    int users = (int)env_long("LG_BENCH_USERS", 500, 1, 999);
    int samples = (int)env_long("LG_BENCH_SAMPLES", 20, 1, 10000);
    int adopt_timeout = (int)env_long("LG_BENCH_ADOPT_TIMEOUT", 300, 1, 86400);
    int wait_others = (int)env_long("LG_BENCH_WAIT_OTHERS", 600, 0, 86400);
    if (users > procs)
        users = procs;

    struct paths P;
    find_paths(&P);
    if (access(P.daemon, X_OK) < 0 || access(P.main_conf, R_OK) < 0 ||
        access(P.rules_dir, R_OK) < 0 || access(P.spin, X_OK) < 0) {
        printf("bench_enforce: cannot find %s, %s, %s or %s (build the tree, `make -C tests"
               " helpers/spin`; set LG_TOP_SRCDIR, LG_TOP_BUILDDIR); skipped\n",
               P.daemon, P.main_conf, P.rules_dir, P.spin);
        cleanup();
        return SKIP;
    }
    int missing = 0;
    for (int c = 0; c < C_COUNT; c++) {
        find_controller(ctl_names[c], &ctl[c]);
        missing += !ctl[c].found;
    }
    if (!ctl[C_CPU].found || !ctl[C_CPUACCT].found) {
        printf("bench_enforce: no cgroup v1 cpu and cpuacct controllers: the cgroupfs backend"
               " cannot run here; skipped\n");
        cleanup();
        return SKIP;
    }
    snprintf(G.tmpdir, sizeof(G.tmpdir), "/tmp/lgbench-enforce.XXXXXX");
    if (!mkdtemp(G.tmpdir) || chmod(G.tmpdir, 0755) < 0) {
        printf("bench_enforce: cannot make a temporary directory: %s; skipped\n", strerror(errno));
        G.tmpdir[0] = '\0';
        cleanup();
        return SKIP;
    }
    /* A copy the hogs' uids may run (the build tree may be closed to them). */
    char spin_copy[128];
    snprintf(spin_copy, sizeof(spin_copy), "%s/spin", G.tmpdir);
    if (copy_file(P.spin, spin_copy, 0755) < 0) {
        printf("bench_enforce: cannot copy %s: %s; skipped\n", P.spin, strerror(errno));
        cleanup();
        return SKIP;
    }

    struct utsname un;
    uname(&un);
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    printf("bench_enforce: %s %s, %ld CPUs, HZ %ld, RLIMIT_NOFILE %llu/%llu\n", un.sysname,
           un.release, sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_CLK_TCK),
           (unsigned long long)nofile.rlim_cur, (unsigned long long)nofile.rlim_max);
    printf("  daemon %s\n  shipped config %s\n", P.daemon, P.main_conf);
    for (int c = 0; c < C_COUNT; c++)
        printf("  v1 %-7s %s%s\n", ctl_names[c], ctl[c].found ? ctl[c].mount : "(not mounted)",
               ctl[c].found ? (ctl[c].own[0] ? ctl[c].own : "/") : "");
    if (missing)
        printf("  (a controller is missing: the backend sets no limits there)\n");

    static struct latency_result lat[2];
    static struct load_result load;
    load.procs = procs;
    load.users = users;
    static const char busy[] = "another loginguardd was running (it would move this benchmark's"
                               " processes)";
    if (do_latency && !stopping && wait_quiet(wait_others) < 0)
        snprintf(lat[0].why, sizeof(lat[0].why), "%s", busy);
    else if (do_latency && !stopping)
        latency_phase(&P, spin_copy, "latency10s", 10, reps, 0, wait_others, &lat[0]);
    if (do_latency && default_window && !stopping && wait_quiet(wait_others) < 0)
        snprintf(lat[1].why, sizeof(lat[1].why), "%s", busy);
    else if (do_latency && default_window && !stopping) {
        struct policy shipped;
        uint64_t w = 300;
        if (load_policy(P.main_conf, &shipped) == 0) {
            w = shipped.window / 1000000;
            policy_free(&shipped);
        }
        latency_phase(&P, spin_copy, "latencydefault", w, reps, 1, wait_others, &lat[1]);
    }
    if (seconds > 0 && !stopping && wait_quiet(wait_others) < 0)
        snprintf(load.why, sizeof(load.why), "%s", busy);
    else if (seconds > 0 && !stopping)
        load_phase(&P, procs, users, seconds, samples, adopt_timeout, &load);

    if (stopping)
        printf("\nbench_enforce: interrupted; cleaning up\n");
    cleanup();

    printf("\n================ results ================\n");
    if (do_latency) {
        print_latency(&lat[0]);
        if (default_window)
            print_latency(&lat[1]);
        else
            printf("\n== 1. detection to action with the shipped window (5m): skipped (it takes"
                   " about %d x 10 min; LG_BENCH_DEFAULT_WINDOW=1 runs it)\n",
                   reps);
    } else {
        printf("\n== 1. detection to action: skipped (LG_BENCH_LATENCY=0)\n");
    }
    if (seconds > 0)
        print_load(&load, seconds);
    else
        printf("\n== 2. the daemon's own cost: skipped (LG_BENCH_DAEMON_SECONDS=0)\n");
    printf("\ntotal run time: %.1f s\n", (wall_us() - run_start) / 1e6);
    return 0;
}
