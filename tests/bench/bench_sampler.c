/* bench_sampler: what loginguard's sampling costs on this machine.
 *
 * For each configuration (processes / users) the benchmark starts that many
 * idle processes (pause()) under uids 61000.., then measures
 *   1. one /proc-path sample (sampler_sample, counter_version -1): CPU
 *      microseconds per process, the first (discovering) sample apart;
 *   2. one counter-path sample against per-user v1 cgroups (cpuacct,
 *      memory, pids) that it creates below its own cgroups: CPU per user;
 *   3. the real loginguardd on the /proc path at the default intervals:
 *      its CPU share of one core and its peak RSS over a window;
 *   4. `ps -eo pid,user,pcpu,rss,comm` over the same processes, for scale.
 * It prints figures and the design targets beside them, never pass/fail.
 * Exit status: 0, or 77 when it cannot run at all (not root, ...).
 *
 * Environment:
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR   the trees (default: the configured ones)
 *   LG_BENCH_CONFIGS                 "1000/50,5000/500,10000/500"
 *   LG_BENCH_SAMPLES                 steady-state samples averaged (20)
 *   LG_BENCH_PS_RUNS                 timed ps runs (5)
 *   LG_BENCH_DAEMON_SECONDS          daemon window per configuration (60; 0 skips)
 *
 * The processes are forked by a small "nursery" process forked before the
 * benchmark allocates anything; it kills (by pid) and reaps them on
 * request, and on its own when the benchmark goes away.  Every cgroup
 * made here is named lgbench-PID/user-UID and removed leaf-first. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
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

extern char **environ;

#define BASE_UID 61000u
#define MAX_CONFIGS 8

/* Targets printed beside the figures (the design's, not verdicts). */
#define TARGET_US_PER_PROC 1.5
#define TARGET_US_PER_USER 3.0
#define TARGET_DAEMON_CPU_PCT 1.0
#define TARGET_DAEMON_RSS_MIB 8.0

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

struct cpu {
    double user, sys, wall; /* usec */
};

static struct cpu cpu_self(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    struct cpu c = {tv_us(r.ru_utime), tv_us(r.ru_stime), wall_us()};
    return c;
}

static struct cpu cpu_children(void)
{
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    struct cpu c = {tv_us(r.ru_utime), tv_us(r.ru_stime), wall_us()};
    return c;
}

static double cpu_total(struct cpu a, struct cpu b)
{
    return (b.user - a.user) + (b.sys - a.sys);
}

static long env_long(const char *name, long def, long min, long max)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < min || x > max) {
        fprintf(stderr, "bench_sampler: ignoring %s=%s (want %ld..%ld)\n", name, v, min, max);
        return def;
    }
    return x;
}

static long meminfo_kib(const char *key)
{
    char *t = read_text("/proc/meminfo", 16384);
    long v = -1;
    if (t) {
        char *p = strstr(t, key);
        if (p)
            v = strtol(p + strlen(key) + 1, NULL, 10);
        free(t);
    }
    return v;
}

/* CPU of this process and its reaped children, usec. */
static double own_cpu_us(void)
{
    struct cpu a = cpu_self(), b = cpu_children();
    return a.user + a.sys + b.user + b.sys;
}

/* Cores' worth of work done by others between two readings. */
struct load {
    double busy, own, wall;
};

static struct load load_now(void)
{
    struct load l = {machine_busy_us(), own_cpu_us(), wall_us()};
    return l;
}

static double other_cores(struct load a, struct load b, double extra_own_us)
{
    double others = (b.busy - a.busy) - (b.own - a.own) - extra_own_us;
    return b.wall > a.wall && others > 0 ? others / (b.wall - a.wall) : 0;
}

static long read_long_file(const char *path)
{
    char *t = read_text(path, 64);
    long v = t ? strtol(t, NULL, 10) : -1;
    free(t);
    return v;
}

static struct {
    pid_t daemon;
    char tmpdir[64];
    char **cg_dirs; /* cgroups made here, in creation order */
    size_t cg_count, cg_capacity;
} G = {0, "", NULL, 0, 0};

/* ------------------------------------------------------------------ */
/* cgroups made here                                                    */

struct controller {
    const char *name;
    char mount[256];
    char own[512];
    char base[1024]; /* mount + own + /lgbench-PID */
    bool found;
};

