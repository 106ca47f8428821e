/* bench_taskstats: what the kernel's exit records (daemon/observe/taskstats.h)
 * cost on this machine.
 *
 * A storm of short processes (fork, _exit at once, reaped by their
 * parent, one after another) comes from a small process forked for each
 * run.  With the listener subscribed, this process drains it every
 * 100 ms, as the daemon's main loop does.  Figures, min and median over
 * the runs, in CPU time (user + system):
 *   1. the listener: this process's CPU per exit record drained (reading,
 *      checking, summing and handing over);
 *   2. the storm: CPU per process (fork, exit, reap), with a listener
 *      subscribed and without one, alternating: the difference is what
 *      making and sending the record costs the kernel in each ending
 *      process.
 * It prints figures, never pass/fail.  Exit status: 0, or 77 when it
 * cannot run at all (not root, no taskstats).
 *
 * Environment:
 *   LG_BENCH_EXITS   processes in one storm (20000)
 *   LG_BENCH_RUNS    storms with a listener, and as many without (5) */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "benchutil.h"
#include "observe/taskstats.h"

#define DRAIN_MS 100

struct storm_result {
    double cpu_us, wall_us;
    int made;
};

/* The storm, in a child: exits processes, one at a time; its own CPU
 * and its children's go back through the pipe. */
static void storm(int exits, int out)
{
    double self0 = rusage_us(RUSAGE_SELF), kids0 = rusage_us(RUSAGE_CHILDREN);
    double start = wall_us();
    struct storm_result r = {0, 0, 0};
    for (int i = 0; i < exits && !stopping; i++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0)
            break;
        reap(pid);
        r.made++;
    }
    r.wall_us = wall_us() - start;
    r.cpu_us = rusage_us(RUSAGE_SELF) - self0 + rusage_us(RUSAGE_CHILDREN) - kids0;
    write_full(out, &r, sizeof(r));
    _exit(0);
}

struct counted {
    pid_t storm;
    long ours;
};

static void count(const struct ts_exit *e, void *arg)
{
    struct counted *c = arg;
    if (e->ppid == c->storm)
        c->ours++;
}

/* One storm; with t (subscribed) this process drains it meanwhile.  The
 * listener's CPU and records go to *listener_us and *records. */
static int run_storm(int exits, struct taskstats_listener *t, struct storm_result *r,
                     double *listener_us, uint64_t *records, long *ours, bool *lost)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    uint64_t records_before = t ? t->records : 0;
    double cpu_before = cpu_self_us();
    pid_t child = fork();
    if (child < 0)
        return -1;
    if (child == 0) {
        close(fds[0]);
        storm(exits, fds[1]);
    }
    close(fds[1]);
    struct counted c = {child, 0};
    bool done = false;
    memset(r, 0, sizeof(*r));
    while (!done) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        if (poll(&pfd, 1, DRAIN_MS) > 0) {
            read_full(fds[0], r, sizeof(*r)); /* the figures, or nothing if it died */
            done = true;
        }
        if (t && taskstats_drain(t, count, &c))
            *lost = true;
    }
    reap(child);
    close(fds[0]);
    /* The last records: they were sent before the storm said it was done. */
    if (t) {
        nap_ms(DRAIN_MS);
        if (taskstats_drain(t, count, &c))
            *lost = true;
        *listener_us = cpu_self_us() - cpu_before;
        *records = t->records - records_before;
        *ours = c.ours;
    }
    return r->made > 0 ? 0 : -1;
}

int main(void)
{
    int rc = bench_start("bench_taskstats", "the taskstats netlink family needs CAP_NET_ADMIN");
    if (rc != 0)
        return rc;
    nursery_stop(); /* no idle processes here */
    int exits = (int)env_long("LG_BENCH_EXITS", 20000, 100, 1000000);
    int runs = (int)env_long("LG_BENCH_RUNS", 5, 1, MAX_RUNS);

    struct taskstats_listener t;
    char err[512];
    if (taskstats_open(&t, err, sizeof(err)) < 0) {
        printf("bench_taskstats: %s; skipped\n", err);
        return SKIP;
    }
    printf("bench_taskstats: struct version %u; %d runs of %d short processes each\n", t.version,
           runs, exits);
    taskstats_close(&t);

    double per_record[MAX_RUNS], with[MAX_RUNS], without[MAX_RUNS];
    int done = 0;
    struct load_runs others = {0};
    for (int i = 0; i < runs && !stopping; i++) {
        struct storm_result r;
        double listener_us = 0;
        uint64_t records = 0;
        long ours = 0;
        bool lost = false;
        if (taskstats_open(&t, err, sizeof(err)) < 0) {
            printf("  run %d: %s\n", i + 1, err);
            break;
        }
        struct load_mark m0 = load_mark_now(cpu_self_children_us());
        int ok = run_storm(exits, &t, &r, &listener_us, &records, &ours, &lost);
        uint64_t rejected = t.rejected, overruns = t.overruns;
        taskstats_close(&t);
        if (ok < 0 || records == 0)
            break;
        per_record[i] = listener_us / (double)records;
        with[i] = r.cpu_us / r.made;
        printf("  run %d, listening: %d processes in %.1f s; %llu records drained (%ld of the"
               " storm), listener %.0f us CPU = %.2f us a record; storm %.1f us CPU a process%s\n",
               i + 1, r.made, r.wall_us / 1e6, (unsigned long long)records, ours, listener_us,
               per_record[i], with[i],
               lost || overruns ? " (records were lost: the buffer overflowed)" : "");
        if (rejected)
            printf("    %llu datagrams rejected\n", (unsigned long long)rejected);
        if (run_storm(exits, NULL, &r, NULL, NULL, NULL, NULL) < 0)
            break;
        without[i] = r.cpu_us / r.made;
        struct other_load l = other_load_between(m0, load_mark_now(cpu_self_children_us()));
        load_runs_add(&others, l);
        char text[160];
        other_load_text(l, text, sizeof(text));
        printf("  run %d, not listening: %d processes in %.1f s; storm %.1f us CPU a process;"
               " %s\n",
               i + 1, r.made, r.wall_us / 1e6, without[i], text);
        done++;
    }
    if (done == 0) {
        printf("bench_taskstats: no run completed\n");
        return 1;
    }
    double a[3], b[3], c[3];
    min_med_max(per_record, done, a);
    min_med_max(with, done, b);
    min_med_max(without, done, c);
    printf("listener CPU per exit record drained: min %.2f us, median %.2f us (%d runs)\n", a[0],
           a[1], done);
    printf("storm CPU per process, listener subscribed: min %.1f us, median %.1f us\n", b[0], b[1]);
    printf("storm CPU per process, no listener:         min %.1f us, median %.1f us\n", c[0], c[1]);
    printf("the record's cost in the ending process (difference of the medians): %.1f us\n",
           b[1] - c[1]);
    char text[300];
    load_runs_text(&others, text, sizeof(text));
    printf("other load during the runs (the storms' own CPU not counted): %s\n", text);
    return 0;
}
