/* soak: loginguardd in enforce mode (cgroupfs backend) for an hour with
 * 10,000 processes of 500 users that keep changing: every second some
 * are killed and as many started in their place (forks, exits), and
 * some live only a moment; 2,000 of them hold a 32 KiB command line
 * crafted against a shipped argv pattern, and 500 of those rename
 * themselves four times a second.  Every minute it prints the daemon's
 * CPU over that minute (its CPU clock), its resident memory (anonymous
 * and file-backed), the processes in the users' cgroups and the rest of
 * the machine's load; at the end, whether the resident memory ended
 * where it leveled off:
 *
 *   the level is the highest reading of the first half of the run (the
 *   first minute, the start-up, apart); the end is the median of the last
 *   three readings; it ended where it leveled off when neither the end
 *   nor any reading of the second half is above the level by more than
 *   max(2 %, 256 KiB).  The slope over the second half (least squares) is
 *   printed beside it.
 *
 * Not part of `make check` or of CI: `make soak`.  Exit status 0 when RSS
 * ended where it leveled off, 1 when it did not (or the daemon died), 77
 * when it cannot run (not root, no cgroup v1 cpu and cpuacct).
 *
 * Environment:
 *   SOAK_MINUTES    how long (60)
 *   SOAK_PROCS, SOAK_USERS          the load (10000, 500)
 *   SOAK_HOSTILE, SOAK_RENAMERS     of them with a long command line, and
 *                                   of those renaming (2000, 500)
 *   SOAK_ARGV_BYTES                 their command lines (32768)
 *   SOAK_EXITS, SOAK_FLASHES        per second: processes killed and
 *                                   replaced, processes that live a
 *                                   moment (10, 20)
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR  the trees
 *   LG_BENCH_KEEP                   1 keeps the temporary directory */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchdaemon.h"
#include "benchutil.h"

#define MAX_MINUTES 1440

struct minute {
    double cpu_pct, rss, anon, file, hwm;
    long in_cgroups, alive, started;
    struct other_load load;
};

static struct {
    struct minute m[MAX_MINUTES + 1];
    int count;
} S;

static void cleanup(void)
{
    daemon_stop();
    kill_idle();
    nursery_stop();
    remove_parents();
    remove_tmpdir();
}

/* Least-squares slope of RSS over minutes from..to (KiB a minute). */
static double slope_kib(int from, int to)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = from; i <= to; i++) {
        double x = i, y = S.m[i].rss * 1024;
        n++;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    double d = n * sxx - sx * sx;
    return n >= 2 && d != 0 ? (n * sxy - sx * sy) / d : 0;
}

static void print_row(int i)
{
    const struct minute *m = &S.m[i];
    char text[160];
    other_load_text(m->load, text, sizeof(text));
    printf("%4d  %7.3f  %6.2f  %6.2f  %6.2f  %6.2f  %6ld  %6ld  %6ld  %s\n", i, m->cpu_pct,
           m->rss, m->anon, m->file, m->hwm, m->in_cgroups, m->alive, m->started, text);
}

