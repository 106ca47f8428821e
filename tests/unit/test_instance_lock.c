#include "config.h"

#include <sys/sysmacros.h>

#include "base/instance_lock.h"
#include "testutil.h"

/* The holder of an flock, as /proc/locks lists it. */
static void test_holder_from_proc_locks(void **state)
{
    (void)state;
    static const char text[] =
        "1: POSIX  ADVISORY  WRITE 111 00:1f:777 0 EOF\n"
        "2: FLOCK  ADVISORY  WRITE 222 08:01:777 0 EOF\n"
        "3: FLOCK  ADVISORY  WRITE 333 00:1f:777 0 EOF\n"
        "3: -> FLOCK  ADVISORY  WRITE 444 00:1f:777 0 EOF\n"
        "garbage line\n";
    assert_int_equal(instance_lock_holder(text, sizeof(text) - 1, makedev(0, 0x1f), 777), 333);
    assert_int_equal(instance_lock_holder(text, sizeof(text) - 1, makedev(8, 1), 777), 222);
    assert_int_equal(instance_lock_holder(text, sizeof(text) - 1, makedev(8, 1), 778), 0);
    assert_int_equal(instance_lock_holder("", 0, makedev(8, 1), 777), 0);
    /* A pid that fits no pid_t names nobody (not pid 333, nor -1). */
    static const char big[] = "1: FLOCK  ADVISORY  WRITE 4294967629 00:1f:777 0 EOF\n"
                              "2: FLOCK  ADVISORY  WRITE 99999999999999999999 00:1f:777 0 EOF\n";
    assert_int_equal(instance_lock_holder(big, sizeof(big) - 1, makedev(0, 0x1f), 777), 0);
}

/* A second lock on the same directory fails and names the first's pid. */
static void test_second_lock_names_the_first(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char err[512] = "";
    int fd = instance_lock("/proc", dir, "state directory", err, sizeof(err));
    assert_true(fd >= 0);
    assert_int_equal(instance_lock("/proc", dir, "state directory", err, sizeof(err)), -1);
    char pid[32];
    snprintf(pid, sizeof(pid), "(pid %d)", (int)getpid());
    assert_non_null(strstr(err, pid));
    assert_non_null(strstr(err, dir));
    close(fd);
    fd = instance_lock("/proc", dir, "state directory", err, sizeof(err));
    assert_true(fd >= 0);
    close(fd);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holder_from_proc_locks),
        cmocka_unit_test(test_second_lock_names_the_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
