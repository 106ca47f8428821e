/* The cgroupfs backend's cgroup v2 path against a fake cgroup2 tree in a
 * temp directory.  It stands in for the kernel because this test host is
 * a v1 hybrid: its cgroup2 mount has no cpu, memory or pids controller
 * (test_cgroupfs_v2_live uses that mount for what it can show).  The
 * fake's mkdir fills a new cgroup with the interface files the kernel
 * would give it, from its parent's cgroup.subtree_control, so a
 * controller that was not enabled has no files, as on a real host. */
#include "config.h"

#include <dirent.h>
#include <errno.h>

#include "enforce/cgroup_mode.h"
#include "enforce/cgroup_release.h"
#include "enforce/cgroupfs.h"
#include "enforce/cgroupfs_v2.h"
#include "fake_cgroup2.h"
#include "observe/cgroup_counters.h"
#include "testutil.h"
#include "util.h"

#define UID 1001

static int setup(void **state)
{
    (void)state;
    make_test_dir();
    snprintf(root, sizeof(root), "%s/root", test_dir);
    mkdir(root, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove_test_dir();
    return 0;
}

static void test_relative_parent_moves_daemon_and_enables_controllers(void **state)
{
    (void)state;
    make_own("/svc", "cpuset cpu io memory hugetlb pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "loginguard", 4242, &fake_ops, err,
                               sizeof(err)), 0);
    assert_string_equal(c.warning, "");
    /* The daemon left its cgroup for a leaf before the cgroup gave
     * controllers to its children. */
    assert_string_equal(slurp("svc/supervisor/cgroup.procs"), "4242");
    assert_string_equal(slurp("svc/cgroup.subtree_control"), "+cpu +memory +pids");
    assert_string_equal(slurp("svc/loginguard/cgroup.subtree_control"), "+cpu +memory +pids");
    char want[256];
    snprintf(want, sizeof(want), "%s/svc/loginguard", root);
    assert_string_equal(c.parent_dir, want);
    cgv2_close(&c);
}

static void test_limits_written_and_undone(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "lg", 4242, &fake_ops, err, sizeof(err)), 0);
    struct limits l = {.cpu = 1.5, .memory = 2147483648ULL, .tasks = 100};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_string_equal(slurp("svc/lg/user-1001/cpu.max"), "150000 100000");
    assert_string_equal(slurp("svc/lg/user-1001/memory.max"), "2147483648");
    assert_string_equal(slurp("svc/lg/user-1001/memory.high"), "1932735283");
    assert_string_equal(slurp("svc/lg/user-1001/pids.max"), "100");
    /* A share too small for the kernel's 1 ms minimum is still a limit. */
    l = (struct limits){.cpu = 0.001};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_string_equal(slurp("svc/lg/user-1001/cpu.max"), "1000 100000");
    /* Undo: no limit is "max" in every file. */
    l = (struct limits){0};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_string_equal(slurp("svc/lg/user-1001/cpu.max"), "max 100000");
    assert_string_equal(slurp("svc/lg/user-1001/memory.max"), "max");
    assert_string_equal(slurp("svc/lg/user-1001/memory.high"), "max");
    assert_string_equal(slurp("svc/lg/user-1001/pids.max"), "max");
    /* A process is moved by its pid in cgroup.procs. */
    assert_int_equal(cgv2_attach(&c, UID, 777, err, sizeof(err)), 0);
    assert_string_equal(slurp("svc/lg/user-1001/cgroup.procs"), "777");
    cgv2_close(&c);
}

