/* bench_sampler: what loginguard's sampling costs on this machine.
 *
 * For each configuration (processes / users) the benchmark starts that many
 * idle processes (pause()) under uids 61000.., then measures
 *   1. one /proc-path sample (observe with no counters): CPU per
 *      process, as the daemon runs it (new processes from the proc
 *      connector) and without the connector (each sample lists /proc), the
 *      first (discovering) sample apart; and the floors it stands on: one
 *      pread of a held schedstat a process, the /proc listing per entry;
 *   2. one counter-path sample against per-user v1 cgroups (cpuacct,
 *      memory, pids) that it creates below its own cgroups: CPU per user,
 *      with and without the connector, and the reads it is made of;
 *   3. the real loginguardd on the /proc path at the default intervals
 *      (observe mode): its CPU share of one core over several windows of
 *      one scan_interval, and its memory;
 *   4. `ps -eo pid,user,pcpu,rss,comm` over the same processes, for scale.
 * Every CPU figure is CPU time (this process's CPU clock, the daemon's),
 * never wall time; each is measured several times and printed as min and
 * median, with the rest of the machine's load beside it (its busy time
 * less this benchmark's own, the node's forks, the load average).  The
 * figures the targets are about are marked.  Figures, never pass/fail.
 * Exit status: 0, or 77 when it cannot run at all (not root, ...).
 *
 * Environment:
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR   the trees (default: the configured ones)
 *   LG_BENCH_CONFIGS                 "1000/50,5000/500,10000/500"
 *   LG_BENCH_SAMPLES                 samples of each kind (20)
 *   LG_BENCH_PS_RUNS                 timed ps runs (5)
 *   LG_BENCH_WINDOWS                 daemon windows per configuration (3; 0 skips)
 *   LG_BENCH_WINDOW_SECONDS          their length (default: scan_interval, 30)
 *
 * The processes are forked by a small "nursery" process forked before the
 * benchmark allocates anything; it kills (by pid) and reaps them on
 * request, and on its own when the benchmark goes away.  Every cgroup
 * made here is named lgbench-PID/user-UID and removed leaf-first. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "configfile.h"
#include "core/observe.h"
#include "errors.h"
#include "observe/cgroup_counters.h"
#include "observe/proc_connector.h"
#include "observe/procfs.h"
#include "observe/sampler.h"
#include "policy.h"
#include "rules_judge.h"
#include "snapshot.h"

extern char **environ;

#define BASE_UID 61000u
#define MAX_CONFIGS 8

/* Targets printed beside the figures (the and the design's, not
 * verdicts): a /proc-path sample per process, a counter-path sample per
 * user, the daemon on the /proc path. */
#define TARGET_US_PER_PROC 1.5
#define TARGET_US_PER_USER 2.0
#define TARGET_DAEMON_CPU_PCT 1.0
#define TARGET_DAEMON_RSS_MIB 8.0

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

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
    char conf[128], event_log[128], daemon_log[128]; /* in tmpdir */
    char **cg_dirs; /* cgroups made here, in creation order */
    size_t cg_count, cg_capacity;
} G = {0, "", "", "", "", NULL, 0, 0};

/* ------------------------------------------------------------------ */
/* cgroups made here                                                    */

/* A controller's directory for this benchmark's cgroups. */
struct counter_root {
    const char *name;
    char base[1024]; /* mount + own + /lgbench-PID */
    bool found;
};

static void find_counter_root(struct counter_root *r)
{
    struct controller c;
    find_controller(r->name, &c);
    r->found = c.found;
    if (c.found)
        snprintf(r->base, sizeof(r->base), "%s%s/lgbench-%d", c.mount, c.own, (int)getpid());
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

static void remove_tmpdir(void)
{
    remove_bench_tree(G.tmpdir);
    G.tmpdir[0] = '\0';
}

static int make_tmp_config(const struct paths *P)
{
    snprintf(G.tmpdir, sizeof(G.tmpdir), "/tmp/lgbench.XXXXXX");
    if (!mkdtemp(G.tmpdir)) {
        G.tmpdir[0] = '\0';
        return -1;
    }
    snprintf(G.conf, sizeof(G.conf), "%s/loginguard.conf", G.tmpdir);
    snprintf(G.event_log, sizeof(G.event_log), "%s/events.jsonl", G.tmpdir);
    snprintf(G.daemon_log, sizeof(G.daemon_log), "%s/daemon.log", G.tmpdir);
    char *main_text = read_text(P->main_conf, 1 << 20);
    if (!main_text)
        return -1;
    int rc = write_text(G.conf, main_text);
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
             G.event_log, P->rules_dir, G.tmpdir, G.tmpdir);
    return write_text(path, text);
}

