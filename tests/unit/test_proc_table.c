#include "config.h"

#include "enforce/proc_table.h"
#include "testutil.h"

static void add(struct proc_table *t, pid_t pid, pid_t ppid, enum proc_class class)
{
    struct table_proc *p = proc_table_add(t);
    p->pid = pid;
    p->ppid = ppid;
    p->start_time = 1000 + (uint64_t)pid;
    p->uid = 2000;
    p->class = class;
    snprintf(p->comm, sizeof(p->comm), "p%d", (int)pid);
    snprintf(p->exe, sizeof(p->exe), "/bin/p%d", (int)pid);
}

static bool has(const struct stop_target *x, size_t n, pid_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (x[i].pid == pid)
            return true;
    return false;
}

/* A stop takes the process and everything below it, never an exempt
 * process (a session's sshd), nor its parent or siblings. */
static void test_tree(void **state)
{
    (void)state;
    struct proc_table t = {0};
    add(&t, 10, 1, CLASS_EXEMPT);     /* sshd */
    add(&t, 11, 10, CLASS_NONE);      /* the shell */
    add(&t, 12, 11, CLASS_FORBIDDEN); /* the miner, root of the stop */
    add(&t, 13, 12, CLASS_NONE);
    add(&t, 14, 13, CLASS_NONE);
    add(&t, 15, 12, CLASS_EXEMPT);    /* exempt below it: left */
    add(&t, 16, 11, CLASS_NONE);      /* a sibling */
    struct stop_target *x;
    size_t n = proc_table_tree(&t, 12, &x);
    assert_int_equal(n, 3);
    assert_int_equal(x[0].pid, 12);
    assert_int_equal(x[0].start_time, 1012);
    assert_string_equal(x[0].exe, "/bin/p12");
    assert_true(has(x, n, 13) && has(x, n, 14));
    free(x);
    /* An exempt process is never a root either. */
    assert_int_equal(proc_table_tree(&t, 10, &x), 0);
    free(x);
    assert_int_equal(proc_table_tree(&t, 99, &x), 0);
    free(x);
    proc_table_free(&t);
}

/* A Slurm job's process is Slurm's: never a stop target, nor a root. */
static void test_slurm_jobs_are_left(void **state)
{
    (void)state;
    struct proc_table t = {0};
    add(&t, 21, 1, CLASS_FORBIDDEN);
    add(&t, 22, 21, CLASS_NONE);
    add(&t, 23, 21, CLASS_NONE);
    t.procs[2].slurm_job = 77;
    struct stop_target *x;
    size_t n = proc_table_tree(&t, 21, &x);
    assert_int_equal(n, 2);
    assert_true(has(x, n, 21) && has(x, n, 22) && !has(x, n, 23));
    free(x);
    t.procs[0].slurm_job = 77;
    assert_int_equal(proc_table_tree(&t, 21, &x), 0);
    free(x);
    proc_table_free(&t);
}

/* Parents read at different moments can make a loop: each process is
 * taken once and the walk ends. */
static void test_loop(void **state)
{
    (void)state;
    struct proc_table t = {0};
    add(&t, 20, 21, CLASS_NONE);
    add(&t, 21, 20, CLASS_NONE);
    struct stop_target *x;
    size_t n = proc_table_tree(&t, 20, &x);
    assert_int_equal(n, 2);
    free(x);
    pid_t *pids;
    assert_int_equal(proc_table_pids(&t, &pids), 2);
    assert_int_equal(pids[0], 20);
    assert_int_equal(pids[1], 21);
    free(pids);
    proc_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree),
        cmocka_unit_test(test_loop),
        cmocka_unit_test(test_slurm_jobs_are_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
