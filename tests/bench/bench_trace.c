/* bench_trace: what the usage trace costs, and what replaying it costs.
 *
 * 1. The daemon's writer (daemon/record/trace.c, the code loginguardd runs after
 *    each sample) on synthetic snapshots of a node with 500 users and
 *    10,000 processes, 2 s samples: CPU per sample (this process's CPU
 *    time around the call, min and median) and bytes per sample, per day
 *    and how many days the default [trace] max_size (1 GiB) holds.  Three
 *    models of the node:
 *      typical   400 idle users, 80 light ones (shells, editors: their
 *                CPU and memory change every sample), 20 above half a
 *                threshold with 50 processes each (1,000 processes in the
 *                snapshot, 300 of them busy); 2 processes a sample new
 *      all       every user above half a threshold: all 10,000
 *                processes in the snapshot, 3,000 busy; 20 new a sample
 *      hostile   as all, every process busy, and 10 users starting 10 new
 *                processes each a sample, with 4 KiB command lines of
 *                bytes that are not UTF-8 (written as hex, twice as long):
 *                what the per-user budget of a segment lets through
 *    (hostile over an hour's samples at least: a segment's budget.)
 * 2. loginguardctl simulate (the real program) over 7 days of the typical
 *    trace, written by the same writer with the samples' clock moved on:
 *    wall time, CPU time and peak resident memory (wait4's maxrss).
 *
 * Figures, never pass/fail; needs no root.  Environment: LG_TOP_BUILDDIR,
 * LG_TOP_SRCDIR; LG_BENCH_TRACE_SAMPLES (samples a model is measured
 * over, 600), LG_BENCH_TRACE_DAYS (days of trace replayed, 7). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "policy.h"
#include "record/trace.h"
#include "snapshot.h"
#include "util.h"

#define USERS 500
#define NODE_PROCS 10000
#define INTERVAL (2 * 1000000ULL)
#define BASE_UID 61000
#define T0 (1790000000ULL * 1000000)

struct model {
    const char *name;
    int idle, light, heavy;     /* users */
    int procs_per_heavy;
    double busy;                /* share of the snapshot's processes busy */
    int new_per_sample;
    size_t argv_len;
    bool hostile_argv;
    int flood_slots;            /* new processes only among these (0: all) */
};

static const struct model models[] = {
    {"typical", 400, 80, 20, 50, 0.3, 2, 120, false, 0},
    {"all", 0, 0, 500, 20, 0.3, 20, 120, false, 0},
    {"hostile", 0, 0, 500, 20, 1.0, 100, ARGV_KEEP, true, 200},
};

struct sim_proc {
    pid_t pid;
    uint64_t start;
    uid_t uid;
    bool busy;
};

struct node {
    const struct model *m;
    struct sim_proc *procs;
    int proc_count;
    pid_t next_pid;
    unsigned seed;
};

static double rnd(struct node *n)
{
    return (double)rand_r(&n->seed) / RAND_MAX;
}

static void node_init(struct node *n, const struct model *m)
{
    memset(n, 0, sizeof(*n));
    n->m = m;
    n->seed = 42;
    n->next_pid = 1000;
    n->proc_count = m->heavy * m->procs_per_heavy;
    n->procs = xcalloc((size_t)n->proc_count, sizeof(*n->procs));
    for (int i = 0; i < n->proc_count; i++) {
        n->procs[i] = (struct sim_proc){n->next_pid++, (uint64_t)i, (uid_t)(BASE_UID + m->idle +
                                                                         m->light + i / m->procs_per_heavy),
                                        rnd(n) < m->busy};
    }
}

static void fill_argv(const struct model *m, struct proc_sample *ps, unsigned salt)
{
    ps->argv = xmalloc(m->argv_len + 1);
    for (size_t i = 0; i < m->argv_len; i++)
        ps->argv[i] = m->hostile_argv ? (char)(0x80 | ((i + salt) & 0x7f))
                                      : (char)("python3 train.py --epochs 100 "[i % 30]);
    ps->argv[m->argv_len] = '\0';
    ps->argv_len = ps->argv_total = m->argv_len;
}

