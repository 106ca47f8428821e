#include "config.h"

#include <errno.h>
#include <sys/socket.h>

#include "enforce/systemd_backend.h"
#include "testutil.h"

static char why[512];

static void test_slice_name(void **state)
{
    (void)state;
    char buf[64];
    systemd_slice_name(1001, buf, sizeof(buf));
    assert_string_equal(buf, "user-1001.slice");
    systemd_slice_name(0, buf, sizeof(buf));
    assert_string_equal(buf, "user-0.slice");
    systemd_slice_name(4294967294U, buf, sizeof(buf));
    assert_string_equal(buf, "user-4294967294.slice");
    char small[8];
    systemd_slice_name(1001, small, sizeof(small));
    assert_string_equal(small, "user-10");
}

/* The tests run where systemd is not PID 1: sd_booted() looks for
 * /run/systemd/system, which only a systemd-booted machine has. */
static void test_not_available_here(void **state)
{
    (void)state;
    if (access("/run/systemd/system", F_OK) == 0)
        skip();
    struct environment env;
    environment_host(&env);
    assert_false(systemd_booted("/run/" SYSTEMD_RUNTIME_DIR));
    assert_false(systemd_backend_available(&env));
}

/* sd_booted(3)'s test, done without libsystemd: a directory, and only a
 * directory, says systemd is running. */
