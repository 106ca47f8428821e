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
 *   2. The daemon's own CPU and memory with 10,000 processes of 500 users,
 *      every one moved by the daemon into its user's cgroup, at the
 *      default intervals:
 *        a. idle processes;
 *        b. hostile ones: each holds a 32 KiB command line crafted against
 *           a shipped argv pattern, and 1,000 of them rename themselves
 *           four times a second.
 *      The daemon's CPU (from its CPU clock) over several windows of one
 *      scan_interval each (one sweep in each), min and median, its memory
 *      at the end of each, and the rest of the machine's load in each
 *      window beside them.  Then, in this process against the same cgroups,
 *      where one counter-path sample (observe: the sampler and classification)
 *      spends its time,
 *      and what writing [daemon] metrics_file after it costs with every
 *      user of the snapshot shown (the most the daemon would show there).
 *      While the daemon still runs with that population, round trips of
 *      `status` (bench_status.c): on the socket, and through loginguardctl
 *      as JSON and as a table; median, p95 and max, the reply's size, the
 *      daemon's CPU per call, and whether its samples stayed on time.
 * It prints figures, and the targets beside them, never pass/fail.
 * Exit status: 0, or 77 when it cannot run at all (not root, ...).
 *
 * Environment:
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR  the trees (default: the configured ones)
 *   LG_BENCH_LATENCY         0 skips part 1 (default 1)
 *   LG_BENCH_LATENCY_REPS    hogs per window (3)
 *   LG_BENCH_DEFAULT_WINDOW  1 also runs part 1 with the shipped window (0)
 *   LG_BENCH_WINDOWS         part 2's measuring windows (4; 0 skips part 2)
 *   LG_BENCH_WINDOW_SECONDS  their length (default: the policy's scan_interval, 30)
 *   LG_BENCH_HOSTILE         0 skips part 2b (default 1)
 *   LG_BENCH_PROCS, LG_BENCH_USERS  part 2's load (10000, 500)
 *   LG_BENCH_ARGV_BYTES      2b's command lines (32768)
 *   LG_BENCH_RENAMERS, LG_BENCH_RENAME_MS  2b's renaming processes (1000, 250)
 *   LG_BENCH_SAMPLES         in-process samples, one per sample_interval (15)
 *   LG_BENCH_STATUS_CALLS    status round trips of each way (50; 0 skips them)
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

#include "bench_status.h"
#include "benchdaemon.h"
#include "benchutil.h"
#include "configfile.h"
#include "core/observe.h"
#include "errors.h"
#include "metrics_format.h"
#include "observe/cgroup_counters.h"
#include "observe/procfs.h"
#include "observe/sampler.h"
#include "policy.h"
#include "rules_judge.h"
#include "safefile.h"
#include "snapshot.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define HOG_BASE_UID 62000u  /* part 1's, a fresh one per hog */
#define MAX_REPS 20
#define CFS_PERIOD_US 100000

/* The targets at 10,000 processes of 500 users, enforce mode. */
#define TARGET_DAEMON_CPU_PCT 0.2
#define TARGET_DAEMON_RSS_MIB 8.0

/* The hog of part 1, to be stopped on the way out. */
static struct {
    pid_t hog;
} G;

/* ------------------------------------------------------------------ */
/* small helpers                                                        */

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
    kill_reap(&G.hog, SIGKILL);
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
        double busy0 = machine_busy_us(), own0 = cpu_self_children_us();
        uint64_t dticks0 = read_daemon(BD.daemon).ticks;
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
        uint64_t dticks1 = BD.daemon > 0 ? read_daemon(BD.daemon).ticks : dticks0;
        double ticks_us = 1e6 / (double)sysconf(_SC_CLK_TCK);
        double others = (machine_busy_us() - busy0) - (cpu_self_children_us() - own0) -
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
        if (BD.daemon <= 0)
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

/* One pass of body, its CPU added to runs r (after the same short pause
 * a sample gets: a pass straight after another runs on warmer caches). */
#define TIMED_RUN(r, body)                                                                         \
    do {                                                                                           \
        nap_ms(20);                                                                                \
        double a_ = cpu_self_us();                                                                 \
        body;                                                                                      \
        runs_add(&(r), cpu_self_us() - a_);                                                        \
    } while (0)

/* What the phase's processes hold and do. */
struct load_kind {
    const char *name;   /* "idle", "hostile" */
    int argv_bytes;     /* 0: an idle fork, with the benchmark's own short command line */
    int renamers;       /* of them, renaming every rename_ms */
    int rename_ms;
};

struct load_result {
    bool ran, adopted, measured, inproc;
    char why[240];
    struct load_kind kind;
    int procs, users;
    double spawn_s;
    double adopt_s; /* daemon start -> every process in its user's cgroup */
    long adopted_procs;
    int adopted_groups;
    double startup_cpu_ms, startup_hwm_mib;
    /* the windows, each scan_interval long: one sweep in each */
    double window_s;
    struct runs cpu_pct;         /* the daemon's CPU, % of one core */
    struct runs rss, anon, file, pss;  /* MiB, at each window's end */
    struct load_runs others;
    double hwm_mib;              /* the peak over the windows */
    bool hwm_reset;
    double procs_cpu_pct;        /* the phase's own processes (renames), % of one core */
    double kthread_cores;
    char kthread_top[160];
    pid_t disturbed_by;          /* another loginguardd seen at the end */
    long kept_procs;             /* processes still in the user cgroups at the end */
    long events_in_window;
    char event_kinds[200];
    /* in-process: one sample, at the policy's interval */
    struct runs sample_us, readdir_us, discover_us, read_us, sweep_us, empty_us;
    long proc_entries;
    size_t groups, tracked, users_seen;
    uint64_t tasks_seen;
    double first_ms, interval_s;
    bool connector; /* the in-process sampler had the proc connector, as the daemon */
    /* metrics_file after a sample, every user of the snapshot shown */
    struct runs metrics_format_us, metrics_write_us;
    struct runs metrics_idle_us;  /* the same with no user shown: an idle node */
    size_t metrics_users, metrics_bytes, metrics_idle_bytes;
    bool metrics_written;
    uint64_t connector_events;
    struct load_runs inproc_others;
    struct status_bench status;  /* loginguardctl status against the daemon */
};

static void count_event_kinds(const char *path, off_t from, struct load_result *r)
{
    char *t = read_text(path, 1 << 22);
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

/* What metrics_file costs after a sample: the text made from the
 * snapshot with every one of its users shown (the daemon shows only
 * those not idle, so this is the most it does at this many users), and
 * written as the daemon writes it (a temporary file renamed over the
 * last, mode 0644, in the benchmark's directory). */
static void metrics_inprocess(struct load_result *r, const struct sampler *s,
                              const struct snapshot *snap, int reps)
{
    struct metrics m = {.start_time = 1};
    for (uint64_t k = 1; k <= s->stats.samples; k++)
        metrics_count_sample(&m, 1000 * k);
    struct metrics_user *users = calloc(snap->user_count + 1, sizeof(*users));
    if (!users)
        abort();
    for (size_t i = 0; i < snap->user_count; i++)
        users[i] = (struct metrics_user){.uid = snap->users[i].uid, .name = snap->users[i].name,
                                         .cpu_cores = snap->users[i].cpu,
                                         .memory_bytes = snap->users[i].memory,
                                         .tasks = snap->users[i].tasks, .level = (int)(i % 2)};
    static const char *const levels[] = {"warned", "throttled", "restricted"};
    struct metrics_view v = {.version = PACKAGE_VERSION, .mode = "enforce", .enforcing = true,
                             .counters = &m, .level_names = levels, .level_count = 3,
                             .users = users, .user_count = snap->user_count,
                             .users_tracked = snap->user_count,
                             .processes_tracked = s->known.count, .connector_up = true};
    int dirfd = open(BD.tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char err[600] = "";
    bool ok = dirfd >= 0;
    for (int k = 0; k < reps && ok && !stopping; k++) {
        size_t len = 0;
        char *text = NULL;
        TIMED_RUN(r->metrics_format_us, text = metrics_format(&v, &len));
        TIMED_RUN(r->metrics_write_us,
                  ok = safe_publish_file(dirfd, BD.tmpdir, "metrics.prom", text, len, err,
                                         sizeof(err)) == 0);
        r->metrics_bytes = len;
        free(text);
    }
    /* What every write costs whatever the users do: the daemon's own
     * series, no user's (every user idle). */
    struct metrics_view none = v;
    none.user_count = 0;
    for (int k = 0; k < reps && ok && !stopping; k++) {
        TIMED_RUN(r->metrics_idle_us, {
            size_t len = 0;
            char *text = metrics_format(&none, &len);
            ok = safe_publish_file(dirfd, BD.tmpdir, "metrics.prom", text, len, err,
                                   sizeof(err)) == 0;
            r->metrics_idle_bytes = len;
            free(text);
        });
    }
    if (!ok)
        printf("  metrics_file: %s\n", dirfd < 0 ? strerror(errno) : err);
    if (dirfd >= 0)
        close(dirfd);
    r->metrics_users = snap->user_count;
    r->metrics_written = ok && r->metrics_write_us.n > 0;
    free(users);
}

/* Where a counter-path sample goes, measured in this process on the
 * cgroups the daemon made (it is stopped by then; they stay).  Like the
 * daemon, it takes new processes from the proc connector where it can
 * (reading the events of the whole node counts in the sample), and
 * samples at the policy's interval. */
static void load_inprocess(struct load_result *r, const struct policy *pol, const char *parent,
                           int samples, const pid_t *pids, int npids)
{
    char cpu[1024], mem[1024], pidsdir[1024];
    parent_dir(C_CPUACCT, parent, cpu, sizeof(cpu));
    parent_dir(C_MEMORY, parent, mem, sizeof(mem));
    parent_dir(C_PIDS, parent, pidsdir, sizeof(pidsdir));
    struct sampler s;
    struct snapshot snap = {0};
    struct environment env;
    environment_host(&env);
    struct counter_roots roots = {.version = 1, .cpu = cpu,
                                  .memory = ctl[C_MEMORY].found ? mem : NULL,
                                  .pids = ctl[C_PIDS].found ? pidsdir : NULL};
    struct rules_judge judge;
    rules_judge_init(&judge, &pol->rules);
    struct sampler_scope scope = observe_scope(pol, &judge.judge);
    if (sampler_init(&s, &env, &roots, &scope) < 0 || !s.use_counters) {
        snprintf(r->why, sizeof(r->why), "sampler_init on %.150s failed", cpu);
        return;
    }
    struct proc_connector pc;
    char pc_err[300];
    r->connector = pol->proc_connector && proc_connector_open(&pc, pc_err, sizeof(pc_err)) == 0;
    sampler_events_live(&s, r->connector);
    /* As the daemon starts: a sweep finds every process, then samples. */
    double a = cpu_self_us();
    sampler_sweep(&s);
    observe(&s, pol, &snap, NULL);
    r->first_ms = (cpu_self_us() - a) / 1e3;
    r->interval_s = (double)pol->sample_interval / 1e6;
    for (int k = 0; k < samples && !stopping; k++) {
        double mine0 = cpu_self_children_us() + cpu_of_list_us(pids, npids);
        struct load_mark m0 = load_mark_now(mine0);
        nap_ms((long)(pol->sample_interval / 1000));
        double c0 = cpu_self_us();
        if (r->connector && proc_connector_drain(&pc, note_event, &s) > 0)
            sampler_note_lost(&s);
        observe(&s, pol, &snap, NULL);
        runs_add(&r->sample_us, cpu_self_us() - c0);
        double mine1 = cpu_self_children_us() + cpu_of_list_us(pids, npids);
        load_runs_add(&r->inproc_others, other_load_between(m0, load_mark_now(mine1)));
    }
    metrics_inprocess(r, &s, &snap, samples > 5 ? samples : 5);
    r->groups = s.counters.count;
    r->tracked = s.known.count;
    for (size_t i = 0; i < snap.user_count; i++) {
        r->users_seen++;
        r->tasks_seen += snap.users[i].tasks;
    }

    int reps = samples > 5 ? samples : 5;
    /* a. the /proc listing, as find_new_processes does it without the
     *    connector (its hash lookups of known pids aside, a few ns each) */
    DIR *d = opendir("/proc");
    long entries = 0, sink = 0;
    for (int k = 0; d && k < reps && !stopping; k++) {
        entries = 0;
        TIMED_RUN(r->readdir_us, {
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
    r->proc_entries = entries;
    /* b. counters_discover: readdir of the parent, a binary search per entry */
    for (int k = 0; k < reps && !stopping; k++)
        TIMED_RUN(r->discover_us, counters_discover(&s.counters));
    /* c. the counter reads, every group */
    struct user_usage use;
    for (int k = 0; k < reps && !stopping; k++) {
        TIMED_RUN(r->read_us, {
            for (size_t i = 0; i < s.counters.count; i++)
                sink += counters_read(&s.counters, &s.counters.groups[i], &use);
        });
    }
    /* d. the sweep (every scan_interval) and the backend's empty-cgroup
     *    check (enforcer_remove_empty: cgroup.procs of each user, after it) */
    for (int k = 0; k < 3 && !stopping; k++)
        TIMED_RUN(r->sweep_us, sampler_sweep(&s));
    for (int k = 0; k < 3 && !stopping; k++) {
        TIMED_RUN(r->empty_us, {
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
    }
    if (sink == 42)
        fputc(' ', stderr);
    if (r->connector) {
        r->connector_events = pc.events;
        proc_connector_close(&pc);
    }
    sampler_free(&s);
    rules_judge_free(&judge);
    snapshot_free(&snap);
    r->inproc = !stopping;
}

/* The phase's processes: idle forks, or `renamer` copies holding a
 * crafted command line (some renaming themselves).  Their pids (malloc'd)
 * and how many, or NULL with why filled. */
static pid_t *start_load(const struct load_kind *k, int procs, int users, struct nreply *nr,
                         int *count)
{
    *count = 0;
    if (k->argv_bytes == 0)
        return spawn_idle(procs, users, LOAD_BASE_UID, nr);
    int renamers = k->renamers < procs ? k->renamers : procs;
    /* An hour between renames: they hold their command line and sleep. */
    pid_t *a = spawn_hostile(renamers, users, LOAD_BASE_UID, k->rename_ms, nr);
    struct nreply nr2 = {0, 0, 0};
    pid_t *b = spawn_hostile(procs - renamers, users, LOAD_BASE_UID, 3600 * 1000, &nr2);
    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    pid_t *all = calloc((size_t)(nr->made + nr2.made) + 1, sizeof(pid_t));
    if (!all)
        abort();
    memcpy(all, a, (size_t)nr->made * sizeof(pid_t));
    memcpy(all + nr->made, b, (size_t)nr2.made * sizeof(pid_t));
    free(a);
    free(b);
    nr->made += nr2.made;
    nr->ready += nr2.ready;
    nr->err = nr->err ? nr->err : nr2.err;
    return all;
}

/* The windows: each scan_interval long (one sweep in each), the daemon's
 * CPU from its CPU clock, its memory at each end, and everyone else's
 * load meanwhile. */
static void measure_windows(struct load_result *r, pid_t dpid, int windows, double window_s,
                            const pid_t *pids, int npids)
{
    double procs0 = cpu_of_list_us(pids, npids), w_start = wall_us();
    r->window_s = window_s;
    for (int k = 0; k < windows && !stopping; k++) {
        double d0 = cpu_of_us(dpid);
        double mine0 = cpu_self_children_us() + d0 + cpu_of_list_us(pids, npids);
        struct load_mark m0 = load_mark_now(mine0);
        double w0 = wall_us();
        while (!stopping && wall_us() - w0 < window_s * 1e6) {
            double left_ms = (window_s * 1e6 - (wall_us() - w0)) / 1e3;
            nap_ms(left_ms > 200 ? 200 : (long)left_ms + 1);
            if (daemon_exited())
                return;
        }
        double d1 = cpu_of_us(dpid), w1 = wall_us();
        if (stopping || d0 < 0 || d1 < 0)
            return;
        struct memory_reading m = read_memory(dpid);
        runs_add(&r->cpu_pct, (d1 - d0) / (w1 - w0) * 100.0);
        runs_add(&r->rss, m.rss);
        runs_add(&r->anon, m.anon);
        runs_add(&r->file, m.file);
        runs_add(&r->pss, m.pss);
        double mine1 = cpu_self_children_us() + d1 + cpu_of_list_us(pids, npids);
        struct other_load l = other_load_between(m0, load_mark_now(mine1));
        load_runs_add(&r->others, l);
        char text[160];
        other_load_text(l, text, sizeof(text));
        printf("  window %d: daemon %.3f %% of one core, RSS %.2f MiB (anon %.2f, file %.2f);"
               " %s\n",
               k + 1, (d1 - d0) / (w1 - w0) * 100.0, m.rss, m.anon, m.file, text);
    }
    r->procs_cpu_pct = (cpu_of_list_us(pids, npids) - procs0) / (wall_us() - w_start) * 100.0;
}

static void load_phase(const struct paths *P, const struct load_kind *kind, int procs, int users,
                       int windows, int window_override, int samples, int adopt_timeout,
                       struct load_result *r)
{
    r->procs = procs;
    r->users = users;
    r->kind = *kind;
    printf("\n# 2. the daemon's own cost: %d %s processes of %d users in per-user cgroups\n",
           procs, kind->name, users);
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    if ((rlim_t)procs + 4 * (rlim_t)users + 64 > nofile.rlim_max) {
        snprintf(r->why, sizeof(r->why),
                 "RLIMIT_NOFILE hard limit %llu is too low for %d held descriptors",
                 (unsigned long long)nofile.rlim_max, procs + 4 * users);
        printf("  skipped: %s\n", r->why);
        return;
    }
    struct run_conf R;
    struct policy pol;
    if (make_run_conf(P, kind->name, NULL, &R) < 0 || load_policy(R.conf, &pol) < 0) {
        snprintf(r->why, sizeof(r->why), "cannot write or load the config");
        printf("  skipped: %s\n", r->why);
        return;
    }
    double window_s = window_override > 0 ? window_override : (double)pol.scan_interval / 1e6;
    printf("  config: shipped, with [daemon] mode = enforce, backend = cgroupfs, cgroup_parent = %s,"
           " min_uid = %u\n  (sample_interval %.0fs, scan_interval %.0fs)\n",
           R.parent, LOAD_BASE_UID, (double)pol.sample_interval / 1e6,
           (double)pol.scan_interval / 1e6);
    if (kind->argv_bytes)
        printf("  each process holds a %d-byte command line crafted against a shipped argv pattern"
               " (renamer ... \"_train_train...\");\n  %d of them rename themselves every %d ms"
               " (python3 <-> python3x), the others once an hour\n",
               kind->argv_bytes, kind->renamers < procs ? kind->renamers : procs,
               kind->rename_ms);
    double t0 = wall_us();
    struct nreply nr;
    int unused;
    pid_t *pids = start_load(kind, procs, users, &nr, &unused);
    r->spawn_s = (wall_us() - t0) / 1e6;
    if (!pids || nr.made != procs || nr.ready != procs) {
        snprintf(r->why, sizeof(r->why), "started %d of %d processes (%d ready): %s", nr.made,
                 procs, nr.ready, nr.err ? strerror(nr.err) : "?");
        printf("  skipped: %s\n", r->why);
        free(pids);
        kill_idle();
        policy_free(&pol);
        return;
    }
    printf("  %d processes (uids %u..%u) started in %.2f s; starting the daemon\n", procs,
           LOAD_BASE_UID, LOAD_BASE_UID + (unsigned)users - 1, r->spawn_s);
    t0 = wall_us();
    if (daemon_start(P, &R) < 0) {
        snprintf(r->why, sizeof(r->why), "the daemon did not start");
        free(pids);
        kill_idle();
        remove_parent(R.parent);
        policy_free(&pol);
        return;
    }
    r->ran = true;
    pid_t dpid = BD.daemon;
    r->adopted = wait_adopted(&R, procs, adopt_timeout, &r->adopted_procs, &r->adopted_groups,
                              r->why, sizeof(r->why)) == 0;
    r->adopt_s = (wall_us() - t0) / 1e6;
    if (!r->adopted) {
        printf("  %s\n", r->why);
    } else {
        printf("  all %ld processes in %d user cgroups %.2f s after the daemon started\n",
               r->adopted_procs, r->adopted_groups, r->adopt_s);
        wait_settled(dpid);
        r->startup_cpu_ms = cpu_of_us(dpid) / 1e3;
        r->startup_hwm_mib = status_mib(dpid, "VmHWM:");
        /* The peak from here on: "5" resets VmHWM (proc(5), clear_refs). */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)dpid);
        r->hwm_reset = write_text(path, "5") == 0;
        struct stat st;
        off_t ev_from = stat(R.event_log, &st) == 0 ? st.st_size : 0;
        static struct kthreads kt;
        kthreads_find(&kt);
        kthreads_mark(&kt);
        double k0 = wall_us();
        printf("  measuring the daemon: %d windows of %.0f s...\n", windows, window_s);
        measure_windows(r, dpid, windows, window_s, pids, procs);
        if (!stopping && r->cpu_pct.n == windows) {
            r->hwm_mib = status_mib(dpid, "VmHWM:");
            if (!r->hwm_reset && r->startup_hwm_mib > r->hwm_mib)
                r->hwm_mib = r->startup_hwm_mib;
            r->kthread_cores = kthreads_busiest(&kt, (wall_us() - k0) / 1e6, r->kthread_top,
                                                sizeof(r->kthread_top));
            count_event_kinds(R.event_log, ev_from, r);
            int status_calls = (int)env_long("LG_BENCH_STATUS_CALLS", 50, 0, STATUS_CALLS_MAX);
            if (status_calls > 0) {
                char ctl_path[1200], sock[200];
                snprintf(ctl_path, sizeof(ctl_path), "%s/tools/loginguardctl", P->builddir);
                snprintf(sock, sizeof(sock), "%s/control.sock", R.dir);
                status_bench_run(&r->status, ctl_path, sock, R.conf, dpid, LOAD_BASE_UID,
                                 (double)pol.sample_interval / 1e6, status_calls, 6);
            }
            int groups;
            r->kept_procs = count_adopted(R.parent, &groups);
            r->disturbed_by = other_daemon();
            r->measured = true;
        } else if (!stopping) {
            snprintf(r->why, sizeof(r->why), "the daemon exited during the windows");
            print_daemon_log(&R);
        }
    }
    daemon_stop();
    if (r->adopted && !stopping && samples > 0) {
        printf("  in-process samples on the same cgroups (%d, every %.0f s)...\n", samples,
               (double)pol.sample_interval / 1e6);
        load_inprocess(r, &pol, R.parent, samples, pids, procs);
    }
    kill_idle(); /* first: the cgroups must be empty to go */
    free(pids);
    if (remove_parent(R.parent) < 0)
        printf("  warning: some cgroups below %s could not be removed (listed above)\n", R.parent);
    policy_free(&pol);
}

static void print_runs_line(const char *what, const struct runs *v, const char *unit,
                            const char *target)
{
    printf("    %-44s %9.3f %9.3f %9.3f  %-6s %s\n", what, runs_min(v), runs_median(v),
           runs_max(v), unit, target);
}

static void print_load(const struct load_result *r)
{
    printf("\n== 2%s. the daemon with %d %s processes of %d users in per-user cgroups (enforce,"
           " cgroupfs)\n",
           r->kind.argv_bytes ? "b" : "a", r->procs, r->kind.name, r->users);
    if (!r->ran) {
        printf("  not run: %s\n", r->why[0] ? r->why : "interrupted");
        return;
    }
    if (r->kind.argv_bytes)
        printf("  each holds a %d-byte crafted command line; %d rename themselves every %d ms\n",
               r->kind.argv_bytes, r->kind.renamers, r->kind.rename_ms);
    printf("  start-up: every process moved into its user's cgroup %.2f s after the start"
           " (%ld processes, %d user cgroups);\n  %.0f ms CPU until settled, VmHWM %.2f MiB by"
           " then\n",
           r->adopt_s, r->adopted_procs, r->adopted_groups, r->startup_cpu_ms, r->startup_hwm_mib);
    if (r->measured) {
        char target_cpu[64], target_rss[64], text[300];
        snprintf(target_cpu, sizeof(target_cpu), "target < %.1f %% (median)",
                 TARGET_DAEMON_CPU_PCT);
        snprintf(target_rss, sizeof(target_rss), "target < %.0f MiB (max)",
                 TARGET_DAEMON_RSS_MIB);
        printf("  %d windows of %.0f s (one sweep in each):%*s min    median       max\n",
               r->cpu_pct.n, r->window_s, 14, "");
        print_runs_line("daemon CPU (its CPU clock), % of one core", &r->cpu_pct, "%",
                        target_cpu);
        print_runs_line("daemon RSS (smaps_rollup Rss) at window ends", &r->rss, "MiB",
                        target_rss);
        print_runs_line("  of which anonymous", &r->anon, "MiB", "");
        print_runs_line("  of which file-backed (shared libraries)", &r->file, "MiB", "");
        print_runs_line("  PSS (shared pages divided among users)", &r->pss, "MiB", "");
        printf("    peak RSS over the windows (VmHWM%s) %.2f MiB\n",
               r->hwm_reset ? " after a reset at their start" : ", the life peak: no reset",
               r->hwm_mib);
        load_runs_text(&r->others, text, sizeof(text));
        printf("    other load per window: %s;\n      of which kernel threads %.2f cores%s%s%s\n",
               text, r->kthread_cores, r->kthread_top[0] ? " (" : "", r->kthread_top,
               r->kthread_top[0] ? ")" : "");
        if (r->kind.argv_bytes)
            printf("    the phase's own processes (renames) used %.2f %% of one core, not counted"
                   " as other load\n",
                   r->procs_cpu_pct);
        if (r->disturbed_by || r->kept_procs < r->adopted_procs)
            printf("    DISTURBED: %ld of %ld processes left in the user cgroups at the end%s; "
                   "the figures are not the daemon's alone\n",
                   r->kept_procs, r->adopted_procs,
                   r->disturbed_by ? ", another loginguardd runs" : "");
        printf("    events in the windows: %ld%s%s%s\n", r->events_in_window,
               r->event_kinds[0] ? " (" : "", r->event_kinds, r->event_kinds[0] ? ")" : "");
        status_bench_print(&r->status);
    } else if (r->why[0]) {
        printf("  not measured: %s\n", r->why);
    }
    if (r->inproc) {
        double s = runs_median(&r->sample_us);
        char text[300];
        /* With the connector the sample lists no /proc. */
        double listing = r->connector ? 0 : runs_median(&r->readdir_us);
        double rest = s - listing - runs_median(&r->discover_us) - runs_median(&r->read_us);
        load_runs_text(&r->inproc_others, text, sizeof(text));
        printf("  one counter-path sample in this process (observe, same cgroups, same"
               " policy, every %.0f s):\n",
               r->interval_s);
        printf("    %.3f ms CPU min, %.3f ms median of %d = %.2f / %.2f us per user; first sample"
               " after the start-up sweep %.0f ms\n",
               runs_min(&r->sample_us) / 1e3, s / 1e3, r->sample_us.n,
               runs_min(&r->sample_us) / (double)(r->groups ? r->groups : 1),
               s / (double)(r->groups ? r->groups : 1), r->first_ms);
        printf("    other load meanwhile: %s\n", text);
        printf("    users in the snapshot %zu (tasks %llu), user cgroups %zu, tracked processes"
               " %zu\n",
               r->users_seen, (unsigned long long)r->tasks_seen, r->groups, r->tracked);
        printf("    where it goes (measured apart, ms CPU, median, share of the sample):\n");
        if (r->connector)
            printf("      new processes from the proc connector (%llu events read during the"
                   " samples); a /proc listing (without\n      the connector) would add %.3f ms:"
                   " %ld entries, %.2f us each\n",
                   (unsigned long long)r->connector_events, runs_median(&r->readdir_us) / 1e3,
                   r->proc_entries,
                   r->proc_entries ? runs_median(&r->readdir_us) / (double)r->proc_entries : 0);
        else
            printf("      /proc listing for new processes (%ld entries)  %7.3f  %5.1f %%\n",
                   r->proc_entries, listing / 1e3, 100 * listing / s);
        printf("      per-user counters: counters_discover        %7.3f  %5.1f %%  %.2f us/user"
               " (only when the groups may have changed)\n",
               runs_median(&r->discover_us) / 1e3, 100 * runs_median(&r->discover_us) / s,
               r->groups ? runs_median(&r->discover_us) / (double)r->groups : 0);
        printf("      per-user counters: counters_read            %7.3f  %5.1f %%  %.2f us/user"
               " (min %.2f)\n",
               runs_median(&r->read_us) / 1e3, 100 * runs_median(&r->read_us) / s,
               r->groups ? runs_median(&r->read_us) / (double)r->groups : 0,
               r->groups ? runs_min(&r->read_us) / (double)r->groups : 0);
        printf("      the rest, by difference (events, snapshot, walks over %zu tracked, names)"
               " %7.3f  %5.1f %%\n",
               r->tracked, rest / 1e3, 100 * rest / s);
        printf("    every scan_interval: sweep %.2f ms (min %.2f); the backend's empty-cgroup"
               " check, were every user looked at, %.2f ms (the daemon looks only at users whose"
               " task counter read 0)\n",
               runs_median(&r->sweep_us) / 1e3, runs_min(&r->sweep_us) / 1e3,
               runs_median(&r->empty_us) / 1e3);
        if (r->metrics_written) {
            double fmt = runs_median(&r->metrics_format_us), wr = runs_median(&r->metrics_write_us);
            printf("    metrics_file after each sample, all %zu users of the snapshot shown (%zu "
                   "bytes, %.0f bytes a user):\n      %.3f ms CPU median (min %.3f) = %.2f us a "
                   "user: the text %.3f ms, the write and rename %.3f ms;\n      %.1f %% of one "
                   "sample's CPU, %.4f %% of one core at one write every %.0f s\n",
                   r->metrics_users, r->metrics_bytes,
                   (double)r->metrics_bytes / (double)(r->metrics_users ? r->metrics_users : 1),
                   (fmt + wr) / 1e3,
                   (runs_min(&r->metrics_format_us) + runs_min(&r->metrics_write_us)) / 1e3,
                   (fmt + wr) / (double)(r->metrics_users ? r->metrics_users : 1), fmt / 1e3,
                   wr / 1e3, 100 * (fmt + wr) / s, (fmt + wr) / (r->interval_s * 1e6) * 100,
                   r->interval_s);
            printf("      with no user shown (every user idle; %zu bytes): %.3f ms CPU median (min"
                   " %.3f), %.4f %% of one core\n",
                   r->metrics_idle_bytes, runs_median(&r->metrics_idle_us) / 1e3,
                   runs_min(&r->metrics_idle_us) / 1e3,
                   runs_median(&r->metrics_idle_us) / (r->interval_s * 1e6) * 100);
        }
        double per_min = 30 * s + 2 * runs_median(&r->sweep_us);
        printf("    predicted from these: (30 samples + 2 sweeps) / 60 s = %.3f %% of one core"
               " (the samples alone: %.3f %%)\n",
               per_min / 60e6 * 100, 30 * s / 60e6 * 100);
    }
}

/* ------------------------------------------------------------------ */

static void cleanup(void)
{
    stop_hog();
    daemon_stop();
    kill_idle();
    nursery_stop();
    remove_parents();
    remove_tmpdir();
}

/* The figures the targets are about, side by side. */
static void print_summary(const struct load_result *load, int count)
{
    printf("\n== the targets (10,000 processes of 500 users, enforce mode)\n");
    printf("  %-9s %-38s %9s %9s   %s\n", "load", "figure", "min", "median", "target");
    for (int i = 0; i < count; i++) {
        const struct load_result *r = &load[i];
        if (!r->measured)
            continue;
        printf("  %-9s %-38s %9.3f %9.3f   < %.1f %%\n", r->kind.name,
               "daemon CPU, % of one core", runs_min(&r->cpu_pct), runs_median(&r->cpu_pct),
               TARGET_DAEMON_CPU_PCT);
        printf("  %-9s %-38s %9.2f %9.2f   < %.0f MiB (the largest: %.2f)\n", r->kind.name,
               "daemon RSS, MiB", runs_min(&r->rss), runs_median(&r->rss), TARGET_DAEMON_RSS_MIB,
               runs_max(&r->rss));
        if (r->inproc)
            printf("  %-9s %-38s %9.2f %9.2f   (the counter path's cost per user)\n",
                   r->kind.name, "one sample in-process, us per user",
                   runs_min(&r->sample_us) / (double)(r->groups ? r->groups : 1),
                   runs_median(&r->sample_us) / (double)(r->groups ? r->groups : 1));
        if (r->metrics_written)
            printf("  %-9s %-38s %9.3f %9.3f   (%zu users shown, %zu bytes)\n", r->kind.name,
                   "metrics_file write, ms CPU",
                   (runs_min(&r->metrics_format_us) + runs_min(&r->metrics_write_us)) / 1e3,
                   (runs_median(&r->metrics_format_us) + runs_median(&r->metrics_write_us)) / 1e3,
                   r->metrics_users, r->metrics_bytes);
        char text[300];
        load_runs_text(&r->others, text, sizeof(text));
        printf("  %-9s   while %s\n", "", text);
    }
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
    int windows = (int)env_long("LG_BENCH_WINDOWS", 4, 0, MAX_RUNS);
    int window_s = (int)env_long("LG_BENCH_WINDOW_SECONDS", 0, 0, 86400);
    bool do_hostile = env_long("LG_BENCH_HOSTILE", 1, 0, 1);
    int procs = (int)env_long("LG_BENCH_PROCS", 10000, 1, MAX_CHILDREN - 1);
    int users = (int)env_long("LG_BENCH_USERS", 500, 1, 999);
    int samples = (int)env_long("LG_BENCH_SAMPLES", 15, 0, MAX_RUNS);
    int adopt_timeout = (int)env_long("LG_BENCH_ADOPT_TIMEOUT", 300, 1, 86400);
    int wait_others = (int)env_long("LG_BENCH_WAIT_OTHERS", 600, 0, 86400);
    struct load_kind kinds[2] = {
        {"idle", 0, 0, 0},
        {"hostile", (int)env_long("LG_BENCH_ARGV_BYTES", 32768, 16, 1 << 20),
         (int)env_long("LG_BENCH_RENAMERS", 1000, 0, MAX_CHILDREN),
         (int)env_long("LG_BENCH_RENAME_MS", 250, 1, 3600 * 1000)},
    };
    if (users > procs)
        users = procs;

    struct paths P;
    find_paths(&P);
    if (access(P.daemon, X_OK) < 0 || access(P.main_conf, R_OK) < 0 ||
        access(P.rules_dir, R_OK) < 0 || access(P.spin, X_OK) < 0 ||
        access(P.renamer, X_OK) < 0) {
        printf("bench_enforce: cannot find %s, %s, %s, %s or %s (build the tree, `make -C tests"
               " helpers/spin helpers/renamer`; set LG_TOP_SRCDIR, LG_TOP_BUILDDIR); skipped\n",
               P.daemon, P.main_conf, P.rules_dir, P.spin, P.renamer);
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
    if (bench_tmpdir("enforce") < 0) {
        printf("bench_enforce: cannot make a temporary directory: %s; skipped\n", strerror(errno));
        cleanup();
        return SKIP;
    }
    /* Copies the test uids may run (the build tree may be closed to them). */
    char spin_copy[128], renamer_copy[128];
    snprintf(spin_copy, sizeof(spin_copy), "%s/spin", BD.tmpdir);
    snprintf(renamer_copy, sizeof(renamer_copy), "%s/renamer", BD.tmpdir);
    if (copy_file(P.spin, spin_copy, 0755) < 0 || copy_file(P.renamer, renamer_copy, 0755) < 0 ||
        nursery_hostile(renamer_copy, kinds[1].argv_bytes, 3600) < 0) {
        printf("bench_enforce: cannot copy %s or %s: %s; skipped\n", P.spin, P.renamer,
               strerror(errno));
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
    printf("  CPU figures are CPU time (the daemon's CPU clock, this process's), never wall"
           " time; each is\n  repeated and printed as min and median, with the rest of the"
           " machine's load beside it\n");

    static struct latency_result lat[2];
    static struct load_result load[2];
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
    int phases = windows > 0 ? (do_hostile ? 2 : 1) : 0;
    for (int i = 0; i < phases && !stopping; i++) {
        if (wait_quiet(wait_others) < 0)
            snprintf(load[i].why, sizeof(load[i].why), "%s", busy);
        else
            load_phase(&P, &kinds[i], procs, users, windows, window_s, samples, adopt_timeout,
                       &load[i]);
    }

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
    for (int i = 0; i < phases; i++)
        print_load(&load[i]);
    if (phases == 0)
        printf("\n== 2. the daemon's own cost: skipped (LG_BENCH_WINDOWS=0)\n");
    else
        print_summary(load, phases);
    printf("\ntotal run time: %.1f s\n", (wall_us() - run_start) / 1e6);
    return 0;
}
