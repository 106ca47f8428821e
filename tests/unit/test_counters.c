#include "config.h"

#include "observe/cgroup_counters.h"
#include "testutil.h"

/* A fake v1 layout: user-1001 under one root directory for cpuacct,
 * memory and pids alike. */
static void set_group(uint64_t cpu_ns, uint64_t rss, uint64_t tasks)
{
    char text[256];
    snprintf(text, sizeof(text), "%llu\n", (unsigned long long)cpu_ns);
    write_file("user-1001/cpuacct.usage", text);
    snprintf(text, sizeof(text), "cache 0\nrss 1\ntotal_cache 0\ntotal_rss %llu\n"
             "total_mapped_file 0\n", (unsigned long long)rss);
    write_file("user-1001/memory.stat", text);
    snprintf(text, sizeof(text), "%llu\n", (unsigned long long)tasks);
    write_file("user-1001/pids.current", text);
}

/* memory.stat is read again when the group used CPU, but a group that
 * used next to none keeps its last reading a few samples at most. */
static void test_memory_read_when_cpu_moved(void **state)
{
    (void)state;
    make_test_dir();
    set_group(1000000000, 100, 1);
    struct counter_roots roots = {.version = 1, .cpu = test_dir, .memory = test_dir,
                                  .pids = test_dir};
    struct user_counters c;
    assert_int_equal(counters_open(&c, &roots), 0);
    counters_discover(&c);
    assert_int_equal(c.count, 1);
    struct user_cgroup *g = &c.groups[0];
    struct user_usage u;
    assert_int_equal(counters_read(&c, g, &u), 0);
    assert_int_equal(u.memory, 100);
    assert_int_equal(u.tasks, 1);
    /* CPU stood still: the last reading, however long. */
    set_group(1000000000, 200, 2);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(counters_read(&c, g, &u), 0);
        assert_int_equal(u.memory, 100);
    }
    /* 1 ms of CPU a sample: kept four samples, read at the fifth. */
    uint64_t cpu = 1000000000;
    for (int i = 0; i < 4; i++) {
        cpu += 1000000;
        set_group(cpu, 200, 2);
        assert_int_equal(counters_read(&c, g, &u), 0);
        assert_int_equal(u.cpu_usec, cpu / 1000);
        assert_int_equal(u.memory, 100);
    }
    cpu += 1000000;
    set_group(cpu, 300, 3);
    assert_int_equal(counters_read(&c, g, &u), 0);
    assert_int_equal(u.memory, 300);
    assert_int_equal(u.tasks, 3);
    /* 10 ms at once: read at once. */
    cpu += 10000000;
    set_group(cpu, 400, 4);
    assert_int_equal(counters_read(&c, g, &u), 0);
    assert_int_equal(u.memory, 400);
    /* A little at a time adds up: 2 + 2 + 2 ms passes 5 ms since the read. */
    for (int i = 0; i < 3; i++) {
        cpu += 2000000;
        set_group(cpu, 500, 5);
        assert_int_equal(counters_read(&c, g, &u), 0);
        assert_int_equal(u.memory, i < 2 ? 400 : 500);
    }
    counters_close(&c);
    remove_test_dir();
}

/* A user's cgroup removed (empty at a sweep) and made again (the next
 * login) under the same name is read afresh: before, the descriptors of
 * the removed one were kept, and on a real cgroup fs their reads fail for
 * ever, so that user's usage was never seen again. */
static void test_a_group_made_again_is_read_afresh(void **state)
{
    (void)state;
    make_test_dir();
    set_group(1000000000, 100, 1);
    struct counter_roots roots = {.version = 1, .cpu = test_dir, .memory = test_dir,
                                  .pids = test_dir};
    struct user_counters c;
    assert_int_equal(counters_open(&c, &roots), 0);
    counters_discover(&c);
    assert_int_equal(c.count, 1);
    struct user_usage u;
    assert_int_equal(counters_read(&c, &c.groups[0], &u), 0);
    assert_int_equal(u.cpu_usec, 1000000);
    char path[4096];
    snprintf(path, sizeof(path), "rm -r '%s/user-1001'", test_dir);
    assert_int_equal(system(path), 0);
    set_group(5000000000, 200, 2);
    counters_discover(&c);
    assert_int_equal(c.count, 1);
    assert_false(c.groups[0].have_last);
    assert_int_equal(counters_read(&c, &c.groups[0], &u), 0);
    assert_int_equal(u.cpu_usec, 5000000);
    assert_int_equal(u.memory, 200);
    /* The same directory still there: kept as it was. */
    int fd = c.groups[0].cpu_fd;
    counters_discover(&c);
    assert_int_equal(c.groups[0].cpu_fd, fd);
    counters_close(&c);
    remove_test_dir();
}