static void test_booted(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/system/", make_test_dir());
    assert_false(systemd_booted(dir));
    write_file("system", "");
    assert_false(systemd_booted(dir));
    dir[strlen(dir) - 1] = '\0';
    assert_false(systemd_booted(dir)); /* a file, not a directory */
    assert_int_equal(unlink(dir), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_true(systemd_booted(dir));
    strcat(dir, "/");
    assert_true(systemd_booted(dir));
    remove_test_dir();
}

/* A node without libsystemd0: the error says which library and which
 * package, and what else to do. */
static void test_library_missing(void **state)
{
    (void)state;
    struct libsystemd sd;
    why[0] = '\0';
    assert_int_equal(systemd_library_open(&sd, "libloginguard-absent.so.0", why, sizeof(why)),
                     -1);
    assert_null(sd.handle);
    assert_non_null(strstr(why, "libloginguard-absent.so.0"));
#ifdef HAVE_SYSTEMD
    assert_non_null(strstr(why, "install the " LIBSYSTEMD_PACKAGE " package"));
#endif
    assert_non_null(strstr(why, "backend = cgroupfs"));
    systemd_library_close(&sd);   /* harmless when not loaded */
}

static void test_user_slice_unified(void **state)
{
    (void)state;
    const char *root = make_test_dir();
    /* An empty root, then v1/hybrid-like (user.slice but no
     * cgroup.controllers), then v2 without user.slice, then both. */
    assert_false(systemd_user_slice_unified(root));
    char path[256];
    snprintf(path, sizeof(path), "%s/user.slice", root);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_false(systemd_user_slice_unified(root));
    assert_int_equal(rmdir(path), 0);
    write_file("cgroup.controllers", "cpu io memory pids\n");
    assert_false(systemd_user_slice_unified(root));
    write_file("user.slice", "");
    assert_false(systemd_user_slice_unified(root)); /* a file, not a directory */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_true(systemd_user_slice_unified(root));
    assert_false(systemd_user_slice_unified("/nonexistent/cgroup"));
    remove_test_dir();
}

#ifdef HAVE_SYSTEMD

/* A bus object to build messages on, with no systemd and no D-Bus daemon.
 * In libsystemd 252 sd_bus_message_new_method_call() and
 * sd_bus_message_new() both refuse a bus fresh from sd_bus_new() with
 * -ENOTCONN (it is still in its "unset" state), and refuse a NULL bus too.
 * Giving the bus one end of a socketpair and starting it moves it on to
 * authenticating: messages can then be built, and as nothing calls
 * sd_bus_call() on it nothing is ever sent. */
struct offline_bus {
    sd_bus *bus;
    int peer;   /* the other end, closed to make calls fail */
};

/* The daemon's way in: libsystemd loaded with dlopen (here the same copy
 * the test links), every function found. */
static void load_library(struct libsystemd *sd)
{
    why[0] = '\0';
    assert_int_equal(systemd_library_open(sd, LIBSYSTEMD_SONAME, why, sizeof(why)), 0);
    assert_non_null(sd->handle);
    assert_non_null(sd->bus_open_system);
    assert_non_null(sd->error_free);
}

static void offline_bus_open(struct offline_bus *o)
{
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    assert_int_equal(sd_bus_new(&o->bus), 0);
    assert_int_equal(sd_bus_set_fd(o->bus, sv[0], sv[0]), 0);
    assert_true(sd_bus_start(o->bus) >= 0);
    o->peer = sv[1];
}

static void offline_bus_close(struct offline_bus *o)
{
    sd_bus_close_unref(o->bus);
    if (o->peer >= 0)
        close(o->peer);
}

struct expected {
    uint64_t cpu_quota, memory_high, memory_max, tasks_max;
};

/* Read one a(sv) entry of type t into *value; fails the test otherwise. */
static void read_property(sd_bus_message *m, const char **name, uint64_t *value)
{
    assert_true(sd_bus_message_enter_container(m, 'r', "sv") > 0);
    assert_true(sd_bus_message_read(m, "s", name) > 0);
    assert_true(sd_bus_message_enter_container(m, 'v', "t") > 0);
    assert_true(sd_bus_message_read(m, "t", value) > 0);
    assert_true(sd_bus_message_exit_container(m) >= 0);
    assert_true(sd_bus_message_exit_container(m) >= 0);
}

/* Build the call as systemd_backend_apply does, seal it as sending would,
 * and read back everything systemd would see. */
static void check_call(uid_t uid, const struct limits *l, const char *slice,
                       const struct expected *want)
{
    struct offline_bus o;
    offline_bus_open(&o);
    struct libsystemd sd;
    load_library(&sd);
    sd_bus_message *m = NULL;
    assert_int_equal(systemd_build_call(&sd, o.bus, uid, l, &m), 0);
    assert_non_null(m);
    assert_int_equal(sd_bus_message_seal(m, 1, 0), 0);
    assert_true(sd_bus_message_rewind(m, true) >= 0);

    assert_string_equal(sd_bus_message_get_destination(m), "org.freedesktop.systemd1");
    assert_string_equal(sd_bus_message_get_path(m), "/org/freedesktop/systemd1");
    assert_string_equal(sd_bus_message_get_interface(m), "org.freedesktop.systemd1.Manager");
    assert_string_equal(sd_bus_message_get_member(m), "SetUnitProperties");
    assert_string_equal(sd_bus_message_get_signature(m, true), "sba(sv)");

    const char *unit = NULL;
    int runtime = 0;
    assert_true(sd_bus_message_read(m, "sb", &unit, &runtime) > 0);
    assert_string_equal(unit, slice);
    assert_true(runtime);

    /* Every property exactly once, nothing else. */
    bool seen[4] = {false, false, false, false};
    assert_true(sd_bus_message_enter_container(m, 'a', "(sv)") > 0);
    for (int i = 0; i < 4; i++) {
        const char *name = NULL;
        uint64_t value = 0;
        read_property(m, &name, &value);
        int k = -1;
        uint64_t expect = 0;
        if (strcmp(name, "CPUQuotaPerSecUSec") == 0)
            k = 0, expect = want->cpu_quota;
        else if (strcmp(name, "MemoryHigh") == 0)
            k = 1, expect = want->memory_high;
        else if (strcmp(name, "MemoryMax") == 0)
            k = 2, expect = want->memory_max;
        else if (strcmp(name, "TasksMax") == 0)
            k = 3, expect = want->tasks_max;
        else
            fail_msg("unexpected property %s", name);
        assert_false(seen[k]);
        seen[k] = true;
        if (value != expect)
            fail_msg("%s = %llu, want %llu", name, (unsigned long long)value,
                     (unsigned long long)expect);
    }
    assert_true(sd_bus_message_at_end(m, false) > 0);   /* no fifth property */
    assert_true(sd_bus_message_exit_container(m) >= 0);
    assert_true(sd_bus_message_at_end(m, true) > 0);    /* no more arguments */

    sd_bus_message_unref(m);
    offline_bus_close(&o);
    systemd_library_close(&sd);
}

static void test_call_with_limits(void **state)
{
    (void)state;
    struct limits l = {.cpu = 1.5, .memory = 4ULL << 30, .tasks = 512};
    struct expected want = {.cpu_quota = 1500000, .memory_high = 3865470566ULL,
                            .memory_max = 4294967296ULL, .tasks_max = 512};
    check_call(1001, &l, "user-1001.slice", &want);
}

static void test_call_without_limits(void **state)
{
    (void)state;
    struct limits l = {0};
    struct expected want = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX};
    check_call(1001, &l, "user-1001.slice", &want);
}