static void find_controller(struct controller *c)
{
    c->found = false;
    FILE *f = fopen("/proc/self/mounts", "re");
    char line[1024];
    while (f && fgets(line, sizeof(line), f)) {
        char dev[256], dir[256], type[64], opts[512];
        if (sscanf(line, "%255s %255s %63s %511s", dev, dir, type, opts) == 4 &&
            strcmp(type, "cgroup") == 0 && has_token(opts, c->name)) {
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
        if (has_token(a + 1, c->name)) {
            snprintf(c->own, sizeof(c->own), "%s", strcmp(b + 1, "/") == 0 ? "" : b + 1);
            c->found = true;
            break;
        }
    }
    if (f)
        fclose(f);
    if (c->found)
        snprintf(c->base, sizeof(c->base), "%s%s/lgbench-%d", c->mount, c->own, (int)getpid());
}

static int cg_mkdir(const char *path)
{
    if (mkdir(path, 0755) < 0)
        return -1;
    if (G.cg_count == G.cg_capacity) {
        G.cg_capacity = G.cg_capacity ? G.cg_capacity * 2 : 256;
        G.cg_dirs = realloc(G.cg_dirs, G.cg_capacity * sizeof(*G.cg_dirs));
        if (!G.cg_dirs)
            abort();
    }
    G.cg_dirs[G.cg_count++] = strdup(path);
    return 0;
}

/* Leaf-first: the reverse of creation order.  Their processes are dead. */
static int cg_remove_all(void)
{
    int failed = 0;
    while (G.cg_count > 0) {
        char *d = G.cg_dirs[--G.cg_count];
        int tries = 0;
        while (rmdir(d) < 0 && errno == EBUSY && tries++ < 100)
            nap_ms(20);
        if (access(d, F_OK) == 0) {
            fprintf(stderr, "bench_sampler: could not remove cgroup %s: %s\n", d,
                    strerror(errno));
            failed++;
        }
        free(d);
    }
    return failed ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* paths, the temporary config                                          */

struct paths {
    char srcdir[1024], builddir[1024];
    char daemon[1100], main_conf[1100], rules_dir[1100];
    char conf[128], event_log[128], daemon_log[128];
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
    if (G.tmpdir[0] && strncmp(G.tmpdir, "/tmp/lgbench.", 13) == 0)
        nftw(G.tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    G.tmpdir[0] = '\0';
}

static int make_tmp_config(struct paths *P)
{
    snprintf(G.tmpdir, sizeof(G.tmpdir), "/tmp/lgbench.XXXXXX");
    if (!mkdtemp(G.tmpdir)) {
        G.tmpdir[0] = '\0';
        return -1;
    }
    snprintf(P->conf, sizeof(P->conf), "%s/loginguard.conf", G.tmpdir);
    snprintf(P->event_log, sizeof(P->event_log), "%s/events.jsonl", G.tmpdir);
    snprintf(P->daemon_log, sizeof(P->daemon_log), "%s/daemon.log", G.tmpdir);
    char *main_text = read_text(P->main_conf, 1 << 20);
    if (!main_text)
        return -1;
    int rc = write_text(P->conf, main_text);
    free(main_text);
    char path[256], text[4096];
    snprintf(path, sizeof(path), "%s/conf.d", G.tmpdir);
    if (rc < 0 || mkdir(path, 0755) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/conf.d/bench.conf", G.tmpdir);
    snprintf(text, sizeof(text),
             "# written by bench_sampler\n"
             "[daemon]\n"
             "event_log = %s\n"
             "rules_dirs = %s\n"
             "state_dir = %s/state\n"
             "control_socket = %s/control.sock\n",
             P->event_log, P->rules_dir, G.tmpdir, G.tmpdir);
    return write_text(path, text);
}

static void find_paths(struct paths *P)
{
    const char *src = getenv("LG_TOP_SRCDIR"), *build = getenv("LG_TOP_BUILDDIR");
    char exe_top[1024] = "";
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        /* TOP/tests/bench/bench_sampler */
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
             build && *build ? build : exe_top[0] ? exe_top : P->srcdir);
    snprintf(P->daemon, sizeof(P->daemon), "%s/daemon/loginguardd", P->builddir);
    snprintf(P->main_conf, sizeof(P->main_conf), "%s/rules/loginguard.conf", P->srcdir);
    snprintf(P->rules_dir, sizeof(P->rules_dir), "%s/rules/rules.d", P->srcdir);
}

/* ------------------------------------------------------------------ */
/* results                                                              */

struct result {
    int procs, users;
    bool spawned;
    char why[200];
    double spawn_s;
    long kib_per_child;

    /* 1. /proc path */
    bool proc_ok;
    double first_us, first_wall_us;       /* whole first sample */
    double steady_us, steady_wall_us;     /* per sample, mean */
    double steady_min_us, steady_max_us;  /* per sample */
    uint64_t procs_read;
    size_t users_seen;
    uint64_t tasks_seen;
    double sweep_us;
    /* where a steady sample goes, usec per process */
    bool bd_ok;
    long dir_entries;
    double bd_readdir, bd_pread, bd_parse, bd_finduser;

    /* 2. counter path */
    bool cnt_ok;
    char cnt_why[200];
    double move_s;
    double cnt_first_us, cnt_steady_us, cnt_wall_us;
    size_t cnt_users;
    uint64_t cnt_tasks;
    double bd_discover, bd_cpuacct, bd_memstat, bd_memparse, bd_pids;

    /* 3. daemon */
    bool d_ok;
    char d_why[200];
    double d_window_s, d_cpu_pct, d_cpu_pct_ns, d_startup_ms, d_hwm_mib, d_rss_mib;
    double d_anon_mib, d_file_mib;
    char d_path[40];

    /* 4. ps */
    bool ps_ok;
    int ps_runs;
    double ps_cpu_us, ps_wall_us;
    long ps_lines;

    /* other load on the machine (cores), which the figures suffer from */
    double other_cores, d_other_cores;
};

/* ------------------------------------------------------------------ */
/* 1. the /proc path                                                    */

/* The CPU of one pass of body, after the same short pause the samples get
 * (a pass straight after another runs on warmer caches than a sample). */
#define TIMED_PASS(acc, body)                                                                      \
    do {                                                                                           \
        nap_ms(20);                                                                                \
        struct cpu a_ = cpu_self();                                                                \
        body;                                                                                      \
        struct cpu b_ = cpu_self();                                                                \
        (acc) += cpu_total(a_, b_);                                                                \
    } while (0)

static void proc_breakdown(struct result *r, const pid_t *pids, int n, struct snapshot *snap,
                           int reps)
{
    /* readdir of /proc, as sample_procfs does it */
    DIR *d = opendir("/proc");
    if (!d)
        return;
    long entries = 0;
    double t_readdir = 0, t_pread = 0, t_parse = 0, t_find = 0;
    for (int k = 0; k < reps; k++) {
        TIMED_PASS(t_readdir, {
            rewinddir(d);
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                    continue;
                entries += strtol(de->d_name, NULL, 10) > 0;
            }
        });
    }
    closedir(d);
    r->dir_entries = entries / reps;
    r->bd_readdir = t_readdir / reps / n;

    /* pread of held /proc/PID/stat descriptors */
    int *fds = malloc((size_t)n * sizeof(int));
    char(*bufs)[1024] = malloc((size_t)n * sizeof(*bufs));
    ssize_t *lens = malloc((size_t)n * sizeof(ssize_t));
    if (!fds || !bufs || !lens)
        abort();
    int open_count = 0;
    for (int i = 0; i < n; i++) {
        char name[40];
        snprintf(name, sizeof(name), "/proc/%d/stat", (int)pids[i]);
        fds[i] = open(name, O_RDONLY | O_CLOEXEC);
        open_count += fds[i] >= 0;
    }
    for (int k = 0; k < reps; k++) {
        TIMED_PASS(t_pread, {
            for (int i = 0; i < n; i++)
                lens[i] = fds[i] >= 0 ? procfs_pread(fds[i], bufs[i], sizeof(bufs[i]) - 1) : -1;
        });
    }
    r->bd_pread = t_pread / reps / n;
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);

    /* parsing the text */
    struct proc_stat st;
    uint64_t sink = 0;
    for (int k = 0; k < reps; k++) {
        TIMED_PASS(t_parse, {
            for (int i = 0; i < n; i++)
                if (lens[i] > 0 && procfs_parse_stat(bufs[i], (size_t)lens[i], &st) == 0)
                    sink += st.utime;
        });
    }
    r->bd_parse = t_parse / reps / n;

    /* add_details: one snapshot_find_user (a linear search) per process */
    for (int k = 0; k < reps; k++) {
        TIMED_PASS(t_find, {
            for (int i = 0; i < n; i++)
                sink += snapshot_find_user(snap, BASE_UID + (uid_t)(i % r->users)) != NULL;
        });
    }
    r->bd_finduser = t_find / reps / n;
    if (sink == 42)
        fputc(' ', stderr); /* keep the loops */
    free(fds);
    free(bufs);
    free(lens);
    r->bd_ok = open_count == n;
}

static void bench_procfs(struct result *r, const struct policy *pol, const pid_t *pids,
                         int samples)
{
    struct sampler s;
    struct snapshot snap = {0};
    struct counter_roots proc_only = {0};
    if (sampler_init(&s, "/proc", &proc_only) < 0) {
        snprintf(r->why, sizeof(r->why), "sampler_init failed");
        return;
    }
    struct cpu a = cpu_self();
    sampler_sample(&s, pol, &snap);
    struct cpu b = cpu_self();
    r->first_us = cpu_total(a, b);
    r->first_wall_us = b.wall - a.wall;

    double total = 0, wall = 0, lo = 1e18, hi = 0;
    for (int k = 0; k < samples && !stopping; k++) {
        nap_ms(20);
        a = cpu_self();
        sampler_sample(&s, pol, &snap);
        b = cpu_self();
        double t = cpu_total(a, b);
        total += t;
        wall += b.wall - a.wall;
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    r->steady_us = total / samples;
    r->steady_wall_us = wall / samples;
    r->steady_min_us = lo;
    r->steady_max_us = hi;
    r->procs_read = s.stats.procs_read;
    r->users_seen = 0;
    r->tasks_seen = 0;
    for (size_t i = 0; i < snap.user_count; i++) {
        if (snap.users[i].uid >= BASE_UID && snap.users[i].uid < BASE_UID + (uid_t)r->users) {
            r->users_seen++;
            r->tasks_seen += snap.users[i].tasks;
        }
    }
    r->proc_ok = !stopping;

    /* The full sweep (every scan_interval in the daemon), for the record. */
    if (!stopping) {
        a = cpu_self();
        sampler_sweep(&s, pol);
        b = cpu_self();
        r->sweep_us = cpu_total(a, b);
        sampler_sample(&s, pol, &snap); /* the daemon samples right after */
    }
    sampler_free(&s); /* gives back the held descriptors for the breakdown */
    if (!stopping)
        proc_breakdown(r, pids, r->procs, &snap, samples > 5 ? samples / 2 : 3);
    snapshot_free(&snap);
}

/* ------------------------------------------------------------------ */
/* 2. the counter path                                                  */

static void bench_counters(struct result *r, const struct policy *pol, const pid_t *pids,
                           int samples, struct controller ctl[3])
{
    for (int c = 0; c < 3; c++) {
        if (!ctl[c].found) {
            snprintf(r->cnt_why, sizeof(r->cnt_why), "no v1 %s controller", ctl[c].name);
            return;
        }
    }
    /* lgbench-PID below our own cgroup, user-UID below it, per controller */
    char path[1200];
    for (int c = 0; c < 3; c++) {
        if (cg_mkdir(ctl[c].base) < 0) {
            snprintf(r->cnt_why, sizeof(r->cnt_why), "mkdir %.150s: %s", ctl[c].base,
                     strerror(errno));
            return;
        }
        for (int u = 0; u < r->users; u++) {
            snprintf(path, sizeof(path), "%s/user-%u", ctl[c].base, BASE_UID + (unsigned)u);
            if (cg_mkdir(path) < 0) {
                snprintf(r->cnt_why, sizeof(r->cnt_why), "mkdir %.150s: %s", path, strerror(errno));
                return;
            }
        }
    }
    /* move every process into its user's group, one pid per write */
    double t0 = wall_us();
    int moved = 0, failed = 0;
    int *fds = malloc((size_t)r->users * sizeof(int));
    if (!fds)
        abort();
    for (int c = 0; c < 3 && !stopping; c++) {
        for (int u = 0; u < r->users; u++) {
            snprintf(path, sizeof(path), "%s/user-%u/cgroup.procs", ctl[c].base,
                     BASE_UID + (unsigned)u);
            fds[u] = open(path, O_WRONLY | O_CLOEXEC);
        }
        for (int i = 0; i < r->procs; i++) {
            int fd = fds[i % r->users];
            char num[24];
            int len = snprintf(num, sizeof(num), "%d", (int)pids[i]);
            if (fd >= 0 && write(fd, num, (size_t)len) == len)
                moved++;
            else
                failed++;
        }
        for (int u = 0; u < r->users; u++)
            if (fds[u] >= 0)
                close(fds[u]);
    }
    free(fds);
    r->move_s = (wall_us() - t0) / 1e6;
    if (failed) {
        snprintf(r->cnt_why, sizeof(r->cnt_why), "%d of %d moves into the user cgroups failed",
                 failed, moved + failed);
        return;
    }
    if (stopping)
        return;

    struct sampler s;
    struct snapshot snap = {0};
    struct counter_roots roots = {.version = 1, .cpu = ctl[0].base, .memory = ctl[1].base,
                                  .pids = ctl[2].base};
    if (sampler_init(&s, "/proc", &roots) < 0 ||
        !s.use_counters) {
        snprintf(r->cnt_why, sizeof(r->cnt_why), "sampler_init with counters failed");
        return;
    }
    struct cpu a = cpu_self();
    sampler_sample(&s, pol, &snap);
    struct cpu b = cpu_self();
    r->cnt_first_us = cpu_total(a, b);
    double total = 0, wall = 0;
    for (int k = 0; k < samples && !stopping; k++) {
        nap_ms(20);
        a = cpu_self();
        sampler_sample(&s, pol, &snap);
        b = cpu_self();
        total += cpu_total(a, b);
        wall += b.wall - a.wall;
    }
    r->cnt_steady_us = total / samples;
    r->cnt_wall_us = wall / samples;
    r->cnt_users = snap.user_count;
    r->cnt_tasks = 0;
    for (size_t i = 0; i < snap.user_count; i++)
        r->cnt_tasks += snap.users[i].tasks;

    /* where it goes: the same reads counters_read does, one kind at a time */
    int reps = samples > 5 ? samples / 2 : 3;
    size_t ng = s.counters.count;
    char buf[4096];
    uint64_t sink = 0;
    double t_disc = 0, t_cpu = 0, t_mem = 0, t_parse = 0, t_pids = 0;
    if (ng > 0 && !stopping) {
        for (int k = 0; k < reps; k++)
            TIMED_PASS(t_disc, counters_discover(&s.counters));
        r->bd_discover = t_disc / reps / (double)ng;
        ng = s.counters.count;
        struct user_cgroup *g = s.counters.groups;
        for (int k = 0; k < reps; k++) {
            TIMED_PASS(t_cpu, {
                for (size_t i = 0; i < ng; i++)
                    sink += (uint64_t)procfs_pread(g[i].cpu_fd, buf, 63);
            });
        }
        r->bd_cpuacct = t_cpu / reps / (double)ng;
        ssize_t len = 0;
        for (int k = 0; k < reps; k++) {
            TIMED_PASS(t_mem, {
                for (size_t i = 0; i < ng; i++)
                    if (g[i].memory_fd >= 0)
                        len = procfs_pread(g[i].memory_fd, buf, sizeof(buf));
            });
        }
        r->bd_memstat = t_mem / reps / (double)ng;
        uint64_t v = 0;
        for (int k = 0; k < reps; k++) {
            TIMED_PASS(t_parse, {
                for (size_t i = 0; i < ng && len > 0; i++) {
                    counters_stat_value(buf, (size_t)len, "total_rss", &v);
                    counters_stat_value(buf, (size_t)len, "total_mapped_file", &v);
                    sink += v;
                }
            });
        }
        r->bd_memparse = t_parse / reps / (double)ng;
        for (int k = 0; k < reps; k++) {
            TIMED_PASS(t_pids, {
                for (size_t i = 0; i < ng; i++)
                    if (g[i].pids_fd >= 0)
                        sink += (uint64_t)procfs_pread(g[i].pids_fd, buf, 63);
            });
        }
        r->bd_pids = t_pids / reps / (double)ng;
    }
    if (sink == 42)
        fputc(' ', stderr);
    sampler_free(&s);
    snapshot_free(&snap);
    r->cnt_ok = !stopping;
}

/* ------------------------------------------------------------------ */
/* 3. the daemon                                                        */

static bool daemon_exited(void)
{
    int st;
    pid_t w = waitpid(G.daemon, &st, WNOHANG);
    if (w == G.daemon) {
        G.daemon = 0;
        return true;
    }
    return false;
}

static void daemon_stop(void)
{
    if (G.daemon <= 0)
        return;
    kill(G.daemon, SIGTERM);
    for (int i = 0; i < 100 && G.daemon > 0; i++) {
        if (daemon_exited())
            return;
        nap_ms(50);
    }
    if (G.daemon > 0) {
        kill(G.daemon, SIGKILL);
        while (waitpid(G.daemon, NULL, 0) < 0 && errno == EINTR)
            ;
        G.daemon = 0;
    }
}

static void print_daemon_log(const struct paths *P)
{
    char *t = read_text(P->daemon_log, 4000);
    if (t && *t)
        printf("  daemon output:\n%s\n", t);
    free(t);
}

static void bench_daemon(struct result *r, const struct paths *P, int seconds)
{
    write_text(P->event_log, "");
    write_text(P->daemon_log, "");
    pid_t bench = getpid();
    pid_t p = fork();
    if (p < 0) {
        snprintf(r->d_why, sizeof(r->d_why), "fork: %s", strerror(errno));
        return;
    }
    if (p == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != bench)
            _exit(0);
        int in = open("/dev/null", O_RDONLY);
        int out = open(P->daemon_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (in < 0 || out < 0)
            _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(out, 2);
        char *argv[] = {(char *)"loginguardd", (char *)"--foreground", (char *)"--config",
                        (char *)P->conf, NULL};
        execv(P->daemon, argv);
        _exit(127);
    }
    G.daemon = p;
    setpgid(p, p);

    /* Settled: the start-up sweep and first sample done, asleep in ppoll. */
    double start = wall_us();
    struct daemon_reading d = read_daemon(p);
    uint64_t last_ticks = d.ticks;
    int quiet = 0;
    while (!stopping) {
        nap_ms(50);
        if (daemon_exited()) {
            snprintf(r->d_why, sizeof(r->d_why), "the daemon exited during start-up");
            print_daemon_log(P);
            return;
        }
        d = read_daemon(p);
        quiet = (d.state == 'S' && d.ticks == last_ticks) ? quiet + 1 : 0;
        last_ticks = d.ticks;
        double waited = (wall_us() - start) / 1e6;
        if ((quiet >= 4 && waited >= 0.5) || waited > 20)
            break;
    }
    if (stopping) {
        daemon_stop();
        return;
    }
    struct daemon_reading d0 = read_daemon(p);
    struct load l0 = load_now();
    double t0 = wall_us();
    r->d_startup_ms = (double)d0.ticks * 1000.0 / (double)sysconf(_SC_CLK_TCK);
    while (!stopping && wall_us() - t0 < seconds * 1e6) {
        double left_ms = (seconds * 1e6 - (wall_us() - t0)) / 1e3;
        nap_ms(left_ms > 200 ? 200 : (long)left_ms + 1);
        if (daemon_exited()) {
            snprintf(r->d_why, sizeof(r->d_why), "the daemon exited during the window");
            print_daemon_log(P);
            return;
        }
    }
    struct daemon_reading d1 = read_daemon(p);
    struct load l1 = load_now();
    double t1 = wall_us();
    r->d_hwm_mib = status_mib(p, "VmHWM:");
    r->d_rss_mib = status_mib(p, "VmRSS:");
    r->d_anon_mib = status_mib(p, "RssAnon:");
    r->d_file_mib = status_mib(p, "RssFile:");
    daemon_stop();
    if (stopping)
        return;
    r->d_window_s = (t1 - t0) / 1e6;
    r->d_cpu_pct = (double)(d1.ticks - d0.ticks) / (double)sysconf(_SC_CLK_TCK) /
                   r->d_window_s * 100.0;
    r->d_other_cores =
        other_cores(l0, l1, (double)(d1.ticks - d0.ticks) * 1e6 / (double)sysconf(_SC_CLK_TCK));
    r->d_cpu_pct_ns = d0.run_ns && d1.run_ns
                          ? (double)(d1.run_ns - d0.run_ns) / 1e9 / r->d_window_s * 100.0
                          : -1;
    /* Which path did it take?  daemon_started says "... /proc sampling". */
    char *ev = read_text(P->event_log, 1 << 20);
    snprintf(r->d_path, sizeof(r->d_path), "?");
    if (ev) {
        if (strstr(ev, "/proc sampling"))
            snprintf(r->d_path, sizeof(r->d_path), "/proc");
        else if (strstr(ev, "per-user cgroup sampling"))
            snprintf(r->d_path, sizeof(r->d_path), "cgroup counters");
        free(ev);
    }
    r->d_ok = true;
}

/* ------------------------------------------------------------------ */
/* 4. ps                                                                */

static int run_ps_once(double *cpu_us, double *wall, long *lines)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    char *argv[] = {(char *)"ps", (char *)"-eo", (char *)"pid,user,pcpu,rss,comm", NULL};
    struct cpu a = cpu_children();
    pid_t pid;
    int rc = posix_spawnp(&pid, "ps", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    if (rc != 0) {
        close(pfd[0]);
        errno = rc;
        return -1;
    }
    char buf[65536];
    long n_lines = 0;
    for (;;) {
        ssize_t n = read(pfd[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            n_lines += buf[i] == '\n';
    }
    close(pfd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    struct cpu b = cpu_children();
    *cpu_us = cpu_total(a, b);
    *wall = b.wall - a.wall;
    *lines = n_lines;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void bench_ps(struct result *r, int runs)
{
    double cpu, wall, total = 0, total_wall = 0;
    long lines = 0;
    if (run_ps_once(&cpu, &wall, &lines) < 0) /* warm-up, untimed */
        return;
    int done = 0;
    for (int k = 0; k < runs && !stopping; k++) {
        if (run_ps_once(&cpu, &wall, &lines) < 0)
            return;
        total += cpu;
        total_wall += wall;
        done++;
    }
    if (done == 0)
        return;
    r->ps_runs = done;
    r->ps_cpu_us = total / done;
    r->ps_wall_us = total_wall / done;
    r->ps_lines = lines;
    r->ps_ok = true;
}

/* ------------------------------------------------------------------ */
/* the report                                                           */

static void print_table(const struct result *res, int count, int daemon_seconds)
{
    printf("\n");
    printf("procs users | /proc sample: us/proc (first) | counters: us/user | "
           "ps: us/proc  ratio | daemon %ds: cpu%%   rss\n",
           daemon_seconds);
    printf("------------+-------------------------------+-------------------+"
           "--------------------+--------------------------\n");
    for (int i = 0; i < count; i++) {
        const struct result *r = &res[i];
        char c1[64] = "n/a", c2[32] = "n/a", c3[40] = "n/a", c4[48] = "n/a";
        if (r->proc_ok)
            snprintf(c1, sizeof(c1), "%6.2f (%6.2f)", r->steady_us / r->procs,
                     r->first_us / r->procs);
        if (r->cnt_ok)
            snprintf(c2, sizeof(c2), "%6.2f", r->cnt_steady_us / r->users);
        if (r->ps_ok) {
            double per = r->ps_cpu_us / r->procs;
            if (r->proc_ok && r->steady_us > 0)
                snprintf(c3, sizeof(c3), "%7.2f %6.1fx", per,
                         per / (r->steady_us / r->procs));
            else
                snprintf(c3, sizeof(c3), "%7.2f    n/a", per);
        }
        if (r->d_ok)
            snprintf(c4, sizeof(c4), "%6.3f%% %5.2f MiB", r->d_cpu_pct, r->d_hwm_mib);
        else if (daemon_seconds == 0)
            snprintf(c4, sizeof(c4), "skipped");
        printf("%5d %5d | %-29s | %-17s | %-18s | %s\n", r->procs, r->users, c1, c2, c3, c4);
    }
    printf("------------+-------------------------------+-------------------+"
           "--------------------+--------------------------\n");
    printf("target      | <= %.1f                        | <= %.0f              |"
           "                    | < %.0f%%    < %.0f MiB\n",
           TARGET_US_PER_PROC, TARGET_US_PER_USER, TARGET_DAEMON_CPU_PCT,
           TARGET_DAEMON_RSS_MIB);
    printf("(CPU = user+sys from getrusage; /proc: steady state = mean of the samples after "
           "the first;\n ratio = ps per-process CPU / loginguard steady per-process CPU; "
           "daemon rss = VmHWM)\n");
}

static void print_details(const struct result *r, int samples)
{
    printf("\n== %d processes / %d users\n", r->procs, r->users);
    if (!r->spawned) {
        printf("  not run: %s\n", r->why);
        return;
    }
    printf("  spawn: %.2f s, ~%ld KiB of memory per idle process\n", r->spawn_s,
           r->kib_per_child);
    if (r->proc_ok) {
        printf("  /proc sample: first %.1f ms CPU (%.1f ms wall) = %.2f us/proc;"
               " steady %.2f ms CPU (%.2f ms wall) = %.2f us/proc"
               " [min %.2f, max %.2f us/proc over %d] \n",
               r->first_us / 1e3, r->first_wall_us / 1e3, r->first_us / r->procs,
               r->steady_us / 1e3, r->steady_wall_us / 1e3, r->steady_us / r->procs,
               r->steady_min_us / r->procs, r->steady_max_us / r->procs, samples);
        printf("    stat reads in a sample: %llu; users seen: %zu of %d, their tasks: %llu\n",
               (unsigned long long)r->procs_read, r->users_seen, r->users,
               (unsigned long long)r->tasks_seen);
        printf("    full sweep (every scan_interval): %.1f ms CPU = %.2f us/proc\n",
               r->sweep_us / 1e3, r->sweep_us / r->procs);
    } else {
        printf("  /proc sample: n/a %s\n", r->why);
    }
    if (r->bd_ok) {
        double per = r->steady_us / r->procs;
        double rest = per - r->bd_readdir - r->bd_pread - r->bd_parse - r->bd_finduser;
        printf("    where a steady sample goes (us/proc, measured apart):"
               " readdir /proc %.2f (%ld entries), pread stat %.2f, parse %.2f,"
               " add_details' snapshot_find_user %.2f, the rest %.2f\n",
               r->bd_readdir, r->dir_entries, r->bd_pread, r->bd_parse, r->bd_finduser,
               rest);
    }
    if (r->cnt_ok) {
        double per = r->cnt_steady_us / r->users;
        double rest =
            per - r->bd_discover - r->bd_cpuacct - r->bd_memstat - r->bd_memparse - r->bd_pids;
        printf("  counter sample: first %.2f ms CPU = %.2f us/user; steady %.3f ms CPU"
               " (%.3f ms wall) = %.2f us/user;"
               " users %zu, tasks %llu (moving %d pids x 3 controllers took %.2f s)\n",
               r->cnt_first_us / 1e3, r->cnt_first_us / r->users, r->cnt_steady_us / 1e3,
               r->cnt_wall_us / 1e3, per, r->cnt_users,
               (unsigned long long)r->cnt_tasks, r->procs, r->move_s);
        printf("    where it goes (us/user): counters_discover %.2f, cpuacct.usage %.2f,"
               " memory.stat read %.2f + parse %.2f, pids.current %.2f, the rest %.2f\n",
               r->bd_discover, r->bd_cpuacct, r->bd_memstat, r->bd_memparse, r->bd_pids, rest);
    } else {
        printf("  counter sample: n/a (%s)\n", r->cnt_why);
    }
    if (r->ps_ok)
        printf("  ps -eo pid,user,pcpu,rss,comm: %.1f ms CPU (%.1f ms wall) per run, mean of %d,"
               " %ld lines; %.2f us/proc\n",
               r->ps_cpu_us / 1e3, r->ps_wall_us / 1e3, r->ps_runs, r->ps_lines,
               r->ps_cpu_us / r->procs);
    else
        printf("  ps: n/a\n");
    if (r->d_ok) {
        printf("  daemon: %s path, %.1f s window: %.3f%% of one core from utime+stime",
               r->d_path, r->d_window_s, r->d_cpu_pct);
        if (r->d_cpu_pct_ns >= 0)
            printf(" (%.3f%% from schedstat)", r->d_cpu_pct_ns);
        printf("; start-up %.0f ms CPU; VmHWM %.2f MiB, VmRSS %.2f MiB at the end"
               " (anon %.2f, file %.2f)\n",
               r->d_startup_ms, r->d_hwm_mib, r->d_rss_mib, r->d_anon_mib, r->d_file_mib);
        if (r->proc_ok)
            printf("    predicted from the figures above: (30 samples x %.1f ms + 2 sweeps x"
                   " %.1f ms) / 60 s = %.3f%%\n",
                   r->steady_us / 1e3, r->sweep_us / 1e3,
                   (30 * r->steady_us + 2 * r->sweep_us) / 60e6 * 100);
    } else if (r->d_why[0]) {
        printf("  daemon: n/a (%s)\n", r->d_why);
    }
}

/* ------------------------------------------------------------------ */

static void cleanup(void)
{
    daemon_stop();
    kill_idle();
    nursery_stop();
    cg_remove_all();
    remove_tmpdir();
}

static int parse_configs(const char *spec, struct result *res)
{
    int n = 0;
    const char *p = spec;
    while (*p && n < MAX_CONFIGS) {
        int procs, users, used;
        if (sscanf(p, "%d/%d%n", &procs, &users, &used) != 2 || procs < 1 || users < 1 ||
            users > procs || procs > MAX_CHILDREN - 1)
            return -1;
        memset(&res[n], 0, sizeof(res[n]));
        res[n].procs = procs;
        res[n].users = users;
        n++;
        p += used;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return n;
}

int main(void)
{
    int rc = bench_start("bench_sampler",
                         "it starts processes under other uids and makes cgroups");
    if (rc != 0)
        return rc;
    double run_start = wall_us();

    static struct result res[MAX_CONFIGS];
    const char *spec = getenv("LG_BENCH_CONFIGS");
    int count = parse_configs(spec && *spec ? spec : "1000/50,5000/500,10000/500", res);
    if (count <= 0) {
        printf("bench_sampler: LG_BENCH_CONFIGS wants PROCS/USERS[,PROCS/USERS...]\n");
        cleanup();
        return SKIP;
    }
    int samples = (int)env_long("LG_BENCH_SAMPLES", 20, 1, 10000);
    int ps_runs = (int)env_long("LG_BENCH_PS_RUNS", 5, 1, 1000);
    int daemon_seconds = (int)env_long("LG_BENCH_DAEMON_SECONDS", 60, 0, 86400);

    struct paths P;
    find_paths(&P);
    if (access(P.daemon, X_OK) < 0 || access(P.main_conf, R_OK) < 0 ||
        access(P.rules_dir, R_OK) < 0) {
        printf("bench_sampler: cannot find %s, %s or %s (build the tree; set LG_TOP_SRCDIR, "
               "LG_TOP_BUILDDIR)\n",
               P.daemon, P.main_conf, P.rules_dir);
        cleanup();
        return SKIP;
    }
    if (make_tmp_config(&P) < 0) {
        printf("bench_sampler: cannot write a temporary config: %s\n", strerror(errno));
        cleanup();
        return SKIP;
    }
    /* The policy the daemon will run with, loaded the same way. */
    struct policy pol;
    struct errors errs = {0};
    if (config_load(P.conf, true, &pol, &errs) < 0) {
        printf("bench_sampler: the config does not load:\n");
        for (size_t i = 0; i < errs.count; i++)
            printf("  %s\n", errs.messages[i]);
        errors_free(&errs);
        cleanup();
        return SKIP;
    }
    errors_free(&errs);
    if (pol.min_uid > BASE_UID) {
        pol.min_uid = 1000; /* the bench's processes must be judged */
    }

    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    long pid_max = read_long_file("/proc/sys/kernel/pid_max");
    struct controller ctl[3] = {{"cpuacct", "", "", "", false},
                                {"memory", "", "", "", false},
                                {"pids", "", "", "", false}};
    for (int c = 0; c < 3; c++)
        find_controller(&ctl[c]);
    struct utsname un;
    uname(&un);
    printf("bench_sampler: %s %s, %ld CPUs, HZ %ld, pid_max %ld, RLIMIT_NOFILE %llu/%llu\n",
           un.sysname, un.release, sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_CLK_TCK), pid_max,
           (unsigned long long)nofile.rlim_cur, (unsigned long long)nofile.rlim_max);
    printf("  daemon %s, config %s (min_uid %u, %zu rules)\n", P.daemon, P.conf,
           (unsigned)pol.min_uid, pol.rules.count);
    for (int c = 0; c < 3; c++)
        printf("  v1 %-7s %s\n", ctl[c].name,
               ctl[c].found ? ctl[c].base : "(not found: no counter figures)");
    printf("  %d steady samples, %d ps runs, daemon window %d s per configuration\n", samples,
           ps_runs, daemon_seconds);

    for (int i = 0; i < count && !stopping; i++) {
        struct result *r = &res[i];
        printf("\n# %d processes over %d users\n", r->procs, r->users);
        if ((rlim_t)r->procs + 64 > nofile.rlim_max) {
            snprintf(r->why, sizeof(r->why), "RLIMIT_NOFILE hard limit %llu is too low",
                     (unsigned long long)nofile.rlim_max);
            printf("  skipped: %s\n", r->why);
            continue;
        }
        long avail0 = meminfo_kib("MemAvailable:");
        double t0 = wall_us();
        struct nreply nr;
        pid_t *pids = spawn_idle(r->procs, r->users, BASE_UID, &nr);
        r->spawn_s = (wall_us() - t0) / 1e6;
        long avail1 = meminfo_kib("MemAvailable:");
        r->kib_per_child = nr.made > 0 ? (avail0 - avail1) / nr.made : 0;
        if (!pids || nr.made != r->procs || nr.ready != r->procs) {
            snprintf(r->why, sizeof(r->why), "started %d of %d processes (%d ready): %s",
                     nr.made, r->procs, nr.ready, nr.err ? strerror(nr.err) : "?");
            printf("  skipped: %s\n", r->why);
            free(pids);
            kill_idle();
            continue;
        }
        r->spawned = true;
        printf("  started in %.2f s; /proc path...\n", r->spawn_s);
        struct load l0 = load_now();
        bench_procfs(r, &pol, pids, samples);
        if (!stopping) {
            printf("  ps...\n");
            bench_ps(r, ps_runs);
        }
        if (!stopping && daemon_seconds > 0) {
            printf("  daemon for %d s...\n", daemon_seconds);
            bench_daemon(r, &P, daemon_seconds);
        }
        if (!stopping) {
            printf("  cgroup counters...\n");
            bench_counters(r, &pol, pids, samples, ctl);
        }
        /* the daemon's CPU is in own_cpu_us once reaped */
        r->other_cores = other_cores(l0, load_now(), 0);
        kill_idle(); /* first: the cgroups must be empty to go */
        if (cg_remove_all() < 0)
            printf("  warning: some cgroups could not be removed (listed above)\n");
        free(pids);
    }

    if (stopping)
        printf("\nbench_sampler: interrupted; cleaning up\n");
    cleanup();
    policy_free(&pol);
    free(G.cg_dirs);

    for (int i = 0; i < count; i++)
        print_details(&res[i], samples);
    print_table(res, count, daemon_seconds);
    printf("other load on the machine while measuring (cores, of %ld):", sysconf(_SC_NPROCESSORS_ONLN));
    for (int i = 0; i < count; i++)
        if (res[i].spawned) {
            printf(" %d/%d: %.2f overall", res[i].procs, res[i].users, res[i].other_cores);
            if (res[i].d_ok)
                printf(", %.2f in the daemon window", res[i].d_other_cores);
            printf(";");
        }
    printf("\n");
    for (int i = 0; i < count; i++) {
        if (res[i].other_cores > 0.2 || res[i].d_other_cores > 0.2) {
            printf("note: other work ran on this machine during the measurements; the CPU figures"
                   " above are then\n      higher than on a quiet machine (shared caches)\n");
            break;
        }
    }
    printf("\ntotal run time: %.1f s\n", (wall_us() - run_start) / 1e6);
    return 0;
}