/* ------------------------------------------------------------------ */
/* results                                                              */

struct result {
    int procs, users;
    bool spawned;
    char why[200];
    double spawn_s;
    long kib_per_child;

    /* 1. the /proc path: CPU of one sample, usec */
    bool proc_ok;
    bool connector;                  /* this process could open the proc connector */
    bool filtered;                   /* ... and the kernel filters its events */
    double first_us;                 /* the first sample: every process discovered */
    struct runs proc_live, proc_listing, sweep;
    struct load_runs proc_load;
    uint64_t procs_read;
    size_t users_seen;
    uint64_t tasks_seen;
    /* what one sample stands on, per pass over every process, usec */
    bool floors_ok;
    long dir_entries;
    struct runs f_readdir, f_sched, f_stat, f_parse;

    /* 2. the counter path: CPU of one sample, usec */
    bool cnt_ok;
    char cnt_why[200];
    double move_s;
    double cnt_first_us;
    struct runs cnt_live, cnt_listing;
    struct load_runs cnt_load;
    size_t cnt_users;
    uint64_t cnt_tasks;
    struct runs f_discover, f_cpuacct, f_memstat, f_memparse, f_pids; /* per pass over the users */

    /* 3. the daemon */
    bool d_ok;
    char d_why[200];
    double d_window_s, d_startup_ms, d_hwm_mib;
    struct runs d_cpu, d_rss;
    struct memory_reading d_mem; /* at the end */
    struct load_runs d_load;
    char d_path[40];

    /* 4. ps */
    bool ps_ok;
    struct runs ps_cpu;
    long ps_lines;
};

static void note_event(const struct pc_event *ev, void *arg)
{
    sampler_note_event(arg, ev);
}

/* samples samples, a short pause before each; their CPU into out, the
 * machine's other load over them into load.  With a connector its news
 * is read first, as the daemon's main loop does. */
static void sample_series(struct sampler *s, const struct policy *pol, struct snapshot *snap,
                          struct proc_connector *pc, int samples, struct runs *out,
                          struct load_runs *load)
{
    struct load_mark m0 = load_mark_now(cpu_self_children_us());
    for (int k = 0; k < samples && !stopping; k++) {
        nap_ms(20);
        double a = cpu_self_us();
        if (pc && proc_connector_drain(pc, note_event, s) > 0)
            sampler_note_lost(s);
        observe(s, pol, snap, NULL);
        runs_add(out, cpu_self_us() - a);
    }
    load_runs_add(load, other_load_between(m0, load_mark_now(cpu_self_children_us())));
}

/* One pass of body, its CPU into runs r, after the same short pause the
 * samples get (a pass straight after another runs on warmer caches). */
#define TIMED_RUN(r, body)                                                                         \
    do {                                                                                           \
        nap_ms(20);                                                                                \
        double a_ = cpu_self_us();                                                                 \
        body;                                                                                      \
        runs_add(&(r), cpu_self_us() - a_);                                                        \
    } while (0)

/* ------------------------------------------------------------------ */
/* 1. the /proc path                                                    */

static int open_all(const pid_t *pids, int n, const char *file, int *fds)
{
    int opened = 0;
    for (int i = 0; i < n; i++) {
        char name[48];
        snprintf(name, sizeof(name), "/proc/%d/%s", (int)pids[i], file);
        fds[i] = open(name, O_RDONLY | O_CLOEXEC);
        opened += fds[i] >= 0;
    }
    return opened;
}

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* What a steady sample is made of, each measured apart over every
 * process: the listing of /proc (without the connector), one pread of a
 * held schedstat (a process that did not run since: all that is read),
 * one of a held stat and its parsing (one that ran). */
