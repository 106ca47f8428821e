#include "config.h"

#include <signal.h>
#include <sys/wait.h>

#include "enforce/stopper.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

/* Real processes, run as nobody (the stopper never touches root's);
 * the tests need root to make them. */
#define NOBODY 65534

static pid_t child(bool ignore_term)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* Before it becomes nobody, which target_of waits for: a SIGTERM
         * sent once it is nobody must find it ignored. */
        if (ignore_term)
            signal(SIGTERM, SIG_IGN);
        if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
            _exit(99);
        for (;;)
            pause();
    }
    return pid;
}

static struct stop_target target_of(pid_t pid)
{
    struct stop_target t = {.pid = pid, .uid = NOBODY};
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    /* Wait until the child has become nobody. */
    for (int i = 0; i < 1000; i++) {
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        if (stat(path, &st) == 0 && st.st_uid == NOBODY)
            break;
        usleep(1000);
    }
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    ssize_t n = procfs_pread(fd, buf, sizeof(buf));
    close(fd);
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(buf, (size_t)n, &st), 0);
    t.start_time = st.start_time;
    return t;
}

struct outcome {
    int exited, killed;
};

static void record(const struct stop_target *t, enum stop_outcome o, void *arg)
{
    (void)t;
    struct outcome *out = arg;
    if (o == STOP_EXITED)
        out->exited++;
    else
        out->killed++;
}

/* Tick until nothing is pending, at most 5 s. */
static struct outcome run_until_done(struct stopper *s)
{
    struct outcome out = {0};
    for (int i = 0; i < 500 && (i == 0 || s->count > 0); i++) {
        stopper_tick(s, now_boottime_usec(), record, &out);
        usleep(10000);
    }
    assert_int_equal(s->count, 0);
    return out;
}

static int skip_unless_root(void)
{
    if (geteuid() != 0) {
        fprintf(stderr, "skipped: needs root to run processes as nobody\n");
        return 1;
    }
    return 0;
}

static void test_term_then_exit(void **state)
{
    (void)state;
    if (skip_unless_root())
        return;
    struct stopper s = {0};
    pid_t pid = child(false);
    struct stop_target t = target_of(pid);
    assert_int_equal(stopper_terminate(&s, "/proc", &t, 5 * USEC_PER_SEC, now_boottime_usec()),
                     STOP_SIGNALLED);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    struct outcome out = run_until_done(&s);
    assert_int_equal(out.exited, 1);
    assert_int_equal(out.killed, 0);
    stopper_free(&s);
}

static void test_kill_after_grace(void **state)
{
    (void)state;
    if (skip_unless_root())
        return;
    struct stopper s = {0};
    pid_t pid = child(true);
    struct stop_target t = target_of(pid);
    uint64_t start = now_boottime_usec();
    assert_int_equal(stopper_terminate(&s, "/proc", &t, 200000, start), STOP_SIGNALLED);
    /* By the stopper's own clock: it ignores SIGTERM and is left alone
     * until its grace has passed, then killed. */
    struct outcome out = {0};
    stopper_tick(&s, start + 199999, record, &out);
    assert_int_equal(out.exited + out.killed, 0);
    assert_int_equal(s.count, 1);
    stopper_tick(&s, start + 200000, record, &out);
    assert_int_equal(out.killed, 1);
    assert_int_equal(s.count, 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    stopper_free(&s);
}

/* The identity check sees another start time: as after a pid was
 * recycled between the decision and the signal.  Nothing is sent. */
static void test_recycled_pid_is_not_signalled(void **state)
{
    (void)state;
    if (skip_unless_root())
        return;
    struct stopper s = {0};
    pid_t pid = child(false);
    struct stop_target t = target_of(pid);
    t.start_time += 1;
    assert_int_equal(stopper_terminate(&s, "/proc", &t, 0, now_boottime_usec()),
                     STOP_IDENTITY_CHANGED);
    t.start_time -= 1;
    t.uid = NOBODY - 1; /* another user's process by now */
    assert_int_equal(stopper_terminate(&s, "/proc", &t, 0, now_boottime_usec()),
                     STOP_IDENTITY_CHANGED);
    assert_int_equal(s.count, 0);
    usleep(50000);
    int status;
    assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* alive, never signalled */
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    stopper_free(&s);
}

static void test_gone_and_root(void **state)
{
    (void)state;
    if (skip_unless_root())
        return;
    struct stopper s = {0};
    pid_t pid = child(false);
    struct stop_target t = target_of(pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(stopper_terminate(&s, "/proc", &t, 0, now_boottime_usec()), STOP_GONE);
    struct stop_target self = {.pid = getpid(), .uid = 0};
    assert_int_equal(stopper_terminate(&s, "/proc", &self, 0, now_boottime_usec()),
                     STOP_IDENTITY_CHANGED);
    assert_int_equal(s.count, 0);
    stopper_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_term_then_exit),
        cmocka_unit_test(test_kill_after_grace),
        cmocka_unit_test(test_recycled_pid_is_not_signalled),
        cmocka_unit_test(test_gone_and_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
