/* The per-user bound on events (event_limit.c), on its own. */
#include "config.h"

#include "event_limit.h"
#include "testutil.h"
#include "units.h"

#define MIN (60 * USEC_PER_SEC)

static void test_kinds(void **state)
{
    (void)state;
    /* What a user can multiply by starting processes... */
    static const char *const held[] = {"forbidden_process", "compute_process", "process_stopping",
                                       "process_exited", "process_killed", "stop_skipped",
                                       "stop_error", "notice", "argv_unreadable"};
    for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++) {
        int k = event_limit_kind(held[i]);
        assert_true(k >= 0);
        assert_string_equal(event_limit_kind_name((enum event_limit_kind)k), held[i]);
    }
    /* ...and what is always written. */
    static const char *const never[] = {"violation", "level_expired", "level_decayed",
                                        "limits_set", "limits_error", "daemon_started",
                                        "state_error", "events_suppressed", "events_lost"};
    for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
        assert_int_equal(event_limit_kind(never[i]), -1);
    assert_int_equal(event_limit_kind(NULL), -1);
}

static enum event_limit_verdict admit(struct event_limit *l, uid_t uid,
                                      enum event_limit_kind kind, uint64_t now,
                                      struct event_limit_report *ended)
{
    return event_limit_admit(l, uid, kind, "alice", "observe", now, ended);
}

static void test_a_user_gets_per_user_events_an_interval(void **state)
{
    (void)state;
    struct event_limit l = {0};
    event_limit_set(&l, 3, 10 * MIN);
    struct event_limit_report ended;
    uint64_t t0 = 1000 * MIN;
    for (int i = 0; i < 3; i++)
        assert_int_equal(admit(&l, 1001, HELD_FORBIDDEN_PROCESS, t0 + (uint64_t)i, &ended),
                         EVENT_WRITE);
    for (int i = 0; i < 5; i++)
        assert_int_equal(admit(&l, 1001, HELD_FORBIDDEN_PROCESS, t0 + MIN, &ended), EVENT_HOLD);
    assert_int_equal(admit(&l, 1001, HELD_NOTICE, t0 + 2 * MIN, &ended), EVENT_HOLD);
    assert_int_equal(ended.total, 0);
    /* Another user is not held back by the first. */
    assert_int_equal(admit(&l, 1002, HELD_PROCESS_STOPPING, t0 + 2 * MIN, &ended), EVENT_WRITE);
    /* Just before the end of the interval, still held. */
    assert_int_equal(admit(&l, 1001, HELD_NOTICE, t0 + 10 * MIN - 1, &ended), EVENT_HOLD);
    /* The interval ends: the next event is written, after the report of
     * what was held back in the one before. */
    assert_int_equal(admit(&l, 1001, HELD_PROCESS_KILLED, t0 + 10 * MIN, &ended), EVENT_WRITE);
    assert_int_equal(ended.uid, 1001);
    assert_string_equal(ended.user, "alice");
    assert_string_equal(ended.mode, "observe");
    assert_int_equal(ended.since, t0);
    assert_int_equal(ended.total, 7);
    assert_int_equal(ended.held[HELD_FORBIDDEN_PROCESS], 5);
    assert_int_equal(ended.held[HELD_NOTICE], 2);
    assert_int_equal(ended.held[HELD_PROCESS_KILLED], 0);
    event_limit_free(&l);
}

struct collected {
    struct event_limit_report r[8];
    size_t n;
};

static void collect(const struct event_limit_report *r, void *arg)
{
    struct collected *c = arg;
    assert_true(c->n < 8);
    c->r[c->n++] = *r;
}

static void test_ended_intervals_are_reported_at_a_sample(void **state)
{
    (void)state;
    struct event_limit l = {0};
    event_limit_set(&l, 1, 10 * MIN);
    struct event_limit_report ended;
    uint64_t t0 = 1000 * MIN;
    admit(&l, 1001, HELD_COMPUTE_PROCESS, t0, &ended);
    admit(&l, 1001, HELD_COMPUTE_PROCESS, t0, &ended);           /* held */
    admit(&l, 1002, HELD_COMPUTE_PROCESS, t0 + 5 * MIN, &ended);
    admit(&l, 1002, HELD_ARGV_UNREADABLE, t0 + 5 * MIN, &ended); /* held */
    admit(&l, 1003, HELD_COMPUTE_PROCESS, t0, &ended);            /* nothing held */
    struct collected c = {0};
    event_limit_expire(&l, t0 + 9 * MIN, false, collect, &c);
    assert_int_equal(c.n, 0);
    event_limit_expire(&l, t0 + 10 * MIN, false, collect, &c);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.r[0].uid, 1001);
    assert_int_equal(c.r[0].held[HELD_COMPUTE_PROCESS], 1);
    /* Users whose interval ended are forgotten, held back or not. */
    assert_int_equal(l.count, 1);
    /* The daemon stops: what is held back so far is reported; the
     * interval goes on and is not reported twice. */
    event_limit_expire(&l, t0 + 11 * MIN, true, collect, &c);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.r[1].uid, 1002);
    assert_int_equal(c.r[1].held[HELD_ARGV_UNREADABLE], 1);
    assert_int_equal(c.r[1].since, t0 + 5 * MIN);
    event_limit_expire(&l, t0 + 12 * MIN, true, collect, &c);
    assert_int_equal(c.n, 2);
    assert_int_equal(admit(&l, 1002, HELD_NOTICE, t0 + 12 * MIN, &ended), EVENT_HOLD);
    event_limit_free(&l);
}

static void test_no_limit_and_a_new_limit(void **state)
{
    (void)state;
    struct event_limit l = {0};
    struct event_limit_report ended;
    event_limit_set(&l, 0, 10 * MIN);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(admit(&l, 1001, HELD_NOTICE, MIN, &ended), EVENT_WRITE);
    assert_int_equal(l.count, 0);
    /* A reload sets a bound: what the interval wrote counts against it. */
    event_limit_set(&l, 2, 10 * MIN);
    admit(&l, 1001, HELD_NOTICE, 2 * MIN, &ended);
    admit(&l, 1001, HELD_NOTICE, 2 * MIN, &ended);
    assert_int_equal(admit(&l, 1001, HELD_NOTICE, 2 * MIN, &ended), EVENT_HOLD);
    event_limit_set(&l, 4, 10 * MIN);
    assert_int_equal(admit(&l, 1001, HELD_NOTICE, 3 * MIN, &ended), EVENT_WRITE);
    event_limit_free(&l);
}

/* Thousands of users, in any order: each is counted on its own. */
static void test_many_users(void **state)
{
    (void)state;
    struct event_limit l = {0};
    event_limit_set(&l, 1, 10 * MIN);
    struct event_limit_report ended;
    for (uid_t u = 0; u < 5000; u++)
        assert_int_equal(admit(&l, (u * 7919) % 5000 + 1000, HELD_NOTICE, MIN, &ended),
                         EVENT_WRITE);
    for (uid_t u = 0; u < 5000; u++)
        assert_int_equal(admit(&l, u + 1000, HELD_NOTICE, MIN, &ended), EVENT_HOLD);
    assert_int_equal(l.count, 5000);
    for (size_t i = 1; i < l.count; i++)
        assert_true(l.users[i - 1].r.uid < l.users[i].r.uid);
    event_limit_free(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_a_user_gets_per_user_events_an_interval),
        cmocka_unit_test(test_ended_intervals_are_reported_at_a_sample),
        cmocka_unit_test(test_no_limit_and_a_new_limit),
        cmocka_unit_test(test_many_users),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