static void proc_floors(struct result *r, const pid_t *pids, int n, int reps)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    for (int k = 0; k < reps && !stopping; k++) {
        long entries = 0;
        TIMED_RUN(r->f_readdir, {
            rewinddir(d);
            struct dirent *de;
            while ((de = readdir(d)) != NULL)
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9')
                    entries += strtol(de->d_name, NULL, 10) > 0;
        });
        r->dir_entries = entries;
    }
    closedir(d);
    /* One set of descriptors at a time: two would pass RLIMIT_NOFILE. */
    int *fds = malloc((size_t)n * sizeof(int));
    char(*bufs)[1024] = malloc((size_t)n * sizeof(*bufs));
    ssize_t *lens = malloc((size_t)n * sizeof(ssize_t));
    if (!fds || !bufs || !lens)
        abort();
    int open_count = 0;
    char small[128];
    uint64_t sink = 0;
    open_count += open_all(pids, n, "schedstat", fds);
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_sched, {
            for (int i = 0; i < n; i++)
                sink += (uint64_t)procfs_pread(fds[i], small, sizeof(small) - 1);
        });
    }
    close_all(fds, n);
    open_count += open_all(pids, n, "stat", fds);
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_stat, {
            for (int i = 0; i < n; i++)
                lens[i] = procfs_pread(fds[i], bufs[i], sizeof(bufs[i]) - 1);
        });
    }
    close_all(fds, n);
    struct proc_stat st;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_parse, {
            for (int i = 0; i < n; i++)
                if (lens[i] > 0 && procfs_parse_stat(bufs[i], (size_t)lens[i], &st) == 0)
                    sink += st.utime;
        });
    }
    if (sink == 42)
        fputc(' ', stderr); /* keep the loops */
    free(fds);
    free(bufs);
    free(lens);
    r->floors_ok = open_count == 2 * n && !stopping;
}

static void bench_procfs(struct result *r, const struct policy *pol, const pid_t *pids,
                         int samples)
{
    struct sampler s;
    struct snapshot snap = {0};
    struct environment env;
    environment_host(&env);
    struct counter_roots proc_only = {0};
    struct rules_judge judge;
    rules_judge_init(&judge, &pol->rules);
    struct sampler_scope scope = observe_scope(pol, &judge.judge);
    if (sampler_init(&s, &env, &proc_only, &scope) < 0) {
        snprintf(r->why, sizeof(r->why), "sampler_init failed");
        return;
    }
    struct proc_connector pc;
    char err[300];
    r->connector = proc_connector_open(&pc, err, sizeof(err)) == 0;
    r->filtered = r->connector && pc.filtered;
    sampler_events_live(&s, r->connector);
    double a = cpu_self_us();
    observe(&s, pol, &snap, NULL); /* the sweep that going live asks for, then a sample */
    r->first_us = cpu_self_us() - a;
    if (r->connector) {
        sample_series(&s, pol, &snap, &pc, samples, &r->proc_live, &r->proc_load);
        proc_connector_close(&pc);
        sampler_events_live(&s, false);
    }
    sample_series(&s, pol, &snap, NULL, samples, &r->proc_listing, &r->proc_load);
    r->procs_read = s.stats.procs_read;
    for (size_t i = 0; i < snap.user_count; i++) {
        if (snap.users[i].uid >= BASE_UID && snap.users[i].uid < BASE_UID + (uid_t)r->users) {
            r->users_seen++;
            r->tasks_seen += snap.users[i].tasks;
        }
    }
    /* The full sweep (every scan_interval in the daemon). */
    for (int k = 0; k < 3 && !stopping; k++)
        TIMED_RUN(r->sweep, sampler_sweep(&s));
    r->proc_ok = !stopping;
    sampler_free(&s); /* gives back the held descriptors for the floors */
    rules_judge_free(&judge);
    snapshot_free(&snap);
    if (!stopping)
        proc_floors(r, pids, r->procs, samples > 5 ? samples / 2 : 3);
}

/* ------------------------------------------------------------------ */
/* 2. the counter path                                                  */

/* lgbench-PID below our own cgroup, user-UID below it, per controller,
 * and every process moved into its user's group.  0, or -1 with
 * r->cnt_why filled. */
