/* The command line reader: real command lines from the real /proc, and a
 * read that never ends.
 *
 * The read that never ends is made by a FUSE filesystem (helpers/fuse-trap)
 * standing in for /proc: process 1's cmdline is a file whose reads the
 * server takes and never answers.  That stands in for a user's process
 * whose memory stalls its readers (see argv_reader.h), which this host's
 * kernel does not let a test set up on demand; the reader, its helper
 * process, the kill and the reaping are the real ones.  Needs root and
 * /dev/fuse (skipped otherwise). */
#include "config.h"

#include <errno.h>
#include <nettle/sha2.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>

#include "observe/argv_describe.h"
#include "observe/argv_reader.h"
#include "observe/procfs.h"
#include "observe/shm_fds.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

#define MAX_ANSWERS 16

static struct {
    struct argv_answer a[MAX_ANSWERS];
    char argv[MAX_ANSWERS][ARGV_KEEP];
    size_t count;
} got;

static void keep(const struct argv_answer *a, void *arg)
{
    (void)arg;
    assert_true(got.count < MAX_ANSWERS);
    got.a[got.count] = *a;
    if (a->status == ARGV_OK) {
        memcpy(got.argv[got.count], a->argv, a->len);
        got.a[got.count].argv = got.argv[got.count];
    }
    got.count++;
}

/* Poll until n answers have come, at most timeout_usec. */
static void wait_answers(struct argv_reader *r, size_t n, uint64_t timeout_usec)
{
    uint64_t deadline = now_boottime_usec() + timeout_usec;
    while (got.count < n && now_boottime_usec() < deadline)
        argv_reader_poll(r, 50 * 1000, keep, NULL);
    assert_int_equal(got.count, n);
}

static uint64_t start_time_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(buf, (size_t)n, &st), 0);
    return st.start_time;
}

static void sha256_hex_of(const char *data, size_t len, char out[65])
{
    struct sha256_ctx ctx;
    uint8_t digest[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)data);
    sha256_digest(&ctx, sizeof(digest), digest);
    for (size_t i = 0; i < sizeof(digest); i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
}

/* A child that sleeps under the command line sh -c 'sleep 30' and then
 * `args` arguments of `arg_len` 'x's; its cmdline bytes (each argument
 * NUL-ended) go to *cmdline. */
static pid_t start_sleeper(size_t args, size_t arg_len, char **cmdline, size_t *cmdline_len)
{
    char **argv = calloc(args + 4, sizeof(*argv));
    argv[0] = "sh";
    argv[1] = "-c";
    argv[2] = "sleep 30";
    size_t len = 3 + 3 + 9;
    for (size_t i = 0; i < args; i++) {
        argv[3 + i] = malloc(arg_len + 1);
        memset(argv[3 + i], 'x', arg_len);
        argv[3 + i][arg_len] = '\0';
        len += arg_len + 1;
    }
    char *bytes = malloc(len), *o = bytes;
    for (size_t i = 0; argv[i]; i++)
        o = stpcpy(o, argv[i]) + 1;
    pid_t pid = fork();
    if (pid == 0) {
        execv("/bin/sh", argv);
        _exit(127);
    }
    for (size_t i = 0; i < args; i++)
        free(argv[3 + i]);
    free(argv);
    *cmdline = bytes;
    *cmdline_len = len;
    /* Until it has exec'd, its cmdline is ours. */
    char path[64], buf[16];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    for (int tries = 0; tries < 500; tries++) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, 3) : -1;
        if (fd >= 0)
            close(fd);
        if (n == 3 && memcmp(buf, "sh", 3) == 0)
            break;
        usleep(10 * 1000);
    }
    return pid;
}

static void end_child(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* An ordinary command line comes back whole, without its last NUL, with
 * the digest of those bytes. */
static void test_reads_a_command_line(void **state)
{
    (void)state;
    char *bytes, err[256];
    size_t len;
    pid_t pid = start_sleeper(2, 10, &bytes, &len);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    got.count = 0;
    assert_int_equal(argv_reader_request(&r, pid, start_time_of(pid), 42), 0);
    wait_answers(&r, 1, 5 * USEC_PER_SEC);
    const struct argv_answer *a = &got.a[0];
    assert_int_equal(a->status, ARGV_OK);
    assert_int_equal(a->pid, pid);
    assert_int_equal(a->tag, 42);
    assert_int_equal(a->total, len - 1);
    assert_int_equal(a->len, len - 1);
    assert_false(a->cut);
    assert_memory_equal(a->argv, bytes, len - 1);
    char want[65];
    sha256_hex_of(bytes, len - 1, want);
    assert_string_equal(a->sha256, want);
    /* ps shows the helper for what it is, not as a second loginguardd. */
    char path[64], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)r.helper.child.pid);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    assert_non_null(fgets(comm, sizeof(comm), f));
    fclose(f);
    assert_string_equal(comm, "loginguard-argv\n");
    argv_reader_stop(&r);
    end_child(pid);
    free(bytes);
}