/* One sample of the node into snap: processes replaced, usage moved. */
static void node_sample(struct node *n, struct snapshot *snap, uint64_t now)
{
    const struct model *m = n->m;
    snapshot_clear(snap);
    snap->now = now;
    snap->interval = INTERVAL;
    snap->memory_pressure = -1;
    for (int k = 0; k < m->new_per_sample && n->proc_count; k++) {
        unsigned slots = (unsigned)(m->flood_slots ? m->flood_slots : n->proc_count);
        struct sim_proc *p = &n->procs[rand_r(&n->seed) % slots];
        p->pid = n->next_pid++;
        p->start = now;
        p->busy = rnd(n) < m->busy;
    }
    for (int u = 0; u < USERS; u++) {
        struct user_sample *us = snapshot_add_user(snap, (uid_t)(BASE_UID + u));
        snprintf(us->name, sizeof(us->name), "user%03d", u);
        us->tasks = 20;
        if (u < m->idle) {
            us->memory = 40ULL << 20;
        } else if (u < m->idle + m->light) {
            us->cpu = 0.3 * rnd(n);
            us->memory = (200ULL << 20) + (uint64_t)(rnd(n) * (50 << 20));
        } else {
            us->cpu = 0.5 * m->procs_per_heavy * m->busy + rnd(n);
            us->memory = (6ULL << 30) + (uint64_t)(rnd(n) * (1 << 30));
            us->detailed = true;
        }
    }
    for (int i = 0; i < n->proc_count; i++) {
        const struct sim_proc *p = &n->procs[i];
        struct proc_sample *ps = snapshot_add_proc(snap);
        ps->pid = p->pid;
        ps->start_time = p->start;
        ps->uid = p->uid;
        ps->ppid = 1;
        copy_string(ps->comm, sizeof(ps->comm), p->busy ? "python3" : "bash");
        ps->exe = xstrdup(p->busy ? "/usr/bin/python3.11" : "/usr/bin/bash");
        ps->exe_trusted = true;
        fill_argv(m, ps, (unsigned)p->pid);
        ps->cpu = p->busy ? 0.5 + 0.5 * rnd(n) : 0;
        ps->rss = p->busy ? (100ULL << 20) + (uint64_t)(rnd(n) * (100 << 20)) : 4ULL << 20;
    }
}

