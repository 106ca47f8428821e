/* The one answer to each question about a user: protected and why, the
 * limits wanted, idle.  Each as the callers relied on before it was one
 * function: the engine's exemptions, status's reasons and their order,
 * the enforcer's limits, status's and metrics' idle. */
#include "config.h"

#include "testutil.h"
#include "units.h"
#include "user_standing.h"
#include "util.h"

#define SEC USEC_PER_SEC
#define NOW (1700000000ULL * SEC)

struct fixture {
    struct policy policy;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    policy_init_defaults(&f->policy);
    f->policy.exempt_users.names[0] = xstrdup("alice");
    f->policy.exempt_users.count = 1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    policy_free(&f->policy);
    free(f);
    return 0;
}

static struct user_sample sample(uid_t uid, const char *name)
{
    struct user_sample u = {.uid = uid};
    snprintf(u.name, sizeof(u.name), "%s", name);
    return u;
}

static void each_reason(void **state)
{
    struct fixture *f = *state;
    const struct policy *p = &f->policy;
    struct user_sample u = sample(0, "root");
    assert_int_equal(user_protection(p, NULL, &u, NOW), PROTECTION_ROOT);
    u = sample(999, "daemon");
    assert_int_equal(user_protection(p, NULL, &u, NOW), PROTECTION_SYSTEM);
    u = sample(1001, "alice");
    assert_int_equal(user_protection(p, NULL, &u, NOW), PROTECTION_EXEMPT_USER);
    u = sample(1002, "bob");
    u.exempt_group = true;
    assert_int_equal(user_protection(p, NULL, &u, NOW), PROTECTION_EXEMPT_GROUP);
    u = sample(1003, "");
    u.directory_pending = true;
    assert_int_equal(user_protection(p, NULL, &u, NOW), PROTECTION_DIRECTORY);
    u = sample(1004, "carol");
    struct user_state st = {.uid = 1004, .exempt_until = NOW + SEC};
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_TEMPORARY);
    assert_true(user_protected(p, &st, &u, NOW));
    /* An exemption ends at its time, not after. */
    st.exempt_until = NOW;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_NONE);
    assert_false(user_protected(p, &st, &u, NOW));
    assert_false(user_protected(p, NULL, &u, NOW));
}

/* The first that applies is the reason status and why give: a temporary
 * exemption last, so an [exempt] user exempted for a while is still
 * "[exempt] users" (and status shows nothing for the exemption alone). */
static void the_first_reason_wins(void **state)
{
    struct fixture *f = *state;
    const struct policy *p = &f->policy;
    struct user_state st = {.exempt_until = NOW + SEC};
    struct user_sample u = sample(0, "alice");
    u.exempt_group = true;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_ROOT);
    u.uid = 10;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_SYSTEM);
    u.uid = 1001;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_EXEMPT_USER);
    u.name[0] = '\0';
    u.directory_pending = true;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_EXEMPT_GROUP);
    u.exempt_group = false;
    assert_int_equal(user_protection(p, &st, &u, NOW), PROTECTION_DIRECTORY);
}

static void the_share_tightened_by_the_level(void **state)
{
    struct fixture *f = *state;
    struct policy *p = &f->policy;
    p->share_cpu = 4;
    p->share_memory = 16ULL << 30;
    p->share_tasks = 1024;
    p->levels[1].cpu = 1;
    p->levels[1].memory = 32ULL << 30; /* above the share: the share holds */
    struct user_state st = {.level = 2, .until = NOW + SEC};
    struct limits l = user_limits(p, &st, NOW);
    assert_true(l.cpu == 1);
    assert_int_equal(l.memory, 16ULL << 30);
    assert_int_equal(l.tasks, 1024);
    assert_ptr_equal(user_level_on(p, &st, NOW), &p->levels[1]);
    /* No share: the level's alone; a level's 0 is no limit. */
    p->share_cpu = 0;
    p->levels[1].cpu = 0;
    l = user_limits(p, &st, NOW);
    assert_true(l.cpu == 0);
    /* Limits that ended, a level the policy no longer has, no state: the share. */
    p->share_cpu = 4;
    st.until = NOW;
    assert_null(user_level_on(p, &st, NOW));
    assert_true(user_limits(p, &st, NOW).cpu == 4);
    st.until = NOW + SEC;
    st.level = (int)p->level_count + 1;
    assert_null(user_level_on(p, &st, NOW));
    assert_true(user_limits(p, NULL, NOW).cpu == 4);
}

/* What the enforcer sets: a user protected for good is left alone; a
 * temporary exemption lifts the level's limits, not the share. */
static void limits_wanted_by_protection(void **state)
{
    struct fixture *f = *state;
    struct policy *p = &f->policy;
    p->levels[1].cpu = 1;
    struct user_state st = {.level = 2, .until = NOW + SEC, .exempt_until = NOW + SEC};
    struct limits l;
    assert_true(user_limits_wanted(p, &st, PROTECTION_NONE, NOW, &l));
    assert_true(l.cpu == 1);
    assert_true(user_limits_wanted(p, &st, PROTECTION_TEMPORARY, NOW, &l));
    assert_true(l.cpu == p->share_cpu);
    assert_int_equal(l.tasks, p->share_tasks);
    for (enum protection why = PROTECTION_ROOT; why < PROTECTION_TEMPORARY; why++)
        assert_false(user_limits_wanted(p, &st, why, NOW, &l));
}

static void idle_as_status_and_metrics_say(void **state)
{
    (void)state;
    struct user_state st = {0};
    /* status: cores alone */
    assert_true(user_idle(NULL, 0.049, 64ULL << 30, 0, NOW));
    assert_false(user_idle(NULL, USER_IDLE_CPU, 0, 0, NOW));
    /* metrics: half of [violation] memory too */
    assert_false(user_idle(NULL, 0, 4ULL << 30, 4ULL << 30, NOW));
    assert_true(user_idle(&st, 0, (4ULL << 30) - 1, 4ULL << 30, NOW));
    /* a level or a temporary exemption: never idle, and listed first */
    st.level = 1;
    assert_true(user_marked(&st, NOW));
    assert_false(user_idle(&st, 0, 0, 0, NOW));
    st.level = 0;
    st.exempt_until = NOW + 1;
    assert_true(user_marked(&st, NOW));
    assert_false(user_idle(&st, 0, 0, 0, NOW));
    st.exempt_until = NOW;
    assert_false(user_marked(&st, NOW));
    assert_false(user_marked(NULL, NOW));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(each_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(the_first_reason_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(the_share_tightened_by_the_level, setup, teardown),
        cmocka_unit_test_setup_teardown(limits_wanted_by_protection, setup, teardown),
        cmocka_unit_test_setup_teardown(idle_as_status_and_metrics_say, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