static int make_user_cgroups(struct result *r, const pid_t *pids, struct counter_root ctl[3])
{
    for (int c = 0; c < 3; c++) {
        if (!ctl[c].found) {
            snprintf(r->cnt_why, sizeof(r->cnt_why), "no v1 %s controller", ctl[c].name);
            return -1;
        }
    }
    char path[1200];
    for (int c = 0; c < 3; c++) {
        if (cg_mkdir(ctl[c].base) < 0) {
            snprintf(r->cnt_why, sizeof(r->cnt_why), "mkdir %.150s: %s", ctl[c].base,
                     strerror(errno));
            return -1;
        }
        for (int u = 0; u < r->users; u++) {
            snprintf(path, sizeof(path), "%s/user-%u", ctl[c].base, BASE_UID + (unsigned)u);
            if (cg_mkdir(path) < 0) {
                snprintf(r->cnt_why, sizeof(r->cnt_why), "mkdir %.150s: %s", path, strerror(errno));
                return -1;
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
        return -1;
    }
    return stopping ? -1 : 0;
}

/* The reads a counter sample is made of, each over every user. */
static void counter_floors(struct result *r, struct sampler *s, int reps)
{
    size_t ng = s->counters.count;
    if (ng == 0)
        return;
    char buf[4096];
    uint64_t sink = 0;
    for (int k = 0; k < reps && !stopping; k++)
        TIMED_RUN(r->f_discover, counters_discover(&s->counters));
    ng = s->counters.count;
    struct user_cgroup *g = s->counters.groups;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_cpuacct, {
            for (size_t i = 0; i < ng; i++)
                sink += (uint64_t)procfs_pread(g[i].cpu_fd, buf, 63);
        });
    }
    ssize_t len = 0;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_memstat, {
            for (size_t i = 0; i < ng; i++)
                if (g[i].memory_fd >= 0)
                    len = procfs_pread(g[i].memory_fd, buf, sizeof(buf));
        });
    }
    uint64_t v = 0;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_memparse, {
            for (size_t i = 0; i < ng && len > 0; i++) {
                counters_stat_value(buf, (size_t)len, "total_rss", &v);
                counters_stat_value(buf, (size_t)len, "total_mapped_file", &v);
                sink += v;
            }
        });
    }
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->f_pids, {
            for (size_t i = 0; i < ng; i++)
                if (g[i].pids_fd >= 0)
                    sink += (uint64_t)procfs_pread(g[i].pids_fd, buf, 63);
        });
    }
    if (sink == 42)
        fputc(' ', stderr);
}

static void bench_counters(struct result *r, const struct policy *pol, const pid_t *pids,
                           int samples, struct counter_root ctl[3])
{
    if (make_user_cgroups(r, pids, ctl) < 0)
        return;
    struct sampler s;
    struct snapshot snap = {0};
    struct environment env;
    environment_host(&env);
    struct counter_roots roots = {.version = 1, .cpu = ctl[0].base, .memory = ctl[1].base,
                                  .pids = ctl[2].base};
    struct rules_judge judge;
    rules_judge_init(&judge, &pol->rules);
    struct sampler_scope scope = observe_scope(pol, &judge.judge);
    if (sampler_init(&s, &env, &roots, &scope) < 0 || !s.use_counters) {
        snprintf(r->cnt_why, sizeof(r->cnt_why), "sampler_init with counters failed");
        return;
    }
    struct proc_connector pc;
    char err[300];
    bool live = proc_connector_open(&pc, err, sizeof(err)) == 0;
    sampler_events_live(&s, live);
    double a = cpu_self_us();
    observe(&s, pol, &snap, NULL);
    r->cnt_first_us = cpu_self_us() - a;
    if (live) {
        sample_series(&s, pol, &snap, &pc, samples, &r->cnt_live, &r->cnt_load);
        proc_connector_close(&pc);
        sampler_events_live(&s, false);
    }
    sample_series(&s, pol, &snap, NULL, samples, &r->cnt_listing, &r->cnt_load);
    r->cnt_users = snap.user_count;
    for (size_t i = 0; i < snap.user_count; i++)
        r->cnt_tasks += snap.users[i].tasks;
    if (!stopping)
        counter_floors(r, &s, samples > 5 ? samples / 2 : 3);
    sampler_free(&s);
    rules_judge_free(&judge);
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
    kill_reap(&G.daemon, SIGKILL);
}

/* Which path did it take?  daemon_started says "... /proc sampling". */
static void daemon_path(char *out, size_t len)
{
    char *ev = read_text(G.event_log, 1 << 20);
    snprintf(out, len, "?");
    if (ev && strstr(ev, "/proc sampling"))
        snprintf(out, len, "/proc");
    else if (ev && strstr(ev, "per-user cgroup sampling"))
        snprintf(out, len, "cgroup counters");
    free(ev);
}

