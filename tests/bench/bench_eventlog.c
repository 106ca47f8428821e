/* bench_eventlog: what a hostile user's processes cost the event log, live.
 *
 * The real loginguardd runs in observe mode with one forbidden rule; a
 * user (uid 61500, no passwd entry) keeps N processes of that program
 * alive, each with a 32 KiB command line of bytes that cost the most once
 * escaped (not UTF-8, controls), each living LIFE seconds and replaced at
 * once: every process is a forbidden_process event.  Measured are the
 * bytes of the log's lines about that uid, per event and per hostile
 * process (one always there) per hour:
 *   1. without the per-user limit (events_per_user = 0): what the log
 *      costs before the limit would kick in;
 *   2. with the default limit's rate (200 per 10 min, run as 7 per 20 s
 *      so that a minute holds whole intervals and their events_suppressed
 *      events).
 * Figures, never pass/fail.  Exit status 0, or 77 when it cannot run.
 *
 * Environment:
 *   LG_TOP_SRCDIR, LG_TOP_BUILDDIR  the trees (default: the configured ones)
 *   LG_BENCH_FLOOD_PROCS    N (50)
 *   LG_BENCH_FLOOD_LIFE     seconds each process lives (2)
 *   LG_BENCH_FLOOD_SECONDS  how long run 1 measures (20; run 2 takes 3x)
 *   LG_BENCH_DAEMON         another loginguardd to measure, such as one built
 *                           before the limit: only run 1, without the
 *                           events_* keys it would not know
 *
 * Everything made here is removed again: the processes (each hostile
 * process's parent has a process group of its own, killed by its id), the
 * daemon (SIGTERM), the temporary directory. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

#define FLOOD_UID 61500
#define ARGV_HALF (16 * 1024 - 1)
#define MAX_PROCS 2000

static struct {
    char dir[64];
    char conf[128], log[128], program[128], daemon_out[128];
    const char *daemon;
    pid_t daemon_pid;
    pid_t slots[MAX_PROCS];
    int slot_count;
} G;

static const char *top(const char *env, const char *def)
{
    const char *v = getenv(env);
    return v && *v ? v : def;
}

static int write_config(long per_user, long interval_s, bool limit_keys)
{
    char text[2048], path[160];
    snprintf(path, sizeof(path), "%s/rules.d", G.dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/rules.d/bench.rules", G.dir);
    if (write_text(path, "{\"name\": \"bench-flood\", \"class\": \"forbidden\", "
                         "\"comm\": \"lgbenchflood\"}\n") < 0)
        return -1;
    int n = snprintf(text, sizeof(text),
                     "[daemon]\nmode = observe\nsample_interval = 1s\nscan_interval = 5s\n"
                     "min_uid = %d\nevent_log = %s\nstate_dir = %s/state\n"
                     "control_socket = %s/control.sock\nrules_dirs = %s/rules.d\n",
                     FLOOD_UID, G.log, G.dir, G.dir, G.dir);
    if (limit_keys)
        n += snprintf(text + n, sizeof(text) - (size_t)n,
                      "events_per_user = %ld\nevents_interval = %lds\n", per_user, interval_s);
    snprintf(text + n, sizeof(text) - (size_t)n, "[notify]\nchannels =\nnotices_dirs = %s/rules/notices\n",
             top("LG_TOP_SRCDIR", TOP_SRCDIR));
    return write_text(G.conf, text);
}

static void daemon_stop(void)
{
    kill_reap(&G.daemon_pid, SIGTERM);
}

static int daemon_start(void)
{
    unlink(G.log);
    pid_t p = fork_daemon(G.daemon, G.conf, G.daemon_out, false);
    if (p < 0)
        return -1;
    G.daemon_pid = p;
    for (int i = 0; i < 1000 && !stopping; i++) {
        char *ev = read_text(G.log, 1 << 16);
        bool started = ev && strstr(ev, "\"daemon_started\"");
        free(ev);
        if (started)
            return 0;
        if (waitpid(p, NULL, WNOHANG) == p) {
            G.daemon_pid = 0;
            break;
        }
        nap_ms(20);
    }
    char *out = read_text(G.daemon_out, 4000);
    printf("  the daemon did not start:\n%s\n", out ? out : "");
    free(out);
    daemon_stop();
    return -1;
}

/* One hostile process slot: as the flood uid, start the program, wait
 * for it to end, start it again, until killed. */