/* A command line longer than ARGV_CAP: ARGV_KEEP bytes come back, and
 * the length and digest cover ARGV_CAP bytes, marked as cut. */
static void test_long_command_line_is_cut(void **state)
{
    (void)state;
    char *bytes, err[256];
    size_t len;
    pid_t pid = start_sleeper(3, 100 * 1024, &bytes, &len);
    assert_true(len > ARGV_CAP);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    got.count = 0;
    assert_int_equal(argv_reader_request(&r, pid, start_time_of(pid), 1), 0);
    wait_answers(&r, 1, 5 * USEC_PER_SEC);
    const struct argv_answer *a = &got.a[0];
    assert_int_equal(a->status, ARGV_OK);
    assert_true(a->cut);
    assert_int_equal(a->total, ARGV_CAP);
    assert_int_equal(a->len, ARGV_KEEP);
    assert_memory_equal(a->argv, bytes, ARGV_KEEP);
    char want[65];
    sha256_hex_of(bytes, ARGV_CAP, want);
    assert_string_equal(a->sha256, want);
    argv_reader_stop(&r);
    end_child(pid);
    free(bytes);
}

/* A pid that is another process now (a start time that does not match),
 * or no process at all: gone, nothing read. */
static void test_other_or_no_process_is_gone(void **state)
{
    (void)state;
    char *bytes, err[256];
    size_t len;
    pid_t pid = start_sleeper(0, 0, &bytes, &len);
    uint64_t started = start_time_of(pid);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    got.count = 0;
    assert_int_equal(argv_reader_request(&r, pid, started + 1, 1), 0);
    end_child(pid);
    assert_int_equal(argv_reader_request(&r, pid, started, 2), 0);
    wait_answers(&r, 2, 5 * USEC_PER_SEC);
    assert_int_equal(got.a[0].status, ARGV_GONE);
    assert_int_equal(got.a[1].status, ARGV_GONE);
    argv_reader_stop(&r);
    free(bytes);
}

/* A helper that dies is replaced; what was waiting is still answered. */
static void test_dead_helper_is_replaced(void **state)
{
    (void)state;
    char *bytes, err[256];
    size_t len;
    pid_t pid = start_sleeper(1, 5, &bytes, &len);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    pid_t first = r.helper.child.pid;
    kill(first, SIGKILL);
    /* Dead before it is asked: one that dies on a request answers it
     * ARGV_ERROR (so that a request that kills helpers kills one). */
    struct pollfd exited = {.fd = r.helper.child.pidfd, .events = POLLIN};
    assert_int_equal(poll(&exited, 1, 5000), 1);
    got.count = 0;
    assert_int_equal(argv_reader_request(&r, pid, start_time_of(pid), 1), 0);
    wait_answers(&r, 1, 5 * USEC_PER_SEC);
    assert_int_equal(got.a[0].status, ARGV_OK);
    assert_int_not_equal(r.helper.child.pid, first);
    assert_int_equal(r.restarts, 1);
    argv_reader_stop(&r);
    end_child(pid);
    free(bytes);
}

/* A helper past its stall that is runnable is waiting for a CPU (on a
 * busy node, or here with a stall shorter than any read), not held by a
 * read: its answers are taken, nothing is blocked.  (Before, every read
 * that took longer than the stall was ARGV_BLOCKED, its owner's command
 * lines never read again while that process lived.) */
static void test_a_slow_helper_is_not_a_stalled_one(void **state)
{
    (void)state;
    char *bytes, err[256];
    size_t len;
    pid_t pid = start_sleeper(3, 1000, &bytes, &len);
    uint64_t started = start_time_of(pid);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    r.stall_usec = 1;
    got.count = 0;
    for (uint32_t i = 0; i < MAX_ANSWERS; i++)
        assert_int_equal(argv_reader_request(&r, pid, started, i), 0);
    wait_answers(&r, MAX_ANSWERS, 60 * USEC_PER_SEC);
    for (size_t i = 0; i < MAX_ANSWERS; i++) {
        assert_int_equal(got.a[i].tag, i);
        assert_int_equal(got.a[i].status, ARGV_OK);
    }
    assert_int_equal(r.blocked, 0);
    assert_int_equal(r.restarts, 0);
    argv_reader_stop(&r);
    end_child(pid);
    free(bytes);
}

