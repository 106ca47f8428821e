/* The taskstats listener on this kernel, with real short-lived processes
 * of a real test user (lgtest40, made and removed here): each process
 * that ends is reported once, with that user's uid and the CPU it used
 * (the truth: what its parent's wait4 says, or what it said of itself
 * just before it ended), however it ended:
 *   - 20 processes of 0.3 s of CPU each, reaped by their parent;
 *   - 20 more, double-forked: orphaned, reparented and reaped elsewhere;
 *   - a process of 4 threads: one exit, its CPU the sum of its threads';
 *   - processes of 4 threads that exit while the others still run: the
 *     threads' CPU all comes, in the group's record or in late ones.
 * Needs root (skipped otherwise).  Takes the integration tests' lock:
 * they remove every lgtest* user when they start. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "observe/taskstats.h"
#include "testutil.h"

#define USER "lgtest40"
#define COUNT 20
#define BURN "0.3"
#define BURN_USEC 300000

/* How far the record's CPU may be from the truth.  With the scheduler's
 * run time (cpu_ticks false) each thread's record is taken in do_exit
 * before the thread has finished exiting (its memory, files, the last
 * schedule): wait4 also counts that tail.  On a busy machine the tail
 * of threads that exit together, contending for one mm, has measured
 * 12 ms for four threads: allow 5 ms a thread and 2% of the total.  Tick
 * samples are off by a few ticks for each thread. */
#define SLACK_RUN_USEC 5000
#define SLACK_RUN_SHARE 50
#define SLACK_TICKS_USEC 60000

static struct {
    bool ready;
    int lock_fd;
    uid_t uid;
    gid_t gid;
    char burn[300];
    struct taskstats_listener ts;
} live = {.lock_fd = -1};

/* What the listener handed over for the test user. */
static struct {
    struct ts_exit e[1024];
    size_t count;
} got;

