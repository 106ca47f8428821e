#include "config.h"

#include <pwd.h>

#include "cgroup_counters.h"
#include "users.h"
#include "testutil.h"

/* uids far above any a node gives out: none has a passwd entry. */
#define NAMELESS_BASE 3999000000u
#define NAMELESS 100

static bool cached(const struct user_cache *c, uid_t uid)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->entries[i].uid == uid)
            return true;
    return false;
}

static void look_all_up(struct user_cache *c, const struct policy *p)
{
    users_lookup(c, p, 0);
    for (unsigned i = 0; i < NAMELESS; i++)
        users_lookup(c, p, NAMELESS_BASE + i);
}

/* Hundreds of nameless uids (containers, accounts without entries) are
 * asked again a few at each sweep, in turn, and every one in the end;
 * a named one is kept. */
static void test_nameless_are_retried_in_turn(void **state)
{
    (void)state;
    for (unsigned i = 0; i < NAMELESS; i++)
        if (getpwuid(NAMELESS_BASE + i))
            skip();
    struct policy p;
    memset(&p, 0, sizeof(p));
    struct user_cache c = {0};
    look_all_up(&c, &p);
    assert_string_equal(users_lookup(&c, &p, 0)->name, "root");
    assert_string_equal(users_lookup(&c, &p, NAMELESS_BASE)->name, "");
    int asked[NAMELESS] = {0};
    int sweeps = (NAMELESS + USERS_RETRY_MAX - 1) / USERS_RETRY_MAX;
    for (int sweep = 0; sweep < sweeps; sweep++) {
        size_t before = c.count;
        users_retry_unknown(&c);
        assert_true(before - c.count <= USERS_RETRY_MAX);
        assert_true(before - c.count > 0);
        assert_true(cached(&c, 0));
        for (unsigned i = 0; i < NAMELESS; i++)
            asked[i] += !cached(&c, NAMELESS_BASE + i);
        look_all_up(&c, &p);
    }
    /* Every one asked, none twice before all were (the last sweep goes
     * round again from the lowest). */
    int total = 0;
    for (unsigned i = 0; i < NAMELESS; i++) {
        assert_true(asked[i] >= 1);
        assert_true(asked[i] == 1 || i < (unsigned)(sweeps * USERS_RETRY_MAX - NAMELESS));
        total += asked[i];
    }
    assert_int_equal(total, sweeps * USERS_RETRY_MAX);
    users_forget(&c);
}

static void test_no_nameless_nothing_forgotten(void **state)
{
    (void)state;
    struct policy p;
    memset(&p, 0, sizeof(p));
    struct user_cache c = {0};
    users_lookup(&c, &p, 0);
    users_retry_unknown(&c);
    assert_int_equal(c.count, 1);
    users_forget(&c);
}

/* The sweep reads every user's cgroup.procs (and those below it). */
static void test_cgroup_procs_parsed(void **state)
{
    (void)state;
    make_test_dir();
    /* One line, a pid split across reads would be, no newline at the end. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nameless_are_retried_in_turn),
        cmocka_unit_test(test_no_nameless_nothing_forgotten),
        cmocka_unit_test(test_cgroup_procs_parsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
