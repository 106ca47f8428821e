/* Whether a process runs only its own code (code_check.h): the parsers on
 * texts as /proc gives them, then real processes through the command line
 * reader's helper, as the daemon asks: a root program as it is, one with
 * LD_PRELOAD, one from a file a user owns, one with anonymous executable
 * memory, one whose code was changed in memory.  Needs root (a file
 * chowned to nobody); skipped otherwise. */
#include "config.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "observe/argv_reader.h"
#include "observe/code_check.h"
#include "observe/procfs.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

#define TEXT(s) s, sizeof(s) - 1

static void test_environ(void **state)
{
    (void)state;
    char why[CODE_WHY_MAX] = "";
    assert_true(code_environ_clean(TEXT("HOME=/home/a\0PATH=/usr/bin\0LD_PRELOAD=\0"), why,
                                   sizeof(why)));
    assert_false(code_environ_clean(TEXT("HOME=/h\0LD_PRELOAD=/home/a/x.so\0"), why, sizeof(why)));
    assert_string_equal(why, "LD_PRELOAD in its environment");
    /* The last entry, with no NUL after it. */
    assert_false(code_environ_clean(TEXT("A=b\0LD_AUDIT=/tmp/a.so"), why, sizeof(why)));
    assert_string_equal(why, "LD_AUDIT in its environment");
    /* A name that only starts the same is another variable. */
    assert_true(code_environ_clean(TEXT("XLD_PRELOAD=/x\0LD_PRELOADS=/y\0"), why, sizeof(why)));
}

static void test_status(void **state)
{
    (void)state;
    char why[CODE_WHY_MAX] = "";
    assert_true(code_status_clean(TEXT("Name:\ttmux\nTracerPid:\t0\nUid:\t1000\n"), why,
                                  sizeof(why)));
    assert_false(code_status_clean(TEXT("Name:\ttmux\nTracerPid:\t4242\n"), why, sizeof(why)));
    assert_string_equal(why, "traced by process 4242");
    assert_false(code_status_clean(TEXT("Name:\ttmux\n"), why, sizeof(why)));
}

/* The file check, as the test says: root's when the path says so. */
static bool fake_file_ok(const struct code_mapping *m, char *why, size_t why_len, void *arg)
{
    (void)arg;
    if (m->path_len >= 5 && memcmp(m->path, "/usr/", 5) == 0)
        return true;
    snprintf(why, why_len, "user file %.*s", (int)m->path_len, m->path);
    return false;
}

#define HEADER(perms, inode, path) \
    "7f0000000000-7f0000001000 " perms " 00000000 fe:00 " inode "                 " path "\n"
#define FIELDS(anon) "Size:                  4 kB\nAnonymous:             " anon " kB\nVmFlags: rd ex\n"

static void test_smaps(void **state)
{
    (void)state;
    char why[CODE_WHY_MAX] = "";
    const char clean[] = HEADER("r-xp", "1234", "/usr/bin/tmux") FIELDS("0")
        HEADER("rw-p", "0", "[heap]") FIELDS("120")
        HEADER("r-xp", "0", "[vdso]") FIELDS("0")
        HEADER("rw-p", "5678", "/home/a/data file") FIELDS("8");
    assert_true(code_smaps_clean(TEXT(clean), fake_file_ok, NULL, why, sizeof(why)));

    const char user_lib[] = HEADER("r-xp", "1234", "/usr/bin/tmux") FIELDS("0")
        HEADER("r-xp", "99", "/home/a/evil lib.so") FIELDS("0");
    assert_false(code_smaps_clean(TEXT(user_lib), fake_file_ok, NULL, why, sizeof(why)));
    assert_string_equal(why, "user file /home/a/evil lib.so");

    const char anon[] = HEADER("r-xp", "1234", "/usr/bin/tmux") FIELDS("0")
        HEADER("rwxp", "0", "") FIELDS("4");
    assert_false(code_smaps_clean(TEXT(anon), fake_file_ok, NULL, why, sizeof(why)));
    assert_string_equal(why, "anonymous executable memory");

    const char changed[] = HEADER("r-xp", "1234", "/usr/bin/tmux") FIELDS("4");
    assert_false(code_smaps_clean(TEXT(changed), fake_file_ok, NULL, why, sizeof(why)));
    assert_string_equal(why, "its code changed in memory (/usr/bin/tmux)");
}

/* ---- real processes, through the helper ---- */

static struct argv_answer answer;
static char answer_text[CODE_WHY_MAX];
static size_t answers;

static void keep(const struct argv_answer *a, void *arg)
{
    (void)arg;
    answer = *a;
    memcpy(answer_text, a->argv, a->len);
    answer_text[a->len] = '\0';
    answer.argv = answer_text;
    answers++;
}