static void test_missing_controller_said_and_others_applied(void **state)
{
    (void)state;
    make_own("/svc", "cpu pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "lg", 4242, &fake_ops, err, sizeof(err)), 0);
    assert_non_null(strstr(c.warning, "memory not in "));
    assert_non_null(strstr(c.warning, "/svc/cgroup.controllers"));
    assert_null(strstr(c.warning, "cpu"));
    assert_string_equal(slurp("svc/cgroup.subtree_control"), "+cpu +pids");
    struct limits l = {.cpu = 2, .memory = 1 << 30, .tasks = 50};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_string_equal(slurp("svc/lg/user-1001/cpu.max"), "200000 100000");
    assert_string_equal(slurp("svc/lg/user-1001/pids.max"), "50");
    assert_false(exists("svc/lg/user-1001/memory.max"));
    cgv2_close(&c);
}

static void test_empty_cgroup_removed_populated_kept(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "lg", 4242, &fake_ops, err, sizeof(err)), 0);
    struct limits l = {0};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_int_equal(cgv2_apply(&c, UID + 1, &l, err, sizeof(err)), 0);
    write_file("root/svc/lg/user-1001/cgroup.events", "populated 1\nfrozen 0\n");
    assert_int_equal(cgv2_remove_if_empty(&c, UID), 0);
    assert_true(exists("svc/lg/user-1001"));
    assert_int_equal(cgv2_remove_if_empty(&c, UID + 1), 1);
    assert_false(exists("svc/lg/user-1002"));
    /* Once gone it counts as removed: nothing is left to keep. */
    assert_int_equal(cgv2_remove_if_empty(&c, UID + 1), 1);
    cgv2_close(&c);
}

static void test_absolute_parent_from_root_writes_only_what_is_missing(void **state)
{
    (void)state;
    make_own("", "cpu memory pids");
    /* As systemd leaves the root: the controllers already given. */
    write_file("root/cgroup.subtree_control", "cpu memory pids\n");
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "/lg/users", 4242, &fake_ops, err,
                               sizeof(err)), 0);
    assert_string_equal(slurp("cgroup.subtree_control"), "cpu memory pids\n");
    assert_string_equal(slurp("lg/cgroup.subtree_control"), "+cpu +memory +pids");
    assert_string_equal(slurp("lg/users/cgroup.subtree_control"), "+cpu +memory +pids");
    /* The daemon stays where it is: its cgroup is no ancestor. */
    assert_false(exists("svc/supervisor"));
    cgv2_close(&c);
}

static void test_daemon_in_root_cgroup_stays(void **state)
{
    (void)state;
    make_own("", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/", "lg", 4242, &fake_ops, err, sizeof(err)), 0);
    /* The root may hold processes and still give controllers. */
    assert_false(exists("supervisor"));
    assert_string_equal(slurp("lg/cgroup.subtree_control"), "+cpu +memory +pids");
    cgv2_close(&c);
}

static void test_relative_parent_in_systemd_unit_is_refused(void **state)
{
    (void)state;
    make_own("/system.slice/loginguard.service", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    /* Stopping the unit would end every user's processes below it. */
    assert_int_equal(cgv2_open(&c, root, "/system.slice/loginguard.service", "loginguard", 4242,
                               &fake_ops, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "loginguard.service"));
    assert_non_null(strstr(err, "absolute cgroup_parent"));
    assert_false(exists("system.slice/loginguard.service/supervisor"));
    assert_false(exists("system.slice/loginguard.service/loginguard"));
    cgv2_close(&c);
}

static void test_reopen_from_the_supervisor_leaf_keeps_the_parent(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "loginguard", 4242, &fake_ops, err,
                               sizeof(err)), 0);
    cgv2_close(&c);
    /* A reload back into enforce mode: the daemon is in svc/supervisor now. */
    assert_int_equal(cgv2_open(&c, root, "/svc/supervisor", "loginguard", 4242, &fake_ops, err,
                               sizeof(err)), 0);
    char want[256];
    snprintf(want, sizeof(want), "%s/svc/loginguard", root);
    assert_string_equal(c.parent_dir, want);
    assert_false(exists("svc/supervisor/supervisor"));
    cgv2_close(&c);
}

static void test_missing_own_cgroup_is_named(void **state)
{
    (void)state;
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/gone", "lg", 4242, &fake_ops, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/root/gone"));
    assert_non_null(strstr(err, "No such file"));
    cgv2_close(&c);
}

