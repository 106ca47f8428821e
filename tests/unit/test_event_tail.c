/* The latest events of one user, read back from the end of the log. */
#include "config.h"

#include "record/event_tail.h"
#include "testutil.h"
#include "util.h"

static void the_latest_events_of_the_user_oldest_first(void **state)
{
    (void)state;
    make_test_dir();
    const char *path = write_file("events.jsonl",
        "{\"event\":\"violation\",\"uid\":1001,\"n\":1}\n"
        "{\"event\":\"violation\",\"uid\":10011,\"n\":2}\n"
        "not json \"uid\":1001\n"
        "{\"event\":\"exempt_added\",\"uid\":1002,\"by_uid\":1001,\"n\":3}\n"
        "{\"event\":\"limits_set\",\"uid\":1001,\"n\":4}\n"
        "{\"event\":\"exempt_added\",\"uid\":1001,\"reason\":\"demo\",\"n\":5}\n"
        "{\"event\":\"level_expired\",\"uid\":1001,\"n\":6}\n");
    json_t *e = event_tail(path, 1001, NULL, 3);
    assert_int_equal(json_array_size(e), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(e, 0), "n")), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(e, 2), "n")), 6);
    json_decref(e);
    e = event_tail(path, 1001, "exempt_added", 5);
    assert_int_equal(json_array_size(e), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(e, 0), "reason")),
                        "demo");
    json_decref(e);
    e = event_tail(path, 1001, NULL, 10);
    assert_int_equal(json_array_size(e), 4); /* not 10011's, not by_uid's, not the bad line */
    json_decref(e);
    remove_test_dir();
}

static void only_the_end_of_a_long_log_is_read(void **state)
{
    (void)state;
    make_test_dir();
    char path[128];
    snprintf(path, sizeof(path), "%s/events.jsonl", test_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"event\":\"violation\",\"uid\":1001,\"n\":0}\n");
    /* Another user's events, more than the bound. */
    for (int i = 0; i < EVENT_TAIL_BYTES / 30; i++)
        fprintf(f, "{\"event\":\"notice\",\"uid\":2002,\"n\":%d}\n", i);
    fclose(f);
    json_t *e = event_tail(path, 1001, NULL, 5);
    assert_int_equal(json_array_size(e), 0);
    json_decref(e);
    e = event_tail(path, 2002, NULL, 2);
    assert_int_equal(json_array_size(e), 2);
    json_decref(e);
    remove_test_dir();
}

static void no_log_is_no_events(void **state)
{
    (void)state;
    json_t *e = event_tail("-", 1001, NULL, 5);
    assert_int_equal(json_array_size(e), 0);
    json_decref(e);
    e = event_tail("/nonexistent/events.jsonl", 1001, NULL, 5);
    assert_int_equal(json_array_size(e), 0);
    json_decref(e);
    e = event_tail("/proc/self", 1001, NULL, 5); /* not a regular file */
    assert_int_equal(json_array_size(e), 0);
    json_decref(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_latest_events_of_the_user_oldest_first),
        cmocka_unit_test(only_the_end_of_a_long_log_is_read),
        cmocka_unit_test(no_log_is_no_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
