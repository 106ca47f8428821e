/* Enforce mode's effectors (enforce/actions.c) through their view,
 * struct actions, on a fake environment: the cgroupfs backend on a fake
 * cgroup2 tree (fake_cgroup2.h), a temporary event log, the real user
 * directory helper (uids with no passwd entry, and "nobody" by name),
 * and engine state the test sets.  What is asserted is what a user on
 * the node would notice: the limits in their cgroup's files, and the
 * events that say so. */
#include "config.h"

#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>

#include "enforce/actions.h"
#include "fake_cgroup2.h"
#include "fake_env.h"
#include "util.h"

#define HANG_MS 30000
#define SHARE_USER 2000000061u
#define LEVEL_USER 2000000062u
#define SYSTEM_USER 500u

struct fixture {
    struct environment env;
    struct policy policy;
    struct event_log events;
    struct engine_state engine;
    struct directory directory;
    struct metrics metrics;
    struct enforcer enforcer;
    struct actions actions;
    struct snapshot snap;
    char events_path[256];
    pid_t child;            /* a process of the test's, ended by teardown */
};

static struct fixture f;

/* The directory helper's answers about every uid asked (a hang guard,
 * never the assertion). */
static void wait_answers(void)
{
    uint64_t end = now_boottime_usec() + HANG_MS * 1000ULL;
    while (f.directory.out_count && now_boottime_usec() < end) {
        struct pollfd p = {.fd = directory_fd(&f.directory), .events = POLLIN};
        poll(&p, 1, 100);
        directory_poll(&f.directory);
    }
    assert_int_equal(f.directory.out_count, 0);
}

static void add_user(uid_t uid)
{
    snapshot_add_user(&f.snap, uid)->cpu = 0.5;
    directory_user(&f.directory, uid); /* asked now, answered by wait_answers */
}