/* The sampler reads the one v2 directory, with cpu.stat's usage_usec. */
static void test_counters_from_the_parent(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs cg = {.version = 2};
    char err[512] = "";
    assert_int_equal(cgv2_open(&cg.v2, root, "/svc", "lg", 4242, &fake_ops, err, sizeof(err)),
                     0);
    struct limits l = {0};
    assert_int_equal(cgv2_apply(&cg.v2, UID, &l, err, sizeof(err)), 0);
    write_file("root/svc/lg/user-1001/cpu.stat", "usage_usec 5000000\nuser_usec 1\n");
    struct counter_roots roots;
    cgroupfs_counter_roots(&cg, &roots);
    assert_int_equal(roots.version, 2);
    assert_string_equal(roots.cpu, cg.v2.parent_dir);
    assert_string_equal(roots.cgroup_path, "/svc/lg");
    assert_null(roots.memory);
    assert_null(roots.pids);
    struct user_counters uc;
    assert_int_equal(counters_open(&uc, &roots), 0);
    counters_discover(&uc);
    assert_int_equal(uc.count, 1);
    assert_int_equal(uc.groups[0].uid, UID);
    struct user_usage use;
    assert_int_equal(counters_read(&uc, &uc.groups[0], &use), 0);
    assert_int_equal(use.cpu_usec, 5000000);
    counters_close(&uc);
    cgv2_close(&cg.v2);
}