/* The sweep reads every user's cgroup.procs (and those below it). */
static void test_cgroup_procs_parsed(void **state)
{
    (void)state;
    make_test_dir();
    /* Longer than one read, and no newline at the end. */
    char big[20000] = "";
    for (int pid = 1000; pid < 3000; pid++) {
        char line[16];
        snprintf(line, sizeof(line), "%d\n", pid);
        strcat(big, line);
    }
    strcat(big, "77");
    write_file("user-1001/cgroup.procs", big);
    write_file("user-1001/session-1.scope/cgroup.procs", "5\n6\n");
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/user-1001", test_dir);
    struct user_cgroup g = {.uid = 1001, .procs_dirfd = open(dir, O_RDONLY | O_DIRECTORY)};
    assert_true(g.procs_dirfd >= 0);
    pid_t *pids;
    size_t n = counters_pids(&g, &pids);
    assert_int_equal(n, 2000 + 1 + 2);
    assert_int_equal(pids[0], 1000);
    assert_int_equal(pids[1999], 2999);
    assert_int_equal(pids[2000], 77);
    assert_int_equal(pids[2001] + pids[2002], 11);
    free(pids);
    close(g.procs_dirfd);
    remove_test_dir();
}

/* Every sweep reads the same held directory: the second and later ones
 * must still find the processes in the sessions below the user's slice,
 * or systemd's session scopes and user manager are taken for strays and
 * moved out of their sessions. */
static void test_cgroup_procs_every_sweep(void **state)
{
    (void)state;
    make_test_dir();
    write_file("user-1001.slice/cgroup.procs", "");
    write_file("user-1001.slice/session-3.scope/cgroup.procs", "101\n102\n");
    write_file("user-1001.slice/user@1001.service/cgroup.procs", "");
    write_file("user-1001.slice/user@1001.service/init.scope/cgroup.procs", "201\n");
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/user-1001.slice", test_dir);
    struct user_cgroup g = {.uid = 1001, .procs_dirfd = open(dir, O_RDONLY | O_DIRECTORY)};
    assert_true(g.procs_dirfd >= 0);
    for (int sweep = 0; sweep < 3; sweep++) {
        pid_t *pids;
        size_t n = counters_pids(&g, &pids);
        assert_int_equal(n, 3);
        pid_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += pids[i];
        assert_int_equal(sum, 101 + 102 + 201);
        free(pids);
    }
    close(g.procs_dirfd);
    remove_test_dir();
}

/* A group whose counter stood still is passed over every other sample;
 * what it used meanwhile counts in full at the next reading, over both
 * intervals; one that uses CPU is read at every sample. */
static void test_an_idle_group_is_read_every_other_sample(void **state)
{
    (void)state;
    make_test_dir();
    set_group(1000000000, 100, 1);
    struct counter_roots roots = {.version = 1, .cpu = test_dir, .memory = test_dir,
                                  .pids = test_dir};
    struct user_counters c;
    assert_int_equal(counters_open(&c, &roots), 0);
    counters_discover(&c);
    struct user_cgroup *g = &c.groups[0];
    struct user_usage u;
    double cpu;
    const uint64_t second = 1000000;
    assert_int_equal(counters_sample(&c, g, 10 * second, second, &u, &cpu), 1);
    assert_int_equal(counters_sample(&c, g, 11 * second, second, &u, &cpu), 1);
    assert_true(cpu == 0); /* stood still */
    /* Busy from now: 1 core.  Passed over once (its last reading shown),
     * then read: both seconds count. */
    set_group(1000000000 + 1000000000ull, 100, 1);
    assert_int_equal(counters_sample(&c, g, 12 * second, second, &u, &cpu), 0);
    assert_true(cpu == 0);
    assert_int_equal(u.memory, 100);
    set_group(1000000000 + 2000000000ull, 100, 1);
    assert_int_equal(counters_sample(&c, g, 13 * second, second, &u, &cpu), 1);
    assert_true(cpu > 0.99 && cpu < 1.01);
    /* Busy: read at every sample. */
    set_group(1000000000 + 3000000000ull, 100, 1);
    assert_int_equal(counters_sample(&c, g, 14 * second, second, &u, &cpu), 1);
    assert_true(cpu > 0.99 && cpu < 1.01);
    counters_close(&c);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_read_when_cpu_moved),
        cmocka_unit_test(test_a_group_made_again_is_read_afresh),
        cmocka_unit_test(test_cgroup_procs_parsed),
        cmocka_unit_test(test_cgroup_procs_every_sweep),
        cmocka_unit_test(test_an_idle_group_is_read_every_other_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
