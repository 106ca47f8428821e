/* Running loginguardd in enforce mode with the cgroupfs backend, as the
 * enforce benchmark and the soak do: cgroup v1 controllers, configs in a
 * temporary directory, starting and stopping the daemon, counting the
 * processes it moved, removing the cgroups it made. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchdaemon.h"
#include "benchutil.h"
#include "configfile.h"
#include "errors.h"
#include "observe/procfs.h"

long read_long_file(const char *path)
{
    char *t = read_text(path, 64);
    long v = t && *t ? strtol(t, NULL, 10) : NO_VALUE;
    free(t);
    return v;
}

/* ------------------------------------------------------------------ */
/* state to clean up                                                    */

struct bench_state BD = {0, "", "", {{0}}, 0};

const char *const ctl_names[C_COUNT] = {"cpu", "cpuacct", "memory", "pids"};

struct controller ctl[C_COUNT];

/* Where a daemon started by this process puts a relative cgroup_parent:
 * below this process's own cgroup, as cgroupfs_open does for its own. */
void parent_dir(int c, const char *parent, char *buf, size_t len)
{
    snprintf(buf, len, "%.255s%.511s/%.63s", ctl[c].mount, ctl[c].own, parent);
}

void user_dir(int c, const char *parent, uid_t uid, char *buf, size_t len)
{
    snprintf(buf, len, "%.255s%.511s/%.63s/user-%u", ctl[c].mount, ctl[c].own, parent,
             (unsigned)uid);
}

void remember_parent(const char *parent)
{
    for (int i = 0; i < BD.parent_count; i++)
        if (strcmp(BD.parents[i], parent) == 0)
            return;
    if (BD.parent_count < MAX_PARENTS)
        snprintf(BD.parents[BD.parent_count++], sizeof(BD.parents[0]), "%s", parent);
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
int remove_parent(const char *parent)
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
                fprintf(stderr, "bench: cannot remove cgroup %s: %s\n", sub,
                        strerror(errno));
                failed++;
            }
        }
        closedir(d);
        if (rmdir_patiently(dir) < 0) {
            fprintf(stderr, "bench: cannot remove cgroup %s: %s\n", dir, strerror(errno));
            failed++;
        }
    }
    return failed ? -1 : 0;
}

/* Processes in the cpuacct user-* directories below parent (the daemon
 * moves each process in every controller, cpuacct last but one). */
long count_adopted(const char *parent, int *groups)
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



void remove_tmpdir(void)
{
    const char *keep = getenv("LG_BENCH_KEEP");
    if (keep && strcmp(keep, "1") == 0 && BD.tmpdir[0]) {
        printf("bench: kept %s (LG_BENCH_KEEP=1)\n", BD.tmpdir);
        BD.tmpdir[0] = '\0';
    }
    remove_bench_tree(BD.tmpdir);
    BD.tmpdir[0] = '\0';
}

int copy_file(const char *from, const char *to, mode_t mode)
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
 * cgroup_parent is lgbench-TAG-PID-NAME (relative). */
int make_run_conf(const struct paths *P, const char *name, const char *extra, struct run_conf *R)
{
    snprintf(R->dir, sizeof(R->dir), "%s/%s", BD.tmpdir, name);
    snprintf(R->conf, sizeof(R->conf), "%s/loginguard.conf", R->dir);
    snprintf(R->event_log, sizeof(R->event_log), "%s/events.jsonl", R->dir);
    snprintf(R->daemon_log, sizeof(R->daemon_log), "%s/daemon.log", R->dir);
    snprintf(R->parent, sizeof(R->parent), "lgbench-%s-%d-%s", BD.tag, (int)getpid(), name);
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
                 "# written by bench_%s\n"
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
                 BD.tag, R->parent, LOAD_BASE_UID, R->event_log, P->rules_dir, R->dir, R->dir,
                 extra ? extra : "") < 0)
        return -1;
    int rc = write_text(path, text);
    free(text);
    return rc;
}

int load_policy(const char *conf, struct policy *pol)
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

bool daemon_exited(void)
{
    int st;
    if (BD.daemon > 0 && waitpid(BD.daemon, &st, WNOHANG) == BD.daemon) {
        BD.daemon = 0;
        return true;
    }
    return BD.daemon <= 0;
}

void daemon_stop(void)
{
    if (BD.daemon <= 0)
        return;
    kill(BD.daemon, SIGTERM);
    for (int i = 0; i < 200 && BD.daemon > 0; i++) {
        if (daemon_exited())
            return;
        nap_ms(50);
    }
    if (BD.daemon > 0) {
        fprintf(stderr, "bench: the daemon ignored SIGTERM for 10 s; SIGKILL\n");
        kill_reap(&BD.daemon, SIGKILL);
    }
}

void print_daemon_log(const struct run_conf *R)
{
    print_daemon_output(R->daemon_log);
}