/* This host's layout (hybrid), a pure v2 host's, and neither. */
static void test_mode_from_mountinfo(void **state)
{
    (void)state;
    static const char hybrid[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
        "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,name=systemd\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    static const char pure[] =
        "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
        "27 23 0:25 / /sys/fs/cgroup rw,nosuid,nodev shared:4 - cgroup2 cgroup2 "
        "rw,nsdelegate,memory_recursiveprot\n";
    static const char neither[] = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n";
    char mount[256] = "";
    FILE *f = fmemopen((void *)hybrid, sizeof(hybrid) - 1, "r");
    assert_int_equal(cgroup_mode_parse(f, mount, sizeof(mount)), CGROUP_MODE_V1);
    fclose(f);
    /* The v2 mount is still found, for what it can do without controllers. */
    assert_string_equal(mount, "/sys/fs/cgroup/unified");
    f = fmemopen((void *)pure, sizeof(pure) - 1, "r");
    assert_int_equal(cgroup_mode_parse(f, mount, sizeof(mount)), CGROUP_MODE_V2);
    fclose(f);
    assert_string_equal(mount, "/sys/fs/cgroup");
    f = fmemopen((void *)neither, sizeof(neither) - 1, "r");
    assert_int_equal(cgroup_mode_parse(f, mount, sizeof(mount)), CGROUP_MODE_NONE);
    fclose(f);
}

static void test_own_v2_path(void **state)
{
    (void)state;
    char buf[256];
    const char *p = write_file("cgroup", "4:memory:/x\n1:cpu:/\n0::/system.slice/lg.service\n");
    assert_int_equal(cgroup_own_v2_path(p, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "/system.slice/lg.service");
    p = write_file("cgroup-v1", "4:memory:/x\n1:cpu:/\n");
    assert_int_equal(cgroup_own_v2_path(p, buf, sizeof(buf)), -1);
}

/* The kernel refuses to remove a cgroup that holds a process; the fake's
 * cgroup.procs is a plain file that no write empties. */
static int busy_remove(int dirfd, const char *name)
{
    char file[128], text[64] = "";
    snprintf(file, sizeof(file), "%s/cgroup.procs", name);
    int fd = openat(dirfd, file, O_RDONLY);
    if (fd >= 0) {
        ssize_t n = read(fd, text, sizeof(text) - 1);
        text[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    if (text[0]) {
        errno = EBUSY;
        return -1;
    }
    return fake_remove(dirfd, name);
}

static const struct cgv2_dirops busy_ops = {fake_make, busy_remove};

static void test_release_moves_up_and_removes_all(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "lg", 4242, &busy_ops, err, sizeof(err)), 0);
    struct limits l = {0};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    assert_int_equal(cgv2_release_user(&c, UID, err, sizeof(err)), 0);
    assert_false(exists("svc/lg/user-1001"));
    /* Gone already counts as released. */
    assert_int_equal(cgv2_release_user(&c, UID, err, sizeof(err)), 0);
    assert_int_equal(cgv2_release_parent(&c, err, sizeof(err)), 0);
    assert_false(exists("svc/lg"));
    assert_true(exists("svc/supervisor"));
    cgv2_close(&c);
}

static void test_release_gives_up_after_bounded_rounds(void **state)
{
    (void)state;
    make_own("/svc", "cpu memory pids");
    struct cgroupfs_v2 c;
    char err[512] = "";
    assert_int_equal(cgv2_open(&c, root, "/svc", "lg", 4242, &busy_ops, err, sizeof(err)), 0);
    struct limits l = {0};
    assert_int_equal(cgv2_apply(&c, UID, &l, err, sizeof(err)), 0);
    write_file("root/svc/lg/user-1001/cgroup.procs", "17\n");
    assert_int_equal(cgv2_release_user(&c, UID, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "kept "));
    assert_non_null(strstr(err, "/svc/lg/user-1001: Device or resource busy after 200 rounds "
                                "that moved 200 processes out of it into "));
    /* Each round moved it into the cgroup above the parent (written over
     * the start of the fake file, which held "4242\n"). */
    assert_string_equal(slurp("svc/cgroup.procs"), "1742\n");
    assert_true(exists("svc/lg/user-1001"));
    /* The parent still holds the user's cgroup: it stays, and says so. */
    assert_int_equal(cgv2_release_parent(&c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/svc/lg: "));
    assert_true(exists("svc/lg"));
    cgv2_close(&c);
}

/* cgroup.procs of a hostile user's group is read as untrusted text:
 * whatever is not a pid is skipped. */
static void test_move_reads_only_pids(void **state)
{
    (void)state;
    mkdir(root, 0755);
    write_file("root/cgroup.procs", "12\nabc\n99999999999999999999\n-5\n0\n\n7\n8x\n3");
    char dest[256];
    snprintf(dest, sizeof(dest), "%s/dest", test_dir);
    mkdir(dest, 0755);
    write_file("dest/cgroup.procs", "");
    int from = open(root, O_RDONLY | O_DIRECTORY), to = open(dest, O_RDONLY | O_DIRECTORY);
    int pid = -1;
    /* The last line has no newline: a pid the kernel did not finish. */
    assert_int_equal(cgroup_move_procs(from, to, &pid), 2);
    close(from);
    close(to);
    assert_string_equal(slurp("../dest/cgroup.procs"), "127");
}

static void test_release_name_of_the_parent(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(cgroup_release_name("/loginguard", buf, sizeof(buf)), "loginguard");
    assert_string_equal(cgroup_release_name("/a/lg//", buf, sizeof(buf)), "lg");
    assert_null(cgroup_release_name("/", buf, sizeof(buf)));
    assert_null(cgroup_release_name("//", buf, sizeof(buf)));
    assert_null(cgroup_release_name("/svc/.", buf, sizeof(buf)));
    assert_string_equal(cgroup_release_name("/svc/.lg", buf, sizeof(buf)), ".lg");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_relative_parent_moves_daemon_and_enables_controllers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_limits_written_and_undone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_controller_said_and_others_applied, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_empty_cgroup_removed_populated_kept, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_absolute_parent_from_root_writes_only_what_is_missing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_in_root_cgroup_stays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relative_parent_in_systemd_unit_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reopen_from_the_supervisor_leaf_keeps_the_parent, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_missing_own_cgroup_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_counters_from_the_parent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_moves_up_and_removes_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_release_gives_up_after_bounded_rounds, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_move_reads_only_pids, setup, teardown),
        cmocka_unit_test(test_release_name_of_the_parent),
        cmocka_unit_test(test_mode_from_mountinfo),
        cmocka_unit_test_setup_teardown(test_own_v2_path, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