static uint64_t start_time_of(pid_t pid)
{
    struct proc_stat st;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    assert_true(n > 0);
    assert_int_equal(procfs_parse_stat(buf, (size_t)n, &st), 0);
    return st.start_time;
}

/* What the helper says of pid: "" when it runs only its own code. */
static const char *ask(pid_t pid)
{
    char err[256];
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    answers = 0;
    assert_int_equal(argv_reader_request_code(&r, pid, start_time_of(pid), 7), 0);
    uint64_t deadline = now_boottime_usec() + 10 * USEC_PER_SEC; /* a hang guard */
    while (!answers && now_boottime_usec() < deadline)
        argv_reader_poll(&r, 50 * 1000, keep, NULL);
    argv_reader_stop(&r);
    assert_int_equal(answers, 1);
    assert_int_equal(answer.kind, ARGV_CODE);
    assert_int_equal(answer.status, ARGV_OK);
    return answer.argv;
}

/* Runs path (sleep) with env, and waits until it has exec'd. */
static pid_t run(const char *path, char *const env[])
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {(char *)"sleep", (char *)"60", NULL};
        execve(path, argv, env);
        _exit(127);
    }
    char exe[64], target[4096];
    snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
    for (int tries = 0; tries < 1000; tries++) { /* a hang guard */
        ssize_t n = readlink(exe, target, sizeof(target) - 1);
        if (n > 0 && (target[n] = '\0', strcmp(target, path) == 0))
            break;
        usleep(5 * 1000);
    }
    /* And until the dynamic loader has mapped the C library. */
    char maps[64];
    snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
    for (int tries = 0; tries < 1000; tries++) { /* a hang guard */
        static char text[256 * 1024];
        int fd = open(maps, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, text, sizeof(text)) : -1;
        if (fd >= 0)
            close(fd);
        if (n > 0 && memmem(text, (size_t)n, "libc", 4))
            break;
        usleep(5 * 1000);
    }
    return pid;
}

static void end(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static char *sleep_path(void)
{
    return access("/usr/bin/sleep", X_OK) == 0 ? (char *)"/usr/bin/sleep" : (char *)"/bin/sleep";
}

static void test_root_program_runs_its_own_code(void **state)
{
    (void)state;
    char *env[] = {(char *)"PATH=/usr/bin", NULL};
    pid_t pid = run(sleep_path(), env);
    assert_string_equal(ask(pid), "");
    end(pid);
}

static void test_preloaded(void **state)
{
    (void)state;
    /* A library of root's: the variable is enough. */
    char *env[] = {(char *)"LD_PRELOAD=libm.so.6", NULL};
    pid_t pid = run(sleep_path(), env);
    assert_string_equal(ask(pid), "LD_PRELOAD in its environment");
    end(pid);
}

static void test_users_file(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char dir[] = "/tmp/lgtest-code-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], cmd[512];
    snprintf(path, sizeof(path), "%s/sleep", dir);
    snprintf(cmd, sizeof(cmd), "cp %s %s && chown 65534 %s", sleep_path(), path, path);
    assert_int_equal(system(cmd), 0);
    char *env[] = {NULL};
    pid_t pid = run(path, env);
    char want[512];
    snprintf(want, sizeof(want), "code from %s (owner uid 65534, mode 755), which not only root "
             "can change", path);
    assert_string_equal(ask(pid), want);
    end(pid);
    unlink(path);
    rmdir(dir);
}

/* A child of this test (its program root's, as built and run as root)
 * that does what injected code would, then waits. */
static pid_t child_that(int what)
{
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (what == 0) {
            void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                _exit(1);
            memset(m, 0xc3, 4096);
        } else {
            /* Its own code, written over (a byte set to what it was). */
            long page = sysconf(_SC_PAGESIZE);
            char *text = (char *)((uintptr_t)&child_that & ~(uintptr_t)(page - 1));
            if (mprotect(text, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
                _exit(1);
            volatile char *p = text;
            p[0] = p[0];
            mprotect(text, (size_t)page, PROT_READ | PROT_EXEC);
        }
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    close(ready[1]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);
    return pid;
}

static void test_anonymous_code(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    pid_t pid = child_that(0);
    assert_string_equal(ask(pid), "anonymous executable memory");
    end(pid);
}

static void test_changed_code(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    pid_t pid = child_that(1);
    const char *why = ask(pid);
    assert_true(strncmp(why, "its code changed in memory (", 28) == 0);
    end(pid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_environ),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_smaps),
        cmocka_unit_test(test_root_program_runs_its_own_code),
        cmocka_unit_test(test_preloaded),
        cmocka_unit_test(test_users_file),
        cmocka_unit_test(test_anonymous_code),
        cmocka_unit_test(test_changed_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