/* Start loginguardd on R's config; wait for its daemon_started event. */
int daemon_start(const struct paths *P, const struct run_conf *R)
{
    remember_parent(R->parent);
    pid_t p = fork_daemon(P->daemon, R->conf, R->daemon_log, true);
    if (p < 0)
        return -1;
    BD.daemon = p;
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
 * cgroups (and this one's load would upset their tests).  The children
 * of this benchmark's daemon (its notice children, which keep its name
 * a moment) are not other daemons. */
static bool child_of_daemon(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    char *t = read_text(path, 1024);
    char *close_paren = t ? strrchr(t, ')') : NULL;
    int ppid = 0;
    bool child = close_paren && sscanf(close_paren, ") %*c %d", &ppid) == 1 && BD.daemon > 0 &&
                 ppid == BD.daemon;
    free(t);
    return child;
}

pid_t other_daemon(void)
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
        if (t && strcmp(t, "loginguardd\n") == 0 && pid != BD.daemon && !child_of_daemon(pid))
            found = pid;
        free(t);
    }
    closedir(d);
    return found;
}

int wait_quiet(int seconds)
{
    double start = wall_us();
    bool said = false;
    pid_t other = 0;
    /* Only another daemon is waited for: it would move this benchmark's
     * processes (and this load would upset its tests).  Other load is
     * measured and printed beside each figure instead. */
    while (!stopping && (other = other_daemon()) != 0 && wall_us() - start < seconds * 1e6) {
        if (!said) {
            char path[64];
            snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)other);
            char *cmd = read_text(path, 512);
            for (size_t i = 0; cmd && i < 511 && (cmd[i] || cmd[i + 1]); i++)
                if (!cmd[i])
                    cmd[i] = ' ';
            printf("  another loginguardd runs (pid %d: %s); waiting up to %d s for it to end\n",
                   (int)other, cmd ? cmd : "?", seconds);
            free(cmd);
            said = true;
        }
        nap_ms(2000);
    }
    if (stopping || other)
        return -1;
    if (said)
        printf("  it ended after %.0f s\n", (wall_us() - start) / 1e6);
    return 0;
}

/* Kernel threads, whose CPU is "other load" no process of ours accounts
 * for (on some VMs a kdamond scans memory harder the more processes
 * there are).  Found once, before a window: that listing is not cheap. */

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

void kthreads_find(struct kthreads *k)
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

void kthreads_mark(struct kthreads *k)
{
    for (int i = 0; i < k->count; i++) {
        struct proc_stat st;
        unsigned long flags;
        k->ticks[i] = read_stat_of(k->pid[i], &st, &flags) ? st.utime + st.stime : 0;
    }
}

/* The busiest kernel threads since kthreads_mark, as "name 0.77" text. */
double kthreads_busiest(const struct kthreads *k, double seconds, char *out, size_t len)
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

double parent_cpu_us(const char *parent)
{
    char dir[1024], path[1100];
    parent_dir(C_CPUACCT, parent, dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
    char *t = read_text(path, 64);
    double v = t ? strtod(t, NULL) / 1e3 : 0;
    free(t);
    return v;
}

int bench_tmpdir(const char *tag)
{
    snprintf(BD.tag, sizeof(BD.tag), "%s", tag);
    snprintf(BD.tmpdir, sizeof(BD.tmpdir), "/tmp/lgbench-%s.XXXXXX", tag);
    if (!mkdtemp(BD.tmpdir) || chmod(BD.tmpdir, 0755) < 0) {
        BD.tmpdir[0] = '\0';
        return -1;
    }
    return 0;
}

void remove_parents(void)
{
    for (int i = 0; i < BD.parent_count; i++)
        remove_parent(BD.parents[i]);
    BD.parent_count = 0;
}

/* Every process in its user's cgroup, waited for (bounded), saying how
 * it goes every 10 s.  0, or -1 with why filled. */
int wait_adopted(const struct run_conf *R, long procs, int timeout_s, long *adopted, int *groups,
                 char *why, size_t why_len)
{
    double t0 = wall_us(), last_print = t0;
    while (!stopping) {
        *adopted = count_adopted(R->parent, groups);
        if (*adopted >= procs)
            return 0;
        if (daemon_exited()) {
            snprintf(why, why_len, "the daemon exited while moving the processes");
            print_daemon_log(R);
            return -1;
        }
        if (wall_us() - t0 > timeout_s * 1e6) {
            snprintf(why, why_len, "after %d s only %ld of %ld processes were in %d user cgroups",
                     timeout_s, *adopted, procs, *groups);
            return -1;
        }
        if (wall_us() - last_print > 10e6) {
            printf("  ... %ld of %ld moved, %d user cgroups\n", *adopted, procs, *groups);
            last_print = wall_us();
        }
        nap_ms(200);
    }
    snprintf(why, why_len, "interrupted");
    return -1;
}

/* Settled: asleep between samples, its CPU standing still (bounded). */
void wait_settled(pid_t pid)
{
    struct daemon_reading d = read_daemon(pid);
    uint64_t last = d.ticks;
    int quiet = 0;
    double s0 = wall_us();
    while (!stopping && quiet < 4 && wall_us() - s0 < 20e6) {
        nap_ms(50);
        d = read_daemon(pid);
        quiet = d.state == 'S' && d.ticks == last ? quiet + 1 : 0;
        last = d.ticks;
    }
}
