#include "config.h"

#include <pwd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nameless_are_retried_in_turn),
        cmocka_unit_test(test_no_nameless_nothing_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
