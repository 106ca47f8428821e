/* What a reload reports as changed (policy_diff.c): the settings whose
 * values differ, a level added or gone as one entry, and the rule files
 * whose rules differ, not those whose rules only moved to other lines. */
#include "config.h"

#include "configfile.h"
#include "policy_diff.h"
#include "testutil.h"

/* The defaults, then text as a main config file. */
static void policy_from(struct policy *p, const char *text)
{
    struct errors errs = {0};
    policy_init_defaults(p);
    if (config_parse_text("test.conf", text, strlen(text), p, &errs) < 0 ||
        config_validate(p, "test.conf", &errs) < 0)
        fail_msg("%s", errs.messages[0]);
    errors_free(&errs);
}

static void add_rules(struct policy *p, const char *name, const char *text)
{
    struct errors errs = {0};
    if (rules_load_file(&p->rules, write_file(name, text), &errs) != 0)
        fail_msg("%s", errs.messages[0]);
    errors_free(&errs);
}

static bool has(char *const *list, size_t count, const char *item)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(list[i], item) == 0)
            return true;
    return false;
}

static void test_the_same_policy_changes_nothing(void **state)
{
    (void)state;
    struct policy a, b;
    policy_from(&a, "[violation]\ncpu = 3 cores\n");
    policy_from(&b, "[violation]\ncpu = 3 cores\n");
    struct policy_changes c;
    policy_diff(&a, &b, &c);
    assert_int_equal(c.setting_count, 0);
    assert_int_equal(c.rule_file_count, 0);
    char *text = policy_changes_text(&a, &b, &c);
    assert_non_null(strstr(text, "observe mode, 0 rules"));
    assert_non_null(strstr(text, "; nothing changed"));
    free(text);
    policy_changes_free(&c);
    policy_free(&a);
    policy_free(&b);
}

static void test_changed_settings_are_named_with_their_section(void **state)
{
    (void)state;
    struct policy a, b;
    policy_from(&a, "[violation]\ncpu = 3 cores\nwindow = 5m\n");
    policy_from(&b, "[daemon]\nmode = enforce\n[violation]\ncpu = 2 cores\nwindow = 300s\n");
    struct policy_changes c;
    policy_diff(&a, &b, &c);
    assert_int_equal(c.setting_count, 2); /* 5m and 300s are the same window */
    assert_true(has(c.settings, c.setting_count, "[daemon] mode"));
    assert_true(has(c.settings, c.setting_count, "[violation] cpu"));
    char *text = policy_changes_text(&a, &b, &c);
    assert_non_null(strstr(text, "enforce mode (was observe)"));
    assert_non_null(strstr(text, "changed: "));
    assert_null(strstr(text, "nothing changed"));
    free(text);
    policy_changes_free(&c);
    policy_free(&a);
    policy_free(&b);
}

#define LEVEL(n) "[level " #n "]\nname = l" #n "\ncpu = 1 cores\nduration = 1h\n"

static void test_a_level_added_or_gone_is_one_entry(void **state)
{
    (void)state;
    struct policy a, b;
    policy_from(&a, LEVEL(1) LEVEL(2));
    policy_from(&b, LEVEL(1) LEVEL(2) LEVEL(3));
    struct policy_changes c;
    policy_diff(&a, &b, &c);
    assert_int_equal(c.setting_count, 1);
    assert_string_equal(c.settings[0], "[level 3]");
    policy_changes_free(&c);
    policy_diff(&b, &a, &c); /* and back: the level is gone */
    assert_int_equal(c.setting_count, 1);
    assert_string_equal(c.settings[0], "[level 3]");
    char *text = policy_changes_text(&b, &a, &c);
    assert_non_null(strstr(text, "2 levels (was 3)"));
    free(text);
    policy_changes_free(&c);
    policy_free(&a);
    policy_free(&b);
}

#define RULE(name) "{\"name\": \"" name "\", \"class\": \"compute\", \"exe\": \"/opt/sim\"}\n"
#define MINER "{\"name\": \"miner\", \"class\": \"forbidden\", \"comm\": \"xmrig\"}\n"

static void test_rule_files_whose_rules_differ_are_named(void **state)
{
    (void)state;
    make_test_dir();
    struct policy a, b;
    policy_from(&a, "");
    policy_from(&b, "");
    add_rules(&a, "old/same.rules", RULE("sim"));
    add_rules(&a, "old/edited.rules", MINER);
    add_rules(&a, "old/gone.rules", RULE("sim2"));
    /* The same rules further down (a comment above): not a change. */
    add_rules(&b, "old/same.rules", "# moved\n\n" RULE("sim"));
    add_rules(&b, "old/edited.rules",
              "{\"name\": \"miner\", \"class\": \"forbidden\", \"comm\": \"xmrig*\"}\n");
    add_rules(&b, "old/new.rules", RULE("sim3"));
    struct policy_changes c;
    policy_diff(&a, &b, &c);
    assert_int_equal(c.rule_file_count, 3);
    char path[300];
    const char *names[] = {"edited", "gone", "new"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/old/%s.rules", test_dir, names[i]);
        assert_true(has(c.rule_files, c.rule_file_count, path));
    }
    assert_int_equal(c.setting_count, 0);
    char *text = policy_changes_text(&a, &b, &c);
    assert_non_null(strstr(text, "; rules changed in "));
    free(text);
    policy_changes_free(&c);
    policy_free(&a);
    policy_free(&b);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_same_policy_changes_nothing),
        cmocka_unit_test(test_changed_settings_are_named_with_their_section),
        cmocka_unit_test(test_a_level_added_or_gone_is_one_entry),
        cmocka_unit_test(test_rule_files_whose_rules_differ_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
