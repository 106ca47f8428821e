/* Each user's last hour: a point a minute, rings only for users who used
 * something, freed after an idle hour. */
#include "config.h"

#include "history.h"
#include "testutil.h"
#include "units.h"

#define SEC USEC_PER_SEC
#define MIN (60 * SEC)
#define T0 (1700000000ULL / 60 * 60 * SEC) /* on a minute */

static void sample(struct history *h, struct snapshot *s, uint64_t t, uid_t uid, double cpu,
                   uint64_t memory)
{
    snapshot_clear(s);
    s->now = t;
    s->interval = 2 * SEC;
    struct user_sample *u = snapshot_add_user(s, uid);
    u->cpu = cpu;
    u->memory = memory;
    history_update(h, s);
}

static void idle_users_cost_nothing(void **state)
{
    (void)state;
    struct history h = {0};
    struct snapshot s = {0};
    for (uid_t uid = 1000; uid < 1500; uid++)
        sample(&h, &s, T0, uid, 0.01, 20ULL << 20);
    assert_int_equal(h.count, 0);
    assert_int_equal(history_bytes(&h), 0);
    sample(&h, &s, T0, 1200, 0.5, 20ULL << 20);
    assert_int_equal(h.count, 1);
    assert_true(history_bytes(&h) < 1024);
    history_free(&h);
    snapshot_free(&s);
}

static void points_average_cpu_and_keep_the_most_memory_of_each_minute(void **state)
{
    (void)state;
    struct history h = {0};
    struct snapshot s = {0};
    /* Minute 0: 2 cores for 30 s then 0 for 30 s; memory up to 3 GiB. */
    for (unsigned t = 2; t <= 58; t += 2)
        sample(&h, &s, T0 + t * SEC, 1001, t <= 30 ? 2 : 0, (t == 20 ? 3ULL : 1ULL) << 30);
    /* Minutes 1 and 2 unseen; minute 3: 1 core. */
    sample(&h, &s, T0 + 3 * MIN + 2 * SEC, 1001, 1, 1ULL << 30);
    const struct user_history *u = history_find(&h, 1001);
    assert_non_null(u);
    double cpu[HISTORY_POINTS];
    uint64_t mem[HISTORY_POINTS];
    history_points(u, T0 + 3 * MIN + 5 * SEC, cpu, mem);
    assert_true(cpu[59] == 1.0);
    assert_true(cpu[58] == 0 && cpu[57] == 0);
    assert_true(cpu[56] == 1.03); /* 15 of 29 samples at 2 cores, in hundredths */
    assert_true(mem[56] == 3ULL << 30);
    assert_true(cpu[0] == 0 && mem[55] == 0);
    /* Asked a minute later, every point moves one to the left. */
    history_points(u, T0 + 4 * MIN, cpu, mem);
    assert_true(cpu[58] == 1.0 && cpu[59] == 0);
    history_free(&h);
    snapshot_free(&s);
}

static void an_hour_idle_frees_the_ring(void **state)
{
    (void)state;
    struct history h = {0};
    struct snapshot s = {0};
    sample(&h, &s, T0, 1001, 1, 0);
    for (unsigned m = 1; m < 60; m++)
        sample(&h, &s, T0 + m * MIN, 1001, 0, 0);
    assert_non_null(history_find(&h, 1001));
    sample(&h, &s, T0 + 60 * MIN, 1001, 0, 0);
    assert_null(history_find(&h, 1001));
    assert_int_equal(history_bytes(&h), 0);
    /* Gone from the snapshot altogether (logged out) ends it the same. */
    sample(&h, &s, T0 + 61 * MIN, 1002, 0, 300ULL << 20);
    sample(&h, &s, T0 + 121 * MIN, 1003, 0, 0);
    assert_null(history_find(&h, 1002));
    history_free(&h);
    snapshot_free(&s);
}

static void a_ring_older_than_an_hour_is_all_zero(void **state)
{
    (void)state;
    struct history h = {0};
    struct snapshot s = {0};
    sample(&h, &s, T0, 1001, 4, 0);
    double cpu[HISTORY_POINTS];
    uint64_t mem[HISTORY_POINTS];
    history_points(history_find(&h, 1001), T0 + 59 * MIN, cpu, mem);
    assert_true(cpu[0] == 4);
    history_points(history_find(&h, 1001), T0 + 60 * MIN, cpu, mem);
    for (int i = 0; i < HISTORY_POINTS; i++)
        assert_true(cpu[i] == 0);
    history_free(&h);
    snapshot_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_users_cost_nothing),
        cmocka_unit_test(points_average_cpu_and_keep_the_most_memory_of_each_minute),
        cmocka_unit_test(an_hour_idle_frees_the_ring),
        cmocka_unit_test(a_ring_older_than_an_hour_is_all_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