/* Values systemd would refuse (0 is "out of range" for CPUQuotaPerSecUSec
 * and MemoryHigh) become the smallest it takes, and one field set alone
 * leaves the others infinite. */
static void test_call_edges(void **state)
{
    (void)state;
    struct limits l = {.cpu = 1e-9, .memory = 1, .tasks = 0};
    struct expected want = {1, 1, 1, UINT64_MAX};
    check_call(0, &l, "user-0.slice", &want);

    struct limits big = {.cpu = 0.25, .memory = UINT64_MAX - 1, .tasks = 1};
    struct expected want_big = {250000, 16602069666338596452ULL, UINT64_MAX - 1, 1};
    check_call(60000, &big, "user-60000.slice", &want_big);
}

static void test_apply_not_open(void **state)
{
    (void)state;
    struct systemd_backend b = {.bus = NULL};
    struct limits l = {.cpu = 1};
    assert_int_equal(systemd_backend_apply(&b, 1001, &l, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "user-1001.slice"));
    assert_non_null(strstr(why, "not connected"));
    systemd_backend_close(&b);   /* harmless when closed */
    assert_null(b.bus);
}

/* With its peer gone the call cannot be delivered: apply must say which
 * slice and why, and free what it built (valgrind checks that). */
static void test_apply_fails_without_peer(void **state)
{
    (void)state;
    struct offline_bus o;
    offline_bus_open(&o);
    close(o.peer);
    o.peer = -1;
    struct systemd_backend b = {.bus = o.bus};
    load_library(&b.sd);
    struct limits l = {.cpu = 2, .memory = 1ULL << 30, .tasks = 100};
    why[0] = '\0';
    assert_int_equal(systemd_backend_apply(&b, 1001, &l, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "SetUnitProperties on user-1001.slice failed: "));
    systemd_backend_close(&b);
    assert_null(b.bus);
    assert_null(b.sd.handle);
}

#else /* !HAVE_SYSTEMD */

static void test_without_libsystemd(void **state)
{
    (void)state;
    struct systemd_backend b;
    struct limits l = {.cpu = 1};
    struct environment env;
    environment_host(&env);
    assert_false(systemd_backend_available(&env));
    assert_int_equal(systemd_backend_open(&b, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "built without libsystemd"));
    assert_null(b.bus);
    why[0] = '\0';
    assert_int_equal(systemd_backend_apply(&b, 1001, &l, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "built without libsystemd"));
    sd_bus_message *m = (sd_bus_message *)&b;
    assert_int_equal(systemd_build_call(NULL, NULL, 1001, &l, &m), -ENOSYS);
    assert_null(m);
    systemd_backend_close(&b);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slice_name),
        cmocka_unit_test(test_not_available_here),
        cmocka_unit_test(test_user_slice_unified),
        cmocka_unit_test(test_booted),
        cmocka_unit_test(test_library_missing),
#ifdef HAVE_SYSTEMD
        cmocka_unit_test(test_call_with_limits),
        cmocka_unit_test(test_call_without_limits),
        cmocka_unit_test(test_call_edges),
        cmocka_unit_test(test_apply_not_open),
        cmocka_unit_test(test_apply_fails_without_peer),
#else
        cmocka_unit_test(test_without_libsystemd),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