static void bench_daemon(struct result *r, const struct paths *P, int windows, double window_s)
{
    write_text(G.event_log, "");
    write_text(G.daemon_log, "");
    pid_t p = fork_daemon(P->daemon, G.conf, G.daemon_log, true);
    if (p < 0) {
        snprintf(r->d_why, sizeof(r->d_why), "fork: %s", strerror(errno));
        return;
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
            print_daemon_output(G.daemon_log);
            return;
        }
        d = read_daemon(p);
        quiet = (d.state == 'S' && d.ticks == last_ticks) ? quiet + 1 : 0;
        last_ticks = d.ticks;
        double waited = (wall_us() - start) / 1e6;
        if ((quiet >= 4 && waited >= 0.5) || waited > 20)
            break;
    }
    r->d_startup_ms = cpu_of_us(p) / 1e3;
    r->d_window_s = window_s;
    for (int k = 0; k < windows && !stopping; k++) {
        double c0 = cpu_of_us(p), w0 = wall_us();
        struct load_mark m0 = load_mark_now(cpu_self_children_us() + c0);
        while (!stopping && wall_us() - w0 < window_s * 1e6) {
            double left_ms = (window_s * 1e6 - (wall_us() - w0)) / 1e3;
            nap_ms(left_ms > 200 ? 200 : (long)left_ms + 1);
            if (daemon_exited()) {
                snprintf(r->d_why, sizeof(r->d_why), "the daemon exited during a window");
                print_daemon_output(G.daemon_log);
                return;
            }
        }
        double c1 = cpu_of_us(p), w1 = wall_us();
        if (stopping || c0 < 0 || c1 < 0)
            break;
        runs_add(&r->d_cpu, (c1 - c0) / (w1 - w0) * 100.0);
        load_runs_add(&r->d_load, other_load_between(m0, load_mark_now(cpu_self_children_us() + c1)));
        r->d_mem = read_memory(p);
        runs_add(&r->d_rss, r->d_mem.rss);
    }
    r->d_hwm_mib = status_mib(p, "VmHWM:");
    daemon_stop();
    daemon_path(r->d_path, sizeof(r->d_path));
    r->d_ok = !stopping && r->d_cpu.n == windows;
}

/* ------------------------------------------------------------------ */
/* 4. ps                                                                */

static int run_ps_once(double *cpu_us, long *lines)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    char *argv[] = {(char *)"ps", (char *)"-eo", (char *)"pid,user,pcpu,rss,comm", NULL};
    double a = rusage_us(RUSAGE_CHILDREN);
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
    *cpu_us = rusage_us(RUSAGE_CHILDREN) - a;
    *lines = n_lines;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void bench_ps(struct result *r, int runs)
{
    double cpu;
    long lines = 0;
    if (run_ps_once(&cpu, &lines) < 0) /* warm-up, untimed */
        return;
    for (int k = 0; k < runs && !stopping; k++) {
        if (run_ps_once(&cpu, &lines) < 0)
            return;
        runs_add(&r->ps_cpu, cpu);
    }
    r->ps_lines = lines;
    r->ps_ok = r->ps_cpu.n > 0;
}

/* ------------------------------------------------------------------ */
/* the report                                                           */

/* "  what ....  min  median  (unit)  note" with each run divided by per. */
static void row(const char *what, const struct runs *v, double per, const char *note)
{
    if (v->n == 0)
        return;
    printf("    %-50s %8.2f %8.2f  %s\n", what, runs_min(v) / per, runs_median(v) / per, note);
}

