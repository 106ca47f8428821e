/* The JSON of a cluster's standings and records: what is written reads
 * back the same, and what is out of range or of the wrong type is
 * refused with why. */
#include "config.h"

#include "cluster_codec.h"
#include "testutil.h"

static char why[256];

static struct penalty sample_penalty(void)
{
    return (struct penalty){.level = 2, .since = 1700000000000000ULL, .until = 1700000600000000ULL,
                            .quiet_since = 1700000000000001ULL, .last_violation = 1700000000000002ULL,
                            .violations = 7, .last_reason = VIOLATION_REASON_MEMORY,
                            .last_cpu = 1.25, .last_memory = 3ULL << 30, .last_window = 60000000};
}

static void test_standing_round_trip(void **state)
{
    (void)state;
    struct shared_standing s = {.uid = 2000000001, .rev = 42, .penalty = sample_penalty(),
                                .exempt_until = 1700003600000000ULL, .seq = 9};
    snprintf(s.node, sizeof(s.node), "login1.example");
    json_t *o = standing_to_json(&s);
    assert_string_equal(json_string_value(json_object_get(o, "t")), "standing");
    struct shared_standing back;
    assert_int_equal(standing_from_json(o, &back, why, sizeof(why)), 0);
    json_decref(o);
    assert_int_equal(back.uid, s.uid);
    assert_int_equal(back.rev, 42);
    assert_int_equal(back.seq, 9);
    assert_int_equal(back.exempt_until, s.exempt_until);
    assert_string_equal(back.node, "login1.example");
    assert_int_equal(penalty_compare(&back.penalty, &s.penalty), 0);
}

static void test_change_round_trip(void **state)
{
    (void)state;
    struct standing_change c = {.kind = CHANGE_FORGIVE, .uid = 2000000002, .seq = 5,
                                .base_rev = 40, .after_seq = 4, .penalty = sample_penalty()};
    json_t *o = change_to_json(&c, 1700000000123456ULL, "alice");
    struct standing_change back;
    uint64_t at;
    char by[CLUSTER_BY_MAX];
    assert_int_equal(change_from_json(o, &back, &at, by, sizeof(by), why, sizeof(why)), 0);
    json_decref(o);
    assert_int_equal(back.kind, CHANGE_FORGIVE);
    assert_int_equal(back.seq, 5);
    assert_int_equal(back.base_rev, 40);
    assert_int_equal(back.after_seq, 4);
    assert_int_equal(at, 1700000000123456ULL);
    assert_string_equal(by, "alice");
    assert_int_equal(penalty_compare(&back.penalty, &c.penalty), 0);
    /* No admin: null, read back as "". */
    c.kind = CHANGE_RAISE;
    o = change_to_json(&c, 1, NULL);
    assert_true(json_is_null(json_object_get(o, "by")));
    assert_int_equal(change_from_json(o, &back, &at, by, sizeof(by), why, sizeof(why)), 0);
    assert_string_equal(by, "");
    json_decref(o);
}

/* The record with one member replaced by value (NULL: removed), read. */
static int read_with(const char *key, json_t *value)
{
    struct standing_change c = {.kind = CHANGE_RAISE, .uid = 2000000002, .seq = 5,
                                .penalty = sample_penalty()};
    json_t *o = change_to_json(&c, 1, NULL);
    if (value)
        json_object_set_new(o, key, value);
    else
        json_object_del(o, key);
    struct standing_change back;
    uint64_t at;
    char by[8];
    why[0] = '\0';
    int rc = change_from_json(o, &back, &at, by, sizeof(by), why, sizeof(why));
    json_decref(o);
    return rc;
}

static void test_change_refused(void **state)
{
    (void)state;
    assert_int_equal(read_with("kind", json_string("event")), -1);
    assert_non_null(strstr(why, "kind"));
    assert_int_equal(read_with("uid", json_integer(-1)), -1);
    assert_int_equal(read_with("uid", json_integer(4294967295LL)), -1); /* (uid_t)-1 */
    assert_int_equal(read_with("seq", json_integer(0)), -1);
    assert_int_equal(read_with("seq", json_string("5")), -1);
    assert_int_equal(read_with("base_rev", NULL), -1);
    assert_non_null(strstr(why, "base_rev"));
    assert_int_equal(read_with("by", json_string("a-name-too-long")), -1);
    assert_int_equal(read_with("by", json_integer(1)), -1);
    assert_int_equal(read_with("penalty", json_string("x")), -1);
    assert_int_equal(read_with("penalty", json_pack("{s:i}", "level", 1)), -1);
    assert_int_equal(read_with("by", json_string("bob")), 0);
}

static void test_penalty_refused(void **state)
{
    (void)state;
    struct penalty p = sample_penalty(), back;
    const char *keys[] = {"level", "violations", "until", "last_cpu"};
    json_t *bad[] = {json_integer(1001), json_integer(1LL << 32), json_integer(-5), json_real(-1)};
    for (size_t i = 0; i < 4; i++) {
        json_t *o = penalty_to_json(&p);
        json_object_set_new(o, keys[i], bad[i]);
        assert_int_equal(penalty_from_json(o, &back, why, sizeof(why)), -1);
        assert_non_null(strstr(why, keys[i]));
        json_decref(o);
    }
    /* An unknown reason is no reason, not an error (a newer node's). */
    json_t *o = penalty_to_json(&p);
    json_object_set_new(o, "last_reason", json_string("io"));
    assert_int_equal(penalty_from_json(o, &back, why, sizeof(why)), 0);
    assert_int_equal(back.last_reason, VIOLATION_REASON_NONE);
    json_decref(o);
    assert_int_equal(violation_reason_parse("memory_pressure"), VIOLATION_REASON_PRESSURE);
    assert_int_equal(violation_reason_parse(NULL), VIOLATION_REASON_NONE);
}

static void test_standing_refused(void **state)
{
    (void)state;
    struct shared_standing s = {.uid = 1, .rev = 1, .penalty = sample_penalty()};
    json_t *o = standing_to_json(&s);
    char long_name[CLUSTER_NODE_MAX + 1];
    memset(long_name, 'n', CLUSTER_NODE_MAX);
    long_name[CLUSTER_NODE_MAX] = '\0';
    json_object_set_new(o, "node", json_string(long_name));
    struct shared_standing back;
    assert_int_equal(standing_from_json(o, &back, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "node"));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_standing_round_trip), cmocka_unit_test(test_change_round_trip),
        cmocka_unit_test(test_change_refused),      cmocka_unit_test(test_penalty_refused),
        cmocka_unit_test(test_standing_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
