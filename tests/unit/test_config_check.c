/* config_check (config_check.c), what loginguardd --check-config and
 * loginguardctl check-config both print: one OK line, or every error
 * with file and line and a last line saying nothing was changed. */
#include "config.h"

#include "config_check.h"
#include "testutil.h"

struct output {
    char *out, *err;
    int rc;
};

static void check(const char *path, bool must_exist, bool dump, struct output *o)
{
    size_t out_len = 0, err_len = 0;
    FILE *out = open_memstream(&o->out, &out_len);
    FILE *err = open_memstream(&o->err, &err_len);
    assert_non_null(out);
    assert_non_null(err);
    struct config_check_args a = {.path = path, .must_exist = must_exist, .dump = dump};
    o->rc = config_check(&a, out, err);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(fclose(err), 0);
}

static void output_free(struct output *o)
{
    free(o->out);
    free(o->err);
}

static void test_a_good_config_is_one_ok_line(void **state)
{
    (void)state;
    make_test_dir();
    write_file("rules.d/site.rules",
               "{\"name\": \"sim\", \"class\": \"compute\", \"exe\": \"/opt/sim\"}\n");
    const char *conf = write_file("loginguard.conf", "[daemon]\nmode = enforce\n");
    struct output o;
    check(conf, true, false, &o);
    assert_int_equal(o.rc, 0);
    assert_string_equal(o.err, "");
    assert_non_null(strstr(o.out, ": OK (enforce mode, 3 levels, 1 rules)\n"));
    output_free(&o);
    check(conf, true, true, &o); /* --dump: the policy, as a config */
    assert_int_equal(o.rc, 0);
    assert_non_null(strstr(o.out, "\nmode = enforce\n"));
    assert_non_null(strstr(o.out, "# Rules in effect: 1"));
    output_free(&o);
    remove_test_dir();
}

static void test_every_error_has_its_file_and_line(void **state)
{
    (void)state;
    make_test_dir();
    const char *rules = write_file("rules.d/site.rules",
                                   "{\"name\": \"sim\", \"class\": \"compute\"}\n"
                                   "{\"name\": \"x\", \"class\": \"harmless\", \"comm\": \"x\"}\n");
    char rules_path[300];
    snprintf(rules_path, sizeof(rules_path), "%s", rules);
    const char *conf = write_file("loginguard.conf", "[violation]\ncpu = 2 cors\n");
    char conf_path[300];
    snprintf(conf_path, sizeof(conf_path), "%s", conf);
    struct output o;
    for (int dump = 0; dump <= 1; dump++) {
        check(conf_path, true, dump, &o);
        assert_int_equal(o.rc, 1);
        assert_string_equal(o.out, "");
        char where[400];
        snprintf(where, sizeof(where), "%s:2: ", conf_path);
        assert_non_null(strstr(o.err, where));
        assert_non_null(strstr(o.err, "'cores'"));
        snprintf(where, sizeof(where), "%s:1: ", rules_path);
        assert_non_null(strstr(o.err, where));
        snprintf(where, sizeof(where), "%s:2: ", rules_path);
        assert_non_null(strstr(o.err, where));
        assert_non_null(strstr(o.err, dump ? "nothing to dump\n" : "nothing was changed\n"));
        output_free(&o);
    }
    remove_test_dir();
}

static void test_a_named_file_must_exist(void **state)
{
    (void)state;
    struct output o;
    check("/nonexistent/loginguard.conf", true, false, &o);
    assert_int_equal(o.rc, 1);
    assert_non_null(strstr(o.err, "/nonexistent/loginguard.conf"));
    output_free(&o);
}

/* An error quotes the line, whose bytes must not act on a terminal. */
static void test_errors_show_control_bytes_escaped(void **state)
{
    (void)state;
    make_test_dir();
    const char *conf = write_file("loginguard.conf", "[violation]\ncpu = 2 c\x1b]0;x\x07ors\n");
    struct output o;
    check(conf, true, false, &o);
    assert_int_equal(o.rc, 1);
    assert_null(strchr(o.err, '\x1b'));
    assert_null(strchr(o.err, '\x07'));
    assert_non_null(strstr(o.err, "\\x1b]0;x\\x07"));
    output_free(&o);
    remove_test_dir();
}

static void test_the_json_says_the_same(void **state)
{
    (void)state;
    make_test_dir();
    write_file("rules.d/site.rules",
               "{\"name\": \"sim\", \"class\": \"compute\", \"exe\": \"/opt/sim\"}\n");
    char conf[300];
    snprintf(conf, sizeof(conf), "%s", write_file("loginguard.conf", "[daemon]\nmode = enforce\n"));
    struct config_check_args a = {.path = conf, .must_exist = true};
    json_t *r = config_check_json(&a);
    assert_true(json_is_true(json_object_get(r, "ok")));
    assert_string_equal(json_string_value(json_object_get(r, "mode")), "enforce");
    assert_int_equal(json_integer_value(json_object_get(r, "rules")), 1);
    assert_int_equal(json_array_size(json_object_get(r, "errors")), 0);
    json_decref(r);
    write_file("loginguard.conf", "[violation]\ncpu = 2 c\x1bors\nwindow = soon\n");
    r = config_check_json(&a);
    assert_true(json_is_false(json_object_get(r, "ok")));
    json_t *errors = json_object_get(r, "errors");
    assert_int_equal(json_array_size(errors), 2);
    char where[400];
    snprintf(where, sizeof(where), "%s:2: ", conf);
    assert_non_null(strstr(json_string_value(json_array_get(errors, 0)), where));
    assert_non_null(strstr(json_string_value(json_array_get(errors, 0)), "\\x1b"));
    assert_null(json_object_get(r, "mode"));
    json_decref(r);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_good_config_is_one_ok_line),
        cmocka_unit_test(test_every_error_has_its_file_and_line),
        cmocka_unit_test(test_a_named_file_must_exist),
        cmocka_unit_test(test_errors_show_control_bytes_escaped),
        cmocka_unit_test(test_the_json_says_the_same),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
