/* The user directory (directory.c): the real helper, asking this
 * machine's NSS (root, nobody and nogroup are in every Debian's files;
 * uids far above any a node gives out have no entry). */
#include "config.h"

#include <poll.h>
#include <pwd.h>
#include <signal.h>

#include "observe/directory.h"
#include "testutil.h"
#include "util.h"

#define NAMELESS_BASE 3999000000u
#define HANG_MS 60000

static struct policy policy_with(const char *exempt_group, const char *admin_group)
{
    struct policy p;
    memset(&p, 0, sizeof(p));
    if (exempt_group)
        p.exempt_groups.names[p.exempt_groups.count++] = (char *)exempt_group;
    p.admin_group = (char *)admin_group;
    return p;
}

static void start(struct directory *d, const struct policy *p)
{
    char err[256];
    if (directory_start(d, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    directory_set_policy(d, p);
}

/* The loop, until nothing is out (a hang guard, never the assertion). */
static void wait_answers(struct directory *d)
{
    uint64_t end = now_boottime_usec() + HANG_MS * 1000ULL;
    while (d->out_count && now_boottime_usec() < end) {
        struct pollfd p = {.fd = directory_fd(d), .events = POLLIN};
        poll(&p, 1, 100);
        directory_poll(d);
    }
    assert_int_equal(d->out_count, 0);
}

/* A uid is unknown until the helper answers, then known: its name, its
 * [exempt] group, its admin standing; a uid without an entry is known to
 * have none. */
static void test_users_are_answered_off_the_caller(void **state)
{
    (void)state;
    if (!getpwuid(65534) || getpwuid(NAMELESS_BASE))
        skip();
    struct policy p = policy_with("nogroup", "nogroup");
    struct directory d;
    start(&d, &p);
    const struct user_info *u = directory_user(&d, 65534);
    assert_false(u->answered);
    assert_string_equal(u->name, "");
    assert_int_equal(directory_admin(&d, 65534, false), -1);
    directory_user(&d, NAMELESS_BASE);
    wait_answers(&d);
    u = directory_user(&d, 65534);
    assert_true(u->answered);
    assert_string_equal(u->name, getpwuid(65534)->pw_name);
    assert_true(u->exempt_group); /* its primary group counts */
    assert_string_equal(u->exempt_group_name, "nogroup");
    assert_int_equal(directory_admin(&d, 65534, false), 1);
    assert_int_equal(directory_admin(&d, 65534, true), 0); /* a subordinate uid never is */
    assert_int_equal(directory_admin(&d, 0, false), 1);    /* root, nothing asked */
    u = directory_user(&d, NAMELESS_BASE);
    assert_true(u->answered);
    assert_string_equal(u->name, "");
    assert_false(u->exempt_group);
    assert_int_equal(directory_admin(&d, NAMELESS_BASE, false), 0);
    directory_stop(&d);
}

/* Names an admin gives are asked too; one nobody has is known as such. */
static void test_names_are_answered(void **state)
{
    (void)state;
    struct policy p = policy_with(NULL, "");
    struct directory d;
    start(&d, &p);
    uid_t uid = 123;
    assert_int_equal(directory_uid_of(&d, "root", &uid), -1);
    assert_int_equal(directory_uid_of(&d, "no-such-user-here", &uid), -1);
    wait_answers(&d);
    assert_int_equal(directory_uid_of(&d, "root", &uid), 1);
    assert_int_equal(uid, 0);
    assert_int_equal(directory_uid_of(&d, "no-such-user-here", &uid), 0);
    assert_int_equal(directory_admin(&d, 65534, false), 0); /* no admin_group */
    directory_stop(&d);
}

/* A reload's groups: answers about the old ones are dropped, even those
 * on their way. */
static void test_a_new_policy_drops_every_answer(void **state)
{
    (void)state;
    if (!getpwuid(65534))
        skip();
    struct policy none = policy_with(NULL, ""), exempt = policy_with("nogroup", "");
    struct directory d;
    start(&d, &none);
    directory_user(&d, 65534);
    directory_set_policy(&d, &exempt); /* the answer to the first is out */
    directory_user(&d, 65534);
    wait_answers(&d);
    assert_true(directory_user(&d, 65534)->exempt_group);
    directory_stop(&d);
}

/* Many uids without a name are asked again a few at each sweep, in turn,
 * and every one in the end; one with a name is not (until its answer is
 * old). */
static void test_refresh_asks_in_turn(void **state)
{
    (void)state;
    struct policy p = policy_with(NULL, "");
    struct directory d;
    start(&d, &p);
    enum { N = 3 * DIRECTORY_REFRESH_MAX + 5 };
    for (unsigned i = 0; i < N; i++)
        directory_user(&d, NAMELESS_BASE + i);
    directory_user(&d, 0);
    wait_answers(&d);
    unsigned asked[N] = {0};
    for (int sweep = 0; sweep < 4; sweep++) {
        uint64_t before = d.lookups;
        directory_refresh(&d);
        assert_int_equal(d.lookups - before, DIRECTORY_REFRESH_MAX);
        assert_false(d.users[0].asked); /* root */
        for (unsigned i = 0; i < N; i++)
            asked[i] += d.users[1 + i].asked;
        wait_answers(&d);
    }
    for (unsigned i = 0; i < N; i++)
        assert_true(asked[i] >= 1);
    directory_stop(&d);
}

/* A helper that does not answer in time (here: stopped) is replaced; the
 * lookup it was on is taken as unknown, the others are answered by the
 * next one. */
static void test_a_stalled_helper_is_replaced(void **state)
{
    (void)state;
    struct policy p = policy_with(NULL, "");
    struct directory d;
    start(&d, &p);
    kill(d.helper.child.pid, SIGSTOP);
    d.stall_usec = 1000;
    directory_user(&d, NAMELESS_BASE);
    directory_user(&d, 0);
    uint64_t stalled = directory_deadline(&d);
    while (now_boottime_usec() < stalled)
        poll(NULL, 0, 1);
    directory_poll(&d);
    d.stall_usec = DIRECTORY_STALL_USEC;
    assert_int_equal(d.restarts, 1);
    assert_true(directory_user(&d, NAMELESS_BASE)->answered);
    assert_false(directory_user(&d, 0)->answered);
    wait_answers(&d);
    assert_string_equal(directory_user(&d, 0)->name, "root");
    directory_stop(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_users_are_answered_off_the_caller),
        cmocka_unit_test(test_names_are_answered),
        cmocka_unit_test(test_a_new_policy_drops_every_answer),
        cmocka_unit_test(test_refresh_asks_in_turn),
        cmocka_unit_test(test_a_stalled_helper_is_replaced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
