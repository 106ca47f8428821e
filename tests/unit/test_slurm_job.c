/* Which /proc/PID/cgroup texts and slurmstepd titles name a Slurm job:
 * the shapes Slurm makes on cgroup v1 and v2, and the shapes a user can
 * make in the cgroups systemd delegates to them, which must name none. */
#include "config.h"

#include "slurm_job.h"
#include "testutil.h"

static int64_t job_of(const char *text)
{
    return slurm_job_of_cgroup(text, strlen(text));
}

/* A hybrid host's process in a job of Slurm's cgroup/v1 plugin: the
 * controllers Slurm uses show the job, the others and v2 are systemd's. */
static void test_v1_job(void **state)
{
    (void)state;
    assert_int_equal(job_of("12:pids:/system.slice/slurmd.service\n"
                            "11:memory:/slurm/uid_1000/job_4242/step_0/task_1\n"
                            "9:freezer:/slurm/uid_1000/job_4242/step_0\n"
                            "4:cpuset:/slurm/uid_1000/job_4242/step_extern\n"
                            "2:cpu,cpuacct:/system.slice/slurmd.service\n"
                            "1:name=systemd:/system.slice/slurmd.service\n"
                            "0::/system.slice/slurmd.service\n"),
                     4242);
    /* The job's own cgroup, no newline at the end, the largest id. */
    assert_int_equal(job_of("6:freezer:/slurm/uid_0/job_4294967294"), 4294967294);
    /* A job's process without a step (the batch step's parent): job_N alone. */
    assert_int_equal(job_of("3:memory:/slurm/uid_7/job_9\n0::/\n"), 9);
}

/* Slurm's cgroup/v2 plugin, on a host with the v2 hierarchy only. */
static void test_v2_job(void **state)
{
    (void)state;
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n"), 77);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_77/step_extern/slurm\n"), 77);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_77"), 77);
    /* Built for several slurmd on one host (Debian's 22.05): the scope
     * is named for the node. */
    assert_int_equal(job_of("0::/system.slice/loginnode_slurmstepd.scope/job_4/step_0/user/"
                            "task_0\n"),
                     4);
    assert_int_equal(job_of("0::/system.slice/n_slurmstepd.scope/job_4\n"), 4);
    /* slurmstepd itself, and slurmd: Slurm's, but no job's. */
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/system\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmd.service\n"), -1);
}

/* Ordinary processes: a session, a user's service, root's. */
static void test_no_job(void **state)
{
    (void)state;
    assert_int_equal(job_of("0::/user.slice/user-1000.slice/session-3.scope\n"), -1);
    assert_int_equal(job_of("4:cpu,cpuacct:/user.slice\n1:name=systemd:/user.slice/"
                            "user-1000.slice/session-3.scope\n0::/user.slice/user-1000.slice/"
                            "session-3.scope\n"),
                     -1);
    assert_int_equal(job_of("0::/\n"), -1);
    assert_int_equal(job_of(""), -1);
}

/* What a user can name themselves: the cgroups below their
 * user@UID.service (systemd delegates that subtree to them, on v2 and in
 * v1's name=systemd hierarchy), so Slurm's names at any depth there. */
