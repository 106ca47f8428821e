/* Reading /etc/subuid where the environment says it is: a file in a
 * temporary directory, read, re-read only when it changes, and gone. */
#include "config.h"

#include "base/environment.h"
#include "observe/subuid.h"
#include "testutil.h"

static struct environment env;
static char subuid_path[256];

static int setup(void **state)
{
    (void)state;
    make_test_dir();
    environment_host(&env);
    snprintf(subuid_path, sizeof(subuid_path), "%s/etc/subuid", test_dir);
    env.subuid = subuid_path;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove_test_dir();
    return 0;
}

static void test_missing_is_no_ranges(void **state)
{
    (void)state;
    struct subuid_map m = {0};
    assert_int_equal(subuid_refresh(&m, env.subuid), 0);
    assert_false(m.present);
    assert_int_equal(m.count, 0);
    assert_int_equal(subuid_owner(&m, 100005), 100005);
    subuid_free(&m);
}

static void test_read_and_changed(void **state)
{
    (void)state;
    struct subuid_map m = {0};
    write_file("etc/subuid", "1001:100000:65536\n"
                             "# a comment\n"
                             "root:200000:10\n"
                             "nonsense\n"
                             "1002:100100:5\n");
    assert_int_equal(subuid_refresh(&m, env.subuid), 1);
    assert_true(m.present);
    assert_int_equal(m.count, 2);
    assert_int_equal(m.skipped, 2); /* the nonsense, and the range inside 1001's */
    assert_int_equal(subuid_owner(&m, 100005), 1001);
    assert_int_equal(subuid_owner(&m, 200003), 0);
    assert_int_equal(subuid_owner(&m, 99999), 99999);
    assert_int_equal(subuid_owner(&m, 165536), 165536);

    /* Unchanged: not read again. */
    assert_int_equal(subuid_refresh(&m, env.subuid), 0);
    assert_int_equal(m.count, 2);

    /* Changed (another size, so whatever the clock's grain). */
    write_file("etc/subuid", "1003:300000:1000\n");
    assert_int_equal(subuid_refresh(&m, env.subuid), 1);
    assert_int_equal(m.count, 1);
    assert_int_equal(subuid_owner(&m, 300999), 1003);
    assert_int_equal(subuid_owner(&m, 100005), 100005);

    /* Gone: no ranges, said once. */
    assert_int_equal(unlink(env.subuid), 0);
    assert_int_equal(subuid_refresh(&m, env.subuid), 1);
    assert_false(m.present);
    assert_int_equal(m.count, 0);
    assert_int_equal(subuid_refresh(&m, env.subuid), 0);
    subuid_free(&m);
}

/* A symbolic link at the path is not followed. */
static void test_link_not_followed(void **state)
{
    (void)state;
    struct subuid_map m = {0};
    const char *real = write_file("elsewhere", "1001:100000:65536\n");
    write_file("etc/placeholder", "");
    assert_int_equal(symlink(real, env.subuid), 0);
    assert_int_equal(subuid_refresh(&m, env.subuid), 0);
    assert_false(m.present);
    assert_int_equal(subuid_owner(&m, 100005), 100005);
    subuid_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_missing_is_no_ranges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_and_changed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_not_followed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