static uint64_t dir_bytes(const char *dir)
{
    DIR *dp = opendir(dir);
    uint64_t total = 0;
    for (struct dirent *de; dp && (de = readdir(dp));) {
        struct stat st;
        if (fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            total += (uint64_t)st.st_size;
    }
    if (dp)
        closedir(dp);
    return total;
}

static void policy_for(struct policy *p, const char *state_dir)
{
    policy_init_defaults(p);
    set_string(&p->state_dir, state_dir);
}

static void measure_writer(const struct model *m, int samples, const char *dir)
{
    struct policy p;
    policy_for(&p, dir);
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700];
    if (trace_writer_open(&t, &p, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        exit(1);
    }
    struct node n;
    node_init(&n, m);
    struct snapshot snap = {0};
    double *cpu = xmalloc((size_t)samples * sizeof(*cpu));
    uint64_t first_bytes = 0;
    for (int i = 0; i < samples && !stopping; i++) {
        node_sample(&n, &snap, T0 + (uint64_t)i * INTERVAL);
        double before = cpu_self_us();
        if (trace_writer_sample(&t, &snap, "node", "observe", INTERVAL, err, sizeof(err)) < 0) {
            fprintf(stderr, "bench_trace: %s\n", err);
            exit(1);
        }
        cpu[i] = cpu_self_us() - before;
        if (i == 0)
            first_bytes = t.bytes_written;
    }
    qsort(cpu, (size_t)samples, sizeof(*cpu), cmp_double);
    double per_sample = (double)(t.bytes_written - first_bytes) / (samples - 1);
    double per_day = per_sample * 86400e6 / (double)INTERVAL;
    printf("  %-8s %5zu procs in the snapshot: CPU per sample min %.2f ms, median %.2f ms; "
           "%.0f bytes a sample (the segment's first: %llu), %.0f MiB a day, the default "
           "max_size holds %.1f days\n",
           m->name, snap.proc_count, cpu[0] / 1000, cpu[samples / 2] / 1000, per_sample,
           (unsigned long long)first_bytes, per_day / (1 << 20),
           (double)p.trace_max_size / per_day);
    free(cpu);
    free(n.procs);
    snapshot_free(&snap);
    trace_writer_close(&t);
    policy_free(&p);
}

/* days of the typical node into dir/trace, at the writer's cost. */
static uint64_t write_days(const char *dir, int days, uint64_t *end)
{
    struct policy p;
    policy_for(&p, dir);
    p.trace_max_size = 64ULL << 30; /* all of it kept */
    p.trace_max_age = (uint64_t)(days + 1) * 86400 * 1000000;
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700];
    if (trace_writer_open(&t, &p, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench_trace: %s\n", err);
        exit(1);
    }
    struct node n;
    node_init(&n, &models[0]);
    struct snapshot snap = {0};
    /* 0 days: an hour, to look at the replay closely. */
    uint64_t samples = (days ? (uint64_t)days * 86400 : 3600) * 1000000 / INTERVAL;
    uint64_t now = now_realtime_usec() - samples * INTERVAL;
    for (uint64_t i = 0; i < samples && !stopping; i++) {
        node_sample(&n, &snap, now + i * INTERVAL);
        if (trace_writer_sample(&t, &snap, "node", "observe", INTERVAL, err, sizeof(err)) < 0) {
            fprintf(stderr, "bench_trace: %s\n", err);
            exit(1);
        }
    }
    *end = now + samples * INTERVAL;
    free(n.procs);
    snapshot_free(&snap);
    trace_writer_close(&t);
    policy_free(&p);
    return samples;
}

static void measure_simulate(const struct paths *P, const char *dir, int days)
{
    uint64_t end;
    double w0 = wall_us();
    uint64_t samples = write_days(dir, days, &end);
    double written = wall_us() - w0;
    char trace[256], conf[256], cand[256], conf_d[256], since[32];
    snprintf(trace, sizeof(trace), "%s/trace", dir);
    printf("  %d days of the typical node: %llu samples, %.0f MiB, written in %.1f s\n", days,
           (unsigned long long)samples, (double)dir_bytes(trace) / (1 << 20), written / 1e6);
    /* The shipped config with the shipped rules, and a candidate with the
     * CPU threshold doubled. */
    snprintf(conf, sizeof(conf), "%s/current/loginguard.conf", dir);
    snprintf(cand, sizeof(cand), "%s/candidate/loginguard.conf", dir);
    for (int k = 0; k < 2; k++) {
        snprintf(conf_d, sizeof(conf_d), "%s/%s", dir, k ? "candidate" : "current");
        mkdir(conf_d, 0700);
        char *text = xasprintf("[daemon]\nmin_uid = 1000\nrules_dirs = %s\nstate_dir = %s\n"
                               "[violation]\ncpu = %s\n", P->rules_dir, dir,
                               k ? "4 cores" : "2 cores");
        write_text(k ? cand : conf, text);
        free(text);
    }
    snprintf(since, sizeof(since), "%dd", days + 1);
    char ctl[1200];
    snprintf(ctl, sizeof(ctl), "%s/tools/loginguardctl", P->builddir);
    double t0 = wall_us();
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execl(ctl, ctl, "simulate", "--config", cand, "--current", conf, "--trace", trace,
              "--since", since, "--json", (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    double wall = wall_us() - t0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("  simulate failed (status %d)\n", status);
        return;
    }
    printf("  loginguardctl simulate over them (two policies): %.1f s wall, %.1f s CPU, "
           "peak memory %.1f MiB; %.1f us a sample\n",
           wall / 1e6, (tv_us(ru.ru_utime) + tv_us(ru.ru_stime)) / 1e6,
           (double)ru.ru_maxrss / 1024, wall / (double)samples);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct paths P;
    find_paths(&P);
    int samples = (int)env_long("LG_BENCH_TRACE_SAMPLES", 600, 10, 100000);
    int days = (int)env_long("LG_BENCH_TRACE_DAYS", 7, 0, 60);
    char dir[] = "/tmp/lgbench.trace.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_trace: mkdtemp");
        return 1;
    }
    printf("bench_trace: the usage trace's writer at %d users and %d processes on the node, "
           "%d samples of 2 s each model\n", USERS, NODE_PROCS, samples);
    for (size_t i = 0; i < sizeof(models) / sizeof(models[0]) && !stopping; i++) {
        char sub[128];
        snprintf(sub, sizeof(sub), "%s/%s", dir, models[i].name);
        mkdir(sub, 0700);
        /* The flood over a whole segment: its budget runs out within it. */
        measure_writer(&models[i], models[i].flood_slots && samples < 1800 ? 1800 : samples, sub);
    }
    if (!stopping) {
        char sub[128];
        snprintf(sub, sizeof(sub), "%s/replay", dir);
        mkdir(sub, 0700);
        printf("bench_trace: loginguardctl simulate at %d users\n", USERS);
        measure_simulate(&P, sub, days);
    }
    if (getenv("LG_BENCH_KEEP"))
        printf("bench_trace: kept %s\n", dir);
    else
        remove_bench_tree(dir);
    return 0;
}