/* 0 when RSS ended where it leveled off, 1 when not. */
static int verdict(void)
{
    int last = S.count;
    if (last < 4) {
        printf("\nsoak: too short to judge the memory (%d minutes; at least 4)\n", last);
        return 1;
    }
    int half = (last + 1) / 2;
    double level = 0;
    for (int i = 2 <= half ? 2 : 1; i <= half; i++)
        level = S.m[i].rss > level ? S.m[i].rss : level;
    struct runs end = {0};
    for (int i = last - 2; i <= last; i++)
        runs_add(&end, S.m[i].rss);
    double tolerance = level * 0.02 > 0.25 ? level * 0.02 : 0.25;
    double highest = 0;
    for (int i = half + 1; i <= last; i++)
        highest = S.m[i].rss > highest ? S.m[i].rss : highest;
    bool ok = runs_median(&end) <= level + tolerance && highest <= level + tolerance;
    struct runs cpu = {0};
    for (int i = 2; i <= last && i - 2 < MAX_RUNS; i++)
        runs_add(&cpu, S.m[i].cpu_pct);
    printf("\nsoak: %d minutes.  Daemon CPU per minute (the first apart): min %.3f %%, median"
           " %.3f %%, max %.3f %% of one core.\n",
           last, runs_min(&cpu), runs_median(&cpu), runs_max(&cpu));
    printf("RSS leveled off at %.2f MiB (the highest of minutes %d..%d); it ended at %.2f MiB"
           " (median of the last three),\nthe highest of the second half %.2f MiB, tolerance"
           " %.2f MiB; slope over the second half %+.1f KiB a minute.\n",
           level, 2 <= half ? 2 : 1, half, runs_median(&end), highest, tolerance,
           slope_kib(half + 1, last));
    printf("RSS %s where it leveled off.\n", ok ? "ENDED" : "did NOT end");
    return ok ? 0 : 1;
}

