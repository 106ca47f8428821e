/* pam_loginguard's arguments (pam/pam_options.c): what an admin writes
 * in /etc/pam.d, typos and hostile text included.  A bad argument must
 * be named once and leave the default, never lock anybody out. */
#include "config.h"

#include "pam_options.h"
#include "testutil.h"

#define DEFAULT_SOCKET RUNSTATEDIR "/loginguard/control.sock"

/* What the module would have written to syslog. */
struct complaints {
    int count;
    char last[512];
};

static void collect(void *ctx, const char *message)
{
    struct complaints *c = ctx;
    c->count++;
    snprintf(c->last, sizeof(c->last), "%s", message);
}

static int parse(struct pam_lg_options *o, struct complaints *c, int argc, const char **argv)
{
    memset(c, 0, sizeof(*c));
    int n = pam_lg_parse_options(o, argc, argv, collect, c);
    assert_int_equal(n, c->count);
    return n;
}

static void test_defaults(void **state)
{
    (void)state;
    struct pam_lg_options o;
    struct complaints c;
    assert_int_equal(parse(&o, &c, 0, NULL), 0);
    assert_string_equal(o.socket, DEFAULT_SOCKET);
    assert_int_equal(o.timeout_ms, 1000);
    assert_false(o.fail_closed);
    assert_int_equal(o.deny_level, 0);
    assert_false(o.debug);
}

static void test_every_option(void **state)
{
    (void)state;
    struct pam_lg_options o;
    struct complaints c;
    const char *argv[] = {"socket=/tmp/lg.sock", "timeout=250ms", "fail=closed",
                          "deny_level=3", "debug"};
    assert_int_equal(parse(&o, &c, 5, argv), 0);
    assert_string_equal(o.socket, "/tmp/lg.sock");
    assert_int_equal(o.timeout_ms, 250);
    assert_true(o.fail_closed);
    assert_int_equal(o.deny_level, 3);
    assert_true(o.debug);
    /* The last word wins, as in other modules' lines. */
    const char *again[] = {"fail=closed", "fail=open", "deny_level=3", "deny_level=0"};
    assert_int_equal(parse(&o, &c, 4, again), 0);
    assert_false(o.fail_closed);
    assert_int_equal(o.deny_level, 0);
}

static void test_timeouts(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int ms;
    } good[] = {
        {"1s", 1000},     {"500ms", 500},   {"0.5s", 500},      {"2", 2000},
        {"0.25s", 250},   {"10ms", 10},     {"30s", 30000},     {"30000ms", 30000},
        {"1.5", 1500},    {"0.01", 10},     {"0.0105s", 10},    {"007s", 7000},
        {"10.9ms", 10},   {"1.999999999s", 1999},
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        print_message("%s\n", good[i].text);
        assert_int_equal(pam_lg_parse_timeout(good[i].text), good[i].ms);
    }
    /* Out of 10ms..30s, or not a duration of this syntax. */
    static const char *const bad[] = {
        "", "0", "5ms", "9ms", "0.009s", "0.5ms", "30001ms", "31s", "30.001s", "1e3", "-1",
        "+1s", "1.", ".5s", "1..5s", "1,5s", "1 s", " 1s", "1s ", "1sec", "1m", "1h", "1S",
        "1MS", "0x10", "99999999999999999999999s", "18446744073709551617ms", "ms", "s",
        "1s\n", "\xe2\x80\x8b" "1s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        print_message("'%s'\n", bad[i]);
        assert_int_equal(pam_lg_parse_timeout(bad[i]), -1);
    }
}

static void test_bad_words_are_named_and_the_default_kept(void **state)
{
    (void)state;
    struct pam_lg_options o;
    struct complaints c;
    static const char *const bad[] = {
        "timeout=5ms", "timeout=", "timeout=1 s", "fail=maybe", "fail=", "fail=OPEN",
        "fail=closed ", "deny_level=65", "deny_level=-1", "deny_level=", "deny_level=3x",
        "deny_level=99999999999999999999", "debug=1", "Debug", "socket=relative.sock",
        "socket=", "socket", "bogus", "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        print_message("'%s'\n", bad[i]);
        const char *argv[] = {bad[i]};
        assert_int_equal(parse(&o, &c, 1, argv), 1);
        assert_non_null(strstr(c.last, bad[i]));
        assert_string_equal(o.socket, DEFAULT_SOCKET);
        assert_int_equal(o.timeout_ms, 1000);
        assert_false(o.fail_closed);
        assert_int_equal(o.deny_level, 0);
        assert_false(o.debug);
    }
    /* A bad word after a good one leaves the good one. */
    const char *argv[] = {"timeout=200ms", "deny_level=2", "fail=closed", "socket=/run/x.sock",
                          "timeout=forever", "deny_level=99", "fail=ajar", "socket=x.sock"};
    assert_int_equal(parse(&o, &c, 8, argv), 4);
    assert_int_equal(o.timeout_ms, 200);
    assert_int_equal(o.deny_level, 2);
    assert_true(o.fail_closed);
    assert_string_equal(o.socket, "/run/x.sock");
}

static void test_levels(void **state)
{
    (void)state;
    struct pam_lg_options o;
    struct complaints c;
    for (int level = 0; level <= PAM_LG_DENY_LEVEL_MAX; level++) {
        char word[32];
        snprintf(word, sizeof(word), "deny_level=%d", level);
        const char *argv[] = {word};
        assert_int_equal(parse(&o, &c, 1, argv), 0);
        assert_int_equal(o.deny_level, level);
    }
    const char *argv[] = {"deny_level=007"};
    assert_int_equal(parse(&o, &c, 1, argv), 0);
    assert_int_equal(o.deny_level, 7);
}

/* A line of /etc/pam.d can be long: what is said of a word stays one
 * bounded syslog line whatever the word, and names it. */
static void test_a_huge_word_is_named_in_a_bounded_line(void **state)
{
    (void)state;
    struct pam_lg_options o;
    struct complaints c;
    size_t len = 100000;
    char *word = malloc(len + 1);
    assert_non_null(word);
    memcpy(word, "timeout=", 8);
    memset(word + 8, '9', len - 8);
    word[len] = '\0';
    const char *argv[] = {word, word + 2};
    assert_int_equal(parse(&o, &c, 2, argv), 2);
    assert_true(strlen(c.last) < 256);
    assert_non_null(strstr(c.last, "meout=999"));
    assert_int_equal(o.timeout_ms, 1000);
    free(word);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_timeouts),
        cmocka_unit_test(test_bad_words_are_named_and_the_default_kept),
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_a_huge_word_is_named_in_a_bounded_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