static void print_details(const struct result *r)
{
    char text[300], target[80];
    printf("\n== %d processes / %d users\n", r->procs, r->users);
    if (!r->spawned) {
        printf("  not run: %s\n", r->why);
        return;
    }
    printf("  spawn: %.2f s, ~%ld KiB of memory per idle process\n", r->spawn_s,
           r->kib_per_child);
    double n = r->procs;
    if (r->proc_ok) {
        printf("  1. /proc path: CPU of one sample, us per process%*s min   median\n", 14, "");
        snprintf(target, sizeof(target), "<- target <= %.1f", TARGET_US_PER_PROC);
        if (r->connector)
            row(r->filtered ? "as the daemon runs it (proc connector, filtered)"
                            : "as the daemon runs it (proc connector)",
                &r->proc_live, n, target);
        else
            printf("    (no proc connector here: the daemon lists /proc every sample)\n");
        row("without the connector (lists /proc every sample)", &r->proc_listing, n,
            r->connector ? "" : target);
        printf("    %-50s %8.2f           (every process discovered)\n", "the first sample",
               r->first_us / n);
        row("the full sweep (every scan_interval)", &r->sweep, n, "");
        if (r->floors_ok) {
            row("floor: one pread of a held schedstat", &r->f_sched, n,
                "(all a process that did not run costs)");
            row("floor: listing /proc, per entry", &r->f_readdir, (double)r->dir_entries, "");
            row("one pread of a held stat (a process that ran)", &r->f_stat, n, "");
            row("parsing that stat", &r->f_parse, n, "");
        }
        printf("    stat reads in the last sample: %llu; users seen: %zu of %d, their tasks: %llu\n",
               (unsigned long long)r->procs_read, r->users_seen, r->users,
               (unsigned long long)r->tasks_seen);
        load_runs_text(&r->proc_load, text, sizeof(text));
        printf("    meanwhile: %s\n", text);
    } else {
        printf("  1. /proc path: n/a %s\n", r->why);
    }
    if (r->cnt_ok) {
        double u = r->cnt_users ? (double)r->cnt_users : 1;
        printf("  2. counter path: CPU of one sample, us per user%*s min   median\n", 15, "");
        snprintf(target, sizeof(target), "<- target <= %.1f", TARGET_US_PER_USER);
        row(r->filtered ? "as the daemon runs it (proc connector, filtered)"
                        : "as the daemon runs it (proc connector)",
            &r->cnt_live, u, target);
        row("without the connector (lists /proc every sample)", &r->cnt_listing, u,
            "(the listing grows with processes)");
        printf("    %-50s %8.2f\n", "the first sample", r->cnt_first_us / u);
        row("floor: one pread of cpuacct.usage", &r->f_cpuacct, u,
            "(all an idle user costs)");
        row("memory.stat read (a user whose CPU moved)", &r->f_memstat, u, "");
        row("memory.stat parse", &r->f_memparse, u, "");
        row("pids.current (a user whose CPU moved)", &r->f_pids, u, "");
        row("counters_discover (when groups may have changed)", &r->f_discover, u, "");
        printf("    users %zu, tasks %llu (moving %d pids x 3 controllers took %.2f s)\n",
               r->cnt_users, (unsigned long long)r->cnt_tasks, r->procs, r->move_s);
        load_runs_text(&r->cnt_load, text, sizeof(text));
        printf("    meanwhile: %s\n", text);
    } else {
        printf("  2. counter path: n/a (%s)\n", r->cnt_why);
    }
    if (r->d_ok) {
        printf("  3. the daemon (observe, %s path), %d windows of %.0f s:%*s min   median\n",
               r->d_path, r->d_cpu.n, r->d_window_s, 9, "");
        snprintf(target, sizeof(target), "<- design target < %.0f", TARGET_DAEMON_CPU_PCT);
        row("CPU, % of one core (its CPU clock)", &r->d_cpu, 1, target);
        snprintf(target, sizeof(target), "<- target < %.0f", TARGET_DAEMON_RSS_MIB);
        row("RSS at the windows' ends, MiB", &r->d_rss, 1, target);
        printf("    at the end: anon %.2f MiB, file %.2f MiB, PSS %.2f MiB; VmHWM %.2f MiB;"
               " start-up %.0f ms CPU\n",
               r->d_mem.anon, r->d_mem.file, r->d_mem.pss, r->d_hwm_mib, r->d_startup_ms);
        load_runs_text(&r->d_load, text, sizeof(text));
        printf("    meanwhile: %s\n", text);
    } else if (r->d_why[0]) {
        printf("  3. the daemon: n/a (%s)\n", r->d_why);
    }
    if (r->ps_ok)
        row("4. ps -eo pid,user,pcpu,rss,comm, us per process", &r->ps_cpu, n, "");
}