/* ---- a read that never ends ---- */

static struct {
    char mount[128];
    pid_t server;
} trap = {.server = -1};

static bool fuse_mounted(const char *dir)
{
    char line[512];
    FILE *f = fopen("/proc/self/mounts", "r");
    bool found = false;
    while (f && !found && fgets(line, sizeof(line), f))
        found = strstr(line, dir) && strstr(line, "fuse");
    if (f)
        fclose(f);
    return found;
}

static int start_trap(void **state)
{
    (void)state;
    const char *top = getenv("LG_TOP_BUILDDIR");
    char server[512];
    snprintf(server, sizeof(server), "%s/tests/helpers/fuse-trap", top ? top : "..");
    if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0 || access(server, X_OK) != 0)
        return 0; /* skipped in the test itself, saying why */
    snprintf(trap.mount, sizeof(trap.mount), "%s/proc", make_test_dir());
    mkdir(trap.mount, 0755);
    trap.server = fork();
    if (trap.server == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        execl(server, server, trap.mount, (char *)NULL);
        _exit(127);
    }
    for (int tries = 0; tries < 500 && !fuse_mounted(trap.mount); tries++)
        usleep(10 * 1000);
    if (!fuse_mounted(trap.mount)) {
        end_child(trap.server);
        trap.server = -1;
    }
    return 0;
}

static int stop_trap(void **state)
{
    (void)state;
    if (trap.server > 0) {
        kill(trap.server, SIGTERM);
        waitpid(trap.server, NULL, 0);
        umount2(trap.mount, MNT_DETACH);
        remove_test_dir();
    }
    return 0;
}

/* The helper is on process 1's command line, which never comes: after
 * the stall that request and the other one of the same owner are
 * answered ARGV_BLOCKED, the other owner's is read by a new helper, and
 * no poll ever waits longer than it was told to.  Once the filesystem
 * goes away, the killed helper's read ends and it is reaped. */
static void test_stalled_read_is_given_up(void **state)
{
    (void)state;
    if (trap.server < 0) {
        printf("SKIP: needs root, /dev/fuse and helpers/fuse-trap\n");
        skip();
    }
    char err[256];
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, trap.mount, err, sizeof(err)), 0);
    /* The other owner's read goes to a new helper, which must start and
     * be answered by the FUSE server within the stall: on a busy machine
     * that took longer than the daemon's 500 ms (seen in CI), and an
     * honest read taken for a stalled one is not what is tested here. */
    r.stall_usec = 5 * USEC_PER_SEC;
    got.count = 0;
    assert_int_equal(argv_reader_request(&r, 1, 4242, 7), 0); /* never answered */
    assert_int_equal(argv_reader_request(&r, 2, 4242, 7), 0); /* same owner */
    assert_int_equal(argv_reader_request(&r, 2, 4242, 8), 0); /* another owner */
    /* The server never answers the read: a poll that waited on it would
     * wait for ever (the alarm is the hang guard).  The answers coming
     * at all, while the read still hangs, is what shows it never did. */
    uint64_t deadline = now_boottime_usec() + 60 * USEC_PER_SEC;
    alarm(120);
    while (got.count < 3 && now_boottime_usec() < deadline)
        argv_reader_poll(&r, 20 * 1000, keep, NULL);
    alarm(0);
    assert_int_equal(got.count, 3);
    assert_int_equal(got.a[0].pid, 1);
    assert_int_equal(got.a[0].status, ARGV_BLOCKED);
    assert_int_equal(got.a[1].tag, 7);
    assert_int_equal(got.a[1].status, ARGV_BLOCKED);
    assert_int_equal(got.a[2].tag, 8);
    assert_int_equal(got.a[2].status, ARGV_OK);
    assert_int_equal(got.a[2].len, 2);
    assert_memory_equal(got.a[2].argv, "ok", 2);
    assert_int_equal(r.blocked, 2);
    assert_int_equal(r.helper.stuck_count, 1);
    /* The server gone, the held read ends and the helper dies of its
     * SIGKILL. */
    kill(trap.server, SIGKILL);
    waitpid(trap.server, NULL, 0);
    trap.server = -1;
    umount2(trap.mount, MNT_DETACH);
    for (int tries = 0; tries < 500 && r.helper.stuck_count; tries++) {
        argv_reader_poll(&r, 10 * 1000, keep, NULL);
        usleep(10 * 1000);
    }
    assert_int_equal(r.helper.stuck_count, 0);
    argv_reader_stop(&r);
    remove_test_dir();
}