static void keep(const struct ts_exit *e, void *arg)
{
    (void)arg;
    if (e->uid == live.uid && got.count < sizeof(got.e) / sizeof(got.e[0]))
        got.e[got.count++] = *e;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int setup(void **state)
{
    (void)state;
    if (geteuid() != 0)
        return 0;
    live.lock_fd = open("/run/lock/loginguard-tests.lock", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (live.lock_fd >= 0)
        flock(live.lock_fd, LOCK_EX);
    /* The build tree may not be open to the test user: a private copy. */
    const char *top = getenv("LG_TOP_BUILDDIR");
    char src[300], cmd[1024];
    snprintf(src, sizeof(src), "%s/tests/helpers/burn", top ? top : "..");
    make_test_dir();
    chmod(test_dir, 0755);
    snprintf(live.burn, sizeof(live.burn), "%s/burn", test_dir);
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 755 '%s'", src, live.burn, live.burn);
    if (run(cmd) != 0) {
        fprintf(stderr, "taskstats live: cannot copy %s\n", src);
        return -1;
    }
    run("userdel " USER " 2>/dev/null");
    if (run("useradd --no-create-home --shell /usr/sbin/nologin --key UID_MIN=1000 " USER) != 0)
        return -1;
    struct passwd *pw = getpwnam(USER);
    if (!pw)
        return -1;
    live.uid = pw->pw_uid;
    live.gid = pw->pw_gid;
    char err[512];
    if (taskstats_open(&live.ts, err, sizeof(err)) < 0) {
        fprintf(stderr, "taskstats live: %s\n", err);
        return -1;
    }
    printf("taskstats: family %u, struct version %u\n", live.ts.family, live.ts.version);
    live.ready = true;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (geteuid() != 0)
        return 0;
    taskstats_close(&live.ts);
    run("userdel " USER " 2>/dev/null");
    if (test_dir[0])
        remove_test_dir();
    if (live.lock_fd >= 0)
        close(live.lock_fd);
    return 0;
}

/* ---- the user's side (in a child that has become the test user) ---- */

static void say(int out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int out, const char *fmt, ...)
{
    char line[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (write(out, line, (size_t)n) != n)
        _exit(1);
}

/* burn with its stdout on out; its pid. */
static pid_t start_burn(int out, const char *threads, const char *mode)
{
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out, 1);
        execl(live.burn, "burn", BURN, threads, mode, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void reap(int out, pid_t pid)
{
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    long cpu = ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000L +
               ru.ru_stime.tv_usec;
    say(out, "reaped %d %ld %d\n", (int)pid, cpu, status);
}

static void many_reaped(int out)
{
    pid_t pids[COUNT];
    for (int i = 0; i < COUNT; i++)
        pids[i] = start_burn(out, "1", "join");
    for (int i = 0; i < COUNT; i++)
        reap(out, pids[i]);
}

/* Each burn's parent ends at once: burn starts only once it has a new
 * parent (the nearest subreaper, or init), which reaps it. */
static void many_orphaned(int out)
{
    for (int i = 0; i < COUNT; i++) {
        pid_t middle = fork();
        if (middle == 0) {
            pid_t me = getpid(), burn = fork();
            if (burn == 0) {
                for (int tries = 0; getppid() == me && tries < 5000; tries++)
                    usleep(1000);
                dup2(out, 1);
                execl(live.burn, "burn", BURN, "1", "join", (char *)NULL);
                _exit(127);
            }
            say(out, "orphan %d %d 0\n", (int)burn, (int)me);
            _exit(0);
        }
        waitpid(middle, NULL, 0);
    }
}

static void four_threads_joined(int out)
{
    reap(out, start_burn(out, "4", "join"));
}

static void four_threads_cut_short(int out)
{
    for (int i = 0; i < 3; i++)
        reap(out, start_burn(out, "4", "exit"));
}

/* Run as the test user, gather the lines it and its processes write
 * (until the last of them has closed the pipe), draining the listener
 * all the while. */
static char *as_user(void (*fn)(int out), pid_t *user_side)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(fds[0]);
        if (setgroups(0, NULL) < 0 || setresgid(live.gid, live.gid, live.gid) < 0 ||
            setresuid(live.uid, live.uid, live.uid) < 0)
            _exit(1);
        fn(fds[1]);
        _exit(0);
    }
    close(fds[1]);
    *user_side = child;
    size_t cap = 8192, len = 0;
    char *text = malloc(cap);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd pfd[2] = {{fds[0], POLLIN, 0}, {live.ts.fd, POLLIN, 0}};
        poll(pfd, 2, 100);
        assert_int_equal(taskstats_drain(&live.ts, keep, NULL), 0);
        ssize_t n = 0;
        if (pfd[0].revents) {
            n = read(fds[0], text + len, cap - len - 1);
            if (n == 0)
                break;
            if (n > 0)
                len += (size_t)n;
            assert_true(cap - len > 1);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 120)
            fail_msg("the test user's processes did not end within 120 s");
    }
    close(fds[0]);
    text[len] = '\0';
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return text;
}

/* ---- what came ---- */

static size_t records_of(pid_t tgid, bool late, const struct ts_exit **first)
{
    size_t n = 0;
    for (size_t i = 0; i < got.count; i++)
        if (got.e[i].tgid == tgid && got.e[i].late == late) {
            if (n++ == 0 && first)
                *first = &got.e[i];
        }
    return n;
}

/* Wait up to 5 s for the group record of each pid. */
static void wait_for_records(const pid_t *pids, size_t n)
{
    for (int tries = 0; tries < 50; tries++) {
        size_t missing = 0;
        for (size_t i = 0; i < n; i++)
            missing += records_of(pids[i], false, NULL) == 0;
        if (missing == 0)
            return;
        struct pollfd pfd = {live.ts.fd, POLLIN, 0};
        poll(&pfd, 1, 100);
        assert_int_equal(taskstats_drain(&live.ts, keep, NULL), 0);
    }
}

/* What burn said of itself: its CPU just before it ended, or -1. */
static long burn_said(const char *text, pid_t pid)
{
    char key[32];
    snprintf(key, sizeof(key), "burn %d ", (int)pid);
    for (const char *p = text; (p = strstr(p, key)) != NULL; p++)
        if (p == text || p[-1] == '\n')
            return strtol(p + strlen(key), NULL, 10);
    return -1;
}

static long slack_of(bool ticks, unsigned threads, long cpu_usec)
{
    if (ticks)
        return SLACK_TICKS_USEC * (long)threads;
    return SLACK_RUN_USEC * (long)threads + cpu_usec / SLACK_RUN_SHARE;
}

static long slack(const struct ts_exit *e)
{
    return slack_of(e->cpu_ticks, e->threads, (long)e->cpu_usec);
}

struct spread {
    long min, max, sum;
    size_t n;
};

static void note(struct spread *s, long diff)
{
    if (s->n == 0 || diff < s->min)
        s->min = diff;
    if (s->n == 0 || diff > s->max)
        s->max = diff;
    s->sum += diff;
    s->n++;
}

static void report(const char *what, const struct spread *s)
{
    printf("%s: record - truth over %zu processes: min %ld, mean %ld, max %ld usec\n", what, s->n,
           s->min, s->n ? s->sum / (long)s->n : 0, s->max);
}

/* Each reaped process's one record: the user's uid, its parent, its name,
 * the CPU wait4 gave its parent. */
static void check_reaped(const char *text, pid_t parent, unsigned threads, struct spread *sp)
{
    pid_t pids[COUNT * 2];
    long truth[COUNT * 2];
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "reaped ")) != NULL && n < COUNT * 2; p++) {
        long pid, cpu, status;
        if ((p == text || p[-1] == '\n') && sscanf(p, "reaped %ld %ld %ld", &pid, &cpu, &status) == 3) {
            assert_int_equal(status, 0);
            pids[n] = (pid_t)pid;
            truth[n++] = cpu;
        }
    }
    assert_true(n > 0);
    wait_for_records(pids, n);
    for (size_t i = 0; i < n; i++) {
        const struct ts_exit *e = NULL;
        if (records_of(pids[i], false, &e) != 1)
            fail_msg("pid %d: %zu records", (int)pids[i], records_of(pids[i], false, NULL));
        assert_int_equal(e->uid, live.uid);
        assert_int_equal(e->ppid, parent);
        assert_string_equal(e->comm, "burn");
        assert_false(e->per_thread);
        assert_int_equal(e->threads, threads);
        long cpu = (long)e->cpu_usec;
        if (cpu < (long)threads * BURN_USEC - slack(e) || cpu > truth[i] + 1000 ||
            cpu < truth[i] - slack(e))
            fail_msg("pid %d: %ld usec of CPU in the record, %ld by wait4", (int)pids[i], cpu,
                     truth[i]);
        note(sp, cpu - truth[i]);
    }
}