static void print_table(const struct result *res, int count)
{
    printf("\nthe figures the targets are about (min / median; CPU time, not wall time):\n");
    printf("procs users | /proc sample us/proc | counter sample us/user | daemon %% of a core |"
           " daemon RSS MiB | others' cores\n");
    for (int i = 0; i < count; i++) {
        const struct result *r = &res[i];
        char c1[40] = "n/a", c2[40] = "n/a", c3[40] = "n/a", c4[40] = "n/a";
        const struct runs *p = r->proc_live.n ? &r->proc_live : &r->proc_listing;
        if (r->proc_ok)
            snprintf(c1, sizeof(c1), "%6.2f / %-6.2f", runs_min(p) / r->procs,
                     runs_median(p) / r->procs);
        const struct runs *c = r->cnt_live.n ? &r->cnt_live : &r->cnt_listing;
        double u = r->cnt_users ? (double)r->cnt_users : 1;
        if (r->cnt_ok)
            snprintf(c2, sizeof(c2), "%6.2f / %-6.2f", runs_min(c) / u, runs_median(c) / u);
        if (r->d_ok) {
            snprintf(c3, sizeof(c3), "%6.3f / %-6.3f", runs_min(&r->d_cpu),
                     runs_median(&r->d_cpu));
            snprintf(c4, sizeof(c4), "%5.2f / %-5.2f", runs_min(&r->d_rss),
                     runs_median(&r->d_rss));
        }
        printf("%5d %5d | %-20s | %-22s | %-18s | %-14s | %.2f / %.2f\n", r->procs, r->users, c1,
               c2, c3, c4, runs_min(&r->proc_load.cores), runs_median(&r->d_load.cores));
    }
    printf("target      | <= %-17.1f | <= %-19.1f | < %-16.0f | < %-12.0f |\n", TARGET_US_PER_PROC,
           TARGET_US_PER_USER, TARGET_DAEMON_CPU_PCT, TARGET_DAEMON_RSS_MIB);
    printf("(samples as the daemon takes them: new processes from the proc connector; others'"
           " cores: min over the\n /proc samples / median over the daemon windows)\n");
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
    int samples = (int)env_long("LG_BENCH_SAMPLES", 20, 1, MAX_RUNS);
    int ps_runs = (int)env_long("LG_BENCH_PS_RUNS", 5, 1, MAX_RUNS);
    int windows = (int)env_long("LG_BENCH_WINDOWS", 3, 0, MAX_RUNS);
    int window_s = (int)env_long("LG_BENCH_WINDOW_SECONDS", 0, 0, 86400);

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
    if (config_load(G.conf, true, &pol, &errs) < 0) {
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
    struct counter_root ctl[3] = {{"cpuacct", "", false}, {"memory", "", false}, {"pids", "", false}};
    for (int c = 0; c < 3; c++)
        find_counter_root(&ctl[c]);
    struct utsname un;
    uname(&un);
    printf("bench_sampler: %s %s, %ld CPUs, HZ %ld, pid_max %ld, RLIMIT_NOFILE %llu/%llu\n",
           un.sysname, un.release, sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_CLK_TCK), pid_max,
           (unsigned long long)nofile.rlim_cur, (unsigned long long)nofile.rlim_max);
    printf("  daemon %s, config %s (min_uid %u, %zu rules)\n", P.daemon, G.conf,
           (unsigned)pol.min_uid, pol.rules.count);
    for (int c = 0; c < 3; c++)
        printf("  v1 %-7s %s\n", ctl[c].name,
               ctl[c].found ? ctl[c].base : "(not found: no counter figures)");
    double window = window_s > 0 ? window_s : (double)pol.scan_interval / 1e6;
    printf("  %d samples of each kind, %d ps runs, %d daemon windows of %.0f s per"
           " configuration\n",
           samples, ps_runs, windows, window);

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
        bench_procfs(r, &pol, pids, samples);
        if (!stopping) {
            printf("  ps...\n");
            bench_ps(r, ps_runs);
        }
        if (!stopping && windows > 0) {
            printf("  daemon: %d windows of %.0f s...\n", windows, window);
            bench_daemon(r, &P, windows, window);
        }
        if (!stopping) {
            printf("  cgroup counters...\n");
            bench_counters(r, &pol, pids, samples, ctl);
        }
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
        print_details(&res[i]);
    print_table(res, count);
    printf("\ntotal run time: %.1f s\n", (wall_us() - run_start) / 1e6);
    return 0;
}