static void test_a_users_own_cgroups_name_no_job(void **state)
{
    (void)state;
    const char *own = "/user.slice/user-1000.slice/user@1000.service/app.slice";
    char text[512];
    snprintf(text, sizeof(text), "0::%s/slurmstepd.scope/job_5/step_0\n", own);
    assert_int_equal(job_of(text), -1);
    snprintf(text, sizeof(text), "0::%s/system.slice/slurmstepd.scope/job_5\n", own);
    assert_int_equal(job_of(text), -1);
    snprintf(text, sizeof(text), "0::%s/system.slice/n_slurmstepd.scope/job_5\n", own);
    assert_int_equal(job_of(text), -1);
    snprintf(text, sizeof(text), "1:name=systemd:%s/slurm/uid_1000/job_5\n0::/\n", own);
    assert_int_equal(job_of(text), -1);
    /* Below another cgroup (a container's, a test's): not Slurm's layout. */
    assert_int_equal(job_of("9:freezer:/lxc/c1/slurm/uid_1000/job_5\n"), -1);
    /* Near misses of the shapes. */
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_5x\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_0\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_05\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_-5\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_4294967295\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope/job_99999999999999999999\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scopex/job_5\n"), -1);
    assert_int_equal(job_of("0::/system.slice//slurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("0::/system.slice/_slurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("0::/system.slice/xslurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("0::/system.slice/slurmstepd.scope.scope/job_5\n"), -1);
    assert_int_equal(job_of("0::/system.slice/a/n_slurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("0::/user.slice/n_slurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("3:memory:/slurm/uid_/job_5\n"), -1);
    assert_int_equal(job_of("3:memory:/slurm/uid_1000/job_5:\n"), -1);
    assert_int_equal(job_of("3:memory:/slurmx/uid_1000/job_5\n"), -1);
    assert_int_equal(job_of("3:memory:slurm/uid_1000/job_5\n"), -1);
}

/* Lines a user could add with a newline in the name of a cgroup of
 * their own (older kernels took one): out of the kernel's order, or a v2
 * line that is not alone, they make the whole text no job's. */
static void test_forged_lines_name_no_job(void **state)
{
    (void)state;
    /* After v2's line, which the kernel writes last. */
    assert_int_equal(job_of("4:memory:/user.slice\n0::/user.slice/user-1000.slice/user@1000."
                            "service/x\n3:memory:/slurm/uid_1000/job_5\n"),
                     -1);
    assert_int_equal(job_of("0::/user.slice/user-1000.slice/user@1000.service/x\n"
                            "0::/system.slice/slurmstepd.scope/job_5\n"),
                     -1);
    /* Out of order after name=systemd's line. */
    assert_int_equal(job_of("3:memory:/user.slice\n1:name=systemd:/user.slice/user-1000.slice/"
                            "user@1000.service/x\n2:freezer:/slurm/uid_1000/job_5\n0::/\n"),
                     -1);
    /* A v2 job line below v1 lines: v2 is not the only hierarchy there,
     * so it is no Slurm v2 job; a v1 line naming none leaves it none. */
    assert_int_equal(job_of("1:name=systemd:/user.slice/user-1000.slice/user@1000.service/x\n"
                            "0::/system.slice/slurmstepd.scope/job_5\n"),
                     -1);
    /* Two v1 lines naming two jobs. */
    assert_int_equal(job_of("4:memory:/slurm/uid_1000/job_5\n3:freezer:/slurm/uid_1000/job_6\n"),
                     -1);
    /* Not the kernel's lines at all. */
    assert_int_equal(job_of("\n0::/system.slice/slurmstepd.scope/job_5\n"), -1);
    assert_int_equal(job_of("x:memory:/slurm/uid_1000/job_5\n"), -1);
    assert_int_equal(job_of("3:memory\n"), -1);
    assert_int_equal(job_of("3:memory:\n"), -1);
    assert_int_equal(job_of("0:memory:/slurm/uid_1000/job_5\n"), -1);
    assert_int_equal(slurm_job_of_cgroup("3:memory:/slurm/uid_1000/job_5\0" "7", 32), -1);
}

static int64_t title(const char *text)
{
    return slurm_job_of_title(text, strlen(text));
}

static void test_stepd_titles(void **state)
{
    (void)state;
    assert_int_equal(title("slurmstepd: [4242.0]"), 4242);
    assert_int_equal(title("slurmstepd: [4242.extern]"), 4242);
    assert_int_equal(title("slurmstepd: [4242.batch]\0\0\0"), 4242);
    assert_int_equal(title("slurmstepd: [4242+1.0]"), 4242);
    assert_int_equal(title("slurmstepd: [4242]"), 4242);
    assert_int_equal(title("slurmstepd"), -1);
    assert_int_equal(title("slurmstepd: [x.0]"), -1);
    assert_int_equal(title("slurmstepd: [4242"), -1);
    assert_int_equal(title("slurmstepd: [0.0]"), -1);
    assert_int_equal(title("/usr/sbin/slurmstepd: [4242.0]"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v1_job),
        cmocka_unit_test(test_v2_job),
        cmocka_unit_test(test_no_job),
        cmocka_unit_test(test_a_users_own_cgroups_name_no_job),
        cmocka_unit_test(test_forged_lines_name_no_job),
        cmocka_unit_test(test_stepd_titles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