static void test_short_processes_reaped_by_their_parent(void **state)
{
    (void)state;
    if (!live.ready)
        skip();
    pid_t parent;
    char *text = as_user(many_reaped, &parent);
    struct spread sp = {0};
    check_reaped(text, parent, 1, &sp);
    assert_int_equal(sp.n, COUNT);
    report("reaped by their parent", &sp);
    free(text);
}

static void test_orphans_reaped_by_another(void **state)
{
    (void)state;
    if (!live.ready)
        skip();
    pid_t parent;
    char *text = as_user(many_orphaned, &parent);
    pid_t pids[COUNT];
    long middles[COUNT];
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, "orphan ")) != NULL && n < COUNT; p++) {
        long pid, middle, zero;
        if ((p == text || p[-1] == '\n') && sscanf(p, "orphan %ld %ld %ld", &pid, &middle, &zero) == 3) {
            pids[n] = (pid_t)pid;
            middles[n++] = middle;
        }
    }
    assert_int_equal(n, COUNT);
    wait_for_records(pids, n);
    struct spread sp = {0};
    for (size_t i = 0; i < n; i++) {
        const struct ts_exit *e = NULL;
        if (records_of(pids[i], false, &e) != 1)
            fail_msg("orphan %d: %zu records", (int)pids[i], records_of(pids[i], false, NULL));
        assert_int_equal(e->uid, live.uid);
        assert_true(e->ppid > 0 && e->ppid != middles[i] && e->ppid != parent);
        long said = burn_said(text, pids[i]), cpu = (long)e->cpu_usec;
        assert_true(said >= BURN_USEC);
        /* burn spoke before it ended: the record holds a little more. */
        if (cpu < said - slack(e) || cpu > said + slack(e))
            fail_msg("orphan %d: %ld usec of CPU in the record, %ld said just before", (int)pids[i],
                     cpu, said);
        note(&sp, cpu - said);
    }
    report("orphaned", &sp);
    free(text);
}

static void test_four_threads_are_one_exit(void **state)
{
    (void)state;
    if (!live.ready)
        skip();
    pid_t parent;
    char *text = as_user(four_threads_joined, &parent);
    struct spread sp = {0};
    check_reaped(text, parent, 4, &sp);
    assert_int_equal(sp.n, 1);
    report("4 threads joined", &sp);
    free(text);
}

/* exit() while three threads still run: they end with the process, on
 * either CPU, and a thread's record may come after the group's last
 * one.  Every thread's CPU comes, in one place or the other. */
static void test_threads_ended_by_exit_all_count(void **state)
{
    (void)state;
    if (!live.ready)
        skip();
    pid_t parent;
    char *text = as_user(four_threads_cut_short, &parent);
    size_t n = 0, late_total = 0;
    struct spread sp = {0};
    for (const char *p = text; (p = strstr(p, "reaped ")) != NULL; p++) {
        long pid, cpu, status;
        if ((p != text && p[-1] != '\n') || sscanf(p, "reaped %ld %ld %ld", &pid, &cpu, &status) != 3)
            continue;
        pid_t tgid = (pid_t)pid;
        wait_for_records(&tgid, 1);
        const struct ts_exit *e = NULL;
        assert_int_equal(records_of(tgid, false, &e), 1);
        unsigned threads = e->threads;
        long sum = (long)e->cpu_usec;
        size_t lates = records_of(tgid, true, NULL);
        for (size_t i = 0; i < got.count; i++)
            if (got.e[i].tgid == tgid && got.e[i].late) {
                sum += (long)got.e[i].cpu_usec;
                threads += got.e[i].threads;
            }
        assert_int_equal(threads, 4);
        if (sum > cpu + 1000 || sum < cpu - slack_of(e->cpu_ticks, threads, sum))
            fail_msg("pid %ld: %ld usec of CPU in %zu records, %ld by wait4", pid, sum, 1 + lates,
                     cpu);
        note(&sp, sum - cpu);
        late_total += lates;
        n++;
    }
    assert_int_equal(n, 3);
    report("4 threads cut short by exit", &sp);
    printf("4 threads cut short by exit: %zu late thread records\n", late_total);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_processes_reaped_by_their_parent),
        cmocka_unit_test(test_orphans_reaped_by_another),
        cmocka_unit_test(test_four_threads_are_one_exit),
        cmocka_unit_test(test_threads_ended_by_exit_all_count),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