/* The describer (argv_describe.h), which reads the command lines that
 * events and notices show, on the same trap: process 1's never comes,
 * process 2's does.  Process 1 is reported stalled once and marked
 * withheld, and a withheld process is never asked about again. */
static void test_describer_reports_a_stall_and_describes_the_rest(void **state)
{
    (void)state;
    if (trap.server < 0) {
        printf("SKIP: needs root, /dev/fuse and helpers/fuse-trap\n");
        skip();
    }
    char err[256];
    struct argv_describer d;
    assert_int_equal(argv_describer_start(&d, trap.mount, err, sizeof(err)), 0);
    d.reader.stall_usec = 5 * USEC_PER_SEC; /* as in test_stalled_read_is_given_up */
    struct snapshot snap = {0};
    struct proc_sample *never = snapshot_add_proc(&snap);
    never->pid = 1, never->start_time = 4242, never->uid = 7;
    strcpy(never->comm, "fake");
    struct proc_sample *ok = snapshot_add_proc(&snap);
    ok->pid = 2, ok->start_time = 4242, ok->uid = 8;
    size_t both[] = {0, 1};
    alarm(120); /* the hang guard: the wait below ends when both are answered */
    argv_describe(&d, &snap, both, 2, 60 * USEC_PER_SEC);
    alarm(0);
    never = &snap.procs[0], ok = &snap.procs[1];
    assert_non_null(ok->argv);
    assert_int_equal(ok->argv_len, 2);
    assert_memory_equal(ok->argv, "ok", 2);
    assert_null(never->argv);
    assert_true(never->argv_withheld);
    const struct blocked_argv *b;
    assert_int_equal(argv_describer_take_stalled(&d, &b), 1);
    assert_int_equal(b[0].pid, 1);
    assert_int_equal(b[0].start_time, 4242);
    assert_int_equal(b[0].owner, 7);
    assert_string_equal(b[0].comm, "fake");
    /* Withheld: not asked again (an ask would be a second stall). */
    uint64_t blocked = d.reader.blocked;
    argv_describe(&d, &snap, both, 1, 60 * USEC_PER_SEC);
    assert_int_equal(argv_describer_take_stalled(&d, &b), 0);
    assert_int_equal(d.reader.blocked, blocked);
    kill(trap.server, SIGKILL);
    waitpid(trap.server, NULL, 0);
    trap.server = -1;
    umount2(trap.mount, MNT_DETACH);
    for (int tries = 0; tries < 500 && d.reader.helper.stuck_count; tries++) {
        argv_reader_poll(&d.reader, 10 * 1000, keep, NULL);
        usleep(10 * 1000);
    }
    argv_describer_stop(&d);
    snapshot_free(&snap);
    remove_test_dir();
}

static int filled_memfd(size_t bytes)
{
    int fd = memfd_create("lgunit", MFD_CLOEXEC);
    assert_true(fd >= 0);
    char block[4096];
    memset(block, 7, sizeof(block));
    for (size_t done = 0; done < bytes; done += sizeof(block))
        assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
    return fd;
}

/* A file in dir, written with bytes and unlinked: held only by the
 * descriptor returned. */
static int unlinked_file(const char *dir, size_t bytes)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/lgunit-%d", dir, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(unlink(path), 0);
    char block[4096];
    memset(block, 7, sizeof(block));
    for (size_t done = 0; done < bytes; done += sizeof(block))
        assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
    return fd;
}

/* Asks for this process's descriptors from `from`, budget of them. */
static struct shm_fds_reply ask_own_fds(struct argv_reader *r, int from, uint32_t budget)
{
    got.count = 0;
    assert_int_equal(argv_reader_request_fds(r, getpid(), start_time_of(getpid()), 9, from,
                                             budget), 0);
    wait_answers(r, 1, 5 * USEC_PER_SEC);
    assert_int_equal(got.a[0].kind, ARGV_SHM_FDS);
    assert_int_equal(got.a[0].status, ARGV_OK);
    struct shm_fds_reply reply;
    assert_true(got.a[0].len >= SHM_FDS_REPLY_SIZE(0));
    memcpy(&reply, got.a[0].argv, got.a[0].len);
    assert_int_equal(got.a[0].len, SHM_FDS_REPLY_SIZE(reply.count));
    return reply;
}

