/* The cgroup v2 path on this host's real cgroup2 mount, below the test's
 * own v2 cgroup (the "0::" line of /proc/self/cgroup).  On a v1 hybrid
 * host that mount has no cpu, memory or pids controller, so no limit can
 * be shown here (test_cgroupfs_v2 checks the files on a fake tree, the VM
 * test on a real v2 host); what is real: the cgroups made, the daemon
 * moving itself into its supervisor leaf, a process moved into its
 * user's cgroup, cpu.stat's usage_usec read as its counter, the empty
 * cgroup removed through cgroup.events, a process that --release moves
 * out of its user's cgroup before removing it and the parent, and nothing
 * left behind.
 *
 * The steps run in a child process: it moves itself into a cgroup of its
 * own (as a service manager would place a daemon) and from there into
 * the leaf, which must not happen to the test runner. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "enforce/cgroup_mode.h"
#include "enforce/cgroupfs_v2.h"
#include "observe/cgroup_counters.h"
#include "testutil.h"
#include "util.h"

#define UID 4242420
#define CPU_BURN_NS 100000000LL /* 100 ms */

static char mount_point[256], own[1024];

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The "0::" path of a process. */
static void v2_path_of(pid_t pid, char *buf, size_t len)
{
    char file[64];
    snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
    if (cgroup_own_v2_path(file, buf, len) < 0)
        copy_string(buf, len, "(none)");
}

static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A user's program: waits to be moved, uses 100 ms of CPU, then idles. */
static pid_t start_user_process(int *go)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(fds[1]);
        if (read(fds[0], &c, 1) != 1)
            _exit(1);
        for (int64_t start = cpu_ns(); cpu_ns() - start < CPU_BURN_NS;)
            ;
        for (;;)
            pause();
    }
    close(fds[0]);
    *go = fds[1];
    return pid;
}

/* Wait up to 5 s for cond (polled every 10 ms). */
#define WAIT_FOR(cond)                                                                         \
    do {                                                                                       \
        for (int tries_ = 0; !(cond) && tries_ < 500; tries_++)                                \
            usleep(10000);                                                                     \
    } while (0)

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "live v2: line %d: %s (%s)\n", __LINE__, #cond, err);              \
            failed = __LINE__;                                                                 \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

static uint64_t usage_of(struct user_counters *uc)
{
    struct user_usage use = {0};
    counters_discover(uc);
    for (size_t i = 0; i < uc->count; i++)
        if (uc->groups[i].uid == UID && counters_read(uc, &uc->groups[i], &use) == 0)
            return use.cpu_usec;
    return 0;
}