static void slot_main(char **argv, pid_t bench)
{
    setpgid(0, 0);
    if (setgroups(0, NULL) < 0 || setresgid(FLOOD_UID, FLOOD_UID, FLOOD_UID) < 0 ||
        setresuid(FLOOD_UID, FLOOD_UID, FLOOD_UID) < 0)
        _exit(1);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != bench)
        _exit(0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    for (;;) {
        pid_t c = fork();
        if (c == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            execv(argv[0], argv);
            _exit(127);
        }
        if (c < 0)
            nap_ms(100);
        else
            reap(c);
    }
}

static int flood_start(int procs, long life)
{
    static char junk1[ARGV_HALF + 1], junk2[ARGV_HALF + 1];
    memset(junk1, 0xff, ARGV_HALF);
    memset(junk2, 0x01, ARGV_HALF);
    char life_s[32];
    snprintf(life_s, sizeof(life_s), "%ld", life);
    /* spin 1 thread, busy a thousandth of the time, for life seconds;
     * spin ignores the arguments after those. */
    char *argv[] = {G.program, (char *)"1", (char *)"0.001", life_s, junk1, junk2, NULL};
    pid_t bench = getpid();
    for (int i = 0; i < procs; i++) {
        pid_t p = fork();
        if (p < 0)
            return -1;
        if (p == 0)
            slot_main(argv, bench);
        setpgid(p, p);
        G.slots[G.slot_count++] = p;
        nap_ms(life * 1000 / procs); /* spread over a lifetime */
    }
    return 0;
}

static void flood_stop(void)
{
    for (int i = 0; i < G.slot_count; i++)
        kill(-G.slots[i], SIGKILL);
    for (int i = 0; i < G.slot_count; i++)
        reap(G.slots[i]);
    G.slot_count = 0;
}

struct tally {
    long long bytes, events, suppressed, held;
};

/* The lines about the flood uid from offset on. */
static struct tally count_lines(long offset)
{
    struct tally t = {0, 0, 0, 0};
    FILE *f = fopen(G.log, "r");
    if (!f)
        return t;
    fseek(f, offset, SEEK_SET);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    char uid[32];
    snprintf(uid, sizeof(uid), "\"uid\":%d,", FLOOD_UID);
    while ((n = getline(&line, &cap, f)) > 0) {
        if (!strstr(line, uid))
            continue;
        t.bytes += n;
        if (strstr(line, "\"event\":\"forbidden_process\""))
            t.events++;
        char *s = strstr(line, "\"event\":\"events_suppressed\"");
        if (s) {
            t.suppressed++;
            char *total = strstr(line, "\"total\":");
            if (total)
                t.held += strtoll(total + 8, NULL, 10);
        }
    }
    free(line);
    fclose(f);
    return t;
}

static long log_size(void)
{
    struct stat st;
    return stat(G.log, &st) == 0 ? (long)st.st_size : 0;
}

/* Run the flood for seconds after a warm-up lifetime; the tally of what
 * was written meanwhile. */
static struct tally measure(int procs, long life, long seconds)
{
    struct tally t = {0, 0, 0, 0};
    if (daemon_start() < 0)
        return t;
    if (flood_start(procs, life) == 0) {
        nap_ms(life * 1000);
        long from = log_size();
        for (long i = 0; i < seconds * 10 && !stopping; i++)
            nap_ms(100);
        t = count_lines(from);
    }
    flood_stop();
    daemon_stop();
    return t;
}