static int setup(void **state)
{
    (void)state;
    memset(&f, 0, sizeof(f));
    make_test_dir();
    snprintf(root, sizeof(root), "%s/root", test_dir);
    mkdir(root, 0755);
    make_own("/svc", "cpu memory pids");
    fake_now = 1700000000ULL * SEC;
    environment_host(&f.env);
    f.env.realtime = fake_clock;
    policy_init_defaults(&f.policy);
    f.policy.exempt_users.names[f.policy.exempt_users.count++] = xstrdup("nobody");
    snprintf(f.events_path, sizeof(f.events_path), "%s/events.log", test_dir);
    assert_int_equal(event_log_open(&f.events, f.events_path, false), 0);
    char err[512] = "";
    if (directory_start(&f.directory, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    directory_set_policy(&f.directory, &f.policy);
    f.enforcer = (struct enforcer){.env = &f.env, .backend = BACKEND_CGROUPFS, .lock_fd = -1};
    f.enforcer.cgroupfs.version = 2;
    assert_int_equal(cgv2_open(&f.enforcer.cgroupfs.v2, root, "/svc", "lg", 4242, &fake_ops,
                               err, sizeof(err)), 0);
    f.actions = (struct actions){.env = &f.env, .policy = &f.policy, .enforcer = &f.enforcer,
                                 .events = &f.events, .engine = &f.engine,
                                 .directory = &f.directory, .metrics = &f.metrics};
    f.snap.now = fake_now;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (f.child > 0) {
        kill(f.child, SIGKILL);
        waitpid(f.child, NULL, 0);
    }
    enforcer_close(&f.enforcer, false);
    directory_stop(&f.directory);
    snapshot_free(&f.snap);
    engine_state_free(&f.engine);
    event_log_close(&f.events);
    policy_free(&f.policy);
    remove_test_dir();
    return 0;
}

/* The content of root/svc/lg/user-UID/file, or "(missing)". */
static const char *user_file(uid_t uid, const char *file)
{
    char path[128];
    snprintf(path, sizeof(path), "svc/lg/user-%u/%s", (unsigned)uid, file);
    return slurp(path);
}

static void throttle(uid_t uid)
{
    struct user_state *us = engine_user(&f.engine, uid, true);
    us->level = 2; /* throttled: 1 core, 4G */
    us->since = fake_now;
    us->until = fake_now + 30 * 60 * SEC;
}

/* Everyone gets the standing share; a user at a level gets the level's
 * limits, with a limits_set event; once the level ends, the share again. */
static void test_the_share_and_a_levels_limits_in_the_users_cgroup(void **state)
{
    (void)state;
    add_user(SHARE_USER);
    add_user(LEVEL_USER);
    wait_answers();
    throttle(LEVEL_USER);
    sync_limits(&f.actions, &f.snap);
    assert_string_equal(user_file(SHARE_USER, "cpu.max"), "400000 100000");
    assert_string_equal(user_file(SHARE_USER, "memory.max"), "17179869184");
    assert_string_equal(user_file(LEVEL_USER, "cpu.max"), "100000 100000");
    assert_string_equal(user_file(LEVEL_USER, "memory.max"), "4294967296");
    assert_int_equal(count_logged(f.events_path, "limits_set", LEVEL_USER), 1);
    /* Nothing changed: nothing said again. */
    sync_limits(&f.actions, &f.snap);
    assert_int_equal(count_logged(f.events_path, "limits_set", LEVEL_USER), 1);
    /* The level ends (forgiven, or its time is up): the share is back. */
    engine_forgive(&f.engine, LEVEL_USER, fake_now);
    sync_limits(&f.actions, &f.snap);
    assert_string_equal(user_file(LEVEL_USER, "cpu.max"), "400000 100000");
    assert_string_equal(user_file(LEVEL_USER, "memory.max"), "17179869184");
}

/* A protected user (below min_uid, or in [exempt] users) is never given
 * a cgroup or limits, whatever their level says; a user the directory has
 * not answered about yet is not either. */
static void test_protected_users_get_no_cgroup(void **state)
{
    (void)state;
    struct passwd *nobody = getpwnam("nobody");
    assert_non_null(nobody);
    add_user(SYSTEM_USER);
    add_user(nobody->pw_uid);
    wait_answers();
    throttle(SYSTEM_USER);
    throttle(nobody->pw_uid);
    snapshot_add_user(&f.snap, SHARE_USER); /* not asked about yet */
    sync_limits(&f.actions, &f.snap);
    assert_string_equal(user_file(SYSTEM_USER, "cpu.max"), "(missing)");
    assert_string_equal(user_file(nobody->pw_uid, "cpu.max"), "(missing)");
    assert_string_equal(user_file(SHARE_USER, "cpu.max"), "(missing)");
    assert_int_equal(count_logged(f.events_path, "limits_set", SYSTEM_USER), 0);
    assert_int_equal(count_logged(f.events_path, "limits_set", nobody->pw_uid), 0);
    /* Once the directory answers, the share. */
    wait_answers();
    sync_limits(&f.actions, &f.snap);
    assert_string_equal(user_file(SHARE_USER, "cpu.max"), "400000 100000");
}

/* A fake /proc (the enforcer's env.proc) with pid's stat, started at
 * start_time, and its cgroup file. */
static void fake_proc(pid_t pid, uint64_t start_time, const char *cgroup)
{
    char name[64], stat[256];
    snprintf(name, sizeof(name), "proc/%d/stat", (int)pid);
    snprintf(stat, sizeof(stat), "%d (sleep) S 1 %d %d 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %llu "
             "1000000 10 0\n", (int)pid, (int)pid, (int)pid, (unsigned long long)start_time);
    write_file(name, stat);
    snprintf(name, sizeof(name), "proc/%d/cgroup", (int)pid);
    write_file(name, cgroup);
}

/* A process outside its user's cgroup goes in, unless it is in a Slurm
 * job's cgroup: pam_slurm_adopt may have placed it there after it was
 * seen outside, and Slurm's cgroup is where it belongs. */
static void test_a_slurm_jobs_process_is_not_moved(void **state)
{
    (void)state;
    add_user(SHARE_USER);
    wait_answers();
    char proc[256];
    snprintf(proc, sizeof(proc), "%s/proc", test_dir);
    assert_int_equal(mkdir(proc, 0755), 0);
    f.env.proc = proc;
    pid_t child = f.child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    fake_proc(child, 4242, "4:freezer:/slurm/uid_2000000061/job_77/step_0\n0::/\n");
    struct new_proc p = {.pid = child, .start_time = 4242, .owner = SHARE_USER,
                         .outside = true};
    bool made = false;
    assert_false(adopt_process(&f.actions, &p, &made));
    assert_string_equal(user_file(SHARE_USER, "cgroup.procs"), "");
    /* Out of the job: moved. */
    fake_proc(child, 4242, "4:freezer:/\n0::/\n");
    assert_true(adopt_process(&f.actions, &p, &made));
    char pid[16];
    snprintf(pid, sizeof(pid), "%d", (int)child);
    assert_string_equal(user_file(SHARE_USER, "cgroup.procs"), pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_the_share_and_a_levels_limits_in_the_users_cgroup,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_protected_users_get_no_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_slurm_jobs_process_is_not_moved, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