/* The daemon's part, in the child; returns 0 or the failing line. */
static int run_as_daemon(const char *run)
{
    char err[512] = "", path[2048], where[1024];
    int failed = 0, go = -1;
    pid_t user = -1;
    struct cgroupfs_v2 c = {.parent_fd = -1};
    struct user_counters uc = {.cpu_root = -1, .memory_root = -1, .pids_root = -1};
    snprintf(path, sizeof(path), "%s%s", mount_point, run);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof(path), "%s%s/cgroup.procs", mount_point, run);
    CHECK(write_text(path, "0") == 0);

    umask(027); /* the unit's */
    CHECK(cgv2_open(&c, mount_point, run, "loginguard", getpid(), NULL, err, sizeof(err)) == 0);
    v2_path_of(getpid(), where, sizeof(where));
    snprintf(path, sizeof(path), "%s/supervisor", run);
    CHECK(strcmp(where, path) == 0);
    /* Controllers this mount lacks are named, not fatal. */
    snprintf(path, sizeof(path), "%s%s/cgroup.controllers", mount_point, run);
    FILE *f = fopen(path, "r");
    char have[256] = "";
    CHECK(f && (fgets(have, sizeof(have), f) || feof(f)));
    fclose(f);
    CHECK((strstr(have, "memory") != NULL) == (strstr(c.warning, "memory") == NULL));

    struct limits l = {.cpu = 1, .memory = 1 << 30, .tasks = 64};
    CHECK(cgv2_apply(&c, UID, &l, err, sizeof(err)) == 0);
    /* With the unit's umask, a user may still read their own limits. */
    struct stat st;
    CHECK(stat(c.parent_dir, &st) == 0 && (st.st_mode & 07777) == 0755);
    snprintf(path, sizeof(path), "%s/user-%u", c.parent_dir, UID);
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0755);
    user = start_user_process(&go);
    CHECK(user > 0);
    CHECK(cgv2_attach(&c, UID, user, err, sizeof(err)) == 0);
    v2_path_of(user, where, sizeof(where));
    snprintf(path, sizeof(path), "%s/loginguard/user-%u", run, UID);
    CHECK(strcmp(where, path) == 0);
    CHECK(write(go, "x", 1) == 1);

    /* The sampler's counter: usage_usec of the user's cgroup. */
    struct counter_roots roots = {.version = 2, .cpu = c.parent_dir, .cgroup_path = c.parent_path};
    CHECK(counters_open(&uc, &roots) == 0);
    WAIT_FOR(usage_of(&uc) >= CPU_BURN_NS / 1000);
    CHECK(usage_of(&uc) >= CPU_BURN_NS / 1000);

    CHECK(cgv2_remove_if_empty(&c, UID) == 0);
    snprintf(path, sizeof(path), "%s/user-%u", c.parent_dir, UID);
    CHECK(access(path, F_OK) == 0);
    kill(user, SIGKILL);
    waitpid(user, NULL, 0);
    user = -1;
    /* cgroup.events turns to "populated 0" shortly after the exit. */
    int removed = 0;
    WAIT_FOR((removed = cgv2_remove_if_empty(&c, UID)) == 1);
    CHECK(removed == 1);
    CHECK(access(path, F_OK) < 0 && errno == ENOENT);

    /* --release: a process left in its user's cgroup goes to the cgroup
     * above the parent, and the user's cgroup and the parent go. */
    CHECK(cgv2_apply(&c, UID, &l, err, sizeof(err)) == 0);
    user = start_user_process(&go);
    CHECK(user > 0);
    CHECK(cgv2_attach(&c, UID, user, err, sizeof(err)) == 0);
    CHECK(cgv2_release_user(&c, UID, err, sizeof(err)) == 0);
    v2_path_of(user, where, sizeof(where));
    CHECK(strcmp(where, run) == 0);
    CHECK(access(path, F_OK) < 0 && errno == ENOENT);
    CHECK(cgv2_release_parent(&c, err, sizeof(err)) == 0);
    CHECK(access(c.parent_dir, F_OK) < 0 && errno == ENOENT);
    CHECK(kill(user, 0) == 0);
out:
    if (user > 0) {
        kill(user, SIGKILL);
        waitpid(user, NULL, 0);
    }
    if (go >= 0)
        close(go);
    counters_close(&uc);
    if (c.parent_dir) {
        snprintf(path, sizeof(path), "%s/user-%u", c.parent_dir, UID);
        WAIT_FOR(rmdir(path) == 0 || errno == ENOENT);
    }
    cgv2_close(&c);
    /* Back where the child started, then every cgroup made goes. */
    snprintf(path, sizeof(path), "%s%s/cgroup.procs", mount_point, own);
    if (write_text(path, "0") < 0 && !failed)
        failed = __LINE__;
    static const char *const made[] = {"/loginguard", "/supervisor", ""};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s%s%s", mount_point, run, made[i]);
        if (rmdir(path) < 0 && errno != ENOENT && !failed) {
            fprintf(stderr, "live v2: cannot remove %s: %s\n", path, strerror(errno));
            failed = __LINE__;
        }
    }
    return failed;
}

static void test_live_v2(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    FILE *mi = fopen("/proc/self/mountinfo", "re");
    assert_non_null(mi);
    cgroup_mode_parse(mi, mount_point, sizeof(mount_point));
    fclose(mi);
    if (!mount_point[0] || cgroup_own_v2_path("/proc/self/cgroup", own, sizeof(own)) < 0)
        skip();
    char run[1100];
    snprintf(run, sizeof(run), "%s/lgtest-v2-%d", strcmp(own, "/") == 0 ? "" : own,
             (int)getpid());
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(run_as_daemon(run) == 0 ? 0 : 1);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char path[1400];
    snprintf(path, sizeof(path), "%s%s", mount_point, run);
    assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