static void report(const char *what, struct tally t, int procs, long life, long seconds)
{
    printf("  %s:\n", what);
    if (t.events == 0) {
        printf("    no events written\n");
        return;
    }
    double per_hour = (double)t.bytes * 3600.0 / (double)seconds / procs;
    printf("    %lld forbidden_process events in %lds from %d processes living %lds "
           "(%.0f started a process an hour)\n",
           t.events, seconds, procs, life, 3600.0 / (double)life);
    if (t.suppressed)
        printf("    %lld events_suppressed events, holding back %lld events\n", t.suppressed,
               t.held);
    printf("    %.0f bytes an event written, %.0f bytes in all per hostile process per hour "
           "(%.1f MB an hour for the user's %d)\n",
           (double)t.bytes / (double)(t.events + t.suppressed), per_hour,
           per_hour * procs / 1e6, procs);
}

int main(void)
{
    int rc = bench_start("bench_eventlog", "it runs the daemon and processes as another uid");
    if (rc)
        return rc;
    int procs = (int)env_long("LG_BENCH_FLOOD_PROCS", 50, 1, MAX_PROCS);
    long life = env_long("LG_BENCH_FLOOD_LIFE", 2, 1, 3600);
    long seconds = env_long("LG_BENCH_FLOOD_SECONDS", 20, 5, 86400);
    const char *builddir = top("LG_TOP_BUILDDIR", ".");
    char daemon[512], spin[512];
    snprintf(daemon, sizeof(daemon), "%s/daemon/loginguardd", builddir);
    snprintf(spin, sizeof(spin), "%s/tests/helpers/spin", builddir);
    const char *other = getenv("LG_BENCH_DAEMON");
    G.daemon = other && *other ? other : daemon;

    snprintf(G.dir, sizeof(G.dir), "/tmp/lgbench-eventlog.XXXXXX");
    if (!mkdtemp(G.dir) || chmod(G.dir, 0755) < 0) {
        printf("bench_eventlog: cannot make a temporary directory: %s\n", strerror(errno));
        return SKIP;
    }
    snprintf(G.conf, sizeof(G.conf), "%s/loginguard.conf", G.dir);
    snprintf(G.log, sizeof(G.log), "%s/events.jsonl", G.dir);
    snprintf(G.daemon_out, sizeof(G.daemon_out), "%s/daemon.out", G.dir);
    snprintf(G.program, sizeof(G.program), "%s/lgbenchflood", G.dir);
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 755 '%s'", spin, G.program, G.program);
    if (system(cmd) != 0) {
        printf("bench_eventlog: no %s (make check builds it); skipped\n", spin);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", G.dir);
        (void)!system(cmd);
        return SKIP;
    }

    printf("bench_eventlog: event log bytes from a hostile user, %s\n", G.daemon);
    printf("  %d processes of a forbidden program, 32 KiB command lines of \\xff and \\x01, "
           "observe mode\n", procs);
    if (other && *other) {
        write_config(0, 0, false);
        report("that daemon, as it is", measure(procs, life, seconds), procs, life, seconds);
    } else {
        write_config(0, 600, true);
        report("no limit (events_per_user = 0): before the limit kicks in",
               measure(procs, life, seconds), procs, life, seconds);
        /* The default's rate, 200 per 600 s, in intervals of 20 s. */
        write_config(7, 20, true);
        report("the default limit's rate (events_per_user = 200 per 10m, run as 7 per 20s)",
               measure(procs, life, 3 * seconds), procs, life, 3 * seconds);
        printf("    (with the default itself, a user's first 200 events of an interval are "
               "written whole)\n");
    }
    if (!getenv("LG_BENCH_KEEP")) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", G.dir);
        (void)!system(cmd);
    }
    nursery_stop();
    return 0;
}