int main(void)
{
    int rc = bench_start("soak", "it starts processes under other uids, runs the daemon in"
                                 " enforce mode and makes cgroups");
    if (rc != 0)
        return rc;
    int minutes = (int)env_long("SOAK_MINUTES", 60, 1, MAX_MINUTES);
    int procs = (int)env_long("SOAK_PROCS", 10000, 10, MAX_CHILDREN - 1000);
    int users = (int)env_long("SOAK_USERS", 500, 1, 999);
    int hostile = (int)env_long("SOAK_HOSTILE", 2000, 0, procs);
    int renamers = (int)env_long("SOAK_RENAMERS", 500, 0, hostile);
    int argv_bytes = (int)env_long("SOAK_ARGV_BYTES", 32768, 16, 1 << 20);
    int exits = (int)env_long("SOAK_EXITS", 10, 0, 1000);
    int flashes = (int)env_long("SOAK_FLASHES", 20, 0, 1000);
    if (users > procs)
        users = procs;

    struct paths P;
    find_paths(&P);
    for (int c = 0; c < C_COUNT; c++)
        find_controller(ctl_names[c], &ctl[c]);
    if (access(P.daemon, X_OK) < 0 || access(P.renamer, X_OK) < 0 || !ctl[C_CPU].found ||
        !ctl[C_CPUACCT].found) {
        printf("soak: needs %s, %s (make -C tests helpers/renamer) and cgroup v1 cpu and"
               " cpuacct; skipped\n",
               P.daemon, P.renamer);
        cleanup();
        return SKIP;
    }
    char renamer[128];
    if (bench_tmpdir("soak") < 0 ||
        (snprintf(renamer, sizeof(renamer), "%s/renamer", BD.tmpdir),
         copy_file(P.renamer, renamer, 0755) < 0) ||
        nursery_hostile(renamer, argv_bytes, (minutes + 10) * 60) < 0) {
        printf("soak: cannot set up a temporary directory: %s; skipped\n", strerror(errno));
        cleanup();
        return SKIP;
    }
    struct rlimit nofile;
    getrlimit(RLIMIT_NOFILE, &nofile);
    if ((rlim_t)procs + 4 * (rlim_t)users + 64 > nofile.rlim_max) {
        printf("soak: RLIMIT_NOFILE %llu is too low for %d processes; skipped\n",
               (unsigned long long)nofile.rlim_max, procs);
        cleanup();
        return SKIP;
    }
    if (wait_quiet(600) < 0) {
        printf("soak: another loginguardd runs; skipped\n");
        cleanup();
        return SKIP;
    }
    struct run_conf R;
    struct policy pol;
    if (make_run_conf(&P, "soak", NULL, &R) < 0 || load_policy(R.conf, &pol) < 0) {
        printf("soak: cannot write or load the config; skipped\n");
        cleanup();
        return SKIP;
    }
    policy_free(&pol);
    printf("soak: %d minutes; %d processes of %d users (uids %u..); %d with a %d-byte crafted"
           " command line, %d of them renaming every 250 ms;\n  every second %d killed and"
           " replaced, %d that live a moment; daemon %s, enforce, cgroupfs, the shipped"
           " policy\n",
           minutes, procs, users, LOAD_BASE_UID, hostile, argv_bytes, renamers, exits, flashes,
           P.daemon);
    struct nreply nr[3];
    free(spawn_hostile(renamers, users, LOAD_BASE_UID, 250, &nr[0]));
    free(spawn_hostile(hostile - renamers, users, LOAD_BASE_UID, 3600 * 1000, &nr[1]));
    free(spawn_idle(procs - hostile, users, LOAD_BASE_UID, &nr[2]));
    long made = nr[0].made + nr[1].made + nr[2].made;
    if (made != procs) {
        printf("soak: started %ld of %d processes: %s; skipped\n", made, procs,
               strerror(nr[0].err ? nr[0].err : nr[1].err ? nr[1].err : nr[2].err));
        cleanup();
        return SKIP;
    }
    if (daemon_start(&P, &R) < 0) {
        cleanup();
        return 1;
    }
    pid_t dpid = BD.daemon;
    long adopted;
    int groups;
    char why[200];
    if (wait_adopted(&R, procs, 300, &adopted, &groups, why, sizeof(why)) < 0)
        printf("soak: %s (going on)\n", why);
    printf("\n(cpu: the daemon's, %% of one core over the minute; rss, anon, file, hwm (its"
           " peak): MiB; in-cg: processes\n in the users' cgroups; alive: the load's processes;"
           " new: started in the minute, replacements and\n momentary ones; then the rest of"
           " the machine over the minute)\n");
    printf("%4s  %7s  %6s  %6s  %6s  %6s  %6s  %6s  %6s\n", "min", "cpu", "rss", "anon", "file",
           "hwm", "in-cg", "alive", "new");
    /* The load's own CPU is not other load: the processes in the user
     * cgroups, and the nursery with those it reaped before they were moved. */
    double cpu0 = cpu_of_us(dpid), t0 = wall_us();
    struct load_mark mark = load_mark_now(cpu_self_children_us() + cpu0 +
                                          parent_cpu_us(R.parent) +
                                          cpu_with_reaped_us(nursery_pid()));
    long started = 0, alive = procs;
    int failed = 0;
    for (int i = 1; i <= minutes && !stopping; i++) {
        while (!stopping && wall_us() - t0 < i * 60e6) {
            struct nreply c;
            if (nursery_churn(exits, flashes, &c) == 0) {
                started += c.made + flashes;
                alive = c.ready;
            }
            nap_ms(1000);
            if (daemon_exited()) {
                printf("soak: the daemon exited at minute %d\n", i);
                print_daemon_log(&R);
                failed = 1;
                break;
            }
        }
        if (stopping || failed)
            break;
        double cpu1 = cpu_of_us(dpid);
        struct minute *m = &S.m[i];
        struct memory_reading mem = read_memory(dpid);
        m->cpu_pct = (cpu1 - cpu0) / 60e6 * 100;
        m->rss = mem.rss;
        m->anon = mem.anon;
        m->file = mem.file;
        m->hwm = mem.hwm;
        m->in_cgroups = count_adopted(R.parent, &groups);
        m->alive = alive;
        m->started = started;
        struct load_mark now = load_mark_now(cpu_self_children_us() + cpu1 +
                                             parent_cpu_us(R.parent) +
                                             cpu_with_reaped_us(nursery_pid()));
        m->load = other_load_between(mark, now);
        mark = now;
        cpu0 = cpu1;
        started = 0;
        S.count = i;
        print_row(i);
    }
    int result = failed ? 1 : stopping ? 1 : verdict();
    if (stopping)
        printf("\nsoak: interrupted by signal %d after %d minutes\n", (int)stopping, S.count);
    cleanup();
    return result;
}