static const struct shm_fd_object *object_of(const struct shm_fds_reply *reply, int fd)
{
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    for (uint32_t i = 0; i < reply->count; i++)
        if (reply->objects[i].dev == st.st_dev && reply->objects[i].ino == st.st_ino)
            return &reply->objects[i];
    return NULL;
}

/* What a process holds only through descriptors: a memfd (once, though
 * two descriptors hold it) and an unlinked file in /dev/shm come back
 * with what they hold; an empty memfd, an unlinked file on a disk and a
 * file that still has its name do not. */
static void test_shared_memory_held_through_descriptors(void **state)
{
    (void)state;
    char err[256];
    int memfd = filled_memfd(1 << 20);
    int again = dup(memfd);
    int empty = memfd_create("lgunit-empty", MFD_CLOEXEC);
    int shm = unlinked_file("/dev/shm", 64 << 10);
    int disk = unlinked_file(make_test_dir(), 64 << 10);
    char named_path[256];
    snprintf(named_path, sizeof(named_path), "/dev/shm/lgunit-named-%d", (int)getpid());
    int named = open(named_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_int_equal(write(named, err, sizeof(err)), sizeof(err));
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);

    struct shm_fds_reply reply = ask_own_fds(&r, 0, 4096);
    assert_int_equal(reply.next_fd, -1);
    assert_true(reply.looked >= 6);
    assert_int_equal(reply.count, 2);
    const struct shm_fd_object *o = object_of(&reply, memfd);
    assert_non_null(o);
    assert_int_equal(o->bytes, 1 << 20);
    o = object_of(&reply, shm);
    assert_non_null(o);
    assert_int_equal(o->bytes, 64 << 10);
    assert_null(object_of(&reply, empty));
    assert_null(object_of(&reply, disk));
    assert_null(object_of(&reply, named));

    /* One descriptor from the memfd's on: it, and where to go on. */
    reply = ask_own_fds(&r, memfd, 1);
    assert_int_equal(reply.looked, 1);
    assert_int_equal(reply.count, 1);
    assert_non_null(object_of(&reply, memfd));
    assert_true(reply.next_fd > memfd);
    /* From the descriptor after the last one: nothing. */
    int last = named > disk ? named : disk;
    reply = ask_own_fds(&r, last + 1, 4096);
    assert_int_equal(reply.next_fd, -1);
    assert_int_equal(reply.count, 0);

    argv_reader_stop(&r);
    unlink(named_path);
    close(named);
    close(disk);
    close(shm);
    close(empty);
    close(again);
    close(memfd);
    remove_test_dir();
}

/* A descriptor whose link reads as an unlinked file's, on a FUSE
 * filesystem that never answers for its attributes: the look at this
 * process's descriptors asks that filesystem nothing, and comes back
 * at once with nothing found. */
static void test_descriptor_on_a_silent_fuse_file_asks_nothing(void **state)
{
    (void)state;
    if (trap.server < 0) {
        printf("SKIP: needs root, /dev/fuse and helpers/fuse-trap\n");
        skip();
    }
    char path[300], err[256];
    snprintf(path, sizeof(path), "%s/held (deleted)", trap.mount);
    alarm(120); /* the hang guard: a stat of it would wait for ever */
    int held = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(held >= 0);
    struct argv_reader r;
    assert_int_equal(argv_reader_start(&r, "/proc", err, sizeof(err)), 0);
    struct shm_fds_reply reply = ask_own_fds(&r, held, 1);
    alarm(0);
    assert_int_equal(reply.looked, 1);
    assert_int_equal(reply.count, 0);
    assert_int_equal(r.blocked, 0);
    argv_reader_stop(&r);
    /* Its close asks the server (a flush), which is gone by then. */
    kill(trap.server, SIGKILL);
    waitpid(trap.server, NULL, 0);
    trap.server = -1;
    umount2(trap.mount, MNT_DETACH);
    close(held);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_command_line),
        cmocka_unit_test(test_long_command_line_is_cut),
        cmocka_unit_test(test_other_or_no_process_is_gone),
        cmocka_unit_test(test_dead_helper_is_replaced),
        cmocka_unit_test(test_a_slow_helper_is_not_a_stalled_one),
        cmocka_unit_test(test_shared_memory_held_through_descriptors),
        cmocka_unit_test_setup_teardown(test_descriptor_on_a_silent_fuse_file_asks_nothing,
                                        start_trap, stop_trap),
        cmocka_unit_test_setup_teardown(test_stalled_read_is_given_up, start_trap, stop_trap),
        cmocka_unit_test_setup_teardown(test_describer_reports_a_stall_and_describes_the_rest,
                                        start_trap, stop_trap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
