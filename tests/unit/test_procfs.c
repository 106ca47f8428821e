#include "config.h"

#include "observe/procfs.h"
#include "observe/sampler.h"
#include "testutil.h"

/* A /proc/PID/stat line as the kernel writes it, around a given comm. */
static size_t stat_line(char *buf, size_t len, int pid, const char *comm, size_t comm_len)
{
    char head[32];
    int h = snprintf(head, sizeof(head), "%d (", pid);
    const char *tail = ") S 100 200 300 34816 400 4194560 123 0 0 0 "
                       "1500 250 0 0 20 0 3 0 987654 123456789 4321 "
                       "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
    size_t n = 0;
    memcpy(buf, head, (size_t)h);
    n += (size_t)h;
    memcpy(buf + n, comm, comm_len);
    n += comm_len;
    size_t t = strlen(tail);
    assert_true(n + t < len);
    memcpy(buf + n, tail, t);
    return n + t;
}

static void check(const char *comm, size_t comm_len, const char *expected_comm)
{
    char buf[1024];
    size_t n = stat_line(buf, sizeof(buf), 4242, comm, comm_len);
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(buf, n, &st), 0);
    assert_int_equal(st.pid, 4242);
    assert_memory_equal(st.comm, expected_comm, strlen(expected_comm) + 1);
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 100);
    assert_int_equal(st.session, 300);
    assert_int_equal(st.utime, 1500);
    assert_int_equal(st.stime, 250);
    assert_int_equal(st.num_threads, 3);
    assert_int_equal(st.start_time, 987654);
    assert_int_equal(st.rss_pages, 4321);
}

static void test_plain(void **state)
{
    (void)state;
    check("bash", 4, "bash");
}

static void test_hostile_names(void **state)
{
    (void)state;
    check("a) R 1 2 (", 10, "a) R 1 2 (");
    check("my prog", 7, "my prog");
    check("two\nlines", 9, "two\nlines");
    check("))))", 4, "))))");
    check("((((", 4, "((((");
    check(") 0 0 0 0", 9, ") 0 0 0 0");
    check("", 0, "");
    check("fifteen_bytes_x", 15, "fifteen_bytes_x");
    check("\xff\xfe\x01", 3, "\xff\xfe\x01");
}

static void test_rejects_garbage(void **state)
{
    (void)state;
    struct proc_stat st;
    const char *bad[] = {
        "",
        "4242",
        "4242 (bash",
        "4242 (bash) S",
        "4242 (bash) S 1 2 3",
        "x (bash) S 100 200 300 34816 400 4194560 123 0 0 0 1 2 0 0 20 0 3 0 9 1 2\n",
        "4242 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 1x 2 0 0 20 0 3 0 9 1 2\n",
        "-1 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 1 2 0 0 20 0 3 0 9 1 2\n",
        "0 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 1 2 0 0 20 0 3 0 9 1 2\n",
        /* Numbers that fit no field: not cut down to one that does. */
        "4294971538 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 1 2 0 0 20 0 3 0 9 1 2\n",
        "4242 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 18446744073709551617 2 0 0 20 0 "
        "3 0 9 1 2\n",
        "4242 (bash) S 100 200 300 34816 400 4194560 123 0 0 0 -9223372036854775808 2 0 0 20 0 "
        "3 0 9 1 2\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(procfs_parse_stat(bad[i], strlen(bad[i]), &st), -1);
}

static void test_real_self(void **state)
{
    (void)state;
    int fd = open("/proc/self/stat", O_RDONLY);
    assert_true(fd >= 0);
    char buf[1024];
    ssize_t n = procfs_pread(fd, buf, sizeof(buf));
    assert_true(n > 0);
    struct proc_stat st;
    assert_int_equal(procfs_parse_stat(buf, (size_t)n, &st), 0);
    assert_int_equal(st.pid, getpid());
    /* A second pread of the held descriptor reads it afresh. */
    assert_true(procfs_pread(fd, buf, sizeof(buf)) > 0);
    close(fd);
}

static void test_memory_pressure(void **state)
{
    (void)state;
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s", write_file("memory",
             "some avg10=12.50 avg60=3.00 avg300=1.00 total=123456\n"
             "full avg10=2.00 avg60=1.00 avg300=0.50 total=23456\n"));
    assert_true(sampler_memory_pressure(path) == 12.5);
    snprintf(path, sizeof(path), "%s", write_file("garbage", "full avg10=2.00\n"));
    assert_true(sampler_memory_pressure(path) < 0);
    assert_true(sampler_memory_pressure("/nonexistent/pressure/memory") < 0);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_rejects_garbage),
        cmocka_unit_test(test_real_self),
        cmocka_unit_test(test_memory_pressure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
